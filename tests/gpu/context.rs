//! The context: device facts, and what happens after a kernel fault.

use crate::common::*;
use cust::memory::{DevicePointer, DeviceSlice};
use libtest_mimic::{Completion, Failed, Trial};
use warpspeed::{Context, Error};

/// Set in the environment of the child process that faults on purpose.
pub const FAULT_CHILD: &str = "WARPSPEED_FAULT_CHILD";

pub fn trials(trials: &mut Vec<Trial>) {
    trials.push(gpu_trial("context::device_info", |ctx| {
        let info = ctx.info();
        eprintln!("  {info:?}");
        ensure(info.multiprocessors > 0 && info.total_memory > 0, || {
            "empty device facts".into()
        })?;
        let cc = info.compute_capability;
        let want = if cc.0 >= 9 { "sm_90" } else { "sm_70" };
        ensure(info.ptx_target == want, || {
            format!(
                "loaded {} PTX on a {}.{} device",
                info.ptx_target, cc.0, cc.1
            )
        })
    }));

    // A kernel fault destroys the CUDA context; the library must say so on
    // every later call instead of returning confusing driver codes. Run in a
    // child process: the fault would poison this one.
    trials.push(Trial::ignorable_test(
        "context::lost_after_a_kernel_fault",
        || {
            if no_device_reason().is_some() {
                return Ok(Completion::ignored_with("no CUDA device"));
            }
            if under_sanitizer() {
                return Ok(Completion::ignored_with(
                    "faults on purpose; not run under compute-sanitizer",
                ));
            }
            let exe = std::env::current_exe().map_err(|e| e.to_string())?;
            let out = std::process::Command::new(exe)
                .env(FAULT_CHILD, "1")
                .output()
                .map_err(|e| e.to_string())?;
            let stderr = String::from_utf8_lossy(&out.stderr);
            if out.status.success() {
                eprintln!("{}", stderr.trim());
                Ok(Completion::Completed)
            } else {
                Err(Failed::from(format!(
                    "fault child failed ({}): {stderr}",
                    out.status
                )))
            }
        },
    ));
}

/// In the child: read unmapped memory through an unsafe view, then check that
/// the fault is reported and that every later call says the context is lost.
pub fn fault_child() -> ! {
    let run = || -> Result<(), String> {
        let ctx = Context::new(0).map_err(|e| e.to_string())?;
        // SAFETY: deliberately invalid (this is the fault being tested); the
        // child process exists only to contain its consequences.
        let bogus =
            unsafe { DeviceSlice::<f32>::from_raw_parts(DevicePointer::from_raw(0x100), 1 << 20) };
        match ctx.sum(&bogus) {
            Err(e) if e.is_sticky() => eprintln!("  fault reported: {e}"),
            other => return Err(format!("reading unmapped memory gave {other:?}")),
        }
        let fine = upload(&[1.0f32; 4]).map_err(|_| "upload".to_string());
        // The upload itself may already fail on a dead context; either way
        // the library's next call must report ContextLost.
        let result = match &fine {
            Ok(buf) => ctx.sum(buf),
            Err(_) => ctx.synchronize().map(|()| 0.0),
        };
        match result {
            Err(Error::ContextLost { cause }) => {
                eprintln!("  next call: ContextLost (cause: {cause})");
                Ok(())
            }
            other => Err(format!(
                "after a fault, expected ContextLost, got {other:?}"
            )),
        }
    };
    match run() {
        Ok(()) => std::process::exit(0),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1)
        }
    }
}
