//! Parallel reduction: lesson 001's seven steps (Harris), lesson 002's warp
//! shuffles with grid-stride loops, lesson 004's multi-launch folding, and the
//! fastest we can write.
//!
//! Steps 1 to 9 compute sums (each step is one idea and the ladder compares
//! them on one operator); step 10, [`ReduceVariant::Vectorized`], also
//! computes minimum and maximum.

use crate::{Op, ScalarType, WARP_SIZE};

/// Threads per block of every step but [`ReduceVariant::CompleteUnroll`]. A
/// power of two: the tree steps halve it down to one.
pub const BLOCK: u32 = 256;

/// The block sizes [`ReduceVariant::CompleteUnroll`] is compiled for, one entry
/// point each; the host picks one.
pub const UNROLL_BLOCKS: [u32; 5] = [64, 128, 256, 512, 1024];

/// Blocks per multiprocessor of the grid-stride steps (`Cascading`,
/// `WarpShuffle`): 8 blocks of 256 threads fill an SM's 2048 thread slots.
pub const GRID_BLOCKS_PER_SM: u32 = 8;

/// Elements per 16-byte load of [`ReduceVariant::Vectorized`].
pub const VECTOR_WIDTH: usize = 4;

/// 16-byte loads each thread of [`ReduceVariant::Vectorized`] issues before it
/// uses the first: enough bytes in flight per SM to cover memory latency.
pub const VECTOR_UNROLL: usize = 4;

/// Bytes of one element (all reduction element types are 4 bytes).
pub const ELEMENT_BYTES: u32 = 4;

/// The reduction ladder, in the lessons' order. Each step's docs say what it
/// changes from the one before and why that is faster; the README's table
/// says by how much on a measured GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceVariant {
    /// Step 1 (001 "reduce0"): one element per thread into shared memory, then
    /// a tree where thread `t` adds its neighbour at distance `s` when
    /// `t % (2s) == 0`. Active threads are scattered over every warp, so all
    /// warps stay busy (divergent) while most lanes idle, and `%` is slow.
    InterleavedDivergent,
    /// Step 2 (001 "reduce1"): thread `t` works on index `2·s·t`, so the active
    /// threads are the first ones and whole warps retire — no divergence. But
    /// the strided indices make lanes of a warp hit the same shared-memory bank
    /// (bank conflicts).
    InterleavedStrided,
    /// Step 3 (001 "reduce2"): sequential addressing — thread `t` adds `t + s`
    /// with `s` halving from the block size: consecutive lanes read consecutive
    /// words, conflict-free.
    Sequential,
    /// Step 4 (001 "reduce3"): each thread adds two elements while loading, so
    /// half the blocks do the same work and no thread idles in the first level.
    FirstAddDuringLoad,
    /// Step 5 (001 "reduce4"): the last 32 partial sums are reduced by one warp
    /// without block barriers. The lesson's `volatile` warp-synchronous code
    /// relies on lanes running in lockstep, which is false since Volta
    /// (independent thread scheduling): a lane may read its neighbour's slot
    /// before the neighbour wrote it. This version separates each read from
    /// the next write with `__syncwarp`, which is correct and nearly as cheap.
    UnrollLastWarp,
    /// Step 6 (001 "reduce5"): the whole tree unrolled for a block size known at
    /// compile time (a const generic, one entry point per size in
    /// [`UNROLL_BLOCKS`]): no loop counters or branches left in the tree.
    CompleteUnroll,
    /// Step 7 (001 "reduce6"): algorithm cascading — a fixed grid of
    /// [`GRID_BLOCKS_PER_SM`] blocks per SM, each thread summing many elements
    /// in a grid-stride loop before the tree. The tree's cost is paid once per
    /// thread, not once per two elements.
    Cascading,
    /// Step 8 (002): grid-stride accumulation, then warp shuffles
    /// (`shfl.sync.down`) reduce in registers; shared memory holds one value
    /// per warp instead of one per thread, and only two block barriers remain.
    WarpShuffle,
    /// Step 9 (004): folding. Each launch adds the back half of the array onto
    /// the front half (`a[i] += a[i + ⌈n/2⌉]`), one element per thread, any
    /// length; ⌈log2 n⌉ launches until one element remains. Simple, but it
    /// reads and writes every intermediate through DRAM: about 2× the bytes of
    /// a one-pass reduction plus a launch per level.
    Folding,
    /// Step 10: the fastest. One launch: 16-byte vector loads through the
    /// read-only path, [`VECTOR_UNROLL`] loads in flight per thread, a grid
    /// sized to the occupancy the SMs allow, warp-shuffle block reductions,
    /// and the last block to finish (found with an atomic ticket) reduces the
    /// per-block partials — no second launch. A slice starting at any element
    /// is handled by a scalar head up to the first 16-byte boundary and a
    /// scalar tail. Sum, min and max.
    Vectorized,
}

