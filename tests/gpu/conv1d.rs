//! 1D convolution: every step, masks of 1, 2 (even), 7, 16, 31, 32, 127,
//! 129, 130, 255 and 1 025 taps on signals of 0 to 1 000 003 elements and 2^26, batches of
//! rows with pitches (rows that do and do not start on 16 bytes, more rows
//! than a grid has in y), a signal and an output at odd element offsets, NaN
//! and ±∞ in the signal, two streams racing for the constant-memory mask,
//! and every refusal. Compared with an `f64` CPU reference within the bound
//! derived beside [`close`]; outputs poisoned, and the padding between
//! output rows must keep its poison.

use crate::common::*;
use libtest_mimic::{Failed, Trial};
use std::cell::RefCell;
use std::rc::Rc;
use warpspeed::conv1d::{Conv1dVariant, MAX_TAPS};
use warpspeed::{Buffer, Context, DeviceRead, Matrix, MatrixMut, ViewMut};

const TAPS: [usize; 8] = [1, 2, 7, 16, 31, 32, 127, MAX_TAPS];
const LENGTHS: [usize; 7] = [0, 1, 5, 4095, 4096, 4097, 1_000_003];

/// Written to every output before a run: far outside what any test
/// convolution gives (|inputs| < 1, at most 1 025 taps), so an output never
/// written fails its check.
const POISON: f32 = -3.0e38;

/// One convolution: `rows` rows of `width` elements, `pitch` apart, at an
/// element offset into the signal and the output buffers.
#[derive(Clone, Debug)]
struct Case {
    taps: usize,
    width: usize,
    rows: usize,
    signal_pitch: usize,
    out_pitch: usize,
    signal_offset: usize,
    out_offset: usize,
    /// Through `conv1d_rows_into` (a `Matrix`) rather than `conv1d_into`.
    batch: bool,
    /// NaN and ±∞ placed in the signal.
    specials: bool,
}

impl Case {
    fn signal(taps: usize, n: usize) -> Case {
        Case {
            taps,
            width: n,
            rows: 1,
            signal_pitch: n,
            out_pitch: n,
            signal_offset: 0,
            out_offset: 0,
            batch: false,
            specials: false,
        }
    }

    fn rows(taps: usize, width: usize, rows: usize, pitches: (usize, usize)) -> Case {
        Case {
            rows,
            signal_pitch: pitches.0,
            out_pitch: pitches.1,
            batch: true,
            ..Case::signal(taps, width)
        }
    }

    /// Elements a view of this shape spans.
    fn extent(&self, pitch: usize) -> usize {
        if self.width == 0 || self.rows == 0 {
            0
        } else {
            (self.rows - 1) * pitch + self.width
        }
    }

    fn signal_len(&self) -> usize {
        self.signal_offset + self.extent(self.signal_pitch)
    }

    fn out_len(&self) -> usize {
        self.out_offset + self.extent(self.out_pitch)
    }

    /// The input's cache key (the data depend on nothing else).
    fn key(&self) -> String {
        format!(
            "conv1d/{}/{}x{}/{}+{}/{}",
            self.taps, self.width, self.rows, self.signal_offset, self.signal_pitch, self.specials
        )
    }

    fn name(&self) -> String {
        let mut name = format!("taps_{}::", self.taps);
        if self.batch {
            name += &format!(
                "rows_{}x{}::pitch_{}_{}",
                self.width, self.rows, self.signal_pitch, self.out_pitch
            );
        } else {
            name += &format!("n_{}", self.width);
        }
        if self.signal_offset + self.out_offset > 0 {
            name += &format!("::offset_{}_{}", self.signal_offset, self.out_offset);
        }
        if self.specials {
            name += "::nan_inf";
        }
        name
    }

