//! Printing from a kernel, for debugging: [`gpu_print!`](crate::gpu_print),
//! CUDA's `printf`, through `vprintf`, which the driver resolves when it
//! loads the module.
//!
//! Only with the crate feature `debug-print`, which
//! `cargo xtask build-ptx --lineinfo --print` turns on. Without it
//! `gpu_print!` evaluates its arguments and prints nothing, so the PTX that
//! ships never calls `vprintf` (`cargo xtask build-ptx` fails if it does):
//! never commit a call.
//!
//! ```ignore
//! crate::gpu_print!("block %llu: sum %f\n", prim::block_idx_x(), sum);
//! ```
//!
//! Every argument goes to `vprintf` as one 8-byte word ([`PrintArg`]):
//! integers zero- or sign-extended to 64 bits, `f32` widened to `f64` (as C's
//! varargs do), `f64` and pointers as they are. So every conversion in the
//! format must read 64 bits: `%llu`, `%lld`, `%lli`, `%llx`, `%llX`, `%llo`
//! for integers, `%f`, `%e`, `%g`, `%a` (or upper case) for floats, `%p` for
//! pointers; flags, width and precision may precede them, `*` may not.
//! `%%` prints `%`. A 32-bit conversion (`%d`, `%u`, `%x`), `%c`, `%s`, or a
//! number of conversions other than the number of arguments fails to
//! compile ([`check_format`]).
//!
//! Each thread that reaches the call prints one line. The driver collects
//! the lines in a buffer (1 MiB by default; the oldest are lost when it
//! fills) and the host sees them when it next synchronises with the device.
//!
//! With the feature, the crate's panic handler also prints where the panic
//! happened (`print_panic`) before it traps.

/// A value [`gpu_print!`](crate::gpu_print) passes to `vprintf`: one 8-byte
/// word.
pub trait PrintArg {
    /// The word: an integer zero- (unsigned) or sign-extended (signed) to 64
    /// bits, a float as the bits of an `f64`, a pointer as its address.
    fn word(self) -> u64;
}

macro_rules! print_arg {
    ($($t:ty => |$v:ident| $word:expr;)*) => {
        $(
            impl PrintArg for $t {
                #[inline(always)]
                fn word(self) -> u64 {
                    let $v = self;
                    $word
                }
            }
        )*
    };
}

print_arg! {
    u8 => |v| v as u64;
    u16 => |v| v as u64;
    u32 => |v| v as u64;
    u64 => |v| v;
    usize => |v| v as u64;
    i8 => |v| v as i64 as u64;
    i16 => |v| v as i64 as u64;
    i32 => |v| v as i64 as u64;
    i64 => |v| v as u64;
    isize => |v| v as i64 as u64;
    bool => |v| v as u64;
    f32 => |v| (v as f64).to_bits();
    f64 => |v| v.to_bits();
}

impl<T: ?Sized> PrintArg for *const T {
    #[inline(always)]
    fn word(self) -> u64 {
        self.addr() as u64
    }
}

impl<T: ?Sized> PrintArg for *mut T {
    #[inline(always)]
    fn word(self) -> u64 {
        self.addr() as u64
    }
}

/// Fails to compile (a panic in const evaluation) unless `format` ends in a
/// NUL, holds no other, and holds exactly `args` conversions, each of which
/// reads one 64-bit word (see the module's documentation). `gpu_print!`
/// calls it on its format, so what `vprintf` reads is what it is given.
#[doc(hidden)]
pub const fn check_format(format: &str, args: usize) {
    let bytes = format.as_bytes();
    let len = bytes.len();
    if len == 0 || bytes[len - 1] != 0 {
        panic!("gpu_print!: the format must end in a NUL");
    }
    let mut conversions = 0;
    let mut i = 0;
    while i < len - 1 {
        if bytes[i] == 0 {
            panic!("gpu_print!: a NUL inside the format");
        }
        if bytes[i] != b'%' {
            i += 1;
            continue;
        }
        i += 1;
        if bytes[i] == b'%' {
            i += 1;
            continue;
        }
        // Flags, width and precision.
        while matches!(bytes[i], b'-' | b'+' | b' ' | b'#' | b'.' | b'0'..=b'9') {
            i += 1;
        }
        let long_long = bytes[i] == b'l' && bytes[i + 1] == b'l';
        if long_long {
            i += 2;
        }
        let reads_64_bits = if long_long {
            matches!(bytes[i], b'd' | b'i' | b'u' | b'x' | b'X' | b'o')
        } else {
            matches!(
                bytes[i],
                b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A' | b'p'
            )
        };
        if !reads_64_bits {
            panic!(
                "gpu_print!: every argument is 64 bits wide: use %llu, %lld, %lli, %llx, %llX, %llo, %f, %e, %g, %a or %p (no %d, %u, %x, %c, %s, *)"
            );
        }
        conversions += 1;
        i += 1;
    }
    if conversions != args {
        panic!("gpu_print!: the format's conversions and the arguments differ in number");
    }
}

