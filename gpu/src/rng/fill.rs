//! The kernels: bulk fills in the order of cuRAND's host API, the device
//! API's per-thread generators (`curand_init` per thread), and a
//! Monte-Carlo estimate of π that uses them.
//!
//! A fill is counter-based: value `j` of the stream is word `j % 4` of the
//! bijection of [`host_counter`](super::host_counter)`(j / 4)`, so every thread computes whole
//! blocks of 4 values with no state to load or store, and a fill that
//! starts mid-stream starts mid-block. Box–Muller pairs are the values at
//! positions `(2i, 2i + 1)`, so a normal fill continued across calls of any
//! length gives the same values as one call.

use super::normal::box_muller;
use super::{Philox, uniform_of};

/// Threads per block of every kernel here.
#[doc(hidden)]
pub const FILL_BLOCK: u32 = 256;

/// Dynamic shared memory of a fill block: each warp stages the 128 words
/// of its 32 blocks of 4 values, so that it writes them as 4 coalesced
/// rows of 32 consecutive words whatever the output's alignment.
#[doc(hidden)]
pub const FILL_SHARED_BYTES: u32 = FILL_BLOCK * 4 * 4;

/// What a raw fill writes for one 32-bit value of the stream: the value
/// itself (`curandGenerate`) or its uniform (`curandGenerateUniform`).
pub trait FillValue: Copy {
    /// The element for stream value `bits`.
    fn from_bits(bits: u32) -> Self;
    /// The element's 32 bits, as the fill kernels store them.
    fn word(bits: u32) -> u32;
}

impl FillValue for u32 {
    #[inline(always)]
    fn from_bits(bits: u32) -> u32 {
        bits
    }
    #[inline(always)]
    fn word(bits: u32) -> u32 {
        bits
    }
}

impl FillValue for f32 {
    #[inline(always)]
    fn from_bits(bits: u32) -> f32 {
        uniform_of(bits)
    }
    #[inline(always)]
    fn word(bits: u32) -> u32 {
        uniform_of(bits).to_bits()
    }
}

/// The 4 normals of one block of stream values: the Box–Muller pairs of
/// words 0 and 1 and of words 2 and 3 (`curandGenerateNormal`'s layout).
#[inline(always)]
pub fn normals_of(words: [u32; 4]) -> [f32; 4] {
    let [a, b] = box_muller(words[0], words[1]);
    let [c, d] = box_muller(words[2], words[3]);
    [a, b, c, d]
}

/// Marks a guide entry whose bucket holds table entries (see
/// [`poisson_of`]): the count there needs a search.
pub const POISSON_SEARCH: u32 = 1 << 31;

/// Words of a Poisson table (entries and guide) that a fill block copies
/// into its shared memory (16 KB; beyond, the fill reads the table from
/// global memory). A warp's 32 guide reads then fall in shared memory's
/// 32 banks, a few to a bank, where from global memory they would touch up
/// to 32 cache lines each.
#[doc(hidden)]
pub const POISSON_SHARED_WORDS: usize = 4096;

/// The guide's size for a table of `len` entries: `2^bits` buckets (and
/// one more entry), 64 to 128 buckets per entry within 2^8 to 2^16, but at
/// most 2^11 for tables of fewer than 2048 entries, so that those fit
/// `POISSON_SHARED_WORDS` (from 32 entries on they get fewer buckets
/// each, one or two near 2047). At λ = 3.5 (about 20 entries, 2^11
/// buckets) a draw lands in a bucket that holds an entry less than once in
/// 100: the entries crowd the last buckets, the CDF's flat top.
pub const fn poisson_guide_bits(len: usize) -> u32 {
    let bits = usize::BITS - len.leading_zeros() + 6;
    let cap = if len < 2048 { 11 } else { 16 };
    if bits < 8 {
        8
    } else if bits > cap {
        cap
    } else {
        bits
    }
}

// The largest such table: 2047 entries and a guide of 2^11 + 1.
const _: () = assert!(2047 + (1 << poisson_guide_bits(2047)) < POISSON_SHARED_WORDS + 1);

