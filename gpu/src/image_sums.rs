//! Row and column sums of 8-bit images (lessons 000 "ReduceW"/"ReduceH" and
//! 003's 1-byte versus 4-byte column sums), into `u32` or `f32`.
//!
//! The image is `height` rows of `width` bytes, `pitch` bytes apart. Sums are
//! exact in `u32` (they wrap past 2^32, i.e. beyond 16 843 009 rows or
//! columns of 255); in `f32` they are exact up to 2^24 and rounded beyond.

use crate::WARP_SIZE;

/// Threads per block of the one-thread-per-column steps.
pub const COLUMN_BLOCK: u32 = 256;
/// Columns one thread sums in [`ColumnSumVariant::Strips`]: one 16-byte load
/// per row.
pub const STRIP_COLUMNS: u32 = 16;
/// Threads of a [`ColumnSumVariant::Strips`] block: 32 column-threads (512
/// columns: each warp load reads a 512-byte row segment) by 8 row-lanes.
pub const STRIP_BLOCK: (u32, u32) = (32, 8);
/// Columns one block of [`ColumnSumVariant::Strips`] covers.
pub const STRIP_BLOCK_COLUMNS: u32 = STRIP_BLOCK.0 * STRIP_COLUMNS;
/// Rows each row-lane of a strip block loads per round: loads in flight.
pub const STRIP_UNROLL: u32 = 4;
/// Words per thread in a strip block's staging area: 16 sums and 4 words of
/// padding, so that neighbouring threads' slots start in different banks.
pub const STRIP_SLOT: u32 = 20;
/// Blocks per SM the host aims for when it splits rows across blocks.
pub const STRIP_BLOCKS_PER_SM: u32 = 8;
/// Threads of a [`ColumnSumVariant::WholeColumns`] block: 4 column-threads
/// (64 columns, 16 each) by 256 row-lanes, one block per SM (64 registers).
/// A warp's load reads 64 bytes of each of 8 rows; an 8192-wide image gives
/// 128 blocks. Measured on an H200 (8192², µs): 22.0 here; 2 × 256 (256
/// blocks of 512 threads) 25.8, 4 × 128 28.5, 8 × 128 (64 blocks) 27.9.
/// Whole 128-byte lines per row (8 × 128) with the rows split between two
/// blocks, 128 in all, timed without combining them: only 2.5 % faster on
/// an H100, not worth a combine across blocks (a cluster's shared memory).
pub const WHOLE_BLOCK: (u32, u32) = (4, 256);
/// Columns one block of [`ColumnSumVariant::WholeColumns`] covers.
pub const WHOLE_BLOCK_COLUMNS: u32 = WHOLE_BLOCK.0 * STRIP_COLUMNS;
/// Rows each row-lane of a whole-column block loads per round. H200,
/// 8192², µs: 4 → 23.2, 6 → 23.1, 8 → 22.0 (4 with the sums in registers,
/// which leaves no room for more: 22.5). Loads that ask L2 to fetch whole
/// 128- or 256-byte lines (`.L2::128B`, a warp reads half a line of each
/// row) gave 21.4 and 21.8 against 21.8: within the noise, not kept.
pub const WHOLE_UNROLL: u32 = 8;
/// Words of a whole-column thread's slot of sums: 16 and one of padding,
/// so that a warp's accesses to word `j` of its slots hit 32 banks.
pub const WHOLE_SLOT: u32 = 17;

/// Threads of a [`ColumnSumVariant::Bands`] block for images of at least
/// 512 columns: 32 column-threads (512 columns, so that each warp load
/// reads 512 consecutive bytes of one row) by 16 row-lanes,
/// [`BAND_BLOCKS_PER_SM`] blocks per SM. Narrower images take
/// [`band_block`].
///
/// Two blocks of 16 row-lanes rather than one of 32 (H200, 8192², three
/// interleaved rounds of the two builds, µs, `u32` / `f32` out: 21.1 /
/// 20.8, 20.9 / 20.8, 20.8 / 21.0 → 20.7 / 20.5, 20.3 / 20.3, 20.5 /
/// 20.6), with the same loads in flight per SM. In a CUDA C++ probe of
/// the same session (events around each launch, as the bench) the reads
/// alone took 19.2 against 19.5 µs and the join after them 1.2 to 1.3 in
/// both; here the combine after the last load also halves, one thread per
/// column adding 16 slots instead of 32. Four loads a round instead of
/// [`BAND_UNROLL`]'s 8 read 8192² in 21.1 to 21.3.
pub const BAND_BLOCK: (u32, u32) = (32, 16);
/// Band blocks resident on each SM.
pub const BAND_BLOCKS_PER_SM: u32 = 2;
/// Threads of every band block.
pub const BAND_THREADS: u32 = BAND_BLOCK.0 * BAND_BLOCK.1;
/// Columns one block of [`ColumnSumVariant::Bands`] covers at most.
pub const BAND_BLOCK_COLUMNS: u32 = BAND_BLOCK.0 * STRIP_COLUMNS;
/// Rows each row-lane of a band block loads per round.
pub const BAND_UNROLL: u32 = 8;
/// Shared memory of a band block: each thread's slot of sums, then a word
/// per thread for the first half of the row-lanes' combination.
pub const BAND_SHARED: u32 = BAND_THREADS * (WHOLE_SLOT + 1) * 4;

/// The block of [`ColumnSumVariant::Bands`] for an image `width` columns
/// wide: [`BAND_BLOCK`] from 512 columns; below, as few column-threads (of
/// 16 columns each, a power of two) as cover the width and the rest of
/// the [`BAND_THREADS`] as row-lanes, so that no thread idles past the
/// edge: a 64-column image takes 4 column-threads by 128 row-lanes, a warp
/// load then 64 bytes of each of 8 rows.
pub const fn band_block(width: usize) -> (u32, u32) {
    let lanes = width.div_ceil(STRIP_COLUMNS as usize);
    let lanes = if lanes >= BAND_BLOCK.0 as usize {
        BAND_BLOCK.0
    } else {
        // 1 for an empty image.
        lanes.next_power_of_two() as u32
    };
    (lanes, BAND_THREADS / lanes)
}
/// Most row bands [`ColumnSumVariant::Bands`] splits an image into, and
/// most parts [`RowSumVariant::SplitRows`] splits a row into
/// ([`row_parts`]). The bands of a column (the parts of a row) meet in one
/// 64-bit tally: their sums in the bits below [`TALLY_COUNT_SHIFT`] (each
/// band's sum is below 2^32, so 255 of them stay below 2^40), the count
/// of bands that have added above it.
pub const MAX_BANDS: u32 = 255;
/// Bit of a column's tally where the count of arrived bands starts.
pub const TALLY_COUNT_SHIFT: u32 = 40;

