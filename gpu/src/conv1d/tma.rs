//! Step 9 (sm_90a): step 8's warpgroup products, the tile brought by the
//! copy engine straight into the layout the tensor cores read, and three
//! warpgroups per block, each on tiles of its own.
//!
//! Three changes to step 8, each taking work off the block between its
//! products:
//! - **The copy lays the tile out.** Step 8's bulk copy brings a tile as it
//!   lies in the row; the threads then move it, split, into the
//!   `super::wgmma::wgmma_offset` layout. Here a tensor copy writes the
//!   tile in a layout the tensor cores read, zeros outside the tensor
//!   included: a 4-dimensional view of the row, element `64·line + 8·g +
//!   a` in group `g` (`a` < 8, `g` < 8), a box of `8 × lines × 8` (× 1 row)
//!   with the dimensions `a`, `line`, `g` (global strides 4, 256 and 32
//!   bytes), in the 32-byte swizzle (`tma_offset`). Each of the box's
//!   rows is a whole 32-byte sector of the row: a box of 16-byte rows
//!   (step 8's layout, unswizzled) asked L2 for every sector twice.
//! - **The big part is the inputs themselves.** The tensor cores read only
//!   the top 19 bits of a TF32 operand: they truncate, which is step 8's
//!   split (`prim::mma::split_tf32_truncated`). So the copied
//!   inputs are `B`'s big part as they stand, and the threads compute only
//!   the small part: one pass of 16-byte shared loads and stores, in the
//!   order they lie (the split is elementwise, so the layout does not
//!   matter to it).
//! - **Three warpgroups, no turns.** Without step 8's raw buffer a
//!   warpgroup needs two parts (67 KB at 127 taps): three fit in a block,
//!   one block per SM, each warpgroup on its own tiles. While one waits
//!   for its copy, splits and stores, the other two multiply.
//!
//! The default from `TMA_MIN_TAPS` on sm_90a until step 10
//! ([`super::corrections`]) took its place. Against step 8 (2^26
//! outputs, µs, the reports of 2026-11-26, step 8 / this step): H100 63
//! taps 213.8 / 203.6, 127 taps 260.5 / 259.8; H200 206.6 / 203.0, 264.4
//! / 256.1, 1 025 taps 1 119 / 1 098 (the H100's 1 025 taps, 1 079 /
//! 1 183, is the power cap's spread: 1 077 / 1 075 in a run of the build
//! before). Built first with step 8's unswizzled layout, it trailed step
//! 8 in the steady state (127 taps, H200: 281.2 against 267.7); the
//! linear split, the swizzle and the window on 32 bytes made up the
//! difference, and copies of only the lines read let it hold every mask
//! (docs/notes/conv1d.md).
//!
//! The box's rows must each be one whole sector: the tile's window is
//! moved down by `shift` (0 to 7) elements so that the copy starts on 32
//! bytes, and the mask's rows up by as many (`A[m][t] = M[t − m −
//! shift]`), which costs a step where `taps + 63 + shift` crosses a
//! multiple of 8. (On 16 bytes only, as the copy itself requires, every
//! row of the box straddles two sectors: in a CUDA C++ model on an H200,
//! 39 and 55 taps, whose windows then started 16 bytes into a sector,
//! read 210 µs where 47 and 63 read 184 and 198.) The row's elements before the
//! map's first line or after its last (at most 63 at each end) arrive as
//! zeros; the threads write them while they split (`tma_geometry`).
//!
//! The tensor map (128 bytes, encoded by the host for each launch: the row
//! from [`TmaGeometry::origin`], [`TmaGeometry::lines`] lines, `rows` rows
//! [`TmaTensor::strides`] apart) reaches the kernel as a parameter, which
//! the copy engine reads where the launch put it, as CUDA C++'s
//! `__grid_constant__` maps are read (`kernel::MapParam`).

#[cfg(all(target_arch = "nvptx64", target_feature = "sm_90a"))]
use super::copied::CopiedTile;
pub use super::copied::{TMA_ALIGN, TmaGeometry, tma_geometry, tma_offset};
use super::wgmma::{BF16_K, WGMMA_ROWS, WGMMA_THREADS, bf16_steps, wgmma_steps, wgmma_tile_len};
#[cfg(target_arch = "nvptx64")]
use crate::kernel::MapParam;

/// Warpgroups of a block: each works in its own two parts of shared
/// memory, on every third tile of the block's runs.
#[doc(hidden)]
pub const TMA_GROUPS: usize = 3;

/// Threads of a block.
#[doc(hidden)]
pub const TMA_THREADS: u32 = WGMMA_THREADS * TMA_GROUPS as u32;

/// The most places a tile's window moves down so that its copy starts on
/// a sector ([`TmaGeometry::shift`]).
#[doc(hidden)]
pub const TMA_MAX_SHIFT: usize = TMA_ALIGN - 1;

