//! The Poisson fill: [`PoissonTable`], the inverse-CDF table it maps the
//! stream through, and [`Context::poisson_table`] and
//! [`Context::fill_poisson_into`].

use super::*;

use crate::memory::{Buffer, Call, DeviceRead, DeviceWrite};
use warpspeed_gpu::DevPtr;
use warpspeed_gpu::rng::{POISSON_SHARED_WORDS, poisson_guide_bits, rng_fill_poisson};

/// The largest `λ` [`Context::poisson_table`] accepts: its table, which
/// covers the counts within about 9.5 standard deviations of `λ`, stays
/// below 3 MB.
pub const POISSON_MAX_LAMBDA: f64 = (1u64 << 30) as f64;

/// An inverse-CDF table of the Poisson distribution of one `λ`, on the
/// device ([`Context::poisson_table`]): what [`Context::fill_poisson_into`]
/// maps each 32-bit stream value through, like the distribution object
/// `curandCreatePoissonDistribution` makes for cuRAND.
///
/// Entry `i` is `round(2^32 · P(X ≤ base + i))`, for every `i` where that
/// is below 2^32; value `x` of the stream gives `base` plus the number of
/// entries at most `x`. So count `k` comes from `2^32 · P(X = k)` of the
/// 2^32 values, rounded: the distribution is exact to 2^-33 per count
/// (the counts whose probability is below that are never drawn). One
/// 32-bit value per count makes the fill a single pass at the speed of
/// the uniform fill, where Knuth's method would draw `λ + 1` uniforms per
/// count.
pub struct PoissonTable {
    lambda: f64,
    base: u32,
    /// The entries, then the guide (see [`poisson_of`]).
    host: Vec<u32>,
    /// How many of `host` are entries.
    len: usize,
    /// The guide's bucket width: values `b << shift` to `(b + 1) << shift`.
    shift: u32,
    device: Buffer<u32>,
}

impl std::fmt::Debug for PoissonTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PoissonTable")
            .field("lambda", &self.lambda)
            .field("base", &self.base)
            .field("entries", &self.len)
            .finish()
    }
}

impl PoissonTable {
    /// The mean.
    pub fn lambda(&self) -> f64 {
        self.lambda
    }

    /// The smallest count the table gives.
    pub fn base(&self) -> u32 {
        self.base
    }

    /// The entries (see the type's docs).
    pub fn entries(&self) -> &[u32] {
        &self.host[..self.len]
    }

    /// The count for stream value `x`, on the CPU.
    pub fn count(&self, x: u32) -> u32 {
        poisson_of(x, self.base, self.len, self.shift, |i| self.host[i])
    }

    /// `entries` followed by their guide (see [`poisson_of`]):
    /// `2^g + 1` entries, `g` from [`poisson_guide_bits`], each flagged
    /// with [`POISSON_SEARCH`] where its bucket holds entries; and the
    /// guide's shift, `32 − g`.
    fn with_guide(mut entries: Vec<u32>) -> (Vec<u32>, u32) {
        let len = entries.len();
        let bits = poisson_guide_bits(len);
        let shift = 32 - bits;
        let mut below = 0;
        let mut guide = Vec::with_capacity((1 << bits) + 1);
        for b in 0..=(1u64 << bits) {
            let start = b << shift;
            while below < len && (entries[below] as u64) < start {
                below += 1;
            }
            guide.push(below as u32);
        }
        // Bucket `b` holds entries when the next bucket starts with more
        // below it (the last guide entry closes the last bucket).
        for b in 0..1 << bits {
            if guide[b + 1] > guide[b] {
                guide[b] |= POISSON_SEARCH;
            }
        }
        entries.extend(guide);
        (entries, shift)
    }

