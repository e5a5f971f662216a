//! The Hopper-native TF32 step (sm_90a): tensor copies (TMA) into
//! 128-byte-swizzled shared memory, a ring of stages handed over on
//! transaction barriers, one warpgroup copying and two multiplying, each
//! block walking tiles until none is left.
//!
//! A block has three warpgroups. The first gives back most of its
//! registers (`PRODUCER_REGS`) and one of its threads issues, stage
//! after stage, the tensor copies of a 128 × 32 tile of `A` and a
//! 256 × 32 tile of `B` (both `k`-major, as TF32 `wgmma` reads them) into
//! the ring: no thread touches an operand on its way to the tensor cores.
//! The other two take those registers (`CONSUMER_REGS`); each multiplies
//! its 64 rows of the tile by the 256 columns, `wgmma.m64n256k8` with both
//! operands read from shared memory, four per stage, and keeps the
//! products of one stage running while it waits for the next.
//!
//! The narrow kernels (`kernel::<NARROW_N, _>`, the `_narrow` entries)
//! are the same over tiles [`NARROW_N`] = 64 columns wide
//! (`wgmma.m64n64k8`, 32 accumulator registers, eight stages of 24 KiB):
//! four times the tiles of a product, for the products whose wide tiles
//! would leave SMs idle (up to about 512³, batches of small matrices) or
//! hold mostly padding (a few rows against a wide matrix). The medium
//! kernels (the `_medium` entries) sit between: [`MEDIUM_N`] = 128
//! columns (`wgmma.m64n128k8`, 64 registers, six stages of 32 KiB), half
//! a narrow tile's operand bytes per product, for the sizes about 1024³.
//! What differs between the widths is the accumulator
//! (`device::Accumulator`); the host's plan chooses.
//!
//! The short kernels (`kernel::<SHORT_M, NARROW_N, _>`, the `_short`
//! entries) take tiles of [`SHORT_M`] = 64 rows by 64 columns: one
//! copying and one multiplying warpgroup, six stages of 16 KiB, and two
//! blocks an SM. Where a product's tiles make about one wave or fewer,
//! two blocks an SM hide each other's waits (each SM has two rings and
//! two copying threads), and a batch of matrices 64 rows high fills its
//! tiles instead of padding half of each.
//!
//! Each stage has two barriers: *full*, which completes when the copy
//! engine has written the stage's bytes (the copying thread arrives on it
//! and announces the bytes), and *empty*, which completes when every
//! thread of the two multiplying warpgroups has arrived after the
//! products that read the stage are done. The copying thread waits for
//! *empty* before it overwrites a stage, the multiplying threads for
//! *full* before they read one. Phases alternate in parity; a barrier's
//! phase before its first counts as complete, so the first pass over the
//! ring waits for nothing. Each party keeps its place in the ring (stage
//! and parity) in a `prim::ring::StageRing`, as 3xTF32's step does.
//!
//! The grid has at most one block per multiprocessor (two short ones);
//! block `b` takes work units `b`, `b + gridDim.x`, …, each a tile and a
//! slice of `k`, the tiles in bands of `BAND` tile rows
//! (`super::tile_of`), so the
//! tiles running at once share the rows of `A` and columns of `B` they
//! read. While the multiplying warpgroups store a tile, the copies of the
//! next one already run. Products with fewer tiles than the GPU has
//! block slots split `k` into slices (`tma_slices`): each slice's partial tile goes
//! to the workspace, and the block that takes its tile's last ticket adds
//! them in slice order (the same bits every run) and stores the tile.
//!
//! `B` stored `k × n` (the untransposed "NN" product) is not `k`-major,
//! and TF32 `wgmma` reads only `k`-major operands from shared memory. The
//! *swapped* kernel (`kernel::<_, true>`, entry `gemm_tma_tf32_swapped`)
//! takes it where it lies: it computes `Cᵀ = op(B)ᵀ · op(A)ᵀ`, its tiles
//! 128 columns of `C` by 256 (128, 64) rows. The copy engine writes `B`'s stage as four boxes of 32 columns
//! by 32 of `k` (`X_BOX`); each multiplying thread reads its `wgmma`
//! fragments of them with 8-byte shared loads (`pair_column`,
//! `swizzled_pair`: no bank conflicts), and the tensor cores read `A`'s
//! 256 × 32 tile, `k`-major, from shared memory. A thread's two fragment
//! rows are two adjacent columns of `C`, so the epilogue still stores
//! 8-byte pairs.
//!
//! The tensor cores read an `f32` operand as TF32 by ignoring its low 13
//! bits: the operands are truncated, not rounded to nearest.

#[cfg(target_arch = "nvptx64")]
use crate::kernel::MapParam;

