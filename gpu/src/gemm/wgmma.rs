//! The warpgroup tensor-core steps (sm_90a): the tensor-core steps' ring of
//! `cp.async` stages feeding `wgmma.mma_async.m64n128k8` on TF32 operands.
//!
//! A 128 × 128 tile, two warpgroups of 4 warps, each a 64 × 128 block: one
//! `wgmma` does for a warpgroup what 64 `mma.sync` do for its warps, with
//! `B` read by the tensor cores straight from shared memory instead of
//! through every warp's registers, and runs while the warps go on.
//!
//! Per stage of 16 `k`:
//! 1. the block rewrites the staged tile of `B`, rounded to TF32 (and for
//!    `Tf32x3` split into a big and a small part), into the layout `wgmma`
//!    reads (`converted_offset`: `k`-major core matrices of 8 columns ×
//!    4 `k`, 128 contiguous bytes each), into one of two buffers that
//!    alternate, while the products of the stage before still run; then a
//!    proxy fence and a barrier;
//! 2. each warpgroup waits for its products of the stage before: they read
//!    their `A` fragments from registers, which the next ones overwrite;
//! 3. each warp reads its `A` fragments from the staged tile, as the
//!    `mma.sync` steps do, rounds (splits) them in registers, and its
//!    warpgroup issues the products (2 for `Tf32`, 6 for `Tf32x3`) and
//!    commits them, without waiting.
//!
//! Measured (H100, 4096³, TFLOP/s of `Tf32x3`): waiting for each stage's
//! products before the next conversion 56.5; with the two buffers 66.6 to
//! 68.8. `A` converted into shared memory as well, so that no register
//! holds an operand and only the accumulator waits (an H200, same run):
//! 61.0 against 66.8 (`Tf32` 97.9 against 105.4), not taken.
//!
//! `Tf32x3`'s 6 products of a stage go into a fresh accumulator, which
//! joins the running sum with one rounded `f32` add: the tensor cores add
//! without rounding to nearest (see [`super::tensor`]).

use super::{TENSOR_TILE, WARP_BK, ring_bytes};

/// Threads of a block: two warpgroups.
#[doc(hidden)]
pub const THREADS: usize = 256;
/// Stages of the ring. Measured (an H200, 4096³, `Tf32x3`, same run): 3
/// stages 60.6 TFLOP/s, 4 stages 67.2, 6 stages 64.3.
#[doc(hidden)]
pub const STAGES: usize = 4;
/// Quads per thread and operand of a stage.
#[doc(hidden)]
pub const QUADS: usize = TENSOR_TILE * WARP_BK / 4 / THREADS;
/// Words of one converted stage of `B` (one part: big, or small).
#[doc(hidden)]
pub const CONVERTED_WORDS: usize = TENSOR_TILE * WARP_BK;
/// Bytes of one converted stage, both parts.
#[doc(hidden)]
pub const CONVERTED_BYTES: usize = 2 * CONVERTED_WORDS * 4;
/// Bytes of a core matrix: 8 rows of 16 bytes.
#[doc(hidden)]
pub const CORE_BYTES: u32 = 128;
/// Bytes from one `k8` chunk of a converted stage to the next: 16 groups of
/// 8 columns, 2 core matrices each.
#[doc(hidden)]
pub const CHUNK_BYTES: u32 = (TENSOR_TILE / 8) as u32 * 2 * CORE_BYTES;

/// Shared memory of a block: the ring, then two converted stages, each its
/// big and small parts.
#[doc(hidden)]
pub const fn shared_bytes() -> u32 {
    ring_bytes(TENSOR_TILE, TENSOR_TILE, STAGES) + (2 * CONVERTED_BYTES) as u32
}

const _: () = assert!(
    QUADS * THREADS * 4 == TENSOR_TILE * WARP_BK
        && WARP_BK == 16
        && TENSOR_TILE == 128
        && TENSOR_TILE * WARP_BK / 4 == 2 * THREADS
);

