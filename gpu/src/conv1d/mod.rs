//! 1D convolution: the ladder of the PMPP convolution chapter's kernels
//! (basic, mask in constant memory, input tile with its halo in shared
//! memory), register-blocked kernels, Karatsuba's for long masks, a
//! streaming one for short masks and tensor-core ones with FP32 accuracy
//! (3xTF32), for `f32`.
//!
//! `P[i] = Σ_j N[i − r + j] · M[j]` for `j` in `0..taps`, `r = taps / 2`,
//! with `N` zero outside the signal: the "same" output, as long as the
//! signal. For an odd mask the centre (the weight that multiplies `N[i]`) is
//! `M[taps / 2]`, the middle one; for an even mask it is also `M[taps / 2]`,
//! the right one of the middle two. Masks hold 1 to [`MAX_TAPS`] weights.
//!
//! A launch convolves `rows` rows of `n` elements each: row `y` of the
//! signal starts `y · signal_pitch` elements after `signal`, row `y` of the
//! output `y · out_pitch` after `out`, and every row is convolved on its own
//! (zero outside the row). One signal is one row.
//!
//! Every step computes exactly the terms of the definition whose signal
//! index lies inside the row, so NaN and ±∞ in the signal reach exactly the
//! outputs whose window covers them. Steps 1 and 2 skip the terms outside
//! the row; steps 3 and 4 multiply the zeros they stage there, which differs
//! only for a non-finite mask weight (`0 · ∞` is NaN).
//!
//! One file per step: `lesson` (steps 1 to 3), `register_blocked`,
//! `karatsuba`, `streamed`, `tf32x3`, [`wgmma`], [`tma`] and [`corrections`]
//! (steps 4 to 10); `tiles`
//! holds what steps 4 to 7 share on the device. This file holds the
//! definition, the ladder and its kernel table.
//!
//! Every kernel's launch contract: `1 <= taps <= MAX_TAPS`; `signal` valid
//! for reads of `rows` rows of `n` elements `signal_pitch` apart, `out` for
//! writes of `rows` rows of `n` elements `out_pitch` apart, not overlapping
//! the signal, the mask or another row of `out`; `mask` valid for reads of
//! `taps` elements, or [`CONV1D_MASK`] holding the mask (steps 2 and 3,
//! which ignore `mask`); a 1D block of the step's shape, a grid of at least
//! `ceil(n / outputs_per_block)` blocks in x and any number in y (blocks
//! walk the rows `gridDim.y` apart), and the step's `shared_bytes(taps)`.

mod copied;
pub mod corrections;
mod karatsuba;
mod lesson;
mod register_blocked;
mod streamed;
mod tf32x3;
#[cfg(target_arch = "nvptx64")]
mod tiles;
pub mod tma;
pub mod wgmma;

pub use karatsuba::{
    Phase, SPLIT_MIN_TAPS, SPLIT_THREADS, SPLIT_TILE, SPLIT_WIDTH, karatsuba_outputs, split_len,
    split_words,
};
pub use lesson::LESSON_BLOCK;
pub use register_blocked::{
    BLOCKED_THREADS, BLOCKED_WIDTHS, NARROW_MAX_TAPS, SEGMENT_PAD, blocked_outputs, blocked_sums,
    blocked_tile, blocked_tile_len, blocked_width, padded_index, padded_taps, padded_words,
    shifted_sums,
};
pub use streamed::{
    STREAM_MAX_TAPS, STREAM_THREADS, STREAM_TILE, STREAM_WIDTH, stream_shift, stream_tile_len,
};
pub use tf32x3::{
    TENSOR_MIN_TAPS, TENSOR_THREADS, TENSOR_TILE, TENSOR_WARP_TILES, tensor_a_words,
    tensor_b_elements, tensor_d_outputs, tensor_error_units, tensor_index, tensor_mask_len,
    tensor_steps, tensor_tile_len, tensor_tile_words,
};
pub use tma::{TMA_MIN_TAPS, TMA_THREADS, bf16_error_units, tma_error_units};
pub use wgmma::{WGMMA_THREADS, WGMMA_TILE, wgmma_error_units};

use crate::kernel::TensorMap;
#[cfg(target_arch = "nvptx64")]
use tma::MapOperands;

/// The most weights a mask may have (4 100 bytes of constant memory for
/// [`CONV1D_MASK`]). The one limit both sides check against.
pub const MAX_TAPS: usize = 1025;

constant_memory! {
    /// The mask of [`Conv1dVariant::ConstantMask`] and
    /// [`Conv1dVariant::SharedTile`]: its first `taps` weights are the mask
    /// of the launch. One per loaded module, shared by every stream of the
    /// device: the host copies each launch's mask into it in stream order,
    /// after every earlier launch that reads it, on any stream, has run.
    pub CONV1D_MASK: [f32; MAX_TAPS];
}

/// What a step keeps in shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Staging {
    /// Nothing.
    None,
    /// The block's inputs and their halo: `block + taps − 1` elements.
    Halo,
    /// The register-blocked tile (`padded_words` of
    /// `blocked_tile_len`) and the zero-padded mask (`padded_taps`).
    Blocked,
    /// The three half-rate sequences (`split_words` each, laid out as the
    /// register-blocked tile) and three zero-padded half masks.
    Split,
    /// The streamed tile (`stream_tile_len` words, unpadded) and the
    /// shifted, zero-padded mask.
    Streamed,
    /// The tensor-core tile (`tensor_tile_words`, laid out by
    /// `tensor_index`) and the zero-padded mask (`tensor_mask_len`).
    Tensor,
    /// The warpgroup step's two staged parts of the inputs and of the mask
    /// (`wgmma::wgmma_shared_bytes`).
    Warpgroup,
    /// Step 9's (and step 10's) two parts per warpgroup, the mask's and
    /// the barriers (`tma::tma_shared_bytes`).
    TensorCopy,
}

