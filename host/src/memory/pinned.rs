//! Page-locked host memory: [`PinnedBuffer`], which the GPU's copy engines
//! read and write directly, so copies between it and device memory run
//! asynchronously at full speed and overlap kernels.

use super::tracker::{Call, Current, Tracker};
use super::{DeviceRead, DeviceWrite, Pod, bounds, same_length};
use crate::context::Context;
use crate::context::runtime::Runtime;
use crate::driver;
use crate::error::{Result, check};
use crate::pending::Pending;
use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::ops::RangeBounds;
use std::sync::Arc;

/// `len` elements of `T` in page-locked (pinned) host memory, made by
/// [`Context::alloc_pinned`]: the source and destination of asynchronous
/// copies ([`Context::copy_from_pinned`], [`Context::copy_to_pinned`])
/// that return a [`Pending`] and overlap kernels on other queues.
///
/// Its copies are ordered like every use of a [`Buffer`](super::Buffer):
/// the host's access waits for them. [`PinnedBuffer::as_slice`] waits for
/// the copies that write the memory (downloads into it),
/// [`PinnedBuffer::as_mut_slice`] for every copy that uses it (an upload
/// may still be reading it), and dropping the buffer for every copy, so
/// no safe program reads a half-written download or overwrites data a copy
/// is still reading, whatever `Pending`s it forgot. A copy borrows the
/// buffer only for the call, like device buffers:
///
/// ```no_run
/// # fn main() -> warpspeed::Result<()> {
/// let ctx = warpspeed::Context::new(0)?;
/// let mut staging = ctx.alloc_pinned::<u8>(1 << 20)?;
/// staging.as_mut_slice()?.fill(7);
/// let mut device = ctx.alloc::<u8>(1 << 20)?;
/// ctx.copy_from_pinned(&staging, &mut device)?.detach(); // returns at once
/// staging.as_mut_slice()?.fill(9); // waits for the copy to have read it
/// # Ok(()) }
/// ```
///
/// Page-locked memory is a scarce resource of the host: allocating it is
/// slow (milliseconds per MiB), and much of it slows the rest of the
/// system. Allocate a few staging buffers once and reuse them.
pub struct PinnedBuffer<T: Pod> {
    host: *mut T,
    len: usize,
    tracker: Tracker,
    // Dropped last: keeps the CUDA context the memory was allocated in.
    runtime: Arc<Runtime>,
}

// SAFETY: the buffer owns its memory (as a `Vec<T>` does, `T: Send +
// Sync`); the host side is reached through `&self`/`&mut self` only, and
// the tracker is thread-safe.
unsafe impl<T: Pod> Send for PinnedBuffer<T> {}
// SAFETY: as for `Send`: shared access gives `&[T]` only.
unsafe impl<T: Pod> Sync for PinnedBuffer<T> {}

/// A read-only part of a [`PinnedBuffer`] for one copy
/// ([`PinnedBuffer::slice`]).
#[derive(Clone, Copy)]
pub struct PinnedView<'a, T: Pod> {
    host: *const T,
    len: usize,
    tracker: &'a Tracker,
}

/// A writable part of a [`PinnedBuffer`] for one copy
/// ([`PinnedBuffer::slice_mut`]).
pub struct PinnedViewMut<'a, T: Pod> {
    host: *mut T,
    len: usize,
    tracker: &'a Tracker,
    _borrow: PhantomData<&'a mut [T]>,
}

impl Context {
    /// A page-locked host buffer of `len` zeros, usable by every device's
    /// queues (`cuMemHostAlloc`, portable).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for a size that overflows; [`Error::Cuda`](crate::Error::Cuda)
    /// when the host cannot lock that much memory.
    pub fn alloc_pinned<T: Pod>(&self, len: usize) -> Result<PinnedBuffer<T>> {
        self.ensure_alive()?;
        let bytes = super::copy::bytes_of::<T>(len, "a pinned buffer")?;
        let mut host: *mut c_void = std::ptr::null_mut();
        if bytes > 0 {
            // SAFETY: writes one pointer on success; the context is current.
            let status = unsafe {
                driver::cuMemHostAlloc(&mut host, bytes, driver::CU_MEMHOSTALLOC_PORTABLE)
            };
            check(status, || {
                format!("allocating {bytes} B of page-locked host memory")
            })?;
            // SAFETY: `bytes` bytes just allocated, written before any read
            // (zeros are a valid `T`: `Pod`).
            unsafe { std::ptr::write_bytes(host.cast::<u8>(), 0, bytes) };
        }
        Ok(PinnedBuffer {
            host: if bytes > 0 {
                host.cast()
            } else {
                std::ptr::NonNull::dangling().as_ptr()
            },
            len,
            tracker: Tracker::new(self.info().ordinal, self.runtime().cuda.as_raw()),
            runtime: self.runtime().clone(),
        })
    }

