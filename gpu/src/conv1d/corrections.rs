//! Step 10 (sm_90a): step 9 with its two small terms as BF16 products,
//! which the tensor cores run at twice their TF32 rate.
//!
//! Step 9 spends three TF32 products on every 8 values of `t`: `big·big`,
//! `big·small` and `small·big`. The two small terms are `2^-10` of the
//! sum or less, and 8 significant bits are enough for them: here each
//! 16 values of `t` take the two `big·big` TF32 products of step 9 and
//! two BF16 products (`wgmma.m64n128k16`, each as long as one TF32
//! product of 8 `t`), four products where step 9 takes six. With `x` an
//! input, `m` a weight and `big`/`small` step 9's split by truncation,
//! `x·m = big_x·big_m + x·small_m + small_x·big_m` exactly; the second and
//! third terms are taken as `bf16(x)·bf16(small_m)` and
//! `bf16(small_x)·bf16(big_m)` ([`bf16_error_units`](super::bf16_error_units)).
//!
//! The layout: the copy lands in step 9's part as before (`B`'s big part,
//! read by the TF32 products as it stands), and the warpgroup's second
//! part holds two BF16 parts of half its size, `bf16(x)` then
//! `bf16(small_x)`, in the 32-byte swizzle as the copy's: a row of 32
//! bytes is 16 values of `t` (`bf16_offset`), so every BF16 product's
//! `B` is again one descriptor (`bf16_b_start`). The split pass reads
//! each 16-byte unit of the copy once and writes 8 bytes into each BF16
//! part. The mask's second array holds `bf16(big_m)` and `bf16(small_m)`
//! of each weight in one word, from which a fragment's pairs of
//! consecutive weights are two words' halves (`bf16_a_words`).

use super::wgmma::{BF16_K, WGMMA_COLS, WGMMA_ROWS, bf16_steps, swizzle_32, wgmma_steps};

/// Inputs a tile's products read for a mask of `taps` moved by `shift`:
/// step 9's, rounded up to whole BF16 products. Never more lines than
/// step 9's ([`super::tma::tma_lines`]): the lines hold `64 · ⌈steps / 8⌉`
/// values of `t` past the last column's start, and `steps` odd is no
/// multiple of 8.
#[doc(hidden)]
pub const fn bf16_tile_len(taps: usize, shift: usize) -> usize {
    WGMMA_ROWS * (WGMMA_COLS - 1) + BF16_K * bf16_steps(wgmma_steps(taps + shift))
}

/// Byte offset of tile element `e` (`64·line + u`) in a BF16 part that
/// starts `base` bytes after a 256-byte unit, `lines` lines: group `u /
/// 16` at `32·lines` bytes per group, its line at `32·line`, the value at
/// `2·(u % 16)`, and the swizzle on the whole offset (a part may start on
/// any 32-byte row of a unit, as step 9's groups do). Four consecutive
/// elements from a multiple of 4 are 8 whole bytes.
#[doc(hidden)]
pub const fn bf16_offset(lines: usize, base: usize, e: usize) -> usize {
    let (line, u) = (e / WGMMA_ROWS, e % WGMMA_ROWS);
    swizzle_32((base + (u / BF16_K) * 32 * lines + 32 * line + 2 * (u % BF16_K)) as u32) as usize
}

/// Byte offset, from its part's start, of BF16 product `p`'s `B` (tile
/// element `16p` before the swizzle, which the tensor cores apply per row
/// as the split did): group `p % 4` of line `p / 4`, column `c` 32 bytes
/// after column `c − 1`.
#[doc(hidden)]
pub const fn bf16_b_start(lines: usize, p: usize) -> usize {
    (p % 4) * 32 * lines + 32 * (p / 4)
}

/// The mask words of thread `lane` of warp `warp`'s BF16 fragment of
/// product `p` (before the mask's offset, as [`super::wgmma::wgmma_a_words`]):
/// `[w, w − 8, w + 8]`, register `k`'s pair the halves of words `w_k` and
/// `w_k + 1` (`a[0]` row `16 warp + g`, `t = 16p + 2q` and `+ 1`; `a[1]`
/// row `+ 8`; `a[2]` `t + 8`; `a[3]` row `+ 8` and `t + 8`, which is
/// `a[0]`'s pair: `A[m][t]` depends on `t − m`).
#[doc(hidden)]
pub const fn bf16_a_words(warp: usize, lane: usize, p: usize) -> [usize; 3] {
    let w = WGMMA_ROWS + BF16_K * p + 2 * (lane % 4) - 16 * warp - lane / 4;
    [w, w - 8, w + 8]
}

