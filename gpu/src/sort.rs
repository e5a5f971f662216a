//! Radix sort: the textbook's ladder (PMPP's sorting chapter) from one bit
//! a pass to one-sweep (Adinets and Merrill, *Onesweep: A Faster Least
//! Significant Digit Radix Sort for GPUs*).
//!
//! Every step sorts least significant digit first, each pass stable, on
//! the key's *ordered bits* ([`SortKey::ordered`]): unsigned integers
//! whose order is the key's. Steps 1-4 are two launches a pass (count each
//! tile's digits; scatter) around a scan of the counts; step 5 counts
//! every pass's digits in one read, then runs one launch a pass, whose
//! tiles learn their digits' places from their predecessors through a
//! status word per tile and digit (a decoupled look-back, as the scan's).
//!
//! A tile's keys are ranked in registers: the lanes of a warp holding one
//! digit find each other with `match.any`, and a key's rank among its
//! digit is the count of those lanes below it plus the warp's count so
//! far. The ranks place the tile's keys in shared memory in digit order
//! (steps 2-5), from where consecutive threads store consecutive keys of
//! one digit: the stores are coalesced.

use crate::WARP_SIZE;
use crate::kernel::KernelType;

/// Threads of every sort block.
pub const SORT_BLOCK: u32 = 256;
/// Warps of a sort block.
pub const SORT_WARPS: u32 = SORT_BLOCK / WARP_SIZE;
/// Digits of an 8-bit pass: the most a pass has, and the statuses a tile
/// of step 5 keeps.
pub const RADIX: u32 = 256;
/// Keys of a one-sweep tile: `SORT_BLOCK` threads × 16.
pub const ONESWEEP_ITEMS: u32 = 16;
/// Keys one launch of step 5 sorts at most (a portion; longer inputs are
/// sorted portion by portion): its statuses count them in 30 bits.
pub const PORTION: usize = 1 << 29;
/// Words before a pass's statuses: its ticket, alone in a 128-byte line.
pub const STATUS_START: usize = 32;

/// A key type the sorts are compiled for: `u32`, `i32`, `f32`, `u64`.
pub trait SortKey: KernelType {
    /// Bytes of one key.
    const BYTES: u32;
    /// Unsigned bits (zero-extended to 64) in the order of the keys, or in
    /// the reverse order where `descending`: integers as they are, signed
    /// ones with the sign bit flipped; `f32` in IEEE 754's total order
    /// (`-inf < … < -0.0 < +0.0 < … < +inf`), every NaN after all the
    /// numbers in both directions.
    fn ordered(self, descending: bool) -> u64;
}

impl SortKey for u32 {
    const BYTES: u32 = 4;
    #[inline(always)]
    fn ordered(self, descending: bool) -> u64 {
        (if descending { !self } else { self }) as u64
    }
}

impl SortKey for i32 {
    const BYTES: u32 = 4;
    #[inline(always)]
    fn ordered(self, descending: bool) -> u64 {
        let o = (self as u32) ^ 0x8000_0000;
        (if descending { !o } else { o }) as u64
    }
}

impl SortKey for f32 {
    const BYTES: u32 = 4;
    #[inline(always)]
    fn ordered(self, descending: bool) -> u64 {
        let b = self.to_bits();
        if b & 0x7fff_ffff > 0x7f80_0000 {
            return 0xffff_ffff;
        }
        let o = if b >> 31 == 1 { !b } else { b | 0x8000_0000 };
        (if descending { !o } else { o }) as u64
    }
}

impl SortKey for u64 {
    const BYTES: u32 = 8;
    #[inline(always)]
    fn ordered(self, descending: bool) -> u64 {
        if descending { !self } else { self }
    }
}

/// How a step's passes run: digit bits, keys a thread, and whether a
/// tile's keys meet in shared memory before they are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SortShape {
    /// Bits of a digit.
    pub bits: u32,
    /// Keys a thread.
    pub items: u32,
    /// Whether the tile is sorted locally before its stores (steps 2-5).
    pub local: bool,
    /// One histogram pass and one look-back pass per digit (step 5), or
    /// a count, a scan and a scatter per digit (steps 1-4).
    pub onesweep: bool,
}

