//! One definition of every kernel entry point, and the typed handles the host
//! launches them through.
//!
//! `kernels!` turns a list of entry points into three things at once:
//!
//! * on `nvptx64`, each entry as an `extern "gpu-kernel"` function, one per
//!   element type (and per constant, for kernels instantiated over a list of
//!   constants), exported as `<base>[_<constant>]_<type>`
//!   (`reduce_sequential_f32`, `reduce_complete_unroll_64_f32`);
//! * on every target, a table of [`Kernel`] rows: the exported name and the
//!   byte size of each parameter, taken from the very same Rust signature.
//!   `cargo xtask build-ptx` checks the PTX against the rows;
//! * on the host, a module named after the kernel (`reduce::reduce_sequential`)
//!   holding `Args<T>`, a struct with the kernel's own parameter names and
//!   host-side types ([`DevPtr`] for `*const T`, [`DevPtrMut`] for `*mut T`,
//!   integers as they are), and `entry::<T>()`, the typed [`Entry`] of the
//!   instantiation for `T`. A launch takes an `Entry<A>` and an `A`: a missing,
//!   extra or mistyped argument, or an element type the kernel is not
//!   instantiated for, fails to compile, and since arguments are named fields,
//!   two parameters of one type cannot be swapped silently.
//!
//! Entries are declared in groups, one parameter list each, written once:
//! every kernel of a group shares the first one's `Args`, so the host can
//! pick among them with one value of one type. A group may also hand its
//! parameters to each kernel's body as one struct (`as Operands`), so
//! that the bodies do not repeat the list either.

use core::ffi::c_void;
use core::marker::PhantomData;

/// An entry point as the PTX must define it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kernel {
    /// The `.entry` name in the PTX: `<base>_<ty>`.
    pub name: &'static str,
    /// The name without its type suffix, e.g. `reduce_sequential` or
    /// `reduce_complete_unroll_64`.
    pub base: &'static str,
    /// The element type the entry is instantiated for ([`KernelType::NAME`]).
    pub ty: &'static str,
    /// Byte size of each parameter, in order (pointers and `usize` are 8).
    pub params: &'static [usize],
}

/// The most parameters a kernel may take.
pub const MAX_PARAMS: usize = 16;

/// Entry names (as in the PTX, e.g. `gemm_warp_tiled_f32`) whose register
/// spills are kept deliberately. A spill moves values between registers and
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
pub const SPILLS_ON_PURPOSE: &[&str] = &[
    // Held to 128 registers by `LAUNCH_BOUNDS` for a second block per SM
    // (uncapped: 165 registers, no spills, one block); the ring's
    // whole-tile copies, their addresses held in registers, make it spill
    // 280 bytes, and it runs faster so.
    // H100 2026-11: 4096³ 107 TFLOP/s capped, 117 with the copies, 90 uncapped
    // (docs/notes/gemm.md)
    "gemm_tf32_f32",
    // The same cap; the whole-tile copies make it spill 40 bytes.
    // H100 2026-11: 4096³ 2.98 ms against 3.02 without them (docs/notes/gemm.md)
    "gemm_tf32x3_f32",
    // Held to 128 registers (`LAUNCH_BOUNDS`, 8 blocks per SM): no spills
    // for sm_90, 16 bytes for sm_80 and 120 for sm_70, whose ptxas
    // allocates less tightly; measured on the H100 (sm_90) only.
    "conv1d_karatsuba_f32",
    // Held to 64 registers (`LAUNCH_BOUNDS`, two blocks of 512 threads):
    // no spills for sm_70 and sm_90, 8 bytes for sm_80; measured on the
    // H100 and H200 (sm_90) only. (Step 4's entries and the narrow bands
    // and bands in lanes, under the same cap, spill nowhere.)
    "column_sums_bands_u32",
    "column_sums_bands_f32",
    // No spills: 208 bytes of stack (sm_80, sm_90), the frame of the call
    // to the non-inlined path that recomputes outputs that came out
    // non-finite, which runs only for such outputs. Inlined, that path
    // made the accumulators' registers spill into a 200-byte frame on
    // every tile.
    // H100 2026-11: mask 127 352 µs with this frame, H200 356 (docs/notes/conv1d.md)
    "conv1d_tf32x3_f32",
    // Held to 4 blocks of 128 threads (`LAUNCH_BOUNDS`): 96 registers and
    // no spills for sm_90, 8 bytes for sm_70; measured on the H100 and
    // H200 (sm_90) only.
    "conv1d_register_blocked_16_f32",
];

