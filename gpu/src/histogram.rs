//! Histograms (the PMPP histogram chapter's ladder): counts of samples in
//! equal bins.
//!
//! Two forms share every kernel: the 256-bin histogram of bytes (bin = the
//! byte), and `histogram_even`, like CUB's `HistogramEven`: `bins` equal bins
//! of `[lower, upper)` for `u8`, `u16`, `i32` or `f32` samples. Which bin a
//! sample falls in is decided by [`Even::bin`], the same code on the GPU and
//! in the host's CPU step, so both agree to the last sample.
//!
//! Counters are `u32` and wrap past 2^32 − 1 samples in one bin (modulo 2^32,
//! like CUB's counters).

use crate::{KernelType, WARP_SIZE};

/// Bins of the byte histogram.
#[doc(hidden)]
pub const BYTE_BINS: u32 = 256;
/// The most bins `histogram_even` takes.
#[doc(hidden)]
pub const MAX_BINS: u32 = 65_536;
/// Threads per block of [`HistogramVariant::GlobalAtomics`].
#[doc(hidden)]
pub const GLOBAL_BLOCK: u32 = 256;
/// Threads per block of [`HistogramVariant::SharedPrivatized`].
#[doc(hidden)]
pub const SHARED_BLOCK: u32 = 256;
/// Samples each thread of [`HistogramVariant::SharedPrivatized`] counts at
/// least (the lesson's coarsening factor): the grid is no larger than that
/// needs, so each block's merge of its private histogram into the output is
/// paid for by many samples.
#[doc(hidden)]
pub const SHARED_COARSENING: u32 = 64;
/// Warps per block of [`HistogramVariant::LanePrivate`]. They share one set
/// of 32 lane columns (lane `l` of every warp counts into column `l`), so a
/// block needs 32 KB for 256 bins whatever its size, and an SM holds enough
/// warps to hide the loads' latency. Measured on an H100, 2^28 uniform bytes
/// (GB/s): one set per warp (12 warps per SM) 1320; sets shared by 4 warps
/// 2245, by 8 warps 2423, by 16 warps 2690 (the other data sets 2725 to
/// 2780 for 4 to 16 warps).
#[doc(hidden)]
pub const LANE_WARPS: u32 = 16;
/// Threads per block of [`HistogramVariant::LanePrivate`].
#[doc(hidden)]
pub const LANE_BLOCK: u32 = LANE_WARPS * WARP_SIZE;
/// The most blocks of [`HistogramVariant::LanePrivate`] the grid puts on an
/// SM: 3 of 512 threads, where 4 would fit the byte kernel's 32 registers.
#[doc(hidden)]
pub const LANE_BLOCKS_PER_SM: u32 = 3;
/// The most bins [`HistogramVariant::LanePrivate`] keeps per lane (a 32-bit
/// counter per bin and lane column, 32 KB for 256 bins); beyond, the fastest
/// step runs [`HistogramVariant::SharedPrivatized`]'s kernel.
#[doc(hidden)]
pub const LANE_MAX_BINS: u32 = 256;
/// Words of workspace [`HistogramVariant::LanePrivate`] takes (`work`):
/// the claim the first block of a launch takes and the flag it raises once
/// it has zeroed the output (see the step's doc).
#[doc(hidden)]
pub const LANE_WORK_WORDS: usize = 2;
/// 16-byte loads in flight per lane of [`HistogramVariant::LanePrivate`]
/// (written out as four loads in the kernel).
#[doc(hidden)]
pub const LANE_UNROLL: usize = 4;
const _: () = assert!(
    LANE_UNROLL == 4,
    "the lane-private kernel spells out four loads"
);

/// Bytes of shared memory a [`HistogramVariant::LanePrivate`] block needs for
/// `bins` bins: one 32-bit counter per lane column and bin.
#[doc(hidden)]
pub const fn lane_private_shared_bytes(bins: u32) -> u32 {
    bins * WARP_SIZE * 4
}

