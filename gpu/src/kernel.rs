//! One definition of every kernel entry point.
//!
//! [`kernels!`] turns a list of entry points into two things at once:
//!
//! * on `nvptx64`, each entry as an `extern "gpu-kernel"` function, one per
//!   element type, exported as `<base>_<type>` (`reduce_sequential_f32`);
//! * on every target, a table of [`Kernel`] rows: the exported name, its base
//!   and type, and the byte size of each parameter, taken from the very same
//!   Rust signature.
//!
//! The host resolves every row when it loads the module and checks the
//! argument sizes of every launch against the row; `cargo xtask build-ptx`
//! checks the PTX against the rows. A kernel cannot be renamed or change its
//! parameters on one side only.

/// An entry point as the host must launch it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kernel {
    /// The `.entry` name in the PTX: `<base>_<ty>`.
    pub name: &'static str,
    /// The name without its type suffix, e.g. `reduce_sequential`.
    pub base: &'static str,
    /// The element type the entry is instantiated for, e.g. `f32`.
    pub ty: &'static str,
    /// Byte size of each parameter, in order (pointers and `usize` are 8).
    pub params: &'static [usize],
}

/// Declares kernel entry points and their table. See the module docs.
///
/// ```text
/// kernels! {
///     pub const KERNELS = {
///         /// docs
///         fn reduce_example<T in f32, i32>(x: *const T, n: usize) => body::<T>(x, n);
///     }
/// }
/// ```
macro_rules! kernels {
    (
        $(#[$table_meta:meta])*
        pub const $table:ident = {
            $(
                $(#[$meta:meta])*
                fn $base:ident < T in $($ty:ident),+ > $sig:tt => $body:expr ;
            )*
        }
    ) => {
        $( kernels!(@entries [$(#[$meta])*] $base $sig $body; $($ty),+); )*

        $(#[$table_meta])*
        pub const $table: &[$crate::Kernel] = &[
            $( $(
                $crate::Kernel {
                    name: concat!(stringify!($base), "_", stringify!($ty)),
                    base: stringify!($base),
                    ty: stringify!($ty),
                    params: kernels!(@params $ty $sig),
                },
            )+ )*
        ];
    };

    (@entries $metas:tt $base:ident $sig:tt $body:expr; $($ty:ident),+) => {
        $( kernels!(@entry $metas $base $sig $body; $ty); )+
    };

    (@entry [$(#[$meta:meta])*] $base:ident ( $( $arg:ident : $argty:ty ),* $(,)? ) $body:expr; $ty:ident) => {
        const _: () = {
            #[allow(dead_code)]
            type T = $ty;
            $(#[$meta])*
            #[cfg(target_arch = "nvptx64")]
            #[unsafe(export_name = concat!(stringify!($base), "_", stringify!($ty)))]
            pub unsafe extern "gpu-kernel" fn entry( $( $arg : $argty ),* ) {
                // SAFETY: the host launches this entry only after checking the
                // launch contract documented on the body it calls (pointer
                // validity for the stated lengths, block and shared-memory
                // sizes); see `warpspeed`'s launch module.
                unsafe { $body }
            }
        };
    };

    (@params $ty:ident ( $( $arg:ident : $argty:ty ),* $(,)? )) => {{
        #[allow(dead_code)]
        type T = $ty;
        &[ $( ::core::mem::size_of::<$argty>() ),* ]
    }};
}