/// Shared memory of a whole-column block of `(x, y)` threads: each
/// thread's slot, then each warp's `16 · x` column sums.
pub const fn whole_shared_bytes((x, y): (u32, u32)) -> u32 {
    (x * y * WHOLE_SLOT + x * y / WARP_SIZE * 16 * x) * 4
}

// The row-lanes of a column-thread fill whole warps' lanes in groups of
// `WHOLE_BLOCK.0`, and the block is whole warps.
const _: () = assert!(
    WARP_SIZE.is_multiple_of(WHOLE_BLOCK.0)
        && (WHOLE_BLOCK.0 * WHOLE_BLOCK.1).is_multiple_of(WARP_SIZE)
);

// A staging slot holds a thread's sums, and the threads of a strip block then
// combine the block's columns in whole rounds.
const _: () = assert!(
    STRIP_SLOT >= STRIP_COLUMNS
        && STRIP_BLOCK_COLUMNS.is_multiple_of(STRIP_BLOCK.0 * STRIP_BLOCK.1)
);

/// Bytes one thread of [`RowSumVariant::AtomicChunks`] sums (000's chunk).
pub const ROW_CHUNK: u32 = 128;
/// Threads per block of the row-sum steps but [`RowSumVariant::BlockTree`].
pub const ROW_BLOCK: u32 = 256;
/// Threads of [`RowSumVariant::BlockTree`]'s one block per row, as in 000.
pub const ROW_TREE_BLOCK: u32 = 512;
/// Threads per block of [`RowSumVariant::Vectorized`]: 8 rows per block. On
/// an 8192² image, 256-thread blocks read 4% faster than 1024-thread ones on
/// an H200 and as fast on an H100 (measured 2026-11-22; an earlier H100 run
/// had favoured 1024).
pub const ROW_VECTOR_BLOCK: u32 = 256;
/// 16-byte loads each lane of [`RowSumVariant::Vectorized`] keeps in flight
/// (8 measured no faster on an H100).
pub const ROW_UNROLL: usize = 4;
/// The widest rows (bytes) that [`RowSumVariant::Vectorized`] sums with
/// fewer lanes than a warp ([`row_lanes`]).
pub const ROW_NARROW_MAX: usize = 8 * ROW_UNROLL * 16;
/// Lanes of [`RowSumVariant::Vectorized`] that share a row `width` bytes
/// wide: a whole warp for rows wider than [`ROW_NARROW_MAX`]; for narrower
/// ones enough lanes that each has about [`ROW_UNROLL`] of the row's
/// 16-byte vectors, a power of two from 1 to 8, so that several rows share
/// a warp instead of leaving most of its lanes idle: rows of up to 64 bytes
/// take a lane each, 32 to a warp. (16 lanes for 1000-byte rows read 5%
/// slower than 32.)
pub const fn row_lanes(width: usize) -> u32 {
    if width > ROW_NARROW_MAX {
        WARP_SIZE
    } else {
        // 1 for an empty row.
        width.div_ceil(16).div_ceil(ROW_UNROLL).next_power_of_two() as u32
    }
}
/// Warps that share a row in [`RowSumVariant::SplitRows`], each summing
/// its own part.
pub const ROW_SPLIT: u32 = 2;
/// 16-byte loads each lane of [`RowSumVariant::SplitRows`] keeps in flight:
/// half of an 8192-byte row (256 vectors) is one round of its warp.
pub const ROW_SPLIT_UNROLL: usize = 8;
/// Rows a block of [`RowSumVariant::SplitRows`] sums at once.
pub const ROW_SPLIT_ROWS: u32 = ROW_VECTOR_BLOCK / WARP_SIZE / ROW_SPLIT;
/// Blocks of [`RowSumVariant::SplitRows`] resident per SM (its launch
/// bounds): at most 48 registers a thread (46 for sm_90).
pub const ROW_SPLIT_BLOCKS_PER_SM: u32 = 5;
/// Fewest bytes of a row part of [`RowSumVariant::SplitRows`] when it
/// splits rows over blocks ([`row_parts`]): one round of its block, 8
/// 16-byte loads for each of 256 threads.
pub const ROW_PART_MIN: usize = ROW_VECTOR_BLOCK as usize * ROW_SPLIT_UNROLL * 16;
/// Parts [`RowSumVariant::SplitRows`] cuts each of `height` rows of
/// `width` bytes into, one block each (`row_sums_split_wide`), on a GPU
/// that holds `resident_blocks` of its blocks at once; 0 where its blocks
/// loop over the rows instead, two warps a row: where that grid fills the
/// GPU (at least [`ROW_SPLIT_ROWS`] rows for each resident block) or the
/// rows are shorter than [`ROW_PART_MIN`]. Otherwise as many parts as fill
/// the GPU (every row's parts together), at least one, at most
/// [`MAX_BANDS`] and none shorter than [`ROW_PART_MIN`]: 64 rows of 1 MiB
/// on 132 SMs (660 blocks) take 11 parts of 95 KiB, 1 000 rows of 64 KiB
/// a block each.
pub const fn row_parts(width: usize, height: usize, resident_blocks: u32) -> u32 {
    let resident = resident_blocks as usize;
    if width < ROW_PART_MIN || height == 0 || height.div_ceil(ROW_SPLIT_ROWS as usize) >= resident {
        return 0;
    }
    let fill = resident.div_ceil(height);
    let longest = width / ROW_PART_MIN;
    let parts = if fill < longest { fill } else { longest };
    if parts > MAX_BANDS as usize {
        MAX_BANDS
    } else {
        parts as u32
    }
}
/// Shared memory of [`RowSumVariant::SplitRows`]: each warp's part sum, in
/// two sets that alternate between the block's rounds of rows.
pub const ROW_SPLIT_SHARED: u32 = 2 * (ROW_VECTOR_BLOCK / WARP_SIZE) * size_of::<u32>() as u32;

// A group of a block's warps per row, each group with a named barrier of
// its own (1 to 15; 0 is the block's).
const _: () = assert!(
    (ROW_VECTOR_BLOCK / WARP_SIZE).is_multiple_of(ROW_SPLIT)
        && ROW_SPLIT_ROWS >= 1
        && ROW_SPLIT_ROWS < 16
);

/// How a column-sum step is launched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColumnShape {
    /// The kernel (base name; the suffix is the output type, `u32` or `f32`).
    pub kernel: &'static str,
    /// Threads per block, `(x, y)`.
    pub block: (u32, u32),
    /// Columns one block covers.
    pub block_columns: u32,
    /// Dynamic shared memory per block.
    pub shared_bytes: u32,
    /// Whether the output must be zero before the launch (atomic adds).
    pub accumulates: bool,
}

