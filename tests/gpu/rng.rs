//! Random numbers on the GPU (Philox4_32_10):
//!
//! * bulk fills (cuRAND's host API): raw values and uniforms equal, bit for
//!   bit, to the CPU twin (`Generator::value`, itself tested against
//!   cuRAND's own fills in CI), normals and log-normals within the CPU's
//!   sine and cosine tolerance of it, Poisson counts equal to the CPU's
//!   table lookups, for fills of 1 to 1 000 003 values from stream
//!   positions that do and do not start a block of 4, up to 2^50; fills in
//!   chunks of odd sizes equal to one fill; an output at an odd element
//!   offset; the refusals, which must leave the generator and the output
//!   untouched;
//! * against cuRAND itself (the golden vectors of
//!   `tests/fixtures/curand/`): the host API's fills and the device API's
//!   draws (`curand`, `curand_uniform`, `curand_normal`,
//!   `curand_log_normal`, `curand_poisson` for `λ < 64`), bit for bit;
//! * the π estimate's hit counts, equal to the CPU's.

use crate::common::*;
use libtest_mimic::{Failed, Trial};
use warpspeed::Context;
use warpspeed::rng::{
    Draw, Generator, HOST_STREAM_LIMIT, NORMAL_CPU_TOLERANCE, PerThread, Philox, in_quarter_disc,
    uniform_of,
};

include!("../fixtures/curand/records.rs");

const SEED: u64 = 0x5eed_1234_abcd_0042;

/// Fills `n` values from `position` (raw and uniform), at element offset
/// `offset` into a poisoned buffer, and compares every element with the
/// CPU twin; the poison around the fill must survive.
fn check_fill(
    ctx: &warpspeed::Context,
    n: usize,
    position: u64,
    offset: usize,
) -> Result<(), Failed> {
    let mut bits = poisoned(ctx, offset + n + 1, 0xdead_beefu32)?;
    let mut generator = Generator::with_offset(SEED, position);
    ok(ctx.fill_u32_into(&mut generator, &mut ok(bits.slice_mut(offset..offset + n))?))?.wait()?;
    ensure(generator.position() == position + n as u64, || {
        format!("position {} after the fill", generator.position())
    })?;
    let got = download(ctx, &bits)?;
    let mut uniforms = poisoned(ctx, offset + n + 1, -1.0f32)?;
    let mut generator = Generator::with_offset(SEED, position);
    ok(ctx.fill_uniform_into(
        &mut generator,
        &mut ok(uniforms.slice_mut(offset..offset + n))?,
    ))?
    .wait()?;
    let got_uniform = download(ctx, &uniforms)?;
    let twin = Generator::with_offset(SEED, 0);
    for i in 0..n {
        let want = twin.value(position + i as u64);
        ensure(got[offset + i] == want, || {
            format!(
                "u32 {i} of {n} from {position}: {:#x}, want {want:#x}",
                got[offset + i]
            )
        })?;
        ensure(
            got_uniform[offset + i].to_bits() == uniform_of(want).to_bits(),
            || {
                format!(
                    "uniform {i} of {n} from {position}: {}",
                    got_uniform[offset + i]
                )
            },
        )?;
    }
    check_distributions(ctx, n, position, offset)?;
    for (at, (&b, &u)) in got.iter().zip(&got_uniform).enumerate() {
        if at < offset || at >= offset + n {
            ensure(b == 0xdead_beef && u == -1.0, || {
                format!("element {at} outside the fill was written")
            })?;
        }
    }
    Ok(())
}

/// The spacing of `f32`s at `x`.
fn ulp(x: f32) -> f32 {
    f32::from_bits(x.abs().to_bits() + 1) - x.abs()
}

/// The radius `sqrt(−2 ln u)` of the Box–Muller pair at `position`.
fn radius(twin: &Generator, position: u64) -> f32 {
    (-2.0 * uniform_of(twin.value(position & !1)).ln()).sqrt()
}

