//! Row and column sums of 8-bit images, into `u32` or `f32`, and the
//! lessons' ladders ([`ColumnSumVariant`], [`RowSumVariant`]).
//!
//! The guide, [image_sums.md][guide], has the ladder (what each step changes and
//! why it is faster), the measured tables and the pitfalls.
//!
//! [guide]: https://github.com/warpspeed-rs/warpspeed/blob/main/docs/image_sums.md
//!
//! ```no_run
//! # fn main() -> warpspeed::Result<()> {
//! use warpspeed::Matrix;
//! let ctx = warpspeed::Context::new(0)?;
//! let pixels = ctx.upload(&[1u8, 2, 3, 4, 5, 6])?; // 3 wide, 2 high
//! let image = Matrix::new(&pixels, 3, 2)?;
//! let mut columns = ctx.zeros::<u32>(3)?;
//! let mut rows = ctx.zeros::<f32>(2)?;
//! let columns_done = ctx.column_sums_into(&image, &mut columns)?; // [5, 7, 9]
//! ctx.row_sums_into(&image, &mut rows)?.wait()?; // [6.0, 15.0]
//! columns_done.wait()?;
//! # Ok(()) }
//! ```
//!
//! `u32` sums are exact (they wrap past 2^32). `f32` sums are exact while
//! below 2^24; the atomic variants add partial sums in a run-dependent order,
//! so past 2^24 their last bits may vary between runs.

use crate::context::Context;
use crate::error::{Error, Result};
use crate::launch::{LaunchConfig, blocks_for};
use crate::matrix::Matrix;
use crate::memory::{Call, DeviceWrite, Pod, ViewMut};
use crate::overlap::{Span, refuse_overlap};
use crate::pending::Pending;
use warpspeed_gpu::image_sums::{
    BAND_BLOCK, BAND_BLOCKS_PER_SM, ImageArgs, MAX_BANDS, ROW_CHUNK, STRIP_BLOCK,
    STRIP_BLOCKS_PER_SM, STRIP_COLUMNS, STRIP_UNROLL, SumOut, band_block, band_split,
    bands_all_in_lanes, column_sums_bands, column_sums_bands_lanes, column_sums_bands_narrow,
    column_sums_four_per_thread, column_sums_per_thread, column_sums_strips, column_sums_whole,
    row_lanes, row_parts, row_sums_split_wide, row_sums_vectorized_narrow, split_rows_pays,
};
pub use warpspeed_gpu::image_sums::{ColumnSumVariant, RowSumVariant};
use warpspeed_gpu::{DevPtr, DevPtrMut, WARP_SIZE};

/// The output element of a sum: `u32` or `f32`. Sealed.
pub trait SumOutput: SumOut + Pod + sealed::Sealed {}

mod sealed {
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for f32 {}
}

impl SumOutput for u32 {}
impl SumOutput for f32 {}

fn check_output<O: Pod>(out: &ViewMut<'_, O>, expected: usize, what: &'static str) -> Result<()> {
    if out.len() == expected {
        Ok(())
    } else {
        Err(Error::LengthMismatch {
            what,
            expected,
            given: out.len(),
        })
    }
}

fn grid_x(items: usize, per_block: usize) -> Result<u32> {
    blocks_for(items, per_block)
        .ok_or_else(|| Error::InvalidArgument(format!("{items} items need too many blocks")))
}

