//! The ladder benchmarks: every variant of every family on the GPU, timed
//! with CUDA events (warm-up, then the median of repeated launches), in
//! GB/s, as a fraction of the device-to-device copy bandwidth measured in the
//! same run (compute-bound families: TFLOP/s, as a fraction of the FP32
//! peak), and against NVIDIA's libraries measured in the same run with the
//! same method ([`peers`]).
//!
//! ```text
//! ladder [--families reduce,transpose,image-sums,histogram,conv1d,gemm,rng,scan] [--quick]
//!        [--steps a,b] [--reps N] [--warmup-ms N] [--out DIR] [--no-peers] [--no-hold]
//!        [--tma-tiles auto|wide|medium|narrow]
//! ```
//!
//! Prints each case's table as it is measured and writes `ladder.json`
//! (fields documented in [`json`]) into `DIR` (default `target/bench`),
//! again after each case, so that a run cut short leaves the cases it
//! finished.
//! `cargo xtask bench` runs it with the same arguments and renders the
//! report; `cargo xtask report DIR/ladder.json` renders `report.md` and the
//! SVG charts of a run again, and `cargo xtask readme` the README's and the
//! guides' tables from the committed runs (the `warpspeed-report` crate,
//! which reads the JSON and nothing else).
//!
//! The modules, bottom up (each imports only modules listed before it):
//!
//! * [`peers`]: NVIDIA's libraries (and PyTorch) in the same run: the peer programs;
//! * [`hold`]: the kernel that holds the stream while timed launches queue;
//! * [`harness`]: timing, the ceilings, `Bench` and the results it collects;
//! * [`json`]: writes `ladder.json` from a `Bench` (its fields documented there);
//! * [`record`]: `Bench`'s recording methods, which print each table during
//!   the run as the report renders it;
//! * the families ([`reduce`], [`transpose`], [`image_sums`], [`histogram`],
//!   [`conv1d`], [`gemm`], [`rng`]): each runs its ladders on a `Bench`.

mod conv1d;
mod gemm;
mod harness;
mod histogram;
mod hold;
mod image_sums;
mod json;
mod peers;
mod record;
mod reduce;
mod rng;
mod scan;
mod sort;
mod transpose;

use harness::{Bench, Family, KernelUse};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use warpspeed::gemm::TmaTiles;
use warpspeed::{Context, Error};

/// Every family, in order: registering a family is one row here.
const FAMILIES: &[Family] = &[
    reduce::FAMILY,
    transpose::FAMILY,
    image_sums::FAMILY,
    histogram::FAMILY,
    conv1d::FAMILY,
    gemm::FAMILY,
    gemm::BATCHED,
    gemm::SKINNY,
    gemm::SCALING,
    rng::FAMILY,
    scan::FAMILY,
    sort::FAMILY,
];

fn names() -> Vec<&'static str> {
    FAMILIES.iter().map(|f| f.name).collect()
}

struct Options {
    families: Vec<String>,
    quick: bool,
    reps: usize,
    /// The least warm-up of each measurement ([`harness::WARMUP_TIME`]).
    warmup: Duration,
    out: PathBuf,
    peers: bool,
    hold: bool,
    masks: Vec<usize>,
    steps: Vec<String>,
    tma_tiles: TmaTiles,
}

