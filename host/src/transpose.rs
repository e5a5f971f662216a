//! Matrix transpose: `dst = srcᵀ` for elements of 1, 2, 4 or 8 bytes, and
//! the ladder of the lessons' variants ([`TransposeVariant`]).
//!
//! The guide, [transpose.md][guide], has the ladder (what each step changes and
//! why it is faster), the measured tables and the pitfalls.
//!
//! [guide]: https://github.com/warpspeed-rs/warpspeed/blob/main/docs/transpose.md
//!
//! ```no_run
//! # fn main() -> warpspeed::Result<()> {
//! use warpspeed::{Matrix, MatrixMut};
//! let ctx = warpspeed::Context::new(0)?;
//! let a = ctx.upload(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?; // 3 wide, 2 high
//! let mut t = ctx.zeros::<f32>(6)?;
//! ctx.transpose_into(&Matrix::new(&a, 3, 2)?, &mut MatrixMut::new(&mut t, 2, 3)?)?
//!     .wait()?; // t = [1, 4, 2, 5, 3, 6]
//! # Ok(()) }
//! ```

use crate::context::Context;
use crate::error::{Error, Result};
use crate::launch::{LaunchConfig, blocks_for};
use crate::matrix::{Matrix, MatrixMut};
use crate::memory::{Call, Pod};
use crate::overlap::refuse_overlap;
use crate::pending::Pending;
use warpspeed_gpu::kernel::Entry;
use warpspeed_gpu::transpose::TransposeArgs;
pub use warpspeed_gpu::transpose::TransposeVariant;
use warpspeed_gpu::{DevPtr, DevPtrMut, KernelType};

