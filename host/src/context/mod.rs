//! The runtime: the CUDA context and loaded kernels of one device (shared),
//! and per [`Context`] one stream with the scratch memory its work reuses.
//!
//! `runtime` chooses and loads the kernels' module and holds what every
//! `Context` of a device shares; the methods of `Context` live beside what
//! they reach: `launch` (kernels), `constant` (`__constant__` symbols) and
//! `scratch` (the memory work on one stream reuses).

pub(crate) mod clock;
mod constant;
mod launch;
pub(crate) mod runtime;
pub(crate) mod scratch;

use crate::device::DeviceInfo;
use crate::driver::{self, code};
use crate::error::{Error, Result, check};
use clock::Clock;
use cust::memory::{DeviceBuffer, DeviceCopy};
use cust::stream::{Stream, StreamFlags};
use runtime::{Runtime, describe, lock};
use std::cell::{Cell, RefCell};
use std::ffi::c_int;
use std::mem::ManuallyDrop;
use std::sync::Arc;

/// One ordered queue of GPU work on one device: the device's CUDA context
/// and loaded kernels (shared with every `Context` made from this one), a
/// stream, and the scratch memory work on that stream reuses.
///
/// Operations run on [`Context::stream`] in call order. Functions that
/// return a host value (`sum`, `min`, ...) wait for it. Functions that write
/// into device buffers you pass are named `*_into` and only enqueue: they
/// return a [`Pending`](crate::Pending) that waits for the GPU when dropped
/// (the buffers order their own uses: see [`crate::memory`]).
///
/// For work that overlaps, make more queues with [`Context::new_stream`] or
/// [`Context::with_stream`]: each has its own stream and scratch memory, so
/// library work on two of them never shares a buffer.
///
/// A `Context` is `Send`: move it to the thread that uses it (one per GPU
/// with `std::thread::scope` is the natural multi-GPU program). Every method
/// first makes the device's CUDA context current on the calling thread, so a
/// thread may also drive several devices in turn; for your own `cust` calls
/// (allocations, copies) after a move, call [`Context::bind`] first. It is
/// not `Sync`: one thread at a time uses one queue; make another with
/// [`Context::new_stream`] for another thread on the same device.
///
/// After a kernel fault (an illegal address, a trap), CUDA cannot recover the
/// context: every later call of every `Context` of the device returns
/// [`Error::ContextLost`].
pub struct Context {
    /// Destroyed in `Drop` when owned, only once everything on it has
    /// finished: a stream whose wait failed is leaked with the scratch
    /// memory.
    stream: QueueStream,
    /// While this queue records a graph ([`Context::capture`]): the buffers
    /// the captured calls use, and what the graph must keep.
    pub(crate) recording: RefCell<Option<crate::graph::Recording>>,
    /// Device memory multi-pass and single-pass kernels reuse; zeroed when
    /// (re)allocated, grown on demand, never shrunk behind the user's back.
    scratch: RefCell<Option<DeviceBuffer<u8>>>,
    /// Counters kernels leave zero when they finish (the column sums'
    /// tallies, one per column): zeroed when (re)allocated, grown on demand.
    tallies: RefCell<Option<DeviceBuffer<u64>>>,
    /// The single-pass scans' state (their ticket and one status per
    /// tile), written by nothing else: zeroed when (re)allocated.
    scan_state: RefCell<Option<DeviceBuffer<u64>>>,
    /// What `scan_state` has seen since a launch last zeroed it
    /// (`scan::single_pass_state` decides from it when to zero).
    pub(crate) scan_uses: Cell<scratch::StateUses>,
    /// The number of the last launch that claimed work in the scratch
    /// memory by launch number ([`Context::next_epoch`]).
    epoch: Cell<u32>,
    /// Numbers the calls that use buffers and is recorded when another
    /// queue, a buffer's `Drop` or a host read must wait for one
    /// ([`crate::memory`]).
    clock: Arc<Clock>,
    runtime: Arc<Runtime>,
}

