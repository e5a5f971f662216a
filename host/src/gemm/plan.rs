//! What one product runs, decided in one place: from the product (shape,
//! transposes, step, α and β), where its operands lie, the batch, and the
//! device (its PTX target, SMs, and how many blocks of the splitting
//! entry an SM holds), [`Plan::new`] chooses nothing at all, the scaling
//! kernel, a matrix times a vector (`m = 1` or `n = 1`), step 13's tensor
//! maps (in place, or after which copy), step 14, or a strided kernel
//! with its tiles, slices of `k` and packing. The
//! device crate says what each kernel can take ([`GemmVariant::plan_batch`],
//! `tma::tma_slices`, `pipelined::takes_whole_tiles`); the context only
//! carries the plan out. Planning reads addresses and shapes, never
//! device memory, so the tests below plan any product without a GPU.

use super::{Gemm, GemmVariant, TMA_FALLBACK, TMA_X3_FALLBACK, TmaTiles};
use crate::matrix::Matrix;
use warpspeed_gpu::gemm::{GemmPlan, gemv, tma, tma_x3};

/// The device facts a plan depends on (the step's instructions are the
/// caller's check).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Device {
    /// Multiprocessors.
    pub sms: u32,
    /// Blocks of `split_launch`'s entry one SM holds (the driver's
    /// occupancy): a split fills them all.
    pub resident: u32,
}

/// What a call runs.
pub(crate) enum Plan<'m> {
    /// `m = 0`, `n = 0`, an empty batch, or `C = 1 · C`: nothing.
    Nothing,
    /// `k = 0` or `α = 0`: `C = β · C` by `gemm_scale`, reading neither
    /// operand.
    Scale,
    /// Step 13's kernel over the tensor maps of these operands.
    Tma(TmaOperands<'m>),
    /// Step 14: the split passes, then its product (one product only)
    /// over tiles `width` columns wide (`tma_x3::TILE_N` or
    /// `tma_x3::NARROW_N`, [`tma_x3_width`]).
    TmaX3 { width: usize },
    /// A kernel that reads the operands through strides: `plan`'s entry,
    /// tiles and slices of `k`, after packing the operands `packs` names
    /// (`[A, B]`): a step's, or for a product of one row or column of `C`
    /// asked for by precision, a matrix times a vector (`gemv`).
    Strided { plan: GemmPlan, packs: [bool; 2] },
}

impl<'m> Plan<'m> {
    /// The plan of `gemm` run as `step` (which the device runs: checked
    /// by the caller), with `α` and `β`, over `[a, b]`; for a strided
    /// batch, `[a, b]` are each batch's first matrix and `batch` is
    /// `Some((count, [A's stride, B's stride]))`. `c_pairs`: whether `C`'s
    /// rows (every product's) lie on 8-byte pairs (its start on 8 bytes,
    /// its pitch and stride even), which the TMA step's stores use.
    pub(crate) fn new(
        gemm: &Gemm,
        step: GemmVariant,
        (alpha, beta): (f32, f32),
        [a, b]: [&'m Matrix<'m, f32>; 2],
        batch: Option<(usize, [usize; 2])>,
        c_pairs: bool,
        device: &Device,
    ) -> Plan<'m> {
        let (m, n, k) = (gemm.m, gemm.n, gemm.k);
        let count = batch.map_or(1, |(count, _)| count);
        if count == 0 || m == 0 || n == 0 {
            return Plan::Nothing;
        }
        if k == 0 || alpha == 0.0 {
            // The reference BLAS's quick return for `β = 1`.
            return if beta == 1.0 {
                Plan::Nothing
            } else {
                Plan::Scale
            };
        }
        // One row or column of `C`, asked for by precision: a matrix
        // times a vector, in `f32` whatever the precision (at least as
        // accurate as the tensor cores), bound by reading the matrix.
        if gemm.by_precision && (m == 1 || n == 1) {
            let a_col = super::strides(gemm.transpose_a, a.pitch()).1;
            let b_row = super::strides(gemm.transpose_b, b.pitch()).0;
            let form = gemv::Form::of(n, a_col, b_row);
            return Plan::Strided {
                plan: gemv::plan(form, (m, n, k), count, device.sms),
                packs: [false; 2],
            };
        }
        // 3xTF32 asked for by precision on one product too small for its
        // split passes to pay, or a batch of products too narrow for its
        // batch kernel's tiles: the FP32 step, at least as accurate.
        let step = match step {
            GemmVariant::Tf32x3Tma if gemm.by_precision && x3_runs_fp32(count, m, n, k) => {
                GemmVariant::Pipelined
            }
            other => other,
        };
        // A batch of one is one product (its stride means nothing).
        let step = match step {
            GemmVariant::Tf32Tma => {
                let operands = match batch {
                    Some((count, strides)) if count > 1 => {
                        TmaOperands::plan_batch(gemm, [a, b], count, strides)
                    }
                    _ => TmaOperands::plan(gemm, a, b),
                };
                match operands {
                    Some(mut operands) => {
                        // The kernel's tiles are `C`'s, or the swapped
                        // kernel's `Cᵀ`'s.
                        let (rows, cols) = if operands.swapped { (n, m) } else { (m, n) };
                        let sms = device.sms as usize;
                        (operands.rows, operands.width) =
                            tma_tile(gemm.tma_tiles, (rows, cols, k), count, c_pairs, sms);
                        return Plan::Tma(operands);
                    }
                    None => TMA_FALLBACK,
                }
            }
            GemmVariant::Tf32x3Tma if count == 1 && m.max(n).max(k) <= TMA_MAX_SIDE => {
                return Plan::TmaX3 {
                    width: tma_x3_width(gemm.tma_tiles, m, n, device.sms as usize),
                };
            }
            GemmVariant::Tf32x3Tma => TMA_X3_FALLBACK,
            other => other,
        };
        // A batch packs nothing: each `A` would be moved for a product
        // too small to pay it back (`PACK_MIN_SIDE`).
        let packs = match batch {
            None => gemm.packing.packs(step, gemm),
            Some(_) => [false; 2],
        };
        Plan::Strided {
            plan: step.plan_batch(count, m, n, k, device.sms, device.resident),
            packs,
        }
    }
}

