//! The one error type of the crate.

use crate::driver;
use std::fmt;

/// What can go wrong. Every public function returns `Result<_, Error>`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// No CUDA device is usable: no driver, no GPU, or a stub driver library.
    NoDevice { reason: String },
    /// A CUDA driver call failed.
    Cuda {
        /// The driver's code (`CUresult`), e.g. 700.
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
        code: u32,
        /// The JIT compiler's log.
        log: String,
    },
    /// The device is older than the oldest PTX target shipped.
    UnsupportedDevice {
        name: String,
        compute_capability: (u32, u32),
    },
    /// The loaded module lacks a kernel the library declares (a build
    /// inconsistency, caught when the module loads).
    MissingEntry { name: String },
    /// A call's arguments are not acceptable; the message says why.
    InvalidArgument(String),
    /// An earlier kernel fault (an illegal address, a trap) destroyed the CUDA
    /// context. No later call on it can succeed; create a new process.
    ContextLost {
        /// The failure that destroyed the context.
        cause: String,
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

    /// An error from a `cust` call.
    pub(crate) fn cust(error: cust::error::CudaError, during: impl Into<String>) -> Error {
        Error::driver(error as u32, during)
    }

    /// Whether this error leaves the CUDA context unusable: a kernel fault is
    /// "sticky" and every later call in the process fails.
    pub fn is_sticky(&self) -> bool {
        matches!(
            self,
            Error::Cuda {
                code: 700 | 702 | 714..=719,
                ..
            } | Error::ContextLost { .. }
        )
    }
}

/// Maps a raw driver result to `Ok` or an [`Error::Cuda`].
pub(crate) fn check(code: driver::CUresult, during: impl FnOnce() -> String) -> Result<()> {
    if code == driver::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(Error::driver(code, during()))
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
            Error::InvalidArgument(message) => write!(f, "invalid argument: {message}"),
            Error::ContextLost { cause } => write!(
                f,
                "the CUDA context was lost after an earlier kernel fault and cannot be used \
                 again in this process (cause: {cause})"
            ),
        }
    }
}

impl std::error::Error for Error {}
