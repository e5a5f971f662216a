//! SGEMM: `C = α · op(A) · op(B) + β · C` for `f32`, the ladder of the
//! classic tiled SGEMM from one thread per output to a multi-stage
//! `cp.async` pipeline, and tensor-core steps (TF32 and 3xTF32) beyond it.
//! One file per step.
//!
//! Every kernel takes the operands as strided views, so one entry serves
//! every transpose combination: element `(i, p)` of `op(A)` (`m × k`) is
//! `a[i · a_row + p · a_col]`, element `(p, j)` of `op(B)` (`k × n`) is
//! `b[p · b_row + j · b_col]`, and `C` (`m × n`) is row-major with pitch
//! `ldc`. For a row-major `A` with pitch `lda`, `op(A) = A` has
//! `(a_row, a_col) = (lda, 1)` and `op(A) = Aᵀ` has `(1, lda)`.
//!
//! A block computes one `tile_m × tile_n` tile of `C`; the grid is 1D, one
//! block per tile (so any `m` and `n` below 2^32 fit), and a block finds its
//! tile from its index (`tile_of`); step 8 may split `k` too, one block
//! per tile and slice of `k` (`split_slices`). The blocks past the edges of `C`
//! load zeros for the rows and columns outside and store only inside;
//! step 8's instead step back to end on the edge where `C` holds a whole
//! tile ([`pipelined`]), so that every panel they copy is whole.
//!
//! BLAS rules, shared by every step: with `β = 0` the kernels never read
//! `C` (NaN there does not leak); `k = 0` and `α = 0` are not launched as
//! products at all: the host runs `gemm_scale` (`C = β · C`), which reads
//! neither `A` nor `B`.

/// `$body::<$consts.., A_K, B_K>($args..)` for the staging layouts of the
/// panels `a` and `b` (whether each is `k`-major): one body per pair of
/// layouts, chosen once per launch (the tensor-core steps; the pipelined
/// step has an entry per pair, [`pipelined_entry`]).
#[cfg(all(target_arch = "nvptx64", target_feature = "sm_80"))]
macro_rules! by_layouts {
    ($($body:ident)::+; [$($c:tt),*]; $a:expr, $b:expr; $($arg:expr),*) => {
        match ($a.k_major, $b.k_major) {
            (false, true) => $($body)::+::<$($c,)* false, true>($($arg),*),
            (true, true) => $($body)::+::<$($c,)* true, true>($($arg),*),
            (false, false) => $($body)::+::<$($c,)* false, false>($($arg),*),
            (true, false) => $($body)::+::<$($c,)* true, false>($($arg),*),
        }
    };
}

use crate::kernel::TensorMap;

pub mod coalesced;
pub mod gemv;
pub mod naive;
pub mod pipelined;
pub mod register_1d;
pub mod register_2d;
pub mod shared_tiles;
pub mod small;
pub mod staging;
pub mod tensor;
pub mod tma;
pub mod tma_x3;
pub mod vectorized;
pub mod warp_tiled;
pub mod wgmma;

/// The arithmetic a step does its multiply-adds in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Precision {
    /// `f32` fused multiply-adds on the CUDA cores, as cuBLAS's `Sgemm`
    /// without TF32: each product exact, each sum rounded to `f32`.
    Fp32,
    /// Tensor cores on TF32 operands (`mma.sync ... .tf32`, sm_80 and newer):
    /// each operand reduced to 10 mantissa bits (rounded to nearest, or
    /// truncated by [`GemmVariant::Tf32Tma`]) before an exact product with
    /// an `f32` sum, so errors about `2^-11` (`2^-10` truncated) relative
    /// to `Σ |a| · |b|` instead of `f32`'s `2^-24`.
    Tf32,
    /// Tensor cores with each operand split into a TF32 "big" part and a
    /// TF32 "small" part (`x = big + small` to about 21 bits); the product
    /// sums `small·big + big·small + big·big` (the `small·small` term is
    /// below `f32`'s resolution): three tensor-core products per one, with
    /// errors at the level of [`Precision::Fp32`].
    Tf32x3,
}

/// How a step is launched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GemmShape {
    /// The kernel's base name (suffix `_f32`; the tiled steps with several
    /// tile configurations add the configuration, see [`GemmVariant::plan`]).
    pub kernel: &'static str,
    /// The tile configuration the shape describes ([`TileConfig`]).
    pub tiles: TileConfig,
    /// The arithmetic.
    pub precision: Precision,
    /// The PTX target the kernel needs: its entry traps in the other
    /// modules, and the host refuses it there.
    pub needs: Needs,
}

/// Where the tensor-core and `wgmma` steps run: [`crate::ptx::Needs`],
/// shared with every family that has such steps.
pub use crate::ptx::Needs;

/// A block's tile of `C`, its threads and its shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileConfig {
    /// Rows of `C` per block.
    pub tile_m: u32,
    /// Columns of `C` per block.
    pub tile_n: u32,
    /// Threads per block (1D).
    pub threads: u32,
    /// Dynamic shared memory in bytes.
    pub shared_bytes: u32,
}

/// The tile configurations of [`GemmVariant::Pipelined`], `(rows,
/// columns)` of `C` per block, indexed by the value of the entries'
/// constant: [`PIPELINED_BIG`], [`PIPELINED_SPLIT`] and
/// [`PIPELINED_NARROW`]. One warp per 32 × 64 of the tile
/// ([`warp_tiles`]).
#[doc(hidden)]
pub const PIPELINED_CONFIGS: [(usize, usize); 3] = [(128, 128), (64, 128), (64, 64)];
/// 128 × 128 tiles of 8 warps: the products whose tiles fill the SMs.
#[doc(hidden)]
pub const PIPELINED_BIG: u32 = 0;
/// 64 × 128 tiles of 4 warps: products with too few 128 × 128 tiles to
/// give every SM one (`k` split where they still leave SMs idle).
#[doc(hidden)]
pub const PIPELINED_SPLIT: u32 = 1;
/// 64 × 64 tiles of 2 warps: products at most 64 columns wide (a batch of
/// small matrices), which would leave half of every 64 × 128 tile empty.
/// H200, 1 024 × 64³: 26.2 µs against 54.0 in 64 × 128 tiles.
#[doc(hidden)]
pub const PIPELINED_NARROW: u32 = 2;

/// `k` per stage of the warp-tiled and pipelined steps.
#[doc(hidden)]
pub const WARP_BK: usize = 16;
/// Stages of [`GemmVariant::Pipelined`]'s shared-memory ring.
#[doc(hidden)]
pub const PIPELINE_STAGES: usize = 4;
/// Words of padding after each `k`-row of a staged tile: rows of
/// `tile + 8` words start 8 banks apart, so the transposing 4-byte copies
/// (8 rows of 4 `k`s per warp) and the tensor cores' fragment loads
/// (4 `k`s of 8 rows) touch 32 different banks.
#[doc(hidden)]
pub const STAGE_PAD: usize = 8;

/// Shared bytes of a ring of `stages` stages of a `bm`-row tile of `A`
/// and a `bn`-column tile of `B`, each `WARP_BK` deep, in whichever layout
/// ([`staging::staged_words`]).
#[doc(hidden)]
pub const fn ring_bytes(bm: usize, bn: usize, stages: usize) -> u32 {
    (stages * (staging::staged_words(bm) + staging::staged_words(bn)) * 4) as u32
}

/// The tile configuration of a pipelined (or tensor-core) kernel of a
/// `bm × bn` tile: one warp per 32 × 64 of `C`.
#[doc(hidden)]
pub const fn warp_tiles(bm: usize, bn: usize, stages: usize) -> TileConfig {
    TileConfig {
        tile_m: bm as u32,
        tile_n: bn as u32,
        threads: (bm / 32 * (bn / 64) * 32) as u32,
        shared_bytes: ring_bytes(bm, bn, stages),
    }
}

/// The tile configuration of [`PIPELINED_CONFIGS`]`[config]`.
#[doc(hidden)]
pub const fn pipelined_tiles(config: u32) -> TileConfig {
    let (bm, bn) = PIPELINED_CONFIGS[config as usize];
    warp_tiles(bm, bn, PIPELINE_STAGES)
}

/// The most multiply-adds `m · n · k` of a [`GemmVariant::Pipelined`]
/// product that runs [`small`]'s 32 × 32 tiles.
#[doc(hidden)]
pub const SMALL_WORK: usize = 1 << 25;

/// The longest `k` of a [`GemmVariant::Pipelined`] product that runs
/// [`small`]'s tiles: eight stages, one after the other in each block.
/// H200, `1 × 4096 × 4096` (64 stages): 107.8 µs against 73.3 split.
#[doc(hidden)]
pub const SMALL_MAX_K: usize = 8 * small::BK;

