//! The column-sum ladder: one thread per column (003's 1-byte step), four
//! columns per thread (003's 4-byte step), strips of 16 columns a thread
//! with the rows split across blocks, whole columns per block, and bands
//! of rows that meet in a tally.

use crate::WARP_SIZE;
#[cfg(target_arch = "nvptx64")]
use {super::*, crate::prim::*};

/// Threads per block of the one-thread-per-column steps.
#[doc(hidden)]
pub const COLUMN_BLOCK: u32 = 256;
/// Columns one thread sums in [`ColumnSumVariant::Strips`]: one 16-byte load
/// per row.
#[doc(hidden)]
pub const STRIP_COLUMNS: u32 = 16;
/// Rows a 16-bit lane of byte sums can add before it could overflow
/// (256 · 255 < 2^16): the lanes are flushed into 32-bit sums every this
/// many rows.
#[doc(hidden)]
pub const LANE_ROWS: u32 = 256;
/// 32-bit words of a thread's 16-bit lanes: two of its
/// [`STRIP_COLUMNS`] columns a word.
#[doc(hidden)]
pub const LANE_WORDS: u32 = STRIP_COLUMNS / 2;
/// Threads of a [`ColumnSumVariant::Strips`] block: 32 column-threads (512
/// columns: each warp load reads a 512-byte row segment) by 8 row-lanes.
#[doc(hidden)]
pub const STRIP_BLOCK: (u32, u32) = (32, 8);
/// Columns one block of [`ColumnSumVariant::Strips`] covers.
#[doc(hidden)]
pub const STRIP_BLOCK_COLUMNS: u32 = STRIP_BLOCK.0 * STRIP_COLUMNS;
/// Rows each row-lane of a strip block loads per round: loads in flight.
#[doc(hidden)]
pub const STRIP_UNROLL: u32 = 4;
/// Words per thread in a strip block's staging area: 16 sums and 4 words of
/// padding, so that neighbouring threads' slots start in different banks.
#[doc(hidden)]
pub const STRIP_SLOT: u32 = 20;
/// Blocks per SM the host aims for when it splits rows across blocks.
#[doc(hidden)]
pub const STRIP_BLOCKS_PER_SM: u32 = 8;
/// Threads of a [`ColumnSumVariant::WholeColumns`] block: 4 column-threads
/// (64 columns, 16 each) by 256 row-lanes, one block per SM (64 registers).
/// A warp's load reads 64 bytes of each of 8 rows; an 8192-wide image gives
/// 128 blocks. Measured on an H200 (8192², µs): 22.0 here; 2 × 256 (256
/// blocks of 512 threads) 25.8, 4 × 128 28.5, 8 × 128 (64 blocks) 27.9.
/// Whole 128-byte lines per row (8 × 128) with the rows split between two
/// blocks, 128 in all, timed without combining them: only 2.5 % faster on
/// an H100, not worth a combine across blocks (a cluster's shared memory).
#[doc(hidden)]
pub const WHOLE_BLOCK: (u32, u32) = (4, 256);
/// Columns one block of [`ColumnSumVariant::WholeColumns`] covers.
#[doc(hidden)]
pub const WHOLE_BLOCK_COLUMNS: u32 = WHOLE_BLOCK.0 * STRIP_COLUMNS;
/// Rows each row-lane of a whole-column block loads per round. H200,
/// 8192², µs: 4 → 23.2, 6 → 23.1, 8 → 22.0 (4 with the sums in registers,
/// which leaves no room for more: 22.5). Loads that ask L2 to fetch whole
/// 128- or 256-byte lines (`.L2::128B`, a warp reads half a line of each
/// row) gave 21.4 and 21.8 against 21.8: within the noise, not kept.
#[doc(hidden)]
pub const WHOLE_UNROLL: u32 = 8;
/// Words of a whole-column thread's slot of sums: 16 and one of padding,
/// so that a warp's accesses to word `j` of its slots hit 32 banks.
#[doc(hidden)]
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
/// the same day (events around each launch, as the bench) the reads
/// alone took 19.2 against 19.5 µs and the join after them 1.2 to 1.3 in
/// both; here the combine after the last load also halves, one thread per
/// column adding 16 slots instead of 32. Four loads a round instead of
/// [`BAND_UNROLL`]'s 8 read 8192² in 21.1 to 21.3.
#[doc(hidden)]
pub const BAND_BLOCK: (u32, u32) = (32, 16);
/// Band blocks resident on each SM.
#[doc(hidden)]
pub const BAND_BLOCKS_PER_SM: u32 = 2;
/// Threads of every band block.
#[doc(hidden)]
pub const BAND_THREADS: u32 = BAND_BLOCK.0 * BAND_BLOCK.1;
/// Columns one block of [`ColumnSumVariant::Bands`] covers at most.
#[doc(hidden)]
pub const BAND_BLOCK_COLUMNS: u32 = BAND_BLOCK.0 * STRIP_COLUMNS;
/// Rows each row-lane of a band block loads per round.
#[doc(hidden)]
pub const BAND_UNROLL: u32 = 8;
/// Rows a band of [`ColumnSumVariant::Bands`] may have for its blocks to
/// keep their sums in 16-bit lanes to the end: [`LANE_ROWS`] for each
/// row-lane of the [`BAND_BLOCK`].
#[doc(hidden)]
pub const BAND_LANES_MAX_ROWS: u32 = LANE_ROWS * BAND_BLOCK.1;
/// Shared memory of a band block: each thread's slot of sums, then a word
/// per thread for the first half of the row-lanes' combination (a block
/// in lanes, `bands_in_lanes`, uses the first 2.1 KB of it otherwise).
#[doc(hidden)]
pub const BAND_SHARED: u32 = BAND_THREADS * (WHOLE_SLOT + 1) * 4;

