//! Parallel reduction: the seven steps of Harris's *Optimizing Parallel
//! Reduction in CUDA*, the warp-shuffle reduction with grid-stride loops
//! (Luitjens, *Faster Parallel Reductions on Kepler*), the folding
//! multi-launch reduction, and the fastest we can write.
//!
//! Steps 1 to 9 compute sums (each step is one idea and the ladder compares
//! them on one operator); step 10, [`ReduceVariant::Vectorized`], also
//! computes minimum and maximum.

use crate::{Op, WARP_SIZE};

/// Threads per block of every step but [`ReduceVariant::CompleteUnroll`]. A
/// power of two: the tree steps halve it down to one.
#[doc(hidden)]
pub const BLOCK: u32 = 256;

/// The block sizes [`ReduceVariant::CompleteUnroll`] is compiled for, one entry
/// point each; the host picks one.
#[doc(hidden)]
pub const UNROLL_BLOCKS: [u32; 5] = [64, 128, 256, 512, 1024];

/// Blocks per multiprocessor of the grid-stride steps (`Cascading`,
/// `WarpShuffle`): 8 blocks of 256 threads fill an SM's 2048 thread slots.
#[doc(hidden)]
pub const GRID_BLOCKS_PER_SM: u32 = 8;

/// Threads per block of [`ReduceVariant::Vectorized`]: with the grid sized to
/// the blocks the SMs hold at once, 1024-thread blocks (two per SM) read
/// 2-3% faster than 256-thread ones on an H100 and an H200 (fewer, larger
/// blocks to start and to combine).
#[doc(hidden)]
pub const VECTOR_BLOCK: u32 = 1024;

/// Threads per block of [`ReduceVariant::Vectorized`] for inputs of at most
/// [`VECTOR_SMALL_MAX`] elements, which one such block covers with all its
/// loads in flight: one block either way, and 8 warps to start and to
/// combine instead of 32 (the shape of CUB's single-tile kernel, which
/// took 4.3 µs for 2^12 elements on an H100 against our 4.6 with 1024
/// threads, the stream held). Measured with it (2^12, stream held): 4.3
/// µs on the H100 against CUB's 4.2, 4.0 on the H200 against 3.8; with
/// the one-block path of its own since, 3.78 on the H200 against 3.81.
#[doc(hidden)]
pub const VECTOR_SMALL_BLOCK: u32 = 256;

/// The most elements [`VECTOR_SMALL_BLOCK`] threads cover with
/// [`VECTOR_UNROLL`] 16-byte loads each: 4 096.
#[doc(hidden)]
pub const VECTOR_SMALL_MAX: usize = VECTOR_SMALL_BLOCK as usize * VECTOR_UNROLL * VECTOR_WIDTH;

/// Elements per 16-byte load of [`ReduceVariant::Vectorized`].
#[doc(hidden)]
pub const VECTOR_WIDTH: usize = 4;

/// 16-byte loads each thread of [`ReduceVariant::Vectorized`] issues before it
/// uses the first: enough bytes in flight per SM to cover memory latency.
#[doc(hidden)]
pub const VECTOR_UNROLL: usize = 4;

/// Bytes of one element (all reduction element types are 4 bytes).
#[doc(hidden)]
pub const ELEMENT_BYTES: u32 = 4;

/// Shared memory a reduction step's block uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SharedMemory {
    /// None.
    None,
    /// One element per thread: the tree steps.
    PerThread,
    /// One element per warp: block reductions with shuffles.
    PerWarp,
    /// One element per warp and the "last block" flag of the single pass.
    PerWarpAndFlag,
}

/// How a reduction step is launched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReduceShape {
    /// The kernel (base name; `reduce_vectorized_<op>` for step 10).
    pub kernel: &'static str,
    /// The block sizes it runs with; the host uses the first unless told
    /// otherwise (`CompleteUnroll` picks the smallest that covers a small
    /// input).
    pub blocks: &'static [u32],
    /// Elements one thread consumes in a pass of the one-element-per-thread
    /// steps (1 or 2; the grid-stride steps size their grid with it too).
    pub per_thread: u32,
    /// Dynamic shared memory per block.
    pub shared: SharedMemory,
    /// The operators it computes.
    pub ops: &'static [Op],
}

