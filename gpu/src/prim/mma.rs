//! Tensor cores through warp-wide `mma.sync` (sm_80 and newer), on TF32
//! operands.
//!
//! A TF32 value is an `f32` bit pattern whose 13 low mantissa bits are
//! zero (8 exponent bits, 10 mantissa bits): [`to_tf32`] rounds to one.
//! The fragments of `mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32`
//! are spread over the warp; with `g = lane / 4`, `t = lane % 4`:
//!
//! * `A` (16 × 8): `a[0] = A[g][t]`, `a[1] = A[g + 8][t]`,
//!   `a[2] = A[g][t + 4]`, `a[3] = A[g + 8][t + 4]`;
//! * `B` (8 × 8): `b[0] = B[t][g]`, `b[1] = B[t + 4][g]`;
//! * `C`, `D` (16 × 8): `d[0] = D[g][2t]`, `d[1] = D[g][2t + 1]`,
//!   `d[2] = D[g + 8][2t]`, `d[3] = D[g + 8][2t + 1]`.

#[cfg(target_feature = "sm_80")]
use core::arch::asm;

/// `x` rounded to the nearest TF32 value, ties away from zero
/// (`cvt.rna.tf32.f32`), as its bits.
#[cfg(target_feature = "sm_80")]
#[inline(always)]
#[doc(hidden)]
pub fn to_tf32(x: f32) -> u32 {
    let bits: u32;
    // SAFETY: a register-only conversion.
    unsafe {
        asm!(
            "cvt.rna.tf32.f32 {d}, {x};",
            d = out(reg32) bits,
            x = in(reg32) x,
            options(pure, nomem, nostack),
        );
    }
    bits
}

/// `lo` and `hi` rounded to the nearest BF16 values (ties to even), packed
/// as `lo | hi << 16` (`cvt.rn.bf16x2.f32`): a register of two BF16
/// operands of the tensor cores, the lower `k` in the low half.
#[cfg(target_feature = "sm_80")]
#[inline(always)]
#[doc(hidden)]
pub fn to_bf16x2(lo: f32, hi: f32) -> u32 {
    let bits: u32;
    // SAFETY: a register-only conversion.
    unsafe {
        asm!(
            "cvt.rn.bf16x2.f32 {d}, {hi}, {lo};",
            d = out(reg32) bits,
            hi = in(reg32) hi,
            lo = in(reg32) lo,
            options(pure, nomem, nostack),
        );
    }
    bits
}

/// `x` split for 3xTF32: `(big, small)` as bits, `big = tf32(x)` and
/// `small = tf32(x − big)`, which together carry about 21 of `x`'s 24
/// mantissa bits.
#[cfg(target_feature = "sm_80")]
#[inline(always)]
#[doc(hidden)]
pub fn split_tf32(x: f32) -> (u32, u32) {
    let big = to_tf32(x);
    (big, to_tf32(x - f32::from_bits(big)))
}

/// `x` split for 3xTF32 by truncation: `(big, small)` as bits, `big` = `x`
/// with its 13 low mantissa bits cleared and `small` = `x − big` (exact)
/// cleared the same way: `|x − big − small| < 2^-20 |x|`, against
/// [`split_tf32`]'s `2^-22`, for three integer and float operations where
/// `cvt.rna.tf32.f32` takes about five on sm_90 (it is emulated there: a
/// rounding add, a mask, and checks for NaN and ±∞). ±∞ and NaN give a
/// NaN `small`.
#[inline(always)]
#[doc(hidden)]
pub fn split_tf32_truncated(x: f32) -> (u32, u32) {
    const MASK: u32 = 0xffff_e000;
    let big = x.to_bits() & MASK;
    (big, (x - f32::from_bits(big)).to_bits() & MASK)
}

/// `d += A · B` on one 16 × 8 × 8 tile, fragments as in the module docs.
/// Every lane of the warp must call it together (converged), with TF32
/// operands.
#[cfg(target_feature = "sm_80")]
#[inline(always)]
#[doc(hidden)]
pub fn mma_tf32_16x8x8(d: &mut [f32; 4], a: [u32; 4], b: [u32; 2]) {
    // SAFETY: register-only; the warp-wide convergence the instruction
    // needs is the caller's contract (documented above); an unconverged
    // call is undefined in PTX, but every kernel of this crate calls it
    // outside divergent branches.
    unsafe {
        asm!(
            "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 \
             {{{d0}, {d1}, {d2}, {d3}}}, {{{a0}, {a1}, {a2}, {a3}}}, {{{b0}, {b1}}}, \
             {{{d0}, {d1}, {d2}, {d3}}};",
            d0 = inout(reg32) d[0],
            d1 = inout(reg32) d[1],
            d2 = inout(reg32) d[2],
            d3 = inout(reg32) d[3],
            a0 = in(reg32) a[0],
            a1 = in(reg32) a[1],
            a2 = in(reg32) a[2],
            a3 = in(reg32) a[3],
            b0 = in(reg32) b[0],
            b1 = in(reg32) b[1],
            options(pure, nomem, nostack),
        );
    }
}