/// Whether `count` [`GemmVariant::Pipelined`] products of `m × n × k` run
/// [`small`]'s 32 × 32 tiles on `sms` SMs: each at most [`SMALL_WORK`]
/// multiply-adds and [`SMALL_MAX_K`] deep, and their 64 × 128 tiles
/// together fewer than the SMs (the 64 × 128 tiles would split `k`).
/// H200, µs, against the 64 × 128 tiles split: 128³ 7.4 against 11.6,
/// 256³ 10.5 against 13.8; a batch fills the SMs with either, and the 32 ×
/// 32 tiles, which read shared memory once a multiply-add, lose there
/// (stages of 32: 1024 × 128³ 352 against 136, 1024 × 256³ 2 626 against
/// 884).
#[doc(hidden)]
pub const fn takes_small_tiles(count: usize, m: usize, n: usize, k: usize, sms: u32) -> bool {
    let Some(work) = m.checked_mul(n) else {
        return false;
    };
    let Some(work) = work.checked_mul(k) else {
        return false;
    };
    let (bm, bn) = PIPELINED_CONFIGS[PIPELINED_SPLIT as usize];
    let tiles = m.div_ceil(bm) * n.div_ceil(bn);
    work <= SMALL_WORK && k <= SMALL_MAX_K && tiles.saturating_mul(count) < sms as usize
}

/// The tile configuration of [`small`]'s kernel.
#[doc(hidden)]
pub const SMALL_TILES: TileConfig = TileConfig {
    tile_m: small::TILE as u32,
    tile_n: small::TILE as u32,
    threads: small::THREADS as u32,
    shared_bytes: small::SHARED_BYTES,
};

/// Tickets at the start of a split product's workspace: one per tile, so
/// a split takes at most this many tiles ([`split_slices`]).
#[doc(hidden)]
pub const SPLIT_TICKETS: usize = 2048;
/// The least `k` a slice of a split product takes: 2 stages. Measured on
/// an H100 (µs, unsplit / at least 4 stages / 2 / 1): 256³ 20.6 / 14.7 /
/// 14.4 / 16.4, 512³ 34.1 / 18.6 / 18.2 / 18.1.
#[doc(hidden)]
pub const MIN_SLICE_K: usize = 2 * WARP_BK;

/// The least `k` a slice takes where the split fills more than one block
/// slot per SM ([`split_slices`]): 16 stages. A second block on an SM
/// hides the latencies the first one waits on, but each slice fills and
/// drains the ring once and its tile is written, read and added once
/// more. H200, µs, one block per SM → two: 1024³ 65.0 → 62.4 (slices of
/// 32 stages), 1000 × 999 × 1001 72.1 → 70.2 (of 32); 512³ 18.3 → 19.8
/// (of 4 stages instead of 8), so that one keeps one block per SM.
#[doc(hidden)]
pub const MIN_SHARED_SLICE_K: usize = 16 * WARP_BK;

/// Slices of `k` a [`GemmVariant::Pipelined`] product of `tiles` tiles
/// runs on a GPU of `sms` multiprocessors that each hold `resident` of
/// its blocks at once: 1 where the tiles fill the SMs' slots, else the
/// more of two splits, each no slice empty (see [`slice_k`]):
/// tiles × slices about `sms`, slices at least [`MIN_SLICE_K`] deep
/// (SMs idle otherwise), and about `sms × resident`, slices at least
/// [`MIN_SHARED_SLICE_K`] deep (a second block per SM, worth it only
/// over a long loop).
#[doc(hidden)]
pub const fn split_slices(tiles: usize, k: usize, sms: usize, resident: usize) -> usize {
    let one = slices_over(tiles, k, sms, MIN_SLICE_K);
    let shared = slices_over(tiles, k, sms * resident, MIN_SHARED_SLICE_K);
    if one > shared { one } else { shared }
}

/// Slices of `k` for `tiles` tiles over `slots` block slots, each slice
/// at least `least` deep: 1 where the tiles fill the slots.
const fn slices_over(tiles: usize, k: usize, slots: usize, least: usize) -> usize {
    if tiles == 0 || tiles >= slots || tiles > SPLIT_TICKETS {
        return 1;
    }
    let wanted = slots / tiles;
    let deep = k / least;
    let slices = if wanted < deep { wanted } else { deep };
    if slices <= 1 {
        return 1;
    }
    k.div_ceil(slice_k(k, slices))
}

/// `k` per slice of a product split in `slices`: whole stages, the last
/// slice the rest.
#[doc(hidden)]
pub const fn slice_k(k: usize, slices: usize) -> usize {
    k.div_ceil(slices).div_ceil(WARP_BK) * WARP_BK
}

/// Words of a split product's workspace: the tickets, then each slice's
/// partial tile.
#[doc(hidden)]
pub const fn split_words(tiles: usize, slices: usize, tile_elements: usize) -> usize {
    if slices <= 1 {
        0
    } else {
        SPLIT_TICKETS + tiles * slices * tile_elements
    }
}

/// The entry of [`GemmVariant::Pipelined`]'s tile configuration `config`
/// (an index of [`PIPELINED_CONFIGS`]) for operands staged as `a_k_major` and
/// `b_k_major` say ([`staging::stages_k_major`] of `op(A)`'s strides
/// `(row, column)` and of `op(B)`'s `(column, row)`, as the kernel sees
/// them): `None` for a configuration without entries.
#[doc(hidden)]
pub fn pipelined_entry(
    config: u32,
    a_k_major: bool,
    b_k_major: bool,
) -> Option<crate::Entry<GemmArgs<f32>>> {
    match (a_k_major, b_k_major) {
        (false, true) => gemm_pipelined_xk::entry::<f32>(config),
        (true, true) => gemm_pipelined_kk::entry::<f32>(config),
        (false, false) => gemm_pipelined_xx::entry::<f32>(config),
        (true, false) => gemm_pipelined_kx::entry::<f32>(config),
    }
}

/// The entry and tiles of the [`GemmVariant::Pipelined`] products that
/// split `k` (64 × 128 tiles, [`pipelined::splits`]) of an `A` and a `B`
/// stored untransposed: the launch whose blocks per SM
/// [`GemmVariant::plan`] takes as `resident`. It stands for the other
/// layouts' 64 × 128 entries too: ptxas gives them 225 to 254 registers
/// on sm_90a, two blocks of 128 threads per SM each.
#[doc(hidden)]
pub fn split_launch() -> (crate::Entry<GemmArgs<f32>>, TileConfig) {
    match pipelined_entry(PIPELINED_SPLIT, false, true) {
        Some(entry) => (entry, pipelined_tiles(PIPELINED_SPLIT)),
        None => unreachable!("a pipelined configuration without an entry"),
    }
}

/// Tile of the tensor-core steps: 128 × 128, 8 warps of 64 × 32.
#[doc(hidden)]
pub const TENSOR_TILE: usize = 128;
/// Stages of the tensor-core steps' ring.
#[doc(hidden)]
pub const TENSOR_STAGES: usize = 3;

/// The tiles of the `wgmma` steps: 128 × 128, two warpgroups, the ring
/// and two converted stages of `B` ([`wgmma::shared_bytes`]).
#[doc(hidden)]
pub const WGMMA_TILES: TileConfig = TileConfig {
    tile_m: TENSOR_TILE as u32,
    tile_n: TENSOR_TILE as u32,
    threads: wgmma::THREADS as u32,
    shared_bytes: wgmma::shared_bytes(),
};

/// The wide tiles of [`GemmVariant::Tf32Tma`]: 128 × 256, three
/// warpgroups, the ring and its barriers ([`tma::shared_bytes`]).
#[doc(hidden)]
pub const TMA_TILES: TileConfig = tma_tiles(tma::TILE_M, tma::TILE_N);

/// The tiles of [`GemmVariant::Tf32Tma`]'s kernels `rows` × `width`
/// ([`tma::TILE_M`] rows by [`tma::TILE_N`], [`tma::MEDIUM_N`] or
/// [`tma::NARROW_N`] columns, or [`tma::SHORT_M`] by [`tma::NARROW_N`]).
#[doc(hidden)]
pub const fn tma_tiles(rows: usize, width: usize) -> TileConfig {
    TileConfig {
        tile_m: rows as u32,
        tile_n: width as u32,
        threads: tma::threads(rows) as u32,
        shared_bytes: tma::shared_bytes(rows, width),
    }
}

/// The tiles of [`GemmVariant::Tf32x3Tma`]: 128 × 128, three warpgroups.
#[doc(hidden)]
pub const TMA_X3_TILES: TileConfig = tma_x3_tiles(tma_x3::TILE_N);

/// The tiles of [`GemmVariant::Tf32x3Tma`]'s kernels `width` columns wide
/// ([`tma_x3::TILE_N`] or [`tma_x3::NARROW_N`]).
#[doc(hidden)]
pub const fn tma_x3_tiles(width: usize) -> TileConfig {
    TileConfig {
        shared_bytes: tma_x3::shared_bytes(width),
        ..tma_tiles(tma::TILE_M, width)
    }
}

/// The step whose kernel runs a [`GemmVariant::Tf32x3Tma`] product that no
/// tensor map can describe (a side of 2^31 − 256 or more).
pub const TMA_X3_FALLBACK: GemmVariant = GemmVariant::Tf32x3Wgmma;