/// The fewest blocks [`HistogramVariant::LanePrivate`] may run `n` samples
/// of `sample_bytes` bytes with: enough that no lane counter can pass
/// 2^32 − 1. A column gains at most [`LANE_UNROLL`] vectors' samples per warp
/// of the block and round, so its count is bounded by the block's rounds,
/// and the grid bounds the rounds (the counters are merged only at the
/// block's end); the head and tail samples, at most 2 per thread, fit in
/// what the bound leaves below 2^32. One block suffices up to 2^37 − 2^15
/// samples of bytes (2^37 − 2^13 of `f32`).
#[doc(hidden)]
pub const fn lane_private_min_blocks(n: usize, sample_bytes: usize) -> usize {
    let per_vector = 16 / sample_bytes;
    let per_round = LANE_UNROLL * per_vector * LANE_WARPS as usize;
    let max_rounds = u32::MAX as usize / per_round;
    (n / per_vector).div_ceil(max_rounds * LANE_UNROLL * LANE_BLOCK as usize)
}

/// Bytes of shared memory a [`HistogramVariant::SharedPrivatized`] block
/// needs for `bins` bins: one `u32` counter each.
#[doc(hidden)]
pub const fn shared_privatized_bytes(bins: u32) -> u32 {
    bins * 4
}

/// How a histogram step runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HistogramShape {
    /// On the CPU, over a copy of the samples on the host.
    Cpu,
    /// A kernel with blocks of `block` threads.
    Kernel {
        /// Threads per block.
        block: u32,
    },
}

ladder! {
    /// The histogram ladder.
    pub enum HistogramVariant("histogram"): HistogramShape {
        /// Step 1 (lesson): the CPU, one sample after another. The reference,
        /// and the baseline that shows what the GPU buys. Called on device
        /// buffers it copies the samples to the host and the counts back,
        /// and waits for both copies.
        Cpu = "cpu" => HistogramShape::Cpu,
        /// Step 2 (lesson): one thread per sample in a grid-stride loop, one
        /// `atomicAdd` on the output per sample. Every sample of a popular
        /// bin queues on one address in L2.
        GlobalAtomics = "global_atomics" => HistogramShape::Kernel { block: GLOBAL_BLOCK },
        /// Step 3 (lesson's last kernel): each block counts into a private
        /// histogram in shared memory and merges it into the output once,
        /// so global atomics drop from one per sample to one per bin and
        /// block; each thread counts at least `SHARED_COARSENING` samples.
        /// A warp whose lanes hit one bin still serialises on one
        /// shared-memory address.
        SharedPrivatized = "shared_privatized" => HistogramShape::Kernel { block: SHARED_BLOCK },
        /// Step 4: every lane counts into its own column of shared memory
        /// (32-bit counters, the counter of bin `b` of lane `l` at
        /// `b · 32 + l`, shared by lane `l` of the block's warps): the
        /// lanes of a warp always touch 32 different banks and never the
        /// same address, whatever the data, so one bin takes the same time
        /// as 256; adds need no return value (`red.shared`). Samples arrive
        /// by 16-byte loads, `LANE_UNROLL` in flight. The counters are
        /// merged once, at the block's end (the grid is large enough that
        /// none can wrap: `lane_private_min_blocks`). For up to
        /// `LANE_MAX_BINS` bins; beyond, the step runs step 3's kernel while
        /// the bins fit in shared memory, and step 2's beyond that. The
        /// first block of the launch to start (an exchange on a claim word
        /// in the context's scratch memory) zeroes the output and raises a
        /// flag to the launch's number; every block waits for that flag
        /// before it adds its counts into the output. No zeroing launch
        /// before the kernel (its gap on a held stream was 1.0 to 1.5 µs)
        /// and no ticket after it: the last block's adds end the kernel.
        LanePrivate = "lane_private" => HistogramShape::Kernel { block: LANE_BLOCK },
    }
    default = LanePrivate;
}

