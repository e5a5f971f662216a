//! Working with other stacks: graphs (every step of every family captured
//! and replayed a thousand times against CPU references, graphs over the
//! buffers of several queues, launched on other queues, dropped and
//! forgotten, and the calls a capture refuses), pinned host buffers,
//! queues on raw streams, and `cudarc` (with the `cudarc` feature).

use crate::common::{
    download, ensure, gpu_trial, multi_gpu_trial, ok, random_vec, seed_of, under_sanitizer,
    unsanitized_trial, upload,
};
use libtest_mimic::{Failed, Trial};
use warpspeed::conv1d::Conv1dVariant;
use warpspeed::gemm::{Gemm, GemmVariant};
use warpspeed::histogram::{EvenBins, HistogramVariant};
use warpspeed::image_sums::{ColumnSumVariant, RowSumVariant};
use warpspeed::reduce::{Op, ReduceVariant};
use warpspeed::rng::Generator;
use warpspeed::transpose::TransposeVariant;
use warpspeed::{Buffer, Context, Error, Ladder, Matrix, MatrixMut, Pod};

/// Rounds of replays, each on new input; a thousand replays in all (a few
/// under compute-sanitizer, which runs each launch far slower).
const ROUNDS: usize = 4;
fn replays() -> usize {
    if under_sanitizer() { 3 } else { 250 }
}

pub fn trials(trials: &mut Vec<Trial>) {
    trials.push(gpu_trial("interop::graph::reduce", graph_reduce));
    trials.push(gpu_trial("interop::graph::transpose", graph_transpose));
    trials.push(gpu_trial("interop::graph::row_sums", graph_row_sums));
    trials.push(gpu_trial("interop::graph::column_sums", graph_column_sums));
    trials.push(gpu_trial("interop::graph::histogram", graph_histogram));
    trials.push(gpu_trial("interop::graph::conv1d", graph_conv1d));
    trials.push(gpu_trial("interop::graph::gemm", graph_gemm));
    trials.push(gpu_trial("interop::graph::rng", graph_rng));
    trials.push(gpu_trial(
        "interop::graph::fill_and_copy",
        graph_fill_and_copy,
    ));
    trials.push(gpu_trial(
        "interop::graph::buffers_of_two_queues",
        graph_two_queues,
    ));
    trials.push(gpu_trial(
        "interop::graph::launched_on_other_queues",
        graph_other_queues,
    ));
    trials.push(gpu_trial("interop::graph::dropped", graph_dropped));
    trials.push(gpu_trial(
        "interop::graph::keeps_a_dropped_buffer",
        graph_keeps_buffer,
    ));
    trials.push(unsanitized_trial(
        "interop::graph::forgotten",
        "a forgotten graph leaks its buffers and scratch memory, which memcheck reports",
        graph_forgotten,
    ));
    trials.push(gpu_trial("interop::graph::refusals", graph_refusals));
    trials.push(gpu_trial("interop::graph::failed_capture", graph_failed));
    for n in [0, 1, 3, 1_000_003] {
        trials.push(gpu_trial(
            format!("interop::pinned::round_trip::{n}"),
            move |ctx| pinned_round_trip(ctx, n),
        ));
    }
    trials.push(gpu_trial(
        "interop::pinned::read_after_a_forgotten_download",
        pinned_forgotten_download,
    ));
    trials.push(gpu_trial(
        "interop::pinned::write_waits_for_the_upload",
        pinned_write_waits,
    ));
    trials.push(gpu_trial("interop::pinned::two_queues", pinned_two_queues));
    trials.push(gpu_trial("interop::raw_stream", raw_stream));
    trials.push(multi_gpu_trial(
        "interop::raw_stream_of_another_device",
        2,
        raw_stream_other_device,
    ));
    trials.push(multi_gpu_trial(
        "interop::graph::launched_on_another_device",
        2,
        graph_other_device,
    ));
    #[cfg(feature = "cudarc")]
    crate::interop_cudarc::trials(trials);
}

