//! Row and column sums of 8-bit images, into `u32` or `f32`, and the
//! lessons' ladders ([`ColumnSumVariant`], [`RowSumVariant`]).
//!
//! ```no_run
//! # fn main() -> warpspeed::Result<()> {
//! use cust::memory::DeviceBuffer;
//! use warpspeed::Matrix;
//! let ctx = warpspeed::Context::new(0)?;
//! let pixels = DeviceBuffer::from_slice(&[1u8, 2, 3, 4, 5, 6]).unwrap(); // 3 wide, 2 high
//! let image = Matrix::new(&pixels, 3, 2)?;
//! let mut columns = DeviceBuffer::from_slice(&[0u32; 3]).unwrap();
//! let mut rows = DeviceBuffer::from_slice(&[0.0f32; 2]).unwrap();
//! ctx.column_sums(&image, &mut columns)?; // [5, 7, 9]
//! ctx.row_sums(&image, &mut rows)?; // [6.0, 15.0]
//! ctx.synchronize()?;
//! # Ok(()) }
//! ```
//!
//! `u32` sums are exact (they wrap past 2^32). `f32` sums are exact while
//! below 2^24; the atomic variants add partial sums in a run-dependent order,
//! so past 2^24 their last bits may vary between runs.

use crate::context::Context;
use crate::error::{Error, Result};
use crate::launch::{LaunchConfig, args, blocks_for};
use crate::matrix::Matrix;
use cust::memory::{DeviceCopy, DeviceSlice};
pub use warpspeed_gpu::image_sums::{ColumnSumVariant, RowSumVariant};
use warpspeed_gpu::image_sums::{ROW_CHUNK, STRIP_BLOCK, STRIP_BLOCKS_PER_SM, STRIP_UNROLL};

/// The output element of a sum: `u32` or `f32`. Sealed.
pub trait SumOutput: DeviceCopy + sealed::Sealed {
    const TYPE: &'static str;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for f32 {}
}

impl SumOutput for u32 {
    const TYPE: &'static str = "u32";
}
impl SumOutput for f32 {
    const TYPE: &'static str = "f32";
}

fn check_output<O>(out: &DeviceSlice<O>, expected: usize, what: &str) -> Result<()>
where
    O: DeviceCopy,
{
    if out.len() == expected {
        Ok(())
    } else {
        Err(Error::InvalidArgument(format!(
            "{what} of this image need an output of {expected} elements, got {}",
            out.len()
        )))
    }
}

fn grid_x(items: usize, per_block: usize) -> Result<u32> {
    blocks_for(items, per_block)
        .ok_or_else(|| Error::InvalidArgument(format!("{items} items need too many blocks")))
}

impl Context {
    /// Enqueues the sum of each column of `image` into `out` (`width`
    /// elements) with the fastest variant.
    pub fn column_sums<O: SumOutput>(
        &self,
        image: &Matrix<u8>,
        out: &mut DeviceSlice<O>,
    ) -> Result<()> {
        self.column_sums_with(ColumnSumVariant::Strips, image, out)
    }

    /// Enqueues the sum of each row of `image` into `out` (`height`
    /// elements) with the fastest variant.
    pub fn row_sums<O: SumOutput>(
        &self,
        image: &Matrix<u8>,
        out: &mut DeviceSlice<O>,
    ) -> Result<()> {
        self.row_sums_with(RowSumVariant::Vectorized, image, out)
    }