impl SortShape {
    /// Keys of a tile.
    pub const fn tile(self) -> usize {
        (SORT_BLOCK * self.items) as usize
    }

    /// Digits of a pass.
    pub const fn digits(self) -> u32 {
        1 << self.bits
    }
}

const fn multi_pass(bits: u32, items: u32, local: bool) -> SortShape {
    SortShape {
        bits,
        items,
        local,
        onesweep: false,
    }
}

ladder! {
    /// The radix-sort ladder, in the textbook's order. Each step's docs
    /// say what it changes from the one before; docs/sort.md has the
    /// measured table.
    pub enum SortVariant("sort"): SortShape {
        /// Step 1: one bit a pass, one key a thread: count each tile's
        /// zeros and ones, scan the counts, and each thread stores its key
        /// at its digit's place, straight to global memory. 32 passes for
        /// 32-bit keys, and the stores of a warp scatter to two places.
        OneBit = "one_bit" => multi_pass(1, 1, false),
        /// Step 2: the tile's keys are first placed in shared memory in
        /// digit order, from where consecutive threads store consecutive
        /// keys of one digit: coalesced stores.
        LocalSort = "local_sort" => multi_pass(1, 1, true),
        /// Step 3: four bits a pass (16 digits): a quarter of the passes,
        /// each with a 16-bucket count per tile and a scan of the counts.
        FourBits = "four_bits" => multi_pass(4, 1, true),
        /// Step 4: eight bits a pass and 16 keys a thread (thread
        /// coarsening): four passes for 32-bit keys, and 16 times fewer
        /// tiles, so the counts to scan are a sixteenth of the keys.
        Coarsened = "coarsened" => multi_pass(8, ONESWEEP_ITEMS, true),
        /// Step 5: one-sweep: one read counts the digits of every pass;
        /// then one launch a pass, whose tiles take their index from a
        /// ticket, publish their digit counts at once, and learn their
        /// digits' places by a look-back over their predecessors' counts:
        /// the keys are read and written once a pass, with no counting
        /// launch and no scan between.
        Onesweep = "onesweep" => SortShape {
            bits: 8,
            items: ONESWEEP_ITEMS,
            local: true,
            onesweep: true,
        },
    }
    default = Onesweep;
}

/// Shared memory of a ranking block: a word of header, the warps' totals,
/// each digit's place in the tile and its offset to the output, every
/// warp's count of every digit, the tile's keys and (for pairs) values.
pub const fn rank_shared(shape: SortShape, key_bytes: u32, pairs: bool) -> u32 {
    let keys = if shape.local {
        SORT_BLOCK * shape.items * key_bytes
    } else {
        0
    };
    let values = if shape.local && pairs {
        SORT_BLOCK * shape.items * 4
    } else {
        0
    };
    RANK_HEADER + 2 * RADIX * 4 + SORT_WARPS * shape.digits() * 4 + keys + values
}

/// The header of a ranking block's shared memory: the tile's index and
/// the warps' totals of a block scan.
const RANK_HEADER: u32 = 16 + SORT_WARPS * 4 + 16;

/// Shared memory of the histogram pass: a counter a digit and pass.
pub const fn histogram_shared(passes: u32) -> u32 {
    passes * RADIX * 4
}

/// Threads of the histogram pass's blocks; each counts a slice of one
/// portion.
pub const HISTOGRAM_BLOCK: u32 = 256;

/// The step a multi-pass entry (`sort_count_*`, `sort_scatter_*`) runs,
/// by its number.
pub const fn multi_pass_shape(step: u32) -> SortShape {
    match step {
        1 => SortVariant::OneBit.shape(),
        2 => SortVariant::LocalSort.shape(),
        3 => SortVariant::FourBits.shape(),
        _ => SortVariant::Coarsened.shape(),
    }
}

#[cfg(target_arch = "nvptx64")]
mod device {
    //! Common contract: key and value inputs valid for `n` reads that
    //! nothing writes during the launch; outputs valid for `n` writes,
    //! overlapping no input; the grid, block and dynamic shared memory as
    //! the host's plan says.
    use super::*;
    use crate::prim::*;

    /// Status flags (the top two bits; the count is the other 30).
    const FLAG_TOTAL: u32 = 1 << 30;
    const FLAG_PREFIX: u32 = 2 << 30;
    const COUNT_MASK: u32 = (1 << 30) - 1;

