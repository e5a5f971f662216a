//! Step 4: 1D register blocking. A block of 512 threads computes a 64 × 64
//! tile; each thread 8 consecutive rows of one column.

#[cfg(target_arch = "nvptx64")]
use {super::Operands, crate::prim::*};

/// Side of the block's tile.
#[doc(hidden)]
pub const TILE: usize = 64;
/// `k` per staged tile.
#[doc(hidden)]
pub const BK: usize = 8;
/// Outputs per thread, down a column.
#[doc(hidden)]
pub const TM: usize = 8;

/// Contract: the family's; blocks of `TILE · TILE / TM` (512) threads and
/// `2 · TILE · BK` words of shared memory.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub(crate) unsafe fn kernel(o: Operands) {
    let o = o.of_batch();
    let (tile_m, tile_n) = o.tile(TILE, TILE, 1);
    let t = thread_idx_x() as usize;
    let (row0, col) = (tile_m * TILE, tile_n * TILE);
    // This thread's outputs: rows `(t / TILE) · TM + r`, column `t % TILE`.
    let (trow, tcol) = (t / TILE, t % TILE);
    let mut carver = SharedCarver::new();
    // `a_tile[m][q]` (TILE × BK) and `b_tile[q][n]` (BK × TILE): one
    // element of each per thread.
    let a_tile = carver.take::<f32>(TILE * BK);
    let b_tile = carver.take::<f32>(BK * TILE);
    let mut acc = [0.0f32; TM];
    let mut p0 = 0;
    while p0 < o.k {
        let (am, aq) = (t / BK, t % BK);
        *a_tile.add(t) = if row0 + am < o.m && p0 + aq < o.k {
            o.a(row0 + am, p0 + aq)
        } else {
            0.0
        };
        let (bq, bn) = (t / TILE, t % TILE);
        *b_tile.add(t) = if p0 + bq < o.k && col + bn < o.n {
            o.b(p0 + bq, col + bn)
        } else {
            0.0
        };
        sync_threads();
        for q in 0..BK {
            // One value of `B` serves TM multiply-adds.
            let b = *b_tile.add(q * TILE + tcol);
            for r in 0..TM {
                acc[r] = fma_f32(*a_tile.add((trow * TM + r) * BK + q), b, acc[r]);
            }
        }
        sync_threads();
        p0 += BK;
    }
    for r in 0..TM {
        o.store(row0 + trow * TM + r, col + tcol, acc[r]);
    }
}
