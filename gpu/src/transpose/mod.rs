//! Matrix transpose: the ladder of Harris's *An Efficient Matrix Transpose
//! in CUDA C/C++* (naive, shared-memory tile, padded tile), the fastest
//! versions for 4-byte and 1-byte elements, and 16-byte vector steps for
//! every element size.
//!
//! All kernels move bits, so one instantiation serves every element type of
//! its size: `u8` (1 byte), `u16` (2), `u32` (4: `f32`, `i32`), `u64` (8).
//! The source is `height` rows of `width` elements, `src_pitch` elements
//! apart; the destination `width` rows of `height` elements, `dst_pitch`
//! apart. Any `width` and `height` work; partial tiles are masked.
//!
//! One file per group of steps: `lesson` (steps 1 to 4), `words` (step
//! 5, bytes) and `vector` (steps 6 to 9). This file holds the shapes, the
//! ladder and its kernel table.
//!
//! Every kernel's launch contract: `src` valid for reads of `height` rows of `width`
//! elements `src_pitch` apart, `dst` for writes of `width` rows of
//! `height` elements `dst_pitch` apart, not overlapping `src`; a 2D grid
//! covering the source in tiles as the variant's table says, with its
//! block shape and shared memory.

mod lesson;
mod vector;
mod words;

pub use vector::{
    SQUARE_ROW_BYTES, SWIZZLE_CHUNKS, VECTOR_BYTE_TILE_ROWS, VECTOR_BYTE_WORDS, VECTOR_BYTES,
    VECTOR_CHUNKS, VECTOR_ROW_BYTES, VECTOR_SM_THREADS, VECTOR_TILE_ROWS, column_tile,
    column_tile_after, column_tile_at, launch_position, vector_byte_word, vector_columns,
    vector_elements, vector_gatherers, vector_load_at, vector_loads, vector_row_chunks,
    vector_rows, vector_slot, vector_store_at, vector_threads, vector_tile_bytes,
};
pub use words::{WORDS_TILE, byte_perm, transpose_4x4_bytes};

/// Threads per block side and tile side of the lessons' steps (1-3).
#[doc(hidden)]
pub const LESSON_TILE: u32 = 16;
/// Tile side of [`TransposeVariant::Tile32`] (NVIDIA's "coalesced transpose").
#[doc(hidden)]
pub const TILE32: u32 = 32;
/// Thread rows of [`TransposeVariant::Tile32`]: 32×8 threads, 4 rows each.
#[doc(hidden)]
pub const TILE32_ROWS: u32 = 8;

/// Bytes per bank of shared memory: padding one row by this much shifts each
/// row of a tile to the next bank.
#[doc(hidden)]
pub const BANK_BYTES: u32 = 4;
/// Banks of shared memory.
#[doc(hidden)]
pub const BANKS: u32 = 32;

/// The part of the source one block of a transpose step covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tile {
    /// `(columns, rows)` elements, of any size.
    Elements(u32, u32),
    /// The vector steps' tile of `vector_tile_bytes`: `vector_rows` rows
    /// of this many bytes (`VECTOR_ROW_BYTES`, or step 9's
    /// `SQUARE_ROW_BYTES`), by element size.
    Vector(u32),
}

/// The threads of a transpose step's block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Block {
    /// `(x, y)` threads for every element size.
    Threads(u32, u32),
    /// The vector steps' 1D block of `vector_threads`, by element size.
    Vector,
}

/// How a transpose step stages its tile in shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Staging {
    /// No shared memory.
    None,
    /// A tile of elements, each row followed by this padding.
    Tile(Padding),
    /// A 64×64-byte tile of 4-byte words, rows padded by one word.
    Words,
    /// The tile as the source holds it, in 16-byte chunks, rows unpadded,
    /// the chunk column XOR-swizzled by the row (`vector_slot`).
    Swizzled,
}

