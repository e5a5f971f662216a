//! NCCL, bound at run time.
//!
//! `libnccl.so.2` is opened with `dlopen` (through `libloading`) the first
//! time a multi-GPU entry point needs it, so the crate builds, links and runs
//! its single-GPU work on machines without NCCL. The types and constants are
//! those of NCCL's `nccl.h` (`src/nccl.h.in` in NVIDIA/nccl), with the C names
//! kept so that every call reads like NCCL's documentation.
//!
//! Everything here is `unsafe` to call: the function pointers are NCCL's own
//! entry points, and their contracts (valid communicators, device pointers of
//! the right size on the communicator's device, a stream of that device) are
//! the caller's to keep. Only the entry points the wrapper calls are
//! resolved, so any NCCL 2 that has them loads. This file knows nothing of
//! the crate's `Error`: the wrapper (`super::call`) turns a result code into
//! one, with [`Library::error_string`] and [`result_name`].

#![allow(
    non_camel_case_types,
    non_snake_case,
    non_upper_case_globals,
    reason = "the C names of nccl.h are kept"
)]
#![allow(
    dead_code,
    reason = "the constants mirror nccl.h's enums whole (data types and operators the \
              wrapper does not use yet); the entry points are only those it calls"
)]

use std::ffi::{CStr, OsStr, OsString, c_char, c_int, c_void};
use std::fmt;
use std::marker::{PhantomData, PhantomPinned};
use std::sync::OnceLock;

use cust::sys::CUstream;

/// The environment variable that names the NCCL library to load; when it is
/// set (and not empty), only that path is tried.
pub(crate) const ENV_VAR: &str = "WARPSPEED_NCCL";

/// The names tried, in order, when [`ENV_VAR`] is not set: the dynamic
/// loader resolves them through its search path (`LD_LIBRARY_PATH`, the
/// `ldconfig` cache, the default folders).
pub(crate) const DEFAULT_NAMES: [&str; 2] = ["libnccl.so.2", "libnccl.so"];

// ---------------------------------------------------------------------------
// Types of nccl.h
// ---------------------------------------------------------------------------

/// NCCL's communicator (`struct ncclComm`): opaque, only ever behind a
/// pointer. Neither `Send`, `Sync` nor `Unpin`, as the Rustonomicon advises
/// for foreign opaque types.
#[repr(C)]
pub(crate) struct ncclComm {
    _data: [u8; 0],
    _marker: PhantomData<(*mut u8, PhantomPinned)>,
}

/// A communicator handle, `ncclComm_t` (`struct ncclComm*`).
pub(crate) type ncclComm_t = *mut ncclComm;

/// `NCCL_UNIQUE_ID_BYTES`: the size of a unique id.
pub(crate) const NCCL_UNIQUE_ID_BYTES: usize = 128;

/// `ncclUniqueId`: the token that ranks of one communicator share, made by
/// `ncclGetUniqueId` and passed by value to `ncclCommInitRank`.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct ncclUniqueId {
    /// The id's bytes, opaque to everyone but NCCL.
    pub(crate) internal: [c_char; NCCL_UNIQUE_ID_BYTES],
}

impl Default for ncclUniqueId {
    /// All zero bytes: a placeholder for `ncclGetUniqueId` to fill.
    fn default() -> Self {
        Self {
            internal: [0; NCCL_UNIQUE_ID_BYTES],
        }
    }
}

impl fmt::Debug for ncclUniqueId {
    /// The id is a secret-free but long blob: show only its size.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ncclUniqueId { .. 128 bytes }")
    }
}

/// `ncclResult_t`: every NCCL function's return code (a C enum, so an
/// `int`-sized value).
pub(crate) type ncclResult_t = c_int;

/// The call succeeded.
pub(crate) const ncclSuccess: ncclResult_t = 0;
/// A CUDA call made by NCCL failed.
pub(crate) const ncclUnhandledCudaError: ncclResult_t = 1;
/// A system call made by NCCL failed.
pub(crate) const ncclSystemError: ncclResult_t = 2;
/// An internal check failed: a bug in NCCL or memory corruption.
pub(crate) const ncclInternalError: ncclResult_t = 3;
/// An argument was invalid (a null pointer, a rank out of range, ...).
pub(crate) const ncclInvalidArgument: ncclResult_t = 4;
/// The call was used wrongly (an API misuse NCCL detected).
pub(crate) const ncclInvalidUsage: ncclResult_t = 5;
/// A remote peer failed or went away (network errors).
pub(crate) const ncclRemoteError: ncclResult_t = 6;
/// A non-blocking communicator's operation has not completed yet.
pub(crate) const ncclInProgress: ncclResult_t = 7;
/// An operation timed out (NCCL 2.30 and newer).
pub(crate) const ncclTimeout: ncclResult_t = 8;