    /// The signal buffer (offset, rows, padding), then the mask.
    fn input(&self) -> Vec<f32> {
        let key = self.key();
        let mut host = random_vec(self.signal_len() + self.taps, seed_of(&key), draw_f32);
        if self.specials {
            let n = self.signal_len();
            let spots = [0, 4095, n / 2, n - 1];
            let values = [f32::INFINITY, f32::NEG_INFINITY, f32::NAN, f32::INFINITY];
            for (&i, &v) in spots.iter().zip(&values) {
                host[i] = v;
            }
        }
        host
    }
}

/// `(value, Σ|finite products|)` of every output, row by row (`rows ×
/// width`), in `f64`; only the products of the definition, none outside the
/// row.
type Reference = Rc<(Vec<f64>, Vec<f64>)>;

thread_local! {
    static REFERENCE: RefCell<Option<(String, Reference)>> = const { RefCell::new(None) };
}

/// The reference of `case` over `host` (its [`Case::input`]), cached for
/// the consecutive trials of one case.
fn reference(case: &Case, host: &[f32]) -> Reference {
    let key = format!("{}/{}", case.key(), case.batch);
    if let Some(hit) = REFERENCE.with(|c| {
        c.borrow()
            .as_ref()
            .filter(|(k, _)| *k == key)
            .map(|(_, v)| v.clone())
    }) {
        return hit;
    }
    let (w, taps) = (case.width, case.taps);
    let r = taps / 2;
    let mask = &host[case.signal_len()..];
    let mut value = vec![0.0f64; w * case.rows];
    let mut magnitude = vec![0.0f64; w * case.rows];
    for y in 0..case.rows {
        let row = &host[case.signal_offset + y * case.signal_pitch..][..w];
        for i in 0..w {
            // Taps whose input `i − r + j` lies in `0..w`.
            let (first, end) = (r.saturating_sub(i), taps.min(w + r - i));
            let (mut s, mut m) = (0.0f64, 0.0f64);
            for j in first..end {
                let p = row[i + j - r] as f64 * mask[j] as f64;
                s += p;
                // Finite products only: see `close` on Karatsuba's bound.
                if p.is_finite() {
                    m += p.abs();
                }
            }
            value[y * w + i] = s;
            magnitude[y * w + i] = m;
        }
    }
    let reference = Rc::new((value, magnitude));
    REFERENCE.with(|c| *c.borrow_mut() = Some((key, reference.clone())));
    reference
}