/// How a convolution step is launched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conv1dShape {
    /// The kernel (base name; the suffix is `f32`).
    pub kernel: &'static str,
    /// Threads per block (1D; `blockIdx.y` walks the rows).
    pub block: u32,
    /// Consecutive outputs of one row that one block computes.
    pub outputs_per_block: u32,
    /// Its shared memory.
    pub staging: Staging,
    /// Whether it reads the mask from [`CONV1D_MASK`] (which the host fills
    /// before the launch) instead of the `mask` argument.
    pub constant_mask: bool,
    /// Whether its launch fills the GPU once with blocks that walk runs of
    /// tiles, rather than one block per tile.
    pub walks_runs: bool,
    /// How it multiplies and adds, which sets its error bound.
    pub arithmetic: Arithmetic,
    /// The PTX target the kernel needs: its entry traps in the other
    /// modules, and the host refuses it there.
    pub needs: Needs,
}

/// Where the tensor-core steps run: [`crate::ptx::Needs`], shared with
/// every family that has such steps.
pub use crate::ptx::Needs;

/// How a step multiplies and adds: in `f32` FMAs, or in split products on
/// the tensor cores, each with its own error bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arithmetic {
    /// `f32` FMAs, one term at a time: the bound of a sum of `taps` terms
    /// in order, which the host's checks derive themselves.
    Fma,
    /// Step 7's 3xTF32 `mma.sync` products ([`tensor_error_units`]).
    Tf32x3,
    /// Step 8's 3xTF32 warpgroup products, `t` spanning the mask and 63
    /// more values ([`wgmma_error_units`]).
    Tf32x3Wgmma,
    /// Step 9's: step 8's for the longest moved mask ([`tma_error_units`]).
    Tf32x3Moved,
    /// Step 10's: two TF32 and two BF16 products per 16 values of `t`
    /// ([`bf16_error_units`]).
    Bf16Corrections,
}

impl Arithmetic {
    /// The bound for a mask of `taps`, in units of `2^-24 · Σ_j |x_j ·
    /// m_j|` (and of 2^-149 for subnormal results); `None` for
    /// [`Arithmetic::Fma`].
    pub const fn error_units(self, taps: usize) -> Option<usize> {
        match self {
            Arithmetic::Fma => None,
            Arithmetic::Tf32x3 => Some(tensor_error_units(taps)),
            Arithmetic::Tf32x3Wgmma => Some(wgmma_error_units(taps)),
            Arithmetic::Tf32x3Moved => Some(tma_error_units(taps)),
            Arithmetic::Bf16Corrections => Some(bf16_error_units(taps)),
        }
    }
}

