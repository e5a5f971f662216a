//! Sizes near the edges the argument checks guard (`usize::MAX`, 2^31,
//! 2^32, half the address space), for the property tests.

use proptest::prelude::*;

/// A length, count or offset: small, near 2^31, 2^32, `usize::MAX / 2` or
/// `usize::MAX`, or anything.
pub(crate) fn edgy() -> impl Strategy<Value = usize> {
    prop_oneof![
        0usize..70,
        ((1usize << 31) - 3)..((1usize << 31) + 3),
        ((1usize << 32) - 3)..((1usize << 32) + 3),
        (usize::MAX / 2 - 3)..(usize::MAX / 2 + 3),
        (usize::MAX - 5)..=usize::MAX,
        any::<usize>(),
    ]
}