/// A queue's stream: its own, or one of the caller's that it only uses.
enum QueueStream {
    /// Made by the library or handed over with [`Context::with_stream`].
    Owned(ManuallyDrop<Stream>),
    /// Made by the library with flags cust cannot give (a capture's
    /// non-blocking stream); destroyed with the queue.
    Created(cust::sys::CUstream),
    /// The caller's ([`Context::from_raw_stream`], or a `cudarc` stream the
    /// queue keeps alive through `_keep`): never destroyed here.
    Borrowed {
        raw: cust::sys::CUstream,
        _keep: Option<Box<dyn std::any::Any + Send>>,
    },
}

// SAFETY: a stream handle is a driver object usable from any thread (the
// driver API is thread-safe); what keeps a borrowed one alive is `Send`.
unsafe impl Send for QueueStream {}

/// Driver codes that mean "no usable device" rather than a failure.
const NO_DEVICE_CODES: [u32; 4] = [
    code::NO_DEVICE,
    code::STUB_LIBRARY,
    code::INSUFFICIENT_DRIVER,
    code::SHARED_OBJECT_INIT_FAILED,
];

/// Initialises the driver once per process (later calls are cheap) and
/// counts the devices.
fn init() -> Result<u32> {
    // Through the raw driver call: cust maps codes it does not know (34,
    // a stub library) to "unknown error", which would hide "no device".
    // SAFETY: cuInit takes flags by value and touches no caller memory.
    let status = unsafe { driver::cuInit(0) };
    if NO_DEVICE_CODES.contains(&status) {
        return Err(Error::NoDevice {
            reason: Error::driver(status, "initialising CUDA (cuInit)").to_string(),
        });
    }
    check(status, || "initialising CUDA (cuInit)".into())?;
    let count =
        cust::device::Device::num_devices().map_err(|e| Error::cust(e, "counting CUDA devices"))?;
    if count == 0 {
        return Err(Error::NoDevice {
            reason: "the driver reports no CUDA device".into(),
        });
    }
    Ok(count)
}

impl Context {
    /// Every CUDA device of this machine, by ordinal: name, memory, compute
    /// capability and the rest of [`DeviceInfo`], read without creating a
    /// CUDA context. `ptx_target` and `jit` say what [`Context::new`] would
    /// load; a device older than compute capability 7.0, which
    /// `Context::new` refuses, is listed with an empty `ptx_target`.
    ///
    /// # Errors
    /// [`Error::NoDevice`] without a usable GPU, [`Error::InvalidArgument`]
    /// for an unknown `WARPSPEED_PTX`, [`Error::Cuda`] for driver failures.
    pub fn devices() -> Result<Vec<DeviceInfo>> {
        let count = init()?;
        let file = crate::ptx::ptx_file()?;
        (0..count)
            .map(|ordinal| {
                let device = cust::device::Device::get_device(ordinal)
                    .map_err(|e| Error::cust(e, format!("opening device {ordinal}")))?;
                Ok(describe(device, ordinal, file.as_ref())?.0)
            })
            .collect()
    }

    /// Initialises CUDA on device `ordinal`, loads the kernels' module and
    /// creates a stream. Each kernel is resolved in the module the first
    /// time it is launched (the driver loads a kernel's code only then).
    ///
    /// On Ampere (8.x) and Hopper (9.x) the kernels are the shipped machine
    /// code for the architecture (cubins): loading takes milliseconds. Other
    /// devices get the newest PTX they run, which the driver compiles (about
    /// a second the first time, then from its cache). The environment
    /// variable `WARPSPEED_PTX` (e.g. `sm_70`) forces the PTX of a target.
    ///
    /// # Errors
    /// [`Error::NoDevice`] without a usable GPU, [`Error::InvalidArgument`]
    /// for an ordinal beyond the device count or an unknown `WARPSPEED_PTX`,
    /// [`Error::UnsupportedDevice`] before compute capability 7.0,
    /// [`Error::UnsupportedPtx`] when the driver cannot load the PTX,
    /// [`Error::Cuda`] for other driver failures. Kernels are resolved on
    /// first use, so a module that lacks one gives [`Error::MissingEntry`]
    /// from the first call that launches it.
    pub fn new(ordinal: u32) -> Result<Context> {
        let count = init()?;
        if ordinal >= count {
            return Err(Error::InvalidArgument(format!(
                "device {ordinal} requested, but this machine has {count} CUDA device(s)"
            )));
        }
        let runtime = Arc::new(Runtime::open(ordinal)?);
        let stream = Stream::new(StreamFlags::DEFAULT, None)
            .map_err(|e| Error::cust(e, "creating a stream"))?;
        Context::on(runtime, stream)
    }

