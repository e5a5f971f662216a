//! Calls recorded once and replayed: [`Context::capture`] and [`Graph`]
//! (CUDA graphs, made by stream capture).
//!
//! A capture runs the caller's calls on a queue of its own whose stream
//! records instead of running. What keeps a replay sound:
//!
//! * the graph holds the allocation of every [`Buffer`](crate::Buffer) its
//!   calls use (an `Arc`, as the buffer does), so dropping the buffer
//!   after the capture frees nothing while the graph lives;
//! * nothing is ordered inside the capture against other queues (a
//!   captured stream may not wait on work outside it): the graph records
//!   which buffers its calls read and write, and [`Graph::launch`] orders
//!   the replay after the other queues' conflicting uses, then registers
//!   the launching queue's use of each buffer, as any call does;
//! * the scratch memory the calls use is the graph's own (no queue grows or
//!   frees it), and its replays are ordered after each other through it;
//! * calls that wait on the host refuse to run in a capture
//!   ([`Error::InCapture`]), and `__constant__` memory staged by a captured
//!   call joins the device's chain of such launches when the graph is
//!   launched.

use crate::context::Context;
use crate::context::runtime::{Runtime, lock};
use crate::context::scratch::HISTOGRAM_OFFSET;
use crate::driver::{self, CUgraph, CUgraphExec};
use crate::error::{Error, Result, check};
use crate::memory::{Allocation, Order, Tracker};
use crate::pending::Pending;
use cust::memory::DeviceBuffer;
use cust::sys::{CUevent, CUstream};
use std::fmt;
use std::sync::Arc;
use warpspeed_gpu::histogram::LANE_WORK_WORDS;

/// What a queue that records a graph has seen so far.
///
/// Each recorded call runs on a branch of the capture of its own: a new
/// stream that first waits for the capture's start, then for the earlier
/// calls its uses conflict with (the last writer of each buffer it reads;
/// that writer and the readers since, of each buffer it writes), with
/// scratch memory of its own. So calls that share no written buffer run
/// side by side in the graph, and the rest in call order. At the end every
/// branch joins the capture's own stream.
pub(crate) struct Recording {
    /// Every buffer a recorded call uses, once, and whether one wrote it.
    uses: Vec<(Arc<Allocation>, bool)>,
    /// Whether a recorded call stages `__constant__` memory.
    pub(crate) reads_constant: bool,
    /// Scratch memory of the calls recorded so far, and what they outgrew.
    pub(crate) outgrown: Vec<DeviceBuffer<u8>>,
    /// Tallies of the calls recorded so far, and what they outgrew.
    pub(crate) outgrown_tallies: Vec<DeviceBuffer<u64>>,
    /// The capture's stream, and an event recorded on it at the start.
    origin: CUstream,
    start: CUevent,
    /// Per call: its branch's stream, and the event recorded at its end.
    branches: Vec<(CUstream, CUevent)>,
    /// The call being recorded (an index into `branches`).
    current: Option<usize>,
    /// Whether the current call claims scratch words by epoch (the
    /// histogram's lane-private step): zeroed after it, so that every
    /// replay starts from them as allocated.
    pub(crate) epochs: bool,
    /// Which recorded calls wait for which.
    order: Conflicts,
    /// The first failure of a driver call made where no error can be
    /// returned (a call's end): the capture returns it.
    failed: Option<Error>,
}

// SAFETY: the stream and event handles are driver objects usable from any
// thread (the driver API is thread-safe); the rest is `Send`.
unsafe impl Send for Recording {}

/// The uses of memory by the calls recorded so far: per buffer (by its
/// allocation's address) and per token below, the last call that wrote it
/// and the calls that read it since.
#[derive(Default)]
struct Conflicts(Vec<(usize, Option<usize>, Vec<usize>)>);

