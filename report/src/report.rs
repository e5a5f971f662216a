//! The Markdown report of a run rendered from its `ladder.json`
//! ([`render`]): the summary, the targets ([`crate::targets`]), each
//! case's table and chart ([`crate::svg`]), the scaling curves and the
//! kernels' resources.

use crate::records::{Ceilings, Record, Unit, fastest_of_groups, header, parse};
use crate::tables::{BackToBack, case_table, num, scaling_markdown, unit_of};
use crate::{BATCH_BELOW_MS, BATCH_WINDOWS, svg, targets};
use std::fmt::Write;

/// The 256-thread blocks one SM holds for a kernel of `registers` per
/// thread: its 65536 registers (allocated 8 a thread at a time) and its
/// `max_threads` threads both bound it; `None` for 0 registers.
fn blocks_by_registers(registers: u32, max_threads: u32) -> Option<u32> {
    (registers > 0).then(|| (65536 / (registers.div_ceil(8) * 8 * 256)).min(max_threads / 256))
}

/// The Markdown table of kernel records: one row per entry, or per run of
/// entries of one base with the same figures (`reduce_fold_{f32,i32,u32}`).
fn kernel_table(kernels: &[&Record], max_threads_per_sm: u32) -> String {
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
fn summary(records: &[Record], cases: &[(&str, &str)]) -> String {
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
    for r in fastest_of_groups(records, family, case) {
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
    // JSON written before the keys were had a warm-up of 3 launches.
    let warmup = match (header(text, "warmup_ms"), header(text, "warmup_launches")) {
        (ms, launches) if !ms.is_empty() && !launches.is_empty() => {
            format!("warm-up launches for {ms} ms and {launches} at the least")
        }
        _ => "3 warm-ups".to_string(),
    };
    let mut md = format!(
        "# warpspeed benchmark: {}\n\nCompute capability {}, {} SMs, PTX `{}`; {} timed launches per \
         median (CUDA events, {warmup}, {queued}); this run's device-to-device copy: \
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
    md.push_str(&targets::section(&records));
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
