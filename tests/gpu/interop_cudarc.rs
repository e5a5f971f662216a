//! `cudarc` and the library on one device (the `cudarc` feature): slices
//! written by one and read by the other in both directions, on cudarc's
//! streams and the library's queues, in turn; slices and streams of
//! another device refused; a slice refused by a capture.

use crate::common::{ensure, gpu_trial, multi_gpu_trial, ok};
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DriverError};
use libtest_mimic::{Failed, Trial};
use std::sync::Arc;
use warpspeed::reduce::{Op, ReduceVariant};
use warpspeed::{Context, DeviceRead, DeviceWrite, Error};

pub fn trials(trials: &mut Vec<Trial>) {
    trials.push(gpu_trial("interop::cudarc::into_the_library", into_library));
    trials.push(gpu_trial(
        "interop::cudarc::out_of_the_library",
        out_of_library,
    ));
    trials.push(gpu_trial("interop::cudarc::in_turn", in_turn));
    trials.push(gpu_trial("interop::cudarc::not_captured", not_captured));
    trials.push(gpu_trial(
        "interop::cudarc::one_slice_twice_in_a_call",
        one_slice_twice,
    ));
    trials.push(multi_gpu_trial(
        "interop::cudarc::another_device",
        2,
        another_device,
    ));
}

fn cudarc<T>(r: Result<T, DriverError>) -> Result<T, Failed> {
    r.map_err(|e| format!("cudarc: {e:?}").into())
}

/// Two streams of cudarc's context of device `ordinal` (each keeps the
/// context alive).
fn streams(ordinal: usize) -> Result<(Arc<CudaStream>, Arc<CudaStream>), Failed> {
    let theirs = cudarc(CudaContext::new(ordinal))?;
    Ok((cudarc(theirs.new_stream())?, cudarc(theirs.new_stream())?))
}

/// cudarc uploads bytes on its stream; the library histograms and sums
/// them on its own queue; cudarc reads the results back on its stream.
fn into_library(ctx: &Context) -> Result<(), Failed> {
    let (s1, _) = streams(0)?;
    let n = (1 << 22) + 5;
    let host: Vec<u8> = (0..n).map(|i| (i * 31 % 251) as u8).collect();
    let bytes = cudarc(s1.clone_htod(&host))?;
    let mut counts: CudaSlice<u32> = cudarc(s1.alloc_zeros(256))?;
    ok(ctx.histogram_into(&bytes, &mut counts))?.detach();
    let words = cudarc(s1.clone_htod(&host.iter().map(|&b| u32::from(b)).collect::<Vec<_>>()))?;
    let mut total: CudaSlice<u32> = cudarc(s1.alloc_zeros(1))?;
    ok(ctx.reduce_into(Op::Sum, ReduceVariant::DEFAULT, &words, &mut total))?.detach();
    let got = cudarc(s1.clone_dtoh(&counts))?;
    let mut expected = vec![0u32; 256];
    for &b in &host {
        expected[usize::from(b)] += 1;
    }
    ensure(got == expected, || "cudarc read other counts".into())?;
    let sum: u32 = host.iter().map(|&b| u32::from(b)).sum();
    ensure(cudarc(s1.clone_dtoh(&total))? == [sum], || {
        "cudarc read another sum".into()
    })
}

/// The library writes a slice on a queue over cudarc's second stream;
/// cudarc copies it on its first; the library sums the copy on its own
/// queue; cudarc reads the sum.
fn out_of_library(ctx: &Context) -> Result<(), Failed> {
    let (s1, s2) = streams(0)?;
    let n = 1 << 24;
    let queue = ok(ctx.with_cudarc_stream(&s2))?;
    let mut a: CudaSlice<u32> = cudarc(s1.alloc_zeros(n))?;
    let mut b: CudaSlice<u32> = cudarc(s1.alloc_zeros(n))?;
    let mut total: CudaSlice<u32> = cudarc(s1.alloc_zeros(1))?;
    ok(queue.fill(&mut a, 5))?;
    cudarc(s1.memcpy_dtod(&a, &mut b))?;
    ok(ctx.reduce_into(Op::Sum, ReduceVariant::DEFAULT, &b, &mut total))?.detach();
    ensure(cudarc(s1.clone_dtoh(&total))? == [5 * n as u32], || {
        "cudarc read another sum".into()
    })?;
    ensure(queue.cu_stream() == s2.cu_stream().cast(), || {
        "the queue is not on cudarc's stream".into()
    })
}

