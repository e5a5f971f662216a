//! Random numbers compatible with cuRAND's Philox4_32_10, bit for bit: the
//! generator of lesson 001 (`curand_init`, `curand`, `curand_uniform`,
//! `curand_normal`, `curand_log_normal`) as a CPU generator, from the same
//! `no_std` source the kernels use ([`warpspeed_gpu::rng`]).
//!
//! ```
//! use warpspeed::rng::Philox;
//! // curand_init(1234, 0, 0, &state); curand(&state); curand_uniform(&state)
//! let mut philox = Philox::new(1234, 0, 0);
//! assert_eq!(philox.next_u32(), 0x2090_b348);
//! let u = philox.uniform(); // in (0, 1]
//! assert!(u > 0.0 && u <= 1.0);
//! ```
//!
//! Integers and uniforms equal cuRAND's exactly (tested against vectors
//! made by cuRAND itself, `tests/fixtures/curand/`). Normals and
//! log-normals come from the same Box–Muller pairs, but cuRAND takes their
//! sine and cosine from the GPU's approximate instructions, so the CPU's
//! values differ by up to [`NORMAL_CPU_TOLERANCE`] times the pair's radius
//! (see [`warpspeed_gpu::rng`]). Poisson counts equal cuRAND's for
//! `λ < 64` and `λ > 4000`, and in the fixtures between too (cuRAND uses
//! approximate instructions there; see [`Philox::poisson`]). `Philox` implements `rand_core`'s
//! `RngCore` (`next_u32` is `curand`) and `SeedableRng`.
//!
//! Bulk fills on the GPU are cuRAND's host API: a [`Generator`] (seed and
//! stream position, like a `curandGenerator_t` of
//! `CURAND_RNG_PSEUDO_PHILOX4_32_10`) fills a device slice with the values
//! `curandGenerate` (`u32`) or `curandGenerateUniform` (`f32`) would write,
//! in the same order, and moves on, so the next fill continues the stream:
//!
//! ```no_run
//! # fn main() -> warpspeed::Result<()> {
//! use cust::memory::DeviceBuffer;
//! use warpspeed::rng::Generator;
//! let ctx = warpspeed::Context::new(0)?;
//! let mut generator = Generator::new(1234); // curandSetPseudoRandomGeneratorSeed
//! let mut x = DeviceBuffer::from_slice(&[0f32; 1000]).unwrap();
//! ctx.fill_uniform_into(&mut generator, &mut x)?.wait()?; // curandGenerateUniform
//! assert_eq!(generator.position(), 1000);
//! # Ok(()) }
//! ```

pub use warpspeed_gpu::rng::{
    HOST_STREAM_LIMIT, HOST_THREADS, NORMAL_CPU_TOLERANCE, PHILOX_M, PHILOX_W, POISSON_SEARCH,
    Philox, box_muller, box_muller_f64, host_value, in_quarter_disc, log_normal_of, normals_of,
    philox4x32_10, poisson_of, scaled, uniform_f64_of, uniform_of,
};

use crate::context::Context;
use crate::error::{Error, Result};
use crate::launch::{LaunchConfig, grid_stride_blocks};
use crate::pending::Pending;
use cust::memory::{DeviceBuffer, DeviceSlice};
use warpspeed_gpu::rng::{
    FILL_BLOCK, FILL_SHARED_BYTES, FillValue, POISSON_SHARED_WORDS, poisson_guide_bits, rng_draws,
    rng_fill, rng_fill_log_normal, rng_fill_normal, rng_fill_poisson, rng_pi_hits,
};
use warpspeed_gpu::{DevPtr, DevPtrMut};

/// cuRAND's host-API Philox4_32_10 generator: a seed and the position in
/// its stream the next fill starts at (`curandSetGeneratorOffset`). Fills
/// ([`Context::fill_u32_into`], [`Context::fill_uniform_into`]) write the
/// values cuRAND's would, and move the position on by their length.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Generator {
    seed: u64,
    position: u64,
}

impl Generator {
    /// The generator of `seed` at the start of its stream.
    pub const fn new(seed: u64) -> Generator {
        Generator { seed, position: 0 }
    }

    /// The generator of `seed` at value `offset` of its stream
    /// (`curandSetGeneratorOffset(offset)`).
    pub const fn with_offset(seed: u64, offset: u64) -> Generator {
        Generator {
            seed,
            position: offset,
        }
    }

    /// The seed.
    pub const fn seed(&self) -> u64 {
        self.seed
    }

    /// The stream position the next fill starts at.
    pub const fn position(&self) -> u64 {
        self.position
    }

    /// Value `position` of the stream, on the CPU: what a fill writes for
    /// it (`u32`; uniforms are [`uniform_of`] of it).
    pub const fn value(&self, position: u64) -> u32 {
        host_value(self.seed, position)
    }

    /// Value `position` of the stream of normals `curandGenerateNormal`
    /// (mean 0, deviation 1) fills with, on the CPU: Box–Muller
    /// ([`box_muller`]) on the pair of stream values at `position & !1`
    /// and `position | 1`, the sine's result at even positions, the
    /// cosine's at odd ones (read from cuRAND's fills, with even offsets).
    /// Within [`NORMAL_CPU_TOLERANCE`] times the pair's radius of cuRAND's.
    pub fn normal_value(&self, position: u64) -> f32 {
        let first = position & !1;
        box_muller(self.value(first), self.value(first | 1))[(position & 1) as usize]
    }

    /// Value `position` of `curandGenerateLogNormal(.., mean, stddev)`'s
    /// stream on the CPU: `exp(mean + stddev · z)` of
    /// [`Generator::normal_value`]`(position)`.
    pub fn log_normal_value(&self, position: u64, mean: f32, stddev: f32) -> f32 {
        log_normal_of(self.normal_value(position), mean, stddev)
    }

    /// Value `position` of [`Context::fill_poisson_into`]'s stream with
    /// `table`, on the CPU: the table's count for stream value `position`.
    pub fn poisson_value(&self, position: u64, table: &PoissonTable) -> u32 {
        table.count(self.value(position))
    }