/// Poisson counts of mean `lambda`, `n` from `position`, against the CPU
/// twin's count of each value (exact: the same table, integer compares).
fn check_poisson(ctx: &Context, lambda: f64, n: usize, position: u64) -> Result<(), Failed> {
    let table = ok(ctx.poisson_table(lambda))?;
    let mut counts = poisoned(ctx, n + 1, u32::MAX)?;
    let mut generator = Generator::with_offset(SEED, position);
    ok(ctx.fill_poisson_into(&mut generator, &table, &mut ok(counts.slice_mut(0..n))?))?.wait()?;
    let counts = download(ctx, &counts)?;
    let twin = Generator::with_offset(SEED, 0);
    for (i, &count) in counts[..n].iter().enumerate() {
        let want = twin.poisson_value(position + i as u64, &table);
        ensure(count == want, || {
            format!("λ {lambda}: count {i} from {position} is {count}, the CPU's {want}")
        })?;
    }
    ensure(counts[n] == u32::MAX, || {
        "the element past the fill was written".into()
    })
}

/// Normals (mean 1.5, deviation 2), log-normals (0.5, 1.5) and Poisson
/// counts (λ = 3.5) of `n` values from `position` at element `offset`,
/// against the CPU twin.
fn check_distributions(
    ctx: &Context,
    n: usize,
    position: u64,
    offset: usize,
) -> Result<(), Failed> {
    let twin = Generator::with_offset(SEED, 0);
    let mut normals = poisoned(ctx, offset + n + 1, -7.0f32)?;
    let mut generator = Generator::with_offset(SEED, position);
    ok(ctx.fill_normal_into(
        &mut generator,
        1.5,
        2.0,
        &mut ok(normals.slice_mut(offset..offset + n))?,
    ))?
    .wait()?;
    let mut logs = poisoned(ctx, offset + n + 1, -7.0f32)?;
    let mut generator = Generator::with_offset(SEED, position);
    ok(ctx.fill_log_normal_into(
        &mut generator,
        0.5,
        1.5,
        &mut ok(logs.slice_mut(offset..offset + n))?,
    ))?
    .wait()?;
    let table = ok(ctx.poisson_table(3.5))?;
    let mut counts = poisoned(ctx, offset + n + 1, u32::MAX)?;
    let mut generator = Generator::with_offset(SEED, position);
    ok(ctx.fill_poisson_into(
        &mut generator,
        &table,
        &mut ok(counts.slice_mut(offset..offset + n))?,
    ))?
    .wait()?;
    ensure(generator.position() == position + n as u64, || {
        format!("position {} after the Poisson fill", generator.position())
    })?;
    let (normals, logs, counts) = (
        download(ctx, &normals)?,
        download(ctx, &logs)?,
        download(ctx, &counts)?,
    );
    for i in 0..n {
        let at = position + i as u64;
        let r = radius(&twin, at);
        let z = twin.normal_value(at);
        let want = 1.5 + 2.0 * z;
        // The twin's bound on z (see `warpspeed::rng`) doubled by the
        // deviation (exact), and a rounding of the sum on each side.
        let bound = 2.0 * (NORMAL_CPU_TOLERANCE * r + 2.0 * ulp(z)) + 2.0 * ulp(want);
        ensure((normals[offset + i] - want).abs() <= bound, || {
            format!(
                "normal {i} of {n} from {position}: {} against the CPU's {want}",
                normals[offset + i]
            )
        })?;
        let want = twin.log_normal_value(at, 0.5, 1.5);
        // The exponent's error (1.5 times the normal's) relative, and the
        // two `expf`s' few ulp.
        let rel = 1.5 * (NORMAL_CPU_TOLERANCE * r + 1e-6) + 4.0 * f32::EPSILON;
        ensure((logs[offset + i] - want).abs() <= rel * want, || {
            format!(
                "log-normal {i} of {n} from {position}: {} against the CPU's {want}",
                logs[offset + i]
            )
        })?;
        let want = twin.poisson_value(at, &table);
        ensure(counts[offset + i] == want, || {
            format!(
                "Poisson {i} of {n} from {position}: {} against the CPU's {want}",
                counts[offset + i]
            )
        })?;
    }
    for at in (0..offset).chain(offset + n..offset + n + 1) {
        ensure(
            normals[at] == -7.0 && logs[at] == -7.0 && counts[at] == u32::MAX,
            || format!("element {at} outside a distribution fill was written"),
        )?;
    }
    Ok(())
}

