//! Row and column sums of an 8192 × 8192 byte image.
//!
//! `cargo run --release --example image_sums`

use std::time::Instant;
use warpspeed::Matrix;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ctx = warpspeed::Context::new(0)?;
    let side = 8192;
    let pixels: Vec<u8> = (0..side * side).map(|i| (i % 7) as u8).collect();
    let src = ctx.upload(&pixels)?;
    let image = Matrix::new(&src, side, side)?;
    let mut columns = ctx.zeros::<u32>(side)?;
    let mut rows = ctx.zeros::<f32>(side)?;

    ctx.column_sums_into(&image, &mut columns)?.wait()?; // warm-up
    ctx.row_sums_into(&image, &mut rows)?.wait()?;
    let start = Instant::now();
    // Both enqueued before waiting: the GPU runs them back to back.
    let column_work = ctx.column_sums_into(&image, &mut columns)?;
    let row_work = ctx.row_sums_into(&image, &mut rows)?;
    column_work.wait()?;
    row_work.wait()?;
    let elapsed = start.elapsed();

    let columns = columns.to_vec()?;
    let rows = rows.to_vec()?;
    let want_column_0: u32 = (0..side).map(|y| pixels[y * side] as u32).sum();
    let want_row_0: u32 = pixels[..side].iter().map(|&p| p as u32).sum();
    assert_eq!((columns[0], rows[0]), (want_column_0, want_row_0 as f32));
    println!(
        "column sums (u32) and row sums (f32) of a {side}×{side} image in {:.1} µs on {}: \
         column 0 = {}, row 0 = {}",
        elapsed.as_secs_f64() * 1e6,
        ctx.info().name,
        columns[0],
        rows[0]
    );
    Ok(())
}
