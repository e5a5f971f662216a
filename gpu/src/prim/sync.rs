//! Barriers and `trap`.

use core::arch::{asm, nvptx};

/// `__syncthreads()`: waits until every thread of the block has reached this
/// barrier, and makes their earlier shared- and global-memory writes visible
/// to the block.
///
/// Every thread of the block must reach the same call: a barrier inside a
/// branch that only part of the block takes is undefined behaviour (compute-
/// sanitizer's synccheck reports it).
#[inline(always)]
pub fn sync_threads() {
    // SAFETY: `bar.sync 0` touches no memory; the convergence requirement is
    // the documented contract of this function, which kernels keep by calling
    // it only in block-uniform control flow.
    unsafe { nvptx::_syncthreads() }
}

/// `__syncwarp(mask)`: waits for the lanes in `mask` and orders their memory
/// accesses. Needed between a lane's write and another lane's read of shared
/// memory since Volta, where a warp's lanes no longer run in lockstep.
#[inline(always)]
pub fn sync_warp(mask: u32) {
    // SAFETY: a warp barrier; touches no memory beyond ordering it.
    unsafe { asm!("bar.warp.sync {m};", m = in(reg32) mask, options(nostack)) }
}

/// Named barrier `id` (1 to 15; 0 is [`sync_threads`]'s) for `threads`
/// threads (a multiple of 32): waits until that many have reached it, by
/// this call or by [`arrive_named`], and orders their shared- and
/// global-memory accesses as [`sync_threads`] does. Lets part of a block,
/// such as one warpgroup, wait for itself or for another part.
///
/// Every warp that calls it must reach it whole, and the calls and
/// arrivals of one phase must add up to exactly `threads`.
#[inline(always)]
pub fn sync_named(id: u32, threads: u32) {
    // SAFETY: a hardware barrier; touches no memory beyond ordering it.
    // The counts are the documented contract.
    unsafe { asm!("bar.sync {i}, {t};", i = in(reg32) id, t = in(reg32) threads, options(nostack)) }
}

/// Arrives at named barrier `id` for `threads` threads without waiting:
/// the other side of [`sync_named`], for a part of a block that signals
/// another part and goes on.
#[inline(always)]
pub fn arrive_named(id: u32, threads: u32) {
    // SAFETY: as `sync_named`.
    unsafe {
        asm!("bar.arrive {i}, {t};", i = in(reg32) id, t = in(reg32) threads, options(nostack))
    }
}

/// Aborts the kernel; the host sees a launch failure.
#[inline(always)]
pub fn trap() -> ! {
    // SAFETY: `trap` ends the kernel; it has no other effect.
    unsafe { nvptx::trap() }
}
