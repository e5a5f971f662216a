//! Step 8: step 7's warp tiles fed by a ring of `PIPELINE_STAGES`
//! shared-memory stages.
//!
//! On sm_80 and newer every stage arrives by `cp.async`, which runs while
//! the warps compute on the stages before it. Each operand is staged in the
//! layout it has in memory ([`Layout`](super::staging::Layout): `k`-major
//! where consecutive elements in memory are consecutive rows of `op(A)`
//! or columns of `op(B)`, `x`-major where they run along `k`), so every
//! quad is one 16-byte copy and none transposes; the compute reads
//! whichever layout it is given (an entry per pair of layouts, which the
//! host picks from the operands' strides). One barrier per stage: at the
//! top of iteration `t` every warp has finished stage `t − 1`, whose slot
//! then takes stage `t + STAGES − 1`. PTX for older targets has no `cp.async`:
//! there each stage is loaded into registers one stage ahead and stored
//! after the stage's multiply-adds, so its latency still hides behind
//! arithmetic.
//!
//! Consecutive blocks walk the tiles in bands of `BAND` tile rows (see
//! `super::tile_of`): the blocks in flight then read a few rows of `A`
//! and columns of `B` many times over from L2 instead of DRAM.
//!
//! Products with too few tiles to give every SM a block (`m × n` of at
//! most 132 tiles of 64 × 128 on a 132-SM GPU: 512² and below, or a long
//! `k` under a small `C`) split `k` into slices of whole stages
//! (`super::split_slices`), one block per tile and slice, so that the
//! SMs share the `k` loop instead of idling while a few blocks walk all of
//! it; where a long `k` allows, enough slices to fill every block slot
//! the SMs hold (two per SM on an H100 or H200: 1024³ runs as 256 blocks
//! instead of 128, 65.0 → 62.4 µs on an H200). Each block leaves its
//! partial tile in the workspace and takes its tile's ticket; the last of
//! a tile's slices adds the partials in slice order and stores the tile
//! as an unsplit block would (`join`): no floating-point atomics, the same
//! bits every run. H100, µs, unsplit → split: 256³ 20.6 → 14.4, 512³
//! 34.1 → 18.2 (cuBLAS 10.1 and 16.2).
//!
//! Sizes that are not multiples of the tile, and pitches that are not
//! multiples of 4 floats (`1000 × 999 × 1001`): a last tile row or column
//! steps back to end on `C`'s edge, so its panels are whole and its copies
//! unchecked like everyone's; whole tiles of misaligned operands arrive
//! as 4-byte copies dealt across the lanes so that each instruction reads
//! consecutive addresses, and the tile is stored through shared memory.
//! That path is a second body of each entry, chosen per block, so the
//! aligned loop carries none of it.
//!
//! The largest products, packed so that both operands are `k`-major and
//! aligned, take an entry of their own (`whole_kernel`) whose ring has
//! no checked copies: 126 registers instead of 254, two blocks per SM
//! instead of one. H100, 4096³: 2.94 → 2.68 ms (cuBLAS 2.64 to 2.66).
//! The same entry with `A` stored `m × k` where it lies (strided batches,
//! products too small to pack) copies `A`'s tiles into the `k`-major stage
//! by transposing 4-byte copies (`takes_whole_rows`). H200, 1 024 strided
//! products of 256³: 899.4 → 751.9 µs (cuBLAS 737.3).

use super::{WARP_BK, pipelined_tiles};
#[cfg(target_arch = "nvptx64")]
use {
    super::Operands,
    super::PIPELINE_STAGES,
    super::staging::{Layout, Panel, staged_words},
    super::warp_tiled::{THREAD_TILE, WarpTile, store, vector_stores},
    crate::prim::*,
};

/// Tile rows per band of the rasterized block order.
#[doc(hidden)]
pub const BAND: usize = 8;

/// Threads of configuration `config` (an index of
/// [`super::PIPELINED_CONFIGS`]).
#[doc(hidden)]
pub const fn threads(config: u32) -> usize {
    pipelined_tiles(config).threads as usize
}

/// Whether configuration `config` splits `k` ([`super::split_slices`]):
/// the 64 × 128 and 64 × 64 tiles, which [`super::GemmVariant::plan`]
/// takes for the products that leave SMs idle and the narrow ones; the
/// 128 × 128 entry, the one the large products run, carries none of it
/// (with it, its loop ran 4096³ 1.7% slower on an H100 and an H200).
#[doc(hidden)]
pub const fn splits(config: u32) -> bool {
    config != super::PIPELINED_BIG
}

