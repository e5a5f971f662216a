//! Step 8 (sm_90a): step 7's 3xTF32 convolution as warpgroup products
//! (`wgmma`), the mask in registers and the signal read by the tensor cores
//! straight from shared memory.
//!
//! A tile is `WGMMA_COLS` columns of `WGMMA_ROWS` consecutive outputs:
//! output `64c + m` (from the tile's start) is `D[m][c] = Σ_t A[m][t] ·
//! B[t][c]` with `A[m][t] = M[t − m]` (row `m` the mask shifted by `m`,
//! zero outside it: the same for every tile) and `B[t][c] = X[64c + t]`
//! (column `c` the inputs from `64c`), `t` in `0 .. taps + 63`. One
//! `wgmma.m64n128k8` per 8 values of `t` and TF32 part does for the block's
//! warpgroup what 64 of step 7's `mma.sync` do, with `B` never passing
//! through registers: `A`'s fragments, the split mask, are 8 shared loads
//! per thread and step for 3 products of 65 536 multiply-adds each.
//!
//! `B` needs no copy per step: the staged inputs are laid out so that
//! every step's `B` is one shared-memory descriptor (`wgmma_offset`).
//! Element `e = 64·line + u` lies at byte `(u / 4)·16·lines + 16·line +
//! 4·(u % 4)`: for each group of 4 values of `u`, the lines' 16-byte rows
//! one after another. A core matrix of `B` (8 columns × 4 `t`, 8 rows of
//! 16 contiguous bytes) at step `s` is then 8 consecutive lines of one
//! group, 128 contiguous bytes; moving to the next 8 columns is 128 bytes
//! on, to the next 4 `t` one group (`16·lines` bytes) on; and a step that
//! crosses a line (`t ≥ 64`) starts 16 bytes further. Each input is staged
//! once, split into its TF32 parts, in a layout of its own for each part.
//!
//! The price against step 7: `t` spans `taps + 63` instead of `taps + 15`
//! (the tensor cores' 64 rows of `A` are 64 shifts of the mask), 1.51
//! times the multiply-adds at 127 taps (step 7: 1.13), on units that
//! `wgmma` keeps busy where `mma.sync` cannot.

#[cfg(target_arch = "nvptx64")]
use super::Operands;

/// Threads of a warpgroup, of which a block has 1 or [`WGMMA_GROUPS_MAX`].
#[doc(hidden)]
pub const WGMMA_THREADS: u32 = 128;
/// Consecutive outputs of one column: the rows of `wgmma`'s `A` and `D`.
#[doc(hidden)]
pub const WGMMA_ROWS: usize = 64;
/// Columns of a tile: `wgmma`'s `N` (`m64n128k8`).
#[doc(hidden)]
pub const WGMMA_COLS: usize = 128;

// Shared by step 9's layout (its mask leaves room for step 10's BF16
// words; its copies are swizzled on 32 bytes) and step 10's products.

/// Values of `t` of one BF16 product (`k` of `m64n128k16`).
#[doc(hidden)]
pub const BF16_K: usize = 16;

/// BF16 products of a tile whose TF32 products take `steps` steps of 8
/// values of `t`: one per two steps, the last over 8 more zero weights
/// where `steps` is odd.
#[doc(hidden)]
pub const fn bf16_steps(steps: usize) -> usize {
    steps.div_ceil(2)
}

/// The 32-byte swizzle on a byte offset from a 256-byte unit of the
/// shared window: the two 16-byte halves of a 32-byte row exchanged where
/// bit 7 is set.
#[doc(hidden)]
pub const fn swizzle_32(at: u32) -> u32 {
    at ^ (((at >> 7) & 1) << 4)
}

/// Outputs of a tile.
#[doc(hidden)]
pub const WGMMA_TILE: usize = WGMMA_ROWS * WGMMA_COLS;
/// Bytes of the raw buffer, into which one bulk copy (TMA) brings a
/// tile's inputs as they lie in the row while the tile before is
/// multiplied: the tile's [`wgmma_tile_len`] elements shifted by up to 3
/// so that the copy starts on a 16-byte boundary, in whole 16-byte units.
///
/// Why: with their staging skipped, the tiles' products and stores take
/// 211 µs at 127 taps on an H200 against 278 with it, though the products
/// alone run near the tensor cores' TF32 rate (a step of 8 taps adds about
/// 6 µs over 2^26 outputs). The staging was each thread's 24 inputs in
/// flight by 4-byte loads (12 KiB a block), then split: latency-bound, and
/// the other block's products hid it only in part. Now the copy engine
/// fetches the next tile during the products, and the staging is a pass
/// over shared memory (16-byte loads, split, 16-byte stores), 166
/// registers instead of 255. Same H200 runs, µs at 7 / 31 / 63 / 127 /
/// 1 025 taps: loads with an L2 prefetch (the build before) 189 / 204 /
/// 228 / 278 / 1 140, the bulk copy 177 / 191 / 212 / 263 / 1 120. The
/// buffer costs 1 025 taps its second block per SM (120 352 bytes of
/// shared memory), which the copy makes up for.
///
/// Measured on the way (H200, 127 taps): the split pass costs 20 µs (243
/// with it skipped), of which 6 are the second 16-byte load of a
/// misaligned tile (257 with every tile read as if aligned), and the
/// outputs' stores 19 (244 without them). Tried and not kept: the
/// outputs parked in the parts' space and sent by a bulk copy per column
/// (256 bytes each), 302 µs at 127 taps against 263; the barrier at the
/// end of each tile left out (the split waits at the barrier after the
/// copy anyway), no faster (264 against 263).
///
/// The staging before (H100, 2^26 outputs, µs at 7 / 127 / 1 025 taps):
/// each thread's loads of a chunk in flight at once, 24 at a time 245 /
/// 329 / 1 049, 8 at a time (160 registers, 3 blocks per SM) 268 / 360 /
/// 1 179, 24 held to 168 registers for 3 blocks (96 bytes of spills) 273
/// / 320 / 1 078; the next tile's inputs copied by 4-byte `cp.async` into
/// a third buffer during the products 439 µs at 127 taps and 1.51 ms at
/// 1 025; the next tile asked of L2 by a bulk prefetch during the
/// products 218 / 283 / 1 030 (kept until the bulk copy), with 8 at a
/// time and 3 blocks per SM 233 / 298 / 1 072. One block per SM of a
/// warpgroup that multiplies and one (254 / 278 / 1 123) or two (224 /
/// 288 / 1 113) that stage the next tile into a second buffer meanwhile,
/// handing buffers over by named barriers: the staging bound the short
/// masks and the one warpgroup's products the long ones. On an H200 (GB/s
/// at 7 / 63 / 127 / 1 025 taps, one run; the prefetch build 2 856 / 2 354
/// / 1 940 / 519): the prefetch issued before the staging instead of after
/// it 2 608 / 2 204 / 1 853 / 513; the next chunk's loads in flight while
/// this one is split (120 bytes of spills) 2 512 / 2 192 / 1 852 / 515,
/// and with 16 loads a chunk 2 414 / 2 065 / 1 757 / 505.
#[doc(hidden)]
pub const fn wgmma_raw_bytes(taps: usize) -> usize {
    16 * (wgmma_tile_len(taps) / 4 + 1)
}