impl Conflicts {
    /// Notes that `call` reads (or, `write`, writes) `key`, and returns the
    /// earlier calls it must wait for: the last writer, and for a write the
    /// readers since too.
    fn note(&mut self, call: usize, key: usize, write: bool) -> Vec<usize> {
        let i = match self.0.iter().position(|(k, ..)| *k == key) {
            Some(i) => i,
            None => {
                self.0.push((key, None, Vec::new()));
                self.0.len() - 1
            }
        };
        let (_, writer, readers) = &mut self.0[i];
        let mut after: Vec<usize> = writer.iter().copied().collect();
        if write {
            after.extend(readers.iter().copied());
            *writer = Some(call);
            readers.clear();
        } else if !readers.contains(&call) {
            readers.push(call);
        }
        after.retain(|&earlier| earlier != call);
        after
    }
}

/// The order of every call against memory no buffer tracks (views made
/// from raw parts): each call reads it, and a call with such a view writes
/// it, so that call runs after every earlier call and before every later.
const CALLER_TOKEN: usize = 0;
/// The device's `__constant__` symbols: written by every call that stages
/// one.
const CONSTANT_TOKEN: usize = 1;

impl Recording {
    fn new(origin: CUstream, start: CUevent) -> Recording {
        Recording {
            uses: Vec::new(),
            reads_constant: false,
            outgrown: Vec::new(),
            outgrown_tallies: Vec::new(),
            origin,
            start,
            branches: Vec::new(),
            current: None,
            epochs: false,
            order: Conflicts::default(),
            failed: None,
        }
    }

    /// The stream the current call records on (the capture's own between
    /// calls).
    pub(crate) fn stream(&self) -> CUstream {
        self.current.map_or(self.origin, |c| self.branches[c].0)
    }

    /// Starts recording a call on a branch of its own, after the capture's
    /// start and the last call that wrote memory no buffer tracks.
    ///
    /// # Errors
    /// Driver failures.
    pub(crate) fn begin_call(&mut self) -> Result<()> {
        let mut stream: CUstream = std::ptr::null_mut();
        // SAFETY: writes one handle; the device's context is current (the
        // call's `ensure_alive`).
        let status = unsafe { driver::cuStreamCreate(&mut stream, driver::CU_STREAM_NON_BLOCKING) };
        check(status, || "creating a capture's branch".into())?;
        let mut event: CUevent = std::ptr::null_mut();
        // SAFETY: writes one handle.
        let status = unsafe { driver::cuEventCreate(&mut event, driver::CU_EVENT_DISABLE_TIMING) };
        if status != driver::CUDA_SUCCESS {
            // SAFETY: created above, used by nothing.
            unsafe { driver::cuStreamDestroy_v2(stream) };
            return Err(Error::driver(status, "creating a capture's event"));
        }
        self.branches.push((stream, event));
        let call = self.branches.len() - 1;
        self.current = Some(call);
        self.epochs = false;
        // SAFETY: both live; the start event is recorded in the capture,
        // so the branch joins it.
        let status = unsafe { driver::cuStreamWaitEvent(stream, self.start, 0) };
        check(status, || "forking a capture's branch".into())?;
        self.depend(CALLER_TOKEN, false)
    }

    /// Makes the current call wait for the earlier calls its use of `key`
    /// (read, or `write`) conflicts with, and notes the use.
    fn depend(&mut self, key: usize, write: bool) -> Result<()> {
        let Some(call) = self.current else {
            return Ok(());
        };
        for earlier in self.order.note(call, key, write) {
            // SAFETY: both live; the event was recorded in this capture
            // at the end of an earlier call.
            let status = unsafe {
                driver::cuStreamWaitEvent(self.branches[call].0, self.branches[earlier].1, 0)
            };
            check(status, || "ordering a capture's branches".into())?;
        }
        Ok(())
    }

