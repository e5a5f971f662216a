//! Timing, the bandwidth baseline, tables and JSON.

use cust::event::{Event, EventFlags};
use cust::memory::{AsyncCopyDestination, DeviceBuffer};
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

/// The generic ladder driver: one row per step of `L` for which `applies`
/// holds, `measure` returning its median milliseconds (after checking its
/// result).
pub fn ladder_rows<L: Ladder>(
    case: &str,
    bytes: f64,
    applies: impl Fn(L) -> bool,
    mut measure: impl FnMut(L) -> Result<f64, String>,
) -> Result<Vec<Row>, String> {
    let mut rows = Vec::new();
    for &step in L::ALL.iter().filter(|&&s| applies(s)) {
        rows.push(Row {
            family: L::FAMILY,
            case: case.to_string(),
            step: step.step(),
            variant: step.name(),
            ms: measure(step)?,
            bytes,
        });
    }
    Ok(rows)
}

/// Launches before timing starts.
const WARMUP: usize = 3;

pub struct Bench<'a> {
    pub ctx: &'a Context,
    pub reps: usize,
    /// Device-to-device copy bandwidth of this run, bytes read + written per
    /// second, in GB/s.
    pub memcpy_gbs: f64,
    records: Vec<String>,
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

/// One measured row.
pub struct Row {
    pub family: &'static str,
    pub case: String,
    pub step: u32,
    pub variant: &'static str,
    pub ms: f64,
    /// Bytes the variant must move at least (each input read once, each
    /// output written once).
    pub bytes: f64,
}

impl<'a> Bench<'a> {
    pub fn new(ctx: &'a Context, reps: usize) -> Result<Self, String> {
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
            memcpy_gbs: 0.0,
            records: Vec::new(),
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

    /// Median milliseconds of `reps` runs of `launch` after warm-up.
    ///
    /// Each run sits between its own pair of events, and all runs are
    /// enqueued back to back before one final synchronisation: the GPU never
    /// idles waiting for the host to submit the next launch, so the host's
    /// launch latency is not counted as kernel time (it would be if the host
    /// waited after every run).
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

    /// Prints a table of rows that share a case, with GB/s, the fraction of
    /// this run's memcpy bandwidth and the speedup over the first row, and
    /// records them for the JSON file.
    pub fn table(&mut self, title: &str, rows: &[Row]) {
        println!("\n{title}");
        println!(
            "| step | variant                | ms       | GB/s    | × memcpy | speedup |\n|---:|---|---:|---:|---:|---:|"
        );
        let first = rows.first().map_or(1.0, |r| r.ms);
        for r in rows {
            let gbs = r.bytes / r.ms / 1e6;
            let ratio = gbs / self.memcpy_gbs;
            let speedup = first / r.ms;
            println!(
                "| {:>2} | {:<22} | {:>8.4} | {:>7.0} | {:>8.2} | {:>6.1}× |",
                r.step, r.variant, r.ms, gbs, ratio, speedup
            );
            self.records.push(format!(
                "{{\"family\":\"{}\",\"case\":\"{}\",\"step\":{},\"variant\":\"{}\",\"ms\":{:.6},\"bytes\":{},\"gbs\":{:.1},\"ratio_memcpy\":{:.4},\"speedup_vs_first\":{:.3}}}",
                r.family, r.case, r.step, r.variant, r.ms, r.bytes, gbs, ratio, speedup
            ));
        }
    }

    pub fn write_json(&self, dir: &str) -> Result<String, String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("{dir}: {e}"))?;
        let info = self.ctx.info();
        let path = format!("{dir}/ladder.json");
        let json = format!(
            "{{\n\"device\":\"{}\",\n\"compute_capability\":\"{}.{}\",\n\"multiprocessors\":{},\n\"ptx\":\"{}\",\n\"reps\":{},\n\"memcpy_gbs\":{:.1},\n\"results\":[\n{}\n]\n}}\n",
            info.name,
            info.compute_capability.0,
            info.compute_capability.1,
            info.multiprocessors,
            info.ptx_target,
            self.reps,
            self.memcpy_gbs,
            self.records.join(",\n")
        );
        std::fs::write(&path, json).map_err(|e| format!("{path}: {e}"))?;
        Ok(path)
    }
}
