//! NVIDIA's libraries, measured in the same run with the same timing method:
//! the functions a user would otherwise call.
//!
//! Two small programs beside this benchmark do the measuring
//! (`host/benches/peers/`): `peers.cu` (CUB `DeviceReduce`,
//! `DeviceHistogram`, `DeviceScan`, `DeviceSelect`, `DeviceRadixSort` and
//! `DeviceSegmentedSort`, cuBLAS `Sgeam`, `Sgemm` and its strided batched
//! forms, cuRAND's host API, built here with `nvcc` and linked with cuBLAS
//! and cuRAND when nvcc is found; without cuRAND it is built again without
//! its cases) and `torch_peers.py` (PyTorch, for what no C library offers,
//! such as an 8-bit transpose, and for torch's own `sort`, `topk` and
//! `argmax`). Both take `<reps> <case>...` (and the least warm-up of each
//! case in milliseconds from `WARPSPEED_WARMUP_MS`, 200 without it) and
//! print one JSON object per case. Whatever cannot run is reported as
//! "not available" with the reason, never estimated.
//! They are measurement tooling and never part of the library.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use warpspeed_report::records::field;

const PEERS_CU: &str = include_str!("../peers/peers.cu");
const TORCH_PEERS: &str = include_str!("../peers/torch_peers.py");

/// One peer measurement.
#[derive(Clone, Debug)]
pub struct PeerResult {
    /// The library function, e.g. `CUB DeviceReduce::Sum`.
    pub name: String,
    /// Median milliseconds, or why the peer is not available.
    pub outcome: Result<f64, String>,
}

/// The peer programs of this run.
pub struct Peers {
    reps: usize,
    /// The least warm-up of each case, passed to the programs in
    /// `WARPSPEED_WARMUP_MS` (the harness's `Bench::warmup`).
    warmup: Duration,
    /// The built CUDA C++ program, or why there is none.
    cuda: Result<PathBuf, String>,
    /// Why that program was built without its cuRAND cases, if it was.
    no_curand: Option<String>,
    /// Why it was built without its CUTLASS case although CUTLASS was
    /// found, if it was.
    no_cutlass: Option<String>,
    /// The PyTorch script and its interpreter, or why there is none.
    torch: Result<(PathBuf, PathBuf), String>,
}

/// The first executable `name` on the `PATH`.
fn on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    })
}

impl Peers {
    /// Peers that are never available (`--no-peers`).
    pub fn none(reason: &str) -> Peers {
        Peers {
            reps: 0,
            warmup: Duration::ZERO,
            cuda: Err(reason.into()),
            no_curand: None,
            no_cutlass: None,
            torch: Err(reason.into()),
        }
    }

    /// Builds the peer programs in `dir` for a device of compute capability
    /// `cc`. Takes a minute where nvcc compiles CUB (two where cuRAND is
    /// missing: the second build leaves its cases out).
    pub fn prepare(dir: &Path, reps: usize, warmup: Duration, (major, minor): (u32, u32)) -> Peers {
        let mut no_curand = None;
        let mut no_cutlass = None;
        let cuda = (|| {
            let nvcc = std::env::var_os("NVCC")
                .map(PathBuf::from)
                .or_else(|| on_path("nvcc"))
                .or_else(|| Some(PathBuf::from("/usr/local/cuda/bin/nvcc")).filter(|p| p.is_file()))
                .ok_or("nvcc not found (set NVCC or put it on the PATH)")?;
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            let source = dir.join("peers.cu");
            let binary = dir.join("peers");
            std::fs::write(&source, PEERS_CU).map_err(|e| e.to_string())?;
            eprintln!("building the CUDA C++ peers with {}", nvcc.display());
            let build = |extra: &[&str]| {
                let out = Command::new(&nvcc)
                    .args(["-O3", "-std=c++17"])
                    .arg(format!("-arch=sm_{major}{minor}"))
                    .arg("-o")
                    .arg(&binary)
                    .arg(&source)
                    .arg("-lcublas")
                    .arg("-lcublasLt")
                    .args(extra)
                    .output()
                    .map_err(|e| format!("cannot run {}: {e}", nvcc.display()))?;
                if out.status.success() {
                    return Ok(());
                }
                let log = String::from_utf8_lossy(&out.stderr);
                let tail: Vec<&str> = log.lines().rev().take(5).collect();
                Err(format!("nvcc failed: {}", tail.join(" / ")))
            };
            // CUTLASS's headers where WARPSPEED_CUTLASS names them (the
            // nvidia-cutlass wheel's `cutlass_library/source`): its 3xTF32
            // case; a build that fails with them goes on without.
            let cutlass = std::env::var_os("WARPSPEED_CUTLASS")
                .map(PathBuf::from)
                .filter(|dir| dir.join("include/cutlass/cutlass.h").is_file())
                .map(|dir| format!("-I{}", dir.join("include").display()));
            let mut with_cutlass = |extra: &[&str]| match &cutlass {
                Some(include) => {
                    let mut args = vec!["-DPEERS_CUTLASS", include.as_str()];
                    args.extend_from_slice(extra);
                    build(&args).or_else(|why| {
                        eprintln!(
                            "CUDA C++ peers with CUTLASS: {why}; building them without CUTLASS"
                        );
                        no_cutlass = Some(format!("CUTLASS did not build: {why}"));
                        build(extra)
                    })
                }
                None => build(extra),
            };
            if let Err(why) = with_cutlass(&["-lcurand"]) {
                eprintln!("CUDA C++ peers with cuRAND: {why}; building them without cuRAND");
                with_cutlass(&["-DPEERS_NO_CURAND"])?;
                no_curand = Some(format!("cuRAND not available: {why}"));
            }
            Ok(binary)
        })();
        let torch = (|| {
            let python = on_path("python3").ok_or("python3 not found")?;
            std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
            let script = dir.join("torch_peers.py");
            std::fs::write(&script, TORCH_PEERS).map_err(|e| e.to_string())?;
            Ok((python, script))
        })();
        if let Err(why) = &cuda {
            eprintln!("CUDA C++ peers not available: {why}");
        }
        Peers {
            reps,
            warmup,
            cuda,
            no_curand,
            no_cutlass,
            torch,
        }
    }