/// Entries compiled for a number of resident blocks per SM, like CUDA's
/// `__launch_bounds__(threads, blocks)`: `cargo xtask build-ptx` writes
/// `.maxntid threads, 1, 1` and `.minnctapersm blocks` into their PTX, and
/// ptxas then keeps their registers to what that many blocks leave each
/// thread (65 536 registers per SM: 128 for 2 blocks of 256 threads). The
/// host must launch them with exactly `threads` threads (the driver
/// refuses more). Say why beside each: the measured gain of the extra
/// blocks over the registers they cost.
pub const LAUNCH_BOUNDS: &[LaunchBounds] = &[
    // Three warpgroups, one block per SM (its shared memory): 168
    // registers a thread at most, which the products' 64 accumulators and
    // the split's quads fit without spills. Step 10's kernel, the same
    // block, has no bounds: it takes 160 registers without them (so it
    // launches), 168 with them.
    // H200 2026-11: step 10 0.6-1.3% faster with them, H100 0.3-0.6% slower
    // (docs/notes/conv1d.md)
    LaunchBounds {
        entry: "conv1d_tf32x3_tma_f32",
        threads: crate::conv1d::TMA_THREADS,
        blocks_per_sm: 1,
    },
    // 144 registers left 6 blocks of 64 threads (12 warps) per SM; held
    // to 8 (128 registers).
    // H100 2026-11: mask 127 413 µs against 443 uncapped (docs/notes/conv1d.md)
    LaunchBounds {
        entry: "conv1d_karatsuba_f32",
        threads: crate::conv1d::SPLIT_THREADS,
        blocks_per_sm: 8,
    },
    // Built around 2 blocks of 256 threads per SM, one's products hiding
    // the other's staging: 127 registers for sm_90 uncapped, 150 for
    // sm_80 (one block), held here to 128 with no spills; the sm_80 build is
    // not measured (no such GPU here).
    LaunchBounds {
        entry: "conv1d_tf32x3_f32",
        threads: crate::conv1d::TENSOR_THREADS,
        blocks_per_sm: 2,
    },
    // 165 and 170 registers gave one block of 8 warps per SM; held here
    // to two, the TF32 entry spills a little for it (`SPILLS_ON_PURPOSE`).
    // H100 2026-11: 4096³ 107 against 90 TFLOP/s (TF32), 43.6 against 41.5
    // (docs/notes/gemm.md)
    LaunchBounds {
        entry: "gemm_tf32_f32",
        threads: crate::gemm::tensor::THREADS as u32,
        blocks_per_sm: 2,
    },
    LaunchBounds {
        entry: "gemm_tf32x3_f32",
        threads: crate::gemm::tensor::THREADS as u32,
        blocks_per_sm: 2,
    },
    // Without checked copies in its ring, 126 registers with no spills
    // for sm_80 to sm_90a (136 left to itself): two blocks of 8 warps per
    // SM instead of one.
    // H100 2026-11: 4096³ 2.68 ms against the 128 × 128 entry's 2.94 (docs/notes/gemm.md)
    LaunchBounds {
        entry: "gemm_pipelined_whole_f32",
        threads: crate::gemm::pipelined::threads(crate::gemm::PIPELINED_CONFIGS[0]) as u32,
        blocks_per_sm: 2,
    },
    // The transpose's vector steps are built around 2048 threads per SM (8
    // blocks of 256, 4 of 512 for bytes; 64 bytes in flight per thread):
    // 32 registers.
    // Left to itself ptxas drifts above that with small changes of the
    // PTX (sm_90: 34 for bytes, 44 and 56 for the 4- and 2-byte entries of
    // step 7 when it took bands of tile rows, which is 6, 5 and 4 blocks);
    // held to 8 blocks, none spills. Kept so that the shape the steps
    // were designed for survives changes of the PTX; it costs nothing.
    // H200 2026-11: bytes 38.8 µs capped or not, `f32` 139.0 (docs/notes/transpose.md)
    vector_bounds("transpose_vector_tile_u8", 1),
    vector_bounds("transpose_vector_tile_u16", 2),
    vector_bounds("transpose_vector_tile_u32", 4),
    vector_bounds("transpose_vector_tile_u64", 8),
    vector_bounds("transpose_vector_columns_u8", 1),
    vector_bounds("transpose_vector_columns_u16", 2),
    vector_bounds("transpose_vector_columns_u32", 4),
    vector_bounds("transpose_vector_columns_u64", 8),
    vector_bounds("transpose_vector_ahead_u8", 1),
    vector_bounds("transpose_vector_ahead_u16", 2),
    vector_bounds("transpose_vector_ahead_u32", 4),
    vector_bounds("transpose_vector_ahead_u64", 8),
    vector_bounds("transpose_square_ahead_u8", 1),
    // Its rounds taken two at a time (`shifted_sums`), left to itself
    // ptxas gave 150 registers (3 blocks of 128 threads per SM); held to 4
    // it takes 96 (5 fit) and spills nothing for sm_90.
    // H100 2026-11: mask 127 408 µs against 410 without them (docs/notes/conv1d.md)
    LaunchBounds {
        entry: "conv1d_register_blocked_16_f32",
        threads: crate::conv1d::BLOCKED_THREADS,
        blocks_per_sm: 4,
    },
    // One block of 1024 threads per SM, which can have 64 registers each
    // (left to itself ptxas took 68 with 4 rows in flight).
    column_block_bounds("column_sums_whole_u32", crate::image_sums::WHOLE_BLOCK),
    column_block_bounds("column_sums_whole_f32", crate::image_sums::WHOLE_BLOCK),
    // The same for the bands (79 registers for sm_70 and sm_80 left to
    // themselves, more than 1024 threads can have).
    band_bounds("column_sums_bands_u32"),
    band_bounds("column_sums_bands_f32"),
    band_bounds("column_sums_bands_narrow_u32"),
    band_bounds("column_sums_bands_narrow_f32"),
    band_bounds("column_sums_bands_lanes_u32"),
    band_bounds("column_sums_bands_lanes_f32"),
    // Five blocks of 256 threads per SM with 8 loads in flight per lane:
    // 46 registers for sm_90 (48 for sm_80), no spills.
    // H200 2026-11: 19.4 µs against 19.6-19.8 with six blocks (docs/notes/image_sums.md)
    split_row_bounds("row_sums_split_u32"),
    split_row_bounds("row_sums_split_f32"),
    split_row_bounds("row_sums_split_wide_u32"),
    split_row_bounds("row_sums_split_wide_f32"),
];