/// `ncclDataType_t`: the element type of a collective's buffers.
pub(crate) type ncclDataType_t = c_int;

/// `i8` (also `ncclChar`).
pub(crate) const ncclInt8: ncclDataType_t = 0;
/// `u8`.
pub(crate) const ncclUint8: ncclDataType_t = 1;
/// `i32` (also `ncclInt`).
pub(crate) const ncclInt32: ncclDataType_t = 2;
/// `u32`.
pub(crate) const ncclUint32: ncclDataType_t = 3;
/// `i64`.
pub(crate) const ncclInt64: ncclDataType_t = 4;
/// `u64`.
pub(crate) const ncclUint64: ncclDataType_t = 5;
/// IEEE half (also `ncclHalf`).
pub(crate) const ncclFloat16: ncclDataType_t = 6;
/// `f32` (also `ncclFloat`).
pub(crate) const ncclFloat32: ncclDataType_t = 7;
/// `f64` (also `ncclDouble`).
pub(crate) const ncclFloat64: ncclDataType_t = 8;
/// bfloat16 (NCCL 2.10 and newer, CUDA 11 and newer).
pub(crate) const ncclBfloat16: ncclDataType_t = 9;

/// `ncclRedOp_t`: the reduction operator of a reduce or all-reduce.
pub(crate) type ncclRedOp_t = c_int;

/// Sum.
pub(crate) const ncclSum: ncclRedOp_t = 0;
/// Product.
pub(crate) const ncclProd: ncclRedOp_t = 1;
/// Maximum.
pub(crate) const ncclMax: ncclRedOp_t = 2;
/// Minimum.
pub(crate) const ncclMin: ncclRedOp_t = 3;
/// Average: the sum divided by the number of ranks (NCCL 2.10 and newer).
pub(crate) const ncclAvg: ncclRedOp_t = 4;

/// The name of a result code as nccl.h spells it, for messages.
pub(crate) fn result_name(result: ncclResult_t) -> &'static str {
    match result {
        ncclSuccess => "ncclSuccess",
        ncclUnhandledCudaError => "ncclUnhandledCudaError",
        ncclSystemError => "ncclSystemError",
        ncclInternalError => "ncclInternalError",
        ncclInvalidArgument => "ncclInvalidArgument",
        ncclInvalidUsage => "ncclInvalidUsage",
        ncclRemoteError => "ncclRemoteError",
        ncclInProgress => "ncclInProgress",
        ncclTimeout => "ncclTimeout",
        _ => "unknown ncclResult_t",
    }
}

// ---------------------------------------------------------------------------
// Entry points: their C prototypes, as function-pointer types
// ---------------------------------------------------------------------------

/// `ncclResult_t ncclGetVersion(int* version)`.
pub(crate) type GetVersionFn = unsafe extern "C" fn(version: *mut c_int) -> ncclResult_t;
/// `ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId)`.
pub(crate) type GetUniqueIdFn = unsafe extern "C" fn(unique_id: *mut ncclUniqueId) -> ncclResult_t;
/// `ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank)`;
/// the id is passed by value.
pub(crate) type CommInitRankFn = unsafe extern "C" fn(
    comm: *mut ncclComm_t,
    nranks: c_int,
    comm_id: ncclUniqueId,
    rank: c_int,
) -> ncclResult_t;
/// `ncclResult_t ncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist)`:
/// `comm` has room for `ndev` handles; a null `devlist` means devices `0..ndev`.
pub(crate) type CommInitAllFn =
    unsafe extern "C" fn(comm: *mut ncclComm_t, ndev: c_int, devlist: *const c_int) -> ncclResult_t;
/// `ncclResult_t ncclCommDestroy(ncclComm_t comm)`.
pub(crate) type CommFn = unsafe extern "C" fn(comm: ncclComm_t) -> ncclResult_t;
/// `ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
/// ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)`.
pub(crate) type AllReduceFn = unsafe extern "C" fn(
    sendbuff: *const c_void,
    recvbuff: *mut c_void,
    count: usize,
    datatype: ncclDataType_t,
    op: ncclRedOp_t,
    comm: ncclComm_t,
    stream: CUstream,
) -> ncclResult_t;
/// `ncclResult_t ncclGroupStart(void)` (and `ncclGroupEnd`, same shape).
pub(crate) type GroupFn = unsafe extern "C" fn() -> ncclResult_t;
/// `const char* ncclGetErrorString(ncclResult_t result)`.
pub(crate) type GetErrorStringFn = unsafe extern "C" fn(result: ncclResult_t) -> *const c_char;

