//! The Hopper-native 3xTF32 step (sm_90a): [`super::tma`]'s skeleton with
//! each operand split into TF32 parts *before* the product, by a pass of
//! its own (`super::gemm_split_tf32`): `big = tf32(x)` and `small =
//! tf32(x − big)`, both rounded to nearest, each part a `k`-major array of
//! the scratch memory. The product then loads four tiles per stage by
//! tensor copies (`A`'s and `B`'s big and small parts) and issues three
//! `wgmma` per 8 of `k` with both operands in shared memory (`small·big`,
//! `big·small`, `big·big`): no thread splits an operand while the tensor
//! cores wait.
//!
//! Tiles of 128 × 128: each multiplying warpgroup keeps a 64 × 128
//! accumulator and a second one for the products of 16 of `k` (6 `wgmma`),
//! which joins the first with one rounded `f32` add each: the tensor cores
//! truncate their sums, so a fresh accumulator per 16 of `k` keeps 3xTF32
//! at FP32's accuracy, as step 12 does. 64 KiB stages, three of them.
//! The narrow kernel (`kernel::<false>`, entry `gemm_tma_tf32x3_narrow`)
//! takes tiles of 128 × 64 (`wgmma.m64n64k8`, four stages of 48 KiB):
//! twice the tiles, for products whose 128-wide tiles would leave SMs idle.

#[cfg(target_arch = "nvptx64")]
use crate::kernel::MapParam;

/// Columns of `C` per tile: one `wgmma.m64n128k8` per warpgroup.
#[doc(hidden)]
pub const TILE_N: usize = 128;
/// Columns of `C` per tile of the narrow kernel: one `wgmma.m64n64k8`.
#[doc(hidden)]
pub const NARROW_N: usize = 64;
/// Bytes of one part's tile of `A` (128 rows of 32 TF32).
#[doc(hidden)]
pub const PART_BYTES: usize = 128 * super::tma::BK * 4;
/// Bytes of one part's tile of `B`, `width` rows of 32 TF32.
#[doc(hidden)]
pub const fn b_part_bytes(width: usize) -> usize {
    width * super::tma::BK * 4
}
/// Bytes of a stage of tiles `width` wide: `A`'s big and small parts,
/// then `B`'s.
#[doc(hidden)]
pub const fn stage_bytes(width: usize) -> usize {
    2 * PART_BYTES + 2 * b_part_bytes(width)
}
/// Stages of the ring of tiles `width` wide: three of 64 KiB, or four of
/// 48 KiB.
#[doc(hidden)]
pub const fn stages(width: usize) -> usize {
    if width == TILE_N { 3 } else { 4 }
}
/// Shared memory of a block of tiles `width` wide: 1024 bytes to align
/// the ring, the ring, then each stage's two barriers.
#[doc(hidden)]
pub const fn shared_bytes(width: usize) -> u32 {
    (1024 + stages(width) * stage_bytes(width) + 2 * stages(width) * 8) as u32
}

const _: () = assert!(
    super::tma::TILE_M == 128
        && PART_BYTES.is_multiple_of(1024)
        && b_part_bytes(NARROW_N).is_multiple_of(1024)
        && shared_bytes(TILE_N) <= 227 * 1024
        && shared_bytes(NARROW_N) <= 227 * 1024
);

/// The step's operands: [`super::tma::MapOperands`]'s shape, scalars and
/// `C`, and the maps of the four parts (big `A`, small `A`, big `B`, small
/// `B`), each `k` innermost over its rows, where the launch put them.
#[cfg(target_arch = "nvptx64")]
#[cfg_attr(not(target_feature = "sm_90a"), allow(dead_code))]
#[derive(Clone, Copy)]
pub(crate) struct SplitOperands {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub alpha: f32,
    pub beta: f32,
    pub c: *mut f32,
    pub ldc: usize,
    pub map_a: MapParam,
    pub map_a_small: MapParam,
    pub map_b: MapParam,
    pub map_b_small: MapParam,
}

/// Contract: [`super::tma::kernel`]'s, with `W` [`TILE_N`] (`WIDE`) or
/// [`NARROW_N`], four maps (each as `map_a` or `map_b` there, over the
/// parts [`super::gemm_split_tf32`] wrote), boxes of `BK` × 128 for `A`'s
/// two and `BK` × `W` for `B`'s, and [`shared_bytes`]`(W)` of shared
/// memory; no split of `k`.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub(crate) unsafe fn kernel<const WIDE: bool>(o: SplitOperands) {
    #[cfg(not(target_feature = "sm_90a"))]
    {
        let _ = o;
        crate::prim::trap()
    }
    #[cfg(target_feature = "sm_90a")]
    {
        use crate::prim::wgmma::{WGMMA_N64_REGS, WGMMA_N128_REGS};
        match WIDE {
            true => device::body::<[f32; WGMMA_N128_REGS]>(&o),
            false => device::body::<[f32; WGMMA_N64_REGS]>(&o),
        }
    }
}

