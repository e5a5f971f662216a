//! The run's results as JSON, and everything rendered from that JSON: the
//! tables printed during the run, the Markdown report and the SVG charts.
//!
//! ## `ladder.json`
//!
//! A header of device facts and run settings, one key per line:
//! `device` (name), `compute_capability`, `multiprocessors`, `l2_bytes`,
//! `memory_bytes`, `ptx` (the target loaded), `jit` (`false`: the shipped
//! cubin of `ptx` was loaded; `true`: the driver compiled its PTX; absent in
//! JSON written before it was), `reps` (timed launches per
//! median), `stream_held` (`true`: the timed launches were queued behind
//! the hold kernel of `hold.rs`; absent in JSON written before it was,
//! whose launches were only enqueued back to back), `memcpy_gbs` (this
//! run's 1 GiB device-to-device copy, bytes read and written per second),
//! `memcpy_batch_gbs` (the same copies back to back, see `batch_ms` below;
//! absent in JSON written before it was),
//! `fp32_lanes_per_sm`, `sm_clock_khz` (the
//! SM clock the driver reports: the boost clock; 0 if it did not say) and
//! `fp32_peak_tflops` (`multiprocessors × fp32_lanes_per_sm × 2 ×
//! sm_clock_khz`, absent without a clock). Then `results`, one object per
//! line, by `kind`:
//!
//! * `step`: one ladder step on one input — `family`, `case`, `step`,
//!   `variant`, `versus` (the step's group, absent when empty: the summary
//!   takes the fastest step of each group), `ms` (median), `bytes` (the
//!   least a step must move: each input read once, each output written
//!   once), `gbs` (`bytes / ms`), `ratio_memcpy` (`gbs / memcpy_gbs`),
//!   `batch_ms` (the median time per launch of windows of launches queued
//!   back to back with one pair of events around each window, where `ms`
//!   times each launch between its own events: a launch that follows
//!   another starts while the GPU finishes the one before; absent for
//!   launches of a millisecond or more, whose difference is negligible, and
//!   in JSON written before it was) and `ratio_memcpy_batch` (its rate over
//!   `memcpy_batch_gbs`),
//!   `peer` and `ratio_peer` (the fastest available peer the step is
//!   compared with and `peer ms / ms`: above 1 is faster than the library;
//!   absent without a peer), `speedup_vs_first` (step 1's time over this
//!   one's; absent where step 1 was not measured);
//! * `peer`: a library on the same input — `family`, `case`, `versus` (the
//!   group of steps it compares with, e.g. `sum`; empty: every step of the
//!   case; a group without steps, such as `reference`: none, a reference
//!   line only), `peer`, and either `ms`, `bytes`, `gbs`, `ratio_memcpy`,
//!   or `unavailable` (the reason);
//! * `scaling`: one point of a scaling curve — `family`, `title`, `axis`,
//!   `series`, `n`, `ms`, `bytes`, `gbs`; a series that could not run has
//!   `unavailable` instead of the numbers;
//! * `kernel`: one entry of the loaded module, of a family that ran, as the
//!   driver reports it (`Context::kernel_resources`) — `family` (its family
//!   in `warpspeed::gpu::FAMILIES`, e.g. `image_sums`), `name` (the entry,
//!   e.g. `reduce_fold_f32`), `base` and `ty` (the name without and its
//!   type suffix), `registers` (per thread), `local_bytes` (per thread:
//!   stack and spills), `static_shared_bytes` (per block),
//!   `max_threads_per_block`. Absent in JSON written before they were.
//!
//! The unit of a record is in its keys ([`Unit`]): a compute-bound family
//! (SGEMM) writes `flops` (the floating-point operations of one launch,
//! `2·m·n·k` for a product), `tflops` (`flops / ms`, in 10^12 a second),
//! `ratio_peak` (`tflops / fp32_peak_tflops`) and `ratio_peak_batch` where
//! the others write `bytes`, `gbs`, `ratio_memcpy` and `ratio_memcpy_batch`.

use crate::harness::{BATCH_BELOW_MS, BATCH_WINDOWS, Bench, Case, KernelUse, Scaling, Work};
use crate::peers::field;
use crate::svg;
use std::fmt::Write;

/// What a record's rate counts, and the ceiling it is compared with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Unit {
    /// GB/s of `bytes` moved, × this run's device-to-device copy.
    #[default]
    Bandwidth,
    /// TFLOP/s of `flops` done, × the device's FP32 peak.
    Compute,
}

impl Unit {
    pub fn of(work: Work) -> Unit {
        match work {
            Work::Bytes => Unit::Bandwidth,
            Work::Flops(_) => Unit::Compute,
        }
    }

