//! The speed targets the project set itself, as data ([`TARGETS`]), and how
//! one run's records meet each ([`Target::outcome`]): the report's
//! "Targets" section ([`section`]) and the README's table of both devices.
//!
//! A target covers the fastest step of some groups of some cases (what the
//! summary shows) and holds where the *worst* of them is on the right side
//! of its bound; where it is not, the table says how much faster the step
//! would have to be ("short by 1.4%"). A ratio to the copy bandwidth is
//! judged twice: each launch timed alone, and back to back (see the
//! report's note on the two columns); a ratio to a peer only alone, as the
//! peers are timed.

use crate::records::{Record, fastest_of_groups, size_label};
use Measure::{Curve, Memcpy, Peer, TimeOverPeer};
use std::fmt::Write;

/// What a target compares, and which way is better.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measure {
    /// The step's speed over its best peer's (the peer's time over the
    /// step's), at least the bound.
    Peer,
    /// The step's time over its best peer's, at most the bound (the random
    /// numbers' targets are stated so).
    TimeOverPeer,
    /// The step's rate over the run's copy bandwidth (× memcpy), at least
    /// the bound.
    Memcpy,
    /// Along a scaling curve (its title in `cases`), the fastest other
    /// series' time over the fastest warpspeed series' at every size (or
    /// those of the two series [`Target::series`] names), at least the
    /// bound.
    Curve,
}

impl Measure {
    /// Whether a value is on the right side of `bound`.
    fn holds(self, value: f64, bound: f64) -> bool {
        match self {
            Measure::TimeOverPeer => value <= bound,
            _ => value >= bound,
        }
    }

    /// The worse of two values.
    fn worse(self, a: f64, b: f64) -> bool {
        match self {
            Measure::TimeOverPeer => a > b,
            _ => a < b,
        }
    }

    /// The bound as the table writes it: `≥ 0.85`, `≤ 1.00`.
    fn wanted(self, bound: f64) -> String {
        match self {
            Measure::TimeOverPeer => format!("≤ {bound:.2}"),
            _ => format!("≥ {bound:.2}"),
        }
    }
}

/// One target: which results it covers, what it compares, its bound.
#[derive(Clone, Copy, Debug)]
pub struct Target {
    /// What the table calls it.
    pub label: &'static str,
    pub family: &'static str,
    /// The cases of `family` it covers (for [`Measure::Curve`], the curve's title).
    pub cases: &'static [&'static str],
    /// The step group (`versus`) whose fastest step it takes; `None`: the
    /// fastest of every group.
    pub group: Option<&'static str>,
    pub measure: Measure,
    pub bound: f64,
    /// For [`Measure::Peer`]: the ratio to the peer of the step's case
    /// whose name holds this (its own peer, or another peer row of the
    /// case; none: not measured).
    pub peer: Option<&'static str>,
    /// For [`Measure::Curve`]: the series compared, by how their names
    /// start (ours, the peer's); `None`: every warpspeed series against
    /// every other.
    pub series: Option<(&'static str, &'static str)>,
}

const fn target(
    label: &'static str,
    family: &'static str,
    cases: &'static [&'static str],
    group: Option<&'static str>,
    measure: Measure,
    bound: f64,
) -> Target {
    Target {
        label,
        family,
        cases,
        group,
        measure,
        bound,
        peer: None,
        series: None,
    }
}

/// [`target`] of [`Measure::Peer`] against a peer whose name holds `peer`.
const fn versus(
    label: &'static str,
    family: &'static str,
    cases: &'static [&'static str],
    group: &'static str,
    peer: &'static str,
    bound: f64,
) -> Target {
    Target {
        peer: Some(peer),
        ..target(label, family, cases, Some(group), Peer, bound)
    }
}

/// [`target`] of [`Measure::Curve`] along the curve `title`, the series
/// whose name starts with `ours` against the one whose name starts with
/// `peer`.
const fn curve(
    label: &'static str,
    family: &'static str,
    title: &'static [&'static str],
    (ours, peer): (&'static str, &'static str),
    bound: f64,
) -> Target {
    Target {
        series: Some((ours, peer)),
        ..target(label, family, title, None, Curve, bound)
    }
}

/// The tall-skinny products of one decoding step, `m × 4096 × 4096`.
const SKINNY: &[&str] = &[
    "f32 1x4096x4096",
    "f32 16x4096x4096",
    "f32 64x4096x4096",
    "f32 128x4096x4096",
];

