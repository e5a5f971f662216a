//! 2D views of device memory: `height` rows of `width` elements, each row
//! starting `pitch` elements after the previous one.
//!
//! A view is checked when it is made — pitch at least the width, the slice
//! long enough for every row, sizes that fit the kernels' 32-bit dimensions —
//! so the kernels never read or write outside it.

use crate::error::{Error, Result};
use crate::memory::{IntoView, IntoViewMut, Pod, View, ViewMut};

/// A read-only matrix (or 8-bit image) on the device: a view of a
/// [`Buffer`](crate::Buffer) with a shape.
#[derive(Clone, Copy, Debug)]
pub struct Matrix<'a, T: Pod> {
    data: View<'a, T>,
    width: usize,
    height: usize,
    pitch: usize,
}

/// A writable matrix on the device: an exclusive view of a
/// [`Buffer`](crate::Buffer) with a shape.
#[derive(Debug)]
pub struct MatrixMut<'a, T: Pod> {
    data: ViewMut<'a, T>,
    width: usize,
    height: usize,
    pitch: usize,
}

/// Checks a shape against a slice of `len` elements of `element` bytes.
fn check_shape(
    len: usize,
    element: usize,
    width: usize,
    height: usize,
    pitch: usize,
) -> Result<()> {
    if pitch.checked_mul(element).is_none() {
        return Err(Error::InvalidArgument(format!(
            "a row pitch of {pitch} elements of {element} B overflows the address space"
        )));
    }
    if pitch < width {
        return Err(Error::InvalidArgument(format!(
            "a row pitch of {pitch} elements is smaller than the width {width}"
        )));
    }
    if u32::try_from(width).is_err() || u32::try_from(height).is_err() {
        return Err(Error::InvalidArgument(format!(
            "a {width}×{height} matrix: width and height must each be below 2^32"
        )));
    }
    let needed = if width == 0 || height == 0 {
        Some(0)
    } else {
        (height - 1)
            .checked_mul(pitch)
            .and_then(|n| n.checked_add(width))
    };
    match needed {
        Some(needed) if needed <= len => Ok(()),
        Some(needed) => Err(Error::InvalidArgument(format!(
            "a {width}×{height} matrix with a pitch of {pitch} needs {needed} elements, but the slice has {len}"
        ))),
        None => Err(Error::InvalidArgument(format!(
            "a {width}×{height} matrix with a pitch of {pitch} overflows the address space"
        ))),
    }
}

