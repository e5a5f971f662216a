//! The multi-GPU benchmark: a sharded sum and histogram of one data set
//! spread over 1, 2, ... GPUs of this machine (scaling against one GPU),
//! and the bus bandwidth of the library's NCCL all-reduce against NCCL's
//! own program (`host/benches/peers/nccl_allreduce.cu`) in the same run.
//!
//! ```text
//! multi [--bytes LOG2] [--reps N] [--out DIR]
//! ```
//!
//! `--bytes 34` (the default) is 2^34 bytes in all: 2^32 `f32` for the sum
//! and 2^34 `u8` for the histogram, split evenly over the GPUs. Each figure
//! is the median of `--reps` host wall-clock times around the whole
//! operation (every GPU's kernel, NCCL's combining, the wait), the same
//! method as the NCCL program's. Writes `multi.json` and `multi.md` to
//! `--out` (default `target/bench`). Keep `NCCL_NVLS_ENABLE=0` on shared
//! machines.

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;
use warpspeed::nccl::Group;
use warpspeed::reduce::Op;
use warpspeed::rng::Generator;
use warpspeed::{Buffer, Context, Error};

const NCCL_PEER: &str = include_str!("peers/nccl_allreduce.cu");

/// All-reduce message sizes in bytes.
const ALL_REDUCE_BYTES: [usize; 6] = [1 << 20, 1 << 22, 1 << 24, 1 << 26, 1 << 28, 1 << 30];

struct Options {
    log2_bytes: u32,
    reps: usize,
    out: PathBuf,
}

fn options() -> Result<Options, String> {
    let mut o = Options {
        log2_bytes: 34,
        reps: 10,
        out: PathBuf::from("target/bench"),
    };
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--bytes" => o.log2_bytes = value()?.parse().map_err(|e| format!("--bytes: {e}"))?,
            "--reps" => o.reps = value()?.parse().map_err(|e| format!("--reps: {e}"))?,
            "--out" => o.out = PathBuf::from(value()?),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if !(20..=36).contains(&o.log2_bytes) || o.reps == 0 {
        return Err("--bytes takes 20..=36, --reps at least 1".into());
    }
    Ok(o)
}

