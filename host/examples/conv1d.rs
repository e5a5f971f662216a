//! Smooths a signal of 2^24 `f32` with a 31-tap mask, then 64 rows of 65 536
//! at once.
//!
//! `cargo run --release --example conv1d`

use std::time::Instant;
use warpspeed::{Matrix, MatrixMut};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ctx = warpspeed::Context::new(0)?;

    let n = 1 << 24;
    let taps = 31;
    let signal: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 / 500.0 - 1.0).collect();
    let weights = vec![1.0 / taps as f32; taps]; // a moving average
    let x = ctx.upload(&signal)?;
    let mask = ctx.upload(&weights)?;
    let mut y = ctx.alloc::<f32>(n)?; // not zeroed: written whole

    ctx.conv1d_into(&x, &mask, &mut y)?.wait()?; // warm-up
    let start = Instant::now();
    ctx.conv1d_into(&x, &mask, &mut y)?.wait()?;
    let elapsed = start.elapsed();

    let out = y.to_vec()?;
    let i = 5000;
    let want: f32 = signal[i - taps / 2..=i + taps / 2].iter().sum::<f32>() / taps as f32;
    assert!((out[i] - want).abs() < 1e-5);
    println!(
        "2^24 f32 convolved with {taps} taps in {:.1} µs ({:.0} GB/s read + written) on {}: \
         out[{i}] = {}",
        elapsed.as_secs_f64() * 1e6,
        8.0 * n as f64 / elapsed.as_secs_f64() / 1e9,
        ctx.info().name,
        out[i]
    );

    // A batch: each row convolved on its own, zero outside the row.
    let (width, rows) = (65_536, 64);
    let start = Instant::now();
    ctx.conv1d_rows_into(
        &Matrix::new(&x, width, rows)?,
        &mask,
        &mut MatrixMut::new(&mut y, width, rows)?,
    )?
    .wait()?;
    let elapsed = start.elapsed();
    let out = y.to_vec()?;
    let edge: f32 = signal[width..width + taps / 2 + 1].iter().sum::<f32>() / taps as f32;
    assert!((out[width] - edge).abs() < 1e-5); // row 1 starts with zeros on its left
    println!(
        "{rows} rows of {width} in {:.1} µs: row 1 starts with {}",
        elapsed.as_secs_f64() * 1e6,
        out[width]
    );
    Ok(())
}
