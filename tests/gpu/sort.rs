//! Radix sorts against CPU references: every ladder step on the edges of
//! its tiles; every key type, ascending and descending, keys, pairs and
//! `argsort` on the default step; data that are all equal, sorted,
//! reversed, of few values, or differ only in their top or bottom bits;
//! `f32` with ±0, NaNs, ±∞ and subnormals; bit ranges; inputs past one
//! portion and past 2^31 keys; many sorts on one queue while another
//! works; the rows of a pitched matrix, sorted, their top-k (every path:
//! one selection level, several, and the sort for large `k`), argmax and
//! argmin, ties included; and the refusals of bad arguments.
//!
//! The reference is a stable sort of the indices by the key's ordered bits
//! within the bit range (`SortKey::ordered`, the order the guide
//! documents), so keys are compared bit for bit (a NaN's payload
//! included) and values exactly. Large inputs are checked without a CPU
//! sort: the output keys are in order, each output value is the index of
//! its key in the input, equal keys keep their indices in order, and the
//! indices are a permutation.

use crate::common::*;
use libtest_mimic::{Failed, Trial};
use rand::RngExt;
use rand::rngs::StdRng;
use std::ops::Range;
use warpspeed::sort::{Sort, SortVariant, Sortable};
use warpspeed::{Context, Error, Matrix, MatrixMut, Pending};
use warpspeed_gpu::sort::WIDE_PAIR_ITEMS;

/// Sizes every step sorts: the edges of the lessons' 256-key tiles and of
/// the 4 096-key tiles, many tiles, a prime past 2^20.
const LADDER_SIZES: [usize; 12] = [
    0, 1, 2, 255, 256, 257, 4095, 4096, 4097, 65_537, 1_000_003, BIG,
];
/// The default step's sizes for every key type and direction.
const DEFAULT_SIZES: [usize; 5] = [1, 33, 4097, 1_000_003, BIG];
const BIG: usize = (1 << 24) + 7;
/// `f32` pairs whose middle passes take their own entry in wide tiles of
/// 40 keys a thread on a GPU of 132 SMs (the H100 and H200): 1 848 such
/// tiles, seven waves of two blocks an SM, against 8.75 waves of 32
/// (nine waves' time of tiles 0.8 as long). `BIG` keeps 32 throughout.
const MIDDLE: usize = 1848 * 10_240 - 3;

/// A key type under test.
trait Key: Sortable + Copy + PartialEq + std::fmt::Debug {
    /// The key's bits, for comparing bit for bit.
    fn bits(self) -> u64;
    /// Seeded keys over the whole range (`f32`: uniform in [-1, 1), with
    /// the special values sprinkled in).
    fn draw(r: &mut StdRng) -> Self;
    /// As [`Key::draw`], without NaN.
    fn draw_number(r: &mut StdRng) -> Self {
        Self::draw(r)
    }
    /// A key from a small integer (the patterned data).
    fn from_small(v: u64) -> Self;
    /// A key whose ordered bits are only in the top (or bottom) 8 bits.
    fn top_bits(v: u8) -> Self;
    fn bottom_bits(v: u8) -> Self;
    /// A negative NaN with a payload (`f32`); a key like any other for
    /// the integers.
    fn negative_nan() -> Self {
        Self::from_small(3)
    }
}

impl Key for u32 {
    fn bits(self) -> u64 {
        self as u64
    }
    fn draw(r: &mut StdRng) -> Self {
        r.random()
    }
    fn from_small(v: u64) -> Self {
        v as u32
    }
    fn top_bits(v: u8) -> Self {
        (v as u32) << 24
    }
    fn bottom_bits(v: u8) -> Self {
        v as u32
    }
}

impl Key for i32 {
    fn bits(self) -> u64 {
        self as u32 as u64
    }
    fn draw(r: &mut StdRng) -> Self {
        r.random()
    }
    fn from_small(v: u64) -> Self {
        v as i32 - 1000
    }
    fn top_bits(v: u8) -> Self {
        ((v as u32) << 24) as i32
    }
    fn bottom_bits(v: u8) -> Self {
        v as i32
    }
}

/// `f32` values every `f32` input holds some of.
const F32_SPECIALS: [u32; 12] = [
    0x0000_0000, // +0
    0x8000_0000, // -0
    0x7f80_0000, // +inf
    0xff80_0000, // -inf
    0x7fc0_0000, // NaN
    0xffc0_0001, // negative NaN with a payload
    0x7f80_0001, // signalling NaN
    0x0000_0001, // smallest subnormal
    0x8000_0001,
    0x007f_ffff, // largest subnormal
    0x0080_0000, // smallest normal
    0xff7f_ffff, // most negative finite
];