/// Whether an `m × n × k` product takes `whole_kernel` (the entry
/// `gemm_pipelined_whole`), the 128 × 128 entry without checked copies:
/// both operands `k`-major as the kernel sees them (`(address, row
/// stride, column stride)` of `op(A)` and `op(B)`, as the kernels'
/// `Operands` hold them: consecutive rows of `op(A)` and columns of
/// `op(B)` adjacent in memory, what packing makes of an
/// `A` stored `m × k`), 16-byte aligned at every tile a block starts
/// from (multiples of 128 and, stepped back, `m − 128` and `n − 128`),
/// `C` (`(address, pitch)`) taking 16-byte stores, at least one whole
/// tile each way and `k` a whole number of stages. Then every copy of
/// every block is a whole 16-byte vector: the kernel checks the same and
/// traps where it does not hold.
#[doc(hidden)]
pub const fn takes_whole_tiles(
    m: usize,
    n: usize,
    k: usize,
    a: (u64, usize, usize),
    b: (u64, usize, usize),
    c: (u64, usize),
) -> bool {
    let (tile_m, tile_n) = super::PIPELINED_CONFIGS[super::PIPELINED_BIG as usize];
    let (a_at, a_row, a_col) = a;
    let (b_at, b_row, b_col) = b;
    let (c_at, ldc) = c;
    let a_ok = a_row == 1 && a_col > 1 && a_col.is_multiple_of(4) && a_at.is_multiple_of(16);
    let b_ok = b_col == 1 && b_row > 1 && b_row.is_multiple_of(4) && b_at.is_multiple_of(16);
    a_ok && b_ok
        && c_at.is_multiple_of(16)
        && ldc.is_multiple_of(4)
        && m >= tile_m
        && n >= tile_n
        && m.is_multiple_of(4)
        && n.is_multiple_of(4)
        && k > 0
        && k.is_multiple_of(WARP_BK)
}

/// Whether an `m × n × k` product takes `whole_kernel` with `A_ROWS`
/// (the entry `gemm_pipelined_whole_rows`): as [`takes_whole_tiles`] but
/// for `op(A)`, which is laid out along `k` (column stride 1: `A` stored
/// `m × k`, untransposed) at any address and row stride, and arrives
/// transposed by 4-byte copies (`Panel::transposing_tiles`), where
/// [`takes_whole_tiles`] needs it `k`-major (packed). Every copy of
/// every block is then whole: the kernel checks the same and traps where
/// it does not hold.
#[doc(hidden)]
pub const fn takes_whole_rows(
    m: usize,
    n: usize,
    k: usize,
    a: (u64, usize, usize),
    b: (u64, usize, usize),
    c: (u64, usize),
) -> bool {
    let (tile_m, _) = super::PIPELINED_CONFIGS[super::PIPELINED_BIG as usize];
    // `op(A)` as `takes_whole_tiles` would take it once `k`-major: row
    // stride 1, column stride a multiple of 4 at an aligned address.
    let packed_a = (0, 1, 4 * tile_m);
    a.2 == 1 && takes_whole_tiles(m, n, k, packed_a, b, c)
}

/// Quads a thread stages per operand and stage, for a tile side `side`
/// and `threads` threads.
#[doc(hidden)]
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

/// Runs the ring over `k` for the block's tile: `a` and `b` are the
/// block's panels, staged `k`-major where `A_K` (`B_K`) is set and
/// `x`-major otherwise ([`Layout`]); `consume(a, b)` is called on each
/// staged stage in order. `WAIT` is `STAGES − 2`. `ELEMENTS`: whole tiles
/// of operands whose quads are not 16-byte vectors (a pitch that is not a
/// multiple of 4) also take the unchecked copies, as 4-byte ones (see
/// [`Panel::whole_tiles`]). `WHOLE` (sm_80+): every tile is whole and both
/// panels take the unchecked 16-byte copies ([`takes_whole_tiles`]), so
/// the ring has no checked copies at all; it traps where that is not so.
/// `A_ROWS` (with `WHOLE` and `A_K`): `a` is laid out along `k` and its
/// tiles arrive transposed by 4-byte copies
/// ([`Panel::transposing_tiles`]), `B`'s as for `WHOLE`.
/// Contract: the family's; `THREADS` threads; shared memory of
/// [`super::ring_bytes`]`(BM, BN, STAGES)`.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn ring<
    const BM: usize,
    const BN: usize,
    const THREADS: usize,
    const QA: usize,
    const QB: usize,
    const STAGES: usize,
    const WAIT: u32,
    const A_K: bool,
    const B_K: bool,
    const ELEMENTS: bool,
    const WHOLE: bool,
    const A_ROWS: bool,
