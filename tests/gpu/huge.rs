//! Inputs beyond 2^31 elements, one test per family (the histogram's is
//! `histogram::wraps_past_2_32_in_one_bin`): byte inputs past 2^32 bytes,
//! 4-byte ones past 2^31 elements (2^33 bytes), so that an index or a byte
//! offset kept in 32 bits anywhere, on the host or in a kernel, lands on
//! the wrong element and the check sees it. Every step of each ladder
//! runs (the tensor-core ones where the loaded PTX has them).
//!
//! The values are small integers wherever arithmetic is involved, so every
//! result is exact and compared exactly. Where a full check would take the
//! CPU seconds per step, the check covers whole windows where 32-bit
//! arithmetic would break: the start, around element 2^31 (and 2^32), and
//! the end.
//!
//! They need up to 18 GB of device memory (and as much host memory) and are skipped under
//! compute-sanitizer (`WARPSPEED_TEST_MAX_N`).

use crate::common::*;
use cust::memory::{CopyDestination, DeviceBuffer, DeviceCopy, DeviceSlice};
use libtest_mimic::{Failed, Trial};
use std::ops::Range;
use warpspeed::conv1d::Conv1dVariant;
use warpspeed::gemm::{Gemm, GemmVariant, Packing};
use warpspeed::histogram::{EvenBins, HistogramVariant};
use warpspeed::image_sums::{ColumnSumVariant, RowSumVariant};
use warpspeed::reduce::{Op, ReduceVariant};
use warpspeed::rng::{Generator, uniform_of};
use warpspeed::transpose::TransposeVariant;
use warpspeed::{Context, Matrix, MatrixMut};

/// 2^31.
const TWO_31: usize = 1 << 31;
/// Elements each checked window holds.
const WINDOW: usize = 1 << 16;

/// The windows of `0..n` a check covers: the start, around each of
/// `marks`, and the end (clipped to `0..n`, possibly overlapping).
fn windows(n: usize, marks: &[usize]) -> Vec<Range<usize>> {
    let mut out = vec![0..WINDOW.min(n), n.saturating_sub(WINDOW)..n];
    for &m in marks {
        if m < n {
            out.push(m.saturating_sub(WINDOW / 2)..(m + WINDOW / 2).min(n));
        }
    }
    out
}

/// `Err` naming the first element where `got` differs from `want`.
fn same<T: PartialEq + std::fmt::Debug>(what: String, got: &[T], want: &[T]) -> Result<(), Failed> {
    match got.iter().zip(want).position(|(g, w)| g != w) {
        None => Ok(()),
        Some(i) => Err(format!("{what} {i}: {:?}, want {:?}", got[i], want[i]).into()),
    }
}

fn cuda<T>(r: cust::error::CudaResult<T>) -> Result<T, Failed> {
    r.map_err(|e| format!("{e}").into())
}

/// A device buffer of `n` 4-byte elements, each of the bits `bits` (a
/// memset: no host copy of the size of the buffer).
fn filled<T: DeviceCopy + cust::memory::bytemuck::Pod>(
    n: usize,
    bits: u32,
) -> Result<DeviceBuffer<T>, Failed> {
    const { assert!(size_of::<T>() == 4) };
    // SAFETY: `T` is 4 bytes of plain data (`DeviceCopy`) and every element
    // is written by the memset before any read.
    let mut buffer = cuda(unsafe { DeviceBuffer::<T>::uninitialized(n) })?;
    cuda(buffer.set_32(bits))?;
    Ok(buffer)
}

/// A device buffer of `n` bytes, each `value`.
fn filled_u8(n: usize, value: u8) -> Result<DeviceBuffer<u8>, Failed> {
    // SAFETY: every byte is written by the memset before any read.
    let mut buffer = cuda(unsafe { DeviceBuffer::<u8>::uninitialized(n) })?;
    cuda(buffer.set_8(value))?;
    Ok(buffer)
}

/// Writes `values` at element `at` of `buffer`.
fn put<T: DeviceCopy>(buffer: &mut DeviceSlice<T>, at: usize, values: &[T]) -> Result<(), Failed> {
    cuda(buffer.index(at..at + values.len()).copy_from(values))
}

