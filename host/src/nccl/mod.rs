//! Several GPUs through NCCL: a [`Group`] of contexts, one per GPU, and
//! operations on data sharded across them.
//!
//! The guide, [multi_gpu.md][guide], has the examples, the measured
//! scaling over GPUs and the pitfalls.
//!
//! [guide]: https://github.com/warpspeed-rs/warpspeed/blob/main/docs/multi_gpu.md
//!
//! Each GPU does its part with the library's fastest kernel; NCCL, the
//! collective library every framework uses, combines the parts. NCCL is
//! loaded when the first group is made (`libnccl.so.2` from the system's
//! library path, or the file named by `WARPSPEED_NCCL`); without it these
//! functions return [`Error::NcclUnavailable`] and the rest of the library
//! is unaffected. Install it from the CUDA repositories or from PyPI
//! (`nvidia-nccl-cu12` / `nvidia-nccl-cu13`, whose `lib/` folder holds it).
//!
//! Everything is stream-ordered: a group's work goes on its contexts'
//! streams, after what is already there, and functions named `*_into`
//! return a [`Pending`] over all of them.
//!
//! One process driving every GPU of the machine:
//!
//! ```no_run
//! # fn main() -> warpspeed::Result<()> {
//! use warpspeed::{Context, nccl::Group};
//! let contexts = (0..2).map(Context::new).collect::<Result<Vec<_>, _>>()?;
//! let group = Group::new(contexts)?;
//! let shards = group
//!     .contexts()
//!     .iter()
//!     .map(|ctx| ctx.upload(&vec![1.0f32; 1 << 20])) // one shard on each device
//!     .collect::<Result<Vec<_>, _>>()?;
//! assert_eq!(group.sum(&shards)?, 2.0 * (1 << 20) as f32);
//! # Ok(()) }
//! ```
//!
//! One process per GPU (or per machine), each joining with the same
//! [`UniqueId`], which rank 0 makes and sends to the others by any means
//! (a file, a socket, MPI):
//!
//! ```no_run
//! # fn main() -> warpspeed::Result<()> {
//! # let (rank, ranks) = (0u32, 2u32);
//! # fn send_to_others(_: &[u8; 128]) {}
//! # fn receive_from_rank_0() -> [u8; 128] { [0; 128] }
//! use warpspeed::nccl::{Group, UniqueId};
//! let id = if rank == 0 {
//!     let id = UniqueId::new()?;
//!     send_to_others(id.as_bytes());
//!     id
//! } else {
//!     UniqueId::from_bytes(receive_from_rank_0())
//! };
//! let group = Group::join(warpspeed::Context::new(0)?, &id, ranks, rank)?;
//! // group.sum(&[&my_shard]) now sums the shards of every process.
//! # let _ = group; Ok(()) }
//! ```

mod library;

use crate::context::Context;
use crate::error::{Error, Result};
use crate::memory::{Buffer, Call, DeviceRead, DeviceWrite, Pod, View, ViewMut};
use crate::pending::Pending;
use crate::reduce::{Op, ReduceVariant};
use library::{Library, ncclComm_t, ncclResult_t};
use std::ffi::{c_int, c_void};

/// An element type NCCL combines: `u8`, `i32`, `u32`, `i64`, `u64`, `f32`,
/// `f64`.
pub trait NcclType: Pod + sealed::Sealed {}

mod sealed {
    /// NCCL's `ncclDataType_t` of the type.
    pub trait Sealed {
        const DATATYPE: std::ffi::c_int;
    }
}

macro_rules! elements {
    ($($t:ty => $datatype:ident),*) => {$(
        impl sealed::Sealed for $t {
            const DATATYPE: c_int = library::$datatype;
        }
        impl NcclType for $t {}
    )*};
}
elements!(u8 => ncclUint8, i32 => ncclInt32, u32 => ncclUint32, i64 => ncclInt64,
          u64 => ncclUint64, f32 => ncclFloat32, f64 => ncclFloat64);

/// NCCL's reduction operator for `op`.
fn nccl_op(op: Op) -> c_int {
    match op {
        Op::Sum => library::ncclSum,
        Op::Min => library::ncclMin,
        Op::Max => library::ncclMax,
    }
}

/// The NCCL library, loaded once per process.
fn nccl() -> Result<&'static Library> {
    Library::load().map_err(|reason| Error::NcclUnavailable { reason })
}

/// An NCCL result as this crate's error.
fn call(lib: &Library, result: ncclResult_t, during: impl FnOnce() -> String) -> Result<()> {
    if result == library::ncclSuccess {
        return Ok(());
    }
    Err(Error::Nccl {
        code: result,
        description: format!(
            "{} ({})",
            lib.error_string(result),
            library::result_name(result)
        ),
        during: during(),
    })
}