impl ReduceVariant {
    /// The ladder, in order.
    pub const ALL: [ReduceVariant; 10] = [
        ReduceVariant::InterleavedDivergent,
        ReduceVariant::InterleavedStrided,
        ReduceVariant::Sequential,
        ReduceVariant::FirstAddDuringLoad,
        ReduceVariant::UnrollLastWarp,
        ReduceVariant::CompleteUnroll,
        ReduceVariant::Cascading,
        ReduceVariant::WarpShuffle,
        ReduceVariant::Folding,
        ReduceVariant::Vectorized,
    ];

    /// The step's number in the ladder, from 1.
    pub const fn step(self) -> u32 {
        match self {
            ReduceVariant::InterleavedDivergent => 1,
            ReduceVariant::InterleavedStrided => 2,
            ReduceVariant::Sequential => 3,
            ReduceVariant::FirstAddDuringLoad => 4,
            ReduceVariant::UnrollLastWarp => 5,
            ReduceVariant::CompleteUnroll => 6,
            ReduceVariant::Cascading => 7,
            ReduceVariant::WarpShuffle => 8,
            ReduceVariant::Folding => 9,
            ReduceVariant::Vectorized => 10,
        }
    }

    /// A short name, as in the benchmark table.
    pub const fn name(self) -> &'static str {
        match self {
            ReduceVariant::InterleavedDivergent => "interleaved_divergent",
            ReduceVariant::InterleavedStrided => "interleaved_strided",
            ReduceVariant::Sequential => "sequential",
            ReduceVariant::FirstAddDuringLoad => "first_add_during_load",
            ReduceVariant::UnrollLastWarp => "unroll_last_warp",
            ReduceVariant::CompleteUnroll => "complete_unroll",
            ReduceVariant::Cascading => "cascading",
            ReduceVariant::WarpShuffle => "warp_shuffle",
            ReduceVariant::Folding => "folding",
            ReduceVariant::Vectorized => "vectorized",
        }
    }

    /// Whether this step computes `op` (steps 1-9: sums only).
    pub const fn supports(self, op: Op) -> bool {
        matches!((self, op), (_, Op::Sum) | (ReduceVariant::Vectorized, _))
    }

    /// The entry point's base name (without the type suffix) for `op` and, for
    /// `CompleteUnroll`, the block size; `None` for a combination that has no
    /// entry point.
    pub const fn entry_base(self, op: Op, block: u32) -> Option<&'static str> {
        if !self.supports(op) {
            return None;
        }
        Some(match self {
            ReduceVariant::InterleavedDivergent => "reduce_interleaved_divergent",
            ReduceVariant::InterleavedStrided => "reduce_interleaved_strided",
            ReduceVariant::Sequential => "reduce_sequential",
            ReduceVariant::FirstAddDuringLoad => "reduce_first_add",
            ReduceVariant::UnrollLastWarp => "reduce_unroll_last_warp",
            ReduceVariant::CompleteUnroll => match block {
                64 => "reduce_complete_unroll_64",
                128 => "reduce_complete_unroll_128",
                256 => "reduce_complete_unroll_256",
                512 => "reduce_complete_unroll_512",
                1024 => "reduce_complete_unroll_1024",
                _ => return None,
            },
            ReduceVariant::Cascading => "reduce_cascading",
            ReduceVariant::WarpShuffle => "reduce_warp_shuffle",
            ReduceVariant::Folding => "reduce_fold",
            ReduceVariant::Vectorized => match op {
                Op::Sum => "reduce_vectorized_sum",
                Op::Min => "reduce_vectorized_min",
                Op::Max => "reduce_vectorized_max",
            },
        })
    }

    /// Elements one block consumes in a pass of the one-element-per-thread
    /// steps (1-6); the grid-stride steps take any number.
    pub const fn elements_per_block(self, block: u32) -> u32 {
        match self {
            ReduceVariant::InterleavedDivergent
            | ReduceVariant::InterleavedStrided
            | ReduceVariant::Sequential
            | ReduceVariant::Folding => block,
            _ => 2 * block,
        }
    }

    /// Dynamic shared memory a block of `block` threads needs.
    pub const fn shared_bytes(self, block: u32) -> u32 {
        match self {
            ReduceVariant::Folding => 0,
            ReduceVariant::WarpShuffle => block / WARP_SIZE * ELEMENT_BYTES,
            // Warp sums, then the block's "am I last" flag.
            ReduceVariant::Vectorized => block / WARP_SIZE * ELEMENT_BYTES + 4,
            _ => block * ELEMENT_BYTES,
        }
    }
}

