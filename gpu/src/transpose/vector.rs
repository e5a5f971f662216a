//! Steps 6 to 9: tiles of 256-byte source rows moved in 16-byte chunks
//! through a swizzled shared tile, for every element size; step 7 takes
//! the tiles column by column, step 8 also asks L2 for a tile ahead, and
//! step 9 does that with square byte tiles of 128-byte rows.

use super::*;
#[cfg(target_arch = "nvptx64")]
use crate::prim::*;

/// Source rows per tile of the vector steps for elements of 2, 4 or 8 bytes
/// (the destination tile's row length, in elements).
#[doc(hidden)]
pub const VECTOR_TILE_ROWS: u32 = 64;
/// Source rows per tile of the vector steps for 1-byte elements
/// ([`vector_rows`]).
#[doc(hidden)]
pub const VECTOR_BYTE_TILE_ROWS: u32 = 128;
/// Bytes of every source row of a vector step's tile, whatever the element
/// size ([`vector_columns`] elements), but step 9's.
#[doc(hidden)]
pub const VECTOR_ROW_BYTES: u32 = 256;
/// Bytes of every source row of step 9's tile, bytes only: 128 rows of
/// 128 bytes, a square.
#[doc(hidden)]
pub const SQUARE_ROW_BYTES: u32 = 128;
/// Threads of the vector steps resident on an SM, for every element size
/// (8 blocks of 256 threads, 4 of 512 for bytes), held by their launch
/// bounds: with [`VECTOR_CHUNKS`] loads each, 128 KiB in flight per SM
/// (half that in step 9's square tiles).
#[doc(hidden)]
pub const VECTOR_SM_THREADS: u32 = 2048;
/// 16-byte chunks each thread of a vector step moves, for every element
/// size: global loads, shared stores, and destination chunks gathered and
/// stored. In step 9's square tile each thread loads half as many, and
/// half the threads gather and store ([`vector_loads`],
/// [`vector_gatherers`]).
#[doc(hidden)]
pub const VECTOR_CHUNKS: usize = 4;
/// Bytes per global and shared access on the vector steps' fast path: one
/// `v4.b32` access, a chunk of [`vector_elements`] elements.
#[doc(hidden)]
pub const VECTOR_BYTES: u32 = 16;
/// 16-byte chunks per source row of a tile of `row_bytes` bytes a row
/// ([`VECTOR_ROW_BYTES`]: 16; [`SQUARE_ROW_BYTES`]: 8).
#[doc(hidden)]
pub const fn vector_row_chunks(row_bytes: usize) -> usize {
    row_bytes / VECTOR_BYTES as usize
}
/// Chunk columns over which the vector steps' XOR swizzle spreads a column of
/// chunks: the chunks one pass over the banks holds (32 banks of 4 bytes).
#[doc(hidden)]
pub const SWIZZLE_CHUNKS: u32 = BANKS * BANK_BYTES / VECTOR_BYTES;

/// Elements of `size` bytes per 16-byte chunk of the vector steps (4 for
/// 4-byte elements, 2 for 8-byte ones).
#[doc(hidden)]
pub const fn vector_elements(size: usize) -> usize {
    VECTOR_BYTES as usize / size
}

/// Source rows of a vector step's tile for elements of `size` bytes: 64
/// ([`VECTOR_TILE_ROWS`]), or 128 ([`VECTOR_BYTE_TILE_ROWS`]) for bytes. The
/// destination tile's rows are this many elements: 128 bytes or more, so
/// that the eight lanes of a 16-byte store fill a 128-byte line of one row.
/// A byte tile of 64 rows would leave destination rows of 64 bytes (four
/// 16-element chunks).
#[doc(hidden)]
pub const fn vector_rows(size: usize) -> usize {
    if size == 1 {
        VECTOR_BYTE_TILE_ROWS as usize
    } else {
        VECTOR_TILE_ROWS as usize
    }
}

/// Elements per source row of a vector step's tile of `row_bytes` bytes
/// a row ([`VECTOR_ROW_BYTES`]: 256 bytes, 128 2-byte elements, 64 4-byte,
/// 32 8-byte ones; [`SQUARE_ROW_BYTES`]: 128 bytes).
#[doc(hidden)]
pub const fn vector_columns(size: usize, row_bytes: usize) -> usize {
    row_bytes / size
}

/// Bytes of a vector step's tile, in shared memory as in the source: 16 KiB,
/// 32 KiB for bytes in rows of [`VECTOR_ROW_BYTES`], 16 KiB in step 9's.
#[doc(hidden)]
pub const fn vector_tile_bytes(size: usize, row_bytes: usize) -> usize {
    vector_rows(size) * row_bytes
}

