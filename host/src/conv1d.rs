//! 1D convolution of `f32` signals, one or a batch of rows, and the ladder
//! of the lesson's variants ([`Conv1dVariant`]).
//!
//! The guide, [conv1d.md][guide], has the ladder (what each step changes and
//! why it is faster), the measured tables and the pitfalls.
//!
//! [guide]: https://github.com/warpspeed-rs/warpspeed/blob/main/docs/conv1d.md
//!
//! `out[i] = Σ_j signal[i − r + j] · mask[j]` for `j` in `0..taps`,
//! `r = taps / 2`, with the signal zero outside its ends: the output is as
//! long as the signal (the "same" convolution, or rather correlation: the
//! mask is not reversed, as in `torch.nn.functional.conv1d`). The centre
//! weight, the one that multiplies `signal[i]`, is `mask[taps / 2]`: the
//! middle one of an odd mask, the right one of the middle two of an even
//! mask. Masks hold 1 to [`MAX_TAPS`] (1 025) weights.
//!
//! ```no_run
//! # fn main() -> warpspeed::Result<()> {
//! let ctx = warpspeed::Context::new(0)?;
//! let signal = ctx.upload(&[1.0f32, 2.0, 3.0, 4.0])?;
//! let mask = ctx.upload(&[1.0f32, 10.0, 100.0])?; // centre: 10
//! let mut out = ctx.zeros::<f32>(4)?;
//! ctx.conv1d_into(&signal, &mask, &mut out)?.wait()?;
//! // out = [210, 321, 432, 43]: out[0] = 0·1 + 1·10 + 2·100
//! # Ok(()) }
//! ```
//!
//! A batch is a [`Matrix`] of rows, each convolved on its own (zero outside
//! the row), into a [`MatrixMut`] of the same shape; both may have a pitch.
//!
//! Results: each output is a sum of `taps` products in `f32` with fused
//! multiply-adds, in an order fixed by the step; against the exact sum the
//! error is at most `(taps + 2) · 2^-24 · Σ_j |signal · mask|`. The
//! default ([`Conv1dVariant::fastest_for`]) runs
//! [`Conv1dVariant::Bf16Corrections`] for masks of 48 taps or more on compute
//! capability 9.0 (the sm_90a module), [`Conv1dVariant::Tf32x3`] for
//! masks of 48 taps or more on other devices with tensor cores (bounds
//! below), and [`Conv1dVariant::Streamed`]
//! otherwise, which hands masks of more than
//! 128 taps to [`Conv1dVariant::Karatsuba`], which computes them with ¾ of
//! the multiply-adds: its even outputs keep that bound,
//! its odd outputs `i` are within `(2·taps + 8) · 2^-24` times the sum of
//! `Σ_j |signal · mask|` over outputs `i − 1`, `i` and `i + 1` (see
//! `karatsuba_outputs`); call
//! [`Conv1dVariant::RegisterBlocked`] for the direct sum.
//! [`Conv1dVariant::Tf32x3`] sums on the tensor cores (sm_80 and newer)
//! with each operand split into two TF32 parts (by truncation): within
//! [`tensor_error_units`]`(taps) · 2^-24 · Σ_j |signal · mask|` (916 units
//! for 127 taps, derived there); [`Conv1dVariant::Tf32x3Wgmma`], the same
//! sums as warpgroup products over more zeros, within
//! [`wgmma_error_units`]`(taps)` units (1 204 for 127 taps), and
//! [`Conv1dVariant::Tf32x3Tma`], the same over up to 7 more zeros, within
//! [`tma_error_units`]`(taps)`, and [`Conv1dVariant::Bf16Corrections`],
//! whose small terms are BF16 products, within
//! [`bf16_error_units`]`(taps)` (1 404 for 127 taps);
//! [`Conv1dVariant::error_units`] gives a step's. NaN and ±∞ in the
//! signal reach exactly the outputs whose window covers them, in every
//! step.
//!
//! The mask lives on the device. [`Conv1dVariant::ConstantMask`] and
//! [`Conv1dVariant::SharedTile`] read it from constant memory, one symbol
//! per device ([`CONV1D_MASK`]): each call enqueues, on its own stream, a
//! device-to-device copy of the mask into the symbol (4 bytes per weight),
//! made to wait on the device (never the host) for every earlier launch of
//! those two steps on any stream of the device; the kernel follows the copy.
//! Their launches on different streams therefore run one after another. The
//! register-blocked steps ([`Conv1dVariant::RegisterBlocked`],
//! [`Conv1dVariant::Karatsuba`], [`Conv1dVariant::Streamed`]) stage the
//! mask in shared memory themselves and need none of this.
//!
//! [`Conv1dVariant::Tf32x3Tma`] and [`Conv1dVariant::Bf16Corrections`]
//! encode a tensor map for each launch on the
//! host (`cuTensorMapEncodeTiled`, no device work) and passes it as a
//! kernel parameter, which the copy engine reads where the launch put it.
//! Rows whose pitch is not a multiple of 8 elements ([`TMA_ALIGN`]: each
//! row's copies then start on a 32-byte sector) and rows too short for the
//! map run [`Conv1dVariant::Tf32x3Wgmma`]'s kernel instead.