/// The Poisson count of stream value `x` under an inverse-CDF table of
/// `len` ascending entries followed by a guide of `2^(32 − shift) + 1`
/// entries, `at(i)` reading word `i` of the two.
///
/// Entry `i` of the table is `round(2^32 · P(X ≤ base + i))` (for each `i`
/// where that is below 2^32); the count is `base` plus the number of
/// entries at most `x`, so value `x` gives count `k` for about
/// `2^32 · P(X = k)` values. Guide entry `b` is the number of table entries
/// below `b << shift`, with [`POISSON_SEARCH`] set where the next bucket
/// starts with more: one read gives the count for the values of a bucket
/// that holds no entry (nearly all of them), and the others search the
/// bucket's entries by bisection.
#[inline(always)]
pub fn poisson_of(x: u32, base: u32, len: usize, shift: u32, at: impl Fn(usize) -> u32) -> u32 {
    let bucket = (x >> shift) as usize;
    let guide = at(len + bucket);
    if guide & POISSON_SEARCH == 0 {
        return base + guide;
    }
    let mut lo = (guide & !POISSON_SEARCH) as usize;
    let mut hi = (at(len + bucket + 1) & !POISSON_SEARCH) as usize;
    while lo < hi {
        let mid = (lo + hi) / 2;
        if at(mid) <= x {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    base + lo as u32
}

/// What a thread of `rng_draws` draws, as the device API's functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Draw {
    /// `curand`: the raw 32-bit value.
    Bits = 0,
    /// `curand_uniform`: the bits of an `f32` in `(0, 1]`.
    Uniform = 1,
    /// `curand_normal`: the bits of a standard normal `f32`.
    Normal = 2,
    /// `curand_log_normal(mean, stddev)`: the bits of an `f32`.
    LogNormal = 3,
    /// `curand_poisson(lambda)`: a count (`λ < 64` on the GPU).
    Poisson = 4,
}

impl Draw {
    /// The draw a kernel argument names, if any.
    pub const fn from_u32(code: u32) -> Option<Draw> {
        Some(match code {
            0 => Draw::Bits,
            1 => Draw::Uniform,
            2 => Draw::Normal,
            3 => Draw::LogNormal,
            4 => Draw::Poisson,
            _ => return None,
        })
    }

    /// One draw from `philox`, as a 32-bit word.
    #[inline(always)]
    pub fn draw(self, philox: &mut Philox, mean: f32, stddev: f32, lambda: f64) -> u32 {
        match self {
            Draw::Bits => philox.next_u32(),
            Draw::Uniform => philox.uniform().to_bits(),
            Draw::Normal => philox.normal().to_bits(),
            Draw::LogNormal => philox.log_normal(mean, stddev).to_bits(),
            Draw::Poisson => philox.poisson(lambda),
        }
    }
}

/// The draws of the π estimate: a point `(x, y)` of two uniforms lies in
/// the quarter disc when `x² + y² ≤ 1` (each product and the sum rounded
/// to `f32`, the same on both sides).
#[inline(always)]
pub fn in_quarter_disc(x: f32, y: f32) -> bool {
    x * x + y * y <= 1.0
}

#[cfg(target_arch = "nvptx64")]
mod device {
    use super::super::normal::{log_normal_of, scaled};
    use super::super::{host_counter, key_of, philox4x32_10_gpu};
    use super::*;
    use crate::prim::*;

    /// 16 bytes of shared memory, for one vector store.
    #[repr(C, align(16))]
    struct Quad([u32; 4]);

    /// `out[i] = make(block)[…]` for the `n` stream values from `position`
    /// on, as 32-bit words, one Philox bijection (4 values) per thread and
    /// block. Where the blocks' outputs are 16-byte aligned (a fresh buffer
    /// and a position that is a multiple of 4), each thread writes its 4
    /// with one vector store. Otherwise lane `l` of a warp computes block
    /// `32c + l` for the warp's chunks `c`, the warp stages its 128 words in
    /// shared memory and writes them as 4 rows of 32 consecutive words (a
    /// thread writing its own 4 with scalar stores would leave each store
    /// instruction a 16-byte stride, 4 times the transactions: 2.4 times
    /// slower when measured).
    ///
    /// Contract: `out` valid for writes of `n` words;
    /// `position + n <= HOST_STREAM_LIMIT`; a 1D grid of [`FILL_BLOCK`]
    /// threads per block with [`FILL_SHARED_BYTES`] of dynamic shared
    /// memory.
    #[inline(always)]
    unsafe fn fill_blocks(
        out: *mut u32,
        n: usize,
        seed: u64,
        position: u64,
        make: impl Fn([u32; 4]) -> [u32; 4],
    ) {
        let key = key_of(seed);
        let head = (position % 4) as usize;
        let first = position / 4;
        let blocks = (head + n).div_ceil(4);
        #[allow(
            clippy::manual_is_multiple_of,
            reason = "the form the GPU runs measured and sanitized: the same PTX"
        )]
        let aligned = (out as usize / 4).wrapping_sub(head) % 4 == 0;
        if aligned {
            // Every block's 4 outputs start 16-byte aligned: a thread
            // writes its own with one vector store, and a warp's stores
            // are 512 consecutive bytes. No staging. Blocks
            // `inner_start..inner_end` lie wholly inside the fill and need
            // no checks (a check per block was a tenth of the raw fill's
            // instructions); the one or two partial blocks at the ends go
            // to the first two threads.
            let inner_start = usize::from(head > 0);
            let inner_end = (head + n) / 4;
            // The partial blocks first (block 0, and the last block when it
            // is partial and not block 0 again), by the first two threads,
            // so that nothing stays live past the loop.
            let thread = global_index_x();
            let edge = if head > 0 && thread == 0 {
                Some(0)
            } else if inner_end < blocks && (inner_end > 0 || head == 0) && thread == 1 {
                Some(inner_end)
            } else {
                None
            };
            if let Some(k) = edge {
                let words = make(philox4x32_10_gpu(host_counter(first + k as u64), key));
                unroll!(w in [0 1 2 3] => {
                    let at = 4 * k + w;
                    if at >= head && at - head < n {
                        *out.add(at - head) = words[w];
                    }
                });
            }
            for k in grid_stride_range(inner_start, inner_end) {
                let words = make(philox4x32_10_gpu(host_counter(first + k as u64), key));
                store_v4(out.add(4 * k - head).cast::<Words4>(), words);
            }
            return;
        }
        let lane = lane_id() as usize;
        let stage = dynamic_shared::<u32>().add(thread_idx_x() as usize / 32 * 128);
        let warps = grid_threads_x() / 32;
        // Warp-uniform: every lane runs every chunk, so the warp barriers
        // see the whole warp; lanes past the end compute and write nothing
        // of use.
        let mut chunk = global_index_x() / 32;
        while chunk * 32 < blocks {
            let k = (chunk * 32 + lane) as u64;
            let words = make(philox4x32_10_gpu(host_counter(first + k), key));
            *stage.cast::<Quad>().add(lane) = Quad(words);
            sync_warp(u32::MAX);
            // Word `r · 32 + lane` of the chunk is stream value
            // `4 (first + 32 chunk) + r · 32 + lane`, output `at − head`.
            let start = chunk * 128;
            if start >= head && start + 128 - head <= n {
                // Inside the fill: no checks (the common case).
                let dst = out.add(start - head + lane);
                unroll!(r in [0 1 2 3] => {
                    *dst.add(r * 32) = *stage.add(r * 32 + lane);
                });
            } else {
                unroll!(r in [0 1 2 3] => {
                    let at = start + r * 32 + lane;
                    if at >= head && at - head < n {
                        *out.add(at - head) = *stage.add(r * 32 + lane);
                    }
                });
            }
            sync_warp(u32::MAX);
            chunk += warps;
        }
    }

    /// Raw values or uniforms ([`FillValue`]). Contract: [`fill_blocks`].
    pub unsafe fn fill<T: FillValue>(out: *mut T, n: usize, seed: u64, position: u64) {
        fill_blocks(out.cast(), n, seed, position, |w| w.map(T::word));
    }

    /// Normals of mean `mean` and deviation `stddev`.
    /// Contract: [`fill_blocks`].
    pub unsafe fn fill_normal(
        out: *mut f32,
        n: usize,
        seed: u64,
        position: u64,
        mean: f32,
        stddev: f32,
    ) {
        fill_blocks(out.cast(), n, seed, position, |w| {
            normals_of(w).map(|z| scaled(z, mean, stddev).to_bits())
        });
    }

    /// Log-normals: `exp` of normals of mean `mean` and deviation `stddev`.
    /// Contract: [`fill_blocks`].
    pub unsafe fn fill_log_normal(
        out: *mut f32,
        n: usize,
        seed: u64,
        position: u64,
        mean: f32,
        stddev: f32,
    ) {
        fill_blocks(out.cast(), n, seed, position, |w| {
            normals_of(w).map(|z| log_normal_of(z, mean, stddev).to_bits())
        });
    }

    /// Poisson counts by the inverse-CDF table ([`poisson_of`]). With
    /// `shared > 0` the block first copies the table's `shared` words
    /// (entries and guide) behind the staging area of its shared memory
    /// and looks up there: a warp's guide reads then cost a few shared
    /// bank cycles each, where from global memory they touch up to 32
    /// cache lines (at λ = 3.5 on an H100: 630 → 382 µs for 2^28 counts,
    /// 1.27 → 0.78 × cuRAND's time).
    ///
    /// Contract: [`fill_blocks`], with [`FILL_SHARED_BYTES`]` + 4 · shared`
    /// bytes of dynamic shared memory; `table` valid for reads of `len`
    /// ascending entries and a guide of `2^(32 − shift) + 1` entries, as
    /// [`poisson_of`] reads them, that nothing writes during the launch;
    /// `shared` 0 or exactly that many words.
    #[allow(clippy::too_many_arguments, reason = "the kernel's parameter list")]
    pub unsafe fn fill_poisson(
        out: *mut u32,
        n: usize,
        seed: u64,
        position: u64,
        table: *const u32,
        len: usize,
        base: u32,
        shift: u32,
        shared: u32,
    ) {
        if shared == 0 {
            fill_blocks(out, n, seed, position, |w| {
                w.map(|x| poisson_of(x, base, len, shift, |i| load_nc_u32(table.add(i))))
            });
            return;
        }
        let local = dynamic_shared::<u32>().add(FILL_SHARED_BYTES as usize / 4);
        let mut i = thread_idx_x() as usize;
        while i < shared as usize {
            *local.add(i) = load_nc_u32(table.add(i));
            i += FILL_BLOCK as usize;
        }
        sync_threads();
        fill_blocks(out, n, seed, position, |w| {
            w.map(|x| poisson_of(x, base, len, shift, |i| *local.add(i)))
        });
    }

    /// cuRAND's device-API pattern: thread `t` is `curand_init(seed,
    /// subsequence + t, offset)` and makes `per_thread` draws of `method`,
    /// draw `i` to `out[i · threads + t]` (consecutive threads, consecutive
    /// words).
    ///
    /// Contract: `out` valid for writes of `threads · per_thread` words;
    /// `method` a [`Draw`] code (a bad one traps), `Draw::Poisson` with
    /// `lambda < 64`; any 1D grid.
    #[allow(clippy::too_many_arguments, reason = "the kernel's parameter list")]
    pub unsafe fn draws(
        out: *mut u32,
        threads: usize,
        per_thread: usize,
        seed: u64,
        subsequence: u64,
        offset: u64,
        method: u32,
        mean: f32,
        stddev: f32,
        lambda: f64,
    ) {
        let Some(method) = Draw::from_u32(method) else {
            trap()
        };
        for t in grid_stride(threads) {
            let mut philox = Philox::new(seed, subsequence.wrapping_add(t as u64), offset);
            for i in 0..per_thread {
                *out.add(i * threads + t) = method.draw(&mut philox, mean, stddev, lambda);
            }
        }
    }

    /// The π estimate's kernel: thread `t` is `curand_init(seed, t, 0)`,
    /// draws `draws` points of two uniforms each and writes how many fell
    /// in the quarter disc to `hits[t]`.
    ///
    /// Contract: `hits` valid for writes of `threads` words; any 1D grid.
    pub unsafe fn pi_hits(hits: *mut u32, threads: usize, draws: u32, seed: u64) {
        for t in grid_stride(threads) {
            let mut philox = Philox::new(seed, t as u64, 0);
            let mut inside = 0;
            for _ in 0..draws {
                let (x, y) = (philox.uniform(), philox.uniform());
                inside += in_quarter_disc(x, y) as u32;
            }
            *hits.add(t) = inside;
        }
    }
}