impl Key for f32 {
    fn bits(self) -> u64 {
        self.to_bits() as u64
    }
    fn draw(r: &mut StdRng) -> Self {
        if r.random_range(0..64) == 0 {
            f32::from_bits(F32_SPECIALS[r.random_range(0..F32_SPECIALS.len())])
        } else {
            draw_f32(r)
        }
    }
    fn draw_number(r: &mut StdRng) -> Self {
        let x = Self::draw(r);
        if x.is_nan() { draw_f32(r) } else { x }
    }
    fn negative_nan() -> Self {
        f32::from_bits(0xffc0_1234)
    }
    fn from_small(v: u64) -> Self {
        v as f32 - 1000.0
    }
    fn top_bits(v: u8) -> Self {
        // Ordered bits `v << 24`: a positive float has them with the sign
        // bit set, a negative one inverted.
        let o = (v as u32) << 24;
        f32::from_bits(if o >> 31 == 1 { o & 0x7fff_ffff } else { !o })
    }
    fn bottom_bits(v: u8) -> Self {
        f32::from_bits(v as u32)
    }
}

impl Key for u64 {
    fn bits(self) -> u64 {
        self
    }
    fn draw(r: &mut StdRng) -> Self {
        r.random()
    }
    fn from_small(v: u64) -> Self {
        v
    }
    fn top_bits(v: u8) -> Self {
        (v as u64) << 56
    }
    fn bottom_bits(v: u8) -> Self {
        v as u64
    }
}

/// The test data's shapes.
#[derive(Clone, Copy, Debug)]
enum Data {
    Random,
    AllEqual,
    Sorted,
    Reversed,
    FewValues,
    TopBits,
    BottomBits,
    /// Random, with NaNs (`f32`) only in every third run of 10 240 keys
    /// (one of one-sweep's largest wide tiles of pairs, two and a half of
    /// its tiles of keys): a tile without NaN holds its keys as radix
    /// bits, one with NaN does not, and a sort meets both.
    NanTiles,
    /// Random without NaN (`f32`: every other class): one-sweep's passes
    /// carry the keys' ordered bits between them.
    Numbers,
    /// As `Numbers`, but the last key a negative NaN: the histogram must
    /// see it (its slice's last keys are counted one by one), or the
    /// carried bits would sort it first.
    LastNan,
}

impl Data {
    const ALL: [Data; 8] = [
        Data::Random,
        Data::AllEqual,
        Data::Sorted,
        Data::Reversed,
        Data::FewValues,
        Data::TopBits,
        Data::BottomBits,
        Data::NanTiles,
    ];

    fn keys<K: Key>(self, n: usize, seed: u64) -> Vec<K> {
        match self {
            Data::Random => random_vec(n, seed, K::draw),
            Data::AllEqual => vec![K::from_small(7); n],
            Data::Sorted => (0..n as u64).map(K::from_small).collect(),
            Data::Reversed => (0..n as u64).rev().map(K::from_small).collect(),
            Data::FewValues => random_vec(n, seed, |r| K::from_small(r.random_range(0..5))),
            Data::TopBits => random_vec(n, seed, |r| K::top_bits(r.random())),
            Data::BottomBits => random_vec(n, seed, |r| K::bottom_bits(r.random())),
            Data::NanTiles => {
                let shape = SortVariant::Onesweep.shape();
                let run = shape
                    .tile()
                    .max(shape.with_items(WIDE_PAIR_ITEMS[0]).tile());
                let mut r = rng(seed);
                (0..n)
                    .map(|i| {
                        if (i / run) % 3 == 1 {
                            K::draw(&mut r)
                        } else {
                            K::draw_number(&mut r)
                        }
                    })
                    .collect()
            }
            Data::Numbers => random_vec(n, seed, K::draw_number),
            Data::LastNan => {
                let mut keys: Vec<K> = random_vec(n, seed, K::draw_number);
                if let Some(last) = keys.last_mut() {
                    *last = K::negative_nan();
                }
                keys
            }
        }
    }
}

/// The bits of `key` a sort by `sort` orders by.
fn sort_bits<K: Key>(key: K, descending: bool, range: &Range<u32>) -> u64 {
    let width = range.end - range.start;
    let mask = if width == 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    };
    (key.ordered(descending) >> range.start) & mask
}

/// The stable order of `keys` as `sort` says: the input index of each
/// output place. (Each key's bits beside its index, sorted: no two pairs
/// are equal, so the unstable sort gives the stable order, without the
/// comparisons' reads of `keys` in random order.)
fn reference<K: Key>(keys: &[K], descending: bool, range: &Range<u32>) -> Vec<u32> {
    let mut pairs: Vec<(u64, u32)> = keys
        .iter()
        .enumerate()
        .map(|(i, &key)| (sort_bits(key, descending, range), i as u32))
        .collect();
    pairs.sort_unstable();
    pairs.into_iter().map(|(_, i)| i).collect()
}

fn full_range<K: Key>(sort: &Sort) -> Range<u32> {
    sort.bits.clone().unwrap_or(0..K::BYTES * 8)
}

