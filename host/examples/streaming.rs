//! A host array streamed through the GPU's histogram: two page-locked
//! staging buffers and two queues, so that the host's copy into one
//! staging buffer, the copy engine's upload of the other and the histogram
//! kernel of the chunk before all overlap. Prints the time against the
//! uploads alone and the kernels alone, and checks every count against
//! the CPU's.
//!
//! `cargo run --release --example streaming -- [--gib G] [--chunk-mib M]`
//! (default: 1 GiB in chunks of 64 MiB; more than the GPU's memory works
//! the same way).

use std::time::Instant;
use warpspeed::{Buffer, Context, PinnedBuffer};

/// Host threads for the copies into the staging buffers and the check:
/// one thread's copy is slower than the upload it feeds.
fn threads() -> usize {
    std::thread::available_parallelism().map_or(8, |n| n.get())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (gib, chunk_mib) = options()?;
    let ctx = Context::new(0)?;
    let total = (gib * (1u64 << 30) as f64) as usize;
    let chunk = chunk_mib << 20;
    let data = pattern(total);
    let chunks = total.div_ceil(chunk);

    let mut pipeline = Pipeline {
        queues: [ctx.new_stream()?, ctx.new_stream()?],
        staging: [
            ctx.alloc_pinned::<u8>(chunk)?,
            ctx.alloc_pinned::<u8>(chunk)?,
        ],
        device: [ctx.alloc::<u8>(chunk)?, ctx.alloc::<u8>(chunk)?],
        // One row of 256 counts per chunk, a buffer per queue (no queue
        // waits for the other's writes).
        counts: [
            ctx.zeros::<u32>(256 * chunks.div_ceil(2))?,
            ctx.zeros::<u32>(256 * chunks.div_ceil(2))?,
        ],
        chunk,
    };

    // Warm-up: every kernel and copy once.
    pipeline.run(&data[..chunk.min(total)], true)?;
    let timed = |pipeline: &mut Pipeline, histogram| -> warpspeed::Result<f64> {
        let start = Instant::now();
        pipeline.run(&data, histogram)?;
        Ok(start.elapsed().as_secs_f64())
    };
    let streamed = timed(&mut pipeline, true)?;
    // The copies alone (the host's into the staging buffers, then the
    // uploads; no kernel), the uploads alone (from the staging buffers, no
    // host copy), and the kernels alone (on data already on the device).
    let copies = timed(&mut pipeline, false)?;
    let uploads = pipeline.uploads_alone(total)?;
    let kernels = pipeline.kernels_alone(total)?;

    // The counts of the streamed pass (the kernels-alone pass wrote others
    // into the same rows: stream once more, untimed, for the check).
    pipeline.run(&data, true)?;
    let mut got = [0u64; 256];
    for buffer in &pipeline.counts {
        for row in buffer.to_vec()?.chunks(256) {
            for (g, &c) in got.iter_mut().zip(row) {
                *g += u64::from(c);
            }
        }
    }
    assert_eq!(
        got,
        histogram(&data),
        "the streamed counts differ from the CPU's"
    );

    let gb = total as f64 / 1e9;
    println!(
        "{gib} GiB through the histogram on {} in {:.3} s ({:.1} GB/s); alone: the copies (host \
         to staging, then uploads) {:.3} s ({:.1} GB/s), the uploads from staging {:.3} s \
         ({:.1} GB/s), the kernels {:.3} s; streamed / max(copies, kernels) = {:.2}, \
         streamed / max(uploads, kernels) = {:.2}; every count checked",
        ctx.info().name,
        streamed,
        gb / streamed,
        copies,
        gb / copies,
        uploads,
        gb / uploads,
        kernels,
        streamed / copies.max(kernels),
        streamed / uploads.max(kernels),
    );
    Ok(())
}

/// Two queues, each with a page-locked staging buffer, a device buffer
/// and its rows of counts; chunks alternate between them.
struct Pipeline {
    queues: [Context; 2],
    staging: [PinnedBuffer<u8>; 2],
    device: [Buffer<u8>; 2],
    counts: [Buffer<u32>; 2],
    chunk: usize,
}