    /// What a pass sorts by: the digit of ordered bits `shift..shift + bits`
    /// (the last pass of a bit range may have fewer than the step's bits).
    #[derive(Clone, Copy)]
    struct Digit {
        shift: u32,
        bits: u32,
        descending: u32,
    }

    /// The arguments of steps 1-4's count.
    pub struct CountArgs<K> {
        pub keys: *const K,
        pub n: usize,
        pub shift: u32,
        pub bits: u32,
        pub descending: u32,
        pub counts: *mut u32,
    }

    /// The arguments of steps 1-4's scatter.
    pub struct ScatterArgs<K> {
        pub keys: *const K,
        pub values: *const u32,
        pub n: usize,
        pub shift: u32,
        pub bits: u32,
        pub descending: u32,
        pub offsets: *const u32,
        pub out: *mut K,
        pub out_values: *mut u32,
    }

    /// The arguments of step 5's histogram.
    pub struct HistogramArgs<K> {
        pub keys: *const K,
        pub n: usize,
        pub begin_bit: u32,
        pub end_bit: u32,
        pub passes: u32,
        pub descending: u32,
        pub slices: u32,
        pub hist: *mut u32,
    }

    /// The arguments of step 5's bases.
    pub struct BasesArgs<T> {
        pub hist: *const T,
        /// The grid's size (one block a pass): not read by the blocks.
        #[allow(dead_code)]
        pub passes: u32,
        pub portions: u32,
        pub bases: *mut u32,
    }

    /// The arguments of a step 5 pass.
    pub struct OnesweepArgs<K> {
        pub keys: *const K,
        pub values: *const u32,
        pub n: usize,
        pub first: usize,
        pub shift: u32,
        pub bits: u32,
        pub descending: u32,
        pub bases: *const u32,
        pub next_bases: *mut u32,
        pub status: *mut u32,
        pub out: *mut K,
        pub out_values: *mut u32,
    }

    /// The digit a pass's arguments name.
    macro_rules! pass_digit {
        ($($args:ident),*) => {$(
            impl<K> $args<K> {
                #[inline(always)]
                fn digit(&self) -> Digit {
                    Digit {
                        shift: self.shift,
                        bits: self.bits,
                        descending: self.descending,
                    }
                }
            }
        )*};
    }
    pass_digit!(CountArgs, ScatterArgs, OnesweepArgs);

    /// `body` for each `i` below `ITEMS` (at most 16), spelled out so that
    /// the per-key arrays stay in registers.
    macro_rules! each_item {
        ($i:ident => $body:block) => {
            unroll!($i in [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15] => {
                if $i < ITEMS $body
            })
        };
    }

    #[inline(always)]
    fn digit_of<K: SortKey>(key: K, d: Digit) -> u32 {
        ((key.ordered(d.descending != 0) >> d.shift) as u32) & ((1u32 << d.bits) - 1)
    }

    /// The block's shared memory, carved.
    struct Carved<K> {
        tile: *mut u32,
        warp_totals: *mut u32,
        /// Each digit's first place in the tile.
        starts: *mut u32,
        /// Each digit's output index minus its first place in the tile.
        offsets: *mut u32,
        /// `[warp][digit]`: a warp's count of a digit, then the count of
        /// the warps before it.
        counts: *mut u32,
        keys: *mut K,
        values: *mut u32,
    }

    #[inline(always)]
    fn carve<K: SortKey>(shape: SortShape) -> Carved<K> {
        let base = dynamic_shared::<u8>();
        let counts = base.wrapping_add((RANK_HEADER + 2 * RADIX * 4) as usize);
        let keys = counts.wrapping_add((SORT_WARPS * shape.digits() * 4) as usize);
        let values = keys.wrapping_add((SORT_BLOCK * shape.items * K::BYTES) as usize);
        Carved {
            tile: base.cast(),
            warp_totals: base.wrapping_add(16).cast(),
            starts: base.wrapping_add(RANK_HEADER as usize).cast(),
            offsets: base.wrapping_add((RANK_HEADER + RADIX * 4) as usize).cast(),
            counts: counts.cast(),
            keys: keys.cast(),
            values: values.cast(),
        }
    }

