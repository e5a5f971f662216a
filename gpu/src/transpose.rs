//! Matrix transpose: lesson 003's ladder (naive, shared-memory tile, padded
//! tile) and the fastest versions for 4-byte and 1-byte elements.
//!
//! All kernels move bits, so one instantiation serves every element type of
//! its size: `u8` (1 byte), `u16` (2), `u32` (4: `f32`, `i32`), `u64` (8).
//! The source is `height` rows of `width` elements, `src_pitch` elements
//! apart; the destination `width` rows of `height` elements, `dst_pitch`
//! apart. Any `width` and `height` work; partial tiles are masked.

/// Threads per block side and tile side of the lessons' steps (1-3).
pub const LESSON_TILE: u32 = 16;
/// Tile side of [`TransposeVariant::Tile32`] (NVIDIA's "coalesced transpose").
pub const TILE32: u32 = 32;
/// Thread rows of [`TransposeVariant::Tile32`]: 32×8 threads, 4 rows each.
pub const TILE32_ROWS: u32 = 8;
/// Tile side, in bytes, of [`TransposeVariant::Words4x4`]: 64×64 bytes,
/// 16×16 threads each moving one 4×4 byte block.
pub const WORDS_TILE: u32 = 64;
/// Bytes per bank of shared memory: padding one row by this much shifts each
/// row of a tile to the next bank.
pub const BANK_BYTES: u32 = 4;

/// How a transpose step stages its tile in shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Staging {
    /// No shared memory.
    None,
    /// A tile of elements, each row followed by this padding.
    Tile(Padding),
    /// A 64×64-byte tile of 4-byte words, rows padded by one word.
    Words,
}

/// Padding after each row of a staged tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Padding {
    /// None: column reads conflict on banks.
    None,
    /// One bank (4 bytes; [`pad_elements`]).
    OneBank,
    /// One element.
    OneElement,
}

/// How a transpose step is launched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TransposeShape {
    /// The kernel (base name; the type suffix is `u8`, `u16`, `u32` or `u64`).
    pub kernel: &'static str,
    /// Threads per block, `(x, y)`.
    pub block: (u32, u32),
    /// Source elements one block covers, `(columns, rows)`.
    pub tile: (u32, u32),
    /// Its shared-memory tile.
    pub staging: Staging,
    /// The element sizes, in bytes, it moves.
    pub element_bytes: &'static [usize],
}

const ANY_SIZE: &[usize] = &[1, 2, 4, 8];

const fn lesson(kernel: &'static str, staging: Staging) -> TransposeShape {
    TransposeShape {
        kernel,
        block: (LESSON_TILE, LESSON_TILE),
        tile: (LESSON_TILE, LESSON_TILE),
        staging,
        element_bytes: ANY_SIZE,
    }
}