/// Every `(operator, variant)` the library compiles: the ladder's sums, and
/// min and max of the fastest step. Tests and benchmarks iterate over it.
pub const CASES: [(Op, ReduceVariant); 12] = {
    let mut cases = [(Op::Sum, ReduceVariant::Vectorized); 12];
    let mut i = 0;
    while i < ReduceVariant::ALL.len() {
        cases[i] = (Op::Sum, ReduceVariant::ALL[i]);
        i += 1;
    }
    cases[10] = (Op::Min, ReduceVariant::Vectorized);
    cases[11] = (Op::Max, ReduceVariant::Vectorized);
    cases
};

/// The element types reductions are compiled for.
pub const TYPES: [ScalarType; 3] = ScalarType::ALL;

#[cfg(target_arch = "nvptx64")]
mod device {
    //! Kernel bodies. Common contract of the ladder bodies (steps 1-8):
    //! `x` is valid for `n` reads; `partials` for one write per block
    //! (`gridDim.x`); the block is `blockDim.x` threads as the host's variant
    //! table says (a power of two, at least 64) with `shared_bytes` of dynamic
    //! shared memory; the grid is 1D.
    use super::*;
    use crate::prim::*;
    use crate::scalar::Scalar;

    #[inline(always)]
    unsafe fn load_or_zero<T: Scalar>(x: *const T, i: usize, n: usize) -> T {
        if i < n { *x.add(i) } else { T::ZERO }
    }

    #[inline(always)]
    unsafe fn add_to<T: Scalar>(s: *mut T, to: u32, from: u32) {
        *s.add(to as usize) = (*s.add(to as usize)).add(*s.add(from as usize));
    }

    /// Lane 0 gets the sum of `s[0..64]`; `tid < 32`. Each read of a
    /// neighbour's slot is separated from that neighbour's next write by
    /// `__syncwarp`, which orders them under independent thread scheduling.
    #[inline(always)]
    unsafe fn warp_tail<T: Scalar>(s: *mut T, tid: u32) -> T {
        let tid = tid as usize;
        let mut v = (*s.add(tid)).add(*s.add(tid + 32));
        let mut offset = 16;
        while offset > 0 {
            sync_warp(FULL_MASK);
            *s.add(tid) = v;
            sync_warp(FULL_MASK);
            v = v.add(*s.add(tid + offset));
            offset >>= 1;
        }
        v
    }

