//! The SGEMM ladder, row-major `C = A · B` (`α = 1`, `β = 0`) of `f32`
//! uniform in [−1, 1), against cuBLAS `Sgemm` with TF32 off and cuBLAS
//! TF32 at its best (the faster of `cublasSgemm` in TF32 math and the
//! best of cuBLASLt's heuristic, `peers.cu`): every step at 4096³; the
//! steps from `register_2d` on (the lesson's first four need 70 ms and
//! more a launch there) at 8192³; every step at 1024³ and at the odd
//! 1000 × 999 × 1001; the fastest TF32 and 3xTF32 steps with `A`, `B` and
//! both transposed at 4096³; and the scaling curve of the FP32 step the
//! library uses (and of the same step reading `A` where it lies,
//! `Packing::Never`, to show what packing buys) and of the fastest TF32
//! and 3xTF32 steps over square sizes 256 to 8192; the tall-skinny
//! products `m × 4096 × 4096` of one decoding step by the steps from the
//! pipelined one on; and strided batches of small products beside cuBLAS's
//! `SgemmStridedBatched` (the last two also alone, as the families
//! `gemm_skinny` and `gemm_batched`). `--quick`: 4096³ from
//! `register_2d` on, the transposes, and the curve at 256, 1024 and 4096.
//!
//! Rates are TFLOP/s of `2·m·n·k` against the device's FP32 peak
//! ([`crate::harness::Peak`]). Each step is compared with the faster of
//! cuBLAS FP32 and the peer of its precision: cuBLAS TF32 for the TF32
//! steps, CUTLASS's 3xTF32 for the 3xTF32 ones (where `WARPSPEED_CUTLASS`
//! names CUTLASS's headers when the peers are built; not available
//! otherwise).
//! At 4096³ the lesson's two global-memory steps, a quarter of a second a
//! launch, are timed over [`SLOW_REPS`] launches instead of `--reps`.
//!
//! The operands are the same numbers in `peers.cu` ([`uniform`]), so cuBLAS
//! multiplies exactly the matrices we multiply.

use crate::harness::{
    Bench, Case, Family, Point, Row, Scaling, Timing, Work, device_copies, enqueued, ladder_rows,
    splitmix64,
};
use warpspeed::gemm::{Gemm, GemmVariant, Packing, Precision};
use warpspeed::{Buffer, Context, Matrix, MatrixBatch, MatrixBatchMut, MatrixMut};

pub const FAMILY: Family = Family { name: "gemm", run };

/// The strided batched products alone (recorded as `gemm` cases), so that
/// they can be run without the ladder: `--families gemm_batched`.
pub const BATCHED: Family = Family {
    name: "gemm_batched",
    run: batched,
};

/// The tall-skinny products alone (one decoding step's shapes, recorded
/// as `gemm` cases): `--families gemm_skinny`.
pub const SKINNY: Family = Family {
    name: "gemm_skinny",
    run: skinny,
};

/// The scaling curve alone (recorded as the `gemm` family's):
/// `--families gemm_scaling`.
pub const SCALING: Family = Family {
    name: "gemm_scaling",
    run: scaling,
};

/// The rows `m` of the tall-skinny products `m × 4096 × 4096`.
const SKINNY_ROWS: [usize; 4] = [1, 16, 64, 128];

/// The batches timed: `(count, side)` of `count` products of `side³`,
/// the shapes of cuBLAS's strided batched figures.
const BATCHES: [(usize, usize); 4] = [(1024, 64), (1024, 128), (1024, 256), (256, 512)];

/// A product's `(m, n, k)`: `A` is `m × k`, `B` `k × n`, `C` `m × n`.
type Shape = (usize, usize, usize);

/// Which steps a product is timed with.
type Steps = fn(GemmVariant) -> bool;

/// Timed launches of [`slow`] steps where one launch takes a large
/// fraction of a second (products of [`SLOW_FLOPS`] and more).
const SLOW_REPS: usize = 5;

/// Products from this many flops on (4096³) time [`slow`] steps over
/// [`SLOW_REPS`] launches.
const SLOW_FLOPS: f64 = 1.0e11;

/// Element `i` of `B` is hashed from `OFFSET_B + i` (of `A`, from `i`).
const OFFSET_B: u64 = 1 << 40;