    /// The exclusive sum over the block's threads of `v` (every thread of
    /// the block calls it).
    #[inline(always)]
    unsafe fn block_exclusive_sum(v: u32, warp_totals: *mut u32) -> u32 {
        let lane = thread_idx_x() % WARP_SIZE;
        let warp = thread_idx_x() / WARP_SIZE;
        let mut x = v;
        unroll!(k in [0 1 2 3 4] => {
            let y: u32 = shfl_up(x, 1u32 << k);
            if lane >= 1u32 << k {
                x += y;
            }
        });
        if lane == WARP_SIZE - 1 {
            *warp_totals.add(warp as usize) = x;
        }
        sync_threads();
        let mut before = 0;
        for w in 0..SORT_WARPS {
            if w < warp {
                before += *warp_totals.add(w as usize);
            }
        }
        sync_threads();
        before + x - v
    }

    /// A tile's keys, ranked: `keys[i]` is the key at index
    /// `warp_first + i * 32 + lane` of the tile, valid where that is below
    /// `len`, and `ranks[i]` its place among the keys of its digit in its
    /// warp. Leaves in `counts` each warp's count of each digit before it,
    /// and returns (for threads below the digit count) the tile's count of
    /// the thread's digit.
    struct Ranked<K, const ITEMS: usize> {
        keys: [K; ITEMS],
        values: [u32; ITEMS],
        ranks: [u32; ITEMS],
        count: u32,
    }

