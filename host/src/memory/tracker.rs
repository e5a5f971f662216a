//! The ordering of each buffer's uses across queues: a buffer's
//! [`Tracker`], and the [`Call`] that orders one call's uses and registers
//! them when the call ends ([`crate::memory`] has the argument).

use super::buffer::Allocation;
use super::{Pod, View, ViewMut};
use crate::context::Context;
use crate::context::clock::Clock;
use crate::context::runtime::lock;
use crate::driver;
use crate::error::{Error, Result, check};
use cust::sys::CUcontext;
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

/// One queue's use of a buffer since the buffer's last write: its latest
/// call that used it, and whether any such call wrote it.
struct Use {
    clock: Arc<Clock>,
    seq: u64,
    wrote: bool,
}

/// The uses of one allocation, the device it is on and the CUDA context
/// it belongs to (kept alive by the buffer that holds the tracker).
pub(crate) struct Tracker {
    uses: Mutex<Vec<Use>>,
    pub(crate) ordinal: u32,
    context: usize,
}

impl Tracker {
    pub(crate) fn new(ordinal: u32, context: CUcontext) -> Tracker {
        Tracker {
            uses: Mutex::new(Vec::new()),
            ordinal,
            context: context as usize,
        }
    }

    /// Copies `bytes` bytes at `address` (memory this tracker orders) into
    /// `host`, once every write to it has finished.
    ///
    /// # Safety
    /// `address` is valid for `bytes` bytes of the tracked allocation, and
    /// `host` for `bytes` bytes of writes; no write to the memory may start
    /// before the call returns (the caller holds a shared borrow of it).
    pub(super) unsafe fn read_to_host(
        &self,
        address: u64,
        host: *mut c_void,
        bytes: usize,
    ) -> Result<()> {
        let _current = Current::push(self.context as CUcontext)?;
        self.wait_host(false)?;
        // SAFETY: the caller's contract; every write has finished (waited
        // for above). The copy is synchronous: it has ended on return.
        let status = unsafe { driver::cuMemcpyDtoH_v2(host, address, bytes) };
        check(status, || "copying a buffer to the host".into())
    }

    /// Enqueues on `stream` a wait for every other queue's use that
    /// conflicts with a read (`write == false`) or a write by `clock`'s queue.
    pub(crate) fn order_after(
        &self,
        clock: &Arc<Clock>,
        stream: cust::sys::CUstream,
        write: bool,
    ) -> driver::CUresult {
        for u in lock(&self.uses).iter() {
            if Arc::ptr_eq(&u.clock, clock) || !(write || u.wrote) || u.clock.retired() {
                continue;
            }
            let event = match u.clock.after(u.seq) {
                Ok(Some(event)) => event,
                Ok(None) => continue,
                Err(status) => return status,
            };
            // SAFETY: the stream is the caller's live stream; the event
            // lives as long as the `Arc` held here; flags 0.
            let status = unsafe { driver::cuStreamWaitEvent(stream, event, 0) };
            if status != driver::CUDA_SUCCESS {
                return status;
            }
        }
        driver::CUDA_SUCCESS
    }

    /// Records call `seq` of `clock`'s queue as a use, after its work was
    /// enqueued, or after the queue's stream was waited for (`finished`).
    pub(crate) fn register(&self, clock: &Arc<Clock>, seq: u64, wrote: bool, finished: bool) {
        let mut uses = lock(&self.uses);
        uses.retain(|u| !u.clock.retired());
        if wrote {
            // The write waited for every use listed (it had the buffer to
            // itself: no use was added since), so its call, and any
            // recording after it, also marks their end.
            uses.clear();
            if !finished {
                uses.push(Use {
                    clock: clock.clone(),
                    seq,
                    wrote: true,
                });
            }
        } else if finished {
            // This queue's earlier uses are finished too.
            uses.retain(|u| !Arc::ptr_eq(&u.clock, clock));
        } else if let Some(mine) = uses.iter_mut().find(|u| Arc::ptr_eq(&u.clock, clock)) {
            mine.seq = seq;
        } else {
            uses.push(Use {
                clock: clock.clone(),
                seq,
                wrote: false,
            });
        }
    }

    /// Waits on the host for every use that wrote the buffer (`all`: every
    /// use).
    pub(crate) fn wait_host(&self, all: bool) -> Result<()> {
        for u in lock(&self.uses).iter() {
            if !(all || u.wrote) || u.clock.retired() {
                continue;
            }
            let event = u
                .clock
                .after(u.seq)
                .map_err(|status| Error::driver(status, "recording a queue's event"))?;
            if let Some(event) = event {
                // SAFETY: the event lives as long as the `Arc` held here.
                let status = unsafe { driver::cuEventSynchronize(event) };
                check(status, || "waiting for the work that uses a buffer".into())?;
            }
        }
        Ok(())
    }
}