/// The strided batches of small products.
const BATCHES: &[&str] = &[
    "f32 1024 × 64³ batched",
    "f32 1024 × 128³ batched",
    "f32 1024 × 256³ batched",
    "f32 256 × 512³ batched",
];

/// Every target, in the order of the families: the bench report's first
/// families (reduce, transpose, image sums), then histogram and conv1d,
/// SGEMM and the random numbers. Each is met on the H100 and on the H200,
/// or not.
pub const TARGETS: &[Target] = &[
    target(
        "sum, min, max (f32, i32, u32) at 2^24 × CUB",
        "reduce",
        &["f32 2^24", "i32 2^24", "u32 2^24"],
        None,
        Peer,
        1.00,
    ),
    target(
        "sum, min, max (f32, i32, u32) at 2^26 × CUB",
        "reduce",
        &["f32 2^26", "i32 2^26", "u32 2^26"],
        None,
        Peer,
        1.00,
    ),
    target(
        "sum, min, max (f32, i32, u32) at 2^28 × CUB",
        "reduce",
        &["f32 2^28", "i32 2^28", "u32 2^28"],
        None,
        Peer,
        1.00,
    ),
    target(
        "sum f32 at every n of the scaling curve × CUB",
        "reduce",
        &["sum f32"],
        None,
        Curve,
        0.95,
    ),
    target(
        "f32 transpose 8192² × cuBLAS Sgeam",
        "transpose",
        &["f32 8192x8192"],
        None,
        Peer,
        1.00,
    ),
    target(
        "u8 transpose 8192² × memcpy",
        "transpose",
        &["u8 8192x8192"],
        None,
        Memcpy,
        0.85,
    ),
    target(
        "column sums of a u8 8192² image × memcpy",
        "column_sums",
        &["u8 8192x8192"],
        None,
        Memcpy,
        0.80,
    ),
    target(
        "row sums of a u8 8192² image × memcpy",
        "row_sums",
        &["u8 8192x8192"],
        None,
        Memcpy,
        0.80,
    ),
    target(
        "histogram of 2^28 u8, uniform × CUB",
        "histogram",
        &["u8 2^28 uniform"],
        None,
        Peer,
        1.25,
    ),
    target(
        "histogram of 2^28 u8, one bin × CUB",
        "histogram",
        &["u8 2^28 one_bin"],
        None,
        Peer,
        1.20,
    ),
    target(
        "histogram of 2^28 u8, every data set × CUB",
        "histogram",
        &[
            "u8 2^28 uniform",
            "u8 2^28 one_bin",
            "u8 2^28 alternating",
            "u8 2^28 normal",
            "u8 2^28 sorted",
        ],
        None,
        Peer,
        1.00,
    ),
    target(
        "conv1d of 2^26 f32, 7 taps × memcpy",
        "conv1d",
        &["f32 2^26, mask 7"],
        None,
        Memcpy,
        0.85,
    ),
    target(
        "conv1d of 2^26 f32, 31 taps × memcpy",
        "conv1d",
        &["f32 2^26, mask 31"],
        None,
        Memcpy,
        0.75,
    ),
    target(
        "conv1d of 2^26 f32, 127 taps × memcpy",
        "conv1d",
        &["f32 2^26, mask 127"],
        None,
        Memcpy,
        0.50,
    ),
    target(
        "conv1d of 2^26 f32, 7, 31 and 127 taps × cuDNN",
        "conv1d",
        &[
            "f32 2^26, mask 7",
            "f32 2^26, mask 31",
            "f32 2^26, mask 127",
        ],
        None,
        Peer,
        2.00,
    ),
    target(
        "SGEMM FP32 at 4096³ and 8192³ × cuBLAS",
        "gemm",
        &["f32 4096x4096x4096", "f32 8192x8192x8192"],
        Some("fp32"),
        Peer,
        0.95,
    ),
    target(
        "SGEMM FP32 at 1024³ and 1000×999×1001 × cuBLAS",
        "gemm",
        &["f32 1024x1024x1024", "f32 1000x999x1001"],
        Some("fp32"),
        Peer,
        0.90,
    ),
    versus(
        "SGEMM TF32 at 4096³ and 8192³ × cuBLAS TF32",
        "gemm",
        &["f32 4096x4096x4096", "f32 8192x8192x8192"],
        "tf32",
        "cuBLAS TF32",
        0.90,
    ),
    versus(
        "SGEMM TF32 at 1000×999×1001 × cuBLAS TF32",
        "gemm",
        &["f32 1000x999x1001"],
        "tf32",
        "cuBLAS TF32",
        0.90,
    ),
    versus(
        "SGEMM 3xTF32 at 4096³ and 8192³ × CUTLASS 3xTF32",
        "gemm",
        &["f32 4096x4096x4096", "f32 8192x8192x8192"],
        "tf32x3",
        "CUTLASS",
        1.50,
    ),
    versus(
        "SGEMM 3xTF32 at 4096³ and 8192³ × cuBLAS TF32",
        "gemm",
        &["f32 4096x4096x4096", "f32 8192x8192x8192"],
        "tf32x3",
        "cuBLAS TF32",
        0.27,
    ),
    versus(
        "SGEMM 3xTF32 at 4096³ × cuBLAS FP32",
        "gemm",
        &["f32 4096x4096x4096"],
        "tf32x3",
        "cuBLAS Sgemm",
        1.30,
    ),
    curve(
        "SGEMM FP32, every side of the scaling curve (128 to 8192) × cuBLAS",
        "gemm",
        &["sgemm f32"],
        ("warpspeed fp32 (", "cuBLAS Sgemm"),
        0.90,
    ),
    curve(
        "SGEMM TF32, every side of the scaling curve × cuBLAS TF32",
        "gemm",
        &["sgemm f32"],
        ("warpspeed tf32 (", "cuBLAS TF32"),
        0.90,
    ),
    curve(
        "SGEMM 3xTF32, every side of the scaling curve × CUTLASS 3xTF32",
        "gemm",
        &["sgemm f32"],
        ("warpspeed tf32x3 (", "CUTLASS 3xTF32"),
        0.90,
    ),
    target(
        "SGEMM FP32, m × 4096 × 4096 (m = 1, 16, 64, 128) × cuBLAS",
        "gemm",
        SKINNY,
        Some("fp32"),
        Peer,
        0.90,
    ),
    versus(
        "SGEMM TF32, m × 4096 × 4096 (m = 1, 16, 64, 128) × cuBLAS TF32",
        "gemm",
        SKINNY,
        "tf32",
        "cuBLAS TF32",
        0.90,
    ),
    target(
        "SGEMM FP32, strided batches (1 024 × 64³, 128³, 256³; 256 × 512³) × cuBLAS SgemmStridedBatched",
        "gemm",
        BATCHES,
        Some("fp32"),
        Peer,
        1.00,
    ),
    target(
        "SGEMM TF32, strided batches (the same) × cuBLAS TF32 strided batched",
        "gemm",
        BATCHES,
        Some("tf32"),
        Peer,
        1.00,
    ),
    target(
        "uniform f32 fill of 2^28, time ÷ cuRAND's",
        "rng",
        &["uniform f32 2^28"],
        None,
        TimeOverPeer,
        1.00,
    ),
    target(
        "normal f32 fill of 2^28, time ÷ cuRAND's",
        "rng",
        &["normal f32 2^28"],
        None,
        TimeOverPeer,
        0.85,
    ),
    target(
        "log-normal f32 fill of 2^28, time ÷ cuRAND's",
        "rng",
        &["log-normal f32 2^28"],
        None,
        TimeOverPeer,
        0.85,
    ),
    target(
        "Poisson(3.5) fill of 2^28, time ÷ cuRAND's",
        "rng",
        &["poisson(3.5) u32 2^28"],
        None,
        TimeOverPeer,
        1.00,
    ),
    target(
        "scans (u32, i32, u64, f32; sum, min, max, exclusive sum) at 2^24 × CUB",
        "scan",
        &["u32 2^24", "i32 2^24", "u64 2^24", "f32 2^24"],
        None,
        Peer,
        1.00,
    ),
    target(
        "scans (u32, i32, u64, f32; sum, min, max, exclusive sum) at 2^28 × CUB",
        "scan",
        &["u32 2^28", "i32 2^28", "u64 2^28", "f32 2^28"],
        None,
        Peer,
        1.00,
    ),
    target(
        "scans at 2^20, time ÷ CUB's",
        "scan",
        &["u32 2^20", "i32 2^20", "u64 2^20", "f32 2^20"],
        None,
        TimeOverPeer,
        1.00,
    ),
    target(
        "inclusive sum at 2^28 × memcpy",
        "scan",
        &["u32 2^28", "i32 2^28", "u64 2^28", "f32 2^28"],
        Some("sum"),
        Memcpy,
        0.90,
    ),
    Target {
        peer: Some("torch"),
        ..target(
            "row scans of 64 × 128 256 and 8 × 32 000 × torch.cumsum(dim=1)",
            "scan",
            &["f32 64×128256 rows", "f32 8×32000 rows"],
            None,
            Peer,
            2.00,
        )
    },
    target(
        "row scan of 4096 × 4096 × memcpy",
        "scan",
        &["f32 4096×4096 rows"],
        None,
        Memcpy,
        0.80,
    ),
    target(
        "sorts (u32 and f32 keys and pairs) at 2^24 × CUB",
        "sort",
        &[
            "keys u32 2^24",
            "keys f32 2^24",
            "pairs u32 2^24",
            "pairs f32 2^24",
        ],
        None,
        Peer,
        1.00,
    ),
    target(
        "sorts (u32 and f32 keys and pairs) at 2^28 × CUB",
        "sort",
        &[
            "keys u32 2^28",
            "keys f32 2^28",
            "pairs u32 2^28",
            "pairs f32 2^28",
        ],
        None,
        Peer,
        1.00,
    ),
    Target {
        peer: Some("CUB"),
        ..target(
            "row sorts of 64 × 128 256 and 8 × 32 000 (f32 descending, with columns) × CUB DeviceSegmentedSort",
            "sort",
            &["rows f32 64×128256", "rows f32 8×32000"],
            None,
            Peer,
            1.00,
        )
    },
    target(
        "top-50 of 1, 8 and 64 rows × 32 000, 128 256 and 262 144 × torch.topk",
        "sort",
        &[
            "top-50 f32 1×32000",
            "top-50 f32 8×32000",
            "top-50 f32 64×32000",
            "top-50 f32 1×128256",
            "top-50 f32 8×128256",
            "top-50 f32 64×128256",
            "top-50 f32 1×262144",
            "top-50 f32 8×262144",
            "top-50 f32 64×262144",
        ],
        None,
        Peer,
        2.00,
    ),
    target(
        "argmax of rows (8 × 32 000 to 64 × 262 144) × torch.argmax",
        "sort",
        &[
            "argmax f32 8×32000",
            "argmax f32 64×128256",
            "argmax f32 1×262144",
            "argmax f32 64×262144",
        ],
        None,
        Peer,
        1.00,
    ),
    target(
        "compaction (flagged, if) at 2^24 and 2^28 × CUB",
        "scan",
        &["compaction u32 2^24", "compaction u32 2^28"],
        None,
        Peer,
        1.00,
    ),
];