/// Where the split of a whole copy reads unit `w` of group `g` (16 bytes,
/// before the swizzle) of a copy of `lines` lines: group `g` is `lines`
/// rows of 32 bytes, unit `w` holds values `8g + 4(w % 2) ..` of line `w /
/// 2`.
#[doc(hidden)]
pub const fn split_source(lines: u32, g: u32, w: u32) -> u32 {
    g * 32 * lines + 16 * w
}

/// Where the split writes unit `w` of group `g` in each BF16 part (8
/// bytes, before the swizzle, from the part's start): group `g / 2` of
/// line `w / 2`, from byte `16(g % 2) + 8(w % 2)` of its row.
#[doc(hidden)]
pub const fn split_target(lines: u32, g: u32, w: u32) -> u32 {
    (g / 2) * 32 * lines + 16 * (w & !1) + 16 * (g % 2) + 8 * (w % 2)
}

/// `x` rounded to the nearest BF16 (ties to even), as its bits: what
/// `cvt.rn.bf16x2.f32` gives for a finite `x`. For the host's tests.
#[doc(hidden)]
pub const fn bf16_bits(x: f32) -> u16 {
    let bits = x.to_bits();
    ((bits + 0x7fff + ((bits >> 16) & 1)) >> 16) as u16
}

/// The BF16 products' side of a tile on the device: the split into the
/// two BF16 parts and the products.
#[cfg(all(target_arch = "nvptx64", target_feature = "sm_90a"))]
pub(super) mod device {
    use super::super::copied::CopiedTile;
    use super::super::wgmma::{WGMMA_THREADS, wgmma_a_words};
    use super::*;
    use crate::prim::wgmma::{self, WGMMA_N128_REGS};
    use crate::prim::*;

    /// The two BF16 parts' words of 4 inputs: `bf16(x)` and
    /// `bf16(small_x)` (step 9's small part, `x` minus `x` truncated to
    /// TF32, rounded).
    #[inline(always)]
    fn bf16_words(v: [f32; 4]) -> ([u32; 2], [u32; 2]) {
        let small = v.map(|x| x - f32::from_bits(split_tf32_truncated(x).0));
        (
            [to_bf16x2(v[0], v[1]), to_bf16x2(v[2], v[3])],
            [to_bf16x2(small[0], small[1]), to_bf16x2(small[2], small[3])],
        )
    }

    /// Stores 8 bytes at `p` (shared memory).
    ///
    /// # Safety
    /// `p` is 8-byte aligned and writable for 8 bytes.
    #[inline(always)]
    unsafe fn store8(p: *mut u8, w: [u32; 2]) {
        // SAFETY: the caller's contract.
        unsafe { *p.cast::<u64>() = w[0] as u64 | (w[1] as u64) << 32 };
    }

    /// Writes `tile` into the two BF16 parts at `pairs` (`bf16(x)` from
    /// byte 0, `bf16(small_x)` from byte `half`), from its copied inputs,
    /// 4 elements at a time. Where the copy brought every element the
    /// products read, thread `tid` takes every 128th 16-byte unit of the
    /// copy, group by group ([`split_source`], [`split_target`]), so that
    /// the offsets follow from a counter without a division, all in 32
    /// bits: in 64 the walk took 60 instructions a unit, and the split was
    /// the largest share of the kernel's stalls (30%, Nsight Compute, 127
    /// taps). With 32 (H200, 2^26 outputs, two rounds each, µs): 63 taps
    /// 196.6 → 189.9, 127 taps 233.3 → 217.0, 1 025 taps 818.7 → 814.3.
    /// Walks of two units a turn with both loads first, or of 2 or 3 units
    /// of one group at once, read no faster. Elsewhere, every 128th quad
    /// of the tile, completing the copy as step 9's split does
    /// (`tma::split_small`).
    ///
    /// # Safety
    /// As `tma::split_small`'s, with `pairs` this warpgroup's second part,
    /// on 256 bytes, and `half` half its size (a multiple of 32).
    #[inline(always)]
    pub(in crate::conv1d) unsafe fn split(
        tile: CopiedTile,
        pairs: *mut u8,
        half: usize,
        tid: usize,
    ) {
        let threads = WGMMA_THREADS as usize;
        let CopiedTile { copied, lines, .. } = tile;
        if tile.whole() {
            // Offsets and counters in 32 bits: the parts are far below 4
            // GiB.
            let (lines, half) = (lines as u32, half as u32);
            let units = 2 * lines;
            let (mut g, mut w) = (0, tid as u32);
            while g < 8 {
                let from = swizzle_32(split_source(lines, g, w)) as usize;
                // SAFETY: the caller's contract: the unit lies in the copy.
                let v = unsafe { load4(copied.add(from).cast()) };
                let to = split_target(lines, g, w);
                let (big, small) = bf16_words(v);
                // SAFETY: the 8 bytes of the same 4 values in each part.
                unsafe {
                    store8(pairs.add(swizzle_32(to) as usize), big);
                    store8(pairs.add(swizzle_32(half + to) as usize), small);
                }
                // `units` is at least 256: one group at most per turn.
                w += threads as u32;
                if w >= units {
                    w -= units;
                    g += 1;
                }
            }
            return;
        }
        let mut q = tid;
        while q < tile.len / 4 {
            // SAFETY: the caller's contract: quad `q` lies in the tile.
            let (_, v) = unsafe { tile.quad(q) };
            let (big, small) = bf16_words(v);
            // SAFETY: the quad's places in the BF16 parts.
            unsafe {
                store8(pairs.add(bf16_offset(lines, 0, 4 * q)), big);
                store8(pairs.add(bf16_offset(lines, half, 4 * q)), small);
            }
            q += threads;
        }
    }