ladder! {
    /// The 1D convolution ladder.
    pub enum Conv1dVariant("conv1d"): Conv1dShape {
        /// Step 1 (lesson): one thread per output; each reads its `taps`
        /// inputs and the `taps` weights from global memory, skipping the
        /// inputs outside the signal (the lesson's boundary checks). Two
        /// loads per multiply-add; neighbouring threads read overlapping
        /// windows, which the L1 cache partly absorbs.
        Basic = "basic" => Conv1dShape {
            kernel: "conv1d_basic",
            block: LESSON_BLOCK,
            outputs_per_block: LESSON_BLOCK,
            staging: Staging::None,
            constant_mask: false,
            walks_runs: false,
            arithmetic: Arithmetic::Fma,
            needs: Needs::Any,
        },
        /// Step 2 (lesson): the mask in constant memory (`__constant__`).
        /// Every lane of a warp reads the same weight at the same time, which
        /// the constant cache serves in one access (a broadcast): one global
        /// load per multiply-add instead of two.
        ConstantMask = "constant_mask" => Conv1dShape {
            kernel: "conv1d_constant_mask",
            block: LESSON_BLOCK,
            outputs_per_block: LESSON_BLOCK,
            staging: Staging::None,
            constant_mask: true,
            walks_runs: false,
            arithmetic: Arithmetic::Fma,
            needs: Needs::Any,
        },
        /// Step 3 (lesson): the block first copies its inputs and their halo
        /// (`block + taps − 1` elements, zeros outside the signal) into shared
        /// memory with coalesced loads; each input is then read from DRAM or
        /// L2 about once instead of `taps` times, and the inner loop reads
        /// shared memory (consecutive lanes, consecutive banks) and constant
        /// memory only, with no boundary checks.
        SharedTile = "shared_tile" => Conv1dShape {
            kernel: "conv1d_shared_tile",
            block: LESSON_BLOCK,
            outputs_per_block: LESSON_BLOCK,
            staging: Staging::Halo,
            constant_mask: true,
            walks_runs: false,
            arithmetic: Arithmetic::Fma,
            needs: Needs::Any,
        },
        /// Step 4: each thread computes `w` consecutive outputs in
        /// registers (`w` = 16, or 8 for masks of up to `NARROW_MAX_TAPS`
        /// taps: see `blocked_width`), a block of `BLOCKED_THREADS`
        /// tiles of `128 w` outputs (`blocked_tile`). Per round
        /// of `w` taps a thread loads `w` new inputs (16-byte shared loads,
        /// conflict-free thanks to the segment padding) and `w` weights
        /// (16-byte broadcast loads of the mask, staged in shared memory
        /// from global: no constant-memory staging, nothing to order between
        /// streams) and does `w²` FMAs: `w / 2` FMAs per shared-memory word
        /// instead of step 3's one. Blocks fill the GPU
        /// once and walk a run of consecutive tiles: the next tile's inputs
        /// are loaded into registers before this tile's FMAs, so DRAM
        /// latency hides behind arithmetic instead of stalling the block,
        /// and the halo is moved within shared memory rather than read
        /// again. The outputs leave as 16-byte stores.
        RegisterBlocked = "register_blocked" => Conv1dShape {
            kernel: "conv1d_register_blocked",
            block: BLOCKED_THREADS,
            // For the wide width; `Conv1dVariant::outputs_per_block` gives
            // the tile of each mask.
            outputs_per_block: blocked_tile(BLOCKED_WIDTHS[1]) as u32,
            staging: Staging::Blocked,
            constant_mask: false,
            walks_runs: true,
            arithmetic: Arithmetic::Fma,
            needs: Needs::Any,
        },
        /// Step 5: two outputs from three half-length convolutions instead
        /// of four (Karatsuba's trick, the "fast FIR algorithm" of signal
        /// processing). With `E`, `O` the even and odd inputs and `h0`, `h1`
        /// the even and odd weights, an even output is `A + B` (`A = h0 ⋆
        /// E`, `B = h1 ⋆ O`) and the odd one after it is `C − A' − B`, where
        /// `C = (h0 + h1) ⋆ (O + E')` and `A'` is the next pair's `A`: ¾ of
        /// the FMAs of step 4 (plus one output of `A` in 16) for a mask
        /// long enough to be bound by them. The block stages `E`, `O` and
        /// `S = O + E'` side by side and runs step 4's wide register
        /// blocking over each, 16 pairs (32 outputs) per thread, one tile
        /// per block. An odd output's error is bounded by the magnitudes of
        /// its neighbours too (see `karatsuba_outputs`); a thread whose
        /// odd outputs are not all finite computes them again directly, so
        /// NaN and ±∞ reach exactly the outputs step 4's do. Masks of
        /// fewer than [`SPLIT_MIN_TAPS`] taps run step 4's kernels, which
        /// overlap loads and FMAs and are faster there. What `conv1d_into`
        /// uses.
        Karatsuba = "karatsuba" => Conv1dShape {
            kernel: "conv1d_karatsuba",
            block: SPLIT_THREADS,
            outputs_per_block: SPLIT_TILE as u32,
            staging: Staging::Split,
            constant_mask: false,
            walks_runs: false,
            arithmetic: Arithmetic::Fma,
            needs: Needs::Any,
        },
        /// Step 6: short masks as a stream of whole sectors. Step 4's
        /// narrow kernel stores a thread's 8 outputs as two 16-byte words
        /// 32 bytes apart across the lanes, so each store instruction
        /// writes half of every 32-byte sector it touches: at mask 7 on an
        /// H200 the L2 counts 15.3 M sector writes where whole sectors take
        /// 12.6 M, and its throughput (85% busy) limits the kernel before
        /// DRAM does (70%, ncu). Here a
        /// thread computes 4 consecutive outputs per pass, so a warp's
        /// store is 512 contiguous bytes (one request per sector); a block
        /// computes one tile of 4 096 outputs (four passes) and stops,
        /// each thread issuing its four 16-byte loads at once (the tile is
        /// made to start on 16 bytes by shifting the mask up to 3 places;
        /// the zeros in front are never multiplied), and the 8 blocks of
        /// 256 threads resident per SM (32 registers) overlap one
        /// another's loads and arithmetic. Masks of more than
        /// [`STREAM_MAX_TAPS`] taps run step 5's kernels. What
        /// `conv1d_into` uses.
        Streamed = "streamed" => Conv1dShape {
            kernel: "conv1d_streamed",
            block: STREAM_THREADS,
            outputs_per_block: STREAM_TILE as u32,
            staging: Staging::Streamed,
            constant_mask: false,
            walks_runs: false,
            arithmetic: Arithmetic::Fma,
            needs: Needs::Any,
        },
        /// Step 7: the convolution as a matrix product on the tensor cores
        /// (`mma.sync` on TF32, sm_80 and newer), with FP32-level accuracy
        /// by 3xTF32. Output `16m + c` of a tile of 128 is `Σ_t M[t − c] ·
        /// X[16m + t]`: a 16 × `k` matrix of the mask (row `c` the mask
        /// shifted by `c`, the same for every tile) times a `k` × 8 matrix
        /// of inputs (column `m` the inputs from `16m`), `k` = `taps + 15`
        /// rounded up to 8. That is `(taps + 15) / taps` times step 4's
        /// multiply-adds, three times over (each operand split, by
        /// truncation, into a TF32 `big` and `small` part; `small·big +
        /// big·small + big·big`), on units with 8 times or more FP32's
        /// rate. Per 8 taps a warp loads and splits the mask's fragment once
        /// for its 4 tiles of 128 outputs, and each tile one 8-byte pair of
        /// inputs: 57 instructions for 12 `mma` on sm_90. Blocks walk runs of
        /// tiles of 4 096 outputs, the next tile's inputs in flight during
        /// this one's products, as in step 4. Outputs that come out
        /// non-finite (NaN or ±∞ in the signal, whose split parts, and the
        /// zero weights they meet, make NaN) are computed again directly, so
        /// NaN and ±∞ reach exactly the outputs step 4's do.
        Tf32x3 = "tf32x3" => Conv1dShape {
            kernel: "conv1d_tf32x3",
            block: TENSOR_THREADS,
            outputs_per_block: TENSOR_TILE as u32,
            staging: Staging::Tensor,
            constant_mask: false,
            walks_runs: true,
            arithmetic: Arithmetic::Tf32x3,
            needs: Needs::Sm80,
        },
        /// Step 8: step 7's 3xTF32 products as warpgroup products
        /// (`wgmma.m64n128k8`, sm_90a only), tiles of 64 × 128 outputs:
        /// the mask's 64 shifts are `A`, in registers, and the inputs `B`,
        /// read by the tensor cores straight from shared memory, staged once
        /// (each split part in a layout where every step's `B` is one
        /// descriptor: [`wgmma`]). One product does for the block what 64
        /// of step 7's `mma.sync` do and runs while the warps load the next
        /// step's mask fragments; `t` spans `taps + 63` instead of `taps +
        /// 15`, the price of the 64 rows. Non-finite outputs are computed
        /// again directly, as in step 7.
        Tf32x3Wgmma = "tf32x3_wgmma" => Conv1dShape {
            kernel: "conv1d_tf32x3_wgmma",
            block: WGMMA_THREADS,
            outputs_per_block: WGMMA_TILE as u32,
            staging: Staging::Warpgroup,
            constant_mask: false,
            walks_runs: true,
            arithmetic: Arithmetic::Tf32x3Wgmma,
            needs: Needs::Sm90a,
        },
        /// Step 9: step 8 with the copy engine laying out the tile and
        /// three warpgroups per block, each on its own tiles ([`tma`]). A
        /// tensor copy writes the tile straight into the layout the tensor
        /// cores read; they take its inputs as the big part (they use only
        /// a TF32 operand's top 19 bits, step 8's split by truncation), so
        /// the threads compute only the small part; and with no raw buffer
        /// three warpgroups fit in a block, two multiplying while the third
        /// waits for its copy, splits and stores, where step 8's two took
        /// turns. Rows whose pitch is not a multiple of [`tma::TMA_ALIGN`]
        /// elements, and rows too short for a whole line of the map
        /// (`tma::tma_geometry`), run step 8's kernel ([`TMA_FALLBACK`],
        /// which [`Conv1dEntry::Mapped`] carries; the host chooses).
        Tf32x3Tma = "tf32x3_tma" => Conv1dShape {
            kernel: "conv1d_tf32x3_tma",
            block: TMA_THREADS,
            outputs_per_block: WGMMA_TILE as u32,
            staging: Staging::TensorCopy,
            constant_mask: false,
            walks_runs: true,
            arithmetic: Arithmetic::Tf32x3Moved,
            needs: Needs::Sm90a,
        },
        /// Step 10: step 9 with its two small terms as BF16 products
        /// ([`corrections`]), which the tensor cores run at twice their
        /// TF32 rate: per 16 values of `t`, two TF32 products (`big·big`)
        /// and two BF16 ones (`bf16(x)·bf16(small_m)`,
        /// `bf16(small_x)·bf16(big_m)`), four products' time where step 9
        /// takes six. The split writes `bf16(x)` and `bf16(small_x)` where
        /// step 9 wrote the small part, in the same space; the error bound
        /// grows by the BF16 roundings of the small terms
        /// ([`bf16_error_units`]). Rows as step 9's, the same fallback.
        Bf16Corrections = "bf16_corrections" => Conv1dShape {
            kernel: "conv1d_bf16_corrections",
            block: TMA_THREADS,
            outputs_per_block: WGMMA_TILE as u32,
            staging: Staging::TensorCopy,
            constant_mask: false,
            walks_runs: true,
            arithmetic: Arithmetic::Bf16Corrections,
            needs: Needs::Sm90a,
        },
    }
    default = Streamed;
}