/// Zeros before the first weight in each part of the staged mask: word
/// `TMA_MASK_LEAD + t − m − shift` is `A[m][t]` without a check (the
/// fragments' lowest word is `t − m = −63`, minus the shift).
#[doc(hidden)]
pub const TMA_MASK_LEAD: usize = WGMMA_ROWS + TMA_ALIGN;

/// Steps of 8 values of `t` for a mask of `taps` moved by `shift`.
#[doc(hidden)]
pub const fn tma_steps(taps: usize, shift: usize) -> usize {
    wgmma_steps(taps + shift)
}

/// Inputs a tile's products read for a mask of `taps` moved by `shift`.
#[doc(hidden)]
pub const fn tma_tile_len(taps: usize, shift: usize) -> usize {
    wgmma_tile_len(taps + shift)
}

/// Lines of a tile's copy (the box) for a mask of `taps` moved by `shift`:
/// the lines its products read, no more. A group of the part is `lines`
/// rows of 32 bytes, so a group may start on any 32-byte row of a 256-byte
/// unit of the swizzle: the swizzle is a function of the shared address,
/// the same for the copy and the tensor cores.
#[doc(hidden)]
pub const fn tma_lines(taps: usize, shift: usize) -> usize {
    tma_tile_len(taps, shift).div_ceil(WGMMA_ROWS)
}

/// Bytes of one tile's copy of [`tma_lines`]: 8 groups of `lines` lines
/// of 32 bytes.
#[doc(hidden)]
pub const fn tma_copy_bytes(lines: usize) -> usize {
    8 * 32 * lines
}

/// Bytes of one staged part: the copy of the longest window, for any
/// shift. A multiple of 256, so every part starts on a unit of the
/// swizzle.
#[doc(hidden)]
pub const fn tma_part_bytes(taps: usize) -> usize {
    tma_copy_bytes(tma_lines(taps, TMA_MAX_SHIFT))
}

/// Byte offset where step `s`'s `B` starts in a staged part (element `8s`
/// before the swizzle, which the tensor cores apply per row as the copy
/// did): its 8 values of `t` are group `s % 8` of line `s / 8` on, column
/// `c` 32 bytes after column `c − 1`, the descriptor's groups of 8
/// columns 256 bytes apart.
#[doc(hidden)]
pub const fn tma_b_start(lines: usize, s: usize) -> usize {
    (s % 8) * 32 * lines + 32 * (s / 8)
}

/// The default convolution runs step 9 (now step 10,
/// [`super::Conv1dVariant::Bf16Corrections`], as fast at 63 taps and
/// faster beyond) for masks of at least this many taps in the sm_90a
/// module
/// ([`super::Conv1dVariant::fastest_for`]), where step 7 takes over below
/// on other modules ([`super::TENSOR_MIN_TAPS`]). Measured at 2^26
/// outputs, µs, steps 7 / 8 / 9, two rounds each after 2 s of launches:
/// H100 47 taps 218.6 / 211.9 / 204.9, 55 taps 228.1 / 221.5 / 208.5;
/// H200 39 taps 202.8 / 201.5 / 192.0, 47 taps 207.0 / 200.3 / 188.5, 55
/// taps 223.7 / 211.3 / 203.9, 71 taps 258.0 / 229.0 / 214.9.
#[doc(hidden)]
pub const TMA_MIN_TAPS: usize = super::TENSOR_MIN_TAPS;

/// Words of each of the mask's two arrays, zero-padded: the fragments of
/// every step of the longest moved mask, rounded up to whole BF16
/// products for step 10 ([`super::corrections`]).
#[doc(hidden)]
pub const fn tma_mask_len(taps: usize) -> usize {
    TMA_MASK_LEAD + BF16_K * bf16_steps(wgmma_steps(taps + TMA_MAX_SHIFT))
}

/// Byte offset of the mask's arrays in a block's shared memory: after the
/// warpgroups' two parts each (inputs as copied; small parts, or step
/// 10's two BF16 parts).
#[doc(hidden)]
pub const fn tma_mask_offset(taps: usize) -> usize {
    TMA_GROUPS * 2 * tma_part_bytes(taps)
}

/// Byte offset of the warpgroups' barriers (8 bytes each), after the
/// mask's arrays.
#[doc(hidden)]
pub const fn tma_barriers_offset(taps: usize) -> usize {
    tma_mask_offset(taps) + 2 * 4 * tma_mask_len(taps)
}

/// Shared memory of a block: 203 480 bytes at 127 taps, 232 152 at 1 025.
#[doc(hidden)]
pub const fn tma_shared_bytes(taps: usize) -> usize {
    tma_barriers_offset(taps) + 8 * TMA_GROUPS
}