    /// Reserves the next `n` values: their first position, or an error if
    /// they would pass [`HOST_STREAM_LIMIT`] (the layout of cuRAND's fills
    /// is known below it).
    fn take(&mut self, n: usize) -> Result<u64> {
        let start = self.position;
        match start.checked_add(n as u64) {
            Some(end) if end <= HOST_STREAM_LIMIT => {
                self.position = end;
                Ok(start)
            }
            _ => Err(Error::InvalidArgument(format!(
                "a fill of {n} values from stream position {start} would pass value 2^50 of the \
                 Philox stream, beyond the layout of cuRAND's fills"
            ))),
        }
    }
}

/// The largest `λ` [`Context::poisson_table`] accepts: its table, which
/// covers the counts within about 9.5 standard deviations of `λ`, stays
/// below 3 MB.
pub const POISSON_MAX_LAMBDA: f64 = (1u64 << 30) as f64;

/// An inverse-CDF table of the Poisson distribution of one `λ`, on the
/// device ([`Context::poisson_table`]): what [`Context::fill_poisson_into`]
/// maps each 32-bit stream value through, like the distribution object
/// `curandCreatePoissonDistribution` makes for cuRAND.
///
/// Entry `i` is `round(2^32 · P(X ≤ base + i))`, for every `i` where that
/// is below 2^32; value `x` of the stream gives `base` plus the number of
/// entries at most `x`. So count `k` comes from `2^32 · P(X = k)` of the
/// 2^32 values, rounded: the distribution is exact to 2^-33 per count
/// (the counts whose probability is below that are never drawn). One
/// 32-bit value per count makes the fill a single pass at the speed of
/// the uniform fill, where Knuth's method would draw `λ + 1` uniforms per
/// count.
pub struct PoissonTable {
    lambda: f64,
    base: u32,
    /// The entries, then the guide (see [`poisson_of`]).
    host: Vec<u32>,
    /// How many of `host` are entries.
    len: usize,
    /// The guide's bucket width: values `b << shift` to `(b + 1) << shift`.
    shift: u32,
    device: DeviceBuffer<u32>,
}

impl std::fmt::Debug for PoissonTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PoissonTable")
            .field("lambda", &self.lambda)
            .field("base", &self.base)
            .field("entries", &self.len)
            .finish()
    }
}

impl PoissonTable {
    /// The mean.
    pub fn lambda(&self) -> f64 {
        self.lambda
    }

    /// The smallest count the table gives.
    pub fn base(&self) -> u32 {
        self.base
    }

    /// The entries (see the type's docs).
    pub fn entries(&self) -> &[u32] {
        &self.host[..self.len]
    }

    /// The count for stream value `x`, on the CPU.
    pub fn count(&self, x: u32) -> u32 {
        poisson_of(x, self.base, self.len, self.shift, |i| self.host[i])
    }

    /// `entries` followed by their guide (see [`poisson_of`]):
    /// `2^g + 1` entries, `g` from [`poisson_guide_bits`], each flagged
    /// with [`POISSON_SEARCH`] where its bucket holds entries; and the
    /// guide's shift, `32 − g`.
    fn with_guide(mut entries: Vec<u32>) -> (Vec<u32>, u32) {
        let len = entries.len();
        let bits = poisson_guide_bits(len);
        let shift = 32 - bits;
        let mut below = 0;
        let mut guide = Vec::with_capacity((1 << bits) + 1);
        for b in 0..=(1u64 << bits) {
            let start = b << shift;
            while below < len && (entries[below] as u64) < start {
                below += 1;
            }
            guide.push(below as u32);
        }
        // Bucket `b` holds entries when the next bucket starts with more
        // below it (the last guide entry closes the last bucket).
        for b in 0..1 << bits {
            if guide[b + 1] > guide[b] {
                guide[b] |= POISSON_SEARCH;
            }
        }
        entries.extend(guide);
        (entries, shift)
    }

    /// The entries and the base for `lambda` (checked by the caller).
    fn build(lambda: f64) -> (u32, Vec<u32>) {
        // P(X = k) from the mode outwards by the ratio of neighbours,
        // P(k − 1) = P(k) · k / λ and P(k + 1) = P(k) · λ / (k + 1), until
        // the terms fall below 2^-80; then normalised by their sum.
        const NEGLIGIBLE: f64 = 8.271_806_125_530_277e-25; // 2^-80
        let mode = lambda.floor();
        let log_mode = mode * lambda.ln() - lambda - libm::lgamma(mode + 1.0);
        let at_mode = log_mode.exp();
        let mut below = Vec::new();
        let (mut k, mut p) = (mode, at_mode);
        while k > 0.0 {
            p *= k / lambda;
            k -= 1.0;
            if p < NEGLIGIBLE {
                break;
            }
            below.push(p);
        }
        let low = mode - below.len() as f64;
        let mut pmf: Vec<f64> = below.into_iter().rev().collect();
        pmf.push(at_mode);
        let (mut k, mut p) = (mode, at_mode);
        loop {
            p *= lambda / (k + 1.0);
            k += 1.0;
            if p < NEGLIGIBLE {
                break;
            }
            pmf.push(p);
        }
        let total: f64 = pmf.iter().sum();
        let scale = 2f64.powi(32) / total;
        let mut entries = Vec::with_capacity(pmf.len());
        let mut cumulative = 0.0;
        let mut base = None;
        for (i, p) in pmf.iter().enumerate() {
            cumulative += p;
            let entry = (cumulative * scale).round();
            if entry < 1.0 {
                // Counts below `base` are never drawn: their mass rounds to 0.
                continue;
            }
            base.get_or_insert(low as u32 + i as u32);
            if entry >= 2f64.powi(32) {
                break;
            }
            entries.push(entry as u32);
        }
        // The cumulative sum reaches the total, so some entry rounds to 1
        // or more.
        let base = base.unwrap_or(low as u32);
        (base, entries)
    }
}

