//! The GPU test suite: every kernel of every family against CPU references.
//!
//! A custom harness (libtest-mimic) so that, where no CUDA device exists, each
//! GPU test is reported as *ignored* with the reason, never as passed. On a
//! machine with a GPU the same `cargo test` runs them all.
//!
//! Environment:
//! * `WARPSPEED_REQUIRE_GPU=1`: no device is a failure, not a skip (the GPU
//!   machine's script sets it, so a broken driver cannot pass silently);
//! * `WARPSPEED_TEST_MAX_N=<n>`: skip inputs larger than `n` elements (used
//!   under compute-sanitizer, which runs kernels far slower);
//! * `WARPSPEED_UNDER_SANITIZER=1`: skip the tests that fault on purpose;
//! * `WARPSPEED_PTX=sm_70`: load the baseline PTX instead of the device's
//!   newest (the library reads it; the suite checks it was honoured);
//! * `WARPSPEED_TEST_SHARD=i/n`, `big` or `alone`: a part of the suite,
//!   for several processes side by side (`common::shard`).

mod common;
mod context;
mod conv1d;
mod gemm;
mod histogram;
mod image_sums;
mod interop;
#[cfg(feature = "cudarc")]
mod interop_cudarc;
mod memory;
mod multi;
mod reduce;
mod rng;
mod scan;
mod sort;
mod soundness;
mod transpose;

use libtest_mimic::{Arguments, Trial};

/// Every family's trials, in order: registering a family is one row here.
const FAMILIES: &[fn(&mut Vec<Trial>)] = &[
    context::trials,
    memory::trials,
    reduce::trials,
    scan::trials,
    sort::trials,
    transpose::trials,
    image_sums::trials,
    histogram::trials,
    conv1d::trials,
    gemm::trials,
    rng::trials,
    multi::trials,
    interop::trials,
    soundness::trials,
];

fn main() {
    if std::env::var_os(context::FAULT_CHILD).is_some() {
        context::fault_child();
    }
    if std::env::var_os(multi::RANK_CHILD).is_some() {
        multi::rank_child();
    }
    if std::env::var_os(soundness::CONTEXTS_CHILD).is_some() {
        soundness::contexts_child();
    }
    let mut args = Arguments::from_args();
    // One CUDA context, owned by the main thread: run the trials there, in
    // order (inputs are cached between consecutive trials).
    args.test_threads = Some(1);

    let mut trials: Vec<Trial> = Vec::new();
    for family in FAMILIES {
        family(&mut trials);
    }
    // A name is how a trial is asked for (`--exact`, the shards' groups):
    // two trials of one name would run the same check twice, or hide one.
    let mut names: Vec<&str> = trials.iter().map(Trial::name).collect();
    names.sort_unstable();
    if let Some(pair) = names.windows(2).find(|pair| pair[0] == pair[1]) {
        eprintln!("warpspeed: two trials are named {}", pair[0]);
        std::process::exit(2);
    }
    let listed = trials
        .iter()
        .map(|t| (t.name().to_string(), t.kind().to_string()))
        .collect();
    trials.push(common::partition_trial(listed));
    let trials = match common::shard(trials) {
        Ok(trials) => trials,
        Err(message) => {
            eprintln!("warpspeed: {message}");
            std::process::exit(2);
        }
    };

    if let Some(reason) = common::no_device_reason() {
        eprintln!(
            "warpspeed: no CUDA device ({reason}): {} GPU tests will be reported as ignored",
            trials.len()
        );
    }
    libtest_mimic::run(&args, trials).exit();
}
