//! Project tasks. Run `cargo xtask help`.

use std::env;
use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

/// The PTX targets shipped in `host/ptx/` (one list, the device crate's).
const PTX_TARGETS: [&str; 3] = warpspeed_gpu::ptx::TARGETS;

const HELP: &str = "\
cargo xtask <task>

  build-ptx [--check]   build gpu/ for every PTX target into host/ptx/;
                        --check: fail if the committed PTX differs
  lint-gpu              clippy (-D warnings) on the device crate for nvptx64, per
                        PTX target: the kernels and prim/ as the GPU build sees them
  test                  build-ptx --check, then every test (GPU tests run where
                        a CUDA device exists and are reported ignored elsewhere)
  bench [--families a,b] [--quick] [--reps N] [--no-peers] [--out DIR]
                        run the ladder benchmarks on the GPU beside NVIDIA's
                        libraries (default: every family); prints tables,
                        writes JSON, report.md and SVG charts to target/bench/
  report JSON           render report.md and the SVG charts again beside a bench
                        JSON file (no GPU needed)
  device                build release test and bench executables into
                        target/device/ with a script that runs them on a GPU
                        machine without Rust (see README)
";

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("build-ptx") => build_ptx(args.iter().any(|a| a == "--check")),
        Some("lint-gpu") => lint_gpu(),
        Some("test") => build_ptx(true).and_then(|()| test()),
        Some("bench") => bench(&args[1..]),
        Some("device") => device(),
        Some("report") => match args.get(1) {
            Some(path) => bench(&["--report".into(), path.clone()]),
            None => Err("usage: cargo xtask report <ladder.json>".into()),
        },
        Some("help") | None => {
            print!("{HELP}");
            Ok(())
        }
        Some(other) => Err(format!("unknown task `{other}`\n\n{HELP}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn cargo() -> Command {
    let mut cmd = Command::new(env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.current_dir(root());
    cmd
}

fn run(mut cmd: Command) -> Result<(), String> {
    let status = cmd
        .status()
        .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{cmd:?} failed: {status}"))
    }
}

/// The committed PTX file for `target`.
fn ptx_path(target: &str) -> PathBuf {
    root()
        .join("host/ptx")
        .join(format!("warpspeed_{target}.ptx"))
}

fn build_ptx(check: bool) -> Result<(), String> {
    let mut stale = Vec::new();
    for target in PTX_TARGETS {
        let target_dir = root().join("target/ptx").join(target);
        let mut cmd = cargo();
        cmd.args([
            "rustc",
            "--quiet",
            "--package",
            "warpspeed-gpu",
            "--profile",
            "ptx",
        ])
        .args([
            "--target",
            "nvptx64-nvidia-cuda",
            "-Zbuild-std=core",
            "--crate-type",
            "cdylib",
        ])
        .arg("--target-dir")
        .arg(&target_dir)
        .args(["--", "-C", "linker=/bin/true", "--emit=asm"])
        // target-cpu must reach every crate of the build, `core` included.
        .env("CARGO_ENCODED_RUSTFLAGS", format!("-Ctarget-cpu={target}"))
        .env_remove("RUSTFLAGS");
        run(cmd)?;
        let built = target_dir.join("nvptx64-nvidia-cuda/ptx/deps/warpspeed_gpu.s");
        let ptx = fs::read_to_string(&built).map_err(|e| format!("{}: {e}", built.display()))?;

        let mut problems = Vec::new();
        warpspeed_gpu::ptx::check(&ptx, &mut |p| problems.push(p.to_string()));
        if !problems.is_empty() {
            return Err(format!(
                "PTX for {target} is not loadable as declared:\n  {}",
                problems.join("\n  ")
            ));
        }
        let entries = warpspeed_gpu::ptx::entries(&ptx).count();

        let dest = ptx_path(target);
        let committed = fs::read_to_string(&dest).unwrap_or_default();
        if check {
            if committed != ptx {
                stale.push(dest.display().to_string());
            } else {
                println!("{target}: {entries} entry points, committed PTX is current");
            }
        } else {
            fs::create_dir_all(dest.parent().unwrap()).map_err(|e| e.to_string())?;
            fs::write(&dest, &ptx).map_err(|e| format!("{}: {e}", dest.display()))?;
            println!("{target}: {entries} entry points -> {}", dest.display());
        }
    }
    if stale.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "committed PTX differs from a fresh build: {}\nrun `cargo xtask build-ptx` and commit the result",
            stale.join(", ")
        ))
    }
}

