//! Prefix sums (scans) of device slices and of a matrix's rows, and stream
//! compaction, with the ladder of the textbook's variants
//! ([`ScanVariant`]).
//!
//! The guide, [scan.md][guide], has the ladder (what each step changes and
//! why it is faster), the measured tables and the semantics.
//!
//! [guide]: https://github.com/warpspeed-rs/warpspeed/blob/main/docs/scan.md
//!
//! ```no_run
//! # fn main() -> warpspeed::Result<()> {
//! use warpspeed::scan::Op;
//! let ctx = warpspeed::Context::new(0)?;
//! let x = ctx.upload(&[3u32, 1, 4, 1, 5])?;
//! let mut out = ctx.alloc::<u32>(5)?;
//! ctx.inclusive_scan_into(Op::Sum, &x, &mut out)?;
//! assert_eq!(ctx.download(&out)?, [3, 4, 8, 9, 14]);
//! ctx.exclusive_scan_into(Op::Sum, 100, &x, &mut out)?;
//! assert_eq!(ctx.download(&out)?, [100, 103, 104, 108, 109]);
//! # Ok(()) }
//! ```
//!
//! Results: integer sums wrap; an `f32` scan gives the same bits on every
//! run and every device (the order of its additions depends only on the
//! length, see the guide for the error bound); min and max of `f32` are NaN
//! from the first NaN on. Exclusive scans start from a value you give
//! (element 0 of the output is that value).

use crate::context::Context;
use crate::context::scratch::{PARTIALS_OFFSET, RESULT_OFFSET, StateUses};
use crate::error::{Error, Result};
use crate::launch::{LaunchConfig, blocks_for};
use crate::matrix::{Matrix, MatrixMut};
use crate::memory::{Call, DeviceRead, DeviceWrite, Pod};
use crate::overlap::{Span, refuse_overlap};
use crate::pending::Pending;
use std::fmt::Debug;
pub use warpspeed_gpu::Op;
use warpspeed_gpu::scan::{
    self as consts, CompactArgs, Passes, STAGED_SHARED, STATUS_START, SectionArgs, TILE_BLOCK,
    TileArgs, compact_flagged, compact_if, scan_add_back, scan_brent_kung, scan_chained_sum,
    scan_coarsened, scan_kogge_stone, scan_kogge_stone_double, scan_lookback_max,
    scan_lookback_min, scan_lookback_sum, scan_tile_given_sum, scan_tile_reduce_sum, staged_shared,
    status_words, tile_elements,
};
pub use warpspeed_gpu::scan::{Compare, ScanVariant};
use warpspeed_gpu::{DevPtr, DevPtrMut, Entry};

/// An element type the scan kernels are compiled for: `f32`, `i32`, `u32`,
/// `u64`. Sealed: the PTX holds exactly these instantiations.
pub trait Scannable: consts::Element + Pod + Debug + sealed::Sealed {}

impl Scannable for f32 {}
impl Scannable for i32 {}
impl Scannable for u32 {}
impl Scannable for u64 {}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for i32 {}
    impl Sealed for u32 {}
    impl Sealed for u64 {}
}

/// Which scan: element `i` of an inclusive scan combines elements `0..=i`;
/// of an exclusive one, the start value and elements `0..i` (so element 0
/// is the start value).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scan<T> {
    /// `out[i] = x[0] ⊕ … ⊕ x[i]`.
    Inclusive,
    /// `out[i] = start ⊕ x[0] ⊕ … ⊕ x[i - 1]`, `out[0] = start`.
    Exclusive(T),
}

impl<T: Scannable> Scan<T> {
    /// The value the scan starts from: the start value of an exclusive
    /// scan, `op`'s identity for an inclusive one.
    fn start(self, op: Op) -> T {
        match self {
            Scan::Inclusive => T::identity(op),
            Scan::Exclusive(start) => start,
        }
    }

    fn exclusive(self) -> u32 {
        matches!(self, Scan::Exclusive(_)) as u32
    }
}

/// Where a pass reads or writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    Input,
    Output,
    /// Scratch memory, at this element offset.
    Scratch(usize),
    /// No memory (a tile pass of one tile: its prefix is the start value).
    Nothing,
}

/// One launch of a multi-pass scan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Launch {
    /// Steps 1-4: scan `len` elements of `src` section by section into
    /// `dst` (may be `src`), each section's total into `sums`.
    Sections {
        src: Place,
        dst: Place,
        sums: Place,
        len: usize,
    },
    /// Steps 1-4: `dst[i] ⊕= prefixes[i / section - 1]`.
    AddBack {
        dst: Place,
        prefixes: Place,
        len: usize,
    },
    /// Step 5: the total of each tile of `src` into `sums`.
    TileReduce { src: Place, sums: Place, len: usize },
    /// Step 5: each tile of `src` scanned into `dst` from its prefix in
    /// `prefixes` (`Nothing`: one tile, from the start value), exclusive
    /// or as the user asked (`last`).
    TileGiven {
        src: Place,
        dst: Place,
        prefixes: Place,
        len: usize,
        last: bool,
    },
    /// Steps 6-7: everything, one launch over `rows` rows.
    SinglePass { rows: usize },
}