    /// Makes this context's device (its primary CUDA context) current on the
    /// calling thread. The library's own functions do this themselves; call
    /// it before your own `cust` calls (allocating, copying) on a thread this
    /// context was moved to, or after using another device on this thread.
    ///
    /// # Errors
    /// [`Error::Cuda`] if the driver refuses.
    pub fn bind(&self) -> Result<()> {
        let mine = self.runtime.cuda.as_raw();
        let mut current: cust::sys::CUcontext = std::ptr::null_mut();
        // SAFETY: writes one handle.
        let status = unsafe { driver::cuCtxGetCurrent(&mut current) };
        check(status, || "reading the current CUDA context".into())?;
        if current != mine {
            // SAFETY: `mine` is the retained primary context, alive as long
            // as the runtime.
            let status = unsafe { driver::cuCtxSetCurrent(mine) };
            check(status, || {
                format!(
                    "making device {}'s context current",
                    self.runtime.info.ordinal
                )
            })?;
        }
        Ok(())
    }

    /// Whether this context's device can read and write `other`'s memory
    /// directly (over NVLink or PCIe), as [`Context::enable_peer_access`]
    /// would allow. `false` for the same device.
    ///
    /// # Errors
    /// [`Error::Cuda`] if the driver cannot say.
    pub fn can_access_peer(&self, other: &Context) -> Result<bool> {
        let (mine, theirs) = (self.info().ordinal, other.info().ordinal);
        if mine == theirs {
            return Ok(false);
        }
        let mut can: c_int = 0;
        // SAFETY: writes one int; ordinals are valid device handles (the
        // driver's `CUdevice` is the ordinal), both opened by `Context::new`.
        let status =
            unsafe { driver::cuDeviceCanAccessPeer(&mut can, mine as c_int, theirs as c_int) };
        check(status, || {
            format!("asking whether device {mine} can access device {theirs}")
        })?;
        Ok(can != 0)
    }

    /// Lets kernels and copies on this context's device access `other`'s
    /// memory directly, where the hardware allows it (one direction: call it
    /// on both for both): for your own kernels and driver copies, and for
    /// NCCL, which uses the link. The library's calls still take buffers of
    /// their context's device only ([`Context::copy`] included: between
    /// devices, copy through the host). Enabling twice is not an error.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] where the devices cannot access each other
    /// (or are the same device); [`Error::Cuda`] for driver failures.
    pub fn enable_peer_access(&self, other: &Context) -> Result<()> {
        let (mine, theirs) = (self.info().ordinal, other.info().ordinal);
        if !self.can_access_peer(other)? {
            return Err(Error::InvalidArgument(format!(
                "device {mine} cannot access device {theirs}'s memory directly"
            )));
        }
        self.bind()?;
        // SAFETY: `other`'s runtime keeps its primary context alive; flags 0.
        let status = unsafe { driver::cuCtxEnablePeerAccess(other.runtime.cuda.as_raw(), 0) };
        if status == code::PEER_ACCESS_ALREADY_ENABLED {
            return Ok(());
        }
        check(status, || {
            format!("enabling access from device {mine} to device {theirs}")
        })
    }

    fn on(runtime: Arc<Runtime>, stream: Stream) -> Result<Context> {
        Context::on_stream(runtime, QueueStream::Owned(ManuallyDrop::new(stream)))
    }

    fn on_stream(runtime: Arc<Runtime>, stream: QueueStream) -> Result<Context> {
        let raw = match &stream {
            QueueStream::Owned(owned) => owned.as_inner(),
            QueueStream::Created(raw) | QueueStream::Borrowed { raw, .. } => *raw,
        };
        let clock = Arc::new(Clock::new(runtime.clone(), raw)?);
        Ok(Context {
            stream,
            recording: RefCell::new(None),
            scratch: RefCell::new(None),
            tallies: RefCell::new(None),
            scan_state: RefCell::new(None),
            scan_uses: Cell::new(scratch::StateUses::default()),
            epoch: Cell::new(0),
            clock,
            runtime,
        })
    }