impl Conv1dVariant {
    /// The step whose kernel runs for a mask of `taps`: this one, except
    /// that [`Conv1dVariant::Karatsuba`] hands masks of fewer than
    /// [`SPLIT_MIN_TAPS`] to [`Conv1dVariant::RegisterBlocked`], and
    /// [`Conv1dVariant::Streamed`] masks of more than [`STREAM_MAX_TAPS`]
    /// to what `Karatsuba` runs. (The host also runs step 9's launches
    /// whose rows its tensor map cannot describe as [`TMA_FALLBACK`].)
    pub const fn runs_as(self, taps: usize) -> Conv1dVariant {
        match self {
            Conv1dVariant::Karatsuba if taps < SPLIT_MIN_TAPS => Conv1dVariant::RegisterBlocked,
            Conv1dVariant::Streamed if taps > STREAM_MAX_TAPS => {
                Conv1dVariant::Karatsuba.runs_as(taps)
            }
            _ => self,
        }
    }

    /// Threads per block for a mask of `taps`.
    pub const fn block(self, taps: usize) -> u32 {
        match self.runs_as(taps) {
            Conv1dVariant::Tf32x3Wgmma => WGMMA_THREADS * wgmma::wgmma_groups(taps) as u32,
            v => v.shape().block,
        }
    }

