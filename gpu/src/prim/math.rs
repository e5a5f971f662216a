//! Integer multiply-high and widening multiplies, the fused multiply-add, and
//! the fast transcendental approximations of the special function units
//! (CUDA's `__sinf` family).
//!
//! The integer instructions are what a counter-based generator such as
//! cuRAND's Philox4x32-10 is made of: each round takes the high and low halves
//! of two 32×32-bit products. The approximations turn its uniform outputs into
//! normals (Box-Muller: a logarithm, a square root, a sine and a cosine).
//!
//! Everything here is register-only and has no preconditions: the functions
//! are safe, and the compiler may reorder, combine or drop them like
//! arithmetic.

use core::arch::asm;

/// `mul.hi.u32`: the high 32 bits of the 64-bit product `a * b`
/// (`__umulhi`). One instruction; a Philox round needs two.
#[inline(always)]
#[doc(hidden)]
pub fn mul_hi_u32(a: u32, b: u32) -> u32 {
    let d: u32;
    // SAFETY: register-only instruction.
    unsafe {
        asm!("mul.hi.u32 {d}, {a}, {b};", d = out(reg32) d, a = in(reg32) a, b = in(reg32) b,
             options(pure, nomem, nostack));
    }
    d
}

/// `min.NaN.f32` (sm_80+): the smaller of `a` and `b`, NaN (the canonical
/// one) if either is NaN. One instruction where the same in plain Rust
/// (`a.is_nan() || a < b`) takes two compares and a select.
#[cfg(target_feature = "sm_80")]
#[inline(always)]
#[doc(hidden)]
pub fn min_nan_f32(a: f32, b: f32) -> f32 {
    let d: f32;
    // SAFETY: register-only instruction.
    unsafe {
        asm!("min.NaN.f32 {d}, {a}, {b};", d = out(reg32) d, a = in(reg32) a, b = in(reg32) b,
             options(pure, nomem, nostack));
    }
    d
}

/// `max.NaN.f32` (sm_80+): as [`min_nan_f32`], the larger.
#[cfg(target_feature = "sm_80")]
#[inline(always)]
#[doc(hidden)]
pub fn max_nan_f32(a: f32, b: f32) -> f32 {
    let d: f32;
    // SAFETY: register-only instruction.
    unsafe {
        asm!("max.NaN.f32 {d}, {a}, {b};", d = out(reg32) d, a = in(reg32) a, b = in(reg32) b,
             options(pure, nomem, nostack));
    }
    d
}

/// `mul.wide.u32`: the full 64-bit product `a * b`, both halves of a
/// 32×32-bit multiply in one instruction (split it with `as u32` and `>> 32`).
#[inline(always)]
#[doc(hidden)]
pub fn mul_wide_u32(a: u32, b: u32) -> u64 {
    let d: u64;
    // SAFETY: register-only instruction.
    unsafe {
        asm!("mul.wide.u32 {d}, {a}, {b};", d = out(reg64) d, a = in(reg32) a, b = in(reg32) b,
             options(pure, nomem, nostack));
    }
    d
}

/// `mul.wide.u32` as its `(low, high)` 32-bit halves: one instruction, and
/// what follows stays 32-bit arithmetic (a `u64` product invites LLVM to
/// widen later XORs and additions to 64 bits, two instructions each here).
#[inline(always)]
#[doc(hidden)]
pub fn mul_wide_parts_u32(a: u32, b: u32) -> (u32, u32) {
    let (lo, hi): (u32, u32);
    // SAFETY: register-only instructions in a scope of their own.
    unsafe {
        asm!("{{ .reg .b64 t; mul.wide.u32 t, {a}, {b}; mov.b64 {{{lo}, {hi}}}, t; }}",
             lo = out(reg32) lo, hi = out(reg32) hi, a = in(reg32) a, b = in(reg32) b,
             options(pure, nomem, nostack));
    }
    (lo, hi)
}

/// `mad.wide.u32`: `a * b + c` with the 32×32-bit product taken in full
/// 64 bits (the sum wraps modulo 2^64). The step of multi-word arithmetic.
#[inline(always)]
#[doc(hidden)]
pub fn mad_wide_u32(a: u32, b: u32, c: u64) -> u64 {
    let d: u64;
    // SAFETY: register-only instruction.
    unsafe {
        asm!("mad.wide.u32 {d}, {a}, {b}, {c};", d = out(reg64) d, a = in(reg32) a, b = in(reg32) b,
             c = in(reg64) c, options(pure, nomem, nostack));
    }
    d
}

/// `fma.rn.f32`: `a * b + c` rounded once (`fmaf`, what nvcc makes of
/// `a * b + c` by default). rustc never fuses a multiplication and an
/// addition by itself, so a kernel that wants one instruction instead of two
/// roundings says so with this.
#[inline(always)]
#[doc(hidden)]
pub fn fma_f32(a: f32, b: f32, c: f32) -> f32 {
    core::intrinsics::fmaf32(a, b, c)
}

/// `fma.rm.f32`: `a * b + c` rounded once, toward minus infinity. nvcc's
/// `expf` takes the integer part of its exponent this way.
#[inline(always)]
#[doc(hidden)]
pub fn fma_rm_f32(a: f32, b: f32, c: f32) -> f32 {
    let d: f32;
    // SAFETY: register-only instruction.
    unsafe {
        asm!("fma.rm.f32 {d}, {a}, {b}, {c};", d = out(reg32) d, a = in(reg32) a, b = in(reg32) b,
             c = in(reg32) c, options(pure, nomem, nostack));
    }
    d
}

