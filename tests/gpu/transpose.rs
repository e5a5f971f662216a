//! Transposes: every variant, element sizes 1, 2, 4 and 8 bytes, the benched
//! shapes and row pitches, compared exactly with a CPU transpose. Outputs are
//! poisoned with a value the inputs never hold, and the destination's row
//! padding must keep its poison.

use crate::common::*;
use libtest_mimic::{Failed, Trial};
use rand::RngExt;
use std::fmt::Debug;
use warpspeed::transpose::{Transposable, TransposeVariant};
use warpspeed::{Buffer, Context, Matrix, MatrixMut, ViewMut};

/// `(width, height, source pitch, destination pitch)`; a pitch of 0 means
/// "packed".
const SHAPES: [(usize, usize, usize, usize); 21] = [
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
    // The vector steps' edges, rows 16-byte aligned for 4- and 8-byte
    // elements: tiles wholly inside (16-byte path) beside tiles crossing
    // the right or the bottom edge (checked path).
    (64, 64, 0, 0),         // one 4-byte tile exactly (two 8-byte ones)
    (66, 130, 68, 132),     // padded pitches; edges 2 wide and 2 high
    (197, 1097, 200, 1100), // 18 tile rows: step 7's bands of 16, then 2
    // Rows 8- but not 16-byte aligned (4-byte elements) on one side only.
    (256, 256, 258, 260),
    (256, 256, 260, 258),
    // The vector steps' byte tiles (128 rows of 256 bytes, step 9's of 128;
    // 2-byte ones are 64 rows of 128 elements). Pitches 16-byte aligned for
    // every size: whole tiles (16-byte path) beside tiles crossing an edge
    // by 1 to 127 elements (checked path).
    (128, 128, 0, 0),       // one square byte tile exactly
    (129, 383, 144, 384),   // edges 1 wide and 127 high
    (257, 255, 272, 256),   // 2 + 1 tiles across, 1 + 127 rows down
    (383, 2200, 384, 2208), // 18 byte tile rows: step 7's bands of 16, then 2
    // Byte rows 8- but not 16-byte aligned on one side only.
    (256, 256, 256, 264),
    (256, 256, 264, 256),
];

