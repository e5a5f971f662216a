//! The memory model under attack: every misuse of buffers, views, guards,
//! queues and contexts that compiles without `unsafe` gives the right
//! answer or an `Err`, and stays clean under the sanitizers. (The misuses
//! that no longer compile are `compile_fail` examples on `warpspeed::Buffer`.)
//!
//! Each guard is leaked three ways (`mem::forget`, `Box::leak`, an `Rc`
//! cycle); then the buffers it borrowed are read on the host, rewritten on
//! another queue and dropped while the work may still run.

use crate::common::{
    ALONE, ensure, gpu_trial, max_n, multi_gpu_trial, ok, under_sanitizer, unsanitized_trial,
};
use libtest_mimic::{Failed, Trial};
use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, Instant};
use warpspeed::gemm::{Gemm, Packing, Precision};
use warpspeed::image_sums::ColumnSumVariant;
use warpspeed::reduce::{Op, ReduceVariant};
use warpspeed::{
    Buffer, Context, Error, Matrix, MatrixBatch, MatrixBatchMut, MatrixMut, Pending, Pod,
};

/// The child process that drops every `Context` of the device while a
/// buffer lives (the suite's own context would keep the device's CUDA
/// context alive in this process).
pub const CONTEXTS_CHILD: &str = "WARPSPEED_CONTEXTS_CHILD";

pub fn trials(trials: &mut Vec<Trial>) {
    for how in Leak::ALL {
        for (family, run) in FAMILIES {
            trials.push(gpu_trial(
                format!("soundness::leaked_guard::{family}::{how:?}"),
                move |ctx| run(ctx, how),
            ));
        }
    }
    trials.push(gpu_trial(
        "soundness::a_reader_on_one_queue_a_writer_on_another",
        reader_and_writer,
    ));
    trials.push(gpu_trial(
        "soundness::buffers_outlive_every_context",
        |_| contexts_dropped_in_a_child(),
    ));
    trials.push(gpu_trial("soundness::adopted_cust_buffer", adopted));
    trials.push(gpu_trial("soundness::bad_shapes_are_errors", bad_shapes));
    // It takes nearly all of the GPU's memory: nothing may run beside it.
    trials.push(gpu_trial("soundness::out_of_memory_mid_call", out_of_memory).with_kind(ALONE));
    trials.push(gpu_trial(
        "soundness::constant_mask_on_many_queues",
        constant_masks,
    ));
    // It compares the device's free memory before and after: another
    // process on the GPU moves it.
    trials.push(gpu_trial("soundness::threads_and_queues", stress).with_kind(ALONE));
    trials.push(multi_gpu_trial(
        "soundness::a_buffer_of_another_device",
        2,
        wrong_device,
    ));
    trials.push(gpu_trial(
        "soundness::a_stream_of_another_context",
        foreign_stream,
    ));
    trials.push(multi_gpu_trial(
        "soundness::a_stream_of_another_device",
        2,
        stream_of_another_device,
    ));
    trials.push(unsanitized_trial(
        "soundness::a_context_dropped_in_a_stream_callback",
        // Under the sanitizer the callback's own driver calls never return.
        "the driver calls of a stream callback hang under compute-sanitizer",
        dropped_in_a_callback,
    ));
}

/// How a guard is leaked: `mem::forget`, `Box::leak`, or an `Rc` cycle.
#[derive(Clone, Copy, Debug)]
enum Leak {
    Forget,
    Boxed,
    Cycle,
}

impl Leak {
    const ALL: [Leak; 3] = [Leak::Forget, Leak::Boxed, Leak::Cycle];

    fn apply(self, pending: Pending<'_>) {
        match self {
            Leak::Forget => std::mem::forget(pending),
            Leak::Boxed => {
                let _ = Box::leak(Box::new(pending));
            }
            Leak::Cycle => {
                struct Node<'a> {
                    next: RefCell<Option<Rc<Node<'a>>>>,
                    _guard: Pending<'a>,
                }
                let node = Rc::new(Node {
                    next: RefCell::new(None),
                    _guard: pending,
                });
                *node.next.borrow_mut() = Some(node.clone());
            }
        }
    }
}

/// The side of the square inputs: large enough that the GPU is still
/// working when the host goes on, smaller under the sanitizers.
fn side() -> usize {
    if max_n() >= 1 << 24 { 4096 } else { 256 }
}

/// One family under a leaked guard: `run` enqueues it from `x` into
/// `out` on a queue; `reference` computes on the CPU what `out` holds.
struct Case<I: Pod, O: Pod> {
    input: fn(usize, u64) -> Vec<I>,
    out_len: fn(usize) -> usize,
    run:
        for<'a> fn(&'a Context, &'a Buffer<I>, &'a mut Buffer<O>) -> warpspeed::Result<Pending<'a>>,
    reference: fn(&[I]) -> Vec<O>,
}