/// Why a step was not captured: `None` if it was.
fn skipped(result: &warpspeed::Result<warpspeed::Graph>, step: &str) -> Result<bool, Failed> {
    match result {
        Ok(_) => Ok(false),
        // The CPU steps wait on the host: refused.
        Err(Error::InCapture { .. }) if step.contains("cpu") => Ok(true),
        // Steps that do not take this type or shape, as outside a capture.
        Err(Error::Unsupported { .. }) => Ok(true),
        Err(e) => Err(format!("{step}: {e}").into()),
    }
}

/// Captures `record` over `input` and `output`, then replays it
/// `ROUNDS × REPLAYS` times, writing new input (`make(round)`) before each
/// round and checking the output after it (`check(input, output)`).
/// `Ok(false)` where the step cannot be captured (see [`skipped`]).
fn replay<I: Pod, O: Pod>(
    ctx: &Context,
    step: &str,
    (n_in, n_out): (usize, usize),
    make: impl Fn(usize) -> Vec<I>,
    record: impl FnOnce(&Context, &Buffer<I>, &mut Buffer<O>) -> warpspeed::Result<()>,
    check: impl Fn(&[I], &[O]) -> Result<(), Failed>,
) -> Result<bool, Failed> {
    let mut input = ok(ctx.alloc::<I>(n_in))?;
    let mut output = ok(ctx.alloc::<O>(n_out))?;
    let graph = ctx.capture(|q| record(q, &input, &mut output));
    if skipped(&graph, step)? {
        return Ok(false);
    }
    let graph = ok(graph)?;
    for round in 0..ROUNDS {
        let host = make(round);
        ok(ctx.copy_from_host(&host, &mut input))?;
        for _ in 0..replays() {
            ok(graph.launch(ctx))?.detach();
        }
        let got = ok(output.to_vec())?;
        check(&host, &got)
            .map_err(|e| format!("{step}, round {round}: {}", e.message().unwrap_or_default()))?;
    }
    Ok(true)
}

/// Every step of `L` through `run`, which says whether it captured; at
/// least one must.
fn every_step<L: Ladder>(mut run: impl FnMut(L) -> Result<bool, Failed>) -> Result<(), Failed> {
    let mut captured = 0;
    for &step in L::ALL {
        captured += usize::from(run(step)?);
    }
    ensure(captured > 0, || "no step was captured".into())
}

fn exact<T: PartialEq + std::fmt::Debug>(expected: &[T], got: &[T]) -> Result<(), Failed> {
    match expected.iter().zip(got).position(|(e, g)| e != g) {
        None if expected.len() == got.len() => Ok(()),
        None => Err(format!("{} elements, expected {}", got.len(), expected.len()).into()),
        Some(i) => Err(format!("at {i}: {:?}, expected {:?}", got[i], expected[i]).into()),
    }
}

fn graph_reduce(ctx: &Context) -> Result<(), Failed> {
    let n = 4099;
    every_step(|step: ReduceVariant| {
        replay(
            ctx,
            step.name(),
            (n, 1),
            |round| {
                random_vec(n, seed_of(&format!("reduce{round}")), |r| {
                    rand::RngExt::random_range(r, 0..1000u32)
                })
            },
            |q, x, out| q.reduce_into(Op::Sum, step, x, out).map(drop),
            |x, out| exact(&[x.iter().fold(0u32, |s, v| s.wrapping_add(*v))], out),
        )
    })
}

fn graph_transpose(ctx: &Context) -> Result<(), Failed> {
    let (w, h) = (257, 131);
    every_step(|step: TransposeVariant| {
        replay(
            ctx,
            step.name(),
            (w * h, w * h),
            |round| (0..w * h).map(|i| (i * 7 + round) as u32).collect(),
            |q, x, out| {
                let (src, mut dst) = (Matrix::new(x, w, h)?, MatrixMut::new(out, h, w)?);
                q.transpose_into_with(step, &src, &mut dst).map(drop)
            },
            |x, out| {
                let expected: Vec<u32> = (0..w * h).map(|i| x[(i % h) * w + i / h]).collect();
                exact(&expected, out)
            },
        )
    })
}

fn image(round: usize, n: usize) -> Vec<u8> {
    random_vec(n, seed_of(&format!("image{round}")), |r| {
        rand::RngExt::random(r)
    })
}

