//! The sort ladder: `u32` keys at 2^24 and 2^28 through every step; `f32`
//! keys and `u32` and `f32` pairs on the fastest step; against CUB's
//! `DeviceRadixSort` and `torch.sort` in the same run. Then the rows of a
//! matrix (the vocabulary case: `f32` logits, descending, with their
//! columns) against CUB's `DeviceSegmentedSort` and `torch.sort(dim=1)`,
//! their top-50 against `torch.topk` and their argmax against
//! `torch.argmax`.

use crate::harness::{Bench, Case, Family, Row, device_copies, enqueued};
use warpspeed::sort::{Sort, SortVariant, Sortable};
use warpspeed::{Matrix, MatrixMut};

pub const FAMILY: Family = Family { name: "sort", run };

/// SplitMix64 of `i`: the keys the peer programs draw too.
fn splitmix64(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The benchmark's keys: uniform over the type's range (`f32`: [-1, 1)).
trait Data: Sortable + PartialOrd {
    fn value(i: usize) -> Self;
    fn key_order(a: Self, b: Self) -> bool {
        a <= b
    }
}

impl Data for u32 {
    fn value(i: usize) -> Self {
        splitmix64(i as u64) as u32
    }
}

impl Data for f32 {
    fn value(i: usize) -> Self {
        (splitmix64(i as u64) >> 40) as f32 * (1.0 / 16_777_216.0) * 2.0 - 1.0
    }
}

/// Calls a timed window may hold: the driver queues about a thousand
/// launches, and steps 1 and 2 make about a hundred a sort (three a pass).
fn window(variant: SortVariant) -> usize {
    let shape = variant.shape();
    let passes = 32usize.div_ceil(shape.bits as usize);
    (512 / (3 * passes + 4)).max(1)
}

/// Waits for an untimed call.
fn wait(result: warpspeed::Result<warpspeed::Pending<'_>>) -> Result<(), String> {
    result.and_then(|p| p.wait()).map_err(|e| e.to_string())
}

fn run(bench: &mut Bench) -> Result<(), String> {
    let sizes: &[u32] = if bench.quick { &[24] } else { &[24, 28] };
    for &log_n in sizes {
        keys::<u32>(bench, log_n, true)?;
        keys::<f32>(bench, log_n, false)?;
        pairs::<u32>(bench, log_n)?;
        pairs::<f32>(bench, log_n)?;
    }
    let widths: &[usize] = if bench.quick {
        &[128_256]
    } else {
        &[32_000, 128_256, 262_144]
    };
    for (rows, width) in [(8, 32_000), (64, 128_256)] {
        if bench.quick && rows == 8 {
            continue;
        }
        row_case(bench, RowOp::Sort, rows, width)?;
    }
    for &width in widths {
        for rows in [1, 8, 64] {
            row_case(bench, RowOp::TopK(50), rows, width)?;
        }
    }
    for (rows, width) in [(8, 32_000), (64, 128_256), (1, 262_144), (64, 262_144)] {
        if bench.quick && rows != 64 {
            continue;
        }
        row_case(bench, RowOp::Argmax, rows, width)?;
    }
    Ok(())
}

/// What a row case does to each row of `f32` logits.
#[derive(Clone, Copy)]
enum RowOp {
    /// Sorted descending, with each key's column.
    Sort,
    /// The `k` largest and their columns, largest first.
    TopK(usize),
    /// The column of the largest.
    Argmax,
}

/// One operation on every row of a `rows × width` matrix of the peers'
/// keys, timed beside its peers and checked against a CPU sort of each
/// row (spot rows for sorts, every row for the rest).
fn row_case(bench: &mut Bench, op: RowOp, rows: usize, width: usize) -> Result<(), String> {
    let n = rows * width;
    let host: Vec<f32> = (0..n).map(f32::value).collect();
    let inputs = device_copies(bench, &host)?;
    let columns = match op {
        RowOp::Sort => width,
        RowOp::TopK(k) => k,
        RowOp::Argmax => 1,
    };
    let err = |e: warpspeed::Error| e.to_string();
    let mut values = bench.ctx.alloc::<f32>(rows * columns).map_err(err)?;
    let mut indices = bench.ctx.alloc::<u32>(rows * columns).map_err(err)?;
    let (peer_cases, case, variant, bytes) = match op {
        RowOp::Sort => (
            vec![
                format!("segmented_sort:f32:desc:{rows}:{width}"),
                format!("sort_rows:f32:desc:{rows}:{width}"),
            ],
            format!("rows f32 {rows}×{width}"),
            "onesweep_rows",
            // Keys read, keys and columns written.
            3 * n * 4,
        ),
        RowOp::TopK(k) => (
            vec![format!("topk:f32:{rows}:{width}:{k}")],
            format!("top-{k} f32 {rows}×{width}"),
            "select",
            n * 4,
        ),
        RowOp::Argmax => (
            vec![format!("argmax:f32:{rows}:{width}")],
            format!("argmax f32 {rows}×{width}"),
            "argmax",
            n * 4,
        ),
    };
    if !bench.runs(variant) {
        return Ok(());
    }
    let peer_results = bench.peers.measure(&peer_cases);
    let sort = Sort::descending();
    let mut turn = 0;
    let mut launch = |turn: usize| -> Result<warpspeed::Pending<'_>, String> {
        let x = Matrix::new(&inputs[turn % inputs.len()], width, rows).map_err(err)?;
        let mut i = MatrixMut::new(&mut indices, columns, rows).map_err(err)?;
        match op {
            RowOp::Sort => {
                let mut v = MatrixMut::new(&mut values, columns, rows).map_err(err)?;
                bench
                    .ctx
                    .sort_rows_with_indices_into(&sort, &x, &mut v, &mut i)
                    .map_err(err)
            }
            RowOp::TopK(k) => {
                let mut v = MatrixMut::new(&mut values, columns, rows).map_err(err)?;
                bench
                    .ctx
                    .top_k_rows_into(&sort, k, &x, &mut v, &mut i)
                    .map_err(err)
            }
            RowOp::Argmax => bench.ctx.argmax_rows_into(&x, &mut indices).map_err(err),
        }
    };
    // Untimed first: the scratch memory grows on the first call only.
    launch(0)?.wait().map_err(err)?;
    let timing = bench.time(|| {
        turn += 1;
        launch(turn)?.detach();
        Ok(())
    })?;
    let got = bench.ctx.download(&indices).map_err(err)?;
    let spot: Vec<usize> = match op {
        RowOp::Sort => vec![0, rows / 2, rows - 1],
        _ => (0..rows).collect(),
    };
    for r in spot {
        let row = &host[r * width..(r + 1) * width];
        let mut order: Vec<u32> = (0..width as u32).collect();
        order.sort_by(|&a, &b| row[b as usize].total_cmp(&row[a as usize]));
        let got = &got[r * columns..(r + 1) * columns];
        if got != &order[..columns] {
            let i = got
                .iter()
                .zip(&order)
                .position(|(g, w)| g != w)
                .unwrap_or(0);
            return Err(format!(
                "{case}: row {r} place {i} holds column {}, want {}",
                got[i], order[i]
            ));
        }
    }
    bench.progress(&format!("sort {case}"), timing);
    let title = match op {
        RowOp::Sort => format!(
            "row sort f32 descending with columns, {rows} rows × {width} (GB/s: keys read, keys and columns written)"
        ),
        RowOp::TopK(k) => format!("top-{k} f32, {rows} rows × {width} (GB/s: keys read once)"),
        RowOp::Argmax => format!("argmax f32, {rows} rows × {width} (GB/s: keys read once)"),
    };
    bench.record(
        &title,
        Case {
            family: "sort",
            case,
            bytes: bytes as f64,
            rows: vec![Row {
                step: SortVariant::Onesweep.step(),
                variant,
                ms: timing.ms,
                batch_ms: timing.batch_ms,
                versus: "",
            }],
            peers: peer_results.into_iter().map(|p| ("", p)).collect(),
        },
    );
    Ok(())
}