/// Views that start inside their buffers, `(width, height, source pitch,
/// destination pitch, source offset, destination offset)` in elements: first
/// elements 4, 8 or 12 bytes past a 16-byte boundary (4-byte elements; for
/// 8-byte ones 8 past it or aligned), and one pair of offsets that keeps
/// them aligned. The last three have pitches 16-byte aligned for every size,
/// so only the offsets keep the vector steps off their 16-byte path: 1 or
/// 15 bytes past the boundary for bytes (2 or 30 for 2-byte elements), and
/// 16 elements, aligned for every size.
const OFFSET_SHAPES: [(usize, usize, usize, usize, usize, usize); 7] = [
    (130, 70, 132, 72, 1, 0),
    (130, 70, 132, 72, 0, 3),
    (130, 70, 132, 72, 4, 4),
    (64, 64, 64, 64, 2, 2),
    (256, 256, 256, 256, 1, 0),
    (256, 256, 256, 256, 0, 15),
    (256, 256, 256, 256, 16, 16),
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

/// One transpose: a `w`×`h` source `sp` apart from element `so` of its
/// buffer on, into a destination `dp` apart from element `do_` on (pitches
/// of 0: packed).
#[derive(Clone, Copy)]
struct Case {
    w: usize,
    h: usize,
    sp: usize,
    dp: usize,
    so: usize,
    do_: usize,
}

impl Case {
    fn packed((w, h, sp, dp): (usize, usize, usize, usize)) -> Self {
        Case {
            w,
            h,
            sp,
            dp,
            so: 0,
            do_: 0,
        }
    }

    fn pitches(self) -> (usize, usize) {
        (
            if self.sp == 0 { self.w } else { self.sp },
            if self.dp == 0 { self.h } else { self.dp },
        )
    }

    fn name(self) -> String {
        let (w, h) = (self.w, self.h);
        let mut name = format!("{w}x{h}");
        if self.sp != 0 {
            name += &format!("::pitch_{}_{}", self.sp, self.dp);
        }
        if self.so != 0 || self.do_ != 0 {
            name += &format!("::offset_{}_{}", self.so, self.do_);
        }
        name
    }
}

fn check_transpose<T: Element>(
    ctx: &Context,
    variant: TransposeVariant,
    case: Case,
    src: &[T],
    src_dev: &Buffer<T>,
) -> Result<(), Failed> {
    let Case { w, h, so, do_, .. } = case;
    let (sp, dp) = case.pitches();
    let mut dst = poisoned(ctx, do_ + (w - 1) * dp + h, T::POISON)?;
    let src_slice = ok(src_dev.slice(so..))?;
    let src_view = ok(Matrix::with_pitch(&src_slice, w, h, sp))?;
    let mut dst_slice = ok(dst.slice_mut(do_..))?;
    let mut dst_view = ok(MatrixMut::with_pitch(&mut dst_slice, h, w, dp))?;
    let aligned = [so, sp, do_, dp]
        .iter()
        .all(|n| (n * size_of::<T>()).is_multiple_of(4));
    match ctx.transpose_into_with(variant, &src_view, &mut dst_view) {
        Err(e) if e.is_argument_error() && variant == TransposeVariant::Words4x4 && !aligned => {
            return Ok(());
        }
        r => ok(r.and_then(|pending| pending.wait()))?,
    }
    let got = download(ctx, &dst)?;
    let src = &src[so..];
    // Nothing before the view was written.
    for (i, g) in got[..do_].iter().enumerate() {
        ensure(g.bits() == T::POISON.bits(), || {
            format!("{variant:?} {w}×{h}: element {i} before the destination overwritten")
        })?;
    }
    let got = &got[do_..];
    for x in 0..w {
        // The last destination row has no padding after it.
        for y in 0..dp.min(got.len() - x * dp) {
            let g = got[x * dp + y];
            let want = if y < h { src[y * sp + x] } else { T::POISON };
            if g.bits() != want.bits() {
                return Err(format!(
                    "{variant:?} {}: dst[{x}][{y}] = {g:?}, want {want:?}{}",
                    case.name(),
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
        .map(|&shape| Case::packed(shape))
        .chain(OFFSET_SHAPES.iter().map(|&(w, h, sp, dp, so, do_)| Case {
            w,
            h,
            sp,
            dp,
            so,
            do_,
        }))
        .map(|case| (format!("{name}::{}", case.name()), case.w * case.h, case))
        .collect();
    ladder_trials::<TransposeVariant, _>(
        trials,
        &cases,
        |variant, _| variant.supports(size_of::<T>()),
        |ctx, variant, &case| {
            let (w, h, so) = (case.w, case.h, case.so);
            let pitch = case.pitches().0;
            let key = format!("transpose/{}/{w}x{h}/{pitch}/{so}", size_of::<T>());
            let input = cached_input(ctx, &key, || {
                random_vec(so + (h - 1) * pitch + w, seed_of(&key), T::draw)
            })?;
            check_transpose::<T>(ctx, variant, case, &input.0, &input.1)
        },
    );
}

/// Transposes past 2^32 bytes and past 2^31 4-byte elements (see the
/// tests past 2^31 in `common`).
fn past_2_32_bytes(ctx: &Context) -> Result<(), Failed> {
    // Bytes: 65 537 × 65 539, 2^32 + 2^17 + … elements, neither side a
    // multiple of any tile, rows padded to 65 540 bytes (4-byte aligned,
    // which step 4 needs). The checked output rows (each a column of the
    // input, so it reads every input row, past 2^32 bytes) and the output
    // bytes around 2^31 and 2^32, whose padding must keep its poison.
    let (w, h, pitch) = (65_539, 65_537, 65_540);
    let host: Vec<u8> = (0..pitch * h)
        .map(|e| {
            if e % pitch < w {
                byte_at(e / pitch, e % pitch)
            } else {
                0
            }
        })
        .collect();
    let src = upload(ctx, &host)?;
    drop(host);
    let mut dst = filled_u8(ctx, pitch * w, 0xa5)?;
    let rows_checked = [0, 1, w / 2, w - 2, w - 1];
    for &variant in TransposeVariant::ALL.iter().filter(|v| v.supports(1)) {
        ok(ctx.fill(&mut dst, 0xa5))?;
        let s = ok(Matrix::with_pitch(&src, w, h, pitch))?;
        let mut d = ok(MatrixMut::with_pitch(&mut dst, h, w, pitch))?;
        ok(ctx
            .transpose_into_with(variant, &s, &mut d)
            .and_then(|p| p.wait()))?;
        // Output element (j, i) = input (i, j); the padding keeps 0xa5.
        let want = |e: usize| {
            let (j, i) = (e / pitch, e % pitch);
            if i < h { byte_at(i, j) } else { 0xa5 }
        };
        for &j in &rows_checked {
            let row = download(ctx, &ok(dst.slice(j * pitch..(j + 1) * pitch))?)?;
            if let Some(i) = (0..pitch).find(|&i| row[i] != want(j * pitch + i)) {
                return Err(format!("{variant:?}: output ({j}, {i}) is {}", row[i]).into());
            }
        }
        for range in windows(pitch * w, &[TWO_31, 1 << 32]) {
            let got = download(ctx, &ok(dst.slice(range.clone()))?)?;
            if let Some(e) = range.clone().find(|&e| got[e - range.start] != want(e)) {
                return Err(
                    format!("{variant:?}: output byte {e} is {}", got[e - range.start]).into(),
                );
            }
        }
    }
    // 4-byte elements past 2^31 (2^33 bytes): 46 349 × 46 341, the
    // default step (the vector one), output elements around 2^31.
    drop((src, dst));
    let (w, h) = (46_349, 46_341);
    let host: Vec<u32> = (0..w * h).map(|i| i as u32).collect();
    let src = upload(ctx, &host)?;
    drop(host);
    let mut dst = filled(ctx, w * h, u32::MAX)?;
    let s = ok(Matrix::new(&src, w, h))?;
    let mut d = ok(MatrixMut::new(&mut dst, h, w))?;
    ok(ctx.transpose_into(&s, &mut d).and_then(|p| p.wait()))?;
    for range in windows(w * h, &[TWO_31]) {
        let got = download(ctx, &ok(dst.slice(range.clone()))?)?;
        for e in range.clone() {
            // Output (j, i) at e = j·h + i is input (i, j), element i·w + j.
            let (j, i) = (e / h, e % h);
            let want = (i * w + j) as u32;
            ensure(got[e - range.start] == want, || {
                format!(
                    "f32-sized: output element {e} is {}, want {want}",
                    got[e - range.start]
                )
            })?;
        }
    }
    Ok(())
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
                check_default::<u8>(ctx, w, h, sp)?;
            }
            // 16-byte aligned rows (a vector step, where it is the fastest),
            // 8-byte aligned ones and odd pitches.
            for (w, h, sp) in [(640, 480, 640), (640, 480, 642), (130, 70, 131)] {
                check_default::<u16>(ctx, w, h, sp)?;
                check_default::<f32>(ctx, w, h, sp)?;
                check_default::<u64>(ctx, w, h, sp)?;
            }
            Ok(())
        },
    ));

    trials.push(gpu_trial("transpose::refuses_bad_arguments", |ctx| {
        let src = upload(ctx, &[1.0f32; 12])?;
        let mut dst = poisoned(ctx, 12, 0.0f32)?;
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
        let bytes = upload(ctx, &[0u8; 64])?;
        let mut out = poisoned(ctx, 64, 0u8)?;
        let odd = ok(Matrix::with_pitch(&bytes, 5, 5, 7))?;
        let mut dst = ok(MatrixMut::with_pitch(&mut out, 5, 5, 8))?;
        expect_invalid(
            ctx.transpose_into_with(TransposeVariant::Words4x4, &odd, &mut dst),
            "words with a pitch of 7",
        )?;
        let mut out32 = poisoned(ctx, 12, 0.0f32)?;
        let mut dst32 = ok(MatrixMut::new(&mut out32, 3, 4))?;
        expect_invalid(
            ctx.transpose_into_with(TransposeVariant::Words4x4, &m, &mut dst32),
            "words for 4-byte elements",
        )?;
        // Two views of one buffer, one of them writable (only unsafe code
        // can make them, the buffer being borrowed shared): an in-place or
        // overlapping transpose is refused.
        let shared = upload(ctx, &[2.0f32; 64])?;
        let front = ok(shared.slice(..32))?;
        // SAFETY: elements 16..48 of the live `shared`, which outlives the
        // view (kept to the end of the trial); the call must refuse it
        // before any launch, and had it launched, the refusal check's drop
        // of its `Pending` waits for the stream before `shared` is freed.
        let mut back = unsafe {
            ViewMut::<f32>::from_raw_parts(
                shared.device_address() + 16 * size_of::<f32>() as u64,
                32,
                shared.device(),
            )
        };
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
    trials.push(sized_trial(
        "transpose::past_2_32_bytes",
        65_540 * 65_539,
        past_2_32_bytes,
    ));
}

fn check_default<T: Element>(ctx: &Context, w: usize, h: usize, sp: usize) -> Result<(), Failed> {
    let host: Vec<T> = random_vec((h - 1) * sp + w, 3, T::draw);
    let src = upload(ctx, &host)?;
    let mut dst = poisoned(ctx, w * h, T::POISON)?;
    ok(ctx
        .transpose_into(
            &ok(Matrix::with_pitch(&src, w, h, sp))?,
            &mut ok(MatrixMut::new(&mut dst, h, w))?,
        )
        .and_then(|p| p.wait()))?;
    let got = download(ctx, &dst)?;
    for x in 0..w {
        for y in 0..h {
            ensure(got[x * h + y].bits() == host[y * sp + x].bits(), || {
                format!(
                    "{}-byte elements, pitch {sp}: dst[{x}][{y}] wrong",
                    size_of::<T>()
                )
            })?;
        }
    }
    Ok(())
}