fn reduce(ctx: &Context) -> Result<(), Failed> {
    // 2^31 + 7 ones, with a 0 past 2^31 (the minimum) and a 9 in the last
    // element (the maximum): sum 2^31 + 7 − 1 + 8, below 2^32.
    let n = TWO_31 + 7;
    let mut x = filled::<u32>(n, 1)?;
    put(&mut x, TWO_31 + 3, &[0])?;
    put(&mut x, n - 1, &[9])?;
    let sum = (n - 1 + 8) as u32;
    for &variant in ReduceVariant::ALL {
        let got = ok(ctx.reduce(Op::Sum, variant, &x))?;
        ensure(got == sum, || format!("{variant:?}: sum {got}, want {sum}"))?;
    }
    ensure(ok(ctx.min(&x))? == Some(0), || "min: want 0".into())?;
    ensure(ok(ctx.max(&x))? == Some(9), || "max: want 9".into())
}

/// The byte at row `r`, column `c` of the transpose's and the image sums'
/// inputs: changes along both axes, so a misplaced element shows.
fn byte_at(r: usize, c: usize) -> u8 {
    (r.wrapping_mul(131) ^ c.wrapping_mul(7) ^ (r >> 8) ^ (c >> 9)) as u8
}

fn transpose(ctx: &Context) -> Result<(), Failed> {
    // Bytes: 65 537 × 65 539, 2^32 + 2^17 + … elements, neither side a
    // multiple of any tile, rows padded to 65 540 bytes (4-byte aligned,
    // which step 4 needs). The checked output rows (each a column of the
    // input, so it reads every input row, past 2^32 bytes) and the output
    // bytes around 2^31 and 2^32, whose padding must keep its poison.
    let (w, h, pitch) = (65_539, 65_537, 65_540);
    let host: Vec<u8> = (0..pitch * h)
        .map(|e| {
            if e % pitch < w {
                byte_at(e / pitch, e % pitch)
            } else {
                0
            }
        })
        .collect();
    let src = upload(&host)?;
    drop(host);
    let mut dst = filled_u8(pitch * w, 0xa5)?;
    let rows_checked = [0, 1, w / 2, w - 2, w - 1];
    for &variant in TransposeVariant::ALL.iter().filter(|v| v.supports(1)) {
        cuda(dst.set_8(0xa5))?;
        let s = ok(Matrix::with_pitch(&src, w, h, pitch))?;
        let mut d = ok(MatrixMut::with_pitch(&mut dst, h, w, pitch))?;
        ok(ctx
            .transpose_into_with(variant, &s, &mut d)
            .and_then(|p| p.wait()))?;
        // Output element (j, i) = input (i, j); the padding keeps 0xa5.
        let want = |e: usize| {
            let (j, i) = (e / pitch, e % pitch);
            if i < h { byte_at(i, j) } else { 0xa5 }
        };
        for &j in &rows_checked {
            let row = download(&dst.index(j * pitch..(j + 1) * pitch))?;
            if let Some(i) = (0..pitch).find(|&i| row[i] != want(j * pitch + i)) {
                return Err(format!("{variant:?}: output ({j}, {i}) is {}", row[i]).into());
            }
        }
        for range in windows(pitch * w, &[TWO_31, 1 << 32]) {
            let got = download(&dst.index(range.clone()))?;
            if let Some(e) = range.clone().find(|&e| got[e - range.start] != want(e)) {
                return Err(
                    format!("{variant:?}: output byte {e} is {}", got[e - range.start]).into(),
                );
            }
        }
    }
    // 4-byte elements past 2^31 (2^33 bytes): 46 349 × 46 341, the
    // default step (the vector one), output elements around 2^31.
    drop((src, dst));
    let (w, h) = (46_349, 46_341);
    let host: Vec<u32> = (0..w * h).map(|i| i as u32).collect();
    let src = upload(&host)?;
    drop(host);
    let mut dst = filled::<u32>(w * h, u32::MAX)?;
    let s = ok(Matrix::new(&src, w, h))?;
    let mut d = ok(MatrixMut::new(&mut dst, h, w))?;
    ok(ctx.transpose_into(&s, &mut d).and_then(|p| p.wait()))?;
    for range in windows(w * h, &[TWO_31]) {
        let got = download(&dst.index(range.clone()))?;
        for e in range.clone() {
            // Output (j, i) at e = j·h + i is input (i, j), element i·w + j.
            let (j, i) = (e / h, e % h);
            let want = (i * w + j) as u32;
            ensure(got[e - range.start] == want, || {
                format!(
                    "f32-sized: output element {e} is {}, want {want}",
                    got[e - range.start]
                )
            })?;
        }
    }
    Ok(())
}

