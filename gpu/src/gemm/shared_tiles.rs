//! Step 3 (lesson's `tiled_gemm`): 32 × 32 tiles of both operands staged
//! in shared memory, one output per thread.

#[cfg(target_arch = "nvptx64")]
use {super::Operands, super::naive::SIDE, crate::prim::*};

/// Contract: the family's; blocks of `SIDE²` threads and `2 · SIDE²`
/// words of shared memory.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub(crate) unsafe fn kernel(o: Operands) {
    let o = o.of_batch();
    let (tile_m, tile_n) = o.tile(SIDE, SIDE, 1);
    let t = thread_idx_x() as usize;
    let (ty, tx) = (t / SIDE, t % SIDE);
    let (i, j) = (tile_m * SIDE + ty, tile_n * SIDE + tx);
    let mut carver = SharedCarver::new();
    let a_tile = carver.take::<f32>(SIDE * SIDE);
    let b_tile = carver.take::<f32>(SIDE * SIDE);
    let mut acc = 0.0f32;
    let mut p0 = 0;
    while p0 < o.k {
        // Zeros outside the operands: they add nothing to the sums.
        *a_tile.add(ty * SIDE + tx) = if i < o.m && p0 + tx < o.k {
            o.a(i, p0 + tx)
        } else {
            0.0
        };
        *b_tile.add(ty * SIDE + tx) = if p0 + ty < o.k && j < o.n {
            o.b(p0 + ty, j)
        } else {
            0.0
        };
        sync_threads();
        for q in 0..SIDE {
            // `a_tile[ty][q]`: one address per warp (a broadcast);
            // `b_tile[q][tx]`: 32 consecutive words.
            acc = fma_f32(*a_tile.add(ty * SIDE + q), *b_tile.add(q * SIDE + tx), acc);
        }
        sync_threads();
        p0 += SIDE;
    }
    o.store(i, j, acc);
}