    /// Notes the current call's use of memory ordered by `order`, after the
    /// earlier calls it conflicts with.
    ///
    /// # Errors
    /// [`Error::InCapture`] for memory the graph cannot keep alive (pinned
    /// host memory, a `cudarc` slice); driver failures.
    pub(crate) fn record(&mut self, order: Order<'_>, write: bool) -> Result<()> {
        match order {
            Order::Caller => self.depend(CALLER_TOKEN, true),
            Order::Buffer(allocation) => {
                match self
                    .uses
                    .iter_mut()
                    .find(|(a, _)| Arc::ptr_eq(a, allocation))
                {
                    Some((_, wrote)) => *wrote |= write,
                    None => self.uses.push((allocation.clone(), write)),
                }
                // Tokens are 0 and 1; allocations live at other addresses.
                self.depend(Arc::as_ptr(allocation) as usize, write)
            }
            Order::Pinned(_) => Err(Error::InCapture {
                what: "a copy of pinned memory".into(),
            }),
            #[cfg(feature = "cudarc")]
            Order::Cudarc(_) => Err(Error::InCapture {
                what: "a cudarc slice (a graph keeps the memory it uses alive, and a cudarc \
                       slice is only borrowed: copy it into a warpspeed Buffer, or capture \
                       with cudarc's own graph API)"
                    .into(),
            }),
        }
    }

    /// Notes that the current call stages `__constant__` memory: after
    /// every earlier call that did (the symbols are the device's).
    ///
    /// # Errors
    /// Driver failures.
    pub(crate) fn stage_constant(&mut self) -> Result<()> {
        self.reads_constant = true;
        self.depend(CONSTANT_TOKEN, true)
    }

    /// Ends the current call: records its event on its branch.
    pub(crate) fn end_call(&mut self) {
        let Some(call) = self.current.take() else {
            return;
        };
        let (stream, event) = self.branches[call];
        // SAFETY: both live.
        let status = unsafe { driver::cuEventRecord(event, stream) };
        if status != driver::CUDA_SUCCESS && self.failed.is_none() {
            self.failed = Some(Error::driver(status, "ending a capture's branch"));
        }
    }

    /// Joins every branch into the capture's stream (before the capture
    /// ends).
    fn join(&mut self) -> Result<()> {
        self.end_call();
        if let Some(failed) = self.failed.take() {
            return Err(failed);
        }
        for &(_, event) in &self.branches {
            // SAFETY: both live; the event was recorded in this capture.
            let status = unsafe { driver::cuStreamWaitEvent(self.origin, event, 0) };
            check(status, || "joining a capture's branches".into())?;
        }
        Ok(())
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        // SAFETY: created by the recording, destroyed once, after the
        // capture ended (nothing runs on a branch: its work is the
        // graph's).
        unsafe {
            for &(stream, event) in &self.branches {
                driver::cuEventDestroy_v2(event);
                driver::cuStreamDestroy_v2(stream);
            }
            driver::cuEventDestroy_v2(self.start);
        }
    }
}

/// Calls captured once with [`Context::capture`] and replayed with
/// [`Graph::launch`]: one CUDA graph launch instead of one launch per
/// kernel, for sequences of small calls whose time is launch overhead.
///
/// The graph keeps every [`Buffer`](crate::Buffer) its calls use allocated
/// until it is dropped, and has scratch memory of its own. Each launch is
/// ordered like any call on the launching queue: after the other queues'
/// conflicting uses of those buffers, and before any later use. Replays of
/// one graph run one after the other, on any queues.
///
/// What a replay computes is what the calls computed at capture, on the
/// buffers' contents at replay: the same addresses, sizes and arguments
/// (a random generator's counter, for one, stays at the value it had when
/// captured: every replay draws the same numbers).
///
/// Dropping the graph waits for its replays to finish.
pub struct Graph {
    exec: CUgraphExec,
    /// The buffers the captured calls use, and whether one writes each.
    uses: Vec<(Arc<Allocation>, bool)>,
    reads_constant: bool,
    /// The scratch memory of the captured calls, with every allocation a
    /// growing capture outgrew (earlier calls still use those).
    scratch: Vec<DeviceBuffer<u8>>,
    tallies: Vec<DeviceBuffer<u64>>,
    /// The replays' use of the scratch memory: each launch writes it.
    tracker: Tracker,
    calls: usize,
    // Dropped last: keeps the CUDA context alive.
    runtime: Arc<Runtime>,
}

