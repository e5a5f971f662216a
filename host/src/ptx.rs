//! The kernels embedded in the library: PTX for every target, machine code
//! (cubins) for the architectures we build and measure on, and the choice
//! among them for a device.
//!
//! Built by `cargo xtask build-ptx` from `gpu/` and committed, so users of
//! this crate need neither a nightly toolchain nor a PTX step. The build
//! script packs the six images (23 MB) with LZ4, and `Context::new`
//! unpacks the one it loads: a release program that calls `sum` is 7.7 MB
//! (24.3 MB with the images embedded as they are; x86-64, 2026-11), and
//! the sm_90a cubin unpacks in about 1.3 ms. A cubin loads
//! in milliseconds; PTX is compiled by the driver's JIT when the module is
//! loaded (about a second for this module on a fresh machine, less once the
//! driver's cache, `~/.nv/ComputeCache`, holds it), which is what devices of
//! an architecture without a cubin (Volta, Turing, Blackwell) get.

/// The environment variable that forces a PTX target (`sm_70`, `sm_80`,
/// `sm_90`, `sm_90a`)
/// instead of the newest one the device runs. A forced target is always
/// loaded as PTX (the driver compiles it), never as a cubin.
pub const PTX_OVERRIDE: &str = "WARPSPEED_PTX";

/// The environment variable that names a PTX file to load instead of the
/// embedded kernels: the line-info (and print) builds of `cargo xtask
/// build-ptx --lineinfo [--print]`, so that compute-sanitizer and Nsight
/// Compute name Rust files and lines. The file must define exactly the
/// kernels this library declares; the driver compiles it with line info.
pub const PTX_FILE: &str = "WARPSPEED_PTX_FILE";

/// An embedded image (PTX or a cubin), packed with LZ4 by the build script:
/// the library carries about a fifth of the images' 23 MB, and unpacks the
/// one it loads.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Packed(&'static [u8]);

impl Packed {
    /// The image's bytes.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) if the
    /// embedded bytes do not unpack (a damaged build).
    pub fn unpack(&self) -> crate::error::Result<Vec<u8>> {
        lz4_flex::decompress_size_prepended(self.0).map_err(|e| {
            crate::error::Error::InvalidArgument(format!("an embedded kernel image: {e}"))
        })
    }

    /// The image as text (PTX).
    ///
    /// # Errors
    /// As [`Packed::unpack`], and for an image that is not UTF-8.
    pub fn text(&self) -> crate::error::Result<String> {
        String::from_utf8(self.unpack()?).map_err(|e| {
            crate::error::Error::InvalidArgument(format!("an embedded PTX image: {e}"))
        })
    }
}

impl std::fmt::Debug for Packed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Packed({} B)", self.0.len())
    }
}

/// Embeds `ptx/<name>` as packed by the build script.
macro_rules! packed {
    ($name:literal) => {
        Packed(include_bytes!(concat!(env!("OUT_DIR"), "/", $name, ".lz4")))
    };
}

/// One embedded PTX module: its target and the compute capabilities
/// (`major * 10 + minor`) that run it.
#[derive(Clone, Copy, Debug)]
pub struct Module {
    /// The `.target` it was built for.
    pub target: &'static str,
    /// The oldest compute capability that runs it.
    pub min_cc: u32,
    /// The newest: the driver compiles portable PTX for any newer GPU, but
    /// arch-specific PTX (`sm_90a`) only for its own.
    pub max_cc: u32,
    /// The PTX, packed.
    pub ptx: Packed,
}

/// The embedded PTX, newest first: a device takes the first that it runs.
pub static MODULES: [Module; 4] = [
    Module {
        target: "sm_90a",
        min_cc: 90,
        max_cc: 90,
        ptx: packed!("warpspeed_sm_90a.ptx"),
    },
    Module {
        target: "sm_90",
        min_cc: 90,
        max_cc: u32::MAX,
        ptx: packed!("warpspeed_sm_90.ptx"),
    },
    Module {
        target: "sm_80",
        min_cc: 80,
        max_cc: u32::MAX,
        ptx: packed!("warpspeed_sm_80.ptx"),
    },
    Module {
        target: "sm_70",
        min_cc: 70,
        max_cc: u32::MAX,
        ptx: packed!("warpspeed_sm_70.ptx"),
    },
];