/// The lesson's steps that read their operands from global memory, one
/// multiply-add per load: at 4096³ a quarter of a second (naive) or 25 ms
/// (coalesced) a launch.
fn slow(v: GemmVariant) -> bool {
    matches!(v, GemmVariant::Naive | GemmVariant::Coalesced)
}

/// The steps worth timing on the largest products: all but the lesson's
/// first four (at 8192³ each of those takes 70 ms to 2 s a launch).
fn fast(v: GemmVariant) -> bool {
    !matches!(
        v,
        GemmVariant::Naive
            | GemmVariant::Coalesced
            | GemmVariant::SharedTiles
            | GemmVariant::Register1d
    )
}

/// Value number `i`: uniform in [−1, 1) with 24 random bits, exact in `f32`
/// (the formula of `peers.cu`'s `UniformValues`).
fn uniform(i: u64) -> f32 {
    (splitmix64(i) >> 40) as f32 * (1.0 / (1u64 << 23) as f32) - 1.0
}

/// The group of a step: its precision. The summary shows the fastest step
/// of each.
fn group(v: GemmVariant) -> &'static str {
    match v.precision() {
        Precision::Fp32 => "fp32",
        Precision::Tf32 => "tf32",
        Precision::Tf32x3 => "tf32x3",
    }
}

/// Whether the module built for `target` runs `step` (the library refuses
/// the tensor-core steps without sm_80 PTX, the `wgmma` ones without
/// sm_90a).
fn runs(target: &str, step: GemmVariant) -> bool {
    step.needs().met_by(target)
}

fn label((m, n, k): Shape) -> String {
    format!("f32 {m}x{n}x{k}")
}

/// Bytes a product must move at least: `A` and `B` read once, `C` written
/// once (the point's `bytes`; the rate counts flops).
fn traffic((m, n, k): Shape) -> f64 {
    4.0 * (m * k + k * n + m * n) as f64
}

fn run(bench: &mut Bench) -> Result<(), String> {
    let peak = bench.peak;
    match peak.tflops() {
        Some(tflops) => println!(
            "\nFP32 peak: {} SMs × {} lanes × 2 × {:.0} MHz (the boost clock the driver reports) = {tflops:.1} TFLOP/s",
            peak.multiprocessors,
            peak.lanes,
            peak.clock_khz as f64 / 1e3
        ),
        None => println!("\nFP32 peak unknown: the driver reports no SM clock"),
    }
    let target = bench.ctx.info().ptx_target;
    let every = |_: GemmVariant| true;
    let cases: Vec<(Shape, Steps)> = if bench.quick {
        vec![((4096, 4096, 4096), fast)]
    } else {
        vec![
            ((4096, 4096, 4096), every),
            ((8192, 8192, 8192), fast),
            ((1024, 1024, 1024), every),
            ((1000, 999, 1001), every),
        ]
    };
    for (shape, steps) in cases {
        ladder(bench, shape, |v| steps(v) && runs(target, v))?;
    }
    transposes(bench)?;
    scaling(bench)?;
    skinny(bench)?;
    batched(bench)
}

/// `m × 4096 × 4096` for each of [`SKINNY_ROWS`] by the steps from the
/// pipelined one on (which one a precision should run at these shapes is
/// what the table shows), against the same peers as the ladder.
fn skinny(bench: &mut Bench) -> Result<(), String> {
    let target = bench.ctx.info().ptx_target;
    let from_pipelined = |v: GemmVariant| v.step() >= GemmVariant::Pipelined.step();
    for m in SKINNY_ROWS {
        ladder_and_plans(
            bench,
            (m, 4096, 4096),
            |v| from_pipelined(v) && runs(target, v),
            true,
        )?;
    }
    Ok(())
}

/// The rows of what each precision runs when asked for by precision
/// ([`Gemm::precision`]: its plan may choose another kernel than the
/// precision's fastest step, such as the matrix times a vector at `m =
/// 1`), as step 0 named `<precision>_plan`, in the precision's group.
/// Checked within the bound of the precision's fastest step.
fn plan_rows(bench: &mut Bench, operands: &mut Operands) -> Result<Vec<Row>, String> {
    let shape = operands.shape;
    precision_rows(bench, shape, &label(shape), |bench, gemm, fastest| {
        operands.time_gemm(bench, gemm, fastest, bench.reps)
    })
}