// ---------------------------------------------------------------------------
// The loaded library
// ---------------------------------------------------------------------------

/// libnccl, opened, with the entry points this crate uses resolved.
///
/// The function pointers point into the loaded library and stay valid while
/// this value lives; [`Library::load`] keeps its one instance for the life of
/// the process, so pointers taken from it are valid for good.
pub(crate) struct Library {
    /// The path or name the library was opened by, for messages.
    pub(crate) path: String,
    /// `ncclGetVersion`.
    pub(crate) ncclGetVersion: GetVersionFn,
    /// `ncclGetUniqueId`.
    pub(crate) ncclGetUniqueId: GetUniqueIdFn,
    /// `ncclCommInitRank`.
    pub(crate) ncclCommInitRank: CommInitRankFn,
    /// `ncclCommInitAll`.
    pub(crate) ncclCommInitAll: CommInitAllFn,
    /// `ncclCommDestroy`.
    pub(crate) ncclCommDestroy: CommFn,
    /// `ncclAllReduce`.
    pub(crate) ncclAllReduce: AllReduceFn,
    /// `ncclGroupStart`.
    pub(crate) ncclGroupStart: GroupFn,
    /// `ncclGroupEnd`.
    pub(crate) ncclGroupEnd: GroupFn,
    /// `ncclGetErrorString`.
    pub(crate) ncclGetErrorString: GetErrorStringFn,
    /// The open library: keeps every pointer above valid. Declared last, so
    /// it is dropped last.
    _lib: libloading::Library,
}

impl fmt::Debug for Library {
    /// The path it was loaded from.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Library")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// Looks `name` (NUL-terminated) up in `lib` and copies the pointer out.
///
/// # Safety
///
/// `T` must be the exact C type of the symbol, and the copied pointer must
/// not be used after `lib` is dropped.
unsafe fn symbol<T: Copy>(lib: &libloading::Library, name: &[u8]) -> Result<T, String> {
    // SAFETY: the caller guarantees that `T` is the symbol's type; the
    // `Symbol` borrow ends here, and the caller keeps `lib` alive for as
    // long as the copied pointer is used.
    unsafe { lib.get::<T>(name) }.map(|s| *s).map_err(|e| {
        let shown = String::from_utf8_lossy(name.strip_suffix(b"\0").unwrap_or(name));
        format!("symbol {shown} not found: {e}")
    })
}

/// Builds a [`Library`] from an open `libloading::Library`, resolving each
/// listed field from the symbol of the same name.
macro_rules! resolve {
    ($lib:ident, $path:expr; $($name:ident),* $(,)?) => {
        Library {
            path: $path,
            $(
                // SAFETY: the field and the symbol have the same name, so the
                // type `symbol` is asked for is the field's type, which is
                // declared above from nccl.h's prototype of that function;
                // the pointer lives in the same `Library` as `_lib`, which
                // keeps the shared object loaded while the pointer exists.
                $name: unsafe {
                    symbol(&$lib, concat!(stringify!($name), "\0").as_bytes())
                }?,
            )*
            _lib: $lib,
        }
    };
}

/// The process's one loaded NCCL, or the reason none could be loaded.
static NCCL: OnceLock<Result<Library, String>> = OnceLock::new();

impl Library {
    /// The NCCL of this process: opened on first use from the candidates
    /// [`candidates`] gives, then kept (success or failure) for the life of
    /// the process.
    pub(crate) fn load() -> Result<&'static Library, String> {
        NCCL.get_or_init(|| {
            let from_env = from_env();
            let tried = candidates();
            Self::open(&tried).map_err(|e| {
                if from_env.is_some() {
                    format!(
                        "{e}\n({ENV_VAR} is set, so only that path was tried; unset it to use \
                         the system search path)"
                    )
                } else {
                    e
                }
            })
        })
        .as_ref()
        .map_err(Clone::clone)
    }

