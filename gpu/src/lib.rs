//! The device side of warpspeed.
//!
//! This crate is compiled twice:
//!
//! * for `nvptx64-nvidia-cuda` by `cargo xtask build-ptx`, which yields the PTX
//!   that the host library embeds. Only then do the kernel entry points and
//!   `prim` (the device layer: indices, barriers, shared memory, warp
//!   operations, atomics, vector loads) exist.
//! * for the host, as an ordinary `no_std` library on stable Rust. There it
//!   provides what both sides must agree on: each family's ladder of variants
//!   with their launch shapes ([`ladder`]), block, tile and shared-memory
//!   sizes, the entry points with their typed argument lists ([`kernel`]),
//!   and the scalar arithmetic ([`scalar`]) that the host's CPU references
//!   reuse.
//!
//! A family is one file (or a folder of the same name, once it outgrows a
//! file, one file per step or ladder): its constants, its `ladder!`
//! declaration, its device bodies (compiled for `nvptx64` only), and its
//! `kernels!` table, registered once in [`FAMILIES`].
//!
//! Kernels take raw pointers plus explicit lengths. Every kernel body is an
//! `unsafe fn` whose `# Safety` section is the launch contract; the host library
//! checks that contract before each launch.
#![no_std]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(
        abi_gpu_kernel,
        stdarch_nvptx,
        asm_experimental_arch,
        core_intrinsics,
        gpu_intrinsics,
        gpu_launch_sized_workgroup_mem
    )
)]
#![cfg_attr(target_arch = "nvptx64", allow(internal_features))]
// Kernel bodies are `unsafe fn`s whose contract is the launch contract in their
// docs; inside them every pointer access relies on that one contract, so the
// per-operation `unsafe` blocks of the 2024 edition would only repeat it.
#![cfg_attr(target_arch = "nvptx64", allow(unsafe_op_in_unsafe_fn))]
// On the device, index loops over constant ranges are the idiom: they unroll
// fully and keep their arrays in registers, where iterators over the same
// arrays left them in local memory (stack frames and spills).
#![cfg_attr(target_arch = "nvptx64", allow(clippy::needless_range_loop))]
#![warn(missing_docs)]

#[macro_use]
pub mod kernel;
#[macro_use]
pub mod ladder;
pub mod scalar;

#[cfg(target_arch = "nvptx64")]
pub mod prim;
// `__constant__` symbols: device layer, but the host needs their names and
// sizes, so compiled on every target, before the families that declare them.
#[macro_use]
pub mod constant;

pub mod ptx;

pub mod descriptor;

/// `body` once for each value of `i`, spelled out: LLVM leaves loops whose
/// bodies hold branches (bounds checks, the `β = 0` case) rolled, and a
/// rolled loop over an array of accumulators keeps the array in local
/// memory instead of registers.
#[cfg(target_arch = "nvptx64")]
macro_rules! unroll {
    ($i:ident in [$($v:literal)*] => $body:block) => {
        $( { let $i: usize = $v; $body } )*
    };
}

// The families, one module each.
pub mod conv1d;
pub mod gemm;
pub mod histogram;
pub mod image_sums;
pub mod reduce;
pub mod rng;
pub mod scan;
pub mod sort;
pub mod transpose;

pub use constant::ConstantSymbol;
pub use kernel::{DevPtr, DevPtrMut, Entry, Kernel, KernelArgs, KernelType, TensorMap};
pub use ladder::Ladder;
pub use scalar::{Op, Scalar};

/// Threads in a warp on every NVIDIA GPU this crate targets.
pub const WARP_SIZE: u32 = 32;

/// Every family's kernel table, for the host to resolve at load time (in this
/// order: an [`Entry`] is an index into the flattened tables) and for the PTX
/// consistency checks. Registering a family is one row here.
pub const FAMILIES: &[(&str, &[Kernel])] = &[
    ("reduce", reduce::KERNELS),
    ("transpose", transpose::KERNELS),
    ("image_sums", image_sums::KERNELS),
    ("histogram", histogram::KERNELS),
    ("conv1d", conv1d::KERNELS),
    ("gemm", gemm::KERNELS),
    ("rng", rng::KERNELS),
    ("scan", scan::KERNELS),
    ("sort", sort::KERNELS),
];