/// Where [`Context::draws_into`]'s generators start: thread `t` is
/// `curand_init(seed, subsequence + t, offset)` (the sum wrapping at 2^64),
/// as in lesson 001.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PerThread {
    /// The seed of every thread.
    pub seed: u64,
    /// Thread 0's subsequence.
    pub subsequence: u64,
    /// The offset of every thread within its subsequence.
    pub offset: u64,
    /// How many threads (generators).
    pub threads: usize,
}

/// What [`Context::draws_into`] draws: one of the device API's functions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Draw {
    /// `curand`: `u32` output.
    Bits,
    /// `curand_uniform`: `f32` output.
    Uniform,
    /// `curand_normal`: `f32` output.
    Normal,
    /// `curand_log_normal(mean, stddev)`: `f32` output.
    LogNormal {
        /// The mean of the normal.
        mean: f32,
        /// Its deviation, at least 0.
        stddev: f32,
    },
    /// `curand_poisson(lambda)`: `u32` output; Knuth's method, `λ < 64`,
    /// on the GPU so far.
    Poisson {
        /// The mean, finite and positive.
        lambda: f64,
    },
}

/// An element type of [`Context::draws_into`]'s output: `u32` for
/// [`Draw::Bits`] and [`Draw::Poisson`], `f32` for the others.
pub trait DrawOutput: cust::memory::DeviceCopy + private::Sealed {
    /// Whether `draw` writes this type.
    #[doc(hidden)]
    fn holds(draw: &Draw) -> bool;
}

mod private {
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for f32 {}
}

impl DrawOutput for u32 {
    fn holds(draw: &Draw) -> bool {
        matches!(draw, Draw::Bits | Draw::Poisson { .. })
    }
}

impl DrawOutput for f32 {
    fn holds(draw: &Draw) -> bool {
        !u32::holds(draw)
    }
}

/// A normal's `mean` and `stddev`: finite, `stddev ≥ 0`.
fn check_normal(mean: f32, stddev: f32) -> Result<()> {
    if !mean.is_finite() || !stddev.is_finite() || stddev < 0.0 {
        return Err(Error::InvalidArgument(format!(
            "a normal needs a finite mean and a finite deviation of at least 0, not mean {mean} \
             and deviation {stddev}"
        )));
    }
    Ok(())
}

/// A Poisson mean: finite and positive.
fn check_lambda(lambda: f64) -> Result<()> {
    if !(lambda.is_finite() && lambda > 0.0) {
        return Err(Error::InvalidArgument(format!(
            "a Poisson mean must be finite and positive, not {lambda}"
        )));
    }
    Ok(())
}