/// Step 10's error bound for a mask of `taps` ([`super::corrections`]), in
/// units of `2^-24 · Σ_j |x_j · m_j|` (and of 2^-149 for subnormal
/// results).
///
/// With `u = 2^-24` and step 9's split by truncation (`|small| < 2^-10
/// |x|`, `big + small = x` exactly), `x·m = big_x·big_m + x·small_m +
/// small_x·big_m`. The TF32 product `big_x·big_m` is exact. A BF16
/// rounding errs by at most `2^-9` of its value, so `bf16(x)·bf16(small_m)`
/// is `x·small_m` within `(2^-8 + 2^-18)·|x·small_m| < 2^-18 (1 + 2^-10)
/// |x·m|`, 64.1u, and `bf16(small_x)·bf16(big_m)` likewise: 129u for the
/// terms (the products of BF16 values are exact in `f32`). The tensor
/// cores then add, per 16 values of `t`, 16 TF32 products and 32 BF16
/// products: 24 additions per 8 values, as step 9's three TF32 products,
/// each taken to err by up to `2u` of the terms' magnitudes (at most
/// `1 + 2^-9` of `Σ|x·m|`): `48.1u` per step of 8 over the `2 ·
/// bf16_steps` steps of the longest moved mask. Hence `49 · 2 ·
/// bf16_steps + 130`; for 127 taps 1 404, against step 9's 1 252.
pub const fn bf16_error_units(taps: usize) -> usize {
    let steps = bf16_steps(tma_steps(taps, TMA_MAX_SHIFT));
    49 * 2 * steps + 130
}

/// Step 9's error bound for a mask of `taps`: step 8's
/// ([`super::wgmma_error_units`]) for the longest moved mask.
pub const fn tma_error_units(taps: usize) -> usize {
    super::wgmma_error_units(taps + TMA_MAX_SHIFT)
}

/// The tensor map's view of `rows` rows `pitch` elements apart for a
/// mask of `taps` (the host encodes it): dimensions innermost first, `a`
/// (8 elements), `line`, `g` (8 groups) and the row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TmaTensor {
    /// Byte offset of the map's first element from the signal's: `4 ·
    /// origin`.
    pub offset: usize,
    /// Extent of each dimension.
    pub dims: [u64; 4],
    /// Byte stride of each dimension after the first.
    pub strides: [u64; 3],
    /// The box a copy brings: one tile of `tma_part_bytes`.
    pub boxed: [u32; 4],
}

/// The tensor map's view for `geometry`; `pitch` is unused for one row.
#[doc(hidden)]
pub const fn tma_tensor(
    geometry: TmaGeometry,
    taps: usize,
    rows: usize,
    pitch: usize,
) -> TmaTensor {
    let row_stride = if rows > 1 { 4 * pitch } else { 16 };
    TmaTensor {
        offset: 4 * geometry.origin,
        dims: [8, geometry.lines as u64, 8, rows as u64],
        strides: [4 * WGMMA_ROWS as u64, 32, row_stride as u64],
        boxed: [8, tma_lines(taps, geometry.shift) as u32, 8, 1],
    }
}

const _: () = assert!(
    // Three warpgroups' parts and the mask fit in the 227 KiB of an SM
    // for every mask.
    tma_shared_bytes(super::MAX_TAPS) <= super::wgmma::SM90_MAX_SHARED
        // The copies' destinations (and the parts) on 256 bytes, the
        // swizzle's unit.
        && tma_part_bytes(1).is_multiple_of(256)
        // The barriers on 8 bytes.
        && tma_barriers_offset(1).is_multiple_of(8)
        // A box dimension holds at most 256 elements.
        && tma_lines(super::MAX_TAPS, TMA_MAX_SHIFT) <= 256
        // Named barriers 1 to 3, of 16.
        && TMA_GROUPS < 16
);

/// The launch's operands and the tensor map: step 8's, plus `map` (the
/// map the host encoded for this launch, where the launch put it).
#[cfg(target_arch = "nvptx64")]
#[cfg_attr(not(target_feature = "sm_90a"), allow(dead_code))]
#[derive(Clone, Copy)]
pub(super) struct MapOperands {
    pub signal: *const f32,
    pub signal_pitch: usize,
    pub n: usize,
    pub rows: u32,
    pub mask: *const f32,
    pub taps: u32,
    pub out: *mut f32,
    pub out_pitch: usize,
    pub map: MapParam,
}

