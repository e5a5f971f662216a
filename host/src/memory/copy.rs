//! Allocating, filling and copying device memory: the methods of
//! [`Context`] that make [`Buffer`]s and move bytes between the host and
//! the device, or within a device.

use super::buffer::Allocation;
use super::tracker::{Call, Tracker};
use super::{Buffer, DeviceRead, DeviceWrite, Pod, same_length};
use crate::context::Context;
use crate::driver;
use crate::error::{Error, Result, check};
use cust::memory::DeviceBuffer;
use cust::sys::CUcontext;
use std::marker::PhantomData;
use std::sync::Arc;

impl Context {
    /// A buffer of `len` elements whose contents are whatever the memory
    /// held: for outputs that a call overwrites whole, where
    /// [`Context::zeros`] would write every byte once more for nothing
    /// (`cudarc`'s `alloc`, which is `unsafe` there; safe here because
    /// every bit pattern is a valid [`Pod`], so reading the elements
    /// before writing them gives meaningless values, never undefined
    /// behaviour). The allocation is synchronous; nothing is enqueued.
    ///
    /// # Errors
    /// As [`Context::zeros`].
    pub fn alloc<T: Pod>(&self, len: usize) -> Result<Buffer<T>> {
        self.ensure_alive()?;
        let bytes = bytes_of::<T>(len, "a buffer")?;
        let mut address = 0u64;
        if bytes > 0 {
            // SAFETY: writes one address on success; the context is current
            // (`ensure_alive`).
            let status = unsafe { driver::cuMemAlloc_v2(&mut address, bytes) };
            check(status, || format!("allocating {bytes} B of device memory"))?;
        }
        Ok(self.owned(address, len))
    }

    /// A buffer of `len` zeros, filled in stream order on this queue.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a size that overflows; [`Error::Cuda`]
    /// for an allocation the device cannot make (`code::OUT_OF_MEMORY`).
    pub fn zeros<T: Pod>(&self, len: usize) -> Result<Buffer<T>> {
        self.refuse_in_capture("zeros (a new buffer would be zero only once the graph runs: allocate before the capture)")?;
        let mut buffer = self.alloc::<T>(len)?;
        self.fill_zero(&mut buffer)?;
        Ok(buffer)
    }

    /// Sets every byte of `dst` to zero, in stream order on this queue
    /// (returns at once).
    ///
    /// # Errors
    /// [`Error::WrongDevice`]; driver failures.
    pub fn fill_zero<T: Pod>(&self, dst: &mut impl DeviceWrite<Elem = T>) -> Result<()> {
        self.fill_bits(dst, Fill::Words(1, 0))
    }

    /// Sets every element of `dst` to `value`, in stream order on this
    /// queue (returns at once). Elements of any size: 8-byte ones whose
    /// two halves differ are written as two strided passes of 4-byte words.
    ///
    /// # Errors
    /// [`Error::WrongDevice`]; driver failures.
    pub fn fill<T: Pod>(&self, dst: &mut impl DeviceWrite<Elem = T>, value: T) -> Result<()> {
        let size = size_of::<T>();
        let mut bits = [0u8; 8];
        // SAFETY: `T` is a plain number of `size <= 8` bytes (`Pod`), read
        // as bytes into a buffer of 8.
        unsafe {
            std::ptr::copy_nonoverlapping(
                (&value as *const T).cast::<u8>(),
                bits.as_mut_ptr(),
                size,
            )
        };
        let word = |i: usize| u32::from_ne_bytes([bits[i], bits[i + 1], bits[i + 2], bits[i + 3]]);
        let fill = match size {
            8 if word(0) == word(4) => Fill::Words(4, word(0)),
            8 => Fill::Pairs(word(0), word(4)),
            _ => Fill::Words(size, word(0)),
        };
        self.fill_bits(dst, fill)
    }

