//! Column and row sums of an 8192 × 8192 `u8` image: every variant into
//! `u32` (checked exactly against the CPU), and the fastest into `f32`.
//! GB/s count the image bytes read. No NVIDIA library offers these sums
//! (PyTorch reduces along a dimension at about 340 GB/s, see ANCHORS), so
//! the tables compare with the copy bandwidth alone.

use crate::harness::{Bench, Case, Family, Row, device_copies, enqueued, ladder_rows};
use cust::memory::{DeviceBuffer, DeviceSlice};
use warpspeed::image_sums::{ColumnSumVariant, RowSumVariant, SumOutput};
use warpspeed::{Context, Ladder, Matrix, Pending};

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
    &'a mut DeviceSlice<O>,
) -> warpspeed::Result<Pending<'a>>;

fn run(bench: &mut Bench) -> Result<(), String> {
    let host: Vec<u8> = (0..SIDE * SIDE).map(|i| (i * 7 % 253) as u8).collect();
    let inputs = device_copies(bench, &host)?;
    let want_columns: Vec<u32> = (0..SIDE)
        .map(|x| (0..SIDE).map(|y| host[y * SIDE + x] as u32).sum())
        .collect();
    let want_rows: Vec<u32> = host
        .chunks(SIDE)
        .map(|r| r.iter().map(|&b| b as u32).sum())
        .collect();

    ladder::<ColumnSumVariant>(
        bench,
        &inputs,
        (
            Context::column_sums_into_with,
            Context::column_sums_into_with,
        ),
        &want_columns,
    )?;
    ladder::<RowSumVariant>(
        bench,
        &inputs,
        (Context::row_sums_into_with, Context::row_sums_into_with),
        &want_rows,
    )
}

/// Every step of `L` into `u32`, then the fastest into `f32` (as row
/// "`name`, f32 out"), in one table.
fn ladder<L: Ladder>(
    bench: &mut Bench,
    inputs: &[DeviceBuffer<u8>],
    (into_u32, into_f32): (Launch<L, u32>, Launch<L, f32>),
    want: &[u32],
) -> Result<(), String> {
    let mut rows = measure(bench, inputs, |_| true, into_u32, want)?;
    let want_f32: Vec<f32> = want.iter().map(|&v| v as f32).collect();
    let mut f32_rows = measure(bench, inputs, |v| v == L::FASTEST, into_f32, &want_f32)?;
    // One label per family for the life of the process.
    f32_rows[0].variant = Box::leak(format!("{}, f32 out", L::FASTEST.name()).into_boxed_str());
    rows.extend(f32_rows);
    record(bench, L::FAMILY, rows);
    Ok(())
}

fn record(bench: &mut Bench, family: &'static str, rows: Vec<Row>) {
    bench.record(
        &format!("{family}, u8 {SIDE} × {SIDE} → u32 (GB/s: image bytes read)"),
        Case {
            family,
            case: format!("u8 {SIDE}x{SIDE}"),
            bytes: (SIDE * SIDE) as f64,
            rows,
            peers: Vec::new(),
        },
    );
}

/// Times each step of `L` that `applies` over the rotating inputs and
/// checks the last result exactly (the sums of this image are below 2^24,
/// exact in `f32` too).
fn measure<L: Ladder, O: SumOutput + Default + Clone + PartialEq>(
    bench: &mut Bench,
    inputs: &[DeviceBuffer<u8>],
    applies: impl Fn(L) -> bool,
    launch: Launch<L, O>,
    want: &[O],
) -> Result<Vec<Row>, String> {
    let mut out =
        DeviceBuffer::from_slice(&vec![O::default(); want.len()]).map_err(|e| e.to_string())?;
    let case = format!("u8 {SIDE}x{SIDE}");
    ladder_rows(bench, &case, "", applies, |bench, step| {
        let mut turn = 0;
        let ms = bench.time(|| {
            turn += 1;
            let image =
                Matrix::new(&inputs[turn % inputs.len()], SIDE, SIDE).map_err(|e| e.to_string())?;
            enqueued(launch(bench.ctx, step, &image, &mut out))
        })?;
        if out.as_host_vec().map_err(|e| e.to_string())? != want {
            return Err(format!("{} {}: wrong result", L::FAMILY, step.name()));
        }
        Ok(ms)
    })
}
