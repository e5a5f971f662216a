//! The single-precision functions cuRAND's draws are made of, as nvcc 13
//! compiles them (read from the PTX it emits for `logf`, `expf`, `sqrtf`
//! and `__sincosf`), so that a kernel of this crate computes what a CUDA
//! kernel calling cuRAND computes, bit for bit:
//!
//! * [`logf`]: nvcc's `logf` is fused multiply-adds and integer steps only,
//!   so this twin is exact on every target, the CPU included;
//! * [`sqrtf`]: the correctly rounded root on both sides;
//! * [`expf`]: nvcc's `expf` ends with the GPU's approximate `ex2`; the
//!   twin issues the same instructions on the GPU, and the CPU uses an
//!   accurate `expf` instead (within 2 ulp of the GPU's);
//! * [`sincos`]: cuRAND's Box–Muller takes `__sincosf`, the GPU's
//!   approximate `sin` and `cos` instructions (absolute error about
//!   2^-21); the CPU computes them accurately instead.

/// `a · b + c`, rounded once (`fmaf`; what nvcc makes of `a * b + c`).
#[inline(always)]
pub fn fma(a: f32, b: f32, c: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    return crate::prim::fma_f32(a, b, c);
    #[cfg(not(target_arch = "nvptx64"))]
    return libm::fmaf(a, b, c);
}

/// The coefficients of nvcc's `logf` polynomial in `f = m − 1` (highest
/// degree first), `m` the mantissa reduced to about `[2/3, 4/3)`.
const LOG_POLY: [u32; 9] = [
    0xBE05_5027,
    0x3E10_39F6,
    0xBDF8_CDCC,
    0x3E0F_2955,
    0xBE2A_D8B9,
    0x3E4C_ED0B,
    0xBE7F_FF22,
    0x3EAA_AA78,
    0xBF00_0000,
];

/// nvcc's `logf` (non-`ftz`), operation for operation: scale a subnormal
/// `a` by 2^23, split `a = 2^e · m` with `m` in about `[2/3, 4/3)`, add
/// `e · ln 2` to a degree-10 polynomial of `m − 1`. Exact (the same bits)
/// on the GPU and on the CPU. `logf(0) = −∞`, negative `a` gives NaN,
/// `logf(+∞) = +∞`.
#[inline(always)]
pub fn logf(a: f32) -> f32 {
    let small = a < f32::MIN_POSITIVE;
    let m = if small { a * 8_388_608.0 } else { a };
    let bias = if small { -23.0 } else { 0.0 };
    let bits = m.to_bits();
    let mut r = log_core(m, bias);
    if bits >= 0x7F80_0000 {
        // +∞, NaN and negative inputs (their sign bit makes `bits` large).
        r = fma(m, f32::INFINITY, f32::INFINITY);
    }
    if m == 0.0 { f32::NEG_INFINITY } else { r }
}

/// [`logf`] of a normal, finite, positive `a` (at least
/// `f32::MIN_POSITIVE`): the same bits without the special cases, which
/// Box–Muller's `u`, in `[2^-33, 1]`, never meets.
#[inline(always)]
pub fn logf_normal(a: f32) -> f32 {
    log_core(a, 0.0)
}

/// The body of [`logf`] for an `m` that is not subnormal: `bias` is the
/// exponent already taken out of it.
#[inline(always)]
fn log_core(m: f32, bias: f32) -> f32 {
    let bits = m.to_bits();
    // The exponent that brings m into [0.666…, 1.333…): 0x3F2AAAAB is 2/3.
    let e = (bits.wrapping_sub(0x3F2A_AAAB) & 0xFF80_0000) as i32;
    let reduced = f32::from_bits(bits.wrapping_sub(e as u32));
    let exponent = fma(e as f32, 1.192_092_9e-7, bias);
    let f = reduced - 1.0;
    let mut p = fma(f32::from_bits(LOG_POLY[0]), f, f32::from_bits(LOG_POLY[1]));
    for c in &LOG_POLY[2..] {
        p = fma(p, f, f32::from_bits(*c));
    }
    let q = fma(p * f, f, f);
    fma(exponent, f32::from_bits(0x3F31_7218), q)
}

/// The correctly rounded square root.
#[inline(always)]
pub fn sqrtf(a: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    return crate::prim::sqrt_rn(a);
    #[cfg(not(target_arch = "nvptx64"))]
    return libm::sqrtf(a);
}

/// `e^x` as nvcc's `expf`: on the GPU its very instructions (an exponent
/// split in fused multiply-adds, one rounded toward −∞, then the
/// approximate `ex2.approx.ftz` and a scaling by a power of two); on the
/// CPU an accurate `expf`, within 2 ulp of the GPU's.
#[inline(always)]
pub fn expf(x: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        use crate::prim::{exp2_approx_ftz, fma_rm_f32, fma_sat_f32};
        // Clamped to [0, 1], NaN to 0, in the FMA itself, as nvcc does.
        let t = fma_sat_f32(x, f32::from_bits(0x3BBB_989D), 0.5);
        let j = fma_rm_f32(t, 252.0, f32::from_bits(0x4B40_0001));
        let k = j + f32::from_bits(0xCB40_007F);
        let hi = fma(x, f32::from_bits(0x3FB8_AA3B), -k);
        let lo = fma(x, f32::from_bits(0x32A5_7060), hi);
        let scale = f32::from_bits(j.to_bits() << 23);
        exp2_approx_ftz(lo) * scale
    }
    #[cfg(not(target_arch = "nvptx64"))]
    return libm::expf(x);
}

/// `(sin v, cos v)`: `__sincosf` on the GPU (the approximate
/// instructions, as cuRAND), accurate on the CPU.
#[inline(always)]
pub fn sincos(v: f32) -> (f32, f32) {
    #[cfg(target_arch = "nvptx64")]
    return (crate::prim::sin_approx(v), crate::prim::cos_approx(v));
    #[cfg(not(target_arch = "nvptx64"))]
    return libm::sincosf(v);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// nvcc's `logf` is faithful (within 1 ulp of the true logarithm); so
    /// must the twin be, everywhere it is sampled.
    #[test]
    fn logf_is_within_one_ulp_of_the_logarithm() {
        let mut worst = 0.0f64;
        let mut bits = 1u32;
        while bits < 0x7F80_0000 {
            let a = f32::from_bits(bits);
            let ours = logf(a) as f64;
            let exact = (a as f64).ln();
            let ulp = (exact as f32).abs().max(f32::MIN_POSITIVE);
            let ulp = f32::from_bits(ulp.to_bits() + 1) as f64 - ulp as f64;
            worst = worst.max((ours - exact).abs() / ulp);
            bits += 9973;
        }
        assert!(worst < 1.0, "worst error {worst} ulp");
        let mut bits = 0x0080_0000u32;
        while bits < 0x7F80_0000 {
            let a = f32::from_bits(bits);
            assert_eq!(logf_normal(a).to_bits(), logf(a).to_bits(), "{a:e}");
            bits += 7919;
        }
        assert_eq!(logf(0.0), f32::NEG_INFINITY);
        assert_eq!(logf(1.0), 0.0);
        assert_eq!(logf(f32::INFINITY), f32::INFINITY);
        assert!(logf(-1.0).is_nan() && logf(f32::NAN).is_nan());
    }
}
