//! Borrowed views of device memory: [`View`] (shared, `Copy`) and
//! [`ViewMut`] (exclusive), each a part of a [`Buffer`](super::Buffer) or
//! memory of the caller's made from raw parts.

use super::tracker::Order;
use super::{DeviceRead, DeviceWrite, Pod, bounds, cast_len, same_length};
use crate::error::{Error, Result};
use std::fmt;
use std::marker::PhantomData;
use std::ops::RangeBounds;

/// A read-only view of (part of) a [`Buffer`](super::Buffer), borrowed for
/// `'a`: the device-memory analogue of `&'a [T]`.
pub struct View<'a, T: Pod> {
    pub(crate) address: u64,
    pub(crate) len: usize,
    pub(crate) ordinal: u32,
    /// Who orders its uses: its buffer's tracker, or the caller (a view
    /// made from raw parts).
    pub(crate) order: Order<'a>,
    pub(crate) _element: PhantomData<&'a [T]>,
}

/// A writable view of (part of) a [`Buffer`](super::Buffer), borrowed
/// exclusively for `'a`: the device-memory analogue of `&'a mut [T]`.
pub struct ViewMut<'a, T: Pod> {
    pub(crate) address: u64,
    pub(crate) len: usize,
    pub(crate) ordinal: u32,
    pub(crate) order: Order<'a>,
    pub(crate) _element: PhantomData<&'a mut [T]>,
}

impl<T: Pod> Clone for View<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: Pod> Copy for View<'_, T> {}

/// `Err(InvalidArgument)` unless `mid <= len`.
fn check_mid(mid: usize, len: usize) -> Result<()> {
    if mid > len {
        return Err(Error::InvalidArgument(format!(
            "a split at {mid} of a view of {len} elements"
        )));
    }
    Ok(())
}

/// The address and length of the elements `range` of `len` elements of
/// `T` at `address`: the one place a part of a view is computed.
fn part<T>(address: u64, len: usize, range: impl RangeBounds<usize>) -> Result<(u64, usize)> {
    let (start, len) = bounds(range, len)?;
    // No overflow: `start + len` lies inside a view of live memory.
    Ok((address + (start * size_of::<T>()) as u64, len))
}

macro_rules! view_common {
    ($name:ident) => {
        impl<'a, T: Pod> $name<'a, T> {
            /// Elements in the view.
            pub fn len(&self) -> usize {
                self.len
            }

            /// Whether the view has no element.
            pub fn is_empty(&self) -> bool {
                self.len == 0
            }

            /// The ordinal of the device the memory is on.
            pub fn device(&self) -> u32 {
                self.ordinal
            }

            /// The device address of the first element (for your own
            /// driver calls; valid while the view is).
            pub fn device_address(&self) -> u64 {
                self.address
            }

            /// A view of the elements `range` of this one, borrowed from it.
            /// Returns an error where `<[T]>::get` would give `None` (every
            /// misuse of the library is an [`Error`]).
            ///
            /// # Errors
            /// [`Error::InvalidArgument`] for a range outside the view.
            pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<View<'_, T>> {
                self.view().into_slice(range)
            }

            /// Copies the view to the host, once every queue that writes
            /// its buffer has finished.
            ///
            /// # Errors
            /// [`Error::InvalidArgument`] for a view made from raw parts
            /// or a `cudarc` slice (the library does not own it: use
            /// [`Context::copy_to_host`](crate::Context::copy_to_host));
            /// [`Error::Cuda`] if waiting or copying fails.
            pub fn to_vec(&self) -> Result<Vec<T>> {
                let mut host = vec![T::default(); self.len];
                self.copy_to(&mut host)?;
                Ok(host)
            }

            /// Copies the view into `host`, once every queue that writes
            /// its buffer has finished.
            ///
            /// # Errors
            /// [`Error::LengthMismatch`] unless `host` has the view's
            /// length; as [`View::to_vec`].
            pub fn copy_to(&self, host: &mut [T]) -> Result<()> {
                same_length("the host slice a buffer is copied to", self.len, host.len())?;
                let Order::Buffer(allocation) = self.order else {
                    return Err(Error::InvalidArgument(
                        "a view of memory the library does not own has no buffer to wait \
                         for: copy it with Context::copy_to_host"
                            .into(),
                    ));
                };
                if self.len == 0 {
                    return Ok(());
                }
                // SAFETY: the view lies in its tracked buffer, `host` holds
                // `len` elements of `T` (checked), and no write through the
                // library can start while the view borrows the buffer (a
                // `ViewMut` is borrowed here, so no other view writes it).
                // `T: Pod`, so any bytes are a valid `T`.
                unsafe {
                    allocation.tracker().read_to_host(
                        self.address,
                        host.as_mut_ptr().cast(),
                        self.len * size_of::<T>(),
                    )
                }
            }
        }

        impl<T: Pod> DeviceRead for $name<'_, T> {
            type Elem = T;
            fn view(&self) -> View<'_, T> {
                View {
                    address: self.address,
                    len: self.len,
                    ordinal: self.ordinal,
                    order: self.order,
                    _element: PhantomData,
                }
            }
        }

        impl<T: Pod> fmt::Debug for $name<'_, T> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($name))
                    .field("device", &self.ordinal)
                    .field("address", &format_args!("{:#x}", self.address))
                    .field("len", &self.len)
                    .finish()
            }
        }
    };
}
view_common!(View);
view_common!(ViewMut);

