//! The reduction ladder at 2^24, 2^26 and 2^28 elements, `f32`, `i32` and
//! `u32`, with min and max of the fastest step, against CUB's
//! `DeviceReduce`; and the scaling curve of the sum from 2^10 to 2^30.

use crate::harness::{Bench, Case, Family, Point, Row, Scaling, device_copies, enqueued, hash};
use warpspeed::reduce::{Op, ReduceVariant, Reducible};
use warpspeed_gpu::reduce::CASES;

pub const FAMILY: Family = Family {
    name: "reduce",
    run,
};

/// The benchmark's data, the same values the peer programs use.
trait Data: Reducible {
    fn value(i: usize) -> Self;
    /// Whether `got` is an acceptable result of `op` (exact for integers).
    fn close(got: Self, want: Self, n: usize) -> bool {
        let _ = n;
        got == want
    }
}

impl Data for f32 {
    fn value(i: usize) -> Self {
        hash(i, 1000) as f32 / 1000.0 - 0.5
    }
    fn close(got: Self, want: Self, n: usize) -> bool {
        (got - want).abs() <= 1e-3 * (n as f32).sqrt()
    }
}

impl Data for i32 {
    fn value(i: usize) -> Self {
        hash(i, 2001) as i32 - 1000
    }
}

impl Data for u32 {
    fn value(i: usize) -> Self {
        i32::value(i) as u32
    }
}

fn run(bench: &mut Bench) -> Result<(), String> {
    let sizes: &[u32] = if bench.quick {
        &[24, 28]
    } else {
        &[24, 26, 28]
    };
    for &log_n in sizes {
        run_type::<f32>(bench, log_n)?;
        if !bench.quick {
            run_type::<i32>(bench, log_n)?;
            run_type::<u32>(bench, log_n)?;
        }
    }
    scaling(bench)
}

fn run_type<T: Data>(bench: &mut Bench, log_n: u32) -> Result<(), String> {
    let n = 1usize << log_n;
    let ty = T::NAME;
    let host: Vec<T> = (0..n).map(T::value).collect();
    let bytes = (n * size_of::<T>()) as f64;
    let inputs = device_copies(bench, &host)?;
    let mut out = bench.ctx.zeros::<T>(1).map_err(|e| e.to_string())?;

    let ops = [Op::Sum, Op::Min, Op::Max];
    let peer_cases: Vec<String> = ops
        .iter()
        .map(|op| format!("reduce:{}:{ty}:{n}", op.name()))
        .collect();
    let peer_results = bench.peers.measure(&peer_cases);
    let case = format!("{ty} 2^{log_n}");
    let mut rows = Vec::new();
    for (op, variant) in CASES {
        if !bench.runs(variant.name()) {
            continue;
        }
        let mut turn = 0;
        let timing = bench.time(|| {
            turn += 1;
            enqueued(
                bench
                    .ctx
                    .reduce_into(op, variant, &inputs[turn % inputs.len()], &mut out),
            )
        })?;
        // The timed launches must also be right.
        let mut got = [T::default()];
        bench
            .ctx
            .copy_to_host(&out, &mut got)
            .map_err(|e| e.to_string())?;
        let want = host
            .iter()
            .fold(op.identity::<T>(), |a, &b| op.combine(a, b));
        if !T::close(got[0], want, n) {
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
        bench.progress(&format!("reduce {case} {name}"), timing);
        rows.push(Row {
            step: variant.step(),
            variant: name,
            ms: timing.ms,
            batch_ms: timing.batch_ms,
            versus: op.name(),
        });
    }
    let peers = ops.iter().map(|op| op.name()).zip(peer_results).collect();
    let title = format!(
        "reduce {ty}, n = 2^{log_n} ({} input cop{}; GB/s: bytes read)",
        inputs.len(),
        if inputs.len() == 1 { "y" } else { "ies" }
    );
    bench.record(
        &title,
        Case {
            family: "reduce",
            case,
            bytes,
            rows,
            peers,
        },
    );
    Ok(())
}

/// The fastest sum from 2^10 to 2^30 elements (every 4th power with
/// `--quick`), warpspeed against CUB: the latency floor of small inputs and
/// the bandwidth ceiling of large ones.
fn scaling(bench: &mut Bench) -> Result<(), String> {
    let step = if bench.quick { 4 } else { 2 };
    let logs: Vec<u32> = (10..=30).step_by(step).collect();
    let peer_cases: Vec<String> = logs
        .iter()
        .map(|l| format!("reduce:sum:f32:{}", 1usize << l))
        .collect();
    let peer_results = bench.peers.measure(&peer_cases);
    let ours = format!("warpspeed sum ({})", ReduceVariant::DEFAULT.name());
    let mut points = Vec::new();
    let mut unavailable = Vec::new();
    for (&log_n, peer) in logs.iter().zip(peer_results) {
        let n = 1usize << log_n;
        let host: Vec<f32> = (0..n).map(f32::value).collect();
        let inputs = device_copies(bench, &host)?;
        drop(host);
        let mut out = bench.ctx.zeros::<f32>(1).map_err(|e| e.to_string())?;
        let mut turn = 0;
        let timing = bench.time(|| {
            turn += 1;
            enqueued(bench.ctx.reduce_into(
                Op::Sum,
                ReduceVariant::DEFAULT,
                &inputs[turn % inputs.len()],
                &mut out,
            ))
        })?;
        bench.progress(&format!("reduce scaling f32 2^{log_n}"), timing);
        let ms = timing.ms;
        let bytes = (n * 4) as f64;
        points.push(Point {
            series: ours.clone(),
            n,
            ms,
            bytes,
        });
        match peer.outcome {
            Ok(ms) => points.push(Point {
                series: peer.name,
                n,
                ms,
                bytes,
            }),
            Err(why) => {
                if !unavailable
                    .iter()
                    .any(|(s, _): &(String, String)| *s == peer.name)
                {
                    unavailable.push((peer.name, why));
                }
            }
        }
    }
    bench.record_scaling(Scaling {
        family: "reduce",
        title: "sum f32".into(),
        axis: "n (elements)",
        points,
        unavailable,
    });
    Ok(())
}
