//! The inclusive sum of 2^26 `u32`, the row-wise cumulative sum of 64
//! rows of 128 256 probabilities (sampling's), and a compaction.
//!
//! `cargo run --release --example scan`

use std::time::Instant;
use warpspeed::scan::{Compare, Op, Scan};
use warpspeed::{Matrix, MatrixMut};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ctx = warpspeed::Context::new(0)?;
    let n = 1 << 26;
    let host: Vec<u32> = (0..n).map(|i: u32| i % 7).collect();
    let x = ctx.upload(&host)?;
    let mut out = ctx.alloc::<u32>(n as usize)?;

    ctx.inclusive_scan_into(Op::Sum, &x, &mut out)?.wait()?; // warm-up
    let start = Instant::now();
    ctx.inclusive_scan_into(Op::Sum, &x, &mut out)?.wait()?;
    let elapsed = start.elapsed();
    let got = out.to_vec()?;
    let mut running = 0u32;
    for (i, (&v, &g)) in host.iter().zip(&got).enumerate() {
        running = running.wrapping_add(v);
        assert_eq!(g, running, "element {i}");
    }
    println!(
        "inclusive sum of {n} u32 in {:.1} µs on {} ({:.0} GB/s read + written): the last is {}",
        elapsed.as_secs_f64() * 1e6,
        ctx.info().name,
        2.0 * 4.0 * n as f64 / elapsed.as_secs_f64() / 1e9,
        got[got.len() - 1],
    );

    // Each row of a (rows × vocabulary) matrix of probabilities, summed on
    // its own: the cumulative distributions a sampler draws from.
    let (rows, vocabulary) = (64, 128_256);
    let p: Vec<f32> = (0..rows * vocabulary)
        .map(|i| 1.0 / vocabulary as f32 * (1.0 + 0.5 * ((i % 13) as f32 / 12.0 - 0.5)))
        .collect();
    let probabilities = ctx.upload(&p)?;
    let mut cdf = ctx.alloc::<f32>(rows * vocabulary)?;
    let scan_rows = |cdf: &mut warpspeed::Buffer<f32>| -> warpspeed::Result<()> {
        let x = Matrix::new(&probabilities, vocabulary, rows)?;
        let mut y = MatrixMut::new(cdf, vocabulary, rows)?;
        ctx.scan_rows_into(Op::Sum, Scan::Inclusive, &x, &mut y)?
            .wait()
    };
    scan_rows(&mut cdf)?; // warm-up
    let start = Instant::now();
    scan_rows(&mut cdf)?;
    let elapsed = start.elapsed();
    let got = cdf.to_vec()?;
    for (row, (want, got)) in p.chunks(vocabulary).zip(got.chunks(vocabulary)).enumerate() {
        let total: f64 = want.iter().map(|&v| v as f64).sum();
        let last = got[vocabulary - 1] as f64;
        // Rounding: at most about 300 additions per element (see the
        // guide's bound) of values summing to about 1.
        assert!(
            (last - total).abs() < 300.0 * f32::EPSILON as f64,
            "row {row}: {last} against {total}"
        );
    }
    println!(
        "{rows} row scans of {vocabulary} f32 in {:.1} µs: each row ends at {:.6}",
        elapsed.as_secs_f64() * 1e6,
        got[vocabulary - 1],
    );

    // Keep the elements above 4: 2 in 7 of them.
    let mut kept = ctx.alloc::<u32>(n as usize)?;
    let count = ctx.compact_if(&x, Compare::Greater, 4, &mut kept)?;
    let want = host.iter().filter(|&&v| v > 4).count();
    assert_eq!(count, want);
    assert!(kept.slice(..count)?.to_vec()?.iter().all(|&v| v > 4));
    println!("compaction: {count} of {n} elements are above 4");
    Ok(())
}
