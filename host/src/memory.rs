//! Device memory that no kernel can outlive: [`Buffer`], its borrowed views
//! [`View`] and [`ViewMut`], and the ordering that makes them safe to use
//! from any queue.
//!
//! # The soundness argument
//!
//! A [`Buffer`] owns its allocation and an `Arc` to its device's runtime, so
//! the device's CUDA context (and with it the allocation) lives as long as
//! the buffer, whatever `Context`s are dropped. Views are borrows of the
//! buffer (`View<'a, T>` is a shared borrow, `ViewMut<'a, T>` an exclusive
//! one): none outlives its buffer, and no two queues hold a writable view of
//! one buffer at once.
//!
//! Each queue ([`Context`]) has an event, its *clock*, and numbers its calls
//! that use buffers. Each buffer keeps the list of queues that used it
//! since its last write: the latest such call of each, and whether one of
//! them wrote it. The list is updated when the call returns, once all its
//! work is enqueued, also when the call fails half-way: work enqueued before
//! a failure is ordered like any other. A call that uses a buffer first
//! makes its stream wait (on the device, `cuStreamWaitEvent`) for every
//! other queue in the list whose use conflicts: readers wait for writers,
//! writers for everyone. To wait for call `n` of a queue, its clock is
//! recorded on its stream, unless a recording made after call `n` was
//! enqueued exists already: a recording marks everything enqueued before
//! it, so waiting on the clock's latest recording waits for at least that
//! use (recordings are made only when someone must wait: a queue whose
//! buffers no other queue touches makes no driver call for them). A
//! buffer's `Drop` waits (on the host) for every use in its list before
//! freeing the memory, and the host reads of [`Buffer::to_vec`] wait for
//! the writers. A queue that is dropped waits for its stream and marks its
//! clock retired: its uses need no waiting after that.
//!
//! None of this depends on the [`Pending`](crate::Pending) guard being
//! dropped: forgetting it, leaking it or putting it in an `Rc` cycle only
//! skips its wait. Element types are the plain numbers of [`Pod`], for which
//! every bit pattern a kernel may leave is a valid value on the host.

use crate::context::Context;
use crate::context::clock::Clock;
use crate::context::runtime::{Runtime, lock};
use crate::driver;
use crate::error::{Error, Result, check};
use cust::memory::{DeviceBuffer, DeviceCopy};
use cust::sys::CUcontext;
use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};
use std::sync::{Arc, Mutex};

/// A plain number type buffers hold: every bit pattern is a valid value,
/// so whatever a kernel leaves in device memory is safe to read on the host.
/// Sealed: `u8`, `i8`, `u16`, `i16`, `u32`, `i32`, `u64`, `i64`, `f32`, `f64`.
pub trait Pod: DeviceCopy + Copy + Default + Send + Sync + 'static + sealed::Sealed {}

mod sealed {
    pub trait Sealed {}
}

macro_rules! pod {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Pod for $t {}
    )*};
}
pod!(u8, i8, u16, i16, u32, i32, u64, i64, f32, f64);

/// One queue's use of a buffer since the buffer's last write: its latest
/// call that used it, and whether any such call wrote it.
struct Use {
    clock: Arc<Clock>,
    seq: u64,
    wrote: bool,
}

/// The uses of one allocation, the device it is on and the CUDA context
/// it belongs to (kept alive by the buffer that holds the tracker).
pub(crate) struct Tracker {
    uses: Mutex<Vec<Use>>,
    ordinal: u32,
    context: usize,
}

impl Tracker {
    fn new(ordinal: u32, context: CUcontext) -> Tracker {
        Tracker {
            uses: Mutex::new(Vec::new()),
            ordinal,
            context: context as usize,
        }
    }

    /// Copies `bytes` bytes at `address` (memory this tracker orders) into
    /// `host`, once every write to it has finished.
    ///
    /// # Safety
    /// `address` is valid for `bytes` bytes of the tracked allocation, and
    /// `host` for `bytes` bytes of writes; no write to the memory may start
    /// before the call returns (the caller holds a shared borrow of it).
    unsafe fn read_to_host(&self, address: u64, host: *mut c_void, bytes: usize) -> Result<()> {
        let _current = Current::push(self.context as CUcontext)?;
        self.wait_host(false)?;
        // SAFETY: the caller's contract; every write has finished (waited
        // for above). The copy is synchronous: it has ended on return.
        let status = unsafe { driver::cuMemcpyDtoH_v2(host, address, bytes) };
        check(status, || "copying a buffer to the host".into())
    }

