//! PTX with line tables, for sanitizers and profilers (`cargo xtask build-ptx
//! --lineinfo [--print]`): building it and stripping what ptxas refuses.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::ptx::{
    Flavor, PTX_TARGETS, build_device_crate, check_built_ptx, with_launch_bounds,
    with_param_alignment,
};
use crate::ptxas::{Ptxas, ptxas_path};
use crate::root;

/// Where `cargo xtask build-ptx --lineinfo [--print]` writes its PTX.
fn lineinfo_dir() -> PathBuf {
    root().join("target/ptx-lineinfo")
}

/// `cargo xtask build-ptx --lineinfo [--print]`: the PTX of every target
/// with line tables (and with `print` the feature `debug-print`), checked
/// like the release build, into [`lineinfo_dir`]; `host/ptx/` stays as it
/// is. Where ptxas is installed, it compiles each file with `-lineinfo` (as
/// the driver will), beside the next target's build.
pub(crate) fn build_ptx_lineinfo(print: bool) -> Result<(), String> {
    let flavor = if print {
        Flavor::Print
    } else {
        Flavor::LineInfo
    };
    let suffix = if print { ".print.ptx" } else { ".ptx" };
    let ptxas = ptxas_path();
    let mut compiling = Vec::new();
    let mut written = Vec::new();
    for target in PTX_TARGETS {
        let started = Instant::now();
        let dest = lineinfo_dir().join(format!("warpspeed_{target}{suffix}"));
        let summary = write_lineinfo_ptx(target, flavor, &dest)?;
        println!(
            "{target}: {summary} -> {} ({:.1} s)",
            dest.display(),
            started.elapsed().as_secs_f64()
        );
        if ptxas.is_ok() {
            let cubin = flavor
                .target_dir(target)
                .join(format!("warpspeed_{target}.cubin"));
            compiling.push(Ptxas::start(target, &dest, cubin, &["-lineinfo"])?);
        }
        written.push(dest);
    }
    for ptxas in compiling {
        let target = ptxas.target;
        ptxas.finish()?;
        println!("{target}: ptxas -arch={target} -lineinfo compiles it");
    }
    if let Err(why) = ptxas {
        println!("note: not compiled here ({why})");
    }
    let example = written.last().ok_or("no PTX target")?;
    println!(
        "Load one instead of the embedded kernels, on a GPU its target runs on (sm_90: H100/H200; \
         sm_80: A100 and 8.x; sm_70: any): the host library compiles it with line info, so \
         compute-sanitizer and Nsight Compute name Rust files and lines:\n  \
         WARPSPEED_PTX_FILE={} compute-sanitizer --tool memcheck <test or program>",
        example.display()
    );
    if print {
        println!(
            "gpu_print! lines and device panics (`panic at gpu/src/...:line:column`) appear on \
             stdout when the host synchronises. Never commit a gpu_print! call."
        );
    }
    Ok(())
}

/// Builds the PTX of `target` with line tables (`flavor` is
/// [`Flavor::LineInfo`] or [`Flavor::Print`]), makes it loadable
/// ([`strip_debug_sections`]), checks it and writes it to `dest`. Returns a
/// summary for the terminal: entries, `.loc` lines, `vprintf` calls.
pub(crate) fn write_lineinfo_ptx(
    target: &str,
    flavor: Flavor,
    dest: &Path,
) -> Result<String, String> {
    let built = build_device_crate(target, flavor)?;
    let text = fs::read_to_string(&built).map_err(|e| format!("{}: {e}", built.display()))?;
    let ptx = strip_debug_sections(&text).map_err(|e| format!("{}: {e}", built.display()))?;
    let ptx = with_param_alignment(&with_launch_bounds(&ptx)?)?;
    let entries = check_built_ptx(target, &ptx, flavor)?;
    let lines = |what: &str| {
        ptx.lines()
            .filter(|l| l.trim_start().starts_with(what))
            .count()
    };
    let locs = lines(".loc");
    if locs == 0 {
        return Err(format!(
            "{}: no `.loc` line: the build has no line tables",
            built.display()
        ));
    }
    let mut summary = format!(
        "{entries} entry points, {} files, {locs} .loc lines",
        lines(".file")
    );
    if flavor == Flavor::Print {
        let calls = ptx
            .lines()
            .filter(|l| l.trim_start().starts_with("call") && l.contains("vprintf"))
            .count();
        let _ = write!(summary, ", calls to vprintf: {calls}");
    }
    fs::create_dir_all(dest.parent().unwrap()).map_err(|e| e.to_string())?;
    fs::write(dest, &ptx).map_err(|e| format!("{}: {e}", dest.display()))?;
    Ok(summary)
}