/// The host API's fills against cuRAND's own (`host_*` records), bit for
/// bit: one fill of each record's length from its offset.
fn check_host_golden(ctx: &Context) -> Result<(), Failed> {
    let mut checked = 0;
    for (what, seed, offset, pairs) in host_records() {
        let n = pairs.iter().map(|p| p.0).max().unwrap_or(0) as usize + 1;
        let mut generator = Generator::with_offset(seed, offset);
        let words: Vec<u32> = match what.as_str() {
            "host_curand" => {
                let mut out = poisoned(ctx, n, 0u32)?;
                ok(ctx.fill_u32_into(&mut generator, &mut out))?.wait()?;
                download(ctx, &out)?
            }
            "host_uniform" | "host_normal" | "host_log_normal" => {
                let mut out = poisoned(ctx, n, 0f32)?;
                let pending = match what.as_str() {
                    "host_uniform" => ctx.fill_uniform_into(&mut generator, &mut out),
                    "host_normal" => ctx.fill_normal_into(&mut generator, 0.0, 1.0, &mut out),
                    _ => ctx.fill_log_normal_into(&mut generator, 0.5, 1.5, &mut out),
                };
                ok(pending)?.wait()?;
                download(ctx, &out)?.iter().map(|v| v.to_bits()).collect()
            }
            // cuRAND's Poisson fills map values through tables of its own.
            _ => continue,
        };
        for (i, word) in pairs {
            ensure(words[i as usize] == word, || {
                format!(
                    "{what} seed {seed} offset {offset} value {i}: {:#010x}, cuRAND's {word:#010x}",
                    words[i as usize]
                )
            })?;
            checked += 1;
        }
    }
    eprintln!("  {checked} values of cuRAND's host-API fills equal, bit for bit");
    ensure(checked > 10_000, || {
        format!("only {checked} values checked")
    })
}

/// The device API's draws against cuRAND's (device-API records), bit for
/// bit: one thread per record (its triple), 16 draws.
fn check_device_golden(ctx: &Context) -> Result<(), Failed> {
    let (mut checked, mut skipped) = (0, 0);
    for r in records() {
        let draw = match r.what.as_str() {
            "curand" => Draw::Bits,
            "uniform" => Draw::Uniform,
            "normal" => Draw::Normal,
            "log_normal" => Draw::LogNormal {
                mean: r.params[0] as f32,
                stddev: r.params[1] as f32,
            },
            "poisson" if r.params[0] < 64.0 => Draw::Poisson {
                lambda: r.params[0],
            },
            _ => {
                skipped += 1;
                continue;
            }
        };
        let per_thread = PerThread {
            seed: r.triple.0,
            subsequence: r.triple.1,
            offset: r.triple.2,
            threads: 1,
        };
        let words: Vec<u32> = if matches!(draw, Draw::Bits | Draw::Poisson { .. }) {
            let mut out = poisoned(ctx, 16, 0u32)?;
            ok(ctx.draws_into(&per_thread, draw, &mut out))?.wait()?;
            download(ctx, &out)?
        } else {
            let mut out = poisoned(ctx, 16, 0f32)?;
            ok(ctx.draws_into(&per_thread, draw, &mut out))?.wait()?;
            download(ctx, &out)?.iter().map(|v| v.to_bits()).collect()
        };
        ensure(words == r.words, || {
            format!(
                "{} {:?} {:?}: {words:08x?}, cuRAND's {:08x?}",
                r.what, r.triple, r.params, r.words
            )
        })?;
        checked += 1;
    }
    eprintln!(
        "  {checked} device-API records equal cuRAND's bit for bit ({skipped} not drawn on the GPU: \
         curand4, uniform4, normal2, normal4, the f64 draws and Poisson λ ≥ 64)"
    );
    ensure(checked >= 8 * 8, || format!("only {checked} records"))
}

