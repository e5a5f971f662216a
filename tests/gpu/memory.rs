//! The buffer and view API: allocation without zeroing, fills of every
//! element size, splits, reads through writable views, lengths, matrices
//! over temporary views, and the shape error of a transposed operand; at
//! sizes 0, 1, odd, and past 2^31 elements.

use crate::common::{
    TWO_31, download, ensure, expect_invalid, gpu_trial, ok, same, sized_trial, upload, windows,
};
use libtest_mimic::{Failed, Trial};
use warpspeed::gemm::Gemm;
use warpspeed::reduce::{Op, ReduceVariant};
use warpspeed::{Context, DeviceRead, Error, Matrix, MatrixMut, Pod};

/// The small sizes every trial runs: empty, one, two, odd, and a million
/// and three (more than one block of every memset).
const SIZES: [usize; 5] = [0, 1, 2, 3, 1_000_003];

pub fn trials(trials: &mut Vec<Trial>) {
    for n in SIZES {
        trials.push(gpu_trial(format!("memory::alloc::{n}"), move |ctx| {
            alloc(ctx, n)
        }));
        trials.push(gpu_trial(format!("memory::fill::{n}"), move |ctx| {
            fills(ctx, n)
        }));
        trials.push(gpu_trial(format!("memory::split_at::{n}"), move |ctx| {
            split(ctx, n)
        }));
        trials.push(gpu_trial(
            format!("memory::view_mut_reads::{n}"),
            move |ctx| view_mut_reads(ctx, n),
        ));
    }
    trials.push(sized_trial(
        "memory::alloc_and_fill_bytes::past_2^31",
        TWO_31 + 5,
        |ctx| bytes_past_2_31(ctx, TWO_31 + 5),
    ));
    trials.push(sized_trial(
        "memory::fill_u64::past_2^31",
        TWO_31 + 3,
        |ctx| u64_past_2_31(ctx, TWO_31 + 3),
    ));
    trials.push(sized_trial(
        "memory::split_at_mut::past_2^31",
        2 * (TWO_31 + 1),
        |ctx| split_past_2_31(ctx, TWO_31 + 1),
    ));
    trials.push(gpu_trial("memory::len_of_every_kind", lengths));
    trials.push(gpu_trial(
        "memory::matrix_over_a_temporary_view",
        matrix_over_temporary,
    ));
    trials.push(gpu_trial(
        "memory::a_transposed_operand_is_named",
        transposed_operand,
    ));
}

/// An allocation that is not zeroed, written whole by a copy, reads back
/// what was written.
fn alloc(ctx: &Context, n: usize) -> Result<(), Failed> {
    let host: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761))
        .collect();
    let mut buffer = ok(ctx.alloc::<u32>(n))?;
    ensure(buffer.len() == n, || {
        format!("alloc({n}) has {}", buffer.len())
    })?;
    ok(ctx.copy_from_host(&host, &mut buffer))?;
    same(
        format!("alloc({n}) element"),
        &download(ctx, &buffer)?,
        &host,
    )
}

/// Checks `fill` of `value` into the elements `1..n - 1` of a poisoned
/// buffer of `n + 2`: the range is filled, its neighbours are untouched
/// (the strided 8-byte fill must stay inside the view).
fn fill_one<T: Pod + PartialEq + std::fmt::Debug>(
    ctx: &Context,
    n: usize,
    value: T,
    poison: T,
) -> Result<(), Failed> {
    let mut buffer = upload(ctx, &vec![poison; n + 2])?;
    let mut inside = ok(buffer.slice_mut(1..n + 1))?;
    ok(ctx.fill(&mut inside, value))?;
    let mut want = vec![value; n + 2];
    (want[0], want[n + 1]) = (poison, poison);
    same(
        format!(
            "fill of {n} {} with {value:?}, element",
            std::any::type_name::<T>()
        ),
        &download(ctx, &buffer)?,
        &want,
    )
}

/// Fills of every element size, 8-byte ones with equal and with different
/// halves.
fn fills(ctx: &Context, n: usize) -> Result<(), Failed> {
    fill_one(ctx, n, 0xa5u8, 0)?;
    fill_one(ctx, n, 0xbeefu16, 0)?;
    fill_one(ctx, n, -3i32, 0)?;
    fill_one(ctx, n, 0.25f32, 0.0)?;
    fill_one(ctx, n, 0x0123_4567_89ab_cdefu64, 0)?; // halves differ
    fill_one(ctx, n, 0x1111_2222_1111_2222u64, 0)?; // halves equal
    fill_one(ctx, n, -5i64, 0)?;
    fill_one(ctx, n, -0.1f64, 7.0)?;
    fill_one(ctx, n, f64::NEG_INFINITY, 0.0)
}