/// [`plan_rows`] for products of `shape` (one, or a batch) that `time`
/// runs: `time(bench, gemm, fastest)` times `gemm`, asked for by its
/// precision, and checks it within the bound of `fastest`, that
/// precision's fastest step.
fn precision_rows(
    bench: &mut Bench,
    (m, n, k): Shape,
    case: &str,
    mut time: impl FnMut(&Bench, &Gemm, GemmVariant) -> Result<Timing, String>,
) -> Result<Vec<Row>, String> {
    let target = bench.ctx.info().ptx_target;
    let mut rows = Vec::new();
    for (precision, name) in [
        (Precision::Fp32, "fp32_plan"),
        (Precision::Tf32, "tf32_plan"),
        (Precision::Tf32x3, "tf32x3_plan"),
    ] {
        let fastest = GemmVariant::fastest_for(precision, target);
        if !runs(target, fastest) || !bench.runs(fastest.name()) {
            continue;
        }
        let gemm = Gemm::new(m, n, k)
            .precision(precision)
            .tma_tiles(bench.tma_tiles);
        let timing = time(bench, &gemm, fastest)?;
        bench.progress(&format!("gemm {case} {name}"), timing);
        rows.push(Row {
            step: 0,
            variant: name,
            ms: timing.ms,
            batch_ms: timing.batch_ms,
            versus: group(fastest),
        });
    }
    Ok(rows)
}

/// Device copies of `A` and `B` (enough of each to keep every launch out of
/// L2, as the peers do) and `C`, with the host operands for the checks.
struct Operands {
    shape: Shape,
    a_host: Vec<f32>,
    b_host: Vec<f32>,
    a: Vec<Buffer<f32>>,
    b: Vec<Buffer<f32>>,
    c: Buffer<f32>,
}

impl Operands {
    fn new(bench: &Bench, shape: Shape) -> Result<Operands, String> {
        let (m, n, k) = shape;
        let a_host: Vec<f32> = (0..(m * k) as u64).map(uniform).collect();
        let b_host: Vec<f32> = (0..(k * n) as u64).map(|i| uniform(OFFSET_B + i)).collect();
        Ok(Operands {
            shape,
            a: device_copies(bench, &a_host)?,
            b: device_copies(bench, &b_host)?,
            c: bench.ctx.zeros(m * n).map_err(|e| e.to_string())?,
            a_host,
            b_host,
        })
    }

    /// The timing of `reps` launches of `variant` with `packing`, its
    /// result checked. `C` is NaN before the launches: an
    /// output no launch wrote fails the check.
    fn time(
        &mut self,
        bench: &Bench,
        variant: GemmVariant,
        packing: Packing,
        reps: usize,
    ) -> Result<Timing, String> {
        self.time_transposed(bench, variant, packing, reps, (false, false))
    }

    /// [`Operands::time`] of `op(A) · op(B)` with the operands' buffers
    /// read as stored transposed where `transposed` says (`A` as `k × m`,
    /// `B` as `n × k`): a square product's buffers serve every pair.
    fn time_transposed(
        &mut self,
        bench: &Bench,
        variant: GemmVariant,
        packing: Packing,
        reps: usize,
        (ta, tb): (bool, bool),
    ) -> Result<Timing, String> {
        let (m, n, k) = self.shape;
        let gemm = Gemm::new(m, n, k)
            .transpose_a(ta)
            .transpose_b(tb)
            .variant(variant)
            .packing(packing)
            .tma_tiles(bench.tma_tiles);
        self.time_gemm(bench, &gemm, variant, reps)
    }