    /// Consecutive outputs of one row that one block computes at a time
    /// for a mask of `taps`.
    pub const fn outputs_per_block(self, taps: usize) -> u32 {
        match self.runs_as(taps) {
            Conv1dVariant::RegisterBlocked => blocked_tile(blocked_width(taps)) as u32,
            v => v.shape().outputs_per_block,
        }
    }

    /// Whether the launch for a mask of `taps` fills the GPU once with
    /// blocks that walk runs of tiles (the shape's `walks_runs` of the step
    /// that runs, [`Conv1dVariant::runs_as`]).
    pub const fn walks_runs(self, taps: usize) -> bool {
        self.runs_as(taps).shape().walks_runs
    }

    /// The step the default convolution (`conv1d_into`) runs for a mask of
    /// `taps` in the module built for `target`:
    /// [`Conv1dVariant::Bf16Corrections`] from `tma::TMA_MIN_TAPS` taps
    /// in the sm_90a module, [`Conv1dVariant::Tf32x3`] from `TENSOR_MIN_TAPS`
    /// taps where the module has tensor cores, [`Conv1dVariant::DEFAULT`]
    /// (which hands each mask length to its step,
    /// [`Conv1dVariant::runs_as`]) otherwise.
    pub fn fastest_for(taps: usize, target: &str) -> Conv1dVariant {
        if taps >= tma::TMA_MIN_TAPS && Conv1dVariant::Bf16Corrections.needs().met_by(target) {
            Conv1dVariant::Bf16Corrections
        } else if taps >= TENSOR_MIN_TAPS && Conv1dVariant::Tf32x3.needs().met_by(target) {
            Conv1dVariant::Tf32x3
        } else {
            Conv1dVariant::DEFAULT
        }
    }

    /// The PTX targets that run this step (its shape's `needs`).
    pub const fn needs(self) -> Needs {
        self.shape().needs
    }

    /// The tensor-core steps' error bound for a mask of `taps`
    /// ([`Arithmetic::error_units`] of the step that runs); `None` for the
    /// steps that sum in `f32` FMAs.
    pub const fn error_units(self, taps: usize) -> Option<usize> {
        self.runs_as(taps).shape().arithmetic.error_units(taps)
    }

    /// Whether the step reads its mask from [`CONV1D_MASK`].
    pub const fn reads_constant_mask(self) -> bool {
        self.shape().constant_mask
    }

    /// Dynamic shared memory for a mask of `taps` weights (1 to
    /// [`MAX_TAPS`]): at most 29 616 bytes, below the 48 KiB every device
    /// grants without opting in, except step 8's (up to 83 456 bytes, which
    /// the launch opts into on the sm_90a devices that run it).
    pub const fn shared_bytes(self, taps: usize) -> u32 {
        let words = match self.runs_as(taps).shape().staging {
            Staging::None => 0,
            Staging::Halo => self.shape().block as usize + taps - 1,
            Staging::Blocked => {
                let w = blocked_width(taps);
                padded_words(blocked_tile_len(taps, w), w) + padded_taps(taps, w)
            }
            Staging::Split => 3 * (split_words(taps) + padded_taps(taps.div_ceil(2), SPLIT_WIDTH)),
            Staging::Streamed => stream_tile_len(taps) + padded_taps(taps + 3, STREAM_WIDTH),
            Staging::Tensor => tensor_tile_words(taps) + tensor_mask_len(taps),
            Staging::Warpgroup => wgmma::wgmma_groups(taps) * wgmma::wgmma_group_bytes(taps) / 4,
            Staging::TensorCopy => tma::tma_shared_bytes(taps) / 4,
        };
        (words * 4) as u32
    }
}

/// `a · b + c`: one fused multiply-add (one rounding) on the GPU; on the
/// host, where this crate is `no_std` on stable Rust without `fmaf`, a
/// product and a sum (two roundings). Host tests of the functions below
/// check their indexing, within a tolerance that covers either.
#[inline(always)]
#[doc(hidden)]
pub fn fma(a: f32, b: f32, c: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        crate::prim::fma_f32(a, b, c)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        a * b + c
    }
}

/// The signal index of element `e` of a tile whose outputs start at
/// `start`, for a mask of radius `r` on a row of `n`: `start + e − r`, or
/// `None` outside the row (the tile holds a zero there).
#[inline(always)]
#[doc(hidden)]
pub fn tile_source(start: usize, e: usize, r: usize, n: usize) -> Option<usize> {
    let g = start + e;
    if g >= r && g - r < n {
        Some(g - r)
    } else {
        None
    }
}

/// One launch's operands, the parameters of every entry (see the launch
/// contract above), as each step's body takes them.
#[cfg(target_arch = "nvptx64")]
#[derive(Clone, Copy)]
struct Operands {
    signal: *const f32,
    signal_pitch: usize,
    n: usize,
    rows: u32,
    mask: *const f32,
    taps: u32,
    out: *mut f32,
    out_pitch: usize,
}

#[cfg(target_arch = "nvptx64")]
impl Operands {
    /// The first element of signal row `row`.
    ///
    /// # Safety
    /// `row < rows` (the launch contract makes the row valid).
    #[inline(always)]
    unsafe fn input_row(&self, row: usize) -> *const f32 {
        // SAFETY: the caller's `row < rows`; the contract makes every row
        // of the signal valid.
        unsafe { self.signal.add(row * self.signal_pitch) }
    }

