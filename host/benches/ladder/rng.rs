//! The random fills (cuRAND's host API, Philox4_32_10) of 2^28 values (2^24
//! with `--quick`), one case per distribution, each against cuRAND's
//! Philox4_32_10 generator filling the same number of values with the same
//! seed; XORWOW (cuRAND's default generator) and MRG32k3a are reference
//! lines beside it (their own rows and lines, compared with no step). GB/s
//! count the values written, 4 bytes each.
//!
//! Each case has one row, its fill (step 1: there is no ladder of steps).
//! Every timed fill starts a fresh generator at position 0 of the stream
//! (a generator refuses to pass value 2^50, and a counter-based generator
//! costs the same at any position); cuRAND's generator moves on between
//! calls, as it does in an application.

use crate::harness::{Bench, Case, Family, Row, Timing, enqueued};
use std::fmt::Debug;
use warpspeed::rng::{Generator, uniform_of};
use warpspeed::{Buffer, Context, Pod};

pub const FAMILY: Family = Family { name: "rng", run };

/// The seed of every generator (`kRandSeed` in `peers.cu`).
const SEED: u64 = 1234;

/// The Poisson fills' mean.
const LAMBDA: f64 = 3.5;

/// cuRAND's generators in the peers' cases: Philox4_32_10, the one
/// warpspeed reproduces, compared with every fill; the others for
/// reference.
const GENERATORS: [(&str, &str); 3] = [
    ("philox", ""),
    ("xorwow", "reference"),
    ("mrg32k3a", "reference"),
];

/// One fill: one case, one row.
#[derive(Clone, Copy, Debug)]
enum Fill {
    /// `fill_u32_into`: the raw 32-bit values (`curandGenerate`).
    U32,
    /// `fill_uniform_into`: `f32` in (0, 1], one value each
    /// (`curandGenerateUniform`).
    Uniform,
    /// `fill_normal_into`, mean 0, deviation 1: Box–Muller on pairs of
    /// values (`curandGenerateNormal`).
    Normal,
    /// `fill_log_normal_into`, mean 0, deviation 1: `exp` of the normals
    /// (`curandGenerateLogNormal`).
    LogNormal,
    /// `fill_poisson_into`, λ = [`LAMBDA`], one count per value through a
    /// table made once before timing (`curandGeneratePoisson`, which builds
    /// tables of its own on its first call, a warm-up, and gives other
    /// counts).
    Poisson,
}

impl Fill {
    const ALL: [Fill; 5] = [
        Fill::U32,
        Fill::Uniform,
        Fill::Normal,
        Fill::LogNormal,
        Fill::Poisson,
    ];

    /// The row's name: the function timed.
    fn name(self) -> &'static str {
        match self {
            Fill::U32 => "fill_u32",
            Fill::Uniform => "fill_uniform",
            Fill::Normal => "fill_normal",
            Fill::LogNormal => "fill_log_normal",
            Fill::Poisson => "fill_poisson",
        }
    }

    /// The distribution in the peers' cases (`curand:<gen>:<dist>:<n>`).
    fn peer(self) -> &'static str {
        match self {
            Fill::U32 => "u32",
            Fill::Uniform => "uniform",
            Fill::Normal => "normal",
            Fill::LogNormal => "log_normal",
            Fill::Poisson => "poisson",
        }
    }

    /// The case's values, e.g. `normal f32`.
    fn values(self) -> String {
        match self {
            Fill::U32 => "u32".into(),
            Fill::Uniform => "uniform f32".into(),
            Fill::Normal => "normal f32".into(),
            Fill::LogNormal => "log-normal f32".into(),
            Fill::Poisson => format!("poisson({LAMBDA}) u32"),
        }
    }
}