impl<'a, T: Pod> View<'a, T> {
    /// The view split in two at `mid`: elements `..mid` and `mid..`, each
    /// borrowed for `'a` (as `<[T]>::split_at`, with an error for `mid`
    /// past the end instead of a panic).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for `mid > len`.
    pub fn split_at(self, mid: usize) -> Result<(View<'a, T>, View<'a, T>)> {
        check_mid(mid, self.len)?;
        Ok((self.into_slice(..mid)?, self.into_slice(mid..)?))
    }

    /// The elements `range` of this view, borrowed for `'a` like it.
    pub(super) fn into_slice(self, range: impl RangeBounds<usize>) -> Result<View<'a, T>> {
        let (address, len) = part::<T>(self.address, self.len, range)?;
        Ok(View {
            address,
            len,
            ..self
        })
    }

    /// The same memory as elements of `U` (plain numbers both, so any bytes
    /// are valid either way), ordered with the buffer as before.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] unless the view's bytes are a whole
    /// number of `U` and its start is aligned for `U`.
    pub fn cast<U: Pod>(&self) -> Result<View<'a, U>> {
        let len = cast_len::<T, U>(self.address, self.len)?;
        Ok(View {
            address: self.address,
            len,
            ordinal: self.ordinal,
            order: self.order,
            _element: PhantomData,
        })
    }

    /// A view of `len` elements at device address `address`, which no
    /// [`Buffer`](super::Buffer) owns (memory you allocated yourself).
    ///
    /// # Safety
    /// For all of `'a`: `address` is the start of `len` initialised,
    /// `T`-aligned elements of device memory in the primary CUDA context of
    /// device `ordinal` (the one [`Context`](crate::Context) uses, and
    /// `cust::quick_init` retains; memory of a context made with
    /// `cuCtxCreate` cannot be used), that stay allocated and that nothing
    /// writes while the view or work using it may be running; the caller
    /// waits for that work (e.g. [`Context::synchronize`](crate::Context::synchronize))
    /// before freeing or writing the memory.
    pub unsafe fn from_raw_parts(address: u64, len: usize, ordinal: u32) -> View<'a, T> {
        View {
            address,
            len,
            ordinal,
            order: Order::Caller,
            _element: PhantomData,
        }
    }
}