macro_rules! matrix_common {
    ($name:ident, $view:ident, $data:ty, $take:ident) => {
        impl<'a, T: Pod> $name<'a, T> {
            /// A densely packed matrix `width` elements wide and `height`
            /// rows high: the pitch is the width. Width first, as for an
            /// image (`x`, then `y`); an `m × k` operand of a product in
            /// BLAS terms (`m` rows of `k`) is `new(data, k, m)`.
            ///
            /// `data` is a buffer, a view or a reference to either: the
            /// matrix borrows the memory, not the argument, so
            /// `Matrix::new(&buf.slice(7..)?, 3, 2)?` lives as long as
            /// `buf`'s borrow.
            ///
            /// # Errors
            /// [`Error::InvalidArgument`] if the slice is too short for the
            /// shape or a side is 2^32 or more.
            pub fn new(data: $data, width: usize, height: usize) -> Result<Self> {
                Self::with_pitch(data, width, height, width)
            }

            /// A matrix whose rows start `pitch` elements apart (`pitch >= width`).
            ///
            /// # Errors
            /// [`Error::InvalidArgument`] for a pitch below the width, a slice
            /// too short for the shape, a side of 2^32 or more, or a shape
            /// whose size overflows.
            pub fn with_pitch(
                data: $data,
                width: usize,
                height: usize,
                pitch: usize,
            ) -> Result<Self> {
                let data = data.$take();
                check_shape(data.len(), size_of::<T>(), width, height, pitch)?;
                Ok($name {
                    data,
                    width,
                    height,
                    pitch,
                })
            }

            /// Elements per row.
            pub fn width(&self) -> usize {
                self.width
            }

            /// Rows.
            pub fn height(&self) -> usize {
                self.height
            }

            /// Elements from the start of one row to the start of the next.
            pub fn pitch(&self) -> usize {
                self.pitch
            }

            /// Whether the matrix has no element (a width or height of 0).
            pub fn is_empty(&self) -> bool {
                self.width == 0 || self.height == 0
            }

            /// The device address of the first element.
            pub(crate) fn address(&self) -> u64 {
                self.data.device_address()
            }

            /// The memory the matrix covers.
            pub(crate) fn data(&self) -> &$view<'a, T> {
                &self.data
            }

            /// The bytes from the first element to the end of the last
            /// row (empty for an empty matrix).
            pub(crate) fn span(&self) -> crate::overlap::Span {
                let elements = if self.is_empty() {
                    0
                } else {
                    // No overflow: the view lies inside its slice (checked
                    // when it was made).
                    (self.height - 1) * self.pitch + self.width
                };
                crate::overlap::Span::new(self.address(), elements * size_of::<T>())
            }

            /// Whether the first element and every row start are aligned to
            /// `bytes`.
            pub(crate) fn rows_aligned(&self, bytes: usize) -> bool {
                self.address().is_multiple_of(bytes as u64)
                    && self
                        .pitch
                        .checked_mul(size_of::<T>())
                        .is_some_and(|pitch| pitch.is_multiple_of(bytes))
            }

            /// The largest power of two up to 16 that divides the first
            /// element's address and the pitch in bytes.
            pub(crate) fn row_alignment(&self) -> usize {
                [16, 8, 4, 2]
                    .into_iter()
                    .find(|&a| self.rows_aligned(a))
                    .unwrap_or(1)
            }
        }
    };
}
matrix_common!(Matrix, View, impl IntoView<'a, Elem = T>, into_view);
matrix_common!(
    MatrixMut,
    ViewMut,
    impl IntoViewMut<'a, Elem = T>,
    into_view_mut
);

/// Checks a strided batch of `count` matrices of one shape against a
/// slice of `len` elements: each matrix as [`check_shape`], the last one
/// starting `(count − 1) · stride` elements after the first.
fn check_batch(
    len: usize,
    element: usize,
    (width, height, pitch): (usize, usize, usize),
    count: usize,
    stride: usize,
) -> Result<()> {
    // The shape itself (pitch, sides, overflow), then whether the last
    // matrix fits.
    check_shape(usize::MAX, element, width, height, pitch)?;
    if count == 0 || width == 0 || height == 0 {
        return Ok(());
    }
    let start = (count - 1).checked_mul(stride);
    match start {
        Some(start)
            if start <= len && check_shape(len - start, element, width, height, pitch).is_ok() =>
        {
            Ok(())
        }
        _ => Err(Error::InvalidArgument(format!(
            "a batch of {count} {width}×{height} matrices with a pitch of {pitch}, {stride} \
             elements apart, does not fit a slice of {len} elements"
        ))),
    }
}

/// Whether the `count` matrices of a batch share no element: stacked (each
/// starts after the previous one's last row) or side by side (all within
/// one row pitch, each starting after the previous one's first row).
fn batch_is_disjoint(
    (width, height, pitch): (usize, usize, usize),
    count: usize,
    stride: usize,
) -> bool {
    if count <= 1 || width == 0 || height == 0 {
        return true;
    }
    // No overflow: the batch fits its slice (`check_batch`).
    let extent = (height - 1) * pitch + width;
    stride >= extent || (stride >= width && (count - 1) * stride + width <= pitch)
}

macro_rules! batch_common {
    ($name:ident, $view:ident, $data:ty, $take:ident) => {
        impl<'a, T: Pod> $name<'a, T> {
            /// `count` densely packed matrices `width` elements wide and
            /// `height` rows high, one after the other: the pitch is the
            /// width and the stride `width · height`.
            ///
            /// # Errors
            /// As [`Self::with_strides`].
            pub fn new(data: $data, width: usize, height: usize, count: usize) -> Result<Self> {
                let stride = width.checked_mul(height).ok_or_else(|| {
                    Error::InvalidArgument(format!(
                        "a {width}×{height} matrix overflows the address space"
                    ))
                })?;
                Self::with_strides(data, width, height, width, count, stride)
            }

            /// `count` matrices `width` wide and `height` high, rows
            /// `pitch` elements apart, the `i`-th starting `i · stride`
            /// elements after the first (at the slice's start).
            ///
            /// # Errors
            /// [`Error::InvalidArgument`] for a pitch below the width, a
            /// side of 2^32 or more, or a slice too short for the last
            /// matrix.
            pub fn with_strides(
                data: $data,
                width: usize,
                height: usize,
                pitch: usize,
                count: usize,
                stride: usize,
            ) -> Result<Self> {
                let data = data.$take();
                check_batch(
                    data.len(),
                    size_of::<T>(),
                    (width, height, pitch),
                    count,
                    stride,
                )?;
                Self::checked($name {
                    data,
                    width,
                    height,
                    pitch,
                    count,
                    stride,
                })
            }

            /// Elements per row of each matrix.
            pub fn width(&self) -> usize {
                self.width
            }

            /// Rows of each matrix.
            pub fn height(&self) -> usize {
                self.height
            }

            /// Elements from the start of one row to the start of the next.
            pub fn pitch(&self) -> usize {
                self.pitch
            }

            /// Matrices in the batch.
            pub fn count(&self) -> usize {
                self.count
            }

            /// Elements from the start of one matrix to the start of the next.
            pub fn stride(&self) -> usize {
                self.stride
            }

            /// The device address of the first matrix's first element.
            pub(crate) fn address(&self) -> u64 {
                self.data.device_address()
            }

            /// The memory the batch covers.
            pub(crate) fn data(&self) -> &$view<'a, T> {
                &self.data
            }

            /// The bytes from the first matrix's first element to the end
            /// of the last one's last row (empty for an empty batch).
            pub(crate) fn span(&self) -> crate::overlap::Span {
                let elements = if self.count == 0 || self.width == 0 || self.height == 0 {
                    0
                } else {
                    // No overflow: the batch lies inside its slice.
                    (self.count - 1) * self.stride + (self.height - 1) * self.pitch + self.width
                };
                crate::overlap::Span::new(self.address(), elements * size_of::<T>())
            }
        }
    };
}

