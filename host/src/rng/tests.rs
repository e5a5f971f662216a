//! The CPU twin against cuRAND's own output (the fixture and the CUDA
//! program that made it are in `tests/fixtures/curand/`).

use super::*;

include!("../../../tests/fixtures/curand/records.rs");

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
    eprintln!("Poisson, 64 <= λ <= 4000: {differing} of {between} CPU draws differ from cuRAND's");
    assert!(
        between > 0 && differing * 10 <= between,
        "{differing} of {between}"
    );
}

#[test]
fn host_api_fills_follow_curands_layout() {
    let mut checked = 0;
    for (what, seed, offset, pairs) in host_records() {
        let generator = Generator::with_offset(seed, offset);
        for (i, word) in pairs {
            let value = generator.value(offset + i);
            let position = offset + i;
            let theirs = f32::from_bits(word);
            match what.as_str() {
                "host_curand" => assert_eq!(value, word, "{what} {seed} {offset} {i}"),
                "host_uniform" => {
                    assert_eq!(
                        uniform_of(value).to_bits(),
                        word,
                        "{what} {seed} {offset} {i}"
                    )
                }
                "host_normal" => {
                    let first = position & !1;
                    let rad = radius(generator.value(first));
                    let ours = generator.normal_value(position);
                    assert!(
                        close_normal(ours, theirs, rad),
                        "{what} {seed} {offset} {i}: {ours} against {theirs}"
                    );
                }
                "host_log_normal" => {
                    let first = position & !1;
                    let rad = radius(generator.value(first));
                    let ours = generator.log_normal_value(position, 0.5, 1.5);
                    // As for the device API's log-normals.
                    let rel = 1.5 * (NORMAL_CPU_TOLERANCE * rad + 1e-6) + 4.0 * f32::EPSILON;
                    assert!(
                        (ours - theirs).abs() <= rel * theirs,
                        "{what} {seed} {offset} {i}: {ours} against {theirs}"
                    );
                }
                _ => continue,
            }
            checked += 1;
        }
    }
    assert!(checked > 10_000, "{checked}");
}

/// Samples of 2^24 draws (2^20 in debug builds, where the tests run
/// unoptimised); every bound below is derived from the sample size, at
/// about five standard deviations (or a tail probability near 10^-6),
/// so a correct generator fails about once in a million seeds. The
/// seeds are fixed: the result is the same on every run.
fn sample_size() -> usize {
    if cfg!(debug_assertions) {
        1 << 20
    } else {
        1 << 24
    }
}

/// Mean and (population) variance.
fn moments(x: impl Iterator<Item = f64> + Clone) -> (f64, f64) {
    let n = x.clone().count() as f64;
    let mean = x.clone().sum::<f64>() / n;
    let var = x.map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    (mean, var)
}

/// `|value − expected| <= 5 · sd`, with a message.
fn within_5_sd(what: &str, value: f64, expected: f64, sd: f64) {
    assert!(
        (value - expected).abs() <= 5.0 * sd,
        "{what}: {value} against {expected} ± 5 · {sd:e}"
    );
}

#[test]
fn uniforms_pass_moments_and_chi_squared_on_256_bins() {
    let n = sample_size();
    let mut p = Philox::new(0x1234_5678, 3, 17);
    let x: Vec<f32> = (0..n).map(|_| p.uniform()).collect();
    let nf = n as f64;
    let (mean, var) = moments(x.iter().map(|&v| v as f64));
    within_5_sd("uniform mean", mean, 0.5, (1.0 / 12.0 / nf).sqrt());
    // Var(s²) = (μ4 − σ⁴) / n, μ4 = 1/80 and σ⁴ = 1/144 for U(0, 1).
    within_5_sd(
        "uniform variance",
        var,
        1.0 / 12.0,
        ((1.0 / 80.0 - 1.0 / 144.0) / nf).sqrt(),
    );
    let mut bins = [0u64; 256];
    for &v in &x {
        // (0, 1]: 1.0 goes to the last bin.
        bins[((v * 256.0) as usize).min(255)] += 1;
    }
    let expected = nf / 256.0;
    let chi2: f64 = bins
        .iter()
        .map(|&c| (c as f64 - expected).powi(2) / expected)
        .sum();
    // χ² with 255 degrees of freedom; Wilson–Hilferty quantiles at
    // z = ±4.75 (two-sided tail about 2 · 10^-6).
    let k = 255.0f64;
    let quantile = |z: f64| k * (1.0 - 2.0 / (9.0 * k) + z * (2.0 / (9.0 * k)).sqrt()).powi(3);
    assert!(
        (quantile(-4.75)..=quantile(4.75)).contains(&chi2),
        "χ² = {chi2} outside [{}, {}]",
        quantile(-4.75),
        quantile(4.75)
    );
}

