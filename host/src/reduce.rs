//! Reductions: sum, min and max of a device slice, and the ladder of the
//! lessons' variants ([`ReduceVariant`]).
//!
//! The guide, [reduce.md][guide], has the ladder (what each step changes and
//! why it is faster), the measured tables and the pitfalls.
//!
//! [guide]: https://github.com/warpspeed-rs/warpspeed/blob/main/docs/reduce.md
//!
//! ```no_run
//! # fn main() -> warpspeed::Result<()> {
//! let ctx = warpspeed::Context::new(0)?;
//! let x = ctx.upload(&[1.0f32, 2.0, 3.0])?;
//! assert_eq!(ctx.sum(&x)?, 6.0);
//! assert_eq!(ctx.max(&x)?, Some(3.0));
//! # Ok(()) }
//! ```
//!
//! Results: integer sums wrap; `f32` sums follow IEEE 754 in an order that
//! depends on the variant and, for the grid-stride ones, on the device's SM
//! count (run to run on one device the result is the same); `f32` min/max
//! return NaN if any element is NaN. An empty slice gives the operator's
//! identity (0 for sums) or `None` from [`Context::min`]/[`Context::max`].

use crate::context::Context;
use crate::error::{Error, Result};
use crate::launch::{LaunchConfig, blocks_for};
use crate::memory::{Call, DeviceRead, DeviceWrite, Pod};
use crate::overlap::{Span, refuse_overlap};
use crate::pending::Pending;
use std::fmt::Debug;
pub use warpspeed_gpu::Op;
pub use warpspeed_gpu::reduce::ReduceVariant;
use warpspeed_gpu::reduce::{
    self as consts, BLOCK, PassArgs, SinglePassArgs, VECTOR_SMALL_BLOCK, VECTOR_SMALL_MAX,
    VECTOR_UNROLL, VECTOR_WIDTH, reduce_cascading, reduce_complete_unroll, reduce_first_add,
    reduce_fold, reduce_interleaved_divergent, reduce_interleaved_strided, reduce_sequential,
    reduce_unroll_last_warp, reduce_vectorized_max, reduce_vectorized_min, reduce_vectorized_sum,
    reduce_warp_shuffle,
};
use warpspeed_gpu::{DevPtr, DevPtrMut, Entry};

/// An element type the reduction kernels are compiled for: `f32`, `i32`,
/// `u32`. Sealed: the PTX holds exactly these instantiations.
pub trait Reducible: warpspeed_gpu::Scalar + Pod + Debug + sealed::Sealed {}

impl Reducible for f32 {}
impl Reducible for i32 {}
impl Reducible for u32 {}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for i32 {}
    impl Sealed for u32 {}
}

use crate::context::scratch::{COUNTER_OFFSET, PARTIALS_OFFSET, RESULT_OFFSET};

/// Where a pass reads or writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    Input,
    /// Scratch memory, at this element offset.
    Scratch(usize),
    Output,
}

/// One launch of a multi-pass reduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Pass {
    src: Place,
    dst: Place,
    /// Elements the pass reads.
    len: usize,
    grid: u32,
}

/// The launches that reduce `n` elements with one variant.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Plan {
    block: u32,
    passes: Vec<Pass>,
    /// Scratch elements the passes use.
    scratch: usize,
}

/// Device facts a plan depends on.
#[derive(Clone, Copy, Debug)]
struct Limits {
    max_grid_x: u32,
    /// Grid of the grid-stride steps (7, 8): SMs × [`consts::GRID_BLOCKS_PER_SM`].
    stride_grid: u32,
    /// Largest grid of the single-pass step (10): blocks resident at once.
    single_pass_grid: u32,
}

/// The block size a variant uses for `n` elements: its first, except that
/// `CompleteUnroll` takes the smallest of its sizes that covers a small input
/// in one block, and `BLOCK` otherwise, and `Vectorized` takes
/// `VECTOR_SMALL_BLOCK` threads for at most `VECTOR_SMALL_MAX`
/// elements.
pub fn default_block(variant: ReduceVariant, n: usize) -> u32 {
    let blocks = variant.shape().blocks;
    match variant {
        ReduceVariant::Vectorized if n <= VECTOR_SMALL_MAX => VECTOR_SMALL_BLOCK,
        ReduceVariant::CompleteUnroll => blocks
            .iter()
            .copied()
            .find(|&b| 2 * b as usize >= n)
            .unwrap_or(BLOCK)
            .min(BLOCK),
        _ => blocks[0],
    }
}

