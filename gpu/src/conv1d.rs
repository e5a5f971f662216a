//! 1D convolution: the ladder of the lesson's convolution kernels (basic,
//! mask in constant memory, input tile with its halo in shared memory),
//! register-blocked kernels, Karatsuba's for long masks and a streaming one
//! for short masks, for `f32`.
//!
//! `P[i] = Σ_j N[i − r + j] · M[j]` for `j` in `0..taps`, `r = taps / 2`,
//! with `N` zero outside the signal: the "same" output, as long as the
//! signal. For an odd mask the centre (the weight that multiplies `N[i]`) is
//! `M[taps / 2]`, the middle one; for an even mask it is also `M[taps / 2]`,
//! the right one of the middle two. Masks hold 1 to [`MAX_TAPS`] weights.
//!
//! A launch convolves `rows` rows of `n` elements each: row `y` of the
//! signal starts `y · signal_pitch` elements after `signal`, row `y` of the
//! output `y · out_pitch` after `out`, and every row is convolved on its own
//! (zero outside the row). One signal is one row.
//!
//! Every step computes exactly the terms of the definition whose signal
//! index lies inside the row, so NaN and ±∞ in the signal reach exactly the
//! outputs whose window covers them. Steps 1 and 2 skip the terms outside
//! the row; steps 3 and 4 multiply the zeros they stage there, which differs
//! only for a non-finite mask weight (`0 · ∞` is NaN).

pub mod wgmma;
pub use wgmma::{WGMMA_MIN_TAPS, WGMMA_THREADS, WGMMA_TILE, wgmma_error_units};

/// The most weights a mask may have (4 100 bytes of constant memory for
/// [`CONV1D_MASK`]). The one limit both sides check against.
pub const MAX_TAPS: usize = 1025;

/// Threads per block of steps 1-3; one output per thread.
pub const LESSON_BLOCK: u32 = 256;
/// Outputs of one tile of [`Conv1dVariant::RegisterBlocked`] (one row's
/// consecutive outputs a block computes at a time).
pub const BLOCKED_TILE: usize = 2048;
/// The widths of [`Conv1dVariant::RegisterBlocked`]: consecutive outputs
/// one thread keeps in registers. The width `w` is also the segment (the
/// `w` inputs that start a thread's window) and the round of taps: the
/// mask is zero-padded in shared memory to a multiple of `w`. A block has
/// `BLOCKED_TILE / w` threads.
pub const BLOCKED_WIDTHS: [usize; 2] = [8, 16];
/// Masks of up to this many taps run the narrow width (8 outputs a thread:
/// 65 registers, 24 warps per SM against the wide width's 16 (when it
/// took 123 registers), so more loads are in flight for a memory-bound
/// short mask); longer ones the wide width (16 outputs a thread, 96
/// registers under its launch bounds: 256 FMAs per 8 shared-memory loads,
/// the rate a long mask needs). Measured on an H100, 2^26 outputs, GB/s (8 wide / 16
/// wide): 7 taps 2706 / 2334, 31 taps 2678 / 2378, 127 taps 1177 / 1300.
/// Measured and not kept (2^26 outputs, same runs): holding the narrow
/// width to 64 registers for a fourth block per SM (20 bytes of spills)
/// gave the H200 2.5% (mask 7 157 → 153 µs) and cost the H100 1 to 4%
/// (mask 31 200 → 208 µs); loading two tiles ahead instead of one was
/// slower on the H200 at either occupancy (mask 7 154 to 157 µs).
pub const NARROW_MAX_TAPS: usize = 64;
/// Words of padding after each segment in shared memory: segment `s`
/// starts at word `(w + 4) s` (12 or 20), so the 16-byte loads of 8
/// consecutive lanes (one shared-memory wavefront) cover 32 distinct banks.
pub const SEGMENT_PAD: usize = 4;

/// Outputs of one tile of [`Conv1dVariant::Karatsuba`]: one block, one
/// tile, [`SPLIT_WIDTH`] pairs of outputs per thread.
pub const SPLIT_TILE: usize = 2048;
/// Pairs of outputs one thread of [`Conv1dVariant::Karatsuba`] computes
/// (its 32 consecutive outputs): the width `W` of its three half-length
/// register-blocked sums, as [`BLOCKED_WIDTHS`]'s wide one.
pub const SPLIT_WIDTH: usize = 16;
/// Threads of a [`Conv1dVariant::Karatsuba`] block.
pub const SPLIT_THREADS: u32 = (SPLIT_TILE / 2 / SPLIT_WIDTH) as u32;
/// [`Conv1dVariant::Karatsuba`] runs its own kernel for masks of at least
/// this many taps, and step 4's below: its FMAs are ¾ of step 4's, but it
/// stages each tile without overlapping the loads with arithmetic, which
/// costs as much as the FMAs it saves up to about 128 taps. Measured on an
/// H100, 2^26 outputs, µs (step 4 / step 5's kernel): 65 taps 276 / 356,
/// 95 taps 333 / 370, 127 taps 410 / 413, 255 taps 730 / 641, 1 025 taps
/// 2 739 / 2 182. Since then step 4's wide kernel pairs its rounds (127
/// taps 390 µs, 1 025 taps 2 563), which widens its lead below 129 taps;
/// at 1 025 step 5's kernel stays ahead (2 197 µs); between, not measured.
pub const SPLIT_MIN_TAPS: usize = 129;

/// Outputs of one tile of [`Conv1dVariant::Streamed`]: one block, one
/// tile, [`STREAM_WIDTH`] outputs per thread in each of four passes.
pub const STREAM_TILE: usize = 4096;
/// Consecutive outputs one thread of [`Conv1dVariant::Streamed`] keeps in
/// registers in one pass: one 16-byte word, so that a warp's store covers
/// 512 contiguous bytes (whole 32-byte sectors), and the tile needs no
/// padding (the 16-byte loads of 8 consecutive lanes are 128 contiguous
/// bytes).
pub const STREAM_WIDTH: usize = 4;
/// Threads of a [`Conv1dVariant::Streamed`] block: each loads four 16-byte
/// words of the tile.
pub const STREAM_THREADS: u32 = (STREAM_TILE / 16) as u32;
/// [`Conv1dVariant::Streamed`] runs its own kernel for masks of up to this
/// many taps, step 5's (hence step 4's) beyond: with 4 outputs a thread it
/// loads a 16-byte word of the tile and one of weights per 16 FMAs, which
/// shared memory sustains for short masks only. Measured on an H200, 2^26
/// outputs, µs (step 6 / step 4's narrow kernel with its stores passed
/// through shared memory, a variant not kept): 7 taps 141 / 149, 11 taps
/// 144 / 151, 15 taps 148 / 152, 19 taps 171 / 152, 23 taps 175 / 154,
/// 31 taps 205 / 170.
pub const STREAM_MAX_TAPS: usize = 16;

/// Inputs one [`Conv1dVariant::Streamed`] block stages for a mask of
/// `taps`: its [`STREAM_TILE`] outputs and a halo for the mask shifted by
/// up to 3 places (so that the tile starts on 16 bytes), whole 16-byte
/// words.
pub const fn stream_tile_len(taps: usize) -> usize {
    STREAM_TILE + padded_taps(taps + 3, STREAM_WIDTH)
}

/// How far [`Conv1dVariant::Streamed`] shifts a mask of `taps` for a row
/// at byte address `row` (a multiple of 4): the `s` in 0..4 for which row
/// element `t − taps / 2 − s` lies on 16 bytes for every multiple `t` of 4
/// (the tiles' starts).
pub const fn stream_shift(row: usize, taps: usize) -> usize {
    // −r ≡ 3r (mod 4).
    (row / 4 + 3 * (taps / 2)) % 4
}

/// Outputs of one tile of [`Conv1dVariant::Tf32x3`]: one block, one
/// tile; each of its [`TENSOR_THREADS`]` / 32` warps computes
/// [`TENSOR_WARP_TILES`] tensor-core tiles of 128 consecutive outputs.
pub const TENSOR_TILE: usize = 4096;
/// Threads of a [`Conv1dVariant::Tf32x3`] block: 8 warps.
pub const TENSOR_THREADS: u32 = 256;
/// Tensor-core tiles of 16 × 8 outputs (128 consecutive outputs, 8 per
/// row) one warp of [`Conv1dVariant::Tf32x3`] computes: each weight
/// fragment, loaded and split once per 8 taps, serves all of them.
pub const TENSOR_WARP_TILES: usize = 4;

const _: () = assert!(TENSOR_TILE == TENSOR_THREADS as usize / 32 * TENSOR_WARP_TILES * 128);

/// The default convolution runs [`Conv1dVariant::Tf32x3`] for masks of at
/// least this many taps where the loaded PTX has tensor cores (sm_80 and
/// newer; [`Conv1dVariant::fastest_for`]). Measured at 2^26 outputs (H100
/// and H200): at 31 taps every step is bound by memory (step 7 and step 6
/// within 2% either way, step 6 ahead at 7 taps); at 63 taps step 7 takes
/// 226 µs against 257 (H100).
pub const TENSOR_MIN_TAPS: usize = 48;

/// Steps of 8 along `k` that [`Conv1dVariant::Tf32x3`] takes for a mask of
/// `taps`: output `16m + c` of a tensor-core tile is `Σ_t M[t − c] ·
/// X[16m + t]` over `t` in `0 .. taps + 15` (the 16 outputs of a column
/// see the mask shifted by 0 to 15 places), rounded up to whole steps.
pub const fn tensor_steps(taps: usize) -> usize {
    (taps + 15).div_ceil(8)
}

/// Inputs one [`Conv1dVariant::Tf32x3`] tile stages for a mask of
/// `taps`: its [`TENSOR_TILE`] outputs' and the `8 · steps − 16` that
/// follow (the last output's window and the zeros its last step
/// multiplies); the next tile's first ones.
pub const fn tensor_tile_len(taps: usize) -> usize {
    TENSOR_TILE + 8 * tensor_steps(taps) - 16
}

/// Words of [`Conv1dVariant::Tf32x3`]'s zero-padded mask: 16 zeros, the
/// `taps` weights, zeros up to the last step's last fragment. Weight `j`
/// is word `j + 16`, so that a fragment reads `M[t − c]` for `t − c` from
/// −15 without a check.
pub const fn tensor_mask_len(taps: usize) -> usize {
    8 * tensor_steps(taps) + 16
}

/// The shared-memory word of tile element `e` in
/// [`Conv1dVariant::Tf32x3`]: rows of 8 elements, each row's elements
/// `c` and `c + 4` side by side (`0 4 1 5 2 6 3 7`), so that the two
/// elements of a `B` fragment a lane takes from one tensor-core column
/// (rows `t` and `t + 4`) are one 8-byte load; and rows 4 to 7 of every
/// 8 swapped in pairs (row `R` at `R ^ (R >> 2 & 1)`), so that the rows a
/// half warp's 8-byte loads take, `R`, `R + 2`, `R + 4` and `R + 6` (see
/// [`tensor_b_elements`]), lie in four different groups of 8 banks.
pub const fn tensor_index(e: usize) -> usize {
    let row = e / 8;
    8 * (row ^ ((row >> 2) & 1)) + 2 * (e % 4) + (e % 8) / 4
}

/// Words of [`Conv1dVariant::Tf32x3`]'s tile: [`tensor_tile_len`]
/// rounded up to whole pairs of rows, which [`tensor_index`] may swap.
pub const fn tensor_tile_words(taps: usize) -> usize {
    tensor_tile_len(taps).next_multiple_of(16)
}

/// [`Conv1dVariant::Tf32x3`]'s error bound for a mask of `taps`, in units
/// of `2^-24 · Σ_j |x_j · m_j|` (and, for subnormal results, of 2^-149).
///
/// With `u = 2^-24`: each operand is split by truncation
/// (`prim::split_tf32_truncated`): `big` keeps 11 significant bits, so
/// `|x − big| < 2^-10 |x|`; `x − big` is exact, and truncating it errs by
/// less than `2^-10` of it: `x = big + small + e` with `|e| < 2^-20 |x|`
/// and `|small| < 2^-10 |x|`. Then `x·m − (big_x·big_m + big_x·small_m +
/// small_x·big_m) = small_x·small_m + (big_x + small_x)·e_m + e_x·m`, less
/// than `3.01 · 2^-20 |x·m| < 49u |x·m|`. The three products are exact in
/// `f32` (11 × 11 bits). The tensor cores add them to the `f32`
/// accumulator, 8 per `mma`, three `mma` per step: `24 · steps` additions,
/// each taken here to err by up to `2u` (the hardware's rounding of its
/// sums is not specified as IEEE round-to-nearest), `48u · steps` times
/// the terms' magnitudes, which are within 0.3% of `Σ|x·m|`. Hence
/// `48 · steps + 52`; for 127 taps 916, against the direct steps' 129.
pub const fn tensor_error_units(taps: usize) -> usize {
    48 * tensor_steps(taps) + 52
}

