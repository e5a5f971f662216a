//! The Hopper-native TF32 step (sm_90a): tensor copies (TMA) into
//! 128-byte-swizzled shared memory, a ring of stages handed over on
//! transaction barriers, one warpgroup copying and two multiplying, each
//! block walking tiles until none is left.
//!
//! A block has three warpgroups. The first gives back most of its
//! registers ([`PRODUCER_REGS`]) and one of its threads issues, stage
//! after stage, the tensor copies of a 128 × 32 tile of `A` and a
//! 256 × 32 tile of `B` (both `k`-major, as TF32 `wgmma` reads them) into
//! the ring: no thread touches an operand on its way to the tensor cores.
//! The other two take those registers ([`CONSUMER_REGS`]); each multiplies
//! its 64 rows of the tile by the 256 columns, `wgmma.m64n256k8` with both
//! operands read from shared memory, four per stage, and keeps the
//! products of one stage running while it waits for the next.
//!
//! Each stage has two barriers: *full*, which completes when the copy
//! engine has written the stage's bytes (the copying thread arrives on it
//! and announces the bytes), and *empty*, which completes when every
//! thread of the two multiplying warpgroups has arrived after the
//! products that read the stage are done. The copying thread waits for
//! *empty* before it overwrites a stage, the multiplying threads for
//! *full* before they read one. Phases alternate in parity; a barrier's
//! phase before its first counts as complete, so the first pass over the
//! ring waits for nothing.
//!
//! The grid has at most one block per multiprocessor; block `b` takes
//! work units `b`, `b + gridDim.x`, …, each a tile and a slice of `k`,
//! the tiles in bands of [`BAND`] tile rows ([`super::tile_of`]), so the
//! tiles running at once share the rows of `A` and columns of `B` they
//! read. While the multiplying warpgroups store a tile, the copies of the
//! next one already run. Products with fewer tiles than the GPU has SMs
//! split `k` into slices ([`tma_slices`]): each slice's partial tile goes
//! to the workspace, and the block that takes its tile's last ticket adds
//! them in slice order (the same bits every run) and stores the tile.
//!
//! The tensor cores read an `f32` operand as TF32 by ignoring its low 13
//! bits: the operands are truncated, not rounded to nearest.

#[cfg(target_arch = "nvptx64")]
use crate::kernel::TensorMap;

/// Rows of `C` per tile: two warpgroups of 64.
#[doc(hidden)]
pub const TILE_M: usize = 128;
/// Columns of `C` per tile: one `wgmma.m64n256k8`.
#[doc(hidden)]
pub const TILE_N: usize = 256;
/// `k` per stage: one 128-byte row of TF32, the swizzle's row.
#[doc(hidden)]
pub const BK: usize = 32;
/// Stages of the ring.
#[doc(hidden)]
pub const STAGES: usize = 4;
/// Threads of a block: a copying warpgroup and two multiplying ones.
#[doc(hidden)]
pub const THREADS: usize = 384;
/// Threads that arrive on a stage's *empty* barrier.
#[doc(hidden)]
pub const CONSUMER_THREADS: u32 = 256;
/// Tile rows per band of the tile order: 16 of 128 rows against a
/// wave of 132 tiles 256 columns wide, about square.
#[doc(hidden)]
pub const BAND: usize = 16;
/// The fewest stages a slice of a split product takes.
#[doc(hidden)]
pub const MIN_SLICE_STAGES: usize = 4;
/// Elements of a tile: a slice's partial in the workspace.
#[doc(hidden)]
pub const TILE_ELEMENTS: usize = TILE_M * TILE_N;