/// Fills of 2^31 + 5 values from a stream position past 2^32 (see the
/// tests past 2^31 in `common`).
fn past_2_31(ctx: &Context) -> Result<(), Failed> {
    // 2^31 + 5 raw values and uniforms from a position past 2^32, against
    // the CPU twin, bit for bit.
    const SEED: u64 = 0x0bad_5eed_0000_0031;
    let n = TWO_31 + 5;
    let position = (1u64 << 32) + 3;
    let twin = Generator::new(SEED);
    let mut bits = filled(ctx, n, 0u32)?;
    let mut generator = Generator::with_offset(SEED, position);
    ok(ctx
        .fill_u32_into(&mut generator, &mut bits)
        .and_then(|p| p.wait()))?;
    ensure(generator.position() == position + n as u64, || {
        format!("position {} after the fill", generator.position())
    })?;
    for range in windows(n, &[TWO_31]) {
        let got = download(ctx, &ok(bits.slice(range.clone()))?)?;
        for i in range.clone() {
            let want = twin.value(position + i as u64);
            ensure(got[i - range.start] == want, || {
                format!("u32 {i}: {:#x}, want {want:#x}", got[i - range.start])
            })?;
        }
    }
    drop(bits);
    let mut uniforms = filled(ctx, n, -1.0f32)?;
    let mut generator = Generator::with_offset(SEED, position);
    ok(ctx
        .fill_uniform_into(&mut generator, &mut uniforms)
        .and_then(|p| p.wait()))?;
    for range in windows(n, &[TWO_31]) {
        let got = download(ctx, &ok(uniforms.slice(range.clone()))?)?;
        for i in range.clone() {
            let want = uniform_of(twin.value(position + i as u64));
            ensure(got[i - range.start].to_bits() == want.to_bits(), || {
                format!("uniform {i}: {}, want {want}", got[i - range.start])
            })?;
        }
    }
    Ok(())
}

