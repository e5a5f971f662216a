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
use crate::matrix::{Matrix, MatrixMut};
use crate::memory::{Call, DeviceRead, DeviceWrite, Pod, same_length};
use crate::overlap::{Span, refuse_overlap};
use crate::pending::Pending;
use crate::scan::{Rows, Scan};
use std::fmt::Debug;
use std::ops::Range;
use warpspeed_gpu::Op;
use warpspeed_gpu::kernel::Entry;
use warpspeed_gpu::scan::ScanVariant;
pub use warpspeed_gpu::sort::SortVariant;
use warpspeed_gpu::sort::{
    ARGMAX_SHARED, ARGMAX_SLICE, CARRY_IN, CARRY_OUT, HISTOGRAM_BLOCK, PORTION, RADIX,
    SELECT_MAX_K, SELECT_SLICE, SORT_BLOCK, STATUS_START, SortKey, SortShape, WIDE_PAIR_BLOCKS,
    WIDE_PAIR_ITEMS, count_shared, histogram_shared, rank_shared, select_shared, sort_argmax,
    sort_bases, sort_count, sort_histogram, sort_onesweep, sort_onesweep_wide,
    sort_onesweep_wide_float, sort_onesweep_wide_middle, sort_scatter, sort_select,
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
    /// Buffers of keys (and of values) the passes alternate between.
    keys: [usize; 2],
    values: [usize; 2],
    /// Steps 1-4: the counts of every tile's digits. Step 5: the
    /// histograms, then the bases, then one pass's statuses.
    counts: usize,
    /// Step 5: the word after the histograms that says whether `f32` keys
    /// hold a NaN (where the histogram kernel writes it).
    nan: usize,
    bases: usize,
    status: usize,
    /// Bytes in all.
    bytes: usize,
}

/// The rows a sort sorts, each on its own, and where they are: `rows`
/// rows of `width` keys, each `pitch` elements after the last (values
/// given with the keys likewise), written `out_pitch` (keys) and
/// `out_values_pitch` apart, the first `limit` places of each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Shape {
    width: usize,
    rows: usize,
    pitch: usize,
    out_pitch: usize,
    out_values_pitch: usize,
    limit: usize,
}

impl Shape {
    /// One row of `n` keys.
    fn flat(n: usize) -> Shape {
        Shape {
            width: n,
            rows: 1,
            pitch: n,
            out_pitch: n,
            out_values_pitch: n,
            limit: n,
        }
    }

    /// Whether the passes may alternate between the outputs and one
    /// buffer of scratch: one row, every place kept. Otherwise they
    /// alternate between two buffers of scratch and only the last pass
    /// writes the outputs.
    fn in_place(&self) -> bool {
        self.rows == 1 && self.limit == self.width
    }

    fn keys(&self) -> usize {
        self.width * self.rows
    }

    /// Tiles of a row for step 5's passes of `shape`.
    fn tiles_per_row(&self, shape: SortShape) -> usize {
        self.width.div_ceil(shape.tile())
    }
}

/// The waves of wide tiles (all the SMs' blocks at once) from which a
/// sort of pairs takes them. H200, `u32` pairs (µs, 16 keys a thread
/// against 32): 2^24 669.5 against 584.3 (7.8 waves of wide tiles),
/// 2^28 10 058 against 7 564; rows of `f32` keys with their columns,
/// 8 × 32 000 58.1 against 78.8 (0.2 waves), 64 × 128 256 348.7 against
/// 342.0 (3.9 waves).
const WIDE_WAVES: usize = 6;

/// The shape of a step's passes over `rows` of `key_bytes` keys, with
/// values or not, on a device of `sms` SMs whose blocks may opt in to
/// `shared_optin` bytes of shared memory: step 5 takes wide tiles for
/// 4-byte keys with values, the largest of [`WIDE_PAIR_ITEMS`] that the
/// key type has an entry for (`wide`, [`wide_entry`]), of which an SM
/// holds [`WIDE_PAIR_BLOCKS`] blocks and which fill at least
/// [`WIDE_WAVES`] waves; where none does, the smaller tiles' more blocks
/// an SM finish sooner.
fn pass_shape(
    variant: SortVariant,
    rows: &Shape,
    (key_bytes, wide): (usize, impl Fn(u32) -> bool),
    values: bool,
    (sms, shared_optin): (u32, u32),
) -> SortShape {
    let shape = variant.shape();
    if !(shape.onesweep && values && key_bytes == 4) {
        return shape;
    }
    // An SM's shared memory is a block's opt-in limit and the 1 KiB it
    // reserves for each block (none before sm_80: less is assumed).
    let fits = |wide: SortShape| {
        let shared = rank_shared(wide, key_bytes as u32, true) + 1024;
        WIDE_PAIR_BLOCKS * shared <= shared_optin + 1024
    };
    let waves = WIDE_WAVES * (WIDE_PAIR_BLOCKS * sms) as usize;
    WIDE_PAIR_ITEMS
        .into_iter()
        .filter(|&items| wide(items))
        .map(|items| shape.with_items(items))
        .find(|&wide| fits(wide) && rows.rows * rows.tiles_per_row(wide) >= waves)
        .unwrap_or(shape)
}

/// The shape of the middle passes (all but the first and the last) of a
/// sort whose other passes take `shape`: where it has histograms (rows
/// of several tiles), the wide tiles that the key type's own middle
/// entries have too (`wide` says which sizes it has a wide or a middle
/// entry for: `f32` pairs 40 keys a thread against 32), where they take
/// no more waves' time than `shape`'s: waves of wide tiles, each as long
/// as its tile. Never smaller tiles than `shape`'s, so never more tiles
/// than the layout counts. H200, `f32` pairs, µs, all passes in tiles of
/// 32 keys a thread against the middle ones in 40: 2^24 567 to 571
/// against 606 (6.2 waves of 40, 7 waves' time, against 7.8 of 32, 8
/// waves' time at 0.8 the length: rejected); 2^28 7 500 against 7 430
/// (100 waves' time of 40, 125 of 32: kept). `u32` pairs, whose every
/// pass takes 40, do not follow this: 2^24 550 against 566 in 32.
fn middle_shape(
    (variant, shape): (SortVariant, SortShape),
    rows: &Shape,
    wide: (usize, impl Fn(u32) -> bool),
    values: bool,
    (sms, shared_optin): (u32, u32),
) -> SortShape {
    if !(shape.onesweep && rows.tiles_per_row(shape) > 1) {
        return shape;
    }
    let middle = pass_shape(variant, rows, wide, values, (sms, shared_optin));
    let wave = (WIDE_PAIR_BLOCKS * sms) as usize;
    let time = |s: SortShape| (rows.rows * rows.tiles_per_row(s)).div_ceil(wave) * s.tile();
    if middle.tile() > shape.tile() && time(middle) <= time(shape) {
        middle
    } else {
        shape
    }
}

