//! Work the GPU has not finished, and the buffers it still uses.

use crate::context::Context;
use crate::error::Result;
use std::marker::PhantomData;

/// Work enqueued on a [`Context`]'s stream (or on the streams of a
/// [`Group`](crate::nccl::Group)'s contexts) that may still be running.
///
/// Every `*_into` function returns one. It borrows the context for its
/// lifetime `'a` (not the buffers: they order their own uses, so a view
/// made for the call may be a temporary), and dropping it waits for the
/// stream. Keep it to overlap host work with the GPU's, or to enqueue
/// more work before waiting:
///
/// ```no_run
/// # fn main() -> warpspeed::Result<()> {
/// use warpspeed::{Matrix, MatrixMut};
/// let ctx = warpspeed::Context::new(0)?;
/// let a = ctx.upload(&[1.0f32; 6])?;
/// let mut t = ctx.zeros::<f32>(6)?;
/// let (src, mut dst) = (Matrix::new(&a, 3, 2)?, MatrixMut::new(&mut t, 2, 3)?);
/// let pending = ctx.transpose_into(&src, &mut dst)?; // returns at once
/// // ... host work while the GPU transposes ...
/// pending.wait()?; // reports a failure of the work
/// # Ok(()) }
/// ```
///
/// Inside [`Context::capture`] a `Pending` waits for nothing: the calls
/// run when the graph is launched, and [`Graph::launch`](crate::Graph::launch)
/// returns the `Pending` of the replay.
///
/// To wait at once, `ctx.transpose_into(..)?.wait()?`. A guard dropped
/// without `wait` also waits (and a kernel fault still reaches the next
/// call as [`crate::Error::ContextLost`]): correct by default, asynchronous
/// on request.
///
/// Soundness does not rest on this guard. The buffers themselves order
/// every later use after the work, on this queue or any other, and wait
/// for it before their memory is freed; host reads ([`crate::Buffer::to_vec`],
/// [`Context::download`]) wait for it too. So `std::mem::forget`,
/// `Box::leak`, an `Rc` cycle or [`Pending::detach`] only skip the wait:
/// every result stays right. The argument is in [`crate::memory`]. A
/// [`Context`] waits for its stream when dropped, so its own scratch memory
/// is never freed under running work either.
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

    /// Lets the work run on without waiting and ends the borrows now (to
    /// enqueue many launches back to back, as benchmarks do). Safe: the
    /// buffers order every later use, on any queue, and their `Drop`, after
    /// this work ([`crate::memory`] has the argument).
    pub fn detach(self) {
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
/// the first failure. A queue that records a graph has nothing to wait
/// for: its calls run when the graph is launched.
fn synchronize_all(contexts: &[Context]) -> Result<()> {
    let mut first = Ok(());
    for ctx in contexts {
        if ctx.capturing() {
            continue;
        }
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
