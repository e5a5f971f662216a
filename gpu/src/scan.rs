//! Prefix sums (scans), row scans and stream compaction: the textbook's
//! ladder (PMPP's prefix-sum chapter) from Kogge-Stone in shared memory to
//! the single-pass scan with decoupled look-back (Merrill and Garland,
//! *Single-pass Parallel Prefix Scan with Decoupled Look-back*).
//!
//! Steps 1-4 scan one block's section of the input each; the host makes
//! them scan any length hierarchically (scan the sections, scan their
//! totals with the same kernel, add each total back). Step 5 reduces
//! tiles, scans the tile totals and rescans each tile from its prefix.
//! Steps 6 and 7 are one launch: each block takes its tile from a
//! ticket, so a tile's predecessors have always started, and learns its
//! prefix from them through a status word per tile.

use crate::kernel::KernelType;
use crate::{Op, WARP_SIZE};

/// A type the scans are compiled for: `f32`, `i32`, `u32` and `u64`,
/// each with sum, min and max. Integer sums wrap; `f32` follows IEEE 754
/// (NaN if any element so far is NaN, for every operator).
pub trait Element: KernelType + PartialEq + PartialOrd {
    /// Bytes of one element: 4 or 8.
    const BYTES: usize;
    /// Elements in one 16-byte vector.
    const VEC: usize = 16 / Self::BYTES;
    /// `op`'s identity: `combine(op, identity(op), x)` is `x`, bit for
    /// bit (so for an `f32` sum it is `-0.0`: `-0.0 + x` keeps the sign
    /// of a zero `x`, `0.0 + -0.0` would not).
    fn identity(op: Op) -> Self;
    /// `a` combined with `b` (`a` is the earlier part of the sequence).
    fn combine(op: Op, a: Self, b: Self) -> Self;
    /// The element's bits, zero-extended to 64.
    fn to_bits64(self) -> u64;
    /// The element whose bits are the low `BYTES` bytes of `bits`.
    fn from_bits64(bits: u64) -> Self;
    /// Whether `op` is associative on this type bit for bit, so that any
    /// grouping gives the same result (all but a float sum).
    fn exact(op: Op) -> bool {
        let _ = op;
        true
    }
}

macro_rules! four_byte_element {
    ($t:ty) => {
        impl Element for $t {
            const BYTES: usize = 4;
            #[inline(always)]
            fn identity(op: Op) -> Self {
                match op {
                    Op::Sum => sum_identity::<$t>(),
                    _ => op.identity(),
                }
            }
            #[inline(always)]
            fn combine(op: Op, a: Self, b: Self) -> Self {
                op.combine(a, b)
            }
            #[inline(always)]
            fn to_bits64(self) -> u64 {
                crate::Scalar::to_bits(self) as u64
            }
            #[inline(always)]
            fn from_bits64(bits: u64) -> Self {
                crate::Scalar::from_bits(bits as u32)
            }
            #[inline(always)]
            fn exact(op: Op) -> bool {
                !(op == Op::Sum && <$t as KernelType>::NAME.as_bytes()[0] == b'f')
            }
        }
    };
}

/// The identity of a sum: `-0.0` for `f32` (see [`Element::identity`]),
/// 0 for integers.
#[inline(always)]
fn sum_identity<T: crate::Scalar>() -> T {
    // `-0.0`'s bits for a float; an integer's zero has no sign bit to keep.
    if T::NAME.as_bytes()[0] == b'f' {
        T::from_bits(0x8000_0000)
    } else {
        T::ZERO
    }
}

four_byte_element!(f32);
four_byte_element!(i32);
four_byte_element!(u32);

impl Element for u64 {
    const BYTES: usize = 8;
    #[inline(always)]
    fn identity(op: Op) -> Self {
        match op {
            Op::Sum => 0,
            Op::Min => u64::MAX,
            Op::Max => 0,
        }
    }
    #[inline(always)]
    fn combine(op: Op, a: Self, b: Self) -> Self {
        match op {
            Op::Sum => a.wrapping_add(b),
            Op::Min => Ord::min(a, b),
            Op::Max => Ord::max(a, b),
        }
    }
    #[inline(always)]
    fn to_bits64(self) -> u64 {
        self
    }
    #[inline(always)]
    fn from_bits64(bits: u64) -> Self {
        bits
    }
}

/// A comparison that decides which elements a compaction keeps
/// (`compact_if`): the element is kept when `element <op> value`. For
/// `f32`, IEEE 754: every comparison with NaN is false but `NotEqual`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Compare {
    /// `element < value`.
    Less = 0,
    /// `element <= value`.
    LessOrEqual = 1,
    /// `element > value`.
    Greater = 2,
    /// `element >= value`.
    GreaterOrEqual = 3,
    /// `element == value`.
    Equal = 4,
    /// `element != value`.
    NotEqual = 5,
}

impl Compare {
    /// Every comparison, in the order of their codes.
    pub const ALL: [Compare; 6] = [
        Compare::Less,
        Compare::LessOrEqual,
        Compare::Greater,
        Compare::GreaterOrEqual,
        Compare::Equal,
        Compare::NotEqual,
    ];

    /// Whether `element <op> value` holds.
    #[inline(always)]
    pub fn holds<T: Element>(self, element: T, value: T) -> bool {
        match self {
            Compare::Less => element < value,
            Compare::LessOrEqual => element <= value,
            Compare::Greater => element > value,
            Compare::GreaterOrEqual => element >= value,
            Compare::Equal => element == value,
            Compare::NotEqual => element != value,
        }
    }

    /// The comparison of `code` (its discriminant); `NotEqual` for any
    /// other number.
    #[inline(always)]
    pub fn from_code(code: u32) -> Compare {
        match code {
            0 => Compare::Less,
            1 => Compare::LessOrEqual,
            2 => Compare::Greater,
            3 => Compare::GreaterOrEqual,
            4 => Compare::Equal,
            _ => Compare::NotEqual,
        }
    }
}

/// Threads per block of the block-section steps 1-3 (one or two elements
/// per thread).
#[doc(hidden)]
pub const BLOCK: u32 = 512;

/// Threads per block of the coarsened step 4.
#[doc(hidden)]
pub const COARSE_BLOCK: u32 = 256;

/// Elements each thread of step 4 scans sequentially.
#[doc(hidden)]
pub const COARSE_ITEMS: u32 = 8;

/// Threads per block of the tile steps 5-7 and of compaction.
#[doc(hidden)]
pub const TILE_BLOCK: u32 = 128;

/// 16-byte vectors each thread of a tile step loads: the tile is
/// `TILE_BLOCK * TILE_VECTORS * 16` bytes (16 KiB: 4 096 four-byte or
/// 2 048 eight-byte elements).
#[doc(hidden)]
pub const TILE_VECTORS: usize = 8;

/// 16-byte vectors each thread of step 7's wide tiles loads (24 KiB: 6 144
/// four-byte or 3 072 eight-byte elements), for long scans: fewer tiles
/// to look back over, and on sm_90 one bulk copy a tile (see
/// `WIDE_FROM_BYTES` on the host).
#[doc(hidden)]
pub const WIDE_TILE_VECTORS: usize = 12;

// The tile loops are spelled out for up to 12 vectors (`each_vector!`).
const _: () = assert!(TILE_VECTORS >= 1 && TILE_VECTORS <= 12);
const _: () = assert!(WIDE_TILE_VECTORS >= 1 && WIDE_TILE_VECTORS <= 12);

/// Elements of one tile of `vectors` 16-byte vectors a thread, for
/// elements of `bytes` bytes.
#[doc(hidden)]
pub const fn tile_elements(bytes: usize, vectors: usize) -> usize {
    TILE_BLOCK as usize * vectors * (16 / bytes)
}

/// Words of the single-pass state before the first tile's status: the
/// ticket (tile counter and launch epoch) and padding to 256 bytes.
#[doc(hidden)]
pub const STATUS_START: usize = 32;

/// `u64` words of status each tile needs: the element's bits beside the
/// tile's flag (kind and epoch), one word a 32-bit half: one word for
/// 4-byte elements, two for 8-byte ones.
#[doc(hidden)]
pub const fn status_words(bytes: usize) -> usize {
    bytes / 4
}

/// How the host drives a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Passes {
    /// Steps 1-4: scan sections, scan their totals, add back.
    Hierarchical,
    /// Step 5: reduce tiles, scan the totals, rescan each tile.
    ReduceThenScan,
    /// Steps 6-7: one launch.
    SinglePass,
}

/// How a scan step is launched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScanShape {
    /// The kernel's base name.
    pub kernel: &'static str,
    /// Threads per block.
    pub block: u32,
    /// Elements each thread takes (for the tile steps: 4-byte elements,
    /// 16 KiB tiles).
    pub per_thread: u32,
    /// How the host drives it.
    pub passes: Passes,
    /// Dynamic shared memory per block for 8-byte elements (what the
    /// step's carving takes at most; for step 7, with its 16 KiB tiles:
    /// its wide tiles take `staged_shared(WIDE_TILE_VECTORS)`).
    pub shared_bytes: u32,
    /// Whether it computes min, max, exclusive scans and row scans too
    /// (the fastest step), or inclusive sums only (the lessons).
    pub general: bool,
}

