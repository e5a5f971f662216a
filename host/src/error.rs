//! The one error type of the crate.

use crate::driver::{self, code};
use std::fmt;

/// What can go wrong. Every public function returns `Result<_, Error>`.
///
/// Mistakes in the arguments of a call are [`Error::LengthMismatch`],
/// [`Error::ShapeMismatch`], [`Error::Misaligned`], [`Error::Unsupported`]
/// and [`Error::InvalidArgument`] ([`Error::is_argument_error`] tells them
/// apart from failures of the device); all are returned before anything is
/// launched.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// No CUDA device is usable: no driver, no GPU, or a stub driver library.
    NoDevice {
        /// Why, as the driver said it.
        reason: String,
    },
    /// A CUDA driver call failed.
    Cuda {
        /// The driver's code (`CUresult`), e.g. 700; see [`crate::code`].
        code: u32,
        /// The driver's name for it, e.g. `CUDA_ERROR_ILLEGAL_ADDRESS`.
        name: String,
        /// The driver's description.
        description: String,
        /// What the library was doing: the kernel and launch configuration,
        /// or the call.
        during: String,
    },
    /// The driver cannot load the embedded PTX.
    UnsupportedPtx {
        /// The PTX target the library chose for this device.
        target: &'static str,
        /// The driver's code.
        code: u32,
        /// The JIT compiler's log.
        log: String,
    },
    /// The device is older than the oldest PTX target shipped.
    UnsupportedDevice {
        /// The device's name.
        name: String,
        /// Its compute capability, `(major, minor)`.
        compute_capability: (u32, u32),
    },
    /// The loaded module lacks a kernel the library declares (a build
    /// inconsistency, or a `WARPSPEED_PTX_FILE` from other sources), caught
    /// by the first call that launches it: kernels are resolved on first
    /// use.
    MissingEntry {
        /// The entry's name.
        name: String,
    },
    /// A slice has the wrong number of elements.
    LengthMismatch {
        /// Which argument, e.g. "the column sums' output".
        what: &'static str,
        /// The length the call needs.
        expected: usize,
        /// The length given.
        given: usize,
    },
    /// A matrix has the wrong `(width, height)`: elements per row, then
    /// rows (the order of [`Matrix::new`](crate::Matrix::new)).
    ShapeMismatch {
        /// Which argument, e.g. "the transpose's destination".
        what: &'static str,
        /// The shape the call needs.
        expected: (usize, usize),
        /// The shape given.
        given: (usize, usize),
    },
    /// A buffer's start or row pitch is not aligned as a kernel needs.
    Misaligned {
        /// Which argument and what the kernel loads.
        what: &'static str,
        /// The alignment it needs, in bytes.
        alignment: usize,
    },
    /// The chosen ladder step does not do what was asked (an operator it
    /// does not compute, an element size it does not move, a block size it
    /// is not compiled for).
    Unsupported {
        /// The step's name.
        variant: &'static str,
        /// What it does not do, and what does.
        reason: String,
    },
    /// A buffer given to a [`Context`](crate::Context) lives on another
    /// device (or, for an adopted allocation, in another CUDA context).
    WrongDevice {
        /// The context's device ordinal.
        expected: u32,
        /// The buffer's device ordinal.
        found: u32,
    },
    /// A call that cannot be recorded in a graph, made on a queue that
    /// records one ([`Context::capture`](crate::Context::capture)): one
    /// that waits on the host (`sum` returning a value, `synchronize`, a
    /// copy to or from host memory) or uses memory a graph cannot keep
    /// alive. Its `_into` form, or the same call outside the capture,
    /// works.
    InCapture {
        /// What was refused, and what to do instead.
        what: String,
    },
    /// Any other unacceptable argument (sizes beyond the device's limits,
    /// views that do not fit their slices); the message says why.
    InvalidArgument(String),
    /// NCCL, which the multi-GPU functions ([`crate::nccl`]) run on, cannot
    /// be loaded: `libnccl.so.2` is not found, or lacks a function.
    NcclUnavailable {
        /// Every place tried and what failed, and how to install it.
        reason: String,
    },
    /// An NCCL call failed.
    Nccl {
        /// NCCL's code (`ncclResult_t`), e.g. 4 for an invalid argument.
        code: i32,
        /// NCCL's description of it.
        description: String,
        /// What the library was doing.
        during: String,
    },
    /// An earlier kernel fault (an illegal address, a trap) destroyed the CUDA
    /// context. No later call on it can succeed; create a new process.
    ContextLost {
        /// The failure that destroyed the context (also
        /// [`std::error::Error::source`]).
        cause: Box<Error>,
    },
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error from a driver call whose code is `code` (nonzero).
    pub(crate) fn driver(code: u32, during: impl Into<String>) -> Error {
        let (name, description) = driver::describe(code);
        Error::Cuda {
            code,
            name,
            description,
            during: during.into(),
        }
    }

    /// The error for `what` (a stream, an allocation, a cudarc slice) of a
    /// CUDA context other than device `expected`'s primary one, the
    /// library's: on device `found`.
    pub(crate) fn foreign_context(expected: u32, found: u32, what: &str) -> Error {
        if found != expected {
            Error::WrongDevice { expected, found }
        } else {
            Error::InvalidArgument(format!(
                "{what} of another CUDA context of device {expected} (not its primary \
                 context, which the library uses)"
            ))
        }
    }

    /// An error from a `cust` call.
    pub(crate) fn cust(error: cust::error::CudaError, during: impl Into<String>) -> Error {
        Error::driver(error as u32, during)
    }

    /// Whether this error leaves the CUDA context unusable: a kernel fault is
    /// "sticky" and every later call in the process fails.
    pub fn is_sticky(&self) -> bool {
        match self {
            Error::Cuda { code: c, .. } => matches!(
                *c,
                code::ILLEGAL_ADDRESS
                    | code::LAUNCH_TIMEOUT
                    | code::ASSERT
                    | code::HARDWARE_STACK_ERROR..=code::LAUNCH_FAILED
            ),
            Error::ContextLost { .. } => true,
            _ => false,
        }
    }

    /// Whether this error is a mistake in a call's arguments, reported before
    /// any launch (the context stays usable).
    pub fn is_argument_error(&self) -> bool {
        matches!(
            self,
            Error::LengthMismatch { .. }
                | Error::ShapeMismatch { .. }
                | Error::Misaligned { .. }
                | Error::Unsupported { .. }
                | Error::WrongDevice { .. }
                | Error::InvalidArgument(_)
                | Error::InCapture { .. }
        )
    }
}

