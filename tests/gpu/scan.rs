//! Scans (prefix sums), row scans and stream compaction, against CPU
//! references: every ladder step and element type on the edges of the
//! sections (512 to 2048 elements), tiles (4096 four-byte, 2048 eight-byte
//! elements) and look-back windows; every operator, inclusive and
//! exclusive, on the default step; rows of sampling's shapes, pitched and
//! not; views at odd offsets; compaction by flags and by every comparison;
//! inputs past 2^31 and 2^32 elements; many launches on one queue while
//! another works; graph capture; and the refusals of bad arguments.
//!
//! The reference is a sequential fold with the kernels' own
//! `Element::combine`. Integers, min and max are compared exactly (integer
//! sums wrap, and the integer data cover their whole range so that they
//! do; a NaN matches a NaN): since every kernel body is generic over the
//! element type, exact integer results prove the indexing of each step.
//! `f32` sums are compared element by element with an `f64` reference
//! within a bound derived from the depth of the additions (see
//! [`check_f32_sum`]). Every output is poisoned before a run, so an
//! element never written shows, and what lies around an output view must
//! still be poison afterwards.

use crate::common::*;
use libtest_mimic::{Failed, Trial};
use rand::RngExt;
use rand::rngs::StdRng;
use std::ops::Range;
use std::rc::Rc;
use warpspeed::scan::{Compare, Op, Scan, ScanVariant, Scannable};
use warpspeed::{Buffer, Context, DeviceRead, Error, Matrix, MatrixMut, Pending, View, ViewMut};
use warpspeed_gpu::scan::tile_elements;

/// Every step's sizes: the edges of the lessons' sections (512, 1024 and
/// 2048 elements) and of the tiles; 1000 tiles ± 1 (many look-back
/// windows of 32 tiles, a partial last tile); a prime; past 2^24.
const LADDER_SIZES: [usize; 18] = [
    0, 1, 31, 32, 33, 511, 512, 513, 2047, 2048, 2049, 4095, 4096, 4097, 4_095_999, 4_096_001,
    1_000_003, BIG,
];
/// The default step's sizes for every operator: around the first size of
/// wide tiles (2^24 four-byte elements), and one past a whole number of
/// them (2 731 tiles of 6 144).
const OP_SIZES: [usize; 7] = [1, 33, 4097, 1_000_003, (1 << 24) - 1, BIG, 6144 * 2731 + 1];
/// The compactions' sizes.
const COMPACT_SIZES: [usize; 7] = [0, 1, 4095, 4096, 4097, 1_000_003, BIG];
/// The row scans' shapes, (rows, width): sampling's vocabularies, one
/// element, a tile and one more, one column, rows of partial tiles.
const SHAPES: [(usize, usize); 7] = [
    (64, 128_256),
    (8, 32_000),
    (1, 1),
    (1, 4097),
    (4097, 1),
    (3, 5000),
    (256, 4096),
];
/// Sizes scanned back to back on one queue.
const SEQUENCE: [usize; 12] = [
    BIG, 1, 2, 31, 4095, 4096, 4097, 8193, 100_000, 3, 1_000_003, BIG,
];
const BIG: usize = (1 << 24) + 7;

// ---------------------------------------------------------------------
// Element types, references, checks
// ---------------------------------------------------------------------

/// An element type under test: its data, poison and start values.
trait Sample: Scannable + PartialEq + PartialOrd {
    /// Written to outputs before each run; no result of the test data
    /// equals it.
    const POISON: Self;
    /// The values the compactions compare with besides one of the data
    /// (and sprinkle into their data).
    const SPECIALS: &'static [Self];
    /// The starts of the exclusive scans, in `Op`'s order (sum, min, max),
    /// which change the result: 7, a large value, a small one.
    const STARTS: [Self; 3];
    /// A seeded value: `f32` uniform in [-1, 1), integers over their whole
    /// range (sums wrap).
    fn draw(r: &mut StdRng) -> Self;
    fn start(op: Op) -> Self {
        Self::STARTS[op as usize]
    }
    /// The values as `f32`, for `f32` only (its sums are judged within a
    /// bound).
    fn floats(_values: &[Self]) -> Option<&[f32]> {
        None
    }
    fn nan(self) -> bool {
        false
    }
}

macro_rules! integer_sample {
    ($t:ty, $large:expr, $small:expr) => {
        impl Sample for $t {
            const POISON: Self = 0xa5a5_5a5a_a5a5_5a5a_u64 as $t;
            const SPECIALS: &'static [Self] = &[$large];
            const STARTS: [Self; 3] = [7, $large, $small];
            fn draw(r: &mut StdRng) -> Self {
                r.random()
            }
        }
    };
}
integer_sample!(i32, i32::MAX / 2, i32::MIN / 2);
integer_sample!(u32, u32::MAX / 2, 7);
integer_sample!(u64, u64::MAX / 2, 7);

impl Sample for f32 {
    const POISON: Self = -1.0e30;
    const SPECIALS: &'static [Self] = &[f32::NAN, -0.0, 0.0];
    const STARTS: [Self; 3] = [7.0, 0.5, -0.5];
    fn draw(r: &mut StdRng) -> Self {
        draw_f32(r)
    }
    fn floats(values: &[Self]) -> Option<&[f32]> {
        Some(values)
    }
    fn nan(self) -> bool {
        self.is_nan()
    }
}

/// How a scan runs: the step, the operator, inclusive or exclusive.
type How<T> = (ScanVariant, Op, Scan<T>);

fn inclusive_sum<T>(step: ScanVariant) -> How<T> {
    (step, Op::Sum, Scan::Inclusive)
}

/// The CPU reference: a sequential fold with the kernels' `combine`
/// (inclusive: `out[0] = x[0]`; exclusive: `out[0] = start`).
fn reference<T: Sample>(op: Op, scan: Scan<T>, x: &[T]) -> Vec<T> {
    let combine = move |a: T, v: T| T::combine(op, a, v);
    match scan {
        Scan::Inclusive => {
            let fold = |acc: &mut Option<T>, &v: &T| {
                *acc = Some(acc.map_or(v, |a| combine(a, v)));
                *acc
            };
            x.iter().scan(None, fold).collect()
        }
        Scan::Exclusive(start) => {
            let fold = |acc: &mut T, &v: &T| Some(std::mem::replace(acc, combine(*acc, v)));
            x.iter().scan(start, fold).collect()
        }
    }
}