/// One slice written in turn by cudarc (on its stream) and by the library
/// (on its queue), each reading the other's last write.
fn in_turn(ctx: &Context) -> Result<(), Failed> {
    let (s1, _) = streams(0)?;
    let n = 1 << 22;
    let mut x: CudaSlice<u32> = cudarc(s1.alloc_zeros(n))?;
    let mut y: CudaSlice<u32> = cudarc(s1.alloc_zeros(n))?;
    let mut total: CudaSlice<u32> = cudarc(s1.alloc_zeros(1))?;
    for turn in 1..=20u32 {
        // cudarc writes x, the library reads it into y and sums y.
        cudarc(s1.memcpy_htod(&vec![turn; n], &mut x))?;
        ok(ctx.copy(&x, &mut y))?;
        ok(ctx.reduce_into(Op::Sum, ReduceVariant::DEFAULT, &y, &mut total))?.detach();
        // The library writes x again; cudarc must read the new values.
        ok(ctx.fill(&mut x, turn + 100))?;
        let read = cudarc(s1.clone_dtoh(&x))?;
        ensure(read.iter().all(|&v| v == turn + 100), || {
            format!("turn {turn}: cudarc read a stale x")
        })?;
        let sum = cudarc(s1.clone_dtoh(&total))?;
        ensure(sum == [turn.wrapping_mul(n as u32)], || {
            format!("turn {turn}: the sum {sum:?}")
        })?;
    }
    Ok(())
}

fn not_captured(ctx: &Context) -> Result<(), Failed> {
    let (s1, _) = streams(0)?;
    let x: CudaSlice<u32> = cudarc(s1.clone_htod(&[1u32, 2, 3]))?;
    let mut total = ok(ctx.zeros::<u32>(1))?;
    let captured = ctx.capture(|q| {
        q.reduce_into(Op::Sum, ReduceVariant::DEFAULT, &x, &mut total)
            .map(drop)
    });
    ensure(matches!(captured, Err(Error::InCapture { .. })), || {
        format!("a capture of a cudarc slice gave {:?}", captured.map(drop))
    })?;
    ok(ctx.reduce_into(Op::Sum, ReduceVariant::DEFAULT, &x, &mut total))?.detach();
    ensure(ok(total.to_vec())? == [6], || {
        "the sum after the refusal".into()
    })
}

/// cudarc's write protocol takes a slice exclusively: a call that writes
/// one half of a slice and reads the other is refused before any launch;
/// reading both halves is not.
fn one_slice_twice(ctx: &Context) -> Result<(), Failed> {
    let (s1, _) = streams(0)?;
    let mut x: CudaSlice<u32> = cudarc(s1.clone_htod(&[1u32, 2, 3, 4]))?;
    let mut whole = x.view_mut();
    let (low, mut high) = ok(whole.reborrow().split_at_mut(2))?;
    let refused = ctx.copy(&low, &mut high);
    ensure(matches!(refused, Err(Error::InvalidArgument(_))), || {
        format!("a copy between two halves of one cudarc slice gave {refused:?}")
    })?;
    let (low, high) = ok(whole.view().split_at(2))?;
    let mut sums = ok(ctx.zeros::<u32>(2))?;
    let (mut first, mut second) = ok(sums.split_at_mut(1))?;
    ok(ctx.reduce_into(Op::Sum, ReduceVariant::DEFAULT, &low, &mut first))?.detach();
    ok(ctx.reduce_into(Op::Sum, ReduceVariant::DEFAULT, &high, &mut second))?.detach();
    ensure(ok(sums.to_vec())? == [3, 7], || "the halves' sums".into())
}

fn another_device(contexts: Vec<Context>) -> Result<(), Failed> {
    let (s1, _) = streams(1)?;
    let x: CudaSlice<u32> = cudarc(s1.clone_htod(&[1u32, 2, 3]))?;
    let mut total = ok(contexts[0].zeros::<u32>(1))?;
    let refused = contexts[0].reduce_into(Op::Sum, ReduceVariant::DEFAULT, &x, &mut total);
    ensure(
        matches!(
            refused,
            Err(Error::WrongDevice {
                expected: 0,
                found: 1
            })
        ),
        || format!("a slice of device 1 gave {:?}", refused.map(drop)),
    )?;
    let queue = contexts[0].with_cudarc_stream(&s1);
    ensure(
        matches!(
            queue,
            Err(Error::WrongDevice {
                expected: 0,
                found: 1
            })
        ),
        || format!("a stream of device 1 gave {:?}", queue.map(drop)),
    )
}