/// The step whose kernel runs a [`GemmVariant::Tf32Tma`] product that no
/// tensor map can describe (a side of 2^31 − 256 or more, or an operand
/// stored along `k` with a pitch of 2^29 elements or more): TF32 too,
/// read through strides.
pub const TMA_FALLBACK: GemmVariant = GemmVariant::Tf32Wgmma;

const fn lesson_tiles(side: u32, threads: u32, shared_bytes: u32) -> TileConfig {
    TileConfig {
        tile_m: side,
        tile_n: side,
        threads,
        shared_bytes,
    }
}

ladder! {
    /// The SGEMM ladder.
    pub enum GemmVariant("gemm"): GemmShape {
        /// Step 1 (lesson): one thread per output, each a dot product of a
        /// row of `op(A)` and a column of `op(B)` read from global memory.
        /// Consecutive threads take consecutive *rows* (the lesson's
        /// `row = threadIdx.x`), so a warp's reads of `B` are one address
        /// and its reads of `A` 32 rows apart: uncoalesced. (The lesson's
        /// slide writes `+` for the product; this kernel multiplies.)
        Naive = "naive" => GemmShape {
            kernel: "gemm_naive",
            tiles: lesson_tiles(32, 1024, 0),
            precision: Precision::Fp32,
            needs: Needs::Any,
        },
        /// Step 2 (lesson): consecutive threads take consecutive columns, so
        /// a warp reads 32 consecutive elements of a row of `B` (one
        /// 128-byte line) and one element of `A` (a broadcast): coalesced.
        Coalesced = "coalesced" => GemmShape {
            kernel: "gemm_coalesced",
            tiles: lesson_tiles(32, 1024, 0),
            precision: Precision::Fp32,
            needs: Needs::Any,
        },
        /// Step 3 (lesson's `tiled_gemm`): the block stages 32 × 32 tiles
        /// of `op(A)` and `op(B)` in shared memory, so each element read
        /// from global memory serves 32 multiply-adds instead of one.
        SharedTiles = "shared_tiles" => GemmShape {
            kernel: "gemm_shared_tiles",
            tiles: lesson_tiles(32, 1024, 2 * 32 * 32 * 4),
            precision: Precision::Fp32,
            needs: Needs::Any,
        },
        /// Step 4: each thread computes 8 outputs of one column of a
        /// 64 × 64 tile, reusing the `B` value it loads from shared memory
        /// for 8 multiply-adds: shared-memory loads per FMA drop from 2 to
        /// about 1.1.
        Register1d = "register_1d" => GemmShape {
            kernel: "gemm_register_1d",
            tiles: lesson_tiles(64, 512, (64 * 8 + 8 * 64) * 4),
            precision: Precision::Fp32,
            needs: Needs::Any,
        },
        /// Step 5: each thread computes an 8 × 8 block of a 128 × 128
        /// tile (an outer product of 8 values of `A` and 8 of `B` per `k`):
        /// 16 shared-memory loads per 64 FMAs.
        Register2d = "register_2d" => GemmShape {
            kernel: "gemm_register_2d",
            tiles: lesson_tiles(128, 256, (128 * 8 + 8 * 128) * 4),
            precision: Precision::Fp32,
            needs: Needs::Any,
        },
        /// Step 6: the `A` tile is stored transposed (`k`-major) in shared
        /// memory, so a thread's 8 values of `A` for one `k` are
        /// consecutive, and both operands are read from shared memory as
        /// 16-byte vectors (4 loads per 64 FMAs); global loads are 16-byte
        /// where the operand's rows are contiguous and aligned.
        Vectorized = "vectorized" => GemmShape {
            kernel: "gemm_vectorized",
            tiles: lesson_tiles(128, 256, (8 * 128 + 8 * 128) * 4),
            precision: Precision::Fp32,
            needs: Needs::Any,
        },
        /// Step 7: a warp owns a 32 × 64 block of the tile and its lanes
        /// a 4 × 8 grid of 4 × 4 sub-blocks, twice in each direction: a
        /// warp's 16-byte shared loads of one `k` touch only 4 + 16
        /// distinct addresses (broadcasts, no bank conflicts) and the
        /// warp's working set of the tile stays in one region, which
        /// keeps shared-memory traffic per FMA at its floor.
        WarpTiled = "warp_tiled" => GemmShape {
            kernel: "gemm_warp_tiled",
            tiles: warp_tiles(128, 128, 1),
            precision: Precision::Fp32,
            needs: Needs::Any,
        },
        /// Step 8: step 7's warp tiling fed by a ring of
        /// `PIPELINE_STAGES` shared-memory stages filled by `cp.async`
        /// copies (sm_80+; older targets copy through registers): the
        /// copies of the next stages run while the warps compute this one,
        /// with one barrier per stage. Tiles are padded so the transposing
        /// copies store conflict-free, consecutive blocks walk `C` in
        /// bands of 8 tile rows (rasterized) so the tiles they share stay
        /// in L2, and products with too few 128 × 128 tiles to fill the
        /// GPU run 64 × 128 tiles, split along `k` where even those leave
        /// SMs idle or, over a long `k`, block slots empty (`split_slices`:
        /// 512³ 34 → 18 µs on an H100, 1024³ 65 → 62 µs on an H200). Each
        /// `k`'s products go in serpentine
        /// order (a row's first product can reuse the `B` value of the row
        /// before's last) from fragments loaded two `k` ahead: the two
        /// together 1.8% at 4096³ on an H100.
        Pipelined = "pipelined" => GemmShape {
            kernel: "gemm_pipelined",
            tiles: pipelined_tiles(PIPELINED_BIG),
            precision: Precision::Fp32,
            needs: Needs::Any,
        },
        /// Tensor cores: step 8's ring feeding `mma.sync.m16n8k8` on TF32
        /// operands (sm_80+), each warp a 64 × 32 block of a 128 × 128
        /// tile. About 8 times the FP32 rate, at TF32 accuracy.
        Tf32 = "tf32" => GemmShape {
            kernel: "gemm_tf32",
            tiles: warp_tiles(TENSOR_TILE, TENSOR_TILE, TENSOR_STAGES),
            precision: Precision::Tf32,
            needs: Needs::Sm80,
        },
        /// Tensor cores with FP32 accuracy: each operand split into a big
        /// and a small TF32 part, three `mma.sync` per product.
        Tf32x3 = "tf32x3" => GemmShape {
            kernel: "gemm_tf32x3",
            tiles: warp_tiles(TENSOR_TILE, TENSOR_TILE, TENSOR_STAGES),
            precision: Precision::Tf32x3,
            needs: Needs::Sm80,
        },
        /// Warpgroup tensor cores (sm_90a): `wgmma.m64n128k8` on TF32, two
        /// warpgroups of 64 × 128 each, `B` read by the tensor cores from
        /// shared memory after one rounding pass per stage; the products
        /// run while the warps prepare the next ones.
        Tf32Wgmma = "tf32_wgmma" => GemmShape {
            kernel: "gemm_wgmma_tf32",
            tiles: WGMMA_TILES,
            precision: Precision::Tf32,
            needs: Needs::Sm90a,
        },
        /// [`GemmVariant::Tf32Wgmma`] with each operand split into a big and
        /// a small TF32 part: six `wgmma` per stage.
        Tf32x3Wgmma = "tf32x3_wgmma" => GemmShape {
            kernel: "gemm_wgmma_tf32x3",
            tiles: WGMMA_TILES,
            precision: Precision::Tf32x3,
            needs: Needs::Sm90a,
        },
        /// Hopper-native TF32 (sm_90a): the copy engine (TMA) loads
        /// 128 × 32 tiles of `A` and 256 × 32 tiles of `B`, both `k`-major,
        /// into 128-byte-swizzled shared memory that `wgmma.m64n256k8`
        /// reads as it lies; one warpgroup copies, two multiply, handing
        /// the stages of a ring over on transaction barriers; one block per
        /// SM walks the tiles ([`tma`]). `B` stored `k × n` (the "NN"
        /// product) is read where it lies by the swapped kernel, which
        /// computes `Cᵀ = Bᵀ·Aᵀ` with `B`'s fragments in registers; an `A`
        /// stored `k × m` is transposed first, and an operand whose rows
        /// are off 16 bytes copied onto them (whatever the packing policy
        /// says); where no map can describe the product, it runs
        /// [`TMA_FALLBACK`]'s kernel.
        Tf32Tma = "tf32_tma" => GemmShape {
            kernel: "gemm_tma_tf32",
            tiles: TMA_TILES,
            precision: Precision::Tf32,
            needs: Needs::Sm90a,
        },
        /// Step 13's skeleton for 3xTF32 (sm_90a): each operand split
        /// into big and small TF32 parts by a pass of its own, the product
        /// loading the four parts by tensor copies and issuing three
        /// `wgmma.m64n128k8` per 8 of `k`, a fresh accumulator per 16
        /// ([`tma_x3`]). What [`Precision::Tf32x3`] runs on sm_90a.
        Tf32x3Tma = "tf32x3_tma" => GemmShape {
            kernel: "gemm_tma_tf32x3",
            tiles: TMA_X3_TILES,
            precision: Precision::Tf32x3,
            needs: Needs::Sm90a,
        },
    }
    default = Pipelined;
}