/// The launches of one scan and the scratch elements they use.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Plan {
    launches: Vec<Launch>,
    scratch: usize,
}

/// Rows of at least this many bytes take step 7's wide tiles
/// (`WIDE_TILE_VECTORS` vectors a thread, one bulk copy a tile) where
/// the library runs its sm_90a code (the H100 and H200): 2^24
/// four-byte elements, 2 731 wide tiles, about 2.6 waves of them on an
/// H200. Measured at 2^24 and 2^28 (docs/notes/scan.md); shorter rows keep
/// the smaller tiles, which fill the SMs sooner.
const WIDE_FROM_BYTES: usize = 1 << 26;

/// Vectors a thread of `variant`'s tiles for rows of `width` elements of
/// `bytes` bytes, where the kernels copy tiles in bulk (`bulk`) or not.
fn tile_vectors(variant: ScanVariant, width: usize, bytes: usize, bulk: bool) -> usize {
    let long = width.saturating_mul(bytes) >= WIDE_FROM_BYTES;
    if variant == ScanVariant::DecoupledLookback && bulk && long {
        consts::WIDE_TILE_VECTORS
    } else {
        consts::TILE_VECTORS
    }
}

/// The launches that scan `n` elements (one row) with `variant`, for
/// elements of `bytes` bytes.
fn plan(variant: ScanVariant, n: usize, bytes: usize) -> Plan {
    let per_block = variant.elements_per_block(bytes);
    let mut launches = Vec::new();
    let mut scratch = 0;
    match variant.shape().passes {
        Passes::SinglePass => launches.push(Launch::SinglePass { rows: 1 }),
        Passes::Hierarchical => {
            // Down: scan the sections of each level, their totals make the
            // next level, until one section holds a level.
            let mut levels = vec![(Place::Output, n)];
            let (mut src, mut len) = (Place::Input, n);
            loop {
                let dst = levels.last().unwrap().0;
                let sections = len.div_ceil(per_block);
                if sections <= 1 {
                    launches.push(Launch::Sections {
                        src,
                        dst,
                        sums: Place::Nothing,
                        len,
                    });
                    break;
                }
                let sums = Place::Scratch(scratch);
                scratch += sections;
                launches.push(Launch::Sections {
                    src,
                    dst,
                    sums,
                    len,
                });
                levels.push((sums, sections));
                (src, len) = (sums, sections);
            }
            // Up: each level's scanned totals added back to the level below.
            for pair in levels.windows(2).rev() {
                let ((dst, len), (prefixes, _)) = (pair[0], pair[1]);
                launches.push(Launch::AddBack { dst, prefixes, len });
            }
        }
        Passes::ReduceThenScan => {
            // Reduce each level's tiles into the next until one tile holds a
            // level; then scan the levels from the top down, each from the
            // exclusive scan of the level above.
            let mut levels = vec![(Place::Input, Place::Output, n)];
            loop {
                let (src, _, len) = *levels.last().unwrap();
                let tiles = len.div_ceil(per_block);
                if tiles <= 1 {
                    break;
                }
                let sums = Place::Scratch(scratch);
                let scanned = Place::Scratch(scratch + tiles);
                scratch += 2 * tiles;
                launches.push(Launch::TileReduce { src, sums, len });
                levels.push((sums, scanned, tiles));
            }
            let mut prefixes = Place::Nothing;
            for (i, &(src, dst, len)) in levels.iter().enumerate().rev() {
                launches.push(Launch::TileGiven {
                    src,
                    dst,
                    prefixes,
                    len,
                    last: i == 0,
                });
                prefixes = dst;
            }
        }
    }
    Plan { launches, scratch }
}

/// How many blocks cover `len` elements at `per_block` a block, refused
/// past the device's grid.
fn grid(len: usize, per_block: usize, max_grid: u32, what: &str) -> Result<u32> {
    blocks_for(len, per_block)
        .filter(|&g| g <= max_grid)
        .map(|g| g.max(1))
        .ok_or_else(|| {
            Error::InvalidArgument(format!(
                "{what} of {len} elements needs {} blocks, over the device's {max_grid}",
                len.div_ceil(per_block)
            ))
        })
}

/// The launches reach the device through these raw addresses.
#[derive(Clone, Copy)]
struct Addresses {
    input: u64,
    output: u64,
    scratch: u64,
}

impl Addresses {
    fn of<T>(self, place: Place) -> u64 {
        match place {
            Place::Input => self.input,
            Place::Output => self.output,
            Place::Scratch(offset) => self.scratch + (offset * size_of::<T>()) as u64,
            Place::Nothing => 0,
        }
    }
}

/// Launches after which the single-pass state is zeroed: its flags carry
/// 30 bits of launch epoch, so a flag left by a launch 2^30 launches
/// earlier could otherwise read as current.
const STATE_LAUNCHES: u32 = 1 << 29;

