//! Step 8: step 7's warp tiles fed by a ring of [`PIPELINE_STAGES`](super::PIPELINE_STAGES)
//! shared-memory stages.
//!
//! On sm_80 and newer, an operand laid out along `x` ([`Mode::AlongX`](super::staging::Mode))
//! is copied by `cp.async` straight into its stage; the other (the
//! transposing one) is loaded into registers one stage ahead and stored
//! after the stage's multiply-adds, so its global latency also hides
//! behind arithmetic. One barrier per stage: at the top of iteration `t`
//! every warp has finished stage `t − 1`, whose slot then takes stage
//! `t + STAGES − 1`. PTX for older targets has no `cp.async`: there both
//! operands take the register path.
//!
//! Consecutive blocks walk the tiles in bands of [`BAND`] tile rows (see
//! [`super::tile_of`]): the blocks in flight then read a few rows of `A`
//! and columns of `B` many times over from L2 instead of DRAM.

use super::{WARP_BK, pipelined_tiles};
#[cfg(target_arch = "nvptx64")]
use {
    super::PIPELINE_STAGES,
    super::Operands,
    super::STAGE_PAD,
    super::staging::{Mode, Panel},
    super::warp_tiled::{THREAD_TILE, WarpTile, multiply, store},
    crate::prim::*,
};

/// Tile rows per band of the rasterized block order.
pub const BAND: usize = 8;

/// Threads of configuration `value` (a tile side).
pub const fn threads(value: u32) -> usize {
    pipelined_tiles(value).threads as usize
}

/// Quads a thread stages per operand and stage, for a tile side `side`
/// and `threads` threads.
pub const fn quads(side: usize, threads: usize) -> usize {
    side * WARP_BK / 4 / threads
}

/// `cp.async`'s group wait for a ring of `STAGES` (sm_80+), nothing where
/// every copy is synchronous.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
fn wait_stage<const WAIT: u32>() {
    #[cfg(target_feature = "sm_80")]
    wait_group::<WAIT>();
}

#[cfg(target_arch = "nvptx64")]
#[inline(always)]
fn commit_stage() {
    #[cfg(target_feature = "sm_80")]
    commit_group();
}

/// Runs the ring over `k` for the block's tile at `(row0, col0)`, calling
/// `consume(a, lda, b, ldb)` on each staged stage in order. `WAIT` is
/// `STAGES − 2`. Contract: the family's; `THREADS` threads; shared memory
/// of [`super::ring_bytes`]`(BM, BN, STAGES)`.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub(crate) unsafe fn ring<
    const BM: usize,
    const BN: usize,
    const THREADS: usize,
    const QA: usize,
    const QB: usize,
    const STAGES: usize,
    const WAIT: u32,
>(
    o: &Operands,
    row0: usize,
    col0: usize,
    mut consume: impl FnMut(*const f32, usize, *const f32, usize),
) {
    const {
        assert!(WAIT as usize + 2 == STAGES || (STAGES == 1 && WAIT == 0));
        assert!(QA * THREADS * 4 == BM * WARP_BK && QB * THREADS * 4 == BN * WARP_BK);
    }
    let t = thread_idx_x() as usize;
    let a = Panel::new(o.a.add(row0 * o.a_row), o.a_row, o.a_col, o.m - row0, o.k);
    let b = Panel::new(o.b.add(col0 * o.b_col), o.b_col, o.b_row, o.n - col0, o.k);
    let (lda, ldb) = (BM + STAGE_PAD, BN + STAGE_PAD);
    let stage_words = WARP_BK * (lda + ldb);
    let ring = dynamic_shared::<f32>();
    let a_stage = |s: usize| ring.add(s * stage_words);
    let b_stage = |s: usize| ring.add(s * stage_words + WARP_BK * lda);
    let tiles = o.k.div_ceil(WARP_BK);
    let asynchronous = |mode: Mode| cfg!(target_feature = "sm_80") && mode == Mode::AlongX;
    let (a_async, b_async) = (asynchronous(a.mode), asynchronous(b.mode));
    // Starts the `cp.async` copies of stage `tile` (the operands that take
    // them).
    let issue = |tile: usize| {
        #[cfg(target_feature = "sm_80")]
        {
            let slot = tile % STAGES;
            if a_async {
                a.copy_tile_async::<BM, THREADS, QA>(a_stage(slot), lda, t, tile * WARP_BK);
            }
            if b_async {
                b.copy_tile_async::<BN, THREADS, QB>(b_stage(slot), ldb, t, tile * WARP_BK);
            }
        }
        #[cfg(not(target_feature = "sm_80"))]
        let _ = tile;
    };
    let zero = [[0.0f32; 4]; QA];
    let zero_b = [[0.0f32; 4]; QB];
    for s in 0..STAGES - 1 {
        if s < tiles {
            issue(s);
            if !a_async {
                let q = a.fetch_tile::<BM, THREADS, QA>(t, s * WARP_BK);
                a.put_tile::<BM, THREADS, QA>(a_stage(s), lda, t, q);
            }
            if !b_async {
                let q = b.fetch_tile::<BN, THREADS, QB>(t, s * WARP_BK);
                b.put_tile::<BN, THREADS, QB>(b_stage(s), ldb, t, q);
            }
        }
        commit_stage();
    }
    for tile in 0..tiles {
        wait_stage::<WAIT>();
        sync_threads();
        // The slot of stage `tile − 1`, which every warp has finished.
        let next = tile + STAGES - 1;
        let slot = next % STAGES;
        let load = next < tiles;
        let (mut qa, mut qb) = (zero, zero_b);
        if load {
            if !a_async {
                qa = a.fetch_tile::<BM, THREADS, QA>(t, next * WARP_BK);
            }
            if !b_async {
                qb = b.fetch_tile::<BN, THREADS, QB>(t, next * WARP_BK);
            }
            issue(next);
        }
        commit_stage();
        let now = tile % STAGES;
        consume(a_stage(now), lda, b_stage(now), ldb);
        if load {
            if !a_async {
                a.put_tile::<BM, THREADS, QA>(a_stage(slot), lda, t, qa);
            }
            if !b_async {
                b.put_tile::<BN, THREADS, QB>(b_stage(slot), ldb, t, qb);
            }
        }
    }
}

/// Contract: the family's; blocks of `THREADS` threads and
/// [`super::ring_bytes`]`(BM, BN, PIPELINE_STAGES)` of shared memory.
#[cfg(target_arch = "nvptx64")]
pub(crate) unsafe fn kernel<
    const BM: usize,
    const BN: usize,
    const THREADS: usize,
    const QA: usize,
    const QB: usize,
>(
    o: Operands,
) {
    const WAIT: u32 = PIPELINE_STAGES as u32 - 2;
    let (tile_m, tile_n) = o.tile(BM, BN, BAND);
    let (row0, col0) = (tile_m * BM, tile_n * BN);
    let w = WarpTile::of::<BN>(thread_idx_x() as usize);
    let mut acc = [[0.0f32; THREAD_TILE]; THREAD_TILE];
    ring::<BM, BN, THREADS, QA, QB, PIPELINE_STAGES, WAIT>(&o, row0, col0, |a, lda, b, ldb| {
        multiply(&mut acc, a, lda, b, ldb, w)
    });
    store(&o, &acc, row0, col0, w);
}
