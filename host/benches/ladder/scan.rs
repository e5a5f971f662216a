//! The scan ladder at 2^20, 2^24 and 2^28 elements (`u32`, `i32`, `u64`,
//! `f32`), min, max and exclusive sums of the fastest step, against CUB's
//! `DeviceScan` and `torch.cumsum`; row scans against `torch.cumsum(dim=1)`
//! and CUB; compaction against CUB's `DeviceSelect`.

use crate::harness::{Bench, Case, Family, Row, device_copies, enqueued, hash};
use warpspeed::scan::{Compare, Op, Scan, ScanVariant, Scannable};
use warpspeed::{Matrix, MatrixMut};
use warpspeed_gpu::scan::Element;

pub const FAMILY: Family = Family { name: "scan", run };

/// The benchmark's data: small integers (sums stay exact in `f32` as long
/// as they stay below 2^24), the same values the peer programs draw.
trait Data: Scannable {
    fn value(i: usize) -> Self;
    /// Whether `got` is an acceptable scan element `want` at position `i`.
    fn close(got: Self, want: Self, i: usize) -> bool {
        let _ = i;
        got == want
    }
}

impl Data for f32 {
    fn value(i: usize) -> Self {
        hash(i, 1000) as f32 / 1000.0 - 0.5
    }
    fn close(got: Self, want: Self, i: usize) -> bool {
        // A loose check that the timed launches ran the scan: the test
        // suite holds the bound.
        (got - want).abs() <= 1e-4 * (i as f32 + 1.0).sqrt() + 1e-3 * want.abs()
    }
}

impl Data for u32 {
    fn value(i: usize) -> Self {
        hash(i, 16) as u32
    }
}

impl Data for i32 {
    fn value(i: usize) -> Self {
        hash(i, 17) as i32 - 8
    }
}

impl Data for u64 {
    fn value(i: usize) -> Self {
        hash(i, 1 << 20)
    }
}

fn run(bench: &mut Bench) -> Result<(), String> {
    let sizes: &[u32] = if bench.quick {
        &[24, 28]
    } else {
        &[20, 24, 28]
    };
    for &log_n in sizes {
        run_type::<u32>(bench, log_n)?;
        run_type::<f32>(bench, log_n)?;
        if !bench.quick {
            run_type::<i32>(bench, log_n)?;
            run_type::<u64>(bench, log_n)?;
        }
    }
    for (rows, width) in [(64, 128_256), (8, 32_000), (4096, 4096)] {
        rows_case(bench, rows, width)?;
    }
    for log_n in [24, 28] {
        compaction(bench, log_n)?;
    }
    Ok(())
}

/// What the fastest step also runs beside the ladder's inclusive sums:
/// (row name, group, operator, exclusive).
const EXTRA: [(&str, &str, Op, bool); 3] = [
    (
        "decoupled_lookback exclusive sum",
        "exclusive sum",
        Op::Sum,
        true,
    ),
    ("decoupled_lookback min", "min", Op::Min, false),
    ("decoupled_lookback max", "max", Op::Max, false),
];