/// The worst value of a target's results, and where it is (a case and
/// group, or a curve's size), where one was measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Worst {
    pub value: f64,
    pub at: String,
    /// How many results it is the worst of.
    pub of: usize,
}

/// How one run meets a target: alone, and back to back where the measure
/// has a back-to-back figure (`None` otherwise: its cell reads `—`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outcome {
    pub alone: Option<Worst>,
    pub batch: Option<Worst>,
}

impl Target {
    /// The fastest steps this target covers.
    fn steps<'r>(&self, records: &'r [Record]) -> Vec<&'r Record> {
        self.cases
            .iter()
            .flat_map(|case| fastest_of_groups(records, self.family, case))
            .filter(|r| self.group.is_none() || r.versus.as_deref() == self.group)
            .collect()
    }

    /// The worst of `values` (value, where), by this target's measure.
    fn worst(&self, values: impl Iterator<Item = (f64, String)>) -> Option<Worst> {
        let mut of = 0;
        values
            .inspect(|_| of += 1)
            .reduce(|a, b| if self.measure.worse(b.0, a.0) { b } else { a })
            .map(|(value, at)| Worst { value, at, of })
    }

    /// How `records` (one run) meet this target.
    pub fn outcome(&self, records: &[Record]) -> Outcome {
        let at = |r: &Record| match &r.versus {
            Some(group) if self.group.is_none() => format!("{} {group}", r.case),
            _ => r.case.clone(),
        };
        match self.measure {
            Measure::Peer | Measure::TimeOverPeer => {
                let value = |r: &Record| {
                    r.ratio_peer.map(|x| match self.measure {
                        Measure::TimeOverPeer => 1.0 / x,
                        _ => x,
                    })
                };
                let steps = self.steps(records);
                // A named peer: the step's own, or another peer row of
                // its case (the 3xTF32 steps meet CUTLASS, and also count
                // against both cuBLAS precisions).
                let named = |r: &Record, name: &str| -> Option<f64> {
                    if r.peer.as_deref().is_some_and(|p| p.contains(name)) {
                        return value(r);
                    }
                    let peer = records.iter().find(|p| {
                        p.kind == "peer"
                            && p.family == r.family
                            && p.case == r.case
                            && p.peer.as_deref().is_some_and(|n| n.contains(name))
                    })?;
                    let x = peer.ms? / r.ms?;
                    Some(match self.measure {
                        Measure::TimeOverPeer => 1.0 / x,
                        _ => x,
                    })
                };
                Outcome {
                    alone: self.worst(steps.iter().filter_map(|r| {
                        let v = match self.peer {
                            Some(name) => named(r, name)?,
                            None => value(r)?,
                        };
                        Some((v, at(r)))
                    })),
                    batch: None,
                }
            }
            Measure::Memcpy => {
                let steps = self.steps(records);
                Outcome {
                    alone: self.worst(steps.iter().filter_map(|r| Some((r.ratio_ceiling?, at(r))))),
                    batch: self.worst(
                        steps
                            .iter()
                            .filter_map(|r| Some((r.ratio_ceiling_batch?, at(r)))),
                    ),
                }
            }
            Measure::Curve => {
                let points: Vec<&Record> = records
                    .iter()
                    .filter(|r| {
                        r.kind == "scaling"
                            && r.family == self.family
                            && self.cases.contains(&r.title.as_str())
                            && r.ms.is_some()
                    })
                    .collect();
                let mut sizes: Vec<usize> = points.iter().map(|r| r.n).collect();
                sizes.sort_unstable();
                sizes.dedup();
                // The fastest time at `n` of the series ours (or the
                // peer's, `!ours`).
                let compared = |series: &str, ours: bool| match self.series {
                    Some((mine, peer)) => series.starts_with(if ours { mine } else { peer }),
                    None => series.starts_with("warpspeed") == ours,
                };
                let fastest = |n: usize, ours: bool| {
                    points
                        .iter()
                        .filter(|r| r.n == n && compared(&r.series, ours))
                        .filter_map(|r| r.ms)
                        .reduce(f64::min)
                };
                let ratios = sizes
                    .into_iter()
                    .filter_map(|n| Some((fastest(n, false)? / fastest(n, true)?, size_label(n))));
                Outcome {
                    alone: self.worst(ratios),
                    batch: None,
                }
            }
        }
    }

    /// A cell of the tables: the worst value, where it is when the target
    /// covers several results, and whether it holds.
    fn cell(&self, worst: Option<&Worst>) -> String {
        let Some(w) = worst else {
            return "—".into();
        };
        let at = if w.of > 1 {
            format!(" (at {})", w.at)
        } else {
            String::new()
        };
        let met = self.measure.holds(w.value, self.bound);
        // Digits enough that a value short of the bound does not read as
        // the bound itself (0.9996 is not "1.000"), nor its shortfall as
        // none.
        let digits = |x: f64, d: usize, bound: f64| {
            if !met && format!("{x:.d$}") == format!("{bound:.d$}") {
                d + 2
            } else {
                d
            }
        };
        let verdict = if met {
            "met".to_string()
        } else {
            // How much faster the step would have to be.
            let short = match self.measure {
                Measure::TimeOverPeer => w.value / self.bound - 1.0,
                _ => self.bound / w.value - 1.0,
            } * 100.0;
            let d = digits(short, 1, 0.0);
            format!("**short by {short:.d$}%**")
        };
        let d = digits(w.value, 3, self.bound);
        format!("{:.d$}{at}: {verdict}", w.value)
    }
}