/// The longest side `min(m, n)` of a 3xTF32 product that
/// [`x3_runs_fp32`] gives to the FP32 step: its split passes read and
/// write the whole of the other operand for a product of few rows. H100,
/// `m × 4096 × 4096` for `m` = 16, 64, 128: 3xTF32 212 to 228 µs, the
/// FP32 step 62 to 106.
pub(super) const X3_FP32_SIDE: usize = 128;
/// The most multiply-adds `m · n · k` of a 3xTF32 product that
/// [`x3_runs_fp32`] gives to the FP32 step. H100, µs, 3xTF32 against the
/// FP32 step: 128³ 17.0 / 11.5, 256³ 19.5 / 13.7, 512³ 25.6 / 17.7, but
/// 1024³ 44.8 / 60.8.
pub(super) const X3_FP32_WORK: usize = 1 << 28;

/// The longest side `min(m, n)` of the products of a 3xTF32 batch that
/// [`x3_runs_fp32`] gives to the FP32 step: a batch runs
/// [`TMA_X3_FALLBACK`]'s 128 × 128 tiles, at least half of each empty
/// there, where the FP32 step takes tiles 64 rows tall or 64 columns
/// wide. H200, 1 024 × 64³: 26.2 µs against step 12's 72.4 (cuBLAS
/// `SgemmStridedBatched` 25.1); 1 024 × 128³ stays on step 12, 121.5
/// against 134.0.
pub(super) const X3_BATCH_FP32_SIDE: usize = 64;

/// Whether `count` [`GemmVariant::Tf32x3Tma`] products of `m × n × k`
/// asked for by their precision run the FP32 step instead. One product:
/// where the split passes and their launches cost more than the tensor
/// cores save (a side of at most [`X3_FP32_SIDE`], or at most
/// [`X3_FP32_WORK`] multiply-adds). A batch: a side of at most
/// [`X3_BATCH_FP32_SIDE`]. The FP32 step's error bound is below 3xTF32's.
pub(super) fn x3_runs_fp32(count: usize, m: usize, n: usize, k: usize) -> bool {
    if count > 1 {
        return m.min(n) <= X3_BATCH_FP32_SIDE;
    }
    m.min(n) <= X3_FP32_SIDE
        || m.checked_mul(n)
            .and_then(|mn| mn.checked_mul(k))
            .is_some_and(|work| work <= X3_FP32_WORK)
}

/// Time of a stage of a tile's column, in 32nds of a wide tile's, for
/// the 128-row tiles: a narrow tile's products read as many shared-memory
/// bytes per multiply-add as the SM's shared memory delivers, the wide
/// tile's about two thirds of that.
const NARROW_RATE: usize = 40;
/// The same for the medium tiles.
const MEDIUM_RATE: usize = 34;
/// The same for the wide tiles.
const WIDE_RATE: usize = 32;
/// The same for the short tiles (64 × 64), in a wave of two blocks an
/// SM: each takes about a narrow tile's time for half its rows, and two
/// of them hide each other's waits better than one narrow block does
/// (H200: 1024³ in 16.8 µs against 18.3 narrow, 256³ 8.6 against 9.2).
const SHORT_RATE: usize = 37;
/// What a split costs per slice and column of the tile, in the units of
/// [`tma_tile`]'s estimate: a partial written to the workspace and read
/// back by the tile's last block, which then stores the tile alone;
/// about a wide stage's time.
const SLICE_COST: usize = 32;
/// The same where `C`'s rows are not on 8-byte pairs: the last block
/// stores the tile element by element, about four wide stages' time.
const SLICE_COST_ELEMENTS: usize = 128;