fn image_sums(ctx: &Context) -> Result<(), Failed> {
    // A 65 540 × 65 537 image (2^32 + 3·2^16 + … bytes, rows 4-byte
    // aligned for step 2, not a multiple of any strip) of the bytes of
    // [`byte_at`], whose row and column sums the CPU computes in one pass.
    let (w, h) = (65_540, 65_537);
    let mut cols = vec![0u32; w];
    let mut rows = vec![0u32; h];
    let mut host = vec![0u8; w * h];
    for r in 0..h {
        let row = &mut host[r * w..(r + 1) * w];
        for (c, v) in row.iter_mut().enumerate() {
            *v = byte_at(r, c);
            cols[c] += *v as u32;
            rows[r] += *v as u32;
        }
    }
    let image = upload(&host)?;
    drop(host);
    let view = ok(Matrix::new(&image, w, h))?;
    let mut out = poisoned(w, u32::MAX)?;
    for &variant in ColumnSumVariant::ALL {
        ok(ctx
            .column_sums_into_with(variant, &view, &mut out)
            .and_then(|p| p.wait()))?;
        same(format!("{variant:?}, column"), &download(&out)?, &cols)?;
    }
    let mut out = poisoned(h, u32::MAX)?;
    for &variant in RowSumVariant::ALL {
        ok(ctx
            .row_sums_into_with(variant, &view, &mut out)
            .and_then(|p| p.wait()))?;
        same(format!("{variant:?}, row"), &download(&out)?, &rows)?;
    }
    Ok(())
}

