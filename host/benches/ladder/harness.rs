//! Timing, the two ceilings (the bandwidth of a device-to-device copy and
//! the FP32 peak), progress lines, and the results a run collects for its
//! report ([`Case`], [`Scaling`], [`KernelUse`] and what they hold). The
//! methods that record results (`Bench::record` and its siblings), printing
//! each table as the report renders it, are in [`crate::record`]: the
//! harness imports nothing of the JSON writer or the tables, which both
//! read the [`Bench`].

use crate::hold::{Hold, WINDOW};
use crate::peers::{PeerResult, Peers};
use cust::event::{Event, EventFlags};
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use warpspeed::gemm::TmaTiles;
use warpspeed::{Buffer, Context, KernelResources, Ladder, Pending, Pod};

/// One family of the benchmark: its name on the command line and what runs it.
pub struct Family {
    pub name: &'static str,
    pub run: fn(&mut Bench) -> Result<(), String>,
}

/// The median of `times` (the upper one of an even count).
pub fn median(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// SplitMix64's output function: a well-mixed 64-bit hash of `x`, the
/// one formula the families' inputs and `peers.cu`'s are made from, so
/// both sides measure the same data.
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A launch enqueued for timing: its guard is let go so that the next launch
/// follows back to back (`Bench::time` synchronizes the context before it
/// returns; a buffer dropped earlier would wait for its work anyway).
pub fn enqueued(result: warpspeed::Result<Pending<'_>>) -> Result<(), String> {
    result.map_err(|e| e.to_string())?.detach();
    Ok(())
}

/// Launches before timing starts, at the least.
pub const WARMUP: usize = 3;

/// The warm-up goes on, [`WARMUP_GROUP`] launches at a time, until this
/// long has passed since it began (`--warmup-ms` sets another). After a
/// heavy launch the GPU's power management holds its clocks down for a
/// while, and a short launch timed then reads slow: on an H200, cuBLAS
/// `Sgemm` 1024³ read 72 µs right after 8192³ on the TF32 tensor cores
/// and 60 µs alone; after 30 ms of its own launches 66 µs, after 100 or
/// 300 ms 61 µs. Each measurement is thus of
/// its own launch's steady state, whatever ran before it. For launches
/// that draw enough power to meet the cap themselves (the tensor-core
/// steps, cuBLAS with TF32), that steady state is the capped one: slower
/// than a launch of a cool GPU would be.
pub const WARMUP_TIME: Duration = Duration::from_millis(200);

/// Launches between two looks at the warm-up's clock.
const WARMUP_GROUP: usize = 8;

/// The method's two constants: how many windows of back-to-back launches
/// are timed, and the length from which a launch is timed only alone (the
/// report describes them: one source for both).
pub use warpspeed_report::{BATCH_BELOW_MS, BATCH_WINDOWS};

/// What [`Bench::time`] measures of one launch.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    /// The median of the launches each timed between its own pair of
    /// events: one launch on its own, the GPU's cost of starting and
    /// finishing it included. What the peers are timed by, and every ratio
    /// to a peer.
    pub ms: f64,
    /// The median, over [`BATCH_WINDOWS`] windows of launches queued back
    /// to back with one pair of events around each window, of the window's
    /// time per launch: where the launches follow one another, the GPU
    /// overlaps one's start with the end of the one before (about a
    /// microsecond less per launch on an H200). `None` for launches of
    /// [`BATCH_BELOW_MS`] or more.
    pub batch_ms: Option<f64>,
}

/// One measured step of a ladder.
#[derive(Clone, Debug)]
pub struct Row {
    pub step: u32,
    pub variant: &'static str,
    pub ms: f64,
    /// Back to back ([`Timing::batch_ms`]).
    pub batch_ms: Option<f64>,
    /// Its group: the report's summary takes the fastest step of each
    /// group, and the step is compared with the peers of its group and with
    /// those of group `""` (the operator of a reduction: `sum`; the
    /// precision of a product: `fp32`; empty for a family with one kind of
    /// step).
    pub versus: &'static str,
}