/// Steps of 8 values of `t` for a mask of `taps`: output `64c + m` needs
/// `t = m .. m + taps`, so `t` runs to `taps + 63`.
#[doc(hidden)]
pub const fn wgmma_steps(taps: usize) -> usize {
    (taps + WGMMA_ROWS - 1).div_ceil(8)
}

/// Inputs a tile stages: the last column's `8 · steps` from element
/// `64 · 127` on.
#[doc(hidden)]
pub const fn wgmma_tile_len(taps: usize) -> usize {
    WGMMA_ROWS * (WGMMA_COLS - 1) + 8 * wgmma_steps(taps)
}

/// Lines of 64 inputs in a staged part: enough for [`wgmma_tile_len`],
/// rounded up to an odd number, so that the groups of 4 values of `u`
/// start in different banks and a warp's 32 consecutive elements are 32
/// banks ([`wgmma_offset`]).
#[doc(hidden)]
pub const fn wgmma_lines(taps: usize) -> usize {
    wgmma_tile_len(taps).div_ceil(WGMMA_ROWS) | 1
}

/// Byte offset of tile element `e` in a staged part of `lines` lines (see
/// the module docs).
#[doc(hidden)]
pub const fn wgmma_offset(lines: usize, e: usize) -> usize {
    let (line, u) = (e / WGMMA_ROWS, e % WGMMA_ROWS);
    (u / 4) * 16 * lines + 16 * line + 4 * (u % 4)
}

/// Bytes from one group of 4 values of `u` to the next: the descriptor's
/// leading offset (core matrices adjacent along `t`).
#[doc(hidden)]
pub const fn wgmma_leading(lines: usize) -> usize {
    16 * lines
}

/// Bytes from one core matrix to the next along the columns: the
/// descriptor's stride offset.
#[doc(hidden)]
pub const WGMMA_STRIDE: usize = 128;

/// Byte offset in a staged part where step `s`'s `B` starts: element `8s`,
/// the first of column 0.
#[doc(hidden)]
pub const fn wgmma_b_start(lines: usize, s: usize) -> usize {
    wgmma_offset(lines, 8 * s)
}

/// Bytes of one staged part (big or small) for a mask of `taps`.
#[doc(hidden)]
pub const fn wgmma_part_bytes(taps: usize) -> usize {
    WGMMA_ROWS / 4 * wgmma_leading(wgmma_lines(taps))
}

/// Words of each part of the split, zero-padded mask: 64 zeros, the `taps`
/// weights, zeros to the last step. Weight `j` is word `j + 64`, so that
/// `A[m][t] = M[t − m]` is word `64 + t − m` without a check.
#[doc(hidden)]
pub const fn wgmma_mask_len(taps: usize) -> usize {
    WGMMA_ROWS + 8 * wgmma_steps(taps)
}

/// Byte offset of the raw buffer in a block's shared memory: after the
/// two staged parts of the inputs and the two parts of the mask (a
/// multiple of 16, as the bulk copies need).
#[doc(hidden)]
pub const fn wgmma_raw_offset(taps: usize) -> usize {
    2 * wgmma_part_bytes(taps) + 2 * 4 * wgmma_mask_len(taps)
}

/// Shared memory of a block: the two staged parts of the inputs, the two
/// parts of the mask, the raw buffer and its barrier (8 bytes, rounded to
/// 16): 120 352 bytes at 1 025 taps, 102 432 at 127.
#[doc(hidden)]
pub const fn wgmma_shared_bytes(taps: usize) -> usize {
    wgmma_raw_offset(taps) + wgmma_raw_bytes(taps) + 16
}

/// Warpgroups of a block for masks of up to [`WGMMA_TURNS_MAX_TAPS`]
/// ([`wgmma_groups`]): two, which take turns on the tensor cores, one
/// storing and staging while the other multiplies.
///
/// Why: two blocks of one warpgroup per SM (the step before) fall into
/// step with each other. Sharing the tensor cores, their products end
/// together, and then both split and store while the tensor cores idle.
/// Named barriers now hand the tensor cores from one warpgroup to the
/// other once its last products are issued, so that one's staging runs
/// under the other's products. Same runs, µs at 63 / 127 / 255 / 511 /
/// 767 taps (2^26 outputs), two blocks of one warpgroup → one block of
/// two: H100 219.5 → 209.8, 266.8 → 243.7, 370.6 → 353.2, 586.7 →
/// 591.4, 806.7 → 831.0; H200 213.1 → 198.3, 265.7 → 241.8, 370.8 →
/// 353.5, 589.6 → 594.4. Longer masks lose: their products dwarf the
/// staging, and each hand-over drains the tensor cores' queue once.
/// Handing over after the products had finished instead of once issued:
/// H200 243.2 µs at 127 taps and 360.9 at 255.
#[doc(hidden)]
pub const WGMMA_GROUPS_MAX: usize = 2;

/// The longest mask for which a block has [`WGMMA_GROUPS_MAX`] warpgroups:
/// between 255 taps, where two win by 5 %, and 511, where they lose by 1 %.
#[doc(hidden)]
pub const WGMMA_TURNS_MAX_TAPS: usize = 383;