    /// This queue's clock ([`crate::memory`]).
    pub(crate) fn clock(&self) -> &Arc<Clock> {
        &self.clock
    }

    /// The driver handle of this queue's stream.
    pub(crate) fn raw_stream(&self) -> cust::sys::CUstream {
        if let Some(recording) = self.recording.borrow().as_ref() {
            // The branch of the call being recorded.
            return recording.stream();
        }
        match &self.stream {
            QueueStream::Owned(stream) => stream.as_inner(),
            QueueStream::Created(raw) | QueueStream::Borrowed { raw, .. } => *raw,
        }
    }

    /// A queue for [`Context::capture`]: a new stream that does not wait
    /// for the legacy default stream (a capture must not: the synchronous
    /// zeroing of new scratch memory runs there), and its own scratch
    /// memory.
    pub(crate) fn capture_queue(&self) -> Result<Context> {
        self.ensure_alive()?;
        let mut stream: cust::sys::CUstream = std::ptr::null_mut();
        // SAFETY: writes one handle on success; the context is current.
        let status = unsafe { driver::cuStreamCreate(&mut stream, driver::CU_STREAM_NON_BLOCKING) };
        check(status, || "creating a stream".into())?;
        Context::on_stream(self.runtime.clone(), QueueStream::Created(stream)).inspect_err(|_| {
            // SAFETY: created above, used by nothing.
            unsafe {
                driver::cuStreamDestroy_v2(stream);
            }
        })
    }

    /// Whether this queue is recording a graph.
    pub(crate) fn capturing(&self) -> bool {
        self.recording.borrow().is_some()
    }

    /// What every queue of this device shares.
    pub(crate) fn runtime(&self) -> &Arc<Runtime> {
        &self.runtime
    }

    /// Another queue on the same device: a new stream and its own scratch
    /// memory, sharing this context's loaded kernels. Work on the two runs
    /// in any order relative to each other.
    ///
    /// # Errors
    /// [`Error::ContextLost`] after a kernel fault; [`Error::Cuda`] if the
    /// driver cannot create a stream.
    pub fn new_stream(&self) -> Result<Context> {
        self.ensure_alive()?;
        let stream = Stream::new(StreamFlags::DEFAULT, None)
            .map_err(|e| Error::cust(e, "creating a stream"))?;
        Context::on(self.runtime.clone(), stream)
    }

    /// Another queue on the same device that runs on `stream`, a stream of
    /// yours created in this device's primary context (cust's
    /// `Stream::new` on a thread where [`Context::bind`] was called), with
    /// its own scratch memory. The queue owns the stream from now on (and
    /// destroys it when dropped); order it against your other work with
    /// events or by synchronizing. `cust`'s `Stream` is the one `cust`
    /// type the safe API takes: owned, it can be checked, and nothing else
    /// can reach it after the call.
    ///
    /// # Errors
    /// [`Error::WrongDevice`] for a stream of another device;
    /// [`Error::InvalidArgument`] for a stream of another CUDA context of
    /// this device (its work could not reach the library's memory);
    /// [`Error::ContextLost`] after a kernel fault; [`Error::Cuda`] if the
    /// driver cannot say whose the stream is or create the queue's event.
    /// The stream is destroyed in every case.
    pub fn with_stream(&self, stream: Stream) -> Result<Context> {
        self.ensure_alive()?;
        // SAFETY: the stream is a live stream `cust` created (owned here).
        unsafe { self.check_stream(stream.as_inner())? };
        Context::on(self.runtime.clone(), stream)
    }