ladder! {
    /// The column-sum ladder: one sum per column.
    pub enum ColumnSumVariant("column_sums"): ColumnShape {
        /// Step 1 (003, 000 "ReduceH"): one thread per column walks down it,
        /// one byte per load; a warp reads 32 consecutive bytes of a row,
        /// coalesced. An 8192-wide image gives only 8192 threads: 62 per SM
        /// on an H100.
        ColumnPerThread = "column_per_thread" => ColumnShape {
            kernel: "column_sums_per_thread",
            block: (COLUMN_BLOCK, 1),
            block_columns: COLUMN_BLOCK,
            shared_bytes: 0,
            accumulates: false,
        },
        /// Step 2 (003): one thread per 4 columns, one 4-byte load per row
        /// split into four sums: a quarter of the loads, but also a quarter
        /// of the threads — slower on a GPU with many SMs (the lesson's
        /// result does not hold on a modern GPU).
        FourColumnsPerThread = "four_columns_per_thread" => ColumnShape {
            kernel: "column_sums_four_per_thread",
            block: (COLUMN_BLOCK, 1),
            block_columns: 4 * COLUMN_BLOCK,
            shared_bytes: 0,
            accumulates: false,
        },
        /// Step 3: split the rows across blocks too (a 2D grid of strips of
        /// [`STRIP_BLOCK_COLUMNS`] (512) columns by a band of rows), so that
        /// the whole GPU works whatever the image's shape. Each thread sums
        /// 16 columns with one 16-byte load per row, four rows in flight, in
        /// 16-bit lanes (two columns per register); the block's 8 row-lanes
        /// are combined in shared memory, and each block adds one partial per
        /// column to the output with coalesced atomics (`red.global.add`).
        /// The host zeroes the output first.
        Strips = "strips" => ColumnShape {
            kernel: "column_sums_strips",
            block: STRIP_BLOCK,
            block_columns: STRIP_BLOCK_COLUMNS,
            shared_bytes: STRIP_BLOCK.0 * STRIP_BLOCK.1 * STRIP_SLOT * 4,
            accumulates: true,
        },
        /// Step 4: each block owns its columns outright and walks the whole
        /// image down them: [`WHOLE_BLOCK`], 64 columns by 256 row-lanes,
        /// step 3's 16-byte loads and 16-bit lanes with [`WHOLE_UNROLL`]
        /// rows in flight (8: each thread's 32-bit sums wait in shared
        /// memory, flushed there every 256 rows, so that its registers hold
        /// loads); the row-lanes are combined by warp shuffles and one pass
        /// through shared memory and each column is stored once. No atomics,
        /// so no zeroing launch before it (2 µs of step 3's 23 on an H200),
        /// and the same bits every run. 8192² image: 25.3 → 22.0 µs on an
        /// H200, 31 → 28–29 on two H100s. It needs about as many column
        /// strips as SMs to fill the GPU, which step 5's bands do not.
        WholeColumns = "whole_columns" => ColumnShape {
            kernel: "column_sums_whole",
            block: WHOLE_BLOCK,
            block_columns: WHOLE_BLOCK_COLUMNS,
            shared_bytes: whole_shared_bytes(WHOLE_BLOCK),
            accumulates: false,
        },
        /// Step 5: step 4's loads and slots in blocks of [`BAND_BLOCK`], 512
        /// columns by 16 row-lanes, two per SM, each warp load 512
        /// consecutive bytes of one row (step 4's read 64 bytes of each of 8
        /// rows), over one band of the rows: the host cuts each strip into
        /// as many bands as fill the SMs' blocks once; images of up to 256 columns take fewer
        /// column-threads and more row-lanes ([`band_block`], an entry of
        /// their own). The bands of a column meet in a 64-bit tally in the
        /// context's scratch memory, zero between launches: each band adds
        /// its sum and a count of one ([`TALLY_COUNT_SHIFT`]) in one atomic,
        /// and the band that finds the others' count already there stores
        /// the total and zeroes the tally. No zeroing launch, no fence, no
        /// second read; the same bits every run (integer sums).
        Bands = "bands" => ColumnShape {
            kernel: "column_sums_bands",
            block: BAND_BLOCK,
            block_columns: BAND_BLOCK_COLUMNS,
            shared_bytes: BAND_SHARED,
            accumulates: false,
        },
    }
    fastest = Bands;
}

/// How a row-sum step is launched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowShape {
    /// The kernel (base name; the suffix is the output type, `u32` or `f32`).
    pub kernel: &'static str,
    /// Threads per block (1D).
    pub block: u32,
    /// Dynamic shared memory per block.
    pub shared_bytes: u32,
    /// Whether the output must be zero before the launch (atomic adds).
    pub accumulates: bool,
    /// Rows one block handles (the warp-per-row steps: one per warp).
    pub rows_per_block: u32,
}

ladder! {
    /// The row-sum ladder: one sum per row.
    pub enum RowSumVariant("row_sums"): RowShape {
        /// Step 1 (000 "ReduceW", first version): one thread per 128-byte
        /// chunk of a row sums it and `atomicAdd`s into the row's total.
        /// Neighbouring threads read addresses 128 bytes apart: every load of
        /// a warp touches 32 different lines.
        AtomicChunks = "atomic_chunks" => RowShape {
            kernel: "row_sums_atomic_chunks",
            block: ROW_BLOCK,
            shared_bytes: 0,
            accumulates: true,
            rows_per_block: 1,
        },
        /// Step 2 (000): one 512-thread block per row; threads read the row
        /// with a stride of 512 (coalesced), then a shared-memory tree.
        BlockTree = "block_tree" => RowShape {
            kernel: "row_sums_block_tree",
            block: ROW_TREE_BLOCK,
            shared_bytes: ROW_TREE_BLOCK * 4,
            accumulates: false,
            rows_per_block: 1,
        },
        /// Step 3: one warp per row; lanes read with a stride of 32 and
        /// combine with shuffles: no shared memory, no block barriers, 8 rows
        /// per block.
        WarpShuffle = "warp_shuffle" => RowShape {
            kernel: "row_sums_warp_shuffle",
            block: ROW_BLOCK,
            shared_bytes: 0,
            accumulates: false,
            rows_per_block: ROW_BLOCK / WARP_SIZE,
        },
        /// Step 4: one warp per row with 16-byte loads, [`ROW_UNROLL`] in
        /// flight per lane, bytes summed four at a time by `dp4a`; scalar
        /// head and tail for rows that do not start on a 16-byte boundary; a
        /// grid sized to what the SMs hold at once, warps looping over rows.
        /// Rows of up to [`ROW_NARROW_MAX`] bytes share a warp,
        /// [`row_lanes`] lanes each (`row_sums_vectorized_narrow`): 64-byte
        /// rows read 8.6 times faster than with a warp each (H200).
        Vectorized = "vectorized" => RowShape {
            kernel: "row_sums_vectorized",
            block: ROW_VECTOR_BLOCK,
            shared_bytes: 0,
            accumulates: false,
            rows_per_block: ROW_VECTOR_BLOCK / WARP_SIZE,
        },
        /// Step 5: step 4 with [`ROW_SPLIT`] warps per row, each summing
        /// its part with [`ROW_SPLIT_UNROLL`] loads in flight per lane, the
        /// parts added through shared memory behind a barrier of just the
        /// row's warps. Each round of a block then reads whole rows at
        /// once, where step 4's warps all began their rows with the same
        /// first 2 KB: the reads in flight spread over every offset of the
        /// rows instead of one band of them (a CUDA C++ probe of step 4
        /// with each row's reads started at a rotated offset gained as
        /// much). 8192² on an H200, same runs: 19.9 → 19.3 µs. Rows too
        /// few to fill the GPU that way take a block each instead, or
        /// several, whose parts meet in a tally per row as the column bands
        /// do ([`row_parts`], `row_sums_split_wide`): on an H200 64 rows of
        /// 1 MiB 113.9 → 23.2 µs, 1 000 rows of 64 KiB 20.4 → 19.1. What
        /// `row_sums_into` uses for rows wide
        /// enough to give every lane of both warps a vector
        /// ([`split_rows_pays`]).
        SplitRows = "split_rows" => RowShape {
            kernel: "row_sums_split",
            block: ROW_VECTOR_BLOCK,
            shared_bytes: ROW_SPLIT_SHARED,
            accumulates: false,
            rows_per_block: ROW_SPLIT_ROWS,
        },
    }
    fastest = SplitRows;
}

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

