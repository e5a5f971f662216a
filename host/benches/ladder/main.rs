//! The ladder benchmarks: every variant of every family on the GPU, timed
//! with CUDA events (warm-up, then the median of repeated launches), in
//! GB/s, as a fraction of the device-to-device copy bandwidth measured in the
//! same run (compute-bound families: TFLOP/s, as a fraction of the FP32
//! peak), and against NVIDIA's libraries measured in the same run with the
//! same method ([`peers`]).
//!
//! ```text
//! ladder [--families reduce,transpose,image-sums,histogram,conv1d,gemm,rng] [--quick]
//!        [--steps a,b] [--reps N] [--warmup-ms N] [--out DIR] [--no-peers] [--no-hold]
//! ladder --report DIR/ladder.json      (no GPU: render the report again)
//! ladder --readme README.md [--check]  (no GPU: the README's tables, see [`readme`])
//! ladder --self-test                  (no GPU: the JSON records round-trip)
//! ```
//!
//! Writes `ladder.json` (fields documented in [`json`]), `report.md` and
//! one SVG chart per case and per scaling curve into `DIR` (default
//! `target/bench`). `cargo xtask bench` runs it with the same arguments.
//!
//! The modules, bottom up (each imports only modules listed before it):
//!
//! * [`peers`]: NVIDIA's libraries (and PyTorch) in the same run: the peer programs;
//! * [`hold`]: the kernel that holds the stream while timed launches queue;
//! * [`records`]: `ladder.json` read back (`Record`, `Unit`, `parse`, `header`);
//! * [`svg`]: the charts, drawn from records;
//! * [`targets`]: the project's speed targets, as data, judged on records;
//! * [`harness`]: timing, the ceilings, `Bench` and the results it collects;
//! * [`json`]: writes `ladder.json` from a `Bench` (its fields documented there);
//! * [`report`]: the Markdown tables, report and charts rendered from records,
//!   and `Bench`'s recording methods, which print each table during the run;
//! * [`readme`]: the README's tables, from records and the report's tables;
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
mod readme;
mod records;
mod reduce;
mod report;
mod rng;
mod svg;
mod targets;
mod transpose;

use harness::{Bench, Family, KernelUse};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;
use warpspeed::{Context, Error};

/// Every family, in order: registering a family is one row here.
const FAMILIES: &[Family] = &[
    reduce::FAMILY,
    transpose::FAMILY,
    image_sums::FAMILY,
    histogram::FAMILY,
    conv1d::FAMILY,
    gemm::FAMILY,
    rng::FAMILY,
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
    report: Option<PathBuf>,
    readme: Vec<PathBuf>,
    check: bool,
    self_test: bool,
    masks: Vec<usize>,
    steps: Vec<String>,
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
        report: None,
        readme: Vec::new(),
        check: false,
        self_test: false,
        masks: Vec::new(),
        steps: Vec::new(),
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
            "--report" => o.report = Some(PathBuf::from(value()?)),
            "--readme" => o.readme.push(PathBuf::from(value()?)),
            "--check" => o.check = true,
            "--self-test" => o.self_test = true,
            "--masks" => {
                for taps in value()?.split(',') {
                    o.masks
                        .push(taps.parse().map_err(|e| format!("--masks: {e}"))?);
                }
            }
            "--steps" => o.steps.extend(value()?.split(',').map(str::to_string)),
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
    if let Some(json) = &o.report {
        let dir = json.parent().unwrap_or(Path::new("."));
        return match std::fs::read_to_string(json)
            .map_err(|e| format!("{}: {e}", json.display()))
            .and_then(|text| write_report(&text, dir))
        {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        };
    }
    if o.self_test {
        return match peers::self_test() {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        };
    }
    if !o.readme.is_empty() {
        return match o
            .readme
            .iter()
            .try_for_each(|path| update_readme(path, o.check))
        {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        };
    }
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
    std::fs::create_dir_all(&o.out).map_err(|e| format!("{}: {e}", o.out.display()))?;
    let json = json::json(&bench);
    let path = o.out.join("ladder.json");
    std::fs::write(&path, &json).map_err(|e| format!("{}: {e}", path.display()))?;
    write_report(&json, &o.out)?;
    println!("\nJSON, report and charts: {}", o.out.display());
    Ok(())
}

/// The kernels of the families to run (a family's `FAMILIES` entry in
/// `warpspeed_gpu` is its name with `_` for `-`: `image-sums` is
/// `image_sums`), with what the driver says each uses in the loaded module.
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
        .filter(|((family, _), _)| families.iter().any(|f| f.replace('-', "_") == *family))
        .map(|((family, k), resources)| KernelUse {
            family,
            base: k.base,
            ty: k.ty,
            resources,
        })
        .collect()
}

/// Writes `report.md` and the charts rendered from a run's JSON.
fn write_report(json: &str, dir: &Path) -> Result<(), String> {
    for (name, contents) in report::render(json) {
        let path = dir.join(name);
        std::fs::write(&path, contents).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// Renders the README's generated tables from the committed reports
/// (`docs/bench/` beside it); with `check`, only says whether they are
/// current.
fn update_readme(path: &Path, check: bool) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    // The reports live in the repository's docs/bench, above the file
    // (README.md at the root, a guide in docs/).
    let docs = path
        .ancestors()
        .skip(1)
        .map(|dir| dir.join("docs/bench"))
        .find(|dir| dir.is_dir())
        .ok_or_else(|| format!("{}: no docs/bench folder above it", path.display()))?;
    let new = readme::splice(&text, &readme::reports(&docs)?)?;
    if new == text {
        println!("{}: the generated tables are current", path.display());
        return Ok(());
    }
    if check {
        return Err(format!(
            "{}: a generated table differs from what the reports under {} give; \
             run `cargo xtask readme`",
            path.display(),
            docs.display()
        ));
    }
    std::fs::write(path, new).map_err(|e| format!("{}: {e}", path.display()))?;
    println!("{}: generated tables rewritten", path.display());
    Ok(())
}
