//! Staging tiles of an operand in shared memory, `k`-major, for steps 6 to
//! 8 and the tensor-core steps: what they share.
//!
//! An operand is seen as a *panel*: element `(x, p)` — `x` a row of
//! `op(A)` or a column of `op(B)`, `p` the index along `k` — lies at
//! `base[x · xs + p · ps]`. A staged tile holds `TX` values of `x` for each
//! of `BK` values of `p` as `BK` rows of `ld` words: `S[p · ld + x]`, so a
//! thread's values of one `p` are consecutive (16-byte shared loads) for
//! either operand.
//!
//! Threads move *quads* of 4 elements. The panel's layout decides their
//! direction, once per launch:
//!
//! * [`Mode::AlongX`] (`xs = 1`: `op(B) = B`, `op(A) = Aᵀ`): 4 consecutive
//!   `x` of one `p`, one 16-byte load and one 16-byte store, or one 16-byte
//!   `cp.async` (sm_80+); a warp covers 512 consecutive bytes of a row;
//! * [`Mode::AlongP`] (`ps = 1`: `op(A) = A`, `op(B) = Bᵀ`): 4 consecutive
//!   `p` of one `x`, one 16-byte load and 4 transposing 4-byte stores; a
//!   warp's 32 lanes take 32 consecutive `x`, whose stores fall in 32
//!   different banks whatever `ld` is;
//! * [`Mode::Scalar`] where the 16-byte vectors would be misaligned (an
//!   odd start address or pitch): the same quads, as 4 loads each.
//!
//! Elements outside the panel (`x ≥ extent` or `p ≥ k`) are staged as
//! zeros, which add nothing to the products.

/// How a panel's quads are loaded; see the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// 4 consecutive `x`, 16-byte aligned.
    AlongX,
    /// 4 consecutive `p`, 16-byte aligned.
    AlongP,
    /// 4 consecutive `x` (where `xs <= ps`) or `p`, element by element.
    Scalar {
        /// The direction of the quads.
        along_x: bool,
    },
}

impl Mode {
    /// The mode of a panel with strides `xs`, `ps` whose first element is
    /// at byte address `address`.
    pub fn of(address: usize, xs: usize, ps: usize) -> Mode {
        let aligned = address.is_multiple_of(16);
        if aligned && xs == 1 && ps.is_multiple_of(4) {
            Mode::AlongX
        } else if aligned && ps == 1 && xs.is_multiple_of(4) {
            Mode::AlongP
        } else {
            Mode::Scalar { along_x: xs <= ps }
        }
    }

    /// Whether quads run along `x`.
    pub fn along_x(self) -> bool {
        matches!(self, Mode::AlongX | Mode::Scalar { along_x: true })
    }
}

/// The origin `(x, p)` of quad `e` of a `TX × BK` tile whose quads run
/// along `x` (`along_x`) or along `p`: consecutive quads cover a `p`-row
/// left to right, or consecutive `x` of one group of 4 `p`s.
#[inline(always)]
pub const fn quad_origin<const TX: usize>(e: usize, along_x: bool) -> (usize, usize) {
    if along_x {
        ((e % (TX / 4)) * 4, e / (TX / 4))
    } else {
        (e % TX, (e / TX) * 4)
    }
}

#[cfg(target_arch = "nvptx64")]
pub(crate) use device::Panel;

#[cfg(target_arch = "nvptx64")]
mod device {
    use super::{Mode, quad_origin};
    #[cfg(target_feature = "sm_80")]
    use crate::prim::*;

    /// One operand's panel, from the block's tile origin on: `extent`
    /// values of `x` (the rows or columns left from the tile's first one),
    /// `k` of `p`.
    #[derive(Clone, Copy)]
    pub struct Panel {
        pub base: *const f32,
        pub xs: usize,
        pub ps: usize,
        pub extent: usize,
        pub k: usize,
        pub mode: Mode,
    }

    impl Panel {
        /// The panel at `base` (the tile's first `x`); contract: the
        /// elements `(x, p)`, `x < extent`, `p < k`, are readable.
        #[inline(always)]
        pub fn new(base: *const f32, xs: usize, ps: usize, extent: usize, k: usize) -> Panel {
            Panel {
                base,
                xs,
                ps,
                extent,
                k,
                mode: Mode::of(base.addr(), xs, ps),
            }
        }