fn leaked<I: Pod, O: Pod + PartialEq + std::fmt::Debug>(
    ctx: &Context,
    how: Leak,
    case: Case<I, O>,
) -> Result<(), Failed> {
    let side = side();
    let other = ok(ctx.new_stream())?;
    let (first, second) = ((case.input)(side, 1), (case.input)(side, 2));
    let mut x = ok(ctx.upload(&first))?;
    let mut out = ok(ctx.zeros::<O>((case.out_len)(side)))?;

    // 1. Leak the guard, then rewrite the input on another queue at once:
    //    the write waits for the kernel's read.
    how.apply(ok((case.run)(ctx, &x, &mut out))?);
    ok(other.copy_from_host(&second, &mut x))?;
    // 2. Read the output on the host: waits for the kernel.
    let got = ok(out.to_vec())?;
    if got != (case.reference)(&first) {
        return Err(
            format!("{how:?}: the output read on the host is not the first input's").into(),
        );
    }
    // 3. The same on the other queue, read back through the first.
    how.apply(ok((case.run)(&other, &x, &mut out))?);
    let got = ok(ctx.download(&out))?;
    if got != (case.reference)(&second) {
        return Err(
            format!("{how:?}: the output of the other queue is not the second input's").into(),
        );
    }
    // 4. Drop both buffers under leaked work, then take their memory again:
    //    nothing may write into the new buffers.
    how.apply(ok((case.run)(ctx, &x, &mut out))?);
    drop(out);
    drop(x);
    let fresh =
        ok(ctx.zeros::<u8>((case.out_len)(side) * size_of::<O>() + first.len() * size_of::<I>()))?;
    ok(ctx.synchronize())?;
    ok(other.synchronize())?;
    if ok(fresh.to_vec())?.iter().any(|&b| b != 0) {
        return Err(format!("{how:?}: memory taken again after a drop was written").into());
    }
    Ok(())
}

fn bytes(side: usize, seed: u64) -> Vec<u8> {
    (0..side * side)
        .map(|i| {
            (i as u64).wrapping_mul(2654435761).wrapping_add(seed * 77) as u8 >> (seed as u32 % 3)
        })
        .collect()
}

fn small_floats(side: usize, seed: u64) -> Vec<f32> {
    bytes(side, seed)
        .iter()
        .map(|&b| (b % 8) as f32 - 3.0)
        .collect()
}

fn words(side: usize, seed: u64) -> Vec<u32> {
    bytes(side, seed)
        .iter()
        .map(|&b| b as u32 * seed as u32)
        .collect()
}

fn sum_case(ctx: &Context, how: Leak) -> Result<(), Failed> {
    leaked(
        ctx,
        how,
        Case {
            input: words,
            out_len: |_| 1,
            run: |ctx, x, out| ctx.reduce_into(Op::Sum, ReduceVariant::DEFAULT, x, out),
            reference: |x| vec![x.iter().fold(0u32, |a, &b| a.wrapping_add(b))],
        },
    )
}

fn transpose_case(ctx: &Context, how: Leak) -> Result<(), Failed> {
    leaked(
        ctx,
        how,
        Case {
            input: bytes,
            out_len: |side| side * side,
            run: |ctx, x, out| {
                let side = side();
                let src = Matrix::new(x, side, side)?;
                ctx.transpose_into(&src, &mut MatrixMut::new(out, side, side)?)
            },
            reference: |x| {
                let side = side();
                (0..side * side)
                    .map(|i| x[(i % side) * side + i / side])
                    .collect()
            },
        },
    )
}

fn histogram_case(ctx: &Context, how: Leak) -> Result<(), Failed> {
    leaked(
        ctx,
        how,
        Case {
            input: bytes,
            out_len: |_| 256,
            run: |ctx, x, out| ctx.histogram_into(x, out),
            reference: |x| {
                let mut counts = vec![0u32; 256];
                x.iter().for_each(|&b| counts[b as usize] += 1);
                counts
            },
        },
    )
}

fn column_sums_case(ctx: &Context, how: Leak) -> Result<(), Failed> {
    leaked::<u8, u32>(
        ctx,
        how,
        Case {
            input: bytes,
            out_len: |side| side,
            run: |ctx, x, out| {
                let side = side();
                ctx.column_sums_into_with(
                    ColumnSumVariant::Bands,
                    &Matrix::new(x, side, side)?,
                    out,
                )
            },
            reference: |x| {
                let side = side();
                (0..side)
                    .map(|c| (0..side).map(|r| x[r * side + c] as u32).sum())
                    .collect()
            },
        },
    )
}

fn row_sums_case(ctx: &Context, how: Leak) -> Result<(), Failed> {
    leaked::<u8, f32>(
        ctx,
        how,
        Case {
            input: bytes,
            out_len: |side| side,
            run: |ctx, x, out| {
                let side = side();
                ctx.row_sums_into(&Matrix::new(x, side, side)?, out)
            },
            reference: |x| {
                x.chunks(side())
                    .map(|row| row.iter().map(|&b| b as f32).sum())
                    .collect()
            },
        },
    )
}

