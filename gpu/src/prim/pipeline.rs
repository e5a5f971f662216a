//! Asynchronous copies from global to shared memory (`cp.async`, sm_80 and
//! newer): the multi-stage shared-memory pipelines of tiled kernels.
//!
//! A thread issues copies, which run while it goes on computing, and groups
//! them per stage:
//!
//! ```text
//! for s in 0..STAGES - 1 { issue copies of tile s; commit_group(); }
//! for t in 0..tiles {
//!     wait_group::<{ STAGES - 2 }>(); // this thread's copies of tile t landed
//!     sync_threads();                 // ... and every other thread's too
//!     issue copies of tile t + STAGES - 1 (into the slot freed at t - 1);
//!     commit_group();                 // every iteration, even with nothing issued
//!     compute on tile t;
//! }
//! ```
//!
//! The rules, from the PTX ISA:
//!
//! * Groups are per thread: `commit_group` closes the calling thread's
//!   uncommitted copies into one group (an empty group if there are none), and
//!   `wait_group` waits for the calling thread's own groups. Commit on every
//!   thread in the same pattern, even where a thread issued nothing: the
//!   `wait_group::<N>` counts then mean the same stage on every thread.
//! * A copy's data is visible to the issuing thread only after a wait that
//!   covers its group; other threads see it only after that wait *and* a block
//!   barrier ([`sync_threads`](super::sync_threads)). Until then the
//!   destination must be neither read nor written, and the source not written.
//! * Copies are unordered among themselves until a wait: two copies of one
//!   group to the same destination are undefined behaviour.
//!
//! The copies and waits exist only when the crate is built for sm_80 or newer
//! (`cfg(target_feature = "sm_80")`, set by `-Ctarget-cpu=sm_80`, `sm_90`...).
//! In the sm_70 build this module holds [`shared_address`] alone, so a kernel
//! that uses them must carry the same `#[cfg(target_feature = "sm_80")]`, and
//! the host must know that its entry point exists only in the newer PTX.
//!
//! The only qualifiers used are those of PTX ISA 7.0, the version rustc emits
//! for sm_80; the `.L2::128B` prefetch hints and the `ignore-src` predicate
//! would need 7.4 and 7.5.

use core::arch::asm;

/// The shared-state-space address of `ptr`, a generic pointer into shared
/// memory (`__cvta_generic_to_shared`): `cvta.to.shared.u64`, truncated to the
/// 32 bits that shared addresses fit in. This is the operand form of
/// `cp.async`, `ldmatrix` and other shared-memory instructions that take a
/// `.shared` address rather than a generic one.
///
/// Computing it is harmless; the result is meaningful only when `ptr` points
/// into the block's shared memory.
#[inline(always)]
#[doc(hidden)]
pub fn shared_address<T>(ptr: *const T) -> u32 {
    let address: u32;
    // SAFETY: register-only conversion of the address alone (no provenance
    // and nothing dereferenced).
    unsafe {
        asm!(
            "{{ .reg .u64 s; cvta.to.shared.u64 s, {p}; cvt.u32.u64 {a}, s; }}",
            a = out(reg32) address,
            p = in(reg64) ptr.addr() as u64,
            options(pure, nomem, nostack),
        );
    }
    address
}

/// `cp.async.ca.shared.global`: starts copying one `T` of 4, 8 or 16 bytes
/// from global to shared memory, cached in L1 and L2 (for data that other
/// copies of the block read again). The size is checked at compile time.
///
/// # Safety
/// * `dst` points into the block's shared memory and `src` into global
///   memory, both valid for `size_of::<T>()` bytes and aligned to that size;
/// * until a [`wait_group`] or [`wait_all`] covers this copy (and, for other
///   threads, a block barrier after it), nothing reads or writes `*dst` and
///   nothing writes `*src`;
/// * no other copy of the same group targets the same bytes.
#[cfg(target_feature = "sm_80")]
#[inline(always)]
#[doc(hidden)]
pub unsafe fn cp_async<T>(dst: *mut T, src: *const T) {
    // SAFETY: as `cp_async_to`; `dst` points into shared memory, so its
    // shared-window address names the same bytes.
    unsafe { cp_async_to(shared_address(dst), src) }
}

/// As [`cp_async`] for a destination given as its shared-window address
/// ([`shared_address`]), like [`cp_async_cg_to`].
///
/// # Safety
/// As [`cp_async`], `dst` the shared-window address of `size_of::<T>()`
/// bytes aligned to that size.
#[cfg(target_feature = "sm_80")]
#[inline(always)]
#[doc(hidden)]
pub unsafe fn cp_async_to<T>(dst: u32, src: *const T) {
    const {
        assert!(
            matches!(size_of::<T>(), 4 | 8 | 16),
            "cp.async copies 4, 8 or 16 bytes"
        )
    };
    // SAFETY: the caller's contract: valid, aligned shared destination and
    // global source, untouched until the copy is waited for. Not `nomem`: the
    // compiler must keep memory accesses on the right side of this and of
    // the waits.
    unsafe {
        asm!(
            "cp.async.ca.shared.global [{d}], [{s}], {n};",
            d = in(reg32) dst,
            s = in(reg64) src,
            n = const size_of::<T>(),
            options(nostack),
        );
    }
}