// SAFETY: the graph handle is a driver object usable from any thread (the
// driver API is thread-safe); launches of one graph are serialised by the
// driver and ordered by the tracker; the rest is `Send`/`Sync` data.
unsafe impl Send for Graph {}
// SAFETY: as for `Send`: `launch` takes `&self` and the driver serialises
// launches of one executable graph.
unsafe impl Sync for Graph {}

impl Context {
    /// Records the calls `record` makes on the queue it is given as a
    /// [`Graph`], to replay with [`Graph::launch`]. Nothing runs during
    /// the capture.
    ///
    /// ```no_run
    /// # fn main() -> warpspeed::Result<()> {
    /// use warpspeed::reduce::{Op, ReduceVariant};
    /// use warpspeed::{Ladder, Matrix, MatrixMut};
    /// let ctx = warpspeed::Context::new(0)?;
    /// let x = ctx.upload(&vec![1.0f32; 4096])?;
    /// let bytes = ctx.upload(&vec![7u8; 65536])?;
    /// let image = ctx.upload(&vec![0.5f32; 256 * 256])?;
    /// let (mut total, mut counts) = (ctx.zeros::<f32>(1)?, ctx.zeros::<u32>(256)?);
    /// let mut flipped = ctx.zeros::<f32>(256 * 256)?;
    /// let graph = ctx.capture(|q| {
    ///     q.reduce_into(Op::Sum, ReduceVariant::DEFAULT, &x, &mut total)?.detach();
    ///     q.histogram_into(&bytes, &mut counts)?.detach();
    ///     let (src, mut dst) = (Matrix::new(&image, 256, 256)?, MatrixMut::new(&mut flipped, 256, 256)?);
    ///     q.transpose_into(&src, &mut dst)?.detach();
    ///     Ok(())
    /// })?;
    /// for _ in 0..100 {
    ///     graph.launch(&ctx)?.detach(); // three kernels, one launch
    /// }
    /// assert_eq!(total.to_vec()?, [4096.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// The queue a capture hands `record` lives only for the capture:
    ///
    /// ```compile_fail
    /// # fn main() -> warpspeed::Result<()> {
    /// let ctx = warpspeed::Context::new(0)?;
    /// let mut kept = None;
    /// let graph = ctx.capture(|q| {
    ///     kept = Some(q); // error: `q` escapes the closure
    ///     Ok(())
    /// })?;
    /// # drop(graph); Ok(()) }
    /// ```
    ///
    /// Inside `record`, the `*_into` calls, fills and device-to-device
    /// copies of every family are recorded; their `Pending` waits for
    /// nothing (nothing runs). Calls that wait on the host (`sum` returning
    /// a value, `synchronize`, copies to or from host memory, `zeros` and
    /// `upload`) return [`Error::InCapture`]; allocate and fill buffers
    /// before the capture. Work on other queues made inside `record` runs
    /// at once, as usual, and is not part of the graph.
    ///
    /// Each call is recorded on a branch of its own, after the earlier
    /// calls its uses conflict with (the last writer of what it reads;
    /// that writer and the readers since, of what it writes): calls that
    /// share no written buffer run side by side in the graph. A call with
    /// a view made from raw parts runs after every earlier call and before
    /// every later one.
    ///
    /// A buffer used in the capture stays allocated while the graph lives:
    /// dropping it frees it only when the graph is dropped too. Borrows
    /// still hold during the capture only, so later writes to a buffer
    /// through the library are ordered against the replays, like any two
    /// calls.
    ///
    /// # Errors
    /// The first error of `record`, which ends the capture (nothing is
    /// left capturing); [`Error::InCapture`] when called inside a capture;
    /// driver failures (a capture that contains nothing is a graph that
    /// does nothing).
    pub fn capture<F>(&self, record: F) -> Result<Graph>
    where
        F: FnOnce(&Context) -> Result<()>,
    {
        self.ensure_alive()?;
        self.refuse_in_capture("a capture inside a capture")?;
        let queue = self.capture_queue()?;
        let stream = queue.raw_stream();
        let mut start: CUevent = std::ptr::null_mut();
        // SAFETY: writes one handle; the context is current.
        let status = unsafe { driver::cuEventCreate(&mut start, driver::CU_EVENT_DISABLE_TIMING) };
        check(status, || "creating a capture's event".into())?;
        let recording = Recording::new(stream, start);
        // SAFETY: the queue's live stream, which nothing else uses.
        let status = unsafe {
            driver::cuStreamBeginCapture_v2(stream, driver::CU_STREAM_CAPTURE_MODE_RELAXED)
        };
        check(status, || "beginning a stream capture".into())?;
        let ending = EndCapture {
            stream,
            ended: false,
        };
        // SAFETY: both live; recorded in the capture, the branches' fork.
        let status = unsafe { driver::cuEventRecord(start, stream) };
        check(status, || "starting a stream capture".into())?;
        *queue.recording.borrow_mut() = Some(recording);
        let recorded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| record(&queue)));
        // Every branch joins, also after a failure: the capture ends whole.
        let joined = queue
            .recording
            .borrow_mut()
            .as_mut()
            .map_or(Ok(()), Recording::join);
        let graph = ending.end();
        // The branches are destroyed with the recording, after the end.
        let mut recording = queue.recording.borrow_mut().take();
        let recorded = match recorded {
            Ok(recorded) => recorded,
            Err(panic) => {
                drop((graph, recording));
                std::panic::resume_unwind(panic)
            }
        };
        recorded?;
        joined?;
        let graph = graph?;
        let exec = graph.instantiate()?;
        let (scratch, tallies) = queue.take_scratch();
        let recording = recording.as_mut().ok_or_else(|| Error::InCapture {
            what: "a capture whose queue stopped recording".into(),
        })?;
        Ok(Graph {
            exec,
            uses: std::mem::take(&mut recording.uses),
            reads_constant: recording.reads_constant,
            scratch: std::mem::take(&mut recording.outgrown)
                .into_iter()
                .chain(scratch)
                .collect(),
            tallies: std::mem::take(&mut recording.outgrown_tallies)
                .into_iter()
                .chain(tallies)
                .collect(),
            tracker: Tracker::new(self.info().ordinal, self.runtime().cuda.as_raw()),
            calls: recording.branches.len(),
            runtime: self.runtime().clone(),
        })
    }

    /// In a recording, starts a call: a branch of the capture, and scratch
    /// memory of its own (the recording keeps the earlier calls').
    pub(crate) fn begin_recorded_call(&self) -> Result<()> {
        let mut recording = self.recording.borrow_mut();
        let Some(recording) = recording.as_mut() else {
            return Ok(());
        };
        let (scratch, tallies) = self.take_scratch();
        recording.outgrown.extend(scratch);
        recording.outgrown_tallies.extend(tallies);
        recording.begin_call()
    }

    /// In a recording, ends a call: zeroes the scratch words it claimed by
    /// epoch (replays repeat the epochs: each must find them as
    /// allocated), then marks the end of its branch.
    pub(crate) fn end_recorded_call(&self) {
        let epochs = self.recording.borrow().as_ref().is_some_and(|r| r.epochs);
        let zeroed = if epochs {
            self.scratch(HISTOGRAM_OFFSET + LANE_WORK_WORDS * 4)
                .and_then(|base| {
                    // SAFETY: `LANE_WORK_WORDS` words of this call's scratch
                    // memory, which the graph keeps; on the call's branch,
                    // after its kernel.
                    unsafe { self.zero_words(base + HISTOGRAM_OFFSET as u64, LANE_WORK_WORDS) }
                })
        } else {
            Ok(())
        };
        if let Some(recording) = self.recording.borrow_mut().as_mut() {
            if let Err(e) = zeroed {
                recording.failed.get_or_insert(e);
            }
            recording.end_call();
        }
    }

    /// `Err(InCapture)` naming `what` while this queue records a graph.
    pub(crate) fn refuse_in_capture(&self, what: &str) -> Result<()> {
        if self.capturing() {
            return Err(Error::InCapture { what: what.into() });
        }
        Ok(())
    }
}

