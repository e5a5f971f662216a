//! ptxas: where it is, which release it is, running it, and reading its
//! `-v` report.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};

use crate::root;

/// What the ptxas that made the committed cubins prints for `--version`
/// (`xtask/setup.sh` installs it); another release makes other cubins.
const PTXAS_RELEASE: &str = "Cuda compilation tools, release 12.9, V12.9.86";

/// The ptxas to run: `$WARPSPEED_PTXAS`, else the one `xtask/setup.sh`
/// installs in `xtask/tools/`.
pub(crate) fn ptxas_path() -> Result<PathBuf, String> {
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
pub(crate) fn ptxas_release() -> Result<String, String> {
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
pub(crate) fn ptxas_mismatch() -> Result<Option<String>, String> {
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
pub(crate) struct Ptxas {
    pub(crate) target: &'static str,
    pub(crate) cubin: PathBuf,
    report: PathBuf,
    child: Child,
}

impl Ptxas {
    pub(crate) fn start(
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
    pub(crate) fn finish(mut self) -> Result<String, String> {
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
pub(crate) struct Usage {
    /// Registers per thread.
    pub(crate) registers: u32,
    /// Named barriers.
    pub(crate) barriers: u32,
    /// Static shared memory in bytes ("N bytes smem"); the dynamic part is
    /// sized at launch and is not in it.
    pub(crate) shared: u32,
    /// Stack frame in bytes (local memory).
    pub(crate) stack: u32,
    /// Bytes of registers spilled to local memory, and loaded back.
    pub(crate) spill_stores: u32,
    pub(crate) spill_loads: u32,
}

impl Usage {
    pub(crate) fn spills(&self) -> bool {
        self.spill_stores + self.spill_loads > 0
    }

    /// "16 B stack, 8 B spill stores, 8 B spill loads": the parts that are
    /// not zero; empty when all are.
    pub(crate) fn stack_and_spills(&self) -> String {
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
pub(crate) fn parse_ptxas(report: &str) -> Vec<(String, Usage)> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