    /// The first element of output row `row`.
    ///
    /// # Safety
    /// `row < rows`.
    #[inline(always)]
    unsafe fn output_row(&self, row: usize) -> *mut f32 {
        // SAFETY: as for `input_row`, for the output.
        unsafe { self.out.add(row * self.out_pitch) }
    }
}

kernels! {
    /// Every convolution entry point; one parameter list for all, which
    /// each step's body takes as one `Operands`.
    pub const KERNELS = {
        (signal: *const T, signal_pitch: usize, n: usize, rows: u32,
            mask: *const T, taps: u32, out: *mut T, out_pitch: usize) as Operands {
            fn conv1d_basic<T in f32> = lesson::basic;
            fn conv1d_constant_mask<T in f32> = lesson::constant_mask;
            fn conv1d_shared_tile<T in f32> = lesson::shared_tile;
            /// One entry per width: `conv1d_register_blocked_8_f32`, `..._16_f32`.
            fn conv1d_register_blocked<T in f32; const WIDTH: u32 = { 8, 16 }>
                = register_blocked::kernel::<{ WIDTH as usize }>;
            fn conv1d_karatsuba<T in f32> = karatsuba::kernel;
            fn conv1d_streamed<T in f32> = streamed::kernel;
            fn conv1d_tf32x3<T in f32> = tf32x3::kernel;
            /// One entry per number of warpgroups in a block:
            /// `conv1d_tf32x3_wgmma_1_f32`, `..._2_f32` ([`wgmma::wgmma_groups`]).
            /// A constant count lets the one-warpgroup entry drop the turns: 125
            /// registers; with the count read from the block's size, one entry
            /// took 233 to 246 and ran 1 025 taps 5% slower (H200, 1 168 against
            /// 1 111 µs).
            fn conv1d_tf32x3_wgmma<T in f32; const GROUPS: u32 = { 1, 2 }>
                = wgmma::kernel::<{ GROUPS as usize }>;
        }
        // Step 9's: the same, then its tensor map (see `tma`).
        (signal: *const T, signal_pitch: usize, n: usize, rows: u32,
            mask: *const T, taps: u32, out: *mut T, out_pitch: usize,
            map: TensorMap) as MapOperands {
            /// A 128-byte aggregate parameter, as `gemm_tma_tf32`'s two.
            #[allow(improper_gpu_kernel_arg)]
            fn conv1d_tf32x3_tma<T in f32> = tma::kernel::<false>;
            /// Step 10's: step 9's with the BF16 products.
            #[allow(improper_gpu_kernel_arg)]
            fn conv1d_bf16_corrections<T in f32> = tma::kernel::<true>;
        }
    }
}

/// The arguments every convolution kernel takes but steps 9 and 10's.
pub type Conv1dArgs<T> = conv1d_basic::Args<T>;

/// The arguments of steps 9 and 10's kernels: [`Conv1dArgs`], a tensor map
/// and its slots.
pub type Conv1dMapArgs<T> = conv1d_tf32x3_tma::Args<T>;

/// The step that runs step 9's and step 10's launches whose rows their
/// tensor map cannot describe (a pitch that is not a multiple of [`tma::TMA_ALIGN`]
/// elements, rows too short for a line: `tma::tma_geometry` is `None`).
pub const TMA_FALLBACK: Conv1dVariant = Conv1dVariant::Tf32x3Wgmma;

/// The kernel a step runs, typed by the arguments it takes: steps 9 and
/// 10's kernels take a tensor map besides what every other step's takes.
#[derive(Clone, Copy, Debug)]
pub enum Conv1dEntry {
    /// Every step's kernel but steps 9 and 10's.
    Plain(crate::Entry<Conv1dArgs<f32>>),
    /// Step 9's ([`Conv1dVariant::Tf32x3Tma`]) or step 10's
    /// ([`Conv1dVariant::Bf16Corrections`]), and the kernel of
    /// [`TMA_FALLBACK`] for the rows its map cannot describe: the host
    /// picks one of the two with the rows' geometry, so that no launch
    /// path lacks a kernel.
    Mapped {
        /// The step's own kernel.
        map: crate::Entry<Conv1dMapArgs<f32>>,
        /// [`TMA_FALLBACK`]'s kernel for the same mask.
        fallback: crate::Entry<Conv1dArgs<f32>>,
    },
}

impl Conv1dEntry {
    /// The kernel's table row (the step's own for [`Conv1dEntry::Mapped`]).
    pub const fn kernel(self) -> &'static crate::Kernel {
        match self {
            Conv1dEntry::Plain(entry) => entry.kernel(),
            Conv1dEntry::Mapped { map, .. } => map.kernel(),
        }
    }
}

// The kernel tables' widths and warpgroup counts are the ones the host
// chooses from.
const _: () = assert!(
    conv1d_tf32x3_wgmma::VALUES.len() == 2
        && conv1d_tf32x3_wgmma::VALUES[0] == 1
        && conv1d_tf32x3_wgmma::VALUES[1] as usize == wgmma::WGMMA_GROUPS_MAX
);
const _: () = assert!(
    conv1d_register_blocked::VALUES.len() == 2
        && conv1d_register_blocked::VALUES[0] as usize == BLOCKED_WIDTHS[0]
        && conv1d_register_blocked::VALUES[1] as usize == BLOCKED_WIDTHS[1]
);