/// NCCL's version, `(major, minor, patch)`.
///
/// # Errors
/// [`Error::NcclUnavailable`] where NCCL cannot be loaded.
pub fn version() -> Result<(u32, u32, u32)> {
    Ok(nccl()?.version())
}

/// What every process of a multi-process group shares: made by one of them
/// ([`UniqueId::new`]), sent to the others as 128 bytes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct UniqueId([u8; 128]);

impl UniqueId {
    /// A new id (`ncclGetUniqueId`): it names the group and the address
    /// where its first rank listens.
    ///
    /// # Errors
    /// [`Error::NcclUnavailable`], or [`Error::Nccl`] if NCCL fails.
    pub fn new() -> Result<UniqueId> {
        let lib = nccl()?;
        let mut id = library::ncclUniqueId {
            internal: [0; library::NCCL_UNIQUE_ID_BYTES],
        };
        // SAFETY: writes one `ncclUniqueId` into a live local of that type.
        let result = unsafe { (lib.ncclGetUniqueId)(&mut id) };
        call(lib, result, || {
            "making a unique id (ncclGetUniqueId)".into()
        })?;
        Ok(UniqueId(id.internal.map(|c| c as u8)))
    }

    /// The id from the bytes another process sent.
    pub fn from_bytes(bytes: [u8; 128]) -> UniqueId {
        UniqueId(bytes)
    }

    /// The bytes to send to the other processes.
    pub fn as_bytes(&self) -> &[u8; 128] {
        &self.0
    }
}

impl std::fmt::Debug for UniqueId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("UniqueId(..)")
    }
}

/// One NCCL communicator, destroyed on drop.
struct Comm {
    raw: ncclComm_t,
    lib: &'static Library,
}

impl Drop for Comm {
    fn drop(&mut self) {
        // SAFETY: a communicator from a successful init, destroyed once;
        // its device is current (the group binds it first) and its work has
        // been waited for. An error here has nowhere to go.
        unsafe {
            (self.lib.ncclCommDestroy)(self.raw);
        }
    }
}

/// The GPUs of this process in one NCCL communicator: a [`Context`] and an
/// NCCL rank for each. Operations take one shard per context, in the order
/// of [`Group::contexts`], each on that context's device.
///
/// A group made by [`Group::new`] holds every rank; one made by
/// [`Group::join`] holds one rank of a group spread over processes, and its
/// operations combine the shards of all of them (each process calls the
/// same operations in the same order, as NCCL requires).
pub struct Group {
    lib: &'static Library,
    /// Dropped in [`Group`]'s `Drop`, each with its device current, before
    /// the contexts.
    comms: Vec<Comm>,
    /// One 8-byte result slot per member, on its device.
    slots: Vec<Buffer<u64>>,
    contexts: Vec<Context>,
    ranks: u32,
}

impl Group {
    /// One NCCL communicator over `contexts`' devices (`ncclCommInitAll`):
    /// every rank in this process, rank `i` on `contexts[i]`. Give each
    /// device once; a context's stream carries the group's work on that
    /// device.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for no context or a device given twice;
    /// [`Error::NcclUnavailable`]; [`Error::Nccl`] if NCCL fails.
    pub fn new(contexts: Vec<Context>) -> Result<Group> {
        if contexts.is_empty() {
            return Err(Error::InvalidArgument("a group needs a context".into()));
        }
        let devices: Vec<c_int> = contexts.iter().map(|c| c.info().ordinal as c_int).collect();
        if let Some(twice) = devices
            .iter()
            .enumerate()
            .find(|&(i, d)| devices[..i].contains(d))
        {
            return Err(Error::InvalidArgument(format!(
                "device {} is in the group twice; NCCL takes one rank per device",
                twice.1
            )));
        }
        let lib = nccl()?;
        for ctx in &contexts {
            ctx.ensure_alive()?;
        }
        let mut raw: Vec<ncclComm_t> = vec![std::ptr::null_mut(); contexts.len()];
        // SAFETY: `raw` has room for one handle per device of `devices`,
        // which lists `raw.len()` distinct valid ordinals.
        let result = unsafe {
            (lib.ncclCommInitAll)(raw.as_mut_ptr(), devices.len() as c_int, devices.as_ptr())
        };
        call(lib, result, || {
            format!("making a communicator over devices {devices:?} (ncclCommInitAll)")
        })?;
        let comms = raw.into_iter().map(|raw| Comm { raw, lib }).collect();
        Group::with(lib, comms, contexts, devices.len() as u32)
    }

