//! Random numbers compatible with cuRAND's Philox4_32_10, bit for bit: the
//! generator of lesson 001 (`curand_init`, `curand`, `curand_uniform`,
//! `curand_normal`, `curand_log_normal`) as a CPU generator, from the same
//! `no_std` source the kernels use ([`warpspeed_gpu::rng`]).
//!
//! ```
//! use warpspeed::rng::Philox;
//! // curand_init(1234, 0, 0, &state); curand(&state); curand_uniform(&state)
//! let mut philox = Philox::new(1234, 0, 0);
//! assert_eq!(philox.next_u32(), 0x2090_b348);
//! let u = philox.uniform(); // in (0, 1]
//! assert!(u > 0.0 && u <= 1.0);
//! ```
//!
//! Integers and uniforms equal cuRAND's exactly (tested against vectors
//! made by cuRAND itself, `tests/fixtures/curand/`). Normals and
//! log-normals come from the same Box–Muller pairs, but cuRAND takes their
//! sine and cosine from the GPU's approximate instructions, so the CPU's
//! values differ by up to [`NORMAL_CPU_TOLERANCE`] times the pair's radius
//! (see [`warpspeed_gpu::rng`]). Poisson counts equal cuRAND's for
//! `λ < 64` and `λ > 4000`, and in the fixtures between too (cuRAND uses
//! approximate instructions there; see [`Philox::poisson`]). `Philox` implements `rand_core`'s
//! `RngCore` (`next_u32` is `curand`) and `SeedableRng`.

pub use warpspeed_gpu::rng::{
    NORMAL_CPU_TOLERANCE, PHILOX_M, PHILOX_W, Philox, box_muller, box_muller_f64, philox4x32_10,
    uniform_f64_of, uniform_of,
};

#[cfg(test)]
mod tests {
    //! The CPU twin against cuRAND's own output (the fixture and the CUDA
    //! program that made it are in `tests/fixtures/curand/`).
    use super::*;

    const GOLDEN: &str = include_str!("../../tests/fixtures/curand/philox.txt");

    /// One device-API record: what, `(seed, subsequence, offset)`, the
    /// parameters, the 16 words.
    struct Record {
        what: String,
        triple: (u64, u64, u64),
        /// The parameters (`λ`, or mean and deviation), if any.
        params: Vec<f64>,
        words: Vec<u32>,
    }

    /// A number in C's `%a` form (`0x1.cp+1`).
    fn hex_float(text: &str) -> f64 {
        let (negative, text) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let body = text.strip_prefix("0x").expect("%a starts with 0x");
        let (mantissa, exponent) = body.split_once('p').expect("%a has an exponent");
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let mut value = u64::from_str_radix(int, 16).unwrap() as f64;
        for (i, digit) in frac.chars().enumerate() {
            value += digit.to_digit(16).unwrap() as f64 * 16f64.powi(-(i as i32 + 1));
        }
        let value = value * 2f64.powi(exponent.parse().unwrap());
        if negative { -value } else { value }
    }

    fn records() -> Vec<Record> {
        GOLDEN
            .lines()
            .filter(|l| !l.starts_with('#') && !l.starts_with("host_"))
            .map(|line| {
                let (head, values) = line.split_once(':').expect("a record has a colon");
                let mut parts = head.split_whitespace();
                let what = parts.next().unwrap().to_string();
                let mut number = || parts.next().unwrap().parse::<u64>().unwrap();
                let triple = (number(), number(), number());
                let params = parts.map(hex_float).collect();
                let words = values
                    .split_whitespace()
                    .map(|w| u32::from_str_radix(w, 16).unwrap())
                    .collect();
                Record {
                    what,
                    triple,
                    params,
                    words,
                }
            })
            .collect()
    }

    fn philox(r: &Record) -> Philox {
        Philox::new(r.triple.0, r.triple.1, r.triple.2)
    }

