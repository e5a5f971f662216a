//! Histograms: the 256-bin histogram of bytes, `histogram_even` (like CUB's
//! `DeviceHistogram::HistogramEven`) for `u8`, `u16`, `i32` and `f32`
//! samples, and the lesson's ladder ([`HistogramVariant`]).
//!
//! The guide, [histogram.md][guide], has the ladder (what each step changes and
//! why it is faster), the measured tables and the pitfalls.
//!
//! [guide]: https://github.com/warpspeed-rs/warpspeed/blob/main/docs/histogram.md
//!
//! ```no_run
//! # fn main() -> warpspeed::Result<()> {
//! use warpspeed::histogram::EvenBins;
//! let ctx = warpspeed::Context::new(0)?;
//! let bytes = ctx.upload(&[3u8, 3, 200])?;
//! let mut counts = ctx.zeros::<u32>(256)?;
//! ctx.histogram_into(&bytes, &mut counts)?.wait()?; // counts[3] = 2, counts[200] = 1
//!
//! let x = ctx.upload(&[0.5f32, -1.0, 9.9, f32::NAN])?;
//! let bins = EvenBins::new(10, 0.0f32, 10.0)?; // [0, 1), [1, 2), ..., [9, 10)
//! let mut tens = ctx.zeros::<u32>(10)?;
//! ctx.histogram_even_into(&x, &bins, &mut tens)?.wait()?; // tens[0] = 1, tens[9] = 1
//! # Ok(()) }
//! ```
//!
//! Rules (those of CUB's `HistogramEven`):
//! * bins are `[lower + i·w, lower + (i+1)·w)` with `w = (upper − lower) /
//!   bins`; a sample below `lower`, at or above `upper`, or NaN is not
//!   counted. Which bin a sample of an edge falls in is computed exactly for
//!   integers and in `f32` for floats ([`EvenBins::bin`] says how); the GPU
//!   and [`EvenBins::bin`] agree on every sample;
//! * counters are `u32`; past 2^32 − 1 samples in one bin a counter wraps
//!   (counts modulo 2^32). The result overwrites `out`, whose length must be
//!   the number of bins;
//! * the order in which samples are counted does not matter: results are
//!   exact and the same on every run.

use crate::context::Context;
use crate::context::scratch::HISTOGRAM_OFFSET;
use crate::error::{Error, Result};
use crate::launch::{LaunchConfig, blocks_for};
use crate::memory::{Call, DeviceRead, DeviceWrite, Pod};
use crate::overlap::{Span, refuse_overlap};
use crate::pending::Pending;
use std::fmt::Debug;
use warpspeed_gpu::histogram::{
    BYTE_BINS, Even, GLOBAL_BLOCK, HistogramArgs, LANE_BLOCK, LANE_BLOCKS_PER_SM, LANE_MAX_BINS,
    LANE_UNROLL, LANE_WORK_WORDS, MAX_BINS, NOT_COUNTED, SHARED_BLOCK, SHARED_COARSENING,
    histogram_bytes_global_atomics, histogram_bytes_lane_private,
    histogram_bytes_shared_privatized, histogram_global_atomics, histogram_lane_private,
    histogram_shared_privatized, lane_private_min_blocks, lane_private_shared_bytes,
    shared_privatized_bytes,
};
pub use warpspeed_gpu::histogram::{HistogramVariant, Sample};
use warpspeed_gpu::{DevPtr, DevPtrMut, Entry};

/// A sample type of [`Context::histogram_even_into`]: `u8`, `u16`, `i32` or
/// `f32`. Sealed.
pub trait HistogramSample: Sample + Pod + sealed::Sealed {
    /// The type of the bounds: `i64` for the integer samples (so that the
    /// upper bound of the whole `u8` range, 256, can be said), `f32` for
    /// `f32`.
    type Level: Copy + Debug + PartialOrd;
    /// The bound as `f64` (exact for every level).
    #[doc(hidden)]
    fn level(level: Self::Level) -> f64;
    /// Why `[lower, upper)` is not a range of this type, if it is not.
    #[doc(hidden)]
    fn refuse_levels(lower: Self::Level, upper: Self::Level) -> Option<String>;
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! integer_sample {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl HistogramSample for $t {
            type Level = i64;
            fn level(level: i64) -> f64 {
                level as f64
            }
            fn refuse_levels(lower: i64, upper: i64) -> Option<String> {
                let (min, max) = (<$t>::MIN as i64, <$t>::MAX as i64 + 1);
                (lower < min || upper > max).then(|| {
                    format!("bounds [{lower}, {upper}) of {} samples must lie in [{min}, {max}]",
                        stringify!($t))
                })
            }
        }
    )*};
}
integer_sample!(u8, u16, i32);

