//! `Bench`'s recording methods (`record`, `record_work`,
//! `record_scaling`, `record_scaling_with`): each prints its case's or
//! curve's table as the report renders it, from its JSON lines
//! ([`crate::json`]), keeps it for the JSON and writes the JSON again
//! (`save`). Here rather than in `harness.rs`, so that the harness imports
//! neither the JSON writer nor the rendering.

use crate::harness::{Bench, Case, Point, Scaling, Work};
use crate::json::{case_records, ceilings_of, json, scaling_records};
use warpspeed_report::records::parse;
use warpspeed_report::tables::{case_table, scaling_markdown};

/// A case's table, as printed during the run.
fn table(case: &Case, work: Work, bench: &Bench) -> String {
    let text = case_records(case, work, ceilings_of(bench)).join("\n");
    let records = parse(&text);
    case_table(&records.iter().collect::<Vec<_>>())
}

/// A scaling curve's table, as printed during the run.
fn scaling_table(s: &Scaling, works: &[Work]) -> String {
    let records = parse(&scaling_records(s, works).join("\n"));
    scaling_markdown(&records.iter().collect::<Vec<_>>())
}

/// `Bench`'s recording methods: each prints its table as the report
/// renders it ([`table`], [`scaling_table`]) and keeps the results for the
/// JSON. Here rather than in `harness.rs`, so that the harness stays below
/// the JSON writer and this module.
impl Bench<'_> {
    /// Prints a case's table and keeps it for the report: rates in GB/s of
    /// its `bytes`.
    pub fn record(&mut self, title: &str, case: Case) {
        self.record_work(title, case, Work::Bytes);
    }

    /// Prints a case's table and keeps it for the report, its rates those
    /// of `work`.
    pub fn record_work(&mut self, title: &str, case: Case, work: Work) {
        println!("\n{title}");
        print!("{}", table(&case, work, self));
        self.cases.push((case, work));
        self.save_or_warn();
    }

    /// Prints a scaling curve's table and keeps it for the report: rates
    /// in GB/s of each point's `bytes`.
    pub fn record_scaling(&mut self, scaling: Scaling) {
        let works = vec![Work::Bytes; scaling.points.len()];
        self.record_scaling_work(scaling, works);
    }

    /// Prints a scaling curve's table and keeps it for the report, the rate
    /// of each point that of `work(point)`.
    pub fn record_scaling_with(&mut self, scaling: Scaling, work: impl Fn(&Point) -> Work) {
        let works = scaling.points.iter().map(work).collect();
        self.record_scaling_work(scaling, works);
    }

    fn record_scaling_work(&mut self, scaling: Scaling, works: Vec<Work>) {
        println!("\n{} (scaling)", scaling.title);
        print!("{}", scaling_table(&scaling, &works));
        self.scaling.push((scaling, works));
        self.save_or_warn();
    }

    /// Writes `ladder.json` into `out` (where set) with everything
    /// recorded so far; returns its path.
    pub fn save(&self) -> Result<Option<std::path::PathBuf>, String> {
        let Some(dir) = &self.out else {
            return Ok(None);
        };
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let path = dir.join("ladder.json");
        std::fs::write(&path, json(self)).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(Some(path))
    }

    /// [`Bench::save`] after a case: a failure to write is reported and
    /// the run goes on (the end of the run writes again, and fails then).
    fn save_or_warn(&self) {
        if let Err(e) = self.save() {
            eprintln!("warning: ladder.json not written: {e}");
        }
    }
}
