//! Philox4x32-10, bit-compatible with cuRAND's `curandStatePhilox4_32_10_t`:
//! the generator of cuRAND's device API (`curand_init` / `curand_uniform` /
//! `curand_normal`), as plain Rust that the kernels and the CPU share.
//!
//! Philox is counter-based: value `4c + j` of a stream is word `j` of the
//! 10-round bijection [`philox4x32_10`] applied to the 128-bit counter `c`
//! under the 64-bit key (the seed). There is no state to carry from one
//! value to the next beyond the position, so skipping ahead is an addition:
//! `Philox::new(seed, subsequence, offset)` starts at value
//! `subsequence · 2^66 + offset` of the stream of `seed` (a subsequence is
//! 2^64 counters of 4 values), exactly where `curand_init(seed,
//! subsequence, offset, &state)` starts.
//!
//! What each draw costs and returns, as in cuRAND:
//!
//! * [`Philox::next_u32`] (`curand`): the next 32-bit value;
//!   [`Philox::next_u32x4`] (`curand4`): the next 4;
//! * [`Philox::uniform`] (`curand_uniform`): one value `x` as
//!   `x · 2^-32 + 2^-33`, in `(0, 1]` (`f32` rounding can give 1);
//!   [`Philox::uniform4`]; [`Philox::uniform_f64`]
//!   (`curand_uniform_double`): `x · 2^-32 + 2^-32`, 32 random bits;
//! * [`Philox::normal`] (`curand_normal`): Box–Muller on two values, the
//!   second result cached for the next call; [`Philox::normal2`],
//!   [`Philox::normal4`] (no cache); [`Philox::normal_f64`] on 4 values
//!   (two 53-bit uniforms), its own cache; [`Philox::log_normal`]
//!   (`curand_log_normal`): `exp(mean + stddev · z)` of a Box–Muller pair,
//!   sharing `normal`'s cache slot (a log-normal after a normal draws a new
//!   pair, as cuRAND does); [`Philox::poisson`] (`curand_poisson`): one of
//!   cuRAND's three methods by `λ`.
//!
//! Integers and uniforms are exact on every target. The Box–Muller steps
//! use `log`, `sqrt`, `sin`, `cos` and `exp` ([`math`]): on the GPU they
//! are nvcc's own instruction sequences, so normals, log-normals and Knuth's
//! Poisson counts are cuRAND's bit for bit. cuRAND takes the sine and
//! cosine from the GPU's approximate instructions (`__sincosf`, an absolute
//! error of about 2^-21.4), which a CPU cannot reproduce; the CPU computes
//! them accurately (`libm`), so CPU normals differ from cuRAND's by up to
//! [`NORMAL_CPU_TOLERANCE`] times the radius `sqrt(−2 ln u)` (measured: up
//! to 88 units in the last place for values near zero, 0 or 1 for most).
//!
//! The modules: [`math`] (nvcc's `logf` and `expf`), [`normal`]
//! (Box–Muller), [`poisson`], and the kernels in [`fill`].

pub mod fill;
pub mod math;
pub mod normal;
pub mod poisson;

pub use fill::{
    Draw, FILL_BLOCK, FILL_SHARED_BYTES, FillValue, POISSON_SEARCH, POISSON_SHARED_WORDS,
    in_quarter_disc, normals_of, poisson_guide_bits, poisson_of,
};
pub use fill::{KERNELS, rng_pi_hits};
pub use fill::{rng_draws, rng_fill, rng_fill_log_normal, rng_fill_normal, rng_fill_poisson};
#[cfg(not(target_arch = "nvptx64"))]
pub use normal::box_muller_f64;
pub use normal::{box_muller, log_normal_of, scaled};

/// The multipliers of the Philox4x32 round.
pub const PHILOX_M: [u32; 2] = [0xD251_1F53, 0xCD9E_8D57];
/// The Weyl increments of the key between rounds.
pub const PHILOX_W: [u32; 2] = [0x9E37_79B9, 0xBB67_AE85];

/// 2^-32 as cuRAND writes it (`CURAND_2POW32_INV`, `2.3283064e-10f`, which
/// is exactly 2^-32 in `f32`).
#[doc(hidden)]
pub const TWO_POW_M32: f32 = 2.328_306_4e-10;
/// `CURAND_2POW32_INV_2PI`: 2^-32 · 2π, both rounded to `f32` first: the
/// Box–Muller angle per unit of a 32-bit value.
#[doc(hidden)]
pub const TWO_POW_M32_2PI: f32 = TWO_POW_M32 * 6.283_185_5;
/// `CURAND_2POW53_INV_DOUBLE`: 2^-53, the step of the 53-bit uniforms of
/// the `f64` Box–Muller pairs.
#[doc(hidden)]
pub const TWO_POW_M53: f64 = 1.110_223_024_625_156_5e-16;