#[cfg(target_arch = "nvptx64")]
#[allow(
    clippy::needless_range_loop,
    reason = "index loops over constant ranges unroll fully and keep the arrays in registers; \
              iterators over them spilled to local memory"
)]
mod device {
    //! Common contract: `image` valid for reads of `height` rows of `width`
    //! bytes `pitch` apart; `out` valid for one element per column (column
    //! sums) or row (row sums), zeroed before the launch where the variant
    //! `accumulates`; the grid and block as the host's table says.
    use super::*;
    use crate::prim::*;

    /// Adds a `u32` partial sum to `*out` atomically.
    pub trait Accumulate: SumOut {
        unsafe fn red_add(out: *mut Self, partial: u32);
    }

    impl Accumulate for u32 {
        #[inline(always)]
        unsafe fn red_add(out: *mut Self, partial: u32) {
            red_add_u32(out, partial)
        }
    }

    impl Accumulate for f32 {
        #[inline(always)]
        unsafe fn red_add(out: *mut Self, partial: u32) {
            red_add_f32(out, partial as f32)
        }
    }

    /// Column step 1.
    pub unsafe fn column_per_thread<O: SumOut>(
        image: *const u8,
        pitch: usize,
        width: u32,
        height: u32,
        out: *mut O,
    ) {
        let x = global_index_x();
        if x >= width as usize {
            return;
        }
        let mut sum = 0u32;
        for y in 0..height as usize {
            sum = sum.wrapping_add(*image.add(y * pitch + x) as u32);
        }
        *out.add(x) = O::from_u32(sum);
    }

    /// Column step 2. Needs `image` and `pitch` 4-byte aligned.
    pub unsafe fn four_per_thread<O: SumOut>(
        image: *const u8,
        pitch: usize,
        width: u32,
        height: u32,
        out: *mut O,
    ) {
        let width = width as usize;
        let x0 = 4 * global_index_x();
        if x0 >= width {
            return;
        }
        let mut sums = [0u32; 4];
        if x0 + 3 < width {
            for y in 0..height as usize {
                let word = *image.add(y * pitch + x0).cast::<u32>();
                for j in 0..4 {
                    sums[j] = sums[j].wrapping_add((word >> (8 * j)) & 0xff);
                }
            }
        } else {
            for y in 0..height as usize {
                for j in 0..4 {
                    if x0 + j < width {
                        sums[j] = sums[j].wrapping_add(*image.add(y * pitch + x0 + j) as u32);
                    }
                }
            }
        }
        for j in 0..4 {
            if x0 + j < width {
                *out.add(x0 + j) = O::from_u32(sums[j]);
            }
        }
    }

    /// Adds the 16 bytes of `w` to eight 2×16-bit lane accumulators: even
    /// bytes of word `i` into `acc[2i]`, odd ones into `acc[2i + 1]`.
    #[inline(always)]
    fn add_lanes(acc: &mut [u32; 8], w: Words4) {
        for i in 0..4 {
            acc[2 * i] += w[i] & 0x00ff_00ff;
            acc[2 * i + 1] += (w[i] >> 8) & 0x00ff_00ff;
        }
    }