/// Shared memory one block may opt into on sm_90 devices, the only ones
/// that run this step: 227 KiB.
#[doc(hidden)]
pub const SM90_MAX_SHARED: usize = 227 * 1024;

/// Shared memory of one warpgroup's slice of a block: [`wgmma_shared_bytes`]
/// rounded up to 128 bytes, so that every slice's parts and barrier keep
/// their alignment.
#[doc(hidden)]
pub const fn wgmma_group_bytes(taps: usize) -> usize {
    wgmma_shared_bytes(taps).next_multiple_of(128)
}

/// Warpgroups of a block for a mask of `taps`: [`WGMMA_GROUPS_MAX`] up to
/// [`WGMMA_TURNS_MAX_TAPS`] taps, one beyond (two blocks per SM where
/// their shared memory fits, as before).
#[doc(hidden)]
pub const fn wgmma_groups(taps: usize) -> usize {
    if taps <= WGMMA_TURNS_MAX_TAPS {
        WGMMA_GROUPS_MAX
    } else {
        1
    }
}

/// The part of the tile at `start` that its bulk copy brings, for a row
/// whose element 0 is word `word0` of memory (its address / 4) and has `n`
/// elements (`start < n`): `(first, last, shift)`, tile elements `first ..
/// last` (row elements `start + e − r`), the longest run inside the row
/// whose ends are 16-byte aligned in memory, and the shift that puts them
/// on 16-byte boundaries of the raw buffer (element `e` at word `e +
/// shift`). `(len, len, 0)`, nothing, where the row holds no such run.
#[doc(hidden)]
pub const fn wgmma_copy_span(
    word0: usize,
    start: usize,
    len: usize,
    r: usize,
    n: usize,
) -> (usize, usize, usize) {
    // Tile elements inside the row: `lo .. hi`, not empty since `start <
    // n` (tile element `r` is row element `start`).
    let lo = r.saturating_sub(start);
    let hi = if len < n + r - start {
        len
    } else {
        n + r - start
    };
    // Memory words of tile elements `lo` and `hi`.
    let (at_lo, at_hi) = (word0 + start + lo - r, word0 + start + hi - r);
    let first = lo + (4 - at_lo % 4) % 4;
    let last = hi.saturating_sub(at_hi % 4);
    if first < last {
        (first, last, (4 - first % 4) % 4)
    } else {
        (len, len, 0)
    }
}

/// Step 8's error bound for a mask of `taps`, in units of `2^-24 ·
/// Σ_j |x_j · m_j|` (and of 2^-149 for subnormal results): step 7's
/// derivation ([`super::tensor_error_units`]) with this step's
/// `wgmma_steps`, 24 additions of exact products per step, each taken
/// to err by up to `2u`. For 127 taps 1 204.
pub const fn wgmma_error_units(taps: usize) -> usize {
    48 * wgmma_steps(taps) + 52
}

/// The mask words of thread `lane` of warp `warp`'s `A` fragment at step
/// `s` (`a[0]` to `a[3]`: rows `16 warp + g` and `+ 8`, `t = 8s + q` and
/// `+ 4`, with `g = lane / 4`, `q = lane % 4`).
#[doc(hidden)]
pub const fn wgmma_a_words(warp: usize, lane: usize, s: usize) -> [usize; 4] {
    let w = WGMMA_ROWS + 8 * s + lane % 4 - 16 * warp - lane / 4;
    [w, w - 8, w + 4, w - 4]
}

/// The tile output in accumulator register `reg` of thread `lane` of warp
/// `warp`: row `16 warp + g + 8 (reg % 4 / 2)`, column `8 (reg / 4) + 2q +
/// reg % 2`. A warp's store of one register is 4 runs of 8 consecutive
/// outputs, whole 32-byte sectors.
#[doc(hidden)]
pub const fn wgmma_d_output(warp: usize, lane: usize, reg: usize) -> usize {
    let row = 16 * warp + lane / 4 + 8 * (reg % 4 / 2);
    let col = 8 * (reg / 4) + 2 * (lane % 4) + reg % 2;
    WGMMA_ROWS * col + row
}

const _: () = assert!(
    WGMMA_THREADS as usize == 4 * 32
        && WGMMA_ROWS == 64
        && WGMMA_COLS == 128
        && wgmma_group_bytes(super::MAX_TAPS) <= SM90_MAX_SHARED
        // The warpgroups' slices fit in one block wherever there are two.
        && WGMMA_GROUPS_MAX * wgmma_group_bytes(WGMMA_TURNS_MAX_TAPS) <= SM90_MAX_SHARED
        // Named barriers: one per warpgroup and one per turn after 0, ids
        // up to `2 · WGMMA_GROUPS_MAX`, of 16.
        && 2 * WGMMA_GROUPS_MAX < 16
        && wgmma_raw_offset(super::MAX_TAPS).is_multiple_of(16)
        && wgmma_tile_len(1).is_multiple_of(8)
        // A thread's elements lie 2 lines apart (`tid + 128k`).
        && WGMMA_THREADS as usize == 2 * WGMMA_ROWS
        // The descriptor's leading offset field: 14 bits of 16-byte units.
        && wgmma_leading(wgmma_lines(super::MAX_TAPS)) / 16 < 1 << 14
);

