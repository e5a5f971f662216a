//! Project tasks. Run `cargo xtask help`.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::Instant;

/// The PTX targets shipped in `host/ptx/` (one list, the device crate's).
const PTX_TARGETS: [&str; 4] = warpspeed_gpu::ptx::TARGETS;

/// The targets also shipped as cubins in `host/ptx/` (the device crate's list).
const CUBIN_TARGETS: [&str; 2] = warpspeed_gpu::ptx::CUBIN_TARGETS;

/// What the ptxas that made the committed cubins prints for `--version`
/// (`xtask/setup.sh` installs it); another release makes other cubins.
const PTXAS_RELEASE: &str = "Cuda compilation tools, release 12.9, V12.9.86";

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
                        SPILLS_ON_PURPOSE (gpu/src/kernel.rs) does not name
  lint-gpu              clippy (-D warnings) on the device crate for nvptx64, per
                        PTX target: the kernels and prim/ as the GPU build sees
                        them; and for sm_90a with the feature debug-print
  test                  build-ptx --check, kernels --check, then every test (GPU
                        tests run where a CUDA device exists and are reported
                        ignored elsewhere)
  bench [--families a,b] [--steps a,b] [--quick] [--reps N] [--no-peers] [--no-hold]
        [--out DIR]     run the ladder benchmarks on the GPU beside NVIDIA's
                        libraries (default: every family; --steps: only the
                        named steps); prints tables, writes JSON, report.md
                        and SVG charts to target/bench/
                        (--no-hold: under a profiler, which serialises launches)
  report JSON           render report.md and the SVG charts again beside a bench
                        JSON file (no GPU needed)
  readme [--check]      render the README's measured tables again from the
                        committed reports (docs/bench/<device>/ladder.json);
                        --check (CI): fail where one is not current (no GPU)
  device                build release test and bench executables into
                        target/device/ with a script that runs them on a GPU
                        machine without Rust (see README), and
                        target/device/ptx/warpspeed_sm_90a.lineinfo.ptx (line
                        tables, for compute-sanitizer); packed, ~3 MB, as
                        target/device.txz
  profile FAMILY [VARIANT]
                        on a GPU machine with Nsight Compute: build the bundle
                        (device), then profile the first kernel whose entry
                        starts with FAMILY_VARIANT in the family's quick bench:
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
        Some("profile") => Err("usage: cargo xtask profile FAMILY [VARIANT]".into()),
        Some("report") => match args.get(1) {
            Some(path) => bench(&["--report".into(), path.clone()]),
            None => Err("usage: cargo xtask report <ladder.json>".into()),
        },
        Some("readme") => {
            let mut to = vec![
                "--readme".into(),
                root().join("README.md").display().to_string(),
            ];
            if args.iter().any(|a| a == "--check") {
                to.push("--check".into());
            }
            bench(&to)
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

/// The committed cubin for `target`.
fn cubin_path(target: &str) -> PathBuf {
    root()
        .join("host/ptx")
        .join(format!("warpspeed_{target}.cubin"))
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

/// How the device crate is built.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Flavor {
    /// The PTX that ships in `host/ptx/`.
    Release,
    /// With line tables (`.file`/`.loc`), for sanitizers and profilers.
    LineInfo,
    /// With line tables and the feature `debug-print` (`gpu_print!`, panic
    /// locations).
    Print,
}

impl Flavor {
    /// Cargo's target directory for a build of `target`: one per flavour,
    /// since each builds `core` with other flags.
    fn target_dir(self, target: &str) -> PathBuf {
        match self {
            Flavor::Release => root().join("target/ptx").join(target),
            Flavor::LineInfo => root().join("target/ptx-lineinfo").join(target),
            Flavor::Print => root()
                .join("target/ptx-lineinfo")
                .join(format!("{target}-print")),
        }
    }
}

/// Builds the device crate for `target` as `flavor` says; returns the path
/// of the PTX that rustc wrote (in [`Flavor::target_dir`]), unchecked.
fn build_device_crate(target: &str, flavor: Flavor) -> Result<PathBuf, String> {
    let target_dir = flavor.target_dir(target);
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
    .arg(&target_dir);
    if flavor == Flavor::Print {
        cmd.args(["--features", "debug-print"]);
    }
    cmd.args(["--", "-C", "linker=/bin/true", "--emit=asm"])
        .env_remove("RUSTFLAGS");
    // target-cpu must reach every crate of the build, `core` included
    // (CARGO_ENCODED_RUSTFLAGS separates flags by 0x1f).
    let mut rustflags = format!("-Ctarget-cpu={target}");
    if flavor == Flavor::Release {
        cmd.env_remove("CARGO_PROFILE_PTX_DEBUG");
    } else {
        cmd.env("CARGO_PROFILE_PTX_DEBUG", "line-tables-only");
        // `.file` names relative to the repository (`gpu/src/reduce.rs`),
        // and so are the panic locations that `--print` prints.
        let _ = write!(rustflags, "\x1f--remap-path-prefix={}/=", root().display());
    }
    cmd.env("CARGO_ENCODED_RUSTFLAGS", rustflags);
    run(cmd)?;
    Ok(target_dir.join("nvptx64-nvidia-cuda/ptx/deps/warpspeed_gpu.s"))
}

/// `path:line` of every `gpu_print!` call in the `.rs` files under `dir`
/// (comment lines, where the macro is documented, aside).
fn gpu_print_calls(dir: &Path) -> Result<Vec<String>, String> {
    let mut calls = Vec::new();
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .map(|entry| entry.map(|e| e.path()).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    entries.sort();
    for path in entries {
        if path.is_dir() {
            calls.extend(gpu_print_calls(&path)?);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            for (index, line) in text.lines().enumerate() {
                let code = line.trim_start();
                if !code.starts_with("//") && code.contains("gpu_print!(") {
                    let shown = path.strip_prefix(root()).unwrap_or(&path);
                    calls.push(format!("{}:{}", shown.display(), index + 1));
                }
            }
        }
    }
    Ok(calls)
}

/// Checks built PTX: against the kernel tables ([`warpspeed_gpu::ptx::check`]),
/// and that only the print build calls `vprintf` (the PTX that ships never
/// prints). Returns the number of entry points.
fn check_built_ptx(target: &str, ptx: &str, flavor: Flavor) -> Result<usize, String> {
    let mut problems = Vec::new();
    warpspeed_gpu::ptx::check(ptx, &mut |p| problems.push(p.to_string()));
    if flavor != Flavor::Print && ptx.contains("vprintf") {
        problems.push(
            "it calls `vprintf`: printing (the feature `debug-print`) is for `build-ptx --lineinfo --print` only"
                .into(),
        );
    }
    if !problems.is_empty() {
        return Err(format!(
            "PTX for {target} is not loadable as declared:\n  {}",
            problems.join("\n  ")
        ));
    }
    Ok(warpspeed_gpu::ptx::entries(ptx).count())
}

/// Builds the PTX of every target, checks it against the kernel tables, and
/// has ptxas make the cubins of [`CUBIN_TARGETS`] from it; writes both into
/// `host/ptx/`, or with `check` compares them with the committed files.
/// Returns ptxas's `-v` report of each cubin target, for [`kernels`].
fn build_ptx(check: bool) -> Result<Vec<(&'static str, String)>, String> {
    ptxas_path()?; // before the long build, not after it
    if check {
        let calls = gpu_print_calls(&root().join("gpu/src"))?;
        if !calls.is_empty() {
            return Err(format!(
                "gpu_print! is for debugging builds; remove it before committing:\n  {}",
                calls.join("\n  ")
            ));
        }
    }
    let mut stale = Vec::new();
    let mut compiling = Vec::new();
    for target in PTX_TARGETS {
        let built = build_device_crate(target, Flavor::Release)?;
        let ptx = fs::read_to_string(&built).map_err(|e| format!("{}: {e}", built.display()))?;
        let ptx = with_launch_bounds(&ptx)?;
        // ptxas compiles the file: the bounds go there too (a second pass
        // over it changes nothing).
        fs::write(&built, &ptx).map_err(|e| format!("{}: {e}", built.display()))?;
        let entries = check_built_ptx(target, &ptx, Flavor::Release)?;

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
        // The cubin, from the PTX just built, while the next target builds.
        if CUBIN_TARGETS.contains(&target) {
            let cubin = Flavor::Release
                .target_dir(target)
                .join(format!("warpspeed_{target}.cubin"));
            compiling.push(Ptxas::start(target, &built, cubin, &[])?);
        }
    }

    let mut reports = Vec::new();
    for ptxas in compiling {
        let (target, built) = (ptxas.target, ptxas.cubin.clone());
        reports.push((target, ptxas.finish()?));
        let cubin = fs::read(&built).map_err(|e| format!("{}: {e}", built.display()))?;
        let dest = cubin_path(target);
        if check {
            if fs::read(&dest).ok() != Some(cubin) {
                stale.push(dest.display().to_string());
            } else {
                println!("{target}: committed cubin is current");
            }
        } else {
            fs::write(&dest, &cubin).map_err(|e| format!("{}: {e}", dest.display()))?;
            println!(
                "{target}: cubin, {} bytes -> {}",
                cubin.len(),
                dest.display()
            );
        }
    }
    if !check && let Some(note) = ptxas_mismatch()? {
        println!("warning: {note}");
    }
    if stale.is_empty() {
        Ok(reports)
    } else {
        let note = ptxas_mismatch()?
            .map(|n| format!("\n{n}"))
            .unwrap_or_default();
        Err(format!(
            "committed PTX or cubins differ from a fresh build: {}\nrun `cargo xtask build-ptx` and commit the result{note}",
            stale.join(", ")
        ))
    }
}

/// Where `cargo xtask build-ptx --lineinfo [--print]` writes its PTX.
fn lineinfo_dir() -> PathBuf {
    root().join("target/ptx-lineinfo")
}

/// `cargo xtask build-ptx --lineinfo [--print]`: the PTX of every target
/// with line tables (and with `print` the feature `debug-print`), checked
/// like the release build, into [`lineinfo_dir`]; `host/ptx/` stays as it
/// is. Where ptxas is installed, it compiles each file with `-lineinfo` (as
/// the driver will), beside the next target's build.
fn build_ptx_lineinfo(print: bool) -> Result<(), String> {
    let flavor = if print {
        Flavor::Print
    } else {
        Flavor::LineInfo
    };
    let suffix = if print { ".print.ptx" } else { ".ptx" };
    let ptxas = ptxas_path();
    let mut compiling = Vec::new();
    let mut written = Vec::new();
    for target in PTX_TARGETS {
        let started = Instant::now();
        let dest = lineinfo_dir().join(format!("warpspeed_{target}{suffix}"));
        let summary = write_lineinfo_ptx(target, flavor, &dest)?;
        println!(
            "{target}: {summary} -> {} ({:.1} s)",
            dest.display(),
            started.elapsed().as_secs_f64()
        );
        if ptxas.is_ok() {
            let cubin = flavor
                .target_dir(target)
                .join(format!("warpspeed_{target}.cubin"));
            compiling.push(Ptxas::start(target, &dest, cubin, &["-lineinfo"])?);
        }
        written.push(dest);
    }
    for ptxas in compiling {
        let target = ptxas.target;
        ptxas.finish()?;
        println!("{target}: ptxas -arch={target} -lineinfo compiles it");
    }
    if let Err(why) = ptxas {
        println!("note: not compiled here ({why})");
    }
    let example = written.last().ok_or("no PTX target")?;
    println!(
        "Load one instead of the embedded kernels, on a GPU its target runs on (sm_90: H100/H200; \
         sm_80: A100 and 8.x; sm_70: any): the host library compiles it with line info, so \
         compute-sanitizer and Nsight Compute name Rust files and lines:\n  \
         WARPSPEED_PTX_FILE={} compute-sanitizer --tool memcheck <test or program>",
        example.display()
    );
    if print {
        println!(
            "gpu_print! lines and device panics (`panic at gpu/src/...:line:column`) appear on \
             stdout when the host synchronises. Never commit a gpu_print! call."
        );
    }
    Ok(())
}

/// Builds the PTX of `target` with line tables (`flavor` is
/// [`Flavor::LineInfo`] or [`Flavor::Print`]), makes it loadable
/// ([`strip_debug_sections`]), checks it and writes it to `dest`. Returns a
/// summary for the terminal: entries, `.loc` lines, `vprintf` calls.
fn write_lineinfo_ptx(target: &str, flavor: Flavor, dest: &Path) -> Result<String, String> {
    let built = build_device_crate(target, flavor)?;
    let text = fs::read_to_string(&built).map_err(|e| format!("{}: {e}", built.display()))?;
    let ptx = strip_debug_sections(&text).map_err(|e| format!("{}: {e}", built.display()))?;
    let ptx = with_launch_bounds(&ptx)?;
    let entries = check_built_ptx(target, &ptx, flavor)?;
    let lines = |what: &str| {
        ptx.lines()
            .filter(|l| l.trim_start().starts_with(what))
            .count()
    };
    let locs = lines(".loc");
    if locs == 0 {
        return Err(format!(
            "{}: no `.loc` line: the build has no line tables",
            built.display()
        ));
    }
    let mut summary = format!(
        "{entries} entry points, {} files, {locs} .loc lines",
        lines(".file")
    );
    if flavor == Flavor::Print {
        let calls = ptx
            .lines()
            .filter(|l| l.trim_start().starts_with("call") && l.contains("vprintf"))
            .count();
        let _ = write!(summary, ", calls to vprintf: {calls}");
    }
    fs::create_dir_all(dest.parent().unwrap()).map_err(|e| e.to_string())?;
    fs::write(dest, &ptx).map_err(|e| format!("{}: {e}", dest.display()))?;
    Ok(summary)
}

/// `ptx` with the performance directives of
/// [`LAUNCH_BOUNDS`](warpspeed_gpu::kernel::LAUNCH_BOUNDS) (`.maxntid`,
/// `.minnctapersm`) between each named entry's parameter list and its
/// body, where CUDA C++'s `__launch_bounds__` puts them. An entry that has
/// them already is left as it is, so a second pass changes nothing. Fails
/// if a named entry is not in the PTX.
fn with_launch_bounds(ptx: &str) -> Result<String, String> {
    let bounds = warpspeed_gpu::kernel::LAUNCH_BOUNDS;
    let mut found = vec![false; bounds.len()];
    let mut out = String::with_capacity(ptx.len() + 64 * bounds.len());
    let mut pending = None;
    let mut lines = ptx.lines().peekable();
    while let Some(line) = lines.next() {
        if let Some(name) = line
            .strip_prefix(".visible .entry ")
            .and_then(|rest| rest.split('(').next())
        {
            pending = bounds.iter().position(|b| b.entry == name);
        }
        out.push_str(line);
        out.push('\n');
        // The parameter list closes with `)` alone on its line (or on the
        // entry's own line when it is empty).
        if (line == ")" || line.starts_with(".visible .entry ") && line.ends_with(')'))
            && let Some(i) = pending.take()
        {
            found[i] = true;
            if lines
                .peek()
                .is_some_and(|next| next.starts_with(".maxntid"))
            {
                continue;
            }
            let b = bounds[i];
            let _ = writeln!(out, ".maxntid {}, 1, 1", b.threads);
            let _ = writeln!(out, ".minnctapersm {}", b.blocks_per_sm);
        }
    }
    if !ptx.ends_with('\n') {
        out.pop();
    }
    let missing: Vec<_> = bounds
        .iter()
        .zip(&found)
        .filter(|(_, f)| !**f)
        .map(|(b, _)| b.entry)
        .collect();
    if missing.is_empty() {
        Ok(out)
    } else {
        Err(format!(
            "LAUNCH_BOUNDS (gpu/src/kernel.rs) names entries the PTX lacks: {}",
            missing.join(", ")
        ))
    }
}

/// PTX with line tables (`debug = "line-tables-only"`) as ptxas and the
/// driver take it. rustc writes, besides the `.file` and `.loc` directives
/// that `ptxas -lineinfo` (and the driver, with `CU_JIT_GENERATE_LINE_INFO`)
/// read, DWARF sections that ptxas refuses; this keeps the directives and
/// drops
///
/// * every `.section .debug_*` block: from its `.section` line through the
///   line that closes its braces (`{` on that line or a later one; `{ }` on
///   one line);
/// * the `$L__sec_end<N>:` labels left between those blocks;
/// * `debug` from the `.target` line (`.target sm_90, debug`), which asks
///   for the full debug information those sections were;
///
/// and moves the `.file` table from the end of the module to its top (after
/// `.address_size`), where ptxas resolves `.loc` file numbers against it.
///
/// Fails on a section that is not `.debug_*` or does not end, and if a
/// reference to what it dropped is left. PTX without those parts comes back
/// unchanged.
fn strip_debug_sections(ptx: &str) -> Result<String, String> {
    /// A `.debug_*` section being skipped.
    struct Section {
        /// Its `.section` line, counted from 1.
        line: usize,
        /// Braces opened minus braces closed so far.
        depth: i64,
        /// Whether its `{` has come.
        opened: bool,
    }
    let mut out = String::with_capacity(ptx.len());
    let mut files = Vec::new();
    let mut section: Option<Section> = None;
    for (index, line) in ptx.lines().enumerate() {
        let text = line.trim();
        // The back end lists `.file`s after the functions; ptxas reads a
        // `.loc`'s file number against the table seen so far, so misfiled
        // lines follow (found with Nsight Compute): hoist the table.
        if section.is_none() && text.starts_with(".file") && text[5..].starts_with([' ', '\t']) {
            files.push(line);
            continue;
        }
        if section.is_none()
            && let Some(name) = text.strip_prefix(".section")
        {
            if !name.trim_start().starts_with(".debug") {
                return Err(format!(
                    "line {}: `{text}` is not a debug section",
                    index + 1
                ));
            }
            section = Some(Section {
                line: index + 1,
                depth: 0,
                opened: false,
            });
        }
        if let Some(open) = &mut section {
            let braces = |c: char| text.chars().filter(|&t| t == c).count() as i64;
            open.depth += braces('{') - braces('}');
            open.opened |= text.contains('{');
            if open.depth < 0 {
                return Err(format!(
                    "line {}: a `}}` closes more than the section of line {} opened",
                    index + 1,
                    open.line
                ));
            }
            if open.opened && open.depth == 0 {
                section = None;
            }
            continue;
        }
        let label = text
            .strip_prefix("$L__sec_end")
            .and_then(|rest| rest.strip_suffix(':'));
        if label.is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())) {
            continue;
        }
        let target = text
            .strip_prefix(".target")
            .filter(|rest| rest.starts_with([' ', '\t']));
        if let Some(rest) = target {
            let kept: Vec<&str> = rest
                .split(',')
                .map(str::trim)
                .filter(|part| *part != "debug")
                .collect();
            out.push_str(".target ");
            out.push_str(&kept.join(", "));
            out.push('\n');
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    if let Some(open) = section {
        return Err(format!(
            "the section of line {} does not end (unbalanced braces)",
            open.line
        ));
    }
    if !files.is_empty() {
        let at = out
            .find(".address_size")
            .and_then(|i| out[i..].find('\n').map(|end| i + end + 1))
            .unwrap_or(0);
        out.insert_str(at, &(files.join("\n") + "\n"));
    }
    for (index, line) in out.lines().enumerate() {
        if line.contains(".debug_") || line.contains("$L__sec_end") {
            return Err(format!(
                "line {} still refers to a dropped section: `{}`",
                index + 1,
                line.trim()
            ));
        }
    }
    Ok(out)
}

/// The ptxas to run: `$WARPSPEED_PTXAS`, else the one `xtask/setup.sh`
/// installs in `xtask/tools/`.
fn ptxas_path() -> Result<PathBuf, String> {
    let path = match env::var_os("WARPSPEED_PTXAS") {
        Some(path) => PathBuf::from(path),
        None => root().join("xtask/tools/ptxas"),
    };
    if path.is_file() {
        Ok(path)
    } else {
        Err(format!(
            "no ptxas at {}: run `sh xtask/setup.sh` (or set WARPSPEED_PTXAS to a ptxas)",
            path.display()
        ))
    }
}

/// The line of `ptxas --version` that names the release, e.g.
/// "Cuda compilation tools, release 12.9, V12.9.86".
fn ptxas_release() -> Result<String, String> {
    let ptxas = ptxas_path()?;
    let output = Command::new(&ptxas)
        .arg("--version")
        .output()
        .map_err(|e| format!("cannot run {}: {e}", ptxas.display()))?;
    let text = String::from_utf8_lossy(&output.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("Cuda compilation tools"));
    Ok(line.unwrap_or("unknown release").to_string())
}

/// A note when the ptxas at hand is not the release that made the committed
/// cubins (its cubins then differ from them).
fn ptxas_mismatch() -> Result<Option<String>, String> {
    let release = ptxas_release()?;
    Ok((release != PTXAS_RELEASE).then(|| {
        format!(
            "the committed cubins are the output of ptxas \"{PTXAS_RELEASE}\"; {} is \"{release}\" (run `sh xtask/setup.sh` without WARPSPEED_PTXAS)",
            ptxas_path().unwrap_or_default().display()
        )
    }))
}

/// A running `ptxas -arch=<target> -v [extra] <ptx> -o <cubin>`. Several run
/// at once, and beside the next target's PTX build (sm_90's compile alone
/// takes seconds); the `-v` report goes to a file beside the cubin.
struct Ptxas {
    target: &'static str,
    cubin: PathBuf,
    report: PathBuf,
    child: Child,
}

impl Ptxas {
    fn start(
        target: &'static str,
        ptx: &Path,
        cubin: PathBuf,
        extra: &[&str],
    ) -> Result<Ptxas, String> {
        let ptxas = ptxas_path()?;
        let report = cubin.with_extension("ptxas.txt");
        let log = fs::File::create(&report).map_err(|e| format!("{}: {e}", report.display()))?;
        let log_too = log.try_clone().map_err(|e| e.to_string())?;
        let child = Command::new(&ptxas)
            .arg(format!("-arch={target}"))
            .arg("-v")
            .args(extra)
            .arg(ptx)
            .arg("-o")
            .arg(&cubin)
            .stdout(log)
            .stderr(log_too)
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", ptxas.display()))?;
        Ok(Ptxas {
            target,
            cubin,
            report,
            child,
        })
    }

    /// Waits for it to end; returns its `-v` report.
    fn finish(mut self) -> Result<String, String> {
        let status = self.child.wait().map_err(|e| e.to_string())?;
        let report = fs::read_to_string(&self.report)
            .map_err(|e| format!("{}: {e}", self.report.display()))?;
        if status.success() {
            Ok(report)
        } else {
            Err(format!(
                "ptxas -arch={} failed: {status}\n{report}",
                self.target
            ))
        }
    }
}

/// What `ptxas -v` reports for one entry on one target.
#[derive(Clone, Copy, Debug, Default)]
struct Usage {
    /// Registers per thread.
    registers: u32,
    /// Named barriers.
    barriers: u32,
    /// Static shared memory in bytes ("N bytes smem"); the dynamic part is
    /// sized at launch and is not in it.
    shared: u32,
    /// Stack frame in bytes (local memory).
    stack: u32,
    /// Bytes of registers spilled to local memory, and loaded back.
    spill_stores: u32,
    spill_loads: u32,
}

impl Usage {
    fn spills(&self) -> bool {
        self.spill_stores + self.spill_loads > 0
    }

    /// "16 B stack, 8 B spill stores, 8 B spill loads": the parts that are
    /// not zero; empty when all are.
    fn stack_and_spills(&self) -> String {
        let parts = [
            (self.stack, "stack"),
            (self.spill_stores, "spill stores"),
            (self.spill_loads, "spill loads"),
        ];
        let nonzero: Vec<String> = parts
            .iter()
            .filter(|(bytes, _)| *bytes > 0)
            .map(|(bytes, what)| format!("{bytes} B {what}"))
            .collect();
        nonzero.join(", ")
    }
}

/// Reads a `ptxas -v` report: the usage of each entry function, in the
/// report's order. Lines read (other lines, such as constant banks `cmem`
/// and compile times, are skipped):
///
/// ```text
/// ptxas info    : Compiling entry function 'X' for 'sm_90'
/// ptxas info    : Function properties for X
///     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
/// ptxas info    : Used 26 registers, used 1 barriers, 4096 bytes smem, 392 bytes cmem[0]
/// ```
///
/// The functions an entry calls are listed after it (`"Function properties
/// for <callee>"` and their stack line): their stack frames and spills are
/// added to the entry's, as they happen while it runs.
fn parse_ptxas(report: &str) -> Vec<(String, Usage)> {
    let mut entries: Vec<(String, Usage)> = Vec::new();
    for line in report.lines() {
        let text = line
            .strip_prefix("ptxas info")
            .map_or(line, |rest| rest.trim_start().trim_start_matches(':'))
            .trim();
        if let Some(rest) = text.strip_prefix("Compiling entry function '") {
            let name = rest.split('\'').next().unwrap_or_default();
            entries.push((name.to_string(), Usage::default()));
            continue;
        }
        let Some((_, usage)) = entries.last_mut() else {
            continue;
        };
        for part in text.split(',') {
            let part = part.trim();
            let part = part
                .strip_prefix("Used ")
                .or_else(|| part.strip_prefix("used "))
                .unwrap_or(part);
            let Some((n, what)) = part.split_once(' ') else {
                continue;
            };
            let Ok(n) = n.parse::<u32>() else {
                continue;
            };
            match what {
                "registers" => usage.registers = usage.registers.max(n),
                "barriers" | "barrier" => usage.barriers = usage.barriers.max(n),
                "bytes smem" => usage.shared = usage.shared.max(n),
                "bytes stack frame" => usage.stack += n,
                "bytes spill stores" => usage.spill_stores += n,
                "bytes spill loads" => usage.spill_loads += n,
                _ => {}
            }
        }
    }
    entries
}

/// One entry of the kernel tables and its usage on each PTX target.
struct KernelRow {
    family: &'static str,
    name: &'static str,
    usage: [Usage; PTX_TARGETS.len()],
}

impl KernelRow {
    fn spills(&self) -> bool {
        self.usage.iter().any(Usage::spills)
    }

    /// "sm_90: 16 B stack" for each target where the stack or a spill is
    /// not zero.
    fn stack_and_spills(&self) -> String {
        let parts: Vec<String> = PTX_TARGETS
            .iter()
            .zip(&self.usage)
            .map(|(target, usage)| (target, usage.stack_and_spills()))
            .filter(|(_, text)| !text.is_empty())
            .map(|(target, text)| format!("{target}: {text}"))
            .collect();
        parts.join("; ")
    }
}

/// `ptxas -v` on the committed PTX of every target (`reports` holds those
/// [`build_ptx`] already made from the same PTX): every entry's registers,
/// shared memory, stack and spills, as a table grouped by family on stdout
/// and in `target/kernels.md`, and in `target/kernels.json` (fields in
/// [`kernels_json`]). With `check`, fails if an entry spills on any target
/// and `SPILLS_ON_PURPOSE` does not name it, or if that list names an entry
/// that does not exist.
fn kernels(check: bool, mut reports: Vec<(&'static str, String)>) -> Result<(), String> {
    let scratch = root().join("target/kernels");
    fs::create_dir_all(&scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
    let mut compiling = Vec::new();
    for target in PTX_TARGETS {
        if !reports.iter().any(|(done, _)| *done == target) {
            let cubin = scratch.join(format!("warpspeed_{target}.cubin"));
            compiling.push(Ptxas::start(target, &ptx_path(target), cubin, &[])?);
        }
    }
    for ptxas in compiling {
        reports.push((ptxas.target, ptxas.finish()?));
    }

    let parsed: Vec<Vec<(String, Usage)>> = PTX_TARGETS
        .iter()
        .map(|target| {
            let (_, report) = reports.iter().find(|(done, _)| done == target).unwrap();
            parse_ptxas(report)
        })
        .collect();
    let mut rows = Vec::new();
    for (family, table) in warpspeed_gpu::FAMILIES {
        for kernel in table.iter() {
            let mut usage = [Usage::default(); PTX_TARGETS.len()];
            for (i, target) in PTX_TARGETS.iter().enumerate() {
                let (_, found) = parsed[i]
                    .iter()
                    .find(|(name, _)| name == kernel.name)
                    .ok_or_else(|| format!("ptxas -v reports no `{}` for {target}", kernel.name))?;
                usage[i] = *found;
            }
            rows.push(KernelRow {
                family,
                name: kernel.name,
                usage,
            });
        }
    }

    let summary = kernels_summary(&rows);
    print!("{}", kernels_table(&rows));
    println!("{summary}");
    let release = ptxas_release()?;
    for (file, text) in [
        ("kernels.json", kernels_json(&rows, &release)),
        ("kernels.md", kernels_markdown(&rows, &release, &summary)),
    ] {
        let path = root().join("target").join(file);
        fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
        println!("-> {}", path.display());
    }

    let on_purpose = warpspeed_gpu::kernel::SPILLS_ON_PURPOSE;
    let mut problems = Vec::new();
    for name in on_purpose {
        match rows.iter().find(|row| row.name == *name) {
            None => problems.push(format!(
                "SPILLS_ON_PURPOSE names `{name}`, which no kernel table declares"
            )),
            Some(row) if !row.usage.iter().any(|u| u.stack > 0 || u.spills()) => println!(
                "note: `{name}` is in SPILLS_ON_PURPOSE but no longer uses local memory \
                 (no stack, no spills)"
            ),
            Some(_) => {}
        }
    }
    let spilling: Vec<String> = rows
        .iter()
        .filter(|row| row.spills() && !on_purpose.contains(&row.name))
        .map(|row| format!("`{}` spills ({})", row.name, row.stack_and_spills()))
        .collect();
    if !spilling.is_empty() {
        problems.extend(spilling);
        problems.push(
            "remove the spills, or name the entry in SPILLS_ON_PURPOSE (gpu/src/kernel.rs) with the reason"
                .into(),
        );
    }
    if !check || problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// "118 entries; max registers sm_70 255, sm_80 255, sm_90 254; 0 spilling".
fn kernels_summary(rows: &[KernelRow]) -> String {
    let max: Vec<String> = PTX_TARGETS
        .iter()
        .enumerate()
        .map(|(i, target)| {
            let registers = rows.iter().map(|row| row.usage[i].registers).max();
            format!("{target} {}", registers.unwrap_or(0))
        })
        .collect();
    let spilling = rows.iter().filter(|row| row.spills()).count();
    format!(
        "{} entries; max registers {}; {spilling} spilling",
        rows.len(),
        max.join(", ")
    )
}

/// The table for the terminal: a line per family, then its entries.
fn kernels_table(rows: &[KernelRow]) -> String {
    let width = rows.iter().map(|row| row.name.len() + 2).max().unwrap_or(0);
    let group = 6 * PTX_TARGETS.len();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:width$} {:^group$}   {:^group$}   stack, spills",
        "", "registers", "shared bytes"
    );
    let mut targets = String::new();
    for target in PTX_TARGETS {
        let _ = write!(targets, " {target:>5}");
    }
    let _ = writeln!(out, "{:width$} {targets}   {targets}", "entry");
    let mut family = "";
    for row in rows {
        if row.family != family {
            family = row.family;
            let _ = writeln!(out, "{family}");
        }
        let mut line = format!("  {:w$} ", row.name, w = width - 2);
        for usage in &row.usage {
            let _ = write!(line, " {:>5}", usage.registers);
        }
        line.push_str("   ");
        for usage in &row.usage {
            let _ = write!(line, " {:>5}", usage.shared);
        }
        let _ = writeln!(out, "{line}   {}", row.stack_and_spills());
        out.truncate(out.trim_end().len());
        out.push('\n');
    }
    out
}

/// The same table in Markdown, for `target/kernels.md`.
fn kernels_markdown(rows: &[KernelRow], release: &str, summary: &str) -> String {
    let mut out = String::from("# Kernel resources\n\n");
    let _ = writeln!(
        out,
        "`ptxas -v` ({release}) on the committed PTX of each target, written by \
         `cargo xtask kernels`: registers per thread, static shared memory in bytes \
         (the dynamic part is sized at launch), and the stack frame and spills where \
         they are not zero.\n"
    );
    let mut header = String::from("| family | entry |");
    let mut rule = String::from("|---|---|");
    for what in ["registers", "shared bytes"] {
        for target in PTX_TARGETS {
            let _ = write!(header, " {what} {target} |");
            rule.push_str("--:|");
        }
    }
    let _ = writeln!(out, "{header} stack, spills |\n{rule}---|");
    for row in rows {
        let _ = write!(out, "| {} | `{}` |", row.family, row.name);
        for usage in &row.usage {
            let _ = write!(out, " {} |", usage.registers);
        }
        for usage in &row.usage {
            let _ = write!(out, " {} |", usage.shared);
        }
        let _ = writeln!(out, " {} |", row.stack_and_spills());
    }
    let _ = writeln!(out, "\n{summary}");
    out
}

/// The figures as JSON, for `target/kernels.json`:
///
/// * `ptxas`: the release that made them (its `--version` line);
/// * `targets`: the PTX targets, in order;
/// * `entries`: one object per entry, in the order of the kernel tables
///   (`FAMILIES`), with `family`, `name` (the PTX entry name),
///   `spills_on_purpose` (named in `SPILLS_ON_PURPOSE`) and `usage`, an
///   object keyed by target whose values hold `registers` (per thread),
///   `barriers`, `shared_bytes` (static shared memory; the dynamic part is
///   sized at launch), `stack_bytes` (stack frame), `spill_store_bytes` and
///   `spill_load_bytes`.
fn kernels_json(rows: &[KernelRow], release: &str) -> String {
    let targets: Vec<String> = PTX_TARGETS.iter().map(|t| json_string(t)).collect();
    let mut out = String::new();
    let _ = writeln!(out, "{{");
    let _ = writeln!(out, "  \"ptxas\": {},", json_string(release));
    let _ = writeln!(out, "  \"targets\": [{}],", targets.join(", "));
    let _ = writeln!(out, "  \"entries\": [");
    for (i, row) in rows.iter().enumerate() {
        let usage: Vec<String> = PTX_TARGETS
            .iter()
            .zip(&row.usage)
            .map(|(target, u)| {
                format!(
                    "{}: {{\"registers\": {}, \"barriers\": {}, \"shared_bytes\": {}, \"stack_bytes\": {}, \"spill_store_bytes\": {}, \"spill_load_bytes\": {}}}",
                    json_string(target),
                    u.registers,
                    u.barriers,
                    u.shared,
                    u.stack,
                    u.spill_stores,
                    u.spill_loads
                )
            })
            .collect();
        let _ = writeln!(
            out,
            "    {{\"family\": {}, \"name\": {}, \"spills_on_purpose\": {}, \"usage\": {{{}}}}}{}",
            json_string(row.family),
            json_string(row.name),
            warpspeed_gpu::kernel::SPILLS_ON_PURPOSE.contains(&row.name),
            usage.join(", "),
            if i + 1 < rows.len() { "," } else { "" }
        );
    }
    let _ = writeln!(out, "  ]\n}}");
    out
}

/// `text` as a JSON string literal.
fn json_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Clippy on `warpspeed-gpu` for `nvptx64-nvidia-cuda`, once per PTX target
/// (code gated on `target_feature = "sm_80"` and `"sm_90a"` differs between
/// them), and once more for sm_90a with the feature `debug-print`
/// (`gpu_print!`, the printing panic handler).
fn lint_gpu() -> Result<(), String> {
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
            .env("CARGO_ENCODED_RUSTFLAGS", format!("-Ctarget-cpu={target}"))
            .env_remove("RUSTFLAGS");
        run(cmd)?;
        let with = if print { " with debug-print" } else { "" };
        println!("{target}{with}: device code lint-clean");
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
/// without Rust needs (the PTX is embedded in the executables). Adds the
/// sm_90a PTX with line tables, `ptx/warpspeed_sm_90a.lineinfo.ptx`, for
/// the script's compute-sanitizer runs (`WARPSPEED_PTX_FILE`); only sm_90a,
/// the GPU machines' (H100, H200), to keep the bundle quick to build.
fn device() -> Result<(), String> {
    let out = root().join("target/device");
    let _ = fs::remove_dir_all(&out);
    fs::create_dir_all(out.join("bin")).map_err(|e| e.to_string())?;
    fs::create_dir_all(out.join("examples")).map_err(|e| e.to_string())?;
    let mut executables = Vec::new();
    for args in [
        &["test", "--workspace", "--release", "--no-run"][..],
        &[
            "bench",
            "--package",
            "warpspeed",
            "--bench",
            "ladder",
            "--bench",
            "multi",
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
                // Examples take their own arguments, not the test harness's:
                // they go to examples/, run without arguments.
                let folder = if line.contains("\"kind\":[\"example\"]") {
                    "examples"
                } else {
                    "bin"
                };
                executables.push((folder, target_name.to_string(), PathBuf::from(path)));
            }
        }
    }
    for (folder, name, path) in &executables {
        let dest = out.join(folder).join(name);
        fs::copy(path, &dest).map_err(|e| format!("{}: {e}", path.display()))?;
        println!("{}", dest.display());
    }
    fs::copy(root().join("xtask/device.sh"), out.join("run.sh")).map_err(|e| e.to_string())?;
    // The script's `profile` phase runs this beside it.
    let profile = root().join("xtask/profile.py");
    if profile.is_file() {
        fs::copy(&profile, out.join("profile.py"))
            .map_err(|e| format!("{}: {e}", profile.display()))?;
    }
    let lineinfo = out.join("ptx/warpspeed_sm_90a.lineinfo.ptx");
    let summary = write_lineinfo_ptx("sm_90a", Flavor::LineInfo, &lineinfo)?;
    println!(
        "sm_90a with line tables: {summary} -> {}",
        lineinfo.display()
    );
    println!("bundle ready: target/device (run `bash target/device/run.sh`)");
    archive(&out)
}

/// Packs `target/device/` into `target/device.txz`: every executable embeds
/// the same PTX and cubins (about 20 MB each), which one xz stream with a
/// dictionary larger than an executable stores once, so that the folder's
/// ~260 MB travel as ~3 MB. Skipped, with a word, where `tar` (with xz)
/// fails or is missing: one `tar` command, so that its status is the
/// archive's (a pipe would report only its last command's).
fn archive(folder: &Path) -> Result<(), String> {
    let target = folder.parent().ok_or("target/device has no parent")?;
    let archive = target.join("device.txz");
    let status = Command::new("tar")
        .env("XZ_OPT", "-T0 --lzma2=preset=6,dict=256MiB")
        .arg("cJf")
        .arg(&archive)
        .arg("-C")
        .arg(target)
        .arg("device")
        .status();
    match status {
        Ok(s) if s.success() => {
            let mib = fs::metadata(&archive).map_or(0, |m| m.len()) >> 20;
            println!(
                "archive: {} ({mib} MiB; on the GPU machine `tar xJf target/device.txz -C target`)",
                archive.display()
            );
        }
        _ => {
            let _ = fs::remove_file(&archive);
            println!("no archive: tar or xz failed or missing (carry target/device itself)");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape of rustc's PTX with line tables, shortened.
    const LINEINFO_PTX: &str = "\
//
// Generated by LLVM NVPTX Back-End
//

.version 7.8
.target sm_90, debug
.address_size 64

.visible .entry a_f32(
\t.param .u64 .ptr .align 1 a_f32_param_0
)
{
\t.loc\t1 12 0
$L__func_begin0:
\t.loc\t1 14 5
\tret;
$L__func_end0:

}
\t.file\t1 \"gpu/src/reduce.rs\"
\t.file\t2 \"gpu/src/prim/index.rs\"
\t.section\t.debug_abbrev
\t{
.b8 1
.b8 17
\t}
\t.section\t.debug_info
\t{
.b32 .debug_abbrev
.b64 $L__func_begin0
\t}
$L__sec_end0:
\t.section\t.debug_aranges
\t{
.b64 $L__sec_end0-$L__func_begin0
\t}
\t.section\t.debug_macinfo\t{\t}
";

    #[test]
    fn writes_launch_bounds_once_into_the_named_entries() {
        let bounds = warpspeed_gpu::kernel::LAUNCH_BOUNDS;
        let mut ptx = String::from(".version 8.7\n.target sm_90\n");
        for name in bounds.iter().map(|b| b.entry).chain(["other_f32"]) {
            let _ = write!(
                ptx,
                ".visible .entry {name}(\n\t.param .u32 {name}_param_0\n)\n{{\n\tret;\n}}\n"
            );
        }
        let bounded = with_launch_bounds(&ptx).unwrap();
        for b in bounds {
            let at = bounded.find(&format!(".entry {}(", b.entry)).unwrap();
            let body = &bounded[at..];
            let want = format!(
                ")\n.maxntid {}, 1, 1\n.minnctapersm {}\n{{",
                b.threads, b.blocks_per_sm
            );
            assert!(body.contains(&want), "{}", b.entry);
        }
        let other = bounded.find(".entry other_f32(").unwrap();
        assert!(!bounded[other..].contains(".maxntid"));
        assert_eq!(
            bounded.matches(".maxntid").count(),
            bounds.len(),
            "{bounded}"
        );
        assert_eq!(with_launch_bounds(&bounded).unwrap(), bounded);
        assert!(with_launch_bounds(".version 8.7\n").is_err() || bounds.is_empty());
    }

    #[test]
    fn strips_debug_sections_and_keeps_line_tables() {
        let expected = "\
//
// Generated by LLVM NVPTX Back-End
//

.version 7.8
.target sm_90
.address_size 64
\t.file\t1 \"gpu/src/reduce.rs\"
\t.file\t2 \"gpu/src/prim/index.rs\"

.visible .entry a_f32(
\t.param .u64 .ptr .align 1 a_f32_param_0
)
{
\t.loc\t1 12 0
$L__func_begin0:
\t.loc\t1 14 5
\tret;
$L__func_end0:

}
";
        let stripped = strip_debug_sections(LINEINFO_PTX).unwrap();
        assert_eq!(stripped, expected);
        // Nothing left to strip: unchanged, as is release PTX.
        assert_eq!(strip_debug_sections(&stripped).unwrap(), stripped);
    }

    #[test]
    fn strips_every_shape_of_debug_section() {
        let ptx = "\
.target sm_80, texmode_independent, debug
\t.section .debug_str { .b8 0 }
\t.section\t.debug_loc {
{ .b8 1 }
}
$L__sec_end12:
.section .debug_line
{
}
ret;
";
        assert_eq!(
            strip_debug_sections(ptx).unwrap(),
            ".target sm_80, texmode_independent\nret;\n"
        );
    }

    #[test]
    fn refuses_what_it_cannot_strip_safely() {
        for (ptx, why) in [
            (".section .debug_info\n{\n.b8 1\n", "does not end"),
            (".section .debug_info\n{\n} }\n", "closes more"),
            (".section .nv.constant0 { }\n", "not a debug section"),
            (".b64 $L__sec_end0\n", "still refers"),
            (".b32 .debug_info\n", "still refers"),
        ] {
            let error = strip_debug_sections(ptx).unwrap_err();
            assert!(error.contains(why), "{ptx:?}: {error}");
        }
    }

    #[test]
    fn finds_gpu_print_calls_outside_comments() {
        let dir = env::temp_dir().join(format!("xtask-print-{}", std::process::id()));
        fs::create_dir_all(dir.join("family")).unwrap();
        fs::write(
            dir.join("a.rs"),
            "//! `gpu_print!(\"%llu\", n)`\nfn a() {}\n",
        )
        .unwrap();
        let call =
            "fn b() {\n    // gpu_print!(\"off\");\n    crate::gpu_print!(\"%llu\\n\", 1u32);\n}\n";
        fs::write(dir.join("family/b.rs"), call).unwrap();
        fs::write(dir.join("family/notes.txt"), "gpu_print!(\"x\")").unwrap();
        let calls = gpu_print_calls(&dir).unwrap();
        fs::remove_dir_all(&dir).unwrap();
        assert_eq!(calls.len(), 1);
        assert!(calls[0].ends_with("family/b.rs:3"), "{calls:?}");
    }

    #[test]
    fn reads_ptxas_reports() {
        let report = "\
ptxas info    : 0 bytes gmem, 4100 bytes cmem[3]
ptxas info    : Compiling entry function 'a_f32' for 'sm_70'
ptxas info    : Function properties for a_f32
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 28 registers, used 1 barriers, 392 bytes cmem[0]
ptxas info    : Compile time = 10.214 ms
ptxas info    : Compiling entry function 'b_f32' for 'sm_90'
ptxas info    : Function properties for b_f32
    16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 255 registers, used 0 barriers, 4096 bytes smem, 392 bytes cmem[0], 8 bytes cmem[2]
ptxas info    : Compile time = 1.5 ms
ptxas info    : Function properties for callee
    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads
";
        let entries = parse_ptxas(report);
        let found: Vec<_> = entries
            .iter()
            .map(|(name, u)| {
                let figures = [
                    u.registers,
                    u.barriers,
                    u.shared,
                    u.stack,
                    u.spill_stores,
                    u.spill_loads,
                ];
                (name.as_str(), figures)
            })
            .collect();
        assert_eq!(
            found,
            [
                ("a_f32", [28, 1, 0, 0, 0, 0]),
                ("b_f32", [255, 0, 4096, 24, 12, 8])
            ]
        );
        assert!(!entries[0].1.spills() && entries[1].1.spills());
        assert_eq!(
            entries[1].1.stack_and_spills(),
            "24 B stack, 12 B spill stores, 8 B spill loads"
        );
    }
}