/// Makes a CUDA context current on this thread until dropped, then restores
/// the one that was.
pub(crate) struct Current;

impl Current {
    /// Pushes `context`, which the caller keeps alive while the guard
    /// lives: a runtime's retained primary context, or the context of a
    /// stream the caller owns.
    pub(crate) fn push(context: CUcontext) -> Result<Current> {
        // SAFETY: `context` is live (the caller's promise above); the
        // driver only pushes the handle.
        let status = unsafe { driver::cuCtxPushCurrent_v2(context) };
        check(status, || "making a device's context current".into())?;
        Ok(Current)
    }
}

impl Drop for Current {
    fn drop(&mut self) {
        let mut popped: CUcontext = std::ptr::null_mut();
        // SAFETY: pops the context `push` pushed; writes one handle.
        unsafe {
            driver::cuCtxPopCurrent_v2(&mut popped);
        }
    }
}

/// Who orders the uses of a view's memory.
#[derive(Clone, Copy)]
pub(crate) enum Order<'a> {
    /// Memory from raw parts: the caller, by the contract of
    /// `from_raw_parts`.
    Caller,
    /// A [`Buffer`](super::Buffer)'s allocation, through its tracker; a
    /// graph that captures a use keeps the allocation alive.
    Buffer(&'a Arc<Allocation>),
    /// Page-locked host memory, through its tracker (any device's queue
    /// may copy it).
    Pinned(&'a Tracker),
    /// A `cudarc` slice, through its events.
    #[cfg(feature = "cudarc")]
    Cudarc(crate::interop::Events<'a>),
}

/// The uses of buffers by one call on one queue: each read or write is
/// ordered after the conflicting uses of other queues when it is added, and
/// registered on the buffer when the call ends (`Drop`), numbered after
/// everything the call enqueued, whether it succeeded or not (the queue's
/// clock is recorded behind that number when someone must wait for it).
pub(crate) struct Call<'c> {
    ctx: &'c Context,
    /// The buffers used, each once (a write where any use writes): the
    /// first [`INLINE_USES`] here, any more in `more`.
    uses: [Option<(Order<'c>, bool)>; INLINE_USES],
    more: Vec<(Order<'c>, bool)>,
    count: usize,
    finished: bool,
    /// In a recording: whether the call's branch could be made (its
    /// failure, returned by the first use).
    begun: Result<()>,
    /// cudarc's guards for the call's slices: dropped with the call, after
    /// its work is enqueued, they record the slices' events.
    #[cfg(feature = "cudarc")]
    held: Vec<crate::interop::Held>,
}

/// Buffers one call lists without allocating (the most any family but a
/// list of products passes is five).
const INLINE_USES: usize = 8;

impl Order<'_> {
    /// Whether two uses are of the same memory (views of one buffer).
    fn same_memory(&self, other: &Order<'_>) -> bool {
        match (self, other) {
            (Order::Buffer(a), Order::Buffer(b)) => Arc::ptr_eq(a, b),
            (Order::Pinned(a), Order::Pinned(b)) => std::ptr::eq(*a, *b),
            _ => false,
        }
    }
}

impl<'c> Call<'c> {
    pub(crate) fn new(ctx: &'c Context) -> Call<'c> {
        // In a recording, the call gets a branch of the capture and scratch
        // memory of its own (the graph keeps the earlier calls').
        let begun = ctx.begin_recorded_call();
        Call {
            ctx,
            uses: [None; INLINE_USES],
            more: Vec::new(),
            count: 0,
            finished: false,
            begun,
            #[cfg(feature = "cudarc")]
            held: Vec::new(),
        }
    }

    fn add(&mut self, order: Order<'c>, ordinal: u32, write: bool) -> Result<()> {
        let expected = self.ctx.info().ordinal;
        if ordinal != expected {
            return Err(Error::WrongDevice {
                expected,
                found: ordinal,
            });
        }
        if let Err(e) = &self.begun {
            return Err(e.clone());
        }
        if let (Order::Caller, false) = (order, self.ctx.capturing()) {
            return Ok(());
        }
        // A buffer the call already uses (views of one buffer): the use
        // listed stands for this one where it writes or this one only
        // reads; a read that becomes a write is ordered again, as a
        // write, and listed as one in its place.
        let again = self.listed().position(|(o, _)| o.same_memory(&order));
        let wrote = again
            .and_then(|i| self.listed().nth(i))
            .is_some_and(|&(_, w)| w);
        if again.is_some() && (wrote || !write) {
            return Ok(());
        }
        if let Some(recording) = self.ctx.recording.borrow_mut().as_mut() {
            // Recorded in a graph: after the recorded calls it conflicts
            // with, and no wait on work outside the capture (a capture may
            // not): the graph's launch orders the use against the others.
            recording.record(order, write)?;
        } else {
            let (stream, clock) = (self.ctx.raw_stream(), self.ctx.clock());
            let status = match order {
                Order::Caller => driver::CUDA_SUCCESS,
                Order::Buffer(allocation) => allocation.tracker().order_after(clock, stream, write),
                Order::Pinned(tracker) => tracker.order_after(clock, stream, write),
                #[cfg(feature = "cudarc")]
                Order::Cudarc(events) => {
                    // cudarc's write protocol takes the slice exclusively:
                    // one call may not also read or write it through
                    // another view (two halves of `split_at_mut`).
                    let again = self.listed().any(|(o, w)| {
                        matches!(o, Order::Cudarc(e) if e.same_slice(&events) && (*w || write))
                    });
                    if again {
                        return Err(Error::InvalidArgument(
                            "one call writes a cudarc slice and uses it again through another \
                             view: copy one part first"
                                .into(),
                        ));
                    }
                    self.held.push(events.order_on(self.ctx, write)?);
                    driver::CUDA_SUCCESS
                }
            };
            self.ctx.track(check(status, || {
                "ordering a call after the other queues that use its buffers".into()
            }))?;
        }
        match again {
            Some(i) if i < INLINE_USES => self.uses[i] = Some((order, true)),
            Some(i) => self.more[i - INLINE_USES] = (order, true),
            None if self.count < INLINE_USES => {
                self.uses[self.count] = Some((order, write));
                self.count += 1;
            }
            None => {
                self.more.push((order, write));
                self.count += 1;
            }
        }
        Ok(())
    }

    /// The uses listed, in order.
    fn listed(&self) -> impl Iterator<Item = &(Order<'c>, bool)> {
        self.uses.iter().flatten().chain(self.more.iter())
    }

    /// Orders this call's work after every other queue's writes to `view`
    /// and returns its device address.
    ///
    /// # Errors
    /// [`Error::WrongDevice`] for a view of another device; driver failures.
    pub(crate) fn read<T: Pod>(&mut self, view: &View<'c, T>) -> Result<u64> {
        self.add(view.order, view.ordinal, false)?;
        Ok(view.address)
    }

    /// Orders this call's work after every other queue's uses of `view`
    /// and returns its device address.
    ///
    /// # Errors
    /// As [`Call::read`].
    pub(crate) fn write<T: Pod>(&mut self, view: &ViewMut<'c, T>) -> Result<u64> {
        self.add(view.order, view.ordinal, true)?;
        Ok(view.address)
    }

    /// Orders this call's work after every other queue's conflicting use
    /// of pinned host memory (any device's queue may copy it).
    ///
    /// # Errors
    /// Driver failures.
    pub(crate) fn host(&mut self, tracker: &'c Tracker, write: bool) -> Result<()> {
        let ordinal = self.ctx.info().ordinal;
        self.add(Order::Pinned(tracker), ordinal, write)
    }

    /// Says that the queue's stream has been waited for after the call's
    /// work: nothing is left running, nothing for other queues to wait for.
    pub(crate) fn finished(&mut self) {
        self.finished = true;
    }
}

impl Drop for Call<'_> {
    fn drop(&mut self) {
        if self.ctx.capturing() {
            // Nothing ran: a graph's launch registers its uses.
            self.ctx.end_recorded_call();
            return;
        }
        if self.count == 0 {
            return;
        }
        let clock = self.ctx.clock();
        // Numbered only now that all of the call's work is enqueued: a
        // recording of the clock that covers this number comes after it.
        let seq = clock.issue();
        for (order, wrote) in self.listed() {
            match order {
                Order::Caller => {}
                Order::Buffer(allocation) => {
                    allocation
                        .tracker()
                        .register(clock, seq, *wrote, self.finished)
                }
                Order::Pinned(tracker) => tracker.register(clock, seq, *wrote, self.finished),
                // Recorded when `held` is dropped, next.
                #[cfg(feature = "cudarc")]
                Order::Cudarc(_) => {}
            }
        }
    }
}
