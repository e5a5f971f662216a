//! Multiplies two 2048 × 2048 `f32` matrices three ways — FP32 on the CUDA
//! cores, TF32 and 3xTF32 on the tensor cores — and compares a few entries
//! with an `f64` product on the CPU.
//!
//! `cargo run --release --example gemm`

use std::time::Instant;
use warpspeed::gemm::{Gemm, Precision};
use warpspeed::{Matrix, MatrixMut};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ctx = warpspeed::Context::new(0)?;
    let n = 2048;
    // A small deterministic generator: values in [-1, 1).
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    };
    let a_host: Vec<f32> = (0..n * n).map(|_| next()).collect();
    let b_host: Vec<f32> = (0..n * n).map(|_| next()).collect();
    let (a, b) = (ctx.upload(&a_host)?, ctx.upload(&b_host)?);
    let mut c = ctx.alloc::<f32>(n * n)?; // not zeroed: β = 0 never reads it
    let (a_view, b_view) = (Matrix::new(&a, n, n)?, Matrix::new(&b, n, n)?);

    for precision in [Precision::Fp32, Precision::Tf32, Precision::Tf32x3] {
        let gemm = Gemm::new(n, n, n).precision(precision);
        let mut c_view = MatrixMut::new(&mut c, n, n)?;
        ctx.gemm_into(&gemm, 1.0, &a_view, &b_view, 0.0, &mut c_view)?
            .wait()?; // warm-up (the first launch also loads the kernel)
        let start = Instant::now();
        ctx.gemm_into(&gemm, 1.0, &a_view, &b_view, 0.0, &mut c_view)?
            .wait()?;
        let elapsed = start.elapsed().as_secs_f64();
        let out = c.to_vec()?;
        let mut worst = 0.0f64;
        for (i, j) in [(0, 0), (17, 1000), (n - 1, n - 1), (1234, 5)] {
            let exact: f64 = (0..n)
                .map(|p| a_host[i * n + p] as f64 * b_host[p * n + j] as f64)
                .sum();
            worst = worst.max((out[i * n + j] as f64 - exact).abs());
        }
        println!(
            "{precision:?}: {n}³ in {:.0} µs ({:.1} TFLOP/s) on {}; largest error of 4 entries {worst:.1e}",
            elapsed * 1e6,
            gemm.flops() / elapsed / 1e12,
            ctx.info().name,
        );
    }
    Ok(())
}