/// Rows of `C` per tile: two warpgroups of 64.
#[doc(hidden)]
pub const TILE_M: usize = 128;
/// Rows of `C` per tile of the short kernels (the `_short` entries): one
/// multiplying warpgroup, two blocks an SM, for products whose 128-row
/// tiles would hold mostly padding (batches of 64-row matrices) or leave
/// SMs waiting.
#[doc(hidden)]
pub const SHORT_M: usize = 64;
/// Columns of `C` per tile of the wide kernels: one `wgmma.m64n256k8`.
#[doc(hidden)]
pub const TILE_N: usize = 256;
/// Columns of `C` per tile of the narrow kernels (the `_narrow` entries):
/// one `wgmma.m64n64k8`, four times the wide kernels' tiles, for products
/// whose wide tiles would leave SMs idle or lie mostly outside `C` (the
/// host's plan chooses).
#[doc(hidden)]
pub const NARROW_N: usize = 64;
/// Columns of `C` per tile of the medium kernels (the `_medium`
/// entries): one `wgmma.m64n128k8`, twice the wide kernels' tiles, each
/// reading half the operand bytes per product of a narrow one.
#[doc(hidden)]
pub const MEDIUM_N: usize = 128;
/// `k` per stage: one 128-byte row of TF32, the swizzle's row.
#[doc(hidden)]
pub const BK: usize = 32;
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
/// Columns of `C` per copy box of the swapped kernel's `B` tile: one
/// 128-byte row of the swizzle; four boxes make a stage's [`TILE_M`].
#[doc(hidden)]
pub const X_BOX: usize = 32;
/// Bytes of one such box: [`X_BOX`] columns by [`BK`] of `k`.
#[doc(hidden)]
pub const X_BOX_BYTES: usize = X_BOX * BK * 4;

/// Stages of the ring of tiles `rows` × `width` ([`TILE_M`] rows by
/// [`TILE_N`], [`MEDIUM_N`] or [`NARROW_N`] columns): four of 48 KiB, six
/// of 32 KiB, or eight of 24 KiB (the narrower tiles' products take less
/// time, so more of them are in flight); [`SHORT_M`] rows: 96 KiB of
/// stages, two blocks an SM.
#[doc(hidden)]
pub const fn stages(rows: usize, width: usize) -> usize {
    match (rows, width) {
        (SHORT_M, _) => 96 * 1024 / stage_bytes(rows, width),
        (_, TILE_N) => 4,
        (_, MEDIUM_N) => 6,
        _ => 8,
    }
}

/// Threads of a block of tiles `rows` high: the copying warpgroup and a
/// multiplying one per 64 rows.
#[doc(hidden)]
pub const fn threads(rows: usize) -> usize {
    128 + consumer_threads(rows) as usize
}

/// Threads that arrive on a stage's *empty* barrier in a block of tiles
/// `rows` high: the multiplying warpgroups.
#[doc(hidden)]
pub const fn consumer_threads(rows: usize) -> u32 {
    (rows / 64 * 128) as u32
}

/// Blocks an SM runs of tiles `rows` high: one of 128 rows, two of 64.
#[doc(hidden)]
pub const fn blocks_per_sm(rows: usize) -> usize {
    TILE_M / rows
}

/// Registers per thread the multiplying warpgroups take in a block of
/// tiles `rows` high: the launch's share (65 536 over the SM's threads,
/// to 8) and the part the copying warpgroup gave back.
#[doc(hidden)]
pub const fn consumer_regs(rows: usize) -> u32 {
    let launch = 65_536 / blocks_per_sm(rows) / threads(rows) / 8 * 8;
    let groups = rows / 64;
    ((launch * (groups + 1) - PRODUCER_REGS as usize) / groups / 8 * 8) as u32
}

/// Elements of a tile `rows` × `width`: a slice's partial in the
/// workspace.
#[doc(hidden)]
pub const fn tile_elements(rows: usize, width: usize) -> usize {
    rows * width
}
/// The first of the two adjacent columns (within its box of [`X_BOX`])
/// that the swapped kernel's fragment rows `g` and `g + 8` of a warp hold
/// (`g = lane / 4`; `half` the warp's half of the box, 0 or 1). The order
/// spreads a warp's 8-byte loads over all 32 banks ([`swizzled_pair`]).
#[doc(hidden)]
pub const fn pair_column(g: usize, half: usize) -> usize {
    (g & 1) * 2 + ((g >> 1) & 1) * 16 + (g >> 2) * 4 + 8 * half
}

/// Byte offset, within a box the copy engine wrote with the 128-byte
/// swizzle (rows of `k`, 128 bytes each, the box on 1024 bytes), of the
/// pair of columns `column`, `column + 1` (`column` even) at row `k`: the
/// row's 16-byte unit `column / 4` exchanged by the XOR with `k % 8`.
#[doc(hidden)]
pub const fn swizzled_pair(column: usize, k: usize) -> usize {
    k * 128 + ((column / 4) ^ (k % 8)) * 16 + (column % 4) * 4
}

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
pub const A_BYTES: usize = a_bytes(TILE_M);
/// Bytes of a stage's tile of `A`, `rows` of `C`.
#[doc(hidden)]
pub const fn a_bytes(rows: usize) -> usize {
    rows * BK * 4
}
/// Bytes of a stage's tile of `B`, `width` columns of `C`.
#[doc(hidden)]
pub const fn b_bytes(width: usize) -> usize {
    width * BK * 4
}
/// Bytes of a stage of tiles `rows` × `width`.
#[doc(hidden)]
pub const fn stage_bytes(rows: usize, width: usize) -> usize {
    a_bytes(rows) + b_bytes(width)
}
/// Shared memory of a block of tiles `rows` × `width`: 1024 bytes to
/// align the ring (the 128-byte swizzle repeats every 1024), the ring,
/// each stage's two barriers, then the split's verdict word.
#[doc(hidden)]
pub const fn shared_bytes(rows: usize, width: usize) -> u32 {
    let stages = stages(rows, width);
    (1024 + stages * stage_bytes(rows, width) + 2 * stages * 8 + 8) as u32
}