fn run(bench: &mut Bench) -> Result<(), String> {
    let log_n = if bench.quick { 24 } else { 28 };
    let n = 1usize << log_n;
    let peer_cases: Vec<String> = Fill::ALL
        .iter()
        .flat_map(|f| {
            GENERATORS
                .iter()
                .map(move |(generator, _)| format!("curand:{generator}:{}:{n}", f.peer()))
        })
        .collect();
    let mut peers = bench.peers.measure(&peer_cases).into_iter();
    for fill in Fill::ALL {
        let peers = GENERATORS
            .iter()
            .zip(peers.by_ref())
            .map(|(&(_, versus), p)| (versus, p))
            .collect();
        if !bench.runs(fill.name()) {
            continue;
        }
        let case = format!("{} 2^{log_n}", fill.values());
        let timing = time(bench, fill, n).map_err(|e| format!("rng {case}: {e}"))?;
        bench.progress(&format!("rng {case} {}", fill.name()), timing);
        bench.record(
            &format!(
                "rng {}, 2^{log_n} values (GB/s: values written; cuRAND XORWOW and MRG32k3a for reference)",
                fill.values()
            ),
            Case {
                family: "rng",
                case,
                bytes: 4.0 * n as f64,
                rows: vec![Row {
                    step: 1,
                    variant: fill.name(),
                    ms: timing.ms,
                    batch_ms: timing.batch_ms,
                    versus: "",
                }],
                peers,
            },
        );
    }
    Ok(())
}

/// The timing of `fill` of `n` values, its last fill checked:
/// integers, uniforms and counts exactly, the Box–Muller values within
/// 2^-12 of max(1, |want|), far above the CPU's documented distance from
/// the GPU's (the check is for wrong results, the tests bound the error).
fn time(bench: &Bench, fill: Fill, n: usize) -> Result<Timing, String> {
    let ctx = bench.ctx;
    let cpu = Generator::new(SEED);
    let close = |got: f32, want: f32| (got - want).abs() <= want.abs().max(1.0) / 4096.0;
    match fill {
        Fill::U32 => {
            let mut out = ctx.zeros::<u32>(n).map_err(|e| e.to_string())?;
            let ms =
                bench.time(|| enqueued(ctx.fill_u32_into(&mut Generator::new(SEED), &mut out)))?;
            spot_check(ctx, &out, |i| cpu.value(i), |a, b| a == b)?;
            Ok(ms)
        }
        Fill::Uniform => {
            let mut out = ctx.zeros::<f32>(n).map_err(|e| e.to_string())?;
            let ms = bench
                .time(|| enqueued(ctx.fill_uniform_into(&mut Generator::new(SEED), &mut out)))?;
            spot_check(ctx, &out, |i| uniform_of(cpu.value(i)), |a, b| a == b)?;
            Ok(ms)
        }
        Fill::Normal => {
            let mut out = ctx.zeros::<f32>(n).map_err(|e| e.to_string())?;
            let ms = bench.time(|| {
                enqueued(ctx.fill_normal_into(&mut Generator::new(SEED), 0.0, 1.0, &mut out))
            })?;
            spot_check(ctx, &out, |i| cpu.normal_value(i), close)?;
            Ok(ms)
        }
        Fill::LogNormal => {
            let mut out = ctx.zeros::<f32>(n).map_err(|e| e.to_string())?;
            let ms = bench.time(|| {
                enqueued(ctx.fill_log_normal_into(&mut Generator::new(SEED), 0.0, 1.0, &mut out))
            })?;
            spot_check(ctx, &out, |i| cpu.log_normal_value(i, 0.0, 1.0), close)?;
            Ok(ms)
        }
        Fill::Poisson => {
            let table = ctx.poisson_table(LAMBDA).map_err(|e| e.to_string())?;
            let mut out = ctx.zeros::<u32>(n).map_err(|e| e.to_string())?;
            let ms = bench.time(|| {
                enqueued(ctx.fill_poisson_into(&mut Generator::new(SEED), &table, &mut out))
            })?;
            spot_check(ctx, &out, |i| cpu.poisson_value(i, &table), |a, b| a == b)?;
            Ok(ms)
        }
    }
}

/// Checks the last fill (from stream position 0) at its ends, its middle
/// and a few scattered positions against the CPU's value there.
fn spot_check<T: Pod + Debug>(
    ctx: &Context,
    out: &Buffer<T>,
    want: impl Fn(u64) -> T,
    close: impl Fn(T, T) -> bool,
) -> Result<(), String> {
    let n = out.len();
    let mut spots = vec![0, 1, 2, 3, 4, 5, 6, 7, n / 2, n / 2 + 1, n - 2, n - 1];
    spots.extend((1..16).map(|k| (k * 1_000_003 * 37) % n));
    for i in spots {
        let mut got = [T::default()];
        out.slice(i..i + 1)
            .and_then(|one| ctx.copy_to_host(&one, &mut got))
            .map_err(|e| e.to_string())?;
        let want = want(i as u64);
        if !close(got[0], want) {
            return Err(format!("value {i} is {:?}, want {want:?}", got[0]));
        }
    }
    Ok(())
}