fn median(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// The median of `reps` wall-clock times of `run`, after two warm-ups, in ms.
fn time(reps: usize, mut run: impl FnMut() -> warpspeed::Result<()>) -> Result<f64, String> {
    for _ in 0..2 {
        run().map_err(|e| e.to_string())?;
    }
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps {
        let start = Instant::now();
        run().map_err(|e| e.to_string())?;
        times.push(start.elapsed().as_secs_f64() * 1e3);
    }
    Ok(median(times))
}

/// One row of the scaling table.
struct Scaling {
    gpus: usize,
    sum_ms: f64,
    histogram_ms: f64,
}

/// One all-reduce measurement: ours and NCCL's program's, in µs.
struct AllReduce {
    gpus: usize,
    bytes: usize,
    ours_us: f64,
    nccl_us: Result<f64, String>,
}

fn busbw(bytes: usize, us: f64, gpus: usize) -> f64 {
    bytes as f64 / (us * 1e-6) / 1e9 * 2.0 * (gpus - 1) as f64 / gpus as f64
}

/// Fills `bytes` with random words of `g` on `ctx`'s queue and waits for
/// it: the buffer's bytes seen as `u32` words.
fn fill_words(ctx: &Context, g: &mut Generator, bytes: &mut Buffer<u8>) -> warpspeed::Result<()> {
    let mut words = bytes.slice_mut(..)?.cast_mut::<u32>()?;
    ctx.fill_u32_into(g, &mut words)?.wait()
}

/// One NCCL group over GPUs `0..gpus`.
fn group_of(gpus: usize) -> Result<Group, String> {
    let contexts = (0..gpus as u32)
        .map(Context::new)
        .collect::<warpspeed::Result<Vec<_>>>()
        .map_err(|e| e.to_string())?;
    Group::new(contexts).map_err(|e| e.to_string())
}

fn scaling(o: &Options, gpus: usize) -> Result<Scaling, String> {
    let e = |e: Error| e.to_string();
    let group = group_of(gpus)?;
    let total = 1usize << o.log2_bytes;
    let (floats, bytes) = (total / 4 / gpus, total / gpus);
    let mut f32_shards = Vec::new();
    let mut u8_shards = Vec::new();
    for (d, ctx) in group.contexts().iter().enumerate() {
        let mut g = Generator::new(d as u64);
        let mut x = ctx.zeros::<f32>(floats).map_err(e)?;
        let mut b = ctx.zeros::<u8>(bytes).map_err(e)?;
        ctx.fill_uniform_into(&mut g, &mut x)
            .map_err(e)?
            .wait()
            .map_err(e)?;
        fill_words(ctx, &mut g, &mut b).map_err(e)?;
        f32_shards.push(x);
        u8_shards.push(b);
    }
    let mut counts = Vec::new();
    for ctx in group.contexts() {
        counts.push(ctx.zeros::<u32>(256).map_err(e)?);
    }
    let sum_ms = time(o.reps, || group.sum(&f32_shards).map(|_| ()))?;
    let histogram_ms = time(o.reps, || {
        group.histogram_into(&u8_shards, &mut counts)?.wait()
    })?;
    // The counters add up to every byte of every shard.
    let host = counts[0].to_vec().map_err(e)?;
    let counted: u64 = host.iter().map(|&c| c as u64).sum();
    if counted != total as u64 {
        return Err(format!(
            "{gpus} GPUs: the histogram counted {counted} of {total} bytes"
        ));
    }
    Ok(Scaling {
        gpus,
        sum_ms,
        histogram_ms,
    })
}

/// Our all-reduce over `gpus` GPUs for every size, µs.
fn all_reduce(o: &Options, gpus: usize) -> Result<Vec<(usize, f64)>, String> {
    let e = |e: Error| e.to_string();
    let group = group_of(gpus)?;
    let largest = *ALL_REDUCE_BYTES.iter().max().unwrap();
    let mut buffers = Vec::new();
    for ctx in group.contexts() {
        buffers.push(ctx.zeros::<f32>(largest / 4).map_err(e)?);
    }
    let mut rows = Vec::new();
    for bytes in ALL_REDUCE_BYTES {
        let mut views = buffers
            .iter_mut()
            .map(|b| b.slice_mut(..bytes / 4))
            .collect::<warpspeed::Result<Vec<_>>>()
            .map_err(e)?;
        let ms = time(o.reps.max(50), || {
            group.all_reduce_into(Op::Sum, &mut views)?.wait()
        })?;
        rows.push((bytes, ms * 1e3));
    }
    Ok(rows)
}

/// NCCL's own program over `gpus` GPUs: µs per size, or why not.
fn nccl_peer(o: &Options, gpus: usize, dir: &std::path::Path) -> Result<Vec<(usize, f64)>, String> {
    let nvcc = std::env::var_os("NVCC")
        .map(PathBuf::from)
        .or_else(|| Some(PathBuf::from("nvcc")))
        .unwrap();
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let source = dir.join("nccl_allreduce.cu");
    let binary = dir.join("nccl_allreduce");
    if !binary.is_file() {
        std::fs::write(&source, NCCL_PEER).map_err(|e| e.to_string())?;
        let out = Command::new(&nvcc)
            .args(["-O3", "-std=c++17", "-o"])
            .arg(&binary)
            .arg(&source)
            .arg("-ldl")
            .output()
            .map_err(|e| format!("cannot run nvcc: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "nvcc failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    let out = Command::new(&binary)
        .arg(gpus.to_string())
        .arg(o.reps.max(50).to_string())
        .args(ALL_REDUCE_BYTES.iter().map(|b| b.to_string()))
        .output()
        .map_err(|e| format!("cannot run the NCCL program: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "the NCCL program failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    // One JSON object a line.
    let field = |line: &str, name: &str| -> Option<f64> {
        let object: serde_json::Value = serde_json::from_str(line.trim()).ok()?;
        object.get(name)?.as_f64()
    };
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| Some((field(l, "bytes")? as usize, field(l, "median_us")?)))
        .collect())
}

fn main() {
    if let Err(message) = run() {
        eprintln!("multi: {message}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let o = options()?;
    let devices = Context::devices().map_err(|e| e.to_string())?;
    let name = devices[0].name.clone();
    let counts: Vec<usize> = [1, 2, 4, 8]
        .into_iter()
        .filter(|&g| g <= devices.len())
        .collect();
    eprintln!(
        "{} × {name}; NCCL {:?}; 2^{} bytes sharded",
        devices.len(),
        warpspeed::nccl::version().map_err(|e| e.to_string())?,
        o.log2_bytes
    );
    let mut rows = Vec::new();
    for &gpus in &counts {
        let row = scaling(&o, gpus)?;
        eprintln!(
            "  {gpus} GPU(s): sum {:.3} ms, histogram {:.3} ms",
            row.sum_ms, row.histogram_ms
        );
        rows.push(row);
    }
    let mut reduces = Vec::new();
    for &gpus in counts.iter().filter(|&&g| g > 1) {
        // NCCL's program and ours take turns, twice each, and each side's
        // faster figure per size is compared: differences between runs of a
        // few per cent (clocks, the host) favour neither.
        let dir = o.out.join("peers");
        let before = nccl_peer(&o, gpus, &dir);
        let first = all_reduce(&o, gpus)?;
        let after = nccl_peer(&o, gpus, &dir);
        let second = all_reduce(&o, gpus)?;
        let ours: Vec<(usize, f64)> = first
            .iter()
            .zip(&second)
            .map(|(&(bytes, a), &(_, b))| (bytes, a.min(b)))
            .collect();
        if let Err(why) = &before {
            eprintln!("  NCCL's program not available: {why}");
        }
        let peer_us = |bytes: usize| -> Result<f64, String> {
            let mut best: Option<f64> = None;
            for run in [&before, &after] {
                let list = run.as_ref().map_err(Clone::clone)?;
                let us = list
                    .iter()
                    .find(|(b, _)| *b == bytes)
                    .map(|&(_, us)| us)
                    .ok_or("no figure for this size")?;
                best = Some(best.map_or(us, |b: f64| b.min(us)));
            }
            best.ok_or_else(|| "no figure".to_string())
        };
        for (bytes, ours_us) in ours {
            let nccl_us = peer_us(bytes);
            eprintln!("  all-reduce {gpus} GPUs {bytes} B: {ours_us:.1} µs");
            reduces.push(AllReduce {
                gpus,
                bytes,
                ours_us,
                nccl_us,
            });
        }
    }
    let (json, markdown) = report(&o, &name, devices.len(), &rows, &reduces);
    print!("{markdown}");
    std::fs::create_dir_all(&o.out).map_err(|e| e.to_string())?;
    std::fs::write(o.out.join("multi.json"), json).map_err(|e| e.to_string())?;
    std::fs::write(o.out.join("multi.md"), markdown).map_err(|e| e.to_string())?;
    Ok(())
}

/// `multi.json` (fields: device, gpus, total_bytes, scaling[{gpus, sum_ms,
/// sum_gbs, sum_efficiency, histogram_ms, histogram_gbs,
/// histogram_efficiency}], all_reduce[{gpus, bytes, ours_us, ours_busbw_gbs,
/// nccl_us, nccl_busbw_gbs, ratio}]; efficiency = speed-up over one GPU ÷
/// GPUs; ratio = our bus bandwidth ÷ NCCL's) and `multi.md`.
fn report(
    o: &Options,
    name: &str,
    available: usize,
    rows: &[Scaling],
    reduces: &[AllReduce],
) -> (String, String) {
    let total = (1u64 << o.log2_bytes) as f64;
    let gbs = |ms: f64| total / (ms * 1e-3) / 1e9;
    let (one_sum, one_hist) = (rows[0].sum_ms, rows[0].histogram_ms);
    let eff = |one: f64, ms: f64, g: usize| one / ms / g as f64;
    let mut md = format!(
        "## Several GPUs: {available} × {name}\n\n\
         2^{} bytes sharded evenly (the sum over `f32`, the histogram over `u8`); \
         host wall clock around each whole operation, median of {} runs; \
         efficiency = speed-up over one GPU ÷ GPUs.\n\n\
         | GPUs | sum ms | sum GB/s | efficiency | histogram ms | histogram GB/s | efficiency |\n\
         |---:|---:|---:|---:|---:|---:|---:|\n",
        o.log2_bytes, o.reps
    );
    let mut scaling_json = Vec::new();
    for r in rows {
        let (se, he) = (
            eff(one_sum, r.sum_ms, r.gpus),
            eff(one_hist, r.histogram_ms, r.gpus),
        );
        md += &format!(
            "| {} | {:.3} | {:.0} | {:.2} | {:.3} | {:.0} | {:.2} |\n",
            r.gpus,
            r.sum_ms,
            gbs(r.sum_ms),
            se,
            r.histogram_ms,
            gbs(r.histogram_ms),
            he
        );
        scaling_json.push(format!(
            "{{\"gpus\":{},\"sum_ms\":{:.4},\"sum_gbs\":{:.1},\"sum_efficiency\":{:.4},\
             \"histogram_ms\":{:.4},\"histogram_gbs\":{:.1},\"histogram_efficiency\":{:.4}}}",
            r.gpus,
            r.sum_ms,
            gbs(r.sum_ms),
            se,
            r.histogram_ms,
            gbs(r.histogram_ms),
            he
        ));
    }
    let mut reduce_json = Vec::new();
    if !reduces.is_empty() {
        md += "\nAll-reduce (in-place `f32` sum), bus bandwidth as nccl-tests defines it \
               (algorithm bandwidth × 2(G − 1)/G), median of 50, ours beside NCCL's own program in \
               the same run (the two take turns, twice each; each side's faster figure):\n\n\
               | GPUs | bytes | ours µs | ours GB/s | NCCL µs | NCCL GB/s | × NCCL |\n\
               |---:|---:|---:|---:|---:|---:|---:|\n";
    }
    for r in reduces {
        let ours = busbw(r.bytes, r.ours_us, r.gpus);
        let (nccl_cells, nccl_json) = match &r.nccl_us {
            Ok(us) => {
                let theirs = busbw(r.bytes, *us, r.gpus);
                (
                    format!("{us:.1} | {theirs:.1} | {:.3}", ours / theirs),
                    format!(
                        "\"nccl_us\":{us:.2},\"nccl_busbw_gbs\":{theirs:.2},\"ratio\":{:.4}",
                        ours / theirs
                    ),
                )
            }
            Err(why) => (
                format!("not available ({why}) | | "),
                "\"nccl_us\":null,\"nccl_busbw_gbs\":null,\"ratio\":null".into(),
            ),
        };
        md += &format!(
            "| {} | {} | {:.1} | {:.1} | {nccl_cells} |\n",
            r.gpus, r.bytes, r.ours_us, ours
        );
        reduce_json.push(format!(
            "{{\"gpus\":{},\"bytes\":{},\"ours_us\":{:.2},\"ours_busbw_gbs\":{:.2},{nccl_json}}}",
            r.gpus, r.bytes, r.ours_us, ours
        ));
    }
    let json = format!(
        "{{\"device\":{},\"gpus\":{available},\"total_bytes\":{},\"reps\":{},\
         \"scaling\":[{}],\"all_reduce\":[{}]}}\n",
        serde_json::Value::String(name.to_string()),
        total as u64,
        o.reps,
        scaling_json.join(","),
        reduce_json.join(",")
    );
    (json, md)
}
