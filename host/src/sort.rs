//! Radix sorts of device slices: keys, key–value pairs and `argsort`,
//! ascending or descending, stable, with the ladder of the textbook's
//! variants ([`SortVariant`]).
//!
//! The guide, [sort.md][guide], has the ladder (what each step changes and
//! why it is faster), the measured tables and the semantics.
//!
//! [guide]: https://github.com/warpspeed-rs/warpspeed/blob/main/docs/sort.md
//!
//! ```no_run
//! # fn main() -> warpspeed::Result<()> {
//! use warpspeed::sort::Sort;
//! let ctx = warpspeed::Context::new(0)?;
//! let keys = ctx.upload(&[3.5f32, -1.0, 2.0, -0.0, 0.0])?;
//! let mut sorted = ctx.alloc::<f32>(5)?;
//! ctx.sort_into(&keys, &mut sorted)?;
//! assert_eq!(ctx.download(&sorted)?, [-1.0, -0.0, 0.0, 2.0, 3.5]);
//! let mut order = ctx.alloc::<u32>(5)?;
//! ctx.argsort_into(&Sort::descending(), &keys, &mut order)?;
//! assert_eq!(ctx.download(&order)?, [0, 2, 3, 4, 1]);
//! # Ok(()) }
//! ```
//!
//! Every sort is stable: equal keys keep their order (and a descending
//! sort keeps it too: it is not the ascending sort reversed). `f32` keys
//! sort in IEEE 754's total order, `-0.0` before `+0.0`, with every NaN
//! after all the numbers, in both directions.

use crate::context::Context;
use crate::context::scratch::PARTIALS_OFFSET;
use crate::error::{Error, Result};
use crate::launch::LaunchConfig;
use crate::memory::{Call, DeviceRead, DeviceWrite, Pod, same_length};
use crate::overlap::{Span, refuse_overlap};
use crate::pending::Pending;
use crate::scan::{Rows, Scan};
use std::fmt::Debug;
use std::ops::Range;
use warpspeed_gpu::Op;
use warpspeed_gpu::scan::ScanVariant;
pub use warpspeed_gpu::sort::SortVariant;
use warpspeed_gpu::sort::{
    HISTOGRAM_BLOCK, PORTION, RADIX, SORT_BLOCK, STATUS_START, SortKey, SortShape, count_shared,
    histogram_shared, rank_shared, sort_bases, sort_count, sort_histogram, sort_onesweep,
    sort_scatter,
};
use warpspeed_gpu::{DevPtr, DevPtrMut};

/// A key type the sorts are compiled for: `u32`, `i32`, `f32`, `u64`.
/// Sealed: the PTX holds exactly these instantiations.
pub trait Sortable: SortKey + Pod + Debug + sealed::Sealed {}

impl Sortable for u32 {}
impl Sortable for i32 {}
impl Sortable for f32 {}
impl Sortable for u64 {}

mod sealed {
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for i32 {}
    impl Sealed for f32 {}
    impl Sealed for u64 {}
}

/// How to sort: the direction, and the bits of the keys to sort by.
///
/// `bits` are bit positions of the key's *ordered bits*: the key itself
/// for unsigned integers; for `i32`, the key with its sign bit flipped;
/// for `f32`, the IEEE 754 total order's bits (a negative number's bits
/// inverted, a positive one's sign bit set). Keys that differ only outside
/// the range keep their input order. The full width (the default) sorts
/// completely; `0..16` sorts `u32` keys known to be below 65 536 in two
/// passes instead of four.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sort {
    /// Largest key first.
    pub descending: bool,
    /// The bits to sort by; `None`: all of them.
    pub bits: Option<Range<u32>>,
}

impl Sort {
    /// Smallest key first, by every bit.
    pub fn ascending() -> Sort {
        Sort {
            descending: false,
            bits: None,
        }
    }

    /// Largest key first, by every bit.
    pub fn descending() -> Sort {
        Sort {
            descending: true,
            bits: None,
        }
    }

    /// The same, sorting by `bits` only (see [`Sort`]).
    pub fn bits(self, bits: Range<u32>) -> Sort {
        Sort {
            bits: Some(bits),
            ..self
        }
    }