fn graph_row_sums(ctx: &Context) -> Result<(), Failed> {
    let (w, h) = (300, 77);
    every_step(|step: RowSumVariant| {
        replay(
            ctx,
            step.name(),
            (w * h, h),
            |round| image(round, w * h),
            |q, x, out: &mut Buffer<u32>| {
                q.row_sums_into_with(step, &Matrix::new(x, w, h)?, out)
                    .map(drop)
            },
            |x, out| {
                let expected: Vec<u32> = x
                    .chunks(w)
                    .map(|row| row.iter().map(|&v| u32::from(v)).sum())
                    .collect();
                exact(&expected, out)
            },
        )
    })
}

fn graph_column_sums(ctx: &Context) -> Result<(), Failed> {
    let (w, h) = (300, 77);
    every_step(|step: ColumnSumVariant| {
        replay(
            ctx,
            step.name(),
            (w * h, w),
            |round| image(round, w * h),
            |q, x, out: &mut Buffer<u32>| {
                q.column_sums_into_with(step, &Matrix::new(x, w, h)?, out)
                    .map(drop)
            },
            |x, out| {
                let expected: Vec<u32> = (0..w)
                    .map(|c| (0..h).map(|r| u32::from(x[r * w + c])).sum())
                    .collect();
                exact(&expected, out)
            },
        )
    })
}

fn graph_histogram(ctx: &Context) -> Result<(), Failed> {
    let n = (1 << 16) + 3;
    let bins = ok(EvenBins::<u8>::new(256, 0, 256))?;
    every_step(|step: HistogramVariant| {
        replay(
            ctx,
            step.name(),
            (n, 256),
            |round| image(round, n),
            |q, x, out| q.histogram_even_into_with(step, x, &bins, out).map(drop),
            |x, out| {
                let mut expected = vec![0u32; 256];
                for &v in x {
                    expected[usize::from(v)] += 1;
                }
                exact(&expected, out)
            },
        )
    })
}

/// Each output of a convolution is one thread's sum in a fixed order: the
/// replay gives the bits of the same step run at once, which the conv1d
/// trials check against the CPU.
fn graph_conv1d(ctx: &Context) -> Result<(), Failed> {
    let n = 10_007;
    let mask = ok(ctx.upload(&[0.25f32, -0.5, 1.0, 0.75, -0.125, 0.5, 0.0625]))?;
    every_step(|step: Conv1dVariant| {
        replay(
            ctx,
            step.name(),
            (n, n),
            |round| random_vec(n, seed_of(&format!("conv{round}")), crate::common::draw_f32),
            |q, x, out| q.conv1d_into_with(step, x, &mask, out).map(drop),
            |x, out| {
                let signal = upload(ctx, x)?;
                let mut direct = ok(ctx.alloc::<f32>(n))?;
                ok(ok(ctx.conv1d_into_with(step, &signal, &mask, &mut direct))?.wait())?;
                let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
                exact(&bits(&download(ctx, &direct)?), &bits(out))
            },
        )
    })
}

fn graph_gemm(ctx: &Context) -> Result<(), Failed> {
    let (m, n, k) = (256, 256, 256);
    every_step(|step: GemmVariant| {
        let gemm = Gemm::new(m, n, k).variant(step);
        replay(
            ctx,
            step.name(),
            (m * k + k * n, m * n),
            |round| {
                random_vec(
                    m * k + k * n,
                    seed_of(&format!("gemm{round}")),
                    crate::common::draw_f32,
                )
            },
            |q, x, out| {
                let (a, b) = x.split_at(m * k)?;
                let (a, b) = (Matrix::new(a, k, m)?, Matrix::new(b, n, k)?);
                q.gemm_into(&gemm, 1.0, &a, &b, 0.0, &mut MatrixMut::new(out, n, m)?)
                    .map(drop)
            },
            |x, out| {
                let (a, b) = x.split_at(m * k);
                let gamma = crate::gemm::gamma_of(step, k);
                for i in 0..m {
                    for j in 0..n {
                        let (mut exact, mut size) = (0f64, 0f64);
                        for l in 0..k {
                            let p = f64::from(a[i * k + l]) * f64::from(b[l * n + j]);
                            exact += p;
                            size += p.abs();
                        }
                        let got = f64::from(out[i * n + j]);
                        // The bound of the step's summation order and
                        // rounding (the gemm trials derive it), plus the
                        // rounding of the result to f32.
                        let bound = gamma * size + exact.abs() * f64::EPSILON * 2f64.powi(29);
                        ensure((got - exact).abs() <= bound, || {
                            format!("C[{i}][{j}] = {got}, expected {exact} ± {bound}")
                        })?;
                    }
                }
                Ok(())
            },
        )
    })
}