/// How far the CPU's Box–Muller values may be from cuRAND's, relative to
/// the radius `sqrt(−2 ln u)` they are scaled by: the GPU's `__sincosf`
/// error (measured against the golden vectors, below 2^-20 over `(0, 2π]`)
/// plus a few roundings of `f32`. Tested against cuRAND's own output.
pub const NORMAL_CPU_TOLERANCE: f32 = 1.0 / (1 << 19) as f32;

/// The Philox4x32-10 rounds of `$counter` under `$key` over `$wide`, a
/// function giving the `(low, high)` halves of a 32 × 32-bit product: one
/// body for the CPU's `const fn` and the kernels' twin. Each round takes two
/// products and permutes; the key is bumped by [`PHILOX_W`] between rounds
/// (`curand_Philox4x32_10`).
macro_rules! philox_rounds {
    ($counter:expr, $key:expr, $wide:path) => {{
        let (mut c, mut k): ([u32; 4], [u32; 2]) = ($counter, $key);
        let mut r = 0;
        loop {
            let (lo0, hi0) = $wide(PHILOX_M[0], c[0]);
            let (lo1, hi1) = $wide(PHILOX_M[1], c[2]);
            c = [hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0];
            r += 1;
            if r == 10 {
                break c;
            }
            k = [
                k[0].wrapping_add(PHILOX_W[0]),
                k[1].wrapping_add(PHILOX_W[1]),
            ];
        }
    }};
}

/// The `(low, high)` halves of the 64-bit product `a · b`.
#[inline(always)]
const fn wide(a: u32, b: u32) -> (u32, u32) {
    let p = a as u64 * b as u64;
    (p as u32, (p >> 32) as u32)
}

/// The Philox4x32-10 bijection: 10 rounds of `counter` under `key`, the
/// key bumped by [`PHILOX_W`] between rounds (`curand_Philox4x32_10`).
#[inline(always)]
pub const fn philox4x32_10(counter: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    philox_rounds!(counter, key, wide)
}

/// [`philox4x32_10`] for the kernels' hot loops, the same function: each
/// product goes through `mul.wide.u32` returned as two 32-bit halves
/// ([`crate::prim::mul_wide_parts_u32`]). From the `u64` products of the
/// `const fn`, LLVM widens each round's XORs and the key additions to
/// 64-bit arithmetic, which the GPU runs as pairs of 32-bit instructions:
/// 20 extra instructions per bijection, a tenth of the normal fill's loop
/// (read in its SASS).
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub fn philox4x32_10_gpu(counter: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    philox_rounds!(counter, key, crate::prim::mul_wide_parts_u32)
}

/// `x · 2^-32 + 2^-33`: the uniform of one 32-bit value, in `(0, 1]`
/// (`_curand_uniform`). The product is exact, so one rounding whether or
/// not it is fused.
#[inline(always)]
pub fn uniform_of(x: u32) -> f32 {
    // Fused on the GPU: one instruction, the same result.
    #[cfg(target_arch = "nvptx64")]
    return crate::prim::fma_f32(x as f32, TWO_POW_M32, TWO_POW_M32 / 2.0);
    #[cfg(not(target_arch = "nvptx64"))]
    return x as f32 * TWO_POW_M32 + TWO_POW_M32 / 2.0;
}

/// `x · 2^-32 + 2^-32`, exactly (`_curand_uniform_double` of one value).
#[inline(always)]
pub fn uniform_f64_of(x: u32) -> f64 {
    x as f64 * (TWO_POW_M32 as f64) + TWO_POW_M32 as f64
}

/// Threads of cuRAND's host-API Philox generator: in a fill
/// (`curandGenerate`, `curandGenerateUniform`, ...), value `j` of the
/// generator's stream is word `j % 4` of block `j / 4`, and block `b` is
/// the bijection of counter [`host_counter`]`(b)`: thread `b % 65 536`'s
/// subsequence, its block `b / 65 536`. Read from cuRAND's own fills (the
/// golden vectors) on an H200.
pub const HOST_THREADS: u64 = 65_536;

/// Values of a host-API stream that [`host_counter`] reaches: the block
/// within a thread's subsequence is the counter's low 32-bit word.
pub const HOST_STREAM_LIMIT: u64 = (HOST_THREADS * 4) << 32;

