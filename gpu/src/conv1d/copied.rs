//! The tile a tensor-map copy brings into shared memory, which steps 9 and
//! 10 share: how a launch's tiles lie against the map ([`TmaGeometry`]),
//! where each tile element lands in the copied part (`tma_offset`), and
//! on the device the warpgroup's view of its copied tile (`CopiedTile`).

use super::wgmma::{WGMMA_ROWS, swizzle_32};

/// Elements of a 32-byte sector: the copies start on one.
pub const TMA_ALIGN: usize = 8;

/// How the tiles of a launch lie against the tensor map, the same for
/// every row (the host uses the map only where the rows' pitch is a
/// multiple of [`TMA_ALIGN`] elements).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TmaGeometry {
    /// Elements by which every tile's window moves down: tile element `e`
    /// is row element `start + e − r − shift`.
    pub shift: usize,
    /// The row element at the map's line 0, on 32 bytes in memory.
    pub origin: usize,
    /// Whole lines of 64 elements of the row from `origin`: the map's
    /// extent. The row's elements before `origin` or from `origin + 64 ·
    /// lines` on are the threads' to write.
    pub lines: usize,
}

/// The geometry for rows whose element 0 is word `word0` of memory (its
/// address / 4), `n` elements long, and a mask of `taps`; `None` where a
/// row holds no whole line after its origin (rows of fewer than 64 to 127
/// elements), which step 9 leaves to step 8.
///
/// With `r = taps / 2`, a tile at `start` (a multiple of 64) begins at row
/// element `start − r − shift`, which must be `origin` plus whole lines:
/// `shift ≡ word0 − r` and `origin ≡ −(r + shift)` modulo [`TMA_ALIGN`]
/// and 64, so that `word0 + origin` is a multiple of [`TMA_ALIGN`].
#[doc(hidden)]
pub const fn tma_geometry(word0: usize, taps: usize, n: usize) -> Option<TmaGeometry> {
    let r = taps / 2;
    let shift = (word0 % TMA_ALIGN + TMA_ALIGN - r % TMA_ALIGN) % TMA_ALIGN;
    let origin = (WGMMA_ROWS - (r + shift) % WGMMA_ROWS) % WGMMA_ROWS;
    if n < origin + WGMMA_ROWS {
        return None;
    }
    Some(TmaGeometry {
        shift,
        origin,
        lines: (n - origin) / WGMMA_ROWS,
    })
}

impl TmaGeometry {
    /// The map's line at which the tile at `start` begins (negative for a
    /// tile that begins before the origin), for a mask of radius `r`.
    pub const fn first_line(self, start: usize, r: usize) -> i64 {
        (start as i64 - (r + self.shift + self.origin) as i64) / WGMMA_ROWS as i64
    }

    /// Whether the copy brings row element `p`: inside the map's lines.
    pub const fn copied(self, p: i64) -> bool {
        p >= self.origin as i64 && p < (self.origin + WGMMA_ROWS * self.lines) as i64
    }
}

/// Byte offset of tile element `e` (`64·line + 8·g + a`) in a staged part
/// of `lines` lines that starts on 256 bytes of the shared window: group
/// `g` at `32·lines·g`, its line `line` at `32·line`, the value at `4·a`,
/// and the 32-byte swizzle on top, which exchanges the two 16-byte halves
/// of the 32-byte rows whose address has bit 7 set. A quad of elements
/// (`e` a multiple of 4) stays 16 whole bytes.
#[doc(hidden)]
pub const fn tma_offset(lines: usize, e: usize) -> usize {
    let (line, u) = (e / WGMMA_ROWS, e % WGMMA_ROWS);
    swizzle_32(((u / 8) * 32 * lines + 32 * line + 4 * (u % 8)) as u32) as usize
}

/// A warpgroup's tile as its copy brought it, which steps 9 and 10's
/// splits read: the copied part (of `lines` lines), the row `x` of `n`
/// elements it came from, the row element `first` of tile element 0, the
/// `len` tile elements the products read and the map's geometry.
#[cfg(all(target_arch = "nvptx64", target_feature = "sm_90a"))]
#[derive(Clone, Copy)]
pub(crate) struct CopiedTile {
    pub copied: *mut u8,
    pub lines: usize,
    pub x: *const f32,
    pub n: usize,
    pub first: i64,
    pub len: usize,
    pub geometry: TmaGeometry,
}

#[cfg(all(target_arch = "nvptx64", target_feature = "sm_90a"))]
impl CopiedTile {
    /// Whether the copy brought every element the products read: all
    /// tiles but a row's first and last.
    #[inline(always)]
    pub fn whole(&self) -> bool {
        self.geometry.copied(self.first) && self.geometry.copied(self.first + self.len as i64 - 1)
    }

    /// Quad `q` (tile elements `4q ..`), where a split takes the tile
    /// quad by quad: its offset in the copied part (`tma_offset`) and
    /// its values, as copied, or, for a quad the copy did not bring
    /// (before the map's origin or after its last line), read from the
    /// row, zeros outside it, and written into the copied part. A quad is
    /// copied whole or not at all: the map's lines begin on 32 bytes.
    ///
    /// # Safety
    /// As step 9's split of the small part (`tma::split_small`): `copied`
    /// valid for the part, `x` for the row's `n` elements; the quad inside
    /// the tile.
    #[inline(always)]
    pub unsafe fn quad(&self, q: usize) -> (usize, [f32; 4]) {
        use crate::prim::*;
        let at = tma_offset(self.lines, 4 * q);
        let p = self.first + 4 * q as i64;
        if self.geometry.copied(p) {
            // SAFETY: the caller's contract: the quad lies in the copy.
            return (at, unsafe { load4(self.copied.add(at).cast()) });
        }
        let v = core::array::from_fn(|i| {
            let e = p + i as i64;
            if e >= 0 && (e as usize) < self.n {
                // SAFETY: inside the row.
                unsafe { *self.x.add(e as usize) }
            } else {
                0.0
            }
        });
        // SAFETY: the quad's place in the copied part.
        unsafe { store4(self.copied.add(at).cast(), v) };
        (at, v)
    }
}