/// A buffer split in two: one half copied into the other, and reduced
/// into it, both in one call each (a read and a write of one buffer);
/// each half read back through its writable view; a split past the end is
/// an error.
fn split(ctx: &Context, n: usize) -> Result<(), Failed> {
    let host: Vec<u32> = (0..2 * n as u32).map(|i| i * 7 + 1).collect();
    let mut buffer = upload(ctx, &host)?;
    {
        let (left, mut right) = ok(buffer.split_at_mut(n))?;
        ensure(left.len() == n && right.len() == n, || {
            format!("split of {} at {n}", 2 * n)
        })?;
        ok(ctx.copy(&left, &mut right))?;
        same(
            format!("split {n}: right half"),
            &ok(right.to_vec())?,
            &host[..n],
        )?;
        same(
            format!("split {n}: left half"),
            &ok(left.to_vec())?,
            &host[..n],
        )?;
        if n > 0 {
            let mut slot = ok(right.slice_mut(..1))?;
            ok(ctx.reduce_into(Op::Sum, ReduceVariant::DEFAULT, &left, &mut slot))?.wait()?;
            let want = host[..n].iter().fold(0u32, |a, &b| a.wrapping_add(b));
            ensure(ok(slot.to_vec())? == [want], || format!("split {n}: sum"))?;
        }
    }
    expect_invalid(
        buffer.split_at_mut(2 * n + 1).map(|_| ()),
        "a split past the end",
    )?;
    let (a, b) = ok(buffer.split_at(0))?;
    ensure(a.is_empty() && b.len() == 2 * n, || "split at 0".into())?;
    let (a, b) = ok(ok(buffer.slice(..))?.split_at(2 * n))?;
    ensure(a.len() == 2 * n && b.is_empty(), || {
        "split at the end".into()
    })?;
    expect_invalid(
        ok(buffer.slice(..))?.split_at(2 * n + 1),
        "a view split past the end",
    )
}

/// A writable view reads back like a read-only one; a host slice of
/// another length is refused.
fn view_mut_reads(ctx: &Context, n: usize) -> Result<(), Failed> {
    let host: Vec<f32> = (0..n).map(|i| i as f32 - 0.5).collect();
    let mut buffer = upload(ctx, &host)?;
    let mut view = ok(buffer.slice_mut(..))?;
    ok(ctx.fill(&mut ok(view.slice_mut(n / 2..))?, 9.0))?;
    let mut want = host.clone();
    want[n / 2..].fill(9.0);
    same(
        format!("ViewMut::to_vec of {n}"),
        &ok(view.to_vec())?,
        &want,
    )?;
    let mut back = vec![0.0f32; n];
    ok(view.copy_to(&mut back))?;
    same(format!("ViewMut::copy_to of {n}"), &back, &want)?;
    match view.copy_to(&mut vec![0.0; n + 1]) {
        Err(Error::LengthMismatch { .. }) => Ok(()),
        other => Err(format!("a host slice one too long gave {other:?}").into()),
    }
}

/// Checks the windows of `view` (start, around 2^31 and 2^32, end) hold
/// `want`.
fn windows_hold<T: Pod + PartialEq + std::fmt::Debug>(
    view: &impl DeviceRead<Elem = T>,
    want: T,
    what: &str,
) -> Result<(), Failed> {
    let n = view.len();
    for w in windows(n, &[TWO_31, 2 * TWO_31]) {
        let got = ok(ok(view.view().slice(w.clone()))?.to_vec())?;
        same(
            format!("{what}, window {w:?}, element"),
            &got,
            &vec![want; w.len()],
        )?;
    }
    Ok(())
}

/// Past 2^31 bytes: an allocation without zeroing, filled, holds the value
/// everywhere (its sum, and its windows).
fn bytes_past_2_31(ctx: &Context, n: usize) -> Result<(), Failed> {
    let mut buffer = ok(ctx.alloc::<u8>(n))?;
    ok(ctx.fill(&mut buffer, 3u8))?;
    windows_hold(&buffer, 3u8, "bytes past 2^31")?;
    // Four bytes of 3 a word: the words' sum (n is 2^31 + 5: the last
    // byte is left out of the words).
    let words = ok(ok(buffer.slice(..n / 4 * 4))?.cast::<u32>())?;
    let sum = ok(ctx.sum(&words))?;
    let want = ((n / 4) as u32).wrapping_mul(0x0303_0303);
    ensure(sum == want, || {
        format!("sum of the words: {sum:#x}, want {want:#x}")
    })
}

