//! The memory work on one stream reuses: [`Context::scratch`] and the
//! tallies, and where in the scratch memory each family keeps what it
//! leaves there, in bytes from its start. The tickets are zero between
//! launches (zeroed when the scratch is allocated, reset by the kernel that
//! takes the last one); the partials are whatever the last work left, and
//! each launch writes before it reads them.

use super::Context;
use crate::error::{Error, Result};
use crate::graph::Recording;
use cust::memory::{DeviceBuffer, DeviceCopy};
use std::cell::RefCell;
use warpspeed_gpu::gemm::SPLIT_TICKETS;
use warpspeed_gpu::histogram::LANE_WORK_WORDS;

/// What the single-pass scan state has seen since a launch last zeroed
/// it: how many launches, and the status layout (words a tile) of the
/// last. Only the decision to zero the state again depends on it, and a
/// state replaced by a fresh one (all zeros) is right for any decision,
/// so replacing the state leaves these as they are.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct StateUses {
    pub(crate) launches: u32,
    pub(crate) layout: Option<u32>,
}

/// The single-pass reduction's ticket.
pub const COUNTER_OFFSET: u64 = 0;
/// The result slot of the waiting reductions (`sum`, `min`, `max`).
pub const RESULT_OFFSET: u64 = 16;
/// The lane-private histogram's claim and flag.
pub const HISTOGRAM_OFFSET: usize = 256;
/// A split product's workspace: its tile tickets, then its slices'
/// partial tiles, which share the space of the reduction's partials
/// (work on one stream runs one kernel at a time).
pub const SPLIT_OFFSET: usize = HISTOGRAM_OFFSET + (LANE_WORK_WORDS * 4).next_multiple_of(256);
/// The reductions' per-block partials: after the split product's
/// tickets, which must stay zero.
pub const PARTIALS_OFFSET: usize = SPLIT_OFFSET + SPLIT_TICKETS * 4;

/// Where a product packs its operands (`gemm::Packing`): after its
/// split workspace of `split_words` words, or after the tickets alone
/// where it does not split, 256-byte aligned.
pub const fn packed_offset(split_words: usize) -> usize {
    let words = if split_words > SPLIT_TICKETS {
        split_words
    } else {
        SPLIT_TICKETS
    };
    (SPLIT_OFFSET + words * 4).next_multiple_of(256)
}

// The regions follow each other without overlap, each 256-byte
// aligned (the partials are read as 16-byte vectors).
const _: () = assert!(
    RESULT_OFFSET as usize + 8 <= HISTOGRAM_OFFSET
        && HISTOGRAM_OFFSET + LANE_WORK_WORDS * 4 <= SPLIT_OFFSET
        && SPLIT_OFFSET.is_multiple_of(256)
        && PARTIALS_OFFSET.is_multiple_of(256)
);

impl Context {
    /// Waits for this context's stream, then frees its scratch memory (it
    /// is allocated again when needed).
    ///
    /// # Errors
    /// As [`Context::synchronize`].
    pub fn release_scratch(&self) -> Result<()> {
        self.synchronize()?;
        self.scratch.borrow_mut().take();
        self.tallies.borrow_mut().take();
        self.scan_state.borrow_mut().take();
        Ok(())
    }

    /// Bytes of scratch memory this context holds.
    pub fn scratch_bytes(&self) -> usize {
        self.scratch.borrow().as_ref().map_or(0, |b| b.len())
            + self
                .tallies
                .borrow()
                .as_ref()
                .map_or(0, |b| b.len() * size_of::<u64>())
            + self
                .scan_state
                .borrow()
                .as_ref()
                .map_or(0, |b| b.len() * size_of::<u64>())
    }

    /// A number for the next launch that tells its blocks apart from the
    /// previous launch's by a word of scratch memory (the lane-private
    /// histogram's claim): never 0, the value of scratch memory when it is
    /// allocated, and never the previous call's.
    pub(crate) fn next_epoch(&self) -> u32 {
        if let Some(recording) = self.recording.borrow_mut().as_mut() {
            // Replays repeat the epochs: the recording's end resets the
            // words they claim.
            recording.epochs = true;
        }
        let next = self.epoch.get().checked_add(1).unwrap_or(1);
        self.epoch.set(next);
        next
    }