/// Threads per block of a vector step for elements of `size` bytes: one
/// per [`VECTOR_CHUNKS`] chunks of a tile of [`VECTOR_ROW_BYTES`] rows, so
/// 256, or 512 for the bytes' 128 rows (also in step 9's square tiles).
#[doc(hidden)]
pub const fn vector_threads(size: usize) -> usize {
    vector_tile_bytes(size, VECTOR_ROW_BYTES as usize) / (VECTOR_CHUNKS * VECTOR_BYTES as usize)
}

/// 16-byte chunks each thread loads of a tile of `row_bytes` bytes a
/// row: [`VECTOR_CHUNKS`], or 2 in step 9's square tiles.
#[doc(hidden)]
pub const fn vector_loads(size: usize, row_bytes: usize) -> usize {
    vector_tile_bytes(size, row_bytes) / (vector_threads(size) * VECTOR_BYTES as usize)
}

/// Threads that gather and store [`VECTOR_CHUNKS`] destination chunks
/// each of a tile of `row_bytes` bytes a row: all of the block's, or the
/// first half in step 9's square tiles (the others end at the barrier).
#[doc(hidden)]
pub const fn vector_gatherers(size: usize, row_bytes: usize) -> usize {
    vector_tile_bytes(size, row_bytes) / (VECTOR_CHUNKS * VECTOR_BYTES as usize)
}

const _: () = assert!(
    vector_loads(1, VECTOR_ROW_BYTES as usize) == VECTOR_CHUNKS
        && vector_loads(4, VECTOR_ROW_BYTES as usize) == VECTOR_CHUNKS
        && vector_gatherers(1, VECTOR_ROW_BYTES as usize) == vector_threads(1)
        && vector_gatherers(4, VECTOR_ROW_BYTES as usize) == vector_threads(4)
        && vector_loads(1, SQUARE_ROW_BYTES as usize) == VECTOR_CHUNKS / 2
        && vector_gatherers(1, SQUARE_ROW_BYTES as usize) == vector_threads(1) / 2
);

/// The element offset, in a vector step's shared tile, of source tile
/// element `(row, col)`, for elements of `size` bytes. The tile keeps the
/// source's orientation: rows of [`VECTOR_ROW_BYTES`], unpadded (each starts
/// at bank 0), chunk `c` of row `row` at chunk `c ^ ((row / b) % 8)` (`b`
/// elements per chunk, 8 chunks per pass over the banks). Storing a row, the
/// eight lanes a 16-byte access serves at once write consecutive chunks,
/// which the XOR only permutes within their group of eight. Gathering a
/// destination chunk, lanes read element `e` of the rows `b·m + e` for eight
/// consecutive `m` and one column: the XOR sends them to eight distinct
/// chunks, and lanes reading neighbouring columns of those chunks fill the
/// rest of the banks ([`vector_store_at`]). For bytes (`b` = 16, rows of
/// eight chunks) a lane reads 4-byte words instead ([`vector_byte_word`]):
/// word `i` of its gather is row `16·k + i` for the lane's `k` in `0..8`, so
/// the XOR again puts eight lanes' rows in eight distinct chunks, and the
/// four words of a chunk the other lanes read fill the rest of the banks.
/// Step 9's rows of 128 bytes are eight chunks, one pass over the banks,
/// which the XOR permutes as a whole. Pure, so host tests check the
/// mapping and its banks.
#[doc(hidden)]
pub const fn vector_slot(row: usize, col: usize, size: usize, row_bytes: usize) -> usize {
    let b = vector_elements(size);
    let chunk = col / b;
    let swizzled = chunk ^ ((row / b) % SWIZZLE_CHUNKS as usize);
    row * vector_columns(size, row_bytes) + swizzled * b + col % b
}

/// Where chunk `n` (`0..vector_loads`) that thread `t` of a vector step
/// loads lies in a source tile of `row_bytes` bytes a row: its first
/// element's `(row, column)`. Each warp loads whole rows of the tile (two
/// of 256 bytes, or four of 128), consecutive threads consecutive chunks.
#[doc(hidden)]
pub const fn vector_load_at(t: usize, n: usize, size: usize, row_bytes: usize) -> (usize, usize) {
    let row_chunks = vector_row_chunks(row_bytes);
    let rows = vector_threads(size) / row_chunks; // rows per pass
    (
        t / row_chunks + rows * n,
        vector_elements(size) * (t % row_chunks),
    )
}

