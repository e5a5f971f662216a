//! SGEMM: every step on 1×1×1 up to 1000×999×1001 with every transpose
//! combination, row pitches (multiples of 4 and not) and views starting at
//! odd element offsets, the fast steps on 1537×1665×129 (128 × 128 tiles),
//! 1540×1668×144 (the whole-tile entry) and 200×300×1000 (`k` split
//! across blocks);
//! every transpose combination with the operands stored along `k` packed
//! first (`Packing::Always`); the fastest step on 4096³, 8192×8192×256 and
//! 256×256×65536 (sampled);
//! `Tf32x3` against the FP32 kernel's own error; the BLAS rules (`k = 0`,
//! `α = 0` with NaN operands, `β = 0` with NaN in `C`, `β ≠ 0`
//! accumulating, empty products); `C = A·Aᵀ` from one view; repeatability;
//! every refusal. Strided batches (`gemm_batched_into`): 0 to 1000
//! products, gaps between matrices, stride 0, heads side by side in one
//! pitch, split `k`; the BLAS rules, repeatability and refusals again.
//! Lists of views (`gemm_each_into`): strided, scattered, repeated, and
//! its refusals. 3xTF32's error against FP32's over `k` up to 10^6.
//!
//! Results are compared with `f64` CPU references within the bounds
//! derived at [`gamma`], entry by entry and normwise. The operands' row
//! padding and offsets hold NaN (a kernel reading outside its views would
//! spread it); `C`'s hold [`PAD`], which must keep its bits; and `C` itself
//! starts as NaN wherever `β = 0`, so an output never written stays NaN and
//! fails, even where values are only sampled.

use crate::common::*;
use libtest_mimic::{Failed, Trial};
use rand::RngExt;
use std::cell::RefCell;
use std::rc::Rc;
use warpspeed::gemm::{Gemm, GemmVariant, Needs, Packing, Precision, TmaTiles};
use warpspeed::{
    Buffer, Context, DeviceRead, Error, Matrix, MatrixBatch, MatrixBatchMut, MatrixMut, ViewMut,
};

/// Written around `C`'s view (its offset and row padding): never a result,
/// and it must keep its bits.
const PAD: f32 = -3.0e38;

/// `f32`'s unit roundoff.
const U: f64 = 1.0 / (1u64 << 24) as f64;

/// Outputs recomputed in `f64` for a sampled check (beside the corners).
const SAMPLES: usize = 2048;

/// The steps the fast cases run.
const FAST: [GemmVariant; 8] = [
    GemmVariant::WarpTiled,
    GemmVariant::Pipelined,
    GemmVariant::Tf32,
    GemmVariant::Tf32x3,
    GemmVariant::Tf32Wgmma,
    GemmVariant::Tf32x3Wgmma,
    GemmVariant::Tf32Tma,
    GemmVariant::Tf32x3Tma,
];

/// The `γ` of the bound `|ĉ_ij − c_ij| ≤ γ · (|α| · Σ_p |a_ip| |b_pj| +
/// |β| · |c⁰_ij|)` for one output of a step of `precision` summing `k`
/// products (`c⁰` the initial `C`).
///
/// FP32 (steps 1 to 8): a step sums the `k` products with fused
/// multiply-adds in an order of its own (one rounding each), then stores
/// `fl(α·s)` or `fma(α, s, fl(β·c⁰))`: at most `k + 2` roundings on any
/// path, each a relative error of at most `u = 2^-24`. Higham (*Accuracy
/// and Stability of Numerical Algorithms*, §3.1) then bounds the error by
/// `γ_{k+2} = (k+2)·u / (1 − (k+2)·u)` times the sum of magnitudes above.
/// Up to the largest `k` tested (10^6, [`tf32x3_long_k`]) `(k+2)·u` is
/// below 0.06, so `γ_{k+2} ≤ 1.07·(k+2)·u`; the `f64` reference errs by
/// about `k·2^-53` relative to the same sum, 2^-29 of that. Hence `c =
/// 2`: `γ = 2·(k+2)·u`, with room.
///
/// Tensor cores: a `mma.sync` adds 8 exact products (TF32 × TF32 fits an
/// `f32`) to its `f32` accumulator, but NVIDIA's tensor cores were measured
/// (Fasi, Higham, Mikaitis and Pranesh, "Numerical behavior of NVIDIA
/// tensor cores", PeerJ CS 2021) to align the addends to the largest and
/// truncate rather than round: each of the 9 addends and the normalisation
/// may lose up to one ulp of the largest, `2u` relative to the magnitudes
/// summed so far. That is `20u` per `mma`, `k/8` of them for `Tf32` and
/// `3k/8` for `Tf32x3` (three per product): `2.5·k·u` and `7.5·k·u`, so
/// `c = 8` for both. On top:
///
/// * `Tf32` rounds each operand to nearest TF32 (11 significant bits,
///   error `≤ 2^-11` relative), so each product is off by up to `2·2^-11 +
///   2^-22` of itself;
/// * `Tf32x3` splits `x = big + small + r` with `|r| ≤ 2^-11·|x − big| ≤
///   2^-22·|x|` and drops `small·small` (`≤ 2^-22·|ab|`): `3·2^-22 = 12u`
///   per product (13u with the second-order terms). Its `k`-proportional
///   part exceeds FP32's `2·(k+2)·u` only through the truncation above;
///   [`tf32x3_against_fp32`] holds it to the project's accuracy target,
///   at most twice the FP32 kernel's error on random data, and
///   [`tf32x3_long_k`] to [`LONG_K_RATIO`] times it over `k = 10^6`.
///
/// [`GemmVariant::Tf32Tma`] hands the tensor cores its operands as they
/// lie, and the tensor cores truncate an `f32` to TF32 (its low 13 bits
/// ignored): an error `< 2^-10` relative per operand, so each product is
/// off by up to `2·2^-10 + 2^-20` of itself ([`gamma_of`]).
fn gamma(precision: Precision, k: usize) -> f64 {
    let k = (k + 2) as f64;
    match precision {
        Precision::Fp32 => 2.0 * k * U,
        Precision::Tf32 => 2f64.powi(-10) + 2f64.powi(-22) + 8.0 * k * U,
        Precision::Tf32x3 => 13.0 * U + 8.0 * k * U,
    }
}

/// The steps whose TF32 operands are truncated rather than rounded.
const TRUNCATING: [GemmVariant; 1] = [GemmVariant::Tf32Tma];

/// [`gamma`] of `step`'s arithmetic, with the truncating steps' operand
/// error in place of rounding's.
pub(crate) fn gamma_of(step: GemmVariant, k: usize) -> f64 {
    let rounded = gamma(step.precision(), k);
    if TRUNCATING.contains(&step) {
        rounded - (2f64.powi(-10) + 2f64.powi(-22)) + 2f64.powi(-9) + 2f64.powi(-20)
    } else {
        rounded
    }
}

/// Whether the loaded PTX runs `step` (the tensor-core steps need sm_80
/// or newer, the `wgmma` ones sm_90a; the library refuses them elsewhere).
fn runs(ctx: &Context, step: GemmVariant) -> bool {
    step.needs().met_by(ctx.info().ptx_target)
}

/// Which steps a case runs.
#[derive(Clone, Copy, Debug)]
enum Steps {
    All,
    /// [`FAST`].
    Fast,
    /// [`GemmVariant::DEFAULT`], what `Gemm::new` uses.
    Default,
}

/// One product: `C = α · op(A) · op(B) + β · C` on views of `A`, `B`
/// (one buffer, `A` first) and `C` (its own buffer).
#[derive(Clone, Debug)]
struct Case {
    m: usize,
    n: usize,
    k: usize,
    ta: bool,
    tb: bool,
    alpha: f32,
    beta: f32,
    /// Elements each row of `A`, `B`, `C` has beyond its width
    /// (`pitch − width`).
    pads: [usize; 3],
    /// Element offsets of the views of `A`, `B`, `C` in their buffers.
    offsets: [usize; 3],
    /// Checks [`SAMPLES`] outputs in `f64` (and every one for being
    /// written) instead of all of them.
    sampled: bool,
    steps: Steps,
    /// Whether operands stored along `k` are packed first.
    packing: Packing,
    /// The key of the [`Batched`] product whose matrices these are, with
    /// their index: their data are the batch's, so their reference must
    /// be cached under a key of their own.
    member: Option<String>,
}

impl Case {
    fn new(m: usize, n: usize, k: usize) -> Case {
        Case {
            m,
            n,
            k,
            ta: false,
            tb: false,
            alpha: 1.0,
            beta: 0.0,
            pads: [0; 3],
            offsets: [0; 3],
            sampled: false,
            steps: Steps::All,
            packing: Packing::Auto,
            member: None,
        }
    }

    fn transposed(self, ta: bool, tb: bool) -> Case {
        Case { ta, tb, ..self }
    }

    fn scaled(self, alpha: f32, beta: f32) -> Case {
        Case {
            alpha,
            beta,
            ..self
        }
    }

    fn padded(self, pads: [usize; 3], offsets: [usize; 3]) -> Case {
        Case {
            pads,
            offsets,
            ..self
        }
    }

    /// Pitches rounded up to multiples of 4 elements (16 bytes): the
    /// kernels' vector paths.
    fn aligned(self) -> Case {
        let pads = [0, 1, 2].map(|o| self.shape(o).0.next_multiple_of(4) - self.shape(o).0);
        Case { pads, ..self }
    }

    fn steps(self, steps: Steps) -> Case {
        Case { steps, ..self }
    }

    /// Every operand stored along `k` packed, whatever the step and size.
    fn packed(self) -> Case {
        Case {
            packing: Packing::Always,
            ..self
        }
    }

    fn sampled(self) -> Case {
        Case {
            sampled: true,
            steps: Steps::Default,
            ..self
        }
    }

    fn gemm(&self) -> Gemm {
        Gemm::new(self.m, self.n, self.k)
            .transpose_a(self.ta)
            .transpose_b(self.tb)
            .packing(self.packing)
    }

    /// `(width, height)` of operand `o` (0: `A`, 1: `B`, 2: `C`).
    fn shape(&self, o: usize) -> (usize, usize) {
        let g = self.gemm();
        [g.a_shape(), g.b_shape(), g.c_shape()][o]
    }

    fn pitch(&self, o: usize) -> usize {
        self.shape(o).0 + self.pads[o]
    }

    /// Elements from the first to the last of operand `o`'s view.
    fn extent(&self, o: usize) -> usize {
        match self.shape(o) {
            (0, _) | (_, 0) => 0,
            (w, h) => (h - 1) * self.pitch(o) + w,
        }
    }

    /// Elements of operand `o`'s buffer (region, for `A` and `B`).
    fn len(&self, o: usize) -> usize {
        self.offsets[o] + self.extent(o)
    }

    /// Where `B`'s region starts in the operands' buffer: after `A`'s, on
    /// a 16-byte boundary (the buffer's start is one), so that an offset of
    /// 0 and a pitch that is a multiple of 4 give `B` the vector paths.
    fn b_base(&self) -> usize {
        self.len(0).next_multiple_of(4)
    }

    /// Elements of all three views (what `WARPSPEED_TEST_MAX_N` caps).
    fn elements(&self) -> usize {
        self.m * self.k + self.k * self.n + self.m * self.n
    }

    /// The operands' cache key (their data depend on nothing else).
    fn key(&self) -> String {
        let key = format!(
            "gemm/{}x{}x{}/{}{}/{:?}/{:?}",
            self.m, self.n, self.k, self.ta, self.tb, self.pads, self.offsets
        );
        match &self.member {
            Some(member) => format!("{key}/{member}"),
            None => key,
        }
    }

    fn name(&self) -> String {
        let t = |x: bool| if x { 't' } else { 'n' };
        let mut name = format!(
            "{}x{}x{}::{}{}",
            self.m,
            self.n,
            self.k,
            t(self.ta),
            t(self.tb)
        );
        if self.pads != [0; 3] {
            let [a, b, c] = [0, 1, 2].map(|o| self.pitch(o));
            name += &format!("::pitch_{a}_{b}_{c}");
        }
        if self.offsets != [0; 3] {
            let [a, b, c] = self.offsets;
            name += &format!("::offset_{a}_{b}_{c}");
        }
        if (self.alpha, self.beta) != (1.0, 0.0) {
            name += &format!("::alpha_{}_beta_{}", self.alpha, self.beta);
        }
        match self.packing {
            Packing::Auto => {}
            Packing::Always => name += "::packed",
            Packing::Never => name += "::unpacked",
        }
        if self.sampled {
            name += "::sampled";
        }
        name
    }

    /// Whether the view of operand `o` holds buffer element `e` (of its
    /// region), and at which `(row, column)`.
    fn position(&self, o: usize, e: usize) -> Option<(usize, usize)> {
        let (w, h) = self.shape(o);
        let e = e.checked_sub(self.offsets[o])?;
        let (y, x) = (e / self.pitch(o).max(1), e % self.pitch(o).max(1));
        (y < h && x < w).then_some((y, x))
    }

    /// `A`'s region then `B`'s ([`Case::b_base`]): uniform in `[-1, 1)`
    /// inside the views, NaN outside (offsets, row padding, the gap).
    fn input(&self) -> Vec<f32> {
        let mut host = vec![f32::NAN; (self.b_base() + self.len(1)).max(1)];
        let mut r = rng(seed_of(&self.key()));
        for (o, base) in [(0, 0), (1, self.b_base())] {
            let (w, h) = self.shape(o);
            for y in 0..h {
                let row = base + self.offsets[o] + y * self.pitch(o);
                for v in &mut host[row..row + w] {
                    *v = draw_f32(&mut r);
                }
            }
        }
        host
    }