    /// Its JSON keys: the amount of one launch, the rate, the rate over
    /// the ceiling, the back-to-back rate over the ceiling.
    fn keys(self) -> [&'static str; 4] {
        match self {
            Unit::Bandwidth => ["bytes", "gbs", "ratio_memcpy", "ratio_memcpy_batch"],
            Unit::Compute => ["flops", "tflops", "ratio_peak", "ratio_peak_batch"],
        }
    }

    /// The unit of the rate.
    pub fn label(self) -> &'static str {
        match self {
            Unit::Bandwidth => "GB/s",
            Unit::Compute => "TFLOP/s",
        }
    }

    /// The ceiling, as a column heading says it (`× memcpy`).
    fn ceiling(self) -> &'static str {
        match self {
            Unit::Bandwidth => "memcpy",
            Unit::Compute => "FP32 peak",
        }
    }

    /// The ceiling's line in a chart.
    pub fn ceiling_line(self) -> &'static str {
        match self {
            Unit::Bandwidth => "device memcpy",
            Unit::Compute => "FP32 peak (boost clock)",
        }
    }

    /// The rate of `amount` done in `ms` milliseconds.
    fn rate(self, amount: f64, ms: f64) -> f64 {
        match self {
            Unit::Bandwidth => amount / ms / 1e6,
            Unit::Compute => amount / ms / 1e9,
        }
    }

    /// Decimals of a rate in the JSON.
    fn json_digits(self) -> usize {
        match self {
            Unit::Bandwidth => 1,
            Unit::Compute => 3,
        }
    }

    /// Decimals of a rate in tables and charts.
    pub fn digits(self) -> usize {
        match self {
            Unit::Bandwidth => 0,
            Unit::Compute => 1,
        }
    }
}

/// The two ceilings of a run: the copy bandwidth in GB/s (of copies each
/// timed on its own, and back to back) and the FP32 peak in TFLOP/s
/// (unknown without the SM clock).
#[derive(Clone, Copy, Debug)]
pub struct Ceilings {
    pub memcpy_gbs: f64,
    pub memcpy_batch_gbs: f64,
    pub peak_tflops: Option<f64>,
}

impl Ceilings {
    pub fn of_bench(bench: &Bench) -> Ceilings {
        Ceilings {
            memcpy_gbs: bench.memcpy_gbs,
            memcpy_batch_gbs: bench.memcpy_batch_gbs,
            peak_tflops: bench.peak.tflops(),
        }
    }

    /// The ceiling of `unit`, if known.
    pub fn of(&self, unit: Unit) -> Option<f64> {
        match unit {
            Unit::Bandwidth => Some(self.memcpy_gbs),
            Unit::Compute => self.peak_tflops,
        }
    }

    /// The ceiling of `unit` for launches back to back, if known: the
    /// copies back to back for bandwidth, the same peak for compute.
    fn of_batch(&self, unit: Unit) -> Option<f64> {
        match unit {
            Unit::Bandwidth => Some(self.memcpy_batch_gbs).filter(|&g| g > 0.0),
            Unit::Compute => self.peak_tflops,
        }
    }
}

/// The amount of one launch's work: a case's or a point's `bytes`, or the
/// flops of `work`.
fn work_amount(bytes: f64, work: Work) -> f64 {
    match work {
        Work::Bytes => bytes,
        Work::Flops(flops) => flops,
    }
}

/// The amount of work of one launch ([`work_amount`]), its unit, and the JSON of `amount, rate[, ratio]` for
/// a launch of `ms`.
fn measure(bytes: f64, work: Work, ms: f64, ceilings: Ceilings, with_ratio: bool) -> String {
    let unit = Unit::of(work);
    let amount = work_amount(bytes, work);
    let [amount_key, rate_key, ratio_key, _] = unit.keys();
    let rate = unit.rate(amount, ms);
    let mut out = format!(
        ",\"{amount_key}\":{amount},\"{rate_key}\":{rate:.digits$}",
        digits = unit.json_digits()
    );
    if let Some(ceiling) = ceilings.of(unit).filter(|_| with_ratio) {
        let _ = write!(out, ",\"{ratio_key}\":{:.4}", rate / ceiling);
    }
    out
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "'")
}

