//! The tensor-core steps: step 8's ring of stages feeding
//! `mma.sync.m16n8k8` on TF32 operands (sm_80+). A 128 × 128 tile, 8 warps
//! in 2 × 4, each a 64 × 32 block: 4 × 4 tiles of 16 × 8, 16 `mma` per 8
//! of `k`. The fragments are read straight from the `k`-major stages, whose
//! rows lie 8 banks apart ([`STAGE_PAD`](super::STAGE_PAD)): a fragment's
//! 32 words (4 `k`s of 8 rows or columns) fall in 32 different banks.
//!
//! `Tf32` rounds each operand to TF32 once. `Tf32x3` splits each into
//! `big = tf32(x)` and `small = tf32(x − big)`, which together carry about
//! 21 of `x`'s 24 bits, and sums `small·big + big·small + big·big` per
//! tile: three `mma` for one, with the error of an FP32 product.

use super::{TENSOR_STAGES, TENSOR_TILE, WARP_BK};
#[cfg(target_arch = "nvptx64")]
use {super::Operands, crate::prim::*};

/// Threads of a tensor-core block.
pub const THREADS: usize = 256;
/// A warp's block of outputs: rows.
pub const WARP_M: usize = 64;
/// A warp's block of outputs: columns.
pub const WARP_N: usize = 32;
/// Quads per thread and operand of a stage.
pub const QUADS: usize = TENSOR_TILE * WARP_BK / 4 / THREADS;

const _: () = assert!(
    (TENSOR_TILE / WARP_M) * (TENSOR_TILE / WARP_N) * 32 == THREADS
        && super::warp_tiles(TENSOR_TILE, TENSOR_TILE, TENSOR_STAGES).threads as usize == THREADS
);

/// Contract: the family's; blocks of [`THREADS`] threads and
/// [`super::ring_bytes`]`(TENSOR_TILE, TENSOR_TILE, TENSOR_STAGES)` of
/// shared memory; PTX for sm_80 or newer (older targets trap: the host
/// refuses them first).
#[cfg(target_arch = "nvptx64")]
pub(crate) unsafe fn kernel<const SPLIT: bool>(o: Operands) {
    #[cfg(not(target_feature = "sm_80"))]
    {
        let _ = o;
        trap()
    }
    #[cfg(target_feature = "sm_80")]
    tensor::<SPLIT>(o)
}

#[cfg(all(target_arch = "nvptx64", target_feature = "sm_80"))]
#[allow(clippy::needless_range_loop, reason = "constant ranges unroll; arrays stay in registers")]
unsafe fn tensor<const SPLIT: bool>(o: Operands) {
    use super::pipelined::{BAND, ring};
    const T: usize = TENSOR_TILE;
    const WAIT: u32 = TENSOR_STAGES as u32 - 2;
    const MI: usize = WARP_M / 16;
    const NI: usize = WARP_N / 8;
    let (tile_m, tile_n) = o.tile(T, T, BAND);
    let (row0, col0) = (tile_m * T, tile_n * T);
    let t = thread_idx_x() as usize;
    let (warp, lane) = (t / 32, t % 32);
    let (wm, wn) = ((warp / (T / WARP_N)) * WARP_M, (warp % (T / WARP_N)) * WARP_N);
    let (g, q) = (lane / 4, lane % 4);
    let mut acc = [[[0.0f32; 4]; NI]; MI];
    let split = |x: f32| {
        let big = to_tf32(x);
        (big, to_tf32(x - f32::from_bits(big)))
    };
    ring::<T, T, THREADS, QUADS, QUADS, TENSOR_STAGES, WAIT>(&o, row0, col0, |a, lda, b, ldb| {
        let step = |acc: &mut [[[f32; 4]; NI]; MI], kk: usize| {
            let at = |tile: *const f32, ld: usize, k: usize, x: usize| *tile.add((kk + k) * ld + x);
            let mut a_raw = [[0.0f32; 4]; MI];
            let mut b_raw = [[0.0f32; 2]; NI];
            for i in 0..MI {
                let x = wm + i * 16 + g;
                a_raw[i] = [at(a, lda, q, x), at(a, lda, q, x + 8), at(a, lda, q + 4, x), at(a, lda, q + 4, x + 8)];
            }
            for j in 0..NI {
                let x = wn + j * 8 + g;
                b_raw[j] = [at(b, ldb, q, x), at(b, ldb, q + 4, x)];
            }
            if SPLIT {
                let mut a_big = [[0u32; 4]; MI];
                let mut a_small = [[0u32; 4]; MI];
                let mut b_big = [[0u32; 2]; NI];
                let mut b_small = [[0u32; 2]; NI];
                for i in 0..MI {
                    for e in 0..4 {
                        (a_big[i][e], a_small[i][e]) = split(a_raw[i][e]);
                    }
                }
                for j in 0..NI {
                    for e in 0..2 {
                        (b_big[j][e], b_small[j][e]) = split(b_raw[j][e]);
                    }
                }
                // Small terms first: they are the least significant.
                for i in 0..MI {
                    for j in 0..NI {
                        mma_tf32_16x8x8(&mut acc[i][j], a_small[i], b_big[j]);
                        mma_tf32_16x8x8(&mut acc[i][j], a_big[i], b_small[j]);
                        mma_tf32_16x8x8(&mut acc[i][j], a_big[i], b_big[j]);
                    }
                }
            } else {
                let a_tf = a_raw.map(|v| v.map(to_tf32));
                let b_tf = b_raw.map(|v| v.map(to_tf32));
                for i in 0..MI {
                    for j in 0..NI {
                        mma_tf32_16x8x8(&mut acc[i][j], a_tf[i], b_tf[j]);
                    }
                }
            }
        };
        step(&mut acc, 0);
        step(&mut acc, 8);
    });
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