/// Contract: the family's (`conv1d`'s device module), with blocks of
/// `GROUPS` (1 or [`WGMMA_GROUPS_MAX`]) warpgroups ([`WGMMA_THREADS`]
/// threads each) and
/// [`wgmma_group_bytes`] of shared memory per warpgroup; PTX for sm_90a
/// (other targets trap: the host refuses them first).
///
/// Block `b` computes a run of consecutive tiles of each of its rows
/// (the grid's runs as step 7's), its warpgroups taking the run's tiles
/// in turn, each in its own slice of shared memory. Per tile of a
/// warpgroup: (1) it writes the inputs the bulk copy did not bring into
/// the raw buffer ([`wgmma_raw_bytes`], [`wgmma_copy_span`]), waits for
/// the copy, splits the tile by [`wgmma_offset`] into its staged parts,
/// then a proxy fence and a barrier, and one thread starts the next
/// tile's copy; (2) per
/// step, each thread loads its fragments of the split mask and the
/// warpgroup starts 3 products (small·big, big·small, big·big) and
/// commits them, waiting only for the step before's, whose fragments the
/// next ones may replace, and with two warpgroups only in its turn, which
/// it hands over once its last products are issued ([`WGMMA_GROUPS_MAX`]);
/// (3) once all are done, each thread stores its 64 outputs, computes any
/// that came out non-finite again directly ([`device::outputs_directly`]),
/// and a barrier lets the next tile's staging overwrite what the products
/// read. Every barrier but the first is the warpgroup's own (named).
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub(super) unsafe fn kernel<const GROUPS: usize>(op: Operands) {
    #[cfg(not(target_feature = "sm_90a"))]
    {
        let _ = op;
        crate::prim::trap()
    }
    #[cfg(target_feature = "sm_90a")]
    {
        use crate::prim::wgmma::{self, WGMMA_N128_REGS};
        use crate::prim::*;
        use device::Raw;

        let threads = WGMMA_THREADS as usize;
        let (taps, r) = (op.taps as usize, op.taps as usize / 2);
        let (n, rows, mask) = (op.n, op.rows, op.mask);
        let steps = wgmma_steps(taps);
        let len = wgmma_tile_len(taps);
        let lines = wgmma_lines(taps);
        let part = wgmma_part_bytes(taps);
        let mask_len = wgmma_mask_len(taps);
        // Warpgroup `group` of `groups` works in its own slice of shared
        // memory, on every `groups`-th tile of the block's runs.
        // A constant, so that the one-warpgroup entry compiles without the
        // turns (160 registers instead of 233).
        let groups = GROUPS;
        let group = if GROUPS == 1 {
            0
        } else {
            thread_idx_x() as usize / threads
        };
        let shared = dynamic_shared::<u8>().add(group * wgmma_group_bytes(taps));
        let (big, small) = (shared, shared.add(part));
        let mask_big = shared.add(2 * part).cast::<u32>();
        let mask_small = mask_big.add(mask_len);
        let raw = shared.add(wgmma_raw_offset(taps)).cast::<f32>();
        let raw_at = shared_address(raw);
        let barrier = raw_at + wgmma_raw_bytes(taps) as u32;
        let tid = thread_idx_x() as usize % threads;
        let (warp, lane) = (tid / 32, tid % 32);
        // This warpgroup's barrier, and the turns of the tensor cores.
        let own = 1 + group as u32;
        let turn = |g: usize| 1 + WGMMA_GROUPS_MAX as u32 + g as u32;
        let both = (threads * groups) as u32;

        // The mask's parts, zero-padded; read after the first barrier below.
        let mut j = tid;
        while j < mask_len {
            let w = if j >= WGMMA_ROWS && j - WGMMA_ROWS < taps {
                *mask.add(j - WGMMA_ROWS)
            } else {
                0.0
            };
            (*mask_big.add(j), *mask_small.add(j)) = split_tf32_truncated(w);
            j += threads;
        }

        let (big_at, small_at) = (shared_address(big), shared_address(small));
        let tiles = n.div_ceil(WGMMA_TILE);
        let run = tiles.div_ceil(grid_dim_x() as usize);
        let first_tile = block_idx_x() as usize * run;
        let end_tile = (first_tile + run).min(tiles);
        // Turns per row, and this warpgroup's tiles among them, tile
        // `mine(k)` at turn `k`: the second warpgroup has one tile fewer
        // than turns where the run is odd.
        let run_len = end_tile.max(first_tile) - first_tile;
        let turns = run_len.div_ceil(groups);
        let tiles_mine = (run_len + groups - 1 - group) / groups;
        let mine = |k: usize| first_tile + k * groups + group;
        let step_rows = grid_dim_y() as usize;
        // One thread of each warpgroup owns its barrier and starts its
        // copies: the first tile's now, each next one's once the tile
        // before is split.
        let mut row = block_idx_y() as usize;
        if tid == 0 {
            bulk::init_barrier(barrier, 1);
            if row < rows as usize && tiles_mine > 0 {
                Raw::of(op.input_row(row), mine(0) * WGMMA_TILE, len, r, n).fetch(raw_at, barrier);
            }
        }
        sync_threads();
        // The first turn is the first warpgroup's.
        if group == 1 && row < rows as usize && turns > 0 {
            arrive_named(turn(0), both);
        }
        // The other warpgroup's turn, after this one's turn `k` of a row;
        // the second warpgroup passes none after its last, which nobody
        // would take.
        let pass_turn = |k: usize, last_row: bool| {
            if groups > 1 && !(group == 1 && last_row && k + 1 == turns) {
                arrive_named(turn(1 - group), both);
            }
        };
        let mut parity = 0;
        while row < rows as usize && turns > 0 {
            let x = op.input_row(row);
            let y = op.output_row(row);
            let last_row = row + step_rows >= rows as usize;
            for k in 0..tiles_mine {
                let start = mine(k) * WGMMA_TILE;
                // 1. The inputs: the copy brought the row's 16-byte units;
                // the threads write the few elements at their ends (and
                // zeros outside the row), wait for the copy, and split
                // the tile by quads into the staged parts.
                {
                    let span = Raw::of(x, start, len, r, n);
                    span.edges(raw, tid);
                    bulk::wait_parity(barrier, parity);
                    parity ^= 1;
                    sync_named(own, threads as u32);
                    match span.shift {
                        0 => device::split::<0>(raw, big, small, lines, len, tid),
                        1 => device::split::<1>(raw, big, small, lines, len, tid),
                        2 => device::split::<2>(raw, big, small, lines, len, tid),
                        _ => device::split::<3>(raw, big, small, lines, len, tid),
                    }
                    // The parts are read by the products and the raw
                    // buffer rewritten by the next copy: both through the
                    // async proxy.
                    wgmma::fence_proxy_async();
                    sync_named(own, threads as u32);

                    // The next tile's copy, which lands while this tile's
                    // products run.
                    if tid == 0 {
                        if k + 1 < tiles_mine {
                            Raw::of(x, mine(k + 1) * WGMMA_TILE, len, r, n).fetch(raw_at, barrier);
                        } else if !last_row {
                            let next = op.input_row(row + step_rows);
                            Raw::of(next, mine(0) * WGMMA_TILE, len, r, n).fetch(raw_at, barrier);
                        }
                    }
                }

                // 2. The products, on the tensor cores by turns: while one
                // warpgroup multiplies, the other stores and stages.
                if groups > 1 {
                    sync_named(turn(group), both);
                }
                {
                    let mut acc = [0.0f32; WGMMA_N128_REGS];
                    let mask_at = (mask_big.cast_const(), mask_small.cast_const(), 0);
                    device::multiply::<true>(
                        &mut acc,
                        steps,
                        warp,
                        lane,
                        mask_at,
                        device::staged(big_at, small_at, lines),
                    );
                    // Passed once this warpgroup's last products are
                    // issued, so that the other's first queue behind them.
                    pass_turn(k, last_row);
                    wgmma::wait::<0>(&mut acc);

                    // 3. The outputs.
                    device::store(&acc, x, y, mask, taps, start, warp, lane, n);
                    // Every warp's products are done (each waited for its
                    // own): the next tile's staging may overwrite their
                    // inputs.
                    sync_named(own, threads as u32);
                }
            }
            // A turn without a tile: taken and passed on.
            if tiles_mine < turns {
                sync_named(turn(group), both);
                pass_turn(turns - 1, last_row);
            }
            row += step_rows;
        }
    }
}