>(
    a: &Panel,
    b: &Panel,
    k: usize,
    mut consume: impl FnMut(*const f32, *const f32),
) {
    const {
        assert!(WAIT as usize + 2 == STAGES);
        assert!(!A_ROWS || (WHOLE && A_K && QA == 2 && BM * 32 == 16 * THREADS));
        assert!(QA * THREADS * 4 == BM * WARP_BK && QB * THREADS * 4 == BN * WARP_BK);
    }
    let t = thread_idx_x() as usize;
    let (a_words, b_words) = (staged_words(BM), staged_words(BN));
    let ring = dynamic_shared::<f32>();
    let a_stage = |s: usize| ring.add(s * (a_words + b_words));
    let b_stage = |s: usize| ring.add(s * (a_words + b_words) + a_words);
    let tiles = k.div_ceil(WARP_BK);
    // sm_80 and newer: every stage arrives by `cp.async`. Older targets
    // load through registers one stage ahead and store after the stage's
    // multiply-adds. A macro, not a closure: the 64 × 64 tiles' closure,
    // four checked copies an operand, was left a call with its captures
    // on the stack (216 bytes).
    #[cfg(target_feature = "sm_80")]
    macro_rules! start {
        ($tile:expr) => {{
            let tile: usize = $tile;
            let slot = tile % STAGES;
            a.copy_async::<A_K, BM, THREADS, QA>(a_stage(slot), t, tile * WARP_BK);
            b.copy_async::<B_K, BN, THREADS, QB>(b_stage(slot), t, tile * WARP_BK);
        }};
    }
    #[cfg(not(target_feature = "sm_80"))]
    macro_rules! start {
        ($tile:expr) => {{
            let tile: usize = $tile;
            let slot = tile % STAGES;
            let q = a.load_quads::<A_K, BM, THREADS, QA>(t, tile * WARP_BK);
            a.store_quads::<A_K, BM, THREADS, QA>(a_stage(slot), t, q);
            let q = b.load_quads::<B_K, BN, THREADS, QB>(t, tile * WARP_BK);
            b.store_quads::<B_K, BN, THREADS, QB>(b_stage(slot), t, q);
        }};
    }
    // Only the unchecked copies: the checked ones' addresses, worked out
    // once by the compiler and held across the loop, took 192 registers
    // where this loop needs 126 (one block per SM instead of two).
    #[cfg(target_feature = "sm_80")]
    if WHOLE {
        // The whole tiles' loop, for either kind of `A` copies.
        macro_rules! whole_ring {
            ($copies_a:expr) => {{
                let (copies_a, copies_b) =
                    match ($copies_a, b.whole_tiles::<B_K, BN, THREADS, QB, false>(t)) {
                        (Some(copies_a), Some(copies_b)) if k.is_multiple_of(WARP_BK) => {
                            (copies_a, copies_b)
                        }
                        _ => trap(),
                    };
                let (base, stage_bytes) = (shared_address(ring), ((a_words + b_words) * 4) as u32);
                let begin = |tile: usize| {
                    let slot = base + (tile % STAGES) as u32 * stage_bytes;
                    copies_a.start(slot, tile);
                    copies_b.start(slot + (a_words * 4) as u32, tile);
                };
                for s in 0..STAGES - 1 {
                    if s < tiles {
                        begin(s);
                    }
                    commit_stage();
                }
                for tile in 0..tiles {
                    wait_stage::<WAIT>();
                    sync_threads();
                    // As below: stage `tile + STAGES − 1` into the slot of
                    // stage `tile − 1`, which every warp has finished.
                    let next = tile + STAGES - 1;
                    if next < tiles {
                        begin(next);
                    }
                    commit_stage();
                    consume(a_stage(tile % STAGES), b_stage(tile % STAGES));
                }
                return;
            }};
        }
        if A_ROWS {
            whole_ring!(a.transposing_tiles::<BM, THREADS, QA>(t));
        } else {
            whole_ring!(a.whole_tiles::<A_K, BM, THREADS, QA, false>(t));
        }
    }
    // Where both operands' copies of a whole tile are wholly inside (most
    // blocks, all of `k` but a last partial tile), they come from
    // addresses worked out once; the rest take the checked copies.
    #[cfg(target_feature = "sm_80")]
    let whole = match (
        a.whole_tiles::<A_K, BM, THREADS, QA, ELEMENTS>(t),
        b.whole_tiles::<B_K, BN, THREADS, QB, ELEMENTS>(t),
    ) {
        (Some(copies_a), Some(copies_b)) => Some((copies_a, copies_b)),
        _ => None,
    };
    #[cfg(target_feature = "sm_80")]
    let (base, stage_bytes, whole_tiles) = (
        shared_address(ring),
        ((a_words + b_words) * 4) as u32,
        k / WARP_BK,
    );
    // Starts the copies of stage `next` (none past `k`): the unchecked ones
    // for a whole tile, the checked ones for the last partial tile (and
    // for every tile of a block at `C`'s edge that cannot step back). The
    // ring's first stages too: through the checked copies, which run
    // once per warp and are cold in the instruction cache, the 4-byte
    // ones cost `1000 × 999 × 1001` 1 µs of 68 (H200). A macro, not a
    // closure: a closure holding `whole` by reference left it in local
    // memory (416 bytes of stack).
    macro_rules! issue {
        ($next:expr) => {{
            let next = $next;
            #[cfg(target_feature = "sm_80")]
            match whole {
                Some((copies_a, copies_b)) if next < whole_tiles => {
                    let slot = base + (next % STAGES) as u32 * stage_bytes;
                    copies_a.start(slot, next);
                    copies_b.start(slot + (a_words * 4) as u32, next);
                }
                _ => {
                    if next < tiles {
                        start!(next);
                    }
                }
            }
            #[cfg(not(target_feature = "sm_80"))]
            if next < tiles {
                start!(next);
            }
        }};
    }
    for s in 0..STAGES - 1 {
        issue!(s);
        commit_stage();
    }
    let mut tile = 0;
    while tile < tiles {
        wait_stage::<WAIT>();
        sync_threads();
        // Stage `tile + STAGES − 1` goes to the slot of stage `tile − 1`,
        // which every warp has finished (they all passed the barrier).
        let next = tile + STAGES - 1;
        let now = tile % STAGES;
        #[cfg(target_feature = "sm_80")]
        {
            issue!(next);
            commit_stage();
            consume(a_stage(now), b_stage(now));
        }
        #[cfg(not(target_feature = "sm_80"))]
        {
            let load = next < tiles;
            let (mut qa, mut qb) = ([[0.0f32; 4]; QA], [[0.0f32; 4]; QB]);
            if load {
                qa = a.load_quads::<A_K, BM, THREADS, QA>(t, next * WARP_BK);
                qb = b.load_quads::<B_K, BN, THREADS, QB>(t, next * WARP_BK);
            }
            consume(a_stage(now), b_stage(now));
            if load {
                let slot = next % STAGES;
                a.store_quads::<A_K, BM, THREADS, QA>(a_stage(slot), t, qa);
                b.store_quads::<B_K, BN, THREADS, QB>(b_stage(slot), t, qb);
            }
        }
        tile += 1;
    }
}