/// Whether `got` is the scan of `x` as `how` says (exact but for `f32`
/// sums); `at` completes the message.
fn check<T: Sample>(how: How<T>, x: &[T], got: &[T], at: &str) -> Result<(), Failed> {
    let (step, op, scan) = how;
    let fail = |e: String| {
        let (name, ty, n) = (step.name(), T::NAME, x.len());
        Failed::from(format!("{name} {ty} {} {scan:?} n={n}{at}: {e}", op.name()))
    };
    if got.len() != x.len() {
        return Err(fail(format!("{} elements", got.len())));
    }
    if let (Op::Sum, Some(xs), Some(gs)) = (op, T::floats(x), T::floats(got)) {
        let start = match scan {
            Scan::Inclusive => None,
            Scan::Exclusive(s) => T::floats(&[s]).map(|s| s[0]),
        };
        return check_f32_sum(start, xs, gs).map_err(fail);
    }
    let want = reference(op, scan, x);
    let wrong = |(&g, &w): (&T, &T)| !(g == w || (g.nan() && w.nan()));
    let Some(i) = got.iter().zip(&want).position(wrong) else {
        return Ok(());
    };
    Err(fail(format!(
        "element {i}: {:?}, want {:?}",
        got[i], want[i]
    )))
}

/// `f32` sums (inclusive, or exclusive from `start`), element by element.
///
/// Output `i` sums `x[0..=i]` (the start and `x[0..i]` when exclusive) in
/// a fixed association whose depth, the most additions any term passes
/// through, is at most `d_i = 256 + ⌈(i + 1) / 2048⌉`: the in-tile trees
/// (a lane's vector, the warp's shuffles, the rounds, the warps: at most
/// about 40 levels; the lessons' sections about as many) once per level
/// of the hierarchy (at most 4 levels at these sizes), plus, for the
/// single-pass steps, the left fold over the preceding tiles' totals (one
/// addition per tile of 4096, fewer than `⌈(i + 1) / 2048⌉`). Summation
/// of depth `d` in any order (Higham, "Accuracy and Stability of
/// Numerical Algorithms", §4.2) gives
/// `|got_i − exact_i| ≤ γ(d_i) · Σ_{j≤i} |x_j|`, `γ(d) = d·u / (1 − d·u)`,
/// `u = 2^-24`, with `exact_i` and the sum of magnitudes in `f64` (whose
/// own error is far below the bound). Where the exact sum is NaN or an
/// infinity, the result must be the same (NaN from the first NaN, or
/// once `+inf` meets `-inf`). The bound is loose at large `i` (an element
/// of the data missing there can hide in it): the integer sums, exact,
/// prove the indexing.
fn check_f32_sum(start: Option<f32>, x: &[f32], got: &[f32]) -> Result<(), String> {
    let u = f64::from(f32::EPSILON) / 2.0;
    let s = f64::from(start.unwrap_or(0.0));
    let (mut exact, mut magnitude) = (s, s.abs());
    for (i, (&v, &g)) in x.iter().zip(got).enumerate() {
        if start.is_none() {
            (exact, magnitude) = (exact + f64::from(v), magnitude + f64::from(v).abs());
        }
        let d = (256 + (i + 1).div_ceil(2048)) as f64;
        let tolerance = d * u / (1.0 - d * u) * magnitude;
        let fine = if exact.is_nan() {
            g.is_nan()
        } else if exact.is_infinite() {
            f64::from(g) == exact
        } else {
            (f64::from(g) - exact).abs() <= tolerance
        };
        if !fine {
            return Err(format!("element {i}: {g}, want {exact} ± {tolerance:e}"));
        }
        if start.is_some() {
            (exact, magnitude) = (exact + f64::from(v), magnitude + f64::from(v).abs());
        }
    }
    Ok(())
}

/// Whether a compaction keeps `e` for `e <compare> v`: IEEE comparisons,
/// as Rust's operators make them (with a NaN only `!=` holds).
fn holds<T: PartialOrd>(compare: Compare, e: T, v: T) -> bool {
    match compare {
        Compare::Less => e < v,
        Compare::LessOrEqual => e <= v,
        Compare::Greater => e > v,
        Compare::GreaterOrEqual => e >= v,
        Compare::Equal => e == v,
        Compare::NotEqual => e != v,
    }
}

/// The elements of `x` that `compare` with `value` keeps, in order.
fn kept<T: Sample>(x: &[T], c: Compare, v: T) -> Vec<T> {
    x.iter().copied().filter(|&e| holds(c, e, v)).collect()
}

/// `Err` naming the first element whose bits differ.
fn same_bits<T: Scannable>(what: &str, got: &[T], want: &[T]) -> Result<(), Failed> {
    let (g, w) = (got.len(), want.len());
    ensure(g == w, || format!("{what}: {g} elements, want {w}"))?;
    let differ = |(g, w): (&T, &T)| g.to_bits64() != w.to_bits64();
    let Some(i) = got.iter().zip(want).position(differ) else {
        return Ok(());
    };
    Err(format!("{what}: element {i} is {:?}, want {:?}", got[i], want[i]).into())
}

/// `Err` unless every element is still the poison.
fn all_poison<T: Sample>(what: &str, got: &[T]) -> Result<(), Failed> {
    let poison = vec![T::POISON; got.len()];
    same_bits(&format!("{what} (poison)"), got, &poison)
}

/// Waits for an enqueued call: its error, or a kernel's, as a failure.
fn wait(call: warpspeed::Result<Pending<'_>>) -> Result<(), Failed> {
    ok(call.and_then(Pending::wait))
}

/// Lets an enqueued call run on; its error, if it was refused.
fn detach(call: warpspeed::Result<Pending<'_>>) -> Result<(), Failed> {
    ok(call.map(Pending::detach))
}

// ---------------------------------------------------------------------
// Every step, every operator
// ---------------------------------------------------------------------

/// The seeded input of `n` elements the ladder and operator trials share.
fn scan_input<T: Sample>(ctx: &Context, n: usize) -> Result<Input<T>, Failed> {
    let key = format!("scan/{}/{n}", T::NAME);
    cached_input(ctx, &key, || random_vec(n, seed_of(&key), T::draw))
}

