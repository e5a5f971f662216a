//! Step 7: warp tiling. A warp owns a 32 × 64 block of the block's tile;
//! lane `(lm, ln)` of its 4 × 8 grid owns the 4 × 4 sub-blocks at rows
//! `16 s + 4 lm` and columns `32 u + 4 ln` (`s, u ∈ {0, 1}`), 8 × 8
//! outputs. For one `k` a warp loads 4 distinct 16-byte words of the `A`
//! tile (each a broadcast to 8 lanes) and 16 of the `B` tile (2 lanes
//! each): no bank conflicts, and 4 shared-memory loads per 64 FMAs.
//!
//! The compute and the store are shared with step 8, which feeds the same
//! warp tiles from a pipeline.

use super::WARP_BK;
#[cfg(target_arch = "nvptx64")]
use {super::Operands, super::STAGE_PAD, super::staging::Panel, crate::prim::*};

/// Rows and columns of a warp's block of outputs.
#[doc(hidden)]
pub const WARP_M: usize = 32;
/// Columns of a warp's block of outputs.
#[doc(hidden)]
pub const WARP_N: usize = 64;
/// Side of a thread's block of outputs (2 × 2 sub-blocks of 4 × 4).
#[doc(hidden)]
pub const THREAD_TILE: usize = 8;

/// The tile of step 7.
#[doc(hidden)]
pub const TILE: usize = 128;

const _: () = assert!(WARP_BK == 16);

/// Where a thread's outputs lie in its block's tile.
#[derive(Clone, Copy)]
pub struct WarpTile {
    /// The warp's first row and column.
    pub wm: usize,
    /// The warp's first column.
    pub wn: usize,
    /// The lane's row of 4 in the warp's 4 × 8 grid.
    pub lm: usize,
    /// The lane's column of 4.
    pub ln: usize,
}

impl WarpTile {
    /// Thread `t`'s place in a block whose tile is `BN` columns wide.
    #[inline(always)]
    pub const fn of<const BN: usize>(t: usize) -> WarpTile {
        let (warp, lane) = (t / 32, t % 32);
        WarpTile {
            wm: (warp / (BN / WARP_N)) * WARP_M,
            wn: (warp % (BN / WARP_N)) * WARP_N,
            lm: lane / 8,
            ln: lane % 8,
        }
    }

    /// Tile row of output row `r` (0..8) of this thread: 4 consecutive
    /// rows per half (`BLOCKED`, read as one 16-byte word from a `k`-major
    /// tile), or 4 rows 4 apart (the lanes of one half take consecutive
    /// rows, whose `x`-major rows lie in different banks).
    #[inline(always)]
    pub const fn row<const BLOCKED: bool>(self, r: usize) -> usize {
        if BLOCKED {
            self.wm + (r / 4) * 16 + self.lm * 4 + r % 4
        } else {
            self.wm + (r / 4) * 16 + self.lm + 4 * (r % 4)
        }
    }

    /// Tile column of output column `c` (0..8) of this thread: as
    /// [`WarpTile::row`], 4 consecutive columns per half or 4 columns 8
    /// apart.
    #[inline(always)]
    pub const fn col<const BLOCKED: bool>(self, c: usize) -> usize {
        if BLOCKED {
            self.wn + (c / 4) * 32 + self.ln * 4 + c % 4
        } else {
            self.wn + (c / 4) * 32 + self.ln + 8 * (c % 4)
        }
    }
}

/// `acc += A·B` over one staged `WARP_BK`-deep stage: `a` holds `BK` rows
/// of `lda` words (`A` tile, `k`-major), `b` likewise.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub(crate) unsafe fn multiply(
    acc: &mut [[f32; THREAD_TILE]; THREAD_TILE],
    a: *const f32,
    lda: usize,
    b: *const f32,
    ldb: usize,
    w: WarpTile,
) {
    let step = |acc: &mut [[f32; THREAD_TILE]; THREAD_TILE], q: usize| {
        let quad = |tile: *const f32, ld: usize, at: usize| load4(tile.add(q * ld + at));
        let av = [
            quad(a, lda, w.row::<true>(0)),
            quad(a, lda, w.row::<true>(4)),
        ];
        let bv = [
            quad(b, ldb, w.col::<true>(0)),
            quad(b, ldb, w.col::<true>(4)),
        ];
        for r in 0..THREAD_TILE {
            for c in 0..THREAD_TILE {
                acc[r][c] = fma_f32(av[r / 4][r % 4], bv[c / 4][c % 4], acc[r][c]);
            }
        }
    };
    // Spelled out: LLVM leaves a 16-trip loop of 64 FMAs rolled.
    macro_rules! unrolled {
        ($($q:literal)*) => { $( step(acc, $q); )* };
    }
    unrolled!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15);
}

