//! Thread, block and grid indices.

use core::arch::nvptx;

macro_rules! special_register {
    ($(#[$m:meta])* $name:ident => $intrinsic:ident) => {
        $(#[$m])*
        #[inline(always)]
        pub fn $name() -> u32 {
            // SAFETY: reads a special register of the executing thread; no
            // memory is touched.
            unsafe { nvptx::$intrinsic() as u32 }
        }
    };
}

special_register!(/// `threadIdx.x`
    thread_idx_x => _thread_idx_x);
special_register!(/// `threadIdx.y`
    thread_idx_y => _thread_idx_y);
special_register!(/// `blockIdx.x`
    block_idx_x => _block_idx_x);
special_register!(/// `blockIdx.y`
    block_idx_y => _block_idx_y);
special_register!(/// `blockDim.x`
    block_dim_x => _block_dim_x);
special_register!(/// `blockDim.y`
    block_dim_y => _block_dim_y);
special_register!(/// `gridDim.x`
    grid_dim_x => _grid_dim_x);
special_register!(/// `gridDim.y`
    grid_dim_y => _grid_dim_y);

/// This thread's index in the 1D grid: `blockIdx.x * blockDim.x + threadIdx.x`,
/// computed in `usize` so that it cannot wrap.
#[inline(always)]
#[doc(hidden)]
pub fn global_index_x() -> usize {
    block_idx_x() as usize * block_dim_x() as usize + thread_idx_x() as usize
}

/// This thread's index in the 2D grid, `(x, y)`, in `usize`.
#[inline(always)]
#[doc(hidden)]
pub fn global_index_xy() -> (usize, usize) {
    (
        global_index_x(),
        block_idx_y() as usize * block_dim_y() as usize + thread_idx_y() as usize,
    )
}

/// Threads in the whole 1D grid: the step of a grid-stride loop.
#[inline(always)]
#[doc(hidden)]
pub fn grid_threads_x() -> usize {
    grid_dim_x() as usize * block_dim_x() as usize
}

/// The linear index of this thread in its (2D) block.
#[inline(always)]
#[doc(hidden)]
pub fn thread_rank() -> u32 {
    thread_idx_y() * block_dim_x() + thread_idx_x()
}

/// Special registers that `core::arch::nvptx` has no intrinsic for, read
/// with one `mov`.
macro_rules! asm_register {
    ($(#[$m:meta])* $name:ident => $register:literal) => {
        $(#[$m])*
        #[inline(always)]
        pub fn $name() -> u32 {
            let value: u32;
            // SAFETY: reads a special register; no memory is touched.
            unsafe {
                core::arch::asm!(
                    concat!("mov.u32 {v}, ", $register, ";"),
                    v = out(reg32) value,
                    options(pure, nomem, nostack),
                );
            }
            value
        }
    };
}

asm_register!(/// This thread's lane in its warp (`%laneid`).
    lane_id => "%laneid");
asm_register!(/// How many SM ids the device has (`%nsmid`): its SM count where the
    /// ids are contiguous (132 on an H100 or H200), otherwise an upper bound
    /// of it.
    sm_ids => "%nsmid");

/// A grid-stride loop: `start, start + step, ...` while below `end`.
///
/// With `grid_stride(n)` every index in `0..n` is visited by exactly one
/// thread of the grid, whatever the grid size: the kernel is correct for any
/// launch and the host picks the grid for speed alone.
#[derive(Clone, Copy)]
pub struct GridStride {
    next: usize,
    step: usize,
    end: usize,
}

impl Iterator for GridStride {
    type Item = usize;
    #[inline(always)]
    fn next(&mut self) -> Option<usize> {
        if self.next < self.end {
            let i = self.next;
            self.next += self.step;
            Some(i)
        } else {
            None
        }
    }
}

/// Grid-stride indices over `0..end` for this thread (1D grid).
#[inline(always)]
#[doc(hidden)]
pub fn grid_stride(end: usize) -> GridStride {
    GridStride {
        next: global_index_x(),
        step: grid_threads_x(),
        end,
    }
}

/// Grid-stride indices over `start..end` for this thread (1D grid).
#[inline(always)]
#[doc(hidden)]
pub fn grid_stride_range(start: usize, end: usize) -> GridStride {
    GridStride {
        next: start + global_index_x(),
        step: grid_threads_x(),
        end,
    }
}