fn options() -> Result<Options, String> {
    let mut o = Options {
        families: Vec::new(),
        quick: false,
        reps: 20,
        warmup: harness::WARMUP_TIME,
        out: PathBuf::from("target/bench"),
        peers: true,
        hold: true,
        masks: Vec::new(),
        steps: Vec::new(),
        tma_tiles: TmaTiles::Auto,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--families" => o.families.extend(value()?.split(',').map(str::to_string)),
            "--quick" => o.quick = true,
            "--reps" => o.reps = value()?.parse().map_err(|e| format!("--reps: {e}"))?,
            "--warmup-ms" => {
                let ms = value()?.parse().map_err(|e| format!("--warmup-ms: {e}"))?;
                o.warmup = Duration::from_millis(ms);
            }
            "--out" | "--json" => o.out = PathBuf::from(value()?),
            "--no-peers" => o.peers = false,
            // Under a profiler, which serialises launches: a held stream
            // would wait for launches the profiler has not let through.
            "--no-hold" => o.hold = false,
            "--masks" => {
                for taps in value()?.split(',') {
                    o.masks
                        .push(taps.parse().map_err(|e| format!("--masks: {e}"))?);
                }
            }
            "--steps" => o.steps.extend(value()?.split(',').map(str::to_string)),
            "--tma-tiles" => {
                o.tma_tiles = match value()?.as_str() {
                    "auto" => TmaTiles::Auto,
                    "wide" => TmaTiles::Wide,
                    "narrow" => TmaTiles::Narrow,
                    "medium" => TmaTiles::Medium,
                    "short" => TmaTiles::Short,
                    other => {
                        return Err(format!(
                            "--tma-tiles: `{other}` is not auto, wide, medium, narrow or short"
                        ));
                    }
                }
            }
            // Flags cargo bench passes to every bench target.
            "--bench" | "--nocapture" => {}
            family if names().contains(&family) => o.families.push(family.to_string()),
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    if let Some(unknown) = o.families.iter().find(|f| !names().contains(&f.as_str())) {
        return Err(format!(
            "unknown family `{unknown}`; families: {}",
            names().join(", ")
        ));
    }
    if o.families.is_empty() {
        o.families = names().iter().map(|f| f.to_string()).collect();
    }
    Ok(o)
}

fn main() -> ExitCode {
    let o = match options() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let ctx = match Context::new(0) {
        Ok(ctx) => ctx,
        Err(Error::NoDevice { reason }) => {
            eprintln!("no CUDA device found ({reason}); the benchmarks need a GPU");
            return ExitCode::from(2);
        }
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    match run(&ctx, &o) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(ctx: &Context, o: &Options) -> Result<(), String> {
    let kernels = kernels(ctx, &o.families);
    let peers = if o.peers {
        // Built outside the output folder: the report is what travels.
        let dir = std::env::temp_dir().join("warpspeed-peers");
        peers::Peers::prepare(&dir, o.reps, o.warmup, ctx.info().compute_capability)
    } else {
        peers::Peers::none("--no-peers")
    };
    let mut bench = Bench::new(ctx, o.reps, o.quick, peers, o.hold, o.warmup)?;
    bench.kernels = kernels;
    bench.masks = o.masks.clone();
    bench.steps = o.steps.clone();
    bench.tma_tiles = o.tma_tiles;
    bench.out = Some(o.out.clone());
    for family in FAMILIES
        .iter()
        .filter(|f| o.families.iter().any(|n| n == f.name))
    {
        (family.run)(&mut bench)?;
    }
    if let Some(unknown) = o.steps.iter().find(|s| !bench.steps_found.contains(s)) {
        return Err(format!(
            "--steps: no step named `{unknown}` in the ladders run ({})",
            o.families.join(", ")
        ));
    }
    let path = bench.save()?.unwrap_or_default();
    println!(
        "\nJSON: {} (`cargo xtask report {}` renders the report and charts)",
        path.display(),
        path.display()
    );
    Ok(())
}

/// The kernels of the families to run (a family's `FAMILIES` entry in
/// `warpspeed_gpu` is its name with `_` for `-`: `image-sums` is
/// `image_sums`; the cases run alone, `gemm_batched`, are `gemm`'s), with what the driver says each uses in the loaded module.
/// None, with a warning, if the driver cannot say: the report then has no
/// kernel tables.
fn kernels(ctx: &Context, families: &[String]) -> Vec<KernelUse> {
    let resources = match ctx.kernel_resources() {
        Ok(resources) => resources,
        Err(e) => {
            eprintln!("warning: kernel resources: {e}; the report has no kernel tables");
            return Vec::new();
        }
    };
    // `kernel_resources` follows `gpu::FAMILIES`, flattened.
    warpspeed_gpu::FAMILIES
        .iter()
        .flat_map(|&(family, table)| table.iter().map(move |k| (family, k)))
        .zip(resources)
        .filter(|((family, _), _)| {
            families.iter().any(|f| {
                let f = f.replace('-', "_");
                f == *family
                    || f.strip_prefix(*family)
                        .is_some_and(|rest| rest.starts_with('_'))
            })
        })
        .map(|((family, k), resources)| KernelUse {
            family,
            base: k.base,
            ty: k.ty,
            resources,
        })
        .collect()
}
