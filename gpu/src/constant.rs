//! Constant memory (`__constant__`): small read-only tables, up to 64 KiB per
//! module, that the host fills before a launch and that kernels read through
//! the constant cache. A warp's read costs one constant-cache access when
//! all its lanes read the same address (a convolution mask indexed by the
//! loop counter, not by the thread) and one per distinct address otherwise:
//! a table indexed by thread belongs in global memory.
//!
//! rustc's NVPTX back end has no address space for `.const` statics, so
//! `constant_memory!` declares the symbol itself, in file-scope PTX
//! (`global_asm!`, which the back end prints right after the module header),
//! and reads it with `ld.const` in inline PTX:
//!
//! ```text
//! constant_memory! {
//!     /// The convolution mask, row-major, `MASK_CAP` weights at most.
//!     pub MASK: [f32; MASK_CAP];
//! }
//! // device:  let w: f32 = MASK.get(k);
//! // host:    module.get_global::<[f32; MASK_CAP]>(MASK.c_name()), then copy_from
//! ```
//!
//! On every target the macro defines `MASK`, a [`ConstantSymbol`] that names
//! the PTX symbol and gives its byte size, for the host's
//! `cuModuleGetGlobal`; on `nvptx64` it also emits
//! `.visible .const .align A .b8 MASK[BYTES];` and the accessors. The PTX
//! name is exactly the Rust identifier, so it must be unique in the module
//! (ptxas rejects a duplicate) and must not be a PTX keyword.
//!
//! This module belongs to the device layer but is not in `prim`, which is
//! device-only: the host needs the descriptors too. Its inline PTX is
//! compiled for `nvptx64` alone.

use core::ffi::CStr;
use core::marker::PhantomData;

/// A `__constant__` symbol of the PTX module holding one `T`, as
/// `constant_memory!` declares it.
///
/// On the host it is a name and a size: look the symbol up with
/// `cuModuleGetGlobal(`[`c_name`](Self::c_name)`)`, check that the driver's
/// size equals [`bytes`](Self::bytes) (cust's `Module::get_global::<T>`
/// asserts it, panicking), and copy into it before the launches that read it.
/// A copy that overlaps a running kernel which reads the symbol is a data
/// race. On the device, an array of [`Scalar`](crate::Scalar)s is read with
/// `get`.
pub struct ConstantSymbol<T> {
    name: &'static str,
    c_name: &'static CStr,
    /// Returns the symbol's `.const` address (`mov.u64 {a}, NAME;`): the only
    /// piece that must spell the name in PTX, hence made by the macro.
    #[cfg(target_arch = "nvptx64")]
    address: fn() -> u64,
    _data: PhantomData<fn() -> T>,
}

// Not derived: a derive would require `T: Clone`.
impl<T> Clone for ConstantSymbol<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for ConstantSymbol<T> {}

impl<T> core::fmt::Debug for ConstantSymbol<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ConstantSymbol")
            .field("name", &self.name)
            .field("bytes", &self.bytes())
            .finish()
    }
}

impl<T> ConstantSymbol<T> {
    /// Used by `constant_memory!`: `name_nul` is `name` followed by a NUL.
    #[doc(hidden)]
    pub const fn new(
        name: &'static str,
        name_nul: &'static str,
        #[cfg(target_arch = "nvptx64")] address: fn() -> u64,
    ) -> Self {
        let c_name = match CStr::from_bytes_with_nul(name_nul.as_bytes()) {
            Ok(c_name) => c_name,
            Err(_) => panic!("a symbol name is NUL-terminated and has no other NUL"),
        };
        ConstantSymbol {
            name,
            c_name,
            #[cfg(target_arch = "nvptx64")]
            address,
            _data: PhantomData,
        }
    }

    /// The symbol's name in the PTX: the Rust identifier given to
    /// `constant_memory!`.
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// [`name`](Self::name) as a C string, for `cuModuleGetGlobal`.
    pub const fn c_name(&self) -> &'static CStr {
        self.c_name
    }

    /// The symbol's size in bytes: `size_of::<T>()`.
    pub const fn bytes(&self) -> usize {
        size_of::<T>()
    }
}