    /// The bit range for keys of `key_bits` bits, checked.
    fn range(&self, key_bits: u32) -> Result<Range<u32>> {
        let range = self.bits.clone().unwrap_or(0..key_bits);
        if range.start >= range.end || range.end > key_bits {
            return Err(Error::InvalidArgument(format!(
                "a sort's bit range {range:?} is not a non-empty range within the key's {key_bits} \
                 bits"
            )));
        }
        Ok(range)
    }
}

impl Default for Sort {
    fn default() -> Sort {
        Sort::ascending()
    }
}

/// The values that travel with the keys.
#[derive(Clone, Copy, Debug)]
enum Values {
    /// None: keys only.
    None,
    /// From this address, `n` of them.
    Given(u64),
    /// Each key's index in the input (`argsort`).
    Index,
}

/// Every most keys one sort takes: output indices are 32-bit.
const MAX_KEYS: usize = u32::MAX as usize;

/// Where a sort keeps what it needs between launches, in bytes from the
/// start of its scratch region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Layout {
    /// A second buffer of keys (and of values) the passes alternate with
    /// the output; `argsort` keeps its keys in two.
    keys: [usize; 2],
    values: usize,
    /// Steps 1-4: the counts of every tile's digits. Step 5: the
    /// histograms, then the bases, then one pass's statuses.
    counts: usize,
    bases: usize,
    status: usize,
    /// Bytes in all.
    bytes: usize,
}

/// Passes of a step over a bit range, and the digit of each: its first
/// bit and its width.
fn passes(shape: SortShape, range: &Range<u32>) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    let mut shift = range.start;
    while shift < range.end {
        let bits = shape.bits.min(range.end - shift);
        out.push((shift, bits));
        shift += bits;
    }
    out
}

/// Rows of bases a step 5 pass keeps: its own, and the one its last tile
/// writes for a following portion (the kernels can sort an input portion
/// by portion; the library sorts one portion, see `enqueue_sort`).
const BASE_ROWS: usize = 2;

/// The scratch a sort of `n` keys of `key_bytes` needs.
fn layout(
    shape: SortShape,
    n: usize,
    key_bytes: usize,
    values: bool,
    argsort: bool,
    passes: usize,
) -> Layout {
    let align = |b: usize| b.next_multiple_of(256);
    let keys0 = 0;
    let keys1 = align(n * key_bytes);
    let values_at = keys1 + if argsort { align(n * key_bytes) } else { 0 };
    let counts = values_at + if values { align(n * 4) } else { 0 };
    let tiles = n.div_ceil(shape.tile());
    let (bases, status, end) = if shape.onesweep {
        let bases = counts + align(passes * RADIX as usize * 4);
        let status = bases + align(BASE_ROWS * passes * RADIX as usize * 4);
        let tiles = n.min(PORTION).div_ceil(shape.tile());
        (
            bases,
            status,
            status + align((STATUS_START + tiles * RADIX as usize) * 4),
        )
    } else {
        let end = counts + align(shape.digits() as usize * tiles * 4);
        (end, end, end)
    };
    Layout {
        keys: [keys0, keys1],
        values: values_at,
        counts,
        bases,
        status,
        bytes: end,
    }
}

