//! Barriers, fences and `trap`.

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

/// `__threadfence()`: this thread's earlier global writes become visible to
/// the whole device before its later ones.
#[inline(always)]
pub fn thread_fence() {
    // SAFETY: a memory fence; no operands.
    unsafe { asm!("membar.gl;", options(nostack)) }
}

/// Aborts the kernel; the host sees a launch failure.
#[inline(always)]
pub fn trap() -> ! {
    // SAFETY: `trap` ends the kernel; it has no other effect.
    unsafe { nvptx::trap() }
}
