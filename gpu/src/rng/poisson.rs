//! cuRAND's Poisson draws (`curand_poisson`): Knuth's method on both
//! sides, the two methods for large `λ` on the CPU.

use super::Philox;
use super::math::expf;

impl Philox {
    /// A Poisson-distributed count of mean `lambda` (`curand_poisson`);
    /// how many values it draws depends on the method and on the draws.
    /// Three methods by `λ`, as cuRAND chooses them:
    ///
    /// * `λ < 64`: Knuth's — multiply uniforms into `e^λ` until the product
    ///   is at most 1. On the GPU bit for bit cuRAND's (its `expf` is
    ///   nvcc's); on the CPU too wherever the accurate `expf(λ)` equals the
    ///   GPU's (the count changes only if a product lands between the two);
    /// * `λ > 4000`: `⌊√λ · z + λ + 0.5⌋` of an `f64` normal `z`; the CPU's
    ///   `z` is within a few ulp of cuRAND's, so the integer differs only
    ///   when the sum lies that close to a half;
    /// * between: a rejection method built on approximations of the
    ///   incomplete gamma function that cuRAND evaluates with the GPU's
    ///   approximate `rsqrt`, `ex2`, `lg2` and `rcp` instructions. The CPU
    ///   evaluates the same formulas with accurate functions (what cuRAND's
    ///   own host-side code does), so an accepted value or a rejection can
    ///   differ when a value falls near a boundary, and the draws after a
    ///   differing rejection follow a shifted stream. Against cuRAND's own
    ///   output (the golden vectors: λ = 64, 100, 1000, 3999, 4000, 8 seeds
    ///   and positions, 640 draws) no draw differed.
    ///
    /// On the GPU only Knuth's method exists so far (the other two need
    /// twins of the GPU's double-precision `log` and `sincospi`): there
    /// `λ ≥ 64` traps, which fails the launch with an error.
    ///
    /// `lambda` should be finite and positive: 0 and negative values give
    /// 0 (as cuRAND's Knuth method does), NaN gives 0 (cuRAND would never
    /// return), +∞ gives `u32::MAX` (on the CPU).
    #[inline(always)]
    pub fn poisson(&mut self, lambda: f64) -> u32 {
        if lambda.is_nan() {
            return 0;
        }
        if lambda < 64.0 {
            return self.poisson_knuth(lambda as f32);
        }
        #[cfg(target_arch = "nvptx64")]
        crate::prim::trap();
        #[cfg(not(target_arch = "nvptx64"))]
        self.poisson_large(lambda)
    }

    /// Knuth's method (`_curand_poisson_knuth`): the product of uniforms
    /// falls below `e^-λ`.
    #[inline(always)]
    fn poisson_knuth(&mut self, lambda: f32) -> u32 {
        let mut p = expf(lambda);
        let mut k = 0u32;
        loop {
            k += 1;
            p *= self.uniform();
            if p <= 1.0 {
                return k - 1;
            }
        }
    }
}

/// The methods for `λ ≥ 64`, on the CPU.
#[cfg(not(target_arch = "nvptx64"))]
mod large {
    use super::Philox;
    use libm::{fmaf, sqrtf};

    /// `lgamma(a)` for a positive integer `a`, as cuRAND approximates it
    /// (`__cr_lgamma_integer`: a table to 9, Stirling's series beyond, its
    /// polynomial in fused multiply-adds as the GPU evaluates it).
    fn lgamma_integer(a: i32) -> f64 {
        // cuRAND's literals, digit for digit.
        #[allow(
            clippy::excessive_precision,
            clippy::approx_constant,
            reason = "cuRAND's literals, to round as they do (one of them is ln 2)"
        )]
        const TABLE: [f64; 9] = [
            0.000000000000000000e-1,
            0.000000000000000000e-1,
            6.931471805599453094e-1,
            1.791759469228055001e0,
            3.178053830347945620e0,
            4.787491742782045994e0,
            6.579251212010100995e0,
            8.525161361065414300e0,
            1.060460290274525023e1,
        ];
        let fa = (a as f32).abs() as f64;
        if a <= 8 {
            return TABLE[(fa as usize).clamp(1, 9) - 1];
        }
        let s = 1.0 / fa;
        let t = s * s;
        let mut sum = -0.1633436431e-2;
        #[allow(
            clippy::excessive_precision,
            reason = "cuRAND's literals, to round as they do"
        )]
        for c in [
            0.83645878922e-3,
            -0.5951896861197e-3,
            0.793650576493454e-3,
            -0.277777777735865004e-2,
            0.833333333333331018375e-1,
        ] {
            sum = libm::fma(sum, t, c);
        }
        sum = libm::fma(sum, s, 0.918938533204672);
        let s = 0.5 * libm::log(fa) * (fa - 0.5);
        let t = s - fa;
        t + (s + sum)
    }

    /// The constants of cuRAND's incomplete-gamma approximation (its
    /// literals, digit for digit, rounded to `f32` as C rounds them).
    #[allow(
        clippy::excessive_precision,
        reason = "cuRAND's literals, to round as they do"
    )]
    const MA: [f32; 3] = [
        1.43248035075540910,
        0.12400979329415655,
        0.00025361074907033,
    ];
    #[allow(
        clippy::excessive_precision,
        reason = "cuRAND's literals, to round as they do"
    )]
    const MB: [f32; 3] = [
        0.21096734870196546,
        1.97381164089999420,
        0.94201734077887530,
    ];

    /// `(α, β)` of the approximation for `a`.
    fn alpha_beta(a: f32) -> (f32, f32) {
        let alpha = fmaf(MA[0], 1.0 / sqrtf(a - MA[1]), MA[2]);
        let beta = fmaf(MB[0], 1.0 / sqrtf(a - MB[1]), MB[2]);
        (alpha, beta)
    }

    /// The regularised incomplete gamma function, approximated
    /// (`__cr_pgammainc`).
    fn pgammainc(a: f32, x: f32) -> f32 {
        let (alpha, beta) = alpha_beta(a);
        let t = fmaf(alpha, a - x, -beta);
        let t = 1.0 + libm::expf(t);
        1.0 / (t * t)
    }

    /// Its inverse in `x` (`__cr_pgammaincinv`).
    fn pgammaincinv(a: f32, y: f32) -> f32 {
        let (alpha, beta) = alpha_beta(a);
        let t = libm::logf(1.0 / sqrtf(y) - 1.0);
        fmaf(-(beta + t), 1.0 / alpha, a)
    }

    impl Philox {
        /// `λ ≥ 64` (see [`Philox::poisson`]).
        pub(super) fn poisson_large(&mut self, lambda: f64) -> u32 {
            if lambda > 4000.0 {
                // `as` saturates where C's conversion would be undefined.
                return (libm::fma(libm::sqrt(lambda), self.normal_f64(), lambda) + 0.5) as u32;
            }
            let lambda = lambda as f32;
            let log_lambda = libm::logf(lambda);
            loop {
                let y = self.uniform();
                let x = libm::floorf(pgammaincinv(lambda, y));
                let z = self.uniform();
                let v = (pgammainc(lambda, x + 1.0) - pgammainc(lambda, x)) * 1.3;
                let z = z * v;
                let exponent =
                    fmaf(x, log_lambda, -lambda) - lgamma_integer((1.0 + x) as i32) as f32;
                let t = libm::expf(exponent);
                if z < t && v >= 1e-20 {
                    return x as u32;
                }
            }
        }
    }
}