/// The counter of block `block` of a host-API stream (see
/// [`HOST_THREADS`]); `block < HOST_STREAM_LIMIT / 4`.
#[inline(always)]
pub const fn host_counter(block: u64) -> [u32; 4] {
    [
        (block / HOST_THREADS) as u32,
        0,
        (block % HOST_THREADS) as u32,
        0,
    ]
}

/// The key of `seed`: its low and high halves.
#[inline(always)]
pub const fn key_of(seed: u64) -> [u32; 2] {
    [seed as u32, (seed >> 32) as u32]
}

/// Value `position` of the host-API stream of `seed`: what
/// `curandGenerate` writes at index `position − offset` after
/// `curandSetGeneratorOffset(offset)`.
pub const fn host_value(seed: u64, position: u64) -> u32 {
    philox4x32_10(host_counter(position / 4), key_of(seed))[(position % 4) as usize]
}

/// What the Box–Muller slot holds between calls (`boxmuller_flag` and
/// `boxmuller_extra` of cuRAND's state).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Cached {
    None,
    Normal(f32),
    LogNormal(f32),
}

/// A Philox4x32-10 stream position with cuRAND's draw functions: the state
/// of one thread under cuRAND's device API, or a CPU generator of the same
/// numbers.
/// See the [module docs](self).
#[derive(Clone, Debug, PartialEq)]
pub struct Philox {
    counter: [u32; 4],
    output: [u32; 4],
    key: [u32; 2],
    /// The word of `output` the next draw returns (0 to 3).
    index: u32,
    cached: Cached,
    #[cfg_attr(
        target_arch = "nvptx64",
        allow(dead_code, reason = "the f64 draws are CPU-only so far")
    )]
    cached_f64: Option<f64>,
}

impl Philox {
    /// The generator at value `subsequence · 2^66 + offset` of the stream
    /// of `seed`: `curand_init(seed, subsequence, offset, &state)`. Every
    /// value of each argument is valid.
    pub const fn new(seed: u64, subsequence: u64, offset: u64) -> Philox {
        let key = [seed as u32, (seed >> 32) as u32];
        let mut philox = Philox {
            counter: [0; 4],
            output: [0; 4],
            key,
            index: 0,
            cached: Cached::None,
            cached_f64: None,
        };
        philox.skip_ahead_subsequences(subsequence);
        philox.skip_ahead(offset);
        philox
    }

    /// The 128-bit counter of the next block of 4 values, and the word of
    /// it the next draw returns: the stream position `4 · counter + index`.
    pub const fn position(&self) -> (u128, u32) {
        let c = &self.counter;
        (
            c[0] as u128 | (c[1] as u128) << 32 | (c[2] as u128) << 64 | (c[3] as u128) << 96,
            self.index,
        )
    }

    /// Adds `n` to the low 64 bits of the counter, carrying into the high
    /// ones as cuRAND does (`Philox_State_Incr`: a carry out of the 64 bits
    /// goes up one word at a time).
    const fn add_counter(&mut self, n: u64) {
        let (lo, mut hi) = (n as u32, (n >> 32) as u32);
        let (x, carry) = self.counter[0].overflowing_add(lo);
        self.counter[0] = x;
        if carry {
            hi = hi.wrapping_add(1);
        }
        let y = self.counter[1].wrapping_add(hi);
        self.counter[1] = y;
        // cuRAND's test: no carry when `hi <= y`.
        if hi <= y {
            return;
        }
        self.counter[2] = self.counter[2].wrapping_add(1);
        if self.counter[2] != 0 {
            return;
        }
        self.counter[3] = self.counter[3].wrapping_add(1);
    }

    /// Skips `n` values (`skipahead(n, &state)`).
    pub const fn skip_ahead(&mut self, n: u64) {
        self.index += (n & 3) as u32;
        let mut blocks = n / 4;
        if self.index > 3 {
            blocks += 1;
            self.index -= 4;
        }
        self.add_counter(blocks);
        self.output = philox4x32_10(self.counter, self.key);
    }

    /// Skips `n` subsequences of 2^66 values (`skipahead_sequence`): adds
    /// `n` to the high 64 bits of the counter.
    pub const fn skip_ahead_subsequences(&mut self, n: u64) {
        let (lo, mut hi) = (n as u32, (n >> 32) as u32);
        let (z, carry) = self.counter[2].overflowing_add(lo);
        self.counter[2] = z;
        if carry {
            hi = hi.wrapping_add(1);
        }
        self.counter[3] = self.counter[3].wrapping_add(hi);
        self.output = philox4x32_10(self.counter, self.key);
    }