fn run_type<T: Data>(bench: &mut Bench, log_n: u32) -> Result<(), String> {
    let n = 1usize << log_n;
    let ty = T::NAME;
    let host: Vec<T> = (0..n).map(T::value).collect();
    let inputs = device_copies(bench, &host)?;
    let mut out = bench.ctx.alloc::<T>(n).map_err(|e| e.to_string())?;

    let mut peer_cases = vec![
        format!("scan:inclusive:sum:{ty}:{n}"),
        format!("scan:exclusive:sum:{ty}:{n}"),
        format!("scan:inclusive:min:{ty}:{n}"),
        format!("scan:inclusive:max:{ty}:{n}"),
    ];
    let mut groups = vec!["sum", "exclusive sum", "min", "max"];
    if ty == "f32" || ty == "i32" {
        peer_cases.push(format!("cumsum:{ty}:{n}"));
        groups.push("sum");
    }
    let peer_results = bench.peers.measure(&peer_cases);
    let case = format!("{ty} 2^{log_n}");
    let mut rows = Vec::new();
    let mut runs: Vec<(&'static str, &'static str, ScanVariant, Op, bool)> = ScanVariant::ALL
        .iter()
        .map(|&v| (v.name(), "sum", v, Op::Sum, false))
        .collect();
    for (name, group, op, exclusive) in EXTRA {
        runs.push((name, group, ScanVariant::DEFAULT, op, exclusive));
    }
    for (name, versus, variant, op, exclusive) in runs {
        if !bench.runs(variant.name()) {
            continue;
        }
        let scan = if exclusive {
            Scan::Exclusive(T::identity(op))
        } else {
            Scan::Inclusive
        };
        let mut turn = 0;
        let timing = bench.time(|| {
            turn += 1;
            enqueued(
                bench
                    .ctx
                    .scan_into(variant, op, scan, &inputs[turn % inputs.len()], &mut out),
            )
        })?;
        check(bench, &host, &out, op, exclusive, &format!("{name} {case}"))?;
        bench.progress(&format!("scan {case} {name}"), timing);
        rows.push(Row {
            step: variant.step(),
            variant: name,
            ms: timing.ms,
            batch_ms: timing.batch_ms,
            versus,
        });
    }
    let peers = groups.into_iter().zip(peer_results).collect();
    let title = format!(
        "scan {ty}, n = 2^{log_n} ({} input cop{}; GB/s: bytes read + written)",
        inputs.len(),
        if inputs.len() == 1 { "y" } else { "ies" }
    );
    bench.record(
        &title,
        Case {
            family: "scan",
            case,
            bytes: (2 * n * size_of::<T>()) as f64,
            rows,
            peers,
        },
    );
    Ok(())
}

/// The timed launches must also be right: the scan downloaded against the
/// CPU's.
fn check<T: Data>(
    bench: &Bench,
    host: &[T],
    out: &warpspeed::Buffer<T>,
    op: Op,
    exclusive: bool,
    what: &str,
) -> Result<(), String> {
    let got = bench.ctx.download(out).map_err(|e| e.to_string())?;
    let mut run = T::identity(op);
    for (i, (&x, &g)) in host.iter().zip(&got).enumerate() {
        let want = if exclusive {
            let before = run;
            run = T::combine(op, run, x);
            before
        } else {
            run = T::combine(op, run, x);
            run
        };
        if !T::close(g, want, i) {
            return Err(format!("{what}: element {i} is {g:?}, want {want:?}"));
        }
    }
    Ok(())
}

/// Row scans (the row-wise cumulative sum of sampling) of `f32`.
fn rows_case(bench: &mut Bench, rows: usize, width: usize) -> Result<(), String> {
    let n = rows * width;
    let host: Vec<f32> = (0..n).map(f32::value).collect();
    let inputs = device_copies(bench, &host)?;
    let mut out = bench.ctx.alloc::<f32>(n).map_err(|e| e.to_string())?;
    let peer_results = bench.peers.measure(&[
        format!("cumsum_rows:f32:{rows}:{width}"),
        format!("scan_rows:sum:f32:{rows}:{width}"),
    ]);
    let mut turn = 0;
    let timing = bench.time(|| {
        turn += 1;
        let x =
            Matrix::new(&inputs[turn % inputs.len()], width, rows).map_err(|e| e.to_string())?;
        let mut y = MatrixMut::new(&mut out, width, rows).map_err(|e| e.to_string())?;
        enqueued(
            bench
                .ctx
                .scan_rows_into(Op::Sum, Scan::Inclusive, &x, &mut y),
        )
    })?;
    let got = bench.ctx.download(&out).map_err(|e| e.to_string())?;
    for (r, (row, got)) in host.chunks(width).zip(got.chunks(width)).enumerate() {
        let mut run = f32::identity(Op::Sum);
        for (i, (&x, &g)) in row.iter().zip(got).enumerate() {
            run += x;
            if !f32::close(g, run, i) {
                return Err(format!(
                    "row scan {rows}×{width}: row {r} element {i} is {g}, want {run}"
                ));
            }
        }
    }
    let case = format!("f32 {rows}×{width} rows");
    bench.progress(&format!("scan {case}"), timing);
    bench.record(
        &format!("row scan f32, {rows} rows × {width} (GB/s: bytes read + written)"),
        Case {
            family: "scan",
            case,
            bytes: (2 * n * 4) as f64,
            rows: vec![Row {
                step: ScanVariant::DEFAULT.step(),
                variant: "decoupled_lookback rows",
                ms: timing.ms,
                batch_ms: timing.batch_ms,
                versus: "",
            }],
            peers: vec![("", peer_results[0].clone()), ("", peer_results[1].clone())],
        },
    );
    Ok(())
}