/// An element type the transpose kernels move: any plain type of 1, 2, 4 or
/// 8 bytes. Sealed; implemented for the integer and float types.
pub trait Transposable: Pod + sealed::Sealed {
    /// The unsigned integer of the same size, whose kernels move `Self`'s
    /// bits.
    type Bits: KernelType;
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! transposable {
    ($bits:ty: $($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Transposable for $t {
            type Bits = $bits;
        }
    )*};
}
transposable!(u8: u8, i8);
transposable!(u16: u16, i16);
transposable!(u32: u32, i32, f32);
transposable!(u64: u64, i64, f64);

/// The variant [`Context::transpose_into`] uses for elements of
/// `element_bytes` bytes in matrices whose first elements and pitches are
/// all multiples of `row_alignment` bytes: for bytes the ladder's
/// [`TransposeVariant::DEFAULT`] (step 9, square tiles that ask L2 for a
/// tile ahead), for wider elements step 7
/// ([`TransposeVariant::VectorColumns`]), where
/// the rows are aligned as their fast path needs
/// ([`TransposeVariant::row_alignment`]: 16 bytes for the vector steps,
/// which also moved 8192² bytes 8% faster than words on an H200 and as fast
/// on an H100); then, for bytes in 4-byte aligned rows, words
/// ([`TransposeVariant::Words4x4`]); everything else uses the 32×32 tile
/// ([`TransposeVariant::Tile32`]). (A 64×64 tile of element accesses with
/// 16 rows per thread measured slower on an H100: 0.88 against 0.92 of the
/// copy bandwidth for `f32`.)
///
/// Bytes, 8192², three interleaved rounds of two builds (µs): step 9
/// 36.90 to 36.96 on an H200 against step 8's 37.15 to 37.70 and step 7's
/// 37.66 to 37.95; 50.82 to 51.07 on an H100 against 51.30 to 51.46 and
/// 50.91 to 51.26. Step 8 (no step 9 for wider elements) moved `f32` 0.5%
/// faster on the H200 (133.5 against 134.1 µs) and 0.5 to 1.4% slower on
/// the H100 (190.0 against 189.1 µs at 8192², 755.2 against 744.5 at
/// 16384², where cuBLAS `Sgeam` took 189.7 and 747.6): so wider elements
/// keep step 7.
pub fn fastest(element_bytes: usize, row_alignment: usize) -> TransposeVariant {
    let preferred = if element_bytes == 1 {
        TransposeVariant::DEFAULT
    } else {
        TransposeVariant::VectorColumns
    };
    pick(preferred, element_bytes, row_alignment)
}

/// [`fastest`] with `preferred` in the place of the step it prefers.
fn pick(
    preferred: TransposeVariant,
    element_bytes: usize,
    row_alignment: usize,
) -> TransposeVariant {
    [preferred, TransposeVariant::Words4x4]
        .into_iter()
        .find(|v| v.supports(element_bytes) && v.row_alignment() as usize <= row_alignment)
        .unwrap_or(TransposeVariant::Tile32)
}

/// The largest power of two up to 16 that divides the first element's
/// address and the pitch in bytes of both matrices.
fn row_alignment<T: Pod>(src: &Matrix<'_, T>, dst: &MatrixMut<'_, T>) -> usize {
    src.row_alignment().min(dst.row_alignment())
}

impl Context {
    /// Enqueues `dst = srcᵀ` with the fastest variant. `dst` must be
    /// `src.height()` wide and `src.width()` high (a `&mut` borrow cannot
    /// overlap `src`). Returns at once; see [`Pending`].
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] for a destination of the wrong shape;
    /// [`Error::InvalidArgument`] for a matrix too large for the grid.
    pub fn transpose_into<'a, T: Transposable>(
        &'a self,
        src: &Matrix<'_, T>,
        dst: &mut MatrixMut<'_, T>,
    ) -> Result<Pending<'a>> {
        let variant = fastest(size_of::<T>(), row_alignment(src, dst));
        self.transpose_into_with(variant, src, dst)
    }

    /// Enqueues `dst = srcᵀ` with one step of the ladder.
    ///
    /// # Errors
    /// As [`Context::transpose_into`]; [`Error::Unsupported`] for
    /// [`TransposeVariant::Words4x4`] with elements wider than a byte, and
    /// [`Error::Misaligned`] for `Words4x4` with rows not 4-byte aligned (the
    /// vector steps take any rows: unaligned ones element by element).
    pub fn transpose_into_with<'a, T: Transposable>(
        &'a self,
        variant: TransposeVariant,
        src: &Matrix<'_, T>,
        dst: &mut MatrixMut<'_, T>,
    ) -> Result<Pending<'a>> {
        self.ensure_alive()?;
        let (width, height) = (src.width(), src.height());
        if (dst.width(), dst.height()) != (height, width) {
            return Err(Error::ShapeMismatch {
                what: "the transpose's destination",
                expected: (height, width),
                given: (dst.width(), dst.height()),
            });
        }
        let size = size_of::<T>();
        let Some(entry) = variant.entry::<T::Bits>() else {
            let sizes = variant.shape().element_bytes;
            return Err(Error::Unsupported {
                variant: variant.name(),
                reason: format!("moves elements of {sizes:?} bytes, not {size}-byte ones"),
            });
        };
        if variant == TransposeVariant::Words4x4 && !(src.rows_aligned(4) && dst.rows_aligned(4)) {
            return Err(Error::Misaligned {
                what: "the words_4x4 transpose's matrices (it moves 4-byte words)",
                alignment: 4,
            });
        }
        refuse_overlap(
            "transpose",
            ("destination", dst.span()),
            ("source", src.span()),
        )?;
        if src.is_empty() {
            return Ok(Pending::new(self));
        }
        let cfg = launch_config(variant, size, width, height)?;
        let mut call = Call::new(self);
        call.read(src.data())?;
        call.write(dst.data())?;
        // SAFETY: both views were checked to lie inside their slices for
        // their shapes and pitches (`Matrix::with_pitch`) and not to overlap
        // (above); the destination shape matches (checked above); the
        // variant moves `T`'s size (its entry exists) and Words4x4's
        // alignment is checked above; `call` orders the kernel after the
        // other queues' uses of both buffers, and their `Drop` waits for it.
        unsafe {
            self.enqueue_transpose(
                entry,
                cfg,
                (src.address(), src.pitch()),
                (dst.address(), dst.pitch()),
                (width, height),
            )?
        };
        Ok(Pending::new(self))
    }

    /// Enqueues the transpose kernel `entry` with `cfg` (from
    /// [`launch_config`]) on raw device addresses: `src` is `width ×
    /// height` elements with a pitch of `src.1`, `dst` `height × width`
    /// with a pitch of `dst.1`. Also what `gemm_into` uses to pack an
    /// operand into scratch memory.
    ///
    /// # Safety
    /// `src` valid for reads of its matrix and `dst` for writes of its own,
    /// both until the stream has run the kernel; they do not overlap, and
    /// nothing writes `src` while the kernel runs (the vector steps read
    /// it through the read-only path); for Words4x4, both first elements and pitches 4-byte aligned;
    /// `width` and `height` below 2^32 and not 0.
    pub(crate) unsafe fn enqueue_transpose<B: KernelType>(
        &self,
        entry: Entry<TransposeArgs<B>>,
        cfg: LaunchConfig,
        src: (u64, usize),
        dst: (u64, usize),
        (width, height): (usize, usize),
    ) -> Result<()> {
        let args = TransposeArgs {
            src: DevPtr::new(src.0),
            src_pitch: src.1,
            dst: DevPtrMut::new(dst.0),
            dst_pitch: dst.1,
            // Below 2^32: the caller's contract.
            width: width as u32,
            height: height as u32,
        };
        // SAFETY: the kernels' contract is this function's (see above); the
        // grid covers the source in the variant's tiles, with its block and
        // shared memory (`launch_config`); the vector steps test the
        // alignment on the device and move unaligned rows element by
        // element.
        unsafe { self.launch(entry, cfg, &args) }
    }
}