    fn f32s(words: &[u32]) -> Vec<f32> {
        words.iter().map(|&w| f32::from_bits(w)).collect()
    }

    fn f64s(words: &[u32]) -> Vec<f64> {
        words
            .chunks(2)
            .map(|w| f64::from_bits(w[0] as u64 | (w[1] as u64) << 32))
            .collect()
    }

    fn of<'a>(all: &'a [Record], what: &str) -> Vec<&'a Record> {
        let found: Vec<_> = all.iter().filter(|r| r.what == what).collect();
        assert!(found.len() >= 8, "{what}: {} records", found.len());
        found
    }

    #[test]
    fn integers_and_uniforms_equal_curand_bit_for_bit() {
        let all = records();
        for r in of(&all, "curand") {
            let mut p = philox(r);
            let ours: Vec<u32> = (0..16).map(|_| p.next_u32()).collect();
            assert_eq!(ours, r.words, "curand {:?}", r.triple);
        }
        for r in of(&all, "curand4") {
            let mut p = philox(r);
            let ours: Vec<u32> = (0..4).flat_map(|_| p.next_u32x4()).collect();
            assert_eq!(ours, r.words, "curand4 {:?}", r.triple);
        }
        for r in of(&all, "uniform") {
            let mut p = philox(r);
            let ours: Vec<u32> = (0..16).map(|_| p.uniform().to_bits()).collect();
            assert_eq!(ours, r.words, "uniform {:?}", r.triple);
        }
        for r in of(&all, "uniform4") {
            let mut p = philox(r);
            let ours: Vec<u32> = (0..4)
                .flat_map(|_| p.uniform4().map(f32::to_bits))
                .collect();
            assert_eq!(ours, r.words, "uniform4 {:?}", r.triple);
        }
        for r in of(&all, "uniform_double") {
            let mut p = philox(r);
            let ours: Vec<f64> = (0..8).map(|_| p.uniform_f64()).collect();
            assert_eq!(ours, f64s(&r.words), "uniform_double {:?}", r.triple);
        }
    }

    /// `|ours − theirs| ≤ NORMAL_CPU_TOLERANCE · radius + 2 ulp(theirs)`
    /// (the radius `sqrt(−2 ln u)` of the pair: the sine and cosine error
    /// is absolute, then scaled by it).
    fn close_normal(ours: f32, theirs: f32, radius: f32) -> bool {
        let ulp = f32::from_bits(theirs.abs().to_bits() + 1) - theirs.abs();
        (ours - theirs).abs() <= NORMAL_CPU_TOLERANCE * radius + 2.0 * ulp
    }

    /// The radii of the Box–Muller pairs drawn from `p`, one per pair,
    /// each from the first value of the pair's two.
    fn radius(x: u32) -> f32 {
        (-2.0 * uniform_of(x).ln()).sqrt()
    }

    #[test]
    fn normals_are_curands_within_the_sincos_tolerance() {
        let all = records();
        let mut worst = 0.0f32;
        for (what, per_draw) in [("normal", 1), ("normal2", 2), ("normal4", 4)] {
            for r in of(&all, what) {
                let (mut p, mut walk) = (philox(r), philox(r));
                let ours: Vec<f32> = match per_draw {
                    1 => (0..16).map(|_| p.normal()).collect(),
                    2 => (0..8).flat_map(|_| p.normal2()).collect(),
                    _ => (0..4).flat_map(|_| p.normal4()).collect(),
                };
                let theirs = f32s(&r.words);
                for pair in 0..8 {
                    let (x, _) = (walk.next_u32(), walk.next_u32());
                    let rad = radius(x);
                    for i in [2 * pair, 2 * pair + 1] {
                        assert!(
                            close_normal(ours[i], theirs[i], rad),
                            "{what} {:?} value {i}: {} against cuRAND's {}",
                            r.triple,
                            ours[i],
                            theirs[i]
                        );
                        worst = worst.max((ours[i] - theirs[i]).abs() / rad);
                    }
                }
            }
        }
        eprintln!("largest |CPU − cuRAND| / radius over the normals: {worst:e}");
    }

    #[test]
    fn f64_normals_and_log_normals_are_close_to_curands() {
        let all = records();
        for r in of(&all, "normal_double") {
            let (mut p, mut walk) = (philox(r), philox(r));
            let ours: Vec<f64> = (0..8).map(|_| p.normal_f64()).collect();
            let theirs = f64s(&r.words);
            for pair in 0..4 {
                let x = walk.next_u32x4();
                let u53 = ((x[0] as u64) ^ ((x[1] as u64) << 21)) as f64 * 2f64.powi(-53);
                let rad = (-2.0 * u53.max(f64::MIN_POSITIVE).ln()).sqrt();
                for i in [2 * pair, 2 * pair + 1] {
                    // Both sides accurate to a few ulp; the CPU's angle
                    // `v · π` is rounded once more than `sincospi`'s.
                    let bound = 1e-14 * rad + 4.0 * f64::EPSILON * theirs[i].abs();
                    assert!(
                        (ours[i] - theirs[i]).abs() <= bound,
                        "normal_double {:?} value {i}: {} against {}",
                        r.triple,
                        ours[i],
                        theirs[i]
                    );
                }
            }
        }
        for r in of(&all, "log_normal") {
            let (mut p, mut walk) = (philox(r), philox(r));
            let ours: Vec<f32> = (0..16).map(|_| p.log_normal(0.5, 1.5)).collect();
            let theirs = f32s(&r.words);
            for pair in 0..8 {
                let (x, _) = (walk.next_u32(), walk.next_u32());
                let rad = radius(x);
                for i in [2 * pair, 2 * pair + 1] {
                    // exp(0.5 + 1.5 z): the normal's error times 1.5,
                    // relative, plus `expf`'s few ulp on each side.
                    let rel = 1.5 * (NORMAL_CPU_TOLERANCE * rad + 1e-6) + 4.0 * f32::EPSILON;
                    assert!(
                        (ours[i] - theirs[i]).abs() <= rel * theirs[i],
                        "log_normal {:?} value {i}: {} against {}",
                        r.triple,
                        ours[i],
                        theirs[i]
                    );
                }
            }
        }
    }

    /// Knuth's method (`λ < 64`) and the normal approximation (`λ > 4000`)
    /// match cuRAND exactly; the rejection method between, built on the
    /// GPU's approximate instructions, is counted (and must agree on most
    /// draws).
    #[test]
    fn poisson_counts_match_curand_outside_the_approximate_method() {
        let all = records();
        let (mut between, mut differing) = (0, 0);
        for r in of(&all, "poisson") {
            let lambda = r.params[0];
            let mut p = philox(r);
            let ours: Vec<u32> = (0..16).map(|_| p.poisson(lambda)).collect();
            if !(64.0..=4000.0).contains(&lambda) {
                assert_eq!(ours, r.words, "poisson λ = {lambda} {:?}", r.triple);
            } else {
                between += ours.len();
                differing += ours.iter().zip(&r.words).filter(|(a, b)| a != b).count();
            }
        }
        eprintln!(
            "Poisson, 64 <= λ <= 4000: {differing} of {between} CPU draws differ from cuRAND's"
        );
        assert!(
            between > 0 && differing * 10 <= between,
            "{differing} of {between}"
        );
    }

    #[test]
    fn rand_core_traits_draw_the_same_stream() {
        use rand_core::{RngCore, SeedableRng};
        let mut a = Philox::seed_from_u64(1234);
        let mut b = Philox::new(1234, 0, 0);
        assert_eq!(RngCore::next_u32(&mut a), b.next_u32());
        let (lo, hi) = (b.next_u32() as u64, b.next_u32() as u64);
        assert_eq!(a.next_u64(), lo | hi << 32);
    }
}