    /// `C`'s buffer before the call: [`PAD`] outside the view; inside, NaN
    /// where `β = 0` (the kernels must not read it), else uniform in
    /// `[-1, 1)`.
    fn initial_c(&self) -> Vec<f32> {
        let mut c = vec![PAD; self.len(2).max(1)];
        let mut r = rng(seed_of(&format!("{}/c", self.key())));
        let (w, h) = self.shape(2);
        for y in 0..h {
            let row = self.offsets[2] + y * self.pitch(2);
            for v in &mut c[row..row + w] {
                *v = if self.beta == 0.0 {
                    f32::NAN
                } else {
                    draw_f32(&mut r)
                };
            }
        }
        c
    }

    /// Element `(i, p)` of `op(A)` in [`Case::input`].
    fn op_a(&self, host: &[f32], i: usize, p: usize) -> f32 {
        let (y, x) = if self.ta { (p, i) } else { (i, p) };
        host[self.offsets[0] + y * self.pitch(0) + x]
    }

    /// Element `(p, j)` of `op(B)` in [`Case::input`].
    fn op_b(&self, host: &[f32], p: usize, j: usize) -> f32 {
        let (y, x) = if self.tb { (j, p) } else { (p, j) };
        host[self.b_base() + self.offsets[1] + y * self.pitch(1) + x]
    }

    /// `(Σ_p a_ip·b_pj, Σ_p |a_ip·b_pj|)` in `f64`, straight from the data.
    fn entry(&self, host: &[f32], i: usize, j: usize) -> (f64, f64) {
        (0..self.k).fold((0.0, 0.0), |(s, m), p| {
            let t = self.op_a(host, i, p) as f64 * self.op_b(host, p, j) as f64;
            (s + t, m + t.abs())
        })
    }
}

/// Runs `gemm` (with the case's `α` and `β`) on the case's views of `ab`
/// ([`Case::input`]) into `c` (the case's `C` buffer), waiting.
fn run(
    ctx: &Context,
    gemm: &Gemm,
    case: &Case,
    ab: &Buffer<f32>,
    c: &mut Buffer<f32>,
) -> warpspeed::Result<()> {
    let a_region = ab.slice(case.offsets[0]..case.len(0))?;
    let b_region = ab.slice(case.b_base() + case.offsets[1]..case.b_base() + case.len(1))?;
    let ((aw, ah), (bw, bh), (cw, ch)) = (case.shape(0), case.shape(1), case.shape(2));
    let a = Matrix::with_pitch(&a_region, aw, ah, case.pitch(0))?;
    let b = Matrix::with_pitch(&b_region, bw, bh, case.pitch(1))?;
    let mut c_region = c.slice_mut(case.offsets[2]..case.len(2).max(case.offsets[2]))?;
    let mut c = MatrixMut::with_pitch(&mut c_region, cw, ch, case.pitch(2))?;
    ctx.gemm_into(gemm, case.alpha, &a, &b, case.beta, &mut c)?
        .wait()
}

/// `op(A)·op(B)` and `|op(A)|·|op(B)|`, row-major `m × n`, in `f64`.
struct Reference {
    product: Vec<f64>,
    magnitude: Vec<f64>,
}

thread_local! {
    static REFERENCE: RefCell<Option<(String, Rc<Reference>)>> = const { RefCell::new(None) };
}

/// `(Σ x_p·y_p, Σ |x_p·y_p|)` in four independent lanes (the CPU runs them
/// side by side; the order does not matter in `f64` at these sizes).
fn dot(x: &[f64], y: &[f64]) -> (f64, f64) {
    let (mut s, mut m) = ([0.0f64; 4], [0.0f64; 4]);
    let (mut xs, mut ys) = (x.chunks_exact(4), y.chunks_exact(4));
    for (u, v) in (&mut xs).zip(&mut ys) {
        for l in 0..4 {
            let t = u[l] * v[l];
            s[l] += t;
            m[l] += t.abs();
        }
    }
    for (u, v) in xs.remainder().iter().zip(ys.remainder()) {
        let t = u * v;
        s[0] += t;
        m[0] += t.abs();
    }
    (s.iter().sum(), m.iter().sum())
}

/// The full reference of `case` over `host` ([`Case::input`]), computed on
/// every CPU core and cached for the consecutive trials of one case.
fn reference(case: &Case, host: &[f32]) -> Rc<Reference> {
    let key = case.key();
    if let Some(hit) = REFERENCE.with(|c| {
        c.borrow()
            .as_ref()
            .filter(|(k, _)| *k == key)
            .map(|(_, v)| v.clone())
    }) {
        return hit;
    }
    REFERENCE.with(|c| c.borrow_mut().take());
    let (m, n, k) = (case.m, case.n, case.k);
    // op(A) row by row and op(B) column by column: both dot products run
    // along contiguous memory.
    let a: Vec<f64> = (0..m * k)
        .map(|e| case.op_a(host, e / k, e % k) as f64)
        .collect();
    let bt: Vec<f64> = (0..n * k)
        .map(|e| case.op_b(host, e % k, e / k) as f64)
        .collect();
    let mut product = vec![0.0f64; m * n];
    let mut magnitude = vec![0.0f64; m * n];
    let threads = std::thread::available_parallelism().map_or(4, |t| t.get());
    let rows = m.div_ceil(threads).max(1);
    std::thread::scope(|s| {
        let chunks = product
            .chunks_mut(rows * n)
            .zip(magnitude.chunks_mut(rows * n));
        for (chunk, (prod, mag)) in chunks.enumerate() {
            let (a, bt) = (&a, &bt);
            s.spawn(move || {
                let outputs = prod.chunks_mut(n).zip(mag.chunks_mut(n));
                for (r, (prow, mrow)) in outputs.enumerate() {
                    let arow = &a[(chunk * rows + r) * k..][..k];
                    for j in 0..n {
                        (prow[j], mrow[j]) = dot(arow, &bt[j * k..][..k]);
                    }
                }
            });
        }
    });
    let reference = Rc::new(Reference { product, magnitude });
    REFERENCE.with(|c| *c.borrow_mut() = Some((key, reference.clone())));
    reference
}

/// Checks `got` (`C`'s buffer after the call; `c0` before it) against the
/// full reference: every output within its bound, the padding intact, and
/// the normwise error within the bound's consequence.
fn check_full(
    case: &Case,
    step: GemmVariant,
    host: &[f32],
    c0: &[f32],
    got: &[f32],
    what: &str,
) -> Result<(), Failed> {
    let reference = reference(case, host);
    let gamma = gamma_of(step, case.k);
    let (alpha, beta) = (case.alpha as f64, case.beta as f64);
    let n = case.n;
    let mut error2 = 0.0f64;
    let mut c0_norm2 = 0.0f64;
    for (e, &g) in got.iter().enumerate() {
        let Some((i, j)) = case.position(2, e) else {
            ensure(g.to_bits() == PAD.to_bits(), || {
                format!("{what}: element {e} of C's buffer, outside the view, became {g}")
            })?;
            continue;
        };
        let old = if case.beta == 0.0 { 0.0 } else { c0[e] as f64 };
        let want = alpha * reference.product[i * n + j] + beta * old;
        let bound = gamma * (alpha.abs() * reference.magnitude[i * n + j] + beta.abs() * old.abs());
        let error = (g as f64 - want).abs();
        // Also fails for NaN (an output never written, or NaN read).
        ensure(error <= bound, || {
            format!("{what}: C[{i}][{j}] = {g:e}, want {want:e} (error {error:e}, bound {bound:e})")
        })?;
        error2 += error * error;
        c0_norm2 += old * old;
    }
    // Normwise: by Cauchy–Schwarz, (Σ_p |a_ip||b_pj|)² ≤ Σ_p a_ip² ·
    // Σ_p b_pj², so summing the entries' bounds over i, j gives
    // ‖Ĉ − C‖_F ≤ γ · (|α| · ‖A‖_F · ‖B‖_F + |β| · ‖C⁰‖_F).
    let frobenius = |o: usize| {
        let base = if o == 0 { 0 } else { case.b_base() };
        let region = &host[base..base + case.len(o)];
        let sum: f64 = (0..region.len())
            .filter(|&e| case.position(o, e).is_some())
            .map(|e| (region[e] as f64).powi(2))
            .sum();
        sum.sqrt()
    };
    let error = error2.sqrt();
    let bound = gamma * (alpha.abs() * frobenius(0) * frobenius(1) + beta.abs() * c0_norm2.sqrt());
    ensure(error <= bound, || {
        format!("{what}: ‖C − C_ref‖_F = {error:e} exceeds γ·‖A‖_F·‖B‖_F (+ β term) = {bound:e}")
    })
}

/// Checks `got` against `f64` recomputations of the corners and
/// [`SAMPLES`] random outputs, and every output for having been written
/// (finite) and the padding for being intact.
fn check_sampled(
    case: &Case,
    step: GemmVariant,
    host: &[f32],
    c0: &[f32],
    got: &[f32],
    what: &str,
) -> Result<(), Failed> {
    for (e, &g) in got.iter().enumerate() {
        if case.position(2, e).is_some() {
            ensure(g.is_finite(), || {
                format!("{what}: element {e} of C is {g} (not written, or NaN read)")
            })?;
        } else {
            ensure(g.to_bits() == PAD.to_bits(), || {
                format!("{what}: element {e} of C's buffer, outside the view, became {g}")
            })?;
        }
    }
    let (m, n) = (case.m, case.n);
    let mut r = rng(seed_of(&format!("{}/samples", case.key())));
    let corners = [(0, 0), (0, n - 1), (m - 1, 0), (m - 1, n - 1)];
    let random = (0..SAMPLES).map(|_| (r.random_range(0..m), r.random_range(0..n)));
    let gamma = gamma_of(step, case.k);
    let (alpha, beta) = (case.alpha as f64, case.beta as f64);
    for (i, j) in corners.into_iter().chain(random) {
        let at = case.offsets[2] + i * case.pitch(2) + j;
        let (product, magnitude) = case.entry(host, i, j);
        let old = if case.beta == 0.0 { 0.0 } else { c0[at] as f64 };
        let want = alpha * product + beta * old;
        // The per-entry bound of `gamma`.
        let bound = gamma * (alpha.abs() * magnitude + beta.abs() * old.abs());
        let g = got[at];
        let error = (g as f64 - want).abs();
        ensure(error <= bound, || {
            format!("{what}: C[{i}][{j}] = {g:e}, want {want:e} (error {error:e}, bound {bound:e})")
        })?;
    }
    Ok(())
}

/// One ladder trial: `step` on `case`, checked in full or sampled; the
/// tensor-core steps must be refused, touching nothing, where the loaded
/// PTX lacks them.
fn check(ctx: &Context, step: GemmVariant, case: &Case) -> Result<(), Failed> {
    let input = cached_input(ctx, &case.key(), || case.input())?;
    let (host, device) = (&input.0, &input.1);
    let what = format!("{step:?} {}", case.name());
    each_tiling(
        ctx,
        (step, case.gemm(), &case.initial_c(), &what),
        |gemm, c| run(ctx, gemm, case, device, c),
        |c0, got, what| match case.sampled {
            true => check_sampled(case, step, host, c0, got, what),
            false => check_full(case, step, host, c0, got, what),
        },
    )
}

/// Runs `gemm` as `step` from `C = c0` by `run`, once for each of
/// [`tiles_of`]`(step)`, and checks each result by `check(c0, C, what)`;
/// where the device lacks the step, passes if `run` refuses it as
/// unsupported and leaves `C` untouched.
fn each_tiling(
    ctx: &Context,
    (step, gemm, c0, what): (GemmVariant, Gemm, &[f32], &str),
    run: impl Fn(&Gemm, &mut Buffer<f32>) -> warpspeed::Result<()>,
    check: impl Fn(&[f32], &[f32], &str) -> Result<(), Failed>,
) -> Result<(), Failed> {
    for tiles in tiles_of(step) {
        let mut c = upload(ctx, c0)?;
        let result = run(&gemm.variant(step).tma_tiles(tiles), &mut c);
        let what = format!("{what} ({tiles:?} tiles)");
        if !runs(ctx, step) {
            return match result {
                Err(Error::Unsupported { .. }) => untouched(ctx, &c, c0, &what),
                other => Err(format!("{what} on {}: {other:?}", ctx.info().ptx_target).into()),
            };
        }
        ok(result)?;
        check(c0, &download(ctx, &c)?, &what)?;
    }
    Ok(())
}

/// The tiles a trial of `step` runs: both widths of
/// [`GemmVariant::Tf32Tma`] and [`GemmVariant::Tf32x3Tma`] (the default
/// picks one of them per product), the default for every other step
/// (which ignores it).
fn tiles_of(step: GemmVariant) -> Vec<TmaTiles> {
    match step {
        GemmVariant::Tf32Tma => vec![
            TmaTiles::Wide,
            TmaTiles::Medium,
            TmaTiles::Narrow,
            TmaTiles::Short,
        ],
        GemmVariant::Tf32x3Tma => vec![TmaTiles::Wide, TmaTiles::Narrow],
        _ => vec![TmaTiles::Auto],
    }
}

/// Passes if `c` still holds `c0`, bit for bit.
fn untouched(
    ctx: &Context,
    c: &impl DeviceRead<Elem = f32>,
    c0: &[f32],
    what: &str,
) -> Result<(), Failed> {
    let got = download(ctx, c)?;
    match (0..c0.len()).find(|&e| got[e].to_bits() != c0[e].to_bits()) {
        Some(e) => Err(format!("{what}: a refused call wrote C's element {e}").into()),
        None => Ok(()),
    }
}

fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    let transposes = [(false, false), (true, false), (false, true), (true, true)];
    // 1×1, 1×N, N×1, a dot product, tiny odd shapes: every step, every
    // transpose combination.
    for (m, n, k) in [
        (1, 1, 1),
        (1, 1025, 1),
        (1025, 1, 1),
        (1, 1, 1025),
        (3, 5, 7),
        (17, 33, 65),
        (129, 257, 100),
    ] {
        for (ta, tb) in transposes {
            cases.push(Case::new(m, n, k).transposed(ta, tb));
        }
    }
    for (ta, tb) in transposes {
        // Pitches that are multiples of 4: the 16-byte vector loads (and
        // `cp.async`) and stores.
        cases.push(Case::new(129, 257, 100).transposed(ta, tb).aligned());
    }
    // Pitches beyond the width, every view one element into its buffer
    // (no 16-byte alignment), β ≠ 0 accumulating.
    cases.push(
        Case::new(17, 33, 65)
            .transposed(true, true)
            .padded([1, 2, 3], [1, 1, 1])
            .scaled(2.0, -1.0),
    );
    cases.push(
        Case::new(129, 257, 100)
            .padded([3, 5, 7], [1, 3, 1])
            .scaled(-1.25, 0.5),
    );
    // The benched 1000×999×1001: every step packed (no pitch a multiple
    // of 4); the fast steps with aligned pitches in every transpose
    // combination, and with odd pitches and offsets. Its 128 tiles of
    // 64 × 128 leave the second block slot of each SM of an H100 or H200
    // empty, so the pipelined step splits `k` in two there.
    cases.push(Case::new(1000, 999, 1001));
    for (ta, tb) in transposes {
        cases.push(
            Case::new(1000, 999, 1001)
                .transposed(ta, tb)
                .aligned()
                .steps(Steps::Fast),
        );
    }
    cases.push(
        Case::new(1000, 999, 1001)
            .transposed(false, true)
            .padded([13, 24, 1], [1, 0, 3])
            .scaled(1.0, 1.0)
            .steps(Steps::Fast),
    );
    // 13 × 14 tiles of 128 × 128 (more than the SMs of an H100 or H200):
    // the pipelined step's big-tile configuration, edges included.
    for (ta, tb) in [(false, false), (true, true)] {
        cases.push(
            Case::new(1537, 1665, 129)
                .transposed(ta, tb)
                .aligned()
                .steps(Steps::Fast),
        );
    }
    // The same tiles with both operands `k`-major and aligned, `m` and
    // `n` multiples of 4 and `k` of 16: the whole-tile entry (no checked
    // copies, edges stepped back), `A` read where it lies (`TN`) and
    // packed (`NN`).
    cases.push(
        Case::new(1540, 1668, 144)
            .transposed(true, false)
            .aligned()
            .steps(Steps::Fast),
    );
    cases.push(
        Case::new(1540, 1668, 144)
            .aligned()
            .packed()
            .scaled(0.5, 2.0)
            .steps(Steps::Fast),
    );
    // The same tiles, aligned, with `A` stored `m × k` read where it lies
    // (laid out along `k`: the whole-tile entry that transposes `A` on the
    // way in), and with `A` at an odd offset and pitch (its 4-byte copies
    // need no alignment).
    cases.push(
        Case::new(1540, 1668, 144)
            .aligned()
            .scaled(1.0, -1.0)
            .steps(Steps::Fast),
    );
    cases.push(
        Case::new(1540, 1668, 144)
            .padded([3, 0, 0], [1, 0, 0])
            .steps(Steps::Fast),
    );
    // 4 × 3 tiles of 64 × 128 with 1000 of `k`: the pipelined step splits
    // `k` (11 slices on a 132-SM GPU, the last one shorter), in every
    // transpose combination (every side a multiple of 4: aligned as it
    // is), packed, and with odd pitches and offsets, β ≠ 0 accumulating.
    for (ta, tb) in transposes {
        cases.push(
            Case::new(200, 300, 1000)
                .transposed(ta, tb)
                .steps(Steps::Fast),
        );
    }
    cases.push(
        Case::new(200, 300, 1000)
            .padded([1, 6, 3], [1, 2, 1])
            .scaled(0.75, -2.0)
            .steps(Steps::Fast),
    );
    // At most 64 columns: the pipelined step's 64 × 64 tiles, 24 of them
    // (fewer than the SMs of an H100 or H200), so `k` is split too; in
    // every transpose combination, the last tile row stepped back from
    // `C`'s edge, and aligned for the whole-tile copies.
    for (ta, tb) in transposes {
        cases.push(
            Case::new(1500, 60, 1000)
                .transposed(ta, tb)
                .steps(Steps::Fast),
        );
    }
    cases.push(
        Case::new(1500, 64, 1000)
            .aligned()
            .scaled(0.5, 2.0)
            .steps(Steps::Fast),
    );
    // Operands stored along `k` packed into scratch memory first (the
    // transposes' element and vector paths, an odd pitch and start, a
    // split product's workspace before the packed operands), every
    // transpose combination.
    for (ta, tb) in transposes {
        cases.push(Case::new(17, 33, 65).transposed(ta, tb).packed());
        cases.push(
            Case::new(129, 257, 100)
                .transposed(ta, tb)
                .aligned()
                .packed()
                .steps(Steps::Fast),
        );
        cases.push(
            Case::new(200, 300, 1000)
                .transposed(ta, tb)
                .padded([3, 1, 2], [1, 3, 0])
                .scaled(1.5, -0.5)
                .packed()
                .steps(Steps::Fast),
        );
    }
    cases.push(
        Case::new(1000, 999, 1001)
            .transposed(false, true)
            .packed()
            .steps(Steps::Fast),
    );
    // The big ones, once each with the fastest step, sampled (skipped
    // above WARPSPEED_TEST_MAX_N, i.e. under the sanitizers).
    // `Packing::Auto` packs `A` of the first and `B` of the second.
    cases.push(Case::new(4096, 4096, 4096).sampled());
    cases.push(Case::new(8192, 8192, 256).transposed(true, true).sampled());
    // Large K: 65 536-term sums.
    cases.push(Case::new(256, 256, 65536).transposed(true, false).sampled());
    cases
}

fn applies(step: GemmVariant, case: &Case) -> bool {
    match case.steps {
        Steps::All => true,
        Steps::Fast => FAST.contains(&step),
        Steps::Default => step == GemmVariant::DEFAULT,
    }
}

/// `Tf32x3` gives FP32 accuracy: on 1024³ random data its normwise error is
/// at most twice the FP32 kernel's, and `Tf32`'s at least 10 times its own
/// (so the test tells the arithmetics apart).
fn tf32x3_against_fp32(ctx: &Context) -> Result<(), Failed> {
    let case = Case::new(1024, 1024, 1024);
    let input = cached_input(ctx, &case.key(), || case.input())?;
    let (host, device) = (&input.0, &input.1);
    let gemm = case.gemm();
    if !runs(ctx, GemmVariant::Tf32x3) {
        let mut c = upload(ctx, &case.initial_c())?;
        return match run(
            ctx,
            &gemm.precision(Precision::Tf32x3),
            &case,
            device,
            &mut c,
        ) {
            Err(Error::Unsupported { .. }) => Ok(()),
            other => Err(format!("Tf32x3 on {}: {other:?}", ctx.info().ptx_target).into()),
        };
    }
    let reference = reference(&case, host);
    let error = |step: GemmVariant| -> Result<f64, Failed> {
        let c0 = case.initial_c();
        let mut c = upload(ctx, &c0)?;
        ok(run(ctx, &gemm.variant(step), &case, device, &mut c))?;
        let got = download(ctx, &c)?;
        // Also a full check against the bound of `gamma`.
        check_full(&case, step, host, &c0, &got, &format!("{step:?}"))?;
        let sum: f64 = got
            .iter()
            .zip(&reference.product)
            .map(|(&g, &r)| (g as f64 - r).powi(2))
            .sum();
        Ok(sum.sqrt())
    };
    let fp32 = error(GemmVariant::DEFAULT)?;
    // Both tensor-core ladders where the module has them.
    let pairs = [
        (GemmVariant::Tf32x3, GemmVariant::Tf32),
        (GemmVariant::Tf32x3Wgmma, GemmVariant::Tf32Wgmma),
        (GemmVariant::Tf32x3Wgmma, GemmVariant::Tf32Tma),
        (GemmVariant::Tf32x3Tma, GemmVariant::Tf32Tma),
    ];
    for (x3_step, tf32_step) in pairs.into_iter().filter(|&(v, _)| runs(ctx, v)) {
        let x3 = error(x3_step)?;
        let tf32 = error(tf32_step)?;
        eprintln!(
            "  ‖C − C_ref‖_F on 1024³: FP32 {fp32:e}, {x3_step:?} {x3:e}, {tf32_step:?} {tf32:e}"
        );
        ensure(x3 <= 2.0 * fp32, || {
            format!("{x3_step:?}'s error {x3:e} is more than twice FP32's {fp32:e}")
        })?;
        ensure(tf32 >= 10.0 * x3, || {
            format!(
                "{tf32_step:?}'s error {tf32:e} is not 10 times {x3_step:?}'s {x3:e}: is TF32 rounding?"
            )
        })?;
    }
    Ok(())
}

/// How many times FP32's normwise error 3xTF32's may reach over `k` =
/// 10^5 and 10^6 ([`tf32x3_long_k`]). Measured, not derived: on an H100
/// the trial printed 3.07 at `k` = 10^5 (relative errors 1.38e-6 against
/// FP32's 4.48e-7) and 3.93 at 10^6 (4.47e-6 against 1.14e-6), for
/// `Tf32x3Tma` and `Tf32x3Wgmma` alike. 3xTF32's error grows about as
/// `√k` (a few `k` at a time summed from a fresh accumulator whose sums
/// the tensor cores truncate), FP32's more slowly (the step splits `k`
/// across blocks and adds the slices at the end), so the ratio grows with
/// `k`; twice FP32's holds at 1024³ ([`tf32x3_against_fp32`]), and the
/// guide states this bound for `k` up to 10^6.
const LONG_K_RATIO: f64 = 5.0;

/// [`reference`] of an untransposed case of few outputs over a long `k`,
/// cached as it caches (so that [`check_full`] finds it). `p` outermost:
/// `B` is read in order, `A` as `m` rows read in order side by side, and
/// the sums stay in the L1 cache, where [`reference`]'s `f64` copies of
/// both operands would take 640 MB at `k = 10^6`.
fn reference_long_k(case: &Case, host: &[f32]) -> Rc<Reference> {
    debug_assert!(!case.ta && !case.tb);
    let (m, n, k) = (case.m, case.n, case.k);
    let (a, b) = (
        &host[case.offsets[0]..],
        &host[case.b_base() + case.offsets[1]..],
    );
    let (a_pitch, b_pitch) = (case.pitch(0), case.pitch(1));
    let mut product = vec![0.0f64; m * n];
    let mut magnitude = vec![0.0f64; m * n];
    for p in 0..k {
        let b_row = &b[p * b_pitch..][..n];
        let outputs = product.chunks_mut(n).zip(magnitude.chunks_mut(n));
        for (i, (prow, mrow)) in outputs.enumerate() {
            let a_ip = a[i * a_pitch + p] as f64;
            for ((s, mag), &b_pj) in prow.iter_mut().zip(mrow.iter_mut()).zip(b_row) {
                let t = a_ip * b_pj as f64;
                *s += t;
                *mag += t.abs();
            }
        }
    }
    let reference = Rc::new(Reference { product, magnitude });
    REFERENCE.with(|c| *c.borrow_mut() = Some((case.key(), reference.clone())));
    reference
}

/// 3xTF32 over a long `k` on `32 × 48 × k` products of operands uniform
/// in `[-1, 1)`: its normwise error, relative to `‖C_ref‖_F`, at most
/// [`LONG_K_RATIO`] times the FP32 step's; every output of every step
/// within its bound of [`gamma_of`] (and the FP32 step's normwise error
/// within the bound's consequence). Both steps of 3xTF32 where the module
/// has them: the default one and the `wgmma` one.
fn tf32x3_long_k(ctx: &Context) -> Result<(), Failed> {
    for k in [100_000, 1_000_000] {
        let case = Case::new(32, 48, k);
        let host = case.input();
        let ab = upload(ctx, &host)?;
        let reference = reference_long_k(&case, &host);
        let norm = reference.product.iter().map(|r| r * r).sum::<f64>().sqrt();
        let error = |gemm: &Gemm, step: GemmVariant| -> Result<f64, Failed> {
            let c0 = case.initial_c();
            let mut c = upload(ctx, &c0)?;
            ok(run(ctx, gemm, &case, &ab, &mut c))?;
            let got = download(ctx, &c)?;
            check_full(&case, step, &host, &c0, &got, &format!("{step:?}, k = {k}"))?;
            let sum: f64 = got
                .iter()
                .zip(&reference.product)
                .map(|(&g, &r)| (g as f64 - r).powi(2))
                .sum();
            Ok(sum.sqrt() / norm)
        };
        let gemm = case.gemm();
        let fp32 = error(
            &gemm.variant(GemmVariant::Pipelined),
            GemmVariant::Pipelined,
        )?;
        eprintln!("tf32x3_long_k: k = {k}, Pipelined: ‖C − C_ref‖_F / ‖C_ref‖_F = {fp32:e}");
        let tf32x3 = gemm.precision(Precision::Tf32x3);
        if !runs(ctx, GemmVariant::Tf32x3) {
            let mut c = upload(ctx, &case.initial_c())?;
            match run(ctx, &tf32x3, &case, &ab, &mut c) {
                Err(Error::Unsupported { .. }) => continue,
                other => {
                    return Err(format!("Tf32x3 on {}: {other:?}", ctx.info().ptx_target).into());
                }
            }
        }
        // The kernel itself: asked for by precision, a product this
        // narrow runs the FP32 step (checked within its bound too).
        let default = ctx.gemm_variant(&tf32x3);
        let mut steps = vec![(gemm.variant(default), default)];
        if default == GemmVariant::Tf32x3Tma {
            steps.push((tf32x3, GemmVariant::Pipelined));
        }
        let wgmma = GemmVariant::Tf32x3Wgmma;
        if default != wgmma && runs(ctx, wgmma) {
            steps.push((gemm.variant(wgmma), wgmma));
        }
        for (gemm, step) in steps {
            let x3 = error(&gemm, step)?;
            let ratio = x3 / fp32;
            eprintln!(
                "tf32x3_long_k: k = {k}, {step:?}: ‖C − C_ref‖_F / ‖C_ref‖_F = {x3:e}, \
                 Pipelined's {fp32:e}, ratio {ratio:.3}"
            );
            ensure(ratio <= LONG_K_RATIO, || {
                format!(
                    "k = {k}: {step:?}'s error {x3:e} is {ratio:.3} times Pipelined's {fp32:e} \
                     (bound {LONG_K_RATIO})"
                )
            })?;
        }
    }
    Ok(())
}