ladder! {
    /// The transpose ladder.
    pub enum TransposeVariant("transpose"): TransposeShape {
        /// Step 1 (003): one thread per element, `dst[x][y] = src[y][x]`.
        /// Reads are coalesced along a row; writes go down a column, one
        /// element per row of the destination: every warp store touches 32
        /// rows.
        Naive = "naive" => lesson("transpose_naive", Staging::None),
        /// Step 2 (003): a 16×16 block stages a 16×16 tile in shared memory;
        /// it reads rows of the source and writes rows of the destination, so
        /// both sides are coalesced. Reading the tile by columns makes the
        /// lanes of a warp hit the same shared-memory banks.
        SharedTile = "shared_tile" => lesson("transpose_shared_tile", Staging::Tile(Padding::None)),
        /// Step 3 (003): the same tile with each row padded by one bank (4
        /// bytes), so a column of the tile falls in distinct banks. For 8-bit
        /// data the lesson pads by 4 bytes, not 1: banks are 4 bytes wide, and
        /// a 1-byte pad would leave four consecutive rows' bytes in one bank
        /// word (`(17 * r) / 4` repeats banks every few rows), still
        /// conflicting.
        PaddedTile = "padded_tile"
            => lesson("transpose_padded_tile", Staging::Tile(Padding::OneBank)),
        /// Step 4 (NVIDIA's coalesced transpose): a 32×32 tile padded by one
        /// element, 32×8 threads each moving 4 rows: fewer blocks, four loads
        /// in flight per thread before the barrier, full 128-byte lines for
        /// 4-byte elements. What `transpose_into` uses for 2-, 4- and 8-byte
        /// elements.
        Tile32 = "tile32" => TransposeShape {
            kernel: "transpose_tile32",
            block: (TILE32, TILE32_ROWS),
            tile: (TILE32, TILE32),
            staging: Staging::Tile(Padding::OneElement),
            element_bytes: ANY_SIZE,
        },
        /// Step 5, 8-bit only: moves 4-byte words instead of bytes. Each
        /// thread loads a 4×4 byte block as four words (one per row),
        /// transposes it in registers with four `prmt` byte permutes per
        /// pair, and stores four words into a 64×64-byte tile; the tile is
        /// written out as words. One-byte accesses use a quarter of each
        /// memory transaction's width; words use all of it. Needs 4-byte
        /// aligned rows (base and pitch). What `transpose_into` uses for
        /// bytes in such rows.
        Words4x4 = "words_4x4" => TransposeShape {
            kernel: "transpose_words_4x4",
            block: (LESSON_TILE, LESSON_TILE),
            tile: (WORDS_TILE, WORDS_TILE),
            staging: Staging::Words,
            element_bytes: &[1],
        },
    }
    fastest = Tile32;
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

    /// Threads per block, `(x, y)`.
    pub const fn block(self) -> (u32, u32) {
        self.shape().block
    }

    /// Source elements one block covers, `(columns, rows)`.
    pub const fn tile(self) -> (u32, u32) {
        self.shape().tile
    }

    /// Dynamic shared memory for elements of `size` bytes.
    pub const fn shared_bytes(self, size: u32) -> u32 {
        let (columns, rows) = self.tile();
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
        }
    }
}

/// Elements of padding that shift a tile row by one bank (at least one).
pub const fn pad_elements(size: u32) -> u32 {
    if size >= BANK_BYTES {
        1
    } else {
        BANK_BYTES / size
    }
}

/// `prmt`: byte `i` of the result is byte `selector` nibble `i` of `{b, a}`.
/// On the GPU one instruction; elsewhere the same function in plain Rust, so
/// host tests check the very permutation the kernel uses.
#[inline(always)]
pub fn byte_perm(a: u32, b: u32, selector: u32) -> u32 {
    #[cfg(target_arch = "nvptx64")]
    {
        crate::prim::byte_perm(a, b, selector)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let bytes = ((b as u64) << 32) | a as u64;
        (0..4).fold(0, |acc, i| {
            let pick = (selector >> (4 * i)) & 7;
            acc | ((((bytes >> (8 * pick)) & 0xff) as u32) << (8 * i))
        })
    }
}

/// Transposes a 4×4 block of bytes held as four little-endian words (word
/// `k` is row `k`, its byte `j` column `j`): returns the four columns as
/// words. Eight byte permutes: interleave pairs of rows, then pairs of pairs.
#[inline(always)]
pub fn transpose_4x4_bytes(w: [u32; 4]) -> [u32; 4] {
    let lo01 = byte_perm(w[0], w[1], 0x5140); // r0c0 r1c0 r0c1 r1c1
    let hi01 = byte_perm(w[0], w[1], 0x7362); // r0c2 r1c2 r0c3 r1c3
    let lo23 = byte_perm(w[2], w[3], 0x5140);
    let hi23 = byte_perm(w[2], w[3], 0x7362);
    [
        byte_perm(lo01, lo23, 0x5410),
        byte_perm(lo01, lo23, 0x7632),
        byte_perm(hi01, hi23, 0x5410),
        byte_perm(hi01, hi23, 0x7632),
    ]
}

