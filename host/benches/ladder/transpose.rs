//! The transpose ladder on 8192 × 8192 matrices of `u8` and `f32`, against
//! cuBLAS `Sgeam` (f32) and PyTorch's `.t().contiguous()` (there is no
//! library kernel for bytes); and the scaling curve of the f32 transpose
//! from 256² to 16384².

use crate::harness::{Bench, Case, Family, Point, Scaling, device_copies, enqueued, ladder_rows};
use warpspeed::transpose::{self, Transposable, TransposeVariant};
use warpspeed::{Matrix, MatrixMut};

pub const FAMILY: Family = Family {
    name: "transpose",
    run,
};

const SIDE: usize = 8192;

fn run(bench: &mut Bench) -> Result<(), String> {
    run_type::<u8>(bench, "u8", |i| (i * 31 % 251) as u8)?;
    run_type::<f32>(bench, "f32", |i| (i % (1 << 24)) as f32)?;
    scaling(bench)
}

fn run_type<T: Transposable + Copy + Default + AsBits>(
    bench: &mut Bench,
    ty: &'static str,
    value: impl Fn(usize) -> T,
) -> Result<(), String> {
    let n = SIDE * SIDE;
    let host: Vec<T> = (0..n).map(value).collect();
    let bytes = 2.0 * (n * size_of::<T>()) as f64;
    let inputs = device_copies(bench, &host)?;
    let mut dst = bench.ctx.upload(&host).map_err(|e| e.to_string())?;
    let mut peer_cases = vec![format!("transpose:{ty}:{SIDE}:{SIDE}")];
    if ty == "f32" {
        peer_cases.insert(0, format!("geam:f32:{SIDE}:{SIDE}"));
    }
    let peers = bench.peers.measure(&peer_cases);
    let case = format!("{ty} {SIDE}x{SIDE}");
    let applies = |v: TransposeVariant| v.supports(size_of::<T>());
    let rows = ladder_rows(bench, &case, "", applies, |bench, variant| {
        let mut turn = 0;
        let ms = bench.time(|| {
            turn += 1;
            let src =
                Matrix::new(&inputs[turn % inputs.len()], SIDE, SIDE).map_err(|e| e.to_string())?;
            let mut out = MatrixMut::new(&mut dst, SIDE, SIDE).map_err(|e| e.to_string())?;
            enqueued(bench.ctx.transpose_into_with(variant, &src, &mut out))
        })?;
        // Spot-check the timed result: element (x, y) of the transpose.
        let got = dst.to_vec().map_err(|e| e.to_string())?;
        for (x, y) in [(0, 0), (1, 0), (SIDE - 1, 3), (17, SIDE - 2)] {
            if got[x * SIDE + y].as_bits() != host[y * SIDE + x].as_bits() {
                return Err(format!("{variant:?} {ty}: wrong element ({x}, {y})"));
            }
        }
        Ok(ms)
    })?;
    bench.record(
        &format!("transpose {ty}, {SIDE} × {SIDE} (GB/s: read + written)"),
        Case {
            family: "transpose",
            case,
            bytes,
            rows,
            peers: peers.into_iter().map(|p| ("", p)).collect(),
        },
    );
    Ok(())
}

/// The default f32 transpose (`transpose_into`) of square matrices from
/// 256² to 16384² (fewer with `--quick`), against cuBLAS `Sgeam`.
fn scaling(bench: &mut Bench) -> Result<(), String> {
    let sides: Vec<usize> = if bench.quick {
        vec![256, 1024, 4096, 16384]
    } else {
        (8..=14).map(|l| 1usize << l).collect()
    };
    let peer_cases: Vec<String> = sides.iter().map(|s| format!("geam:f32:{s}:{s}")).collect();
    let peer_results = bench.peers.measure(&peer_cases);
    let ours = format!(
        "warpspeed f32 ({})",
        transpose::fastest(size_of::<f32>(), 16).name()
    );
    let mut points = Vec::new();
    let mut unavailable: Vec<(String, String)> = Vec::new();
    for (&side, peer) in sides.iter().zip(peer_results) {
        let host: Vec<f32> = (0..side * side).map(|i| (i % (1 << 24)) as f32).collect();
        let inputs = device_copies(bench, &host)?;
        let mut dst = bench.ctx.upload(&host).map_err(|e| e.to_string())?;
        drop(host);
        let mut turn = 0;
        let timing = bench.time(|| {
            turn += 1;
            let src =
                Matrix::new(&inputs[turn % inputs.len()], side, side).map_err(|e| e.to_string())?;
            let mut out = MatrixMut::new(&mut dst, side, side).map_err(|e| e.to_string())?;
            enqueued(bench.ctx.transpose_into(&src, &mut out))
        })?;
        bench.progress(&format!("transpose scaling f32 {side}²"), timing);
        let ms = timing.ms;
        let bytes = 2.0 * (side * side * 4) as f64;
        points.push(Point {
            series: ours.clone(),
            n: side,
            ms,
            bytes,
        });
        match peer.outcome {
            Ok(ms) => points.push(Point {
                series: peer.name,
                n: side,
                ms,
                bytes,
            }),
            Err(why) => {
                if !unavailable.iter().any(|(s, _)| *s == peer.name) {
                    unavailable.push((peer.name, why));
                }
            }
        }
    }
    bench.record_scaling(Scaling {
        family: "transpose",
        title: "transpose f32".into(),
        axis: "side (n × n)",
        points,
        unavailable,
    });
    Ok(())
}

/// Bit patterns, to compare floats exactly.
trait AsBits {
    fn as_bits(&self) -> u64;
}
impl AsBits for u8 {
    fn as_bits(&self) -> u64 {
        *self as u64
    }
}
impl AsBits for f32 {
    fn as_bits(&self) -> u64 {
        self.to_bits() as u64
    }
}