/// A generator's position is fixed at capture: every replay draws the same
/// numbers, those of the generator as it was.
fn graph_rng(ctx: &Context) -> Result<(), Failed> {
    let n = 1001;
    let seed = 0x5eed;
    let captured = replay(
        ctx,
        "fill_u32",
        (1, n),
        |_| vec![0u32],
        |q, _, out| q.fill_u32_into(&mut Generator::new(seed), out).map(drop),
        |_, out| {
            let generator = Generator::new(seed);
            let expected: Vec<u32> = (0..n as u64).map(|i| generator.value(i)).collect();
            exact(&expected, out)
        },
    )?;
    ensure(captured, || "the generator's fill was not captured".into())
}

fn graph_fill_and_copy(ctx: &Context) -> Result<(), Failed> {
    let n = 1001;
    let captured = replay(
        ctx,
        "fill_and_copy",
        (n, 2 * n),
        |round| (0..n as u64).map(|i| i * 3 + round as u64).collect(),
        |q, x, out| {
            let (mut head, mut tail) = out.split_at_mut(n)?;
            q.copy(x, &mut head)?;
            q.fill(&mut tail, 0x0123_4567_89ab_cdef)
        },
        |x, out| {
            let expected: Vec<u64> = x
                .iter()
                .copied()
                .chain(std::iter::repeat_n(0x0123_4567_89ab_cdef, n))
                .collect();
            exact(&expected, out)
        },
    )?;
    ensure(captured, || "the copy was not captured".into())
}

/// The sums of `a` and `b` into `sums[0]` and `sums[1]`, as a graph.
fn two_sums(
    ctx: &Context,
    a: &Buffer<u32>,
    b: &Buffer<u32>,
    sums: &mut Buffer<u32>,
) -> Result<warpspeed::Graph, Failed> {
    ok(ctx.capture(|q| {
        let (mut first, mut second) = sums.split_at_mut(1)?;
        q.reduce_into(Op::Sum, ReduceVariant::DEFAULT, a, &mut first)?
            .detach();
        q.reduce_into(Op::Sum, ReduceVariant::DEFAULT, b, &mut second)?
            .detach();
        Ok(())
    }))
}

/// Buffers written by two other queues just before each launch, and
/// written again by them just after: the launch waits for the writes, the
/// next writes for the launch.
fn graph_two_queues(ctx: &Context) -> Result<(), Failed> {
    let n = 1 << 24;
    let (q1, q2) = (ok(ctx.new_stream())?, ok(ctx.new_stream())?);
    let (mut a, mut b) = (ok(ctx.alloc::<u32>(n))?, ok(ctx.alloc::<u32>(n))?);
    let mut sums = ok(ctx.zeros::<u32>(2))?;
    let graph = two_sums(ctx, &a, &b, &mut sums)?;
    for round in 1..4u32 {
        ok(q1.fill(&mut a, round))?;
        ok(q2.fill(&mut b, 2 * round))?;
        ok(graph.launch(ctx))?.detach();
        ok(q1.fill(&mut a, 1000))?;
        ok(q2.fill(&mut b, 1000))?;
        let expected = [
            (n as u32).wrapping_mul(round),
            (n as u32).wrapping_mul(2 * round),
        ];
        exact(&expected, &ok(sums.to_vec())?)?;
    }
    Ok(())
}

