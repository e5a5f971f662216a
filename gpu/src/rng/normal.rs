//! Box–Muller: normals and log-normals of pairs of stream values, as
//! cuRAND computes them (`_curand_box_muller`), on the GPU and the CPU.

use super::math::{expf, fma, logf_normal, sincos, sqrtf};
use super::{Cached, Philox, TWO_POW_M32_2PI, uniform_of};

/// The pair of normals Box–Muller makes of two values
/// (`_curand_box_muller`): radius `sqrt(−2 ln u)` with `u` the uniform of
/// `x`, angle `v = y · 2^-32 · 2π + 2^-33 · 2π` (one fused multiply-add,
/// as nvcc compiles it), `[r sin v, r cos v]`. On the GPU bit for bit
/// cuRAND's; on the CPU within [`super::NORMAL_CPU_TOLERANCE`] times the
/// radius (the sine and cosine, see [`super::math`]).
#[inline(always)]
pub fn box_muller(x: u32, y: u32) -> [f32; 2] {
    // `u` is in [2^-33, 1]: normal, finite, positive.
    let u = uniform_of(x);
    let v = fma(y as f32, TWO_POW_M32_2PI, TWO_POW_M32_2PI / 2.0);
    let radius = sqrtf(-2.0 * logf_normal(u));
    let (sin, cos) = sincos(v);
    [sin * radius, cos * radius]
}

/// `z · stddev + mean`, one rounding: a normal of mean `mean` and
/// deviation `stddev` from a standard one (cuRAND's host-API fills).
#[inline(always)]
pub fn scaled(z: f32, mean: f32, stddev: f32) -> f32 {
    fma(stddev, z, mean)
}

/// `exp(mean + stddev · z)` (`curand_log_normal`: the sum fused, then
/// [`expf`]).
#[inline(always)]
pub fn log_normal_of(z: f32, mean: f32, stddev: f32) -> f32 {
    expf(scaled(z, mean, stddev))
}

impl Philox {
    /// A standard normal `f32` (`curand_normal`): each Box–Muller pair
    /// serves two calls.
    #[inline(always)]
    pub fn normal(&mut self) -> f32 {
        if let Cached::Normal(z) = self.cached {
            self.cached = Cached::None;
            return z;
        }
        let (x, y) = (self.next_u32(), self.next_u32());
        let [z0, z1] = box_muller(x, y);
        self.cached = Cached::Normal(z1);
        z0
    }

    /// Two standard normals of the next two values (`curand_normal2`; the
    /// cache is neither read nor written).
    #[inline(always)]
    pub fn normal2(&mut self) -> [f32; 2] {
        let (x, y) = (self.next_u32(), self.next_u32());
        box_muller(x, y)
    }

    /// Four standard normals of the next four values (`curand_normal4`).
    #[inline(always)]
    pub fn normal4(&mut self) -> [f32; 4] {
        let x = self.next_u32x4();
        let [a, b] = box_muller(x[0], x[1]);
        let [c, d] = box_muller(x[2], x[3]);
        [a, b, c, d]
    }

    /// `exp(mean + stddev · z)` for a standard normal `z`
    /// (`curand_log_normal`): each pair serves two calls (the second value
    /// is computed with the first call's `mean` and `stddev`, as cuRAND
    /// does).
    #[inline(always)]
    pub fn log_normal(&mut self, mean: f32, stddev: f32) -> f32 {
        if let Cached::LogNormal(value) = self.cached {
            self.cached = Cached::None;
            return value;
        }
        let (x, y) = (self.next_u32(), self.next_u32());
        let [z0, z1] = box_muller(x, y);
        self.cached = Cached::LogNormal(log_normal_of(z1, mean, stddev));
        log_normal_of(z0, mean, stddev)
    }
}

/// The `f64` draws, on the CPU only: cuRAND's `f64` Box–Muller takes the
/// GPU's double-precision `log` and `sincospi`, which this crate does not
/// reproduce on the device yet.
#[cfg(not(target_arch = "nvptx64"))]
mod double {
    use super::super::{Philox, TWO_POW_M53};

    /// The pair of `f64` normals of four values
    /// (`_curand_box_muller_double`): two 53-bit uniforms.
    pub fn box_muller_f64(x: [u32; 4]) -> [f64; 2] {
        let u53 = |lo: u32, hi: u32| (lo as u64) ^ ((hi as u64) << 21);
        let u = u53(x[0], x[1]) as f64 * TWO_POW_M53 + TWO_POW_M53 / 2.0;
        let v = u53(x[2], x[3]) as f64 * (TWO_POW_M53 * 2.0) + TWO_POW_M53;
        let radius = libm::sqrt(-2.0 * libm::log(u));
        let (sin, cos) = libm::sincos(v * core::f64::consts::PI);
        [sin * radius, cos * radius]
    }

    impl Philox {
        /// A standard normal `f64` (`curand_normal_double`): each pair, of
        /// four values, serves two calls.
        pub fn normal_f64(&mut self) -> f64 {
            if let Some(z) = self.cached_f64.take() {
                return z;
            }
            let [z0, z1] = box_muller_f64(self.next_u32x4());
            self.cached_f64 = Some(z1);
            z0
        }
    }
}

#[cfg(not(target_arch = "nvptx64"))]
pub use double::box_muller_f64;
