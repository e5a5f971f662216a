//! Barriers, the last block's election, and `trap`.

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

/// Whether this block is the last of `blocks` to arrive at `ticket`: the
/// single-launch way for blocks to meet (the reduction's single pass, a
/// split product's slices, the histogram's running counts). Thread 0 takes
/// the ticket ([`ticket_u32`](super::atomic::ticket_u32)), which releases
/// every write the block made before the call and, for the last block,
/// acquires every other block's; the last block puts the ticket back to 0
/// for the next launch (every block has taken its own by then); the
/// verdict reaches the whole block through `verdict`, a word of shared
/// memory, and a barrier, after which the last block's threads may read
/// what the others published (from L2: `load_cg_*`, not through a stale L1
/// line). Every thread of the block calls it, in block-uniform control flow.
///
/// # Safety
/// `ticket` is a valid, aligned global word that nothing but these calls
/// touches during the launch, 0 when the launch starts, and exactly
/// `blocks` blocks call this once each on it; `verdict` is a valid shared
/// word that no thread reads or writes from the call until its barrier.
/// Writes by threads other than thread 0 that the ticket must publish need
/// a barrier ([`sync_threads`]) between them and the call.
#[inline(always)]
pub unsafe fn last_to_arrive(ticket: *mut u32, blocks: u32, verdict: *mut u32) -> bool {
    if super::index::thread_idx_x() == 0 {
        // SAFETY: the caller's contract: a global word touched only by
        // these tickets, and a shared word free to write.
        unsafe {
            let last = super::atomic::ticket_u32(ticket, 1) == blocks - 1;
            if last {
                // Every block has taken its ticket: the next launch finds 0.
                *ticket = 0;
            }
            *verdict = last as u32;
        }
    }
    sync_threads();
    // SAFETY: written by thread 0 before the barrier; no thread writes it
    // until the caller's next use.
    unsafe { *verdict != 0 }
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