/// Keys only, ascending: every step where `ladder`, else the fastest.
fn keys<T: Data>(bench: &mut Bench, log_n: u32, ladder: bool) -> Result<(), String> {
    let n = 1usize << log_n;
    let ty = T::NAME;
    let steps: Vec<SortVariant> = if ladder {
        SortVariant::ALL.to_vec()
    } else {
        vec![SortVariant::DEFAULT]
    };
    let steps: Vec<SortVariant> = steps.into_iter().filter(|v| bench.runs(v.name())).collect();
    if steps.is_empty() {
        return Ok(());
    }
    let host: Vec<T> = (0..n).map(T::value).collect();
    let inputs = device_copies(bench, &host)?;
    let mut out = bench.ctx.alloc::<T>(n).map_err(|e| e.to_string())?;
    let mut peer_cases = vec![format!("sort_keys:{ty}:asc:{n}")];
    let mut groups = vec!["keys"];
    if ty == "f32" {
        peer_cases.push(format!("torch_sort:f32:asc:{n}"));
        groups.push("keys");
    }
    let peer_results = bench.peers.measure(&peer_cases);
    let case = format!("keys {ty} 2^{log_n}");
    let mut rows = Vec::new();
    for variant in steps {
        let mut turn = 0;
        let sort = Sort::ascending();
        // Untimed first: the sort's scratch memory grows (and waits for
        // the queue) on its first call only.
        wait(
            bench
                .ctx
                .sort_keys_with(variant, &sort, &inputs[0], &mut out),
        )?;
        let timing = bench.time_windows(bench.reps, window(variant), || {
            turn += 1;
            let input = &inputs[turn % inputs.len()];
            enqueued(bench.ctx.sort_keys_with(variant, &sort, input, &mut out))
        })?;
        let got = bench.ctx.download(&out).map_err(|e| e.to_string())?;
        if let Some(i) = got.windows(2).position(|w| !T::key_order(w[0], w[1])) {
            return Err(format!(
                "{} {case}: keys {i} and {} out of order",
                variant.name(),
                i + 1
            ));
        }
        bench.progress(&format!("sort {case} {}", variant.name()), timing);
        rows.push(Row {
            step: variant.step(),
            variant: variant.name(),
            ms: timing.ms,
            batch_ms: timing.batch_ms,
            versus: "keys",
        });
    }
    let peers = groups.into_iter().zip(peer_results).collect();
    let title = format!("sort {ty} keys, n = 2^{log_n} (GB/s: keys read + written once)");
    let bytes = (2 * n * size_of::<T>()) as f64;
    bench.record(
        &title,
        Case {
            family: "sort",
            case,
            bytes,
            rows,
            peers,
        },
    );
    Ok(())
}