    /// This process's rank `rank` of a group of `ranks` spread over
    /// processes (`ncclCommInitRank`), on `ctx`'s device. Every process
    /// calls it with the same `id` and `ranks` and its own `rank`; it
    /// returns once all have joined.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for `rank >= ranks`;
    /// [`Error::NcclUnavailable`]; [`Error::Nccl`] if NCCL fails (a
    /// different `ranks` elsewhere, an unreachable first rank).
    pub fn join(ctx: Context, id: &UniqueId, ranks: u32, rank: u32) -> Result<Group> {
        if rank >= ranks || ranks > c_int::MAX as u32 {
            return Err(Error::InvalidArgument(format!(
                "rank {rank} of a group of {ranks}"
            )));
        }
        let lib = nccl()?;
        // NCCL joins on the current device.
        ctx.ensure_alive()?;
        let id = library::ncclUniqueId {
            internal: id.0.map(|b| b as std::ffi::c_char),
        };
        let mut raw: ncclComm_t = std::ptr::null_mut();
        // SAFETY: writes one handle into a live local; the id is passed by
        // value; `rank < ranks` (checked).
        let result = unsafe { (lib.ncclCommInitRank)(&mut raw, ranks as c_int, id, rank as c_int) };
        call(lib, result, || {
            format!("joining as rank {rank} of {ranks} (ncclCommInitRank)")
        })?;
        Group::with(lib, vec![Comm { raw, lib }], vec![ctx], ranks)
    }

    fn with(
        lib: &'static Library,
        comms: Vec<Comm>,
        contexts: Vec<Context>,
        ranks: u32,
    ) -> Result<Group> {
        let mut slots = Vec::with_capacity(contexts.len());
        let mut group = Group {
            lib,
            comms,
            slots: Vec::new(),
            contexts,
            ranks,
        };
        for ctx in &group.contexts {
            slots.push(ctx.zeros::<u64>(1)?);
        }
        group.slots = slots;
        Ok(group)
    }

    /// The contexts of this process's members, in rank order.
    pub fn contexts(&self) -> &[Context] {
        &self.contexts
    }

    /// Members in this process (the number of shards an operation takes).
    pub fn len(&self) -> usize {
        self.contexts.len()
    }

    /// Always `false`: a group has at least one member.
    pub fn is_empty(&self) -> bool {
        self.contexts.is_empty()
    }

    /// Ranks in the whole group, over every process.
    pub fn ranks(&self) -> u32 {
        self.ranks
    }

