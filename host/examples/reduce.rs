//! Sum, minimum and maximum of 2^26 floats on the GPU, against the CPU.
//!
//! `cargo run --release --example reduce`

use std::time::Instant;
use warpspeed::reduce::{Op, ReduceVariant};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ctx = warpspeed::Context::new(0)?;
    let n = 1 << 26;
    let host: Vec<f32> = (0..n)
        .map(|i| ((i * 7919) % 1000) as f32 / 1000.0)
        .collect();
    let x = ctx.upload(&host)?;

    ctx.sum(&x)?; // warm-up: the first launch of a kernel pays for its set-up
    let start = Instant::now();
    let sum = ctx.sum(&x)?; // waits for the result
    let elapsed = start.elapsed();
    let exact: f64 = host.iter().map(|&v| v as f64).sum();
    println!(
        "sum of {n} f32 = {sum} (f64 on the CPU: {exact:.1}) in {:.1} µs, {:.0} GB/s, on {}",
        elapsed.as_secs_f64() * 1e6,
        (n * 4) as f64 / elapsed.as_secs_f64() / 1e9,
        ctx.info().name
    );
    println!("min = {:?}, max = {:?}", ctx.min(&x)?, ctx.max(&x)?);

    // Every step of the ladder is callable; the lesson's first one:
    let start = Instant::now();
    let slow = ctx.reduce(Op::Sum, ReduceVariant::InterleavedDivergent, &x)?;
    println!(
        "step 1 ({}) = {slow} in {:.1} µs",
        ReduceVariant::InterleavedDivergent.name(),
        start.elapsed().as_secs_f64() * 1e6
    );
    Ok(())
}
