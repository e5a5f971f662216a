//! The sort ladder: `u32` keys at 2^24 and 2^28 through every step; `f32`
//! keys and `u32` pairs on the fastest step; against CUB's
//! `DeviceRadixSort` and `torch.sort` in the same run.

use crate::harness::{Bench, Case, Family, Row, device_copies, enqueued};
use warpspeed::sort::{Sort, SortVariant, Sortable};

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
        pairs(bench, log_n)?;
    }
    Ok(())
}

/// Keys only, ascending: every step where `ladder`, else the fastest.
fn keys<T: Data>(bench: &mut Bench, log_n: u32, ladder: bool) -> Result<(), String> {
    let n = 1usize << log_n;
    let ty = T::NAME;
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
    let steps: Vec<SortVariant> = if ladder {
        SortVariant::ALL.to_vec()
    } else {
        vec![SortVariant::DEFAULT]
    };
    let mut rows = Vec::new();
    for variant in steps {
        if !bench.runs(variant.name()) {
            continue;
        }
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

/// `u32` keys with `u32` values (their indices), ascending.
fn pairs(bench: &mut Bench, log_n: u32) -> Result<(), String> {
    let n = 1usize << log_n;
    let host: Vec<u32> = (0..n).map(u32::value).collect();
    let indices: Vec<u32> = (0..n as u32).collect();
    let inputs = device_copies(bench, &host)?;
    let values = bench.ctx.upload(&indices).map_err(|e| e.to_string())?;
    let mut out = bench.ctx.alloc::<u32>(n).map_err(|e| e.to_string())?;
    let mut out_values = bench.ctx.alloc::<u32>(n).map_err(|e| e.to_string())?;
    let peer_results = bench.peers.measure(&[format!("sort_pairs:u32:asc:{n}")]);
    let case = format!("pairs u32 2^{log_n}");
    let mut rows = Vec::new();
    let variant = SortVariant::DEFAULT;
    if bench.runs(variant.name()) {
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
        for i in 0..n {
            let at = got_values[i] as usize;
            let stable = i == 0 || got[i - 1] < got[i] || got_values[i - 1] < got_values[i];
            if host.get(at) != Some(&got[i]) || !stable {
                return Err(format!(
                    "{case}: place {i} holds key {} with value {at}",
                    got[i]
                ));
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
        format!("sort u32 pairs, n = 2^{log_n} (GB/s: keys and values read + written once)");
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
