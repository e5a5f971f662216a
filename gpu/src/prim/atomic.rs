//! Atomics on shared and global memory.
//!
//! Integer atomics go through `core::sync::atomic`, which the back end lowers
//! to `atom.shared.*` or `atom.global.*` once it knows the address space;
//! `core` has no `AtomicF32`, so float addition is inline PTX.

use core::arch::asm;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// `atomicAdd` on a `u32` in shared or global memory; returns the old value.
///
/// # Safety
/// `ptr` must be valid, 4-byte aligned and accessed only atomically by other
/// threads while they race with this one.
#[inline(always)]
#[doc(hidden)]
pub unsafe fn atomic_add_u32(ptr: *mut u32, value: u32) -> u32 {
    // SAFETY: the caller's contract makes `ptr` a valid, aligned location
    // that concurrent threads touch only atomically.
    unsafe { AtomicU32::from_ptr(ptr).fetch_add(value, Ordering::Relaxed) }
}

/// `atomicAdd` on a `u64` in shared or global memory; returns the old value.
///
/// # Safety
/// As [`atomic_add_u32`], for an 8-byte aligned location.
#[inline(always)]
#[doc(hidden)]
pub unsafe fn atomic_add_u64(ptr: *mut u64, value: u64) -> u64 {
    // SAFETY: the caller's contract makes `ptr` a valid, aligned location
    // that concurrent threads touch only atomically.
    unsafe { AtomicU64::from_ptr(ptr).fetch_add(value, Ordering::Relaxed) }
}

/// A ticket: `atomicAdd` of `value` to a `u32` in global memory with
/// acquire-release semantics at GPU scope (`atom.acq_rel.gpu`), returning
/// the old value. The release makes this thread's earlier writes visible to
/// any thread that later acquires the word; the acquire makes the writes
/// released by every earlier ticket visible to this thread (and, after a
/// block barrier, to its whole block). One instruction where
/// `__threadfence()` before a relaxed add and after it are two
/// sequentially consistent fences (`membar.gl`): the single-pass
/// reduction's ticket this way reads 2^18 elements in 5.9 instead of 6.4
/// µs and 2^24 in 27.0 instead of 27.8 on an H100 (same runs).
///
/// # Safety
/// As [`atomic_add_u32`], for a global-memory location.
#[inline(always)]
#[doc(hidden)]
pub unsafe fn ticket_u32(ptr: *mut u32, value: u32) -> u32 {
    let old: u32;
    // SAFETY: the caller guarantees a valid, aligned global location that
    // concurrent threads touch only atomically.
    unsafe {
        asm!(
            "atom.acq_rel.gpu.global.add.u32 {o}, [{p}], {v};",
            o = out(reg32) old,
            p = in(reg64) ptr,
            v = in(reg32) value,
            options(nostack),
        );
    }
    old
}

/// `atomicAdd` on an `f32` in shared or global memory; returns the old value.
///
/// # Safety
/// As [`atomic_add_u32`].
#[inline(always)]
#[doc(hidden)]
pub unsafe fn atomic_add_f32(ptr: *mut f32, value: f32) -> f32 {
    let old: u32;
    // SAFETY: the caller's contract makes `ptr` a valid, aligned location;
    // `atom.add.f32` on a generic address works for shared and global memory.
    unsafe {
        asm!(
            "atom.add.f32 {o}, [{p}], {v};",
            o = out(reg32) old,
            p = in(reg64) ptr,
            v = in(reg32) value.to_bits(),
            options(nostack),
        );
    }
    f32::from_bits(old)
}

/// `red.global.add.u32`: an atomic add to global memory whose old value is
/// not needed, so the SM does not wait for it.
///
/// # Safety
/// As [`atomic_add_u32`], for a global-memory location.
#[inline(always)]
#[doc(hidden)]
pub unsafe fn red_add_u32(ptr: *mut u32, value: u32) {
    // SAFETY: the caller guarantees a valid, aligned global location that
    // concurrent threads touch only atomically.
    unsafe {
        asm!("red.global.add.u32 [{p}], {v};", p = in(reg64) ptr, v = in(reg32) value, options(nostack))
    }
}

/// `red.global.add.f32`: as [`red_add_u32`] for `f32`.
///
/// # Safety
/// As [`atomic_add_u32`], for a global-memory location.
#[inline(always)]
#[doc(hidden)]
pub unsafe fn red_add_f32(ptr: *mut f32, value: f32) {
    // SAFETY: as `red_add_u32`.
    unsafe {
        asm!("red.global.add.f32 [{p}], {v};", p = in(reg64) ptr, v = in(reg32) value.to_bits(), options(nostack))
    }
}

/// `red.shared.add.u32`: an atomic add to shared memory whose old value is
/// not needed, at `address` in the shared window
/// ([`shared_address`](super::shared_address) of a pointer into the block's
/// shared memory): one instruction, with no generic-to-shared conversion
/// per add.
///
/// # Safety
/// `address` is 4-byte aligned and inside the block's shared memory, which
/// concurrent threads touch only atomically there.
#[inline(always)]
#[doc(hidden)]
pub unsafe fn red_shared_add_u32(address: u32, value: u32) {
    // SAFETY: the caller guarantees an aligned shared location.
    unsafe {
        asm!("red.shared.add.u32 [{a}], {v};", a = in(reg32) address, v = in(reg32) value, options(nostack))
    }
}