#[cfg(all(target_arch = "nvptx64", target_feature = "sm_90a"))]
pub(super) mod device {
    use super::super::{fma, tile_source};
    use super::*;
    use crate::prim::wgmma::WGMMA_N128_REGS;
    use crate::prim::*;

    /// Where a tile's inputs lie in the raw buffer: tile element `e` (row
    /// element `start + e − r`) at word `e + shift`. The bulk copy brings
    /// tile elements `copied.0 .. copied.1` from the row: the longest run
    /// inside the row whose ends are 16-byte aligned in memory, which
    /// `shift` puts on 16-byte boundaries of the buffer too. The threads
    /// write the rest ([`Raw::edges`]): at most 3 elements at either end,
    /// and the zeros of a tile that reaches past an end of the row.
    /// It remembers the tile (row `x` of `n` elements, `start`, `len`
    /// elements from row element `start − r`) for [`Raw::edges`].
    #[derive(Clone, Copy)]
    pub(super) struct Raw {
        x: *const f32,
        start: usize,
        len: usize,
        r: usize,
        n: usize,
        copied: (usize, usize),
        pub(super) shift: usize,
    }

    impl Raw {
        /// The tile at `start` of row `x` (`n` elements, `start < n`).
        #[inline(always)]
        pub(super) fn of(x: *const f32, start: usize, len: usize, r: usize, n: usize) -> Raw {
            let (first, last, shift) = wgmma_copy_span(x.addr() / 4, start, len, r, n);
            Raw {
                x,
                start,
                len,
                r,
                n,
                copied: (first, last),
                shift,
            }
        }

        /// Tells the barrier at `barrier` to expect the copy and starts it
        /// (with nothing to copy, only arrives). One thread calls it.
        ///
        /// # Safety
        /// `self` is [`Raw::of`] a row of the signal; the raw buffer at
        /// `raw_at` is free (every thread is past its reads and writes of
        /// it, with a proxy fence before); the barrier's phase in progress
        /// expects this one arrival.
        #[inline(always)]
        pub(super) unsafe fn fetch(self, raw_at: u32, barrier: u32) {
            let bytes = 4 * (self.copied.1 - self.copied.0) as u32;
            // SAFETY: the caller's contract; with `bytes > 0` both ends are
            // 16-byte aligned (`of`), the source lies in the row and the
            // destination in the buffer (`copied.1 + shift <= len + 3`).
            unsafe {
                bulk::expect_bytes(barrier, bytes);
                if bytes > 0 {
                    bulk::bulk_copy_to_shared(
                        raw_at + 4 * (self.copied.0 + self.shift) as u32,
                        self.x
                            .wrapping_add(self.start + self.copied.0 - self.r)
                            .cast(),
                        bytes,
                        barrier,
                    );
                }
            }
        }

        /// Writes the tile elements the copy does not bring into the raw
        /// buffer `raw`: the row's inputs at the copy's ends and zeros
        /// outside the row, thread `tid`'s every 128th.
        ///
        /// # Safety
        /// `self` is [`Raw::of`] a row of the signal; `raw` is the block's
        /// raw buffer, not read by anyone until a barrier follows.
        #[inline(always)]
        pub(super) unsafe fn edges(self, raw: *mut f32, tid: usize) {
            let (x, start, len, r, n) = (self.x, self.start, self.len, self.r, self.n);
            let threads = WGMMA_THREADS as usize;
            let value = |e: usize| match tile_source(start, e, r, n) {
                // SAFETY: `tile_source` gives an element of the row.
                Some(i) => unsafe { *x.add(i) },
                None => 0.0,
            };
            let mut e = tid;
            while e < self.copied.0 {
                // SAFETY: `e + shift < len + 4`: inside the buffer.
                unsafe { *raw.add(e + self.shift) = value(e) };
                e += threads;
            }
            let mut e = self.copied.1 + tid;
            while e < len {
                // SAFETY: as above.
                unsafe { *raw.add(e + self.shift) = value(e) };
                e += threads;
            }
        }
    }

    /// Splits the tile in the raw buffer (element `e` at word `e + SHIFT`)
    /// into the staged parts `big` and `small` by [`wgmma_offset`], 4
    /// elements at a time: thread `tid` takes every 128th quad, one or two
    /// 16-byte loads (consecutive across a warp) and a 16-byte store into
    /// each part (the 8 lanes of a store's phase `16 · lines` bytes apart,
    /// distinct banks as `lines` is odd).
    ///
    /// # Safety
    /// The raw buffer holds the tile (the copy waited for, the edges
    /// written, a barrier after); the parts are not read by anyone until a
    /// barrier follows.
    #[inline(always)]
    pub(super) unsafe fn split<const SHIFT: usize>(
        raw: *const f32,
        big: *mut u8,
        small: *mut u8,
        lines: usize,
        len: usize,
        tid: usize,
    ) {
        let threads = WGMMA_THREADS as usize;
        let mut q = tid;
        while q < len / 4 {
            // SAFETY: words `4q .. 4q + 8` lie in the buffer (`len / 4 + 1`
            // quads); the offsets of a quad's 4 elements are consecutive
            // words of a part (`wgmma_offset`, `4q` a multiple of 4).
            unsafe {
                let lo = load4(raw.add(4 * q));
                let v = if SHIFT == 0 {
                    lo
                } else {
                    let hi = load4(raw.add(4 * q + 4));
                    core::array::from_fn(|i| {
                        if i + SHIFT < 4 {
                            lo[i + SHIFT]
                        } else {
                            hi[i + SHIFT - 4]
                        }
                    })
                };
                let halves = v.map(split_tf32_truncated);
                let at = wgmma_offset(lines, 4 * q);
                store4(big.add(at).cast(), halves.map(|h| f32::from_bits(h.0)));
                store4(small.add(at).cast(), halves.map(|h| f32::from_bits(h.1)));
            }
            q += threads;
        }
    }

