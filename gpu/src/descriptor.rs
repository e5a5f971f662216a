//! `wgmma`'s shared-memory matrix descriptors: how the tensor cores find an
//! operand in shared memory. Pure arithmetic on addresses, compiled on
//! every target, so that the host tests check their fields; the families
//! that stage operands for `wgmma` (SGEMM's steps 7 and 8, conv1d's steps 8
//! and 9) build theirs here.

/// A descriptor without swizzling: the matrix's shared address, the byte
/// offset between core matrices adjacent along `k` (`leading`) and between
/// those adjacent along the rows or columns (`stride`), each stored divided
/// by 16 in a 14-bit field (bits 0, 16 and 32); swizzle mode 0 (bits 62 and
/// 63) and base offset 0.
#[doc(hidden)]
pub const fn unswizzled(address: u32, leading: u32, stride: u32) -> u64 {
    const fn field(bytes: u32) -> u64 {
        ((bytes >> 4) & 0x3fff) as u64
    }
    field(address) | (field(leading) << 16) | (field(stride) << 32)
}

/// A descriptor of a `K`-major operand in the 32-byte swizzle (mode 3 in
/// bits 62 and 63): rows of 32 bytes (8 TF32 values of `k`), groups of 8
/// rows `stride` bytes apart, each row's two 16-byte halves exchanged where
/// bit 7 of their shared address is set (as a tensor copy with
/// `CU_TENSOR_MAP_SWIZZLE_32B` writes them). The leading offset is unused
/// for this layout and set to 16 bytes.
#[doc(hidden)]
pub const fn swizzled_32(address: u32, stride: u32) -> u64 {
    unswizzled(address, 16, stride) | (3 << 62)
}

/// A descriptor of a `K`-major operand in the 128-byte swizzle (mode 1 in
/// bits 62 and 63): rows of 128 bytes (32 TF32 values of `k`), groups of
/// 8 rows 1024 bytes apart (the stride offset), each row's eight 16-byte
/// units exchanged by the XOR of their index with the row's index within
/// its group (bits 4 to 6 of the shared address with bits 7 to 9, as a
/// tensor copy with `CU_TENSOR_MAP_SWIZZLE_128B` writes them). The tile
/// starts on 1024 bytes (base offset 0); a product's slice of `k` further
/// along the rows starts `4 · k` bytes on. The leading offset is unused
/// for this layout and set to 16 bytes.
#[doc(hidden)]
pub const fn swizzled_128(address: u32) -> u64 {
    unswizzled(address, 16, 1024) | (1 << 62)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields() {
        let d = unswizzled(0x1_2340, 128, 256);
        assert_eq!(d & 0x3fff, 0x1234);
        assert_eq!((d >> 16) & 0x3fff, 8);
        assert_eq!((d >> 32) & 0x3fff, 16);
        assert_eq!(d >> 62, 0);
        let s = swizzled_32(0x1_2340, 256);
        assert_eq!(s & !(3 << 62), unswizzled(0x1_2340, 16, 256));
        assert_eq!(s >> 62, 3);
        let w = swizzled_128(0x1_2400);
        assert_eq!(w & !(3 << 62), unswizzled(0x1_2400, 16, 1024));
        assert_eq!(w >> 62, 1);
    }
}
