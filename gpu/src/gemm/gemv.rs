//! Products with one row or one column of `C` (`m = 1` or `n = 1`): a
//! matrix times a vector, which reads each element of the matrix once and
//! is bound by memory, not arithmetic. The host plans them for every
//! precision (`f32` fused multiply-adds are at least as accurate as the
//! tensor cores' TF32 and 3xTF32), outside the ladder.
//!
//! In the kernel's terms the product is `y[r] = α · Σ_p M[r][p] · x[p] +
//! β · y[r]` for `r < rows`: for `n = 1`, `M = op(A)`, `x` the column
//! `op(B)` and `y` the column `C`; for `m = 1`, `M = op(B)ᵀ`, `x` the row
//! `op(A)` and `y` the row `C` (`Gemv::of`). Two entries take the
//! matrix's two layouts, both correct for any strides:
//!
//! * [`Form::Dot`] (`M`'s rows run along `p`: `A` stored `m × k`, `B`
//!   stored `n × k`): a warp per output, each lane a 16-byte vector of
//!   the row at a time, four in flight, then a butterfly of shuffles;
//! * [`Form::Stream`] (`M`'s columns run along `r`: `A` stored `k × m`,
//!   `B` stored `k × n`): a block per 32 consecutive outputs, a row `p`'s
//!   32 being one 16-byte vector of each of 8 lanes, so that a warp reads
//!   four rows at a time and eight vectors a lane in flight; the 16 warps
//!   of a block take every 64th `p` from their own, add their four rows'
//!   sums by shuffles, then their sums in warp order through shared
//!   memory. One such block an SM, unsplit where they fill the SMs, reads
//!   the matrix faster than more blocks of wider strips whose slices of
//!   `p` meet in the workspace (the GEMM notes).
//!
//! Where the blocks of whole rows do not fill the GPU (each form's
//! [`Block::per_sm`]), `p` is split into slices ([`plan`]): each block
//! leaves its partial sums in the workspace and the last block of an
//! output group to arrive adds them in slice order, as a split product
//! does; no floating-point atomics, so one input gives the same bits
//! every run.

use super::{GemmPlan, SPLIT_TICKETS, TileConfig, gemm_gemv_dot, gemm_gemv_stream};

/// A form's block: the outputs it computes, its warps, and how many of
/// its blocks an SM is given before `p` is split further.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block {
    /// Consecutive outputs.
    pub outputs: usize,
    /// Warps.
    pub warps: usize,
    /// Blocks an SM is given work for before `p` is split.
    pub per_sm: usize,
    /// The least `p` a slice takes (a lane's loads in flight).
    pub min_slice: usize,
}

impl Block {
    /// Threads of a block.
    pub const fn threads(self) -> usize {
        self.warps * 32
    }

    /// Dynamic shared memory: a streaming block's warps' sums, then the
    /// word the last block's verdict passes through.
    pub const fn shared_bytes(self) -> u32 {
        (self.warps * self.outputs * 4 + 16) as u32
    }
}

/// [`Form::Dot`]'s block: one output a warp, four vectors a lane in
/// flight; about 46 registers, four blocks an SM.
pub const DOT: Block = Block {
    outputs: 8,
    warps: 8,
    per_sm: 4,
    min_slice: 4 * 4 * 32,
};
/// [`Form::Stream`]'s block: 32 outputs, each warp four rows at a time
/// and eight vectors a lane in flight, one block an SM.
pub const STREAM: Block = Block {
    outputs: 32,
    warps: 16,
    per_sm: 1,
    // Eight rows in flight a lane, `128 / outputs` rows a warp.
    min_slice: 8 * 16 * (128 / 32),
};

/// How the matrix `M` lies, and so which entry reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// Rows along `p` (`M[r][p]` and `M[r][p + 1]` adjacent).
    Dot,
    /// Columns along `r` (`M[r][p]` and `M[r + 1][p]` adjacent).
    Stream,
}