    /// Measures `cases` (`reduce:sum:f32:16777216`, `geam:f32:8192:8192`,
    /// `histogram:uniform:268435456`, `sgemm:4096:4096:4096`,
    /// `sgemm_tf32:4096:4096:4096`, `sgemm_batched:1024:256:256:256`,
    /// `sgemm_batched_tf32:1024:256:256:256`, `transpose:u8:8192:8192`,
    /// `conv1d:67108864:7`, `curand:philox:normal:268435456`, ...); one
    /// result per case, in order.
    pub fn measure(&self, cases: &[String]) -> Vec<PeerResult> {
        let (torch, cuda): (Vec<&String>, Vec<&String>) = cases.iter().partition(|c| by_torch(c));
        let mut results = Vec::new();
        let cuda_results = match &self.cuda {
            Ok(binary) => {
                let mut results = self.run(Command::new(binary), &cuda);
                // A program built without cuRAND says only that: give why.
                for (prefix, why) in [
                    ("curand:", &self.no_curand),
                    ("sgemm_3xtf32_cutlass:", &self.no_cutlass),
                ] {
                    let Some(why) = why else { continue };
                    for (case, result) in cuda.iter().zip(&mut results) {
                        if case.starts_with(prefix) {
                            result.outcome = Err(why.clone());
                        }
                    }
                }
                results
            }
            Err(why) => unavailable(&cuda, why),
        };
        let torch_results = match &self.torch {
            Ok((python, script)) => {
                let mut cmd = Command::new(python);
                cmd.arg(script).env("PYTHONUNBUFFERED", "1");
                self.run(cmd, &torch)
            }
            Err(why) => unavailable(&torch, why),
        };
        let (mut c, mut t) = (cuda_results.into_iter(), torch_results.into_iter());
        for case in cases {
            let next = if by_torch(case) { t.next() } else { c.next() };
            results.push(next.unwrap_or_else(|| PeerResult {
                name: expected_name(case),
                outcome: Err("no result".into()),
            }));
        }
        results
    }

    fn run(&self, mut cmd: Command, cases: &[&String]) -> Vec<PeerResult> {
        if cases.is_empty() {
            return Vec::new();
        }
        let out = match cmd
            .env("WARPSPEED_WARMUP_MS", self.warmup.as_millis().to_string())
            .arg(self.reps.to_string())
            .args(cases)
            .output()
        {
            Ok(out) => out,
            Err(e) => return unavailable(cases, &format!("cannot run the peer program: {e}")),
        };
        let stdout = String::from_utf8_lossy(&out.stdout);
        let lines: Vec<&str> = stdout.lines().filter(|l| l.starts_with('{')).collect();
        cases
            .iter()
            .map(|case| {
                let line = lines
                    .iter()
                    .find(|l| field(l, "case").as_deref() == Some(case.as_str()));
                let name = line
                    .and_then(|l| field(l, "peer"))
                    .unwrap_or_else(|| expected_name(case));
                let outcome = match line {
                    None => {
                        let log = String::from_utf8_lossy(&out.stderr);
                        Err(format!(
                            "the peer program gave no result ({}): {}",
                            out.status,
                            log.lines().last().unwrap_or("")
                        ))
                    }
                    Some(l) => match (field(l, "error"), field(l, "ok").as_deref()) {
                        (Some(error), _) => Err(error),
                        (None, Some("false")) => Err("its result was wrong".into()),
                        (None, _) => field(l, "ms")
                            .and_then(|ms| ms.parse().ok())
                            .ok_or_else(|| "no time in its output".to_string()),
                    },
                };
                PeerResult { name, outcome }
            })
            .collect()
    }
}

