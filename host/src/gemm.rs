//! SGEMM: `C = α · op(A) · op(B) + β · C` for `f32`, where `op(X)` is `X`
//! or `Xᵀ`, and the ladder of the lesson's variants ([`GemmVariant`]) with
//! tensor-core steps beyond it.
//!
//! The guide, [gemm.md][guide], has the ladder (what each step changes and
//! why it is faster), the measured tables and the pitfalls.
//!
//! [guide]: https://github.com/warpspeed-rs/warpspeed/blob/main/docs/gemm.md
//!
//! ```no_run
//! # fn main() -> warpspeed::Result<()> {
//! use warpspeed::gemm::{Gemm, Precision};
//! use warpspeed::{Matrix, MatrixMut};
//! let ctx = warpspeed::Context::new(0)?;
//! // A is 2 × 3, B is 3 × 2 (row-major), C is 2 × 2.
//! let a = ctx.upload(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
//! let b = ctx.upload(&[1.0f32, 0.0, 0.0, 1.0, 1.0, 1.0])?;
//! let mut c = ctx.zeros::<f32>(4)?;
//! let gemm = Gemm::new(2, 2, 3); // m, n, k; FP32, no transposes
//! ctx.gemm_into(
//!     &gemm,
//!     1.0, // α
//!     &Matrix::new(&a, 3, 2)?, // width k, height m
//!     &Matrix::new(&b, 2, 3)?, // width n, height k
//!     0.0, // β: C is not read
//!     &mut MatrixMut::new(&mut c, 2, 2)?, // width n, height m
//! )?
//! .wait()?; // c = [4, 5, 10, 11]
//! // The same product on the tensor cores, with FP32 accuracy:
//! let fast = gemm.precision(Precision::Tf32x3);
//! # let _ = fast;
//! # Ok(()) }
//! ```
//!
//! # Shapes and strides
//!
//! Every matrix is a row-major [`Matrix`] view: its width is its number of
//! columns, its height its number of rows, and its pitch the elements from
//! one row's start to the next (BLAS's leading dimension, at least the
//! width). A [`Gemm`] holds `m`, `n`, `k` and whether `A` and `B` are
//! transposed:
//!
//! | operand | stored as (rows × columns) | `op` |
//! |---|---|---|
//! | `A` | `m × k`, or `k × m` with [`Gemm::transpose_a`] | `op(A)` is `m × k` |
//! | `B` | `k × n`, or `n × k` with [`Gemm::transpose_b`] | `op(B)` is `k × n` |
//! | `C` | `m × n` | |
//!
//! Views may start anywhere in their buffers (an odd element offset, a
//! pitch that is no multiple of 4): the kernels load 16-byte vectors where
//! the start and pitch allow and single elements elsewhere. For a
//! column-major product (cuBLAS's convention), compute `Cᵀ = op(B)ᵀ ·
//! op(A)ᵀ`: the same bytes, seen row-major, with `A` and `B` swapped.
//!
//! # BLAS rules
//!
//! * `m = 0` or `n = 0`: nothing to compute; nothing is launched.
//! * `k = 0` or `α = 0`: `C = β · C`, by a small kernel that reads neither
//!   `A` nor `B` (they may hold NaN, and may be empty views when `k = 0`);
//!   with `β = 1` as well nothing is launched (the reference BLAS's quick
//!   return).
//! * `β = 0`: `C` is never read, so NaN or garbage in it does not reach the
//!   result (`C = α · op(A) · op(B)`; with `α = 0` or `k = 0`, zeros).
//! * Otherwise NaN and ±∞ in `A`, `B` or `C` propagate as IEEE 754
//!   arithmetic makes them.
//! * Shapes that do not match the [`Gemm`], and a `C` that shares a byte
//!   with `A` or `B` (views made from raw parts can) are errors before any
//!   launch. `A` and `B` may overlap, or be the
//!   same view (`C = A · Aᵀ`).
//!
//! # Accuracy
//!
//! Each output is `α · s + β · c` where `s` is a sum of `k` products. With
//! `u = 2^-24` (`f32`'s unit roundoff) and `Σ = |α| · Σ_p |a_ip| · |b_pj| +
//! |β| · |c_ij|`:
//!
//! * [`Precision::Fp32`] (steps 1 to 8): fused multiply-adds in `f32`, one
//!   rounding per product and two for `α` and `β`; the computed output
//!   differs from the exact one by at most `γ_{k+2} · Σ`, `γ_n = n·u / (1 −
//!   n·u)`: about `(k + 2) · 2^-24 · Σ` (Higham, *Accuracy and Stability of
//!   Numerical Algorithms*, §3.1). On random data the error is much
//!   smaller, of the order of `√k · u` relative.
//! * [`Precision::Tf32`]: the tensor cores multiply operands reduced to
//!   TF32 (10 mantissa bits). [`GemmVariant::Tf32Tma`], what it runs on an
//!   H100 or H200, hands them the operands as they lie and the tensor
//!   cores truncate (they ignore an `f32`'s low 13 bits): each product is
//!   off by up to about `2^-9` of itself, errors up to about `(2^-9 +
//!   8·(k + 2)·u) · Σ`. The other TF32 steps round to nearest first: `2^-10`
//!   and `(2^-10 + 8·(k + 2)·u) · Σ` (the sums as for `Tf32x3` below).
//!   About 3 · 10^-4 relative on random data (measured, 1024³), like
//!   cuBLAS with TF32 enabled.
//! * [`Precision::Tf32x3`]: each operand split into two TF32 parts (about
//!   22 of `f32`'s 24 bits), three tensor-core products per product, for
//!   FP32 accuracy: the split itself costs about `3 · 2^-22 · Σ`, below
//!   `k · u · Σ` once `k` ≥ 12. The tensor cores truncate their `f32` sums
//!   (round toward zero, as measured) instead of rounding them, so the
//!   kernel gives each 8 of `k` a fresh accumulator (3 `mma`, truncated
//!   sums of at most 24 products) and adds it to the running sum with one
//!   rounded `f32` add: the bound is about `(13 + 8·(k + 2)) · u · Σ`, and
//!   on random data the error stays within twice the `Fp32` steps' at
//!   1024³ (summing all of `k` in the tensor cores' accumulator measured
//!   12 times theirs). It grows faster with `k` than theirs: at `32 × 48 ×
//!   k` on an H100, 3.1 times theirs at `k = 10^5` and 3.9 times at
//!   `10^6` (tested: at most 5 times, up to `k = 10^6`).
//!
//! * The steps that round operands to TF32 to nearest (all but
//!   [`GemmVariant::Tf32Tma`]) turn an operand within about `2^-12` of
//!   `f32::MAX` in magnitude into ±∞ (and its products into ±∞ or NaN),
//!   where `Fp32` may still give a finite result.
//!
//! `Tf32` and `Tf32x3` need tensor cores on TF32 (compute capability 8.0,
//! Ampere, or newer) and the PTX built for them: a context that loaded the
//! `sm_70` baseline (a Volta or Turing GPU, or `WARPSPEED_PTX=sm_70`)
//! refuses them with [`Error::Unsupported`].
//!
//! No step uses floating-point atomics: each output is summed in an order
//! fixed by the step and its plan, which [`GemmVariant::Pipelined`] chooses
//! from `m`, `n`, `k`, the device's SM count and how many blocks of the
//! splitting entry one SM holds (the driver's occupancy, asked once), so
//! one input gives the same bits on one device every run. Where even
//! 64 × 128 tiles leave SMs idle (at most 132 such tiles on a 132-SM GPU:
//! 512² and below, or a large `k` under small `m × n`), or leave block
//! slots empty over a long `k` (1024² and 1000 × 999 on an H100 or H200,
//! which hold two such blocks per SM), `Pipelined` splits `k` into slices
//! (`warpspeed_gpu::gemm::split_slices`), one block per tile and slice;
//! the last slice of a tile to finish adds the partial tiles in slice
//! order and stores `C`. Small products among those (at most 2^25
//! multiply-adds, `k` up to 512, such as 256³) run 32 × 32 tiles instead,
//! unsplit. The partials live in the context's scratch
//! memory (at most one 64 × 128 tile per block slot, 8.3 MiB on a 132-SM
//! GPU of two slots per SM), allocated, with a wait for the stream, by
//! the first product that needs more than it holds.
//!
//! # Batches
//!
//! [`Context::gemm_batched_into`] runs `count` products of one shape in
//! one launch over strided batches ([`MatrixBatch`], [`MatrixBatchMut`]:
//! matrix `i` starts `i · stride` elements after the first), as cuBLAS's
//! `SgemmStridedBatched`; [`Context::gemm_each_into`] takes lists of
//! views anywhere. The rules above hold for every product.
//!
//! # Which kernel runs
//!
//! One plan per call decides it, from the product, where its operands
//! lie and the device: nothing, the scaling kernel, the step's kernel
//! (the TMA steps' strided fallbacks where no tensor map can describe the
//! operands), its tiles and slices of `k`, and which operands are packed
//! first. [`Context::gemm_variant`] names the step a product asks for.
//!
//! A precision is a floor: a product asked for by precision
//! ([`Gemm::new`], [`Gemm::precision`]) may run a kernel at least as
//! accurate where it is faster. One of one row or one column of `C` (`m =
//! 1` or `n = 1`) runs as a matrix times a vector (GEMV) in `f32` fused
//! multiply-adds whatever the precision: it reads each element of the
//! matrix once, and memory, not arithmetic, sets its time. On sm_90a, a
//! [`Precision::Tf32x3`] product with `min(m, n) ≤ 128` or at most 2^28
//! multiply-adds runs [`GemmVariant::Pipelined`], faster there than
//! 3xTF32's passes over its operands. Both keep the `Fp32` bound above.
//! A step set with [`Gemm::variant`] always runs itself.
//!
//! # Packing
//!
//! The fast steps compute outer products and read both operands fastest
//! with consecutive elements along `m` (for `op(A)`) and `n` (for
//! `op(B)`). A large product whose `A` is stored `m × k` (the default, like
//! cuBLAS's row-major "NN") or whose `B` is stored `n × k` first transposes
//! that operand into the context's scratch memory with the transpose
//! family's fastest step, then multiplies the packed copy: one more launch
//! on the stream and `k × m` (or `k × n`) floats of scratch, for about 9%
//! at 4096³ ([`Packing`] says when, and how to turn it off).