/// The JSON lines of one case, its rates those of `work`.
pub fn case_records(case: &Case, work: Work, ceilings: Ceilings) -> Vec<String> {
    let head = |kind: &str| {
        format!(
            "{{\"kind\":\"{kind}\",\"family\":\"{}\",\"case\":\"{}\"",
            case.family,
            escape(&case.case)
        )
    };
    let first = case.rows.iter().find(|r| r.step == 1).map(|r| r.ms);
    let mut lines = Vec::new();
    for r in &case.rows {
        let mut line = format!(
            "{},\"step\":{},\"variant\":\"{}\"",
            head("step"),
            r.step,
            r.variant
        );
        if !r.versus.is_empty() {
            let _ = write!(line, ",\"versus\":\"{}\"", escape(r.versus));
        }
        let _ = write!(
            line,
            ",\"ms\":{:.6}{}",
            r.ms,
            measure(case.bytes, work, r.ms, ceilings, true)
        );
        if let Some(batch) = r.batch_ms {
            let unit = Unit::of(work);
            let amount = work_amount(case.bytes, work);
            let _ = write!(line, ",\"batch_ms\":{batch:.6}");
            if let Some(ceiling) = ceilings.of_batch(unit) {
                let _ = write!(
                    line,
                    ",\"{}\":{:.4}",
                    unit.keys()[3],
                    unit.rate(amount, batch) / ceiling
                );
            }
        }
        if let Some((peer, ms)) = case.best_peer(r.versus) {
            let _ = write!(
                line,
                ",\"peer\":\"{}\",\"ratio_peer\":{:.4}",
                escape(peer),
                ms / r.ms
            );
        }
        if let Some(first) = first {
            let _ = write!(line, ",\"speedup_vs_first\":{:.3}", first / r.ms);
        }
        line.push('}');
        lines.push(line);
    }
    for (versus, p) in &case.peers {
        let mut line = format!(
            "{},\"versus\":\"{versus}\",\"peer\":\"{}\"",
            head("peer"),
            escape(&p.name)
        );
        match &p.outcome {
            Ok(ms) => {
                let _ = write!(
                    line,
                    ",\"ms\":{ms:.6}{}}}",
                    measure(case.bytes, work, *ms, ceilings, true)
                );
            }
            Err(why) => {
                let _ = write!(line, ",\"unavailable\":\"{}\"}}", escape(why));
            }
        }
        lines.push(line);
    }
    lines
}

/// The JSON lines of one scaling curve, the rate of each point that of
/// its `works` entry.
pub fn scaling_records(s: &Scaling, works: &[Work]) -> Vec<String> {
    let head = |series: &str| {
        format!(
            "{{\"kind\":\"scaling\",\"family\":\"{}\",\"title\":\"{}\",\"axis\":\"{}\",\"series\":\"{}\"",
            s.family,
            escape(&s.title),
            s.axis,
            escape(series)
        )
    };
    // Scaling points carry no ratio: the ceiling is not needed.
    let no_ceiling = Ceilings {
        memcpy_gbs: 0.0,
        memcpy_batch_gbs: 0.0,
        peak_tflops: None,
    };
    let mut lines: Vec<String> = s
        .points
        .iter()
        .zip(works)
        .map(|(p, &work)| {
            format!(
                "{},\"n\":{},\"ms\":{:.6}{}}}",
                head(&p.series),
                p.n,
                p.ms,
                measure(p.bytes, work, p.ms, no_ceiling, false)
            )
        })
        .collect();
    for (series, why) in &s.unavailable {
        lines.push(format!(
            "{},\"unavailable\":\"{}\"}}",
            head(series),
            escape(why)
        ));
    }
    lines
}

/// The JSON line of one kernel.
pub fn kernel_record(k: &KernelUse) -> String {
    let r = &k.resources;
    format!(
        "{{\"kind\":\"kernel\",\"family\":\"{}\",\"name\":\"{}\",\"base\":\"{}\",\"ty\":\"{}\",\"registers\":{},\"local_bytes\":{},\"static_shared_bytes\":{},\"max_threads_per_block\":{}}}",
        k.family,
        r.name,
        k.base,
        k.ty,
        r.registers,
        r.local_bytes,
        r.static_shared_bytes,
        r.max_threads_per_block
    )
}

