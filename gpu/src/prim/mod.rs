//! The device layer: what `cuda_std` would have given.
//!
//! The only module of the crate that touches `core::arch::nvptx`, compiler
//! intrinsics or inline PTX. Everything here is small and `#[inline(always)]`;
//! kernels compose it. One file per idea:
//!
//! * [`index`]: thread, block and grid indices, 1D and 2D, and grid-stride loops;
//! * [`sync`]: block, named and warp barriers, `trap`;
//! * [`shared`]: the block's dynamic shared memory, typed and carved;
//! * [`warp`]: shuffles and votes;
//! * [`atomic`]: atomics on shared and global memory;
//! * [`bytes`]: byte permutes (`prmt`) and byte dot products (`dp4a`);
//! * [`memory`]: read-only, L2-only, 16-byte vector and predicated loads and stores;
//! * [`collective`]: warp and block reductions, generic over the operation;
//! * [`stream`]: a slice streamed through 16-byte loads (head, body, tail);
//! * [`math`]: multiply-high and widening multiplies, fast `sin`/`cos`/`log`/`exp`;
//! * [`pipeline`]: asynchronous global-to-shared copies (`cp.async`, sm_80+);
//! * [`mma`]: tensor-core products on TF32 (`mma.sync`, sm_80+);
//! * [`wgmma`]: warpgroup tensor-core products (`wgmma`, sm_90a only);
//! * [`bulk`]: bulk copies into shared memory by the copy engine (TMA),
//!   completed on transaction barriers, and its L2 prefetch (sm_90a only);
//! * [`ring`]: the stage ring of a copy-engine pipeline, its barriers and
//!   each party's place in it (sm_90a only);
//! * [`print`]: `gpu_print!`, the device's `printf`, and panic locations, for
//!   debugging (feature `debug-print` only; never in the shipped PTX);
//! * and, outside `prim` because the host needs their names and sizes too,
//!   [`crate::constant`]: `__constant__` symbols.
//!
//! Thread indices are `u32`, as in hardware; element indices are `usize`, so a
//! grid that covers more than 2^32 elements never wraps.

pub mod atomic;
#[cfg(target_feature = "sm_90a")]
pub mod bulk;
pub mod bytes;
pub mod collective;
pub mod index;
pub mod math;
pub mod memory;
pub mod mma;
pub mod pipeline;
pub mod print;
#[cfg(target_feature = "sm_90a")]
pub mod ring;
pub mod shared;
pub mod stream;
pub mod sync;
pub mod warp;
#[cfg(target_feature = "sm_90a")]
pub mod wgmma;

pub use atomic::*;
pub use bytes::*;
pub use collective::*;
pub use index::*;
pub use math::*;
pub use memory::*;
#[cfg(target_feature = "sm_80")]
pub use mma::*;
pub use pipeline::*;
pub use shared::*;
pub use stream::*;
pub use sync::*;
pub use warp::*;