/// Compares a sort's outputs with the reference `order` of `keys`.
fn check_outputs<K: Key>(
    what: &str,
    (keys, order): (&[K], &[u32]),
    got_keys: Option<&[K]>,
    got_values: Option<&[u32]>,
    values: Option<&[u32]>,
) -> Result<(), Failed> {
    if let Some(got) = got_keys {
        let want: Vec<u64> = order.iter().map(|&i| keys[i as usize].bits()).collect();
        let got: Vec<u64> = got.iter().map(|k| k.bits()).collect();
        same(format!("{what}: key"), &got, &want)?;
    }
    match (got_values, values) {
        (Some(got), Some(v)) => {
            let want: Vec<u32> = order.iter().map(|&i| v[i as usize]).collect();
            same(format!("{what}: value"), got, &want)?;
        }
        (Some(got), None) => same(format!("{what}: value"), got, order)?,
        (None, _) => {}
    }
    Ok(())
}

/// Checks an argsort of `keys` (or the values of a pair sort whose values
/// were the indices) without a CPU sort: in order, each index's key the
/// output key, equal keys' indices rising, a permutation.
fn check_permutation<K: Key>(
    what: &str,
    keys: &[K],
    sort: &Sort,
    got_keys: Option<&[K]>,
    indices: &[u32],
) -> Result<(), Failed> {
    let range = full_range::<K>(sort);
    let mut seen = vec![false; keys.len()];
    let mut previous: Option<(u64, u32)> = None;
    for (place, &i) in indices.iter().enumerate() {
        let Some(&key) = keys.get(i as usize) else {
            return Err(format!("{what}: place {place} holds index {i}").into());
        };
        ensure(!std::mem::replace(&mut seen[i as usize], true), || {
            format!("{what}: index {i} twice")
        })?;
        if let Some(got) = got_keys {
            ensure(got[place].bits() == key.bits(), || {
                format!(
                    "{what}: place {place} key {:?}, its index's {key:?}",
                    got[place]
                )
            })?;
        }
        let b = sort_bits(key, sort.descending, &range);
        if let Some((pb, pi)) = previous {
            ensure(pb < b || (pb == b && pi < i), || {
                format!("{what}: places {} and {place} out of order", place - 1)
            })?;
        }
        previous = Some((b, i));
    }
    Ok(())
}

/// Waits for a call's work (the suite checks results right after).
fn wait(p: warpspeed::Result<Pending<'_>>) -> Result<(), Failed> {
    ok(ok(p)?.wait())
}

/// Keys, pairs and argsort of `data` with `variant`, checked.
fn sort_all<K: Key>(
    ctx: &Context,
    variant: SortVariant,
    sort: &Sort,
    keys: &[K],
    what: &str,
) -> Result<(), Failed> {
    let n = keys.len();
    // One reference for the three sorts below.
    let order = reference(keys, sort.descending, &full_range::<K>(sort));
    let reference = (keys, &order[..]);
    let x = upload(ctx, keys)?;
    let mut out = poisoned(ctx, n, K::from_small(12345))?;
    wait(ctx.sort_keys_with(variant, sort, &x, &mut out))?;
    check_outputs(
        &format!("{what} keys"),
        reference,
        Some(&download(ctx, &out)?),
        None,
        None,
    )?;

    let values: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761))
        .collect();
    let v = upload(ctx, &values)?;
    let mut out_values = poisoned(ctx, n, u32::MAX)?;
    let mut out = poisoned(ctx, n, K::from_small(12345))?;
    wait(ctx.sort_pairs_with(variant, sort, &x, &v, &mut out, &mut out_values))?;
    let (got_keys, got_values) = (download(ctx, &out)?, download(ctx, &out_values)?);
    check_outputs(
        &format!("{what} pairs"),
        reference,
        Some(&got_keys),
        Some(&got_values),
        Some(&values),
    )?;
    if variant == SortVariant::DEFAULT {
        let mut indices = poisoned(ctx, n, u32::MAX)?;
        wait(ctx.argsort_into(sort, &x, &mut indices))?;
        let got = download(ctx, &indices)?;
        check_outputs(
            &format!("{what} argsort"),
            reference,
            None,
            Some(&got),
            None,
        )?;
    }
    Ok(())
}

fn ladder_case(ctx: &Context, variant: SortVariant, n: usize) -> Result<(), Failed> {
    let seed = seed_of(&format!("sort/ladder/{n}"));
    let keys: Vec<u32> = Data::Random.keys(n, seed);
    sort_all(
        ctx,
        variant,
        &Sort::ascending(),
        &keys,
        &format!("{} n={n}", variant.name()),
    )?;
    let keys: Vec<f32> = Data::Random.keys(n.min(70_000), seed);
    sort_all(
        ctx,
        variant,
        &Sort::descending(),
        &keys,
        &format!("{} f32 desc", variant.name()),
    )
}

fn typed_case<K: Key>(ctx: &Context, n: usize, data: Data) -> Result<(), Failed> {
    let keys: Vec<K> = data.keys(n, seed_of(&format!("sort/{}/{n}/{data:?}", K::NAME)));
    for sort in [Sort::ascending(), Sort::descending()] {
        let what = format!("{} {data:?} n={n} descending={}", K::NAME, sort.descending);
        sort_all(ctx, SortVariant::DEFAULT, &sort, &keys, &what)?;
    }
    Ok(())
}