    /// The entries and the base for `lambda` (checked by the caller).
    fn build(lambda: f64) -> (u32, Vec<u32>) {
        // P(X = k) from the mode outwards by the ratio of neighbours,
        // P(k − 1) = P(k) · k / λ and P(k + 1) = P(k) · λ / (k + 1), until
        // the terms fall below 2^-80; then normalised by their sum.
        const NEGLIGIBLE: f64 = 8.271_806_125_530_277e-25; // 2^-80
        let mode = lambda.floor();
        let log_mode = mode * lambda.ln() - lambda - libm::lgamma(mode + 1.0);
        let at_mode = log_mode.exp();
        let mut below = Vec::new();
        let (mut k, mut p) = (mode, at_mode);
        while k > 0.0 {
            p *= k / lambda;
            k -= 1.0;
            if p < NEGLIGIBLE {
                break;
            }
            below.push(p);
        }
        let low = mode - below.len() as f64;
        let mut pmf: Vec<f64> = below.into_iter().rev().collect();
        pmf.push(at_mode);
        let (mut k, mut p) = (mode, at_mode);
        loop {
            p *= lambda / (k + 1.0);
            k += 1.0;
            if p < NEGLIGIBLE {
                break;
            }
            pmf.push(p);
        }
        let total: f64 = pmf.iter().sum();
        let scale = 2f64.powi(32) / total;
        let mut entries = Vec::with_capacity(pmf.len());
        let mut cumulative = 0.0;
        let mut base = None;
        for (i, p) in pmf.iter().enumerate() {
            cumulative += p;
            let entry = (cumulative * scale).round();
            if entry < 1.0 {
                // Counts below `base` are never drawn: their mass rounds to 0.
                continue;
            }
            base.get_or_insert(low as u32 + i as u32);
            if entry >= 2f64.powi(32) {
                break;
            }
            entries.push(entry as u32);
        }
        // The cumulative sum reaches the total, so some entry rounds to 1
        // or more.
        let base = base.unwrap_or(low as u32);
        (base, entries)
    }
}

impl Context {
    /// Builds the inverse-CDF table of the Poisson distribution of mean
    /// `lambda` and copies it to the device (a synchronous copy, once per
    /// `λ`; a few hundred bytes for small `λ`, up to 3 MB at
    /// [`POISSON_MAX_LAMBDA`]).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a `λ` that is not finite and
    /// positive or above [`POISSON_MAX_LAMBDA`]; [`Error::Cuda`] if the
    /// allocation fails.
    pub fn poisson_table(&self, lambda: f64) -> Result<PoissonTable> {
        self.ensure_alive()?;
        check_lambda(lambda)?;
        if lambda > POISSON_MAX_LAMBDA {
            return Err(Error::InvalidArgument(format!(
                "a Poisson table covers λ up to 2^30, not {lambda}"
            )));
        }
        let (base, entries) = PoissonTable::build(lambda);
        let len = entries.len();
        let (host, shift) = PoissonTable::with_guide(entries);
        let device = self.upload(&host)?;
        Ok(PoissonTable {
            lambda,
            base,
            host,
            len,
            shift,
            device,
        })
    }

