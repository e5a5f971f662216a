//! Warpgroup tensor-core products (`wgmma`, sm_90a: Hopper's arch-specific
//! features, which only the `sm_90a` build has).
//!
//! A *warpgroup* is 4 consecutive warps (128 threads, the first warp's index
//! a multiple of 4). `wgmma.mma_async` multiplies a 64-row tile of `A` by an
//! `n`-column tile of `B` for the whole warpgroup and runs asynchronously:
//! issued, then committed as a group, then waited for. `B` is read from
//! shared memory through a [descriptor](crate::descriptor); here `A` comes from registers,
//! in the fragment layout of [`mma_tf32_16x8x8`](super::mma_tf32_16x8x8)
//! with warp `w` of the warpgroup holding rows `16w ..= 16w + 15`. The
//! accumulator of `m64n128` is 64 registers per thread: with `g = lane / 4`,
//! `t = lane % 4`, register `4i + e` holds row `16w + g + 8(e / 2)`, column
//! `8i + 2t + e % 2`.
//!
//! The rules, from the PTX ISA, that the kernels follow:
//!
//! * [`fence`] before the first product of a batch, and whenever registers
//!   that a product reads (its `A` fragment or accumulator) were written by
//!   other instructions since the last fence;
//! * shared memory written by ordinary stores must be made visible to the
//!   products' (asynchronous) reads by [`fence_proxy_async`] on the writing
//!   threads, then a barrier;
//! * the registers of a product's `A` fragment must not be written until
//!   a [`wait`] covers it: a kernel that loads the next fragments while
//!   products run loads them into other variables and [`hold`]s the old
//!   ones after that wait;
//! * the accumulator must not be touched between a product and the
//!   [`wait`] that covers it; [`wait`] takes it as an operand, so the
//!   compiler cannot move its reads above the wait;
//! * the shared memory a product reads must not be written until a wait
//!   covers it;
//! * every thread of the warpgroup executes the same instructions
//!   (`.sync.aligned`): no divergent calls.

use core::arch::asm;

/// `asm!` with the 64 registers of accumulator `$d` appended as in-out
/// operands `{d0}` to `{d63}` (one list for every instruction that names
/// them), then `options(nostack)`.
macro_rules! asm_with_accumulator {
    ($d:ident; $($template_and_operands:tt)*) => {
        asm!(
            $($template_and_operands)*
            d0 = inout(reg32) $d[0],
            d1 = inout(reg32) $d[1],
            d2 = inout(reg32) $d[2],
            d3 = inout(reg32) $d[3],
            d4 = inout(reg32) $d[4],
            d5 = inout(reg32) $d[5],
            d6 = inout(reg32) $d[6],
            d7 = inout(reg32) $d[7],
            d8 = inout(reg32) $d[8],
            d9 = inout(reg32) $d[9],
            d10 = inout(reg32) $d[10],
            d11 = inout(reg32) $d[11],
            d12 = inout(reg32) $d[12],
            d13 = inout(reg32) $d[13],
            d14 = inout(reg32) $d[14],
            d15 = inout(reg32) $d[15],
            d16 = inout(reg32) $d[16],
            d17 = inout(reg32) $d[17],
            d18 = inout(reg32) $d[18],
            d19 = inout(reg32) $d[19],
            d20 = inout(reg32) $d[20],
            d21 = inout(reg32) $d[21],
            d22 = inout(reg32) $d[22],
            d23 = inout(reg32) $d[23],
            d24 = inout(reg32) $d[24],
            d25 = inout(reg32) $d[25],
            d26 = inout(reg32) $d[26],
            d27 = inout(reg32) $d[27],
            d28 = inout(reg32) $d[28],
            d29 = inout(reg32) $d[29],
            d30 = inout(reg32) $d[30],
            d31 = inout(reg32) $d[31],
            d32 = inout(reg32) $d[32],
            d33 = inout(reg32) $d[33],
            d34 = inout(reg32) $d[34],
            d35 = inout(reg32) $d[35],
            d36 = inout(reg32) $d[36],
            d37 = inout(reg32) $d[37],
            d38 = inout(reg32) $d[38],
            d39 = inout(reg32) $d[39],
            d40 = inout(reg32) $d[40],
            d41 = inout(reg32) $d[41],
            d42 = inout(reg32) $d[42],
            d43 = inout(reg32) $d[43],
            d44 = inout(reg32) $d[44],
            d45 = inout(reg32) $d[45],
            d46 = inout(reg32) $d[46],
            d47 = inout(reg32) $d[47],
            d48 = inout(reg32) $d[48],
            d49 = inout(reg32) $d[49],
            d50 = inout(reg32) $d[50],
            d51 = inout(reg32) $d[51],
            d52 = inout(reg32) $d[52],
            d53 = inout(reg32) $d[53],
            d54 = inout(reg32) $d[54],
            d55 = inout(reg32) $d[55],
            d56 = inout(reg32) $d[56],
            d57 = inout(reg32) $d[57],
            d58 = inout(reg32) $d[58],
            d59 = inout(reg32) $d[59],
            d60 = inout(reg32) $d[60],
            d61 = inout(reg32) $d[61],
            d62 = inout(reg32) $d[62],
            d63 = inout(reg32) $d[63],
            options(nostack),
        )
    };
}