/// One launch of a step for one product: its entry, tiles and slices.
#[derive(Clone, Copy, Debug)]
pub struct GemmPlan {
    /// The entry point.
    pub entry: crate::Entry<GemmArgs<f32>>,
    /// Its tiles, threads and shared memory.
    pub tiles: TileConfig,
    /// Slices of `k` (`split_slices`; 1 for every step but
    /// [`GemmVariant::Pipelined`]).
    pub slices: usize,
}

impl GemmPlan {
    /// Tiles of an `m × n` product.
    pub fn tile_count(&self, m: usize, n: usize) -> usize {
        m.div_ceil(self.tiles.tile_m as usize) * n.div_ceil(self.tiles.tile_n as usize)
    }

    /// Blocks of the launch: one per tile and slice of an `m × n` product.
    pub fn blocks(&self, m: usize, n: usize) -> usize {
        self.tile_count(m, n) * self.slices
    }

    /// Words of workspace the launch needs (`split_words`: none unsplit).
    pub fn work_words(&self, m: usize, n: usize) -> usize {
        let tile = (self.tiles.tile_m * self.tiles.tile_n) as usize;
        split_words(self.tile_count(m, n), self.slices, tile)
    }

    /// The plan for the operands as the kernel will see them (after any
    /// packing; `(address, row stride, column stride)` of `op(A)` and
    /// `op(B)`, `(address, pitch)` of `C`) in the module built for
    /// `target`: [`GemmVariant::Pipelined`] takes the entry of the
    /// operands' staging layouts (`pipelined_entry`), and its 128 × 128
    /// tiles the entry without checked copies where
    /// `pipelined::takes_whole_tiles` (sm_80 and newer: it stages by
    /// `cp.async`), or the one that transposes `A` on the way in where
    /// `pipelined::takes_whole_rows`, for every product of the batch (`batch`: the elements
    /// from one product to the next in `A`, `B` and `C`, which must keep
    /// 16-byte alignment where the copies or stores are vectors); the same
    /// tiles, threads and shared memory.
    pub fn on_operands(
        self,
        target: &str,
        (m, n, k): (usize, usize, usize),
        a: (u64, usize, usize),
        b: (u64, usize, usize),
        c: (u64, usize),
        batch: [usize; 3],
    ) -> GemmPlan {
        let Some(config) = gemm_pipelined_xk::VALUES.iter().copied().find(|&config| {
            pipelined_entry(config, false, true).is_some_and(|e| e.index() == self.entry.index())
        }) else {
            return self;
        };
        // `B`'s and `C`'s matrices keep 16-byte alignment along a batch,
        // and a `k`-major `A`'s too; the transposing copies take any `A`.
        let whole = config == PIPELINED_BIG
            && self.slices == 1
            && Needs::Sm80.met_by(target)
            && batch[1..].iter().all(|s| s.is_multiple_of(4));
        let entry = if whole
            && batch[0].is_multiple_of(4)
            && pipelined::takes_whole_tiles(m, n, k, a, b, c)
        {
            gemm_pipelined_whole::entry::<f32>()
        } else if whole && pipelined::takes_whole_rows(m, n, k, a, b, c) {
            gemm_pipelined_whole_rows::entry::<f32>()
        } else {
            let (_, a_row, a_col) = a;
            let (_, b_row, b_col) = b;
            let layouts = (
                staging::stages_k_major(a_row, a_col),
                staging::stages_k_major(b_col, b_row),
            );
            // Every layout entry has every configuration (asserted with
            // the kernel table); and any of them computes right, only
            // slower, so the plan's own entry is a sound fallback.
            pipelined_entry(config, layouts.0, layouts.1).unwrap_or(self.entry)
        };
        GemmPlan { entry, ..self }
    }
}

impl GemmVariant {
    /// The step that runs a product of this precision by default.
    pub const fn for_precision(precision: Precision) -> GemmVariant {
        match precision {
            Precision::Fp32 => GemmVariant::DEFAULT,
            Precision::Tf32 => GemmVariant::Tf32,
            Precision::Tf32x3 => GemmVariant::Tf32x3,
        }
    }

    /// The fastest step of `precision` in the module built for `target`:
    /// the `wgmma` steps where it is `sm_90a`, else
    /// [`GemmVariant::for_precision`].
    pub fn fastest_for(precision: Precision, target: &str) -> GemmVariant {
        match precision {
            Precision::Tf32 if Needs::Sm90a.met_by(target) => GemmVariant::Tf32Tma,
            Precision::Tf32x3 if Needs::Sm90a.met_by(target) => GemmVariant::Tf32x3Tma,
            _ => GemmVariant::for_precision(precision),
        }
    }

    /// The step's arithmetic.
    pub const fn precision(self) -> Precision {
        self.shape().precision
    }

    /// The instructions the step needs.
    pub const fn needs(self) -> Needs {
        self.shape().needs
    }

    /// The launch of this step for an `m × n × k` product on a GPU of
    /// `sms` multiprocessors, each holding `resident` blocks of
    /// [`split_launch`] at once (the driver's occupancy):
    /// [`GemmVariant::Pipelined`] takes 64 × 128 tiles when 128 × 128 ones
    /// would not give every SM a tile or `m` is at most 64, and splits `k`
    /// when even those leave
    /// block slots empty ([`split_slices`]). [`GemmVariant::Tf32Tma`]'s
    /// kernel takes tensor maps instead of strides (the host launches it
    /// itself); its plan here is [`TMA_FALLBACK`]'s.
    #[doc(hidden)]
    pub fn plan(self, m: usize, n: usize, k: usize, sms: u32, resident: u32) -> GemmPlan {
        self.plan_batch(1, m, n, k, sms, resident)
    }

    /// [`GemmVariant::plan`] for a batch of `count` products of one shape,
    /// launched together (the grid's `y` is the product): the tiles of
    /// them all fill the SMs.
    #[doc(hidden)]
    pub fn plan_batch(
        self,
        count: usize,
        m: usize,
        n: usize,
        k: usize,
        sms: u32,
        resident: u32,
    ) -> GemmPlan {
        let fixed = |entry| GemmPlan {
            entry,
            tiles: self.shape().tiles,
            slices: 1,
        };
        match self {
            GemmVariant::Naive => fixed(gemm_naive::entry::<f32>()),
            GemmVariant::Coalesced => fixed(gemm_coalesced::entry::<f32>()),
            GemmVariant::SharedTiles => fixed(gemm_shared_tiles::entry::<f32>()),
            GemmVariant::Register1d => fixed(gemm_register_1d::entry::<f32>()),
            GemmVariant::Register2d => fixed(gemm_register_2d::entry::<f32>()),
            GemmVariant::Vectorized => fixed(gemm_vectorized::entry::<f32>()),
            GemmVariant::WarpTiled => fixed(gemm_warp_tiled::entry::<f32>()),
            GemmVariant::Tf32 => fixed(gemm_tf32::entry::<f32>()),
            GemmVariant::Tf32x3 => fixed(gemm_tf32x3::entry::<f32>()),
            GemmVariant::Tf32Wgmma => fixed(gemm_wgmma_tf32::entry::<f32>()),
            GemmVariant::Tf32x3Wgmma => fixed(gemm_wgmma_tf32x3::entry::<f32>()),
            // Its own kernel takes tensor maps (`GemmMapArgs`); this is
            // the plan of the products it cannot map.
            GemmVariant::Tf32Tma => TMA_FALLBACK.plan_batch(count, m, n, k, sms, resident),
            GemmVariant::Tf32x3Tma => TMA_X3_FALLBACK.plan_batch(count, m, n, k, sms, resident),
            GemmVariant::Pipelined if takes_small_tiles(count, m, n, k, sms) => GemmPlan {
                entry: gemm_pipelined_small::entry::<f32>(),
                tiles: SMALL_TILES,
                slices: 1,
            },
            GemmVariant::Pipelined => {
                let (big_m, big_n) = PIPELINED_CONFIGS[PIPELINED_BIG as usize];
                let (small, narrow) = PIPELINED_CONFIGS[PIPELINED_NARROW as usize];
                let tiles = (m.div_ceil(big_m) * n.div_ceil(big_n)).saturating_mul(count);
                // A product no taller than the small tiles leaves at least
                // half of every big one empty, however many there are; no
                // wider than the narrow ones, half of every 64 × 128.
                let value = if n <= narrow {
                    PIPELINED_NARROW
                } else if tiles >= sms as usize && m > small {
                    PIPELINED_BIG
                } else {
                    PIPELINED_SPLIT
                };
                // The layouts' entry replaces it in `on_operands`.
                match pipelined_entry(value, false, true) {
                    Some(entry) => {
                        let mut plan = GemmPlan {
                            entry,
                            tiles: pipelined_tiles(value),
                            slices: 1,
                        };
                        if pipelined::splits(value) {
                            plan.slices = split_slices(
                                plan.tile_count(m, n).saturating_mul(count),
                                k,
                                sms as usize,
                                resident.max(1) as usize,
                            );
                        }
                        plan
                    }
                    None => unreachable!("a pipelined configuration without an entry"),
                }
            }
        }
    }
}