/// The whole run as JSON (see the module docs).
pub fn json(bench: &Bench) -> String {
    let info = bench.ctx.info();
    let ceilings = Ceilings::of_bench(bench);
    let mut results: Vec<String> = Vec::new();
    for (case, work) in &bench.cases {
        results.extend(case_records(case, *work, ceilings));
    }
    for (s, works) in &bench.scaling {
        results.extend(scaling_records(s, works));
    }
    results.extend(bench.kernels.iter().map(kernel_record));
    let peak = bench
        .peak
        .tflops()
        .map_or(String::new(), |t| format!("\"fp32_peak_tflops\":{t:.2},\n"));
    format!(
        "{{\n\"device\":\"{}\",\n\"compute_capability\":\"{}.{}\",\n\"multiprocessors\":{},\n\"max_threads_per_sm\":{},\n\"l2_bytes\":{},\n\"memory_bytes\":{},\n\"ptx\":\"{}\",\n\"jit\":{},\n\"reps\":{},\n\"stream_held\":true,\n\"memcpy_gbs\":{:.1},\n\"memcpy_batch_gbs\":{:.1},\n\"fp32_lanes_per_sm\":{},\n\"sm_clock_khz\":{},\n{peak}\"results\":[\n{}\n]\n}}\n",
        escape(&info.name),
        info.compute_capability.0,
        info.compute_capability.1,
        info.multiprocessors,
        info.max_threads_per_multiprocessor,
        info.l2_bytes,
        info.total_memory,
        info.ptx_target,
        info.jit,
        bench.reps,
        bench.memcpy_gbs,
        bench.memcpy_batch_gbs,
        bench.peak.lanes,
        bench.peak.clock_khz,
        results.join(",\n")
    )
}

/// One result line, read back.
#[derive(Clone, Debug, Default)]
pub struct Record {
    pub kind: String,
    pub family: String,
    pub case: String,
    pub step: String,
    pub variant: String,
    /// The step's group (absent in JSON written before groups were).
    pub versus: Option<String>,
    pub ms: Option<f64>,
    /// What `rate` counts, from the record's keys.
    pub unit: Unit,
    /// GB/s or TFLOP/s.
    pub rate: Option<f64>,
    /// The rate over the ceiling of its unit.
    pub ratio_ceiling: Option<f64>,
    /// A step's time per launch back to back, and its rate over the
    /// back-to-back ceiling (absent for long launches and in older JSON).
    pub batch_ms: Option<f64>,
    pub ratio_ceiling_batch: Option<f64>,
    pub peer: Option<String>,
    pub ratio_peer: Option<f64>,
    pub speedup: Option<f64>,
    pub unavailable: Option<String>,
    pub title: String,
    pub axis: String,
    pub series: String,
    pub n: usize,
    /// A `kernel` record's entry, its base and type, and what it uses.
    pub name: String,
    pub base: String,
    pub ty: String,
    pub registers: u32,
    pub local_bytes: u32,
    pub static_shared_bytes: u32,
}

impl Record {
    /// A `step` or `peer`: a row of a case's table.
    fn of_case(&self) -> bool {
        self.kind == "step" || self.kind == "peer"
    }
}

/// The result lines of a JSON file written by [`json`] (or of a case).
pub fn parse(text: &str) -> Vec<Record> {
    text.lines()
        .filter(|l| l.trim_start().starts_with("{\"kind\""))
        .map(|l| {
            let s = |k| field(l, k).unwrap_or_default();
            let f = |k| field(l, k).and_then(|v| v.parse().ok());
            let u = |k| field(l, k).and_then(|v| v.parse().ok()).unwrap_or(0);
            let unit = if field(l, Unit::Compute.keys()[0]).is_some() {
                Unit::Compute
            } else {
                Unit::Bandwidth
            };
            let [_, rate, ratio, ratio_batch] = unit.keys();
            Record {
                kind: s("kind"),
                family: s("family"),
                case: s("case"),
                step: s("step"),
                variant: s("variant"),
                versus: field(l, "versus"),
                ms: f("ms"),
                unit,
                rate: f(rate),
                ratio_ceiling: f(ratio),
                batch_ms: f("batch_ms"),
                ratio_ceiling_batch: f(ratio_batch),
                peer: field(l, "peer"),
                ratio_peer: f("ratio_peer"),
                speedup: f("speedup_vs_first"),
                unavailable: field(l, "unavailable"),
                title: s("title"),
                axis: s("axis"),
                series: s("series"),
                n: f("n").map_or(0, |n: f64| n as usize),
                name: s("name"),
                base: s("base"),
                ty: s("ty"),
                registers: u("registers"),
                local_bytes: u("local_bytes"),
                static_shared_bytes: u("static_shared_bytes"),
            }
        })
        .collect()
}

/// A header value of the JSON file.
pub fn header(text: &str, key: &str) -> String {
    text.lines()
        .take_while(|l| !l.starts_with("\"results\""))
        .find_map(|l| field(l, key))
        .unwrap_or_default()
}

/// `v` with `digits` decimals, `—` if absent.
fn num(v: Option<f64>, digits: usize) -> String {
    v.map_or("—".into(), |v| format!("{v:.digits$}"))
}