    /// The tree of steps 6 and 7 for a compile-time block size `B`: `s[tid]`
    /// holds this thread's value and a barrier has passed. Thread 0 returns
    /// the block's sum.
    #[inline(always)]
    unsafe fn unrolled_tree<T: Scalar, const B: u32>(s: *mut T, tid: u32) -> T {
        if B >= 1024 {
            if tid < 512 {
                add_to(s, tid, tid + 512);
            }
            sync_threads();
        }
        if B >= 512 {
            if tid < 256 {
                add_to(s, tid, tid + 256);
            }
            sync_threads();
        }
        if B >= 256 {
            if tid < 128 {
                add_to(s, tid, tid + 128);
            }
            sync_threads();
        }
        if B >= 128 {
            if tid < 64 {
                add_to(s, tid, tid + 64);
            }
            sync_threads();
        }
        if tid < 32 { warp_tail(s, tid) } else { T::ZERO }
    }

    /// Combines the values of a warp with shuffles; lane 0 gets the result.
    #[inline(always)]
    fn warp_reduce<T: Scalar>(op: Op, mut v: T) -> T {
        let mut delta = WARP_SIZE / 2;
        while delta > 0 {
            v = op.combine(v, shfl_down(v, delta));
            delta >>= 1;
        }
        v
    }

    /// Combines one value per thread over the block; thread 0 gets the result.
    /// `warp_sums` holds `blockDim.x / 32` elements; every thread calls this.
    #[inline(always)]
    unsafe fn block_reduce<T: Scalar>(op: Op, v: T, warp_sums: *mut T) -> T {
        let tid = thread_idx_x();
        let (warp, lane) = (tid / WARP_SIZE, tid % WARP_SIZE);
        let v = warp_reduce(op, v);
        if lane == 0 {
            *warp_sums.add(warp as usize) = v;
        }
        sync_threads();
        let mut total = op.identity();
        if warp == 0 {
            if lane < block_dim_x() / WARP_SIZE {
                total = *warp_sums.add(lane as usize);
            }
            total = warp_reduce(op, total);
        }
        total
    }

    /// Step 1. See [`ReduceVariant::InterleavedDivergent`].
    pub unsafe fn interleaved_divergent<T: Scalar>(x: *const T, partials: *mut T, n: usize) {
        let s = dynamic_shared::<T>();
        let tid = thread_idx_x();
        *s.add(tid as usize) = load_or_zero(x, global_index_x(), n);
        sync_threads();
        let mut stride = 1;
        while stride < block_dim_x() {
            if tid % (2 * stride) == 0 {
                add_to(s, tid, tid + stride);
            }
            sync_threads();
            stride *= 2;
        }
        if tid == 0 {
            *partials.add(block_idx_x() as usize) = *s;
        }
    }

    /// Step 2. See [`ReduceVariant::InterleavedStrided`].
    pub unsafe fn interleaved_strided<T: Scalar>(x: *const T, partials: *mut T, n: usize) {
        let s = dynamic_shared::<T>();
        let tid = thread_idx_x();
        *s.add(tid as usize) = load_or_zero(x, global_index_x(), n);
        sync_threads();
        let mut stride = 1;
        while stride < block_dim_x() {
            let index = 2 * stride * tid;
            if index < block_dim_x() {
                add_to(s, index, index + stride);
            }
            sync_threads();
            stride *= 2;
        }
        if tid == 0 {
            *partials.add(block_idx_x() as usize) = *s;
        }
    }

    /// Halving tree over `s[0..blockDim.x]` down to `s[0]`, stopping once
    /// `stride <= until`.
    #[inline(always)]
    unsafe fn sequential_tree<T: Scalar>(s: *mut T, tid: u32, until: u32) {
        let mut stride = block_dim_x() / 2;
        while stride > until {
            if tid < stride {
                add_to(s, tid, tid + stride);
            }
            sync_threads();
            stride >>= 1;
        }
    }