fn conv1d(ctx: &Context) -> Result<(), Failed> {
    // 2^31 + 9 samples of `i % 5`, masks of 7 and 127 taps of `1 + j % 3`:
    // every product and sum is a small integer, exact in `f32` and in TF32
    // parts, so every step's output is compared exactly.
    let n = TWO_31 + 9;
    let signal_at = |i: usize| (i % 5) as f32;
    let host: Vec<f32> = (0..n).map(signal_at).collect();
    let signal = upload(&host)?;
    drop(host);
    let mut out = filled::<f32>(n, (-1.0f32).to_bits())?;
    for taps in [7usize, 127] {
        let mask_host: Vec<f32> = (0..taps).map(|j| (1 + j % 3) as f32).collect();
        let mask = upload(&mask_host)?;
        let r = taps / 2;
        let want = |i: usize| -> f32 {
            (0..taps)
                .filter_map(|j| (i + j).checked_sub(r).filter(|&s| s < n))
                .map(|s| signal_at(s) * mask_host[s + r - i])
                .sum()
        };
        for &variant in Conv1dVariant::ALL {
            if !variant.needs().met_by(ctx.info().ptx_target) {
                continue;
            }
            ok(ctx
                .conv1d_into_with(variant, &signal, &mask, &mut out)
                .and_then(|p| p.wait()))?;
            for range in windows(n, &[TWO_31]) {
                let got = download(&out.index(range.clone()))?;
                for i in range.clone() {
                    let w = want(i);
                    ensure(got[i - range.start] == w, || {
                        format!(
                            "{variant:?}, {taps} taps: output {i} is {}, want {w}",
                            got[i - range.start]
                        )
                    })?;
                }
            }
        }
    }
    drop((signal, out));
    // Rows: 32 769 rows of 65 539 samples at a pitch of 65 544 (2^31 +
    // 3·2^16 + … elements), each row on its own; rows checked whole: the
    // first, the two around element 2^31 and the last.
    let (w, rows, pitch) = (65_539, 32_769, 65_544);
    let host: Vec<f32> = (0..rows * pitch)
        .map(|e| signal_at(e % pitch + e / pitch))
        .collect();
    let signal = upload(&host)?;
    drop(host);
    let mut out = filled::<f32>(rows * pitch, (-1.0f32).to_bits())?;
    let mask_host: Vec<f32> = (0..7).map(|j| (1 + j % 3) as f32).collect();
    let mask = upload(&mask_host)?;
    let want = |row: usize, i: usize| -> f32 {
        (0..7)
            .filter_map(|j| (i + j).checked_sub(3).filter(|&s| s < w))
            .map(|s| signal_at(s + row) * mask_host[s + 3 - i])
            .sum()
    };
    for &variant in Conv1dVariant::ALL {
        if !variant.needs().met_by(ctx.info().ptx_target) {
            continue;
        }
        let s = ok(Matrix::with_pitch(&signal, w, rows, pitch))?;
        let mut d = ok(MatrixMut::with_pitch(&mut out, w, rows, pitch))?;
        ok(ctx
            .conv1d_rows_into_with(variant, &s, &mask, &mut d)
            .and_then(|p| p.wait()))?;
        for row in [0, TWO_31 / pitch, TWO_31 / pitch + 1, rows - 1] {
            let got = download(&out.index(row * pitch..row * pitch + w))?;
            if let Some(i) = (0..w).find(|&i| got[i] != want(row, i)) {
                return Err(format!(
                    "{variant:?}, rows: ({row}, {i}) is {}, want {}",
                    got[i],
                    want(row, i)
                )
                .into());
            }
        }
    }
    Ok(())
}

fn histogram(ctx: &Context) -> Result<(), Failed> {
    // 2^31 + 5 `f32` samples (the general path's byte offsets past 2^33):
    // all 1.5 but a 7.25 past 2^31 and a NaN and a 10.0 (outside) at the
    // end, over 10 bins of [0, 10).
    let n = TWO_31 + 5;
    let mut samples = filled::<f32>(n, 1.5f32.to_bits())?;
    put(&mut samples, TWO_31 + 1, &[7.25])?;
    put(&mut samples, n - 2, &[f32::NAN, 10.0])?;
    let bins = ok(EvenBins::new(10, 0.0f32, 10.0))?;
    let mut want = vec![0u32; 10];
    want[1] = (n - 3) as u32;
    want[7] = 1;
    // The CPU step would copy 8 GiB to the host and the global atomics
    // queue 2^31 adds on one address: the other steps.
    for variant in [
        HistogramVariant::SharedPrivatized,
        HistogramVariant::LanePrivate,
    ] {
        let mut out = filled::<u32>(10, 0xdead_beef)?;
        ok(ctx
            .histogram_even_into_with(variant, &samples, &bins, &mut out)
            .and_then(|p| p.wait()))?;
        let got = download(&out)?;
        ensure(got == want, || {
            format!("{variant:?}: {got:?}, want {want:?}")
        })?;
    }
    Ok(())
}