const _: () = assert!(
    PRODUCER_REGS as usize * 128 + CONSUMER_REGS as usize * 256 <= 65_536
        && CONSUMER_THREADS as usize == THREADS - 128
        && CONSUMER_THREADS == consumer_threads(TILE_M)
        && THREADS == threads(TILE_M)
        && CONSUMER_REGS == consumer_regs(TILE_M)
        && consumer_regs(SHORT_M) >= 128
        && a_bytes(SHORT_M).is_multiple_of(1024)
        && BK * 4 == 128
        && A_BYTES.is_multiple_of(1024)
        && b_bytes(TILE_N).is_multiple_of(1024)
        && b_bytes(MEDIUM_N).is_multiple_of(1024)
        && b_bytes(NARROW_N).is_multiple_of(1024)
        && shared_bytes(TILE_M, TILE_N) <= 227 * 1024
        && shared_bytes(TILE_M, MEDIUM_N) <= 227 * 1024
        && shared_bytes(TILE_M, NARROW_N) <= 227 * 1024
        // Two short blocks in an SM's 228 KiB, 1 KiB of it each reserved.
        && 2 * (shared_bytes(SHORT_M, NARROW_N) as usize + 1024) <= 228 * 1024
        && TILE_N <= 256
        && TILE_M <= 256
);

/// The step's operands: the product's shape and scalars, `C`, and the
/// tensor maps of `op(A)` (`m` rows of `k`) and `op(B)` (`n` rows of
/// `k`), where the launch put them.
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
    /// Products of a strided batch (1: one product) and the elements
    /// from one product's `C` to the next.
    pub count: usize,
    pub batch_c: usize,
    pub map_a: MapParam,
    pub map_b: MapParam,
}

/// Contract: `M` the tiles' rows, [`TILE_M`] or [`SHORT_M`]; `W` their
/// width, [`TILE_N`], [`MEDIUM_N`] or [`NARROW_N`] (only [`NARROW_N`] for
/// [`SHORT_M`]); `m`, `n`, `k` at least 1 and
/// below 2^31 − 256; for `SWAP = false`, `map_a` the 2-dimensional tensor
/// map of `op(A)` (`k` innermost, `m` rows) and `map_b` of `op(B)ᵀ` (`k`
/// innermost, `n` rows), boxes of [`BK`] × `M` and [`BK`] × `W`;
/// for `SWAP = true`, `map_a` the map of `op(B)` (`n` innermost, `k`
/// rows), boxes of [`X_BOX`] × [`BK`], and `map_b` of `op(A)` (`k`
/// innermost, `m` rows), boxes of [`BK`] × `W`; both `f32`, the 128-byte
/// swizzle, zeros outside, over memory nothing writes during the kernel;
/// `C`, `m × n` with pitch `ldc`, writable, overlapping neither. A batch
/// (`count` above 1) has 3-dimensional maps instead, the product their
/// third coordinate, and product `z`'s `C` at `c + z·batch_c`, no two
/// sharing an element; the tiles of all products fewer than 2^30 (the
/// walk counts its units in 32 bits). `(slices, slice_stages)`
/// [`tma_slices`] of the tiles (`M` × `W`) of all products, the stages and
/// any number of SMs, and for `slices > 1`
/// [`super::split_words`]`(tiles, slices, tile_elements(M, W))` words (the
/// tiles of all products) at `work` that nothing else uses during the
/// kernel, the tickets (its first words) zero at the start; blocks of
/// [`threads`]`(M)`
/// threads, [`shared_bytes`]`(M, W)` of shared memory,
/// [`blocks_per_sm`]`(M)` blocks per multiprocessor at most (launch
/// bounds); any 1D grid; PTX for sm_90a (other targets trap: the host
/// refuses them first).
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub(crate) unsafe fn kernel<const M: usize, const W: usize, const SWAP: bool>(o: MapOperands) {
    #[cfg(not(target_feature = "sm_90a"))]
    {
        let _ = o;
        crate::prim::trap()
    }
    #[cfg(target_feature = "sm_90a")]
    match W {
        TILE_N => device::body::<device::Wide, M, SWAP>(&o),
        MEDIUM_N => device::body::<device::Medium, M, SWAP>(&o),
        _ => device::body::<device::Narrow, M, SWAP>(&o),
    }
}

#[cfg(all(target_arch = "nvptx64", target_feature = "sm_90a"))]
pub(super) mod device {
    use super::*;
    use crate::descriptor;
    use crate::prim::wgmma::{self, WGMMA_N64_REGS, WGMMA_N128_REGS};
    use crate::prim::*;