    /// The descriptors of step `s`'s `B` in the big and the small staged
    /// part of `lines` lines at shared addresses `big_at` and `small_at`
    /// ([`wgmma_b_start`], core matrices [`wgmma_leading`] apart along `t`
    /// and [`WGMMA_STRIDE`] along the columns).
    #[inline(always)]
    pub(super) fn staged(big_at: u32, small_at: u32, lines: usize) -> impl Fn(usize) -> (u64, u64) {
        use crate::descriptor;
        let leading = wgmma_leading(lines) as u32;
        move |s| {
            let at = wgmma_b_start(lines, s) as u32;
            (
                descriptor::unswizzled(big_at + at, leading, WGMMA_STRIDE as u32),
                descriptor::unswizzled(small_at + at, leading, WGMMA_STRIDE as u32),
            )
        }
    }

    /// A tile's products into `acc`, steps `0 .. steps` (3 products each:
    /// small·big, big·small, big·big, the small terms first as they are the
    /// smaller). `mask` is the split mask's two parts and the offset of
    /// word `w` of [`wgmma_a_words`] in them; `b(s)` the descriptors of
    /// step `s`'s `B` in the big and the small staged part ([`staged`] for
    /// this step's layout).
    ///
    /// With `SHARED`, each step loads half its fragments: a fragment's
    /// words 1 and 3 are the step before's 0 and 2 ([`wgmma_a_words`]:
    /// `A[m][t]` depends on `8s + t − m`), so a step loads two words of
    /// each part, a pair, and takes the other two from the step before's:
    /// step `s` reads pairs `s` and `s − 1`. The pairs rotate through three
    /// variables, steps in threes: pair `s + 1` is loaded while step `s`'s
    /// products run, into the variable of pair `s − 2`, whose last reader,
    /// step `s − 1`, is done. The products read the pairs' registers
    /// themselves: with a copy between, the compiler reloaded a register
    /// that a running product still read (wrong sums in the first build).
    /// Without `SHARED`, every step loads its whole fragments, even and odd
    /// steps' in variables of their own, each loaded once the products of
    /// two steps before are done ([`wgmma::rotate`]). Either way each
    /// variable is held until the wait that retires its last reader
    /// ([`wgmma::hold`]). Step 8
    /// (one or two warpgroups, which wait on their own loads) gains 3% from
    /// the shared words; step 9 (three warpgroups, 168 registers) does not
    /// move, and spills 8 bytes with them, so it loads whole fragments.
    /// Returns with the last step's products still running ([`wgmma::wait`]
    /// before reading `acc`).
    ///
    /// # Safety
    /// Every thread of the warpgroup calls it together (uniform across the
    /// warpgroup, as `wgmma` requires); the mask's parts hold every word
    /// the steps read (words 1 and 3 of step 0 included); the staged parts
    /// hold the tile's `8 · steps` values of `t`, made visible to the
    /// asynchronous proxy, and nobody writes them until a [`wgmma::wait`]
    /// covers these products.
    #[inline(always)]
    pub(in crate::conv1d) unsafe fn multiply<const SHARED: bool>(
        acc: &mut [f32; WGMMA_N128_REGS],
        steps: usize,
        warp: usize,
        lane: usize,
        mask: (*const u32, *const u32, usize),
        b: impl Fn(usize) -> (u64, u64),
    ) {
        use crate::prim::wgmma;
        let (mask_big, mask_small, offset) = mask;
        // Words `at` of step `s`'s fragment in each part: the big part's,
        // then the small part's.
        let load = |s: usize, at: [usize; 2]| {
            let words = wgmma_a_words(warp, lane, s);
            let w = at.map(|k| words[k] + offset);
            // SAFETY: the caller's contract: the parts hold these words.
            unsafe {
                [
                    *mask_big.add(w[0]),
                    *mask_big.add(w[1]),
                    *mask_small.add(w[0]),
                    *mask_small.add(w[1]),
                ]
            }
        };
        let issue = |acc: &mut [f32; WGMMA_N128_REGS], s: usize, big: [u32; 4], small: [u32; 4]| {
            let (b_big, b_small) = b(s);
            wgmma::fence();
            // SAFETY: the caller's contract: the whole warpgroup, after the
            // fence, parts visible and unwritten until a wait.
            unsafe {
                wgmma::mma_tf32_m64n128k8(acc, small, b_big, true);
                wgmma::mma_tf32_m64n128k8(acc, big, b_small, true);
                wgmma::mma_tf32_m64n128k8(acc, big, b_big, true);
            }
            wgmma::commit();
        };
        if SHARED {
            // Step `s` from pairs `now` (`[big 0, big 2, small 0, small 2]`)
            // and `before` (step `s − 1`'s).
            let issue = |acc: &mut _, s, now: &[u32; 4], before: &[u32; 4]| {
                let big = [now[0], before[0], now[1], before[1]];
                issue(acc, s, big, [now[2], before[2], now[3], before[3]]);
            };
            let pair = |s: usize| load(s, [0, 2]);
            let mut x = pair(0);
            let mut y = [0u32; 4];
            // Step 0's words 1 and 3, as the pair of a step −1.
            let mut z = load(0, [1, 3]);
            let mut s = 0;
            // Step `s` reads `x` and `z`, `s + 1` `y` and `x`, `s + 2` `z`
            // and `y`.
            loop {
                issue(acc, s, &x, &z);
                // Step s − 1 is done: `y` (pair s − 2) is free.
                wgmma::wait::<1>(acc);
                wgmma::hold(&y);
                if s + 1 >= steps {
                    break;
                }
                y = pair(s + 1);
                issue(acc, s + 1, &y, &x);
                // Step s is done: `z` (pair s − 1) is free.
                wgmma::wait::<1>(acc);
                wgmma::hold(&z);
                if s + 2 >= steps {
                    break;
                }
                z = pair(s + 2);
                issue(acc, s + 2, &z, &y);
                // Step s + 1 is done: `x` (pair s) is free.
                wgmma::wait::<1>(acc);
                wgmma::hold(&x);
                if s + 3 >= steps {
                    break;
                }
                x = pair(s + 3);
                s += 3;
            }
        } else {
            // Step `s`'s whole fragments, `[big 0, big 1, small 0, small
            // 1]` and `[big 2, big 3, small 2, small 3]`.
            let fragment = |s: usize| [load(s, [0, 1]), load(s, [2, 3])];
            let issue = |acc: &mut _, s, f: &wgmma::FragmentPair| {
                let [a, b] = f;
                issue(acc, s, [a[0], a[1], b[0], b[1]], [a[2], a[3], b[2], b[3]]);
            };
            wgmma::rotate(acc, steps, fragment, issue, || {});
        }
    }