/// `(slices, stages per slice)` of a product of `tiles` tiles and
/// `k_tiles` stages of `k` on `sms` multiprocessors: one slice where the
/// tiles fill the SMs (or outnumber the workspace's tickets), else as
/// many as fill them, each at least [`MIN_SLICE_STAGES`] deep and none
/// empty.
#[doc(hidden)]
pub const fn tma_slices(tiles: usize, k_tiles: usize, sms: usize) -> (usize, usize) {
    if tiles == 0 || tiles >= sms || tiles > super::SPLIT_TICKETS {
        return (1, k_tiles);
    }
    let wanted = sms / tiles;
    let deep = k_tiles / MIN_SLICE_STAGES;
    let slices = if wanted < deep { wanted } else { deep };
    if slices <= 1 {
        return (1, k_tiles);
    }
    let per = k_tiles.div_ceil(slices);
    (k_tiles.div_ceil(per), per)
}
/// Registers per thread the copying warpgroup keeps.
#[doc(hidden)]
pub const PRODUCER_REGS: u32 = 40;
/// Registers per thread the multiplying warpgroups take: the launch's 168
/// (65 536 / 384, to 8) and the 128 the copying one gave back, shared.
#[doc(hidden)]
pub const CONSUMER_REGS: u32 = 232;
/// Bytes of a stage's tile of `A`.
#[doc(hidden)]
pub const A_BYTES: usize = TILE_M * BK * 4;
/// Bytes of a stage's tile of `B`.
#[doc(hidden)]
pub const B_BYTES: usize = TILE_N * BK * 4;
/// Bytes of a stage.
#[doc(hidden)]
pub const STAGE_BYTES: usize = A_BYTES + B_BYTES;
/// Bytes of a tensor map, and of each of a block's two slots for them.
#[doc(hidden)]
pub const MAP_BYTES: usize = 128;

/// Shared memory of a block: 1024 bytes to align the ring (the 128-byte
/// swizzle repeats every 1024), the ring, each stage's two barriers, then
/// the split's verdict word.
#[doc(hidden)]
pub const fn shared_bytes() -> u32 {
    (1024 + STAGES * STAGE_BYTES + 2 * STAGES * 8 + 8) as u32
}

const _: () = assert!(
    PRODUCER_REGS as usize * 128 + CONSUMER_REGS as usize * 256 <= 65_536
        && CONSUMER_THREADS as usize == THREADS - 128
        && BK * 4 == 128
        && A_BYTES.is_multiple_of(1024)
        && B_BYTES.is_multiple_of(1024)
        && TILE_N <= 256
        && TILE_M <= 256
);

/// The step's operands: the product's shape and scalars, `C`, and the
/// tensor maps of `op(A)` (`m` rows of `k`) and `op(B)` (`n` rows of
/// `k`), with two slots per block of global memory for them.
#[cfg(target_arch = "nvptx64")]
#[cfg_attr(not(target_feature = "sm_90a"), allow(dead_code))]
#[derive(Clone, Copy)]
pub(crate) struct MapOperands {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub alpha: f32,
    pub beta: f32,
    pub c: *mut f32,
    pub ldc: usize,
    pub slices: usize,
    pub slice_stages: usize,
    pub work: *mut f32,
    pub maps: *mut u64,
    pub map_a: TensorMap,
    pub map_b: TensorMap,
}

/// Contract: `m`, `n`, `k` at least 1 and below 2^31 − 256; `map_a` the
/// 2-dimensional tensor map of `op(A)` (`k` innermost, `m` rows) and
/// `map_b` of `op(B)ᵀ` (`k` innermost, `n` rows), `f32`, boxes of
/// [`BK`] × [`TILE_M`] and [`BK`] × [`TILE_N`], the 128-byte swizzle,
/// zeros outside, over memory nothing writes during the kernel; `C`, `m ×
/// n` with pitch `ldc`, writable, overlapping neither; `(slices,
/// slice_stages)` [`tma_slices`] of the tiles, stages and any number of
/// SMs, and for `slices > 1` [`super::split_words`]`(tiles, slices,
/// TILE_ELEMENTS)` words at `work` that nothing else uses during the
/// kernel, the tickets (its first words) zero at the start; `maps` 2 ·
/// [`MAP_BYTES`] of global memory per block, 64-byte aligned, that
/// nothing else uses during the kernel; blocks of [`THREADS`] threads,
/// [`shared_bytes`] of shared memory, one block per multiprocessor at
/// most (launch bounds); any 1D grid; PTX for sm_90a (other targets trap:
/// the host refuses them first).
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub(crate) unsafe fn kernel(o: MapOperands) {
    #[cfg(not(target_feature = "sm_90a"))]
    {
        let _ = o;
        crate::prim::trap()
    }
    #[cfg(target_feature = "sm_90a")]
    device::body(&o)
}