    /// Loads and ranks this thread's keys of the tile of `len` keys at
    /// `x` (and their values: from `v`, or their index from `first` where
    /// `v` is null and `pairs`).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn rank_tile<K: SortKey, const ITEMS: usize>(
        shape: SortShape,
        x: *const K,
        v: *const u32,
        pairs: bool,
        first: usize,
        len: usize,
        digit: Digit,
        s: &Carved<K>,
    ) -> Ranked<K, ITEMS> {
        let lane = thread_idx_x() % WARP_SIZE;
        let warp = thread_idx_x() / WARP_SIZE;
        let digits = shape.digits();
        let counts = s.counts.add((warp * digits) as usize);
        let mut t = thread_idx_x();
        while t < SORT_WARPS * digits {
            *s.counts.add(t as usize) = 0;
            t += SORT_BLOCK;
        }
        let warp_first = (warp * WARP_SIZE) as usize * ITEMS;
        let mut r = Ranked {
            // SAFETY: every key type is an integer or a float, for which
            // all-zero bits are a value.
            keys: [core::mem::zeroed(); ITEMS],
            values: [0; ITEMS],
            ranks: [0; ITEMS],
            count: 0,
        };
        each_item!(i => {
            let at = warp_first + i * WARP_SIZE as usize + lane as usize;
            if at < len {
                r.keys[i] = *x.add(at);
                if pairs {
                    r.values[i] = if v.is_null() { (first + at) as u32 } else { *v.add(at) };
                }
            }
        });
        sync_threads();
        let below = lanemask_lt();
        each_item!(i => {
            let at = warp_first + i * WARP_SIZE as usize + lane as usize;
            let valid = at < len;
            let d = digit_of(r.keys[i], digit);
            let peers = match_any(if valid { d } else { u32::MAX });
            let mut before = 0;
            if valid {
                before = *counts.add(d as usize);
            }
            sync_warp(FULL_MASK);
            if valid && 31 - peers.leading_zeros() == lane {
                *counts.add(d as usize) = before + peers.count_ones();
            }
            sync_warp(FULL_MASK);
            r.ranks[i] = before + (peers & below).count_ones();
        });
        sync_threads();
        // Each digit's count: the warps' counts, replaced by the count of
        // the warps before.
        let me = thread_idx_x();
        if me < digits {
            let mut total = 0;
            for w in 0..SORT_WARPS {
                let c = s.counts.add((w * digits + me) as usize);
                let here = *c;
                *c = total;
                total += here;
            }
            r.count = total;
        }
        r
    }

    /// Stores a ranked tile: where `shape.local`, through shared memory in
    /// digit order (each digit's output index minus its first place in the
    /// tile in `s.offsets`, its first place in `s.starts`); else straight
    /// from the registers to `starts_out[digit] + place in digit`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn store_tile<K: SortKey, const ITEMS: usize>(
        shape: SortShape,
        r: &Ranked<K, ITEMS>,
        len: usize,
        digit: Digit,
        s: &Carved<K>,
        out: *mut K,
        out_values: *mut u32,
        pairs: bool,
    ) {
        let lane = thread_idx_x() % WARP_SIZE;
        let warp = thread_idx_x() / WARP_SIZE;
        let digits = shape.digits();
        let warp_first = (warp * WARP_SIZE) as usize * ITEMS;
        let counts = s.counts.add((warp * digits) as usize);
        if !shape.local {
            each_item!(i => {
                let at = warp_first + i * WARP_SIZE as usize + lane as usize;
                if at < len {
                    let d = digit_of(r.keys[i], digit) as usize;
                    let to = (*s.offsets.add(d))
                        .wrapping_add(*s.starts.add(d))
                        .wrapping_add(*counts.add(d))
                        .wrapping_add(r.ranks[i]) as usize;
                    *out.add(to) = r.keys[i];
                    if pairs {
                        *out_values.add(to) = r.values[i];
                    }
                }
            });
            return;
        }
        each_item!(i => {
            let at = warp_first + i * WARP_SIZE as usize + lane as usize;
            if at < len {
                let d = digit_of(r.keys[i], digit) as usize;
                let place = (*s.starts.add(d) + *counts.add(d) + r.ranks[i]) as usize;
                *s.keys.add(place) = r.keys[i];
                if pairs {
                    *s.values.add(place) = r.values[i];
                }
            }
        });
        sync_threads();
        each_item!(i => {
            let place = i * SORT_BLOCK as usize + thread_idx_x() as usize;
            if place < len {
                let k = *s.keys.add(place);
                let d = digit_of(k, digit) as usize;
                let to = (*s.offsets.add(d)).wrapping_add(place as u32) as usize;
                *out.add(to) = k;
                if pairs {
                    *out_values.add(to) = *s.values.add(place);
                }
            }
        });
    }

    /// Steps 1-4, first launch of a pass: tile `b`'s count of digit `d`
    /// to `counts[d * tiles + b]`.
    ///
    /// # Safety
    /// The common contract; `counts` valid for `digits * tiles` writes;
    /// one block per tile.
    pub unsafe fn count<K: SortKey, const STEP: u32>(a: CountArgs<K>) {
        match STEP {
            4 => count_items::<K, STEP, { ONESWEEP_ITEMS as usize }>(a),
            _ => count_items::<K, STEP, 1>(a),
        }
    }

    #[inline(always)]
    unsafe fn count_items<K: SortKey, const STEP: u32, const ITEMS: usize>(a: CountArgs<K>) {
        let shape = multi_pass_shape(STEP);
        let s = carve::<K>(shape);
        let tile = block_idx_x() as usize;
        let tiles = a.n.div_ceil(shape.tile());
        let first = tile * shape.tile();
        let len = Ord::min(shape.tile(), a.n - first);
        let none = core::ptr::null();
        let keys = a.keys.add(first);
        let r = rank_tile::<K, ITEMS>(shape, keys, none, false, first, len, a.digit(), &s);
        let me = thread_idx_x();
        if me < shape.digits() {
            *a.counts.add(me as usize * tiles + tile) = r.count;
        }
    }

    /// Steps 1-4, last launch of a pass: each key to its digit's place,
    /// `offsets[d * tiles + b]` (the exclusive scan of the counts) plus its
    /// place among the tile's keys of that digit.
    ///
    /// # Safety
    /// The common contract; `offsets` valid for `digits * tiles` reads;
    /// values read and written where `out_values` is not null (read from
    /// `values`, or their index where that is null).
    pub unsafe fn scatter<K: SortKey, const STEP: u32>(a: ScatterArgs<K>) {
        match STEP {
            4 => scatter_items::<K, STEP, { ONESWEEP_ITEMS as usize }>(a),
            _ => scatter_items::<K, STEP, 1>(a),
        }
    }

    #[inline(always)]
    unsafe fn scatter_items<K: SortKey, const STEP: u32, const ITEMS: usize>(a: ScatterArgs<K>) {
        let shape = multi_pass_shape(STEP);
        let s = carve::<K>(shape);
        let tile = block_idx_x() as usize;
        let tiles = a.n.div_ceil(shape.tile());
        let first = tile * shape.tile();
        let len = Ord::min(shape.tile(), a.n - first);
        let pairs = !a.out_values.is_null();
        let values = if a.values.is_null() {
            a.values
        } else {
            a.values.add(first)
        };
        let r = rank_tile::<K, ITEMS>(
            shape,
            a.keys.add(first),
            values,
            pairs,
            first,
            len,
            a.digit(),
            &s,
        );
        let me = thread_idx_x();
        let start =
            block_exclusive_sum(if me < shape.digits() { r.count } else { 0 }, s.warp_totals);
        if me < shape.digits() {
            *s.starts.add(me as usize) = start;
            let place = *a.offsets.add(me as usize * tiles + tile);
            *s.offsets.add(me as usize) = place.wrapping_sub(start);
        }
        sync_threads();
        store_tile(shape, &r, len, a.digit(), &s, a.out, a.out_values, pairs);
    }

    /// Step 5's first launch: every pass's digit counts, added to
    /// `hist[pass][digit]` (zeroed before). Block `b` counts slice `b` of
    /// `slices` of the keys.
    ///
    /// # Safety
    /// The common contract; `hist` valid for `passes * 256` words that
    /// only this launch's atomics touch.
    pub unsafe fn histogram<K: SortKey>(a: HistogramArgs<K>) {
        let counters = dynamic_shared::<u32>();
        let mut t = thread_idx_x();
        while t < a.passes * RADIX {
            *counters.add(t as usize) = 0;
            t += HISTOGRAM_BLOCK;
        }
        sync_threads();
        let span = a.n.div_ceil(a.slices as usize);
        let slice = block_idx_x() as usize;
        let from = Ord::min(a.n, slice * span);
        let to = Ord::min(a.n, from + span);
        let bits = a.end_bit - a.begin_bit;
        let mask = if bits == 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        let mut i = from + thread_idx_x() as usize;
        while i < to {
            let o = (a.keys.add(i).read().ordered(a.descending != 0) >> a.begin_bit) & mask;
            for p in 0..a.passes {
                let d = ((o >> (8 * p)) & 0xff) as u32;
                atomic_add_u32(counters.add((p * RADIX + d) as usize), 1);
            }
            i += HISTOGRAM_BLOCK as usize;
        }
        sync_threads();
        let mut t = thread_idx_x();
        while t < a.passes * RADIX {
            let c = *counters.add(t as usize);
            if c != 0 {
                atomic_add_u32(a.hist.add(t as usize), c);
            }
            t += HISTOGRAM_BLOCK;
        }
    }

    /// Step 5, between: `bases[pass][0][digit]`, where the keys of that
    /// digit start in the pass's output: the exclusive sum of the digits'
    /// counts. One block a pass; a pass's bases are `portions + 1` rows of
    /// 256 apart (each portion's pass writes the next row).
    ///
    /// # Safety
    /// `hist` valid for `passes * 256` words, `bases` for `passes *
    /// (portions + 1) * 256`.
    pub unsafe fn bases<T: Copy + Into<u32>>(a: BasesArgs<T>) {
        let warp_totals = dynamic_shared::<u32>();
        let pass = block_idx_x() as usize;
        let d = thread_idx_x() as usize;
        let total: u32 = (*a.hist.add(pass * RADIX as usize + d)).into();
        let start = block_exclusive_sum(total, warp_totals);
        *a.bases
            .add(pass * (a.portions as usize + 1) * RADIX as usize + d) = start;
    }

    /// Step 5, one pass over one portion of `n` keys (from `first` in the
    /// whole input): each tile takes its index from the ticket at
    /// `status[0]`, ranks its keys, publishes each digit's count, looks
    /// back over its predecessors' statuses for the count of each digit
    /// before it, and stores its keys at `bases[digit]` plus that. The
    /// last tile writes the next portion's bases: `bases` plus the
    /// portion's counts (to another row: the other tiles may still read
    /// `bases`).
    ///
    /// # Safety
    /// The common contract; `out` and `out_values` indexed by the whole
    /// input's positions; `bases` and `next_bases` 256 words each;
    /// `status` `STATUS_START` + 256 words a tile, zero before the launch
    /// and touched by nothing else during it.
    pub unsafe fn onesweep<K: SortKey, const PAIRS: u32>(a: OnesweepArgs<K>) {
        let shape = SortVariant::Onesweep.shape();
        let s = carve::<K>(shape);
        let pairs = PAIRS != 0;
        if thread_idx_x() == 0 {
            *s.tile = atomic_add_u32(a.status, 1);
        }
        sync_threads();
        let tile = *s.tile as usize;
        let first = tile * shape.tile();
        let len = Ord::min(shape.tile(), a.n - first);
        let values = if a.values.is_null() {
            a.values
        } else {
            a.values.add(first)
        };
        let r = rank_tile::<K, { ONESWEEP_ITEMS as usize }>(
            shape,
            a.keys.add(first),
            values,
            pairs,
            a.first + first,
            len,
            a.digit(),
            &s,
        );
        let me = thread_idx_x() as usize;
        let statuses = a.status.add(STATUS_START);
        // Publish at once: the tile's count, or its inclusive prefix where
        // it is the first.
        let mine = statuses.add(tile * RADIX as usize + me);
        store_relaxed_u32(
            mine,
            if tile == 0 { FLAG_PREFIX } else { FLAG_TOTAL } | r.count,
        );
        let start = block_exclusive_sum(r.count, s.warp_totals);
        let mut before = 0u32;
        if tile > 0 {
            let mut p = tile - 1;
            loop {
                let status = load_relaxed_u32(statuses.add(p * RADIX as usize + me));
                if status & !COUNT_MASK == 0 {
                    continue;
                }
                before += status & COUNT_MASK;
                if status & FLAG_PREFIX != 0 {
                    break;
                }
                p -= 1;
            }
            store_relaxed_u32(mine, FLAG_PREFIX | (before + r.count));
        }
        if tile + 1 == a.n.div_ceil(shape.tile()) {
            *a.next_bases.add(me) = (*a.bases.add(me)).wrapping_add(before + r.count);
        }
        *s.starts.add(me) = start;
        *s.offsets.add(me) = (*a.bases.add(me)).wrapping_add(before).wrapping_sub(start);
        sync_threads();
        store_tile(shape, &r, len, a.digit(), &s, a.out, a.out_values, pairs);
    }
}

