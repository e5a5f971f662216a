//! `cargo xtask device`: the bundle of release executables that runs on a
//! GPU machine without Rust, and its archive.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::lineinfo::write_lineinfo_ptx;
use crate::ptx::Flavor;
use crate::{cargo, root};

/// Builds every test and bench executable in release mode and copies them,
/// with `xtask/device.sh`, into `target/device/`: the folder a GPU machine
/// without Rust needs (the PTX is embedded in the executables). Adds the
/// sm_90a PTX with line tables, `ptx/warpspeed_sm_90a.lineinfo.ptx`, for
/// the script's compute-sanitizer runs (`WARPSPEED_PTX_FILE`); only sm_90a,
/// the GPU machines' (H100, H200), to keep the bundle quick to build.
///
/// First it checks that the committed PTX and cubins are those of the
/// device crate as it stands (`build-ptx --check`): the executables embed
/// them, so a bundle built after an edit of `gpu/` without `cargo xtask
/// build-ptx` would run the kernels before the edit against the host
/// after it.
pub(crate) fn device() -> Result<(), String> {
    crate::ptx::build_ptx(true)?;
    let out = root().join("target/device");
    let _ = fs::remove_dir_all(&out);
    fs::create_dir_all(out.join("bin")).map_err(|e| e.to_string())?;
    fs::create_dir_all(out.join("examples")).map_err(|e| e.to_string())?;
    let mut executables = Vec::new();
    for args in [
        // With the cudarc interop: its trials and example run there too.
        &[
            "test",
            "--workspace",
            "--release",
            "--features",
            "warpspeed/cudarc,warpspeed-tests/cudarc",
            "--no-run",
        ][..],
        &[
            "bench",
            "--package",
            "warpspeed",
            "--bench",
            "ladder",
            "--bench",
            "multi",
            "--bench",
            "interop",
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
            // cargo's messages, one JSON object a line; the artifacts that
            // built an executable name it.
            let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            let Some(path) = message.get("executable").and_then(|e| e.as_str()) else {
                continue;
            };
            let target = &message["target"];
            let target_name = target["name"].as_str().unwrap_or("test");
            // Examples take their own arguments, not the test harness's:
            // they go to examples/, run without arguments.
            let example = target["kind"]
                .as_array()
                .is_some_and(|kinds| kinds.iter().any(|k| k == "example"));
            let folder = if example { "examples" } else { "bin" };
            executables.push((folder, target_name.to_string(), PathBuf::from(path)));
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