fn bit_ranges(ctx: &Context) -> Result<(), Failed> {
    let n = 100_003;
    let keys: Vec<u32> = Data::Random.keys(n, seed_of("sort/bits/u32"));
    for range in [0..16, 8..24, 31..32, 0..1, 5..13, 0..9, 24..32] {
        for variant in SortVariant::ALL {
            let sort = Sort::ascending().bits(range.clone());
            let what = format!("u32 bits {range:?} {}", variant.name());
            sort_all(ctx, *variant, &sort, &keys, &what)?;
        }
    }
    let keys: Vec<u64> = Data::Random.keys(n, seed_of("sort/bits/u64"));
    for range in [0..64, 32..64, 0..33, 60..64] {
        let sort = Sort::descending().bits(range.clone());
        sort_all(
            ctx,
            SortVariant::DEFAULT,
            &sort,
            &keys,
            &format!("u64 bits {range:?}"),
        )?;
    }
    for data in [Data::Random, Data::NanTiles, Data::Numbers] {
        let keys: Vec<f32> = data.keys(n, seed_of("sort/bits/f32"));
        for sort in [
            Sort::ascending().bits(16..32),
            Sort::descending().bits(5..29),
        ] {
            let what = format!(
                "f32 {data:?} bits {:?} descending={}",
                sort.bits, sort.descending
            );
            sort_all(ctx, SortVariant::DEFAULT, &sort, &keys, &what)?;
        }
    }
    Ok(())
}

/// Random `u32` keys of `n`, sorted as pairs with their indices, checked
/// without a CPU sort.
fn large(ctx: &Context, n: usize, seed: &str) -> Result<(), Failed> {
    let keys: Vec<u32> = random_vec(n, seed_of(seed), |r| r.random::<u32>() >> 8);
    let x = upload(ctx, &keys)?;
    let mut out = ok(ctx.alloc::<u32>(n))?;
    let mut indices = ok(ctx.alloc::<u32>(n))?;
    let sort = Sort::ascending();
    wait(ctx.argsort_into(&sort, &x, &mut indices))?;
    check_permutation(seed, &keys, &sort, None, &download(ctx, &indices)?)?;
    wait(ctx.sort_into(&x, &mut out))?;
    let got = download(ctx, &out)?;
    ensure(got.windows(2).all(|w| w[0] <= w[1]), || {
        format!("{seed}: keys out of order")
    })
}

/// 2^31 + 3 keys (past one-sweep's portion: the coarsened step sorts
/// them), reversed: the sort is the identity of
/// the values `0..n`, and the argsort's indices run down from `n - 1`.
fn past_two_31(ctx: &Context) -> Result<(), Failed> {
    let n = TWO_31 + 3;
    let keys: Vec<u32> = (0..n as u32).rev().collect();
    let x = upload(ctx, &keys)?;
    drop(keys);
    let mut out = ok(ctx.alloc::<u32>(n))?;
    wait(ctx.sort_into(&x, &mut out))?;
    let got = download(ctx, &out)?;
    if let Some(i) = (0..n).find(|&i| got[i] != i as u32) {
        return Err(format!("2^31 + 3: place {i} holds {}", got[i]).into());
    }
    drop(got);
    wait(ctx.argsort_into(&Sort::ascending(), &x, &mut out))?;
    let got = download(ctx, &out)?;
    if let Some(i) = (0..n).find(|&i| got[i] != (n - 1 - i) as u32) {
        return Err(format!("2^31 + 3 argsort: place {i} holds {}", got[i]).into());
    }
    Ok(())
}

/// Many sorts of random sizes on one queue while another queue sorts
/// too: a wrong look-back or a hang shows.
fn stress(ctx: &Context) -> Result<(), Failed> {
    const MAX: usize = 300_000;
    let sorts = if under_sanitizer() { 20 } else { 10_000 };
    let mut r = rng(seed_of("sort/stress"));
    let keys: Vec<u32> = random_vec(MAX, seed_of("sort/stress/keys"), |r| r.random());
    let x = upload(ctx, &keys)?;
    let mut indices = ok(ctx.alloc::<u32>(MAX))?;
    let other = ok(ctx.new_stream())?;
    let theirs_in = upload(&other, &keys)?;
    let mut theirs = ok(other.alloc::<u32>(MAX))?;
    for i in 0..sorts {
        ok(other
            .sort_into(&theirs_in, &mut theirs)
            .map(Pending::detach))?;
        let n = r.random_range(1..=MAX);
        let sort = if i % 2 == 0 {
            Sort::ascending()
        } else {
            Sort::descending()
        };
        let input = ok(x.slice(..n))?;
        let mut view = ok(indices.slice_mut(..n))?;
        ok(ctx
            .argsort_into(&sort, &input, &mut view)
            .map(Pending::detach))?;
        if i % 50 == 0 || i + 1 == sorts {
            let got = download(ctx, &ok(indices.slice(..n))?)?;
            check_permutation(&format!("stress {i} n={n}"), &keys[..n], &sort, None, &got)?;
        }
    }
    let got = download(&other, &theirs)?;
    let mut want = keys.clone();
    want.sort_unstable();
    same("the other queue's sort, place".into(), &got, &want)
}