/// The block's panels of `A` and `B` for its tile at `(row0, col0)`, over
/// `k` from `p0` for `len` (all of `k`, or a slice of a split product).
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub(crate) unsafe fn panels(
    o: &Operands,
    row0: usize,
    col0: usize,
    p0: usize,
    len: usize,
) -> (Panel, Panel) {
    (
        Panel::new(
            o.a.add(row0 * o.a_row + p0 * o.a_col),
            o.a_row,
            o.a_col,
            o.m - row0,
            len,
        ),
        Panel::new(
            o.b.add(col0 * o.b_col + p0 * o.b_row),
            o.b_col,
            o.b_row,
            o.n - col0,
            len,
        ),
    )
}

/// `acc += A·B` over one stage staged as `A_K`, `B_K` say, each thread
/// its outputs placed by [`WarpTile::row`]`::<A_K>` and
/// [`WarpTile::col`]`::<B_K>`. Per `k`, a `k`-major operand gives a
/// thread's 4 consecutive rows (columns) as one 16-byte load, an `x`-major
/// one each row as a 4-byte load (a broadcast to the lanes that share it).
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
#[allow(
    unused_assignments,
    reason = "the unrolled steps past the last load assign nothing, but the lint sees the assignment of each copy"
)]
unsafe fn multiply<const A_K: bool, const B_K: bool, const BM: usize, const BN: usize>(
    acc: &mut [[f32; THREAD_TILE]; THREAD_TILE],
    a: *const f32,
    b: *const f32,
    w: WarpTile,
) {
    // The 8 values of a thread's rows (columns) at `k = q`.
    #[inline(always)]
    unsafe fn values<const K: bool>(
        tile: *const f32,
        tx: usize,
        q: usize,
        at: impl Fn(usize) -> usize,
    ) -> [f32; 8] {
        let mut v = [0.0f32; 8];
        if K {
            unroll!(h in [0 1] => {
                let quad = load4(tile.add(Layout::<true>::index(tx, at(4 * h), q)));
                unroll!(e in [0 1 2 3] => { v[4 * h + e] = quad[e]; });
            });
        } else {
            unroll!(e in [0 1 2 3 4 5 6 7] => {
                v[e] = *tile.add(Layout::<false>::index(tx, at(e), q));
            });
        }
        v
    }
    let load = |q: usize| {
        (
            values::<A_K>(a, BM, q, |r| w.row::<A_K>(r)),
            values::<B_K>(b, BN, q, |c| w.col::<B_K>(c)),
        )
    };
    // Serpentine order: odd rows walk the columns backwards, so the first
    // product of a row can take its `B` value from the register reuse
    // cache, where the last of the row before left it (ptxas keeps the
    // order where both operands are `k`-major; for an `x`-major `A`, whose
    // 16-byte loads hold 4 `k`s, it reorders the products itself).
    let step = |acc: &mut [[f32; THREAD_TILE]; THREAD_TILE], av: [f32; 8], bv: [f32; 8]| {
        for r in 0..THREAD_TILE {
            for i in 0..THREAD_TILE {
                let c = if r % 2 == 0 { i } else { THREAD_TILE - 1 - i };
                acc[r][c] = fma_f32(av[r], bv[c], acc[r][c]);
            }
        }
    };
    const { assert!(WARP_BK == 16) };
    // Fragments loaded two `k` ahead of their products: one ahead, ptxas
    // sinks the loads to 12 to 20 instructions before their use, too close
    // to hide the shared-memory latency with two warps per scheduler.
    let mut frags = [load(0), load(1)];
    unroll!(q in [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15] => {
        let (av, bv) = frags[q % 2];
        if q + 2 < WARP_BK {
            frags[q % 2] = load(q + 2);
        }
        step(acc, av, bv);
    });
}