    /// Step 3. See [`ReduceVariant::Sequential`].
    pub unsafe fn sequential<T: Scalar>(x: *const T, partials: *mut T, n: usize) {
        let s = dynamic_shared::<T>();
        let tid = thread_idx_x();
        *s.add(tid as usize) = load_or_zero(x, global_index_x(), n);
        sync_threads();
        sequential_tree(s, tid, 0);
        if tid == 0 {
            *partials.add(block_idx_x() as usize) = *s;
        }
    }

    /// Loads this thread's two elements of a `2 * blockDim.x` chunk, adds them
    /// and stores the sum to `s[tid]`, then waits for the block.
    #[inline(always)]
    unsafe fn load_two<T: Scalar>(x: *const T, s: *mut T, n: usize) {
        let tid = thread_idx_x();
        let block = block_dim_x() as usize;
        let i = block_idx_x() as usize * 2 * block + tid as usize;
        *s.add(tid as usize) = load_or_zero(x, i, n).add(load_or_zero(x, i + block, n));
        sync_threads();
    }

    /// Step 4. See [`ReduceVariant::FirstAddDuringLoad`].
    pub unsafe fn first_add<T: Scalar>(x: *const T, partials: *mut T, n: usize) {
        let s = dynamic_shared::<T>();
        load_two(x, s, n);
        let tid = thread_idx_x();
        sequential_tree(s, tid, 0);
        if tid == 0 {
            *partials.add(block_idx_x() as usize) = *s;
        }
    }

    /// Step 5. See [`ReduceVariant::UnrollLastWarp`].
    pub unsafe fn unroll_last_warp<T: Scalar>(x: *const T, partials: *mut T, n: usize) {
        let s = dynamic_shared::<T>();
        load_two(x, s, n);
        let tid = thread_idx_x();
        sequential_tree(s, tid, 32);
        if tid < 32 {
            let v = warp_tail(s, tid);
            if tid == 0 {
                *partials.add(block_idx_x() as usize) = v;
            }
        }
    }

    /// Step 6, for `blockDim.x == B`. See [`ReduceVariant::CompleteUnroll`].
    pub unsafe fn complete_unroll<T: Scalar, const B: u32>(
        x: *const T,
        partials: *mut T,
        n: usize,
    ) {
        let s = dynamic_shared::<T>();
        load_two(x, s, n);
        let tid = thread_idx_x();
        let v = unrolled_tree::<T, B>(s, tid);
        if tid == 0 {
            *partials.add(block_idx_x() as usize) = v;
        }
    }

    /// Step 7, for `blockDim.x == BLOCK`. See [`ReduceVariant::Cascading`].
    pub unsafe fn cascading<T: Scalar>(x: *const T, partials: *mut T, n: usize) {
        let s = dynamic_shared::<T>();
        let tid = thread_idx_x();
        let block = BLOCK as usize;
        let step = 2 * block * grid_dim_x() as usize;
        let mut i = block_idx_x() as usize * 2 * block + tid as usize;
        let mut v = T::ZERO;
        while i < n {
            v = v.add(*x.add(i));
            if i + block < n {
                v = v.add(*x.add(i + block));
            }
            i += step;
        }
        *s.add(tid as usize) = v;
        sync_threads();
        let v = unrolled_tree::<T, BLOCK>(s, tid);
        if tid == 0 {
            *partials.add(block_idx_x() as usize) = v;
        }
    }

    /// Step 8. See [`ReduceVariant::WarpShuffle`].
    pub unsafe fn warp_shuffle<T: Scalar>(x: *const T, partials: *mut T, n: usize) {
        let mut v = T::ZERO;
        for i in grid_stride(n) {
            v = v.add(*x.add(i));
        }
        let v = block_reduce(Op::Sum, v, dynamic_shared::<T>());
        if thread_idx_x() == 0 {
            *partials.add(block_idx_x() as usize) = v;
        }
    }