fn refusals(ctx: &Context) -> Result<(), Failed> {
    let x = filled(ctx, 100, 1u32)?;
    let mut short = ok(ctx.alloc::<u32>(99))?;
    match ctx.sort_into(&x, &mut short) {
        Err(Error::LengthMismatch { .. }) => {}
        other => return Err(format!("short output: {other:?}").into()),
    }
    let mut out = ok(ctx.alloc::<u32>(100))?;
    for bits in [0..0, Range { start: 5, end: 3 }, 0..33, 32..33] {
        let sort = Sort::ascending().bits(bits.clone());
        let r = ctx.sort_keys_with(SortVariant::DEFAULT, &sort, &x, &mut out);
        expect_invalid(r, &format!("bits {bits:?}"))?;
    }
    let mut indices = ok(ctx.alloc::<u32>(101))?;
    match ctx.argsort_into(&Sort::ascending(), &x, &mut indices) {
        Err(Error::LengthMismatch { .. }) => {}
        other => return Err(format!("argsort's indices too long: {other:?}").into()),
    }
    let mut small_values = ok(ctx.alloc::<u32>(100))?;
    let short_values = filled(ctx, 99, 0u32)?;
    match ctx.sort_pairs_into(
        &Sort::ascending(),
        &x,
        &short_values,
        &mut out,
        &mut small_values,
    ) {
        Err(Error::LengthMismatch { .. }) => {}
        other => return Err(format!("short values: {other:?}").into()),
    }
    Ok(())
}

/// A pitched matrix's rows, each sorted, argsorted, its top-k for several
/// `k` and its argmax and argmin, both directions, against the reference
/// of each row on its own. Outputs are pitched too (one column more than
/// their width) and poisoned first; the padding must stay untouched.
fn rows_case<K: Key>(ctx: &Context, width: usize, height: usize, data: Data) -> Result<(), Failed> {
    let pitch = width + 3;
    let what = format!("rows {} {width}x{height} {data:?}", K::NAME);
    let host: Vec<K> = data.keys(pitch * height, seed_of(&what));
    let x = upload(ctx, &host)?;
    let matrix = ok(Matrix::with_pitch(&x, width, height, pitch))?;
    let row = |r: usize| &host[r * pitch..r * pitch + width];
    let poison = K::from_small(12345);
    let mut ks = vec![1, 2, 7, 50, 256, 257, 1000, width];
    ks.retain(|&k| k >= 1 && k <= width);
    ks.dedup();
    for sort in [
        Sort::ascending(),
        Sort::descending(),
        Sort::descending().bits(3..9),
    ] {
        let range = full_range::<K>(&sort);
        let orders: Vec<Vec<u32>> = (0..height)
            .map(|r| reference(row(r), sort.descending, &range))
            .collect();
        let case = format!("{what} descending={} bits={:?}", sort.descending, sort.bits);
        // Every k, the width (the whole sort) among them.
        for &k in &ks {
            let out_pitch = k + 1;
            let mut values = poisoned(ctx, out_pitch * height, poison)?;
            let mut indices = poisoned(ctx, out_pitch * height, u32::MAX)?;
            {
                let mut v = ok(MatrixMut::with_pitch(&mut values, k, height, out_pitch))?;
                let mut i = ok(MatrixMut::with_pitch(&mut indices, k, height, out_pitch))?;
                if k == width {
                    wait(ctx.sort_rows_with_indices_into(&sort, &matrix, &mut v, &mut i))?;
                } else {
                    wait(ctx.top_k_rows_into(&sort, k, &matrix, &mut v, &mut i))?;
                }
            }
            let (got_v, got_i) = (download(ctx, &values)?, download(ctx, &indices)?);
            for (r, order) in orders.iter().enumerate() {
                let want_i: Vec<u32> = order[..k].to_vec();
                let want_v: Vec<u64> = want_i.iter().map(|&c| row(r)[c as usize].bits()).collect();
                let at = r * out_pitch;
                let got: Vec<u64> = got_v[at..at + k].iter().map(|v| v.bits()).collect();
                same(format!("{case} k={k} row {r}: key"), &got, &want_v)?;
                same(
                    format!("{case} k={k} row {r}: index"),
                    &got_i[at..at + k],
                    &want_i,
                )?;
                ensure(
                    got_v[at + k].bits() == poison.bits() && got_i[at + k] == u32::MAX,
                    || format!("{case} k={k} row {r}: the padding was written"),
                )?;
            }
        }
        // Keys alone, and the argsort.
        let mut out = poisoned(ctx, pitch * height, poison)?;
        {
            let mut m = ok(MatrixMut::with_pitch(&mut out, width, height, pitch))?;
            wait(ctx.sort_rows_into(&sort, &matrix, &mut m))?;
        }
        let got = download(ctx, &out)?;
        let mut indices = poisoned(ctx, width * height, u32::MAX)?;
        {
            let mut m = ok(MatrixMut::new(&mut indices, width, height))?;
            wait(ctx.argsort_rows_into(&sort, &matrix, &mut m))?;
        }
        let got_i = download(ctx, &indices)?;
        for (r, order) in orders.iter().enumerate() {
            let want: Vec<u64> = order.iter().map(|&c| row(r)[c as usize].bits()).collect();
            let keys: Vec<u64> = got[r * pitch..r * pitch + width]
                .iter()
                .map(|v| v.bits())
                .collect();
            same(format!("{case} keys only, row {r}: key"), &keys, &want)?;
            same(
                format!("{case} argsort, row {r}: index"),
                &got_i[r * width..(r + 1) * width],
                order,
            )?;
        }
    }
    // argmax and argmin: the first of the descending and ascending sorts.
    for descending in [true, false] {
        let mut out = poisoned(ctx, height, u32::MAX)?;
        if descending {
            wait(ctx.argmax_rows_into(&matrix, &mut out))?;
        } else {
            wait(ctx.argmin_rows_into(&matrix, &mut out))?;
        }
        let want: Vec<u32> = (0..height)
            .map(|r| reference(row(r), descending, &(0..K::BYTES * 8))[0])
            .collect();
        same(
            format!("{what} argmax={descending}: row"),
            &download(ctx, &out)?,
            &want,
        )?;
    }
    Ok(())
}