/// `k = 0` and `α = 0` give `C = β · C` exactly (the scale kernel, `β · c`
/// in `f32`), reading neither operand (NaN there must not reach `C`);
/// `β = 0` gives zeros whatever `C` held (NaN); `β = 1` leaves `C` as it
/// was; the padding keeps its bits.
fn scaling(ctx: &Context, case: &Case, nan_operands: bool) -> Result<(), Failed> {
    let mut ab = case.input();
    if nan_operands {
        ab.fill(f32::NAN);
    }
    let ab = upload(ctx, &ab)?;
    let c0 = case.initial_c();
    let mut c = upload(ctx, &c0)?;
    let what = case.name();
    ok(run(ctx, &case.gemm(), case, &ab, &mut c))?;
    let got = download(ctx, &c)?;
    for (e, (&g, &old)) in got.iter().zip(&c0).enumerate() {
        let want = match case.position(2, e) {
            None => PAD,
            Some(_) if case.beta == 0.0 => 0.0,
            Some(_) if case.beta == 1.0 => old,
            Some(_) => case.beta * old,
        };
        ensure(g.to_bits() == want.to_bits(), || {
            format!("{what}: element {e} of C's buffer is {g}, want {want}")
        })?;
    }
    Ok(())
}

fn blas_rules(ctx: &Context) -> Result<(), Failed> {
    for beta in [0.0, -0.0, 1.0, -0.5] {
        for (ta, tb) in [(false, false), (true, true)] {
            // k = 0: A and B are empty views.
            let case = Case::new(37, 45, 0)
                .transposed(ta, tb)
                .padded([0, 0, 3], [0, 0, 1])
                .scaled(1.0, beta);
            scaling(ctx, &case, false)?;
            // α = 0 with A and B full of NaN: they are not read.
            let case = Case::new(37, 45, 65)
                .transposed(ta, tb)
                .padded([1, 2, 3], [1, 0, 1])
                .scaled(0.0, beta);
            scaling(ctx, &case, true)?;
        }
    }
    // m = 0 or n = 0 (with k > 0, and all three 0): nothing to write, no
    // error.
    for (m, n, k) in [(0, 5, 10), (5, 0, 10), (0, 0, 0), (0, 5, 0)] {
        let case = Case::new(m, n, k).scaled(1.0, 0.5);
        let input = case.input();
        let ab = upload(ctx, &input)?;
        let mut c = upload(ctx, &case.initial_c())?;
        ok(run(ctx, &case.gemm(), &case, &ab, &mut c))?;
        untouched(ctx, &c, &case.initial_c(), &case.name())?;
    }
    // β = 0 ignores NaN in C with products (every ladder case with β = 0
    // does too); β = −0 counts as 0.
    let case = Case::new(129, 257, 100).scaled(0.5, -0.0);
    let input = case.input();
    let ab = upload(ctx, &input)?;
    let c0 = case.initial_c();
    let mut c = upload(ctx, &c0)?;
    ok(run(ctx, &case.gemm(), &case, &ab, &mut c))?;
    check_full(
        &case,
        GemmVariant::DEFAULT,
        &input,
        &c0,
        &download(ctx, &c)?,
        "β = −0",
    )?;
    accumulates(ctx)
}

/// `C = A·B`, then `C = A·B + 1·C`: about `2·A·B`. With `γ` of [`gamma`]
/// and `M = Σ|a||b|`: the first result errs by at most `γM`, the second
/// sum by `γM` again, and its final rounding by `u·(2M + γM)`, less than
/// another `γM`: `|ĉ − 2·A·B| ≤ 3γM`.
fn accumulates(ctx: &Context) -> Result<(), Failed> {
    let case = Case::new(129, 257, 100).aligned();
    let input = case.input();
    let ab = upload(ctx, &input)?;
    let mut c = upload(ctx, &case.initial_c())?;
    ok(run(ctx, &case.gemm(), &case, &ab, &mut c))?;
    let again = case.clone().scaled(1.0, 1.0);
    ok(run(ctx, &again.gemm(), &again, &ab, &mut c))?;
    let got = download(ctx, &c)?;
    let reference = reference(&case, &input);
    let gamma = gamma(Precision::Fp32, case.k);
    for i in 0..case.m {
        for j in 0..case.n {
            let g = got[i * case.pitch(2) + j] as f64;
            let at = i * case.n + j;
            let (want, bound) = (
                2.0 * reference.product[at],
                3.0 * gamma * reference.magnitude[at],
            );
            ensure((g - want).abs() <= bound, || {
                format!("C = A·B + C: C[{i}][{j}] = {g:e}, want {want:e} (bound {bound:e})")
            })?;
        }
    }
    Ok(())
}

/// `k = 0` over more outputs than the device holds threads: the scale
/// kernel's grid-stride loop.
fn scaling_large(ctx: &Context) -> Result<(), Failed> {
    let case = Case::new(3001, 3000, 0)
        .padded([0, 0, 5], [0, 0, 1])
        .scaled(1.0, -0.5);
    scaling(ctx, &case, false)
}

/// `C = A · Aᵀ` with `A` and `B` one view (they may overlap: both are
/// read-only).
fn a_times_a_transposed(ctx: &Context) -> Result<(), Failed> {
    let (rows, cols, pitch) = (100, 70, 72);
    let host = random_vec(1 + (rows - 1) * pitch + cols, 17, draw_f32);
    let buffer = upload(ctx, &host)?;
    let region = ok(buffer.slice(1..))?;
    let a = ok(Matrix::with_pitch(&region, cols, rows, pitch))?;
    let mut c = poisoned(ctx, rows * rows, f32::NAN)?;
    let mut c_view = ok(MatrixMut::new(&mut c, rows, rows))?;
    let gemm = Gemm::new(rows, rows, cols).transpose_b(true);
    ok(ctx
        .gemm_into(&gemm, 1.0, &a, &a, 0.0, &mut c_view)
        .and_then(|p| p.wait()))?;
    let got = download(ctx, &c)?;
    let gamma = gamma(Precision::Fp32, cols);
    for i in 0..rows {
        for j in 0..rows {
            let (s, m) = (0..cols).fold((0.0f64, 0.0f64), |(s, m), p| {
                let t = host[1 + i * pitch + p] as f64 * host[1 + j * pitch + p] as f64;
                (s + t, m + t.abs())
            });
            let g = got[i * rows + j] as f64;
            ensure((g - s).abs() <= gamma * m, || {
                format!("A·Aᵀ: C[{i}][{j}] = {g:e}, want {s:e}")
            })?;
        }
    }
    Ok(())
}

/// The same call twice gives the same bits (no atomics, a fixed order).
fn repeatable(ctx: &Context) -> Result<(), Failed> {
    // One tile per block, and `k` split across blocks (the pipelined step
    // on 132 SMs), whose slices may finish in any order.
    for case in [
        Case::new(129, 257, 100).aligned(),
        Case::new(200, 300, 1000).aligned(),
    ] {
        repeatable_on(ctx, &case)?;
    }
    Ok(())
}

fn repeatable_on(ctx: &Context, case: &Case) -> Result<(), Failed> {
    let input = upload(ctx, &case.input())?;
    let steps: Vec<GemmVariant> = [
        GemmVariant::DEFAULT,
        GemmVariant::Tf32x3,
        GemmVariant::Tf32x3Wgmma,
        GemmVariant::Tf32x3Tma,
    ]
    .into_iter()
    .filter(|&step| runs(ctx, step))
    .collect();
    for step in steps {
        let mut outs = Vec::new();
        for _ in 0..2 {
            let mut c = upload(ctx, &case.initial_c())?;
            ok(run(ctx, &case.gemm().variant(step), case, &input, &mut c))?;
            outs.push(download(ctx, &c)?);
        }
        let same = outs[0]
            .iter()
            .zip(&outs[1])
            .all(|(x, y)| x.to_bits() == y.to_bits());
        ensure(same, || {
            format!("{step:?} {}: two runs gave different bits", case.name())
        })?;
    }
    Ok(())
}

fn refusals(ctx: &Context) -> Result<(), Failed> {
    let host = random_vec(4096, 5, draw_f32);
    let buffer = upload(ctx, &host)?;
    let c0 = vec![PAD; 48];
    let mut c = upload(ctx, &c0)?;
    // 8 × 6 × 5: A is 5 wide and 8 high, B 6 × 5, C 6 × 8.
    let gemm = Gemm::new(8, 6, 5);
    let (a_region, b_region) = (ok(buffer.slice(0..40))?, ok(buffer.slice(40..70))?);
    let a = ok(Matrix::new(&a_region, 5, 8))?;
    let b = ok(Matrix::new(&b_region, 6, 5))?;
    let shape_error = |r: warpspeed::Result<warpspeed::Pending<'_>>,
                       expected: (usize, usize),
                       given: (usize, usize),
                       what: &str|
     -> Result<(), Failed> {
        match r {
            Err(Error::ShapeMismatch {
                expected: e,
                given: g,
                ..
            }) if (e, g) == (expected, given) => Ok(()),
            other => Err(format!("{what}: {other:?}").into()),
        }
    };
    {
        let short = ok(Matrix::new(&a_region, 5, 7))?;
        let mut cv = ok(MatrixMut::new(&mut c, 6, 8))?;
        shape_error(
            ctx.gemm_into(&gemm, 1.0, &short, &b, 0.0, &mut cv),
            (5, 8),
            (5, 7),
            "A with 7 rows for m = 8",
        )?;
        // Transposed, A must be stored k × m: 8 wide, 5 high.
        shape_error(
            ctx.gemm_into(&gemm.transpose_a(true), 1.0, &a, &b, 0.0, &mut cv),
            (8, 5),
            (5, 8),
            "an untransposed A for op(A) = Aᵀ",
        )?;
        let narrow = ok(Matrix::new(&b_region, 5, 5))?;
        shape_error(
            ctx.gemm_into(&gemm, 1.0, &a, &narrow, 0.0, &mut cv),
            (6, 5),
            (5, 5),
            "B with 5 columns for n = 6",
        )?;
        shape_error(
            ctx.gemm_into(&gemm.transpose_b(true), 1.0, &a, &b, 0.0, &mut cv),
            (5, 6),
            (6, 5),
            "an untransposed B for op(B) = Bᵀ",
        )?;
    }
    {
        let mut wrong = ok(MatrixMut::new(&mut c, 8, 6))?;
        shape_error(
            ctx.gemm_into(&gemm, 1.0, &a, &b, 0.0, &mut wrong),
            (6, 8),
            (8, 6),
            "C of 6 rows of 8 for 8 rows of 6",
        )?;
    }
    {
        let mut wrong = ok(MatrixMut::new(&mut c, 6, 7))?;
        expect_invalid(
            ctx.gemm_into(&gemm, 1.0, &a, &b, 0.0, &mut wrong),
            "C with 7 rows for m = 8",
        )?;
    }
    // C sharing bytes with A or with B: writable views of a buffer that is
    // read, which only unsafe code can make (`buffer` is borrowed shared).
    // Refused also when α = 0 (nothing would read them).
    for (range, what) in [(30..78, "C overlapping A"), (60..108, "C overlapping B")] {
        // SAFETY: elements `range` of the live `buffer`, which outlives the
        // view (kept to the end of the function); the calls must refuse it
        // before any launch, and had they launched, the refusal check's
        // drop of their `Pending` waits for the stream before `buffer` is
        // read again (`untouched` below) or freed.
        let mut region = unsafe {
            ViewMut::<f32>::from_raw_parts(
                buffer.device_address() + (range.start * size_of::<f32>()) as u64,
                range.len(),
                buffer.device(),
            )
        };
        let mut cv = ok(MatrixMut::new(&mut region, 6, 8))?;
        expect_invalid(ctx.gemm_into(&gemm, 1.0, &a, &b, 0.0, &mut cv), what)?;
        expect_invalid(ctx.gemm_into(&gemm, 0.0, &a, &b, 0.5, &mut cv), what)?;
    }
    // The tensor-core steps where the loaded PTX lacks them.
    let target = ctx.info().ptx_target;
    for &step in GemmVariant::ALL.iter().filter(|&&v| !runs(ctx, v)) {
        let mut cv = ok(MatrixMut::new(&mut c, 6, 8))?;
        match ctx.gemm_into(&gemm.variant(step), 1.0, &a, &b, 0.0, &mut cv) {
            Err(Error::Unsupported { .. }) => {}
            other => return Err(format!("{step:?} on {target}: {other:?}").into()),
        }
    }
    // A precision runs the fastest step that the module has.
    for precision in [Precision::Fp32, Precision::Tf32, Precision::Tf32x3] {
        let step = ctx.gemm_variant(&gemm.precision(precision));
        let expected = GemmVariant::fastest_for(precision, target);
        if step != expected || (precision == Precision::Fp32) != (step.needs() == Needs::Any) {
            return Err(format!("{precision:?} on {target} runs {step:?}").into());
        }
    }
    // Nothing was launched: C and the operands' buffer are as they were.
    untouched(ctx, &c, &c0, "refusals")?;
    untouched(ctx, &buffer, &host, "refusals (the operands' buffer)")
}