/// "Not counted": what [`Even::bin`] returns for a sample outside
/// `[lower, upper)` or NaN.
#[doc(hidden)]
pub const NOT_COUNTED: u32 = u32::MAX;

/// A sample type of `histogram_even`: `u8`, `u16`, `i32` or `f32`.
pub trait Sample: KernelType + PartialOrd {
    /// Samples per 32-bit word.
    const PER_WORD: usize;
    /// The precomputed arithmetic of equal bins for this type.
    type Binning: Copy + core::fmt::Debug;
    /// The binning of `bins` equal bins of `[lower, upper)`; `lower` and
    /// `upper` are values of `Self` (exact in `f64` for every sample type),
    /// `lower < upper`, `bins >= 1`.
    fn binning(lower: f64, upper: f64, bins: u32) -> Self::Binning;
    /// The bin of `self`, or `NOT_COUNTED`.
    fn bin(self, binning: &Self::Binning) -> u32;
    /// Sample `k` (`< PER_WORD`) of a little-endian 32-bit word.
    fn from_word(word: u32, k: usize) -> Self;
}

/// Equal bins over an integer range: the bin of `s` is
/// `⌊(s − lower) · bins / (upper − lower)⌋`, exactly.
#[derive(Clone, Copy, Debug)]
pub struct IntegerBinning {
    lower: i64,
    range: u64,
    bins: u64,
    /// `1 / range`, for an estimate of the quotient that one correction
    /// step makes exact (no 64-bit division per sample).
    inverse: f64,
}

impl IntegerBinning {
    fn new(lower: f64, upper: f64, bins: u32) -> Self {
        let (lower, upper) = (lower as i64, upper as i64);
        let range = (upper - lower) as u64;
        IntegerBinning {
            lower,
            range,
            bins: bins as u64,
            inverse: 1.0 / range as f64,
        }
    }

    #[inline(always)]
    fn bin(&self, sample: i64) -> u32 {
        let offset = sample.wrapping_sub(self.lower);
        if offset < 0 || offset as u64 >= self.range {
            return NOT_COUNTED;
        }
        if self.range == self.bins {
            return offset as u32; // one value per bin: the common byte case
        }
        // `product < range · bins <= 2^32 · 2^16`: exact in `f64`, and the
        // estimate is within one of the true quotient (its relative error
        // is below 2^-51, the quotient below 2^16), so one step fixes it.
        let product = offset as u64 * self.bins;
        let mut q = (product as f64 * self.inverse) as u64;
        if q * self.range > product {
            q -= 1;
        } else if (q + 1) * self.range <= product {
            q += 1;
        }
        q as u32
    }
}

/// Equal bins over an `f32` range: the bin of `s` is
/// `min(⌊(s − lower) · scale⌋, bins − 1)` in `f32` arithmetic, with
/// `scale = bins / (upper − lower)` computed in `f64` and rounded to `f32`;
/// the `min` catches a product that rounds up to `bins` just below `upper`.
#[derive(Clone, Copy, Debug)]
pub struct FloatBinning {
    lower: f32,
    upper: f32,
    scale: f32,
    last: u32,
}

impl Sample for f32 {
    const PER_WORD: usize = 1;
    type Binning = FloatBinning;

    fn binning(lower: f64, upper: f64, bins: u32) -> FloatBinning {
        FloatBinning {
            lower: lower as f32,
            upper: upper as f32,
            scale: (bins as f64 / (upper - lower)) as f32,
            last: bins - 1,
        }
    }

    #[inline(always)]
    fn bin(self, b: &FloatBinning) -> u32 {
        // Written so that NaN fails the test.
        if !(self >= b.lower && self < b.upper) {
            return NOT_COUNTED;
        }
        // Non-negative: `as` truncates, i.e. floors (and saturates).
        (((self - b.lower) * b.scale) as u32).min(b.last)
    }