impl sealed::Sealed for f32 {}
impl HistogramSample for f32 {
    type Level = f32;
    fn level(level: f32) -> f64 {
        level as f64
    }
    fn refuse_levels(lower: f32, upper: f32) -> Option<String> {
        (!lower.is_finite() || !upper.is_finite())
            .then(|| format!("bounds [{lower}, {upper}) must be finite"))
    }
}

/// `bins` equal bins of `[lower, upper)` for samples of type `T`, checked
/// once: 1 to 65 536 bins, `lower < upper`, finite bounds, integer bounds
/// within the sample type (`[0, 256]` for `u8`).
#[derive(Clone, Copy, Debug)]
pub struct EvenBins<T: HistogramSample> {
    bins: u32,
    lower: T::Level,
    upper: T::Level,
    even: Even<T>,
}

impl<T: HistogramSample> EvenBins<T> {
    /// The bins.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for `bins` of 0 or above 65 536, `lower >=
    /// upper`, non-finite bounds or integer bounds outside the sample type.
    pub fn new(bins: u32, lower: T::Level, upper: T::Level) -> Result<Self> {
        if bins == 0 || bins > MAX_BINS {
            return Err(Error::InvalidArgument(format!(
                "a histogram has 1 to {MAX_BINS} bins, not {bins}"
            )));
        }
        if let Some(why) = T::refuse_levels(lower, upper) {
            return Err(Error::InvalidArgument(why));
        }
        // After the finiteness check: no NaN here.
        if lower >= upper {
            return Err(Error::InvalidArgument(format!(
                "the lower bound {lower:?} must be below the upper bound {upper:?}"
            )));
        }
        Ok(EvenBins {
            bins,
            lower,
            upper,
            even: Even::new(T::level(lower), T::level(upper), bins),
        })
    }

    /// The number of bins: the output's length.
    pub fn bins(&self) -> u32 {
        self.bins
    }

    /// The lower bound (counted).
    pub fn lower(&self) -> T::Level {
        self.lower
    }

    /// The upper bound (not counted).
    pub fn upper(&self) -> T::Level {
        self.upper
    }

    /// The bin of `sample`, `None` if it is not counted. Integers: bin
    /// `⌊(s − lower) · bins / (upper − lower)⌋`, exact. `f32`: `min(⌊(s −
    /// lower) · scale⌋, bins − 1)` in `f32` arithmetic with `scale = bins /
    /// (upper − lower)` rounded to `f32` (so a sample within rounding of an
    /// edge may land on either side of it, as in CUB). The kernels use this
    /// same code.
    pub fn bin(&self, sample: T) -> Option<u32> {
        Some(self.even.bin(sample)).filter(|&b| b != NOT_COUNTED)
    }

    /// The histogram of `samples`, on the CPU, one sample after another
    /// (step 1 of the ladder).
    pub fn histogram(&self, samples: &[T]) -> Vec<u32> {
        let mut counts = vec![0u32; self.bins as usize];
        for &s in samples {
            let bin = self.even.bin(s);
            if bin != NOT_COUNTED {
                counts[bin as usize] = counts[bin as usize].wrapping_add(1);
            }
        }
        counts
    }

    /// Whether these are the 256 one-value bins of bytes, which the byte
    /// kernels count without arithmetic.
    fn is_bytes(&self) -> bool {
        size_of::<T>() == 1 && self.bins == BYTE_BINS && T::level(self.lower) == 0.0 && {
            T::level(self.upper) == BYTE_BINS as f64
        }
    }
}

/// The kernels of the ladder's GPU steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kernel {
    GlobalAtomics,
    SharedPrivatized,
    LanePrivate,
}

impl Kernel {
    /// Threads per block: those of the step the kernel belongs to.
    const fn block(self) -> u32 {
        match self {
            Kernel::GlobalAtomics => GLOBAL_BLOCK,
            Kernel::SharedPrivatized => SHARED_BLOCK,
            Kernel::LanePrivate => LANE_BLOCK,
        }
    }

