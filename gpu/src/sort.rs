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
//! A tile's keys are placed in two rounds. First each warp counts its
//! keys of each digit with shared atomics that return nothing, so the
//! tile's count of every digit, and where each warp's keys of it start,
//! are known before any key is placed (step 5 publishes the counts then).
//! Then, key by key, the lanes of a warp holding one digit find each other
//! with a ballot a bit, the highest of them advances the warp's place for
//! that digit with one shared atomic, and each key's place is that plus
//! the lanes below it holding the same digit. In wide tiles a thread's
//! keys run as two such chains, its first half and its second, each with
//! its own half of the warp's place words, so that two atomics are in
//! flight at once. The places put the tile's
//! keys in shared memory in digit order (steps 2-5), from where
//! consecutive threads store consecutive keys of one digit: the stores
//! are coalesced.
//!
//! Step 5 holds the keys of an `f32` tile without NaN as their ordered
//! bits, made once as they are loaded and turned back into the keys as
//! they are stored, so that each digit is a shift and a mask; a tile
//! with a NaN takes each digit from the key.

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
/// Keys a thread of the wide one-sweep tiles, for 4-byte keys with
/// values, the largest first: a pass takes the first size its key type
/// has an entry for (`sort_onesweep_wide` for `u32` and `i32` keys, both
/// sizes; `sort_onesweep_wide_float` for `f32` keys, 32 only, since at 40
/// their pass spills, and `sort_onesweep_wide_middle` at 40 for the
/// passes between the first and the last, which hold carried bits,
/// where the host finds that it pays) and of which an SM holds
/// [`WIDE_PAIR_BLOCKS`] blocks. Forty (10 240 pairs a tile, 90 KiB of
/// shared memory) fit the H100 and H200; 32 (8 192, 74 KiB) the A100
/// too. Each digit's run in a tile's stores is two to two and a half
/// times as long as in a tile of 16 keys a thread, and a pass has as
/// many times fewer tiles to look back over.
pub const WIDE_PAIR_ITEMS: [u32; 2] = [40, 32];
/// Blocks per SM that wide one-sweep tiles are compiled for (gathered in
/// [`crate::LAUNCH_BOUNDS`]): two, 128 registers at most.
pub const WIDE_PAIR_BLOCKS: u32 = 2;
/// Keys of one row step 5 sorts at most: its statuses count them in 30
/// bits (longer inputs are sorted by step 4).
pub const PORTION: usize = 1 << 29;
/// Words before a pass's statuses: its ticket, alone in a 128-byte line.
pub const STATUS_START: usize = 32;
/// A step 5 pass's `carry` over `f32` keys: where the sort has no NaN,
/// the keys it reads are their ordered bits (every pass after the first).
pub const CARRY_IN: u32 = 1;
/// A step 5 pass's `carry` over `f32` keys: where the sort has no NaN, the
/// keys it writes are their ordered bits (every pass before the last).
pub const CARRY_OUT: u32 = 2;

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

    /// Bits `shift..shift + bits` of [`SortKey::ordered`], descending where
    /// `flip` is all ones (ascending where it is zero), where `mask` is
    /// `(1 << bits) - 1` and `shift + bits` at most the key's bits.
    /// Descending is a xor with `flip` after the shift, not a choice a
    /// key: two instructions a digit of a 4-byte key, not four.
    #[inline(always)]
    fn digit(self, flip: u32, shift: u32, mask: u32) -> u32 {
        (self.ordered(flip != 0) >> shift) as u32 & mask
    }
}

impl SortKey for u32 {
    const BYTES: u32 = 4;
    #[inline(always)]
    fn ordered(self, descending: bool) -> u64 {
        (if descending { !self } else { self }) as u64
    }

    #[inline(always)]
    fn digit(self, flip: u32, shift: u32, mask: u32) -> u32 {
        ((self >> (shift & 31)) ^ flip) & mask
    }
}

impl SortKey for i32 {
    const BYTES: u32 = 4;
    #[inline(always)]
    fn ordered(self, descending: bool) -> u64 {
        let o = (self as u32) ^ 0x8000_0000;
        (if descending { !o } else { o }) as u64
    }

