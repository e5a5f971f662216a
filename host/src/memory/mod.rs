//! Device memory that no kernel can outlive: [`Buffer`], its borrowed views
//! [`View`] and [`ViewMut`], and the ordering that makes them safe to use
//! from any queue.
//!
//! The module's files hold one idea each: `buffer` (the owned
//! allocation), `view` (the borrowed views), `tracker` (the ordering of
//! each buffer's uses across queues), `copy` (allocating, filling and
//! copying, as methods of [`Context`](crate::Context)) and `pinned`
//! (page-locked host memory and its asynchronous copies).
//!
//! # The soundness argument
//!
//! A [`Buffer`] owns its allocation and an `Arc` to its device's runtime, so
//! the device's CUDA context (and with it the allocation) lives as long as
//! the buffer, whatever `Context`s are dropped. Views are borrows of the
//! buffer (`View<'a, T>` is a shared borrow, `ViewMut<'a, T>` an exclusive
//! one): none outlives its buffer, and no two queues hold a writable view of
//! one buffer at once.
//!
//! Each queue ([`Context`](crate::Context)) has an event, its *clock*, and numbers its calls
//! that use buffers. Each buffer keeps the list of queues that used it
//! since its last write: the latest such call of each, and whether one of
//! them wrote it. The list is updated when the call returns, once all its
//! work is enqueued, also when the call fails half-way: work enqueued before
//! a failure is ordered like any other. A call that uses a buffer first
//! makes its stream wait (on the device, `cuStreamWaitEvent`) for every
//! other queue in the list whose use conflicts: readers wait for writers,
//! writers for everyone. To wait for call `n` of a queue, its clock is
//! recorded on its stream, unless a recording made after call `n` was
//! enqueued exists already: a recording marks everything enqueued before
//! it, so waiting on the clock's latest recording waits for at least that
//! use (recordings are made only when someone must wait: a queue whose
//! buffers no other queue touches makes no driver call for them). A
//! buffer's `Drop` waits (on the host) for every use in its list before
//! freeing the memory, and the host reads of [`Buffer::to_vec`] wait for
//! the writers. A queue that is dropped waits for its stream and marks its
//! clock retired: its uses need no waiting after that.
//!
//! The same ordering covers [`PinnedBuffer`] (host memory that queues copy
//! asynchronously: its host access waits like a read of a buffer) and,
//! with the `cudarc` feature, cudarc's slices (through cudarc's own
//! events, recorded when the call ends). A [`Graph`](crate::Graph) holds
//! the allocation of every buffer its calls use (a `Buffer` shares it
//! through an `Arc`), and its launch orders and registers those uses like
//! one call; nothing inside a capture waits on work outside it.
//!
//! None of this depends on the [`Pending`](crate::Pending) guard being
//! dropped: forgetting it, leaking it or putting it in an `Rc` cycle only
//! skips its wait. Element types are the plain numbers of [`Pod`], for which
//! every bit pattern a kernel may leave is a valid value on the host.
//!
//! The library trusts what a buffer or a view says of itself (its address,
//! length and device): so [`DeviceRead`], [`DeviceWrite`], [`IntoView`]
//! and [`IntoViewMut`] are sealed, implemented by this crate's types only,
//! and every call takes each argument's view once, then checks and launches
//! that same view.

mod buffer;
mod copy;
mod pinned;
mod tracker;
mod view;

pub(crate) use buffer::Allocation;
pub use buffer::Buffer;
pub use pinned::{PinnedBuffer, PinnedRead, PinnedView, PinnedViewMut, PinnedWrite};
pub(crate) use tracker::{Call, Current, Order, Tracker};
pub use view::{View, ViewMut};

use crate::error::{Error, Result};
use cust::memory::DeviceCopy;
use std::ops::{Bound, RangeBounds};

/// A plain number type buffers hold: every bit pattern is a valid value,
/// so whatever a kernel leaves in device memory is safe to read on the host.
/// Sealed: `u8`, `i8`, `u16`, `i16`, `u32`, `i32`, `u64`, `i64`, `f32`, `f64`.
pub trait Pod: DeviceCopy + Copy + Default + Send + Sync + 'static + sealed::Number {}

/// The seals: traits no other crate can implement, so no type of theirs
/// can stand in for the library's own.
pub(crate) mod sealed {
    /// The element types (`Pod`).
    pub trait Number {}
    /// The library's memory types and references to them.
    pub trait Memory {}
}

macro_rules! pod {
    ($($t:ty),*) => {$(
        impl sealed::Number for $t {}
        impl Pod for $t {}
    )*};
}
pod!(u8, i8, u16, i16, u32, i32, u64, i64, f32, f64);

