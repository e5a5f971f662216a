//! The README's measured tables, generated from the committed reports'
//! JSON (`docs/bench/<device>/ladder.json`), so that none is typed by hand
//! and none drifts from the reports it quotes.
//!
//! A generated table sits between a line that says what it is and an end
//! line; everything between the two is replaced:
//!
//! ```text
//! <!-- generated: steps transpose "u8 8192x8192"=u8 "f32 8192x8192"=f32 -->
//! ...
//! <!-- /generated -->
//! ```
//!
//! * `steps FAMILY CASE...`: one row per step of the family (and one per
//!   peer), one column per device of [`DEVICES`], each cell the step's rate
//!   on the cases in order, joined by ` / ` (`CASE` is the JSON's case,
//!   quoted where it has spaces, `=label` its name in the heading). The
//!   fastest step of each group that has a peer (the summary's row) is in
//!   bold with its ratio to the peer;
//! * `cases FAMILY CASE...`: the same with a column per case and device;
//! * `summary DEVICE FAMILY...`: the report's summary rows of those
//!   families, as the report renders them;
//! * `scaling DEVICE TITLE`: the report's table of one scaling curve;
//! * `targets`: every target of [`crate::targets`], judged on each
//!   device's report, alone and back to back.
//!
//! `cargo xtask readme` rewrites the tables; `cargo xtask readme --check`
//! (CI) fails where one differs from what the JSON gives.

use crate::records::{Record, parse};
use crate::report::summary_table;
use crate::tables::{scaling_markdown, unit_of};
use crate::targets;
use std::fmt::Write;
use std::path::Path;

/// The devices of the committed reports, in the order of the `steps`
/// tables' columns: folders of `docs/bench/`.
pub const DEVICES: [&str; 2] = ["h100", "h200"];

const START: &str = "<!-- generated:";
const END: &str = "<!-- /generated -->";

/// One device's report: its folder name and its records.
pub struct Report {
    pub device: String,
    pub records: Vec<Record>,
}

/// Reads the reports of [`DEVICES`] under `docs`.
pub fn reports(docs: &Path) -> Result<Vec<Report>, String> {
    DEVICES
        .iter()
        .map(|device| {
            let path = docs.join(device).join("ladder.json");
            let text =
                std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            Ok(Report {
                device: device.to_string(),
                records: parse(&text),
            })
        })
        .collect()
}

/// `readme` with every generated table rendered again from `reports`.
pub fn splice(readme: &str, reports: &[Report]) -> Result<String, String> {
    let mut out = String::with_capacity(readme.len());
    let mut lines = readme.lines().enumerate();
    while let Some((at, line)) = lines.next() {
        out.push_str(line);
        out.push('\n');
        let Some(spec) = line.strip_prefix(START) else {
            continue;
        };
        let spec = spec
            .strip_suffix("-->")
            .ok_or(format!("README line {}: `-->` ends the line", at + 1))?;
        let table = render(spec, reports).map_err(|e| format!("README line {}: {e}", at + 1))?;
        out.push_str(&table);
        // Skip the old table, keep its end line.
        loop {
            match lines.next() {
                Some((_, END)) => break,
                Some(_) => {}
                None => return Err(format!("README line {}: no `{END}` after it", at + 1)),
            }
        }
        out.push_str(END);
        out.push('\n');
    }
    Ok(out)
}