mod plan;

use crate::context::Context;
use crate::context::scratch::{SPLIT_OFFSET, packed_offset};
use crate::driver;
use crate::error::{Error, Result, check};
use crate::launch::{LaunchConfig, grid_stride_blocks};
use crate::matrix::{Matrix, MatrixBatch, MatrixBatchMut, MatrixMut};
use crate::memory::{Call, View, ViewMut};
use crate::overlap::{Span, refuse_overlap};
use crate::pending::Pending;
use crate::transpose;
use plan::{Access, Device, Mapped, Plan, TmaOperands};
use warpspeed_gpu::gemm::{
    GemmArgs, GemmMapArgs, GemmPlan, GemmSplitMapArgs, RepitchArgs, SCALE_BLOCK, ScaleArgs,
    SplitArgs, TMA_FALLBACK, TMA_X3_FALLBACK, gemm_repitch, gemm_scale, gemm_split_tf32,
    gemm_tma_tf32, gemm_tma_tf32_medium, gemm_tma_tf32_narrow, gemm_tma_tf32_short,
    gemm_tma_tf32_swapped, gemm_tma_tf32_swapped_medium, gemm_tma_tf32_swapped_narrow,
    gemm_tma_tf32_swapped_short, gemm_tma_tf32x3, gemm_tma_tf32x3_narrow, split_launch,
    split_words, tma, tma_tiles, tma_x3, tma_x3_tiles,
};
pub use warpspeed_gpu::gemm::{GemmVariant, Needs, Precision};
use warpspeed_gpu::kernel::Entry;
use warpspeed_gpu::transpose::TransposeArgs;
use warpspeed_gpu::{DevPtr, DevPtrMut, TensorMap};

/// One product's configuration: the shape `m × n × k`, whether `A` and
/// `B` are transposed, and the ladder step (which fixes the
/// [`Precision`]), like cuBLAS's handle settings and cudarc's `GemmConfig`.
/// Build it once, use it for every call of that shape.
///
/// ```
/// use warpspeed::gemm::{Gemm, GemmVariant, Precision};
/// let gemm = Gemm::new(1000, 999, 1001).transpose_b(true).precision(Precision::Tf32x3);
/// assert_eq!(gemm.get_variant(), GemmVariant::Tf32x3);
/// assert_eq!(gemm.b_shape(), (1001, 999)); // B is stored n × k: width k, height n
/// ```
///
/// Builder methods take the plain names (`transpose_a`, `precision`, ...);
/// the getters of the same settings are `get_*`, as in
/// `std::process::Command`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Gemm {
    m: usize,
    n: usize,
    k: usize,
    transpose_a: bool,
    transpose_b: bool,
    variant: GemmVariant,
    /// Set by [`Gemm::precision`] (and [`Gemm::new`]): run the fastest step
    /// of the precision that the device's module has, not `variant` itself.
    by_precision: bool,
    packing: Packing,
    tma_tiles: TmaTiles,
}

/// Whether [`Context::gemm_into`] first transposes an operand whose
/// elements run along `k` in memory (`A` as stored by default, `B` with
/// [`Gemm::transpose_b`]) into the context's scratch memory, so that the
/// product reads both operands with consecutive elements along `m` and
/// `n`.
///
/// Why: [`GemmVariant::Pipelined`] computes outer products, a column of
/// `op(A)` by a row of `op(B)` for each `k`; an operand stored along `k`
/// reaches its registers four `k`s at a time, which holds 32 registers of
/// fragments and leaves ptxas a schedule that stalls (docs/notes/gemm.md:
/// on an H100 at 4096³, 3.19 ms for `A` stored `m × k` against 2.87 for
/// `A` stored `k × m`). Transposing `A` first moves
/// `8 · m · k` bytes, about 50 µs at 4096² on an H100, against a product of
/// `2 · m · n · k` flops: worth it where the other side (`n` for `A`, `m`
/// for `B`) is long.
///
/// The packed operand takes `k × m` (or `k × n`) floats, rows rounded up
/// to 16 bytes, of the context's scratch memory, which stays allocated
/// for the next product ([`Context::release_scratch`] frees it); growing
/// the scratch waits for the context's stream once.
///
/// [`GemmVariant::Tf32Tma`] does not follow the policy: its tensor cores
/// read `A` `k`-major, so it always transposes an `A` stored `k × m` into
/// the scratch memory the same way (it reads `B` where it lies either
/// way), and copies an operand whose rows are off 16 bytes onto such
/// rows. [`GemmVariant::Tf32x3Tma`] transposes either operand not stored
/// along `k`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Packing {
    /// Pack where it pays: an operand stored along `k` of a
    /// [`GemmVariant::Pipelined`] product (what [`Precision::Fp32`] runs)
    /// or a [`GemmVariant::Tf32Wgmma`] one (what [`Precision::Tf32`] runs
    /// on an H100 or H200) whose other side is at least [`PACK_MIN_SIDE`]:
    /// from there on the copy costs less than it saves, and at 1024³ it
    /// costs more ([`GemmVariant::Tf32x3Wgmma`], which reads `A` into
    /// registers and converts it there, gains nothing at any size). The
    /// measurements behind the rule are in the project's SGEMM notes
    /// (`docs/notes/gemm.md`); the guide's tables have the current
    /// figures of each step.
    #[default]
    Auto,
    /// Pack every operand stored along `k`, whatever the step and size.
    Always,
    /// Never pack: the kernels read the operands where they lie, and the
    /// product takes no scratch memory beyond a split's.
    Never,
}

/// The tiles of [`GemmVariant::Tf32Tma`]'s kernels: `C` in tiles of 128
/// rows by 256 columns ([`TmaTiles::Wide`], one `wgmma.m64n256k8` per
/// warpgroup and 8 of `k`), by 128 ([`TmaTiles::Medium`], `m64n128k8`)
/// or by 64 ([`TmaTiles::Narrow`], `m64n64k8`), or of 64 rows by 64
/// columns ([`TmaTiles::Short`], one multiplying warpgroup, two blocks
/// an SM). Wide tiles read the least shared memory per multiply-add and
/// run large products fastest; narrower ones make two or four times the
/// tiles, which fill the SMs where wide ones would leave most idle and
/// waste less on the padding of a product a few rows wide; short ones
/// run two blocks on each SM, which hide each other's waits in products
/// up to about 1024³, and fill their tiles in batches of matrices 64 rows
/// high. (For `B` stored `k × n`, the kernel computes `Cᵀ`: the tiles are
/// then 128 (short: 64) columns of `C` by 256, 128 or 64 rows.)
/// [`GemmVariant::Tf32x3Tma`] takes the same choice between its 128 × 128
/// tiles (`Wide` or `Medium`) and 128 × 64 ones (`Narrow` or `Short`);
/// other steps ignore it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TmaTiles {
    /// Chosen per product from its shape, its batch and the SMs: the
    /// tiles whose estimate (waves of tiles and slices of `k` times their
    /// stages, and each split's partials) is lowest.
    #[default]
    Auto,
    /// 128 × 256 (step 14: 128 × 128).
    Wide,
    /// 128 × 128 (step 14: 128 × 128, as `Wide`).
    Medium,
    /// 128 × 64 (wide tiles where a product would have 2^30 narrow tiles
    /// or more).
    Narrow,
    /// 64 × 64, two blocks an SM (wide tiles where a product would have
    /// 2^30 short tiles or more; step 14: 128 × 64, as `Narrow`).
    Short,
}

/// The least length of the other side (`n` for `A`, `m` for `B`) at
/// which [`Packing::Auto`] packs an operand.
pub const PACK_MIN_SIDE: usize = 2048;

impl Packing {
    /// Which of `op(A)` and `op(B)` a product of `step` packs: an operand
    /// stored along `k` (`A` untransposed, `B` transposed), as the policy
    /// says.
    pub fn packs(self, step: GemmVariant, gemm: &Gemm) -> [bool; 2] {
        let wanted = |other_side: usize| match self {
            Packing::Auto => {
                matches!(step, GemmVariant::Pipelined | GemmVariant::Tf32Wgmma)
                    && other_side >= PACK_MIN_SIDE
            }
            Packing::Always => true,
            Packing::Never => false,
        };
        [
            !gemm.transpose_a && wanted(gemm.n),
            gemm.transpose_b && wanted(gemm.m),
        ]
    }
}

impl Gemm {
    /// `C` (`m × n`) `= α · A · B + β · C` with `A` `m × k` and `B` `k × n`,
    /// in [`Precision::Fp32`] with the fastest step
    /// ([`GemmVariant::DEFAULT`]). Any of `m`, `n`, `k` may be 0 (see the
    /// [module docs](crate::gemm) for what that computes).
    pub const fn new(m: usize, n: usize, k: usize) -> Gemm {
        Gemm {
            m,
            n,
            k,
            transpose_a: false,
            transpose_b: false,
            variant: GemmVariant::DEFAULT,
            by_precision: true,
            packing: Packing::Auto,
            tma_tiles: TmaTiles::Auto,
        }
    }

    /// Whether `op(A) = Aᵀ`: `A` is then stored `k × m` (width `m`,
    /// height `k`).
    pub const fn transpose_a(self, transpose: bool) -> Gemm {
        Gemm {
            transpose_a: transpose,
            ..self
        }
    }

    /// Whether `op(B) = Bᵀ`: `B` is then stored `n × k` (width `k`,
    /// height `n`).
    pub const fn transpose_b(self, transpose: bool) -> Gemm {
        Gemm {
            transpose_b: transpose,
            ..self
        }
    }

    /// Computes in `precision`, with the fastest step of it that the
    /// device runs ([`GemmVariant::fastest_for`]: the `wgmma` steps on an
    /// H100 or H200, the `mma.sync` ones on other GPUs;
    /// [`Context::gemm_variant`] says which).
    pub const fn precision(self, precision: Precision) -> Gemm {
        Gemm {
            variant: GemmVariant::for_precision(precision),
            by_precision: true,
            ..self
        }
    }