#[cfg(target_arch = "nvptx64")]
use device::{BasesArgs, CountArgs, HistogramArgs, OnesweepArgs, ScatterArgs};

kernels! {
    /// Every sort entry point: per key type, the multi-pass steps' count
    /// and scatter (`STEP` 1 to 4), and one-sweep's histogram, bases and
    /// pass (keys only, and with `u32` values).
    pub const KERNELS = {
        (keys: *const T, n: usize, shift: u32, bits: u32, descending: u32, counts: *mut u32) as CountArgs {
            fn sort_count<T in u32, i32, f32, u64; const STEP: u32 = { 1, 2, 3, 4 }>
                = device::count::<T, STEP>;
        }
        (keys: *const T, values: *const u32, n: usize, shift: u32, bits: u32, descending: u32,
            offsets: *const u32,
            out: *mut T, out_values: *mut u32) as ScatterArgs {
            fn sort_scatter<T in u32, i32, f32, u64; const STEP: u32 = { 1, 2, 3, 4 }>
                = device::scatter::<T, STEP>;
        }
        (keys: *const T, n: usize, begin_bit: u32, end_bit: u32, passes: u32, descending: u32,
            slices: u32, hist: *mut u32) as HistogramArgs {
            fn sort_histogram<T in u32, i32, f32, u64> = device::histogram::<T>;
        }
        (hist: *const T, passes: u32, portions: u32, bases: *mut u32) as BasesArgs {
            fn sort_bases<T in u32> = device::bases::<T>;
        }
        (keys: *const T, values: *const u32, n: usize, first: usize, shift: u32, bits: u32,
            descending: u32,
            bases: *const u32, next_bases: *mut u32, status: *mut u32, out: *mut T,
            out_values: *mut u32) as OnesweepArgs {
            fn sort_onesweep<T in u32, i32, f32, u64; const PAIRS: u32 = { 0, 1 }>
                = device::onesweep::<T, PAIRS>;
        }
    }
}
