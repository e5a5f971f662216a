//! The host-side benchmark: what a CUDA graph saves on a sequence of small
//! calls, and the bandwidth of copies between host and device memory beside
//! the CUDA runtime's own (`host/benches/peers/copies.cu`) in the same run.
//!
//! ```text
//! interop [--reps N] [--out DIR] [--quick]
//! ```
//!
//! * Graph: 100 latency-bound calls on one queue, cycling over a sum of
//!   4096 `f32`, a 256 × 256 `f32` transpose and a histogram of 65 536
//!   bytes, once launched one by one and once captured as one graph
//!   ([`Context::capture`]) and launched as a whole. Each figure is the
//!   time between two CUDA events recorded on the queue's stream around the
//!   whole sequence (host launch latency included: that is what a graph
//!   saves), the median of `--reps` (default 50) after 20 warm-ups, per
//!   call.
//! * Copies: 2^20, 2^24, 2^28 and (unless `--quick`) 2^30 bytes, host to
//!   device and device to host, from page-locked memory
//!   ([`Context::copy_from_pinned`], [`Context::copy_to_pinned`]) and from
//!   pageable memory ([`Context::copy_from_host`], [`Context::copy_to_host`],
//!   which wait for their copy: that wait is inside the events). Each
//!   figure is the median of `--reps` copies, each between its own pair of
//!   events, after a warm-up of at least 3 copies and 100 ms. The peer
//!   program times `cudaMemcpyAsync` from `cudaMallocHost` and `malloc`
//!   memory the same way; nvcc (`$NVCC`, else `nvcc` on the `PATH`) builds
//!   it at run time, and where it cannot, the peer is reported as not
//!   available. The two take turns, twice each, and each side's faster
//!   figure is kept.
//!
//! Writes `interop.json` and `interop.md` to `--out` (default
//! `target/bench`); the peer is built in `--out/peers`.

use cust::event::{Event, EventFlags};
use cust::stream::Stream;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;
use warpspeed::reduce::{Op, ReduceVariant};
use warpspeed::{Buffer, Context, Error, Matrix, MatrixMut};

const COPIES_PEER: &str = include_str!("peers/copies.cu");

/// Calls in the sequence the graph replays.
const CALLS: usize = 100;

/// Warm-up runs of the sequence, each way.
const GRAPH_WARMUP: usize = 20;

/// Elements of the summed vector.
const SUM_LEN: usize = 4096;

/// Side of the transposed square matrix.
const SIDE: usize = 256;

/// Bytes of the histogram's input.
const HISTOGRAM_LEN: usize = 65536;

/// The copies' sizes, log2 of bytes; the last one is left out by `--quick`.
const COPY_LOG2: [u32; 4] = [20, 24, 28, 30];

/// The least warm-up of each copy case, in milliseconds (the peer's too).
const COPY_WARMUP_MS: f64 = 100.0;

/// Turns the peer and ours take at the copies.
const TURNS: usize = 2;

struct Options {
    reps: usize,
    out: PathBuf,
    quick: bool,
}

fn options() -> Result<Options, String> {
    let mut o = Options {
        reps: 50,
        out: PathBuf::from("target/bench"),
        quick: false,
    };
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--reps" => o.reps = value()?.parse().map_err(|e| format!("--reps: {e}"))?,
            "--out" => o.out = PathBuf::from(value()?),
            "--quick" => o.quick = true,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if o.reps == 0 {
        return Err("--reps takes at least 1".into());
    }
    Ok(o)
}

fn median(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn cuda(e: cust::error::CudaError) -> String {
    e.to_string()
}

/// A pair of CUDA events on one queue's stream.
struct Timer<'a> {
    ctx: &'a Context,
    stream: &'a Stream,
    start: Event,
    stop: Event,
}

impl<'a> Timer<'a> {
    fn new(ctx: &'a Context) -> Result<Self, String> {
        // SAFETY: only events are recorded on the stream: no callback is
        // added and nothing else is enqueued on it but the library's calls.
        let stream = unsafe { ctx.stream() }.ok_or("the bench's queue owns its stream")?;
        Ok(Timer {
            ctx,
            stream,
            start: Event::new(EventFlags::DEFAULT).map_err(cuda)?,
            stop: Event::new(EventFlags::DEFAULT).map_err(cuda)?,
        })
    }