/// The words of [`tensor_mask_len`]'s padded mask in lane `lane`'s `A`
/// fragment (`a[0]` to `a[3]`, see `prim::mma`) for step `s`: `A[c][t] =
/// M[8s + t − c]`, row `c` the mask shifted by `c`. The same for every
/// tensor-core tile: a warp loads and splits it once per step.
pub const fn tensor_a_words(lane: usize, s: usize) -> [usize; 4] {
    let w = 16 + 8 * s + lane % 4 - lane / 4;
    [w, w - 8, w + 4, w - 4]
}

/// The tile elements of lane `lane`'s `B` fragment (`b[0]`, `b[1]`) for
/// step `s` of the tensor-core tile whose outputs start at tile element
/// `o`: `B[t][m] = X[o + 16m + 8s + t]`, column `m` the inputs of outputs
/// `o + 16m ..`. The two are one 8-byte load ([`tensor_index`]).
pub const fn tensor_b_elements(o: usize, lane: usize, s: usize) -> [usize; 2] {
    let e = o + 16 * (lane / 4) + 8 * s + lane % 4;
    [e, e + 4]
}

/// The outputs, from the tensor-core tile's first, of lane `lane`'s
/// accumulator fragment (`d[0]` to `d[3]`): `D[c][m]` is output `16m + c`.
/// For each `k`, the warp's `d[k]` are 4 runs of 8 consecutive outputs:
/// its stores write whole 32-byte sectors.
pub const fn tensor_d_outputs(lane: usize) -> [usize; 4] {
    let o = 32 * (lane % 4) + lane / 4;
    [o, o + 16, o + 8, o + 24]
}

/// Elements of each of the three half-rate sequences a
/// [`Conv1dVariant::Karatsuba`] block stages for a mask of `taps`: its
/// `SPLIT_TILE / 2` pairs and a halo of the half mask's [`padded_taps`].
pub const fn split_len(taps: usize) -> usize {
    SPLIT_TILE / 2 + padded_taps(taps.div_ceil(2), SPLIT_WIDTH)
}

/// Words of one staged phase of [`Conv1dVariant::Karatsuba`]: its
/// [`split_len`] elements in whole segments laid out by [`padded_index`].
pub const fn split_words(taps: usize) -> usize {
    padded_words(split_len(taps), SPLIT_WIDTH)
}

/// The width [`Conv1dVariant::RegisterBlocked`] runs for a mask of `taps`.
pub const fn blocked_width(taps: usize) -> usize {
    if taps <= NARROW_MAX_TAPS {
        BLOCKED_WIDTHS[0]
    } else {
        BLOCKED_WIDTHS[1]
    }
}

/// Threads of a [`Conv1dVariant::RegisterBlocked`] block of width `w`.
pub const fn blocked_threads(w: usize) -> u32 {
    (BLOCKED_TILE / w) as u32
}

// A streamed tile's halo is at most one 16-byte word per thread, and its
// threads take whole passes of STREAM_WIDTH outputs.
const _: () = assert!(
    (stream_tile_len(STREAM_MAX_TAPS) - STREAM_TILE) / 4 <= STREAM_THREADS as usize
        && STREAM_TILE.is_multiple_of(STREAM_WIDTH * STREAM_THREADS as usize)
        && STREAM_TILE == 16 * STREAM_THREADS as usize
);

const _: () = {
    let mut i = 0;
    while i < BLOCKED_WIDTHS.len() {
        let w = BLOCKED_WIDTHS[i];
        // The halo moves from a tile's end to the next tile's start in one
        // pass; threads take whole segments; segments start on 16-byte
        // boundaries (16-byte shared loads) and at most 16 taps a round.
        assert!(padded_taps(MAX_TAPS, w) <= BLOCKED_TILE);
        assert!(BLOCKED_TILE.is_multiple_of(w) && w.is_multiple_of(4) && w <= 16);
        assert!((w + SEGMENT_PAD).is_multiple_of(4));
        i += 1;
    }
};

constant_memory! {
    /// The mask of [`Conv1dVariant::ConstantMask`] and
    /// [`Conv1dVariant::SharedTile`]: its first `taps` weights are the mask
    /// of the launch. One per loaded module, shared by every stream of the
    /// device: the host copies each launch's mask into it in stream order,
    /// after every earlier launch that reads it, on any stream, has run.
    pub CONV1D_MASK: [f32; MAX_TAPS];
}

/// `taps` rounded up to a whole number of rounds of width `w`: the weights
/// [`Conv1dVariant::RegisterBlocked`] stages (the padding is zero and never
/// multiplied).
pub const fn padded_taps(taps: usize, w: usize) -> usize {
    taps.div_ceil(w) * w
}

/// Inputs one block of [`Conv1dVariant::RegisterBlocked`] of width `w`
/// stages: its [`BLOCKED_TILE`] outputs and a halo of [`padded_taps`] (a
/// multiple of `w`).
pub const fn blocked_tile_len(taps: usize, w: usize) -> usize {
    BLOCKED_TILE + padded_taps(taps, w)
}

/// The shared-memory word of tile element `e` in
/// [`Conv1dVariant::RegisterBlocked`] of width `w`: [`SEGMENT_PAD`] words
/// after every `w` elements.
pub const fn padded_index(e: usize, w: usize) -> usize {
    e + (e / w) * SEGMENT_PAD
}

/// Shared-memory words of a tile of `len` elements (a multiple of `w`)
/// laid out by [`padded_index`].
pub const fn padded_words(len: usize, w: usize) -> usize {
    len / w * (w + SEGMENT_PAD)
}

/// What a step keeps in shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Staging {
    /// Nothing.
    None,
    /// The block's inputs and their halo: `block + taps − 1` elements.
    Halo,
    /// The register-blocked tile ([`padded_words`] of
    /// [`blocked_tile_len`]) and the zero-padded mask ([`padded_taps`]).
    Blocked,
    /// The three half-rate sequences ([`split_words`] each, laid out as the
    /// register-blocked tile) and three zero-padded half masks.
    Split,
    /// The streamed tile ([`stream_tile_len`] words, unpadded) and the
    /// shifted, zero-padded mask.
    Streamed,
    /// The tensor-core tile ([`tensor_tile_words`], laid out by
    /// [`tensor_index`]) and the zero-padded mask ([`tensor_mask_len`]).
    Tensor,
    /// The warpgroup step's two staged parts of the inputs and of the mask
    /// ([`wgmma::wgmma_shared_bytes`]).
    Warpgroup,
}

/// How a convolution step is launched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conv1dShape {
    /// The kernel (base name; the suffix is `f32`).
    pub kernel: &'static str,
    /// Threads per block (1D; `blockIdx.y` walks the rows).
    pub block: u32,
    /// Consecutive outputs of one row that one block computes.
    pub outputs_per_block: u32,
    /// Its shared memory.
    pub staging: Staging,
    /// Whether it reads the mask from [`CONV1D_MASK`] (which the host fills
    /// before the launch) instead of the `mask` argument.
    pub constant_mask: bool,
}

ladder! {
    /// The 1D convolution ladder.
    pub enum Conv1dVariant("conv1d"): Conv1dShape {
        /// Step 1 (lesson): one thread per output; each reads its `taps`
        /// inputs and the `taps` weights from global memory, skipping the
        /// inputs outside the signal (the lesson's boundary checks). Two
        /// loads per multiply-add; neighbouring threads read overlapping
        /// windows, which the L1 cache partly absorbs.
        Basic = "basic" => Conv1dShape {
            kernel: "conv1d_basic",
            block: LESSON_BLOCK,
            outputs_per_block: LESSON_BLOCK,
            staging: Staging::None,
            constant_mask: false,
        },
        /// Step 2 (lesson): the mask in constant memory (`__constant__`).
        /// Every lane of a warp reads the same weight at the same time, which
        /// the constant cache serves in one access (a broadcast): one global
        /// load per multiply-add instead of two.
        ConstantMask = "constant_mask" => Conv1dShape {
            kernel: "conv1d_constant_mask",
            block: LESSON_BLOCK,
            outputs_per_block: LESSON_BLOCK,
            staging: Staging::None,
            constant_mask: true,
        },
        /// Step 3 (lesson): the block first copies its inputs and their halo
        /// (`block + taps − 1` elements, zeros outside the signal) into shared
        /// memory with coalesced loads; each input is then read from DRAM or
        /// L2 about once instead of `taps` times, and the inner loop reads
        /// shared memory (consecutive lanes, consecutive banks) and constant
        /// memory only, with no boundary checks.
        SharedTile = "shared_tile" => Conv1dShape {
            kernel: "conv1d_shared_tile",
            block: LESSON_BLOCK,
            outputs_per_block: LESSON_BLOCK,
            staging: Staging::Halo,
            constant_mask: true,
        },
        /// Step 4: each thread computes `w` consecutive outputs in
        /// registers (`w` = 16, or 8 for masks of up to [`NARROW_MAX_TAPS`]
        /// taps: see [`blocked_width`]), a block tiles of 2 048. Per round
        /// of `w` taps a thread loads `w` new inputs (16-byte shared loads,
        /// conflict-free thanks to the segment padding) and `w` weights
        /// (16-byte broadcast loads of the mask, staged in shared memory
        /// from global: no constant-memory staging, nothing to order between
        /// streams) and does `w²` FMAs: `w / 2` FMAs per shared-memory word
        /// instead of step 3's one. Blocks fill the GPU
        /// once and walk a run of consecutive tiles: the next tile's inputs
        /// are loaded into registers before this tile's FMAs, so DRAM
        /// latency hides behind arithmetic instead of stalling the block,
        /// and the halo is moved within shared memory rather than read
        /// again. The outputs leave as 16-byte stores.
        RegisterBlocked = "register_blocked" => Conv1dShape {
            kernel: "conv1d_register_blocked",
            // For the wide width; `Conv1dVariant::block` gives the block of
            // each mask.
            block: blocked_threads(BLOCKED_WIDTHS[1]),
            outputs_per_block: BLOCKED_TILE as u32,
            staging: Staging::Blocked,
            constant_mask: false,
        },
        /// Step 5: two outputs from three half-length convolutions instead
        /// of four (Karatsuba's trick, the "fast FIR algorithm" of signal
        /// processing). With `E`, `O` the even and odd inputs and `h0`, `h1`
        /// the even and odd weights, an even output is `A + B` (`A = h0 ⋆
        /// E`, `B = h1 ⋆ O`) and the odd one after it is `C − A' − B`, where
        /// `C = (h0 + h1) ⋆ (O + E')` and `A'` is the next pair's `A`: ¾ of
        /// the FMAs of step 4 (plus one output of `A` in 16) for a mask
        /// long enough to be bound by them. The block stages `E`, `O` and
        /// `S = O + E'` side by side and runs step 4's wide register
        /// blocking over each, 16 pairs (32 outputs) per thread, one tile
        /// per block. An odd output's error is bounded by the magnitudes of
        /// its neighbours too (see [`karatsuba_outputs`]); a thread whose
        /// odd outputs are not all finite computes them again directly, so
        /// NaN and ±∞ reach exactly the outputs step 4's do. Masks of
        /// fewer than [`SPLIT_MIN_TAPS`] taps run step 4's kernels, which
        /// overlap loads and FMAs and are faster there. What `conv1d_into`
        /// uses.
        Karatsuba = "karatsuba" => Conv1dShape {
            kernel: "conv1d_karatsuba",
            block: SPLIT_THREADS,
            outputs_per_block: SPLIT_TILE as u32,
            staging: Staging::Split,
            constant_mask: false,
        },
        /// Step 6: short masks as a stream of whole sectors. Step 4's
        /// narrow kernel stores a thread's 8 outputs as two 16-byte words
        /// 32 bytes apart across the lanes, so each store instruction
        /// writes half of every 32-byte sector it touches: at mask 7 on an
        /// H200 the L2 counts 15.3 M sector writes where whole sectors take
        /// 12.6 M, and its throughput (85% busy) limits the kernel before
        /// DRAM does (70%, ncu). Here a
        /// thread computes 4 consecutive outputs per pass, so a warp's
        /// store is 512 contiguous bytes (one request per sector); a block
        /// computes one tile of 4 096 outputs (four passes) and stops,
        /// each thread issuing its four 16-byte loads at once (the tile is
        /// made to start on 16 bytes by shifting the mask up to 3 places;
        /// the zeros in front are never multiplied), and the 8 blocks of
        /// 256 threads resident per SM (32 registers) overlap one
        /// another's loads and arithmetic. Masks of more than
        /// [`STREAM_MAX_TAPS`] taps run step 5's kernels. What
        /// `conv1d_into` uses.
        Streamed = "streamed" => Conv1dShape {
            kernel: "conv1d_streamed",
            block: STREAM_THREADS,
            outputs_per_block: STREAM_TILE as u32,
            staging: Staging::Streamed,
            constant_mask: false,
        },
        /// Step 7: the convolution as a matrix product on the tensor cores
        /// (`mma.sync` on TF32, sm_80 and newer), with FP32-level accuracy
        /// by 3xTF32. Output `16m + c` of a tile of 128 is `Σ_t M[t − c] ·
        /// X[16m + t]`: a 16 × `k` matrix of the mask (row `c` the mask
        /// shifted by `c`, the same for every tile) times a `k` × 8 matrix
        /// of inputs (column `m` the inputs from `16m`), `k` = `taps + 15`
        /// rounded up to 8. That is `(taps + 15) / taps` times step 4's
        /// multiply-adds, three times over (each operand split, by
        /// truncation, into a TF32 `big` and `small` part; `small·big +
        /// big·small + big·big`), on units with 8 times or more FP32's
        /// rate. Per 8 taps a warp loads and splits the mask's fragment once
        /// for its 4 tiles of 128 outputs, and each tile one 8-byte pair of
        /// inputs: 57 instructions for 12 `mma` on sm_90. Blocks walk runs of
        /// tiles of 4 096 outputs, the next tile's inputs in flight during
        /// this one's products, as in step 4. Outputs that come out
        /// non-finite (NaN or ±∞ in the signal, whose split parts, and the
        /// zero weights they meet, make NaN) are computed again directly, so
        /// NaN and ±∞ reach exactly the outputs step 4's do.
        Tf32x3 = "tf32x3" => Conv1dShape {
            kernel: "conv1d_tf32x3",
            block: TENSOR_THREADS,
            outputs_per_block: TENSOR_TILE as u32,
            staging: Staging::Tensor,
            constant_mask: false,
        },
        /// Step 8: step 7's 3xTF32 products as warpgroup products
        /// (`wgmma.m64n128k8`, sm_90a only), tiles of 64 × 128 outputs:
        /// the mask's 64 shifts are `A`, in registers, and the inputs `B`,
        /// read by the tensor cores straight from shared memory, staged once
        /// (each split part in a layout where every step's `B` is one
        /// descriptor: [`wgmma`]). One product does for the block what 64
        /// of step 7's `mma.sync` do and runs while the warps load the next
        /// step's mask fragments; `t` spans `taps + 63` instead of `taps +
        /// 15`, the price of the 64 rows. Non-finite outputs are computed
        /// again directly, as in step 7.
        Tf32x3Wgmma = "tf32x3_wgmma" => Conv1dShape {
            kernel: "conv1d_tf32x3_wgmma",
            block: WGMMA_THREADS,
            outputs_per_block: WGMMA_TILE as u32,
            staging: Staging::Warpgroup,
            constant_mask: false,
        },
    }
    fastest = Streamed;
}

