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
    /// The PTX target the library loaded for this device.
    pub ptx_target: &'static str,
}
