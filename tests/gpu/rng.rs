//! Bulk fills (cuRAND's host API, Philox4_32_10): every value equal, bit
//! for bit, to the CPU twin (`Generator::value`, itself tested against
//! cuRAND's own fills in CI), for fills of 1 to 1 000 003 values from
//! stream positions that do and do not start a block of 4, up to 2^50;
//! fills in chunks of odd sizes equal to one fill; an output at an odd
//! element offset; the refusal past 2^50, which must leave both the
//! generator and the output untouched.

use crate::common::*;
use cust::memory::DeviceBuffer;
use libtest_mimic::{Failed, Trial};
use warpspeed::rng::{Generator, HOST_STREAM_LIMIT, uniform_of};

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
    let bits = poisoned(offset + n + 1, 0xdead_beefu32)?;
    let mut generator = Generator::with_offset(SEED, position);
    ok(ctx.fill_u32_into(&mut generator, &mut bits.index(offset..offset + n)))?.wait()?;
    ensure(generator.position() == position + n as u64, || {
        format!("position {} after the fill", generator.position())
    })?;
    let got = download(&bits)?;
    let uniforms = poisoned(offset + n + 1, -1.0f32)?;
    let mut generator = Generator::with_offset(SEED, position);
    ok(ctx.fill_uniform_into(&mut generator, &mut uniforms.index(offset..offset + n)))?.wait()?;
    let got_uniform = download(&uniforms)?;
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
    for (at, (&b, &u)) in got.iter().zip(&got_uniform).enumerate() {
        if at < offset || at >= offset + n {
            ensure(b == 0xdead_beef && u == -1.0, || {
                format!("element {at} outside the fill was written")
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
            let chunked = poisoned(total, 0u32)?;
            let mut generator = Generator::with_offset(SEED, 5);
            let mut at = 0;
            for n in sizes {
                ok(ctx.fill_u32_into(&mut generator, &mut chunked.index(at..at + n)))?.wait()?;
                at += n;
            }
            let mut whole = poisoned(total, 1u32)?;
            let mut one = Generator::with_offset(SEED, 5);
            ok(ctx.fill_u32_into(&mut one, &mut whole))?.wait()?;
            ensure(download(&chunked)? == download(&whole)?, || {
                "chunks differ from one fill".into()
            })?;
            ensure(generator == one, || {
                format!("{generator:?} against {one:?}")
            })
        },
    ));

    trials.push(gpu_trial("rng::fill::empty_moves_nothing", |ctx| {
        let buffer = poisoned(1, 7u32)?;
        let mut generator = Generator::with_offset(SEED, 9);
        ok(ctx.fill_u32_into(&mut generator, &mut buffer.index(0..0)))?.wait()?;
        ensure(
            generator.position() == 9 && download(&buffer)? == [7],
            || "an empty fill changed something".into(),
        )
    }));

    trials.push(gpu_trial("rng::fill::refuses_to_pass_2_to_the_50", |ctx| {
        let mut buffer: DeviceBuffer<u32> = poisoned(3, 7u32)?;
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
            generator.position() == HOST_STREAM_LIMIT - 2 && download(&buffer)? == [7, 7, 7],
            || "a refused fill changed the generator or the output".into(),
        )
    }));
}