/// Row sorts of random shapes on one queue while another sorts rows
/// too, each checked.
fn rows_stress(ctx: &Context) -> Result<(), Failed> {
    let rounds = if under_sanitizer() { 10 } else { 300 };
    let mut r = rng(seed_of("sort/rows/stress"));
    let keys: Vec<f32> = random_vec(1 << 20, seed_of("sort/rows/stress/keys"), draw_f32);
    let x = upload(ctx, &keys)?;
    let other = ok(ctx.new_stream())?;
    let theirs_in = upload(&other, &keys)?;
    let mut theirs = ok(other.alloc::<f32>(1 << 20))?;
    let mut indices = ok(ctx.alloc::<u32>(1 << 20))?;
    let sort = Sort::descending();
    for round in 0..rounds {
        {
            let m = ok(Matrix::new(&theirs_in, 1 << 12, 1 << 8))?;
            let mut o = ok(MatrixMut::new(&mut theirs, 1 << 12, 1 << 8))?;
            ok(other.sort_rows_into(&sort, &m, &mut o).map(Pending::detach))?;
        }
        let width = r.random_range(1..=70_000usize);
        let height = r.random_range(1..=(1 << 20) / width).min(40);
        let k = if round % 3 == 0 {
            width
        } else {
            r.random_range(1..=width.min(300))
        };
        let m = ok(Matrix::new(&x, width, height))?;
        {
            let mut i = ok(MatrixMut::new(&mut indices, k, height))?;
            if k == width {
                ok(ctx
                    .argsort_rows_into(&sort, &m, &mut i)
                    .map(Pending::detach))?;
            } else {
                let mut values = ok(ctx.alloc::<f32>(k * height))?;
                let mut v = ok(MatrixMut::new(&mut values, k, height))?;
                wait(ctx.top_k_rows_into(&sort, k, &m, &mut v, &mut i))?;
            }
        }
        if round % 10 == 0 || round + 1 == rounds {
            let got = download(ctx, &ok(indices.slice(..k * height))?)?;
            for row in 0..height {
                let want = reference(&keys[row * width..(row + 1) * width], true, &(0..32));
                same(
                    format!("rows stress {round} {width}x{height} k={k} row {row}: index"),
                    &got[row * k..(row + 1) * k],
                    &want[..k],
                )?;
            }
        }
    }
    ok(other.synchronize())
}

/// The argmax and a top-k as the first calls of fresh queues, whose
/// scratch memory grows on them: the argmax's candidates (one row of
/// 2^24 + 1 keys: 4 097 candidates, then 2, three levels) and the
/// selection's levels take the scratch memory in one request, before any
/// launch.
fn rows_fresh_queues(ctx: &Context) -> Result<(), Failed> {
    let width = (1 << 24) + 1;
    let keys: Vec<f32> = random_vec(width, seed_of("sort/rows/fresh"), draw_f32);
    let want = reference(&keys, true, &(0..32));
    let fresh = ok(ctx.new_stream())?;
    let x = upload(&fresh, &keys)?;
    let m = ok(Matrix::new(&x, width, 1))?;
    let mut best = poisoned(&fresh, 1, u32::MAX)?;
    wait(fresh.argmax_rows_into(&m, &mut best))?;
    same(
        "fresh argmax: row".into(),
        &download(&fresh, &best)?,
        &want[..1],
    )?;
    let fresh = ok(ctx.new_stream())?;
    let k = 256;
    let mut values = poisoned(&fresh, k, 0.0f32)?;
    let mut indices = poisoned(&fresh, k, u32::MAX)?;
    {
        let mut v = ok(MatrixMut::new(&mut values, k, 1))?;
        let mut i = ok(MatrixMut::new(&mut indices, k, 1))?;
        wait(fresh.top_k_rows_into(&Sort::descending(), k, &m, &mut v, &mut i))?;
    }
    same(
        "fresh top-256: index".into(),
        &download(&fresh, &indices)?,
        &want[..k],
    )
}

