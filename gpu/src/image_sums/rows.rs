//! The row-sum ladder: 000's chunks with atomics and block per row, a warp
//! per row with shuffles, 16-byte loads summed by `dp4a`, and two warps
//! per row (or several blocks, meeting in a tally, for few long rows).

use super::*;
use crate::WARP_SIZE;
#[cfg(target_arch = "nvptx64")]
use crate::prim::*;

/// Bytes one thread of [`RowSumVariant::AtomicChunks`] sums (000's chunk).
#[doc(hidden)]
pub const ROW_CHUNK: u32 = 128;
/// Threads per block of the row-sum steps but [`RowSumVariant::BlockTree`].
#[doc(hidden)]
pub const ROW_BLOCK: u32 = 256;
/// Threads of [`RowSumVariant::BlockTree`]'s one block per row, as in 000.
#[doc(hidden)]
pub const ROW_TREE_BLOCK: u32 = 512;
/// Threads per block of [`RowSumVariant::Vectorized`]: 8 rows per block. On
/// an 8192² image, 256-thread blocks read 4% faster than 1024-thread ones on
/// an H200 and as fast on an H100 (measured 2026-11-22; an earlier H100 run
/// had favoured 1024).
#[doc(hidden)]
pub const ROW_VECTOR_BLOCK: u32 = 256;
/// 16-byte loads each lane of [`RowSumVariant::Vectorized`] keeps in flight
/// (8 measured no faster on an H100).
#[doc(hidden)]
pub const ROW_UNROLL: usize = 4;
/// The widest rows (bytes) that [`RowSumVariant::Vectorized`] sums with
/// fewer lanes than a warp ([`row_lanes`]).
#[doc(hidden)]
pub const ROW_NARROW_MAX: usize = 8 * ROW_UNROLL * 16;
/// Lanes of [`RowSumVariant::Vectorized`] that share a row `width` bytes
/// wide: a whole warp for rows wider than [`ROW_NARROW_MAX`]; for narrower
/// ones enough lanes that each has about [`ROW_UNROLL`] of the row's
/// 16-byte vectors, a power of two from 1 to 8, so that several rows share
/// a warp instead of leaving most of its lanes idle: rows of up to 64 bytes
/// take a lane each, 32 to a warp. (16 lanes for 1000-byte rows read 5%
/// slower than 32.)
#[doc(hidden)]
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
#[doc(hidden)]
pub const ROW_SPLIT: u32 = 2;
/// 16-byte loads each lane of [`RowSumVariant::SplitRows`] keeps in flight:
/// half of an 8192-byte row (256 vectors) is one round of its warp.
#[doc(hidden)]
pub const ROW_SPLIT_UNROLL: usize = 8;
/// Rows a block of [`RowSumVariant::SplitRows`] sums at once.
#[doc(hidden)]
pub const ROW_SPLIT_ROWS: u32 = ROW_VECTOR_BLOCK / WARP_SIZE / ROW_SPLIT;
/// Blocks of [`RowSumVariant::SplitRows`] resident per SM (its launch
/// bounds): at most 48 registers a thread (46 for sm_90).
#[doc(hidden)]
pub const ROW_SPLIT_BLOCKS_PER_SM: u32 = 5;
/// Fewest bytes of a row part of [`RowSumVariant::SplitRows`] when it
/// splits rows over blocks ([`row_parts`]): one round of its block, 8
/// 16-byte loads for each of 256 threads.
#[doc(hidden)]
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
#[doc(hidden)]
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
#[doc(hidden)]
pub const ROW_SPLIT_SHARED: u32 = 2 * (ROW_VECTOR_BLOCK / WARP_SIZE) * size_of::<u32>() as u32;