const SUM: &[Op] = &[Op::Sum];

const fn shape(kernel: &'static str, per_thread: u32, shared: SharedMemory) -> ReduceShape {
    ReduceShape {
        kernel,
        blocks: &[BLOCK],
        per_thread,
        shared,
        ops: SUM,
    }
}

ladder! {
    /// The reduction ladder, in the lessons' order. Each step's docs say what
    /// it changes from the one before and why that is faster; the table of
    /// docs/reduce.md says by how much on a measured GPU.
    pub enum ReduceVariant("reduce"): ReduceShape {
        /// Step 1 (001 "reduce0"): one element per thread into shared memory,
        /// then a tree where thread `t` adds its neighbour at distance `s`
        /// when `t % (2s) == 0`. Active threads are scattered over every
        /// warp, so all warps stay busy (divergent) while most lanes idle,
        /// and `%` is slow.
        InterleavedDivergent = "interleaved_divergent"
            => shape("reduce_interleaved_divergent", 1, SharedMemory::PerThread),
        /// Step 2 (001 "reduce1"): thread `t` works on index `2·s·t`, so the
        /// active threads are the first ones and whole warps retire — no
        /// divergence. But the strided indices make lanes of a warp hit the
        /// same shared-memory bank (bank conflicts).
        InterleavedStrided = "interleaved_strided"
            => shape("reduce_interleaved_strided", 1, SharedMemory::PerThread),
        /// Step 3 (001 "reduce2"): sequential addressing — thread `t` adds
        /// `t + s` with `s` halving from the block size: consecutive lanes
        /// read consecutive words, conflict-free.
        Sequential = "sequential" => shape("reduce_sequential", 1, SharedMemory::PerThread),
        /// Step 4 (001 "reduce3"): each thread adds two elements while
        /// loading, so half the blocks do the same work and no thread idles
        /// in the first level.
        FirstAddDuringLoad = "first_add_during_load"
            => shape("reduce_first_add", 2, SharedMemory::PerThread),
        /// Step 5 (001 "reduce4"): the last 32 partial sums are reduced by
        /// one warp without block barriers. The lesson's `volatile`
        /// warp-synchronous code relies on lanes running in lockstep, which
        /// is false since Volta (independent thread scheduling): a lane may
        /// read its neighbour's slot before the neighbour wrote it. This
        /// version separates each read from the next write with
        /// `__syncwarp`, which is correct and nearly as cheap.
        UnrollLastWarp = "unroll_last_warp"
            => shape("reduce_unroll_last_warp", 2, SharedMemory::PerThread),
        /// Step 6 (001 "reduce5"): the whole tree unrolled for a block size
        /// known at compile time (a const generic, one entry point per size
        /// in `UNROLL_BLOCKS`): no loop counters or branches left in the
        /// tree.
        CompleteUnroll = "complete_unroll" => ReduceShape {
            blocks: &UNROLL_BLOCKS,
            ..shape("reduce_complete_unroll", 2, SharedMemory::PerThread)
        },
        /// Step 7 (001 "reduce6"): algorithm cascading — a fixed grid of
        /// `GRID_BLOCKS_PER_SM` blocks per SM, each thread summing many
        /// elements in a grid-stride loop before the tree. The tree's cost is
        /// paid once per thread, not once per two elements.
        Cascading = "cascading" => shape("reduce_cascading", 2, SharedMemory::PerThread),
        /// Step 8 (002): grid-stride accumulation, then warp shuffles
        /// (`shfl.sync.down`) reduce in registers; shared memory holds one
        /// value per warp instead of one per thread, and only two block
        /// barriers remain.
        WarpShuffle = "warp_shuffle" => shape("reduce_warp_shuffle", 2, SharedMemory::PerWarp),
        /// Step 9 (004): folding. Each launch adds the back half of the array
        /// onto the front half (`a[i] += a[i + ⌈n/2⌉]`), one element per
        /// thread, any length; ⌈log2 n⌉ launches until one element remains.
        /// Simple, but it reads and writes every intermediate through DRAM:
        /// about 2× the bytes of a one-pass reduction plus a launch per level.
        Folding = "folding" => shape("reduce_fold", 1, SharedMemory::None),
        /// Step 10: the fastest. One launch: 16-byte vector loads through the
        /// read-only path, `VECTOR_UNROLL` loads in flight per thread, a
        /// grid sized to the occupancy the SMs allow, warp-shuffle block
        /// reductions, and the last block to finish (found with an atomic
        /// ticket whose acquire-release order publishes the partials, no
        /// separate fences: `prim::ticket_u32`) reduces the
        /// per-block partials — no second launch. An input one block
        /// covers (one load per thread and vector slot) takes a path of its
        /// own, where latency is the cost: every load issued at once with
        /// 32-bit indices, the warp totals combined by thread 0, the total
        /// written directly (no partial, no ticket). A slice
        /// starting at any element is handled by a scalar head up to the
        /// first 16-byte boundary and a scalar tail. Sum, min and max.
        Vectorized = "vectorized" => ReduceShape {
            blocks: &[VECTOR_BLOCK, VECTOR_SMALL_BLOCK],
            ops: &Op::ALL,
            ..shape("reduce_vectorized", 0, SharedMemory::PerWarpAndFlag)
        },
    }
    default = Vectorized;
}