    #[inline(always)]
    fn from_word(word: u32, _k: usize) -> Self {
        f32::from_bits(word)
    }
}

macro_rules! integer_sample {
    ($($t:ty),*) => {$(
        impl Sample for $t {
            const PER_WORD: usize = 4 / size_of::<$t>();
            type Binning = IntegerBinning;

            fn binning(lower: f64, upper: f64, bins: u32) -> IntegerBinning {
                IntegerBinning::new(lower, upper, bins)
            }

            #[inline(always)]
            fn bin(self, b: &IntegerBinning) -> u32 {
                b.bin(self as i64)
            }

            #[inline(always)]
            fn from_word(word: u32, k: usize) -> Self {
                (word >> (k * 8 * size_of::<$t>())) as $t
            }
        }
    )*};
}
integer_sample!(u8, u16, i32);

/// `bins` equal bins of `[lower, upper)` for samples of type `T`: the one
/// definition of which bin a sample falls in, used by the kernels and by the
/// CPU step.
#[derive(Clone, Copy, Debug)]
pub struct Even<T: Sample> {
    binning: T::Binning,
}

impl<T: Sample> Even<T> {
    /// The bins; the caller has checked `bins >= 1`, `lower < upper` and
    /// both finite (the host's `EvenBins::new`).
    #[inline(always)]
    pub fn new(lower: f64, upper: f64, bins: u32) -> Self {
        Even {
            binning: T::binning(lower, upper, bins),
        }
    }

    /// The bin of `sample`, or `NOT_COUNTED`.
    #[inline(always)]
    pub fn bin(&self, sample: T) -> u32 {
        sample.bin(&self.binning)
    }
}

#[cfg(target_arch = "nvptx64")]
mod device {
    //! Common contract: `samples` valid for `n` reads that nothing writes
    //! during the kernel; `out` valid for `bins` writes, not aliasing
    //! `samples`, zeroed before the launch of steps 2 and 3 (they add into
    //! it; step 4 overwrites it); `work` (step 4 only) [`LANE_WORK_WORDS`]
    //! words that nothing else touches during the launch, zero when first
    //! used, and `epoch` (step 4 only) a number other than 0 and other than
    //! the previous step-4 launch's on the same `work`; the block and
    //! dynamic shared memory as the host's table says.
    use super::*;
    use crate::prim::*;

    /// Adds 1 to the counter of `bin` in the lane column at shared address
    /// `column`.
    #[inline(always)]
    unsafe fn count_in_column(column: u32, bin: u32) {
        add_in_column(column, bin, 1);
    }

    /// Adds `count` samples to bin `bin`'s counter, as [`count_in_column`].
    #[inline(always)]
    unsafe fn add_in_column(column: u32, bin: u32, count: u32) {
        red_shared_add_u32(column + bin * (4 * WARP_SIZE), count);
    }

    /// Where a sample goes: [`Even`], or the byte itself.
    pub trait Binner<T: Sample>: Copy {
        fn bin(&self, sample: T) -> u32;

        /// Counts the samples of one 32-bit word into a lane column (see
        /// [`lane_private`]).
        #[inline(always)]
        unsafe fn count_word(&self, word: u32, column: u32) {
            for k in 0..T::PER_WORD {
                let bin = self.bin(T::from_word(word, k));
                if bin != NOT_COUNTED {
                    count_in_column(column, bin);
                }
            }
        }
    }

    impl<T: Sample> Binner<T> for Even<T> {
        #[inline(always)]
        fn bin(&self, sample: T) -> u32 {
            Even::bin(self, sample)
        }
    }

    /// The byte histogram's binning: bin = byte.
    #[derive(Clone, Copy)]
    pub struct Bytes;

    impl Binner<u8> for Bytes {
        #[inline(always)]
        fn bin(&self, sample: u8) -> u32 {
            sample as u32
        }