    /// Enqueues on `stream` a wait for every other queue's use that
    /// conflicts with a read (`write == false`) or a write by `clock`'s queue.
    fn order_after(
        &self,
        clock: &Arc<Clock>,
        stream: cust::sys::CUstream,
        write: bool,
    ) -> driver::CUresult {
        for u in lock(&self.uses).iter() {
            if Arc::ptr_eq(&u.clock, clock) || !(write || u.wrote) || u.clock.retired() {
                continue;
            }
            let event = match u.clock.after(u.seq) {
                Ok(Some(event)) => event,
                Ok(None) => continue,
                Err(status) => return status,
            };
            // SAFETY: the stream is the caller's live stream; the event
            // lives as long as the `Arc` held here; flags 0.
            let status = unsafe { driver::cuStreamWaitEvent(stream, event, 0) };
            if status != driver::CUDA_SUCCESS {
                return status;
            }
        }
        driver::CUDA_SUCCESS
    }

    /// Records call `seq` of `clock`'s queue as a use, after its work was
    /// enqueued, or after the queue's stream was waited for (`finished`).
    fn register(&self, clock: &Arc<Clock>, seq: u64, wrote: bool, finished: bool) {
        let mut uses = lock(&self.uses);
        uses.retain(|u| !u.clock.retired());
        if wrote {
            // The write waited for every use listed (it had the buffer to
            // itself: no use was added since), so its call, and any
            // recording after it, also marks their end.
            uses.clear();
            if !finished {
                uses.push(Use {
                    clock: clock.clone(),
                    seq,
                    wrote: true,
                });
            }
        } else if finished {
            // This queue's earlier uses are finished too.
            uses.retain(|u| !Arc::ptr_eq(&u.clock, clock));
        } else if let Some(mine) = uses.iter_mut().find(|u| Arc::ptr_eq(&u.clock, clock)) {
            mine.seq = seq;
        } else {
            uses.push(Use {
                clock: clock.clone(),
                seq,
                wrote: false,
            });
        }
    }

    /// Waits on the host for every use that wrote the buffer (`all`: every
    /// use).
    fn wait_host(&self, all: bool) -> Result<()> {
        for u in lock(&self.uses).iter() {
            if !(all || u.wrote) || u.clock.retired() {
                continue;
            }
            let event = u
                .clock
                .after(u.seq)
                .map_err(|status| Error::driver(status, "recording a queue's event"))?;
            if let Some(event) = event {
                // SAFETY: the event lives as long as the `Arc` held here.
                let status = unsafe { driver::cuEventSynchronize(event) };
                check(status, || "waiting for the work that uses a buffer".into())?;
            }
        }
        Ok(())
    }
}

/// Makes a CUDA context current on this thread until dropped, then restores
/// the one that was.
struct Current;

impl Current {
    fn push(context: CUcontext) -> Result<Current> {
        // SAFETY: `context` is a retained primary context (kept alive by the
        // caller's runtime).
        let status = unsafe { driver::cuCtxPushCurrent_v2(context) };
        check(status, || "making a device's context current".into())?;
        Ok(Current)
    }
}

impl Drop for Current {
    fn drop(&mut self) {
        let mut popped: CUcontext = std::ptr::null_mut();
        // SAFETY: pops the context `push` pushed; writes one handle.
        unsafe {
            driver::cuCtxPopCurrent_v2(&mut popped);
        }
    }
}

/// `len` elements of `T` in device memory, owned: freed when dropped, after
/// every queue that used them has finished with them.
///
/// Made by [`Context::upload`], [`Context::zeros`] or [`Context::adopt`];
/// read back with [`Buffer::to_vec`] or [`Context::copy_to_host`]. Library
/// functions take it by reference (`&buf` to read, `&mut buf` to write), or
/// a part of it through [`Buffer::slice`] and [`Buffer::slice_mut`].
///
/// The buffer keeps its device's CUDA context alive: it stays valid after
/// every [`Context`] of the device is dropped, and any later `Context` of
/// the same device can use it. A `Context` of another device refuses it
/// with [`Error::WrongDevice`].
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
    address: u64,
    len: usize,
    tracker: Tracker,
    // Dropped last: keeps the CUDA context, and so the allocation, alive.
    runtime: Arc<Runtime>,
    _element: PhantomData<T>,
}