    /// [`Operands::time`] of `gemm` as it is configured (a step, or a
    /// precision whose plan chooses the kernel), checked within the bound
    /// of `variant`'s precision.
    fn time_gemm(
        &mut self,
        bench: &Bench,
        gemm: &Gemm,
        variant: GemmVariant,
        reps: usize,
    ) -> Result<Timing, String> {
        let (m, n, _) = self.shape;
        let (ta, tb) = (gemm.get_transpose_a(), gemm.get_transpose_b());
        let ((a_w, a_h), (b_w, b_h)) = (gemm.a_shape(), gemm.b_shape());
        bench
            .ctx
            .fill(&mut self.c, f32::NAN)
            .map_err(|e| e.to_string())?;
        let (a, b, c) = (&self.a, &self.b, &mut self.c);
        let mut turn = 0;
        let ms = bench.time_reps(reps, || {
            turn += 1;
            let a = Matrix::new(&a[turn % a.len()], a_w, a_h).map_err(|e| e.to_string())?;
            let b = Matrix::new(&b[turn % b.len()], b_w, b_h).map_err(|e| e.to_string())?;
            let mut c = MatrixMut::new(&mut *c, n, m).map_err(|e| e.to_string())?;
            enqueued(bench.ctx.gemm_into(gemm, 1.0, &a, &b, 0.0, &mut c))
        })?;
        self.check(bench.ctx, variant, (ta, tb))
            .map_err(|e| format!("gemm {} {}: {e}", label(self.shape), variant.name()))?;
        Ok(ms)
    }

    /// Checks outputs at the corners, around tile edges and in the middle
    /// against an `f64` sum of the same `f32` products, within twice the
    /// bound `host/src/gemm.rs` documents for the step's precision (the
    /// check is for wrong results, the tests bound the error):
    /// `γ_(k+2) · Σ|a·b|` for FP32 and 3xTF32 (plus `3·2^-22 · Σ|a·b|`
    /// for the split), plus `2^-10 · Σ|a·b|` for TF32.
    fn check(
        &self,
        ctx: &Context,
        variant: GemmVariant,
        (ta, tb): (bool, bool),
    ) -> Result<(), String> {
        let (m, n, k) = self.shape;
        let u = 2f64.powi(-24);
        let gamma = (k + 2) as f64 * u / (1.0 - (k + 2) as f64 * u);
        let relative = 2.0
            * (gamma
                + match variant.precision() {
                    Precision::Fp32 => 0.0,
                    Precision::Tf32 => 2f64.powi(-10),
                    Precision::Tf32x3 => 3.0 * 2f64.powi(-22),
                });
        let rows = [0, 1, 63, 64, 127, 128, m / 2, m.saturating_sub(2), m - 1];
        let columns = [0, 1, 63, 64, 127, 128, n / 2, n.saturating_sub(2), n - 1];
        for &i in rows.iter().filter(|&&i| i < m) {
            for &j in columns.iter().filter(|&&j| j < n) {
                let (mut want, mut magnitude) = (0.0f64, 0.0f64);
                for p in 0..k {
                    let a = if ta {
                        self.a_host[p * m + i]
                    } else {
                        self.a_host[i * k + p]
                    };
                    let b = if tb {
                        self.b_host[j * k + p]
                    } else {
                        self.b_host[p * n + j]
                    };
                    let term = a as f64 * b as f64;
                    want += term;
                    magnitude += term.abs();
                }
                let got = element(ctx, &self.c, i * n + j)?;
                let error = (got as f64 - want).abs();
                if error.is_nan() || error > relative * magnitude {
                    return Err(format!("C({i}, {j}) is {got}, want {want}"));
                }
            }
        }
        Ok(())
    }
}

/// One element of a device buffer.
fn element(ctx: &Context, buffer: &Buffer<f32>, i: usize) -> Result<f32, String> {
    let mut value = [0.0f32];
    buffer
        .slice(i..i + 1)
        .and_then(|one| ctx.copy_to_host(&one, &mut value))
        .map_err(|e| e.to_string())?;
    Ok(value[0])
}

/// The steps for which `applies` holds, on one product, against `peers`.
/// One case: its steps, then its peers, timed right after them. The
/// tensor-core products run at the GPU's power cap, where the clock
/// follows the temperature: peers all timed first, on a GPU still cool,
/// met steps 13 and 14 seconds of heavy launches later (an H100's SM clock
/// fell from 1 980 to 1 400 to 1 600 MHz under the cap), and 4096³ TF32
/// read 0.84 to 0.99 × cuBLAS TF32 over five runs of one build where the
/// scaling curve (peers timed beside our series) read 1.01 to 1.08.
fn ladder(
    bench: &mut Bench,
    shape: Shape,
    applies: impl Fn(GemmVariant) -> bool,
) -> Result<(), String> {
    ladder_and_plans(bench, shape, applies, false)
}