    /// Another queue on the same device that runs on `stream`, a stream of
    /// yours (made by the CUDA runtime, another library or your own driver
    /// calls) in this device's primary context, with its own scratch
    /// memory. The queue only uses the stream: dropping it waits for the
    /// stream and leaves it to you. The library orders its own calls on
    /// the queue against its buffers' other uses, as on any queue; work
    /// you enqueue on the stream yourself is yours to order.
    ///
    /// # Safety
    /// `stream` is a live stream handle (or the legacy default stream `0`)
    /// that stays alive until the returned queue is dropped: nothing
    /// destroys it before that.
    ///
    /// # Errors
    /// As [`Context::with_stream`]: [`Error::WrongDevice`] for a stream of
    /// another device, [`Error::InvalidArgument`] for a stream of another
    /// CUDA context of this device.
    pub unsafe fn from_raw_stream(&self, stream: cust::sys::CUstream) -> Result<Context> {
        self.ensure_alive()?;
        // SAFETY: the caller's contract: a live stream.
        unsafe { self.queue_on(stream, None) }
    }

    /// A queue on the caller's live `stream` (checked to be of this
    /// device's primary context) that keeps `keep` until dropped.
    ///
    /// # Safety
    /// `stream` is live until the queue is dropped (`keep` may be what
    /// keeps it so).
    pub(crate) unsafe fn queue_on(
        &self,
        stream: cust::sys::CUstream,
        keep: Option<Box<dyn std::any::Any + Send>>,
    ) -> Result<Context> {
        // SAFETY: the caller's contract: a live stream.
        unsafe { self.check_stream(stream)? };
        Context::on_stream(
            self.runtime.clone(),
            QueueStream::Borrowed {
                raw: stream,
                _keep: keep,
            },
        )
    }

    /// `Ok` when `stream` belongs to this device's primary context.
    ///
    /// # Safety
    /// `stream` is a live stream handle.
    unsafe fn check_stream(&self, stream: cust::sys::CUstream) -> Result<()> {
        let mut owner: cust::sys::CUcontext = std::ptr::null_mut();
        // SAFETY: a live stream (caller); writes one handle.
        let status = unsafe { driver::cuStreamGetCtx(stream, &mut owner) };
        check(status, || "asking which context a stream belongs to".into())?;
        if owner != self.runtime.cuda.as_raw() {
            let found = context_device(owner)?;
            return Err(Error::foreign_context(
                self.info().ordinal,
                found,
                "a stream",
            ));
        }
        Ok(())
    }

    /// The device this context runs on.
    pub fn info(&self) -> &DeviceInfo {
        &self.runtime.info
    }

    /// The `cust` stream every operation of this context is enqueued on,
    /// to order your own work against it (events, `synchronize`) when you
    /// mix the two; `None` for a queue on a stream of yours
    /// ([`Context::from_raw_stream`], a `cudarc` stream), which you hold
    /// already. [`Context::cu_stream`] is the driver handle of either.
    ///
    /// # Safety
    /// `cust`'s `Stream` has safe methods that are unsound, which the
    /// caller must not use: `add_callback` takes a closure that is not
    /// `'static` (it may run after what it borrows is gone), and a callback
    /// must not drop a [`Context`] or a [`Buffer`](crate::Buffer) (CUDA
    /// allows no driver call there: their waits may fail, or never return
    /// in a callback of the stream they wait for). Work
    /// you enqueue on the stream yourself is yours to keep in bounds and
    /// ordered against the library's buffers.
    ///
    /// Safe code cannot reach it:
    ///
    /// ```compile_fail,E0133
    /// # fn main() -> warpspeed::Result<()> {
    /// let ctx = warpspeed::Context::new(0)?;
    /// let stream = ctx.stream(); // error: call to unsafe function
    /// # let _ = stream; Ok(()) }
    /// ```
    pub unsafe fn stream(&self) -> Option<&Stream> {
        match &self.stream {
            QueueStream::Owned(stream) => Some(stream),
            QueueStream::Created(_) | QueueStream::Borrowed { .. } => None,
        }
    }

    /// The driver handle (`CUstream`) of this queue's stream, for your own
    /// driver calls and for other libraries (`cudarc`'s
    /// `wrap_borrowed_stream`, a runtime `cudaStream_t`). Using it is
    /// `unsafe` there: the queue owns the stream (unless it was made with
    /// [`Context::from_raw_stream`]) and destroys it when dropped, and
    /// work you enqueue on it is yours to order against the library's
    /// buffers.
    pub fn cu_stream(&self) -> cust::sys::CUstream {
        self.raw_stream()
    }

