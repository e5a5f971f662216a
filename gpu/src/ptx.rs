//! Reading the entry points out of PTX text, and checking them against the
//! kernel tables.
//!
//! Used by `cargo xtask build-ptx` (the build fails on any problem) and by the
//! host library's tests on the committed PTX, so a stale or hand-edited PTX
//! file cannot ship. No allocation: this runs in `no_std`.

use crate::{FAMILIES, Kernel};

/// The PTX targets the crate is built for (`cargo xtask build-ptx`) and
/// the host library ships, oldest first: a baseline every GPU from Volta
/// on loads (the driver compiles it for newer chips), Ampere's (the first
/// with `cp.async` and TF32 tensor cores, also run by sm_86 and sm_89),
/// Hopper's portable one (which newer GPUs compile), and Hopper's
/// arch-specific one (`wgmma`), which runs on compute capability 9.0
/// alone. Code behind `cfg(target_feature = "sm_80")` and `"sm_90a"`
/// differs between them.
pub const TARGETS: [&str; 4] = ["sm_70", "sm_80", "sm_90", "sm_90a"];

/// The instructions a step of any family needs, and so the PTX modules
/// ([`TARGETS`]) that run it: its entry traps in the others, and the host
/// refuses it there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Needs {
    /// Nothing beyond sm_70: every module.
    Any,
    /// `cp.async` and `mma.sync` on TF32: the sm_80 module and newer.
    Sm80,
    /// `wgmma`, one of Hopper's arch-specific instructions: the sm_90a
    /// module alone, which only compute capability 9.0 loads (the sm_90
    /// module, which newer GPUs compile, has none).
    Sm90a,
}

impl Needs {
    /// Whether the module built for `target` (`sm_70`, `sm_80`, `sm_90`,
    /// `sm_90a`) runs these instructions.
    pub fn met_by(self, target: &str) -> bool {
        let version = target
            .strip_prefix("sm_")
            .map(|v| v.trim_end_matches('a'))
            .and_then(|v| v.parse::<u32>().ok());
        match self {
            Needs::Any => true,
            Needs::Sm80 => version.is_some_and(|v| v >= 80),
            Needs::Sm90a => target == "sm_90a",
        }
    }
}

/// The targets for which the library also ships machine code (cubins that
/// `cargo xtask build-ptx` has ptxas make from the PTX of the same target).
/// A cubin for sm_80 also loads on 8.6 and 8.9, the one for sm_90a on 9.0
/// (the only 9.x); every other device gets PTX, which the driver compiles
/// (JIT) when loading it.
pub const CUBIN_TARGETS: [&str; 2] = ["sm_80", "sm_90a"];

/// External functions the driver resolves when it loads a module, which PTX
/// may therefore declare (`.extern .func`) and call: `vprintf`, the device's
/// `printf`, which only the debugging builds of the feature `debug-print`
/// call (`cargo xtask build-ptx` refuses it in the PTX it ships).
#[doc(hidden)]
pub const DRIVER_FUNCTIONS: [&str; 1] = ["vprintf"];

/// The most parameters an entry may have for [`PtxEntry`] to record them.
pub const MAX_PARAMS: usize = crate::kernel::MAX_PARAMS;

/// One `.entry` of a PTX module: its name and the byte size and declared
/// alignment of each parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PtxEntry<'a> {
    /// The entry's name.
    pub name: &'a str,
    params: [usize; MAX_PARAMS],
    aligns: [u16; MAX_PARAMS],
    count: usize,
}

impl<'a> PtxEntry<'a> {
    /// Byte size of each parameter, in order.
    pub fn params(&self) -> &[usize] {
        &self.params[..self.count]
    }

    /// Each parameter's `.align`, in order (0 where it states none).
    pub fn aligns(&self) -> &[u16] {
        &self.aligns[..self.count]
    }
}

