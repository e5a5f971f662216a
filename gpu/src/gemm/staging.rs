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
//!
//! The pipelined steps never transpose on the way in: they stage each
//! operand in the layout it has in memory ([`Layout`]), `k`-major when `x`
//! is contiguous and `x`-major (`S[x · X_MAJOR_LD + p]`, `k` contiguous)
//! otherwise, so every quad is one 16-byte `cp.async` (when aligned), and
//! their compute reads whichever layout it is given.

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

/// Whether the pipelined steps stage a panel of strides `xs` (along `x`)
/// and `ps` (along `k`) `k`-major: where `x` is the contiguous direction.
/// The host picks the entry of the layouts ([`super::pipelined_entry`])
/// by the same test.
#[doc(hidden)]
pub const fn stages_k_major(xs: usize, ps: usize) -> bool {
    xs < ps
}

/// Words from one `x` to the next in an `x`-major staged tile: `WARP_BK`
/// plus 4, so that rows start 20 words apart and the fragment loads of 8
/// consecutive rows at one `k` (or 4 rows' 16-byte words) fall in distinct
/// banks.
#[doc(hidden)]
pub const X_MAJOR_LD: usize = super::WARP_BK + 4;

/// Words from one `p` to the next in a `k`-major staged tile of `tx`
/// values of `x`.
#[doc(hidden)]
pub const fn k_major_ld(tx: usize) -> usize {
    tx + super::STAGE_PAD
}

/// Words of one staged tile of `tx` values of `x` in either layout.
#[doc(hidden)]
pub const fn staged_words(tx: usize) -> usize {
    let k_major = super::WARP_BK * k_major_ld(tx);
    let x_major = tx * X_MAJOR_LD;
    if k_major > x_major { k_major } else { x_major }
}

/// How the pipelined steps stage an operand: `K_MAJOR` (rows of `x` for
/// each `p`) or `x`-major (rows of `p` for each `x`).
pub struct Layout<const K_MAJOR: bool>;

impl<const K_MAJOR: bool> Layout<K_MAJOR> {
    /// The word of element `(x, p)` of a staged tile of `tx` values of `x`.
    #[inline(always)]
    pub const fn index(tx: usize, x: usize, p: usize) -> usize {
        if K_MAJOR {
            p * k_major_ld(tx) + x
        } else {
            x * X_MAJOR_LD + p
        }
    }

    /// Element `u` (0 to 3) of the quad at `(x, p)`: along `x` in a
    /// `k`-major tile, along `p` in an `x`-major one.
    #[inline(always)]
    pub const fn element(x: usize, p: usize, u: usize) -> (usize, usize) {
        if K_MAJOR { (x + u, p) } else { (x, p + u) }
    }

    /// The origin `(x, p)` of quad `e` of a `tx × WARP_BK` tile: quads
    /// run along `x` in a `k`-major tile (a warp covers a row of `x`), along
    /// `p` in an `x`-major one (4 lanes cover one `x`'s 16 values of `p`,
    /// 64 contiguous bytes of memory).
    #[inline(always)]
    pub const fn quad(tx: usize, e: usize) -> (usize, usize) {
        const PER_X: usize = super::WARP_BK / 4;
        if K_MAJOR {
            ((e % (tx / 4)) * 4, e / (tx / 4))
        } else {
            (e / PER_X, (e % PER_X) * 4)
        }
    }
}