#[cfg(target_arch = "nvptx64")]
#[allow(
    clippy::needless_range_loop,
    reason = "index loops over constant ranges unroll fully and keep the arrays in registers"
)]
mod device {
    //! Common contract: `src` valid for reads of `height` rows of `width`
    //! elements `src_pitch` apart, `dst` for writes of `width` rows of
    //! `height` elements `dst_pitch` apart, not overlapping `src`; a 2D grid
    //! covering the source in tiles as the variant's table says, with its
    //! block shape and shared memory.
    use super::*;
    use crate::prim::*;

    /// Step 1.
    pub unsafe fn naive<T: Copy>(
        src: *const T,
        src_pitch: usize,
        dst: *mut T,
        dst_pitch: usize,
        width: u32,
        height: u32,
    ) {
        let (x, y) = global_index_xy();
        if x < width as usize && y < height as usize {
            *dst.add(x * dst_pitch + y) = *src.add(y * src_pitch + x);
        }
    }

    /// Steps 2-4: a `TILE`×`TILE` tile, rows padded by `PAD` elements,
    /// `TILE`×`ROWS` threads each moving `TILE / ROWS` rows.
    pub unsafe fn tiled<T: Copy, const TILE: usize, const ROWS: usize, const PAD: usize>(
        src: *const T,
        src_pitch: usize,
        dst: *mut T,
        dst_pitch: usize,
        width: u32,
        height: u32,
    ) {
        let (width, height) = (width as usize, height as usize);
        let tile = dynamic_shared::<T>();
        let stride = TILE + PAD;
        let (tx, ty) = (thread_idx_x() as usize, thread_idx_y() as usize);
        let (bx, by) = (block_idx_x() as usize * TILE, block_idx_y() as usize * TILE);

        // Read source rows: consecutive threads, consecutive columns.
        let x = bx + tx;
        let mut k = 0;
        while k < TILE {
            let y = by + ty + k;
            if x < width && y < height {
                *tile.add((ty + k) * stride + tx) = *src.add(y * src_pitch + x);
            }
            k += ROWS;
        }
        sync_threads();
        // Write destination rows (source columns), reading the tile down a column.
        let x = by + tx;
        let mut k = 0;
        while k < TILE {
            let y = bx + ty + k;
            if x < height && y < width {
                *dst.add(y * dst_pitch + x) = *tile.add(tx * stride + ty + k);
            }
            k += ROWS;
        }
    }

    /// Step 5 (bytes as words). Also needs `src`, `dst`, `src_pitch` and
    /// `dst_pitch` to be multiples of 4; the block is 16×16 threads over a
    /// 64×64-byte tile.
    pub unsafe fn words_4x4(
        src: *const u8,
        src_pitch: usize,
        dst: *mut u8,
        dst_pitch: usize,
        width: u32,
        height: u32,
    ) {
        const WORDS: usize = (WORDS_TILE / 4) as usize;
        const STRIDE: usize = WORDS + 1;
        let (width, height) = (width as usize, height as usize);
        let tile = dynamic_shared::<u32>();
        let (tx, ty) = (thread_idx_x() as usize, thread_idx_y() as usize);
        let bx = block_idx_x() as usize * WORDS_TILE as usize;
        let by = block_idx_y() as usize * WORDS_TILE as usize;

        // This thread's 4×4 block: source rows y0..y0+4, bytes x0..x0+4.
        let (x0, y0) = (bx + 4 * tx, by + 4 * ty);
        let mut rows = [0u32; 4];
        if x0 + 3 < width && y0 + 3 < height {
            for k in 0..4 {
                rows[k] = *src.add((y0 + k) * src_pitch + x0).cast::<u32>();
            }
        } else {
            for k in 0..4 {
                for j in 0..4 {
                    if y0 + k < height && x0 + j < width {
                        rows[k] |= (*src.add((y0 + k) * src_pitch + x0 + j) as u32) << (8 * j);
                    }
                }
            }
        }
        // Column j of the block is word `ty` of destination tile row 4·tx + j.
        let columns = transpose_4x4_bytes(rows);
        for j in 0..4 {
            *tile.add((4 * tx + j) * STRIDE + ty) = columns[j];
        }
        sync_threads();
        // Write destination rows: 16 threads per 64-byte row segment.
        for i in 0..4 {
            let r = ty + 16 * i;
            let (row, col) = (bx + r, by + 4 * tx);
            if row < width {
                let word = *tile.add(r * STRIDE + tx);
                let out = dst.add(row * dst_pitch + col);
                if col + 3 < height {
                    *out.cast::<u32>() = word;
                } else {
                    for k in 0..4 {
                        if col + k < height {
                            *out.add(k) = (word >> (8 * k)) as u8;
                        }
                    }
                }
            }
        }
    }
}