    /// The device address of at least `bytes` of this context's scratch
    /// memory, 256-byte aligned. Bytes are zero when the memory is first
    /// allocated (or grown) and otherwise hold what earlier work left.
    /// Growing waits for the stream (work enqueued earlier may still use the
    /// old buffer).
    pub(crate) fn scratch(&self, bytes: usize) -> Result<u64> {
        let outgrown = self.grown(&self.scratch, bytes.max(256), "B of scratch memory")?;
        Ok(self.keep_outgrown(outgrown, |r| &mut r.outgrown))
    }

    /// The device address of at least `count` tallies: `u64` counters that
    /// are zero between launches (zeroed when first allocated or grown;
    /// every kernel that uses them leaves them zero). Part of the scratch
    /// memory ([`Context::release_scratch`], [`Context::scratch_bytes`]).
    /// Growing waits for the stream, as [`Context::scratch`].
    pub(crate) fn tallies(&self, count: usize) -> Result<u64> {
        let outgrown = self.grown(&self.tallies, count.max(1), "tallies of scratch memory")?;
        Ok(self.keep_outgrown(outgrown, |r| &mut r.outgrown_tallies))
    }

    /// The device address and length in words of at least `words` words
    /// of single-pass scan state: written only by the single-pass scan
    /// and compaction kernels, zeroed when first allocated or grown. Part
    /// of the scratch memory, grown as [`Context::scratch`].
    pub(crate) fn scan_state(&self, words: usize) -> Result<(u64, usize)> {
        let outgrown = self.grown(&self.scan_state, words, "words of scan state")?;
        let len = self.scan_state.borrow().as_ref().map_or(0, |b| b.len());
        Ok((
            self.keep_outgrown(outgrown, |r| &mut r.outgrown_tallies),
            len,
        ))
    }

    /// The address `grown` gave; the buffer it replaced, if any, kept by
    /// the recording (a recorded call uses it) or freed.
    fn keep_outgrown<T: DeviceCopy>(
        &self,
        (address, outgrown): (u64, Option<DeviceBuffer<T>>),
        list: impl FnOnce(&mut Recording) -> &mut Vec<DeviceBuffer<T>>,
    ) -> u64 {
        if let (Some(old), Some(recording)) = (outgrown, self.recording.borrow_mut().as_mut()) {
            list(recording).push(old);
        }
        address
    }

    /// The scratch memory and tallies, taken from this queue (by a graph
    /// its recording made).
    /// The tallies and the scan state come back together: a graph only
    /// keeps them allocated.
    pub(crate) fn take_scratch(&self) -> (Option<DeviceBuffer<u8>>, Vec<DeviceBuffer<u64>>) {
        let words = [
            self.tallies.borrow_mut().take(),
            self.scan_state.borrow_mut().take(),
        ];
        (
            self.scratch.borrow_mut().take(),
            words.into_iter().flatten().collect(),
        )
    }

    /// The device address of `buffer`, first replaced by a zeroed one of
    /// `len` elements where it holds fewer, after waiting for the stream;
    /// in a recording, without waiting (nothing ran), returning the
    /// buffer replaced.
    fn grown<T: DeviceCopy + cust::memory::bytemuck::Zeroable>(
        &self,
        buffer: &RefCell<Option<DeviceBuffer<T>>>,
        len: usize,
        what: &str,
    ) -> Result<(u64, Option<DeviceBuffer<T>>)> {
        let mut buffer = buffer.borrow_mut();
        let mut outgrown = None;
        if !buffer.as_ref().is_some_and(|b| b.len() >= len) {
            let capturing = self.capturing();
            if !capturing {
                // Freed before the new one is allocated: work enqueued
                // earlier has finished with it.
                self.synchronize()?;
                buffer.take();
            }
            let fresh = DeviceBuffer::<T>::zeroed(len)
                .map_err(|e| Error::cust(e, format!("allocating {len} {what}")))?;
            // In a recording, the old one is kept for the calls recorded
            // before (also when the allocation fails: it is not replaced).
            outgrown = buffer.replace(fresh);
        }
        let address = buffer
            .as_ref()
            .map(|b| b.as_device_ptr().as_raw())
            .unwrap_or_default();
        Ok((address, outgrown))
    }
}
