//! The CUDA context: device, loaded module, stream and reusable device memory.

use crate::driver::{self, attribute};
use crate::error::{Error, Result, check};
use crate::launch::{Arg, LaunchConfig};
use cust::memory::{DeviceBuffer, DeviceCopy};
use cust::stream::{Stream, StreamFlags};
use cust::sys::{CUfunction, CUmodule};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::ffi::{CString, c_int, c_void};

/// What the library knows about its device.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceInfo {
    /// The device's ordinal, as passed to [`Context::new`].
    pub ordinal: u32,
    pub name: String,
    /// `(major, minor)`, e.g. `(9, 0)` for Hopper.
    pub compute_capability: (u32, u32),
    /// Streaming multiprocessors.
    pub multiprocessors: u32,
    /// Global memory in bytes.
    pub total_memory: usize,
    /// L2 cache in bytes.
    pub l2_bytes: u32,
    pub max_threads_per_block: u32,
    pub max_threads_per_multiprocessor: u32,
    /// Largest block, `(x, y)`.
    pub max_block: (u32, u32),
    /// Largest grid in blocks, `(x, y)`.
    pub max_grid: (u32, u32),
    /// Dynamic shared memory a block gets without opting in (48 KiB).
    pub max_shared_per_block: u32,
    /// Dynamic shared memory a block can opt in to (227 KiB on Hopper).
    pub max_shared_per_block_optin: u32,
    /// Theoretical DRAM bandwidth from the memory clock and bus width, in
    /// bytes per second (reads or writes). Benchmarks compare against a
    /// measured copy instead; this is for scale.
    pub theoretical_bandwidth: f64,
    /// The PTX target the library loaded for this device.
    pub ptx_target: &'static str,
}

/// A resolved kernel: its driver handle and its table row.
struct Loaded {
    function: CUfunction,
    kernel: &'static warpspeed_gpu::Kernel,
    /// Dynamic shared memory this kernel has been allowed above 48 KiB.
    shared_optin: Cell<u32>,
    /// `(block, shared bytes, resident blocks per SM)` of the last query.
    occupancy: Cell<(u32, u32, u32)>,
}

/// Device memory the library reuses across calls: never allocated per call.
struct Workspace {
    /// Intermediate partial results of multi-pass kernels; grows on demand.
    scratch: Option<DeviceBuffer<u8>>,
    /// A single-pass reduction's ticket counter (word 0, zero between
    /// launches) and its per-block partials (the rest).
    single_pass: DeviceBuffer<u32>,
    /// Where synchronous calls put a scalar result before copying it back.
    result: DeviceBuffer<u32>,
}

/// A module handle that unloads on drop.
struct Module(CUmodule);

impl Drop for Module {
    fn drop(&mut self) {
        // SAFETY: the handle came from a successful cuModuleLoadDataEx and
        // is unloaded once; the context is still alive (it is dropped after
        // this field). An error here has nowhere to go.
        unsafe {
            driver::cuModuleUnload(self.0);
        }
    }
}

/// Everything the library needs on one GPU: the CUDA context (the device's
/// primary context, shared with other CUDA code in the process), the loaded
/// kernels, a stream, and reusable device memory.
///
/// Every operation is enqueued on [`Context::stream`] in call order. Functions
/// that return a host value (`sum`, `min`, ...) wait for their result;
/// functions named `*_into` only enqueue and return at once.
///
/// A `Context` stays on the thread that created it (the CUDA context is
/// current there); it is neither `Send` nor `Sync`. After a kernel fault
/// (an illegal address, a trap), CUDA cannot recover the context: every later
/// call returns [`Error::ContextLost`].
pub struct Context {
    kernels: HashMap<(&'static str, &'static str), Loaded>,
    _module: Module,
    stream: Stream,
    info: DeviceInfo,
    workspace: RefCell<Workspace>,
    lost: RefCell<Option<String>>,
    // Dropped last: releases the primary context the fields above live in.
    _cuda: cust::context::Context,
}

/// Driver codes that mean "no usable device" rather than a failure:
/// no device, a stub driver library, a driver too old for the runtime,
/// a driver that failed to initialise (`/dev/nvidia*` missing).
const NO_DEVICE_CODES: [u32; 4] = [100, 34, 35, 303];

