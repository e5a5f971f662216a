//! Transposes: every variant, element sizes 1, 2, 4 and 8 bytes, the issue's
//! shapes and row pitches, compared exactly with a CPU transpose. Outputs are
//! poisoned with a value the inputs never hold, and the destination's row
//! padding must keep its poison.

use crate::common::*;
use libtest_mimic::{Failed, Trial};
use rand::Rng;
use std::fmt::Debug;
use warpspeed::transpose::{Transposable, TransposeVariant};
use warpspeed::{Context, Matrix, MatrixMut};

/// `(width, height, source pitch, destination pitch)`; a pitch of 0 means
/// "packed".
const SHAPES: [(usize, usize, usize, usize); 10] = [
    (1, 1, 0, 0),
    (1, 1025, 0, 0),
    (1025, 1, 0, 0),
    (17, 33, 0, 0),
    (1000, 999, 0, 0),
    (1000, 999, 1013, 1002), // pitches that break 4-byte row alignment for bytes
    (1000, 999, 1024, 1004), // padded pitches that keep it
    (4096, 4096, 0, 0),
    (8192, 8192, 0, 0),
    (3, 70_001, 0, 0), // tall and thin: many tiles down, one across
];

trait Element: Transposable + Copy + PartialEq + Debug + Default + 'static {
    /// Never drawn for the inputs.
    const POISON: Self;
    fn draw(r: &mut rand::rngs::StdRng) -> Self;
    /// The element's bits, so that the NaN poison compares like any value.
    fn bits(self) -> u64;
}

impl Element for u8 {
    fn bits(self) -> u64 {
        self as u64
    }
    const POISON: Self = u8::MAX;
    fn draw(r: &mut rand::rngs::StdRng) -> Self {
        r.random_range(0..u8::MAX)
    }
}
impl Element for u16 {
    fn bits(self) -> u64 {
        self as u64
    }
    const POISON: Self = u16::MAX;
    fn draw(r: &mut rand::rngs::StdRng) -> Self {
        r.random_range(0..u16::MAX)
    }
}
impl Element for f32 {
    fn bits(self) -> u64 {
        self.to_bits() as u64
    }
    const POISON: Self = f32::NAN; // inputs are finite
    fn draw(r: &mut rand::rngs::StdRng) -> Self {
        r.random_range(-1e6f32..1e6)
    }
}
impl Element for u64 {
    fn bits(self) -> u64 {
        self
    }
    const POISON: Self = u64::MAX;
    fn draw(r: &mut rand::rngs::StdRng) -> Self {
        r.random_range(0..u64::MAX)
    }
}

fn check_transpose<T: Element>(
    ctx: &Context,
    variant: TransposeVariant,
    (w, h, sp, dp): (usize, usize, usize, usize),
    src: &[T],
    src_dev: &cust::memory::DeviceSlice<T>,
) -> Result<(), Failed> {
    let (sp, dp) = (if sp == 0 { w } else { sp }, if dp == 0 { h } else { dp });
    let mut dst = poisoned((w - 1) * dp + h, T::POISON)?;
    let src_view = ok(Matrix::with_pitch(src_dev, w, h, sp))?;
    let mut dst_view = ok(MatrixMut::with_pitch(&mut dst, h, w, dp))?;
    let aligned =
        (sp * size_of::<T>()).is_multiple_of(4) && (dp * size_of::<T>()).is_multiple_of(4);
    match ctx.transpose_into_with(variant, &src_view, &mut dst_view) {
        Err(e) if e.is_argument_error() && variant == TransposeVariant::Words4x4 && !aligned => {
            return Ok(());
        }
        r => ok(r.and_then(|pending| pending.wait()))?,
    }
    let got = download(&dst)?;
    for x in 0..w {
        // The last destination row has no padding after it.
        for y in 0..dp.min(got.len() - x * dp) {
            let g = got[x * dp + y];
            let want = if y < h { src[y * sp + x] } else { T::POISON };
            if g.bits() != want.bits() {
                return Err(format!(
                    "{variant:?} {w}×{h}: dst[{x}][{y}] = {g:?}, want {want:?}{}",
                    if y >= h {
                        " (row padding overwritten)"
                    } else {
                        ""
                    }
                )
                .into());
            }
        }
    }
    Ok(())
}