    #[inline(always)]
    fn digit(self, flip: u32, shift: u32, mask: u32) -> u32 {
        let shift = shift & 31;
        (((self as u32) >> shift) ^ ((0x8000_0000 ^ flip) >> shift)) & mask
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

    #[inline(always)]
    fn digit(self, flip: u32, shift: u32, mask: u32) -> u32 {
        let b = self.to_bits();
        if b & 0x7fff_ffff > 0x7f80_0000 {
            return mask;
        }
        let o = if b >> 31 == 1 { !b } else { b | 0x8000_0000 };
        ((o >> (shift & 31)) ^ flip) & mask
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

    /// This shape with `items` keys a thread: step 5's is
    /// [`ONESWEEP_ITEMS`], or [`WIDE_PAIR_ITEMS`] for wide tiles.
    pub const fn with_items(self, items: u32) -> SortShape {
        SortShape { items, ..self }
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
/// each digit's offset to the output, every warp's count of every digit,
/// the tile's keys and (for pairs) values.
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
    count_shared(shape) + keys + values
}

/// Shared memory of steps 1-4's count: a ranking block's without the tile.
pub const fn count_shared(shape: SortShape) -> u32 {
    RANK_HEADER + RADIX * 4 + SORT_WARPS * shape.digits() * 4
}

/// The header of a ranking block's shared memory: the tile's index and
/// the warps' totals of a block scan.
const RANK_HEADER: u32 = 16 + SORT_WARPS * 4 + 16;

/// Shared memory of the histogram pass: a counter a digit and pass.
pub const fn histogram_shared(passes: u32) -> u32 {
    HISTOGRAM_COPIES * passes * RADIX * 4
}

/// Copies of the histogram pass's counters: lane `l` of a warp counts
/// into copy `l % HISTOGRAM_COPIES`, so that lanes adding to one digit
/// (keys whose top bits hardly vary, as floats') meet fewer times on
/// one shared counter.
pub const HISTOGRAM_COPIES: u32 = 4;

/// Threads of the histogram pass's blocks; each counts a slice of a row.
pub const HISTOGRAM_BLOCK: u32 = 256;

/// Keys a thread of a selection level holds (top-k).
pub const SELECT_ITEMS: u32 = 16;
/// Keys of a selection level's slice: `SORT_BLOCK * SELECT_ITEMS`.
pub const SELECT_SLICE: usize = (SORT_BLOCK * SELECT_ITEMS) as usize;
/// The most keys a selection level keeps of a slice (a top-k's `k`; larger
/// ones sort their rows): a thread of the block for each.
pub const SELECT_MAX_K: u32 = SORT_BLOCK;
/// The largest `k` for which a selection level first bounds its keys
/// and selects among the few that pass: about `2k` of random keys, so
/// that they fit the `SELECT_MAX_K` places of the stage.
pub const SELECT_FILTER_MAX_K: u32 = 64;
/// The column of an empty place among a selection's candidates.
pub const NO_INDEX: u32 = u32::MAX;
/// Keys of an argmax block's slice: one load of 16 keys a thread, so that
/// even a few rows make many blocks (and the grid's last wave is short).
pub const ARGMAX_SLICE: usize = SORT_BLOCK as usize * 16;

/// Shared memory of a selection level: a header, the warps' totals, a
/// counter a digit, and the kept keys and columns of a sorted level.
pub const fn select_shared(key_bytes: u32) -> u32 {
    (16 + RADIX + SELECT_MAX_K) * 4 + SELECT_MAX_K * key_bytes
}

/// Shared memory of the argmax: each warp's best bits, column and place.
pub const ARGMAX_SHARED: u32 = SORT_WARPS * 16;

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
    /// Statuses a look-back reads at once.
    const LOOKBACK: usize = 4;
    /// Keys a thread of the histogram pass loads before it counts them.
    const HISTOGRAM_LOADS: usize = 16;

    /// What a pass sorts by: the digit of ordered bits `shift..shift + bits`
    /// (the last pass of a bit range may have fewer than the step's bits).
    #[derive(Clone, Copy)]
    struct Digit {
        shift: u32,
        bits: u32,
        /// All ones where descending, zero where ascending.
        flip: u32,
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
        pub width: usize,
        pub rows: usize,
        pub pitch: usize,
        pub begin_bit: u32,
        pub end_bit: u32,
        pub passes: u32,
        pub descending: u32,
        pub hist: *mut u32,
    }

    /// The arguments of step 5's bases.
    pub struct BasesArgs<T> {
        pub hist: *const T,
        pub bases: *mut u32,
    }

    /// The arguments of a step 5 pass.
    pub struct OnesweepArgs<K> {
        pub keys: *const K,
        pub values: *const u32,
        pub width: usize,
        pub tiles_per_row: u32,
        pub pitch: usize,
        pub shift: u32,
        pub bits: u32,
        pub descending: u32,
        pub bases: *const u32,
        pub status: *mut u32,
        pub out: *mut K,
        pub out_pitch: usize,
        pub out_values: *mut u32,
        pub out_values_pitch: usize,
        pub limit: usize,
        pub nan: *const u32,
        pub carry: u32,
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
                        flip: flip(self.descending != 0),
                    }
                }
            }
        )*};
    }
    pass_digit!(CountArgs, ScatterArgs, OnesweepArgs);

    impl<K: SortKey> OnesweepArgs<K> {
        /// Asks L2 for tile `guess` of the first row (of `tile` keys a
        /// tile), `rounds` (1 or 2) 128-byte lines a thread at most: its
        /// keys, then its values (a hint). Every thread calls it.
        #[inline(always)]
        unsafe fn prefetch(&self, guess: u32, tile: usize, rounds: usize) {
            let key_lines = tile * K::BYTES as usize / 128;
            unroll!(r in [0 1] => {
                if r < rounds {
                    let t = thread_idx_x() as usize + r * SORT_BLOCK as usize;
                    let (p, line, bytes) = if t < key_lines {
                        (self.keys.cast::<u8>(), t, K::BYTES as usize)
                    } else {
                        (self.values.cast::<u8>(), t - key_lines, 4)
                    };
                    let at = guess as usize * tile * bytes + line * 128;
                    if guess < self.tiles_per_row && !p.is_null() && at < self.width * bytes {
                        prefetch_l2_line(p.add(at));
                    }
                }
            });
        }

        /// The block's tile (its ticket, in `s.tile`), its row and its
        /// index in the row: 32-bit, as the grid's tiles are fewer than
        /// 2^32.
        #[inline(always)]
        unsafe fn place<T>(&self, s: &Carved<T>) -> (u32, u32, u32) {
            let ticket = core::ptr::read_volatile(s.tile);
            let row = ticket / self.tiles_per_row;
            (ticket, row, ticket - row * self.tiles_per_row)
        }
    }

    /// `body` for each `i` below `ITEMS` (at most 48), spelled out so that
    /// the per-key arrays stay in registers.
    macro_rules! each_item {
        ($i:ident => $body:block) => {
            const { assert!(ITEMS <= 48, "each_item spells out 48 keys a thread") };
            unroll!($i in [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
                32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47] => {
                if $i < ITEMS $body
            })
        };
    }

    /// Bit `i` of a mask of a thread's keys, `i` below 32 (the remainder
    /// keeps the shift in range in `each_item!`'s arms past the keys,
    /// which never run).
    #[inline(always)]
    const fn key_bit(i: usize) -> u32 {
        1 << (i % 32)
    }

    #[inline(always)]
    fn digit_of<K: SortKey>(key: K, d: Digit) -> u32 {
        key.digit(d.flip, d.shift, (1u32 << d.bits) - 1)
    }

    /// A key as a pass holds it from its load to its store: the key
    /// itself, or its [`Radix`] bits.
    trait Held<K>: Copy {
        /// The digit the pass sorts by.
        fn digit(self, d: Digit) -> u32;
        /// The key, to store.
        fn key(self, d: Digit) -> K;
    }

    impl<K: SortKey> Held<K> for K {
        #[inline(always)]
        fn digit(self, d: Digit) -> u32 {
            digit_of(self, d)
        }

        #[inline(always)]
        fn key(self, _: Digit) -> K {
            self
        }
    }

    /// A 4-byte key's ordered bits, descending folded in, made once as the
    /// key is loaded: each digit is then a shift and a mask, and the key
    /// is made again as it is stored. Only for keys without NaN (every
    /// NaN has the same ordered bits, so they do not give the NaN back).
    /// `CARRIED`: the bits are stored as they are, in a key's place
    /// (between the passes of a sort without NaN, whose scratch holds the
    /// bits of the keys rather than the keys).
    #[derive(Clone, Copy)]
    struct Bits<const CARRIED: bool>(u32);

    /// Bits made back into the key as they are stored.
    type Radix = Bits<false>;
    /// Bits stored as they are.
    type Carried = Bits<true>;

    impl<K: Holds, const CARRIED: bool> Held<K> for Bits<CARRIED> {
        #[inline(always)]
        fn digit(self, d: Digit) -> u32 {
            (self.0 >> (d.shift & 31)) & ((1u32 << d.bits) - 1)
        }

        #[inline(always)]
        fn key(self, d: Digit) -> K {
            if CARRIED {
                K::from_carried(self.0)
            } else {
                K::from_radix(self.0, d.flip)
            }
        }
    }

    /// How a pass may hold a key type's keys: `f32` keys, whose ordered
    /// bits cost a NaN test and a sign test a digit, are held as
    /// [`Radix`] bits in every tile without NaN.
    pub trait Holds: SortKey {
        /// Whether tiles without NaN hold their keys as [`Radix`] bits;
        /// the other two items are called only where it is true.
        const BY_RADIX: bool = false;

        /// Whether the key is a NaN.
        #[inline(always)]
        fn is_nan(self) -> bool {
            false
        }

        /// The key's [`Radix`] bits, where it is not a NaN; descending
        /// where `flip` is all ones (see [`Digit`]).
        #[inline(always)]
        fn radix(self, flip: u32) -> u32 {
            self.ordered(flip != 0) as u32
        }

        /// The key whose [`Radix`] bits are `bits`.
        fn from_radix(bits: u32, flip: u32) -> Self;

        /// The bits a key's place holds where they are [`Carried`].
        #[inline(always)]
        fn carried(self) -> u32 {
            self.ordered(false) as u32
        }

        /// The key in whose place [`Carried`] bits `bits` are stored.
        #[inline(always)]
        fn from_carried(bits: u32) -> Self {
            Self::from_radix(bits, 0)
        }
    }

    /// All ones where `descending`.
    #[inline(always)]
    fn flip(descending: bool) -> u32 {
        if descending { u32::MAX } else { 0 }
    }

    impl Holds for u32 {
        #[inline(always)]
        fn from_radix(bits: u32, flip: u32) -> u32 {
            bits ^ flip
        }
    }

    impl Holds for i32 {
        #[inline(always)]
        fn from_radix(bits: u32, flip: u32) -> i32 {
            (bits ^ flip ^ 0x8000_0000) as i32
        }
    }

    impl Holds for u64 {
        /// Not called: `u64` keys are not held as 4-byte bits.
        #[inline(always)]
        fn from_radix(bits: u32, _: u32) -> u64 {
            bits as u64
        }
    }

    impl Holds for f32 {
        const BY_RADIX: bool = true;

        #[inline(always)]
        fn is_nan(self) -> bool {
            self.to_bits() & 0x7fff_ffff > 0x7f80_0000
        }

        /// [`SortKey::ordered`] without its NaN test: the bits flipped
        /// where the sign is set, else the sign bit set.
        #[inline(always)]
        fn radix(self, flip: u32) -> u32 {
            let b = self.to_bits();
            b ^ ((b as i32 >> 31) as u32 | 0x8000_0000) ^ flip
        }

        #[inline(always)]
        fn from_radix(bits: u32, flip: u32) -> f32 {
            let o = bits ^ flip;
            f32::from_bits(o ^ ((!o as i32 >> 31) as u32 | 0x8000_0000))
        }

        #[inline(always)]
        fn carried(self) -> u32 {
            self.to_bits()
        }

        #[inline(always)]
        fn from_carried(bits: u32) -> f32 {
            f32::from_bits(bits)
        }
    }

    /// The block's shared memory, carved.
    struct Carved<K> {
        tile: *mut u32,
        warp_totals: *mut u32,
        /// Each digit's output index minus its first place in the tile.
        offsets: *mut u32,
        /// `[warp][digit]`: a warp's count of a digit; then the place in
        /// the tile of the warp's next key of that digit.
        counts: *mut u32,
        keys: *mut K,
        values: *mut u32,
    }

    #[inline(always)]
    fn carve<K: SortKey>(shape: SortShape) -> Carved<K> {
        let base = dynamic_shared::<u8>();
        let counts = base.wrapping_add((RANK_HEADER + RADIX * 4) as usize);
        let keys = counts.wrapping_add((SORT_WARPS * shape.digits() * 4) as usize);
        let values = keys.wrapping_add((SORT_BLOCK * shape.items * K::BYTES) as usize);
        Carved {
            tile: base.cast(),
            warp_totals: base.wrapping_add(16).cast(),
            offsets: base.wrapping_add(RANK_HEADER as usize).cast(),
            counts: counts.cast(),
            keys: keys.cast(),
            values: values.cast(),
        }
    }

    /// Whether a tile's pairs held as `H` meet in shared memory as one
    /// 8-byte word a pair, the key's 4 bytes then its value (in
    /// `s.keys`, whose space and the values' after it make the words):
    /// one store and one load a pair, not two of each.
    const fn joined<H>(pairs: bool) -> bool {
        pairs && core::mem::size_of::<H>() == 4
    }

    /// Puts a pair at `place` of the sorted tile, as [`joined`] says.
    ///
    /// # Safety
    /// `joined::<H>(true)`; `place` below the tile's keys.
    #[inline(always)]
    unsafe fn put_pair<K, H: Copy>(s: &Carved<K>, place: u32, key: H, value: u32) {
        // SAFETY: `H` is 4 bytes (the contract): the key's bits.
        let bits: u32 = core::mem::transmute_copy(&key);
        *s.keys.cast::<u64>().add(place as usize) = (value as u64) << 32 | bits as u64;
    }

    /// Puts a placed key at `place` of the sorted tile, with its value
    /// where `pairs`: as one word where [`joined`] says, else the key in
    /// `s.keys` and the value in `s.values`.
    ///
    /// # Safety
    /// `place` below the tile's keys; `H` is `K` or its bits (the same
    /// size).
    #[inline(always)]
    unsafe fn put_sorted<K, H: Copy>(
        s: &Carved<K>,
        place: u32,
        key: H,
        pairs: bool,
        value: impl FnOnce() -> u32,
    ) {
        if joined::<H>(pairs) {
            put_pair(s, place, key, value());
        } else {
            *s.keys.cast::<H>().add(place as usize) = key;
            if pairs {
                *s.values.add(place as usize) = value();
            }
        }
    }

    /// The pair at `place` of the sorted tile, put by [`put_pair`].
    ///
    /// # Safety
    /// As [`put_pair`]'s.
    #[inline(always)]
    unsafe fn get_pair<K, H: Copy>(s: &Carved<K>, place: u32) -> (H, u32) {
        let word = *s.keys.cast::<u64>().add(place as usize);
        // SAFETY: `H` is 4 bytes (the contract), an integer, a float or
        // `Bits`, for which any bits are a value.
        (
            core::mem::transmute_copy(&(word as u32)),
            (word >> 32) as u32,
        )
    }

    /// The exclusive sum over the block's threads of `v` (every thread of
    /// the block calls it).
    #[inline(always)]
    unsafe fn block_exclusive_sum(v: u32, warp_totals: *mut u32) -> u32 {
        let lane = thread_idx_x() % WARP_SIZE;
        let warp = thread_idx_x() / WARP_SIZE;
        let x = warp_inclusive_sum(v);
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

    /// The sum of `v` over this lane and the warp's lanes below it.
    #[inline(always)]
    fn warp_inclusive_sum(v: u32) -> u32 {
        let lane = thread_idx_x() % WARP_SIZE;
        let mut x = v;
        unroll!(k in [0 1 2 3 4] => {
            let y: u32 = shfl_up(x, 1u32 << k);
            if lane >= 1u32 << k {
                x += y;
            }
        });
        x
    }

    /// The index in its tile of a thread's `i`-th key: each warp holds
    /// `32 * ITEMS` consecutive keys, lane `l` every 32nd from the `l`-th
    /// (each load of the warp is one coalesced line).
    #[inline(always)]
    fn item_index<const ITEMS: usize>(i: usize) -> u32 {
        let lane = thread_idx_x() % WARP_SIZE;
        let warp = thread_idx_x() / WARP_SIZE;
        (warp * ITEMS as u32 + i as u32) * WARP_SIZE + lane
    }

    /// A thread's keys of a tile and (for pairs given as values) their
    /// values, valid where their index is below the tile's length.
    struct Tile<K, const ITEMS: usize> {
        keys: [K; ITEMS],
        values: [u32; ITEMS],
    }

    /// Loads this thread's keys of the tile of `len` keys at `x`, and their
    /// values from `v` unless it is null.
    ///
    /// A whole tile, and keys without values, each take a body of their
    /// own: the tests are made once a tile, not once an item.
    #[inline(always)]
    unsafe fn load_tile<K: SortKey, const ITEMS: usize>(
        x: *const K,
        v: *const u32,
        len: u32,
    ) -> Tile<K, ITEMS> {
        let whole = len == SORT_BLOCK * ITEMS as u32;
        match (whole, v.is_null()) {
            (true, true) => load_tile_of::<K, ITEMS, true, false>(x, v, len),
            (true, false) => load_tile_of::<K, ITEMS, true, true>(x, v, len),
            (false, true) => load_tile_of::<K, ITEMS, false, false>(x, v, len),
            (false, false) => load_tile_of::<K, ITEMS, false, true>(x, v, len),
        }
    }

    /// [`load_tile`] of a whole tile (`WHOLE`) or a partial one, with
    /// values (`VALUES`, `v` not null) or without.
    #[inline(always)]
    unsafe fn load_tile_of<
        K: SortKey,
        const ITEMS: usize,
        const WHOLE: bool,
        const VALUES: bool,
    >(
        x: *const K,
        v: *const u32,
        len: u32,
    ) -> Tile<K, ITEMS> {
        let mut t = Tile {
            // SAFETY: every key type is an integer or a float, for which
            // all-zero bits are a value.
            keys: [core::mem::zeroed(); ITEMS],
            values: [0; ITEMS],
        };
        each_item!(i => {
            let at = item_index::<ITEMS>(i);
            if WHOLE || at < len {
                t.keys[i] = *x.add(at as usize);
                if VALUES {
                    t.values[i] = *v.add(at as usize);
                }
            }
        });
        t
    }

    /// Counts each warp's keys of each digit into `s.counts` (zeroed
    /// here) and returns, for threads below the digit count, the tile's
    /// count of the thread's digit. The adds are fire-and-forget shared
    /// atomics: no key waits for another.
    #[inline(always)]
    unsafe fn count_digits<K, H: Held<K>, const ITEMS: usize>(
        shape: SortShape,
        keys: &[H; ITEMS],
        len: u32,
        digit: Digit,
        s: &Carved<K>,
    ) -> u32 {
        let digits = shape.digits();
        let mut t = thread_idx_x();
        while t < SORT_WARPS * digits {
            *s.counts.add(t as usize) = 0;
            t += SORT_BLOCK;
        }
        sync_threads();
        let warp = thread_idx_x() / WARP_SIZE;
        let counts = shared_address(s.counts.add((warp * digits) as usize));
        // A whole tile's keys are all counted: no test an item.
        if len == shape.tile() as u32 {
            each_item!(i => {
                red_shared_add_u32(counts + 4 * keys[i].digit(digit), chain_one::<ITEMS>(i));
            });
        } else {
            each_item!(i => {
                if item_index::<ITEMS>(i) < len {
                    red_shared_add_u32(counts + 4 * keys[i].digit(digit), chain_one::<ITEMS>(i));
                }
            });
        }
        sync_threads();
        let me = thread_idx_x();
        let mut total = 0;
        if me < digits {
            for w in 0..SORT_WARPS {
                let c = *s.counts.add((w * digits + me) as usize);
                total += if two_chains(ITEMS) {
                    (c & CHAIN_MASK) + (c >> 16)
                } else {
                    c
                };
            }
        }
        total
    }

    /// Keys of a thread's first chain ([`place_keys_of`]), of `items`: its
    /// first half in wide tiles, the rest its second; all of them in the
    /// others. A wide tile's pass holds two blocks an SM, and its keys'
    /// atomics wait on each other's round trips: two chains made a sort
    /// of 2^24 pairs 2 to 3 % faster on the H200. Passes of smaller tiles
    /// (four or five blocks an SM) are bound by issue: sorts of keys and
    /// rows lost 3 to 5 % with two.
    const fn first_chain(items: usize) -> usize {
        if items > ONESWEEP_ITEMS as usize {
            items.div_ceil(2)
        } else {
            items
        }
    }

    /// Whether a thread's `items` keys run as two chains.
    const fn two_chains(items: usize) -> bool {
        first_chain(items) < items
    }

    /// One of key `i` (of `ITEMS` a thread) in a warp's word for a digit:
    /// its low half counts the thread's first chain, its high half the
    /// second. Places in a tile fit a half (the assertion below).
    #[inline(always)]
    const fn chain_one<const ITEMS: usize>(i: usize) -> u32 {
        if i < first_chain(ITEMS) { 1 } else { 1 << 16 }
    }

    /// The low half of a warp's word for a digit.
    const CHAIN_MASK: u32 = 0xFFFF;

    const _: () = {
        let mut i = 0;
        while i < WIDE_PAIR_ITEMS.len() {
            assert!(SORT_BLOCK * WIDE_PAIR_ITEMS[i] <= CHAIN_MASK + 1);
            i += 1;
        }
    };

    /// For the thread's digit (threads below the digit count), whose keys
    /// start at `start` in the sorted tile: each warp's counts of it in
    /// `s.counts` (its two chains') become the places of the first key of
    /// it in each chain, packed as the counts were ([`chain_one`]).
    /// A block barrier must follow before the places are read.
    #[inline(always)]
    unsafe fn warp_places<K>(shape: SortShape, start: u32, s: &Carved<K>) {
        let digits = shape.digits();
        let me = thread_idx_x();
        if me < digits {
            let mut place = start;
            for w in 0..SORT_WARPS {
                let c = s.counts.add((w * digits + me) as usize);
                if two_chains(shape.items as usize) {
                    let (first, second) = (*c & CHAIN_MASK, *c >> 16);
                    *c = place | (place + first) << 16;
                    place += first + second;
                } else {
                    let here = *c;
                    *c = place;
                    place += here;
                }
            }
        }
    }

    /// Places each of the thread's valid keys in the sorted tile, stably:
    /// its warp's next place for its digit (in `s.counts`, after
    /// [`warp_places`] and a barrier) plus the lanes below holding the same
    /// digit, found with a ballot a bit. The lane leading each digit's
    /// lanes advances the warp's place with one shared atomic and shares
    /// the old place. Calls `put(i, index in tile, digit, place)`; every
    /// lane of the warp takes part.
    #[inline(always)]
    unsafe fn place_keys<K, H: Held<K>, const ITEMS: usize>(
        shape: SortShape,
        keys: &[H; ITEMS],
        len: u32,
        digit: Digit,
        s: &Carved<K>,
        put: impl FnMut(usize, u32, u32, u32),
    ) {
        // A whole tile needs no check of which keys are there.
        if len == shape.tile() as u32 {
            place_keys_of::<K, H, ITEMS, true>(shape, keys, len, digit, s, put)
        } else {
            place_keys_of::<K, H, ITEMS, false>(shape, keys, len, digit, s, put)
        }
    }

    /// [`place_keys`] for a whole tile (`FULL`) or a partial one.
    ///
    /// In wide tiles a thread's keys run as two chains, its first half and
    /// its second ([`first_chain`]), each advancing its own half of the
    /// warp's word for a digit: a key's atomic waits for the one before
    /// it in its chain only, so each step has two in flight.
    #[inline(always)]
    unsafe fn place_keys_of<K, H: Held<K>, const ITEMS: usize, const FULL: bool>(
        shape: SortShape,
        keys: &[H; ITEMS],
        len: u32,
        digit: Digit,
        s: &Carved<K>,
        mut put: impl FnMut(usize, u32, u32, u32),
    ) {
        let lane = thread_idx_x() % WARP_SIZE;
        let warp = thread_idx_x() / WARP_SIZE;
        let counts = shared_address(s.counts.add((warp * shape.digits()) as usize));
        let below = lanemask_lt();
        let half = first_chain(ITEMS);
        each_item!(k => {
            if k < half {
                let a = match_key::<K, H, ITEMS, FULL>(shape, keys, k, len, digit);
                let b = (k + half < ITEMS).then(|| {
                    match_key::<K, H, ITEMS, FULL>(shape, keys, k + half, len, digit)
                });
                // The highest lane of each digit's lanes advances its
                // chain's place for the digit; the shuffles share them.
                // Two chains' atomics are predicated, to be issued back
                // to back; one chain's is a branch, as its passes were
                // measured.
                let lead = |m: &Matched| m.valid && lane == m.leader;
                let old_a = if two_chains(ITEMS) {
                    atomic_shared_add_u32_if(lead(&a), counts + 4 * a.digit, a.peers.count_ones())
                } else if lead(&a) {
                    atomic_shared_add_u32(counts + 4 * a.digit, a.peers.count_ones())
                } else {
                    0
                };
                let old_b = b.as_ref().map_or(0, |b| {
                    atomic_shared_add_u32_if(lead(b), counts + 4 * b.digit, b.peers.count_ones() << 16)
                });
                // One chain's places fill the word: no mask.
                let first_a = shfl_idx(old_a, a.leader);
                let first_a = if two_chains(ITEMS) {
                    first_a & CHAIN_MASK
                } else {
                    first_a
                };
                let first_b = b.as_ref().map_or(0, |b| shfl_idx(old_b, b.leader) >> 16);
                // The next key's atomic in each chain must follow this
                // one: the shuffle waits for the leader's old value (the
                // atomic has happened), and the compiler may not move the
                // next atomic above it.
                compiler_order();
                if a.valid {
                    put(k, a.at, a.digit, first_a + (a.peers & below).count_ones());
                }
                if let Some(b) = b
                    && b.valid
                {
                    put(k + half, b.at, b.digit, first_b + (b.peers & below).count_ones());
                }
            }
        });
    }

    /// A thread's key of a tile, matched with its warp's lanes.
    struct Matched {
        /// Its index in the tile.
        at: u32,
        /// Whether the tile holds it.
        valid: bool,
        digit: u32,
        /// The lanes holding a valid key of the same digit.
        peers: u32,
        /// The highest of them (the lane itself where not valid).
        leader: u32,
    }

    /// Matches the thread's key `i` with the warp's lanes holding the same
    /// digit: a ballot a bit of the digit.
    #[inline(always)]
    fn match_key<K, H: Held<K>, const ITEMS: usize, const FULL: bool>(
        shape: SortShape,
        keys: &[H; ITEMS],
        i: usize,
        len: u32,
        digit: Digit,
    ) -> Matched {
        let at = item_index::<ITEMS>(i);
        let valid = FULL || at < len;
        let d = keys[i].digit(digit);
        // The lanes agreeing with this one on each bit (all of them past
        // the digit's bits), and-ed as a tree: the ballots do not wait for
        // each other, and the masks meet in two steps, not eight.
        let mut agree = [FULL_MASK; 9];
        unroll!(b in [0 1 2 3 4 5 6 7] => {
            if (b as u32) < shape.bits {
                agree[b] = match_bit(d, b as u32);
            }
        });
        if !FULL {
            agree[8] = ballot(valid);
        }
        let peers = and3(
            and3(agree[0], agree[1], agree[2]),
            and3(agree[3], agree[4], agree[5]),
            and3(agree[6], agree[7], agree[8]),
        );
        let lane = thread_idx_x() % WARP_SIZE;
        Matched {
            at,
            valid,
            digit: d,
            peers,
            leader: if valid {
                31 - peers.leading_zeros()
            } else {
                lane
            },
        }
    }

    /// Stores the sorted tile from shared memory: consecutive threads
    /// store consecutive keys, of one digit mostly, at `s.offsets[digit]`
    /// plus their place, where that is below `limit` (a top-k keeps the
    /// first places of a row only). The tile's keys are held in `s.keys`
    /// as `H`, of the key's size.
    #[inline(always)]
    unsafe fn store_sorted<K, H: Held<K>, const ITEMS: usize>(
        len: u32,
        digit: Digit,
        s: &Carved<K>,
        out: (*mut K, *mut u32),
        pairs: bool,
        limit: u32,
    ) {
        // A whole tile of a sort (no limit: a sort's places are below
        // 2^32 - 1) stores every key: no test an item.
        if len == SORT_BLOCK * ITEMS as u32 && limit == u32::MAX {
            store_sorted_of::<K, H, ITEMS, true>(len, digit, s, out, pairs, limit)
        } else {
            store_sorted_of::<K, H, ITEMS, false>(len, digit, s, out, pairs, limit)
        }
    }

    /// [`store_sorted`] storing every key (`ALL`), or those below `len`
    /// whose place is below `limit`.
    #[inline(always)]
    unsafe fn store_sorted_of<K, H: Held<K>, const ITEMS: usize, const ALL: bool>(
        len: u32,
        digit: Digit,
        s: &Carved<K>,
        (out, out_values): (*mut K, *mut u32),
        pairs: bool,
        limit: u32,
    ) {
        each_item!(i => {
            let place = i as u32 * SORT_BLOCK + thread_idx_x();
            if ALL || place < len {
                let (k, v) = if joined::<H>(pairs) {
                    get_pair::<K, H>(s, place)
                } else {
                    (*s.keys.cast::<H>().add(place as usize), 0)
                };
                let d = k.digit(digit) as usize;
                let to = (*s.offsets.add(d)).wrapping_add(place);
                if ALL || to < limit {
                    *out.add(to as usize) = k.key(digit);
                    if pairs {
                        *out_values.add(to as usize) = if joined::<H>(pairs) {
                            v
                        } else {
                            *s.values.add(place as usize)
                        };
                    }
                }
            }
        });
    }

    /// Steps 1-4's tile of this block over `n` keys: its index, the
    /// launch's tiles, its first key and its length.
    #[inline(always)]
    fn block_tile(shape: SortShape, n: usize) -> (usize, usize, usize, u32) {
        let tile = block_idx_x() as usize;
        let first = tile * shape.tile();
        let len = Ord::min(shape.tile(), n - first) as u32;
        (tile, n.div_ceil(shape.tile()), first, len)
    }

    /// Steps 1-4, first launch of a pass: tile `b`'s count of digit `d`
    /// to `counts[d * tiles + b]`.
    ///
    /// # Safety
    /// The common contract; `counts` valid for `digits * tiles` writes;
    /// one block per tile.
    #[inline(always)]
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
        let (tile, tiles, first, len) = block_tile(shape, a.n);
        let t = load_tile::<K, ITEMS>(a.keys.add(first), core::ptr::null(), len);
        let count = count_digits(shape, &t.keys, len, a.digit(), &s);
        let me = thread_idx_x();
        if me < shape.digits() {
            *a.counts.add(me as usize * tiles + tile) = count;
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
    #[inline(always)]
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
        let (tile, tiles, first, len) = block_tile(shape, a.n);
        let pairs = !a.out_values.is_null();
        let values = if a.values.is_null() {
            a.values
        } else {
            a.values.add(first)
        };
        let t = load_tile::<K, ITEMS>(a.keys.add(first), values, len);
        let digit = a.digit();
        let count = count_digits(shape, &t.keys, len, digit, &s);
        let me = thread_idx_x();
        let start = block_exclusive_sum(if me < shape.digits() { count } else { 0 }, s.warp_totals);
        warp_places(shape, start, &s);
        if me < shape.digits() {
            let place = *a.offsets.add(me as usize * tiles + tile);
            *s.offsets.add(me as usize) = place.wrapping_sub(start);
        }
        sync_threads();
        let value = |i: usize, at: u32| {
            if a.values.is_null() {
                (first + at as usize) as u32
            } else {
                t.values[i]
            }
        };
        if shape.local {
            place_keys(shape, &t.keys, len, digit, &s, |i, at, _, place| {
                put_sorted(&s, place, t.keys[i], pairs, || value(i, at));
            });
            sync_threads();
            store_sorted::<K, K, ITEMS>(len, digit, &s, (a.out, a.out_values), pairs, u32::MAX);
        } else {
            place_keys(shape, &t.keys, len, digit, &s, |i, at, d, place| {
                let to = (*s.offsets.add(d as usize)).wrapping_add(place) as usize;
                *a.out.add(to) = t.keys[i];
                if pairs {
                    *a.out_values.add(to) = value(i, at);
                }
            });
        }
    }

    /// Step 5's first launch: every pass's digit counts of every row,
    /// added to `hist[pass][row][digit]` (zeroed before), and for `f32`
    /// keys whether any is a NaN: the word after the counts made non-zero
    /// where one is. Block `(b, y)` counts slice `b` of the grid's `x`
    /// slices of rows `y`, `y` plus the grid's height, and so on.
    ///
    /// # Safety
    /// The common contract, each of `rows` rows `width` keys from `pitch`
    /// apart; `hist` valid for `passes * rows * 256 + 1` words that only
    /// this launch's atomics touch.
    pub unsafe fn histogram<K: Holds>(a: HistogramArgs<K>) {
        let counters = dynamic_shared::<u32>();
        let span = a.width.div_ceil(grid_dim_x() as usize);
        let from = Ord::min(a.width, block_idx_x() as usize * span);
        let to = Ord::min(a.width, from + span);
        let bits = a.end_bit - a.begin_bit;
        let mask = if bits == 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        let counted = a.passes * RADIX;
        let at = shared_address(counters) + 4 * counted * (thread_idx_x() % HISTOGRAM_COPIES);
        let descending = a.descending != 0;
        // Counts a key, whose `Radix` bits may be used where `no_nan`
        // (4-byte keys' digits are taken with 32-bit shifts).
        let count = |key: K, no_nan: bool| {
            if K::BYTES == 4 {
                let o = if K::BY_RADIX && no_nan {
                    key.radix(flip(descending))
                } else {
                    key.ordered(descending) as u32
                };
                let o = (o >> (a.begin_bit & 31)) & mask as u32;
                unroll!(p in [0 1 2 3] => {
                    if (p as u32) < a.passes {
                        let d = (o >> (8 * p)) & 0xff;
                        red_shared_add_u32(at + 4 * (p as u32 * RADIX + d), 1);
                    }
                });
            } else {
                let o = (key.ordered(descending) >> a.begin_bit) & mask;
                unroll!(p in [0 1 2 3 4 5 6 7] => {
                    if (p as u32) < a.passes {
                        let d = ((o >> (8 * p)) & 0xff) as u32;
                        red_shared_add_u32(at + 4 * (p as u32 * RADIX + d), 1);
                    }
                });
            }
        };
        // Whether this thread has seen a NaN (`f32` keys).
        let mut seen = false;
        let mut row = block_idx_y() as usize;
        while row < a.rows {
            let mut t = thread_idx_x();
            while t < HISTOGRAM_COPIES * counted {
                *counters.add(t as usize) = 0;
                t += HISTOGRAM_BLOCK;
            }
            sync_threads();
            let keys = a.keys.add(row * a.pitch);
            // Loads HISTOGRAM_LOADS keys a thread before counting them, so
            // that enough loads are in flight to keep the memory busy.
            const STRIDE: usize = HISTOGRAM_BLOCK as usize;
            let mut i = from + thread_idx_x() as usize;
            while i + (HISTOGRAM_LOADS - 1) * STRIDE < to {
                // SAFETY: every key type is an integer or a float, for
                // which all-zero bits are a value.
                let mut k: [K; HISTOGRAM_LOADS] = [core::mem::zeroed(); HISTOGRAM_LOADS];
                unroll!(u in [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15] => {
                    if u < HISTOGRAM_LOADS {
                        k[u] = *keys.add(i + u * STRIDE);
                    }
                });
                // `f32` keys: one NaN among this thread's keys sends them
                // all through the NaN test.
                let mut nan = false;
                if K::BY_RADIX {
                    unroll!(u in [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15] => {
                        if u < HISTOGRAM_LOADS {
                            nan |= k[u].is_nan();
                        }
                    });
                }
                unroll!(u in [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15] => {
                    if u < HISTOGRAM_LOADS {
                        count(k[u], !nan);
                    }
                });
                seen |= nan;
                i += HISTOGRAM_LOADS * STRIDE;
            }
            while i < to {
                let key = *keys.add(i);
                seen |= key.is_nan();
                count(key, false);
                i += STRIDE;
            }
            sync_threads();
            let mut t = thread_idx_x();
            while t < counted {
                let mut c = 0;
                for copy in 0..HISTOGRAM_COPIES {
                    c += *counters.add((copy * counted + t) as usize);
                }
                if c != 0 {
                    let (pass, d) = ((t / RADIX) as usize, (t % RADIX) as usize);
                    atomic_add_u32(a.hist.add((pass * a.rows + row) * RADIX as usize + d), c);
                }
                t += HISTOGRAM_BLOCK;
            }
            row += grid_dim_y() as usize;
        }
        // One add a warp that saw a NaN makes the word after the counts
        // say so.
        if K::BY_RADIX && vote_any(seen) && thread_idx_x().is_multiple_of(WARP_SIZE) {
            red_add_u32(a.hist.add(a.passes as usize * a.rows * RADIX as usize), 1);
        }
    }

    /// Step 5, between: `bases[b][digit]`, where the keys of that digit
    /// start in their row of a pass's output: the exclusive sum of the
    /// digits' counts `hist[b]`, one block `b` for each pass and row.
    ///
    /// # Safety
    /// `hist` and `bases` valid for 256 words a block of the grid.
    pub unsafe fn bases<T: Copy + Into<u32>>(a: BasesArgs<T>) {
        let warp_totals = dynamic_shared::<u32>();
        let at = block_idx_x() as usize * RADIX as usize + thread_idx_x() as usize;
        let total: u32 = (*a.hist.add(at)).into();
        *a.bases.add(at) = block_exclusive_sum(total, warp_totals);
    }

    /// Step 5, one pass over rows of `width` keys, each `pitch` from the
    /// last (keys and values alike; outputs `out_pitch` and
    /// `out_values_pitch`): each tile takes its index from the ticket at
    /// `status[0]` (row `tile / tiles_per_row`), counts its digits and
    /// publishes the counts at once, places its keys in digit order in
    /// shared memory, looks back over its row's predecessors' statuses for
    /// the count of each digit before it, and stores its keys at its row's
    /// `bases[row][digit]` plus that, where that place is below `limit`.
    /// A row of one tile (`tiles_per_row` 1) needs no ticket, status or
    /// bases: its blocks are its tiles, and its digits start where the
    /// tile's do (`bases` and `status` are not read). `f32` keys of a sort
    /// whose histogram saw no NaN (`nan` not null and zero) are read and
    /// written as their ordered bits as `carry` says ([`CARRY_IN`],
    /// [`CARRY_OUT`]), and no tile searches its keys for NaN.
    ///
    /// # Safety
    /// The common contract, for every row of the grid's tiles;
    /// `width` at most `PORTION`; with several tiles a row: `bases` 256
    /// words a row, `status` `STATUS_START` + 256 words a tile, zero
    /// before the launch and touched by nothing else during it; `nan`
    /// null or a word nothing writes during the launch.
    #[inline(always)]
    pub unsafe fn onesweep<K: Holds, const PAIRS: u32>(a: OnesweepArgs<K>) {
        onesweep_items::<K, PAIRS, { ONESWEEP_ITEMS as usize }>(a)
    }

    /// [`onesweep`] over pairs in wide tiles: `ITEMS` keys a thread, one of
    /// [`WIDE_PAIR_ITEMS`].
    ///
    /// # Safety
    /// [`onesweep`]'s.
    #[inline(always)]
    pub unsafe fn onesweep_wide<K: Holds, const ITEMS: usize>(a: OnesweepArgs<K>) {
        onesweep_items::<K, 1, ITEMS>(a)
    }

    /// The middle passes (every pass but the first and the last) of a
    /// sort of `f32` pairs with histograms, in wide tiles of `ITEMS` keys
    /// a thread. Where the histogram saw no NaN, the keys read and written
    /// are their carried bits, whose digits are a shift and a mask as
    /// those of `u32` keys: the pass holds no more than the integer entry
    /// of its size does, and takes its tiles. Else it holds the keys
    /// themselves and takes each digit with its NaN test, in every tile
    /// (no tile votes, unlike [`onesweep`]'s, whose other path would not
    /// fit 128 registers at this size).
    ///
    /// # Safety
    /// [`onesweep`]'s; a pass after the first and before the last, `a.nan`
    /// the NaN word of the sort's histograms (the keys read are bits
    /// where it is zero).
    #[inline(always)]
    pub unsafe fn onesweep_wide_middle<K: Holds, const ITEMS: usize>(a: OnesweepArgs<K>) {
        let (s, (ticket, tile), first, len, t) = begin::<K, 1, ITEMS>(&a);
        if K::BY_RADIX && !a.nan.is_null() && *a.nan == 0 {
            let mut c = Tile::<Carried, ITEMS> {
                keys: [Bits(0); ITEMS],
                values: t.values,
            };
            each_item!(i => {
                c.keys[i] = Bits(t.keys[i].carried());
            });
            return pass::<K, Carried, 1, ITEMS>(&a, &s, c, (ticket, tile), first, len);
        }
        pass::<K, K, 1, ITEMS>(&a, &s, t, (ticket, tile), first, len)
    }

    /// The start of a pass in tiles of `ITEMS` keys a thread: the block's
    /// shared memory carved, its ticket and tile in its row, the row's
    /// key its tile starts at, the tile's length and its keys (and
    /// values) loaded.
    #[inline(always)]
    unsafe fn begin<K: Holds, const PAIRS: u32, const ITEMS: usize>(
        a: &OnesweepArgs<K>,
    ) -> (Carved<K>, (u32, u32), usize, u32, Tile<K, ITEMS>) {
        let shape = SortVariant::Onesweep.shape().with_items(ITEMS as u32);
        let s = carve::<K>(shape);
        let alone = a.tiles_per_row == 1;
        if alone {
            if thread_idx_x() == 0 {
                *s.tile = block_idx_x();
            }
        } else {
            // The ticket mostly hands a block its own index: L2 fetches
            // that tile while the ticket is on its way (a hint; where the
            // guess is wrong, another block reads that tile soon).
            // Whole rounds of the block's threads, so that no line past
            // the tile is asked for: two for a wide tile of pairs, one
            // for the others (of `u64` pairs, the keys only).
            let bytes = K::BYTES as usize + if PAIRS != 0 { 4 } else { 0 };
            let rounds = (shape.tile() * bytes / 128 / SORT_BLOCK as usize).max(1);
            a.prefetch(block_idx_x(), shape.tile(), rounds);
            if thread_idx_x() == 0 {
                *s.tile = atomic_add_u32(a.status, 1);
            }
        }
        sync_threads();
        let (ticket, row, tile) = a.place(&s);
        let first = tile as usize * shape.tile();
        let len = Ord::min(shape.tile(), a.width - first) as u32;
        let from = row as usize * a.pitch + first;
        let values = if a.values.is_null() {
            a.values
        } else {
            a.values.add(from)
        };
        let t = load_tile::<K, ITEMS>(a.keys.add(from), values, len);
        (s, (ticket, tile), first, len, t)
    }

    /// [`onesweep`] with `ITEMS` keys a thread.
    #[inline(always)]
    unsafe fn onesweep_items<K: Holds, const PAIRS: u32, const ITEMS: usize>(a: OnesweepArgs<K>) {
        let (s, (ticket, tile), first, len, t) = begin::<K, PAIRS, ITEMS>(&a);
        // A sort without NaN (its histogram saw none) carries its keys'
        // bits between passes: `CARRY_IN`, the keys read are bits;
        // `CARRY_OUT`, bits are written.
        let carry = if !K::BY_RADIX || a.nan.is_null() || *a.nan != 0 {
            0
        } else {
            a.carry
        };
        if carry != 0 {
            let flip = a.digit().flip;
            let mut bits = [0u32; ITEMS];
            if carry & CARRY_IN != 0 {
                each_item!(i => {
                    bits[i] = t.keys[i].carried();
                });
            } else {
                each_item!(i => {
                    bits[i] = t.keys[i].radix(flip);
                });
            }
            let values = t.values;
            if carry & CARRY_OUT != 0 {
                let c = Tile::<Carried, ITEMS> {
                    keys: bits.map(Bits),
                    values,
                };
                return pass::<K, Carried, PAIRS, ITEMS>(&a, &s, c, (ticket, tile), first, len);
            }
            let r = Tile::<Radix, ITEMS> {
                keys: bits.map(Bits),
                values,
            };
            return pass::<K, Radix, PAIRS, ITEMS>(&a, &s, r, (ticket, tile), first, len);
        }
        if K::BY_RADIX {
            // Where the histogram saw no NaN in the whole sort (the word is
            // the same for every thread), no tile has one; else the
            // block asks its keys (past the tile's length they are zero,
            // not NaN).
            let clean = !a.nan.is_null() && *a.nan == 0;
            let nan = !clean && {
                let mut nan = false;
                each_item!(i => {
                    nan |= t.keys[i].is_nan();
                });
                sync_threads_or(nan)
            };
            if !nan {
                let flip = a.digit().flip;
                let mut r = Tile {
                    keys: [Bits(0); ITEMS],
                    values: t.values,
                };
                each_item!(i => {
                    r.keys[i] = Bits(t.keys[i].radix(flip));
                });
                return pass::<K, Radix, PAIRS, ITEMS>(&a, &s, r, (ticket, tile), first, len);
            }
        }
        pass::<K, K, PAIRS, ITEMS>(&a, &s, t, (ticket, tile), first, len)
    }

    /// The rest of [`onesweep`], from the tile's keys, held as `H`: the
    /// tile `tile` of its row (ticket `ticket`), of `len` keys from the
    /// row's key `first`.
    #[inline(always)]
    unsafe fn pass<K: SortKey, H: Held<K>, const PAIRS: u32, const ITEMS: usize>(
        a: &OnesweepArgs<K>,
        s: &Carved<K>,
        t: Tile<H, ITEMS>,
        (ticket, tile): (u32, u32),
        first: usize,
        len: u32,
    ) {
        let shape = SortVariant::Onesweep.shape().with_items(ITEMS as u32);
        let pairs = PAIRS != 0;
        let alone = a.tiles_per_row == 1;
        let digit = a.digit();
        let count = count_digits(shape, &t.keys, len, digit, s);
        // Publish at once, before the keys are placed: the tile's count,
        // or its inclusive prefix where it is the first of its row.
        let me = thread_idx_x() as usize;
        let statuses = a.status.add(STATUS_START);
        if !alone {
            store_relaxed_u32(
                statuses.add(ticket as usize * RADIX as usize + me),
                if tile == 0 { FLAG_PREFIX } else { FLAG_TOTAL } | count,
            );
        }
        let start = block_exclusive_sum(count, s.warp_totals);
        warp_places(shape, start, s);
        sync_threads();
        place_keys(shape, &t.keys, len, digit, s, |i, at, _, place| {
            let value = || {
                if a.values.is_null() {
                    (first + at as usize) as u32
                } else {
                    t.values[i]
                }
            };
            put_sorted(s, place, t.keys[i], pairs, value);
        });
        // Where the tile is, read again from shared memory rather than
        // kept in registers through the placing.
        let (ticket, row, tile) = a.place(s);
        // The count of this digit in the row's tiles before: their
        // statuses, back to the nearest inclusive prefix, LOOKBACK read at
        // once (one wait for all of them; the row's first tile's is a
        // prefix, so no read passes it).
        let mut before = 0u32;
        if tile > 0 {
            // The statuses before tile `p` (a ticket) are still to add.
            // 32-bit: a sort takes fewer than 2^32 keys (the host's
            // bound), so its tiles' statuses are fewer than 2^28 words.
            let mut p = ticket;
            let row_start = ticket - tile;
            'walk: loop {
                let mut seen = [FLAG_PREFIX; LOOKBACK];
                unroll!(k in [0 1 2 3] => {
                    if p > row_start + k as u32 {
                        let at = (p - 1 - k as u32) * RADIX + me as u32;
                        seen[k] = load_relaxed_u32(statuses.add(at as usize));
                    }
                });
                unroll!(k in [0 1 2 3] => {
                    let status = seen[k];
                    if status & !COUNT_MASK == 0 {
                        // Not published yet: read again from here.
                        continue 'walk;
                    }
                    before += status & COUNT_MASK;
                    if status & FLAG_PREFIX != 0 {
                        break 'walk;
                    }
                    p -= 1;
                });
            }
            store_relaxed_u32(
                statuses.add(ticket as usize * RADIX as usize + me),
                FLAG_PREFIX | (before + count),
            );
        }
        let base = if alone {
            start
        } else {
            *a.bases.add(row as usize * RADIX as usize + me)
        };
        *s.offsets.add(me) = base.wrapping_add(before).wrapping_sub(start);
        sync_threads();
        let len = Ord::min(shape.tile(), a.width - tile as usize * shape.tile()) as u32;
        let out = (
            a.out.add(row as usize * a.out_pitch),
            if pairs {
                a.out_values.add(row as usize * a.out_values_pitch)
            } else {
                a.out_values
            },
        );
        store_sorted::<K, H, ITEMS>(len, digit, s, out, pairs, a.limit as u32);
    }

    /// The arguments of a selection level.
    pub struct SelectArgs<K> {
        pub keys: *const K,
        pub indices: *const u32,
        pub width: usize,
        pub rows: usize,
        pub pitch: usize,
        pub k: u32,
        pub begin_bit: u32,
        pub end_bit: u32,
        pub descending: u32,
        pub index_bits: u32,
        pub out_keys: *mut K,
        pub out_indices: *mut u32,
        pub out_keys_pitch: usize,
        pub out_indices_pitch: usize,
        pub sorted: u32,
    }

    /// The arguments of an argmax level.
    pub struct ArgmaxArgs<K> {
        pub keys: *const K,
        pub columns: *const u32,
        pub width: usize,
        pub rows: usize,
        pub pitch: usize,
        pub descending: u32,
        pub out_keys: *mut K,
        pub out_indices: *mut u32,
    }

    /// A key's place in a row's order: its ordered bits within the bit
    /// range, then its column. No two keys of a row share one.
    #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
    struct Rank {
        bits: u64,
        column: u32,
    }

    /// Ordered bits `begin..end` of keys, as [`Rank`]s compare them.
    #[derive(Clone, Copy)]
    struct Order {
        begin: u32,
        mask: u64,
        descending: bool,
    }

    impl Order {
        fn new(begin: u32, end: u32, descending: u32) -> Order {
            let bits = end - begin;
            Order {
                begin,
                mask: if bits == 64 {
                    u64::MAX
                } else {
                    (1u64 << bits) - 1
                },
                descending: descending != 0,
            }
        }

        #[inline(always)]
        fn rank<K: SortKey>(self, key: K, column: u32) -> Rank {
            Rank {
                bits: (key.ordered(self.descending) >> self.begin) & self.mask,
                column,
            }
        }
    }

    /// The places of a selection level's shared memory.
    #[derive(Clone, Copy)]
    struct SelectShared<K> {
        /// [0] the digit chosen, [1] the keys before it, [2] the keys of
        /// it, [3] the keys taking part, [4] places handed out, [5] the
        /// filter's candidates.
        header: *mut u32,
        warp_totals: *mut u32,
        hist: *mut u32,
        stage_columns: *mut u32,
        stage_keys: *mut K,
    }

    /// Where a selection level's radix select starts: the top bits of
    /// the ranks that every key taking part shares (`prefix` under
    /// `mask`), and the bits above `high` are those.
    #[derive(Clone, Copy)]
    struct Start {
        prefix: Rank,
        mask: Rank,
        high: u32,
    }

    /// The digits of a selection level's radix select, from the top of
    /// the ranks' bits: `prefix` under `mask` are those chosen.
    struct Chosen {
        prefix: Rank,
        mask: Rank,
        /// Keys kept: `k`, or all the keys taking part where fewer.
        kept: u32,
    }

    /// The radix select of the first `k` of the block's keys (a column of
    /// `NO_INDEX`: no key), every one of which has the bits `start`
    /// names: a histogram of the next digit of the keys' ranks, the digit
    /// where the count reaches the keys still wanted, then the next digit
    /// among the keys of that digit only, until the keys of the digits
    /// chosen are exactly the keys still wanted (ranks are distinct, so
    /// the columns' digits end it at the latest).
    ///
    /// # Safety
    /// Every thread of the block calls it; `s` as [`select`] lays it out.
    #[inline(always)]
    unsafe fn select_digits<K: SortKey, const ITEMS: usize>(
        keys: &[K; ITEMS],
        columns: &[u32; ITEMS],
        order: Order,
        a: &SelectArgs<K>,
        s: SelectShared<K>,
        start: Start,
    ) -> Chosen {
        let me = thread_idx_x();
        let hist_at = shared_address(s.hist);
        let (mut prefix, mut mask, mut high) = (start.prefix, start.mask, start.high);
        let mut wanted = a.k;
        let mut settled = false;
        // The first round counts the keys taking part, even where no bit
        // is left to choose.
        let mut first = true;
        while first || (high > 0 && !settled) {
            // Digits never straddle the key's bits and the column's.
            let bits = if high > a.index_bits {
                Ord::min(8, high - a.index_bits)
            } else {
                Ord::min(8, high)
            };
            let shift = high - bits;
            let digit_mask = (1u32 << bits) - 1;
            let digit = |r: Rank| {
                if shift >= a.index_bits {
                    ((r.bits >> (shift - a.index_bits)) as u32) & digit_mask
                } else {
                    (r.column >> shift) & digit_mask
                }
            };
            *s.hist.add(me as usize) = 0;
            sync_threads();
            each_item!(i => {
                if columns[i] != NO_INDEX {
                    let r = order.rank(keys[i], columns[i]);
                    if r.bits & mask.bits == prefix.bits && r.column & mask.column == prefix.column {
                        red_shared_add_u32(hist_at + 4 * digit(r), 1);
                    }
                }
            });
            sync_threads();
            let c = *s.hist.add(me as usize);
            let before = block_exclusive_sum(c, s.warp_totals);
            if first {
                first = false;
                if me == SORT_BLOCK - 1 {
                    *s.header.add(3) = before + c;
                }
                sync_threads();
                wanted = Ord::min(wanted, *s.header.add(3));
                if wanted == 0 {
                    break;
                }
            }
            if c > 0 && before < wanted && wanted <= before + c {
                *s.header = me;
                *s.header.add(1) = before;
                *s.header.add(2) = c;
            }
            sync_threads();
            let (chosen, below, count) = (*s.header, *s.header.add(1), *s.header.add(2));
            wanted -= below;
            if shift >= a.index_bits {
                let at = shift - a.index_bits;
                prefix.bits |= (chosen as u64) << at;
                mask.bits |= (digit_mask as u64) << at;
            } else {
                prefix.column |= chosen << shift;
                mask.column |= digit_mask << shift;
            }
            settled = count == wanted;
            high = shift;
        }
        Chosen {
            prefix,
            mask,
            kept: Ord::min(a.k, *s.header.add(3)),
        }
    }

    /// Hands each of the block's keys that `chosen` keeps a place among
    /// the kept: to the stage (`sorted`), or to the row's outputs from
    /// place `slots` on.
    ///
    /// # Safety
    /// `s` as [`select`] lays it out, its places counter 0 and ordered
    /// before by a barrier; the outputs valid for `chosen.kept` writes
    /// from `slots`.
    #[inline(always)]
    unsafe fn select_keep<K: SortKey, const ITEMS: usize>(
        keys: &[K; ITEMS],
        columns: &[u32; ITEMS],
        order: Order,
        chosen: &Chosen,
        s: SelectShared<K>,
        sorted: bool,
        (keys_out, columns_out): (*mut K, *mut u32),
    ) {
        let place_at = shared_address(s.header.add(4));
        let (prefix, mask) = (chosen.prefix, chosen.mask);
        each_item!(i => {
            if columns[i] != NO_INDEX {
                let r = order.rank(keys[i], columns[i]);
                let (b, c) = (r.bits & mask.bits, r.column & mask.column);
                if (b, c) <= (prefix.bits, prefix.column) {
                    let place = atomic_shared_add_u32(place_at, 1) as usize;
                    if sorted {
                        *s.stage_keys.add(place) = keys[i];
                        *s.stage_columns.add(place) = columns[i];
                    } else {
                        *keys_out.add(place) = keys[i];
                        *columns_out.add(place) = columns[i];
                    }
                }
            }
        });
    }

    /// Where a thread's keys are many and `k` few: gathers to the stage
    /// the block's keys that may be among its first `k`, and says where
    /// their selection starts, if they fit it (`SELECT_MAX_K` places;
    /// else the stage holds no meaning and the block selects from all
    /// its keys).
    ///
    /// The bound: of the first `full` warps (each lane of which holds a
    /// place of the slice), each one's `ceil(k / full)`-th best of its
    /// threads' best keys, on the top 32 bits of the ranks' key bits.
    /// Each of them holds that many keys at or before its bound, so the
    /// block holds `k` keys at or before the last of their bounds: every
    /// key after it is after the `k`-th. A warp with fewer keys (empty
    /// places) bounds nothing. About `2k` keys of random data pass; they
    /// lie between the block's first key and the bound, so they share
    /// the top bits where those two agree, and the selection starts
    /// below them.
    ///
    /// # Safety
    /// Every thread of the block calls it; `s` as [`select`] lays it out,
    /// its candidates counter 0 and ordered before by a barrier; `full`
    /// from 1 to `SORT_WARPS`, `ceil(k / full)` at most 32.
    #[inline(always)]
    unsafe fn select_filter<K: SortKey, const ITEMS: usize>(
        keys: &[K; ITEMS],
        columns: &[u32; ITEMS],
        order: Order,
        a: &SelectArgs<K>,
        s: SelectShared<K>,
        full: u32,
    ) -> Option<Start> {
        const { assert!(ITEMS <= 32, "a thread's keys are bits of a u32") };
        let lane = thread_idx_x() % WARP_SIZE;
        let warp = thread_idx_x() / WARP_SIZE;
        let key_bits = a.end_bit - a.begin_bit;
        let drop = key_bits.saturating_sub(32);
        let coarse = |key: K| (order.rank(key, 0).bits >> drop) as u32;
        let mut best = u32::MAX;
        each_item!(i => {
            if columns[i] != NO_INDEX {
                best = Ord::min(best, coarse(keys[i]));
            }
        });
        // Bitonic sort of the warp's bests, ascending by lane.
        let mut v = best;
        unroll!(size in [2 4 8 16 32] => {
            let size = size as u32;
            let mut stride = size / 2;
            while stride > 0 {
                let other: u32 = shfl_xor(v, stride);
                let up = (lane & size == 0) != (lane & stride != 0);
                v = if up { Ord::min(v, other) } else { Ord::max(v, other) };
                stride /= 2;
            }
        });
        let c = a.k.div_ceil(full);
        let bound_of_warp: u32 = shfl_idx(v, c - 1);
        if lane == 0 {
            *s.warp_totals.add(warp as usize) = if warp < full { bound_of_warp } else { 0 };
            *s.hist.add(warp as usize) = v;
        }
        sync_threads();
        let (mut bound, mut low) = (0, u32::MAX);
        for w in 0..SORT_WARPS as usize {
            bound = Ord::max(bound, *s.warp_totals.add(w));
            low = Ord::min(low, *s.hist.add(w));
        }
        // Bit `i`: the thread's `i`-th key passes.
        let mut passes = 0u32;
        each_item!(i => {
            if columns[i] != NO_INDEX && coarse(keys[i]) <= bound {
                passes |= key_bit(i);
            }
        });
        let passing = passes.count_ones();
        let before = warp_inclusive_sum(passing);
        let total: u32 = shfl_idx(before, WARP_SIZE - 1);
        let base = if lane == WARP_SIZE - 1 {
            atomic_shared_add_u32(shared_address(s.header.add(5)), total)
        } else {
            0
        };
        let first = shfl_idx(base, WARP_SIZE - 1) + before - passing;
        each_item!(i => {
            if passes & key_bit(i) != 0 {
                let at = first + (passes & (key_bit(i) - 1)).count_ones();
                if at < SELECT_MAX_K {
                    *s.stage_keys.add(at as usize) = keys[i];
                    *s.stage_columns.add(at as usize) = columns[i];
                }
            }
        });
        sync_threads();
        if *s.header.add(5) > SELECT_MAX_K {
            return None;
        }
        // The top bits of the `width` bits of `low` and `bound` that agree
        // (`low <= bound`: every candidate lies between).
        let width = key_bits - drop;
        let known = Ord::min(((low ^ bound) << (32 - width)).leading_zeros(), width);
        let top = if known == 0 {
            0
        } else {
            ((1u64 << known) - 1) << (key_bits - known)
        };
        Some(Start {
            prefix: Rank {
                bits: ((low as u64) << drop) & top,
                column: 0,
            },
            mask: Rank {
                bits: top,
                column: 0,
            },
            high: key_bits - known + a.index_bits,
        })
    }

    /// One selection level over rows of `width` keys (and their columns
    /// in `indices`, or their own columns where that is null; a column of
    /// `NO_INDEX` is an empty place), `pitch` apart: block `(b, y)` takes
    /// slice `b` (`SELECT_SLICE` keys) of rows `y`, `y` plus the grid's
    /// height, and so on, and keeps the `k` first keys of the slice in
    /// the order of [`Rank`] (all of them where it has fewer).
    ///
    /// Where `k` is at most `SELECT_FILTER_MAX_K` (and at most 32 for
    /// each warp whose every lane holds a place), a bound first leaves
    /// a few candidates ([`select_filter`]), one a thread; the radix
    /// select ([`select_digits`]) then runs over them, or over all the
    /// slice's keys where they do not fit. The kept keys are those whose
    /// chosen digits are at most the ones chosen.
    ///
    /// Not `sorted`: slice `b` of a row writes its keys, in no order, to
    /// places `b * k ..` of the row's outputs, and marks the places it
    /// does not fill with `NO_INDEX`. `sorted` (a row of one slice): the
    /// keys in the order of their ranks to the row's first `k` places
    /// (keys where `out_keys` is not null, columns where `out_indices` is
    /// not null).
    ///
    /// # Safety
    /// The common contract for the rows read and the places written;
    /// `k` from 1 to `SELECT_MAX_K`; columns below 2^`index_bits`; the
    /// dynamic shared memory `select_shared` bytes.
    pub unsafe fn select<K: SortKey>(a: SelectArgs<K>) {
        const ITEMS: usize = SELECT_ITEMS as usize;
        let shared = dynamic_shared::<u32>();
        let hist = shared.add(16);
        let stage_columns = hist.add(RADIX as usize);
        let s = SelectShared {
            header: shared,
            warp_totals: shared.add(8),
            hist,
            stage_columns,
            stage_keys: stage_columns.add(SELECT_MAX_K as usize).cast::<K>(),
        };
        let order = Order::new(a.begin_bit, a.end_bit, a.descending);
        let me = thread_idx_x();
        let slice = block_idx_x() as usize;
        let first = slice * SELECT_SLICE;
        let len = Ord::min(SELECT_SLICE, a.width - first) as u32;
        // Warps whose every lane holds a place of the slice (its first).
        let full = if len >= WARP_SIZE {
            Ord::min(
                SORT_WARPS,
                (len - WARP_SIZE) / (WARP_SIZE * SELECT_ITEMS) + 1,
            )
        } else {
            0
        };
        let filters =
            a.k <= SELECT_FILTER_MAX_K && full > 0 && a.k.div_ceil(Ord::max(full, 1)) <= WARP_SIZE;
        let sorted = a.sorted != 0;
        let mut row = block_idx_y() as usize;
        while row < a.rows {
            let from = row * a.pitch + first;
            // SAFETY: every key type is an integer or a float, for which
            // all-zero bits are a value.
            let mut keys: [K; ITEMS] = [core::mem::zeroed(); ITEMS];
            let mut columns = [NO_INDEX; ITEMS];
            each_item!(i => {
                let at = item_index::<ITEMS>(i);
                if at < len {
                    keys[i] = *a.keys.add(from + at as usize);
                    columns[i] = if a.indices.is_null() {
                        first as u32 + at
                    } else {
                        *a.indices.add(from + at as usize)
                    };
                }
            });
            if me == 0 {
                *s.header.add(4) = 0;
                *s.header.add(5) = 0;
            }
            // Null outputs (of a sorted level) stay null: wrapping.
            let keys_out = a.out_keys.wrapping_add(row * a.out_keys_pitch);
            let columns_out = a.out_indices.wrapping_add(row * a.out_indices_pitch);
            let slots = slice * a.k as usize;
            let outputs = (
                keys_out.wrapping_add(slots),
                columns_out.wrapping_add(slots),
            );
            sync_threads();
            let start = if filters {
                select_filter(&keys, &columns, order, &a, s, full)
            } else {
                None
            };
            let kept = if let Some(start) = start {
                let candidates = *s.header.add(5);
                let (key, column): (K, u32) = if me < candidates {
                    (
                        *s.stage_keys.add(me as usize),
                        *s.stage_columns.add(me as usize),
                    )
                } else {
                    // SAFETY: as above.
                    (core::mem::zeroed(), NO_INDEX)
                };
                let (key, column) = ([key], [column]);
                // The stage is read before the selection writes it.
                let chosen = select_digits(&key, &column, order, &a, s, start);
                select_keep(&key, &column, order, &chosen, s, sorted, outputs);
                chosen.kept
            } else {
                let everything = Start {
                    prefix: Rank { bits: 0, column: 0 },
                    mask: Rank { bits: 0, column: 0 },
                    high: a.end_bit - a.begin_bit + a.index_bits,
                };
                let chosen = select_digits(&keys, &columns, order, &a, s, everything);
                select_keep(&keys, &columns, order, &chosen, s, sorted, outputs);
                chosen.kept
            };
            if !sorted {
                if me >= kept && me < a.k {
                    // SAFETY: as above.
                    *outputs.0.add(me as usize) = core::mem::zeroed();
                    *outputs.1.add(me as usize) = NO_INDEX;
                }
            } else {
                sync_threads();
                if me < kept {
                    let key = *s.stage_keys.add(me as usize);
                    let column = *s.stage_columns.add(me as usize);
                    let mine = order.rank(key, column);
                    let mut place = 0;
                    for j in 0..kept as usize {
                        if order.rank(*s.stage_keys.add(j), *s.stage_columns.add(j)) < mine {
                            place += 1;
                        }
                    }
                    if !a.out_keys.is_null() {
                        *keys_out.add(place) = key;
                    }
                    if !a.out_indices.is_null() {
                        *columns_out.add(place) = column;
                    }
                }
            }
            sync_threads();
            row += grid_dim_y() as usize;
        }
    }

    /// One argmax level over rows of `width` keys, `pitch` apart (and
    /// their columns in `columns`, at the same places, or their own
    /// columns where that is null): block `(b, y)` finds the first key in
    /// the order of [`Rank`] (all bits) of slice `b` (`ARGMAX_SLICE` keys)
    /// of rows `y`, `y` plus the grid's height, and so on, and writes its
    /// column (and the key, where `out_keys` is not null) to place
    /// `row * slices + b` of the outputs: with one slice a row, the
    /// column is the row's answer.
    ///
    /// A whole slice 16-byte aligned is read with 16-byte loads. Each
    /// thread's columns rise (a level's candidates lie in the order of
    /// their columns), so a key replaces the thread's best only if its
    /// bits rank strictly before.
    ///
    /// # Safety
    /// The common contract; `columns` null or valid where `keys` is;
    /// outputs valid for `rows * slices` places; nothing writes the keys
    /// during the launch (they are read through the read-only path).
    #[inline(always)]
    pub unsafe fn argmax<K: SortKey>(a: ArgmaxArgs<K>) {
        const STRIDE: usize = SORT_BLOCK as usize;
        let per_vector = 16 / K::BYTES as usize;
        let shared = dynamic_shared::<u32>();
        let best_bits = shared.cast::<u64>();
        let best_columns = shared.add(2 * SORT_WARPS as usize);
        let best_places = shared.add(3 * SORT_WARPS as usize);
        let order = Order::new(0, K::BYTES * 8, a.descending);
        let slices = grid_dim_x() as usize;
        let slice = block_idx_x() as usize;
        let first = slice * ARGMAX_SLICE;
        let end = Ord::min(a.width, first + ARGMAX_SLICE);
        let me = thread_idx_x();
        let (lane, warp) = (me % WARP_SIZE, me / WARP_SIZE);
        let mut row = block_idx_y() as usize;
        while row < a.rows {
            let keys = a.keys.add(row * a.pitch);
            let mut best = Rank {
                bits: u64::MAX,
                column: NO_INDEX,
            };
            // Where the best key is in the row (its column, unless the
            // columns are given).
            let mut best_at = 0u32;
            // `NO_INDEX` yields to any key, even one of all-one bits.
            let mut offer = |r: Rank, i: usize| {
                if r.bits < best.bits || best.column == NO_INDEX {
                    best = r;
                    best_at = i as u32;
                }
            };
            let at = keys.add(first);
            if a.columns.is_null()
                && end - first == ARGMAX_SLICE
                && (at as usize).is_multiple_of(16)
            {
                // Thread `me` takes vectors `me`, `me + STRIDE`, ... of
                // the slice: 4 (or 8 of `u64`) 16-byte loads in flight.
                let vectors = at.cast::<Words4>();
                let mut w = [[0u32; 4]; 8];
                unroll!(u in [0 1 2 3 4 5 6 7] => {
                    if u < 16 / per_vector {
                        w[u] = load_nc_v4(vectors.add(u * STRIDE + me as usize));
                    }
                });
                unroll!(u in [0 1 2 3 4 5 6 7] => {
                    if u < 16 / per_vector {
                        let v = (u * STRIDE + me as usize) * per_vector;
                        let words = (&w[u] as *const Words4).cast::<K>();
                        unroll!(j in [0 1 2 3] => {
                            if j < per_vector {
                                let key = words.add(j).read_unaligned();
                                offer(order.rank(key, (first + v + j) as u32), first + v + j);
                            }
                        });
                    }
                });
            } else {
                let column = |i: usize| {
                    if a.columns.is_null() {
                        i as u32
                    } else {
                        *a.columns.add(row * a.pitch + i)
                    }
                };
                let mut i = first + me as usize;
                while i + 3 * STRIDE < end {
                    let k = [0, 1, 2, 3].map(|u| *keys.add(i + u * STRIDE));
                    unroll!(u in [0 1 2 3] => {
                        offer(order.rank(k[u], column(i + u * STRIDE)), i + u * STRIDE);
                    });
                    i += 4 * STRIDE;
                }
                while i < end {
                    offer(order.rank(*keys.add(i), column(i)), i);
                    i += STRIDE;
                }
            }
            unroll!(b in [16 8 4 2 1] => {
                let lanes = b as u32;
                let other = Rank {
                    bits: ((shfl_xor((best.bits >> 32) as u32, lanes) as u64) << 32)
                        | shfl_xor(best.bits as u32, lanes) as u64,
                    column: shfl_xor(best.column, lanes),
                };
                let other_at = shfl_xor(best_at, lanes);
                if other < best {
                    best = other;
                    best_at = other_at;
                }
            });
            if lane == 0 {
                *best_bits.add(warp as usize) = best.bits;
                *best_columns.add(warp as usize) = best.column;
                *best_places.add(warp as usize) = best_at;
            }
            sync_threads();
            if me == 0 {
                for w in 1..SORT_WARPS as usize {
                    let other = Rank {
                        bits: *best_bits.add(w),
                        column: *best_columns.add(w),
                    };
                    if other < best {
                        best = other;
                        best_at = *best_places.add(w);
                    }
                }
                let at = row * slices + slice;
                if !a.out_keys.is_null() {
                    *a.out_keys.add(at) = *keys.add(best_at as usize);
                }
                *a.out_indices.add(at) = best.column;
            }
            sync_threads();
            row += grid_dim_y() as usize;
        }
    }
}

