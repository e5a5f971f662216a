//! Row and column sums of 8-bit images, into `u32` or `f32`. Each ladder
//! starts from the plain reductions of an image by rows and by columns
//! (`ReduceW`: a thread per 128-byte chunk of a row, one `atomicAdd` per
//! chunk; `ReduceH`: a thread walking down each column) and, for the
//! columns, four bytes a thread against one.
//!
//! The image is `height` rows of `width` bytes, `pitch` bytes apart. Sums are
//! exact in `u32` (they wrap past 2^32, i.e. beyond 16 843 009 rows or
//! columns of 255); in `f32` they are exact up to 2^24 and rounded beyond.
//!
//! One file per ladder: `columns` and `rows`, each with its constants,
//! launch shapes, steps and device bodies; this file holds what both
//! share (the output types, the tally in which a column's bands or a
//! row's parts meet) and the kernel table.
//!
//! Every kernel's launch contract: `image` valid for reads of `height`
//! rows of `width` bytes `pitch` apart; `out` valid for one element per
//! column (column sums) or row (row sums), zeroed before the launch where
//! the variant `accumulates`; the grid and block as the host's table says.

mod columns;
mod rows;

#[cfg(target_arch = "nvptx64")]
use crate::prim::*;
pub use columns::{
    BAND_BLOCK, BAND_BLOCK_COLUMNS, BAND_BLOCKS_PER_SM, BAND_LANES_MAX_ROWS, BAND_SHARED,
    BAND_THREADS, BAND_UNROLL, COLUMN_BLOCK, ColumnShape, ColumnSumVariant, LANE_ROWS, LANE_WORDS,
    STRIP_BLOCK, STRIP_BLOCK_COLUMNS, STRIP_BLOCKS_PER_SM, STRIP_COLUMNS, STRIP_SLOT, STRIP_UNROLL,
    WHOLE_BLOCK, WHOLE_BLOCK_COLUMNS, WHOLE_SLOT, WHOLE_UNROLL, band_block, band_split,
    bands_all_in_lanes, whole_shared_bytes,
};
pub use rows::{
    ROW_BLOCK, ROW_CHUNK, ROW_NARROW_MAX, ROW_PART_MIN, ROW_SPLIT, ROW_SPLIT_BLOCKS_PER_SM,
    ROW_SPLIT_ROWS, ROW_SPLIT_SHARED, ROW_SPLIT_UNROLL, ROW_TREE_BLOCK, ROW_UNROLL,
    ROW_VECTOR_BLOCK, RowShape, RowSumVariant, row_lanes, row_parts, split_rows_pays,
};

/// Most row bands [`ColumnSumVariant::Bands`] splits an image into, and
/// most parts [`RowSumVariant::SplitRows`] splits a row into
/// ([`row_parts`]). The bands of a column (the parts of a row) meet in one
/// 64-bit tally: their sums in the bits below [`TALLY_COUNT_SHIFT`] (each
/// band's sum is below 2^32, so 255 of them stay below 2^40), the count
/// of bands that have added above it.
#[doc(hidden)]
pub const MAX_BANDS: u32 = 255;
/// Bit of a column's tally where the count of arrived bands starts.
#[doc(hidden)]
pub const TALLY_COUNT_SHIFT: u32 = 40;
/// Bits of each column's sum in a tally that two neighbouring columns
/// share (`join_pair`): the count of arrived bands above
/// [`PAIR_COUNT_SHIFT`], the two sums below it in fields of this width.
#[doc(hidden)]
pub const PAIR_FIELD_BITS: u32 = 28;
/// Bit of a pair's tally where the count of arrived bands starts.
#[doc(hidden)]
pub const PAIR_COUNT_SHIFT: u32 = 2 * PAIR_FIELD_BITS;
// A pair's tally holds the counts of up to MAX_BANDS bands, and each
// column's sum over at most MAX_BANDS bands of at most
// BAND_LANES_MAX_ROWS rows of 255 (the only launches that join in pairs,
// `bands_all_in_lanes`) stays inside its field: 255 · 4096 · 255 < 2^28.
const _: () = assert!(MAX_BANDS < 1 << (64 - PAIR_COUNT_SHIFT));
const _: () =
    assert!((MAX_BANDS as u64) * (BAND_LANES_MAX_ROWS as u64) * 255 < 1 << PAIR_FIELD_BITS);

/// An output element of a sum: `u32` or `f32`.
pub trait SumOut: crate::KernelType {
    /// The output value of an exact `u32` sum.
    fn from_u32(sum: u32) -> Self;
}