impl Form {
    /// The form of a product of `m × n` (one of them 1) whose `op(A)` and
    /// `op(B)` have the column strides `a_col` and row strides `b_row`
    /// (the kernels' `Operands`): dot where `M`'s rows are contiguous.
    pub const fn of(n: usize, a_col: usize, b_row: usize) -> Form {
        let p_stride = if n == 1 { a_col } else { b_row };
        if p_stride == 1 {
            Form::Dot
        } else {
            Form::Stream
        }
    }

    /// The block that reads `M` so laid.
    pub const fn block(self) -> Block {
        match self {
            Form::Dot => DOT,
            Form::Stream => STREAM,
        }
    }
}

/// `p` per slice of a product of `k` split in `slices`: a multiple of 4
/// (the dot kernel's vectors start on 16 bytes in every slice), the last
/// slice the rest.
pub const fn slice_k(k: usize, slices: usize) -> usize {
    let per = k.div_ceil(if slices == 0 { 1 } else { slices });
    per.div_ceil(4) * 4
}

/// The launch of `count` products `m × n × k` with `m = 1` or `n = 1` in
/// `form` on `sms` SMs: blocks of the form's [`Block`], and slices of `k`
/// where those blocks number fewer than [`Block::per_sm`] an SM (each
/// slice at least [`Block::min_slice`], the outputs' groups of all
/// products at most [`SPLIT_TICKETS`]). Its `tiles` are `C`'s: a block's
/// outputs lie along `C`'s one row or column.
pub fn plan(form: Form, (m, n, k): (usize, usize, usize), count: usize, sms: u32) -> GemmPlan {
    let block = form.block();
    let rows = if n == 1 { m } else { n };
    let groups = rows.div_ceil(block.outputs).saturating_mul(count);
    let wanted = (sms as usize).max(1) * block.per_sm;
    let slices = if groups == 0 || groups >= wanted || groups > SPLIT_TICKETS {
        1
    } else {
        (wanted / groups).min(k / block.min_slice).max(1)
    };
    let slices = k.div_ceil(slice_k(k, slices)).max(1);
    let (tile_m, tile_n) = if n == 1 {
        (block.outputs, 1)
    } else {
        (1, block.outputs)
    };
    GemmPlan {
        entry: match form {
            Form::Dot => gemm_gemv_dot::entry::<f32>(),
            Form::Stream => gemm_gemv_stream::entry::<f32>(),
        },
        tiles: TileConfig {
            tile_m: tile_m as u32,
            tile_n: tile_n as u32,
            threads: block.threads() as u32,
            shared_bytes: block.shared_bytes(),
        },
        slices,
    }
}

#[cfg(target_arch = "nvptx64")]
pub(crate) use device::{dot_kernel, stream_kernel};

#[cfg(target_arch = "nvptx64")]
mod device {
    use super::super::Operands;
    use super::{DOT, slice_k};
    use crate::prim::*;

    /// The product in the kernels' terms (see the module docs).
    pub(super) struct Gemv {
        rows: usize,
        k: usize,
        m: *const f32,
        /// Elements from `M[r][p]` to `M[r + 1][p]` and to `M[r][p + 1]`.
        r_stride: usize,
        p_stride: usize,
        x: *const f32,
        x_stride: usize,
        y: *mut f32,
        y_stride: usize,
        alpha: f32,
        beta: f32,
        slices: usize,
        work: *mut f32,
    }

    impl Gemv {
        /// `o` (one product of a batch, `m = 1` or `n = 1`) as a matrix
        /// times a vector.
        #[inline(always)]
        pub(super) fn of(o: &Operands) -> Gemv {
            let common = |rows, m, (r_stride, p_stride), x, x_stride, y_stride| Gemv {
                rows,
                k: o.k,
                m,
                r_stride,
                p_stride,
                x,
                x_stride,
                y: o.c,
                y_stride,
                alpha: o.alpha,
                beta: o.beta,
                slices: o.slices,
                work: o.work,
            };
            if o.n == 1 {
                common(o.m, o.a, (o.a_row, o.a_col), o.b, o.b_row, o.ldc)
            } else {
                common(o.n, o.b, (o.b_col, o.b_row), o.a, o.a_col, 1)
            }
        }

