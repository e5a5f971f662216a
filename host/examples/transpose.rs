//! Transposes an 8192 × 8192 byte image and a 4096 × 4096 `f32` matrix.
//!
//! `cargo run --release --example transpose`

use std::time::Instant;
use warpspeed::{Matrix, MatrixMut};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ctx = warpspeed::Context::new(0)?;

    let side = 8192;
    let pixels: Vec<u8> = (0..side * side).map(|i| (i % 251) as u8).collect();
    let src = ctx.upload(&pixels)?;
    let mut dst = ctx.zeros::<u8>(side * side)?;
    let image = Matrix::new(&src, side, side)?;
    ctx.transpose_into(&image, &mut MatrixMut::new(&mut dst, side, side)?)?
        .wait()?; // warm-up
    let start = Instant::now();
    let pending = ctx.transpose_into(&image, &mut MatrixMut::new(&mut dst, side, side)?)?;
    pending.wait()?;
    let elapsed = start.elapsed();
    let out = dst.to_vec()?;
    assert_eq!(out[3 * side + 5], pixels[5 * side + 3]);
    println!(
        "u8 {side}×{side} transposed in {:.1} µs ({:.0} GB/s read + written) on {}",
        elapsed.as_secs_f64() * 1e6,
        2.0 * (side * side) as f64 / elapsed.as_secs_f64() / 1e9,
        ctx.info().name
    );

    let (w, h) = (4096, 3000); // any shape works
    let a: Vec<f32> = (0..w * h).map(|i| i as f32).collect();
    let src = ctx.upload(&a)?;
    let mut dst = ctx.alloc::<f32>(w * h)?; // not zeroed: the transpose writes it whole
    let start = Instant::now();
    ctx.transpose_into(
        &Matrix::new(&src, w, h)?,
        &mut MatrixMut::new(&mut dst, h, w)?,
    )?
    .wait()?;
    let elapsed = start.elapsed();
    let out = dst.to_vec()?;
    assert_eq!(out[7 * h + 2], a[2 * w + 7]);
    println!(
        "f32 {w}×{h} transposed in {:.1} µs (first call of this kernel included)",
        elapsed.as_secs_f64() * 1e6
    );
    Ok(())
}
