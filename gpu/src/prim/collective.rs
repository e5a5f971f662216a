//! Reductions across a warp and across a block, generic over the combining
//! operation (a sum, a minimum, a wrapping byte count, ...).
//!
//! `combine` must be associative and commutative up to the rounding the
//! caller accepts: lanes are combined as a tree, not in index order.

use crate::WARP_SIZE;
use crate::scalar::Scalar;

use super::{FULL_MASK, block_dim_x, shfl_down, sync_threads, sync_warp, thread_idx_x};

/// Combines the values of the 32 lanes of a warp with shuffles
/// (`shfl.sync.down`, five steps); lane 0 gets the result. Every lane of the
/// warp must call it.
#[inline(always)]
#[doc(hidden)]
pub fn warp_reduce<T: Scalar>(mut v: T, combine: impl Fn(T, T) -> T) -> T {
    let mut delta = WARP_SIZE / 2;
    while delta > 0 {
        v = combine(v, shfl_down(v, delta));
        delta >>= 1;
    }
    v
}

/// Combines one value per thread over a 1D block; thread 0 gets the result.
///
/// Each warp reduces with shuffles, lane 0 of each warp writes its result to
/// `warp_results`, and after one block barrier warp 0 reduces those.
/// `identity` fills the lanes of warp 0 beyond the block's warp count.
///
/// # Safety
/// `warp_results` points to `blockDim.x / 32` writable elements of shared
/// memory that no other code uses until the call returns; `blockDim.x` is a
/// multiple of 32 and every thread of the block calls this (it contains a
/// block barrier).
#[inline(always)]
#[doc(hidden)]
pub unsafe fn block_reduce<T: Scalar>(
    v: T,
    identity: T,
    combine: impl Fn(T, T) -> T + Copy,
    warp_results: *mut T,
) -> T {
    let tid = thread_idx_x();
    let (warp, lane) = (tid / WARP_SIZE, tid % WARP_SIZE);
    let v = warp_reduce(v, combine);
    if lane == 0 {
        // SAFETY: `warp < blockDim.x / 32`, inside `warp_results` (contract).
        unsafe { *warp_results.add(warp as usize) = v };
    }
    sync_threads();
    let mut total = identity;
    if warp == 0 {
        if lane < block_dim_x() / WARP_SIZE {
            // SAFETY: as above; the barrier ordered the writes before this read.
            total = unsafe { *warp_results.add(lane as usize) };
        }
        total = warp_reduce(total, combine);
    }
    total
}

/// The lessons' tree in shared memory: `s[t] = combine(s[t], s[t + stride])`
/// for `t < stride`, `stride` halving from `blockDim.x / 2` while it is above
/// `until`, with a block barrier after each level. With `until = 0` `s[0]`
/// holds the block's result afterwards.
///
/// # Safety
/// `s` points to `blockDim.x` elements of shared memory holding one value per
/// thread, written before a block barrier; `blockDim.x` is a power of two;
/// every thread of the block calls this.
#[inline(always)]
#[doc(hidden)]
pub unsafe fn shared_tree<T: Copy>(s: *mut T, until: u32, combine: impl Fn(T, T) -> T) {
    let tid = thread_idx_x();
    let mut stride = block_dim_x() / 2;
    while stride > until {
        if tid < stride {
            let (to, from) = (tid as usize, (tid + stride) as usize);
            // SAFETY: `to < from < blockDim.x`, inside `s`; the previous
            // level's writes were ordered by the barrier below.
            unsafe { *s.add(to) = combine(*s.add(to), *s.add(from)) };
        }
        sync_threads();
        stride >>= 1;
    }
}

/// The last 64 values of a shared-memory tree reduced by warp 0 alone,
/// without block barriers: lane 0 returns `s[0] ⊕ … ⊕ s[63]`. The lessons
/// rely on lanes running in lockstep (`volatile`), which is false since
/// Volta: here each read of a neighbour's slot is separated from that
/// neighbour's next write by `__syncwarp`.
///
/// # Safety
/// Called by all 32 lanes of warp 0 (`tid < 32`) and no other thread; `s`
/// points to 64 elements of shared memory whose writes a block barrier
/// ordered before the call.
#[inline(always)]
#[doc(hidden)]
pub unsafe fn warp_tail<T: Copy>(s: *mut T, tid: u32, combine: impl Fn(T, T) -> T) -> T {
    let tid = tid as usize;
    // SAFETY: `tid + 32 < 64`, inside `s` (contract); every later access is
    // at `tid` or `tid + offset < 64`, ordered by the warp barriers.
    unsafe {
        let mut v = combine(*s.add(tid), *s.add(tid + 32));
        let mut offset = 16;
        while offset > 0 {
            sync_warp(FULL_MASK);
            *s.add(tid) = v;
            sync_warp(FULL_MASK);
            v = combine(v, *s.add(tid + offset));
            offset >>= 1;
        }
        v
    }
}
