//! Global-memory loads and stores beyond plain dereferences.
//!
//! * `ld.global.nc`: read-only data path (the `__ldg` of the lessons): the
//!   data must not be written by anyone during the kernel.
//! * `ld.global.cg`: cached in L2 only, so it sees writes that other blocks
//!   published (a release) — the last block of a single-pass reduction
//!   reads the others' partials this way.
//! * `v4`: one 16-byte access per thread, a quarter of the instructions of
//!   four 4-byte loads and full 128-byte lines per 8 lanes.
//! * predicated (`@p`): a store or load that touches memory only under a
//!   condition, with no branch (the GEMM epilogue's edge tiles).
//!
//! Pointers are generic addresses of global memory, which CUDA maps one to one
//! onto the global window; that is what `cudaMalloc` returns.

use core::arch::asm;

/// Four 32-bit words loaded or stored with one 16-byte access.
pub type Words4 = [u32; 4];

/// `ld.global.nc.b32`: a read-only 4-byte load.
///
/// # Safety
/// `ptr` must point to 4 readable, 4-byte aligned bytes of global memory that
/// nothing writes while the kernel runs.
#[inline(always)]
#[doc(hidden)]
pub unsafe fn load_nc_u32(ptr: *const u32) -> u32 {
    let v: u32;
    // SAFETY: the caller guarantees a valid, aligned, read-only location.
    unsafe {
        asm!("ld.global.nc.b32 {v}, [{p}];", v = out(reg32) v, p = in(reg64) ptr,
             options(pure, readonly, nostack));
    }
    v
}

/// `ld.global.nc.v4.b32`: a read-only 16-byte load.
///
/// Without cache hints: with `.L1::no_allocate.L2::256B` (sm_80+, PTX 7.4)
/// a 1 GiB reduction streamed 6% slower on an H200 (4180 against 4440 GB/s)
/// and 0.3% faster on an H100 (measured 2026-11-22). Evict-first (`.cs`)
/// reads of 64 and 256 MiB looked 4 to 5% faster in a probe only because
/// L2 kept part of the buffer for the next launch; with L2 emptied before
/// each launch they read as fast as these (docs/notes/bench.md).
///
/// # Safety
/// `ptr` must point to 16 readable, 16-byte aligned bytes of global memory
/// that nothing writes while the kernel runs.
#[inline(always)]
#[doc(hidden)]
pub unsafe fn load_nc_v4(ptr: *const Words4) -> Words4 {
    let (a, b, c, d): (u32, u32, u32, u32);
    // SAFETY: the caller guarantees a valid, aligned, read-only location.
    unsafe {
        asm!(
            "ld.global.nc.v4.b32 {{{a}, {b}, {c}, {d}}}, [{p}];",
            a = out(reg32) a, b = out(reg32) b, c = out(reg32) c, d = out(reg32) d,
            p = in(reg64) ptr, options(pure, readonly, nostack),
        );
    }
    [a, b, c, d]
}

/// `ld.global.cg.b32`: a 4-byte load cached in L2 only, never a stale L1 line.
///
/// # Safety
/// `ptr` must point to 4 readable, 4-byte aligned bytes of global memory.
#[inline(always)]
#[doc(hidden)]
pub unsafe fn load_cg_u32(ptr: *const u32) -> u32 {
    let v: u32;
    // SAFETY: the caller guarantees a valid, aligned location. Not `pure`:
    // the value may change between calls (other blocks write it).
    unsafe {
        asm!("ld.global.cg.b32 {v}, [{p}];", v = out(reg32) v, p = in(reg64) ptr,
             options(readonly, nostack));
    }
    v
}

/// `ld.global.cg.v4.b32`: a 16-byte load cached in L2 only, never a stale
/// L1 line (words another block wrote and published by a ticket).
///
/// # Safety
/// `ptr` must point to 16 readable, 16-byte aligned bytes of global memory.
#[inline(always)]
#[doc(hidden)]
pub unsafe fn load_cg_v4(ptr: *const Words4) -> Words4 {
    let (a, b, c, d): (u32, u32, u32, u32);
    // SAFETY: the caller guarantees a valid, aligned location. Not `pure`:
    // the words may change between calls (other blocks write them).
    unsafe {
        asm!(
            "ld.global.cg.v4.b32 {{{a}, {b}, {c}, {d}}}, [{p}];",
            a = out(reg32) a, b = out(reg32) b, c = out(reg32) c, d = out(reg32) d,
            p = in(reg64) ptr, options(readonly, nostack),
        );
    }
    [a, b, c, d]
}