/// Something wrong with a PTX module, as `check` reports it.
// A problem is handed once to `check`'s callback, never stored in bulk:
// the entry a mismatch carries may make it large.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PtxProblem<'a> {
    /// A call to a function the module does not define (e.g. a panic path
    /// that was not optimised away) and the driver does not provide (see
    /// `DRIVER_FUNCTIONS`): the driver would refuse to load it.
    UnresolvedCall {
        /// The `.extern .func` line.
        line: &'a str,
    },
    /// A kernel of the tables that the PTX does not define.
    MissingEntry {
        /// The declared kernel.
        kernel: Kernel,
    },
    /// A kernel whose PTX parameters differ from the table's.
    ParamMismatch {
        /// The declared kernel.
        kernel: Kernel,
        /// What the PTX defines.
        found: PtxEntry<'a>,
    },
    /// A kernel whose PTX declares a parameter less aligned than the
    /// table asks ([`Kernel::aligns`]: `cargo xtask build-ptx` raises it).
    ParamAlignment {
        /// The declared kernel.
        kernel: Kernel,
        /// The parameter's index.
        param: usize,
        /// The alignment the PTX declares.
        declared: u16,
    },
    /// An entry point in the PTX that no table declares.
    UndeclaredEntry {
        /// The entry's name.
        name: &'a str,
    },
    /// An entry with more than [`MAX_PARAMS`] parameters or unreadable ones.
    Unparsable {
        /// The entry's name.
        name: &'a str,
    },
}

impl core::fmt::Display for PtxProblem<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            PtxProblem::UnresolvedCall { line } => {
                write!(
                    f,
                    "unresolved external function (a panic path?): `{}`",
                    line.trim()
                )
            }
            PtxProblem::MissingEntry { kernel } => {
                write!(f, "kernel `{}` is declared but not in the PTX", kernel.name)
            }
            PtxProblem::ParamMismatch { kernel, found } => write!(
                f,
                "kernel `{}` is declared with parameter sizes {:?} but the PTX has {:?}",
                kernel.name,
                kernel.params,
                found.params()
            ),
            PtxProblem::ParamAlignment {
                kernel,
                param,
                declared,
            } => write!(
                f,
                "kernel `{}` declares parameter {param} aligned on {declared} bytes, not the {} its type asks",
                kernel.name, kernel.aligns[*param]
            ),
            PtxProblem::UndeclaredEntry { name } => {
                write!(
                    f,
                    "the PTX defines `{name}`, which no kernel table declares"
                )
            }
            PtxProblem::Unparsable { name } => {
                write!(f, "cannot read the parameters of `{name}`")
            }
        }
    }
}

/// The `.entry` points of `ptx`, in order. An entry whose parameters cannot be
/// read has `count == usize::MAX` internally and is reported by [`check`].
#[doc(hidden)]
pub fn entries(ptx: &str) -> impl Iterator<Item = PtxEntry<'_>> {
    let mut lines = ptx.lines();
    core::iter::from_fn(move || {
        loop {
            let line = lines.next()?.trim();
            let Some(rest) = line
                .strip_prefix(".visible .entry ")
                .or_else(|| line.strip_prefix(".entry "))
            else {
                continue;
            };
            let name = rest.split('(').next().unwrap_or(rest).trim();
            let mut entry = PtxEntry {
                name,
                params: [0; MAX_PARAMS],
                aligns: [0; MAX_PARAMS],
                count: 0,
            };
            if rest.contains("()") {
                return Some(entry);
            }
            for param in lines.by_ref() {
                let param = param.trim();
                if param.starts_with(')') {
                    break;
                }
                match param_bytes(param) {
                    Some((bytes, align)) if entry.count < MAX_PARAMS => {
                        entry.params[entry.count] = bytes;
                        entry.aligns[entry.count] = align;
                        entry.count += 1;
                    }
                    _ => entry.count = usize::MAX,
                }
                if entry.count == usize::MAX {
                    // Skip to the end of the parameter list.
                    for rest in lines.by_ref() {
                        if rest.trim().starts_with(')') {
                            break;
                        }
                    }
                    break;
                }
            }
            return Some(entry);
        }
    })
}