    /// The next block of 4 values: the counter moves on by one.
    #[inline(always)]
    fn advance(&mut self) {
        self.add_counter(1);
        self.output = philox4x32_10(self.counter, self.key);
    }

    /// The next 32-bit value (`curand`).
    #[inline(always)]
    pub fn next_u32(&mut self) -> u32 {
        // A chain of selects rather than an index, so that a kernel keeps
        // the block in registers instead of a local-memory array.
        let o = &self.output;
        let value = match self.index {
            0 => o[0],
            1 => o[1],
            2 => o[2],
            _ => o[3],
        };
        self.index += 1;
        if self.index == 4 {
            self.advance();
            self.index = 0;
        }
        value
    }

    /// The next 4 values (`curand4`): from the current word on, across a
    /// block boundary unless the position is at a block's start.
    #[inline(always)]
    pub fn next_u32x4(&mut self) -> [u32; 4] {
        let old = self.output;
        self.advance();
        let new = self.output;
        match self.index {
            0 => old,
            1 => [old[1], old[2], old[3], new[0]],
            2 => [old[2], old[3], new[0], new[1]],
            _ => [old[3], new[0], new[1], new[2]],
        }
    }

    /// A uniform `f32` in `(0, 1]` (`curand_uniform`).
    #[inline(always)]
    pub fn uniform(&mut self) -> f32 {
        uniform_of(self.next_u32())
    }

    /// Four uniforms (`curand_uniform4`).
    #[inline(always)]
    pub fn uniform4(&mut self) -> [f32; 4] {
        self.next_u32x4().map(uniform_of)
    }

    /// A uniform `f64` in `(0, 1]` with 32 random bits
    /// (`curand_uniform_double`).
    #[inline(always)]
    pub fn uniform_f64(&mut self) -> f64 {
        uniform_f64_of(self.next_u32())
    }
}

/// `rand`'s generator traits, on the CPU: `next_u32` is `curand`, and a
/// seed is the 8 bytes of the `u64` seed of `Philox::new(seed, 0, 0)`.
#[cfg(not(target_arch = "nvptx64"))]
mod rand_traits {
    use super::Philox;

    /// `rand_core`'s `Rng` comes with this (a generator that cannot fail).
    impl rand_core::TryRng for Philox {
        type Error = core::convert::Infallible;

        fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
            Ok(Philox::next_u32(self))
        }

        /// Two values, the first as the low half.
        fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
            let low = Philox::next_u32(self) as u64;
            Ok(low | (Philox::next_u32(self) as u64) << 32)
        }

        /// Values in order, each as 4 little-endian bytes (the last one cut
        /// to what is left).
        fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), Self::Error> {
            for chunk in dest.chunks_mut(4) {
                let bytes = Philox::next_u32(self).to_le_bytes();
                chunk.copy_from_slice(&bytes[..chunk.len()]);
            }
            Ok(())
        }
    }

    impl rand_core::SeedableRng for Philox {
        type Seed = [u8; 8];

        fn from_seed(seed: [u8; 8]) -> Philox {
            Philox::new(u64::from_le_bytes(seed), 0, 0)
        }

        fn seed_from_u64(seed: u64) -> Philox {
            Philox::new(seed, 0, 0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniforms_span_zero_exclusive_to_one_inclusive() {
        assert_eq!(uniform_of(0), TWO_POW_M32 / 2.0);
        assert_eq!(uniform_of(u32::MAX), 1.0);
        assert_eq!(uniform_f64_of(u32::MAX), 1.0);
        assert!(uniform_f64_of(0) > 0.0);
    }

    #[test]
    fn skipping_equals_drawing() {
        let mut drawn = Philox::new(7, 3, 5);
        for n in [0u64, 1, 2, 3, 4, 5, 11, 64, 1001] {
            let mut skipped = drawn.clone();
            skipped.skip_ahead(n);
            let mut walked = drawn.clone();
            for _ in 0..n {
                walked.next_u32();
            }
            assert_eq!(skipped.next_u32(), walked.next_u32(), "skip {n}");
            drawn.next_u32();
        }
    }

    #[test]
    fn offsets_carry_out_of_the_low_64_bits() {
        let mut a = Philox::new(1, 0, 0);
        for _ in 0..5 {
            a.skip_ahead(u64::MAX);
        }
        // 5 · (2^64 − 1) values: 1.25 · 2^64 counters, index 3.
        let (position, index) = a.position();
        assert_eq!((position >> 64, index), (1, 3), "{position:#x}");
    }
}