/// As [`cp_async`], but copies only the first `src_bytes` bytes of `*src`
/// and fills the rest of `*dst` with zeros: the edge tiles of a matrix whose
/// size is not a multiple of the tile, without a branch (`src_bytes = 0`
/// writes a zero `T`).
///
/// # Safety
/// As [`cp_async`], except that only the first `src_bytes` bytes of `*src`
/// need be readable; `src` must still be aligned to `size_of::<T>()`, and
/// `src_bytes <= size_of::<T>()` (a larger value is undefined behaviour in
/// PTX). With `src_bytes = 0`, keep `src` a valid aligned address (e.g. the
/// start of the array), as a conservative reading of the PTX ISA.
#[cfg(target_feature = "sm_80")]
#[inline(always)]
#[doc(hidden)]
pub unsafe fn cp_async_zfill<T>(dst: *mut T, src: *const T, src_bytes: u32) {
    const {
        assert!(
            matches!(size_of::<T>(), 4 | 8 | 16),
            "cp.async copies 4, 8 or 16 bytes"
        )
    };
    // SAFETY: as `cp_async`, with `src_bytes <= size_of::<T>()` by contract.
    unsafe {
        asm!(
            "cp.async.ca.shared.global [{d}], [{s}], {n}, {b};",
            d = in(reg32) shared_address(dst),
            s = in(reg64) src,
            n = const size_of::<T>(),
            b = in(reg32) src_bytes,
            options(nostack),
        );
    }
}

/// `cp.async.cg.shared.global`: as [`cp_async`] for a 16-byte `T`, cached in
/// L2 only. The usual choice for streamed tiles, which each block reads once:
/// they do not evict L1 lines that are reused. The size is checked at compile
/// time.
///
/// # Safety
/// As [`cp_async`].
#[cfg(target_feature = "sm_80")]
#[inline(always)]
#[doc(hidden)]
pub unsafe fn cp_async_cg<T>(dst: *mut T, src: *const T) {
    // SAFETY: as `cp_async`; `dst` points into shared memory, so its
    // shared-window address names the same bytes.
    unsafe { cp_async_cg_to(shared_address(dst), src) }
}

/// As [`cp_async_cg`] for a destination given as its shared-window address
/// ([`shared_address`]): a loop that copies into the same tiles again and
/// again converts the tiles' base once, instead of every copy converting a
/// generic pointer.
///
/// # Safety
/// As [`cp_async`], `dst` the shared-window address of 16 bytes, 16-byte
/// aligned, of the block's shared memory.
#[cfg(target_feature = "sm_80")]
#[inline(always)]
#[doc(hidden)]
pub unsafe fn cp_async_cg_to<T>(dst: u32, src: *const T) {
    const { assert!(size_of::<T>() == 16, "cp.async.cg copies 16 bytes") };
    // SAFETY: as `cp_async`.
    unsafe {
        asm!(
            "cp.async.cg.shared.global [{d}], [{s}], 16;",
            d = in(reg32) dst,
            s = in(reg64) src,
            options(nostack),
        );
    }
}

/// As [`cp_async_cg`], copying only the first `src_bytes` bytes and filling
/// the rest with zeros (see [`cp_async_zfill`]).
///
/// # Safety
/// As [`cp_async_zfill`].
#[cfg(target_feature = "sm_80")]
#[inline(always)]
#[doc(hidden)]
pub unsafe fn cp_async_cg_zfill<T>(dst: *mut T, src: *const T, src_bytes: u32) {
    const { assert!(size_of::<T>() == 16, "cp.async.cg copies 16 bytes") };
    // SAFETY: as `cp_async_zfill`.
    unsafe {
        asm!(
            "cp.async.cg.shared.global [{d}], [{s}], 16, {b};",
            d = in(reg32) shared_address(dst),
            s = in(reg64) src,
            b = in(reg32) src_bytes,
            options(nostack),
        );
    }
}

/// `cp.async.commit_group`: closes this thread's copies issued since the last
/// commit into one group, the unit that [`wait_group`] counts. Commits an
/// empty group when there are none, which keeps every thread's count aligned.
#[cfg(target_feature = "sm_80")]
#[inline(always)]
#[doc(hidden)]
pub fn commit_group() {
    // SAFETY: only marks a group boundary; touches no memory. Not `nomem`, so
    // the compiler keeps the copies it closes before it.
    unsafe { asm!("cp.async.commit_group;", options(nostack)) }
}

/// `cp.async.wait_group N`: waits until at most the `N` most recent groups of
/// this thread are still pending, so every older group has landed and its
/// data is visible to this thread (to the block after a
/// [`sync_threads`](super::sync_threads)). With `S` stages in flight, a
/// pipeline waits with `N = S - 2` before it reads the oldest stage.
#[cfg(target_feature = "sm_80")]
#[inline(always)]
#[doc(hidden)]
pub fn wait_group<const N: u32>() {
    // SAFETY: waits for this thread's copies. Not `nomem`: the shared memory
    // those copies wrote must be read only after this point, so the compiler
    // may move no memory access across it.
    unsafe { asm!("cp.async.wait_group {n};", n = const N, options(nostack)) }
}

/// `cp.async.wait_all`: commits this thread's uncommitted copies and waits
/// for all its groups (`commit_group(); wait_group::<0>()`): the end of a
/// pipeline, or a single-stage copy.
#[cfg(target_feature = "sm_80")]
#[inline(always)]
#[doc(hidden)]
pub fn wait_all() {
    // SAFETY: as `wait_group`.
    unsafe { asm!("cp.async.wait_all;", options(nostack)) }
}