fn plan(variant: ReduceVariant, block: u32, n: usize, limits: Limits) -> Result<Plan> {
    let too_large = |grid: usize| {
        Error::InvalidArgument(format!(
            "{n} elements need a grid of {grid} blocks for the {} reduction, over the device's \
             {} blocks",
            variant.name(),
            limits.max_grid_x
        ))
    };
    let grid_for = |len: usize, per_block: usize| -> Result<u32> {
        let grid = blocks_for(len, per_block).filter(|&g| g <= limits.max_grid_x);
        grid.map(|g| g.max(1))
            .ok_or_else(|| too_large(len.div_ceil(per_block)))
    };
    // Grid-stride kernels take any grid: clamp instead of refusing.
    let clamped = |len: usize, per_block: usize, limit: u32| {
        blocks_for(len, per_block)
            .unwrap_or(u32::MAX)
            .min(limit)
            .max(1)
    };
    let single = |grid| Plan {
        block,
        passes: vec![Pass {
            src: Place::Input,
            dst: Place::Output,
            len: n,
            grid,
        }],
        scratch: 0,
    };
    let per_block = variant.elements_per_block(block) as usize;
    Ok(match variant {
        ReduceVariant::Vectorized => {
            let per_block = block as usize * VECTOR_UNROLL * VECTOR_WIDTH;
            single(clamped(
                n,
                per_block,
                limits.single_pass_grid.min(limits.max_grid_x),
            ))
        }
        ReduceVariant::Cascading | ReduceVariant::WarpShuffle => {
            let grid = clamped(n, per_block, limits.stride_grid.min(limits.max_grid_x));
            if grid == 1 {
                single(1)
            } else {
                let passes = vec![
                    Pass {
                        src: Place::Input,
                        dst: Place::Scratch(0),
                        len: n,
                        grid,
                    },
                    Pass {
                        src: Place::Scratch(0),
                        dst: Place::Output,
                        len: grid as usize,
                        grid: 1,
                    },
                ];
                Plan {
                    block,
                    passes,
                    scratch: grid as usize,
                }
            }
        }
        ReduceVariant::Folding => {
            let mut passes = Vec::new();
            let (mut src, mut len) = (Place::Input, n);
            while len > 2 {
                let half = len.div_ceil(2);
                passes.push(Pass {
                    src,
                    dst: Place::Scratch(0),
                    len,
                    grid: grid_for(half, per_block)?,
                });
                (src, len) = (Place::Scratch(0), half);
            }
            passes.push(Pass {
                src,
                dst: Place::Output,
                len,
                grid: 1,
            });
            Plan {
                block,
                passes,
                scratch: n.div_ceil(2) * (n > 2) as usize,
            }
        }
        // Steps 1-6: one partial per block, launched again on the partials
        // until one block remains. Two scratch regions alternate.
        _ => {
            let mut passes = Vec::new();
            let (mut src, mut len) = (Place::Input, n);
            let first = grid_for(n, per_block)? as usize;
            let mut offsets = [0, first];
            loop {
                let grid = grid_for(len, per_block)?;
                let dst = if grid == 1 {
                    Place::Output
                } else {
                    Place::Scratch(offsets[0])
                };
                passes.push(Pass {
                    src,
                    dst,
                    len,
                    grid,
                });
                if grid == 1 {
                    break;
                }
                (src, len) = (dst, grid as usize);
                offsets.swap(0, 1);
            }
            let second = if first > 1 {
                first.div_ceil(per_block)
            } else {
                0
            };
            Plan {
                block,
                passes,
                scratch: if first > 1 { first + second } else { 0 },
            }
        }
    })
}

impl Context {
    /// Sum of `x` with the fastest variant; waits for it. Integers wrap.
    ///
    /// # Errors
    /// [`Error::Misaligned`] for a slice not aligned to its elements (only
    /// possible through unsafe code); launch and driver failures.
    pub fn sum<T: Reducible>(&self, x: &impl DeviceRead<Elem = T>) -> Result<T> {
        self.reduce(Op::Sum, ReduceVariant::DEFAULT, x)
    }