impl Pipeline {
    /// Streams `data` through the histogram (or only to the device,
    /// without `histogram`), chunk by chunk; waits for the end.
    fn run(&mut self, data: &[u8], histogram: bool) -> warpspeed::Result<()> {
        for (c, part) in data.chunks(self.chunk).enumerate() {
            let (i, len) = (c % 2, part.len());
            // Waits for the upload two chunks back to have read it.
            parallel_copy(&mut self.staging[i].as_mut_slice()?[..len], part);
            self.upload(i, len)?;
            if histogram {
                self.histogram(c, len)?;
            }
        }
        self.synchronize()
    }

    /// The uploads of `total` bytes from the staging buffers alone.
    fn uploads_alone(&mut self, total: usize) -> warpspeed::Result<f64> {
        let start = Instant::now();
        for c in 0..total.div_ceil(self.chunk) {
            self.upload(c % 2, self.chunk.min(total - c * self.chunk))?;
        }
        self.synchronize()?;
        Ok(start.elapsed().as_secs_f64())
    }

    /// The histograms of `total` bytes alone, on the device buffers.
    fn kernels_alone(&mut self, total: usize) -> warpspeed::Result<f64> {
        let start = Instant::now();
        for c in 0..total.div_ceil(self.chunk) {
            self.histogram(c, self.chunk.min(total - c * self.chunk))?;
        }
        self.synchronize()?;
        Ok(start.elapsed().as_secs_f64())
    }

    /// Enqueues the upload of `len` bytes of staging buffer `i`.
    fn upload(&mut self, i: usize, len: usize) -> warpspeed::Result<()> {
        let mut dst = self.device[i].slice_mut(..len)?;
        self.queues[i]
            .copy_from_pinned(&self.staging[i].slice(..len)?, &mut dst)?
            .detach();
        Ok(())
    }

    /// Enqueues the histogram of chunk `c` (`len` bytes) into its row.
    fn histogram(&mut self, c: usize, len: usize) -> warpspeed::Result<()> {
        let (i, row) = (c % 2, (c / 2) * 256);
        let mut out = self.counts[i].slice_mut(row..row + 256)?;
        self.queues[i]
            .histogram_into(&self.device[i].slice(..len)?, &mut out)?
            .detach();
        Ok(())
    }

    fn synchronize(&self) -> warpspeed::Result<()> {
        self.queues.iter().try_for_each(Context::synchronize)
    }
}

/// `dst.copy_from_slice(src)` on every core.
fn parallel_copy(dst: &mut [u8], src: &[u8]) {
    let part = dst.len().div_ceil(threads()).max(1);
    std::thread::scope(|s| {
        for (d, s_part) in dst.chunks_mut(part).zip(src.chunks(part)) {
            s.spawn(move || d.copy_from_slice(s_part));
        }
    });
}

/// `len` bytes of a pattern with every value, some more often than others.
fn pattern(len: usize) -> Vec<u8> {
    let mut data = vec![0u8; len];
    let part = len.div_ceil(threads()).max(1);
    std::thread::scope(|s| {
        for (t, d) in data.chunks_mut(part).enumerate() {
            s.spawn(move || {
                for (i, b) in d.iter_mut().enumerate() {
                    let x = (t * part + i) as u64;
                    *b = (x.wrapping_mul(x).wrapping_mul(0x9e37_79b9) >> 17) as u8;
                }
            });
        }
    });
    data
}

/// The CPU's counts of `data`, on every core.
fn histogram(data: &[u8]) -> [u64; 256] {
    let part = data.len().div_ceil(threads()).max(1);
    let partials: Vec<[u64; 256]> = std::thread::scope(|s| {
        let handles: Vec<_> = data
            .chunks(part)
            .map(|d| {
                s.spawn(move || {
                    let mut counts = [0u64; 256];
                    for &b in d {
                        counts[usize::from(b)] += 1;
                    }
                    counts
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or([0; 256]))
            .collect()
    });
    let mut total = [0u64; 256];
    for p in &partials {
        for (t, v) in total.iter_mut().zip(p) {
            *t += v;
        }
    }
    total
}

fn options() -> Result<(f64, usize), String> {
    let (mut gib, mut chunk_mib) = (1.0f64, 64usize);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--gib" => gib = value()?.parse().map_err(|e| format!("--gib: {e}"))?,
            "--chunk-mib" => {
                chunk_mib = value()?.parse().map_err(|e| format!("--chunk-mib: {e}"))?
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if gib.is_nan() || gib <= 0.0 || chunk_mib == 0 {
        return Err("--gib and --chunk-mib take positive sizes".into());
    }
    Ok((gib, chunk_mib))
}
