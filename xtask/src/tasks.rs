//! The tasks that hand over to cargo: `lint-gpu` (clippy on the device
//! crate), `test`, and `bench` (which `report` and `readme` go through).

use std::env;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;

use crate::ptx::PTX_TARGETS;
use crate::{cargo, root, run};

/// Clippy on `warpspeed-gpu` for `nvptx64-nvidia-cuda`, once per PTX target
/// (code gated on `target_feature = "sm_80"` and `"sm_90a"` differs between
/// them), and once more for sm_90a with the feature `debug-print`
/// (`gpu_print!`, the printing panic handler).
pub(crate) fn lint_gpu() -> Result<(), String> {
    let runs = PTX_TARGETS
        .iter()
        .map(|target| (*target, false))
        .chain([("sm_90a", true)]);
    for (target, print) in runs {
        let mut cmd = cargo();
        cmd.args(["clippy", "--quiet", "--package", "warpspeed-gpu"])
            .args(["--target", "nvptx64-nvidia-cuda", "-Zbuild-std=core"]);
        let mut dir = target.to_string();
        if print {
            cmd.args(["--features", "debug-print"]);
            dir.push_str("-print");
        }
        cmd.arg("--target-dir")
            .arg(root().join("target/clippy").join(dir))
            .args(["--", "-D", "warnings"])
            .env(
                "CARGO_ENCODED_RUSTFLAGS",
                crate::ptx::device_rustflags(target),
            )
            .env_remove("RUSTFLAGS");
        run(cmd)?;
        let with = if print { " with debug-print" } else { "" };
        println!("{target}{with}: device code lint-clean");
    }
    Ok(())
}

/// Runs every test and ends with one line that adds up all of cargo's
/// `test result:` lines (GPU tests without a device count as skipped).
pub(crate) fn test() -> Result<(), String> {
    let mut child = cargo()
        .args(["test", "--workspace", "--release"])
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run cargo test: {e}"))?;
    let (mut passed, mut failed, mut skipped) = (0u64, 0u64, 0u64);
    let stdout = child.stdout.take().expect("piped");
    for line in BufReader::new(stdout).lines() {
        let line = line.map_err(|e| e.to_string())?;
        println!("{line}");
        if let Some(counts) = line.strip_prefix("test result: ") {
            for part in counts.split(['.', ';']) {
                let mut words = part.split_whitespace();
                if let (Some(n), Some(what)) = (
                    words.next().and_then(|n| n.parse::<u64>().ok()),
                    words.next(),
                ) {
                    match what {
                        "passed" => passed += n,
                        "failed" => failed += n,
                        "ignored" => skipped += n,
                        _ => {}
                    }
                }
            }
        }
    }
    let status = child.wait().map_err(|e| e.to_string())?;
    println!("tests: {passed} passed, {failed} failed, {skipped} skipped");
    if status.success() {
        Ok(())
    } else {
        Err(format!("cargo test failed: {status}"))
    }
}

/// Runs the benchmark with `args`, then renders the report of the JSON it
/// wrote ([`report`]); output goes to `target/bench/` unless `--out` says
/// otherwise. Paths are made absolute (cargo runs the bench in the
/// package's folder).
pub(crate) fn bench(args: &[String]) -> Result<(), String> {
    let mut cmd = cargo();
    cmd.args([
        "bench",
        "--quiet",
        "--package",
        "warpspeed",
        "--bench",
        "ladder",
        "--",
    ]);
    let mut args = args.iter();
    let mut out = None;
    while let Some(arg) = args.next() {
        cmd.arg(arg);
        if arg == "--out" {
            let path = args.next().ok_or(format!("{arg} needs a path"))?;
            let path = env::current_dir().map_err(|e| e.to_string())?.join(path);
            cmd.arg(&path);
            out = Some(path);
        }
    }
    let out = match out {
        Some(out) => out,
        None => {
            let out = root().join("target/bench");
            cmd.arg("--out").arg(&out);
            out
        }
    };
    run(cmd)?;
    report(&out.join("ladder.json"))
}

/// Writes `report.md` and the SVG charts of a run beside its JSON.
pub(crate) fn report(json: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(json).map_err(|e| format!("{}: {e}", json.display()))?;
    let dir = json.parent().unwrap_or(Path::new("."));
    warpspeed_report::write_report(&text, dir)?;
    println!("report and charts: {}", dir.display());
    Ok(())
}
