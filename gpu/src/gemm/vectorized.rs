//! Step 6: step 5 with both tiles `k`-major in shared memory (the `A` tile
//! transposed on its way in), 16-byte shared-memory loads, and 16-byte
//! global loads where the operand's layout allows ([`super::staging`]).

#[cfg(target_arch = "nvptx64")]
use {
    super::Operands,
    super::register_2d::{THREADS, TILE, TT},
    super::staging::Panel,
    crate::prim::*,
};

/// `k` per staged tile.
#[doc(hidden)]
pub const BK: usize = 8;

/// Contract: the family's; blocks of 256 threads and `2 · TILE · BK` words
/// of shared memory.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub(crate) unsafe fn kernel(o: Operands) {
    let o = o.of_batch();
    const Q: usize = TILE * BK / 4 / THREADS;
    let (tile_m, tile_n) = o.tile(TILE, TILE, 1);
    let t = thread_idx_x() as usize;
    let (row0, col0) = (tile_m * TILE, tile_n * TILE);
    let (trow, tcol) = (t / (TILE / TT), t % (TILE / TT));
    let a = Panel::new(o.a.add(row0 * o.a_row), o.a_row, o.a_col, o.m - row0, o.k);
    let b = Panel::new(o.b.add(col0 * o.b_col), o.b_col, o.b_row, o.n - col0, o.k);
    let mut carver = SharedCarver::new();
    // `a_tile[q][m]`, `b_tile[q][n]`: BK rows of TILE words.
    let a_tile = carver.take::<f32>(BK * TILE);
    let b_tile = carver.take::<f32>(BK * TILE);
    let mut acc = [[0.0f32; TT]; TT];
    let mut p0 = 0;
    while p0 < o.k {
        a.stage_tile::<TILE, THREADS, Q>(a_tile, TILE, t, p0);
        b.stage_tile::<TILE, THREADS, Q>(b_tile, TILE, t, p0);
        sync_threads();
        for q in 0..BK {
            let row = |tile: *mut f32, at: usize, half: usize| {
                load4(tile.add(q * TILE + at * TT + half * 4))
            };
            let (a_lo, a_hi) = (row(a_tile, trow, 0), row(a_tile, trow, 1));
            let (b_lo, b_hi) = (row(b_tile, tcol, 0), row(b_tile, tcol, 1));
            for r in 0..TT {
                let ar = if r < 4 { a_lo[r] } else { a_hi[r - 4] };
                for c in 0..TT {
                    let bc = if c < 4 { b_lo[c] } else { b_hi[c - 4] };
                    acc[r][c] = fma_f32(ar, bc, acc[r][c]);
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