    /// Stores this thread's 64 outputs of the tile at `start` of output
    /// row `y` (those below `n`), and computes again directly
    /// ([`outputs_directly`]) any that came out non-finite.
    ///
    /// # Safety
    /// `acc` holds the tile's finished products; `x`, `y` are a row of the
    /// signal and of the output (`n` elements each), `mask` the launch's
    /// `taps` weights.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(in crate::conv1d) unsafe fn store(
        acc: &[f32; WGMMA_N128_REGS],
        x: *const f32,
        y: *mut f32,
        mask: *const f32,
        taps: usize,
        start: usize,
        warp: usize,
        lane: usize,
        n: usize,
    ) {
        // Register `reg`'s output lies a constant `wgmma_d_output(0, 0,
        // reg)` after register 0's: one address and one bound per thread,
        // and each store an immediate offset from it (computed per
        // register, the addresses took 136 bytes of spills in step 9).
        let first = start + wgmma_d_output(warp, lane, 0);
        let left = n.saturating_sub(first);
        let at = y.wrapping_add(first);
        // Spelled out: a rolled loop would keep `acc` in local memory.
        let mut finite = true;
        unroll!(c in [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15] => {
            unroll!(e in [0 1 2 3] => {
                let reg = 4 * c + e;
                let delta = wgmma_d_output(0, 0, reg);
                finite &= acc[reg].is_finite();
                if delta < left {
                    // SAFETY: output `first + delta < n` of the row (the
                    // caller's contract).
                    unsafe { *at.add(delta) = acc[reg] };
                }
            });
        });
        if !finite {
            // SAFETY: the caller's contract.
            unsafe { outputs_directly(x, y, mask, taps, start, warp, lane, n) };
        }
    }

    /// Computes again, directly, this thread's outputs of the tile at
    /// `start` that it stored non-finite: `Σ_j X[i − r + j] · M[j]` over the
    /// window's terms in step 7's order, zeros outside the row multiplied
    /// as step 7 multiplies them (NaN and ±∞ in the signal meet zero
    /// weights and split parts in the products, which the window's own
    /// terms may not give). Reads back the thread's own stores. Not
    /// inlined, and given no array, so that it costs the products' loop
    /// neither registers nor a stack frame.
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn outputs_directly(
        x: *const f32,
        y: *mut f32,
        mask: *const f32,
        taps: usize,
        start: usize,
        warp: usize,
        lane: usize,
        n: usize,
    ) {
        let r = taps / 2;
        for reg in 0..WGMMA_N128_REGS as u32 {
            let i = start + wgmma_d_output(warp, lane, reg as usize);
            if i < n && !(*y.add(i)).is_finite() {
                let mut v = 0.0;
                for j in 0..taps {
                    let input = match tile_source(i, j, r, n) {
                        Some(at) => *x.add(at),
                        None => 0.0,
                    };
                    v = fma(input, *mask.add(j), v);
                }
                *y.add(i) = v;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    // The crate is `no_std`; its host tests may allocate.
    extern crate std;
    use super::*;
    use std::vec;

    /// Runs one tile on the host as the tensor cores read it: stages
    /// inputs by [`wgmma_offset`] into bytes, reads every step's `B`
    /// through the descriptor's addressing (start, leading and stride
    /// offsets, 16-byte rows of core matrices), every lane's `A` by
    /// [`wgmma_a_words`], and places `D` by [`wgmma_d_output`]; the sums
    /// (in `f64`, unsplit) must equal the definition's.
    fn simulate(taps: usize) {
        let (steps, lines) = (wgmma_steps(taps), wgmma_lines(taps));
        let len = wgmma_tile_len(taps);
        assert!(len <= WGMMA_ROWS * lines);
        let x = |e: usize| ((e * 7919 + 13) % 1009) as f64 - 504.0;
        let m = |j: usize| ((j * 31 + 7) % 61) as f64 - 30.0;
        let mut staged = vec![f64::NAN; wgmma_part_bytes(taps) / 4];
        for e in 0..len {
            let at = wgmma_offset(lines, e);
            assert!(
                at.is_multiple_of(4) && staged[at / 4].is_nan(),
                "element {e}"
            );
            staged[at / 4] = x(e);
        }
        let mut padded = vec![0.0f64; wgmma_mask_len(taps)];
        for j in 0..taps {
            padded[j + WGMMA_ROWS] = m(j);
        }
        let mut d = vec![0.0f64; WGMMA_TILE];
        for s in 0..steps {
            let start = wgmma_b_start(lines, s);
            let b = |t: usize, c: usize| {
                let at = start
                    + (t / 4) * wgmma_leading(lines)
                    + (c / 8) * WGMMA_STRIDE
                    + (c % 8) * 16
                    + (t % 4) * 4;
                staged[at / 4]
            };
            for warp in 0..4 {
                for lane in 0..32 {
                    let (g, q) = (lane / 4, lane % 4);
                    let words = wgmma_a_words(warp, lane, s);
                    let a = [
                        (16 * warp + g, q),
                        (16 * warp + g + 8, q),
                        (16 * warp + g, q + 4),
                        (16 * warp + g + 8, q + 4),
                    ];
                    for (k, &(row, t)) in a.iter().enumerate() {
                        // The fragment holds A[row][8s + t] = M[8s + t − row].
                        let want = (8 * s + t)
                            .checked_sub(row)
                            .filter(|&j| j < taps)
                            .map_or(0.0, m);
                        assert_eq!(padded[words[k]], want, "step {s} warp {warp} lane {lane}");
                        for c in 0..WGMMA_COLS {
                            d[WGMMA_ROWS * c + row] += padded[words[k]] * b(t, c);
                        }
                    }
                }
            }
        }
        let mut seen = vec![false; WGMMA_TILE];
        for warp in 0..4 {
            for lane in 0..32 {
                for reg in 0..64 {
                    let o = wgmma_d_output(warp, lane, reg);
                    assert!(!seen[o]);
                    seen[o] = true;
                }
            }
        }
        for (o, &got) in d.iter().enumerate() {
            let want: f64 = (0..taps).map(|j| x(o + j) * m(j)).sum();
            assert_eq!(got, want, "output {o}, {taps} taps");
        }
    }

    #[test]
    fn descriptors_read_the_convolution() {
        for taps in [1, 2, 8, 57, 64, 127, 128] {
            simulate(taps);
        }
    }

    #[test]
    fn a_quads_elements_are_consecutive_words() {
        // The split's 16-byte stores: elements `4q .. 4q + 4` at one
        // 16-byte aligned offset and the 3 words after it.
        for taps in [1, 127, 1025] {
            let lines = wgmma_lines(taps);
            for q in 0..wgmma_tile_len(taps) / 4 {
                let at = wgmma_offset(lines, 4 * q);
                assert!(at.is_multiple_of(16));
                for i in 1..4 {
                    assert_eq!(wgmma_offset(lines, 4 * q + i), at + 4 * i);
                }
            }
        }
    }

    #[test]
    fn a_phase_of_quad_stores_hits_distinct_banks() {
        // 8 lanes' 16-byte stores (quads `8p .. 8p + 8`) cover 32 banks.
        for taps in [1, 127, 1025] {
            let lines = wgmma_lines(taps);
            for p in 0..wgmma_tile_len(taps) / 32 {
                let mut banks: std::vec::Vec<usize> = (8 * p..8 * p + 8)
                    .flat_map(|q| (0..4).map(move |i| (wgmma_offset(lines, 4 * q) / 4 + i) % 32))
                    .collect();
                banks.sort_unstable();
                banks.dedup();
                assert_eq!(banks.len(), 32, "{taps} taps, phase {p}");
            }
        }
    }

    #[test]
    fn the_copy_and_the_edges_cover_the_tile() {
        // Every alignment of the row, first, inner and last tiles, rows
        // shorter than a tile: the copy is 16-byte aligned at both ends in
        // memory and in the buffer, lies inside the row, and the tile
        // elements it leaves inside the row number at most 3 at each end.
        for taps in [1, 2, 7, 127, 1025] {
            let (len, r) = (wgmma_tile_len(taps), taps / 2);
            for word0 in 0..4 {
                for n in [1, 3, 5, 64, 1000, WGMMA_TILE, 3 * WGMMA_TILE + 5] {
                    for start in (0..n).step_by(WGMMA_TILE) {
                        let (first, last, shift) = wgmma_copy_span(word0, start, len, r, n);
                        let inside = |e: usize| start + e >= r && start + e - r < n;
                        if first == last {
                            assert_eq!((first, shift), (len, 0));
                            continue;
                        }
                        assert!(first < last && last <= len && inside(first) && inside(last - 1));
                        assert!((word0 + start + first - r).is_multiple_of(4));
                        assert!((word0 + start + last - r).is_multiple_of(4));
                        assert!((first + shift).is_multiple_of(4) && shift < 4);
                        assert!(last + shift <= 4 * (len / 4 + 1));
                        let before = (0..first).filter(|&e| inside(e)).count();
                        let after = (last..len).filter(|&e| inside(e)).count();
                        assert!(
                            before <= 3 && after <= 3,
                            "{taps} taps, n {n}, start {start}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn staged_rows_of_a_warp_hit_distinct_banks() {
        for taps in [1, 127, 1025] {
            let lines = wgmma_lines(taps);
            for first in (0..wgmma_tile_len(taps)).step_by(32) {
                let mut banks: std::vec::Vec<usize> = (first..first + 32)
                    .map(|e| wgmma_offset(lines, e) / 4 % 32)
                    .collect();
                banks.sort_unstable();
                banks.dedup();
                assert_eq!(banks.len(), 32, "{taps} taps, from {first}");
            }
        }
    }

    #[test]
    fn shared_memory_and_bounds() {
        assert_eq!(wgmma_shared_bytes(1025), 120_352);
        assert_eq!(wgmma_shared_bytes(127), 102_432);
        assert_eq!(wgmma_error_units(127), 1204);
        for taps in 1..=super::super::MAX_TAPS {
            let lines = wgmma_lines(taps);
            // The last step's last core matrix lies inside the part.
            let last = wgmma_b_start(lines, wgmma_steps(taps) - 1)
                + wgmma_leading(lines)
                + (WGMMA_COLS / 8 - 1) * WGMMA_STRIDE
                + 128;
            assert!(last <= wgmma_part_bytes(taps), "{taps} taps");
            assert!(wgmma_a_words(0, 3, wgmma_steps(taps) - 1)[2] < wgmma_mask_len(taps));
            assert!(wgmma_a_words(3, 28, 0)[1] >= 1);
        }
    }

    /// `multiply` loads two words of each step's fragment and takes the
    /// other two from the step before.
    #[test]
    fn a_fragment_shares_two_words_with_the_step_before() {
        for warp in 0..4 {
            for lane in 0..32 {
                for s in 1..200 {
                    let (now, before) = (
                        wgmma_a_words(warp, lane, s),
                        wgmma_a_words(warp, lane, s - 1),
                    );
                    assert_eq!((now[1], now[3]), (before[0], before[2]));
                }
            }
        }
    }
}