use crate::context::Context;
use crate::driver;
use crate::error::check;
use crate::error::{Error, Result};
use crate::launch::{LaunchConfig, blocks_for};
use crate::matrix::{Matrix, MatrixMut};
use crate::memory::{Call, DeviceRead, DeviceWrite, View, ViewMut};
use crate::overlap::{Span, refuse_overlap};
use crate::pending::Pending;
pub use warpspeed_gpu::conv1d::tma::TMA_ALIGN;
use warpspeed_gpu::conv1d::tma::{TmaGeometry, tma_geometry, tma_tensor};
use warpspeed_gpu::conv1d::{CONV1D_MASK, Conv1dArgs, Conv1dEntry, Conv1dMapArgs, TMA_FALLBACK};
pub use warpspeed_gpu::conv1d::{
    Conv1dVariant, MAX_TAPS, bf16_error_units, tensor_error_units, tma_error_units,
    wgmma_error_units,
};
use warpspeed_gpu::ptx::Needs;
use warpspeed_gpu::{DevPtr, DevPtrMut, Entry, TensorMap};

/// The kernel one launch runs: step 9's or 10's own only with the geometry of the
/// rows its tensor map describes.
#[derive(Clone, Copy)]
enum Kernel {
    Plain(Entry<Conv1dArgs<f32>>),
    Mapped(Entry<Conv1dMapArgs<f32>>, TmaGeometry),
}

/// The rows of one launch: device addresses, pitches in elements.
struct Rows {
    signal: u64,
    signal_pitch: usize,
    out: u64,
    out_pitch: usize,
    /// Elements per row.
    n: usize,
    rows: usize,
}

impl Rows {
    /// Step 9's geometry for these rows and a mask of `taps`, where its
    /// tensor map can describe them: one row or a pitch of a multiple of
    /// [`TMA_ALIGN`] elements (every row then starts on the same 4-byte
    /// word of a 32-byte sector), rows long enough for a whole line, and
    /// rows and lines that the copies' signed 32-bit coordinates reach.
    fn tma_geometry(&self, taps: usize) -> Option<TmaGeometry> {
        let geometry = tma_geometry((self.signal / 4) as usize, taps, self.n)?;
        let reachable = i32::MAX as usize - 64;
        (self.rows == 1 || self.signal_pitch.is_multiple_of(TMA_ALIGN))
            .then_some(geometry)
            .filter(|g| g.lines < reachable && self.rows < reachable)
    }

    /// The bytes the signal's and the output's rows span, `start..end`.
    fn spans(&self) -> [Span; 2] {
        let bytes = |pitch: usize| {
            // No overflow: the rows lie inside one allocation (checked by
            // the views, or one slice).
            ((self.rows - 1) * pitch + self.n) * size_of::<f32>()
        };
        [
            Span::new(self.signal, bytes(self.signal_pitch)),
            Span::new(self.out, bytes(self.out_pitch)),
        ]
    }
}

