//! Working beside [`cudarc`] (the `cudarc` feature): its slices are device
//! memory every library function takes, and a queue can run on its
//! streams.
//!
//! * `&CudaSlice<T>` is a [`DeviceRead`] and `&mut CudaSlice<T>` a
//!   [`DeviceWrite`] (and [`IntoView`]/[`IntoViewMut`], for
//!   [`Matrix`](crate::Matrix)), for the element types of [`Pod`]: pass
//!   them where a [`Buffer`](crate::Buffer) goes.
//! * [`Context::with_cudarc_stream`] makes a queue on a `CudaStream`, so
//!   the library's calls run in order with your cudarc work on it.
//!
//! The ordering follows cudarc's own rules, on any queue: a call that
//! reads a slice first waits (on the GPU) for the slice's last write, and
//! records the slice's read event after its work; a call that writes it
//! waits for its last read and write, and records its write event. So
//! cudarc's later uses of the slice, on any of its streams, wait for the
//! library's, and its `Drop` frees the memory only after them. Where
//! cudarc tracks no events (a context on its default stream alone, or one
//! where `disable_event_tracking` was called) it orders nothing, and
//! neither can the library: the legacy default stream waits for every
//! queue and they for it, and with tracking off the ordering is yours, as
//! in cudarc.
//!
//! The slices must be of the device's primary context (`CudaContext::new`
//! retains it, as [`Context::new`] does); a call given a slice of another
//! context returns an error. A [`Graph`](crate::Graph) cannot capture a
//! cudarc slice: it keeps the memory it uses alive, and a slice is only
//! borrowed ([`Error::InCapture`]).

use crate::context::Context;
use crate::error::{Error, Result};
use crate::memory::{DeviceRead, DeviceWrite, IntoView, IntoViewMut, Order, Pod, View, ViewMut};
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, SyncOnDrop};
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ptr::NonNull;
use std::sync::Arc;

/// What the library needs of a cudarc slice, whatever its element type.
trait Slice: Send + Sync {
    fn context(&self) -> &Arc<CudaContext>;
    /// cudarc's protocol for a read on `stream`: waits for the last write;
    /// the guard records the read when dropped.
    fn read_on<'s>(&'s self, stream: &'s CudaStream) -> SyncOnDrop<'s>;
    /// cudarc's protocol for a write: waits for the last read and write;
    /// the guard records the write.
    fn write_on<'s>(&'s mut self, stream: &'s CudaStream) -> SyncOnDrop<'s>;
}

impl<T: Pod> Slice for CudaSlice<T> {
    fn context(&self) -> &Arc<CudaContext> {
        CudaSlice::context(self)
    }
    fn read_on<'s>(&'s self, stream: &'s CudaStream) -> SyncOnDrop<'s> {
        self.device_ptr(stream).1
    }
    fn write_on<'s>(&'s mut self, stream: &'s CudaStream) -> SyncOnDrop<'s> {
        self.device_ptr_mut(stream).1
    }
}

/// A view's cudarc slice: borrowed shared (`&'a CudaSlice`) or, for a
/// view made from `&'a mut CudaSlice`, exclusively.
#[derive(Clone, Copy)]
pub(crate) struct Events<'a> {
    slice: NonNull<dyn Slice + 'a>,
    exclusive: bool,
    _borrow: PhantomData<&'a ()>,
}

// SAFETY: `Events` stands for a `&'a CudaSlice<T>` or a `&'a mut
// CudaSlice<T>`, both `Send` and `Sync` (cudarc's slices are).
unsafe impl Send for Events<'_> {}
// SAFETY: as for `Send`.
unsafe impl Sync for Events<'_> {}