/// The targets some result of `records` bears on.
fn measured(records: &[Record]) -> Vec<(&'static Target, Outcome)> {
    TARGETS
        .iter()
        .map(|t| (t, t.outcome(records)))
        .filter(|(_, o)| o.alone.is_some() || o.batch.is_some())
        .collect()
}

/// What the tables' cells say, for the line above them.
const LEGEND: &str = "Each cell is the worst of the results the target covers (the fastest \
                      step of each case and group), where it is when there are several, and \
                      whether it is met; \"short by\" is how much faster the step would have \
                      to be.";

/// The report's "Targets" section for one run's records; empty where none
/// of its results bears on a target.
pub fn section(records: &[Record]) -> String {
    let rows = measured(records);
    if rows.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "\n## Targets\n\n{LEGEND} \"Back to back\" judges the ratios to the copy bandwidth \
         on the back-to-back column.\n\n| target | wanted | alone | back to back |\n|---|---:|---|---|\n"
    );
    for (t, o) in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            t.label,
            t.measure.wanted(t.bound),
            t.cell(o.alone.as_ref()),
            t.cell(o.batch.as_ref())
        );
    }
    out
}

/// The README's table: a row per target, for each device (`(name,
/// records)`) a column alone and one back to back.
pub fn devices_table(devices: &[(String, &[Record])]) -> String {
    let mut out = format!("{LEGEND}\n\n| target | wanted |");
    for (device, _) in devices {
        let _ = write!(out, " {device} alone | {device} back to back |");
    }
    out.push_str("\n|---|---:|");
    out.push_str(&"---|---|".repeat(devices.len()));
    out.push('\n');
    for t in TARGETS {
        let _ = write!(out, "| {} | {} |", t.label, t.measure.wanted(t.bound));
        for (_, records) in devices {
            let o = t.outcome(records);
            let (alone, batch) = (t.cell(o.alone.as_ref()), t.cell(o.batch.as_ref()));
            let _ = write!(out, " {alone} | {batch} |");
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(series: &str, n: usize, ms: f64) -> Record {
        Record {
            kind: "scaling".into(),
            family: "gemm".into(),
            title: "sgemm f32".into(),
            series: series.into(),
            n,
            ms: Some(ms),
            ..Record::default()
        }
    }

    /// A curve target of two named series compares those two alone, at
    /// every size, and names the worst size.
    #[test]
    fn a_curve_of_two_series_compares_only_those() {
        let records = [
            point("warpspeed fp32 (plan)", 128, 8.0),
            point("warpspeed tf32 (plan)", 128, 4.0),
            point("cuBLAS Sgemm", 128, 7.2),
            point("cuBLAS TF32 (best of Sgemm, Lt)", 128, 1.0),
            point("warpspeed fp32 (plan)", 256, 10.0),
            point("cuBLAS Sgemm", 256, 10.0),
        ];
        let fp32 = curve(
            "fp32",
            "gemm",
            &["sgemm f32"],
            ("warpspeed fp32 (", "cuBLAS Sgemm"),
            0.90,
        );
        let worst = fp32.outcome(&records).alone.expect("two sizes measured");
        assert_eq!((worst.value, worst.of), (0.9, 2));
        assert_eq!(worst.at, size_label(128));
        assert!(fp32.measure.holds(worst.value, fp32.bound));
        // Every warpspeed series against every other: the fastest of each.
        let any = target("any", "gemm", &["sgemm f32"], None, Curve, 0.90);
        let worst = any.outcome(&records).alone.expect("two sizes measured");
        assert_eq!((worst.value, worst.at), (0.25, size_label(128)));
    }

    /// A value just short of its bound shows the digits that tell it from
    /// the bound; others show three.
    #[test]
    fn a_cell_never_reads_as_its_bound_when_short() {
        let cell = |t: &Target, value: f64| {
            t.cell(Some(&Worst {
                value,
                at: String::new(),
                of: 1,
            }))
        };
        let peer = target("t", "sort", &["c"], None, Peer, 1.00);
        assert_eq!(cell(&peer, 0.9996), "0.99960: **short by 0.040%**");
        assert_eq!(cell(&peer, 0.993), "0.993: **short by 0.7%**");
        assert_eq!(cell(&peer, 1.0), "1.000: met");
        assert_eq!(cell(&peer, 1.0004), "1.000: met");
        let time = target("t", "rng", &["c"], None, TimeOverPeer, 0.85);
        assert_eq!(cell(&time, 0.852), "0.852: **short by 0.2%**");
        assert_eq!(cell(&time, 0.8502), "0.85020: **short by 0.024%**");
    }
}