/// Past 2^31 8-byte elements (16 GiB): a fill with different halves, seen
/// as words, has the right smallest and largest word and windows.
fn u64_past_2_31(ctx: &Context, n: usize) -> Result<(), Failed> {
    let value = 0x0000_0007_0000_0005u64;
    let mut buffer = ok(ctx.alloc::<u64>(n))?;
    ok(ctx.fill(&mut buffer, value))?;
    windows_hold(&buffer, value, "u64 fill past 2^31")?;
    let words = ok(buffer.view().cast::<u32>())?;
    let (min, max) = (ok(ctx.min(&words))?, ok(ctx.max(&words))?);
    ensure(min == Some(5) && max == Some(7), || {
        format!("words of the fill: min {min:?}, max {max:?}")
    })
}

/// Past 2^31 bytes on each side of a split: one half filled and copied
/// into the other.
fn split_past_2_31(ctx: &Context, half: usize) -> Result<(), Failed> {
    let mut buffer = ok(ctx.alloc::<u8>(2 * half))?;
    let (mut left, mut right) = ok(buffer.split_at_mut(half))?;
    ok(ctx.fill(&mut left, 0x5a))?;
    ok(ctx.fill(&mut right, 0))?;
    ok(ctx.copy(&left, &mut right))?;
    windows_hold(&right, 0x5au8, "the right half past 2^31")?;
    windows_hold(&left, 0x5au8, "the left half past 2^31")
}

/// `len` through the trait, for every kind of memory.
fn lengths(ctx: &Context) -> Result<(), Failed> {
    fn len_of(x: &impl DeviceRead<Elem = u16>) -> usize {
        x.len()
    }
    let mut buffer = ok(ctx.zeros::<u16>(77))?;
    ensure(len_of(&buffer) == 77, || "a buffer's len".into())?;
    ensure(len_of(&ok(buffer.slice(5..))?) == 72, || {
        "a view's len".into()
    })?;
    let view = ok(buffer.slice_mut(..10))?;
    ensure(len_of(&view) == 10 && !DeviceRead::is_empty(&view), || {
        "a writable view's len".into()
    })?;
    Ok(())
}

/// A matrix made over a view made in the same statement lives on (it
/// borrows the buffer, not the view), and transposes right.
fn matrix_over_temporary(ctx: &Context) -> Result<(), Failed> {
    let host: Vec<u32> = (0..13).collect();
    let src = upload(ctx, &host)?;
    let mut dst = ok(ctx.zeros::<u32>(8))?;
    let matrix = ok(Matrix::new(&ok(src.slice(7..))?, 3, 2))?;
    let mut out = ok(MatrixMut::new(ok(dst.slice_mut(2..))?, 2, 3))?;
    ok(ctx.transpose_into(&matrix, &mut out))?.wait()?;
    // [[7, 8, 9], [10, 11, 12]] transposed, after two untouched zeros.
    same(
        "the transposed slice, element".into(),
        &download(ctx, &dst)?,
        &[0, 0, 7, 10, 8, 11, 9, 12],
    )
}

/// An `m × k` operand given as `Matrix::new(data, m, k)` (rows first, the
/// natural mistake) is refused with an error that names the order.
fn transposed_operand(ctx: &Context) -> Result<(), Failed> {
    let (m, n, k) = (2, 3, 5);
    let a = ok(ctx.zeros::<f32>(m * k))?;
    let b = ok(ctx.zeros::<f32>(k * n))?;
    let mut c = ok(ctx.zeros::<f32>(m * n))?;
    let got = ctx.gemm_into(
        &Gemm::new(m, n, k),
        1.0,
        &ok(Matrix::new(&a, m, k))?,
        &ok(Matrix::new(&b, n, k))?,
        0.0,
        &mut ok(MatrixMut::new(&mut c, n, m))?,
    );
    match got {
        Err(e @ Error::ShapeMismatch { .. }) => {
            let text = e.to_string();
            ensure(text.contains("wide") && text.contains("transposed"), || {
                format!("the message does not name the order: {text}")
            })?;
            eprintln!("  refused: {text}");
            Ok(())
        }
        other => Err(format!("a transposed A gave {:?}", other.map(|_| ())).into()),
    }
}