impl SumOut for u32 {
    #[inline(always)]
    fn from_u32(sum: u32) -> Self {
        sum
    }
}

impl SumOut for f32 {
    #[inline(always)]
    fn from_u32(sum: u32) -> Self {
        sum as f32
    }
}

/// Adds a `u32` partial sum to `*out` atomically.
#[cfg(target_arch = "nvptx64")]
trait Accumulate: SumOut {
    unsafe fn red_add(out: *mut Self, partial: u32);
}

#[cfg(target_arch = "nvptx64")]
impl Accumulate for u32 {
    #[inline(always)]
    unsafe fn red_add(out: *mut Self, partial: u32) {
        red_add_u32(out, partial)
    }
}

#[cfg(target_arch = "nvptx64")]
impl Accumulate for f32 {
    #[inline(always)]
    unsafe fn red_add(out: *mut Self, partial: u32) {
        red_add_f32(out, partial as f32)
    }
}

/// Stores this part's `total` of output `index` (one of `parts`: a
/// column's band, a row's part) into `out`, directly where the part is
/// the only one, else through the index's tally: the part whose add
/// finds all the others' there stores the sum and zeroes the tally.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
unsafe fn join_total<O: SumOut>(
    tally: *mut u64,
    out: *mut O,
    index: usize,
    total: u32,
    parts: usize,
) {
    if parts == 1 {
        *out.add(index) = O::from_u32(total);
    } else {
        let add = (1u64 << TALLY_COUNT_SHIFT) | total as u64;
        let old = atomic_add_u64(tally.add(index), add);
        if (old >> TALLY_COUNT_SHIFT) as usize == parts - 1 {
            // The last part: the others' sums are in `old`. The tally
            // is nobody else's until the next launch.
            *out.add(index) = O::from_u32(old.wrapping_add(add) as u32);
            *tally.add(index) = 0;
        }
    }
}

/// [`join_total`] for outputs `index` and `index + 1` through one tally,
/// `tally[index / 2]` (`index` even): half the atomics, and so half the
/// round trips to L2 that the last block's join waits for at the end of
/// the launch. H200, 8192² column sums, a CUDA C++ probe timed as the
/// bench: 19.87 to 19.90 µs against 20.03 to 20.06 with a tally per
/// column. The caller promises that every output's sum over all `parts`
/// is below 2^[`PAIR_FIELD_BITS`], so that the fields never carry into
/// each other, and `parts` at most [`MAX_BANDS`].
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
unsafe fn join_pair<O: SumOut>(
    tally: *mut u64,
    out: *mut O,
    index: usize,
    (first, second): (u32, u32),
    parts: usize,
) {
    const FIELD: u64 = (1 << PAIR_FIELD_BITS) - 1;
    if parts == 1 {
        *out.add(index) = O::from_u32(first);
        *out.add(index + 1) = O::from_u32(second);
    } else {
        let add = (1u64 << PAIR_COUNT_SHIFT) | (second as u64) << PAIR_FIELD_BITS | first as u64;
        let pair = tally.add(index / 2);
        let old = atomic_add_u64(pair, add);
        if (old >> PAIR_COUNT_SHIFT) as usize == parts - 1 {
            // The last part, as in `join_total`.
            let sums = old.wrapping_add(add);
            *out.add(index) = O::from_u32((sums & FIELD) as u32);
            *out.add(index + 1) = O::from_u32((sums >> PAIR_FIELD_BITS & FIELD) as u32);
            *pair = 0;
        }
    }
}

kernels! {
    /// Every image-sum entry point; the type is the output's.
    pub const KERNELS = {
        (image: *const u8, pitch: usize, width: u32, height: u32, out: *mut T) {
            fn column_sums_per_thread<T in u32, f32> = columns::column_per_thread;
            fn column_sums_four_per_thread<T in u32, f32> = columns::four_per_thread;
            fn column_sums_whole<T in u32, f32> = columns::whole_columns;
            fn row_sums_atomic_chunks<T in u32, f32> = rows::atomic_chunks;
            fn row_sums_block_tree<T in u32, f32> = rows::block_tree;
            fn row_sums_warp_shuffle<T in u32, f32> = rows::warp_shuffle;
            fn row_sums_vectorized<T in u32, f32> = rows::vectorized;
            fn row_sums_vectorized_narrow<T in u32, f32> = rows::vectorized_narrow;
            fn row_sums_split<T in u32, f32> = rows::split_rows;
        }
        (image: *const u8, pitch: usize, width: u32, height: u32, rows_per_block: u32, out: *mut T) {
            fn column_sums_strips<T in u32, f32> = columns::strips;
        }
        (image: *const u8, pitch: usize, width: u32, height: u32, tally: *mut u64, out: *mut T) {
            fn row_sums_split_wide<T in u32, f32> = rows::split_wide;
        }
        (
            image: *const u8,
            pitch: usize,
            width: u32,
            band_rows: u32,
            long_bands: u32,
            tally: *mut u64,
            out: *mut T,
        ) {
            fn column_sums_bands<T in u32, f32> = columns::bands;
            fn column_sums_bands_narrow<T in u32, f32> = columns::bands_narrow;
            fn column_sums_bands_lanes<T in u32, f32> = columns::bands_lanes;
        }
    }
}