/// Padding after each row of a staged tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Padding {
    /// None: column reads conflict on banks.
    None,
    /// One bank (4 bytes; `pad_elements`).
    OneBank,
    /// One element.
    OneElement,
}

/// How a transpose step is launched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TransposeShape {
    /// The kernel (base name; the type suffix is `u8`, `u16`, `u32` or `u64`).
    pub kernel: &'static str,
    /// Threads per block.
    pub block: Block,
    /// The source one block covers.
    pub tile: Tile,
    /// Its shared-memory tile.
    pub staging: Staging,
    /// The element sizes, in bytes, it moves.
    pub element_bytes: &'static [usize],
    /// The alignment, in bytes, of the first element and the pitch of both
    /// matrices that its fastest path needs: 1 where it has none.
    /// [`TransposeVariant::Words4x4`] refuses rows not so aligned; the vector
    /// steps move them element by element.
    pub row_alignment: u32,
}

const ANY_SIZE: &[usize] = &[1, 2, 4, 8];

const fn lesson_shape(kernel: &'static str, staging: Staging) -> TransposeShape {
    TransposeShape {
        kernel,
        block: Block::Threads(LESSON_TILE, LESSON_TILE),
        tile: Tile::Elements(LESSON_TILE, LESSON_TILE),
        staging,
        element_bytes: ANY_SIZE,
        row_alignment: 1,
    }
}

const fn vector_shape(
    kernel: &'static str,
    row_bytes: u32,
    element_bytes: &'static [usize],
) -> TransposeShape {
    TransposeShape {
        kernel,
        block: Block::Vector,
        tile: Tile::Vector(row_bytes),
        staging: Staging::Swizzled,
        element_bytes,
        row_alignment: VECTOR_BYTES,
    }
}

