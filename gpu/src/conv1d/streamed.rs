//! Step 6: short masks as a stream of whole 32-byte sectors: 4 outputs a
//! thread per pass, one tile per block.

use super::*;
#[cfg(target_arch = "nvptx64")]
use {
    super::tiles::{Quad, segment_of_weights, stage_elements, store_outputs},
    crate::prim::*,
};

/// Outputs of one tile of [`Conv1dVariant::Streamed`]: one block, one
/// tile, [`STREAM_WIDTH`] outputs per thread in each of four passes.
#[doc(hidden)]
pub const STREAM_TILE: usize = 4096;
/// Consecutive outputs one thread of [`Conv1dVariant::Streamed`] keeps in
/// registers in one pass: one 16-byte word, so that a warp's store covers
/// 512 contiguous bytes (whole 32-byte sectors), and the tile needs no
/// padding (the 16-byte loads of 8 consecutive lanes are 128 contiguous
/// bytes).
#[doc(hidden)]
pub const STREAM_WIDTH: usize = 4;
/// Threads of a [`Conv1dVariant::Streamed`] block: each loads four 16-byte
/// words of the tile.
#[doc(hidden)]
pub const STREAM_THREADS: u32 = (STREAM_TILE / 16) as u32;
/// [`Conv1dVariant::Streamed`] runs its own kernel for masks of up to this
/// many taps, step 5's (hence step 4's) beyond: with 4 outputs a thread it
/// loads a 16-byte word of the tile and one of weights per 16 FMAs, which
/// shared memory sustains for short masks only. Measured on an H200, 2^26
/// outputs, µs (step 6 / step 4's narrow kernel with its stores passed
/// through shared memory, a variant not kept): 7 taps 141 / 149, 11 taps
/// 144 / 151, 15 taps 148 / 152, 19 taps 171 / 152, 23 taps 175 / 154,
/// 31 taps 205 / 170.
pub const STREAM_MAX_TAPS: usize = 16;

/// Inputs one [`Conv1dVariant::Streamed`] block stages for a mask of
/// `taps`: its [`STREAM_TILE`] outputs and a halo for the mask shifted by
/// up to 3 places (so that the tile starts on 16 bytes), whole 16-byte
/// words.
#[doc(hidden)]
pub const fn stream_tile_len(taps: usize) -> usize {
    STREAM_TILE + padded_taps(taps + 3, STREAM_WIDTH)
}

/// How far [`Conv1dVariant::Streamed`] shifts a mask of `taps` for a row
/// at byte address `row` (a multiple of 4): the `s` in 0..4 for which row
/// element `t − taps / 2 − s` lies on 16 bytes for every multiple `t` of 4
/// (the tiles' starts).
#[doc(hidden)]
pub const fn stream_shift(row: usize, taps: usize) -> usize {
    // −r ≡ 3r (mod 4).
    (row / 4 + 3 * (taps / 2)) % 4
}

// A streamed tile's halo is at most one 16-byte word per thread, and its
// threads take whole passes of STREAM_WIDTH outputs.
const _: () = assert!(
    (stream_tile_len(STREAM_MAX_TAPS) - STREAM_TILE) / 4 <= STREAM_THREADS as usize
        && STREAM_TILE.is_multiple_of(STREAM_WIDTH * STREAM_THREADS as usize)
        && STREAM_TILE == 16 * STREAM_THREADS as usize
);

/// Step 6: block `b` computes tile `b` ([`STREAM_TILE`] outputs from
/// `start = b · STREAM_TILE`) of each of its rows. The tile holds
/// signal elements from `start − r − s`, where `s` (0 to 3) puts that
/// element on a 16-byte boundary, so that output `start + e` is
/// `Σ_j tile[e + j] · m'[j]` with the mask shifted by `s` (`m'[j] =
/// mask[j − s]`, zeros in front and past the end): [`stream_tile_len`]
/// elements, loaded as 16-byte words where the tile lies inside the row
/// and element by element (zeros outside) where it does not. Thread `l`
/// then computes the 4 outputs from `4 (l + 256 p)` in passes `p` = 0
/// to 3 with [`shifted_sums`] of taps `s..taps + s`.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub(super) unsafe fn kernel(op: Operands) {
    const W: usize = STREAM_WIDTH;
    const QUADS: usize = STREAM_TILE / 4 / STREAM_THREADS as usize;
    let threads = STREAM_THREADS as usize;
    let (taps, r) = (op.taps as usize, op.taps as usize / 2);
    let (n, mask) = (op.n, op.mask);
    let len = stream_tile_len(taps);
    let padded = padded_taps(taps + 3, W);
    let mut carver = SharedCarver::new();
    // Whole 16-byte words: the weights are 16-byte aligned too.
    let tile = carver.take::<f32>(len);
    let weights = carver.take::<f32>(padded);
    let tid = thread_idx_x() as usize;
    let start = block_idx_x() as usize * STREAM_TILE;

    let mut row = block_idx_y() as usize;
    while row < op.rows as usize {
        let x = op.input_row(row);
        let s = stream_shift(x as usize, taps);
        let lead = r + s;
        // The shifted mask, zeros around it.
        let mut j = tid;
        while j < padded {
            *weights.add(j) = if j >= s && j - s < taps {
                *mask.add(j - s)
            } else {
                0.0
            };
            j += threads;
        }
        if start >= lead && start - lead + len <= n {
            // 16-byte aligned by the choice of s.
            let base = x.add(start - lead).cast::<Words4>();
            let mut v = [[0u32; 4]; QUADS];
            for k in 0..QUADS {
                v[k] = load_nc_v4(base.add(tid + k * threads));
            }
            // The halo: fewer quads than threads (asserted after
            // `stream_shift`).
            let halo = STREAM_TILE / 4 + tid;
            let h = if halo < len / 4 {
                load_nc_v4(base.add(halo))
            } else {
                [0; 4]
            };
            let quad = |q: usize| tile.add(4 * q).cast::<Words4>();
            for k in 0..QUADS {
                *quad(tid + k * threads) = v[k];
            }
            if halo < len / 4 {
                *quad(halo) = h;
            }
        } else {
            // The tile starts `lead` elements before its outputs.
            stage_elements(tile, |e| e, x, start, lead, n, tid, len, threads);
        }
        sync_threads();

        for p in 0..STREAM_TILE / W / threads {
            let lane = tid + p * threads;
            let acc = shifted_sums::<W, W, false>(
                lane,
                (s, taps + s),
                [0.0; W],
                |seg| {
                    let Quad(v) = *tile.add(W * seg).cast::<Quad>();
                    v
                },
                |c| segment_of_weights::<W>(weights, c),
            );
            store_outputs(op.output_row(row), start + W * lane, n, &acc);
        }
        row += grid_dim_y() as usize;
        if row < op.rows as usize {
            // Every thread is done reading before the next row's staging.
            sync_threads();
        }
    }
}

#[cfg(test)]
mod tests {
    // The crate is `no_std`; its host tests may allocate.
    extern crate std;
    use super::*;

    #[test]
    fn a_streamed_tile_starts_on_16_bytes() {
        for row in (0..64).step_by(4) {
            for taps in 1..=STREAM_MAX_TAPS {
                let s = stream_shift(row, taps);
                assert!(s < 4);
                for start in (64..128).step_by(4) {
                    let first = start - taps / 2 - s;
                    assert_eq!((row + 4 * first) % 16, 0, "row {row}, taps {taps}");
                }
            }
        }
    }
}