    /// Step 9: one fold, `dst[i] = src[i] + src[i + ⌈n/2⌉]`; the middle element
    /// of an odd `n` is copied; `n == 0` writes the identity to `dst[0]`.
    ///
    /// # Safety
    /// `src` valid for `n` reads, `dst` for `max(⌈n/2⌉, 1)` writes; `dst` may
    /// equal `src` (each thread reads only its own slot of the front half);
    /// the grid covers `max(⌈n/2⌉, 1)` threads.
    pub unsafe fn fold<T: Scalar>(src: *const T, dst: *mut T, n: usize) {
        let i = global_index_x();
        let half = n.div_ceil(2);
        if i < n / 2 {
            *dst.add(i) = (*src.add(i)).add(*src.add(i + half));
        } else if i < half {
            *dst.add(i) = *src.add(i);
        } else if n == 0 && i == 0 {
            *dst = T::ZERO;
        }
    }

    /// Combines the four elements of a 16-byte word group as a small tree.
    #[inline(always)]
    fn combine_words<T: Scalar>(op: Op, w: Words4) -> T {
        let a = op.combine(T::from_bits(w[0]), T::from_bits(w[1]));
        let b = op.combine(T::from_bits(w[2]), T::from_bits(w[3]));
        op.combine(a, b)
    }

    /// Step 10. See [`ReduceVariant::Vectorized`].
    ///
    /// # Safety
    /// `x` valid for `n` reads and 4-byte aligned, not written during the
    /// kernel; `partials` valid for `gridDim.x` elements; `counter` is zero
    /// when the kernel starts and used by no concurrent kernel (the kernel
    /// leaves it zero); `out` valid for one write; 1D grid, `blockDim.x` a
    /// multiple of 32 with `shared_bytes(blockDim.x)` of shared memory.
    pub unsafe fn vectorized<T: Scalar>(
        op: Op,
        x: *const T,
        n: usize,
        partials: *mut T,
        counter: *mut u32,
        out: *mut T,
    ) {
        let mut carve = SharedCarver::new();
        let warp_sums = carve.take::<T>((block_dim_x() / WARP_SIZE) as usize);
        let is_last = carve.take::<u32>(1);

        let gtid = global_index_x();
        let threads = grid_threads_x();
        // Scalar head up to the first 16-byte boundary.
        let misaligned = (x as usize / ELEMENT_BYTES as usize) % VECTOR_WIDTH;
        let head = ((VECTOR_WIDTH - misaligned) % VECTOR_WIDTH).min(n);
        let mut acc = op.identity();
        if gtid < head {
            acc = op.combine(acc, *x.add(gtid));
        }
        // Aligned body, VECTOR_UNROLL independent 16-byte loads in flight.
        let body = x.add(head).cast::<Words4>();
        let vectors = (n - head) / VECTOR_WIDTH;
        let mut i = gtid;
        while i + (VECTOR_UNROLL - 1) * threads < vectors {
            // Index loops over a constant range: fully unrolled, `w` stays in
            // registers (an iterator over `w` by value spilled it to local memory).
            let mut w = [[0u32; 4]; VECTOR_UNROLL];
            for u in 0..VECTOR_UNROLL {
                w[u] = load_nc_v4(body.add(i + u * threads));
            }
            for u in 0..VECTOR_UNROLL {
                acc = op.combine(acc, combine_words::<T>(op, w[u]));
            }
            i += VECTOR_UNROLL * threads;
        }
        while i < vectors {
            acc = op.combine(acc, combine_words::<T>(op, load_nc_v4(body.add(i))));
            i += threads;
        }
        // Scalar tail: fewer than VECTOR_WIDTH elements.
        let tail = head + vectors * VECTOR_WIDTH + gtid;
        if tail < n {
            acc = op.combine(acc, *x.add(tail));
        }

        let block_total = block_reduce(op, acc, warp_sums);
        if thread_idx_x() == 0 {
            *partials.add(block_idx_x() as usize) = block_total;
            // Publish the partial before taking a ticket.
            thread_fence();
            let ticket = atomic_add_u32(counter, 1);
            *is_last = (ticket == grid_dim_x() - 1) as u32;
        }
        sync_threads();
        if *is_last != 0 {
            // Every other block's partial is published; read them from L2.
            thread_fence();
            let mut acc = op.identity();
            let mut j = thread_idx_x();
            while j < grid_dim_x() {
                acc = op.combine(
                    acc,
                    T::from_bits(load_cg_u32(partials.add(j as usize).cast())),
                );
                j += block_dim_x();
            }
            let total = block_reduce(op, acc, warp_sums);
            if thread_idx_x() == 0 {
                *out = total;
                *counter = 0;
            }
        }
    }
}