/// Whether [`store`] writes a tile whose first column is `col0` as 16-byte
/// vectors: its columns blocked (`cols_blocked`), `C` 16-byte aligned with
/// a pitch of a multiple of 4, and `col0` one too (a tile that stepped back
/// from the edge may start on any column).
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub(crate) fn vector_stores(o: &Operands, col0: usize, cols_blocked: bool) -> bool {
    cols_blocked
        && o.c.addr().is_multiple_of(16)
        && o.ldc.is_multiple_of(4)
        && col0.is_multiple_of(4)
}

/// Stores a thread's outputs of the tile at `origin` (row, column), its
/// rows and columns placed as [`WarpTile::row`] and [`WarpTile::col`] say:
/// 16-byte vectors where the columns are blocked, `C` is aligned for them
/// and the 4 columns are inside, element by element elsewhere. Outputs
/// above row `from.0` or left of column `from.1` are not stored: they
/// belong to the neighbouring tile where a tile stepped back from `C`'s
/// edge ([`super::pipelined`]).
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub(crate) unsafe fn store<const ROWS_BLOCKED: bool, const COLS_BLOCKED: bool>(
    o: &Operands,
    acc: &[[f32; THREAD_TILE]; THREAD_TILE],
    origin: (usize, usize),
    from: (usize, usize),
    w: WarpTile,
) {
    let (row0, col0) = origin;
    let vectors = vector_stores(o, col0, COLS_BLOCKED);
    unroll!(r in [0 1 2 3 4 5 6 7] => {
        let i = row0 + w.row::<ROWS_BLOCKED>(r);
        if i >= from.0 {
            unroll!(u in [0 1] => {
                let j = col0 + w.col::<COLS_BLOCKED>(4 * u);
                let row = &acc[r];
                let sum = [row[4 * u], row[4 * u + 1], row[4 * u + 2], row[4 * u + 3]];
                if i < o.m && vectors && j >= from.1 && j + 4 <= o.n {
                    let c = o.c.add(i * o.ldc + j);
                    let mut v = [0.0f32; 4];
                    let old = if o.beta == 0.0 { [0.0; 4] } else { load4(c) };
                    for e in 0..4 {
                        v[e] = if o.beta == 0.0 {
                            o.alpha * sum[e]
                        } else {
                            fma_f32(o.alpha, sum[e], o.beta * old[e])
                        };
                    }
                    store4(c, v);
                } else {
                    unroll!(e in [0 1 2 3] => {
                        let j = col0 + w.col::<COLS_BLOCKED>(4 * u + e);
                        if j >= from.1 {
                            o.store(i, j, sum[e]);
                        }
                    });
                }
            });
        }
    });
}

/// Contract: the family's; blocks of 256 threads and one stage of
/// `WARP_BK` rows of `TILE + STAGE_PAD` words for each operand.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub(crate) unsafe fn kernel(o: Operands) {
    let o = o.of_batch();
    const THREADS: usize = TILE / WARP_M * (TILE / WARP_N) * 32;
    const Q: usize = TILE * WARP_BK / 4 / THREADS;
    const LD: usize = TILE + STAGE_PAD;
    let (tile_m, tile_n) = o.tile(TILE, TILE, 1);
    let t = thread_idx_x() as usize;
    let (row0, col0) = (tile_m * TILE, tile_n * TILE);
    let w = WarpTile::of::<TILE>(t);
    let a = Panel::new(o.a.add(row0 * o.a_row), o.a_row, o.a_col, o.m - row0, o.k);
    let b = Panel::new(o.b.add(col0 * o.b_col), o.b_col, o.b_row, o.n - col0, o.k);
    let mut carver = SharedCarver::new();
    let a_tile = carver.take::<f32>(WARP_BK * LD);
    let b_tile = carver.take::<f32>(WARP_BK * LD);
    let mut acc = [[0.0f32; THREAD_TILE]; THREAD_TILE];
    let mut p0 = 0;
    while p0 < o.k {
        a.stage_tile::<TILE, THREADS, Q>(a_tile, LD, t, p0);
        b.stage_tile::<TILE, THREADS, Q>(b_tile, LD, t, p0);
        sync_threads();
        multiply(&mut acc, a_tile, LD, b_tile, LD, w);
        sync_threads();
        p0 += WARP_BK;
    }
    store::<true, true>(&o, &acc, (row0, col0), (row0, col0), w);
}