        /// Whether element `(x, p)` is inside the panel.
        #[inline(always)]
        fn inside(&self, x: usize, p: usize) -> bool {
            x < self.extent && p < self.k
        }

        /// The quad at `(x, p)` (its origin, tile `p` offset included),
        /// zeros outside the panel.
        #[inline(always)]
        pub unsafe fn fetch(&self, x: usize, p: usize) -> [f32; 4] {
            let along_x = self.mode.along_x();
            let (last_x, last_p) = if along_x { (x + 3, p) } else { (x, p + 3) };
            let at = |x: usize, p: usize| self.base.add(x * self.xs + p * self.ps);
            if self.mode != (Mode::Scalar { along_x }) && self.inside(last_x, last_p) {
                // 16-byte aligned: the base is, and the quad starts a
                // multiple of 4 elements from it along a stride of 1 with
                // the other stride a multiple of 4.
                return *at(x, p).cast::<[f32; 4]>();
            }
            let mut v = [0.0f32; 4];
            unroll!(u in [0 1 2 3] => {
                let (x, p) = if along_x { (x + u, p) } else { (x, p + u) };
                if self.inside(x, p) {
                    v[u] = *at(x, p);
                }
            });
            v
        }

        /// Stores the quad fetched at tile position `(x, p)` (without the
        /// tile's `p` offset) into the staged tile `stage` of row length
        /// `ld`.
        #[inline(always)]
        pub unsafe fn put(&self, stage: *mut f32, ld: usize, x: usize, p: usize, v: [f32; 4]) {
            if self.mode.along_x() {
                *stage.add(p * ld + x).cast::<[f32; 4]>() = v;
            } else {
                unroll!(u in [0 1 2 3] => {
                    *stage.add((p + u) * ld + x) = v[u];
                });
            }
        }

        /// Fetches this thread's `Q` quads of the `TX × BK` tile whose
        /// `p` starts at `p0` (quads `thread + THREADS · s`).
        #[inline(always)]
        pub unsafe fn fetch_tile<const TX: usize, const THREADS: usize, const Q: usize>(
            &self,
            thread: usize,
            p0: usize,
        ) -> [[f32; 4]; Q] {
            const { assert!(Q <= 4) };
            let mut quads = [[0.0f32; 4]; Q];
            unroll!(s in [0 1 2 3] => {
                if s < Q {
                    let (x, p) = quad_origin::<TX>(thread + THREADS * s, self.mode.along_x());
                    quads[s] = self.fetch(x, p0 + p);
                }
            });
            quads
        }

        /// Stores what [`Panel::fetch_tile`] fetched into a staged tile.
        #[inline(always)]
        pub unsafe fn put_tile<const TX: usize, const THREADS: usize, const Q: usize>(
            &self,
            stage: *mut f32,
            ld: usize,
            thread: usize,
            quads: [[f32; 4]; Q],
        ) {
            unroll!(s in [0 1 2 3] => {
                if s < Q {
                    let (x, p) = quad_origin::<TX>(thread + THREADS * s, self.mode.along_x());
                    self.put(stage, ld, x, p, quads[s]);
                }
            });
        }

        /// Starts `cp.async` copies of this thread's quads of the tile at
        /// `p0` straight into `stage` (16 bytes each, zero-filled past the
        /// panel). Only for [`Mode::AlongX`].
        #[cfg(target_feature = "sm_80")]
        #[inline(always)]
        pub unsafe fn copy_tile_async<const TX: usize, const THREADS: usize, const Q: usize>(
            &self,
            stage: *mut f32,
            ld: usize,
            thread: usize,
            p0: usize,
        ) {
            const { assert!(Q <= 4) };
            unroll!(s in [0 1 2 3] => {
                if s >= Q {
                    return;
                }
                let (x, p) = quad_origin::<TX>(thread + THREADS * s, true);
                let valid = if p0 + p < self.k && x < self.extent {
                    (self.extent - x).min(4)
                } else {
                    0
                };
                // A valid aligned source even when nothing is read.
                let src = if valid > 0 {
                    self.base.add(x + (p0 + p) * self.ps)
                } else {
                    self.base
                };
                cp_async_cg_zfill(
                    stage.add(p * ld + x).cast::<[f32; 4]>(),
                    src.cast::<[f32; 4]>(),
                    (valid * 4) as u32,
                );
            });
        }
    }
}