/// What the rate of a case or a scaling point counts: the one place that
/// fixes its unit, its keys in the JSON and the ceiling it is compared with
/// ([`warpspeed_report::records::Unit`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Work {
    /// The bytes of the case or point ([`Case::bytes`], [`Point::bytes`]):
    /// GB/s, and × this run's device-to-device copy.
    Bytes,
    /// This many floating-point operations per launch: TFLOP/s, and × the
    /// device's FP32 peak.
    Flops(f64),
}

/// One table of the report: every step of a ladder on one input, and the
/// libraries a user would otherwise call on the same input.
#[derive(Clone, Debug)]
pub struct Case {
    pub family: &'static str,
    /// The input, e.g. `f32 2^24`.
    pub case: String,
    /// Bytes a step must move at least (each input read once, each output
    /// written once): what its GB/s count, unless it is recorded with
    /// [`Work::Flops`].
    pub bytes: f64,
    pub rows: Vec<Row>,
    /// Peers by the `versus` group they compare with: `""` every step, a
    /// group no step has (`"reference"`) none (a line in the chart only).
    pub peers: Vec<(&'static str, PeerResult)>,
}

impl Case {
    /// The fastest available peer a step of group `versus` is compared
    /// with (one of that group or of group `""`), `(name, ms)`.
    pub fn best_peer(&self, versus: &str) -> Option<(&str, f64)> {
        self.peers
            .iter()
            .filter(|(group, _)| group.is_empty() || *group == versus)
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
    /// Bytes a launch must move at least.
    pub bytes: f64,
}

/// One scaling curve: time and rate (bandwidth, or FLOP/s for a
/// compute-bound family) over input sizes, warpspeed and its peers.
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

/// One kernel of the loaded module and what the driver says it uses: the
/// report's "kernels" table of its family.
#[derive(Clone, Debug)]
pub struct KernelUse {
    /// Its family in `warpspeed_gpu::FAMILIES`, e.g. `image_sums`.
    pub family: &'static str,
    /// The entry's name without its type suffix, e.g. `reduce_fold`.
    pub base: &'static str,
    /// The element type, e.g. `f32`.
    pub ty: &'static str,
    pub resources: KernelResources,
}

pub struct Bench<'a> {
    pub ctx: &'a Context,
    pub reps: usize,
    /// Fewer sizes (`--quick`).
    pub quick: bool,
    /// Device-to-device copy bandwidth of this run, bytes read + written per
    /// second, in GB/s.
    pub memcpy_gbs: f64,
    /// The same copies back to back ([`Timing::batch_ms`]).
    pub memcpy_batch_gbs: f64,
    /// The device's FP32 peak, from its facts ([`Peak`]).
    pub peak: Peak,
    pub peers: Peers,
    /// The conv1d masks' tap counts to run instead of the family's own
    /// (`--masks 63,79,95`: where two steps cross).
    pub masks: Vec<usize>,
    /// The only steps to run, by variant name (`--steps lane_private,vectorized`:
    /// a short A/B run of one step); every step where empty ([`Bench::runs`]).
    pub steps: Vec<String>,
    /// The names of `steps` that some ladder had.
    pub steps_found: Vec<String>,
    /// The tiles of the GEMM's TMA step (`--tma-tiles wide`: one width
    /// against the other at the shapes where the plan chooses).
    pub tma_tiles: TmaTiles,
    /// The folder `ladder.json` is written to, again after each case and
    /// curve recorded (`Bench::save`), so that a run cut short keeps what
    /// it finished; none: written only by whoever calls `save`.
    pub out: Option<PathBuf>,
    /// Every case recorded, with what its rate counts.
    pub cases: Vec<(Case, Work)>,
    /// Every scaling curve recorded, with what each point's rate counts.
    pub scaling: Vec<(Scaling, Vec<Work>)>,
    /// The kernels of the families run, read once after the context was
    /// created.
    pub kernels: Vec<KernelUse>,
    /// The least warm-up before each measurement's timed launches
    /// ([`WARMUP_TIME`] unless `--warmup-ms`).
    pub warmup: Duration,
    /// Holds the stream while each window of timed launches is enqueued
    /// (none with `--no-hold`, for profilers).
    hold: Option<Hold>,
    measurements: usize,
}

/// The FP32 peak of the device: SMs × FP32 lanes per SM × 2 flops (a fused
/// multiply-add) × the SM clock. The clock is the one the driver reports
/// (`CU_DEVICE_ATTRIBUTE_CLOCK_RATE`), the boost clock: a ceiling the
/// device reaches while its power and temperature allow.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Peak {
    pub multiprocessors: u32,
    /// FP32 lanes (fused multiply-adds per clock) of one SM.
    pub lanes: u32,
    /// The SM clock in kHz; 0 where the driver did not say.
    pub clock_khz: u32,
}