/// Whether `got` is an acceptable `f32` result for the exact sum `want` of
/// `taps` products whose magnitudes add up to `magnitude`.
///
/// The bound: a step sums the `k = taps` products `x_j·m_j` in `f32` in an
/// order of its own, with fused multiply-adds (one rounding each) or a
/// product and a sum (two). With `u = 2^-24`, either way the computed sum
/// differs from the exact one by at most `γ_k · Σ|x_j·m_j|`, `γ_k = k·u /
/// (1 − k·u)` (Higham, *Accuracy and Stability of Numerical Algorithms*,
/// §3.1, the product's rounding included); for `k <= 1025`, `k·u < 2^-13`,
/// so `γ_k <= (k + 1)·u`. The `f64` reference of the same products (exact:
/// every `f32` is an `f64`, and their products fit its 53 bits) is summed
/// with a relative error near `k·2^-53`, far below one more `u`: hence
/// `(taps + 2)·u·Σ|x·m|`. Products and partial sums below 2^-126 are
/// subnormal in `f32`, where a rounding errs by up to 2^-150 absolutely
/// rather than relatively: `(taps + 2)·2^-149` more covers that.
///
/// [`Conv1dVariant::Karatsuba`]'s odd outputs (for masks of more than 128
/// taps, which it computes itself) are `C − A' − B`, where `C` also holds
/// products of the two neighbouring outputs that `A'` and `B` cancel: the
/// roundings of `C`'s `⌈taps / 2⌉` terms (whose magnitudes add up to at
/// most `M(i − 1) + M(i) + M(i + 1)`, the neighbours' `Σ|x·m|` included),
/// of the sums `S` and `h0 + h1` inside them (two more `u` each), and of
/// `A'` and `B` (each at most `(⌈taps / 2⌉ + 1)·u` of its neighbour's
/// magnitude) add up to at most `(3⌈taps / 2⌉ + 5)·u·(M(i − 1) + M(i) +
/// M(i + 1))` to first order; `(2·taps + 8)·u·…` covers it with room for
/// the second-order terms. `near` is that sum of three magnitudes for such
/// an output, `None` for every other. A magnitude here sums the finite
/// products only (the same for a finite output): a neighbour's window may
/// hold NaN or ±∞ where a finite odd output's cross terms do not (had they,
/// the output would not be finite, and Karatsuba computes it again
/// directly), and the cross terms are then at most its finite products.
///
/// A non-finite exact sum (∞ or NaN in the window) must come out as the same
/// infinity, or as NaN.
///
/// The tensor-core steps ([`Conv1dVariant::Tf32x3`],
/// [`Conv1dVariant::Tf32x3Wgmma`], [`Conv1dVariant::Tf32x3Tma`] and
/// [`Conv1dVariant::Bf16Corrections`]) sum on the tensor cores, with TF32
/// parts of each operand (and BF16 small terms in step 10): their bound is
/// `tensor`, the step's [`Conv1dVariant::error_units`]`(taps)`, in place of
/// `taps + 2` (derived beside those units).
fn close(
    got: f32,
    want: f64,
    magnitude: f64,
    taps: usize,
    near: Option<f64>,
    tensor: Option<usize>,
) -> bool {
    if want.is_nan() {
        return got.is_nan();
    }
    if want.is_infinite() {
        return got as f64 == want;
    }
    let k = tensor.unwrap_or(taps + 2) as f64;
    let tolerance = match near {
        None => k * 2f64.powi(-24) * magnitude,
        Some(near) => (2 * taps + 8) as f64 * 2f64.powi(-24) * near,
    } + k * 2f64.powi(-149);
    (got as f64 - want).abs() <= tolerance
}

fn check(ctx: &Context, step: Conv1dVariant, case: &Case) -> Result<(), Failed> {
    let input = cached_input(ctx, &case.key(), || case.input())?;
    let (host, device) = (&input.0, &input.1);
    let reference = reference(case, host);
    let (w, h) = (case.width, case.rows);
    let mask = ok(device.slice(case.signal_len()..))?;
    let mut out = poisoned(ctx, case.out_len().max(1), POISON)?;
    let mut out_view = ok(out.slice_mut(case.out_offset..case.out_len().max(case.out_offset)))?;
    let run = if case.batch {
        let signal = ok(device.slice(case.signal_offset..case.signal_len()))?;
        let signal = ok(Matrix::with_pitch(&signal, w, h, case.signal_pitch))?;
        let mut dst = ok(MatrixMut::with_pitch(&mut out_view, w, h, case.out_pitch))?;
        ctx.conv1d_rows_into_with(step, &signal, &mask, &mut dst)
            .and_then(|p| p.wait())
    } else {
        let signal = ok(device.slice(case.signal_offset..case.signal_offset + w))?;
        ctx.conv1d_into_with(step, &signal, &mask, &mut out_view)
            .and_then(|p| p.wait())
    };
    if !step.needs().met_by(ctx.info().ptx_target) {
        // The tensor-core step on PTX older than sm_80: refused, untouched.
        return match run {
            Err(warpspeed::Error::Unsupported { .. }) => ensure(
                download(ctx, &out)?
                    .iter()
                    .all(|v| v.to_bits() == POISON.to_bits()),
                || format!("{step:?}: a refused call wrote its output"),
            ),
            other => Err(format!(
                "{step:?} on {} PTX: {other:?}, want Unsupported",
                ctx.info().ptx_target
            )
            .into()),
        };
    }
    ok(run)?;
    let got = download(ctx, &out)?;
    let (want, magnitude) = (&reference.0, &reference.1);
    for (at, &g) in got.iter().enumerate() {
        let (y, i) = (
            at.wrapping_sub(case.out_offset) / case.out_pitch.max(1),
            at.wrapping_sub(case.out_offset) % case.out_pitch.max(1),
        );
        let output = at >= case.out_offset && y < h && i < w;
        if !output {
            if g.to_bits() != POISON.to_bits() {
                return Err(format!(
                    "{step:?}: element {at} outside the output (padding or offset) was \
                     overwritten with {g}"
                )
                .into());
            }
            continue;
        }
        let k = y * w + i;
        // Tiles start at even outputs of the row: odd `i` is an odd output.
        let split = step.runs_as(case.taps) == Conv1dVariant::Karatsuba && i % 2 == 1;
        let near = split.then(|| {
            magnitude[k - 1] + magnitude[k] + if i + 1 < w { magnitude[k + 1] } else { 0.0 }
        });
        let tensor = step.error_units(case.taps);
        if !close(g, want[k], magnitude[k], case.taps, near, tensor) {
            return Err(format!(
                "{step:?}: row {y}, output {i} is {g:e}, want {:e} (Σ|products| {:e}, \
                 {} taps)",
                want[k], magnitude[k], case.taps
            )
            .into());
        }
    }
    Ok(())
}

fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for taps in TAPS {
        for n in LENGTHS {
            cases.push(Case::signal(taps, n));
        }
    }
    cases.extend([
        // Rows not 16-byte aligned (pitch 1013): the scalar stores.
        Case::rows(31, 1000, 37, (1013, 1013)),
        // Output rows 16-byte aligned, a partial 16 at each row's end.
        Case::rows(7, 1000, 37, (1013, 1024)),
        Case {
            signal_offset: 1,
            out_offset: 4,
            ..Case::rows(127, 5000, 37, (5003, 5008))
        },
        Case::rows(MAX_TAPS, 4097, 3, (4100, 4100)),
        // Step 9's tensor map over rows (pitch a multiple of 8) that start
        // 8 bytes into a 32-byte sector, three tiles a row; and over rows
        // at a pitch of a multiple of 4 only, which run step 8's kernel.
        Case {
            signal_offset: 2,
            out_offset: 1,
            ..Case::rows(127, 20_000, 5, (20_008, 20_001))
        },
        Case {
            signal_offset: 6,
            ..Case::rows(63, 20_000, 3, (20_004, 20_000))
        },
        // The longest mask over one row and over rows at a pitch of a
        // multiple of 8: step 9's largest parts (145 lines, a group on
        // every 32-byte row of the swizzle's unit).
        Case::signal(MAX_TAPS, 30_011),
        Case::rows(MAX_TAPS, 9_000, 3, (9_008, 9_000)),
        // More rows than a grid has blocks in y (65 535): blocks loop.
        Case::rows(2, 5, 70_001, (5, 5)),
        // An even mask on rows shorter than the mask.
        Case::rows(32, 9, 100, (9, 16)),
        // Sub-slices at odd element offsets.
        Case {
            signal_offset: 3,
            out_offset: 1,
            ..Case::signal(31, 100_003)
        },
        Case {
            signal_offset: 5,
            ..Case::signal(1025, 10_007)
        },
        // NaN and ±∞ reach exactly the outputs whose window covers them
        // (padded taps are never multiplied).
        Case {
            specials: true,
            ..Case::signal(7, 10_000)
        },
        Case {
            specials: true,
            ..Case::signal(31, 10_000)
        },
        Case {
            specials: true,
            ..Case::rows(17, 4500, 3, (4500, 4500))
        },
        // The streamed step's longest mask, shifted by a different amount
        // in each row (pitch 10 001), its leading zeros never multiplied.
        Case {
            specials: true,
            signal_offset: 1,
            ..Case::rows(16, 10_000, 4, (10_001, 10_004))
        },
        // Karatsuba's own kernel (more than 128 taps), odd and even masks:
        // an infinity cancels in its cross terms, and the odd outputs it
        // spoils are computed again directly.
        Case {
            specials: true,
            ..Case::signal(129, 10_000)
        },
        Case {
            specials: true,
            ..Case::rows(130, 4500, 3, (4501, 4504))
        },
        Case::rows(255, 2049, 5, (2051, 2052)),
        Case {
            signal_offset: 7,
            out_offset: 2,
            ..Case::signal(129, 100_001)
        },
        // 2^26: skipped above WARPSPEED_TEST_MAX_N.
        Case::signal(31, 1 << 26),
    ]);
    cases
}