        /// `M[r][p]` (in range by the caller).
        #[inline(always)]
        unsafe fn at(&self, r: usize, p: usize) -> f32 {
            f32::from_bits(load_nc_u32(
                self.m.add(r * self.r_stride + p * self.p_stride).cast(),
            ))
        }

        /// `x[p]` (in range by the caller).
        #[inline(always)]
        unsafe fn x(&self, p: usize) -> f32 {
            f32::from_bits(load_nc_u32(self.x.add(p * self.x_stride).cast()))
        }

        /// `y[r] = α · s + β · y[r]`, not reading `y` where `β = 0`.
        #[inline(always)]
        unsafe fn store(&self, r: usize, s: f32) {
            let y = self.y.add(r * self.y_stride);
            *y = if self.beta == 0.0 {
                self.alpha * s
            } else {
                fma_f32(self.alpha, s, self.beta * *y)
            };
        }

        /// The block's group of `outputs` outputs, its slice and the
        /// slice's `p0..p1`, and the group numbered across the batch.
        #[inline(always)]
        fn place(&self, outputs: usize) -> (usize, usize, (usize, usize), usize) {
            let groups = self.rows.div_ceil(outputs);
            let b = block_idx_x() as usize;
            let (group, slice) = (b % groups, b / groups);
            let per = slice_k(self.k, self.slices);
            let p0 = slice * per;
            let p1 = if p0 + per < self.k { p0 + per } else { self.k };
            let numbered = block_idx_y() as usize * groups + group;
            (group, slice, (p0, p1), numbered)
        }

        /// Stores output `r`, whose sum `mine` holds where this thread owns
        /// it: at once where `k` is not split, else through [`Gemv::join`]
        /// (`split` as its). Every thread calls it.
        #[inline(always)]
        unsafe fn finish(
            &self,
            split: (usize, usize, usize),
            r: usize,
            mine: Option<(usize, f32)>,
            verdict: *mut u32,
        ) {
            if self.slices == 1 {
                if let Some((_, s)) = mine {
                    self.store(r, s);
                }
            } else if let Some(total) = self.join(split, mine, verdict) {
                self.store(r, total);
            }
        }

        /// Where a split's slices meet: each block leaves its partial sums
        /// (`mine`, the output it owns, if any, at `index` of its group's
        /// `outputs`) in the workspace; the last block of the group to
        /// arrive adds them in slice order and returns the total for the
        /// output it owns, the others `None`. Every thread calls it.
        #[inline(always)]
        unsafe fn join(
            &self,
            (outputs, group, slice): (usize, usize, usize),
            mine: Option<(usize, f32)>,
            verdict: *mut u32,
        ) -> Option<f32> {
            let parts = self
                .work
                .add(super::SPLIT_TICKETS + group * self.slices * outputs)
                .cast::<u32>();
            if let Some((index, s)) = mine {
                *parts.add(slice * outputs + index) = s.to_bits();
            }
            sync_threads();
            // At most `SPLIT_TICKETS` groups and `k` slices (below 2^32).
            let ticket = self.work.cast::<u32>().add(group);
            if !last_to_arrive(ticket, self.slices as u32, verdict) {
                return None;
            }
            let (index, _) = mine?;
            // Eight partials in flight, added in slice order.
            let part = |s: usize| f32::from_bits(load_cg_u32(parts.add(s * outputs + index)));
            let mut total = part(0);
            let mut s = 1;
            while s + 8 <= self.slices {
                let eight: [f32; 8] = core::array::from_fn(|u| part(s + u));
                for p in eight {
                    total += p;
                }
                s += 8;
            }
            while s < self.slices {
                total += part(s);
                s += 1;
            }
            Some(total)
        }
    }

