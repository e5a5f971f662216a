//! Timing, the bandwidth baseline, progress lines, and the results a run
//! collects for its report.

use crate::peers::{PeerResult, Peers};
use cust::event::{Event, EventFlags};
use cust::memory::{AsyncCopyDestination, DeviceBuffer};
use std::io::Write;
use warpspeed::{Context, Ladder, Pending};

/// One family of the benchmark: its name on the command line and what runs it.
pub struct Family {
    pub name: &'static str,
    pub run: fn(&mut Bench) -> Result<(), String>,
}

/// A launch enqueued for timing: its guard is let go so that the next launch
/// follows back to back.
pub fn enqueued(result: warpspeed::Result<Pending<'_>>) -> Result<(), String> {
    let pending = result.map_err(|e| e.to_string())?;
    // SAFETY: every buffer a timed launch uses is created before and dropped
    // after `Bench::time`, which synchronizes the context before it returns.
    unsafe { pending.detach() };
    Ok(())
}

/// Launches before timing starts.
const WARMUP: usize = 3;

/// One measured step of a ladder.
#[derive(Clone, Debug)]
pub struct Row {
    pub step: u32,
    pub variant: &'static str,
    pub ms: f64,
    /// Which peers it is compared with (the operator of a reduction: `sum`;
    /// empty for a family with one kind of peer).
    pub versus: &'static str,
}

/// One table of the report: every step of a ladder on one input, and the
/// libraries a user would otherwise call on the same input.
#[derive(Clone, Debug)]
pub struct Case {
    pub family: &'static str,
    /// The input, e.g. `f32 2^24`.
    pub case: String,
    /// Bytes a step must move at least (each input read once, each output
    /// written once).
    pub bytes: f64,
    pub rows: Vec<Row>,
    /// Peers by the `versus` group they compare with.
    pub peers: Vec<(&'static str, PeerResult)>,
}

impl Case {
    /// The fastest available peer of a group, `(name, ms)`.
    pub fn best_peer(&self, versus: &str) -> Option<(&str, f64)> {
        self.peers
            .iter()
            .filter(|(group, _)| *group == versus)
            .filter_map(|(_, p)| p.outcome.as_ref().ok().map(|&ms| (p.name.as_str(), ms)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
    }
}

/// One point of a scaling curve.
#[derive(Clone, Debug)]
pub struct Point {
    /// The series, e.g. `warpspeed sum f32` or `CUB DeviceReduce::Sum`.
    pub series: String,
    /// Elements (or matrix side).
    pub n: usize,
    pub ms: f64,
    pub bytes: f64,
}

/// One scaling curve: time and bandwidth over input sizes, warpspeed and
/// its peer.
#[derive(Clone, Debug)]
pub struct Scaling {
    pub family: &'static str,
    pub title: String,
    /// What `n` is: "n (elements)" or "side (n × n)".
    pub axis: &'static str,
    pub points: Vec<Point>,
    /// Peers that could not run, with the reason.
    pub unavailable: Vec<(String, String)>,
}

pub struct Bench<'a> {
    pub ctx: &'a Context,
    pub reps: usize,
    /// Fewer sizes (`--quick`).
    pub quick: bool,
    /// Device-to-device copy bandwidth of this run, bytes read + written per
    /// second, in GB/s.
    pub memcpy_gbs: f64,
    pub peers: Peers,
    pub cases: Vec<Case>,
    pub scaling: Vec<Scaling>,
    measurements: usize,
}

/// Copies of `host` on the device, enough that together they are at least
/// twice the L2 cache (at most 4): rotating through them, every timed launch
/// reads DRAM rather than what the previous launch left in L2.
pub fn device_copies<T: cust::memory::DeviceCopy>(
    bench: &Bench,
    host: &[T],
) -> Result<Vec<DeviceBuffer<T>>, String> {
    let bytes = size_of_val(host) as u64;
    let copies = (2 * bench.ctx.info().l2_bytes as u64)
        .div_ceil(bytes.max(1))
        .clamp(1, 4);
    (0..copies)
        .map(|_| DeviceBuffer::from_slice(host).map_err(|e| e.to_string()))
        .collect()
}

/// The generic ladder driver: one row per step of `L` for which `applies`
/// holds, `measure` returning its median milliseconds (after checking its
/// result), compared with the peers of group `versus`.
pub fn ladder_rows<L: Ladder>(
    bench: &mut Bench,
    case: &str,
    versus: &'static str,
    applies: impl Fn(L) -> bool,
    mut measure: impl FnMut(&Bench, L) -> Result<f64, String>,
) -> Result<Vec<Row>, String> {
    let mut rows = Vec::new();
    for &step in L::ALL.iter().filter(|&&s| applies(s)) {
        let ms = measure(bench, step)?;
        bench.progress(&format!("{} {case} {}", L::FAMILY, step.name()), ms);
        rows.push(Row {
            step: step.step(),
            variant: step.name(),
            ms,
            versus,
        });
    }
    Ok(rows)
}

impl<'a> Bench<'a> {
    pub fn new(ctx: &'a Context, reps: usize, quick: bool, peers: Peers) -> Result<Self, String> {
        let info = ctx.info();
        println!(
            "device: {} (compute capability {}.{}, {} SMs, {:.1} GiB, L2 {} MiB), PTX {}",
            info.name,
            info.compute_capability.0,
            info.compute_capability.1,
            info.multiprocessors,
            info.total_memory as f64 / (1u64 << 30) as f64,
            info.l2_bytes >> 20,
            info.ptx_target
        );
        let mut bench = Bench {
            ctx,
            reps,
            quick,
            memcpy_gbs: 0.0,
            peers,
            cases: Vec::new(),
            scaling: Vec::new(),
            measurements: 0,
        };
        // 1 GiB device-to-device copy: the bandwidth ceiling of this run.
        let bytes = 1usize << 30;
        let src = DeviceBuffer::<u8>::zeroed(bytes).map_err(|e| e.to_string())?;
        let mut dst = DeviceBuffer::<u8>::zeroed(bytes).map_err(|e| e.to_string())?;
        let ms = bench.time(|| {
            // SAFETY: both buffers live across the timing, which synchronises
            // before returning.
            unsafe { dst.async_copy_from(&src, ctx.stream()) }.map_err(|e| e.to_string())
        })?;
        bench.memcpy_gbs = 2.0 * bytes as f64 / ms / 1e6;
        println!(
            "device-to-device memcpy, 1 GiB: {ms:.3} ms, {:.0} GB/s (read + written)",
            bench.memcpy_gbs
        );
        Ok(bench)
    }

