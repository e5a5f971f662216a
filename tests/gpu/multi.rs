//! Several GPUs in one process: a context per device on its own thread,
//! peer access between devices.

use crate::common::*;
use libtest_mimic::{Failed, Trial};
use warpspeed::nccl::{self, Group};
use warpspeed::reduce::Op;
use warpspeed::{Buffer, DeviceRead, DeviceWrite, Error, Pod, View, ViewMut};

/// The bytes device `d` works on in the multi-GPU trials: different on
/// each device, so a mix-up of buffers or contexts shows.
fn bytes_of(device: usize, n: usize) -> Vec<u8> {
    random_vec(n, seed_of(&format!("multi::{device}")), |r| {
        rand::RngExt::random::<u8>(r)
    })
}

fn histogram_cpu(bytes: &[u8]) -> Vec<u32> {
    let mut counts = vec![0u32; 256];
    for &b in bytes {
        counts[b as usize] += 1;
    }
    counts
}

pub fn trials(trials: &mut Vec<Trial>) {
    // NCCL with one rank: runs on every GPU machine where NCCL loads.
    trials.push(group_trial("multi::group_of_one_gpu", 1, group_checks));
    // Every GPU of the machine in one group.
    let gpus = warpspeed::Context::devices().map_or(0, |d| d.len());
    if gpus >= 2 {
        trials.push(group_trial(
            &format!("multi::group_of_{gpus}_gpus"),
            gpus,
            group_checks,
        ));
    } else {
        trials.push(group_trial("multi::group_of_2_gpus", 2, group_checks));
    }

    // The natural multi-GPU program: contexts made here, each moved to a
    // thread of its own, each thread uploading, reducing and counting its
    // device's data.
    trials.push(multi_gpu_trial(
        "multi::one_context_per_gpu_on_its_own_thread",
        2,
        |contexts| {
            let n = 3_000_017;
            std::thread::scope(|s| {
                let workers: Vec<_> = contexts
                    .into_iter()
                    .enumerate()
                    .map(|(d, ctx)| {
                        s.spawn(move || -> Result<(), Failed> {
                            ok(ctx.bind())?;
                            let host = bytes_of(d, n);
                            let wide: Vec<u32> = host.iter().map(|&b| b as u32).collect();
                            let (x, words) = (upload(&ctx, &host)?, upload(&ctx, &wide)?);
                            let mut counts = poisoned(&ctx, 256, u32::MAX)?;
                            ok(ok(ctx.histogram_into(&x, &mut counts))?.wait())?;
                            let sum = ok(ctx.sum(&words))?;
                            let want: u32 = wide.iter().sum();
                            ensure(sum == want, || {
                                format!("device {d}: sum {sum}, expected {want}")
                            })?;
                            ensure(download(&ctx, &counts)? == histogram_cpu(&host), || {
                                format!("device {d}: wrong histogram")
                            })?;
                            ensure(ctx.info().ordinal as usize == d, || {
                                format!("context {d} is on device {}", ctx.info().ordinal)
                            })
                        })
                    })
                    .collect();
                workers
                    .into_iter()
                    .try_for_each(|w| w.join().map_err(|_| Failed::from("a worker panicked"))?)
            })
        },
    ));

    trials.push(multi_gpu_trial(
        "multi::one_process_per_gpu_joined_by_a_unique_id",
        2,
        processes_join_by_unique_id,
    ));

    // Peer access where the hardware has it: device 1 reduces data that was
    // copied straight from device 0's memory.
    trials.push(multi_gpu_trial(
        "multi::peer_access_and_copies_between_devices",
        2,
        |contexts| {
            let (a, b) = (&contexts[0], &contexts[1]);
            let peers = (ok(a.can_access_peer(b))?, ok(b.can_access_peer(a))?);
            eprintln!("  peer access 0 -> 1: {}, 1 -> 0: {}", peers.0, peers.1);
            if peers.0 && peers.1 {
                ok(a.enable_peer_access(b))?;
                ok(b.enable_peer_access(a))?;
                ok(a.enable_peer_access(b))?; // twice is fine
            } else {
                ensure(a.enable_peer_access(b).is_err() || peers.0, || {
                    "enabling impossible peer access succeeded".into()
                })?;
            }
            ensure(a.enable_peer_access(a).is_err(), || {
                "peer access to the device itself was accepted".into()
            })?;
            let n = 1 << 20;
            let host: Vec<u32> = (0..n as u32).map(|i| i % 1000).collect();
            let on_a = upload(a, &host)?;
            let mut on_b = poisoned(b, n, 0u32)?;
            // The library copies between buffers of one device only: the
            // copy across devices is the driver's, on device 1's queue.
            ok(b.bind())?;
            let target = on_b.view_mut();
            // SAFETY: both addresses are the starts of live buffers of `n`
            // words (unified addressing tells the driver their devices),
            // `on_b` borrowed exclusively for the write; both were written
            // by uploads that had finished when they returned, and the
            // stream the copy runs on is waited for (`synchronize`) before
            // either buffer is used again or freed.
            let status = unsafe {
                cust::sys::cuMemcpyDtoDAsync_v2(
                    target.device_address(),
                    on_a.device_address(),
                    n * size_of::<u32>(),
                    b.cu_stream(),
                )
            };
            ensure(status == cust::sys::cudaError_enum::CUDA_SUCCESS, || {
                format!("copy from device 0 to device 1: {status:?}")
            })?;
            ok(b.synchronize())?;
            let sum = ok(b.sum(&on_b))?;
            let want: u32 = host.iter().sum();
            ensure(sum == want, || {
                format!("sum on device 1: {sum}, expected {want}")
            })
        },
    ));
}

