//! The run's results as JSON, and everything rendered from that JSON: the
//! tables printed during the run, the Markdown report and the SVG charts.
//!
//! ## `ladder.json`
//!
//! A header of device facts and run settings, one key per line:
//! `device` (name), `compute_capability`, `multiprocessors`, `l2_bytes`,
//! `memory_bytes`, `ptx` (the target loaded), `reps` (timed launches per
//! median), `memcpy_gbs` (this run's 1 GiB device-to-device copy, bytes read
//! + written per second). Then `results`, one object per line, by `kind`:
//!
//! * `step`: one ladder step on one input — `family`, `case`, `step`,
//!   `variant`, `ms` (median), `bytes` (the least a step must move: each
//!   input read once, each output written once), `gbs` (`bytes / ms`),
//!   `ratio_memcpy` (`gbs / memcpy_gbs`), `peer` and `ratio_peer` (the
//!   fastest available peer of its group and `peer ms / ms`: above 1 is
//!   faster than the library; absent without a peer), `speedup_vs_first`
//!   (step 1's time over this one's);
//! * `peer`: a library on the same input — `family`, `case`, `versus` (the
//!   group of steps it compares with, e.g. `sum`), `peer`, and either `ms`,
//!   `bytes`, `gbs`, `ratio_memcpy`, or `unavailable` (the reason);
//! * `scaling`: one point of a scaling curve — `family`, `title`, `axis`,
//!   `series`, `n`, `ms`, `bytes`, `gbs`; a series that could not run has
//!   `unavailable` instead of the numbers.

use crate::harness::{Bench, Case, Scaling};
use crate::peers::field;
use crate::svg;
use std::fmt::Write;

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "'")
}