/// The split row sums' bounds: [`crate::image_sums::ROW_VECTOR_BLOCK`]
/// threads, [`crate::image_sums::ROW_SPLIT_BLOCKS_PER_SM`] blocks per SM.
const fn split_row_bounds(entry: &'static str) -> LaunchBounds {
    LaunchBounds {
        entry,
        threads: crate::image_sums::ROW_VECTOR_BLOCK,
        blocks_per_sm: crate::image_sums::ROW_SPLIT_BLOCKS_PER_SM,
    }
}

/// The bounds of a column-sum step of one block of `(x, y)` threads per SM
/// ([`crate::image_sums::WHOLE_BLOCK`]).
const fn column_block_bounds(entry: &'static str, (x, y): (u32, u32)) -> LaunchBounds {
    LaunchBounds {
        entry,
        threads: x * y,
        blocks_per_sm: 1,
    }
}

/// The column bands' bounds: [`crate::image_sums::BAND_THREADS`] threads,
/// [`crate::image_sums::BAND_BLOCKS_PER_SM`] blocks per SM.
const fn band_bounds(entry: &'static str) -> LaunchBounds {
    LaunchBounds {
        entry,
        threads: crate::image_sums::BAND_THREADS,
        blocks_per_sm: crate::image_sums::BAND_BLOCKS_PER_SM,
    }
}