/// Runs `variant` on `ctx` over `signal` and `mask` into `out`, waiting.
fn run_once(
    ctx: &Context,
    variant: Conv1dVariant,
    signal: &impl DeviceRead<Elem = f32>,
    mask: &impl DeviceRead<Elem = f32>,
    out: &mut Buffer<f32>,
) -> Result<Vec<f32>, Failed> {
    ok(ctx
        .conv1d_into_with(variant, signal, mask, out)
        .and_then(|p| p.wait()))?;
    download(ctx, out)
}

/// Two streams run the constant-memory steps with different masks, many
/// launches in flight on each; every result must equal, bit for bit, the
/// same launch run alone (which is checked against the CPU). A copy of one
/// stream's mask landing under the other's kernel would change its sums.
/// The default call runs the step `fastest_for` names for the mask and the
/// loaded module: the same bits as that step, for a short and a long mask.
fn default_runs_the_fastest_step(ctx: &Context) -> Result<(), Failed> {
    const N: usize = 100_003;
    let host = random_vec(N + 127, 17, draw_f32);
    let signal = upload(ctx, &host[..N])?;
    for taps in [7, 127] {
        let mask = upload(ctx, &host[N..N + taps])?;
        let step = Conv1dVariant::fastest_for(taps, ctx.info().ptx_target);
        let mut out = poisoned(ctx, N, POISON)?;
        ok(ctx
            .conv1d_into(&signal, &mask, &mut out)
            .and_then(|p| p.wait()))?;
        let default = download(ctx, &out)?;
        let mut out = poisoned(ctx, N, POISON)?;
        ok(ctx
            .conv1d_into_with(step, &signal, &mask, &mut out)
            .and_then(|p| p.wait()))?;
        let stepped = download(ctx, &out)?;
        ensure(
            default
                .iter()
                .zip(&stepped)
                .all(|(a, b)| a.to_bits() == b.to_bits()),
            || format!("{taps} taps: the default differs from {step:?}"),
        )?;
    }
    Ok(())
}

