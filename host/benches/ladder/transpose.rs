//! The transpose ladder on 8192 × 8192 matrices of `u8` and `f32`.

use crate::harness::{Bench, Family, device_copies, enqueued, ladder_rows};
use cust::memory::DeviceBuffer;
use warpspeed::transpose::{Transposable, TransposeVariant};
use warpspeed::{Matrix, MatrixMut};

pub const FAMILY: Family = Family {
    name: "transpose",
    run,
};

const SIDE: usize = 8192;

fn run(bench: &mut Bench) -> Result<(), String> {
    run_type::<u8>(bench, "u8", |i| (i * 31 % 251) as u8)?;
    run_type::<f32>(bench, "f32", |i| i as f32)
}

fn run_type<T: Transposable + Copy + Default + AsBits>(
    bench: &mut Bench,
    ty: &str,
    value: impl Fn(usize) -> T,
) -> Result<(), String> {
    let n = SIDE * SIDE;
    let host: Vec<T> = (0..n).map(value).collect();
    let bytes = (n * size_of::<T>()) as u64;
    let inputs = device_copies(bench, &host)?;
    let mut dst = DeviceBuffer::from_slice(&host).map_err(|e| e.to_string())?;
    let case = format!("{ty} {SIDE}x{SIDE}");
    let applies = |v: TransposeVariant| v.supports(size_of::<T>());
    let rows = ladder_rows(&case, 2.0 * bytes as f64, applies, |variant| {
        let mut turn = 0;
        let ms = bench.time(|| {
            turn += 1;
            let src =
                Matrix::new(&inputs[turn % inputs.len()], SIDE, SIDE).map_err(|e| e.to_string())?;
            let mut out = MatrixMut::new(&mut dst, SIDE, SIDE).map_err(|e| e.to_string())?;
            enqueued(bench.ctx.transpose_into_with(variant, &src, &mut out))
        })?;
        // Spot-check the timed result: element (x, y) of the transpose.
        let got = dst.as_host_vec().map_err(|e| e.to_string())?;
        for (x, y) in [(0, 0), (1, 0), (SIDE - 1, 3), (17, SIDE - 2)] {
            if got[x * SIDE + y].as_bits() != host[y * SIDE + x].as_bits() {
                return Err(format!("{variant:?} {ty}: wrong element ({x}, {y})"));
            }
        }
        Ok(ms)
    })?;
    bench.table(
        &format!("transpose {ty}, {SIDE} × {SIDE} (GB/s: read + written)"),
        &rows,
    );
    Ok(())
}

/// Bit patterns, to compare floats exactly.
trait AsBits {
    fn as_bits(&self) -> u64;
}
impl AsBits for u8 {
    fn as_bits(&self) -> u64 {
        *self as u64
    }
}
impl AsBits for f32 {
    fn as_bits(&self) -> u64 {
        self.to_bits() as u64
    }
}