/// NCCL tests run where NCCL loads; elsewhere they are ignored with the
/// reason, unless `WARPSPEED_REQUIRE_NCCL` is set (the GPU machine's script
/// sets it when it finds the library).
fn group_trial(
    name: &str,
    gpus: usize,
    body: impl FnOnce(Group) -> Result<(), Failed> + Send + 'static,
) -> Trial {
    multi_gpu_trial(name, gpus, move |contexts| match Group::new(contexts) {
        Ok(group) => body(group),
        Err(Error::NcclUnavailable { reason })
            if std::env::var("WARPSPEED_REQUIRE_NCCL").is_err() =>
        {
            eprintln!("  NCCL not available, not tested: {reason}");
            Ok(())
        }
        Err(e) => Err(e.to_string().into()),
    })
}

/// One shard per member of `group`, each on its member's device: member
/// `d` gets `make(d)`.
fn shards<T: Pod>(group: &Group, make: impl Fn(usize) -> Vec<T>) -> Result<Vec<Buffer<T>>, Failed> {
    group
        .contexts()
        .iter()
        .enumerate()
        .map(|(d, ctx)| upload(ctx, &make(d)))
        .collect()
}

fn group_checks(group: Group) -> Result<(), Failed> {
    let n = group.len();
    eprintln!("  NCCL {:?}, {group:?}", ok(nccl::version())?);
    // Sums, minima and maxima of integer shards of different lengths: exact.
    let words = shards(&group, |d| {
        random_vec(1_000_003 + 7 * d, seed_of(&format!("group::{d}")), |r| {
            rand::RngExt::random_range(r, 0..1000u32)
        })
    })?;
    let views: Vec<View<'_, u32>> = words.iter().map(|b| b.view()).collect();
    let all: Vec<u32> = (0..n)
        .flat_map(|d| {
            random_vec(1_000_003 + 7 * d, seed_of(&format!("group::{d}")), |r| {
                rand::RngExt::random_range(r, 0..1000u32)
            })
        })
        .collect();
    let sum = ok(group.sum(&views))?;
    ensure(sum == all.iter().sum::<u32>(), || {
        format!("group sum {sum}")
    })?;
    let min = ok(group.reduce(Op::Min, &views))?;
    let max = ok(group.reduce(Op::Max, &views))?;
    let want = (*all.iter().min().unwrap(), *all.iter().max().unwrap());
    ensure((min, max) == want, || {
        format!("group min/max {min}/{max}, expected {want:?}")
    })?;

    // The 256-bin histogram of byte shards, in every member's output.
    let bytes = shards(&group, |d| bytes_of(d, 2_000_029 + d))?;
    let mut counts = shards(&group, |_| vec![u32::MAX; 256])?;
    ok(ok(group.histogram_into(&bytes, &mut counts))?.wait())?;
    let mut want = vec![0u32; 256];
    for d in 0..n {
        for (w, c) in want
            .iter_mut()
            .zip(histogram_cpu(&bytes_of(d, 2_000_029 + d)))
        {
            *w += c;
        }
    }
    for (d, (c, ctx)) in counts.iter().zip(group.contexts()).enumerate() {
        ensure(download(ctx, c)? == want, || {
            format!("histogram on member {d}")
        })?;
    }

    // An all-reduce of whole buffers: small integers in f32 add exactly.
    let mut floats = shards(&group, |d| vec![(d + 1) as f32; 4099])?;
    ok(ok(group.all_reduce_into(Op::Sum, &mut floats))?.wait())?;
    let total = (n * (n + 1) / 2) as f32;
    for (d, (f, ctx)) in floats.iter().zip(group.contexts()).enumerate() {
        ensure(download(ctx, f)?.iter().all(|&x| x == total), || {
            format!("all-reduce on member {d}: expected {total}")
        })?;
    }

    // Refused before any launch: a shard missing, buffers of two lengths.
    expect_invalid(group.sum(&views[..n - 1]), "one shard too few")?;
    if n > 1 {
        let swapped: Vec<View<'_, u32>> = views.iter().rev().copied().collect();
        expect_invalid(group.sum(&swapped), "shards on the wrong devices")?;
        // The last member's buffer cut short: lengths differ.
        let (first, last) = floats.split_at_mut(n - 1);
        let mut outs: Vec<ViewMut<'_, f32>> = first.iter_mut().map(|c| c.view_mut()).collect();
        outs.push(ok(last[0].slice_mut(..10))?);
        expect_invalid(
            group.all_reduce_into(Op::Sum, &mut outs),
            "all-reduce buffers of two lengths",
        )?;
    }
    Ok(())
}

