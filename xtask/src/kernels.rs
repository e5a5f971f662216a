//! `cargo xtask kernels [--check]`: every entry's registers, shared memory,
//! stack and spills per target, as a table, Markdown and JSON.

use std::fmt::Write as _;
use std::fs;

use crate::ptx::{PTX_TARGETS, ptx_path};
use crate::ptxas::{Ptxas, Usage, parse_ptxas, ptxas_release};
use crate::root;

/// One entry of the kernel tables and its usage on each PTX target.
struct KernelRow {
    family: &'static str,
    name: &'static str,
    usage: [Usage; PTX_TARGETS.len()],
}

impl KernelRow {
    fn spills(&self) -> bool {
        self.usage.iter().any(Usage::spills)
    }

    /// "sm_90: 16 B stack" for each target where the stack or a spill is
    /// not zero.
    fn stack_and_spills(&self) -> String {
        let parts: Vec<String> = PTX_TARGETS
            .iter()
            .zip(&self.usage)
            .map(|(target, usage)| (target, usage.stack_and_spills()))
            .filter(|(_, text)| !text.is_empty())
            .map(|(target, text)| format!("{target}: {text}"))
            .collect();
        parts.join("; ")
    }
}

/// `ptxas -v` on the committed PTX of every target (`reports` holds those
/// [`build_ptx`] already made from the same PTX): every entry's registers,
/// shared memory, stack and spills, as a table grouped by family on stdout
/// and in `target/kernels.md`, and in `target/kernels.json` (fields in
/// [`kernels_json`]). With `check`, fails if an entry spills on any target
/// and `SPILLS_ON_PURPOSE` does not name it, or if that list names an entry
/// that does not exist.
///
/// [`build_ptx`]: crate::ptx::build_ptx
pub(crate) fn kernels(check: bool, mut reports: Vec<(&'static str, String)>) -> Result<(), String> {
    let scratch = root().join("target/kernels");
    fs::create_dir_all(&scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
    let mut compiling = Vec::new();
    for target in PTX_TARGETS {
        if !reports.iter().any(|(done, _)| *done == target) {
            let cubin = scratch.join(format!("warpspeed_{target}.cubin"));
            compiling.push(Ptxas::start(target, &ptx_path(target), cubin, &[])?);
        }
    }
    for ptxas in compiling {
        reports.push((ptxas.target, ptxas.finish()?));
    }

    let parsed: Vec<Vec<(String, Usage)>> = PTX_TARGETS
        .iter()
        .map(|target| {
            let (_, report) = reports.iter().find(|(done, _)| done == target).unwrap();
            parse_ptxas(report)
        })
        .collect();
    let mut rows = Vec::new();
    for (family, table) in warpspeed_gpu::FAMILIES {
        for kernel in table.iter() {
            let mut usage = [Usage::default(); PTX_TARGETS.len()];
            for (i, target) in PTX_TARGETS.iter().enumerate() {
                let (_, found) = parsed[i]
                    .iter()
                    .find(|(name, _)| name == kernel.name)
                    .ok_or_else(|| format!("ptxas -v reports no `{}` for {target}", kernel.name))?;
                usage[i] = *found;
            }
            rows.push(KernelRow {
                family,
                name: kernel.name,
                usage,
            });
        }
    }

    let summary = kernels_summary(&rows);
    print!("{}", kernels_table(&rows));
    println!("{summary}");
    let release = ptxas_release()?;
    for (file, text) in [
        ("kernels.json", kernels_json(&rows, &release)),
        ("kernels.md", kernels_markdown(&rows, &release, &summary)),
    ] {
        let path = root().join("target").join(file);
        fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
        println!("-> {}", path.display());
    }

    let on_purpose = warpspeed_gpu::SPILLS_ON_PURPOSE;
    let mut problems = Vec::new();
    for name in on_purpose {
        match rows.iter().find(|row| row.name == *name) {
            None => problems.push(format!(
                "SPILLS_ON_PURPOSE names `{name}`, which no kernel table declares"
            )),
            Some(row) if !row.usage.iter().any(|u| u.stack > 0 || u.spills()) => println!(
                "note: `{name}` is in SPILLS_ON_PURPOSE but no longer uses local memory \
                 (no stack, no spills)"
            ),
            Some(_) => {}
        }
    }
    let spilling: Vec<String> = rows
        .iter()
        .filter(|row| row.spills() && !on_purpose.contains(&row.name))
        .map(|row| format!("`{}` spills ({})", row.name, row.stack_and_spills()))
        .collect();
    if !spilling.is_empty() {
        problems.extend(spilling);
        problems.push(
            "remove the spills, or name the entry in its family's SPILLS_ON_PURPOSE (beside its kernels table) with the reason"
                .into(),
        );
    }
    if !check || problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// "118 entries; max registers sm_70 255, sm_80 255, sm_90 254; 0 spilling".
fn kernels_summary(rows: &[KernelRow]) -> String {
    let max: Vec<String> = PTX_TARGETS
        .iter()
        .enumerate()
        .map(|(i, target)| {
            let registers = rows.iter().map(|row| row.usage[i].registers).max();
            format!("{target} {}", registers.unwrap_or(0))
        })
        .collect();
    let spilling = rows.iter().filter(|row| row.spills()).count();
    format!(
        "{} entries; max registers {}; {spilling} spilling",
        rows.len(),
        max.join(", ")
    )
}

/// The table for the terminal: a line per family, then its entries.
fn kernels_table(rows: &[KernelRow]) -> String {
    let width = rows.iter().map(|row| row.name.len() + 2).max().unwrap_or(0);
    let group = 6 * PTX_TARGETS.len();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:width$} {:^group$}   {:^group$}   stack, spills",
        "", "registers", "shared bytes"
    );
    let mut targets = String::new();
    for target in PTX_TARGETS {
        let _ = write!(targets, " {target:>5}");
    }
    let _ = writeln!(out, "{:width$} {targets}   {targets}", "entry");
    let mut family = "";
    for row in rows {
        if row.family != family {
            family = row.family;
            let _ = writeln!(out, "{family}");
        }
        let mut line = format!("  {:w$} ", row.name, w = width - 2);
        for usage in &row.usage {
            let _ = write!(line, " {:>5}", usage.registers);
        }
        line.push_str("   ");
        for usage in &row.usage {
            let _ = write!(line, " {:>5}", usage.shared);
        }
        let _ = writeln!(out, "{line}   {}", row.stack_and_spills());
        out.truncate(out.trim_end().len());
        out.push('\n');
    }
    out
}

/// The same table in Markdown, for `target/kernels.md`.
fn kernels_markdown(rows: &[KernelRow], release: &str, summary: &str) -> String {
    let mut out = String::from("# Kernel resources\n\n");
    let _ = writeln!(
        out,
        "`ptxas -v` ({release}) on the committed PTX of each target, written by \
         `cargo xtask kernels`: registers per thread, static shared memory in bytes \
         (the dynamic part is sized at launch), and the stack frame and spills where \
         they are not zero.\n"
    );
    let mut header = String::from("| family | entry |");
    let mut rule = String::from("|---|---|");
    for what in ["registers", "shared bytes"] {
        for target in PTX_TARGETS {
            let _ = write!(header, " {what} {target} |");
            rule.push_str("--:|");
        }
    }
    let _ = writeln!(out, "{header} stack, spills |\n{rule}---|");
    for row in rows {
        let _ = write!(out, "| {} | `{}` |", row.family, row.name);
        for usage in &row.usage {
            let _ = write!(out, " {} |", usage.registers);
        }
        for usage in &row.usage {
            let _ = write!(out, " {} |", usage.shared);
        }
        let _ = writeln!(out, " {} |", row.stack_and_spills());
    }
    let _ = writeln!(out, "\n{summary}");
    out
}

/// The figures as JSON, for `target/kernels.json`:
///
/// * `ptxas`: the release that made them (its `--version` line);
/// * `targets`: the PTX targets, in order;
/// * `entries`: one object per entry, in the order of the kernel tables
///   (`FAMILIES`), with `family`, `name` (the PTX entry name),
///   `spills_on_purpose` (named in `SPILLS_ON_PURPOSE`) and `usage`, an
///   object keyed by target whose values hold `registers` (per thread),
///   `barriers`, `shared_bytes` (static shared memory; the dynamic part is
///   sized at launch), `stack_bytes` (stack frame), `spill_store_bytes` and
///   `spill_load_bytes`.
fn kernels_json(rows: &[KernelRow], release: &str) -> String {
    let targets: Vec<String> = PTX_TARGETS.iter().map(|t| json_string(t)).collect();
    let mut out = String::new();
    let _ = writeln!(out, "{{");
    let _ = writeln!(out, "  \"ptxas\": {},", json_string(release));
    let _ = writeln!(out, "  \"targets\": [{}],", targets.join(", "));
    let _ = writeln!(out, "  \"entries\": [");
    for (i, row) in rows.iter().enumerate() {
        let usage: Vec<String> = PTX_TARGETS
            .iter()
            .zip(&row.usage)
            .map(|(target, u)| {
                format!(
                    "{}: {{\"registers\": {}, \"barriers\": {}, \"shared_bytes\": {}, \"stack_bytes\": {}, \"spill_store_bytes\": {}, \"spill_load_bytes\": {}}}",
                    json_string(target),
                    u.registers,
                    u.barriers,
                    u.shared,
                    u.stack,
                    u.spill_stores,
                    u.spill_loads
                )
            })
            .collect();
        let _ = writeln!(
            out,
            "    {{\"family\": {}, \"name\": {}, \"spills_on_purpose\": {}, \"usage\": {{{}}}}}{}",
            json_string(row.family),
            json_string(row.name),
            warpspeed_gpu::SPILLS_ON_PURPOSE.contains(&row.name),
            usage.join(", "),
            if i + 1 < rows.len() { "," } else { "" }
        );
    }
    let _ = writeln!(out, "  ]\n}}");
    out
}

/// `text` as a JSON string literal.
fn json_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