/// The mask that follows the signal in the convolution case's input.
const MASK: [f32; 9] = [1.0, 0.0, -1.0, 1.0, 0.0, -1.0, 1.0, 0.0, -1.0];

fn conv1d_case(ctx: &Context, how: Leak) -> Result<(), Failed> {
    // Small integers in and out: every sum is exact in `f32`, whatever
    // the order. The input is the signal, then the mask.
    leaked(
        ctx,
        how,
        Case {
            input: |side, seed| {
                let mut x = small_floats(side, seed);
                x.extend_from_slice(&MASK);
                x
            },
            out_len: |side| side * side,
            run: |ctx, x, out| {
                let n = x.len() - MASK.len();
                ctx.conv1d_into(&x.slice(..n)?, &x.slice(n..)?, out)
            },
            reference: |x| {
                let n = x.len() - MASK.len();
                let half = MASK.len() / 2;
                (0..n)
                    .map(|i| {
                        (0..MASK.len())
                            .map(|j| {
                                let at = (i + j).checked_sub(half).filter(|&p| p < n);
                                at.map_or(0.0, |p| x[p] * MASK[j])
                            })
                            .sum()
                    })
                    .collect()
            },
        },
    )
}

fn gemm_case(ctx: &Context, how: Leak) -> Result<(), Failed> {
    gemm_leaked::<false>(ctx, how)
}

/// [`gemm_case`] in TF32 (the TMA step on an H100 or H200: its operand
/// copies, map slots and split workspace in the scratch memory): the
/// inputs are small integers, exact in TF32. Skipped where the module
/// has no TF32 steps.
fn gemm_tf32_case(ctx: &Context, how: Leak) -> Result<(), Failed> {
    let step = ctx.gemm_variant(&Gemm::new(1, 1, 1).precision(Precision::Tf32));
    if !step.needs().met_by(ctx.info().ptx_target) {
        return Ok(());
    }
    gemm_leaked::<true>(ctx, how)
}

/// A square product of the first (side/16)² inputs by themselves (small
/// integers, exact sums): FP32 with both operands packed, or TF32.
fn gemm_leaked<const TF32: bool>(ctx: &Context, how: Leak) -> Result<(), Failed> {
    leaked(
        ctx,
        how,
        Case {
            input: small_floats,
            out_len: |side| (side / 16) * (side / 16),
            run: |ctx, x, out| {
                let m = side() / 16;
                let gemm = if TF32 {
                    Gemm::new(m, m, m).precision(Precision::Tf32)
                } else {
                    Gemm::new(m, m, m).packing(Packing::Always)
                };
                let a = Matrix::new(x, m, m)?;
                let b = Matrix::with_pitch(x, m, m, m)?;
                ctx.gemm_into(&gemm, 1.0, &a, &b, 0.0, &mut MatrixMut::new(out, m, m)?)
            },
            reference: |x| {
                let m = side() / 16;
                (0..m * m)
                    .map(|i| (0..m).map(|p| x[(i / m) * m + p] * x[p * m + i % m]).sum())
                    .collect()
            },
        },
    )
}

/// Products in [`gemm_batch_case`] and [`gemm_list_case`].
const PRODUCTS: usize = 4;

/// The side of each of their products: `PRODUCTS` of them fit the first
/// quarter of the input.
fn product_side() -> usize {
    side() / 32
}

/// The `PRODUCTS` squares of the input's first elements, each by itself
/// (small integers, exact sums).
fn products_reference(x: &[f32]) -> Vec<f32> {
    let m = product_side();
    (0..PRODUCTS)
        .flat_map(|z| {
            let x = &x[z * m * m..(z + 1) * m * m];
            (0..m * m).map(move |i| (0..m).map(|p| x[(i / m) * m + p] * x[p * m + i % m]).sum())
        })
        .collect()
}

/// A strided batch of products in one launch, under a leaked guard.
fn gemm_batch_case(ctx: &Context, how: Leak) -> Result<(), Failed> {
    leaked(
        ctx,
        how,
        Case {
            input: small_floats,
            out_len: |_| PRODUCTS * product_side() * product_side(),
            run: |ctx, x, out| {
                let m = product_side();
                let batch = MatrixBatch::new(x, m, m, PRODUCTS)?;
                let mut c = MatrixBatchMut::new(out, m, m, PRODUCTS)?;
                ctx.gemm_batched_into(&Gemm::new(m, m, m), 1.0, &batch, &batch, 0.0, &mut c)
            },
            reference: products_reference,
        },
    )
}

