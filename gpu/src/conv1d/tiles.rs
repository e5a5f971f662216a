//! What steps 4 to 7 share on the device: 16-byte words of shared memory,
//! a thread's 16-byte output stores, staging a tile's inputs, and the runs
//! of consecutive tiles that steps 4 and 7 walk with the next tile's loads
//! in flight.

use super::*;
use crate::prim::*;

/// One 16-byte word of shared memory: four floats.
#[repr(C, align(16))]
#[derive(Clone, Copy)]
pub(super) struct Quad(pub(super) [f32; 4]);

/// Stores a thread's `W` consecutive outputs, from output `first` of a
/// row of `n` starting at `y`: 16-byte stores where all lie inside the
/// row on 16 bytes, one by one (inside the row only) otherwise.
#[inline(always)]
pub(super) unsafe fn store_outputs<const W: usize>(
    y: *mut f32,
    first: usize,
    n: usize,
    acc: &[f32; W],
) {
    if first >= n {
        return;
    }
    let y = y.add(first);
    if first + W <= n && (y as usize).is_multiple_of(16) {
        for q in 0..W / 4 {
            let w = [
                acc[4 * q].to_bits(),
                acc[4 * q + 1].to_bits(),
                acc[4 * q + 2].to_bits(),
                acc[4 * q + 3].to_bits(),
            ];
            store_v4(y.add(4 * q).cast(), w);
        }
    } else {
        for a in 0..W {
            if first + a < n {
                *y.add(a) = acc[a];
            }
        }
    }
}

/// Stages tile elements `from`, `from + step`, ... below `len` of the
/// tile whose outputs start at `start`: element `e`, input `start + e −
/// r` of the row at `x` (zero outside the row of `n`), at word `word(e)`
/// of `tile`, with read-only loads.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn stage_elements(
    tile: *mut f32,
    word: impl Fn(usize) -> usize,
    x: *const f32,
    start: usize,
    r: usize,
    n: usize,
    from: usize,
    len: usize,
    step: usize,
) {
    let mut e = from;
    while e < len {
        *tile.add(word(e)) = match tile_source(start, e, r, n) {
            Some(i) => f32::from_bits(load_nc_u32(x.add(i).cast())),
            None => 0.0,
        };
        e += step;
    }
}

/// The 16 tile elements of segment `s`: four 16-byte shared loads.
#[inline(always)]
pub(super) unsafe fn segment<const W: usize>(tile: *const f32, s: usize) -> [f32; W] {
    let p = tile.add(s * (W + SEGMENT_PAD)).cast::<Quad>();
    let mut x = [0.0f32; W];
    for q in 0..W / 4 {
        let Quad(v) = *p.add(q);
        for k in 0..4 {
            x[4 * q + k] = v[k];
        }
    }
    x
}

/// Loads `L` inputs of `x` for tile elements `first + tid + k ·
/// threads` of the tile whose outputs start at `start` (zero outside the
/// row), all in flight at once: unchecked where they all lie inside the
/// row.
#[inline(always)]
pub(super) unsafe fn load_inputs<const L: usize>(
    x: *const f32,
    start: usize,
    first: usize,
    tid: usize,
    threads: usize,
    r: usize,
    n: usize,
) -> [f32; L] {
    let mut v = [0.0f32; L];
    if start + first >= r && start + first - r + L * threads <= n {
        let base = x.add(start + first - r);
        for k in 0..L {
            v[k] = f32::from_bits(load_nc_u32(base.add(tid + k * threads).cast()));
        }
    } else {
        for k in 0..L {
            if let Some(i) = tile_source(start, first + tid + k * threads, r, n) {
                v[k] = f32::from_bits(load_nc_u32(x.add(i).cast()));
            }
        }
    }
    v
}

/// What [`tile_runs`] walks: the rows of the launch's `operands`, in
/// tiles of `tile_len` outputs whose staged inputs are `tile_len + keep`
/// elements, the first `keep` of them the previous tile's last; `threads`
/// threads.
pub(super) struct Run {
    pub(super) operands: Operands,
    pub(super) threads: usize,
    pub(super) tile_len: usize,
    pub(super) keep: usize,
}

/// Steps 4 and 7: block `b` takes the same run of consecutive tiles
/// in each of its rows and calls `compute(row, start)` on each tile,
/// staged in `tile` (element `e` at word `word(e)`, input `start + e −
/// r`, zeros outside the row). The next tile's first `keep` elements
/// are this tile's last ones (moved within shared memory); its other
/// `tile_len = L · threads` are loaded into registers before
/// `compute`, so their latency hides behind it.
#[inline(always)]
pub(super) unsafe fn tile_runs<const L: usize>(
    run: Run,
    tile: *mut f32,
    word: impl Fn(usize) -> usize + Copy,
    mut compute: impl FnMut(usize, usize),
) {
    let Run {
        operands: op,
        threads,
        tile_len,
        keep,
    } = run;
    let (n, r) = (op.n, op.taps as usize / 2);
    let len = tile_len + keep;
    let tid = thread_idx_x() as usize;
    let tiles = n.div_ceil(tile_len);
    let per_block = tiles.div_ceil(grid_dim_x() as usize);
    let first_tile = block_idx_x() as usize * per_block;
    let end_tile = (first_tile + per_block).min(tiles);
    let mut row = block_idx_y() as usize;
    while row < op.rows as usize && first_tile < end_tile {
        let x = op.input_row(row);
        // The first tile of the run, whole: its first `tile_len`
        // elements with all loads of a thread in flight, then the rest.
        let start = first_tile * tile_len;
        let v = load_inputs::<L>(x, start, 0, tid, threads, r, n);
        for k in 0..L {
            *tile.add(word(tid + k * threads)) = v[k];
        }
        stage_elements(tile, word, x, start, r, n, tile_len + tid, len, threads);
        sync_threads();

        for t in first_tile..end_tile {
            let start = t * tile_len;
            let next = t + 1 < end_tile;
            // The next tile's new inputs, in flight during `compute`.
            let v = if next {
                load_inputs::<L>(x, start + tile_len, keep, tid, threads, r, n)
            } else {
                [0.0; L]
            };
            compute(row, start);
            // Every thread is done reading the tile (also before the
            // next row's first tile overwrites it).
            sync_threads();
            if next {
                // Elements tile_len .. len become 0 .. keep (no
                // overlap: keep <= tile_len); then, once every thread
                // has moved its part, the new elements from `keep` on,
                // which cover where the old ones were.
                let mut e = tid;
                while e < keep {
                    *tile.add(word(e)) = *tile.add(word(tile_len + e));
                    e += threads;
                }
                sync_threads();
                for k in 0..L {
                    *tile.add(word(keep + tid + k * threads)) = v[k];
                }
                sync_threads();
            }
        }
        row += grid_dim_y() as usize;
    }
}

/// Weights `16 c .. 16 c + 16` of the staged mask: four 16-byte loads of
/// one address for the whole warp (a broadcast).
#[inline(always)]
pub(super) unsafe fn segment_of_weights<const W: usize>(weights: *const f32, c: usize) -> [f32; W] {
    let p = weights.add(c * W).cast::<Quad>();
    let mut m = [0.0f32; W];
    for q in 0..W / 4 {
        let Quad(v) = *p.add(q);
        for k in 0..4 {
            m[4 * q + k] = v[k];
        }
    }
    m
}