/// Clippy on `warpspeed-gpu` for `nvptx64-nvidia-cuda`, once per PTX target
/// (code gated on `target_feature = "sm_80"` differs between them).
fn lint_gpu() -> Result<(), String> {
    for target in PTX_TARGETS {
        let mut cmd = cargo();
        cmd.args(["clippy", "--quiet", "--package", "warpspeed-gpu"])
            .args(["--target", "nvptx64-nvidia-cuda", "-Zbuild-std=core"])
            .arg("--target-dir")
            .arg(root().join("target/clippy").join(target))
            .args(["--", "-D", "warnings"])
            .env("CARGO_ENCODED_RUSTFLAGS", format!("-Ctarget-cpu={target}"))
            .env_remove("RUSTFLAGS");
        run(cmd)?;
        println!("{target}: device code lint-clean");
    }
    Ok(())
}

/// Runs every test and ends with one line that adds up all of cargo's
/// `test result:` lines (GPU tests without a device count as skipped).
fn test() -> Result<(), String> {
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

/// Runs the benchmark with `args`; output goes to `target/bench/` unless
/// `--out` says otherwise. Paths are made absolute (cargo runs the bench in
/// the package's folder).
fn bench(args: &[String]) -> Result<(), String> {
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
    let mut out = false;
    while let Some(arg) = args.next() {
        cmd.arg(arg);
        if matches!(arg.as_str(), "--out" | "--report") {
            out = true;
            let path = args.next().ok_or(format!("{arg} needs a path"))?;
            cmd.arg(env::current_dir().map_err(|e| e.to_string())?.join(path));
        }
    }
    if !out {
        cmd.arg("--out").arg(root().join("target/bench"));
    }
    run(cmd)
}

/// Builds every test and bench executable in release mode and copies them,
/// with `xtask/device.sh`, into `target/device/`: the folder a GPU machine
/// without Rust needs (the PTX is embedded in the executables).
fn device() -> Result<(), String> {
    let out = root().join("target/device");
    let _ = fs::remove_dir_all(&out);
    fs::create_dir_all(out.join("bin")).map_err(|e| e.to_string())?;
    let mut executables = Vec::new();
    for args in [
        &["test", "--workspace", "--release", "--no-run"][..],
        &[
            "bench",
            "--package",
            "warpspeed",
            "--bench",
            "ladder",
            "--no-run",
        ][..],
    ] {
        let output = cargo()
            .args(args)
            .arg("--message-format=json")
            .output()
            .map_err(|e| format!("cannot run cargo: {e}"))?;
        if !output.status.success() {
            return Err(format!(
                "cargo {} failed:\n{}",
                args.join(" "),
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        for line in String::from_utf8_lossy(&output.stdout).lines() {
            // The artifact lines carry `"executable":"<path>"`; read that
            // field without a JSON dependency.
            if let Some(rest) = line.split("\"executable\":\"").nth(1) {
                let path = rest.split('"').next().unwrap_or_default();
                let target_name = line
                    .split("\"name\":\"")
                    .nth(1)
                    .and_then(|s| s.split('"').next())
                    .unwrap_or("test");
                executables.push((target_name.to_string(), PathBuf::from(path)));
            }
        }
    }
    for (name, path) in &executables {
        let dest = out.join("bin").join(name);
        fs::copy(path, &dest).map_err(|e| format!("{}: {e}", path.display()))?;
        println!("{}", dest.display());
    }
    fs::copy(root().join("xtask/device.sh"), out.join("run.sh")).map_err(|e| e.to_string())?;
    println!("bundle ready: target/device (carry it; run `bash target/device/run.sh`)");
    Ok(())
}
