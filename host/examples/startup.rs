//! How long a fresh process waits before its first kernel: `Context::new`
//! (driver start-up, context, module load: a cubin on Ampere and Hopper,
//! the driver's JIT for PTX elsewhere), then a first small reduction.
//!
//! `cargo run --release --example startup [ordinal] [--split]`
//!
//! `--split` first starts the driver (`cuInit`) and retains the device's
//! primary context itself, timing each, so that `Context::new` then shows
//! the library's own share (module load, entry points, stream): the first
//! two are what any CUDA program pays.
//!
//! Run it as the first CUDA program on a machine for the cold figure. For
//! the PTX path instead of the cubin, force a target (`WARPSPEED_PTX=sm_90`)
//! and keep the driver's JIT cache out of it (`CUDA_CACHE_DISABLE=1`).
//! Prints one JSON object.

use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let split = args.iter().any(|a| a == "--split");
    let ordinal = args
        .iter()
        .find(|a| !a.starts_with("--"))
        .map_or(Ok(0), |a| a.parse())?;
    let ms = |t: std::time::Duration| t.as_secs_f64() * 1e3;
    let mut driver = String::new();
    let _primary = if split {
        let start = Instant::now();
        cust::init(cust::CudaFlags::empty())?;
        let init = start.elapsed();
        let start = Instant::now();
        let primary = cust::context::Context::new(cust::device::Device::get_device(ordinal)?)?;
        driver = format!(
            "\"cuinit_ms\":{:.1},\"primary_context_ms\":{:.1},",
            ms(init),
            ms(start.elapsed())
        );
        Some(primary)
    } else {
        None
    };
    let start = Instant::now();
    let ctx = warpspeed::Context::new(ordinal)?;
    let context_new = start.elapsed();

    let x = ctx.upload(&[1u32; 4096])?;
    let first = Instant::now();
    let sum = ctx.sum(&x)?;
    let first_sum = first.elapsed();
    assert_eq!(sum, 4096);

    let info = ctx.info();
    println!(
        "{{\"device\":\"{}\",\"target\":\"{}\",\"jit\":{},\"cache_disabled\":{},{driver}\"context_new_ms\":{:.1},\"first_sum_ms\":{:.2}}}",
        info.name,
        info.ptx_target,
        info.jit,
        std::env::var("CUDA_CACHE_DISABLE").is_ok_and(|v| v == "1"),
        ms(context_new),
        ms(first_sum),
    );
    Ok(())
}