#[cfg(all(target_arch = "nvptx64", target_feature = "sm_90a"))]
pub(super) mod device {
    use super::*;
    use crate::descriptor;
    use crate::prim::wgmma::{self, WGMMA_N128_REGS};
    use crate::prim::*;

    /// `C[i][j] = α · acc + β · C[i][j]` inside `C`, not reading `C` for
    /// `β = 0`.
    #[inline(always)]
    unsafe fn store(o: &MapOperands, i: usize, j: usize, acc: f32) {
        if i < o.m && j < o.n {
            let c = o.c.add(i * o.ldc + j);
            *c = if o.beta == 0.0 {
                o.alpha * acc
            } else {
                fma_f32(o.alpha, acc, o.beta * *c)
            };
        }
    }

    /// [`store`] of `C[i][j]` and `C[i][j + 1]` (`j` even), one 8-byte
    /// store where `pairs` (`C` and its pitch on 8 bytes) and both lie
    /// inside `C`.
    #[inline(always)]
    unsafe fn store_pair(o: &MapOperands, pairs: bool, i: usize, j: usize, acc: [f32; 2]) {
        if pairs && i < o.m && j + 1 < o.n {
            let c = o.c.add(i * o.ldc + j);
            let old = if o.beta == 0.0 { [0.0; 2] } else { load2(c) };
            let value = |e: usize| {
                if o.beta == 0.0 {
                    o.alpha * acc[e]
                } else {
                    fma_f32(o.alpha, acc[e], o.beta * old[e])
                }
            };
            store2(c, [value(0), value(1)]);
        } else {
            store(o, i, j, acc[0]);
            store(o, i, j + 1, acc[1]);
        }
    }

    /// Stores half the accumulator, whose register `4i + e` holds row
    /// `row + 8(e / 2)`, column `col + 8i + e % 2` (`row`, `col` this
    /// thread's first; `col` even).
    #[inline(always)]
    pub(in crate::gemm) unsafe fn store_half(
        o: &MapOperands,
        acc: &[f32; WGMMA_N128_REGS],
        row: usize,
        col: usize,
    ) {
        let pairs = o.c.addr().is_multiple_of(8) && o.ldc.is_multiple_of(2);
        if pairs && row + 8 < o.m && col + 8 * 15 + 1 < o.n {
            // Inside `C` (both rows, every column) and on 8 bytes: one
            // straight run of 8-byte stores, no test per element. The
            // per-element path below, run by every tile, took 12 600
            // cycles a tile on an H100 (docs/notes/gemm.md).
            let top = o.c.add(row * o.ldc + col);
            let bottom = top.add(8 * o.ldc);
            if o.beta == 0.0 {
                unroll!(i in [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15] => {
                    store2(top.add(8 * i), [o.alpha * acc[4 * i], o.alpha * acc[4 * i + 1]]);
                    store2(bottom.add(8 * i), [o.alpha * acc[4 * i + 2], o.alpha * acc[4 * i + 3]]);
                });
            } else {
                let blend = |p: *mut f32, a: f32, b: f32| {
                    let old = load2(p);
                    store2(
                        p,
                        [
                            fma_f32(o.alpha, a, o.beta * old[0]),
                            fma_f32(o.alpha, b, o.beta * old[1]),
                        ],
                    );
                };
                unroll!(i in [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15] => {
                    blend(top.add(8 * i), acc[4 * i], acc[4 * i + 1]);
                    blend(bottom.add(8 * i), acc[4 * i + 2], acc[4 * i + 3]);
                });
            }
            return;
        }
        unroll!(i in [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15] => {
            let c = col + 8 * i;
            store_pair(o, pairs, row, c, [acc[4 * i], acc[4 * i + 1]]);
            store_pair(o, pairs, row + 8, c, [acc[4 * i + 2], acc[4 * i + 3]]);
        });
    }