/// A list of products over views of one buffer each (its reads and
/// writes listed once in the call), in one launch, under a leaked guard.
fn gemm_list_case(ctx: &Context, how: Leak) -> Result<(), Failed> {
    leaked(
        ctx,
        how,
        Case {
            input: small_floats,
            out_len: |_| PRODUCTS * product_side() * product_side(),
            run: |ctx, x, out| {
                let m = product_side();
                let inputs = (0..PRODUCTS)
                    .map(|z| Matrix::new(&x.slice(z * m * m..(z + 1) * m * m)?, m, m))
                    .collect::<warpspeed::Result<Vec<_>>>()?;
                let (front, back) = out.split_at_mut(2 * m * m)?;
                let (c0, c1) = front.split_at_mut(m * m)?;
                let (c2, c3) = back.split_at_mut(m * m)?;
                let mut outputs = [c0, c1, c2, c3]
                    .into_iter()
                    .map(|c| MatrixMut::new(c, m, m))
                    .collect::<warpspeed::Result<Vec<_>>>()?;
                let gemm = Gemm::new(m, m, m);
                ctx.gemm_each_into(&gemm, 1.0, &inputs, &inputs, 0.0, &mut outputs)
            },
            reference: products_reference,
        },
    )
}

/// One row times the whole input (`1 × side × side`, a matrix times a
/// vector whose `k` is split across blocks: partial sums and tickets in
/// the scratch memory), under a leaked guard.
fn gemv_row_case(ctx: &Context, how: Leak) -> Result<(), Failed> {
    gemv_leaked::<false>(ctx, how)
}

/// The whole input times one column (`side × 1 × side`, the GEMV kernel
/// whose rows run along `k`), under a leaked guard.
fn gemv_column_case(ctx: &Context, how: Leak) -> Result<(), Failed> {
    gemv_leaked::<true>(ctx, how)
}

/// The input's first `side` elements as a vector, times the whole input
/// as a `side × side` matrix (`x · W`), or the matrix times the vector
/// (`COLUMN`): small integers, exact sums.
fn gemv_leaked<const COLUMN: bool>(ctx: &Context, how: Leak) -> Result<(), Failed> {
    leaked(
        ctx,
        how,
        Case {
            input: small_floats,
            out_len: |side| side,
            run: |ctx, x, out| {
                let side = side();
                let vector = x.slice(0..side)?;
                let matrix = Matrix::new(x, side, side)?;
                if COLUMN {
                    let b = Matrix::new(&vector, 1, side)?;
                    let mut c = MatrixMut::new(out, 1, side)?;
                    ctx.gemm_into(&Gemm::new(side, 1, side), 1.0, &matrix, &b, 0.0, &mut c)
                } else {
                    let a = Matrix::new(&vector, side, 1)?;
                    let mut c = MatrixMut::new(out, side, 1)?;
                    ctx.gemm_into(&Gemm::new(1, side, side), 1.0, &a, &matrix, 0.0, &mut c)
                }
            },
            reference: |x| {
                let side = side();
                let at = |r: usize, c: usize| x[r * side + c];
                (0..side)
                    .map(|i| {
                        (0..side)
                            .map(|p| {
                                if COLUMN {
                                    at(i, p) * x[p]
                                } else {
                                    x[p] * at(p, i)
                                }
                            })
                            .sum()
                    })
                    .collect()
            },
        },
    )
}

type Run = fn(&Context, Leak) -> Result<(), Failed>;

const FAMILIES: [(&str, Run); 12] = [
    ("sum", sum_case),
    ("transpose", transpose_case),
    ("histogram", histogram_case),
    ("column_sums", column_sums_case),
    ("row_sums", row_sums_case),
    ("conv1d", conv1d_case),
    ("gemm", gemm_case),
    ("gemm_tf32", gemm_tf32_case),
    ("gemm_batch", gemm_batch_case),
    ("gemm_list", gemm_list_case),
    ("gemv_row", gemv_row_case),
    ("gemv_column", gemv_column_case),
];

/// A kernel reads a buffer on one queue while another queue wants to fill
/// it: the fill waits (with the guard leaked, nothing else would make it).
fn reader_and_writer(ctx: &Context) -> Result<(), Failed> {
    let side = side();
    let other = ok(ctx.new_stream())?;
    let host = bytes(side, 5);
    let mut src = ok(ctx.upload(&host))?;
    let mut dst = ok(ctx.zeros::<u8>(side * side))?;
    let pending = ok(ctx.transpose_into(
        &ok(Matrix::new(&src, side, side))?,
        &mut ok(MatrixMut::new(&mut dst, side, side))?,
    ))?;
    std::mem::forget(pending);
    ok(other.fill(&mut src, 0xAB))?;
    let got = ok(dst.to_vec())?;
    let want: Vec<u8> = (0..side * side)
        .map(|i| host[(i % side) * side + i / side])
        .collect();
    if got != want {
        return Err("the transpose read what the other queue wrote".into());
    }
    if ok(src.to_vec())?.iter().any(|&b| b != 0xAB) {
        return Err("the other queue's fill was lost".into());
    }
    Ok(())
}

/// Runs [`contexts_child`] in a process of its own and checks it passed.
fn contexts_dropped_in_a_child() -> Result<(), Failed> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = std::process::Command::new(exe)
        .env(CONTEXTS_CHILD, "1")
        .output()
        .map_err(|e| e.to_string())?;
    let said =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    if !out.status.success() || !said.contains("contexts child: passed") {
        return Err(format!("the child failed ({}): {said}", out.status).into());
    }
    Ok(())
}

