//! Step 7: the convolution as a matrix product on the tensor cores
//! (`mma.sync` on TF32, sm_80 and newer), with FP32-level accuracy by
//! 3xTF32.

#[cfg(target_arch = "nvptx64")]
use {super::Operands, crate::prim::*};
#[cfg(all(target_arch = "nvptx64", target_feature = "sm_80"))]
use {
    super::tiles::{Run, tile_runs},
    super::*,
};

/// Outputs of one tile of [`Conv1dVariant::Tf32x3`](super::Conv1dVariant::Tf32x3): one block, one
/// tile; each of its [`TENSOR_THREADS`]` / 32` warps computes
/// [`TENSOR_WARP_TILES`] tensor-core tiles of 128 consecutive outputs.
#[doc(hidden)]
pub const TENSOR_TILE: usize = 4096;
/// Threads of a [`Conv1dVariant::Tf32x3`](super::Conv1dVariant::Tf32x3) block: 8 warps.
#[doc(hidden)]
pub const TENSOR_THREADS: u32 = 256;
/// Tensor-core tiles of 16 × 8 outputs (128 consecutive outputs, 8 per
/// row) one warp of [`Conv1dVariant::Tf32x3`](super::Conv1dVariant::Tf32x3) computes: each weight
/// fragment, loaded and split once per 8 taps, serves all of them.
#[doc(hidden)]
pub const TENSOR_WARP_TILES: usize = 4;

const _: () = assert!(TENSOR_TILE == TENSOR_THREADS as usize / 32 * TENSOR_WARP_TILES * 128);

/// The default convolution runs [`Conv1dVariant::Tf32x3`](super::Conv1dVariant::Tf32x3) for masks of at
/// least this many taps where the loaded PTX has tensor cores (sm_80 and
/// newer; [`Conv1dVariant::fastest_for`](super::Conv1dVariant::fastest_for)). Measured at 2^26 outputs (H100
/// and H200): at 31 taps every step is bound by memory (step 7 and step 6
/// within 2% either way, step 6 ahead at 7 taps); at 63 taps step 7 takes
/// 226 µs against 257 (H100).
#[doc(hidden)]
pub const TENSOR_MIN_TAPS: usize = 48;

/// Steps of 8 along `k` that [`Conv1dVariant::Tf32x3`](super::Conv1dVariant::Tf32x3) takes for a mask of
/// `taps`: output `16m + c` of a tensor-core tile is `Σ_t M[t − c] ·
/// X[16m + t]` over `t` in `0 .. taps + 15` (the 16 outputs of a column
/// see the mask shifted by 0 to 15 places), rounded up to whole steps.
#[doc(hidden)]
pub const fn tensor_steps(taps: usize) -> usize {
    (taps + 15).div_ceil(8)
}

/// Inputs one [`Conv1dVariant::Tf32x3`](super::Conv1dVariant::Tf32x3) tile stages for a mask of
/// `taps`: its [`TENSOR_TILE`] outputs' and the `8 · steps − 16` that
/// follow (the last output's window and the zeros its last step
/// multiplies); the next tile's first ones.
#[doc(hidden)]
pub const fn tensor_tile_len(taps: usize) -> usize {
    TENSOR_TILE + 8 * tensor_steps(taps) - 16
}

/// Words of [`Conv1dVariant::Tf32x3`](super::Conv1dVariant::Tf32x3)'s zero-padded mask: 16 zeros, the
/// `taps` weights, zeros up to the last step's last fragment. Weight `j`
/// is word `j + 16`, so that a fragment reads `M[t − c]` for `t − c` from
/// −15 without a check.
#[doc(hidden)]
pub const fn tensor_mask_len(taps: usize) -> usize {
    8 * tensor_steps(taps) + 16
}

/// The shared-memory word of tile element `e` in
/// [`Conv1dVariant::Tf32x3`](super::Conv1dVariant::Tf32x3): rows of 8 elements, each row's elements
/// `c` and `c + 4` side by side (`0 4 1 5 2 6 3 7`), so that the two
/// elements of a `B` fragment a lane takes from one tensor-core column
/// (rows `t` and `t + 4`) are one 8-byte load; and rows 4 to 7 of every
/// 8 swapped in pairs (row `R` at `R ^ (R >> 2 & 1)`), so that the rows a
/// half warp's 8-byte loads take, `R`, `R + 2`, `R + 4` and `R + 6` (see
/// [`tensor_b_elements`]), lie in four different groups of 8 banks.
#[doc(hidden)]
pub const fn tensor_index(e: usize) -> usize {
    let row = e / 8;
    8 * (row ^ ((row >> 2) & 1)) + 2 * (e % 4) + (e % 8) / 4
}

