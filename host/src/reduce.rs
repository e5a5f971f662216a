//! Reductions: sum, min and max of a device slice, and the ladder of the
//! lessons' variants ([`ReduceVariant`]).
//!
//! ```no_run
//! # fn main() -> warpspeed::Result<()> {
//! use cust::memory::DeviceBuffer;
//! let ctx = warpspeed::Context::new(0)?;
//! let x = DeviceBuffer::from_slice(&[1.0f32, 2.0, 3.0]).unwrap();
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
use crate::element::{Element, type_name};
use crate::error::{Error, Result};
use crate::launch::{LaunchConfig, args, blocks_for};
use cust::memory::DeviceSlice;
pub use warpspeed_gpu::Op;
pub use warpspeed_gpu::reduce::ReduceVariant;
use warpspeed_gpu::reduce::{self as consts, BLOCK, UNROLL_BLOCKS, VECTOR_UNROLL, VECTOR_WIDTH};

/// Where a pass reads or writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Buffer {
    Input,
    /// Scratch memory, at this element offset.
    Scratch(usize),
    Output,
}

/// One launch of a multi-pass reduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Pass {
    src: Buffer,
    dst: Buffer,
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

/// The block size a variant uses for `n` elements: [`BLOCK`], except that
/// `CompleteUnroll` takes the smallest of its sizes that covers a small input
/// in one block, and [`BLOCK`] otherwise.
pub fn default_block(variant: ReduceVariant, n: usize) -> u32 {
    match variant {
        ReduceVariant::CompleteUnroll => UNROLL_BLOCKS
            .into_iter()
            .find(|&b| 2 * b as usize >= n)
            .unwrap_or(BLOCK)
            .min(BLOCK),
        _ => BLOCK,
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
            src: Buffer::Input,
            dst: Buffer::Output,
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
                        src: Buffer::Input,
                        dst: Buffer::Scratch(0),
                        len: n,
                        grid,
                    },
                    Pass {
                        src: Buffer::Scratch(0),
                        dst: Buffer::Output,
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
            let (mut src, mut len) = (Buffer::Input, n);
            while len > 2 {
                let half = len.div_ceil(2);
                passes.push(Pass {
                    src,
                    dst: Buffer::Scratch(0),
                    len,
                    grid: grid_for(half, per_block)?,
                });
                (src, len) = (Buffer::Scratch(0), half);
            }
            passes.push(Pass {
                src,
                dst: Buffer::Output,
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
            let (mut src, mut len) = (Buffer::Input, n);
            let first = grid_for(n, per_block)? as usize;
            let mut offsets = [0, first];
            loop {
                let grid = grid_for(len, per_block)?;
                let dst = if grid == 1 {
                    Buffer::Output
                } else {
                    Buffer::Scratch(offsets[0])
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
    /// Sum of `x` with the fastest variant. Integers wrap.
    pub fn sum<T: Element>(&self, x: &DeviceSlice<T>) -> Result<T> {
        self.reduce(Op::Sum, ReduceVariant::Vectorized, x)
    }

    /// Smallest element of `x`, `None` if it is empty. `f32`: NaN if any
    /// element is NaN.
    pub fn min<T: Element>(&self, x: &DeviceSlice<T>) -> Result<Option<T>> {
        let v = self.reduce(Op::Min, ReduceVariant::Vectorized, x)?;
        Ok((!x.is_empty()).then_some(v))
    }

    /// Largest element of `x`, `None` if it is empty. `f32`: NaN if any
    /// element is NaN.
    pub fn max<T: Element>(&self, x: &DeviceSlice<T>) -> Result<Option<T>> {
        let v = self.reduce(Op::Max, ReduceVariant::Vectorized, x)?;
        Ok((!x.is_empty()).then_some(v))
    }

    /// Reduces `x` with `op` using one variant of the ladder and waits for the
    /// result. An empty `x` gives `op`'s identity.
    pub fn reduce<T: Element>(
        &self,
        op: Op,
        variant: ReduceVariant,
        x: &DeviceSlice<T>,
    ) -> Result<T> {
        let block = default_block(variant, x.len());
        // SAFETY: the result slot holds 16 bytes, enough for one element,
        // and lives as long as `self`.
        unsafe { self.enqueue_reduce(op, variant, block, x, self.result_slot())? };
        self.read_result()
    }

    /// Enqueues the reduction of `x` with `op` and `variant`; the result
    /// lands in `out[0]` when the stream reaches it. Returns at once.
    ///
    /// `x` must not be freed or written before the stream has run the
    /// reduction (multi-pass variants read scratch memory the context owns,
    /// so enqueue further work on [`Context::stream`]).
    pub fn reduce_into<T: Element>(
        &self,
        op: Op,
        variant: ReduceVariant,
        x: &DeviceSlice<T>,
        out: &mut DeviceSlice<T>,
    ) -> Result<()> {
        self.reduce_into_with_block(op, variant, default_block(variant, x.len()), x, out)
    }

    /// [`Context::reduce_into`] with an explicit block size: any of
    /// [`consts::UNROLL_BLOCKS`] for `CompleteUnroll`, [`BLOCK`] for the others.
    pub fn reduce_into_with_block<T: Element>(
        &self,
        op: Op,
        variant: ReduceVariant,
        block: u32,
        x: &DeviceSlice<T>,
        out: &mut DeviceSlice<T>,
    ) -> Result<()> {
        if out.is_empty() {
            return Err(Error::InvalidArgument(
                "the output slice of a reduction must hold at least one element".into(),
            ));
        }
        // SAFETY: `out` holds at least one element (checked above) and is
        // borrowed mutably, so it does not alias `x`.
        unsafe { self.enqueue_reduce(op, variant, block, x, out.as_device_ptr().as_raw()) }
    }

    /// # Safety
    /// `out` must be a device address valid for one `T` write that does not
    /// overlap `x`.
    unsafe fn enqueue_reduce<T: Element>(
        &self,
        op: Op,
        variant: ReduceVariant,
        block: u32,
        x: &DeviceSlice<T>,
        out: u64,
    ) -> Result<()> {
        self.ensure_alive()?;
        let ty = type_name::<T>();
        // One check per kind of mistake: the block size, then the operator.
        let blocks: &[u32] = if variant == ReduceVariant::CompleteUnroll {
            &UNROLL_BLOCKS
        } else {
            &[BLOCK]
        };
        if !blocks.contains(&block) {
            return Err(Error::InvalidArgument(format!(
                "the {} reduction runs with {blocks:?} threads per block, not {block}",
                variant.name()
            )));
        }
        let base = variant.entry_base(op, block).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "the {} reduction computes sums only; use Vectorized for {}",
                variant.name(),
                op.name()
            ))
        })?;
        let input = x.as_device_ptr().as_raw();
        if !input.is_multiple_of(size_of::<T>() as u64) {
            return Err(Error::InvalidArgument(format!(
                "the input slice starts at {input:#x}, which is not aligned to its {}-byte elements",
                size_of::<T>()
            )));
        }
        let n = x.len();
        let shared = variant.shared_bytes(block);
        let info = self.info();
        let limits = Limits {
            max_grid_x: info.max_grid.0,
            stride_grid: info.multiprocessors * consts::GRID_BLOCKS_PER_SM,
            single_pass_grid: if variant == ReduceVariant::Vectorized {
                let resident = self.blocks_per_sm(base, ty, block, shared)? * info.multiprocessors;
                resident.min(self.single_pass().2 as u32)
            } else {
                1
            },
        };
        let plan = plan(variant, block, n, limits)?;
        let scratch = if plan.scratch > 0 {
            self.scratch(plan.scratch * size_of::<T>())?
        } else {
            0
        };
        let address = |b: Buffer| match b {
            Buffer::Input => input,
            Buffer::Scratch(offset) => scratch + (offset * size_of::<T>()) as u64,
            Buffer::Output => out,
        };
        for pass in &plan.passes {
            let cfg = LaunchConfig::linear(pass.grid, plan.block, shared);
            let (src, dst, len) = (address(pass.src), address(pass.dst), pass.len);
            if variant == ReduceVariant::Vectorized {
                let (counter, partials, _) = self.single_pass();
                // SAFETY: `src` is `x`, valid for `len` reads and aligned
                // (checked); `partials` holds `single_pass_grid >= grid`
                // elements; the counter is zero between launches (zeroed at
                // allocation, reset by each launch) and this stream is its
                // only user; `dst` is valid for one write (caller).
                unsafe { self.launch(base, ty, cfg, &args![src, len, partials, counter, dst])? };
            } else {
                // SAFETY: `src` is `x` (valid for `n` reads) or scratch that
                // an earlier pass filled with `len` partials; `dst` is scratch
                // holding `grid` elements (sized by the plan), or `out`, valid
                // for one write when `grid == 1` (caller). Folding reads and
                // writes the same scratch, which its body allows.
                unsafe { self.launch(base, ty, cfg, &args![src, dst, len])? };
            }
        }
        Ok(())
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
            Buffer::Input,
            "{variant:?} n={n}"
        );
        assert_eq!(
            p.passes.last().unwrap().dst,
            Buffer::Output,
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
            if let Buffer::Scratch(offset) = pass.dst {
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
            if let (Buffer::Scratch(a), Buffer::Scratch(b)) = (pass.src, pass.dst) {
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
                assert_consistent(variant, n);
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
    }

    #[test]
    fn every_variant_type_and_block_has_an_entry_point() {
        let declared = |base: &str, ty: &str| {
            warpspeed_gpu::reduce::KERNELS
                .iter()
                .any(|k| k.base == base && k.ty == ty)
        };
        for variant in ReduceVariant::ALL {
            for op in Op::ALL {
                let blocks: &[u32] = if variant == ReduceVariant::CompleteUnroll {
                    &UNROLL_BLOCKS
                } else {
                    &[BLOCK]
                };
                for &block in blocks {
                    match variant.entry_base(op, block) {
                        Some(base) => {
                            for ty in consts::TYPES {
                                assert!(declared(base, ty.name()), "{base}_{}", ty.name());
                            }
                        }
                        None => assert!(!variant.supports(op)),
                    }
                }
            }
        }
    }
}