/// The origin `(x, p)` of quad `e` of a `TX × BK` tile whose quads run
/// along `x` (`along_x`) or along `p`: consecutive quads cover a `p`-row
/// left to right, or consecutive `x` of one group of 4 `p`s.
#[inline(always)]
#[doc(hidden)]
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
    use super::{Layout, Mode, quad_origin};
    use crate::prim::*;

    /// A thread's `cp.async` copies of one operand's whole tiles, addresses
    /// taken once ([`Panel::whole_tiles`]): each tile's copies are `Q`
    /// quads from fixed offsets, with no bounds to test, where
    /// [`Panel::copy_async`] works out and tests every quad's place anew.
    /// A quad is one 16-byte copy where it is a 16-byte vector in memory,
    /// else (a pitch or start that is not a multiple of 4 elements:
    /// `1000 × 999 × 1001`) four 4-byte copies, dealt out among the lanes
    /// whose quads together cover a run of memory ([`Panel::whole_tiles`]),
    /// so that each of the 4 copy instructions reads consecutive addresses
    /// across the lanes (a lane's own 4 consecutive elements would spread
    /// every instruction over 4 times the sectors).
    #[cfg(target_feature = "sm_80")]
    #[derive(Clone, Copy)]
    pub struct WholeTiles<const Q: usize, const ELEMENTS: bool> {
        /// Each quad's source in the first tile.
        src: [*const f32; Q],
        /// Each quad's byte offset in a staged tile.
        dst: [u32; Q],
        /// Elements from one tile to the next (`WARP_BK · ps`).
        step: usize,
        /// Whether each quad is one 16-byte vector (else 4 elements; never
        /// without `ELEMENTS`).
        vector: bool,
        /// For 4-byte copies: elements, and bytes of the staged tile, from
        /// a lane's element `u` to its element `u + 1`; `src` and `dst` are
        /// then the lane's element 0.
        src_u: usize,
        dst_u: u32,
    }

    #[cfg(target_feature = "sm_80")]
    impl<const Q: usize, const ELEMENTS: bool> WholeTiles<Q, ELEMENTS> {
        /// Starts the copies of tile `tile` into the staged tile at
        /// shared-window address `stage`. Contract: the tile is whole
        /// (`(tile + 1) · WARP_BK <= k`), so every quad lies inside the
        /// panel; `stage` is a staged tile of the panel's layout.
        #[inline(always)]
        pub unsafe fn start(&self, stage: u32, tile: usize) {
            unroll!(s in [0 1 2 3] => {
                if s < Q {
                    let src = self.src[s].add(tile * self.step);
                    if !ELEMENTS || self.vector {
                        cp_async_cg_to::<F4>(stage + self.dst[s], src.cast::<F4>());
                    } else {
                        // Elements `g + G · u` of the group's run, which is
                        // consecutive in memory and in the staged tile
                        // (`whole_tiles`), each 4-byte aligned as every
                        // `f32` is.
                        unroll!(u in [0 1 2 3] => {
                            let dst = stage + self.dst[s] + self.dst_u * u as u32;
                            cp_async_to::<f32>(dst, src.add(self.src_u * u));
                        });
                    }
                }
            });
        }
    }

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
        /// The layout the tensor-core steps stage it in: `k`-major when
        /// `x` is the contiguous direction ([`super::stages_k_major`]).
        #[cfg(target_feature = "sm_80")]
        pub k_major: bool,
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
                #[cfg(target_feature = "sm_80")]
                k_major: super::stages_k_major(xs, ps),
            }
        }

        /// Whether the quads are 16-byte vectors in memory (in the
        /// direction of the layout the pipelined steps stage it in).
        #[inline(always)]
        pub fn vectors(&self) -> bool {
            !matches!(self.mode, Mode::Scalar { .. })
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
                return load4(at(x, p));
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
                store4(stage.add(p * ld + x), v);
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

        /// Stages this thread's quads of the `TX × BK` tile at `p0` into
        /// `stage` (rows of `ld` words) through registers: the synchronous
        /// staging of steps 6 and 7.
        #[inline(always)]
        pub unsafe fn stage_tile<const TX: usize, const THREADS: usize, const Q: usize>(
            &self,
            stage: *mut f32,
            ld: usize,
            thread: usize,
            p0: usize,
        ) {
            let quads = self.fetch_tile::<TX, THREADS, Q>(thread, p0);
            self.put_tile::<TX, THREADS, Q>(stage, ld, thread, quads);
        }

        /// Whether the quads of layout `K_MAJOR` are 16-byte vectors in
        /// memory (aligned, contiguous along the quad).
        #[inline(always)]
        fn vector<const K_MAJOR: bool>(&self) -> bool {
            if K_MAJOR {
                self.mode == Mode::AlongX
            } else {
                self.mode == Mode::AlongP
            }
        }

        /// Element `(x, p)`'s address, or the base (a valid aligned
        /// address) and `false` outside the panel.
        #[inline(always)]
        fn source(&self, x: usize, p: usize) -> (*const f32, bool) {
            if self.inside(x, p) {
                // SAFETY: `(x, p)` is inside the panel, whose elements are
                // readable (the contract of `Panel::new`), so the offset
                // stays within the operand's allocation.
                (unsafe { self.base.add(x * self.xs + p * self.ps) }, true)
            } else {
                (self.base, false)
            }
        }

        /// How many of the 4 elements from `(x, p)` along the quad of
        /// layout `K_MAJOR` are inside the panel.
        #[inline(always)]
        fn valid<const K_MAJOR: bool>(&self, x: usize, p: usize) -> usize {
            if !self.inside(x, p) {
                0
            } else if K_MAJOR {
                (self.extent - x).min(4)
            } else {
                (self.k - p).min(4)
            }
        }

        /// Starts `cp.async` copies of this thread's `Q` quads of the
        /// `TX × WARP_BK` tile whose `p` starts at `p0` into `stage`, laid
        /// out as `K_MAJOR` says, zeros past the panel: one 16-byte copy per
        /// quad where the quad is a 16-byte vector in memory and wholly
        /// inside, 4-byte copies otherwise.
        #[cfg(target_feature = "sm_80")]
        #[inline(always)]
        pub unsafe fn copy_async<
            const K_MAJOR: bool,
            const TX: usize,
            const THREADS: usize,
            const Q: usize,
        >(
            &self,
            stage: *mut f32,
            thread: usize,
            p0: usize,
        ) {
            const { assert!(Q <= 4) };
            let vector = self.vector::<K_MAJOR>();
            unroll!(s in [0 1 2 3] => {
                if s < Q {
                    let (x, p) = Layout::<K_MAJOR>::quad(TX, thread + THREADS * s);
                    let dst = stage.add(Layout::<K_MAJOR>::index(TX, x, p));
                    if vector && self.valid::<K_MAJOR>(x, p0 + p) == 4 {
                        cp_async_cg(dst.cast::<F4>(), self.source(x, p0 + p).0.cast::<F4>());
                    } else {
                        // The edges: 4-byte copies of the elements inside,
                        // plain zero stores outside (other bytes than the
                        // copies', so no ordering between them is needed).
                        // No copy ever names an address outside the panel.
                        unroll!(u in [0 1 2 3] => {
                            let (xu, pu) = Layout::<K_MAJOR>::element(x, p, u);
                            let (src, inside) = self.source(xu, p0 + pu);
                            let dst = stage.add(Layout::<K_MAJOR>::index(TX, xu, pu));
                            if inside {
                                cp_async(dst, src);
                            } else {
                                *dst = 0.0;
                            }
                        });
                    }
                }
            });
        }

        /// This thread's copies of the panel's whole tiles (`p0 + WARP_BK
        /// <= k`) laid out as `K_MAJOR` says, where every quad is wholly
        /// inside and its 4 elements are consecutive in memory: the panel
        /// spans the tile's `TX` values of `x` and the quads run along its
        /// stride of 1. `None` elsewhere (the edges of `C`, strides of more
        /// than one element both ways), where [`Panel::copy_async`] checks
        /// each quad; `None` too for quads that are not 16-byte vectors
        /// unless `ELEMENTS`.
        #[cfg(target_feature = "sm_80")]
        #[inline(always)]
        pub fn whole_tiles<
            const K_MAJOR: bool,
            const TX: usize,
            const THREADS: usize,
            const Q: usize,
            const ELEMENTS: bool,
        >(
            &self,
            thread: usize,
        ) -> Option<WholeTiles<Q, ELEMENTS>> {
            const {
                assert!(
                    THREADS.is_multiple_of(32),
                    "groups of lanes lie within warps"
                )
            };
            // A quad of layout `K_MAJOR` runs along `x` or `p`: its
            // elements are consecutive where that stride is 1 (a 16-byte
            // vector is a case of it).
            let vector = self.vector::<K_MAJOR>();
            let along = if K_MAJOR { self.xs } else { self.ps };
            if !(vector || (ELEMENTS && along == 1)) || self.extent < TX {
                return None;
            }
            let mut copies = WholeTiles {
                src: [self.base; Q],
                dst: [0; Q],
                step: super::super::WARP_BK * self.ps,
                vector,
                src_u: 0,
                dst_u: 0,
            };
            // The 4-byte copies' elements, dealt out so that each copy
            // instruction reads consecutive addresses across the lanes:
            // `(elements, staged words)` from a lane's quad origin to its
            // element 0.
            // `k`-major: quads run along `x`, and `G = min(TX / 4, 32)`
            // lanes' quads make one run of `4 · G` elements of a row of
            // `p`; lane `g` of them takes elements `g + G · u` of it.
            // `x`-major: quads run along `p`, 4 to an `x` (`Layout::quad`),
            // so 16 lanes cover 4 consecutive `x` of 16 `p`; lane `h` of
            // them (its quad at `x₀ + h / 4`, `p = 4 · (h % 4)`) takes
            // `p = h` of `x₀ + u`: one `x`'s 16 consecutive elements per
            // instruction, where its own quads would give 4 of each of 4.
            let lane = thread % 32;
            let (src_back, dst_back) = if K_MAJOR {
                let run = if TX / 4 < 32 { TX / 4 } else { 32 };
                let g = (lane % run) as isize;
                copies.src_u = run;
                copies.dst_u = (4 * run) as u32;
                (-3 * g, -3 * g)
            } else {
                let h = lane % 16;
                let (dx, dp) = (-((h / 4) as isize), h as isize - 4 * (h % 4) as isize);
                copies.src_u = self.xs;
                copies.dst_u = (4 * super::X_MAJOR_LD) as u32;
                (
                    dx * self.xs as isize + dp,
                    dx * super::X_MAJOR_LD as isize + dp,
                )
            };
            unroll!(s in [0 1 2 3] => {
                if s < Q {
                    let (x, p) = Layout::<K_MAJOR>::quad(TX, thread + THREADS * s);
                    // In bounds, with the quad's last element: `x + 3 <
                    // TX <= extent` (`k`-major) or `x < TX` and `p + 3 <
                    // WARP_BK` (`x`-major), elements of the first tile,
                    // which exists where this runs (the ring starts only
                    // tiles below `k`).
                    copies.src[s] = self.base.wrapping_add(x * self.xs + p * self.ps);
                    copies.dst[s] = (Layout::<K_MAJOR>::index(TX, x, p) * 4) as u32;
                    if !vector {
                        copies.src[s] = copies.src[s].wrapping_offset(src_back);
                        copies.dst[s] = (copies.dst[s] as isize + 4 * dst_back) as u32;
                    }
                }
            });
            Some(copies)
        }

        /// This thread's copies of the panel's whole tiles staged
        /// `k`-major from a panel laid out along `k` (`ps = 1`: `op(A) =
        /// A` stored `m × k`), transposed on the way in by 4-byte copies,
        /// so that the compute reads 16-byte vectors of 4 rows where the
        /// `x`-major stage would give it one row per load. Each copy
        /// instruction of a warp covers 2 consecutive `x` by all
        /// `WARP_BK` values of `p`: two runs of 64 bytes, the fewest
        /// memory lines 32 lanes of 4 bytes can take from a tile 16 deep.
        /// Their 32 words of the stage fall in 8 banks (rows of `p` lie
        /// `k_major_ld` words apart, 8 banks), a 4-way conflict on the
        /// shared side; the line requests cost more (H200, a batch of
        /// 1 024 products of 256³: 751.5 µs so, 780.2 for 4 `x` by 8 `p`,
        /// conflicts 2-way, and 796.8 for 8 `x` by 4 `p`, none). A warp
        /// takes 16 consecutive `x`: element `u` of copy `s` of a thread
        /// is `x = 16 · warp + 8 · s + 2 · u + lane % 2`, `p = lane / 2` (`Q = 2`
        /// copies of a thread, `TX = THREADS / 2`). `None` where the panel
        /// is not laid out along `k` or is narrower than the tile, or for
        /// other tiles. The tiles must be whole (`(tile + 1) · WARP_BK <= k`).
        #[cfg(target_feature = "sm_80")]
        #[inline(always)]
        pub fn transposing_tiles<const TX: usize, const THREADS: usize, const Q: usize>(
            &self,
            thread: usize,
        ) -> Option<WholeTiles<Q, true>> {
            // The mapping above, for the tiles it is written for (the
            // ring asserts them where it takes these copies; other
            // instantiations are never run).
            let fits = super::super::WARP_BK == 16 && Q == 2 && TX * 32 == 16 * THREADS;
            if !fits || self.ps != 1 || self.extent < TX {
                return None;
            }
            let (warp, lane) = (thread / 32, thread % 32);
            let p = lane / 2;
            let ld = super::k_major_ld(TX);
            let mut copies = WholeTiles {
                src: [self.base; Q],
                dst: [0; Q],
                step: super::super::WARP_BK,
                vector: false,
                src_u: 2 * self.xs,
                dst_u: 8,
            };
            unroll!(s in [0 1] => {
                let x = 16 * warp + 8 * s + lane % 2;
                // Inside the panel for every `u`: `x + 6 < 16 · (warp +
                // 1) <= TX <= extent`, `p < WARP_BK` of a whole tile.
                copies.src[s] = self.base.wrapping_add(x * self.xs + p);
                copies.dst[s] = ((p * ld + x) * 4) as u32;
            });
            Some(copies)
        }

        /// This thread's `Q` quads of the tile at `p0` as [`Panel::copy_async`]
        /// takes them, loaded into registers (targets without `cp.async`).
        #[cfg(not(target_feature = "sm_80"))]
        #[inline(always)]
        pub unsafe fn load_quads<
            const K_MAJOR: bool,
            const TX: usize,
            const THREADS: usize,
            const Q: usize,
        >(
            &self,
            thread: usize,
            p0: usize,
        ) -> [[f32; 4]; Q] {
            const { assert!(Q <= 4) };
            let vector = self.vector::<K_MAJOR>();
            let mut quads = [[0.0f32; 4]; Q];
            unroll!(s in [0 1 2 3] => {
                if s < Q {
                    let (x, p) = Layout::<K_MAJOR>::quad(TX, thread + THREADS * s);
                    if vector && self.valid::<K_MAJOR>(x, p0 + p) == 4 {
                        quads[s] = load4(self.source(x, p0 + p).0);
                    } else {
                        unroll!(u in [0 1 2 3] => {
                            let (xu, pu) = Layout::<K_MAJOR>::element(x, p, u);
                            let (src, inside) = self.source(xu, p0 + pu);
                            if inside {
                                quads[s][u] = *src;
                            }
                        });
                    }
                }
            });
            quads
        }

        /// Stores what [`Panel::load_quads`] loaded into `stage`.
        #[cfg(not(target_feature = "sm_80"))]
        #[inline(always)]
        pub unsafe fn store_quads<
            const K_MAJOR: bool,
            const TX: usize,
            const THREADS: usize,
            const Q: usize,
        >(
            &self,
            stage: *mut f32,
            thread: usize,
            quads: [[f32; 4]; Q],
        ) {
            unroll!(s in [0 1 2 3] => {
                if s < Q {
                    let (x, p) = Layout::<K_MAJOR>::quad(TX, thread + THREADS * s);
                    store4(stage.add(Layout::<K_MAJOR>::index(TX, x, p)), quads[s]);
                }
            });
        }
    }
}
