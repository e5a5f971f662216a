//! Two small SVG charts, written by hand (no font or drawing library): a
//! ladder's bars with the ceiling's line (the memcpy, or the FP32 peak of a
//! compute-bound family) and each peer's line, and scaling curves on a
//! log-scaled size axis.

use crate::records::{Record, Unit};
use std::fmt::Write;

const WIDTH: f64 = 960.0;
const HEIGHT: f64 = 460.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 250.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 120.0;
const COLORS: [&str; 6] = [
    "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b",
];

fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A round step for about five ticks up to `max`.
fn tick_step(max: f64) -> f64 {
    let raw = max / 5.0;
    let magnitude = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * magnitude)
        .find(|&s| s >= raw)
        .unwrap_or(raw)
}

/// The frame: title, y axis in `unit` with grid lines; returns the SVG so
/// far and the function from a rate to a y coordinate.
fn frame(title: &str, max_rate: f64, unit: Unit) -> (String, impl Fn(f64) -> f64) {
    let plot_h = HEIGHT - TOP - BOTTOM;
    let top = max_rate.max(1.0) * 1.1;
    let y = move |rate: f64| TOP + plot_h * (1.0 - rate / top);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{HEIGHT}\" \
         font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{LEFT}\" y=\"24\" font-size=\"15\" font-weight=\"bold\">{}</text>\n",
        xml(title)
    );
    let step = tick_step(top);
    // Whole numbers unless the ticks are closer than 1 apart.
    let digits = usize::from(step < 1.0);
    let mut t = 0.0;
    while t <= top {
        let _ = writeln!(
            s,
            "<line x1=\"{LEFT}\" x2=\"{}\" y1=\"{y0:.1}\" y2=\"{y0:.1}\" stroke=\"#e0e0e0\"/>\
             <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{t:.digits$}</text>",
            WIDTH - RIGHT,
            LEFT - 6.0,
            y(t) + 4.0,
            y0 = y(t)
        );
        t += step;
    }
    let _ = writeln!(
        s,
        "<text transform=\"translate(18 {:.1}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
        TOP + plot_h / 2.0,
        unit.label()
    );
    (s, y)
}

/// A horizontal reference line with a legend entry.
fn reference(s: &mut String, y: f64, color: &str, label: &str, slot: usize) {
    let _ = writeln!(
        s,
        "<line x1=\"{LEFT}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"{color}\" \
         stroke-width=\"2\" stroke-dasharray=\"6 4\"/>",
        WIDTH - RIGHT
    );
    legend(s, color, label, slot, true);
}

fn legend(s: &mut String, color: &str, label: &str, slot: usize, dashed: bool) {
    let (x, y) = (WIDTH - RIGHT + 16.0, TOP + 10.0 + 20.0 * slot as f64);
    let dash = if dashed {
        " stroke-dasharray=\"6 4\""
    } else {
        ""
    };
    let _ = writeln!(
        s,
        "<line x1=\"{x}\" x2=\"{}\" y1=\"{y}\" y2=\"{y}\" stroke=\"{color}\" stroke-width=\"2\"{dash}/>\
         <text x=\"{}\" y=\"{}\">{}</text>",
        x + 24.0,
        x + 30.0,
        y + 4.0,
        xml(label)
    );
}

/// Bars for the steps of one case (rates in `unit`), with the lines of the
/// ceiling (if known) and of the peers.
pub fn ladder_chart(title: &str, records: &[&Record], unit: Unit, ceiling: Option<f64>) -> String {
    let steps: Vec<&&Record> = records.iter().filter(|r| r.kind == "step").collect();
    let peers: Vec<&&Record> = records
        .iter()
        .filter(|r| r.kind == "peer" && r.rate.is_some())
        .collect();
    let max = steps
        .iter()
        .chain(&peers)
        .filter_map(|r| r.rate)
        .fold(ceiling.unwrap_or(0.0), f64::max);
    let (mut s, y) = frame(title, max, unit);
    let plot_w = WIDTH - LEFT - RIGHT;
    let slot = plot_w / steps.len().max(1) as f64;
    for (i, r) in steps.iter().enumerate() {
        let rate = r.rate.unwrap_or(0.0);
        let x = LEFT + slot * i as f64 + slot * 0.15;
        let _ = writeln!(
            s,
            "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"#1f77b4\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"10\">{rate:.digits$}</text>\
             <text transform=\"translate({:.1} {:.1}) rotate(-35)\" text-anchor=\"end\">{} {}</text>",
            y(rate),
            slot * 0.7,
            y(0.0) - y(rate),
            x + slot * 0.35,
            y(rate) - 4.0,
            x + slot * 0.35,
            y(0.0) + 14.0,
            xml(&r.step),
            xml(&r.variant),
            digits = unit.digits()
        );
    }
    if let Some(ceiling) = ceiling {
        reference(&mut s, y(ceiling), "#7f7f7f", unit.ceiling_line(), 0);
    }
    for (i, p) in peers.iter().enumerate() {
        let label = p.peer.clone().unwrap_or_default();
        reference(
            &mut s,
            y(p.rate.unwrap_or(0.0)),
            COLORS[i % COLORS.len()],
            &label,
            i + 1,
        );
    }
    s.push_str("</svg>\n");
    s
}

/// Rates in `unit` over input size, one line per series, on a log2 size
/// axis, with the ceiling's line (if known).
pub fn scaling_chart(title: &str, points: &[&Record], unit: Unit, ceiling: Option<f64>) -> String {
    let measured: Vec<&&Record> = points.iter().filter(|r| r.rate.is_some()).collect();
    let max = measured
        .iter()
        .filter_map(|r| r.rate)
        .fold(ceiling.unwrap_or(0.0), f64::max);
    let (mut s, y) = frame(title, max, unit);
    let logs: Vec<f64> = measured
        .iter()
        .map(|r| (r.n.max(1) as f64).log2())
        .collect();
    let (lo, hi) = logs
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &v| (a.min(v), b.max(v)));
    let plot_w = WIDTH - LEFT - RIGHT;
    let x = |n: usize| LEFT + plot_w * ((n.max(1) as f64).log2() - lo) / (hi - lo).max(1.0);
    let mut ns: Vec<usize> = measured.iter().map(|r| r.n).collect();
    ns.dedup();
    for n in ns {
        let label = if n.is_power_of_two() {
            format!("2^{}", n.trailing_zeros())
        } else {
            n.to_string()
        };
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{label}</text>",
            x(n),
            y(0.0) + 16.0
        );
    }
    let axis = points.first().map_or("", |r| r.axis.as_str());
    let _ = writeln!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
        LEFT + plot_w / 2.0,
        y(0.0) + 40.0,
        xml(axis)
    );
    let mut series: Vec<&str> = Vec::new();
    for r in &measured {
        if !series.contains(&r.series.as_str()) {
            series.push(&r.series);
        }
    }
    if let Some(ceiling) = ceiling {
        reference(&mut s, y(ceiling), "#7f7f7f", unit.ceiling_line(), 0);
    }
    for (i, name) in series.iter().enumerate() {
        let color = if i == 0 {
            "#1f77b4"
        } else {
            COLORS[(i - 1) % COLORS.len()]
        };
        let path: Vec<String> = measured
            .iter()
            .filter(|r| r.series == *name)
            .map(|r| format!("{:.1},{:.1}", x(r.n), y(r.rate.unwrap_or(0.0))))
            .collect();
        let _ = writeln!(
            s,
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"2\"/>",
            path.join(" ")
        );
        legend(&mut s, color, name, i + 1, false);
    }
    s.push_str("</svg>\n");
    s
}