    /// A progress line on stderr: a long run must not look hung.
    pub fn progress(&mut self, what: &str, ms: f64) {
        self.measurements += 1;
        eprintln!("[{:>4}] {what}: {ms:.4} ms", self.measurements);
        let _ = std::io::stderr().flush();
    }

    /// Median milliseconds of `reps` runs of `launch` after warm-up.
    ///
    /// Each run sits between its own pair of events, and all runs are
    /// enqueued back to back before one final synchronisation: the GPU never
    /// idles waiting for the host to submit the next launch, so the host's
    /// launch latency is not counted as kernel time (it would be if the host
    /// waited after every run). The peer programs time the same way.
    pub fn time(&self, mut launch: impl FnMut() -> Result<(), String>) -> Result<f64, String> {
        let stream = self.ctx.stream();
        let err = |e: cust::error::CudaError| e.to_string();
        for _ in 0..WARMUP {
            launch()?;
        }
        self.ctx.synchronize().map_err(|e| e.to_string())?;
        let mut events = Vec::with_capacity(self.reps);
        for _ in 0..self.reps {
            let (start, stop) = (
                Event::new(EventFlags::DEFAULT).map_err(err)?,
                Event::new(EventFlags::DEFAULT).map_err(err)?,
            );
            start.record(stream).map_err(err)?;
            launch()?;
            stop.record(stream).map_err(err)?;
            events.push((start, stop));
        }
        self.ctx.synchronize().map_err(|e| e.to_string())?;
        let mut times = events
            .iter()
            .map(|(start, stop)| stop.elapsed_time_f32(start).map(f64::from).map_err(err))
            .collect::<Result<Vec<_>, _>>()?;
        times.sort_by(f64::total_cmp);
        Ok(times[times.len() / 2])
    }

    /// Prints a case's table and keeps it for the report.
    pub fn record(&mut self, title: &str, case: Case) {
        println!("\n{title}");
        print!("{}", crate::report::table(&case, self.memcpy_gbs));
        self.cases.push(case);
    }

    /// Prints a scaling curve's table and keeps it for the report.
    pub fn record_scaling(&mut self, scaling: Scaling) {
        println!("\n{} (scaling)", scaling.title);
        print!("{}", crate::report::scaling_table(&scaling));
        self.scaling.push(scaling);
    }
}