/// Words of [`Conv1dVariant::Tf32x3`](super::Conv1dVariant::Tf32x3)'s tile: [`tensor_tile_len`]
/// rounded up to whole pairs of rows, which [`tensor_index`] may swap.
#[doc(hidden)]
pub const fn tensor_tile_words(taps: usize) -> usize {
    tensor_tile_len(taps).next_multiple_of(16)
}

/// [`Conv1dVariant::Tf32x3`](super::Conv1dVariant::Tf32x3)'s error bound for a mask of `taps`, in units
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
#[doc(hidden)]
pub const fn tensor_a_words(lane: usize, s: usize) -> [usize; 4] {
    let w = 16 + 8 * s + lane % 4 - lane / 4;
    [w, w - 8, w + 4, w - 4]
}

/// The tile elements of lane `lane`'s `B` fragment (`b[0]`, `b[1]`) for
/// step `s` of the tensor-core tile whose outputs start at tile element
/// `o`: `B[t][m] = X[o + 16m + 8s + t]`, column `m` the inputs of outputs
/// `o + 16m ..`. The two are one 8-byte load ([`tensor_index`]).
#[doc(hidden)]
pub const fn tensor_b_elements(o: usize, lane: usize, s: usize) -> [usize; 2] {
    let e = o + 16 * (lane / 4) + 8 * s + lane % 4;
    [e, e + 4]
}

/// The outputs, from the tensor-core tile's first, of lane `lane`'s
/// accumulator fragment (`d[0]` to `d[3]`): `D[c][m]` is output `16m + c`.
/// For each `k`, the warp's `d[k]` are 4 runs of 8 consecutive outputs:
/// its stores write whole 32-byte sectors.
#[doc(hidden)]
pub const fn tensor_d_outputs(lane: usize) -> [usize; 4] {
    let o = 32 * (lane % 4) + lane / 4;
    [o, o + 16, o + 8, o + 24]
}

/// Two shared-memory words read as one 8-byte load.
#[cfg(target_arch = "nvptx64")]
#[cfg(target_feature = "sm_80")]
#[repr(C, align(8))]
#[derive(Clone, Copy)]
pub(super) struct Pair([f32; 2]);

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
#[cfg(target_arch = "nvptx64")]
pub(super) unsafe fn kernel(op: Operands) {
    #[cfg(not(target_feature = "sm_80"))]
    {
        let _ = op;
        trap()
    }
    #[cfg(target_feature = "sm_80")]
    {
        const LOADS: usize = TENSOR_TILE / TENSOR_THREADS as usize;
        let threads = TENSOR_THREADS as usize;
        let (n, mask, taps) = (op.n, op.mask, op.taps as usize);
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
                operands: op,
                threads,
                tile_len: TENSOR_TILE,
                keep: halo,
            },
            tile,
            tensor_index,
            |row, start| {
                let mut acc = tensor_tiles(tile, weights, first, lane, steps);
                if !acc.iter().flatten().all(|v| v.is_finite()) {
                    acc = tensor_outputs_directly(acc, tile, weights, taps, start, first, lane, n);
                }
                let y = op.output_row(row);
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
#[cfg(target_arch = "nvptx64")]
#[cfg(target_feature = "sm_80")]
#[inline(always)]
pub(super) unsafe fn tensor_tiles(
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
#[cfg(target_arch = "nvptx64")]
#[cfg(target_feature = "sm_80")]
#[inline(never)]
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn tensor_outputs_directly(
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

#[cfg(test)]
mod tests {
    // The crate is `no_std`; its host tests may allocate.
    extern crate std;
    use super::*;
    use crate::conv1d::tests::value;
    use crate::conv1d::{Conv1dVariant, MAX_TAPS, tile_source};
    use std::vec;
    use std::vec::Vec;

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