fn constant_mask_race(ctx: &Context) -> Result<(), Failed> {
    const N: usize = 1 << 20;
    const TAPS: usize = 31;
    const IN_FLIGHT: usize = 6;
    let other = ok(ctx.new_stream())?;
    let host = random_vec(N + 2 * TAPS, 91, draw_f32);
    let signal = upload(ctx, &host[..N])?;
    let mask_a = upload(ctx, &host[N..N + TAPS])?;
    let mask_b = upload(ctx, &host[N + TAPS..])?;
    let steps = [Conv1dVariant::ConstantMask, Conv1dVariant::SharedTile];

    // Alone, first: the expected bits of each (stream, step), checked
    // against the CPU.
    let mut solo = Vec::new();
    let mut out = poisoned(ctx, N, POISON)?;
    for (stream, mask, mask_at) in [(ctx, &mask_a, N), (&other, &mask_b, N + TAPS)] {
        let case = Case::signal(TAPS, N);
        let mut input = host[..N].to_vec();
        input.extend_from_slice(&host[mask_at..mask_at + TAPS]);
        REFERENCE.with(|c| c.borrow_mut().take());
        let reference = reference(&case, &input);
        for step in steps {
            let got = run_once(stream, step, &signal, mask, &mut out)?;
            for (i, &g) in got.iter().enumerate() {
                ensure(
                    close(g, reference.0[i], reference.1[i], TAPS, None, None),
                    || format!("{step:?} alone: output {i} is {g}, want {}", reference.0[i]),
                )?;
            }
            solo.push(got);
        }
    }
    REFERENCE.with(|c| c.borrow_mut().take());

    let mut outs_a = (0..IN_FLIGHT)
        .map(|_| poisoned(ctx, N, POISON))
        .collect::<Result<Vec<_>, _>>()?;
    let mut outs_b = (0..IN_FLIGHT)
        .map(|_| poisoned(ctx, N, POISON))
        .collect::<Result<Vec<_>, _>>()?;
    for round in 0..10 {
        for out in outs_a.iter_mut().chain(outs_b.iter_mut()) {
            ctx.fill(out, POISON)
                .map_err(|e| format!("poisoning: {e}"))?;
        }
        let mut pending = Vec::new();
        for (k, (a, b)) in outs_a.iter_mut().zip(outs_b.iter_mut()).enumerate() {
            let step = steps[k % 2];
            pending.push(ok(ctx.conv1d_into_with(step, &signal, &mask_a, a))?);
            pending.push(ok(other.conv1d_into_with(step, &signal, &mask_b, b))?);
        }
        for p in pending {
            ok(p.wait())?;
        }
        for (k, (a, b)) in outs_a.iter().zip(&outs_b).enumerate() {
            for (stream, out, want) in [("first", a, &solo[k % 2]), ("second", b, &solo[2 + k % 2])]
            {
                let got = download(ctx, out)?;
                if let Some(i) = (0..N).find(|&i| got[i].to_bits() != want[i].to_bits()) {
                    return Err(format!(
                        "round {round}, launch {k} ({:?}) on the {stream} stream: output {i} \
                         is {}, alone it was {}",
                        steps[k % 2],
                        got[i],
                        want[i]
                    )
                    .into());
                }
            }
        }
    }
    Ok(())
}