/// The back-to-back column of a table, present where some step of it was
/// timed back to back (never for JSON written before that was measured).
#[derive(Clone, Copy)]
struct BackToBack(bool);

impl BackToBack {
    fn of<'r>(steps: impl IntoIterator<Item = &'r Record>) -> BackToBack {
        BackToBack(steps.into_iter().any(|r| r.batch_ms.is_some()))
    }

    /// Its heading and alignment, each ending a column (or nothing).
    fn head(self, unit: Unit) -> (String, &'static str) {
        if self.0 {
            (format!(" back to back (× {}) |", unit.ceiling()), "---:|")
        } else {
            (String::new(), "")
        }
    }

    /// A step's cell: its time back to back and, in brackets, its rate over
    /// the back-to-back ceiling; `—` where it was not measured.
    fn cell(self, r: &Record) -> String {
        match (self.0, r.batch_ms) {
            (false, _) => String::new(),
            (true, Some(ms)) => {
                format!(" {:.1} µs ({}) |", ms * 1e3, num(r.ratio_ceiling_batch, 2))
            }
            (true, None) => " — |".into(),
        }
    }

    /// An empty cell of a peer's row.
    fn blank(self) -> &'static str {
        if self.0 { " |" } else { "" }
    }
}

/// The unit of a group of records: that of their first measured step (or
/// point, or peer).
pub fn unit_of(records: &[&Record]) -> Unit {
    records
        .iter()
        .find(|r| r.rate.is_some())
        .map_or(Unit::Bandwidth, |r| r.unit)
}

/// The Markdown table of one case's records.
pub fn case_table(records: &[&Record]) -> String {
    let unit = unit_of(records);
    let digits = unit.digits();
    let batch = BackToBack::of(records.iter().copied());
    let (batch_head, batch_align) = batch.head(unit);
    let mut out = format!(
        "| step | variant | time | {} | × {} |{batch_head} × best peer | speedup |\n|---:|---|---:|---:|---:|{batch_align}---:|---:|\n",
        unit.label(),
        unit.ceiling(),
    );
    for r in records.iter().filter(|r| r.kind == "step") {
        let _ = writeln!(
            out,
            "| {} | {} | {} µs | {} | {} |{} {} | {} |",
            r.step,
            r.variant,
            num(r.ms.map(|ms| ms * 1e3), 1),
            num(r.rate, digits),
            num(r.ratio_ceiling, 2),
            batch.cell(r),
            r.ratio_peer.map_or("—".into(), |v| format!("**{v:.2}**")),
            r.speedup.map_or("—".into(), |v| format!("{v:.1}×"))
        );
    }
    for r in records.iter().filter(|r| r.kind == "peer") {
        let name = r.peer.clone().unwrap_or_default();
        match &r.unavailable {
            Some(why) => {
                let _ = writeln!(
                    out,
                    "| peer | {name} | not available: {why} | | |{} | |",
                    batch.blank()
                );
            }
            None => {
                let _ = writeln!(
                    out,
                    "| peer | {name} | {} µs | {} | {} |{} | |",
                    num(r.ms.map(|ms| ms * 1e3), 1),
                    num(r.rate, digits),
                    num(r.ratio_ceiling, 2),
                    batch.blank()
                );
            }
        }
    }
    out
}

/// A case's table, as printed during the run.
pub fn table(case: &Case, work: Work, bench: &Bench) -> String {
    let text = case_records(case, work, Ceilings::of_bench(bench)).join("\n");
    let records = parse(&text);
    case_table(&records.iter().collect::<Vec<_>>())
}

/// A scaling curve's table: one row per size, one column per series.
pub fn scaling_markdown(records: &[&Record]) -> String {
    let mut series: Vec<&str> = Vec::new();
    let mut sizes: Vec<usize> = Vec::new();
    for r in records {
        if !series.contains(&r.series.as_str()) {
            series.push(&r.series);
        }
        if r.unavailable.is_none() && !sizes.contains(&r.n) {
            sizes.push(r.n);
        }
    }
    let axis = records.first().map_or("", |r| r.axis.as_str());
    let mut out = format!("| {axis} | {} |\n|---:|", series.join(" | "));
    out.push_str(&"---:|".repeat(series.len()));
    out.push('\n');
    for n in sizes {
        let cells: Vec<String> = series
            .iter()
            .map(|s| {
                records
                    .iter()
                    .find(|r| r.series == *s && r.n == n && r.ms.is_some())
                    .map_or("—".into(), |r| {
                        format!(
                            "{:.1} µs, {:.digits$} {}",
                            r.ms.unwrap_or(0.0) * 1e3,
                            r.rate.unwrap_or(0.0),
                            r.unit.label(),
                            digits = r.unit.digits()
                        )
                    })
            })
            .collect();
        let _ = writeln!(out, "| {} | {} |", size_label(n), cells.join(" | "));
    }
    for r in records.iter().filter(|r| r.unavailable.is_some()) {
        let _ = writeln!(
            out,
            "\n{}: not available: {}",
            r.series,
            r.unavailable.as_deref().unwrap_or("")
        );
    }
    out
}

