//! What every [`Context`](super::Context) of one device shares: the CUDA
//! context, the loaded module with each kernel resolved on first use, the device's
//! facts; and how the module is chosen and loaded.

use crate::device::DeviceInfo;
use crate::driver::{self, attribute, code};
use crate::error::{Error, Result, check};
use crate::ptx::Image;
use cust::sys::{CUevent, CUfunction, CUmodule};
use std::ffi::{CString, c_int, c_void};
use std::sync::atomic::AtomicU32;
use std::sync::{Mutex, MutexGuard, OnceLock};
use warpspeed_gpu::kernel::Kernel;

/// A kernel of the loaded module: its table row and, once first used, its
/// driver handle.
pub(super) struct Loaded {
    /// Resolved on first use ([`Runtime::function`]): the driver loads a
    /// module's kernels lazily (CUDA 12.2 and later), so resolving all of
    /// them up front would load every one at start-up.
    function: OnceLock<CUfunction>,
    pub(super) kernel: &'static Kernel,
    /// Dynamic shared memory this kernel has been allowed above 48 KiB:
    /// read without the lock, raised only under it, after the attribute.
    pub(super) shared_optin: AtomicU32,
    /// Held while the attribute is raised, so that two threads cannot set
    /// it in the wrong order (the smaller size last).
    pub(super) optin_lock: Mutex<()>,
    /// `(block, shared bytes, resident blocks per SM)` of the last query.
    pub(super) occupancy: Mutex<(u32, u32, u32)>,
}

/// Locks `mutex`, also after a panic elsewhere poisoned it: the values kept
/// behind the runtime's locks are valid whatever point a panic left them at.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A module handle that unloads on drop.
pub(super) struct Module(pub(super) CUmodule);

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
pub(crate) struct OwnedEvent(pub(crate) CUevent);

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

/// What every [`Context`](super::Context) of one device shares: the CUDA context, the
/// loaded module with each kernel resolved on first use, the device's facts, and whether
/// a kernel fault has destroyed the context.
pub(crate) struct Runtime {
    /// In the order of `warpspeed_gpu::FAMILIES`, flattened: an [`Entry`](warpspeed_gpu::kernel::Entry)'s
    /// index.
    pub(super) kernels: Vec<Loaded>,
    pub(super) module: Module,
    pub(crate) info: DeviceInfo,
    pub(super) lost: Mutex<Option<crate::error::Error>>,
    /// Recorded, on whichever stream, right after the last launch that reads
    /// a `__constant__` symbol the library stages
    /// ([`Context::launch_reading_constant`](super::Context::launch_reading_constant)); `None` before the first.
    /// Every staging copy waits for it, so a copy never overlaps a kernel
    /// that reads the symbol, whatever streams the two are on.
    /// The lock is held from the wait to the recording, so the chain stays
    /// one chain when several threads stage at once.
    pub(crate) constant_readers: Mutex<Option<OwnedEvent>>,
    // Dropped last: releases the primary context the fields above live in.
    pub(crate) cuda: cust::context::Context,
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

impl Runtime {
    /// Reads device `ordinal`'s facts, creates its CUDA context (the
    /// primary one) and loads the module the device runs; each kernel of
    /// `warpspeed_gpu::FAMILIES` is resolved in it on first use.
    pub(super) fn open(ordinal: u32) -> Result<Runtime> {
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
            (None, Image::Ptx(ptx)) => load_ptx(target, &ptx.text()?, false)?,
            (None, Image::Cubin(cubin)) => match load_image(cubin.unpack()?.as_ptr().cast(), false)
            {
                Ok(module) => module,
                // A driver that cannot take the shipped machine code (a
                // changed ELF format, say) still compiles the PTX.
                Err(_) => {
                    info.jit = true;
                    let ptx = match crate::ptx::ptx_of(target) {
                        Some(ptx) => ptx.text()?,
                        None => String::new(),
                    };
                    load_ptx(target, &ptx, false)?
                }
            },
        };
        let kernels = warpspeed_gpu::FAMILIES
            .iter()
            .flat_map(|(_, table)| table.iter())
            .map(|kernel| Loaded {
                function: OnceLock::new(),
                kernel,
                shared_optin: AtomicU32::new(0),
                optin_lock: Mutex::new(()),
                occupancy: Mutex::new((0, 0, 0)),
            })
            .collect();
        Ok(Runtime {
            kernels,
            module,
            info,
            lost: Mutex::new(None),
            constant_readers: Mutex::new(None),
            cuda,
        })
    }
}

impl Runtime {
    /// `loaded`'s function handle, resolved in the module the first time it
    /// is asked for (which also makes the driver load its code).
    ///
    /// # Errors
    /// [`Error::MissingEntry`] if the module has no such kernel;
    /// [`Error::Cuda`] for any other failure of the driver.
    pub(super) fn function(&self, loaded: &Loaded) -> Result<CUfunction> {
        if let Some(&f) = loaded.function.get() {
            return Ok(f);
        }
        // A name with a NUL could not name any entry of the module.
        let name = CString::new(loaded.kernel.name).map_err(|_| Error::MissingEntry {
            name: loaded.kernel.name.into(),
        })?;
        let mut function: CUfunction = std::ptr::null_mut();
        // SAFETY: `self.module.0` is a loaded module of this runtime's
        // context; `name` is a valid C string; the handle is written on
        // success. Two threads resolving the same name get the same handle.
        let status =
            unsafe { driver::cuModuleGetFunction(&mut function, self.module.0, name.as_ptr()) };
        // Only "not found" means the module lacks the kernel: any other
        // failure (out of memory while the driver loads the kernel's code,
        // a lost context) is the driver's, reported as it said it.
        if status == code::NOT_FOUND {
            return Err(Error::MissingEntry {
                name: loaded.kernel.name.into(),
            });
        }
        check(status, || {
            format!(
                "resolving kernel `{}` in the loaded module",
                loaded.kernel.name
            )
        })?;
        Ok(*loaded.function.get_or_init(|| function))
    }
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
pub(super) fn describe(
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
