//! Steps 1 to 3, the PMPP convolution chapter's kernels: one thread per
//! output, its `taps` weights from global memory (step 1) or from constant
//! memory (step 2), and (step 3) the block's inputs with their halo staged
//! first in shared memory.

#[cfg(target_arch = "nvptx64")]
use {super::*, crate::prim::*};

/// Threads per block of steps 1-3; one output per thread.
#[doc(hidden)]
pub const LESSON_BLOCK: u32 = 256;

/// Steps 1 and 2: one output per thread, `weight(j)` the mask.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
unsafe fn direct(op: Operands, weight: impl Fn(usize) -> f32) {
    let n = op.n;
    let i = global_index_x();
    if i >= n {
        return;
    }
    let (taps, r) = (op.taps as usize, op.taps as usize / 2);
    let mut row = block_idx_y() as usize;
    while row < op.rows as usize {
        let x = op.input_row(row);
        let mut sum = 0.0f32;
        // Input index `i − r + j`, kept unsigned: `i + j − r` when
        // `i + j >= r`.
        for j in 0..taps {
            let k = i + j;
            if k >= r && k - r < n {
                sum = fma(*x.add(k - r), weight(j), sum);
            }
        }
        *op.output_row(row).add(i) = sum;
        row += grid_dim_y() as usize;
    }
}

/// Step 1.
#[cfg(target_arch = "nvptx64")]
pub(super) unsafe fn basic(op: Operands) {
    direct(op, |j| *op.mask.add(j))
}

/// Step 2.
#[cfg(target_arch = "nvptx64")]
pub(super) unsafe fn constant_mask(op: Operands) {
    direct(op, |j| {
        // SAFETY: `j < taps <= MAX_TAPS` (launch contract).
        CONV1D_MASK.get_unchecked(j)
    })
}

/// Step 3: block `b` computes outputs `b·block ..` of each of its rows
/// from a shared tile of inputs `b·block − r .. b·block + block − r +
/// taps − 1`.
#[cfg(target_arch = "nvptx64")]
pub(super) unsafe fn shared_tile(op: Operands) {
    let tile = dynamic_shared::<f32>();
    let n = op.n;
    let (taps, r) = (op.taps as usize, op.taps as usize / 2);
    let block = block_dim_x() as usize;
    let tid = thread_idx_x() as usize;
    let start = block_idx_x() as usize * block;
    let len = block + taps - 1;
    let i = start + tid;
    let mut row = block_idx_y() as usize;
    while row < op.rows as usize {
        let x = op.input_row(row);
        // Tile element `e` is input `start + e − r`, zero outside the row.
        let mut e = tid;
        while e < len {
            *tile.add(e) = match tile_source(start, e, r, n) {
                Some(i) => *x.add(i),
                None => 0.0,
            };
            e += block;
        }
        sync_threads();
        if i < n {
            let mut sum = 0.0f32;
            for j in 0..taps {
                // SAFETY: `j < taps <= MAX_TAPS` (launch contract).
                sum = fma(*tile.add(tid + j), CONV1D_MASK.get_unchecked(j), sum);
            }
            *op.output_row(row).add(i) = sum;
        }
        // Before the next row overwrites the tile.
        sync_threads();
        row += grid_dim_y() as usize;
    }
}