/// Entry names (as in the PTX, e.g. `gemm_warp_tiled_f32`) whose register
/// spills are kept deliberately, gathered from the families (each declares its own
/// beside its kernels). A spill moves values between registers and
/// local memory (device memory, through the L1 cache), which is usually an
/// accident that costs time: a rolled loop over an array, or a step that
/// asks for more registers than the target has. So `cargo xtask kernels
/// --check` (part of `cargo xtask test`) fails when any entry spills on any
/// PTX target, unless it is named here; a ladder step may accept a few
/// spills in exchange for something it measures as worth more (say, more
/// values in flight). Say why beside each name. Names that no kernel table
/// declares fail the check too. A stack frame without spills (the frame of
/// a call that is not inlined) is local memory as well, which the GPU
/// suite's `context::kernel_resources` refuses unless the entry is named
/// here.
pub const SPILLS_ON_PURPOSE: &[&str] = {
    const PARTS: &[&[&str]] = &[
        gemm::SPILLS_ON_PURPOSE,
        conv1d::SPILLS_ON_PURPOSE,
        image_sums::SPILLS_ON_PURPOSE,
        scan::SPILLS_ON_PURPOSE,
        sort::SPILLS_ON_PURPOSE,
    ];
    &kernel::concat::<&str, { kernel::total_len(PARTS) }>(PARTS, "")
};

/// Entries compiled for a number of resident blocks per SM, like CUDA's
/// `__launch_bounds__(threads, blocks)`: `cargo xtask build-ptx` writes
/// `.maxntid threads, 1, 1` and `.minnctapersm blocks` into their PTX, and
/// ptxas then keeps their registers to what that many blocks leave each
/// thread (65 536 registers per SM: 128 for 2 blocks of 256 threads). The
/// host must launch them with exactly `threads` threads (the driver
/// refuses more). Say why beside each: the measured gain of the extra
/// blocks over the registers they cost.
///
/// Each family declares its own beside its kernels; this gathers them.
pub const LAUNCH_BOUNDS: &[kernel::LaunchBounds] = {
    const PARTS: &[&[kernel::LaunchBounds]] = &[
        conv1d::LAUNCH_BOUNDS,
        gemm::LAUNCH_BOUNDS,
        transpose::LAUNCH_BOUNDS,
        image_sums::LAUNCH_BOUNDS,
        scan::LAUNCH_BOUNDS,
        sort::LAUNCH_BOUNDS,
    ];
    const NONE: kernel::LaunchBounds = kernel::LaunchBounds {
        entry: "",
        threads: 0,
        blocks_per_sm: 0,
    };
    &kernel::concat::<kernel::LaunchBounds, { kernel::total_len(PARTS) }>(PARTS, NONE)
};

/// `printf` on the device, for debugging: prints nothing in this build (see
/// `prim::print`, whose `gpu_print!` prints when the crate is built for the
/// GPU with the feature `debug-print`); evaluates its arguments and the
/// format, a string literal whose conversions all read 64 bits.
#[cfg(not(all(target_arch = "nvptx64", feature = "debug-print")))]
#[macro_export]
macro_rules! gpu_print {
    ($format:literal $(, $arg:expr)* $(,)?) => {{
        let _: &str = $format;
        $(let _ = $arg;)*
    }};
}

/// Traps: the host sees a launch failure. With the feature `debug-print` it
/// first prints the panic's file, line and column and the thread
/// (`prim::print::print_panic`).
#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    #[cfg(feature = "debug-print")]
    prim::print::print_panic(info);
    #[cfg(not(feature = "debug-print"))]
    let _ = info;
    prim::trap()
}