impl ReduceVariant {
    /// Whether this step computes `op` (steps 1-9: sums only).
    pub const fn supports(self, op: Op) -> bool {
        let ops = self.shape().ops;
        let mut i = 0;
        while i < ops.len() {
            if ops[i] as u8 == op as u8 {
                return true;
            }
            i += 1;
        }
        false
    }

    /// Elements one block consumes in a pass of the one-element-per-thread
    /// steps (1-6); the grid-stride steps take any number.
    pub const fn elements_per_block(self, block: u32) -> u32 {
        self.shape().per_thread * block
    }

    /// Dynamic shared memory a block of `block` threads needs.
    pub const fn shared_bytes(self, block: u32) -> u32 {
        match self.shape().shared {
            SharedMemory::None => 0,
            SharedMemory::PerThread => block * ELEMENT_BYTES,
            SharedMemory::PerWarp => block / WARP_SIZE * ELEMENT_BYTES,
            SharedMemory::PerWarpAndFlag => block / WARP_SIZE * ELEMENT_BYTES + 4,
        }
    }
}

/// Every `(operator, variant)` the library compiles: the ladder's sums, and
/// min and max of the fastest step. Tests and benchmarks iterate over it.
#[doc(hidden)]
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

    /// Addition, the combining operation of steps 1-9.
    #[inline(always)]
    fn add<T: Scalar>(a: T, b: T) -> T {
        a.add(b)
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
        if tid < 32 {
            warp_tail(s, tid, add)
        } else {
            T::ZERO
        }
    }

    /// [`block_reduce`] with `op`.
    #[inline(always)]
    unsafe fn block_reduce_op<T: Scalar>(op: Op, v: T, warp_sums: *mut T) -> T {
        block_reduce(v, op.identity(), move |a, b| op.combine(a, b), warp_sums)
    }

    /// Step 1. See [`ReduceVariant::InterleavedDivergent`].
    pub unsafe fn interleaved_divergent<T: Scalar>(x: *const T, partials: *mut T, n: usize) {
        let s = dynamic_shared::<T>();
        let tid = thread_idx_x();
        *s.add(tid as usize) = load_or_zero(x, global_index_x(), n);
        sync_threads();
        let mut stride = 1;
        while stride < block_dim_x() {
            #[allow(
                clippy::manual_is_multiple_of,
                reason = "step 1 is the lesson's kernel: its slow `%` is what step 2 removes"
            )]
            let active = tid % (2 * stride) == 0;
            if active {
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

    /// Step 3. See [`ReduceVariant::Sequential`].
    pub unsafe fn sequential<T: Scalar>(x: *const T, partials: *mut T, n: usize) {
        let s = dynamic_shared::<T>();
        let tid = thread_idx_x();
        *s.add(tid as usize) = load_or_zero(x, global_index_x(), n);
        sync_threads();
        shared_tree(s, 0, add);
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
        shared_tree(s, 0, add);
        if tid == 0 {
            *partials.add(block_idx_x() as usize) = *s;
        }
    }

    /// Step 5. See [`ReduceVariant::UnrollLastWarp`].
    pub unsafe fn unroll_last_warp<T: Scalar>(x: *const T, partials: *mut T, n: usize) {
        let s = dynamic_shared::<T>();
        load_two(x, s, n);
        let tid = thread_idx_x();
        shared_tree(s, 32, add);
        if tid < 32 {
            let v = warp_tail(s, tid, add);
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
        let v = block_reduce(v, T::ZERO, add, dynamic_shared::<T>());
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

    /// Elements one block covers with [`VECTOR_UNROLL`] 16-byte loads per
    /// thread: what [`single_tile`] takes.
    #[inline(always)]
    fn single_tile_capacity() -> usize {
        (block_dim_x() as usize) * VECTOR_UNROLL * VECTOR_WIDTH
    }

    /// Step 10 for a grid of one block that covers the whole input (the
    /// host's launch for at most [`VECTOR_SMALL_MAX`] elements, or 4 times
    /// that with [`VECTOR_BLOCK`] threads), where the time is latency, not
    /// bandwidth: every load (head, body vectors, tail) issued at once with
    /// 32-bit indices, and the warp totals combined by thread 0 in order
    /// instead of by a second round of shuffles. The grid-stride body spent
    /// some 170 instructions per warp on 64-bit bounds and two shuffle
    /// rounds, 2.5 times CUB's single-tile kernel; in a CUDA C++ probe on
    /// an H200 (2^12 `f32`, µs) this shape took 3.84 to 3.97 against the
    /// grid-stride body's 4.13 to 4.22 and CUB's 3.97 to 4.10.
    ///
    /// # Safety
    /// As [`vectorized`], with `n <= single_tile_capacity()` and a grid of
    /// one block.
    #[inline(always)]
    unsafe fn single_tile<T: Scalar>(op: Op, x: *const T, n: u32, warp_sums: *mut T, out: *mut T) {
        let tid = thread_idx_x();
        let threads = block_dim_x();
        let per_vector = VECTOR_WIDTH as u32;
        let misaligned = ((x as usize % 16) / size_of::<T>()) as u32;
        let head = Ord::min((per_vector - misaligned) % per_vector, n);
        let vectors = (n - head) / per_vector;
        let tail = head + vectors * per_vector + tid;
        // SAFETY: `head <= n`; the body starts on a 16-byte boundary.
        let body = unsafe { x.add(head as usize) }.cast::<Words4>();
        let mut acc = op.identity();
        if tid < head {
            // SAFETY: `tid < head <= n`.
            acc = op.combine(acc, unsafe { *x.add(tid as usize) });
        }
        if tail < n {
            // SAFETY: `tail < n`.
            acc = op.combine(acc, unsafe { *x.add(tail as usize) });
        }
        let mut w = [[0u32; 4]; VECTOR_UNROLL];
        for u in 0..VECTOR_UNROLL {
            let v = tid + u as u32 * threads;
            if v < vectors {
                // SAFETY: `v < vectors`: inside the body.
                w[u] = unsafe { load_nc_v4(body.add(v as usize)) };
            }
        }
        for u in 0..VECTOR_UNROLL {
            if tid + (u as u32) * threads < vectors {
                acc = op.combine(acc, combine_words::<T>(op, w[u]));
            }
        }
        let warp_total = warp_reduce(acc, move |a, b| op.combine(a, b));
        if tid.is_multiple_of(WARP_SIZE) {
            // SAFETY: `warp_sums` holds one element per warp (caller).
            unsafe { *warp_sums.add((tid / WARP_SIZE) as usize) = warp_total };
        }
        sync_threads();
        if tid == 0 {
            let mut total = op.identity();
            for j in 0..threads / WARP_SIZE {
                // SAFETY: as above; the barrier ordered the writes first.
                total = op.combine(total, unsafe { *warp_sums.add(j as usize) });
            }
            // SAFETY: `out` is valid for one write (caller).
            unsafe { *out = total };
        }
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

        if grid_dim_x() == 1 && n <= single_tile_capacity() {
            single_tile(op, x, n as u32, warp_sums, out);
            return;
        }
        let acc = stream_words::<T, T, VECTOR_UNROLL>(
            x,
            n,
            global_index_x(),
            grid_threads_x(),
            op.identity(),
            |acc, v| op.combine(acc, v),
            |acc, w| op.combine(acc, combine_words::<T>(op, w)),
        );

        let block_total = block_reduce_op(op, acc, warp_sums);
        if grid_dim_x() == 1 {
            // One block: its total is the result; no partial, no ticket.
            if thread_idx_x() == 0 {
                *out = block_total;
            }
            return;
        }
        if thread_idx_x() == 0 {
            // Thread 0's own write: the ticket it takes next publishes it.
            *partials.add(block_idx_x() as usize) = block_total;
        }
        if last_to_arrive(counter, grid_dim_x(), is_last) {
            // Every other block's partial is published to this block (its
            // thread 0 acquired them before the barrier); read them from L2.
            let mut acc = op.identity();
            let mut j = thread_idx_x();
            while j < grid_dim_x() {
                acc = op.combine(
                    acc,
                    T::from_bits(load_cg_u32(partials.add(j as usize).cast())),
                );
                j += block_dim_x();
            }
            let total = block_reduce_op(op, acc, warp_sums);
            if thread_idx_x() == 0 {
                *out = total;
            }
        }
    }
}

kernels! {
    /// Every reduction entry point.
    pub const KERNELS = {
        (x: *const T, partials: *mut T, n: usize) {
            fn reduce_interleaved_divergent<T in f32, i32, u32> = device::interleaved_divergent;
            fn reduce_interleaved_strided<T in f32, i32, u32> = device::interleaved_strided;
            fn reduce_sequential<T in f32, i32, u32> = device::sequential;
            fn reduce_first_add<T in f32, i32, u32> = device::first_add;
            fn reduce_unroll_last_warp<T in f32, i32, u32> = device::unroll_last_warp;
            fn reduce_complete_unroll<T in f32, i32, u32; const B: u32 = { 64, 128, 256, 512, 1024 }>
                = device::complete_unroll::<T, B>;
            fn reduce_cascading<T in f32, i32, u32> = device::cascading;
            fn reduce_warp_shuffle<T in f32, i32, u32> = device::warp_shuffle;
        }
        (src: *const T, dst: *mut T, n: usize) {
            fn reduce_fold<T in f32, i32, u32> = device::fold;
        }
        (x: *const T, n: usize, partials: *mut T, counter: *mut u32, out: *mut T) {
            fn reduce_vectorized_sum<T in f32, i32, u32>
                => device::vectorized(Op::Sum, x, n, partials, counter, out);
            fn reduce_vectorized_min<T in f32, i32, u32>
                => device::vectorized(Op::Min, x, n, partials, counter, out);
            fn reduce_vectorized_max<T in f32, i32, u32>
                => device::vectorized(Op::Max, x, n, partials, counter, out);
        }
    }
}

/// The arguments of one pass of steps 1-8: `n` elements of `x` in, one
/// partial per block out.
pub type PassArgs<T> = reduce_interleaved_divergent::Args<T>;

/// The arguments of the single-pass step 10.
pub type SinglePassArgs<T> = reduce_vectorized_sum::Args<T>;