    /// Computes with one step of the ladder (which has its own
    /// [`Precision`]), on every device.
    pub const fn variant(self, variant: GemmVariant) -> Gemm {
        Gemm {
            variant,
            by_precision: false,
            ..self
        }
    }

    /// Whether an operand stored along `k` is transposed into scratch
    /// memory first ([`Packing`]; [`Packing::Auto`] by default).
    pub const fn packing(self, packing: Packing) -> Gemm {
        Gemm { packing, ..self }
    }

    /// The [`Packing`] policy.
    pub const fn get_packing(&self) -> Packing {
        self.packing
    }

    /// The tiles [`GemmVariant::Tf32Tma`] multiplies ([`TmaTiles`];
    /// [`TmaTiles::Auto`] by default).
    pub const fn tma_tiles(self, tma_tiles: TmaTiles) -> Gemm {
        Gemm { tma_tiles, ..self }
    }

    /// The [`TmaTiles`] choice.
    pub const fn get_tma_tiles(&self) -> TmaTiles {
        self.tma_tiles
    }

    /// Rows of `op(A)` and of `C`.
    pub const fn m(&self) -> usize {
        self.m
    }

    /// Columns of `op(B)` and of `C`.
    pub const fn n(&self) -> usize {
        self.n
    }

    /// Columns of `op(A)`, rows of `op(B)`: the length of each output's sum.
    pub const fn k(&self) -> usize {
        self.k
    }

    /// Whether `op(A) = Aᵀ`.
    pub const fn get_transpose_a(&self) -> bool {
        self.transpose_a
    }

    /// Whether `op(B) = Bᵀ`.
    pub const fn get_transpose_b(&self) -> bool {
        self.transpose_b
    }

    /// The arithmetic: the step's.
    pub const fn get_precision(&self) -> Precision {
        self.variant.precision()
    }

    /// The step that runs this product from the module built for `target`
    /// (`sm_90a`, ...): the one set by [`Gemm::variant`], or the fastest of
    /// the precision there ([`GemmVariant::fastest_for`]).
    pub fn step_on(&self, target: &str) -> GemmVariant {
        if self.by_precision {
            GemmVariant::fastest_for(self.variant.precision(), target)
        } else {
            self.variant
        }
    }

    /// The ladder step set by [`Gemm::variant`], or for a precision its
    /// portable step ([`GemmVariant::for_precision`]); the step that runs on
    /// a device may be faster ([`Context::gemm_variant`]).
    pub const fn get_variant(&self) -> GemmVariant {
        self.variant
    }

    /// The `(width, height)` the view of `A` must have: `(k, m)`, or
    /// `(m, k)` when transposed.
    pub const fn a_shape(&self) -> (usize, usize) {
        if self.transpose_a {
            (self.m, self.k)
        } else {
            (self.k, self.m)
        }
    }

    /// The `(width, height)` the view of `B` must have: `(n, k)`, or
    /// `(k, n)` when transposed.
    pub const fn b_shape(&self) -> (usize, usize) {
        if self.transpose_b {
            (self.k, self.n)
        } else {
            (self.n, self.k)
        }
    }

    /// The `(width, height)` the view of `C` must have: `(n, m)`.
    pub const fn c_shape(&self) -> (usize, usize) {
        (self.n, self.m)
    }

    /// Floating-point operations of the product, `2 · m · n · k` (a
    /// multiply and an add per term), for rates in FLOP/s.
    pub fn flops(&self) -> f64 {
        2.0 * self.m as f64 * self.n as f64 * self.k as f64
    }
}

/// The strides `(row, column)` of `op(X)` for a row-major `X` with `pitch`
/// elements per row: `(pitch, 1)`, or `(1, pitch)` for `op(X) = Xᵀ`.
fn strides(transposed: bool, pitch: usize) -> (usize, usize) {
    if transposed { (1, pitch) } else { (pitch, 1) }
}

/// The product kernels' 1D grid: one block per tile, refused if the count
/// does not fit a grid dimension's `u32` (the device's own, lower limit is
/// checked at launch).
fn product_grid(m: usize, n: usize, blocks: usize) -> Result<u32> {
    u32::try_from(blocks).map_err(|_| {
        Error::InvalidArgument(format!(
            "a {m}×{n} product needs {blocks} blocks, more than a grid holds"
        ))
    })
}

/// The stride, in elements, at which views `(address, pitch)` follow one
/// another: all of one pitch, each the same number of 4-byte elements
/// after the one before (0 for a single view); `None` otherwise.
fn progression(mut views: impl Iterator<Item = (u64, usize)>) -> Option<usize> {
    let Some((first, pitch)) = views.next() else {
        return Some(0);
    };
    let mut stride = None;
    let mut at = first;
    for (address, p) in views {
        let step = address.checked_sub(at)?;
        if p != pitch || !step.is_multiple_of(4) || *stride.get_or_insert(step) != step {
            return None;
        }
        at = address;
    }
    usize::try_from(stride.unwrap_or(0) / 4).ok()
}

/// An operand stored along `k` packed into scratch memory: its transpose,
/// `k` rows of `pitch` elements at byte `at` of the scratch, from the
/// `shape` (width `k`, height `side`) at `from` (address, pitch).
struct Pack {
    entry: Entry<TransposeArgs<u32>>,
    cfg: LaunchConfig,
    from: (u64, usize),
    shape: (usize, usize),
    pitch: usize,
    at: usize,
    bytes: usize,
}

impl Pack {
    /// The packing of `x` (`side × k` as stored: `k` wide), at byte `at`
    /// of the scratch or the next 256-byte boundary; its rows rounded up to
    /// 16 bytes, for the product's vector copies.
    fn plan(x: &Matrix<'_, f32>, side: usize, at: usize) -> Result<Pack> {
        let variant = transpose::fastest(size_of::<f32>(), x.row_alignment());
        let entry = variant.entry::<u32>().ok_or_else(|| Error::Unsupported {
            variant: variant.name(),
            reason: "it moves no 4-byte elements".into(),
        })?;
        let pitch = side.next_multiple_of(4);
        Ok(Pack {
            entry,
            cfg: transpose::launch_config(variant, size_of::<f32>(), x.width(), x.height())?,
            from: (x.address(), x.pitch()),
            shape: (x.width(), x.height()),
            pitch,
            at: at.next_multiple_of(256),
            bytes: x.width() * pitch * size_of::<f32>(),
        })
    }
}

/// Encodes the tensor map of `x`: `x.rows` rows of `x.width` `f32`,
/// boxes of `boxed` (elements of a row, rows), the 128-byte swizzle,
/// zeros outside; for a batch, a third dimension of `x.count` matrices
/// (boxes of one).
fn encode_map(context: &Context, x: Mapped, boxed: [usize; 2]) -> Result<TensorMap> {
    let mut encoded = driver::TensorMapBytes([0; 16]);
    let rank = if x.count > 1 { 3 } else { 2 };
    let dims = [x.width as u64, x.rows as u64, x.count as u64];
    let strides = [x.pitch as u64 * 4, x.stride as u64 * 4];
    let boxed = [boxed[0] as u32, boxed[1] as u32, 1];
    let element_strides = [1u32; 3];
    // SAFETY: `encoded` is 128 bytes, 64-byte aligned; the arrays hold
    // the rank's 2 or 3 dimensions (1 or 2 strides); the address is
    // 16-byte aligned and the strides multiples of 16 below 2^40
    // (`TmaOperands::plan`, `TmaOperands::plan_batch`, or the packing's
    // pitch); encoding touches no device memory.
    let status = unsafe {
        driver::cuTensorMapEncodeTiled(
            &mut encoded,
            driver::tensor_map::FLOAT32,
            rank,
            x.address as *mut std::ffi::c_void,
            dims.as_ptr(),
            strides.as_ptr(),
            boxed.as_ptr(),
            element_strides.as_ptr(),
            driver::tensor_map::NONE,
            driver::tensor_map::SWIZZLE_128B,
            driver::tensor_map::L2_256B,
            driver::tensor_map::OOB_ZERO,
        )
    };
    context.track(check(status, || "encoding the GEMM's tensor map".into()))?;
    Ok(TensorMap { words: encoded.0 })
}

impl Context {
    /// The launch of a pass over a `rows × cols` matrix with a thread per
    /// 4 columns of a row (`gemm_repitch`, `gemm_split_tf32`): blocks of
    /// [`SCALE_BLOCK`], as many as the items need and the device holds
    /// at once (the kernels' grid-stride loops take the rest).
    fn quads_config(&self, rows: usize, cols: usize) -> LaunchConfig {
        let info = self.info();
        let blocks = grid_stride_blocks(
            rows * cols.div_ceil(4),
            SCALE_BLOCK,
            info.multiprocessors,
            info.max_threads_per_multiprocessor,
        );
        LaunchConfig::linear(blocks, SCALE_BLOCK, 0)
    }