impl<'a> Events<'a> {
    fn shared<T: Pod>(slice: &'a CudaSlice<T>) -> Events<'a> {
        Events {
            slice: NonNull::from(slice as &(dyn Slice + 'a)),
            exclusive: false,
            _borrow: PhantomData,
        }
    }

    fn exclusive<T: Pod>(slice: &'a mut CudaSlice<T>) -> Events<'a> {
        Events {
            slice: NonNull::from(slice as &mut (dyn Slice + 'a)),
            exclusive: true,
            _borrow: PhantomData,
        }
    }

    /// Whether `self` and `other` are views of one slice.
    pub(crate) fn same_slice(&self, other: &Events<'_>) -> bool {
        std::ptr::eq(
            self.slice.as_ptr().cast::<()>(),
            other.slice.as_ptr().cast::<()>(),
        )
    }

    /// Orders a call on `ctx`'s queue that reads (or, `write`, writes) the
    /// slice after its other uses, cudarc's way; the returned guard
    /// records the use when dropped, after the call's work is enqueued.
    ///
    /// # Errors
    /// [`Error::WrongDevice`] for a slice of another device,
    /// [`Error::InvalidArgument`] for one of another CUDA context of it.
    pub(crate) fn order_on(self, ctx: &Context, write: bool) -> Result<Held> {
        // SAFETY: the slice is borrowed for `'a`, which the view (and the
        // call using it) lives within.
        let slice = unsafe { self.slice.as_ref() };
        let theirs = slice.context();
        same_context(theirs, ctx, "slice")?;
        // SAFETY: the queue's stream, of this same primary context (checked
        // above), outlives the wrapper, which lives in the guard for the
        // length of one call on the queue.
        let stream = unsafe { theirs.wrap_borrowed_stream(ctx.raw_stream().cast()) };
        let guard = if write {
            debug_assert!(self.exclusive, "a write through a shared cudarc slice");
            let mut pointer = self.slice;
            // SAFETY: a writable view is made from `&'a mut CudaSlice`
            // only (`exclusive`), and nothing else uses the slice while
            // the call holds the view.
            let slice = unsafe { pointer.as_mut() };
            slice.write_on(&stream)
        } else {
            slice.read_on(&stream)
        };
        // SAFETY: only the lifetime changes. The guard borrows the slice
        // (alive for the call, which holds its view) and the stream, which
        // `Held` owns and drops after the guard.
        let guard = unsafe { std::mem::transmute::<SyncOnDrop<'_>, SyncOnDrop<'static>>(guard) };
        Ok(Held {
            guard: ManuallyDrop::new(guard),
            _stream: ManuallyDrop::new(stream),
        })
    }
}

/// A cudarc guard held by a call until its work is enqueued: dropping it
/// records the slice's read or write event on the queue's stream.
pub(crate) struct Held {
    guard: ManuallyDrop<SyncOnDrop<'static>>,
    _stream: ManuallyDrop<Arc<CudaStream>>,
}

impl Drop for Held {
    fn drop(&mut self) {
        // SAFETY: each dropped once, the guard first (it borrows the
        // stream).
        unsafe {
            ManuallyDrop::drop(&mut self.guard);
            ManuallyDrop::drop(&mut self._stream);
        }
    }
}

/// The slice's device address, with no ordering of its own: cudarc gives
/// it with its read protocol on the slice's own stream (a wait there for
/// the last write, harmless), whose recording is skipped.
fn address<T: Pod>(slice: &CudaSlice<T>) -> u64 {
    let (address, guard) = slice.device_ptr(slice.stream());
    std::mem::forget(guard);
    address
}

impl<T: Pod> crate::memory::sealed::Memory for CudaSlice<T> {}
impl<T: Pod> DeviceRead for CudaSlice<T> {
    type Elem = T;
    fn view(&self) -> View<'_, T> {
        View {
            address: address(self),
            len: self.len(),
            ordinal: self.ordinal() as u32,
            order: Order::Cudarc(Events::shared(self)),
            _element: PhantomData,
        }
    }
}

impl<T: Pod> DeviceWrite for CudaSlice<T> {
    fn view_mut(&mut self) -> ViewMut<'_, T> {
        let (address, len, ordinal) = (address(self), self.len(), self.ordinal() as u32);
        ViewMut {
            address,
            len,
            ordinal,
            order: Order::Cudarc(Events::exclusive(self)),
            _element: PhantomData,
        }
    }
}

impl<T: Pod> crate::memory::sealed::Memory for &CudaSlice<T> {}
impl<'a, T: Pod> IntoView<'a> for &'a CudaSlice<T> {
    type Elem = T;
    fn into_view(self) -> View<'a, T> {
        self.view()
    }
}

impl<T: Pod> crate::memory::sealed::Memory for &mut CudaSlice<T> {}
impl<'a, T: Pod> IntoViewMut<'a> for &'a mut CudaSlice<T> {
    type Elem = T;
    fn into_view_mut(self) -> ViewMut<'a, T> {
        self.view_mut()
    }
}

/// `Ok` when cudarc's `theirs` is `ctx`'s device's primary context, the
/// library's own; `what` names the cudarc object it came with.
fn same_context(theirs: &CudaContext, ctx: &Context, what: &str) -> Result<()> {
    if std::ptr::eq(
        theirs.cu_ctx().cast::<()>(),
        ctx.runtime().cuda.as_raw().cast::<()>(),
    ) {
        return Ok(());
    }
    let what = format!("a cudarc {what}");
    Err(Error::foreign_context(
        ctx.info().ordinal,
        theirs.ordinal() as u32,
        &what,
    ))
}

impl Context {
    /// Another queue on the same device that runs on cudarc's `stream`
    /// (keeping it alive), with its own scratch memory: the library's calls
    /// on it run in stream order with your cudarc work on that stream.
    /// Dropping the queue waits for the stream and leaves it to cudarc.
    ///
    /// # Errors
    /// [`Error::WrongDevice`] for a stream of another device;
    /// [`Error::InvalidArgument`] for one of another CUDA context of this
    /// device (`CudaContext::new` retains the primary context, the
    /// library's own); [`Error::ContextLost`] after a kernel fault.
    pub fn with_cudarc_stream(&self, stream: &Arc<CudaStream>) -> Result<Context> {
        self.ensure_alive()?;
        same_context(stream.context(), self, "stream")?;
        // SAFETY: the stream lives as long as the `Arc` the queue keeps.
        unsafe { self.queue_on(stream.cu_stream().cast(), Some(Box::new(stream.clone()))) }
    }
}