/// A strided batch of read-only matrices of one shape in one slice of
/// device memory, as BLAS's strided batched products take them: matrix
/// `i` starts `i · stride` elements after the first. The matrices may
/// share elements (a stride of 0 repeats one matrix).
///
/// ```no_run
/// # fn main() -> warpspeed::Result<()> {
/// let ctx = warpspeed::Context::new(0)?;
/// let data = ctx.zeros::<f32>(1000 * 64 * 32)?;
/// // 1 000 matrices of 64 rows × 32 columns, one after the other.
/// let batch = warpspeed::MatrixBatch::new(&data, 32, 64, 1000)?;
/// assert_eq!(batch.stride(), 64 * 32);
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug)]
pub struct MatrixBatch<'a, T: Pod> {
    data: View<'a, T>,
    width: usize,
    height: usize,
    pitch: usize,
    count: usize,
    stride: usize,
}

/// A strided batch of writable matrices of one shape: as [`MatrixBatch`],
/// and no two of its matrices share an element, which the strides must
/// show: each matrix starts after the previous one's last row (stacked),
/// or all lie side by side within one row pitch (the heads of an
/// attention layer's `tokens × (heads · dim)` output: a stride of `dim`,
/// a pitch of `heads · dim`).
#[derive(Debug)]
pub struct MatrixBatchMut<'a, T: Pod> {
    data: ViewMut<'a, T>,
    width: usize,
    height: usize,
    pitch: usize,
    count: usize,
    stride: usize,
}

impl<'a, T: Pod> MatrixBatch<'a, T> {
    fn checked(batch: Self) -> Result<Self> {
        Ok(batch)
    }

    /// The batch's first matrix (of an empty batch too: its shape is
    /// checked, not its memory).
    pub(crate) fn first(&self) -> Result<Matrix<'a, T>> {
        Matrix::with_pitch(self.data, self.width, self.height, self.pitch)
    }
}