    /// Enqueues a [`GemmVariant::Tf32Tma`] product (`m`, `n`, `k` ≥ 1,
    /// `α ≠ 0`, shapes and overlaps checked, the buffers in the caller's
    /// `Call`): packs the operands not mapped in place, encodes the maps,
    /// and launches one block per SM at most.
    fn gemm_tma(
        &self,
        gemm: &Gemm,
        alpha: f32,
        operands: TmaOperands<'_>,
        beta: f32,
        c: (u64, usize),
        (count, batch_c): (usize, usize),
    ) -> Result<()> {
        let (m, n, k) = (gemm.m, gemm.n, gemm.k);
        let sms = self.info().multiprocessors as usize;
        // The kernel's tiles are `C`'s, or for the swapped kernel its
        // transpose's; a batch's, those of all its products.
        let (rows, cols) = if operands.swapped { (n, m) } else { (m, n) };
        let (tile_rows, width) = (operands.rows, operands.width);
        // The blocks the SMs hold at once.
        let slots = sms * tma::blocks_per_sm(tile_rows);
        let tiles = rows.div_ceil(tile_rows) * cols.div_ceil(width) * count;
        let (slices, slice_stages) = tma::tma_slices(tiles, k.div_ceil(tma::BK), slots);
        let grid = (tiles * slices).min(slots);
        let split_words = split_words(tiles, slices, tma::tile_elements(tile_rows, width));
        // The split's workspace, then the packings, in the scratch memory;
        // all planned before any launch.
        let mut end = packed_offset(split_words);
        // Each operand's copy: `(at, pitch, bytes)` in the scratch memory
        // and, for a transposed one, its launch.
        let mut copies = [None, None];
        for (o, (x, access)) in operands.operands.iter().enumerate() {
            copies[o] = match access {
                Access::InPlace(_) => None,
                Access::Transposed => {
                    // `x` stored `k` high: its transpose is `k`-major.
                    let p = Pack::plan(x, k, end)?;
                    end = p.at + p.bytes;
                    Some((p.at, p.pitch, Some(p)))
                }
                Access::Repitched => {
                    let (at, pitch) = (end.next_multiple_of(256), x.width().next_multiple_of(4));
                    end = at + x.height() * pitch * size_of::<f32>();
                    Some((at, pitch, None))
                }
            };
        }
        let base = self.scratch(end)?;
        // Where each operand lies for the copy engine, and its map: all
        // checked by the driver before anything is enqueued.
        let mut mapped = [None, None];
        for (o, (x, access)) in operands.operands.iter().enumerate() {
            mapped[o] = match (copies[o].as_ref(), access) {
                (None, Access::InPlace(m)) => Some(*m),
                // Transposed: `x.width()` rows of `k`; copied: its shape.
                (Some((at, pitch, pack)), _) => Some(Mapped {
                    address: base + *at as u64,
                    pitch: *pitch,
                    width: if pack.is_some() { k } else { x.width() },
                    rows: if pack.is_some() {
                        x.width()
                    } else {
                        x.height()
                    },
                    count: 1,
                    stride: 0,
                }),
                (None, _) => None,
            };
        }
        let [Some(first), Some(second)] = mapped else {
            unreachable!("every operand is mapped in place or copied")
        };
        // The first operand gives the tiles' rows, the second their
        // columns (`k`-major); the swapped kernel's first comes in boxes of
        // `tma::X_BOX` columns of `C`.
        let first_box = match operands.swapped {
            true => [tma::X_BOX, tma::BK],
            false => [tma::BK, tile_rows],
        };
        let (map_a, map_b) = (
            encode_map(self, first, first_box)?,
            encode_map(self, second, [tma::BK, width])?,
        );
        for (o, (x, _)) in operands.operands.iter().enumerate() {
            match copies[o].as_ref() {
                None => {}
                Some((at, pitch, Some(p))) => {
                    // SAFETY: as for the packing in `gemm_into`: `x` lies
                    // inside its slice for its shape and pitch, both sides
                    // below 2^32 and not 0; the destination, `x.width()`
                    // rows of `p.pitch` ≥ `k` elements, is `p.bytes` of
                    // this stream's scratch at `p.at`, after every region
                    // other launches on this stream use and apart from the
                    // other copy; `call` (the caller's)
                    // orders it for `x`'s buffer.
                    unsafe {
                        self.enqueue_transpose(
                            p.entry,
                            p.cfg,
                            p.from,
                            (base + *at as u64, *pitch),
                            p.shape,
                        )?
                    };
                }
                Some((at, pitch, None)) => {
                    let (rows, width) = (x.height(), x.width());
                    let args = RepitchArgs {
                        // Below 2^31 (`TMA_MAX_SIDE`).
                        rows: rows as u32,
                        cols: width as u32,
                        src: DevPtr::new(x.address()),
                        src_pitch: x.pitch(),
                        dst: DevPtrMut::new(base + *at as u64),
                        pitch: *pitch,
                    };
                    // SAFETY: the kernel's contract: the source, `rows`
                    // rows of `width` elements `x.pitch()` apart, lies
                    // inside `x`'s slice (`Matrix::with_pitch`); the
                    // destination, as many rows of `pitch` (`width`
                    // rounded up to 4) elements, is this stream's scratch
                    // at `at`, a 256-byte boundary, apart from every other
                    // region as above; any 1D grid (a grid-stride loop);
                    // `call` orders it for `x`'s buffer.
                    unsafe {
                        self.launch(
                            gemm_repitch::entry::<f32>(),
                            self.quads_config(rows, width),
                            &args,
                        )?
                    };
                }
            }
        }
        let args = GemmMapArgs {
            // Below 2^31 (`TMA_MAX_SIDE`).
            m: m as u32,
            n: n as u32,
            k: k as u32,
            alpha,
            beta,
            c: DevPtrMut::new(c.0),
            ldc: c.1,
            // At most `SPLIT_TICKETS` slices, and stages below 2^26.
            slices: slices as u32,
            slice_stages: slice_stages as u32,
            work: DevPtrMut::new(match split_words {
                0 => 0,
                _ => base + SPLIT_OFFSET as u64,
            }),
            // Below 2^30 (`TmaOperands::plan_batch`; 1 for one product).
            count: count as u32,
            batch_c,
            map_a,
            map_b,
        };
        let tiles_config = tma_tiles(tile_rows, width);
        let cfg =
            LaunchConfig::linear(grid as u32, tiles_config.threads, tiles_config.shared_bytes);
        let entry = match (operands.swapped, tile_rows, width) {
            (true, tma::SHORT_M, _) => gemm_tma_tf32_swapped_short::entry::<f32>(),
            (false, tma::SHORT_M, _) => gemm_tma_tf32_short::entry::<f32>(),
            (true, _, tma::TILE_N) => gemm_tma_tf32_swapped::entry::<f32>(),
            (false, _, tma::TILE_N) => gemm_tma_tf32::entry::<f32>(),
            (true, _, tma::MEDIUM_N) => gemm_tma_tf32_swapped_medium::entry::<f32>(),
            (false, _, tma::MEDIUM_N) => gemm_tma_tf32_medium::entry::<f32>(),
            (true, _, _) => gemm_tma_tf32_swapped_narrow::entry::<f32>(),
            (false, _, _) => gemm_tma_tf32_narrow::entry::<f32>(),
        };
        // SAFETY: the kernel's contract (`tma::kernel`): `m`, `n`, `k` ≥ 1
        // and below 2^31 − 256; the maps describe `op(A)` (`m` rows of
        // `k`) and `op(B)ᵀ` (`n` rows of `k`), or for the swapped entry
        // `op(B)` (`k` rows of `n`) and `op(A)`, with the boxes that entry
        // takes, where they lie, inside their slices
        // (`Matrix::with_pitch`, shapes checked by the caller), or their
        // copies above, which nothing writes while the kernel runs (this
        // stream's scratch); `(slices, slice_stages)` from
        // `tma_slices` of the tiles `width` wide (the entry's) for this
        // device's SMs, and for a split the
        // workspace of `split_words` words at `SPLIT_OFFSET` of this
        // stream's scratch, whose tickets are zero between launches (as
        // for the pipelined step's splits, which share them) and which no
        // packing overlaps (`packed_offset`); `C` as for `gemm_into`'s launch,
        // overlapping neither (refused by the caller); for a batch
        // (`count > 1`, fewer than 2^30 tiles in all), 3-dimensional maps
        // of the batches in place (`TmaOperands::plan_batch`) and product
        // `z`'s `C` at `c + 4·z·batch_c`, no two sharing an element (the
        // caller's `MatrixBatchMut`); blocks of
        // `tma_tiles(width).threads` with its shared memory (the launch opts in
        // and checks the device's limits); sm_90a PTX (the caller checked
        // the step's needs). The caller's `call` orders the kernel for all
        // three buffers.
        unsafe { self.launch(entry, cfg, &args)? };
        Ok(())
    }

