//! Histograms: every step of the ladder on the bench's data sets (uniform,
//! one bin, two alternating bins, a narrow normal, sorted) and sizes (0, 1,
//! 255, 257, 1 000 003, 2^28 + 7, an odd start address), for the byte
//! histogram and `histogram_even` of `u8`, `u16`, `i32` and `f32` with 1 to
//! 65 536 bins; compared exactly with an independent CPU count.

use crate::common::*;
use libtest_mimic::{Failed, Trial};
use rand::RngExt;
use rand::rngs::StdRng;
use std::cell::RefCell;
use std::rc::Rc;
use warpspeed::histogram::{EvenBins, HistogramSample, HistogramVariant};
use warpspeed::{Context, Error, View, ViewMut};

/// How the samples are drawn.
#[derive(Clone, Copy, Debug)]
enum Data {
    Uniform,
    OneBin,
    Alternating,
    Normal,
    Sorted,
    /// Runs of 16 equal samples cycling through 7 values: every 16-byte
    /// vector of bytes holds one repeated sample, but the vectors a lane
    /// loads together differ (the kernel's run test must see that).
    Runs,
}

const DATA: [Data; 6] = [
    Data::Uniform,
    Data::OneBin,
    Data::Alternating,
    Data::Normal,
    Data::Sorted,
    Data::Runs,
];

const SIZES: [usize; 6] = [0, 1, 255, 257, 1_000_003, (1 << 28) + 7];

/// A sample type of the tests.
trait TestSample: HistogramSample + Copy + PartialEq + std::fmt::Debug + 'static {
    /// The sample at `at` (a value of the case's range, or a little beyond
    /// it, so that some samples are not counted).
    fn draw(r: &mut StdRng, data: Data, at: f64) -> Self;
    /// The sample's value, exact in `f64` for every sample type.
    fn value(self) -> f64;
    /// The configuration's bins for this type.
    fn bins(config: &Config) -> warpspeed::Result<EvenBins<Self>>;
    /// A view of bytes, for the byte histogram's own entry point (`u8` only).
    fn bytes(_view: View<'_, Self>) -> Option<View<'_, u8>> {
        None
    }
}

/// A value at fraction `t` of `[lower, upper)` of the case's bins, for
/// integer types.
fn integer_at(lower: i64, upper: i64, t: f64) -> i64 {
    lower + ((upper - lower) as f64 * t).floor() as i64
}

/// The fraction of the range where sample `i` of `n` falls for `data`.
fn fraction(r: &mut StdRng, data: Data, i: usize, n: usize) -> f64 {
    match data {
        // A little outside the range on both sides: those are not counted.
        Data::Uniform => r.random_range(-0.05..1.05),
        Data::OneBin => 0.4,
        Data::Alternating => {
            if i.is_multiple_of(2) {
                0.1
            } else {
                0.9
            }
        }
        // Irwin–Hall: the mean of 4 uniforms, narrowed to about 2% of the
        // range around the middle.
        Data::Normal => 0.5 + 0.04 * ((0..4).map(|_| r.random::<f64>()).sum::<f64>() / 4.0 - 0.5),
        Data::Sorted => i as f64 / n.max(1) as f64 * 1.1 - 0.05,
        Data::Runs => ((i / 16) % 7) as f64 / 7.0 + 0.05,
    }
}

/// One test configuration: the bins as `(count, lower, upper)` in `f64`.
#[derive(Clone, Copy, Debug)]
struct Config {
    ty: &'static str,
    bins: u32,
    lower: f64,
    upper: f64,
    /// Through `histogram_into` (the byte histogram) rather than
    /// `histogram_even_into`.
    bytes: bool,
}

const CONFIGS: &[Config] = &[
    Config {
        ty: "u8",
        bins: 256,
        lower: 0.0,
        upper: 256.0,
        bytes: true,
    },
    Config {
        ty: "u8",
        bins: 10,
        lower: 20.0,
        upper: 220.0,
        bytes: false,
    },
    Config {
        ty: "u16",
        bins: 1000,
        lower: 100.0,
        upper: 60_100.0,
        bytes: false,
    },
    Config {
        ty: "u16",
        bins: 200,
        lower: 1000.0,
        upper: 50_000.0,
        bytes: false,
    },
    Config {
        ty: "i32",
        bins: 65_536,
        lower: -1_048_576.0,
        upper: 1_048_576.0,
        bytes: false,
    },
    Config {
        ty: "i32",
        bins: 7,
        lower: -2_147_483_648.0,
        upper: 2_147_483_648.0,
        bytes: false,
    },
    Config {
        ty: "f32",
        bins: 100,
        lower: -1.0,
        upper: 1.0,
        bytes: false,
    },
    Config {
        ty: "f32",
        bins: 1,
        lower: 0.0,
        upper: 1.0,
        bytes: false,
    },
    Config {
        ty: "f32",
        bins: 257,
        lower: -3.0,
        upper: 1000.5,
        bytes: false,
    },
];