/// Blocks per SM that one-sweep's passes over 4-byte keys without values
/// are compiled for (gathered in [`crate::LAUNCH_BOUNDS`]): five of 256
/// threads, 48 registers, no spills on sm_80 to sm_90a (unbounded, `f32`
/// keys take 56 and four blocks). Measured on an H100
/// (docs/notes/sort.md): `f32` keys of 2^28 in 7 055 µs against 7 310 at
/// four blocks, 2^24 unchanged (518 against 516). Passes with values in
/// tiles of 16 keys a thread (64 to 84 registers) are not bounded; wide
/// tiles are held to [`WIDE_PAIR_BLOCKS`].
const ONESWEEP_BLOCKS: u32 = 5;

/// Blocks per SM that the selection levels over 4-byte keys are compiled
/// for: two of 256 threads (at most 128 registers; unbounded, `u32` and
/// `i32` keys take 139 and one block an SM). Three would spill (24 to
/// 80 bytes at 80 registers).
const SELECT_BLOCKS: u32 = 2;

/// This family's launch bounds: one-sweep's passes over 4-byte keys, its
/// wide tiles of pairs, and the selection levels over 4-byte keys.
pub const LAUNCH_BOUNDS: &[crate::kernel::LaunchBounds] = &[
    block_bounds("sort_onesweep_0_u32", ONESWEEP_BLOCKS),
    block_bounds("sort_onesweep_0_i32", ONESWEEP_BLOCKS),
    block_bounds("sort_onesweep_0_f32", ONESWEEP_BLOCKS),
    block_bounds("sort_onesweep_wide_40_u32", WIDE_PAIR_BLOCKS),
    block_bounds("sort_onesweep_wide_40_i32", WIDE_PAIR_BLOCKS),
    block_bounds("sort_onesweep_wide_32_u32", WIDE_PAIR_BLOCKS),
    block_bounds("sort_onesweep_wide_32_i32", WIDE_PAIR_BLOCKS),
    block_bounds("sort_onesweep_wide_float_32_f32", WIDE_PAIR_BLOCKS),
    block_bounds("sort_onesweep_wide_middle_40_f32", WIDE_PAIR_BLOCKS),
    block_bounds("sort_select_u32", SELECT_BLOCKS),
    block_bounds("sort_select_i32", SELECT_BLOCKS),
    block_bounds("sort_select_f32", SELECT_BLOCKS),
];

