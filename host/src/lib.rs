//! # warpspeed
//!
//! CUDA kernels written in Rust, compiled to PTX by rustc's NVPTX back end,
//! and launched from this safe library through `cust`.
//!
//! Each kernel family keeps its *ladder*: the classic CUDA lesson's naive
//! kernel, each optimisation step in turn, and the fastest version we can
//! write, which is what the plain functions use. The README has the measured
//! numbers.
//!
//! ```no_run
//! # fn main() -> warpspeed::Result<()> {
//! let ctx = warpspeed::Context::new(0)?;
//! let x = ctx.upload(&vec![1u32; 1 << 20])?;
//! assert_eq!(ctx.sum(&x)?, 1 << 20);
//! assert_eq!(x.to_vec()?[0], 1);
//! # Ok(()) }
//! ```
//!
//! Design:
//! * a [`Context`] is one queue of GPU work: the device's CUDA context and
//!   loaded module (each kernel resolved on its first launch, shared by
//!   every queue of the device), one stream, and the scratch memory its
//!   work reuses. No global state, no allocation per call;
//! * functions that return a host value wait for it; functions that write
//!   into your device buffers are named `*_into`, enqueue, and return a
//!   [`Pending`] that waits for the GPU when dropped;
//! * device memory is a [`Buffer`] (made by [`Context::upload`],
//!   [`Context::zeros`] or [`Context::alloc`]), passed by reference or as a
//!   borrowed [`View`]/[`ViewMut`] of part of it; nothing is copied behind
//!   your back;
//! * safe code cannot make a kernel touch freed memory, memory of another
//!   device, or memory another queue is writing, whatever it does with the
//!   guards, the views or the contexts: each buffer orders its uses across
//!   queues with events and waits for them before it is freed, and keeps
//!   its device's context alive ([`memory`] has the argument);
//! * every argument is checked before a launch and every failure is an
//!   [`Error`]; a kernel fault poisons the context ([`Error::ContextLost`]);
//! * every step of every ladder is callable (`*_with` functions taking the
//!   family's variant), and a ladder is data: [`Ladder`] lists its steps.
//!
//! Inside, kernel launches are typed: each kernel's argument list (in the
//! `warpspeed-gpu` crate, which users need not name) is a struct with
//! the kernel's own parameter names and types, generated from its device
//! signature, so a launch with a wrong or swapped argument does not compile:
//!
//! ```compile_fail
//! use warpspeed_gpu::reduce::{PassArgs, reduce_sequential};
//! use warpspeed_gpu::{DevPtr, DevPtrMut, Entry};
//! let entry: Entry<PassArgs<f32>> = reduce_sequential::entry::<f32>();
//! let args: PassArgs<f32> = PassArgs {
//!     x: DevPtr::new(0),
//!     partials: DevPtrMut::new(0),
//!     n: 1024u32, // the kernel takes `n: usize`: does not compile
//! };
//! ```
//!
//! The same with the right types compiles; a launch through the library's
//! internal `launch` then takes `entry` and `&args` together, so the
//! argument list always matches the kernel:
//!
//! ```
//! use warpspeed_gpu::reduce::{PassArgs, reduce_sequential};
//! use warpspeed_gpu::{DevPtr, DevPtrMut, Entry};
//! let entry: Entry<PassArgs<f32>> = reduce_sequential::entry::<f32>();
//! let args: PassArgs<f32> = PassArgs {
//!     x: DevPtr::new(0),
//!     partials: DevPtrMut::new(0),
//!     n: 1024usize,
//! };
//! assert_eq!(entry.kernel().name, "reduce_sequential_f32");
//! # let _ = args;
//! ```
//!
//! The kernels come from the `warpspeed-gpu` crate and are embedded, so this
//! crate builds on stable Rust. The device must have compute capability 7.0
//! or newer; Ampere and Ada (8.x) load machine code built for sm_80, Hopper
//! (9.0) machine code for sm_90a, which adds the `wgmma` SGEMM steps (no
//! compiling at start-up); other devices get PTX that the driver compiles
//! (the portable sm_90 PTX on newer GPUs, sm_70 on older).
//!
//! Several GPUs: a [`Context`] is `Send` (one per GPU, each on its own
//! thread), [`Context::devices`] lists them, and [`nccl::Group`] runs sums,
//! histograms and all-reduces over data sharded across them through NCCL.
#![warn(missing_docs)]

mod context;
mod device;
mod driver;
#[cfg(test)]
mod edges;
mod error;
mod graph;
#[cfg(feature = "cudarc")]
pub mod interop;
mod launch;
mod matrix;
pub mod memory;
mod overlap;
mod pending;
pub mod ptx;

// The families, one module each.
pub mod conv1d;
pub mod gemm;
pub mod histogram;
pub mod image_sums;
pub mod nccl;
pub mod reduce;
pub mod rng;
pub mod scan;
pub mod sort;
pub mod transpose;

pub use context::Context;
pub use device::{DeviceInfo, KernelResources};
pub use driver::code;
pub use error::{Error, Result};
pub use graph::Graph;
pub use matrix::{Matrix, MatrixBatch, MatrixBatchMut, MatrixMut};
pub use memory::{
    Buffer, DeviceRead, DeviceWrite, IntoView, IntoViewMut, PinnedBuffer, Pod, View, ViewMut,
};
pub use pending::Pending;
pub use ptx::{PTX_FILE, PTX_OVERRIDE};
pub use warpspeed_gpu::Ladder;

// The Rust examples of the README and the guides, compiled as doc tests
// (only under cfg(doctest)).
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

#[cfg(doctest)]
mod guides {
    macro_rules! guide {
        ($name:ident, $file:literal) => {
            #[doc = include_str!(concat!("../../docs/", $file))]
            pub struct $name;
        };
    }
    guide!(Design, "design.md");
    guide!(Reduce, "reduce.md");
    guide!(Transpose, "transpose.md");
    guide!(ImageSums, "image_sums.md");
    guide!(Histogram, "histogram.md");
    guide!(Conv1d, "conv1d.md");
    guide!(Gemm, "gemm.md");
    guide!(Rng, "rng.md");
    guide!(Scan, "scan.md");
    guide!(Sort, "sort.md");
    guide!(MultiGpu, "multi_gpu.md");
    guide!(Interop, "interop.md");
}