/// A read-only view of (part of) a [`Buffer`], borrowed for `'a`.
pub struct View<'a, T: Pod> {
    address: u64,
    len: usize,
    ordinal: u32,
    /// `None` for a view made from raw parts (the caller orders its uses).
    tracker: Option<&'a Tracker>,
    _element: PhantomData<&'a [T]>,
}

/// A writable view of (part of) a [`Buffer`], borrowed exclusively for `'a`.
pub struct ViewMut<'a, T: Pod> {
    address: u64,
    len: usize,
    ordinal: u32,
    tracker: Option<&'a Tracker>,
    _element: PhantomData<&'a mut [T]>,
}

impl<T: Pod> Clone for View<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: Pod> Copy for View<'_, T> {}

/// Device memory a library function may read: a [`Buffer`], a [`View`] or
/// a [`ViewMut`]. Functions take `&impl DeviceRead<Elem = T>`.
pub trait DeviceRead {
    /// The element type.
    type Elem: Pod;
    /// A read-only view of all of it, borrowed from `self`.
    fn view(&self) -> View<'_, Self::Elem>;
}

/// Device memory a library function may write: a [`Buffer`] or a
/// [`ViewMut`]. Functions take `&mut impl DeviceWrite<Elem = T>`.
pub trait DeviceWrite: DeviceRead {
    /// A writable view of all of it, borrowed exclusively from `self`.
    fn view_mut(&mut self) -> ViewMut<'_, Self::Elem>;
}

/// Elements of `U` in `len` elements of `T` at `address`, or an error
/// where they do not come out whole or aligned.
fn cast_len<T, U>(address: u64, len: usize) -> Result<usize> {
    let bytes = len * size_of::<T>();
    if !bytes.is_multiple_of(size_of::<U>()) || !address.is_multiple_of(align_of::<U>() as u64) {
        return Err(Error::InvalidArgument(format!(
            "{len} elements of {} B at {address:#x} are no whole, aligned number of {}-byte \
             elements",
            size_of::<T>(),
            size_of::<U>()
        )));
    }
    Ok(bytes / size_of::<U>())
}

/// `Err(LengthMismatch)` naming `what` unless `given == expected`.
fn same_length(what: &'static str, expected: usize, given: usize) -> Result<()> {
    if given == expected {
        Ok(())
    } else {
        Err(Error::LengthMismatch {
            what,
            expected,
            given,
        })
    }
}

/// The element range `range` of `len` elements, or an error naming it.
fn bounds(range: impl RangeBounds<usize>, len: usize) -> Result<(usize, usize)> {
    let start = match range.start_bound() {
        Bound::Included(&s) => Some(s),
        Bound::Excluded(&s) => s.checked_add(1),
        Bound::Unbounded => Some(0),
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e.checked_add(1),
        Bound::Excluded(&e) => Some(e),
        Bound::Unbounded => Some(len),
    };
    match (start, end) {
        (Some(s), Some(e)) if s <= e && e <= len => Ok((s, e - s)),
        _ => Err(Error::InvalidArgument(format!(
            "the range {:?}..{:?} is outside a buffer of {len} elements",
            range.start_bound(),
            range.end_bound()
        ))),
    }
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
            ///
            /// # Errors
            /// [`Error::InvalidArgument`] for a range outside the view.
            pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<View<'_, T>> {
                let (start, len) = bounds(range, self.len)?;
                Ok(View {
                    address: self.address + (start * size_of::<T>()) as u64,
                    len,
                    ordinal: self.ordinal,
                    tracker: self.tracker,
                    _element: PhantomData,
                })
            }
        }

        impl<T: Pod> DeviceRead for $name<'_, T> {
            type Elem = T;
            fn view(&self) -> View<'_, T> {
                View {
                    address: self.address,
                    len: self.len,
                    ordinal: self.ordinal,
                    tracker: self.tracker,
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
    /// Copies the view to the host, once every queue that writes its buffer
    /// has finished.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a view made from raw parts (nothing
    /// orders its uses: use [`Context::copy_to_host`]); [`Error::Cuda`] if
    /// waiting or copying fails.
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let mut host = vec![T::default(); self.len];
        self.copy_to(&mut host)?;
        Ok(host)
    }

    /// Copies the view into `host`, once every queue that writes its
    /// buffer has finished.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] unless `host` has the view's length; as
    /// [`View::to_vec`].
    pub fn copy_to(&self, host: &mut [T]) -> Result<()> {
        same_length("the host slice a buffer is copied to", self.len, host.len())?;
        let Some(tracker) = self.tracker else {
            return Err(Error::InvalidArgument(
                "a view made from raw parts has no buffer to wait for: copy it with \
                 Context::copy_to_host"
                    .into(),
            ));
        };
        if self.len == 0 {
            return Ok(());
        }
        // SAFETY: the view lies in its tracked buffer, `host` holds `len`
        // elements of `T` (checked), and no write can start while the view
        // borrows the buffer. `T: Pod`, so any bytes are a valid `T`.
        unsafe {
            tracker.read_to_host(
                self.address,
                host.as_mut_ptr().cast(),
                self.len * size_of::<T>(),
            )
        }
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
            tracker: self.tracker,
            _element: PhantomData,
        })
    }

    /// A view of `len` elements at device address `address`, which no
    /// [`Buffer`] owns (memory you allocated yourself, e.g. with `cust`).
    ///
    /// # Safety
    /// For all of `'a`: `address` is the start of `len` initialised,
    /// `T`-aligned elements of device memory in the primary CUDA context of
    /// device `ordinal` (the one [`Context`] uses; `cust::quick_init` makes
    /// another one), that stay allocated and that nothing writes while the
    /// view or work using it may be running; the caller waits for that work
    /// (e.g. [`Context::synchronize`]) before freeing or writing the memory.
    pub unsafe fn from_raw_parts(address: u64, len: usize, ordinal: u32) -> View<'a, T> {
        View {
            address,
            len,
            ordinal,
            tracker: None,
            _element: PhantomData,
        }
    }
}