    /// Smallest element of `x`, `None` if it is empty; waits for it. `f32`:
    /// NaN if any element is NaN.
    ///
    /// # Errors
    /// As [`Context::sum`].
    pub fn min<T: Reducible>(&self, x: &impl DeviceRead<Elem = T>) -> Result<Option<T>> {
        // One view, for the reduction and for the emptiness it reports.
        let x = x.view();
        let v = self.reduce(Op::Min, ReduceVariant::DEFAULT, &x)?;
        Ok((!x.is_empty()).then_some(v))
    }

    /// Largest element of `x`, `None` if it is empty; waits for it. `f32`:
    /// NaN if any element is NaN.
    ///
    /// # Errors
    /// As [`Context::sum`].
    pub fn max<T: Reducible>(&self, x: &impl DeviceRead<Elem = T>) -> Result<Option<T>> {
        let x = x.view();
        let v = self.reduce(Op::Max, ReduceVariant::DEFAULT, &x)?;
        Ok((!x.is_empty()).then_some(v))
    }

    /// Reduces `x` with `op` using one step of the ladder and waits for the
    /// result. An empty `x` gives `op`'s identity (one small launch writes it).
    ///
    /// # Errors
    /// [`Error::Unsupported`] for an operator the step does not compute
    /// (steps 1-9 compute sums only); as [`Context::sum`].
    pub fn reduce<T: Reducible>(
        &self,
        op: Op,
        variant: ReduceVariant,
        x: &impl DeviceRead<Elem = T>,
    ) -> Result<T> {
        self.ensure_alive()?;
        self.refuse_in_capture(
            "a reduction returning its value to the host (reduce_into writes it to a buffer)",
        )?;
        let x = x.view();
        let block = default_block(variant, x.len());
        let mut call = Call::new(self);
        let input = call.read(&x)?;
        // SAFETY: `input` is `x`'s `x.len()` elements, ordered after their
        // writers by `call`; `None` sends the result to this context's
        // result slot (16 bytes of its scratch, enough for one element),
        // whose address the call returns once the scratch has its final
        // size; it is read back after the stream has run the reduction.
        let value = unsafe {
            let result = self.enqueue_reduce::<T>(op, variant, block, input, x.len(), None)?;
            self.read_back(result)?
        };
        call.finished();
        Ok(value)
    }

