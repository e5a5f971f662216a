//! Reductions: every ladder variant, every element type, the sizes and data
//! patterns CUB's tests use, against CPU references.
//!
//! Integers are compared exactly (sums wrap, as the CPU reference's
//! `wrapping_add` does): since every kernel body is generic over the element
//! type, exact integer results prove the indexing of every variant — each
//! element counted once, none outside the input. `f32` sums are compared
//! against an `f64` sum within a bound derived from the variant's order of
//! summation (see `f32_sum_tolerance`).

use crate::common::*;
use libtest_mimic::{Failed, Trial};
use rand::RngExt;
use warpspeed::reduce::{Op, ReduceVariant, Reducible};
use warpspeed::{Context, DeviceRead, View, ViewMut};
use warpspeed_gpu::reduce::{
    UNROLL_BLOCKS, VECTOR_BLOCK, VECTOR_SMALL_BLOCK, VECTOR_UNROLL, VECTOR_WIDTH,
};

/// The benched sizes and those of CUB's tests.
const SIZES: [usize; 11] = [
    0,
    1,
    31,
    32,
    33,
    255,
    256,
    257,
    1_000_003,
    (1 << 24) + 7,
    1 << 28,
];

#[derive(Clone, Copy, Debug)]
enum Data {
    /// Seeded uniform values (integers over their whole range: sums wrap).
    Random,
    /// Every element equal (a large one for integers: sums wrap).
    Constant,
    /// Alternating signs that cancel.
    Alternating,
}

/// An element type under test: how to draw its data and judge its results.
trait Sample: Reducible + PartialEq + 'static {
    /// A value no correct reduction of the test data returns: written to
    /// the output before each run to catch an output never written.
    const POISON: Self;
    fn data(kind: Data, n: usize, seed: u64) -> Vec<Self>;
    /// Whether `got` is an acceptable result of `op` over `host`.
    fn check(
        op: Op,
        variant: ReduceVariant,
        host: &[Self],
        got: Self,
        sms: u32,
    ) -> Result<(), String>;
}

/// The CPU reference: the same scalar operations the kernels use, in order.
fn reference<T: Reducible>(op: Op, host: &[T]) -> T {
    host.iter()
        .fold(op.identity(), |acc, &v| op.combine(acc, v))
}

macro_rules! integer_sample {
    ($t:ty, $constant:expr, $alt:expr) => {
        impl Sample for $t {
            const POISON: Self = 0x5a5a_5a5a as $t;
            fn data(kind: Data, n: usize, seed: u64) -> Vec<Self> {
                match kind {
                    Data::Random => random_vec(n, seed, |r| r.random::<$t>()),
                    Data::Constant => vec![$constant; n],
                    Data::Alternating => (0..n).map(|i| $alt[i % 2]).collect(),
                }
            }
            fn check(
                op: Op,
                _: ReduceVariant,
                host: &[Self],
                got: Self,
                _: u32,
            ) -> Result<(), String> {
                let want = reference(op, host);
                if got == want {
                    Ok(())
                } else {
                    Err(format!("got {got}, want {want} (exact)"))
                }
            }
        }
    };
}
integer_sample!(i32, i32::MAX, [1_000_000_007i32, -999_999_999]);
integer_sample!(u32, u32::MAX, [0u32, u32::MAX]);

/// Largest number of additions any one element passes through, for an
/// `f32` sum of `n` elements with `variant` on a GPU with `sms` SMs.
///
/// * Tree steps (1-6) and folding: about one level per halving, per pass:
///   at most `2 * ceil(log2(n + 1)) + 2`.
/// * Grid-stride steps (7, 8, 10): a thread first adds its elements one after
///   another. Their grids have at least `sms` blocks of 256 threads for large
///   inputs (and each thread gets at most 16 elements for small ones), so a
///   thread's chain is at most `n / (256 * sms) + 16`, followed by the trees.
///   Step 10's one-block path (inputs one block covers) chains a thread's
///   head, tail and `VECTOR_UNROLL` vectors (each a tree of 2 levels),
///   then a warp's tree of 5, then the block's at most 32 warp totals one
///   after another: whichever path ran, the larger bound holds.
fn depth_bound(variant: ReduceVariant, n: usize, sms: u32) -> usize {
    let log = (usize::BITS - n.leading_zeros()) as usize;
    let tree = 2 * log + 2;
    let grid_stride = n.div_ceil(256 * sms as usize) + 16 + tree;
    match variant {
        ReduceVariant::Cascading | ReduceVariant::WarpShuffle => grid_stride,
        ReduceVariant::Vectorized => grid_stride.max(2 + VECTOR_UNROLL + 2 + 5 + 32),
        _ => tree,
    }
}