/// This family's entries whose local memory is kept deliberately
/// (gathered in [`crate::SPILLS_ON_PURPOSE`], whose doc says what that
/// allows).
pub const SPILLS_ON_PURPOSE: &[&str] = &[
    // For sm_70 and sm_80 (20 and 8 bytes at the five-block bound; sm_90
    // and sm_90a keep 48 registers without spills): the look-back's walk
    // in 32-bit indices, and since the ballots' masks are and-ed as a
    // tree, eight of them live at once (sm_70 only before). The `u32` and
    // `i32` passes spilled 12 bytes on sm_70 too, until whole tiles took
    // a body of their own. Holding a pointer to the thread's own column
    // of statuses instead removes the look-back's on sm_70 but changes
    // the sm_90a code, not measured yet.
    "sort_onesweep_0_f32",
    // For sm_70 only (48 bytes of stack, 68 of spill stores at the
    // two-block bound, with whole tiles, two chains, the masks' tree,
    // carried bits and the pass's start as a function of its own, 64
    // before it): an entry that GPUs of that
    // generation never run, whose SMs cannot hold two wide tiles' shared
    // memory.
    "sort_onesweep_wide_float_32_f32",
];

const fn block_bounds(entry: &'static str, blocks_per_sm: u32) -> crate::kernel::LaunchBounds {
    crate::kernel::LaunchBounds {
        entry,
        threads: SORT_BLOCK,
        blocks_per_sm,
    }
}

