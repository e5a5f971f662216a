//! Step 2 (lesson): as step 1 with consecutive threads on consecutive
//! columns of `C`, so a warp's loads of `B` are one 128-byte line.

#[cfg(target_arch = "nvptx64")]
use {super::Operands, super::naive::SIDE, crate::prim::*};

/// Contract: the family's; blocks of `SIDE²` threads.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub(crate) unsafe fn kernel(o: Operands) {
    let o = o.of_batch();
    let (tile_m, tile_n) = o.tile(SIDE, SIDE, 1);
    let t = thread_idx_x() as usize;
    let (i, j) = (tile_m * SIDE + t / SIDE, tile_n * SIDE + t % SIDE);
    if i < o.m && j < o.n {
        let mut acc = 0.0f32;
        for p in 0..o.k {
            acc = fma_f32(o.a(i, p), o.b(p, j), acc);
        }
        o.store(i, j, acc);
    }
}
