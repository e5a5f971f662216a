//! The 256-bin histogram of 2^26 bytes, and a 100-bin histogram of `f32`
//! samples.
//!
//! `cargo run --release --example histogram`

use std::time::Instant;
use warpspeed::histogram::EvenBins;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ctx = warpspeed::Context::new(0)?;
    let n = 1 << 26;
    // A byte pattern with every value, some more often than others.
    let bytes: Vec<u8> = (0..n)
        .map(|i: usize| (i.wrapping_mul(i) >> 7) as u8)
        .collect();
    let samples = ctx.upload(&bytes)?;
    let mut counts = ctx.zeros::<u32>(256)?;

    ctx.histogram_into(&samples, &mut counts)?.wait()?; // warm-up
    let start = Instant::now();
    ctx.histogram_into(&samples, &mut counts)?.wait()?;
    let elapsed = start.elapsed();
    let counts = counts.to_vec()?;
    let bins = EvenBins::<u8>::new(256, 0, 256)?;
    assert_eq!(counts, bins.histogram(&bytes));
    let (top, top_count) = counts
        .iter()
        .enumerate()
        .max_by_key(|c| c.1)
        .unwrap_or((0, &0));
    println!(
        "256-bin histogram of {n} bytes in {:.1} µs on {} ({:.0} GB/s): byte {top} is the most \
         frequent ({top_count} times)",
        elapsed.as_secs_f64() * 1e6,
        ctx.info().name,
        n as f64 / elapsed.as_secs_f64() / 1e9,
    );

    // f32 samples in 100 bins of [-1, 1); those outside and NaN are not counted.
    let x: Vec<f32> = (0..1_000_000)
        .map(|i| ((i as f32) * 0.618).sin() * 1.2)
        .collect();
    let device_x = ctx.upload(&x)?;
    let bins = EvenBins::<f32>::new(100, -1.0, 1.0)?;
    let mut hundred = ctx.zeros::<u32>(100)?;
    ctx.histogram_even_into(&device_x, &bins, &mut hundred)?
        .wait()?;
    let hundred = hundred.to_vec()?;
    assert_eq!(hundred, bins.histogram(&x));
    println!(
        "100 bins of [-1, 1) over {} samples of 1.2·sin: {} counted, {} in the first bin",
        x.len(),
        hundred.iter().sum::<u32>(),
        hundred[0]
    );
    Ok(())
}
