//! A sort of 2^24 `u32` keys, then a language model's sampling step over
//! 64 rows of 128 256 logits: each row's top 50 with their columns, and
//! each row's argmax.
//!
//! `cargo run --release --example sort`

use std::time::Instant;
use warpspeed::sort::Sort;
use warpspeed::{Matrix, MatrixMut};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ctx = warpspeed::Context::new(0)?;
    let n = 1usize << 24;
    let host: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761))
        .collect();
    let keys = ctx.upload(&host)?;
    let mut sorted = ctx.alloc::<u32>(n)?;
    ctx.sort_into(&keys, &mut sorted)?.wait()?; // warm-up
    let start = Instant::now();
    ctx.sort_into(&keys, &mut sorted)?.wait()?;
    let elapsed = start.elapsed();
    let got = sorted.to_vec()?;
    let mut want = host.clone();
    want.sort_unstable();
    assert_eq!(got, want);
    println!(
        "sort of {n} u32 keys in {:.1} µs on {}",
        elapsed.as_secs_f64() * 1e6,
        ctx.info().name
    );

    // Logits of 64 rows over a vocabulary of 128 256, and a few ties.
    let (rows, vocabulary, k) = (64, 128_256, 50);
    let logits: Vec<f32> = (0..rows * vocabulary)
        .map(|i| ((i as u32).wrapping_mul(2_654_435_761) >> 12) as f32 / 1024.0)
        .collect();
    let x = ctx.upload(&logits)?;
    let (mut values, mut columns) = (ctx.alloc::<f32>(rows * k)?, ctx.alloc::<u32>(rows * k)?);
    let mut best = ctx.alloc::<u32>(rows)?;
    let start = Instant::now();
    {
        let m = Matrix::new(&x, vocabulary, rows)?;
        ctx.top_k_rows_into(
            &Sort::descending(),
            k,
            &m,
            &mut MatrixMut::new(&mut values, k, rows)?,
            &mut MatrixMut::new(&mut columns, k, rows)?,
        )?
        .wait()?;
        ctx.argmax_rows_into(&m, &mut best)?.wait()?;
    }
    let elapsed = start.elapsed();
    let (values, columns, best) = (values.to_vec()?, columns.to_vec()?, best.to_vec()?);
    for r in 0..rows {
        let row = &logits[r * vocabulary..(r + 1) * vocabulary];
        // The reference: a stable sort of the columns, largest first.
        let mut order: Vec<u32> = (0..vocabulary as u32).collect();
        order.sort_by(|&a, &b| row[b as usize].total_cmp(&row[a as usize]));
        assert_eq!(columns[r * k..(r + 1) * k], order[..k], "row {r}");
        for (i, &c) in order[..k].iter().enumerate() {
            assert_eq!(values[r * k + i], row[c as usize]);
        }
        assert_eq!(best[r], order[0], "row {r}'s argmax");
    }
    println!(
        "top-{k} and argmax of {rows} rows of {vocabulary} logits in {:.1} µs (first call); \
         row 0's largest: {} at column {}",
        elapsed.as_secs_f64() * 1e6,
        values[0],
        columns[0]
    );
    Ok(())
}