/// Set in the environment of the child processes of the multi-process
/// trial: `<rank> <ranks> <unique id in hex>`.
pub const RANK_CHILD: &str = "WARPSPEED_RANK_CHILD";

/// The words rank `rank` sums in the multi-process trial.
fn rank_words(rank: u32) -> Vec<u32> {
    (0..1_000_003 + rank)
        .map(|i| (i * (rank + 3)) % 1000)
        .collect()
}

/// One process per GPU, joined by a unique id that the parent made and
/// passed on, as a multi-process (or multi-machine) program would.
fn processes_join_by_unique_id(contexts: Vec<warpspeed::Context>) -> Result<(), Failed> {
    let ranks = contexts.len() as u32;
    drop(contexts); // each child opens its own device
    let id = match nccl::UniqueId::new() {
        Ok(id) => id,
        Err(Error::NcclUnavailable { reason })
            if std::env::var("WARPSPEED_REQUIRE_NCCL").is_err() =>
        {
            eprintln!("  NCCL not available, not tested: {reason}");
            return Ok(());
        }
        Err(e) => return Err(e.to_string().into()),
    };
    let hex: String = id.as_bytes().iter().map(|b| format!("{b:02x}")).collect();
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let children: Vec<_> = (0..ranks)
        .map(|rank| {
            std::process::Command::new(&exe)
                .env(RANK_CHILD, format!("{rank} {ranks} {hex}"))
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .map_err(|e| Failed::from(format!("spawning rank {rank}: {e}")))
        })
        .collect::<Result<_, _>>()?;
    for (rank, child) in children.into_iter().enumerate() {
        let out = child.wait_with_output().map_err(|e| e.to_string())?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        eprint!("  rank {rank}: {text}");
        ensure(out.status.success(), || {
            format!("rank {rank} failed: {text}")
        })?;
    }
    Ok(())
}

/// A rank of the multi-process trial: joins the group, sums its shard with
/// everyone else's, checks the total, exits.
pub fn rank_child() -> ! {
    let run = || -> Result<String, String> {
        let spec = std::env::var(RANK_CHILD).map_err(|e| e.to_string())?;
        let parts: Vec<&str> = spec.split(' ').collect();
        let [rank, ranks, hex] = parts[..] else {
            return Err(format!("bad {RANK_CHILD}: {spec}"));
        };
        let (rank, ranks): (u32, u32) = (
            rank.parse().map_err(|_| "rank")?,
            ranks.parse().map_err(|_| "ranks")?,
        );
        let mut bytes = [0u8; 128];
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|e| e.to_string())?;
        }
        let id = nccl::UniqueId::from_bytes(bytes);
        let e = |e: Error| e.to_string();
        let group =
            Group::join(warpspeed::Context::new(rank).map_err(e)?, &id, ranks, rank).map_err(e)?;
        let host = rank_words(rank);
        let shard = group.contexts()[0].upload(&host).map_err(e)?;
        let sum = group.sum(&[shard.view()]).map_err(e)?;
        let want: u32 = (0..ranks).map(|r| rank_words(r).iter().sum::<u32>()).sum();
        if sum != want {
            return Err(format!("sum {sum}, expected {want}"));
        }
        Ok(format!(
            "{group:?}, sum of all ranks' shards {sum}, as expected\n"
        ))
    };
    match run() {
        Ok(line) => {
            print!("{line}");
            std::process::exit(0)
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1)
        }
    }
}