    /// `C[i][j] = α · acc[r] + β · C[i][j]` (not reading `C` for `β = 0`)
    /// for each register `r` of `acc` whose `(i, j) = at(r)` lies inside
    /// `C`: by predicated stores where `PREDICATED`, else a branch per
    /// element. Branched, every element of an edge tile cost about 50
    /// cycles (12 600 a tile on an H100, docs/notes/gemm.md), and a
    /// product's last tile to finish is often an edge; but the 3xTF32
    /// kernel, its registers all but spoken for by two accumulators, ran
    /// 8192³ in 13 to 17 ms with the predicated stores against 8.7
    /// branched (the straight-line stores raise ptxas's register demand
    /// for the whole kernel).
    #[inline(always)]
    unsafe fn store_tested<const PREDICATED: bool, const R: usize>(
        o: &MapOperands,
        acc: &[f32; R],
        at: impl Fn(usize) -> (usize, usize),
    ) {
        // Where `C[i][j]` is (computed for every element, touched only
        // inside `C`), and whether it is inside.
        let target = |r: usize| {
            let (i, j) = at(r);
            let c = o.c.wrapping_add(i.wrapping_mul(o.ldc).wrapping_add(j));
            // `&` where predicated: no branch for LLVM to make of it.
            let inside = if PREDICATED {
                (i < o.m) & (j < o.n)
            } else {
                i < o.m && j < o.n
            };
            (inside, c)
        };
        // The registers past `R` (a narrow accumulator's) are no code.
        if o.beta == 0.0 {
            unroll!(r in [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63] => {
                if r < R {
                    let (inside, c) = target(r);
                    if PREDICATED {
                        store_if(inside, c, o.alpha * acc[r]);
                    } else if inside {
                        *c = o.alpha * acc[r];
                    }
                }
            });
        } else {
            unroll!(r in [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63] => {
                if r < R {
                    let (inside, c) = target(r);
                    if PREDICATED {
                        store_if(inside, c, fma_f32(o.alpha, acc[r], o.beta * load_if(inside, c)));
                    } else if inside {
                        *c = fma_f32(o.alpha, acc[r], o.beta * *c);
                    }
                }
            });
        }
    }

    /// The straight run of an epilogue whose outputs all lie inside `C` on
    /// 8 bytes: for each `i` below `groups` (at most 16), the two 8-byte
    /// pairs `at(i)` gives (where, and the two accumulator values), `α`
    /// and `β` applied, no test per element. The tested path, once run by
    /// every tile, took 12 600 cycles a tile on an H100
    /// (docs/notes/gemm.md).
    #[inline(always)]
    unsafe fn store_run(
        o: &MapOperands,
        groups: usize,
        at: impl Fn(usize) -> [(*mut f32, [f32; 2]); 2],
    ) {
        if o.beta == 0.0 {
            let put = |p: *mut f32, v: [f32; 2]| store2(p, [o.alpha * v[0], o.alpha * v[1]]);
            unroll!(i in [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15] => {
                if i < groups {
                    let [(p, v), (q, w)] = at(i);
                    put(p, v);
                    put(q, w);
                }
            });
        } else {
            let put = |p: *mut f32, v: [f32; 2]| {
                let old = load2(p);
                store2(
                    p,
                    [
                        fma_f32(o.alpha, v[0], o.beta * old[0]),
                        fma_f32(o.alpha, v[1], o.beta * old[1]),
                    ],
                );
            };
            unroll!(i in [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15] => {
                if i < groups {
                    let [(p, v), (q, w)] = at(i);
                    put(p, v);
                    put(q, w);
                }
            });
        }
    }

    /// Stores an accumulator of `R` registers (64 or 32: 128 or 64
    /// columns), whose register `4i + e` holds row `row + 8(e / 2)`,
    /// column `col + 8i + e % 2` (`row`, `col` this thread's first; `col`
    /// even); edges as [`store_tested`] with `PREDICATED`.
    #[inline(always)]
    pub(in crate::gemm) unsafe fn store_half<const PREDICATED: bool, const R: usize>(
        o: &MapOperands,
        acc: &[f32; R],
        row: usize,
        col: usize,
    ) {
        let groups = R / 4;
        let pairs = o.c.addr().is_multiple_of(8) && o.ldc.is_multiple_of(2);
        if pairs && row + 8 < o.m && col + 8 * (groups - 1) + 1 < o.n {
            // Both rows, every column.
            let top = o.c.add(row * o.ldc + col);
            let bottom = top.add(8 * o.ldc);
            store_run(o, groups, |i| {
                [
                    (top.add(8 * i), [acc[4 * i], acc[4 * i + 1]]),
                    (bottom.add(8 * i), [acc[4 * i + 2], acc[4 * i + 3]]),
                ]
            });
            return;
        }
        store_tested::<PREDICATED, R>(o, acc, |r| {
            (row + 8 * (r % 4 / 2), col + 8 * (r / 4) + r % 2)
        });
    }

    /// Stores the swapped kernel's accumulator of `R` registers, whose
    /// register `4i + e` holds `C[m + 8i + e % 2][n + e / 2]` (`m`, `n`
    /// this thread's first, both even): registers `4i` and `4i + 2` make
    /// one 8-byte pair of `C`'s row, `4i + 1` and `4i + 3` the next row's.
    #[inline(always)]
    unsafe fn store_half_swapped<const R: usize>(
        o: &MapOperands,
        acc: &[f32; R],
        n: usize,
        m: usize,
    ) {
        let groups = R / 4;
        let pairs = o.c.addr().is_multiple_of(8) && o.ldc.is_multiple_of(2);
        if pairs && n + 1 < o.n && m + 8 * (groups - 1) + 1 < o.m {
            let first = o.c.add(m * o.ldc + n);
            store_run(o, groups, |i| {
                let row = first.add(8 * i * o.ldc);
                [
                    (row, [acc[4 * i], acc[4 * i + 2]]),
                    (row.add(o.ldc), [acc[4 * i + 1], acc[4 * i + 3]]),
                ]
            });
            return;
        }
        store_tested::<true, R>(o, acc, |r| (m + 8 * (r / 4) + r % 2, n + r % 4 / 2));
    }