/// The scan of `x` as `how` says into a new poisoned output, downloaded.
fn run_scan<T: Sample>(
    ctx: &Context,
    (step, op, scan): How<T>,
    x: &impl DeviceRead<Elem = T>,
) -> Result<Vec<T>, Failed> {
    let mut out = filled(ctx, x.len(), T::POISON)?;
    wait(ctx.scan_into(step, op, scan, x, &mut out))?;
    download(ctx, &out)
}

fn scan_and_check<T: Sample>(ctx: &Context, how: How<T>, input: &Input<T>) -> Result<(), Failed> {
    check(how, &input.0, &run_scan(ctx, how, &input.1)?, "")
}

/// The inclusive sum of `n` elements by `step`. Empty: an empty buffer,
/// and an empty view of a one-element buffer into one of another (views
/// with addresses), which stays poison.
fn ladder_case<T: Sample>(ctx: &Context, step: ScanVariant, n: usize) -> Result<(), Failed> {
    if n > 0 {
        return scan_and_check(ctx, inclusive_sum(step), &scan_input::<T>(ctx, n)?);
    }
    let got = run_scan(ctx, inclusive_sum(step), &upload::<T>(ctx, &[])?)?;
    ensure(got.is_empty(), || "an empty scan's output grew".into())?;
    let (one, mut other) = (filled(ctx, 1, T::POISON)?, filled(ctx, 1, T::POISON)?);
    let (x, mut out) = (ok(one.slice(..0))?, ok(other.slice_mut(..0))?);
    wait(ctx.scan_into(step, Op::Sum, Scan::Inclusive, &x, &mut out))?;
    all_poison("around an empty scan", &download(ctx, &other)?)
}

fn push_type<T: Sample>(trials: &mut Vec<Trial>) {
    let ty = T::NAME;
    // `scan::<step>::<type>::inclusive_sum::n=<n>`.
    let cases: Vec<_> = LADDER_SIZES
        .iter()
        .map(|&n| (format!("{ty}::inclusive_sum::n={n}"), n, n))
        .collect();
    ladder_trials::<ScanVariant, usize>(
        trials,
        &cases,
        |_, _| true,
        |ctx, step, &n| ladder_case::<T>(ctx, step, n),
    );
    for n in OP_SIZES {
        for op in Op::ALL {
            for scan in [Scan::Inclusive, Scan::Exclusive(T::start(op))] {
                let kind = ["inclusive", "exclusive"][usize::from(scan != Scan::Inclusive)];
                let name = format!("scan::ops::{ty}::{}_{kind}::n={n}", op.name());
                trials.push(sized_trial(name, n, move |ctx| {
                    scan_and_check(ctx, (ScanVariant::DEFAULT, op, scan), &scan_input(ctx, n)?)
                }));
            }
        }
    }
    for n in COMPACT_SIZES {
        let name = format!("scan::compact::{ty}::n={n}");
        trials.push(sized_trial(name, n, move |ctx| compaction::<T>(ctx, n)));
    }
}

/// The convenience functions: the module's example, and the same bits as
/// `scan_into` with the default step.
fn wrappers(ctx: &Context) -> Result<(), Failed> {
    let x = upload(ctx, &[3u32, 1, 4, 1, 5])?;
    let mut out = filled(ctx, 5, u32::POISON)?;
    wait(ctx.inclusive_scan_into(Op::Sum, &x, &mut out))?;
    let want = [3, 4, 8, 9, 14];
    same("inclusive: element".into(), &download(ctx, &out)?, &want)?;
    wait(ctx.exclusive_scan_into(Op::Sum, 100, &x, &mut out))?;
    let want = [100, 103, 104, 108, 109];
    same("exclusive: element".into(), &download(ctx, &out)?, &want)?;
    let input = scan_input::<f32>(ctx, 1_000_003)?;
    for (op, scan) in [(Op::Sum, Scan::Inclusive), (Op::Min, Scan::Exclusive(0.5))] {
        let mut out = filled(ctx, input.0.len(), f32::POISON)?;
        wait(match scan {
            Scan::Inclusive => ctx.inclusive_scan_into(op, &input.1, &mut out),
            Scan::Exclusive(s) => ctx.exclusive_scan_into(op, s, &input.1, &mut out),
        })?;
        let how = (ScanVariant::DEFAULT, op, scan);
        let by_step = run_scan(ctx, how, &input.1)?;
        same_bits(&format!("{how:?}"), &download(ctx, &out)?, &by_step)?;
        check(how, &input.0, &by_step, "")?;
    }
    Ok(())
}

// ---------------------------------------------------------------------
// f32: determinism, NaN and infinities
// ---------------------------------------------------------------------

/// The order of an `f32` scan's additions depends only on the length:
/// three runs of each single-pass step (whose look-back finds whichever
/// prefix was published first) give the same bits.
fn deterministic(ctx: &Context) -> Result<(), Failed> {
    let input = scan_input::<f32>(ctx, BIG)?;
    for step in [ScanVariant::DecoupledLookback, ScanVariant::Chained] {
        let first = run_scan(ctx, inclusive_sum(step), &input.1)?;
        check(inclusive_sum(step), &input.0, &first, "")?;
        for run in 1..3 {
            let again = run_scan(ctx, inclusive_sum(step), &input.1)?;
            same_bits(&format!("{}, run {run}", step.name()), &again, &first)?;
        }
    }
    Ok(())
}