/// Keys of `T` with `u32` values (their indices), ascending.
fn pairs<T: Data>(bench: &mut Bench, log_n: u32) -> Result<(), String> {
    let n = 1usize << log_n;
    let ty = T::NAME;
    let variant = SortVariant::DEFAULT;
    if !bench.runs(variant.name()) {
        return Ok(());
    }
    let host: Vec<T> = (0..n).map(T::value).collect();
    let indices: Vec<u32> = (0..n as u32).collect();
    let inputs = device_copies(bench, &host)?;
    let values = bench.ctx.upload(&indices).map_err(|e| e.to_string())?;
    let mut out = bench.ctx.alloc::<T>(n).map_err(|e| e.to_string())?;
    let mut out_values = bench.ctx.alloc::<u32>(n).map_err(|e| e.to_string())?;
    let peer_results = bench.peers.measure(&[format!("sort_pairs:{ty}:asc:{n}")]);
    let case = format!("pairs {ty} 2^{log_n}");
    let mut rows = Vec::new();
    {
        let mut turn = 0;
        let sort = Sort::ascending();
        wait(bench.ctx.sort_pairs_with(
            variant,
            &sort,
            &inputs[0],
            &values,
            &mut out,
            &mut out_values,
        ))?;
        let timing = bench.time(|| {
            turn += 1;
            let input = &inputs[turn % inputs.len()];
            enqueued(bench.ctx.sort_pairs_with(
                variant,
                &sort,
                input,
                &values,
                &mut out,
                &mut out_values,
            ))
        })?;
        let got = bench.ctx.download(&out).map_err(|e| e.to_string())?;
        let got_values = bench.ctx.download(&out_values).map_err(|e| e.to_string())?;
        // Each key where its value says it came from, the keys in order,
        // equal keys in the order of their values (the sort is stable).
        for i in 0..n {
            let at = got_values[i] as usize;
            let ordered = i == 0
                || (T::key_order(got[i - 1], got[i])
                    && (got[i - 1] != got[i] || got_values[i - 1] < got_values[i]));
            if host.get(at) != Some(&got[i]) || !ordered {
                return Err(format!("{case}: place {i} holds the key of place {at}"));
            }
        }
        bench.progress(&format!("sort {case} {}", variant.name()), timing);
        rows.push(Row {
            step: variant.step(),
            variant: variant.name(),
            ms: timing.ms,
            batch_ms: timing.batch_ms,
            versus: "pairs",
        });
    }
    let peers = vec![(
        "pairs",
        peer_results.into_iter().next().ok_or("no peer result")?,
    )];
    let title =
        format!("sort {ty} pairs, n = 2^{log_n} (GB/s: keys and values read + written once)");
    bench.record(
        &title,
        Case {
            family: "sort",
            case,
            bytes: (4 * n * 4) as f64,
            rows,
            peers,
        },
    );
    Ok(())
}