/// One `wgmma.mma_async` of a 64 × 128 tile into the accumulator `d`:
/// `A` from the registers `a`, `B` from the descriptor `b`, `d` kept where
/// `accumulate` (else overwritten), scales of 1 for both operands. `shape`
/// names the shape and types (`m64n128k8.f32.tf32.tf32`); `tail` the
/// immediates the types take after the scales (BF16's `B` transpose flag).
macro_rules! mma_m64n128 {
    ($d:ident, $a:ident, $b:ident, $accumulate:ident, $shape:literal, $tail:literal) => {
        asm_with_accumulator!($d;
            "{{ .reg .pred p; setp.ne.b32 p, {scale}, 0;",
            concat!("wgmma.mma_async.sync.aligned.", $shape),
            "{{{d0}, {d1}, {d2}, {d3}, {d4}, {d5}, {d6}, {d7}, {d8}, {d9}, {d10}, {d11}, {d12}, {d13}, {d14}, {d15}, {d16}, {d17}, {d18}, {d19}, {d20}, {d21}, {d22}, {d23}, {d24}, {d25}, {d26}, {d27}, {d28}, {d29}, {d30}, {d31}, {d32}, {d33}, {d34}, {d35}, {d36}, {d37}, {d38}, {d39}, {d40}, {d41}, {d42}, {d43}, {d44}, {d45}, {d46}, {d47}, {d48}, {d49}, {d50}, {d51}, {d52}, {d53}, {d54}, {d55}, {d56}, {d57}, {d58}, {d59}, {d60}, {d61}, {d62}, {d63}}},",
            concat!("{{{a0}, {a1}, {a2}, {a3}}}, {b}, p, 1, 1", $tail, "; }}"),
            a0 = in(reg32) $a[0],
            a1 = in(reg32) $a[1],
            a2 = in(reg32) $a[2],
            a3 = in(reg32) $a[3],
            b = in(reg64) $b,
            scale = in(reg32) $accumulate as u32,
        )
    };
}

/// Accumulator registers per thread of an `m64n128` product.
#[doc(hidden)]
pub const WGMMA_N128_REGS: usize = 64;

/// `wgmma.fence`: orders the warpgroup's earlier register writes before the
/// products that follow. All threads of the warpgroup call it together.
#[inline(always)]
#[doc(hidden)]
pub fn fence() {
    // SAFETY: a fence: no operands, no memory access of its own.
    unsafe { asm!("wgmma.fence.sync.aligned;", options(nostack)) }
}

/// `fence.proxy.async.shared::cta`: makes this thread's earlier ordinary
/// stores to shared memory visible to asynchronous-proxy reads (the
/// products' operand reads), once a barrier has followed.
#[inline(always)]
#[doc(hidden)]
pub fn fence_proxy_async() {
    // SAFETY: a fence: no operands.
    unsafe { asm!("fence.proxy.async.shared::cta;", options(nostack)) }
}

/// `wgmma.commit_group`: closes the products issued since the last commit
/// into one group. All threads of the warpgroup call it together.
#[inline(always)]
#[doc(hidden)]
pub fn commit() {
    // SAFETY: no operands; groups are per warpgroup.
    unsafe { asm!("wgmma.commit_group.sync.aligned;", options(nostack)) }
}

/// `wgmma.wait_group PENDING`: waits until at most `PENDING` committed
/// groups of the warpgroup's products are still running (0: all done), and
/// hands back `d`, the accumulator of those done, so that nothing reads it
/// earlier. All threads of the warpgroup call it together.
#[inline(always)]
#[doc(hidden)]
pub fn wait<const PENDING: u32>(d: &mut [f32; WGMMA_N128_REGS]) {
    // SAFETY: a wait; the accumulator is an in-out operand only to order
    // the surrounding code (the PTX comment names them).
    unsafe {
        asm_with_accumulator!(d;
            "wgmma.wait_group.sync.aligned {n}; // {d0}, {d1}, {d2}, {d3}, {d4}, {d5}, {d6}, {d7}, {d8}, {d9}, {d10}, {d11}, {d12}, {d13}, {d14}, {d15}, {d16}, {d17}, {d18}, {d19}, {d20}, {d21}, {d22}, {d23}, {d24}, {d25}, {d26}, {d27}, {d28}, {d29}, {d30}, {d31}, {d32}, {d33}, {d34}, {d35}, {d36}, {d37}, {d38}, {d39}, {d40}, {d41}, {d42}, {d43}, {d44}, {d45}, {d46}, {d47}, {d48}, {d49}, {d50}, {d51}, {d52}, {d53}, {d54}, {d55}, {d56}, {d57}, {d58}, {d59}, {d60}, {d61}, {d62}, {d63}",
            n = const PENDING,
        );
    }
}