impl<'a, T: Pod> ViewMut<'a, T> {
    /// A writable view of `len` elements at device address `address`, which
    /// no [`Buffer`] owns.
    ///
    /// # Safety
    /// As [`View::from_raw_parts`], and nothing else reads or writes the
    /// memory while work writing it through this view may be running.
    pub unsafe fn from_raw_parts(address: u64, len: usize, ordinal: u32) -> ViewMut<'a, T> {
        ViewMut {
            address,
            len,
            ordinal,
            tracker: None,
            _element: PhantomData,
        }
    }

    /// A writable view of the elements `range` of this one, borrowed
    /// exclusively from it.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a range outside the view.
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> Result<ViewMut<'_, T>> {
        let (start, len) = bounds(range, self.len)?;
        Ok(ViewMut {
            address: self.address + (start * size_of::<T>()) as u64,
            len,
            ordinal: self.ordinal,
            tracker: self.tracker,
            _element: PhantomData,
        })
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
            tracker: self.tracker,
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
            tracker: self.tracker,
            _element: PhantomData,
        }
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
        self.tracker.ordinal
    }

    /// The device address of the first element (for your own driver calls;
    /// order them against the library's work yourself).
    pub fn device_address(&self) -> u64 {
        self.address
    }

    /// A read-only view of the elements `range`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a range outside the buffer.
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<View<'_, T>> {
        let (start, len) = bounds(range, self.len)?;
        Ok(View {
            address: self.address + (start * size_of::<T>()) as u64,
            len,
            ordinal: self.tracker.ordinal,
            tracker: Some(&self.tracker),
            _element: PhantomData,
        })
    }

    /// A writable view of the elements `range`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a range outside the buffer.
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> Result<ViewMut<'_, T>> {
        let (start, len) = bounds(range, self.len)?;
        Ok(ViewMut {
            address: self.address + (start * size_of::<T>()) as u64,
            len,
            ordinal: self.tracker.ordinal,
            tracker: Some(&self.tracker),
            _element: PhantomData,
        })
    }

    /// Copies the buffer to the host, once every queue that writes it has
    /// finished.
    ///
    /// # Errors
    /// [`Error::Cuda`] if waiting or copying fails (a kernel fault).
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let mut host = vec![T::default(); self.len];
        self.copy_to(&mut host)?;
        Ok(host)
    }

    /// Copies the buffer into `host`, once every queue that writes it has
    /// finished.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] unless `host` has the buffer's length;
    /// [`Error::Cuda`] if waiting or copying fails.
    pub fn copy_to(&self, host: &mut [T]) -> Result<()> {
        self.view().copy_to(host)
    }
}

impl<T: Pod> DeviceRead for Buffer<T> {
    type Elem = T;
    fn view(&self) -> View<'_, T> {
        View {
            address: self.address,
            len: self.len,
            ordinal: self.tracker.ordinal,
            tracker: Some(&self.tracker),
            _element: PhantomData,
        }
    }
}