impl Peak {
    /// FP32 lanes per SM by compute capability (the CUDA Programming
    /// Guide's arithmetic throughput table: 32-bit floating-point
    /// multiply-adds per clock per SM): 64 on Volta, Turing and the A100
    /// (7.x, 8.0), 128 on the other Ampere chips, Ada, Hopper and
    /// Blackwell.
    pub fn lanes_per_sm((major, minor): (u32, u32)) -> u32 {
        match (major, minor) {
            (..=7, _) | (8, 0) => 64,
            _ => 128,
        }
    }

    /// The peak in TFLOP/s, if the clock is known.
    pub fn tflops(&self) -> Option<f64> {
        (self.clock_khz > 0).then(|| {
            self.multiprocessors as f64 * self.lanes as f64 * 2.0 * self.clock_khz as f64 * 1e3
                / 1e12
        })
    }
}

/// The benches' data: `i` scrambled by a multiplicative hash, modulo
/// `modulus` (the values the peer programs draw too).
pub fn hash(i: usize, modulus: u64) -> u64 {
    (i as u64).wrapping_mul(2_654_435_761) % modulus
}

/// Copies of `host` on the device, enough that together they are at least
/// twice the L2 cache (at most 4): rotating through them, every timed launch
/// reads DRAM rather than what the previous launch left in L2.
pub fn device_copies<T: Pod>(bench: &Bench, host: &[T]) -> Result<Vec<Buffer<T>>, String> {
    let bytes = size_of_val(host) as u64;
    let copies = (2 * bench.ctx.info().l2_bytes as u64)
        .div_ceil(bytes.max(1))
        .clamp(1, 4);
    (0..copies)
        .map(|_| bench.ctx.upload(host).map_err(|e| e.to_string()))
        .collect()
}

/// The generic ladder driver: one row per step of `L` for which `applies`
/// holds, `measure` returning its timing (after checking its result),
/// compared with the peers of group `versus`.
pub fn ladder_rows<L: Ladder>(
    bench: &mut Bench,
    case: &str,
    versus: &'static str,
    applies: impl Fn(L) -> bool,
    mut measure: impl FnMut(&Bench, L) -> Result<Timing, String>,
) -> Result<Vec<Row>, String> {
    let mut rows = Vec::new();
    let steps: Vec<L> = L::ALL
        .iter()
        .copied()
        .filter(|&s| applies(s) && bench.runs(s.name()))
        .collect();
    for step in steps {
        let timing = measure(bench, step)?;
        bench.progress(&format!("{} {case} {}", L::FAMILY, step.name()), timing);
        rows.push(Row {
            step: step.step(),
            variant: step.name(),
            ms: timing.ms,
            batch_ms: timing.batch_ms,
            versus,
        });
    }
    Ok(rows)
}