/// A product whose `C` has more than 2^31 elements (see the tests past
/// 2^31 in `common`).
fn past_2_31(ctx: &Context) -> Result<(), Failed> {
    // C of 65 537 × 32 769 (2^31 + 3·2^15 + … elements) = A (m × 3) · B
    // (3 × n), small integers, so every step's product is exact (TF32
    // holds them whole). The rows of C checked whole: the first, the two
    // around element 2^31 and the last.
    let (m, n, k) = (65_537, 32_769, 3);
    let a_at = |i: usize, p: usize| ((i * 3 + p) % 7) as f32 - 3.0;
    let b_at = |p: usize, j: usize| ((p * 5 + j) % 11) as f32 - 5.0;
    let a_host: Vec<f32> = (0..m * k).map(|e| a_at(e / k, e % k)).collect();
    let b_host: Vec<f32> = (0..k * n).map(|e| b_at(e / n, e % n)).collect();
    let (a, b) = (upload(ctx, &a_host)?, upload(ctx, &b_host)?);
    let mut c = filled(ctx, m * n, f32::NAN)?;
    let rows_checked = [0, TWO_31 / n, TWO_31 / n + 1, m - 1];
    for &variant in GemmVariant::ALL {
        if !variant.needs().met_by(ctx.info().ptx_target) {
            continue;
        }
        for packing in [Packing::Never, Packing::Always] {
            let gemm = Gemm::new(m, n, k).variant(variant).packing(packing);
            let (av, bv) = (ok(Matrix::new(&a, k, m))?, ok(Matrix::new(&b, n, k))?);
            let mut cv = ok(MatrixMut::new(&mut c, n, m))?;
            ok(ctx
                .gemm_into(&gemm, 1.0, &av, &bv, 0.0, &mut cv)
                .and_then(|p| p.wait()))?;
            for &i in &rows_checked {
                let got = download(ctx, &ok(c.slice(i * n..(i + 1) * n))?)?;
                for (j, &value) in got.iter().enumerate() {
                    let want: f32 = (0..k).map(|p| a_at(i, p) * b_at(p, j)).sum();
                    ensure(value == want, || {
                        format!("{variant:?}, {packing:?}: C({i}, {j}) is {value}, want {want}")
                    })?;
                }
            }
        }
    }
    Ok(())
}

/// The steps the batched products run.
fn batched_step(step: GemmVariant) -> bool {
    step == GemmVariant::Naive || FAST.contains(&step)
}

/// `count` products of `case`'s shape, transposes, `α`, `β` and pitches
/// (its offsets stay 0) in one call: `A`'s matrices then `B`'s in one
/// buffer (`B`'s from [`Batched::b_base`]), `C`'s in their own; matrix
/// `i` of operand `o` starts `i · strides[o]` elements after the first.
#[derive(Clone, Debug)]
struct Batched {
    case: Case,
    count: usize,
    strides: [usize; 3],
}

impl Batched {
    /// Each matrix right after the previous one's last row: the closest
    /// stacking that `MatrixBatchMut` takes.
    fn new(case: Case, count: usize) -> Batched {
        let strides = [0, 1, 2].map(|o| case.extent(o));
        Batched {
            case,
            count,
            strides,
        }
    }

    /// `gaps[o]` elements between one matrix of operand `o` and the next.
    fn gapped(self, gaps: [usize; 3]) -> Batched {
        let strides = [0, 1, 2].map(|o| self.case.extent(o) + gaps[o]);
        Batched { strides, ..self }
    }

    /// Pitches and strides that are multiples of 4 elements: every matrix
    /// on the kernels' vector paths.
    fn aligned(self) -> Batched {
        let case = self.case.aligned();
        let strides = [0, 1, 2].map(|o| case.extent(o).next_multiple_of(4));
        Batched {
            case,
            strides,
            ..self
        }
    }

    fn strided(self, strides: [usize; 3]) -> Batched {
        Batched { strides, ..self }
    }

    /// Elements from the first of operand `o`'s first matrix to the last
    /// of its last.
    fn len(&self, o: usize) -> usize {
        match (self.count, self.case.extent(o)) {
            (0, _) | (_, 0) => 0,
            (count, extent) => (count - 1) * self.strides[o] + extent,
        }
    }

    /// Where `B`'s region starts in the operands' buffer: after `A`'s, on
    /// a 16-byte boundary (as [`Case::b_base`]).
    fn b_base(&self) -> usize {
        self.len(0).next_multiple_of(4)
    }

    fn elements(&self) -> usize {
        self.count * self.case.elements()
    }

    fn key(&self) -> String {
        format!(
            "{}/batch_{}_{:?}",
            self.case.key(),
            self.count,
            self.strides
        )
    }

    fn name(&self) -> String {
        let mut name = format!("count_{}::{}", self.count, self.case.name());
        if self.strides != [0, 1, 2].map(|o| self.case.extent(o)) {
            let [a, b, c] = self.strides;
            name += &format!("::stride_{a}_{b}_{c}");
        }
        name
    }

    /// `(row, column, element of the region)` of each element of matrix
    /// `i` of operand `o`.
    fn cells(&self, o: usize, i: usize) -> impl Iterator<Item = (usize, usize, usize)> + use<> {
        let ((w, h), pitch) = (self.case.shape(o), self.case.pitch(o));
        let start = i * self.strides[o];
        (0..h).flat_map(move |y| (0..w).map(move |x| (y, x, start + y * pitch + x)))
    }

    /// `A`'s region then `B`'s: uniform in `[-1, 1)` inside the matrices,
    /// NaN outside (row padding, gaps, between the regions). A stride of
    /// 0 draws its one matrix again for each product: the last draw stays.
    fn input(&self) -> Vec<f32> {
        let mut host = vec![f32::NAN; (self.b_base() + self.len(1)).max(1)];
        let mut r = rng(seed_of(&self.key()));
        for (o, base) in [(0, 0), (1, self.b_base())] {
            for i in 0..self.count {
                for (_, _, e) in self.cells(o, i) {
                    host[base + e] = draw_f32(&mut r);
                }
            }
        }
        host
    }

    /// `C`'s buffer before the call: [`PAD`] outside the matrices (row
    /// padding, gaps); inside, NaN where `β = 0`, else uniform in `[-1, 1)`.
    fn initial_c(&self) -> Vec<f32> {
        let mut c = vec![PAD; self.len(2).max(1)];
        let mut r = rng(seed_of(&format!("{}/c", self.key())));
        for i in 0..self.count {
            for (_, _, e) in self.cells(2, i) {
                c[e] = if self.case.beta == 0.0 {
                    f32::NAN
                } else {
                    draw_f32(&mut r)
                };
            }
        }
        c
    }

    /// Checks `got` (`C`'s buffer after the call; `c0` before it): each
    /// product by [`check_full`], on copies of its matrices laid out as
    /// the case's single product ([`PAD`] around `C_i`, whose row padding
    /// may hold its neighbours), and every element outside the matrices
    /// for its old bits.
    fn check(
        &self,
        step: GemmVariant,
        host: &[f32],
        c0: &[f32],
        got: &[f32],
        what: &str,
    ) -> Result<(), Failed> {
        let case = &self.case;
        let mut inside = vec![false; got.len()];
        for i in 0..self.count {
            let member = Case {
                member: Some(format!("{}/{i}", self.key())),
                ..case.clone()
            };
            let mut operands = vec![f32::NAN; (case.b_base() + case.len(1)).max(1)];
            for (o, from, to) in [(0, 0, 0), (1, self.b_base(), case.b_base())] {
                let (start, extent) = (from + i * self.strides[o], case.extent(o));
                operands[to..to + extent].copy_from_slice(&host[start..start + extent]);
            }
            let mut c0_i = vec![PAD; case.len(2).max(1)];
            let mut got_i = c0_i.clone();
            for (y, x, e) in self.cells(2, i) {
                let at = y * case.pitch(2) + x;
                (c0_i[at], got_i[at]) = (c0[e], got[e]);
                inside[e] = true;
            }
            let what = format!("{what}, C_{i}");
            check_full(&member, step, &operands, &c0_i, &got_i, &what)?;
        }
        for (e, (&g, &old)) in got.iter().zip(c0).enumerate() {
            ensure(inside[e] || g.to_bits() == old.to_bits(), || {
                format!("{what}: element {e} of C's buffer, outside the matrices, became {g}")
            })?;
        }
        Ok(())
    }
}

/// Runs `gemm` (with the batch's `α` and `β`) on the batch's matrices of
/// `ab` ([`Batched::input`]) into `c` (its `C` buffer), waiting.
fn run_batched(
    ctx: &Context,
    gemm: &Gemm,
    batch: &Batched,
    ab: &Buffer<f32>,
    c: &mut Buffer<f32>,
) -> warpspeed::Result<()> {
    let case = &batch.case;
    let a_region = ab.slice(0..batch.len(0))?;
    let b_region = ab.slice(batch.b_base()..batch.b_base() + batch.len(1))?;
    let [(aw, ah), (bw, bh), (cw, ch)] = [0, 1, 2].map(|o| case.shape(o));
    let [a_pitch, b_pitch, c_pitch] = [0, 1, 2].map(|o| case.pitch(o));
    let ([a_stride, b_stride, c_stride], count) = (batch.strides, batch.count);
    let a = MatrixBatch::with_strides(&a_region, aw, ah, a_pitch, count, a_stride)?;
    let b = MatrixBatch::with_strides(&b_region, bw, bh, b_pitch, count, b_stride)?;
    let mut cv = MatrixBatchMut::with_strides(c, cw, ch, c_pitch, count, c_stride)?;
    ctx.gemm_batched_into(gemm, case.alpha, &a, &b, case.beta, &mut cv)?
        .wait()
}

/// One batched trial: `step` on `batch`, every product checked in full;
/// refused, touching nothing, where the loaded PTX lacks the step.
fn check_batched(ctx: &Context, step: GemmVariant, batch: &Batched) -> Result<(), Failed> {
    let input = cached_input(ctx, &batch.key(), || batch.input())?;
    let (host, device) = (&input.0, &input.1);
    let what = format!("{step:?} {}", batch.name());
    each_tiling(
        ctx,
        (step, batch.case.gemm(), &batch.initial_c(), &what),
        |gemm, c| run_batched(ctx, gemm, batch, device, c),
        |c0, got, what| batch.check(step, host, c0, got, what),
    )
}

fn batched_cases() -> Vec<Batched> {
    let mut batches = Vec::new();
    let transposes = [(false, false), (true, false), (false, true), (true, true)];
    // No product, one, a few.
    for count in [0, 1] {
        batches.push(Batched::new(Case::new(1, 1, 1), count));
    }
    batches.push(Batched::new(Case::new(33, 17, 20), 0));
    for (ta, tb) in transposes {
        batches.push(Batched::new(Case::new(1, 1, 1).transposed(ta, tb), 3));
    }
    // Many products of one tile or less each: the batch alone fills the
    // GPU; pitches beyond the widths and gaps between the matrices,
    // β ≠ 0 accumulating.
    batches.push(Batched::new(Case::new(8, 8, 8), 1000));
    batches.push(Batched::new(Case::new(64, 64, 64), 1000));
    batches.push(
        Batched::new(
            Case::new(33, 17, 20)
                .transposed(true, false)
                .padded([1, 2, 3], [0; 3])
                .scaled(-1.25, 0.5),
            1000,
        )
        .gapped([3, 1, 2]),
    );
    // Within a tile, a multiple of 64 on every side, and just past tile
    // edges (130 = 2·64 + 2, 70 = 64 + 6), every transpose combination.
    for (m, n, k) in [(33, 17, 20), (64, 64, 64), (130, 70, 200)] {
        for (ta, tb) in transposes {
            batches.push(Batched::new(Case::new(m, n, k).transposed(ta, tb), 3));
        }
    }
    batches.push(
        Batched::new(
            Case::new(130, 70, 200)
                .transposed(true, true)
                .padded([3, 5, 7], [0; 3])
                .scaled(2.0, -1.0),
            3,
        )
        .gapped([5, 2, 9]),
    );
    batches.push(Batched::new(Case::new(130, 70, 200).transposed(false, true), 3).aligned());
    // 3 × 12 tiles of 64 × 128 with 1000 of `k`: fewer than an H100's or
    // H200's SMs, so the pipelined step splits `k`, the slices of all
    // three products meeting in one workspace.
    for (ta, tb) in transposes {
        batches.push(Batched::new(
            Case::new(200, 300, 1000).transposed(ta, tb),
            3,
        ));
    }
    batches.push(
        Batched::new(
            Case::new(200, 300, 1000)
                .padded([1, 6, 3], [0; 3])
                .scaled(0.75, -2.0),
            3,
        )
        .gapped([7, 1, 4]),
    );
    // At most 64 columns and a `k` past the 32 × 32 tiles' reach: the
    // 64 × 64 tiles, `k` split, the slices of all three products meeting
    // in one workspace.
    for (ta, tb) in [(false, false), (true, true)] {
        batches.push(Batched::new(Case::new(200, 60, 1000).transposed(ta, tb), 3));
    }
    // 9 × 16 tiles of 128 × 128 (more than the SMs of an H100 or H200),
    // every copy a whole vector: the 128 × 128 tiles over a batch, `A`
    // read where it lies (the whole-tile entry that transposes it).
    batches.push(Batched::new(Case::new(512, 512, 64), 9).aligned());
    // The same with `A`'s pitch odd and gaps between its matrices: `A`
    // transposed on the way in by 4-byte copies.
    batches.push(
        Batched::new(
            Case::new(512, 512, 64)
                .padded([1, 0, 0], [0; 3])
                .scaled(0.5, 1.0),
            9,
        )
        .gapped([3, 0, 0]),
    );
    // A stride of 0: one `A` (or `B`) for every product.
    let one_a = |case: Case| {
        let batch = Batched::new(case, 3);
        let [_, b, c] = batch.strides;
        batch.strided([0, b, c])
    };
    batches.push(one_a(Case::new(33, 17, 20).transposed(true, false)));
    batches.push(one_a(Case::new(200, 300, 1000).scaled(1.0, 1.0)));
    let one_b = Batched::new(Case::new(130, 70, 200).transposed(false, true), 3);
    let [a, _, c] = one_b.strides;
    batches.push(one_b.strided([a, 0, c]));
    // Attention heads side by side in rows of 64: `O_h = P_h · V_h` with
    // `V_h` and `O_h` 16 columns of each row (`tokens × (heads · dim)`)
    // and `P_h` stacked; 3 heads leave the fourth's columns of `C` alone.
    // Then `S_h = Q_h · K_hᵀ` from heads side by side into stacked `S_h`.
    let heads = |count, alpha, beta| {
        let case = Case::new(8, 16, 8)
            .padded([0, 48, 48], [0; 3])
            .scaled(alpha, beta);
        Batched::new(case, count).strided([64, 16, 16])
    };
    batches.push(heads(4, 1.0, 0.0));
    batches.push(heads(3, 1.0, 0.0));
    batches.push(heads(4, 0.5, -1.0));
    batches.push(
        Batched::new(
            Case::new(8, 8, 16)
                .transposed(false, true)
                .padded([48, 48, 0], [0; 3]),
            4,
        )
        .strided([16, 16, 64]),
    );
    batches
}