    /// [`super::Form::Dot`]: warp `w` of the block owns output `group ·
    /// 8 + w`. Contract: the family's, `m = 1` or `n = 1`; a grid of
    /// `plan`'s blocks of [`DOT`]'s threads and shared memory.
    #[inline(always)]
    pub(crate) unsafe fn dot_kernel(o: Operands) {
        let o = o.of_batch();
        let g = Gemv::of(&o);
        let (group, slice, (p0, p1), numbered) = g.place(DOT.outputs);
        let (warp, lane) = (thread_idx_x() as usize / 32, lane_id() as usize);
        let r = group * DOT.outputs + warp;
        let mut s = 0.0f32;
        if r < g.rows {
            let row = g.m.add(r * g.r_stride);
            let vectors = g.p_stride == 1
                && g.x_stride == 1
                && row.add(p0).addr().is_multiple_of(16)
                && g.x.add(p0).addr().is_multiple_of(16);
            s = if vectors {
                dot_vectors(row.add(p0), g.x.add(p0), p1 - p0, lane)
            } else {
                dot_elements(&g, r, (p0, p1), lane)
            };
        }
        // Lane 0 ends with the warp's sum (every lane runs the butterfly).
        unroll!(d in [16 8 4 2 1] => { s += shfl_xor(s, d as u32); });
        let mine = (lane == 0 && r < g.rows).then_some((warp, s));
        g.finish(
            (DOT.outputs, numbered, slice),
            r,
            mine,
            dynamic_shared::<u32>(),
        );
    }

    /// A lane's part of the dot product of `len` elements at `row` and
    /// `x` (both on 16 bytes, contiguous): vectors `lane`, `lane + 32`,
    /// ..., four in flight, each of the 4 components its own sum, then
    /// the last `len % 4` elements one a lane.
    #[inline(always)]
    unsafe fn dot_vectors(row: *const f32, x: *const f32, len: usize, lane: usize) -> f32 {
        let vectors = len / 4;
        let mut acc = [0.0f32; 4];
        let load = |p: *const f32, v: usize| load_nc_v4(p.add(4 * v).cast()).map(f32::from_bits);
        let mut v = lane;
        while v + 96 < vectors {
            let m = [
                load(row, v),
                load(row, v + 32),
                load(row, v + 64),
                load(row, v + 96),
            ];
            let y = [
                load(x, v),
                load(x, v + 32),
                load(x, v + 64),
                load(x, v + 96),
            ];
            unroll!(u in [0 1 2 3] => {
                unroll!(e in [0 1 2 3] => { acc[e] = fma_f32(m[u][e], y[u][e], acc[e]); });
            });
            v += 128;
        }
        while v < vectors {
            let (m, y) = (load(row, v), load(x, v));
            unroll!(e in [0 1 2 3] => { acc[e] = fma_f32(m[e], y[e], acc[e]); });
            v += 32;
        }
        let tail = 4 * vectors + lane;
        if tail < len {
            let at = |p: *const f32| f32::from_bits(load_nc_u32(p.add(tail).cast()));
            acc[0] = fma_f32(at(row), at(x), acc[0]);
        }
        (acc[0] + acc[1]) + (acc[2] + acc[3])
    }

    /// A lane's part of output `r`'s sum over `p0..p1` through the
    /// strides, element `p0 + lane` and every 32nd after, four in flight.
    #[inline(always)]
    unsafe fn dot_elements(g: &Gemv, r: usize, (p0, p1): (usize, usize), lane: usize) -> f32 {
        let mut acc = [0.0f32; 4];
        let mut p = p0 + lane;
        while p + 96 < p1 {
            let m = [
                g.at(r, p),
                g.at(r, p + 32),
                g.at(r, p + 64),
                g.at(r, p + 96),
            ];
            let y = [g.x(p), g.x(p + 32), g.x(p + 64), g.x(p + 96)];
            unroll!(u in [0 1 2 3] => { acc[u] = fma_f32(m[u], y[u], acc[u]); });
            p += 128;
        }
        while p < p1 {
            acc[0] = fma_f32(g.at(r, p), g.x(p), acc[0]);
            p += 32;
        }
        (acc[0] + acc[1]) + (acc[2] + acc[3])
    }