/// The tile `(row, column)` of block `block` in a grid over `tiles_m ×
/// tiles_n` tiles, walked in bands of `band` tile rows: consecutive blocks
/// go down a band's column before moving right, so the blocks running at
/// once share the rows of `A` and columns of `B` they read (L2 reuse).
/// `band = 1` is plain row-major order. In `usize`, or in `u32` where the
/// walk's tiles number fewer than 2^32 (PTX's 64-bit division is a
/// subroutine).
#[inline(always)]
#[doc(hidden)]
pub fn tile_of<T>(block: T, tiles_m: T, tiles_n: T, band: T) -> (T, T)
where
    T: Copy
        + PartialOrd
        + core::ops::Add<Output = T>
        + core::ops::Sub<Output = T>
        + core::ops::Mul<Output = T>
        + core::ops::Div<Output = T>
        + core::ops::Rem<Output = T>,
{
    let per_band = band * tiles_n;
    let (band_index, within) = (block / per_band, block % per_band);
    let first_row = band_index * band;
    let rows = if tiles_m - first_row < band {
        tiles_m - first_row
    } else {
        band
    };
    (first_row + within % rows, within / rows)
}

#[cfg(target_arch = "nvptx64")]
mod device {
    //! The parts every step shares.
    use crate::prim::*;

    /// The product's operands and output, as the kernels receive them.
    /// Contract of every step: `op(A)` readable at `a[i·a_row + p·a_col]`
    /// for `i < m`, `p < k`; `op(B)` at `b[p·b_row + j·b_col]` for
    /// `p < k`, `j < n`; `C` writable (and readable unless `β = 0`) at
    /// `c[i·ldc + j]`, overlapping neither; `k ≥ 1`; a grid of at least
    /// one block per tile in `x` and the step's block and shared memory.
    /// A grid of `count` rows in `y` computes a strided batch: all of the
    /// above holds for product `z < count`, its `A`, `B` and `C` at `a +
    /// z·batch_a`, `b + z·batch_b` and `c + z·batch_c`, and no two
    /// products' `C` share an element.
    #[derive(Clone, Copy)]
    pub struct Operands {
        pub m: usize,
        pub n: usize,
        pub k: usize,
        pub alpha: f32,
        pub a: *const f32,
        pub a_row: usize,
        pub a_col: usize,
        pub b: *const f32,
        pub b_row: usize,
        pub b_col: usize,
        pub beta: f32,
        pub c: *mut f32,
        pub ldc: usize,
        /// Slices of `k` (1: not split; [`super::split_slices`]) and the
        /// workspace they meet in ([`super::split_words`]; null unsplit).
        pub slices: usize,
        pub work: *mut f32,
        /// Elements from one product of a strided batch to the next, in
        /// `A`, `B` and `C`; the grid's `y` is the product
        /// ([`Operands::of_batch`]). A split batch's products share the
        /// workspace, their tiles numbered across the batch.
        pub batch_a: usize,
        pub batch_b: usize,
        pub batch_c: usize,
    }

    impl Operands {
        /// The operands of the block's own product of a strided batch,
        /// product `block_idx_y()`: `A`, `B` and `C` moved on by that
        /// many strides. The first thing every step does; the
        /// identity for a grid of one row. (Wrapping: the launch contract
        /// puts every product of the batch inside its operands' memory.)
        #[inline(always)]
        pub fn of_batch(self) -> Operands {
            let z = block_idx_y() as usize;
            Operands {
                a: self.a.wrapping_add(z * self.batch_a),
                b: self.b.wrapping_add(z * self.batch_b),
                c: self.c.wrapping_add(z * self.batch_c),
                ..self
            }
        }

        /// Element `(i, p)` of `op(A)` (in range by the caller).
        #[inline(always)]
        pub unsafe fn a(&self, i: usize, p: usize) -> f32 {
            *self.a.add(i * self.a_row + p * self.a_col)
        }

        /// Element `(p, j)` of `op(B)` (in range by the caller).
        #[inline(always)]
        pub unsafe fn b(&self, p: usize, j: usize) -> f32 {
            *self.b.add(p * self.b_row + j * self.b_col)
        }

        /// `C[i][j] = α · acc + β · C[i][j]`, not reading `C` when `β = 0`;
        /// nothing outside `C`.
        #[inline(always)]
        pub unsafe fn store(&self, i: usize, j: usize, acc: f32) {
            if i < self.m && j < self.n {
                let c = self.c.add(i * self.ldc + j);
                *c = if self.beta == 0.0 {
                    self.alpha * acc
                } else {
                    fma_f32(self.alpha, acc, self.beta * *c)
                };
            }
        }

        /// The block's tile `(row, column)` of `tile_m × tile_n` tiles, in
        /// bands of `band` tile rows (see [`super::tile_of`]).
        #[inline(always)]
        pub fn tile(&self, tile_m: usize, tile_n: usize, band: usize) -> (usize, usize) {
            super::tile_of(
                block_idx_x() as usize,
                self.m.div_ceil(tile_m),
                self.n.div_ceil(tile_n),
                band,
            )
        }
    }

    /// `big = tf32(x)`, `small = tf32(x − big)` of each of `rows × cols`
    /// elements (see `gemm_split_tf32`).
    pub unsafe fn split(
        rows: u32,
        cols: u32,
        src: *const f32,
        src_pitch: usize,
        big: *mut f32,
        small: *mut f32,
        pitch: usize,
    ) {
        #[cfg(not(target_feature = "sm_80"))]
        {
            let _ = (rows, cols, src, src_pitch, big, small, pitch);
            trap()
        }
        #[cfg(target_feature = "sm_80")]
        {
            // A thread per 4 columns of a row, as `repitch`: 16-byte
            // stores, zeros past `cols` inside the pitch.
            let (rows, cols) = (rows as usize, cols as usize);
            let quads = cols.div_ceil(4);
            for e in grid_stride(rows * quads) {
                let (r, c) = (e / quads, 4 * (e % quads));
                let from = src.add(r * src_pitch);
                let parts: [(u32, u32); 4] = core::array::from_fn(|i| {
                    if c + i < cols {
                        split_tf32(*from.add(c + i))
                    } else {
                        (0, 0)
                    }
                });
                store4(big.add(r * pitch + c), parts.map(|p| f32::from_bits(p.0)));
                store4(small.add(r * pitch + c), parts.map(|p| f32::from_bits(p.1)));
            }
        }
    }

    /// `dst = src` over `rows × cols` elements, rows `src_pitch` and
    /// `pitch` apart (see `gemm_repitch`): a thread per 4 columns of a
    /// row, four 4-byte loads and one 16-byte store (zeros past `cols`,
    /// inside the pitch). A thread per element, all indexing, took 6 µs
    /// for a 1024 × 1023 matrix on an H100.
    pub unsafe fn repitch(
        rows: u32,
        cols: u32,
        src: *const f32,
        src_pitch: usize,
        dst: *mut f32,
        pitch: usize,
    ) {
        let (rows, cols) = (rows as usize, cols as usize);
        let quads = cols.div_ceil(4);
        for e in grid_stride(rows * quads) {
            let (r, c) = (e / quads, 4 * (e % quads));
            let from = src.add(r * src_pitch);
            let v: [f32; 4] =
                core::array::from_fn(|i| if c + i < cols { *from.add(c + i) } else { 0.0 });
            store4(dst.add(r * pitch + c), v);
        }
    }

    /// `C = β · C` over `m × n` (zeros for `β = 0`, without reading `C`).
    pub unsafe fn scale(m: u32, n: u32, beta: f32, c: *mut f32, ldc: usize) {
        let (m, n) = (m as usize, n as usize);
        for e in grid_stride(m * n) {
            let (i, j) = (e / n, e % n);
            let c = c.add(i * ldc + j);
            *c = if beta == 0.0 { 0.0 } else { beta * *c };
        }
    }
}

#[cfg(target_arch = "nvptx64")]
pub(crate) use device::Operands;
#[cfg(target_arch = "nvptx64")]
use tma::MapOperands;
#[cfg(target_arch = "nvptx64")]
use tma_x3::SplitOperands;

