//! The owned allocation: [`Buffer`].

use super::tracker::{Current, Order, Tracker};
use super::{DeviceRead, DeviceWrite, Pod, View, ViewMut};
use crate::context::runtime::Runtime;
use crate::driver;
use crate::error::Result;
use std::fmt;
use std::marker::PhantomData;
use std::ops::RangeBounds;
use std::sync::Arc;

/// `len` elements of `T` in device memory, owned: freed when dropped, after
/// every queue that used them has finished with them (or, where a
/// [`Graph`](crate::Graph) captured a call that uses it, when the last such
/// graph is dropped).
///
/// Made by [`Context::upload`](crate::Context::upload), [`Context::zeros`](crate::Context::zeros) or [`Context::alloc`](crate::Context::alloc)
/// (or, `unsafe`, [`Context::adopt`](crate::Context::adopt)); read back with [`Buffer::to_vec`]
/// or [`Context::copy_to_host`](crate::Context::copy_to_host). Library
/// functions take it by reference (`&buf` to read, `&mut buf` to write), or
/// a part of it through [`Buffer::slice`] and [`Buffer::slice_mut`].
///
/// The buffer keeps its device's CUDA context alive: it stays valid after
/// every [`Context`](crate::Context) of the device is dropped, and any later `Context` of
/// the same device can use it. A `Context` of another device refuses it
/// with [`Error::WrongDevice`](crate::Error::WrongDevice).
///
/// A view is a borrow, so it cannot outlive its buffer:
///
/// ```compile_fail
/// # fn main() -> warpspeed::Result<()> {
/// let ctx = warpspeed::Context::new(0)?;
/// let mut counts = ctx.zeros::<u32>(256)?;
/// let stale = counts.slice_mut(..)?;
/// drop(counts); // error: `counts` is still borrowed by `stale`
/// let bytes = ctx.upload(&[1u8, 2, 3])?;
/// ctx.histogram_into(&bytes, &mut { stale })?.wait()?;
/// # Ok(()) }
/// ```
///
/// nor be used after the buffer moved:
///
/// ```compile_fail
/// # fn main() -> warpspeed::Result<()> {
/// let ctx = warpspeed::Context::new(0)?;
/// let x = ctx.upload(&[1u32; 64])?;
/// let view = x.slice(..32)?;
/// let moved = x; // error: cannot move out of `x` while it is borrowed
/// ctx.sum(&view)?;
/// # drop(moved); Ok(()) }
/// ```
///
/// and two writers (two queues, on two threads say) cannot hold it at once:
///
/// ```compile_fail
/// # fn main() -> warpspeed::Result<()> {
/// let ctx = warpspeed::Context::new(0)?;
/// let other = ctx.new_stream()?;
/// let mut out = ctx.zeros::<f32>(1 << 20)?;
/// let first = out.slice_mut(..)?;
/// let second = out.slice_mut(..)?; // error: `out` is already borrowed mutably
/// ctx.fill(&mut { first }, 1.0)?;
/// other.fill(&mut { second }, 2.0)?;
/// # Ok(()) }
/// ```
///
/// One after the other, two queues may write it: the second waits for the
/// first on the GPU.
pub struct Buffer<T: Pod> {
    /// Shared with the [`Graph`](crate::Graph)s that captured work on it,
    /// which keep it allocated for their replays.
    pub(super) allocation: Arc<Allocation>,
    pub(super) len: usize,
    pub(super) _element: PhantomData<T>,
}

/// One allocation of device memory and the ordering of its uses: freed
/// when the last of its owners (its [`Buffer`], the graphs that captured
/// it) is dropped, after every queue that used it has finished.
pub(crate) struct Allocation {
    pub(super) address: u64,
    pub(super) tracker: Tracker,
    // Dropped last: keeps the CUDA context, and so the allocation, alive.
    pub(super) runtime: Arc<Runtime>,
}

