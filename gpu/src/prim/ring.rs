//! The stage ring of a copy-engine pipeline (sm_90a only): `stages`
//! buffers in shared memory that one producing thread fills through the
//! copy engine and the consuming threads read, in turn. Each stage has two
//! barriers ([`super::bulk`]): *full*, whose phase completes when the
//! stage's bytes have landed, and *empty*, whose phase completes when
//! every consumer is done with the stage. Each party goes round the ring
//! with its own [`StageRing`]: the stage it is at, and the parity of the
//! phase it waits for there, which flips at every turn of the ring.

use super::bulk;

/// A ring of `stages` stages whose barriers lie at `bars` (a shared-window
/// address: the *full* barriers of stages `0..stages`, 8 bytes each, then
/// the *empty* ones), and one party's place in it.
#[derive(Clone, Copy)]
#[doc(hidden)]
pub struct StageRing {
    bars: u32,
    stages: usize,
    stage: usize,
    phase: u32,
}

impl StageRing {
    /// At the first stage of the first turn.
    #[inline(always)]
    #[doc(hidden)]
    pub fn new(bars: u32, stages: usize) -> StageRing {
        StageRing {
            bars,
            stages,
            stage: 0,
            phase: 0,
        }
    }

    /// The stage this party is at.
    #[inline(always)]
    #[doc(hidden)]
    pub fn stage(&self) -> usize {
        self.stage
    }

    /// Stage `s`'s *full* barrier.
    #[inline(always)]
    #[doc(hidden)]
    pub fn full(&self, s: usize) -> u32 {
        self.bars + 8 * s as u32
    }

    /// Stage `s`'s *empty* barrier.
    #[inline(always)]
    #[doc(hidden)]
    pub fn empty(&self, s: usize) -> u32 {
        self.bars + 8 * (self.stages + s) as u32
    }

    /// Initialises every stage's barriers: *full* for the producer's one
    /// arrival (with the bytes it expects), *empty* for `consumers`.
    ///
    /// # Safety
    /// As [`bulk::init_barrier`]'s: `bars` is 8-byte aligned and its
    /// `16 * stages` bytes are used by nothing else; one thread calls it,
    /// and a block barrier follows before any other use.
    #[inline(always)]
    #[doc(hidden)]
    pub unsafe fn init(&self, consumers: u32) {
        for s in 0..self.stages {
            // SAFETY: the caller's contract.
            unsafe {
                bulk::init_barrier(self.full(s), 1);
                bulk::init_barrier(self.empty(s), consumers);
            }
        }
    }

    /// The producer: waits until this stage is free, every consumer having
    /// arrived on its *empty* barrier in the turn before (at once in the
    /// first turn).
    ///
    /// # Safety
    /// The barriers are initialised ([`StageRing::init`]).
    #[inline(always)]
    #[doc(hidden)]
    pub unsafe fn wait_empty(&self) {
        // SAFETY: the caller's contract; the phase waited for is the one
        // in progress or the one just completed.
        unsafe { bulk::wait_parity(self.empty(self.stage), self.phase ^ 1) }
    }

    /// A consumer: waits until this stage's bytes of this turn have
    /// landed, which makes them visible to the thread.
    ///
    /// # Safety
    /// The barriers are initialised ([`StageRing::init`]).
    #[inline(always)]
    #[doc(hidden)]
    pub unsafe fn wait_full(&self) {
        // SAFETY: the caller's contract, as for `wait_empty`.
        unsafe { bulk::wait_parity(self.full(self.stage), self.phase) }
    }

    /// On to the next stage, and past the last to the first of the next
    /// turn.
    #[inline(always)]
    #[doc(hidden)]
    pub fn advance(&mut self) {
        self.stage += 1;
        if self.stage == self.stages {
            self.stage = 0;
            self.phase ^= 1;
        }
    }
}
