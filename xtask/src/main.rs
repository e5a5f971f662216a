//! Project tasks. Run `cargo xtask help`.

use std::env;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

mod device;
mod kernels;
mod lineinfo;
mod ptx;
mod ptxas;
mod tasks;

use device::device;
use kernels::kernels;
use lineinfo::build_ptx_lineinfo;
use ptx::build_ptx;
use tasks::{bench, lint_gpu, report, test};

const HELP: &str = "\
cargo xtask <task>

  build-ptx [--check]   build gpu/ for every PTX target into host/ptx/, and
                        with ptxas a cubin for sm_80 and sm_90a beside it;
                        --check: fail if the committed PTX or a cubin differs
  build-ptx --lineinfo [--print]
                        for debugging, leaving host/ptx/ alone: build gpu/ for
                        every PTX target with line tables into
                        target/ptx-lineinfo/warpspeed_<target>.ptx; --print
                        also turns on gpu_print! and panic locations
                        (feature debug-print: warpspeed_<target>.print.ptx).
                        WARPSPEED_PTX_FILE=<file> makes the host library load
                        it (JIT with line info): compute-sanitizer and Nsight
                        Compute then name Rust files and lines
  kernels [--check]     ptxas -v on the committed PTX of every target: registers,
                        shared memory, stack and spills per entry; prints a
                        table, writes target/kernels.json and target/kernels.md;
                        --check: fail if an entry spills that
                        its family's SPILLS_ON_PURPOSE does not name
  lint-gpu              clippy (-D warnings) on the device crate for nvptx64, per
                        PTX target: the kernels and prim/ as the GPU build sees
                        them; and for sm_90a with the feature debug-print
  test                  build-ptx --check, kernels --check, then every test (GPU
                        tests run where a CUDA device exists and are reported
                        ignored elsewhere)
  bench [--families a,b] [--steps a,b] [--quick] [--reps N] [--warmup-ms N] [--no-peers] [--no-hold]
        [--out DIR]     run the ladder benchmarks on the GPU beside NVIDIA's
                        libraries (default: every family; --steps: only the
                        named steps); prints tables, writes JSON, then
                        renders report.md and SVG charts, to target/bench/
                        (--no-hold: under a profiler, which serialises launches;
                        --warmup-ms: the least warm-up of each measurement,
                        200 by default)
  report JSON           render report.md and the SVG charts again beside a bench
                        JSON file (no GPU needed)
  readme [--check]      render the measured tables of the README and the guides
                        (docs/*.md) again from the committed reports
                        (docs/bench/<device>/ladder.json);
                        --check (CI): fail where one is not current (no GPU)
  device                check the committed PTX (build-ptx --check), then
                        build release test and bench executables into
                        target/device/ with a script that runs them on a GPU
                        machine without Rust (see README), and
                        target/device/ptx/warpspeed_sm_90a.lineinfo.ptx (line
                        tables, for compute-sanitizer); packed, ~3 MB, as
                        target/device.txz
  profile FAMILY [VARIANT] [--BENCH ARGS...]
                        on a GPU machine with Nsight Compute: build the bundle
                        (device), then profile the fourth launch of the kernel
                        whose entry starts with FAMILY_VARIANT (PROFILE_KERNEL:
                        another prefix) in the family's quick bench:
                        duration, DRAM against the peak, occupancy, registers,
                        shared-memory bank conflicts, top stalls, and the Rust
                        lines that take the time (docs/debugging.md); on a GPU
                        machine without Rust: `bash target/device/run.sh
                        profile FAMILY [VARIANT]`
";

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("build-ptx") => build_ptx_task(&args[1..]),
        Some("kernels") => kernels(args.iter().any(|a| a == "--check"), Vec::new()),
        Some("lint-gpu") => lint_gpu(),
        Some("test") => build_ptx(true)
            .and_then(|reports| kernels(true, reports))
            .and_then(|()| test()),
        Some("bench") => bench(&args[1..]),
        Some("device") => device(),
        Some("profile") if args.len() >= 2 => device().and_then(|()| {
            let mut cmd = Command::new("bash");
            cmd.arg(root().join("target/device/run.sh"))
                .arg("profile")
                .args(&args[1..]);
            run(cmd)
        }),
        Some("profile") => {
            Err("usage: cargo xtask profile FAMILY [VARIANT] [--BENCH ARGS...]".into())
        }
        Some("report") => match args.get(1) {
            Some(path) => report(Path::new(path)),
            None => Err("usage: cargo xtask report <ladder.json>".into()),
        },
        Some("readme") => {
            // The README and every guide in docs/ hold generated tables.
            let mut files = vec![root().join("README.md")];
            if let Ok(entries) = std::fs::read_dir(root().join("docs")) {
                let mut guides: Vec<_> = entries
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|x| x == "md"))
                    .collect();
                guides.sort();
                files.extend(guides);
            }
            let check = args.iter().any(|a| a == "--check");
            files
                .iter()
                .try_for_each(|file| warpspeed_report::update_readme(file, check))
        }
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

/// `cargo xtask build-ptx [--check]` or `build-ptx --lineinfo [--print]`.
fn build_ptx_task(args: &[String]) -> Result<(), String> {
    let has = |flag: &str| args.iter().any(|a| a == flag);
    if let Some(other) = args
        .iter()
        .find(|a| !matches!(a.as_str(), "--check" | "--lineinfo" | "--print"))
    {
        return Err(format!("build-ptx: unknown argument `{other}`\n\n{HELP}"));
    }
    match (has("--check"), has("--lineinfo"), has("--print")) {
        (check, false, false) => build_ptx(check).map(drop),
        (false, true, print) => build_ptx_lineinfo(print),
        (true, true, _) => {
            Err("build-ptx: --check is for the committed PTX, not --lineinfo".into())
        }
        (_, false, true) => Err("build-ptx: --print goes with --lineinfo".into()),
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