impl<'a, T: Pod> ViewMut<'a, T> {
    /// A writable view of `len` elements at device address `address`, which
    /// no [`Buffer`](super::Buffer) owns.
    ///
    /// # Safety
    /// As [`View::from_raw_parts`], and nothing else reads or writes the
    /// memory while work writing it through this view may be running.
    pub unsafe fn from_raw_parts(address: u64, len: usize, ordinal: u32) -> ViewMut<'a, T> {
        ViewMut {
            address,
            len,
            ordinal,
            order: Order::Caller,
            _element: PhantomData,
        }
    }

    /// A writable view of the elements `range` of this one, borrowed
    /// exclusively from it.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a range outside the view.
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> Result<ViewMut<'_, T>> {
        self.reborrow().into_slice_mut(range)
    }

    /// The elements `range` of this view, borrowed exclusively for `'a`
    /// like it.
    pub(super) fn into_slice_mut(self, range: impl RangeBounds<usize>) -> Result<ViewMut<'a, T>> {
        let (address, len) = part::<T>(self.address, self.len, range)?;
        Ok(ViewMut {
            address,
            len,
            ..self
        })
    }

    /// The view split in two writable views at `mid`: elements `..mid` and
    /// `mid..`, disjoint, each borrowed for `'a` (as `<[T]>::split_at_mut`,
    /// with an error for `mid` past the end instead of a panic). One may be
    /// a call's input and the other its output. Keep this view with
    /// `view.reborrow().split_at_mut(mid)`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for `mid > len`.
    pub fn split_at_mut(self, mid: usize) -> Result<(ViewMut<'a, T>, ViewMut<'a, T>)> {
        check_mid(mid, self.len)?;
        // Two exclusive views of disjoint elements: `..mid` and `mid..`.
        let (right, rest) = part::<T>(self.address, self.len, mid..)?;
        let left = ViewMut {
            address: self.address,
            len: mid,
            ordinal: self.ordinal,
            order: self.order,
            _element: PhantomData,
        };
        Ok((
            left,
            ViewMut {
                address: right,
                len: rest,
                ..self
            },
        ))
    }

    /// This view again, borrowed from this one (to pass it on and keep it).
    pub fn reborrow(&mut self) -> ViewMut<'_, T> {
        self.view_mut()
    }

    /// The same memory as writable elements of `U`; see [`View::cast`].
    ///
    /// # Errors
    /// As [`View::cast`].
    pub fn cast_mut<U: Pod>(self) -> Result<ViewMut<'a, U>> {
        let len = cast_len::<T, U>(self.address, self.len)?;
        Ok(ViewMut {
            address: self.address,
            len,
            ordinal: self.ordinal,
            order: self.order,
            _element: PhantomData,
        })
    }
}

impl<T: Pod> DeviceWrite for ViewMut<'_, T> {
    fn view_mut(&mut self) -> ViewMut<'_, T> {
        ViewMut {
            address: self.address,
            len: self.len,
            ordinal: self.ordinal,
            order: self.order,
            _element: PhantomData,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{View, ViewMut};

    /// Parts of views are computed on the host alone: views of raw parts
    /// (no device behind them, never launched) check the arithmetic.
    #[test]
    fn parts_of_views_are_where_they_should_be() {
        // SAFETY: the views are never used on a device: only their
        // addresses and lengths are read.
        let view = unsafe { View::<u32>::from_raw_parts(0x1000, 10, 0) };
        let part = view.slice(2..7).unwrap();
        assert_eq!((part.device_address(), part.len()), (0x1008, 5));
        let inner = part.slice(1..=1).unwrap();
        assert_eq!((inner.device_address(), inner.len()), (0x100c, 1));
        assert!(part.slice(..6).is_err());
        let (left, right) = view.split_at(4).unwrap();
        assert_eq!((left.device_address(), left.len()), (0x1000, 4));
        assert_eq!((right.device_address(), right.len()), (0x1010, 6));
        let (all, none) = view.split_at(10).unwrap();
        assert_eq!(
            (all.len(), none.len(), none.device_address()),
            (10, 0, 0x1028)
        );
        assert!(view.split_at(11).is_err());

        // SAFETY: as above.
        let mut writable = unsafe { ViewMut::<f64>::from_raw_parts(0x2000, 9, 1) };
        let part = writable.slice_mut(3..).unwrap();
        assert_eq!(
            (part.device_address(), part.len(), part.device()),
            (0x2018, 6, 1)
        );
        assert!(writable.slice_mut(10..).is_err());
        let (left, right) = writable.reborrow().split_at_mut(5).unwrap();
        assert_eq!((left.device_address(), left.len()), (0x2000, 5));
        assert_eq!((right.device_address(), right.len()), (0x2028, 4));
        assert!(writable.split_at_mut(10).is_err());
    }
}
