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
    /// The alignment the PTX declares for each parameter, where it must
    /// be more than rustc writes ([`Param::ALIGN`]; 0 elsewhere).
    pub aligns: &'static [usize],
}

impl Kernel {
    /// A row that names no kernel, to fill a table before its rows are
    /// written.
    #[doc(hidden)]
    pub const NONE: Kernel = Kernel {
        name: "",
        base: "",
        ty: "",
        params: &[],
        aligns: &[],
    };
}

/// The most parameters a kernel may take.
pub const MAX_PARAMS: usize = 20;

/// One row of [`LAUNCH_BOUNDS`](crate::LAUNCH_BOUNDS): an entry compiled for a
/// number of resident blocks per SM, declared beside its family's kernels.
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
    /// The alignment the PTX must declare for the parameter, where it is
    /// more than rustc writes (0: as rustc writes it); `cargo xtask
    /// build-ptx` raises the declaration to it ([`Kernel::aligns`]).
    const ALIGN: usize = 0;
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
/// encodes and the copy engine reads) passed to a kernel by value, where
/// the copy engine reads it, as CUDA C++'s `__grid_constant__` maps are:
/// the entry hands its body the parameter's address (`MapParam`), never
/// a copy. Declared 16-byte aligned (rustc's NVPTX back end refuses
/// kernel parameters aligned beyond 16); `cargo xtask build-ptx` raises
/// the declaration to the 64 bytes CUDA's type asks for ([`Param::ALIGN`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, align(16))]
pub struct TensorMap {
    /// The encoded bytes, as the driver wrote them.
    pub words: [u64; 16],
}

impl Param for TensorMap {
    type Host = TensorMap;
    const ALIGN: usize = 64;
}

/// A [`TensorMap`] parameter as a kernel's body sees it: the generic
/// address of the parameter itself, 64-byte aligned, which the launch
/// wrote and nothing changes until the grid ends; tensor copies read the
/// map there with no fence (`kernels!` takes the address in the entry).
#[cfg(target_arch = "nvptx64")]
#[cfg_attr(not(target_feature = "sm_90a"), allow(dead_code))]
#[derive(Clone, Copy)]
pub(crate) struct MapParam(pub(crate) u64);