/// Contract: the family's, blocks of
/// [`TMA_THREADS`] threads and [`tma_shared_bytes`] of shared memory
/// (whose window starts on 256 bytes, as a kernel without static shared
/// memory's does); `map` encoded from [`tma_tensor`] of
/// [`tma_geometry`]`(signal / 4, taps, n)` (which is not `None`), in the
/// 32-byte swizzle, over `rows` rows whose pitch is a multiple of
/// [`TMA_ALIGN`] (or one row), at least `signal + 4 · origin` (32-byte
/// aligned), `rows` below 2^31 and
/// lines below 2^31; PTX for sm_90a (other
/// targets trap: the host refuses them first).
///
/// Warpgroup `g` of block `b` computes tiles `3b + g`, then `3·gridDim.x`
/// on, of each of its rows (rows `gridDim.y` apart): the grid's warpgroups
/// sweep the row together. (Step 8's runs of consecutive tiles per block
/// measured the same: H200, 127 taps, 265.3 against 264.5 µs.) Per tile of
/// a warpgroup: (1) it waits for the tile's copy, computes the small part
/// from the copied inputs ([`split_small`]: writing the row's elements
/// outside the map, and the zeros outside the row, into both parts), then
/// a proxy fence and its barrier; (2) the products, as step 8's, with the
/// copied inputs as the big part, each step's `B` at [`tma_b_start`] in
/// the swizzle; (3) once all are
/// done, its barrier, the next tile's copy, and the outputs, as step 8's.
///
/// With `BF16`, step 10's ([`super::corrections`]): the second part holds
/// the two BF16 parts, the mask's second array the pairs of BF16 words,
/// and each pair of steps takes two TF32 and two BF16 products.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub(super) unsafe fn kernel<const BF16: bool>(op: MapOperands) {
    #[cfg(not(target_feature = "sm_90a"))]
    {
        let _ = op;
        crate::prim::trap()
    }
    #[cfg(target_feature = "sm_90a")]
    {
        use super::corrections::{bf16_b_start, bf16_tile_len, device as corrections};
        use super::wgmma::WGMMA_TILE;
        use super::wgmma::device::{multiply, store};
        use crate::descriptor;
        use crate::prim::wgmma::{self, WGMMA_N128_REGS};
        use crate::prim::*;

        let conv = super::Operands {
            signal: op.signal,
            signal_pitch: op.signal_pitch,
            n: op.n,
            rows: op.rows,
            mask: op.mask,
            taps: op.taps,
            out: op.out,
            out_pitch: op.out_pitch,
        };
        let threads = WGMMA_THREADS as usize;
        let (taps, r) = (op.taps as usize, op.taps as usize / 2);
        let (n, rows, mask) = (op.n, op.rows as usize, op.mask);
        let Some(geometry) = tma_geometry(op.signal.addr() / 4, taps, n) else {
            // The host launches only with a geometry.
            trap()
        };
        let shift = geometry.shift;
        let steps = tma_steps(taps, shift);
        let len = if BF16 {
            bf16_tile_len(taps, shift)
        } else {
            tma_tile_len(taps, shift)
        };
        let lines = tma_lines(taps, shift);
        let part = tma_part_bytes(taps);
        let mask_len = tma_mask_len(taps);
        let group = thread_idx_x() as usize / threads;
        let tid = thread_idx_x() as usize % threads;
        let (warp, lane) = (tid / 32, tid % 32);
        let shared = dynamic_shared::<u8>();
        let copied = shared.add(group * 2 * part);
        // Step 9's small part, or step 10's two BF16 parts of half a part.
        let second = copied.add(part);
        let mask_big = shared.add(tma_mask_offset(taps)).cast::<u32>();
        // Step 9's small part of the mask, or step 10's pairs of BF16 words.
        let mask_second = mask_big.add(mask_len);
        let (copied_at, second_at) = (shared_address(copied), shared_address(second));
        let barrier = shared_address(shared.add(tma_barriers_offset(taps) + 8 * group));
        let own = 1 + group as u32;

        // The mask's parts, zero-padded, by the whole block; read after
        // the block barrier below.
        let mut j = thread_idx_x() as usize;
        while j < mask_len {
            let w = if j >= TMA_MASK_LEAD && j - TMA_MASK_LEAD < taps {
                *mask.add(j - TMA_MASK_LEAD)
            } else {
                0.0
            };
            let (big, small) = split_tf32_truncated(w);
            *mask_big.add(j) = big;
            *mask_second.add(j) = if BF16 {
                let big = f32::from_bits(big);
                to_bf16x2(big, w - big)
            } else {
                small
            };
            j += TMA_THREADS as usize;
        }

        let tiles = n.div_ceil(WGMMA_TILE);
        let stride = TMA_GROUPS * grid_dim_x() as usize;
        let me = TMA_GROUPS * block_idx_x() as usize + group;
        let tiles_mine = if me < tiles {
            (tiles - me).div_ceil(stride)
        } else {
            0
        };
        let mine = |k: usize| me + k * stride;
        let step_rows = grid_dim_y() as usize;
        let map_at = op.map.address();
        // One thread of each warpgroup owns its barrier and starts its
        // copies: the first tile's now, each next one's once the products
        // of the tile before are done.
        let fetch = |row: usize, tile: usize| {
            let line = geometry.first_line(tile * WGMMA_TILE, r) as i32;
            // SAFETY: the map is the launch's parameter; the box
            // is one part, into this warpgroup's first part, free (every
            // thread is past its products and split of the tile before);
            // the barrier's phase in progress expects it.
            unsafe {
                bulk::expect_bytes(barrier, tma_copy_bytes(lines) as u32);
                bulk::tensor_copy_4d_to_shared(
                    copied_at,
                    map_at,
                    [0, line, 0, row as i32],
                    barrier,
                );
            }
        };
        let mut row = block_idx_y() as usize;
        if tid == 0 {
            bulk::prefetch_tensor_map(map_at);
            bulk::init_barrier(barrier, 1);
            if row < rows && tiles_mine > 0 {
                fetch(row, mine(0));
            }
        }
        sync_threads();
        let mut parity = 0;
        while row < rows && tiles_mine > 0 {
            let x = conv.input_row(row);
            let y = conv.output_row(row);
            let last_row = row + step_rows >= rows;
            for k in 0..tiles_mine {
                let start = mine(k) * WGMMA_TILE;
                // 1. The inputs: copied; the small part split from them.
                bulk::wait_parity(barrier, parity);
                parity ^= 1;
                let tile = CopiedTile {
                    copied,
                    lines,
                    x,
                    n,
                    first: start as i64 - (r + shift) as i64,
                    len,
                    geometry,
                };
                if BF16 {
                    corrections::split(tile, second, part / 2, tid);
                } else {
                    split_small(tile, second, tid);
                }
                // The parts are read by the products, and the copied part
                // rewritten by the next copy: both through the async proxy.
                wgmma::fence_proxy_async();
                sync_named(own, threads as u32);

                // 2. The products. The next tile's copy starts once they
                // no longer read the copied part.
                let next = || {
                    if k + 1 < tiles_mine {
                        fetch(row, mine(k + 1));
                    } else if !last_row {
                        fetch(row + step_rows, mine(0));
                    }
                };
                let mut acc = [0.0f32; WGMMA_N128_REGS];
                let offset = TMA_MASK_LEAD - WGMMA_ROWS - shift;
                let mask_at = (mask_big.cast_const(), mask_second.cast_const(), offset);
                let b = |s: usize| {
                    let at = tma_b_start(lines, s) as u32;
                    (
                        descriptor::swizzled_32(copied_at + at, 256),
                        descriptor::swizzled_32(second_at + at, 256),
                    )
                };
                if BF16 {
                    let b16 = |p: usize| {
                        let at = second_at + bf16_b_start(lines, p) as u32;
                        (
                            descriptor::swizzled_32(at, 256),
                            descriptor::swizzled_32(at + (part / 2) as u32, 256),
                        )
                    };
                    let b = |s: usize| b(s).0;
                    // Once the TF32 products are done, the next tile's
                    // copy lands during the BF16 ones.
                    let copied_free = || {
                        sync_named(own, threads as u32);
                        if tid == 0 {
                            next();
                        }
                    };
                    corrections::multiply(
                        &mut acc,
                        steps,
                        warp,
                        lane,
                        mask_at,
                        b,
                        b16,
                        copied_free,
                    );
                } else {
                    // Whole fragments: see `multiply`.
                    multiply::<false>(&mut acc, steps, warp, lane, mask_at, b);
                }
                wgmma::wait::<0>(&mut acc);
                // Every warp's products are done (each waited for its own):
                // the next tile's split (and step 9's next copy) may
                // overwrite their inputs.
                sync_named(own, threads as u32);
                if !BF16 && tid == 0 {
                    next();
                }

                // 3. The outputs.
                store(&acc, x, y, mask, taps, start, warp, lane, n);
            }
            row += step_rows;
        }
    }
}

