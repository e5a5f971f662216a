//! The element types kernels accept.

use cust::memory::DeviceCopy;
use std::fmt::Debug;

/// An element type the reduction kernels are compiled for: `f32`, `i32`,
/// `u32`. Sealed: the PTX holds exactly these instantiations.
pub trait Element:
    warpspeed_gpu::Scalar + DeviceCopy + Default + Debug + Send + Sync + sealed::Sealed
{
}

impl Element for f32 {}
impl Element for i32 {}
impl Element for u32 {}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for i32 {}
    impl Sealed for u32 {}
}

/// The type suffix of `T`'s entry points.
pub(crate) fn type_name<T: Element>() -> &'static str {
    T::TYPE.name()
}