/// Byte size and `.align` (0 for none) of one `.param` line: `.param .u64
/// .ptr .align 1 name,` is 8 bytes aligned on 1, `.param .align 8 .b8
/// name[16]` 16 on 8, `.param .u32 name` 4 on 0.
#[doc(hidden)]
pub fn param_bytes(line: &str) -> Option<(usize, u16)> {
    let mut words = line.trim_end_matches(',').split_whitespace();
    if words.next()? != ".param" {
        return None;
    }
    let mut elem = None;
    let mut align = 0;
    let mut last = "";
    let mut after_align = false;
    for word in words {
        if after_align {
            align = word.parse().ok()?;
        }
        after_align = word == ".align";
        last = word;
        elem = elem.or(match word {
            ".b8" | ".u8" | ".s8" => Some(1),
            ".b16" | ".u16" | ".s16" | ".f16" => Some(2),
            ".b32" | ".u32" | ".s32" | ".f32" => Some(4),
            ".b64" | ".u64" | ".s64" | ".f64" => Some(8),
            _ => None,
        });
    }
    let elem = elem?;
    let bytes = match last.split_once('[') {
        Some((_, count)) => elem * count.strip_suffix(']')?.parse::<usize>().ok()?,
        None => elem,
    };
    Some((bytes, align))
}

/// The name an `.extern .func` line declares, e.g. `vprintf` in
/// `.extern .func  (.param .b32 func_retval0) vprintf(` (the return value, if
/// any, comes first; the parameters may start on the next line). `None` for
/// any other line.
#[doc(hidden)]
pub fn extern_func_name(line: &str) -> Option<&str> {
    let rest = line
        .trim_start()
        .strip_prefix(".extern .func")?
        .trim_start();
    let rest = match rest.strip_prefix('(') {
        Some(returns) => returns.split_once(')')?.1.trim_start(),
        None => rest,
    };
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '.')))
        .unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

/// Checks `ptx` against every kernel table: no unresolved calls (an
/// `.extern .func` other than [`DRIVER_FUNCTIONS`]), every declared kernel
/// present with the declared parameter sizes, nothing undeclared. Calls
/// `report` once per problem; returns how many there were.
#[doc(hidden)]
pub fn check<'a>(ptx: &'a str, report: &mut dyn FnMut(PtxProblem<'a>)) -> usize {
    check_tables(ptx, FAMILIES, report)
}

