//! A family's ladder of variants, declared once.
//!
//! `ladder!` takes one row per step — the variant, its doc comment (what
//! it changes from the step before and why that is faster), its short name
//! and its launch shape (a value of a type the family defines: block,
//! tile, shared memory, the kernel it launches) — and generates the enum,
//! its step numbers (the declaration order, from 1), names, shapes, `ALL`
//! and `DEFAULT`, and the [`Ladder`] implementation the generic test and
//! bench drivers iterate over.

/// A ladder: the steps of one kernel family, from the lesson's first kernel
/// to the fastest one.
pub trait Ladder: Copy + Eq + core::fmt::Debug + 'static {
    /// The family's name, as in test and benchmark names (`reduce`).
    const FAMILY: &'static str;
    /// Every step, in order.
    const ALL: &'static [Self];
    /// The step the family's plain functions run: the fastest step that
    /// keeps the family's full accuracy (for SGEMM the FP32 step; the
    /// tensor-core steps trade accuracy for speed and are chosen by
    /// precision). Named `DEFAULT`, not "fastest", for that reason.
    const DEFAULT: Self;
    /// The step's number, from 1.
    fn step(self) -> u32;
    /// A short `snake_case` name, as in the benchmark tables.
    fn name(self) -> &'static str;
}

/// Declares a ladder. See the module docs.
///
/// ```text
/// ladder! {
///     /// The example ladder.
///     pub enum ExampleVariant("example"): Shape {
///         /// Step 1: ...
///         Naive = "naive" => Shape { block: 256, kernel: "example_naive" },
///         /// Step 2: ...
///         Tiled = "tiled" => Shape { block: 128, kernel: "example_tiled" },
///     }
///     default = Tiled;
/// }
/// ```
macro_rules! ladder {
    (
        $(#[$meta:meta])*
        pub enum $ladder:ident ($family:literal) : $shape:ty {
            $(
                $(#[$vmeta:meta])*
                $variant:ident = $name:literal => $shape_value:expr,
            )+
        }
        default = $default:ident;
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $ladder {
            $( $(#[$vmeta])* $variant, )+
        }

        impl $ladder {
            /// Every step, in order.
            pub const ALL: &'static [$ladder] = &[ $( $ladder::$variant ),+ ];

            /// The step the family's plain functions run (see
            /// [`Ladder::DEFAULT`](crate::Ladder::DEFAULT)).
            pub const DEFAULT: $ladder = $ladder::$default;

            /// The step's number, from 1: its place in the declaration.
            pub const fn step(self) -> u32 {
                self as u32 + 1
            }

            /// A short `snake_case` name, as in the benchmark tables.
            pub const fn name(self) -> &'static str {
                match self {
                    $( $ladder::$variant => $name, )+
                }
            }

            /// The step's launch shape (the library's own: hidden from the
            /// documentation, as the type it returns is).
            #[doc(hidden)]
            pub const fn shape(self) -> $shape {
                match self {
                    $( $ladder::$variant => $shape_value, )+
                }
            }
        }

        impl $crate::ladder::Ladder for $ladder {
            const FAMILY: &'static str = $family;
            const ALL: &'static [Self] = $ladder::ALL;
            const DEFAULT: Self = $ladder::DEFAULT;
            fn step(self) -> u32 {
                $ladder::step(self)
            }
            fn name(self) -> &'static str {
                $ladder::name(self)
            }
        }
    };
}