/// A NaN at `p`; then `+inf` at `p` and `-inf` at `q > p`: every step's
/// sums and the default step's min and max against the (NaN-aware)
/// references, and what that means spelt out.
fn nan_and_infinities(ctx: &Context) -> Result<(), Failed> {
    let n = 1_000_003;
    let base = random_vec(n, seed_of("scan/specials"), draw_f32);
    let mut r = rng(seed_of("scan/specials/at"));
    let (p, q) = (r.random_range(1..n / 2), r.random_range(n / 2..n - 1));
    let mut with_nan = base.clone();
    with_nan[p] = f32::NAN;
    let mut with_infs = base;
    (with_infs[p], with_infs[q]) = (f32::INFINITY, f32::NEG_INFINITY);
    let finite = |v: &[f32]| v.iter().all(|v| v.is_finite());
    let all = |v: &[f32], w: f32| v.iter().all(|&v| v == w || (v.is_nan() && w.is_nan()));
    for (what, host) in [("NaN", with_nan), ("+inf, -inf", with_infs)] {
        let x = upload(ctx, &host)?;
        let input = Rc::new((host, x));
        for &step in ScanVariant::ALL {
            scan_and_check(ctx, inclusive_sum(step), &input)?;
        }
        for op in [Op::Min, Op::Max] {
            for scan in [Scan::Inclusive, Scan::Exclusive(f32::start(op))] {
                scan_and_check(ctx, (ScanVariant::DEFAULT, op, scan), &input)?;
            }
        }
        let run = |op| run_scan(ctx, (ScanVariant::DEFAULT, op, Scan::Inclusive), &input.1);
        let (sum, min, max) = (run(Op::Sum)?, run(Op::Min)?, run(Op::Max)?);
        let fine = if what == "NaN" {
            [&sum, &min, &max]
                .iter()
                .all(|v| finite(&v[..p]) && all(&v[p..], f32::NAN))
        } else {
            finite(&sum[..p])
                && all(&sum[p..q], f32::INFINITY)
                && all(&sum[q..], f32::NAN)
                && all(&max[p..], f32::INFINITY)
                && all(&min[q..], f32::NEG_INFINITY)
        };
        ensure(fine, || format!("{what} at {p}, {q}: not IEEE 754"))?;
    }
    Ok(())
}

// ---------------------------------------------------------------------
// Beyond 2^31 and 2^32 elements (see the tests past 2^31 in `common`)
// ---------------------------------------------------------------------

/// Downloads the `ranges` of `out` and compares them with `want(index)`.
fn check_windows(
    ctx: &Context,
    out: &Buffer<u32>,
    ranges: &[Range<usize>],
    want: impl Fn(usize) -> u32,
    what: &str,
) -> Result<(), Failed> {
    for range in ranges {
        let got = download(ctx, &ok(out.slice(range.clone()))?)?;
        let expected: Vec<u32> = range.clone().map(&want).collect();
        same_bits(&format!("{what}, from {}", range.start), &got, &expected)?;
    }
    Ok(())
}

/// The inclusive sums of `n` ones (a memset: no host copy) by every step,
/// `(i + 1) mod 2^32`, and the exclusive sum from 5 by the default step,
/// `(5 + i) mod 2^32`. 32 GB at 2^32 + 3.
fn ones_past(ctx: &Context, n: usize) -> Result<(), Failed> {
    let x = filled(ctx, n, 1u32)?;
    let mut out = ok(ctx.alloc::<u32>(n))?;
    let ranges = windows(n, &[TWO_31, 1 << 32]);
    let runs = ScanVariant::ALL.iter().map(|&s| (s, Scan::Inclusive));
    for (step, scan) in runs.chain([(ScanVariant::DEFAULT, Scan::Exclusive(5))]) {
        ok(ctx.fill(&mut out, u32::POISON))?;
        wait(ctx.scan_into(step, Op::Sum, scan, &x, &mut out))?;
        let want = |i: usize| match scan {
            Scan::Inclusive => (i + 1) as u32,
            Scan::Exclusive(s) => s.wrapping_add(i as u32),
        };
        let what = format!("{} {scan:?}", step.name());
        check_windows(ctx, &out, &ranges, want, &what)?;
    }
    Ok(())
}

/// Compactions of 2^32 + 3 `u32` (counts past 32 bits): all of a buffer of
/// ones kept, then none; then of the numbers `(i + 1) mod 2^32`, all but
/// the two 2s (elements 1 and 2^32 + 1), by value and by flags. At most
/// 36 GB at once.
fn compact_past_2_32(ctx: &Context) -> Result<(), Failed> {
    let n = (1usize << 32) + 3;
    let ranges = windows(n, &[TWO_31, 1 << 32]);
    let mut numbered = filled(ctx, n, u32::POISON)?;
    {
        let ones = filled(ctx, n, 1u32)?;
        let all = ok(ctx.compact_if(&ones, Compare::Equal, 1, &mut numbered))?;
        ensure(all == n, || format!("kept {all} of {n} ones, want all"))?;
        check_windows(ctx, &numbered, &ranges, |_| 1, "ones")?;
        let none = ok(ctx.compact_if(&ones, Compare::NotEqual, 1, &mut numbered))?;
        ensure(none == 0, || format!("kept {none} of {n} ones, want none"))?;
        wait(ctx.inclusive_scan_into(Op::Sum, &ones, &mut numbered))?;
    }
    // Kept element `j` is element `source(j)`, whose value is its index + 1.
    let source = |j: usize| j + usize::from(j >= 1) + usize::from(j >= 1 << 32);
    let want = |j: usize| (source(j) + 1) as u32;
    let ranges = windows(n - 2, &[TWO_31, 1 << 32]);
    let mut kept = filled(ctx, n, u32::POISON)?;
    let count = ok(ctx.compact_if(&numbered, Compare::NotEqual, 2, &mut kept))?;
    ensure(count == n - 2, || format!("kept {count}, want {}", n - 2))?;
    check_windows(ctx, &kept, &ranges, want, "all but the 2s")?;
    all_poison("past the count", &download(ctx, &ok(kept.slice(n - 2..))?)?)?;

    let mut flags = filled_u8(ctx, n, 3)?;
    put(ctx, &mut flags, 1, &[0])?;
    put(ctx, &mut flags, (1 << 32) + 1, &[0])?;
    let mut count = filled(ctx, 1, u64::MAX)?;
    ok(ctx.fill(&mut kept, u32::POISON))?;
    wait(ctx.compact_flagged_into(&numbered, &flags, &mut kept, &mut count))?;
    let counted = download(ctx, &count)?;
    ensure(counted == [n as u64 - 2], || format!("count {counted:?}"))?;
    check_windows(ctx, &kept, &ranges, want, "flagged")
}

// ---------------------------------------------------------------------
// Row scans and views
// ---------------------------------------------------------------------