kernels! {
    /// The fills, the per-thread draws and the π estimate.
    pub const KERNELS = {
        (out: *mut T, n: usize, seed: u64, position: u64) {
            /// `u32`: `curandGenerate`; `f32`: `curandGenerateUniform`.
            fn rng_fill<T in u32, f32> = device::fill::<T>;
        }
        (out: *mut T, n: usize, seed: u64, position: u64, mean: f32, stddev: f32) {
            /// `curandGenerateNormal`.
            fn rng_fill_normal<T in f32> = device::fill_normal;
            /// `curandGenerateLogNormal`.
            fn rng_fill_log_normal<T in f32> = device::fill_log_normal;
        }
        (out: *mut T, n: usize, seed: u64, position: u64, table: *const u32, len: usize,
            base: u32, shift: u32, shared: u32) {
            /// Poisson counts by an inverse-CDF table.
            fn rng_fill_poisson<T in u32> = device::fill_poisson;
        }
        (out: *mut T, threads: usize, per_thread: usize, seed: u64, subsequence: u64,
            offset: u64, method: u32, mean: f32, stddev: f32, lambda: f64) {
            /// cuRAND's device API, one generator per thread (`curand_init`).
            fn rng_draws<T in u32> = device::draws;
        }
        (hits: *mut T, threads: usize, draws: u32, seed: u64) {
            /// Monte-Carlo π: hits in the quarter disc per thread.
            fn rng_pi_hits<T in u32> = device::pi_hits;
        }
    }
}