    /// `acc` = the sum over slices `0..slices`, in order, of the 16 quads
    /// at `at(s)`, 256 quads apart (this thread's half of a partial).
    #[inline(always)]
    unsafe fn sum_half(
        acc: &mut [f32; WGMMA_N128_REGS],
        slices: usize,
        at: impl Fn(usize) -> *mut Words4,
    ) {
        const THREADS: usize = CONSUMER_THREADS as usize;
        for s in 0..slices {
            let part = at(s);
            unroll!(q in [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15] => {
                let w = load_cg_v4(part.add(q * THREADS));
                unroll!(e in [0 1 2 3] => {
                    let v = f32::from_bits(w[e]);
                    acc[4 * q + e] = if s == 0 { v } else { acc[4 * q + e] + v };
                });
            });
        }
    }

    /// Where the slices of a split product meet, as the pipelined step's
    /// `join` for a block: each multiplying thread (`ct`, 0 to 255) leaves
    /// its partial (`lo`, `hi`) in the workspace, and once all 256 have
    /// (named barrier 1), thread 0 takes the tile's ticket; the threads of
    /// the block that takes the last add the partials in slice order into
    /// `lo`, `hi` and return `true`, to store the tile; the others return
    /// `false`. The verdict reaches the 256 through the shared word at
    /// `verdict` (the next join's first barrier keeps its next write after
    /// every read of this one). `split` is `(tile, slice)`.
    #[inline(always)]
    unsafe fn join(
        o: &MapOperands,
        lo: &mut [f32; WGMMA_N128_REGS],
        hi: &mut [f32; WGMMA_N128_REGS],
        (tile, slice): (usize, usize),
        ct: usize,
        verdict: *mut u32,
    ) -> bool {
        const THREADS: usize = CONSUMER_THREADS as usize;
        let ticket = o.work.cast::<u32>().add(tile);
        // Quad `q` of thread `ct` at `[q · 256 + ct]`: a warp's 16-byte
        // accesses cover 512 consecutive bytes.
        let partial = |s: usize| {
            o.work
                .add(super::super::SPLIT_TICKETS + (tile * o.slices + s) * TILE_ELEMENTS)
                .cast::<Words4>()
                .add(ct)
        };
        let mine = partial(slice);
        unroll!(q in [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15] => {
            let w = |x: &[f32; WGMMA_N128_REGS]| core::array::from_fn(|e| x[4 * q + e].to_bits());
            store_v4(mine.add(q * THREADS), w(lo));
            store_v4(mine.add((16 + q) * THREADS), w(hi));
        });
        sync_named(1, THREADS as u32);
        if ct == 0 {
            // SAFETY: the workspace's ticket of this tile, touched only
            // here (the contract); the acquire-release add publishes the
            // 256 threads' partials (ordered before it by the barrier) and
            // acquires the other slices'.
            let last = atomic::ticket_u32(ticket, 1) == o.slices as u32 - 1;
            if last {
                // Every slice has taken its ticket: the next launch finds 0.
                *ticket = 0;
            }
            *verdict = last as u32;
        }
        sync_named(1, THREADS as u32);
        if *verdict == 0 {
            return false;
        }
        // Half by half, in slice order.
        // The closure, not `partial` itself: LLVM orders the join's code
        // differently for the two, and this is the order measured and
        // sanitised on the GPU.
        #[allow(clippy::redundant_closure)]
        sum_half(lo, o.slices, |s| partial(s));
        sum_half(hi, o.slices, |s| partial(s).add(16 * THREADS));
        true
    }