    /// [`super::Form::Stream`] over blocks of `W` outputs (a multiple of
    /// 4 dividing 128) and `WARPS` warps: a row `p`'s `W` outputs are
    /// `W / 4` lanes' 16-byte vectors, so a warp reads `128 / W` rows at a
    /// time, the block's warps rows `p ≡ i (mod WARPS · 128 / W)` for
    /// its `i`-th such group of lanes; each warp adds its rows' sums by
    /// shuffles, then thread `t < W` adds output `group · W + t` over the
    /// warps in order. Contract: as [`dot_kernel`]'s, blocks of `WARPS ·
    /// 32` threads.
    #[inline(always)]
    pub(crate) unsafe fn stream_kernel<const W: usize, const WARPS: usize>(o: Operands) {
        const { assert!(W.is_multiple_of(4) && 128 % W == 0 && WARPS * 32 <= 1024) };
        let o = o.of_batch();
        let g = Gemv::of(&o);
        let (group, slice, (p0, p1), numbered) = g.place(W);
        let t = thread_idx_x() as usize;
        let (warp, lane) = (t / 32, t % 32);
        // Lanes a row, rows a warp, rows the block reads at a time.
        let (lanes, rows) = (W / 4, 128 / W);
        let step = WARPS * rows;
        let (row, column) = (lane / lanes, lane % lanes);
        let r0 = group * W + 4 * column;
        let mut acc = [0.0f32; 4];
        let vectors = g.r_stride == 1
            && r0 + 4 <= g.rows
            && g.m.addr().is_multiple_of(16)
            && g.p_stride.is_multiple_of(4);
        let mut p = p0 + warp * rows + row;
        if vectors {
            let load =
                |p: usize| load_nc_v4(g.m.add(p * g.p_stride + r0).cast()).map(f32::from_bits);
            while p + 7 * step < p1 {
                let m: [[f32; 4]; 8] = core::array::from_fn(|u| load(p + u * step));
                let y: [f32; 8] = core::array::from_fn(|u| g.x(p + u * step));
                unroll!(u in [0 1 2 3 4 5 6 7] => {
                    unroll!(e in [0 1 2 3] => { acc[e] = fma_f32(m[u][e], y[u], acc[e]); });
                });
                p += 8 * step;
            }
            while p < p1 {
                let (m, y) = (load(p), g.x(p));
                unroll!(e in [0 1 2 3] => { acc[e] = fma_f32(m[e], y, acc[e]); });
                p += step;
            }
        } else {
            let inside = |e: usize| r0 + e < g.rows;
            while p < p1 {
                let y = g.x(p);
                unroll!(e in [0 1 2 3] => {
                    if inside(e) {
                        acc[e] = fma_f32(g.at(r0 + e, p), y, acc[e]);
                    }
                });
                p += step;
            }
        }
        // The warp's rows' sums, by lanes `lanes` apart (every lane runs
        // the butterfly), then each output's over the warps.
        let mut d = lanes;
        while d < 32 {
            unroll!(e in [0 1 2 3] => { acc[e] += shfl_xor(acc[e], d as u32); });
            d *= 2;
        }
        let sums = dynamic_shared::<f32>();
        if row == 0 {
            store4(sums.add(warp * W + 4 * column), acc);
        }
        sync_threads();
        let r = group * W + t;
        let mut s = 0.0f32;
        if t < W {
            s = *sums.add(t);
            for w in 1..WARPS {
                s += *sums.add(w * W + t);
            }
        }
        let mine = (t < W && r < g.rows).then_some((t, s));
        let verdict = sums.add(WARPS * W).cast::<u32>();
        g.finish((W, numbered, slice), r, mine, verdict);
    }
}