const fn lesson(
    kernel: &'static str,
    block: u32,
    per_thread: u32,
    shared_elements: u32,
) -> ScanShape {
    ScanShape {
        kernel,
        block,
        per_thread,
        passes: Passes::Hierarchical,
        shared_bytes: shared_elements * 8,
        general: false,
    }
}

/// Windows of 32 tile totals the look-back of a float sum keeps in shared
/// memory before it waits for an inclusive prefix instead of looking
/// further back.
#[doc(hidden)]
pub const LOOKBACK_WINDOWS: usize = 8;

/// Shared memory of the tile steps: the ticket's tile and epoch, the warp
/// totals, the tile's prefix, the look-back's windows (for 8-byte
/// elements at most).
const TILE_SHARED: u32 =
    16 + (TILE_BLOCK / WARP_SIZE) * 8 + 16 + (LOOKBACK_WINDOWS as u32) * 32 * 8;

// The stage starts right after the tile steps' carving.
const _: () = assert!(TILE_SHARED.is_multiple_of(16));

/// Shared memory of the tile steps and compaction: the carving above and
/// a 16 KiB stage (the tile steps' input tile; compaction's kept elements,
/// gathered there so that a block's stores are contiguous).
#[doc(hidden)]
pub const STAGED_SHARED: u32 = staged_shared(TILE_VECTORS);

/// The same for tiles of `vectors` vectors a thread.
#[doc(hidden)]
pub const fn staged_shared(vectors: usize) -> u32 {
    TILE_SHARED + TILE_BLOCK * vectors as u32 * 16
}

const fn tile_step(kernel: &'static str, passes: Passes, general: bool) -> ScanShape {
    ScanShape {
        kernel,
        block: TILE_BLOCK,
        per_thread: (TILE_VECTORS * 4) as u32,
        passes,
        shared_bytes: STAGED_SHARED,
        general,
    }
}

ladder! {
    /// The scan ladder, in the textbook's order. Each step's docs say what
    /// it changes from the one before and why that is faster; the table of
    /// docs/scan.md says by how much on a measured GPU.
    pub enum ScanVariant("scan"): ScanShape {
        /// Step 1: Kogge-Stone in shared memory, one element per thread: at
        /// distance 1, 2, 4, … each thread adds the value that far to its
        /// left. log2(block) steps, but n·log2(n) additions (not
        /// work-efficient), and two barriers a step: one so that every read
        /// happens before the writes that would change it.
        KoggeStone = "kogge_stone" => lesson("scan_kogge_stone", BLOCK, 1, BLOCK),
        /// Step 2: the same with two buffers that swap roles each step:
        /// threads read one and write the other, so one barrier a step.
        KoggeStoneDoubleBuffer = "kogge_stone_double_buffer"
            => lesson("scan_kogge_stone_double", BLOCK, 1, 2 * BLOCK),
        /// Step 3: Brent-Kung, two elements per thread: a reduction tree up
        /// and a distribution tree down, 2·n additions (work-efficient),
        /// twice the depth.
        BrentKung = "brent_kung" => lesson("scan_brent_kung", BLOCK, 2, 2 * BLOCK),
        /// Step 4: coarsened three-phase: each thread scans
        /// `COARSE_ITEMS` consecutive elements sequentially (loaded
        /// coalesced through shared memory), the block scans the threads'
        /// totals with Kogge-Stone, and each thread adds its predecessor's
        /// total back. Most additions are sequential and cheap, and a block
        /// covers 8 times the section, so the hierarchy is shallower.
        Coarsened = "coarsened"
            => lesson("scan_coarsened", COARSE_BLOCK, COARSE_ITEMS, COARSE_BLOCK * (COARSE_ITEMS + 1)),
        /// Step 5: reduce-then-scan: a first pass only reduces each tile
        /// (reading the input once, writing nothing but one total a tile),
        /// the totals are scanned (the same way, recursively), and a last
        /// pass rescans each tile starting from its prefix. Three passes
        /// over the data (read, read, write) instead of the hierarchy's
        /// four (read, write, read, write), with the tile kernel of the
        /// steps below: 16-byte loads, warp-shuffle scans.
        ReduceThenScan = "reduce_then_scan"
            => tile_step("scan_tile_given_sum", Passes::ReduceThenScan, false),
        /// Step 6: a chained scan, one pass: each block takes its tile from
        /// a ticket, scans it, waits for its predecessor's inclusive prefix
        /// (a flag and the value in one word), adds it and publishes its
        /// own. Reads and writes each element once, but the tiles' prefixes
        /// pass from block to block one at a time.
        Chained = "chained" => tile_step("scan_chained_sum", Passes::SinglePass, false),
        /// Step 7: decoupled look-back, the fastest: a block publishes its
        /// tile's total as soon as it has it, and looks back over a window
        /// of 32 predecessors at once (a warp, one status word a lane),
        /// combining their totals until it meets an inclusive prefix. No
        /// block waits for its predecessor's look-back. Each 32 bits of a
        /// status's value share a 64-bit word with its flag, read and
        /// written relaxed (no fences); the flag also carries the launch's
        /// epoch, so no launch has to clear the statuses first. Sum, min and max,
        /// inclusive and exclusive, over rows of a matrix too. Long rows (64
        /// MiB and more) on the H100 and H200 take wide tiles, 24 KiB a
        /// block, each copied into shared memory by one bulk copy.
        DecoupledLookback = "decoupled_lookback"
            => tile_step("scan_lookback", Passes::SinglePass, true),
    }
    default = DecoupledLookback;
}

impl ScanVariant {
    /// Elements one block covers (for the tile steps, of `bytes`-byte
    /// elements).
    pub const fn elements_per_block(self, bytes: usize) -> usize {
        match self.shape().passes {
            Passes::Hierarchical => (self.shape().block * self.shape().per_thread) as usize,
            _ => tile_elements(bytes, TILE_VECTORS),
        }
    }
}

/// Status kinds in the low two bits of a tile's flag word; 0 means not yet
/// written in this launch.
#[doc(hidden)]
pub const AGGREGATE: u32 = 1;
/// The tile's inclusive prefix is published.
#[doc(hidden)]
pub const INCLUSIVE: u32 = 2;

/// The epoch bits a flag word carries (the rest are its kind).
#[doc(hidden)]
pub const EPOCH_MASK: u32 = 0x3fff_ffff;

#[cfg(target_arch = "nvptx64")]
mod device {
    //! Kernel bodies.
    use super::*;
    #[cfg(target_feature = "sm_90a")]
    use crate::prim::bulk::{bulk_copy_to_shared, expect_bytes, init_barrier, wait_parity};
    use crate::prim::*;

    // ------------------------------------------------------------------
    // Steps 1-4: one section per block.
    // ------------------------------------------------------------------

    #[inline(always)]
    unsafe fn load_or_identity<T: Element>(x: *const T, i: usize, n: usize) -> T {
        if i < n {
            *x.add(i)
        } else {
            T::identity(Op::Sum)
        }
    }

    /// Writes the block's section total to `sums[block]` (thread `last`).
    #[inline(always)]
    unsafe fn write_total<T: Element>(sums: *mut T, total: T) {
        *sums.add(block_idx_x() as usize) = total;
    }

    /// Step 1. See [`ScanVariant::KoggeStone`].
    ///
    /// # Safety
    /// `x` valid for `n` reads and `out` for `n` writes (may be the same
    /// memory: each block reads its section before writing it); `sums` for
    /// one write per block; blocks of `BLOCK` threads with `BLOCK`
    /// elements of shared memory; the grid covers `n`.
    pub unsafe fn kogge_stone<T: Element>(x: *const T, out: *mut T, sums: *mut T, n: usize) {
        let s = dynamic_shared::<T>();
        let tid = thread_idx_x();
        let i = global_index_x();
        *s.add(tid as usize) = load_or_identity(x, i, n);
        let mut stride = 1;
        while stride < block_dim_x() {
            sync_threads();
            let left = if tid >= stride {
                *s.add((tid - stride) as usize)
            } else {
                T::identity(Op::Sum)
            };
            sync_threads();
            if tid >= stride {
                *s.add(tid as usize) = T::combine(Op::Sum, left, *s.add(tid as usize));
            }
            stride *= 2;
        }
        if i < n {
            *out.add(i) = *s.add(tid as usize);
        }
        if tid == block_dim_x() - 1 {
            write_total(sums, *s.add(tid as usize));
        }
    }