/// Integer bins of a configuration, whose bounds are integers.
fn integer_bins<T: HistogramSample<Level = i64>>(
    config: &Config,
) -> warpspeed::Result<EvenBins<T>> {
    EvenBins::new(config.bins, config.lower as i64, config.upper as i64)
}

impl TestSample for u8 {
    fn draw(_: &mut StdRng, _: Data, at: f64) -> Self {
        at.clamp(0.0, 255.0) as u8
    }
    fn value(self) -> f64 {
        self as f64
    }
    fn bins(config: &Config) -> warpspeed::Result<EvenBins<Self>> {
        integer_bins(config)
    }
    fn bytes(view: View<'_, u8>) -> Option<View<'_, u8>> {
        Some(view)
    }
}
impl TestSample for u16 {
    fn draw(_: &mut StdRng, _: Data, at: f64) -> Self {
        at.clamp(0.0, 65_535.0) as u16
    }
    fn value(self) -> f64 {
        self as f64
    }
    fn bins(config: &Config) -> warpspeed::Result<EvenBins<Self>> {
        integer_bins(config)
    }
}
impl TestSample for i32 {
    fn draw(_: &mut StdRng, _: Data, at: f64) -> Self {
        at.clamp(i32::MIN as f64, i32::MAX as f64) as i32
    }
    fn value(self) -> f64 {
        self as f64
    }
    fn bins(config: &Config) -> warpspeed::Result<EvenBins<Self>> {
        integer_bins(config)
    }
}
impl TestSample for f32 {
    fn value(self) -> f64 {
        self as f64
    }
    fn bins(config: &Config) -> warpspeed::Result<EvenBins<Self>> {
        EvenBins::new(config.bins, config.lower as f32, config.upper as f32)
    }
    fn draw(r: &mut StdRng, data: Data, at: f64) -> Self {
        // A sprinkle of NaN and infinities in the uniform data: never counted.
        if matches!(data, Data::Uniform) && r.random_ratio(1, 1000) {
            [f32::NAN, f32::INFINITY, f32::NEG_INFINITY][r.random_range(0..3)]
        } else {
            at as f32
        }
    }
}

/// The samples of a case, with `offset` leading elements before them.
fn samples<T: TestSample>(config: &Config, data: Data, n: usize, offset: usize) -> Vec<T> {
    let mut r = rng(seed_of(&format!("{config:?}/{data:?}/{n}/{offset}")));
    (0..offset + n)
        .map(|i| {
            let t = fraction(&mut r, data, i.saturating_sub(offset), n);
            let at = if config.ty == "f32" {
                config.lower + (config.upper - config.lower) * t
            } else {
                integer_at(config.lower as i64, config.upper as i64, t) as f64
            };
            T::draw(&mut r, data, at)
        })
        .collect()
}

/// An independent count: integer bins by exact `i128` division, `f32` bins
/// by the documented formula evaluated directly.
fn reference<T: TestSample>(config: &Config, samples: &[T]) -> Vec<u32> {
    let mut counts = vec![0u32; config.bins as usize];
    for &s in samples {
        let bin = if config.ty == "f32" {
            let x = s.value() as f32; // exact: the sample is an f32
            let (lower, upper) = (config.lower as f32, config.upper as f32);
            if !(x >= lower && x < upper) {
                continue;
            }
            let scale = (config.bins as f64 / (config.upper - config.lower)) as f32;
            (((x - lower) * scale) as u32).min(config.bins - 1)
        } else {
            let x = s.value() as i128; // exact: an integer below 2^32
            let (lower, upper) = (config.lower as i128, config.upper as i128);
            if x < lower || x >= upper {
                continue;
            }
            ((x - lower) * config.bins as i128 / (upper - lower)) as u32
        };
        counts[bin as usize] += 1;
    }
    counts
}

/// Runs `variant` on the case and compares with the independent count.
fn check<T: TestSample>(
    ctx: &Context,
    variant: HistogramVariant,
    (config, data, n, offset): (Config, Data, usize, usize),
) -> Result<(), Failed> {
    let key = format!("histogram/{config:?}/{data:?}/{n}/{offset}");
    let input = cached_input(ctx, &key, || {
        let mut host = samples::<T>(&config, data, n, offset);
        if host.is_empty() {
            // No samples: an empty view of a one-element buffer (a view
            // with an address).
            host.push(T::default());
        }
        host
    })?;
    let (host, device) = (&input.0, &input.1);
    let view: View<'_, T> = ok(device.slice(offset..offset + n))?;
    let bins = ok(T::bins(&config))?;
    let mut out = poisoned(ctx, config.bins as usize, 0xdead_beef_u32)?;
    // The byte histogram's own entry point (the same steps below).
    let bytes = if config.bytes && variant == HistogramVariant::DEFAULT {
        Some(T::bytes(view).ok_or("the byte histogram takes u8 samples")?)
    } else {
        None
    };
    let run = match &bytes {
        Some(bytes) => ctx.histogram_into(bytes, &mut out),
        None => ctx.histogram_even_into_with(variant, &view, &bins, &mut out),
    };
    match run {
        Err(Error::Unsupported { .. })
            if variant == HistogramVariant::SharedPrivatized
                && config.bins * 4 > ctx.info().max_shared_per_block_optin =>
        {
            return Ok(()); // refused: tested in `refuses_bad_arguments`
        }
        r => ok(r.and_then(|p| p.wait()))?,
    }
    let got = download(ctx, &out)?;
    let want = cached_reference(&key, || {
        let want = reference(&config, &host[offset..offset + n]);
        // The library's own CPU count agrees with the independent one.
        ensure(bins.histogram(&host[offset..offset + n]) == want, || {
            format!("EvenBins::histogram disagrees with the reference for {config:?}")
        })?;
        Ok(want)
    })?;
    match got.iter().zip(want.iter()).position(|(g, w)| g != w) {
        None => Ok(()),
        Some(i) => Err(format!(
            "{} {config:?} {data:?} n={n}: bin {i} counts {}, want {} (total {} of {})",
            variant.name(),
            got[i],
            want[i],
            got.iter().map(|&c| c as u64).sum::<u64>(),
            want.iter().map(|&c| c as u64).sum::<u64>(),
        )
        .into()),
    }
}

thread_local! {
    static WANT: RefCell<Option<(String, Rc<Vec<u32>>)>> = const { RefCell::new(None) };
}

/// The reference counts of the case `key`, computed once for all the steps
/// that run on it (2^28 samples take a while on the CPU).
fn cached_reference(
    key: &str,
    make: impl FnOnce() -> Result<Vec<u32>, Failed>,
) -> Result<Rc<Vec<u32>>, Failed> {
    if let Some(hit) = WANT.with(|w| {
        w.borrow()
            .as_ref()
            .filter(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    }) {
        return Ok(hit);
    }
    let want = Rc::new(make()?);
    WANT.with(|w| *w.borrow_mut() = Some((key.to_string(), want.clone())));
    Ok(want)
}

fn push<T: TestSample>(trials: &mut Vec<Trial>, config: Config) {
    let mut cases = Vec::new();
    for data in DATA {
        for n in SIZES {
            // The 2^28 runs: the byte histogram on each data set, and
            // uniform f32 samples in 100 bins, to keep the suite's time in
            // check.
            let big_f32 = config.ty == "f32" && config.bins == 100 && matches!(data, Data::Uniform);
            if n > (1 << 24) && !(config.bytes || big_f32) {
                continue;
            }
            let name = format!("{}::{}_bins::{data:?}::n_{n}", config.ty, config.bins);
            cases.push((name, n, (config, data, n, 0)));
        }
    }
    // An odd start address (odd element offset; for bytes, an odd byte).
    let name = format!(
        "{}::{}_bins::Uniform::n_1000003::offset_1",
        config.ty, config.bins
    );
    cases.push((name, 1_000_003, (config, Data::Uniform, 1_000_003, 1)));
    ladder_trials::<HistogramVariant, _>(
        trials,
        &cases,
        // The CPU step on the largest inputs only for bytes.
        |v, &(c, _, n, _)| v != HistogramVariant::Cpu || n < (1 << 24) || c.bytes,
        |ctx, v, &case| check::<T>(ctx, v, case),
    );
}

fn refusals(ctx: &Context) -> Result<(), Failed> {
    expect_invalid(EvenBins::<u8>::new(0, 0, 256), "0 bins")?;
    expect_invalid(EvenBins::<u8>::new(65_537, 0, 256), "65 537 bins")?;
    expect_invalid(EvenBins::<u8>::new(16, 10, 10), "lower == upper")?;
    expect_invalid(EvenBins::<i32>::new(16, 10, -10), "lower > upper")?;
    expect_invalid(EvenBins::<u8>::new(16, -1, 256), "u8 bounds below 0")?;
    expect_invalid(EvenBins::<u8>::new(16, 0, 257), "u8 bounds above 256")?;
    expect_invalid(EvenBins::<f32>::new(16, f32::NAN, 1.0), "a NaN bound")?;
    expect_invalid(
        EvenBins::<f32>::new(16, 0.0, f32::INFINITY),
        "an infinite bound",
    )?;
    let samples = upload(ctx, &[1.0f32; 64])?;
    let bins = ok(EvenBins::<f32>::new(16, 0.0, 2.0))?;
    let mut short = poisoned(ctx, 15, 0u32)?;
    expect_invalid(
        ctx.histogram_even_into(&samples, &bins, &mut short),
        "15 counters for 16 bins",
    )?;
    let bytes = upload(ctx, &[1u8; 64])?;
    expect_invalid(
        ctx.histogram_into(&bytes, &mut short),
        "15 counters for 256 bins",
    )?;
    let wide = ok(EvenBins::<f32>::new(65_536, 0.0, 2.0))?;
    let mut many = poisoned(ctx, 65_536, 0u32)?;
    expect_invalid(
        ctx.histogram_even_into_with(
            HistogramVariant::SharedPrivatized,
            &samples,
            &wide,
            &mut many,
        ),
        "65 536 shared-memory counters",
    )?;
    // Counters on top of the samples: only unsafe code can make such
    // views (the types differ), and the library still refuses them.
    let buffer = upload(ctx, &[0u32; 512])?;
    let (address, device) = (buffer.device_address(), buffer.device());
    // SAFETY: views of the live `buffer` (512 words, kept to the end of the
    // function), reinterpreted as f32 samples and u32 counters (plain
    // numbers: any bits are valid); nothing is launched (the call is
    // refused), and had it launched, the refusal check's drop of its
    // `Pending` waits for the stream before `buffer` is freed.
    let (floats, mut counters) = unsafe {
        (
            View::<f32>::from_raw_parts(address, 512, device),
            ViewMut::<u32>::from_raw_parts(address + 64, 16, device),
        )
    };
    expect_invalid(
        ctx.histogram_even_into(&floats, &bins, &mut counters),
        "counters overlapping the samples",
    )?;
    // Nothing was written by the refusals.
    ensure(download(ctx, &short)?.iter().all(|&c| c == 0), || {
        "a refused call wrote its output".into()
    })
}

fn big_counts(ctx: &Context) -> Result<(), Failed> {
    // 2^24 + 5 samples in one bin through every step: counts beyond 16 bits
    // per lane and per block, merged exactly.
    let n = (1 << 24) + 5;
    let host = vec![7u8; n];
    let device = upload(ctx, &host)?;
    for &variant in HistogramVariant::ALL {
        let mut out = poisoned(ctx, 256, 0xdead_beef_u32)?;
        let bins = ok(EvenBins::<u8>::new(256, 0, 256))?;
        ok(ctx
            .histogram_even_into_with(variant, &device, &bins, &mut out)
            .and_then(|p| p.wait()))?;
        let got = download(ctx, &out)?;
        ensure(
            got[7] == n as u32 && got.iter().sum::<u32>() == n as u32,
            || format!("{}: bin 7 counts {} of {n}", variant.name(), got[7]),
        )?;
    }
    Ok(())
}

fn repeated_uncounted(ctx: &Context) -> Result<(), Failed> {
    // One sample repeated that no bin takes (NaN, and values above the
    // range): the steps that count a run of equal samples at once must
    // still leave every bin at 0.
    fn none_counted<T: TestSample>(
        ctx: &Context,
        sample: T,
        bins: EvenBins<T>,
    ) -> Result<(), Failed> {
        let n = 1_000_003;
        let device = upload(ctx, &vec![sample; n])?;
        for &variant in HistogramVariant::ALL {
            let mut out = poisoned(ctx, bins.bins() as usize, 0xdead_beef_u32)?;
            ok(ctx
                .histogram_even_into_with(variant, &device, &bins, &mut out)
                .and_then(|p| p.wait()))?;
            ensure(download(ctx, &out)?.iter().all(|&c| c == 0), || {
                format!("{}: {n} samples of {sample:?} counted", variant.name())
            })?;
        }
        Ok(())
    }
    none_counted(ctx, f32::NAN, ok(EvenBins::new(100, 0.0, 256.0))?)?;
    none_counted(ctx, 300.0f32, ok(EvenBins::new(100, 0.0, 256.0))?)?;
    none_counted(ctx, 200u8, ok(EvenBins::new(10, 0, 100))?)
}

fn wraps_past_u32(ctx: &Context) -> Result<(), Failed> {
    // 2^32 + 5 samples in one bin, beyond 2^31 elements: the counter wraps
    // to 5 (counts are modulo 2^32, as documented), and on the way the lane
    // columns are merged many times before their 16 bits overflow. The CPU
    // and global-atomics steps would take seconds; the other two run.
    let n = (1usize << 32) + 5;
    let device = filled_u8(ctx, n, 7)?;
    let bins = ok(EvenBins::<u8>::new(256, 0, 256))?;
    for variant in [
        HistogramVariant::SharedPrivatized,
        HistogramVariant::LanePrivate,
    ] {
        let mut out = poisoned(ctx, 256, 0xdead_beef_u32)?;
        ok(ctx
            .histogram_even_into_with(variant, &device, &bins, &mut out)
            .and_then(|p| p.wait()))?;
        let got = download(ctx, &out)?;
        let mut want = vec![0u32; 256];
        want[7] = 5;
        ensure(got == want, || {
            format!(
                "{}: bin 7 counts {} (want 5 = 2^32 + 5 mod 2^32)",
                variant.name(),
                got[7]
            )
        })?;
    }
    Ok(())
}

/// `histogram_even` of 2^31 + 5 `f32` (see the tests past 2^31 in
/// `common`).
fn past_2_31(ctx: &Context) -> Result<(), Failed> {
    // 2^31 + 5 `f32` samples (the general path's byte offsets past 2^33):
    // all 1.5 but a 7.25 past 2^31 and a NaN and a 10.0 (outside) at the
    // end, over 10 bins of [0, 10).
    let n = TWO_31 + 5;
    let mut samples = filled(ctx, n, 1.5f32)?;
    put(ctx, &mut samples, TWO_31 + 1, &[7.25])?;
    put(ctx, &mut samples, n - 2, &[f32::NAN, 10.0])?;
    let bins = ok(EvenBins::new(10, 0.0f32, 10.0))?;
    let mut want = vec![0u32; 10];
    want[1] = (n - 3) as u32;
    want[7] = 1;
    // The CPU step would copy 8 GiB to the host and the global atomics
    // queue 2^31 adds on one address: the other steps.
    for variant in [
        HistogramVariant::SharedPrivatized,
        HistogramVariant::LanePrivate,
    ] {
        let mut out = filled(ctx, 10, 0xdead_beef_u32)?;
        ok(ctx
            .histogram_even_into_with(variant, &samples, &bins, &mut out)
            .and_then(|p| p.wait()))?;
        let got = download(ctx, &out)?;
        ensure(got == want, || {
            format!("{variant:?}: {got:?}, want {want:?}")
        })?;
    }
    Ok(())
}

pub fn trials(trials: &mut Vec<Trial>) {
    for &config in CONFIGS {
        match config.ty {
            "u8" => push::<u8>(trials, config),
            "u16" => push::<u16>(trials, config),
            "i32" => push::<i32>(trials, config),
            _ => push::<f32>(trials, config),
        }
    }
    trials.push(sized_trial(
        "histogram::one_bin_counts_past_16_bits",
        1 << 24,
        big_counts,
    ));
    trials.push(sized_trial(
        "histogram::repeated_uncounted_samples_count_nothing",
        1_000_003,
        repeated_uncounted,
    ));
    trials.push(sized_trial(
        "histogram::wraps_past_2_32_in_one_bin",
        (1 << 32) + 5,
        wraps_past_u32,
    ));
    trials.push(gpu_trial("histogram::refuses_bad_arguments", refusals));
    trials.push(sized_trial(
        "histogram::f32_past_2_31",
        TWO_31 + 5,
        past_2_31,
    ));
}