/// Byte offset of element `(n, k)` (`n < 128` a column of the tile, `k <
/// 16`) in a converted stage: chunk `k / 8`, then the group of 8 columns,
/// then the core matrix of 4 `k`, then 16 bytes per column. Core matrices
/// adjacent along `k` are [`CORE_BYTES`] apart (the descriptor's leading
/// offset), groups of 8 columns 2 · [`CORE_BYTES`] (its stride offset). The
/// 16-byte rows of the layout, in order, are `r = 16·(16·(k/8) + n/8) +
/// 8·(k%8/4) + n%8`.
#[doc(hidden)]
pub const fn converted_offset(n: usize, k: usize) -> usize {
    (k / 8) * CHUNK_BYTES as usize
        + (n / 8) * 2 * CORE_BYTES as usize
        + (k % 8 / 4) * CORE_BYTES as usize
        + (n % 8) * 16
        + (k % 4) * 4
}

/// Contract: the family's; blocks of [`THREADS`] threads and
/// [`shared_bytes`] of shared memory; PTX for sm_90a (other targets trap:
/// the host refuses them first).
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub(crate) unsafe fn kernel<const SPLIT: bool>(o: super::Operands) {
    #[cfg(not(target_feature = "sm_90a"))]
    {
        let _ = o;
        crate::prim::trap()
    }
    #[cfg(target_feature = "sm_90a")]
    {
        use super::pipelined::{BAND, panels};
        let o = o.of_batch();
        let (tile_m, tile_n) = o.tile(TENSOR_TILE, TENSOR_TILE, BAND);
        let (row0, col0) = (tile_m * TENSOR_TILE, tile_n * TENSOR_TILE);
        let (a, b) = panels(&o, row0, col0, 0, o.k);
        by_layouts!(device::body; [SPLIT]; a, b; &o, row0, col0, &a, &b)
    }
}

#[cfg(all(target_arch = "nvptx64", target_feature = "sm_90a"))]
mod device {
    use super::super::staging::{Layout, Panel};
    use super::super::{Operands, TENSOR_TILE};
    use super::*;
    use crate::prim::wgmma::{self, WGMMA_N128_REGS};
    use crate::prim::*;

    /// `acc += part`, spelled out: a rolled loop would keep both arrays in
    /// local memory.
    #[inline(always)]
    fn add_into(acc: &mut [f32; WGMMA_N128_REGS], part: &[f32; WGMMA_N128_REGS]) {
        unroll!(e in [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63] => {
            acc[e] += part[e];
        });
    }