    /// Loads this thread's swapped-kernel `A` fragment of the `kk`-th 8
    /// of `k` (8 rows, 1024 bytes, each) from its box at `x` (shared
    /// address), `at` and `at4` the offsets of its pair of columns at rows
    /// `k = lane % 4` and `k + 4` ([`swizzled_pair`]). Register 0 is row
    /// `g`, `k`; 1 row `g + 8`, `k`; 2 and 3 the same at `k + 4`: rows `g`
    /// and `g + 8` are the pair's two columns.
    #[inline(always)]
    unsafe fn load_fragment(x: u32, at: u32, at4: u32, kk: usize) -> [u32; 4] {
        let top = load_shared_v2(x + at + 1024 * kk as u32);
        let bottom = load_shared_v2(x + at4 + 1024 * kk as u32);
        [top[0], top[1], bottom[0], bottom[1]]
    }

    /// Leaves `acc` (`R` registers) at `part`, quad `q` at `[q · threads]`
    /// (`threads` the multiplying threads whose quads make a partial): a
    /// warp's 16-byte stores cover 512 consecutive bytes.
    #[inline(always)]
    unsafe fn put_part<const R: usize>(acc: &[f32; R], part: *mut Words4, threads: usize) {
        unroll!(q in [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15] => {
            if q < R / 4 {
                let w = core::array::from_fn(|e| acc[4 * q + e].to_bits());
                store_v4(part.add(q * threads), w);
            }
        });
    }

    /// `acc` = the sum over slices `0..slices`, in order, of the `R / 4`
    /// quads at `at(s)`, `threads` quads apart (this thread's share of a
    /// partial, as [`put_part`] left it).
    #[inline(always)]
    unsafe fn sum_half<const R: usize>(
        acc: &mut [f32; R],
        slices: usize,
        threads: usize,
        at: impl Fn(usize) -> *mut Words4,
    ) {
        for s in 0..slices {
            let part = at(s);
            unroll!(q in [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15] => {
                if q < R / 4 {
                    let w = load_cg_v4(part.add(q * threads));
                    unroll!(e in [0 1 2 3] => {
                        let v = f32::from_bits(w[e]);
                        acc[4 * q + e] = if s == 0 { v } else { acc[4 * q + e] + v };
                    });
                }
            });
        }
    }

    /// A multiplying warpgroup's accumulator of its 64 rows of a tile,
    /// and what differs with the tile's width: the products, their wait,
    /// the partials of a split, the stores.
    pub(super) trait Accumulator {
        /// Columns of a tile.
        const WIDTH: usize;
        fn zero() -> Self;
        /// [`wgmma`]'s product with both operands in shared memory.
        ///
        /// # Safety
        /// As `wgmma::mma_tf32_m64n256k8_ss`'s.
        unsafe fn mma_ss(&mut self, a: u64, b: u64, accumulate: bool);
        /// The product with `A`'s fragment `a` in registers.
        ///
        /// # Safety
        /// As `wgmma::mma_tf32_m64n256k8_rs`'s.
        unsafe fn mma_rs(&mut self, a: [u32; 4], b: u64, accumulate: bool);
        /// `wgmma.wait_group PENDING`, the accumulator its operand.
        fn wait<const PENDING: u32>(&mut self);
        /// Leaves the partial at `part` (this thread's first quad; the
        /// partial's quads `threads` apart).
        ///
        /// # Safety
        /// `part` as [`put_part`]'s, for every register array.
        unsafe fn put(&self, part: *mut Words4, threads: usize);
        /// The sum of the slices' partials, in slice order.
        ///
        /// # Safety
        /// As [`sum_half`]'s.
        unsafe fn sum(&mut self, slices: usize, threads: usize, at: impl Fn(usize) -> *mut Words4);
        /// Stores the tile (unswapped): this thread's first row and column.
        ///
        /// # Safety
        /// As [`store_half`]'s.
        unsafe fn store(&self, o: &MapOperands, row: usize, col: usize);
        /// Stores the swapped kernel's tile: this thread's first column
        /// `n` and row `m` of `C`.
        ///
        /// # Safety
        /// As [`store_half_swapped`]'s.
        unsafe fn store_swapped(&self, o: &MapOperands, n: usize, m: usize);
    }

    /// `m64n256`: 128 registers in two arrays (registers 0 to 63 and 64 to
    /// 127, columns 0 to 127 and 128 to 255).
    pub(super) struct Wide {
        lo: [f32; WGMMA_N128_REGS],
        hi: [f32; WGMMA_N128_REGS],
    }

