//! The reduction ladder at 2^24, 2^26 and 2^28 elements, `f32` and `i32`,
//! plus min/max of the fastest variant.

use crate::harness::{Bench, Family, Row, device_copies, enqueued};
use cust::memory::{CopyDestination, DeviceBuffer};
use warpspeed::reduce::{Element, Op};

pub const FAMILY: Family = Family {
    name: "reduce",
    run,
};

const SIZES: [u32; 3] = [24, 26, 28];

fn run(bench: &mut Bench) -> Result<(), String> {
    for log_n in SIZES {
        run_type::<f32>(bench, log_n, |i| {
            ((i * 2_654_435_761) % 1000) as f32 / 1000.0 - 0.5
        })?;
        run_type::<i32>(bench, log_n, |i| ((i * 2_654_435_761) % 2001) as i32 - 1000)?;
    }
    Ok(())
}

fn run_type<T: Element>(
    bench: &mut Bench,
    log_n: u32,
    value: impl Fn(usize) -> T,
) -> Result<(), String> {
    let n = 1usize << log_n;
    let ty = T::NAME;
    let host: Vec<T> = (0..n).map(value).collect();
    let bytes = (n * size_of::<T>()) as u64;
    let inputs = device_copies(bench, &host)?;
    let copies = inputs.len();
    let mut out = DeviceBuffer::from_slice(&[T::default()]).map_err(|e| e.to_string())?;

    let mut rows = Vec::new();
    for (op, variant) in warpspeed::gpu::reduce::CASES {
        let mut turn = 0;
        let ms = bench.time(|| {
            turn += 1;
            enqueued(
                bench
                    .ctx
                    .reduce_into(op, variant, &inputs[turn % copies], &mut out),
            )
        })?;
        // The timed launches must also be right.
        let mut got = [T::default()];
        out.copy_to(&mut got[..]).map_err(|e| e.to_string())?;
        let want = host
            .iter()
            .fold(op.identity::<T>(), |a, &b| op.combine(a, b));
        let close = match T::NAME {
            "f32" => {
                let (g, w) = (got[0].to_bits(), want.to_bits());
                (f32::from_bits(g) - f32::from_bits(w)).abs() <= 1e-3 * (n as f32).sqrt()
            }
            _ => got[0] == want,
        };
        if !close {
            return Err(format!(
                "{} {variant:?} {ty} n=2^{log_n}: got {:?}, want {want:?}",
                op.name(),
                got[0]
            ));
        }
        let name = match op {
            Op::Sum => variant.name(),
            Op::Min => "vectorized min",
            Op::Max => "vectorized max",
        };
        rows.push(Row {
            family: "reduce",
            case: format!("{ty} 2^{log_n}"),
            step: variant.step(),
            variant: name,
            ms,
            bytes: bytes as f64,
        });
    }
    let title = format!(
        "reduce {} {ty}, n = 2^{log_n} ({} input cop{})",
        "sum/min/max",
        copies,
        if copies == 1 { "y" } else { "ies" }
    );
    bench.table(&title, &rows);
    Ok(())
}