/// `st.global.v4.b32`: one 16-byte store.
///
/// # Safety
/// `ptr` must point to 16 writable, 16-byte aligned bytes of global memory
/// that no other thread accesses concurrently.
#[inline(always)]
#[doc(hidden)]
pub unsafe fn store_v4(ptr: *mut Words4, v: Words4) {
    // SAFETY: the caller guarantees a valid, aligned, exclusively written location.
    unsafe {
        asm!(
            "st.global.v4.b32 [{p}], {{{a}, {b}, {c}, {d}}};",
            p = in(reg64) ptr, a = in(reg32) v[0], b = in(reg32) v[1], c = in(reg32) v[2],
            d = in(reg32) v[3], options(nostack),
        );
    }
}

/// Four floats as one 16-byte-aligned value: loads and stores of it are
/// single vector instructions (`ld.v4.f32`), where a `[f32; 4]`, aligned
/// to 4 bytes, becomes four scalar ones (and `cp.async` copies it whole).
#[repr(C, align(16))]
#[derive(Clone, Copy)]
pub struct F4(pub [f32; 4]);

/// The 4 floats at `p` (global or shared memory), one 16-byte load.
///
/// # Safety
/// `p` is 16-byte aligned and readable for 16 bytes.
#[inline(always)]
#[doc(hidden)]
pub unsafe fn load4(p: *const f32) -> [f32; 4] {
    // SAFETY: the caller's contract.
    unsafe { (*p.cast::<F4>()).0 }
}

/// Stores 4 floats at `p` (global or shared memory), one 16-byte store.
///
/// # Safety
/// `p` is 16-byte aligned and writable for 16 bytes.
#[inline(always)]
#[doc(hidden)]
pub unsafe fn store4(p: *mut f32, v: [f32; 4]) {
    // SAFETY: the caller's contract.
    unsafe { *p.cast::<F4>() = F4(v) }
}

/// Two floats as one 8-byte-aligned value: one vector load or store.
#[repr(C, align(8))]
#[derive(Clone, Copy)]
pub struct F2(pub [f32; 2]);

/// The 2 floats at `p` (global or shared memory), one 8-byte load.
///
/// # Safety
/// `p` is 8-byte aligned and readable for 8 bytes.
#[inline(always)]
#[doc(hidden)]
pub unsafe fn load2(p: *const f32) -> [f32; 2] {
    // SAFETY: the caller's contract.
    unsafe { (*p.cast::<F2>()).0 }
}

/// Stores 2 floats at `p` (global or shared memory), one 8-byte store.
///
/// # Safety
/// `p` is 8-byte aligned and writable for 8 bytes.
#[inline(always)]
#[doc(hidden)]
pub unsafe fn store2(p: *mut f32, v: [f32; 2]) {
    // SAFETY: the caller's contract.
    unsafe { *p.cast::<F2>() = F2(v) }
}

/// `@p st.global.f32`: stores `v` at `p` where `ok`, else nothing, with
/// no branch (a predicated store: `p` is not touched when `!ok`).
///
/// # Safety
/// Where `ok`, `p` is 4-byte aligned, global and writable.
#[inline(always)]
#[doc(hidden)]
pub unsafe fn store_if(ok: bool, p: *mut f32, v: f32) {
    // SAFETY: the caller's contract; the store happens only under `ok`.
    unsafe {
        asm!(
            "{{ .reg .pred q; setp.ne.b32 q, {ok}, 0; @q st.global.f32 [{p}], {v}; }}",
            ok = in(reg32) ok as u32,
            p = in(reg64) p,
            v = in(reg32) v,
            options(nostack),
        );
    }
}

/// `@p ld.global.f32`: the `f32` at `p` where `ok`, else 0, with no
/// branch (a predicated load: `p` is not touched when `!ok`).
///
/// # Safety
/// Where `ok`, `p` is 4-byte aligned, global and readable.
#[inline(always)]
#[doc(hidden)]
pub unsafe fn load_if(ok: bool, p: *const f32) -> f32 {
    let v: f32;
    // SAFETY: the caller's contract; the load happens only under `ok`.
    unsafe {
        asm!(
            "{{ .reg .pred q; setp.ne.b32 q, {ok}, 0; mov.b32 {v}, 0; @q ld.global.f32 {v}, [{p}]; }}",
            ok = in(reg32) ok as u32,
            p = in(reg64) p,
            v = out(reg32) v,
            options(nostack, readonly),
        );
    }
    v
}

/// `prefetch.global.L2`: asks L2 for the line holding `ptr`, and returns at
/// once. A hint: nothing waits for it.
///
/// # Safety
/// `ptr` points into an allocation of global memory.
#[inline(always)]
#[doc(hidden)]
pub unsafe fn prefetch_l2_line(ptr: *const u8) {
    // SAFETY: the caller's contract; a prefetch writes nothing.
    unsafe {
        asm!("prefetch.global.L2 [{p}];", p = in(reg64) ptr, options(nostack, readonly));
    }
}