    /// Checks one view per member, each on its member's device.
    fn check_shards<T: Pod>(&self, what: &'static str, shards: &[View<'_, T>]) -> Result<()> {
        if shards.len() != self.len() {
            return Err(Error::LengthMismatch {
                what,
                expected: self.len(),
                given: shards.len(),
            });
        }
        for (ctx, shard) in self.contexts.iter().zip(shards) {
            let expected = ctx.info().ordinal;
            if shard.device() != expected {
                return Err(Error::WrongDevice {
                    expected,
                    found: shard.device(),
                });
            }
        }
        Ok(())
    }

    /// Enqueues `call(i)` for every member inside one NCCL group call
    /// (`ncclGroupStart`/`ncclGroupEnd`), as NCCL requires when one thread
    /// drives several ranks.
    fn collective(&self, mut call_one: impl FnMut(usize) -> Result<()>) -> Result<()> {
        let lib = self.lib;
        // SAFETY: no arguments; paired with the `ncclGroupEnd` below on
        // every path.
        call(lib, unsafe { (lib.ncclGroupStart)() }, || {
            "starting a group call".into()
        })?;
        let mut first = Ok(());
        for i in 0..self.len() {
            first = first.and_then(|()| call_one(i));
        }
        // SAFETY: closes the group call opened above.
        let end = call(lib, unsafe { (lib.ncclGroupEnd)() }, || {
            "ending a group call".into()
        });
        first.and(end)
    }

    /// Enqueues one in-place all-reduce of `count` elements at each
    /// member's `addresses[i]`.
    ///
    /// # Safety
    /// Each address must be valid for `count` elements on its member's
    /// device until the streams have run the collective.
    unsafe fn all_reduce_raw<T: NcclType>(
        &self,
        op: Op,
        addresses: &[u64],
        count: usize,
    ) -> Result<()> {
        let lib = self.lib;
        self.collective(|i| {
            let buffer = addresses[i] as *mut c_void;
            // SAFETY: the buffer's validity is the caller's contract; the
            // communicator and the stream belong to member `i`, whose device
            // NCCL makes current itself.
            let result = unsafe {
                (lib.ncclAllReduce)(
                    buffer,
                    buffer,
                    count,
                    T::DATATYPE,
                    nccl_op(op),
                    self.comms[i].raw,
                    self.contexts[i].raw_stream(),
                )
            };
            call(lib, result, || {
                format!("all-reducing {count} elements on rank {i} (ncclAllReduce)")
            })
        })
    }

    /// Enqueues the in-place all-reduce of `count` elements of each
    /// member's view, ordered for their buffers by a call on each member's
    /// queue.
    ///
    /// The caller checked one view per member, each on its member's device
    /// and holding at least `count` elements.
    fn all_reduce_views<T: NcclType>(
        &self,
        op: Op,
        views: &[ViewMut<'_, T>],
        count: usize,
    ) -> Result<()> {
        let mut calls = Vec::with_capacity(self.len());
        let mut addresses = Vec::with_capacity(self.len());
        for (ctx, view) in self.contexts.iter().zip(views) {
            let mut call = Call::new(ctx);
            addresses.push(call.write(view)?);
            calls.push(call);
        }
        // SAFETY: each view is on its member's device and holds `count`
        // elements (the caller's checks); each member's `call` orders the
        // collective after the other queues' uses of its buffer, and the
        // buffer's `Drop` waits for it.
        unsafe { self.all_reduce_raw::<T>(op, &addresses, count) }
    }

    /// Waits for every member's stream, then returns `result`: used on the
    /// error paths of functions that enqueued some work on borrowed buffers.
    fn settle<R>(&self, result: Result<R>) -> Result<R> {
        if result.is_err() {
            for ctx in &self.contexts {
                let _ = ctx.synchronize();
            }
        }
        result
    }

    /// Enqueues, on every member's stream, the in-place all-reduce of the
    /// members' `buffers` with `op`: afterwards every buffer holds the
    /// combination of all of them (over every process of the group).
    ///
    /// `f32` sums are added in an order of NCCL's choosing (a ring or a
    /// tree), so they may differ from a one-GPU sum by rounding; NCCL's
    /// `f32` min/max may not propagate a NaN as [`Op`] documents for one GPU.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] unless there is one buffer per member, all
    /// of one length; [`Error::InvalidArgument`] for a buffer on another
    /// device than its member's; [`Error::Nccl`] if NCCL fails.
    pub fn all_reduce_into<'a, T: NcclType, B: DeviceWrite<Elem = T>>(
        &'a self,
        op: Op,
        buffers: &mut [B],
    ) -> Result<Pending<'a>> {
        let buffers: Vec<ViewMut<'_, T>> = buffers.iter_mut().map(|b| b.view_mut()).collect();
        let views: Vec<View<'_, T>> = buffers.iter().map(|b| b.view()).collect();
        self.check_shards("an all-reduce's buffers (one per member)", &views)?;
        let count = views[0].len();
        if let Some(other) = views.iter().find(|b| b.len() != count) {
            return Err(Error::LengthMismatch {
                what: "an all-reduce's buffers (all of one length)",
                expected: count,
                given: other.len(),
            });
        }
        let enqueued = self.all_reduce_views(op, &buffers, count);
        self.settle(enqueued)?;
        Ok(Pending::on(&self.contexts))
    }

    /// `op` over every element of every shard (of every process), each GPU
    /// reducing its shard with the fastest kernel, NCCL combining the
    /// results; waits for it. Empty shards give `op`'s identity (0 for
    /// sums), as [`Context::reduce`] does.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] unless there is one shard per member;
    /// [`Error::WrongDevice`] for a shard on another device than its
    /// member's; [`Error::Nccl`]; as [`Context::reduce`].
    pub fn reduce<T, S>(&self, op: Op, shards: &[S]) -> Result<T>
    where
        T: crate::reduce::Reducible + NcclType,
        S: DeviceRead<Elem = T>,
    {
        let shards: Vec<View<'_, T>> = shards.iter().map(|s| s.view()).collect();
        self.check_shards("a group reduction's shards (one per member)", &shards)?;
        let slots: Vec<u64> = self.slots.iter().map(|s| s.device_address()).collect();
        let enqueued = (|| {
            for (i, (ctx, shard)) in self.contexts.iter().zip(&shards).enumerate() {
                // SAFETY: the slot is 8 bytes on this member's device, room
                // for one `T` (at most 8 bytes: `NcclType`'s types), owned by
                // the group and used only on this member's stream while the
                // group is borrowed; every stream is waited for before this
                // function returns.
                let mut slot = unsafe { ViewMut::<T>::from_raw_parts(slots[i], 1, shard.device()) };
                ctx.reduce_into(op, ReduceVariant::DEFAULT, shard, &mut slot)?
                    .detach();
            }
            // SAFETY: the slots hold one `T` each on their members' devices,
            // written by the reductions just enqueued on the same streams.
            unsafe { self.all_reduce_raw::<T>(op, &slots, 1) }
        })();
        self.settle(enqueued)?;
        let mut first = Ok(());
        for ctx in &self.contexts[1..] {
            first = first.and(ctx.synchronize());
        }
        // SAFETY: slot 0 holds one `T` (the all-reduced result), on the
        // device of context 0; `read_back` waits for its stream first.
        let value = unsafe { self.contexts[0].read_back::<T>(slots[0]) };
        first.and(value)
    }

    /// The sum of every element of every shard; see [`Group::reduce`].
    ///
    /// # Errors
    /// As [`Group::reduce`].
    pub fn sum<T, S>(&self, shards: &[S]) -> Result<T>
    where
        T: crate::reduce::Reducible + NcclType,
        S: DeviceRead<Elem = T>,
    {
        self.reduce(Op::Sum, shards)
    }

    /// Enqueues the 256-bin histogram of all shards' bytes (of every
    /// process) into every member's `counts`: each GPU counts its shard with
    /// the fastest kernel ([`Context::histogram_into`]), then one NCCL
    /// all-reduce adds the counters. Counters are `u32` and wrap past
    /// 2^32 − 1 samples in one bin, as on one GPU.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] unless there is one shard and one output
    /// per member and every output holds 256 counters;
    /// [`Error::WrongDevice`] for a buffer on another device than its
    /// member's; [`Error::Nccl`].
    pub fn histogram_into<'a, S, O>(&'a self, shards: &[S], counts: &mut [O]) -> Result<Pending<'a>>
    where
        S: DeviceRead<Elem = u8>,
        O: DeviceWrite<Elem = u32>,
    {
        let shards: Vec<View<'_, u8>> = shards.iter().map(|s| s.view()).collect();
        self.check_shards("a group histogram's shards (one per member)", &shards)?;
        let mut outputs: Vec<ViewMut<'_, u32>> = counts.iter_mut().map(|c| c.view_mut()).collect();
        let views: Vec<View<'_, u32>> = outputs.iter().map(|c| c.view()).collect();
        self.check_shards("a group histogram's outputs (one per member)", &views)?;
        if let Some(other) = views.iter().find(|c| c.len() != 256) {
            return Err(Error::LengthMismatch {
                what: "a group histogram's outputs (256 counters each)",
                expected: 256,
                given: other.len(),
            });
        }
        let enqueued = (|| {
            for ((ctx, shard), out) in self.contexts.iter().zip(&shards).zip(&mut outputs) {
                ctx.histogram_into(shard, out)?.detach();
            }
            // The all-reduce writes the outputs again, after the counting on
            // the same streams.
            self.all_reduce_views(Op::Sum, &outputs, 256)
        })();
        self.settle(enqueued)?;
        Ok(Pending::on(&self.contexts))
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        // Work still on the streams may use the communicators and slots.
        for (ctx, (comm, slot)) in self
            .contexts
            .iter()
            .zip(self.comms.drain(..).zip(self.slots.drain(..)))
        {
            // Bound first, also when the context is lost (`synchronize`
            // then fails before binding): the communicator is destroyed
            // with its own device current.
            let _ = ctx.bind();
            let _ = ctx.synchronize();
            drop((comm, slot));
        }
    }
}

impl std::fmt::Debug for Group {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Group")
            .field(
                "devices",
                &self
                    .contexts
                    .iter()
                    .map(|c| c.info().ordinal)
                    .collect::<Vec<_>>(),
            )
            .field("ranks", &self.ranks)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Refused before NCCL is even loaded: no GPU needed.
    #[test]
    fn a_group_needs_a_context() {
        assert!(matches!(
            Group::new(Vec::new()),
            Err(Error::InvalidArgument(_))
        ));
    }

    #[test]
    fn a_unique_id_travels_as_its_bytes() {
        let bytes: [u8; 128] = std::array::from_fn(|i| i as u8);
        assert_eq!(UniqueId::from_bytes(bytes).as_bytes(), &bytes);
        assert_eq!(format!("{:?}", UniqueId::from_bytes(bytes)), "UniqueId(..)");
    }

    #[test]
    fn nccl_operators_for_each_op() {
        assert_eq!(nccl_op(Op::Sum), library::ncclSum);
        assert_eq!(nccl_op(Op::Min), library::ncclMin);
        assert_eq!(nccl_op(Op::Max), library::ncclMax);
    }
}