kernels! {
    /// Every reduction entry point.
    pub const KERNELS = {
        fn reduce_interleaved_divergent<T in f32, i32, u32>(x: *const T, partials: *mut T, n: usize)
            => device::interleaved_divergent(x, partials, n);
        fn reduce_interleaved_strided<T in f32, i32, u32>(x: *const T, partials: *mut T, n: usize)
            => device::interleaved_strided(x, partials, n);
        fn reduce_sequential<T in f32, i32, u32>(x: *const T, partials: *mut T, n: usize)
            => device::sequential(x, partials, n);
        fn reduce_first_add<T in f32, i32, u32>(x: *const T, partials: *mut T, n: usize)
            => device::first_add(x, partials, n);
        fn reduce_unroll_last_warp<T in f32, i32, u32>(x: *const T, partials: *mut T, n: usize)
            => device::unroll_last_warp(x, partials, n);
        fn reduce_complete_unroll_64<T in f32, i32, u32>(x: *const T, partials: *mut T, n: usize)
            => device::complete_unroll::<T, 64>(x, partials, n);
        fn reduce_complete_unroll_128<T in f32, i32, u32>(x: *const T, partials: *mut T, n: usize)
            => device::complete_unroll::<T, 128>(x, partials, n);
        fn reduce_complete_unroll_256<T in f32, i32, u32>(x: *const T, partials: *mut T, n: usize)
            => device::complete_unroll::<T, 256>(x, partials, n);
        fn reduce_complete_unroll_512<T in f32, i32, u32>(x: *const T, partials: *mut T, n: usize)
            => device::complete_unroll::<T, 512>(x, partials, n);
        fn reduce_complete_unroll_1024<T in f32, i32, u32>(x: *const T, partials: *mut T, n: usize)
            => device::complete_unroll::<T, 1024>(x, partials, n);
        fn reduce_cascading<T in f32, i32, u32>(x: *const T, partials: *mut T, n: usize)
            => device::cascading(x, partials, n);
        fn reduce_warp_shuffle<T in f32, i32, u32>(x: *const T, partials: *mut T, n: usize)
            => device::warp_shuffle(x, partials, n);
        fn reduce_fold<T in f32, i32, u32>(src: *const T, dst: *mut T, n: usize)
            => device::fold(src, dst, n);
        fn reduce_vectorized_sum<T in f32, i32, u32>(
            x: *const T, n: usize, partials: *mut T, counter: *mut u32, out: *mut T)
            => device::vectorized(Op::Sum, x, n, partials, counter, out);
        fn reduce_vectorized_min<T in f32, i32, u32>(
            x: *const T, n: usize, partials: *mut T, counter: *mut u32, out: *mut T)
            => device::vectorized(Op::Min, x, n, partials, counter, out);
        fn reduce_vectorized_max<T in f32, i32, u32>(
            x: *const T, n: usize, partials: *mut T, counter: *mut u32, out: *mut T)
            => device::vectorized(Op::Max, x, n, partials, counter, out);
    }
}
