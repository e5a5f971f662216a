//! A queue's clock: the event that buffers wait on for the queue's uses of
//! them ([`crate::memory`] has the argument this serves).

use super::runtime::{Runtime, lock};
use crate::driver;
use crate::error::{Result, check};
use cust::sys::CUevent;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// A queue's event and the count of its calls that used buffers. The event
/// is recorded lazily: only when another queue, a buffer's `Drop` or a host
/// read must wait for a use, and only if no recording since covers it. So a
/// queue whose buffers no one else touches makes no driver call for them.
pub(crate) struct Clock {
    event: CUevent,
    /// Calls of the queue that used buffers, each numbered when its work is
    /// all enqueued (before its uses are registered on the buffers).
    issued: AtomicU64,
    state: Mutex<ClockState>,
    /// Set with `state.stream = None`: a cheap test for pruning.
    retired: AtomicBool,
    /// Keeps the CUDA context the event belongs to alive.
    _runtime: Arc<Runtime>,
}

struct ClockState {
    /// The queue's stream; `None` once the queue is gone, after waiting for
    /// everything on it (its uses need no more waiting).
    stream: Option<cust::sys::CUstream>,
    /// The last call the event's latest recording comes after.
    recorded: u64,
}

// SAFETY: the event and stream handles are driver objects usable from any
// thread (the driver API is thread-safe); the stream handle is only used
// under the lock, and cleared under it before the stream is destroyed; the
// counters are atomic.
unsafe impl Send for Clock {}
// SAFETY: as for `Send`.
unsafe impl Sync for Clock {}

impl Clock {
    /// A new clock for `stream` in `runtime`'s CUDA context (current on
    /// this thread).
    pub(crate) fn new(runtime: Arc<Runtime>, stream: cust::sys::CUstream) -> Result<Clock> {
        let mut event: CUevent = std::ptr::null_mut();
        // SAFETY: writes one handle on success; the context is current.
        let status = unsafe { driver::cuEventCreate(&mut event, driver::CU_EVENT_DISABLE_TIMING) };
        check(status, || "creating a queue's event".into())?;
        Ok(Clock {
            event,
            issued: AtomicU64::new(0),
            state: Mutex::new(ClockState {
                stream: Some(stream),
                recorded: 0,
            }),
            retired: AtomicBool::new(false),
            _runtime: runtime,
        })
    }

    /// Numbers a call whose work is all enqueued on the queue's stream.
    pub(crate) fn issue(&self) -> u64 {
        self.issued.fetch_add(1, Ordering::AcqRel) + 1
    }

    /// Marks every use of the queue as finished: the caller has waited for
    /// its stream and destroys it next.
    pub(crate) fn retire(&self) {
        lock(&self.state).stream = None;
        self.retired.store(true, Ordering::Release);
    }

    pub(crate) fn retired(&self) -> bool {
        self.retired.load(Ordering::Acquire)
    }

    /// The event, recorded after call `seq` of the queue (recording it on
    /// the queue's stream now if no recording covers that call), or `None`
    /// once the queue is gone and all its work with it.
    pub(crate) fn after(&self, seq: u64) -> std::result::Result<Option<CUevent>, driver::CUresult> {
        let mut state = lock(&self.state);
        let Some(stream) = state.stream else {
            return Ok(None);
        };
        if state.recorded < seq {
            // Every call numbered so far has enqueued all its work (numbers
            // are taken after it), call `seq` among them: a recording now
            // comes after it.
            let now = self.issued.load(Ordering::Acquire);
            // SAFETY: both handles are valid: the stream until `retire`,
            // which takes this lock first; the event as long as `self`.
            let status = unsafe { driver::cuEventRecord(self.event, stream) };
            if status != driver::CUDA_SUCCESS {
                return Err(status);
            }
            state.recorded = now;
        }
        // A later recording by another waiter only waits longer.
        Ok(Some(self.event))
    }
}

impl Drop for Clock {
    fn drop(&mut self) {
        // SAFETY: created by cuEventCreate and destroyed once; the runtime
        // (and its CUDA context) is dropped after this. Destroying an event
        // with waits still enqueued on it is allowed.
        unsafe {
            driver::cuEventDestroy_v2(self.event);
        }
    }
}