impl Context {
    /// Initialises CUDA on device `ordinal`, loads the kernels and resolves
    /// every entry point (a missing one is an error now, not at first use).
    pub fn new(ordinal: u32) -> Result<Context> {
        // Through the raw driver call: cust maps codes it does not know (34,
        // a stub library) to "unknown error", which would hide "no device".
        // SAFETY: cuInit takes flags by value and touches no caller memory.
        let code = unsafe { driver::cuInit(0) };
        if NO_DEVICE_CODES.contains(&code) {
            return Err(Error::NoDevice {
                reason: Error::driver(code, "initialising CUDA (cuInit)").to_string(),
            });
        }
        check(code, || "initialising CUDA (cuInit)".into())?;
        let count = cust::device::Device::num_devices()
            .map_err(|e| Error::cust(e, "counting CUDA devices"))?;
        if count == 0 {
            return Err(Error::NoDevice {
                reason: "the driver reports no CUDA device".into(),
            });
        }
        if ordinal >= count {
            return Err(Error::InvalidArgument(format!(
                "device {ordinal} requested, but this machine has {count} CUDA device(s)"
            )));
        }
        let device = cust::device::Device::get_device(ordinal)
            .map_err(|e| Error::cust(e, format!("opening device {ordinal}")))?;
        let name = device
            .name()
            .map_err(|e| Error::cust(e, "reading the device name"))?;
        let total_memory = device
            .total_memory()
            .map_err(|e| Error::cust(e, "reading the device memory size"))?;
        let attr = |a: c_int| -> Result<u32> {
            let mut value: c_int = 0;
            // SAFETY: writes one int; `device` is a valid device handle.
            let code = unsafe { driver::cuDeviceGetAttribute(&mut value, a, device.as_raw()) };
            check(code, || format!("reading device attribute {a}"))?;
            Ok(value.max(0) as u32)
        };
        let compute_capability = (
            attr(attribute::COMPUTE_CAPABILITY_MAJOR)?,
            attr(attribute::COMPUTE_CAPABILITY_MINOR)?,
        );
        let Some((ptx_target, ptx)) =
            crate::ptx::select(compute_capability.0, compute_capability.1)
        else {
            return Err(Error::UnsupportedDevice {
                name,
                compute_capability,
            });
        };
        let info = DeviceInfo {
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
            ptx_target,
        };

        let cuda = cust::context::Context::new(device)
            .map_err(|e| Error::cust(e, "creating the CUDA context"))?;
        let module = load_module(ptx_target, ptx)?;
        let mut kernels = HashMap::new();
        for (_, table) in warpspeed_gpu::FAMILIES {
            for kernel in *table {
                let name = CString::new(kernel.name).expect("kernel names have no NUL");
                let mut function: CUfunction = std::ptr::null_mut();
                // SAFETY: `module.0` is a loaded module; `name` is a valid C
                // string; the function handle is written on success.
                let code =
                    unsafe { driver::cuModuleGetFunction(&mut function, module.0, name.as_ptr()) };
                if code != driver::CUDA_SUCCESS {
                    return Err(Error::MissingEntry {
                        name: kernel.name.into(),
                    });
                }
                let loaded = Loaded {
                    function,
                    kernel,
                    shared_optin: Cell::new(0),
                    occupancy: Cell::new((0, 0, 0)),
                };
                kernels.insert((kernel.base, kernel.ty), loaded);
            }
        }
        let stream = Stream::new(StreamFlags::DEFAULT, None)
            .map_err(|e| Error::cust(e, "creating a stream"))?;
        // The single-pass reduction never runs more blocks than can be
        // resident at once; size its partials for a generous upper bound.
        let single_pass_blocks = info.multiprocessors as usize
            * (info.max_threads_per_multiprocessor / warpspeed_gpu::WARP_SIZE).max(1) as usize;
        let workspace = Workspace {
            scratch: None,
            single_pass: DeviceBuffer::zeroed(1 + single_pass_blocks)
                .map_err(|e| Error::cust(e, "allocating the reduction workspace"))?,
            result: DeviceBuffer::zeroed(4)
                .map_err(|e| Error::cust(e, "allocating the result slot"))?,
        };
        Ok(Context {
            kernels,
            _module: module,
            stream,
            info,
            workspace: RefCell::new(workspace),
            lost: RefCell::new(None),
            _cuda: cuda,
        })
    }

    /// The device this context runs on.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// The stream every operation is enqueued on. Order your own work
    /// against it (events, `synchronize`) when you mix the two.
    pub fn stream(&self) -> &Stream {
        &self.stream
    }

    /// Waits for everything enqueued so far; reports the first failure of
    /// any of it.
    pub fn synchronize(&self) -> Result<()> {
        self.ensure_alive()?;
        // SAFETY: the stream handle is valid for the life of `self`.
        let code = unsafe { driver::cuStreamSynchronize(self.stream.as_inner()) };
        self.track(check(code, || {
            "waiting for the stream (a kernel enqueued earlier failed)".into()
        }))
    }