// A band block in lanes ([`bands_in_lanes`]) keeps a slot of sums per
// column-thread in the band's shared memory.
const _: () = assert!(WHOLE_SLOT * BAND_BLOCK.0 * 4 <= BAND_SHARED);

/// A `height` split into `bands` bands as even as can be, as
/// [`ColumnSumVariant::Bands`] takes it: `(band_rows, long_bands)`,
/// every band `band_rows` rows and the first `long_bands` one more
/// (`(0, 0)` for no bands, which hold no rows). The host divides once,
/// so that no block divides to find its rows.
#[doc(hidden)]
pub const fn band_split(height: u32, bands: u32) -> (u32, u32) {
    match (height.checked_div(bands), height.checked_rem(bands)) {
        (Some(rows), Some(long)) => (rows, long),
        _ => (0, 0),
    }
}

/// Whether every block of a [`ColumnSumVariant::Bands`] launch of
/// [`BAND_BLOCK`]s keeps its sums in 16-bit lanes to the end, so that
/// the launch can take the entry with that path alone: every strip of
/// 512 columns whole, at most [`MAX_BANDS`](super::MAX_BANDS) bands and
/// none (of [`band_split`]'s `(band_rows, long_bands)`) longer than
/// [`BAND_LANES_MAX_ROWS`], so that the entry's tallies of two columns
/// hold every sum, and rows 16-byte aligned (`alignment`: the image's
/// address or'ed with its pitch), so that every row's piece is one load.
#[doc(hidden)]
pub const fn bands_all_in_lanes(
    width: u32,
    bands: u32,
    (band_rows, long_bands): (u32, u32),
    alignment: usize,
) -> bool {
    let longest = band_rows as u64 + (long_bands > 0) as u64;
    width.is_multiple_of(BAND_BLOCK_COLUMNS)
        && bands <= super::MAX_BANDS
        && longest <= BAND_LANES_MAX_ROWS as u64
        && alignment.is_multiple_of(16)
}

/// The block of [`ColumnSumVariant::Bands`] for an image `width` columns
/// wide: [`BAND_BLOCK`] from 512 columns; below, as few column-threads (of
/// 16 columns each, a power of two) as cover the width and the rest of
/// the [`BAND_THREADS`] as row-lanes, so that no thread idles past the
/// edge: a 64-column image takes 4 column-threads by 128 row-lanes, a warp
/// load then 64 bytes of each of 8 rows.
#[doc(hidden)]
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