ladder! {
    /// The transpose ladder.
    pub enum TransposeVariant("transpose"): TransposeShape {
        /// Step 1 (003): one thread per element, `dst[x][y] = src[y][x]`.
        /// Reads are coalesced along a row; writes go down a column, one
        /// element per row of the destination: every warp store touches 32
        /// rows.
        Naive = "naive" => lesson_shape("transpose_naive", Staging::None),
        /// Step 2 (003): a 16×16 block stages a 16×16 tile in shared memory;
        /// it reads rows of the source and writes rows of the destination, so
        /// both sides are coalesced. Reading the tile by columns makes the
        /// lanes of a warp hit the same shared-memory banks.
        SharedTile = "shared_tile" => lesson_shape("transpose_shared_tile", Staging::Tile(Padding::None)),
        /// Step 3 (003): the same tile with each row padded by one bank (4
        /// bytes), so a column of the tile falls in distinct banks. For 8-bit
        /// data the lesson pads by 4 bytes, not 1: banks are 4 bytes wide, and
        /// a 1-byte pad would leave four consecutive rows' bytes in one bank
        /// word (`(17 * r) / 4` repeats banks every few rows), still
        /// conflicting.
        PaddedTile = "padded_tile"
            => lesson_shape("transpose_padded_tile", Staging::Tile(Padding::OneBank)),
        /// Step 4 (NVIDIA's coalesced transpose): a 32×32 tile padded by one
        /// element, 32×8 threads each moving 4 rows: fewer blocks, four loads
        /// in flight per thread before the barrier, full 128-byte lines for
        /// 4-byte elements. What `transpose_into` uses for 2-, 4- and 8-byte
        /// elements where no later step applies.
        Tile32 = "tile32" => TransposeShape {
            kernel: "transpose_tile32",
            block: Block::Threads(TILE32, TILE32_ROWS),
            tile: Tile::Elements(TILE32, TILE32),
            staging: Staging::Tile(Padding::OneElement),
            element_bytes: ANY_SIZE,
            row_alignment: 1,
        },
        /// Step 5, 8-bit only: moves 4-byte words instead of bytes. Each
        /// thread loads a 4×4 byte block as four words (one per row),
        /// transposes it in registers with four `prmt` byte permutes per
        /// pair, and stores four words into a 64×64-byte tile; the tile is
        /// written out as words. One-byte accesses use a quarter of each
        /// memory transaction's width; words use all of it. Needs 4-byte
        /// aligned rows (base and pitch). What `transpose_into` uses for
        /// bytes in such rows that are not 16-byte aligned (step 6 takes
        /// those).
        Words4x4 = "words_4x4" => TransposeShape {
            kernel: "transpose_words_4x4",
            block: Block::Threads(LESSON_TILE, LESSON_TILE),
            tile: Tile::Elements(WORDS_TILE, WORDS_TILE),
            staging: Staging::Words,
            element_bytes: &[1],
            row_alignment: 4,
        },
        /// Step 6: `Tile32` (step 4) with 16-byte global accesses on both
        /// sides and four times the bytes in flight, for every element size.
        /// A tile of 64 source rows of 256 bytes (64×64 4-byte elements, 32
        /// 8-byte or 128 2-byte ones per row), 256 threads: each loads four
        /// 16-byte chunks of source rows with read-only loads
        /// (`ld.global.nc.v4`), all issued before the barrier, and stores
        /// them as they came into the
        /// shared tile (`st.shared.v4`, no register moves); after the
        /// barrier each gathers four destination chunks, element by element
        /// down a column of the tile, into the registers of one
        /// `st.global.v4` each. `Tile32` keeps 16 bytes per thread in
        /// flight, too few to cover DRAM latency even with the 2048 threads
        /// an SM holds; this keeps 64, in 32 registers (so 8 blocks of 256
        /// still fit an SM), with a quarter of the global memory
        /// instructions per byte and, for 4-byte elements, a quarter of the
        /// blocks. The tile is not padded (a padded row would break the
        /// chunks' 16-byte alignment) but swizzled: a chunk's column is
        /// XORed with its row's index in `b`-row groups (`vector_slot`), so
        /// the 16-byte stores along a row and the gathering loads down the
        /// columns (`vector_store_at`) are free of bank conflicts. Tiles
        /// that cross the matrix's edge, and matrices whose first element or
        /// pitch is not 16-byte aligned, take a checked path of element
        /// accesses through the same tile.
        ///
        /// Bytes: a 16-byte chunk holds 16 elements, so the tile is 128
        /// source rows (`vector_rows`), for destination row segments of
        /// 128 bytes (eight chunks), as for the wider elements; its rows
        /// are 256 bytes as theirs, 32 KiB for 512 threads, still four
        /// chunks per thread each way. (Rows of 128 bytes, 16 KiB for 256
        /// threads, read each source row in pieces half as long: step 7
        /// 38.2 against 37.8 µs at 8192² on an H200, three interleaved
        /// rounds of the two builds.) Loads and the swizzled shared tile
        /// are the same; the gather is not element by
        /// element but by 4-byte words: a thread owns one chunk column of
        /// four consecutive destination rows, reads one word (four
        /// neighbouring source columns) from each of 16 source rows, 256
        /// bytes apart in shared memory, and turns each four of them into
        /// one word of all four chunks with a 4×4 byte transpose of eight
        /// `prmt`s (as in `Words4x4`): 16 shared loads and 32 byte permutes
        /// per 64 bytes, against 64 byte loads and their merging element by
        /// element. The swizzle puts the eight source rows a warp's lanes
        /// read at once in eight distinct chunks, and the four lanes of each
        /// read the chunk's four words: every bank once
        /// (`vector_byte_word`).
        ///
        /// Measured at 8192² (one run per GPU): `f32` 151.7 → 140.0 µs on
        /// an H200 (1.02 × cuBLAS `Sgeam`), 193.4 → 191.4 µs on an H100
        /// (0.99 ×); bytes 41.7 → 38.7 µs on the H200 against `Words4x4`,
        /// the same 51.6 µs on the H100.
        VectorTile = "vector_tile"
            => vector_shape("transpose_vector_tile", VECTOR_ROW_BYTES, ANY_SIZE),
        /// Step 7: step 6 with the blocks taking the tiles column by column
        /// (`column_tile`): the launch order runs down a whole column of
        /// tiles before the next. The blocks resident at once (about a
        /// thousand on an H100 or H200) then write whole destination rows
        /// one after another, a contiguous run of some 16 MiB for 8192²
        /// `f32`, where in row order they wrote a 256-byte piece of every
        /// destination row; their reads become the short pieces instead
        /// (a tile's rows, 256 bytes each, 32 KiB apart). DRAM takes the
        /// long write runs better: 8192², same runs, A/B of the two
        /// orders, µs: `f32` 191.8 → 188.8 on an H100 and 139.0 → 134.3 on
        /// an H200, bytes 52.0 → 51.7 and 38.8 → 38.2. (Bands of 16 tile
        /// rows taken column by column, which this step was first, bought
        /// nothing: 192.3 and 139.6 µs.) The grid is step 6's; each block
        /// derives its tile from its place in the launch order. What
        /// `transpose_into` uses for 16-byte aligned rows of elements wider
        /// than a byte.
        VectorColumns = "vector_columns"
            => vector_shape("transpose_vector_columns", VECTOR_ROW_BYTES, ANY_SIZE),
        /// Step 8: step 7 with each block, once its own loads are on their
        /// way, asking L2 for the tile one block per SM further on in the
        /// column order (`cp.async.bulk.prefetch.L2`, one 256-byte source
        /// row per thread of its first `vector_rows`; the SM count read
        /// on the device, `%nsmid`). The block that takes that tile starts
        /// a fraction of a block's time later and finds its rows already on
        /// their way from DRAM, so the DRAM queues stay full while the
        /// blocks resident at once sit at their barriers or store. Three
        /// quarters of the distance gain as much or less, one and a half or
        /// two times lose (8192² bytes on an H200, µs: 37.7 at one block
        /// per SM, 37.6 to 37.9 at three quarters, 38.4 to 38.8 at one and
        /// a half, 39.5 to 39.7 at two, against step 7's 38.1). In the
        /// reports, 8192²: bytes 37.8 → 37.4 µs on an H200 and 50.9 → 51.0
        /// on an H100; `f32` 134.1 → 133.5 and 189.1 → 190.0. Wider
        /// elements keep step 7, bytes take step 9. sm_90a only: elsewhere
        /// it is step 7.
        VectorAhead = "vector_ahead"
            => vector_shape("transpose_vector_ahead", VECTOR_ROW_BYTES, ANY_SIZE),
        /// Step 9, 8-bit only: step 8 with square tiles of 128 rows × 128
        /// bytes (`SQUARE_ROW_BYTES`), 16 KiB, in the same 512 threads:
        /// each loads two chunks, and the first 256 gather and store four
        /// destination chunks each as in step 8 (the others end at the
        /// barrier); its first 128 threads ask L2 for the 128-byte rows of
        /// the tile one block per SM ahead. A block lives half as long
        /// (the stamps of a CUDA C++ model: 3.8 against 7.4 µs), so the
        /// SMs idle less while the last blocks end (1.1 against 1.6 µs on
        /// average, H200). Without the look-ahead the square tile gained
        /// 0.8% on an H200 and lost as much on an H100 (its source rows
        /// read in pieces of 128 bytes, not 256); with it, 8192², three
        /// interleaved rounds of two builds (µs): 36.90 to 36.96 on an
        /// H200 against step 8's 37.15 to 37.70 (0.86 of the copy
        /// bandwidth, where step 8 read 0.84 to 0.85), and 50.82 to 51.07
        /// on an H100 against 51.30 to 51.46 (step 7: 50.91 to 51.26).
        /// What `transpose_into` uses for 16-byte aligned rows of bytes.
        /// sm_90a only: elsewhere it is the square tile in step 7's order.
        SquareAhead = "square_ahead"
            => vector_shape("transpose_square_ahead", SQUARE_ROW_BYTES, &[1]),
    }
    default = SquareAhead;
}