    /// Enqueues a fill of `out` with Poisson counts of `table`'s `λ`, one
    /// per stream value (see [`PoissonTable`]; [`Generator::poisson_value`]
    /// is the CPU's). Not cuRAND's `curandGeneratePoisson` values: cuRAND
    /// maps its values through tables of its own. Moves the generator on;
    /// returns at once.
    ///
    /// # Errors
    /// As [`Context::fill_u32_into`].
    pub fn fill_poisson_into<'a>(
        &'a self,
        generator: &mut Generator,
        table: &PoissonTable,
        out: &mut impl DeviceWrite<Elem = u32>,
    ) -> Result<Pending<'a>> {
        self.ensure_alive()?;
        let out = out.view_mut();
        let mut call = Call::new(self);
        let address = call.write(&out)?;
        let table_address = call.read(&table.device.view())?;
        // Small tables (λ up to 10^4 or so) go to each block's shared memory.
        let words = table.host.len();
        let shared = if words <= POISSON_SHARED_WORDS {
            words as u32
        } else {
            0
        };
        self.fill_launch(generator, out.len(), |n, grid, seed, position| {
            let args = rng_fill_poisson::Args::<u32> {
                out: DevPtrMut::new(address),
                n,
                seed,
                position,
                table: DevPtr::new(table_address),
                len: table.len,
                base: table.base,
                shift: table.shift,
                shared,
            };
            // SAFETY: `out` is a device slice of `n` elements, all written
            // and nothing else; `position + n <= HOST_STREAM_LIMIT`
            // (`fill_launch` checked); the table holds `len` ascending
            // entries and their guide (`with_guide`), `words` in all, that
            // nothing writes after the upload (ordered by `call`, as is
            // `out`); `shared` is 0
            // or `words`, with room for it behind the staging area; the
            // fills' launch shape.
            unsafe {
                self.launch(
                    rng_fill_poisson::entry::<u32>(),
                    LaunchConfig::linear(grid, FILL_BLOCK, FILL_SHARED_BYTES + 4 * shared),
                    &args,
                )
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tables give each count `2^32 · P(X = k)` of the 2^32 values,
    /// rounded: within one value of the exact probability (within the
    /// mass below `base` for the first count), for small, medium and large
    /// `λ`; a tiny `λ` gives only zeros.
    #[test]
    fn poisson_tables_match_the_distribution_to_one_value_in_2_to_the_32() {
        for lambda in [0.01, 1.0, 3.5, 63.9, 1000.0, 123_456.7] {
            let (base, entries) = PoissonTable::build(lambda);
            assert!(entries.windows(2).all(|w| w[0] <= w[1]), "λ {lambda}");
            // ln P(k) by lgamma, independent of the table's recurrence.
            let pmf = |k: u32| {
                let k = k as f64;
                (k * lambda.ln() - lambda - libm::lgamma(k + 1.0)).exp()
            };
            let below: f64 = (0..base).map(pmf).sum();
            let mut previous = 0.0;
            for (i, &entry) in entries.iter().enumerate() {
                let k = base + i as u32;
                let drawn = (entry as f64 - previous) / 2f64.powi(32);
                let exact = pmf(k) + if i == 0 { below } else { 0.0 };
                // One value of rounding at each end, and f64's error in the
                // sums and logarithms (relative 1e-9 is far above it).
                assert!(
                    (drawn - exact).abs() <= 2.0 / 2f64.powi(32) + 1e-9 * exact,
                    "λ {lambda}, count {k}: {drawn:e} against {exact:e}"
                );
                previous = entry as f64;
            }
            let top = base + entries.len() as u32;
            let above = 1.0 - previous / 2f64.powi(32);
            assert!(
                (above - (pmf(top) + (top + 1..top + 200).map(pmf).sum::<f64>())).abs() <= 2e-9,
                "λ {lambda}: the last count's share {above:e}"
            );
        }
        // The guided search counts what a plain count counts, at and
        // around every entry and at scattered values.
        for lambda in [1e-12, 0.5, 3.5, 1000.0, 1e6] {
            let (base, entries) = PoissonTable::build(lambda);
            let len = entries.len();
            let (host, shift) = PoissonTable::with_guide(entries.clone());
            let probes = entries
                .iter()
                .flat_map(|&e| [e.wrapping_sub(1), e, e.wrapping_add(1)])
                .chain((0..4096u32).map(|i| i.wrapping_mul(0x9E37_79B9)))
                .chain([0, u32::MAX]);
            for x in probes {
                let plain = base + entries.iter().filter(|&&e| e <= x).count() as u32;
                let guided = poisson_of(x, base, len, shift, |i| host[i]);
                assert_eq!(guided, plain, "λ {lambda}, x {x:#x}");
            }
        }
        // Where the fill's tables leave shared memory (see
        // `fill_poisson_into`): between λ = 10^4 and 3 · 10^4.
        let words = |lambda| {
            PoissonTable::with_guide(PoissonTable::build(lambda).1)
                .0
                .len()
        };
        assert!(words(1e4) <= POISSON_SHARED_WORDS, "{}", words(1e4));
        assert!(words(3e4) > POISSON_SHARED_WORDS, "{}", words(3e4));
        let (base, entries) = PoissonTable::build(1e-12);
        assert_eq!((base, entries.len()), (0, 0));
        let (_, entries) = PoissonTable::build(POISSON_MAX_LAMBDA);
        assert!(entries.len() * 4 < 3 << 20, "{} entries", entries.len());
    }
}