kernels! {
    /// Every GEMM entry point. All products share one parameter list (see
    /// the module docs for the strides), written once here; each step's
    /// body takes it as one `Operands`, its counts widened to `usize`.
    /// The first row owns the shared `Args`; the others share it.
    pub const KERNELS = {
        (m: u32, n: u32, k: u32, alpha: f32,
            a: *const T, a_row: usize, a_col: usize,
            b: *const T, b_row: usize, b_col: usize,
            beta: f32, c: *mut T, ldc: usize, slices: u32, work: *mut T,
            batch_a: usize, batch_b: usize, batch_c: usize) as Operands {
            fn gemm_naive<T in f32> = naive::kernel;
            fn gemm_coalesced<T in f32> = coalesced::kernel;
            fn gemm_shared_tiles<T in f32> = shared_tiles::kernel;
            fn gemm_register_1d<T in f32> = register_1d::kernel;
            fn gemm_register_2d<T in f32> = register_2d::kernel;
            fn gemm_vectorized<T in f32> = vectorized::kernel;
            fn gemm_warp_tiled<T in f32> = warp_tiled::kernel;
            /// One entry per pair of staging layouts (the letters: `A`'s,
            /// then `B`'s, `k` for `k`-major, `x` for `x`-major; see
            /// [`pipelined_entry`]) and tile configuration (its index in
            /// [`PIPELINED_CONFIGS`]): `gemm_pipelined_xk_0_f32` (128 ×
            /// 128), `..._xk_1_f32` (64 × 128), `..._xk_2_f32` (64 × 64), ...
            fn gemm_pipelined_xk<T in f32; const CONFIG: u32 = { 0, 1, 2 }> =
                pipelined::layout_kernel::<CONFIG, false, true>;
            fn gemm_pipelined_kk<T in f32; const CONFIG: u32 = { 0, 1, 2 }> =
                pipelined::layout_kernel::<CONFIG, true, true>;
            fn gemm_pipelined_xx<T in f32; const CONFIG: u32 = { 0, 1, 2 }> =
                pipelined::layout_kernel::<CONFIG, false, false>;
            fn gemm_pipelined_kx<T in f32; const CONFIG: u32 = { 0, 1, 2 }> =
                pipelined::layout_kernel::<CONFIG, true, false>;
            /// The 32 × 32 tiles of products too small for the 64 × 128 ones
            /// ([`small`], [`SMALL_WORK`]).
            fn gemm_pipelined_small<T in f32> = small::kernel;
            /// The 128 × 128 tiles of products whose operands all take whole
            /// 16-byte copies (`pipelined::takes_whole_tiles`): no checked copies
            /// in its ring, two blocks per SM.
            fn gemm_pipelined_whole<T in f32> = pipelined::whole_kernel::<
                { PIPELINED_CONFIGS[PIPELINED_BIG as usize].0 },
                { PIPELINED_CONFIGS[PIPELINED_BIG as usize].1 },
                { pipelined::threads(PIPELINED_BIG) },
                { pipelined::quads(PIPELINED_CONFIGS[PIPELINED_BIG as usize].0, pipelined::threads(PIPELINED_BIG)) },
                { pipelined::quads(PIPELINED_CONFIGS[PIPELINED_BIG as usize].1, pipelined::threads(PIPELINED_BIG)) },
                false,
            >;
            /// The same tiles for products whose `A` is laid out along `k`
            /// (`pipelined::takes_whole_rows`: untransposed, not packed),
            /// staged `k`-major by transposing 4-byte copies.
            fn gemm_pipelined_whole_rows<T in f32> = pipelined::whole_kernel::<
                { PIPELINED_CONFIGS[PIPELINED_BIG as usize].0 },
                { PIPELINED_CONFIGS[PIPELINED_BIG as usize].1 },
                { pipelined::threads(PIPELINED_BIG) },
                { pipelined::quads(PIPELINED_CONFIGS[PIPELINED_BIG as usize].0, pipelined::threads(PIPELINED_BIG)) },
                { pipelined::quads(PIPELINED_CONFIGS[PIPELINED_BIG as usize].1, pipelined::threads(PIPELINED_BIG)) },
                true,
            >;
            fn gemm_tf32<T in f32> = tensor::kernel::<false>;
            fn gemm_tf32x3<T in f32> = tensor::kernel::<true>;
            fn gemm_wgmma_tf32<T in f32> = wgmma::kernel::<false>;
            fn gemm_wgmma_tf32x3<T in f32> = wgmma::kernel::<true>;
            /// Products with `m = 1` or `n = 1` ([`gemv`]), outside the
            /// ladder: the matrix's rows along `k`, then along the output.
            fn gemm_gemv_dot<T in f32> = gemv::dot_kernel;
            fn gemm_gemv_stream<T in f32> = gemv::stream_kernel::<
                { gemv::STREAM.outputs },
                { gemv::STREAM.warps },
            >;
        }
        (m: u32, n: u32, k: u32, alpha: f32, beta: f32, c: *mut T, ldc: usize,
            slices: u32, slice_stages: u32, work: *mut T, count: u32, batch_c: usize,
            map_a: TensorMap, map_b: TensorMap) as MapOperands {
            /// Two 128-byte aggregate parameters, which rustc passes as
            /// `.param .align 16 .b8 [128]` (raised to 64 by `cargo xtask
            /// build-ptx`), the host as 128 bytes, and the copy engine
            /// reads where they lie.
            #[allow(improper_gpu_kernel_arg)]
            fn gemm_tma_tf32<T in f32> = tma::kernel::<{ tma::TILE_M }, { tma::TILE_N }, false>;
            /// `Cᵀ = op(B)ᵀ · op(A)ᵀ`, `op(B)` read where it lies, `n`
            /// innermost (the swapped kernel of [`tma`]).
            #[allow(improper_gpu_kernel_arg)]
            fn gemm_tma_tf32_swapped<T in f32> = tma::kernel::<{ tma::TILE_M }, { tma::TILE_N }, true>;
            /// The same two kernels over tiles [`tma::MEDIUM_N`] wide.
            #[allow(improper_gpu_kernel_arg)]
            fn gemm_tma_tf32_medium<T in f32> = tma::kernel::<{ tma::TILE_M }, { tma::MEDIUM_N }, false>;
            #[allow(improper_gpu_kernel_arg)]
            fn gemm_tma_tf32_swapped_medium<T in f32> = tma::kernel::<{ tma::TILE_M }, { tma::MEDIUM_N }, true>;
            /// The same two kernels over tiles [`tma::NARROW_N`] wide.
            #[allow(improper_gpu_kernel_arg)]
            fn gemm_tma_tf32_narrow<T in f32> = tma::kernel::<{ tma::TILE_M }, { tma::NARROW_N }, false>;
            #[allow(improper_gpu_kernel_arg)]
            fn gemm_tma_tf32_swapped_narrow<T in f32> = tma::kernel::<{ tma::TILE_M }, { tma::NARROW_N }, true>;
            /// The same two kernels over tiles [`tma::SHORT_M`] ×
            /// [`tma::NARROW_N`], two blocks an SM.
            #[allow(improper_gpu_kernel_arg)]
            fn gemm_tma_tf32_short<T in f32> = tma::kernel::<{ tma::SHORT_M }, { tma::NARROW_N }, false>;
            #[allow(improper_gpu_kernel_arg)]
            fn gemm_tma_tf32_swapped_short<T in f32> = tma::kernel::<{ tma::SHORT_M }, { tma::NARROW_N }, true>;
        }
        (m: u32, n: u32, k: u32, alpha: f32, beta: f32, c: *mut T, ldc: usize,
            map_a: TensorMap, map_a_small: TensorMap,
            map_b: TensorMap, map_b_small: TensorMap) as SplitOperands {
            /// Four 128-byte aggregate parameters, as `gemm_tma_tf32`'s two.
            #[allow(improper_gpu_kernel_arg)]
            fn gemm_tma_tf32x3<T in f32> = tma_x3::kernel::<true>;
            /// The same over tiles [`tma_x3::NARROW_N`] wide.
            #[allow(improper_gpu_kernel_arg)]
            fn gemm_tma_tf32x3_narrow<T in f32> = tma_x3::kernel::<false>;
        }
        (rows: u32, cols: u32, src: *const T, src_pitch: usize,
            big: *mut T, small: *mut T, pitch: usize) {
            /// `big = tf32(x)`, `small = tf32(x − big)` (both rounded to
            /// nearest) of each element of a `rows × cols` matrix, into two
            /// of `pitch` (on 16 bytes, `pitch` a multiple of 4 of at
            /// least `cols`; zeros past `cols`): the parts
            /// `gemm_tma_tf32x3` reads.
            fn gemm_split_tf32<T in f32> => device::split(rows, cols, src, src_pitch, big, small, pitch);
        }
        (rows: u32, cols: u32, src: *const T, src_pitch: usize, dst: *mut T, pitch: usize) {
            /// `dst = src`, a `rows × cols` matrix copied from rows
            /// `src_pitch` apart to rows `pitch` apart (`dst` on 16 bytes,
            /// `pitch` a multiple of 4 of at least `cols`; zeros fill each
            /// row's last 4 columns past `cols`): an operand off 16 bytes
            /// moved onto them for `gemm_tma_tf32`'s tensor maps.
            fn gemm_repitch<T in f32> => device::repitch(rows, cols, src, src_pitch, dst, pitch);
        }
        (m: u32, n: u32, beta: f32, c: *mut T, ldc: usize) {
            /// `C = β · C` (`k = 0` or `α = 0`): reads neither operand.
            fn gemm_scale<T in f32> => device::scale(m, n, beta, c, ldc);
        }
    }
}

