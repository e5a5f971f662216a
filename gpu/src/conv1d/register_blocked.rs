//! Step 4: register blocking. A thread keeps `w` consecutive outputs in
//! registers and a block stages its tile, padded after every segment of
//! `w`, in shared memory. The sums here (tap by tap, fully unrolled) also
//! serve steps 5 and 6.

use super::*;
#[cfg(target_arch = "nvptx64")]
use {
    super::tiles::{Run, segment, segment_of_weights, store_outputs, tile_runs},
    crate::prim::*,
};

/// Threads of a [`Conv1dVariant::RegisterBlocked`] block, either width.
/// 128 rather than 256 for the narrow width (tiles of 1 024 outputs
/// instead of 2 048): its 66 registers leave room for 7 blocks of 4 warps
/// per SM where they left 3 of 8, so 28 warps instead of 24 keep loads in
/// flight, without the register cap a fourth block of 256 would need.
/// Measured (2^26 outputs, µs, three interleaved rounds of the two builds,
/// 256 → 128 threads): H200 mask 7 155.8 → 145.5, mask 31 170.1 → 166.3,
/// mask 63 257.9 → 250.2; H100 mask 7 198.0 → 198.7, mask 31 200.0 →
/// 203.2, mask 63 257.1 → 249.5. The H100, whose 31-tap convolution reads
/// at 0.88 to 0.89 of its copy bandwidth either way, gives back 1.6%
/// there; the H200, whose bandwidth per SM is 1.4 times the H100's and
/// which needs more loads in flight to use it, gains at every length.
#[doc(hidden)]
pub const BLOCKED_THREADS: u32 = 128;
/// The widths of [`Conv1dVariant::RegisterBlocked`]: consecutive outputs
/// one thread keeps in registers. The width `w` is also the segment (the
/// `w` inputs that start a thread's window) and the round of taps: the
/// mask is zero-padded in shared memory to a multiple of `w`. A block's
/// tile is [`blocked_tile`]`(w)` outputs.
#[doc(hidden)]
pub const BLOCKED_WIDTHS: [usize; 2] = [8, 16];
/// Masks of up to this many taps run the narrow width (8 outputs a thread:
/// 65 registers, 24 warps per SM against the wide width's 16 (when it
/// took 123 registers; 28 since [`BLOCKED_THREADS`] is 128), so more
/// loads are in flight for a memory-bound short mask); longer ones the
/// wide width (16 outputs a thread, 96 registers under its launch bounds:
/// 256 FMAs per 8 shared-memory loads, the rate a long mask needs).
/// Measured on an H100, 2^26 outputs, GB/s (8 wide / 16 wide): 7 taps
/// 2706 / 2334, 31 taps 2678 / 2378, 127 taps 1177 / 1300.
/// Measured and not kept (2^26 outputs, same runs): holding the narrow
/// width to 64 registers for a fourth block of 256 threads per SM (20
/// bytes of spills) gave the H200 2.5% (mask 7 157 → 153 µs) and cost the
/// H100 1 to 4% (mask 31 200 → 208 µs; again on 2026-11-25, no spills on
/// sm_90a, through the PTX: H200 mask 31 167.9 → 163.5, H100 199.8 →
/// 205.3); loading two tiles ahead instead of one was slower on the H200
/// at either occupancy (mask 7 154 to 157 µs).
#[doc(hidden)]
pub const NARROW_MAX_TAPS: usize = 64;
/// Words of padding after each segment in shared memory: segment `s`
/// starts at word `(w + 4) s` (12 or 20), so the 16-byte loads of 8
/// consecutive lanes (one shared-memory wavefront) cover 32 distinct banks.
#[doc(hidden)]
pub const SEGMENT_PAD: usize = 4;

/// The width [`Conv1dVariant::RegisterBlocked`] runs for a mask of `taps`.
#[doc(hidden)]
pub const fn blocked_width(taps: usize) -> usize {
    if taps <= NARROW_MAX_TAPS {
        BLOCKED_WIDTHS[0]
    } else {
        BLOCKED_WIDTHS[1]
    }
}

/// Outputs of one tile of [`Conv1dVariant::RegisterBlocked`] of width `w`
/// (one row's consecutive outputs a block computes at a time):
/// [`BLOCKED_THREADS`] threads of `w` outputs each.
#[doc(hidden)]
pub const fn blocked_tile(w: usize) -> usize {
    BLOCKED_THREADS as usize * w
}

