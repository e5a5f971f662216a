//! Row and column sums of 8-bit images: every variant, `u32` and `f32`
//! outputs, the benched shapes, a row pitch, and an image that starts at an
//! odd address; compared exactly with CPU sums (`f32` only on the shapes
//! whose sums stay below 2^24, where `f32` is exact).

use crate::common::*;
use libtest_mimic::{Failed, Trial};
use rand::RngExt;
use warpspeed::image_sums::{ColumnSumVariant, RowSumVariant, SumOutput};
use warpspeed::{Context, Matrix};

/// `(width, height, pitch, byte offset of the first pixel)`.
const SHAPES: [(usize, usize, usize, usize); 20] = [
    (1, 1, 1, 0),
    (1, 1025, 1, 0),
    (1025, 1, 1025, 0),
    (17, 33, 17, 0),
    // Narrow rows sharing a warp (row step 4: 1, 4 and 8 lanes a row), the
    // odd pitches and starts giving each row a head and a tail of its own
    // longer than the lanes that read it.
    (64, 3001, 64, 0),
    (200, 777, 203, 1),
    (500, 333, 509, 5),
    (1000, 999, 1000, 0),
    (1000, 999, 1013, 0), // pitch larger than the width, unaligned rows
    (1000, 999, 1024, 3), // aligned pitch, image starting at an odd address
    (4096, 4096, 4096, 0),
    (8192, 8192, 8192, 0),
    (5000, 300, 5008, 0), // aligned pitch, partial 16-column strip at the edge
    // Whole 512-column strips whose rows are 4-byte but not 16-byte aligned
    // (by the pitch, by the start): column step 5 keeps its lanes with
    // 4-byte loads, in the entry with every path.
    (1024, 300, 1028, 0),
    (1536, 300, 1536, 4),
    // Whole strips of 16-byte aligned rows in short bands (4 or 5 rows on a
    // GPU of 132 SMs): the entry of the lanes alone, whose bands meet two
    // columns to a tally; small enough for the sanitizer runs.
    (1024, 600, 1024, 0),
    (80, 70_000, 80, 0), // past 256 rows for each of 256 row-lanes: lanes flushed
    // Few wide rows, which row step 5 sums a block per part (1, 3 and 32
    // parts a row; odd starts, so each row has a head and a tail); short
    // wide images, which the column sums' default takes to step 3.
    (40_000, 7, 40_016, 1),
    (100_000, 5, 100_016, 3),
    (1 << 20, 3, 1 << 20, 0),
];

trait Out: SumOutput + Copy + PartialEq + std::fmt::Debug + Default + 'static {
    const POISON: Self;
    /// The longest row or column whose sums the trials check in this type.
    const LONGEST_LINE: usize;
    fn exact(v: u32) -> Self;
}
impl Out for u32 {
    const POISON: Self = 0xdead_beef;
    const LONGEST_LINE: usize = usize::MAX;
    fn exact(v: u32) -> Self {
        v
    }
}
impl Out for f32 {
    const POISON: Self = -1.0;
    // Random bytes average 127.5: sums of up to 2^17 of them stay below
    // 2^24, where `f32` is exact whatever order the atomic steps add their
    // partial sums in.
    const LONGEST_LINE: usize = 1 << 17;
    fn exact(v: u32) -> Self {
        v as f32
    }
}

fn reference(
    pixels: &[u8],
    (w, h, pitch, offset): (usize, usize, usize, usize),
    columns: bool,
) -> Vec<u32> {
    let at = |x: usize, y: usize| pixels[offset + y * pitch + x] as u32;
    if columns {
        (0..w)
            .map(|x| (0..h).fold(0u32, |s, y| s.wrapping_add(at(x, y))))
            .collect()
    } else {
        (0..h)
            .map(|y| (0..w).fold(0u32, |s, x| s.wrapping_add(at(x, y))))
            .collect()
    }
}

/// Either ladder of the family, or either default (each picks a step by
/// the image's width).
#[derive(Clone, Copy, Debug)]
enum Variant {
    Columns(ColumnSumVariant),
    ColumnsDefault,
    Rows(RowSumVariant),
    RowsDefault,
}