    /// The entry for `T`: the byte kernel where `bytes` (then `T` is `u8`).
    fn entry<T: HistogramSample>(self, bytes: bool) -> Entry<HistogramArgs<T>> {
        let byte_entry = match self {
            Kernel::GlobalAtomics => histogram_bytes_global_atomics::try_entry::<T>(),
            Kernel::SharedPrivatized => histogram_bytes_shared_privatized::try_entry::<T>(),
            Kernel::LanePrivate => histogram_bytes_lane_private::try_entry::<T>(),
        };
        match (bytes, byte_entry) {
            (true, Some(entry)) => entry,
            _ => match self {
                Kernel::GlobalAtomics => histogram_global_atomics::entry::<T>(),
                Kernel::SharedPrivatized => histogram_shared_privatized::entry::<T>(),
                Kernel::LanePrivate => histogram_lane_private::entry::<T>(),
            },
        }
    }
}

impl Context {
    /// Enqueues the 256-bin histogram of `samples` (bin = byte) into `out`
    /// (256 counters, overwritten) with the fastest variant. Returns at
    /// once; see [`Pending`].
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] unless `out` has 256 elements.
    pub fn histogram_into<'a>(
        &'a self,
        samples: &impl DeviceRead<Elem = u8>,
        out: &mut impl DeviceWrite<Elem = u32>,
    ) -> Result<Pending<'a>> {
        let bytes = EvenBins::new(BYTE_BINS, 0, BYTE_BINS as i64)?;
        self.histogram_even_into(samples, &bytes, out)
    }

    /// Enqueues the histogram of `samples` over `bins` into `out` (one
    /// counter per bin, overwritten) with the fastest variant. Returns at
    /// once; see [`Pending`].
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] unless `out` has `bins.bins()` elements;
    /// [`Error::InvalidArgument`] if `out` overlaps `samples`.
    pub fn histogram_even_into<'a, T: HistogramSample>(
        &'a self,
        samples: &impl DeviceRead<Elem = T>,
        bins: &EvenBins<T>,
        out: &mut impl DeviceWrite<Elem = u32>,
    ) -> Result<Pending<'a>> {
        self.histogram_even_into_with(HistogramVariant::DEFAULT, samples, bins, out)
    }

    /// [`Context::histogram_even_into`] with one step of the ladder.
    /// [`HistogramVariant::Cpu`] copies the samples to the host and the
    /// counts back, and waits for this context's stream and both copies
    /// before it returns.
    ///
    /// # Errors
    /// As [`Context::histogram_even_into`]; [`Error::Unsupported`] for
    /// [`HistogramVariant::SharedPrivatized`] with more bins than one
    /// block's shared memory holds.
    pub fn histogram_even_into_with<'a, T: HistogramSample>(
        &'a self,
        variant: HistogramVariant,
        samples: &impl DeviceRead<Elem = T>,
        bins: &EvenBins<T>,
        out: &mut impl DeviceWrite<Elem = u32>,
    ) -> Result<Pending<'a>> {
        self.ensure_alive()?;
        let (samples, mut out) = (samples.view(), out.view_mut());
        let count = bins.bins();
        if out.len() != count as usize {
            return Err(Error::LengthMismatch {
                what: "the histogram's output (one counter per bin)",
                expected: count as usize,
                given: out.len(),
            });
        }
        refuse_overlap(
            "histogram",
            (
                "output",
                Span::new(out.device_address(), out.len() * size_of::<u32>()),
            ),
            (
                "samples",
                Span::new(samples.device_address(), samples.len() * size_of::<T>()),
            ),
        )?;
        let info = self.info();
        let shared_fits = shared_privatized_bytes(count) <= info.max_shared_per_block_optin;
        let kernel = match variant {
            HistogramVariant::Cpu => return self.histogram_on_cpu(&samples, bins, &mut out),
            HistogramVariant::GlobalAtomics => Kernel::GlobalAtomics,
            HistogramVariant::SharedPrivatized if !shared_fits => {
                return Err(Error::Unsupported {
                    variant: variant.name(),
                    reason: format!(
                        "{count} bins need {} B of shared memory, more than a block of {} has; \
                         global_atomics and lane_private take any number of bins",
                        shared_privatized_bytes(count),
                        info.name
                    ),
                });
            }
            HistogramVariant::SharedPrivatized => Kernel::SharedPrivatized,
            HistogramVariant::LanePrivate if count <= LANE_MAX_BINS => Kernel::LanePrivate,
            HistogramVariant::LanePrivate if shared_fits => Kernel::SharedPrivatized,
            HistogramVariant::LanePrivate => Kernel::GlobalAtomics,
        };
        // From here on, whatever is enqueued is ordered for the buffers,
        // also when a later step (the scratch, the launch) fails.
        let mut call = Call::new(self);
        let input = call.read(&samples)?;
        let output = call.write(&out)?;
        let n = samples.len();
        if n == 0 || kernel != Kernel::LanePrivate {
            // Steps 2 and 3 add into the output; with no samples it is all
            // zeros. (Step 4 zeroes it itself, in its first block.)
            // SAFETY: `out` holds `count` counters (checked above), ordered
            // by `call`.
            unsafe { self.zero_words(output, count as usize)? };
        }
        if n == 0 {
            return Ok(Pending::new(self));
        }
        let work = self.scratch(HISTOGRAM_OFFSET + LANE_WORK_WORDS * size_of::<u32>())?
            + HISTOGRAM_OFFSET as u64;

        let entry = kernel.entry::<T>(bins.is_bytes());
        let block = kernel.block();
        // Per kernel: its dynamic shared memory, the samples a thread takes
        // per round, the most blocks per SM the grid counts on, and the
        // fewest blocks it may run on.
        let (shared, per_thread, most_per_sm, fewest) = match kernel {
            Kernel::GlobalAtomics => (0, 1, u32::MAX, 1),
            Kernel::SharedPrivatized => (
                shared_privatized_bytes(count),
                SHARED_COARSENING as usize,
                u32::MAX,
                1,
            ),
            // Its 32-bit lane counters are merged once per block: the
            // fewest blocks that keep them from wrapping (more than the GPU
            // holds only past 2^37 samples per resident block).
            Kernel::LanePrivate => (
                lane_private_shared_bytes(count),
                LANE_UNROLL * 16 / size_of::<T>(),
                LANE_BLOCKS_PER_SM,
                lane_private_min_blocks(n, size_of::<T>()),
            ),
        };
        // Enough blocks to fill the GPU, fewer where the input is small (the
        // loops stride over the grid), never fewer than the kernel's least.
        let per_sm = self.blocks_per_sm(entry, block, shared)?.min(most_per_sm);
        let resident = per_sm * info.multiprocessors;
        let needed = blocks_for(n, block as usize * per_thread).unwrap_or(u32::MAX);
        let fewest = u32::try_from(fewest).unwrap_or(u32::MAX);
        let grid = needed.clamp(1, resident).max(fewest);
        let cfg = LaunchConfig::linear(grid, block, shared);
        let args = HistogramArgs {
            samples: DevPtr::new(input),
            n,
            lower: T::level(bins.lower()),
            upper: T::level(bins.upper()),
            bins: count,
            epoch: self.next_epoch(),
            work: DevPtrMut::new(work),
            out: DevPtrMut::new(output),
        };
        // SAFETY: `samples` is a live slice of `n` elements and `out` one of
        // `count` counters (checked above), zeroed just before in stream
        // order for the steps that add into it; a `&mut` borrow cannot
        // overlap `samples`; `bins` passed the checks of `EvenBins::new` (1
        // to 65 536 bins, `lower < upper`, finite); the lane kernel runs
        // only for at most 256 bins, on at least `lane_private_min_blocks`
        // blocks, with `LANE_WORK_WORDS` words of this context's scratch
        // at `work` (zero on allocation, then written only by this
        // kernel, and used by nothing else on this stream while it runs)
        // and an epoch that is not 0 and not the previous launch's; the
        // shared one only where its counters fit the block's shared memory,
        // which the launch requests; the `Pending` keeps both buffers
        // borrowed until the stream has run the kernel.
        unsafe { self.launch(entry, cfg, &args)? };
        Ok(Pending::new(self))
    }

    /// Step 1: waits for the stream, copies the samples to the host, counts
    /// there and copies the counts into `out`.
    fn histogram_on_cpu<'a, T: HistogramSample>(
        &'a self,
        samples: &impl DeviceRead<Elem = T>,
        bins: &EvenBins<T>,
        out: &mut impl DeviceWrite<Elem = u32>,
    ) -> Result<Pending<'a>> {
        let host = self.download(samples)?;
        let counts = bins.histogram(&host);
        self.copy_from_host(&counts, out)?;
        Ok(Pending::new(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use warpspeed_gpu::histogram::HistogramShape;

    #[test]
    fn kernels_launch_with_their_steps_blocks() {
        for (kernel, step) in [
            (Kernel::GlobalAtomics, HistogramVariant::GlobalAtomics),
            (Kernel::SharedPrivatized, HistogramVariant::SharedPrivatized),
            (Kernel::LanePrivate, HistogramVariant::LanePrivate),
        ] {
            let block = kernel.block();
            assert_eq!(step.shape(), HistogramShape::Kernel { block }, "{step:?}");
        }
    }
}