    #[inline(always)]
    pub(super) unsafe fn body(o: &MapOperands) {
        let t = thread_idx_x() as usize;
        let group = t / 128;
        // The ring on 1024 bytes, then the barriers: *full* of stage `s`
        // at `bars + 8s`, *empty* at `bars + 8(STAGES + s)`.
        let window = dynamic_shared::<u8>();
        let ring = (shared_address(window) + 1023) & !1023;
        let bars = ring + (STAGES * STAGE_BYTES) as u32;
        let full = |s: usize| bars + 8 * s as u32;
        let empty = |s: usize| bars + 8 * (STAGES + s) as u32;
        // The split's verdict word, after the barriers.
        let verdict = window
            .add((ring - shared_address(window)) as usize + STAGES * STAGE_BYTES + 2 * STAGES * 8)
            .cast::<u32>();
        let (tiles_m, tiles_n) = (o.m.div_ceil(TILE_M), o.n.div_ceil(TILE_N));
        let k_tiles = o.k.div_ceil(BK);
        // Work unit `u`: slice `u % slices` of tile `u / slices`, the
        // slices of a tile consecutive (they run at once).
        let units = tiles_m * tiles_n * o.slices;
        let unit_of = |u: usize| {
            let (tile, slice) = (u / o.slices, u % o.slices);
            let first = slice * o.slice_stages;
            let end = if first + o.slice_stages < k_tiles {
                first + o.slice_stages
            } else {
                k_tiles
            };
            (
                super::super::tile_of(tile, tiles_m, tiles_n, BAND),
                (tile, slice),
                first..end,
            )
        };
        let (first, step) = (block_idx_x() as usize, grid_dim_x() as usize);
        if t == 0 {
            for s in 0..STAGES {
                // SAFETY: 8-byte aligned barriers in this block's shared
                // memory, nothing else there; the block barrier below
                // comes before any other use.
                bulk::init_barrier(full(s), 1);
                bulk::init_barrier(empty(s), CONSUMER_THREADS);
            }
        }
        sync_threads();
        if group == 0 {
            // SAFETY: the copying thread's loop below needs few registers
            // (`ptxas -v` of the entry shows no spills).
            wgmma::registers_down::<PRODUCER_REGS>();
            if t != 0 {
                return;
            }
            // This block's two slots: the maps written, then acquired for
            // the copy engine.
            let slot = o.maps.add(2 * MAP_BYTES / 8 * first);
            for w in 0..MAP_BYTES / 8 {
                *slot.add(w) = o.map_a.words[w];
                *slot.add(MAP_BYTES / 8 + w) = o.map_b.words[w];
            }
            let (map_a, map_b) = (slot.addr() as u64, slot.addr() as u64 + MAP_BYTES as u64);
            bulk::tensor_map_acquire(map_a);
            bulk::tensor_map_acquire(map_b);
            let (mut s, mut phase) = (0usize, 0u32);
            let mut unit = first;
            while unit < units {
                let ((tm, tn), _, stages) = unit_of(unit);
                for kt in stages {
                    // The stage is free once every multiplying thread is
                    // done with what it held (at once in the first pass).
                    bulk::wait_parity(empty(s), phase ^ 1);
                    let at = ring + (s * STAGE_BYTES) as u32;
                    // SAFETY: the maps are acquired; the stage, 1024-byte
                    // aligned, is free (waited above) and read by nothing
                    // until its *full* phase completes, which expects
                    // exactly these bytes (whole boxes, zeros outside);
                    // the multiplying threads wait for every phase they
                    // read, so the block outlives the copies.
                    bulk::expect_bytes(full(s), STAGE_BYTES as u32);
                    let k0 = (kt * BK) as i32;
                    bulk::tensor_copy_2d_to_shared(at, map_a, [k0, (tm * TILE_M) as i32], full(s));
                    bulk::tensor_copy_2d_to_shared(
                        at + A_BYTES as u32,
                        map_b,
                        [k0, (tn * TILE_N) as i32],
                        full(s),
                    );
                    s += 1;
                    if s == STAGES {
                        s = 0;
                        phase ^= 1;
                    }
                }
                unit += step;
            }
            return;
        }
        wgmma::registers_up::<CONSUMER_REGS>();
        let wg = group - 1;
        let (warp, lane) = ((t % 128) / 32, t % 32);
        let (g, q) = (lane / 4, lane % 4);
        // The accumulator's registers 0 to 63 and 64 to 127 (columns 0 to
        // 127 and 128 to 255 of the warpgroup's rows).
        let mut lo = [0.0f32; WGMMA_N128_REGS];
        let mut hi = [0.0f32; WGMMA_N128_REGS];
        let (mut s, mut phase) = (0usize, 0u32);
        let mut unit = first;
        while unit < units {
            let ((tm, tn), split, stages) = unit_of(unit);
            let start = stages.start;
            let mut held = 0;
            for kt in stages {
                bulk::wait_parity(full(s), phase);
                let at = ring + (s * STAGE_BYTES) as u32;
                let a = descriptor::swizzled_128(at + (wg * A_BYTES / 2) as u32);
                let b = descriptor::swizzled_128(at + A_BYTES as u32);
                // Orders the epilogue's reads of the accumulator (the tile
                // before) before the products that overwrite it.
                wgmma::fence();
                for kk in 0..BK / 8 {
                    // `k` advances 8 TF32 = 32 bytes (2 in the
                    // descriptor's address field) along the rows.
                    // SAFETY: the whole warpgroup, after the fence; the
                    // stage's tiles, written by the copy engine (its
                    // phase waited for), stay until this thread arrives
                    // on *empty* after a wait that covers these products.
                    wgmma::mma_tf32_m64n256k8_ss(
                        &mut lo,
                        &mut hi,
                        a + 2 * kk as u64,
                        b + 2 * kk as u64,
                        kt > start || kk > 0,
                    );
                }
                wgmma::commit();
                if kt > start {
                    // The products of the stage before are done: free it.
                    wgmma::wait_wide::<1>(&mut lo, &mut hi);
                    bulk::arrive(empty(held));
                }
                held = s;
                s += 1;
                if s == STAGES {
                    s = 0;
                    phase ^= 1;
                }
            }
            wgmma::wait_wide::<0>(&mut lo, &mut hi);
            bulk::arrive(empty(held));
            if o.slices > 1 && !join(o, &mut lo, &mut hi, split, t - 128, verdict) {
                unit += step;
                continue;
            }
            let row = tm * TILE_M + wg * 64 + warp * 16 + g;
            let col = tn * TILE_N + 2 * q;
            store_half(o, &lo, row, col);
            store_half(o, &hi, row, col + 128);
            unit += step;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_fill_the_sms_none_empty() {
        for sms in [1, 16, 132, 144] {
            for tiles in [1, 2, 8, 32, 131, 132, 500] {
                for k_tiles in [1, 3, 4, 7, 8, 9, 32, 33, 1000] {
                    let (slices, per) = tma_slices(tiles, k_tiles, sms);
                    assert!(slices >= 1 && per >= 1);
                    // Every slice non-empty, together every stage.
                    assert!((slices - 1) * per < k_tiles && slices * per >= k_tiles);
                    if slices > 1 {
                        assert!(tiles * slices <= sms, "{tiles} × {slices} > {sms}");
                        assert!(per >= MIN_SLICE_STAGES);
                    } else {
                        assert_eq!(per, k_tiles);
                    }
                    if tiles >= sms {
                        assert_eq!(slices, 1);
                    }
                }
            }
        }
        // 1024³ on 132 SMs: 32 tiles of 32 stages, 4 slices of 8.
        assert_eq!(tma_slices(32, 32, 132), (4, 8));
        assert_eq!(tma_slices(512, 128, 132), (1, 128));
    }
}