impl Conv1dVariant {
    /// The step whose kernel runs for a mask of `taps`: this one, except
    /// that [`Conv1dVariant::Karatsuba`] hands masks of fewer than
    /// [`SPLIT_MIN_TAPS`] to [`Conv1dVariant::RegisterBlocked`].
    pub const fn runs_as(self, taps: usize) -> Conv1dVariant {
        match self {
            Conv1dVariant::Karatsuba if taps < SPLIT_MIN_TAPS => Conv1dVariant::RegisterBlocked,
            Conv1dVariant::Streamed if taps > STREAM_MAX_TAPS => {
                Conv1dVariant::Karatsuba.runs_as(taps)
            }
            _ => self,
        }
    }

    /// Threads per block for a mask of `taps`.
    pub const fn block(self, taps: usize) -> u32 {
        match self.runs_as(taps) {
            Conv1dVariant::RegisterBlocked => blocked_threads(blocked_width(taps)),
            Conv1dVariant::Tf32x3Wgmma => WGMMA_THREADS * wgmma::wgmma_groups(taps) as u32,
            v => v.shape().block,
        }
    }

    /// Consecutive outputs of one row that one block computes at a time
    /// for a mask of `taps`.
    pub const fn outputs_per_block(self, taps: usize) -> u32 {
        self.runs_as(taps).shape().outputs_per_block
    }

    /// Whether the launch for a mask of `taps` fills the GPU once with
    /// blocks that walk runs of tiles (steps 4 and 7), rather than one
    /// block per tile.
    pub const fn walks_runs(self, taps: usize) -> bool {
        matches!(
            self.runs_as(taps),
            Conv1dVariant::RegisterBlocked | Conv1dVariant::Tf32x3 | Conv1dVariant::Tf32x3Wgmma
        )
    }

    /// The step the default convolution (`conv1d_into`) runs for a mask of
    /// `taps` in the module built for `target`:
    /// [`Conv1dVariant::Tf32x3Wgmma`] from [`WGMMA_MIN_TAPS`] taps in the
    /// sm_90a module, [`Conv1dVariant::Tf32x3`] from [`TENSOR_MIN_TAPS`]
    /// taps where the module has tensor cores, [`Conv1dVariant::FASTEST`]
    /// (which hands each mask length to its step,
    /// [`Conv1dVariant::runs_as`]) otherwise.
    pub fn fastest_for(taps: usize, target: &str) -> Conv1dVariant {
        if taps >= WGMMA_MIN_TAPS && Conv1dVariant::Tf32x3Wgmma.needs().met_by(target) {
            Conv1dVariant::Tf32x3Wgmma
        } else if taps >= TENSOR_MIN_TAPS && Conv1dVariant::Tf32x3.needs().met_by(target) {
            Conv1dVariant::Tf32x3
        } else {
            Conv1dVariant::FASTEST
        }
    }

    /// The PTX targets that run this step: the tensor-core step needs
    /// sm_80 (its entry traps in older modules; the host refuses it there).
    pub const fn needs(self) -> crate::ptx::Needs {
        match self {
            Conv1dVariant::Tf32x3 => crate::ptx::Needs::Sm80,
            Conv1dVariant::Tf32x3Wgmma => crate::ptx::Needs::Sm90a,
            _ => crate::ptx::Needs::Any,
        }
    }

    /// The tensor-core steps' error bound for a mask of `taps`, in units
    /// of `2^-24 · Σ_j |x_j · m_j|` ([`tensor_error_units`],
    /// [`wgmma_error_units`]); `None` for the steps that sum in `f32` FMAs.
    pub const fn error_units(self, taps: usize) -> Option<usize> {
        match self.runs_as(taps) {
            Conv1dVariant::Tf32x3 => Some(tensor_error_units(taps)),
            Conv1dVariant::Tf32x3Wgmma => Some(wgmma_error_units(taps)),
            _ => None,
        }
    }

    /// Whether the step reads its mask from [`CONV1D_MASK`].
    pub const fn reads_constant_mask(self) -> bool {
        self.shape().constant_mask
    }

    /// Dynamic shared memory for a mask of `taps` weights (1 to
    /// [`MAX_TAPS`]): at most 29 616 bytes, below the 48 KiB every device
    /// grants without opting in, except step 8's (up to 83 456 bytes, which
    /// the launch opts into on the sm_90a devices that run it).
    pub const fn shared_bytes(self, taps: usize) -> u32 {
        let words = match self.runs_as(taps).shape().staging {
            Staging::None => 0,
            Staging::Halo => self.shape().block as usize + taps - 1,
            Staging::Blocked => {
                let w = blocked_width(taps);
                padded_words(blocked_tile_len(taps, w), w) + padded_taps(taps, w)
            }
            Staging::Split => 3 * (split_words(taps) + padded_taps(taps.div_ceil(2), SPLIT_WIDTH)),
            Staging::Streamed => stream_tile_len(taps) + padded_taps(taps + 3, STREAM_WIDTH),
            Staging::Tensor => tensor_tile_words(taps) + tensor_mask_len(taps),
            Staging::Warpgroup => wgmma::wgmma_groups(taps) * wgmma::wgmma_group_bytes(taps) / 4,
        };
        (words * 4) as u32
    }
}

/// `a · b + c`: one fused multiply-add (one rounding) on the GPU; on the
/// host, where this crate is `no_std` on stable Rust without `fmaf`, a
/// product and a sum (two roundings). Host tests of the functions below
/// check their indexing, within a tolerance that covers either.
#[inline(always)]
pub fn fma(a: f32, b: f32, c: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        crate::prim::fma_f32(a, b, c)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        a * b + c
    }
}

/// The signal index of element `e` of a tile whose outputs start at
/// `start`, for a mask of radius `r` on a row of `n`: `start + e − r`, or
/// `None` outside the row (the tile holds a zero there).
#[inline(always)]
pub fn tile_source(start: usize, e: usize, r: usize, n: usize) -> Option<usize> {
    let g = start + e;
    if g >= r && g - r < n {
        Some(g - r)
    } else {
        None
    }
}

/// `acc[a] += x[a + J] · m[J]` for every output `a < N`, with `x` the
/// `2W` inputs `lo ++ hi`: `N` FMAs on registers (`J` is a constant, so
/// every index is one). `N` is `W`, or `W + 1` for one output more
/// (`a + J < 2W` either way).
#[inline(always)]
#[allow(
    clippy::needless_range_loop,
    reason = "index loops over constant ranges unroll fully and keep the arrays in registers"
)]
fn tap<const J: usize, const W: usize, const N: usize>(
    acc: &mut [f32; N],
    lo: &[f32; W],
    hi: &[f32; W],
    m: &[f32; W],
) {
    const { assert!(N == W || N == W + 1) };
    for a in 0..N {
        let x = if a + J < W { lo[a + J] } else { hi[a + J - W] };
        acc[a] = fma(x, m[J], acc[a]);
    }
}

/// [`tap`] for `skip <= J < taps` (at most 16: a constant 16 and a
/// constant 0 leave no test). Spelled out tap by tap: LLVM does not unroll
/// a 16 × 16 loop nest by itself, and a rolled one keeps `acc` in local
/// memory.
#[inline(always)]
fn accumulate<const W: usize, const N: usize>(
    acc: &mut [f32; N],
    lo: &[f32; W],
    hi: &[f32; W],
    m: &[f32; W],
    (skip, taps): (usize, usize),
) {
    // `J < W` is a constant: the taps beyond the width vanish (W <= 16).
    macro_rules! taps {
        ($($j:literal)*) => {$(
            if $j < W && $j >= skip && $j < taps {
                tap::<$j, W, N>(acc, lo, hi, m);
            }
        )*};
    }
    taps!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15);
}

/// The `W` outputs of thread `lane` of a [`Conv1dVariant::RegisterBlocked`]
/// block of width `W`: outputs `W lane + a` of the block's tile, whose
/// element `e` is input `start + e − r`. `segment(s)` gives tile elements
/// `W s .. W s + W`, `weights(c)` weights `W c .. W c + W` (zero past
/// `taps`, never multiplied). Taps `W c ..` need segments `lane + c` and
/// `lane + c + 1`; each round loads
/// one new segment and keeps the other from the round before. The kernel
/// passes 16-byte shared-memory loads; host tests pass slices.
#[inline(always)]
pub fn blocked_outputs<const W: usize>(
    lane: usize,
    taps: usize,
    segment: impl Fn(usize) -> [f32; W],
    weights: impl Fn(usize) -> [f32; W],
) -> [f32; W] {
    // The wide width takes its rounds two at a time (measured: see
    // `shifted_sums`); the narrow one one at a time.
    if W == BLOCKED_WIDTHS[1] {
        shifted_sums::<W, W, true>(lane, (0, taps), [0.0; W], segment, weights)
    } else {
        blocked_sums(lane, taps, [0.0; W], segment, weights)
    }
}