impl Module {
    /// Whether a device of compute capability `cc` (`major * 10 + minor`)
    /// runs it.
    pub fn runs_on(&self, cc: u32) -> bool {
        (self.min_cc..=self.max_cc).contains(&cc)
    }
}

/// `(compute capability major, target, cubin)`: machine code that `ptxas`
/// made from the PTX of the same target. A cubin runs on its own major
/// architecture at any minor version at or above its target's (`sm_80` on
/// 8.0, 8.6 and 8.9; `sm_90a` on 9.0, the only 9.x), and on nothing else.
pub static CUBINS: [(u32, &str, Packed); 2] = [
    (9, "sm_90a", packed!("warpspeed_sm_90a.cubin")),
    (8, "sm_80", packed!("warpspeed_sm_80.cubin")),
];

/// What the driver is given to load: machine code, or PTX it compiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Image {
    /// A cubin for the device's architecture: loads without compiling.
    Cubin(Packed),
    /// PTX, compiled by the driver's JIT when loaded.
    Ptx(Packed),
}

/// The best module for a device of compute capability `major.minor`:
/// `(target, PTX)`, or `None` if the device is older than every target.
pub fn select(major: u32, minor: u32) -> Option<(&'static str, Packed)> {
    let cc = major * 10 + minor;
    MODULES
        .iter()
        .find(|m| m.runs_on(cc))
        .map(|m| (m.target, m.ptx))
}

/// The shipped cubin for a device of compute capability `major.minor`:
/// `(target, cubin)`, or `None` where the device gets PTX.
pub fn cubin_for(major: u32, minor: u32) -> Option<(&'static str, Packed)> {
    CUBINS
        .iter()
        .find(|&&(arch, target, _)| {
            arch == major && select(major, minor).is_some_and(|(t, _)| t == target)
        })
        .map(|&(_, target, cubin)| (target, cubin))
}

/// The image to load on a device of compute capability `cc`: the cubin of
/// its architecture where one is shipped, else the newest PTX it runs; or
/// the PTX of `forced` (a target name, from `WARPSPEED_PTX`). `Ok(None)` if
/// the device is older than every target.
pub(crate) fn choose(
    (major, minor): (u32, u32),
    forced: Option<&str>,
) -> crate::error::Result<Option<(&'static str, Image)>> {
    let Some(forced) = forced else {
        if let Some((target, cubin)) = cubin_for(major, minor) {
            return Ok(Some((target, Image::Cubin(cubin))));
        }
        return Ok(select(major, minor).map(|(target, ptx)| (target, Image::Ptx(ptx))));
    };
    match MODULES.iter().find(|m| m.target == forced) {
        None => Err(crate::error::Error::InvalidArgument(format!(
            "{}={forced}: no such PTX target; the library ships {}",
            PTX_OVERRIDE,
            targets()
        ))),
        Some(m) if m.runs_on(major * 10 + minor) => Ok(Some((m.target, Image::Ptx(m.ptx)))),
        Some(_) => Err(crate::error::Error::InvalidArgument(format!(
            "{}={forced}: a {major}.{minor} device cannot run PTX built for {forced}",
            PTX_OVERRIDE
        ))),
    }
}

/// A PTX file to load instead of the embedded kernels ([`PTX_FILE`]).
pub(crate) struct PtxFile {
    /// Where it was read from, for messages.
    pub(crate) path: String,
    /// The PTX.
    pub(crate) text: String,
    /// Its `.target`, one of [`MODULES`]'.
    pub(crate) target: &'static str,
}

/// The PTX file named by [`PTX_FILE`], if set; see [`read_ptx_file`].
pub(crate) fn ptx_file() -> crate::error::Result<Option<PtxFile>> {
    match std::env::var(PTX_FILE).ok().filter(|p| !p.is_empty()) {
        Some(path) => read_ptx_file(path).map(Some),
        None => Ok(None),
    }
}

/// Reads the PTX at `path` and checks it against the kernel tables (every
/// declared kernel with its parameters, nothing unresolved but `vprintf`)
/// and for a `.target` the library knows.
pub(crate) fn read_ptx_file(path: String) -> crate::error::Result<PtxFile> {
    let invalid =
        |why: String| crate::error::Error::InvalidArgument(format!("{PTX_FILE}={path}: {why}"));
    let text = std::fs::read_to_string(&path).map_err(|e| invalid(e.to_string()))?;
    let target = text
        .lines()
        .find_map(|l| l.trim().strip_prefix(".target "))
        .map(|t| t.split([',', ' ']).next().unwrap_or_default())
        .and_then(|t| MODULES.iter().find(|m| m.target == t).map(|m| m.target))
        .ok_or_else(|| invalid(format!("no `.target` of {}", targets())))?;
    let mut problems = Vec::new();
    warpspeed_gpu::ptx::check(&text, &mut |p| problems.push(p.to_string()));
    if !problems.is_empty() {
        return Err(invalid(format!(
            "not a build of these kernels: {}",
            problems.join("; ")
        )));
    }
    Ok(PtxFile { path, text, target })
}