#[cfg(target_arch = "nvptx64")]
#[cfg_attr(not(target_feature = "sm_90a"), allow(dead_code))]
impl MapParam {
    /// The map's generic address, for `prim::bulk`'s tensor copies.
    #[inline(always)]
    pub(crate) fn address(self) -> u64 {
        self.0
    }
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
#[doc(hidden)]
pub const fn locate(base: &str, ty: &str) -> u32 {
    match try_locate(base, ty) {
        Some(index) => index,
        None => panic!("no kernel entry for this base and element type"),
    }
}

/// [`locate`], or `None` where the entry does not exist.
#[doc(hidden)]
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

/// The length of `parts` concatenated.
#[doc(hidden)]
pub const fn total_len<T>(parts: &[&[T]]) -> usize {
    let (mut total, mut i) = (0, 0);
    while i < parts.len() {
        total += parts[i].len();
        i += 1;
    }
    total
}

/// `parts` concatenated; `N` must be [`total_len`] of them, and `fill`
/// any value (every slot is written over).
#[doc(hidden)]
pub const fn concat<T: Copy, const N: usize>(parts: &[&[T]], fill: T) -> [T; N] {
    let mut out = [fill; N];
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
    assert!(n == N, "concat: wrong length");
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
        #[doc(hidden)]
        pub const $table: &[$crate::kernel::Kernel] = {
            const PARTS: &[&[$crate::kernel::Kernel]] = &[ $( $first::ROWS, $( $base::ROWS, )* )* ];
            &$crate::kernel::concat::<$crate::kernel::Kernel, { $crate::kernel::total_len(PARTS) }>(PARTS, $crate::kernel::Kernel::NONE)
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
        $( kernels!(@device $metas [stringify!($base), "_", stringify!($ty)] $sig $sig $body; type T = $ty;); )+

        #[doc(hidden)]
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

        #[doc(hidden)]
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
                &$crate::kernel::concat::<$crate::kernel::Kernel, { $crate::kernel::total_len(PARTS) }>(PARTS, $crate::kernel::Kernel::NONE)
            };

            /// The entry instantiated for `T` and the constant `value`;
            /// `None` for a value not in [`VALUES`].
            pub fn entry<T: $crate::kernel::KernelType>(value: $cty) -> Option<$crate::kernel::Entry<Args<T>>> {
                let indices = const {
                    [ $( $crate::kernel::locate(concat!(stringify!($base), "_", $cv), T::NAME) ),+ ]
                };
                VALUES.iter().position(|&v| v == value).map(|i| $crate::kernel::Entry::new(indices[i]))
            }

            /// [`entry`], where the kernel is instantiated for `T`: `None`
            /// for other types too (for generic code that also handles
            /// them).
            pub fn try_entry<T: $crate::kernel::KernelType>(value: $cty) -> Option<$crate::kernel::Entry<Args<T>>> {
                let indices = const {
                    [ $( $crate::kernel::try_locate(concat!(stringify!($base), "_", $cv), T::NAME) ),+ ]
                };
                VALUES.iter().position(|&v| v == value).and_then(|i| indices[i]).map($crate::kernel::Entry::new)
            }
        }
    };

    (@device_types $metas:tt $base:ident [$($ty:ident),+] $c:ident [$cty:ty] $cv:literal $sig:tt $body:tt) => {
        $( kernels!(@device $metas [stringify!($base), "_", $cv, "_", stringify!($ty)] $sig $sig $body;
            type T = $ty; const $c: $cty = $cv;); )+
    };

    (@rows_for_value $base:ident $cv:literal [$($ty:ident),+] $sig:tt) => {
        &[ $( kernels!(@row [stringify!($base), "_", $cv] $ty $sig) ),+ ]
    };

    // The exported `extern "gpu-kernel"` function (the signature twice:
    // as written, for `@maps`, and taken apart).
    (@device [$(#[$meta:meta])*] [$($name:tt)+] $raw:tt ( $( $arg:ident : $argty:ty ),* $(,)? ) $body:tt; $($items:item)*) => {
        const _: () = {
            $( #[allow(dead_code)] $items )*
            $(#[$meta])*
            #[cfg(target_arch = "nvptx64")]
            #[unsafe(export_name = concat!($($name)+))]
            pub unsafe extern "gpu-kernel" fn entry( $( $arg : $argty ),* ) {
                kernels!(@maps [$($name)+] [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19] $raw);
                // SAFETY: the host launches this entry only after checking the
                // launch contract documented on the body it calls (pointer
                // validity for the stated lengths, block and shared-memory
                // sizes); see `warpspeed`'s launch module.
                unsafe { kernels!(@body $body ($($arg),*)) }
            }
        };
    };

    // Each `TensorMap` parameter (the `i`th) of the entry named `name`
    // becomes its `MapParam`, the parameter's address: walks the signature
    // as written, one index per parameter (`MAX_PARAMS` of them).
    (@maps $name:tt $indices:tt ()) => {};
    (@maps $name:tt [$i:tt $($is:tt)*] ($arg:ident : TensorMap $(, $($rest:tt)*)?)) => {
        kernels!(@map $name $i $arg);
        kernels!(@maps $name [$($is)*] ($($($rest)*)?));
    };
    (@maps $name:tt [$i:tt $($is:tt)*] ($arg:ident : $($rest:tt)*)) => {
        kernels!(@skip $name [$($is)*] ($($rest)*));
    };
    // The rest of a parameter's type, up to the comma after it.
    (@skip $name:tt $indices:tt (, $($rest:tt)*)) => {
        kernels!(@maps $name $indices ($($rest)*));
    };
    (@skip $name:tt $indices:tt ($token:tt $($rest:tt)*)) => {
        kernels!(@skip $name $indices ($($rest)*));
    };
    (@skip $name:tt $indices:tt ()) => {};
    (@map [$($name:tt)+] $i:tt $arg:ident) => {
        // The map is read where the launch put it, never copied.
        let _ = $arg;
        #[cfg(target_feature = "sm_90a")]
        let $arg = {
            let address: u64;
            // SAFETY: takes the address of this entry's own parameter
            // (`<entry>_param_<i>`, the name the NVPTX back end gives it)
            // and converts it to a generic one; reads nothing.
            unsafe {
                ::core::arch::asm!(
                    concat!("mov.b64 {a}, ", $($name)+, "_param_", $i, ";"),
                    "cvta.param.u64 {a}, {a};",
                    a = out(reg64) address,
                    options(pure, nomem, nostack),
                );
            }
            $crate::kernel::MapParam(address)
        };
        // Other targets run no tensor copies (their entries trap).
        #[cfg(not(target_feature = "sm_90a"))]
        let $arg = $crate::kernel::MapParam(0);
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
            aligns: &[ $( <$argty as $crate::kernel::Param>::ALIGN ),* ],
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
