//! Step 1 (lesson): one thread per output of a 32 × 32 tile, consecutive
//! threads on consecutive rows of `C`.

#[cfg(target_arch = "nvptx64")]
use {super::Operands, crate::prim::*};

/// Side of the square tile of `C` a block of `SIDE²` threads computes.
#[doc(hidden)]
pub const SIDE: usize = 32;

/// Contract: the family's (`super::device::Operands`); blocks of
/// `SIDE²` threads.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub(crate) unsafe fn kernel(o: Operands) {
    let o = o.of_batch();
    let (tile_m, tile_n) = o.tile(SIDE, SIDE, 1);
    let t = thread_idx_x() as usize;
    // Lane `t` takes row `t % 32`: a warp's 32 lanes are 32 rows of one
    // column.
    let (i, j) = (tile_m * SIDE + t % SIDE, tile_n * SIDE + t / SIDE);
    if i < o.m && j < o.n {
        let mut acc = 0.0f32;
        for p in 0..o.k {
            acc = fma_f32(o.a(i, p), o.b(p, j), acc);
        }
        o.store(i, j, acc);
    }
}