/// [`blocked_outputs`] for `N` outputs (`W`, or `W + 1`: the first output
/// of the next lane too), each sum starting from `init` instead of zero.
#[inline(always)]
pub fn blocked_sums<const W: usize, const N: usize>(
    lane: usize,
    taps: usize,
    init: [f32; N],
    segment: impl Fn(usize) -> [f32; W],
    weights: impl Fn(usize) -> [f32; W],
) -> [f32; N] {
    shifted_sums::<W, N, false>(lane, (0, taps), init, segment, weights)
}

/// [`blocked_sums`] of the taps `skip..taps` only (`skip < W`): the
/// weights before `skip` are zeros that shift the mask, and are not
/// multiplied (`0 · ∞` would be NaN). `PAIRED` takes two rounds per
/// iteration of the loop: the second round's new segment takes the
/// registers of the first's old one, so no segment is copied from round to
/// round, and the loop's test runs once per `2W` taps (537 instructions
/// for 512 FMAs instead of 276 for 256 in step 4's wide kernel, held to
/// its launch bounds). Step 4's wide kernel pairs: 2^26 outputs, same
/// runs, µs before / after, mask 127 410 / 390 on an H100 and 409 / 390
/// on an H200, mask 1 025 2 741 / 2 563 and 2 733 / 2 562. Measured and
/// not kept: pairing the narrow kernel too (its registers fell to 63, a
/// fourth block of 256 threads per SM: mask 31 on the H100 200 → 204 µs)
/// and Karatsuba's sums (mask 1 025 2 197 → 2 624 µs, H100).
#[inline(always)]
pub fn shifted_sums<const W: usize, const N: usize, const PAIRED: bool>(
    lane: usize,
    (skip, taps): (usize, usize),
    init: [f32; N],
    segment: impl Fn(usize) -> [f32; W],
    weights: impl Fn(usize) -> [f32; W],
) -> [f32; N] {
    let mut acc = init;
    let mut lo = segment(lane);
    let (full, rest) = (taps / W, taps % W);
    // Only the first round skips (a constant 0 leaves no test).
    let skip_in = |c: usize| if c == 0 { skip } else { 0 };
    // Rounds 0..paired two at a time, the rest one at a time.
    let paired = if PAIRED { full - full % 2 } else { 0 };
    for c in (0..paired).step_by(2) {
        let mid = segment(lane + c + 1);
        accumulate(&mut acc, &lo, &mid, &weights(c), (skip_in(c), W));
        lo = segment(lane + c + 2);
        accumulate(&mut acc, &mid, &lo, &weights(c + 1), (0, W));
    }
    for c in paired..full {
        let hi = segment(lane + c + 1);
        accumulate(&mut acc, &lo, &hi, &weights(c), (skip_in(c), W));
        lo = hi;
    }
    if rest > 0 {
        let hi = segment(lane + full + 1);
        accumulate(&mut acc, &lo, &hi, &weights(full), (skip_in(full), rest));
    }
    acc
}

/// The three half-rate sequences and half masks of
/// [`Conv1dVariant::Karatsuba`]. With `x` the tile's inputs (`x[e]` is
/// signal element `start + e − r`) and `h` the mask: the even phase is
/// `E[m] = x[2m]` with weights `h[2p]`, the odd one `O[m] = x[2m + 1]` with
/// `h[2p + 1]`, the sum `S[m] = x[2m + 1] + x[2m + 2]` with `h[2p] + h[2p +
/// 1]` (weights past the mask are zero). Its number is its place in shared
/// memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// `E` and the even weights.
    Even = 0,
    /// `O` and the odd weights.
    Odd = 1,
    /// `S` and the sums of the two.
    Sum = 2,
}

/// [`blocked_sums`] of `(lane, taps, segment, weights)` from `init`.
#[inline(always)]
fn phase_sums<const N: usize, S, M>(
    (lane, taps, segment, weights): (usize, usize, S, M),
    init: [f32; N],
) -> [f32; N]
where
    S: Fn(usize) -> [f32; SPLIT_WIDTH],
    M: Fn(usize) -> [f32; SPLIT_WIDTH],
{
    blocked_sums(lane, taps, init, segment, weights)
}

/// The outputs of thread `lane` of a [`Conv1dVariant::Karatsuba`] block:
/// `(even, odd)`, where `even[q]` is tile output `2m` and `odd[q]` output
/// `2m + 1` for the pair `m = 16·lane + q`. `segment(phase, s)` gives
/// elements `16 s .. 16 s + 16` of that phase's sequence, `weights(phase,
/// c)` its weights `16 c .. 16 c + 16` (see [`Phase`]).
///
/// With `A = Σ_p h[2p]·E[m + p]`, `B = Σ_p h[2p + 1]·O[m + p]` and `C =
/// Σ_p (h[2p] + h[2p + 1])·S[m + p]`, output `2m` is `A(m) + B(m)` and
/// output `2m + 1` is `C(m) − A(m + 1) − B(m)`: `C` holds the odd output's
/// products and the cross terms `h[2p]·x[2m + 2 + 2p]` and `h[2p +
/// 1]·x[2m + 1 + 2p]`, which are `A(m + 1)` and `B(m)`. Three sums of
/// `⌈taps / 2⌉` terms for two outputs, and `A` for 17 pairs.
///
/// An even output sums its own products, as step 4 does. An odd output's
/// computed value also carries the rounding of the cross terms, which
/// belong to its neighbours: with `M(i)` the sum of `|products|` of output
/// `i` and `u = 2^-24`, its error is at most about
/// `(3⌈taps / 2⌉ + 5)·u·(M(i − 1) + M(i) + M(i + 1))` (the products of `C`
/// with `S` and `h[2p] + h[2p + 1]` rounded, `A(m + 1)` and `B(m)` rounded
/// and subtracted), against `(taps + 2)·u·M(i)` for the direct sum. Where
/// the cross terms do not cancel (∞ − ∞, an overflow of a sum), an odd
/// output is not finite: if any of the thread's are not, it computes them
/// again directly, `Σ_p h[2p]·O[m + p] + Σ_p h[2p + 1]·E[m + 1 + p]`.
#[inline(always)]
pub fn karatsuba_outputs(
    lane: usize,
    taps: usize,
    segment: impl Fn(Phase, usize) -> [f32; SPLIT_WIDTH],
    weights: impl Fn(Phase, usize) -> [f32; SPLIT_WIDTH],
) -> ([f32; SPLIT_WIDTH], [f32; SPLIT_WIDTH]) {
    const W: usize = SPLIT_WIDTH;
    let (even_taps, odd_taps) = (taps.div_ceil(2), taps / 2);
    // `taps` terms of one phase's sequence against another's weights.
    let (segment, weights) = (&segment, &weights);
    let sums = |sequence: Phase, of: Phase, taps: usize| {
        (
            lane,
            taps,
            move |s| segment(sequence, s),
            move |c| weights(of, c),
        )
    };
    let b: [f32; W] = phase_sums(sums(Phase::Odd, Phase::Odd, odd_taps), [0.0; W]);
    let a: [f32; W + 1] = phase_sums(sums(Phase::Even, Phase::Even, even_taps), [0.0; W + 1]);
    let mut even = [0.0f32; W];
    let mut cross = [0.0f32; W];
    for q in 0..W {
        even[q] = a[q] + b[q];
        cross[q] = -(a[q + 1] + b[q]);
    }
    // C − A(m + 1) − B(m): the sums start from the cross terms.
    let mut odd: [f32; W] = phase_sums(sums(Phase::Sum, Phase::Sum, even_taps), cross);
    let mut finite = true;
    #[allow(
        clippy::needless_range_loop,
        reason = "an iterator over the array kept it in local memory"
    )]
    for q in 0..W {
        finite &= odd[q].is_finite();
    }
    if !finite {
        let o: [f32; W] = phase_sums(sums(Phase::Odd, Phase::Even, even_taps), [0.0; W]);
        let e: [f32; W + 1] = phase_sums(sums(Phase::Even, Phase::Odd, odd_taps), [0.0; W + 1]);
        for q in 0..W {
            odd[q] = o[q] + e[q + 1];
        }
    }
    (even, odd)
}

#[cfg(target_arch = "nvptx64")]
#[allow(
    clippy::needless_range_loop,
    reason = "index loops over constant ranges unroll fully and keep the arrays in registers; \
              iterators over them spilled to local memory"
)]
mod device {
    //! Common contract: `1 <= taps <= MAX_TAPS`; `signal` valid for reads
    //! of `rows` rows of `n` elements `signal_pitch` apart, `out` for
    //! writes of `rows` rows of `n` elements `out_pitch` apart, not
    //! overlapping the signal, the mask or another row of `out`; `mask`
    //! valid for reads of `taps` elements (steps 1 and 4), or
    //! [`CONV1D_MASK`] holding the mask (steps 2 and 3, which ignore
    //! `mask`); a 1D block of the step's shape, a grid of at least
    //! `ceil(n / outputs_per_block)` blocks in x and any number in y (blocks
    //! walk the rows `gridDim.y` apart), and the step's `shared_bytes(taps)`.
    use super::*;
    use crate::prim::*;

    /// One 16-byte word of shared memory: four floats.
    #[repr(C, align(16))]
    #[derive(Clone, Copy)]
    struct Quad([f32; 4]);

