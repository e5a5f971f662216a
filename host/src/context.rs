//! The runtime: the CUDA context and loaded kernels of one device (shared),
//! and per [`Context`] one stream with the scratch memory its work reuses.

use crate::device::{DeviceInfo, KernelResources};
use crate::driver::{self, attribute, code};
use crate::error::{Error, Result, check};
use crate::launch::LaunchConfig;
use crate::ptx::Image;
use cust::memory::{DeviceBuffer, DeviceCopy};
use cust::stream::{Stream, StreamFlags};
use cust::sys::{CUevent, CUfunction, CUmodule};
use std::cell::{Cell, RefCell};
use std::ffi::{CString, c_int, c_void};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use warpspeed_gpu::ConstantSymbol;
use warpspeed_gpu::kernel::{Entry, Kernel, KernelArgs, MAX_PARAMS};

/// Where a context's scratch memory ([`Context::scratch`]) keeps what its
/// families leave there, in bytes from its start. The tickets are zero
/// between launches (zeroed when the scratch is allocated, reset by the
/// kernel that takes the last one); the partials are whatever the last
/// work left, and each launch writes before it reads them.
pub(crate) mod scratch {
    use warpspeed_gpu::gemm::SPLIT_TICKETS;
    use warpspeed_gpu::histogram::LANE_WORK_WORDS;

    /// The single-pass reduction's ticket.
    pub const COUNTER_OFFSET: u64 = 0;
    /// The result slot of the waiting reductions (`sum`, `min`, `max`).
    pub const RESULT_OFFSET: u64 = 16;
    /// The lane-private histogram's claim and flag.
    pub const HISTOGRAM_OFFSET: usize = 256;
    /// A split product's workspace: its tile tickets, then its slices'
    /// partial tiles, which share the space of the reduction's partials
    /// (work on one stream runs one kernel at a time).
    pub const SPLIT_OFFSET: usize = HISTOGRAM_OFFSET + (LANE_WORK_WORDS * 4).next_multiple_of(256);
    /// The reductions' per-block partials: after the split product's
    /// tickets, which must stay zero.
    pub const PARTIALS_OFFSET: usize = SPLIT_OFFSET + SPLIT_TICKETS * 4;

    /// Where a product packs its operands (`gemm::Packing`): after its
    /// split workspace of `split_words` words, or after the tickets alone
    /// where it does not split, 256-byte aligned.
    pub const fn packed_offset(split_words: usize) -> usize {
        let words = if split_words > SPLIT_TICKETS {
            split_words
        } else {
            SPLIT_TICKETS
        };
        (SPLIT_OFFSET + words * 4).next_multiple_of(256)
    }

    // The regions follow each other without overlap, each 256-byte
    // aligned (the partials are read as 16-byte vectors).
    const _: () = assert!(
        RESULT_OFFSET as usize + 8 <= HISTOGRAM_OFFSET
            && HISTOGRAM_OFFSET + LANE_WORK_WORDS * 4 <= SPLIT_OFFSET
            && SPLIT_OFFSET.is_multiple_of(256)
            && PARTIALS_OFFSET.is_multiple_of(256)
    );
}

/// A resolved kernel: its driver handle and its table row.
struct Loaded {
    function: CUfunction,
    kernel: &'static Kernel,
    /// Dynamic shared memory this kernel has been allowed above 48 KiB.
    shared_optin: AtomicU32,
    /// `(block, shared bytes, resident blocks per SM)` of the last query.
    occupancy: Mutex<(u32, u32, u32)>,
}

/// Locks `mutex`, also after a panic elsewhere poisoned it: the values kept
/// behind the runtime's locks are valid whatever point a panic left them at.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A module handle that unloads on drop.
struct Module(CUmodule);

impl Drop for Module {
    fn drop(&mut self) {
        // SAFETY: the handle came from a successful cuModuleLoadDataEx and
        // is unloaded once; the CUDA context is still alive (the runtime
        // drops it after this field). An error here has nowhere to go.
        unsafe {
            driver::cuModuleUnload(self.0);
        }
    }
}

/// An event handle that is destroyed on drop. Not cust's `Event`: it hides
/// its handle and `Stream::wait_event` consumes it, while the runtime must
/// keep the last reader's event for every stream that stages after it.
struct OwnedEvent(CUevent);

