//! The Markdown tables of a case (every step and peer) and of a scaling
//! curve (a row per size, a column per series), rendered from records:
//! what the bench prints as it measures, and what the report and the
//! README show.

use crate::records::{Record, Unit, size_label};
use std::fmt::Write;

/// `v` with `digits` decimals, `—` if absent.
pub(crate) fn num(v: Option<f64>, digits: usize) -> String {
    v.map_or("—".into(), |v| format!("{v:.digits$}"))
}

/// The back-to-back column of a table, present where some step of it was
/// timed back to back (never for JSON written before that was measured).
#[derive(Clone, Copy)]
pub(crate) struct BackToBack(pub(crate) bool);

impl BackToBack {
    pub(crate) fn of<'r>(steps: impl IntoIterator<Item = &'r Record>) -> BackToBack {
        BackToBack(steps.into_iter().any(|r| r.batch_ms.is_some()))
    }

    /// Its heading and alignment, each ending a column (or nothing).
    pub(crate) fn head(self, unit: Unit) -> (String, &'static str) {
        if self.0 {
            (format!(" back to back (× {}) |", unit.ceiling()), "---:|")
        } else {
            (String::new(), "")
        }
    }

    /// A step's cell: its time back to back and, in brackets, its rate over
    /// the back-to-back ceiling; `—` where it was not measured.
    pub(crate) fn cell(self, r: &Record) -> String {
        match (self.0, r.batch_ms) {
            (false, _) => String::new(),
            (true, Some(ms)) => {
                format!(" {:.1} µs ({}) |", ms * 1e3, num(r.ratio_ceiling_batch, 2))
            }
            (true, None) => " — |".into(),
        }
    }

    /// An empty cell of a peer's row.
    pub(crate) fn blank(self) -> &'static str {
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
