//! The context: device facts, and what happens after a kernel fault.

use crate::common::*;
use libtest_mimic::{Completion, Failed, Trial};
use warpspeed::reduce::{Op, ReduceVariant};
use warpspeed::{Context, Error, Matrix, MatrixMut, View};

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
        let newest = if cc == (9, 0) {
            "sm_90a"
        } else if cc.0 >= 9 {
            "sm_90"
        } else if cc.0 >= 8 {
            "sm_80"
        } else {
            "sm_70"
        };
        let forced = std::env::var(warpspeed::PTX_OVERRIDE)
            .ok()
            .filter(|t| !t.is_empty());
        let want = forced.as_deref().unwrap_or(newest);
        ensure(info.ptx_target == want, || {
            format!(
                "loaded {} PTX on a {}.{} device",
                info.ptx_target, cc.0, cc.1
            )
        })?;
        // Machine code on Ampere and Hopper, unless a PTX target or file is
        // forced.
        let file = std::env::var(warpspeed::PTX_FILE).is_ok_and(|f| !f.is_empty());
        let cubin = forced.is_none() && !file && matches!(cc.0, 8 | 9);
        ensure(info.jit != cubin, || {
            format!("jit = {} on a {}.{} device", info.jit, cc.0, cc.1)
        })?;
        // The listing describes the same device without a context.
        let listed = ok(Context::devices())?;
        ensure(listed.get(info.ordinal as usize) == Some(info), || {
            format!("Context::devices() lists {listed:?}")
        })
    }));

    // The driver's view of every loaded kernel: no local memory (stack or
    // spills) except where a ladder declares it, as `cargo xtask kernels`
    // checks with ptxas.
    trials.push(gpu_trial("context::kernel_resources", |ctx| {
        let kernels = ok(ctx.kernel_resources())?;
        let declared: usize = warpspeed_gpu::FAMILIES.iter().map(|(_, t)| t.len()).sum();
        ensure(kernels.len() == declared, || {
            format!("{} kernels reported, {declared} declared", kernels.len())
        })?;
        let most = kernels.iter().max_by_key(|k| k.registers).unwrap();
        eprintln!("  most registers: {} ({})", most.registers, most.name);
        for k in &kernels {
            ensure(k.registers > 0 && k.max_threads_per_block > 0, || {
                format!("{k:?}")
            })?;
            ensure(
                k.local_bytes == 0 || warpspeed_gpu::SPILLS_ON_PURPOSE.contains(&k.name),
                || format!("{} uses {} B of local memory", k.name, k.local_bytes),
            )?;
        }
        // The entries built for several blocks per SM take exactly their
        // block and leave room for those blocks' registers.
        for b in warpspeed_gpu::LAUNCH_BOUNDS {
            let k = kernels.iter().find(|k| k.name == b.entry).unwrap();
            ensure(
                k.max_threads_per_block == b.threads
                    && k.registers * b.threads * b.blocks_per_sm <= 65_536,
                || format!("{k:?} against {b:?}"),
            )?;
        }
        Ok(())
    }));

    // A context made on one thread works on another: the library makes the
    // device current there (and `bind` does it for the caller's own driver
    // calls); a buffer made through one queue works on another of the
    // device.
    trials.push(gpu_trial("context::moves_to_another_thread", |ctx| {
        let moved = ok(Context::new(ctx.info().ordinal))?;
        let here = upload(ctx, &vec![2u32; 1_000_003])?;
        let (a, b) = std::thread::scope(|s| {
            s.spawn(move || -> Result<(u32, u32), Failed> {
                let a = ok(moved.sum(&here))?;
                ok(moved.bind())?;
                let there = upload(&moved, &vec![3u32; 999_999])?;
                Ok((a, ok(moved.sum(&there))?))
            })
            .join()
            .map_err(|_| Failed::from("the thread panicked"))?
        })?;
        ensure((a, b) == (2_000_006, 2_999_997), || {
            format!("sums on the other thread: {a}, {b}")
        })
    }));

    // Buffers freed right after enqueueing: the guard waits for the GPU
    // first (compute-sanitizer memcheck would report a kernel touching freed
    // memory). Large enough that the kernels are still running when the
    // host reaches the frees.
    trials.push(gpu_trial(
        "context::buffers_freed_right_after_enqueueing",
        |ctx| {
            let side = 4096;
            for round in 0..8u8 {
                let src = upload(ctx, &vec![round; side * side])?;
                let mut dst = poisoned(ctx, side * side, 0u8)?;
                let mut sums = poisoned(ctx, side, 0u32)?;
                let image = ok(Matrix::new(&src, side, side))?;
                let transposed =
                    ok(ctx.transpose_into(&image, &mut ok(MatrixMut::new(&mut dst, side, side))?))?;
                let columns = ok(ctx.column_sums_into(&image, &mut sums))?;
                drop((transposed, columns));
                drop((src, dst, sums)); // right away: the guards have waited
            }
            ok(ctx.synchronize())
        },
    ));

    // Two queues of one device run reductions concurrently, each with its
    // own scratch memory (the single pass's ticket counter and partials).
    trials.push(gpu_trial(
        "context::streams_have_their_own_scratch",
        |ctx| {
            let other = ok(ctx.new_stream())?;
            let a = upload(ctx, &vec![1u32; 10_000_019])?;
            let b = upload(ctx, &vec![3u32; 7_000_003])?;
            let mut out_a = poisoned(ctx, 1, 0u32)?;
            let mut out_b = poisoned(ctx, 1, 0u32)?;
            for _ in 0..20 {
                let pa = ok(ctx.reduce_into(Op::Sum, ReduceVariant::Vectorized, &a, &mut out_a))?;
                let pb = ok(other.reduce_into(Op::Sum, ReduceVariant::Cascading, &b, &mut out_b))?;
                ok(pa.wait())?;
                ok(pb.wait())?;
                let (ga, gb) = (download(ctx, &out_a)?[0], download(&other, &out_b)?[0]);
                ensure(ga == 10_000_019 && gb == 21_000_009, || {
                    format!("sums on two streams: {ga}, {gb}")
                })?;
            }
            ensure(other.scratch_bytes() > 0 && ctx.scratch_bytes() > 0, || {
                "each queue holds its own scratch".into()
            })
        },
    ));

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
        let bogus = unsafe { View::<f32>::from_raw_parts(0x100, 1 << 20, ctx.info().ordinal) };
        match ctx.sum(&bogus) {
            Err(e) if e.is_sticky() => eprintln!("  fault reported: {e}"),
            other => return Err(format!("reading unmapped memory gave {other:?}")),
        }
        let fine = upload(&ctx, &[1.0f32; 4]).map_err(|_| "upload".to_string());
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