impl Drop for OwnedEvent {
    fn drop(&mut self) {
        // SAFETY: the handle came from a successful cuEventCreate and is
        // destroyed once; the CUDA context is still alive (the runtime drops
        // it last). Destroying an event that is recorded but not yet reached
        // is allowed: the driver frees it once the device has passed it, and
        // waits already enqueued on it are unaffected.
        unsafe {
            driver::cuEventDestroy_v2(self.0);
        }
    }
}

/// What every [`Context`] of one device shares: the CUDA context, the
/// loaded module with every kernel resolved, the device's facts, and whether
/// a kernel fault has destroyed the context.
struct Runtime {
    /// In the order of `warpspeed_gpu::FAMILIES`, flattened: an [`Entry`]'s
    /// index.
    kernels: Vec<Loaded>,
    module: Module,
    info: DeviceInfo,
    lost: Mutex<Option<String>>,
    /// Recorded, on whichever stream, right after the last launch that reads
    /// a `__constant__` symbol the library stages
    /// ([`Context::launch_reading_constant`]); `None` before the first.
    /// Every staging copy waits for it, so a copy never overlaps a kernel
    /// that reads the symbol, whatever streams the two are on.
    /// The lock is held from the wait to the recording, so the chain stays
    /// one chain when several threads stage at once.
    constant_readers: Mutex<Option<OwnedEvent>>,
    // Dropped last: releases the primary context the fields above live in.
    cuda: cust::context::Context,
}

// SAFETY: the raw handles inside (module, functions, events) are driver
// objects of one CUDA context, and the driver API is thread-safe: any thread
// may use them once that context is current there, which every `Context`
// method that reaches the driver makes sure of first (`Context::bind`). The
// mutable state is behind `Mutex`es and atomics.
unsafe impl Send for Runtime {}
// SAFETY: as for `Send`; shared access only reads the handles and goes
// through the locks for the rest.
unsafe impl Sync for Runtime {}

/// One ordered queue of GPU work on one device: the device's CUDA context
/// and loaded kernels (shared with every `Context` made from this one), a
/// stream, and the scratch memory work on that stream reuses.
///
/// Operations run on [`Context::stream`] in call order. Functions that
/// return a host value (`sum`, `min`, ...) wait for it. Functions that write
/// into device buffers you pass are named `*_into` and only enqueue: they
/// return a [`Pending`](crate::Pending) that keeps the buffers borrowed until
/// the GPU is done with them and waits when dropped.
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
    stream: Stream,
    /// Device memory multi-pass and single-pass kernels reuse; zeroed when
    /// (re)allocated, grown on demand, never shrunk behind the user's back.
    scratch: RefCell<Option<DeviceBuffer<u8>>>,
    /// Counters kernels leave zero when they finish (the column sums'
    /// tallies, one per column): zeroed when (re)allocated, grown on demand.
    tallies: RefCell<Option<DeviceBuffer<u64>>>,
    /// The number of the last launch that claimed work in the scratch
    /// memory by launch number ([`Context::next_epoch`]).
    epoch: Cell<u32>,
    runtime: Arc<Runtime>,
}

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

/// The target forced by `WARPSPEED_PTX`, if set.
fn forced_target() -> Option<String> {
    std::env::var(crate::ptx::PTX_OVERRIDE)
        .ok()
        .filter(|t| !t.is_empty())
}