/// The table a spec asks for.
fn render(spec: &str, reports: &[Report]) -> Result<String, String> {
    let words = words(spec)?;
    let [kind, rest @ ..] = words.as_slice() else {
        return Err("an empty spec".into());
    };
    match (kind.0.as_str(), rest) {
        ("steps", [family, cases @ ..]) if !cases.is_empty() => {
            steps(reports, &family.0, cases, Layout::Devices)
        }
        ("cases", [family, cases @ ..]) if !cases.is_empty() => {
            steps(reports, &family.0, cases, Layout::Cases)
        }
        ("summary", [device, families @ ..]) if !families.is_empty() => {
            let report = device_report(reports, &device.0)?;
            let mut cases: Vec<(&str, &str)> = Vec::new();
            for f in families {
                for r in report.records.iter().filter(|r| r.kind == "step") {
                    if r.family == f.0 && !cases.contains(&(&r.family, &r.case)) {
                        cases.push((&r.family, &r.case));
                    }
                }
            }
            if cases.is_empty() {
                return Err(format!("{} has no steps of those families", device.0));
            }
            let first: Vec<&Record> = report
                .records
                .iter()
                .filter(|r| r.kind == "step" && (r.family.as_str(), r.case.as_str()) == cases[0])
                .collect();
            Ok(summary_table(&report.records, &cases, unit_of(&first)))
        }
        ("scaling", [device, title]) => {
            let report = device_report(reports, &device.0)?;
            let points: Vec<&Record> = report
                .records
                .iter()
                .filter(|r| r.kind == "scaling" && r.title == title.0)
                .collect();
            if points.is_empty() {
                return Err(format!("{} has no scaling curve `{}`", device.0, title.0));
            }
            Ok(scaling_markdown(&points))
        }
        ("targets", []) => {
            let devices: Vec<(String, &[Record])> = reports
                .iter()
                .map(|r| (r.device.to_uppercase(), r.records.as_slice()))
                .collect();
            Ok(targets::devices_table(&devices))
        }
        _ => Err(format!(
            "`{}`: a spec is `steps FAMILY CASE...`, `cases FAMILY CASE...`, \
             `summary DEVICE FAMILY...`, `scaling DEVICE TITLE` or `targets`",
            spec.trim()
        )),
    }
}

fn device_report<'a>(reports: &'a [Report], device: &str) -> Result<&'a Report, String> {
    reports
        .iter()
        .find(|r| r.device == device)
        .ok_or(format!("no report of `{device}` (devices: {DEVICES:?})"))
}

/// A spec's words: `"quoted words"` are one, and `word=label` (or
/// `"quoted"=label`) gives a word its label; without one, the label is the
/// word.
fn words(spec: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    let mut rest = spec.trim_start();
    while !rest.is_empty() {
        let (word, after) = match rest.strip_prefix('"') {
            Some(quoted) => {
                let end = quoted.find('"').ok_or("an unclosed quote")?;
                (&quoted[..end], &quoted[end + 1..])
            }
            None => {
                let end = rest.find([' ', '=']).unwrap_or(rest.len());
                (&rest[..end], &rest[end..])
            }
        };
        let (label, after) = match after.strip_prefix('=') {
            Some(l) => {
                let end = l.find(' ').unwrap_or(l.len());
                (&l[..end], &l[end..])
            }
            None => (word, after),
        };
        out.push((word.to_string(), label.to_string()));
        rest = after.trim_start();
    }
    Ok(out)
}

/// `tf32x3_wgmma` as the API's variant name, `Tf32x3Wgmma`.
fn variant_name(snake: &str) -> String {
    snake
        .split('_')
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map_or(String::new(), |c| {
                c.to_ascii_uppercase().to_string() + chars.as_str()
            })
        })
        .collect()
}

/// How a `steps` table lays out its cells.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// A column per device, the cases of a cell joined by ` / `.
    Devices,
    /// A column per case and device.
    Cases,
}

