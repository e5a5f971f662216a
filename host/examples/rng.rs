//! cuRAND's Philox4_32_10 from Rust: a Monte-Carlo estimate of π with
//! cuRAND's device API (one generator per thread, `curand_init(seed,
//! thread, 0)`), then bulk fills in the order of cuRAND's host API,
//! checked against the CPU twin.
//!
//! `cargo run --release --example rng`

use warpspeed::rng::{Generator, Philox, in_quarter_disc};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ctx = warpspeed::Context::new(0)?;

    // π: 2^20 threads, 256 points each; thread t is `curand_init(42, t, 0)`.
    let (threads, draws) = (1 << 20, 256u32);
    let mut hits = ctx.zeros::<u32>(threads)?;
    ctx.pi_hits_into(42, draws, &mut hits)?.wait()?;
    let hits = hits.to_vec()?;
    let total: u64 = hits.iter().map(|&h| h as u64).sum();
    let pi = 4.0 * total as f64 / (threads as f64 * draws as f64);
    // The same numbers on the CPU, for thread 12345: the generators agree.
    let mut philox = Philox::new(42, 12345, 0);
    let cpu = (0..draws)
        .filter(|_| in_quarter_disc(philox.uniform(), philox.uniform()))
        .count() as u32;
    assert_eq!(hits[12345], cpu);
    println!(
        "π ≈ {pi:.6} from {} points on {} (error {:.1e})",
        threads as u64 * draws as u64,
        ctx.info().name,
        (pi - std::f64::consts::PI).abs()
    );

    // Fills: what curandGenerateUniform / curandGenerateNormal write for
    // seed 1234, the second continuing where the first stopped.
    let mut generator = Generator::new(1234);
    let mut uniforms = ctx.zeros::<f32>(1000)?;
    let mut normals = ctx.zeros::<f32>(1001)?;
    ctx.fill_uniform_into(&mut generator, &mut uniforms)?
        .wait()?;
    ctx.fill_normal_into(&mut generator, 10.0, 2.0, &mut normals)?
        .wait()?;
    let (uniforms, normals) = (uniforms.to_vec()?, normals.to_vec()?);
    let twin = Generator::new(1234);
    assert_eq!(uniforms[7], warpspeed::rng::uniform_of(twin.value(7)));
    let mean = normals.iter().sum::<f32>() / normals.len() as f32;
    println!(
        "uniforms {:.4} {:.4} …, normals (10, 2) {:.3} {:.3} … mean {mean:.3}; the generator \
         is at value {}",
        uniforms[0],
        uniforms[1],
        normals[0],
        normals[1],
        generator.position()
    );

    // Poisson counts through a table made once.
    let table = ctx.poisson_table(3.5)?;
    let mut counts = ctx.zeros::<u32>(100_000)?;
    ctx.fill_poisson_into(&mut generator, &table, &mut counts)?
        .wait()?;
    let counts = counts.to_vec()?;
    let mean = counts.iter().map(|&c| c as f64).sum::<f64>() / counts.len() as f64;
    println!("Poisson(3.5): mean of {} counts {mean:.4}", counts.len());
    Ok(())
}
