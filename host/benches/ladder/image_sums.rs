//! Column and row sums of an 8192 × 8192 `u8` image: every variant into
//! `u32` (checked exactly against the CPU), and the fastest into `f32`;
//! then (not with `--quick`) every variant into `u32` on the other
//! [`SHAPES`], so that the default's choice per shape is a measured one.
//! GB/s count the image bytes read. No NVIDIA library offers these sums
//! (PyTorch reduces along a dimension at about 340 GB/s, see ANCHORS), so
//! the tables compare with the copy bandwidth alone.

use crate::harness::{Bench, Case, Family, Row, device_copies, enqueued, ladder_rows};
use warpspeed::image_sums::{ColumnSumVariant, RowSumVariant, SumOutput};
use warpspeed::{Buffer, Context, Ladder, Matrix, Pending};

pub const FAMILY: Family = Family {
    name: "image-sums",
    run,
};

const SIDE: usize = 8192;

/// How to launch one step into an output.
type Launch<L, O> = for<'a> fn(
    &'a Context,
    L,
    &Matrix<'a, u8>,
    &'a mut Buffer<O>,
) -> warpspeed::Result<Pending<'a>>;

/// Shapes beside the square, `(width, height)`: an HD frame (2 MB, in L2
/// across the rotating copies), a tall image 64 columns wide and a short
/// one 64 rows high (64 MiB each), odd sides (65 MB), and 1 000 rows of
/// 64 KiB (fewer rows than fill the GPU two warps a row).
const SHAPES: [(usize, usize); 5] = [
    (1920, 1080),
    (64, 1 << 20),
    (1 << 20, 64),
    (1000, 65_537),
    (1 << 16, 1000),
];

fn run(bench: &mut Bench) -> Result<(), String> {
    let mut shapes = vec![(SIDE, SIDE)];
    if !bench.quick {
        shapes.extend(SHAPES);
    }
    for (at, &(width, height)) in shapes.iter().enumerate() {
        // The square's fastest steps into f32 as well.
        let f32_too = at == 0;
        let image = Image::new(bench, width, height)?;
        ladder::<ColumnSumVariant>(
            bench,
            &image,
            (
                Context::column_sums_into_with,
                Context::column_sums_into_with,
            ),
            &image.columns(),
            f32_too,
        )?;
        ladder::<RowSumVariant>(
            bench,
            &image,
            (Context::row_sums_into_with, Context::row_sums_into_with),
            &image.rows(),
            f32_too,
        )?;
    }
    Ok(())
}

/// A `width × height` image (pitch = width) with its rotating device
/// copies.
struct Image {
    width: usize,
    height: usize,
    host: Vec<u8>,
    inputs: Vec<Buffer<u8>>,
}

impl Image {
    fn new(bench: &Bench, width: usize, height: usize) -> Result<Self, String> {
        let host: Vec<u8> = (0..width * height).map(|i| (i * 7 % 253) as u8).collect();
        let inputs = device_copies(bench, &host)?;
        Ok(Image {
            width,
            height,
            host,
            inputs,
        })
    }

    fn case(&self) -> String {
        format!("u8 {}x{}", self.width, self.height)
    }

    fn columns(&self) -> Vec<u32> {
        let mut sums = vec![0u32; self.width];
        for row in self.host.chunks(self.width) {
            for (sum, &b) in sums.iter_mut().zip(row) {
                *sum += b as u32;
            }
        }
        sums
    }

    fn rows(&self) -> Vec<u32> {
        self.host
            .chunks(self.width)
            .map(|r| r.iter().map(|&b| b as u32).sum())
            .collect()
    }
}

/// Every step of `L` into `u32`, then, with `f32_too`, the fastest into
/// `f32` (as row "`name`, f32 out"), in one table.
fn ladder<L: Ladder>(
    bench: &mut Bench,
    image: &Image,
    (into_u32, into_f32): (Launch<L, u32>, Launch<L, f32>),
    want: &[u32],
    f32_too: bool,
) -> Result<(), String> {
    let mut rows = measure(bench, image, |_| true, into_u32, want)?;
    if f32_too {
        // Sums below 2^24: exact in f32.
        let want_f32: Vec<f32> = want.iter().map(|&v| v as f32).collect();
        let mut f32_rows = measure(bench, image, |v| v == L::DEFAULT, into_f32, &want_f32)?;
        // One label per family for the life of the process; no row where
        // `--steps` leaves the fastest step out.
        if let Some(row) = f32_rows.first_mut() {
            row.variant = Box::leak(format!("{}, f32 out", L::DEFAULT.name()).into_boxed_str());
        }
        rows.extend(f32_rows);
    }
    bench.record(
        &format!(
            "{}, u8 {} × {} → u32 (GB/s: image bytes read)",
            L::FAMILY,
            image.width,
            image.height
        ),
        Case {
            family: L::FAMILY,
            case: image.case(),
            bytes: (image.width * image.height) as f64,
            rows,
            peers: Vec::new(),
        },
    );
    Ok(())
}

/// Times each step of `L` that `applies` over the rotating inputs and
/// checks the last result exactly.
fn measure<L: Ladder, O: SumOutput + Default + Clone + PartialEq>(
    bench: &mut Bench,
    image: &Image,
    applies: impl Fn(L) -> bool,
    launch: Launch<L, O>,
    want: &[O],
) -> Result<Vec<Row>, String> {
    let mut out = bench
        .ctx
        .zeros::<O>(want.len())
        .map_err(|e| e.to_string())?;
    let (inputs, width, height) = (&image.inputs, image.width, image.height);
    ladder_rows(bench, &image.case(), "", applies, |bench, step| {
        let mut turn = 0;
        let ms = bench.time(|| {
            turn += 1;
            let matrix = Matrix::new(&inputs[turn % inputs.len()], width, height)
                .map_err(|e| e.to_string())?;
            enqueued(launch(bench.ctx, step, &matrix, &mut out))
        })?;
        if out.to_vec().map_err(|e| e.to_string())? != want {
            return Err(format!(
                "{} {} {}: wrong result",
                L::FAMILY,
                image.case(),
                step.name()
            ));
        }
        Ok(ms)
    })
}