/// A scaling curve's table, as printed during the run.
pub fn scaling_table(s: &Scaling, works: &[Work]) -> String {
    let records = parse(&scaling_records(s, works).join("\n"));
    scaling_markdown(&records.iter().collect::<Vec<_>>())
}

/// The 256-thread blocks one SM holds for a kernel of `registers` per
/// thread: its 65536 registers (allocated 8 a thread at a time) and its
/// `max_threads` threads both bound it; `None` for 0 registers.
fn blocks_by_registers(registers: u32, max_threads: u32) -> Option<u32> {
    (registers > 0).then(|| (65536 / (registers.div_ceil(8) * 8 * 256)).min(max_threads / 256))
}

/// The Markdown table of kernel records: one row per entry, or per run of
/// entries of one base with the same figures (`reduce_fold_{f32,i32,u32}`).
pub fn kernel_table(kernels: &[&Record], max_threads_per_sm: u32) -> String {
    let mut out = String::from(
        "| entry | registers | local bytes | static shared bytes | blocks/SM (256 threads) |\n|---|---:|---:|---:|---:|\n",
    );
    let key = |r: &Record| {
        let base = if r.base.is_empty() { &r.name } else { &r.base };
        (
            base.clone(),
            r.registers,
            r.local_bytes,
            r.static_shared_bytes,
        )
    };
    for run in kernels.chunk_by(|a, b| key(a) == key(b)) {
        let r = run[0];
        let entry = match run {
            [one] => one.name.clone(),
            _ => {
                let types: Vec<&str> = run.iter().map(|k| k.ty.as_str()).collect();
                format!("{}_{{{}}}", r.base, types.join(","))
            }
        };
        let _ = writeln!(
            out,
            "| {entry} | {} | {} | {} | {} |",
            r.registers,
            r.local_bytes,
            r.static_shared_bytes,
            num(
                blocks_by_registers(r.registers, max_threads_per_sm).map(f64::from),
                0
            )
        );
    }
    out
}

/// The line under a kernel table: whose figures they are, and the formula.
fn kernel_note(text: &str) -> String {
    let module = match header(text, "jit").as_str() {
        "false" => ", the shipped cubin",
        "true" => ", JIT-compiled by the driver from its PTX",
        _ => "",
    };
    format!(
        "The driver's figures for the loaded module (`{}`{module}): registers and local bytes \
         (stack and spills) per thread, static shared bytes per block. Blocks/SM = min(floor(65536 / \
         (registers rounded up to a multiple of 8 × 256)), threads per SM / 256): the 256-thread \
         blocks an SM's registers and thread slots hold (shared memory can allow fewer).\n",
        header(text, "ptx")
    )
}

/// `2^20` for powers of two above 1024, the number otherwise.
fn size_label(n: usize) -> String {
    if n.is_power_of_two() && n > 1024 {
        format!("2^{}", n.trailing_zeros())
    } else {
        n.to_string()
    }
}

