//! Bulk copies from global into shared memory by the copy engine (TMA),
//! completed on a transaction barrier (`mbarrier`), sm_90a only.
//!
//! One thread starts a copy of any number of 16-byte units with one
//! instruction ([`bulk_copy_to_shared`]); the copy engine moves the bytes
//! while the block computes, and counts them off on a barrier in shared
//! memory that the thread has told how many bytes to expect
//! ([`expect_bytes`]). The threads that need the data wait for the
//! barrier's phase to complete ([`wait_parity`]), which also makes the
//! copied bytes visible to them. A barrier's phases alternate in parity:
//! the first completes with parity 0, the next with 1, and so on.
//!
//! Barriers and destinations are shared-window addresses
//! ([`super::shared_address`]).
//!
//! Also the copy engine's L2 prefetch ([`prefetch_l2`]), which fetches
//! bytes into L2 for later loads without a barrier.

use core::arch::asm;

/// `mbarrier.init.shared::cta.b64`: makes the 8 bytes at `bar` a barrier
/// whose phases complete after `count` arrivals (and the bytes they
/// expect), then fences the initialisation for the copy engine.
///
/// # Safety
/// `bar` is the 8-byte aligned shared-window address of 8 bytes that
/// nothing else uses while the barrier lives; one thread initialises it,
/// and a block barrier follows before any other thread uses it.
#[inline(always)]
#[doc(hidden)]
pub unsafe fn init_barrier(bar: u32, count: u32) {
    // SAFETY: the caller's contract; the fence has no operands.
    unsafe {
        asm!(
            "mbarrier.init.shared::cta.b64 [{b}], {c};",
            "fence.mbarrier_init.release.cluster;",
            b = in(reg32) bar,
            c = in(reg32) count,
            options(nostack),
        );
    }
}

/// `mbarrier.arrive.expect_tx.shared::cta.b64`: arrives on the barrier at
/// `bar` and tells it to expect `bytes` more bytes in the current phase,
/// which then completes once they have all been copied (at once if
/// `bytes` is 0 and this was the last arrival).
///
/// # Safety
/// `bar` is an initialised barrier ([`init_barrier`]) whose current phase
/// still expects this arrival.
#[inline(always)]
#[doc(hidden)]
pub unsafe fn expect_bytes(bar: u32, bytes: u32) {
    // SAFETY: the caller's contract.
    unsafe {
        asm!(
            "mbarrier.arrive.expect_tx.shared::cta.b64 _, [{b}], {n};",
            b = in(reg32) bar,
            n = in(reg32) bytes,
            options(nostack),
        );
    }
}

/// `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes`:
/// starts copying `bytes` bytes from global `src` to shared `dst`, counted
/// off on the barrier at `bar` as they land.
///
/// # Safety
/// `src` and `dst` are 16-byte aligned and `bytes` a multiple of 16;
/// `src .. src + bytes` lies in one allocation of global memory that
/// nothing writes during the kernel; `dst .. dst + bytes` lies in the
/// block's shared memory and nothing reads or writes it until a
/// [`wait_parity`] of the phase has returned; the phase expects these
/// bytes ([`expect_bytes`]); and the block does not exit before that
/// phase completes.
#[inline(always)]
#[doc(hidden)]
pub unsafe fn bulk_copy_to_shared(dst: u32, src: *const u8, bytes: u32, bar: u32) {
    // SAFETY: the caller's contract. Not `nomem`: shared memory changes
    // under the program's feet once this returns.
    unsafe {
        asm!(
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [{d}], [{s}], {n}, [{b}];",
            d = in(reg32) dst,
            s = in(reg64) src,
            n = in(reg32) bytes,
            b = in(reg32) bar,
            options(nostack),
        );
    }
}

/// Waits until the phase of parity `parity` of the barrier at `bar` has
/// completed; the bytes copied in that phase are then visible to this
/// thread.
///
/// # Safety
/// `bar` is an initialised barrier whose phase of that parity will
/// complete (the one in progress or the one just completed).
#[inline(always)]
#[doc(hidden)]
pub unsafe fn wait_parity(bar: u32, parity: u32) {
    loop {
        let done: u32;
        // SAFETY: the caller's contract; a test of the barrier's state.
        unsafe {
            asm!(
                "{{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [{b}], {q}; selp.u32 {d}, 1, 0, p; }}",
                d = out(reg32) done,
                b = in(reg32) bar,
                q = in(reg32) parity,
                options(nostack),
            );
        }
        if done != 0 {
            return;
        }
    }
}