fn rng(ctx: &Context) -> Result<(), Failed> {
    // 2^31 + 5 raw values and uniforms from a position past 2^32, against
    // the CPU twin, bit for bit.
    const SEED: u64 = 0x0bad_5eed_0000_0031;
    let n = TWO_31 + 5;
    let position = (1u64 << 32) + 3;
    let twin = Generator::new(SEED);
    let mut bits = filled::<u32>(n, 0)?;
    let mut generator = Generator::with_offset(SEED, position);
    ok(ctx
        .fill_u32_into(&mut generator, &mut bits)
        .and_then(|p| p.wait()))?;
    ensure(generator.position() == position + n as u64, || {
        format!("position {} after the fill", generator.position())
    })?;
    for range in windows(n, &[TWO_31]) {
        let got = download(&bits.index(range.clone()))?;
        for i in range.clone() {
            let want = twin.value(position + i as u64);
            ensure(got[i - range.start] == want, || {
                format!("u32 {i}: {:#x}, want {want:#x}", got[i - range.start])
            })?;
        }
    }
    drop(bits);
    let mut uniforms = filled::<f32>(n, (-1.0f32).to_bits())?;
    let mut generator = Generator::with_offset(SEED, position);
    ok(ctx
        .fill_uniform_into(&mut generator, &mut uniforms)
        .and_then(|p| p.wait()))?;
    for range in windows(n, &[TWO_31]) {
        let got = download(&uniforms.index(range.clone()))?;
        for i in range.clone() {
            let want = uniform_of(twin.value(position + i as u64));
            ensure(got[i - range.start].to_bits() == want.to_bits(), || {
                format!("uniform {i}: {}, want {want}", got[i - range.start])
            })?;
        }
    }
    Ok(())
}

fn gemm(ctx: &Context) -> Result<(), Failed> {
    // C of 65 537 × 32 769 (2^31 + 3·2^15 + … elements) = A (m × 3) · B
    // (3 × n), small integers, so every step's product is exact (TF32
    // holds them whole). The rows of C checked whole: the first, the two
    // around element 2^31 and the last.
    let (m, n, k) = (65_537, 32_769, 3);
    let a_at = |i: usize, p: usize| ((i * 3 + p) % 7) as f32 - 3.0;
    let b_at = |p: usize, j: usize| ((p * 5 + j) % 11) as f32 - 5.0;
    let a_host: Vec<f32> = (0..m * k).map(|e| a_at(e / k, e % k)).collect();
    let b_host: Vec<f32> = (0..k * n).map(|e| b_at(e / n, e % n)).collect();
    let (a, b) = (upload(&a_host)?, upload(&b_host)?);
    let mut c = filled::<f32>(m * n, f32::NAN.to_bits())?;
    let rows_checked = [0, TWO_31 / n, TWO_31 / n + 1, m - 1];
    for &variant in GemmVariant::ALL {
        if !variant.needs().met_by(ctx.info().ptx_target) {
            continue;
        }
        for packing in [Packing::Never, Packing::Always] {
            let gemm = Gemm::new(m, n, k).variant(variant).packing(packing);
            let (av, bv) = (ok(Matrix::new(&a, k, m))?, ok(Matrix::new(&b, n, k))?);
            let mut cv = ok(MatrixMut::new(&mut c, n, m))?;
            ok(ctx
                .gemm_into(&gemm, 1.0, &av, &bv, 0.0, &mut cv)
                .and_then(|p| p.wait()))?;
            for &i in &rows_checked {
                let got = download(&c.index(i * n..(i + 1) * n))?;
                for (j, &value) in got.iter().enumerate() {
                    let want: f32 = (0..k).map(|p| a_at(i, p) * b_at(p, j)).sum();
                    ensure(value == want, || {
                        format!("{variant:?}, {packing:?}: C({i}, {j}) is {value}, want {want}")
                    })?;
                }
            }
        }
    }
    Ok(())
}

pub fn trials(trials: &mut Vec<Trial>) {
    trials.push(sized_trial("huge::reduce_past_2_31", TWO_31 + 7, reduce));
    trials.push(sized_trial(
        "huge::transpose_past_2_32_bytes",
        65_539 * 65_537,
        transpose,
    ));
    trials.push(sized_trial(
        "huge::image_sums_past_2_32_bytes",
        65_540 * 65_537,
        image_sums,
    ));
    trials.push(sized_trial(
        "huge::conv1d_past_2_31",
        32_769 * 65_544,
        conv1d,
    ));
    trials.push(sized_trial(
        "huge::histogram_f32_past_2_31",
        TWO_31 + 5,
        histogram,
    ));
    trials.push(sized_trial("huge::rng_past_2_31", TWO_31 + 5, rng));
    trials.push(sized_trial("huge::gemm_c_past_2_31", 65_537 * 32_769, gemm));
}
