//! # warpspeed
//!
//! CUDA kernels written in Rust, compiled to PTX by rustc's NVPTX back end,
//! and launched from this safe library through [`cust`].
//!
//! Each kernel family keeps its *ladder*: the classic CUDA lesson's naive
//! kernel, each optimisation step in turn, and the fastest version we can
//! write, which is what the plain functions use. The README has the measured
//! numbers.
//!
//! ```no_run
//! # fn main() -> warpspeed::Result<()> {
//! use cust::memory::DeviceBuffer;
//! let ctx = warpspeed::Context::new(0)?;
//! let x = DeviceBuffer::from_slice(&vec![1u32; 1 << 20]).unwrap();
//! assert_eq!(ctx.sum(&x)?, 1 << 20);
//! # Ok(()) }
//! ```
//!
//! Design:
//! * a [`Context`] owns the CUDA context, the loaded module (every entry point
//!   resolved at load), one stream and reusable device memory: no global
//!   state, no allocation per call;
//! * buffers are `cust`'s [`DeviceBuffer`](cust::memory::DeviceBuffer) and
//!   [`DeviceSlice`](cust::memory::DeviceSlice); nothing is copied behind your
//!   back;
//! * every argument is checked before a launch and every failure is an
//!   [`Error`]; a kernel fault poisons the context ([`Error::ContextLost`]).
//!
//! The PTX comes from the `warpspeed-gpu` crate and is embedded, so this crate
//! builds on stable Rust. The device must have compute capability 7.0 or
//! newer; Hopper (9.0) and newer get PTX built for sm_90.

mod context;
mod driver;
mod element;
mod error;
pub mod image_sums;
mod launch;
mod matrix;
pub mod ptx;
pub mod reduce;
pub mod transpose;

pub use context::{Context, DeviceInfo};
pub use element::Element;
pub use error::{Error, Result};
pub use image_sums::{ColumnSumVariant, RowSumVariant, SumOutput};
pub use matrix::{Matrix, MatrixMut};
pub use reduce::{Op, ReduceVariant};
pub use transpose::{Transposable, TransposeVariant};

/// The launch constants and kernel tables shared with the device code.
pub use warpspeed_gpu as gpu;