impl Context {
    /// Enqueues a fill of `out` with the next `out.len()` values of
    /// `generator`'s stream (`curandGenerate`), and moves it on. Returns at
    /// once; see [`Pending`].
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if the fill would pass stream value
    /// 2^50 ([`HOST_STREAM_LIMIT`]); the generator is then unchanged.
    pub fn fill_u32_into<'a>(
        &'a self,
        generator: &mut Generator,
        out: &'a mut DeviceSlice<u32>,
    ) -> Result<Pending<'a>> {
        self.fill_raw_into(generator, out)
    }

    /// Enqueues a fill of `out` with uniforms in `(0, 1]` of the next
    /// `out.len()` values of `generator`'s stream
    /// (`curandGenerateUniform`), and moves it on. Returns at once; see
    /// [`Pending`].
    ///
    /// # Errors
    /// As [`Context::fill_u32_into`].
    pub fn fill_uniform_into<'a>(
        &'a self,
        generator: &mut Generator,
        out: &'a mut DeviceSlice<f32>,
    ) -> Result<Pending<'a>> {
        self.fill_raw_into(generator, out)
    }

    /// Enqueues a fill of `out` with normals of mean `mean` and deviation
    /// `stddev` (`curandGenerateNormal`): Box–Muller on the pairs of
    /// stream values at positions `(2i, 2i + 1)`, `z · stddev + mean` in one
    /// rounding; bit for bit cuRAND's values (see
    /// [`Generator::normal_value`] for the CPU's). Any length and any
    /// position: unlike cuRAND, which wants an even count, an odd fill
    /// ends mid-pair and the next one starts there, so fills in pieces
    /// equal one fill. Moves the generator on; returns at once.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a mean or a deviation that is not
    /// finite, a negative deviation, or a fill past [`HOST_STREAM_LIMIT`].
    pub fn fill_normal_into<'a>(
        &'a self,
        generator: &mut Generator,
        mean: f32,
        stddev: f32,
        out: &'a mut DeviceSlice<f32>,
    ) -> Result<Pending<'a>> {
        check_normal(mean, stddev)?;
        self.fill_normal_kind(generator, mean, stddev, out, false)
    }

    /// Enqueues a fill of `out` with `exp(mean + stddev · z)` of the
    /// normals [`Context::fill_normal_into`] draws
    /// (`curandGenerateLogNormal`). Moves the generator on; returns at
    /// once.
    ///
    /// # Errors
    /// As [`Context::fill_normal_into`].
    pub fn fill_log_normal_into<'a>(
        &'a self,
        generator: &mut Generator,
        mean: f32,
        stddev: f32,
        out: &'a mut DeviceSlice<f32>,
    ) -> Result<Pending<'a>> {
        check_normal(mean, stddev)?;
        self.fill_normal_kind(generator, mean, stddev, out, true)
    }

    /// Builds the inverse-CDF table of the Poisson distribution of mean
    /// `lambda` and copies it to the device (a synchronous copy, once per
    /// `λ`; a few hundred bytes for small `λ`, up to 3 MB at
    /// [`POISSON_MAX_LAMBDA`]).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a `λ` that is not finite and
    /// positive or above [`POISSON_MAX_LAMBDA`]; [`Error::Cuda`] if the
    /// allocation fails.
    pub fn poisson_table(&self, lambda: f64) -> Result<PoissonTable> {
        self.ensure_alive()?;
        check_lambda(lambda)?;
        if lambda > POISSON_MAX_LAMBDA {
            return Err(Error::InvalidArgument(format!(
                "a Poisson table covers λ up to 2^30, not {lambda}"
            )));
        }
        let (base, entries) = PoissonTable::build(lambda);
        let len = entries.len();
        let (host, shift) = PoissonTable::with_guide(entries);
        let device = DeviceBuffer::from_slice(&host)
            .map_err(|e| Error::cust(e, format!("copying the Poisson table of λ = {lambda}")))?;
        Ok(PoissonTable {
            lambda,
            base,
            host,
            len,
            shift,
            device,
        })
    }

    /// Enqueues a fill of `out` with Poisson counts of `table`'s `λ`, one
    /// per stream value (see [`PoissonTable`]; [`Generator::poisson_value`]
    /// is the CPU's). Not cuRAND's `curandGeneratePoisson` values: cuRAND
    /// maps its values through tables of its own. Moves the generator on;
    /// returns at once.
    ///
    /// # Errors
    /// As [`Context::fill_u32_into`].
    pub fn fill_poisson_into<'a>(
        &'a self,
        generator: &mut Generator,
        table: &'a PoissonTable,
        out: &'a mut DeviceSlice<u32>,
    ) -> Result<Pending<'a>> {
        let address = out.as_device_ptr().as_raw();
        // Small tables (λ up to 10^4 or so) go to each block's shared memory.
        let words = table.host.len();
        let shared = if words <= POISSON_SHARED_WORDS {
            words as u32
        } else {
            0
        };
        self.fill_launch(generator, out.len(), |n, grid, seed, position| {
            let args = rng_fill_poisson::Args::<u32> {
                out: DevPtrMut::new(address),
                n,
                seed,
                position,
                table: DevPtr::new(table.device.as_device_ptr().as_raw()),
                len: table.len,
                base: table.base,
                shift: table.shift,
                shared,
            };
            // SAFETY: `out` is a device slice of `n` elements, all written
            // and nothing else; `position + n <= HOST_STREAM_LIMIT`
            // (`fill_launch` checked); the table holds `len` ascending
            // entries and their guide (`with_guide`), `words` in all, that
            // nothing writes while the `Pending` borrows it; `shared` is 0
            // or `words`, with room for it behind the staging area; the
            // fills' launch shape.
            unsafe {
                self.launch(
                    rng_fill_poisson::entry::<u32>(),
                    LaunchConfig::linear(grid, FILL_BLOCK, FILL_SHARED_BYTES + 4 * shared),
                    &args,
                )
            }
        })
    }

    /// Enqueues lesson 001's kernel: `per_thread.threads` generators, thread
    /// `t` starting as `curand_init(seed, subsequence + t, offset)`, each
    /// making `out.len() / threads` draws of `draw` with the device API's
    /// functions on the GPU (bit for bit cuRAND's); draw `i` of thread `t`
    /// goes to `out[i · threads + t]`. Returns at once.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] if `out.len()` is not a multiple of the
    /// thread count (a count of 0 needs an empty `out`);
    /// [`Error::InvalidArgument`] if `T` is not the draw's output type, or
    /// for a bad mean, deviation or `λ` (as the fills);
    /// [`Error::Unsupported`] for `Draw::Poisson` with `λ ≥ 64` (only
    /// Knuth's method runs on the GPU so far).
    pub fn draws_into<'a, T: DrawOutput>(
        &'a self,
        per_thread: &PerThread,
        draw: Draw,
        out: &'a mut DeviceSlice<T>,
    ) -> Result<Pending<'a>> {
        self.ensure_alive()?;
        let threads = per_thread.threads;
        let len = out.len();
        let count = len.checked_div(threads).unwrap_or(0);
        if count * threads != len {
            return Err(Error::LengthMismatch {
                what: "the draws' output (a multiple of the thread count)",
                expected: count * threads,
                given: len,
            });
        }
        if !T::holds(&draw) {
            return Err(Error::InvalidArgument(format!(
                "{draw:?} writes {}, not {}",
                if u32::holds(&draw) { "u32" } else { "f32" },
                std::any::type_name::<T>()
            )));
        }
        let (mut mean, mut stddev, mut lambda) = (0.0, 1.0, 1.0);
        let method = match draw {
            Draw::Bits => warpspeed_gpu::rng::Draw::Bits,
            Draw::Uniform => warpspeed_gpu::rng::Draw::Uniform,
            Draw::Normal => warpspeed_gpu::rng::Draw::Normal,
            Draw::LogNormal { mean: m, stddev: s } => {
                check_normal(m, s)?;
                (mean, stddev) = (m, s);
                warpspeed_gpu::rng::Draw::LogNormal
            }
            Draw::Poisson { lambda: l } => {
                check_lambda(l)?;
                if l >= 64.0 {
                    return Err(Error::Unsupported {
                        variant: "draws",
                        reason: format!(
                            "curand_poisson with λ = {l}: only Knuth's method (λ < 64) runs on \
                             the GPU so far; Philox::poisson draws any λ on the CPU, and \
                             Context::fill_poisson_into fills with any λ"
                        ),
                    });
                }
                lambda = l;
                warpspeed_gpu::rng::Draw::Poisson
            }
        };
        if len == 0 {
            return Ok(Pending::new(self));
        }
        let grid = self.thread_grid(threads);
        let args = rng_draws::Args::<u32> {
            out: DevPtrMut::new(out.as_device_ptr().as_raw()),
            threads,
            per_thread: count,
            seed: per_thread.seed,
            subsequence: per_thread.subsequence,
            offset: per_thread.offset,
            method: method as u32,
            mean,
            stddev,
            lambda,
        };
        // SAFETY: `out` holds `threads · count` 4-byte elements (checked),
        // all written as 32-bit words (`u32` and `f32` have one size and
        // alignment); `method` is a valid code and a Poisson `λ` is below
        // 64 (checked); any 1D grid. The `Pending` borrows `out`.
        unsafe {
            self.launch(
                rng_draws::entry::<u32>(),
                LaunchConfig::linear(grid, FILL_BLOCK, 0),
                &args,
            )?
        };
        Ok(Pending::new(self))
    }

    /// Enqueues the Monte-Carlo estimate of π that the device API is
    /// usually shown with: `hits.len()` threads, thread `t` starting as
    /// `curand_init(seed, t, 0)`, each drawing `draws` points `(x, y)` of
    /// two uniforms and writing to `hits[t]` how many fell in the quarter
    /// disc ([`in_quarter_disc`]). `π ≈ 4 · Σ hits / (threads · draws)`.
    /// Returns at once.
    ///
    /// # Errors
    /// Only the launch's.
    pub fn pi_hits_into<'a>(
        &'a self,
        seed: u64,
        draws: u32,
        hits: &'a mut DeviceSlice<u32>,
    ) -> Result<Pending<'a>> {
        self.ensure_alive()?;
        let threads = hits.len();
        if threads == 0 {
            return Ok(Pending::new(self));
        }
        let grid = self.thread_grid(threads);
        let args = rng_pi_hits::Args::<u32> {
            hits: DevPtrMut::new(hits.as_device_ptr().as_raw()),
            threads,
            draws,
            seed,
        };
        // SAFETY: `hits` holds `threads` words, each written once by its
        // thread; any 1D grid. The `Pending` borrows `hits`.
        unsafe {
            self.launch(
                rng_pi_hits::entry::<u32>(),
                LaunchConfig::linear(grid, FILL_BLOCK, 0),
                &args,
            )?
        };
        Ok(Pending::new(self))
    }

    /// Blocks of [`FILL_BLOCK`] for one thread per item, capped at what
    /// the device holds at once (the kernels loop grid-stride beyond).
    fn thread_grid(&self, items: usize) -> u32 {
        let info = self.info();
        grid_stride_blocks(
            items,
            FILL_BLOCK,
            info.multiprocessors,
            info.max_threads_per_multiprocessor,
        )
    }

    fn fill_raw_into<'a, T>(
        &'a self,
        generator: &mut Generator,
        out: &'a mut DeviceSlice<T>,
    ) -> Result<Pending<'a>>
    where
        T: FillValue + cust::memory::DeviceCopy + warpspeed_gpu::KernelType,
    {
        let address = out.as_device_ptr().as_raw();
        self.fill_launch(generator, out.len(), |n, grid, seed, position| {
            let args = rng_fill::Args::<T> {
                out: DevPtrMut::new(address),
                n,
                seed,
                position,
            };
            // SAFETY: `out` is a device slice of `n` elements, all written
            // and nothing else; `position + n <= HOST_STREAM_LIMIT`
            // (`fill_launch` checked); any 1D grid. The `Pending` keeps
            // `out` borrowed until the stream has run the kernel.
            unsafe {
                self.launch(
                    rng_fill::entry::<T>(),
                    LaunchConfig::linear(grid, FILL_BLOCK, FILL_SHARED_BYTES),
                    &args,
                )
            }
        })
    }

    fn fill_normal_kind<'a>(
        &'a self,
        generator: &mut Generator,
        mean: f32,
        stddev: f32,
        out: &'a mut DeviceSlice<f32>,
        log: bool,
    ) -> Result<Pending<'a>> {
        let address = out.as_device_ptr().as_raw();
        self.fill_launch(generator, out.len(), |n, grid, seed, position| {
            let args = rng_fill_normal::Args::<f32> {
                out: DevPtrMut::new(address),
                n,
                seed,
                position,
                mean,
                stddev,
            };
            let entry = if log {
                rng_fill_log_normal::entry::<f32>()
            } else {
                rng_fill_normal::entry::<f32>()
            };
            // SAFETY: as `fill_raw_into`'s; the parameters are plain
            // numbers (checked finite by the callers).
            unsafe {
                self.launch(
                    entry,
                    LaunchConfig::linear(grid, FILL_BLOCK, FILL_SHARED_BYTES),
                    &args,
                )
            }
        })
    }

    /// The frame of every fill: reserves `n` values of the generator's
    /// stream (an error past [`HOST_STREAM_LIMIT`], the generator then
    /// unchanged), and unless `n` is 0 launches `launch(n, grid, seed,
    /// position)` on a grid of one thread per block of 4 stream values the
    /// fill touches (a partial one at each end), capped at what the device
    /// holds at once (the kernels loop grid-stride beyond). The generator
    /// moves on only if the launch succeeds.
    fn fill_launch<'a>(
        &'a self,
        generator: &mut Generator,
        n: usize,
        launch: impl FnOnce(usize, u32, u64, u64) -> Result<()>,
    ) -> Result<Pending<'a>> {
        self.ensure_alive()?;
        let mut next = *generator;
        let position = next.take(n)?;
        if n > 0 {
            let values = (position % 4) as usize + n;
            let grid = self.thread_grid(values.div_ceil(4));
            launch(n, grid, generator.seed, position)?;
        }
        *generator = next;
        Ok(Pending::new(self))
    }
}