/// The tiles of step 13's kernels, `(rows, columns)`: 128 rows by
/// `tma::TILE_N`, `tma::MEDIUM_N` or `tma::NARROW_N`, or `tma::SHORT_M`
/// by `tma::NARROW_N` (two blocks an SM), whichever's estimate is lowest,
/// for `count` products of `rows × cols` tiles' sides (`C`'s, or the
/// swapped kernel's `Cᵀ`'s) over `k`, on `sms` SMs: the waves of work
/// units (tiles, and slices of `k` where they do not fill the block
/// slots, `tma::tma_slices`) times each unit's stages and columns at the
/// tile's rate, and each split's partials.
///
/// Short tiles take small products (the SMs run two blocks each) and
/// batches of matrices 64 rows high (half of a 128-row tile would be
/// padding), but not products fewer than 64 columns wide: there most of
/// each short stage's copy of `B` is padding, and the stages of the long
/// operand in flight are fewer (16 × 4096 × 4096: 31.1 µs against 27.1
/// narrow on an H200); nor products whose `C` is off 8-byte pairs, whose
/// every store is an element's (1000 × 999 × 1001 with an odd pitch: 33.8
/// µs against 29.8 narrow). Narrow tiles take other small products and
/// products a few rows wide; medium ones those where half the narrow
/// tiles' operand bytes pay for a split or a second wave (128 rows
/// against a wide matrix); wide tiles, which read the least shared
/// memory per product, everything that fills the SMs without them.
/// [`TmaTiles::Wide`], [`TmaTiles::Medium`], [`TmaTiles::Narrow`] and
/// [`TmaTiles::Short`] choose for themselves (narrower than wide where the
/// tiles stay below 2^30).
pub(super) fn tma_tile(
    tiles: TmaTiles,
    (rows, cols, k): (usize, usize, usize),
    count: usize,
    c_pairs: bool,
    sms: usize,
) -> (usize, usize) {
    let slice_cost = if c_pairs {
        SLICE_COST
    } else {
        SLICE_COST_ELEMENTS
    };
    // In 128 bits: the stages of a long `k` times many waves.
    let estimate = |(tile_rows, width): (usize, usize), rate: usize| {
        let slots = sms.max(1) * tma::blocks_per_sm(tile_rows);
        let tiles = rows.div_ceil(tile_rows) * cols.div_ceil(width) * count;
        let (slices, per) = tma::tma_slices(tiles, k.div_ceil(tma::BK), slots);
        let waves = (tiles * slices).div_ceil(slots);
        let split = if slices > 1 {
            slices * width * slice_cost
        } else {
            0
        };
        (waves * per) as u128 * (width * rate) as u128 + split as u128
    };
    // The kernel's walk counts tiles in 32 bits: fewer than 2^30 (as
    // `TmaOperands::plan` checks for tiles 128 × 128, so the wide and
    // medium ones always are).
    let fits = |(tile_rows, width): (usize, usize)| {
        rows.div_ceil(tile_rows) * cols.div_ceil(width) * count < 1 << 30
    };
    let wide = (tma::TILE_M, tma::TILE_N);
    let medium = (tma::TILE_M, tma::MEDIUM_N);
    let narrow = (tma::TILE_M, tma::NARROW_N);
    let short = (tma::SHORT_M, tma::NARROW_N);
    match tiles {
        TmaTiles::Auto => {
            // The lowest estimate; the earlier tile where two are equal.
            let mut best = (wide, estimate(wide, WIDE_RATE));
            for (tile, rate) in [
                (medium, MEDIUM_RATE),
                (narrow, NARROW_RATE),
                (short, SHORT_RATE),
            ] {
                if !fits(tile) || (tile == short && (cols < tma::NARROW_N || !c_pairs)) {
                    continue;
                }
                let e = estimate(tile, rate);
                if e < best.1 {
                    best = (tile, e);
                }
            }
            best.0
        }
        TmaTiles::Wide => wide,
        TmaTiles::Medium => medium,
        TmaTiles::Narrow if fits(narrow) => narrow,
        TmaTiles::Short if fits(short) => short,
        TmaTiles::Narrow | TmaTiles::Short => wide,
    }
}

/// Time of a narrow 3xTF32 tile's column against a 128-wide one's, in
/// thirds: the narrow tile's products read a third more shared memory
/// per multiply-add.
const X3_NARROW_RATE: usize = 4;
/// The same for the 128-wide tiles.
const X3_WIDE_RATE: usize = 3;

/// The tile width of step 14's kernel (`tma_x3::TILE_N`, or
/// `tma_x3::NARROW_N` where its estimate is lower) for an `m × n` product
/// on `sms` SMs: the waves of tiles times their width at the width's rate
/// (step 14 does not split `k`, so the stages are the same for both).
/// Narrow tiles take the products whose 128-wide tiles leave SMs idle (up
/// to about 1024³). [`TmaTiles::Wide`] and [`TmaTiles::Narrow`] choose for
/// themselves, and [`TmaTiles::Medium`] as `Wide` (its tiles are 128
/// wide).
pub(super) fn tma_x3_width(tiles: TmaTiles, m: usize, n: usize, sms: usize) -> usize {
    let estimate = |width: usize, rate: usize| {
        let tiles = m.div_ceil(tma::TILE_M) * n.div_ceil(width);
        tiles.div_ceil(sms.max(1)) as u128 * (width * rate) as u128
    };
    let narrow = match tiles {
        TmaTiles::Auto => {
            estimate(tma_x3::NARROW_N, X3_NARROW_RATE) < estimate(tma_x3::TILE_N, X3_WIDE_RATE)
        }
        TmaTiles::Wide | TmaTiles::Medium => false,
        TmaTiles::Narrow | TmaTiles::Short => true,
    };
    if narrow {
        tma_x3::NARROW_N
    } else {
        tma_x3::TILE_N
    }
}

/// The largest side (`m`, `n` or `k`) of a [`GemmVariant::Tf32Tma`]
/// product that its tensor maps describe: the copies' coordinates are
/// 32-bit signed, and the last tile's start must fit them.
pub(super) const TMA_MAX_SIDE: usize = (1 << 31) - 256;

/// One operand of a [`GemmVariant::Tf32Tma`] product as its tensor map
/// describes it: `rows` rows of `width` elements (`k`, or `n` for the
/// swapped kernel's `op(B)`), `pitch` apart, at `address` (16-byte
/// aligned, a pitch of a multiple of 4), in place or packed; for a
/// batch, `count` such matrices `stride` elements apart (a multiple of 4,
/// each after the previous one's rows), else a `count` of 1.
#[derive(Clone, Copy, Debug)]
pub(super) struct Mapped {
    pub address: u64,
    pub pitch: usize,
    pub width: usize,
    pub rows: usize,
    pub count: usize,
    pub stride: usize,
}

/// How a [`GemmVariant::Tf32Tma`] product reads an operand.
#[derive(Clone, Copy, Debug)]
pub(super) enum Access {
    /// Mapped where it lies, its rows on 16 bytes: stored along `k` (`A`
    /// untransposed, `B` transposed), or `B` untransposed for the swapped
    /// kernel.
    InPlace(Mapped),
    /// As for `InPlace`, its rows off 16 bytes: copied into the scratch
    /// memory with rows rounded up to 4 elements first.
    Repitched,
    /// Stored the other way: transposed into the scratch memory first.
    Transposed,
}

/// The operands of a [`GemmVariant::Tf32Tma`] product in the kernel's
/// order, each with how it is read: `[op(A), op(B)]`, or for the swapped
/// kernel (`Cᵀ = op(B)ᵀ · op(A)ᵀ`, [`tma`]) `[op(B), op(A)]`.
pub(crate) struct TmaOperands<'m> {
    pub operands: [(&'m Matrix<'m, f32>, Access); 2],
    pub swapped: bool,
    /// Rows and columns of the kernel's tiles ([`tma_tile`]).
    pub rows: usize,
    pub width: usize,
}