impl<T: Pod> DeviceWrite for Buffer<T> {
    fn view_mut(&mut self) -> ViewMut<'_, T> {
        ViewMut {
            address: self.address,
            len: self.len,
            ordinal: self.tracker.ordinal,
            tracker: Some(&self.tracker),
            _element: PhantomData,
        }
    }
}

impl<T: Pod> fmt::Debug for Buffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Buffer")
            .field("device", &self.tracker.ordinal)
            .field("address", &format_args!("{:#x}", self.address))
            .field("len", &self.len)
            .finish()
    }
}

impl<T: Pod> Drop for Buffer<T> {
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
            // view remains (they borrow `self`).
            unsafe {
                driver::cuMemFree_v2(self.address);
            }
        }
    }
}

/// The uses of buffers by one call on one queue: each read or write is
/// ordered after the conflicting uses of other queues when it is added, and
/// registered on the buffer when the call ends (`Drop`), numbered after
/// everything the call enqueued, whether it succeeded or not (the queue's
/// clock is recorded behind that number when someone must wait for it).
pub(crate) struct Call<'c> {
    ctx: &'c Context,
    uses: [Option<(&'c Tracker, bool)>; MAX_USES],
    count: usize,
    finished: bool,
}

/// Buffers one call may use (the most any family passes is five).
const MAX_USES: usize = 8;

impl<'c> Call<'c> {
    pub(crate) fn new(ctx: &'c Context) -> Call<'c> {
        Call {
            ctx,
            uses: [None; MAX_USES],
            count: 0,
            finished: false,
        }
    }

    fn add(&mut self, tracker: Option<&'c Tracker>, ordinal: u32, write: bool) -> Result<()> {
        let expected = self.ctx.info().ordinal;
        if ordinal != expected {
            return Err(Error::WrongDevice {
                expected,
                found: ordinal,
            });
        }
        let Some(tracker) = tracker else {
            return Ok(());
        };
        if self.count == MAX_USES {
            return Err(Error::InvalidArgument(format!(
                "one call uses more than {MAX_USES} buffers"
            )));
        }
        let status = tracker.order_after(self.ctx.clock(), self.ctx.raw_stream(), write);
        self.ctx.track(check(status, || {
            "ordering a call after the other queues that use its buffers".into()
        }))?;
        self.uses[self.count] = Some((tracker, write));
        self.count += 1;
        Ok(())
    }

    /// Orders this call's work after every other queue's writes to `view`
    /// and returns its device address.
    ///
    /// # Errors
    /// [`Error::WrongDevice`] for a view of another device; driver failures.
    pub(crate) fn read<T: Pod>(&mut self, view: &View<'c, T>) -> Result<u64> {
        self.add(view.tracker, view.ordinal, false)?;
        Ok(view.address)
    }

    /// Orders this call's work after every other queue's uses of `view`
    /// and returns its device address.
    ///
    /// # Errors
    /// As [`Call::read`].
    pub(crate) fn write<T: Pod>(&mut self, view: &ViewMut<'c, T>) -> Result<u64> {
        self.add(view.tracker, view.ordinal, true)?;
        Ok(view.address)
    }

    /// Says that the queue's stream has been waited for after the call's
    /// work: nothing is left running, nothing for other queues to wait for.
    pub(crate) fn finished(&mut self) {
        self.finished = true;
    }
}

impl Drop for Call<'_> {
    fn drop(&mut self) {
        if self.count == 0 {
            return;
        }
        let clock = self.ctx.clock();
        // Numbered only now that all of the call's work is enqueued: a
        // recording of the clock that covers this number comes after it.
        let seq = clock.issue();
        for (tracker, wrote) in self.uses[..self.count].iter().flatten() {
            tracker.register(clock, seq, *wrote, self.finished);
        }
    }
}

impl Context {
    /// An allocation of `len` elements on this device, not yet initialised
    /// (crate-private: every public constructor fills it, in stream order).
    fn allocate<T: Pod>(&self, len: usize) -> Result<Buffer<T>> {
        self.ensure_alive()?;
        let bytes = len.checked_mul(size_of::<T>()).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "a buffer of {len} elements of {} B overflows the address space",
                size_of::<T>()
            ))
        })?;
        let mut address = 0u64;
        if bytes > 0 {
            // SAFETY: writes one address on success; the context is current
            // (`ensure_alive`).
            let status = unsafe { driver::cuMemAlloc_v2(&mut address, bytes) };
            check(status, || format!("allocating {bytes} B of device memory"))?;
        }
        Ok(Buffer {
            address,
            len,
            tracker: Tracker::new(self.info().ordinal, self.runtime().cuda.as_raw()),
            runtime: self.runtime().clone(),
            _element: PhantomData,
        })
    }

    /// A buffer of `len` zeros, filled in stream order on this queue.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a size that overflows; [`Error::Cuda`]
    /// for an allocation the device cannot make (`code::OUT_OF_MEMORY`).
    pub fn zeros<T: Pod>(&self, len: usize) -> Result<Buffer<T>> {
        let mut buffer = self.allocate::<T>(len)?;
        self.fill_zero(&mut buffer)?;
        Ok(buffer)
    }

    /// Sets every byte of `dst` to zero, in stream order on this queue
    /// (returns at once).
    ///
    /// # Errors
    /// [`Error::WrongDevice`]; driver failures.
    pub fn fill_zero<T: Pod>(&self, dst: &mut impl DeviceWrite<Elem = T>) -> Result<()> {
        self.fill_bits(dst, 1, 0)
    }

    /// Sets every element of `dst` to `value`, in stream order on this
    /// queue (returns at once). Elements of 1, 2 or 4 bytes.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for 8-byte elements; [`Error::WrongDevice`];
    /// driver failures.
    pub fn fill<T: Pod>(&self, dst: &mut impl DeviceWrite<Elem = T>, value: T) -> Result<()> {
        let size = size_of::<T>();
        if size == 8 {
            return Err(Error::InvalidArgument(
                "fill sets elements of 1, 2 or 4 bytes; use upload for 8-byte ones".into(),
            ));
        }
        let mut bits = [0u8; 4];
        // SAFETY: `T` is a plain number of `size <= 4` bytes (`Pod`), read
        // as bytes into a buffer of 4.
        unsafe {
            std::ptr::copy_nonoverlapping(
                (&value as *const T).cast::<u8>(),
                bits.as_mut_ptr(),
                size,
            )
        };
        self.fill_bits(dst, size, u32::from_ne_bytes(bits))
    }

    /// Sets `dst` to words of `size` bytes (1, 2 or 4) holding `bits`.
    fn fill_bits<T: Pod>(
        &self,
        dst: &mut impl DeviceWrite<Elem = T>,
        size: usize,
        bits: u32,
    ) -> Result<()> {
        self.ensure_alive()?;
        let dst = dst.view_mut();
        let mut call = Call::new(self);
        let address = call.write(&dst)?;
        if dst.is_empty() {
            return Ok(());
        }
        let bytes = dst.len() * size_of::<T>();
        let stream = self.raw_stream();
        // SAFETY: `dst` covers `bytes` bytes of live device memory (a view of
        // a buffer, or the raw view's contract), aligned to its elements
        // (of `size` bytes where `size > 1`), ordered after its other uses
        // by `call`.
        let status = unsafe {
            match size {
                4 => driver::cuMemsetD32Async(address, bits, bytes / 4, stream),
                2 => driver::cuMemsetD16Async(address, bits as u16, bytes / 2, stream),
                _ => driver::cuMemsetD8Async(address, bits as u8, bytes, stream),
            }
        };
        self.track(check(status, || "filling a buffer".into()))
    }

    /// A buffer holding a copy of `host`, copied in stream order on this
    /// queue. `host` is free again when the call returns.
    ///
    /// # Errors
    /// As [`Context::zeros`].
    pub fn upload<T: Pod>(&self, host: &[T]) -> Result<Buffer<T>> {
        let mut buffer = self.allocate::<T>(host.len())?;
        self.copy_from_host(host, &mut buffer)?;
        Ok(buffer)
    }

    /// Copies `host` into `dst`, in stream order on this queue; `host` is
    /// free again when the call returns.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] unless the lengths are equal;
    /// [`Error::WrongDevice`]; driver failures.
    pub fn copy_from_host<T: Pod>(
        &self,
        host: &[T],
        dst: &mut impl DeviceWrite<Elem = T>,
    ) -> Result<()> {
        self.ensure_alive()?;
        let dst = dst.view_mut();
        same_length(
            "the buffer a host slice is copied to",
            host.len(),
            dst.len(),
        )?;
        let mut call = Call::new(self);
        let address = call.write(&dst)?;
        if host.is_empty() {
            return Ok(());
        }
        // SAFETY: both sides hold `len` elements of `T`; the device side is
        // ordered after its other uses by `call`. From pageable host memory
        // the driver stages the bytes before returning, so `host` may be
        // reused at once; from page-locked memory it would read `host`
        // later, so wait for the stream in that case too (below).
        let status = unsafe {
            driver::cuMemcpyHtoDAsync_v2(
                address,
                host.as_ptr().cast(),
                size_of_val(host),
                self.raw_stream(),
            )
        };
        // `host` may be page-locked memory (registered by the caller), which
        // the copy reads asynchronously: the borrow ends at return.
        self.finish_host_copy(&mut call, status, "to the device")
    }

    /// The end of a copy between the host and a buffer whose driver call
    /// returned `status`: the error, if any; else a wait for the stream
    /// (the host memory is the caller's again when the call returns), and
    /// `call` marked finished. `direction` completes "copying … ".
    fn finish_host_copy(
        &self,
        call: &mut Call<'_>,
        status: driver::CUresult,
        direction: &str,
    ) -> Result<()> {
        self.track(check(status, || format!("copying {direction}")))?;
        // SAFETY: the stream is valid for the life of `self`.
        let status = unsafe { driver::cuStreamSynchronize(self.raw_stream()) };
        self.track(check(status, || format!("waiting for a copy {direction}")))?;
        call.finished();
        Ok(())
    }

    /// Copies `src` into `host`, in stream order on this queue, and waits
    /// for it.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] unless the lengths are equal;
    /// [`Error::WrongDevice`]; driver failures.
    pub fn copy_to_host<T: Pod>(
        &self,
        src: &impl DeviceRead<Elem = T>,
        host: &mut [T],
    ) -> Result<()> {
        self.ensure_alive()?;
        let src = src.view();
        same_length(
            "the host slice a buffer is copied to",
            src.len(),
            host.len(),
        )?;
        let mut call = Call::new(self);
        let address = call.read(&src)?;
        if host.is_empty() {
            return Ok(());
        }
        // SAFETY: both sides hold `len` elements of `T` (`T: Pod`: any bytes
        // are a valid `T`); the device side is ordered after its writers by
        // `call`; `host` is borrowed until the stream is waited for below.
        let status = unsafe {
            driver::cuMemcpyDtoHAsync_v2(
                host.as_mut_ptr().cast(),
                address,
                size_of_val(host),
                self.raw_stream(),
            )
        };
        self.finish_host_copy(&mut call, status, "to the host")
    }

    /// Copies `src` to a new `Vec`, in stream order on this queue, and
    /// waits for it.
    ///
    /// # Errors
    /// As [`Context::copy_to_host`].
    pub fn download<T: Pod>(&self, src: &impl DeviceRead<Elem = T>) -> Result<Vec<T>> {
        let mut host = vec![T::default(); src.view().len()];
        self.copy_to_host(src, &mut host)?;
        Ok(host)
    }

    /// Copies `src` into `dst` on the device, in stream order on this queue
    /// (returns at once).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] unless the lengths are equal;
    /// [`Error::WrongDevice`]; driver failures.
    pub fn copy<T: Pod>(
        &self,
        src: &impl DeviceRead<Elem = T>,
        dst: &mut impl DeviceWrite<Elem = T>,
    ) -> Result<()> {
        self.ensure_alive()?;
        let (src, dst) = (src.view(), dst.view_mut());
        same_length("a device copy's destination", src.len(), dst.len())?;
        let mut call = Call::new(self);
        let from = call.read(&src)?;
        let to = call.write(&dst)?;
        if src.is_empty() {
            return Ok(());
        }
        // SAFETY: both views hold `len` elements of live device memory,
        // ordered after their other uses by `call`; they do not overlap (a
        // buffer cannot be borrowed as both; raw views promise it).
        let status = unsafe {
            driver::cuMemcpyDtoDAsync_v2(to, from, src.len() * size_of::<T>(), self.raw_stream())
        };
        self.track(check(status, || "copying between buffers".into()))
    }

    /// Takes ownership of a `cust` allocation: the buffer frees it when
    /// dropped, after the work that uses it. Work you enqueued on it
    /// yourself (cust's `unsafe` async copies, your own kernels) must have
    /// finished; cust's safe copies have, when they return.
    ///
    /// # Errors
    /// [`Error::WrongDevice`] for memory of another device;
    /// [`Error::InvalidArgument`] for memory of another CUDA context of this
    /// device (e.g. one made by `cust::quick_init`, which the library's
    /// kernels cannot reach). The allocation is freed in both cases.
    pub fn adopt<T: Pod>(&self, buffer: DeviceBuffer<T>) -> Result<Buffer<T>> {
        self.ensure_alive()?;
        let len = buffer.len();
        let address = buffer.as_device_ptr().as_raw();
        if len > 0 {
            let mut owner: CUcontext = std::ptr::null_mut();
            // SAFETY: writes one handle; any address is a valid query.
            let status = unsafe {
                driver::cuPointerGetAttribute(
                    (&mut owner as *mut CUcontext).cast(),
                    driver::CU_POINTER_ATTRIBUTE_CONTEXT,
                    address,
                )
            };
            check(status, || "asking which context owns an allocation".into())?;
            if owner != self.runtime().cuda.as_raw() {
                let mut ordinal: std::ffi::c_int = -1;
                // SAFETY: writes one int; the address was accepted above.
                let status = unsafe {
                    driver::cuPointerGetAttribute(
                        (&mut ordinal as *mut std::ffi::c_int).cast(),
                        driver::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                        address,
                    )
                };
                check(status, || "asking which device owns an allocation".into())?;
                let expected = self.info().ordinal;
                return Err(if ordinal as u32 != expected {
                    Error::WrongDevice {
                        expected,
                        found: ordinal as u32,
                    }
                } else {
                    Error::InvalidArgument(format!(
                        "an allocation of another CUDA context of device {expected} (not its \
                         primary context, which the library uses)"
                    ))
                });
            }
        }
        // cust frees with cuMemFree on drop; the buffer now does.
        std::mem::forget(buffer);
        Ok(Buffer {
            address,
            len,
            tracker: Tracker::new(self.info().ordinal, self.runtime().cuda.as_raw()),
            runtime: self.runtime().clone(),
            _element: PhantomData,
        })
    }

    /// Free and total device memory in bytes (`cuMemGetInfo`).
    ///
    /// # Errors
    /// Driver failures.
    pub fn memory_info(&self) -> Result<(usize, usize)> {
        self.ensure_alive()?;
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: writes two integers; the context is current.
        let status = unsafe { driver::cuMemGetInfo_v2(&mut free, &mut total) };
        check(status, || "reading the free device memory".into())?;
        Ok((free, total))
    }
}