    /// The body for staging layouts `A_K`, `B_K` (see
    /// [`super::super::staging::Layout`]).
    #[inline(always)]
    pub(super) unsafe fn body<const SPLIT: bool, const A_K: bool, const B_K: bool>(
        o: &Operands,
        row0: usize,
        col0: usize,
        a: &Panel,
        b: &Panel,
    ) {
        use super::super::pipelined::ring;
        const T: usize = TENSOR_TILE;
        const WAIT: u32 = STAGES as u32 - 2;
        let t = thread_idx_x() as usize;
        let (warp, lane) = (t / 32, t % 32);
        // This warp's first row: warpgroup `warp / 4`, its warp `warp % 4`.
        let rows = (warp / 4) * 64 + (warp % 4) * 16;
        let (g, q) = (lane / 4, lane % 4);
        let converted = dynamic_shared::<f32>()
            .add(ring_bytes(T, T, STAGES) as usize / 4)
            .cast::<u8>();
        let mut acc = [0.0f32; WGMMA_N128_REGS];
        // `Tf32x3`: the products of the stage before, still running.
        let mut part = [0.0f32; WGMMA_N128_REGS];
        let mut stage = 0usize;
        ring::<T, T, THREADS, QUADS, QUADS, STAGES, WAIT, A_K, B_K, false, false, false>(
            a,
            b,
            o.k,
            |sa, sb| {
                // Two converted stages alternate: this one's buffer was last
                // read by the products of two stages ago, which are done.
                let big = converted.add((stage % 2) * CONVERTED_BYTES);
                let small = big.add(CONVERTED_WORDS * 4);
                // 1. The stage of `B` in `wgmma`'s layout: thread `t` writes
                // rows `t` and `t + 256` (16 bytes each; a warp's 32 rows are
                // 512 contiguous bytes).
                for h in 0..2 {
                    let r = t + h * THREADS;
                    let (n, k0) = ((r / 16) % 16 * 8 + r % 8, (r / 256) * 8 + (r / 8) % 2 * 4);
                    let v: [f32; 4] =
                        core::array::from_fn(|e| *sb.add(Layout::<B_K>::index(T, n, k0 + e)));
                    if SPLIT {
                        let parts = v.map(split_tf32);
                        store4(big.add(r * 16).cast(), parts.map(|p| f32::from_bits(p.0)));
                        store4(small.add(r * 16).cast(), parts.map(|p| f32::from_bits(p.1)));
                    } else {
                        store4(
                            big.add(r * 16).cast(),
                            v.map(|x| f32::from_bits(to_tf32(x))),
                        );
                    }
                }
                wgmma::fence_proxy_async();
                sync_threads();
                // 2. This warp's fragments of `A` at `k = 8c ..= 8c + 7`.
                let at_a = |k: usize, x: usize| *sa.add(Layout::<A_K>::index(T, x, k));
                let fragment = |c: usize| {
                    let (x, k) = (rows + g, 8 * c + q);
                    [
                        at_a(k, x),
                        at_a(k, x + 8),
                        at_a(k + 4, x),
                        at_a(k + 4, x + 8),
                    ]
                };
                let (big_at, small_at) = (shared_address(big), shared_address(small));
                let b_of = |at: u32, c: usize| {
                    crate::descriptor::unswizzled(
                        at + c as u32 * CHUNK_BYTES,
                        CORE_BYTES,
                        2 * CORE_BYTES,
                    )
                };
                // 3. The products. Those of the stage before ran while this
                // one was converted; they must be done before this stage's
                // fragments are written, since the products read their `A`
                // registers while they run.
                if SPLIT {
                    wgmma::wait::<0>(&mut part);
                    add_into(&mut acc, &part);
                    let mut a_big = [[0u32; 4]; 2];
                    let mut a_small = [[0u32; 4]; 2];
                    for c in 0..2 {
                        let v = fragment(c);
                        for e in 0..4 {
                            (a_big[c][e], a_small[c][e]) = split_tf32(v[e]);
                        }
                    }
                    wgmma::fence();
                    for c in 0..2 {
                        // Small terms first: they are the least significant.
                        wgmma::mma_tf32_m64n128k8(&mut part, a_small[c], b_of(big_at, c), c > 0);
                        wgmma::mma_tf32_m64n128k8(&mut part, a_big[c], b_of(small_at, c), true);
                        wgmma::mma_tf32_m64n128k8(&mut part, a_big[c], b_of(big_at, c), true);
                    }
                } else {
                    wgmma::wait::<0>(&mut acc);
                    let a_tf: [[u32; 4]; 2] = core::array::from_fn(|c| fragment(c).map(to_tf32));
                    wgmma::fence();
                    for c in 0..2 {
                        wgmma::mma_tf32_m64n128k8(&mut acc, a_tf[c], b_of(big_at, c), true);
                    }
                }
                wgmma::commit();
                stage += 1;
            },
        );
        if SPLIT {
            wgmma::wait::<0>(&mut part);
            add_into(&mut acc, &part);
        } else {
            wgmma::wait::<0>(&mut acc);
        }
        // Register `4i + e`: row `g + 8(e / 2)`, column `8i + 2q + e % 2`.
        unroll!(i in [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15] => {
            let (r, c) = (row0 + rows + g, col0 + 8 * i + 2 * q);
            o.store(r, c, acc[4 * i]);
            o.store(r, c + 1, acc[4 * i + 1]);
            o.store(r + 8, c, acc[4 * i + 2]);
            o.store(r + 8, c + 1, acc[4 * i + 3]);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converted_rows_are_contiguous_in_thread_order() {
        for r in 0..2 * super::THREADS {
            let (n, k0) = ((r / 16) % 16 * 8 + r % 8, (r / 256) * 8 + (r / 8) % 2 * 4);
            assert_eq!(converted_offset(n, k0), r * 16, "row {r}");
            for e in 0..4 {
                assert_eq!(converted_offset(n, k0 + e), r * 16 + 4 * e);
            }
        }
        assert_eq!(converted_offset(127, 15) + 4, CONVERTED_WORDS * 4);
    }
}
