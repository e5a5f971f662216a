//! Refusing outputs that overlap inputs.
//!
//! Borrows rule overlap out between the library's own views of one buffer
//! (a `ViewMut` is exclusive; `split_at_mut` gives disjoint halves), but
//! not for views made from raw parts (`View::from_raw_parts`), which may
//! share bytes with anything. A kernel whose output overlaps its input
//! reads what it (or another block) has already written: a wrong answer,
//! so every family refuses it before the launch.

use crate::error::{Error, Result};

/// The bytes `start..end` that a view covers on the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Span {
    pub start: u64,
    pub end: u64,
}

impl Span {
    /// `bytes` bytes from `address`.
    pub fn new(address: u64, bytes: usize) -> Span {
        Span {
            start: address,
            end: address + bytes as u64,
        }
    }

    /// Whether the two spans share a byte (an empty span shares none).
    pub fn overlaps(self, other: Span) -> bool {
        self.start < self.end
            && other.start < other.end
            && self.start < other.end
            && other.start < self.end
    }
}

/// `Err(InvalidArgument)` naming `family`'s `output` and `input` if their
/// spans share a byte.
pub(crate) fn refuse_overlap(
    family: &str,
    (output, out_span): (&str, Span),
    (input, in_span): (&str, Span),
) -> Result<()> {
    if out_span.overlaps(in_span) {
        return Err(Error::InvalidArgument(format!(
            "the {family}'s {output} overlaps its {input} (bytes {:#x}..{:#x} and {:#x}..{:#x})",
            out_span.start, out_span.end, in_span.start, in_span.end
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::Span;

    #[test]
    fn overlapping_spans_are_found() {
        let s = |a, b| Span { start: a, end: b };
        assert!(s(0, 8).overlaps(s(4, 12)));
        assert!(s(4, 12).overlaps(s(0, 8)));
        assert!(s(0, 16).overlaps(s(4, 8)));
        assert!(!s(0, 8).overlaps(s(8, 12)));
        assert!(!s(8, 12).overlaps(s(0, 8)));
        assert!(!s(4, 4).overlaps(s(0, 8)));
    }
}