/// The column-sum step [`Context::column_sums_into`] takes for an image
/// `width` columns wide and `height` rows high, whose rows are 16-byte
/// aligned (`aligned`: its first pixel and its pitch), on a GPU of
/// `multiprocessors` SMs: the ladder's fastest, [`ColumnSumVariant::Bands`],
/// where its grid is one wave (no more 512-column strips than SMs) or its
/// lanes have rows enough to pay for the combine at the end of each block
/// (at least [`BAND_MIN_ROWS`] per row-lane); [`ColumnSumVariant::Strips`]
/// otherwise and for rows that are not 16-byte aligned, whose several
/// smaller blocks per SM hide the narrower loads better. Measured on an
/// H200 (µs, step 5 against step 3, two runs): 8192² 20.8 against 22.6
/// to 22.8, 64 × 2^20 21.9 against 58.0, 2^20 × 64 (2 048 strips of 64
/// rows) 23.9 to 24.1 against 25.4 to 25.6; but 1000 × 65537 (pitch
/// 1000) 40.1 to 40.2 against 35.0 to 35.3. The family's guide,
/// docs/image_sums.md, has the table.
pub fn fastest_columns(
    width: usize,
    height: usize,
    aligned: bool,
    multiprocessors: u32,
) -> ColumnSumVariant {
    let (lanes, row_lanes) = band_block(width);
    let strips = width.div_ceil((lanes * STRIP_COLUMNS) as usize);
    let one_wave = strips <= multiprocessors as usize;
    let long_lanes = height >= BAND_MIN_ROWS * row_lanes as usize;
    if aligned && (one_wave || long_lanes) {
        ColumnSumVariant::Bands
    } else {
        ColumnSumVariant::Strips
    }
}

/// Bands of rows into which [`ColumnSumVariant::Bands`] cuts each of
/// `strips` column strips of an image `height` rows high on a GPU of
/// `multiprocessors` SMs: as many as fill the SMs' block slots once
/// (`BAND_BLOCKS_PER_SM` each), at least one, at most `MAX_BANDS` and
/// one per row.
pub fn bands_per_strip(strips: u32, height: usize, multiprocessors: u32) -> u32 {
    let bands = (multiprocessors * BAND_BLOCKS_PER_SM / strips.max(1)).clamp(1, MAX_BANDS);
    // At most MAX_BANDS: fits u32 whatever `height`.
    bands.min(height.min(MAX_BANDS as usize) as u32)
}

/// Rows each row-lane of a [`ColumnSumVariant::Bands`] block must have for
/// [`fastest_columns`] to take it where its grid needs several waves: 4,
/// 64 rows for a block of 16 row-lanes, since the blocks of such short
/// bands keep their 16-bit lanes in registers to the end and combine
/// them in one pass (2^20 × 64, H200, µs: 27.7 to 27.8 when every block
/// zeroed, added into and read back slots of 32-bit sums, 23.9 to 24.1
/// since; step 3 25.2 to 25.6).
/// Shorter images are not measured and keep step 3.
pub const BAND_MIN_ROWS: usize = 4;

/// The row-sum step [`Context::row_sums_into`] takes for an image `width`
/// bytes wide: the ladder's fastest, [`RowSumVariant::SplitRows`], where
/// its rows are wide enough to share between warps (`split_rows_pays`),
/// step 4, [`RowSumVariant::Vectorized`], otherwise.
pub fn fastest_rows(width: usize) -> RowSumVariant {
    if split_rows_pays(width) {
        RowSumVariant::DEFAULT
    } else {
        RowSumVariant::Vectorized
    }
}