/// Captured on one queue, launched on two others in turn.
fn graph_other_queues(ctx: &Context) -> Result<(), Failed> {
    let n = 1 << 20;
    let (q1, q2) = (ok(ctx.new_stream())?, ok(ctx.new_stream())?);
    let (mut a, b) = (ok(ctx.alloc::<u32>(n))?, ok(ctx.upload(&vec![2u32; n]))?);
    let mut sums = ok(ctx.zeros::<u32>(2))?;
    let graph = two_sums(ctx, &a, &b, &mut sums)?;
    for round in 0..10u32 {
        ok(ctx.fill(&mut a, round))?;
        let queue = if round % 2 == 0 { &q1 } else { &q2 };
        ok(graph.launch(queue))?.detach();
        exact(&[(n as u32) * round, 2 * n as u32], &ok(sums.to_vec())?)?;
    }
    Ok(())
}

/// Dropped before any launch, while replays run, and after they ended.
fn graph_dropped(ctx: &Context) -> Result<(), Failed> {
    let n = 1 << 22;
    let (a, b) = (
        ok(ctx.upload(&vec![1u32; n]))?,
        ok(ctx.upload(&vec![3u32; n]))?,
    );
    let mut sums = ok(ctx.zeros::<u32>(2))?;
    drop(two_sums(ctx, &a, &b, &mut sums)?);
    let graph = two_sums(ctx, &a, &b, &mut sums)?;
    for _ in 0..100 {
        ok(graph.launch(ctx))?.detach();
    }
    drop(graph); // waits for the replays
    exact(&[n as u32, 3 * n as u32], &ok(sums.to_vec())?)?;
    let graph = two_sums(ctx, &a, &b, &mut sums)?;
    ok(ok(graph.launch(ctx))?.wait())?;
    drop(graph);
    exact(&[n as u32, 3 * n as u32], &ok(sums.to_vec())?)
}

/// A buffer dropped after the capture stays allocated for the replays.
fn graph_keeps_buffer(ctx: &Context) -> Result<(), Failed> {
    let n = 1 << 20;
    let mut sum = ok(ctx.zeros::<u32>(1))?;
    let graph = {
        let x = ok(ctx.upload(&vec![5u32; n]))?;
        ok(ctx.capture(|q| {
            q.reduce_into(Op::Sum, ReduceVariant::DEFAULT, &x, &mut sum)
                .map(drop)
        }))?
    };
    // Allocations made now cannot take the dropped buffer's memory.
    let other = ok(ctx.upload(&vec![9u32; n]))?;
    for _ in 0..10 {
        ok(graph.launch(ctx))?.detach();
    }
    exact(&[5 * n as u32], &ok(sum.to_vec())?)?;
    exact(&[9 * n as u32], &[ok(ctx.sum(&other))?])
}

/// A forgotten graph leaks; its results and buffers stay right.
fn graph_forgotten(ctx: &Context) -> Result<(), Failed> {
    let n = 1 << 20;
    let x = ok(ctx.upload(&vec![4u32; n]))?;
    let mut sum = ok(ctx.zeros::<u32>(1))?;
    let graph = ok(ctx.capture(|q| {
        q.reduce_into(Op::Sum, ReduceVariant::DEFAULT, &x, &mut sum)
            .map(drop)
    }))?;
    for _ in 0..10 {
        ok(graph.launch(ctx))?.detach();
    }
    std::mem::forget(graph);
    exact(&[4 * n as u32], &ok(sum.to_vec())?)?;
    drop(x);
    exact(&[4 * n as u32], &ok(sum.to_vec())?)
}

/// Calls that wait on the host are refused inside a capture, with the
/// capture going on; outside it the queue works as before.
fn graph_refusals(ctx: &Context) -> Result<(), Failed> {
    let x = ok(ctx.upload(&[1u32, 2, 3]))?;
    let mut sum = ok(ctx.zeros::<u32>(1))?;
    let earlier = ok(ctx.capture(|_| Ok(())))?;
    let mut host = [0u32; 3];
    let mut refused = Vec::new();
    let graph = ok(ctx.capture(|q| {
        let mut note = |what: &str, r: warpspeed::Result<()>| {
            if !matches!(r, Err(Error::InCapture { .. })) {
                refused.push(format!("{what}: {r:?}"));
            }
        };
        note("sum", q.sum(&x).map(drop));
        note("synchronize", q.synchronize());
        note("zeros", q.zeros::<u32>(4).map(drop));
        note("upload", q.upload(&[1u32]).map(drop));
        note("download", q.download(&x).map(drop));
        note("copy_to_host", q.copy_to_host(&x, &mut host));
        note("release_scratch", q.release_scratch());
        note("capture", q.capture(|_| Ok(())).map(drop));
        note("launch", earlier.launch(q).map(drop));
        q.reduce_into(Op::Sum, ReduceVariant::DEFAULT, &x, &mut sum)?
            .wait()
    }))?;
    ensure(refused.is_empty(), || format!("not refused: {refused:?}"))?;
    ok(graph.launch(ctx))?.detach();
    exact(&[6], &ok(sum.to_vec())?)?;
    exact(&[6], &[ok(ctx.sum(&x))?])
}