impl Conv1dVariant {
    /// The kernel this step runs for a mask of `taps` ([`Conv1dVariant::runs_as`]).
    #[doc(hidden)]
    pub fn entry(self, taps: usize) -> Conv1dEntry {
        let plain = match self.runs_as(taps) {
            Conv1dVariant::Basic => conv1d_basic::entry::<f32>(),
            Conv1dVariant::ConstantMask => conv1d_constant_mask::entry::<f32>(),
            Conv1dVariant::SharedTile => conv1d_shared_tile::entry::<f32>(),
            Conv1dVariant::RegisterBlocked => {
                match conv1d_register_blocked::entry::<f32>(blocked_width(taps) as u32) {
                    Some(entry) => entry,
                    // The widths are the table's (asserted above).
                    None => unreachable!("a register-blocked width without an entry"),
                }
            }
            Conv1dVariant::Karatsuba => conv1d_karatsuba::entry::<f32>(),
            Conv1dVariant::Streamed => conv1d_streamed::entry::<f32>(),
            Conv1dVariant::Tf32x3 => conv1d_tf32x3::entry::<f32>(),
            Conv1dVariant::Tf32x3Wgmma => wgmma_entry(taps),
            Conv1dVariant::Tf32x3Tma => {
                return Conv1dEntry::Mapped {
                    map: conv1d_tf32x3_tma::entry::<f32>(),
                    fallback: wgmma_entry(taps),
                };
            }
            Conv1dVariant::Bf16Corrections => {
                return Conv1dEntry::Mapped {
                    map: conv1d_bf16_corrections::entry::<f32>(),
                    fallback: wgmma_entry(taps),
                };
            }
        };
        Conv1dEntry::Plain(plain)
    }
}

/// Step 8's kernel ([`TMA_FALLBACK`]) for a mask of `taps`.
fn wgmma_entry(taps: usize) -> crate::Entry<Conv1dArgs<f32>> {
    match conv1d_tf32x3_wgmma::entry::<f32>(wgmma::wgmma_groups(taps) as u32) {
        Some(entry) => entry,
        // The counts are the table's (asserted above).
        None => unreachable!("a warpgroup count without an entry"),
    }
}

/// This family's entries compiled for a number of resident blocks per SM
/// (gathered in [`crate::LAUNCH_BOUNDS`], whose doc says how they are used).
pub const LAUNCH_BOUNDS: &[crate::kernel::LaunchBounds] = &[
    // Three warpgroups, one block per SM (its shared memory): 168
    // registers a thread at most, which the products' 64 accumulators and
    // the split's quads fit without spills. Step 10's kernel, the same
    // block, has no bounds: it takes 160 registers without them (so it
    // launches), 168 with them.
    // H200 2026-11: step 10 0.6-1.3% faster with them, H100 0.3-0.6% slower
    // (docs/notes/conv1d.md)
    crate::kernel::LaunchBounds {
        entry: "conv1d_tf32x3_tma_f32",
        threads: crate::conv1d::TMA_THREADS,
        blocks_per_sm: 1,
    },
    // 144 registers left 6 blocks of 64 threads (12 warps) per SM; held
    // to 8 (128 registers).
    // H100 2026-11: mask 127 413 µs against 443 uncapped (docs/notes/conv1d.md)
    crate::kernel::LaunchBounds {
        entry: "conv1d_karatsuba_f32",
        threads: crate::conv1d::SPLIT_THREADS,
        blocks_per_sm: 8,
    },
    // Built around 2 blocks of 256 threads per SM, one's products hiding
    // the other's staging: 127 registers for sm_90 uncapped, 150 for
    // sm_80 (one block), held here to 128 with no spills; the sm_80 build is
    // not measured (no such GPU here).
    crate::kernel::LaunchBounds {
        entry: "conv1d_tf32x3_f32",
        threads: crate::conv1d::TENSOR_THREADS,
        blocks_per_sm: 2,
    },
    // Its rounds taken two at a time (`shifted_sums`), left to itself
    // ptxas gave 150 registers (3 blocks of 128 threads per SM); held to 4
    // it takes 96 (5 fit) and spills nothing for sm_90.
    // H100 2026-11: mask 127 408 µs against 410 without them (docs/notes/conv1d.md)
    crate::kernel::LaunchBounds {
        entry: "conv1d_register_blocked_16_f32",
        threads: crate::conv1d::BLOCKED_THREADS,
        blocks_per_sm: 4,
    },
];