/// Every `Context` of device 0 dropped while buffers live: they keep the
/// device's CUDA context, read right under a new `Context`, and free
/// cleanly (the sanitizer's leak check sees no leak, no bad free).
pub fn contexts_child() -> ! {
    let run = || -> warpspeed::Result<()> {
        let ones = {
            let ctx = Context::new(0)?;
            ctx.upload(&vec![1.0f32; 1024])?
        };
        let table = {
            let ctx = Context::new(0)?;
            ctx.poisson_table(3.5)?
        };
        let ctx = Context::new(0)?;
        let sum = ctx.sum(&ones)?;
        if sum != 1024.0 {
            return Err(Error::InvalidArgument(format!(
                "the sum after a reset is {sum}, not 1024"
            )));
        }
        let mut counts = ctx.zeros::<u32>(4096)?;
        let mut generator = warpspeed::rng::Generator::new(1);
        ctx.fill_poisson_into(&mut generator, &table, &mut counts)?
            .wait()?;
        drop(ctx);
        // The last buffer outlives every context, and is read and freed
        // with none left.
        if ones.to_vec()?.iter().any(|&v| v != 1.0) {
            return Err(Error::InvalidArgument(
                "a buffer changed with no context".into(),
            ));
        }
        drop(ones);
        drop(counts);
        Ok(())
    };
    match run() {
        Ok(()) => {
            println!("contexts child: passed");
            std::process::exit(0)
        }
        Err(e) => {
            println!("contexts child: {e}");
            std::process::exit(1)
        }
    }
}

/// A cust allocation of the device's primary context is adopted and used;
/// the buffer frees it.
fn adopted(ctx: &Context) -> Result<(), Failed> {
    ok(ctx.bind())?;
    let raw = cust::memory::DeviceBuffer::from_slice(&[3u32; 1000]).map_err(|e| e.to_string())?;
    // SAFETY: `raw` was just allocated in the primary context (bound
    // above), no slice or pointer of it is kept, and cust's `from_slice`
    // copy has finished when it returns.
    let buffer = ok(unsafe { ctx.adopt(raw) })?;
    if ok(ctx.sum(&buffer))? != 3000 {
        return Err("the adopted buffer's sum".into());
    }
    Ok(())
}

/// Shapes whose byte arithmetic overflows are errors, never panics.
fn bad_shapes(ctx: &Context) -> Result<(), Failed> {
    let a = ok(ctx.zeros::<f32>(16))?;
    match Matrix::with_pitch(&a, 4, 1, usize::MAX / 2) {
        Err(Error::InvalidArgument(_)) => {}
        other => return Err(format!("a pitch whose bytes overflow gave {other:?}").into()),
    }
    match a.slice(8..usize::MAX) {
        Err(Error::InvalidArgument(_)) => {}
        other => return Err(format!("a range past the end gave {other:?}").into()),
    }
    match ctx.zeros::<f32>(usize::MAX / 2) {
        Err(Error::InvalidArgument(_)) => {}
        other => return Err(format!("an allocation whose bytes overflow gave {other:?}").into()),
    }
    Ok(())
}

/// Takes device memory until an allocation of `size` bytes fails, for
/// every size from 256 MiB down to 256 B.
fn hog(ctx: &Context) -> Result<Vec<Buffer<u8>>, Failed> {
    let mut held = Vec::new();
    let (free, _) = ok(ctx.memory_info())?;
    if free > 1 << 30 {
        held.push(ok(ctx.zeros::<u8>(free - (1 << 29)))?);
    }
    let mut size = 256 << 20;
    while size >= 256 {
        match ctx.zeros::<u8>(size) {
            Ok(b) => held.push(b),
            Err(Error::Cuda { code, .. }) if code == warpspeed::code::OUT_OF_MEMORY => size /= 4,
            Err(e) => return Err(e.to_string().into()),
        }
    }
    Ok(held)
}