// The tests of `check_format`, run by the compiler in every device build
// (this module is not built for the host, where `cargo test` runs).
const _: () = {
    check_format("plain\n\0", 0);
    check_format("100%% of %llu blocks\n\0", 1);
    check_format("%llu %lld %lli %llx %llX %llo\0", 6);
    check_format("%f %8.3e %-g %+E %#a %G %F %A %p\0", 9);
    check_format("[%016llx] %.2f\0", 2);
};

#[cfg(feature = "debug-print")]
unsafe extern "C" {
    /// CUDA's device-side `printf`: prints `format` with the arguments
    /// packed at `args`, each at its natural alignment (8 bytes, as
    /// `gpu_print!` passes them). Resolved by the driver; returns the number
    /// of arguments, or a negative number on error.
    fn vprintf(format: *const u8, args: *const u8) -> i32;
}

/// `vprintf(format, args)`, for `gpu_print!`.
///
/// # Safety
/// `format` must end in a NUL, hold no other, and hold one conversion for
/// each word of `args`, each reading 64 bits: [`check_format`] with
/// `args.len()` must accept it.
#[cfg(feature = "debug-print")]
#[doc(hidden)]
#[inline(always)]
pub unsafe fn print_words(format: &str, args: &[u64]) {
    // With no conversions `vprintf` reads no argument; CUDA C passes null.
    let args = if args.is_empty() {
        core::ptr::null()
    } else {
        args.as_ptr().cast::<u8>()
    };
    // SAFETY: by the caller's contract `vprintf` reads the format up to its
    // only NUL, and for each conversion one 8-byte word of `args`, which
    // lives until the call returns.
    unsafe { vprintf(format.as_ptr(), args) };
}

/// `printf` on the device, for debugging; prints nothing unless the crate is
/// built with the feature `debug-print` (see [`prim::print`](crate::prim::print)).
///
/// `gpu_print!("format\n", args...)`: the format is a string literal (the
/// macro appends its NUL) whose conversions all read 64 bits (`%llu`,
/// `%lld`, `%llx`, `%f`, `%p`, ...: checked at compile time); each argument
/// implements [`PrintArg`](crate::prim::print::PrintArg).
#[cfg(feature = "debug-print")]
#[macro_export]
macro_rules! gpu_print {
    ($format:literal $(, $arg:expr)* $(,)?) => {{
        const FORMAT: &str = concat!($format, "\0");
        const _: () = $crate::prim::print::check_format(
            FORMAT,
            <[&str]>::len(&[$(stringify!($arg)),*]),
        );
        let args: &[u64] = &[$($crate::prim::print::PrintArg::word($arg)),*];
        // SAFETY: `check_format` has accepted `FORMAT` for `args.len()`
        // words at compile time: that is `print_words`'s contract.
        unsafe { $crate::prim::print::print_words(FORMAT, args) }
    }};
}

/// The most bytes of a file name [`print_panic`] prints.
#[cfg(feature = "debug-print")]
const FILE_NAME_BYTES: usize = 119;

/// Prints where a panic happened and in which thread, e.g.
/// `panic at gpu/src/gemm/naive.rs:42:17 (block 3,0 thread 17,0)`; the
/// panic handler calls it before it traps. Bounds checks, division by zero
/// and `unwrap` on the device thus name their Rust line.
#[cfg(feature = "debug-print")]
#[doc(hidden)]
pub fn print_panic(info: &core::panic::PanicInfo) {
    use super::{block_idx_x, block_idx_y, thread_idx_x, thread_idx_y};
    let (file, line, column) = match info.location() {
        Some(at) => (at.file(), at.line(), at.column()),
        None => ("<unknown>", 0, 0),
    };
    // `%s` reads up to a NUL and `file` has none: copy it, truncated, into a
    // buffer that ends in one (the copy cannot panic, unlike slicing).
    let mut name = [0u8; FILE_NAME_BYTES + 1];
    for (to, from) in name
        .iter_mut()
        .zip(file.as_bytes().iter().take(FILE_NAME_BYTES))
    {
        *to = *from;
    }
    const FORMAT: &str = "panic at %s:%llu:%llu (block %llu,%llu thread %llu,%llu)\n\0";
    let args = [
        name.as_ptr().addr() as u64,
        line as u64,
        column as u64,
        block_idx_x() as u64,
        block_idx_y() as u64,
        thread_idx_x() as u64,
        thread_idx_y() as u64,
    ];
    // SAFETY: the format ends in its only NUL; `%s` reads the NUL-terminated
    // `name` and each of the six `%llu` one 8-byte word of `args`; both live
    // until the call returns.
    unsafe { vprintf(FORMAT.as_ptr(), args.as_ptr().cast::<u8>()) };
}
