//! `__constant__` symbols: staged from device memory in stream order before
//! the launch that reads them, one chain of copies and readers across every
//! stream of a device. (Nothing writes them from the host: such a write
//! would stand outside that chain.)

use super::Context;
use super::runtime::{OwnedEvent, lock};
use crate::driver;
use crate::error::{Error, Result, check};
use crate::launch::LaunchConfig;
use cust::sys::CUevent;
use warpspeed_gpu::ConstantSymbol;
use warpspeed_gpu::kernel::{Entry, KernelArgs};

impl Context {
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
    /// free when it returns.
    ///
    /// # Safety
    /// As [`Context::launch`]; and `source` must be valid for reading
    /// `bytes` bytes until the stream has run the copy.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for `bytes` of 0 or more than the symbol
    /// holds, or a configuration the device cannot launch (both before
    /// anything is enqueued); [`Error::MissingEntry`] if the module has
    /// no such symbol or one of another size; driver failures.
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
        let stream = self.raw_stream();
        if let Some(recording) = self.recording.borrow_mut().as_mut() {
            // Recorded: after the recorded calls that staged one; the
            // graph's launch joins the device's chain (a capture may not
            // wait here on work outside it).
            recording.stage_constant()?;
        }
        // Held until the new reader is recorded: one chain across threads.
        let mut readers = lock(&self.runtime.constant_readers);
        let capturing = self.capturing();
        if !capturing {
            self.wait_for_constant_readers(&readers)?;
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
        if capturing {
            return launched;
        }
        let recorded = self.record_constant_reader(&mut readers);
        drop(readers);
        if launched.is_err() || recorded.is_err() {
            // The copy (and perhaps the kernel) is enqueued and uses the
            // caller's buffers, which an `Err` releases: wait for it first.
            let _ = self.synchronize();
        }
        launched.and(recorded)
    }

    /// Makes this stream wait for the last launch that read a staged
    /// symbol (`readers`, held locked by the caller until it records the
    /// next).
    pub(crate) fn wait_for_constant_readers(&self, readers: &Option<OwnedEvent>) -> Result<()> {
        if let Some(last) = readers {
            // SAFETY: both handles are valid (the event lives in the runtime
            // until replaced or dropped, and a wait enqueued on it stays valid
            // after that); flags 0.
            let status = unsafe { driver::cuStreamWaitEvent(self.raw_stream(), last.0, 0) };
            self.track(check(status, || {
                "ordering a copy into constant memory after its readers".into()
            }))?;
        }
        Ok(())
    }

    /// Records a fresh event on this stream and makes it the one the next
    /// constant-memory staging waits for.
    pub(crate) fn record_constant_reader(&self, readers: &mut Option<OwnedEvent>) -> Result<()> {
        let mut event: CUevent = std::ptr::null_mut();
        // SAFETY: writes one handle on success.
        let status = unsafe { driver::cuEventCreate(&mut event, driver::CU_EVENT_DISABLE_TIMING) };
        self.track(check(status, || "creating an event".into()))?;
        let event = OwnedEvent(event);
        // SAFETY: both handles are valid.
        let status = unsafe { driver::cuEventRecord(event.0, self.raw_stream()) };
        self.track(check(status, || "recording an event".into()))?;
        // The previous event is dropped (destroyed) here: every wait on it
        // has been enqueued already.
        *readers = Some(event);
        Ok(())
    }
}