fn refusals(ctx: &Context) -> Result<(), Failed> {
    let buffer = upload(ctx, &random_vec(4096, 5, draw_f32))?;
    let signal = ok(buffer.slice(..1000))?;
    let nothing = ok(buffer.slice(..0))?;
    let too_long = ok(buffer.slice(..MAX_TAPS + 1))?;
    let mut out = poisoned(ctx, 1000, POISON)?;
    expect_invalid(
        ctx.conv1d_into(&signal, &nothing, &mut out),
        "an empty mask",
    )?;
    expect_invalid(
        ctx.conv1d_into(&nothing, &nothing, &mut ok(out.slice_mut(..0))?),
        "an empty mask on an empty signal",
    )?;
    expect_invalid(
        ctx.conv1d_into(&signal, &too_long, &mut out),
        "a mask of 1026 taps",
    )?;
    let mask = ok(buffer.slice(..7))?;
    expect_invalid(
        ctx.conv1d_into(&signal, &mask, &mut ok(out.slice_mut(..999))?),
        "999 outputs for 1000 inputs",
    )?;
    match ctx.conv1d_into(&signal, &mask, &mut ok(out.slice_mut(..999))?) {
        Err(warpspeed::Error::LengthMismatch {
            expected: 1000,
            given: 999,
            ..
        }) => {}
        other => return Err(format!("999 outputs for 1000 inputs: {other:?}").into()),
    }
    // The output overlapping the signal or the mask: writable views of a
    // buffer that is read, which only unsafe code can make (`buffer` is
    // borrowed shared); the library still refuses them.
    let (address, device) = (buffer.device_address(), buffer.device());
    let at = |element: usize| address + (element * size_of::<f32>()) as u64;
    // SAFETY: elements 500..1500 of the live `buffer`, which outlives the
    // view (kept to the end of the function); the call must refuse it
    // before any launch, and had it launched, the refusal check's drop of
    // its `Pending` waits for the stream before `buffer` is used again or
    // freed.
    let mut over_signal = unsafe { ViewMut::<f32>::from_raw_parts(at(500), 1000, device) };
    expect_invalid(
        ctx.conv1d_into(&signal, &mask, &mut over_signal),
        "an output overlapping the signal",
    )?;
    // SAFETY: elements 0..1000 of the live `buffer`, as above.
    let mut over_mask = unsafe { ViewMut::<f32>::from_raw_parts(at(0), 1000, device) };
    expect_invalid(
        ctx.conv1d_into(&ok(buffer.slice(1000..2000))?, &mask, &mut over_mask),
        "an output overlapping the mask",
    )?;
    for step in Conv1dVariant::ALL {
        expect_invalid(
            ctx.conv1d_into_with(*step, &signal, &too_long, &mut out),
            "a mask of 1026 taps",
        )?;
    }
    let image = ok(Matrix::with_pitch(&buffer, 100, 10, 101))?;
    let mut out_rows = poisoned(ctx, 2000, POISON)?;
    let mut wrong = ok(MatrixMut::new(&mut out_rows, 100, 11))?;
    match ctx.conv1d_rows_into(&image, &mask, &mut wrong) {
        Err(warpspeed::Error::ShapeMismatch {
            expected: (100, 10),
            given: (100, 11),
            ..
        }) => {}
        other => return Err(format!("11 output rows for 10: {other:?}").into()),
    }
    let mut narrow = ok(MatrixMut::new(&mut out_rows, 99, 10))?;
    expect_invalid(
        ctx.conv1d_rows_into(&image, &mask, &mut narrow),
        "99-wide output rows for 100",
    )?;
    let mut right = ok(MatrixMut::new(&mut out_rows, 100, 10))?;
    expect_invalid(
        ctx.conv1d_rows_into(&image, &nothing, &mut right),
        "an empty mask on rows",
    )?;
    // Nothing was launched, and the output is untouched.
    let got = download(ctx, &out)?;
    ensure(got.iter().all(|v| v.to_bits() == POISON.to_bits()), || {
        "a refused call wrote its output".into()
    })?;
    // An empty signal or matrix is no error and launches nothing.
    ok(ctx
        .conv1d_into(&nothing, &mask, &mut ok(out.slice_mut(..0))?)
        .and_then(|p| p.wait()))?;
    let empty = ok(Matrix::new(&buffer, 0, 10))?;
    let mut empty_out = ok(MatrixMut::new(&mut out_rows, 0, 10))?;
    ok(ctx
        .conv1d_rows_into(&empty, &mask, &mut empty_out)
        .and_then(|p| p.wait()))
}