/// A file name from a family and case: `reduce-f32-2-28.svg`.
fn slug(parts: &[&str]) -> String {
    let raw = parts.join("-").to_lowercase();
    let mut out = String::new();
    for c in raw.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

/// The fastest step of each case and group (its `versus`, or, in JSON
/// without groups, its peer), against its ceiling and its best peer: the
/// tables the README shows, one per unit.
pub fn summary(records: &[Record], cases: &[(&str, &str)]) -> String {
    let mut out = String::from("\n## Summary: the fastest step of each case\n");
    for unit in [Unit::Bandwidth, Unit::Compute] {
        let of_unit: Vec<(&str, &str)> = cases
            .iter()
            .filter(|(family, case)| {
                let steps: Vec<&Record> = records
                    .iter()
                    .filter(|r| r.kind == "step" && r.family == *family && r.case == *case)
                    .collect();
                unit_of(&steps) == unit
            })
            .copied()
            .collect();
        // A table per unit that has cases (the bandwidth one also when none has).
        if of_unit.is_empty() && !(unit == Unit::Bandwidth && cases.is_empty()) {
            continue;
        }
        out.push('\n');
        out.push_str(&summary_table(records, &of_unit, unit));
    }
    out
}

/// The summary's table of `cases`, all of `unit`: the fastest step of
/// each group of each case.
pub fn summary_table(records: &[Record], cases: &[(&str, &str)], unit: Unit) -> String {
    let batch = BackToBack::of(
        records
            .iter()
            .filter(|r| r.kind == "step" && cases.contains(&(r.family.as_str(), r.case.as_str()))),
    );
    let (batch_head, batch_align) = batch.head(unit);
    let mut out = format!(
        "| family | case | step | time | {} | × {} |{batch_head} × best peer (peer) |\n|---|---|---|---:|---:|---:|{batch_align}---|\n",
        unit.label(),
        unit.ceiling(),
    );
    for (family, case) in cases {
        summary_rows(&mut out, records, family, case, unit, batch);
    }
    out
}

/// The summary's rows of one case.
fn summary_rows(
    out: &mut String,
    records: &[Record],
    family: &str,
    case: &str,
    unit: Unit,
    batch: BackToBack,
) {
    let steps: Vec<&Record> = records
        .iter()
        .filter(|r| r.kind == "step" && r.family == family && r.case == case)
        .collect();
    let group = |r: &Record| (r.versus.clone(), r.peer.clone());
    let mut groups = Vec::new();
    for r in &steps {
        if !groups.contains(&group(r)) {
            groups.push(group(r));
        }
    }
    for g in groups {
        let best = steps
            .iter()
            .filter(|r| group(r) == g)
            .max_by(|a, b| a.rate.unwrap_or(0.0).total_cmp(&b.rate.unwrap_or(0.0)));
        if let Some(r) = best {
            let versus = match (r.ratio_peer, &r.peer) {
                (Some(ratio), Some(peer)) => format!("**{ratio:.2}** ({peer})"),
                _ => "— (no peer)".into(),
            };
            let _ = writeln!(
                out,
                "| {family} | {case} | {} {} | {:.1} µs | {} | {} |{} {versus} |",
                r.step,
                r.variant,
                r.ms.unwrap_or(0.0) * 1e3,
                num(r.rate, unit.digits()),
                num(r.ratio_ceiling, 2),
                batch.cell(r)
            );
        }
    }
}

/// The report's paragraph on the back-to-back column, empty for JSON
/// written before it was measured.
fn batch_note(text: &str) -> String {
    let Ok(gbs) = header(text, "memcpy_batch_gbs").parse::<f64>() else {
        return String::new();
    };
    format!(
        "\n\"Time\" is the median of launches each timed between its own pair of events: one \
         launch on its own, the GPU's cost of starting and finishing it included, as the peers \
         are timed. \"Back to back\" (launches under {BATCH_BELOW_MS} ms) is the median time per \
         launch of {BATCH_WINDOWS} windows of as many launches queued one after another, one pair of events \
         around each window: what a launch costs in a sequence, where the GPU starts each one \
         while it finishes the one before (about a microsecond less per launch); its ratio is \
         over the copy's bandwidth back to back, **{gbs:.0} GB/s** in this run.\n"
    )
}

/// Everything rendered from a JSON file: the Markdown report and the SVG
/// charts, as `(file name, contents)`.
pub fn render(text: &str) -> Vec<(String, String)> {
    let records = parse(text);
    let ceilings = Ceilings {
        memcpy_gbs: header(text, "memcpy_gbs").parse().unwrap_or(0.0),
        memcpy_batch_gbs: header(text, "memcpy_batch_gbs").parse().unwrap_or(0.0),
        peak_tflops: header(text, "fp32_peak_tflops").parse().ok(),
    };
    let memcpy = ceilings.memcpy_gbs;
    let mut files = Vec::new();
    let queued = if header(text, "stream_held") == "true" {
        "launches queued behind a kernel that holds the stream, so that the GPU runs them back to \
         back"
    } else {
        "launches back to back"
    };
    let mut md = format!(
        "# warpspeed benchmark: {}\n\nCompute capability {}, {} SMs, PTX `{}`; {} timed launches per \
         median (CUDA events, 3 warm-ups, {queued}); this run's device-to-device copy: \
         **{memcpy:.0} GB/s** (read + written). GB/s count each input byte read once and each output \
         byte written once. \"× best peer\" is the fastest NVIDIA library's time over the step's \
         (above 1: faster than the library), measured in the same run with the same method.\n{}",
        header(text, "device"),
        header(text, "compute_capability"),
        header(text, "multiprocessors"),
        header(text, "ptx"),
        header(text, "reps"),
        batch_note(text),
    );
    if records.iter().any(|r| r.unit == Unit::Compute) {
        let peak = match ceilings.peak_tflops {
            Some(peak) => format!(
                "this device's FP32 peak, **{peak:.1} TFLOP/s**: {} SMs × {} FP32 lanes × 2 (a \
                 fused multiply-add) × the {:.0} MHz SM clock the driver reports, which is the \
                 boost clock (under a long load the clock, and so the reachable peak, can be \
                 lower)",
                header(text, "multiprocessors"),
                header(text, "fp32_lanes_per_sm"),
                header(text, "sm_clock_khz").parse::<f64>().unwrap_or(0.0) / 1e3
            ),
            None => {
                "the device's FP32 peak, unknown in this run (the driver gave no SM clock)".into()
            }
        };
        let _ = writeln!(
            md,
            "\nCompute-bound families report TFLOP/s instead: the floating-point operations a \
             step must do (2·m·n·k for a matrix product) per second, 10^12 a second; \"× FP32 \
             peak\" is over {peak}."
        );
    }
    let mut cases: Vec<(&str, &str)> = Vec::new();
    for r in records.iter().filter(|r| r.of_case()) {
        if !cases.contains(&(r.family.as_str(), r.case.as_str())) {
            cases.push((&r.family, &r.case));
        }
    }
    md.push_str(&summary(&records, &cases));
    // Each kernel goes under the family section its name starts with (the
    // longest: `row_sums` of `image_sums`), or else the one of its family.
    let sections: Vec<&str> = cases.iter().map(|(f, _)| *f).collect();
    let home = |k: &Record| {
        sections
            .iter()
            .filter(|f| k.name.starts_with(&format!("{f}_")))
            .max_by_key(|f| f.len())
            .or_else(|| sections.iter().find(|f| **f == k.family))
            .copied()
    };
    let kernels: Vec<(&Record, Option<&str>)> = records
        .iter()
        .filter(|r| r.kind == "kernel")
        .map(|r| (r, home(r)))
        .collect();
    // A heading, then the table of the kernels whose home is `of`.
    let kernel_section = |md: &mut String, heading: &str, of: Option<&str>| {
        let rows: Vec<&Record> = kernels
            .iter()
            .filter(|(_, home)| *home == of)
            .map(|(r, _)| *r)
            .collect();
        if !rows.is_empty() {
            let _ = write!(
                md,
                "\n{heading}\n\n{}\n{}",
                kernel_table(
                    &rows,
                    header(text, "max_threads_per_sm").parse().unwrap_or(2048)
                ),
                kernel_note(text)
            );
        }
    };
    let mut family = "";
    for (f, case) in &cases {
        if *f != family {
            if !family.is_empty() {
                kernel_section(&mut md, &format!("### {family} kernels"), Some(family));
            }
            family = f;
            let _ = writeln!(md, "\n## {f}");
        }
        let rows: Vec<&Record> = records
            .iter()
            .filter(|r| r.of_case() && r.family == *f && r.case == *case)
            .collect();
        let chart = format!("{}.svg", slug(&[f, case]));
        let _ = write!(
            md,
            "\n### {f}, {case}\n\n{}\n![{f} {case}]({chart})\n",
            case_table(&rows)
        );
        let unit = unit_of(&rows);
        files.push((
            chart,
            svg::ladder_chart(&format!("{f}, {case}"), &rows, unit, ceilings.of(unit)),
        ));
    }
    if !family.is_empty() {
        kernel_section(&mut md, &format!("### {family} kernels"), Some(family));
    }
    kernel_section(&mut md, "## Other kernels", None);
    let mut curves: Vec<&str> = Vec::new();
    for r in records.iter().filter(|r| r.kind == "scaling") {
        if !curves.contains(&r.title.as_str()) {
            curves.push(&r.title);
        }
    }
    if !curves.is_empty() {
        let _ = writeln!(md, "\n## Scaling");
    }
    for title in curves {
        let points: Vec<&Record> = records
            .iter()
            .filter(|r| r.kind == "scaling" && r.title == title)
            .collect();
        let chart = format!("scaling-{}.svg", slug(&[title]));
        let _ = write!(
            md,
            "\n### {title}\n\n{}\n![{title}]({chart})\n",
            scaling_markdown(&points)
        );
        let unit = unit_of(&points);
        files.push((
            chart,
            svg::scaling_chart(title, &points, unit, ceilings.of(unit)),
        ));
    }
    files.insert(0, ("report.md".into(), md));
    files
}
