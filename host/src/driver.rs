//! The few CUDA driver entry points this crate calls directly.
//!
//! They are declared here with the result as a plain `u32` rather than
//! `cust::sys`'s Rust enum: a driver newer than cust's bindings returns codes
//! that enum does not have (222, "unsupported PTX version", among them), and
//! an unknown value in a Rust enum is undefined behaviour. Everything else
//! goes through `cust`.

#![allow(non_snake_case)]

use cust::sys::{CUcontext, CUevent, CUfunction, CUmodule, CUstream};
use std::ffi::{CStr, c_char, c_int, c_uint, c_void};

pub(crate) type CUresult = u32;
/// `CUgraph`: a graph of work, as a stream capture records it.
pub(crate) type CUgraph = *mut c_void;
/// `CUgraphExec`: a graph instantiated for launching.
pub(crate) type CUgraphExec = *mut c_void;
/// `CU_STREAM_NON_BLOCKING`: a stream that does not wait for the legacy
/// default stream, nor it for this one (cust's `Stream::new` drops the
/// flag).
pub(crate) const CU_STREAM_NON_BLOCKING: c_uint = 1;
/// `CU_STREAM_CAPTURE_MODE_RELAXED`: the capturing thread may still make
/// calls the driver cannot capture (allocating, querying) outside it.
pub(crate) const CU_STREAM_CAPTURE_MODE_RELAXED: c_uint = 2;
/// `CU_MEMHOSTALLOC_PORTABLE`: page-locked memory every CUDA context may
/// copy from and to.
pub(crate) const CU_MEMHOSTALLOC_PORTABLE: c_uint = 1;
pub(crate) const CUDA_SUCCESS: CUresult = 0;

/// Named `CUresult` values the library branches on (`cuda.h`).
pub mod code {
    /// `CUDA_ERROR_STUB_LIBRARY`: the driver library is a stub (no driver).
    pub const STUB_LIBRARY: u32 = 34;
    /// `CUDA_ERROR_INSUFFICIENT_DRIVER`: the driver is older than the runtime.
    pub const INSUFFICIENT_DRIVER: u32 = 35;
    /// `CUDA_ERROR_NO_DEVICE`.
    pub const NO_DEVICE: u32 = 100;
    /// `CUDA_ERROR_INVALID_IMAGE`: the module image is not valid.
    pub const INVALID_IMAGE: u32 = 200;
    /// `CUDA_ERROR_NO_BINARY_FOR_GPU`.
    pub const NO_BINARY_FOR_GPU: u32 = 209;
    /// `CUDA_ERROR_INVALID_PTX`: the JIT compiler rejected the PTX.
    pub const INVALID_PTX: u32 = 218;
    /// `CUDA_ERROR_JIT_COMPILER_NOT_FOUND`.
    pub const JIT_COMPILER_NOT_FOUND: u32 = 221;
    /// `CUDA_ERROR_UNSUPPORTED_PTX_VERSION`: the driver is older than the PTX.
    pub const UNSUPPORTED_PTX_VERSION: u32 = 222;
    /// `CUDA_ERROR_SHARED_OBJECT_INIT_FAILED`: the driver failed to start
    /// (e.g. no `/dev/nvidia*`).
    pub const SHARED_OBJECT_INIT_FAILED: u32 = 303;
    /// `CUDA_ERROR_OUT_OF_MEMORY`: an allocation found too little free
    /// device memory.
    pub const OUT_OF_MEMORY: u32 = 2;
    /// `CUDA_ERROR_NOT_FOUND`: a named symbol (a kernel, say) is not in
    /// the module.
    pub const NOT_FOUND: u32 = 500;
    /// `CUDA_ERROR_ILLEGAL_ADDRESS`: a kernel accessed memory it may not.
    pub const ILLEGAL_ADDRESS: u32 = 700;
    /// `CUDA_ERROR_LAUNCH_TIMEOUT`.
    pub const LAUNCH_TIMEOUT: u32 = 702;
    /// `CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED`.
    pub const PEER_ACCESS_ALREADY_ENABLED: u32 = 704;
    /// `CUDA_ERROR_ASSERT`: a device-side assertion failed; the context
    /// is lost, as after a fault.
    pub const ASSERT: u32 = 710;
    /// `CUDA_ERROR_HARDWARE_STACK_ERROR`, the first of the kernel faults
    /// that end at `CUDA_ERROR_LAUNCH_FAILED` (714 to 719: stack error,
    /// illegal instruction, misaligned address, invalid address space,
    /// invalid program counter, launch failure, e.g. a `trap`).
    pub const HARDWARE_STACK_ERROR: u32 = 714;
    /// `CUDA_ERROR_LAUNCH_FAILED`: an exception during the kernel (a `trap`).
    pub const LAUNCH_FAILED: u32 = 719;
}