    /// Sets `dst` as `fill` says.
    fn fill_bits<T: Pod>(&self, dst: &mut impl DeviceWrite<Elem = T>, fill: Fill) -> Result<()> {
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
        // (of `size` bytes where `size > 1`; 8 for the pairs), ordered after
        // its other uses by `call`. The pairs write `bytes / 8` rows of one
        // word, 8 bytes apart, from the first and from the second word of
        // each element: inside the view.
        let status = unsafe {
            match fill {
                Fill::Words(4, bits) => driver::cuMemsetD32Async(address, bits, bytes / 4, stream),
                Fill::Words(2, bits) => {
                    driver::cuMemsetD16Async(address, bits as u16, bytes / 2, stream)
                }
                Fill::Words(_, bits) => driver::cuMemsetD8Async(address, bits as u8, bytes, stream),
                Fill::Pairs(low, high) => {
                    let rows = bytes / 8;
                    match driver::cuMemsetD2D32Async(address, 8, low, 1, rows, stream) {
                        driver::CUDA_SUCCESS => {
                            driver::cuMemsetD2D32Async(address + 4, 8, high, 1, rows, stream)
                        }
                        failed => failed,
                    }
                }
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
        self.refuse_in_capture("an upload (a copy from host memory)")?;
        let mut buffer = self.alloc::<T>(host.len())?;
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
        self.refuse_in_capture("a copy from host memory")?;
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
        self.refuse_in_capture("a copy to host memory")?;
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
        let src = src.view();
        let mut host = vec![T::default(); src.len()];
        self.copy_to_host(&src, &mut host)?;
        Ok(host)
    }

    /// Copies `src` into `dst` on the device, in stream order on this queue
    /// (returns at once). Both must be on this queue's device: a copy
    /// between two devices goes through the host
    /// ([`Context::download`], then [`Context::copy_from_host`]).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] unless the lengths are equal;
    /// [`Error::WrongDevice`] for memory of another device; driver failures.
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
    /// dropped, after the work that uses it.
    ///
    /// `unsafe` because a `cust` buffer cannot promise that it is the only
    /// handle to its memory: its `DeviceSlice`s and `DevicePointer`s are
    /// `Copy`, and outlive it. The library's own buffers come from
    /// [`Context::alloc`], [`Context::zeros`] and [`Context::upload`].
    ///
    /// # Safety
    /// From the call on, for as long as the returned buffer lives:
    /// * nothing but the returned buffer uses the memory: no `DeviceSlice`,
    ///   `DevicePointer` or address taken from `buffer` before the call is
    ///   used again (a write through one would race the library's work,
    ///   and after the buffer is dropped would land in whatever allocation
    ///   reuses the address);
    /// * the allocation is live: `buffer` was allocated (by `cuMemAlloc`,
    ///   as cust's `DeviceBuffer` does) in the primary context of this
    ///   device, which has not been reset or destroyed since (an address of
    ///   a destroyed context may already belong to another allocation);
    /// * no work the caller enqueued on it is still running (cust's
    ///   `unsafe` async copies, kernels of yours): cust's safe copies have
    ///   finished when they return.
    ///
    /// # Errors
    /// [`Error::WrongDevice`] for memory of another device;
    /// [`Error::InvalidArgument`] for memory of another CUDA context of
    /// this device (one made with `cuCtxCreate`, which the library's
    /// kernels cannot reach; `cust::quick_init` retains the primary
    /// context, the library's own). The allocation is freed in both cases.
    ///
    /// Safe code cannot call it:
    ///
    /// ```compile_fail,E0133
    /// # fn main() -> warpspeed::Result<()> {
    /// let ctx = warpspeed::Context::new(0)?;
    /// let theirs = cust::memory::DeviceBuffer::from_slice(&[1u32; 4]).unwrap();
    /// let buffer = ctx.adopt(theirs)?; // error: call to unsafe function
    /// # let _ = buffer; Ok(()) }
    /// ```
    pub unsafe fn adopt<T: Pod>(&self, buffer: DeviceBuffer<T>) -> Result<Buffer<T>> {
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
                return Err(Error::foreign_context(
                    self.info().ordinal,
                    ordinal as u32,
                    "an allocation",
                ));
            }
        }
        // cust frees with cuMemFree on drop; the buffer now does.
        std::mem::forget(buffer);
        Ok(self.owned(address, len))
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

impl Context {
    /// A buffer that owns the `len` elements at `address`, an allocation
    /// (or null, for none) in this device's primary context that nothing
    /// else frees.
    fn owned<T: Pod>(&self, address: u64, len: usize) -> Buffer<T> {
        Buffer {
            allocation: Arc::new(Allocation {
                address,
                tracker: Tracker::new(self.info().ordinal, self.runtime().cuda.as_raw()),
                runtime: self.runtime().clone(),
            }),
            len,
            _element: PhantomData,
        }
    }
}

/// What [`Context::fill`] writes: words of 1, 2 or 4 bytes holding the
/// low bits of a `u32`, or pairs of 4-byte words (an 8-byte element whose
/// halves differ).
#[derive(Clone, Copy)]
enum Fill {
    Words(usize, u32),
    Pairs(u32, u32),
}

/// The bytes of `len` elements of `T`, or an error for `what` (a buffer,
/// a pinned buffer) when they overflow the address space.
pub(super) fn bytes_of<T>(len: usize, what: &str) -> Result<usize> {
    len.checked_mul(size_of::<T>()).ok_or_else(|| {
        Error::InvalidArgument(format!(
            "{what} of {len} elements of {} B overflows the address space",
            size_of::<T>()
        ))
    })
}
