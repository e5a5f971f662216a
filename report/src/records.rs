//! `ladder.json` as read back: its result lines ([`Record`], [`parse`]), its
//! header values ([`header`]), the unit of a record's rate ([`Unit`]) and
//! the run's ceilings ([`Ceilings`]); and the JSON strings both sides use
//! ([`field`], [`escape`]). The bottom of the rendering: the tables, the
//! charts, the report and the README's tables draw from these records. The
//! writing side (the bench's `json.rs`) documents the fields.

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
    /// Its JSON keys: the amount of one launch, the rate, the rate over
    /// the ceiling, the back-to-back rate over the ceiling.
    pub fn keys(self) -> [&'static str; 4] {
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
    pub fn ceiling(self) -> &'static str {
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

    /// Decimals of a rate in tables and charts.
    pub fn digits(self) -> usize {
        match self {
            Unit::Bandwidth => 0,
            Unit::Compute => 1,
        }
    }
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
    pub fn of_case(&self) -> bool {
        self.kind == "step" || self.kind == "peer"
    }
}

/// The fastest step of each group of one case (a group: the steps with
/// the same `versus` and peer, e.g. the sums; every step in JSON without
/// groups), in the order the groups first appear: the summary's rows, and
/// what a target is measured on.
pub fn fastest_of_groups<'r>(records: &'r [Record], family: &str, case: &str) -> Vec<&'r Record> {
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
    groups
        .iter()
        .filter_map(|g| {
            steps
                .iter()
                .filter(|r| group(r) == *g)
                .max_by(|a, b| a.rate.unwrap_or(0.0).total_cmp(&b.rate.unwrap_or(0.0)))
                .copied()
        })
        .collect()
}

/// The result lines of a JSON file written by `json::json` (or of a case).
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

/// `2^20` for powers of two above 1024 (a scaling curve's sizes), the
/// number otherwise.
pub fn size_label(n: usize) -> String {
    if n.is_power_of_two() && n > 1024 {
        format!("2^{}", n.trailing_zeros())
    } else {
        n.to_string()
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
    /// The ceiling of `unit`, if known.
    pub fn of(&self, unit: Unit) -> Option<f64> {
        match unit {
            Unit::Bandwidth => Some(self.memcpy_gbs),
            Unit::Compute => self.peak_tflops,
        }
    }

    /// The ceiling of `unit` for launches back to back, if known: the
    /// copies back to back for bandwidth, the same peak for compute.
    pub fn of_batch(&self, unit: Unit) -> Option<f64> {
        match unit {
            Unit::Bandwidth => Some(self.memcpy_batch_gbs).filter(|&g| g > 0.0),
            Unit::Compute => self.peak_tflops,
        }
    }
}

/// The value of `"key"` in one line of JSON: an object (`{...}`, a record
/// or a peer program's line) or one member of one (`"key": value`, a
/// report's header line), a trailing comma allowed. Strings come unquoted
/// and unescaped, other values as JSON writes them; `None` where the line
/// is not JSON or has no such key.
pub fn field(line: &str, key: &str) -> Option<String> {
    let line = line.trim().trim_end_matches(',');
    let object = if line.starts_with('{') {
        serde_json::from_str::<serde_json::Value>(line).ok()?
    } else {
        serde_json::from_str::<serde_json::Value>(&format!("{{{line}}}")).ok()?
    };
    Some(match object.get(key)? {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    })
}

/// `s` as the inside of a JSON string: quotes, backslashes and control
/// characters escaped.
pub fn escape(s: &str) -> String {
    let quoted = serde_json::Value::String(s.to_string()).to_string();
    quoted[1..quoted.len() - 1].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A string with quotes, a backslash, a newline and a tab written into
    /// a record reads back the same: the round trip the reports rely on.
    #[test]
    fn records_round_trip_quotes_and_newlines() {
        let message = "peer said \"no\":\n\tC:\\path, {odd}";
        let line = format!(
            "{{\"kind\":\"peer\",\"case\":\"{}\",\"ms\":1.5}},",
            escape(message)
        );
        assert!(serde_json::from_str::<serde_json::Value>(line.trim_end_matches(',')).is_ok());
        assert_eq!(field(&line, "case").as_deref(), Some(message));
        assert_eq!(field(&line, "ms").as_deref(), Some("1.5"));
        assert_eq!(field(&line, "kind").as_deref(), Some("peer"));
        assert_eq!(field(&line, "missing"), None);
        assert_eq!(
            field("  \"device\": \"H100\",", "device").as_deref(),
            Some("H100")
        );
        assert_eq!(field("not json", "kind"), None);
        let records = parse(&line);
        assert_eq!(records.len(), 1);
        assert_eq!(records[0].case, message);
    }
}