/// Marks fragment `a` as read here: an empty `asm` that takes its
/// registers. A product reads its `A` fragment while it runs, until a
/// [`wait`] covers it, but the compiler sees the read end at the `wgmma`
/// instruction and may load the next fragment into the same registers.
/// Called after that [`wait`], it keeps them apart. (Found the hard way: a
/// step's next mask fragments, loaded while its products ran, reached the
/// products that were still to read theirs.)
#[inline(always)]
#[doc(hidden)]
pub fn hold(a: &[u32; 4]) {
    // SAFETY: emits only a PTX comment; reads the registers, writes nothing.
    unsafe {
        asm!(
            "// hold {0}, {1}, {2}, {3}",
            in(reg32) a[0],
            in(reg32) a[1],
            in(reg32) a[2],
            in(reg32) a[3],
            options(nostack, preserves_flags),
        )
    }
}

/// The two `A` fragments a group of products reads: what [`rotate`]
/// loads and holds.
pub type FragmentPair = [[u32; 4]; 2];

/// [`hold`]s both fragments of `f`.
#[inline(always)]
#[doc(hidden)]
pub fn hold_pair(f: &FragmentPair) {
    hold(&f[0]);
    hold(&f[1]);
}

/// Runs product groups `0..groups` (at least one), each issued and
/// committed by `issue` from a [`FragmentPair`] that `load` fills, with two
/// pairs in rotation: group `g + 1`'s pair loads while group `g` runs, into
/// the variable of group `g − 1`, whose wait has retired it, and each pair
/// is held ([`hold_pair`]) after the wait that retires its group. `first_done` runs
/// after group 0's wait, when whatever the caller issued before is done
/// (it holds that work's fragments). Returns the last two pairs with the
/// last group still running: the caller holds them past the wait that
/// retires it if it loads more fragments before that wait.
#[inline(always)]
#[doc(hidden)]
pub fn rotate(
    acc: &mut [f32; WGMMA_N128_REGS],
    groups: usize,
    load: impl Fn(usize) -> FragmentPair,
    issue: impl Fn(&mut [f32; WGMMA_N128_REGS], usize, &FragmentPair),
    first_done: impl FnOnce(),
) -> [FragmentPair; 2] {
    let mut even = load(0);
    issue(acc, 0, &even);
    wait::<1>(acc);
    first_done();
    let mut odd = [[0; 4]; 2];
    let mut g = 0;
    loop {
        if g + 1 >= groups {
            break;
        }
        odd = load(g + 1);
        issue(acc, g + 1, &odd);
        // Group g is done: `even` is free.
        wait::<1>(acc);
        hold_pair(&even);
        if g + 2 >= groups {
            break;
        }
        even = load(g + 2);
        issue(acc, g + 2, &even);
        // Group g + 1 is done: `odd` is free.
        wait::<1>(acc);
        hold_pair(&odd);
        g += 2;
    }
    [even, odd]
}

/// `d = A · B + (accumulate ? d : 0)` for a 64 × 128 × 8 tile, TF32
/// operands, `f32` accumulator: `a` this thread's fragment of `A` (layout in
/// the module docs), `b` the [descriptor](crate::descriptor) of `B`'s 128 × 8 tile,
/// `k`-major. Asynchronous: `d` is valid after a [`commit`] and a [`wait`].
///
/// # Safety
/// Every thread of the warpgroup calls it together, after a [`fence`] that
/// follows the last write of `a` and `d`; `b` describes shared memory of the
/// block that holds the tile, made visible to the asynchronous proxy, and
/// not written until a [`wait`] covers this product.
#[inline(always)]
#[doc(hidden)]
pub unsafe fn mma_tf32_m64n128k8(
    d: &mut [f32; WGMMA_N128_REGS],
    a: [u32; 4],
    b: u64,
    accumulate: bool,
) {
    // SAFETY: the caller's contract.
    unsafe {
        mma_m64n128!(d, a, b, accumulate, "m64n128k8.f32.tf32.tf32", "");
    }
}

/// `d = A · B + (accumulate ? d : 0)` for a 64 × 128 × 16 tile, BF16
/// operands, `f32` accumulator: `a` this thread's fragment of `A` (the
/// layout of [`mma_tf32_m64n128k8`]'s with each register a pair of
/// consecutive `k`, the lower in the low half: `a[0]` row `g`, `k = 2t`
/// and `2t + 1`; `a[1]` row `g + 8`; `a[2]` row `g`, `k + 8`; `a[3]` rows
/// and `k` both 8 on), `b` the [descriptor](crate::descriptor) of `B`'s
/// 128 × 16 tile, `k`-major (not transposed). Twice TF32's multiply-adds
/// in the same time: the tensor cores' BF16 rate is twice their TF32 rate.
///
/// # Safety
/// As [`mma_tf32_m64n128k8`]'s.
#[inline(always)]
#[doc(hidden)]
pub unsafe fn mma_bf16_m64n128k16(
    d: &mut [f32; WGMMA_N128_REGS],
    a: [u32; 4],
    b: u64,
    accumulate: bool,
) {
    // SAFETY: the caller's contract.
    unsafe {
        mma_m64n128!(d, a, b, accumulate, "m64n128k16.f32.bf16.bf16", ", 0");
    }
}