kernels! {
    /// Every transpose entry point.
    pub const KERNELS = {
        fn transpose_naive<T in u8, u16, u32, u64>(
            src: *const T, src_pitch: usize, dst: *mut T, dst_pitch: usize, width: u32, height: u32)
            => device::naive(src, src_pitch, dst, dst_pitch, width, height);
        fn transpose_shared_tile<T in u8, u16, u32, u64>(
            src: *const T, src_pitch: usize, dst: *mut T, dst_pitch: usize, width: u32, height: u32)
            shares transpose_naive
            => device::tiled::<T, { LESSON_TILE as usize }, { LESSON_TILE as usize }, 0>(
                src, src_pitch, dst, dst_pitch, width, height);
        fn transpose_padded_tile<T in u8, u16, u32, u64>(
            src: *const T, src_pitch: usize, dst: *mut T, dst_pitch: usize, width: u32, height: u32)
            shares transpose_naive
            => device::tiled::<T, { LESSON_TILE as usize }, { LESSON_TILE as usize },
                { pad_elements(size_of::<T>() as u32) as usize }>(src, src_pitch, dst, dst_pitch, width, height);
        fn transpose_tile32<T in u8, u16, u32, u64>(
            src: *const T, src_pitch: usize, dst: *mut T, dst_pitch: usize, width: u32, height: u32)
            shares transpose_naive
            => device::tiled::<T, { TILE32 as usize }, { TILE32_ROWS as usize }, 1>(
                src, src_pitch, dst, dst_pitch, width, height);
        fn transpose_words_4x4<T in u8>(
            src: *const T, src_pitch: usize, dst: *mut T, dst_pitch: usize, width: u32, height: u32)
            shares transpose_naive
            => device::words_4x4(src, src_pitch, dst, dst_pitch, width, height);
    }
}

/// The arguments every transpose kernel takes.
pub type TransposeArgs<T> = transpose_naive::Args<T>;

impl TransposeVariant {
    /// The typed entry of this step for elements of type `T` (a bit type of
    /// the element's size); `None` where the step does not move `T`.
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
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_perm_selects_bytes_of_b_a() {
        assert_eq!(byte_perm(0x4433_2211, 0x8877_6655, 0x3210), 0x4433_2211);
        assert_eq!(byte_perm(0x4433_2211, 0x8877_6655, 0x7654), 0x8877_6655);
        assert_eq!(byte_perm(0x4433_2211, 0x8877_6655, 0x5140), 0x6622_5511);
    }

    #[test]
    fn transposes_a_4x4_byte_block() {
        let rows = [0x0302_0100, 0x1312_1110, 0x2322_2120, 0x3332_3130]; // byte = row·16 + column
        assert_eq!(
            transpose_4x4_bytes(rows),
            [0x3020_1000, 0x3121_1101, 0x3222_1202, 0x3323_1303]
        );
    }

    #[test]
    fn padding_shifts_a_row_by_one_bank() {
        for size in [1, 2, 4, 8] {
            assert_eq!(pad_elements(size) * size % BANK_BYTES, 0);
            assert!(pad_elements(size) * size >= BANK_BYTES);
        }
    }
}
