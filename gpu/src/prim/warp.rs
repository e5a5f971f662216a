//! Warp shuffles and votes (`shfl.sync`, `vote.sync`), full-warp mask.
//!
//! All lanes of the warp must execute the call (the mask names all 32).

use crate::scalar::Scalar;
use core::arch::asm;

/// Every lane of a warp.
#[doc(hidden)]
pub const FULL_MASK: u32 = 0xffff_ffff;

macro_rules! shuffle {
    ($(#[$m:meta])* $name:ident, $mode:literal, $clamp:literal) => {
        $(#[$m])*
        #[inline(always)]
        pub fn $name<T: Scalar>(value: T, lane_or_delta: u32) -> T {
            let out: u32;
            // SAFETY: a register-to-register exchange within the warp; no memory.
            unsafe {
                asm!(
                    concat!("shfl.sync.", $mode, ".b32 {o}, {v}, {d}, ", $clamp, ", 0xffffffff;"),
                    o = out(reg32) out,
                    v = in(reg32) value.to_bits(),
                    d = in(reg32) lane_or_delta,
                    options(nostack, nomem),
                );
            }
            T::from_bits(out)
        }
    };
}

shuffle!(/// `__shfl_up_sync`: the value of lane `lane - delta` (own value below lane 0).
    shfl_up, "up", "0x0");
shuffle!(/// `__shfl_down_sync`: the value of lane `lane + delta` (own value past the warp's end).
    shfl_down, "down", "0x1f");
shuffle!(/// `__shfl_xor_sync`: the value of lane `lane ^ mask`.
    shfl_xor, "bfly", "0x1f");
shuffle!(/// `__shfl_sync`: the value of lane `src`.
    shfl_idx, "idx", "0x1f");

/// `__ballot_sync`: bit `i` set where lane `i`'s predicate holds.
#[inline(always)]
#[doc(hidden)]
pub fn ballot(predicate: bool) -> u32 {
    let out: u32;
    // SAFETY: a warp vote on registers; no memory.
    unsafe {
        asm!(
            "{{ .reg .pred p; setp.ne.u32 p, {v}, 0; vote.sync.ballot.b32 {o}, p, 0xffffffff; }}",
            o = out(reg32) out,
            v = in(reg32) predicate as u32,
            options(nostack, nomem),
        );
    }
    out
}

/// `__any_sync`: whether the predicate holds on any lane.
#[inline(always)]
#[doc(hidden)]
pub fn vote_any(predicate: bool) -> bool {
    ballot(predicate) != 0
}

/// `__all_sync`: whether the predicate holds on every lane.
#[inline(always)]
#[doc(hidden)]
pub fn vote_all(predicate: bool) -> bool {
    ballot(predicate) == FULL_MASK
}

/// The lanes whose bit `bit` of `value` equals this lane's: one bit of a
/// warp-wide match, as a ballot of the bit, inverted where this lane's bit
/// is clear. ANDed over a label's bits, it gives the lanes holding the
/// same label, in fewer cycles than `match.any`.
#[inline(always)]
#[doc(hidden)]
pub fn match_bit(value: u32, bit: u32) -> u32 {
    let out: u32;
    // SAFETY: a warp vote on registers; no memory.
    unsafe {
        asm!(
            "{{ .reg .pred p; .reg .b32 t; and.b32 t, {v}, {m}; setp.ne.u32 p, t, 0; \
             vote.sync.ballot.b32 {o}, p, 0xffffffff; @!p not.b32 {o}, {o}; }}",
            o = out(reg32) out,
            v = in(reg32) value,
            m = in(reg32) 1u32 << bit,
            options(nostack, nomem),
        );
    }
    out
}

/// `%lanemask_lt`: bit `i` set for every lane `i` below this one.
#[inline(always)]
#[doc(hidden)]
pub fn lanemask_lt() -> u32 {
    let out: u32;
    // SAFETY: reads a special register.
    unsafe {
        asm!("mov.u32 {o}, %lanemask_lt;", o = out(reg32) out, options(nostack, nomem, pure));
    }
    out
}