/// [`scaling`] for a batch: every `C_i = β · C_i` exactly, the operands
/// unread (NaN where `nan_operands`), the row padding and gaps of `C`
/// with their bits.
fn scaling_batched(ctx: &Context, batch: &Batched, nan_operands: bool) -> Result<(), Failed> {
    let mut ab = batch.input();
    if nan_operands {
        ab.fill(f32::NAN);
    }
    let ab = upload(ctx, &ab)?;
    let c0 = batch.initial_c();
    let mut c = upload(ctx, &c0)?;
    let what = batch.name();
    ok(run_batched(ctx, &batch.case.gemm(), batch, &ab, &mut c))?;
    let got = download(ctx, &c)?;
    let beta = batch.case.beta;
    let mut want = c0.clone();
    for i in 0..batch.count {
        for (_, _, e) in batch.cells(2, i) {
            want[e] = if beta == 0.0 {
                0.0
            } else if beta == 1.0 {
                c0[e]
            } else {
                beta * c0[e]
            };
        }
    }
    for (e, (&g, &w)) in got.iter().zip(&want).enumerate() {
        ensure(g.to_bits() == w.to_bits(), || {
            format!("{what}: element {e} of C's buffer is {g}, want {w}")
        })?;
    }
    Ok(())
}

fn blas_rules_batched(ctx: &Context) -> Result<(), Failed> {
    for beta in [0.0, -0.0, 1.0, 2.0, -0.5] {
        for (ta, tb) in [(false, false), (true, true)] {
            // k = 0: every A_i and B_i empty.
            let case = Case::new(37, 45, 0)
                .transposed(ta, tb)
                .padded([0, 0, 3], [0; 3])
                .scaled(1.0, beta);
            scaling_batched(ctx, &Batched::new(case, 3).gapped([0, 0, 5]), false)?;
            // α = 0 with A and B full of NaN: they are not read.
            let case = Case::new(37, 45, 65)
                .transposed(ta, tb)
                .padded([1, 2, 3], [0; 3])
                .scaled(0.0, beta);
            scaling_batched(ctx, &Batched::new(case, 3).gapped([2, 1, 5]), true)?;
        }
    }
    // m = 0 or n = 0: nothing to write, no error.
    for (m, n, k) in [(0, 5, 10), (5, 0, 10)] {
        let batch = Batched::new(Case::new(m, n, k).scaled(1.0, 0.5), 3);
        let ab = upload(ctx, &batch.input())?;
        let c0 = batch.initial_c();
        let mut c = upload(ctx, &c0)?;
        ok(run_batched(ctx, &batch.case.gemm(), &batch, &ab, &mut c))?;
        untouched(ctx, &c, &c0, &batch.name())?;
    }
    // β = 0 ignores the NaN that `Batched::initial_c` writes into every C_i.
    let batch = Batched::new(Case::new(129, 257, 100).scaled(0.5, 0.0), 3).gapped([1, 2, 3]);
    let input = batch.input();
    let ab = upload(ctx, &input)?;
    let c0 = batch.initial_c();
    let mut c = upload(ctx, &c0)?;
    ok(run_batched(ctx, &batch.case.gemm(), &batch, &ab, &mut c))?;
    let got = download(ctx, &c)?;
    batch.check(GemmVariant::DEFAULT, &input, &c0, &got, "β = 0")
}

/// Passes if `r` is an error for which `is` holds, printing it.
fn expect_refusal<T: std::fmt::Debug>(
    r: warpspeed::Result<T>,
    is: impl FnOnce(&Error) -> bool,
    what: &str,
) -> Result<(), Failed> {
    match r {
        Err(e) if is(&e) => {
            eprintln!("  refused {what}: {e}");
            Ok(())
        }
        other => Err(format!("{what}: {other:?}").into()),
    }
}

/// Whether an error is a refusal of `given` matrices for `expected`.
fn length_mismatch(expected: usize, given: usize) -> impl Fn(&Error) -> bool {
    move |e: &Error| match *e {
        Error::LengthMismatch {
            expected: x,
            given: g,
            ..
        } => (x, g) == (expected, given),
        _ => false,
    }
}

/// Whether an error is a refusal of a `given` shape for `expected`.
fn shape_mismatch(expected: (usize, usize), given: (usize, usize)) -> impl Fn(&Error) -> bool {
    move |e: &Error| match *e {
        Error::ShapeMismatch {
            expected: x,
            given: g,
            ..
        } => (x, g) == (expected, given),
        _ => false,
    }
}

fn refusals_batched(ctx: &Context) -> Result<(), Failed> {
    let invalid = |e: &Error| matches!(e, Error::InvalidArgument(_));
    let host = random_vec(4096, 6, draw_f32);
    let buffer = upload(ctx, &host)?;
    let c0 = vec![PAD; 256];
    let mut c = upload(ctx, &c0)?;
    // 3 products of 8 × 6 × 5: A_i is 5 wide and 8 high (40 elements), B_i
    // 6 × 5 (30), C_i 6 × 8 (48); the regions hold 4 of each.
    let gemm = Gemm::new(8, 6, 5);
    let (a_region, b_region) = (ok(buffer.slice(0..160))?, ok(buffer.slice(300..420))?);
    let a = ok(MatrixBatch::new(&a_region, 5, 8, 3))?;
    let b = ok(MatrixBatch::new(&b_region, 6, 5, 3))?;
    {
        let mut cv = ok(MatrixBatchMut::new(&mut c, 6, 8, 3))?;
        let (a2, b4) = (
            ok(MatrixBatch::new(&a_region, 5, 8, 2))?,
            ok(MatrixBatch::new(&b_region, 6, 5, 4))?,
        );
        expect_refusal(
            ctx.gemm_batched_into(&gemm, 1.0, &a2, &b, 0.0, &mut cv),
            length_mismatch(3, 2),
            "A of 2 matrices for 3 products",
        )?;
        expect_refusal(
            ctx.gemm_batched_into(&gemm, 1.0, &a, &b4, 0.0, &mut cv),
            length_mismatch(3, 4),
            "B of 4 matrices for 3 products",
        )?;
        let short = ok(MatrixBatch::new(&a_region, 5, 7, 3))?;
        expect_refusal(
            ctx.gemm_batched_into(&gemm, 1.0, &short, &b, 0.0, &mut cv),
            shape_mismatch((5, 8), (5, 7)),
            "A_i with 7 rows for m = 8",
        )?;
        expect_refusal(
            ctx.gemm_batched_into(&gemm.transpose_a(true), 1.0, &a, &b, 0.0, &mut cv),
            shape_mismatch((8, 5), (5, 8)),
            "untransposed A_i for op(A) = Aᵀ",
        )?;
        expect_refusal(
            ctx.gemm_batched_into(&gemm.transpose_b(true), 1.0, &a, &b, 0.0, &mut cv),
            shape_mismatch((5, 6), (6, 5)),
            "untransposed B_i for op(B) = Bᵀ",
        )?;
        let mut c2 = ok(MatrixBatchMut::new(&mut c, 6, 8, 2))?;
        expect_refusal(
            ctx.gemm_batched_into(&gemm, 1.0, &a, &b, 0.0, &mut c2),
            length_mismatch(2, 3),
            "C of 2 matrices for A and B of 3",
        )?;
        let mut wrong = ok(MatrixBatchMut::new(&mut c, 8, 6, 3))?;
        expect_refusal(
            ctx.gemm_batched_into(&gemm, 1.0, &a, &b, 0.0, &mut wrong),
            shape_mismatch((6, 8), (8, 6)),
            "C_i of 6 rows of 8 for 8 rows of 6",
        )?;
    }
    // C's span sharing bytes with A's or B's, from views that only unsafe
    // code can make (`buffer` is borrowed shared). The first: A's
    // matrices 100 elements apart and C's in the gaps between them, no
    // element shared, which the span rule refuses all the same. Refused
    // also when α = 0 (nothing would read them).
    let a_apart = ok(MatrixBatch::with_strides(&buffer, 5, 8, 5, 3, 100))?;
    for (a, range, stride, what) in [
        (&a_apart, 40..288, 100, "C's matrices between A's"),
        (&a, 100..244, 48, "C overlapping A's last matrix"),
        (&a, 320..464, 48, "C overlapping B"),
    ] {
        // SAFETY: elements `range` of the live `buffer`, which outlives
        // the view (kept to the end of the block); the calls must refuse
        // it before any launch, and had they launched, the refusal check's
        // drop of their `Pending` waits for the stream before `buffer` is
        // read again (`untouched` below) or freed.
        let mut region = unsafe {
            ViewMut::<f32>::from_raw_parts(
                buffer.device_address() + (range.start * size_of::<f32>()) as u64,
                range.len(),
                buffer.device(),
            )
        };
        let mut cv = ok(MatrixBatchMut::with_strides(
            &mut region,
            6,
            8,
            6,
            3,
            stride,
        ))?;
        expect_refusal(
            ctx.gemm_batched_into(&gemm, 1.0, a, &b, 0.0, &mut cv),
            invalid,
            what,
        )?;
        expect_refusal(
            ctx.gemm_batched_into(&gemm, 0.0, a, &b, 0.5, &mut cv),
            invalid,
            what,
        )?;
    }
    // Writable matrices that would share elements, each in a slice long
    // enough for it: stacked too close, repeated, side by side past the
    // pitch, side by side closer than the width. Their disjoint neighbours
    // are taken.
    for (pitch, count, stride, what) in [
        (6, 3, 47, "C_i 47 apart, 48 long"),
        (6, 2, 0, "two C_i at one place"),
        (16, 3, 6, "three C_i of 6 columns in rows of 16"),
        (24, 3, 5, "C_i of 6 columns 5 apart"),
    ] {
        expect_refusal(
            MatrixBatchMut::with_strides(&mut c, 6, 8, pitch, count, stride),
            invalid,
            what,
        )?;
    }
    for (pitch, count, stride) in [(6, 3, 48), (24, 4, 6), (6, 1, 0)] {
        ok(MatrixBatchMut::with_strides(
            &mut c, 6, 8, pitch, count, stride,
        ))?;
    }
    // Batches whose last matrix runs past the slice.
    expect_refusal(
        MatrixBatch::new(&a_region, 5, 8, 5),
        invalid,
        "5 A_i of 40 in 160 elements",
    )?;
    expect_refusal(
        MatrixBatch::with_strides(&a_region, 5, 8, 5, 3, 61),
        invalid,
        "3 A_i of 40, 61 apart, in 160 elements",
    )?;
    expect_refusal(
        MatrixBatchMut::new(&mut c, 6, 8, 6),
        invalid,
        "6 C_i of 48 in 256 elements",
    )?;
    expect_refusal(
        MatrixBatch::with_strides(&a_region, 5, 8, 5, usize::MAX, usize::MAX),
        invalid,
        "a batch whose last matrix starts past the address space",
    )?;
    // Nothing was launched: C and the operands' buffer are as they were.
    untouched(ctx, &c, &c0, "batched refusals")?;
    untouched(
        ctx,
        &buffer,
        &host,
        "batched refusals (the operands' buffer)",
    )
}

/// The split batch twice gives the same bits (its slices may finish in
/// any order).
fn repeatable_batched(ctx: &Context) -> Result<(), Failed> {
    let batch = Batched::new(Case::new(200, 300, 1000), 3);
    let input = upload(ctx, &batch.input())?;
    let gemm = batch.case.gemm().variant(GemmVariant::Pipelined);
    let mut outs = Vec::new();
    for _ in 0..2 {
        let mut c = upload(ctx, &batch.initial_c())?;
        ok(run_batched(ctx, &gemm, &batch, &input, &mut c))?;
        outs.push(download(ctx, &c)?);
    }
    let same = outs[0]
        .iter()
        .zip(&outs[1])
        .all(|(x, y)| x.to_bits() == y.to_bits());
    ensure(same, || {
        format!("Pipelined {}: two runs gave different bits", batch.name())
    })
}

/// Elements from the first of a `shape` (`(width, height)`) view with
/// rows `pitch` apart to its last.
fn extent((w, h): (usize, usize), pitch: usize) -> usize {
    match (w, h) {
        (0, _) | (_, 0) => 0,
        (w, h) => (h - 1) * pitch + w,
    }
}

/// Products of `case`'s shape, transposes, `α` and `β` over lists of
/// views (`gemm_each_into`): view `i` of operand `o` starts at element
/// `places[o][i].0` of its buffer, rows `places[o][i].1` apart. `A`'s
/// and `B`'s views lie in one buffer (`B`'s region after `A`'s, unless
/// `B`'s views are `A`'s), `C`'s in its own; the case's pads and offsets
/// are not used.
#[derive(Clone, Debug)]
struct Listed {
    case: Case,
    places: [Vec<(usize, usize)>; 3],
    name: String,
}

impl Listed {
    /// `places` within each operand's region; `B`'s region starts after
    /// `A`'s last view, on a 16-byte boundary (as [`Case::b_base`]).
    fn new(case: Case, places: [Vec<(usize, usize)>; 3], name: String) -> Listed {
        let mut list = Listed { case, places, name };
        let b_base = list.end(0).next_multiple_of(4);
        for place in &mut list.places[1] {
            place.0 += b_base;
        }
        list
    }