fn push_type<T: Element>(trials: &mut Vec<Trial>, name: &'static str) {
    let cases: Vec<_> = SHAPES
        .iter()
        .map(|&shape| {
            let (w, h, _, _) = shape;
            (
                format!("{name}::{w}x{h}{}", pitch_note(shape)),
                w * h,
                shape,
            )
        })
        .collect();
    ladder_trials::<TransposeVariant, _>(
        trials,
        &cases,
        |variant, _| variant.supports(size_of::<T>()),
        |ctx, variant, &shape| {
            let (w, h, sp, _) = shape;
            let pitch = if sp == 0 { w } else { sp };
            let key = format!("transpose/{}/{w}x{h}/{pitch}", size_of::<T>());
            let input = cached_input(&key, || {
                random_vec((h - 1) * pitch + w, seed_of(&key), T::draw)
            })?;
            check_transpose::<T>(ctx, variant, shape, &input.0, &input.1)
        },
    );
}

fn pitch_note((_, _, sp, dp): (usize, usize, usize, usize)) -> String {
    if sp == 0 {
        String::new()
    } else {
        format!("::pitch_{sp}_{dp}")
    }
}

pub fn trials(trials: &mut Vec<Trial>) {
    push_type::<u8>(trials, "u8");
    push_type::<u16>(trials, "u16");
    push_type::<f32>(trials, "f32");
    push_type::<u64>(trials, "u64");

    trials.push(gpu_trial(
        "transpose::default_picks_a_working_variant",
        |ctx| {
            // Packed and aligned (word path) and an odd pitch (tile path).
            for (w, h, sp) in [(640, 480, 640), (640, 480, 641)] {
                let host: Vec<u8> = random_vec((h - 1) * sp + w, 3, |r| r.random_range(0..255));
                let src = upload(&host)?;
                check_default(ctx, &host, &src, w, h, sp)?;
            }
            Ok(())
        },
    ));

    trials.push(gpu_trial("transpose::refuses_bad_arguments", |ctx| {
        let src = upload(&[1.0f32; 12])?;
        let mut dst = poisoned(12, 0.0f32)?;
        let m = ok(Matrix::new(&src, 4, 3))?;
        let wrong = ok(MatrixMut::new(&mut dst, 4, 3));
        match ctx.transpose_into(&m, &mut wrong?) {
            Err(warpspeed::Error::ShapeMismatch {
                expected: (3, 4),
                given: (4, 3),
                ..
            }) => {}
            other => return Err(format!("a 4×3 destination: {other:?}").into()),
        }
        expect_invalid(
            Matrix::with_pitch(&src, 4, 3, 3).map(|_| ()),
            "a pitch below the width",
        )?;
        expect_invalid(
            Matrix::new(&src, 4, 4).map(|_| ()),
            "a slice too short for the shape",
        )?;
        let bytes = upload(&[0u8; 64])?;
        let mut out = poisoned(64, 0u8)?;
        let odd = ok(Matrix::with_pitch(&bytes, 5, 5, 7))?;
        let mut dst = ok(MatrixMut::with_pitch(&mut out, 5, 5, 8))?;
        expect_invalid(
            ctx.transpose_into_with(TransposeVariant::Words4x4, &odd, &mut dst),
            "words with a pitch of 7",
        )?;
        let mut out32 = poisoned(12, 0.0f32)?;
        let mut dst32 = ok(MatrixMut::new(&mut out32, 3, 4))?;
        expect_invalid(
            ctx.transpose_into_with(TransposeVariant::Words4x4, &m, &mut dst32),
            "words for 4-byte elements",
        )?;
        // Two views of one buffer (cust's `index` allows it in safe code):
        // an in-place or overlapping transpose is refused.
        let shared = upload(&[2.0f32; 64])?;
        let (front, mut back) = (shared.index(..32), shared.index(16..48));
        let m = ok(Matrix::new(&front, 8, 4))?;
        let mut overlapping = ok(MatrixMut::new(&mut back, 4, 8))?;
        expect_invalid(
            ctx.transpose_into(&m, &mut overlapping),
            "a destination overlapping the source",
        )?;
        // An empty matrix is no error and launches nothing.
        let empty = ok(Matrix::new(&src, 0, 3))?;
        let mut dst0 = ok(MatrixMut::new(&mut out32, 3, 0))?;
        ok(ctx.transpose_into(&empty, &mut dst0).and_then(|p| p.wait()))
    }));
}

fn check_default(
    ctx: &Context,
    host: &[u8],
    src: &cust::memory::DeviceSlice<u8>,
    w: usize,
    h: usize,
    sp: usize,
) -> Result<(), Failed> {
    let mut dst = poisoned(w * h, u8::MAX)?;
    ok(ctx
        .transpose_into(
            &ok(Matrix::with_pitch(src, w, h, sp))?,
            &mut ok(MatrixMut::new(&mut dst, h, w))?,
        )
        .and_then(|p| p.wait()))?;
    let got = download(&dst)?;
    for x in 0..w {
        for y in 0..h {
            ensure(got[x * h + y] == host[y * sp + x], || {
                format!("pitch {sp}: dst[{x}][{y}] wrong")
            })?;
        }
    }
    Ok(())
}