    /// Waits for everything enqueued on this context's stream so far.
    ///
    /// # Errors
    /// The first failure of any of that work ([`Error::Cuda`]; a kernel fault
    /// also turns every later call into [`Error::ContextLost`]).
    pub fn synchronize(&self) -> Result<()> {
        self.ensure_alive()?;
        self.refuse_in_capture("waiting for the stream")?;
        // SAFETY: the stream handle is valid for the life of `self`.
        let status = unsafe { driver::cuStreamSynchronize(self.raw_stream()) };
        self.track(check(status, || {
            "waiting for the stream (a kernel enqueued earlier failed)".into()
        }))
    }

    /// Fails with [`Error::ContextLost`] after a kernel fault; otherwise
    /// makes the device current on this thread ([`Context::bind`]). Every
    /// operation calls it before its first driver call.
    pub(crate) fn ensure_alive(&self) -> Result<()> {
        if let Some(cause) = &*lock(&self.runtime.lost) {
            return Err(Error::ContextLost {
                cause: Box::new(cause.clone()),
            });
        }
        self.bind()
    }

    /// Remembers a sticky failure so that later calls report `ContextLost`.
    pub(crate) fn track<T>(&self, result: Result<T>) -> Result<T> {
        if let Err(e) = &result {
            if e.is_sticky() {
                lock(&self.runtime.lost).get_or_insert_with(|| e.clone());
            }
        }
        result
    }

    /// Waits for the stream, then copies the `T` at device address
    /// `address` to the host.
    ///
    /// # Safety
    /// `address` must be valid for reading one `T`.
    pub(crate) unsafe fn read_back<T: DeviceCopy + Default>(&self, address: u64) -> Result<T> {
        self.synchronize()?;
        let mut value = T::default();
        // SAFETY: `value` is a host `T`; the address holds one (caller); the
        // stream has finished writing it.
        let status = unsafe {
            driver::cuMemcpyDtoH_v2((&mut value as *mut T).cast(), address, size_of::<T>())
        };
        self.track(check(status, || "copying a result to the host".into()))?;
        Ok(value)
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // The stream and the scratch memory are released next, perhaps on
        // another thread than the one that made them: make the device current.
        let _ = self.bind();
        // Work still on the stream may use the scratch memory freed next (a
        // `Pending` cannot outlive the context, but one can be leaked).
        // SAFETY: the stream handle is valid until it is destroyed below.
        let status = unsafe { driver::cuStreamSynchronize(self.raw_stream()) };
        if status != driver::CUDA_SUCCESS {
            // Not waited for (a kernel fault, or a wait the driver refuses
            // where it is made, as in a stream callback): the work may
            // still run.
            // Leak rather than free under it: the stream stays valid and
            // the clock live, so every buffer this queue used still waits
            // for its uses before it is freed (or, if that fails too,
            // leaks); the scratch memory is never freed.
            std::mem::forget(self.scratch.take());
            std::mem::forget(self.tallies.take());
            std::mem::forget(self.scan_state.take());
            return;
        }
        // Every use of a buffer this queue made has finished: its uses need
        // no more waiting, and the stream handle the clock holds is
        // destroyed (or handed back) next.
        self.clock.retire();
        match &mut self.stream {
            // SAFETY: dropped once, here; nothing uses the stream after
            // this (the clock no longer records on it).
            QueueStream::Owned(stream) => unsafe { ManuallyDrop::drop(stream) },
            // SAFETY: as above; created by `cuStreamCreate`.
            QueueStream::Created(stream) => unsafe {
                driver::cuStreamDestroy_v2(*stream);
            },
            QueueStream::Borrowed { .. } => {}
        }
    }
}

/// The ordinal of the device CUDA context `context` belongs to; `context`
/// is the context of a live stream the caller owns.
fn context_device(context: cust::sys::CUcontext) -> Result<u32> {
    let _current = crate::memory::Current::push(context)?;
    let mut device: c_int = -1;
    // SAFETY: writes one int; `context` is current (pushed above).
    let status = unsafe { driver::cuCtxGetDevice(&mut device) };
    check(status, || {
        "asking which device a stream's context is on".into()
    })?;
    Ok(device.max(0) as u32)
}
