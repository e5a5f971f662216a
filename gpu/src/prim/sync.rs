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
#[doc(hidden)]
pub fn sync_threads() {
    // SAFETY: `bar.sync 0` touches no memory; the convergence requirement is
    // the documented contract of this function, which kernels keep by calling
    // it only in block-uniform control flow.
    unsafe { nvptx::_syncthreads() }
}

/// `__syncthreads_or(predicate)`: [`sync_threads`], and whether `predicate`
/// held for any thread of the block. The same contract as
/// [`sync_threads`]: every thread of the block reaches the same call.
#[inline(always)]
#[doc(hidden)]
pub fn sync_threads_or(predicate: bool) -> bool {
    let any: u32;
    // SAFETY: `bar.red.or.pred` on barrier 0 is `bar.sync 0` with a vote
    // (the same memory ordering); the asm is not `nomem`, so the compiler
    // moves no memory access across it. Convergence is the documented
    // contract, as for `sync_threads`.
    unsafe {
        asm!(
            "{{ .reg .pred p, q; setp.ne.u32 p, {v}, 0; bar.red.or.pred q, 0, p; selp.u32 {o}, 1, 0, q; }}",
            v = in(reg32) predicate as u32,
            o = out(reg32) any,
            options(nostack),
        );
    }
    any != 0
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
#[doc(hidden)]
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

/// Whether this warp's block is the first of its launch to claim `claim`:
/// lane 0 swaps the launch's `epoch` into the word (`atom.exch`), and only
/// the first swap of a launch finds another number there; the verdict is
/// shuffled to every lane. With [`raise_flag`] and [`wait_flag`] it lets the
/// first block prepare what the others use at their ends (the lane-private
/// histogram zeroes its output) with no ticket on the last block's tail:
/// the claimer runs, so the blocks that wait for its flag cannot starve it,
/// even where they outnumber the GPU's slots.
///
/// # Safety
/// `claim` is a valid, aligned global word that nothing but these claims
/// touches; `epoch` differs from the epoch of the previous launch that
/// claimed the word (and from its first value); every lane of the warp
/// calls this in warp-uniform control flow.
#[inline(always)]
#[doc(hidden)]
pub unsafe fn first_to_claim(claim: *mut u32, epoch: u32) -> bool {
    let mut old = epoch;
    if super::index::lane_id() == 0 {
        // SAFETY: the caller's contract: a global word only these swaps
        // touch.
        unsafe {
            asm!(
                "atom.global.exch.b32 {o}, [{p}], {v};",
                o = out(reg32) old,
                p = in(reg64) claim,
                v = in(reg32) epoch,
                options(nostack),
            );
        }
    }
    super::shfl_idx(old, 0) != epoch
}

/// Publishes the warp's writes made before the call: a warp barrier
/// (which orders the lanes' writes before lane 0's next access), then lane
/// 0 stores `epoch` into `flag` with release semantics
/// (`st.release.gpu`), which carry those writes with it.
///
/// # Safety
/// `flag` is a valid, aligned global word that only these calls write
/// and [`wait_flag`] reads; every lane of the warp calls this.
#[inline(always)]
#[doc(hidden)]
pub unsafe fn raise_flag(flag: *mut u32, epoch: u32) {
    sync_warp(super::FULL_MASK);
    if super::index::lane_id() == 0 {
        // SAFETY: the caller's contract.
        unsafe {
            asm!(
                "st.release.gpu.global.u32 [{p}], {v};",
                p = in(reg64) flag,
                v = in(reg32) epoch,
                options(nostack),
            );
        }
    }
}

/// Waits until `flag` holds `epoch` (`ld.acquire.gpu`, polled): what the
/// raiser published ([`raise_flag`]) is then visible to this thread, and
/// to the rest of its block after a barrier.
///
/// # Safety
/// `flag` is a valid, aligned global word that some running or runnable
/// thread sets to `epoch` without waiting for this one.
#[inline(always)]
#[doc(hidden)]
pub unsafe fn wait_flag(flag: *const u32, epoch: u32) {
    loop {
        let seen: u32;
        // SAFETY: the caller's contract; a load.
        unsafe {
            asm!(
                "ld.acquire.gpu.global.u32 {o}, [{p}];",
                o = out(reg32) seen,
                p = in(reg64) flag,
                options(nostack),
            );
        }
        if seen == epoch {
            return;
        }
    }
}

/// `__syncwarp(mask)`: waits for the lanes in `mask` and orders their memory
/// accesses. Needed between a lane's write and another lane's read of shared
/// memory since Volta, where a warp's lanes no longer run in lockstep.
#[inline(always)]
#[doc(hidden)]
pub fn sync_warp(mask: u32) {
    // SAFETY: a warp barrier; touches no memory beyond ordering it.
    unsafe { asm!("bar.warp.sync {m};", m = in(reg32) mask, options(nostack)) }
}

/// Keeps the compiler from moving memory accesses across this point; no
/// instruction. For code whose order in hardware another instruction
/// already ensures (a value it waits for), which only the compiler could
/// undo.
#[inline(always)]
#[doc(hidden)]
pub fn compiler_order() {
    // SAFETY: an empty instruction; it only counts as touching memory.
    unsafe { asm!("", options(nostack, preserves_flags)) }
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
#[doc(hidden)]
pub fn sync_named(id: u32, threads: u32) {
    // SAFETY: a hardware barrier; touches no memory beyond ordering it.
    // The counts are the documented contract.
    unsafe { asm!("bar.sync {i}, {t};", i = in(reg32) id, t = in(reg32) threads, options(nostack)) }
}

/// Arrives at named barrier `id` for `threads` threads without waiting:
/// the other side of [`sync_named`], for a part of a block that signals
/// another part and goes on.
#[inline(always)]
#[doc(hidden)]
pub fn arrive_named(id: u32, threads: u32) {
    // SAFETY: as `sync_named`.
    unsafe {
        asm!("bar.arrive {i}, {t};", i = in(reg32) id, t = in(reg32) threads, options(nostack))
    }
}

/// Aborts the kernel; the host sees a launch failure.
#[inline(always)]
#[doc(hidden)]
pub fn trap() -> ! {
    // SAFETY: `trap` ends the kernel; it has no other effect.
    unsafe { nvptx::trap() }
}