/// A capture whose recording fails or panics returns the error (or the
/// panic) and leaves nothing capturing: the queue and new captures work.
fn graph_failed(ctx: &Context) -> Result<(), Failed> {
    let x = ok(ctx.upload(&[1u32, 2, 3]))?;
    let mut sum = ok(ctx.zeros::<u32>(1))?;
    let failed = ctx.capture(|q| {
        q.reduce_into(Op::Sum, ReduceVariant::DEFAULT, &x, &mut sum)?
            .detach();
        q.sum(&x).map(drop)
    });
    ensure(matches!(failed, Err(Error::InCapture { .. })), || {
        format!("a failed capture gave {failed:?}")
    })?;
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        ctx.capture(|q| {
            q.reduce_into(Op::Sum, ReduceVariant::DEFAULT, &x, &mut sum)?
                .detach();
            panic!("in a capture");
        })
    }));
    ensure(panicked.is_err(), || "the panic was not passed on".into())?;
    exact(&[6], &[ok(ctx.sum(&x))?])?;
    let graph = ok(ctx.capture(|q| {
        q.reduce_into(Op::Sum, ReduceVariant::DEFAULT, &x, &mut sum)
            .map(drop)
    }))?;
    ok(ok(graph.launch(ctx))?.wait())?;
    exact(&[6], &ok(sum.to_vec())?)
}

fn pinned_round_trip(ctx: &Context, n: usize) -> Result<(), Failed> {
    let mut source = ok(ctx.alloc_pinned::<u32>(n))?;
    for (i, v) in ok(source.as_mut_slice())?.iter_mut().enumerate() {
        *v = (i as u32).wrapping_mul(2_654_435_761);
    }
    let mut device = ok(ctx.alloc::<u32>(n))?;
    ok(ctx.copy_from_pinned(&source, &mut device))?.detach();
    let mut back = ok(ctx.alloc_pinned::<u32>(n))?;
    ok(ctx.copy_to_pinned(&device, &mut back))?.detach();
    exact(ok(source.as_slice())?, ok(back.as_slice())?)?;
    // Parts: the second half of the host into the first half of the device.
    let half = n / 2;
    {
        let mut first = ok(device.slice_mut(..n - half))?;
        ok(ok(ctx.copy_from_pinned(&ok(source.slice(half..))?, &mut first))?.wait())?;
    }
    let mut expected = ok(source.as_slice())?[half..].to_vec();
    expected.extend_from_slice(&ok(source.as_slice())?[n - half..]);
    exact(&expected, &download(ctx, &device)?)?;
    let wrong = ctx.copy_from_pinned(&source, &mut ok(ctx.alloc::<u32>(n + 1))?);
    ensure(matches!(wrong, Err(Error::LengthMismatch { .. })), || {
        format!("a copy of the wrong length gave {wrong:?}")
    })
}

/// The download's `Pending` is forgotten; the host read waits for it.
fn pinned_forgotten_download(ctx: &Context) -> Result<(), Failed> {
    let n = 1 << 26;
    let mut device = ok(ctx.alloc::<u32>(n))?;
    ok(ctx.fill(&mut device, 0x5a5a_5a5a))?;
    let mut host = ok(ctx.alloc_pinned::<u32>(n))?;
    std::mem::forget(ok(ctx.copy_to_pinned(&device, &mut host))?);
    let read = ok(host.as_slice())?;
    ensure(read.iter().all(|&v| v == 0x5a5a_5a5a), || {
        "the host read saw an unfinished download".into()
    })
}