/// Every row of an `h × w` matrix scanned with `op`: dense rows,
/// inclusive; then input rows 3 elements apart (odd: rows not 16-byte
/// aligned) into output rows 5 apart, exclusive from a start, the output's
/// gaps still poison. Each row is checked on its own (for `f32` sums, with
/// the bound of [`check_f32_sum`] over the row).
fn rows_case<T: Sample>(ctx: &Context, op: Op, (h, w): (usize, usize)) -> Result<(), Failed> {
    let exclusive = Scan::Exclusive(T::start(op));
    for (gap_in, gap_out, scan) in [(0, 0, Scan::Inclusive), (3, 5, exclusive)] {
        let (pitch_in, pitch_out) = (w + gap_in, w + gap_out);
        let seed = seed_of(&format!("scan/rows/{}/{h}x{w}/{gap_in}", T::NAME));
        let host = random_vec(h * pitch_in, seed, T::draw);
        let x = upload(ctx, &host)?;
        let mut out = filled(ctx, h * pitch_out, T::POISON)?;
        let matrix = ok(Matrix::with_pitch(&x, w, h, pitch_in))?;
        let mut rows = ok(MatrixMut::with_pitch(&mut out, w, h, pitch_out))?;
        wait(ctx.scan_rows_into(op, scan, &matrix, &mut rows))?;
        let got = download(ctx, &out)?;
        for r in 0..h {
            let (row, gap) = got[r * pitch_out..(r + 1) * pitch_out].split_at(w);
            let how = (ScanVariant::DEFAULT, op, scan);
            let at = format!(", {h}×{w}, row {r}");
            check(how, &host[r * pitch_in..r * pitch_in + w], row, &at)?;
            all_poison(&format!("the gap after row {r}"), gap)?;
        }
    }
    Ok(())
}

/// `x[1..n + 1]` into `out[3..n + 3]` (neither 16-byte aligned) by every
/// step: right, and nothing written around the view.
fn odd_views<T: Sample>(ctx: &Context) -> Result<(), Failed> {
    let n = 100_003;
    let host = random_vec(n + 2, seed_of(&format!("scan/views/{}", T::NAME)), T::draw);
    let buffer = upload(ctx, &host)?;
    let x = ok(buffer.slice(1..n + 1))?;
    for &step in ScanVariant::ALL {
        let mut out = filled(ctx, n + 6, T::POISON)?;
        let mut view = ok(out.slice_mut(3..n + 3))?;
        wait(ctx.scan_into(step, Op::Sum, Scan::Inclusive, &x, &mut view))?;
        let got = download(ctx, &out)?;
        let (x_host, view_got) = (&host[1..n + 1], &got[3..n + 3]);
        check(inclusive_sum(step), x_host, view_got, ", odd views")?;
        all_poison("before the view", &got[..3])?;
        all_poison("after the view", &got[n + 3..])?;
    }
    Ok(())
}

// ---------------------------------------------------------------------
// Compaction
// ---------------------------------------------------------------------

/// How a compaction is called: the count comes back from the waiting
/// forms (`Some`), or is written to the count buffer (`None`).
type Compaction<'r, T> =
    &'r dyn Fn(&mut ViewMut<'_, T>, &mut ViewMut<'_, u64>) -> Result<Option<usize>, Failed>;

/// Runs a compaction that must keep `want` into an output of `out_len`
/// elements and a count, each followed by one poisoned element it must
/// not write, and checks the count, the first `out_len` of `want` in
/// order, and poison after them.
fn compacted<T: Sample>(
    ctx: &Context,
    what: &str,
    want: &[T],
    out_len: usize,
    run: Compaction<'_, T>,
) -> Result<(), Failed> {
    let mut out = filled(ctx, out_len + 1, T::POISON)?;
    let mut count = filled(ctx, 2, u64::MAX)?;
    let (mut o, mut c) = (ok(out.slice_mut(..out_len))?, ok(count.slice_mut(..1))?);
    let returned = run(&mut o, &mut c)?;
    let counts = download(ctx, &count)?;
    let (k, written) = (want.len(), returned.map_or(want.len() as u64, |_| u64::MAX));
    let fine = returned.is_none_or(|c| c == k) && counts == [written, u64::MAX];
    ensure(fine, || {
        format!("{what}: count {returned:?} {counts:?}, want {k}")
    })?;
    let got = download(ctx, &out)?;
    let m = k.min(out_len);
    same_bits(what, &got[..m], &want[..m])?;
    all_poison(&format!("{what}: past the kept"), &got[m..])
}