/// A transpose vector step's bounds for elements of `size` bytes:
/// [`crate::transpose::vector_threads`] threads,
/// [`crate::transpose::VECTOR_SM_THREADS`] per SM.
const fn vector_bounds(entry: &'static str, size: usize) -> LaunchBounds {
    let threads = crate::transpose::vector_threads(size) as u32;
    LaunchBounds {
        entry,
        threads,
        blocks_per_sm: crate::transpose::VECTOR_SM_THREADS / threads,
    }
}

/// One row of [`LAUNCH_BOUNDS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchBounds {
    /// The entry's name in the PTX.
    pub entry: &'static str,
    /// Threads per block, exactly as the host launches it.
    pub threads: u32,
    /// Blocks that must fit on one SM at once.
    pub blocks_per_sm: u32,
}

/// A type kernels are instantiated for. `NAME` is the suffix of the entry
/// names (`f32` in `reduce_sequential_f32`): the one name of a scalar type,
/// on both sides.
pub trait KernelType: Copy + 'static {
    /// The entry-name suffix.
    const NAME: &'static str;
}

macro_rules! kernel_types {
    ($($t:ident),*) => {$(
        impl KernelType for $t {
            const NAME: &'static str = stringify!($t);
        }
    )*};
}
kernel_types!(u8, u16, u32, u64, i32, f32);

/// The address of device memory a kernel reads, as a kernel parameter
/// (`*const T` on the device). Constructing one is safe: it is a number;
/// launching with it is what the launch contract governs.
#[repr(transparent)]
pub struct DevPtr<T> {
    address: u64,
    _element: PhantomData<fn() -> T>,
}

/// The address of device memory a kernel writes (`*mut T` on the device).
#[repr(transparent)]
pub struct DevPtrMut<T> {
    address: u64,
    _element: PhantomData<fn() -> T>,
}

macro_rules! device_pointer {
    ($name:ident) => {
        impl<T> $name<T> {
            /// The pointer to device address `address`.
            pub const fn new(address: u64) -> Self {
                $name {
                    address,
                    _element: PhantomData,
                }
            }

            /// The device address.
            pub const fn address(self) -> u64 {
                self.address
            }

            /// The pointer `count` elements further on.
            pub const fn add(self, count: usize) -> Self {
                Self::new(self.address + (count * size_of::<T>()) as u64)
            }
        }

        impl<T> Clone for $name<T> {
            fn clone(&self) -> Self {
                *self
            }
        }

        impl<T> Copy for $name<T> {}

        impl<T> core::fmt::Debug for $name<T> {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                write!(f, "{}({:#x})", stringify!($name), self.address)
            }
        }
    };
}
device_pointer!(DevPtr);
device_pointer!(DevPtrMut);

/// The host-side type of a kernel parameter of type `Self`, of the same size
/// and passing convention.
pub trait Param {
    /// What the host passes.
    type Host: Copy;
}

impl<T> Param for *const T {
    type Host = DevPtr<T>;
}

impl<T> Param for *mut T {
    type Host = DevPtrMut<T>;
}