/// The JSON lines of one case.
pub fn case_records(case: &Case, memcpy_gbs: f64) -> Vec<String> {
    let head = |kind: &str| {
        format!(
            "{{\"kind\":\"{kind}\",\"family\":\"{}\",\"case\":\"{}\"",
            case.family,
            escape(&case.case)
        )
    };
    let first = case.rows.first().map_or(1.0, |r| r.ms);
    let mut lines = Vec::new();
    for r in &case.rows {
        let gbs = case.bytes / r.ms / 1e6;
        let mut line = format!(
            "{},\"step\":{},\"variant\":\"{}\",\"ms\":{:.6},\"bytes\":{},\"gbs\":{:.1},\"ratio_memcpy\":{:.4}",
            head("step"),
            r.step,
            r.variant,
            r.ms,
            case.bytes,
            gbs,
            gbs / memcpy_gbs
        );
        if let Some((peer, ms)) = case.best_peer(r.versus) {
            let _ = write!(
                line,
                ",\"peer\":\"{}\",\"ratio_peer\":{:.4}",
                escape(peer),
                ms / r.ms
            );
        }
        let _ = write!(line, ",\"speedup_vs_first\":{:.3}}}", first / r.ms);
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
                let gbs = case.bytes / ms / 1e6;
                let _ = write!(
                    line,
                    ",\"ms\":{ms:.6},\"bytes\":{},\"gbs\":{gbs:.1},\"ratio_memcpy\":{:.4}}}",
                    case.bytes,
                    gbs / memcpy_gbs
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

/// The JSON lines of one scaling curve.
pub fn scaling_records(s: &Scaling) -> Vec<String> {
    let head = |series: &str| {
        format!(
            "{{\"kind\":\"scaling\",\"family\":\"{}\",\"title\":\"{}\",\"axis\":\"{}\",\"series\":\"{}\"",
            s.family,
            escape(&s.title),
            s.axis,
            escape(series)
        )
    };
    let mut lines: Vec<String> = s
        .points
        .iter()
        .map(|p| {
            format!(
                "{},\"n\":{},\"ms\":{:.6},\"bytes\":{},\"gbs\":{:.1}}}",
                head(&p.series),
                p.n,
                p.ms,
                p.bytes,
                p.bytes / p.ms / 1e6
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

/// The whole run as JSON (see the module docs).
pub fn json(bench: &Bench) -> String {
    let info = bench.ctx.info();
    let mut results: Vec<String> = Vec::new();
    for case in &bench.cases {
        results.extend(case_records(case, bench.memcpy_gbs));
    }
    for s in &bench.scaling {
        results.extend(scaling_records(s));
    }
    format!(
        "{{\n\"device\":\"{}\",\n\"compute_capability\":\"{}.{}\",\n\"multiprocessors\":{},\n\"l2_bytes\":{},\n\"memory_bytes\":{},\n\"ptx\":\"{}\",\n\"reps\":{},\n\"memcpy_gbs\":{:.1},\n\"results\":[\n{}\n]\n}}\n",
        escape(&info.name),
        info.compute_capability.0,
        info.compute_capability.1,
        info.multiprocessors,
        info.l2_bytes,
        info.total_memory,
        info.ptx_target,
        bench.reps,
        bench.memcpy_gbs,
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
    pub ms: Option<f64>,
    pub gbs: Option<f64>,
    pub ratio_memcpy: Option<f64>,
    pub peer: Option<String>,
    pub ratio_peer: Option<f64>,
    pub speedup: Option<f64>,
    pub unavailable: Option<String>,
    pub title: String,
    pub axis: String,
    pub series: String,
    pub n: usize,
}

/// The result lines of a JSON file written by [`json`] (or of a case).
pub fn parse(text: &str) -> Vec<Record> {
    text.lines()
        .filter(|l| l.trim_start().starts_with("{\"kind\""))
        .map(|l| {
            let s = |k| field(l, k).unwrap_or_default();
            let f = |k| field(l, k).and_then(|v| v.parse().ok());
            Record {
                kind: s("kind"),
                family: s("family"),
                case: s("case"),
                step: s("step"),
                variant: s("variant"),
                ms: f("ms"),
                gbs: f("gbs"),
                ratio_memcpy: f("ratio_memcpy"),
                peer: field(l, "peer"),
                ratio_peer: f("ratio_peer"),
                speedup: f("speedup_vs_first"),
                unavailable: field(l, "unavailable"),
                title: s("title"),
                axis: s("axis"),
                series: s("series"),
                n: f("n").map_or(0, |n: f64| n as usize),
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

/// The Markdown table of one case's records.
pub fn case_table(records: &[&Record]) -> String {
    let mut out = String::from(
        "| step | variant | time | GB/s | × memcpy | × best peer | speedup |\n|---:|---|---:|---:|---:|---:|---:|\n",
    );
    let num = |v: Option<f64>, digits: usize| v.map_or("—".into(), |v| format!("{v:.digits$}"));
    for r in records.iter().filter(|r| r.kind == "step") {
        let _ = writeln!(
            out,
            "| {} | {} | {} µs | {} | {} | {} | {}× |",
            r.step,
            r.variant,
            num(r.ms.map(|ms| ms * 1e3), 1),
            num(r.gbs, 0),
            num(r.ratio_memcpy, 2),
            r.ratio_peer.map_or("—".into(), |v| format!("**{v:.2}**")),
            num(r.speedup, 1)
        );
    }
    for r in records.iter().filter(|r| r.kind == "peer") {
        let name = r.peer.clone().unwrap_or_default();
        match &r.unavailable {
            Some(why) => {
                let _ = writeln!(out, "| peer | {name} | not available: {why} | | | | |");
            }
            None => {
                let _ = writeln!(
                    out,
                    "| peer | {name} | {} µs | {} | {} | | |",
                    num(r.ms.map(|ms| ms * 1e3), 1),
                    num(r.gbs, 0),
                    num(r.ratio_memcpy, 2)
                );
            }
        }
    }
    out
}

/// A case's table, as printed during the run.
pub fn table(case: &Case, memcpy_gbs: f64) -> String {
    let text = case_records(case, memcpy_gbs).join("\n");
    let records = parse(&text);
    case_table(&records.iter().collect::<Vec<_>>())
}

/// A scaling curve's table: one row per size, one column per series.
fn scaling_markdown(records: &[&Record]) -> String {
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
                            "{:.1} µs, {:.0} GB/s",
                            r.ms.unwrap_or(0.0) * 1e3,
                            r.gbs.unwrap_or(0.0)
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
pub fn scaling_table(s: &Scaling) -> String {
    let records = parse(&scaling_records(s).join("\n"));
    scaling_markdown(&records.iter().collect::<Vec<_>>())
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

/// The fastest step of each case (per group of peers), against the copy and
/// the best peer: the table the README shows.
pub fn summary(records: &[Record], cases: &[(&str, &str)]) -> String {
    let mut out = String::from(
        "\n## Summary: the fastest step of each case\n\n| family | case | step | time | GB/s | × memcpy | × best peer (peer) |\n|---|---|---|---:|---:|---:|---|\n",
    );
    for (family, case) in cases {
        let steps: Vec<&Record> = records
            .iter()
            .filter(|r| r.kind == "step" && r.family == *family && r.case == *case)
            .collect();
        let mut groups: Vec<Option<&str>> = Vec::new();
        for r in &steps {
            if !groups.contains(&r.peer.as_deref()) {
                groups.push(r.peer.as_deref());
            }
        }
        for group in groups {
            let best = steps
                .iter()
                .filter(|r| r.peer.as_deref() == group)
                .max_by(|a, b| a.gbs.unwrap_or(0.0).total_cmp(&b.gbs.unwrap_or(0.0)));
            if let Some(r) = best {
                let versus = match (r.ratio_peer, &r.peer) {
                    (Some(ratio), Some(peer)) => format!("**{ratio:.2}** ({peer})"),
                    _ => "— (no peer)".into(),
                };
                let _ = writeln!(
                    out,
                    "| {family} | {case} | {} {} | {:.1} µs | {:.0} | {:.2} | {versus} |",
                    r.step,
                    r.variant,
                    r.ms.unwrap_or(0.0) * 1e3,
                    r.gbs.unwrap_or(0.0),
                    r.ratio_memcpy.unwrap_or(0.0)
                );
            }
        }
    }
    out
}

/// Everything rendered from a JSON file: the Markdown report and the SVG
/// charts, as `(file name, contents)`.
pub fn render(text: &str) -> Vec<(String, String)> {
    let records = parse(text);
    let memcpy: f64 = header(text, "memcpy_gbs").parse().unwrap_or(0.0);
    let mut files = Vec::new();
    let mut md = format!(
        "# warpspeed benchmark: {}\n\nCompute capability {}, {} SMs, PTX `{}`; {} timed launches per \
         median (CUDA events, 3 warm-ups, launches back to back); this run's device-to-device copy: \
         **{memcpy:.0} GB/s** (read + written). GB/s count each input byte read once and each output \
         byte written once. \"× best peer\" is the fastest NVIDIA library's time over the step's \
         (above 1: faster than the library), measured in the same run with the same method.\n",
        header(text, "device"),
        header(text, "compute_capability"),
        header(text, "multiprocessors"),
        header(text, "ptx"),
        header(text, "reps"),
    );
    let mut cases: Vec<(&str, &str)> = Vec::new();
    for r in records.iter().filter(|r| r.kind != "scaling") {
        if !cases.contains(&(r.family.as_str(), r.case.as_str())) {
            cases.push((&r.family, &r.case));
        }
    }
    md.push_str(&summary(&records, &cases));
    let mut family = "";
    for (f, case) in &cases {
        if *f != family {
            family = f;
            let _ = writeln!(md, "\n## {f}");
        }
        let rows: Vec<&Record> = records
            .iter()
            .filter(|r| r.kind != "scaling" && r.family == *f && r.case == *case)
            .collect();
        let chart = format!("{}.svg", slug(&[f, case]));
        let _ = write!(
            md,
            "\n### {f}, {case}\n\n{}\n![{f} {case}]({chart})\n",
            case_table(&rows)
        );
        files.push((
            chart,
            svg::ladder_chart(&format!("{f}, {case}"), &rows, memcpy),
        ));
    }
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
        files.push((chart, svg::scaling_chart(title, &points, memcpy)));
    }
    files.insert(0, ("report.md".into(), md));
    files
}
