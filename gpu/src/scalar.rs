//! Element types and reduction operators, shared by the GPU and the host.
//!
//! The host's CPU references call these same functions, so "what does `min`
//! do with NaN" or "does an `i32` sum wrap" has one answer on both sides.

use crate::kernel::KernelType;

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
    /// Every operator.
    pub const ALL: [Op; 3] = [Op::Sum, Op::Min, Op::Max];

    /// The operator's name (`sum`).
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
pub trait Scalar: KernelType + PartialEq {
    /// Zero, the identity of [`Op::Sum`].
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
    /// The element's 32 bits, as a shuffle or a 16-byte load moves them.
    fn to_bits(self) -> u32;
    /// The element whose bits are `bits`.
    fn from_bits(bits: u32) -> Self;
}

impl Scalar for f32 {
    const ZERO: Self = 0.0;
    const MIN_IDENTITY: Self = f32::INFINITY;
    const MAX_IDENTITY: Self = f32::NEG_INFINITY;
    #[inline(always)]
    fn add(self, other: Self) -> Self {
        self + other
    }
    // On sm_80+ GPUs one `min.NaN`/`max.NaN` instruction where the compare
    // and select below take three: the f32 min and max read at the sum's
    // pace. The NaN they give may be another NaN than the input's.
    #[inline(always)]
    fn min(self, other: Self) -> Self {
        #[cfg(all(target_arch = "nvptx64", target_feature = "sm_80"))]
        return crate::prim::min_nan_f32(self, other);
        #[cfg(not(all(target_arch = "nvptx64", target_feature = "sm_80")))]
        if self.is_nan() || self < other {
            self
        } else {
            other
        }
    }
    #[inline(always)]
    fn max(self, other: Self) -> Self {
        #[cfg(all(target_arch = "nvptx64", target_feature = "sm_80"))]
        return crate::prim::max_nan_f32(self, other);
        #[cfg(not(all(target_arch = "nvptx64", target_feature = "sm_80")))]
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
    ($t:ty) => {
        impl Scalar for $t {
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
integer_scalar!(i32);
integer_scalar!(u32);