macro_rules! plain_params {
    ($($t:ty),*) => {$(
        impl Param for $t {
            type Host = $t;
        }
    )*};
}
plain_params!(u32, i32, u64, usize, f32, f64);

/// A CUDA tensor map (`CUtensorMap`: 128 opaque bytes that the driver
/// encodes and the copy engine reads) passed to a kernel by value. 16-byte
/// aligned: rustc's NVPTX back end refuses kernel parameters aligned
/// beyond 16, where CUDA's type asks for 64, so a kernel copies it into
/// 64-byte aligned global memory before its copies read it (see
/// `conv1d::tma`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, align(16))]
pub struct TensorMap {
    /// The encoded bytes, as the driver wrote them.
    pub words: [u64; 16],
}

impl Param for TensorMap {
    type Host = TensorMap;
}

/// How a kernel parameter becomes a field of its group's operand struct
/// (`(…) as Name` in `kernels!`): as it is, or a `u32` count widened to
/// the `usize` the device indexes with (the host passes 32-bit counts where
/// they suffice, one register instead of two).
pub trait Operand<F> {
    /// The field's value.
    fn operand(self) -> F;
}

impl<T> Operand<T> for T {
    #[inline(always)]
    fn operand(self) -> T {
        self
    }
}

impl Operand<usize> for u32 {
    #[inline(always)]
    fn operand(self) -> usize {
        self as usize
    }
}

/// A kernel's argument list: the generated `Args` structs.
///
/// # Safety
/// `params` must write, in the kernel's parameter order, one pointer per
/// parameter to a value of exactly that parameter's size and representation,
/// all borrowed from `self`. Only `kernels!` implements it, from the
/// kernel's own signature.
pub unsafe trait KernelArgs {
    /// Writes a pointer to each argument into `out`; returns how many.
    fn params(&self, out: &mut [*mut c_void; MAX_PARAMS]) -> usize;
}

/// A typed handle of one loaded entry point: its position in the kernel
/// tables ([`crate::FAMILIES`] flattened), which the host uses to index its
/// loaded functions. `A` is the kernel's `Args` type.
pub struct Entry<A> {
    index: u32,
    _args: PhantomData<fn(A)>,
}

impl<A> Entry<A> {
    /// The entry at `index` of the flattened tables. Only the generated
    /// `entry` functions call this, with an index [`locate`] found.
    #[doc(hidden)]
    pub const fn new(index: u32) -> Self {
        Entry {
            index,
            _args: PhantomData,
        }
    }

    /// The position in the flattened kernel tables.
    pub const fn index(self) -> usize {
        self.index as usize
    }

    /// The table row of this entry.
    pub const fn kernel(self) -> &'static Kernel {
        let mut left = self.index as usize;
        let mut family = 0;
        while family < crate::FAMILIES.len() {
            let table = crate::FAMILIES[family].1;
            if left < table.len() {
                return &table[left];
            }
            left -= table.len();
            family += 1;
        }
        panic!("kernel entry index out of range")
    }
}

impl<A> Clone for Entry<A> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<A> Copy for Entry<A> {}

impl<A> core::fmt::Debug for Entry<A> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Entry({})", self.kernel().name)
    }
}

const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The flattened index of the entry `<base>_<ty>`. Evaluated at compile time
/// by the generated `entry` functions: an entry that does not exist (an
/// element type the kernel is not instantiated for) is a compile error.
pub const fn locate(base: &str, ty: &str) -> u32 {
    match try_locate(base, ty) {
        Some(index) => index,
        None => panic!("no kernel entry for this base and element type"),
    }
}

/// [`locate`], or `None` where the entry does not exist.
pub const fn try_locate(base: &str, ty: &str) -> Option<u32> {
    let mut index = 0;
    let mut family = 0;
    while family < crate::FAMILIES.len() {
        let table = crate::FAMILIES[family].1;
        let mut row = 0;
        while row < table.len() {
            if str_eq(table[row].base, base) && str_eq(table[row].ty, ty) {
                return Some(index);
            }
            index += 1;
            row += 1;
        }
        family += 1;
    }
    None
}

