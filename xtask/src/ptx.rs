//! Building the device crate to the PTX and cubins that ship in `host/ptx/`
//! (`cargo xtask build-ptx [--check]`), and checking what it built.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use crate::ptxas::{Ptxas, ptxas_mismatch, ptxas_path};
use crate::{cargo, root, run};

/// The PTX targets shipped in `host/ptx/` (one list, the device crate's).
pub(crate) const PTX_TARGETS: [&str; 4] = warpspeed_gpu::ptx::TARGETS;

/// The targets also shipped as cubins in `host/ptx/` (the device crate's list).
const CUBIN_TARGETS: [&str; 2] = warpspeed_gpu::ptx::CUBIN_TARGETS;

/// The committed PTX file for `target`.
pub(crate) fn ptx_path(target: &str) -> PathBuf {
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

/// How the device crate is built.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flavor {
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
    pub(crate) fn target_dir(self, target: &str) -> PathBuf {
        match self {
            Flavor::Release => root().join("target/ptx").join(target),
            Flavor::LineInfo => root().join("target/ptx-lineinfo").join(target),
            Flavor::Print => root()
                .join("target/ptx-lineinfo")
                .join(format!("{target}-print")),
        }
    }
}

/// The rustc flags of the device crate for PTX `target`, separated by
/// 0x1f (CARGO_ENCODED_RUSTFLAGS): the target, and for sm_90a PTX ISA 8.3,
/// the PTX every sm_90a kernel was measured with. No instruction needs
/// more than the back end's default 8.0 since the tensor maps are read
/// as parameters (no proxy fences), but without the flag the back end
/// also writes other PTX (`trap; exit;` for `trap;`, no `used_bytes_mask`
/// pragmas), so it stays until that PTX is measured.
pub(crate) fn device_rustflags(target: &str) -> String {
    if target == "sm_90a" {
        format!("-Ctarget-cpu={target}\x1f-Ctarget-feature=+ptx83")
    } else {
        format!("-Ctarget-cpu={target}")
    }
}

/// Builds the device crate for `target` as `flavor` says; returns the path
/// of the PTX that rustc wrote (in [`Flavor::target_dir`]), unchecked.
pub(crate) fn build_device_crate(target: &str, flavor: Flavor) -> Result<PathBuf, String> {
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
    let mut rustflags = device_rustflags(target);
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
pub(crate) fn check_built_ptx(target: &str, ptx: &str, flavor: Flavor) -> Result<usize, String> {
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
///
/// [`kernels`]: crate::kernels::kernels
pub(crate) fn build_ptx(check: bool) -> Result<Vec<(&'static str, String)>, String> {
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
        let ptx = with_param_alignment(&with_launch_bounds(&ptx)?)?;
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

/// `ptx` with the performance directives of
/// [`LAUNCH_BOUNDS`](warpspeed_gpu::LAUNCH_BOUNDS) (`.maxntid`,
/// `.minnctapersm`) between each named entry's parameter list and its
/// body, where CUDA C++'s `__launch_bounds__` puts them. An entry that has
/// them already is left as it is, so a second pass changes nothing. Fails
/// if a named entry is not in the PTX.
pub(crate) fn with_launch_bounds(ptx: &str) -> Result<String, String> {
    let bounds = warpspeed_gpu::LAUNCH_BOUNDS;
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
            "LAUNCH_BOUNDS (a family's, beside its kernels table) names entries the PTX lacks: {}",
            missing.join(", ")
        ))
    }
}

/// `ptx` with each parameter declared on the alignment its kernel's table
/// asks ([`Kernel::aligns`](warpspeed_gpu::Kernel::aligns)): the 64 bytes
/// of a tensor map, which rustc declares on 16, as CUDA C++ declares a
/// `__grid_constant__ CUtensorMap` (its kernels read the map where the
/// launch puts it). A second pass changes nothing. Fails on a parameter
/// to raise that states no `.align`.
pub(crate) fn with_param_alignment(ptx: &str) -> Result<String, String> {
    let raised: Vec<&warpspeed_gpu::Kernel> = warpspeed_gpu::FAMILIES
        .iter()
        .flat_map(|(_, kernels)| kernels.iter())
        .filter(|k| k.aligns.iter().any(|&a| a > 0))
        .collect();
    let mut out = String::with_capacity(ptx.len());
    // The entry whose parameter list this is, and its next parameter.
    let mut current = None;
    for line in ptx.lines() {
        if let Some(name) = line
            .strip_prefix(".visible .entry ")
            .and_then(|rest| rest.split('(').next())
        {
            current = raised.iter().find(|k| k.name == name).map(|k| (*k, 0));
        } else if let Some((kernel, index)) = current.as_mut() {
            let code = line.trim_start();
            if code.starts_with(')') {
                current = None;
            } else if code.starts_with(".param") {
                let wanted = kernel.aligns.get(*index).copied().unwrap_or(0);
                *index += 1;
                if wanted > 0 {
                    let declared = warpspeed_gpu::ptx::param_bytes(code)
                        .map(|(_, align)| align)
                        .filter(|&align| align > 0)
                        .ok_or_else(|| {
                            format!("{}: no `.align` to raise in `{code}`", kernel.name)
                        })?;
                    if usize::from(declared) < wanted {
                        let raised = line.replacen(
                            &format!(".align {declared} "),
                            &format!(".align {wanted} "),
                            1,
                        );
                        out.push_str(&raised);
                        out.push('\n');
                        continue;
                    }
                }
            }
        }
        out.push_str(line);
        out.push('\n');
    }
    if !ptx.ends_with('\n') {
        out.pop();
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::env;

    #[test]
    fn writes_launch_bounds_once_into_the_named_entries() {
        let bounds = warpspeed_gpu::LAUNCH_BOUNDS;
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
    fn raises_tensor_map_parameters_to_64_bytes() {
        let kernel = warpspeed_gpu::FAMILIES
            .iter()
            .flat_map(|(_, kernels)| kernels.iter())
            .find(|k| k.aligns.contains(&64))
            .expect("a kernel takes a tensor map");
        let mut ptx = format!(".visible .entry {}(\n", kernel.name);
        for (i, &bytes) in kernel.params.iter().enumerate() {
            let comma = if i + 1 < kernel.params.len() { "," } else { "" };
            let _ = if bytes == 128 {
                writeln!(
                    ptx,
                    "\t.param .align 16 .b8 {}_param_{i}[128]{comma}",
                    kernel.name
                )
            } else {
                writeln!(ptx, "\t.param .u32 {}_param_{i}{comma}", kernel.name)
            };
        }
        ptx.push_str(")\n{\n\tret;\n}\n");
        let raised = with_param_alignment(&ptx).unwrap();
        let entry = warpspeed_gpu::ptx::entries(&raised).next().unwrap();
        for (i, (&declared, &wanted)) in entry.aligns().iter().zip(kernel.aligns).enumerate() {
            assert!(
                usize::from(declared) >= wanted,
                "parameter {i}: {declared} < {wanted}"
            );
        }
        assert!(raised.contains(".param .align 64 .b8"));
        assert_eq!(with_param_alignment(&raised).unwrap(), raised);
        // Another entry's parameters stay as they are.
        let other = ptx.replace(kernel.name, "other_f32");
        assert_eq!(with_param_alignment(&other).unwrap(), other);
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
}