// A group of a block's warps per row, each group with a named barrier of
// its own (1 to 15; 0 is the block's).
const _: () = assert!(
    (ROW_VECTOR_BLOCK / WARP_SIZE).is_multiple_of(ROW_SPLIT)
        && ROW_SPLIT_ROWS >= 1
        && ROW_SPLIT_ROWS < 16
);

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
        /// Step 4: one warp per row with 16-byte loads, `ROW_UNROLL` in
        /// flight per lane, bytes summed four at a time by `dp4a`; scalar
        /// head and tail for rows that do not start on a 16-byte boundary; a
        /// grid sized to what the SMs hold at once, warps looping over rows.
        /// Rows of up to `ROW_NARROW_MAX` bytes share a warp,
        /// `row_lanes` lanes each (`row_sums_vectorized_narrow`): 64-byte
        /// rows read 8.6 times faster than with a warp each (H200).
        Vectorized = "vectorized" => RowShape {
            kernel: "row_sums_vectorized",
            block: ROW_VECTOR_BLOCK,
            shared_bytes: 0,
            accumulates: false,
            rows_per_block: ROW_VECTOR_BLOCK / WARP_SIZE,
        },
        /// Step 5: step 4 with `ROW_SPLIT` warps per row, each summing
        /// its part with `ROW_SPLIT_UNROLL` loads in flight per lane, the
        /// parts added through shared memory behind a barrier of just the
        /// row's warps. Each round of a block then reads whole rows at
        /// once, where step 4's warps all began their rows with the same
        /// first 2 KB: the reads in flight spread over every offset of the
        /// rows instead of one band of them (a CUDA C++ probe of step 4
        /// with each row's reads started at a rotated offset gained as
        /// much). 8192² on an H200, same runs: 19.9 → 19.3 µs. Rows too
        /// few to fill the GPU that way take a block each instead, or
        /// several, whose parts meet in a tally per row as the column bands
        /// do (`row_parts`, `row_sums_split_wide`): on an H200 64 rows of
        /// 1 MiB 113.9 → 23.2 µs, 1 000 rows of 64 KiB 20.4 → 19.1. What
        /// `row_sums_into` uses for rows wide
        /// enough to give every lane of both warps a vector
        /// (`split_rows_pays`).
        SplitRows = "split_rows" => RowShape {
            kernel: "row_sums_split",
            block: ROW_VECTOR_BLOCK,
            shared_bytes: ROW_SPLIT_SHARED,
            accumulates: false,
            rows_per_block: ROW_SPLIT_ROWS,
        },
    }
    default = SplitRows;
}

/// Whether [`RowSumVariant::SplitRows`] suits rows of `width` bytes: each
/// of its [`ROW_SPLIT`] warps then has at least one 16-byte vector per
/// lane. Narrower rows would leave lanes idle in both warps; they take
/// [`RowSumVariant::Vectorized`].
#[doc(hidden)]
pub const fn split_rows_pays(width: usize) -> bool {
    width >= (ROW_SPLIT * WARP_SIZE * 16) as usize
}

/// Row step 1.
#[cfg(target_arch = "nvptx64")]
pub(super) unsafe fn atomic_chunks<O: Accumulate>(
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
#[cfg(target_arch = "nvptx64")]
pub(super) unsafe fn block_tree<O: SumOut>(
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
#[cfg(target_arch = "nvptx64")]
pub(super) unsafe fn warp_shuffle<O: SumOut>(
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
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
fn add_byte(sum: u32, byte: u8) -> u32 {
    sum.wrapping_add(byte as u32)
}

/// `sum` plus the 16 bytes of `w`, four at a time by `dp4a`.
#[cfg(target_arch = "nvptx64")]
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
#[cfg(target_arch = "nvptx64")]
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
#[cfg(target_arch = "nvptx64")]
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
#[cfg(target_arch = "nvptx64")]
pub(super) unsafe fn vectorized<O: SumOut>(
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
#[cfg(target_arch = "nvptx64")]
pub(super) unsafe fn vectorized_narrow<O: SumOut>(
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
#[cfg(target_arch = "nvptx64")]
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
#[cfg(target_arch = "nvptx64")]
pub(super) unsafe fn split_rows<O: SumOut>(
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
#[cfg(target_arch = "nvptx64")]
pub(super) unsafe fn split_wide<O: SumOut>(
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

impl RowSumVariant {
    /// The typed entry of this step for output type `T`.
    #[doc(hidden)]
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