/// The `steps` (or `cases`) table of `family` over `cases` (`(case,
/// label)`).
fn steps(
    reports: &[Report],
    family: &str,
    cases: &[(String, String)],
    layout: Layout,
) -> Result<String, String> {
    let of_case = |r: &Record, case: &str| r.family == family && r.case == case;
    // Rows: every step any device ran on any of the cases, by step number;
    // then every peer, in the order the reports give them.
    let mut rows: Vec<(u32, String)> = Vec::new();
    let mut peers: Vec<String> = Vec::new();
    for report in reports {
        for r in &report.records {
            if !cases.iter().any(|(case, _)| of_case(r, case)) {
                continue;
            }
            if r.kind == "step" {
                let step = r.step.parse().map_err(|_| format!("step `{}`", r.step))?;
                if !rows.contains(&(step, r.variant.clone())) {
                    rows.push((step, r.variant.clone()));
                }
            } else if r.kind == "peer" && r.unavailable.is_none() {
                let name = r.peer.clone().unwrap_or_default();
                if !peers.contains(&name) {
                    peers.push(name);
                }
            }
        }
    }
    for (case, _) in cases {
        if !reports
            .iter()
            .any(|rep| rep.records.iter().any(|r| of_case(r, case)))
        {
            return Err(format!("no report has `{family}` case `{case}`"));
        }
    }
    rows.sort_by_key(|(step, _)| *step);
    let unit = unit_of(
        &reports
            .iter()
            .flat_map(|rep| &rep.records)
            .filter(|r| r.kind == "step" && cases.iter().any(|(case, _)| of_case(r, case)))
            .collect::<Vec<_>>(),
    );
    // Decimals as the reports give them, one more below 10 (the slow
    // first steps: 0.4 GB/s, not 0).
    let fmt = |rate: f64| {
        let digits = unit.digits() + usize::from(rate < 10.0 && unit.digits() == 0);
        format!("{rate:.digits$}")
    };

    // A step's cell: its rate, in bold with its ratio to the peer where it
    // is the fastest of its group (the summary's row).
    let step_cell = |report: &Report, case: &str, step: u32, variant: &str| -> String {
        let steps: Vec<&Record> = report
            .records
            .iter()
            .filter(|r| r.kind == "step" && of_case(r, case))
            .collect();
        let Some(r) = steps
            .iter()
            .find(|r| r.step == step.to_string() && r.variant == variant)
        else {
            return "—".into();
        };
        let Some(rate) = r.rate else {
            return "—".into();
        };
        let best = steps
            .iter()
            .filter(|s| s.versus == r.versus && s.peer == r.peer)
            .all(|s| s.rate.unwrap_or(0.0) <= rate);
        match (best, r.ratio_peer) {
            (true, Some(ratio)) => format!("**{}** ({ratio:.2}×)", fmt(rate)),
            _ => fmt(rate),
        }
    };
    let peer_cell = |report: &Report, case: &str, peer: &str| -> String {
        report
            .records
            .iter()
            .find(|r| r.kind == "peer" && of_case(r, case) && r.peer.as_deref() == Some(peer))
            .and_then(|r| r.rate)
            .map_or("—".into(), fmt)
    };
    // The cells of a row, in the layout's column order.
    let cells = |cell: &dyn Fn(&Report, &str) -> String| -> Vec<String> {
        match layout {
            Layout::Devices => reports
                .iter()
                .map(|report| {
                    let joined: Vec<String> =
                        cases.iter().map(|(case, _)| cell(report, case)).collect();
                    joined.join(" / ")
                })
                .collect(),
            Layout::Cases => cases
                .iter()
                .flat_map(|(case, _)| reports.iter().map(move |report| cell(report, case)))
                .collect(),
        }
    };

    let headings: Vec<String> = match layout {
        Layout::Devices => {
            let labels: Vec<&str> = cases.iter().map(|(_, label)| label.as_str()).collect();
            reports
                .iter()
                .map(|r| format!("{} {}", r.device.to_uppercase(), labels.join(" / ")))
                .collect()
        }
        Layout::Cases => cases
            .iter()
            .flat_map(|(_, label)| {
                reports
                    .iter()
                    .map(move |r| format!("{label} {}", r.device.to_uppercase()))
            })
            .collect(),
    };
    let mut out = format!("| step | variant | {} |\n|---:|---|", headings.join(" | "));
    out.push_str(&"---:|".repeat(headings.len()));
    out.push('\n');
    for (step, variant) in &rows {
        let row = cells(&|report, case| step_cell(report, case, *step, variant));
        // Step 0 is a precision as its plan runs it (`fp32_plan`).
        let (step, name) = match variant.strip_suffix("_plan") {
            Some(precision) if *step == 0 => (
                "plan".to_string(),
                format!("Precision::{}", variant_name(precision)),
            ),
            _ => (step.to_string(), variant_name(variant)),
        };
        let _ = writeln!(out, "| {step} | `{name}` | {} |", row.join(" | "));
    }
    for peer in &peers {
        let row = cells(&|report, case| peer_cell(report, case, peer));
        let _ = writeln!(out, "| peer | {peer} | {} |", row.join(" | "));
    }
    Ok(out)
}