#[cfg(target_arch = "nvptx64")]
use device::{
    ArgmaxArgs, BasesArgs, CountArgs, HistogramArgs, OnesweepArgs, ScatterArgs, SelectArgs,
};

kernels! {
    /// Every sort entry point: per key type, the multi-pass steps' count
    /// and scatter (`STEP` 1 to 4), and one-sweep's histogram, bases and
    /// pass (keys only, and with `u32` values, in tiles of
    /// [`ONESWEEP_ITEMS`] or [`WIDE_PAIR_ITEMS`] keys a thread).
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
        (keys: *const T, width: usize, rows: usize, pitch: usize, begin_bit: u32, end_bit: u32,
            passes: u32, descending: u32, hist: *mut u32) as HistogramArgs {
            fn sort_histogram<T in u32, i32, f32, u64> = device::histogram::<T>;
        }
        (hist: *const T, bases: *mut u32) as BasesArgs {
            fn sort_bases<T in u32> = device::bases::<T>;
        }
        (keys: *const T, values: *const u32, width: usize, tiles_per_row: u32, pitch: usize,
            shift: u32, bits: u32, descending: u32, bases: *const u32, status: *mut u32,
            out: *mut T, out_pitch: usize, out_values: *mut u32, out_values_pitch: usize,
            limit: usize, nan: *const u32, carry: u32) as OnesweepArgs {
            fn sort_onesweep<T in u32, i32, f32, u64; const PAIRS: u32 = { 0, 1 }>
                = device::onesweep::<T, PAIRS>;
            /// Pairs of integer keys in wide tiles, of each size of
            /// [`WIDE_PAIR_ITEMS`] (the assertion below).
            fn sort_onesweep_wide<T in u32, i32; const ITEMS: usize = { 40, 32 }>
                = device::onesweep_wide::<T, ITEMS>;
            /// Pairs of `f32` keys in wide tiles, of the sizes of
            /// [`WIDE_PAIR_ITEMS`] at which their pass does not spill on
            /// sm_90a (40 spilled 88 to 96 bytes and sorted `f32` pairs
            /// 16 % slower than 32 on an H200).
            fn sort_onesweep_wide_float<T in f32; const ITEMS: usize = { 32 }>
                = device::onesweep_wide::<T, ITEMS>;
            /// The middle passes of `f32` pairs with histograms in wide
            /// tiles, at a size `sort_onesweep_wide_float` cannot take
            /// (entries of their own for the first and the last pass at
            /// 40 were tried: the first spilled 56 bytes, and the last,
            /// without spills, was slower than at 32 on an H200).
            fn sort_onesweep_wide_middle<T in f32; const ITEMS: usize = { 40 }>
                = device::onesweep_wide_middle::<T, ITEMS>;
        }
        (keys: *const T, indices: *const u32, width: usize, rows: usize, pitch: usize, k: u32,
            begin_bit: u32, end_bit: u32, descending: u32, index_bits: u32,
            out_keys: *mut T, out_indices: *mut u32, out_keys_pitch: usize,
            out_indices_pitch: usize, sorted: u32) as SelectArgs {
            fn sort_select<T in u32, i32, f32, u64> = device::select::<T>;
        }
        (keys: *const T, columns: *const u32, width: usize, rows: usize, pitch: usize,
            descending: u32, out_keys: *mut T, out_indices: *mut u32) as ArgmaxArgs {
            fn sort_argmax<T in u32, i32, f32, u64> = device::argmax::<T>;
        }
    }
}