    /// Steps 1 and 2: one output per thread, `weight(j)` the mask.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn direct(
        signal: *const f32,
        signal_pitch: usize,
        n: usize,
        rows: u32,
        taps: u32,
        out: *mut f32,
        out_pitch: usize,
        weight: impl Fn(usize) -> f32,
    ) {
        let i = global_index_x();
        if i >= n {
            return;
        }
        let (taps, r) = (taps as usize, taps as usize / 2);
        let mut row = block_idx_y() as usize;
        while row < rows as usize {
            let x = signal.add(row * signal_pitch);
            let mut sum = 0.0f32;
            // Input index `i − r + j`, kept unsigned: `i + j − r` when
            // `i + j >= r`.
            for j in 0..taps {
                let k = i + j;
                if k >= r && k - r < n {
                    sum = fma(*x.add(k - r), weight(j), sum);
                }
            }
            *out.add(row * out_pitch + i) = sum;
            row += grid_dim_y() as usize;
        }
    }

    /// Step 1.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn basic(
        signal: *const f32,
        signal_pitch: usize,
        n: usize,
        rows: u32,
        mask: *const f32,
        taps: u32,
        out: *mut f32,
        out_pitch: usize,
    ) {
        direct(signal, signal_pitch, n, rows, taps, out, out_pitch, |j| {
            *mask.add(j)
        })
    }

    /// Step 2.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn constant_mask(
        signal: *const f32,
        signal_pitch: usize,
        n: usize,
        rows: u32,
        _mask: *const f32,
        taps: u32,
        out: *mut f32,
        out_pitch: usize,
    ) {
        direct(signal, signal_pitch, n, rows, taps, out, out_pitch, |j| {
            // SAFETY: `j < taps <= MAX_TAPS` (launch contract).
            CONV1D_MASK.get_unchecked(j)
        })
    }

    /// Step 3: block `b` computes outputs `b·block ..` of each of its rows
    /// from a shared tile of inputs `b·block − r .. b·block + block − r +
    /// taps − 1`.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn shared_tile(
        signal: *const f32,
        signal_pitch: usize,
        n: usize,
        rows: u32,
        _mask: *const f32,
        taps: u32,
        out: *mut f32,
        out_pitch: usize,
    ) {
        let tile = dynamic_shared::<f32>();
        let (taps, r) = (taps as usize, taps as usize / 2);
        let block = block_dim_x() as usize;
        let tid = thread_idx_x() as usize;
        let start = block_idx_x() as usize * block;
        let len = block + taps - 1;
        let i = start + tid;
        let mut row = block_idx_y() as usize;
        while row < rows as usize {
            let x = signal.add(row * signal_pitch);
            // Tile element `e` is input `start + e − r`, zero outside the row.
            let mut e = tid;
            while e < len {
                *tile.add(e) = match tile_source(start, e, r, n) {
                    Some(i) => *x.add(i),
                    None => 0.0,
                };
                e += block;
            }
            sync_threads();
            if i < n {
                let mut sum = 0.0f32;
                for j in 0..taps {
                    // SAFETY: `j < taps <= MAX_TAPS` (launch contract).
                    sum = fma(*tile.add(tid + j), CONV1D_MASK.get_unchecked(j), sum);
                }
                *out.add(row * out_pitch + i) = sum;
            }
            // Before the next row overwrites the tile.
            sync_threads();
            row += grid_dim_y() as usize;
        }
    }

    /// Stores a thread's `W` consecutive outputs, from output `first` of a
    /// row of `n` starting at `y`: 16-byte stores where all lie inside the
    /// row on 16 bytes, one by one (inside the row only) otherwise.
    #[inline(always)]
    unsafe fn store_outputs<const W: usize>(y: *mut f32, first: usize, n: usize, acc: &[f32; W]) {
        if first >= n {
            return;
        }
        let y = y.add(first);
        if first + W <= n && (y as usize).is_multiple_of(16) {
            for q in 0..W / 4 {
                let w = [
                    acc[4 * q].to_bits(),
                    acc[4 * q + 1].to_bits(),
                    acc[4 * q + 2].to_bits(),
                    acc[4 * q + 3].to_bits(),
                ];
                store_v4(y.add(4 * q).cast(), w);
            }
        } else {
            for a in 0..W {
                if first + a < n {
                    *y.add(a) = acc[a];
                }
            }
        }
    }

    /// Stages tile elements `from`, `from + step`, ... below `len` of the
    /// tile whose outputs start at `start`: element `e`, input `start + e −
    /// r` of the row at `x` (zero outside the row of `n`), at word `word(e)`
    /// of `tile`, with read-only loads.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn stage_elements(
        tile: *mut f32,
        word: impl Fn(usize) -> usize,
        x: *const f32,
        start: usize,
        r: usize,
        n: usize,
        from: usize,
        len: usize,
        step: usize,
    ) {
        let mut e = from;
        while e < len {
            *tile.add(word(e)) = match tile_source(start, e, r, n) {
                Some(i) => f32::from_bits(load_nc_u32(x.add(i).cast())),
                None => 0.0,
            };
            e += step;
        }
    }

    /// The 16 tile elements of segment `s`: four 16-byte shared loads.
    #[inline(always)]
    unsafe fn segment<const W: usize>(tile: *const f32, s: usize) -> [f32; W] {
        let p = tile.add(s * (W + SEGMENT_PAD)).cast::<Quad>();
        let mut x = [0.0f32; W];
        for q in 0..W / 4 {
            let Quad(v) = *p.add(q);
            for k in 0..4 {
                x[4 * q + k] = v[k];
            }
        }
        x
    }

    /// Loads `L` inputs of `x` for tile elements `first + tid + k ·
    /// threads` of the tile whose outputs start at `start` (zero outside the
    /// row), all in flight at once: unchecked where they all lie inside the
    /// row.
    #[inline(always)]
    unsafe fn load_inputs<const L: usize>(
        x: *const f32,
        start: usize,
        first: usize,
        tid: usize,
        threads: usize,
        r: usize,
        n: usize,
    ) -> [f32; L] {
        let mut v = [0.0f32; L];
        if start + first >= r && start + first - r + L * threads <= n {
            let base = x.add(start + first - r);
            for k in 0..L {
                v[k] = f32::from_bits(load_nc_u32(base.add(tid + k * threads).cast()));
            }
        } else {
            for k in 0..L {
                if let Some(i) = tile_source(start, first + tid + k * threads, r, n) {
                    v[k] = f32::from_bits(load_nc_u32(x.add(i).cast()));
                }
            }
        }
        v
    }

    /// What [`tile_runs`] walks: `rows` rows of `n` inputs at `signal`
    /// (`signal_pitch` apart), tiles of `tile_len` outputs whose staged
    /// inputs are `tile_len + keep` elements, the first `keep` of them the
    /// previous tile's last; `threads` threads, `r` the mask's radius.
    struct Run {
        signal: *const f32,
        signal_pitch: usize,
        n: usize,
        rows: u32,
        r: usize,
        threads: usize,
        tile_len: usize,
        keep: usize,
    }

    /// Steps 4 and 7: block `b` takes the same run of consecutive tiles
    /// in each of its rows and calls `compute(row, start)` on each tile,
    /// staged in `tile` (element `e` at word `word(e)`, input `start + e −
    /// r`, zeros outside the row). The next tile's first `keep` elements
    /// are this tile's last ones (moved within shared memory); its other
    /// `tile_len = L · threads` are loaded into registers before
    /// `compute`, so their latency hides behind it.
    #[inline(always)]
    unsafe fn tile_runs<const L: usize>(
        run: Run,
        tile: *mut f32,
        word: impl Fn(usize) -> usize + Copy,
        mut compute: impl FnMut(usize, usize),
    ) {
        let Run {
            signal,
            signal_pitch,
            n,
            rows,
            r,
            threads,
            tile_len,
            keep,
        } = run;
        let len = tile_len + keep;
        let tid = thread_idx_x() as usize;
        let tiles = n.div_ceil(tile_len);
        let per_block = tiles.div_ceil(grid_dim_x() as usize);
        let first_tile = block_idx_x() as usize * per_block;
        let end_tile = (first_tile + per_block).min(tiles);
        let mut row = block_idx_y() as usize;
        while row < rows as usize && first_tile < end_tile {
            let x = signal.add(row * signal_pitch);
            // The first tile of the run, whole: its first `tile_len`
            // elements with all loads of a thread in flight, then the rest.
            let start = first_tile * tile_len;
            let v = load_inputs::<L>(x, start, 0, tid, threads, r, n);
            for k in 0..L {
                *tile.add(word(tid + k * threads)) = v[k];
            }
            stage_elements(tile, word, x, start, r, n, tile_len + tid, len, threads);
            sync_threads();

            for t in first_tile..end_tile {
                let start = t * tile_len;
                let next = t + 1 < end_tile;
                // The next tile's new inputs, in flight during `compute`.
                let v = if next {
                    load_inputs::<L>(x, start + tile_len, keep, tid, threads, r, n)
                } else {
                    [0.0; L]
                };
                compute(row, start);
                // Every thread is done reading the tile (also before the
                // next row's first tile overwrites it).
                sync_threads();
                if next {
                    // Elements tile_len .. len become 0 .. keep (no
                    // overlap: keep <= tile_len); then, once every thread
                    // has moved its part, the new elements from `keep` on,
                    // which cover where the old ones were.
                    let mut e = tid;
                    while e < keep {
                        *tile.add(word(e)) = *tile.add(word(tile_len + e));
                        e += threads;
                    }
                    sync_threads();
                    for k in 0..L {
                        *tile.add(word(keep + tid + k * threads)) = v[k];
                    }
                    sync_threads();
                }
            }
            row += grid_dim_y() as usize;
        }
    }

    /// Step 4, width `W`: block `b` computes a run of consecutive tiles of
    /// [`BLOCKED_TILE`] outputs of each of its rows; in a tile, thread `l`
    /// the `W` outputs from `W l`. The tile holds inputs `start − r ..`
    /// (zeros outside the row), element `e` at word `padded_index(e, W)`;
    /// output `W l + a` needs elements `W l + a + j`, so the taps from `W c`
    /// need segments `l + c` and `l + c + 1`. The next tile's first
    /// `padded` elements are this tile's last ones (moved within shared
    /// memory); its other [`BLOCKED_TILE`] are loaded into registers before
    /// this tile's arithmetic, so their latency hides behind it.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn register_blocked<const W: usize>(
        signal: *const f32,
        signal_pitch: usize,
        n: usize,
        rows: u32,
        mask: *const f32,
        taps: u32,
        out: *mut f32,
        out_pitch: usize,
    ) {
        let threads = blocked_threads(W) as usize;
        let (taps, r) = (taps as usize, taps as usize / 2);
        let padded = padded_taps(taps, W);
        let len = blocked_tile_len(taps, W);
        let mut carver = SharedCarver::new();
        let tile = carver.take::<f32>(padded_words(len, W));
        // 16-byte aligned: the tile is a whole number of 80-byte segments.
        let weights = carver.take::<f32>(padded);
        let tid = thread_idx_x() as usize;

        // The mask, zero-padded; read after the first barrier of the run.
        let mut j = tid;
        while j < padded {
            *weights.add(j) = if j < taps { *mask.add(j) } else { 0.0 };
            j += threads;
        }

        tile_runs::<W>(
            Run {
                signal,
                signal_pitch,
                n,
                rows,
                r,
                threads,
                tile_len: BLOCKED_TILE,
                keep: padded,
            },
            tile,
            |e| padded_index(e, W),
            |row, start| {
                let acc = blocked_outputs(
                    tid,
                    taps,
                    |s| segment::<W>(tile, s),
                    |c| segment_of_weights::<W>(weights, c),
                );
                store_outputs(out.add(row * out_pitch), start + tid * W, n, &acc);
            },
        );
    }

    /// Step 5: block `b` computes tile `b` ([`SPLIT_TILE`] outputs from
    /// `b · SPLIT_TILE`) of each of its rows. The tile's inputs `x[e]`
    /// (signal element `start + e − r`, zero outside the row) are staged
    /// as the three [`Phase`] sequences of [`split_len`] elements, each
    /// laid out by [`padded_index`] as step 4's tile, and thread `l`
    /// computes the 16 pairs from `16 l` ([`karatsuba_outputs`]).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub unsafe fn karatsuba(
        signal: *const f32,
        signal_pitch: usize,
        n: usize,
        rows: u32,
        mask: *const f32,
        taps: u32,
        out: *mut f32,
        out_pitch: usize,
    ) {
        const W: usize = SPLIT_WIDTH;
        let threads = SPLIT_THREADS as usize;
        let (taps, r) = (taps as usize, taps as usize / 2);
        let half = padded_taps(taps.div_ceil(2), W);
        let len = split_len(taps);
        let words = split_words(taps);
        let mut carver = SharedCarver::new();
        // Whole 80-byte segments, so each phase starts 16-byte aligned.
        let sequences = carver.take::<f32>(3 * words);
        // Multiples of 16 weights: each phase's start is aligned too.
        let weights = carver.take::<f32>(3 * half);
        let tid = thread_idx_x() as usize;
        let start = block_idx_x() as usize * SPLIT_TILE;

        // The half masks, zero past the mask; read after the barrier below.
        let mut j = tid;
        while j < half {
            let e = if 2 * j < taps { *mask.add(2 * j) } else { 0.0 };
            let o = if 2 * j + 1 < taps {
                *mask.add(2 * j + 1)
            } else {
                0.0
            };
            *weights.add(j) = e;
            *weights.add(half + j) = o;
            *weights.add(2 * half + j) = e + o;
            j += threads;
        }

        let stage = |m: usize, [e, o, next]: [f32; 3]| {
            let at = padded_index(m, W);
            *sequences.add(at) = e;
            *sequences.add(words + at) = o;
            *sequences.add(2 * words + at) = o + next;
        };
        let mut row = block_idx_y() as usize;
        while row < rows as usize {
            let x = signal.add(row * signal_pitch);
            // Pair m needs inputs x[2m], x[2m + 1] and x[2m + 2].
            if start >= r && start - r + 2 * len < n {
                let x = x.add(start - r);
                let load = |e: usize| f32::from_bits(load_nc_u32(x.add(e).cast()));
                // The tile's pairs, all of a thread's loads in flight.
                let (mut e, mut o, mut next) = ([0.0f32; W], [0.0f32; W], [0.0f32; W]);
                for k in 0..W {
                    let m = tid + k * threads;
                    (e[k], o[k], next[k]) = (load(2 * m), load(2 * m + 1), load(2 * m + 2));
                }
                // Element tid + 64 k sits 80 k words after element tid.
                let at = sequences.add(padded_index(tid, W));
                let step = padded_index(threads, W);
                for k in 0..W {
                    *at.add(k * step) = e[k];
                }
                for k in 0..W {
                    *at.add(words + k * step) = o[k];
                }
                for k in 0..W {
                    *at.add(2 * words + k * step) = o[k] + next[k];
                }
                let mut m = SPLIT_TILE / 2 + tid;
                while m < len {
                    stage(m, [load(2 * m), load(2 * m + 1), load(2 * m + 2)]);
                    m += threads;
                }
            } else {
                let load = |e: usize| match tile_source(start, e, r, n) {
                    Some(i) => f32::from_bits(load_nc_u32(x.add(i).cast())),
                    None => 0.0,
                };
                let mut m = tid;
                while m < len {
                    stage(m, [load(2 * m), load(2 * m + 1), load(2 * m + 2)]);
                    m += threads;
                }
            }
            sync_threads();

            let (even, odd) = karatsuba_outputs(
                tid,
                taps,
                |p, s| segment::<W>(sequences.add(p as usize * words), s),
                |p, c| segment_of_weights::<W>(weights.add(p as usize * half), c),
            );
            let first = start + 2 * W * tid;
            if first < n {
                let y = out.add(row * out_pitch + first);
                if first + 2 * W <= n && (y as usize).is_multiple_of(16) {
                    for q in 0..W / 2 {
                        let w = [
                            even[2 * q].to_bits(),
                            odd[2 * q].to_bits(),
                            even[2 * q + 1].to_bits(),
                            odd[2 * q + 1].to_bits(),
                        ];
                        store_v4(y.add(4 * q).cast(), w);
                    }
                } else {
                    // Two loops of 16, which unroll (one of 32 does not).
                    for q in 0..W {
                        if first + 2 * q < n {
                            *y.add(2 * q) = even[q];
                        }
                    }
                    for q in 0..W {
                        if first + 2 * q + 1 < n {
                            *y.add(2 * q + 1) = odd[q];
                        }
                    }
                }
            }
            // Every thread is done reading before the next row's staging.
            sync_threads();
            row += grid_dim_y() as usize;
        }
    }

    /// Step 6: block `b` computes tile `b` ([`STREAM_TILE`] outputs from
    /// `start = b · STREAM_TILE`) of each of its rows. The tile holds
    /// signal elements from `start − r − s`, where `s` (0 to 3) puts that
    /// element on a 16-byte boundary, so that output `start + e` is
    /// `Σ_j tile[e + j] · m'[j]` with the mask shifted by `s` (`m'[j] =
    /// mask[j − s]`, zeros in front and past the end): [`stream_tile_len`]
    /// elements, loaded as 16-byte words where the tile lies inside the row
    /// and element by element (zeros outside) where it does not. Thread `l`
    /// then computes the 4 outputs from `4 (l + 256 p)` in passes `p` = 0
    /// to 3 with [`shifted_sums`] of taps `s..taps + s`.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub unsafe fn streamed(
        signal: *const f32,
        signal_pitch: usize,
        n: usize,
        rows: u32,
        mask: *const f32,
        taps: u32,
        out: *mut f32,
        out_pitch: usize,
    ) {
        const W: usize = STREAM_WIDTH;
        const QUADS: usize = STREAM_TILE / 4 / STREAM_THREADS as usize;
        let threads = STREAM_THREADS as usize;
        let (taps, r) = (taps as usize, taps as usize / 2);
        let len = stream_tile_len(taps);
        let padded = padded_taps(taps + 3, W);
        let mut carver = SharedCarver::new();
        // Whole 16-byte words: the weights are 16-byte aligned too.
        let tile = carver.take::<f32>(len);
        let weights = carver.take::<f32>(padded);
        let tid = thread_idx_x() as usize;
        let start = block_idx_x() as usize * STREAM_TILE;

        let mut row = block_idx_y() as usize;
        while row < rows as usize {
            let x = signal.add(row * signal_pitch);
            let s = stream_shift(x as usize, taps);
            let lead = r + s;
            // The shifted mask, zeros around it.
            let mut j = tid;
            while j < padded {
                *weights.add(j) = if j >= s && j - s < taps {
                    *mask.add(j - s)
                } else {
                    0.0
                };
                j += threads;
            }
            if start >= lead && start - lead + len <= n {
                // 16-byte aligned by the choice of s.
                let base = x.add(start - lead).cast::<Words4>();
                let mut v = [[0u32; 4]; QUADS];
                for k in 0..QUADS {
                    v[k] = load_nc_v4(base.add(tid + k * threads));
                }
                // The halo: fewer quads than threads (asserted after
                // `blocked_threads`).
                let halo = STREAM_TILE / 4 + tid;
                let h = if halo < len / 4 {
                    load_nc_v4(base.add(halo))
                } else {
                    [0; 4]
                };
                let quad = |q: usize| tile.add(4 * q).cast::<Words4>();
                for k in 0..QUADS {
                    *quad(tid + k * threads) = v[k];
                }
                if halo < len / 4 {
                    *quad(halo) = h;
                }
            } else {
                // The tile starts `lead` elements before its outputs.
                stage_elements(tile, |e| e, x, start, lead, n, tid, len, threads);
            }
            sync_threads();

            for p in 0..STREAM_TILE / W / threads {
                let lane = tid + p * threads;
                let acc = shifted_sums::<W, W, false>(
                    lane,
                    (s, taps + s),
                    [0.0; W],
                    |seg| {
                        let Quad(v) = *tile.add(W * seg).cast::<Quad>();
                        v
                    },
                    |c| segment_of_weights::<W>(weights, c),
                );
                store_outputs(out.add(row * out_pitch), start + W * lane, n, &acc);
            }
            row += grid_dim_y() as usize;
            if row < rows as usize {
                // Every thread is done reading before the next row's staging.
                sync_threads();
            }
        }
    }

    /// Two shared-memory words read as one 8-byte load.
    #[cfg(target_feature = "sm_80")]
    #[repr(C, align(8))]
    #[derive(Clone, Copy)]
    struct Pair([f32; 2]);

    /// Step 7: block `b` computes a run of consecutive tiles of
    /// [`TENSOR_TILE`] outputs of each of its rows, as step 4 does. A
    /// tile's inputs `X[e]` (signal element `start + e − r`, zero outside
    /// the row), element `e` at word [`tensor_index`]`(e)`, and the mask,
    /// weight `j` at word `j + 16` among zeros, are staged; warp `w` then
    /// computes the tensor-core tiles of outputs from `512 w`, `512 w +
    /// 128`, ...: [`tensor_a_words`], [`tensor_b_elements`] and
    /// [`tensor_d_outputs`] say which elements each lane holds. The next
    /// tile's first `8 · steps − 16` inputs are this tile's last ones (moved
    /// within shared memory); its other [`TENSOR_TILE`] are loaded into
    /// registers before this tile's products, so their latency hides
    /// behind them.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn tf32x3(
        signal: *const f32,
        signal_pitch: usize,
        n: usize,
        rows: u32,
        mask: *const f32,
        taps: u32,
        out: *mut f32,
        out_pitch: usize,
    ) {
        #[cfg(not(target_feature = "sm_80"))]
        {
            let _ = (signal, signal_pitch, n, rows, mask, taps, out, out_pitch);
            trap()
        }
        #[cfg(target_feature = "sm_80")]
        {
            const LOADS: usize = TENSOR_TILE / TENSOR_THREADS as usize;
            let threads = TENSOR_THREADS as usize;
            let (taps, r) = (taps as usize, taps as usize / 2);
            let steps = tensor_steps(taps);
            // The elements a tile shares with the next.
            let halo = tensor_tile_len(taps) - TENSOR_TILE;
            let mask_len = tensor_mask_len(taps);
            let mut carver = SharedCarver::new();
            // 8-byte aligned: the carver starts on 16 bytes.
            let tile = carver.take::<f32>(tensor_tile_words(taps));
            let weights = carver.take::<f32>(mask_len);
            let tid = thread_idx_x() as usize;
            let lane = tid % 32;
            // The warp's first tensor-core tile, as a tile element.
            let first = tid / 32 * TENSOR_WARP_TILES * 128;

            // The mask, zero-padded; read after the first barrier of the run.
            let mut j = tid;
            while j < mask_len {
                *weights.add(j) = if j >= 16 && j - 16 < taps {
                    *mask.add(j - 16)
                } else {
                    0.0
                };
                j += threads;
            }

            tile_runs::<LOADS>(
                Run {
                    signal,
                    signal_pitch,
                    n,
                    rows,
                    r,
                    threads,
                    tile_len: TENSOR_TILE,
                    keep: halo,
                },
                tile,
                tensor_index,
                |row, start| {
                    let mut acc = tensor_tiles(tile, weights, first, lane, steps);
                    if !acc.iter().flatten().all(|v| v.is_finite()) {
                        acc = tensor_outputs_directly(
                            acc, tile, weights, taps, start, first, lane, n,
                        );
                    }
                    let y = out.add(row * out_pitch);
                    let outputs = tensor_d_outputs(lane);
                    for (t, d) in acc.iter().enumerate() {
                        for k in 0..4 {
                            let i = start + first + 128 * t + outputs[k];
                            if i < n {
                                *y.add(i) = d[k];
                            }
                        }
                    }
                },
            );
        }
    }

    /// The accumulators of a warp's [`TENSOR_WARP_TILES`] tensor-core tiles
    /// from tile element `first`, 3xTF32: per step of 8 taps, the mask's
    /// fragment is loaded and split once for all tiles, and each tile
    /// loads and splits one pair of inputs.
    #[cfg(target_feature = "sm_80")]
    #[inline(always)]
    unsafe fn tensor_tiles(
        tile: *const f32,
        weights: *const f32,
        first: usize,
        lane: usize,
        steps: usize,
    ) -> [[f32; 4]; TENSOR_WARP_TILES] {
        let mut acc = [[0.0f32; 4]; TENSOR_WARP_TILES];
        // Uniform across the warp: every lane runs every `mma`. (A 32-bit
        // count: steps <= 130.)
        for s in 0..steps as u32 {
            let s = s as usize;
            let words = tensor_a_words(lane, s);
            let (mut big_a, mut small_a) = ([0u32; 4], [0u32; 4]);
            for k in 0..4 {
                (big_a[k], small_a[k]) = split_tf32_truncated(*weights.add(words[k]));
            }
            // The tiles are 128 elements (16 rows) apart, and so are their
            // words: tensor_index(e + 128 t) = tensor_index(e) + 128 t.
            let [e, _] = tensor_b_elements(first, lane, s);
            let word = tensor_index(e);
            for (t, acc) in acc.iter_mut().enumerate() {
                let Pair([x0, x1]) = *tile.add(word + 128 * t).cast::<Pair>();
                let (b0, b0_small) = split_tf32_truncated(x0);
                let (b1, b1_small) = split_tf32_truncated(x1);
                let (big_b, small_b) = ([b0, b1], [b0_small, b1_small]);
                // The small terms first, as they are the smaller.
                mma_tf32_16x8x8(acc, small_a, big_b);
                mma_tf32_16x8x8(acc, big_a, small_b);
                mma_tf32_16x8x8(acc, big_a, big_b);
            }
        }
        acc
    }

    /// `acc` ([`tensor_tiles`]) with its non-finite outputs computed again
    /// directly, over exactly the window's terms (`Σ_j X[at + j] · M[j]`
    /// for the output from tile element `at`): NaN and ±∞ in the signal
    /// meet zero weights and split parts in the products, which the
    /// window's own terms may not give. Not inlined: a rare path, which
    /// would otherwise keep the caller's loops over tiles from unrolling
    /// (and the accumulators from staying in registers).
    #[cfg(target_feature = "sm_80")]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn tensor_outputs_directly(
        mut acc: [[f32; 4]; TENSOR_WARP_TILES],
        tile: *const f32,
        weights: *const f32,
        taps: usize,
        start: usize,
        first: usize,
        lane: usize,
        n: usize,
    ) -> [[f32; 4]; TENSOR_WARP_TILES] {
        let outputs = tensor_d_outputs(lane);
        for (t, d) in acc.iter_mut().enumerate() {
            for (v, at) in d.iter_mut().zip(outputs) {
                let at = first + 128 * t + at;
                if !v.is_finite() && start + at < n {
                    *v = 0.0;
                    for j in 0..taps {
                        *v = fma(*tile.add(tensor_index(at + j)), *weights.add(j + 16), *v);
                    }
                }
            }
        }
        acc
    }

    /// Weights `16 c .. 16 c + 16` of the staged mask: four 16-byte loads of
    /// one address for the whole warp (a broadcast).
    #[inline(always)]
    unsafe fn segment_of_weights<const W: usize>(weights: *const f32, c: usize) -> [f32; W] {
        let p = weights.add(c * W).cast::<Quad>();
        let mut m = [0.0f32; W];
        for q in 0..W / 4 {
            let Quad(v) = *p.add(q);
            for k in 0..4 {
                m[4 * q + k] = v[k];
            }
        }
        m
    }
}