    /// Opens the first of `candidates` (paths, or bare names for the dynamic
    /// loader's search path) that loads and has every entry point. The error
    /// lists each candidate with the reason it failed, and how to install
    /// NCCL. Not cached: [`Library::load`] is the cached way in.
    pub(crate) fn open<P: AsRef<OsStr>>(candidates: &[P]) -> Result<Library, String> {
        let mut failures = Vec::with_capacity(candidates.len());
        for candidate in candidates {
            let candidate = candidate.as_ref();
            let shown = candidate.to_string_lossy().into_owned();
            // SAFETY: loading a shared object runs its initialisers; the
            // candidates name NCCL (by the user's choice through
            // WARPSPEED_NCCL, or by NCCL's own soname), whose initialisers
            // only set up NCCL's internal state and require nothing of us.
            let lib = match unsafe { libloading::Library::new(candidate) } {
                Ok(lib) => lib,
                Err(e) => {
                    failures.push(format!("  {shown}: {e}"));
                    continue;
                }
            };
            let resolved = Self::resolve_all(lib, shown.clone());
            match resolved {
                Ok(library) => return Ok(library),
                Err(e) => failures.push(format!("  {shown}: loaded, but {e}")),
            }
        }
        Err(format!(
            "NCCL could not be loaded; tried, in order:\n{}\n\
             To fix: install NCCL (libnccl2 from NVIDIA's CUDA repositories, or from PyPI \
             `pip install nvidia-nccl-cu12` for CUDA 12 / `nvidia-nccl-cu13` for CUDA 13, whose \
             lib/ folder under site-packages/nvidia/ holds libnccl.so.2), then set \
             {ENV_VAR}=/path/to/libnccl.so.2 or add its folder to LD_LIBRARY_PATH.",
            if failures.is_empty() {
                "  (no candidates)".to_owned()
            } else {
                failures.join("\n")
            }
        ))
    }

    /// Resolves every entry point in `lib`, opened from `path`.
    fn resolve_all(lib: libloading::Library, path: String) -> Result<Library, String> {
        Ok(resolve!(lib, path;
            ncclGetVersion,
            ncclGetUniqueId,
            ncclCommInitRank,
            ncclCommInitAll,
            ncclCommDestroy,
            ncclAllReduce,
            ncclGroupStart,
            ncclGroupEnd,
            ncclGetErrorString,
        ))
    }

    /// NCCL's version as (major, minor, patch), from `ncclGetVersion`.
    pub(crate) fn version(&self) -> (u32, u32, u32) {
        let mut code: c_int = 0;
        // SAFETY: `ncclGetVersion` only writes one `int` through the pointer,
        // which points to a live local; it fails only for a null pointer.
        let result = unsafe { (self.ncclGetVersion)(&raw mut code) };
        debug_assert_eq!(result, ncclSuccess, "ncclGetVersion with a valid pointer");
        decode_version(code)
    }

    /// NCCL's text for a result code (`ncclGetErrorString`).
    pub(crate) fn error_string(&self, result: ncclResult_t) -> String {
        // SAFETY: `ncclGetErrorString` takes any code (unknown ones get a
        // generic text) and returns a pointer to a static NUL-terminated
        // string, or, defensively handled here, null.
        let text = unsafe { (self.ncclGetErrorString)(result) };
        if text.is_null() {
            return "no error string".to_owned();
        }
        // SAFETY: non-null, NUL-terminated and static (see above), so it is
        // valid to read for the borrow `CStr::from_ptr` makes.
        unsafe { CStr::from_ptr(text) }
            .to_string_lossy()
            .into_owned()
    }
}

/// The value of [`ENV_VAR`], when it is set and not empty.
fn from_env() -> Option<OsString> {
    std::env::var_os(ENV_VAR).filter(|v| !v.is_empty())
}

/// What [`Library::load`] tries, in order: [`ENV_VAR`]'s path alone when it
/// is set (and not empty), else [`DEFAULT_NAMES`].
pub(crate) fn candidates() -> Vec<OsString> {
    candidates_for(from_env())
}

/// The candidates for a given value of [`ENV_VAR`] (`None`: not set).
fn candidates_for(env_value: Option<OsString>) -> Vec<OsString> {
    match env_value.filter(|v| !v.is_empty()) {
        Some(path) => vec![path],
        None => DEFAULT_NAMES.iter().map(Into::into).collect(),
    }
}