/// Rows whose every key has all-one (or all-zero) ordered bits: the
/// argmin of `u64::MAX` keys, the argmax of zeros, and their top-3, are
/// the first columns. One slice a row, and two (5 000 keys).
fn rows_extremes(ctx: &Context) -> Result<(), Failed> {
    for width in [7, 4096, 5000] {
        for (descending, key) in [(false, u64::MAX), (true, 0)] {
            let what = format!("{width} keys of {key:#x}, descending={descending}");
            let x = filled(ctx, width * 2, key)?;
            let m = ok(Matrix::new(&x, width, 2))?;
            let mut best = poisoned(ctx, 2, u32::MAX)?;
            if descending {
                wait(ctx.argmax_rows_into(&m, &mut best))?;
            } else {
                wait(ctx.argmin_rows_into(&m, &mut best))?;
            }
            same(format!("{what}: argmax"), &download(ctx, &best)?, &[0, 0])?;
            let sort = if descending {
                Sort::descending()
            } else {
                Sort::ascending()
            };
            let mut values = poisoned(ctx, 6, 1u64)?;
            let mut indices = poisoned(ctx, 6, u32::MAX)?;
            {
                let mut v = ok(MatrixMut::new(&mut values, 3, 2))?;
                let mut i = ok(MatrixMut::new(&mut indices, 3, 2))?;
                wait(ctx.top_k_rows_into(&sort, 3, &m, &mut v, &mut i))?;
            }
            same(
                format!("{what}: top-3 index"),
                &download(ctx, &indices)?,
                &[0, 1, 2, 0, 1, 2],
            )?;
            same(
                format!("{what}: top-3 key"),
                &download(ctx, &values)?,
                &[key; 6],
            )?;
        }
    }
    Ok(())
}

fn rows_refusals(ctx: &Context) -> Result<(), Failed> {
    let x = filled(ctx, 100, 1.0f32)?;
    let m = ok(Matrix::new(&x, 10, 10))?;
    let mut values = ok(ctx.alloc::<f32>(200))?;
    let mut indices = ok(ctx.alloc::<u32>(200))?;
    for k in [0usize, 11] {
        let mut v = ok(MatrixMut::new(&mut values, k, 10))?;
        let mut i = ok(MatrixMut::new(&mut indices, k, 10))?;
        let r = ctx.top_k_rows_into(&Sort::descending(), k, &m, &mut v, &mut i);
        expect_invalid(r, &format!("top-k of k = {k} over rows of 10"))?;
    }
    {
        let mut v = ok(MatrixMut::new(&mut values, 3, 10))?;
        let mut i = ok(MatrixMut::new(&mut indices, 4, 10))?;
        match ctx.top_k_rows_into(&Sort::descending(), 3, &m, &mut v, &mut i) {
            Err(Error::ShapeMismatch { .. }) => {}
            other => return Err(format!("indices 4 wide for k = 3: {other:?}").into()),
        }
        let mut wide = ok(MatrixMut::new(&mut values, 10, 9))?;
        match ctx.sort_rows_into(&Sort::ascending(), &m, &mut wide) {
            Err(Error::ShapeMismatch { .. }) => {}
            other => return Err(format!("9 rows for 10: {other:?}").into()),
        }
    }
    {
        let mut v = ok(MatrixMut::new(&mut values, 10, 10))?;
        let mut i = ok(MatrixMut::new(&mut indices, 10, 10))?;
        let r = ctx.sort_rows_with_indices_into(&Sort::ascending().bits(0..33), &m, &mut v, &mut i);
        expect_invalid(r, "bits 0..33 of f32")?;
    }
    let mut out = ok(ctx.alloc::<u32>(9))?;
    match ctx.argmax_rows_into(&m, &mut out) {
        Err(Error::LengthMismatch { .. }) => {}
        other => return Err(format!("argmax into 9 for 10 rows: {other:?}").into()),
    }
    let empty_rows = ok(Matrix::new(&x, 0, 5))?;
    let mut five = ok(ctx.alloc::<u32>(5))?;
    expect_invalid(
        ctx.argmax_rows_into(&empty_rows, &mut five),
        "argmax of rows of no key",
    )?;
    // Empty matrices are no error: nothing to do.
    let none = ok(Matrix::new(&x, 10, 0))?;
    let mut nothing = ok(ctx.alloc::<u32>(0))?;
    ok(ok(ctx.argmax_rows_into(&none, &mut nothing))?.wait())?;
    Ok(())
}

