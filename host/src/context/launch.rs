//! Launching the loaded kernels: the device's limits checked first, shared
//! memory above 48 KiB allowed per kernel, occupancy asked once per shape.

use super::Context;
use super::runtime::{Loaded, lock};
use crate::device::KernelResources;
use crate::driver;
use crate::error::{Result, check};
use crate::launch::LaunchConfig;
use std::ffi::{c_int, c_void};
use std::sync::atomic::Ordering;
use warpspeed_gpu::kernel::{Entry, KernelArgs, MAX_PARAMS};

impl Context {
    /// Registers, local memory and static shared memory of every kernel of
    /// the loaded module, in the order of `warpspeed_gpu::FAMILIES`: why a
    /// step runs as many threads per SM as it does, and whether it spills.
    ///
    /// # Errors
    /// [`Error::Cuda`](crate::Error::Cuda) if the driver cannot say.
    pub fn kernel_resources(&self) -> Result<Vec<KernelResources>> {
        self.ensure_alive()?;
        let read = |loaded: &Loaded, attribute: c_int| -> Result<u32> {
            let function = self.track(self.runtime.function(loaded))?;
            let mut value: c_int = 0;
            // SAFETY: a resolved function of the loaded module; writes one int.
            let status = unsafe { driver::cuFuncGetAttribute(&mut value, attribute, function) };
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

    pub(super) fn loaded<A>(&self, entry: Entry<A>) -> &Loaded {
        // In range: entries are indices into the flattened kernel tables,
        // one `Loaded` each.
        &self.runtime.kernels[entry.index()]
    }

    /// Opts `loaded` into `shared_bytes` of dynamic shared memory where that
    /// is more than every kernel may have unasked (48 KiB), once per size:
    /// before a launch, and before an occupancy query, which otherwise
    /// counts no block as fitting.
    fn allow_shared(&self, loaded: &Loaded, shared_bytes: u32) -> Result<()> {
        if shared_bytes <= self.info().max_shared_per_block
            || shared_bytes <= loaded.shared_optin.load(Ordering::Acquire)
        {
            return Ok(());
        }
        // Check and set under the kernel's lock: the attribute only grows.
        let _held = lock(&loaded.optin_lock);
        if shared_bytes <= loaded.shared_optin.load(Ordering::Acquire) {
            return Ok(());
        }
        let function = self.track(self.runtime.function(loaded))?;
        // SAFETY: a valid function handle; sets one attribute.
        let status = unsafe {
            driver::cuFuncSetAttribute(
                function,
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
        loaded.shared_optin.store(shared_bytes, Ordering::Release);
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
        let function = self.track(self.runtime.function(loaded))?;
        let mut blocks: c_int = 0;
        // SAFETY: `function` is a resolved handle of the loaded module;
        // writes one int.
        let status = unsafe {
            driver::cuOccupancyMaxActiveBlocksPerMultiprocessor(
                &mut blocks,
                function,
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
        let function = self.track(self.runtime.function(loaded))?;
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
                function,
                cfg.grid.0,
                cfg.grid.1,
                1,
                cfg.block.0,
                cfg.block.1,
                1,
                cfg.shared_bytes,
                self.raw_stream(),
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        self.track(check(status, || {
            format!("launching {} ({cfg})", kernel.name)
        }))
    }

    /// Enqueues zeroing `words` 4-byte words at device address `address`.
    ///
    /// # Safety
    /// `address` must be valid for `words` 4-byte writes until the stream
    /// has run the memset.
    pub(crate) unsafe fn zero_words(&self, address: u64, words: usize) -> Result<()> {
        // SAFETY: the address is the caller's contract; the stream handle is
        // valid for the life of `self`.
        let status = unsafe { driver::cuMemsetD32Async(address, 0, words, self.raw_stream()) };
        self.track(check(status, || format!("zeroing {words} words of output")))
    }
}
