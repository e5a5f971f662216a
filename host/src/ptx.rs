//! The PTX embedded in the library, one module per target, and the choice
//! among them for a device.
//!
//! Built by `cargo xtask build-ptx` from `gpu/` and committed, so users of
//! this crate need neither a nightly toolchain nor a PTX step.

/// The environment variable that forces a PTX target (`sm_70`, `sm_80`, `sm_90`)
/// instead of the newest one the device runs.
pub const PTX_OVERRIDE: &str = "WARPSPEED_PTX";

/// `(minimum compute capability as major * 10 + minor, target, PTX)`, newest
/// first. The driver compiles PTX for newer GPUs than its target; PTX for
/// `sm_90` does not load on older ones.
pub const MODULES: [(u32, &str, &str); 3] = [
    (90, "sm_90", include_str!("../ptx/warpspeed_sm_90.ptx")),
    (80, "sm_80", include_str!("../ptx/warpspeed_sm_80.ptx")),
    (70, "sm_70", include_str!("../ptx/warpspeed_sm_70.ptx")),
];

/// The best module for a device of compute capability `major.minor`:
/// `(target, PTX)`, or `None` if the device is older than every target.
pub fn select(major: u32, minor: u32) -> Option<(&'static str, &'static str)> {
    let cc = major * 10 + minor;
    MODULES
        .iter()
        .find(|(min, _, _)| cc >= *min)
        .map(|&(_, target, ptx)| (target, ptx))
}

/// The module to load on a device of compute capability `cc`: the newest
/// it runs, or `forced` (a target name, from `WARPSPEED_PTX`). `Ok(None)`
/// if the device is older than every target.
pub(crate) fn choose(
    (major, minor): (u32, u32),
    forced: Option<&str>,
) -> crate::Result<Option<(&'static str, &'static str)>> {
    let Some(forced) = forced else {
        return Ok(select(major, minor));
    };
    let targets = || MODULES.iter().map(|m| m.1).collect::<Vec<_>>().join(", ");
    match MODULES.iter().find(|(_, target, _)| *target == forced) {
        None => Err(crate::Error::InvalidArgument(format!(
            "{}={forced}: no such PTX target; the library ships {}",
            PTX_OVERRIDE,
            targets()
        ))),
        Some(&(min, target, ptx)) if major * 10 + minor >= min => Ok(Some((target, ptx))),
        Some(_) => Err(crate::Error::InvalidArgument(format!(
            "{}={forced}: a {major}.{minor} device cannot run PTX built for {forced}",
            PTX_OVERRIDE
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_forced_target_must_exist_and_run_on_the_device() {
        assert_eq!(choose((9, 0), Some("sm_70")).unwrap().unwrap().0, "sm_70");
        assert_eq!(choose((9, 0), None).unwrap().unwrap().0, "sm_90");
        assert!(choose((8, 0), Some("sm_90")).is_err());
        assert!(choose((9, 0), Some("sm_75")).is_err());
    }

    #[test]
    fn newest_target_that_the_device_can_run() {
        assert_eq!(select(9, 0).unwrap().0, "sm_90");
        assert_eq!(select(10, 0).unwrap().0, "sm_90");
        assert_eq!(select(8, 9).unwrap().0, "sm_80");
        assert_eq!(select(8, 0).unwrap().0, "sm_80");
        assert_eq!(select(7, 5).unwrap().0, "sm_70");
        assert_eq!(select(7, 0).unwrap().0, "sm_70");
        assert!(select(6, 1).is_none());
    }

    #[test]
    fn one_module_per_target_of_the_device_crate() {
        let mut shipped: Vec<&str> = MODULES.iter().map(|m| m.1).collect();
        shipped.reverse(); // MODULES is newest first
        assert_eq!(shipped, warpspeed_gpu::ptx::TARGETS);
    }

    /// The committed PTX defines exactly the declared kernels, with the
    /// declared parameters, and calls nothing external.
    #[test]
    fn committed_ptx_matches_the_kernel_tables() {
        for (_, target, ptx) in MODULES {
            let mut problems = Vec::new();
            warpspeed_gpu::ptx::check(ptx, &mut |p| problems.push(p.to_string()));
            assert!(problems.is_empty(), "{target}: {problems:#?}");
            assert!(
                ptx.contains(&format!(".target {target}")),
                "{target}: wrong .target line"
            );
        }
    }
}