    /// Adds rows `y, y + step, ...` below `y_end` of the 16 columns at `x0`
    /// (nothing where `x0` is past the edge): with 16-byte loads, `UNROLL`
    /// rows in flight, where the 16 columns lie inside the image and every
    /// row's piece is 16-byte aligned; with four 4-byte loads a row where
    /// the pieces are only 4-byte aligned (a pitch such as 1000); byte by
    /// byte (masked at the right edge) otherwise. Column `j`'s sum leaves
    /// as `flush(j, partial)`, from 16-bit lanes every 256 rows (before
    /// 255 · 257 could overflow them) and from each byte on the byte path.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn sum_rows16<const UNROLL: usize>(
        image: *const u8,
        pitch: usize,
        width: usize,
        x0: usize,
        mut y: usize,
        y_end: usize,
        step: usize,
        mut flush: impl FnMut(usize, u32),
    ) {
        if x0 >= width {
            return;
        }
        let inside = x0 + 15 < width;
        let alignment = image as usize | pitch;
        if inside && alignment.is_multiple_of(16) {
            sum_rows16_lanes::<UNROLL>(image, pitch, x0, y, y_end, step, flush, |p| {
                load_nc_v4(p.cast())
            });
        } else if inside && alignment.is_multiple_of(4) {
            sum_rows16_lanes::<UNROLL>(image, pitch, x0, y, y_end, step, flush, |p| {
                let p = p.cast::<u32>();
                [
                    load_nc_u32(p),
                    load_nc_u32(p.add(1)),
                    load_nc_u32(p.add(2)),
                    load_nc_u32(p.add(3)),
                ]
            });
        } else {
            while y < y_end {
                for j in 0..16 {
                    if x0 + j < width {
                        flush(j, *image.add(y * pitch + x0 + j) as u32);
                    }
                }
                y += step;
            }
        }
    }

    /// [`sum_rows16`]'s path for 16 columns inside the image whose pieces
    /// `load` reads as one 16-byte word a row.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn sum_rows16_lanes<const UNROLL: usize>(
        image: *const u8,
        pitch: usize,
        x0: usize,
        mut y: usize,
        y_end: usize,
        step: usize,
        mut flush: impl FnMut(usize, u32),
        load: impl Fn(*const u8) -> Words4,
    ) {
        while y < y_end {
            let flush_at = (y + 256 * step).min(y_end);
            let mut lanes = [0u32; 8];
            while y + (UNROLL - 1) * step < flush_at {
                let mut w = [[0u32; 4]; UNROLL];
                for u in 0..UNROLL {
                    w[u] = load(image.add((y + u * step) * pitch + x0));
                }
                for u in 0..UNROLL {
                    add_lanes(&mut lanes, w[u]);
                }
                y += UNROLL * step;
            }
            while y < flush_at {
                add_lanes(&mut lanes, load(image.add(y * pitch + x0)));
                y += step;
            }
            // Lanes 2i hold columns 4i (low half) and 4i + 2 (high half);
            // lanes 2i + 1 hold 4i + 1 and 4i + 3.
            for i in 0..4 {
                flush(4 * i, lanes[2 * i] & 0xffff);
                flush(4 * i + 2, lanes[2 * i] >> 16);
                flush(4 * i + 1, lanes[2 * i + 1] & 0xffff);
                flush(4 * i + 3, lanes[2 * i + 1] >> 16);
            }
        }
    }

    /// [`sum_rows16`] into `slot`, 16 words of shared memory, zeroed
    /// first: each thread's sums live in shared memory, where the lanes
    /// flush every 256 rows, so that the registers they would hold go to
    /// loads in flight instead (steps 4 and 5).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn sum_rows_to_slot<const UNROLL: usize>(
        image: *const u8,
        pitch: usize,
        width: usize,
        x0: usize,
        y: usize,
        y_end: usize,
        step: usize,
        slot: *mut u32,
    ) {
        for j in 0..16 {
            *slot.add(j) = 0;
        }
        sum_rows16::<UNROLL>(image, pitch, width, x0, y, y_end, step, |j, partial| {
            *slot.add(j) = (*slot.add(j)).wrapping_add(partial)
        });
    }

    /// Where a thread of a block of `lanes` column-threads (16 columns
    /// each) by row-lanes reads (steps 3 and 5): its column-thread and
    /// row-lane, the block's first column and the thread's.
    #[inline(always)]
    fn strip_thread(lanes: usize) -> (usize, usize, usize, usize) {
        let (tx, ty) = (thread_idx_x() as usize, thread_idx_y() as usize);
        let block_x0 = block_idx_x() as usize * (lanes * STRIP_COLUMNS as usize);
        (tx, ty, block_x0, block_x0 + tx * STRIP_COLUMNS as usize)
    }

    /// Column step 3: block `(bx, by)` sums columns `bx·256 ..` over rows
    /// `by·rows_per_block ..` and adds into the zeroed `out`. The block is
    /// [`STRIP_BLOCK`] with `shared_bytes` of shared memory.
    pub unsafe fn strips<O: Accumulate>(
        image: *const u8,
        pitch: usize,
        width: u32,
        height: u32,
        rows_per_block: u32,
        out: *mut O,
    ) {
        const LANES: usize = STRIP_BLOCK.0 as usize;
        const ROW_LANES: usize = STRIP_BLOCK.1 as usize;
        const SLOT: usize = STRIP_SLOT as usize;
        let width = width as usize;
        let staged = dynamic_shared::<u32>();
        let (tx, ty, block_x0, x0) = strip_thread(LANES);
        let y_begin = block_idx_y() as usize * rows_per_block as usize;
        let y_end = (y_begin + rows_per_block as usize).min(height as usize);
        let mut sums = [0u32; 16];
        sum_rows16::<{ STRIP_UNROLL as usize }>(
            image,
            pitch,
            width,
            x0,
            y_begin + ty,
            y_end,
            ROW_LANES,
            |j, partial| sums[j] = sums[j].wrapping_add(partial),
        );
        // Stage each thread's 16 sums; then each thread adds up columns
        // over the row-lanes and issues one atomic per column: consecutive
        // threads, consecutive columns.
        let slot = staged.add((ty * LANES + tx) * SLOT);
        for j in 0..16 {
            *slot.add(j) = sums[j];
        }
        sync_threads();
        let threads = LANES * ROW_LANES;
        let mut c = ty * LANES + tx;
        while c < STRIP_BLOCK_COLUMNS as usize {
            let (owner, j) = (c / 16, c % 16);
            let mut total = 0u32;
            for r in 0..ROW_LANES {
                total = total.wrapping_add(*staged.add((r * LANES + owner) * SLOT + j));
            }
            if block_x0 + c < width {
                O::red_add(out.add(block_x0 + c), total);
            }
            c += threads;
        }
    }

    /// Column step 4: block `bx` sums columns `bx · 16 · blockDim.x ..`
    /// over every row, `blockDim.y` row-lanes apart, and stores them. The
    /// block is [`WHOLE_BLOCK`] (any shape whose `x` divides 32 and whose
    /// threads fill whole warps) with [`whole_shared_bytes`] of shared
    /// memory.
    pub unsafe fn whole_columns<O: SumOut>(
        image: *const u8,
        pitch: usize,
        width: u32,
        height: u32,
        out: *mut O,
    ) {
        let (lanes, row_lanes) = (block_dim_x() as usize, block_dim_y() as usize);
        let columns = lanes * STRIP_COLUMNS as usize;
        let width = width as usize;
        let tx = thread_idx_x() as usize;
        let rank = thread_rank() as usize;
        let block_x0 = block_idx_x() as usize * columns;
        let x0 = block_x0 + tx * STRIP_COLUMNS as usize;
        let shared = dynamic_shared::<u32>();
        let slot = shared.add(rank * WHOLE_SLOT as usize);
        sum_rows_to_slot::<{ WHOLE_UNROLL as usize }>(
            image,
            pitch,
            width,
            x0,
            thread_idx_y() as usize,
            height as usize,
            row_lanes,
            slot,
        );
        let mut sums = [0u32; 16];
        for j in 0..16 {
            sums[j] = *slot.add(j);
        }
        // A warp holds `32 / lanes` row-lanes of each column-thread, lane
        // `tx + lanes · r`: fold them onto lanes `0 .. lanes`.
        let mut mask = lanes as u32;
        while mask < WARP_SIZE {
            for j in 0..16 {
                sums[j] = sums[j].wrapping_add(shfl_xor(sums[j], mask));
            }
            mask *= 2;
        }
        // Then each warp's sums through shared memory (past the slots), one
        // thread per column adding the warps' (consecutive threads,
        // consecutive columns).
        let threads = lanes * row_lanes;
        let staged = shared.add(threads * WHOLE_SLOT as usize);
        let (warp, lane) = (rank / WARP_SIZE as usize, rank % WARP_SIZE as usize);
        if lane < lanes {
            let to = staged.add(warp * columns + lane * STRIP_COLUMNS as usize);
            for j in 0..16 {
                *to.add(j) = sums[j];
            }
        }
        sync_threads();
        if rank < columns && block_x0 + rank < width {
            let mut total = 0u32;
            for w in 0..threads / WARP_SIZE as usize {
                total = total.wrapping_add(*staged.add(w * columns + rank));
            }
            *out.add(block_x0 + rank) = O::from_u32(total);
        }
    }

    /// The rows `[begin, end)` of this block's band: band `blockIdx.y` of
    /// `gridDim.y` equal bands.
    #[inline(always)]
    fn band_rows(height: u32) -> (usize, usize) {
        let (band, bands) = (block_idx_y() as usize, grid_dim_y() as usize);
        // Below 2^32 · 2^8: no overflow.
        let height = height as usize;
        (height * band / bands, height * (band + 1) / bands)
    }

    /// Stores this part's `total` of output `index` (one of `parts`: a
    /// column's band, a row's part) into `out`, directly where the part is
    /// the only one, else through the index's tally: the part whose add
    /// finds all the others' there stores the sum and zeroes the tally.
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

    /// The reads of a band block of `lanes` column-threads by `row_lanes`
    /// row-lanes (as constants in [`bands`], so that its loop is scheduled
    /// for its one shape): each thread's 16 columns summed over its
    /// row-lane's rows of the block's band into its slot of the dynamic
    /// shared memory, then a block barrier. Returns the thread's rank in
    /// the block, the block's first column and the slots.
    #[inline(always)]
    unsafe fn band_slots(
        image: *const u8,
        pitch: usize,
        width: usize,
        height: u32,
        lanes: usize,
        row_lanes: usize,
    ) -> (usize, usize, *mut u32) {
        const SLOT: usize = WHOLE_SLOT as usize;
        let (tx, ty, block_x0, x0) = strip_thread(lanes);
        let rank = ty * lanes + tx;
        let (y_begin, y_end) = band_rows(height);
        let shared = dynamic_shared::<u32>();
        sum_rows_to_slot::<{ BAND_UNROLL as usize }>(
            image,
            pitch,
            width,
            x0,
            y_begin + ty,
            y_end,
            row_lanes,
            shared.add(rank * SLOT),
        );
        sync_threads();
        (rank, block_x0, shared)
    }

    /// Column step 5: block `(bx, by)` sums columns `bx · 512 ..` over
    /// band `by` of `gridDim.y` equal bands of the rows and meets the other
    /// bands in `tally` (one zeroed `u64` per column, left zeroed). The
    /// block is [`BAND_BLOCK`] with [`BAND_SHARED`] bytes of shared memory;
    /// at most [`MAX_BANDS`] bands. Its shape is constant: with the block's
    /// dimensions read at run time (as [`bands_narrow`]), 8192² read 4%
    /// slower on an H200 (21.4 → 22.2 µs).
    pub unsafe fn bands<O: SumOut>(
        image: *const u8,
        pitch: usize,
        width: u32,
        height: u32,
        tally: *mut u64,
        out: *mut O,
    ) {
        const LANES: usize = BAND_BLOCK.0 as usize;
        const ROW_LANES: usize = BAND_BLOCK.1 as usize;
        const SLOT: usize = WHOLE_SLOT as usize;
        let width = width as usize;
        let (rank, block_x0, shared) = band_slots(image, pitch, width, height, LANES, ROW_LANES);
        // One thread per column adds the row-lanes' slots (consecutive
        // threads, consecutive columns: word `j` of two neighbouring slots).
        let column = block_x0 + rank;
        if rank < BAND_BLOCK_COLUMNS as usize && column < width {
            let (owner, j) = (rank / STRIP_COLUMNS as usize, rank % STRIP_COLUMNS as usize);
            let mut total = 0u32;
            for r in 0..ROW_LANES {
                total = total.wrapping_add(*shared.add((r * LANES + owner) * SLOT + j));
            }
            join_total(tally, out, column, total, grid_dim_y() as usize);
        }
    }

    /// Column step 5 for images of at most 256 columns, as [`bands`] with
    /// the block [`band_block`]`(width)`: block `(bx, by)` sums columns
    /// `bx · 16 · blockDim.x ..`.
    pub unsafe fn bands_narrow<O: SumOut>(
        image: *const u8,
        pitch: usize,
        width: u32,
        height: u32,
        tally: *mut u64,
        out: *mut O,
    ) {
        const SLOT: usize = WHOLE_SLOT as usize;
        const THREADS: usize = BAND_THREADS as usize;
        const COLUMNS: usize = STRIP_COLUMNS as usize;
        let width = width as usize;
        let (lanes, row_lanes) = (block_dim_x() as usize, block_dim_y() as usize);
        let block_columns = lanes * COLUMNS;
        let (rank, block_x0, shared) = band_slots(image, pitch, width, height, lanes, row_lanes);
        // The row-lanes' slots of each column in `parts` (32 / lanes, at
        // least 2) parts of 16 slots, a thread each (consecutive threads,
        // consecutive columns: word `j` of neighbouring slots), then the
        // parts by one thread per column.
        let parts = THREADS / block_columns;
        let (j, part) = (rank % block_columns, rank / block_columns);
        let (owner, word) = (j / COLUMNS, j % COLUMNS);
        let mut partial = 0u32;
        let mut r = part;
        while r < row_lanes {
            partial = partial.wrapping_add(*shared.add((r * lanes + owner) * SLOT + word));
            r += parts;
        }
        let partials = shared.add(THREADS * SLOT);
        *partials.add(rank) = partial;
        sync_threads();
        let column = block_x0 + rank;
        if rank < block_columns && column < width {
            let mut total = 0u32;
            for p in 0..parts {
                total = total.wrapping_add(*partials.add(p * block_columns + rank));
            }
            join_total(tally, out, column, total, grid_dim_y() as usize);
        }
    }

    /// Row step 1.
    pub unsafe fn atomic_chunks<O: Accumulate>(
        image: *const u8,
        pitch: usize,
        width: u32,
        height: u32,
        out: *mut O,
    ) {
        let chunks = (width as usize).div_ceil(ROW_CHUNK as usize);
        let i = global_index_x();
        if i >= chunks * height as usize {
            return;
        }
        let (row, chunk) = (i / chunks, i % chunks);
        let begin = chunk * ROW_CHUNK as usize;
        let end = (begin + ROW_CHUNK as usize).min(width as usize);
        let mut sum = 0u32;
        for x in begin..end {
            sum += *image.add(row * pitch + x) as u32;
        }
        O::red_add(out.add(row), sum);
    }

    /// Row step 2: block `blockIdx.x` sums row `blockIdx.x`.
    pub unsafe fn block_tree<O: SumOut>(
        image: *const u8,
        pitch: usize,
        width: u32,
        _height: u32,
        out: *mut O,
    ) {
        let s = dynamic_shared::<u32>();
        let tid = thread_idx_x();
        let row = block_idx_x() as usize;
        let p = image.add(row * pitch);
        let mut sum = 0u32;
        let mut x = tid as usize;
        while x < width as usize {
            sum = sum.wrapping_add(*p.add(x) as u32);
            x += block_dim_x() as usize;
        }
        *s.add(tid as usize) = sum;
        sync_threads();
        shared_tree(s, 0, u32::wrapping_add);
        if tid == 0 {
            *out.add(row) = O::from_u32(*s);
        }
    }

    /// Row step 3: warp `w` of the grid sums row `w`.
    pub unsafe fn warp_shuffle<O: SumOut>(
        image: *const u8,
        pitch: usize,
        width: u32,
        height: u32,
        out: *mut O,
    ) {
        let row = global_index_x() / WARP_SIZE as usize;
        if row >= height as usize {
            return; // whole warps leave together: rows are per warp
        }
        let lane = lane_id() as usize;
        let p = image.add(row * pitch);
        let mut sum = 0u32;
        let mut x = lane;
        while x < width as usize {
            sum = sum.wrapping_add(*p.add(x) as u32);
            x += WARP_SIZE as usize;
        }
        let sum = warp_reduce(sum, u32::wrapping_add);
        if lane == 0 {
            *out.add(row) = O::from_u32(sum);
        }
    }

    /// `sum` plus one byte.
    #[inline(always)]
    fn add_byte(sum: u32, byte: u8) -> u32 {
        sum.wrapping_add(byte as u32)
    }

    /// `sum` plus the 16 bytes of `w`, four at a time by `dp4a`.
    #[inline(always)]
    fn add_bytes16(sum: u32, w: Words4) -> u32 {
        const ONES: u32 = 0x0101_0101;
        dp4a(
            w[0],
            ONES,
            dp4a(w[1], ONES, dp4a(w[2], ONES, dp4a(w[3], ONES, sum))),
        )
    }

    /// The sum of the `len` bytes at `bytes`, read by the `LANES` lanes of
    /// this lane's group (`LANES` a power of two up to a warp, `rank` this
    /// lane's place in the group) with 16-byte loads, `UNROLL` in flight per
    /// lane, four bytes at a time by `dp4a`; every lane of the group gets
    /// the total. Every lane of the warp calls it, with the same `LANES`.
    #[inline(always)]
    unsafe fn lanes_byte_sum<const UNROLL: usize, const LANES: usize>(
        bytes: *const u8,
        len: usize,
        rank: usize,
    ) -> u32 {
        let (byte, words) = (add_byte, add_bytes16);
        let mut sum = if LANES >= 16 {
            stream_words::<u8, u32, UNROLL>(bytes, len, rank, LANES, 0, byte, words)
        } else {
            // Fewer lanes than a head or a tail can have bytes: they take
            // those `LANES` apart here, and the aligned body alone goes
            // through the stream.
            let head = ((16 - bytes as usize % 16) % 16).min(len);
            let body = (len - head) / 16 * 16;
            let mut sum = 0u32;
            let mut k = rank;
            while k < head {
                sum = byte(sum, *bytes.add(k));
                k += LANES;
            }
            k = head + body + rank;
            while k < len {
                sum = byte(sum, *bytes.add(k));
                k += LANES;
            }
            stream_words::<u8, u32, UNROLL>(bytes.add(head), body, rank, LANES, sum, byte, words)
        };
        // Butterflies within the group: lanes `LANES` apart never meet.
        let mut mask = LANES as u32 / 2;
        while mask > 0 {
            sum = sum.wrapping_add(shfl_xor(sum, mask));
            mask >>= 1;
        }
        sum
    }

    /// Row step 4 with `LANES` lanes per row.
    #[inline(always)]
    unsafe fn vectorized_lanes<O: SumOut, const LANES: usize>(
        image: *const u8,
        pitch: usize,
        width: usize,
        height: usize,
        out: *mut O,
    ) {
        let rows = WARP_SIZE as usize / LANES;
        let lane = lane_id() as usize;
        let (group, rank) = (lane / LANES, lane % LANES);
        let step = grid_threads_x() / WARP_SIZE as usize * rows;
        // The warp's first row: the loop is the same for all its lanes, so
        // all of them reach the shuffles; groups past the last row sum
        // nothing.
        let mut first = global_index_x() / WARP_SIZE as usize * rows;
        while first < height {
            let row = first + group;
            let len = if row < height { width } else { 0 };
            let start = image.add(row.min(height - 1) * pitch);
            let sum = lanes_byte_sum::<ROW_UNROLL, LANES>(start, len, rank);
            if rank == 0 && row < height {
                *out.add(row) = O::from_u32(sum);
            }
            first += step;
        }
    }

    /// Row step 4: warps loop over rows, `grid warps` apart.
    pub unsafe fn vectorized<O: SumOut>(
        image: *const u8,
        pitch: usize,
        width: u32,
        height: u32,
        out: *mut O,
    ) {
        const LANES: usize = WARP_SIZE as usize;
        let width = width as usize;
        let lane = lane_id() as usize;
        let warps = grid_threads_x() / LANES;
        let mut row = global_index_x() / LANES;
        while row < height as usize {
            let sum = lanes_byte_sum::<ROW_UNROLL, LANES>(image.add(row * pitch), width, lane);
            if lane == 0 {
                *out.add(row) = O::from_u32(sum);
            }
            row += warps;
        }
    }

    /// Row step 4 for rows of at most [`ROW_NARROW_MAX`] bytes: warps loop
    /// over groups of rows, [`row_lanes`] lanes per row. An entry of its
    /// own: in one kernel with the whole-warp loop, ptxas issued that loop's
    /// 4 loads two at a time (8192², 20.0 → 21.2 µs; 64 rows of 1 MiB 223
    /// → 406 µs on an H200).
    pub unsafe fn vectorized_narrow<O: SumOut>(
        image: *const u8,
        pitch: usize,
        width: u32,
        height: u32,
        out: *mut O,
    ) {
        let (width, height) = (width as usize, height as usize);
        match row_lanes(width) {
            8 => vectorized_lanes::<O, 8>(image, pitch, width, height, out),
            4 => vectorized_lanes::<O, 4>(image, pitch, width, height, out),
            2 => vectorized_lanes::<O, 2>(image, pitch, width, height, out),
            _ => vectorized_lanes::<O, 1>(image, pitch, width, height, out),
        }
    }

    /// The byte range `[start, end)` of part `part` of a row of `width`
    /// bytes at `row`: `parts` parts of about equal length, each after the
    /// first starting on a 16-byte boundary, so that only the row's own
    /// head and tail take single bytes. `parts` is below 2^8.
    #[inline(always)]
    fn split_range(row: *const u8, width: usize, part: usize, parts: usize) -> (usize, usize) {
        let at = |p: usize| {
            if p == 0 {
                0
            } else if p == parts {
                width
            } else {
                let address = row as usize;
                let mid = address + width * p / parts;
                (mid.next_multiple_of(16) - address).min(width)
            }
        };
        (at(part), at(part + 1))
    }

    /// Row step 5: [`ROW_SPLIT`] warps per row, blocks looping over rounds
    /// of [`ROW_SPLIT_ROWS`] rows, `grid` rounds apart. Shared memory of
    /// [`ROW_SPLIT_SHARED`]; blocks of [`ROW_VECTOR_BLOCK`] threads.
    pub unsafe fn split_rows<O: SumOut>(
        image: *const u8,
        pitch: usize,
        width: u32,
        height: u32,
        out: *mut O,
    ) {
        const LANES: usize = WARP_SIZE as usize;
        const SPLIT: usize = ROW_SPLIT as usize;
        const WARPS: usize = ROW_VECTOR_BLOCK as usize / LANES;
        let parts = dynamic_shared::<u32>();
        let width = width as usize;
        let lane = lane_id() as usize;
        let warp = thread_idx_x() as usize / LANES;
        let (group, part) = (warp / SPLIT, warp % SPLIT);
        let rows = ROW_SPLIT_ROWS as usize;
        let mut row = block_idx_x() as usize * rows + group;
        let step = grid_dim_x() as usize * rows;
        let mut set = 0;
        // The warps of a group share their rows, so they run the same
        // rounds and meet at every barrier of their group.
        while row < height as usize {
            let start = image.add(row * pitch);
            let (from, to) = split_range(start, width, part, SPLIT);
            let sum = lanes_byte_sum::<ROW_SPLIT_UNROLL, LANES>(start.add(from), to - from, lane);
            // Two sets of slots, alternating: a warp writes this round's
            // set only after the barrier of the round before, which its
            // group's first warp reaches after reading that set two rounds
            // ago.
            let slots = parts.add(set * WARPS + group * SPLIT);
            if lane == 0 {
                *slots.add(part) = sum;
            }
            sync_named(1 + group as u32, (SPLIT * LANES) as u32);
            if part == 0 && lane == 0 {
                let mut total = 0u32;
                for p in 0..SPLIT {
                    total = total.wrapping_add(*slots.add(p));
                }
                *out.add(row) = O::from_u32(total);
            }
            set ^= 1;
            row += step;
        }
    }

    /// Row step 5 for rows too few to fill the GPU ([`row_parts`]): block
    /// `(part, row)` sums part `part` of `gridDim.x` of row `row`
    /// ([`split_range`]), all its threads along the part with
    /// [`ROW_SPLIT_UNROLL`] loads in flight each, and meets the row's other
    /// parts in its tally as the column bands do ([`join_total`]). Blocks
    /// of [`ROW_VECTOR_BLOCK`] threads with [`ROW_SPLIT_SHARED`] bytes of
    /// shared memory; at most [`MAX_BANDS`] parts.
    pub unsafe fn split_wide<O: SumOut>(
        image: *const u8,
        pitch: usize,
        width: u32,
        height: u32,
        tally: *mut u64,
        out: *mut O,
    ) {
        const THREADS: usize = ROW_VECTOR_BLOCK as usize;
        let row = block_idx_y() as usize;
        if row >= height as usize {
            return; // a whole block: the grid has a row of blocks per row
        }
        let parts = grid_dim_x() as usize;
        let start = image.add(row * pitch);
        let (from, to) = split_range(start, width as usize, block_idx_x() as usize, parts);
        let t = thread_idx_x() as usize;
        let sum = stream_words::<u8, u32, ROW_SPLIT_UNROLL>(
            start.add(from),
            to - from,
            t,
            THREADS,
            0,
            add_byte,
            add_bytes16,
        );
        let total = block_reduce(sum, 0, u32::wrapping_add, dynamic_shared::<u32>());
        if t == 0 {
            join_total(tally, out, row, total, parts);
        }
    }
}