    /// `batch`'s matrices, a view each: one pitch and equal steps in each
    /// list, so the products run as one strided batch.
    fn strided(batch: &Batched) -> Listed {
        let places = [0, 1, 2].map(|o| {
            let pitch = batch.case.pitch(o);
            (0..batch.count)
                .map(|i| (i * batch.strides[o], pitch))
                .collect()
        });
        Listed::new(
            batch.case.clone(),
            places,
            format!("strided::{}", batch.name()),
        )
    }

    /// `count` views in each list at unequal gaps, each with a pitch of
    /// its own: no list is a progression, so the products run one at a
    /// time.
    fn scattered(case: Case, count: usize) -> Listed {
        // Cycled with the view and the operand: neighbouring views differ
        // in both, and so do the lists.
        const PADS: [usize; 3] = [2, 0, 5];
        const GAPS: [usize; 3] = [1, 6, 3];
        let places = [0, 1, 2].map(|o| {
            let (shape, mut end) = (case.shape(o), 0);
            (0..count)
                .map(|i| {
                    let pitch = shape.0 + PADS[(i + o) % 3];
                    let start = end + GAPS[(i + o) % 3];
                    end = start + extent(shape, pitch);
                    (start, pitch)
                })
                .collect()
        });
        let name = format!("scattered::count_{count}::{}", case.name());
        Listed::new(case, places, name)
    }

    /// The lists last view first: descending addresses, which no stride
    /// describes, so the products run one at a time, each `C_i` still
    /// from its own `A_i` and `B_i`.
    fn reversed(mut self) -> Listed {
        for list in &mut self.places {
            list.reverse();
        }
        self.name += "::reversed";
        self
    }

    /// Every view of input `o` its first: one matrix read by every
    /// product.
    fn repeated(mut self, o: usize) -> Listed {
        if let Some(&first) = self.places[o].first() {
            self.places[o].fill(first);
        }
        self.name += ["::one_a", "::one_b"][o];
        self
    }

    /// `B`'s views `A`'s (the shapes must agree: `op(B) = Aᵀ`, `m = n`):
    /// inputs that are one view, `C_i = A_i · A_iᵀ`.
    fn b_is_a(mut self) -> Listed {
        self.places[1] = self.places[0].clone();
        self.name += "::b_is_a";
        self
    }

    fn count(&self) -> usize {
        self.places[2].len()
    }

    /// The end of operand `o`'s last view in its buffer.
    fn end(&self, o: usize) -> usize {
        let shape = self.case.shape(o);
        self.places[o]
            .iter()
            .map(|&(start, pitch)| start + extent(shape, pitch))
            .max()
            .unwrap_or(0)
    }

    fn elements(&self) -> usize {
        self.count() * self.case.elements()
    }

    fn key(&self) -> String {
        format!("{}/each_{:?}", self.case.key(), self.places)
    }

    /// `(row, column, element of the buffer)` of each element of view `i`
    /// of operand `o`.
    fn cells(&self, o: usize, i: usize) -> impl Iterator<Item = (usize, usize, usize)> + use<> {
        let ((w, h), (start, pitch)) = (self.case.shape(o), self.places[o][i]);
        (0..h).flat_map(move |y| (0..w).map(move |x| (y, x, start + y * pitch + x)))
    }

    /// The inputs' buffer: uniform in `[-1, 1)` inside the views, NaN
    /// outside. A view listed twice is drawn twice: the last draw stays.
    fn input(&self) -> Vec<f32> {
        let mut host = vec![f32::NAN; self.end(0).max(self.end(1)).max(1)];
        let mut r = rng(seed_of(&self.key()));
        for o in [0, 1] {
            for i in 0..self.count() {
                for (_, _, e) in self.cells(o, i) {
                    host[e] = draw_f32(&mut r);
                }
            }
        }
        host
    }

    /// `C`'s buffer before the call: [`PAD`] outside the views; inside,
    /// NaN where `β = 0`, else uniform in `[-1, 1)`.
    fn initial_c(&self) -> Vec<f32> {
        let mut c = vec![PAD; self.end(2).max(1)];
        let mut r = rng(seed_of(&format!("{}/c", self.key())));
        for i in 0..self.count() {
            for (_, _, e) in self.cells(2, i) {
                c[e] = if self.case.beta == 0.0 {
                    f32::NAN
                } else {
                    draw_f32(&mut r)
                };
            }
        }
        c
    }

    /// Checks `got` (`C`'s buffer after the call; `c0` before it) as
    /// [`Batched::check`] does: each product by [`check_full`] on copies
    /// of its views laid out as one product of their pitches ([`PAD`]
    /// around `C_i`), and every element outside the views for its old
    /// bits.
    fn check(
        &self,
        step: GemmVariant,
        host: &[f32],
        c0: &[f32],
        got: &[f32],
        what: &str,
    ) -> Result<(), Failed> {
        let mut inside = vec![false; got.len()];
        for i in 0..self.count() {
            let [a, b, c] = [0, 1, 2].map(|o| self.places[o][i]);
            let member = Case {
                pads: [(0, a.1), (1, b.1), (2, c.1)].map(|(o, pitch)| pitch - self.case.shape(o).0),
                offsets: [0; 3],
                member: Some(format!("{}/{i}", self.key())),
                ..self.case.clone()
            };
            let mut operands = vec![f32::NAN; (member.b_base() + member.len(1)).max(1)];
            for (o, from, to) in [(0, a.0, 0), (1, b.0, member.b_base())] {
                let extent = member.extent(o);
                operands[to..to + extent].copy_from_slice(&host[from..from + extent]);
            }
            let mut c0_i = vec![PAD; member.len(2).max(1)];
            let mut got_i = c0_i.clone();
            for (y, x, e) in self.cells(2, i) {
                let at = y * member.pitch(2) + x;
                (c0_i[at], got_i[at]) = (c0[e], got[e]);
                inside[e] = true;
            }
            let what = format!("{what}, C_{i}");
            check_full(&member, step, &operands, &c0_i, &got_i, &what)?;
        }
        for (e, (&g, &old)) in got.iter().zip(c0).enumerate() {
            ensure(inside[e] || g.to_bits() == old.to_bits(), || {
                format!("{what}: element {e} of C's buffer, outside the views, became {g}")
            })?;
        }
        Ok(())
    }
}

/// Read-only views of `shape` at `places` (`(start, pitch)` each) of
/// `data`.
fn input_views<'a>(
    data: &'a Buffer<f32>,
    places: &[(usize, usize)],
    (w, h): (usize, usize),
) -> warpspeed::Result<Vec<Matrix<'a, f32>>> {
    places
        .iter()
        .map(|&(start, pitch)| {
            let len = extent((w, h), pitch);
            Matrix::with_pitch(&data.slice(start..start + len)?, w, h, pitch)
        })
        .collect()
}

/// Writable views of `shape` at `places` (`(start, pitch)` each) of
/// `data`, in the order of `places`, cut from it in the order of their
/// starts (so they must not overlap).
fn output_views<'a>(
    data: ViewMut<'a, f32>,
    places: &[(usize, usize)],
    (w, h): (usize, usize),
) -> warpspeed::Result<Vec<MatrixMut<'a, f32>>> {
    let mut order: Vec<usize> = (0..places.len()).collect();
    order.sort_by_key(|&i| places[i].0);
    let (mut rest, mut at) = (data, 0);
    let mut views = Vec::with_capacity(places.len());
    for i in order {
        let (start, pitch) = places[i];
        let len = extent((w, h), pitch);
        let gap = start.checked_sub(at).ok_or_else(|| {
            Error::InvalidArgument(format!("output view {i} overlaps the one before it"))
        })?;
        let (_, tail) = rest.split_at_mut(gap)?;
        let (view, tail) = tail.split_at_mut(len)?;
        views.push((i, MatrixMut::with_pitch(view, w, h, pitch)?));
        (rest, at) = (tail, start + len);
    }
    views.sort_by_key(|&(i, _)| i);
    Ok(views.into_iter().map(|(_, view)| view).collect())
}

/// Runs `gemm` (with the list's `α` and `β`) on the list's views of `ab`
/// ([`Listed::input`]) into its views of `c` (its `C` buffer), waiting.
fn run_listed(
    ctx: &Context,
    gemm: &Gemm,
    list: &Listed,
    ab: &Buffer<f32>,
    c: &mut Buffer<f32>,
) -> warpspeed::Result<()> {
    let case = &list.case;
    let a = input_views(ab, &list.places[0], case.shape(0))?;
    let b = input_views(ab, &list.places[1], case.shape(1))?;
    let mut cv = output_views(c.slice_mut(..)?, &list.places[2], case.shape(2))?;
    ctx.gemm_each_into(gemm, case.alpha, &a, &b, case.beta, &mut cv)?
        .wait()
}

/// One list trial: `step` on `list`, every product checked in full;
/// refused, touching nothing, where the loaded PTX lacks the step (an
/// empty list included).
fn check_listed(ctx: &Context, step: GemmVariant, list: &Listed) -> Result<(), Failed> {
    let input = cached_input(ctx, &list.key(), || list.input())?;
    let (host, device) = (&input.0, &input.1);
    let what = format!("{step:?} {}", list.name);
    each_tiling(
        ctx,
        (step, list.case.gemm(), &list.initial_c(), &what),
        |gemm, c| run_listed(ctx, gemm, list, device, c),
        |c0, got, what| list.check(step, host, c0, got, what),
    )
}

fn listed_cases() -> Vec<Listed> {
    let mut lists = Vec::new();
    let transposes = [(false, false), (true, false), (false, true), (true, true)];
    // No product; one (a list of one view each is no progression: it
    // runs alone).
    lists.push(Listed::strided(&Batched::new(Case::new(1, 1, 1), 0)));
    lists.push(Listed::scattered(
        Case::new(33, 17, 20).transposed(true, false),
        0,
    ));
    lists.push(Listed::strided(&Batched::new(Case::new(1, 1, 1), 1)));
    lists.push(Listed::scattered(
        Case::new(130, 70, 200)
            .transposed(false, true)
            .scaled(0.5, -1.0),
        1,
    ));
    // Three products in one launch and one at a time: within a tile, past
    // tile edges, and `k` split across blocks by the pipelined step (as
    // in the batched trials), every transpose combination.
    for (m, n, k) in [(1, 1, 1), (33, 17, 20), (130, 70, 200), (200, 300, 1000)] {
        for (ta, tb) in transposes {
            let case = Case::new(m, n, k).transposed(ta, tb);
            lists.push(Listed::strided(&Batched::new(case.clone(), 3)));
            lists.push(Listed::scattered(case, 3));
        }
    }
    // Equal steps with gaps and pitches beyond the widths, and on the
    // vector paths; β ≠ 0 accumulating, through both paths.
    lists.push(Listed::strided(
        &Batched::new(
            Case::new(130, 70, 200)
                .transposed(true, true)
                .padded([3, 5, 7], [0; 3])
                .scaled(2.0, -1.0),
            3,
        )
        .gapped([5, 2, 9]),
    ));
    lists.push(Listed::strided(
        &Batched::new(Case::new(130, 70, 200).transposed(false, true), 3).aligned(),
    ));
    lists.push(Listed::scattered(
        Case::new(200, 300, 1000).scaled(0.75, -2.0),
        3,
    ));
    lists.push(Listed::strided(&Batched::new(Case::new(130, 70, 200), 3)).reversed());
    // Inputs that are one view repeated: `A` at a stride of 0 in one
    // launch, `B` one at a time; one view as `A` and `B`, repeated (both
    // strides 0) and not.
    lists.push(
        Listed::strided(&Batched::new(
            Case::new(33, 17, 20).transposed(true, false),
            3,
        ))
        .repeated(0),
    );
    lists.push(
        Listed::strided(&Batched::new(Case::new(200, 300, 1000).scaled(1.0, 1.0), 3)).repeated(0),
    );
    lists.push(Listed::scattered(Case::new(130, 70, 200).transposed(false, true), 3).repeated(1));
    let gram = Case::new(64, 64, 40).transposed(false, true);
    lists.push(
        Listed::strided(&Batched::new(gram.clone(), 3))
            .repeated(0)
            .b_is_a(),
    );
    lists.push(Listed::scattered(gram, 3).b_is_a());
    lists
}