/// [`ladder`], and where `plans` holds, the [`plan_rows`] after the steps.
fn ladder_and_plans(
    bench: &mut Bench,
    shape: Shape,
    applies: impl Fn(GemmVariant) -> bool,
    plans: bool,
) -> Result<(), String> {
    let (m, n, k) = shape;
    let flops = Gemm::new(m, n, k).flops();
    let mut operands = Operands::new(bench, shape)?;
    let case = label(shape);
    let mut rows = ladder_rows(bench, &case, "", applies, |bench, variant| {
        let reps = if slow(variant) && flops >= SLOW_FLOPS {
            bench.reps.min(SLOW_REPS)
        } else {
            bench.reps
        };
        operands.time(bench, variant, Packing::Auto, reps)
    })?;
    for row in &mut rows {
        if let Some(&v) = GemmVariant::ALL.iter().find(|v| v.step() == row.step) {
            row.versus = group(v);
        }
    }
    if plans {
        rows.extend(plan_rows(bench, &mut operands)?);
    }
    // cuBLAS FP32 for every step; cuBLAS TF32 (at its best) for the TF32
    // steps and CUTLASS's 3xTF32 for the 3xTF32 ones, each precision
    // against its peers.
    let mut measured = bench
        .peers
        .measure(&[
            format!("sgemm:{m}:{n}:{k}"),
            format!("sgemm_tf32:{m}:{n}:{k}"),
            format!("sgemm_3xtf32_cutlass:{m}:{n}:{k}"),
        ])
        .into_iter();
    let peers = ["", "tf32", "tf32x3"]
        .into_iter()
        .filter_map(|group| measured.next().map(|p| (group, p)))
        .collect();
    let slow_note = if flops >= SLOW_FLOPS {
        format!("; naive and coalesced over {SLOW_REPS} launches")
    } else {
        String::new()
    };
    bench.record_work(
        &format!("gemm {m} × {n} × {k}, f32 (TFLOP/s: 2·m·n·k per product{slow_note})"),
        Case {
            family: "gemm",
            case,
            bytes: traffic(shape),
            rows,
            peers,
        },
        Work::Flops(flops),
    );
    Ok(())
}

/// The fastest TF32 and 3xTF32 steps at 4096³ with each operand stored
/// transposed (`A` as `k × m`, `B` as `n × k`, both): one table each,
/// beside the untransposed ladder above.
fn transposes(bench: &mut Bench) -> Result<(), String> {
    let shape = (4096, 4096, 4096);
    let target = bench.ctx.info().ptx_target;
    let fastest = [Precision::Tf32, Precision::Tf32x3].map(|p| GemmVariant::fastest_for(p, target));
    let mut operands = Operands::new(bench, shape)?;
    let flops = Gemm::new(shape.0, shape.1, shape.2).flops();
    for (pair, name) in [
        ((true, false), "Aᵀ"),
        ((false, true), "Bᵀ"),
        ((true, true), "Aᵀ Bᵀ"),
    ] {
        let case = format!("{} {name}", label(shape));
        let mut rows = ladder_rows(
            bench,
            &case,
            "",
            |v| fastest.contains(&v) && runs(target, v),
            |bench, variant| {
                operands.time_transposed(bench, variant, Packing::Auto, bench.reps, pair)
            },
        )?;
        for row in &mut rows {
            if let Some(&v) = GemmVariant::ALL.iter().find(|v| v.step() == row.step) {
                row.versus = group(v);
            }
        }
        bench.record_work(
            &format!("gemm {case}, f32 (TFLOP/s)"),
            Case {
                family: "gemm",
                case,
                bytes: traffic(shape),
                rows,
                peers: Vec::new(),
            },
            Work::Flops(flops),
        );
    }
    Ok(())
}

