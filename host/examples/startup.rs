//! How long a fresh process waits before its first kernel: `Context::new`
//! (driver start-up, context, module load: a cubin on Ampere and Hopper,
//! the driver's JIT for PTX elsewhere), then a first small reduction.
//!
//! `cargo run --release --example startup [ordinal]`
//!
//! Run it as the first CUDA program on a machine for the cold figure. For
//! the PTX path instead of the cubin, force a target (`WARPSPEED_PTX=sm_90`)
//! and keep the driver's JIT cache out of it (`CUDA_CACHE_DISABLE=1`).
//! Prints one JSON object.

use cust::memory::DeviceBuffer;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ordinal = std::env::args().nth(1).map_or(Ok(0), |a| a.parse())?;
    let start = Instant::now();
    let ctx = warpspeed::Context::new(ordinal)?;
    let context_new = start.elapsed();

    let x = DeviceBuffer::from_slice(&[1u32; 4096])?;
    let first = Instant::now();
    let sum = ctx.sum(&x)?;
    let first_sum = first.elapsed();
    assert_eq!(sum, 4096);

    let info = ctx.info();
    println!(
        "{{\"device\":\"{}\",\"target\":\"{}\",\"jit\":{},\"cache_disabled\":{},\"context_new_ms\":{:.1},\"first_sum_ms\":{:.2}}}",
        info.name,
        info.ptx_target,
        info.jit,
        std::env::var("CUDA_CACHE_DISABLE").is_ok_and(|v| v == "1"),
        context_new.as_secs_f64() * 1e3,
        first_sum.as_secs_f64() * 1e3,
    );
    Ok(())
}