/// A signal and a batch of rows past 2^31 samples (see the tests past
/// 2^31 in `common`).
fn past_2_31(ctx: &Context) -> Result<(), Failed> {
    // 2^31 + 9 samples of `i % 5`, masks of 7 and 127 taps of `1 + j % 3`:
    // every product and sum is a small integer, exact in `f32` and in TF32
    // parts, so every step's output is compared exactly.
    let n = TWO_31 + 9;
    let signal_at = |i: usize| (i % 5) as f32;
    let host: Vec<f32> = (0..n).map(signal_at).collect();
    let signal = upload(ctx, &host)?;
    drop(host);
    let mut out = filled(ctx, n, -1.0f32)?;
    for taps in [7usize, 127] {
        let mask_host: Vec<f32> = (0..taps).map(|j| (1 + j % 3) as f32).collect();
        let mask = upload(ctx, &mask_host)?;
        let r = taps / 2;
        let want = |i: usize| -> f32 {
            (0..taps)
                .filter_map(|j| (i + j).checked_sub(r).filter(|&s| s < n))
                .map(|s| signal_at(s) * mask_host[s + r - i])
                .sum()
        };
        for &variant in Conv1dVariant::ALL {
            if !variant.needs().met_by(ctx.info().ptx_target) {
                continue;
            }
            ok(ctx
                .conv1d_into_with(variant, &signal, &mask, &mut out)
                .and_then(|p| p.wait()))?;
            for range in windows(n, &[TWO_31]) {
                let got = download(ctx, &ok(out.slice(range.clone()))?)?;
                for i in range.clone() {
                    let w = want(i);
                    ensure(got[i - range.start] == w, || {
                        format!(
                            "{variant:?}, {taps} taps: output {i} is {}, want {w}",
                            got[i - range.start]
                        )
                    })?;
                }
            }
        }
    }
    drop((signal, out));
    // Rows: 32 769 rows of 65 539 samples at a pitch of 65 544 (2^31 +
    // 3·2^16 + … elements), each row on its own; rows checked whole: the
    // first, the two around element 2^31 and the last.
    let (w, rows, pitch) = (65_539, 32_769, 65_544);
    let host: Vec<f32> = (0..rows * pitch)
        .map(|e| signal_at(e % pitch + e / pitch))
        .collect();
    let signal = upload(ctx, &host)?;
    drop(host);
    let mut out = filled(ctx, rows * pitch, -1.0f32)?;
    let mask_host: Vec<f32> = (0..7).map(|j| (1 + j % 3) as f32).collect();
    let mask = upload(ctx, &mask_host)?;
    let want = |row: usize, i: usize| -> f32 {
        (0..7)
            .filter_map(|j| (i + j).checked_sub(3).filter(|&s| s < w))
            .map(|s| signal_at(s + row) * mask_host[s + 3 - i])
            .sum()
    };
    for &variant in Conv1dVariant::ALL {
        if !variant.needs().met_by(ctx.info().ptx_target) {
            continue;
        }
        let s = ok(Matrix::with_pitch(&signal, w, rows, pitch))?;
        let mut d = ok(MatrixMut::with_pitch(&mut out, w, rows, pitch))?;
        ok(ctx
            .conv1d_rows_into_with(variant, &s, &mask, &mut d)
            .and_then(|p| p.wait()))?;
        for row in [0, TWO_31 / pitch, TWO_31 / pitch + 1, rows - 1] {
            let got = download(ctx, &ok(out.slice(row * pitch..row * pitch + w))?)?;
            if let Some(i) = (0..w).find(|&i| got[i] != want(row, i)) {
                return Err(format!(
                    "{variant:?}, rows: ({row}, {i}) is {}, want {}",
                    got[i],
                    want(row, i)
                )
                .into());
            }
        }
    }
    Ok(())
}

pub fn trials(trials: &mut Vec<Trial>) {
    let cases: Vec<_> = cases()
        .into_iter()
        .map(|case| (case.name(), case.width * case.rows, case))
        .collect();
    ladder_trials::<Conv1dVariant, _>(trials, &cases, |_, _| true, check);
    // Runs of several tiles per block (the software-pipelined path of
    // register_blocked, which Karatsuba runs for short masks) need more tiles
    // than the GPU holds blocks: 4.2M outputs are 2 051 tiles, 2 or more per
    // block on an H100 or H200. Sized as 1M so that the sanitizers run them
    // too (about a second each).
    let runs: Vec<_> = [7, 31, 1025]
        .into_iter()
        .map(|taps| {
            let case = Case::signal(taps, 4_200_000);
            (format!("{}::runs_of_tiles", case.name()), 1_000_000, case)
        })
        .collect();
    ladder_trials::<Conv1dVariant, _>(trials, &runs, |v, case| v.walks_runs(case.taps), check);
    trials.push(gpu_trial(
        "conv1d::constant_mask_on_two_streams",
        constant_mask_race,
    ));
    trials.push(gpu_trial("conv1d::refuses_bad_arguments", refusals));
    trials.push(gpu_trial(
        "conv1d::default_runs_the_fastest_step",
        default_runs_the_fastest_step,
    ));
    trials.push(sized_trial("conv1d::past_2_31", 32_769 * 65_544, past_2_31));
}