/// The body of a pipelined block for staging layouts `A_K`, `B_K`.
/// Without `ELEMENTS` every copy of a whole tile and every store is a
/// 16-byte vector (aligned operands, `C`'s columns blocked: the largest
/// products); with it whole tiles may copy 4-byte elements ([`ring`]) and
/// the tile is stored through shared memory ([`store_through_shared`]).
/// Two bodies, so that neither path's branches weigh on the other's loop
/// (one body for both cost the aligned 4096³ product 3 %). `WHOLE`: the
/// ring of [`whole_kernel`], whole tiles only; `A_ROWS`: its `A` laid out
/// along `k`, transposed on the way in ([`ring`]).
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
unsafe fn body<
    const BM: usize,
    const BN: usize,
    const THREADS: usize,
    const QA: usize,
    const QB: usize,
    const SPLIT: bool,
    const ELEMENTS: bool,
    const WHOLE: bool,
    const A_ROWS: bool,
    const A_K: bool,
    const B_K: bool,
>(
    o: &Operands,
    origin: (usize, usize),
    from: (usize, usize),
    a: &Panel,
    b: &Panel,
    split: (usize, usize),
) {
    const WAIT: u32 = PIPELINE_STAGES as u32 - 2;
    let w = WarpTile::of::<BN>(thread_idx_x() as usize);
    let mut acc = [[0.0f32; THREAD_TILE]; THREAD_TILE];
    ring::<BM, BN, THREADS, QA, QB, PIPELINE_STAGES, WAIT, A_K, B_K, ELEMENTS, WHOLE, A_ROWS>(
        a,
        b,
        a.k,
        |sa, sb| multiply::<A_K, B_K, BM, BN>(&mut acc, sa, sb, w),
    );
    if SPLIT && o.slices > 1 && !join::<THREADS>(o, &mut acc, split) {
        return;
    }
    if ELEMENTS {
        store_through_shared::<A_K, B_K, BM, BN, THREADS>(o, &acc, origin, from, w);
    } else {
        store::<A_K, B_K>(o, &acc, origin, from, w);
    }
}