/// A call that fails for memory after it enqueued work (histogram and
/// column sums zero their output first, a packed GEMM transposes first, a
/// multi-pass reduction needs scratch) leaves its buffers ordered: after
/// the memory comes back the same calls give right answers.
fn out_of_memory(ctx: &Context) -> Result<(), Failed> {
    if under_sanitizer() {
        // The sanitizer's own allocations make the limit move.
        return Ok(());
    }
    let side = 1024;
    let host = bytes(side, 9);
    let image = ok(ctx.upload(&host))?;
    let floats = ok(ctx.upload(&small_floats(side, 3)))?;
    let mut counts = ok(ctx.zeros::<u32>(256))?;
    let mut columns = ok(ctx.zeros::<u32>(side))?;
    let mut c = ok(ctx.zeros::<f32>(64 * 64))?;
    // Fresh queues: no scratch memory yet.
    let queues: Vec<Context> = (0..4)
        .map(|_| ok(ctx.new_stream()))
        .collect::<Result<_, _>>()?;
    let held = hog(ctx)?;
    let run = |q: &Context,
               counts: &mut Buffer<u32>,
               columns: &mut Buffer<u32>,
               c: &mut Buffer<f32>,
               i: usize| {
        let matrix = Matrix::new(&image, side, side)?;
        match i {
            0 => q.histogram_into(&image, counts).map(Pending::detach),
            1 => q
                .column_sums_into_with(ColumnSumVariant::Bands, &matrix, columns)
                .map(Pending::detach),
            2 => {
                let gemm = Gemm::new(64, 64, 64)
                    .packing(Packing::Always)
                    .transpose_a(true);
                let a = Matrix::new(&floats, 64, 64)?;
                q.gemm_into(&gemm, 1.0, &a, &a, 0.0, &mut MatrixMut::new(c, 64, 64)?)
                    .map(Pending::detach)
            }
            _ => q
                .reduce(Op::Sum, ReduceVariant::Sequential, &floats)
                .map(drop),
        }
    };
    let mut failed = 0;
    for (i, q) in queues.iter().enumerate() {
        match run(q, &mut counts, &mut columns, &mut c, i) {
            Ok(()) => {}
            Err(Error::Cuda { code, .. }) if code == warpspeed::code::OUT_OF_MEMORY => failed += 1,
            Err(e) => return Err(format!("call {i} under memory pressure: {e}").into()),
        }
    }
    drop(held);
    for (i, q) in queues.iter().enumerate() {
        ok(run(q, &mut counts, &mut columns, &mut c, i))?;
    }
    let mut want = vec![0u32; 256];
    host.iter().for_each(|&b| want[b as usize] += 1);
    if ok(counts.to_vec())? != want {
        return Err("the histogram after the memory came back".into());
    }
    let want: Vec<u32> = (0..side)
        .map(|x| (0..side).map(|y| host[y * side + x] as u32).sum())
        .collect();
    if ok(columns.to_vec())? != want {
        return Err("the column sums after the memory came back".into());
    }
    let a = ok(floats.to_vec())?;
    let want: Vec<f32> = (0..64 * 64)
        .map(|i| {
            (0..64)
                .map(|p| a[p * 64 + i / 64] * a[p * 64 + i % 64])
                .sum()
        })
        .collect();
    if ok(c.to_vec())? != want {
        return Err("the packed GEMM after the memory came back".into());
    }
    println!("out of memory: {failed} of 4 calls failed for memory, then all right");
    Ok(())
}

/// Convolutions reading constant memory on several queues at once, each
/// with its own mask: every one reads its own.
fn constant_masks(ctx: &Context) -> Result<(), Failed> {
    use warpspeed::conv1d::Conv1dVariant;
    let n = 1 << 16;
    let signal_host = small_floats(256, 4);
    let signal = ok(ctx.upload(&signal_host[..n]))?;
    let queues: Vec<Context> = (0..4)
        .map(|_| ok(ctx.new_stream()))
        .collect::<Result<_, _>>()?;
    let masks: Vec<Vec<f32>> = (0..4)
        .map(|q| {
            (0..(3 + 2 * q))
                .map(|i| ((i + q) % 3) as f32 - 1.0)
                .collect()
        })
        .collect();
    let mut outs: Vec<Buffer<f32>> = (0..4)
        .map(|_| ok(ctx.zeros::<f32>(n)))
        .collect::<Result<_, _>>()?;
    let device_masks: Vec<Buffer<f32>> = masks
        .iter()
        .map(|m| ok(ctx.upload(m)))
        .collect::<Result<_, _>>()?;
    for round in 0..8 {
        for (i, q) in queues.iter().enumerate() {
            let variant = if (round + i) % 2 == 0 {
                Conv1dVariant::ConstantMask
            } else {
                Conv1dVariant::SharedTile
            };
            ok(q.conv1d_into_with(variant, &signal, &device_masks[i], &mut outs[i]))?.detach();
        }
    }
    for (i, out) in outs.iter().enumerate() {
        let mask = &masks[i];
        let half = mask.len() / 2;
        let want: Vec<f32> = (0..n)
            .map(|p| {
                (0..mask.len())
                    .map(|j| {
                        (p + j)
                            .checked_sub(half)
                            .filter(|&s| s < n)
                            .map_or(0.0, |s| signal_host[s] * mask[j])
                    })
                    .sum()
            })
            .collect();
        if ok(out.to_vec())? != want {
            return Err(format!("queue {i} read another queue's mask").into());
        }
    }
    Ok(())
}