impl Context {
    /// Enqueues the sum of each column of `image` into `out` (`width`
    /// elements) with the fastest variant for its shape
    /// ([`fastest_columns`]). Returns at once; see [`Pending`].
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] for an output of the wrong length.
    pub fn column_sums_into<'a, O: SumOutput>(
        &'a self,
        image: &Matrix<'_, u8>,
        out: &mut impl DeviceWrite<Elem = O>,
    ) -> Result<Pending<'a>> {
        let variant = fastest_columns(
            image.width(),
            image.height(),
            image.rows_aligned(16),
            self.info().multiprocessors,
        );
        self.column_sums_into_with(variant, image, out)
    }

    /// Enqueues the sum of each row of `image` into `out` (`height`
    /// elements) with the fastest variant for its shape ([`fastest_rows`]).
    /// Returns at once; see [`Pending`].
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] for an output of the wrong length.
    pub fn row_sums_into<'a, O: SumOutput>(
        &'a self,
        image: &Matrix<'_, u8>,
        out: &mut impl DeviceWrite<Elem = O>,
    ) -> Result<Pending<'a>> {
        self.row_sums_into_with(fastest_rows(image.width()), image, out)
    }

    /// Enqueues the column sums with one step of the ladder.
    ///
    /// # Errors
    /// As [`Context::column_sums_into`]; [`Error::Misaligned`] for
    /// [`ColumnSumVariant::FourColumnsPerThread`] on rows not 4-byte aligned.
    pub fn column_sums_into_with<'a, O: SumOutput>(
        &'a self,
        variant: ColumnSumVariant,
        image: &Matrix<'_, u8>,
        out: &mut impl DeviceWrite<Elem = O>,
    ) -> Result<Pending<'a>> {
        self.ensure_alive()?;
        let out = out.view_mut();
        let (width, height) = (image.width(), image.height());
        check_output(&out, width, "the column sums' output")?;
        refuse_overlap(
            "column sums",
            (
                "output",
                Span::new(out.device_address(), out.len() * size_of::<O>()),
            ),
            ("image", image.span()),
        )?;
        if variant == ColumnSumVariant::FourColumnsPerThread && !image.rows_aligned(4) {
            return Err(Error::Misaligned {
                what: "the image of four_columns_per_thread (it loads 4-byte words)",
                alignment: 4,
            });
        }
        let shape = variant.shape();
        // From here on, whatever is enqueued is ordered for the buffers,
        // also when a later step fails.
        let mut call = Call::new(self);
        call.read(image.data())?;
        let output = call.write(&out)?;
        if width > 0 && (shape.accumulates || height == 0) {
            // SAFETY: `out` holds `width` elements (checked above), ordered
            // by `call`.
            unsafe { self.zero_words(output, width)? };
        }
        if width == 0 || height == 0 {
            return Ok(Pending::new(self));
        }
        // Bands fit their block to images narrower than 257 columns (an
        // entry of its own).
        let (block, block_columns) = if variant == ColumnSumVariant::Bands {
            let block = band_block(width);
            (block, block.0 * STRIP_COLUMNS)
        } else {
            (shape.block, shape.block_columns)
        };
        let columns = grid_x(width, block_columns as usize)?;
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
        } else if variant == ColumnSumVariant::Bands {
            let bands = bands_per_strip(columns, height, self.info().multiprocessors);
            ((columns, bands), 0)
        } else {
            ((columns, 1), 0)
        };
        let cfg = LaunchConfig {
            grid,
            block,
            shared_bytes: shape.shared_bytes,
        };
        let (image_ptr, pitch) = (DevPtr::new(image.address()), image.pitch());
        // Below 2^32: checked by the view.
        let (width, height) = (width as u32, height as u32);
        let out = DevPtrMut::new(output);
        // SAFETY: the image view lies inside its slice (checked when it was
        // made); `out` holds exactly `width` elements (checked above) and is
        // zeroed first where the variant adds into it; FourColumnsPerThread's
        // alignment is checked above (Strips, WholeColumns and Bands check
        // their own and fall back to bytes); the grid covers every column,
        // and for Strips and Bands every row band (WholeColumns' blocks walk
        // every row); Bands' tallies are this context's, `width` of them,
        // zero between launches (one band per column touches none, and gets
        // none); `call` orders the kernel after the other queues' uses of
        // both buffers, and their `Drop` waits for it.
        unsafe {
            match variant {
                ColumnSumVariant::Strips => {
                    let args = column_sums_strips::Args {
                        image: image_ptr,
                        pitch,
                        width,
                        height,
                        rows_per_block,
                        out,
                    };
                    self.launch(column_sums_strips::entry::<O>(), cfg, &args)?
                }
                ColumnSumVariant::Bands => {
                    // The bands of a column meet in its tally; one band
                    // stores its sums directly and touches no tally.
                    let tally = if grid.1 > 1 {
                        self.tallies(width as usize)?
                    } else {
                        0
                    };
                    // At least one band: `height` is not zero here.
                    let (band_rows, long_bands) = band_split(height, grid.1);
                    let args = column_sums_bands::Args {
                        image: image_ptr,
                        pitch,
                        width,
                        band_rows,
                        long_bands,
                        tally: DevPtrMut::new(tally),
                        out,
                    };
                    // The entry with the path in lanes alone where every
                    // block takes it (smaller machine code, faster).
                    let alignment = image.address() as usize | image.pitch();
                    let entry = if block != BAND_BLOCK {
                        column_sums_bands_narrow::entry::<O>()
                    } else if bands_all_in_lanes(width, grid.1, (band_rows, long_bands), alignment)
                    {
                        column_sums_bands_lanes::entry::<O>()
                    } else {
                        column_sums_bands::entry::<O>()
                    };
                    self.launch(entry, cfg, &args)?
                }
                ColumnSumVariant::ColumnPerThread
                | ColumnSumVariant::FourColumnsPerThread
                | ColumnSumVariant::WholeColumns => {
                    let args = ImageArgs {
                        image: image_ptr,
                        pitch,
                        width,
                        height,
                        out,
                    };
                    let entry = match variant {
                        ColumnSumVariant::ColumnPerThread => column_sums_per_thread::entry::<O>(),
                        ColumnSumVariant::FourColumnsPerThread => {
                            column_sums_four_per_thread::entry::<O>()
                        }
                        _ => column_sums_whole::entry::<O>(),
                    };
                    self.launch(entry, cfg, &args)?
                }
            }
        }
        Ok(Pending::new(self))
    }

    /// Enqueues the row sums with one step of the ladder.
    ///
    /// # Errors
    /// As [`Context::row_sums_into`].
    pub fn row_sums_into_with<'a, O: SumOutput>(
        &'a self,
        variant: RowSumVariant,
        image: &Matrix<'_, u8>,
        out: &mut impl DeviceWrite<Elem = O>,
    ) -> Result<Pending<'a>> {
        self.ensure_alive()?;
        let out = out.view_mut();
        let (width, height) = (image.width(), image.height());
        check_output(&out, height, "the row sums' output")?;
        refuse_overlap(
            "row sums",
            (
                "output",
                Span::new(out.device_address(), out.len() * size_of::<O>()),
            ),
            ("image", image.span()),
        )?;
        let shape = variant.shape();
        let mut call = Call::new(self);
        call.read(image.data())?;
        let output = call.write(&out)?;
        if height > 0 && (shape.accumulates || width == 0) {
            // SAFETY: `out` holds `height` elements (checked above), ordered
            // by `call`.
            unsafe { self.zero_words(output, height)? };
        }
        if width == 0 || height == 0 {
            return Ok(Pending::new(self));
        }
        // Step 5 splits rows too few to fill the GPU over blocks, in an
        // entry of its own.
        if variant == RowSumVariant::SplitRows {
            let wide = row_sums_split_wide::entry::<O>();
            let resident = self.blocks_per_sm(wide, shape.block, shape.shared_bytes)?
                * self.info().multiprocessors;
            let parts = row_parts(width, height, resident);
            if parts > 0 && height <= self.info().max_grid.1 as usize {
                // SAFETY: `output` holds `height` elements (checked above),
                // ordered with the image by `call`.
                unsafe { self.row_sums_split_wide::<O>(image, output, parts)? };
                return Ok(Pending::new(self));
            }
        }
        // Step 4's rows of up to ROW_NARROW_MAX bytes share warps, in an
        // entry of their own.
        let lanes = row_lanes(width);
        let (entry, rows_per_block) = match variant {
            RowSumVariant::Vectorized if lanes < WARP_SIZE => (
                row_sums_vectorized_narrow::entry::<O>(),
                shape.rows_per_block as usize * (WARP_SIZE / lanes) as usize,
            ),
            _ => (variant.entry::<O>(), shape.rows_per_block as usize),
        };
        let grid = match variant {
            RowSumVariant::AtomicChunks => {
                let threads = width.div_ceil(ROW_CHUNK as usize).checked_mul(height);
                grid_x(threads.unwrap_or(usize::MAX), shape.block as usize)?
            }
            RowSumVariant::BlockTree | RowSumVariant::WarpShuffle => {
                grid_x(height, rows_per_block)?
            }
            RowSumVariant::Vectorized | RowSumVariant::SplitRows => {
                // Enough warps to fill the GPU; each loops over rows.
                let resident = self.blocks_per_sm(entry, shape.block, shape.shared_bytes)?
                    * self.info().multiprocessors;
                grid_x(height, rows_per_block)?.min(resident)
            }
        };
        let cfg = LaunchConfig::linear(grid, shape.block, shape.shared_bytes);
        let args = ImageArgs {
            image: DevPtr::new(image.address()),
            pitch: image.pitch(),
            // Below 2^32: checked by the view.
            width: width as u32,
            height: height as u32,
            out: DevPtrMut::new(output),
        };
        // SAFETY: the image view lies inside its slice (checked when it was
        // made); `out` holds exactly `height` elements (checked above) and is
        // zeroed first where the variant adds into it; the grid covers every
        // row (one block, warp or chunk each, or warps looping over rows,
        // alone or in pairs); `call` orders the kernel after the other
        // queues' uses of both buffers, and their `Drop` waits for it.
        unsafe { self.launch(entry, cfg, &args)? };
        Ok(Pending::new(self))
    }

    /// Step 5 over a grid of `parts` blocks by one row of blocks per row
    /// of `image` (at most the grid's y limit; checked by the caller),
    /// the parts of a row meeting in its tally.
    ///
    /// # Safety
    /// `out` is valid for `image.height()` elements of `O`, ordered with
    /// the image after their other uses until the stream has run the kernel.
    unsafe fn row_sums_split_wide<O: SumOutput>(
        &self,
        image: &Matrix<'_, u8>,
        out: u64,
        parts: u32,
    ) -> Result<()> {
        let shape = RowSumVariant::SplitRows.shape();
        let height = image.height();
        let tally = self.tallies(height)?;
        let cfg = LaunchConfig {
            grid: (parts, height as u32),
            block: (shape.block, 1),
            shared_bytes: shape.shared_bytes,
        };
        let args = row_sums_split_wide::Args {
            image: DevPtr::new(image.address()),
            pitch: image.pitch(),
            // Below 2^32: checked by the view.
            width: image.width() as u32,
            height: height as u32,
            tally: DevPtrMut::new(tally),
            out: DevPtrMut::new(out),
        };
        // SAFETY: the image view lies inside its slice (checked when it was
        // made); `out` holds exactly `height` elements (checked by the
        // caller); the grid has a block per part of every row and no more
        // than MAX_BANDS parts (`row_parts`), each part a range of its row
        // (`split_range`); the tallies are this context's, `height` of them,
        // zero between launches, and the kernel leaves them zero; the
        // buffers are the caller's contract.
        unsafe { self.launch(row_sums_split_wide::entry::<O>(), cfg, &args) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_rows_where_both_warps_have_a_vector_per_lane() {
        assert_eq!(fastest_rows(8192), RowSumVariant::SplitRows);
        assert_eq!(fastest_rows(1024), RowSumVariant::SplitRows);
        assert_eq!(fastest_rows(1023), RowSumVariant::Vectorized);
        assert_eq!(fastest_rows(1), RowSumVariant::Vectorized);
    }

    #[test]
    fn narrow_rows_share_a_warp() {
        for (width, lanes) in [
            (0, 1),
            (1, 1),
            (64, 1),
            (65, 2),
            (200, 4),
            (512, 8),
            (513, 32),
            (1000, 32),
            (8192, 32),
        ] {
            assert_eq!(row_lanes(width), lanes, "width {width}");
        }
    }

    #[test]
    fn narrow_images_take_band_blocks_of_fewer_columns() {
        for (width, block) in [
            (0, (1, 512)),
            (1, (1, 512)),
            (16, (1, 512)),
            (17, (2, 256)),
            (64, (4, 128)),
            (500, (32, 16)),
            (512, (32, 16)),
            (8192, (32, 16)),
        ] {
            assert_eq!(band_block(width), block, "width {width}");
        }
    }

    #[test]
    fn bands_fill_the_block_slots_once_within_their_limits() {
        for (strips, height, sms, bands) in [
            (16, 8192, 132, 16), // 8192²: 264 slots, 256 blocks
            (2, 1 << 20, 132, 132),
            (1, 1 << 21, 132, MAX_BANDS),
            (2048, 64, 132, 1),
            (1, 3, 132, 3),            // one band per row at most
            (0, 1000, 132, MAX_BANDS), // no strips: no division by zero
        ] {
            assert_eq!(
                bands_per_strip(strips, height, sms),
                bands,
                "{strips} strips of {height} rows, {sms} SMs"
            );
        }
    }

    #[test]
    fn band_split_covers_every_row_once_and_evenly() {
        use warpspeed_gpu::image_sums::band_split;
        for (height, bands) in [
            (8192, 16),
            (1, 1),
            (17, 16),
            (4096 * 16 + 8, 16),
            (u32::MAX, 255),
        ] {
            let (rows, long) = band_split(height, bands);
            assert!(long < bands, "{height} rows in {bands} bands");
            // The device's bounds of each band: contiguous, from 0 to the height.
            let mut next = 0u64;
            for band in 0..bands {
                let begin = band as u64 * rows as u64 + band.min(long) as u64;
                let end = begin + rows as u64 + (band < long) as u64;
                assert_eq!(begin, next, "band {band} of {bands}, {height} rows");
                next = end;
            }
            assert_eq!(next, height as u64, "{height} rows in {bands} bands");
        }
        assert_eq!(band_split(1000, 0), (0, 0), "no bands: no division by zero");
    }

    #[test]
    fn the_lanes_entry_only_where_every_block_keeps_lanes() {
        use warpspeed_gpu::image_sums::{BAND_LANES_MAX_ROWS, bands_all_in_lanes};
        let max = BAND_LANES_MAX_ROWS;
        for (width, bands, split, alignment, all) in [
            (8192, 16, band_split(8192, 16), 0, true),
            (8192, 16, (max, 0), 1 << 20, true),
            (8192, 16, (max - 1, 15), 0, true),
            (512, MAX_BANDS, (max, 0), 0, true),
            // One band more than a pair's tally counts.
            (512, MAX_BANDS + 1, (max, 0), 0, false),
            // The longest band one row too long.
            (8192, 16, (max, 1), 0, false),
            // A partial strip of 384 columns at the edge.
            (1920, 66, band_split(1080, 66), 0, false),
            // Rows 4-byte aligned only (the start, the pitch).
            (8192, 16, (512, 0), 4, false),
            (1024, 132, (300, 0), 1028, false),
            (u32::MAX - 511, 1, (u32::MAX, u32::MAX), 0, false),
        ] {
            assert_eq!(
                bands_all_in_lanes(width, bands, split, alignment),
                all,
                "{width} columns, {bands} bands {split:?}, alignment {alignment}"
            );
        }
    }

    #[test]
    fn bands_in_one_wave_or_with_long_lanes_strips_otherwise() {
        use ColumnSumVariant::{Bands, Strips};
        for (width, height, aligned, sms, variant) in [
            (8192, 8192, true, 132, Bands),
            (64, 1 << 20, true, 132, Bands),
            (1920, 1080, true, 132, Bands),
            (0, 0, true, 132, Bands),
            (64, 1, true, 1, Bands),
            // 2 048 strips: many waves of short blocks; from 4 rows a
            // row-lane the combine pays.
            (1 << 20, 63, true, 132, Strips),
            (1 << 20, 64, true, 132, Bands),
            (1 << 20, 512, true, 132, Bands),
            // Rows not 16-byte aligned.
            (1000, 65537, false, 132, Strips),
            (8192, 8192, false, 132, Strips),
        ] {
            assert_eq!(
                fastest_columns(width, height, aligned, sms),
                variant,
                "{width} x {height}, aligned {aligned}, {sms} SMs"
            );
        }
    }

    #[test]
    fn few_rows_split_over_blocks() {
        use warpspeed_gpu::image_sums::{MAX_BANDS, ROW_PART_MIN};
        for (width, height, resident, parts) in [
            (1 << 20, 64, 660, 11),
            (1 << 16, 1000, 660, 1),
            (1 << 16, 2636, 660, 1),
            (1 << 16, 2637, 660, 0),
            (8192, 8192, 660, 0),
            (65537, 300, 660, 2),
            (1 << 17, 300, 660, 3),
            (1 << 20, 1, 660, 32),
            (1 << 24, 1, 660, MAX_BANDS),
            (ROW_PART_MIN - 1, 1, 660, 0),
            (ROW_PART_MIN, 1, 660, 1),
            (ROW_PART_MIN * 2, 1, 660, 2),
            (1920, 1080, 660, 0),
            (0, 0, 660, 0),
        ] {
            assert_eq!(
                row_parts(width, height, resident),
                parts,
                "{width} x {height}, {resident} blocks"
            );
        }
    }
}