/// Each precision as `Gemm::precision` runs it (the plan's choice) and the
/// FP32 step reading `A` where it lies, over square products from 128 to
/// 8192 (256, 1024, 4096 with `--quick`), against cuBLAS FP32, cuBLAS
/// TF32 and CUTLASS's 3xTF32.
fn scaling(bench: &mut Bench) -> Result<(), String> {
    let sides: Vec<usize> = if bench.quick {
        vec![256, 1024, 4096]
    } else {
        (7..=13).map(|l| 1usize << l).collect()
    };
    let peer_cases: Vec<String> = sides
        .iter()
        .flat_map(|s| {
            [
                format!("sgemm:{s}:{s}:{s}"),
                format!("sgemm_tf32:{s}:{s}:{s}"),
                format!("sgemm_3xtf32_cutlass:{s}:{s}:{s}"),
            ]
        })
        .collect();
    let mut peer_results = bench.peers.measure(&peer_cases).into_iter();
    // Each precision as `Gemm::precision` runs it (its plan), and the FP32
    // step reading `A` where it lies; each checked as the precision's
    // fastest step.
    let target = bench.ctx.info().ptx_target;
    let fp32 = GemmVariant::for_precision(Precision::Fp32);
    let mut ours = vec![
        (
            fp32,
            Packing::Auto,
            "warpspeed fp32 (plan)".to_string(),
            true,
        ),
        (
            fp32,
            Packing::Never,
            format!("warpspeed fp32 ({}, A unpacked)", fp32.name()),
            false,
        ),
    ];
    for (precision, series) in [
        (Precision::Tf32, "warpspeed tf32 (plan)"),
        (Precision::Tf32x3, "warpspeed tf32x3 (plan)"),
    ] {
        let fastest = GemmVariant::fastest_for(precision, target);
        if runs(target, fastest) {
            ours.push((fastest, Packing::Auto, series.to_string(), true));
        }
    }
    // `--steps` keeps the series of the steps it names.
    ours.retain(|(variant, ..)| bench.runs(variant.name()));
    let mut points = Vec::new();
    let mut unavailable: Vec<(String, String)> = Vec::new();
    for &side in &sides {
        let shape = (side, side, side);
        let mut operands = Operands::new(bench, shape)?;
        for (variant, packing, series, by_precision) in &ours {
            let timing = if *by_precision {
                let gemm = Gemm::new(side, side, side)
                    .precision(variant.precision())
                    .packing(*packing)
                    .tma_tiles(bench.tma_tiles);
                operands.time_gemm(bench, &gemm, *variant, bench.reps)?
            } else {
                operands.time(bench, *variant, *packing, bench.reps)?
            };
            bench.progress(&format!("gemm scaling {series} {side}³"), timing);
            let ms = timing.ms;
            points.push(Point {
                series: series.clone(),
                n: side,
                ms,
                bytes: traffic(shape),
            });
        }
        drop(operands);
        for peer in peer_results.by_ref().take(3) {
            match peer.outcome {
                Ok(ms) => points.push(Point {
                    series: peer.name,
                    n: side,
                    ms,
                    bytes: traffic(shape),
                }),
                Err(why) => {
                    if !unavailable.iter().any(|(s, _)| *s == peer.name) {
                        unavailable.push((peer.name, why));
                    }
                }
            }
        }
    }
    bench.record_scaling_with(
        Scaling {
            family: "gemm",
            title: "sgemm f32".into(),
            axis: "side (n × n × n)",
            points,
            unavailable,
        },
        |p| Work::Flops(Gemm::new(p.n, p.n, p.n).flops()),
    );
    Ok(())
}