/// Decodes `ncclGetVersion`'s integer into (major, minor, patch): NCCL 2.9
/// and newer encode `major*10000 + minor*100 + patch`, older ones
/// `major*1000 + minor*100 + patch` (nccl.h's `NCCL_VERSION` macro).
pub(crate) fn decode_version(code: c_int) -> (u32, u32, u32) {
    let code = code.max(0).unsigned_abs();
    if code >= 10000 {
        (code / 10000, code % 10000 / 100, code % 100)
    } else {
        (code / 1000, code % 1000 / 100, code % 100)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_codes_are_nccl_h() {
        assert_eq!(
            [
                ncclSuccess,
                ncclUnhandledCudaError,
                ncclSystemError,
                ncclInternalError,
                ncclInvalidArgument,
                ncclInvalidUsage,
                ncclRemoteError,
                ncclInProgress,
                ncclTimeout,
            ],
            [0, 1, 2, 3, 4, 5, 6, 7, 8]
        );
        assert_eq!(result_name(ncclInvalidUsage), "ncclInvalidUsage");
        assert_eq!(result_name(1234), "unknown ncclResult_t");
    }

    #[test]
    fn data_types_are_nccl_h() {
        assert_eq!(
            [
                ncclInt8,
                ncclUint8,
                ncclInt32,
                ncclUint32,
                ncclInt64,
                ncclUint64,
                ncclFloat16,
                ncclFloat32,
                ncclFloat64,
                ncclBfloat16,
            ],
            [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
        );
    }

    #[test]
    fn reduction_ops_are_nccl_h() {
        assert_eq!(
            [ncclSum, ncclProd, ncclMax, ncclMin, ncclAvg],
            [0, 1, 2, 3, 4]
        );
    }

    #[test]
    fn abi_sizes() {
        assert_eq!(size_of::<ncclUniqueId>(), 128);
        assert_eq!(align_of::<ncclUniqueId>(), 1);
        assert_eq!(size_of::<ncclResult_t>(), 4);
        assert_eq!(size_of::<ncclComm_t>(), size_of::<*mut c_void>());
        assert_eq!(size_of::<ncclComm>(), 0);
    }

    #[test]
    fn version_decoding() {
        assert_eq!(decode_version(22105), (2, 21, 5));
        assert_eq!(decode_version(23203), (2, 32, 3));
        assert_eq!(decode_version(2708), (2, 7, 8));
        assert_eq!(decode_version(-1), (0, 0, 0));
    }

    #[test]
    fn missing_library_names_the_path_and_the_fix() {
        let err = Library::open(&["/nonexistent/libnccl.so.2"]).unwrap_err();
        assert!(err.contains("/nonexistent/libnccl.so.2: "), "{err}");
        assert!(err.contains(ENV_VAR), "{err}");
        assert!(err.contains("nvidia-nccl-cu12"), "{err}");
        assert!(err.contains("LD_LIBRARY_PATH"), "{err}");
    }

    #[test]
    fn every_candidate_is_listed_in_order() {
        let err = Library::open(&["/nonexistent/a.so", "/nonexistent/b.so"]).unwrap_err();
        let a = err.find("/nonexistent/a.so: ").expect(&err);
        let b = err.find("/nonexistent/b.so: ").expect(&err);
        assert!(a < b, "{err}");
    }

    #[test]
    fn env_path_is_the_only_candidate() {
        assert_eq!(
            candidates_for(Some("/nonexistent".into())),
            [OsString::from("/nonexistent")]
        );
        let err = Library::open(&candidates_for(Some("/nonexistent".into()))).unwrap_err();
        assert!(err.contains("/nonexistent: "), "{err}");
    }

    #[test]
    fn load_names_every_candidate_or_gives_nccl_2() {
        // Holds with or without NCCL installed, and for any WARPSPEED_NCCL.
        match Library::load() {
            Ok(lib) => assert!(lib.version().0 >= 2, "{lib:?}: {:?}", lib.version()),
            Err(err) => {
                for candidate in candidates() {
                    let shown = format!("{}: ", candidate.to_string_lossy());
                    assert!(err.contains(&shown), "{err}");
                }
                assert_eq!(
                    from_env().is_some(),
                    err.contains("only that path"),
                    "{err}"
                );
            }
        }
        // Cached: the same outcome again.
        assert_eq!(Library::load().is_ok(), Library::load().is_ok());
    }

    #[test]
    fn default_candidates() {
        let defaults = [OsString::from("libnccl.so.2"), OsString::from("libnccl.so")];
        assert_eq!(candidates_for(None), defaults);
        assert_eq!(candidates_for(Some(OsString::new())), defaults);
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn a_library_without_nccl_symbols_is_refused() {
        // glibc's libc is loaded in every test process and has no NCCL
        // entry points.
        let err = Library::open(&["libc.so.6"]).unwrap_err();
        assert!(
            err.contains("libc.so.6: loaded, but symbol ncclGetVersion not found"),
            "{err}"
        );
    }
}