impl Context {
    /// Enqueues the inclusive scan of `x` with `op` into `out`:
    /// `out[i] = x[0] ⊕ … ⊕ x[i]`. Returns at once; see [`Pending`].
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when `out` is not as long as `x`;
    /// [`Error::InvalidArgument`] when they overlap, or when the input
    /// needs more blocks than the device's grid holds;
    /// [`Error::Misaligned`] for a view not aligned to its elements (only
    /// possible through unsafe code); launch and driver failures.
    pub fn inclusive_scan_into<'a, T: Scannable>(
        &'a self,
        op: Op,
        x: &impl DeviceRead<Elem = T>,
        out: &mut impl DeviceWrite<Elem = T>,
    ) -> Result<Pending<'a>> {
        self.scan_into(ScanVariant::DEFAULT, op, Scan::Inclusive, x, out)
    }

    /// Enqueues the exclusive scan of `x` with `op` into `out`, starting
    /// from `start`: `out[0] = start`, `out[i] = start ⊕ x[0] ⊕ … ⊕
    /// x[i - 1]`. Returns at once; see [`Pending`].
    ///
    /// # Errors
    /// As [`Context::inclusive_scan_into`].
    pub fn exclusive_scan_into<'a, T: Scannable>(
        &'a self,
        op: Op,
        start: T,
        x: &impl DeviceRead<Elem = T>,
        out: &mut impl DeviceWrite<Elem = T>,
    ) -> Result<Pending<'a>> {
        self.scan_into(ScanVariant::DEFAULT, op, Scan::Exclusive(start), x, out)
    }

    /// Enqueues a scan of `x` into `out` with one step of the ladder.
    ///
    /// # Errors
    /// [`Error::Unsupported`] for a step of the lessons (1-6) asked for
    /// anything but an inclusive sum; as [`Context::inclusive_scan_into`].
    pub fn scan_into<'a, T: Scannable>(
        &'a self,
        variant: ScanVariant,
        op: Op,
        scan: Scan<T>,
        x: &impl DeviceRead<Elem = T>,
        out: &mut impl DeviceWrite<Elem = T>,
    ) -> Result<Pending<'a>> {
        self.ensure_alive()?;
        let (x, out) = (x.view(), out.view_mut());
        supports(variant, op, scan)?;
        if out.len() != x.len() {
            return Err(Error::LengthMismatch {
                what: "a scan's output",
                expected: x.len(),
                given: out.len(),
            });
        }
        let bytes = x.len() * size_of::<T>();
        refuse_overlap(
            "scan",
            ("output", Span::new(out.device_address(), bytes)),
            ("input", Span::new(x.device_address(), bytes)),
        )?;
        if x.is_empty() {
            return Ok(Pending::new(self));
        }
        let mut call = Call::new(self);
        let input = call.read(&x)?;
        let output = call.write(&out)?;
        let rows = Rows {
            width: x.len(),
            count: 1,
            x: (input, x.len()),
            out: (output, x.len()),
        };
        // SAFETY: `input` is `x`'s `x.len()` elements and `output` `out`'s
        // as many, not overlapping (checked above); `call` orders the
        // launches after the other queues' uses of both, and the buffers
        // wait for this stream before they are freed.
        unsafe { self.enqueue_scan(variant, op, scan, rows)? };
        Ok(Pending::new(self))
    }

    /// Enqueues the scan of every row of `x` into the same row of `out`,
    /// each row on its own (the row-wise cumulative sum of sampling):
    /// inclusive or exclusive from a start value, sum, min or max, with
    /// the fastest step. Returns at once; see [`Pending`].
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] when `out` is not `x`'s shape;
    /// [`Error::InvalidArgument`] when they overlap or the matrix needs
    /// more blocks than the device's grid holds; [`Error::Misaligned`]
    /// as for [`Context::inclusive_scan_into`].
    pub fn scan_rows_into<'a, T: Scannable>(
        &'a self,
        op: Op,
        scan: Scan<T>,
        x: &Matrix<'_, T>,
        out: &mut MatrixMut<'_, T>,
    ) -> Result<Pending<'a>> {
        self.ensure_alive()?;
        if (out.width(), out.height()) != (x.width(), x.height()) {
            return Err(Error::ShapeMismatch {
                what: "a row scan's output",
                expected: (x.width(), x.height()),
                given: (out.width(), out.height()),
            });
        }
        refuse_overlap("row scan", ("output", out.span()), ("input", x.span()))?;
        if x.is_empty() {
            return Ok(Pending::new(self));
        }
        let mut call = Call::new(self);
        let input = call.read(x.data())?;
        let output = call.write(out.data())?;
        let rows = Rows {
            width: x.width(),
            count: x.height(),
            x: (input, x.pitch()),
            out: (output, out.pitch()),
        };
        // SAFETY: both matrices lie inside their slices for their shapes
        // and pitches (checked when they were made) and do not overlap
        // (checked above); `call` orders the launch after the other
        // queues' uses of both, and the buffers wait for this stream
        // before they are freed.
        unsafe { self.enqueue_scan(ScanVariant::DEFAULT, op, scan, rows)? };
        Ok(Pending::new(self))
    }

    /// Enqueues the scan of `rows` with `variant`.
    ///
    /// # Safety
    /// `rows.x` valid for reading and `rows.out` for writing every row of
    /// `rows.width` elements (row `r` at `address + r * pitch` elements),
    /// not overlapping, both alive and ordered after their other uses
    /// until the stream has run the scan; more than one row only for the
    /// single-pass steps; `width > 0`, `count > 0`.
    pub(crate) unsafe fn enqueue_scan<T: Scannable>(
        &self,
        variant: ScanVariant,
        op: Op,
        scan: Scan<T>,
        rows: Rows,
    ) -> Result<()> {
        let max_grid = self.info().max_grid.0;
        let bytes = size_of::<T>();
        for (address, what) in [
            (rows.x.0, "a scan's input"),
            (rows.out.0, "a scan's output"),
        ] {
            if !address.is_multiple_of(bytes as u64) {
                return Err(Error::Misaligned {
                    what,
                    alignment: bytes,
                });
            }
        }
        let plan = plan(variant, rows.width, bytes);
        // The bulk copy's source is read-only during the launch: scans in
        // place (the sort's counts) keep the smaller tiles.
        let bulk = self.info().ptx_target == "sm_90a" && rows.x.0 != rows.out.0;
        let vectors = tile_vectors(variant, rows.width, bytes, bulk);
        let tile = tile_elements(bytes, vectors);
        let shared = variant.shape().shared_bytes;
        let per_block = variant.elements_per_block(bytes);
        // Grids first, so that nothing is launched for a scan refused.
        let tiles = match plan.launches.first() {
            Some(Launch::SinglePass { .. }) => {
                let tiles = rows.width.div_ceil(tile).checked_mul(rows.count);
                let tiles = tiles
                    .filter(|&t| t <= u32::MAX as usize / 2)
                    .ok_or_else(|| {
                        Error::InvalidArgument(format!(
                            "a scan of {} rows of {} elements has too many tiles",
                            rows.count, rows.width
                        ))
                    })?;
                Some(tiles)
            }
            _ => {
                grid(rows.width, per_block.min(tile), max_grid, "a scan")?;
                None
            }
        };
        let base = self.scratch(PARTIALS_OFFSET + plan.scratch * bytes)?;
        let at = Addresses {
            input: rows.x.0,
            output: rows.out.0,
            scratch: base + PARTIALS_OFFSET as u64,
        };
        let start = scan.start(op).to_bits64();
        for launch in &plan.launches {
            match *launch {
                Launch::SinglePass { .. } => {
                    let tiles = tiles.unwrap_or(1);
                    let wide = vectors == consts::WIDE_TILE_VECTORS;
                    let entry = single_pass_entry::<T>(variant, op, wide)?;
                    let grid = grid(tiles, 1, max_grid, "a scan")?;
                    let state = self.single_pass_state(tiles, bytes)?;
                    let args = TileArgs::<T> {
                        x: DevPtr::new(rows.x.0),
                        out: DevPtrMut::new(rows.out.0),
                        width: rows.width,
                        x_pitch: rows.x.1,
                        out_pitch: rows.out.1,
                        init: start,
                        exclusive: scan.exclusive(),
                        state: DevPtrMut::new(state),
                        sums: DevPtrMut::new(0),
                    };
                    // SAFETY: the rows as the caller promised; one block
                    // per tile of every row, tiles taken by ticket; `state` is this queue's single-pass state
                    // with room for every tile, written by nothing but
                    // these kernels, its count 0 between launches.
                    unsafe {
                        self.launch(
                            entry,
                            LaunchConfig::linear(grid, TILE_BLOCK, staged_shared(vectors)),
                            &args,
                        )?
                    };
                }
                Launch::Sections {
                    src,
                    dst,
                    sums,
                    len,
                } => {
                    let entry = section_entry::<T>(variant)?;
                    let args = SectionArgs::<T> {
                        x: DevPtr::new(at.of::<T>(src)),
                        out: DevPtrMut::new(at.of::<T>(dst)),
                        sums: DevPtrMut::new(at.of::<T>(sums)),
                        n: len,
                    };
                    let blocks = grid(len, per_block, max_grid, "a scan")?;
                    let cfg = LaunchConfig::linear(blocks, variant.shape().block, shared);
                    // A level of one section still writes its total: to the
                    // result slot (16 bytes), which nothing reads.
                    let args = if sums == Place::Nothing {
                        SectionArgs::<T> {
                            sums: DevPtrMut::new(base + RESULT_OFFSET),
                            ..args
                        }
                    } else {
                        args
                    };
                    // SAFETY: `src` holds `len` elements (the input, or the
                    // totals a previous launch wrote), `dst` as many (the
                    // output, or the same totals: sections are scanned in
                    // place, which the body allows), `sums` one per section
                    // (the plan sized the scratch) or the result slot.
                    unsafe { self.launch(entry, cfg, &args)? };
                }
                Launch::AddBack { dst, prefixes, len } => {
                    let args = scan_add_back::Args::<T> {
                        out: DevPtrMut::new(at.of::<T>(dst)),
                        prefixes: DevPtr::new(at.of::<T>(prefixes)),
                        n: len,
                        per_block: per_block as u32,
                    };
                    let blocks = grid(len, 256, max_grid, "a scan")?;
                    // SAFETY: `dst` holds `len` scanned elements and
                    // `prefixes` the scanned totals of their sections, in
                    // scratch apart from `dst`.
                    unsafe {
                        self.launch(
                            scan_add_back::entry::<T>(),
                            LaunchConfig::linear(blocks, 256, 0),
                            &args,
                        )?
                    };
                }
                Launch::TileReduce { src, sums, len } => {
                    // SAFETY: `src` holds `len` elements, `sums` one per
                    // tile; the reduce pass writes nothing else.
                    unsafe {
                        self.launch_tiles(
                            scan_tile_reduce_sum::entry::<T>(),
                            TileArgs::<T> {
                                x: DevPtr::new(at.of::<T>(src)),
                                out: DevPtrMut::new(0),
                                width: len,
                                x_pitch: len,
                                out_pitch: len,
                                init: start,
                                exclusive: 1,
                                state: DevPtrMut::new(0),
                                sums: DevPtrMut::new(at.of::<T>(sums)),
                            },
                        )?
                    };
                }
                Launch::TileGiven {
                    src,
                    dst,
                    prefixes,
                    len,
                    last,
                } => {
                    // SAFETY: `src` and `dst` hold `len` elements each,
                    // apart (the plan gives each level its own scanned
                    // array); `prefixes` one per tile, or null for one
                    // tile.
                    unsafe {
                        self.launch_tiles(
                            scan_tile_given_sum::entry::<T>(),
                            TileArgs::<T> {
                                x: DevPtr::new(at.of::<T>(src)),
                                out: DevPtrMut::new(at.of::<T>(dst)),
                                width: len,
                                x_pitch: len,
                                out_pitch: len,
                                init: start,
                                exclusive: if last { scan.exclusive() } else { 1 },
                                state: DevPtrMut::new(0),
                                sums: DevPtrMut::new(at.of::<T>(prefixes)),
                            },
                        )?
                    };
                }
            }
        }
        Ok(())
    }

    /// Launches a pass of step 5 over `args.width` elements, one block a
    /// tile.
    ///
    /// # Safety
    /// The launch contract of `single_pass` for the pass's mode.
    unsafe fn launch_tiles<T: Scannable>(
        &self,
        entry: Entry<TileArgs<T>>,
        args: TileArgs<T>,
    ) -> Result<()> {
        let blocks = grid(
            args.width,
            tile_elements(size_of::<T>(), consts::TILE_VECTORS),
            self.info().max_grid.0,
            "a scan",
        )?;
        let shared = ScanVariant::ReduceThenScan.shape().shared_bytes;
        // SAFETY: the caller's contract.
        unsafe {
            self.launch(
                entry,
                LaunchConfig::linear(blocks, TILE_BLOCK, shared),
                &args,
            )
        }
    }

    /// The single-pass state for `tiles` tiles of `bytes`-byte statuses.
    /// Every status word carries its flag, but a word of the other layout
    /// (one word a tile, or two) sits at another tile's place, and flags
    /// carry 30 bits of epoch: the state is zeroed when the layout
    /// changes (so no reading ever meets the other layout), and every
    /// `STATE_LAUNCHES`
    /// launches outside a capture (a capture's calls each get a fresh
    /// state, whose replays rewrite every status they read).
    fn single_pass_state(&self, tiles: usize, bytes: usize) -> Result<u64> {
        let words = STATUS_START + status_words(bytes) * tiles;
        let (address, len) = self.scan_state(words)?;
        let layout = status_words(bytes) as u32;
        let uses = self.scan_uses.get();
        let launches = uses.launches + 1;
        let stale = uses.layout.is_some_and(|l| l != layout);
        let launches = if stale || (!self.capturing() && launches >= STATE_LAUNCHES) {
            // SAFETY: the state holds `len` words of 8 bytes.
            unsafe { self.zero_words(address, 2 * len)? };
            1
        } else {
            launches
        };
        self.scan_uses.set(StateUses {
            launches,
            layout: Some(layout),
        });
        Ok(address)
    }

    /// Keeps the elements of `x` whose flag is not 0, in order, in `out`
    /// and writes how many there are to `count[0]`. Elements past
    /// `out.len()` are counted but not written: an `out` as long as `x`
    /// always holds them all. Returns at once; see [`Pending`].
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when `flags` is not as long as `x` or
    /// `count` is empty; [`Error::InvalidArgument`] when an output
    /// overlaps an input or the other output, or the input needs more
    /// blocks than the device's grid holds; [`Error::Misaligned`] for a
    /// view not aligned to its elements (only possible through unsafe
    /// code).
    pub fn compact_flagged_into<'a, T: Scannable>(
        &'a self,
        x: &impl DeviceRead<Elem = T>,
        flags: &impl DeviceRead<Elem = u8>,
        out: &mut impl DeviceWrite<Elem = T>,
        count: &mut impl DeviceWrite<Elem = u64>,
    ) -> Result<Pending<'a>> {
        let flags = flags.view();
        if flags.len() != x.len() {
            return Err(Error::LengthMismatch {
                what: "a compaction's flags",
                expected: x.len(),
                given: flags.len(),
            });
        }
        self.compact_into(x, Keep::Flags(&flags), out, count)
    }

    /// Keeps the elements `e` of `x` for which `e <compare> value` holds,
    /// in order, in `out` and writes how many there are to `count[0]`;
    /// as [`Context::compact_flagged_into`] otherwise.
    ///
    /// # Errors
    /// As [`Context::compact_flagged_into`].
    pub fn compact_if_into<'a, T: Scannable>(
        &'a self,
        x: &impl DeviceRead<Elem = T>,
        compare: Compare,
        value: T,
        out: &mut impl DeviceWrite<Elem = T>,
        count: &mut impl DeviceWrite<Elem = u64>,
    ) -> Result<Pending<'a>> {
        self.compact_into(x, Keep::If(compare, value), out, count)
    }

    /// [`Context::compact_flagged_into`] that waits and returns the count.
    ///
    /// # Errors
    /// As [`Context::compact_flagged_into`]; [`Error::InCapture`] inside
    /// [`Context::capture`] (the `_into` form writes the count to a
    /// buffer instead).
    pub fn compact_flagged<T: Scannable>(
        &self,
        x: &impl DeviceRead<Elem = T>,
        flags: &impl DeviceRead<Elem = u8>,
        out: &mut impl DeviceWrite<Elem = T>,
    ) -> Result<usize> {
        self.refuse_in_capture("a compaction returning its count to the host")?;
        let flags = flags.view();
        if flags.len() != x.len() {
            return Err(Error::LengthMismatch {
                what: "a compaction's flags",
                expected: x.len(),
                given: flags.len(),
            });
        }
        self.compact_waiting(x, Keep::Flags(&flags), out)
    }

    /// [`Context::compact_if_into`] that waits and returns the count.
    ///
    /// # Errors
    /// As [`Context::compact_flagged_into`]; [`Error::InCapture`] inside
    /// [`Context::capture`] (the `_into` form writes the count to a
    /// buffer instead).
    pub fn compact_if<T: Scannable>(
        &self,
        x: &impl DeviceRead<Elem = T>,
        compare: Compare,
        value: T,
        out: &mut impl DeviceWrite<Elem = T>,
    ) -> Result<usize> {
        self.refuse_in_capture("a compaction returning its count to the host")?;
        self.compact_waiting(x, Keep::If(compare, value), out)
    }

    /// A compaction whose count goes to this queue's result slot, waited
    /// for and read back.
    fn compact_waiting<T: Scannable>(
        &self,
        x: &impl DeviceRead<Elem = T>,
        keep: Keep<'_, '_, T>,
        out: &mut impl DeviceWrite<Elem = T>,
    ) -> Result<usize> {
        let (x, out) = (x.view(), out.view_mut());
        let mut call = Call::new(self);
        let slot = self.scratch(PARTIALS_OFFSET)? + RESULT_OFFSET;
        // SAFETY: the result slot holds 16 bytes of this queue's scratch,
        // apart from every view; it is read back after the stream has run
        // the compaction.
        let count = unsafe {
            self.enqueue_compact(&mut call, &x, keep, &out, Count::Slot(slot))?;
            self.read_back::<u64>(slot)?
        };
        call.finished();
        // The count fits: it is at most `x.len()`.
        Ok(count as usize)
    }

    fn compact_into<'a, T: Scannable>(
        &'a self,
        x: &impl DeviceRead<Elem = T>,
        keep: Keep<'_, '_, T>,
        out: &mut impl DeviceWrite<Elem = T>,
        count: &mut impl DeviceWrite<Elem = u64>,
    ) -> Result<Pending<'a>> {
        self.ensure_alive()?;
        let (x, out, count) = (x.view(), out.view_mut(), count.view_mut());
        if count.is_empty() {
            return Err(Error::LengthMismatch {
                what: "a compaction's count",
                expected: 1,
                given: 0,
            });
        }
        let mut call = Call::new(self);
        // SAFETY: every address comes from a view `call` orders.
        unsafe { self.enqueue_compact(&mut call, &x, keep, &out, Count::View(&count))? };
        Ok(Pending::new(self))
    }

    /// Checks a compaction and enqueues it, its buffers ordered by `call`.
    ///
    /// # Safety
    /// A `Count::Slot` address is valid for one `u64` write, apart from the
    /// views, until the stream has run the compaction.
    unsafe fn enqueue_compact<'c, T: Scannable>(
        &self,
        call: &mut Call<'c>,
        x: &crate::memory::View<'c, T>,
        keep: Keep<'_, 'c, T>,
        out: &crate::memory::ViewMut<'c, T>,
        count: Count<'_, 'c>,
    ) -> Result<()> {
        self.ensure_alive()?;
        let bytes = size_of::<T>();
        for (address, what) in [
            (x.device_address(), "a compaction's input"),
            (out.device_address(), "a compaction's output"),
        ] {
            if !address.is_multiple_of(bytes as u64) {
                return Err(Error::Misaligned {
                    what,
                    alignment: bytes,
                });
            }
        }
        let out_span = Span::new(out.device_address(), out.len() * bytes);
        let count_span = Span::new(
            match count {
                Count::View(view) => view.device_address(),
                Count::Slot(slot) => slot,
            },
            8,
        );
        let x_span = Span::new(x.device_address(), x.len() * bytes);
        refuse_overlap("compaction", ("output", out_span), ("input", x_span))?;
        refuse_overlap("compaction", ("count", count_span), ("input", x_span))?;
        refuse_overlap("compaction", ("count", count_span), ("output", out_span))?;
        if let Keep::Flags(flags) = keep {
            let flags_span = Span::new(flags.device_address(), flags.len());
            refuse_overlap("compaction", ("output", out_span), ("flags", flags_span))?;
            refuse_overlap("compaction", ("count", count_span), ("flags", flags_span))?;
        }
        let tile = tile_elements(bytes, consts::TILE_VECTORS);
        let tiles = x.len().div_ceil(tile);
        let wide = x.len() > u32::MAX as usize;
        let (flagged, compare, value) = match keep {
            Keep::Flags(_) => (true, Compare::NotEqual, 0),
            Keep::If(compare, value) => (false, compare, value.to_bits64()),
        };
        let entry = if flagged {
            compact_flagged::entry::<T>(wide as u32)
        } else {
            compact_if::entry::<T>(wide as u32)
        }
        .ok_or_else(|| Error::Unsupported {
            variant: "compaction",
            reason: "has no entry for these counts".into(),
        })?;
        let input = call.read(x)?;
        let flags_address = match keep {
            Keep::Flags(flags) => call.read(flags)?,
            Keep::If(..) => 0,
        };
        let output = call.write(out)?;
        let count_address = match count {
            Count::View(view) => call.write(view)?,
            Count::Slot(slot) => slot,
        };
        if x.is_empty() {
            // SAFETY: `count` holds at least one u64 (checked, or the
            // caller's slot), ordered by `call`.
            unsafe { self.zero_words(count_address, 2)? };
            return Ok(());
        }
        let shared = STAGED_SHARED;
        let blocks = grid(x.len(), tile, self.info().max_grid.0, "a compaction")?;
        let state = self.single_pass_state(tiles, if wide { 8 } else { 4 })?;
        let args = CompactArgs::<T> {
            x: DevPtr::new(input),
            flags: DevPtr::new(flags_address),
            n: x.len(),
            keep: compare as u32,
            value,
            out: DevPtrMut::new(output),
            out_len: out.len(),
            count: DevPtrMut::new(count_address),
            state: DevPtrMut::new(state),
        };
        // SAFETY: `x` (and `flags`, as long, checked) valid for `n` reads;
        // `out` for `out_len` writes and `count` for one, none overlapping
        // an input or each other (checked); one block per tile; `state` as
        // the single-pass scans need it, with statuses as wide as the
        // entry's counts; `call` orders the launch after the other queues'
        // uses of every buffer.
        unsafe {
            self.launch(
                entry,
                LaunchConfig::linear(blocks, TILE_BLOCK, shared),
                &args,
            )?
        };
        Ok(())
    }
}