/// The launch of `variant` over a `width × height` source of
/// `size`-byte elements: a block per tile; an error where the tiles do not
/// fit the grid.
pub(crate) fn launch_config(
    variant: TransposeVariant,
    size: usize,
    width: usize,
    height: usize,
) -> Result<LaunchConfig> {
    let (tile_x, tile_y) = variant.tile(size as u32);
    match (
        blocks_for(width, tile_x as usize),
        blocks_for(height, tile_y as usize),
    ) {
        (Some(x), Some(y)) => Ok(LaunchConfig {
            grid: (x, y),
            block: variant.block(size as u32),
            shared_bytes: variant.shared_bytes(size as u32),
        }),
        _ => Err(Error::InvalidArgument(format!(
            "a {width}×{height} matrix is too large to transpose"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whatever step is preferred, the default moves every element size in
    /// rows of any alignment, and takes the preferred step wherever it
    /// applies; then, for bytes in 4-byte aligned rows, words.
    #[test]
    fn the_default_always_applies() {
        for &preferred in TransposeVariant::ALL {
            for size in [1, 2, 4, 8] {
                for alignment in [1, 2, 4, 8, 16] {
                    if alignment < size {
                        continue; // elements are aligned to their size
                    }
                    let v = pick(preferred, size, alignment);
                    assert!(v.supports(size), "{preferred:?} {size} {alignment}: {v:?}");
                    assert!(v.row_alignment() as usize <= alignment);
                    let applies =
                        preferred.supports(size) && preferred.row_alignment() as usize <= alignment;
                    if applies {
                        assert_eq!(v, preferred);
                    } else if size == 1 && alignment >= 4 {
                        assert_eq!(v, TransposeVariant::Words4x4);
                    } else {
                        assert_eq!(v, TransposeVariant::Tile32);
                    }
                }
            }
        }
        // The defaults: the vector steps for 16-byte aligned rows (step 9
        // for bytes, step 7 for wider elements), words
        // for 4-byte aligned bytes, the 32×32 tile otherwise.
        assert_eq!(fastest(4, 16), TransposeVariant::VectorColumns);
        assert_eq!(fastest(1, 16), TransposeVariant::SquareAhead);
        assert_eq!(fastest(4, 4), TransposeVariant::Tile32);
        assert_eq!(fastest(1, 4), TransposeVariant::Words4x4);
        // Bytes with a vector step: 16-byte aligned rows take it, 4-byte
        // aligned ones words, others the 32×32 tile.
        let vector = TransposeVariant::VectorColumns;
        assert_eq!(pick(vector, 1, 16), vector);
        assert_eq!(pick(vector, 1, 8), TransposeVariant::Words4x4);
        assert_eq!(pick(vector, 1, 2), TransposeVariant::Tile32);
        assert_eq!(pick(vector, 4, 8), TransposeVariant::Tile32);
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            /// Any shape: a launch within `u32` grids, or an error.
            #[test]
            fn every_shape_launches_or_is_refused(
                step in 0..TransposeVariant::ALL.len(),
                size in prop_oneof![Just(1usize), Just(2), Just(4), Just(8)],
                width in prop_oneof![1usize..5000, ((1usize << 32) - 3)..((1usize << 32) + 3), any::<usize>()],
                height in prop_oneof![1usize..5000, ((1usize << 31) - 3)..((1usize << 31) + 3), any::<usize>()],
            ) {
                let _ = launch_config(TransposeVariant::ALL[step], size, width, height);
            }
        }
    }
}