/// The classical error bound of floating-point summation in any order of
/// depth `d` (Higham, "Accuracy and Stability of Numerical Algorithms",
/// §4.2): `|ŝ - s| <= γ_d · Σ|x_i|` with `γ_d = d·u / (1 - d·u)` and
/// `u = 2^-24`, plus half an ulp for rounding the exact sum to `f32`.
fn f32_sum_tolerance(variant: ReduceVariant, host: &[f32], exact: f64, sms: u32) -> f64 {
    let u = f32::EPSILON as f64 / 2.0;
    let d = depth_bound(variant, host.len(), sms) as f64;
    let sum_abs: f64 = host.iter().map(|&v| (v as f64).abs()).sum();
    let gamma = if d * u < 0.5 {
        d * u / (1.0 - d * u)
    } else {
        host.len() as f64 * f32::EPSILON as f64
    };
    gamma * sum_abs + u * exact.abs()
}

impl Sample for f32 {
    const POISON: Self = -12345.678;
    fn data(kind: Data, n: usize, seed: u64) -> Vec<Self> {
        match kind {
            Data::Random => random_vec(n, seed, draw_f32),
            Data::Constant => vec![1.0; n],
            Data::Alternating => (0..n)
                .map(|i| if i % 2 == 0 { 1.5 } else { -1.5 })
                .collect(),
        }
    }
    fn check(
        op: Op,
        variant: ReduceVariant,
        host: &[Self],
        got: Self,
        sms: u32,
    ) -> Result<(), String> {
        match op {
            Op::Sum => {
                let exact: f64 = host.iter().map(|&v| v as f64).sum();
                if exact.is_nan() {
                    return if got.is_nan() {
                        Ok(())
                    } else {
                        Err(format!("got {got}, want NaN"))
                    };
                }
                if exact.is_infinite() {
                    return if got as f64 == exact {
                        Ok(())
                    } else {
                        Err(format!("got {got}, want {exact}"))
                    };
                }
                let tol = f32_sum_tolerance(variant, host, exact, sms);
                if approx::abs_diff_eq!(got as f64, exact, epsilon = tol) {
                    Ok(())
                } else {
                    Err(format!("got {got}, want {exact} ± {tol:e} (f64 reference)"))
                }
            }
            // Min and max are exact in any order; NaN if any input is NaN.
            Op::Min | Op::Max => {
                let want = reference(op, host);
                if got == want || (got.is_nan() && want.is_nan()) {
                    Ok(())
                } else {
                    Err(format!("got {got}, want {want} (exact)"))
                }
            }
        }
    }
}

/// Runs `op` with `variant` on `x` into a poisoned output and checks it.
fn run_and_check<T: Sample>(
    ctx: &Context,
    op: Op,
    variant: ReduceVariant,
    block: Option<u32>,
    host: &[T],
    x: &impl DeviceRead<Elem = T>,
) -> Result<(), Failed> {
    let mut out = poisoned(ctx, 1, T::POISON)?;
    match block {
        Some(b) => ok(ctx
            .reduce_into_with_block(op, variant, b, x, &mut out)
            .and_then(|p| p.wait()))?,
        None => ok(ctx
            .reduce_into(op, variant, x, &mut out)
            .and_then(|p| p.wait()))?,
    }
    let got = download(ctx, &out)?[0];
    T::check(op, variant, host, got, ctx.info().multiprocessors)
        .map_err(|e| format!("{} {variant:?} n={}: {e}", op.name(), host.len()).into())
}