/// Maps a raw driver result to `Ok` or an [`Error::Cuda`].
pub(crate) fn check(status: driver::CUresult, during: impl FnOnce() -> String) -> Result<()> {
    if status == driver::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(Error::driver(status, during()))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NoDevice { reason } => write!(f, "no CUDA device found: {reason}"),
            Error::Cuda {
                code,
                name,
                description,
                during,
            } => {
                write!(
                    f,
                    "CUDA error {name} ({code}): {description}, while {during}"
                )
            }
            Error::UnsupportedPtx { target, code, log } => {
                let (name, _) = driver::describe(*code);
                write!(
                    f,
                    "the CUDA driver cannot load the {target} PTX ({name}); it may be older than \
                     the PTX version (update the NVIDIA driver). JIT log: {}",
                    if log.is_empty() {
                        "(empty)"
                    } else {
                        log.trim()
                    }
                )
            }
            Error::UnsupportedDevice {
                name,
                compute_capability: (major, minor),
            } => write!(
                f,
                "{name} has compute capability {major}.{minor}; warpspeed needs 7.0 (Volta) or newer"
            ),
            Error::MissingEntry { name } => write!(
                f,
                "kernel `{name}` is missing from the loaded PTX (rebuild it: `cargo xtask build-ptx`)"
            ),
            Error::LengthMismatch {
                what,
                expected,
                given,
            } => write!(f, "{what} must hold {expected} elements, but holds {given}"),
            Error::ShapeMismatch {
                what,
                expected: (ew, eh),
                given: (gw, gh),
            } => {
                write!(
                    f,
                    "{what} must be {ew} wide × {eh} high ({eh} rows of {ew}), but is {gw} wide \
                     × {gh} high"
                )?;
                if (gw, gh) == (eh, ew) {
                    f.write_str(
                        " (transposed: Matrix::new takes the width, then the height, so an m × k \
                         operand in BLAS terms is Matrix::new(data, k, m))",
                    )?;
                }
                Ok(())
            }
            Error::Misaligned { what, alignment } => write!(
                f,
                "{what}: start and row pitch must be multiples of {alignment} bytes"
            ),
            Error::Unsupported { variant, reason } => {
                write!(f, "the {variant} step {reason}")
            }
            Error::WrongDevice { expected, found } => write!(
                f,
                "a buffer of device {found} given to a context of device {expected}"
            ),
            Error::InvalidArgument(message) => write!(f, "invalid argument: {message}"),
            Error::InCapture { what } => write!(
                f,
                "{what} cannot be recorded in a graph (the queue is capturing one)"
            ),
            Error::NcclUnavailable { reason } => write!(f, "NCCL is not available: {reason}"),
            Error::Nccl {
                code,
                description,
                during,
            } => write!(f, "NCCL error {code}: {description}, while {during}"),
            Error::ContextLost { cause } => write!(
                f,
                "the CUDA context was lost after an earlier kernel fault and cannot be used \
                 again in this process (cause: {cause})"
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::ContextLost { cause } => Some(&**cause),
            _ => None,
        }
    }
}