/// `atom.shared.add.u32`: an atomic add to shared memory at `address` in
/// the shared window ([`shared_address`](super::shared_address) of a
/// pointer into the block's shared memory), returning the old value.
///
/// # Safety
/// As [`red_shared_add_u32`].
#[inline(always)]
#[doc(hidden)]
pub unsafe fn atomic_shared_add_u32(address: u32, value: u32) -> u32 {
    let old: u32;
    // SAFETY: the caller guarantees an aligned shared location.
    unsafe {
        asm!("atom.shared.add.u32 {o}, [{a}], {v};", o = out(reg32) old, a = in(reg32) address,
             v = in(reg32) value, options(nostack))
    }
    old
}

/// [`atomic_shared_add_u32`] where `on`, else nothing (and 0): a
/// predicated atomic, with no branch around it.
///
/// # Safety
/// As [`red_shared_add_u32`], where `on`.
#[inline(always)]
#[doc(hidden)]
pub unsafe fn atomic_shared_add_u32_if(on: bool, address: u32, value: u32) -> u32 {
    let old: u32;
    // SAFETY: the caller guarantees an aligned shared location where `on`;
    // elsewhere the atomic is not executed.
    unsafe {
        asm!("{{ .reg .pred p; setp.ne.u32 p, {c}, 0; mov.u32 {o}, 0; \
              @p atom.shared.add.u32 {o}, [{a}], {v}; }}",
             o = out(reg32) old, c = in(reg32) on as u32, a = in(reg32) address,
             v = in(reg32) value, options(nostack))
    }
    old
}

macro_rules! ordered_access {
    ($(#[$m:meta])* load $name:ident: $t:ty, $reg:ident, $ptx:literal) => {
        $(#[$m])*
        ///
        /// # Safety
        /// `ptr` must be a valid, aligned global location that racing threads
        /// access only through these ordered loads and stores or atomics.
        #[inline(always)]
        #[doc(hidden)]
        pub unsafe fn $name(ptr: *const $t) -> $t {
            let v: $t;
            // SAFETY: the caller's contract; a load. Not `pure`: another
            // thread may change the value between two calls.
            unsafe {
                asm!(concat!($ptx, " {v}, [{p}];"), v = out($reg) v, p = in(reg64) ptr,
                     options(nostack));
            }
            v
        }
    };
    ($(#[$m:meta])* store $name:ident: $t:ty, $reg:ident, $ptx:literal) => {
        $(#[$m])*
        ///
        /// # Safety
        /// `ptr` must be a valid, aligned global location that racing threads
        /// access only through these ordered loads and stores or atomics.
        #[inline(always)]
        #[doc(hidden)]
        pub unsafe fn $name(ptr: *mut $t, v: $t) {
            // SAFETY: the caller's contract; a store.
            unsafe {
                asm!(concat!($ptx, " [{p}], {v};"), p = in(reg64) ptr, v = in($reg) v,
                     options(nostack));
            }
        }
    };
}

ordered_access!(
    /// `ld.relaxed.gpu.u32`: a load that sees the latest value at GPU scope
    /// (never a stale L1 line) with no ordering of its own.
    load load_relaxed_u32: u32, reg32, "ld.relaxed.gpu.global.u32");
ordered_access!(
    /// `st.relaxed.gpu.u32`: a store at GPU scope with no ordering of its
    /// own.
    store store_relaxed_u32: u32, reg32, "st.relaxed.gpu.global.u32");
ordered_access!(
    /// `ld.relaxed.gpu.u64`: a load that sees the latest value at GPU scope
    /// (never a stale L1 line) with no ordering of its own.
    load load_relaxed_u64: u64, reg64, "ld.relaxed.gpu.global.u64");
ordered_access!(
    /// `st.relaxed.gpu.u64`: a store at GPU scope with no ordering of its
    /// own.
    store store_relaxed_u64: u64, reg64, "st.relaxed.gpu.global.u64");

/// `ld.relaxed.gpu.v2.u64`: two relaxed loads of adjacent words in one
/// instruction. Each word is read whole, but the two may come from
/// different stores.
///
/// # Safety
/// `ptr` must be a valid, 16-byte aligned global location that racing
/// threads access only through these ordered loads and stores or atomics.
#[inline(always)]
#[doc(hidden)]
pub unsafe fn load_relaxed_v2_u64(ptr: *const u64) -> [u64; 2] {
    let (a, b): (u64, u64);
    // SAFETY: the caller's contract; a load. Not `pure`: another thread
    // may change the words between two calls.
    unsafe {
        asm!("ld.relaxed.gpu.global.v2.u64 {{{a}, {b}}}, [{p}];", a = out(reg64) a,
             b = out(reg64) b, p = in(reg64) ptr, options(nostack));
    }
    [a, b]
}

/// `st.relaxed.gpu.v2.u64`: two relaxed stores of adjacent words in one
/// instruction (each word written whole; a reader may see one before the
/// other).
///
/// # Safety
/// As [`load_relaxed_v2_u64`].
#[inline(always)]
#[doc(hidden)]
pub unsafe fn store_relaxed_v2_u64(ptr: *mut u64, v: [u64; 2]) {
    // SAFETY: the caller's contract; a store.
    unsafe {
        asm!("st.relaxed.gpu.global.v2.u64 [{p}], {{{a}, {b}}};", p = in(reg64) ptr,
             a = in(reg64) v[0], b = in(reg64) v[1], options(nostack));
    }
}
