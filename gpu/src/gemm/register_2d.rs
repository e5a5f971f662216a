//! Step 5: 2D register blocking. A block of 256 threads computes a
//! 128 × 128 tile; each thread an 8 × 8 block of it.

#[cfg(target_arch = "nvptx64")]
use {super::Operands, crate::prim::*};

/// Side of the block's tile.
#[doc(hidden)]
pub const TILE: usize = 128;
/// `k` per staged tile.
#[doc(hidden)]
pub const BK: usize = 8;
/// Side of a thread's block of outputs.
#[doc(hidden)]
pub const TT: usize = 8;
/// Threads per block.
#[doc(hidden)]
pub const THREADS: usize = (TILE / TT) * (TILE / TT);

/// Contract: the family's; blocks of [`THREADS`] threads and
/// `2 · TILE · BK` words of shared memory.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub(crate) unsafe fn kernel(o: Operands) {
    let o = o.of_batch();
    let (tile_m, tile_n) = o.tile(TILE, TILE, 1);
    let t = thread_idx_x() as usize;
    let (row0, col0) = (tile_m * TILE, tile_n * TILE);
    let (trow, tcol) = (t / (TILE / TT), t % (TILE / TT));
    let mut carver = SharedCarver::new();
    // `a_tile[m][q]` (TILE × BK), `b_tile[q][n]` (BK × TILE).
    let a_tile = carver.take::<f32>(TILE * BK);
    let b_tile = carver.take::<f32>(BK * TILE);
    let mut acc = [[0.0f32; TT]; TT];
    let mut p0 = 0;
    while p0 < o.k {
        for s in 0..TILE * BK / THREADS {
            let e = t + s * THREADS;
            let (am, aq) = (e / BK, e % BK);
            *a_tile.add(e) = if row0 + am < o.m && p0 + aq < o.k {
                o.a(row0 + am, p0 + aq)
            } else {
                0.0
            };
            let (bq, bn) = (e / TILE, e % TILE);
            *b_tile.add(e) = if p0 + bq < o.k && col0 + bn < o.n {
                o.b(p0 + bq, col0 + bn)
            } else {
                0.0
            };
        }
        sync_threads();
        for q in 0..BK {
            let mut a = [0.0f32; TT];
            let mut b = [0.0f32; TT];
            for r in 0..TT {
                a[r] = *a_tile.add((trow * TT + r) * BK + q);
                b[r] = *b_tile.add(q * TILE + tcol * TT + r);
            }
            // An outer product: 64 FMAs for 16 loads.
            for r in 0..TT {
                for c in 0..TT {
                    acc[r][c] = fma_f32(a[r], b[c], acc[r][c]);
                }
            }
        }
        sync_threads();
        p0 += BK;
    }
    unroll!(r in [0 1 2 3 4 5 6 7] => {
        unroll!(c in [0 1 2 3 4 5 6 7] => {
            o.store(row0 + trow * TT + r, col0 + tcol * TT + c, acc[r][c]);
        });
    });
}