/// `gemm_each_into`'s refusals, each before any launch: lists of
/// different lengths, a view of the wrong shape, outputs that share bytes
/// with each other or with an input.
fn refusals_each(ctx: &Context) -> Result<(), Failed> {
    let invalid = |e: &Error| matches!(e, Error::InvalidArgument(_));
    let host = random_vec(4096, 7, draw_f32);
    let buffer = upload(ctx, &host)?;
    let c0 = vec![PAD; 256];
    let mut c = upload(ctx, &c0)?;
    // Products of 8 × 6 × 5: A_i is 5 wide and 8 high (40 elements), B_i
    // 6 × 5 (30), C_i 6 × 8 (48); each list's views at unequal gaps, one
    // more than 3 of each input.
    let gemm = Gemm::new(8, 6, 5);
    let a = ok(input_views(
        &buffer,
        &[(0, 5), (40, 5), (100, 5), (150, 5)],
        (5, 8),
    ))?;
    let b = ok(input_views(
        &buffer,
        &[(300, 6), (330, 6), (400, 6), (440, 6)],
        (6, 5),
    ))?;
    let (a, a4, b, b4) = (&a[..3], &a[..], &b[..3], &b[..]);
    {
        let mut cv = ok(output_views(
            ok(c.slice_mut(..))?,
            &[(0, 6), (50, 6), (120, 6)],
            (6, 8),
        ))?;
        expect_refusal(
            ctx.gemm_each_into(&gemm, 1.0, &a[..2], b, 0.0, &mut cv),
            length_mismatch(3, 2),
            "2 A for 3 C",
        )?;
        expect_refusal(
            ctx.gemm_each_into(&gemm, 1.0, a, b4, 0.0, &mut cv),
            length_mismatch(3, 4),
            "4 B for 3 C",
        )?;
        expect_refusal(
            ctx.gemm_each_into(&gemm, 1.0, a4, b4, 0.0, &mut cv[..2]),
            length_mismatch(2, 4),
            "2 C for 4 A and 4 B",
        )?;
        // One view of the wrong shape, after good ones: the whole list is
        // checked before the first product runs.
        let mut short = a.to_vec();
        short[2] = ok(Matrix::new(&ok(buffer.slice(100..140))?, 5, 7))?;
        expect_refusal(
            ctx.gemm_each_into(&gemm, 1.0, &short, b, 0.0, &mut cv),
            shape_mismatch((5, 8), (5, 7)),
            "A_2 with 7 rows for m = 8",
        )?;
        let mut narrow = b.to_vec();
        narrow[1] = ok(Matrix::new(&ok(buffer.slice(330..355))?, 5, 5))?;
        expect_refusal(
            ctx.gemm_each_into(&gemm, 1.0, a, &narrow, 0.0, &mut cv),
            shape_mismatch((6, 5), (5, 5)),
            "B_1 with 5 columns for n = 6",
        )?;
        expect_refusal(
            ctx.gemm_each_into(&gemm.transpose_a(true), 1.0, a, b, 0.0, &mut cv),
            shape_mismatch((8, 5), (5, 8)),
            "untransposed A_i for op(A) = Aᵀ",
        )?;
    }
    {
        let (c_0, rest) = ok(c.split_at_mut(48))?;
        let (c_1, c_2) = ok(rest.split_at_mut(100))?;
        let mut cv = vec![
            ok(MatrixMut::new(c_0, 6, 8))?,
            ok(MatrixMut::new(c_1, 8, 6))?,
            ok(MatrixMut::new(c_2, 6, 8))?,
        ];
        expect_refusal(
            ctx.gemm_each_into(&gemm, 1.0, a, b, 0.0, &mut cv),
            shape_mismatch((6, 8), (8, 6)),
            "C_1 of 6 rows of 8 for 8 rows of 6",
        )?;
    }
    // Outputs sharing bytes with each other (outputs side by side within
    // rows of 16 share none of their elements, but bytes of their spans),
    // or with an input, another product's too. Refused also when α = 0
    // (nothing would read the inputs).
    for (outputs, what) in [
        (
            [(&c, 0, 6), (&c, 47, 6), (&c, 120, 6)],
            "C_0 and C_1 sharing an element",
        ),
        (
            [(&c, 0, 6), (&c, 120, 6), (&c, 0, 6)],
            "C_0 and C_2 one view",
        ),
        (
            [(&c, 0, 16), (&c, 6, 16), (&c, 150, 6)],
            "C_0 and C_1 side by side in rows of 16",
        ),
        (
            [(&buffer, 130, 6), (&c, 50, 6), (&c, 120, 6)],
            "C_0 overlapping A_2",
        ),
        (
            [(&c, 0, 6), (&buffer, 70, 6), (&c, 120, 6)],
            "C_1 overlapping its A_1",
        ),
        (
            [(&c, 0, 6), (&c, 50, 6), (&buffer, 420, 6)],
            "C_2 overlapping its B_2",
        ),
    ] {
        let mut cv = Vec::new();
        for (of, start, pitch) in outputs {
            let len = extent((6, 8), pitch);
            // SAFETY: elements `start..start + len` of the live `c` or
            // `buffer`, which outlive the view (kept to the end of the
            // iteration); the calls must refuse it before any launch, and
            // had they launched, the refusal check's drop of their
            // `Pending` waits for the stream before either buffer is read
            // again (`untouched` below) or freed.
            let region = unsafe {
                ViewMut::<f32>::from_raw_parts(
                    of.device_address() + (start * size_of::<f32>()) as u64,
                    len,
                    of.device(),
                )
            };
            cv.push(ok(MatrixMut::with_pitch(region, 6, 8, pitch))?);
        }
        expect_refusal(
            ctx.gemm_each_into(&gemm, 1.0, a, b, 0.0, &mut cv),
            invalid,
            what,
        )?;
        expect_refusal(
            ctx.gemm_each_into(&gemm, 0.0, a, b, 0.5, &mut cv),
            invalid,
            what,
        )?;
    }
    // Nothing was launched: C and the operands' buffer are as they were.
    untouched(ctx, &c, &c0, "list refusals")?;
    untouched(ctx, &buffer, &host, "list refusals (the operands' buffer)")
}

/// The precisions a product may ask for.
const PRECISIONS: [Precision; 3] = [Precision::Fp32, Precision::Tf32, Precision::Tf32x3];

/// Products of one row or one column of `C` (`m = 1` or `n = 1`), which
/// every precision runs as a matrix times a vector in `f32`: both layouts
/// of the matrix in every transpose combination, output groups and `k`
/// split across blocks (a dot product, 4096-wide rows, `k` up to 2^20),
/// edges of the vector paths (odd sizes, odd pitches and starts: the
/// element paths), `β ≠ 0` accumulating.
fn gemv_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    let transposes = [(false, false), (true, false), (false, true), (true, true)];
    for (m, n, k) in [
        (1, 1, 1),
        (1, 1, 4099),
        (1, 4096, 4096),
        (4096, 1, 4096),
        (1, 1000, 999),
        (999, 1, 1001),
        (1, 130, 3),
        (1, 33, 100_000),
        (65, 1, 1 << 20),
    ] {
        for (ta, tb) in transposes {
            cases.push(Case::new(m, n, k).transposed(ta, tb));
        }
    }
    for (ta, tb) in transposes {
        cases.push(Case::new(1, 1000, 999).transposed(ta, tb).aligned());
        cases.push(Case::new(999, 1, 1001).transposed(ta, tb).aligned());
        cases.push(
            Case::new(1, 1000, 999)
                .transposed(ta, tb)
                .padded([1, 3, 2], [1, 2, 3])
                .scaled(0.5, -1.5),
        );
        cases.push(
            Case::new(999, 1, 1001)
                .transposed(ta, tb)
                .padded([2, 1, 3], [3, 1, 1])
                .scaled(-2.0, 0.25),
        );
    }
    cases
}

/// `case` asked for in `precision`: within the FP32 step's bound (what
/// the matrix-times-vector kernels compute in), and the same bits again
/// on a second run (split slices meet in a fixed order); refused,
/// touching nothing, where the loaded PTX lacks the precision's steps.
fn check_gemv(ctx: &Context, precision: Precision, case: &Case) -> Result<(), Failed> {
    let input = cached_input(ctx, &case.key(), || case.input())?;
    let (host, device) = (&input.0, &input.1);
    let gemm = case.gemm().precision(precision);
    let what = format!("{precision:?} {}", case.name());
    let c0 = case.initial_c();
    let mut outs = Vec::new();
    for _ in 0..2 {
        let mut c = upload(ctx, &c0)?;
        let result = run(ctx, &gemm, case, device, &mut c);
        if !runs(ctx, GemmVariant::for_precision(precision)) {
            return match result {
                Err(Error::Unsupported { .. }) => untouched(ctx, &c, &c0, &what),
                other => Err(format!("{what} on {}: {other:?}", ctx.info().ptx_target).into()),
            };
        }
        ok(result)?;
        let got = download(ctx, &c)?;
        check_full(case, GemmVariant::Pipelined, host, &c0, &got, &what)?;
        outs.push(got);
    }
    ensure(
        outs[0]
            .iter()
            .zip(&outs[1])
            .all(|(x, y)| x.to_bits() == y.to_bits()),
        || format!("{what}: two runs gave different bits"),
    )
}

/// Strided batches of products of one row or column, by precision: each
/// product checked in full against the FP32 step's bound (the output
/// groups of a batch numbered across it, split or not).
fn gemv_batches() -> Vec<Batched> {
    vec![
        Batched::new(Case::new(1, 64, 64), 1000),
        Batched::new(Case::new(64, 1, 64).transposed(true, false), 1000),
        Batched::new(Case::new(1, 100, 3000).transposed(false, true), 3),
        Batched::new(Case::new(1, 300, 5000), 7).gapped([1, 2, 3]),
        Batched::new(Case::new(1, 48, 4096), 2).strided([0, 48 * 4096, 48]),
    ]
}

fn check_gemv_batched(ctx: &Context, precision: Precision, batch: &Batched) -> Result<(), Failed> {
    let input = cached_input(ctx, &batch.key(), || batch.input())?;
    let (host, device) = (&input.0, &input.1);
    let what = format!("{precision:?} {}", batch.name());
    let c0 = batch.initial_c();
    let mut c = upload(ctx, &c0)?;
    let result = run_batched(
        ctx,
        &batch.case.gemm().precision(precision),
        batch,
        device,
        &mut c,
    );
    if !runs(ctx, GemmVariant::for_precision(precision)) {
        return match result {
            Err(Error::Unsupported { .. }) => untouched(ctx, &c, &c0, &what),
            other => Err(format!("{what} on {}: {other:?}", ctx.info().ptx_target).into()),
        };
    }
    ok(result)?;
    batch.check(
        GemmVariant::Pipelined,
        host,
        &c0,
        &download(ctx, &c)?,
        &what,
    )
}

/// 3xTF32 asked for by precision on products its plan gives to the FP32
/// step (few rows, or few multiply-adds): within the FP32 step's bound,
/// in every transpose combination.
fn small_tf32x3(ctx: &Context) -> Result<(), Failed> {
    for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
        for case in [
            Case::new(256, 256, 256).transposed(ta, tb),
            Case::new(16, 1000, 999).transposed(ta, tb).scaled(1.5, 0.5),
        ] {
            let input = cached_input(ctx, &case.key(), || case.input())?;
            let (host, device) = (&input.0, &input.1);
            let c0 = case.initial_c();
            let mut c = upload(ctx, &c0)?;
            let gemm = case.gemm().precision(Precision::Tf32x3);
            let result = run(ctx, &gemm, &case, device, &mut c);
            let what = format!("Tf32x3 {}", case.name());
            if !runs(ctx, GemmVariant::Tf32x3) {
                match result {
                    Err(Error::Unsupported { .. }) => untouched(ctx, &c, &c0, &what)?,
                    other => {
                        return Err(
                            format!("{what} on {}: {other:?}", ctx.info().ptx_target).into()
                        );
                    }
                }
                continue;
            }
            ok(result)?;
            let got = download(ctx, &c)?;
            // The FP32 step's bound where the plan gives it the product
            // (sm_90a); 3xTF32's elsewhere.
            let step = if ctx.gemm_variant(&gemm) == GemmVariant::Tf32x3Tma {
                GemmVariant::Pipelined
            } else {
                ctx.gemm_variant(&gemm)
            };
            check_full(&case, step, host, &c0, &got, &what)?;
        }
    }
    Ok(())
}

pub fn trials(trials: &mut Vec<Trial>) {
    let cases: Vec<_> = cases()
        .into_iter()
        .map(|case| (case.name(), case.elements(), case))
        .collect();
    ladder_trials::<GemmVariant, _>(trials, &cases, applies, check);
    trials.push(sized_trial(
        "gemm::tf32x3_within_twice_fp32::1024x1024x1024",
        3 << 20,
        tf32x3_against_fp32,
    ));
    trials.push(sized_trial(
        "gemm::tf32x3_long_k",
        Case::new(32, 48, 1_000_000).elements(),
        tf32x3_long_k,
    ));
    for case in gemv_cases() {
        for precision in PRECISIONS {
            let name = format!("gemm::gemv::{precision:?}::{}", case.name()).to_lowercase();
            let case = case.clone();
            trials.push(sized_trial(name, case.elements(), move |ctx| {
                check_gemv(ctx, precision, &case)
            }));
        }
    }
    for batch in gemv_batches() {
        for precision in PRECISIONS {
            let name =
                format!("gemm::gemv::batched::{precision:?}::{}", batch.name()).to_lowercase();
            let batch = batch.clone();
            trials.push(sized_trial(name, batch.elements(), move |ctx| {
                check_gemv_batched(ctx, precision, &batch)
            }));
        }
    }
    trials.push(sized_trial(
        "gemm::small_tf32x3_by_precision",
        3 << 16,
        small_tf32x3,
    ));
    trials.push(gpu_trial("gemm::blas_rules", blas_rules));
    trials.push(sized_trial(
        "gemm::k_0_over_a_grid_stride::3001x3000",
        3001 * 3000,
        scaling_large,
    ));
    trials.push(gpu_trial(
        "gemm::a_times_a_transposed",
        a_times_a_transposed,
    ));
    trials.push(gpu_trial("gemm::repeatable", repeatable));
    trials.push(gpu_trial("gemm::refuses_bad_arguments", refusals));
    trials.push(sized_trial("gemm::c_past_2_31", 65_537 * 32_769, past_2_31));
    for batch in batched_cases() {
        for &step in GemmVariant::ALL.iter().filter(|&&s| batched_step(s)) {
            let name = format!("gemm::batched::{}::{}", step.name(), batch.name());
            let batch = batch.clone();
            trials.push(sized_trial(name, batch.elements(), move |ctx| {
                check_batched(ctx, step, &batch)
            }));
        }
    }
    trials.push(gpu_trial("gemm::batched::blas_rules", blas_rules_batched));
    trials.push(gpu_trial(
        "gemm::batched::refuses_bad_arguments",
        refusals_batched,
    ));
    trials.push(gpu_trial("gemm::batched::repeatable", repeatable_batched));
    for list in listed_cases() {
        for step in FAST {
            let name = format!("gemm::each::{}::{}", step.name(), list.name);
            let list = list.clone();
            trials.push(sized_trial(name, list.elements(), move |ctx| {
                check_listed(ctx, step, &list)
            }));
        }
    }
    trials.push(gpu_trial(
        "gemm::each::refuses_bad_arguments",
        refusals_each,
    ));
}