impl Context {
    /// Enqueues the ascending sort of `keys` into `out`. Returns at once;
    /// see [`Pending`].
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when `out` is not as long as `keys`;
    /// [`Error::InvalidArgument`] when they overlap or there are more
    /// than `u32::MAX` keys; [`Error::Misaligned`] for a view not aligned
    /// to its elements (only possible through unsafe code); launch and
    /// driver failures.
    pub fn sort_into<'a, K: Sortable>(
        &'a self,
        keys: &impl DeviceRead<Elem = K>,
        out: &mut impl DeviceWrite<Elem = K>,
    ) -> Result<Pending<'a>> {
        self.sort_keys_with(SortVariant::DEFAULT, &Sort::ascending(), keys, out)
    }

    /// Enqueues the sort of `keys` into `out` as `sort` says, with one
    /// step of the ladder.
    ///
    /// # Errors
    /// As [`Context::sort_into`]; [`Error::InvalidArgument`] for a bit
    /// range outside the key or empty.
    pub fn sort_keys_with<'a, K: Sortable>(
        &'a self,
        variant: SortVariant,
        sort: &Sort,
        keys: &impl DeviceRead<Elem = K>,
        out: &mut impl DeviceWrite<Elem = K>,
    ) -> Result<Pending<'a>> {
        self.ensure_alive()?;
        let (keys, out) = (keys.view(), out.view_mut());
        let range = sort.range(K::BYTES * 8)?;
        check_lengths(keys.len(), &[("a sort's output", out.len())])?;
        let bytes = keys.len() * size_of::<K>();
        refuse_overlap(
            "sort",
            ("output", Span::new(out.device_address(), bytes)),
            ("keys", Span::new(keys.device_address(), bytes)),
        )?;
        check_aligned::<K>(&[keys.device_address(), out.device_address()])?;
        if keys.is_empty() {
            return Ok(Pending::new(self));
        }
        let mut call = Call::new(self);
        let input = call.read(&keys)?;
        let output = call.write(&out)?;
        let io = Io {
            keys: input,
            values: Values::None,
            keys_out: Some(output),
            values_out: None,
        };
        // SAFETY: `input` is `keys`' `n` keys and `output` `out`'s as
        // many, not overlapping (checked); `call` orders the launches
        // after the other queues' uses of both.
        unsafe { self.enqueue_sort::<K>(variant, sort.descending, range, keys.len(), io)? };
        Ok(Pending::new(self))
    }

    /// Enqueues the sort of `keys` and `values` together, as `sort` says:
    /// `keys_out` sorted, and `values_out[i]` the value that came with the
    /// key that went to place `i`. Returns at once; see [`Pending`].
    ///
    /// # Errors
    /// As [`Context::sort_keys_with`], for any of the four slices
    /// (lengths, overlaps).
    pub fn sort_pairs_into<'a, K: Sortable>(
        &'a self,
        sort: &Sort,
        keys: &impl DeviceRead<Elem = K>,
        values: &impl DeviceRead<Elem = u32>,
        keys_out: &mut impl DeviceWrite<Elem = K>,
        values_out: &mut impl DeviceWrite<Elem = u32>,
    ) -> Result<Pending<'a>> {
        self.sort_pairs_with(
            SortVariant::DEFAULT,
            sort,
            keys,
            values,
            keys_out,
            values_out,
        )
    }

    /// [`Context::sort_pairs_into`] with one step of the ladder.
    ///
    /// # Errors
    /// As [`Context::sort_pairs_into`].
    pub fn sort_pairs_with<'a, K: Sortable>(
        &'a self,
        variant: SortVariant,
        sort: &Sort,
        keys: &impl DeviceRead<Elem = K>,
        values: &impl DeviceRead<Elem = u32>,
        keys_out: &mut impl DeviceWrite<Elem = K>,
        values_out: &mut impl DeviceWrite<Elem = u32>,
    ) -> Result<Pending<'a>> {
        self.ensure_alive()?;
        let (keys, values) = (keys.view(), values.view());
        let (keys_out, values_out) = (keys_out.view_mut(), values_out.view_mut());
        let range = sort.range(K::BYTES * 8)?;
        let n = keys.len();
        check_lengths(
            n,
            &[
                ("a sort's values", values.len()),
                ("a sort's keys output", keys_out.len()),
                ("a sort's values output", values_out.len()),
            ],
        )?;
        let kb = n * size_of::<K>();
        let vb = n * 4;
        let k_in = ("keys", Span::new(keys.device_address(), kb));
        let v_in = ("values", Span::new(values.device_address(), vb));
        let k_out = ("keys output", Span::new(keys_out.device_address(), kb));
        let v_out = ("values output", Span::new(values_out.device_address(), vb));
        for (a, b) in [
            (k_out, k_in),
            (k_out, v_in),
            (v_out, k_in),
            (v_out, v_in),
            (k_out, v_out),
        ] {
            refuse_overlap("sort", a, b)?;
        }
        check_aligned::<K>(&[keys.device_address(), keys_out.device_address()])?;
        check_aligned::<u32>(&[values.device_address(), values_out.device_address()])?;
        if n == 0 {
            return Ok(Pending::new(self));
        }
        let mut call = Call::new(self);
        let io = Io {
            keys: call.read(&keys)?,
            values: Values::Given(call.read(&values)?),
            keys_out: Some(call.write(&keys_out)?),
            values_out: Some(call.write(&values_out)?),
        };
        // SAFETY: the four slices hold `n` elements each, no output
        // overlapping anything else (checked); `call` orders the launches
        // after the other queues' uses.
        unsafe { self.enqueue_sort::<K>(variant, sort.descending, range, n, io)? };
        Ok(Pending::new(self))
    }

    /// Enqueues `argsort`: `indices[i]` is the index in `keys` of the key
    /// that a stable sort as `sort` says puts at place `i`. Returns at
    /// once; see [`Pending`].
    ///
    /// # Errors
    /// As [`Context::sort_keys_with`].
    pub fn argsort_into<'a, K: Sortable>(
        &'a self,
        sort: &Sort,
        keys: &impl DeviceRead<Elem = K>,
        indices: &mut impl DeviceWrite<Elem = u32>,
    ) -> Result<Pending<'a>> {
        self.ensure_alive()?;
        let (keys, indices) = (keys.view(), indices.view_mut());
        let range = sort.range(K::BYTES * 8)?;
        let n = keys.len();
        check_lengths(n, &[("an argsort's indices", indices.len())])?;
        refuse_overlap(
            "argsort",
            ("indices", Span::new(indices.device_address(), n * 4)),
            ("keys", Span::new(keys.device_address(), n * size_of::<K>())),
        )?;
        check_aligned::<K>(&[keys.device_address()])?;
        check_aligned::<u32>(&[indices.device_address()])?;
        if n == 0 {
            return Ok(Pending::new(self));
        }
        let mut call = Call::new(self);
        let io = Io {
            keys: call.read(&keys)?,
            values: Values::Index,
            keys_out: None,
            values_out: Some(call.write(&indices)?),
        };
        // SAFETY: `keys` holds `n` keys and `indices` room for `n`, not
        // overlapping (checked); `call` orders the launches.
        unsafe { self.enqueue_sort::<K>(SortVariant::DEFAULT, sort.descending, range, n, io)? };
        Ok(Pending::new(self))
    }

    /// Enqueues the passes of a sort of `n > 0` keys.
    ///
    /// # Safety
    /// `io`'s inputs valid for `n` reads and its outputs for `n` writes,
    /// no output overlapping another slice, all alive and ordered after
    /// their other uses until the stream has run the sort.
    unsafe fn enqueue_sort<K: Sortable>(
        &self,
        variant: SortVariant,
        descending: bool,
        range: Range<u32>,
        n: usize,
        io: Io,
    ) -> Result<()> {
        if n > MAX_KEYS {
            return Err(Error::InvalidArgument(format!(
                "a sort of {n} keys: at most {MAX_KEYS} (indices are 32-bit)"
            )));
        }
        // Step 5 sorts one portion of keys a launch; the passes over
        // several portions gave wrong orders in the GPU suite, so longer
        // inputs run step 4 (whose passes cover any length).
        let variant = if variant == SortVariant::Onesweep && n > PORTION {
            SortVariant::Coarsened
        } else {
            variant
        };
        let shape = variant.shape();
        let key_bytes = size_of::<K>();
        let plan = passes(shape, &range);
        let with_values = !matches!(io.values, Values::None);
        let argsort = io.keys_out.is_none();
        let tiles = n.div_ceil(shape.tile());
        let max_grid = self.info().max_grid.0 as usize;
        if (shape.onesweep && n.min(PORTION).div_ceil(shape.tile()) > max_grid)
            || (!shape.onesweep && tiles > max_grid)
        {
            return Err(Error::InvalidArgument(format!(
                "a sort of {n} keys needs more blocks than the device's grid holds"
            )));
        }
        let layout = layout(shape, n, key_bytes, with_values, argsort, plan.len());
        let base = self.scratch(PARTIALS_OFFSET + layout.bytes)? + PARTIALS_OFFSET as u64;
        let at = |offset: usize| base + offset as u64;
        // The buffers the passes alternate between: the last pass writes
        // the output.
        let final_keys = io.keys_out.unwrap_or(at(layout.keys[1]));
        let spare_keys = at(layout.keys[0]);
        let spare_values = at(layout.values);
        let count = plan.len();
        let mut src_keys = io.keys;
        let mut src_values = match io.values {
            Values::Given(v) => v,
            _ => 0,
        };
        let descending = descending as u32;
        if shape.onesweep {
            // SAFETY: the keys as the caller promised; the tables in
            // scratch, as the layout counted them.
            unsafe {
                self.enqueue_histograms::<K>(
                    io.keys,
                    n,
                    &range,
                    count,
                    descending,
                    (at(layout.counts), at(layout.bases)),
                )?
            };
        }
        for (p, &(shift, bits)) in plan.iter().enumerate() {
            let last_to_output = (count - 1 - p).is_multiple_of(2);
            let dst_keys = if last_to_output {
                final_keys
            } else {
                spare_keys
            };
            let dst_values = match io.values_out {
                Some(v) if last_to_output => v,
                Some(_) => spare_values,
                None => 0,
            };
            // The first pass of an argsort makes the indices.
            let values_in = if p == 0 && matches!(io.values, Values::Index) {
                0
            } else {
                src_values
            };
            let pass = Pass {
                keys: src_keys,
                values: values_in,
                out: dst_keys,
                out_values: dst_values,
                shift,
                bits,
                descending,
            };
            if shape.onesweep {
                let row = RADIX as u64 * 4;
                let bases = at(layout.bases) + (p * BASE_ROWS) as u64 * row;
                // SAFETY: the pass's slices as the caller promised (one
                // portion: `n` is at most `PORTION`), the bases and
                // statuses in scratch.
                unsafe {
                    self.enqueue_onesweep::<K>(pass, 0, n, (bases, bases + row), at(layout.status))?
                };
            } else {
                // SAFETY: as above; the counts in scratch.
                unsafe { self.enqueue_multi_pass::<K>(variant, pass, n, at(layout.counts))? };
            }
            src_keys = dst_keys;
            src_values = dst_values;
        }
        Ok(())
    }

    /// Step 5's histograms of every pass's digits and, from them, where
    /// each digit starts in each pass's output.
    ///
    /// # Safety
    /// `keys` valid for `n` reads; `hist` for `passes * 256` words and
    /// `bases` for `passes * BASE_ROWS * 256`, touched by nothing
    /// else until the sort has run.
    unsafe fn enqueue_histograms<K: Sortable>(
        &self,
        keys: u64,
        n: usize,
        range: &Range<u32>,
        passes: usize,
        descending: u32,
        (hist, bases): (u64, u64),
    ) -> Result<()> {
        let words = passes * RADIX as usize;
        let slices = n
            .div_ceil(HISTOGRAM_BLOCK as usize * HISTOGRAM_KEYS)
            .clamp(1, 4 * self.info().multiprocessors as usize);
        let entry = sort_histogram::entry::<K>();
        let args = sort_histogram::Args::<K> {
            keys: DevPtr::new(keys),
            n,
            begin_bit: range.start,
            end_bit: range.end,
            passes: passes as u32,
            descending,
            slices: slices as u32,
            hist: DevPtrMut::new(hist),
        };
        let grid = slices as u32;
        // SAFETY: `hist` holds `words` words (the caller's contract);
        // the kernel reads `n` keys and adds into `hist`, zeroed first;
        // one block per slice, the shared memory its counters need.
        unsafe {
            self.zero_words(hist, words)?;
            self.launch(
                entry,
                LaunchConfig::linear(grid, HISTOGRAM_BLOCK, histogram_shared(passes as u32)),
                &args,
            )?;
        }
        let entry = sort_bases::entry::<u32>();
        let args = sort_bases::Args::<u32> {
            hist: DevPtr::new(hist),
            passes: passes as u32,
            portions: (BASE_ROWS - 1) as u32,
            bases: DevPtrMut::new(bases),
        };
        // SAFETY: `hist` and `bases` as the caller promised; one block of
        // a thread per digit for each pass, shared memory for the warps'
        // totals.
        unsafe { self.launch(entry, LaunchConfig::linear(passes as u32, RADIX, 64), &args) }
    }

    /// One step 5 pass over the portion of `len` keys from `first`.
    ///
    /// # Safety
    /// `pass`'s slices valid from `first` for `len` elements (outputs for
    /// the whole sort), `bases` (this portion's, the next's) for 256 words
    /// each, `status` for
    /// `STATUS_START` + 256 words a tile, touched by nothing else.
    unsafe fn enqueue_onesweep<K: Sortable>(
        &self,
        pass: Pass,
        first: usize,
        len: usize,
        (bases, next_bases): (u64, u64),
        status: u64,
    ) -> Result<()> {
        let shape = SortVariant::Onesweep.shape();
        let tiles = len.div_ceil(shape.tile());
        let pairs = pass.out_values != 0;
        let entry = sort_onesweep::entry::<K>(pairs as u32).ok_or_else(no_entry)?;
        let key_bytes = size_of::<K>() as u64;
        let args = sort_onesweep::Args::<K> {
            keys: DevPtr::new(pass.keys + first as u64 * key_bytes),
            values: DevPtr::new(if pass.values == 0 {
                0
            } else {
                pass.values + first as u64 * 4
            }),
            n: len,
            first,
            shift: pass.shift,
            bits: pass.bits,
            descending: pass.descending,
            bases: DevPtr::new(bases),
            next_bases: DevPtrMut::new(next_bases),
            status: DevPtrMut::new(status),
            out: DevPtrMut::new(pass.out),
            out_values: DevPtrMut::new(pass.out_values),
        };
        let shared = rank_shared(shape, K::BYTES, pairs);
        // SAFETY: the statuses and the ticket zeroed for this launch; one
        // block per tile, tiles by ticket; the slices as the caller
        // promised.
        unsafe {
            self.zero_words(status, STATUS_START + tiles * RADIX as usize)?;
            self.launch(
                entry,
                LaunchConfig::linear(tiles as u32, SORT_BLOCK, shared),
                &args,
            )
        }
    }

    /// One pass of steps 1-4: count, scan the counts, scatter.
    ///
    /// # Safety
    /// `pass`'s slices valid for `n` elements; `counts` for a count of
    /// every digit of every tile, touched by nothing else.
    unsafe fn enqueue_multi_pass<K: Sortable>(
        &self,
        variant: SortVariant,
        pass: Pass,
        n: usize,
        counts: u64,
    ) -> Result<()> {
        let shape = variant.shape();
        let step = variant.step();
        let tiles = n.div_ceil(shape.tile());
        let words = shape.digits() as usize * tiles;
        let count = sort_count::entry::<K>(step).ok_or_else(no_entry)?;
        let scatter = sort_scatter::entry::<K>(step).ok_or_else(no_entry)?;
        let pairs = pass.out_values != 0;
        let count_args = sort_count::Args::<K> {
            keys: DevPtr::new(pass.keys),
            n,
            shift: pass.shift,
            bits: pass.bits,
            descending: pass.descending,
            counts: DevPtrMut::new(counts),
        };
        let scatter_args = sort_scatter::Args::<K> {
            keys: DevPtr::new(pass.keys),
            values: DevPtr::new(pass.values),
            n,
            shift: pass.shift,
            bits: pass.bits,
            descending: pass.descending,
            offsets: DevPtr::new(counts),
            out: DevPtrMut::new(pass.out),
            out_values: DevPtrMut::new(pass.out_values),
        };
        let rows = Rows {
            width: words,
            count: 1,
            x: (counts, words),
            out: (counts, words),
        };
        // SAFETY: one block per tile; `counts` holds a word per digit and
        // tile, scanned in place (each tile of the scan reads its own
        // elements before it writes them); the slices as the caller
        // promised.
        unsafe {
            self.launch(
                count,
                LaunchConfig::linear(tiles as u32, SORT_BLOCK, count_shared(shape)),
                &count_args,
            )?;
            self.enqueue_scan::<u32>(ScanVariant::DEFAULT, Op::Sum, Scan::Exclusive(0), rows)?;
            self.launch(
                scatter,
                LaunchConfig::linear(
                    tiles as u32,
                    SORT_BLOCK,
                    rank_shared(shape, K::BYTES, pairs),
                ),
                &scatter_args,
            )
        }
    }
}