/// Refuses an empty mask and one longer than [`MAX_TAPS`].
fn check_mask(mask: &View<'_, f32>) -> Result<()> {
    match mask.len() {
        0 => Err(Error::InvalidArgument(
            "the convolution mask is empty (it needs 1 to 1025 weights)".into(),
        )),
        taps if taps > MAX_TAPS => Err(Error::InvalidArgument(format!(
            "a convolution mask of {taps} weights is longer than the {MAX_TAPS} the kernels take"
        ))),
        _ => Ok(()),
    }
}

impl Context {
    /// Enqueues `out = signal ⊛ mask` (see the [module docs](crate::conv1d))
    /// with the fastest variant for the mask and the device
    /// ([`Conv1dVariant::fastest_for`]). `out` must be as long as `signal` and
    /// share no byte with `signal` or `mask` (checked: views made from raw
    /// parts could). Returns at once; see [`Pending`]. An
    /// empty signal launches nothing.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an empty mask or one longer than
    /// [`MAX_TAPS`], an output overlapping the signal or the mask, or a
    /// signal too long for the grid; [`Error::LengthMismatch`] for an
    /// output of another length.
    /// [`Error::Unsupported`] for [`Conv1dVariant::Tf32x3`] (with the
    /// `_with` calls) on a context that loaded PTX older than `sm_80`, and
    /// for [`Conv1dVariant::Tf32x3Wgmma`] on any but the `sm_90a` module.
    pub fn conv1d_into<'a>(
        &'a self,
        signal: &impl DeviceRead<Elem = f32>,
        mask: &impl DeviceRead<Elem = f32>,
        out: &mut impl DeviceWrite<Elem = f32>,
    ) -> Result<Pending<'a>> {
        // Each argument's view is taken once: the view checked is the one
        // launched.
        let mask = mask.view();
        let variant = Conv1dVariant::fastest_for(mask.len(), self.info().ptx_target);
        self.conv1d_views(variant, signal.view(), mask, out.view_mut())
    }

    /// Enqueues the convolution with one step of the ladder. For
    /// [`Conv1dVariant::ConstantMask`] and [`Conv1dVariant::SharedTile`]
    /// the mask is first copied into constant memory in stream order (see
    /// the [module docs](crate::conv1d)).
    ///
    /// Three steps run another step's kernel where their own does not
    /// apply, and [`Conv1dVariant::runs_as`] says which for a mask
    /// length: [`Conv1dVariant::Karatsuba`] with masks of fewer than
    /// [`SPLIT_MIN_TAPS`](warpspeed_gpu::conv1d::SPLIT_MIN_TAPS) taps runs
    /// [`Conv1dVariant::RegisterBlocked`]; [`Conv1dVariant::Streamed`]
    /// with masks of more than
    /// [`STREAM_MAX_TAPS`](warpspeed_gpu::conv1d::STREAM_MAX_TAPS) taps runs
    /// what `Karatsuba` runs; and the tensor-map step runs
    /// [`TMA_FALLBACK`] for rows its
    /// tensor map cannot describe. The result is the convolution either
    /// way; only the kernel, and so the speed, differs.
    ///
    /// # Errors
    /// As [`Context::conv1d_into`].
    pub fn conv1d_into_with<'a>(
        &'a self,
        variant: Conv1dVariant,
        signal: &impl DeviceRead<Elem = f32>,
        mask: &impl DeviceRead<Elem = f32>,
        out: &mut impl DeviceWrite<Elem = f32>,
    ) -> Result<Pending<'a>> {
        self.conv1d_views(variant, signal.view(), mask.view(), out.view_mut())
    }

    /// [`Context::conv1d_into_with`] on the arguments' views.
    fn conv1d_views<'a>(
        &'a self,
        variant: Conv1dVariant,
        signal: View<'_, f32>,
        mask: View<'_, f32>,
        out: ViewMut<'_, f32>,
    ) -> Result<Pending<'a>> {
        self.ensure_alive()?;
        check_mask(&mask)?;
        let n = signal.len();
        if out.len() != n {
            return Err(Error::LengthMismatch {
                what: "the convolution's output",
                expected: n,
                given: out.len(),
            });
        }
        let mut call = Call::new(self);
        let rows = Rows {
            signal: call.read(&signal)?,
            signal_pitch: n,
            out: call.write(&out)?,
            out_pitch: n,
            n,
            rows: 1,
        };
        let mask_address = call.read(&mask)?;
        // SAFETY: `signal` and `out` hold `n` elements each (their overlap,
        // and the mask's, is refused by `conv1d_launch`); the mask is checked
        // above; `call` orders the work after the other queues' uses of all
        // three buffers, and their `Drop` waits for it.
        unsafe { self.conv1d_launch(variant, mask_address, mask.len(), rows)? };
        Ok(Pending::new(self))
    }

    /// Enqueues the convolution of every row of `signal` into the same row
    /// of `out` (each row on its own, zero outside the row) with the
    /// fastest variant for the mask and the device
    /// ([`Conv1dVariant::fastest_for`]). `out` must have `signal`'s shape (pitches may
    /// differ), and the bytes from its first to its last element must not
    /// overlap those of `signal` or `mask`. Returns at once; see
    /// [`Pending`]. An empty matrix launches nothing.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an empty mask or one longer than
    /// [`MAX_TAPS`], an output overlapping the signal or the mask, or rows
    /// too long for the grid; [`Error::ShapeMismatch`] for an output of
    /// another shape.
    pub fn conv1d_rows_into<'a>(
        &'a self,
        signal: &Matrix<'_, f32>,
        mask: &impl DeviceRead<Elem = f32>,
        out: &mut MatrixMut<'_, f32>,
    ) -> Result<Pending<'a>> {
        let mask = mask.view();
        let variant = Conv1dVariant::fastest_for(mask.len(), self.info().ptx_target);
        self.conv1d_rows_into_with(variant, signal, &mask, out)
    }

    /// Enqueues the convolution of every row with one step of the ladder.
    ///
    /// # Errors
    /// As [`Context::conv1d_rows_into`].
    pub fn conv1d_rows_into_with<'a>(
        &'a self,
        variant: Conv1dVariant,
        signal: &Matrix<'_, f32>,
        mask: &impl DeviceRead<Elem = f32>,
        out: &mut MatrixMut<'_, f32>,
    ) -> Result<Pending<'a>> {
        self.ensure_alive()?;
        let mask = mask.view();
        check_mask(&mask)?;
        let shape = (signal.width(), signal.height());
        if (out.width(), out.height()) != shape {
            return Err(Error::ShapeMismatch {
                what: "the convolution's output",
                expected: shape,
                given: (out.width(), out.height()),
            });
        }
        let mut call = Call::new(self);
        let rows = Rows {
            signal: call.read(signal.data())?,
            signal_pitch: signal.pitch(),
            out: call.write(out.data())?,
            out_pitch: out.pitch(),
            n: shape.0,
            rows: shape.1,
        };
        let mask_address = call.read(&mask)?;
        // SAFETY: both views were checked to lie inside their slices for
        // their shapes and pitches (`Matrix::with_pitch`), and have the same
        // shape (checked above); their overlap, and the mask's, is refused
        // by `conv1d_launch`; the mask is checked above; `call` orders the
        // work after the other queues' uses of all three buffers, and their
        // `Drop` waits for it.
        unsafe { self.conv1d_launch(variant, mask_address, mask.len(), rows)? };
        Ok(Pending::new(self))
    }

    /// Plans and enqueues one launch.
    ///
    /// # Safety
    /// `rows` describes `rows.rows` rows of `rows.n` elements of the signal
    /// (readable) and of the output (writable), inside their allocations
    /// and valid until the stream has run the kernel; `mask` is `taps`
    /// elements, which passed [`check_mask`], valid as long. Overlaps are
    /// refused here.
    unsafe fn conv1d_launch(
        &self,
        variant: Conv1dVariant,
        mask: u64,
        taps: usize,
        rows: Rows,
    ) -> Result<()> {
        let target = self.info().ptx_target;
        let instead = match variant.needs() {
            Needs::Sm90a => "conv1d_into picks the fastest step the device has",
            _ => "the other steps run everywhere",
        };
        crate::ptx::require(variant.needs(), target, variant.name(), instead)?;
        if rows.n == 0 || rows.rows == 0 {
            return Ok(());
        }
        // Step 9's own kernel where its tensor map describes the rows, its
        // fallback's elsewhere.
        let (variant, kernel) = match (variant.entry(taps), rows.tma_geometry(taps)) {
            (Conv1dEntry::Plain(entry), _) => (variant.runs_as(taps), Kernel::Plain(entry)),
            (Conv1dEntry::Mapped { map, .. }, Some(geometry)) => {
                (variant.runs_as(taps), Kernel::Mapped(map, geometry))
            }
            (Conv1dEntry::Mapped { fallback, .. }, None) => (TMA_FALLBACK, Kernel::Plain(fallback)),
        };
        let [signal_span, out_span] = rows.spans();
        let mask_span = Span::new(mask, taps * size_of::<f32>());
        let mask_address = mask_span.start;
        for (span, what) in [(signal_span, "signal"), (mask_span, "mask")] {
            refuse_overlap("convolution", ("output", out_span), (what, span))?;
        }
        let Some(tiles) = blocks_for(rows.n, variant.outputs_per_block(taps) as usize) else {
            return Err(Error::InvalidArgument(format!(
                "rows of {} elements need too many blocks",
                rows.n
            )));
        };
        let (block, shared_bytes) = (variant.block(taps), variant.shared_bytes(taps));
        // Blocks walk the rows `gridDim.y` apart: any number of rows.
        let grid_y = u32::try_from(rows.rows)
            .unwrap_or(u32::MAX)
            .min(self.info().max_grid.1);
        let grid_x = if variant.walks_runs(taps) {
            // As many blocks as the GPU holds at once, each walking a run of
            // tiles of its rows.
            let per_sm = match kernel {
                Kernel::Plain(entry) => self.blocks_per_sm(entry, block, shared_bytes)?,
                Kernel::Mapped(entry, _) => self.blocks_per_sm(entry, block, shared_bytes)?,
            };
            let resident = per_sm * self.info().multiprocessors;
            tiles.min(resident.div_ceil(grid_y).max(1))
        } else {
            tiles
        };
        let cfg = LaunchConfig {
            grid: (grid_x, grid_y),
            block: (block, 1),
            shared_bytes,
        };
        let args = Conv1dArgs {
            signal: DevPtr::new(rows.signal),
            signal_pitch: rows.signal_pitch,
            n: rows.n,
            // Below 2^32: one row, or a matrix view's height.
            rows: rows.rows as u32,
            mask: DevPtr::new(mask_address),
            // At most MAX_TAPS: checked by `check_mask`.
            taps: taps as u32,
            out: DevPtrMut::new(rows.out),
            out_pitch: rows.out_pitch,
        };
        // SAFETY: the kernel's contract: `1 <= taps <= MAX_TAPS` and the
        // mask holds `taps` elements (`check_mask`); signal and output rows
        // as the caller guarantees, the output overlapping neither the
        // signal nor the mask (refused above); a block of the step's size, a grid of
        // `ceil(n / outputs_per_block)` blocks across (for the steps that walk
        // runs of tiles at most that many) and rows walked
        // `gridDim.y` apart, and the step's shared memory for `taps`. For the
        // constant-memory steps the mask (`taps · 4` bytes, at most the
        // symbol's 4 100) is copied into `CONV1D_MASK` before the launch,
        // ordered after every earlier reader of it; the mask slice stays
        // borrowed until the stream has run the copy. Step 9's kernel runs
        // with the rows' geometry (chosen above).
        unsafe {
            match kernel {
                Kernel::Mapped(entry, geometry) => {
                    self.conv1d_launch_mapped(entry, geometry, taps, &rows, cfg, args)?
                }
                Kernel::Plain(entry) if variant.reads_constant_mask() => self
                    .launch_reading_constant(
                        &CONV1D_MASK,
                        mask_address,
                        taps * size_of::<f32>(),
                        entry,
                        cfg,
                        &args,
                    )?,
                Kernel::Plain(entry) => self.launch(entry, cfg, &args)?,
            }
        }
        Ok(())
    }

    /// Encodes the tensor map of steps 9 and 10 for `rows` and enqueues
    /// `entry` (from [`Conv1dEntry::Mapped`]: either step's kernel) with
    /// `args` and the map.
    ///
    /// # Safety
    /// As for the launch in [`Context::conv1d_launch`], `cfg` and `args` as
    /// that builds them for [`Conv1dVariant::Tf32x3Tma`] or
    /// [`Conv1dVariant::Bf16Corrections`], and `geometry` is
    /// [`Rows::tma_geometry`] of `rows`.
    unsafe fn conv1d_launch_mapped(
        &self,
        entry: Entry<Conv1dMapArgs<f32>>,
        geometry: TmaGeometry,
        taps: usize,
        rows: &Rows,
        cfg: LaunchConfig,
        args: Conv1dArgs<f32>,
    ) -> Result<()> {
        let tensor = tma_tensor(geometry, taps, rows.rows, rows.signal_pitch);
        let mut encoded = driver::TensorMapBytes([0; 16]);
        let element_strides = [1u32; 4];
        // SAFETY: `encoded` is 128 bytes, 64-byte aligned; the arrays hold
        // the rank's 4 dimensions (3 strides); the address is inside the
        // signal (`origin < n`), 32-byte aligned (`tma_geometry`), and the
        // view's rows and lines lie inside the signal's rows.
        let status = unsafe {
            driver::cuTensorMapEncodeTiled(
                &mut encoded,
                driver::tensor_map::FLOAT32,
                4,
                (rows.signal + tensor.offset as u64) as *mut std::ffi::c_void,
                tensor.dims.as_ptr(),
                tensor.strides.as_ptr(),
                tensor.boxed.as_ptr(),
                element_strides.as_ptr(),
                driver::tensor_map::NONE,
                // The layout `tma::tma_offset` describes.
                driver::tensor_map::SWIZZLE_32B,
                driver::tensor_map::L2_256B,
                driver::tensor_map::OOB_ZERO,
            )
        };
        self.track(check(status, || {
            "encoding the convolution's tensor map".into()
        }))?;
        let args = Conv1dMapArgs {
            signal: args.signal,
            signal_pitch: args.signal_pitch,
            n: args.n,
            rows: args.rows,
            mask: args.mask,
            taps: args.taps,
            out: args.out,
            out_pitch: args.out_pitch,
            map: TensorMap { words: encoded.0 },
        };
        // SAFETY: the caller's contract, and the kernel's: the map as
        // `tma::kernel` needs it, over the signal's rows (which nothing
        // writes while the kernel runs: the output overlaps no signal).
        unsafe { self.launch(entry, cfg, &args) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Step 9's map describes one row anywhere, or rows at a pitch of a
    /// multiple of 8 elements (each row's copies on 32 bytes), long enough
    /// for a line; other rows go to step 8's kernel.
    #[test]
    fn the_tensor_map_takes_rows_on_sectors() {
        let rows = |signal: u64, signal_pitch: usize, n: usize, count: usize| Rows {
            signal,
            signal_pitch,
            out: 1 << 30,
            out_pitch: signal_pitch,
            n,
            rows: count,
        };
        let g = |r: Rows| r.tma_geometry(127);
        assert!(g(rows(0x1000 + 4, 1000, 1000, 1)).is_some());
        assert!(g(rows(0x1000 + 8, 1008, 1000, 3)).is_some());
        assert!(g(rows(0x1000, 1004, 1000, 3)).is_none());
        assert!(g(rows(0x1000, 64, 63, 1)).is_none());
        let moved = g(rows(0x1000 + 8, 1008, 1000, 3)).map(|g| g.shift);
        assert_eq!(
            moved,
            tma_geometry(0x1000 / 4 + 2, 127, 1000).map(|g| g.shift)
        );
    }

    #[test]
    fn the_constant_mask_holds_the_longest_mask() {
        assert_eq!(CONV1D_MASK.bytes(), MAX_TAPS * size_of::<f32>());
        assert_eq!(CONV1D_MASK.name(), "CONV1D_MASK");
    }

    #[test]
    fn row_spans_cover_the_rows() {
        let rows = Rows {
            signal: 0x1000,
            signal_pitch: 13,
            out: 0x2000,
            out_pitch: 16,
            n: 10,
            rows: 3,
        };
        // Signal: 2 rows of 13 and 10 more elements; output 2 of 16 and 10.
        assert_eq!(
            rows.spans(),
            [Span::new(0x1000, 36 * 4), Span::new(0x2000, 42 * 4)]
        );
    }

    #[test]
    fn every_step_has_its_kernel() {
        for &v in Conv1dVariant::ALL {
            for taps in [1, MAX_TAPS] {
                let name = v.entry(taps).kernel().name;
                let kernel = v.runs_as(taps).shape().kernel;
                assert!(name.starts_with(kernel) && name.ends_with("_f32"));
            }
        }
        assert_eq!(Conv1dVariant::DEFAULT, Conv1dVariant::Streamed);
        // Tensor cores for long masks where the module has them.
        let tensor = warpspeed_gpu::conv1d::TENSOR_MIN_TAPS;
        let tma = warpspeed_gpu::conv1d::TMA_MIN_TAPS;
        assert!(tma >= tensor);
        assert_eq!(
            Conv1dVariant::fastest_for(tma, "sm_90a"),
            Conv1dVariant::Bf16Corrections
        );
        assert_eq!(
            Conv1dVariant::fastest_for(MAX_TAPS, "sm_90a"),
            Conv1dVariant::Bf16Corrections
        );
        assert_eq!(
            Conv1dVariant::fastest_for(tma - 1, "sm_90a"),
            Conv1dVariant::DEFAULT
        );
        assert_eq!(
            Conv1dVariant::fastest_for(MAX_TAPS, "sm_90"),
            Conv1dVariant::Tf32x3
        );
        for target in ["sm_80", "sm_90"] {
            assert_eq!(
                Conv1dVariant::fastest_for(tensor, target),
                Conv1dVariant::Tf32x3
            );
        }
        for target in ["sm_80", "sm_90", "sm_90a"] {
            assert_eq!(
                Conv1dVariant::fastest_for(tensor - 1, target),
                Conv1dVariant::DEFAULT
            );
        }
        assert_eq!(
            Conv1dVariant::fastest_for(1025, "sm_70"),
            Conv1dVariant::DEFAULT
        );
        // Steps 9 and 10 run their own kernels for every mask.
        for (step, name) in [
            (Conv1dVariant::Tf32x3Tma, "conv1d_tf32x3_tma_f32"),
            (
                Conv1dVariant::Bf16Corrections,
                "conv1d_bf16_corrections_f32",
            ),
        ] {
            for taps in [1, 127, MAX_TAPS] {
                assert_eq!(step.runs_as(taps), step);
                assert_eq!(step.entry(taps).kernel().name, name);
            }
        }
        assert!(!Conv1dVariant::DEFAULT.reads_constant_mask());
        // Short masks run step 6's kernel, then step 4's narrow and wide
        // ones, long ones step 5's own.
        let name = |taps| Conv1dVariant::DEFAULT.entry(taps).kernel().name;
        assert_eq!(name(1), "conv1d_streamed_f32");
        assert_eq!(name(16), "conv1d_streamed_f32");
        assert_eq!(name(17), "conv1d_register_blocked_8_f32");
        assert_eq!(name(64), "conv1d_register_blocked_8_f32");
        assert_eq!(name(128), "conv1d_register_blocked_16_f32");
        assert_eq!(name(129), "conv1d_karatsuba_f32");
        assert!(!Conv1dVariant::DEFAULT.walks_runs(16) && Conv1dVariant::DEFAULT.walks_runs(17));
        assert!(Conv1dVariant::DEFAULT.walks_runs(128) && !Conv1dVariant::DEFAULT.walks_runs(129));
    }
}