/// Compaction of `u32` keeping half: by flags and by a comparison.
fn compaction(bench: &mut Bench, log_n: u32) -> Result<(), String> {
    let n = 1usize << log_n;
    let host: Vec<u32> = (0..n).map(|i| hash(i, 1000) as u32).collect();
    let flags_host: Vec<u8> = (0..n).map(|i| (hash(i, 997) & 1) as u8).collect();
    let inputs = device_copies(bench, &host)?;
    let flags = bench.ctx.upload(&flags_host).map_err(|e| e.to_string())?;
    let mut out = bench.ctx.alloc::<u32>(n).map_err(|e| e.to_string())?;
    let mut count = bench.ctx.zeros::<u64>(1).map_err(|e| e.to_string())?;
    let peer_results = bench.peers.measure(&[
        format!("select_flagged:u32:{n}"),
        format!("select_if:u32:{n}"),
    ]);
    let mut rows = Vec::new();
    for (name, versus) in [("compact_flagged", "flagged"), ("compact_if", "if")] {
        let mut turn = 0;
        let timing = bench.time(|| {
            turn += 1;
            let x = &inputs[turn % inputs.len()];
            enqueued(if versus == "flagged" {
                bench
                    .ctx
                    .compact_flagged_into(x, &flags, &mut out, &mut count)
            } else {
                bench
                    .ctx
                    .compact_if_into(x, Compare::Greater, 499, &mut out, &mut count)
            })
        })?;
        let want: Vec<u32> = if versus == "flagged" {
            host.iter()
                .zip(&flags_host)
                .filter(|(_, f)| **f != 0)
                .map(|(x, _)| *x)
                .collect()
        } else {
            host.iter().copied().filter(|&x| x > 499).collect()
        };
        let got_count = bench.ctx.download(&count).map_err(|e| e.to_string())?[0] as usize;
        let got = bench
            .ctx
            .download(&out.slice(..want.len()).map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
        if got_count != want.len() || got != want {
            return Err(format!(
                "{name} 2^{log_n}: kept {got_count}, want {}",
                want.len()
            ));
        }
        bench.progress(&format!("scan compaction u32 2^{log_n} {name}"), timing);
        rows.push(Row {
            step: ScanVariant::DEFAULT.step(),
            variant: name,
            ms: timing.ms,
            batch_ms: timing.batch_ms,
            versus,
        });
    }
    bench.record(
        &format!("compaction u32, n = 2^{log_n}, half kept (GB/s: bytes read + written)"),
        Case {
            family: "scan",
            case: format!("compaction u32 2^{log_n}"),
            // The input read, the flags read by the flagged form, half
            // the elements written.
            bytes: (n * 4 + n / 2 * 4) as f64,
            rows,
            peers: vec![
                ("flagged", peer_results[0].clone()),
                ("if", peer_results[1].clone()),
            ],
        },
    );
    Ok(())
}
