//! The block's dynamic shared memory (`extern __shared__`).
//!
//! rustc's NVPTX back end has no spelling for static `__shared__` arrays, so
//! every kernel uses the dynamic region, whose size the host passes at launch.
//! Kernels and host compute that size from the same constants (see each
//! family's `shared_bytes`).

use core::intrinsics::gpu::gpu_launch_sized_workgroup_mem;

#[repr(C, align(16))]
struct Align16([u8; 16]);

/// The start of the block's dynamic shared memory, 16-byte aligned.
#[inline(always)]
#[doc(hidden)]
pub fn dynamic_shared<T>() -> *mut T {
    gpu_launch_sized_workgroup_mem::<Align16>().cast::<T>()
}

/// Carves consecutive arrays out of dynamic shared memory, as CUDA lessons do
/// with one `extern __shared__` array and pointer offsets.
pub struct SharedCarver {
    offset: usize,
}

impl SharedCarver {
    /// A carver at the start of the region.
    #[inline(always)]
    pub fn new() -> Self {
        SharedCarver { offset: 0 }
    }

    /// The next `count` elements of `T`, aligned for `T`. The host must have
    /// launched with at least [`SharedCarver::bytes_used`] bytes.
    #[inline(always)]
    pub fn take<T>(&mut self, count: usize) -> *mut T {
        let align = core::mem::align_of::<T>();
        self.offset = self.offset.div_ceil(align) * align;
        let ptr = dynamic_shared::<u8>().wrapping_add(self.offset).cast::<T>();
        self.offset += count * core::mem::size_of::<T>();
        ptr
    }

    /// Bytes handed out so far, padding included.
    #[inline(always)]
    pub fn bytes_used(&self) -> usize {
        self.offset
    }
}

impl Default for SharedCarver {
    fn default() -> Self {
        Self::new()
    }
}

/// `ld.shared.v2.b32`: 8 bytes of the block's shared memory at the shared
/// address `address` ([`shared_address`](super::shared_address)), one
/// access.
///
/// # Safety
/// `address` is 8-byte aligned, inside the block's shared memory, and
/// nothing writes those bytes while this load runs (a barrier orders any
/// write, including a copy engine's, before it).
#[inline(always)]
#[doc(hidden)]
pub unsafe fn load_shared_v2(address: u32) -> [u32; 2] {
    let (a, b): (u32, u32);
    // SAFETY: the caller's contract. Not `pure`: the load must stay after
    // the barrier wait (an `asm` that may write memory) that publishes the
    // bytes.
    unsafe {
        core::arch::asm!(
            "ld.shared.v2.b32 {{{a}, {b}}}, [{p}];",
            a = out(reg32) a,
            b = out(reg32) b,
            p = in(reg32) address,
            options(readonly, nostack),
        );
    }
    [a, b]
}
