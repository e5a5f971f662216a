//! The ladder benchmark's reports, rendered from the JSON a run writes
//! (`ladder.json`) and from nothing else: `cargo xtask report` writes a
//! run's `report.md` and SVG charts ([`write_report`]), `cargo xtask
//! readme` the measured tables of the README and the guides from the
//! committed reports ([`update_readme`]). The bench itself only measures,
//! writes the JSON and prints each table as it goes ([`tables`]).
//!
//! * [`records`]: the JSON read back, and its strings;
//! * [`tables`]: a case's and a scaling curve's Markdown table;
//! * [`report`]: the whole report; [`svg`]: its charts;
//! * [`targets`]: the project's speed targets, as data, judged on records;
//! * [`readme`]: the generated tables of the README and the guides.

pub mod readme;
pub mod records;
pub mod report;
pub mod svg;
pub mod tables;
pub mod targets;

use std::path::Path;

/// Windows of back-to-back launches, each timed as a whole, whose median
/// per launch is a step's back-to-back time: the bench's method, which the
/// report describes.
pub const BATCH_WINDOWS: usize = 3;

/// Launches at least this long (ms) are not timed back to back: the GPU's
/// gap between two launches (about a microsecond) is then under 0.1 % of
/// the time.
pub const BATCH_BELOW_MS: f64 = 1.0;

/// Writes `report.md` and the charts rendered from a run's JSON into
/// `dir`.
///
/// # Errors
/// A file that cannot be written.
pub fn write_report(json: &str, dir: &Path) -> Result<(), String> {
    for (name, contents) in report::render(json) {
        let path = dir.join(name);
        std::fs::write(&path, contents).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// Renders the generated tables of `path` (the README or a guide) from the
/// committed reports (`docs/bench/` at or above its folder); with `check`,
/// only says whether they are current.
///
/// # Errors
/// A file that cannot be read or written, a malformed generated block, or
/// with `check` a table that differs from what the reports give.
pub fn update_readme(path: &Path, check: bool) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    // The reports live in the repository's docs/bench, above the file
    // (README.md at the root, a guide in docs/).
    let docs = path
        .ancestors()
        .skip(1)
        .map(|dir| dir.join("docs/bench"))
        .find(|dir| dir.is_dir())
        .ok_or_else(|| format!("{}: no docs/bench folder above it", path.display()))?;
    let new = readme::splice(&text, &readme::reports(&docs)?)?;
    if new == text {
        println!("{}: the generated tables are current", path.display());
        return Ok(());
    }
    if check {
        return Err(format!(
            "{}: a generated table differs from what the reports under {} give; \
             run `cargo xtask readme`",
            path.display(),
            docs.display()
        ));
    }
    std::fs::write(path, new).map_err(|e| format!("{}: {e}", path.display()))?;
    println!("{}: generated tables rewritten", path.display());
    Ok(())
}