impl<'a> Bench<'a> {
    pub fn new(
        ctx: &'a Context,
        reps: usize,
        quick: bool,
        peers: Peers,
        hold: bool,
        warmup: Duration,
    ) -> Result<Self, String> {
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
        let clock_khz = cust::device::Device::get_device(info.ordinal)
            .and_then(|d| d.get_attribute(cust::device::DeviceAttribute::ClockRate))
            .map_or(0, |khz| u32::try_from(khz).unwrap_or(0));
        let mut bench = Bench {
            ctx,
            reps,
            quick,
            memcpy_gbs: 0.0,
            memcpy_batch_gbs: 0.0,
            peak: Peak {
                multiprocessors: info.multiprocessors,
                lanes: Peak::lanes_per_sm(info.compute_capability),
                clock_khz,
            },
            peers,
            masks: Vec::new(),
            steps: Vec::new(),
            steps_found: Vec::new(),
            tma_tiles: TmaTiles::Auto,
            out: None,
            cases: Vec::new(),
            scaling: Vec::new(),
            kernels: Vec::new(),
            warmup,
            hold: if hold { Some(Hold::new()?) } else { None },
            measurements: 0,
        };
        // 1 GiB device-to-device copy: the bandwidth ceiling of this run.
        let bytes = 1usize << 30;
        let src = ctx.zeros::<u8>(bytes).map_err(|e| e.to_string())?;
        let mut dst = ctx.zeros::<u8>(bytes).map_err(|e| e.to_string())?;
        let timing = bench.time(|| ctx.copy(&src, &mut dst).map_err(|e| e.to_string()))?;
        let gbs = |ms: f64| 2.0 * bytes as f64 / ms / 1e6;
        bench.memcpy_gbs = gbs(timing.ms);
        // A copy of a millisecond or more is not timed back to back: its
        // gap is negligible, so the back-to-back rate is the same.
        bench.memcpy_batch_gbs = gbs(timing.batch_ms.unwrap_or(timing.ms));
        println!(
            "device-to-device memcpy, 1 GiB: {:.3} ms, {:.0} GB/s (read + written); back to back {:.0} GB/s",
            timing.ms, bench.memcpy_gbs, bench.memcpy_batch_gbs
        );
        Ok(bench)
    }

    /// Whether `--steps` lets the step named `name` run: every step
    /// without it. Notes the names it lets through, so that a name no
    /// ladder has can be reported.
    pub fn runs(&mut self, name: &str) -> bool {
        if self.steps.is_empty() {
            return true;
        }
        let chosen = self.steps.iter().any(|n| n == name);
        if chosen && !self.steps_found.iter().any(|n| n == name) {
            self.steps_found.push(name.to_string());
        }
        chosen
    }

    /// A progress line on stderr: a long run must not look hung.
    pub fn progress(&mut self, what: &str, timing: Timing) {
        self.measurements += 1;
        let batch = timing
            .batch_ms
            .map_or(String::new(), |b| format!(" (back to back {b:.4})"));
        eprintln!(
            "[{:>4}] {what}: {:.4} ms{batch}",
            self.measurements, timing.ms
        );
        let _ = std::io::stderr().flush();
    }

    /// [`Bench::reps`] runs of `launch` after warm-up ([`Bench::time_reps`]).
    pub fn time(&self, launch: impl FnMut() -> Result<(), String>) -> Result<Timing, String> {
        self.time_reps(self.reps, launch)
    }

