//! Step 5, bytes only: 4×4 blocks of bytes moved as 4-byte words and
//! transposed in registers with byte permutes (`prmt`).

#[cfg(target_arch = "nvptx64")]
use crate::prim::*;

/// Tile side, in bytes, of [`TransposeVariant::Words4x4`](super::TransposeVariant::Words4x4): 64×64 bytes,
/// 16×16 threads each moving one 4×4 byte block.
#[doc(hidden)]
pub const WORDS_TILE: u32 = 64;

/// `prmt`: byte `i` of the result is byte `selector` nibble `i` of `{b, a}`.
/// On the GPU one instruction; elsewhere the same function in plain Rust, so
/// host tests check the very permutation the kernel uses.
#[inline(always)]
#[doc(hidden)]
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
#[doc(hidden)]
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

/// Step 5 (bytes as words). Also needs `src`, `dst`, `src_pitch` and
/// `dst_pitch` to be multiples of 4; the block is 16×16 threads over a
/// 64×64-byte tile.
#[cfg(target_arch = "nvptx64")]
pub(super) unsafe fn kernel(
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
}