kernels! {
    /// Every convolution entry point; one parameter list for all.
    pub const KERNELS = {
        (signal: *const T, signal_pitch: usize, n: usize, rows: u32,
            mask: *const T, taps: u32, out: *mut T, out_pitch: usize) {
            fn conv1d_basic<T in f32> = device::basic;
            fn conv1d_constant_mask<T in f32> = device::constant_mask;
            fn conv1d_shared_tile<T in f32> = device::shared_tile;
            /// One entry per width: `conv1d_register_blocked_8_f32`, `..._16_f32`.
            fn conv1d_register_blocked<T in f32; const WIDTH: u32 = { 8, 16 }>
                = device::register_blocked::<{ WIDTH as usize }>;
            fn conv1d_karatsuba<T in f32> = device::karatsuba;
            fn conv1d_streamed<T in f32> = device::streamed;
            fn conv1d_tf32x3<T in f32> = device::tf32x3;
            /// One entry per number of warpgroups in a block:
            /// `conv1d_tf32x3_wgmma_1_f32`, `..._2_f32` ([`wgmma::wgmma_groups`]).
            /// A constant count lets the one-warpgroup entry drop the turns: 125
            /// registers; with the count read from the block's size, one entry
            /// took 233 to 246 and ran 1 025 taps 5% slower (H200, 1 168 against
            /// 1 111 µs).
            fn conv1d_tf32x3_wgmma<T in f32; const GROUPS: u32 = { 1, 2 }>
                = wgmma::kernel::<{ GROUPS as usize }>;
        }
    }
}