/// Shared memory of a whole-column block of `(x, y)` threads: each
/// thread's slot, then each warp's `16 · x` column sums.
#[doc(hidden)]
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
        /// `STRIP_BLOCK_COLUMNS` (512) columns by a band of rows), so that
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
        /// image down them: `WHOLE_BLOCK`, 64 columns by 256 row-lanes,
        /// step 3's 16-byte loads and 16-bit lanes with `WHOLE_UNROLL`
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
        /// Step 5: step 4's loads and slots in blocks of `BAND_BLOCK`, 512
        /// columns by 16 row-lanes, two per SM, each warp load 512
        /// consecutive bytes of one row (step 4's read 64 bytes of each of 8
        /// rows), over one band of the rows: the host cuts each strip into
        /// as many bands as fill the SMs' blocks once; images of up to 256 columns take fewer
        /// column-threads and more row-lanes (`band_block`, an entry of
        /// their own). The bands of a column meet in a 64-bit tally in the
        /// context's scratch memory, zero between launches: each band adds
        /// its sum and a count of one (`TALLY_COUNT_SHIFT`) in one atomic,
        /// and the band that finds the others' count already there stores
        /// the total and zeroes the tally. No zeroing launch, no fence, no
        /// second read; the same bits every run (integer sums). A block of
        /// bands of up to 4096 rows (256 a row-lane) keeps its 16-bit lanes
        /// in registers to the end and each warp adds its sums into the
        /// block's in shared memory as its reads end (`bands_in_lanes`),
        /// where longer bands zero, add into and read back 16-word slots.
        /// The host gives each block its rows (`band_split`), so that no
        /// block divides. H200, µs: 8192² 20.4 → 20.1, 2^20 × 64 24.0 →
        /// 22.1 (the slots before the lanes: 27.7). Launches whose every
        /// block keeps its lanes take an entry of that path alone
        /// (`bands_all_in_lanes`; 8192² 20.1 → 19.9), whose bands meet
        /// two columns to a tally (→ 19.8).
        Bands = "bands" => ColumnShape {
            kernel: "column_sums_bands",
            block: BAND_BLOCK,
            block_columns: BAND_BLOCK_COLUMNS,
            shared_bytes: BAND_SHARED,
            accumulates: false,
        },
    }
    default = Bands;
}