impl TransposeVariant {
    /// Whether the variant exists for elements of `size` bytes.
    pub const fn supports(self, size: usize) -> bool {
        let sizes = self.shape().element_bytes;
        let mut i = 0;
        while i < sizes.len() {
            if sizes[i] == size {
                return true;
            }
            i += 1;
        }
        false
    }

    /// Threads per block, `(x, y)`, for elements of `size` bytes.
    pub const fn block(self, size: u32) -> (u32, u32) {
        match self.shape().block {
            Block::Threads(x, y) => (x, y),
            Block::Vector => (vector_threads(size as usize) as u32, 1),
        }
    }

    /// Source elements of `size` bytes one block covers, `(columns, rows)`.
    pub const fn tile(self, size: u32) -> (u32, u32) {
        match self.shape().tile {
            Tile::Elements(columns, rows) => (columns, rows),
            Tile::Vector(row_bytes) => (
                vector_columns(size as usize, row_bytes as usize) as u32,
                vector_rows(size as usize) as u32,
            ),
        }
    }

    /// Dynamic shared memory for elements of `size` bytes.
    pub const fn shared_bytes(self, size: u32) -> u32 {
        let (columns, rows) = self.tile(size);
        match self.shape().staging {
            Staging::None => 0,
            Staging::Tile(padding) => {
                let pad = match padding {
                    Padding::None => 0,
                    Padding::OneBank => pad_elements(size),
                    Padding::OneElement => 1,
                };
                rows * (columns + pad) * size
            }
            // 64 destination rows of 16 words, padded by one word.
            Staging::Words => WORDS_TILE * (WORDS_TILE / 4 + 1) * 4,
            Staging::Swizzled => rows * columns * size,
        }
    }