// The wide entries are instantiated for sizes of `WIDE_PAIR_ITEMS`, which
// is in order, largest first.
const _: () = {
    const fn listed(values: &[usize]) -> bool {
        let mut i = 0;
        while i < values.len() {
            let mut j = 0;
            while j < WIDE_PAIR_ITEMS.len() && WIDE_PAIR_ITEMS[j] as usize != values[i] {
                j += 1;
            }
            if j == WIDE_PAIR_ITEMS.len() {
                return false;
            }
            i += 1;
        }
        true
    }
    assert!(listed(sort_onesweep_wide::VALUES));
    assert!(listed(sort_onesweep_wide_float::VALUES));
    assert!(listed(sort_onesweep_wide_middle::VALUES));
    let mut i = 1;
    while i < WIDE_PAIR_ITEMS.len() {
        assert!(WIDE_PAIR_ITEMS[i] < WIDE_PAIR_ITEMS[i - 1]);
        i += 1;
    }
};

#[cfg(test)]
mod tests {
    use super::SortKey;

    /// Every digit a pass takes, by its shift and xor, against the bits
    /// of the ordered key.
    fn digits_agree<K: SortKey + Copy + core::fmt::Debug>(keys: &[K]) {
        for &key in keys {
            for descending in [false, true] {
                let flip = if descending { u32::MAX } else { 0 };
                for bits in 1..=8u32 {
                    for shift in 0..=(8 * K::BYTES - bits) {
                        let mask = (1u32 << bits) - 1;
                        let want = (key.ordered(descending) >> shift) as u32 & mask;
                        assert_eq!(
                            key.digit(flip, shift, mask),
                            want,
                            "{key:?} {descending} {shift} {bits}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn digits_are_the_ordered_bits() {
        digits_agree(&[0u32, 1, 0x8000_0000, 0x7fff_ffff, u32::MAX, 0x1234_5678]);
        digits_agree(&[0i32, 1, -1, i32::MIN, i32::MAX, 0x1234_5678, -0x1234_5678]);
        digits_agree(&[
            0.0f32,
            -0.0,
            1.5,
            -1.5,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            -f32::NAN,
            f32::from_bits(1),
            f32::from_bits(0x8000_0001),
            f32::MAX,
            f32::MIN,
        ]);
        digits_agree(&[
            0u64,
            1,
            u64::MAX,
            0x8000_0000_0000_0000,
            0x0123_4567_89ab_cdef,
        ]);
    }
}