/// `CUjit_option` values used when loading PTX.
pub(crate) const CU_JIT_ERROR_LOG_BUFFER: c_uint = 5;
pub(crate) const CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES: c_uint = 6;
/// `CU_JIT_GENERATE_LINE_INFO`: keep the PTX's `.loc` line tables.
pub(crate) const CU_JIT_GENERATE_LINE_INFO: c_uint = 13;

/// `CUevent_flags`: an event that records no time (cheaper to record and to
/// wait on; used for ordering only).
pub(crate) const CU_EVENT_DISABLE_TIMING: c_uint = 0x2;

/// `CUpointer_attribute`: the ordinal of the device a pointer's memory is on.
pub(crate) const CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: c_int = 9;
/// `CU_POINTER_ATTRIBUTE_CONTEXT`: the CUDA context an allocation belongs to.
pub(crate) const CU_POINTER_ATTRIBUTE_CONTEXT: c_int = 1;

/// `CUfunction_attribute` values read by [`crate::Context::kernel_resources`].
pub(crate) mod function_attribute {
    use std::ffi::c_int;
    pub const MAX_THREADS_PER_BLOCK: c_int = 0;
    pub const SHARED_SIZE_BYTES: c_int = 1;
    pub const LOCAL_SIZE_BYTES: c_int = 3;
    pub const NUM_REGS: c_int = 4;
}

/// `CUtensorMap`: 128 bytes the driver encodes, 64-byte aligned.
#[repr(C, align(64))]
pub(crate) struct TensorMapBytes(pub [u64; 16]);

/// `cuTensorMapEncodeTiled`'s enumerations, as `cuda.h` numbers them.
pub(crate) mod tensor_map {
    use std::ffi::c_uint;
    /// `CU_TENSOR_MAP_DATA_TYPE_FLOAT32`.
    pub const FLOAT32: c_uint = 7;
    /// `CU_TENSOR_MAP_INTERLEAVE_NONE`, `CU_TENSOR_MAP_SWIZZLE_NONE`.
    pub const NONE: c_uint = 0;
    /// `CU_TENSOR_MAP_SWIZZLE_32B`.
    pub const SWIZZLE_32B: c_uint = 1;
    /// `CU_TENSOR_MAP_SWIZZLE_128B`.
    pub const SWIZZLE_128B: c_uint = 3;
    /// `CU_TENSOR_MAP_L2_PROMOTION_L2_256B`.
    pub const L2_256B: c_uint = 3;
    /// `CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE`: zeros outside the tensor.
    pub const OOB_ZERO: c_uint = 0;
}

/// `CUfunction_attribute`: the per-kernel opt-in above 48 KiB of dynamic shared memory.
pub(crate) const CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: c_int = 8;

/// `CUdevice_attribute` values read into [`crate::DeviceInfo`].
pub(crate) mod attribute {
    use std::ffi::c_int;
    pub const MAX_THREADS_PER_BLOCK: c_int = 1;
    pub const MAX_BLOCK_DIM_X: c_int = 2;
    pub const MAX_BLOCK_DIM_Y: c_int = 3;
    pub const MAX_GRID_DIM_X: c_int = 5;
    pub const MAX_GRID_DIM_Y: c_int = 6;
    pub const MAX_SHARED_MEMORY_PER_BLOCK: c_int = 8;
    pub const MULTIPROCESSOR_COUNT: c_int = 16;
    pub const MEMORY_CLOCK_RATE_KHZ: c_int = 36;
    pub const GLOBAL_MEMORY_BUS_WIDTH: c_int = 37;
    pub const L2_CACHE_SIZE: c_int = 38;
    pub const MAX_THREADS_PER_MULTIPROCESSOR: c_int = 39;
    pub const COMPUTE_CAPABILITY_MAJOR: c_int = 75;
    pub const COMPUTE_CAPABILITY_MINOR: c_int = 76;
    pub const MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: c_int = 97;
}

