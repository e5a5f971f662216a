//! Step 5: two outputs from three half-length convolutions instead of four
//! (Karatsuba's trick), for long masks.

use super::*;
#[cfg(target_arch = "nvptx64")]
use {
    super::tiles::{segment, segment_of_weights},
    crate::prim::*,
};

/// Outputs of one tile of [`Conv1dVariant::Karatsuba`]: one block, one
/// tile, [`SPLIT_WIDTH`] pairs of outputs per thread.
#[doc(hidden)]
pub const SPLIT_TILE: usize = 2048;
/// Pairs of outputs one thread of [`Conv1dVariant::Karatsuba`] computes
/// (its 32 consecutive outputs): the width `W` of its three half-length
/// register-blocked sums, as [`BLOCKED_WIDTHS`]'s wide one.
#[doc(hidden)]
pub const SPLIT_WIDTH: usize = 16;
/// Threads of a [`Conv1dVariant::Karatsuba`] block.
#[doc(hidden)]
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

/// Elements of each of the three half-rate sequences a
/// [`Conv1dVariant::Karatsuba`] block stages for a mask of `taps`: its
/// `SPLIT_TILE / 2` pairs and a halo of the half mask's [`padded_taps`].
#[doc(hidden)]
pub const fn split_len(taps: usize) -> usize {
    SPLIT_TILE / 2 + padded_taps(taps.div_ceil(2), SPLIT_WIDTH)
}

/// Words of one staged phase of [`Conv1dVariant::Karatsuba`]: its
/// [`split_len`] elements in whole segments laid out by [`padded_index`].
#[doc(hidden)]
pub const fn split_words(taps: usize) -> usize {
    padded_words(split_len(taps), SPLIT_WIDTH)
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

/// `blocked_sums` of `(lane, taps, segment, weights)` from `init`.
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
#[doc(hidden)]
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

/// Step 5: block `b` computes tile `b` ([`SPLIT_TILE`] outputs from
/// `b · SPLIT_TILE`) of each of its rows. The tile's inputs `x[e]`
/// (signal element `start + e − r`, zero outside the row) are staged
/// as the three [`Phase`] sequences of [`split_len`] elements, each
/// laid out by [`padded_index`] as step 4's tile, and thread `l`
/// computes the 16 pairs from `16 l` ([`karatsuba_outputs`]).
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub(super) unsafe fn kernel(op: Operands) {
    const W: usize = SPLIT_WIDTH;
    let threads = SPLIT_THREADS as usize;
    let (taps, r) = (op.taps as usize, op.taps as usize / 2);
    let (n, mask) = (op.n, op.mask);
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
    while row < op.rows as usize {
        let x = op.input_row(row);
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
            let y = op.output_row(row).add(first);
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

#[cfg(test)]
mod tests {
    // The crate is `no_std`; its host tests may allocate.
    extern crate std;
    use super::*;
    use crate::conv1d::tests::value;
    use std::vec;
    use std::vec::Vec;

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
}