/// Whether [`RowSumVariant::SplitRows`] suits rows of `width` bytes: each
/// of its [`ROW_SPLIT`] warps then has at least one 16-byte vector per
/// lane. Narrower rows would leave lanes idle in both warps; they take
/// [`RowSumVariant::Vectorized`].
pub const fn split_rows_pays(width: usize) -> bool {
    width >= (ROW_SPLIT * WARP_SIZE * 16) as usize
}

kernels! {
    /// Every image-sum entry point; the type is the output's.
    pub const KERNELS = {
        (image: *const u8, pitch: usize, width: u32, height: u32, out: *mut T) {
            fn column_sums_per_thread<T in u32, f32> = device::column_per_thread;
            fn column_sums_four_per_thread<T in u32, f32> = device::four_per_thread;
            fn column_sums_whole<T in u32, f32> = device::whole_columns;
            fn row_sums_atomic_chunks<T in u32, f32> = device::atomic_chunks;
            fn row_sums_block_tree<T in u32, f32> = device::block_tree;
            fn row_sums_warp_shuffle<T in u32, f32> = device::warp_shuffle;
            fn row_sums_vectorized<T in u32, f32> = device::vectorized;
            fn row_sums_vectorized_narrow<T in u32, f32> = device::vectorized_narrow;
            fn row_sums_split<T in u32, f32> = device::split_rows;
        }
        (image: *const u8, pitch: usize, width: u32, height: u32, rows_per_block: u32, out: *mut T) {
            fn column_sums_strips<T in u32, f32> = device::strips;
        }
        (image: *const u8, pitch: usize, width: u32, height: u32, tally: *mut u64, out: *mut T) {
            fn column_sums_bands<T in u32, f32> = device::bands;
            fn column_sums_bands_narrow<T in u32, f32> = device::bands_narrow;
            fn row_sums_split_wide<T in u32, f32> = device::split_wide;
        }
    }
}

/// The arguments of every image-sum kernel but the column strips: one output
/// element per column or row.
pub type ImageArgs<T> = column_sums_per_thread::Args<T>;

impl RowSumVariant {
    /// The typed entry of this step for output type `T`.
    pub const fn entry<T: SumOut>(self) -> crate::Entry<ImageArgs<T>> {
        match self {
            RowSumVariant::AtomicChunks => row_sums_atomic_chunks::entry::<T>(),
            RowSumVariant::BlockTree => row_sums_block_tree::entry::<T>(),
            RowSumVariant::WarpShuffle => row_sums_warp_shuffle::entry::<T>(),
            RowSumVariant::Vectorized => row_sums_vectorized::entry::<T>(),
            RowSumVariant::SplitRows => row_sums_split::entry::<T>(),
        }
    }
}