    /// Milliseconds from an event recorded before `enqueue` to one recorded
    /// after it, once the queue has finished.
    fn once(&self, enqueue: &mut impl FnMut() -> warpspeed::Result<()>) -> Result<f64, String> {
        self.start.record(self.stream).map_err(cuda)?;
        let queued = enqueue();
        self.stop.record(self.stream).map_err(cuda)?;
        self.ctx.synchronize().map_err(|e| e.to_string())?;
        queued.map_err(|e| e.to_string())?;
        let ms = self.stop.elapsed_time_f32(&self.start).map_err(cuda)?;
        Ok(f64::from(ms))
    }

    /// The median of `reps` timed runs of `enqueue`, after at least
    /// `warmup_runs` and `warmup_ms` of untimed ones.
    fn median_ms(
        &self,
        reps: usize,
        warmup_runs: usize,
        warmup_ms: f64,
        mut enqueue: impl FnMut() -> warpspeed::Result<()>,
    ) -> Result<f64, String> {
        let begun = Instant::now();
        let mut runs = 0;
        while runs < warmup_runs || begun.elapsed().as_secs_f64() * 1e3 < warmup_ms {
            self.once(&mut enqueue)?;
            runs += 1;
        }
        let times = (0..reps)
            .map(|_| self.once(&mut enqueue))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(median(times))
    }
}

// --- The graph against the same calls one by one ---------------------------

/// The inputs and outputs of the sequence of calls.
struct Calls {
    x: Buffer<f32>,
    a: Buffer<f32>,
    bytes: Buffer<u8>,
    /// One slot per sum of the sequence.
    sums: Buffer<f32>,
    t: Buffer<f32>,
    counts: Buffer<u32>,
}

impl Calls {
    fn new(ctx: &Context) -> warpspeed::Result<Self> {
        let a: Vec<f32> = (0..SIDE * SIDE).map(|i| i as f32).collect();
        let bytes: Vec<u8> = (0..HISTOGRAM_LEN).map(|i| i as u8).collect();
        Ok(Calls {
            x: ctx.upload(&vec![1.0f32; SUM_LEN])?,
            a: ctx.upload(&a)?,
            bytes: ctx.upload(&bytes)?,
            sums: ctx.zeros(CALLS.div_ceil(3))?,
            t: ctx.zeros(SIDE * SIDE)?,
            counts: ctx.zeros(256)?,
        })
    }

    /// Enqueues the sequence on `q` without waiting.
    fn enqueue(&mut self, q: &Context) -> warpspeed::Result<()> {
        for i in 0..CALLS {
            match i % 3 {
                0 => {
                    let mut slot = self.sums.slice_mut(i / 3..i / 3 + 1)?;
                    q.reduce_into(Op::Sum, ReduceVariant::DEFAULT, &self.x, &mut slot)?
                        .detach();
                }
                1 => {
                    let src = Matrix::new(&self.a, SIDE, SIDE)?;
                    let mut dst = MatrixMut::new(&mut self.t, SIDE, SIDE)?;
                    q.transpose_into(&src, &mut dst)?.detach();
                }
                _ => q.histogram_into(&self.bytes, &mut self.counts)?.detach(),
            }
        }
        Ok(())
    }

    /// Zeros the outputs, so that a check sees what the next run wrote.
    fn clear(&mut self, ctx: &Context) -> warpspeed::Result<()> {
        ctx.copy_from_host(&vec![0.0f32; self.sums.len()], &mut self.sums)?;
        ctx.copy_from_host(&vec![0.0f32; SIDE * SIDE], &mut self.t)?;
        ctx.copy_from_host(&[0u32; 256], &mut self.counts)
    }