pub fn trials(trials: &mut Vec<Trial>) {
    for &n in &LADDER_SIZES {
        for &variant in SortVariant::ALL {
            let name = format!("sort::{}::n={n}", variant.name());
            trials.push(sized_trial(name, n, move |ctx| {
                ladder_case(ctx, variant, n)
            }));
        }
    }
    for &n in &DEFAULT_SIZES {
        for data in Data::ALL {
            // The other data sets up to 1 000 003 keys; `NanTiles` at the
            // largest size too: wide tiles of `f32` pairs with and without
            // NaN.
            if n > 1_000_003 && !matches!(data, Data::Random | Data::NanTiles) {
                continue;
            }
            trials.push(sized_trial(
                format!("sort::u32::{data:?}::n={n}"),
                n,
                move |ctx| typed_case::<u32>(ctx, n, data),
            ));
            trials.push(sized_trial(
                format!("sort::i32::{data:?}::n={n}"),
                n,
                move |ctx| typed_case::<i32>(ctx, n, data),
            ));
            trials.push(sized_trial(
                format!("sort::f32::{data:?}::n={n}"),
                n,
                move |ctx| typed_case::<f32>(ctx, n, data),
            ));
            trials.push(sized_trial(
                format!("sort::u64::{data:?}::n={n}"),
                n,
                move |ctx| typed_case::<u64>(ctx, n, data),
            ));
        }
    }
    // `f32` keys carried as ordered bits between passes, and a NaN where
    // only the histogram's last keys of a slice see it; where the middle
    // passes take their own entry, with and without NaN.
    let carried = DEFAULT_SIZES
        .iter()
        .flat_map(|&n| [(n, Data::Numbers), (n, Data::LastNan)])
        .chain([Data::Numbers, Data::LastNan, Data::NanTiles].map(|data| (MIDDLE, data)));
    for (n, data) in carried {
        trials.push(sized_trial(
            format!("sort::f32::{data:?}::n={n}"),
            n,
            move |ctx| typed_case::<f32>(ctx, n, data),
        ));
    }
    trials.push(sized_trial("sort::bit_ranges", 100_003, bit_ranges));
    for n in [
        warpspeed_gpu::sort::PORTION,
        warpspeed_gpu::sort::PORTION + 4097,
    ] {
        trials.push(sized_trial(format!("sort::large::n={n}"), n, move |ctx| {
            large(ctx, n, "sort/large")
        }));
    }
    trials.push(sized_trial("sort::past_2^31", TWO_31 + 3, past_two_31));
    trials.push(sized_trial("sort::stress", 300_000, stress));
    trials.push(gpu_trial("sort::refusals", refusals));
    // Row shapes: one key; the edges of a selection slice (4 096) and a
    // sort tile (4 096); the vocabulary widths; several selection levels
    // (300 000 with k = 256); argmax over several slices (past 4 096).
    const ROWS: [(usize, usize); 13] = [
        (1, 1),
        (1, 5),
        (3, 2),
        (255, 3),
        (257, 2),
        (4095, 2),
        (4096, 3),
        (4097, 3),
        (16_385, 2),
        (32_000, 8),
        (70_001, 3),
        (128_256, 2),
        (300_000, 2),
    ];
    for (width, height) in ROWS {
        let n = width * height;
        for data in [
            Data::Random,
            Data::AllEqual,
            Data::FewValues,
            Data::NanTiles,
            Data::Numbers,
        ] {
            trials.push(sized_trial(
                format!("sort::rows::f32::{data:?}::{width}x{height}"),
                n,
                move |ctx| rows_case::<f32>(ctx, width, height, data),
            ));
        }
        trials.push(sized_trial(
            format!("sort::rows::u32::Random::{width}x{height}"),
            n,
            move |ctx| rows_case::<u32>(ctx, width, height, Data::Random),
        ));
        trials.push(sized_trial(
            format!("sort::rows::i32::TopBits::{width}x{height}"),
            n,
            move |ctx| rows_case::<i32>(ctx, width, height, Data::TopBits),
        ));
        trials.push(sized_trial(
            format!("sort::rows::u64::BottomBits::{width}x{height}"),
            n,
            move |ctx| rows_case::<u64>(ctx, width, height, Data::BottomBits),
        ));
    }
    // Rows in wide tiles of pairs, where the GPU takes them (two blocks an
    // SM, of 90 KiB on the H100 and H200, of 74 on the A100; up to 170
    // SMs): four of 410 tiles each (512 on the A100), and 2 048 of one
    // tile each; with NaN, and without (the passes then carry ordered
    // bits); 66 of 28 tiles of 40 keys a thread, whose middle passes take
    // their own entry at that size on 132 SMs (as `MIDDLE`).
    for (width, height) in [((1 << 22) + 3, 4), (8000, 2048), (28 * 10_240, 66)] {
        for data in [Data::NanTiles, Data::Numbers] {
            trials.push(sized_trial(
                format!("sort::rows::f32::{data:?}::{width}x{height}"),
                width * height,
                move |ctx| rows_case::<f32>(ctx, width, height, data),
            ));
        }
    }
    trials.push(sized_trial("sort::rows::stress", 1 << 20, rows_stress));
    trials.push(sized_trial(
        "sort::rows::fresh_queues",
        (1 << 24) + 1,
        rows_fresh_queues,
    ));
    trials.push(gpu_trial("sort::rows::extremes", rows_extremes));
    trials.push(gpu_trial("sort::rows::refusals", rows_refusals));
}
