//! cudarc and warpspeed on one GPU: cudarc uploads bytes on its stream,
//! warpspeed histograms and sums them on a queue of its own, and cudarc
//! reads the results back. No host wait between the two libraries: each
//! waits for the other on the GPU (cudarc's per-slice events).
//!
//! `cargo run --release --example cudarc --features cudarc`

use cudarc::driver::CudaContext;
use warpspeed::histogram::EvenBins;
use warpspeed::reduce::{Op, ReduceVariant};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ctx = warpspeed::Context::new(0)?;
    // cudarc's context of the same device: both use its primary context.
    let theirs = CudaContext::new(0)?;
    let stream = theirs.new_stream()?;

    let n = 1 << 24;
    let host: Vec<u8> = (0..n)
        .map(|i: usize| (i.wrapping_mul(i) >> 9) as u8)
        .collect();
    let words: Vec<u32> = host.iter().map(|&b| u32::from(b)).collect();
    // cudarc's buffers, filled on cudarc's stream.
    let bytes = stream.clone_htod(&host)?;
    let values = stream.clone_htod(&words)?;
    let mut counts = stream.alloc_zeros::<u32>(256)?;
    let mut total = stream.alloc_zeros::<u32>(1)?;

    // warpspeed's queue: its own stream. The slices go where a Buffer goes.
    let queue = ctx.new_stream()?;
    queue.histogram_into(&bytes, &mut counts)?.detach();
    queue
        .reduce_into(Op::Sum, ReduceVariant::DEFAULT, &values, &mut total)?
        .detach();

    // cudarc reads on its stream, after warpspeed's writes.
    let counts = stream.clone_dtoh(&counts)?;
    let total = stream.clone_dtoh(&total)?;
    assert_eq!(counts, EvenBins::<u8>::new(256, 0, 256)?.histogram(&host));
    assert_eq!(total[0], words.iter().sum::<u32>());
    println!(
        "{n} bytes uploaded by cudarc, histogrammed and summed by warpspeed on {}, read back by \
         cudarc: {} counted, sum {}",
        ctx.info().name,
        counts.iter().sum::<u32>(),
        total[0]
    );
    Ok(())
}