/// 8 threads × 4 queues calling families at random on shared inputs and
/// private outputs, every result checked; device memory is what it was.
fn stress(ctx: &Context) -> Result<(), Failed> {
    let seconds: u64 = std::env::var("WARPSPEED_STRESS_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(if under_sanitizer() { 2 } else { 60 });
    // A first short round lets the driver size what it keeps per context
    // for concurrent work (it does not give that back); the memory is
    // compared around the second.
    stress_round(ctx, 1)?;
    ok(ctx.synchronize())?;
    let before = ok(ctx.memory_info())?.0;
    stress_round(ctx, seconds)?;
    ok(ctx.synchronize())?;
    let after = ok(ctx.memory_info())?.0;
    // Under compute-sanitizer the free memory also moves with the tool's
    // own allocations; its leak check covers the library's there.
    if after != before && !under_sanitizer() {
        return Err(format!("device memory free before {before} B, after {after} B").into());
    }
    Ok(())
}

fn stress_round(ctx: &Context, seconds: u64) -> Result<(), Failed> {
    let side = 512;
    let host = bytes(side, 11);
    let words_host = words(side, 3);
    {
        let image = ok(ctx.upload(&host))?;
        let numbers = ok(ctx.upload(&words_host))?;
        let (image, numbers, host, words_host) = (&image, &numbers, &host, &words_host);
        let mut counts_want = vec![0u32; 256];
        host.iter().for_each(|&b| counts_want[b as usize] += 1);
        let sum_want = words_host.iter().fold(0u32, |a, &b| a.wrapping_add(b));
        let columns_want: Vec<u32> = (0..side)
            .map(|x| (0..side).map(|y| host[y * side + x] as u32).sum())
            .collect();
        let transposed_want: Vec<u8> = (0..side * side)
            .map(|i| host[(i % side) * side + i / side])
            .collect();
        let (counts_want, columns_want, transposed_want) =
            (&counts_want, &columns_want, &transposed_want);
        let deadline = Instant::now() + Duration::from_secs(seconds);
        let calls = std::sync::atomic::AtomicUsize::new(0);
        let calls = &calls;
        std::thread::scope(|scope| -> Result<(), Failed> {
            let workers: Vec<_> = (0..8u64)
                .map(|t| {
                    scope.spawn(move || -> Result<(), String> {
                        let first = Context::new(0).map_err(|e| e.to_string())?;
                        let mut queues = vec![first.new_stream().map_err(|e| e.to_string())?];
                        for _ in 0..2 {
                            queues.push(first.new_stream().map_err(|e| e.to_string())?);
                        }
                        queues.push(first);
                        let mut counts = queues[0].zeros::<u32>(256).map_err(|e| e.to_string())?;
                        let mut columns =
                            queues[0].zeros::<u32>(side).map_err(|e| e.to_string())?;
                        let mut transposed = queues[0]
                            .zeros::<u8>(side * side)
                            .map_err(|e| e.to_string())?;
                        let mut state = t.wrapping_mul(0x9E3779B97F4A7C15) | 1;
                        while Instant::now() < deadline {
                            state ^= state << 13;
                            state ^= state >> 7;
                            state ^= state << 17;
                            let q = &queues[(state % 4) as usize];
                            let leak = state & 16 != 0;
                            let done = |p: Pending<'_>| {
                                if leak {
                                    p.detach();
                                    Ok(())
                                } else {
                                    p.wait()
                                }
                            };
                            let result: warpspeed::Result<bool> = (|| match (state >> 8) % 4 {
                                0 => Ok(q.sum(numbers)? == sum_want),
                                1 => {
                                    done(q.histogram_into(image, &mut counts)?)?;
                                    Ok(counts.to_vec()? == *counts_want)
                                }
                                2 => {
                                    done(q.column_sums_into(
                                        &Matrix::new(image, side, side)?,
                                        &mut columns,
                                    )?)?;
                                    Ok(columns.to_vec()? == *columns_want)
                                }
                                _ => {
                                    let src = Matrix::new(image, side, side)?;
                                    done(q.transpose_into(
                                        &src,
                                        &mut MatrixMut::new(&mut transposed, side, side)?,
                                    )?)?;
                                    Ok(q.download(&transposed)? == *transposed_want)
                                }
                            })();
                            match result {
                                Ok(true) => {}
                                Ok(false) => return Err(format!("thread {t}: a wrong result")),
                                Err(e) => return Err(format!("thread {t}: {e}")),
                            }
                            calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        }
                        Ok(())
                    })
                })
                .collect();
            for worker in workers {
                worker.join().map_err(|_| "a worker panicked")??;
            }
            Ok(())
        })?;
        println!(
            "threads and queues: {} checked calls in {seconds} s",
            calls.load(std::sync::atomic::Ordering::Relaxed)
        );
    }
    Ok(())
}

/// A buffer of device 1 given to a context of device 0, alone and in a
/// group: `WrongDevice` before any launch, and device 0 works on.
fn wrong_device(contexts: Vec<Context>) -> Result<(), Failed> {
    let on_1 = ok(contexts[1].upload(&[1u32; 100]))?;
    match contexts[0].sum(&on_1) {
        Err(Error::WrongDevice {
            expected: 0,
            found: 1,
        }) => {}
        other => return Err(format!("device 1's buffer on device 0 gave {other:?}").into()),
    }
    let mut out = ok(contexts[0].zeros::<u32>(256))?;
    let bytes_1 = ok(contexts[1].upload(&[7u8; 1000]))?;
    match contexts[0].histogram_into(&bytes_1, &mut out) {
        Err(Error::WrongDevice {
            expected: 0,
            found: 1,
        }) => {}
        other => {
            return Err(format!(
                "device 1's samples on device 0 gave {:?}",
                other.map(|_| ())
            )
            .into());
        }
    }
    let on_0 = ok(contexts[0].upload(&[2u32; 100]))?;
    if ok(contexts[0].sum(&on_0))? != 200 {
        return Err("device 0 after the refusals".into());
    }
    Ok(())
}