    /// Whether the outputs hold what the sequence computes.
    fn check(&self, how: &str) -> Result<(), String> {
        let e = |e: Error| e.to_string();
        let sums = self.sums.to_vec().map_err(e)?;
        if let Some(s) = sums.iter().find(|&&s| s != SUM_LEN as f32) {
            return Err(format!("{how}: a sum is {s}, not {SUM_LEN}"));
        }
        let t = self.t.to_vec().map_err(e)?;
        let transposed = (0..SIDE * SIDE).all(|i| t[(i % SIDE) * SIDE + i / SIDE] == i as f32);
        if !transposed {
            return Err(format!("{how}: the transpose is wrong"));
        }
        let counts = self.counts.to_vec().map_err(e)?;
        let each = (HISTOGRAM_LEN / 256) as u32;
        if counts.iter().any(|&c| c != each) {
            return Err(format!("{how}: a histogram bin is not {each}"));
        }
        Ok(())
    }
}

/// Microseconds per call of the sequence, one by one and as a graph.
struct GraphTimes {
    one_by_one_us: f64,
    graph_us: f64,
}

fn graph(ctx: &Context, o: &Options) -> Result<GraphTimes, String> {
    let e = |e: Error| e.to_string();
    let timer = Timer::new(ctx)?;
    let mut calls = Calls::new(ctx).map_err(e)?;
    let one_ms = timer.median_ms(o.reps, GRAPH_WARMUP, 0.0, || calls.enqueue(ctx))?;
    calls.check("one by one")?;
    calls.clear(ctx).map_err(e)?;
    let graph = ctx.capture(|q| calls.enqueue(q)).map_err(e)?;
    // One replay, checked, before the timing.
    graph.launch(ctx).map_err(e)?.wait().map_err(e)?;
    calls.check("the graph")?;
    let graph_ms = timer.median_ms(o.reps, GRAPH_WARMUP, 0.0, || {
        graph.launch(ctx)?.detach();
        Ok(())
    })?;
    Ok(GraphTimes {
        one_by_one_us: one_ms * 1e3 / CALLS as f64,
        graph_us: graph_ms * 1e3 / CALLS as f64,
    })
}

// --- Copies between host and device ----------------------------------------

/// Byte `i` of the pattern `seed` fills host memory with (the peer's).
fn pattern(i: usize, seed: usize) -> u8 {
    (i.wrapping_mul(131).wrapping_add(seed) >> 3) as u8
}

fn fill(host: &mut [u8], seed: usize) {
    host.iter_mut()
        .enumerate()
        .for_each(|(i, b)| *b = pattern(i, seed));
}

/// Whether `host` holds the pattern `seed` after the downloads of `what`.
fn holds(host: &[u8], seed: usize, what: &str) -> Result<(), String> {
    match host
        .iter()
        .enumerate()
        .find(|&(i, &b)| b != pattern(i, seed))
    {
        Some((i, b)) => Err(format!(
            "{what} of {} bytes: byte {i} is {b}, not {}",
            host.len(),
            pattern(i, seed)
        )),
        None => Ok(()),
    }
}

/// Median milliseconds of one size's copies: pinned host to device, pinned
/// device to host, pageable host to device, pageable device to host. The
/// uploads send a pattern, the downloads go to zeroed memory and must bring
/// it back.
fn copies_of(ctx: &Context, timer: &Timer, reps: usize, bytes: usize) -> Result<[f64; 4], String> {
    let e = |e: Error| e.to_string();
    let mut dev = ctx.alloc::<u8>(bytes).map_err(e)?;
    let mut pinned = ctx.alloc_pinned::<u8>(bytes).map_err(e)?;
    fill(pinned.as_mut_slice().map_err(e)?, 1);
    let pinned_up = timer.median_ms(reps, 3, COPY_WARMUP_MS, || {
        ctx.copy_from_pinned(&pinned, &mut dev)?.detach();
        Ok(())
    })?;
    pinned.as_mut_slice().map_err(e)?.fill(0);
    let pinned_down = timer.median_ms(reps, 3, COPY_WARMUP_MS, || {
        ctx.copy_to_pinned(&dev, &mut pinned)?.detach();
        Ok(())
    })?;
    holds(pinned.as_slice().map_err(e)?, 1, "pinned downloads")?;
    drop(pinned);
    let mut host = vec![0u8; bytes];
    fill(&mut host, 2);
    let pageable_up = timer.median_ms(reps, 3, COPY_WARMUP_MS, || {
        ctx.copy_from_host(&host, &mut dev)
    })?;
    host.fill(0);
    let pageable_down = timer.median_ms(reps, 3, COPY_WARMUP_MS, || {
        ctx.copy_to_host(&dev, &mut host)
    })?;
    holds(&host, 2, "pageable downloads")?;
    Ok([pinned_up, pinned_down, pageable_up, pageable_down])
}