/// Device memory a library function may read: a [`Buffer`], a [`View`] or
/// a [`ViewMut`]. Functions take `&impl DeviceRead<Elem = T>`.
///
/// Sealed: the library launches kernels on the address and length a view
/// gives, so only its own types implement it. A type of yours cannot:
///
/// ```compile_fail,E0277
/// use warpspeed::{DeviceRead, View};
/// struct Mine;
/// impl DeviceRead for Mine { // error: `Mine` does not implement the seal
///     type Elem = f32;
///     fn view(&self) -> View<'_, f32> {
///         unimplemented!()
///     }
/// }
/// ```
///
/// Make a [`View`] of your own memory with [`View::from_raw_parts`]
/// instead (`unsafe`: you promise what it covers).
pub trait DeviceRead: sealed::Memory {
    /// The element type.
    type Elem: Pod;

    /// A read-only view of all of it, borrowed from `self`.
    fn view(&self) -> View<'_, Self::Elem>;

    /// Elements in it.
    fn len(&self) -> usize {
        self.view().len()
    }

    /// Whether it has no element.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Device memory a library function may write: a [`Buffer`] or a
/// [`ViewMut`]. Functions take `&mut impl DeviceWrite<Elem = T>`.
/// Sealed, as [`DeviceRead`].
pub trait DeviceWrite: DeviceRead {
    /// A writable view of all of it, borrowed exclusively from `self`.
    fn view_mut(&mut self) -> ViewMut<'_, Self::Elem>;
}

/// What a read-only [`Matrix`](crate::Matrix) can be made over, for `'a`:
/// `&Buffer`, a [`View`] (by value or by reference: a view is `Copy`, so
/// `Matrix::new(&buf.slice(7..)?, …)` outlives the temporary view and
/// borrows the buffer), or `&ViewMut`. Sealed.
pub trait IntoView<'a>: sealed::Memory {
    /// The element type.
    type Elem: Pod;
    /// The view, borrowed for `'a`.
    fn into_view(self) -> View<'a, Self::Elem>;
}

/// What a writable [`MatrixMut`](crate::MatrixMut) can be made over, for
/// `'a`: `&mut Buffer`, a [`ViewMut`] by value, or `&mut ViewMut`
/// (reborrowed for `'a`: pass a view made in the same statement by value,
/// `MatrixMut::new(buf.slice_mut(7..)?, …)`, to keep the matrix past it).
/// Sealed.
pub trait IntoViewMut<'a>: sealed::Memory {
    /// The element type.
    type Elem: Pod;
    /// The writable view, borrowed exclusively for `'a`.
    fn into_view_mut(self) -> ViewMut<'a, Self::Elem>;
}

impl<T: Pod> sealed::Memory for &Buffer<T> {}
impl<'a, T: Pod> IntoView<'a> for &'a Buffer<T> {
    type Elem = T;
    fn into_view(self) -> View<'a, T> {
        self.view()
    }
}

impl<T: Pod> sealed::Memory for View<'_, T> {}
impl<'a, T: Pod> IntoView<'a> for View<'a, T> {
    type Elem = T;
    fn into_view(self) -> View<'a, T> {
        self
    }
}

impl<T: Pod> sealed::Memory for &View<'_, T> {}
impl<'a, T: Pod> IntoView<'a> for &View<'a, T> {
    type Elem = T;
    fn into_view(self) -> View<'a, T> {
        *self
    }
}

impl<T: Pod> sealed::Memory for &ViewMut<'_, T> {}
impl<'a, T: Pod> IntoView<'a> for &'a ViewMut<'_, T> {
    type Elem = T;
    fn into_view(self) -> View<'a, T> {
        self.view()
    }
}

impl<T: Pod> sealed::Memory for &mut Buffer<T> {}
impl<'a, T: Pod> IntoViewMut<'a> for &'a mut Buffer<T> {
    type Elem = T;
    fn into_view_mut(self) -> ViewMut<'a, T> {
        self.view_mut()
    }
}

impl<T: Pod> sealed::Memory for ViewMut<'_, T> {}
impl<'a, T: Pod> IntoViewMut<'a> for ViewMut<'a, T> {
    type Elem = T;
    fn into_view_mut(self) -> ViewMut<'a, T> {
        self
    }
}

impl<T: Pod> sealed::Memory for &mut ViewMut<'_, T> {}
impl<'a, T: Pod> IntoViewMut<'a> for &'a mut ViewMut<'_, T> {
    type Elem = T;
    fn into_view_mut(self) -> ViewMut<'a, T> {
        self.view_mut()
    }
}

