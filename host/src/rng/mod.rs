//! Random numbers compatible with cuRAND's Philox4_32_10, bit for bit: the
//! generator of cuRAND's device API (`curand_init`, `curand`,
//! `curand_uniform`, `curand_normal`, `curand_log_normal`) as a CPU
//! generator, from the same `no_std` source the kernels use
//! ([`warpspeed_gpu::rng`]).
//!
//! The guide, [rng.md][guide], has the ladder (what each step changes and
//! why it is faster), the measured tables and the pitfalls.
//!
//! [guide]: https://github.com/warpspeed-rs/warpspeed/blob/main/docs/rng.md
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
//! use warpspeed::rng::Generator;
//! let ctx = warpspeed::Context::new(0)?;
//! let mut generator = Generator::new(1234); // curandSetPseudoRandomGeneratorSeed
//! let mut x = ctx.zeros::<f32>(1000)?;
//! ctx.fill_uniform_into(&mut generator, &mut x)?.wait()?; // curandGenerateUniform
//! assert_eq!(generator.position(), 1000);
//! # Ok(()) }
//! ```
//!
//! One file per part: this one holds the re-exports, [`Generator`] and the
//! stream fills (`u32`, uniforms, normals, log-normals); `poisson` holds
//! [`PoissonTable`] and the Poisson fill; `per_thread` the device API's
//! per-thread generators ([`Context::draws_into`], [`Context::pi_hits_into`]);
//! `tests` the CPU generator against cuRAND's fixture vectors.

mod per_thread;
mod poisson;
#[cfg(test)]
mod tests;

pub use per_thread::{Draw, DrawOutput, PerThread};
pub use poisson::{POISSON_MAX_LAMBDA, PoissonTable};
pub use warpspeed_gpu::rng::{
    HOST_STREAM_LIMIT, HOST_THREADS, NORMAL_CPU_TOLERANCE, PHILOX_M, PHILOX_W, POISSON_SEARCH,
    Philox, box_muller, box_muller_f64, host_value, in_quarter_disc, log_normal_of, normals_of,
    philox4x32_10, poisson_of, scaled, uniform_f64_of, uniform_of,
};

use crate::context::Context;
use crate::error::{Error, Result};
use crate::launch::{LaunchConfig, grid_stride_blocks};
use crate::memory::{Call, DeviceWrite, Pod};
use crate::pending::Pending;
use warpspeed_gpu::DevPtrMut;
use warpspeed_gpu::rng::{
    FILL_BLOCK, FILL_SHARED_BYTES, FillValue, rng_fill, rng_fill_log_normal, rng_fill_normal,
};

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
        out: &mut impl DeviceWrite<Elem = u32>,
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
        out: &mut impl DeviceWrite<Elem = f32>,
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
        out: &mut impl DeviceWrite<Elem = f32>,
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
        out: &mut impl DeviceWrite<Elem = f32>,
    ) -> Result<Pending<'a>> {
        check_normal(mean, stddev)?;
        self.fill_normal_kind(generator, mean, stddev, out, true)
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
        out: &mut impl DeviceWrite<Elem = T>,
    ) -> Result<Pending<'a>>
    where
        T: FillValue + Pod + warpspeed_gpu::KernelType,
    {
        self.ensure_alive()?;
        let out = out.view_mut();
        let mut call = Call::new(self);
        let address = call.write(&out)?;
        self.fill_launch(generator, out.len(), |n, grid, seed, position| {
            let args = rng_fill::Args::<T> {
                out: DevPtrMut::new(address),
                n,
                seed,
                position,
            };
            // SAFETY: `out` is a device slice of `n` elements, all written
            // and nothing else; `position + n <= HOST_STREAM_LIMIT`
            // (`fill_launch` checked); any 1D grid. `call` orders the
            // kernel after the other queues' uses of `out`, whose buffer
            // waits for it before it is freed.
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
        out: &mut impl DeviceWrite<Elem = f32>,
        log: bool,
    ) -> Result<Pending<'a>> {
        self.ensure_alive()?;
        let out = out.view_mut();
        let mut call = Call::new(self);
        let address = call.write(&out)?;
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