#[test]
fn normals_pass_moments_and_kolmogorov_smirnov() {
    let n = sample_size();
    let mut p = Philox::new(42, 0, 0);
    let mut z: Vec<f32> = (0..n).map(|_| p.normal()).collect();
    let nf = n as f64;
    let (mean, var) = moments(z.iter().map(|&v| v as f64));
    within_5_sd("normal mean", mean, 0.0, (1.0 / nf).sqrt());
    // Var(s²) = (μ4 − σ⁴) / n = 2 / n for N(0, 1).
    within_5_sd("normal variance", var, 1.0, (2.0 / nf).sqrt());
    z.sort_by(f32::total_cmp);
    let phi = |x: f64| 0.5 * (1.0 + libm::erf(x / core::f64::consts::SQRT_2));
    let d = z
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let f = phi(v as f64);
            (f - i as f64 / nf)
                .abs()
                .max(((i + 1) as f64 / nf - f).abs())
        })
        .fold(0.0, f64::max);
    // Kolmogorov's bound: P(D > t) <= 2 exp(−2 n t²); t for 10^-6.
    let t = ((2.0f64 / 1e-6).ln() / (2.0 * nf)).sqrt();
    assert!(d <= t, "Kolmogorov–Smirnov D = {d:e} above {t:e}");
}

#[test]
fn log_normals_and_poisson_counts_have_their_moments() {
    let n = sample_size();
    let nf = n as f64;
    // Log-normal (0, 0.5): mean e^{σ²/2}, variance (e^{σ²} − 1) e^{σ²};
    // the sample mean's deviation is the variance's root over √n.
    let (mu, sigma) = (0.0f64, 0.5f64);
    let mut p = Philox::new(7, 1, 0);
    let x: Vec<f64> = (0..n)
        .map(|_| p.log_normal(mu as f32, sigma as f32) as f64)
        .collect();
    let (mean, _) = moments(x.iter().copied());
    let var = ((sigma * sigma).exp() - 1.0) * (2.0 * mu + sigma * sigma).exp();
    within_5_sd(
        "log-normal mean",
        mean,
        (mu + sigma * sigma / 2.0).exp(),
        (var / nf).sqrt(),
    );
    // Poisson: mean λ, variance λ; Var(s²) = (μ4 − σ⁴)/n = (λ + 2λ²)/n.
    // λ = 3.5 (Knuth), 1000 (the rejection method) and 5000 (normal
    // approximation), the last two on fewer draws.
    for (lambda, draws) in [(3.5, n), (1000.0, n / 16), (5000.0, n / 16)] {
        let mut p = Philox::new(99, 0, lambda as u64);
        let counts: Vec<f64> = (0..draws).map(|_| p.poisson(lambda) as f64).collect();
        let (mean, var) = moments(counts.iter().copied());
        let d = draws as f64;
        within_5_sd(
            &format!("Poisson({lambda}) mean"),
            mean,
            lambda,
            (lambda / d).sqrt(),
        );
        within_5_sd(
            &format!("Poisson({lambda}) variance"),
            var,
            lambda,
            ((lambda + 2.0 * lambda * lambda) / d).sqrt(),
        );
    }
}

#[test]
fn rand_core_traits_draw_the_same_stream() {
    use rand_core::{Rng, SeedableRng};
    let mut a = Philox::seed_from_u64(1234);
    let mut b = Philox::new(1234, 0, 0);
    assert_eq!(Rng::next_u32(&mut a), b.next_u32());
    let (lo, hi) = (b.next_u32() as u64, b.next_u32() as u64);
    assert_eq!(Rng::next_u64(&mut a), lo | hi << 32);
    // Bytes: each value's 4 little-endian bytes in order, the last cut.
    let mut bytes = [0u8; 7];
    Rng::fill_bytes(&mut a, &mut bytes);
    let (x, y) = (b.next_u32().to_le_bytes(), b.next_u32().to_le_bytes());
    assert_eq!(bytes[..4], x);
    assert_eq!(bytes[4..], y[..3]);
}
