//! Element types and reduction operators, shared by the GPU and the host.
//!
//! The host's CPU references call these same functions, so "what does `min`
//! do with NaN" or "does an `i32` sum wrap" has one answer on both sides.

/// The element types kernels are instantiated for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarType {
    F32,
    I32,
    U32,
}

impl ScalarType {
    pub const ALL: [ScalarType; 3] = [ScalarType::F32, ScalarType::I32, ScalarType::U32];

    /// The suffix of entry-point names (`reduce_..._f32`).
    pub const fn name(self) -> &'static str {
        match self {
            ScalarType::F32 => "f32",
            ScalarType::I32 => "i32",
            ScalarType::U32 => "u32",
        }
    }
}

/// A reduction operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// Sum. Integers wrap (two's complement, like `wrapping_add`); `f32` follows
    /// IEEE 754, so NaN and opposite infinities give NaN.
    Sum,
    /// Smallest element. `f32`: NaN if any element is NaN.
    Min,
    /// Largest element. `f32`: NaN if any element is NaN.
    Max,
}

impl Op {
    pub const ALL: [Op; 3] = [Op::Sum, Op::Min, Op::Max];

    pub const fn name(self) -> &'static str {
        match self {
            Op::Sum => "sum",
            Op::Min => "min",
            Op::Max => "max",
        }
    }

    /// Folds `b` into `a` with this operator.
    #[inline(always)]
    pub fn combine<T: Scalar>(self, a: T, b: T) -> T {
        match self {
            Op::Sum => a.add(b),
            Op::Min => a.min(b),
            Op::Max => a.max(b),
        }
    }

    /// The operator's identity: `combine(identity, x) == x` for every `x`.
    #[inline(always)]
    pub fn identity<T: Scalar>(self) -> T {
        match self {
            Op::Sum => T::ZERO,
            Op::Min => T::MIN_IDENTITY,
            Op::Max => T::MAX_IDENTITY,
        }
    }
}

/// A 4-byte element type that kernels reduce, shuffle and load as 32-bit words.
pub trait Scalar: Copy + PartialEq + 'static {
    const TYPE: ScalarType;
    const ZERO: Self;
    /// Identity of [`Op::Min`]: `+inf` or the type's largest value.
    const MIN_IDENTITY: Self;
    /// Identity of [`Op::Max`]: `-inf` or the type's smallest value.
    const MAX_IDENTITY: Self;
    /// Addition; wraps for integers.
    fn add(self, other: Self) -> Self;
    /// Minimum; for floats NaN wins.
    fn min(self, other: Self) -> Self;
    /// Maximum; for floats NaN wins.
    fn max(self, other: Self) -> Self;
    fn to_bits(self) -> u32;
    fn from_bits(bits: u32) -> Self;
}

impl Scalar for f32 {
    const TYPE: ScalarType = ScalarType::F32;
    const ZERO: Self = 0.0;
    const MIN_IDENTITY: Self = f32::INFINITY;
    const MAX_IDENTITY: Self = f32::NEG_INFINITY;
    #[inline(always)]
    fn add(self, other: Self) -> Self {
        self + other
    }
    #[inline(always)]
    fn min(self, other: Self) -> Self {
        if self.is_nan() || self < other {
            self
        } else {
            other
        }
    }
    #[inline(always)]
    fn max(self, other: Self) -> Self {
        if self.is_nan() || self > other {
            self
        } else {
            other
        }
    }
    #[inline(always)]
    fn to_bits(self) -> u32 {
        f32::to_bits(self)
    }
    #[inline(always)]
    fn from_bits(bits: u32) -> Self {
        f32::from_bits(bits)
    }
}

macro_rules! integer_scalar {
    ($t:ty, $kind:ident) => {
        impl Scalar for $t {
            const TYPE: ScalarType = ScalarType::$kind;
            const ZERO: Self = 0;
            const MIN_IDENTITY: Self = <$t>::MAX;
            const MAX_IDENTITY: Self = <$t>::MIN;
            #[inline(always)]
            fn add(self, other: Self) -> Self {
                self.wrapping_add(other)
            }
            #[inline(always)]
            fn min(self, other: Self) -> Self {
                Ord::min(self, other)
            }
            #[inline(always)]
            fn max(self, other: Self) -> Self {
                Ord::max(self, other)
            }
            #[inline(always)]
            fn to_bits(self) -> u32 {
                self as u32
            }
            #[inline(always)]
            fn from_bits(bits: u32) -> Self {
                bits as $t
            }
        }
    };
}
integer_scalar!(i32, I32);
integer_scalar!(u32, U32);
