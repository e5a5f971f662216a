//! What the library knows about a device: its facts and limits, read once
//! when a [`Context`](crate::Context) is created.

/// What the library knows about its device.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceInfo {
    /// The device's ordinal, as passed to [`Context::new`](crate::Context::new).
    pub ordinal: u32,
    /// The device's name, e.g. `NVIDIA H100 80GB HBM3`.
    pub name: String,
    /// `(major, minor)`, e.g. `(9, 0)` for Hopper.
    pub compute_capability: (u32, u32),
    /// Streaming multiprocessors.
    pub multiprocessors: u32,
    /// Global memory in bytes.
    pub total_memory: usize,
    /// L2 cache in bytes.
    pub l2_bytes: u32,
    /// Threads one block may have.
    pub max_threads_per_block: u32,
    /// Threads one multiprocessor holds at once.
    pub max_threads_per_multiprocessor: u32,
    /// Largest block, `(x, y)`.
    pub max_block: (u32, u32),
    /// Largest grid in blocks, `(x, y)`.
    pub max_grid: (u32, u32),
    /// Dynamic shared memory a block gets without opting in (48 KiB).
    pub max_shared_per_block: u32,
    /// Dynamic shared memory a block can opt in to (227 KiB on Hopper).
    pub max_shared_per_block_optin: u32,
    /// Theoretical DRAM bandwidth from the memory clock and bus width, in
    /// bytes per second (reads or writes). Benchmarks compare against a
    /// measured copy instead; this is for scale.
    pub theoretical_bandwidth: f64,
    /// The target of the kernels the library loaded for this device.
    pub ptx_target: &'static str,
    /// `false` when the kernels are the shipped machine code (a cubin) for
    /// this architecture; `true` when the driver compiled the PTX of
    /// `ptx_target` at load (devices without a cubin, or `WARPSPEED_PTX`).
    pub jit: bool,
}

/// What one loaded kernel uses, as the driver reports it for the module it
/// loaded (the same figures `ptxas -v` prints for a cubin; `cargo xtask
/// kernels` prints them for every target without a GPU).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelResources {
    /// The entry's name, e.g. `reduce_vectorized_f32`.
    pub name: &'static str,
    /// Registers per thread: with the block size, what bounds occupancy.
    pub registers: u32,
    /// Local memory per thread in bytes (stack frame and register spills);
    /// 0 for a kernel that keeps everything in registers.
    pub local_bytes: u32,
    /// Statically declared shared memory per block in bytes (dynamic shared
    /// memory is given at launch and not counted here).
    pub static_shared_bytes: u32,
    /// The largest block the kernel can be launched with.
    pub max_threads_per_block: u32,
}