    /// Step 2. See [`ScanVariant::KoggeStoneDoubleBuffer`].
    ///
    /// # Safety
    /// As [`kogge_stone`], with `2 * BLOCK` elements of shared memory.
    pub unsafe fn kogge_stone_double<T: Element>(x: *const T, out: *mut T, sums: *mut T, n: usize) {
        let block = block_dim_x() as usize;
        let (mut from, mut to) = (dynamic_shared::<T>(), dynamic_shared::<T>().add(block));
        let tid = thread_idx_x();
        let i = global_index_x();
        *from.add(tid as usize) = load_or_identity(x, i, n);
        let mut stride = 1;
        while stride < block_dim_x() {
            sync_threads();
            let own = *from.add(tid as usize);
            *to.add(tid as usize) = if tid >= stride {
                T::combine(Op::Sum, *from.add((tid - stride) as usize), own)
            } else {
                own
            };
            core::mem::swap(&mut from, &mut to);
            stride *= 2;
        }
        if i < n {
            *out.add(i) = *from.add(tid as usize);
        }
        if tid as usize == block - 1 {
            write_total(sums, *from.add(tid as usize));
        }
    }

    /// Step 3. See [`ScanVariant::BrentKung`].
    ///
    /// # Safety
    /// As [`kogge_stone`], for sections of `2 * BLOCK` elements and
    /// `2 * BLOCK` elements of shared memory.
    pub unsafe fn brent_kung<T: Element>(x: *const T, out: *mut T, sums: *mut T, n: usize) {
        let s = dynamic_shared::<T>();
        let tid = thread_idx_x() as usize;
        let section = 2 * block_dim_x() as usize;
        let start = block_idx_x() as usize * section;
        *s.add(tid) = load_or_identity(x, start + tid, n);
        *s.add(tid + section / 2) = load_or_identity(x, start + tid + section / 2, n);
        // Up: a reduction tree in place.
        let mut stride = 1;
        while stride < section {
            sync_threads();
            let index = (tid + 1) * 2 * stride - 1;
            if index < section {
                *s.add(index) = T::combine(Op::Sum, *s.add(index - stride), *s.add(index));
            }
            stride *= 2;
        }
        // Down: each partial total reaches the positions it precedes.
        stride = section / 4;
        while stride > 0 {
            sync_threads();
            let index = (tid + 1) * 2 * stride - 1;
            if index + stride < section {
                *s.add(index + stride) = T::combine(Op::Sum, *s.add(index), *s.add(index + stride));
            }
            stride /= 2;
        }
        sync_threads();
        for j in [tid, tid + section / 2] {
            if start + j < n {
                *out.add(start + j) = *s.add(j);
            }
        }
        if tid == 0 {
            write_total(sums, *s.add(section - 1));
        }
    }

    /// Step 4. See [`ScanVariant::Coarsened`].
    ///
    /// # Safety
    /// As [`kogge_stone`], for sections of `COARSE_BLOCK * COARSE_ITEMS`
    /// elements, blocks of `COARSE_BLOCK` threads and
    /// `COARSE_BLOCK * (COARSE_ITEMS + 1)` elements of shared memory.
    pub unsafe fn coarsened<T: Element>(x: *const T, out: *mut T, sums: *mut T, n: usize) {
        const B: usize = COARSE_BLOCK as usize;
        const C: usize = COARSE_ITEMS as usize;
        // One padding slot after every `C` elements: thread `t`'s run
        // starts at `t * (C + 1)`, so the threads of a warp read distinct
        // banks in phase 1.
        let s = dynamic_shared::<T>();
        let totals = s.add(B * (C + 1) - B);
        let padded = |j: usize| j + j / C;
        let tid = thread_idx_x() as usize;
        let start = block_idx_x() as usize * B * C;
        // Coalesced loads: consecutive threads, consecutive elements.
        for k in 0..C {
            let j = k * B + tid;
            *s.add(padded(j)) = load_or_identity(x, start + j, n);
        }
        sync_threads();
        // Phase 1: each thread scans its run sequentially.
        let run = s.add(tid * (C + 1));
        let mut acc = *run;
        for k in 1..C {
            acc = T::combine(Op::Sum, acc, *run.add(k));
            *run.add(k) = acc;
        }
        let _ = totals;
        // Phase 2: Kogge-Stone over the run totals, in registers and one
        // shared slot per thread (the padding slots are free for it).
        let slot = run.add(C);
        *slot = acc;
        let mut total = acc;
        let mut stride = 1;
        while stride < B {
            sync_threads();
            let left = if tid >= stride {
                *s.add((tid - stride) * (C + 1) + C)
            } else {
                T::identity(Op::Sum)
            };
            sync_threads();
            if tid >= stride {
                total = T::combine(Op::Sum, left, total);
                *slot = total;
            }
            stride *= 2;
        }
        sync_threads();
        // Phase 3: add the preceding runs' total to this run.
        if tid > 0 {
            let before = *s.add((tid - 1) * (C + 1) + C);
            for k in 0..C {
                *run.add(k) = T::combine(Op::Sum, before, *run.add(k));
            }
        }
        sync_threads();
        for k in 0..C {
            let j = k * B + tid;
            if start + j < n {
                *out.add(start + j) = *s.add(padded(j));
            }
        }
        if tid == B - 1 {
            write_total(sums, total);
        }
    }

    /// The hierarchy's last pass: `out[i] = prefixes[i / per_block - 1] +
    /// out[i]` for every `i` past the first section.
    ///
    /// # Safety
    /// `out` valid for `n` reads and writes; `prefixes` for
    /// `⌈n / per_block⌉ - 1` reads, not overlapping `out`; the grid covers `n`.
    pub unsafe fn add_back<T: Element>(out: *mut T, prefixes: *const T, n: usize, per_block: u32) {
        let i = global_index_x();
        let section = i / per_block as usize;
        if i < n && section > 0 {
            *out.add(i) = T::combine(Op::Sum, *prefixes.add(section - 1), *out.add(i));
        }
    }

    // ------------------------------------------------------------------
    // Steps 5-7 and compaction: tiles of `TILE_BLOCK` threads, each
    // thread `TILE_VECTORS` 16-byte vectors, warp-striped: warp `w` owns
    // the tile's `w`-th stretch of `32 * TILE_VECTORS` vectors, and in
    // round `r` lane `l` holds its vector `r * 32 + l`, so each round of
    // a warp is 512 consecutive bytes and every load and store is
    // coalesced, with no shared-memory transposition.
    // ------------------------------------------------------------------

    const WARPS: usize = (TILE_BLOCK / WARP_SIZE) as usize;

    /// `$body` for each of a thread's vectors `$r` (`0..TILE_VECTORS`),
    /// spelled out so that the arrays indexed by `$r` stay in registers.
    macro_rules! each_vector {
        ($v:expr, $r:ident => $body:block) => {
            unroll!($r in [0 1 2 3 4 5 6 7 8 9 10 11] => {
                if $r < $v $body
            })
        };
    }

    /// A tile's elements in this thread's registers: `v[r][e]` is element
    /// `e` of its vector of round `r` (`e < T::VEC`).
    type Lanes<T, const V: usize> = [[T; 4]; V];

    /// Element offset in the tile of this thread's round `r`, element 0.
    #[inline(always)]
    fn lane_offset<T: Element, const V: usize>(r: usize) -> usize {
        let warp = (thread_idx_x() / WARP_SIZE) as usize;
        let vector = warp * 32 * V + r * 32 + lane_id() as usize;
        vector * T::VEC
    }

    /// The elements of one 16-byte vector.
    #[inline(always)]
    fn unpack<T: Element>(w: Words4) -> [T; 4] {
        let word = |i: usize| T::from_bits64(w[i] as u64);
        let pair = |i: usize| T::from_bits64(w[i] as u64 | (w[i + 1] as u64) << 32);
        if T::BYTES == 4 {
            [word(0), word(1), word(2), word(3)]
        } else {
            [pair(0), pair(2), pair(0), pair(2)]
        }
    }

    #[inline(always)]
    fn pack<T: Element>(v: [T; 4]) -> Words4 {
        let b = |e: usize| v[e].to_bits64();
        if T::BYTES == 4 {
            [b(0) as u32, b(1) as u32, b(2) as u32, b(3) as u32]
        } else {
            [
                b(0) as u32,
                (b(0) >> 32) as u32,
                b(1) as u32,
                (b(1) >> 32) as u32,
            ]
        }
    }

    /// Loads this thread's elements of the tile at `x` (`len` elements
    /// valid from it; the rest read as `fill`): 16-byte loads when `vector`
    /// (a full tile, `x` 16-byte aligned), else one element at a time.
    #[inline(always)]
    unsafe fn load_tile<T: Element, const V: usize>(
        x: *const T,
        len: usize,
        vector: bool,
        fill: T,
    ) -> Lanes<T, V> {
        let mut v = [[fill; 4]; V];
        if vector {
            for r in 0..V {
                v[r] = unpack(load_nc_v4(x.add(lane_offset::<T, V>(r)).cast::<Words4>()));
            }
        } else {
            each_vector!(V, r => {
                let o = lane_offset::<T, V>(r);
                unroll!(e in [0 1 2 3] => {
                    if e < T::VEC && o + e < len {
                        v[r][e] = *x.add(o + e);
                    }
                });
            });
        }
        v
    }