        /// Four bytes with one byte permute and one shifted add each.
        #[inline(always)]
        unsafe fn count_word(&self, word: u32, column: u32) {
            for k in 0..4u32 {
                // Selector 0x444k: byte k of the first operand, zeros above.
                count_in_column(column, byte_perm(word, 0, 0x4440 | k));
            }
        }
    }

    /// Step 2.
    pub unsafe fn global_atomics<T: Sample, B: Binner<T>>(
        samples: *const T,
        n: usize,
        binner: B,
        out: *mut u32,
    ) {
        for i in grid_stride(n) {
            let bin = binner.bin(*samples.add(i));
            if bin != NOT_COUNTED {
                red_add_u32(out.add(bin as usize), 1);
            }
        }
    }

    /// Step 3. `bins` counters of dynamic shared memory.
    pub unsafe fn shared_privatized<T: Sample, B: Binner<T>>(
        samples: *const T,
        n: usize,
        binner: B,
        bins: u32,
        out: *mut u32,
    ) {
        let counts = dynamic_shared::<u32>();
        let (tid, threads) = (thread_idx_x(), block_dim_x());
        let mut b = tid;
        while b < bins {
            *counts.add(b as usize) = 0;
            b += threads;
        }
        sync_threads();
        for i in grid_stride(n) {
            let bin = binner.bin(*samples.add(i));
            if bin != NOT_COUNTED {
                atomic_add_u32(counts.add(bin as usize), 1);
            }
        }
        sync_threads();
        let mut b = tid;
        while b < bins {
            let count = *counts.add(b as usize);
            if count > 0 {
                red_add_u32(out.add(b as usize), count);
            }
            b += threads;
        }
    }

    /// Counts the samples of one 16-byte vector into a lane column.
    #[inline(always)]
    unsafe fn count_vector<T: Sample, B: Binner<T>>(binner: B, w: Words4, column: u32) {
        binner.count_word(w[0], column);
        binner.count_word(w[1], column);
        binner.count_word(w[2], column);
        binner.count_word(w[3], column);
    }

    /// Whether a word's samples are all equal: a rotation by one sample's
    /// bits maps it to itself exactly then (a rotation by 32 bits is none).
    /// One instruction and a compare.
    #[inline(always)]
    fn repeats<T: Sample>(word: u32) -> bool {
        word.rotate_left(32 / T::PER_WORD as u32) == word
    }

    /// Counts one 16-byte vector into a lane column with one add when it
    /// holds one sample repeated (every sample in one bin, or a run of
    /// sorted data), sample by sample otherwise. `maybe` says whether the
    /// first word of the lane's 4 vectors [`repeats`]: only then is the
    /// vector tested, so other data pay one test per 4 vectors, and the one
    /// branch that can split a warp has the single add on one side.
    /// Measured on an H200 (2^28 bytes, µs, one run): all in one bin
    /// 71.6 → 66.1, sorted 73.4 → 69.9, the other data 2–3% slower. A test
    /// of the 4 vectors as one run cost sorted data (whose 4 vectors lie in
    /// different runs) 6%; a test of every vector, 9% on the data it
    /// rejects; taking the tested vectors on a branch of their own, 9% on
    /// the normal data (a warp then ran both branches).
    #[inline(always)]
    unsafe fn count_run_or_vector<T: Sample, B: Binner<T>>(
        binner: B,
        w: Words4,
        column: u32,
        maybe: bool,
    ) {
        if maybe && repeats::<T>(w[0]) && w[1] == w[0] && w[2] == w[0] && w[3] == w[0] {
            let bin = binner.bin(T::from_word(w[0], 0));
            if bin != NOT_COUNTED {
                add_in_column(column, bin, 4 * T::PER_WORD as u32);
            }
        } else {
            count_vector(binner, w, column);
        }
    }