    /// Enqueues the reduction of `x` with `op` and `variant`; the result
    /// lands in `out[0]`. Returns at once; the [`Pending`] keeps `x` and
    /// `out` borrowed until the GPU is done.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] for an empty `out`; [`Error::InvalidArgument`]
    /// if `out[0]` lies inside `x`; as [`Context::reduce`].
    pub fn reduce_into<'a, T: Reducible>(
        &'a self,
        op: Op,
        variant: ReduceVariant,
        x: &impl DeviceRead<Elem = T>,
        out: &mut impl DeviceWrite<Elem = T>,
    ) -> Result<Pending<'a>> {
        let x = x.view();
        let block = default_block(variant, x.len());
        self.reduce_into_with_block(op, variant, block, &x, out)
    }

    /// [`Context::reduce_into`] with an explicit block size: any of
    /// `consts::UNROLL_BLOCKS` for `CompleteUnroll`, `BLOCK` for the others.
    ///
    /// # Errors
    /// [`Error::Unsupported`] for a block size the step is not compiled
    /// for; as [`Context::reduce_into`].
    pub fn reduce_into_with_block<'a, T: Reducible>(
        &'a self,
        op: Op,
        variant: ReduceVariant,
        block: u32,
        x: &impl DeviceRead<Elem = T>,
        out: &mut impl DeviceWrite<Elem = T>,
    ) -> Result<Pending<'a>> {
        self.ensure_alive()?;
        let (x, out) = (x.view(), out.view_mut());
        if out.is_empty() {
            return Err(Error::LengthMismatch {
                what: "a reduction's output",
                expected: 1,
                given: 0,
            });
        }
        refuse_overlap(
            "reduction",
            ("output", Span::new(out.device_address(), size_of::<T>())),
            (
                "input",
                Span::new(x.device_address(), x.len() * size_of::<T>()),
            ),
        )?;
        let mut call = Call::new(self);
        let input = call.read(&x)?;
        let output = call.write(&out)?;
        // SAFETY: `out` holds at least one element (checked above) and does
        // not overlap `x` (checked above: views made from raw parts could);
        // both are ordered after their other uses by `call`, and the
        // buffers they borrow wait for this stream before they are freed.
        unsafe { self.enqueue_reduce::<T>(op, variant, block, input, x.len(), Some(output))? };
        Ok(Pending::new(self))
    }

    /// Enqueues the reduction into `out`, or into this context's result slot
    /// for `None`; returns the address written.
    ///
    /// # Safety
    /// `input` must be valid for reading `n` elements and `out` a device
    /// address valid for one `T` write that does not overlap them, both
    /// alive and ordered after their other uses until the stream has run
    /// the reduction.
    unsafe fn enqueue_reduce<T: Reducible>(
        &self,
        op: Op,
        variant: ReduceVariant,
        block: u32,
        input: u64,
        n: usize,
        out: Option<u64>,
    ) -> Result<u64> {
        self.ensure_alive()?;
        // One check per kind of mistake: the block size, then the operator.
        let blocks = variant.shape().blocks;
        if !blocks.contains(&block) {
            return Err(Error::Unsupported {
                variant: variant.name(),
                reason: format!("runs with {blocks:?} threads per block, not {block}"),
            });
        }
        if !variant.supports(op) {
            return Err(Error::Unsupported {
                variant: variant.name(),
                reason: format!("computes sums only; use Vectorized for {}", op.name()),
            });
        }
        if !input.is_multiple_of(size_of::<T>() as u64) {
            return Err(Error::Misaligned {
                what: "a reduction's input",
                alignment: size_of::<T>(),
            });
        }
        let shared = variant.shared_bytes(block);
        let info = self.info();
        let kernel = PassKernel::<T>::new(variant, op, block)?;
        // The single pass never runs more blocks than can be resident at
        // once; its partials are sized for a generous upper bound of that.
        let partials_capacity = info.multiprocessors as usize
            * (info.max_threads_per_multiprocessor / warpspeed_gpu::WARP_SIZE).max(1) as usize;
        let limits = Limits {
            max_grid_x: info.max_grid.0,
            stride_grid: info.multiprocessors * consts::GRID_BLOCKS_PER_SM,
            single_pass_grid: if let PassKernel::Single(entry) = kernel {
                let resident = self.blocks_per_sm(entry, block, shared)? * info.multiprocessors;
                resident.min(partials_capacity as u32)
            } else {
                1
            },
        };
        let plan = plan(variant, block, n, limits)?;
        let partial_elements = if variant == ReduceVariant::Vectorized {
            partials_capacity
        } else {
            plan.scratch
        };
        // The one scratch request of the call: growing it frees the old
        // buffer, so every scratch address is taken from this base.
        let base = self.scratch(PARTIALS_OFFSET + partial_elements * size_of::<T>())?;
        let partials = base + PARTIALS_OFFSET as u64;
        let out = out.unwrap_or(base + RESULT_OFFSET);
        let address = |b: Place| match b {
            Place::Input => input,
            Place::Scratch(offset) => partials + (offset * size_of::<T>()) as u64,
            Place::Output => out,
        };
        for pass in &plan.passes {
            let cfg = LaunchConfig::linear(pass.grid, plan.block, shared);
            let (src, dst, len) = (address(pass.src), address(pass.dst), pass.len);
            // What each launch below relies on: `src` is `x`, valid for `len`
            // reads and aligned (checked), or scratch an earlier pass filled
            // with `len` partials; `dst` is scratch sized by the plan for what
            // the pass writes, or `out`, valid for one write when the pass is
            // the last (caller); the caller keeps `x` and `out` alive until
            // the stream has run the passes, and scratch is only freed after
            // waiting.
            match kernel {
                PassKernel::Single(entry) => {
                    let args = SinglePassArgs {
                        x: DevPtr::new(src),
                        n: len,
                        partials: DevPtrMut::new(partials),
                        counter: DevPtrMut::new(base + COUNTER_OFFSET),
                        out: DevPtrMut::new(dst),
                    };
                    // SAFETY: `src` and `dst` as above; `partials` holds
                    // `partials_capacity >= grid` elements; the counter is
                    // zero between launches (zeroed with the scratch, reset
                    // by each launch) and this context's stream is its only
                    // user.
                    unsafe { self.launch(entry, cfg, &args)? };
                }
                PassKernel::Fold(entry) => {
                    let args = reduce_fold::Args {
                        src: DevPtr::new(src),
                        dst: DevPtrMut::new(dst),
                        n: len,
                    };
                    // SAFETY: `src` and `dst` as above; folding reads and
                    // writes the same scratch, which its body allows.
                    unsafe { self.launch(entry, cfg, &args)? };
                }
                PassKernel::Blocks(entry) => {
                    let args = PassArgs {
                        x: DevPtr::new(src),
                        partials: DevPtrMut::new(dst),
                        n: len,
                    };
                    // SAFETY: `src` and `dst` as above, and the entry is the
                    // pass of this variant and block size.
                    unsafe { self.launch(entry, cfg, &args)? };
                }
            }
        }
        Ok(out)
    }
}

