//! Steps 1 to 4: the kernels of Harris's *An Efficient Matrix Transpose in
//! CUDA C/C++* (one thread per element, then a shared tile, unpadded and
//! padded) and NVIDIA's coalesced transpose (a 32×32 tile, four rows per
//! thread), for every element size.

#[cfg(target_arch = "nvptx64")]
use crate::prim::*;

/// Step 1.
#[cfg(target_arch = "nvptx64")]
pub(super) unsafe fn naive<T: Copy>(
    src: *const T,
    src_pitch: usize,
    dst: *mut T,
    dst_pitch: usize,
    width: u32,
    height: u32,
) {
    let (x, y) = global_index_xy();
    if x < width as usize && y < height as usize {
        *dst.add(x * dst_pitch + y) = *src.add(y * src_pitch + x);
    }
}

/// Steps 2-4: a `TILE`×`TILE` tile, rows padded by `PAD` elements,
/// `TILE`×`ROWS` threads each moving `TILE / ROWS` rows.
#[cfg(target_arch = "nvptx64")]
pub(super) unsafe fn tiled<T: Copy, const TILE: usize, const ROWS: usize, const PAD: usize>(
    src: *const T,
    src_pitch: usize,
    dst: *mut T,
    dst_pitch: usize,
    width: u32,
    height: u32,
) {
    let (width, height) = (width as usize, height as usize);
    let tile = dynamic_shared::<T>();
    let stride = TILE + PAD;
    let (tx, ty) = (thread_idx_x() as usize, thread_idx_y() as usize);
    let (bx, by) = (block_idx_x() as usize * TILE, block_idx_y() as usize * TILE);

    // Read source rows: consecutive threads, consecutive columns.
    let x = bx + tx;
    let mut k = 0;
    while k < TILE {
        let y = by + ty + k;
        if x < width && y < height {
            *tile.add((ty + k) * stride + tx) = *src.add(y * src_pitch + x);
        }
        k += ROWS;
    }
    sync_threads();
    // Write destination rows (source columns), reading the tile down a column.
    let x = by + tx;
    let mut k = 0;
    while k < TILE {
        let y = bx + ty + k;
        if x < height && y < width {
            *dst.add(y * dst_pitch + x) = *tile.add(tx * stride + ty + k);
        }
        k += ROWS;
    }
}