impl<'a, T: Pod> MatrixBatchMut<'a, T> {
    /// Refuses strides under which two matrices share an element.
    fn checked(batch: Self) -> Result<Self> {
        let (shape, count, stride) = (
            (batch.width, batch.height, batch.pitch),
            batch.count,
            batch.stride,
        );
        if !batch_is_disjoint(shape, count, stride) {
            return Err(Error::InvalidArgument(format!(
                "the {count} writable {}×{} matrices of a batch, rows {} and matrices {stride} \
                 elements apart, overlap: each must start after the previous one's last row, \
                 or all lie side by side within one pitch",
                batch.width, batch.height, batch.pitch
            )));
        }
        Ok(batch)
    }
}

batch_common!(MatrixBatch, View, impl IntoView<'a, Elem = T>, into_view);
batch_common!(
    MatrixBatchMut,
    ViewMut,
    impl IntoViewMut<'a, Elem = T>,
    into_view_mut
);

#[cfg(test)]
mod tests {
    use super::check_shape;

    #[test]
    fn shapes_are_checked() {
        assert!(check_shape(12, 4, 4, 3, 4).is_ok());
        assert!(check_shape(11, 4, 4, 3, 4).is_err());
        assert!(check_shape(14, 4, 4, 3, 5).is_ok()); // the last row needs no padding
        assert!(check_shape(100, 4, 5, 3, 4).is_err()); // pitch below width
        assert!(check_shape(0, 4, 0, 7, 0).is_ok());
        assert!(check_shape(0, 4, 7, 0, 7).is_ok());
        assert!(check_shape(usize::MAX, 1, 2, usize::MAX / 2, usize::MAX / 4).is_err());
        assert!(check_shape(usize::MAX, 1, 1 << 32, 1, 1 << 32).is_err());
        // One row: the pitch is never stepped over, but its bytes must fit.
        assert!(check_shape(4, 4, 4, 1, usize::MAX / 2).is_err());
        assert!(check_shape(4, 1, 4, 1, usize::MAX / 2).is_ok());
    }

    #[test]
    fn batches_are_checked() {
        use super::{batch_is_disjoint, check_batch};
        // Three dense 4 × 3 matrices: 36 elements.
        assert!(check_batch(36, 4, (4, 3, 4), 3, 12).is_ok());
        assert!(check_batch(35, 4, (4, 3, 4), 3, 12).is_err());
        assert!(check_batch(12, 4, (4, 3, 4), 1000, 0).is_ok()); // one matrix repeated
        assert!(check_batch(0, 4, (4, 3, 4), 0, 12).is_ok()); // no matrix at all
        assert!(check_batch(usize::MAX, 4, (4, 3, 4), usize::MAX, usize::MAX).is_err());
        // Stacked, side by side, and the overlapping strides between.
        assert!(batch_is_disjoint((4, 3, 4), 3, 12));
        assert!(batch_is_disjoint((4, 3, 16), 4, 4)); // four heads of 4 in rows of 16
        assert!(!batch_is_disjoint((4, 3, 16), 5, 4)); // a fifth runs past the pitch
        assert!(!batch_is_disjoint((4, 3, 4), 3, 11));
        assert!(!batch_is_disjoint((4, 3, 16), 4, 3));
        assert!(!batch_is_disjoint((4, 3, 4), 2, 0));
        assert!(batch_is_disjoint((4, 3, 4), 1, 0));
        assert!(batch_is_disjoint((0, 3, 4), 5, 0));
    }

    /// Near the edges of `usize`, 2^31 and 2^32: a shape is accepted only
    /// when it fits, and checking never panics.
    mod properties {
        use super::check_shape;
        use crate::edges::edgy;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn shapes_fit_or_are_refused(
                len in edgy(), element in prop_oneof![Just(1usize), Just(2), Just(4), Just(8)],
                width in edgy(), height in edgy(), pitch in edgy(),
            ) {
                if check_shape(len, element, width, height, pitch).is_ok() {
                    prop_assert!(pitch >= width);
                    prop_assert!(pitch.checked_mul(element).is_some());
                    prop_assert!(width < 1 << 32 && height < 1 << 32);
                    if width > 0 && height > 0 {
                        let needed = (height - 1) as u128 * pitch as u128 + width as u128;
                        prop_assert!(needed <= len as u128);
                    }
                }
            }
        }
    }
}