    /// Copies `src` (pinned host memory) into `dst` in stream order on this
    /// queue, and returns at once: the copy runs on the GPU's copy engine,
    /// overlapping kernels on other queues.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`](crate::Error::LengthMismatch) unless the lengths are equal;
    /// [`Error::WrongDevice`](crate::Error::WrongDevice); [`Error::InCapture`](crate::Error::InCapture) in a capture; driver
    /// failures.
    pub fn copy_from_pinned<'a, T: Pod>(
        &'a self,
        src: &impl PinnedRead<Elem = T>,
        dst: &mut impl DeviceWrite<Elem = T>,
    ) -> Result<Pending<'a>> {
        self.ensure_alive()?;
        self.refuse_in_capture("a copy from pinned memory")?;
        let (src, dst) = (src.pinned(), dst.view_mut());
        same_length("the buffer pinned memory is copied to", src.len, dst.len())?;
        let mut call = Call::new(self);
        call.host(src.tracker, false)?;
        let address = call.write(&dst)?;
        if src.len > 0 {
            // SAFETY: both sides hold `len` elements of `T`; the pinned side
            // is live until every use registered on its tracker has
            // finished (its `Drop` waits), and no host write starts before
            // (`as_mut_slice` waits); the device side is ordered by `call`.
            let status = unsafe {
                driver::cuMemcpyHtoDAsync_v2(
                    address,
                    src.host.cast(),
                    src.len * size_of::<T>(),
                    self.raw_stream(),
                )
            };
            self.track(check(status, || {
                "copying pinned memory to the device".into()
            }))?;
        }
        Ok(Pending::new(self))
    }

    /// Copies `src` into `dst` (pinned host memory) in stream order on this
    /// queue, and returns at once; [`PinnedBuffer::as_slice`] waits for it.
    ///
    /// # Errors
    /// As [`Context::copy_from_pinned`].
    pub fn copy_to_pinned<'a, T: Pod>(
        &'a self,
        src: &impl DeviceRead<Elem = T>,
        dst: &mut impl PinnedWrite<Elem = T>,
    ) -> Result<Pending<'a>> {
        self.ensure_alive()?;
        self.refuse_in_capture("a copy to pinned memory")?;
        let (src, dst) = (src.view(), dst.pinned_mut());
        same_length(
            "the pinned memory a buffer is copied to",
            src.len(),
            dst.len,
        )?;
        let mut call = Call::new(self);
        let address = call.read(&src)?;
        call.host(dst.tracker, true)?;
        if dst.len > 0 {
            // SAFETY: both sides hold `len` elements of `T` (`Pod`: any
            // bytes are valid); the pinned side is live and no host access
            // starts before the copy has finished (its tracker is waited
            // for by `as_slice`, `as_mut_slice` and `Drop`); the device side
            // is ordered by `call`.
            let status = unsafe {
                driver::cuMemcpyDtoHAsync_v2(
                    dst.host.cast(),
                    address,
                    dst.len * size_of::<T>(),
                    self.raw_stream(),
                )
            };
            self.track(check(status, || "copying a buffer to pinned memory".into()))?;
        }
        Ok(Pending::new(self))
    }
}

impl<T: Pod> PinnedBuffer<T> {
    /// Elements in the buffer.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer has no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The elements, once every copy that writes them has finished.
    ///
    /// # Errors
    /// [`Error::Cuda`](crate::Error::Cuda) if waiting fails (a kernel fault).
    pub fn as_slice(&self) -> Result<&[T]> {
        self.wait(false)?;
        // SAFETY: `len` initialised elements (zeroed at allocation, then
        // written by copies, which have finished); no copy writes them
        // while this borrow lives (a copy into them needs `&mut self`).
        Ok(unsafe { std::slice::from_raw_parts(self.host, self.len) })
    }