/// The arguments every convolution kernel takes.
pub type Conv1dArgs<T> = conv1d_basic::Args<T>;

// The kernel tables' widths and warpgroup counts are the ones the host
// chooses from.
const _: () = assert!(
    conv1d_tf32x3_wgmma::VALUES.len() == 2
        && conv1d_tf32x3_wgmma::VALUES[0] == 1
        && conv1d_tf32x3_wgmma::VALUES[1] as usize == wgmma::WGMMA_GROUPS_MAX
);
const _: () = assert!(
    conv1d_register_blocked::VALUES.len() == 2
        && conv1d_register_blocked::VALUES[0] as usize == BLOCKED_WIDTHS[0]
        && conv1d_register_blocked::VALUES[1] as usize == BLOCKED_WIDTHS[1]
);

impl Conv1dVariant {
    /// The typed entry of this step for a mask of `taps`.
    pub fn entry(self, taps: usize) -> crate::Entry<Conv1dArgs<f32>> {
        match self.runs_as(taps) {
            Conv1dVariant::Basic => conv1d_basic::entry::<f32>(),
            Conv1dVariant::ConstantMask => conv1d_constant_mask::entry::<f32>(),
            Conv1dVariant::SharedTile => conv1d_shared_tile::entry::<f32>(),
            Conv1dVariant::RegisterBlocked => {
                match conv1d_register_blocked::entry::<f32>(blocked_width(taps) as u32) {
                    Some(entry) => entry,
                    // The widths are the table's (asserted above).
                    None => unreachable!("a register-blocked width without an entry"),
                }
            }
            Conv1dVariant::Karatsuba => conv1d_karatsuba::entry::<f32>(),
            Conv1dVariant::Streamed => conv1d_streamed::entry::<f32>(),
            Conv1dVariant::Tf32x3 => conv1d_tf32x3::entry::<f32>(),
            Conv1dVariant::Tf32x3Wgmma => {
                match conv1d_tf32x3_wgmma::entry::<f32>(wgmma::wgmma_groups(taps) as u32) {
                    Some(entry) => entry,
                    // The counts are the table's (asserted above).
                    None => unreachable!("a warpgroup count without an entry"),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    // The crate is `no_std`; its host tests may allocate.
    extern crate std;
    use super::*;
    use std::vec;
    use std::vec::Vec;

    #[test]
    fn shapes_name_their_kernels() {
        for &v in Conv1dVariant::ALL {
            for taps in [
                1,
                STREAM_MAX_TAPS,
                STREAM_MAX_TAPS + 1,
                NARROW_MAX_TAPS,
                NARROW_MAX_TAPS + 1,
                SPLIT_MIN_TAPS,
                MAX_TAPS,
            ] {
                let base = v.entry(taps).kernel().base;
                assert!(base.starts_with(v.runs_as(taps).shape().kernel), "{base}");
            }
        }
        let narrow = Conv1dVariant::RegisterBlocked.entry(7).kernel().name;
        let wide = Conv1dVariant::RegisterBlocked.entry(127).kernel().name;
        assert_eq!(
            (narrow, wide),
            (
                "conv1d_register_blocked_8_f32",
                "conv1d_register_blocked_16_f32"
            )
        );
    }

    #[test]
    fn a_streamed_tile_starts_on_16_bytes() {
        for row in (0..64).step_by(4) {
            for taps in 1..=STREAM_MAX_TAPS {
                let s = stream_shift(row, taps);
                assert!(s < 4);
                for start in (64..128).step_by(4) {
                    let first = start - taps / 2 - s;
                    assert_eq!((row + 4 * first) % 16, 0, "row {row}, taps {taps}");
                }
            }
        }
    }

    #[test]
    fn a_lane_segment_starts_at_word_w_plus_4_times_l() {
        for w in BLOCKED_WIDTHS {
            for l in 0..blocked_threads(w) as usize {
                assert_eq!(padded_index(w * l, w), (w + 4) * l);
                // The segment is contiguous.
                assert_eq!(padded_index(w * l + w - 1, w), (w + 4) * l + w - 1);
            }
        }
    }

    #[test]
    fn sixteen_byte_loads_of_eight_lanes_hit_distinct_banks() {
        // A 16-byte shared load is served in wavefronts of 8 lanes; each
        // lane's 4 words must fall in banks no other lane of its 8 uses.
        for w in BLOCKED_WIDTHS {
            for c in 0..4 {
                for quad in 0..w / 4 {
                    for group in 0..4 {
                        let mut used = [false; 32];
                        for lane in 8 * group..8 * group + 8 {
                            let word = padded_index(w * (lane + c), w) + 4 * quad;
                            for k in 0..4 {
                                let bank = (word + k) % 32;
                                assert!(
                                    !used[bank],
                                    "bank {bank} twice (w {w}, chunk {c}, quad {quad})"
                                );
                                used[bank] = true;
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn shared_memory_fits_without_opting_in() {
        for &v in Conv1dVariant::ALL {
            if v == Conv1dVariant::Tf32x3Wgmma {
                continue;
            }
            for taps in 1..=MAX_TAPS {
                assert!(v.shared_bytes(taps) <= 48 << 10, "{v:?} {taps}");
            }
        }
        // (2048 + 1040) / 16 segments of 20 words, and 1040 weights.
        assert_eq!(
            Conv1dVariant::RegisterBlocked.shared_bytes(MAX_TAPS),
            19_600
        );
        // Three phases of (1024 + 528) / 16 segments of 20 words, and three
        // half masks of 528 weights.
        assert_eq!(Conv1dVariant::Karatsuba.shared_bytes(MAX_TAPS), 29_616);
        // Short masks: step 4's narrow kernel and its staging.
        assert_eq!(
            Conv1dVariant::Karatsuba.shared_bytes(7),
            Conv1dVariant::RegisterBlocked.shared_bytes(7)
        );
        assert_eq!(Conv1dVariant::SharedTile.shared_bytes(7), (256 + 6) * 4);
        // 4096 + 12 inputs and 12 weights.
        assert_eq!(Conv1dVariant::Streamed.shared_bytes(7), (4108 + 12) * 4);
        assert_eq!(
            Conv1dVariant::Streamed.shared_bytes(STREAM_MAX_TAPS + 1),
            Conv1dVariant::RegisterBlocked.shared_bytes(STREAM_MAX_TAPS + 1)
        );
        assert_eq!(Conv1dVariant::Basic.shared_bytes(MAX_TAPS), 0);
        // One warpgroup at 1 025 taps, two at 127.
        assert_eq!(
            Conv1dVariant::Tf32x3Wgmma.shared_bytes(MAX_TAPS) as usize,
            wgmma::wgmma_group_bytes(MAX_TAPS)
        );
        assert_eq!(Conv1dVariant::Tf32x3Wgmma.block(MAX_TAPS), WGMMA_THREADS);
        assert_eq!(Conv1dVariant::Tf32x3Wgmma.shared_bytes(127), 2 * 102_528);
        assert_eq!(Conv1dVariant::Tf32x3Wgmma.block(127), 2 * WGMMA_THREADS);
    }

    /// A value in [-1, 1) that depends on `i` and `seed` only.
    fn value(i: usize, seed: u64) -> f32 {
        let h = (i as u64 ^ seed)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .rotate_left(29)
            .wrapping_mul(0xbf58_476d_1ce4_e5b9);
        (h >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }

    /// Runs every block of a register-blocked launch over one row of `n`
    /// on the host, with the kernel's own pieces (`tile_source`,
    /// `padded_index`, `blocked_outputs`), and compares each output with an
    /// `f64` sum of the definition's products. The tile's pad words hold NaN
    /// and a read outside the tile panics, so a wrong segment address shows.
    /// `infinity_at` puts +∞ into the signal there: it must reach exactly
    /// the outputs whose window covers it.
    fn simulate(n: usize, taps: usize, infinity_at: Option<usize>) {
        match blocked_width(taps) {
            8 => simulate_width::<8>(n, taps, infinity_at),
            _ => simulate_width::<16>(n, taps, infinity_at),
        }
    }

    fn simulate_width<const W: usize>(n: usize, taps: usize, infinity_at: Option<usize>) {
        let mut signal: Vec<f32> = (0..n).map(|i| value(i, 1)).collect();
        if let Some(p) = infinity_at {
            signal[p] = f32::INFINITY;
        }
        // Weights away from zero, so that ∞ · weight is never NaN.
        let mask: Vec<f32> = (0..taps).map(|j| 0.5 + value(j, 2).abs()).collect();
        let r = taps / 2;
        let mut weights = vec![0.0f32; padded_taps(taps, W)];
        weights[..taps].copy_from_slice(&mask);
        let len = blocked_tile_len(taps, W);
        for block in 0..n.div_ceil(BLOCKED_TILE) {
            let start = block * BLOCKED_TILE;
            let mut tile = vec![f32::NAN; padded_words(len, W)];
            for e in 0..len {
                tile[padded_index(e, W)] = tile_source(start, e, r, n).map_or(0.0, |i| signal[i]);
            }
            let step = W + SEGMENT_PAD;
            for lane in 0..blocked_threads(W) as usize {
                let got = blocked_outputs::<W>(
                    lane,
                    taps,
                    |s| tile[step * s..step * s + W].try_into().unwrap(),
                    |c| weights[W * c..W * (c + 1)].try_into().unwrap(),
                );
                for (a, &g) in got.iter().enumerate() {
                    let i = start + lane * W + a;
                    if i >= n {
                        continue;
                    }
                    let (mut want, mut magnitude) = (0.0f64, 0.0f64);
                    for (j, &m) in mask.iter().enumerate() {
                        if i + j >= r && i + j - r < n {
                            let p = signal[i + j - r] as f64 * m as f64;
                            want += p;
                            magnitude += p.abs();
                        }
                    }
                    let tolerance = (taps + 2) as f64 * 2f64.powi(-24) * magnitude;
                    let ok = if want.is_finite() {
                        (g as f64 - want).abs() <= tolerance
                    } else {
                        g as f64 == want
                    };
                    assert!(ok, "n {n}, taps {taps}: output {i} is {g}, want {want}");
                }
            }
        }
    }

    #[test]
    fn register_blocked_threads_compute_the_convolution() {
        for taps in [1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64, 65, 127, MAX_TAPS] {
            for n in [1, 5, 100, 4095, 4096, 4097, 9000] {
                simulate(n, taps, None);
            }
            simulate(9000, taps, Some(4100));
            simulate(4096, taps, Some(0));
            simulate(4096, taps, Some(4095));
        }
    }

    /// [`simulate`] for [`Conv1dVariant::Karatsuba`]: every block of a
    /// launch over one row of `n`, with the kernel's staging (three phases
    /// laid out by `padded_index`, NaN in the pad words) and
    /// `karatsuba_outputs`. Even outputs within the direct bound; odd ones
    /// within `(2·taps + 8)·u·(M(i − 1) + M(i) + M(i + 1))`, which covers
    /// `karatsuba_outputs`'s `(3⌈taps / 2⌉ + 5)·u·…` and the host's
    /// product-and-sum. With `infinity_at`, +∞ there, −∞ 1 200 and NaN 2 400
    /// further on must reach exactly the outputs whose window covers them,
    /// as in step 4 (the mask has weights of both signs and zeros).
    fn simulate_karatsuba(n: usize, taps: usize, infinity_at: Option<usize>) {
        const W: usize = SPLIT_WIDTH;
        let mut signal: Vec<f32> = (0..n).map(|i| value(i, 3)).collect();
        if let Some(p) = infinity_at {
            signal[p] = f32::INFINITY;
            for (after, special) in [(1200, f32::NEG_INFINITY), (2400, f32::NAN)] {
                if p + after < n {
                    signal[p + after] = special;
                }
            }
        }
        // Weights of both signs, and some zero: 0 · ∞ is NaN.
        let mask: Vec<f32> = (0..taps)
            .map(|j| if j % 5 == 3 { 0.0 } else { value(j, 4) })
            .collect();
        let r = taps / 2;
        let half = padded_taps(taps.div_ceil(2), W);
        let weight = |j: usize| mask.get(j).copied().unwrap_or(0.0);
        let mut weights = vec![0.0f32; 3 * half];
        for j in 0..half {
            let (e, o) = (weight(2 * j), weight(2 * j + 1));
            weights[j] = e;
            weights[half + j] = o;
            weights[2 * half + j] = e + o;
        }
        let (len, words) = (split_len(taps), split_words(taps));
        // (value, Σ|finite products|) of output i, (0, 0) outside the row.
        // A neighbour's magnitude counts only its finite products: the cross
        // terms of a finite odd output hold none of the others.
        let exact = |i: isize| {
            let (mut want, mut magnitude) = (0.0f64, 0.0f64);
            if i >= 0 && (i as usize) < n {
                let i = i as usize;
                for (j, &m) in mask.iter().enumerate() {
                    if i + j >= r && i + j - r < n {
                        let p = signal[i + j - r] as f64 * m as f64;
                        want += p;
                        if p.is_finite() {
                            magnitude += p.abs();
                        }
                    }
                }
            }
            (want, magnitude)
        };
        let u = 2f64.powi(-24);
        for block in 0..n.div_ceil(SPLIT_TILE) {
            let start = block * SPLIT_TILE;
            let x = |e: usize| tile_source(start, e, r, n).map_or(0.0, |i| signal[i]);
            // The even, odd and sum phases, as the kernel stages them.
            let mut staged = vec![f32::NAN; 3 * words];
            for m in 0..len {
                let at = padded_index(m, W);
                staged[at] = x(2 * m);
                staged[words + at] = x(2 * m + 1);
                staged[2 * words + at] = x(2 * m + 1) + x(2 * m + 2);
            }
            let step = W + SEGMENT_PAD;
            let segment = |phase: usize, s: usize| -> [f32; W] {
                let base = phase * words + step * s;
                staged[base..base + W].try_into().unwrap()
            };
            for lane in 0..SPLIT_THREADS as usize {
                let (even, odd) = karatsuba_outputs(
                    lane,
                    taps,
                    |p, s| match p {
                        Phase::Even => segment(0, s),
                        Phase::Odd => segment(1, s),
                        Phase::Sum => segment(2, s),
                    },
                    |p, c| {
                        let base = p as usize * half + W * c;
                        weights[base..base + W].try_into().unwrap()
                    },
                );
                for q in 0..W {
                    for (parity, g) in [(0, even[q]), (1, odd[q])] {
                        let i = start + 2 * (W * lane + q) + parity;
                        if i >= n {
                            continue;
                        }
                        let (want, magnitude) = exact(i as isize);
                        let tolerance = if parity == 0 {
                            (taps + 2) as f64 * u * magnitude
                        } else {
                            let near =
                                exact(i as isize - 1).1 + magnitude + exact(i as isize + 1).1;
                            (2 * taps + 8) as f64 * u * near
                        };
                        let ok = if want.is_finite() {
                            (g as f64 - want).abs() <= tolerance
                        } else if want.is_nan() {
                            g.is_nan()
                        } else {
                            g as f64 == want
                        };
                        assert!(ok, "n {n}, taps {taps}: output {i} is {g}, want {want}");
                    }
                }
            }
        }
    }

    #[test]
    fn karatsuba_threads_compute_the_convolution() {
        for taps in [1, 2, 3, 7, 16, 31, 32, 33, 64, 65, 127, 128, 255, MAX_TAPS] {
            for n in [1, 5, 100, 2047, 2048, 2049, 5000] {
                simulate_karatsuba(n, taps, None);
            }
            for at in [0, 1, 2046, 2047, 2048, 2049, 2500, 2501, 4999] {
                simulate_karatsuba(5000, taps, Some(at));
            }
        }
    }

    #[test]
    fn tile_sources_are_inside_the_row() {
        // Radius 3: tile element e of the first block is input e − 3.
        assert_eq!(tile_source(0, 2, 3, 10), None);
        assert_eq!(tile_source(0, 3, 3, 10), Some(0));
        assert_eq!(tile_source(0, 12, 3, 10), Some(9));
        assert_eq!(tile_source(0, 13, 3, 10), None);
        assert_eq!(tile_source(4096, 0, 3, 5000), Some(4093));
    }

    #[test]
    fn the_tile_covers_every_segment_a_thread_reads() {
        for taps in 1..=MAX_TAPS {
            let w = blocked_width(taps);
            let segments = blocked_tile_len(taps, w) / w;
            // The last thread reads up to segment threads − 1 + ⌈taps / w⌉.
            assert!(blocked_threads(w) as usize - 1 + taps.div_ceil(w) < segments);
            // The staged inputs cover the last output's window.
            assert!(BLOCKED_TILE - 1 + taps <= blocked_tile_len(taps, w));
        }
    }

    /// Runs the tensor-core tiles of one [`Conv1dVariant::Tf32x3`] tile
    /// on the host: stages the inputs and the mask by [`tensor_index`] and
    /// [`tensor_mask_len`], gathers every lane's fragments by
    /// [`tensor_a_words`] and [`tensor_b_elements`] (the `B` pairs as the
    /// kernel's 8-byte loads take them, checking their banks), multiplies
    /// the 16 × 8 × 8 matrices the fragments form (the layout of
    /// `prim::mma`) in `f64`, and compares each lane's outputs
    /// ([`tensor_d_outputs`]) with an `f64` sum of the definition's
    /// products. Unwritten tile words hold NaN.
    fn simulate_tensor(n: usize, taps: usize, block: usize) {
        let seed = (n * 31 + taps) as u64;
        let signal: Vec<f32> = (0..n).map(|i| value(i, seed)).collect();
        let mask: Vec<f32> = (0..taps).map(|j| value(j, !seed)).collect();
        let (r, start) = (taps / 2, block * TENSOR_TILE);
        let len = tensor_tile_len(taps);
        assert!(len.is_multiple_of(8));
        let words = tensor_tile_words(taps);
        let mut tile = vec![f32::NAN; words];
        let mut written = vec![false; words];
        for e in 0..len {
            let w = tensor_index(e);
            assert!(!written[w], "word {w} twice");
            written[w] = true;
            tile[w] = tile_source(start, e, r, n).map_or(0.0, |i| signal[i]);
        }
        let mut weights = vec![0.0f32; tensor_mask_len(taps)];
        weights[16..16 + taps].copy_from_slice(&mask);
        let warps = TENSOR_THREADS as usize / 32;
        for warp in 0..warps {
            for t in 0..TENSOR_WARP_TILES {
                let o = (warp * TENSOR_WARP_TILES + t) * 128;
                let mut d = [[0.0f64; 4]; 32];
                for s in 0..tensor_steps(taps) {
                    let mut a = [[f64::NAN; 8]; 16];
                    let mut b = [[f64::NAN; 8]; 8];
                    let mut banks = [[false; 32]; 2];
                    for lane in 0..32 {
                        let (g, q) = (lane / 4, lane % 4);
                        let [m0, m1, m2, m3] = tensor_a_words(lane, s);
                        a[g][q] = weights[m0] as f64;
                        a[g + 8][q] = weights[m1] as f64;
                        a[g][q + 4] = weights[m2] as f64;
                        a[g + 8][q + 4] = weights[m3] as f64;
                        let [e0, e1] = tensor_b_elements(o, lane, s);
                        let w = tensor_index(e0);
                        // One 8-byte load: (b[0], b[1]).
                        assert!(w.is_multiple_of(2));
                        assert_eq!(tensor_index(e1), w + 1);
                        // The kernel finds the words of each tile from
                        // those of the block's first.
                        assert_eq!(w, tensor_index(tensor_b_elements(0, lane, s)[0]) + o);
                        // A half warp's 8-byte loads: 32 distinct banks.
                        for w in [w, w + 1] {
                            let bank = &mut banks[lane / 16][w % 32];
                            assert!(!*bank, "bank {} twice (step {s})", w % 32);
                            *bank = true;
                        }
                        b[q][g] = tile[w] as f64;
                        b[q + 4][g] = tile[w + 1] as f64;
                    }
                    for (lane, d) in d.iter_mut().enumerate() {
                        let (g, q) = (lane / 4, lane % 4);
                        for (k, (m, c)) in [
                            (g, 2 * q),
                            (g, 2 * q + 1),
                            (g + 8, 2 * q),
                            (g + 8, 2 * q + 1),
                        ]
                        .into_iter()
                        .enumerate()
                        {
                            d[k] += (0..8).map(|i| a[m][i] * b[i][c]).sum::<f64>();
                        }
                    }
                }
                let mut seen = [false; 128];
                for (lane, d) in d.iter().enumerate() {
                    for (k, at) in tensor_d_outputs(lane).into_iter().enumerate() {
                        assert!(!seen[at], "output {at} twice");
                        seen[at] = true;
                        let i = start + o + at;
                        if i >= n {
                            continue;
                        }
                        let (mut want, mut size) = (0.0f64, 0.0f64);
                        for j in 0..taps {
                            if i + j >= r && i + j - r < n {
                                let p = signal[i + j - r] as f64 * mask[j] as f64;
                                want += p;
                                size += p.abs();
                            }
                        }
                        let got = d[k];
                        assert!(
                            (got - want).abs() <= 1e-12 * size.max(1.0),
                            "n {n}, taps {taps}, output {i}: {got} against {want}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn tensor_core_tiles_compute_the_convolution() {
        for taps in [1, 2, 7, 8, 9, 31, 64, 127, 128, 1025] {
            // One block over a short row, and the first and second tiles
            // of a row that ends inside its second.
            simulate_tensor(1000, taps, 0);
            simulate_tensor(TENSOR_TILE + 999, taps, 0);
            simulate_tensor(TENSOR_TILE + 999, taps, 1);
        }
    }

    #[test]
    fn the_tensor_tile_holds_every_element_a_lane_reads() {
        for taps in 1..=MAX_TAPS {
            let steps = tensor_steps(taps);
            let last = TENSOR_TILE - 128;
            for lane in 0..32 {
                let [_, e1] = tensor_b_elements(last, lane, steps - 1);
                assert!(e1 < tensor_tile_len(taps));
                let words = tensor_a_words(lane, steps - 1);
                assert!(words.iter().all(|&w| w < tensor_mask_len(taps)));
                assert!(tensor_a_words(lane, 0).iter().all(|&w| w >= 1));
            }
            // The steps cover every tap of output 15 of a column, and the
            // tile shares at least nothing with the next (steps >= 2).
            assert!(8 * steps >= taps + 15 && steps >= 2);
        }
        // 130 steps for the longest mask: 4096 + 1024 inputs and 1056
        // weights.
        assert_eq!(
            Conv1dVariant::Tf32x3.shared_bytes(MAX_TAPS),
            ((5120 + 1056) * 4) as u32
        );
        // Odd steps: the tile's words round up to whole pairs of rows.
        assert_eq!(tensor_steps(121), 17);
        assert_eq!(tensor_tile_len(121), 4096 + 120);
        assert_eq!(tensor_tile_words(121), 4096 + 128);
        // The swizzle keeps every element inside the tile's words, and
        // moves by whole tiles: the halo's move is a shift of words.
        for taps in [1, 2, 9, 127, MAX_TAPS] {
            for e in 0..tensor_tile_len(taps) {
                assert!(tensor_index(e) < tensor_tile_words(taps));
                assert_eq!(tensor_index(TENSOR_TILE + e), tensor_index(e) + TENSOR_TILE);
                // `tensor_tiles` steps from one tensor-core tile to the next
                // by adding 128 to the word.
                assert_eq!(tensor_index(e + 128), tensor_index(e) + 128);
            }
        }
    }
}