fn check<O: Out>(
    ctx: &Context,
    variant: Variant,
    shape: (usize, usize, usize, usize),
) -> Result<(), Failed> {
    let (w, h, pitch, offset) = shape;
    let key = format!("image/{w}x{h}/{pitch}/{offset}");
    let len = offset + (h - 1) * pitch + w;
    let input = cached_input(ctx, &key, || {
        random_vec(len, seed_of(&key), |r| r.random::<u8>())
    })?;
    let (pixels, device) = (&input.0, &input.1);
    let columns = matches!(variant, Variant::Columns(_) | Variant::ColumnsDefault);
    let view = ok(device.slice(offset..))?;
    let image = ok(Matrix::with_pitch(&view, w, h, pitch))?;
    let mut out = poisoned(ctx, if columns { w } else { h }, O::POISON)?;
    let aligned = (offset % 4 == 0) && pitch % 4 == 0;
    let result = match variant {
        Variant::Columns(v) => ctx.column_sums_into_with(v, &image, &mut out),
        Variant::ColumnsDefault => ctx.column_sums_into(&image, &mut out),
        Variant::Rows(v) => ctx.row_sums_into_with(v, &image, &mut out),
        Variant::RowsDefault => ctx.row_sums_into(&image, &mut out),
    };
    match result {
        Err(e)
            if e.is_argument_error()
                && matches!(
                    variant,
                    Variant::Columns(ColumnSumVariant::FourColumnsPerThread)
                )
                && !aligned =>
        {
            return Ok(());
        }
        r => ok(r.and_then(|pending| pending.wait()))?,
    }
    let got = download(ctx, &out)?;
    let want: Vec<O> = reference(pixels, shape, columns)
        .into_iter()
        .map(O::exact)
        .collect();
    match got.iter().zip(&want).position(|(g, w)| g != w) {
        None => Ok(()),
        Some(i) => Err(format!(
            "{variant:?} {w}×{h}: sum {i} is {:?}, want {:?}",
            got[i], want[i]
        )
        .into()),
    }
}

fn push<O: Out>(trials: &mut Vec<Trial>, ty: &str) {
    let cases: Vec<_> = SHAPES
        .iter()
        .filter(|&&(w, h, _, _)| w.max(h) <= O::LONGEST_LINE)
        .map(|&shape| {
            let (w, h, pitch, offset) = shape;
            let name = format!("{ty}::{w}x{h}::pitch_{pitch}::offset_{offset}");
            (name, w * h, shape)
        })
        .collect();
    ladder_trials::<ColumnSumVariant, _>(
        trials,
        &cases,
        |_, _| true,
        |ctx, v, &shape| check::<O>(ctx, Variant::Columns(v), shape),
    );
    ladder_trials::<RowSumVariant, _>(
        trials,
        &cases,
        |_, _| true,
        |ctx, v, &shape| check::<O>(ctx, Variant::Rows(v), shape),
    );
    for (name, n, shape) in cases {
        trials.push(sized_trial(
            format!("column_sums::default::{name}"),
            n,
            move |ctx| check::<O>(ctx, Variant::ColumnsDefault, shape),
        ));
        trials.push(sized_trial(
            format!("row_sums::default::{name}"),
            n,
            move |ctx| check::<O>(ctx, Variant::RowsDefault, shape),
        ));
    }
}

fn zeros_ok<O: Out>(ctx: &Context) -> Result<(), Failed> {
    // A 0-row image has column sums of zero; a 0-column one row sums of zero.
    let pixels = upload(ctx, &[7u8; 8])?;
    let mut out = poisoned(ctx, 4, O::POISON)?;
    ok(ctx
        .column_sums_into(&ok(Matrix::new(&pixels, 4, 0))?, &mut out)
        .and_then(|p| p.wait()))?;
    ok(ctx
        .row_sums_into(&ok(Matrix::new(&pixels, 0, 4))?, &mut out)
        .and_then(|p| p.wait()))?;
    let got = download(ctx, &out)?;
    ensure(got.iter().all(|&v| v == O::exact(0)), || {
        format!("sums of an empty image: {got:?}")
    })
}