    impl Accumulator for Wide {
        const WIDTH: usize = TILE_N;
        #[inline(always)]
        fn zero() -> Self {
            Wide {
                lo: [0.0; WGMMA_N128_REGS],
                hi: [0.0; WGMMA_N128_REGS],
            }
        }
        #[inline(always)]
        unsafe fn mma_ss(&mut self, a: u64, b: u64, accumulate: bool) {
            wgmma::mma_tf32_m64n256k8_ss(&mut self.lo, &mut self.hi, a, b, accumulate);
        }
        #[inline(always)]
        unsafe fn mma_rs(&mut self, a: [u32; 4], b: u64, accumulate: bool) {
            wgmma::mma_tf32_m64n256k8_rs(&mut self.lo, &mut self.hi, a, b, accumulate);
        }
        #[inline(always)]
        fn wait<const PENDING: u32>(&mut self) {
            wgmma::wait_wide::<PENDING>(&mut self.lo, &mut self.hi);
        }
        #[inline(always)]
        unsafe fn put(&self, part: *mut Words4, threads: usize) {
            put_part(&self.lo, part, threads);
            put_part(&self.hi, part.add(WGMMA_N128_REGS / 4 * threads), threads);
        }
        #[inline(always)]
        unsafe fn sum(&mut self, slices: usize, threads: usize, at: impl Fn(usize) -> *mut Words4) {
            // Half by half, in slice order.
            sum_half(&mut self.lo, slices, threads, &at);
            sum_half(&mut self.hi, slices, threads, |s| {
                at(s).add(WGMMA_N128_REGS / 4 * threads)
            });
        }
        #[inline(always)]
        unsafe fn store(&self, o: &MapOperands, row: usize, col: usize) {
            store_half::<true, WGMMA_N128_REGS>(o, &self.lo, row, col);
            store_half::<true, WGMMA_N128_REGS>(o, &self.hi, row, col + 128);
        }
        #[inline(always)]
        unsafe fn store_swapped(&self, o: &MapOperands, n: usize, m: usize) {
            store_half_swapped(o, &self.lo, n, m);
            store_half_swapped(o, &self.hi, n, m + 128);
        }
    }