#[link(name = "cuda")]
unsafe extern "C" {
    pub(crate) fn cuInit(flags: c_uint) -> CUresult;
    pub(crate) fn cuCtxGetCurrent(context: *mut CUcontext) -> CUresult;
    pub(crate) fn cuCtxSetCurrent(context: CUcontext) -> CUresult;
    pub(crate) fn cuCtxEnablePeerAccess(peer: CUcontext, flags: c_uint) -> CUresult;
    pub(crate) fn cuDeviceCanAccessPeer(can: *mut c_int, device: c_int, peer: c_int) -> CUresult;
    pub(crate) fn cuDeviceGetAttribute(
        value: *mut c_int,
        attribute: c_int,
        device: c_int,
    ) -> CUresult;
    pub(crate) fn cuModuleLoadDataEx(
        module: *mut CUmodule,
        image: *const c_void,
        num_options: c_uint,
        options: *mut c_uint,
        values: *mut *mut c_void,
    ) -> CUresult;
    pub(crate) fn cuModuleUnload(module: CUmodule) -> CUresult;
    pub(crate) fn cuPointerGetAttribute(
        data: *mut c_void,
        attribute: c_int,
        pointer: u64,
    ) -> CUresult;
    pub(crate) fn cuModuleGetGlobal_v2(
        address: *mut u64,
        bytes: *mut usize,
        module: CUmodule,
        name: *const c_char,
    ) -> CUresult;
    pub(crate) fn cuMemcpyHtoDAsync_v2(
        dst: u64,
        src: *const c_void,
        bytes: usize,
        stream: CUstream,
    ) -> CUresult;
    pub(crate) fn cuModuleGetFunction(
        function: *mut CUfunction,
        module: CUmodule,
        name: *const c_char,
    ) -> CUresult;
    pub(crate) fn cuFuncGetAttribute(
        value: *mut c_int,
        attribute: c_int,
        function: CUfunction,
    ) -> CUresult;
    pub(crate) fn cuFuncSetAttribute(
        function: CUfunction,
        attribute: c_int,
        value: c_int,
    ) -> CUresult;
    pub(crate) fn cuOccupancyMaxActiveBlocksPerMultiprocessor(
        blocks: *mut c_int,
        function: CUfunction,
        block_size: c_int,
        dynamic_shared_bytes: usize,
    ) -> CUresult;
    pub(crate) fn cuLaunchKernel(
        function: CUfunction,
        grid_x: c_uint,
        grid_y: c_uint,
        grid_z: c_uint,
        block_x: c_uint,
        block_y: c_uint,
        block_z: c_uint,
        shared_bytes: c_uint,
        stream: CUstream,
        params: *mut *mut c_void,
        extra: *mut *mut c_void,
    ) -> CUresult;
    pub(crate) fn cuMemcpyDtoH_v2(dst: *mut c_void, src: u64, bytes: usize) -> CUresult;
    pub(crate) fn cuMemcpyDtoDAsync_v2(
        dst: u64,
        src: u64,
        bytes: usize,
        stream: CUstream,
    ) -> CUresult;
    pub(crate) fn cuEventCreate(event: *mut CUevent, flags: c_uint) -> CUresult;
    pub(crate) fn cuEventRecord(event: CUevent, stream: CUstream) -> CUresult;
    pub(crate) fn cuEventDestroy_v2(event: CUevent) -> CUresult;
    pub(crate) fn cuStreamWaitEvent(stream: CUstream, event: CUevent, flags: c_uint) -> CUresult;

    pub(crate) fn cuMemsetD32Async(
        dst: u64,
        value: c_uint,
        words: usize,
        stream: CUstream,
    ) -> CUresult;
    pub(crate) fn cuMemsetD2D32Async(
        dst: u64,
        pitch: usize,
        value: c_uint,
        width: usize,
        height: usize,
        stream: CUstream,
    ) -> CUresult;
    pub(crate) fn cuStreamGetCtx(stream: CUstream, context: *mut CUcontext) -> CUresult;
    pub(crate) fn cuCtxGetDevice(device: *mut c_int) -> CUresult;
    pub(crate) fn cuMemAlloc_v2(address: *mut u64, bytes: usize) -> CUresult;
    pub(crate) fn cuMemFree_v2(address: u64) -> CUresult;
    pub(crate) fn cuMemGetInfo_v2(free: *mut usize, total: *mut usize) -> CUresult;
    pub(crate) fn cuMemcpyDtoHAsync_v2(
        dst: *mut c_void,
        src: u64,
        bytes: usize,
        stream: CUstream,
    ) -> CUresult;
    pub(crate) fn cuMemsetD8Async(
        address: u64,
        value: u8,
        count: usize,
        stream: CUstream,
    ) -> CUresult;
    pub(crate) fn cuMemsetD16Async(
        address: u64,
        value: u16,
        count: usize,
        stream: CUstream,
    ) -> CUresult;
    pub(crate) fn cuEventSynchronize(event: CUevent) -> CUresult;
    pub(crate) fn cuCtxPushCurrent_v2(context: CUcontext) -> CUresult;
    pub(crate) fn cuCtxPopCurrent_v2(context: *mut CUcontext) -> CUresult;
    pub(crate) fn cuStreamSynchronize(stream: CUstream) -> CUresult;
    pub(crate) fn cuStreamCreate(stream: *mut CUstream, flags: c_uint) -> CUresult;
    pub(crate) fn cuStreamDestroy_v2(stream: CUstream) -> CUresult;
    pub(crate) fn cuStreamBeginCapture_v2(stream: CUstream, mode: c_uint) -> CUresult;
    pub(crate) fn cuStreamEndCapture(stream: CUstream, graph: *mut CUgraph) -> CUresult;
    pub(crate) fn cuGraphInstantiateWithFlags(
        exec: *mut CUgraphExec,
        graph: CUgraph,
        flags: u64,
    ) -> CUresult;
    pub(crate) fn cuGraphDestroy(graph: CUgraph) -> CUresult;
    pub(crate) fn cuGraphLaunch(exec: CUgraphExec, stream: CUstream) -> CUresult;
    pub(crate) fn cuGraphExecDestroy(exec: CUgraphExec) -> CUresult;
    pub(crate) fn cuMemHostAlloc(host: *mut *mut c_void, bytes: usize, flags: c_uint) -> CUresult;
    pub(crate) fn cuMemFreeHost(host: *mut c_void) -> CUresult;
    /// CUDA 12.0 and newer drivers (sm_90 devices need them).
    pub(crate) fn cuTensorMapEncodeTiled(
        map: *mut TensorMapBytes,
        data_type: c_uint,
        rank: c_uint,
        address: *mut c_void,
        dims: *const u64,
        strides: *const u64,
        boxed: *const c_uint,
        element_strides: *const c_uint,
        interleave: c_uint,
        swizzle: c_uint,
        l2_promotion: c_uint,
        oob_fill: c_uint,
    ) -> CUresult;
    fn cuGetErrorName(code: CUresult, name: *mut *const c_char) -> CUresult;
    fn cuGetErrorString(code: CUresult, text: *mut *const c_char) -> CUresult;
}

/// The driver's name and description of `code`, or placeholders for a code
/// it does not know.
pub(crate) fn describe(code: CUresult) -> (String, String) {
    let read = |f: unsafe extern "C" fn(CUresult, *mut *const c_char) -> CUresult| {
        let mut text: *const c_char = std::ptr::null();
        // SAFETY: both functions only write a pointer to a static,
        // NUL-terminated string into `text`, or fail and leave it null; any
        // `u32` is an acceptable input.
        let status = unsafe { f(code, &mut text) };
        if status == CUDA_SUCCESS && !text.is_null() {
            // SAFETY: non-null and NUL-terminated, per the driver's contract.
            Some(
                unsafe { CStr::from_ptr(text) }
                    .to_string_lossy()
                    .into_owned(),
            )
        } else {
            None
        }
    };
    (
        read(cuGetErrorName).unwrap_or_else(|| format!("CUDA_ERROR_{code}")),
        read(cuGetErrorString).unwrap_or_else(|| "unknown driver error".into()),
    )
}
