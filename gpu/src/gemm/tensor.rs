//! The tensor-core steps: step 8's ring of stages feeding
//! `mma.sync.m16n8k8` on TF32 operands (sm_80+). A 128 × 128 tile, 8 warps
//! in 2 × 4, each a 64 × 32 block: 4 × 4 tiles of 16 × 8, 16 `mma` per 8
//! of `k`. The fragments are read straight from the `k`-major stages, whose
//! rows lie 8 banks apart (`STAGE_PAD`): a fragment's
//! 32 words (4 `k`s of 8 rows or columns) fall in 32 different banks.
//!
//! `Tf32` rounds each operand to TF32 once. `Tf32x3` splits each into
//! `big = tf32(x)` and `small = tf32(x − big)`, which together carry about
//! 21 of `x`'s 24 bits, and sums `small·big + big·small + big·big` per
//! tile: three `mma` for one, with the error of an FP32 product.

#[cfg(all(target_arch = "nvptx64", target_feature = "sm_80"))]
use super::staging::{Layout, Panel};
use super::{TENSOR_STAGES, TENSOR_TILE, WARP_BK};
#[cfg(target_arch = "nvptx64")]
use {super::Operands, crate::prim::*};

/// Threads of a tensor-core block.
#[doc(hidden)]
pub const THREADS: usize = 256;
/// A warp's block of outputs: rows.
#[doc(hidden)]
pub const WARP_M: usize = 64;
/// A warp's block of outputs: columns.
#[doc(hidden)]
pub const WARP_N: usize = 32;
/// Quads per thread and operand of a stage.
#[doc(hidden)]
pub const QUADS: usize = TENSOR_TILE * WARP_BK / 4 / THREADS;

const _: () = assert!(
    WARP_M / 16 == 4 && WARP_N / 8 == 4 // the unrolled loops below
        && (TENSOR_TILE / WARP_M) * (TENSOR_TILE / WARP_N) * 32 == THREADS
        && super::warp_tiles(TENSOR_TILE, TENSOR_TILE, TENSOR_STAGES).threads as usize == THREADS
);

/// Contract: the family's; blocks of [`THREADS`] threads and
/// [`super::ring_bytes`]`(TENSOR_TILE, TENSOR_TILE, TENSOR_STAGES)` of
/// shared memory; PTX for sm_80 or newer (older targets trap: the host
/// refuses them first).
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub(crate) unsafe fn kernel<const SPLIT: bool>(o: Operands) {
    #[cfg(not(target_feature = "sm_80"))]
    {
        let _ = o;
        trap()
    }
    #[cfg(target_feature = "sm_80")]
    {
        use super::pipelined::{BAND, panels};
        let o = o.of_batch();
        let (tile_m, tile_n) = o.tile(TENSOR_TILE, TENSOR_TILE, BAND);
        let (row0, col0) = (tile_m * TENSOR_TILE, tile_n * TENSOR_TILE);
        let (a, b) = panels(&o, row0, col0, 0, o.k);
        // One body per pair of staging layouts, chosen once per launch.
        by_layouts!(tensor; [SPLIT]; a, b; &o, row0, col0, &a, &b)
    }
}