/// Keys each thread of the histogram pass counts, about.
const HISTOGRAM_KEYS: usize = 64;

/// The slices of a sort, as device addresses.
#[derive(Clone, Copy, Debug)]
struct Io {
    keys: u64,
    values: Values,
    /// `None`: an argsort, whose sorted keys stay in scratch.
    keys_out: Option<u64>,
    values_out: Option<u64>,
}

/// One pass: where it reads and writes (values 0: none, or for
/// `values`, the indices), and its digit.
#[derive(Clone, Copy, Debug)]
struct Pass {
    keys: u64,
    values: u64,
    out: u64,
    out_values: u64,
    shift: u32,
    bits: u32,
    descending: u32,
}

fn no_entry() -> Error {
    Error::Unsupported {
        variant: "sort",
        reason: "has no entry for this key type".into(),
    }
}

fn check_lengths(n: usize, others: &[(&'static str, usize)]) -> Result<()> {
    others
        .iter()
        .try_for_each(|&(what, given)| same_length(what, n, given))
}

fn check_aligned<T>(addresses: &[u64]) -> Result<()> {
    let alignment = size_of::<T>();
    if addresses
        .iter()
        .any(|a| !a.is_multiple_of(alignment as u64))
    {
        return Err(Error::Misaligned {
            what: "a sort's slice",
            alignment,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every step's passes cover the bit range once, in order, each at most
    /// the step's digit width.
    #[test]
    fn passes_cover_the_range() {
        for &variant in SortVariant::ALL {
            let shape = variant.shape();
            for key_bits in [32u32, 64] {
                for start in 0..key_bits {
                    for end in start + 1..=key_bits {
                        let plan = passes(shape, &(start..end));
                        let mut next = start;
                        for &(shift, bits) in &plan {
                            assert_eq!(shift, next, "{variant:?} {start}..{end}");
                            assert!(bits >= 1 && bits <= shape.bits);
                            next += bits;
                        }
                        assert_eq!(next, end);
                        assert_eq!(plan.len(), (end - start).div_ceil(shape.bits) as usize);
                    }
                }
            }
        }
    }

    /// The scratch regions a sort uses lie inside its layout's bytes, each
    /// 256-byte aligned and none overlapping another it uses.
    #[test]
    fn layout_regions_are_disjoint() {
        for &variant in SortVariant::ALL {
            let shape = variant.shape();
            for n in [1usize, 255, 4096, 4097, 1_000_003, PORTION] {
                for key_bytes in [4usize, 8] {
                    for (values, argsort) in [(false, false), (true, false), (true, true)] {
                        let count = passes(shape, &(0..key_bytes as u32 * 8)).len();
                        let l = layout(shape, n, key_bytes, values, argsort, count);
                        let tiles = n.div_ceil(shape.tile());
                        let mut regions = vec![(l.keys[0], n * key_bytes)];
                        if argsort {
                            regions.push((l.keys[1], n * key_bytes));
                        }
                        if values {
                            regions.push((l.values, n * 4));
                        }
                        if shape.onesweep {
                            regions.push((l.counts, count * RADIX as usize * 4));
                            regions.push((l.bases, BASE_ROWS * count * RADIX as usize * 4));
                            let words = STATUS_START + tiles * RADIX as usize;
                            regions.push((l.status, words * 4));
                        } else {
                            regions.push((l.counts, shape.digits() as usize * tiles * 4));
                        }
                        for (i, &(at, len)) in regions.iter().enumerate() {
                            assert!(at.is_multiple_of(256) && at + len <= l.bytes);
                            for &(other, other_len) in &regions[i + 1..] {
                                assert!(at + len <= other || other + other_len <= at);
                            }
                        }
                    }
                }
            }
        }
    }

    /// Bit ranges outside the key or empty are refused.
    #[test]
    fn bit_ranges_are_checked() {
        assert_eq!(Sort::ascending().range(32).unwrap(), 0..32);
        assert_eq!(Sort::descending().bits(3..9).range(32).unwrap(), 3..9);
        assert_eq!(Sort::ascending().bits(0..64).range(64).unwrap(), 0..64);
        for bits in [0..0, 9..9, 0..33, 32..33] {
            assert!(Sort::ascending().bits(bits).range(32).is_err());
        }
        #[allow(clippy::reversed_empty_ranges)]
        let backwards = 9..3;
        assert!(Sort::ascending().bits(backwards).range(32).is_err());
    }
}
