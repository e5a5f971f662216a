//! The 1D convolution ladder on one signal of 2^26 `f32` (2^24 with
//! `--quick`) with masks of 7, 31, 63, 127 and 1 025 taps (63: near where
//! the tensor cores' step 7 overtakes the direct steps; 1 025: where step 5
//! runs its own kernel), against cuDNN through
//! `torch.nn.functional.conv1d` (FP32, TF32 off). GB/s count the signal read
//! once and the output written once (8 bytes per element); the
//! constant-memory steps' times include copying their mask into constant
//! memory, as every call does. `--masks 71,79` runs other tap counts
//! instead (where two steps cross).

use crate::harness::{Bench, Case, Family, device_copies, enqueued, ladder_rows};
use warpspeed::conv1d::Conv1dVariant;
use warpspeed::{Buffer, Context};

pub const FAMILY: Family = Family {
    name: "conv1d",
    run,
};

const MASKS: [usize; 5] = [7, 31, 63, 127, 1025];

/// The signal: `hash(i) / 1000 − 0.5`, the values of the reduction bench.
fn signal(i: usize) -> f32 {
    crate::harness::hash(i, 1000) as f32 / 1000.0 - 0.5
}

/// The mask: weights in [−0.5, 0.5).
fn weight(j: usize) -> f32 {
    ((j * 7 + 3) % 17) as f32 / 17.0 - 0.5
}

fn run(bench: &mut Bench) -> Result<(), String> {
    let log_n = if bench.quick { 24 } else { 26 };
    let n = 1usize << log_n;
    // Steps the loaded module does not have (step 8 outside sm_90a) are
    // left out of the table.
    let target = bench.ctx.info().ptx_target;
    let host: Vec<f32> = (0..n).map(signal).collect();
    let inputs = device_copies(bench, &host)?;
    let mut out = bench.ctx.upload(&host).map_err(|e| e.to_string())?;
    let masks = if bench.masks.is_empty() {
        MASKS.to_vec()
    } else {
        bench.masks.clone()
    };
    for taps in masks {
        let weights: Vec<f32> = (0..taps).map(weight).collect();
        let mask = bench.ctx.upload(&weights).map_err(|e| e.to_string())?;
        let peers = bench.peers.measure(&[format!("conv1d:{n}:{taps}")]);
        let case = format!("f32 2^{log_n}, mask {taps}");
        let rows = ladder_rows::<Conv1dVariant>(
            bench,
            &case,
            "",
            |variant| variant.needs().met_by(target),
            |bench, variant| {
                let mut turn = 0;
                let ms = bench.time(|| {
                    turn += 1;
                    enqueued(bench.ctx.conv1d_into_with(
                        variant,
                        &inputs[turn % inputs.len()],
                        &mask,
                        &mut out,
                    ))
                })?;
                spot_check(bench.ctx, variant, &host, &weights, &out)
                    .map_err(|e| format!("{variant:?}: {e}"))?;
                Ok(ms)
            },
        )?;
        bench.record(
            &format!("conv1d f32 2^{log_n}, mask of {taps} (GB/s: signal read + output written)"),
            Case {
                family: "conv1d",
                case,
                bytes: 8.0 * n as f64,
                rows,
                peers: peers.into_iter().map(|p| ("", p)).collect(),
            },
        );
    }
    Ok(())
}

/// Checks the timed result at the ends, around tile boundaries and at a
/// few scattered outputs against an `f64` reference, within the bounds of
/// the test suite: `(taps + 2) · 2^-24 · Σ|signal · mask|`, and for
/// Karatsuba's odd outputs `(2·taps + 8) · 2^-24` times that sum over the
/// output and its two neighbours, and for the tensor-core steps
/// `error_units(taps) · 2^-24` times it.
fn spot_check(
    ctx: &Context,
    variant: Conv1dVariant,
    signal: &[f32],
    mask: &[f32],
    out: &Buffer<f32>,
) -> Result<(), String> {
    let (n, taps) = (signal.len(), mask.len());
    let r = taps / 2;
    let mut spots = vec![
        0,
        1,
        r,
        255,
        256,
        4095,
        4096,
        n / 2,
        n - r - 1,
        n - 2,
        n - 1,
    ];
    spots.extend((1..16).map(|k| (k * 1_000_003 * 37) % n));
    // (value, Σ|products|) of output i; (0, 0) past the end.
    let exact = |i: usize| {
        let (mut want, mut magnitude) = (0.0f64, 0.0f64);
        for (j, &m) in mask.iter().enumerate() {
            if i < n && i + j >= r && i + j - r < n {
                let p = signal[i + j - r] as f64 * m as f64;
                want += p;
                magnitude += p.abs();
            }
        }
        (want, magnitude)
    };
    for i in spots {
        let (want, magnitude) = exact(i);
        let mut got = [0.0f32];
        out.slice(i..i + 1)
            .and_then(|one| ctx.copy_to_host(&one, &mut got))
            .map_err(|e| e.to_string())?;
        let split = variant.runs_as(taps) == Conv1dVariant::Karatsuba && i % 2 == 1;
        let tolerance = if split {
            let near = exact(i - 1).1 + magnitude + exact(i + 1).1;
            (2 * taps + 8) as f64 * 2f64.powi(-24) * near
        } else if let Some(units) = variant.error_units(taps) {
            units as f64 * 2f64.powi(-24) * magnitude
        } else {
            (taps + 2) as f64 * 2f64.powi(-24) * magnitude
        };
        if (got[0] as f64 - want).abs() > tolerance {
            return Err(format!("output {i} is {}, want {want}", got[0]));
        }
    }
    Ok(())
}