/// `with_stream` asks the driver whose a stream is: one of another CUDA
/// context of the device is refused before any launch (its work could not
/// reach the library's memory), one of the primary context is taken.
fn foreign_stream(ctx: &Context) -> Result<(), Failed> {
    use cust::context::legacy::{Context as Created, ContextFlags, ContextStack};
    use cust::stream::{Stream, StreamFlags};
    let err = |e: cust::error::CudaError| -> Failed { e.to_string().into() };
    let device = cust::device::Device::get_device(ctx.info().ordinal).map_err(err)?;
    // A context of its own (cuCtxCreate), current until popped.
    let created = Created::create_and_push(ContextFlags::empty(), device).map_err(err)?;
    let theirs = Stream::new(StreamFlags::NON_BLOCKING, None).map_err(err)?;
    ContextStack::pop().map_err(err)?;
    match ctx.with_stream(theirs) {
        Err(Error::InvalidArgument(m)) if m.contains("another CUDA context") => {
            eprintln!("  refused: {m}")
        }
        other => {
            return Err(format!("a stream of another context gave {:?}", other.map(|_| ())).into());
        }
    }
    drop(created);
    ok(ctx.bind())?;
    let mine = Stream::new(StreamFlags::NON_BLOCKING, None).map_err(err)?;
    let queue = ok(ctx.with_stream(mine))?;
    let x = ok(queue.upload(&[2u32; 1001]))?;
    let sum = ok(queue.sum(&x))?;
    ensure(sum == 2002, || {
        format!("a sum on a stream of the primary context: {sum}")
    })
}

/// A stream of another GPU is refused as memory of one is.
fn stream_of_another_device(contexts: Vec<Context>) -> Result<(), Failed> {
    use cust::stream::{Stream, StreamFlags};
    ok(contexts[1].bind())?;
    let theirs = Stream::new(StreamFlags::NON_BLOCKING, None)
        .map_err(|e| -> Failed { e.to_string().into() })?;
    match contexts[0].with_stream(theirs) {
        Err(Error::WrongDevice {
            expected: 0,
            found: 1,
        }) => Ok(()),
        other => Err(format!("device 1's stream on device 0 gave {:?}", other.map(|_| ())).into()),
    }
}

/// A queue dropped in a callback of another stream while its product
/// runs: the drop waits for the product (the driver allows that wait from
/// a callback; where a wait fails, the queue leaks its stream and scratch
/// rather than count its work finished), so the memory the product writes
/// is not freed under it and the next allocation keeps what is written
/// to it. (A drop in a callback of the queue's own stream cannot be
/// tested: its wait for the stream never returns.)
fn dropped_in_a_callback(ctx: &Context) -> Result<(), Failed> {
    let err = |e: cust::error::CudaError| -> Failed { e.to_string().into() };
    // Long enough to be running when the callback drops the queue.
    let n = 8192;
    let mut a = ok(ctx.alloc::<f32>(n * n))?;
    ok(ctx.fill(&mut a, 1.0))?;
    let mut c = ok(ctx.alloc::<f32>(n * n))?;
    let queue = ok(ctx.new_stream())?;
    let square = ok(Matrix::new(&a, n, n))?;
    queue
        .gemm_into(
            &Gemm::new(n, n, n),
            1.0,
            &square,
            &square,
            0.0,
            &mut ok(MatrixMut::new(&mut c, n, n))?,
        )
        .map_err(|e| -> Failed { e.to_string().into() })?
        .detach();
    let other = ok(ctx.new_stream())?;
    let (done, dropped) = std::sync::mpsc::channel();
    // SAFETY: the callback owns what it uses ('static); it drops a
    // `Context` in a callback on purpose, the case under test, which
    // `Context::stream`'s contract forbids.
    let stream = unsafe { other.stream() }.ok_or("a new queue owns its stream")?;
    stream
        .add_callback(Box::new(move || {
            drop(queue);
            let _ = done.send(());
        }))
        .map_err(err)?;
    dropped
        .recv_timeout(Duration::from_secs(60))
        .map_err(|e| -> Failed { format!("the callback did not drop the queue: {e}").into() })?;
    drop(c);
    let mut next = ok(ctx.alloc::<f32>(n * n))?;
    ok(ctx.fill(&mut next, 5.0))?;
    ok(ctx.synchronize())?;
    std::thread::sleep(Duration::from_millis(100));
    let got = ok(next.to_vec())?;
    match got.iter().position(|&v| v != 5.0) {
        None => Ok(()),
        Some(i) => Err(format!(
            "element {i} of the next allocation is {} (the dropped queue's product wrote it)",
            got[i]
        )
        .into()),
    }
}
