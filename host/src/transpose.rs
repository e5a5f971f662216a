//! Matrix transpose: `dst = srcᵀ` for elements of 1, 2, 4 or 8 bytes, and
//! the ladder of the lessons' variants ([`TransposeVariant`]).
//!
//! ```no_run
//! # fn main() -> warpspeed::Result<()> {
//! use cust::memory::DeviceBuffer;
//! use warpspeed::{Matrix, MatrixMut};
//! let ctx = warpspeed::Context::new(0)?;
//! let a = DeviceBuffer::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap(); // 3 wide, 2 high
//! let mut t = DeviceBuffer::from_slice(&[0.0f32; 6]).unwrap();
//! ctx.transpose(&Matrix::new(&a, 3, 2)?, &mut MatrixMut::new(&mut t, 2, 3)?)?;
//! ctx.synchronize()?; // t = [1, 4, 2, 5, 3, 6]
//! # Ok(()) }
//! ```

use crate::context::Context;
use crate::error::{Error, Result};
use crate::launch::{LaunchConfig, args, blocks_for};
use crate::matrix::{Matrix, MatrixMut};
use cust::memory::DeviceCopy;
pub use warpspeed_gpu::transpose::TransposeVariant;

/// An element type the transpose kernels move: any plain type of 1, 2, 4 or
/// 8 bytes. Sealed; implemented for the integer and float types.
pub trait Transposable: DeviceCopy + sealed::Sealed {
    /// The entry-point suffix of the kernels for this size.
    const BITS_TYPE: &'static str;
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! transposable {
    ($bits:literal: $($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Transposable for $t {
            const BITS_TYPE: &'static str = $bits;
        }
    )*};
}
transposable!("u8": u8, i8);
transposable!("u16": u16, i16);
transposable!("u32": u32, i32, f32);
transposable!("u64": u64, i64, f64);

/// The variant [`Context::transpose`] uses: 1-byte elements in 4-byte aligned
/// rows move as words ([`TransposeVariant::Words4x4`]); everything else uses
/// the 32×32 tile ([`TransposeVariant::Tile32`]). (A 64×64 tile with 16 rows
/// per thread measured slower on an H100: 0.88 against 0.92 of the copy
/// bandwidth for `f32`.)
pub fn fastest(element_bytes: usize, rows_aligned_to_4: bool) -> TransposeVariant {
    if element_bytes == 1 && rows_aligned_to_4 {
        TransposeVariant::Words4x4
    } else {
        TransposeVariant::Tile32
    }
}

impl Context {
    /// Enqueues `dst = srcᵀ` with the fastest variant. `dst` must be
    /// `src.height()` wide and `src.width()` high; it must not overlap `src`.
    pub fn transpose<T: Transposable>(
        &self,
        src: &Matrix<T>,
        dst: &mut MatrixMut<T>,
    ) -> Result<()> {
        let aligned = src.rows_aligned(4) && dst.rows_aligned(4);
        self.transpose_with(fastest(size_of::<T>(), aligned), src, dst)
    }

    /// Enqueues `dst = srcᵀ` with one variant of the ladder.
    pub fn transpose_with<T: Transposable>(
        &self,
        variant: TransposeVariant,
        src: &Matrix<T>,
        dst: &mut MatrixMut<T>,
    ) -> Result<()> {
        self.ensure_alive()?;
        let (width, height) = (src.width(), src.height());
        if dst.width() != height || dst.height() != width {
            return Err(Error::InvalidArgument(format!(
                "the transpose of a {width}×{height} matrix is {height}×{width}, but the destination is {}×{}",
                dst.width(),
                dst.height()
            )));
        }
        let size = size_of::<T>();
        if !variant.supports(size) {
            return Err(Error::InvalidArgument(format!(
                "the {} transpose is for 1-byte elements, not {size}-byte ones",
                variant.name()
            )));
        }
        if variant == TransposeVariant::Words4x4 && !(src.rows_aligned(4) && dst.rows_aligned(4)) {
            return Err(Error::InvalidArgument(
                "the words_4x4 transpose moves 4-byte words: both matrices must start at a 4-byte \
                 aligned address with a pitch that is a multiple of 4"
                    .into(),
            ));
        }
        if src.is_empty() {
            return Ok(());
        }
        let (tile_x, tile_y) = variant.tile();
        let grid = match (
            blocks_for(width, tile_x as usize),
            blocks_for(height, tile_y as usize),
        ) {
            (Some(x), Some(y)) => (x, y),
            _ => {
                return Err(Error::InvalidArgument(format!(
                    "a {width}×{height} matrix is too large to transpose"
                )));
            }
        };
        let cfg = LaunchConfig {
            grid,
            block: variant.block(),
            shared_bytes: variant.shared_bytes(size as u32),
        };
        let (src_pitch, dst_pitch) = (src.pitch(), dst.pitch());
        let (w, h) = (width as u32, height as u32); // below 2^32: checked by the views
        // SAFETY: both views were checked to lie inside their slices for
        // their shapes and pitches (`Matrix::with_pitch`); `dst` is borrowed
        // mutably, so it does not overlap `src`; the destination shape
        // matches (checked above); Words4x4's alignment is checked above; the
        // grid covers the source in the variant's tiles.
        unsafe {
            self.launch(
                variant.entry_base(),
                T::BITS_TYPE,
                cfg,
                &args![src.address(), src_pitch, dst.address(), dst_pitch, w, h],
            )
        }
    }
}
