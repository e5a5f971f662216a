//! The run's results as JSON: `ladder.json`, written from a [`Bench`]
//! ([`json`]) with the run's [`Ceilings`], a line per step or peer of a case
//! ([`case_records`]), per point of a scaling curve ([`scaling_records`]) and
//! per kernel ([`kernel_record`]). Read back and rendered by the
//! `warpspeed-report` crate (`cargo xtask report`); [`crate::record`]
//! prints each case's and curve's table during the run from these lines.
//!
//! ## `ladder.json`
//!
//! A header of device facts and run settings, one key per line:
//! `device` (name), `compute_capability`, `multiprocessors`, `l2_bytes`,
//! `memory_bytes`, `ptx` (the target loaded), `jit` (`false`: the shipped
//! cubin of `ptx` was loaded; `true`: the driver compiled its PTX; absent in
//! JSON written before it was), `reps` (timed launches per
//! median), `warmup_launches` and `warmup_ms` (the warm-up before each
//! median's launches: launches for `warmup_ms` milliseconds, and
//! `warmup_launches` at the least; absent in JSON written before them, whose
//! warm-up was 3 launches), `stream_held` (`true`: the timed launches were
//! queued behind the hold kernel of `hold.rs`; absent in JSON written before it was,
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
//!   `variant` (step 0, `<precision>_plan`: a precision as its plan runs
//!   it, whichever kernel that is), `versus` (the step's group, absent when empty: the summary
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
//!   in `warpspeed_gpu::FAMILIES`, e.g. `image_sums`), `name` (the entry,
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

use crate::harness::{Bench, Case, KernelUse, Scaling, WARMUP, Work};
use std::fmt::Write;
use warpspeed_report::records::{Ceilings, Unit, escape};

/// The unit of a [`Work`].
fn unit_of(work: Work) -> Unit {
    match work {
        Work::Bytes => Unit::Bandwidth,
        Work::Flops(_) => Unit::Compute,
    }
}

/// The rate in `unit` of `amount` done in `ms` milliseconds.
fn rate(unit: Unit, amount: f64, ms: f64) -> f64 {
    match unit {
        Unit::Bandwidth => amount / ms / 1e6,
        Unit::Compute => amount / ms / 1e9,
    }
}

/// Decimals of a rate in `unit` in the JSON.
fn json_digits(unit: Unit) -> usize {
    match unit {
        Unit::Bandwidth => 1,
        Unit::Compute => 3,
    }
}

/// The run's [`Ceilings`], as the bench measured them.
pub fn ceilings_of(bench: &Bench) -> Ceilings {
    Ceilings {
        memcpy_gbs: bench.memcpy_gbs,
        memcpy_batch_gbs: bench.memcpy_batch_gbs,
        peak_tflops: bench.peak.tflops(),
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
    let unit = unit_of(work);
    let amount = work_amount(bytes, work);
    let [amount_key, rate_key, ratio_key, _] = unit.keys();
    let rate = rate(unit, amount, ms);
    let mut out = format!(
        ",\"{amount_key}\":{amount},\"{rate_key}\":{rate:.digits$}",
        digits = json_digits(unit)
    );
    if let Some(ceiling) = ceilings.of(unit).filter(|_| with_ratio) {
        let _ = write!(out, ",\"{ratio_key}\":{:.4}", rate / ceiling);
    }
    out
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
            let unit = unit_of(work);
            let amount = work_amount(case.bytes, work);
            let _ = write!(line, ",\"batch_ms\":{batch:.6}");
            if let Some(ceiling) = ceilings.of_batch(unit) {
                let _ = write!(
                    line,
                    ",\"{}\":{:.4}",
                    unit.keys()[3],
                    rate(unit, amount, batch) / ceiling
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
fn kernel_record(k: &KernelUse) -> String {
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
    let ceilings = ceilings_of(bench);
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
        "{{\n\"device\":\"{}\",\n\"compute_capability\":\"{}.{}\",\n\"multiprocessors\":{},\n\"max_threads_per_sm\":{},\n\"l2_bytes\":{},\n\"memory_bytes\":{},\n\"ptx\":\"{}\",\n\"jit\":{},\n\"reps\":{},\n\"warmup_launches\":{},\n\"warmup_ms\":{},\n\"stream_held\":true,\n\"memcpy_gbs\":{:.1},\n\"memcpy_batch_gbs\":{:.1},\n\"fp32_lanes_per_sm\":{},\n\"sm_clock_khz\":{},\n{peak}\"results\":[\n{}\n]\n}}\n",
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
        WARMUP,
        bench.warmup.as_millis(),
        bench.memcpy_gbs,
        bench.memcpy_batch_gbs,
        bench.peak.lanes,
        bench.peak.clock_khz,
        results.join(",\n")
    )
}