/// Compactions of `n` elements (a sixteenth of them special values: NaN
/// and zeros of both signs for `f32`): by flags keeping none, about half
/// and all (any byte but 0 keeps), into outputs as long as the input and
/// half as long as the count; and by every comparison against an element
/// of the data and each special value. The `_into` forms and the waiting
/// ones.
fn compaction<T: Sample>(ctx: &Context, n: usize) -> Result<(), Failed> {
    let key = format!("scan/compact/{}/{n}", T::NAME);
    let input = cached_input(ctx, &key, || {
        random_vec(n, seed_of(&key), |r| match r.random_ratio(1, 16) {
            true => T::SPECIALS[r.random_range(0..T::SPECIALS.len())],
            false => T::draw(r),
        })
    })?;
    let (host, x) = (&input.0, &input.1);
    for percent in [0, 50, 100] {
        // Any byte but 0 keeps.
        let flags_host = random_vec(n, seed_of(&format!("{key}/{percent}")), |r| {
            u8::from(r.random_range(0..100) < percent) * r.random_range(1..=255)
        });
        let flags = upload(ctx, &flags_host)?;
        let pairs = host.iter().zip(&flags_host);
        let want: Vec<T> = pairs.filter(|&(_, &f)| f != 0).map(|(&v, _)| v).collect();
        let what = format!("{} n={n} flagged {percent}%", T::NAME);
        let into: Compaction<'_, T> =
            &|out, count| wait(ctx.compact_flagged_into(x, &flags, out, count)).map(|()| None);
        let (short, half) = (format!("{what}, short"), want.len() / 2);
        compacted(ctx, &what, &want, n, into)?;
        compacted(ctx, &short, &want, half, into)?;
        let waiting: Compaction<'_, T> =
            &|out, _| ok(ctx.compact_flagged(x, &flags, out)).map(Some);
        compacted(ctx, &what, &want, n, waiting)?;
    }
    let values = host.get(n / 3).into_iter().chain(T::SPECIALS);
    for (k, &value) in values.enumerate() {
        for compare in Compare::ALL {
            let want = kept(host, compare, value);
            let what = format!("{} n={n} {compare:?} {value:?}", T::NAME);
            let into: Compaction<'_, T> = &|out, count| {
                wait(ctx.compact_if_into(x, compare, value, out, count)).map(|()| None)
            };
            compacted(ctx, &what, &want, n, into)?;
            if k == 0 {
                let waiting: Compaction<'_, T> =
                    &|out, _| ok(ctx.compact_if(x, compare, value, out)).map(Some);
                let (short, half) = (format!("{what}, short"), want.len() / 2);
                compacted(ctx, &short, &want, half, waiting)?;
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------
// Many launches: stress, graphs, sequences, the single-pass state
// ---------------------------------------------------------------------

/// 10 000 single-pass scans (both steps in turn) of ones at random sizes
/// and offsets of one input and output, then 1000 compactions at random
/// sizes, while a second queue scans a buffer of its own all along. Every
/// 100th result is checked whole; the others at 16 elements from a random
/// place and the last 16 (each check is a download that waits).
fn stress(ctx: &Context) -> Result<(), Failed> {
    const MAX: usize = 300_000;
    let (sum, inclusive) = (Op::Sum, Scan::Inclusive);
    let scans = if under_sanitizer() { 20 } else { 10_000 };
    let compactions = (scans / 10).max(20);
    let mut r = rng(seed_of("scan/stress"));
    let other = ok(ctx.new_stream())?;
    let twos = filled(&other, 1 << 20, 2u32)?;
    let mut theirs = filled(&other, 1 << 20, u32::POISON)?;
    let mut other_work = |i: usize, last: bool| -> Result<(), Failed> {
        detach(other.inclusive_scan_into(Op::Sum, &twos, &mut theirs))?;
        if i % 100 == 99 || last {
            let got = download(&other, &theirs)?;
            let fine = (0u32..).zip(&got).all(|(k, &v)| v == 2 * k + 2);
            ensure(fine, || format!("the other queue's scan, round {i}"))?;
        }
        Ok(())
    };

    let x = filled(ctx, MAX + 4, 1u32)?;
    let mut out = ok(ctx.alloc::<u32>(MAX + 4))?;
    for i in 0..scans {
        other_work(i, i + 1 == scans)?;
        let n = r.random_range(1..=MAX);
        let (from, to) = (r.random_range(0..4), r.random_range(0..4));
        let step = [ScanVariant::DecoupledLookback, ScanVariant::Chained][i % 2];
        {
            let mut view = ok(out.slice_mut(to..to + n))?;
            ok(ctx.fill(&mut view, u32::POISON))?;
            let input = ok(x.slice(from..from + n))?;
            detach(ctx.scan_into(step, sum, inclusive, &input, &mut view))?;
        }
        let at = r.random_range(0..n);
        let checked = match i % 100 {
            0 => [0..n, 0..0],
            _ => [at..(at + 16).min(n), n.saturating_sub(16)..n],
        };
        for range in checked {
            let got = download(ctx, &ok(out.slice(to + range.start..to + range.end))?)?;
            let want: Vec<u32> = range.clone().map(|k| k as u32 + 1).collect();
            let (name, start) = (step.name(), range.start);
            let what = format!("{name} scan {i}, n={n}: from {start}, element");
            same(what, &got, &want)?;
        }
    }

    let data = random_vec(MAX, seed_of("scan/stress/compact"), |r| r.random::<u32>());
    let xs = upload(ctx, &data)?;
    let mut out = ok(ctx.alloc::<u32>(MAX))?;
    let mut count = ok(ctx.alloc::<u64>(1))?;
    for i in 0..compactions {
        other_work(i, i + 1 == compactions)?;
        let n = r.random_range(1..=MAX);
        let (c, v) = (Compare::ALL[i % 6], data[r.random_range(0..n)]);
        ok(ctx.fill(&mut count, u64::MAX))?;
        let (input, mut view) = (ok(xs.slice(..n))?, ok(out.slice_mut(..n))?);
        detach(ctx.compact_if_into(&input, c, v, &mut view, &mut count))?;
        let want = kept(&data[..n], c, v);
        let got = download(ctx, &count)?[0];
        let what = format!("compaction {i}, n={n}, {c:?} {v}");
        ensure(got == want.len() as u64, || format!("{what}: count {got}"))?;
        if i % 100 == 0 {
            // The kept part only: past it `out` was never written.
            let kept_part = ok(out.slice(..want.len()))?;
            same_bits(&what, &download(ctx, &kept_part)?, &want)?;
        }
    }
    Ok(())
}

/// A graph of two scans and a compaction, launched 1, 2 and 3 times in
/// three rounds with new input before each; the waiting compactions are
/// refused inside the capture (they return a count to the host).
fn graph(ctx: &Context) -> Result<(), Failed> {
    let n = 1_000_003;
    let (mut x, mut xf) = (ok(ctx.alloc::<u32>(n))?, ok(ctx.alloc::<f32>(n))?);
    let (mut sums, mut maxima) = (ok(ctx.alloc::<u32>(n))?, ok(ctx.alloc::<f32>(n))?);
    let (mut out, mut count) = (ok(ctx.alloc::<u32>(n))?, ok(ctx.alloc::<u64>(1))?);
    let flags = filled_u8(ctx, n, 1)?;
    let sum = inclusive_sum(ScanVariant::DEFAULT);
    let max = (ScanVariant::DEFAULT, Op::Max, Scan::Exclusive(-0.5));
    let mut not_refused = Vec::new();
    let graph = ok(ctx.capture(|q| {
        q.inclusive_scan_into(Op::Sum, &x, &mut sums)?.detach();
        q.exclusive_scan_into(Op::Max, -0.5, &xf, &mut maxima)?
            .detach();
        q.compact_if_into(&x, Compare::Less, 1 << 31, &mut out, &mut count)?
            .detach();
        let flagged = q.compact_flagged(&x, &flags, &mut out);
        for r in [flagged, q.compact_if(&x, Compare::Less, 7, &mut out)] {
            if !matches!(r, Err(Error::InCapture { .. })) {
                not_refused.push(format!("{r:?}"));
            }
        }
        Ok(())
    }))?;
    ensure(not_refused.is_empty(), || format!("{not_refused:?}"))?;
    for round in 0..3 {
        let seed = seed_of(&format!("scan/graph/{round}"));
        let host = random_vec(n, seed, |r| r.random::<u32>());
        let host_f = random_vec(n, seed ^ 1, draw_f32);
        ok(ctx.copy_from_host(&host, &mut x))?;
        ok(ctx.copy_from_host(&host_f, &mut xf))?;
        for _ in 0..=round {
            ok(graph.launch(ctx))?.detach();
        }
        let at = format!(", graph round {round}");
        check(sum, &host, &download(ctx, &sums)?, &at)?;
        check(max, &host_f, &download(ctx, &maxima)?, &at)?;
        let want = kept(&host, Compare::Less, 1 << 31);
        let (counted, k) = (download(ctx, &count)?, want.len() as u64);
        ensure(counted == [k], || format!("{at}: count {counted:?}"))?;
        // The kept part only: past it `out` was never written.
        let kept_part = ok(out.slice(..want.len()))?;
        same_bits(&at, &download(ctx, &kept_part)?, &want)?;
    }
    // Outside a capture, the waiting form works on the same queue.
    let all = ok(ctx.compact_flagged(&x, &flags, &mut out))?;
    ensure(all == n, || format!("after the capture: kept {all} of {n}"))
}

/// Scans of many sizes back to back on one queue, waited for only at the
/// end (the single-pass state is reused launch after launch): large, small
/// ones about the tile edges, large again; sums by both single-pass steps
/// and exclusive maxima.
fn in_sequence<T: Sample>(ctx: &Context) -> Result<(), Failed> {
    let input = scan_input::<T>(ctx, BIG)?;
    let max = Scan::Exclusive(T::start(Op::Max));
    let mut outs = Vec::new();
    for (k, n) in SEQUENCE.into_iter().enumerate() {
        let how = match k % 3 {
            0 => inclusive_sum(ScanVariant::DecoupledLookback),
            1 => inclusive_sum(ScanVariant::Chained),
            _ => (ScanVariant::DEFAULT, Op::Max, max),
        };
        let (step, op, scan) = how;
        let (x, mut out) = (ok(input.1.slice(..n))?, filled(ctx, n, T::POISON)?);
        detach(ctx.scan_into(step, op, scan, &x, &mut out))?;
        outs.push((how, out));
    }
    for (k, (how, out)) in outs.iter().enumerate() {
        let got = download(ctx, out)?;
        check(*how, &input.0[..got.len()], &got, &format!(", launch {k}"))?;
    }
    Ok(())
}

/// One queue's single-pass state serves 8-byte statuses (a flag word, then
/// the aggregate and the inclusive prefix in words of their own) and then
/// 4-byte ones (flag and value in one word), for a scan and a compaction:
/// words left by the first launch must not read as statuses of the
/// second. On a new queue the first launch runs in epoch 0 and leaves
/// every tile's inclusive prefix 6 = 4·1 + 2 in a word the second launch
/// (epoch 1, as many tiles as the first has words) reads as a tile's flag:
/// that of an inclusive prefix of epoch 1, were it taken for one.
fn state_reuse(ctx: &Context) -> Result<(), Failed> {
    let failures: Vec<String> = [false, true]
        .into_iter()
        .filter_map(|compaction| after_a_wide_scan(ctx, compaction).err())
        .map(|e| e.message().unwrap_or_default().to_string())
        .collect();
    ensure(failures.is_empty(), || failures.join("; "))
}

/// On a new queue, an 8-byte scan of 1024 tiles (inclusive prefixes all
/// 6), then a 4-byte scan (or compaction) of 3072 tiles.
fn after_a_wide_scan(ctx: &Context, compaction: bool) -> Result<(), Failed> {
    let q = ok(ctx.new_stream())?;
    let mut six = vec![0u64; 1024 * tile_elements(8, warpspeed_gpu::scan::TILE_VECTORS)];
    six[0] = 6;
    let got = run_scan(&q, inclusive_sum(ScanVariant::DEFAULT), &upload(&q, &six)?)?;
    ensure(got.iter().all(|&v| v == 6), || "the 8-byte scan".into())?;
    let n = 3072 * tile_elements(4, warpspeed_gpu::scan::TILE_VECTORS) - 5;
    let numbers: Vec<u32> = (1..=n as u32).collect();
    let (x, sum) = (upload(&q, &numbers)?, inclusive_sum(ScanVariant::DEFAULT));
    if !compaction {
        let got = run_scan(&q, sum, &x)?;
        return check(sum, &numbers, &got, ", after an 8-byte scan");
    }
    let mut out = filled(&q, n, u32::POISON)?;
    let count = ok(q.compact_if(&x, Compare::NotEqual, 1000, &mut out))?;
    ensure(count == n - 1, || format!("compaction: count {count}"))?;
    let (got, want) = (download(&q, &out)?, kept(&numbers, Compare::NotEqual, 1000));
    same_bits("compaction after an 8-byte scan", &got[..n - 1], &want)
}

// ---------------------------------------------------------------------
// Refusals
// ---------------------------------------------------------------------

/// Passes if `$r` is the error `Error::$variant`, an argument error
/// (returned before any launch).
macro_rules! refused {
    ($r:expr, $variant:ident, $what:expr) => {{
        let (r, what) = ($r, $what);
        let want = stringify!($variant);
        ensure(matches!(r, Err(Error::$variant { .. })), || {
            format!("{what}: want {want}, got {r:?}")
        })?;
        expect_invalid(r, &what)?;
    }};
}

fn refusals(ctx: &Context) -> Result<(), Failed> {
    let (sum, inclusive, default) = (Op::Sum, Scan::Inclusive, ScanVariant::DEFAULT);
    let numbers: Vec<u32> = (0..1000).collect();
    let x = upload(ctx, &numbers)?;
    let mut out = filled(ctx, 1000, u32::POISON)?;
    let mut short = filled(ctx, 999, u32::POISON)?;
    let r = ctx.scan_into(default, sum, inclusive, &x, &mut short);
    refused!(r, LengthMismatch, "an output one short");
    let r = ctx.inclusive_scan_into(sum, &ok(x.slice(..998))?, &mut short);
    refused!(r, LengthMismatch, "an output one long");
    for &step in ScanVariant::ALL.iter().filter(|&&s| s != default) {
        for op in [Op::Min, Op::Max] {
            let r = ctx.scan_into(step, op, inclusive, &x, &mut out);
            refused!(r, Unsupported, format!("{} of {}", op.name(), step.name()));
        }
        let what = format!("an exclusive sum of {}", step.name());
        let r = ctx.scan_into(step, sum, Scan::Exclusive(0), &x, &mut out);
        refused!(r, Unsupported, what);
    }
    let matrix = ok(Matrix::new(&x, 100, 10))?;
    let mut transposed = ok(MatrixMut::new(&mut out, 10, 100))?;
    let r = ctx.scan_rows_into(sum, inclusive, &matrix, &mut transposed);
    refused!(r, ShapeMismatch, "a row scan into the transposed shape");
    let (short_flags, flags) = (filled_u8(ctx, 999, 1)?, filled_u8(ctx, 1000, 1)?);
    let mut count = filled(ctx, 1, u64::MAX)?;
    let r = ctx.compact_flagged_into(&x, &short_flags, &mut out, &mut count);
    refused!(r, LengthMismatch, "flags one short");
    let r = ctx.compact_flagged(&x, &short_flags, &mut out);
    refused!(r, LengthMismatch, "flags one short (waiting)");
    let mut no_count = ok(ctx.alloc::<u64>(0))?;
    let r = ctx.compact_flagged_into(&x, &flags, &mut out, &mut no_count);
    refused!(r, LengthMismatch, "flagged, an empty count");
    let r = ctx.compact_if_into(&x, Compare::Less, 5, &mut out, &mut no_count);
    refused!(r, LengthMismatch, "by comparison, an empty count");

    // Outputs over inputs: only unsafe code can make them.
    let (base, device) = (x.device_address(), x.device());
    // SAFETY: views inside the live, 256-byte aligned `x` (1000 u32) and
    // `flags` (1000 bytes), aligned to their elements, which outlive them
    // (kept to the end of the function); they are only passed to calls
    // that must refuse them before any launch, and had one launched, the
    // refusal check's drop of its `Pending` waits for the stream before
    // the buffers are read again (on the same stream) or freed.
    let (mut inside, mut count_inside, mut on_flags) = unsafe {
        (
            ViewMut::<u32>::from_raw_parts(base + 50 * 4, 100, device),
            ViewMut::<u64>::from_raw_parts(base + 8, 1, device),
            ViewMut::<u32>::from_raw_parts(flags.device_address(), 100, device),
        )
    };
    let head = ok(x.slice(..100))?;
    let r = ctx.scan_into(default, sum, inclusive, &head, &mut inside);
    refused!(r, InvalidArgument, "a scan's output inside its input");
    let matrix = ok(Matrix::new(&head, 10, 10))?;
    let mut over = ok(MatrixMut::new(&mut inside, 10, 10))?;
    let r = ctx.scan_rows_into(sum, inclusive, &matrix, &mut over);
    refused!(r, InvalidArgument, "a row scan's output inside its input");
    let r = ctx.compact_if_into(&head, Compare::Less, 5, &mut inside, &mut count);
    refused!(r, InvalidArgument, "a compaction's output inside its input");
    let r = ctx.compact_if(&head, Compare::Less, 5, &mut inside);
    refused!(r, InvalidArgument, "output in input (waiting)");
    let r = ctx.compact_if_into(&x, Compare::Less, 5, &mut out, &mut count_inside);
    refused!(r, InvalidArgument, "a compaction's count inside its input");
    let r = ctx.compact_flagged_into(&head, &ok(flags.slice(..100))?, &mut on_flags, &mut count);
    refused!(r, InvalidArgument, "a compaction's output over its flags");
    // SAFETY: as above, but 2 bytes into `x`: not aligned to its elements,
    // against `View::from_raw_parts`'s contract; the scan must refuse it
    // (as the reductions do) before any access.
    let crooked = unsafe { View::<u32>::from_raw_parts(base + 2, 10, device) };
    let mut ten = ok(out.slice_mut(..10))?;
    let r = ctx.scan_into(default, sum, inclusive, &crooked, &mut ten);
    refused!(r, Misaligned, "a misaligned input");
    let r = ctx.compact_if_into(&crooked, Compare::Less, 5, &mut ten, &mut count);
    refused!(r, Misaligned, "a compaction's misaligned input");

    // Nothing was written, and the queue still works.
    all_poison("an output of refused calls", &download(ctx, &out)?)?;
    let counted = download(ctx, &count)?;
    ensure(counted == [u64::MAX], || "count written".into())?;
    let (sum_all, got) = (
        inclusive_sum(default),
        run_scan(ctx, inclusive_sum(default), &x)?,
    );
    check(sum_all, &numbers, &got, ", after refusals")
}

pub fn trials(trials: &mut Vec<Trial>) {
    push_type::<f32>(trials);
    push_type::<i32>(trials);
    push_type::<u32>(trials);
    push_type::<u64>(trials);
    type Rows = fn(&Context, (usize, usize)) -> Result<(), Failed>;
    let rows: [(&str, Rows); 3] = [
        ("f32_sum", |c, s| rows_case::<f32>(c, Op::Sum, s)),
        ("u32_sum", |c, s| rows_case::<u32>(c, Op::Sum, s)),
        ("i32_max", |c, s| rows_case::<i32>(c, Op::Max, s)),
    ];
    for (h, w) in SHAPES {
        for (what, case) in rows {
            let name = format!("scan::rows::{what}::{h}x{w}");
            trials.push(sized_trial(name, h * (w + 5), move |ctx| case(ctx, (h, w))));
        }
    }
    // Each with the size of its largest input (skipped above
    // `WARPSPEED_TEST_MAX_N`).
    type Body = fn(&Context) -> Result<(), Failed>;
    let past = (1 << 32) + 3;
    let others: [(&str, usize, Body); 14] = [
        ("wrappers", 1_000_003, wrappers),
        ("f32::same_input_same_bits", BIG, deterministic),
        ("f32::nan_and_infinities", 1_000_003, nan_and_infinities),
        ("views_at_odd_offsets::f32", 100_009, odd_views::<f32>),
        ("views_at_odd_offsets::u64", 100_009, odd_views::<u64>),
        ("stress", 1 << 20, stress),
        ("graph", 1_000_003, graph),
        ("sizes_in_sequence::u32", BIG, in_sequence::<u32>),
        ("sizes_in_sequence::u64", BIG, in_sequence::<u64>),
        ("state_across_element_sizes", 3 << 22, state_reuse),
        ("refuses_bad_arguments", 1000, refusals),
        ("u32_past_2_31", TWO_31 + 3, |c| ones_past(c, TWO_31 + 3)),
        ("u32_past_2_32", past, |c| ones_past(c, (1 << 32) + 3)),
        ("compact_past_2_32", past, compact_past_2_32),
    ];
    for (name, n, body) in others {
        trials.push(sized_trial(format!("scan::{name}"), n, body));
    }
}