#[cfg(target_arch = "nvptx64")]
impl<E: crate::Scalar, const N: usize> ConstantSymbol<[E; N]> {
    /// Element `i`, read with `ld.const`; traps (the launch fails) when
    /// `i >= N`.
    ///
    /// Safe: any 32 bits are a valid [`Scalar`](crate::Scalar), and constant
    /// memory does not change while a kernel runs (the host's copies are
    /// ordered before the launch, see [`ConstantSymbol`]). What it holds is
    /// whatever the host copied last, zeros if nothing.
    #[inline(always)]
    pub fn get(&self, i: usize) -> E {
        if i >= N {
            crate::prim::trap();
        }
        // SAFETY: `i < N` was just checked.
        unsafe { self.get_unchecked(i) }
    }

    /// Element `i` without the bounds check: one `ld.const.b32`.
    ///
    /// # Safety
    /// `i < N`.
    #[inline(always)]
    pub unsafe fn get_unchecked(&self, i: usize) -> E {
        let bits: u32;
        let address = (self.address)() + (i * size_of::<E>()) as u64;
        // SAFETY: `address` lies inside the symbol by the caller's contract,
        // and 4-byte aligned (`.align` of the declaration is that of `[E; N]`).
        // `pure, nomem`: constant memory is not Rust memory and does not
        // change during the kernel, so the compiler may combine or hoist loads.
        unsafe {
            core::arch::asm!(
                "ld.const.b32 {v}, [{a}];",
                v = out(reg32) bits,
                a = in(reg64) address,
                options(pure, nomem, nostack),
            );
        }
        E::from_bits(bits)
    }
}

/// Declares `__constant__` symbols at module level; see the
/// [module docs](crate::constant).
///
/// ```text
/// constant_memory! {
///     /// docs
///     pub NAME: [f32; 1024];
/// }
/// ```
///
/// Defines `pub const NAME: ConstantSymbol<[f32; 1024]>` on every target and,
/// on `nvptx64`, the PTX declaration `.visible .const .align 4 .b8 NAME[4096];`.
/// The type's size must be between 1 byte and 64 KiB (checked at compile
/// time); all symbols of a module together must also fit in 64 KiB, which
/// ptxas checks.
macro_rules! constant_memory {
    (@one [$(#[$meta:meta])*] $vis:vis $name:ident $ty:ty) => {
        const _: () = assert!(
            ::core::mem::size_of::<$ty>() > 0 && ::core::mem::size_of::<$ty>() <= 65536,
            concat!("constant memory `", stringify!($name), "` must hold 1 byte to 64 KiB"),
        );

        #[cfg(target_arch = "nvptx64")]
        ::core::arch::global_asm!(
            concat!(".visible .const .align {align} .b8 ", stringify!($name), "[{bytes}];"),
            align = const ::core::mem::align_of::<$ty>(),
            bytes = const ::core::mem::size_of::<$ty>(),
        );

        $(#[$meta])*
        #[cfg(target_arch = "nvptx64")]
        $vis const $name: $crate::constant::ConstantSymbol<$ty> =
            $crate::constant::ConstantSymbol::new(stringify!($name), concat!(stringify!($name), "\0"), {
                #[inline(always)]
                fn address() -> u64 {
                    let address: u64;
                    // SAFETY: moves the symbol's address into a register;
                    // no memory is touched.
                    unsafe {
                        ::core::arch::asm!(
                            concat!("mov.u64 {a}, ", stringify!($name), ";"),
                            a = out(reg64) address,
                            options(pure, nomem, nostack),
                        );
                    }
                    address
                }
                address
            });

        $(#[$meta])*
        #[cfg(not(target_arch = "nvptx64"))]
        $vis const $name: $crate::constant::ConstantSymbol<$ty> =
            $crate::constant::ConstantSymbol::new(stringify!($name), concat!(stringify!($name), "\0"));
    };

    ($( $(#[$meta:meta])* $vis:vis $name:ident : $ty:ty; )+) => {
        $( $crate::constant::constant_memory!(@one [$(#[$meta])*] $vis $name $ty); )+
    };
}

// A path for the macro (`crate::constant::constant_memory!`), besides the
// textual scope that `#[macro_use]` on the module gives.
pub(crate) use constant_memory;