/// Where chunk `p` (`0..VECTOR_CHUNKS`) that thread `t` of a vector step
/// gathers and stores lies in the destination tile: its first element's
/// `(row, column)`; its `b` elements are source column `row`, rows
/// `column..column + b`. A warp stores four destination rows, eight chunks
/// (128 bytes) each: lane `l` takes row `l / 8` and chunk `l % 8` of them,
/// so each of its gathering loads reads eight rows `b` apart (distinct
/// chunks after the swizzle) in each of four neighbouring columns.
///
/// For bytes a thread's four chunks are one chunk column of four
/// consecutive destination rows, `4·q + p` for `q = 4·warp + l / 8`: the
/// bytes of one 4-byte word of each of 16 source rows, gathered as words
/// and transposed in registers ([`vector_byte_word`]). Each store `p` of a
/// warp still covers four destination rows, eight chunks each. The
/// mapping is the same for any row length: a tile of 128-byte rows has
/// half the destination rows, which the first half of the threads cover
/// ([`vector_gatherers`]).
#[doc(hidden)]
pub const fn vector_store_at(t: usize, p: usize, size: usize) -> (usize, usize) {
    let b = vector_elements(size);
    let lanes = 32;
    let (warp, lane) = (t / lanes, t % lanes);
    if size == 1 {
        let q = 4 * warp + lane / 8;
        return (4 * q + p, b * (lane % 8));
    }
    let unit = warp + (vector_threads(size) / lanes) * p;
    let groups = vector_rows(size) / b / 8; // of 8 chunks per destination row
    let (row_group, chunk_group) = (unit / groups, unit % groups);
    (4 * row_group + lane / 8, b * (8 * chunk_group + lane % 8))
}

/// Source rows a byte gather reads per thread: one chunk's worth (16).
#[doc(hidden)]
pub const VECTOR_BYTE_WORDS: usize = VECTOR_BYTES as usize;

/// The byte offset, in a vector step's shared byte tile of `row_bytes`
/// bytes a row, of the 4-byte word
/// that thread `t` reads `i`-th (`0..VECTOR_BYTE_WORDS`) to gather its
/// destination chunks: source row `column + i`, source columns `row..row +
/// 4`, where `(row, column)` is its first chunk ([`vector_store_at`]). Its
/// byte `j` belongs to destination row `row + j`, byte `i` of the chunk; a
/// 4×4 byte transpose of words `4·w..4·w + 4` ([`transpose_4x4_bytes`])
/// gives word `w` of all four chunks. Four-byte aligned (`row` is a
/// multiple of 4, and the swizzle moves whole chunks). All 16 words lie in
/// one chunk column of 16 rows of one swizzle group, so they are a source
/// row (`row_bytes`) apart: one address and constant offsets.
#[doc(hidden)]
pub const fn vector_byte_word(t: usize, i: usize, row_bytes: usize) -> usize {
    let (row, col) = vector_store_at(t, 0, 1);
    vector_slot(col + i, row, 1, row_bytes)
}

/// [`TransposeVariant::VectorColumns`]' block order: the `(column, row)` of
/// the tile that block `(bx, by)` of a `gx`×`gy` grid moves. Blocks start in
/// launch order (`by·gx + bx`, [`launch_position`]), which here runs down
/// each column of tiles in turn. A bijection of the grid onto the tiles.
#[doc(hidden)]
pub const fn column_tile(bx: u32, by: u32, gx: u32, gy: u32) -> (u32, u32) {
    column_tile_at(launch_position(bx, by, gx), gy)
}

/// Block `(bx, by)`'s place in the launch order of a grid `gx` blocks
/// wide: `by·gx + bx`, held in `u64` (it reaches 2^31 · 2^16).
#[doc(hidden)]
pub const fn launch_position(bx: u32, by: u32, gx: u32) -> u64 {
    by as u64 * gx as u64 + bx as u64
}

/// The `(column, row)` of the tile that the block at launch position `at`
/// moves in column order, in a grid `gy` tiles high ([`column_tile`]).
#[doc(hidden)]
pub const fn column_tile_at(at: u64, gy: u32) -> (u32, u32) {
    ((at / gy as u64) as u32, (at % gy as u64) as u32)
}

/// Step 8's prefetch: the `(column, row)` of the tile `n` launch positions
/// after tile `(x, y)` in the column order of a `gx`×`gy` grid
/// ([`column_tile_at`]), or `None` past the last. In 32-bit arithmetic
/// (one division by `gy` where the launch position's takes a 64-bit one),
/// so that it fits the step's 32 registers.
#[doc(hidden)]
pub const fn column_tile_after(x: u32, y: u32, n: u32, gx: u32, gy: u32) -> Option<(u32, u32)> {
    let Some(down) = y.checked_add(n) else {
        return None;
    };
    match x.checked_add(down / gy) {
        Some(column) if column < gx => Some((column, down % gy)),
        _ => None,
    }
}

/// 16 bytes as one value: loads and stores of it are single
/// `ld.shared.v4`/`st.shared.v4` instructions.
#[cfg(target_arch = "nvptx64")]
#[repr(C, align(16))]
#[derive(Clone, Copy)]
struct Chunk(Words4);