impl<T: Pod> sealed::Memory for Buffer<T> {}

/// Elements of `U` in `len` elements of `T` at `address`, or an error
/// where they do not come out whole or aligned.
fn cast_len<T, U>(address: u64, len: usize) -> Result<usize> {
    let bytes = len * size_of::<T>();
    if !bytes.is_multiple_of(size_of::<U>()) || !address.is_multiple_of(align_of::<U>() as u64) {
        return Err(Error::InvalidArgument(format!(
            "{len} elements of {} B at {address:#x} are no whole, aligned number of {}-byte \
             elements",
            size_of::<T>(),
            size_of::<U>()
        )));
    }
    Ok(bytes / size_of::<U>())
}

/// `Err(LengthMismatch)` naming `what` unless `given == expected`.
pub(crate) fn same_length(what: &'static str, expected: usize, given: usize) -> Result<()> {
    if given == expected {
        Ok(())
    } else {
        Err(Error::LengthMismatch {
            what,
            expected,
            given,
        })
    }
}

/// The element range `range` of `len` elements, or an error naming it.
fn bounds(range: impl RangeBounds<usize>, len: usize) -> Result<(usize, usize)> {
    let start = match range.start_bound() {
        Bound::Included(&s) => Some(s),
        Bound::Excluded(&s) => s.checked_add(1),
        Bound::Unbounded => Some(0),
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e.checked_add(1),
        Bound::Excluded(&e) => Some(e),
        Bound::Unbounded => Some(len),
    };
    match (start, end) {
        (Some(s), Some(e)) if s <= e && e <= len => Ok((s, e - s)),
        _ => Err(Error::InvalidArgument(format!(
            "the range {:?}..{:?} is outside a buffer of {len} elements",
            range.start_bound(),
            range.end_bound()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::copy::bytes_of;
    use super::{bounds, cast_len};
    use crate::Error;

    #[test]
    fn sizes_that_overflow_are_refused() {
        assert_eq!(bytes_of::<f64>(3, "a buffer").ok(), Some(24));
        let refused = bytes_of::<u32>(usize::MAX / 2, "a pinned buffer");
        assert!(
            matches!(&refused, Err(Error::InvalidArgument(m)) if m.starts_with("a pinned buffer of")),
            "{refused:?}"
        );
    }

    #[test]
    fn memory_of_another_context_is_named() {
        let other = Error::foreign_context(0, 1, "a stream");
        assert!(matches!(
            other,
            Error::WrongDevice {
                expected: 0,
                found: 1
            }
        ));
        let same = Error::foreign_context(1, 1, "a cudarc slice");
        assert!(
            matches!(&same, Error::InvalidArgument(m) if m.starts_with("a cudarc slice of another CUDA context of device 1")),
            "{same:?}"
        );
    }

    #[test]
    fn casts_keep_whole_aligned_elements() {
        assert_eq!(cast_len::<u8, u32>(256, 16).unwrap(), 4);
        assert_eq!(cast_len::<u32, u8>(256, 4).unwrap(), 16);
        assert_eq!(cast_len::<f32, u64>(256, 0).unwrap(), 0);
        assert!(cast_len::<u8, u32>(256, 15).is_err()); // not whole
        assert!(cast_len::<u8, u32>(258, 16).is_err()); // not aligned
        assert!(cast_len::<u32, f64>(260, 2).is_err());
    }

    #[test]
    fn ranges_are_checked() {
        assert_eq!(bounds(.., 10).unwrap(), (0, 10));
        assert_eq!(bounds(2..5, 10).unwrap(), (2, 3));
        assert_eq!(bounds(2..=5, 10).unwrap(), (2, 4));
        assert_eq!(bounds(10.., 10).unwrap(), (10, 0));
        assert!(bounds((Bound::Included(5), Bound::Excluded(4)), 10).is_err());
        assert!(bounds(0..11, 10).is_err());
        assert!(bounds(..=usize::MAX, 10).is_err());
        assert!(bounds((Bound::Excluded(usize::MAX), Bound::Unbounded), 10).is_err());
    }
    use std::ops::Bound;

    mod properties {
        use super::bounds;
        use crate::edges::edgy;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn ranges_are_inside_or_refused(start in edgy(), end in edgy(), len in edgy(), inclusive: bool) {
                let got = if inclusive { bounds(start..=end, len) } else { bounds(start..end, len) };
                if let Ok((s, n)) = got {
                    prop_assert_eq!(s, start);
                    prop_assert!(s.checked_add(n).is_some_and(|e| e <= len));
                    prop_assert_eq!(s + n, if inclusive { end + 1 } else { end });
                }
            }
        }
    }
}