/// The peer's cases, in the order of [`copies_of`]'s figures.
const PEER_CASES: [&str; 4] = ["pinned_h2d", "pinned_d2h", "pageable_h2d", "pageable_d2h"];

/// One figure of the peer: case, bytes, median ms.
type PeerFigure = (String, usize, f64);

/// Builds the peer in `dir` (unless the same source is built there), or
/// says why not.
fn build_peer(dir: &Path) -> Result<PathBuf, String> {
    let nvcc = std::env::var_os("NVCC").map_or_else(|| PathBuf::from("nvcc"), PathBuf::from);
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let source = dir.join("copies.cu");
    let binary = dir.join("copies");
    let current = std::fs::read_to_string(&source).is_ok_and(|s| s == COPIES_PEER);
    if current && binary.is_file() {
        return Ok(binary);
    }
    std::fs::write(&source, COPIES_PEER).map_err(|e| format!("{}: {e}", source.display()))?;
    let out = Command::new(&nvcc)
        .args(["-O3", "-std=c++17", "-o"])
        .arg(&binary)
        .arg(&source)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", nvcc.display()))?;
    if !out.status.success() {
        return Err(format!(
            "nvcc failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(binary)
}

/// The peer's figures for `sizes`, or why there are none.
fn run_peer(binary: &Path, reps: usize, sizes: &[usize]) -> Result<Vec<PeerFigure>, String> {
    let out = Command::new(binary)
        .arg(reps.to_string())
        .args(sizes.iter().map(|b| b.to_string()))
        .env("WARPSPEED_WARMUP_MS", COPY_WARMUP_MS.to_string())
        .output()
        .map_err(|e| format!("cannot run the peer: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "the peer failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    // One JSON object a line.
    let figure = |line: &str| -> Option<PeerFigure> {
        let object: Value = serde_json::from_str(line.trim()).ok()?;
        Some((
            object.get("case")?.as_str()?.to_string(),
            object.get("bytes")?.as_u64()? as usize,
            object.get("ms")?.as_f64()?,
        ))
    };
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(figure)
        .collect())
}

/// The peer's faster median of `case` at `bytes` over its turns, or why
/// there is none.
fn peer_ms(
    turns: &[Result<Vec<PeerFigure>, String>],
    case: &str,
    bytes: usize,
) -> Result<f64, String> {
    let mut best: Option<f64> = None;
    for turn in turns {
        let figures = turn.as_ref().map_err(Clone::clone)?;
        let ms = figures
            .iter()
            .find(|(c, b, _)| c == case && *b == bytes)
            .map(|&(_, _, ms)| ms)
            .ok_or_else(|| format!("the peer gave no figure for {case} at {bytes} bytes"))?;
        best = Some(best.map_or(ms, |b: f64| b.min(ms)));
    }
    best.ok_or_else(|| "the peer did not run".to_string())
}

/// One row of the copy table: one size, one direction.
struct CopyRow {
    bytes: usize,
    /// `h2d` or `d2h`.
    direction: &'static str,
    pinned_ms: f64,
    pageable_ms: f64,
    /// The peer's pinned and pageable ms, or why not.
    peer: Result<(f64, f64), String>,
}

fn copies(ctx: &Context, o: &Options) -> Result<Vec<CopyRow>, String> {
    let kept = if o.quick { 3 } else { COPY_LOG2.len() };
    let sizes: Vec<usize> = COPY_LOG2[..kept].iter().map(|&l| 1usize << l).collect();
    let peer = build_peer(&o.out.join("peers"));
    if let Err(why) = &peer {
        eprintln!("  the peer is not available: {why}");
    }
    let timer = Timer::new(ctx)?;
    let mut ours = vec![[f64::INFINITY; 4]; sizes.len()];
    let mut turns = Vec::new();
    for turn in 0..TURNS {
        turns.push(
            peer.as_ref()
                .map_err(Clone::clone)
                .and_then(|binary| run_peer(binary, o.reps, &sizes)),
        );
        for (best, &bytes) in ours.iter_mut().zip(&sizes) {
            let ms = copies_of(ctx, &timer, o.reps, bytes)?;
            for (b, m) in best.iter_mut().zip(ms) {
                *b = b.min(m);
            }
            eprintln!(
                "  turn {turn}: {bytes} B: pinned {:.1}/{:.1} GB/s, pageable {:.1}/{:.1} GB/s (h2d/d2h)",
                gbs(bytes, ms[0]),
                gbs(bytes, ms[1]),
                gbs(bytes, ms[2]),
                gbs(bytes, ms[3])
            );
        }
    }
    let mut rows = Vec::new();
    for (best, &bytes) in ours.iter().zip(&sizes) {
        for (k, direction) in ["h2d", "d2h"].into_iter().enumerate() {
            let peer = peer_ms(&turns, PEER_CASES[k], bytes)
                .and_then(|pinned| Ok((pinned, peer_ms(&turns, PEER_CASES[k + 2], bytes)?)));
            rows.push(CopyRow {
                bytes,
                direction,
                pinned_ms: best[k],
                pageable_ms: best[k + 2],
                peer,
            });
        }
    }
    Ok(rows)
}

/// GB/s (1 GB = 10^9 bytes) of `bytes` in `ms`.
fn gbs(bytes: usize, ms: f64) -> f64 {
    bytes as f64 / (ms * 1e-3) / 1e9
}

fn main() {
    if let Err(message) = run() {
        eprintln!("interop: {message}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let o = options()?;
    let ctx = Context::new(0).map_err(|e| e.to_string())?;
    let name = ctx.info().name.clone();
    // The newest CUDA version the driver supports.
    let driver = cust::CudaApiVersion::get()
        .ok()
        .map(|v| format!("{}.{}", v.major(), v.minor()));
    eprintln!(
        "{name}; driver CUDA {}; {} reps",
        driver.as_deref().unwrap_or("unknown"),
        o.reps
    );
    let times = graph(&ctx, &o)?;
    eprintln!(
        "  {CALLS} calls: {:.2} µs/call one by one, {:.2} µs/call as a graph",
        times.one_by_one_us, times.graph_us
    );
    let rows = copies(&ctx, &o)?;
    let (json, markdown) = report(&o, &name, driver.as_deref(), &times, &rows);
    print!("{markdown}");
    std::fs::create_dir_all(&o.out).map_err(|e| e.to_string())?;
    std::fs::write(o.out.join("interop.json"), json).map_err(|e| e.to_string())?;
    std::fs::write(o.out.join("interop.md"), markdown).map_err(|e| e.to_string())?;
    Ok(())
}

/// `x` to `digits` decimals, for the JSON.
fn round(x: f64, digits: i32) -> f64 {
    let scale = 10f64.powi(digits);
    (x * scale).round() / scale
}

/// A reason on one line, short enough for a table's note.
fn one_line(why: &str) -> String {
    let line = why.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(300) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}

/// `interop.json` (fields: device, driver (the newest CUDA version the
/// driver supports), reps, graph{calls, one_by_one_us_per_call,
/// graph_us_per_call, speedup}, copies[{bytes, direction, pinned_gbs,
/// pageable_gbs, peer_pinned_gbs, peer_pageable_gbs, pinned_ratio,
/// pageable_ratio, peer_note where the peer is not available}]; ratio = our
/// GB/s ÷ the peer's) and `interop.md`.
fn report(
    o: &Options,
    name: &str,
    driver: Option<&str>,
    times: &GraphTimes,
    rows: &[CopyRow],
) -> (String, String) {
    let speedup = times.one_by_one_us / times.graph_us;
    let mut md = format!(
        "## Host and device: {name}\n\n\
         {CALLS} latency-bound calls on one queue (a sum of {SUM_LEN} `f32`, a {SIDE} × {SIDE} \
         `f32` transpose and a histogram of {HISTOGRAM_LEN} bytes in turn), launched one by \
         one and as one CUDA graph; CUDA events on the queue's stream around the whole \
         sequence, median of {} after {GRAPH_WARMUP} warm-ups:\n\n\
         | calls | one by one µs/call | graph µs/call | × faster |\n\
         |---:|---:|---:|---:|\n\
         | {CALLS} | {:.2} | {:.2} | {:.2} |\n\n\
         Copies between host and device memory, each between its own pair of events on the \
         queue's stream (a pageable copy's own wait included), median of {} after at least \
         {COPY_WARMUP_MS} ms of warm-up; the peer is `cudaMemcpyAsync` from `cudaMallocHost` \
         and `malloc` memory (`host/benches/peers/copies.cu`) timed the same way in the same \
         run (the two take turns, {TURNS} each; each side's faster figure):\n\n\
         | bytes | direction | pinned GB/s | peer pinned GB/s | × peer | pageable GB/s | \
         peer pageable GB/s | × peer |\n\
         |---:|---|---:|---:|---:|---:|---:|---:|\n",
        o.reps, times.one_by_one_us, times.graph_us, speedup, o.reps
    );
    let mut copies_json = Vec::new();
    let mut note = None;
    for r in rows {
        let (pinned, pageable) = (gbs(r.bytes, r.pinned_ms), gbs(r.bytes, r.pageable_ms));
        let mut row = json!({
            "bytes": r.bytes,
            "direction": r.direction,
            "pinned_gbs": round(pinned, 3),
            "pageable_gbs": round(pageable, 3),
            "peer_pinned_gbs": null,
            "peer_pageable_gbs": null,
            "pinned_ratio": null,
            "pageable_ratio": null,
        });
        let peer_cells = match &r.peer {
            Ok((pinned_ms, pageable_ms)) => {
                let (theirs, theirs_pageable) =
                    (gbs(r.bytes, *pinned_ms), gbs(r.bytes, *pageable_ms));
                row["peer_pinned_gbs"] = json!(round(theirs, 3));
                row["peer_pageable_gbs"] = json!(round(theirs_pageable, 3));
                row["pinned_ratio"] = json!(round(pinned / theirs, 4));
                row["pageable_ratio"] = json!(round(pageable / theirs_pageable, 4));
                [
                    format!("{theirs:.2}"),
                    format!("{:.3}", pinned / theirs),
                    format!("{theirs_pageable:.2}"),
                    format!("{:.3}", pageable / theirs_pageable),
                ]
            }
            Err(why) => {
                row["peer_note"] = json!(format!("not available: {why}"));
                note.get_or_insert_with(|| one_line(why));
                ["n/a", "", "n/a", ""].map(String::from)
            }
        };
        md += &format!(
            "| {} | {} | {pinned:.2} | {} | {} | {pageable:.2} | {} | {} |\n",
            r.bytes, r.direction, peer_cells[0], peer_cells[1], peer_cells[2], peer_cells[3]
        );
        copies_json.push(row);
    }
    if let Some(why) = note {
        md += &format!("\nThe peer is not available: {why}\n");
    }
    let json = json!({
        "device": name,
        "driver": driver,
        "reps": o.reps,
        "graph": {
            "calls": CALLS,
            "one_by_one_us_per_call": round(times.one_by_one_us, 4),
            "graph_us_per_call": round(times.graph_us, 4),
            "speedup": round(speedup, 4),
        },
        "copies": copies_json,
    });
    (format!("{json:#}\n"), md)
}