/// [`asm_with_accumulator`] for the 128 registers of an `m64n256`
/// accumulator, held in two arrays of 64 (`$lo` its registers 0 to 63,
/// `$hi` 64 to 127: one array of 128 stays in local memory, which LLVM
/// does not split): `{d0}` to `{d127}`.
macro_rules! asm_with_wide_accumulator {
    ($lo:ident, $hi:ident; $($template_and_operands:tt)*) => {
        asm!(
            $($template_and_operands)*
            d0 = inout(reg32) $lo[0],
            d1 = inout(reg32) $lo[1],
            d2 = inout(reg32) $lo[2],
            d3 = inout(reg32) $lo[3],
            d4 = inout(reg32) $lo[4],
            d5 = inout(reg32) $lo[5],
            d6 = inout(reg32) $lo[6],
            d7 = inout(reg32) $lo[7],
            d8 = inout(reg32) $lo[8],
            d9 = inout(reg32) $lo[9],
            d10 = inout(reg32) $lo[10],
            d11 = inout(reg32) $lo[11],
            d12 = inout(reg32) $lo[12],
            d13 = inout(reg32) $lo[13],
            d14 = inout(reg32) $lo[14],
            d15 = inout(reg32) $lo[15],
            d16 = inout(reg32) $lo[16],
            d17 = inout(reg32) $lo[17],
            d18 = inout(reg32) $lo[18],
            d19 = inout(reg32) $lo[19],
            d20 = inout(reg32) $lo[20],
            d21 = inout(reg32) $lo[21],
            d22 = inout(reg32) $lo[22],
            d23 = inout(reg32) $lo[23],
            d24 = inout(reg32) $lo[24],
            d25 = inout(reg32) $lo[25],
            d26 = inout(reg32) $lo[26],
            d27 = inout(reg32) $lo[27],
            d28 = inout(reg32) $lo[28],
            d29 = inout(reg32) $lo[29],
            d30 = inout(reg32) $lo[30],
            d31 = inout(reg32) $lo[31],
            d32 = inout(reg32) $lo[32],
            d33 = inout(reg32) $lo[33],
            d34 = inout(reg32) $lo[34],
            d35 = inout(reg32) $lo[35],
            d36 = inout(reg32) $lo[36],
            d37 = inout(reg32) $lo[37],
            d38 = inout(reg32) $lo[38],
            d39 = inout(reg32) $lo[39],
            d40 = inout(reg32) $lo[40],
            d41 = inout(reg32) $lo[41],
            d42 = inout(reg32) $lo[42],
            d43 = inout(reg32) $lo[43],
            d44 = inout(reg32) $lo[44],
            d45 = inout(reg32) $lo[45],
            d46 = inout(reg32) $lo[46],
            d47 = inout(reg32) $lo[47],
            d48 = inout(reg32) $lo[48],
            d49 = inout(reg32) $lo[49],
            d50 = inout(reg32) $lo[50],
            d51 = inout(reg32) $lo[51],
            d52 = inout(reg32) $lo[52],
            d53 = inout(reg32) $lo[53],
            d54 = inout(reg32) $lo[54],
            d55 = inout(reg32) $lo[55],
            d56 = inout(reg32) $lo[56],
            d57 = inout(reg32) $lo[57],
            d58 = inout(reg32) $lo[58],
            d59 = inout(reg32) $lo[59],
            d60 = inout(reg32) $lo[60],
            d61 = inout(reg32) $lo[61],
            d62 = inout(reg32) $lo[62],
            d63 = inout(reg32) $lo[63],
            d64 = inout(reg32) $hi[0],
            d65 = inout(reg32) $hi[1],
            d66 = inout(reg32) $hi[2],
            d67 = inout(reg32) $hi[3],
            d68 = inout(reg32) $hi[4],
            d69 = inout(reg32) $hi[5],
            d70 = inout(reg32) $hi[6],
            d71 = inout(reg32) $hi[7],
            d72 = inout(reg32) $hi[8],
            d73 = inout(reg32) $hi[9],
            d74 = inout(reg32) $hi[10],
            d75 = inout(reg32) $hi[11],
            d76 = inout(reg32) $hi[12],
            d77 = inout(reg32) $hi[13],
            d78 = inout(reg32) $hi[14],
            d79 = inout(reg32) $hi[15],
            d80 = inout(reg32) $hi[16],
            d81 = inout(reg32) $hi[17],
            d82 = inout(reg32) $hi[18],
            d83 = inout(reg32) $hi[19],
            d84 = inout(reg32) $hi[20],
            d85 = inout(reg32) $hi[21],
            d86 = inout(reg32) $hi[22],
            d87 = inout(reg32) $hi[23],
            d88 = inout(reg32) $hi[24],
            d89 = inout(reg32) $hi[25],
            d90 = inout(reg32) $hi[26],
            d91 = inout(reg32) $hi[27],
            d92 = inout(reg32) $hi[28],
            d93 = inout(reg32) $hi[29],
            d94 = inout(reg32) $hi[30],
            d95 = inout(reg32) $hi[31],
            d96 = inout(reg32) $hi[32],
            d97 = inout(reg32) $hi[33],
            d98 = inout(reg32) $hi[34],
            d99 = inout(reg32) $hi[35],
            d100 = inout(reg32) $hi[36],
            d101 = inout(reg32) $hi[37],
            d102 = inout(reg32) $hi[38],
            d103 = inout(reg32) $hi[39],
            d104 = inout(reg32) $hi[40],
            d105 = inout(reg32) $hi[41],
            d106 = inout(reg32) $hi[42],
            d107 = inout(reg32) $hi[43],
            d108 = inout(reg32) $hi[44],
            d109 = inout(reg32) $hi[45],
            d110 = inout(reg32) $hi[46],
            d111 = inout(reg32) $hi[47],
            d112 = inout(reg32) $hi[48],
            d113 = inout(reg32) $hi[49],
            d114 = inout(reg32) $hi[50],
            d115 = inout(reg32) $hi[51],
            d116 = inout(reg32) $hi[52],
            d117 = inout(reg32) $hi[53],
            d118 = inout(reg32) $hi[54],
            d119 = inout(reg32) $hi[55],
            d120 = inout(reg32) $hi[56],
            d121 = inout(reg32) $hi[57],
            d122 = inout(reg32) $hi[58],
            d123 = inout(reg32) $hi[59],
            d124 = inout(reg32) $hi[60],
            d125 = inout(reg32) $hi[61],
            d126 = inout(reg32) $hi[62],
            d127 = inout(reg32) $hi[63],
            options(nostack),
        )
    };
}