#[cfg(test)]
mod tests {
    use super::{bounds, cast_len};

    #[test]
    fn casts_keep_whole_aligned_elements() {
        assert_eq!(cast_len::<u8, u32>(256, 16).unwrap(), 4);
        assert_eq!(cast_len::<u32, u8>(256, 4).unwrap(), 16);
        assert_eq!(cast_len::<f32, u64>(256, 0).unwrap(), 0);
        assert!(cast_len::<u8, u32>(256, 15).is_err()); // not whole
        assert!(cast_len::<u8, u32>(258, 16).is_err()); // not aligned
        assert!(cast_len::<u32, f64>(260, 2).is_err());
    }

    #[test]
    fn ranges_are_checked() {
        assert_eq!(bounds(.., 10).unwrap(), (0, 10));
        assert_eq!(bounds(2..5, 10).unwrap(), (2, 3));
        assert_eq!(bounds(2..=5, 10).unwrap(), (2, 4));
        assert_eq!(bounds(10.., 10).unwrap(), (10, 0));
        assert!(bounds((Bound::Included(5), Bound::Excluded(4)), 10).is_err());
        assert!(bounds(0..11, 10).is_err());
        assert!(bounds(..=usize::MAX, 10).is_err());
        assert!(bounds((Bound::Excluded(usize::MAX), Bound::Unbounded), 10).is_err());
    }
    use std::ops::Bound;

    mod properties {
        use super::bounds;
        use crate::edges::edgy;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn ranges_are_inside_or_refused(start in edgy(), end in edgy(), len in edgy(), inclusive: bool) {
                let got = if inclusive { bounds(start..=end, len) } else { bounds(start..end, len) };
                if let Ok((s, n)) = got {
                    prop_assert_eq!(s, start);
                    prop_assert!(s.checked_add(n).is_some_and(|e| e <= len));
                    prop_assert_eq!(s + n, if inclusive { end + 1 } else { end });
                }
            }
        }
    }
}