/// Computes the small part of `tile` from its copied inputs, 4 elements
/// at a time. Where the copy brought every element the products read
/// ([`CopiedTile::whole`]), thread `tid` takes every 128th 16-byte unit of
/// the part in order: no offsets and no edge tests (on an H200, 127 taps,
/// 2^26 outputs: 273.0 → 263.1 µs, 63 taps 227.2 → 221.7). Elsewhere,
/// every 128th quad of the tile ([`CopiedTile::quad`]), at [`tma_offset`]
/// in both parts.
///
/// # Safety
/// The copy of the tile has landed (its phase waited for); the copied
/// part and `small` are this warpgroup's, not read by anyone until a
/// barrier follows; the tile's `x` is a row of the signal of `n` elements.
#[cfg(all(target_arch = "nvptx64", target_feature = "sm_90a"))]
#[inline(always)]
unsafe fn split_small(tile: CopiedTile, small: *mut u8, tid: usize) {
    use crate::prim::*;
    let threads = WGMMA_THREADS as usize;
    if tile.whole() {
        // The parts' 16-byte units in order, no offsets and no edge tests.
        let mut u = tid;
        while u < WGMMA_ROWS / 4 * tile.lines {
            let v = load4(tile.copied.add(16 * u).cast());
            store4(
                small.add(16 * u).cast(),
                v.map(|e| f32::from_bits(split_tf32_truncated(e).1)),
            );
            u += threads;
        }
        return;
    }
    let mut q = tid;
    while q < tile.len / 4 {
        let (at, v) = tile.quad(q);
        store4(
            small.add(at).cast(),
            v.map(|e| f32::from_bits(split_tf32_truncated(e).1)),
        );
        q += threads;
    }
}