#[cfg(all(target_arch = "nvptx64", target_feature = "sm_90a"))]
mod device {
    use super::super::tma::{
        BAND, BK, CONSUMER_REGS, CONSUMER_THREADS, MapOperands, PRODUCER_REGS, TILE_M,
        device::store_half,
    };
    use super::*;
    use crate::descriptor;
    use crate::prim::wgmma::{self, WGMMA_N64_REGS, WGMMA_N128_REGS};
    use crate::prim::*;

    /// `acc += part`, spelled out: a rolled loop would keep both arrays in
    /// local memory.
    #[inline(always)]
    fn add_into<const R: usize>(acc: &mut [f32; R], part: &[f32; R]) {
        unroll!(e in [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63] => {
            if e < R {
                acc[e] += part[e];
            }
        });
    }

    /// A warpgroup's accumulator of its 64 rows of a tile, by the tile's
    /// width: 64 registers (128 columns) or 32 (64 columns).
    pub(super) trait Accumulator: Copy {
        /// Columns of a tile.
        const WIDTH: usize;
        fn zero() -> Self;
        /// The product with both operands in shared memory.
        ///
        /// # Safety
        /// As `wgmma::mma_tf32_m64n128k8_ss`'s.
        unsafe fn mma_ss(&mut self, a: u64, b: u64, accumulate: bool);
        /// `wgmma.wait_group 0`, the accumulator its operand.
        fn wait_all(&mut self);
        /// `self += part`.
        fn add(&mut self, part: &Self);
        /// Stores the tile with branched edges (predicated ones slowed
        /// the whole kernel: `store_tested`).
        ///
        /// # Safety
        /// As `store_half`'s.
        unsafe fn store(&self, o: &MapOperands, row: usize, col: usize);
    }

    impl Accumulator for [f32; WGMMA_N128_REGS] {
        const WIDTH: usize = TILE_N;
        #[inline(always)]
        fn zero() -> Self {
            [0.0; WGMMA_N128_REGS]
        }
        #[inline(always)]
        unsafe fn mma_ss(&mut self, a: u64, b: u64, accumulate: bool) {
            wgmma::mma_tf32_m64n128k8_ss(self, a, b, accumulate);
        }
        #[inline(always)]
        fn wait_all(&mut self) {
            wgmma::wait::<0>(self);
        }
        #[inline(always)]
        fn add(&mut self, part: &Self) {
            add_into(self, part);
        }
        #[inline(always)]
        unsafe fn store(&self, o: &MapOperands, row: usize, col: usize) {
            store_half::<false, WGMMA_N128_REGS>(o, self, row, col);
        }
    }

    impl Accumulator for [f32; WGMMA_N64_REGS] {
        const WIDTH: usize = NARROW_N;
        #[inline(always)]
        fn zero() -> Self {
            [0.0; WGMMA_N64_REGS]
        }
        #[inline(always)]
        unsafe fn mma_ss(&mut self, a: u64, b: u64, accumulate: bool) {
            wgmma::mma_tf32_m64n64k8_ss(self, a, b, accumulate);
        }
        #[inline(always)]
        fn wait_all(&mut self) {
            wgmma::wait_narrow::<0>(self);
        }
        #[inline(always)]
        fn add(&mut self, part: &Self) {
            add_into(self, part);
        }
        #[inline(always)]
        unsafe fn store(&self, o: &MapOperands, row: usize, col: usize) {
            store_half::<false, WGMMA_N64_REGS>(o, self, row, col);
        }
    }