/// This family's entries whose local memory is kept deliberately
/// (gathered in [`crate::SPILLS_ON_PURPOSE`], whose doc says what that
/// allows).
pub const SPILLS_ON_PURPOSE: &[&str] = &[
    // Held to 128 registers (`LAUNCH_BOUNDS`, 8 blocks per SM): no spills
    // for sm_90, 16 bytes for sm_80 and 120 for sm_70, whose ptxas
    // allocates less tightly; measured on the H100 (sm_90) only.
    "conv1d_karatsuba_f32",
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

#[cfg(test)]
mod tests {
    // The crate is `no_std`; its host tests may allocate.
    extern crate std;
    use super::*;

    #[test]
    fn shapes_name_their_kernels() {
        for &v in Conv1dVariant::ALL {
            for taps in [
                1,
                STREAM_MAX_TAPS,
                STREAM_MAX_TAPS + 1,
                NARROW_MAX_TAPS,
                NARROW_MAX_TAPS + 1,
                SPLIT_MIN_TAPS,
                MAX_TAPS,
            ] {
                let entry = v.entry(taps);
                let base = entry.kernel().base;
                assert!(base.starts_with(v.runs_as(taps).shape().kernel), "{base}");
                let mapped = [Conv1dVariant::Tf32x3Tma, Conv1dVariant::Bf16Corrections];
                match entry {
                    Conv1dEntry::Plain(_) => assert!(!mapped.contains(&v)),
                    Conv1dEntry::Mapped { fallback, .. } => {
                        assert!(mapped.contains(&v));
                        let Conv1dEntry::Plain(want) = TMA_FALLBACK.entry(taps) else {
                            panic!("step 9's fallback takes a tensor map");
                        };
                        assert_eq!(fallback.kernel().name, want.kernel().name);
                    }
                }
            }
        }
        let narrow = Conv1dVariant::RegisterBlocked.entry(7).kernel().name;
        let wide = Conv1dVariant::RegisterBlocked.entry(127).kernel().name;
        assert_eq!(
            (narrow, wide),
            (
                "conv1d_register_blocked_8_f32",
                "conv1d_register_blocked_16_f32"
            )
        );
    }

    #[test]
    fn shapes_agree_with_themselves() {
        for &v in Conv1dVariant::ALL {
            let shape = v.shape();
            // FMAs run everywhere; the tensor cores' products need sm_80,
            // warpgroup products sm_90a.
            let needs = match shape.arithmetic {
                Arithmetic::Fma => Needs::Any,
                Arithmetic::Tf32x3 => Needs::Sm80,
                _ => Needs::Sm90a,
            };
            assert_eq!(shape.needs, needs, "{v:?}");
            // Every tensor-core step walks runs of tiles; so does step 4.
            let tensor = shape.arithmetic != Arithmetic::Fma;
            let blocked = v == Conv1dVariant::RegisterBlocked;
            assert_eq!(shape.walks_runs, tensor || blocked, "{v:?}");
        }
        // The error bound is that of the step that runs.
        assert_eq!(Conv1dVariant::Streamed.error_units(1025), None);
        assert_eq!(
            Conv1dVariant::Bf16Corrections.error_units(127),
            Some(bf16_error_units(127))
        );
    }

    #[test]
    fn shared_memory_fits_without_opting_in() {
        for &v in Conv1dVariant::ALL {
            if v.needs() == Needs::Sm90a {
                continue;
            }
            for taps in 1..=MAX_TAPS {
                assert!(v.shared_bytes(taps) <= 48 << 10, "{v:?} {taps}");
            }
        }
        // (2048 + 1040) / 16 segments of 20 words, and 1040 weights.
        assert_eq!(
            Conv1dVariant::RegisterBlocked.shared_bytes(MAX_TAPS),
            19_600
        );
        // Three phases of (1024 + 528) / 16 segments of 20 words, and three
        // half masks of 528 weights.
        assert_eq!(Conv1dVariant::Karatsuba.shared_bytes(MAX_TAPS), 29_616);
        // Short masks: step 4's narrow kernel and its staging.
        assert_eq!(
            Conv1dVariant::Karatsuba.shared_bytes(7),
            Conv1dVariant::RegisterBlocked.shared_bytes(7)
        );
        assert_eq!(Conv1dVariant::SharedTile.shared_bytes(7), (256 + 6) * 4);
        // 4096 + 12 inputs and 12 weights.
        assert_eq!(Conv1dVariant::Streamed.shared_bytes(7), (4108 + 12) * 4);
        assert_eq!(
            Conv1dVariant::Streamed.shared_bytes(STREAM_MAX_TAPS + 1),
            Conv1dVariant::RegisterBlocked.shared_bytes(STREAM_MAX_TAPS + 1)
        );
        assert_eq!(Conv1dVariant::Basic.shared_bytes(MAX_TAPS), 0);
        // One warpgroup at 1 025 taps, two at 127.
        assert_eq!(
            Conv1dVariant::Tf32x3Wgmma.shared_bytes(MAX_TAPS) as usize,
            wgmma::wgmma_group_bytes(MAX_TAPS)
        );
        assert_eq!(Conv1dVariant::Tf32x3Wgmma.block(MAX_TAPS), WGMMA_THREADS);
        assert_eq!(Conv1dVariant::Tf32x3Wgmma.shared_bytes(127), 2 * 102_528);
        assert_eq!(Conv1dVariant::Tf32x3Wgmma.block(127), 2 * WGMMA_THREADS);
    }

    /// A value in [-1, 1) that depends on `i` and `seed` only.
    pub(super) fn value(i: usize, seed: u64) -> f32 {
        let h = (i as u64 ^ seed)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .rotate_left(29)
            .wrapping_mul(0xbf58_476d_1ce4_e5b9);
        (h >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }

    #[test]
    fn tile_sources_are_inside_the_row() {
        // Radius 3: tile element e of the first block is input e − 3.
        assert_eq!(tile_source(0, 2, 3, 10), None);
        assert_eq!(tile_source(0, 3, 3, 10), Some(0));
        assert_eq!(tile_source(0, 12, 3, 10), Some(9));
        assert_eq!(tile_source(0, 13, 3, 10), None);
        assert_eq!(tile_source(4096, 0, 3, 5000), Some(4093));
    }
}