/// PTX with line tables (`debug = "line-tables-only"`) as ptxas and the
/// driver take it. rustc writes, besides the `.file` and `.loc` directives
/// that `ptxas -lineinfo` (and the driver, with `CU_JIT_GENERATE_LINE_INFO`)
/// read, DWARF sections that ptxas refuses; this keeps the directives and
/// drops
///
/// * every `.section .debug_*` block: from its `.section` line through the
///   line that closes its braces (`{` on that line or a later one; `{ }` on
///   one line);
/// * the `$L__sec_end<N>:` labels left between those blocks;
/// * `debug` from the `.target` line (`.target sm_90, debug`), which asks
///   for the full debug information those sections were;
///
/// and moves the `.file` table from the end of the module to its top (after
/// `.address_size`), where ptxas resolves `.loc` file numbers against it.
///
/// Fails on a section that is not `.debug_*` or does not end, and if a
/// reference to what it dropped is left. PTX without those parts comes back
/// unchanged.
fn strip_debug_sections(ptx: &str) -> Result<String, String> {
    /// A `.debug_*` section being skipped.
    struct Section {
        /// Its `.section` line, counted from 1.
        line: usize,
        /// Braces opened minus braces closed so far.
        depth: i64,
        /// Whether its `{` has come.
        opened: bool,
    }
    let mut out = String::with_capacity(ptx.len());
    let mut files = Vec::new();
    let mut section: Option<Section> = None;
    for (index, line) in ptx.lines().enumerate() {
        let text = line.trim();
        // The back end lists `.file`s after the functions; ptxas reads a
        // `.loc`'s file number against the table seen so far, so misfiled
        // lines follow (found with Nsight Compute): hoist the table.
        if section.is_none() && text.starts_with(".file") && text[5..].starts_with([' ', '\t']) {
            files.push(line);
            continue;
        }
        if section.is_none()
            && let Some(name) = text.strip_prefix(".section")
        {
            if !name.trim_start().starts_with(".debug") {
                return Err(format!(
                    "line {}: `{text}` is not a debug section",
                    index + 1
                ));
            }
            section = Some(Section {
                line: index + 1,
                depth: 0,
                opened: false,
            });
        }
        if let Some(open) = &mut section {
            let braces = |c: char| text.chars().filter(|&t| t == c).count() as i64;
            open.depth += braces('{') - braces('}');
            open.opened |= text.contains('{');
            if open.depth < 0 {
                return Err(format!(
                    "line {}: a `}}` closes more than the section of line {} opened",
                    index + 1,
                    open.line
                ));
            }
            if open.opened && open.depth == 0 {
                section = None;
            }
            continue;
        }
        let label = text
            .strip_prefix("$L__sec_end")
            .and_then(|rest| rest.strip_suffix(':'));
        if label.is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())) {
            continue;
        }
        let target = text
            .strip_prefix(".target")
            .filter(|rest| rest.starts_with([' ', '\t']));
        if let Some(rest) = target {
            let kept: Vec<&str> = rest
                .split(',')
                .map(str::trim)
                .filter(|part| *part != "debug")
                .collect();
            out.push_str(".target ");
            out.push_str(&kept.join(", "));
            out.push('\n');
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    if let Some(open) = section {
        return Err(format!(
            "the section of line {} does not end (unbalanced braces)",
            open.line
        ));
    }
    if !files.is_empty() {
        let at = out
            .find(".address_size")
            .and_then(|i| out[i..].find('\n').map(|end| i + end + 1))
            .unwrap_or(0);
        out.insert_str(at, &(files.join("\n") + "\n"));
    }
    for (index, line) in out.lines().enumerate() {
        if line.contains(".debug_") || line.contains("$L__sec_end") {
            return Err(format!(
                "line {} still refers to a dropped section: `{}`",
                index + 1,
                line.trim()
            ));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape of rustc's PTX with line tables, shortened.
    const LINEINFO_PTX: &str = "\
//
// Generated by LLVM NVPTX Back-End
//

.version 7.8
.target sm_90, debug
.address_size 64

.visible .entry a_f32(
\t.param .u64 .ptr .align 1 a_f32_param_0
)
{
\t.loc\t1 12 0
$L__func_begin0:
\t.loc\t1 14 5
\tret;
$L__func_end0:

}
\t.file\t1 \"gpu/src/reduce.rs\"
\t.file\t2 \"gpu/src/prim/index.rs\"
\t.section\t.debug_abbrev
\t{
.b8 1
.b8 17
\t}
\t.section\t.debug_info
\t{
.b32 .debug_abbrev
.b64 $L__func_begin0
\t}
$L__sec_end0:
\t.section\t.debug_aranges
\t{
.b64 $L__sec_end0-$L__func_begin0
\t}
\t.section\t.debug_macinfo\t{\t}
";
    #[test]
    fn strips_debug_sections_and_keeps_line_tables() {
        let expected = "\
//
// Generated by LLVM NVPTX Back-End
//

.version 7.8
.target sm_90
.address_size 64
\t.file\t1 \"gpu/src/reduce.rs\"
\t.file\t2 \"gpu/src/prim/index.rs\"

.visible .entry a_f32(
\t.param .u64 .ptr .align 1 a_f32_param_0
)
{
\t.loc\t1 12 0
$L__func_begin0:
\t.loc\t1 14 5
\tret;
$L__func_end0:

}
";
        let stripped = strip_debug_sections(LINEINFO_PTX).unwrap();
        assert_eq!(stripped, expected);
        // Nothing left to strip: unchanged, as is release PTX.
        assert_eq!(strip_debug_sections(&stripped).unwrap(), stripped);
    }

    #[test]
    fn strips_every_shape_of_debug_section() {
        let ptx = "\
.target sm_80, texmode_independent, debug
\t.section .debug_str { .b8 0 }
\t.section\t.debug_loc {
{ .b8 1 }
}
$L__sec_end12:
.section .debug_line
{
}
ret;
";
        assert_eq!(
            strip_debug_sections(ptx).unwrap(),
            ".target sm_80, texmode_independent\nret;\n"
        );
    }

    #[test]
    fn refuses_what_it_cannot_strip_safely() {
        for (ptx, why) in [
            (".section .debug_info\n{\n.b8 1\n", "does not end"),
            (".section .debug_info\n{\n} }\n", "closes more"),
            (".section .nv.constant0 { }\n", "not a debug section"),
            (".b64 $L__sec_end0\n", "still refers"),
            (".b32 .debug_info\n", "still refers"),
        ] {
            let error = strip_debug_sections(ptx).unwrap_err();
            assert!(error.contains(why), "{ptx:?}: {error}");
        }
    }
}