/// Every operator of the vectorized step over `n` seeded elements that
/// start `offset` elements into their buffer, with each block size of
/// `blocks` (`None`: the library's choice).
fn check_vectorized_at<T: Sample>(
    ctx: &Context,
    offset: usize,
    n: usize,
    key: &str,
    blocks: &[Option<u32>],
) -> Result<(), Failed> {
    let host = T::data(Data::Random, n + offset, seed_of(key));
    let buffer = upload(ctx, &host)?;
    let x = ok(buffer.slice(offset..))?;
    for &block in blocks {
        for op in Op::ALL {
            run_and_check(
                ctx,
                op,
                ReduceVariant::Vectorized,
                block,
                &host[offset..],
                &x,
            )?;
        }
    }
    Ok(())
}

/// `f` on empty inputs: an empty buffer, and an empty view of a
/// one-element buffer (a view with an address).
fn with_empty<T: Sample>(
    ctx: &Context,
    f: impl Fn(View<'_, T>) -> Result<(), Failed>,
) -> Result<(), Failed> {
    let empty = upload::<T>(ctx, &[])?;
    f(empty.view())?;
    let one = upload(ctx, &[T::POISON])?;
    f(ok(one.slice(..0))?)
}

fn push_type<T: Sample>(trials: &mut Vec<Trial>) {
    let ty = T::NAME;
    for n in SIZES {
        for kind in [Data::Random, Data::Constant, Data::Alternating] {
            let key = format!("{ty}/{n}/{kind:?}");
            for (op, variant) in warpspeed_gpu::reduce::CASES {
                let key = key.clone();
                let name = format!(
                    "reduce::{}::{}::{ty}::n={n}::{kind:?}",
                    op.name(),
                    variant.name()
                );
                trials.push(sized_trial(name, n, move |ctx| {
                    if n == 0 {
                        return with_empty::<T>(ctx, |x| {
                            run_and_check(ctx, op, variant, None, &[], &x)
                        });
                    }
                    let input = cached_input(ctx, &key, || T::data(kind, n, seed_of(&key)))?;
                    run_and_check(ctx, op, variant, None, &input.0, &input.1)
                }));
            }
        }
    }

    // Slices that start at any element: the vectorized kernel's scalar head
    // and tail around its 16-byte body.
    for offset in 1..VECTOR_WIDTH {
        let name = format!("reduce::vectorized::{ty}::starts_at_element_{offset}");
        trials.push(gpu_trial(name, move |ctx| {
            for n in [0, 1, 2, 3, 4, 5, 7, 8, 9, 33, 4099, 1_000_003] {
                check_vectorized_at::<T>(ctx, offset, n, &format!("offset{offset}/{n}"), &[None])?;
            }
            Ok(())
        }));
    }

    // The vectorized step's one-block path (every load issued at once) at
    // the edges of what one block covers, with both block sizes and every
    // start element: full, one short, one over (two blocks: the grid-stride
    // body).
    trials.push(gpu_trial(
        format!("reduce::vectorized::{ty}::single_tile_edges"),
        move |ctx| {
            let blocks = [VECTOR_SMALL_BLOCK, VECTOR_BLOCK];
            let capacities = blocks.map(|b| b as usize * VECTOR_UNROLL * VECTOR_WIDTH);
            for offset in 0..VECTOR_WIDTH {
                for capacity in capacities {
                    for n in [capacity - 1, capacity, capacity + 1] {
                        let key = format!("tile{offset}/{n}");
                        let forced = [Some(blocks[0]), Some(blocks[1]), None];
                        check_vectorized_at::<T>(ctx, offset, n, &key, &forced)?;
                    }
                }
            }
            Ok(())
        },
    ));

    // Every block size of the completely unrolled step, not only the one the
    // library picks by default.
    trials.push(gpu_trial(
        format!("reduce::complete_unroll::{ty}::every_block_size"),
        |ctx| {
            for block in UNROLL_BLOCKS {
                for n in [1, 127, 128, 129, 2047, 2048, 2049, 1_000_003] {
                    let host = T::data(Data::Random, n, seed_of(&format!("unroll{block}/{n}")));
                    let x = upload(ctx, &host)?;
                    run_and_check(
                        ctx,
                        Op::Sum,
                        ReduceVariant::CompleteUnroll,
                        Some(block),
                        &host,
                        &x,
                    )?;
                }
            }
            Ok(())
        },
    ));

    // The synchronous API: values, and the empty-input answers.
    trials.push(gpu_trial(format!("reduce::sync_api::{ty}"), |ctx| {
        let host = T::data(Data::Random, 100_003, 7);
        let x = upload(ctx, &host)?;
        let sms = ctx.info().multiprocessors;
        let v = ReduceVariant::Vectorized;
        T::check(Op::Sum, v, &host, ok(ctx.sum(&x))?, sms)?;
        T::check(
            Op::Min,
            v,
            &host,
            ok(ctx.min(&x))?.ok_or("min of a non-empty slice is None")?,
            sms,
        )?;
        T::check(
            Op::Max,
            v,
            &host,
            ok(ctx.max(&x))?.ok_or("max of a non-empty slice is None")?,
            sms,
        )?;
        let empty = ok(x.slice(..0))?;
        ensure(ok(ctx.sum(&empty))? == T::ZERO, || {
            "sum of nothing is not 0".into()
        })?;
        ensure(
            ok(ctx.min(&empty))?.is_none() && ok(ctx.max(&empty))?.is_none(),
            || "min/max of nothing is not None".into(),
        )?;
        for &variant in ReduceVariant::ALL {
            T::check(
                Op::Sum,
                variant,
                &host,
                ok(ctx.reduce(Op::Sum, variant, &x))?,
                sms,
            )?;
        }
        Ok(())
    }));
}

/// Sums, min and max of 2^31 + 7 `u32` (see the tests past 2^31 in
/// `common`).
fn past_2_31(ctx: &Context) -> Result<(), Failed> {
    // 2^31 + 7 ones, with a 0 past 2^31 (the minimum) and a 9 in the last
    // element (the maximum): sum 2^31 + 7 − 1 + 8, below 2^32.
    let n = TWO_31 + 7;
    let mut x = filled(ctx, n, 1u32)?;
    put(ctx, &mut x, TWO_31 + 3, &[0])?;
    put(ctx, &mut x, n - 1, &[9])?;
    let sum = (n - 1 + 8) as u32;
    for &variant in ReduceVariant::ALL {
        let got = ok(ctx.reduce(Op::Sum, variant, &x))?;
        ensure(got == sum, || format!("{variant:?}: sum {got}, want {sum}"))?;
    }
    ensure(ok(ctx.min(&x))? == Some(0), || "min: want 0".into())?;
    ensure(ok(ctx.max(&x))? == Some(9), || "max: want 9".into())
}

pub fn trials(trials: &mut Vec<Trial>) {
    push_type::<f32>(trials);
    push_type::<i32>(trials);
    push_type::<u32>(trials);

    trials.push(gpu_trial(
        "reduce::f32::nan_and_infinities_propagate",
        |ctx| {
            let n = 1_000_003;
            let sms = ctx.info().multiprocessors;
            let mut r = rng(11);
            let base = f32::data(Data::Random, n, 12);
            let cases: [(&str, &[f32]); 3] = [
                ("NaN", &[f32::NAN]),
                ("+inf", &[f32::INFINITY]),
                ("+inf and -inf", &[f32::INFINITY, f32::NEG_INFINITY]),
            ];
            for (what, specials) in cases {
                let mut host = base.clone();
                for &s in specials {
                    host[r.random_range(0..n)] = s;
                }
                let x = upload(ctx, &host)?;
                for &variant in ReduceVariant::ALL {
                    run_and_check(ctx, Op::Sum, variant, None, &host, &x)
                        .map_err(|e| format!("{what}: {}", e.message().unwrap_or_default()))?;
                }
                for op in [Op::Min, Op::Max] {
                    run_and_check(ctx, op, ReduceVariant::Vectorized, None, &host, &x)?;
                }
                if what == "NaN" {
                    ensure(ok(ctx.min(&x))?.is_some_and(f32::is_nan), || {
                        "min ignores NaN".into()
                    })?;
                    f32::check(
                        Op::Sum,
                        ReduceVariant::Vectorized,
                        &host,
                        ok(ctx.sum(&x))?,
                        sms,
                    )?;
                }
            }
            Ok(())
        },
    ));

    trials.push(gpu_trial("reduce::f32::same_input_same_bits", |ctx| {
        let host = f32::data(Data::Random, 10_000_019, 5);
        let x = upload(ctx, &host)?;
        for &variant in ReduceVariant::ALL {
            let first = ok(ctx.reduce(Op::Sum, variant, &x))?;
            for _ in 0..3 {
                let again = ok(ctx.reduce(Op::Sum, variant, &x))?;
                ensure(again.to_bits() == first.to_bits(), || {
                    format!("{variant:?}: {again} then {first}")
                })?;
            }
        }
        Ok(())
    }));

    trials.push(gpu_trial("reduce::reduce_into_writes_only_out_0", |ctx| {
        let x = upload(ctx, &[1u32, 2, 3, 4, 5])?;
        for &variant in ReduceVariant::ALL {
            let mut out = poisoned(ctx, 3, 0xdead_beefu32)?;
            ok(ctx
                .reduce_into(Op::Sum, variant, &x, &mut ok(out.slice_mut(1..2))?)
                .and_then(|p| p.wait()))?;
            let got = download(ctx, &out)?;
            ensure(got == [0xdead_beef, 15, 0xdead_beef], || {
                format!("{variant:?}: {got:x?}")
            })?;
        }
        Ok(())
    }));

    trials.push(gpu_trial("reduce::refuses_bad_arguments", |ctx| {
        let x = upload(ctx, &[1.0f32; 1000])?;
        let mut out = poisoned(ctx, 1, 0.0f32)?;
        expect_invalid(
            ctx.reduce_into(
                Op::Sum,
                ReduceVariant::Vectorized,
                &x,
                &mut ok(out.slice_mut(..0))?,
            ),
            "an empty output",
        )?;
        expect_invalid(
            ctx.reduce_into(Op::Min, ReduceVariant::Sequential, &x, &mut out),
            "min with a sums-only step",
        )?;
        expect_invalid(
            ctx.reduce_into_with_block(Op::Sum, ReduceVariant::CompleteUnroll, 96, &x, &mut out),
            "block 96",
        )?;
        expect_invalid(
            ctx.reduce_into_with_block(Op::Sum, ReduceVariant::Sequential, 512, &x, &mut out),
            "block 512 for step 3",
        )?;
        // A view that is not aligned to its elements (only possible through
        // unsafe code) is refused, not loaded misaligned.
        // SAFETY: the view lies inside `x`'s allocation, which outlives it
        // (`x` is kept to the end of the trial); it is only passed to a
        // function that must refuse it before any access.
        let crooked =
            unsafe { View::<f32>::from_raw_parts(x.device_address() + 2, 10, x.device()) };
        expect_invalid(
            ctx.reduce_into(Op::Sum, ReduceVariant::Vectorized, &crooked, &mut out),
            "a misaligned input",
        )?;
        // The output inside the input: a writable view inside a buffer that
        // is read, which only unsafe code can make (`x` is borrowed shared).
        // SAFETY: element 500 of the live `x`, which outlives the view; the
        // call must refuse it before any launch, and had it launched, the
        // refusal check's drop of its `Pending` waits for the stream before
        // `x` is read again (by `ctx.sum` below, on the same stream) or freed.
        let mut inside = unsafe {
            ViewMut::<f32>::from_raw_parts(
                x.device_address() + 500 * size_of::<f32>() as u64,
                1,
                x.device(),
            )
        };
        expect_invalid(
            ctx.reduce_into(Op::Sum, ReduceVariant::Vectorized, &x, &mut inside),
            "an output inside the input",
        )?;
        // Refusals leave the context usable.
        ensure(ok(ctx.sum(&x))? == 1000.0, || {
            "context unusable after refusals".into()
        })
    }));

    trials.push(gpu_trial("reduce::integer_sums_wrap", |ctx| {
        let x = upload(ctx, &[i32::MAX, i32::MAX, i32::MAX])?;
        for &variant in ReduceVariant::ALL {
            let got = ok(ctx.reduce(Op::Sum, variant, &x))?;
            ensure(got == i32::MAX.wrapping_mul(3), || {
                format!("{variant:?}: {got}")
            })?;
        }
        let x = upload(ctx, &vec![u32::MAX; 1 << 20])?;
        ensure(ok(ctx.sum(&x))? == u32::MAX.wrapping_mul(1 << 20), || {
            "u32 sum does not wrap".into()
        })
    }));
    trials.push(sized_trial("reduce::u32_past_2_31", TWO_31 + 7, past_2_31));
}
