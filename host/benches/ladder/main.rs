//! The ladder benchmarks: every variant of every family on the GPU, timed
//! with CUDA events (warm-up, then the median of repeated launches), in
//! GB/s and as a fraction of the device-to-device copy bandwidth measured in
//! the same run.
//!
//! `cargo xtask bench [FAMILY...] [--reps N] [--json DIR]`; families:
//! `reduce`, `transpose`, `image-sums` (default: all).

mod harness;
mod image_sums;
mod reduce;
mod transpose;

use harness::{Bench, Family};
use std::process::ExitCode;
use warpspeed::{Context, Error};

/// Every family, in order: registering a family is one row here.
const FAMILIES: &[Family] = &[reduce::FAMILY, transpose::FAMILY, image_sums::FAMILY];

fn names() -> Vec<&'static str> {
    FAMILIES.iter().map(|f| f.name).collect()
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut families = Vec::new();
    let mut json_dir = None;
    let mut reps = 20;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--json" => json_dir = args.next(),
            "--reps" => reps = args.next().and_then(|r| r.parse().ok()).unwrap_or(reps),
            // Flags cargo bench passes to every bench target.
            "--bench" | "--nocapture" => {}
            family if names().contains(&family) => families.push(family.to_string()),
            other => {
                eprintln!(
                    "unknown argument `{other}`; families: {}",
                    names().join(", ")
                );
                return ExitCode::FAILURE;
            }
        }
    }
    if families.is_empty() {
        families = names().iter().map(|f| f.to_string()).collect();
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
    match run(&ctx, &families, reps, json_dir.as_deref()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(
    ctx: &Context,
    families: &[String],
    reps: usize,
    json_dir: Option<&str>,
) -> Result<(), String> {
    let mut bench = Bench::new(ctx, reps)?;
    for family in FAMILIES
        .iter()
        .filter(|f| families.iter().any(|n| n == f.name))
    {
        (family.run)(&mut bench)?;
    }
    if let Some(dir) = json_dir {
        let path = bench.write_json(dir)?;
        println!("\nJSON: {path}");
    }
    Ok(())
}