/// Ends a stream capture once, also when the recording panics.
struct EndCapture {
    stream: cust::sys::CUstream,
    ended: bool,
}

/// A captured graph, destroyed when dropped.
struct Captured(CUgraph);

impl EndCapture {
    fn end(mut self) -> Result<Captured> {
        self.ended = true;
        self.end_once()
    }

    fn end_once(&self) -> Result<Captured> {
        let mut graph: CUgraph = std::ptr::null_mut();
        // SAFETY: the capturing stream; writes one handle.
        let status = unsafe { driver::cuStreamEndCapture(self.stream, &mut graph) };
        let captured = Captured(graph);
        check(status, || "ending a stream capture".into())?;
        Ok(captured)
    }
}

impl Drop for EndCapture {
    fn drop(&mut self) {
        if !self.ended {
            let _ = self.end_once();
        }
    }
}

impl Captured {
    fn instantiate(&self) -> Result<CUgraphExec> {
        let mut exec: CUgraphExec = std::ptr::null_mut();
        // SAFETY: a graph the capture made; writes one handle.
        let status = unsafe { driver::cuGraphInstantiateWithFlags(&mut exec, self.0, 0) };
        check(status, || "instantiating a captured graph".into())?;
        Ok(exec)
    }
}

impl Drop for Captured {
    fn drop(&mut self) {
        if !self.0.is_null() {
            // SAFETY: made by the capture, destroyed once; an executable
            // graph instantiated from it does not need it.
            unsafe {
                driver::cuGraphDestroy(self.0);
            }
        }
    }
}