    /// Enqueues a [`GemmVariant::Tf32x3Tma`] product (as
    /// [`Context::gemm_tma`]'s caller guarantees, and sides below
    /// [`plan::TMA_MAX_SIDE`]): each operand, transposed first where it is not
    /// stored along `k`, split into its big and small TF32 parts in the
    /// scratch memory, then the product over the four parts' maps.
    fn gemm_tma_x3(
        &self,
        gemm: &Gemm,
        alpha: f32,
        operands: [&Matrix<'_, f32>; 2],
        beta: f32,
        c: (u64, usize),
        width: usize,
    ) -> Result<()> {
        let (m, n, k) = (gemm.m, gemm.n, gemm.k);
        let info = self.info();
        let sms = info.multiprocessors as usize;
        let tiles = m.div_ceil(tma::TILE_M) * n.div_ceil(width);
        let grid = tiles.min(sms);
        let pitch = k.next_multiple_of(4);
        let along_k = [!gemm.transpose_a, gemm.transpose_b];
        // Per operand: its transposed copy (where not stored along `k`),
        // then its two parts. All planned before any launch.
        let mut end = packed_offset(0);
        let mut plans = Vec::with_capacity(2);
        for (x, along) in operands.iter().zip(along_k) {
            let (pack, rows) = if along {
                (None, x.height())
            } else {
                let p = Pack::plan(x, k, end)?;
                end = p.at + p.bytes;
                (Some(p), x.width())
            };
            let bytes = rows * pitch * size_of::<f32>();
            let big = end.next_multiple_of(256);
            let small = (big + bytes).next_multiple_of(256);
            end = small + bytes;
            plans.push((pack, rows, big, small));
        }
        let base = self.scratch(end)?;
        // The four parts' maps, checked by the driver before anything is
        // enqueued: `A`'s big and small parts, then `B`'s.
        let mut maps = Vec::with_capacity(4);
        // `A`'s boxes are a tile's 128 rows, `B`'s its `width` columns.
        for (&(_, rows, big, small), box_rows) in plans.iter().zip([tma::TILE_M, width]) {
            for at in [big, small] {
                let part = Mapped {
                    address: base + at as u64,
                    pitch,
                    width: k,
                    rows,
                    count: 1,
                    stride: 0,
                };
                maps.push(encode_map(self, part, [tma::BK, box_rows])?);
            }
        }
        for (x, (pack, rows, big, small)) in operands.iter().zip(plans) {
            let source = match pack {
                Some(p) => {
                    let to = base + p.at as u64;
                    // SAFETY: as for the packing in `gemm_tma`: `x` inside
                    // its slice, both sides below 2^32 and not 0; the
                    // destination is this stream's scratch at `p.at`, apart
                    // from every other region planned above; the caller's
                    // `call` orders it for `x`'s buffer.
                    unsafe {
                        self.enqueue_transpose(p.entry, p.cfg, p.from, (to, p.pitch), p.shape)?
                    };
                    (to, p.pitch)
                }
                None => (x.address(), x.pitch()),
            };
            let args = SplitArgs {
                // Below 2^31 (`TMA_MAX_SIDE`).
                rows: rows as u32,
                cols: k as u32,
                src: DevPtr::new(source.0),
                src_pitch: source.1,
                big: DevPtrMut::new(base + big as u64),
                small: DevPtrMut::new(base + small as u64),
                pitch,
            };
            // SAFETY: the kernel's contract: `rows × k` elements at the
            // source with its pitch (the operand as stored along `k`,
            // inside its slice, or its transposed copy above, which this
            // stream wrote first), and two regions of `rows` rows of
            // `pitch` (`k` rounded up to 4) elements of this stream's
            // scratch, each at a 256-byte boundary, apart from each other
            // and from every other region planned above; any
            // 1D grid (a grid-stride loop); sm_80 or newer (the caller
            // checked sm_90a).
            unsafe {
                self.launch(
                    gemm_split_tf32::entry::<f32>(),
                    self.quads_config(rows, k),
                    &args,
                )?
            };
        }
        let [map_a, map_a_small, map_b, map_b_small] = <[TensorMap; 4]>::try_from(maps)
            .unwrap_or_else(|_| unreachable!("two parts of each of two operands"));
        let args = GemmSplitMapArgs {
            m: m as u32,
            n: n as u32,
            k: k as u32,
            alpha,
            beta,
            c: DevPtrMut::new(c.0),
            ldc: c.1,
            map_a,
            map_a_small,
            map_b,
            map_b_small,
        };
        let tiles_config = tma_x3_tiles(width);
        let cfg =
            LaunchConfig::linear(grid as u32, tiles_config.threads, tiles_config.shared_bytes);
        let entry = match width == tma_x3::TILE_N {
            true => gemm_tma_tf32x3::entry::<f32>(),
            false => gemm_tma_tf32x3_narrow::entry::<f32>(),
        };
        // SAFETY: the kernel's contract (`tma_x3::kernel`): as for
        // `gemm_tma`'s launch, with the four maps over the parts written
        // above on this stream (256-byte aligned, rows of `pitch`, a
        // multiple of 4), boxes of `BK` × 128 (`tma::TILE_M`) for `A`'s
        // and `BK` × `width` (the entry's tile width) for `B`'s, the
        // entry's shared memory, and no split of `k`.
        unsafe { self.launch(entry, cfg, &args)? };
        Ok(())
    }

    /// The step `gemm` asks for on this context's device ([`Gemm::step_on`]
    /// its loaded module): the one that runs it, but where a product asked
    /// for by precision runs a kernel at least as accurate (one row or
    /// column of `C`, small 3xTF32 products: the [module docs](crate::gemm)
    /// say which).
    pub fn gemm_variant(&self, gemm: &Gemm) -> GemmVariant {
        gemm.step_on(self.info().ptx_target)
    }

    /// Enqueues `C = α · op(A) · op(B) + β · C` as `gemm` says (shape,
    /// transposes, step); see the [module docs](crate::gemm) for the
    /// shapes, the BLAS rules and the accuracy. `a` must be
    /// [`Gemm::a_shape`], `b` [`Gemm::b_shape`] and `c` [`Gemm::c_shape`]
    /// (`(width, height)`); pitches are free. `c` must share no byte with
    /// `a` or `b` (checked: views made from raw parts could). Returns at
    /// once; see [`Pending`].
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] for an `a`, `b` or `c` of the wrong shape;
    /// [`Error::InvalidArgument`] for a `c` overlapping `a` or `b`, or a
    /// product too large for the grid; [`Error::Unsupported`] for the
    /// tensor-core steps ([`Precision::Tf32`], [`Precision::Tf32x3`]) on a
    /// context that loaded PTX older than `sm_80`, and for the `wgmma`
    /// steps, set by [`Gemm::variant`], on one that did not load `sm_90a`.
    /// All before any launch.
    pub fn gemm_into<'a>(
        &'a self,
        gemm: &Gemm,
        alpha: f32,
        a: &Matrix<'_, f32>,
        b: &Matrix<'_, f32>,
        beta: f32,
        c: &mut MatrixMut<'_, f32>,
    ) -> Result<Pending<'a>> {
        self.ensure_alive()?;
        let (variant, _call) = self.begin(
            gemm,
            "GEMM",
            [
                ((a.width(), a.height()), a.span()),
                ((b.width(), b.height()), b.span()),
                ((c.width(), c.height()), c.span()),
            ],
            ([a.data(), b.data()], c.data()),
        )?;
        // SAFETY: `enqueue_one`'s contract: the views lie inside their
        // slices for their shapes and pitches (`Matrix::with_pitch`), the
        // shapes the Gemm's, `c` overlapping neither input (checked
        // above); `call` orders the kernels for all three buffers.
        unsafe { self.enqueue_one(gemm, variant, alpha, [a, b], beta, (c.address(), c.pitch()))? };
        Ok(Pending::new(self))
    }

    /// Enqueues one product of `gemm`, run as `variant`: nothing, the
    /// scaling, step 13 or 14, or a strided kernel after its packing, as
    /// its [`Plan`] says.
    ///
    /// # Safety
    /// `a` and `b` are `gemm`'s shapes, `c` (address, pitch) its `C`'s
    /// shape in writable device memory sharing no byte with either; the
    /// caller's `Call` orders the kernels for all three; `variant` runs
    /// on the loaded module (checked).
    unsafe fn enqueue_one(
        &self,
        gemm: &Gemm,
        variant: GemmVariant,
        alpha: f32,
        [a, b]: [&Matrix<'_, f32>; 2],
        beta: f32,
        c: (u64, usize),
    ) -> Result<()> {
        let (m, n, k) = (gemm.m, gemm.n, gemm.k);
        let target = self.info().ptx_target;
        let device = self.plan_device()?;
        let pairs = c.0.is_multiple_of(8) && c.1.is_multiple_of(2);
        let (plan, [pack_a, pack_b]) =
            match Plan::new(gemm, variant, (alpha, beta), [a, b], None, pairs, &device) {
                Plan::Nothing => return Ok(()),
                Plan::Scale => {
                    // SAFETY: `C`, `m × n` with pitch `c.1`, writable (the
                    // caller's contract; both sides below 2^32, as every
                    // view's).
                    return unsafe { self.enqueue_scale((m as u32, n as u32), beta, c) };
                }
                Plan::Tma(operands) => {
                    return self.gemm_tma(gemm, alpha, operands, beta, c, (1, 0));
                }
                Plan::TmaX3 { width } => {
                    return self.gemm_tma_x3(gemm, alpha, [a, b], beta, c, width);
                }
                Plan::Strided { plan, packs } => (plan, packs),
            };
        // Refused here, before the packing's launches, not at the product's.
        product_grid(m, n, plan.blocks(m, n))?;
        let split_words = plan.work_words(m, n);
        // Operands to pack, each after the split's workspace and the one
        // before it in the scratch memory; all checked before any launch.
        let mut scratch_bytes = match split_words {
            0 => 0,
            words => SPLIT_OFFSET + words * size_of::<f32>(),
        };
        let mut packed_end = packed_offset(split_words);
        let mut packs = [None, None];
        for (o, (pack, x, side)) in [(pack_a, a, m), (pack_b, b, n)].into_iter().enumerate() {
            if pack {
                let p = Pack::plan(x, side, packed_end)?;
                packed_end = p.at + p.bytes;
                scratch_bytes = packed_end;
                packs[o] = Some(p);
            }
        }
        let base = match scratch_bytes {
            0 => 0,
            bytes => self.scratch(bytes)?,
        };
        let work = match split_words {
            0 => 0,
            _ => base + SPLIT_OFFSET as u64,
        };
        let mut operands = [(a, gemm.transpose_a), (b, gemm.transpose_b)]
            .map(|(x, transposed)| (x.address(), strides(transposed, x.pitch())));
        for (o, pack) in packs.iter().enumerate() {
            let Some(p) = pack else { continue };
            let to = base + p.at as u64;
            // SAFETY: the transpose's contract: the operand `x` at
            // `p.from` (`a` or `b`) lies inside its slice for its shape
            // and pitch (`Matrix::with_pitch`), both sides below 2^32 and
            // not 0 (`m`, `n`, `k` ≥ 1 here); the destination, `k` rows
            // of `p.pitch` ≥ `x.height()` elements,
            // is the `p.bytes` of this context's scratch at `p.at`, inside
            // the `scratch_bytes` allocated above and after every other
            // region a launch on this stream uses (`packed_offset`), so it
            // overlaps neither `x` (the caller's memory), nor the split's
            // workspace, nor the other packed operand; work enqueued later
            // on this stream waits for the kernel; `call` orders it after
            // the other queues' writes to `x` (and theirs after it), and
            // `x`'s buffer waits for it before it is freed; `p.entry` and `p.cfg` are the fastest
            // variant's for 4-byte elements and `x`'s alignment.
            unsafe { self.enqueue_transpose(p.entry, p.cfg, p.from, (to, p.pitch), p.shape)? };
            // `op(A)` is the packed `k × m` matrix transposed; `op(B)` the
            // packed `k × n` matrix itself.
            operands[o] = (to, strides(o == 0, p.pitch));
        }
        let [(a_at, (a_row, a_col)), (b_at, (b_row, b_col))] = operands;
        // SAFETY: `enqueue_products`' contract: the views lie inside their
        // slices for their shapes and pitches (`Matrix::with_pitch`), the
        // shapes are the Gemm's (checked above), so `op(A)` is readable at
        // `(a_at, a_row, a_col)` (the view, or its packed copy in the
        // scratch, which the packing wrote before on this stream) and
        // likewise `op(B)`; `c` overlaps neither `a` nor `b` (refused
        // above) nor the packed copies (scratch); one product; `plan`'s
        // workspace at `work` in this context's scratch; `m`, `n`, `k` ≥
        // 1; `call` orders the kernel for all three buffers.
        unsafe {
            self.enqueue_products(
                target,
                (plan, (m, n, k)),
                (alpha, beta),
                [(a_at, a_row, a_col), (b_at, b_row, b_col)],
                c,
                (work, Batch::ONE),
            )?
        };
        Ok(())
    }

    /// Enqueues a strided batch of products, `C_i = α · op(A_i) ·
    /// op(B_i) + β · C_i` for every `i < count`, as [`Context::gemm_into`] does
    /// each (shapes, transposes, precision, the BLAS rules and the
    /// accuracy), in one launch: cuBLAS's `SgemmStridedBatched`. Every
    /// matrix of a batch is `gemm`'s shape for its operand; the batches'
    /// strides are free, and an input's may be 0 (one `A` for every
    /// product); the outputs share no element ([`MatrixBatchMut`] checks
    /// it when made) and no byte with the inputs' spans.
    ///
    /// One launch runs the tiles of every product, so a batch of small
    /// products fills the GPU as one large product does (and one too
    /// small for that splits `k` as one product would). No operand is
    /// packed or copied: [`GemmVariant::Tf32Tma`] reads the batches in
    /// place through 3-dimensional tensor maps where `A` is stored `m ×
    /// k`, rows and strides are multiples of 4 elements on 16 bytes and
    /// each matrix starts after the previous one's rows (dense batches
    /// do); other batches run [`TMA_FALLBACK`]'s kernel, and
    /// [`GemmVariant::Tf32x3Tma`] runs [`TMA_X3_FALLBACK`]'s.
    ///
    /// ```no_run
    /// # fn main() -> warpspeed::Result<()> {
    /// use warpspeed::gemm::{Gemm, Precision};
    /// use warpspeed::{MatrixBatch, MatrixBatchMut};
    /// let ctx = warpspeed::Context::new(0)?;
    /// let (count, side) = (1000, 64);
    /// let a = ctx.zeros::<f32>(count * side * side)?;
    /// let b = ctx.zeros::<f32>(count * side * side)?;
    /// let mut c = ctx.zeros::<f32>(count * side * side)?;
    /// let gemm = Gemm::new(side, side, side).precision(Precision::Tf32);
    /// ctx.gemm_batched_into(
    ///     &gemm,
    ///     1.0,
    ///     &MatrixBatch::new(&a, side, side, count)?,
    ///     &MatrixBatch::new(&b, side, side, count)?,
    ///     0.0,
    ///     &mut MatrixBatchMut::new(&mut c, side, side, count)?,
    /// )?
    /// .wait()?;
    /// # Ok(()) }
    /// ```
    ///
    /// With `k = 0` or `α = 0` (and `β ≠ 1`), each `C_i = β · C_i` is a
    /// small launch of its own.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] for batches of different counts;
    /// otherwise as [`Context::gemm_into`], all before any launch.
    pub fn gemm_batched_into<'a>(
        &'a self,
        gemm: &Gemm,
        alpha: f32,
        a: &MatrixBatch<'_, f32>,
        b: &MatrixBatch<'_, f32>,
        beta: f32,
        c: &mut MatrixBatchMut<'_, f32>,
    ) -> Result<Pending<'a>> {
        self.ensure_alive()?;
        let count = c.count();
        for (what, given) in [
            ("the batched GEMM's A (matrices)", a.count()),
            ("the batched GEMM's B (matrices)", b.count()),
        ] {
            if given != count {
                return Err(Error::LengthMismatch {
                    what,
                    expected: count,
                    given,
                });
            }
        }
        let (variant, _call) = self.begin(
            gemm,
            "batched GEMM",
            [
                ((a.width(), a.height()), a.span()),
                ((b.width(), b.height()), b.span()),
                ((c.width(), c.height()), c.span()),
            ],
            ([a.data(), b.data()], c.data()),
        )?;
        if count == 0 {
            return Ok(Pending::new(self));
        }
        // The first matrix of each input batch (each holds one), for the
        // plan.
        let (a_first, b_first) = (a.first()?, b.first()?);
        // SAFETY: `enqueue_batch`'s contract: each batch lies inside its
        // slice, matrix `i` at `i · stride` of the batch's shape and
        // pitch (`MatrixBatch::with_strides`), the shapes the Gemm's
        // (checked above); no two outputs share an element
        // (`MatrixBatchMut::with_strides`), and none a byte with the
        // inputs (refused above); `call` orders the kernels for all three
        // buffers.
        unsafe {
            self.enqueue_batch(
                gemm,
                variant,
                (alpha, beta),
                ([&a_first, &b_first], [a.stride(), b.stride()]),
                (c.address(), c.pitch(), c.stride()),
                count,
            )?
        };
        Ok(Pending::new(self))
    }

    /// Enqueues `C_i = α · op(A_i) · op(B_i) + β · C_i` for every `i` of
    /// three lists of views of one product's shapes, as
    /// [`Context::gemm_into`] does each: a batch whose matrices lie
    /// anywhere. Where each list's views share their pitch and follow one
    /// another at one stride (views cut from one buffer at equal steps),
    /// the products run as one strided batch, as
    /// [`Context::gemm_batched_into`] runs them; otherwise one after the
    /// other.
    ///
    /// No two outputs may share a byte, nor an output and an input
    /// (inputs may overlap each other): outputs whose matrices interleave
    /// within rows, which [`MatrixBatchMut`] takes, share bytes of their
    /// spans here, and are refused.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] for lists of different lengths;
    /// [`Error::InvalidArgument`] for outputs that share a byte with each
    /// other or with an input; otherwise as [`Context::gemm_into`]; all
    /// before any launch.
    pub fn gemm_each_into<'a>(
        &'a self,
        gemm: &Gemm,
        alpha: f32,
        a: &[Matrix<'_, f32>],
        b: &[Matrix<'_, f32>],
        beta: f32,
        c: &mut [MatrixMut<'_, f32>],
    ) -> Result<Pending<'a>> {
        self.ensure_alive()?;
        let count = c.len();
        for (what, given) in [
            ("the GEMM list's A (matrices)", a.len()),
            ("the GEMM list's B (matrices)", b.len()),
        ] {
            if given != count {
                return Err(Error::LengthMismatch {
                    what,
                    expected: count,
                    given,
                });
            }
        }
        // The step, refused where the module lacks it (an empty list too,
        // as every product call), then each product's shapes.
        let own = [gemm.a_shape(), gemm.b_shape(), gemm.c_shape()];
        let variant = self.checked_step(gemm, own)?;
        for ((a, b), c) in a.iter().zip(b).zip(c.iter()) {
            let shapes = [
                (a.width(), a.height()),
                (b.width(), b.height()),
                (c.width(), c.height()),
            ];
            self.checked_step(gemm, shapes)?;
        }
        if count == 0 {
            return Ok(Pending::new(self));
        }
        // Outputs apart from each other, then from every input: sorted by
        // start, disjoint outputs have sorted ends too, so the last one
        // starting before an input's end is the one it could meet.
        let mut outputs: Vec<Span> = c.iter().map(|c| c.span()).collect();
        outputs.sort_by_key(|s| s.start);
        for pair in outputs.windows(2) {
            refuse_overlap("GEMM list", ("C", pair[1]), ("C", pair[0]))?;
        }
        for (what, x) in a.iter().map(|x| ("A", x)).chain(b.iter().map(|x| ("B", x))) {
            let span = x.span();
            let before = outputs.partition_point(|o| o.start < span.end);
            if let Some(&output) = before.checked_sub(1).map(|i| &outputs[i]) {
                refuse_overlap("GEMM list", ("C", output), (what, span))?;
            }
        }
        let mut call = Call::new(self);
        for x in a.iter().chain(b) {
            call.read(x.data())?;
        }
        for x in c.iter() {
            call.write(x.data())?;
        }
        let views = |x: &[Matrix<'_, f32>]| progression(x.iter().map(|x| (x.address(), x.pitch())));
        let strided = (
            views(a),
            views(b),
            progression(c.iter().map(|c| (c.address(), c.pitch()))),
        );
        match strided {
            (Some(a_stride), Some(b_stride), Some(c_stride)) if count > 1 => {
                // SAFETY: `enqueue_batch`'s contract: product `z`'s
                // operands, `z` strides after the first, are the views
                // `a[z]`, `b[z]` and `c[z]` themselves (one pitch each,
                // addresses `z` strides apart), each inside its slice for
                // its shape (the Gemm's, checked above); no two outputs
                // share a byte, nor an output and an input (refused
                // above); `call` orders the kernels for every view.
                unsafe {
                    self.enqueue_batch(
                        gemm,
                        variant,
                        (alpha, beta),
                        ([&a[0], &b[0]], [a_stride, b_stride]),
                        (c[0].address(), c[0].pitch(), c_stride),
                        count,
                    )?
                };
            }
            _ => {
                for ((a, b), c) in a.iter().zip(b).zip(c.iter()) {
                    // SAFETY: `enqueue_one`'s contract for each product:
                    // views inside their slices, of the Gemm's shapes, the
                    // output apart from every input (all checked above);
                    // `call` orders the kernels for every view.
                    unsafe {
                        self.enqueue_one(
                            gemm,
                            variant,
                            alpha,
                            [a, b],
                            beta,
                            (c.address(), c.pitch()),
                        )?
                    };
                }
            }
        }
        Ok(Pending::new(self))
    }

    /// Enqueues `count` products of `gemm`, run as `variant`, `C_z = α ·
    /// op(A_z) · op(B_z) + β · C_z`, product `z`'s operands `z` strides
    /// after the first (`first`: `A_0`, `B_0` and the strides of `A` and
    /// `B`; `c`: `C_0`'s address, pitch and stride), in one launch where
    /// a kernel takes them all.
    ///
    /// # Safety
    /// `count ≥ 1`; for every `z < count`, `A_z` and `B_z` (the first
    /// matrices' shapes, which are `gemm`'s, and pitches, moved on by `z`
    /// strides) lie in device memory, and so does `C_z` (`gemm`'s `C`
    /// shape), writable; no two `C_z` share an element, and none a byte
    /// with any `A_z` or `B_z`; the caller's `Call` orders the kernels
    /// for all of them; `variant` runs on the loaded module (checked).
    unsafe fn enqueue_batch(
        &self,
        gemm: &Gemm,
        variant: GemmVariant,
        (alpha, beta): (f32, f32),
        ([a_first, b_first], [a_stride, b_stride]): ([&Matrix<'_, f32>; 2], [usize; 2]),
        (c_address, c_pitch, c_stride): (u64, usize, usize),
        count: usize,
    ) -> Result<()> {
        let (m, n, k) = (gemm.m, gemm.n, gemm.k);
        let target = self.info().ptx_target;
        let device = self.plan_device()?;
        let batch = Some((count, [a_stride, b_stride]));
        let plan = match Plan::new(
            gemm,
            variant,
            (alpha, beta),
            [a_first, b_first],
            batch,
            c_address.is_multiple_of(8) && c_pitch.is_multiple_of(2) && c_stride.is_multiple_of(2),
            &device,
        ) {
            Plan::Nothing => return Ok(()),
            Plan::Scale => {
                for i in 0..count {
                    let at = c_address + (4 * i * c_stride) as u64;
                    // SAFETY: `C_i`, `m × n` with pitch `c_pitch` at `at`,
                    // writable (the caller's contract; both sides below
                    // 2^32, as every view's).
                    unsafe { self.enqueue_scale((m as u32, n as u32), beta, (at, c_pitch))? };
                }
                return Ok(());
            }
            Plan::Tma(operands) => {
                let c = (c_address, c_pitch);
                return self.gemm_tma(gemm, alpha, operands, beta, c, (count, c_stride));
            }
            // A batch of one (`Plan::new` plans step 14 for no other).
            Plan::TmaX3 { width } => {
                return self.gemm_tma_x3(
                    gemm,
                    alpha,
                    [a_first, b_first],
                    beta,
                    (c_address, c_pitch),
                    width,
                );
            }
            Plan::Strided { plan, .. } => plan,
        };
        product_grid(m, n, plan.blocks(m, n))?;
        // The workspace of a split batch: its tiles numbered across the
        // products (`split_slices` splits only where they number fewer
        // than the block slots, so fewer than `SPLIT_TICKETS`).
        let split_words = split_words(
            plan.tile_count(m, n).saturating_mul(count),
            plan.slices,
            (plan.tiles.tile_m * plan.tiles.tile_n) as usize,
        );
        let work = match split_words {
            0 => 0,
            words => self.scratch(SPLIT_OFFSET + words * size_of::<f32>())? + SPLIT_OFFSET as u64,
        };
        let operand = |x: &Matrix<'_, f32>, transposed| {
            let (row, col) = strides(transposed, x.pitch());
            (x.address(), row, col)
        };
        // SAFETY: `enqueue_products`' contract, the caller's: product
        // `z`'s `op(A)` is readable through the strides at `a + 4·z·
        // a_stride`, likewise `op(B)`, and `C_z` is writable at `c + 4·z·
        // c_stride`, none overlapping an output; `m`, `n`, `k` ≥ 1 (else
        // the plan is `Nothing` or `Scale`); the workspace of the batch's
        // tiles at `work` in this context's scratch.
        unsafe {
            self.enqueue_products(
                target,
                (plan, (m, n, k)),
                (alpha, beta),
                [
                    operand(a_first, gemm.transpose_a),
                    operand(b_first, gemm.transpose_b),
                ],
                (c_address, c_pitch),
                (
                    work,
                    Batch {
                        count,
                        a: a_stride,
                        b: b_stride,
                        c: c_stride,
                    },
                ),
            )
        }
    }

    /// The checks every product makes before it enqueues anything, and
    /// its `Call`: the operands' shapes (`(width, height)` of each matrix
    /// of `[a, b, c]`) are the product's, the loaded module has the
    /// step's instructions, and `C`'s span shares no byte with `A`'s or
    /// `B`'s; then `A` and `B` are read and `C` written by whatever the
    /// call enqueues (packing, scaling, the product), ordered for the
    /// buffers also when a later step fails. Returns the step that runs.
    #[allow(clippy::type_complexity)]
    fn begin<'c>(
        &'c self,
        gemm: &Gemm,
        family: &str,
        [(a, a_span), (b, b_span), (c, c_span)]: [((usize, usize), Span); 3],
        (reads, write): ([&View<'c, f32>; 2], &ViewMut<'c, f32>),
    ) -> Result<(GemmVariant, Call<'c>)> {
        let variant = self.checked_step(gemm, [a, b, c])?;
        refuse_overlap(family, ("C", c_span), ("A", a_span))?;
        refuse_overlap(family, ("C", c_span), ("B", b_span))?;
        let mut call = Call::new(self);
        for read in reads {
            call.read(read)?;
        }
        call.write(write)?;
        Ok((variant, call))
    }

    /// The step that runs `gemm` here, once the shapes (`(width, height)`
    /// of `[a, b, c]`) are the product's and the loaded module has the
    /// step's instructions.
    fn checked_step(&self, gemm: &Gemm, [a, b, c]: [(usize, usize); 3]) -> Result<GemmVariant> {
        for (what, expected, given) in [
            ("the GEMM's A", gemm.a_shape(), a),
            ("the GEMM's B", gemm.b_shape(), b),
            ("the GEMM's C", gemm.c_shape(), c),
        ] {
            if given != expected {
                return Err(Error::ShapeMismatch {
                    what,
                    expected,
                    given,
                });
            }
        }
        let variant = self.gemm_variant(gemm);
        let instead = match variant.needs() {
            Needs::Sm90a => "Gemm::precision picks the fastest step the device has",
            _ => "Precision::Fp32 runs everywhere",
        };
        crate::ptx::require(
            variant.needs(),
            self.info().ptx_target,
            variant.name(),
            instead,
        )?;
        Ok(variant)
    }

    /// Enqueues `C = β · C` over `m × n` (zeros for `β = 0`, without
    /// reading `C`): `gemm_scale`, which reads neither operand.
    ///
    /// # Safety
    /// `C`, `m × n` with pitch `c.1` at `c.0`, is writable (and readable
    /// unless `β = 0`) device memory ordered for the stream by the
    /// caller's `Call`.
    unsafe fn enqueue_scale(&self, (m, n): (u32, u32), beta: f32, c: (u64, usize)) -> Result<()> {
        let info = self.info();
        let grid = grid_stride_blocks(
            m as usize * n as usize, // no overflow: both are below 2^32
            SCALE_BLOCK,
            info.multiprocessors,
            info.max_threads_per_multiprocessor,
        );
        let args = ScaleArgs {
            m,
            n,
            beta,
            c: DevPtrMut::new(c.0),
            ldc: c.1,
        };
        // SAFETY: the kernel's contract, the caller's: `C`, `m × n` with
        // pitch `ldc`, writable (and readable); any 1D grid (a grid-stride
        // loop over `m · n`, which fits `usize`).
        unsafe {
            self.launch(
                gemm_scale::entry::<f32>(),
                LaunchConfig::linear(grid, SCALE_BLOCK, 0),
                &args,
            )
        }
    }

    /// The device facts a [`Plan`] takes: the SMs, and how many blocks
    /// of [`split_launch`]'s entry one SM holds (asked of the driver once
    /// per context).
    fn plan_device(&self) -> Result<Device> {
        let (entry, tiles) = split_launch();
        Ok(Device {
            sms: self.info().multiprocessors,
            resident: self.blocks_per_sm(entry, tiles.threads, tiles.shared_bytes)?,
        })
    }

    /// Enqueues `plan`'s kernel for `batch.count` products of `m × n ×
    /// k`: the grid's `y` is the product, in launches of at most the
    /// device's grid height.
    ///
    /// # Safety
    /// The kernels' contract (`warpspeed_gpu::gemm`'s `Operands`) for every
    /// product `z < batch.count`: `op(A)` readable at `a.0 + 4·z·batch.a`
    /// with the strides `(a.1, a.2)`, `op(B)` likewise, `C` writable at
    /// `c.0 + 4·z·batch.c` with pitch `c.1`, overlapping neither, no two
    /// products' `C` sharing an element; `m`, `n`, `k` ≥ 1; `plan`'s
    /// workspace for the tiles of the whole batch at `work` (its tickets
    /// zero, reset by each split launch) in this context's scratch, which
    /// nothing else enqueued meanwhile uses; the buffers ordered for the
    /// stream by the caller's `Call`.
    unsafe fn enqueue_products(
        &self,
        target: &str,
        (plan, (m, n, k)): (GemmPlan, (usize, usize, usize)),
        (alpha, beta): (f32, f32),
        [a, b]: [(u64, usize, usize); 2],
        c: (u64, usize),
        (work, batch): (u64, Batch),
    ) -> Result<()> {
        // The same tiles, threads, shared memory and slices: the grid and
        // the workspace hold.
        let plan = plan.on_operands(target, (m, n, k), a, b, c, [batch.a, batch.b, batch.c]);
        let grid = product_grid(m, n, plan.blocks(m, n))?;
        let cfg = LaunchConfig::linear(grid, plan.tiles.threads, plan.tiles.shared_bytes);
        let rows = self.info().max_grid.1.max(1) as usize;
        let mut first = 0;
        while first < batch.count {
            let count = (batch.count - first).min(rows);
            let at = |x: u64, stride: usize| x + (4 * first * stride) as u64;
            let args = GemmArgs {
                // Below 2^32: each equals a side of a view, and views have
                // sides below 2^32.
                m: m as u32,
                n: n as u32,
                k: k as u32,
                alpha,
                a: DevPtr::new(at(a.0, batch.a)),
                a_row: a.1,
                a_col: a.2,
                b: DevPtr::new(at(b.0, batch.b)),
                b_row: b.1,
                b_col: b.2,
                beta,
                c: DevPtrMut::new(at(c.0, batch.c)),
                ldc: c.1,
                // At most `k / MIN_SLICE_K` slices, `k` below 2^32.
                slices: plan.slices as u32,
                work: DevPtrMut::new(work),
                batch_a: batch.a,
                batch_b: batch.b,
                batch_c: batch.c,
            };
            // Below the device's grid height.
            let cfg = LaunchConfig {
                grid: (cfg.grid.0, count as u32),
                ..cfg
            };
            // SAFETY: the caller's contract for products `first ..
            // first + count`, which this launch's grid rows are (its
            // operands start `first` products on); a grid of exactly
            // `plan.blocks(m, n)` blocks in `x` of `plan.tiles.threads`
            // threads with `plan.tiles.shared_bytes` of dynamic shared
            // memory (the launch opts in beyond 48 KiB and checks the
            // device's limits); a split plan's launches follow each other
            // on the stream, each leaving the tickets zero for the next;
            // the tensor-core steps only on PTX for sm_80 or newer (the
            // callers check), and the whole-tile entries only where
            // `takes_whole_tiles` (or, `A` transposed on the way in,
            // `takes_whole_rows`) holds for every product on such PTX
            // (`on_operands`; they trap otherwise, before any copy).
            unsafe { self.launch(plan.entry, cfg, &args)? };
            first += count;
        }
        Ok(())
    }
}

/// How the products of a launch follow one another: their count and the
/// elements from one to the next in `A`, `B` and `C`.
#[derive(Clone, Copy, Debug)]
struct Batch {
    count: usize,
    a: usize,
    b: usize,
    c: usize,
}

impl Batch {
    /// A single product.
    const ONE: Batch = Batch {
        count: 1,
        a: 0,
        b: 0,
        c: 0,
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_gemm_is_fp32_with_the_fastest_step() {
        let g = Gemm::new(3, 4, 5);
        assert_eq!((g.m(), g.n(), g.k()), (3, 4, 5));
        assert_eq!(g.get_variant(), GemmVariant::DEFAULT);
        assert_eq!(g.get_precision(), Precision::Fp32);
        assert!(!g.get_transpose_a() && !g.get_transpose_b());
        assert_eq!(g.flops(), 120.0);
    }

    #[test]
    fn builders_set_what_they_name() {
        let g = Gemm::new(3, 4, 5).transpose_a(true);
        assert!(g.get_transpose_a() && !g.get_transpose_b());
        let g = g.transpose_b(true).transpose_a(false);
        assert!(!g.get_transpose_a() && g.get_transpose_b());
        for (p, v) in [
            (Precision::Fp32, GemmVariant::DEFAULT),
            (Precision::Tf32, GemmVariant::Tf32),
            (Precision::Tf32x3, GemmVariant::Tf32x3),
        ] {
            let g = Gemm::new(1, 1, 1).precision(p);
            assert_eq!((g.get_variant(), g.get_precision()), (v, p));
        }
        for &v in GemmVariant::ALL {
            let g = Gemm::new(1, 1, 1).precision(Precision::Tf32).variant(v);
            assert_eq!((g.get_variant(), g.get_precision()), (v, v.precision()));
        }
    }

    #[test]
    fn operand_shapes_follow_the_transposes() {
        // (width, height): A is m × k (k wide), B k × n, C m × n.
        let g = Gemm::new(2, 3, 5);
        assert_eq!(
            (g.a_shape(), g.b_shape(), g.c_shape()),
            ((5, 2), (3, 5), (3, 2))
        );
        let t = g.transpose_a(true).transpose_b(true);
        assert_eq!(
            (t.a_shape(), t.b_shape(), t.c_shape()),
            ((2, 5), (5, 3), (3, 2))
        );
    }

    #[test]
    fn packing_takes_the_operands_stored_along_k() {
        use GemmVariant::*;
        let big = PACK_MIN_SIDE;
        let nn = Gemm::new(big, big, 64);
        // Auto: the FP32 step's operands stored along k, where the other
        // side is long enough.
        assert_eq!(Packing::Auto.packs(Pipelined, &nn), [true, false]);
        assert_eq!(
            Packing::Auto.packs(Pipelined, &nn.transpose_a(true)),
            [false, false]
        );
        let nt = nn.transpose_b(true);
        assert_eq!(Packing::Auto.packs(Pipelined, &nt), [true, true]);
        assert_eq!(
            Packing::Auto.packs(Pipelined, &nt.transpose_a(true)),
            [false, true]
        );
        let short = Gemm::new(big - 1, big - 1, 64).transpose_b(true);
        assert_eq!(Packing::Auto.packs(Pipelined, &short), [false, false]);
        assert_eq!(
            Packing::Auto.packs(Pipelined, &Gemm::new(big - 1, big, 64)),
            [true, false]
        );
        assert_eq!(Packing::Auto.packs(Tf32Wgmma, &nt), [true, true]);
        for &v in GemmVariant::ALL
            .iter()
            .filter(|&&v| v != Pipelined && v != Tf32Wgmma)
        {
            assert_eq!(Packing::Auto.packs(v, &nt), [false, false], "{v:?}");
        }
        // Always: every operand stored along k, any step and size; Never: none.
        let tiny = Gemm::new(1, 1, 1).transpose_b(true);
        assert_eq!(Packing::Always.packs(Naive, &tiny), [true, true]);
        assert_eq!(
            Packing::Always.packs(Tf32, &tiny.transpose_a(true)),
            [false, true]
        );
        assert_eq!(Packing::Never.packs(Pipelined, &nt), [false, false]);
        assert_eq!(Gemm::new(1, 1, 1).get_packing(), Packing::Auto);
        assert_eq!(tiny.packing(Packing::Never).get_packing(), Packing::Never);
    }

    #[test]
    fn packed_operands_follow_the_split_workspace() {
        use crate::context::scratch::{PARTIALS_OFFSET, packed_offset};
        use warpspeed_gpu::gemm::SPLIT_TICKETS;
        // Never over the split's tickets, which must stay zero.
        assert_eq!(packed_offset(0), PARTIALS_OFFSET.next_multiple_of(256));
        let words = SPLIT_TICKETS + 3 * 8192 + 1;
        assert!(packed_offset(words) >= SPLIT_OFFSET + words * 4);
        assert!(packed_offset(words).is_multiple_of(256));
    }

    #[test]
    fn strides_address_op_x() {
        // X is 2 × 3 with pitch 4: X[r][c] at r·4 + c.
        let at = |(row, col): (usize, usize), i: usize, j: usize| i * row + j * col;
        assert_eq!(at(strides(false, 4), 1, 2), 6); // op(X)[1][2] = X[1][2]
        assert_eq!(at(strides(true, 4), 2, 1), 6); // op(X)[2][1] = Xᵀ[2][1] = X[1][2]
    }

    #[test]
    fn tensor_cores_need_sm80_ptx_and_wgmma_sm90a() {
        let tensor = Needs::Sm80;
        assert!(!tensor.met_by("sm_70") && !tensor.met_by("sm_75"));
        assert!(tensor.met_by("sm_80") && tensor.met_by("sm_90") && tensor.met_by("sm_90a"));
        assert!(tensor.met_by("sm_100") && !tensor.met_by("compute_90"));
        let wgmma = Needs::Sm90a;
        assert!(wgmma.met_by("sm_90a"));
        assert!(!wgmma.met_by("sm_90") && !wgmma.met_by("sm_80") && !wgmma.met_by("sm_100a"));
        for &v in GemmVariant::ALL {
            assert_eq!(
                v.needs() == Needs::Any,
                v.precision() == Precision::Fp32,
                "{v:?}"
            );
        }
    }

    #[test]
    fn a_precision_runs_its_fastest_step_on_the_device() {
        use GemmVariant::*;
        for (p, portable, hopper) in [
            (Precision::Fp32, Pipelined, Pipelined),
            (Precision::Tf32, Tf32, Tf32Tma),
            (Precision::Tf32x3, Tf32x3, Tf32x3Tma),
        ] {
            assert_eq!(GemmVariant::fastest_for(p, "sm_90a"), hopper);
            for target in ["sm_70", "sm_80", "sm_90"] {
                assert_eq!(GemmVariant::fastest_for(p, target), portable);
            }
            let gemm = Gemm::new(8, 8, 8).precision(p);
            assert_eq!(gemm.get_variant(), portable);
            assert_eq!(gemm.step_on("sm_90a"), hopper);
            assert_eq!(gemm.variant(portable).step_on("sm_90a"), portable);
        }
    }

    #[test]
    fn views_at_equal_steps_make_a_progression() {
        let p = |v: &[(u64, usize)]| progression(v.iter().copied());
        assert_eq!(p(&[]), Some(0));
        assert_eq!(p(&[(64, 7)]), Some(0));
        assert_eq!(p(&[(64, 7), (64 + 40, 7), (64 + 80, 7)]), Some(10));
        assert_eq!(p(&[(64, 7), (64, 7), (64, 7)]), Some(0)); // one input, repeated
        assert_eq!(p(&[(64, 7), (104, 7), (148, 7)]), None); // unequal steps
        assert_eq!(p(&[(64, 7), (104, 8)]), None); // another pitch
        assert_eq!(p(&[(104, 7), (64, 7)]), None); // backwards
        assert_eq!(p(&[(64, 7), (66, 7)]), None); // half an element
    }

    #[test]
    fn grids_are_planned_within_limits() {
        assert_eq!(product_grid(1, 1, 1).unwrap(), 1);
        assert_eq!(product_grid(7, 7, u32::MAX as usize).unwrap(), u32::MAX);
        assert!(matches!(
            product_grid(1 << 32, 1 << 32, 1 << 32),
            Err(Error::InvalidArgument(_))
        ));
    }

    #[test]
    fn every_step_plans_a_launch_with_an_entry() {
        use GemmVariant::Tf32Tma;
        assert_eq!(
            gemm_tma_tf32::entry::<f32>().kernel().name,
            format!("{}_f32", Tf32Tma.shape().kernel)
        );
        for &v in GemmVariant::ALL {
            for (m, n) in [(1, 1), (17, 33), (4096, 4096)] {
                let plan = v.plan(m, n, 1000, 132, 2);
                // The TMA step launches its own kernel; its plan is the
                // fallback's.
                let planned = match v {
                    Tf32Tma => TMA_FALLBACK,
                    GemmVariant::Tf32x3Tma => TMA_X3_FALLBACK,
                    other => other,
                };
                assert!(plan.entry.kernel().name.starts_with(planned.shape().kernel));
                assert!(plan.blocks(m, n) >= 1);
                let (tm, tn) = (plan.tiles.tile_m as usize, plan.tiles.tile_n as usize);
                assert!(plan.blocks(m, n) * tm * tn >= m * n);
            }
        }
        assert_eq!(gemm_scale::entry::<f32>().kernel().name, "gemm_scale_f32");
    }
}