/// Reads device `ordinal`'s facts (no CUDA context needed) and the kernel
/// image the library loads there (`None`: the device is too old), or that
/// `file` (from `WARPSPEED_PTX_FILE`) replaces.
fn describe(
    device: cust::device::Device,
    ordinal: u32,
    file: Option<&crate::ptx::PtxFile>,
) -> Result<(DeviceInfo, Option<(&'static str, Image)>)> {
    let name = device
        .name()
        .map_err(|e| Error::cust(e, "reading the device name"))?;
    let total_memory = device
        .total_memory()
        .map_err(|e| Error::cust(e, "reading the device memory size"))?;
    let attr = |a: c_int| -> Result<u32> {
        let mut value: c_int = 0;
        // SAFETY: writes one int; `device` is a valid device handle.
        let status = unsafe { driver::cuDeviceGetAttribute(&mut value, a, device.as_raw()) };
        check(status, || format!("reading device attribute {a}"))?;
        Ok(value.max(0) as u32)
    };
    let compute_capability = (
        attr(attribute::COMPUTE_CAPABILITY_MAJOR)?,
        attr(attribute::COMPUTE_CAPABILITY_MINOR)?,
    );
    let image = crate::ptx::choose(compute_capability, forced_target().as_deref())?;
    let mut info = DeviceInfo {
        ordinal,
        name,
        compute_capability,
        multiprocessors: attr(attribute::MULTIPROCESSOR_COUNT)?,
        total_memory,
        l2_bytes: attr(attribute::L2_CACHE_SIZE)?,
        max_threads_per_block: attr(attribute::MAX_THREADS_PER_BLOCK)?,
        max_threads_per_multiprocessor: attr(attribute::MAX_THREADS_PER_MULTIPROCESSOR)?,
        max_block: (
            attr(attribute::MAX_BLOCK_DIM_X)?,
            attr(attribute::MAX_BLOCK_DIM_Y)?,
        ),
        max_grid: (
            attr(attribute::MAX_GRID_DIM_X)?,
            attr(attribute::MAX_GRID_DIM_Y)?,
        ),
        max_shared_per_block: attr(attribute::MAX_SHARED_MEMORY_PER_BLOCK)?,
        max_shared_per_block_optin: attr(attribute::MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?,
        theoretical_bandwidth: attr(attribute::MEMORY_CLOCK_RATE_KHZ)? as f64
            * 1e3
            * 2.0
            * attr(attribute::GLOBAL_MEMORY_BUS_WIDTH)? as f64
            / 8.0,
        ptx_target: image.map_or("", |(target, _)| target),
        jit: !matches!(image, Some((_, Image::Cubin(_)))),
    };
    if let Some(file) = file {
        let cc = compute_capability.0 * 10 + compute_capability.1;
        if !crate::ptx::runs(file.target, cc) {
            return Err(Error::InvalidArgument(format!(
                "{}={}: a {}.{} device cannot run PTX built for {}",
                crate::ptx::PTX_FILE,
                file.path,
                compute_capability.0,
                compute_capability.1,
                file.target
            )));
        }
        (info.ptx_target, info.jit) = (file.target, true);
    }
    Ok((info, image))
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

    /// Initialises CUDA on device `ordinal`, loads the kernels, resolves
    /// every entry point (a missing one is an error now, not at first use)
    /// and creates a stream.
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
    /// [`Error::MissingEntry`], [`Error::Cuda`] for other driver failures.
    pub fn new(ordinal: u32) -> Result<Context> {
        let count = init()?;
        if ordinal >= count {
            return Err(Error::InvalidArgument(format!(
                "device {ordinal} requested, but this machine has {count} CUDA device(s)"
            )));
        }
        let device = cust::device::Device::get_device(ordinal)
            .map_err(|e| Error::cust(e, format!("opening device {ordinal}")))?;
        // Read once: it decides both the facts and what is loaded.
        let file = crate::ptx::ptx_file()?;
        let (mut info, image) = describe(device, ordinal, file.as_ref())?;
        let Some((target, image)) = image else {
            return Err(Error::UnsupportedDevice {
                name: info.name,
                compute_capability: info.compute_capability,
            });
        };

        let cuda = cust::context::Context::new(device)
            .map_err(|e| Error::cust(e, "creating the CUDA context"))?;
        let module = match (file, image) {
            // A line-info build from `cargo xtask build-ptx --lineinfo`.
            (Some(file), _) => load_ptx(file.target, &file.text, true)?,
            (None, Image::Ptx(ptx)) => load_ptx(target, ptx, false)?,
            (None, Image::Cubin(cubin)) => match load_image(cubin.as_ptr().cast(), false) {
                Ok(module) => module,
                // A driver that cannot take the shipped machine code (a
                // changed ELF format, say) still compiles the PTX.
                Err(_) => {
                    info.jit = true;
                    load_ptx(
                        target,
                        crate::ptx::ptx_of(target).unwrap_or_default(),
                        false,
                    )?
                }
            },
        };
        let mut kernels = Vec::new();
        for (_, table) in warpspeed_gpu::FAMILIES {
            for kernel in *table {
                let name = CString::new(kernel.name).expect("kernel names have no NUL");
                let mut function: CUfunction = std::ptr::null_mut();
                // SAFETY: `module.0` is a loaded module; `name` is a valid C
                // string; the function handle is written on success.
                let status =
                    unsafe { driver::cuModuleGetFunction(&mut function, module.0, name.as_ptr()) };
                if status != driver::CUDA_SUCCESS {
                    return Err(Error::MissingEntry {
                        name: kernel.name.into(),
                    });
                }
                kernels.push(Loaded {
                    function,
                    kernel,
                    shared_optin: AtomicU32::new(0),
                    occupancy: Mutex::new((0, 0, 0)),
                });
            }
        }
        let runtime = Arc::new(Runtime {
            kernels,
            module,
            info,
            lost: Mutex::new(None),
            constant_readers: Mutex::new(None),
            cuda,
        });
        let stream = Stream::new(StreamFlags::DEFAULT, None)
            .map_err(|e| Error::cust(e, "creating a stream"))?;
        Ok(Context::on(runtime, stream))
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
    /// on both for both). Copies between the two devices' buffers work
    /// without it too, staged through the host; with it they go over the
    /// link. Enabling twice is not an error.
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

    fn on(runtime: Arc<Runtime>, stream: Stream) -> Context {
        Context {
            stream,
            scratch: RefCell::new(None),
            tallies: RefCell::new(None),
            epoch: Cell::new(0),
            runtime,
        }
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
        Ok(Context::on(self.runtime.clone(), stream))
    }

    /// Another queue on the same device that runs on `stream`, a stream of
    /// yours created in this device's primary context (cust's
    /// `Stream::new` on this thread), with its own scratch memory. Order it
    /// against your other work with events or by synchronizing.
    pub fn with_stream(&self, stream: Stream) -> Context {
        Context::on(self.runtime.clone(), stream)
    }

    /// The device this context runs on.
    pub fn info(&self) -> &DeviceInfo {
        &self.runtime.info
    }

    /// Registers, local memory and static shared memory of every kernel of
    /// the loaded module, in the order of `warpspeed_gpu::FAMILIES`: why a
    /// step runs as many threads per SM as it does, and whether it spills.
    ///
    /// # Errors
    /// [`Error::Cuda`] if the driver cannot say.
    pub fn kernel_resources(&self) -> Result<Vec<KernelResources>> {
        self.ensure_alive()?;
        let read = |loaded: &Loaded, attribute: c_int| -> Result<u32> {
            let mut value: c_int = 0;
            // SAFETY: a resolved function of the loaded module; writes one int.
            let status =
                unsafe { driver::cuFuncGetAttribute(&mut value, attribute, loaded.function) };
            check(status, || {
                format!("reading attribute {attribute} of {}", loaded.kernel.name)
            })?;
            Ok(value.max(0) as u32)
        };
        use driver::function_attribute as a;
        self.runtime
            .kernels
            .iter()
            .map(|k| {
                Ok(KernelResources {
                    name: k.kernel.name,
                    registers: read(k, a::NUM_REGS)?,
                    local_bytes: read(k, a::LOCAL_SIZE_BYTES)?,
                    static_shared_bytes: read(k, a::SHARED_SIZE_BYTES)?,
                    max_threads_per_block: read(k, a::MAX_THREADS_PER_BLOCK)?,
                })
            })
            .collect()
    }

    /// The stream every operation of this context is enqueued on. Order
    /// your own work against it (events, `synchronize`) when you mix the two.
    pub fn stream(&self) -> &Stream {
        &self.stream
    }

    /// Waits for everything enqueued on this context's stream so far.
    ///
    /// # Errors
    /// The first failure of any of that work ([`Error::Cuda`]; a kernel fault
    /// also turns every later call into [`Error::ContextLost`]).
    pub fn synchronize(&self) -> Result<()> {
        self.ensure_alive()?;
        // SAFETY: the stream handle is valid for the life of `self`.
        let status = unsafe { driver::cuStreamSynchronize(self.stream.as_inner()) };
        self.track(check(status, || {
            "waiting for the stream (a kernel enqueued earlier failed)".into()
        }))
    }

    /// Waits for this context's stream, then frees its scratch memory (it
    /// is allocated again when needed).
    ///
    /// # Errors
    /// As [`Context::synchronize`].
    pub fn release_scratch(&self) -> Result<()> {
        self.synchronize()?;
        self.scratch.borrow_mut().take();
        self.tallies.borrow_mut().take();
        Ok(())
    }

    /// Bytes of scratch memory this context holds.
    pub fn scratch_bytes(&self) -> usize {
        self.scratch.borrow().as_ref().map_or(0, |b| b.len())
            + self
                .tallies
                .borrow()
                .as_ref()
                .map_or(0, |b| b.len() * size_of::<u64>())
    }

    /// Fails with [`Error::ContextLost`] after a kernel fault; otherwise
    /// makes the device current on this thread ([`Context::bind`]). Every
    /// operation calls it before its first driver call.
    pub(crate) fn ensure_alive(&self) -> Result<()> {
        if let Some(cause) = &*lock(&self.runtime.lost) {
            return Err(Error::ContextLost {
                cause: cause.clone(),
            });
        }
        self.bind()
    }

    /// Remembers a sticky failure so that later calls report `ContextLost`.
    pub(crate) fn track<T>(&self, result: Result<T>) -> Result<T> {
        if let Err(e) = &result {
            if e.is_sticky() {
                lock(&self.runtime.lost).get_or_insert_with(|| e.to_string());
            }
        }
        result
    }

    fn loaded<A>(&self, entry: Entry<A>) -> &Loaded {
        // In range: entries are indices into the flattened kernel tables,
        // all of which `new` resolved.
        &self.runtime.kernels[entry.index()]
    }

    /// Opts `loaded` into `shared_bytes` of dynamic shared memory where that
    /// is more than every kernel may have unasked (48 KiB), once per size:
    /// before a launch, and before an occupancy query, which otherwise
    /// counts no block as fitting.
    fn allow_shared(&self, loaded: &Loaded, shared_bytes: u32) -> Result<()> {
        if shared_bytes > self.info().max_shared_per_block
            && shared_bytes > loaded.shared_optin.load(Ordering::Relaxed)
        {
            // SAFETY: a valid function handle; sets one attribute.
            let status = unsafe {
                driver::cuFuncSetAttribute(
                    loaded.function,
                    driver::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    shared_bytes as c_int,
                )
            };
            check(status, || {
                format!(
                    "allowing {} {} B of shared memory",
                    loaded.kernel.name, shared_bytes
                )
            })?;
            loaded
                .shared_optin
                .fetch_max(shared_bytes, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Blocks of `block` threads with `shared_bytes` that one SM holds at
    /// once for this kernel (at least 1).
    pub(crate) fn blocks_per_sm<A>(
        &self,
        entry: Entry<A>,
        block: u32,
        shared_bytes: u32,
    ) -> Result<u32> {
        let loaded = self.loaded(entry);
        let (b, s, cached) = *lock(&loaded.occupancy);
        if (b, s) == (block, shared_bytes) && cached > 0 {
            return Ok(cached);
        }
        self.allow_shared(loaded, shared_bytes)?;
        let mut blocks: c_int = 0;
        // SAFETY: `function` is a resolved handle of the loaded module;
        // writes one int.
        let status = unsafe {
            driver::cuOccupancyMaxActiveBlocksPerMultiprocessor(
                &mut blocks,
                loaded.function,
                block as c_int,
                shared_bytes as usize,
            )
        };
        check(status, || {
            format!("querying the occupancy of {}", loaded.kernel.name)
        })?;
        let blocks = (blocks.max(1)) as u32;
        *lock(&loaded.occupancy) = (block, shared_bytes, blocks);
        Ok(blocks)
    }

    /// Launches `entry` with `args` on this context's stream after checking
    /// the configuration against the device's limits. The argument list's
    /// type is the kernel's own (`Args` of its module): a wrong count, order
    /// or type of arguments does not compile.
    ///
    /// # Safety
    /// The arguments must satisfy the launch contract documented on the
    /// kernel's body in `warpspeed-gpu`: every pointer valid for the lengths
    /// passed, outputs not aliasing inputs unless the body allows it, and
    /// the buffers kept alive until the stream has run the kernel.
    pub(crate) unsafe fn launch<A: KernelArgs>(
        &self,
        entry: Entry<A>,
        cfg: LaunchConfig,
        args: &A,
    ) -> Result<()> {
        self.ensure_alive()?;
        let loaded = self.loaded(entry);
        let kernel = loaded.kernel;
        self.info().check_launch(kernel.name, &cfg)?;
        self.allow_shared(loaded, cfg.shared_bytes)?;
        let mut params = [std::ptr::null_mut::<c_void>(); MAX_PARAMS];
        args.params(&mut params);
        // SAFETY: the handle belongs to the loaded module; `params` holds one
        // pointer per kernel parameter, each to a field of `args` (alive for
        // this call) of the parameter's size and representation (`A` is the
        // kernel's generated `Args`, by its type); the configuration is
        // within the device's limits (checked above); pointer validity is
        // the caller's contract.
        let status = unsafe {
            driver::cuLaunchKernel(
                loaded.function,
                cfg.grid.0,
                cfg.grid.1,
                1,
                cfg.block.0,
                cfg.block.1,
                1,
                cfg.shared_bytes,
                self.stream.as_inner(),
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        self.track(check(status, || {
            format!("launching {} ({cfg})", kernel.name)
        }))
    }

    /// A number for the next launch that tells its blocks apart from the
    /// previous launch's by a word of scratch memory (the lane-private
    /// histogram's claim): never 0, the value of scratch memory when it is
    /// allocated, and never the previous call's.
    pub(crate) fn next_epoch(&self) -> u32 {
        let next = self.epoch.get().checked_add(1).unwrap_or(1);
        self.epoch.set(next);
        next
    }

    /// The device address of at least `bytes` of this context's scratch
    /// memory, 256-byte aligned. Bytes are zero when the memory is first
    /// allocated (or grown) and otherwise hold what earlier work left.
    /// Growing waits for the stream (work enqueued earlier may still use the
    /// old buffer).
    pub(crate) fn scratch(&self, bytes: usize) -> Result<u64> {
        self.grown(&self.scratch, bytes.max(256), "B of scratch memory")
    }

    /// The device address of at least `count` tallies: `u64` counters that
    /// are zero between launches (zeroed when first allocated or grown;
    /// every kernel that uses them leaves them zero). Part of the scratch
    /// memory ([`Context::release_scratch`], [`Context::scratch_bytes`]).
    /// Growing waits for the stream, as [`Context::scratch`].
    pub(crate) fn tallies(&self, count: usize) -> Result<u64> {
        self.grown(&self.tallies, count.max(1), "tallies of scratch memory")
    }

    /// The device address of `buffer`, first replaced by a zeroed one of
    /// `len` elements where it holds fewer, after waiting for the stream.
    fn grown<T: DeviceCopy + cust::memory::bytemuck::Zeroable>(
        &self,
        buffer: &RefCell<Option<DeviceBuffer<T>>>,
        len: usize,
        what: &str,
    ) -> Result<u64> {
        let mut buffer = buffer.borrow_mut();
        if !buffer.as_ref().is_some_and(|b| b.len() >= len) {
            self.synchronize()?;
            buffer.take();
            let fresh = DeviceBuffer::<T>::zeroed(len)
                .map_err(|e| Error::cust(e, format!("allocating {len} {what}")))?;
            *buffer = Some(fresh);
        }
        Ok(buffer
            .as_ref()
            .map(|b| b.as_device_ptr().as_raw())
            .unwrap_or_default())
    }

    /// Enqueues zeroing `words` 4-byte words at device address `address`.
    ///
    /// # Safety
    /// `address` must be valid for `words` 4-byte writes until the stream
    /// has run the memset.
    pub(crate) unsafe fn zero_words(&self, address: u64, words: usize) -> Result<()> {
        // SAFETY: the address is the caller's contract; the stream handle is
        // valid for the life of `self`.
        let status = unsafe { driver::cuMemsetD32Async(address, 0, words, self.stream.as_inner()) };
        self.track(check(status, || format!("zeroing {words} words of output")))
    }

    /// Sets a `__constant__` symbol of the kernels' module (declared with
    /// `constant_memory!` in `warpspeed-gpu`) to `value`, in stream order:
    /// kernels enqueued on this context after the call read the new value,
    /// those before it the old one. Waits until the copy is done, so `value`
    /// is free again on return.
    ///
    /// The symbol is one per device, shared by every `Context` of it: work
    /// on another stream that reads it while this runs races with the copy.
    ///
    /// # Errors
    /// [`Error::MissingEntry`] if the module has no such symbol or one of
    /// another size; driver failures.
    pub fn write_constant<T: DeviceCopy>(
        &self,
        symbol: &ConstantSymbol<T>,
        value: &T,
    ) -> Result<()> {
        self.ensure_alive()?;
        let (address, bytes) = self.constant_address(symbol)?;
        // SAFETY: the symbol holds `bytes == size_of::<T>()` bytes (checked);
        // `value` is a live host `T` until the synchronisation below.
        let status = unsafe {
            driver::cuMemcpyHtoDAsync_v2(
                address,
                (value as *const T).cast(),
                bytes,
                self.stream.as_inner(),
            )
        };
        self.track(check(status, || {
            format!("writing the constant {}", symbol.name())
        }))?;
        self.synchronize()
    }

    /// The device address and size of `symbol` in the loaded module.
    ///
    /// # Errors
    /// [`Error::MissingEntry`] if the module has no such symbol or one of
    /// another size than [`ConstantSymbol::bytes`].
    fn constant_address<T>(&self, symbol: &ConstantSymbol<T>) -> Result<(u64, usize)> {
        let (mut address, mut bytes) = (0u64, 0usize);
        // SAFETY: the module is loaded for the life of the runtime; the name
        // is NUL-terminated; the driver writes two integers.
        let status = unsafe {
            driver::cuModuleGetGlobal_v2(
                &mut address,
                &mut bytes,
                self.runtime.module.0,
                symbol.c_name().as_ptr(),
            )
        };
        if status != driver::CUDA_SUCCESS || bytes != symbol.bytes() {
            return Err(Error::MissingEntry {
                name: format!("{} ({} B)", symbol.name(), symbol.bytes()),
            });
        }
        Ok((address, bytes))
    }

    /// Enqueues, on this context's stream, a device-to-device copy of
    /// `bytes` bytes at device address `source` into the first bytes of the
    /// `__constant__` symbol `symbol`, then the launch of `entry`, a kernel
    /// that reads the symbol. No host wait anywhere:
    ///
    /// 1. the stream waits (`cuStreamWaitEvent`, on the device) for the
    ///    event recorded after the last launch that read a staged symbol,
    ///    on whichever stream of this device's runtime: the copy cannot
    ///    overwrite the symbol under a kernel still reading it;
    /// 2. the copy (`cuMemcpyDtoDAsync`), then the launch, in stream order:
    ///    the kernel reads what was copied;
    /// 3. a fresh event recorded on this stream replaces the runtime's: the
    ///    next staging, on any stream, waits for this kernel.
    ///
    /// So every launch through this function, on every stream of the
    /// runtime, forms one chain (copy, kernel, copy, kernel, ...) ordered by
    /// the host's call order: kernels that read constant memory do not
    /// overlap each other across streams. Once the copy is enqueued the
    /// event is recorded even if the launch fails, so the chain never
    /// breaks; on any failure after the copy is enqueued, this waits for
    /// the stream before returning the error, so the caller's buffers are
    /// free when it returns. Launches that do not stage (`write_constant` users) are not
    /// part of the chain.
    ///
    /// # Safety
    /// As [`Context::launch`]; and `source` must be valid for reading
    /// `bytes` bytes until the stream has run the copy.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for `bytes` of 0 or more than the symbol
    /// holds, or a configuration the device cannot launch (both before
    /// anything is enqueued); [`Error::MissingEntry`] as
    /// [`Context::write_constant`]; driver failures.
    pub(crate) unsafe fn launch_reading_constant<T, A: KernelArgs>(
        &self,
        symbol: &ConstantSymbol<T>,
        source: u64,
        bytes: usize,
        entry: Entry<A>,
        cfg: LaunchConfig,
        args: &A,
    ) -> Result<()> {
        self.ensure_alive()?;
        let (address, size) = self.constant_address(symbol)?;
        if bytes == 0 || bytes > size {
            return Err(Error::InvalidArgument(format!(
                "{bytes} B do not fit the constant {} ({size} B)",
                symbol.name()
            )));
        }
        self.info()
            .check_launch(self.loaded(entry).kernel.name, &cfg)?;
        let stream = self.stream.as_inner();
        // Held until the new reader is recorded: one chain across threads.
        let mut readers = lock(&self.runtime.constant_readers);
        if let Some(last) = &*readers {
            // SAFETY: both handles are valid (the event lives in the runtime
            // until replaced or dropped, and a wait enqueued on it stays valid
            // after that); flags 0.
            let status = unsafe { driver::cuStreamWaitEvent(stream, last.0, 0) };
            self.track(check(status, || {
                format!("ordering the copy into {} after its readers", symbol.name())
            }))?;
        }
        // SAFETY: `address` holds `size >= bytes` bytes (checked above);
        // `source` is valid for `bytes` bytes until the stream has run the
        // copy (the caller's contract).
        let status = unsafe { driver::cuMemcpyDtoDAsync_v2(address, source, bytes, stream) };
        self.track(check(status, || {
            format!("copying {bytes} B into the constant {}", symbol.name())
        }))?;
        // SAFETY: the caller's contract, as for `launch`.
        let launched = unsafe { self.launch(entry, cfg, args) };
        let recorded = self.record_constant_reader(&mut readers);
        drop(readers);
        if launched.is_err() || recorded.is_err() {
            // The copy (and perhaps the kernel) is enqueued and uses the
            // caller's buffers, which an `Err` releases: wait for it first.
            let _ = self.synchronize();
        }
        launched.and(recorded)
    }

    /// Records a fresh event on this stream and makes it the one the next
    /// constant-memory staging waits for.
    fn record_constant_reader(&self, readers: &mut Option<OwnedEvent>) -> Result<()> {
        let mut event: CUevent = std::ptr::null_mut();
        // SAFETY: writes one handle on success.
        let status = unsafe { driver::cuEventCreate(&mut event, driver::CU_EVENT_DISABLE_TIMING) };
        self.track(check(status, || "creating an event".into()))?;
        let event = OwnedEvent(event);
        // SAFETY: both handles are valid.
        let status = unsafe { driver::cuEventRecord(event.0, self.stream.as_inner()) };
        self.track(check(status, || "recording an event".into()))?;
        // The previous event is dropped (destroyed) here: every wait on it
        // has been enqueued already.
        *readers = Some(event);
        Ok(())
    }

    /// Refuses `len` elements at `address` unless they are device memory of
    /// this context's device (nothing to check when `len` is 0).
    pub(crate) fn check_on_device(
        &self,
        address: u64,
        len: usize,
        what: &'static str,
    ) -> Result<()> {
        if len == 0 {
            return Ok(());
        }
        let mut ordinal: c_int = -1;
        // SAFETY: the attribute is one int, written into a live local; any
        // address is an acceptable query (unknown ones fail).
        let status = unsafe {
            driver::cuPointerGetAttribute(
                (&mut ordinal as *mut c_int).cast(),
                driver::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                address,
            )
        };
        let mine = self.info().ordinal;
        if status != driver::CUDA_SUCCESS {
            return Err(Error::InvalidArgument(format!(
                "{what}: {address:#x} is not device memory"
            )));
        }
        if ordinal as u32 != mine {
            return Err(Error::InvalidArgument(format!(
                "{what}: a buffer on device {ordinal} given for device {mine}"
            )));
        }
        Ok(())
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
        // SAFETY: the stream handle is valid until the field drops after this.
        unsafe {
            driver::cuStreamSynchronize(self.stream.as_inner());
        }
    }
}

/// Loads a module image (a cubin, or NUL-terminated PTX) through
/// `cuModuleLoadDataEx` with an error-log buffer, and for PTX with
/// `line_info` the JIT's line tables (what sanitizer and profiler reports
/// map back to source lines): `Err((code, log))`.
fn load_image(image: *const c_void, line_info: bool) -> std::result::Result<Module, (u32, String)> {
    let mut log = vec![0u8; 16 * 1024];
    let mut options = [
        driver::CU_JIT_ERROR_LOG_BUFFER,
        driver::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        driver::CU_JIT_GENERATE_LINE_INFO,
    ];
    let mut values = [
        log.as_mut_ptr().cast::<c_void>(),
        log.len() as *mut c_void,
        usize::from(line_info) as *mut c_void,
    ];
    let mut module: CUmodule = std::ptr::null_mut();
    // SAFETY: `image` is a cubin or NUL-terminated PTX (the callers'); the
    // option arrays have equal length and the log buffer outlives the call
    // and has the stated size.
    let status = unsafe {
        driver::cuModuleLoadDataEx(
            &mut module,
            image,
            options.len() as u32,
            options.as_mut_ptr(),
            values.as_mut_ptr(),
        )
    };
    if status != driver::CUDA_SUCCESS {
        let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
        return Err((status, String::from_utf8_lossy(&log[..end]).into_owned()));
    }
    Ok(Module(module))
}

/// Loads `ptx`, compiled by the driver's JIT (with line tables where
/// `line_info`); a failure says what the JIT compiler said.
fn load_ptx(target: &'static str, ptx: &str, line_info: bool) -> Result<Module> {
    let image = CString::new(ptx)
        .map_err(|_| Error::InvalidArgument(format!("the {target} PTX contains a NUL byte")))?;
    load_image(image.as_ptr().cast(), line_info).map_err(|(status, log)| match status {
        code::INVALID_PTX
        | code::JIT_COMPILER_NOT_FOUND
        | code::UNSUPPORTED_PTX_VERSION
        | code::INVALID_IMAGE
        | code::NO_BINARY_FOR_GPU => Error::UnsupportedPtx {
            target,
            code: status,
            log,
        },
        _ => Error::driver(status, format!("loading the {target} PTX module: {log}")),
    })
}