#[cfg(all(target_arch = "nvptx64", target_feature = "sm_80"))]
#[inline(always)]
unsafe fn tensor<const SPLIT: bool, const A_K: bool, const B_K: bool>(
    o: &Operands,
    row0: usize,
    col0: usize,
    a: &Panel,
    b: &Panel,
) {
    use super::pipelined::ring;
    const T: usize = TENSOR_TILE;
    const WAIT: u32 = TENSOR_STAGES as u32 - 2;
    const MI: usize = WARP_M / 16;
    const NI: usize = WARP_N / 8;
    let t = thread_idx_x() as usize;
    let (warp, lane) = (t / 32, t % 32);
    let (wm, wn) = (
        (warp / (T / WARP_N)) * WARP_M,
        (warp % (T / WARP_N)) * WARP_N,
    );
    let (g, q) = (lane / 4, lane % 4);
    let mut acc = [[[0.0f32; 4]; NI]; MI];
    ring::<T, T, THREADS, QUADS, QUADS, TENSOR_STAGES, WAIT, A_K, B_K, false, false, false>(
        a,
        b,
        o.k,
        |sa, sb| {
            // Element (x, k) of a staged tile; either layout keeps a
            // fragment's 32 words in 32 banks.
            let at_a = |k: usize, x: usize| *sa.add(Layout::<A_K>::index(T, x, k));
            let at_b = |k: usize, x: usize| *sb.add(Layout::<B_K>::index(T, x, k));
            // The fragments of 16-row tile `i` of A and 8-column tile `j` of B
            // at `k = kk ..= kk + 7`.
            let a_raw = |i: usize, kk: usize| {
                let x = wm + i * 16 + g;
                [
                    at_a(kk + q, x),
                    at_a(kk + q, x + 8),
                    at_a(kk + q + 4, x),
                    at_a(kk + q + 4, x + 8),
                ]
            };
            let b_raw = |j: usize, kk: usize| {
                let x = wn + j * 8 + g;
                [at_b(kk + q, x), at_b(kk + q + 4, x)]
            };
            if SPLIT {
                // The tensor cores add into their accumulator without rounding
                // to nearest (measured: an error growing about linearly with
                // `k`, 12 times the FP32 kernel's at 1024³). So the 3 products
                // of each tile and 8 `k` go into a fresh accumulator, which
                // joins the running sum with one rounded `f32` add.
                for h in 0..2 {
                    let mut b_big = [[0u32; 2]; NI];
                    let mut b_small = [[0u32; 2]; NI];
                    for j in 0..NI {
                        let v = b_raw(j, 8 * h);
                        for e in 0..2 {
                            (b_big[j][e], b_small[j][e]) = split_tf32(v[e]);
                        }
                    }
                    unroll!(i in [0 1 2 3] => {
                        let v = a_raw(i, 8 * h);
                        let mut a_big = [0u32; 4];
                        let mut a_small = [0u32; 4];
                        for e in 0..4 {
                            (a_big[e], a_small[e]) = split_tf32(v[e]);
                        }
                        // Small terms first: they are the least significant.
                        // Each product of a tile waits for the one before, so
                        // the 4 tiles of the row take turns: 4 independent
                        // `mma` between dependent ones.
                        let mut part = [[0.0f32; 4]; NI];
                        unroll!(j in [0 1 2 3] => {
                            mma_tf32_16x8x8(&mut part[j], a_small, b_big[j]);
                        });
                        unroll!(j in [0 1 2 3] => {
                            mma_tf32_16x8x8(&mut part[j], a_big, b_small[j]);
                        });
                        unroll!(j in [0 1 2 3] => {
                            mma_tf32_16x8x8(&mut part[j], a_big, b_big[j]);
                        });
                        unroll!(j in [0 1 2 3] => {
                            for e in 0..4 {
                                acc[i][j][e] += part[j][e];
                            }
                        });
                    });
                }
            } else {
                for h in 0..2 {
                    let b_tf: [[u32; 2]; NI] =
                        core::array::from_fn(|j| b_raw(j, 8 * h).map(to_tf32));
                    unroll!(i in [0 1 2 3] => {
                        let a_tf = a_raw(i, 8 * h).map(to_tf32);
                        unroll!(j in [0 1 2 3] => {
                            mma_tf32_16x8x8(&mut acc[i][j], a_tf, b_tf[j]);
                        });
                    });
                }
            }
        },
    );
    unroll!(i in [0 1 2 3] => {
        unroll!(j in [0 1 2 3] => {
            let (r, c) = (row0 + wm + i * 16 + g, col0 + wn + j * 8 + 2 * q);
            o.store(r, c, acc[i][j][0]);
            o.store(r, c + 1, acc[i][j][1]);
            o.store(r + 8, c, acc[i][j][2]);
            o.store(r + 8, c + 1, acc[i][j][3]);
        });
    });
}