/// The kernel every pass of one reduction runs, typed by its arguments
/// and chosen before any launch.
#[derive(Clone, Copy)]
enum PassKernel<T: Reducible> {
    /// Steps 1-8: a pass that writes one partial per block.
    Blocks(Entry<PassArgs<T>>),
    /// Step 9: the pass that folds its input in place.
    Fold(Entry<reduce_fold::Args<T>>),
    /// Step 10: the single pass of the operator.
    Single(Entry<SinglePassArgs<T>>),
}

impl<T: Reducible> PassKernel<T> {
    /// The kernel of `variant` for `op` and `block` threads per block.
    fn new(variant: ReduceVariant, op: Op, block: u32) -> Result<Self> {
        let blocks = |entry| Ok(PassKernel::Blocks(entry));
        match variant {
            ReduceVariant::InterleavedDivergent => {
                blocks(reduce_interleaved_divergent::entry::<T>())
            }
            ReduceVariant::InterleavedStrided => blocks(reduce_interleaved_strided::entry::<T>()),
            ReduceVariant::Sequential => blocks(reduce_sequential::entry::<T>()),
            ReduceVariant::FirstAddDuringLoad => blocks(reduce_first_add::entry::<T>()),
            ReduceVariant::UnrollLastWarp => blocks(reduce_unroll_last_warp::entry::<T>()),
            ReduceVariant::CompleteUnroll => match reduce_complete_unroll::entry::<T>(block) {
                Some(entry) => blocks(entry),
                None => Err(Error::Unsupported {
                    variant: variant.name(),
                    reason: format!("has no entry for blocks of {block} threads"),
                }),
            },
            ReduceVariant::Cascading => blocks(reduce_cascading::entry::<T>()),
            ReduceVariant::WarpShuffle => blocks(reduce_warp_shuffle::entry::<T>()),
            ReduceVariant::Folding => Ok(PassKernel::Fold(reduce_fold::entry::<T>())),
            ReduceVariant::Vectorized => Ok(PassKernel::Single(match op {
                Op::Sum => reduce_vectorized_sum::entry::<T>(),
                Op::Min => reduce_vectorized_min::entry::<T>(),
                Op::Max => reduce_vectorized_max::entry::<T>(),
            })),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: Limits = Limits {
        max_grid_x: i32::MAX as u32,
        stride_grid: 132 * 8,
        single_pass_grid: 1056,
    };

    /// Every plan reads the input first, writes the output last, reads only
    /// what an earlier pass wrote, and never writes more blocks into scratch
    /// than it holds.
    fn assert_consistent(variant: ReduceVariant, n: usize) {
        let block = default_block(variant, n);
        let p = plan(variant, block, n, LIMITS).unwrap();
        assert_eq!(
            p.passes.first().unwrap().src,
            Place::Input,
            "{variant:?} n={n}"
        );
        assert_eq!(
            p.passes.last().unwrap().dst,
            Place::Output,
            "{variant:?} n={n}"
        );
        if variant != ReduceVariant::Vectorized {
            assert_eq!(
                p.passes.last().unwrap().grid,
                1,
                "{variant:?} n={n}: the last pass is one block"
            );
        }
        assert_eq!(p.passes[0].len, n);
        for w in p.passes.windows(2) {
            assert_eq!(w[0].dst, w[1].src, "{variant:?} n={n}");
            let written = if variant == ReduceVariant::Folding {
                w[0].len.div_ceil(2)
            } else {
                w[0].grid as usize
            };
            assert_eq!(w[1].len, written, "{variant:?} n={n}");
        }
        for pass in &p.passes {
            assert!(pass.grid >= 1);
            if let Place::Scratch(offset) = pass.dst {
                let written = if variant == ReduceVariant::Folding {
                    pass.len.div_ceil(2)
                } else {
                    pass.grid as usize
                };
                assert!(
                    offset + written <= p.scratch,
                    "{variant:?} n={n}: scratch overflow"
                );
            }
            if let (Place::Scratch(a), Place::Scratch(b)) = (pass.src, pass.dst) {
                assert!(
                    a == b && variant == ReduceVariant::Folding || a != b,
                    "{variant:?}: in-place only when folding"
                );
            }
        }
    }

    #[test]
    fn plans_are_consistent_for_every_size() {
        let sizes = [
            0,
            1,
            2,
            3,
            31,
            32,
            33,
            255,
            256,
            257,
            511,
            512,
            513,
            65537,
            1_000_003,
            (1 << 24) + 7,
            1 << 28,
        ];
        for variant in ReduceVariant::ALL {
            for n in sizes {
                assert_consistent(*variant, n);
            }
        }
    }

    #[test]
    fn pass_counts_match_the_lessons() {
        let n = 1 << 28;
        let passes = |v| {
            plan(v, default_block(v, n), n, LIMITS)
                .unwrap()
                .passes
                .len()
        };
        // 2^28 elements -> 2^20 partials -> 2^12 -> 16 -> 1
        assert_eq!(passes(ReduceVariant::Sequential), 4);
        // 512 elements per block: 2^28 -> 2^19 -> 2^10 -> 2 -> 1
        assert_eq!(passes(ReduceVariant::FirstAddDuringLoad), 4);
        assert_eq!(passes(ReduceVariant::Folding), 28);
        assert_eq!(passes(ReduceVariant::Cascading), 2);
        assert_eq!(passes(ReduceVariant::Vectorized), 1);
    }

    #[test]
    fn grids_beyond_the_device_limit_are_refused() {
        let small = Limits {
            max_grid_x: 1000,
            ..LIMITS
        };
        let err = plan(ReduceVariant::Sequential, BLOCK, 1000 * 256 + 1, small).unwrap_err();
        assert!(
            matches!(err, Error::InvalidArgument(m) if m.contains("over the device's 1000 blocks"))
        );
        assert!(plan(ReduceVariant::Sequential, BLOCK, 1000 * 256, small).is_ok());
        // Grid-stride variants clamp their grid instead.
        assert!(plan(ReduceVariant::Cascading, BLOCK, 1 << 40, small).is_ok());
    }

    #[test]
    fn complete_unroll_picks_the_smallest_block_that_covers_small_inputs() {
        assert_eq!(default_block(ReduceVariant::CompleteUnroll, 0), 64);
        assert_eq!(default_block(ReduceVariant::CompleteUnroll, 128), 64);
        assert_eq!(default_block(ReduceVariant::CompleteUnroll, 129), 128);
        assert_eq!(default_block(ReduceVariant::CompleteUnroll, 1 << 20), 256);
        assert_eq!(default_block(ReduceVariant::Vectorized, 4096), 256);
        assert_eq!(default_block(ReduceVariant::Vectorized, 4097), 1024);
    }

    #[test]
    fn every_step_has_a_kernel_for_each_of_its_blocks() {
        for &variant in ReduceVariant::ALL {
            for &block in variant.shape().blocks {
                let (kernel, blocks) = match PassKernel::<f32>::new(variant, Op::Sum, block) {
                    Ok(PassKernel::Blocks(entry)) => (entry.kernel(), true),
                    Ok(PassKernel::Fold(entry)) => (entry.kernel(), false),
                    Ok(PassKernel::Single(entry)) => (entry.kernel(), false),
                    Err(e) => panic!("{variant:?}, {block}: {e}"),
                };
                assert!(
                    kernel.base.starts_with(variant.shape().kernel),
                    "{variant:?}"
                );
                // Steps 1-8 write one partial per block.
                assert_eq!(blocks, ReduceVariant::ALL[..8].contains(&variant));
            }
        }
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            /// Any length, near 2^31, 2^32 and `usize::MAX` too: a plan or
            /// an error, never a panic; a plan's grids fit the device.
            #[test]
            fn every_length_plans_or_is_refused(
                step in 0..ReduceVariant::ALL.len(),
                n in prop_oneof![
                    0usize..5000,
                    ((1usize << 31) - 3)..((1usize << 31) + 3),
                    ((1usize << 32) - 3)..((1usize << 32) + 3),
                    (usize::MAX - 5)..=usize::MAX,
                    any::<usize>(),
                ],
            ) {
                let variant = ReduceVariant::ALL[step];
                let block = default_block(variant, n);
                if let Ok(p) = plan(variant, block, n, LIMITS) {
                    prop_assert!(p.passes.iter().all(|pass| pass.grid >= 1 && pass.grid <= LIMITS.max_grid_x));
                }
            }
        }
    }
}