impl Graph {
    /// Replays the graph on `ctx`'s queue: after every other queue's
    /// conflicting use of the graph's buffers, and before any later use,
    /// as any call on `ctx`. Returns at once.
    ///
    /// # Errors
    /// [`Error::WrongDevice`] for a queue of another device;
    /// [`Error::InCapture`] on a queue that records a graph;
    /// [`Error::ContextLost`] after a kernel fault; driver failures.
    pub fn launch<'a>(&self, ctx: &'a Context) -> Result<Pending<'a>> {
        ctx.ensure_alive()?;
        ctx.refuse_in_capture("launching a graph")?;
        if !Arc::ptr_eq(ctx.runtime(), &self.runtime) {
            return Err(Error::WrongDevice {
                expected: ctx.info().ordinal,
                found: self.tracker.ordinal,
            });
        }
        let (stream, clock) = (ctx.raw_stream(), ctx.clock());
        let uses = self.uses.iter().map(|(a, w)| (a.tracker(), *w));
        let all: Vec<(&Tracker, bool)> = uses.chain([(&self.tracker, true)]).collect();
        // Registered once ordering began, whatever follows: work enqueued
        // before a failure is ordered like any other.
        let launched = (|| {
            for (tracker, write) in &all {
                let status = tracker.order_after(clock, stream, *write);
                ctx.track(check(status, || {
                    "ordering a graph's launch after the other queues that use its buffers".into()
                }))?;
            }
            self.enqueue(ctx)
        })();
        let seq = clock.issue();
        for (tracker, write) in &all {
            tracker.register(clock, seq, *write, false);
        }
        launched?;
        Ok(Pending::new(ctx))
    }

    /// `cuGraphLaunch` on `ctx`'s stream, in the device's chain of
    /// `__constant__` readers where a captured call stages one.
    fn enqueue(&self, ctx: &Context) -> Result<()> {
        let stream = ctx.raw_stream();
        let launch = || {
            // SAFETY: a live executable graph and stream; the graph's
            // buffers and scratch are alive (held by `self`) and ordered
            // (above).
            let status = unsafe { driver::cuGraphLaunch(self.exec, stream) };
            ctx.track(check(status, || "launching a graph".into()))
        };
        if !self.reads_constant {
            return launch();
        }
        let mut readers = lock(&self.runtime.constant_readers);
        ctx.wait_for_constant_readers(&readers)?;
        launch()?;
        ctx.record_constant_reader(&mut readers)
    }

    /// Calls captured that use buffers (fills, copies and kernels).
    pub fn calls(&self) -> usize {
        self.calls
    }

    /// Bytes of scratch memory the graph holds.
    pub fn scratch_bytes(&self) -> usize {
        self.scratch.iter().map(|b| b.len()).sum::<usize>()
            + self.tallies.iter().map(|b| b.len() * 8).sum::<usize>()
    }
}