#[cfg(test)]
mod tests {
    //! The CPU twin against cuRAND's own output (the fixture and the CUDA
    //! program that made it are in `tests/fixtures/curand/`).
    use super::*;

    include!("../../tests/fixtures/curand/records.rs");

    fn philox(r: &Record) -> Philox {
        Philox::new(r.triple.0, r.triple.1, r.triple.2)
    }

    fn f32s(words: &[u32]) -> Vec<f32> {
        words.iter().map(|&w| f32::from_bits(w)).collect()
    }

    fn f64s(words: &[u32]) -> Vec<f64> {
        words
            .chunks(2)
            .map(|w| f64::from_bits(w[0] as u64 | (w[1] as u64) << 32))
            .collect()
    }

    fn of<'a>(all: &'a [Record], what: &str) -> Vec<&'a Record> {
        let found: Vec<_> = all.iter().filter(|r| r.what == what).collect();
        assert!(found.len() >= 8, "{what}: {} records", found.len());
        found
    }

    #[test]
    fn integers_and_uniforms_equal_curand_bit_for_bit() {
        let all = records();
        for r in of(&all, "curand") {
            let mut p = philox(r);
            let ours: Vec<u32> = (0..16).map(|_| p.next_u32()).collect();
            assert_eq!(ours, r.words, "curand {:?}", r.triple);
        }
        for r in of(&all, "curand4") {
            let mut p = philox(r);
            let ours: Vec<u32> = (0..4).flat_map(|_| p.next_u32x4()).collect();
            assert_eq!(ours, r.words, "curand4 {:?}", r.triple);
        }
        for r in of(&all, "uniform") {
            let mut p = philox(r);
            let ours: Vec<u32> = (0..16).map(|_| p.uniform().to_bits()).collect();
            assert_eq!(ours, r.words, "uniform {:?}", r.triple);
        }
        for r in of(&all, "uniform4") {
            let mut p = philox(r);
            let ours: Vec<u32> = (0..4)
                .flat_map(|_| p.uniform4().map(f32::to_bits))
                .collect();
            assert_eq!(ours, r.words, "uniform4 {:?}", r.triple);
        }
        for r in of(&all, "uniform_double") {
            let mut p = philox(r);
            let ours: Vec<f64> = (0..8).map(|_| p.uniform_f64()).collect();
            assert_eq!(ours, f64s(&r.words), "uniform_double {:?}", r.triple);
        }
    }

    /// `|ours − theirs| ≤ NORMAL_CPU_TOLERANCE · radius + 2 ulp(theirs)`
    /// (the radius `sqrt(−2 ln u)` of the pair: the sine and cosine error
    /// is absolute, then scaled by it).
    fn close_normal(ours: f32, theirs: f32, radius: f32) -> bool {
        let ulp = f32::from_bits(theirs.abs().to_bits() + 1) - theirs.abs();
        (ours - theirs).abs() <= NORMAL_CPU_TOLERANCE * radius + 2.0 * ulp
    }

    /// The radii of the Box–Muller pairs drawn from `p`, one per pair,
    /// each from the first value of the pair's two.
    fn radius(x: u32) -> f32 {
        (-2.0 * uniform_of(x).ln()).sqrt()
    }

    #[test]
    fn normals_are_curands_within_the_sincos_tolerance() {
        let all = records();
        let mut worst = 0.0f32;
        for (what, per_draw) in [("normal", 1), ("normal2", 2), ("normal4", 4)] {
            for r in of(&all, what) {
                let (mut p, mut walk) = (philox(r), philox(r));
                let ours: Vec<f32> = match per_draw {
                    1 => (0..16).map(|_| p.normal()).collect(),
                    2 => (0..8).flat_map(|_| p.normal2()).collect(),
                    _ => (0..4).flat_map(|_| p.normal4()).collect(),
                };
                let theirs = f32s(&r.words);
                for pair in 0..8 {
                    let (x, _) = (walk.next_u32(), walk.next_u32());
                    let rad = radius(x);
                    for i in [2 * pair, 2 * pair + 1] {
                        assert!(
                            close_normal(ours[i], theirs[i], rad),
                            "{what} {:?} value {i}: {} against cuRAND's {}",
                            r.triple,
                            ours[i],
                            theirs[i]
                        );
                        worst = worst.max((ours[i] - theirs[i]).abs() / rad);
                    }
                }
            }
        }
        eprintln!("largest |CPU − cuRAND| / radius over the normals: {worst:e}");
    }

    #[test]
    fn f64_normals_and_log_normals_are_close_to_curands() {
        let all = records();
        for r in of(&all, "normal_double") {
            let (mut p, mut walk) = (philox(r), philox(r));
            let ours: Vec<f64> = (0..8).map(|_| p.normal_f64()).collect();
            let theirs = f64s(&r.words);
            for pair in 0..4 {
                let x = walk.next_u32x4();
                let u53 = ((x[0] as u64) ^ ((x[1] as u64) << 21)) as f64 * 2f64.powi(-53);
                let rad = (-2.0 * u53.max(f64::MIN_POSITIVE).ln()).sqrt();
                for i in [2 * pair, 2 * pair + 1] {
                    // Both sides accurate to a few ulp; the CPU's angle
                    // `v · π` is rounded once more than `sincospi`'s.
                    let bound = 1e-14 * rad + 4.0 * f64::EPSILON * theirs[i].abs();
                    assert!(
                        (ours[i] - theirs[i]).abs() <= bound,
                        "normal_double {:?} value {i}: {} against {}",
                        r.triple,
                        ours[i],
                        theirs[i]
                    );
                }
            }
        }
        for r in of(&all, "log_normal") {
            let (mut p, mut walk) = (philox(r), philox(r));
            let ours: Vec<f32> = (0..16).map(|_| p.log_normal(0.5, 1.5)).collect();
            let theirs = f32s(&r.words);
            for pair in 0..8 {
                let (x, _) = (walk.next_u32(), walk.next_u32());
                let rad = radius(x);
                for i in [2 * pair, 2 * pair + 1] {
                    // exp(0.5 + 1.5 z): the normal's error times 1.5,
                    // relative, plus `expf`'s few ulp on each side.
                    let rel = 1.5 * (NORMAL_CPU_TOLERANCE * rad + 1e-6) + 4.0 * f32::EPSILON;
                    assert!(
                        (ours[i] - theirs[i]).abs() <= rel * theirs[i],
                        "log_normal {:?} value {i}: {} against {}",
                        r.triple,
                        ours[i],
                        theirs[i]
                    );
                }
            }
        }
    }

    /// Knuth's method (`λ < 64`) and the normal approximation (`λ > 4000`)
    /// match cuRAND exactly; the rejection method between, built on the
    /// GPU's approximate instructions, is counted (and must agree on most
    /// draws).
    #[test]
    fn poisson_counts_match_curand_outside_the_approximate_method() {
        let all = records();
        let (mut between, mut differing) = (0, 0);
        for r in of(&all, "poisson") {
            let lambda = r.params[0];
            let mut p = philox(r);
            let ours: Vec<u32> = (0..16).map(|_| p.poisson(lambda)).collect();
            if !(64.0..=4000.0).contains(&lambda) {
                assert_eq!(ours, r.words, "poisson λ = {lambda} {:?}", r.triple);
            } else {
                between += ours.len();
                differing += ours.iter().zip(&r.words).filter(|(a, b)| a != b).count();
            }
        }
        eprintln!(
            "Poisson, 64 <= λ <= 4000: {differing} of {between} CPU draws differ from cuRAND's"
        );
        assert!(
            between > 0 && differing * 10 <= between,
            "{differing} of {between}"
        );
    }

    #[test]
    fn host_api_fills_follow_curands_layout() {
        let mut checked = 0;
        for (what, seed, offset, pairs) in host_records() {
            let generator = Generator::with_offset(seed, offset);
            for (i, word) in pairs {
                let value = generator.value(offset + i);
                let position = offset + i;
                let theirs = f32::from_bits(word);
                match what.as_str() {
                    "host_curand" => assert_eq!(value, word, "{what} {seed} {offset} {i}"),
                    "host_uniform" => {
                        assert_eq!(
                            uniform_of(value).to_bits(),
                            word,
                            "{what} {seed} {offset} {i}"
                        )
                    }
                    "host_normal" => {
                        let first = position & !1;
                        let rad = radius(generator.value(first));
                        let ours = generator.normal_value(position);
                        assert!(
                            close_normal(ours, theirs, rad),
                            "{what} {seed} {offset} {i}: {ours} against {theirs}"
                        );
                    }
                    "host_log_normal" => {
                        let first = position & !1;
                        let rad = radius(generator.value(first));
                        let ours = generator.log_normal_value(position, 0.5, 1.5);
                        // As for the device API's log-normals.
                        let rel = 1.5 * (NORMAL_CPU_TOLERANCE * rad + 1e-6) + 4.0 * f32::EPSILON;
                        assert!(
                            (ours - theirs).abs() <= rel * theirs,
                            "{what} {seed} {offset} {i}: {ours} against {theirs}"
                        );
                    }
                    _ => continue,
                }
                checked += 1;
            }
        }
        assert!(checked > 10_000, "{checked}");
    }

    /// Samples of 2^24 draws (2^20 in debug builds, where the tests run
    /// unoptimised); every bound below is derived from the sample size, at
    /// about five standard deviations (or a tail probability near 10^-6),
    /// so a correct generator fails about once in a million seeds. The
    /// seeds are fixed: the result is the same on every run.
    fn sample_size() -> usize {
        if cfg!(debug_assertions) {
            1 << 20
        } else {
            1 << 24
        }
    }

    /// Mean and (population) variance.
    fn moments(x: impl Iterator<Item = f64> + Clone) -> (f64, f64) {
        let n = x.clone().count() as f64;
        let mean = x.clone().sum::<f64>() / n;
        let var = x.map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
        (mean, var)
    }

    /// `|value − expected| <= 5 · sd`, with a message.
    fn within_5_sd(what: &str, value: f64, expected: f64, sd: f64) {
        assert!(
            (value - expected).abs() <= 5.0 * sd,
            "{what}: {value} against {expected} ± 5 · {sd:e}"
        );
    }

    #[test]
    fn uniforms_pass_moments_and_chi_squared_on_256_bins() {
        let n = sample_size();
        let mut p = Philox::new(0x1234_5678, 3, 17);
        let x: Vec<f32> = (0..n).map(|_| p.uniform()).collect();
        let nf = n as f64;
        let (mean, var) = moments(x.iter().map(|&v| v as f64));
        within_5_sd("uniform mean", mean, 0.5, (1.0 / 12.0 / nf).sqrt());
        // Var(s²) = (μ4 − σ⁴) / n, μ4 = 1/80 and σ⁴ = 1/144 for U(0, 1).
        within_5_sd(
            "uniform variance",
            var,
            1.0 / 12.0,
            ((1.0 / 80.0 - 1.0 / 144.0) / nf).sqrt(),
        );
        let mut bins = [0u64; 256];
        for &v in &x {
            // (0, 1]: 1.0 goes to the last bin.
            bins[((v * 256.0) as usize).min(255)] += 1;
        }
        let expected = nf / 256.0;
        let chi2: f64 = bins
            .iter()
            .map(|&c| (c as f64 - expected).powi(2) / expected)
            .sum();
        // χ² with 255 degrees of freedom; Wilson–Hilferty quantiles at
        // z = ±4.75 (two-sided tail about 2 · 10^-6).
        let k = 255.0f64;
        let quantile = |z: f64| k * (1.0 - 2.0 / (9.0 * k) + z * (2.0 / (9.0 * k)).sqrt()).powi(3);
        assert!(
            (quantile(-4.75)..=quantile(4.75)).contains(&chi2),
            "χ² = {chi2} outside [{}, {}]",
            quantile(-4.75),
            quantile(4.75)
        );
    }

    #[test]
    fn normals_pass_moments_and_kolmogorov_smirnov() {
        let n = sample_size();
        let mut p = Philox::new(42, 0, 0);
        let mut z: Vec<f32> = (0..n).map(|_| p.normal()).collect();
        let nf = n as f64;
        let (mean, var) = moments(z.iter().map(|&v| v as f64));
        within_5_sd("normal mean", mean, 0.0, (1.0 / nf).sqrt());
        // Var(s²) = (μ4 − σ⁴) / n = 2 / n for N(0, 1).
        within_5_sd("normal variance", var, 1.0, (2.0 / nf).sqrt());
        z.sort_by(f32::total_cmp);
        let phi = |x: f64| 0.5 * (1.0 + libm::erf(x / core::f64::consts::SQRT_2));
        let d = z
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                let f = phi(v as f64);
                (f - i as f64 / nf)
                    .abs()
                    .max(((i + 1) as f64 / nf - f).abs())
            })
            .fold(0.0, f64::max);
        // Kolmogorov's bound: P(D > t) <= 2 exp(−2 n t²); t for 10^-6.
        let t = ((2.0f64 / 1e-6).ln() / (2.0 * nf)).sqrt();
        assert!(d <= t, "Kolmogorov–Smirnov D = {d:e} above {t:e}");
    }

    #[test]
    fn log_normals_and_poisson_counts_have_their_moments() {
        let n = sample_size();
        let nf = n as f64;
        // Log-normal (0, 0.5): mean e^{σ²/2}, variance (e^{σ²} − 1) e^{σ²};
        // the sample mean's deviation is the variance's root over √n.
        let (mu, sigma) = (0.0f64, 0.5f64);
        let mut p = Philox::new(7, 1, 0);
        let x: Vec<f64> = (0..n)
            .map(|_| p.log_normal(mu as f32, sigma as f32) as f64)
            .collect();
        let (mean, _) = moments(x.iter().copied());
        let var = ((sigma * sigma).exp() - 1.0) * (2.0 * mu + sigma * sigma).exp();
        within_5_sd(
            "log-normal mean",
            mean,
            (mu + sigma * sigma / 2.0).exp(),
            (var / nf).sqrt(),
        );
        // Poisson: mean λ, variance λ; Var(s²) = (μ4 − σ⁴)/n = (λ + 2λ²)/n.
        // λ = 3.5 (Knuth), 1000 (the rejection method) and 5000 (normal
        // approximation), the last two on fewer draws.
        for (lambda, draws) in [(3.5, n), (1000.0, n / 16), (5000.0, n / 16)] {
            let mut p = Philox::new(99, 0, lambda as u64);
            let counts: Vec<f64> = (0..draws).map(|_| p.poisson(lambda) as f64).collect();
            let (mean, var) = moments(counts.iter().copied());
            let d = draws as f64;
            within_5_sd(
                &format!("Poisson({lambda}) mean"),
                mean,
                lambda,
                (lambda / d).sqrt(),
            );
            within_5_sd(
                &format!("Poisson({lambda}) variance"),
                var,
                lambda,
                ((lambda + 2.0 * lambda * lambda) / d).sqrt(),
            );
        }
    }

    /// The tables give each count `2^32 · P(X = k)` of the 2^32 values,
    /// rounded: within one value of the exact probability (within the
    /// mass below `base` for the first count), for small, medium and large
    /// `λ`; a tiny `λ` gives only zeros.
    #[test]
    fn poisson_tables_match_the_distribution_to_one_value_in_2_to_the_32() {
        for lambda in [0.01, 1.0, 3.5, 63.9, 1000.0, 123_456.7] {
            let (base, entries) = PoissonTable::build(lambda);
            assert!(entries.windows(2).all(|w| w[0] <= w[1]), "λ {lambda}");
            // ln P(k) by lgamma, independent of the table's recurrence.
            let pmf = |k: u32| {
                let k = k as f64;
                (k * lambda.ln() - lambda - libm::lgamma(k + 1.0)).exp()
            };
            let below: f64 = (0..base).map(pmf).sum();
            let mut previous = 0.0;
            for (i, &entry) in entries.iter().enumerate() {
                let k = base + i as u32;
                let drawn = (entry as f64 - previous) / 2f64.powi(32);
                let exact = pmf(k) + if i == 0 { below } else { 0.0 };
                // One value of rounding at each end, and f64's error in the
                // sums and logarithms (relative 1e-9 is far above it).
                assert!(
                    (drawn - exact).abs() <= 2.0 / 2f64.powi(32) + 1e-9 * exact,
                    "λ {lambda}, count {k}: {drawn:e} against {exact:e}"
                );
                previous = entry as f64;
            }
            let top = base + entries.len() as u32;
            let above = 1.0 - previous / 2f64.powi(32);
            assert!(
                (above - (pmf(top) + (top + 1..top + 200).map(pmf).sum::<f64>())).abs() <= 2e-9,
                "λ {lambda}: the last count's share {above:e}"
            );
        }
        // The guided search counts what a plain count counts, at and
        // around every entry and at scattered values.
        for lambda in [1e-12, 0.5, 3.5, 1000.0, 1e6] {
            let (base, entries) = PoissonTable::build(lambda);
            let len = entries.len();
            let (host, shift) = PoissonTable::with_guide(entries.clone());
            let probes = entries
                .iter()
                .flat_map(|&e| [e.wrapping_sub(1), e, e.wrapping_add(1)])
                .chain((0..4096u32).map(|i| i.wrapping_mul(0x9E37_79B9)))
                .chain([0, u32::MAX]);
            for x in probes {
                let plain = base + entries.iter().filter(|&&e| e <= x).count() as u32;
                let guided = poisson_of(x, base, len, shift, |i| host[i]);
                assert_eq!(guided, plain, "λ {lambda}, x {x:#x}");
            }
        }
        // Where the fill's tables leave shared memory (see
        // `fill_poisson_into`): between λ = 10^4 and 3 · 10^4.
        let words = |lambda| {
            PoissonTable::with_guide(PoissonTable::build(lambda).1)
                .0
                .len()
        };
        assert!(words(1e4) <= POISSON_SHARED_WORDS, "{}", words(1e4));
        assert!(words(3e4) > POISSON_SHARED_WORDS, "{}", words(3e4));
        let (base, entries) = PoissonTable::build(1e-12);
        assert_eq!((base, entries.len()), (0, 0));
        let (_, entries) = PoissonTable::build(POISSON_MAX_LAMBDA);
        assert!(entries.len() * 4 < 3 << 20, "{} entries", entries.len());
    }

    #[test]
    fn rand_core_traits_draw_the_same_stream() {
        use rand_core::{RngCore, SeedableRng};
        let mut a = Philox::seed_from_u64(1234);
        let mut b = Philox::new(1234, 0, 0);
        assert_eq!(RngCore::next_u32(&mut a), b.next_u32());
        let (lo, hi) = (b.next_u32() as u64, b.next_u32() as u64);
        assert_eq!(a.next_u64(), lo | hi << 32);
    }
}