/// Column and row sums of an image past 2^32 bytes (see the tests past
/// 2^31 in `common`).
fn past_2_32_bytes(ctx: &Context) -> Result<(), Failed> {
    // A 65 540 × 65 537 image (2^32 + 3·2^16 + … bytes, rows 4-byte
    // aligned for step 2, not a multiple of any strip) of the bytes of
    // [`byte_at`], whose row and column sums the CPU computes in one pass.
    let (w, h) = (65_540, 65_537);
    let mut cols = vec![0u32; w];
    let mut rows = vec![0u32; h];
    let mut host = vec![0u8; w * h];
    for r in 0..h {
        let row = &mut host[r * w..(r + 1) * w];
        for (c, v) in row.iter_mut().enumerate() {
            *v = byte_at(r, c);
            cols[c] += *v as u32;
            rows[r] += *v as u32;
        }
    }
    // The same bytes as two rows of 2^31 + 7, which row step 5 splits
    // over blocks (the second row starts past 2^31 bytes; the sums wrap).
    let long = (1usize << 31) + 7;
    let long_rows: Vec<u32> = host
        .chunks(long)
        .take(2)
        .map(|row| row.iter().fold(0u32, |s, &v| s.wrapping_add(v as u32)))
        .collect();
    let image = upload(ctx, &host)?;
    drop(host);
    let bytes = ok(image.slice(..2 * long))?;
    let wide = ok(Matrix::new(&bytes, long, 2))?;
    let mut out = poisoned(ctx, 2, u32::MAX)?;
    ok(ctx
        .row_sums_into_with(RowSumVariant::SplitRows, &wide, &mut out)
        .and_then(|p| p.wait()))?;
    same(
        "SplitRows, two long rows".into(),
        &download(ctx, &out)?,
        &long_rows,
    )?;
    let view = ok(Matrix::new(&image, w, h))?;
    let mut out = poisoned(ctx, w, u32::MAX)?;
    for &variant in ColumnSumVariant::ALL {
        ok(ctx
            .column_sums_into_with(variant, &view, &mut out)
            .and_then(|p| p.wait()))?;
        same(format!("{variant:?}, column"), &download(ctx, &out)?, &cols)?;
    }
    let mut out = poisoned(ctx, h, u32::MAX)?;
    for &variant in RowSumVariant::ALL {
        ok(ctx
            .row_sums_into_with(variant, &view, &mut out)
            .and_then(|p| p.wait()))?;
        same(format!("{variant:?}, row"), &download(ctx, &out)?, &rows)?;
    }
    Ok(())
}

/// Step 5's column bands and row parts meet in tallies that every launch
/// must leave zero: calls in a row on one context, of both output types
/// and several widths (1, 2 and 16 strips of 512 columns, so different
/// tallies) and of rows in 1, 3 and 32 parts (the same tallies), the
/// scratch released and allocated again in between, each checked exactly.
fn step5_leaves_tallies_zero(ctx: &Context) -> Result<(), Failed> {
    let bands = Variant::Columns(ColumnSumVariant::Bands);
    let split = Variant::Rows(RowSumVariant::SplitRows);
    let shapes = [(1000, 999, 1000, 0), (80, 999, 80, 0), (8192, 33, 8192, 0)];
    let wide = [
        (40_000, 7, 40_016, 1),
        (100_000, 5, 100_016, 3),
        (1 << 20, 3, 1 << 20, 0),
    ];
    for round in 0..3 {
        for &shape in &shapes {
            check::<u32>(ctx, bands, shape)?;
            check::<f32>(ctx, bands, shape)?;
            check::<u32>(ctx, Variant::ColumnsDefault, shape)?;
        }
        for &shape in &wide {
            check::<u32>(ctx, split, shape)?;
            check::<f32>(ctx, split, shape)?;
            check::<u32>(ctx, Variant::RowsDefault, shape)?;
        }
        if round == 1 {
            ok(ctx.release_scratch())?;
        }
    }
    Ok(())
}