/// `taps` rounded up to a whole number of rounds of width `w`: the weights
/// [`Conv1dVariant::RegisterBlocked`] stages (the padding is zero and never
/// multiplied).
#[doc(hidden)]
pub const fn padded_taps(taps: usize, w: usize) -> usize {
    taps.div_ceil(w) * w
}

/// Inputs one block of [`Conv1dVariant::RegisterBlocked`] of width `w`
/// stages: its [`blocked_tile`] outputs and a halo of [`padded_taps`] (a
/// multiple of `w`).
#[doc(hidden)]
pub const fn blocked_tile_len(taps: usize, w: usize) -> usize {
    blocked_tile(w) + padded_taps(taps, w)
}

/// The shared-memory word of tile element `e` in
/// [`Conv1dVariant::RegisterBlocked`] of width `w`: [`SEGMENT_PAD`] words
/// after every `w` elements.
#[doc(hidden)]
pub const fn padded_index(e: usize, w: usize) -> usize {
    e + (e / w) * SEGMENT_PAD
}

/// Shared-memory words of a tile of `len` elements (a multiple of `w`)
/// laid out by [`padded_index`].
#[doc(hidden)]
pub const fn padded_words(len: usize, w: usize) -> usize {
    len / w * (w + SEGMENT_PAD)
}

const _: () = {
    let mut i = 0;
    while i < BLOCKED_WIDTHS.len() {
        let w = BLOCKED_WIDTHS[i];
        // The halo moves from a tile's end to the next tile's start in one
        // pass; threads take whole segments; segments start on 16-byte
        // boundaries (16-byte shared loads) and at most 16 taps a round.
        // The narrow width serves masks of up to NARROW_MAX_TAPS taps.
        let most_taps = if w == BLOCKED_WIDTHS[0] {
            NARROW_MAX_TAPS
        } else {
            MAX_TAPS
        };
        assert!(padded_taps(most_taps, w) <= blocked_tile(w));
        assert!(w.is_multiple_of(4) && w <= 16);
        assert!((w + SEGMENT_PAD).is_multiple_of(4));
        i += 1;
    }
};

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
#[doc(hidden)]
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
#[doc(hidden)]
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
#[doc(hidden)]
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

/// Step 4, width `W`: block `b` computes a run of consecutive tiles of
/// [`blocked_tile`]`(W)` outputs of each of its rows; in a tile, thread `l`
/// the `W` outputs from `W l`. The tile holds inputs `start − r ..`
/// (zeros outside the row), element `e` at word `padded_index(e, W)`;
/// output `W l + a` needs elements `W l + a + j`, so the taps from `W c`
/// need segments `l + c` and `l + c + 1`. The next tile's first
/// `padded` elements are this tile's last ones (moved within shared
/// memory); its other [`blocked_tile`]`(W)` are loaded into registers before
/// this tile's arithmetic, so their latency hides behind it.
#[cfg(target_arch = "nvptx64")]
pub(super) unsafe fn kernel<const W: usize>(op: Operands) {
    let threads = BLOCKED_THREADS as usize;
    let (n, mask, taps) = (op.n, op.mask, op.taps as usize);
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
            operands: op,
            threads,
            tile_len: blocked_tile(W),
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
            store_outputs(op.output_row(row), start + tid * W, n, &acc);
        },
    );
}

#[cfg(test)]
mod tests {
    // The crate is `no_std`; its host tests may allocate.
    extern crate std;
    use super::*;
    use crate::conv1d::tests::value;
    use std::vec;
    use std::vec::Vec;

    #[test]
    fn a_lane_segment_starts_at_word_w_plus_4_times_l() {
        for w in BLOCKED_WIDTHS {
            for l in 0..BLOCKED_THREADS as usize {
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
        for block in 0..n.div_ceil(blocked_tile(W)) {
            let start = block * blocked_tile(W);
            let mut tile = vec![f32::NAN; padded_words(len, W)];
            for e in 0..len {
                tile[padded_index(e, W)] = tile_source(start, e, r, n).map_or(0.0, |i| signal[i]);
            }
            let step = W + SEGMENT_PAD;
            for lane in 0..BLOCKED_THREADS as usize {
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

    #[test]
    fn the_tile_covers_every_segment_a_thread_reads() {
        for taps in 1..=MAX_TAPS {
            let w = blocked_width(taps);
            let segments = blocked_tile_len(taps, w) / w;
            // The last thread reads up to segment threads − 1 + ⌈taps / w⌉.
            assert!(BLOCKED_THREADS as usize - 1 + taps.div_ceil(w) < segments);
            // The staged inputs cover the last output's window.
            assert!(blocked_tile(w) - 1 + taps <= blocked_tile_len(taps, w));
        }
    }
}
