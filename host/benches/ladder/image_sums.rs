//! Column and row sums of an 8192 × 8192 `u8` image: every variant into
//! `u32`, and the fastest into `f32`. GB/s count the image bytes read.

use crate::harness::{Bench, Row, device_copies};
use cust::memory::DeviceBuffer;
use warpspeed::{ColumnSumVariant, Matrix, RowSumVariant};

const SIDE: usize = 8192;

pub fn run(bench: &mut Bench) -> Result<(), String> {
    let host: Vec<u8> = (0..SIDE * SIDE).map(|i| (i * 7 % 253) as u8).collect();
    let inputs = device_copies(bench, &host)?;
    let bytes = host.len() as f64;
    let want_columns: Vec<u32> = (0..SIDE)
        .map(|x| (0..SIDE).map(|y| host[y * SIDE + x] as u32).sum())
        .collect();
    let want_rows: Vec<u32> = host
        .chunks(SIDE)
        .map(|r| r.iter().map(|&b| b as u32).sum())
        .collect();

    let mut out = DeviceBuffer::from_slice(&vec![0u32; SIDE]).map_err(|e| e.to_string())?;
    let mut out_f32 = DeviceBuffer::from_slice(&vec![0f32; SIDE]).map_err(|e| e.to_string())?;
    let mut rows = Vec::new();
    let case = format!("u8 {SIDE}x{SIDE}");
    for variant in ColumnSumVariant::ALL {
        let mut turn = 0;
        let ms = bench.time(|| {
            turn += 1;
            let image =
                Matrix::new(&inputs[turn % inputs.len()], SIDE, SIDE).map_err(|e| e.to_string())?;
            bench
                .ctx
                .column_sums_with(variant, &image, &mut out)
                .map_err(|e| e.to_string())
        })?;
        if out.as_host_vec().map_err(|e| e.to_string())? != want_columns {
            return Err(format!("column sums {variant:?}: wrong result"));
        }
        rows.push(Row {
            family: "column_sums",
            case: case.clone(),
            step: variant.step(),
            variant: variant.name(),
            ms,
            bytes,
        });
    }
    let ms = bench.time(|| {
        let image = Matrix::new(&inputs[0], SIDE, SIDE).map_err(|e| e.to_string())?;
        bench
            .ctx
            .column_sums(&image, &mut out_f32)
            .map_err(|e| e.to_string())
    })?;
    rows.push(Row {
        family: "column_sums",
        case: case.clone(),
        step: 3,
        variant: "strips, f32 out",
        ms,
        bytes,
    });
    bench.table(
        &format!("column sums, u8 {SIDE} × {SIDE} → u32 (GB/s: image bytes read)"),
        &rows,
    );

    let mut rows = Vec::new();
    for variant in RowSumVariant::ALL {
        let mut turn = 0;
        let ms = bench.time(|| {
            turn += 1;
            let image =
                Matrix::new(&inputs[turn % inputs.len()], SIDE, SIDE).map_err(|e| e.to_string())?;
            bench
                .ctx
                .row_sums_with(variant, &image, &mut out)
                .map_err(|e| e.to_string())
        })?;
        if out.as_host_vec().map_err(|e| e.to_string())? != want_rows {
            return Err(format!("row sums {variant:?}: wrong result"));
        }
        rows.push(Row {
            family: "row_sums",
            case: case.clone(),
            step: variant.step(),
            variant: variant.name(),
            ms,
            bytes,
        });
    }
    let mut turn = 0;
    let ms = bench.time(|| {
        turn += 1;
        let image =
            Matrix::new(&inputs[turn % inputs.len()], SIDE, SIDE).map_err(|e| e.to_string())?;
        bench
            .ctx
            .row_sums(&image, &mut out_f32)
            .map_err(|e| e.to_string())
    })?;
    rows.push(Row {
        family: "row_sums",
        case,
        step: 4,
        variant: "vectorized, f32 out",
        ms,
        bytes,
    });
    bench.table(
        &format!("row sums, u8 {SIDE} × {SIDE} → u32 (GB/s: image bytes read)"),
        &rows,
    );
    Ok(())
}