    /// Adds the block's lane columns into `out`: the block's last work (the
    /// columns are not reused after it). Every thread of the block calls it
    /// at the same point.
    #[inline(always)]
    unsafe fn merge_lanes(counters: *const u32, bins: u32, out: *mut u32) {
        const LANES: usize = WARP_SIZE as usize;
        sync_threads();
        let tid = thread_idx_x() as usize;
        let mut b = tid;
        while b < bins as usize {
            let row = counters.add(b * LANES);
            let mut count = 0u32;
            for j in 0..LANES {
                // Rotated by thread: the lanes of a warp read 32 different
                // banks at each step.
                count = count.wrapping_add(*row.add((tid + j) % LANES));
            }
            if count > 0 {
                red_add_u32(out.add(b), count);
            }
            b += LANE_BLOCK as usize;
        }
    }

    /// Step 4. `bins <= LANE_MAX_BINS`; dynamic shared memory of
    /// [`lane_private_shared_bytes`]`(bins)`; blocks of [`LANE_BLOCK`], at
    /// least [`lane_private_min_blocks`] of them.
    /// Inlined into each entry: as a call, its binning would be read
    /// through local memory.
    #[inline(always)]
    pub unsafe fn lane_private<T: Sample, B: Binner<T>>(
        samples: *const T,
        n: usize,
        binner: B,
        bins: u32,
        epoch: u32,
        work: *mut u32,
        out: *mut u32,
    ) {
        const LANES: usize = WARP_SIZE as usize;
        const UNROLL: usize = LANE_UNROLL;
        let (claim, flag) = (work, work.add(1));
        let counters = dynamic_shared::<u32>();
        let tid = thread_idx_x() as usize;
        let lane = tid % LANES;
        let words = bins as usize * LANES;
        let mut i = tid;
        while i < words {
            *counters.add(i) = 0;
            i += LANE_BLOCK as usize;
        }
        // The first block of the launch zeroes the output with its first
        // warp, which then raises the flag every block waits for before it
        // adds into the output.
        if tid < LANES && first_to_claim(claim, epoch) {
            let mut b = tid;
            while b < bins as usize {
                *out.add(b) = 0;
                b += LANES;
            }
            raise_flag(flag, epoch);
        }
        sync_threads();
        // This lane's column: word `b · 32` counts bin `b`.
        let column = shared_address(counters.add(lane));

        // Head (up to the first 16-byte boundary) and tail (the last
        // partial 16 bytes): one sample per thread at most.
        let per_vector = 4 * T::PER_WORD;
        let rank = block_idx_x() as usize * LANE_BLOCK as usize + tid;
        let threads = grid_threads_x();
        let misaligned = (samples as usize % 16) / size_of::<T>();
        let head = ((per_vector - misaligned) % per_vector).min(n);
        let body = samples.add(head).cast::<Words4>();
        let vectors = (n - head) / per_vector;
        let tail = head + vectors * per_vector + rank;
        let edge = |i: usize| {
            let bin = binner.bin(*samples.add(i));
            if bin != NOT_COUNTED {
                count_in_column(column, bin);
            }
        };
        if rank < head {
            edge(rank);
        }
        if tail < n {
            edge(tail);
        }

        // The body in rounds of UNROLL vectors per thread, the last one
        // masked.
        let round_vectors = UNROLL * threads;
        let rounds = vectors.div_ceil(round_vectors);
        for r in 0..rounds {
            let first = r * round_vectors + rank;
            if first + 3 * threads < vectors {
                // Four loads in flight, then their samples; constant
                // indices keep `w` in registers.
                let w = [
                    load_nc_v4(body.add(first)),
                    load_nc_v4(body.add(first + threads)),
                    load_nc_v4(body.add(first + 2 * threads)),
                    load_nc_v4(body.add(first + 3 * threads)),
                ];
                let maybe = repeats::<T>(w[0][0]);
                count_run_or_vector(binner, w[0], column, maybe);
                count_run_or_vector(binner, w[1], column, maybe);
                count_run_or_vector(binner, w[2], column, maybe);
                count_run_or_vector(binner, w[3], column, maybe);
            } else {
                for u in 0..UNROLL {
                    let v = first + u * threads;
                    if v < vectors {
                        count_vector(binner, load_nc_v4(body.add(v)), column);
                    }
                }
            }
        }
        // Thread 0 waits for the zeroed output while the others finish.
        if tid == 0 {
            wait_flag(flag, epoch);
        }
        merge_lanes(counters, bins, out);
    }
}

