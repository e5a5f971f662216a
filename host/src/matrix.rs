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