/// `cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes`:
/// starts copying the box at `coords` (innermost dimension first, signed:
/// a box may reach outside the tensor, whose elements there arrive as
/// zeros) of the tensor that the tensor map at generic address `map`
/// describes into shared `dst`, laid out innermost dimension first and
/// counted off on the barrier at `bar` as the bytes land (the whole box,
/// zeros included).
///
/// # Safety
/// `map` is the generic address of a valid 4-dimensional tensor map,
/// 64-byte aligned, that nothing writes during the kernel: a kernel
/// parameter (`kernel::MapParam`), which the copy engine reads as it
/// lies (stores of a map to global memory would need proxy fences before
/// a copy read it); the tensor it describes lies in
/// one allocation that nothing writes during the kernel; `dst` is 128-byte
/// aligned and `dst .. dst + box bytes` lies in the block's shared memory,
/// which nothing reads or writes until a [`wait_parity`] of the phase has
/// returned; the phase expects these bytes ([`expect_bytes`]); and the
/// block does not exit before that phase completes.
#[inline(always)]
#[doc(hidden)]
pub unsafe fn tensor_copy_4d_to_shared(dst: u32, map: u64, coords: [i32; 4], bar: u32) {
    // SAFETY: the caller's contract; shared memory changes under the
    // program's feet once this returns, as for `bulk_copy_to_shared`.
    unsafe {
        asm!(
            "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [{d}], [{m}, {{{c0}, {c1}, {c2}, {c3}}}], [{b}];",
            d = in(reg32) dst,
            m = in(reg64) map,
            c0 = in(reg32) coords[0],
            c1 = in(reg32) coords[1],
            c2 = in(reg32) coords[2],
            c3 = in(reg32) coords[3],
            b = in(reg32) bar,
            options(nostack),
        );
    }
}

/// `cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes`:
/// [`tensor_copy_4d_to_shared`] for a 3-dimensional tensor map: the box at
/// `coords` (innermost first; outside the tensor, zeros) into shared
/// `dst`, counted off on the barrier at `bar`.
///
/// # Safety
/// As [`tensor_copy_4d_to_shared`]'s, for a 3-dimensional map; with the
/// 128-byte swizzle, `dst` is 1024-byte aligned.
#[inline(always)]
#[doc(hidden)]
pub unsafe fn tensor_copy_3d_to_shared(dst: u32, map: u64, coords: [i32; 3], bar: u32) {
    // SAFETY: the caller's contract; shared memory changes under the
    // program's feet once this returns, as for `bulk_copy_to_shared`.
    unsafe {
        asm!(
            "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [{d}], [{m}, {{{c0}, {c1}, {c2}}}], [{b}];",
            d = in(reg32) dst,
            m = in(reg64) map,
            c0 = in(reg32) coords[0],
            c1 = in(reg32) coords[1],
            c2 = in(reg32) coords[2],
            b = in(reg32) bar,
            options(nostack),
        );
    }
}

/// `cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes`:
/// [`tensor_copy_4d_to_shared`] for a 2-dimensional tensor map: the box at
/// `coords` (innermost first; outside the tensor, zeros) into shared
/// `dst`, counted off on the barrier at `bar`.
///
/// # Safety
/// As [`tensor_copy_4d_to_shared`]'s, for a 2-dimensional map; with the
/// 128-byte swizzle, `dst` is 1024-byte aligned.
#[inline(always)]
#[doc(hidden)]
pub unsafe fn tensor_copy_2d_to_shared(dst: u32, map: u64, coords: [i32; 2], bar: u32) {
    // SAFETY: the caller's contract; shared memory changes under the
    // program's feet once this returns, as for `bulk_copy_to_shared`.
    unsafe {
        asm!(
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [{d}], [{m}, {{{c0}, {c1}}}], [{b}];",
            d = in(reg32) dst,
            m = in(reg64) map,
            c0 = in(reg32) coords[0],
            c1 = in(reg32) coords[1],
            b = in(reg32) bar,
            options(nostack),
        );
    }
}

/// `mbarrier.arrive.shared::cta.b64`: this thread's arrival on the
/// barrier at `bar` (release semantics: its earlier memory accesses, the
/// reads of the operands it is done with included, happen before the
/// phase completes for whoever waits on it).
///
/// # Safety
/// `bar` is an initialised barrier whose current phase still expects this
/// arrival.
#[inline(always)]
#[doc(hidden)]
pub unsafe fn arrive(bar: u32) {
    // SAFETY: the caller's contract.
    unsafe {
        asm!(
            "mbarrier.arrive.shared::cta.b64 _, [{b}];",
            b = in(reg32) bar,
            options(nostack),
        );
    }
}

/// `cp.async.bulk.prefetch.L2.global`: asks L2 to fetch the `bytes` bytes
/// at `src` from DRAM, and returns at once. A hint: nothing waits for it,
/// and the bytes may be gone from L2 by the time they are read.
///
/// # Safety
/// `src` is 16-byte aligned, `bytes` a multiple of 16, and `src .. src +
/// bytes` lies in one allocation of global memory.
#[inline(always)]
#[doc(hidden)]
pub unsafe fn prefetch_l2(src: *const u8, bytes: u32) {
    // SAFETY: the caller's contract; a prefetch writes nothing.
    unsafe {
        asm!(
            "cp.async.bulk.prefetch.L2.global [{s}], {n};",
            s = in(reg64) src,
            n = in(reg32) bytes,
            options(nostack, readonly),
        );
    }
}

/// `prefetch.tensormap`: asks for the tensor map at generic address `map`
/// to be brought near the copy engine before the first copy that reads
/// it. A hint: nothing waits for it.
///
/// # Safety
/// `map` is the generic address of a tensor map, as for
/// [`tensor_copy_2d_to_shared`].
#[inline(always)]
#[doc(hidden)]
pub unsafe fn prefetch_tensor_map(map: u64) {
    // SAFETY: the caller's contract; a prefetch writes nothing.
    unsafe {
        asm!(
            "prefetch.tensormap [{m}];",
            m = in(reg64) map,
            options(nostack, readonly),
        );
    }
}