kernels! {
    /// Every histogram entry point: `histogram_even` for each sample type,
    /// and the byte histogram (`histogram_bytes_*`, `u8` only, which ignores
    /// `lower`, `upper` and `bins`: 256 bins, bin = byte). `lower` and
    /// `upper` are sample values carried in `f64` (exact for every sample
    /// type).
    pub const KERNELS = {
        (samples: *const T, n: usize, lower: f64, upper: f64, bins: u32, epoch: u32, work: *mut u32,
            out: *mut u32) {
            fn histogram_global_atomics<T in u8, u16, i32, f32> => {
                let _ = (epoch, work);
                device::global_atomics(samples, n, Even::<T>::new(lower, upper, bins), out)
            };
            fn histogram_shared_privatized<T in u8, u16, i32, f32> => {
                let _ = (epoch, work);
                device::shared_privatized(samples, n, Even::<T>::new(lower, upper, bins), bins, out)
            };
            fn histogram_lane_private<T in u8, u16, i32, f32> => device::lane_private(
                samples, n, Even::<T>::new(lower, upper, bins), bins, epoch, work, out);
            fn histogram_bytes_global_atomics<T in u8> => {
                let _ = (lower, upper, bins, epoch, work);
                device::global_atomics(samples, n, device::Bytes, out)
            };
            fn histogram_bytes_shared_privatized<T in u8> => {
                let _ = (lower, upper, bins, epoch, work);
                device::shared_privatized(samples, n, device::Bytes, BYTE_BINS, out)
            };
            fn histogram_bytes_lane_private<T in u8> => {
                let _ = (lower, upper, bins);
                device::lane_private(samples, n, device::Bytes, BYTE_BINS, epoch, work, out)
            };
        }
    }
}

/// The arguments of every histogram kernel.
pub type HistogramArgs<T> = histogram_global_atomics::Args<T>;

#[cfg(test)]
mod tests {
    use super::*;

    /// One block until a column could pass 2^32 − 1: 2^22 − 1 rounds of
    /// 1 024 byte samples (4 vectors of 16 per warp, 16 warps).
    #[test]
    fn lane_counters_cannot_wrap() {
        let one_block = ((1usize << 22) - 1) * 4 * 16 * LANE_BLOCK as usize;
        assert_eq!(one_block, (1 << 37) - (1 << 15));
        assert_eq!(lane_private_min_blocks(0, 1), 0);
        assert_eq!(lane_private_min_blocks(1 << 28, 1), 1);
        assert_eq!(lane_private_min_blocks(one_block, 1), 1);
        assert_eq!(lane_private_min_blocks(one_block + 16, 1), 2);
        // f32: 4 samples a vector, 4 times fewer per column and round, so
        // 4 times the rounds: about as many samples.
        let one_block_f32 = ((1usize << 24) - 1) * 4 * 4 * LANE_BLOCK as usize;
        assert_eq!(lane_private_min_blocks(one_block_f32, 4), 1);
        assert_eq!(lane_private_min_blocks(one_block_f32 + 4, 4), 2);
        // Every count a block's column can reach fits, with the 2 edge
        // samples of each of its LANE_WARPS threads, for every sample size.
        for size in [1, 2, 4] {
            let per_round = LANE_UNROLL * (16 / size) * LANE_WARPS as usize;
            let rounds = u32::MAX as usize / per_round;
            assert!(rounds * per_round + 2 * LANE_WARPS as usize <= u32::MAX as usize);
        }
    }
}