/// Step 5's bands of at most 4096 rows (256 a row-lane) keep their
/// 16-bit lanes to the end, longer ones flush them: an image of bytes
/// of 243 to 255 two strips wide, as many bands per strip as the device
/// gives, the first half of them 4097 rows and the rest 4096
/// (`band_split`), so that the blocks of one column take both paths
/// (the entry with every path) and the lanes reach their largest sums
/// (256 · 255); then every band 4096 rows, which takes the entry of the
/// lanes alone (`bands_all_in_lanes`) at its limit; then one strip, whose
/// bands are as many as a launch takes (`MAX_BANDS` on a GPU of 128 SMs
/// or more), so that the sums that two columns share in one tally
/// (`join_pair`) reach the largest the entry allows, 255 · 4096 · 255.
fn bands_at_the_lanes_limit(ctx: &Context) -> Result<(), Failed> {
    use warpspeed::image_sums::bands_per_strip;
    use warpspeed_gpu::image_sums::BAND_BLOCK_COLUMNS;
    let strip = BAND_BLOCK_COLUMNS as usize;
    let bands = |strips| bands_per_strip(strips, usize::MAX, ctx.info().multiprocessors) as usize;
    let (two, one) = (bands(2), bands(1));
    let byte = |x: usize| 255 - (x % 13) as u8;
    for (w, h) in [
        (2 * strip, 4096 * two + two / 2),
        (2 * strip, 4096 * two),
        (strip, 4096 * one),
    ] {
        let row: Vec<u8> = (0..w).map(byte).collect();
        let image = upload(ctx, &row.repeat(h))?;
        let view = ok(Matrix::new(&image, w, h))?;
        let want: Vec<u32> = (0..w).map(|x| byte(x) as u32 * h as u32).collect();
        let mut out = poisoned(ctx, w, u32::MAX)?;
        ok(ctx
            .column_sums_into_with(ColumnSumVariant::Bands, &view, &mut out)
            .and_then(|p| p.wait()))?;
        same(format!("Bands {w}×{h}"), &download(ctx, &out)?, &want)?;
    }
    Ok(())
}

pub fn trials(trials: &mut Vec<Trial>) {
    push::<u32>(trials, "u32");
    push::<f32>(trials, "f32");
    trials.push(sized_trial(
        "image_sums::step5::tallies_stay_zero",
        3 << 20,
        step5_leaves_tallies_zero,
    ));
    // A column of more than 256 rows for each row-lane of each band (132
    // bands of 32 row-lanes on an H200): the 16-bit lanes are flushed.
    trials.push(sized_trial(
        "column_sums::bands::tall_bands",
        3 * 2_200_000,
        |ctx| {
            let shape = (3, 2_200_000, 3, 0);
            check::<u32>(ctx, Variant::Columns(ColumnSumVariant::Bands), shape)?;
            check::<u32>(ctx, Variant::ColumnsDefault, shape)
        },
    ));
    trials.push(sized_trial(
        "column_sums::bands::lanes_at_their_limit",
        1024 * 4097 * 132,
        bands_at_the_lanes_limit,
    ));
    trials.push(gpu_trial("image_sums::empty_images_sum_to_zero", |ctx| {
        zeros_ok::<u32>(ctx)?;
        zeros_ok::<f32>(ctx)
    }));
    trials.push(gpu_trial("image_sums::refuses_bad_arguments", |ctx| {
        let pixels = upload(ctx, &[1u8; 64])?;
        let image = ok(Matrix::new(&pixels, 8, 8))?;
        let mut short = poisoned(ctx, 7, 0u32)?;
        expect_invalid(
            ctx.column_sums_into(&image, &mut short),
            "7 outputs for 8 columns",
        )?;
        expect_invalid(
            ctx.row_sums_into(&image, &mut short),
            "7 outputs for 8 rows",
        )?;
        let odd = ok(Matrix::with_pitch(&pixels, 5, 5, 9))?;
        let mut five = poisoned(ctx, 5, 0u32)?;
        expect_invalid(
            ctx.column_sums_into_with(ColumnSumVariant::FourColumnsPerThread, &odd, &mut five),
            "4-byte loads with a pitch of 9",
        )?;
        Ok(())
    }));
    trials.push(sized_trial(
        "image_sums::past_2_32_bytes",
        65_540 * 65_537,
        past_2_32_bytes,
    ));
}
