//! Streaming a slice through 16-byte loads: a scalar head up to the first
//! 16-byte boundary, the aligned body as 16-byte words with several loads in
//! flight per thread, and a scalar tail.
//!
//! One 16-byte load per thread is a quarter of the instructions of four
//! 4-byte loads and fills whole 128-byte lines per 8 lanes; issuing `UNROLL`
//! independent loads before using the first keeps enough bytes in flight to
//! cover DRAM latency. Any start address works: only the body is aligned.

use super::{Words4, load_nc_v4};

/// Folds `x[0..n]` as one of `threads` cooperating threads (this one is
/// `rank`), starting from `acc`: `element` folds in the head and tail
/// elements this thread owns (at most one of each), `words` the 16-byte words
/// of the body it owns (`rank, rank + threads, ...`), loaded `UNROLL` at a
/// time before the first is used. Every element of the slice is folded by
/// exactly one thread.
///
/// # Safety
/// `x` is valid for `n` reads, aligned to `E`, and nothing writes it while
/// the kernel runs (the body goes through the read-only path); `E` divides
/// 16 bytes; `rank < threads`; `threads` is at least `16 / size_of::<E>()`,
/// or `x` is 16-byte aligned and `n` a whole number of 16-byte words (no
/// head or tail).
#[inline(always)]
#[doc(hidden)]
pub unsafe fn stream_words<E: Copy, A, const UNROLL: usize>(
    x: *const E,
    n: usize,
    rank: usize,
    threads: usize,
    mut acc: A,
    element: impl Fn(A, E) -> A,
    words: impl Fn(A, Words4) -> A,
) -> A {
    let per_word = 16 / size_of::<E>();
    let misaligned = (x as usize % 16) / size_of::<E>();
    let head = ((per_word - misaligned) % per_word).min(n);
    if rank < head {
        // SAFETY: `rank < head <= n`.
        acc = element(acc, unsafe { *x.add(rank) });
    }
    // SAFETY: `head <= n`; the body starts on a 16-byte boundary.
    let body = unsafe { x.add(head) }.cast::<Words4>();
    let vectors = (n - head) / per_word;
    let mut i = rank;
    while i + (UNROLL - 1) * threads < vectors {
        // Index loops over a constant range: fully unrolled, `w` stays in
        // registers (an iterator over `w` by value spilled it to local memory).
        let mut w = [[0u32; 4]; UNROLL];
        for u in 0..UNROLL {
            // SAFETY: `i + u * threads < vectors`: inside the body.
            w[u] = unsafe { load_nc_v4(body.add(i + u * threads)) };
        }
        for u in 0..UNROLL {
            acc = words(acc, w[u]);
        }
        i += UNROLL * threads;
    }
    while i < vectors {
        // SAFETY: `i < vectors`.
        acc = words(acc, unsafe { load_nc_v4(body.add(i)) });
        i += threads;
    }
    // Fewer than `per_word` elements remain: one per thread at most.
    let tail = head + vectors * per_word + rank;
    if tail < n {
        // SAFETY: `tail < n`.
        acc = element(acc, unsafe { *x.add(tail) });
    }
    acc
}