    #[inline(always)]
    pub(super) unsafe fn body<P: Accumulator>(o: &SplitOperands) {
        let width = P::WIDTH;
        let (stages, stage_bytes) = (stages(width), stage_bytes(width));
        let t = thread_idx_x() as usize;
        let group = t / 128;
        let window = dynamic_shared::<u8>();
        let ring = (shared_address(window) + 1023) & !1023;
        let mut pipe = ring::StageRing::new(ring + (stages * stage_bytes) as u32, stages);
        let (tiles_m, tiles_n) = (o.m.div_ceil(TILE_M), o.n.div_ceil(width));
        // The parts in a stage: `A`'s big and small, then `B`'s.
        let part_at = [
            0,
            PART_BYTES,
            2 * PART_BYTES,
            2 * PART_BYTES + b_part_bytes(width),
        ];
        let tiles = tiles_m * tiles_n;
        let k_tiles = o.k.div_ceil(BK);
        let (first, step) = (block_idx_x() as usize, grid_dim_x() as usize);
        let maps = [o.map_a, o.map_a_small, o.map_b, o.map_b_small].map(MapParam::address);
        if t == 0 {
            for map in maps {
                // SAFETY: the maps are the launch's parameters.
                bulk::prefetch_tensor_map(map);
            }
            // SAFETY: 8-byte aligned barriers in this block's shared
            // memory, nothing else there; the block barrier below comes
            // before any other use.
            pipe.init(CONSUMER_THREADS);
        }
        sync_threads();
        if group == 0 {
            // SAFETY: the copying thread's loop needs few registers.
            wgmma::registers_down::<PRODUCER_REGS>();
            if t != 0 {
                return;
            }
            let mut tile = first;
            while tile < tiles {
                let (tm, tn) = super::super::tile_of(tile, tiles_m, tiles_n, BAND);
                let rows = [(tm * TILE_M) as i32, (tn * width) as i32];
                for kt in 0..k_tiles {
                    pipe.wait_empty();
                    let s = pipe.stage();
                    let full = pipe.full(s);
                    let at = ring + (s * stage_bytes) as u32;
                    // SAFETY: as in `tma`: the launch's maps, the stage
                    // free and 1024-byte aligned, the phase expecting
                    // exactly these four boxes' bytes.
                    bulk::expect_bytes(full, stage_bytes as u32);
                    for part in 0..4 {
                        bulk::tensor_copy_2d_to_shared(
                            at + part_at[part] as u32,
                            maps[part],
                            [(kt * BK) as i32, rows[part / 2]],
                            full,
                        );
                    }
                    pipe.advance();
                }
                tile += step;
            }
            return;
        }
        wgmma::registers_up::<CONSUMER_REGS>();
        let wg = group - 1;
        let (warp, lane) = ((t % 128) / 32, t % 32);
        let (g, q) = (lane / 4, lane % 4);
        let stores = MapOperands {
            m: o.m,
            n: o.n,
            k: o.k,
            alpha: o.alpha,
            beta: o.beta,
            c: o.c,
            ldc: o.ldc,
            slices: 1,
            slice_stages: k_tiles,
            work: core::ptr::null_mut(),
            count: 1,
            batch_c: 0,
            map_a: o.map_a,
            map_b: o.map_b,
        };
        let mut acc = P::zero();
        let mut part = P::zero();
        let mut tile = first;
        while tile < tiles {
            let (tm, tn) = super::super::tile_of(tile, tiles_m, tiles_n, BAND);
            for kt in 0..k_tiles {
                pipe.wait_full();
                let at = ring + (pipe.stage() * stage_bytes) as u32;
                // This warpgroup's 64 rows of each part of `A`; `B`'s
                // whole width.
                let a_rows = (wg * PART_BYTES / 2) as u32;
                let a_big = descriptor::swizzled_128(at + a_rows);
                let a_small = descriptor::swizzled_128(at + part_at[1] as u32 + a_rows);
                let b_big = descriptor::swizzled_128(at + part_at[2] as u32);
                let b_small = descriptor::swizzled_128(at + part_at[3] as u32);
                for half in 0..2 {
                    // A fresh accumulator for 16 of `k`: orders the adds of
                    // the half before (and the stores of the tile before)
                    // before the products that overwrite it.
                    wgmma::fence();
                    for kk in 2 * half..2 * half + 2 {
                        // 8 TF32 of `k` are 32 bytes, 2 in the address field.
                        let d = 2 * kk as u64;
                        // SAFETY: the whole warpgroup, after the fence; the
                        // stage's parts, written by the copy engine (its
                        // phase waited for), stay until this thread arrives
                        // on *empty* after the wait below.
                        // Small terms first: the least significant.
                        part.mma_ss(a_small + d, b_big + d, kk > 2 * half);
                        part.mma_ss(a_big + d, b_small + d, true);
                        part.mma_ss(a_big + d, b_big + d, true);
                    }
                    wgmma::commit();
                    part.wait_all();
                    if kt == 0 && half == 0 {
                        acc = part;
                    } else {
                        acc.add(&part);
                    }
                }
                // SAFETY: an initialised barrier expecting this arrival.
                bulk::arrive(pipe.empty(pipe.stage()));
                pipe.advance();
            }
            let row = tm * TILE_M + wg * 64 + warp * 16 + g;
            acc.store(&stores, row, tn * width + 2 * q);
            tile += step;
        }
    }
}