/// Column step 1.
#[cfg(target_arch = "nvptx64")]
pub(super) unsafe fn column_per_thread<O: SumOut>(
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
#[cfg(target_arch = "nvptx64")]
pub(super) unsafe fn four_per_thread<O: SumOut>(
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
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
fn add_lanes(acc: &mut [u32; 8], w: Words4) {
    for i in 0..4 {
        acc[2 * i] += w[i] & 0x00ff_00ff;
        acc[2 * i + 1] += odd_bytes(w[i]);
    }
}

/// [`add_lanes`] of two rows at once: three instructions a word where one
/// row at a time takes five (the two rows' halves meet in one three-input
/// add, and the odd bytes move down in one `prmt` instead of a shift and a
/// mask). H200, 8192², a CUDA C++ probe of step 5's reads with their sums
/// in three runs: 19.0 to 19.3 against 19.2 to 19.6 µs (2026-11-26).
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
fn add_lanes2(acc: &mut [u32; 8], a: Words4, b: Words4) {
    for i in 0..4 {
        acc[2 * i] += (a[i] & 0x00ff_00ff) + (b[i] & 0x00ff_00ff);
        acc[2 * i + 1] += odd_bytes(a[i]) + odd_bytes(b[i]);
    }
}

/// Bytes 1 and 3 of `w` in the low bytes of its 16-bit halves, the high
/// bytes zero: `(w >> 8) & 0x00ff_00ff` in one instruction.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
fn odd_bytes(w: u32) -> u32 {
    byte_perm(w, 0, 0x4341)
}

/// Adds rows `y, y + step, ...` below `y_end` of the 16 columns at `x0`
/// (nothing where `x0` is past the edge): with 16-byte loads, `UNROLL`
/// rows in flight, where the 16 columns lie inside the image and every
/// row's piece is 16-byte aligned; with four 4-byte loads a row where
/// the pieces are only 4-byte aligned (a pitch such as 1000); byte by
/// byte (masked at the right edge) otherwise. Column `j`'s sum leaves
/// as `flush(j, partial)`, from 16-bit lanes every 256 rows (before
/// 255 · 257 could overflow them) and from each byte on the byte path.
#[cfg(target_arch = "nvptx64")]
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
        sum_rows16_lanes::<UNROLL>(image, pitch, x0, y, y_end, step, flush, load_16);
    } else if inside && alignment.is_multiple_of(4) {
        sum_rows16_lanes::<UNROLL>(image, pitch, x0, y, y_end, step, flush, load_4x4);
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

/// 16 bytes at `p` (16-byte aligned) in one load.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
unsafe fn load_16(p: *const u8) -> Words4 {
    load_nc_v4(p.cast())
}

/// 16 bytes at `p` (4-byte aligned) in four 4-byte loads.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
unsafe fn load_4x4(p: *const u8) -> Words4 {
    let p = p.cast::<u32>();
    [
        load_nc_u32(p),
        load_nc_u32(p.add(1)),
        load_nc_u32(p.add(2)),
        load_nc_u32(p.add(3)),
    ]
}

/// [`sum_rows16`]'s path for 16 columns inside the image whose pieces
/// `load` reads as one 16-byte word a row.
#[cfg(target_arch = "nvptx64")]
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
    load: unsafe fn(*const u8) -> Words4,
) {
    while y < y_end {
        let flush_at = (y + LANE_ROWS as usize * step).min(y_end);
        let mut lanes = [0u32; LANE_WORDS as usize];
        y = add_rows_to_lanes::<UNROLL>(image, pitch, x0, y, flush_at, step, &mut lanes, load);
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

/// Adds rows `y, y + step, ...` below `y_end`, at most [`LANE_ROWS`] of
/// them (so that no 16-bit lane overflows), of the 16 columns that
/// `load` reads at `x0` into `lanes` ([`add_lanes`]), `UNROLL` rows in
/// flight. Returns the first row of the sequence at or past `y_end`.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn add_rows_to_lanes<const UNROLL: usize>(
    image: *const u8,
    pitch: usize,
    x0: usize,
    mut y: usize,
    y_end: usize,
    step: usize,
    lanes: &mut [u32; LANE_WORDS as usize],
    load: unsafe fn(*const u8) -> Words4,
) -> usize {
    while y + (UNROLL - 1) * step < y_end {
        let mut w = [[0u32; 4]; UNROLL];
        for u in 0..UNROLL {
            w[u] = load(image.add((y + u * step) * pitch + x0));
        }
        for u in 0..UNROLL / 2 {
            add_lanes2(lanes, w[2 * u], w[2 * u + 1]);
        }
        if UNROLL % 2 == 1 {
            add_lanes(lanes, w[UNROLL - 1]);
        }
        y += UNROLL * step;
    }
    while y < y_end {
        add_lanes(lanes, load(image.add(y * pitch + x0)));
        y += step;
    }
    y
}

/// [`sum_rows16`] into `slot`, 16 words of shared memory, zeroed
/// first: each thread's sums live in shared memory, where the lanes
/// flush every 256 rows, so that the registers they would hold go to
/// loads in flight instead (steps 4 and 5).
#[cfg(target_arch = "nvptx64")]
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
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
fn strip_thread(lanes: usize) -> (usize, usize, usize, usize) {
    let (tx, ty) = (thread_idx_x() as usize, thread_idx_y() as usize);
    let block_x0 = block_idx_x() as usize * (lanes * STRIP_COLUMNS as usize);
    (tx, ty, block_x0, block_x0 + tx * STRIP_COLUMNS as usize)
}

/// Column step 3: block `(bx, by)` sums columns `bx·256 ..` over rows
/// `by·rows_per_block ..` and adds into the zeroed `out`. The block is
/// [`STRIP_BLOCK`] with `shared_bytes` of shared memory.
#[cfg(target_arch = "nvptx64")]
pub(super) unsafe fn strips<O: Accumulate>(
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
#[cfg(target_arch = "nvptx64")]
pub(super) unsafe fn whole_columns<O: SumOut>(
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

/// The rows `[begin, end)` of this block's band, band `blockIdx.y`: the
/// first `long_bands` bands have `band_rows + 1` rows, the others
/// `band_rows` ([`band_split`], the host's split of the height into
/// `gridDim.y` bands as even as can be). Without a division: two 64-bit
/// divisions by the band count here delayed every block's first load,
/// and cost 0.26 µs of 20 at 8192² in a CUDA C++ probe (H200).
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
fn block_band(band_rows: u32, long_bands: u32) -> (usize, usize) {
    let band = block_idx_y();
    // At most the height, below 2^32.
    let begin = band * band_rows + band.min(long_bands);
    let end = begin + band_rows + (band < long_bands) as u32;
    (begin as usize, end as usize)
}

/// The reads of a band block of `lanes` column-threads by `row_lanes`
/// row-lanes (as constants in [`bands`], so that its loop is scheduled
/// for its one shape): each thread's 16 columns summed over its
/// row-lane's rows of the block's band into its slot of the dynamic
/// shared memory, then a block barrier. Returns the thread's rank in
/// the block, the block's first column and the slots.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
unsafe fn band_slots(
    image: *const u8,
    pitch: usize,
    width: usize,
    (y_begin, y_end): (usize, usize),
    lanes: usize,
    row_lanes: usize,
) -> (usize, usize, *mut u32) {
    const SLOT: usize = WHOLE_SLOT as usize;
    let (tx, ty, block_x0, x0) = strip_thread(lanes);
    let rank = ty * lanes + tx;
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
/// band `by` of the `gridDim.y` bands of the rows ([`band_split`]:
/// `band_rows` rows each, one more for the first `long_bands`) and meets the other
/// bands in `tally` (one zeroed `u64` per column, left zeroed). The
/// block is [`BAND_BLOCK`] with [`BAND_SHARED`] bytes of shared memory;
/// at most [`MAX_BANDS`] bands. Its shape is constant: with the block's
/// dimensions read at run time (as [`bands_narrow`]), 8192² read 4%
/// slower on an H200 (21.4 → 22.2 µs).
#[cfg(target_arch = "nvptx64")]
pub(super) unsafe fn bands<O: SumOut>(
    image: *const u8,
    pitch: usize,
    width: u32,
    band_rows: u32,
    long_bands: u32,
    tally: *mut u64,
    out: *mut O,
) {
    const LANES: usize = BAND_BLOCK.0 as usize;
    const ROW_LANES: usize = BAND_BLOCK.1 as usize;
    const SLOT: usize = WHOLE_SLOT as usize;
    let width = width as usize;
    let rows = block_band(band_rows, long_bands);
    let (y_begin, y_end) = rows;
    let block_x0 = block_idx_x() as usize * BAND_BLOCK_COLUMNS as usize;
    // The same for every thread of the block, so that all of them reach
    // the barriers of the one path.
    if y_end - y_begin <= BAND_LANES_MAX_ROWS as usize
        && block_x0 + BAND_BLOCK_COLUMNS as usize <= width
        && (image as usize | pitch).is_multiple_of(4)
    {
        return bands_in_lanes::<O, false>(image, pitch, rows, tally, out);
    }
    let (rank, block_x0, shared) = band_slots(image, pitch, width, rows, LANES, ROW_LANES);
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

/// Column step 5 where every block keeps its sums in lanes
/// ([`bands_all_in_lanes`]): [`bands`] without its other paths (8 KB of
/// `sm_90a` machine code against 33 KB), an entry of its own because it
/// reads faster. H200, 8192², µs: in a CUDA C++ probe timed as the
/// bench, 20.35 to 20.45 against 20.54 to 20.58 for the entry with
/// every path; in the bench, two interleaved rounds of the two builds,
/// 20.0 and 19.9 against 20.2 and 20.1. Its bands meet two columns to a
/// tally (`join_pair`), which the bound on its bands allows.
#[cfg(target_arch = "nvptx64")]
pub(super) unsafe fn bands_lanes<O: SumOut>(
    image: *const u8,
    pitch: usize,
    _width: u32,
    band_rows: u32,
    long_bands: u32,
    tally: *mut u64,
    out: *mut O,
) {
    bands_in_lanes::<O, true>(image, pitch, block_band(band_rows, long_bands), tally, out)
}

/// [`bands`] for a block whose 512 columns lie inside the image, whose
/// rows are 4-byte aligned (16-byte aligned where `LANES_ENTRY`, the
/// caller's promise that the whole launch is [`bands_all_in_lanes`],
/// which leaves out the path of 4-byte loads and joins the bands two
/// columns to a tally) and whose row-lanes have at most [`LANE_ROWS`]
/// rows each (bands of at most [`BAND_LANES_MAX_ROWS`]): each thread's
/// 16-bit lanes stay in
/// registers to the end, where [`band_slots`] zeroes a slot of 16
/// words, adds into it and reads it back. Each warp then adds its 16
/// sums a thread into the block's 512 as soon as its own reads are done
/// (`red.shared`), and one barrier later a thread per column joins the
/// bands: no barrier waits for the slowest warp before the adds, and no
/// thread reads more than one word back. H200, 8192², a CUDA C++ probe
/// in four runs (µs): 20.1 to 20.4 against 20.4 to 20.7 with the lanes
/// combined after a barrier.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
unsafe fn bands_in_lanes<O: SumOut, const LANES_ENTRY: bool>(
    image: *const u8,
    pitch: usize,
    (y_begin, y_end): (usize, usize),
    tally: *mut u64,
    out: *mut O,
) {
    const LANES: usize = BAND_BLOCK.0 as usize;
    const ROW_LANES: usize = BAND_BLOCK.1 as usize;
    const UNROLL: usize = BAND_UNROLL as usize;
    const WORDS: usize = LANE_WORDS as usize;
    const SLOT: usize = WHOLE_SLOT as usize;
    // Named barrier: the sums are zeroed.
    const ZEROED: u32 = 1;
    let (tx, ty, block_x0, x0) = strip_thread(LANES);
    let rank = ty * LANES + tx;
    // The block's 512 sums, column-thread `c`'s 16 in a slot of 17 words
    // at `17 c`, so that a warp's adds to word `j` of its slots meet 32
    // banks. The first warp zeroes them and arrives at `ZEROED` without
    // waiting; the others wait there only after their reads.
    let sums = dynamic_shared::<u32>();
    if ty == 0 {
        for k in 0..SLOT {
            *sums.add(k * LANES + tx) = 0;
        }
        sync_warp(u32::MAX);
        arrive_named(ZEROED, BAND_THREADS);
    }
    let mut lanes = [0u32; WORDS];
    let y = y_begin + ty;
    if LANES_ENTRY || (image as usize | pitch).is_multiple_of(16) {
        add_rows_to_lanes::<UNROLL>(image, pitch, x0, y, y_end, ROW_LANES, &mut lanes, load_16);
    } else {
        add_rows_to_lanes::<UNROLL>(image, pitch, x0, y, y_end, ROW_LANES, &mut lanes, load_4x4);
    }
    if ty != 0 {
        sync_named(ZEROED, BAND_THREADS);
    }
    // Lane 2k + odd holds columns 4k + odd (low half) and 4k + odd + 2
    // (high half); see `sum_rows16_lanes`.
    let slot = shared_address(sums.add(SLOT * tx));
    for k in 0..4 {
        for odd in 0..2 {
            let (word, j) = (lanes[2 * k + odd], (4 * k + odd) as u32);
            red_shared_add_u32(slot + 4 * j, word & 0xffff);
            red_shared_add_u32(slot + 4 * (j + 2), word >> 16);
        }
    }
    sync_threads();
    if LANES_ENTRY {
        // Two neighbouring columns a thread. Every band of the launch has
        // at most BAND_LANES_MAX_ROWS rows, and there are at most
        // MAX_BANDS of them: each column's sum fits its field.
        if rank < BAND_BLOCK_COLUMNS as usize / 2 {
            let x = 2 * rank;
            let (c, j) = (x / STRIP_COLUMNS as usize, x % STRIP_COLUMNS as usize);
            let pair = (*sums.add(SLOT * c + j), *sums.add(SLOT * c + j + 1));
            join_pair(tally, out, block_x0 + x, pair, grid_dim_y() as usize);
        }
    } else if rank < BAND_BLOCK_COLUMNS as usize {
        let (c, j) = (rank / STRIP_COLUMNS as usize, rank % STRIP_COLUMNS as usize);
        let total = *sums.add(SLOT * c + j);
        join_total(tally, out, block_x0 + rank, total, grid_dim_y() as usize);
    }
}

/// Column step 5 for images of at most 256 columns, as [`bands`] with
/// the block [`band_block`]`(width)`: block `(bx, by)` sums columns
/// `bx · 16 · blockDim.x ..`.
#[cfg(target_arch = "nvptx64")]
pub(super) unsafe fn bands_narrow<O: SumOut>(
    image: *const u8,
    pitch: usize,
    width: u32,
    band_rows: u32,
    long_bands: u32,
    tally: *mut u64,
    out: *mut O,
) {
    const SLOT: usize = WHOLE_SLOT as usize;
    const THREADS: usize = BAND_THREADS as usize;
    const COLUMNS: usize = STRIP_COLUMNS as usize;
    let width = width as usize;
    let (lanes, row_lanes) = (block_dim_x() as usize, block_dim_y() as usize);
    let block_columns = lanes * COLUMNS;
    let rows = block_band(band_rows, long_bands);
    let (rank, block_x0, shared) = band_slots(image, pitch, width, rows, lanes, row_lanes);
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