/// The arguments of every image-sum kernel but the column strips: one output
/// element per column or row.
pub type ImageArgs<T> = column_sums_per_thread::Args<T>;

/// This family's entries compiled for a number of resident blocks per SM
/// (gathered in [`crate::LAUNCH_BOUNDS`], whose doc says how they are used).
pub const LAUNCH_BOUNDS: &[crate::kernel::LaunchBounds] = &[
    // One block of 1024 threads per SM, which can have 64 registers each
    // (left to itself ptxas took 68 with 4 rows in flight).
    column_block_bounds("column_sums_whole_u32", crate::image_sums::WHOLE_BLOCK),
    column_block_bounds("column_sums_whole_f32", crate::image_sums::WHOLE_BLOCK),
    // The same for the bands (79 registers for sm_70 and sm_80 left to
    // themselves, more than 1024 threads can have).
    band_bounds("column_sums_bands_u32"),
    band_bounds("column_sums_bands_f32"),
    band_bounds("column_sums_bands_narrow_u32"),
    band_bounds("column_sums_bands_narrow_f32"),
    band_bounds("column_sums_bands_lanes_u32"),
    band_bounds("column_sums_bands_lanes_f32"),
    // Five blocks of 256 threads per SM with 8 loads in flight per lane:
    // 46 registers for sm_90 (48 for sm_80), no spills.
    // H200 2026-11: 19.4 µs against 19.6-19.8 with six blocks (docs/notes/image_sums.md)
    split_row_bounds("row_sums_split_u32"),
    split_row_bounds("row_sums_split_f32"),
    split_row_bounds("row_sums_split_wide_u32"),
    split_row_bounds("row_sums_split_wide_f32"),
];

/// This family's entries whose local memory is kept deliberately
/// (gathered in [`crate::SPILLS_ON_PURPOSE`], whose doc says what that
/// allows).
pub const SPILLS_ON_PURPOSE: &[&str] = &[
    // Held to 64 registers (`LAUNCH_BOUNDS`, two blocks of 512 threads):
    // no spills for sm_70 and sm_90, 8 bytes for sm_80; measured on the
    // H100 and H200 (sm_90) only. (Step 4's entries and the narrow bands
    // and bands in lanes, under the same cap, spill nowhere.)
    "column_sums_bands_u32",
    "column_sums_bands_f32",
];

/// The split row sums' bounds: `crate::image_sums::ROW_VECTOR_BLOCK`
/// threads, `crate::image_sums::ROW_SPLIT_BLOCKS_PER_SM` blocks per SM.
const fn split_row_bounds(entry: &'static str) -> crate::kernel::LaunchBounds {
    crate::kernel::LaunchBounds {
        entry,
        threads: crate::image_sums::ROW_VECTOR_BLOCK,
        blocks_per_sm: crate::image_sums::ROW_SPLIT_BLOCKS_PER_SM,
    }
}

/// The bounds of a column-sum step of one block of `(x, y)` threads per SM
/// (`crate::image_sums::WHOLE_BLOCK`).
const fn column_block_bounds(
    entry: &'static str,
    (x, y): (u32, u32),
) -> crate::kernel::LaunchBounds {
    crate::kernel::LaunchBounds {
        entry,
        threads: x * y,
        blocks_per_sm: 1,
    }
}

/// The column bands' bounds: `crate::image_sums::BAND_THREADS` threads,
/// `crate::image_sums::BAND_BLOCKS_PER_SM` blocks per SM.
const fn band_bounds(entry: &'static str) -> crate::kernel::LaunchBounds {
    crate::kernel::LaunchBounds {
        entry,
        threads: crate::image_sums::BAND_THREADS,
        blocks_per_sm: crate::image_sums::BAND_BLOCKS_PER_SM,
    }
}