/// The arguments of every product kernel.
pub type GemmArgs<T> = gemm_naive::Args<T>;
/// The arguments of `gemm_tma_tf32`: the shape, the scalars, `C`, and
/// the tensor maps of the operands.
pub type GemmMapArgs<T> = gemm_tma_tf32::Args<T>;
/// The arguments of `gemm_tma_tf32x3`.
pub type GemmSplitMapArgs<T> = gemm_tma_tf32x3::Args<T>;
/// The arguments of `gemm_split_tf32`.
pub type SplitArgs<T> = gemm_split_tf32::Args<T>;
/// The arguments of `gemm_repitch`.
pub type RepitchArgs<T> = gemm_repitch::Args<T>;
/// The arguments of `gemm_scale`.
pub type ScaleArgs<T> = gemm_scale::Args<T>;
/// Threads per block of [`gemm_scale`] (a grid-stride loop).
#[doc(hidden)]
pub const SCALE_BLOCK: u32 = 256;

// The kernel table's configurations are the ones `plan` chooses from.
const _: () = {
    let layouts = [
        gemm_pipelined_xk::VALUES,
        gemm_pipelined_kk::VALUES,
        gemm_pipelined_xx::VALUES,
        gemm_pipelined_kx::VALUES,
    ];
    let mut i = 0;
    while i < layouts.len() {
        assert!(layouts[i].len() == PIPELINED_CONFIGS.len());
        let mut c = 0;
        while c < layouts[i].len() {
            assert!(layouts[i][c] as usize == c);
            c += 1;
        }
        i += 1;
    }
};

/// The launch bounds of a TMA step's entry of tiles `rows` high
/// ([`tma::TILE_M`] or [`tma::SHORT_M`]): its threads and the blocks an SM
/// runs ([`tma::threads`], [`tma::blocks_per_sm`]).
const fn tma_bounds(entry: &'static str, rows: usize) -> crate::kernel::LaunchBounds {
    crate::kernel::LaunchBounds {
        entry,
        threads: tma::threads(rows) as u32,
        blocks_per_sm: tma::blocks_per_sm(rows) as u32,
    }
}

/// This family's entries compiled for a number of resident blocks per SM
/// (gathered in [`crate::LAUNCH_BOUNDS`], whose doc says how they are used).
pub const LAUNCH_BOUNDS: &[crate::kernel::LaunchBounds] = &[
    // 165 and 170 registers gave one block of 8 warps per SM; held here
    // to two, the TF32 entry spills a little for it (`SPILLS_ON_PURPOSE`).
    // H100 2026-11: 4096³ 107 against 90 TFLOP/s (TF32), 43.6 against 41.5
    // (docs/notes/gemm.md)
    crate::kernel::LaunchBounds {
        entry: "gemm_tf32_f32",
        threads: crate::gemm::tensor::THREADS as u32,
        blocks_per_sm: 2,
    },
    // One block of three warpgroups per SM: 168 registers a thread at
    // launch, which `setmaxnreg` moves from the copying warpgroup to the
    // multiplying ones (`tma::CONSUMER_REGS`); short tiles, two blocks of
    // two warpgroups: 128 registers at launch.
    tma_bounds("gemm_tma_tf32_f32", tma::TILE_M),
    tma_bounds("gemm_tma_tf32_swapped_f32", tma::TILE_M),
    tma_bounds("gemm_tma_tf32_medium_f32", tma::TILE_M),
    tma_bounds("gemm_tma_tf32_swapped_medium_f32", tma::TILE_M),
    tma_bounds("gemm_tma_tf32_narrow_f32", tma::TILE_M),
    tma_bounds("gemm_tma_tf32_swapped_narrow_f32", tma::TILE_M),
    tma_bounds("gemm_tma_tf32_short_f32", tma::SHORT_M),
    tma_bounds("gemm_tma_tf32_swapped_short_f32", tma::SHORT_M),
    tma_bounds("gemm_tma_tf32x3_f32", tma::TILE_M),
    tma_bounds("gemm_tma_tf32x3_narrow_f32", tma::TILE_M),
    crate::kernel::LaunchBounds {
        entry: "gemm_tf32x3_f32",
        threads: crate::gemm::tensor::THREADS as u32,
        blocks_per_sm: 2,
    },
    // Without checked copies in its ring, 126 registers with no spills
    // for sm_80 to sm_90a (136 left to itself): two blocks of 8 warps per
    // SM instead of one.
    // H100 2026-11: 4096³ 2.68 ms against the 128 × 128 entry's 2.94 (docs/notes/gemm.md)
    crate::kernel::LaunchBounds {
        entry: "gemm_pipelined_whole_f32",
        threads: crate::gemm::pipelined::threads(crate::gemm::PIPELINED_BIG) as u32,
        blocks_per_sm: 2,
    },
    // The same bound for the entry whose `A` arrives transposed.
    crate::kernel::LaunchBounds {
        entry: "gemm_pipelined_whole_rows_f32",
        threads: crate::gemm::pipelined::threads(crate::gemm::PIPELINED_BIG) as u32,
        blocks_per_sm: 2,
    },
];

