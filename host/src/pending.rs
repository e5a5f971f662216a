//! Work the GPU has not finished, and the buffers it still uses.

use crate::context::Context;
use crate::error::Result;
use std::marker::PhantomData;

/// Work enqueued on a [`Context`]'s stream (or on the streams of a
/// [`Group`](crate::nccl::Group)'s contexts) that may still be running.
///
/// Every `*_into` function returns one. It borrows the context and every
/// buffer the work reads or writes for its lifetime `'a`, so none of them
/// can be freed, written or read by the host while the GPU may still use
/// it; dropping it waits for the stream. Keep it to overlap host work with
/// the GPU's, or to enqueue more work before waiting:
///
/// ```no_run
/// # fn main() -> warpspeed::Result<()> {
/// use cust::memory::DeviceBuffer;
/// use warpspeed::{Matrix, MatrixMut};
/// let ctx = warpspeed::Context::new(0)?;
/// let a = DeviceBuffer::from_slice(&[1.0f32; 6]).unwrap();
/// let mut t = DeviceBuffer::from_slice(&[0.0f32; 6]).unwrap();
/// let (src, mut dst) = (Matrix::new(&a, 3, 2)?, MatrixMut::new(&mut t, 2, 3)?);
/// let pending = ctx.transpose_into(&src, &mut dst)?; // returns at once
/// // ... host work while the GPU transposes ...
/// pending.wait()?; // reports a failure of the work
/// # Ok(()) }
/// ```
///
/// To wait at once, `ctx.transpose_into(..)?.wait()?`. A guard dropped
/// without `wait` also waits (and a kernel fault still reaches the next
/// call as [`crate::Error::ContextLost`]): correct by default, asynchronous
/// on request.
///
/// Soundness: the borrows are what keeps the buffers alive, and dropping
/// the guard waits, so in safe code no buffer is freed or touched by the
/// host while the GPU uses it. Leaking the guard (`std::mem::forget`) ends
/// the borrows early; the GPU may then read or write device memory the
/// program has freed or reused, which can give wrong device data or a
/// kernel fault ([`crate::Error::ContextLost`]) but never touches host
/// memory: the library hands the GPU device allocations only. A
/// [`Context`] also waits for its stream when dropped, so its own scratch
/// memory is never freed under running work.
#[must_use = "dropping a Pending waits for the GPU at once; bind it to overlap work, or call .wait() to see errors"]
pub struct Pending<'a> {
    contexts: &'a [Context],
    _buffers: PhantomData<&'a mut ()>,
}

impl<'a> Pending<'a> {
    /// Work enqueued on `ctx`'s stream that uses buffers borrowed for `'a`.
    pub(crate) fn new(ctx: &'a Context) -> Self {
        Pending::on(std::slice::from_ref(ctx))
    }

    /// Work enqueued on the streams of `contexts`.
    pub(crate) fn on(contexts: &'a [Context]) -> Self {
        Pending {
            contexts,
            _buffers: PhantomData,
        }
    }

    /// Waits for the work (and everything enqueued before it on the
    /// streams).
    ///
    /// # Errors
    /// The first failure of that work, as [`Context::synchronize`] (every
    /// stream is waited for even so).
    pub fn wait(self) -> Result<()> {
        let contexts = self.contexts;
        std::mem::forget(self);
        synchronize_all(contexts)
    }

    /// Lets the work run on without waiting and ends the borrows now.
    ///
    /// # Safety
    /// The caller keeps every buffer the work uses alive and untouched by
    /// the host until the stream has run it (e.g. it synchronizes the
    /// context before dropping or reading them); benchmarks use this to
    /// enqueue many launches back to back.
    pub unsafe fn detach(self) {
        std::mem::forget(self);
    }
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        // A failure is remembered by the context when it is a kernel fault
        // (the next call reports it); `wait` is the way to see it here.
        let _ = synchronize_all(self.contexts);
    }
}

/// Waits for every context's stream (all of them, also after a failure);
/// the first failure.
fn synchronize_all(contexts: &[Context]) -> Result<()> {
    let mut first = Ok(());
    for ctx in contexts {
        let waited = ctx.synchronize();
        first = first.and(waited);
    }
    first
}

impl std::fmt::Debug for Pending<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Pending")
    }
}