    /// Copies this thread's vectors of the tile at `x` (`len` elements
    /// valid from it; the rest read as `fill`) to the same places of
    /// `stage`, a tile of shared memory: `cp.async` where `vector` (a full
    /// tile, `x` 16-byte aligned; sm_80 and newer), so no register holds
    /// the data in flight. The thread may read its vectors back at once.
    #[inline(always)]
    unsafe fn stage_tile<T: Element, const V: usize>(
        x: *const T,
        len: usize,
        vector: bool,
        fill: T,
        stage: *mut T,
    ) {
        if vector {
            each_vector!(V, r => {
                let o = lane_offset::<T, V>(r);
                copy_vector(stage.add(o).cast::<Words4>(), x.add(o).cast::<Words4>());
            });
            #[cfg(target_feature = "sm_80")]
            wait_all();
        } else {
            each_vector!(V, r => {
                let o = lane_offset::<T, V>(r);
                unroll!(e in [0 1 2 3] => {
                    if e < T::VEC {
                        *stage.add(o + e) = if o + e < len { *x.add(o + e) } else { fill };
                    }
                });
            });
        }
    }

    /// One 16-byte vector from global to shared memory.
    #[cfg(target_feature = "sm_80")]
    #[inline(always)]
    unsafe fn copy_vector(dst: *mut Words4, src: *const Words4) {
        cp_async_cg(dst, src);
    }

    #[cfg(not(target_feature = "sm_80"))]
    #[inline(always)]
    unsafe fn copy_vector(dst: *mut Words4, src: *const Words4) {
        *dst = load_nc_v4(src);
    }

    /// Copies the `bytes` bytes at `x` to `stage` by one bulk copy that
    /// thread 0 starts, and waits for them (every thread calls it): no
    /// thread issues a load for the tile.
    ///
    /// # Safety
    /// `x` and `stage` 16-byte aligned, `bytes` a multiple of 16; `x ..
    /// x + bytes` readable global memory nothing writes during the launch,
    /// `stage .. stage + bytes` this block's shared memory, untouched until
    /// this returns; `bar` a barrier initialised for one arrival, used
    /// here for the first time.
    #[cfg(target_feature = "sm_90a")]
    #[inline(always)]
    unsafe fn bulk_tile(x: *const u8, bytes: u32, stage: *mut u8, bar: u32) {
        if thread_idx_x() == 0 {
            expect_bytes(bar, bytes);
            bulk_copy_to_shared(shared_address(stage), x, bytes, bar);
        }
        wait_parity(bar, 0);
    }

    #[cfg(not(target_feature = "sm_90a"))]
    #[inline(always)]
    unsafe fn bulk_tile(_: *const u8, _: u32, _: *mut u8, _: u32) {
        // `single_pass` asks for bulk copies in sm_90a code only.
        trap()
    }

    /// Makes the 8 bytes at `bar` a barrier for [`bulk_tile`]. One thread
    /// calls it; a block barrier follows before any thread waits on it.
    ///
    /// # Safety
    /// `bar` 8-byte aligned shared memory of this block that nothing else
    /// uses.
    #[cfg(target_feature = "sm_90a")]
    #[inline(always)]
    unsafe fn init_bulk(bar: u32) {
        init_barrier(bar, 1);
    }

    #[cfg(not(target_feature = "sm_90a"))]
    #[inline(always)]
    unsafe fn init_bulk(_: u32) {
        trap()
    }

    /// This thread's vector `r` of the staged tile.
    #[inline(always)]
    unsafe fn read_vector<T: Element, const V: usize>(stage: *const T, r: usize) -> [T; 4] {
        unpack(*stage.add(lane_offset::<T, V>(r)).cast::<Words4>())
    }

    /// Stores this thread's vector `r` of the tile at `out` (`len`
    /// elements valid from it): one 16-byte store where `vector`, else
    /// element by element.
    #[inline(always)]
    unsafe fn store_vector<T: Element, const V: usize>(
        out: *mut T,
        len: usize,
        vector: bool,
        r: usize,
        w: [T; 4],
    ) {
        let o = lane_offset::<T, V>(r);
        if vector {
            store_v4(out.add(o).cast::<Words4>(), pack(w));
        } else {
            unroll!(e in [0 1 2 3] => {
                if e < T::VEC && o + e < len {
                    *out.add(o + e) = w[e];
                }
            });
        }
    }

    /// A shuffle of any element: one 32-bit shuffle for 4-byte elements,
    /// two for 8-byte ones.
    macro_rules! element_shuffle {
        ($(#[$m:meta])* $name:ident = $word:ident) => {
            $(#[$m])*
            #[inline(always)]
            fn $name<T: Element>(v: T, operand: u32) -> T {
                let b = v.to_bits64();
                let low = $word(b as u32, operand) as u64;
                if T::BYTES == 4 {
                    T::from_bits64(low)
                } else {
                    T::from_bits64(low | ($word((b >> 32) as u32, operand) as u64) << 32)
                }
            }
        };
    }

    element_shuffle!(/// The value of lane `lane - delta`.
        shfl_up_elem = shfl_up);
    element_shuffle!(/// The value of lane `lane ^ mask`.
        shfl_xor_elem = shfl_xor);
    element_shuffle!(/// The value of lane `src`.
        shfl_idx_elem = shfl_idx);

    /// What a thread knows of its tile after [`scan_in_tile`]: for round
    /// `r`, the combination of everything in the tile before its vector
    /// (`before[r]`); and the tile's total.
    struct InTile<T, const V: usize> {
        before: [T; V],
        total: T,
    }

    /// Scans the tile's per-thread vectors: lane totals, a warp scan per
    /// round (Kogge-Stone over shuffles), the rounds in order, then the
    /// warps' totals through shared memory (`warp_totals`, one slot a warp)
    /// and one barrier. Every combination is in a fixed order, so a float
    /// sum gives the same bits on every run.
    #[inline(always)]
    unsafe fn scan_in_tile<T: Element, const V: usize>(
        op: Op,
        v: &Lanes<T, V>,
        warp_totals: *mut T,
    ) -> InTile<T, V> {
        let lane = lane_id();
        let id = T::identity(op);
        let mut lane_before = [id; V];
        let mut round_total = [id; V];
        each_vector!(V, r => {
            let mut t = v[r][0];
            unroll!(e in [1 2 3] => {
                if e < T::VEC {
                    t = T::combine(op, t, v[r][e]);
                }
            });
            let mut s = t;
            unroll!(i in [0 1 2 3 4] => {
                let d = 1u32 << i;
                let u = shfl_up_elem(s, d);
                if lane >= d {
                    s = T::combine(op, u, s);
                }
            });
            let up = shfl_up_elem(s, 1);
            lane_before[r] = if lane == 0 { id } else { up };
            round_total[r] = shfl_idx_elem(s, 31);
        });
        // The rounds before each round, and the warp's total.
        let mut rounds_before = [id; V];
        let mut warp_total = round_total[0];
        for r in 1..V {
            rounds_before[r] = warp_total;
            warp_total = T::combine(op, warp_total, round_total[r]);
        }
        let warp = (thread_idx_x() / WARP_SIZE) as usize;
        if lane == 0 {
            *warp_totals.add(warp) = warp_total;
        }
        sync_threads();
        let mut warps_before = id;
        let mut total = *warp_totals;
        for w in 1..WARPS {
            if w == warp {
                warps_before = total;
            }
            total = T::combine(op, total, *warp_totals.add(w));
        }
        let mut before = [id; V];
        for r in 0..V {
            before[r] = T::combine(
                op,
                T::combine(op, warps_before, rounds_before[r]),
                lane_before[r],
            );
        }
        InTile { before, total }
    }

    /// Replaces each element of one vector by its scan: `run` (what
    /// precedes the vector) combined with what precedes it in the vector,
    /// and with itself when `inclusive`.
    #[inline(always)]
    #[allow(
        unused_assignments,
        reason = "the unrolled loop's last step is not read"
    )]
    fn finish_vector<T: Element>(op: Op, w: &mut [T; 4], mut run: T, inclusive: bool) {
        unroll!(e in [0 1 2 3] => {
            if e < T::VEC {
                let x = w[e];
                if inclusive {
                    run = T::combine(op, run, x);
                    w[e] = run;
                } else {
                    w[e] = run;
                    run = T::combine(op, run, x);
                }
            }
        });
    }

    // ---- Tile statuses ------------------------------------------------

    /// A tile's status, as [`poll`] finds it: its kind (0 not yet written
    /// in this launch, [`AGGREGATE`] or [`INCLUSIVE`]) and value.
    #[derive(Clone, Copy)]
    struct Status<T> {
        kind: u32,
        value: T,
    }

    #[inline(always)]
    fn flag(kind: u32, epoch: u32) -> u32 {
        (epoch & EPOCH_MASK) << 2 | kind
    }