impl Allocation {
    /// The ordering of this allocation's uses.
    pub(crate) fn tracker(&self) -> &Tracker {
        &self.tracker
    }
}

impl<T: Pod> Buffer<T> {
    /// Elements in the buffer.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer has no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The ordinal of the device the buffer is on.
    pub fn device(&self) -> u32 {
        self.allocation.tracker.ordinal
    }

    /// The device address of the first element (for your own driver calls;
    /// order them against the library's work yourself).
    pub fn device_address(&self) -> u64 {
        self.allocation.address
    }

    /// A read-only view of the elements `range`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for a range outside the buffer.
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<View<'_, T>> {
        self.view().into_slice(range)
    }

    /// A writable view of the elements `range`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for a range outside the buffer.
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> Result<ViewMut<'_, T>> {
        self.view_mut().into_slice_mut(range)
    }

    /// Read-only views of the elements `..mid` and `mid..` (as
    /// `<[T]>::split_at`, with an error for `mid` past the end).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for
    /// `mid > len`.
    pub fn split_at(&self, mid: usize) -> Result<(View<'_, T>, View<'_, T>)> {
        self.view().split_at(mid)
    }

    /// Disjoint writable views of the elements `..mid` and `mid..` (as
    /// `<[T]>::split_at_mut`, with an error for `mid` past the end): one
    /// may be a call's input and the other its output.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for
    /// `mid > len`.
    pub fn split_at_mut(&mut self, mid: usize) -> Result<(ViewMut<'_, T>, ViewMut<'_, T>)> {
        self.view_mut().split_at_mut(mid)
    }

    /// Copies the buffer to the host, once every queue that writes it has
    /// finished.
    ///
    /// # Errors
    /// [`Error::Cuda`](crate::Error::Cuda) if waiting or copying fails (a kernel fault).
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let mut host = vec![T::default(); self.len];
        self.copy_to(&mut host)?;
        Ok(host)
    }

    /// Copies the buffer into `host`, once every queue that writes it has
    /// finished.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`](crate::Error::LengthMismatch) unless `host` has the buffer's length;
    /// [`Error::Cuda`](crate::Error::Cuda) if waiting or copying fails.
    pub fn copy_to(&self, host: &mut [T]) -> Result<()> {
        self.view().copy_to(host)
    }
}

impl<T: Pod> DeviceRead for Buffer<T> {
    type Elem = T;
    fn view(&self) -> View<'_, T> {
        View {
            address: self.allocation.address,
            len: self.len,
            ordinal: self.allocation.tracker.ordinal,
            order: Order::Buffer(&self.allocation),
            _element: PhantomData,
        }
    }
}

impl<T: Pod> DeviceWrite for Buffer<T> {
    fn view_mut(&mut self) -> ViewMut<'_, T> {
        ViewMut {
            address: self.allocation.address,
            len: self.len,
            ordinal: self.allocation.tracker.ordinal,
            order: Order::Buffer(&self.allocation),
            _element: PhantomData,
        }
    }
}

impl<T: Pod> fmt::Debug for Buffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Buffer")
            .field("device", &self.allocation.tracker.ordinal)
            .field("address", &format_args!("{:#x}", self.allocation.address))
            .field("len", &self.len)
            .finish()
    }
}

impl Drop for Allocation {
    fn drop(&mut self) {
        if self.address == 0 {
            return;
        }
        // Failures have nowhere to go: after a kernel fault the context is
        // gone with every allocation in it.
        let Ok(_current) = Current::push(self.runtime.cuda.as_raw()) else {
            return;
        };
        if self.tracker.wait_host(true).is_ok() {
            // SAFETY: allocated by cuMemAlloc (or adopted from a cust
            // buffer, which allocates the same way) and freed once; every
            // queue that used it has finished (waited for above), and no
            // view remains (they borrow its buffer), nor any graph that
            // captured it (each holds this `Arc`).
            unsafe {
                driver::cuMemFree_v2(self.address);
            }
        }
    }
}