/// Accumulator registers per thread of an `m64n256` product.
#[doc(hidden)]
pub const WGMMA_N256_REGS: usize = 128;

/// `d = A · B + (accumulate ? d : 0)` for a 64 × 256 × 8 tile (`d` in
/// `lo`, its registers 0 to 63, and `hi`, 64 to 127), TF32
/// operands (an `f32`'s low 13 bits ignored: truncated), `f32`
/// accumulator, both operands read from shared memory through the
/// [descriptors](crate::descriptor) `a` (64 × 8, `k`-major) and `b`
/// (256 × 8, `k`-major). Register `4i + e` of `d` holds row `16w + g +
/// 8(e / 2)`, column `8i + 2t + e % 2` (warp `w` of the warpgroup, `g =
/// lane / 4`, `t = lane % 4`). Asynchronous: `d` is valid after a
/// [`commit`] and a [`wait_wide`].
///
/// # Safety
/// Every thread of the warpgroup calls it together, after a [`fence`] that
/// follows the last access of `d` by other instructions; `a` and `b`
/// describe shared memory of the block holding the tiles, made visible to
/// the asynchronous proxy (written by the copy engine, or fenced), and not
/// written until a [`wait_wide`] covers this product.
#[inline(always)]
#[doc(hidden)]
pub unsafe fn mma_tf32_m64n256k8_ss(
    lo: &mut [f32; WGMMA_N128_REGS],
    hi: &mut [f32; WGMMA_N128_REGS],
    a: u64,
    b: u64,
    accumulate: bool,
) {
    // SAFETY: the caller's contract.
    unsafe {
        asm_with_wide_accumulator!(lo, hi;
            "{{ .reg .pred p; setp.ne.b32 p, {scale}, 0;",
            "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32",
            "{{{d0}, {d1}, {d2}, {d3}, {d4}, {d5}, {d6}, {d7}, {d8}, {d9}, {d10}, {d11}, {d12}, {d13}, {d14}, {d15}, {d16}, {d17}, {d18}, {d19}, {d20}, {d21}, {d22}, {d23}, {d24}, {d25}, {d26}, {d27}, {d28}, {d29}, {d30}, {d31}, {d32}, {d33}, {d34}, {d35}, {d36}, {d37}, {d38}, {d39}, {d40}, {d41}, {d42}, {d43}, {d44}, {d45}, {d46}, {d47}, {d48}, {d49}, {d50}, {d51}, {d52}, {d53}, {d54}, {d55}, {d56}, {d57}, {d58}, {d59}, {d60}, {d61}, {d62}, {d63}, {d64}, {d65}, {d66}, {d67}, {d68}, {d69}, {d70}, {d71}, {d72}, {d73}, {d74}, {d75}, {d76}, {d77}, {d78}, {d79}, {d80}, {d81}, {d82}, {d83}, {d84}, {d85}, {d86}, {d87}, {d88}, {d89}, {d90}, {d91}, {d92}, {d93}, {d94}, {d95}, {d96}, {d97}, {d98}, {d99}, {d100}, {d101}, {d102}, {d103}, {d104}, {d105}, {d106}, {d107}, {d108}, {d109}, {d110}, {d111}, {d112}, {d113}, {d114}, {d115}, {d116}, {d117}, {d118}, {d119}, {d120}, {d121}, {d122}, {d123}, {d124}, {d125}, {d126}, {d127}}},",
            "{a}, {b}, p, 1, 1; }}",
            a = in(reg64) a,
            b = in(reg64) b,
            scale = in(reg32) accumulate as u32,
        );
    }
}