    /// A tile's products into `acc`, in two runs of groups: first the
    /// TF32 `big·big` products of steps `2p` and `2p + 1` for each BF16
    /// product `p`, which read the copied part; then the two BF16 products
    /// of each `p`, which read the BF16 parts only. Once the first run is
    /// done (the first wait of the second), `copied_free` runs: the copied
    /// part may then take the next tile's copy, which lands while the BF16
    /// products run. Where `steps` is odd, the last TF32 product
    /// multiplies the mask's zero padding: a branch around it made ptxas
    /// serialize the products (`warpgroup.arrive` injected). `mask` is the
    /// mask's TF32 big part, its word pairs (`bf16(big_m) | bf16(small_m)
    /// << 16`) and the offset of word `w` of the fragments in them; `b(s)`
    /// the descriptor of TF32 step `s`'s `B` in the copy, `b16(p)` those of
    /// product `p`'s `B` in the two BF16 parts. Each run's fragments
    /// rotate as step 9's ([`wgmma::rotate`]). Returns with the last
    /// products still running.
    ///
    /// # Safety
    /// As `wgmma::device::multiply`'s, the BF16 parts holding the tile's
    /// `16 · bf16_steps(steps)` values of `t`; `copied_free` is called by
    /// every thread of the warpgroup and issues no products.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(in crate::conv1d) unsafe fn multiply(
        acc: &mut [f32; WGMMA_N128_REGS],
        steps: usize,
        warp: usize,
        lane: usize,
        mask: (*const u32, *const u32, usize),
        b: impl Fn(usize) -> u64,
        b16: impl Fn(usize) -> (u64, u64),
        copied_free: impl FnOnce(),
    ) {
        let (mask_big, mask_pairs, offset) = mask;
        let products = bf16_steps(steps);
        let big = |p: usize| {
            let step = |s: usize| {
                wgmma_a_words(warp, lane, s).map(|w| {
                    // SAFETY: the caller's contract: the mask's arrays hold
                    // every word of the products' fragments.
                    unsafe { *mask_big.add(w + offset) }
                })
            };
            [step(2 * p), step(2 * p + 1)]
        };
        let pairs = |p: usize| {
            let words = bf16_a_words(warp, lane, p).map(|w| {
                // SAFETY: as above, words `w` and `w + 1` of the pairs.
                unsafe {
                    let at = mask_pairs.add(w + offset);
                    (*at, *at.add(1))
                }
            });
            let low = words.map(|(a, b)| (a & 0xffff) | (b << 16));
            let high = words.map(|(a, b)| (a >> 16) | (b & 0xffff_0000));
            [
                [low[0], low[1], low[2], low[0]],
                [high[0], high[1], high[2], high[0]],
            ]
        };
        let tf32 = |acc: &mut [f32; WGMMA_N128_REGS], p: usize, f: &wgmma::FragmentPair| {
            let (even, odd) = (b(2 * p), b(2 * p + 1));
            wgmma::fence();
            // SAFETY: the caller's contract: the whole warpgroup, after the
            // fence, the copy visible and unwritten until a wait.
            unsafe {
                wgmma::mma_tf32_m64n128k8(acc, f[0], even, true);
                wgmma::mma_tf32_m64n128k8(acc, f[1], odd, true);
            }
            wgmma::commit();
        };
        let bf16 = |acc: &mut [f32; WGMMA_N128_REGS], p: usize, f: &wgmma::FragmentPair| {
            let (x16, small16) = b16(p);
            wgmma::fence();
            // SAFETY: as above, the BF16 parts.
            unsafe {
                wgmma::mma_bf16_m64n128k16(acc, f[1], x16, true);
                wgmma::mma_bf16_m64n128k16(acc, f[0], small16, true);
            }
            wgmma::commit();
        };
        // The TF32 products, then the BF16 ones; after the first of those,
        // the TF32 products are done.
        let tf32_pairs = wgmma::rotate(acc, products, big, tf32, || {});
        wgmma::rotate(acc, products, pairs, bf16, || {
            tf32_pairs.iter().for_each(wgmma::hold_pair);
            copied_free();
        });
    }
}
