//! Column and row sums of an 8192 × 8192 `u8` image: every variant into
//! `u32` (checked exactly against the CPU), and the fastest into `f32`.
//! GB/s count the image bytes read.

use crate::harness::{Bench, Row, device_copies};
use cust::memory::{DeviceBuffer, DeviceSlice};
use warpspeed::{ColumnSumVariant, Context, Matrix, RowSumVariant, SumOutput};

const SIDE: usize = 8192;

/// One timed case: its step, name, and how to launch it into an output.
type Case<'a, O> = (
    u32,
    &'static str,
    Box<dyn Fn(&Context, &Matrix<u8>, &mut DeviceSlice<O>) -> warpspeed::Result<()> + 'a>,
);

pub fn run(bench: &mut Bench) -> Result<(), String> {
    let host: Vec<u8> = (0..SIDE * SIDE).map(|i| (i * 7 % 253) as u8).collect();
    let inputs = device_copies(bench, &host)?;
    let want_columns: Vec<u32> = (0..SIDE)
        .map(|x| (0..SIDE).map(|y| host[y * SIDE + x] as u32).sum())
        .collect();
    let want_rows: Vec<u32> = host
        .chunks(SIDE)
        .map(|r| r.iter().map(|&b| b as u32).sum())
        .collect();

    let mut rows = Vec::new();
    let columns: Vec<Case<u32>> = ColumnSumVariant::ALL
        .iter()
        .map(|&v| -> Case<u32> {
            (
                v.step(),
                v.name(),
                Box::new(move |c, i, o| c.column_sums_with(v, i, o)),
            )
        })
        .collect();
    measure(
        bench,
        &inputs,
        "column_sums",
        columns,
        &want_columns,
        &mut rows,
    )?;
    let fastest: Vec<Case<f32>> = vec![(
        3,
        "strips, f32 out",
        Box::new(|c, i, o| c.column_sums(i, o)),
    )];
    let want_f32: Vec<f32> = want_columns.iter().map(|&v| v as f32).collect();
    measure(bench, &inputs, "column_sums", fastest, &want_f32, &mut rows)?;
    bench.table(
        &format!("column sums, u8 {SIDE} × {SIDE} → u32 (GB/s: image bytes read)"),
        &rows,
    );

    let mut rows = Vec::new();
    let sums: Vec<Case<u32>> = RowSumVariant::ALL
        .iter()
        .map(|&v| -> Case<u32> {
            (
                v.step(),
                v.name(),
                Box::new(move |c, i, o| c.row_sums_with(v, i, o)),
            )
        })
        .collect();
    measure(bench, &inputs, "row_sums", sums, &want_rows, &mut rows)?;
    let fastest: Vec<Case<f32>> = vec![(
        4,
        "vectorized, f32 out",
        Box::new(|c, i, o| c.row_sums(i, o)),
    )];
    let want_f32: Vec<f32> = want_rows.iter().map(|&v| v as f32).collect();
    measure(bench, &inputs, "row_sums", fastest, &want_f32, &mut rows)?;
    bench.table(
        &format!("row sums, u8 {SIDE} × {SIDE} → u32 (GB/s: image bytes read)"),
        &rows,
    );
    Ok(())
}

/// Times each case over the rotating inputs and checks the last result
/// exactly (the sums of this image are below 2^24, exact in `f32` too).
fn measure<O: SumOutput + Default + Clone + PartialEq>(
    bench: &Bench,
    inputs: &[DeviceBuffer<u8>],
    family: &'static str,
    cases: Vec<Case<O>>,
    want: &[O],
    rows: &mut Vec<Row>,
) -> Result<(), String> {
    let mut out =
        DeviceBuffer::from_slice(&vec![O::default(); want.len()]).map_err(|e| e.to_string())?;
    for (step, variant, launch) in cases {
        let mut turn = 0;
        let ms = bench.time(|| {
            turn += 1;
            let image =
                Matrix::new(&inputs[turn % inputs.len()], SIDE, SIDE).map_err(|e| e.to_string())?;
            launch(bench.ctx, &image, &mut out).map_err(|e| e.to_string())
        })?;
        if out.as_host_vec().map_err(|e| e.to_string())? != want {
            return Err(format!("{family} {variant}: wrong result"));
        }
        let case = format!("u8 {SIDE}x{SIDE}");
        rows.push(Row {
            family,
            case,
            step,
            variant,
            ms,
            bytes: (SIDE * SIDE) as f64,
        });
    }
    Ok(())
}