/// [`mma_tf32_m64n256k8_ss`] with `A` from registers: `a` this thread's
/// fragment of the 64 × 8 tile (the layout of [`mma_tf32_m64n128k8`]'s,
/// TF32: an `f32`'s low 13 bits ignored), `b` the descriptor of `B`'s
/// 256 × 8 tile, `k`-major, in shared memory.
///
/// # Safety
/// As [`mma_tf32_m64n256k8_ss`]'s for `d` and `b`; the registers of `a`
/// are not written until a [`wait_wide`] covers this product (see
/// [`hold`]), and the [`fence`] before it follows their last write.
#[inline(always)]
#[doc(hidden)]
pub unsafe fn mma_tf32_m64n256k8_rs(
    lo: &mut [f32; WGMMA_N128_REGS],
    hi: &mut [f32; WGMMA_N128_REGS],
    a: [u32; 4],
    b: u64,
    accumulate: bool,
) {
    // SAFETY: the caller's contract.
    unsafe {
        asm_with_wide_accumulator!(lo, hi;
            "{{ .reg .pred p; setp.ne.b32 p, {scale}, 0;",
            "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32",
            "{{{d0}, {d1}, {d2}, {d3}, {d4}, {d5}, {d6}, {d7}, {d8}, {d9}, {d10}, {d11}, {d12}, {d13}, {d14}, {d15}, {d16}, {d17}, {d18}, {d19}, {d20}, {d21}, {d22}, {d23}, {d24}, {d25}, {d26}, {d27}, {d28}, {d29}, {d30}, {d31}, {d32}, {d33}, {d34}, {d35}, {d36}, {d37}, {d38}, {d39}, {d40}, {d41}, {d42}, {d43}, {d44}, {d45}, {d46}, {d47}, {d48}, {d49}, {d50}, {d51}, {d52}, {d53}, {d54}, {d55}, {d56}, {d57}, {d58}, {d59}, {d60}, {d61}, {d62}, {d63}, {d64}, {d65}, {d66}, {d67}, {d68}, {d69}, {d70}, {d71}, {d72}, {d73}, {d74}, {d75}, {d76}, {d77}, {d78}, {d79}, {d80}, {d81}, {d82}, {d83}, {d84}, {d85}, {d86}, {d87}, {d88}, {d89}, {d90}, {d91}, {d92}, {d93}, {d94}, {d95}, {d96}, {d97}, {d98}, {d99}, {d100}, {d101}, {d102}, {d103}, {d104}, {d105}, {d106}, {d107}, {d108}, {d109}, {d110}, {d111}, {d112}, {d113}, {d114}, {d115}, {d116}, {d117}, {d118}, {d119}, {d120}, {d121}, {d122}, {d123}, {d124}, {d125}, {d126}, {d127}}},",
            "{{{a0}, {a1}, {a2}, {a3}}}, {b}, p, 1, 1; }}",
            a0 = in(reg32) a[0],
            a1 = in(reg32) a[1],
            a2 = in(reg32) a[2],
            a3 = in(reg32) a[3],
            b = in(reg64) b,
            scale = in(reg32) accumulate as u32,
        );
    }
}

/// [`wait`] for an `m64n256` accumulator.
#[inline(always)]
#[doc(hidden)]
pub fn wait_wide<const PENDING: u32>(
    lo: &mut [f32; WGMMA_N128_REGS],
    hi: &mut [f32; WGMMA_N128_REGS],
) {
    // SAFETY: a wait; the accumulator is an in-out operand only to order
    // the surrounding code (the PTX comment names them).
    unsafe {
        asm_with_wide_accumulator!(lo, hi;
            "wgmma.wait_group.sync.aligned {n}; // {d0}, {d1}, {d2}, {d3}, {d4}, {d5}, {d6}, {d7}, {d8}, {d9}, {d10}, {d11}, {d12}, {d13}, {d14}, {d15}, {d16}, {d17}, {d18}, {d19}, {d20}, {d21}, {d22}, {d23}, {d24}, {d25}, {d26}, {d27}, {d28}, {d29}, {d30}, {d31}, {d32}, {d33}, {d34}, {d35}, {d36}, {d37}, {d38}, {d39}, {d40}, {d41}, {d42}, {d43}, {d44}, {d45}, {d46}, {d47}, {d48}, {d49}, {d50}, {d51}, {d52}, {d53}, {d54}, {d55}, {d56}, {d57}, {d58}, {d59}, {d60}, {d61}, {d62}, {d63}, {d64}, {d65}, {d66}, {d67}, {d68}, {d69}, {d70}, {d71}, {d72}, {d73}, {d74}, {d75}, {d76}, {d77}, {d78}, {d79}, {d80}, {d81}, {d82}, {d83}, {d84}, {d85}, {d86}, {d87}, {d88}, {d89}, {d90}, {d91}, {d92}, {d93}, {d94}, {d95}, {d96}, {d97}, {d98}, {d99}, {d100}, {d101}, {d102}, {d103}, {d104}, {d105}, {d106}, {d107}, {d108}, {d109}, {d110}, {d111}, {d112}, {d113}, {d114}, {d115}, {d116}, {d117}, {d118}, {d119}, {d120}, {d121}, {d122}, {d123}, {d124}, {d125}, {d126}, {d127}",
            n = const PENDING,
        );
    }
}