    /// Enqueues the column sums with one variant of the ladder.
    pub fn column_sums_with<O: SumOutput>(
        &self,
        variant: ColumnSumVariant,
        image: &Matrix<u8>,
        out: &mut DeviceSlice<O>,
    ) -> Result<()> {
        self.ensure_alive()?;
        let (width, height) = (image.width(), image.height());
        check_output(out, width, "the column sums")?;
        if variant == ColumnSumVariant::FourColumnsPerThread && !image.rows_aligned(4) {
            return Err(Error::InvalidArgument(
                "four_columns_per_thread loads 4-byte words: the image must start at a 4-byte aligned \
                 address with a pitch that is a multiple of 4"
                    .into(),
            ));
        }
        if width == 0 {
            return Ok(());
        }
        let output = out.as_device_ptr().as_raw();
        if variant.accumulates() || height == 0 {
            self.zero_words(output, width)?;
        }
        if height == 0 {
            return Ok(());
        }
        let columns = grid_x(width, variant.block_columns() as usize)?;
        let (grid, rows_per_block) = if variant == ColumnSumVariant::Strips {
            // Split the rows into bands so that the grid fills every SM
            // several times over, within the grid's y limit; a band is a
            // whole number of rounds of the block's row-lanes.
            let info = self.info();
            let bands = (info.multiprocessors * STRIP_BLOCKS_PER_SM)
                .div_ceil(columns)
                .max(1) as usize;
            let round = (STRIP_BLOCK.1 * STRIP_UNROLL) as usize;
            let rows = height
                .div_ceil(bands)
                .max(height.div_ceil(info.max_grid.1 as usize))
                .next_multiple_of(round);
            ((columns, height.div_ceil(rows) as u32), rows as u32)
        } else {
            ((columns, 1), 0)
        };
        let cfg = LaunchConfig {
            grid,
            block: variant.block(),
            shared_bytes: variant.shared_bytes(),
        };
        let (image_address, pitch, w, h) =
            (image.address(), image.pitch(), width as u32, height as u32);
        let base = variant.entry_base();
        // SAFETY: the image view lies inside its slice (checked when it was
        // made); `out` holds exactly `width` elements (checked above) and is
        // zeroed first where the variant adds into it; FourColumnsPerThread's
        // alignment is checked above (Strips checks its own and falls back to
        // bytes); the grid covers every column, and for Strips every row band.
        unsafe {
            if variant == ColumnSumVariant::Strips {
                self.launch(
                    base,
                    O::TYPE,
                    cfg,
                    &args![image_address, pitch, w, h, rows_per_block, output],
                )
            } else {
                self.launch(
                    base,
                    O::TYPE,
                    cfg,
                    &args![image_address, pitch, w, h, output],
                )
            }
        }
    }

    /// Enqueues the row sums with one variant of the ladder.
    pub fn row_sums_with<O: SumOutput>(
        &self,
        variant: RowSumVariant,
        image: &Matrix<u8>,
        out: &mut DeviceSlice<O>,
    ) -> Result<()> {
        self.ensure_alive()?;
        let (width, height) = (image.width(), image.height());
        check_output(out, height, "the row sums")?;
        if height == 0 {
            return Ok(());
        }
        let output = out.as_device_ptr().as_raw();
        if variant.accumulates() || width == 0 {
            self.zero_words(output, height)?;
        }
        if width == 0 {
            return Ok(());
        }
        let block = variant.block();
        let grid = match variant {
            RowSumVariant::AtomicChunks => {
                let threads = width.div_ceil(ROW_CHUNK as usize).checked_mul(height);
                grid_x(threads.unwrap_or(usize::MAX), block as usize)?
            }
            RowSumVariant::BlockTree => grid_x(height, 1)?,
            RowSumVariant::WarpShuffle => grid_x(height, variant.rows_per_block() as usize)?,
            RowSumVariant::Vectorized => {
                // Enough warps to fill the GPU; each loops over rows.
                let resident = self.blocks_per_sm(variant.entry_base(), O::TYPE, block, 0)?
                    * self.info().multiprocessors;
                grid_x(height, variant.rows_per_block() as usize)?.min(resident)
            }
        };
        let cfg = LaunchConfig::linear(grid, block, variant.shared_bytes());
        let (image_address, pitch, w, h) =
            (image.address(), image.pitch(), width as u32, height as u32);
        // SAFETY: the image view lies inside its slice (checked when it was
        // made); `out` holds exactly `height` elements (checked above) and is
        // zeroed first where the variant adds into it; the grid covers every
        // row (one block, warp or chunk each, or warps looping over rows).
        unsafe {
            self.launch(
                variant.entry_base(),
                O::TYPE,
                cfg,
                &args![image_address, pitch, w, h, output],
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_and_output_has_an_entry_point() {
        let declared = |base: &str, ty: &str| {
            warpspeed_gpu::image_sums::KERNELS
                .iter()
                .any(|k| k.base == base && k.ty == ty)
        };
        for ty in [u32::TYPE, f32::TYPE] {
            for v in ColumnSumVariant::ALL {
                assert!(declared(v.entry_base(), ty), "{}_{ty}", v.entry_base());
            }
            for v in RowSumVariant::ALL {
                assert!(declared(v.entry_base(), ty), "{}_{ty}", v.entry_base());
            }
        }
    }
}
