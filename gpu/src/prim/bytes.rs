//! Byte- and bit-level integer instructions: `prmt`, `dp4a` and `lop3`.

use core::arch::asm;

/// `prmt.b32`: byte `i` of the result is byte `selector[4i+3:4i]` of the
/// eight bytes `{b, a}` (0-3 from `a`, 4-7 from `b`). One instruction.
#[inline(always)]
#[doc(hidden)]
pub fn byte_perm(a: u32, b: u32, selector: u32) -> u32 {
    let d: u32;
    // SAFETY: register-only instruction.
    unsafe {
        asm!("prmt.b32 {d}, {a}, {b}, {s};", d = out(reg32) d, a = in(reg32) a, b = in(reg32) b,
             s = in(reg32) selector, options(pure, nomem, nostack));
    }
    d
}

/// `dp4a.u32.u32`: `c + Σ a.byte[i] * b.byte[i]`. With `b = 0x01010101` it
/// sums the four bytes of `a` in one instruction (sm_61 and newer).
#[inline(always)]
#[doc(hidden)]
pub fn dp4a(a: u32, b: u32, c: u32) -> u32 {
    let d: u32;
    // SAFETY: register-only instruction.
    unsafe {
        asm!("dp4a.u32.u32 {d}, {a}, {b}, {c};", d = out(reg32) d, a = in(reg32) a, b = in(reg32) b,
             c = in(reg32) c, options(pure, nomem, nostack));
    }
    d
}

/// `a & b & c` as one `lop3.b32`: a chain of masks and-ed as a tree of
/// these is a third as deep as one `and` after another (each waits for the
/// one before it).
#[inline(always)]
#[doc(hidden)]
pub fn and3(a: u32, b: u32, c: u32) -> u32 {
    let d: u32;
    // SAFETY: register-only instruction.
    unsafe {
        asm!("lop3.b32 {d}, {a}, {b}, {c}, 0x80;", d = out(reg32) d, a = in(reg32) a, b = in(reg32) b,
             c = in(reg32) c, options(pure, nomem, nostack));
    }
    d
}