/// [`asm_with_accumulator`] for the 32 registers of an `m64n64`
/// accumulator: `{d0}` to `{d31}`.
macro_rules! asm_with_narrow_accumulator {
    ($d:ident; $($template_and_operands:tt)*) => {
        asm!(
            $($template_and_operands)*
            d0 = inout(reg32) $d[0],
            d1 = inout(reg32) $d[1],
            d2 = inout(reg32) $d[2],
            d3 = inout(reg32) $d[3],
            d4 = inout(reg32) $d[4],
            d5 = inout(reg32) $d[5],
            d6 = inout(reg32) $d[6],
            d7 = inout(reg32) $d[7],
            d8 = inout(reg32) $d[8],
            d9 = inout(reg32) $d[9],
            d10 = inout(reg32) $d[10],
            d11 = inout(reg32) $d[11],
            d12 = inout(reg32) $d[12],
            d13 = inout(reg32) $d[13],
            d14 = inout(reg32) $d[14],
            d15 = inout(reg32) $d[15],
            d16 = inout(reg32) $d[16],
            d17 = inout(reg32) $d[17],
            d18 = inout(reg32) $d[18],
            d19 = inout(reg32) $d[19],
            d20 = inout(reg32) $d[20],
            d21 = inout(reg32) $d[21],
            d22 = inout(reg32) $d[22],
            d23 = inout(reg32) $d[23],
            d24 = inout(reg32) $d[24],
            d25 = inout(reg32) $d[25],
            d26 = inout(reg32) $d[26],
            d27 = inout(reg32) $d[27],
            d28 = inout(reg32) $d[28],
            d29 = inout(reg32) $d[29],
            d30 = inout(reg32) $d[30],
            d31 = inout(reg32) $d[31],
            options(nostack),
        )
    };
}

/// Accumulator registers per thread of an `m64n64` product.
#[doc(hidden)]
pub const WGMMA_N64_REGS: usize = 32;

/// [`mma_tf32_m64n256k8_ss`] for a 64 × 64 × 8 tile: `d` (32 registers,
/// register `4i + e` holding row `16w + g + 8(e / 2)`, column `8i + 2t +
/// e % 2`) `= A · B + (accumulate ? d : 0)`, both operands read from
/// shared memory through the descriptors `a` (64 × 8) and `b` (64 × 8),
/// `k`-major, TF32 (an `f32`'s low 13 bits ignored).
///
/// # Safety
/// As [`mma_tf32_m64n256k8_ss`]'s, with [`wait_narrow`] for its wait.
#[inline(always)]
#[doc(hidden)]
pub unsafe fn mma_tf32_m64n64k8_ss(
    d: &mut [f32; WGMMA_N64_REGS],
    a: u64,
    b: u64,
    accumulate: bool,
) {
    // SAFETY: the caller's contract.
    unsafe {
        asm_with_narrow_accumulator!(d;
            "{{ .reg .pred p; setp.ne.b32 p, {scale}, 0;",
            "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32",
            "{{{d0}, {d1}, {d2}, {d3}, {d4}, {d5}, {d6}, {d7}, {d8}, {d9}, {d10}, {d11}, {d12}, {d13}, {d14}, {d15}, {d16}, {d17}, {d18}, {d19}, {d20}, {d21}, {d22}, {d23}, {d24}, {d25}, {d26}, {d27}, {d28}, {d29}, {d30}, {d31}}},",
            "{a}, {b}, p, 1, 1; }}",
            a = in(reg64) a,
            b = in(reg64) b,
            scale = in(reg32) accumulate as u32,
        );
    }
}

/// [`mma_tf32_m64n64k8_ss`] with `A` from registers: `a` this thread's
/// fragment of the 64 × 8 tile (the layout of [`mma_tf32_m64n128k8`]'s),
/// `b` the descriptor of `B`'s 64 × 8 tile, `k`-major, in shared memory.
///
/// # Safety
/// As [`mma_tf32_m64n256k8_rs`]'s, with [`wait_narrow`] for its wait.
#[inline(always)]
#[doc(hidden)]
pub unsafe fn mma_tf32_m64n64k8_rs(
    d: &mut [f32; WGMMA_N64_REGS],
    a: [u32; 4],
    b: u64,
    accumulate: bool,
) {
    // SAFETY: the caller's contract.
    unsafe {
        asm_with_narrow_accumulator!(d;
            "{{ .reg .pred p; setp.ne.b32 p, {scale}, 0;",
            "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32",
            "{{{d0}, {d1}, {d2}, {d3}, {d4}, {d5}, {d6}, {d7}, {d8}, {d9}, {d10}, {d11}, {d12}, {d13}, {d14}, {d15}, {d16}, {d17}, {d18}, {d19}, {d20}, {d21}, {d22}, {d23}, {d24}, {d25}, {d26}, {d27}, {d28}, {d29}, {d30}, {d31}}},",
            "{{{a0}, {a1}, {a2}, {a3}}}, {b}, p, 1, 1; }}",
            a0 = in(reg32) a[0],
            a1 = in(reg32) a[1],
            a2 = in(reg32) a[2],
            a3 = in(reg32) a[3],
            b = in(reg64) b,
            scale = in(reg32) accumulate as u32,
        );
    }
}