/// Total rows of `parts`.
#[doc(hidden)]
pub const fn total_rows(parts: &[&[Kernel]]) -> usize {
    let (mut total, mut i) = (0, 0);
    while i < parts.len() {
        total += parts[i].len();
        i += 1;
    }
    total
}

/// `parts` concatenated; `N` must be [`total_rows`] of them.
#[doc(hidden)]
pub const fn concat_rows<const N: usize>(parts: &[&[Kernel]]) -> [Kernel; N] {
    let placeholder = Kernel {
        name: "",
        base: "",
        ty: "",
        params: &[],
    };
    let mut out = [placeholder; N];
    let (mut n, mut i) = (0, 0);
    while i < parts.len() {
        let mut j = 0;
        while j < parts[i].len() {
            out[n] = parts[i][j];
            n += 1;
            j += 1;
        }
        i += 1;
    }
    assert!(n == N, "concat_rows: wrong length");
    out
}

/// Declares kernel entry points, their table and their typed host handles.
/// See the module docs. Each group names its parameter list once, and all
/// its kernels take the first one's `Args`. A kernel's body is either `=
/// path`, the device function called with the group's parameters in order,
/// or `=> expr`, an expression of those names (other arguments, another
/// order). A group whose list is followed by `as Name` (a struct with one
/// field per parameter, of the same name) calls each `= path` with one
/// `Name` instead, each field the parameter through [`Operand`]: a family
/// of many parameters then writes them once, not once per step.
///
/// ```text
/// kernels! {
///     /// Every example entry point.
///     pub const KERNELS = {
///         (x: *const T, out: *mut T, n: usize) {
///             /// docs
///             fn example_sum<T in f32, i32> = device::sum::<T>;
///             fn example_max<T in f32, i32> = device::max::<T>;
///             /// One entry per type and per constant: `example_tree_64_f32`, ...
///             fn example_tree<T in f32; const B: u32 = {64, 128}> = device::tree::<T, B>;
///         }
///         (src: *const T, dst: *mut T, n: usize) {
///             fn example_copy<T in f32> => device::copy(dst, src, n);
///         }
///         // `device::scaled(Scaled { src, dst, n, factor })`.
///         (src: *const T, dst: *mut T, n: u32, factor: f32) as Scaled {
///             fn example_scaled<T in f32> = device::scaled;
///         }
///     }
/// }
/// ```
macro_rules! kernels {
    (
        $(#[$table_meta:meta])*
        pub const $table:ident = {
            $(
                $sig:tt $(as $operands:ident)? {
                    $(#[$first_meta:meta])*
                    fn $first:ident < T in $($first_ty:ident),+
                        $(; const $first_c:ident : $first_cty:ty = { $($first_cv:literal),+ })? >
                        $(= $first_call:path)? $(=> $first_body:expr)? ;
                    $(
                        $(#[$meta:meta])*
                        fn $base:ident < T in $($ty:ident),+
                            $(; const $c:ident : $cty:ty = { $($cv:literal),+ })? >
                            $(= $call:path)? $(=> $body:expr)? ;
                    )*
                }
            )*
        }
    ) => {
        $(
            kernels!(@group $sig [$($operands)?]
                { [$(#[$first_meta])*] $first [$($first_ty),+]
                    [$($first_c : $first_cty [$($first_cv),+])?] []
                    [[$($first_call)?] [$($first_body)?]] }
                $( { [$(#[$meta])*] $base [$($ty),+] [$($c : $cty [$($cv),+])?]
                    [$first] [[$($call)?] [$($body)?]] } )*);
        )*

        $(#[$table_meta])*
        pub const $table: &[$crate::kernel::Kernel] = {
            const PARTS: &[&[$crate::kernel::Kernel]] = &[ $( $first::ROWS, $( $base::ROWS, )* )* ];
            &$crate::kernel::concat_rows::<{ $crate::kernel::total_rows(PARTS) }>(PARTS)
        };
    };

    // One group's kernels, each body paired with the group's operand
    // struct (`[]` for none); a group is a call of its own so that its
    // struct, written once, reaches every kernel of it.
    (@group $sig:tt $operands:tt
        $( { $metas:tt $base:ident $types:tt $consts:tt $other:tt $body:tt } )*) => {
        $( kernels!(@kernel $metas $base $types $consts $sig $other [$body $operands]); )*
    };

    // A kernel instantiated per type.
    (@kernel $metas:tt $base:ident [$($ty:ident),+] []
        $sig:tt $other:tt $body:tt) => {
        $( kernels!(@device $metas [stringify!($base), "_", stringify!($ty)] $sig $body; type T = $ty;); )+

        #[doc = concat!("Host handle of the `", stringify!($base), "` kernel.")]
        pub mod $base {
            #[allow(unused_imports)]
            use super::*;
            kernels!(@args $sig $other);

            /// The name of the entry points without their type suffix.
            pub const BASE: &str = stringify!($base);

            /// One table row per element type.
            pub const ROWS: &[$crate::kernel::Kernel] = &[
                $( kernels!(@row [stringify!($base)] $ty $sig) ),+
            ];

            /// The entry instantiated for `T`; a type the kernel is not
            /// instantiated for does not compile.
            pub const fn entry<T: $crate::kernel::KernelType>() -> $crate::kernel::Entry<Args<T>> {
                $crate::kernel::Entry::new(const { $crate::kernel::locate(BASE, T::NAME) })
            }

            /// The entry instantiated for `T`, or `None` where the kernel is
            /// not instantiated for it (for generic code that also handles
            /// other types).
            pub const fn try_entry<T: $crate::kernel::KernelType>() -> Option<$crate::kernel::Entry<Args<T>>> {
                match const { $crate::kernel::try_locate(BASE, T::NAME) } {
                    Some(index) => Some($crate::kernel::Entry::new(index)),
                    None => None,
                }
            }
        }
    };

    // A kernel instantiated per type and per constant.
    (@kernel $metas:tt $base:ident $types:tt [$c:ident : $cty:ty [$($cv:literal),+]]
        $sig:tt $other:tt $body:tt) => {
        $( kernels!(@device_types $metas $base $types $c [$cty] $cv $sig $body); )+

        #[doc = concat!("Host handle of the `", stringify!($base), "` kernels.")]
        pub mod $base {
            #[allow(unused_imports)]
            use super::*;
            kernels!(@args $sig $other);

            /// The values of the constant the kernel is instantiated for.
            pub const VALUES: &[$cty] = &[$($cv),+];

            /// One table row per constant and element type.
            pub const ROWS: &[$crate::kernel::Kernel] = {
                const PARTS: &[&[$crate::kernel::Kernel]] =
                    &[ $( kernels!(@rows_for_value $base $cv $types $sig) ),+ ];
                &$crate::kernel::concat_rows::<{ $crate::kernel::total_rows(PARTS) }>(PARTS)
            };

            /// The entry instantiated for `T` and the constant `value`;
            /// `None` for a value not in [`VALUES`].
            pub fn entry<T: $crate::kernel::KernelType>(value: $cty) -> Option<$crate::kernel::Entry<Args<T>>> {
                let indices = const {
                    [ $( $crate::kernel::locate(concat!(stringify!($base), "_", $cv), T::NAME) ),+ ]
                };
                VALUES.iter().position(|&v| v == value).map(|i| $crate::kernel::Entry::new(indices[i]))
            }
        }
    };

    (@device_types $metas:tt $base:ident [$($ty:ident),+] $c:ident [$cty:ty] $cv:literal $sig:tt $body:tt) => {
        $( kernels!(@device $metas [stringify!($base), "_", $cv, "_", stringify!($ty)] $sig $body;
            type T = $ty; const $c: $cty = $cv;); )+
    };

    (@rows_for_value $base:ident $cv:literal [$($ty:ident),+] $sig:tt) => {
        &[ $( kernels!(@row [stringify!($base), "_", $cv] $ty $sig) ),+ ]
    };

    // The exported `extern "gpu-kernel"` function.
    (@device [$(#[$meta:meta])*] [$($name:tt)+] ( $( $arg:ident : $argty:ty ),* $(,)? ) $body:tt; $($items:item)*) => {
        const _: () = {
            $( #[allow(dead_code)] $items )*
            $(#[$meta])*
            #[cfg(target_arch = "nvptx64")]
            #[unsafe(export_name = concat!($($name)+))]
            pub unsafe extern "gpu-kernel" fn entry( $( $arg : $argty ),* ) {
                // SAFETY: the host launches this entry only after checking the
                // launch contract documented on the body it calls (pointer
                // validity for the stated lengths, block and shared-memory
                // sizes); see `warpspeed`'s launch module.
                unsafe { kernels!(@body $body ($($arg),*)) }
            }
        };
    };

    // A kernel's body: `= path` calls the path with the group's
    // parameters, in order, or with them as the group's operand struct;
    // `=> expr` is the expression as written.
    (@body [[[$call:path] []] []] ($($arg:ident),*)) => {
        $call($($arg),*)
    };
    (@body [[[$call:path] []] [$operands:ident]] ($($arg:ident),*)) => {
        $call($operands { $( $arg: $crate::kernel::Operand::operand($arg) ),* })
    };
    (@body [[[] [$body:expr]] $operands:tt] $args:tt) => {
        $body
    };

    // One table row.
    (@row [$($base:tt)+] $ty:ident ( $( $arg:ident : $argty:ty ),* $(,)? )) => {{
        #[allow(dead_code)]
        type T = $ty;
        $crate::kernel::Kernel {
            name: concat!($($base)+, "_", stringify!($ty)),
            base: concat!($($base)+),
            ty: stringify!($ty),
            params: &[ $( ::core::mem::size_of::<$argty>() ),* ],
        }
    }};

    // The kernel's own argument struct.
    (@args ( $( $arg:ident : $argty:ty ),* $(,)? ) []) => {
        /// The kernel's arguments, by the names of its parameters.
        #[derive(Debug)]
        pub struct Args<T> {
            $(
                #[doc = concat!("`", stringify!($arg), ": ", stringify!($argty), "`")]
                pub $arg: <$argty as $crate::kernel::Param>::Host,
            )*
        }

        impl<T> Clone for Args<T> {
            fn clone(&self) -> Self {
                *self
            }
        }

        impl<T> Copy for Args<T> {}

        // SAFETY: one pointer per parameter, in the signature's order, each to
        // a field whose type is the parameter's host type (`Param::Host`, of
        // the same size and passing convention).
        unsafe impl<T> $crate::kernel::KernelArgs for Args<T> {
            fn params(&self, out: &mut [*mut ::core::ffi::c_void; $crate::kernel::MAX_PARAMS]) -> usize {
                let mut n = 0;
                $(
                    out[n] = &self.$arg as *const _ as *mut ::core::ffi::c_void;
                    n += 1;
                )*
                n
            }
        }
    };

    // The argument struct of the group's first kernel.
    (@args $sig:tt [$first:ident]) => {
        /// The kernel's arguments (the parameter list of its group, whose
        #[doc = concat!("first kernel, [`", stringify!($first), "`](super::", stringify!($first), "), owns them).")]
        pub type Args<T> = super::$first::Args<T>;
    };
}