/// `fma.rn.sat.f32`: `a * b + c` rounded once, then clamped to `[0, 1]`
/// (NaN to 0), in one instruction; the same in plain Rust takes a compare,
/// a minimum and a select.
#[inline(always)]
#[doc(hidden)]
pub fn fma_sat_f32(a: f32, b: f32, c: f32) -> f32 {
    let d: f32;
    // SAFETY: register-only instruction.
    unsafe {
        asm!("fma.rn.sat.f32 {d}, {a}, {b}, {c};", d = out(reg32) d, a = in(reg32) a, b = in(reg32) b,
             c = in(reg32) c, options(pure, nomem, nostack));
    }
    d
}

macro_rules! approx_f32 {
    ($(#[$m:meta])* $name:ident, $instruction:literal) => {
        $(#[$m])*
        #[inline(always)]
        pub fn $name(x: f32) -> f32 {
            let d: f32;
            // SAFETY: register-only instruction.
            unsafe {
                asm!(concat!($instruction, " {d}, {x};"), d = out(reg32) d, x = in(reg32) x,
                     options(pure, nomem, nostack));
            }
            d
        }
    };
}

approx_f32!(
    /// `sin.approx.f32`: sine of `x` radians (`__sinf`), one special-function
    /// instruction instead of `sinf`'s range reduction and polynomial.
    ///
    /// The PTX ISA bounds its absolute error by 2^-20.5 for `x` in
    /// [-2π, 2π] and by 2^-14.7 in [-100π, 100π]; outside that range there is
    /// no guarantee. Keep the argument small: Box-Muller's angle `2π·u` with
    /// `u` in (0, 1] is, and cuRAND's Box-Muller takes its sine and cosine
    /// exactly this way (`__sincosf`). `±inf` gives NaN; subnormals are kept
    /// (no `.ftz`).
    sin_approx, "sin.approx.f32"
);

approx_f32!(
    /// `cos.approx.f32`: cosine of `x` radians (`__cosf`). The same error
    /// bounds as [`sin_approx`]: 2^-20.5 absolute in [-2π, 2π], 2^-14.7 in
    /// [-100π, 100π], none beyond. `±inf` gives NaN.
    cos_approx, "cos.approx.f32"
);

approx_f32!(
    /// `lg2.approx.f32`: base-2 logarithm (`__log2f`). The PTX ISA bounds the
    /// error by 2^-22 absolute for `x` in (0.5, 2) and by 2^-22 relative for
    /// other positive finite `x`. `±0` gives `-inf`, negative `x` NaN,
    /// `+inf` `+inf`.
    log2_approx, "lg2.approx.f32"
);

approx_f32!(
    /// `ex2.approx.f32`: `2^x` (`exp2f`'s fast form), within 2 ulp of the
    /// correctly rounded result over the whole input range (PTX ISA).
    /// `-inf` gives `+0`, `+inf` `+inf`.
    exp2_approx, "ex2.approx.f32"
);

approx_f32!(
    /// `ex2.approx.ftz.f32`: [`exp2_approx`] with subnormal inputs and
    /// results flushed to zero, the form nvcc's `expf` ends with.
    exp2_approx_ftz, "ex2.approx.ftz.f32"
);

approx_f32!(
    /// `sqrt.rn.f32`: the correctly rounded square root (`sqrtf` under
    /// nvcc's default `-prec-sqrt=true`). Not an approximation: named here
    /// beside them because it is what their results are combined with.
    sqrt_rn, "sqrt.rn.f32"
);

/// Natural logarithm from the base-2 one: `ln x = log2(x) · ln 2`, i.e.
/// [`log2_approx`] and one multiplication by [`core::f32::consts::LN_2`],
/// the construction of CUDA's `__logf`, for which CUDA documents an absolute
/// error of at most 2^-21.41 for `x` in [0.5, 2] and 3 ulp elsewhere.
/// Special values as [`log2_approx`].
///
/// Not what cuRAND's Box-Muller uses for its radius: it takes the
/// full-precision `logf` (`curand_normal.h`), so a generator that must
/// reproduce cuRAND's normals bit for bit cannot use this.
#[inline(always)]
#[doc(hidden)]
pub fn ln_approx(x: f32) -> f32 {
    log2_approx(x) * core::f32::consts::LN_2
}

/// `e^x` from the base-2 exponential: `e^x = 2^(x · log2 e)`, i.e. one
/// multiplication by [`core::f32::consts::LOG2_E`] and [`exp2_approx`], the
/// construction of CUDA's `__expf`. Rounding the product to `f32` is an
/// error in the exponent proportional to `|x|`, so the relative error grows
/// with `|x|`: CUDA documents at most `2 + floor(|1.173 · x|)` ulp for
/// `__expf` (2 ulp near 0, about 100 ulp near overflow, `|x|` ≈ 88).
#[inline(always)]
#[doc(hidden)]
pub fn exp_approx(x: f32) -> f32 {
    exp2_approx(x * core::f32::consts::LOG2_E)
}