    /// Publishes tile `tile`'s status. One thread calls it.
    ///
    /// Each 32-bit half of the value travels in a word of its own beside
    /// the flag (kind and epoch). Nothing else is published with a status,
    /// so relaxed stores suffice (no fence): a reader takes a status only
    /// where every word of it carries this launch's epoch and one kind, and
    /// a tile writes each kind once a launch, so such words were written
    /// together.
    ///
    /// # Safety
    /// `state` is the launch's state (see [`single_pass`]) with room for
    /// `tile`'s status.
    #[inline(always)]
    unsafe fn publish<T: Element>(state: *mut u64, tile: usize, kind: u32, epoch: u32, value: T) {
        let f = flag(kind, epoch) as u64;
        let bits = value.to_bits64();
        if T::BYTES == 4 {
            store_relaxed_u64(state.add(STATUS_START + tile), bits << 32 | f);
        } else {
            store_relaxed_v2_u64(
                state.add(STATUS_START + 2 * tile),
                [bits << 32 | f, bits & 0xffff_ffff_0000_0000 | f],
            );
        }
    }

    /// Reads tile `tile`'s status as published in this launch (kind 0
    /// where it is not, or not yet wholly).
    ///
    /// # Safety
    /// As [`publish`].
    #[inline(always)]
    unsafe fn poll<T: Element>(state: *mut u64, tile: usize, epoch: u32) -> Status<T> {
        let (word, value) = if T::BYTES == 4 {
            let w = load_relaxed_u64(state.add(STATUS_START + tile));
            (w as u32, T::from_bits64(w >> 32))
        } else {
            let [low, high] = load_relaxed_v2_u64(state.add(STATUS_START + 2 * tile));
            // Both halves from one publication, or none.
            let word = if low as u32 == high as u32 {
                low as u32
            } else {
                0
            };
            (
                word,
                T::from_bits64(low >> 32 | high & 0xffff_ffff_0000_0000),
            )
        };
        if word >> 2 == epoch & EPOCH_MASK && word & 3 != 0 {
            Status {
                kind: word & 3,
                value,
            }
        } else {
            Status { kind: 0, value }
        }
    }

    /// How a tile learns its prefix.
    #[derive(Clone, Copy, PartialEq, Eq)]
    pub enum Prefix {
        /// From its predecessors' statuses, looking back over a window.
        Lookback,
        /// From its predecessor's inclusive prefix, waited for.
        Chained,
        /// From `sums[tile]` (the scanned tile totals of step 5), or the
        /// row's start where `sums` is null (a scan of one tile).
        Given,
        /// None: the pass writes the tile's total to `sums[tile]` and
        /// nothing else (step 5's first pass).
        Reduce,
    }

    /// Where a launch's tiles meet: the single-pass state, the launch's
    /// epoch, and the look-back's windows, shared memory for
    /// `LOOKBACK_WINDOWS * 32` elements.
    #[derive(Clone, Copy)]
    struct Statuses<T> {
        state: *mut u64,
        epoch: u32,
        windows: *mut T,
    }

    /// The prefix of tile `tile` (global index; `first` is the first tile
    /// of its row), found by looking back, and its inclusive prefix
    /// published. Called by one whole warp; returns the prefix on every
    /// lane.
    ///
    /// Where `op` is exact on `T` (integers; min and max) the window's
    /// totals are combined by a warp tree, in any order. A float sum is
    /// not associative, so there the prefix is always the left fold
    /// `((start ⊕ a0) ⊕ a1) ⊕ …` of the predecessors' totals: the warp
    /// keeps each window it passes in shared memory, and lane 0 folds
    /// forward from the newest inclusive prefix it met. Every inclusive
    /// prefix was made the same way, so which one a tile meets does not
    /// change a bit of its result: a float sum is the same on every run.
    /// Past `LOOKBACK_WINDOWS` windows it waits at the oldest until an
    /// inclusive prefix appears there (one always does: the tiles before
    /// are running and wait only on tiles before them).
    ///
    /// # Safety
    /// `state` holds statuses for tiles `first..=tile`, written only by
    /// this launch's tiles of epoch `epoch`; every tile before `tile` of
    /// its row belongs to a block that has started (tickets are taken in
    /// order).
    #[inline(always)]
    unsafe fn look_back<T: Element>(
        op: Op,
        mode: Prefix,
        statuses: Statuses<T>,
        tile: usize,
        first: usize,
        start: T,
        total: T,
    ) -> T {
        let Statuses {
            state,
            epoch,
            windows,
        } = statuses;
        let lane = lane_id();
        if tile == first {
            if lane == 0 {
                publish(state, tile, INCLUSIVE, epoch, T::combine(op, start, total));
            }
            return start;
        }
        if mode == Prefix::Chained {
            let mut prefix = start;
            if lane == 0 {
                loop {
                    let s = poll::<T>(state, tile - 1, epoch);
                    if s.kind == INCLUSIVE {
                        prefix = s.value;
                        break;
                    }
                }
                publish(state, tile, INCLUSIVE, epoch, T::combine(op, prefix, total));
            }
            return shfl_idx_elem(prefix, 0);
        }
        if lane == 0 {
            publish(state, tile, AGGREGATE, epoch, total);
        }
        let id = T::identity(op);
        let mut end = tile;
        let prefix = if T::exact(op) {
            // Back, window by window; every window's totals combined by a
            // tree, the windows from the newest to the oldest.
            let mut after = id;
            loop {
                let status = window_status::<T>(state, end, first, epoch, start);
                let inclusive = ballot(status.kind == INCLUSIVE);
                if inclusive != 0 {
                    let newest = 31 - inclusive.leading_zeros();
                    let v = if lane >= newest { status.value } else { id };
                    break T::combine(op, warp_combine(op, v), after);
                }
                after = T::combine(op, warp_combine(op, status.value), after);
                end -= 32;
            }
        } else {
            let mut stored = 0;
            let (status, inclusive) = loop {
                let mut status = window_status::<T>(state, end, first, epoch, start);
                let mut inclusive = ballot(status.kind == INCLUSIVE);
                if inclusive == 0 && stored == LOOKBACK_WINDOWS - 1 {
                    // No room further back: wait here for an inclusive
                    // prefix (totals already seen stay as they are).
                    while inclusive == 0 {
                        let again = window_status::<T>(state, end, first, epoch, start);
                        if again.kind == INCLUSIVE {
                            status = again;
                        }
                        inclusive = ballot(again.kind == INCLUSIVE);
                    }
                }
                if inclusive != 0 {
                    break (status, inclusive);
                }
                *windows.add(stored * 32 + lane as usize) = status.value;
                stored += 1;
                end -= 32;
            };
            *windows.add(stored * 32 + lane as usize) = status.value;
            sync_warp(FULL_MASK);
            let mut prefix = id;
            if lane == 0 {
                let newest = 31 - inclusive.leading_zeros();
                let row = windows.add(stored * 32);
                prefix = *row.add(newest as usize);
                for i in 0..32 {
                    let v = *row.add(i);
                    if i as u32 > newest {
                        prefix = T::combine(op, prefix, v);
                    }
                }
                let mut w = stored;
                while w > 0 {
                    w -= 1;
                    let row = windows.add(w * 32);
                    for i in 0..32 {
                        prefix = T::combine(op, prefix, *row.add(i));
                    }
                }
            }
            sync_warp(FULL_MASK);
            shfl_idx_elem(prefix, 0)
        };
        if lane == 0 {
            publish(state, tile, INCLUSIVE, epoch, T::combine(op, prefix, total));
        }
        prefix
    }

    /// `v` combined over the warp by a butterfly; every lane gets it.
    #[inline(always)]
    fn warp_combine<T: Element>(op: Op, mut v: T) -> T {
        unroll!(i in [0 1 2 3 4] => {
            v = T::combine(op, v, shfl_xor_elem(v, 1 << i));
        });
        v
    }

    /// Lane `l`'s status of the window of tiles `end - 32 .. end`: tile
    /// `end - 32 + l`, waited for until this launch wrote it; a tile before
    /// `first` reads as an inclusive `start`.
    #[inline(always)]
    unsafe fn window_status<T: Element>(
        state: *mut u64,
        end: usize,
        first: usize,
        epoch: u32,
        start: T,
    ) -> Status<T> {
        let lane = lane_id() as usize;
        if end < first + 32 - lane {
            return Status {
                kind: INCLUSIVE,
                value: start,
            };
        }
        let q = end - 32 + lane;
        loop {
            let s = poll::<T>(state, q, epoch);
            if s.kind != 0 {
                return s;
            }
        }
    }

    /// The tile a block works on and the launch's epoch, from the ticket in
    /// `state[0]` (low 32 bits: tiles taken; high: the epoch). Tickets go
    /// out in order, so a block's predecessors have all started. The block
    /// taking the last ticket of the launch sets the count back to 0 and
    /// advances the epoch, for the next launch. Every thread calls it.
    ///
    /// # Safety
    /// `state[0]` is touched only by these tickets, with count 0 when the
    /// launch starts; `slot` is two free words of shared memory.
    #[inline(always)]
    unsafe fn take_ticket(state: *mut u64, slot: *mut u32) -> (usize, u32) {
        if thread_idx_x() == 0 {
            let old = atomic_add_u64(state, 1);
            let tile = old as u32;
            if tile == grid_dim_x() - 1 {
                atomic_add_u64(state, (1u64 << 32) - grid_dim_x() as u64);
            }
            *slot = tile;
            *slot.add(1) = (old >> 32) as u32;
        }
        sync_threads();
        (*slot as usize, *slot.add(1))
    }