    /// The alignment, in bytes, of the first element and the pitch of both
    /// matrices that the step's fastest path needs (1: none).
    pub const fn row_alignment(self) -> u32 {
        self.shape().row_alignment
    }
}

/// Elements of padding that shift a tile row by one bank (at least one).
#[doc(hidden)]
pub const fn pad_elements(size: u32) -> u32 {
    if size >= BANK_BYTES {
        1
    } else {
        BANK_BYTES / size
    }
}

kernels! {
    /// Every transpose entry point.
    pub const KERNELS = {
        (src: *const T, src_pitch: usize, dst: *mut T, dst_pitch: usize, width: u32, height: u32) {
            fn transpose_naive<T in u8, u16, u32, u64> = lesson::naive;
            fn transpose_shared_tile<T in u8, u16, u32, u64>
                = lesson::tiled::<T, { LESSON_TILE as usize }, { LESSON_TILE as usize }, 0>;
            fn transpose_padded_tile<T in u8, u16, u32, u64>
                = lesson::tiled::<T, { LESSON_TILE as usize }, { LESSON_TILE as usize },
                    { pad_elements(size_of::<T>() as u32) as usize }>;
            fn transpose_tile32<T in u8, u16, u32, u64>
                = lesson::tiled::<T, { TILE32 as usize }, { TILE32_ROWS as usize }, 1>;
            fn transpose_words_4x4<T in u8> = words::kernel;
            fn transpose_vector_tile<T in u8, u16, u32, u64>
                = vector::kernel::<T, false, false, { VECTOR_ROW_BYTES as usize }>;
            fn transpose_vector_columns<T in u8, u16, u32, u64>
                = vector::kernel::<T, true, false, { VECTOR_ROW_BYTES as usize }>;
            fn transpose_vector_ahead<T in u8, u16, u32, u64>
                = vector::kernel::<T, true, true, { VECTOR_ROW_BYTES as usize }>;
            fn transpose_square_ahead<T in u8>
                = vector::kernel::<T, true, true, { SQUARE_ROW_BYTES as usize }>;
        }
    }
}