/// The entry of `K`'s middle one-sweep passes over pairs in wide tiles
/// of `items` keys a thread (every pass but the first and the last of a
/// sort with histograms), where the device crate has one of their own:
/// `f32` keys at 40, whose carried bits sort as `u32` keys do where the
/// sort has no NaN.
fn middle_entry<K: Sortable>(items: u32) -> Option<Entry<sort_onesweep::Args<K>>> {
    sort_onesweep_wide_middle::try_entry::<K>(items as usize)
}

/// The entry of `K`'s one-sweep passes over pairs in wide tiles of
/// `items` keys a thread, where the device crate has one.
fn wide_entry<K: Sortable>(items: u32) -> Option<Entry<sort_onesweep::Args<K>>> {
    let items = items as usize;
    sort_onesweep_wide::try_entry::<K>(items)
        .or_else(|| sort_onesweep_wide_float::try_entry::<K>(items))
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

/// The scratch a sort of `rows` with keys of `key_bytes` needs.
fn layout(
    shape: SortShape,
    rows: &Shape,
    key_bytes: usize,
    values: bool,
    argsort: bool,
    passes: usize,
) -> Layout {
    let align = |b: usize| b.next_multiple_of(256);
    let n = rows.keys();
    let two = !rows.in_place();
    let key_buffers = if two || argsort { 2 } else { 1 };
    let value_buffers = match (values, two) {
        (false, _) => 0,
        (true, false) => 1,
        (true, true) => 2,
    };
    let keys = [0, align(n * key_bytes)];
    let values_at = key_buffers * align(n * key_bytes);
    let values = [values_at, values_at + align(n * 4)];
    let counts = values_at + value_buffers * align(n * 4);
    let tiles = n.div_ceil(shape.tile());
    let (nan, bases, status, end) = if shape.onesweep {
        let words = passes * rows.rows * RADIX as usize * 4;
        // The histograms and their NaN word.
        let nan = counts + words;
        let bases = align(nan + 4);
        let status = bases + align(words);
        let statuses = if rows.tiles_per_row(shape) > 1 {
            STATUS_START + rows.rows * rows.tiles_per_row(shape) * RADIX as usize
        } else {
            0
        };
        (nan, bases, status, status + align(statuses * 4))
    } else {
        let end = counts + align(shape.digits() as usize * tiles * 4);
        (end, end, end, end)
    };
    Layout {
        keys,
        values,
        counts,
        nan,
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

    /// Enqueues the sort of every row of `x` into the same row of `out`,
    /// as `sort` says: each row on its own. Returns at once; see
    /// [`Pending`].
    ///
    /// ```no_run
    /// # fn main() -> warpspeed::Result<()> {
    /// use warpspeed::{Matrix, MatrixMut, sort::Sort};
    /// let ctx = warpspeed::Context::new(0)?;
    /// let logits = ctx.upload(&[0.5f32, 2.0, -1.0, 3.0, 3.0, 0.0])?;
    /// let (mut sorted, mut columns) = (ctx.alloc::<f32>(6)?, ctx.alloc::<u32>(6)?);
    /// ctx.sort_rows_with_indices_into(
    ///     &Sort::descending(),
    ///     &Matrix::new(&logits, 3, 2)?, // 2 rows of 3
    ///     &mut MatrixMut::new(&mut sorted, 3, 2)?,
    ///     &mut MatrixMut::new(&mut columns, 3, 2)?,
    /// )?
    /// .wait()?;
    /// assert_eq!(ctx.download(&sorted)?, [2.0, 0.5, -1.0, 3.0, 3.0, 0.0]);
    /// assert_eq!(ctx.download(&columns)?, [1, 0, 2, 0, 1, 2]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] when `out` is not `x`'s shape;
    /// [`Error::InvalidArgument`] when they overlap, for a bit range
    /// outside the key or empty, or rows longer than 2^29 keys (sort such
    /// a row with [`Context::sort_into`]); [`Error::Misaligned`] for a
    /// view not aligned to its elements (only possible through unsafe
    /// code); launch and driver failures.
    pub fn sort_rows_into<'a, K: Sortable>(
        &'a self,
        sort: &Sort,
        x: &Matrix<'_, K>,
        out: &mut MatrixMut<'_, K>,
    ) -> Result<Pending<'a>> {
        self.ensure_alive()?;
        self.rows_first(sort, x.width(), x, Some(out), None)
    }

    /// [`Context::sort_rows_into`], and each sorted key's column in its
    /// row to `indices` (the same shape): the sort of a language model's
    /// logits, largest first with [`Sort::descending`].
    ///
    /// # Errors
    /// As [`Context::sort_rows_into`], for both outputs.
    pub fn sort_rows_with_indices_into<'a, K: Sortable>(
        &'a self,
        sort: &Sort,
        x: &Matrix<'_, K>,
        out: &mut MatrixMut<'_, K>,
        indices: &mut MatrixMut<'_, u32>,
    ) -> Result<Pending<'a>> {
        self.ensure_alive()?;
        self.rows_first(sort, x.width(), x, Some(out), Some(indices))
    }

    /// Enqueues `argsort` of every row of `x`: `indices[r][i]` is the
    /// column of the key that a stable sort of row `r` as `sort` says puts
    /// at place `i`. Returns at once; see [`Pending`].
    ///
    /// # Errors
    /// As [`Context::sort_rows_into`].
    pub fn argsort_rows_into<'a, K: Sortable>(
        &'a self,
        sort: &Sort,
        x: &Matrix<'_, K>,
        indices: &mut MatrixMut<'_, u32>,
    ) -> Result<Pending<'a>> {
        self.ensure_alive()?;
        self.rows_first(sort, x.width(), x, None, Some(indices))
    }

    /// Enqueues the top-k of every row of `x`: the first `k` keys of the
    /// row's stable sort as `sort` says, and their columns, into `values`
    /// and `indices` (`k` wide, as many rows as `x`). With
    /// [`Sort::descending`] these are the `k` largest, largest first, and
    /// of equal keys the one of the lower column first. Returns at once;
    /// see [`Pending`].
    ///
    /// For `k` up to 256 a radix select keeps each slice's `k` first keys
    /// and then the row's; larger `k` sort the rows and keep their first
    /// `k` places.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a `k` of 0 or above the width;
    /// [`Error::ShapeMismatch`] for outputs not `k` × `x.height()`; the
    /// rest as [`Context::sort_rows_into`] (rows longer than 2^29 keys
    /// only for `k` above 256).
    pub fn top_k_rows_into<'a, K: Sortable>(
        &'a self,
        sort: &Sort,
        k: usize,
        x: &Matrix<'_, K>,
        values: &mut MatrixMut<'_, K>,
        indices: &mut MatrixMut<'_, u32>,
    ) -> Result<Pending<'a>> {
        self.ensure_alive()?;
        if k == 0 || k > x.width() {
            return Err(Error::InvalidArgument(format!(
                "a top-k of k = {k} over rows of {} keys: k must be from 1 to the width",
                x.width()
            )));
        }
        self.rows_first(sort, k, x, Some(values), Some(indices))
    }

    /// Enqueues the column of each row's largest key into `out` (one a
    /// row): the first place of the row's stable descending sort, so the
    /// first of equal keys, and for `f32` a NaN only in a row of NaNs
    /// (unlike `torch.argmax`, which takes NaN as the largest). Returns at
    /// once; see [`Pending`].
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when `out` does not hold one index a row;
    /// [`Error::InvalidArgument`] for rows of no key, or when `out`
    /// overlaps `x`; [`Error::Misaligned`] as [`Context::sort_rows_into`].
    pub fn argmax_rows_into<'a, K: Sortable>(
        &'a self,
        x: &Matrix<'_, K>,
        out: &mut impl DeviceWrite<Elem = u32>,
    ) -> Result<Pending<'a>> {
        self.arg_first_rows(true, x, out)
    }

    /// Enqueues the column of each row's smallest key into `out`: as
    /// [`Context::argmax_rows_into`] for the ascending sort (NaN only in a
    /// row of NaNs).
    ///
    /// # Errors
    /// As [`Context::argmax_rows_into`].
    pub fn argmin_rows_into<'a, K: Sortable>(
        &'a self,
        x: &Matrix<'_, K>,
        out: &mut impl DeviceWrite<Elem = u32>,
    ) -> Result<Pending<'a>> {
        self.arg_first_rows(false, x, out)
    }

    /// The first `k` places of every row's sort into the outputs given
    /// (`k` wide): checks, then a selection for small `k`, else the
    /// rows sorted with only their first `k` places stored.
    fn rows_first<'a, K: Sortable>(
        &'a self,
        sort: &Sort,
        k: usize,
        x: &Matrix<'_, K>,
        keys_out: Option<&mut MatrixMut<'_, K>>,
        indices_out: Option<&mut MatrixMut<'_, u32>>,
    ) -> Result<Pending<'a>> {
        let range = sort.range(K::BYTES * 8)?;
        let expected = (k, x.height());
        for (what, given) in [
            (
                "a row sort's keys output",
                keys_out.as_ref().map(|m| (m.width(), m.height())),
            ),
            (
                "a row sort's indices",
                indices_out.as_ref().map(|m| (m.width(), m.height())),
            ),
        ] {
            match given {
                Some(given) if given != expected => {
                    return Err(Error::ShapeMismatch {
                        what,
                        expected,
                        given,
                    });
                }
                _ => {}
            }
        }
        let input = ("input", x.span());
        let keys_span = keys_out.as_ref().map(|m| ("keys output", m.span()));
        let indices_span = indices_out.as_ref().map(|m| ("indices", m.span()));
        for out in [keys_span, indices_span].into_iter().flatten() {
            refuse_overlap("row sort", out, input)?;
        }
        if let (Some(a), Some(b)) = (keys_span, indices_span) {
            refuse_overlap("row sort", a, b)?;
        }
        check_aligned::<K>(&[x.address()])?;
        if let Some(m) = &keys_out {
            check_aligned::<K>(&[m.address()])?;
        }
        if let Some(m) = &indices_out {
            check_aligned::<u32>(&[m.address()])?;
        }
        let selects = k <= SELECT_MAX_K as usize;
        if !selects && x.width() > PORTION {
            return Err(Error::InvalidArgument(format!(
                "a row sort of rows of {} keys: at most {PORTION} a row (sort a longer row with \
                 sort_into)",
                x.width()
            )));
        }
        if x.is_empty() {
            return Ok(Pending::new(self));
        }
        let mut call = Call::new(self);
        let keys = call.read(x.data())?;
        let keys_at = match keys_out {
            Some(m) => Some((call.write(m.data())?, m.pitch())),
            None => None,
        };
        let indices_at = match indices_out {
            Some(m) => Some((call.write(m.data())?, m.pitch())),
            None => None,
        };
        let rows = Shape {
            width: x.width(),
            rows: x.height(),
            pitch: x.pitch(),
            out_pitch: keys_at.map_or(k, |(_, p)| p),
            out_values_pitch: indices_at.map_or(k, |(_, p)| p),
            limit: k,
        };
        let io = Io {
            keys,
            values: if indices_at.is_some() {
                Values::Index
            } else {
                Values::None
            },
            keys_out: keys_at.map(|(a, _)| a),
            values_out: indices_at.map(|(a, _)| a),
        };
        // SAFETY: the matrices lie inside their slices for their shapes
        // and pitches (checked when they were made), the outputs `k` wide
        // (checked above) and overlapping nothing else (checked); `call`
        // orders the launches after the other queues' uses of all three,
        // and the buffers wait for this stream before they are freed.
        unsafe {
            if selects {
                self.enqueue_select::<K>(sort.descending, range, rows, io, (0, x.width()), 0)?;
            } else {
                self.enqueue_sort_rows::<K>(
                    SortVariant::Onesweep,
                    sort.descending,
                    range,
                    rows,
                    io,
                )?;
            }
        }
        Ok(Pending::new(self))
    }

    /// The argmax (`descending`) or argmin of every row of `x`.
    fn arg_first_rows<'a, K: Sortable>(
        &'a self,
        descending: bool,
        x: &Matrix<'_, K>,
        out: &mut impl DeviceWrite<Elem = u32>,
    ) -> Result<Pending<'a>> {
        self.ensure_alive()?;
        let out = out.view_mut();
        same_length(
            "an argmax's output (one index a row)",
            x.height(),
            out.len(),
        )?;
        if x.width() == 0 && x.height() > 0 {
            return Err(Error::InvalidArgument(
                "an argmax of rows of no key: a row has no first key".into(),
            ));
        }
        refuse_overlap(
            "argmax",
            ("output", Span::new(out.device_address(), out.len() * 4)),
            ("input", x.span()),
        )?;
        check_aligned::<K>(&[x.address()])?;
        check_aligned::<u32>(&[out.device_address()])?;
        if x.is_empty() {
            return Ok(Pending::new(self));
        }
        let mut call = Call::new(self);
        let keys = call.read(x.data())?;
        let output = call.write(&out)?;
        let rows = Shape {
            width: x.width(),
            rows: x.height(),
            pitch: x.pitch(),
            out_pitch: 1,
            out_values_pitch: 1,
            limit: 1,
        };
        // SAFETY: `x` lies inside its slice (checked when it was made),
        // `out` holds one index a row and overlaps it not (checked);
        // `call` orders the launches after the other queues' uses.
        unsafe { self.enqueue_argmax::<K>(descending, rows, keys, output)? };
        Ok(Pending::new(self))
    }

    /// Enqueues the selection of the first `rows.limit` (at most
    /// `SELECT_MAX_K`) keys of every row, sorted, to `io`'s outputs: the
    /// levels of [`select_levels`], each keeping the first keys of every
    /// slice of its rows. The keys' columns are their own, or (`columns`
    /// not 0) read from there, at the keys' pitch; they are below
    /// `index_width`. Its candidates use the scratch memory from
    /// `scratch_from` bytes past the start of the partials on
    /// ([`select_scratch`] bytes).
    ///
    /// # Safety
    /// `io.keys` (and `columns`) valid for reading `rows`, the outputs
    /// for writing `rows.limit` places of each row at their pitches, not
    /// overlapping, all alive and ordered after their other uses until
    /// the stream has run the selection; none of them in scratch memory
    /// at or past `scratch_from`.
    unsafe fn enqueue_select<K: Sortable>(
        &self,
        descending: bool,
        range: Range<u32>,
        rows: Shape,
        io: Io,
        (columns, index_width): (u64, usize),
        scratch_from: usize,
    ) -> Result<()> {
        let k = rows.limit;
        let levels = select_levels(rows.width, k);
        let candidates = select_candidates(&rows);
        let region = select_scratch(&rows, size_of::<K>()) / 2;
        let base = self.scratch(PARTIALS_OFFSET + scratch_from + 2 * region)?
            + (PARTIALS_OFFSET + scratch_from) as u64;
        let buffers = [base, base + region as u64];
        let keys_at = |b: u64| b;
        let columns_at = |b: u64| b + (candidates * size_of::<K>()).next_multiple_of(256) as u64;
        let index_bits = index_bits(index_width);
        let (mut keys, mut columns, mut pitch) = (io.keys, columns, rows.pitch);
        for (i, level) in levels.iter().enumerate() {
            let last = i + 1 == levels.len();
            let (out_keys, out_indices, keys_pitch, indices_pitch) = if last {
                (
                    io.keys_out.unwrap_or(0),
                    io.values_out.unwrap_or(0),
                    rows.out_pitch,
                    rows.out_values_pitch,
                )
            } else {
                let to = buffers[i % 2];
                let width = level.slices * k;
                (keys_at(to), columns_at(to), width, width)
            };
            let args = sort_select::Args::<K> {
                keys: DevPtr::new(keys),
                indices: DevPtr::new(columns),
                width: level.width,
                rows: rows.rows,
                pitch,
                k: k as u32,
                begin_bit: range.start,
                end_bit: range.end,
                descending: descending as u32,
                index_bits,
                out_keys: DevPtrMut::new(out_keys),
                out_indices: DevPtrMut::new(out_indices),
                out_keys_pitch: keys_pitch,
                out_indices_pitch: indices_pitch,
                sorted: last as u32,
            };
            let cfg = LaunchConfig {
                grid: (level.slices as u32, self.grid_rows(rows.rows)),
                block: (SORT_BLOCK, 1),
                shared_bytes: select_shared(K::BYTES),
            };
            // SAFETY: a level reads its rows (the caller's, or the last
            // level's candidates in scratch, `slices * k` a row) and
            // writes `k` places of each of its slices (scratch) or each
            // row (the caller's outputs); `k` at most `SELECT_MAX_K` and
            // columns below 2^`index_bits`.
            unsafe { self.launch(sort_select::entry::<K>(), cfg, &args)? };
            keys = out_keys;
            columns = out_indices;
            pitch = level.slices * k;
        }
        Ok(())
    }

    /// Enqueues the argmax (`descending`) or argmin of every row to
    /// `out`: the first key of each slice of `ARGMAX_SLICE` keys of every
    /// row, with its column, then the first of those candidates by the
    /// same kernel, level after level, until one slice covers a row.
    ///
    /// # Safety
    /// `keys` valid for reading `rows`, `out` for writing an index a row,
    /// not overlapping, both alive and ordered after their other uses
    /// until the stream has run it.
    unsafe fn enqueue_argmax<K: Sortable>(
        &self,
        descending: bool,
        rows: Shape,
        keys: u64,
        out: u64,
    ) -> Result<()> {
        let candidates = rows.rows * rows.width.div_ceil(ARGMAX_SLICE);
        // Two sets of candidates (keys, then columns), one level's input
        // and the next one's output, asked for at once before any launch:
        // growing the scratch memory frees what it held.
        let keys_bytes = (candidates * size_of::<K>()).next_multiple_of(256);
        let set_bytes = keys_bytes + (candidates * 4).next_multiple_of(256);
        let sets = if rows.width > ARGMAX_SLICE {
            let base = self.scratch(PARTIALS_OFFSET + 2 * set_bytes)? + PARTIALS_OFFSET as u64;
            [base, base + set_bytes as u64]
        } else {
            [0, 0]
        };
        let (mut keys, mut columns) = (keys, 0);
        let (mut width, mut pitch) = (rows.width, rows.pitch);
        for level in 0.. {
            let slices = width.div_ceil(ARGMAX_SLICE);
            let set = sets[level % 2];
            let (out_keys, out_indices) = if slices == 1 {
                (0, out)
            } else {
                (set, set + keys_bytes as u64)
            };
            let args = sort_argmax::Args::<K> {
                keys: DevPtr::new(keys),
                columns: DevPtr::new(columns),
                width,
                rows: rows.rows,
                pitch,
                descending: descending as u32,
                out_keys: DevPtrMut::new(out_keys),
                out_indices: DevPtrMut::new(out_indices),
            };
            let cfg = LaunchConfig {
                grid: (slices as u32, self.grid_rows(rows.rows)),
                block: (SORT_BLOCK, 1),
                shared_bytes: ARGMAX_SHARED,
            };
            // SAFETY: the kernel reads `width` keys (and columns) of each
            // row, `pitch` apart, and writes one column (and key) a slice
            // of each row: `slices` a row in one set of candidates, which
            // is not the one it reads, or one a row to `out`.
            unsafe { self.launch(sort_argmax::entry::<K>(), cfg, &args)? };
            if slices == 1 {
                break;
            }
            (keys, columns) = (out_keys, out_indices);
            (width, pitch) = (slices, slices);
        }
        Ok(())
    }

    /// Rows of a grid's height: the kernels walk the rows past it.
    fn grid_rows(&self, rows: usize) -> u32 {
        rows.min(self.info().max_grid.1 as usize) as u32
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
        // Step 5 sorts rows of up to `PORTION` keys (its statuses count
        // them in 30 bits); longer inputs run step 4, whose passes cover
        // any length.
        let variant = if variant == SortVariant::Onesweep && n > PORTION {
            SortVariant::Coarsened
        } else {
            variant
        };
        // SAFETY: the caller's contract, for one row of `n` keys.
        unsafe { self.enqueue_sort_rows::<K>(variant, descending, range, Shape::flat(n), io) }
    }

    /// Enqueues the passes of a sort of each of `rows`' rows (more than
    /// one row, or a `limit` below the width: step 5 only).
    ///
    /// # Safety
    /// `io`'s inputs valid for reading and its outputs for writing every
    /// row as `rows` places them, no output overlapping another slice,
    /// all alive and ordered after their other uses until the stream has
    /// run the sort; `rows` of at least one key each, of at most
    /// `PORTION` keys for step 5.
    unsafe fn enqueue_sort_rows<K: Sortable>(
        &self,
        variant: SortVariant,
        descending: bool,
        range: Range<u32>,
        rows: Shape,
        io: Io,
    ) -> Result<()> {
        let n = rows.keys();
        let key_bytes = size_of::<K>();
        // Every pass carries values where the sort writes them.
        let info = self.info();
        let device = (info.multiprocessors, info.max_shared_per_block_optin);
        let wide = (key_bytes, |items| wide_entry::<K>(items).is_some());
        let shape = pass_shape(variant, &rows, wide, io.values_out.is_some(), device);
        debug_assert!(shape.onesweep || rows.in_place());
        // The middle passes of `f32` pairs take wider tiles than the
        // others where that pays.
        let any = |items| wide_entry::<K>(items).is_some() || middle_entry::<K>(items).is_some();
        let middle = middle_shape(
            (variant, shape),
            &rows,
            (key_bytes, any),
            io.values_out.is_some(),
            device,
        );
        let plan = passes(shape, &range);
        let with_values = !matches!(io.values, Values::None);
        let argsort = io.keys_out.is_none();
        let tiles = if shape.onesweep {
            rows.rows * rows.tiles_per_row(shape)
        } else {
            n.div_ceil(shape.tile())
        };
        if tiles > self.info().max_grid.0 as usize {
            return Err(Error::InvalidArgument(format!(
                "a sort of {} rows of {} keys needs more blocks than the device's grid holds",
                rows.rows, rows.width
            )));
        }
        let layout = layout(shape, &rows, key_bytes, with_values, argsort, plan.len());
        let base = self.scratch(PARTIALS_OFFSET + layout.bytes)? + PARTIALS_OFFSET as u64;
        let at = |offset: usize| base + offset as u64;
        let count = plan.len();
        // Where pass `p` writes its keys and values, and their pitches.
        let destination = |p: usize| -> (u64, u64, usize, usize) {
            let last = p + 1 == count;
            let (keys, values) = if rows.in_place() {
                // The passes alternate with the outputs, the last to them
                // (an argsort's keys between two buffers of scratch).
                let to_output = (count - 1 - p).is_multiple_of(2);
                let keys = match io.keys_out {
                    Some(out) if to_output => out,
                    None if to_output => at(layout.keys[1]),
                    _ => at(layout.keys[0]),
                };
                let values = match io.values_out {
                    Some(v) if to_output => v,
                    Some(_) => at(layout.values[0]),
                    None => 0,
                };
                (keys, values)
            } else if last {
                let keys = io.keys_out.unwrap_or(at(layout.keys[p % 2]));
                (keys, io.values_out.unwrap_or(0))
            } else {
                let values = if io.values_out.is_some() {
                    at(layout.values[p % 2])
                } else {
                    0
                };
                (at(layout.keys[p % 2]), values)
            };
            if last {
                let keys_pitch = if io.keys_out.is_some() {
                    rows.out_pitch
                } else {
                    rows.width
                };
                (keys, values, keys_pitch, rows.out_values_pitch)
            } else {
                (keys, values, rows.width, rows.width)
            }
        };
        let mut src_keys = io.keys;
        let mut src_values = match io.values {
            Values::Given(v) => v,
            _ => 0,
        };
        let mut src_pitch = rows.pitch;
        let descending = descending as u32;
        let histograms = shape.onesweep && rows.tiles_per_row(shape) > 1;
        if histograms {
            // SAFETY: the keys as the caller promised; the tables in
            // scratch, as the layout counted them.
            unsafe {
                self.enqueue_histograms::<K>(
                    io.keys,
                    &rows,
                    &range,
                    count,
                    descending,
                    (at(layout.counts), at(layout.bases)),
                )?
            };
        }
        for (p, &(shift, bits)) in plan.iter().enumerate() {
            let (dst_keys, dst_values, out_pitch, out_values_pitch) = destination(p);
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
                let row_words = (rows.rows * RADIX as usize * 4) as u64;
                let bases = at(layout.bases) + p as u64 * row_words;
                let pitches = Pitches {
                    input: src_pitch,
                    keys: out_pitch,
                    values: out_values_pitch,
                    limit: if p + 1 == count {
                        rows.limit
                    } else {
                        rows.width
                    },
                };
                // Between passes over `f32` keys without NaN, scratch holds
                // their ordered bits.
                let carry = Carry {
                    nan: if histograms { at(layout.nan) } else { 0 },
                    carry: if p > 0 { CARRY_IN } else { 0 }
                        | if p + 1 < count { CARRY_OUT } else { 0 },
                };
                let shape = if p > 0 && p + 1 < count {
                    middle
                } else {
                    shape
                };
                // SAFETY: the pass's slices as the caller promised or in
                // scratch (rows of `PORTION` keys at most), the bases,
                // statuses and NaN word in scratch (statuses for the
                // tiles of `shape`, of which a middle pass has as many or
                // fewer).
                unsafe {
                    self.enqueue_onesweep::<K>(
                        shape,
                        (pass, carry),
                        &rows,
                        pitches,
                        bases,
                        at(layout.status),
                    )?
                };
            } else {
                // SAFETY: as above; the counts in scratch.
                unsafe { self.enqueue_multi_pass::<K>(variant, pass, n, at(layout.counts))? };
            }
            src_keys = dst_keys;
            src_values = dst_values;
            src_pitch = rows.width;
        }
        Ok(())
    }

    /// Step 5's histograms of every pass's digits of every row and, from
    /// them, where each digit starts in each pass's output row.
    ///
    /// # Safety
    /// `keys` valid for reading `rows`; `hist` for `passes * rows * 256`
    /// words and the NaN word after them, `bases` for `passes * rows *
    /// 256` words, touched by nothing else until the sort has run.
    unsafe fn enqueue_histograms<K: Sortable>(
        &self,
        keys: u64,
        rows: &Shape,
        range: &Range<u32>,
        passes: usize,
        descending: u32,
        (hist, bases): (u64, u64),
    ) -> Result<()> {
        let words = passes * rows.rows * RADIX as usize;
        let info = self.info();
        // Blocks enough to fill the device a few times over, at least one
        // a row.
        let wanted = 4 * info.multiprocessors as usize;
        let slices = rows
            .width
            .div_ceil(HISTOGRAM_BLOCK as usize * HISTOGRAM_KEYS)
            .clamp(1, wanted.div_ceil(rows.rows).max(1));
        let grid_rows = rows.rows.min(info.max_grid.1 as usize);
        let entry = sort_histogram::entry::<K>();
        let args = sort_histogram::Args::<K> {
            keys: DevPtr::new(keys),
            width: rows.width,
            rows: rows.rows,
            pitch: rows.pitch,
            begin_bit: range.start,
            end_bit: range.end,
            passes: passes as u32,
            descending,
            hist: DevPtrMut::new(hist),
        };
        let grid = LaunchConfig {
            grid: (slices as u32, grid_rows as u32),
            block: (HISTOGRAM_BLOCK, 1),
            shared_bytes: histogram_shared(passes as u32),
        };
        // SAFETY: `hist` holds `words` words and the NaN word (the
        // caller's contract); the kernel reads the rows' keys and adds
        // into `hist`, zeroed first; the shared memory its counters need.
        unsafe {
            self.zero_words(hist, words + 1)?;
            self.launch(entry, grid, &args)?;
        }
        let entry = sort_bases::entry::<u32>();
        let args = sort_bases::Args::<u32> {
            hist: DevPtr::new(hist),
            bases: DevPtrMut::new(bases),
        };
        let blocks = u32::try_from(passes * rows.rows).map_err(|_| too_many_rows(rows))?;
        // SAFETY: `hist` and `bases` as the caller promised; one block of
        // a thread per digit for each pass and row, shared memory for the
        // warps' totals.
        unsafe { self.launch(entry, LaunchConfig::linear(blocks, RADIX, 64), &args) }
    }

    /// One step 5 pass over `rows`, in tiles of `shape` (step 5's, or
    /// its wide tiles of pairs).
    ///
    /// # Safety
    /// `pass`'s slices valid for the rows at their pitches, `bases` for
    /// 256 words a row, `status` for `STATUS_START` + 256 words a tile
    /// (rows of several tiles), touched by nothing else; `carry.nan` 0 or
    /// the NaN word of this sort's histograms, `carry.carry` [`CARRY_IN`]
    /// for a pass after the sort's first and [`CARRY_OUT`] for one before
    /// its last (the keys read are bits where the NaN word is zero).
    unsafe fn enqueue_onesweep<K: Sortable>(
        &self,
        shape: SortShape,
        (pass, carry): (Pass, Carry),
        rows: &Shape,
        pitches: Pitches,
        bases: u64,
        status: u64,
    ) -> Result<()> {
        let pairs = pass.out_values != 0;
        let tiles_per_row = rows.tiles_per_row(shape);
        let tiles = rows.rows * tiles_per_row;
        // A middle pass of a sort with histograms (both carry bits, the
        // NaN word given) takes its own entry where the key type has one.
        let middle = carry.nan != 0 && carry.carry == CARRY_IN | CARRY_OUT;
        let entry = if WIDE_PAIR_ITEMS.contains(&shape.items) {
            debug_assert!(pairs);
            middle
                .then(|| middle_entry::<K>(shape.items))
                .flatten()
                .or_else(|| wide_entry::<K>(shape.items))
        } else {
            sort_onesweep::entry::<K>(pairs as u32)
        }
        .ok_or_else(no_entry)?;
        let args = sort_onesweep::Args::<K> {
            keys: DevPtr::new(pass.keys),
            values: DevPtr::new(pass.values),
            width: rows.width,
            tiles_per_row: tiles_per_row as u32,
            pitch: pitches.input,
            shift: pass.shift,
            bits: pass.bits,
            descending: pass.descending,
            bases: DevPtr::new(bases),
            status: DevPtrMut::new(status),
            out: DevPtrMut::new(pass.out),
            out_pitch: pitches.keys,
            out_values: DevPtrMut::new(pass.out_values),
            out_values_pitch: pitches.values,
            limit: pitches.limit,
            nan: DevPtr::new(carry.nan),
            carry: carry.carry,
        };
        let shared = rank_shared(shape, K::BYTES, pairs);
        // SAFETY: the statuses and the ticket zeroed for this launch
        // (rows of several tiles); one block per tile, tiles by ticket;
        // the slices as the caller promised.
        unsafe {
            if tiles_per_row > 1 {
                self.zero_words(status, STATUS_START + tiles * RADIX as usize)?;
            }
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

/// One level of a selection: the keys (or candidates) of a row it reads,
/// and its slices of a row, each keeping its first `k`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Level {
    width: usize,
    slices: usize,
}

/// The levels that select the first `k` (at most `SELECT_MAX_K`) of rows
/// of `width` keys: each level's slices keep `k` candidates each, which
/// the next level reads, until a level has one slice a row.
fn select_levels(width: usize, k: usize) -> Vec<Level> {
    let mut levels = Vec::new();
    let mut width = width;
    loop {
        let slices = width.div_ceil(SELECT_SLICE);
        levels.push(Level { width, slices });
        if slices <= 1 {
            return levels;
        }
        width = slices * k;
    }
}

/// Bytes of scratch memory a selection of the first `rows.limit` keys
/// of `rows` takes: two buffers of candidates, each the first level's
/// keys (of `key_bytes`) and then their columns, each part 256-byte
/// aligned.
fn select_scratch(rows: &Shape, key_bytes: usize) -> usize {
    let candidates = select_candidates(rows);
    2 * ((candidates * key_bytes).next_multiple_of(256) + (candidates * 4).next_multiple_of(256))
}

/// Candidates of a selection's first level, every row's.
fn select_candidates(rows: &Shape) -> usize {
    rows.rows * select_levels(rows.width, rows.limit)[0].slices * rows.limit
}

/// Bits of the columns of rows of `width` keys (0 for one key a row).
fn index_bits(width: usize) -> u32 {
    usize::BITS - width.saturating_sub(1).leading_zeros()
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

/// The pitches of one step 5 pass over rows (elements), and the places
/// of each output row it keeps.
#[derive(Clone, Copy, Debug)]
struct Pitches {
    input: usize,
    keys: usize,
    values: usize,
    limit: usize,
}

fn too_many_rows(rows: &Shape) -> Error {
    Error::InvalidArgument(format!(
        "a sort of {} rows of {} keys needs more blocks than the device's grid holds",
        rows.rows, rows.width
    ))
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

/// What a step 5 pass over `f32` keys reads and writes as their ordered
/// bits where the sort has no NaN: the word that says whether it has (in
/// scratch, written by the histograms; 0 where there is none, as for rows
/// of one tile) and the pass's `carry`.
#[derive(Clone, Copy, Debug)]
struct Carry {
    nan: u64,
    carry: u32,
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
    use warpspeed_gpu::sort::ONESWEEP_ITEMS;

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
    /// 256-byte aligned and none overlapping another it uses: one row or
    /// many, every place kept or the first few.
    #[test]
    fn layout_regions_are_disjoint() {
        let shapes = [1usize, 255, 4096, 4097, 6144, 6145, 1_000_003, PORTION]
            .into_iter()
            .map(Shape::flat)
            .chain(
                [
                    (1, 7, 1),
                    (4096, 3, 50),
                    (4097, 3, 4097),
                    (128_256, 64, 300),
                ]
                .map(|(width, rows, limit)| Shape {
                    width,
                    rows,
                    pitch: width + 5,
                    out_pitch: limit,
                    out_values_pitch: limit + 1,
                    limit,
                }),
            );
        for (rows, sms) in shapes.flat_map(|rows| [(rows, 1), (rows, 132)]) {
            for &variant in SortVariant::ALL {
                if !variant.shape().onesweep && !rows.in_place() {
                    continue;
                }
                let n = rows.keys();
                for key_bytes in [4usize, 8] {
                    for (values, argsort) in [(false, false), (true, false), (true, true)] {
                        let wide = (key_bytes, |_| true);
                        let shape = pass_shape(variant, &rows, wide, values, (sms, HOPPER));
                        let count = passes(shape, &(0..key_bytes as u32 * 8)).len();
                        let l = layout(shape, &rows, key_bytes, values, argsort, count);
                        let tiles = n.div_ceil(shape.tile());
                        let two = !rows.in_place();
                        let mut regions = vec![(l.keys[0], n * key_bytes)];
                        if argsort || two {
                            regions.push((l.keys[1], n * key_bytes));
                        }
                        if values {
                            regions.push((l.values[0], n * 4));
                        }
                        if values && two {
                            regions.push((l.values[1], n * 4));
                        }
                        if shape.onesweep {
                            let words = count * rows.rows * RADIX as usize * 4;
                            // The histograms and their NaN word, where the
                            // kernel writes it.
                            assert_eq!(l.nan, l.counts + words);
                            regions.push((l.counts, words + 4));
                            regions.push((l.bases, words));
                            if rows.tiles_per_row(shape) > 1 {
                                let tiles = rows.rows * rows.tiles_per_row(shape);
                                let words = STATUS_START + tiles * RADIX as usize;
                                regions.push((l.status, words * 4));
                            }
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

    /// Shared memory a block may opt in to on Hopper (227 KiB).
    const HOPPER: u32 = 227 << 10;

    /// Wide tiles are step 5's, for 4-byte keys with values only, from
    /// `WIDE_WAVES` waves of them on, the largest size of which an SM
    /// holds two blocks.
    #[test]
    fn wide_tiles_for_long_sorts_of_pairs() {
        let items = |device: (u32, u32), n: usize| {
            pass_shape(
                SortVariant::Onesweep,
                &Shape::flat(n),
                (4, |_| true),
                true,
                device,
            )
            .items
        };
        let wide = |n: usize, variant: SortVariant, key_bytes: usize, values: bool| {
            let flat = Shape::flat(n);
            let shape = pass_shape(variant, &flat, (key_bytes, |_| true), values, (132, HOPPER));
            assert_eq!(shape.bits, variant.shape().bits);
            shape.items == WIDE_PAIR_ITEMS[0]
        };
        let tile = SortVariant::Onesweep
            .shape()
            .with_items(WIDE_PAIR_ITEMS[0])
            .tile();
        let least = WIDE_WAVES * (WIDE_PAIR_BLOCKS * 132) as usize * tile;
        assert!(wide(least, SortVariant::Onesweep, 4, true));
        assert!(wide(PORTION, SortVariant::Onesweep, 4, true));
        assert!(!wide(least - tile, SortVariant::Onesweep, 4, true));
        // Too few for six waves of the largest, enough for six of the next.
        let next = SortVariant::Onesweep
            .shape()
            .with_items(WIDE_PAIR_ITEMS[1])
            .tile();
        let next_least = WIDE_WAVES * (WIDE_PAIR_BLOCKS * 132) as usize * next;
        assert_eq!(items((132, HOPPER), least - tile), WIDE_PAIR_ITEMS[1]);
        assert_eq!(items((132, HOPPER), next_least), WIDE_PAIR_ITEMS[1]);
        assert_eq!(items((132, HOPPER), next_least - next), ONESWEEP_ITEMS);
        assert!(!wide(least, SortVariant::Onesweep, 4, false));
        assert!(!wide(least, SortVariant::Onesweep, 8, true));
        for &variant in SortVariant::ALL {
            if variant != SortVariant::Onesweep {
                assert!(!wide(PORTION, variant, 4, true));
            }
        }
        // Rows count every row's tiles: 66 rows of 28 tiles of 40 keys a
        // thread are 7 waves of them.
        let width = 28 * tile;
        let rows = Shape {
            rows: 66,
            pitch: width,
            out_pitch: width,
            out_values_pitch: width,
            limit: width,
            width,
        };
        let shape = pass_shape(
            SortVariant::Onesweep,
            &rows,
            (4, |_| true),
            true,
            (132, HOPPER),
        );
        assert_eq!(shape.items, WIDE_PAIR_ITEMS[0]);
        // A key type takes the sizes it has an entry for: `f32` keys 32.
        let f32_keys = (4, |items| wide_entry::<f32>(items).is_some());
        let shape = pass_shape(SortVariant::Onesweep, &rows, f32_keys, true, (132, HOPPER));
        assert_eq!(shape.items, WIDE_PAIR_ITEMS[1]);
        // Their middle passes take the middle entry's 40, where its waves
        // take no more time than 32's (7 waves of 40, 9 of 32 here); no
        // other key type has one.
        let any =
            |items| wide_entry::<f32>(items).is_some() || middle_entry::<f32>(items).is_some();
        let onesweep = (SortVariant::Onesweep, shape);
        let middle = middle_shape(onesweep, &rows, (4, any), true, (132, HOPPER));
        assert_eq!(middle.items, WIDE_PAIR_ITEMS[0]);
        for &items in &WIDE_PAIR_ITEMS {
            let entry = middle_entry::<f32>(items).is_some();
            assert_eq!(entry, items == WIDE_PAIR_ITEMS[0]);
            assert!(middle_entry::<u32>(items).is_none());
        }
        // 2^24 pairs: 6.2 waves of 40 (7 waves' time) against 7.8 of 32
        // (8 waves' time of tiles 0.8 as long): 32. 2^28: 99.3 against
        // 124.1, the same time: 40.
        let flat = |n: usize| {
            let rows = Shape::flat(n);
            let shape = pass_shape(SortVariant::Onesweep, &rows, f32_keys, true, (132, HOPPER));
            assert_eq!(shape.items, WIDE_PAIR_ITEMS[1]);
            middle_shape(
                (SortVariant::Onesweep, shape),
                &rows,
                (4, any),
                true,
                (132, HOPPER),
            )
            .items
        };
        assert_eq!(flat(1 << 24), WIDE_PAIR_ITEMS[1]);
        assert_eq!(flat(1 << 28), WIDE_PAIR_ITEMS[0]);
        // The GPU suite's size for the middle entry: 1 848 tiles of 40,
        // seven waves, against 2 310 of 32, nine waves' time.
        assert_eq!(flat(1848 * 10_240 - 3), WIDE_PAIR_ITEMS[0]);
        assert_eq!(flat(1848 * 10_240 + 1), WIDE_PAIR_ITEMS[1]);
        // A sort without histograms keeps its shape.
        let one = Shape::flat(SortVariant::Onesweep.shape().tile());
        let narrow = SortVariant::Onesweep.shape();
        let kept = middle_shape(
            (SortVariant::Onesweep, narrow),
            &one,
            (4, any),
            true,
            (132, HOPPER),
        );
        assert_eq!(kept, narrow);
        // The H100 and H200 hold two blocks of the largest an SM; the A100
        // (163 KiB a block) two of the next; the RTX 30 and 40 series (99
        // KiB) and Turing (64 KiB) none.
        assert_eq!(items((108, 163 << 10), PORTION), WIDE_PAIR_ITEMS[1]);
        assert_eq!(items((84, 99 << 10), PORTION), ONESWEEP_ITEMS);
        assert_eq!(items((72, 64 << 10), PORTION), ONESWEEP_ITEMS);
        // Integer keys have an entry of each size, `f32` keys of the
        // smaller, `u64` keys none.
        for n in WIDE_PAIR_ITEMS {
            assert!(wide_entry::<u32>(n).is_some());
            assert!(wide_entry::<i32>(n).is_some());
            assert_eq!(wide_entry::<f32>(n).is_some(), n == WIDE_PAIR_ITEMS[1]);
            assert!(wide_entry::<u64>(n).is_none());
        }
    }

    /// A selection's levels end with one slice a row, each reading the
    /// candidates the one before kept, fewer each level.
    #[test]
    fn select_levels_end_in_one_slice() {
        for width in [
            1usize,
            2,
            4095,
            4096,
            4097,
            32_000,
            128_256,
            262_144,
            300_000,
            1 << 31,
        ] {
            for k in [1usize, 2, 50, 255, 256] {
                if k > width {
                    continue;
                }
                let levels = select_levels(width, k);
                assert_eq!(levels[0].width, width);
                assert_eq!(levels.last().unwrap().slices, 1, "{width} {k}");
                for pair in levels.windows(2) {
                    assert_eq!(pair[1].width, pair[0].slices * k);
                    assert!(pair[1].width < pair[0].width);
                }
                for level in &levels {
                    assert_eq!(level.slices, level.width.div_ceil(SELECT_SLICE));
                }
            }
        }
        assert_eq!(select_levels(128_256, 50).len(), 2);
        assert_eq!(select_levels(300_000, 256).len(), 3);
    }

    /// A selection's two buffers of candidates each hold the first
    /// level's keys and then their columns, 256-byte aligned, and the
    /// later levels' fit in them.
    #[test]
    fn select_scratch_holds_the_candidates() {
        for (width, rows) in [
            (1usize, 1usize),
            (32_000, 1),
            (32_000, 8),
            (300_000, 2),
            (1 << 24, 3),
        ] {
            for k in [1usize, 7, 50, 256] {
                if k > width {
                    continue;
                }
                let shape = Shape {
                    width,
                    rows,
                    pitch: width,
                    out_pitch: k,
                    out_values_pitch: k,
                    limit: k,
                };
                for key_bytes in [4usize, 8] {
                    let bytes = select_scratch(&shape, key_bytes);
                    assert!(bytes.is_multiple_of(512));
                    let c = select_candidates(&shape);
                    let keys = (c * key_bytes).next_multiple_of(256);
                    assert!(keys + c * 4 <= bytes / 2, "{width}x{rows} k={k}");
                    for level in select_levels(width, k) {
                        assert!(rows * level.slices * k <= c);
                    }
                }
            }
        }
    }

    /// Columns' bits: enough for the last column, none for one column.
    #[test]
    fn index_bits_cover_the_columns() {
        assert_eq!(index_bits(1), 0);
        assert_eq!(index_bits(2), 1);
        assert_eq!(index_bits(4096), 12);
        assert_eq!(index_bits(4097), 13);
        assert_eq!(index_bits(128_256), 17);
        assert_eq!(index_bits(1 << 32), 32);
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