/// Where the slices of a split product meet: each block leaves its
/// partial tile (`acc`, unscaled) in the workspace and takes its tile's
/// ticket; the block that takes the last one adds the partials in slice
/// order (the same bits every run, whichever slice finishes last) into
/// `acc`, resets the ticket for the next product and returns `true`, to
/// store the tile as an unsplit block does; the others return `false`.
/// `split` is `(tile, slice)`, the tile numbered across a batch's
/// products. Every thread of the block calls it, after the ring.
/// Contract: [`super::split_words`] words at `o.work` for the tiles of
/// the whole batch, the tickets zero when the product starts.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
unsafe fn join<const THREADS: usize>(
    o: &Operands,
    acc: &mut [[f32; THREAD_TILE]; THREAD_TILE],
    split: (usize, usize),
) -> bool {
    const QUADS: usize = THREAD_TILE * THREAD_TILE / 4;
    let (tile, slice) = split;
    let t = thread_idx_x() as usize;
    let ticket = o.work.cast::<u32>().add(tile);
    // Quad `q` of thread `t` of a partial at `[q · THREADS + t]`: a warp's
    // 16-byte accesses cover 512 consecutive bytes.
    let partial = |s: usize| {
        o.work
            .add(super::SPLIT_TICKETS + (tile * o.slices + s) * QUADS * 4 * THREADS)
            .cast::<Words4>()
            .add(t)
    };
    let mine = partial(slice);
    unroll!(q in [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15] => {
        let row = &acc[q / 2];
        let u = 4 * (q % 2);
        store_v4(
            mine.add(q * THREADS),
            [row[u].to_bits(), row[u + 1].to_bits(), row[u + 2].to_bits(), row[u + 3].to_bits()],
        );
    });
    // Every warp has stored its partial (published by the ticket) and
    // left the ring, whose first word then carries the verdict.
    sync_threads();
    // At most `SPLIT_TICKETS` slices, so below 2^32.
    if !last_to_arrive(ticket, o.slices as u32, dynamic_shared::<u32>()) {
        return false;
    }
    for s in 0..o.slices {
        let part = partial(s);
        unroll!(q in [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15] => {
            let w = load_cg_v4(part.add(q * THREADS));
            let u = 4 * (q % 2);
            unroll!(e in [0 1 2 3] => {
                let v = f32::from_bits(w[e]);
                acc[q / 2][u + e] = if s == 0 { v } else { acc[q / 2][u + e] + v };
            });
        });
    }
    true
}

/// Words from one row to the next of the tile [`store_through_shared`]
/// stages: a multiple of 4 (16-byte stores of blocked columns) that is
/// not one of 32.
#[cfg(target_arch = "nvptx64")]
const fn staged_c_ld(bn: usize) -> usize {
    bn + 4
}

/// Stores the block's tile where `C` takes no 16-byte vectors (a pitch
/// or start not a multiple of 4 floats, or columns not blocked): the
/// threads' outputs go to the ring, free once every warp is past its last
/// stage, and the block then writes `C` row by row, consecutive threads on
/// consecutive columns. A thread's own outputs lie 4 or 8 columns apart
/// across the lanes, so storing them directly spreads each 4-byte store
/// of a warp over 16 sectors for 4 bytes of each 32 (on the 1000 × 999
/// tiles it took 8 % of the time); here each fills whole
/// sectors. Each thread keeps one column and walks its rows with a
/// pointer: the loop over the tile's elements that this replaced, a
/// division, a bounds test and a `β` test per element, took 30
/// instructions per store, and the tile's store ran after the last
/// stage with nothing to hide it (H200, `1000 × 999 × 1001`: 71.3, 71.7
/// → 68.2, 67.5 µs). Outputs before `from` are the neighbouring tile's,
/// as in [`store`].
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
unsafe fn store_through_shared<
    const A_K: bool,
    const B_K: bool,
    const BM: usize,
    const BN: usize,
    const THREADS: usize,
>(
    o: &Operands,
    acc: &[[f32; THREAD_TILE]; THREAD_TILE],
    origin: (usize, usize),
    from: (usize, usize),
    w: WarpTile,
) {
    const {
        assert!(BM * staged_c_ld(BN) * 4 <= super::ring_bytes(BM, BN, PIPELINE_STAGES) as usize);
    }
    let ld = staged_c_ld(BN);
    let tile = dynamic_shared::<f32>();
    // Every warp has left the ring (its copies all landed: the groups
    // still counted are empty ones past `k`).
    sync_threads();
    unroll!(r in [0 1 2 3 4 5 6 7] => {
        let row = tile.add(w.row::<A_K>(r) * ld);
        if B_K {
            unroll!(u in [0 1] => {
                let quad = [acc[r][4 * u], acc[r][4 * u + 1], acc[r][4 * u + 2], acc[r][4 * u + 3]];
                store4(row.add(w.col::<true>(4 * u)), quad);
            });
        } else {
            unroll!(c in [0 1 2 3 4 5 6 7] => { *row.add(w.col::<false>(c)) = acc[r][c]; });
        }
    });
    sync_threads();
    // Thread `t` stores column `t % BN` of every `THREADS / BN`-th row
    // from row `t / BN`: a warp covers consecutive columns of a row, the
    // loop carries a pointer, and `β` and the column's bounds are tested
    // once.
    const { assert!(THREADS.is_multiple_of(BN)) };
    let pass = THREADS / BN;
    let t = thread_idx_x() as usize;
    let y = t % BN;
    let j = origin.1 + y;
    if j < from.1 || j >= o.n {
        return;
    }
    // Rows from `from.0` (the neighbour's before it) to `C`'s last.
    let (skip, end) = (from.0 - origin.0, (o.m - origin.0).min(BM));
    let mut x = t / BN;
    while x < skip {
        x += pass;
    }
    let step = pass * o.ldc;
    let mut c = o.c.wrapping_add((origin.0 + x) * o.ldc + j);
    let mut staged = tile.wrapping_add(x * ld + y);
    if o.beta == 0.0 {
        while x < end {
            // In `C` (row `origin.0 + x < m`, column `j < n`) and in the
            // staged tile (`x < BM`, `y < BN`).
            *c = o.alpha * *staged;
            x += pass;
            c = c.wrapping_add(step);
            staged = staged.wrapping_add(pass * ld);
        }
    } else {
        while x < end {
            // As above.
            *c = fma_f32(o.alpha, *staged, o.beta * *c);
            x += pass;
            c = c.wrapping_add(step);
            staged = staged.wrapping_add(pass * ld);
        }
    }
}