/// Mask lengths the host tests of steps 9 and 10 take.
#[cfg(test)]
pub(super) const TEST_TAPS: [usize; 9] = [1, 2, 7, 56, 63, 127, 128, 383, super::MAX_TAPS];

/// The weight that word `j` of the moved mask holds for a mask of `taps`
/// (word `j` is weight `j − TMA_MASK_LEAD`), `None` in the zero padding:
/// what the host tests of steps 9 and 10's fragments check against.
#[cfg(test)]
pub(super) fn test_weight(taps: usize, j: usize) -> Option<usize> {
    (j >= TMA_MASK_LEAD && j - TMA_MASK_LEAD < taps).then(|| j - TMA_MASK_LEAD)
}

#[cfg(test)]
mod tests {
    // The crate is `no_std`; its host tests may allocate.
    extern crate std;
    use super::super::wgmma::{swizzle_32, wgmma_a_words};
    use super::*;
    use std::vec;

    const TAPS: [usize; 9] = TEST_TAPS;

    #[test]
    fn geometry_puts_the_copies_on_32_bytes() {
        for taps in TAPS {
            let r = taps / 2;
            for word0 in 0..16 {
                for n in [1, 63, 64, 127, 128, 1000, 8192, 100_003] {
                    let Some(g) = tma_geometry(word0, taps, n) else {
                        let origin = tma_geometry(word0, taps, 1 << 20).map_or(0, |g| g.origin);
                        assert!(n < origin + 64, "{taps} taps, word {word0}, n {n}");
                        continue;
                    };
                    assert!(g.shift <= TMA_MAX_SHIFT && g.origin < 64);
                    assert!((word0 + g.origin).is_multiple_of(TMA_ALIGN));
                    assert!((r + g.shift + g.origin).is_multiple_of(64));
                    assert!(g.lines >= 1 && g.origin + 64 * g.lines <= n);
                    assert!(n - (g.origin + 64 * g.lines) < 64);
                }
            }
        }
    }