impl<'m> TmaOperands<'m> {
    /// `None` where a tensor map cannot describe the product: a side of
    /// [`TMA_MAX_SIDE`] or more, 2^30 tiles or more, or an operand stored along `k` whose
    /// pitch is too long for a pitched copy (2^31 bytes). `B` stored `k ×
    /// n` goes to the swapped kernel where it lies (or repitched); only
    /// where even that copy cannot take it is it transposed.
    pub(super) fn plan(
        gemm: &Gemm,
        a: &'m Matrix<'m, f32>,
        b: &'m Matrix<'m, f32>,
    ) -> Option<Self> {
        // The kernel counts its work in 32 bits: tiles below 2^30.
        let tiles = gemm.m.div_ceil(tma::TILE_M) * gemm.n.div_ceil(tma::TILE_M);
        if gemm.m.max(gemm.n).max(gemm.k) > TMA_MAX_SIDE || tiles >= 1 << 30 {
            return None;
        }
        // `x` as its map reads it: where it lies, repitched, or (not
        // `as_stored`) transposed.
        let place = |x: &Matrix<'_, f32>, as_stored: bool| -> Option<Access> {
            if !as_stored {
                return Some(Access::Transposed);
            }
            if x.address().is_multiple_of(16) && x.pitch().is_multiple_of(4) && x.pitch() < 1 << 29
            {
                return Some(Access::InPlace(Mapped {
                    address: x.address(),
                    pitch: x.pitch(),
                    width: x.width(),
                    rows: x.height(),
                    count: 1,
                    stride: 0,
                }));
            }
            // The pitched copy's pitches in bytes below 2^31.
            (x.pitch().max(x.width().next_multiple_of(4)) < 1 << 29).then_some(Access::Repitched)
        };
        let a_access = place(a, !gemm.transpose_a)?;
        let swapped = match gemm.transpose_b {
            false => place(b, true),
            true => None,
        };
        if let Some(b_access) = swapped {
            return Some(TmaOperands {
                operands: [(b, b_access), (a, a_access)],
                swapped: true,
                rows: tma::TILE_M,
                width: tma::TILE_N,
            });
        }
        Some(TmaOperands {
            operands: [(a, a_access), (b, place(b, gemm.transpose_b)?)],
            swapped: false,
            rows: tma::TILE_M,
            width: tma::TILE_N,
        })
    }
}