pub fn trials(trials: &mut Vec<Trial>) {
    for n in [1usize, 3, 4, 5, 1000, 262_147, 1_000_003] {
        for position in [
            0u64,
            1,
            2,
            3,
            1000,
            (1 << 40) + 3,
            HOST_STREAM_LIMIT - n as u64,
        ] {
            for offset in [0usize, 1] {
                trials.push(sized_trial(
                    format!("rng::fill::n{n}_from{position}_offset{offset}"),
                    n,
                    move |ctx| check_fill(ctx, n, position, offset),
                ));
            }
        }
    }

    trials.push(gpu_trial(
        "rng::fill::chunks_of_odd_sizes_continue_the_stream",
        |ctx| {
            let sizes = [1usize, 3, 5, 1000, 7, 262_145, 2];
            let total: usize = sizes.iter().sum();
            let mut chunked = poisoned(ctx, total, 0u32)?;
            let mut generator = Generator::with_offset(SEED, 5);
            let mut at = 0;
            for n in sizes {
                ok(ctx.fill_u32_into(&mut generator, &mut ok(chunked.slice_mut(at..at + n))?))?
                    .wait()?;
                at += n;
            }
            let mut whole = poisoned(ctx, total, 1u32)?;
            let mut one = Generator::with_offset(SEED, 5);
            ok(ctx.fill_u32_into(&mut one, &mut whole))?.wait()?;
            ensure(download(ctx, &chunked)? == download(ctx, &whole)?, || {
                "chunks differ from one fill".into()
            })?;
            ensure(generator == one, || {
                format!("{generator:?} against {one:?}")
            })
        },
    ));

    // Poisson tables small enough for each block's shared memory (up to
    // λ = 1000) and larger ones read from global memory (10^6, 2^30), from
    // an unaligned position (the staged path) and an aligned one.
    for lambda in [1e-12, 0.5, 3.5, 63.0, 1000.0, 1e6, 1073741824.0] {
        for position in [0u64, 3] {
            trials.push(gpu_trial(
                format!("rng::poisson::lambda{lambda}_from{position}"),
                move |ctx| check_poisson(ctx, lambda, 262_147, position),
            ));
        }
    }

    trials.push(gpu_trial("rng::fill::empty_moves_nothing", |ctx| {
        let mut buffer = poisoned(ctx, 1, 7u32)?;
        let mut generator = Generator::with_offset(SEED, 9);
        ok(ctx.fill_u32_into(&mut generator, &mut ok(buffer.slice_mut(0..0))?))?.wait()?;
        ensure(
            generator.position() == 9 && download(ctx, &buffer)? == [7],
            || "an empty fill changed something".into(),
        )
    }));

    trials.push(gpu_trial(
        "rng::golden::host_api_fills_equal_curands",
        check_host_golden,
    ));
    trials.push(gpu_trial(
        "rng::golden::device_api_draws_equal_curands",
        check_device_golden,
    ));

    trials.push(gpu_trial(
        "rng::fill::normal_chunks_of_odd_sizes_continue_the_stream",
        |ctx| {
            let sizes = [1usize, 3, 5, 1000, 7, 262_145, 2];
            let total: usize = sizes.iter().sum();
            let mut chunked = poisoned(ctx, total, 0f32)?;
            let mut generator = Generator::with_offset(SEED, 3);
            let mut at = 0;
            for n in sizes {
                ok(ctx.fill_normal_into(
                    &mut generator,
                    0.0,
                    1.0,
                    &mut ok(chunked.slice_mut(at..at + n))?,
                ))?
                .wait()?;
                at += n;
            }
            let mut whole = poisoned(ctx, total, 1f32)?;
            let mut one = Generator::with_offset(SEED, 3);
            ok(ctx.fill_normal_into(&mut one, 0.0, 1.0, &mut whole))?.wait()?;
            let (a, b) = (download(ctx, &chunked)?, download(ctx, &whole)?);
            ensure(
                a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()),
                || "normal chunks differ from one fill".into(),
            )
        },
    ));

    for (threads, draws) in [(1usize, 1u32), (1000, 17), (70_001, 64)] {
        trials.push(gpu_trial(
            format!("rng::pi::threads{threads}_draws{draws}"),
            move |ctx| {
                let mut hits = poisoned(ctx, threads, u32::MAX)?;
                ok(ctx.pi_hits_into(77, draws, &mut hits))?.wait()?;
                let hits = download(ctx, &hits)?;
                for t in (0..threads).step_by(threads / 97 + 1).chain([threads - 1]) {
                    let mut philox = Philox::new(77, t as u64, 0);
                    let want = (0..draws)
                        .filter(|_| in_quarter_disc(philox.uniform(), philox.uniform()))
                        .count() as u32;
                    ensure(hits[t] == want, || {
                        format!("thread {t}: {} hits, the CPU's {want}", hits[t])
                    })?;
                }
                let total: u64 = hits.iter().map(|&h| h as u64).sum();
                let estimate = 4.0 * total as f64 / (threads as f64 * draws as f64);
                eprintln!("  π ≈ {estimate}");
                Ok(())
            },
        ));
    }

    trials.push(gpu_trial("rng::draws::many_threads_equal_the_cpu", |ctx| {
        let per_thread = PerThread {
            seed: 5,
            subsequence: u64::MAX - 100,
            offset: 3,
            threads: 1001,
        };
        let mut out = poisoned(ctx, 1001 * 5, 0f32)?;
        ok(ctx.draws_into(&per_thread, Draw::Normal, &mut out))?.wait()?;
        let got = download(ctx, &out)?;
        for t in 0..1001 {
            let mut philox = Philox::new(5, (u64::MAX - 100).wrapping_add(t as u64), 3);
            for i in 0..5 {
                let want = philox.normal();
                let gpu = got[i * 1001 + t];
                ensure(
                    (gpu - want).abs() <= NORMAL_CPU_TOLERANCE * 6.0 + 2e-6 * want.abs(),
                    || format!("thread {t} draw {i}: {gpu}, the CPU's {want}"),
                )?;
            }
        }
        Ok(())
    }));

    trials.push(gpu_trial("rng::refusals", |ctx| {
        let mut out = poisoned(ctx, 4, 7.0f32)?;
        let mut counts = poisoned(ctx, 4, 7u32)?;
        let mut generator = Generator::with_offset(SEED, 11);
        for (mean, stddev) in [(0.0, -1.0), (f32::NAN, 1.0), (0.0, f32::INFINITY)] {
            expect_invalid(
                ctx.fill_normal_into(&mut generator, mean, stddev, &mut out),
                &format!("a normal fill with mean {mean} and deviation {stddev}"),
            )?;
            expect_invalid(
                ctx.fill_log_normal_into(&mut generator, mean, stddev, &mut out),
                &format!("a log-normal fill with mean {mean} and deviation {stddev}"),
            )?;
        }
        for lambda in [0.0, -1.0, f64::NAN, f64::INFINITY, 2e9] {
            expect_invalid(
                ctx.poisson_table(lambda),
                &format!("a Poisson table of λ = {lambda}"),
            )?;
        }
        let one = PerThread {
            seed: 1,
            subsequence: 0,
            offset: 0,
            threads: 2,
        };
        expect_invalid(
            ctx.draws_into(&one, Draw::Normal, &mut counts),
            "normals into u32",
        )?;
        expect_invalid(ctx.draws_into(&one, Draw::Bits, &mut out), "bits into f32")?;
        expect_invalid(
            ctx.draws_into(&one, Draw::Poisson { lambda: 64.0 }, &mut counts),
            "a device Poisson draw with λ = 64",
        )?;
        expect_invalid(
            ctx.draws_into(&one, Draw::Poisson { lambda: -2.0 }, &mut counts),
            "a device Poisson draw with λ = −2",
        )?;
        expect_invalid(
            ctx.draws_into(
                &one,
                Draw::LogNormal {
                    mean: 0.0,
                    stddev: -1.0,
                },
                &mut out,
            ),
            "a device log-normal draw with deviation −1",
        )?;
        expect_invalid(
            ctx.draws_into(&PerThread { threads: 3, ..one }, Draw::Normal, &mut out),
            "4 draws over 3 threads",
        )?;
        ensure(
            generator.position() == 11
                && download(ctx, &out)? == [7.0; 4]
                && download(ctx, &counts)? == [7; 4],
            || "a refused call changed the generator or an output".into(),
        )
    }));

    trials.push(gpu_trial("rng::fill::refuses_to_pass_2_to_the_50", |ctx| {
        let mut buffer = poisoned(ctx, 3, 7u32)?;
        let mut generator = Generator::with_offset(SEED, HOST_STREAM_LIMIT - 2);
        expect_invalid(
            ctx.fill_u32_into(&mut generator, &mut buffer),
            "a fill past 2^50",
        )?;
        let mut end = Generator::with_offset(SEED, u64::MAX);
        expect_invalid(
            ctx.fill_u32_into(&mut end, &mut buffer),
            "a fill from position 2^64 − 1",
        )?;
        ensure(
            generator.position() == HOST_STREAM_LIMIT - 2 && download(ctx, &buffer)? == [7, 7, 7],
            || "a refused fill changed the generator or the output".into(),
        )
    }));
    trials.push(sized_trial("rng::past_2_31", TWO_31 + 5, past_2_31));
}