/// Where a compaction's count goes.
#[derive(Clone, Copy)]
enum Count<'v, 'c> {
    View(&'v crate::memory::ViewMut<'c, u64>),
    Slot(u64),
}

/// Which elements a compaction keeps.
#[derive(Clone, Copy)]
enum Keep<'k, 'c, T: Pod> {
    Flags(&'k crate::memory::View<'c, u8>),
    If(Compare, T),
}

/// Rows to scan: `count` rows of `width` elements, each of `x` and `out`
/// as (address, pitch in elements).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rows {
    pub(crate) width: usize,
    pub(crate) count: usize,
    pub(crate) x: (u64, usize),
    pub(crate) out: (u64, usize),
}

/// Whether `variant` computes `op` and `scan`.
fn supports<T>(variant: ScanVariant, op: Op, scan: Scan<T>) -> Result<()> {
    if variant.shape().general || (op == Op::Sum && matches!(scan, Scan::Inclusive)) {
        return Ok(());
    }
    Err(Error::Unsupported {
        variant: variant.name(),
        reason: "computes inclusive sums only (the lesson's scan); DecoupledLookback computes \
                 every scan"
            .into(),
    })
}

fn section_entry<T: Scannable>(variant: ScanVariant) -> Result<Entry<SectionArgs<T>>> {
    Ok(match variant {
        ScanVariant::KoggeStone => scan_kogge_stone::entry::<T>(),
        ScanVariant::KoggeStoneDoubleBuffer => scan_kogge_stone_double::entry::<T>(),
        ScanVariant::BrentKung => scan_brent_kung::entry::<T>(),
        ScanVariant::Coarsened => scan_coarsened::entry::<T>(),
        _ => {
            return Err(Error::Unsupported {
                variant: variant.name(),
                reason: "scans tiles, not sections".into(),
            });
        }
    })
}