    /// A tile's copied part as the tensor copy writes it (the box from
    /// [`TmaGeometry::first_line`], zeros outside the map's lines) and the
    /// threads complete it ([`TmaGeometry::copied`], whole quads): every
    /// element the products read is the row's, zero outside the row.
    #[test]
    fn the_copy_and_the_edges_make_the_tile() {
        for taps in TAPS {
            let r = taps / 2;
            for word0 in 0..8 {
                for n in [64, 100, 1000, 8192, 3 * 8192 + 5] {
                    let Some(g) = tma_geometry(word0, taps, n) else {
                        continue;
                    };
                    let lines = tma_lines(taps, g.shift);
                    let tensor = tma_tensor(g, taps, 1, n);
                    assert_eq!(tensor.offset, 4 * g.origin);
                    assert_eq!(tensor.dims[1], g.lines as u64);
                    assert_eq!(tensor.boxed[1] as usize, lines);
                    let row = |p: i64| (p >= 0 && (p as usize) < n).then_some(p as f64 + 1.0);
                    for start in (0..n).step_by(8192) {
                        let line0 = g.first_line(start, r);
                        let first = start as i64 - (r + g.shift) as i64;
                        assert_eq!(g.origin as i64 + 64 * line0, first);
                        // The box: element e at `tma_offset(lines, e)`.
                        let mut part = vec![f64::NAN; tma_part_bytes(taps) / 4];
                        for e in 0..64 * lines {
                            let line = line0 + (e / 64) as i64;
                            let inside = line >= 0 && (line as usize) < g.lines;
                            let p = g.origin as i64 + 64 * line + (e % 64) as i64;
                            part[tma_offset(lines, e) / 4] = if inside {
                                row(p).expect("the map lies in the row")
                            } else {
                                0.0
                            };
                        }
                        let len = tma_tile_len(taps, g.shift);
                        for q in 0..len / 4 {
                            let p = first + 4 * q as i64;
                            let whole = (0..4).all(|i| g.copied(p + i) == g.copied(p));
                            assert!(whole, "{taps} taps, n {n}, quad {q}");
                            if !g.copied(p) {
                                for i in 0..4 {
                                    let at = tma_offset(lines, 4 * q + i) / 4;
                                    part[at] = row(p + i as i64).unwrap_or(0.0);
                                }
                            }
                        }
                        for e in 0..len {
                            let want = row(first + e as i64).unwrap_or(0.0);
                            assert_eq!(
                                part[tma_offset(lines, e) / 4],
                                want,
                                "{taps} taps, n {n}, {e}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn fragments_read_the_moved_mask() {
        // Word `j` of a part holds weight `j − TMA_MASK_LEAD`; the fragment
        // of step `s` holds `A[row][t] = M[8s + t − row − shift]`.
        for taps in TAPS {
            let mask_len = tma_mask_len(taps);
            let weight = |j: usize| test_weight(taps, j);
            for shift in 0..=TMA_MAX_SHIFT {
                let offset = TMA_MASK_LEAD - WGMMA_ROWS - shift;
                for s in 0..tma_steps(taps, shift) {
                    for warp in 0..4 {
                        for lane in 0..32 {
                            let (g, q) = (lane / 4, lane % 4);
                            let rows_t = [(g, q), (g + 8, q), (g, q + 4), (g + 8, q + 4)];
                            let words = wgmma_a_words(warp, lane, s).map(|w| w + offset);
                            for (k, &(row, t)) in rows_t.iter().enumerate() {
                                assert!(words[k] < mask_len);
                                let want = (8 * s + t)
                                    .checked_sub(16 * warp + row + shift)
                                    .filter(|&j| j < taps);
                                assert_eq!(weight(words[k]), want, "{taps} taps, shift {shift}");
                            }
                        }
                    }
                }
            }
        }
    }

    /// The swizzle puts every element of a part in a word of its own, a
    /// quad in 16 whole bytes, and the products' `B` of step `s` (column
    /// `c`, value `t`: element `64c + 8s + t`) where the tensor cores read
    /// it: row `c` of the descriptor 32 bytes after row `c − 1`, the
    /// swizzle applied to the address.
    #[test]
    fn the_products_read_the_swizzled_copy() {
        for taps in TAPS {
            for shift in 0..=TMA_MAX_SHIFT {
                // Every element in a word of its own, inside the part.
                let lines = tma_lines(taps, shift);
                let mut seen = vec![false; tma_part_bytes(taps) / 4];
                for e in 0..64 * lines {
                    let at = tma_offset(lines, e);
                    assert!(at.is_multiple_of(4) && !seen[at / 4], "{taps} taps, {e}");
                    seen[at / 4] = true;
                    assert_eq!(tma_offset(lines, e - e % 4) + 4 * (e % 4), at);
                }
                for s in 0..tma_steps(taps, shift) {
                    for c in 0..128 {
                        for t in 0..8 {
                            let read = swizzle_32((tma_b_start(lines, s) + 32 * c + 4 * t) as u32)
                                as usize;
                            assert_eq!(read, tma_offset(lines, 64 * c + 8 * s + t));
                        }
                    }
                    let last = 64 * 127 + 8 * s + 7;
                    assert!(last < tma_tile_len(taps, shift) && last < 64 * lines);
                }
            }
        }
    }

    #[test]
    fn shared_memory() {
        // 127 taps: 24 steps for a shift of 0 to 2, 25 from 3 on.
        assert_eq!([tma_lines(127, 0), tma_lines(127, 2)], [130, 130]);
        assert_eq!([tma_lines(127, 3), tma_lines(127, 7)], [131, 131]);
        assert_eq!(tma_part_bytes(127), 131 * 256);
        assert_eq!(tma_shared_bytes(127), 203_480);
        assert_eq!(tma_shared_bytes(super::super::MAX_TAPS), 232_152);
        assert_eq!(tma_error_units(127), super::super::wgmma_error_units(134));
    }
}

/// Step 10's layout against step 9's geometry.
#[cfg(test)]
mod correction_tests {
    // The crate is `no_std`; its host tests may allocate.
    extern crate std;
    use super::super::corrections::*;
    use super::super::wgmma::{WGMMA_ROWS, bf16_steps, swizzle_32};
    use super::{
        TEST_TAPS, TMA_MASK_LEAD, TMA_MAX_SHIFT, bf16_error_units, test_weight, tma_lines,
        tma_mask_len, tma_offset, tma_steps,
    };
    use std::vec;

    const TAPS: [usize; 9] = TEST_TAPS;

    /// The split's walk: unit `w` of group `g` of the copy is the
    /// quad of element `64(w / 2) + 8g + 4(w % 2)`, and its 8 bytes in each
    /// BF16 part are where [`bf16_offset`] puts that quad, for a part on a
    /// 256-byte unit and one 128 bytes into it.
    #[test]
    fn the_split_walk_finds_each_quad() {
        for taps in TAPS {
            for shift in 0..=TMA_MAX_SHIFT {
                let lines = tma_lines(taps, shift);
                for g in 0..8 {
                    for w in 0..2 * lines {
                        let e = 64 * (w / 2) + 8 * g + 4 * (w % 2);
                        let (l, g, w) = (lines as u32, g as u32, w as u32);
                        let from = swizzle_32(split_source(l, g, w)) as usize;
                        assert_eq!(from, tma_offset(lines, e));
                        let to = split_target(l, g, w) as usize;
                        for base in [0, 128, 128 * lines] {
                            assert_eq!(
                                swizzle_32((base + to) as u32) as usize,
                                bf16_offset(lines, base, e)
                            );
                        }
                    }
                }
            }
        }
    }

    /// Every element of a BF16 part in 2 bytes of its own, a quad in 8
    /// whole bytes, inside half a part; and product `p`'s `B` (column `c`,
    /// value `t`: element `64c + 16p + t`) where the tensor cores read it,
    /// row `c` 32 bytes after row `c − 1`, the swizzle on the address.
    #[test]
    fn the_bf16_products_read_their_parts() {
        for taps in TAPS {
            for shift in 0..=TMA_MAX_SHIFT {
                let lines = tma_lines(taps, shift);
                let half = 128 * tma_lines(taps, TMA_MAX_SHIFT);
                for base in [0, half] {
                    let mut seen = vec![false; half / 2];
                    for e in 0..64 * lines {
                        let at = bf16_offset(lines, base, e) - base;
                        assert!(at < half && !seen[at / 2], "{taps} taps, {e}");
                        seen[at / 2] = true;
                        let quad = bf16_offset(lines, base, e - e % 4);
                        assert_eq!(quad + 2 * (e % 4), at + base);
                    }
                }
                let steps = tma_steps(taps, shift);
                let len = bf16_tile_len(taps, shift);
                assert!(len <= 64 * lines && len >= 64 * 127 + 8 * steps);
                for p in 0..bf16_steps(steps) {
                    for c in 0..128 {
                        for t in 0..16 {
                            let read =
                                swizzle_32((half + bf16_b_start(lines, p) + 32 * c + 2 * t) as u32)
                                    as usize;
                            assert_eq!(read, bf16_offset(lines, half, 64 * c + 16 * p + t));
                            assert!(64 * c + 16 * p + t < len);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn fragments_pair_the_moved_mask() {
        // Word `j` of the pairs holds weight `j − TMA_MASK_LEAD`; register
        // `k` of product `p`'s fragment pairs `A[row][t]` and `A[row][t +
        // 1]`, `A[row][t] = M[16p + t − row − shift]`.
        for taps in TAPS {
            let mask_len = tma_mask_len(taps);
            let weight = |j: usize| test_weight(taps, j);
            for shift in 0..=TMA_MAX_SHIFT {
                let offset = TMA_MASK_LEAD - WGMMA_ROWS - shift;
                for p in 0..bf16_steps(tma_steps(taps, shift)) {
                    for warp in 0..4 {
                        for lane in 0..32 {
                            let (g, q) = (lane / 4, lane % 4);
                            let [w, below, after] = bf16_a_words(warp, lane, p).map(|w| w + offset);
                            let regs =
                                [(w, g, 2 * q), (below, g + 8, 2 * q), (after, g, 2 * q + 8)];
                            let regs = [regs[0], regs[1], regs[2], (w, g + 8, 2 * q + 8)];
                            for (word, row, t) in regs {
                                assert!(word + 1 < mask_len);
                                for i in 0..2 {
                                    let want = (16 * p + t + i)
                                        .checked_sub(16 * warp + row + shift)
                                        .filter(|&j| j < taps);
                                    assert_eq!(weight(word + i), want, "{taps} taps, {shift}");
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn bounds_and_roundings() {
        assert_eq!(bf16_error_units(127), 1404);
        assert_eq!(super::super::tma_error_units(127), 1252);
        assert_eq!(bf16_bits(1.0), 0x3f80);
        // Ties to even: 1 + 2^-8 lies halfway between 1 and 1 + 2^-7.
        assert_eq!(bf16_bits(1.0 + 1.0 / 256.0), 0x3f80);
        assert_eq!(bf16_bits(1.0 + 3.0 / 256.0), 0x3f82);
        assert_eq!(bf16_bits(-2.5), 0xc020);
    }
}