/// This family's entries whose local memory is kept deliberately
/// (gathered in [`crate::SPILLS_ON_PURPOSE`], whose doc says what that
/// allows).
pub const SPILLS_ON_PURPOSE: &[&str] = &[
    // Held to 128 registers by `LAUNCH_BOUNDS` for a second block per SM
    // (uncapped: 165 registers, no spills, one block); the ring's
    // whole-tile copies, their addresses held in registers, make it spill
    // 280 bytes, and it runs faster so.
    // H100 2026-11: 4096³ 107 TFLOP/s capped, 117 with the copies, 90 uncapped
    // (docs/notes/gemm.md)
    "gemm_tf32_f32",
    // The same cap; the whole-tile copies make it spill 40 bytes.
    // H100 2026-11: 4096³ 2.98 ms against 3.02 without them (docs/notes/gemm.md)
    "gemm_tf32x3_f32",
];

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec::Vec;

    #[test]
    fn tile_order_visits_every_tile_once() {
        for (tiles_m, tiles_n, band) in [(1, 1, 8), (5, 3, 8), (17, 9, 8), (16, 16, 8), (3, 7, 1)] {
            let mut seen: Vec<(usize, usize)> = (0..tiles_m * tiles_n)
                .map(|b| tile_of(b, tiles_m, tiles_n, band))
                .collect();
            seen.sort();
            let all: Vec<(usize, usize)> = (0..tiles_m)
                .flat_map(|r| (0..tiles_n).map(move |c| (r, c)))
                .collect();
            assert_eq!(seen, all, "{tiles_m}×{tiles_n} band {band}");
        }
    }

    #[test]
    fn splits_fill_the_slots_with_slices_none_empty() {
        for (sms, resident) in [(1, 1), (80, 1), (132, 1), (132, 2), (144, 3)] {
            let slots = sms * resident;
            for tiles in [1, 2, 8, 12, 131, 132, 200, 500] {
                for k in [1, 15, 63, 64, 65, 127, 128, 1000, 1025, 65_536] {
                    let s = split_slices(tiles, k, sms, resident);
                    assert!(s >= 1);
                    if tiles >= slots || k < 2 * MIN_SLICE_K {
                        assert_eq!(s, 1, "{tiles} tiles, k {k}, {slots} slots");
                    }
                    if s > 1 {
                        let deep = slice_k(k, s);
                        assert!(tiles * s <= slots, "{tiles} tiles × {s} > {slots} slots");
                        // Past one block per SM only in deep slices.
                        let least = if tiles * s > sms {
                            MIN_SHARED_SLICE_K
                        } else {
                            MIN_SLICE_K
                        };
                        assert!(deep >= least && deep.is_multiple_of(WARP_BK));
                        // Every slice non-empty, together exactly `k`.
                        assert!((s - 1) * deep < k && s * deep >= k, "k {k}: {s} × {deep}");
                        assert_eq!(k.div_ceil(deep), s);
                    }
                }
            }
        }
        // The benchmark's small squares on 132 SMs, 64 × 128 tiles, one
        // block per SM and two (the H100's and H200's occupancy).
        assert_eq!(split_slices(8, 256, 132, 1), 8);
        assert_eq!(split_slices(32, 512, 132, 1), 4);
        assert_eq!(split_slices(128, 1024, 132, 1), 1);
        assert_eq!(split_slices(8, 256, 132, 2), 8);
        assert_eq!(split_slices(32, 512, 132, 2), 4);
        assert_eq!(split_slices(128, 1024, 132, 2), 2);
        assert_eq!(split_slices(128, 1001, 132, 2), 2);
        assert_eq!(split_words(8, 1, 8192), 0);
        assert_eq!(split_words(8, 4, 8192), SPLIT_TICKETS + 32 * 8192);
        // Products of at most `SMALL_WORK` multiply-adds: 32 × 32 tiles,
        // unsplit.
        let small = GemmVariant::Pipelined.plan(256, 256, 256, 132, 2);
        assert_eq!((small.tiles, small.slices), (SMALL_TILES, 1));
        assert_eq!(small.blocks(256, 256), 64);
        // Only the 64 × 128 tiles split; the other steps never do.
        let split = GemmVariant::Pipelined.plan(256, 256, 1024, 132, 2);
        assert_eq!((split.tiles.tile_m, split.slices), (64, 16));
        assert_eq!(split.blocks(256, 256), 128);
        let (entry, tiles) = split_launch();
        assert_eq!(entry.index(), split.entry.index());
        assert_eq!(tiles, split.tiles);
        // 1024³: 128 tiles, one wave at one block per SM; two with two.
        assert_eq!(
            GemmVariant::Pipelined.plan(1024, 1024, 1024, 132, 1).slices,
            1
        );
        assert_eq!(
            GemmVariant::Pipelined.plan(1024, 1024, 1024, 132, 2).slices,
            2
        );
        assert_eq!(
            GemmVariant::Pipelined.plan(4096, 4096, 4096, 132, 2).slices,
            1
        );
        assert_eq!(GemmVariant::Tf32.plan(256, 256, 65_536, 132, 2).slices, 1);
        // Not a batch that fills the SMs with 64 × 128 tiles; a few small
        // products, yes.
        let short = GemmVariant::Pipelined.plan_batch(1024, 64, 64, 64, 132, 2);
        assert_eq!((short.tiles.tile_m, short.slices), (64, 1));
        let few = GemmVariant::Pipelined.plan_batch(3, 128, 128, 128, 132, 2);
        assert_eq!((few.tiles, few.slices), (SMALL_TILES, 1));
        // A long `k` under few outputs: split 64 × 128 tiles.
        let deep = GemmVariant::Pipelined.plan(1, 4096, 4096, 132, 2);
        assert_eq!((deep.tiles.tile_m, deep.slices > 1), (64, true));
        let short = GemmVariant::Pipelined.plan_batch(1024, 64, 1024, 1024, 132, 2);
        assert_eq!((short.tiles.tile_m, short.slices), (64, 1));
        let tall = GemmVariant::Pipelined.plan_batch(1024, 65, 1024, 1024, 132, 2);
        assert_eq!((tall.tiles.tile_m, tall.slices), (128, 1));
    }

    /// Each pair of staging layouts runs its own entry, in both tile
    /// configurations, split or not.
    #[test]
    fn the_operands_layouts_pick_the_entry() {
        // `(address, row stride, column stride)` of `op(A)` (`k`-major
        // where rows are adjacent) and `op(B)` (where columns are).
        let a = |k_major: bool| if k_major { (0, 1, 1000) } else { (0, 1000, 1) };
        let b = |k_major: bool| if k_major { (0, 1000, 1) } else { (0, 1, 1000) };
        let mut seen = Vec::new();
        let shapes = [
            (4096, 4096, 1000),
            (1000, 999, 1000),
            (256, 256, 1000),
            (1000, 64, 1000),
        ];
        for (m, n, k) in shapes {
            for (a_k, b_k) in [(false, true), (true, true), (false, false), (true, false)] {
                let plan = GemmVariant::Pipelined.plan(m, n, k, 132, 2);
                let config = (0..PIPELINED_CONFIGS.len() as u32)
                    .find(|&c| pipelined_tiles(c) == plan.tiles)
                    .unwrap();
                let picked =
                    plan.on_operands("sm_90a", (m, n, k), a(a_k), b(b_k), (0, 1001), [0; 3]);
                let wanted = pipelined_entry(config, a_k, b_k).unwrap();
                assert_eq!(
                    picked.entry.index(),
                    wanted.index(),
                    "{m}×{n}×{k} {a_k} {b_k}"
                );
                assert_eq!((picked.tiles, picked.slices), (plan.tiles, plan.slices));
                seen.push(wanted.index());
            }
        }
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), 12, "four layouts × three tile configurations");
    }

    /// The whole-tile entries take exactly the products whose every copy
    /// is a whole 16-byte vector, or for `A` stored along `k` a whole
    /// 4-byte one, on modules with `cp.async`.
    #[test]
    fn whole_tiles_only_where_every_copy_is_a_vector() {
        let whole = gemm_pipelined_whole::entry::<f32>().index();
        let entry = |(m, n, k): (usize, usize, usize), a, b, c, target| {
            GemmVariant::Pipelined
                .plan(m, n, k, 132, 2)
                .on_operands(target, (m, n, k), a, b, c, [0; 3])
                .entry
                .index()
        };
        let shape = (4096, 4096, 4096);
        // `op(A)` packed (`k × m`, rows of `m`), `B` stored `k × n`.
        let (a, b, c) = ((256, 1, 4096), (4096, 4096, 1), (1024, 4096));
        assert_eq!(entry(shape, a, b, c, "sm_90a"), whole);
        assert_eq!(entry(shape, a, b, c, "sm_80"), whole);
        // Elsewhere the 128 × 128 entry of the operands' layouts.
        let general = |a: (u64, usize, usize), b: (u64, usize, usize)| {
            let (a_k, b_k) = (
                staging::stages_k_major(a.1, a.2),
                staging::stages_k_major(b.2, b.1),
            );
            pipelined_entry(PIPELINED_BIG, a_k, b_k).unwrap().index()
        };
        assert_ne!(general(a, b), whole);
        for (shape, a, b, c, target) in [
            (shape, a, b, c, "sm_70"),              // no cp.async
            ((4096, 4096, 4088), a, b, c, "sm_90"), // k not a whole stage
            ((4094, 4096, 4096), a, b, c, "sm_90"), // a stepped-back tile off 16 bytes
            ((4096, 4094, 4096), a, b, c, "sm_90"),
            (shape, (260, 1, 4096), b, c, "sm_90"), // misaligned operands
            (shape, a, (4096, 4096, 1), (1028, 4096), "sm_90"),
            (shape, a, b, (1024, 4095), "sm_90"),
            (shape, a, (4096, 1, 4096), c, "sm_90"), // `B` stored along `k`
        ] {
            assert_eq!(
                entry(shape, a, b, c, target),
                general(a, b),
                "{shape:?} {target}"
            );
        }
        // `A` stored `m × k`, untransposed: the entry that transposes it
        // on the way in, at any address and pitch; `B` and `C` as above.
        let rows = gemm_pipelined_whole_rows::entry::<f32>().index();
        for a in [(256, 4096, 1), (260, 4097, 1)] {
            assert_eq!(entry(shape, a, b, c, "sm_90a"), rows, "{a:?}");
            assert_eq!(entry(shape, a, b, c, "sm_80"), rows, "{a:?}");
            for (shape, b, c, target) in [
                (shape, b, c, "sm_70"),
                ((4096, 4096, 4088), b, c, "sm_90"),
                ((4094, 4096, 4096), b, c, "sm_90"),
                ((4096, 4094, 4096), b, c, "sm_90"),
                (shape, (4096, 4096, 1), (1028, 4096), "sm_90"),
                (shape, b, (1024, 4095), "sm_90"),
                (shape, (4096, 1, 4096), c, "sm_90"),
            ] {
                assert_eq!(
                    entry(shape, a, b, c, target),
                    general(a, b),
                    "{shape:?} {a:?} {target}"
                );
            }
        }
        // Too few 128 × 128 tiles: the 64 × 128 entry, never the whole one.
        let small = (512, 512, 512);
        assert_ne!(
            entry(small, (256, 1, 512), (256, 512, 1), (256, 512), "sm_90"),
            whole
        );
    }

    /// Within the opt-in limit of every device that runs the step: 99 KiB
    /// (compute capability 8.6 and 8.9), 227 KiB for the sm_90a steps.
    #[test]
    fn shared_memory_fits_every_device_with_opt_in() {
        // The TMA steps' own launches (their plans are their fallbacks').
        for tiles in [
            TMA_TILES,
            tma_tiles(tma::TILE_M, tma::MEDIUM_N),
            tma_tiles(tma::TILE_M, tma::NARROW_N),
            TMA_X3_TILES,
            tma_x3_tiles(tma_x3::NARROW_N),
        ] {
            assert!(tiles.shared_bytes <= 227 * 1024 && tiles.threads == 384);
        }
        // Two short blocks an SM: 256 threads and at most 113 KiB each.
        let short = tma_tiles(tma::SHORT_M, tma::NARROW_N);
        assert!(short.shared_bytes <= 113 * 1024 && short.threads == 256);
        for v in GemmVariant::ALL {
            let limit = if v.needs() == Needs::Sm90a { 227 } else { 99 } * 1024;
            for m in [1, 100_000] {
                let plan = v.plan(m, m, m, 132, 2);
                assert!(plan.tiles.shared_bytes <= limit, "{v:?}");
                assert!(plan.tiles.threads <= 1024 && plan.tiles.threads % 32 == 0);
            }
        }
    }
}