impl fmt::Debug for Graph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Graph")
            .field("device", &self.tracker.ordinal)
            .field("calls", &self.calls)
            .field("buffers", &self.uses.len())
            .finish()
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        let Ok(_current) = crate::memory::Current::push(self.runtime.cuda.as_raw()) else {
            return;
        };
        if self.tracker.wait_host(true).is_err() {
            // A replay may still run: leak its scratch and executable graph
            // (the buffers are kept by the `Arc`s, leaked with them).
            std::mem::forget(std::mem::take(&mut self.scratch));
            std::mem::forget(std::mem::take(&mut self.tallies));
            std::mem::forget(std::mem::take(&mut self.uses));
            return;
        }
        // SAFETY: instantiated by `capture`, destroyed once; no replay is
        // running (waited for above).
        unsafe {
            driver::cuGraphExecDestroy(self.exec);
        }
        // Freed here, while the device's context is current.
        self.scratch.clear();
        self.tallies.clear();
        self.uses.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::{CALLER_TOKEN, Conflicts};

    /// The calls a recorded call waits for, as `begin_call` and `record`
    /// note them: the caller token read first, then each use.
    fn call(c: &mut Conflicts, call: usize, uses: &[(usize, bool)]) -> Vec<usize> {
        let mut after = c.note(call, CALLER_TOKEN, false);
        for &(key, write) in uses {
            after.extend(c.note(call, key, write));
        }
        after.sort_unstable();
        after.dedup();
        after
    }

    #[test]
    fn calls_wait_for_the_uses_they_conflict_with() {
        let (a, b, out) = (10, 20, 30);
        let mut c = Conflicts::default();
        assert_eq!(call(&mut c, 0, &[(a, true)]), [] as [usize; 0]);
        // Reads of what 0 wrote wait for 0; a read of b, for no one.
        assert_eq!(call(&mut c, 1, &[(a, false), (out, true)]), [0]);
        assert_eq!(call(&mut c, 2, &[(b, false)]), [] as [usize; 0]);
        // A second reader of a waits for the writer only.
        assert_eq!(call(&mut c, 3, &[(a, false)]), [0]);
        // A writer of a waits for the writer and every reader since.
        assert_eq!(call(&mut c, 4, &[(a, true)]), [0, 1, 3]);
        // Then readers wait for the new writer alone.
        assert_eq!(call(&mut c, 5, &[(a, false), (b, false)]), [4]);
        // A call that reads and writes one buffer waits once for each.
        assert_eq!(call(&mut c, 6, &[(out, false), (out, true)]), [1]);
    }

    #[test]
    fn a_view_of_raw_parts_orders_against_every_call() {
        let mut c = Conflicts::default();
        for i in 0..3 {
            assert_eq!(call(&mut c, i, &[(100 + i, true)]), [] as [usize; 0]);
        }
        // A raw view writes the caller token: after every call so far...
        assert_eq!(call(&mut c, 3, &[(CALLER_TOKEN, true)]), [0, 1, 2]);
        // ...and every later call reads it: after that one.
        assert_eq!(call(&mut c, 4, &[(200, true)]), [3]);
        assert_eq!(call(&mut c, 5, &[(201, false)]), [3]);
    }
}
