//! Step 8's kernel for products too small for its 64 × 128 tiles to fill
//! the GPU (`GemmVariant::plan_batch` chooses it): 32 × 32 tiles of `C`
//! and 256 threads, each thread a 2 × 2 block of outputs (rows `ty` and
//! `ty + 16`, columns `tx` and `tx + 16` of the tile), `k` in stages of 64
//! staged in shared memory, the next stage loaded into registers while
//! the current one is multiplied. Eight times the blocks of a 64 × 128
//! tile, and no split of `k`: a small product waits on its loads, not on
//! its arithmetic.
//!
//! The operands are read through their strides, consecutive threads on
//! consecutive elements of whichever side is contiguous in memory (`k`,
//! or the tile's rows or columns), so the loads of a warp are whole lines
//! in every transpose combination; elements outside the operands load
//! as zeros.

/// Side of the block's tile of `C`.
pub const TILE: usize = 32;
/// `k` per stage: the stages are latency-bound, so few and deep.
pub const BK: usize = 64;
/// Threads per block: 16 × 16, each a 2 × 2 block of the tile.
pub const THREADS: usize = 256;
/// Words from one `k` of a staged operand to the next: 33, so that the
/// stores of 32 consecutive `k`s of one row land in 32 banks.
const PITCH: usize = TILE + 1;
/// Dynamic shared memory: two stages of `A`'s and `B`'s tiles.
pub const SHARED_BYTES: u32 = (2 * 2 * BK * PITCH * 4) as u32;

#[cfg(target_arch = "nvptx64")]
pub(crate) use device::kernel;

#[cfg(target_arch = "nvptx64")]
mod device {
    use super::super::Operands;
    use super::{BK, PITCH, THREADS, TILE};
    use crate::prim::*;

    /// Elements of each operand a thread loads per stage (the unrolled
    /// loops below take eight).
    const PER: usize = TILE * BK / THREADS;
    const _: () = assert!(PER == 8 && THREADS.is_multiple_of(BK) && THREADS.is_multiple_of(TILE));
    /// How far element `t + s · THREADS` of a stage moves on a step of
    /// `s`: along `k`, rows; across `k`, `k`s.
    const ROWS_A_STEP: usize = THREADS / BK;
    const KS_A_STEP: usize = THREADS / TILE;

    /// Contract: the family's; blocks of [`THREADS`] threads and
    /// [`super::SHARED_BYTES`] of shared memory, one per 32 × 32 tile.
    #[inline(always)]
    pub(crate) unsafe fn kernel(o: Operands) {
        let o = o.of_batch();
        let (tile_m, tile_n) = o.tile(TILE, TILE, 1);
        let (i0, j0) = (tile_m * TILE, tile_n * TILE);
        let t = thread_idx_x() as usize;
        let (ty, tx) = (t / 16, t % 16);
        // Stage `s` of `A` at `[s][p][i]`, of `B` at `[s][p][j]`.
        let a_tiles = dynamic_shared::<f32>();
        let b_tiles = a_tiles.add(2 * BK * PITCH);
        // Which side of each operand consecutive threads walk: `k` where
        // it is contiguous in memory, else the tile's rows (columns).
        // Element `t + s · THREADS` of a stage's `TILE × BK` is then `(row
        // or column, k)` = `(t / BK + 4s, t % BK)` along `k`, else `(t %
        // TILE, t / TILE + 8s)`: one side fixed for the thread, the other
        // moving by a step of `s`.
        let (a_along_k, b_along_k) = (o.a_col == 1, o.b_row == 1);
        let place = |s: usize, along_k: bool| {
            if along_k {
                (t / BK + ROWS_A_STEP * s, t % BK)
            } else {
                (t % TILE, t / TILE + KS_A_STEP * s)
            }
        };
        // The thread's first element of each operand (at `p0 = 0`, `s =
        // 0`; wrapping: past the edges it is never read) and the
        // distance from one `s` to the next.
        let (a_first, b_first) = {
            let (i, p) = place(0, a_along_k);
            let (j, q) = place(0, b_along_k);
            (
                o.a.wrapping_add((i0 + i) * o.a_row + p * o.a_col),
                o.b.wrapping_add(q * o.b_row + (j0 + j) * o.b_col),
            )
        };
        let a_step = if a_along_k {
            ROWS_A_STEP * o.a_row
        } else {
            KS_A_STEP * o.a_col
        };
        let b_step = if b_along_k {
            ROWS_A_STEP * o.b_col
        } else {
            KS_A_STEP * o.b_row
        };
        let load = |p0: usize| {
            let mut a = [0.0f32; PER];
            let mut b = [0.0f32; PER];
            let (a_at, b_at) = (
                a_first.wrapping_add(p0 * o.a_col),
                b_first.wrapping_add(p0 * o.b_row),
            );
            unroll!(s in [0 1 2 3 4 5 6 7] => {
                let (i, p) = place(s, a_along_k);
                if i0 + i < o.m && p0 + p < o.k {
                    a[s] = *a_at.wrapping_add(s * a_step);
                }
                let (j, p) = place(s, b_along_k);
                if j0 + j < o.n && p0 + p < o.k {
                    b[s] = *b_at.wrapping_add(s * b_step);
                }
            });
            (a, b)
        };
        let stage = |buffer: usize, (a, b): ([f32; PER], [f32; PER])| {
            unroll!(s in [0 1 2 3 4 5 6 7] => {
                let (i, p) = place(s, a_along_k);
                *a_tiles.add((buffer * BK + p) * PITCH + i) = a[s];
                let (j, p) = place(s, b_along_k);
                *b_tiles.add((buffer * BK + p) * PITCH + j) = b[s];
            });
        };
        stage(0, load(0));
        sync_threads();
        let mut acc = [[0.0f32; 2]; 2];
        let (mut p0, mut buffer) = (0, 0);
        loop {
            let next = p0 + BK;
            let ahead = if next < o.k { Some(load(next)) } else { None };
            let (a, b) = (
                a_tiles.add(buffer * BK * PITCH),
                b_tiles.add(buffer * BK * PITCH),
            );
            for q in 0..BK {
                let (a_q, b_q) = (a.add(q * PITCH), b.add(q * PITCH));
                let x = [*a_q.add(ty), *a_q.add(ty + 16)];
                let y = [*b_q.add(tx), *b_q.add(tx + 16)];
                unroll!(r in [0 1] => {
                    unroll!(c in [0 1] => { acc[r][c] = fma_f32(x[r], y[c], acc[r][c]); });
                });
            }
            let Some(ahead) = ahead else { break };
            // The other buffer was last read before the previous barrier.
            buffer ^= 1;
            stage(buffer, ahead);
            sync_threads();
            p0 = next;
        }
        unroll!(r in [0 1] => {
            unroll!(c in [0 1] => { o.store(i0 + ty + 16 * r, j0 + tx + 16 * c, acc[r][c]); });
        });
    }
}