    /// Frees the scratch memory multi-pass kernels keep between calls (it is
    /// allocated again when needed).
    pub fn release_scratch(&self) -> Result<()> {
        self.synchronize()?;
        self.workspace.borrow_mut().scratch = None;
        Ok(())
    }

    /// Bytes of scratch memory currently held.
    pub fn scratch_bytes(&self) -> usize {
        self.workspace
            .borrow()
            .scratch
            .as_ref()
            .map_or(0, |b| b.len())
    }

    pub(crate) fn ensure_alive(&self) -> Result<()> {
        match &*self.lost.borrow() {
            Some(cause) => Err(Error::ContextLost {
                cause: cause.clone(),
            }),
            None => Ok(()),
        }
    }

    /// Remembers a sticky failure so that later calls report `ContextLost`.
    pub(crate) fn track<T>(&self, result: Result<T>) -> Result<T> {
        if let Err(e) = &result {
            if e.is_sticky() {
                self.lost.borrow_mut().get_or_insert_with(|| e.to_string());
            }
        }
        result
    }

    fn loaded(&self, base: &'static str, ty: &'static str) -> Result<&Loaded> {
        self.kernels
            .get(&(base, ty))
            .ok_or_else(|| Error::MissingEntry {
                name: format!("{base}_{ty}"),
            })
    }

    /// Blocks of `block` threads with `shared_bytes` that one SM holds at
    /// once for this kernel (at least 1).
    pub(crate) fn blocks_per_sm(
        &self,
        base: &'static str,
        ty: &'static str,
        block: u32,
        shared_bytes: u32,
    ) -> Result<u32> {
        let loaded = self.loaded(base, ty)?;
        let (b, s, cached) = loaded.occupancy.get();
        if (b, s) == (block, shared_bytes) && cached > 0 {
            return Ok(cached);
        }
        let mut blocks: c_int = 0;
        // SAFETY: `function` is a resolved handle of the loaded module;
        // writes one int.
        let code = unsafe {
            driver::cuOccupancyMaxActiveBlocksPerMultiprocessor(
                &mut blocks,
                loaded.function,
                block as c_int,
                shared_bytes as usize,
            )
        };
        check(code, || {
            format!("querying the occupancy of {}", loaded.kernel.name)
        })?;
        let blocks = (blocks.max(1)) as u32;
        loaded.occupancy.set((block, shared_bytes, blocks));
        Ok(blocks)
    }