/// [`check`] against the given tables.
#[doc(hidden)]
pub fn check_tables<'a>(
    ptx: &'a str,
    families: &[(&str, &[Kernel])],
    report: &mut dyn FnMut(PtxProblem<'a>),
) -> usize {
    let mut problems = 0;
    let mut emit = |p| {
        problems += 1;
        report(p)
    };
    for line in ptx.lines() {
        if !line.trim_start().starts_with(".extern .func") {
            continue;
        }
        let provided = extern_func_name(line).is_some_and(|name| DRIVER_FUNCTIONS.contains(&name));
        if !provided {
            emit(PtxProblem::UnresolvedCall { line });
        }
    }
    let declared = || families.iter().flat_map(|(_, kernels)| kernels.iter());
    for kernel in declared() {
        match entries(ptx).find(|e| e.name == kernel.name) {
            None => emit(PtxProblem::MissingEntry { kernel: *kernel }),
            Some(found) if found.count == usize::MAX => {
                emit(PtxProblem::Unparsable { name: found.name })
            }
            Some(found) if found.params() != kernel.params => emit(PtxProblem::ParamMismatch {
                kernel: *kernel,
                found,
            }),
            Some(found) => {
                for (param, (&declared, &wanted)) in
                    found.aligns().iter().zip(kernel.aligns).enumerate()
                {
                    if usize::from(declared) < wanted {
                        emit(PtxProblem::ParamAlignment {
                            kernel: *kernel,
                            param,
                            declared,
                        });
                    }
                }
            }
        }
    }
    for entry in entries(ptx) {
        if !declared().any(|k| k.name == entry.name) {
            emit(PtxProblem::UndeclaredEntry { name: entry.name });
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "
.visible .entry a_f32(
	.param .u64 .ptr .align 1 a_f32_param_0,
	.param .u32 a_f32_param_1,
	.param .align 8 .b8 a_f32_param_2[16]
)
{
}
.visible .entry b_f32()
{
}
";

    #[test]
    fn reads_entries_and_param_sizes() {
        let found: [(&str, &[usize], &[u16]); 2] =
            [("a_f32", &[8, 4, 16], &[1, 0, 8]), ("b_f32", &[], &[])];
        let mut it = entries(SAMPLE);
        for (name, params, aligns) in found {
            let e = it.next().unwrap();
            assert_eq!((e.name, e.params(), e.aligns()), (name, params, aligns));
        }
        assert!(it.next().is_none());
    }

    #[test]
    fn reports_every_kind_of_problem() {
        let a = Kernel {
            name: "a_f32",
            base: "a",
            ty: "f32",
            params: &[8, 4, 8],
            aligns: &[0, 0, 0],
        };
        let c = Kernel {
            name: "c_f32",
            base: "c",
            ty: "f32",
            params: &[],
            aligns: &[],
        };
        // `a` with the sizes of the PTX, but its aggregate asked on 64.
        let a64 = Kernel {
            params: &[8, 4, 16],
            aligns: &[0, 0, 64],
            ..a
        };
        let mut misaligned = 0;
        check_tables(SAMPLE, &[("t", &[a64])], &mut |p| match p {
            PtxProblem::ParamAlignment {
                param: 2,
                declared: 8,
                ..
            } => misaligned += 1,
            PtxProblem::UndeclaredEntry { name: "b_f32" } => {}
            other => panic!("unexpected {other}"),
        });
        assert_eq!(misaligned, 1);
        let tables: &[(&str, &[Kernel])] = &[("t", &[a, c])];
        let ptx = [SAMPLE, ".extern .func foo\n"].concat();
        let mut kinds = [0usize; 4];
        let n = check_tables(&ptx, tables, &mut |p| match p {
            PtxProblem::UnresolvedCall { .. } => kinds[0] += 1,
            PtxProblem::MissingEntry { kernel } => {
                assert_eq!(kernel.name, "c_f32");
                kinds[1] += 1
            }
            PtxProblem::ParamMismatch { kernel, .. } => {
                assert_eq!(kernel.name, "a_f32");
                kinds[2] += 1
            }
            PtxProblem::UndeclaredEntry { name } => {
                assert_eq!(name, "b_f32");
                kinds[3] += 1
            }
            PtxProblem::Unparsable { .. } | PtxProblem::ParamAlignment { .. } => {
                panic!("unexpected")
            }
        });
        assert_eq!((n, kinds), (4, [1, 1, 1, 1]));
    }

    #[test]
    fn lets_only_the_driver_functions_through() {
        // As LLVM declares `vprintf`: the return value first, the parameters
        // on the lines after it.
        let vprintf = ".extern .func  (.param .b32 func_retval0) vprintf\n(\n\t.param .b64 vprintf_param_0,\n\t.param .b64 vprintf_param_1\n)\n;\n";
        for (line, name) in [
            (
                ".extern .func  (.param .b32 func_retval0) vprintf",
                Some("vprintf"),
            ),
            ("\t.extern .func vprintf(", Some("vprintf")),
            (
                ".extern .func (.param .b32 func_retval0) vprintf_x(",
                Some("vprintf_x"),
            ),
            (".extern .func foo", Some("foo")),
            (".extern .func", None),
            (".func vprintf", None),
        ] {
            assert_eq!(extern_func_name(line), name, "{line}");
        }
        fn unresolved(ptx: &str) -> (usize, [&str; 4]) {
            let mut lines = [""; 4];
            let mut n = 0;
            check_tables(ptx, &[], &mut |p| {
                if let PtxProblem::UnresolvedCall { line } = p {
                    lines[n] = line.trim();
                    n += 1;
                }
            });
            (n, lines)
        }
        assert_eq!(unresolved(vprintf).0, 0);
        let others = [
            vprintf,
            ".extern .func  (.param .b32 func_retval0) vprintf_x(\n",
            ".extern .func  (.param .b32 func_retval0) printf(\n",
            ".extern .func _RNvCs_panic\n",
        ]
        .concat();
        let (n, lines) = unresolved(&others);
        assert_eq!(
            (n, &lines[..3]),
            (
                3,
                &[
                    ".extern .func  (.param .b32 func_retval0) vprintf_x(",
                    ".extern .func  (.param .b32 func_retval0) printf(",
                    ".extern .func _RNvCs_panic",
                ][..]
            )
        );
    }
}