    /// The elements, writable, once every copy that uses them has finished.
    ///
    /// # Errors
    /// As [`PinnedBuffer::as_slice`].
    pub fn as_mut_slice(&mut self) -> Result<&mut [T]> {
        self.wait(true)?;
        // SAFETY: as `as_slice`; every copy that reads them has finished
        // too, and none can start while this exclusive borrow lives.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.host, self.len) })
    }

    /// The elements `range`, for one copy.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for a range outside the buffer.
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<PinnedView<'_, T>> {
        let (start, len) = bounds(range, self.len)?;
        Ok(PinnedView {
            // In bounds: `start + len <= self.len`.
            host: self.host.wrapping_add(start),
            len,
            tracker: &self.tracker,
        })
    }

    /// The elements `range`, writable, for one copy.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for a range outside the buffer.
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> Result<PinnedViewMut<'_, T>> {
        let (start, len) = bounds(range, self.len)?;
        Ok(PinnedViewMut {
            host: self.host.wrapping_add(start),
            len,
            tracker: &self.tracker,
            _borrow: PhantomData,
        })
    }

    fn wait(&self, all: bool) -> Result<()> {
        let _current = Current::push(self.runtime.cuda.as_raw())?;
        self.tracker.wait_host(all)
    }
}

impl<T: Pod> Drop for PinnedBuffer<T> {
    fn drop(&mut self) {
        if self.len == 0 {
            return;
        }
        let Ok(_current) = Current::push(self.runtime.cuda.as_raw()) else {
            return;
        };
        if self.tracker.wait_host(true).is_ok() {
            // SAFETY: allocated by cuMemHostAlloc and freed once; every copy
            // that used it has finished (waited for above), and no slice or
            // view remains (they borrow `self`).
            unsafe {
                driver::cuMemFreeHost(self.host.cast());
            }
        }
    }
}

impl<T: Pod> fmt::Debug for PinnedBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PinnedBuffer")
            .field("len", &self.len)
            .finish()
    }
}

/// Pinned host memory a copy may read: a [`PinnedBuffer`] or a
/// [`PinnedView`] (sealed, as [`DeviceRead`]).
pub trait PinnedRead: super::sealed::Memory {
    /// The element type.
    type Elem: Pod;
    #[doc(hidden)]
    fn pinned(&self) -> PinnedView<'_, Self::Elem>;
}

/// Pinned host memory a copy may write: a [`PinnedBuffer`] or a
/// [`PinnedViewMut`] (sealed).
pub trait PinnedWrite: super::sealed::Memory {
    /// The element type.
    type Elem: Pod;
    #[doc(hidden)]
    fn pinned_mut(&mut self) -> PinnedViewMut<'_, Self::Elem>;
}

impl<T: Pod> super::sealed::Memory for PinnedBuffer<T> {}
impl<T: Pod> super::sealed::Memory for PinnedView<'_, T> {}
impl<T: Pod> super::sealed::Memory for PinnedViewMut<'_, T> {}

impl<T: Pod> PinnedRead for PinnedBuffer<T> {
    type Elem = T;
    fn pinned(&self) -> PinnedView<'_, T> {
        PinnedView {
            host: self.host,
            len: self.len,
            tracker: &self.tracker,
        }
    }
}

impl<T: Pod> PinnedRead for PinnedView<'_, T> {
    type Elem = T;
    fn pinned(&self) -> PinnedView<'_, T> {
        *self
    }
}

impl<T: Pod> PinnedWrite for PinnedBuffer<T> {
    type Elem = T;
    fn pinned_mut(&mut self) -> PinnedViewMut<'_, T> {
        PinnedViewMut {
            host: self.host,
            len: self.len,
            tracker: &self.tracker,
            _borrow: PhantomData,
        }
    }
}

impl<T: Pod> PinnedWrite for PinnedViewMut<'_, T> {
    type Elem = T;
    fn pinned_mut(&mut self) -> PinnedViewMut<'_, T> {
        PinnedViewMut {
            host: self.host,
            len: self.len,
            tracker: self.tracker,
            _borrow: PhantomData,
        }
    }
}

impl<T: Pod> PinnedView<'_, T> {
    /// Elements in the view.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the view has no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl<T: Pod> PinnedViewMut<'_, T> {
    /// Elements in the view.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the view has no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl<T: Pod> fmt::Debug for PinnedView<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PinnedView")
            .field("len", &self.len)
            .finish()
    }
}

impl<T: Pod> fmt::Debug for PinnedViewMut<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PinnedViewMut")
            .field("len", &self.len)
            .finish()
    }
}