    /// Launches kernel `<base>_<ty>` on the context's stream after checking
    /// the argument sizes against its table row and the configuration
    /// against the device's limits.
    ///
    /// # Safety
    /// The arguments must satisfy the launch contract documented on the
    /// kernel's body in `warpspeed-gpu`: every pointer valid for the lengths
    /// passed, outputs not aliasing inputs unless the body allows it.
    pub(crate) unsafe fn launch(
        &self,
        base: &'static str,
        ty: &'static str,
        cfg: LaunchConfig,
        args: &[Arg<'_>],
    ) -> Result<()> {
        self.ensure_alive()?;
        let loaded = self.loaded(base, ty)?;
        let kernel = loaded.kernel;
        let sizes: Vec<usize> = args.iter().map(|a| a.size).collect();
        if sizes != kernel.params {
            return Err(Error::InvalidArgument(format!(
                "internal: {} takes arguments of {:?} bytes but was given {:?}",
                kernel.name, kernel.params, sizes
            )));
        }
        self.info.check_launch(kernel.name, &cfg)?;
        if cfg.shared_bytes > self.info.max_shared_per_block
            && cfg.shared_bytes > loaded.shared_optin.get()
        {
            // SAFETY: a valid function handle; sets one attribute.
            let code = unsafe {
                driver::cuFuncSetAttribute(
                    loaded.function,
                    driver::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    cfg.shared_bytes as c_int,
                )
            };
            check(code, || {
                format!(
                    "allowing {} {} B of shared memory",
                    kernel.name, cfg.shared_bytes
                )
            })?;
            loaded.shared_optin.set(cfg.shared_bytes);
        }
        let mut params: Vec<*mut c_void> = args.iter().map(|a| a.ptr).collect();
        // SAFETY: the handle belongs to the loaded module; `params` holds one
        // pointer per kernel parameter, each to a live value of the size the
        // kernel declares (checked above); the configuration is within the
        // device's limits (checked above); pointer validity is the caller's
        // contract.
        let code = unsafe {
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
        self.track(check(code, || format!("launching {} ({cfg})", kernel.name)))
    }

    /// A device address of at least `bytes` of scratch memory, 256-byte
    /// aligned, valid until the next call that asks for more.
    pub(crate) fn scratch(&self, bytes: usize) -> Result<u64> {
        let mut workspace = self.workspace.borrow_mut();
        let big_enough = workspace.scratch.as_ref().is_some_and(|b| b.len() >= bytes);
        if !big_enough {
            // Work already enqueued may still use the old buffer.
            // SAFETY: the stream handle is valid for the life of `self`.
            let code = unsafe { driver::cuStreamSynchronize(self.stream.as_inner()) };
            self.track(check(code, || {
                "waiting for the stream before growing scratch memory".into()
            }))?;
            workspace.scratch = None;
            // SAFETY: bytes are never read on the host; kernels write every
            // partial before reading it.
            let buffer = unsafe { DeviceBuffer::<u8>::uninitialized(bytes.max(256)) }
                .map_err(|e| Error::cust(e, format!("allocating {bytes} B of scratch memory")))?;
            workspace.scratch = Some(buffer);
        }
        Ok(workspace
            .scratch
            .as_ref()
            .map(|b| b.as_device_ptr().as_raw())
            .unwrap_or_default())
    }

    /// Enqueues zeroing `words` 4-byte words at device address `address`.
    pub(crate) fn zero_words(&self, address: u64, words: usize) -> Result<()> {
        // SAFETY: callers pass an address valid for `words` 4-byte writes;
        // the stream handle is valid for the life of `self`.
        let code = unsafe { driver::cuMemsetD32Async(address, 0, words, self.stream.as_inner()) };
        self.track(check(code, || format!("zeroing {words} words of output")))
    }

    /// The single-pass workspace: `(counter address, partials address,
    /// partials capacity)`.
    pub(crate) fn single_pass(&self) -> (u64, u64, usize) {
        let workspace = self.workspace.borrow();
        let base = workspace.single_pass.as_device_ptr().as_raw();
        (base, base + 4, workspace.single_pass.len() - 1)
    }

    /// The result slot's address (16 bytes).
    pub(crate) fn result_slot(&self) -> u64 {
        self.workspace.borrow().result.as_device_ptr().as_raw()
    }

    /// Waits for the stream, then copies the first `T` of the result slot
    /// back to the host.
    pub(crate) fn read_result<T: DeviceCopy + Default>(&self) -> Result<T> {
        self.synchronize()?;
        let mut value = T::default();
        let workspace = self.workspace.borrow();
        // SAFETY: the slot holds 16 bytes and `T` is at most that (all
        // element types are 4 bytes); the stream has finished writing it.
        let code = unsafe {
            driver::cuMemcpyDtoH_v2(
                (&mut value as *mut T).cast(),
                workspace.result.as_device_ptr().as_raw(),
                size_of::<T>().min(16),
            )
        };
        self.track(check(code, || "copying a result to the host".into()))?;
        Ok(value)
    }
}

/// Loads `ptx` through `cuModuleLoadDataEx` with an error-log buffer, so a
/// failure says what the JIT compiler said.
fn load_module(target: &'static str, ptx: &str) -> Result<Module> {
    let image = CString::new(ptx).expect("PTX has no NUL");
    let mut log = vec![0u8; 16 * 1024];
    let mut options = [
        driver::CU_JIT_ERROR_LOG_BUFFER,
        driver::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
    ];
    let mut values = [log.as_mut_ptr().cast::<c_void>(), log.len() as *mut c_void];
    let mut module: CUmodule = std::ptr::null_mut();
    // SAFETY: `image` is NUL-terminated PTX; the option arrays have equal
    // length and the log buffer outlives the call and has the stated size.
    let code = unsafe {
        driver::cuModuleLoadDataEx(
            &mut module,
            image.as_ptr().cast(),
            options.len() as u32,
            options.as_mut_ptr(),
            values.as_mut_ptr(),
        )
    };
    if code != driver::CUDA_SUCCESS {
        let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
        let log = String::from_utf8_lossy(&log[..end]).into_owned();
        return Err(match code {
            // Invalid PTX, unsupported PTX version, no JIT compiler.
            218 | 221 | 222 | 200 | 209 => Error::UnsupportedPtx { target, code, log },
            _ => Error::driver(code, format!("loading the {target} PTX module: {log}")),
        });
    }
    Ok(Module(module))
}