/// [`wait`] for an `m64n64` accumulator.
#[inline(always)]
#[doc(hidden)]
pub fn wait_narrow<const PENDING: u32>(d: &mut [f32; WGMMA_N64_REGS]) {
    // SAFETY: a wait; the accumulator is an in-out operand only to order
    // the surrounding code (the PTX comment names them).
    unsafe {
        asm_with_narrow_accumulator!(d;
            "wgmma.wait_group.sync.aligned {n}; // {d0}, {d1}, {d2}, {d3}, {d4}, {d5}, {d6}, {d7}, {d8}, {d9}, {d10}, {d11}, {d12}, {d13}, {d14}, {d15}, {d16}, {d17}, {d18}, {d19}, {d20}, {d21}, {d22}, {d23}, {d24}, {d25}, {d26}, {d27}, {d28}, {d29}, {d30}, {d31}",
            n = const PENDING,
        );
    }
}

/// `setmaxnreg.dec.sync.aligned.u32 REGS`: gives back this warpgroup's
/// registers above `REGS` per thread to the multiprocessor's pool, for
/// another warpgroup's [`registers_up`]. All threads of the warpgroup call
/// it together; `REGS` is a multiple of 8 in `24 ..= 256`.
///
/// # Safety
/// No value the warpgroup still needs lives in registers above `REGS`
/// (the compiler allocates for the kernel's whole code, so: the code after
/// it needs at most `REGS` registers, which `ptxas -v` shows).
#[inline(always)]
#[doc(hidden)]
pub unsafe fn registers_down<const REGS: u32>() {
    // SAFETY: the caller's contract.
    unsafe { asm!("setmaxnreg.dec.sync.aligned.u32 {r};", r = const REGS, options(nostack)) }
}

/// `setmaxnreg.inc.sync.aligned.u32 REGS`: waits until the pool has the
/// registers to raise this warpgroup's to `REGS` per thread, and takes
/// them. All threads of the warpgroup call it together.
#[inline(always)]
#[doc(hidden)]
pub fn registers_up<const REGS: u32>() {
    // SAFETY: raising the count keeps every live register.
    unsafe { asm!("setmaxnreg.inc.sync.aligned.u32 {r};", r = const REGS, options(nostack)) }
}

/// [`mma_tf32_m64n256k8_ss`] for a 64 × 128 × 8 tile: `d` (64 registers,
/// the layout of [`mma_tf32_m64n128k8`]'s) `= A · B + (accumulate ? d :
/// 0)`, both operands read from shared memory through the descriptors `a`
/// (64 × 8) and `b` (128 × 8), `k`-major, TF32 (an `f32`'s low 13 bits
/// ignored).
///
/// # Safety
/// As [`mma_tf32_m64n256k8_ss`]'s, with [`wait`] for its wait.
#[inline(always)]
#[doc(hidden)]
pub unsafe fn mma_tf32_m64n128k8_ss(
    d: &mut [f32; WGMMA_N128_REGS],
    a: u64,
    b: u64,
    accumulate: bool,
) {
    // SAFETY: the caller's contract.
    unsafe {
        asm_with_accumulator!(d;
            "{{ .reg .pred p; setp.ne.b32 p, {scale}, 0;",
            "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32",
            "{{{d0}, {d1}, {d2}, {d3}, {d4}, {d5}, {d6}, {d7}, {d8}, {d9}, {d10}, {d11}, {d12}, {d13}, {d14}, {d15}, {d16}, {d17}, {d18}, {d19}, {d20}, {d21}, {d22}, {d23}, {d24}, {d25}, {d26}, {d27}, {d28}, {d29}, {d30}, {d31}, {d32}, {d33}, {d34}, {d35}, {d36}, {d37}, {d38}, {d39}, {d40}, {d41}, {d42}, {d43}, {d44}, {d45}, {d46}, {d47}, {d48}, {d49}, {d50}, {d51}, {d52}, {d53}, {d54}, {d55}, {d56}, {d57}, {d58}, {d59}, {d60}, {d61}, {d62}, {d63}}},",
            "{a}, {b}, p, 1, 1; }}",
            a = in(reg64) a,
            b = in(reg64) b,
            scale = in(reg32) accumulate as u32,
        );
    }
}
