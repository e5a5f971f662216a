//! Steps 1 to 3, the lesson's kernels: one thread per output, its `taps`
//! weights from global memory (step 1) or from constant memory (step 2),
//! and (step 3) the block's inputs with their halo staged first in shared
//! memory.

#[cfg(target_arch = "nvptx64")]
use {super::*, crate::prim::*};

/// Threads per block of steps 1-3; one output per thread.
pub const LESSON_BLOCK: u32 = 256;

/// Steps 1 and 2: one output per thread, `weight(j)` the mask.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn direct(
    signal: *const f32,
    signal_pitch: usize,
    n: usize,
    rows: u32,
    taps: u32,
    out: *mut f32,
    out_pitch: usize,
    weight: impl Fn(usize) -> f32,
) {
    let i = global_index_x();
    if i >= n {
        return;
    }
    let (taps, r) = (taps as usize, taps as usize / 2);
    let mut row = block_idx_y() as usize;
    while row < rows as usize {
        let x = signal.add(row * signal_pitch);
        let mut sum = 0.0f32;
        // Input index `i − r + j`, kept unsigned: `i + j − r` when
        // `i + j >= r`.
        for j in 0..taps {
            let k = i + j;
            if k >= r && k - r < n {
                sum = fma(*x.add(k - r), weight(j), sum);
            }
        }
        *out.add(row * out_pitch + i) = sum;
        row += grid_dim_y() as usize;
    }
}

/// Step 1.
#[cfg(target_arch = "nvptx64")]
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn basic(
    signal: *const f32,
    signal_pitch: usize,
    n: usize,
    rows: u32,
    mask: *const f32,
    taps: u32,
    out: *mut f32,
    out_pitch: usize,
) {
    direct(signal, signal_pitch, n, rows, taps, out, out_pitch, |j| {
        *mask.add(j)
    })
}

/// Step 2.
#[cfg(target_arch = "nvptx64")]
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn constant_mask(
    signal: *const f32,
    signal_pitch: usize,
    n: usize,
    rows: u32,
    _mask: *const f32,
    taps: u32,
    out: *mut f32,
    out_pitch: usize,
) {
    direct(signal, signal_pitch, n, rows, taps, out, out_pitch, |j| {
        // SAFETY: `j < taps <= MAX_TAPS` (launch contract).
        CONV1D_MASK.get_unchecked(j)
    })
}

/// Step 3: block `b` computes outputs `b·block ..` of each of its rows
/// from a shared tile of inputs `b·block − r .. b·block + block − r +
/// taps − 1`.
#[cfg(target_arch = "nvptx64")]
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn shared_tile(
    signal: *const f32,
    signal_pitch: usize,
    n: usize,
    rows: u32,
    _mask: *const f32,
    taps: u32,
    out: *mut f32,
    out_pitch: usize,
) {
    let tile = dynamic_shared::<f32>();
    let (taps, r) = (taps as usize, taps as usize / 2);
    let block = block_dim_x() as usize;
    let tid = thread_idx_x() as usize;
    let start = block_idx_x() as usize * block;
    let len = block + taps - 1;
    let i = start + tid;
    let mut row = block_idx_y() as usize;
    while row < rows as usize {
        let x = signal.add(row * signal_pitch);
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
            *out.add(row * out_pitch + i) = sum;
        }
        // Before the next row overwrites the tile.
        sync_threads();
        row += grid_dim_y() as usize;
    }
}