/// A host write waits for the upload still reading the memory.
fn pinned_write_waits(ctx: &Context) -> Result<(), Failed> {
    let n = 1 << 26;
    let mut host = ok(ctx.alloc_pinned::<u32>(n))?;
    ok(host.as_mut_slice())?.fill(7);
    let mut device = ok(ctx.alloc::<u32>(n))?;
    ok(ctx.copy_from_pinned(&host, &mut device))?.detach();
    ok(host.as_mut_slice())?.fill(9);
    let got = download(ctx, &device)?;
    ensure(got.iter().all(|&v| v == 7), || {
        "the host write overtook the upload".into()
    })
}

/// A download on one queue, then an upload of the same pinned memory on
/// another: the upload waits for the download.
fn pinned_two_queues(ctx: &Context) -> Result<(), Failed> {
    let n = 1 << 24;
    let other = ok(ctx.new_stream())?;
    let mut source = ok(ctx.alloc::<u32>(n))?;
    ok(ctx.fill(&mut source, 11))?;
    let mut host = ok(ctx.alloc_pinned::<u32>(n))?;
    ok(ctx.copy_to_pinned(&source, &mut host))?.detach();
    let mut target = ok(other.alloc::<u32>(n))?;
    ok(other.copy_from_pinned(&host, &mut target))?.detach();
    let got = download(ctx, &target)?;
    ensure(got.iter().all(|&v| v == 11), || {
        "the upload overtook the download".into()
    })
}

fn raw_stream(ctx: &Context) -> Result<(), Failed> {
    ok(ctx.bind())?;
    let stream = cust::stream::Stream::new(cust::stream::StreamFlags::NON_BLOCKING, None)
        .map_err(|e| format!("creating a stream: {e}"))?;
    {
        // SAFETY: the stream is alive until after the queue is dropped.
        let queue = ok(unsafe { ctx.from_raw_stream(stream.as_inner()) })?;
        let x = ok(ctx.upload(&vec![3u32; 100_000]))?;
        exact(&[300_000], &[ok(queue.sum(&x))?])?;
        ensure(queue.cu_stream() == stream.as_inner(), || {
            "the queue runs on another stream".into()
        })?;
        // SAFETY: reading the queue's stream only.
        ensure(unsafe { queue.stream() }.is_none(), || {
            "a borrowed stream was given as owned".into()
        })?;
    }
    stream
        .synchronize()
        .map_err(|e| format!("the stream outlives the queue: {e}").into())
}

fn raw_stream_other_device(contexts: Vec<Context>) -> Result<(), Failed> {
    ok(contexts[1].bind())?;
    let stream = cust::stream::Stream::new(cust::stream::StreamFlags::DEFAULT, None)
        .map_err(|e| format!("creating a stream: {e}"))?;
    // SAFETY: the stream is alive for the call.
    let refused = unsafe { contexts[0].from_raw_stream(stream.as_inner()) };
    ensure(
        matches!(
            refused,
            Err(Error::WrongDevice {
                expected: 0,
                found: 1
            })
        ),
        || format!("a stream of device 1 gave {:?}", refused.map(drop)),
    )
}

/// A graph of device 0 launched on a queue of device 1: refused before
/// anything is enqueued; device 0's queue still replays it.
fn graph_other_device(contexts: Vec<Context>) -> Result<(), Failed> {
    let ctx = &contexts[0];
    let x = ok(ctx.upload(&[1u32, 2, 3]))?;
    let mut sum = ok(ctx.zeros::<u32>(1))?;
    let graph = ok(ctx.capture(|q| {
        q.reduce_into(Op::Sum, ReduceVariant::DEFAULT, &x, &mut sum)
            .map(drop)
    }))?;
    let refused = graph.launch(&contexts[1]).map(drop);
    ensure(
        matches!(
            refused,
            Err(Error::WrongDevice {
                expected: 1,
                found: 0
            })
        ),
        || format!("a launch on device 1 gave {refused:?}"),
    )?;
    ok(ok(graph.launch(ctx))?.wait())?;
    exact(&[6], &ok(sum.to_vec())?)
}