fn single_pass_entry<T: Scannable>(
    variant: ScanVariant,
    op: Op,
    wide: bool,
) -> Result<Entry<TileArgs<T>>> {
    let wide = wide as u32;
    let entry = match (variant, op) {
        (ScanVariant::Chained, Op::Sum) => Some(scan_chained_sum::entry::<T>()),
        (ScanVariant::DecoupledLookback, Op::Sum) => scan_lookback_sum::entry::<T>(wide),
        (ScanVariant::DecoupledLookback, Op::Min) => scan_lookback_min::entry::<T>(wide),
        (ScanVariant::DecoupledLookback, Op::Max) => scan_lookback_max::entry::<T>(wide),
        _ => None,
    };
    entry.ok_or_else(|| Error::Unsupported {
        variant: variant.name(),
        reason: format!("has no single pass for {}", op.name()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every launch reads what exists (the input, or what an earlier launch
    /// wrote), writes inside the scratch the plan counted, and the output is
    /// written.
    fn assert_consistent(variant: ScanVariant, n: usize, bytes: usize) {
        let p = plan(variant, n, bytes);
        let mut written = vec![Place::Input];
        let check = |place: Place, len: usize, written: &Vec<Place>| {
            if let Place::Scratch(offset) = place {
                assert!(
                    offset + len <= p.scratch,
                    "{variant:?} n={n}: scratch overflow"
                );
            }
            assert!(
                place == Place::Nothing || written.contains(&place),
                "{variant:?} n={n}: {place:?} read before written"
            );
        };
        for launch in &p.launches {
            match *launch {
                Launch::SinglePass { .. } => written.push(Place::Output),
                Launch::Sections {
                    src,
                    dst,
                    sums,
                    len,
                } => {
                    check(src, len, &written);
                    written.push(dst);
                    if sums != Place::Nothing {
                        written.push(sums);
                        check(
                            sums,
                            len.div_ceil(variant.elements_per_block(bytes)),
                            &written,
                        );
                    }
                }
                Launch::AddBack { dst, prefixes, len } => {
                    check(dst, len, &written);
                    check(
                        prefixes,
                        len.div_ceil(variant.elements_per_block(bytes)),
                        &written,
                    );
                }
                Launch::TileReduce { src, sums, len } => {
                    check(src, len, &written);
                    written.push(sums);
                    check(
                        sums,
                        len.div_ceil(tile_elements(bytes, consts::TILE_VECTORS)),
                        &written,
                    );
                }
                Launch::TileGiven {
                    src,
                    dst,
                    prefixes,
                    len,
                    ..
                } => {
                    check(src, len, &written);
                    check(
                        prefixes,
                        len.div_ceil(tile_elements(bytes, consts::TILE_VECTORS)),
                        &written,
                    );
                    assert_ne!(src, dst, "{variant:?}: tile passes never scan in place");
                    written.push(dst);
                    if let Place::Scratch(_) = dst {
                        check(dst, len, &written);
                    }
                }
            }
        }
        assert!(
            written.contains(&Place::Output),
            "{variant:?} n={n}: no output"
        );
    }

    #[test]
    fn wide_tiles_for_long_rows_of_the_fastest_step_with_bulk_copies() {
        use ScanVariant::{Chained, DecoupledLookback};
        let (narrow, wide) = (consts::TILE_VECTORS, consts::WIDE_TILE_VECTORS);
        assert_eq!(tile_vectors(DecoupledLookback, 1 << 24, 4, true), wide);
        assert_eq!(
            tile_vectors(DecoupledLookback, (1 << 24) - 1, 4, true),
            narrow
        );
        assert_eq!(tile_vectors(DecoupledLookback, 1 << 23, 8, true), wide);
        assert_eq!(tile_vectors(DecoupledLookback, usize::MAX, 8, true), wide);
        assert_eq!(tile_vectors(DecoupledLookback, 1 << 28, 4, false), narrow);
        assert_eq!(tile_vectors(Chained, 1 << 28, 4, true), narrow);
        // A wide tile is the same 16-byte vectors, more of them.
        assert_eq!(tile_elements(4, wide), 6144);
        assert_eq!(tile_elements(8, wide), 3072);
    }

    #[test]
    fn plans_are_consistent_for_every_size() {
        let sizes = [
            1,
            2,
            31,
            32,
            33,
            511,
            512,
            513,
            2047,
            2048,
            2049,
            4095,
            4096,
            4097,
            1 << 20,
            (1 << 24) + 7,
            (1 << 31) + 3,
            (1 << 32) + 3,
        ];
        for &variant in ScanVariant::ALL {
            for n in sizes {
                for bytes in [4, 8] {
                    assert_consistent(variant, n, bytes);
                }
            }
        }
    }

    #[test]
    fn launch_counts_match_the_lessons() {
        let count = |v, n| plan(v, n, 4).launches.len();
        // 2^24 elements in sections of 512: 2^15 totals, 64, 1; three
        // section launches, two add-backs.
        assert_eq!(count(ScanVariant::KoggeStone, 1 << 24), 5);
        assert_eq!(count(ScanVariant::Coarsened, 1 << 24), 5);
        // Tiles of 4096: 4096 totals, 1: two reductions, three scans.
        assert_eq!(count(ScanVariant::ReduceThenScan, 1 << 24), 3);
        assert_eq!(count(ScanVariant::ReduceThenScan, 4096), 1);
        assert_eq!(count(ScanVariant::DecoupledLookback, 1 << 30), 1);
    }

    #[test]
    fn the_lessons_refuse_what_they_do_not_compute() {
        assert!(supports::<u32>(ScanVariant::KoggeStone, Op::Sum, Scan::Inclusive).is_ok());
        assert!(supports(ScanVariant::KoggeStone, Op::Sum, Scan::Exclusive(0u32)).is_err());
        assert!(supports::<u32>(ScanVariant::Chained, Op::Max, Scan::Inclusive).is_err());
        assert!(
            supports(
                ScanVariant::DecoupledLookback,
                Op::Min,
                Scan::Exclusive(7u32)
            )
            .is_ok()
        );
    }
}
