//! Shared by the GPU tests: the context, seeded inputs, cached uploads,
//! result checks.

use libtest_mimic::{Completion, Failed, Trial};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use std::any::Any;
use std::cell::RefCell;
use std::ops::Range;
use std::rc::Rc;
use warpspeed::{Buffer, Context, DeviceRead, DeviceWrite, Error, Ladder, Pod};

thread_local! {
    static GPU: RefCell<Option<Result<Rc<Context>, String>>> = const { RefCell::new(None) };
    static INPUT: RefCell<Option<(String, Rc<dyn Any>)>> = const { RefCell::new(None) };
}

fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| !v.is_empty() && v != "0")
}

/// The context, created on first use; `Err(reason)` where there is no device.
fn gpu() -> Result<Rc<Context>, String> {
    GPU.with(|cell| {
        cell.borrow_mut()
            .get_or_insert_with(|| match Context::new(0) {
                Ok(ctx) => Ok(Rc::new(ctx)),
                Err(Error::NoDevice { reason }) => Err(reason),
                Err(other) => Err(format!("FAILED: {other}")),
            })
            .clone()
    })
}

/// Why GPU tests will be skipped, if they will.
pub fn no_device_reason() -> Option<String> {
    gpu().err()
}

/// The largest input the tests may use (`WARPSPEED_TEST_MAX_N`).
pub fn max_n() -> usize {
    std::env::var("WARPSPEED_TEST_MAX_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(usize::MAX)
}

pub fn under_sanitizer() -> bool {
    env_flag("WARPSPEED_UNDER_SANITIZER")
}

/// A GPU test: ignored with the reason where no device exists (a failure
/// instead if `WARPSPEED_REQUIRE_GPU` is set or the device exists but does
/// not initialise).
pub fn gpu_trial(
    name: impl Into<String>,
    body: impl FnOnce(&Context) -> Result<(), Failed> + Send + 'static,
) -> Trial {
    Trial::ignorable_test(name, move || match gpu() {
        Ok(ctx) => {
            // A multi-GPU trial may have left another device current: make
            // this one current again, as the caller's own driver calls on
            // this thread would need (the library's calls do it themselves).
            ok(ctx.bind())?;
            body(&ctx).map(|()| Completion::Completed)
        }
        Err(reason) if reason.starts_with("FAILED") => Err(reason.into()),
        Err(reason) if env_flag("WARPSPEED_REQUIRE_GPU") => {
            Err(format!("no CUDA device: {reason}").into())
        }
        // The full reason is printed once, before the run.
        Err(_) => Ok(Completion::ignored_with("no CUDA device")),
    })
}

/// A GPU test that is ignored, saying `why`, under compute-sanitizer.
pub fn unsanitized_trial(
    name: impl Into<String>,
    why: &'static str,
    body: impl FnOnce(&Context) -> Result<(), Failed> + Send + 'static,
) -> Trial {
    if under_sanitizer() {
        Trial::ignorable_test(name, move || Ok(Completion::ignored_with(why)))
    } else {
        gpu_trial(name, body)
    }
}

/// A test that needs `gpus` devices: it gets a fresh [`Context`] for each
/// of the first `gpus` (not the suite's shared one), and is ignored, with
/// the reason, on a machine with fewer.
pub fn multi_gpu_trial(
    name: impl Into<String>,
    gpus: usize,
    body: impl FnOnce(Vec<Context>) -> Result<(), Failed> + Send + 'static,
) -> Trial {
    Trial::ignorable_test(name, move || {
        let have = match Context::devices() {
            Ok(devices) => devices.len(),
            Err(Error::NoDevice { .. }) if !env_flag("WARPSPEED_REQUIRE_GPU") => {
                return Ok(Completion::ignored_with("no CUDA device"));
            }
            Err(e) => return Err(e.to_string().into()),
        };
        if have < gpus {
            return Ok(Completion::ignored_with(format!(
                "needs {gpus} GPUs, this machine has {have}"
            )));
        }
        let contexts = (0..gpus as u32)
            .map(Context::new)
            .collect::<warpspeed::Result<Vec<_>>>();
        body(ok(contexts)?).map(|()| Completion::Completed)
    })
}

/// A GPU test over an input of `n` elements: also ignored above `max_n()`.
/// From 2^31 elements on it is of the kind [`BIG`].
pub fn sized_trial(
    name: impl Into<String>,
    n: usize,
    body: impl FnOnce(&Context) -> Result<(), Failed> + Send + 'static,
) -> Trial {
    if n > max_n() {
        Trial::ignorable_test(name, move || {
            Ok(Completion::ignored_with(format!(
                "n = {n} is above WARPSPEED_TEST_MAX_N"
            )))
        })
    } else if n >= TWO_31 {
        gpu_trial(name, body).with_kind(BIG)
    } else {
        gpu_trial(name, body)
    }
}

/// The kind of the trials past 2^31 elements: each takes gigabytes of
/// device memory, so a suite split into shards runs them in a process of
/// their own, one at a time ([`shard`]).
pub const BIG: &str = "big";
/// The kind of the trials that need the GPU to themselves (one takes
/// nearly all of its memory on purpose, another compares the device's
/// free memory before and after): a suite split into shards runs them
/// after the others, one at a time ([`shard`]).
pub const ALONE: &str = "alone";

/// A part of the suite, as `WARPSPEED_TEST_SHARD` names it (see
/// [`shard`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part<'a> {
    /// Every trial (the variable unset).
    All,
    /// `i/n`: every `n`-th group of trials from the `i`-th on, without
    /// the [`BIG`] and [`ALONE`] ones.
    Shard(usize, usize),
    /// `big` or `alone`: the trials of that kind.
    Kind(&'a str),
}

impl<'a> Part<'a> {
    /// The part `asked` names (`None`: the variable unset).
    pub fn parse(asked: Option<&'a str>) -> Result<Part<'a>, String> {
        let Some(asked) = asked else {
            return Ok(Part::All);
        };
        if asked == BIG || asked == ALONE {
            return Ok(Part::Kind(asked));
        }
        asked
            .split_once('/')
            .and_then(|(i, n)| Some((i.parse::<usize>().ok()?, n.parse::<usize>().ok()?)))
            .filter(|&(i, n)| i < n)
            .map(|(i, n)| Part::Shard(i, n))
            .ok_or_else(|| {
                format!("WARPSPEED_TEST_SHARD={asked}: expected i/n with i < n, `big` or `alone`")
            })
    }

    /// Which of the trials, given as `(name, kind)` in the suite's
    /// order, this part keeps. A group is the trials whose names share
    /// their first two `::` parts (they share their inputs), numbered in
    /// the order they first appear.
    pub fn keeps<'t>(self, trials: impl IntoIterator<Item = (&'t str, &'t str)>) -> Vec<bool> {
        let mut groups: Vec<String> = Vec::new();
        trials
            .into_iter()
            .map(|(name, kind)| match self {
                Part::All => true,
                Part::Kind(wanted) => kind == wanted,
                Part::Shard(i, n) => {
                    let group: String = name.splitn(3, "::").take(2).collect::<Vec<_>>().join("::");
                    let index = match groups.iter().position(|g| *g == group) {
                        Some(index) => index,
                        None => {
                            groups.push(group);
                            groups.len() - 1
                        }
                    };
                    kind != BIG && kind != ALONE && index % n == i
                }
            })
            .collect()
    }
}

/// The part of `trials` that `WARPSPEED_TEST_SHARD` asks for ([`Part`]),
/// so that several processes can share the GPU and the machine's cores
/// (the device bundle's `TEST_JOBS`). Every trial is in exactly one of
/// `0/n` to `n-1/n`, `big` and `alone` ([`partition_trial`] checks it).
pub fn shard(trials: Vec<Trial>) -> Result<Vec<Trial>, String> {
    let asked = std::env::var("WARPSPEED_TEST_SHARD").ok();
    let part = Part::parse(asked.as_deref())?;
    let keeps = part.keeps(trials.iter().map(|t| (t.name(), t.kind())));
    Ok(trials
        .into_iter()
        .zip(keeps)
        .filter_map(|(trial, keep)| keep.then_some(trial))
        .collect())
}

/// A trial (no GPU) that checks [`shard`]'s promise on the suite's own
/// trials, given as `(name, kind)`: for every `n` from 1 to 16, each is
/// kept by exactly one of `0/n` to `n-1/n`, `big` and `alone`.
pub fn partition_trial(trials: Vec<(String, String)>) -> Trial {
    Trial::test("harness::shards_partition_the_suite", move || {
        let listed = || {
            trials
                .iter()
                .map(|(name, kind)| (name.as_str(), kind.as_str()))
        };
        let kinds = [Part::Kind(BIG), Part::Kind(ALONE)].map(|part| part.keeps(listed()));
        for n in 1..=16 {
            let shards: Vec<Vec<bool>> =
                (0..n).map(|i| Part::Shard(i, n).keeps(listed())).collect();
            for (t, (name, _)) in trials.iter().enumerate() {
                let parts = shards.iter().chain(&kinds).filter(|keeps| keeps[t]).count();
                if parts != 1 {
                    return Err(
                        format!("{name} is in {parts} parts of the suite in {n} shards").into(),
                    );
                }
            }
        }
        Ok(())
    })
}

/// An input on both sides: the host copy for references, the device copy for kernels.
pub type Input<T> = Rc<(Vec<T>, Buffer<T>)>;

/// Returns the cached `(host, device)` input for `key`, making and
/// uploading it (through `ctx`) if the previous trial used another.
/// Consecutive trials over one input share one upload.
pub fn cached_input<T: Pod>(
    ctx: &Context,
    key: &str,
    make: impl FnOnce() -> Vec<T>,
) -> Result<Input<T>, Failed> {
    if let Some(hit) = INPUT.with(|c| {
        c.borrow()
            .as_ref()
            .filter(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    }) {
        return hit
            .downcast::<(Vec<T>, Buffer<T>)>()
            .map_err(|_| "input cache type mismatch".into());
    }
    // Free the previous input before allocating the next (2^28 elements
    // each).
    INPUT.with(|c| c.borrow_mut().take());
    let host = make();
    let device = upload(ctx, &host)?;
    let entry = Rc::new((host, device));
    INPUT.with(|c| *c.borrow_mut() = Some((key.to_string(), entry.clone() as Rc<dyn Any>)));
    Ok(entry)
}

/// A copy of `host` on `ctx`'s device (empty slices included).
pub fn upload<T: Pod>(ctx: &Context, host: &[T]) -> Result<Buffer<T>, Failed> {
    ctx.upload(host)
        .map_err(|e| format!("upload of {} elements failed: {e}", host.len()).into())
}

/// A buffer of `len` elements set to `poison`, so that an unwritten output
/// is caught.
pub fn poisoned<T: Pod>(ctx: &Context, len: usize, poison: T) -> Result<Buffer<T>, Failed> {
    upload(ctx, &vec![poison; len])
}

/// A copy of `src` on the host, once `ctx`'s queue (and every other that
/// writes `src`) has written it.
pub fn download<T: Pod>(ctx: &Context, src: &impl DeviceRead<Elem = T>) -> Result<Vec<T>, Failed> {
    ctx.download(src)
        .map_err(|e| format!("download failed: {e}").into())
}

/// A seeded generator: the same test draws the same data on every run.
pub fn rng(seed: u64) -> StdRng {
    StdRng::seed_from_u64(seed)
}

/// Random values by a closure, seeded.
pub fn random_vec<T>(n: usize, seed: u64, mut draw: impl FnMut(&mut StdRng) -> T) -> Vec<T> {
    let mut r = rng(seed);
    (0..n).map(|_| draw(&mut r)).collect()
}

/// Stable seed from a test's parameters.
pub fn seed_of(parts: &str) -> u64 {
    parts.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
}

pub fn ensure(condition: bool, message: impl FnOnce() -> String) -> Result<(), Failed> {
    if condition {
        Ok(())
    } else {
        Err(message().into())
    }
}

/// Turns a library error into a test failure.
pub fn ok<T>(r: warpspeed::Result<T>) -> Result<T, Failed> {
    r.map_err(|e| e.to_string().into())
}

pub fn draw_f32(r: &mut StdRng) -> f32 {
    r.random_range(-1.0f32..1.0)
}

/// The generic ladder driver: one trial per step of `L` and per case, named
/// `<family>::<step>::<case>`, for the steps where `applies` holds. `check`
/// runs the step on the case and compares with a CPU reference.
pub fn ladder_trials<L: Ladder + Send, C: Clone + Send + 'static>(
    trials: &mut Vec<Trial>,
    cases: &[(String, usize, C)],
    applies: fn(L, &C) -> bool,
    check: fn(&Context, L, &C) -> Result<(), Failed>,
) {
    for (case_name, n, case) in cases {
        for &step in L::ALL.iter().filter(|&&s| applies(s, case)) {
            let case = case.clone();
            let name = format!("{}::{}::{case_name}", L::FAMILY, step.name());
            trials.push(sized_trial(name, *n, move |ctx| check(ctx, step, &case)));
        }
    }
}

/// Passes if `r` is a refusal of bad arguments (an argument error, before
/// any launch), printing it.
pub fn expect_invalid<T: std::fmt::Debug>(
    r: warpspeed::Result<T>,
    what: &str,
) -> Result<(), Failed> {
    match r {
        Err(e) if e.is_argument_error() => {
            eprintln!("  refused {what}: {e}");
            Ok(())
        }
        other => Err(format!("{what}: expected an argument error, got {other:?}").into()),
    }
}

// Inputs beyond 2^31 elements: each family has a trial past 2^31
// elements (past 2^32 bytes for byte inputs), every step, so that an index
// or a byte offset kept in 32 bits anywhere, on the host or in a kernel,
// lands on the wrong element. The data are small integers wherever
// arithmetic is involved, so every result is exact; where a full check
// would take the CPU seconds per step, whole windows are checked where
// 32-bit arithmetic would break: the start, around element 2^31 (and
// 2^32), and the end. They need up to 18 GB of device memory (and as much
// host memory) and are skipped under compute-sanitizer
// (`WARPSPEED_TEST_MAX_N`).

/// 2^31.
pub const TWO_31: usize = 1 << 31;
/// Elements each checked window holds.
pub const WINDOW: usize = 1 << 16;

/// The windows of `0..n` a check covers: the start, around each of
/// `marks`, and the end (clipped to `0..n`, possibly overlapping).
pub fn windows(n: usize, marks: &[usize]) -> Vec<Range<usize>> {
    let mut out = vec![0..WINDOW.min(n), n.saturating_sub(WINDOW)..n];
    for &m in marks {
        if m < n {
            out.push(m.saturating_sub(WINDOW / 2)..(m + WINDOW / 2).min(n));
        }
    }
    out
}

/// `Err` naming the first element where `got` differs from `want`.
pub fn same<T: PartialEq + std::fmt::Debug>(
    what: String,
    got: &[T],
    want: &[T],
) -> Result<(), Failed> {
    match got.iter().zip(want).position(|(g, w)| g != w) {
        None => Ok(()),
        Some(i) => Err(format!("{what} {i}: {:?}, want {:?}", got[i], want[i]).into()),
    }
}

/// A device buffer of `n` elements, each `value` (a memset in `ctx`'s
/// stream order: no host copy of the size of the buffer, and no zeroing
/// first).
pub fn filled<T: Pod>(ctx: &Context, n: usize, value: T) -> Result<Buffer<T>, Failed> {
    let mut buffer = ok(ctx.alloc::<T>(n))?;
    ok(ctx.fill(&mut buffer, value))?;
    Ok(buffer)
}

/// A device buffer of `n` bytes, each `value`.
pub fn filled_u8(ctx: &Context, n: usize, value: u8) -> Result<Buffer<u8>, Failed> {
    filled(ctx, n, value)
}

/// Writes `values` at element `at` of `buffer` (in `ctx`'s stream order).
pub fn put<T: Pod>(
    ctx: &Context,
    buffer: &mut impl DeviceWrite<Elem = T>,
    at: usize,
    values: &[T],
) -> Result<(), Failed> {
    let mut whole = buffer.view_mut();
    let mut part = ok(whole.slice_mut(at..at + values.len()))?;
    ok(ctx.copy_from_host(values, &mut part))
}

/// The byte at row `r`, column `c` of the byte inputs of the tests past
/// 2^31 elements (transposes, image sums): it changes along both axes, so
/// a misplaced element shows.
pub fn byte_at(r: usize, c: usize) -> u8 {
    (r.wrapping_mul(131) ^ c.wrapping_mul(7) ^ (r >> 8) ^ (c >> 9)) as u8
}