/// [`kernel`] for tile configuration `CONFIG` (an index of
/// [`super::PIPELINED_CONFIGS`]) and the staging layouts `A_K`, `B_K`:
/// the body of the four layout entries, their derived constants written
/// once. A `match` on the configuration, folded away in each entry, since
/// a function generic over `CONFIG` cannot compute const arguments from
/// it (that needs `generic_const_exprs`).
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub(crate) unsafe fn layout_kernel<const CONFIG: u32, const A_K: bool, const B_K: bool>(
    o: Operands,
) {
    use super::{PIPELINED_BIG, PIPELINED_CONFIGS, PIPELINED_NARROW, PIPELINED_SPLIT};
    let o = o.of_batch();
    macro_rules! with {
        ($c:ident) => {
            kernel::<
                { PIPELINED_CONFIGS[$c as usize].0 },
                { PIPELINED_CONFIGS[$c as usize].1 },
                { threads($c) },
                { quads(PIPELINED_CONFIGS[$c as usize].0, threads($c)) },
                { quads(PIPELINED_CONFIGS[$c as usize].1, threads($c)) },
                { splits($c) },
                A_K,
                B_K,
            >(o)
        };
    }
    // SAFETY: the caller's contract, which is `kernel`'s for this
    // configuration's constants.
    unsafe {
        match CONFIG {
            PIPELINED_BIG => with!(PIPELINED_BIG),
            PIPELINED_SPLIT => with!(PIPELINED_SPLIT),
            PIPELINED_NARROW => with!(PIPELINED_NARROW),
            _ => trap(),
        }
    }
}

/// The entry of one pair of staging layouts, `A_K` and `B_K` (whether each
/// operand is staged `k`-major, [`super::staging::stages_k_major`]), which the host
/// picks from the operands' strides ([`super::pipelined_entry`]); any
/// strides compute right in any of them, only slower. One entry per pair,
/// not one for all four: a block runs the first of an entry's bodies
/// faster than the same code placed after the others (instruction fetch;
/// H200, 1024³ through the PTX: 62.9, 63.3 µs first, 65.2, 65.5 after
/// four bodies), and the misaligned body, fifth of eight before, ran
/// `1000 × 999 × 1001` in 67.0, 67.0, 67.0 µs and runs it in 66.3, 65.9,
/// 65.9 second of two (1024³ 63.6, 63.4, 63.6 → 64.2, 63.5, 64.8: ptxas
/// gives the entry 225 registers where the eight bodies took 254). Each
/// has two bodies: 16-byte copies and stores, and the misaligned path.
/// Contract: the family's; blocks of `THREADS` threads and
/// [`super::ring_bytes`]`(BM, BN, PIPELINE_STAGES)` of shared memory.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub(crate) unsafe fn kernel<
    const BM: usize,
    const BN: usize,
    const THREADS: usize,
    const QA: usize,
    const QB: usize,
    const SPLIT: bool,
    const A_K: bool,
    const B_K: bool,