    /// The accumulators of one array (`$regs` registers): a struct `$name`
    /// of tiles `$width` wide whose products are `$ss` and `$rs`, waited
    /// on by `$wait`.
    macro_rules! one_array {
        ($(#[$doc:meta])* $name:ident, $width:expr, $regs:ident, $ss:ident, $rs:ident, $wait:ident) => {
            $(#[$doc])*
            pub(super) struct $name {
                d: [f32; $regs],
            }

            impl Accumulator for $name {
                const WIDTH: usize = $width;
                #[inline(always)]
                fn zero() -> Self {
                    $name { d: [0.0; $regs] }
                }
                #[inline(always)]
                unsafe fn mma_ss(&mut self, a: u64, b: u64, accumulate: bool) {
                    wgmma::$ss(&mut self.d, a, b, accumulate);
                }
                #[inline(always)]
                unsafe fn mma_rs(&mut self, a: [u32; 4], b: u64, accumulate: bool) {
                    wgmma::$rs(&mut self.d, a, b, accumulate);
                }
                #[inline(always)]
                fn wait<const PENDING: u32>(&mut self) {
                    wgmma::$wait::<PENDING>(&mut self.d);
                }
                #[inline(always)]
                unsafe fn put(&self, part: *mut Words4, threads: usize) {
                    put_part(&self.d, part, threads);
                }
                #[inline(always)]
                unsafe fn sum(
                    &mut self,
                    slices: usize,
                    threads: usize,
                    at: impl Fn(usize) -> *mut Words4,
                ) {
                    sum_half(&mut self.d, slices, threads, at);
                }
                #[inline(always)]
                unsafe fn store(&self, o: &MapOperands, row: usize, col: usize) {
                    store_half::<true, $regs>(o, &self.d, row, col);
                }
                #[inline(always)]
                unsafe fn store_swapped(&self, o: &MapOperands, n: usize, m: usize) {
                    store_half_swapped(o, &self.d, n, m);
                }
            }
        };
    }

    one_array!(
        /// `m64n128`: 64 registers.
        Medium,
        MEDIUM_N,
        WGMMA_N128_REGS,
        mma_tf32_m64n128k8_ss,
        mma_tf32_m64n128k8,
        wait
    );
    one_array!(
        /// `m64n64`: 32 registers.
        Narrow,
        NARROW_N,
        WGMMA_N64_REGS,
        mma_tf32_m64n64k8_ss,
        mma_tf32_m64n64k8_rs,
        wait_narrow
    );

    /// Where the slices of a split product meet, as the pipelined step's
    /// `join` for a block of tiles `M` high: each multiplying thread
    /// (`ct`, 0 to `2M − 1`) leaves its partial in the workspace, and once
    /// all have (named barrier 1), thread 0 takes the tile's ticket; the
    /// threads of the block that takes the last add the partials in slice
    /// order into `acc` and return `true`, to store the tile; the others
    /// return `false`. The verdict reaches them through the shared word at
    /// `verdict` (the next join's first barrier keeps its next write after
    /// every read of this one). `split` is `(tile, slice)`.
    #[inline(always)]
    unsafe fn join<A: Accumulator, const M: usize>(
        o: &MapOperands,
        acc: &mut A,
        (tile, slice): (usize, usize),
        ct: usize,
        verdict: *mut u32,
    ) -> bool {
        let threads = consumer_threads(M);
        let ticket = o.work.cast::<u32>().add(tile);
        let partial = |s: usize| {
            o.work
                .add(
                    super::super::SPLIT_TICKETS
                        + (tile * o.slices + s) * tile_elements(M, A::WIDTH),
                )
                .cast::<Words4>()
                .add(ct)
        };
        acc.put(partial(slice), threads as usize);
        sync_named(1, threads);
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
        sync_named(1, threads);
        if *verdict == 0 {
            return false;
        }
        // The closure, not `partial` itself: LLVM orders the join's code
        // differently for the two, and this is the order measured and
        // sanitised on the GPU.
        #[allow(clippy::redundant_closure)]
        acc.sum(o.slices, threads as usize, |s| partial(s));
        true
    }

    #[inline(always)]
    pub(super) unsafe fn body<A: Accumulator, const M: usize, const SWAP: bool>(o: &MapOperands) {
        let width = A::WIDTH;
        let stages = stages(M, width);
        let stage_bytes = stage_bytes(M, width);
        let a_bytes = a_bytes(M);
        let t = thread_idx_x() as usize;
        let group = t / 128;
        // The ring on 1024 bytes, then its barriers.
        let window = dynamic_shared::<u8>();
        let ring = (shared_address(window) + 1023) & !1023;
        let mut pipe = ring::StageRing::new(ring + (stages * stage_bytes) as u32, stages);
        // The split's verdict word, after the barriers.
        let verdict = window
            .add((ring - shared_address(window)) as usize + stages * stage_bytes + 2 * stages * 8)
            .cast::<u32>();
        // The tiles' rows and columns: `C`'s, or its transpose's.
        let (rows, cols) = if SWAP { (o.n, o.m) } else { (o.m, o.n) };
        let (tiles_m, tiles_n) = (rows.div_ceil(M), cols.div_ceil(width));
        let k_tiles = o.k.div_ceil(BK);
        // Work unit `u`: slice `u % slices` of tile `u / slices`, the
        // slices of a tile consecutive (they run at once), the tiles of a
        // batch's products one product after the other.
        // In 32 bits (fewer registers than `usize`): the host launches
        // batches of fewer than 2^32 units.
        let tiles = (tiles_m * tiles_n) as u32;
        let units = tiles * o.count as u32 * o.slices as u32;
        let unit_of = |u: u32| {
            let (tile, slice) = (u / o.slices as u32, u % o.slices as u32);
            let (z, within) = (tile / tiles, tile % tiles);
            let (tm, tn) =
                super::super::tile_of(within, tiles_m as u32, tiles_n as u32, BAND as u32);
            let (tile, slice) = (tile as usize, slice as usize);
            let first = slice * o.slice_stages;
            let end = if first + o.slice_stages < k_tiles {
                first + o.slice_stages
            } else {
                k_tiles
            };
            (
                z as usize,
                (tm as usize, tn as usize),
                (tile, slice),
                first..end,
            )
        };
        // The copies of product `z`: 3-dimensional maps for a batch.
        let copy = |dst: u32, map: u64, [x, y]: [i32; 2], z: usize, bar: u32| {
            if o.count > 1 {
                bulk::tensor_copy_3d_to_shared(dst, map, [x, y, z as i32], bar);
            } else {
                bulk::tensor_copy_2d_to_shared(dst, map, [x, y], bar);
            }
        };
        let (first, step) = (block_idx_x(), grid_dim_x());
        if t == 0 {
            // SAFETY: the maps are the launch's parameters.
            bulk::prefetch_tensor_map(o.map_a.address());
            bulk::prefetch_tensor_map(o.map_b.address());
            // SAFETY: 8-byte aligned barriers in this block's shared
            // memory, nothing else there; the block barrier below comes
            // before any other use.
            pipe.init(consumer_threads(M));
        }
        sync_threads();
        if group == 0 {
            // SAFETY: the copying thread's loop below needs few registers
            // (`ptxas -v` of the entry shows no spills).
            wgmma::registers_down::<PRODUCER_REGS>();
            if t != 0 {
                return;
            }
            let (map_a, map_b) = (o.map_a.address(), o.map_b.address());
            let mut unit = first;
            while unit < units {
                let (z, (tm, tn), _, k_range) = unit_of(unit);
                for kt in k_range {
                    // The stage is free once every multiplying thread is
                    // done with what it held (at once in the first pass).
                    pipe.wait_empty();
                    let s = pipe.stage();
                    let full = pipe.full(s);
                    let at = ring + (s * stage_bytes) as u32;
                    // SAFETY: the maps are the launch's parameters; the
                    // stage, 1024-byte aligned, is free (waited above) and
                    // read by nothing until its *full* phase completes,
                    // which expects
                    // exactly these bytes (whole boxes, zeros outside);
                    // the multiplying threads wait for every phase they
                    // read, so the block outlives the copies.
                    bulk::expect_bytes(full, stage_bytes as u32);
                    let k0 = (kt * BK) as i32;
                    if SWAP {
                        // `op(B)`'s `M` columns as boxes of 32.
                        unroll!(j in [0 1 2 3] => {
                            if j < M / X_BOX {
                                copy(
                                    at + (j * X_BOX_BYTES) as u32,
                                    map_a,
                                    [(tm * M + j * X_BOX) as i32, k0],
                                    z,
                                    full,
                                );
                            }
                        });
                    } else {
                        copy(at, map_a, [k0, (tm * M) as i32], z, full);
                    }
                    copy(
                        at + a_bytes as u32,
                        map_b,
                        [k0, (tn * width) as i32],
                        z,
                        full,
                    );
                    pipe.advance();
                }
                unit += step;
            }
            return;
        }
        if M == TILE_M {
            wgmma::registers_up::<{ consumer_regs(TILE_M) }>();
        } else {
            wgmma::registers_up::<{ consumer_regs(SHORT_M) }>();
        }
        let wg = group - 1;
        let (warp, lane) = ((t % 128) / 32, t % 32);
        let (g, q) = (lane / 4, lane % 4);
        let mut acc = A::zero();
        // The swapped kernel's fragments: warp `warp` of the warpgroup
        // reads box `2 wg + warp / 2`, half `warp % 2` of it
        // ([`pair_column`]).
        let column = pair_column(g, warp % 2);
        let x_box = ((2 * wg + warp / 2) * X_BOX_BYTES) as u32;
        let (at, at4) = (
            swizzled_pair(column, q) as u32,
            swizzled_pair(column, q + 4) as u32,
        );
        let mut f = [[0u32; 4]; BK / 8];
        let mut unit = first;
        while unit < units {
            let (_, (tm, tn), split, k_range) = unit_of(unit);
            let start = k_range.start;
            let mut held = 0;
            if SWAP {
                // Each 8 of `k` its own group of products, reading its own
                // fragment `f[kk]`: before the next stage loads `f[kk]`
                // again, the wait for at most 3 groups running retires the
                // group that read it (held past that wait, so the new
                // load takes other registers only where it must), and the
                // fourth such wait retires the whole stage before, which
                // is then freed. Three groups stay queued throughout; the
                // fragments cost 16 registers, not the 32 of two sets.
                for kt in k_range {
                    pipe.wait_full();
                    let at_stage = ring + (pipe.stage() * stage_bytes) as u32;
                    let b = descriptor::swizzled_128(at_stage + a_bytes as u32);
                    unroll!(kk in [0 1 2 3] => {
                        if kt > start {
                            acc.wait::<3>();
                            wgmma::hold(&f[kk]);
                            if kk == 3 {
                                // The stage before is done: free it.
                                bulk::arrive(pipe.empty(held));
                            }
                        }
                        f[kk] = load_fragment(at_stage + x_box, at, at4, kk);
                        // Orders the fragment's loads (and the epilogue's
                        // reads of the accumulator) before the product.
                        wgmma::fence();
                        // SAFETY: as for the unswapped products below;
                        // `f[kk]` is not written again until a wait
                        // retires this product.
                        acc.mma_rs(f[kk], b + 2 * kk as u64, kt > start || kk > 0);
                        wgmma::commit();
                    });
                    held = pipe.stage();
                    pipe.advance();
                }
            } else {
                for kt in k_range {
                    pipe.wait_full();
                    let at = ring + (pipe.stage() * stage_bytes) as u32;
                    let a = descriptor::swizzled_128(at + (wg * super::a_bytes(64)) as u32);
                    let b = descriptor::swizzled_128(at + a_bytes as u32);
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
                        acc.mma_ss(a + 2 * kk as u64, b + 2 * kk as u64, kt > start || kk > 0);
                    }
                    wgmma::commit();
                    if kt > start {
                        // The products of the stage before are done: free it.
                        acc.wait::<1>();
                        bulk::arrive(pipe.empty(held));
                    }
                    held = pipe.stage();
                    pipe.advance();
                }
            }
            acc.wait::<0>();
            bulk::arrive(pipe.empty(held));
            if o.slices > 1 && !join::<A, M>(o, &mut acc, split, t - 128, verdict) {
                unit += step;
                continue;
            }
            // Product `z`'s `C` (the contract puts it inside `C`'s memory),
            // `z` worked out again here rather than held over the tile's
            // products (held, the swapped entry spilled 12 bytes).
            let z = (unit / o.slices as u32 / tiles) as usize;
            let o = &MapOperands {
                c: o.c.wrapping_add(z * o.batch_c),
                ..*o
            };
            if SWAP {
                let n = tm * M + (2 * wg + warp / 2) * X_BOX + column;
                let m = tn * width + 2 * q;
                acc.store_swapped(o, n, m);
            } else {
                let row = tm * M + wg * 64 + warp * 16 + g;
                let col = tn * width + 2 * q;
                acc.store(o, row, col);
            }
            unit += step;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The swapped kernel's pairs of columns: each warp half's 8 pairs and
    /// the other half's cover a box's 32 columns once.
    #[test]
    fn fragment_pairs_cover_a_box_once() {
        let mut seen = [0; X_BOX];
        for half in 0..2 {
            for g in 0..8 {
                let c = pair_column(g, half);
                assert!(c.is_multiple_of(2) && c + 1 < X_BOX);
                seen[c] += 1;
                seen[c + 1] += 1;
            }
        }
        assert_eq!(seen, [1; X_BOX]);
    }

    /// A warp's 8-byte fragment loads (lanes `4g + q`, rows `q` or `q + 4`
    /// of each 8 of `k`) take two passes, each half-warp's 16 loads on 16
    /// distinct pairs of banks: no conflicts.
    #[test]
    fn fragment_loads_miss_no_bank() {
        for half in 0..2 {
            for k_row in [0, 4] {
                for kk in 0..BK / 8 {
                    for lanes in [0..16, 16..32] {
                        let mut banks = [false; 16];
                        for lane in lanes {
                            let (g, q) = (lane / 4, lane % 4);
                            let at = swizzled_pair(pair_column(g, half), 8 * kk + q + k_row);
                            assert_eq!(at % 8, 0);
                            let pair = at / 8 % 16;
                            assert!(!banks[pair], "half {half}, row {k_row}, lane {lane}");
                            banks[pair] = true;
                        }
                    }
                }
            }
        }
    }

    /// The swizzle keeps each row's 128 bytes in its row and moves every
    /// element to its own place.
    #[test]
    fn swizzled_pairs_are_a_permutation_of_each_row() {
        for k in 0..BK {
            let mut seen = [false; X_BOX / 2];
            for c in (0..X_BOX).step_by(2) {
                let at = swizzled_pair(c, k);
                assert_eq!(at / 128, k);
                assert!(!seen[at % 128 / 8]);
                seen[at % 128 / 8] = true;
            }
        }
    }

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