/// Strided batched products ([`BATCHES`], dense operands one matrix after
/// the other) by the steps that run batches, against cuBLAS's
/// `SgemmStridedBatched` (FP32) and its TF32 at its best (the faster of
/// `SgemmStridedBatched` in TF32 math and `GemmStridedBatchedEx`).
fn batched(bench: &mut Bench) -> Result<(), String> {
    let target = bench.ctx.info().ptx_target;
    let steps = |v: GemmVariant| {
        matches!(
            v,
            GemmVariant::Pipelined
                | GemmVariant::Tf32
                | GemmVariant::Tf32x3
                | GemmVariant::Tf32Wgmma
                | GemmVariant::Tf32x3Wgmma
                | GemmVariant::Tf32Tma
        ) && runs(target, v)
    };
    for (count, side) in BATCHES {
        let shape = (side, side, side);
        let case = format!("f32 {count} × {side}³ batched");
        let matrix = side * side;
        let a_host: Vec<f32> = (0..(count * matrix) as u64).map(uniform).collect();
        let b_host: Vec<f32> = (0..(count * matrix) as u64)
            .map(|i| uniform(OFFSET_B + i))
            .collect();
        let a = bench.ctx.upload(&a_host).map_err(|e| e.to_string())?;
        let b = bench.ctx.upload(&b_host).map_err(|e| e.to_string())?;
        let c = bench
            .ctx
            .zeros::<f32>(count * matrix)
            .map_err(|e| e.to_string())?;
        let mut batch = Batch {
            count,
            side,
            a_host,
            b_host,
            a,
            b,
            c,
        };
        let mut rows = ladder_rows(bench, &case, "", steps, |bench, variant| {
            let gemm = Gemm::new(side, side, side)
                .variant(variant)
                .tma_tiles(bench.tma_tiles);
            batch.time(bench, &gemm, variant, &case)
        })?;
        // What each precision runs when asked for by precision.
        let plans = precision_rows(bench, shape, &case, |bench, gemm, fastest| {
            batch.time(bench, gemm, fastest, &case)
        })?;
        rows.extend(plans);
        for row in &mut rows {
            if let Some(&v) = GemmVariant::ALL.iter().find(|v| v.step() == row.step) {
                row.versus = group(v);
            }
        }
        drop(batch);
        let mut measured = bench
            .peers
            .measure(&[
                format!("sgemm_batched:{count}:{side}:{side}:{side}"),
                format!("sgemm_batched_tf32:{count}:{side}:{side}:{side}"),
            ])
            .into_iter();
        let peers = ["", "tf32"]
            .into_iter()
            .filter_map(|group| measured.next().map(|p| (group, p)))
            .collect();
        bench.record_work(
            &format!("gemm {case} (TFLOP/s: 2·n³ per product)"),
            Case {
                family: "gemm",
                case,
                bytes: count as f64 * traffic(shape),
                rows,
                peers,
            },
            Work::Flops(count as f64 * Gemm::new(side, side, side).flops()),
        );
    }
    Ok(())
}

/// A strided batch's operands on the device and the host.
struct Batch {
    count: usize,
    side: usize,
    a_host: Vec<f32>,
    b_host: Vec<f32>,
    a: Buffer<f32>,
    b: Buffer<f32>,
    c: Buffer<f32>,
}

impl Batch {
    /// Times `gemm` over the batch and checks its first and last product
    /// within the bound of `variant`'s precision, as a single product's
    /// outputs are checked.
    fn time(
        &mut self,
        bench: &Bench,
        gemm: &Gemm,
        variant: GemmVariant,
        case: &str,
    ) -> Result<Timing, String> {
        let (count, side) = (self.count, self.side);
        let matrix = side * side;
        bench
            .ctx
            .fill(&mut self.c, f32::NAN)
            .map_err(|e| e.to_string())?;
        let (a, b, c) = (&self.a, &self.b, &mut self.c);
        let ms = bench.time_reps(bench.reps, || {
            let a = MatrixBatch::new(a, side, side, count).map_err(|e| e.to_string())?;
            let b = MatrixBatch::new(b, side, side, count).map_err(|e| e.to_string())?;
            let mut c =
                MatrixBatchMut::new(&mut *c, side, side, count).map_err(|e| e.to_string())?;
            enqueued(bench.ctx.gemm_batched_into(gemm, 1.0, &a, &b, 0.0, &mut c))
        })?;
        for at in [0, count - 1] {
            let one = |host: &[f32]| host[at * matrix..(at + 1) * matrix].to_vec();
            let product = Operands {
                shape: (side, side, side),
                a_host: one(&self.a_host),
                b_host: one(&self.b_host),
                a: Vec::new(),
                b: Vec::new(),
                c: bench
                    .ctx
                    .upload(&{
                        let mut host = vec![0.0f32; matrix];
                        self.c
                            .slice(at * matrix..(at + 1) * matrix)
                            .and_then(|v| bench.ctx.copy_to_host(&v, &mut host))
                            .map_err(|e| e.to_string())?;
                        host
                    })
                    .map_err(|e| e.to_string())?,
            };
            product
                .check(bench.ctx, variant, (false, false))
                .map_err(|e| format!("gemm {case} {}, product {at}: {e}", variant.name()))?;
        }
        Ok(ms)
    }
}