/// Steps 6 to 9: a tile of [`vector_rows`] source rows of `ROW_BYTES`
/// bytes (64 × 256, or 128 × 256 for bytes; step 9 128 × 128 bytes) moved
/// in 16-byte chunks ([`vector_load_at`], [`vector_slot`],
/// [`vector_store_at`]; for bytes [`vector_byte_word`]). `T` is `u8`,
/// `u16`, `u32` or `u64` ([`VECTOR_ROW_BYTES`]), or `u8`
/// ([`SQUARE_ROW_BYTES`]); `COLUMNS` picks step 7's block order
/// ([`column_tile`]), and `AHEAD` (with `COLUMNS`) step 8's prefetch of
/// the tile one block per SM further on in that order, for sm_90a only.
/// Also needs a 1D block of [`vector_threads`] threads, a grid of the
/// variant's tiles ([`TransposeVariant::tile`]), [`vector_tile_bytes`] of
/// shared memory, and `src` unwritten while the kernel runs (it is read
/// through the read-only path), which the contract's no-overlap already
/// gives.
#[cfg(target_arch = "nvptx64")]
pub(super) unsafe fn kernel<
    T: Copy,
    const COLUMNS: bool,
    const AHEAD: bool,
    const ROW_BYTES: usize,
>(
    src: *const T,
    src_pitch: usize,
    dst: *mut T,
    dst_pitch: usize,
    width: u32,
    height: u32,
) {
    let size = size_of::<T>();
    let b = vector_elements(size);
    let rows = vector_rows(size); // of the source tile
    let columns = const { vector_columns(size_of::<T>(), ROW_BYTES) };
    let loads = const { vector_loads(size_of::<T>(), ROW_BYTES) };
    let gatherers = const { vector_gatherers(size_of::<T>(), ROW_BYTES) };
    let (tile_x, tile_y) = if COLUMNS {
        column_tile(block_idx_x(), block_idx_y(), grid_dim_x(), grid_dim_y())
    } else {
        (block_idx_x(), block_idx_y())
    };
    let (bx, by) = (tile_x as usize * columns, tile_y as usize * rows);
    let (width, height) = (width as usize, height as usize);
    let t = thread_idx_x() as usize;
    let tile = dynamic_shared::<T>();

    // One test for the whole block: 16-byte aligned rows on both sides
    // and the tile wholly inside the matrix. Then every chunk access
    // below lies inside the matrices and is 16-byte aligned: the first
    // elements and the pitches are multiples of 16 bytes, and so are the
    // tile's origin (256 or 128 bytes across, 64 or 128 rows down: a
    // multiple of 128 bytes of destination row) and every chunk's offset
    // in it (`b` elements).
    let bits = (src as usize) | (dst as usize) | (src_pitch * size) | (dst_pitch * size);
    let aligned = bits.is_multiple_of(VECTOR_BYTES as usize);
    let fast = aligned && bx + columns <= width && by + rows <= height;
    if fast {
        // Every load before the first shared store: 64 bytes in flight
        // (32 in step 9's square tiles). One address, then constant row
        // offsets from it.
        let (row0, col) = vector_load_at(t, 0, size, ROW_BYTES);
        let origin = src.add((by + row0) * src_pitch + bx + col);
        let mut loaded = [[0u32; 4]; VECTOR_CHUNKS];
        for n in 0..loads {
            let row = vector_load_at(t, n, size, ROW_BYTES).0;
            loaded[n] = load_nc_v4(origin.add((row - row0) * src_pitch).cast());
        }
        // Step 8: with this block's loads on their way, its first `rows`
        // threads each ask L2 for one source row of the tile `sm_ids()`
        // launch positions on (one block per SM further down the column
        // order), where that tile lies wholly inside the matrix:
        // `ROW_BYTES` bytes, 16-byte aligned as this tile's rows are (the
        // same matrix). Found after the loads are issued, not before: the
        // loads leave sooner (H200, 8192² bytes: 37.7 against 38.0 µs).
        // The row's address is found first and the prefetch issued
        // after, as measured: one `if` around both compiles to other
        // PTX, not timed.
        #[cfg(target_feature = "sm_90a")]
        let ahead = match column_tile_after(tile_x, tile_y, sm_ids(), grid_dim_x(), grid_dim_y()) {
            Some((ax, ay)) if AHEAD && t < rows => {
                let (ax, ay) = (ax as usize * columns, ay as usize * rows);
                (ax + columns <= width && ay + rows <= height)
                    .then(|| src.add((ay + t) * src_pitch + ax).cast::<u8>())
            }
            _ => None,
        };
        #[cfg(target_feature = "sm_90a")]
        if let Some(row) = ahead {
            bulk::prefetch_l2(row, ROW_BYTES as u32);
        }
        // The chunks as they came: no registers move.
        for n in 0..loads {
            let (row, col) = vector_load_at(t, n, size, ROW_BYTES);
            *tile
                .add(vector_slot(row, col, size, ROW_BYTES))
                .cast::<Chunk>() = Chunk(loaded[n]);
        }
    } else {
        // Checked, element by element: a warp reads 32 elements of a
        // source row at a time.
        let pass = vector_threads(size) / columns;
        let (col, row0) = (t % columns, t / columns);
        for k in 0..rows / pass {
            let row = row0 + pass * k;
            if bx + col < width && by + row < height {
                *tile.add(vector_slot(row, col, size, ROW_BYTES)) =
                    *src.add((by + row) * src_pitch + bx + col);
            }
        }
    }
    sync_threads();
    // Step 9's second half of the block only loaded: its tile has half
    // the destination chunks. (Where every thread gathers, no test.)
    let gathers = gatherers == vector_threads(size) || t < gatherers;
    if fast && gathers {
        let mut gathered = [Chunk([0; 4]); VECTOR_CHUNKS];
        if size == 1 {
            // Bytes: 16 words, one per source row, each holding a byte
            // of four destination rows; four 4×4 byte transposes make
            // word `w` of the four chunks from words `4·w..4·w + 4`.
            // Every word lies in the tile, 4-byte aligned, and was
            // written above by this block before the barrier
            // (`vector_byte_word`; host tests check it).
            let words = tile.cast::<u8>();
            for w in 0..4 {
                let mut block = [0u32; 4];
                for k in 0..4 {
                    let i = 4 * w + k;
                    block[k] = *words.add(vector_byte_word(t, i, ROW_BYTES)).cast::<u32>();
                }
                let columns = transpose_4x4_bytes(block);
                for p in 0..VECTOR_CHUNKS {
                    gathered[p].0[w] = columns[p];
                }
            }
        } else {
            // Gather each destination chunk, element by element (a
            // column of `b` source rows), into the registers of one
            // 16-byte store.
            for p in 0..VECTOR_CHUNKS {
                let (row, col) = vector_store_at(t, p, size);
                let out = (&raw mut gathered[p]).cast::<T>();
                for e in 0..b {
                    *out.add(e) = *tile.add(vector_slot(col + e, row, size, ROW_BYTES));
                }
            }
        }
        for p in 0..VECTOR_CHUNKS {
            let (row, col) = vector_store_at(t, p, size);
            store_v4(
                dst.add((bx + row) * dst_pitch + by + col).cast(),
                gathered[p].0,
            );
        }
    } else if !fast {
        // Only elements of the matrix: exactly those written above. A
        // warp writes 32 elements of a destination row at a time.
        let pass = vector_threads(size) / rows;
        let (col, row0) = (t % rows, t / rows);
        for k in 0..columns / pass {
            let row = row0 + pass * k;
            if bx + row < width && by + col < height {
                *dst.add((bx + row) * dst_pitch + by + col) =
                    *tile.add(vector_slot(col, row, size, ROW_BYTES));
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
    use std::vec::Vec;

    /// Every vector tile, as `(element size, row bytes)`: steps 6 to 8 for
    /// each element size, step 9's square byte tile.
    const GEOMETRIES: [(usize, usize); 5] = [
        (1, VECTOR_ROW_BYTES as usize),
        (2, VECTOR_ROW_BYTES as usize),
        (4, VECTOR_ROW_BYTES as usize),
        (8, VECTOR_ROW_BYTES as usize),
        (1, SQUARE_ROW_BYTES as usize),
    ];

    /// The vector steps' sizes: source rows of 256 bytes and 64 bytes per
    /// thread for every element size; 64 rows (16 KiB, 256 threads), 128
    /// rows for 1-byte elements (32 KiB, 512 threads). Step 9: bytes only,
    /// 128 rows of 128 bytes (16 KiB) in the same 512 threads, 32 bytes
    /// loaded per thread, half the threads gathering.
    #[test]
    fn vector_tiles_have_their_shapes() {
        for v in [
            TransposeVariant::VectorTile,
            TransposeVariant::VectorColumns,
            TransposeVariant::VectorAhead,
        ] {
            assert_eq!(v.tile(1), (256, 128));
            assert_eq!(v.tile(2), (128, 64));
            assert_eq!(v.tile(4), (64, 64));
            assert_eq!(v.tile(8), (32, 64));
            for size in [1, 2, 4, 8] {
                assert!(v.supports(size as usize));
                let tile = vector_tile_bytes(size as usize, VECTOR_ROW_BYTES as usize) as u32;
                assert_eq!(v.shared_bytes(size), tile);
                assert_eq!(tile, if size == 1 { 32 << 10 } else { 16 << 10 });
                let (threads, one) = v.block(size);
                assert_eq!(
                    (threads * VECTOR_CHUNKS as u32 * VECTOR_BYTES, one),
                    (tile, 1)
                );
                // Destination rows of the tile: at least one 128-byte line.
                assert!(v.tile(size).1 * size >= 128);
            }
        }
        let square = TransposeVariant::SquareAhead;
        assert!(square.supports(1));
        assert!([2, 4, 8].iter().all(|&size| !square.supports(size)));
        assert_eq!(square.tile(1), (128, 128));
        assert_eq!(square.shared_bytes(1), 16 << 10);
        assert_eq!(square.block(1), (512, 1));
        assert_eq!(vector_loads(1, SQUARE_ROW_BYTES as usize), 2);
        assert_eq!(vector_gatherers(1, SQUARE_ROW_BYTES as usize), 256);
        assert_eq!(SWIZZLE_CHUNKS, 8);
        assert_eq!(vector_row_chunks(VECTOR_ROW_BYTES as usize), 16);
        assert_eq!(vector_row_chunks(SQUARE_ROW_BYTES as usize), 8);
        assert_eq!(vector_threads(1), 512);
        for size in [2, 4, 8] {
            assert_eq!(vector_threads(size), 256);
        }
    }

    /// The shared tile a vector step's fast path fills, simulated thread by
    /// thread with the kernel's mappings: `value(r, c)` at the slot of
    /// source tile element `(r, c)`. Checks that every load lies in the
    /// tile, chunk-aligned, and that each slot is written once with the
    /// element the checked path puts there.
    fn fill_vector_tile<V: Copy + PartialEq + core::fmt::Debug>(
        size: usize,
        row_bytes: usize,
        value: impl Fn(usize, usize) -> V,
    ) -> Vec<Option<V>> {
        let b = vector_elements(size);
        let (columns, rows) = (vector_columns(size, row_bytes), vector_rows(size));
        let mut shared = vec![None; columns * rows];
        for t in 0..vector_threads(size) {
            for n in 0..vector_loads(size, row_bytes) {
                let (r, c) = vector_load_at(t, n, size, row_bytes);
                assert!(r < rows && c + b <= columns, "load outside the tile");
                let slot = vector_slot(r, c, size, row_bytes);
                assert_eq!(slot % b, 0, "chunk not aligned");
                for e in 0..b {
                    assert!(shared[slot + e].is_none(), "shared element written twice");
                    shared[slot + e] = Some(value(r, c + e));
                }
            }
        }
        for r in 0..rows {
            for c in 0..columns {
                assert_eq!(
                    shared[vector_slot(r, c, size, row_bytes)],
                    Some(value(r, c))
                );
            }
        }
        shared
    }

    /// Runs a vector step's fast path for one tile on the CPU, thread by
    /// thread, with the very mappings the kernel uses: source element
    /// `(r, c)` holds `r · 1000 + c`, and every destination element must
    /// come out, once, as its transposed source. The fast path leaves each
    /// element where the checked path puts it (`vector_slot(row, column)`).
    /// Bytes gather by words: [`vector_byte_path_transposes_a_tile`].
    #[test]
    fn vector_fast_path_transposes_a_tile() {
        for size in [2usize, 4, 8] {
            let row_bytes = VECTOR_ROW_BYTES as usize;
            let b = vector_elements(size);
            let (columns, rows) = (vector_columns(size, row_bytes), vector_rows(size));
            let value = |r: usize, c: usize| r * 1000 + c;
            let shared = fill_vector_tile(size, row_bytes, value);
            let mut stored = vec![false; columns * rows];
            for t in 0..vector_threads(size) {
                for p in 0..VECTOR_CHUNKS {
                    let (row, col) = vector_store_at(t, p, size);
                    assert!(row < columns && col + b <= rows, "store outside the tile");
                    assert_eq!(col % b, 0, "chunk not aligned");
                    for e in 0..b {
                        let got = shared[vector_slot(col + e, row, size, row_bytes)];
                        assert_eq!(got, Some(value(col + e, row)), "size {size}");
                        assert!(!stored[row * rows + col + e], "element stored twice");
                        stored[row * rows + col + e] = true;
                    }
                }
            }
            assert!(stored.iter().all(|&s| s), "size {size}: element not stored");
        }
    }

    /// The byte tile's fast path on the CPU, thread by thread, as the kernel
    /// runs it: the loads into a byte array of shared memory, then each
    /// thread's 16 word reads at [`vector_byte_word`] (inside the tile,
    /// 4-byte aligned) and the same [`transpose_4x4_bytes`], chunk `p` to
    /// destination row `row + p`. Bytes hold 256 values, so the tile runs
    /// twice: once holding each element's source row, once its column.
    /// Both byte tiles: 128 × 256 (steps 6 to 8, every thread gathering)
    /// and step 9's 128 × 128 (the first [`vector_gatherers`] threads).
    #[test]
    fn vector_byte_path_transposes_a_tile() {
        for row_bytes in [VECTOR_ROW_BYTES as usize, SQUARE_ROW_BYTES as usize] {
            byte_path_transposes_a_tile(row_bytes);
        }
    }

    fn byte_path_transposes_a_tile(row_bytes: usize) {
        // Source rows and destination columns; 128 × 256 or 128 × 128.
        let (rows, columns) = (vector_rows(1), vector_columns(1, row_bytes));
        let mut stored = vec![0u8; rows * columns];
        for (pass, value) in [|r: usize, _: usize| r as u8, |_: usize, c: usize| c as u8]
            .into_iter()
            .enumerate()
        {
            let shared: Vec<u8> = fill_vector_tile(1, row_bytes, value)
                .into_iter()
                .map(Option::unwrap)
                .collect();
            for t in 0..vector_gatherers(1, row_bytes) {
                let mut words = [0u32; VECTOR_BYTE_WORDS];
                for (i, word) in words.iter_mut().enumerate() {
                    let at = vector_byte_word(t, i, row_bytes);
                    assert_eq!(at % 4, 0, "word not aligned");
                    assert!(at + 4 <= shared.len(), "word outside the tile");
                    *word = u32::from_le_bytes(shared[at..at + 4].try_into().unwrap());
                }
                let mut chunks = [[0u32; 4]; VECTOR_CHUNKS];
                for w in 0..4 {
                    let columns = transpose_4x4_bytes(words[4 * w..4 * w + 4].try_into().unwrap());
                    for p in 0..VECTOR_CHUNKS {
                        chunks[p][w] = columns[p];
                    }
                }
                let (row0, _) = vector_store_at(t, 0, 1);
                for (p, chunk) in chunks.iter().enumerate() {
                    let (row, col) = vector_store_at(t, p, 1);
                    assert_eq!(row, row0 + p);
                    assert!(row < columns && col + 16 <= rows && col % 16 == 0);
                    for (e, byte) in chunk.iter().flat_map(|w| w.to_le_bytes()).enumerate() {
                        // Destination (row, col + e) is source (col + e, row).
                        assert_eq!(byte, value(col + e, row), "thread {t} chunk {p} byte {e}");
                        assert_eq!(stored[row * rows + col + e] >> pass, 0, "stored twice");
                        stored[row * rows + col + e] |= 1 << pass;
                    }
                }
            }
        }
        assert!(
            stored.iter().all(|&s| s == 3),
            "{row_bytes}: element not stored"
        );
    }

    /// Whether the lanes of one warp-wide shared-memory access at these byte
    /// addresses, each `width` bytes wide, take one pass per phase: a 16-byte
    /// access is served eight lanes at a time, an 8-byte one sixteen, a 4-,
    /// 2- or 1-byte one 32; within each such group no two distinct 4-byte
    /// words may fall in one bank (lanes reading the same word share it).
    fn conflict_free(addresses: &[usize], width: usize) -> bool {
        let phase = (128 / width.max(4)).min(32);
        addresses.chunks(phase).all(|lanes| {
            let mut words: Vec<usize> = lanes
                .iter()
                .flat_map(|&a| (a / 4..(a + width).div_ceil(4)).collect::<Vec<_>>())
                .collect();
            words.sort();
            words.dedup();
            let mut banks: Vec<usize> = words.iter().map(|w| w % BANKS as usize).collect();
            banks.sort();
            banks.dedup();
            banks.len() == words.len()
        })
    }

    #[test]
    fn conflict_model_counts_distinct_words_per_bank() {
        assert!(conflict_free(
            &(0..32).map(|l| 4 * l).collect::<Vec<_>>(),
            4
        ));
        assert!(conflict_free(&(0..32).collect::<Vec<_>>(), 1)); // 8 words
        assert!(!conflict_free(
            &(0..32).map(|l| 128 * l).collect::<Vec<_>>(),
            4
        ));
        assert!(conflict_free(
            &(0..32).map(|l| 16 * l).collect::<Vec<_>>(),
            16
        ));
        assert!(!conflict_free(&[0, 128], 4));
    }

    /// Shared-memory banks of every vector step access, per warp: storing
    /// the loaded chunks (16 bytes), and gathering destination chunks (an
    /// element at a time; for bytes a 4-byte word at a time).
    #[test]
    fn vector_shared_accesses_are_conflict_free() {
        for (size, row_bytes) in GEOMETRIES {
            let b = vector_elements(size);
            for warp in (0..vector_threads(size)).step_by(32) {
                let lanes = warp..warp + 32;
                for n in 0..vector_loads(size, row_bytes) {
                    let stores: Vec<_> = lanes
                        .clone()
                        .map(|t| {
                            let (row, col) = vector_load_at(t, n, size, row_bytes);
                            vector_slot(row, col, size, row_bytes) * size
                        })
                        .collect();
                    assert!(conflict_free(&stores, 16), "size {size}: store conflict");
                }
                if warp >= vector_gatherers(size, row_bytes) {
                    continue;
                }
                if size == 1 {
                    for i in 0..VECTOR_BYTE_WORDS {
                        let words: Vec<_> = lanes
                            .clone()
                            .map(|t| vector_byte_word(t, i, row_bytes))
                            .collect();
                        assert!(conflict_free(&words, 4), "word {i}: gather conflict");
                    }
                    continue;
                }
                for p in 0..VECTOR_CHUNKS {
                    for e in 0..b {
                        let loads: Vec<_> = lanes
                            .clone()
                            .map(|t| {
                                let (row, col) = vector_store_at(t, p, size);
                                vector_slot(col + e, row, size, row_bytes) * size
                            })
                            .collect();
                        assert!(conflict_free(&loads, size), "size {size}: gather conflict");
                    }
                }
            }
        }
    }

    /// Each warp's global accesses: whole 128-byte runs, one chunk per lane
    /// (loaded: two rows of 256 bytes, or four of 128 in step 9's tiles;
    /// stored: four rows of 128 bytes).
    #[test]
    fn vector_global_accesses_are_row_runs() {
        for (size, row_bytes) in GEOMETRIES {
            let b = vector_elements(size);
            let load_rows = 32 / vector_row_chunks(row_bytes);
            let load = |t, n| vector_load_at(t, n, size, row_bytes);
            let store = |t, p| vector_store_at(t, p, size);
            for warp in (0..vector_threads(size)).step_by(32) {
                let mut runs = Vec::new();
                for n in 0..vector_loads(size, row_bytes) {
                    runs.push((
                        (warp..warp + 32).map(|t| load(t, n)).collect::<Vec<_>>(),
                        load_rows,
                    ));
                }
                if warp < vector_gatherers(size, row_bytes) {
                    for p in 0..VECTOR_CHUNKS {
                        runs.push(((warp..warp + 32).map(|t| store(t, p)).collect(), 4));
                    }
                }
                for (mut chunks, rows) in runs {
                    chunks.sort();
                    chunks.dedup();
                    assert_eq!(chunks.len(), 32);
                    let mut starts: Vec<_> = chunks.iter().map(|&(r, _)| r).collect();
                    starts.dedup();
                    assert_eq!(starts.len(), rows, "size {size}");
                    for r in starts {
                        let run: Vec<_> = chunks.iter().filter(|c| c.0 == r).map(|c| c.1).collect();
                        assert_eq!(run.len(), 32 / rows);
                        assert!(run.windows(2).all(|w| w[1] == w[0] + b));
                        assert_eq!(run[0] * size % 128, 0);
                    }
                }
            }
        }
    }

    #[test]
    fn column_order_takes_every_tile_once_down_the_columns() {
        for (gx, gy) in [
            (1, 1),
            (1, 17),
            (3, 16),
            (5, 18),
            (128, 128),
            (7, 1094),
            (300, 33),
        ] {
            let mut seen = vec![false; (gx * gy) as usize];
            for by in 0..gy {
                for bx in 0..gx {
                    let (x, y) = column_tile(bx, by, gx, gy);
                    assert!(x < gx && y < gy, "{gx}×{gy}: ({bx}, {by}) -> ({x}, {y})");
                    // The launch position, counted down the columns.
                    assert_eq!(x * gy + y, by * gx + bx);
                    let i = (y * gx + x) as usize;
                    assert!(!seen[i], "{gx}×{gy}: tile ({x}, {y}) twice");
                    seen[i] = true;
                }
            }
            assert!(seen.iter().all(|&s| s));
        }
        assert_eq!(column_tile(1, 0, 100, 64), (0, 1));
        assert_eq!(column_tile(0, 1, 100, 64), (1, 36));
        // The largest grid: no overflow.
        let (gx, gy) = (u32::MAX.div_ceil(32), 65_535);
        assert_eq!(column_tile(gx - 1, gy - 1, gx, gy), (gx - 1, gy - 1));
    }

    /// Step 8's look-ahead is the tile `n` launch positions on, whatever
    /// `n` against the grid's height, and none past the last.
    #[test]
    fn the_tile_ahead_is_n_launch_positions_on() {
        for (gx, gy) in [(1, 1), (3, 16), (5, 18), (32, 64), (64, 64), (7, 1094)] {
            let tiles = gx as u64 * gy as u64;
            for n in [0, 1, 17, 64, 132, 1000, 5000] {
                for by in 0..gy {
                    for bx in 0..gx {
                        let (x, y) = column_tile(bx, by, gx, gy);
                        let at = launch_position(bx, by, gx) + n as u64;
                        let want = (at < tiles).then(|| column_tile_at(at, gy));
                        assert_eq!(column_tile_after(x, y, n, gx, gy), want, "{gx}×{gy} +{n}");
                    }
                }
            }
        }
        // No overflow at the largest grid and look-ahead.
        let (gx, gy) = (u32::MAX.div_ceil(32), 65_535);
        assert_eq!(column_tile_after(gx - 1, gy - 1, 1, gx, gy), None);
        assert_eq!(column_tile_after(0, gy - 1, u32::MAX, gx, gy), None);
        assert_eq!(column_tile_after(0, 0, u32::MAX, 1 << 20, 1), None);
        assert_eq!(column_tile_after(0, 5, gy, gx, gy), Some((1, 5)));
    }
}