/// Whether the PyTorch script measures `case` (what no C library offers,
/// and cuDNN, which torch calls for us).
fn by_torch(case: &str) -> bool {
    [
        "transpose:",
        "conv1d:",
        "cumsum:",
        "cumsum_rows:",
        "torch_sort:",
        "sort_rows:",
        "topk:",
        "argmax:",
    ]
    .iter()
    .any(|prefix| case.starts_with(prefix))
}

fn unavailable(cases: &[&String], why: &str) -> Vec<PeerResult> {
    cases
        .iter()
        .map(|case| PeerResult {
            name: expected_name(case),
            outcome: Err(why.to_string()),
        })
        .collect()
}

/// The peer a case names, for reports where the program gave no name.
fn expected_name(case: &str) -> String {
    let parts: Vec<&str> = case.split(':').collect();
    match parts.as_slice() {
        ["reduce", op, ..] => {
            let op = match *op {
                "min" => "Min",
                "max" => "Max",
                _ => "Sum",
            };
            format!("CUB DeviceReduce::{op}")
        }
        ["geam", ..] => "cuBLAS Sgeam".into(),
        ["scan", "inclusive", "sum", ..] => "CUB DeviceScan::InclusiveSum".into(),
        ["scan", "exclusive", "sum", ..] => "CUB DeviceScan::ExclusiveSum".into(),
        ["scan", kind, op, ..] => {
            let kind = if *kind == "exclusive" {
                "Exclusive"
            } else {
                "Inclusive"
            };
            format!("CUB DeviceScan::{kind}Scan ({op})")
        }
        ["scan_rows", ..] => "CUB DeviceScan::InclusiveSumByKey".into(),
        ["select_flagged", ..] => "CUB DeviceSelect::Flagged".into(),
        ["select_if", ..] => "CUB DeviceSelect::If".into(),
        ["sort_keys", _, "desc", ..] => "CUB DeviceRadixSort::SortKeysDescending".into(),
        ["sort_keys", ..] => "CUB DeviceRadixSort::SortKeys".into(),
        ["sort_pairs", _, "desc", ..] => "CUB DeviceRadixSort::SortPairsDescending".into(),
        ["sort_pairs", ..] => "CUB DeviceRadixSort::SortPairs".into(),
        ["segmented_sort", ..] => "CUB DeviceSegmentedSort::SortPairsDescending".into(),
        ["torch_sort", ..] => "torch.sort".into(),
        ["sort_rows", ..] => "torch.sort(dim=1)".into(),
        ["topk", ..] => "torch.topk".into(),
        ["argmax", ..] => "torch.argmax(dim=1)".into(),
        ["cumsum", ..] => "torch.cumsum".into(),
        ["cumsum_rows", ..] => "torch.cumsum(dim=1)".into(),
        ["transpose", ..] => "torch .t().contiguous()".into(),
        ["histogram", ..] => "CUB DeviceHistogram::HistogramEven".into(),
        ["sgemm", ..] => "cuBLAS Sgemm".into(),
        ["sgemm_tf32", ..] => "cuBLAS TF32 (best of Sgemm, Lt)".into(),
        ["sgemm_3xtf32_cutlass", ..] => "CUTLASS 3xTF32".into(),
        ["sgemm_batched", ..] => "cuBLAS SgemmStridedBatched".into(),
        ["sgemm_batched_tf32", ..] => "cuBLAS TF32 strided batched (best of Sgemm, GemmEx)".into(),
        ["conv1d", ..] => "cuDNN (torch conv1d)".into(),
        ["curand", generator, distribution, ..] => {
            let generator = match *generator {
                "philox" => "Philox4_32_10",
                "xorwow" => "XORWOW",
                "mrg32k3a" => "MRG32k3a",
                other => other,
            };
            let distribution = match *distribution {
                "log_normal" => "log-normal",
                "poisson" => "Poisson",
                other => other,
            };
            format!("cuRAND {generator} {distribution}")
        }
        _ => case.to_string(),
    }
}