    /// Asks L2 for the `bytes` bytes at `p`, a 128-byte line a thread.
    /// Every thread calls it.
    ///
    /// # Safety
    /// `p .. p + bytes` lies in one allocation of global memory.
    #[inline(always)]
    unsafe fn prefetch_span(p: *const u8, bytes: usize) {
        let mut at = thread_idx_x() as usize * 128;
        while at < bytes {
            prefetch_l2_line(p.add(at));
            at += TILE_BLOCK as usize * 128;
        }
    }

    /// Shared memory of the tile steps, carved once; `rest` is what
    /// follows (`TILE_SHARED` bytes from the start, 16-byte aligned).
    struct Carved<T> {
        ticket: *mut u32,
        warp_totals: *mut T,
        prefix: *mut T,
        windows: *mut T,
        rest: *mut u8,
    }

    #[inline(always)]
    fn carve<C: Element>() -> Carved<C> {
        let mut carve = SharedCarver::new();
        let ticket = carve.take::<u32>(4);
        let warp_totals = carve.take::<C>(WARPS);
        let prefix = carve.take::<C>(2);
        let windows = carve.take::<C>(LOOKBACK_WINDOWS * 32);
        Carved {
            ticket,
            warp_totals,
            prefix,
            windows,
            rest: dynamic_shared::<u8>().wrapping_add(TILE_SHARED as usize),
        }
    }

    /// The arguments of the tile steps, as one struct.
    pub struct Tiles<T> {
        pub x: *const T,
        pub out: *mut T,
        pub width: usize,
        pub x_pitch: usize,
        pub out_pitch: usize,
        pub init: u64,
        pub exclusive: u32,
        pub state: *mut u64,
        pub sums: *mut T,
    }

    /// Steps 5-7: one tile per block of a scan of rows of `width`
    /// elements (row `r` at `x + r * x_pitch`, its scan at
    /// `out + r * out_pitch`; the grid says how many rows). Each row's scan starts from `init` (its bits)
    /// when `exclusive` is set, from nothing otherwise.
    ///
    /// # Safety
    /// `x` valid for reading and `out` for writing every row, not
    /// overlapping each other (and not written by anyone else during the
    /// launch); the grid is `rows * ⌈width / tile⌉` blocks of `TILE_BLOCK`
    /// threads with `staged_shared(V)` bytes of shared memory (tiles of `V`
    /// vectors a thread; `V` is `WIDE_TILE_VECTORS` for `Lookback` only,
    /// else `TILE_VECTORS`; wide tiles are copied in bulk on sm_90a, so
    /// there `x` is not written during the launch: no scan in place).
    /// `Lookback` and
    /// `Chained`: `state` is this stream's single-pass state, `STATUS_START`
    /// words plus `status_words` per tile of the grid, written by nothing
    /// but these kernels, its ticket's count 0. `Reduce` and `Given`:
    /// `sums` valid for one element per tile (written by `Reduce`, read by
    /// `Given`; null for `Given` of one tile); `state` unused.
    #[inline(always)]
    pub unsafe fn single_pass<T: Element, const V: usize>(op: Op, mode: Prefix, a: Tiles<T>) {
        let shared = carve::<T>();
        let tile_len = tile_elements(T::BYTES, V);
        // Wide tiles arrive by one bulk copy in sm_90a code (the copy engine),
        // completed on a transaction barrier in the ticket's spare words.
        let bulk = cfg!(target_feature = "sm_90a") && V == WIDE_TILE_VECTORS;
        let bar = shared_address(shared.ticket.add(2));
        let per_row = a.width.div_ceil(tile_len);
        // A tile's row, first column and length.
        let place = |tile: usize| {
            let (row, column) = (tile / per_row, (tile % per_row) * tile_len);
            (row, column, Ord::min(tile_len, a.width - column))
        };
        let ordered = matches!(mode, Prefix::Lookback | Prefix::Chained);
        let (tile, epoch) = if ordered {
            // The ticket mostly hands a block its own index: L2 fetches
            // that tile while the ticket is on its way (a hint; where the
            // guess is wrong, another block reads that tile soon).
            let (row, column, len) = place(block_idx_x() as usize);
            prefetch_span(a.x.add(row * a.x_pitch + column).cast(), len * T::BYTES);
            if bulk && thread_idx_x() == 0 {
                // 8 bytes of this block's shared memory that nothing else
                // uses; the ticket's barrier follows.
                init_bulk(bar);
            }
            take_ticket(a.state, shared.ticket)
        } else {
            (block_idx_x() as usize, 0)
        };
        let (row, column, len) = place(tile);
        let x = a.x.add(row * a.x_pitch + column);
        let out = a.out.add(row * a.out_pitch + column);
        let id = T::identity(op);
        let full = len == tile_len;
        // The tile waits in shared memory, not in registers (each thread
        // writes and reads only its own vectors there, so no barrier):
        // the data do not live across the scan and the look-back, which
        // leaves room for more blocks per SM (`LAUNCH_BOUNDS`).
        let stage = shared.rest.cast::<T>();
        let aligned = full && (x as usize).is_multiple_of(16);
        if bulk && aligned {
            bulk_tile(x.cast(), (tile_len * T::BYTES) as u32, stage.cast(), bar);
        } else {
            stage_tile::<T, V>(x, len, aligned, id, stage);
        }
        let mut totals = [[id; 4]; V];
        each_vector!(V, r => {
            let w = read_vector::<T, V>(stage, r);
            let mut t = w[0];
            unroll!(e in [1 2 3] => {
                if e < T::VEC {
                    t = T::combine(op, t, w[e]);
                }
            });
            totals[r][0] = t;
        });
        let t = scan_in_tile(op, &totals, shared.warp_totals);
        let inclusive = a.exclusive == 0;
        let start = if inclusive {
            id
        } else {
            T::from_bits64(a.init)
        };
        let prefix = match mode {
            Prefix::Reduce => {
                if thread_idx_x() == 0 {
                    *a.sums.add(tile) = t.total;
                }
                return;
            }
            Prefix::Given if a.sums.is_null() => start,
            Prefix::Given => *a.sums.add(tile),
            Prefix::Lookback | Prefix::Chained => {
                if thread_idx_x() < WARP_SIZE {
                    let first = tile - tile % per_row;
                    let statuses = Statuses {
                        state: a.state,
                        epoch,
                        windows: shared.windows,
                    };
                    let p = look_back(op, mode, statuses, tile, first, start, t.total);
                    if thread_idx_x() == 0 {
                        *shared.prefix = p;
                    }
                }
                sync_threads();
                *shared.prefix
            }
        };
        let vector = full && (out as usize).is_multiple_of(16);
        each_vector!(V, r => {
            let mut w = read_vector::<T, V>(stage, r);
            finish_vector(op, &mut w, T::combine(op, prefix, t.before[r]), inclusive);
            store_vector::<T, V>(out, len, vector, r, w);
        });
    }

