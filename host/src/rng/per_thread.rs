//! cuRAND's device API's per-thread generators (`curand_init` per thread):
//! [`Context::draws_into`] ([`PerThread`], [`Draw`]) and
//! [`Context::pi_hits_into`].

use super::*;
use crate::memory::{Call, DeviceWrite};

use warpspeed_gpu::rng::{rng_draws, rng_pi_hits};

/// Where [`Context::draws_into`]'s generators start: thread `t` is
/// `curand_init(seed, subsequence + t, offset)` (the sum wrapping at 2^64),
/// as cuRAND's device API is used.
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
pub trait DrawOutput: crate::Pod + private::Sealed {
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

impl Context {
    /// Enqueues the per-thread generators' kernel: `per_thread.threads`
    /// generators, thread `t` starting as `curand_init(seed, subsequence +
    /// t, offset)`, each making `out.len() / threads` draws of `draw` with
    /// the device API's functions on the GPU (bit for bit cuRAND's); draw
    /// `i` of thread `t` goes to `out[i · threads + t]`. Returns at once.
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
        out: &mut impl DeviceWrite<Elem = T>,
    ) -> Result<Pending<'a>> {
        self.ensure_alive()?;
        let out = out.view_mut();
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
        let mut call = Call::new(self);
        let address = call.write(&out)?;
        if len == 0 {
            return Ok(Pending::new(self));
        }
        let grid = self.thread_grid(threads);
        let args = rng_draws::Args::<u32> {
            out: DevPtrMut::new(address),
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
        // 64 (checked); any 1D grid; `call` orders the kernel for `out`.
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
        hits: &mut impl DeviceWrite<Elem = u32>,
    ) -> Result<Pending<'a>> {
        self.ensure_alive()?;
        let hits = hits.view_mut();
        let threads = hits.len();
        if threads == 0 {
            return Ok(Pending::new(self));
        }
        let mut call = Call::new(self);
        let address = call.write(&hits)?;
        let grid = self.thread_grid(threads);
        let args = rng_pi_hits::Args::<u32> {
            hits: DevPtrMut::new(address),
            threads,
            draws,
            seed,
        };
        // SAFETY: `hits` holds `threads` words, each written once by its
        // thread; any 1D grid; `call` orders the kernel for `hits`.
        unsafe {
            self.launch(
                rng_pi_hits::entry::<u32>(),
                LaunchConfig::linear(grid, FILL_BLOCK, 0),
                &args,
            )?
        };
        Ok(Pending::new(self))
    }
}
