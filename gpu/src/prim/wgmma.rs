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