impl<'m> TmaOperands<'m> {
    /// The operands of a strided batch of `count` products, each batch's
    /// first matrix `[a, b]` and `strides` `[A's, B's]`, where both can
    /// be mapped in place as 3-dimensional tensors: `A` stored along `k`,
    /// rows and strides on 16 bytes, each matrix after the previous one's
    /// rows (the map's third dimension), the tiles of all products fewer
    /// than 2^30 (the kernel counts its work in 32 bits). `None`
    /// otherwise: the batch then runs [`TMA_FALLBACK`]'s kernel.
    pub(super) fn plan_batch(
        gemm: &Gemm,
        [a, b]: [&'m Matrix<'m, f32>; 2],
        count: usize,
        strides: [usize; 2],
    ) -> Option<Self> {
        let tiles = gemm.m.div_ceil(tma::TILE_M) * gemm.n.div_ceil(tma::TILE_M);
        if gemm.transpose_a
            || gemm.m.max(gemm.n).max(gemm.k) > TMA_MAX_SIDE
            || tiles.checked_mul(count).is_none_or(|t| t >= 1 << 30)
        {
            return None;
        }
        let place = |x: &'m Matrix<'m, f32>, stride: usize| {
            let aligned = x.address().is_multiple_of(16)
                && x.pitch().is_multiple_of(4)
                && x.pitch() < 1 << 29
                && stride.is_multiple_of(4)
                && stride < 1 << 38;
            let stacked = stride >= x.height() * x.pitch();
            (aligned && stacked).then_some((
                x,
                Access::InPlace(Mapped {
                    address: x.address(),
                    pitch: x.pitch(),
                    width: x.width(),
                    rows: x.height(),
                    count,
                    stride,
                }),
            ))
        };
        let (a, b) = (place(a, strides[0])?, place(b, strides[1])?);
        // `B` stored `k × n` goes to the swapped kernel, as for one product.
        let swapped = !gemm.transpose_b;
        Some(TmaOperands {
            operands: if swapped { [b, a] } else { [a, b] },
            swapped,
            rows: tma::TILE_M,
            width: tma::TILE_N,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gemm::Precision;

    /// On 132 SMs: short tiles for products up to about 1024³ and batches
    /// of 64³; narrow ones for products fewer than 64 columns wide
    /// against a long `k` (one decoding step's rows); medium ones for 128
    /// rows against a wide matrix and batches of 128³; wide ones from
    /// 2048³ and for batches of 256³ and up. (As measured on an H200:
    /// the notes' short tiles.)
    #[test]
    fn tma_tiles_by_shape() {
        let tile = |(rows, cols, k): (usize, usize, usize), count: usize| {
            tma_tile(TmaTiles::Auto, (rows, cols, k), count, true, 132)
        };
        let wide = (tma::TILE_M, tma::TILE_N);
        let medium = (tma::TILE_M, tma::MEDIUM_N);
        let narrow = (tma::TILE_M, tma::NARROW_N);
        let short = (tma::SHORT_M, tma::NARROW_N);
        for side in [128, 256, 512, 1000, 1024] {
            assert_eq!(tile((side, side, side), 1), short, "{side}³");
        }
        // `C` off 8-byte pairs (an odd pitch): narrow tiles, which need
        // no split either.
        assert_eq!(
            tma_tile(TmaTiles::Auto, (1000, 999, 1001), 1, false, 132),
            narrow
        );
        for side in [2048, 4096, 8192] {
            assert_eq!(tile((side, side, side), 1), wide, "{side}³");
        }
        // `m × 4096 × 4096` with `B` stored `k × n`: the swapped kernel's
        // tiles are 128 (or 64) columns of `C` by `m` rows.
        for m in [1, 16] {
            assert_eq!(tile((4096, m, 4096), 1), narrow, "m = {m}");
        }
        assert_eq!(tile((4096, 64, 4096), 1), short);
        assert_eq!(tile((4096, 128, 4096), 1), medium);
        assert_eq!(tile((64, 64, 64), 1024), short);
        assert_eq!(tile((128, 128, 128), 1024), medium);
        assert_eq!(tile((256, 256, 256), 1024), wide);
        assert_eq!(tile((512, 512, 512), 256), wide);
        // Asked for: narrow or short unless its tiles would reach 2^30.
        for (asked, got) in [(TmaTiles::Narrow, narrow), (TmaTiles::Short, short)] {
            assert_eq!(tma_tile(asked, (1 << 20, 1 << 19, 8), 1, true, 132), got);
            assert_eq!(tma_tile(asked, (1 << 24, 1 << 20, 8), 1, true, 132), wide);
        }
        let forced = |tiles| tma_tile(tiles, (64, 64, 64), 1, true, 132);
        assert_eq!(forced(TmaTiles::Wide), wide);
        assert_eq!(forced(TmaTiles::Medium), medium);
    }

    /// A product of one row or column of `C` asked for by precision runs
    /// the GEMV kernel of its matrix's layout, whatever the precision,
    /// splitting `k` where its blocks do not give every SM the form's
    /// `per_sm`; one asked for by step runs the step.
    #[test]
    fn one_row_or_column_runs_a_matrix_times_a_vector() {
        // SAFETY: never dereferenced: planning reads addresses and shapes.
        let data = unsafe { crate::memory::View::<f32>::from_raw_parts(0x1000_0000, 1 << 26, 0) };
        let device = Device {
            sms: 132,
            resident: 2,
        };
        let plan = |gemm: Gemm, step: GemmVariant| {
            let (a, b) = (gemm.a_shape(), gemm.b_shape());
            let a = Matrix::new(&data, a.0, a.1).unwrap();
            let b = Matrix::new(&data, b.0, b.1).unwrap();
            match Plan::new(&gemm, step, (1.0, 0.0), [&a, &b], None, true, &device) {
                Plan::Strided { plan, .. } => Some((plan.entry.kernel().name, plan.slices)),
                _ => None,
            }
        };
        for precision in [Precision::Fp32, Precision::Tf32, Precision::Tf32x3] {
            let step = GemmVariant::fastest_for(precision, "sm_90a");
            let gemm = |m, n, ta, tb| {
                Gemm::new(m, n, 4096)
                    .transpose_a(ta)
                    .transpose_b(tb)
                    .precision(precision)
            };
            // `x · W` with `W` stored `k × n`: 128 groups of 32 outputs,
            // unsplit; 32 groups for 1 024 outputs, `k` in 4 slices.
            assert_eq!(
                plan(gemm(1, 4096, false, false), step),
                Some(("gemm_gemv_stream_f32", 1))
            );
            assert_eq!(
                plan(gemm(1, 1024, false, false), step),
                Some(("gemm_gemv_stream_f32", 4))
            );
            // `x · Wᵀ` with `W` stored `n × k`: 512 groups of 8, unsplit.
            assert_eq!(
                plan(gemm(1, 4096, false, true), step),
                Some(("gemm_gemv_dot_f32", 1))
            );
            assert_eq!(
                plan(gemm(4096, 1, false, false), step),
                Some(("gemm_gemv_dot_f32", 1))
            );
            assert_eq!(
                plan(gemm(4096, 1, true, false), step),
                Some(("gemm_gemv_stream_f32", 1))
            );
            // A dot product: one group, `k` in 8 slices of 512.
            assert_eq!(
                plan(gemm(1, 1, false, false), step),
                Some(("gemm_gemv_dot_f32", 8))
            );
        }
        let by_step = Gemm::new(1, 4096, 4096).variant(GemmVariant::Pipelined);
        assert!(
            plan(by_step, GemmVariant::Pipelined)
                .is_some_and(|(name, _)| name.starts_with("gemm_pipelined"))
        );
    }

    /// 3xTF32 asked for by precision runs the FP32 step on products of
    /// few rows or columns and on small ones, step 14 on the rest, and on
    /// batches of products at most 64 rows or columns wide; asked for by
    /// step, step 14 everywhere.
    #[test]
    fn small_3xtf32_products_run_the_fp32_step() {
        for (m, n, k) in [
            (128, 128, 128),
            (512, 512, 512),
            (16, 4096, 4096),
            (4096, 128, 4096),
            (512, 512, 1024),
        ] {
            assert!(x3_runs_fp32(1, m, n, k), "{m} × {n} × {k}");
        }
        for (m, n, k) in [
            (1024, 1024, 1024),
            (1000, 999, 1001),
            (4096, 4096, 4096),
            (129, 4096, 4096),
            (1 << 20, 1 << 20, 1 << 20),
        ] {
            assert!(!x3_runs_fp32(1, m, n, k), "{m} × {n} × {k}");
        }
        // Batches by their products' shorter side.
        assert!(x3_runs_fp32(1024, 64, 64, 64));
        assert!(x3_runs_fp32(2, 4096, 64, 4096));
        assert!(!x3_runs_fp32(1024, 128, 128, 128));
        assert!(!x3_runs_fp32(256, 512, 512, 512));
    }

    /// Step 14 on 132 SMs: narrow tiles up to 1024³ (128-wide ones fill
    /// at most half the SMs there), 128-wide from 2048³.
    #[test]
    fn tma_x3_tiles_by_shape() {
        for side in [128, 512, 1000, 1024] {
            assert_eq!(
                tma_x3_width(TmaTiles::Auto, side, side, 132),
                tma_x3::NARROW_N
            );
        }
        for side in [2048, 4096, 8192] {
            assert_eq!(
                tma_x3_width(TmaTiles::Auto, side, side, 132),
                tma_x3::TILE_N
            );
        }
        assert_eq!(tma_x3_width(TmaTiles::Wide, 64, 64, 132), tma_x3::TILE_N);
        assert_eq!(
            tma_x3_width(TmaTiles::Narrow, 8192, 8192, 132),
            tma_x3::NARROW_N
        );
    }

    /// The TMA step maps an operand stored along `k` where it lies when
    /// its rows are on 16 bytes, copies it to such rows otherwise, and
    /// transposes one stored the other way; sides past what a map's
    /// coordinates reach go to the fallback.
    #[test]
    fn tma_operands_are_mapped_copied_or_transposed() {
        let (m, n, k) = (64, 48, 40);
        let words = vec![0u64; 64 * 1024];
        let at = (words.as_ptr().addr() as u64).next_multiple_of(256);
        // SAFETY: planning reads only the views' addresses and shapes.
        let view = |offset: u64, len: usize| unsafe {
            crate::memory::View::<f32>::from_raw_parts(at + 4 * offset, len, 0)
        };
        let places = |gemm: &Gemm, a: &Matrix<'_, f32>, b: &Matrix<'_, f32>| {
            let plan = TmaOperands::plan(gemm, a, b).unwrap();
            plan.operands.map(|(_, access)| match access {
                Access::InPlace(_) => "in place",
                Access::Repitched => "repitch",
                Access::Transposed => "transpose",
            })
        };
        let a_data = view(0, m * k);
        let b_data = view(0, n * k);
        let a = Matrix::new(&a_data, k, m).unwrap();
        let b_t = Matrix::new(&b_data, k, n).unwrap();
        let b = Matrix::new(&b_data, n, k).unwrap();
        let nt = Gemm::new(m, n, k).transpose_b(true);
        assert_eq!(places(&nt, &a, &b_t), ["in place", "in place"]);
        // `B` stored `k × n`: the swapped kernel, `op(B)` first, in place.
        let nn = Gemm::new(m, n, k);
        assert_eq!(places(&nn, &a, &b), ["in place", "in place"]);
        assert!(TmaOperands::plan(&nn, &a, &b).unwrap().swapped);
        assert!(!TmaOperands::plan(&nt, &a, &b_t).unwrap().swapped);
        // Rows along `k` off 16 bytes: an odd start, a pitch of 41.
        let odd = view(1, m * k);
        let a_odd = Matrix::new(&odd, k, m).unwrap();
        assert_eq!(places(&nt, &a_odd, &b_t), ["repitch", "in place"]);
        let pitched = view(0, m * 41);
        let a_pitched = Matrix::with_pitch(&pitched, k, m, 41).unwrap();
        assert_eq!(places(&nt, &a_pitched, &b_t), ["repitch", "in place"]);
        let tn = Gemm::new(m, n, k).transpose_a(true);
        let a_t_odd = Matrix::new(&odd, m, k).unwrap();
        assert_eq!(places(&tn, &a_t_odd, &b), ["in place", "transpose"]);
        let b_odd = Matrix::new(&odd, n, k).unwrap();
        assert_eq!(places(&tn, &a_t_odd, &b_odd), ["repitch", "transpose"]);
        // A side a map's coordinates do not reach: the fallback.
        let long = Gemm::new(1, 1, TMA_MAX_SIDE + 1).transpose_b(true);
        let a_long_data = view(0, TMA_MAX_SIDE + 1);
        let a_long = Matrix::new(&a_long_data, TMA_MAX_SIDE + 1, 1).unwrap();
        let b_long = Matrix::new(&a_long_data, TMA_MAX_SIDE + 1, 1).unwrap();
        assert!(TmaOperands::plan(&long, &a_long, &b_long).is_none());
    }

    /// A batch is mapped in place as one 3-dimensional tensor per operand
    /// where its rows and strides allow, and otherwise not at all (it
    /// runs the strided kernel).
    #[test]
    fn tma_batches_map_in_place_or_not_at_all() {
        // SAFETY: never dereferenced: planning reads addresses and shapes.
        let data = unsafe { crate::memory::View::<f32>::from_raw_parts(0x1000_0000, 1 << 30, 0) };
        let gemm = Gemm::new(64, 48, 32);
        let a = Matrix::new(&data, 32, 64).unwrap(); // m × k
        let b = Matrix::new(&data, 48, 32).unwrap(); // k × n
        let plan = TmaOperands::plan_batch(&gemm, [&a, &b], 1000, [64 * 32, 32 * 48]).unwrap();
        // `B` stored `k × n`: the swapped kernel, `op(B)` first.
        assert!(plan.swapped);
        let mapped = plan.operands.map(|(_, access)| match access {
            Access::InPlace(m) => (m.rows, m.width, m.count, m.stride),
            _ => panic!("a dense batch is mapped in place"),
        });
        assert_eq!(mapped, [(32, 48, 1000, 32 * 48), (64, 32, 1000, 64 * 32)]);
        let bt = Matrix::new(&data, 32, 48).unwrap(); // n × k
        let plan =
            TmaOperands::plan_batch(&gemm.transpose_b(true), [&a, &bt], 3, [64 * 32, 48 * 32]);
        assert!(plan.is_some_and(|p| !p.swapped));
        for (gemm, strides) in [
            (gemm, [64 * 32 + 2, 32 * 48]), // a stride off 16 bytes
            (gemm, [64 * 32, 32 * 48 - 4]), // matrices that overlap their rows
            (gemm, [0, 32 * 48]),           // one `A` for every product
        ] {
            assert!(
                TmaOperands::plan_batch(&gemm, [&a, &b], 3, strides).is_none(),
                "{strides:?}"
            );
        }
        let at = Matrix::new(&data, 64, 32).unwrap(); // k × m
        assert!(
            TmaOperands::plan_batch(&gemm.transpose_a(true), [&at, &b], 3, [2048, 1536]).is_none()
        );
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            /// Any product, step, scalars and batch, operands anywhere:
            /// the plan runs nothing exactly for an empty product or `C =
            /// 1 · C`, only scales for `k = 0` or `α = 0`; maps only
            /// operands on 16-byte rows, a batch's only in place; runs
            /// step 14 only for one product; otherwise the requested
            /// step's kernel (its fallback's for the tensor-map steps),
            /// packing only a single product's operands as `Packing`
            /// says, and splitting `k` only where the tiles of all the
            /// products leave block slots empty.
            #[test]
            fn plans_choose_what_runs(
                (m, n, k) in (prop_oneof![0usize..200, Just(2048)], 0usize..200, prop_oneof![0usize..200, Just(2048)]),
                transposes in any::<(bool, bool)>(),
                step in 0..GemmVariant::ALL.len(),
                (alpha, beta) in (prop_oneof![Just(0.0f32), Just(1.5)], prop_oneof![Just(0.0f32), Just(1.0), Just(-2.0)]),
                (starts, pads, gaps) in (any::<(bool, bool)>(), (0usize..5, 0usize..5), (0usize..9, 0usize..9)),
                count in prop_oneof![Just(None), (0usize..40).prop_map(Some)],
                (sms, resident) in (prop_oneof![Just(1u32), Just(132)], 1u32..3),
                tiles in prop_oneof![Just(TmaTiles::Auto), Just(TmaTiles::Wide), Just(TmaTiles::Narrow), Just(TmaTiles::Medium), Just(TmaTiles::Short)],
                c_pairs in any::<bool>(),
                by_precision in any::<bool>(),
            ) {
                let step = GemmVariant::ALL[step];
                let gemm = Gemm::new(m, n, k)
                    .transpose_a(transposes.0)
                    .transpose_b(transposes.1)
                    .tma_tiles(tiles);
                let gemm = if by_precision { gemm } else { gemm.variant(step) };
                let ((aw, ah), (bw, bh)) = (gemm.a_shape(), gemm.b_shape());
                let (ap, bp) = (aw + pads.0, bw + pads.1);
                let extent = |w: usize, h: usize, p: usize| if w == 0 || h == 0 { 0 } else { (h - 1) * p + w };
                let strides = [extent(aw, ah, ap) + gaps.0, extent(bw, bh, bp) + gaps.1];
                let words = |x: usize, stride: usize| match count {
                    Some(c) if c > 1 => (c - 1) * stride + x,
                    _ => x,
                };
                // SAFETY: never dereferenced: planning reads addresses and
                // shapes only.
                let view = |start: bool, len: usize| unsafe {
                    crate::memory::View::<f32>::from_raw_parts(0x1000_0000 + 4 * start as u64, len, 0)
                };
                let a_data = view(starts.0, words(extent(aw, ah, ap), strides[0]));
                let b_data = view(starts.1, words(extent(bw, bh, bp), strides[1]));
                let a = Matrix::with_pitch(&a_data, aw, ah, ap).unwrap();
                let b = Matrix::with_pitch(&b_data, bw, bh, bp).unwrap();
                let batch = count.map(|c| (c, strides));
                let device = Device { sms, resident };
                let plan = Plan::new(&gemm, step, (alpha, beta), [&a, &b], batch, c_pairs, &device);
                let products = count.unwrap_or(1);
                let empty = products == 0 || m == 0 || n == 0;
                let scaling = k == 0 || alpha == 0.0;
                match plan {
                    Plan::Nothing => prop_assert!(empty || (scaling && beta == 1.0)),
                    Plan::Scale => prop_assert!(!empty && scaling && beta != 1.0),
                    Plan::Tma(operands) => {
                        prop_assert!(!empty && !scaling && step == GemmVariant::Tf32Tma);
                        let tile = (operands.rows, operands.width);
                        match tiles {
                            TmaTiles::Auto => prop_assert!([(tma::TILE_M, tma::TILE_N), (tma::TILE_M, tma::MEDIUM_N), (tma::TILE_M, tma::NARROW_N), (tma::SHORT_M, tma::NARROW_N)].contains(&tile)),
                            TmaTiles::Wide => prop_assert_eq!(tile, (tma::TILE_M, tma::TILE_N)),
                            TmaTiles::Narrow => prop_assert_eq!(tile, (tma::TILE_M, tma::NARROW_N)),
                            TmaTiles::Medium => prop_assert_eq!(tile, (tma::TILE_M, tma::MEDIUM_N)),
                            TmaTiles::Short => prop_assert_eq!(tile, (tma::SHORT_M, tma::NARROW_N)),
                        }
                        for (x, access) in operands.operands {
                            match access {
                                Access::InPlace(mapped) => {
                                    prop_assert!(mapped.address % 16 == 0 && mapped.pitch % 4 == 0);
                                    prop_assert_eq!(mapped.address, x.address());
                                    prop_assert_eq!(mapped.count, if count.is_some() { products } else { 1 });
                                    if products > 1 {
                                        prop_assert!(mapped.stride % 4 == 0 && mapped.stride >= mapped.rows * mapped.pitch);
                                    }
                                }
                                _ => prop_assert!(products == 1, "a batch is copied nowhere"),
                            }
                        }
                    }
                    Plan::TmaX3 { width } => {
                        prop_assert!(!empty && !scaling && step == GemmVariant::Tf32x3Tma && products == 1);
                        prop_assert!(!by_precision || !x3_runs_fp32(products, m, n, k));
                        match tiles {
                            TmaTiles::Auto => prop_assert!(width == tma_x3::TILE_N || width == tma_x3::NARROW_N),
                            TmaTiles::Wide | TmaTiles::Medium => prop_assert_eq!(width, tma_x3::TILE_N),
                            TmaTiles::Narrow | TmaTiles::Short => prop_assert_eq!(width, tma_x3::NARROW_N),
                        }
                    }
                    Plan::Strided { plan, packs } if by_precision && (m == 1 || n == 1) => {
                        prop_assert!(!empty && !scaling);
                        let form = gemv::Form::of(n, crate::gemm::strides(transposes.0, ap).1, crate::gemm::strides(transposes.1, bp).0);
                        let entry = match form {
                            gemv::Form::Dot => "gemm_gemv_dot",
                            gemv::Form::Stream => "gemm_gemv_stream",
                        };
                        prop_assert!(plan.entry.kernel().name.starts_with(entry));
                        prop_assert_eq!(packs, [false; 2]);
                        prop_assert_eq!(plan.tile_count(m, n), m.max(n).div_ceil(form.block().outputs));
                        if plan.slices > 1 {
                            prop_assert!(plan.tile_count(m, n) * products * plan.slices <= sms as usize * form.block().per_sm);
                            prop_assert!(plan.tile_count(m, n) * products <= warpspeed_gpu::gemm::SPLIT_TICKETS);
                            // No slice empty.
                            prop_assert!((plan.slices - 1) * gemv::slice_k(k, plan.slices) < k);
                        }
                    }
                    Plan::Strided { plan, packs } => {
                        prop_assert!(!empty && !scaling);
                        let runs = match step {
                            GemmVariant::Tf32x3Tma if by_precision && x3_runs_fp32(products, m, n, k) => {
                                GemmVariant::Pipelined
                            }
                            GemmVariant::Tf32Tma => TMA_FALLBACK,
                            GemmVariant::Tf32x3Tma => TMA_X3_FALLBACK,
                            other => other,
                        };
                        prop_assert!(plan.entry.kernel().name.starts_with(runs.shape().kernel));
                        match count {
                            None => prop_assert_eq!(packs, gemm.packing.packs(runs, &gemm)),
                            Some(_) => prop_assert_eq!(packs, [false; 2]),
                        }
                        if plan.slices > 1 {
                            let blocks = plan.tile_count(m, n) * products * plan.slices;
                            prop_assert!(blocks <= (sms * resident) as usize);
                        }
                    }
                }
            }

            /// Any product's operands, at any start, pitch and transpose:
            /// the TMA step's plan never panics; an operand it maps in
            /// place is on 16 bytes with a pitch of a multiple of 4, and it
            /// gives up only for sides past `TMA_MAX_SIDE` or an operand
            /// along `k` whose pitch or `k` reaches 2^29 elements.
            #[test]
            fn tma_plans_map_only_aligned_rows(
                m in prop_oneof![1usize..300, (TMA_MAX_SIDE - 2)..(TMA_MAX_SIDE + 2)],
                n in prop_oneof![1usize..300, (TMA_MAX_SIDE - 2)..(TMA_MAX_SIDE + 2)],
                k in prop_oneof![1usize..300, (TMA_MAX_SIDE - 2)..(TMA_MAX_SIDE + 2)],
                transposes in any::<(bool, bool)>(),
                pads in (0usize..9, 0usize..9),
                starts in (0u64..8, 0u64..8),
                huge_pitch in any::<bool>(),
            ) {
                let gemm = Gemm::new(m, n, k).transpose_a(transposes.0).transpose_b(transposes.1);
                let ((aw, ah), (bw, bh)) = (gemm.a_shape(), gemm.b_shape());
                let pitch = |w: usize, pad: usize| {
                    if huge_pitch { (1 << 29) + pad } else { w + pad }
                };
                let (ap, bp) = (pitch(aw, pads.0), pitch(bw, pads.1));
                // Views of memory that is never touched: planning reads
                // only addresses and shapes.
                let view = |start: u64, pitch: usize, width: usize, height: usize| {
                    let len = pitch.checked_mul(height - 1).and_then(|l| l.checked_add(width));
                    // SAFETY: never dereferenced; see above.
                    len.map(|len| unsafe {
                        crate::memory::View::<f32>::from_raw_parts(0x1000_0000 + 4 * start, len, 0)
                    })
                };
                let (Some(a_data), Some(b_data)) = (view(starts.0, ap, aw, ah), view(starts.1, bp, bw, bh)) else {
                    return Ok(());
                };
                let (Ok(a), Ok(b)) = (
                    Matrix::with_pitch(&a_data, aw, ah, ap),
                    Matrix::with_pitch(&b_data, bw, bh, bp),
                ) else {
                    return Ok(());
                };
                match TmaOperands::plan(&gemm, &a, &b) {
                    Some(plan) => {
                        prop_assert!(m.max(n).max(k) <= TMA_MAX_SIDE);
                        for (x, access) in plan.operands {
                            if let Access::InPlace(mapped) = access {
                                prop_assert!(mapped.address % 16 == 0 && mapped.pitch % 4 == 0);
                                prop_assert_eq!(mapped.address, x.address());
                                prop_assert_eq!(mapped.rows, x.height());
                            }
                        }
                    }
                    None => {
                        // A pitched copy's pitches in bytes stay below 2^31.
                        let long = |x: &Matrix<'_, f32>, along_k: bool| along_k && x.pitch().max(k) >= 1 << 29;
                        let tiles = m.div_ceil(tma::TILE_M) * n.div_ceil(tma::TILE_M);
                        prop_assert!(
                            m.max(n).max(k) > TMA_MAX_SIDE
                                || tiles >= 1 << 30
                                || long(&a, !transposes.0)
                                || long(&b, transposes.1)
                        );
                    }
                }
            }
        }
    }
}