>(
    o: Operands,
) {
    let (tiles_m, tiles_n) = (o.m.div_ceil(BM), o.n.div_ceil(BN));
    let block = block_idx_x() as usize;
    let (tile, slice, p0, len) = if SPLIT {
        // A split product's blocks are its slices in turn, each over all
        // tiles ([`super::split_slices`]).
        let (tile, slice) = (block % (tiles_m * tiles_n), block / (tiles_m * tiles_n));
        let deep = super::slice_k(o.k, o.slices);
        let p0 = slice * deep;
        (
            tile,
            slice,
            p0,
            if o.k - p0 < deep { o.k - p0 } else { deep },
        )
    } else {
        (block, 0, 0, o.k)
    };
    let (tile_m, tile_n) = super::tile_of(tile, tiles_m, tiles_n, BAND);
    let from = (tile_m * BM, tile_n * BN);
    // Only `cp.async` targets have the unchecked copies stepping back is for.
    #[cfg(target_feature = "sm_80")]
    let origin = (step_back(from.0, o.m, BM), step_back(from.1, o.n, BN));
    #[cfg(not(target_feature = "sm_80"))]
    let origin = from;
    let (a, b) = panels(&o, origin.0, origin.1, p0, len);
    // The tickets and partials of a batch's products follow each other:
    // its tiles are numbered across the batch.
    let split = (tile + block_idx_y() as usize * tiles_m * tiles_n, slice);
    if a.vectors() && b.vectors() && vector_stores(&o, origin.1, B_K) {
        body::<BM, BN, THREADS, QA, QB, SPLIT, false, false, false, A_K, B_K>(
            &o, origin, from, &a, &b, split,
        )
    } else {
        body::<BM, BN, THREADS, QA, QB, SPLIT, true, false, false, A_K, B_K>(
            &o, origin, from, &a, &b, split,
        )
    }
}

/// The 128 × 128 tiles of products that [`takes_whole_tiles`]: the ring
/// with no checked copies (`WHOLE`), which leaves the loop 126 registers,
/// so that two blocks fit an SM (launch bounds) where [`kernel`]'s eight
/// bodies, the checked copies' addresses live across each loop, took 254
/// (192 for its aligned `k`-major body alone): 16 warps per SM instead of
/// 8, each scheduler four to choose from. `A_ROWS`: the products that
/// [`takes_whole_rows`] instead, whose `A` arrives transposed. Contract:
/// [`kernel`]'s, and sm_80 or newer (elsewhere it traps: the host never
/// launches it there).
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub(crate) unsafe fn whole_kernel<
    const BM: usize,
    const BN: usize,
    const THREADS: usize,
    const QA: usize,
    const QB: usize,
    const A_ROWS: bool,
>(
    o: Operands,
) {
    #[cfg(not(target_feature = "sm_80"))]
    {
        let _ = o;
        trap();
    }
    #[cfg(target_feature = "sm_80")]
    {
        const {
            assert!(
                BM == super::PIPELINED_CONFIGS[super::PIPELINED_BIG as usize].0
                    && BN == super::PIPELINED_CONFIGS[super::PIPELINED_BIG as usize].1
            )
        };
        let o = o.of_batch();
        let whole = if A_ROWS {
            takes_whole_rows
        } else {
            takes_whole_tiles
        };
        if !whole(
            o.m,
            o.n,
            o.k,
            (o.a.addr() as u64, o.a_row, o.a_col),
            (o.b.addr() as u64, o.b_row, o.b_col),
            (o.c.addr() as u64, o.ldc),
        ) {
            trap();
        }
        let (tiles_m, tiles_n) = (o.m.div_ceil(BM), o.n.div_ceil(BN));
        let (tile_m, tile_n) = super::tile_of(block_idx_x() as usize, tiles_m, tiles_n, BAND);
        let from = (tile_m * BM, tile_n * BN);
        let origin = (step_back(from.0, o.m, BM), step_back(from.1, o.n, BN));
        let (a, b) = panels(&o, origin.0, origin.1, 0, o.k);
        body::<BM, BN, THREADS, QA, QB, false, false, true, A_ROWS, true, true>(
            &o,
            origin,
            from,
            &a,
            &b,
            (0, 0),
        );
    }
}

/// Where a tile that starts at `start` of `len` rows (columns) of `C`
/// computes from: `start`, or for a last tile that would run past the
/// edge, `len − tile` where `C` holds a whole tile. The tile's panels are
/// then whole, so its copies take the unchecked path for all of `k` (a
/// grid of one wave, `1000 × 999 × 1001`, waits for its slowest block, an
/// edge one); it stores only from `start` on ([`store`]), the outputs
/// before being its neighbour's, computed alike.
#[cfg(all(target_arch = "nvptx64", target_feature = "sm_80"))]
#[inline(always)]
fn step_back(start: usize, len: usize, tile: usize) -> usize {
    if start + tile > len && len >= tile {
        len - tile
    } else {
        start
    }
}