    macro_rules! tile_entries {
        ($($(#[$m:meta])* $name:ident = $op:expr, $mode:expr;)*) => {$(
            $(#[$m])*
            ///
            /// # Safety
            /// As [`single_pass`].
            pub unsafe fn $name<T: Element>(a: Tiles<T>) {
                single_pass::<T, TILE_VECTORS>($op, $mode, a)
            }
        )*};
    }

    macro_rules! lookback_entries {
        ($($(#[$m:meta])* $name:ident = $op:expr;)*) => {$(
            $(#[$m])*
            /// `WIDE`: tiles of `WIDE_TILE_VECTORS` vectors a thread.
            ///
            /// # Safety
            /// As [`single_pass`].
            pub unsafe fn $name<T: Element, const WIDE: u32>(a: Tiles<T>) {
                if WIDE != 0 {
                    single_pass::<T, WIDE_TILE_VECTORS>($op, Prefix::Lookback, a)
                } else {
                    single_pass::<T, TILE_VECTORS>($op, Prefix::Lookback, a)
                }
            }
        )*};
    }

    lookback_entries! {
        /// Step 7, sums.
        lookback_sum = Op::Sum;
        /// Step 7, minima.
        lookback_min = Op::Min;
        /// Step 7, maxima.
        lookback_max = Op::Max;
    }

    tile_entries! {
        /// Step 6.
        chained_sum = Op::Sum, Prefix::Chained;
        /// Step 5's first pass.
        tile_reduce_sum = Op::Sum, Prefix::Reduce;
        /// Step 5's last pass.
        tile_given_sum = Op::Sum, Prefix::Given;
    }

    /// The arguments of compaction, as one struct.
    pub struct Compaction<T> {
        pub x: *const T,
        pub flags: *const u8,
        pub n: usize,
        pub keep: u32,
        pub value: u64,
        pub out: *mut T,
        pub out_len: usize,
        pub count: *mut u64,
        pub state: *mut u64,
    }

    /// Stream compaction, one tile per block: keeps the elements whose flag
    /// is not 0 (`flagged`) or for which `Compare::from_code(keep)` holds
    /// against `value`'s bits, in order, into `out` (those past `out_len`
    /// are counted, not written), and writes how many were kept to
    /// `count`. Positions come from a decoupled look-back over the tiles'
    /// counts, of type `C` (`u32` while the input has fewer than 2^32
    /// elements, `u64` past).
    ///
    /// # Safety
    /// `x` valid for `n` reads (and `flags` when `flagged`), `out` for
    /// `out_len` writes and `count` for one, none overlapping the inputs;
    /// the grid is `⌈n / tile⌉` blocks (at least one, `n > 0`) of
    /// `TILE_BLOCK` threads with `STAGED_SHARED` bytes of shared memory;
    /// `state` as for [`single_pass`] with statuses of `C`.
    #[inline(always)]
    #[allow(
        unused_assignments,
        reason = "the unrolled loop's last step is not read"
    )]
    unsafe fn compact<T: Element, C: Element>(flagged: bool, a: Compaction<T>) {
        const V: usize = TILE_VECTORS;
        let shared = carve::<C>();
        // The counts' warp totals are `u32`s, in slots of `C`.
        let warp_totals = shared.warp_totals.cast::<u32>();
        let tile_len = tile_elements(T::BYTES, V);
        // As `single_pass`: the guessed tile fetched during the ticket.
        let guess = block_idx_x() as usize * tile_len;
        let guess_len = Ord::min(tile_len, a.n - guess);
        prefetch_span(a.x.add(guess).cast(), guess_len * T::BYTES);
        if flagged {
            prefetch_span(a.flags.add(guess), guess_len);
        }
        let (tile, epoch) = take_ticket(a.state, shared.ticket);
        let column = tile * tile_len;
        let len = Ord::min(tile_len, a.n - column);
        let x = a.x.add(column);
        let flags = a.flags.add(column);
        let full = len == tile_len;
        let v = load_tile::<T, V>(
            x,
            len,
            full && (x as usize).is_multiple_of(16),
            T::from_bits64(0),
        );
        // Bit `4r + e` set to keep element `e` of vector `r`. A vector's
        // flags are `T::VEC` consecutive bytes, read as one word where
        // aligned.
        let whole_flags = flagged && full && (flags as usize).is_multiple_of(T::VEC);
        let bits = if whole_flags {
            let mut bits = 0u32;
            each_vector!(V, r => {
                let o = lane_offset::<T, V>(r);
                let word = if T::VEC == 4 {
                    *flags.add(o).cast::<u32>()
                } else {
                    *flags.add(o).cast::<u16>() as u32
                };
                unroll!(e in [0 1 2 3] => {
                    if e < T::VEC {
                        // `% 32`: as in `kept_bits`.
                        bits |= ((word >> (8 * e) & 0xff != 0) as u32) << ((4 * r + e) % 32);
                    }
                });
            });
            bits
        } else if flagged {
            let mut bits = 0u32;
            each_vector!(V, r => {
                let o = lane_offset::<T, V>(r);
                unroll!(e in [0 1 2 3] => {
                    if e < T::VEC && o + e < len && *flags.add(o + e) != 0 {
                        bits |= 1 << (4 * r + e);
                    }
                });
            });
            bits
        } else {
            let value = T::from_bits64(a.value);
            // One loop per comparison, chosen once a tile: chosen per
            // element, the comparison compiles to an indirect branch
            // each (32 a thread) ahead of the tile's count, which the
            // tiles after it wait for.
            macro_rules! kept_by {
                ($($c:ident)*) => {
                    match Compare::from_code(a.keep) {
                        $(Compare::$c => kept_bits::<T, V>(&v, len, |x| Compare::$c.holds(x, value)),)*
                    }
                };
            }
            kept_by!(Less LessOrEqual Greater GreaterOrEqual Equal NotEqual)
        };
        // Each vector's count of kept elements, scanned over the tile.
        let mut counts = [[0u32; 4]; TILE_VECTORS];
        each_vector!(V, r => {
            counts[r][0] = (bits >> (4 * r) & 0xf).count_ones();
        });
        let t = scan_in_tile(Op::Sum, &counts, warp_totals);
        // The kept elements, in order, at the start of the stage.
        let stage = shared.rest.cast::<T>();
        each_vector!(V, r => {
            let mut position = t.before[r] as usize;
            unroll!(e in [0 1 2 3] => {
                if e < T::VEC && bits >> (4 * r + e) & 1 != 0 {
                    *stage.add(position) = v[r][e];
                    position += 1;
                }
            });
        });
        if thread_idx_x() < WARP_SIZE {
            let total = C::from_bits64(t.total as u64);
            let none = C::identity(Op::Sum);
            let statuses = Statuses {
                state: a.state,
                epoch,
                windows: shared.windows,
            };
            let p = look_back(Op::Sum, Prefix::Lookback, statuses, tile, 0, none, total);
            if thread_idx_x() == 0 {
                *shared.prefix = p;
                if tile == grid_dim_x() as usize - 1 {
                    *a.count = C::combine(Op::Sum, p, total).to_bits64();
                }
            }
        }
        sync_threads();
        let base = (*shared.prefix).to_bits64() as usize;
        // Consecutive threads store consecutive elements.
        let kept = Ord::min(t.total as usize, a.out_len.saturating_sub(base));
        let mut i = thread_idx_x() as usize;
        while i < kept {
            *a.out.add(base + i) = *stage.add(i);
            i += TILE_BLOCK as usize;
        }
    }

    /// Bit `4r + e` set where element `e` of this thread's vector `r`
    /// lies in the tile's first `len` elements and `keep` holds for it,
    /// with no branch: the test and the bound are combined as values.
    #[inline(always)]
    fn kept_bits<T: Element, const V: usize>(
        v: &Lanes<T, V>,
        len: usize,
        keep: impl Fn(T) -> bool,
    ) -> u32 {
        const { assert!(4 * V <= 32) };
        let mut bits = 0u32;
        each_vector!(V, r => {
            // Below the tile's length (a `u32`): no 64-bit compare.
            let o = lane_offset::<T, V>(r) as u32;
            unroll!(e in [0 1 2 3] => {
                if e < T::VEC {
                    let inside = o + (e as u32) < len as u32;
                    // `% 32`: the unrolled rounds past `V` never run.
                    bits |= ((keep(v[r][e]) & inside) as u32) << ((4 * r + e) % 32);
                }
            });
        });
        bits
    }

    /// Compaction by flags (`WIDE`: counts in `u64`, for 2^32 elements or
    /// more). See [`compact`].
    ///
    /// # Safety
    /// As [`compact`].
    pub unsafe fn compact_flagged<T: Element, const WIDE: u32>(a: Compaction<T>) {
        if WIDE == 0 {
            compact::<T, u32>(true, a)
        } else {
            compact::<T, u64>(true, a)
        }
    }

    /// Compaction by a comparison. See [`compact`].
    ///
    /// # Safety
    /// As [`compact`].
    pub unsafe fn compact_if<T: Element, const WIDE: u32>(a: Compaction<T>) {
        if WIDE == 0 {
            compact::<T, u32>(false, a)
        } else {
            compact::<T, u64>(false, a)
        }
    }
}

/// This family's entries compiled for a number of resident blocks per SM
/// (gathered in [`crate::LAUNCH_BOUNDS`], whose doc says how they are used).
/// Step 7 stages its tile in shared memory; measured 2026-11-27
/// (docs/notes/scan.md):
///
/// - exact operators on 4-byte elements, held to 48 registers, ten blocks
///   of 128 threads per SM: `u32` sums of 2^28 in 765 µs against 824 for
///   the tile in registers at eight (H100);
/// - `f32` sums, held to 64 registers, eight blocks: 811 against 852 for
///   the tile in registers at eight (H100); nine blocks (20 bytes of
///   spills) 862;
/// - `u64`, held to 64 registers, eight blocks: 1 520 against about 1 580
///   for the tile in registers at seven (H100), 1 233 against 1 289
///   (H200); nine blocks 1 277 and ten (64 bytes of spills) 1 499 (H200);
/// - compaction: 63 registers, eight blocks; held to 56, nine: by
///   comparison at 2^28 695 against 712 µs (ten blocks, 48 registers,
///   752; H100);
/// - step 7's wide tiles (`WIDE = 1`, 24 KiB), eight blocks (shared memory
///   holds no more), 64 registers: H200, 2^28, against the 16 KiB tiles
///   of the list above in the same kind of run, `f32` sums 599 against
///   665 µs, `u32` minima 602 against 638, `u64` sums 1 161 against
///   1 239; `u32` sums, 16 bytes of spills at 64 registers, 621 against
///   621, so they are held to seven blocks (72 registers, no spills).
pub const LAUNCH_BOUNDS: &[crate::kernel::LaunchBounds] = &[
    tile_bounds("scan_lookback_sum_0_f32", FOLD_BLOCKS),
    tile_bounds("scan_lookback_sum_1_f32", WIDE_TILE_BLOCKS),
    tile_bounds("scan_lookback_sum_0_i32", EXACT_BLOCKS),
    tile_bounds("scan_lookback_sum_1_i32", WIDE_SUM_BLOCKS),
    tile_bounds("scan_lookback_sum_0_u32", EXACT_BLOCKS),
    tile_bounds("scan_lookback_sum_1_u32", WIDE_SUM_BLOCKS),
    tile_bounds("scan_lookback_sum_0_u64", FOLD_BLOCKS),
    tile_bounds("scan_lookback_sum_1_u64", WIDE_TILE_BLOCKS),
    tile_bounds("scan_lookback_min_0_f32", EXACT_BLOCKS),
    tile_bounds("scan_lookback_min_1_f32", WIDE_TILE_BLOCKS),
    tile_bounds("scan_lookback_min_0_i32", EXACT_BLOCKS),
    tile_bounds("scan_lookback_min_1_i32", WIDE_TILE_BLOCKS),
    tile_bounds("scan_lookback_min_0_u32", EXACT_BLOCKS),
    tile_bounds("scan_lookback_min_1_u32", WIDE_TILE_BLOCKS),
    tile_bounds("scan_lookback_min_0_u64", FOLD_BLOCKS),
    tile_bounds("scan_lookback_min_1_u64", WIDE_TILE_BLOCKS),
    tile_bounds("scan_lookback_max_0_f32", EXACT_BLOCKS),
    tile_bounds("scan_lookback_max_1_f32", WIDE_TILE_BLOCKS),
    tile_bounds("scan_lookback_max_0_i32", EXACT_BLOCKS),
    tile_bounds("scan_lookback_max_1_i32", WIDE_TILE_BLOCKS),
    tile_bounds("scan_lookback_max_0_u32", EXACT_BLOCKS),
    tile_bounds("scan_lookback_max_1_u32", WIDE_TILE_BLOCKS),
    tile_bounds("scan_lookback_max_0_u64", FOLD_BLOCKS),
    tile_bounds("scan_lookback_max_1_u64", WIDE_TILE_BLOCKS),
    tile_bounds("compact_flagged_0_f32", COMPACT_BLOCKS),
    tile_bounds("compact_flagged_0_i32", COMPACT_BLOCKS),
    tile_bounds("compact_flagged_0_u32", COMPACT_BLOCKS),
    tile_bounds("compact_flagged_0_u64", COMPACT_BLOCKS),
    tile_bounds("compact_flagged_1_f32", COMPACT_BLOCKS),
    tile_bounds("compact_flagged_1_i32", COMPACT_BLOCKS),
    tile_bounds("compact_flagged_1_u32", COMPACT_BLOCKS),
    tile_bounds("compact_flagged_1_u64", COMPACT_BLOCKS),
    tile_bounds("compact_if_0_f32", COMPACT_BLOCKS),
    tile_bounds("compact_if_0_i32", COMPACT_BLOCKS),
    tile_bounds("compact_if_0_u32", COMPACT_BLOCKS),
    tile_bounds("compact_if_0_u64", COMPACT_BLOCKS),
    tile_bounds("compact_if_1_f32", COMPACT_BLOCKS),
    tile_bounds("compact_if_1_i32", COMPACT_BLOCKS),
    tile_bounds("compact_if_1_u32", COMPACT_BLOCKS),
    tile_bounds("compact_if_1_u64", COMPACT_BLOCKS),
];

/// Blocks per SM of step 7 for exact operators on 4-byte elements, for
/// `f32` sums and `u64` (their look-back needs more registers), and of
/// compaction (see [`LAUNCH_BOUNDS`]).
const EXACT_BLOCKS: u32 = 10;
const FOLD_BLOCKS: u32 = 8;
const COMPACT_BLOCKS: u32 = 9;

/// Blocks per SM of step 7's wide tiles (24 KiB each: eight fill an SM's
/// shared memory), and of its wide sums of 4-byte integers, which spill
/// 16 bytes at eight (64 registers) and none at seven (72).
const WIDE_TILE_BLOCKS: u32 = 8;
const WIDE_SUM_BLOCKS: u32 = 7;

/// An entry of the tile steps held to `blocks` blocks of `TILE_BLOCK`
/// threads per SM.
const fn tile_bounds(entry: &'static str, blocks: u32) -> crate::kernel::LaunchBounds {
    crate::kernel::LaunchBounds {
        entry,
        threads: TILE_BLOCK,
        blocks_per_sm: blocks,
    }
}

/// This family's entries whose local memory is kept deliberately
/// (gathered in [`crate::SPILLS_ON_PURPOSE`], whose doc says what that
/// allows).
pub const SPILLS_ON_PURPOSE: &[&str] = &[
    // Step 7 and compaction, held by `LAUNCH_BOUNDS` to more blocks per
    // SM: up to 24 bytes of spills for sm_90, more for sm_70 and sm_80
    // (not measured there); faster so on the H100 and H200 (see
    // `LAUNCH_BOUNDS`).
    "scan_lookback_sum_0_f32",
    "scan_lookback_sum_0_i32",
    "scan_lookback_sum_0_u32",
    "scan_lookback_sum_0_u64",
    "scan_lookback_sum_1_u64",
    "scan_lookback_min_0_f32",
    "scan_lookback_min_1_f32",
    "scan_lookback_min_0_i32",
    "scan_lookback_min_0_u32",
    "scan_lookback_min_0_u64",
    "scan_lookback_min_1_u64",
    "scan_lookback_max_0_f32",
    "scan_lookback_max_1_f32",
    "scan_lookback_max_0_i32",
    "scan_lookback_max_0_u32",
    "scan_lookback_max_0_u64",
    "scan_lookback_max_1_u64",
    "compact_flagged_0_f32",
    "compact_flagged_0_i32",
    "compact_flagged_0_u32",
    "compact_flagged_0_u64",
    "compact_flagged_1_f32",
    "compact_flagged_1_i32",
    "compact_flagged_1_u32",
    "compact_flagged_1_u64",
    "compact_if_0_f32",
    "compact_if_0_i32",
    "compact_if_0_u32",
    "compact_if_0_u64",
    "compact_if_1_f32",
    "compact_if_1_i32",
    "compact_if_1_u32",
    "compact_if_1_u64",
];

#[cfg(target_arch = "nvptx64")]
use device::{Compaction, Tiles};

kernels! {
    /// Every scan and compaction entry point.
    pub const KERNELS = {
        (x: *const T, out: *mut T, sums: *mut T, n: usize) {
            fn scan_kogge_stone<T in f32, i32, u32, u64> = device::kogge_stone;
            fn scan_kogge_stone_double<T in f32, i32, u32, u64> = device::kogge_stone_double;
            fn scan_brent_kung<T in f32, i32, u32, u64> = device::brent_kung;
            fn scan_coarsened<T in f32, i32, u32, u64> = device::coarsened;
        }
        (out: *mut T, prefixes: *const T, n: usize, per_block: u32) {
            fn scan_add_back<T in f32, i32, u32, u64> = device::add_back;
        }
        (x: *const T, out: *mut T, width: usize, x_pitch: usize, out_pitch: usize,
            init: u64, exclusive: u32, state: *mut u64, sums: *mut T) as Tiles {
            fn scan_lookback_sum<T in f32, i32, u32, u64; const WIDE: u32 = { 0, 1 }>
                = device::lookback_sum::<T, WIDE>;
            fn scan_lookback_min<T in f32, i32, u32, u64; const WIDE: u32 = { 0, 1 }>
                = device::lookback_min::<T, WIDE>;
            fn scan_lookback_max<T in f32, i32, u32, u64; const WIDE: u32 = { 0, 1 }>
                = device::lookback_max::<T, WIDE>;
            fn scan_chained_sum<T in f32, i32, u32, u64> = device::chained_sum;
            fn scan_tile_reduce_sum<T in f32, i32, u32, u64> = device::tile_reduce_sum;
            fn scan_tile_given_sum<T in f32, i32, u32, u64> = device::tile_given_sum;
        }
        (x: *const T, flags: *const u8, n: usize, keep: u32, value: u64, out: *mut T,
            out_len: usize, count: *mut u64, state: *mut u64) as Compaction {
            fn compact_flagged<T in f32, i32, u32, u64; const WIDE: u32 = { 0, 1 }>
                = device::compact_flagged::<T, WIDE>;
            fn compact_if<T in f32, i32, u32, u64; const WIDE: u32 = { 0, 1 }>
                = device::compact_if::<T, WIDE>;
        }
    }
}

/// The arguments of a section pass of steps 1-4.
pub type SectionArgs<T> = scan_kogge_stone::Args<T>;

/// The arguments of a tile pass of steps 5-7.
pub type TileArgs<T> = scan_lookback_sum::Args<T>;

/// The arguments of a compaction.
pub type CompactArgs<T> = compact_flagged::Args<T>;