    /// `reps` runs of `launch` (fewer than [`Bench::reps`] for launches of
    /// a large fraction of a second) after warm-up ([`WARMUP`] launches or
    /// [`Bench::warmup`] of them, whichever lasts longer), each timed on
    /// its own; then, for launches under [`BATCH_BELOW_MS`], [`BATCH_WINDOWS`]
    /// windows of up to `reps` launches back to back ([`Timing`]).
    ///
    /// The runs are enqueued in windows of up to [`WINDOW`] behind a
    /// kernel that holds the stream until the whole window is queued
    /// ([`Hold`]): the GPU then runs them back to back, so the host's
    /// launch latency is never counted as kernel time, however short the
    /// kernel (without the hold it would be, for launches shorter than the
    /// host's cost of issuing one). The peer programs time the same way,
    /// each launch on its own.
    pub fn time_reps(
        &self,
        reps: usize,
        launch: impl FnMut() -> Result<(), String>,
    ) -> Result<Timing, String> {
        self.time_windows(reps, WINDOW, launch)
    }

    /// [`Bench::time_reps`] in windows of at most `window` calls: for calls
    /// of many launches each (a sort of 32 passes is about a hundred),
    /// whose windows of [`WINDOW`] would fill the driver's launch queue
    /// while the hold keeps it from draining.
    pub fn time_windows(
        &self,
        reps: usize,
        window: usize,
        mut launch: impl FnMut() -> Result<(), String>,
    ) -> Result<Timing, String> {
        let reps = reps.max(1);
        let most = window.clamp(1, WINDOW);
        let begin = Instant::now();
        for _ in 0..WARMUP {
            launch()?;
        }
        self.ctx.synchronize().map_err(|e| e.to_string())?;
        while begin.elapsed() < self.warmup {
            for _ in 0..WARMUP_GROUP {
                launch()?;
            }
            self.ctx.synchronize().map_err(|e| e.to_string())?;
        }
        let mut times = Vec::with_capacity(reps);
        let mut left = reps;
        while left > 0 {
            let window = left.min(most);
            left -= window;
            times.extend(self.window(window, true, &mut launch)?);
        }
        let ms = median(times);
        let batch_ms = if ms < BATCH_BELOW_MS {
            let window = reps.min(most);
            let mut per_launch = Vec::with_capacity(BATCH_WINDOWS);
            for _ in 0..BATCH_WINDOWS {
                let whole = self.window(window, false, &mut launch)?;
                per_launch.push(whole[0] / window as f64);
            }
            Some(median(per_launch))
        } else {
            None
        };
        Ok(Timing { ms, batch_ms })
    }

    /// Milliseconds of `window` launches queued behind the hold: each
    /// launch's own where `each`, else the whole window's (one value).
    fn window(
        &self,
        window: usize,
        each: bool,
        launch: &mut impl FnMut() -> Result<(), String>,
    ) -> Result<Vec<f64>, String> {
        // SAFETY: the stream only records events and runs the hold's
        // kernel; no callback is added and no context is dropped in one.
        let stream = unsafe { self.ctx.stream() }.ok_or("the bench's queue owns its stream")?;
        let err = |e: cust::error::CudaError| e.to_string();
        let event = || Event::new(EventFlags::DEFAULT).map_err(err);
        let mut events = Vec::with_capacity(window);
        if let Some(hold) = &self.hold {
            hold.hold(stream)?;
        }
        // One pair of events around each launch, or around the window.
        let (pairs, launches_per_pair) = if each { (window, 1) } else { (1, window) };
        let queued = (0..pairs).try_for_each(|_| {
            let (start, stop) = (event()?, event()?);
            start.record(stream).map_err(err)?;
            for _ in 0..launches_per_pair {
                launch()?;
            }
            stop.record(stream).map_err(err)?;
            events.push((start, stop));
            Ok::<(), String>(())
        });
        // Released even after an error, so that nothing stays held.
        if let Some(hold) = &self.hold {
            hold.release();
        }
        self.ctx.synchronize().map_err(|e| e.to_string())?;
        queued?;
        if self.hold.as_ref().is_some_and(Hold::timed_out) {
            return Err(
                "a timed launch waited for its own stream (it synchronises): \
                        the hold timed out"
                    .into(),
            );
        }
        events
            .iter()
            .map(|(start, stop)| stop.elapsed_time_f32(start).map(f64::from).map_err(err))
            .collect()
    }
}