/// The arguments every transpose kernel takes.
pub type TransposeArgs<T> = transpose_naive::Args<T>;

impl TransposeVariant {
    /// The typed entry of this step for elements of type `T` (a bit type of
    /// the element's size); `None` where the step does not move `T`.
    #[doc(hidden)]
    pub fn entry<T: crate::KernelType>(self) -> Option<crate::Entry<TransposeArgs<T>>> {
        if !self.supports(size_of::<T>()) {
            return None;
        }
        Some(match self {
            TransposeVariant::Naive => transpose_naive::entry::<T>(),
            TransposeVariant::SharedTile => transpose_shared_tile::entry::<T>(),
            TransposeVariant::PaddedTile => transpose_padded_tile::entry::<T>(),
            TransposeVariant::Tile32 => transpose_tile32::entry::<T>(),
            TransposeVariant::Words4x4 => return transpose_words_4x4::try_entry::<T>(),
            TransposeVariant::VectorTile => return transpose_vector_tile::try_entry::<T>(),
            TransposeVariant::VectorColumns => return transpose_vector_columns::try_entry::<T>(),
            TransposeVariant::VectorAhead => return transpose_vector_ahead::try_entry::<T>(),
            TransposeVariant::SquareAhead => return transpose_square_ahead::try_entry::<T>(),
        })
    }
}

/// This family's entries compiled for a number of resident blocks per SM
/// (gathered in [`crate::LAUNCH_BOUNDS`], whose doc says how they are used).
pub const LAUNCH_BOUNDS: &[crate::kernel::LaunchBounds] = &[
    // The transpose's vector steps are built around 2048 threads per SM (8
    // blocks of 256, 4 of 512 for bytes; 64 bytes in flight per thread):
    // 32 registers.
    // Left to itself ptxas drifts above that with small changes of the
    // PTX (sm_90: 34 for bytes, 44 and 56 for the 4- and 2-byte entries of
    // step 7 when it took bands of tile rows, which is 6, 5 and 4 blocks);
    // held to 8 blocks, none spills. Kept so that the shape the steps
    // were designed for survives changes of the PTX; it costs nothing.
    // H200 2026-11: bytes 38.8 µs capped or not, `f32` 139.0 (docs/notes/transpose.md)
    vector_bounds("transpose_vector_tile_u8", 1),
    vector_bounds("transpose_vector_tile_u16", 2),
    vector_bounds("transpose_vector_tile_u32", 4),
    vector_bounds("transpose_vector_tile_u64", 8),
    vector_bounds("transpose_vector_columns_u8", 1),
    vector_bounds("transpose_vector_columns_u16", 2),
    vector_bounds("transpose_vector_columns_u32", 4),
    vector_bounds("transpose_vector_columns_u64", 8),
    vector_bounds("transpose_vector_ahead_u8", 1),
    vector_bounds("transpose_vector_ahead_u16", 2),
    vector_bounds("transpose_vector_ahead_u32", 4),
    vector_bounds("transpose_vector_ahead_u64", 8),
    vector_bounds("transpose_square_ahead_u8", 1),
];

/// A transpose vector step's bounds for elements of `size` bytes:
/// `crate::transpose::vector_threads` threads,
/// `crate::transpose::VECTOR_SM_THREADS` per SM.
const fn vector_bounds(entry: &'static str, size: usize) -> crate::kernel::LaunchBounds {
    let threads = crate::transpose::vector_threads(size) as u32;
    crate::kernel::LaunchBounds {
        entry,
        threads,
        blocks_per_sm: crate::transpose::VECTOR_SM_THREADS / threads,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padding_shifts_a_row_by_one_bank() {
        for size in [1, 2, 4, 8] {
            assert_eq!(pad_elements(size) * size % BANK_BYTES, 0);
            assert!(pad_elements(size) * size >= BANK_BYTES);
        }
    }
}