/// The shipped PTX targets, for messages.
fn targets() -> String {
    MODULES
        .iter()
        .map(|m| m.target)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether a device of compute capability `cc` (`major * 10 + minor`)
/// runs PTX of `target` (one of [`MODULES`]).
pub(crate) fn runs(target: &str, cc: u32) -> bool {
    MODULES
        .iter()
        .find(|m| m.target == target)
        .is_some_and(|m| m.runs_on(cc))
}

/// The PTX of `target` (one of [`MODULES`]), packed.
pub(crate) fn ptx_of(target: &str) -> Option<Packed> {
    MODULES.iter().find(|m| m.target == target).map(|m| m.ptx)
}

/// `Err(Unsupported)` for `variant`, which needs `needs`, where the loaded
/// module, built for `target`, lacks it; `instead` says what runs there
/// (the family's way to the fastest step the device has). One wording of
/// what each need asks of the device, for every family with such steps.
pub(crate) fn require(
    needs: warpspeed_gpu::ptx::Needs,
    target: &str,
    variant: &'static str,
    instead: &str,
) -> crate::error::Result<()> {
    use warpspeed_gpu::ptx::Needs;
    if needs.met_by(target) {
        return Ok(());
    }
    let reason = match needs {
        Needs::Sm90a => format!(
            "needs `wgmma` (the sm_90a PTX, which compute capability 9.0 alone \
             loads), but this context loaded the {target} PTX; {instead}"
        ),
        _ => format!(
            "needs TF32 tensor cores (compute capability 8.0 and PTX built for sm_80 \
             or newer), but this context loaded the {target} PTX (a GPU older than \
             Ampere, or WARPSPEED_PTX={target}); {instead}"
        ),
    };
    Err(crate::error::Error::Unsupported { variant, reason })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(image: Image) -> &'static str {
        match image {
            Image::Cubin(_) => "cubin",
            Image::Ptx(_) => "ptx",
        }
    }

    #[test]
    fn a_forced_target_must_exist_and_run_on_the_device() {
        let (target, image) = choose((9, 0), Some("sm_70")).unwrap().unwrap();
        assert_eq!((target, kind(image)), ("sm_70", "ptx"));
        // Forcing the device's own target still loads PTX (the JIT path).
        let (target, image) = choose((9, 0), Some("sm_90a")).unwrap().unwrap();
        assert_eq!((target, kind(image)), ("sm_90a", "ptx"));
        let (target, image) = choose((9, 0), Some("sm_90")).unwrap().unwrap();
        assert_eq!((target, kind(image)), ("sm_90", "ptx"));
        assert!(choose((8, 0), Some("sm_90")).is_err());
        // Arch-specific PTX runs on its own architecture alone.
        assert!(choose((10, 0), Some("sm_90a")).is_err());
        assert!(choose((10, 0), Some("sm_90")).is_ok());
        assert!(choose((9, 0), Some("sm_75")).is_err());
    }

    #[test]
    fn cubins_where_shipped_ptx_elsewhere() {
        let pick = |major, minor| {
            choose((major, minor), None)
                .unwrap()
                .map(|(target, image)| (target, kind(image)))
        };
        assert_eq!(pick(9, 0), Some(("sm_90a", "cubin")));
        assert_eq!(pick(8, 0), Some(("sm_80", "cubin")));
        assert_eq!(pick(8, 6), Some(("sm_80", "cubin")));
        assert_eq!(pick(8, 9), Some(("sm_80", "cubin")));
        // Blackwell: no cubin; the sm_90 PTX through the JIT.
        assert_eq!(pick(10, 0), Some(("sm_90", "ptx")));
        assert_eq!(pick(12, 0), Some(("sm_90", "ptx")));
        assert_eq!(pick(7, 5), Some(("sm_70", "ptx")));
        assert_eq!(pick(6, 1), None);
    }

    #[test]
    fn newest_target_that_the_device_can_run() {
        assert_eq!(select(9, 0).unwrap().0, "sm_90a");
        assert_eq!(select(10, 0).unwrap().0, "sm_90");
        assert_eq!(select(12, 0).unwrap().0, "sm_90");
        assert_eq!(select(8, 9).unwrap().0, "sm_80");
        assert_eq!(select(8, 0).unwrap().0, "sm_80");
        assert_eq!(select(7, 5).unwrap().0, "sm_70");
        assert_eq!(select(7, 0).unwrap().0, "sm_70");
        assert!(select(6, 1).is_none());
    }

    #[test]
    fn one_module_per_target_of_the_device_crate() {
        let mut shipped: Vec<&str> = MODULES.iter().map(|m| m.target).collect();
        shipped.reverse(); // MODULES is newest first
        assert_eq!(shipped, warpspeed_gpu::ptx::TARGETS);
    }

    /// The committed PTX defines exactly the declared kernels, with the
    /// declared parameters, and calls nothing external.
    #[test]
    fn committed_ptx_matches_the_kernel_tables() {
        for Module { target, ptx, .. } in MODULES {
            let ptx = &ptx.text().unwrap();
            let mut problems = Vec::new();
            warpspeed_gpu::ptx::check(ptx, &mut |p| problems.push(p.to_string()));
            assert!(problems.is_empty(), "{target}: {problems:#?}");
            assert!(
                ptx.contains(&format!(".target {target}\n")),
                "{target}: wrong .target line"
            );
        }
    }

    #[test]
    fn one_cubin_per_cubin_target_of_the_device_crate() {
        let mut shipped: Vec<&str> = CUBINS.iter().map(|c| c.1).collect();
        shipped.reverse();
        assert_eq!(shipped, warpspeed_gpu::ptx::CUBIN_TARGETS);
        for (major, target, cubin) in CUBINS {
            assert!(
                cubin.unpack().unwrap().starts_with(b"\x7fELF"),
                "{target}: not an ELF image"
            );
            assert!(target.starts_with(&format!("sm_{major}")), "{target}");
            assert!(MODULES.iter().any(|m| m.target == target));
        }
    }

    /// Every packed image unpacks to the committed file it was made from.
    #[test]
    fn packed_images_unpack_to_the_committed_files() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("ptx");
        // The files are read from the checkout this executable was built
        // in; a bundle run on another machine has no checkout beside it.
        if !dir.is_dir() {
            eprintln!(
                "skipped: the committed kernel files are not at {} (a bundle away from its \
                 checkout); `cargo test` in the repository checks them",
                dir.display()
            );
            return;
        }
        let read = |name: String| std::fs::read(dir.join(name)).unwrap();
        for m in &MODULES {
            let file = read(format!("warpspeed_{}.ptx", m.target));
            assert!(m.ptx.unpack().unwrap() == file, "{}", m.target);
        }
        for (_, target, cubin) in &CUBINS {
            let file = read(format!("warpspeed_{target}.cubin"));
            assert!(cubin.unpack().unwrap() == file, "{target}");
        }
    }

    /// A PTX file is refused, naming the file, unless it is a build of
    /// these very kernels for a target the library knows.
    #[test]
    fn a_ptx_file_must_be_a_build_of_these_kernels() {
        let dir = std::env::temp_dir().join(format!("warpspeed-ptx-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let write = |name: &str, text: &str| {
            let path = dir.join(name);
            std::fs::write(&path, text).unwrap();
            path.display().to_string()
        };
        let refused = |path: String, why: &str| match read_ptx_file(path.clone()) {
            Err(crate::error::Error::InvalidArgument(m)) => {
                assert!(m.contains(&path) && m.contains(why), "{m}")
            }
            Err(e) => panic!("{path}: {e}"),
            Ok(_) => panic!("{path} was accepted"),
        };
        refused(dir.join("missing.ptx").display().to_string(), "");
        refused(
            write("old.ptx", ".version 7.0\n.target sm_75\n"),
            "no `.target`",
        );
        refused(
            write(
                "empty.ptx",
                ".version 7.8\n.target sm_90\n.address_size 64\n",
            ),
            "not a build of these kernels",
        );
        let shipped = write("sm_80.ptx", &MODULES[2].ptx.text().unwrap());
        let file = read_ptx_file(shipped).unwrap();
        assert_eq!(file.target, "sm_80");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
