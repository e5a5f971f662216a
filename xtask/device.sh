#!/usr/bin/env bash
# Runs warpspeed's bundled test and benchmark executables on a GPU machine
# that has no Rust toolchain. Built by `cargo xtask device` into
# target/device/ (executables embed their PTX).
#
#   bash target/device/run.sh [test | test-native | test-sm70] [sanitize] [bench] [ARGS for bench...]
#
# Phases (default: all three):
#   test      every test executable and example; GPU tests must run
#             (WARPSPEED_REQUIRE_GPU);
#             then the GPU suite again with the baseline PTX forced
#             (WARPSPEED_PTX=sm_70: the driver compiles it for this GPU).
#             The two halves are phases of their own, test-native and
#             test-sm70; in one process, either outlasts a 10-minute
#             remote call on an H200 (see TEST_JOBS)
#   sanitize  the GPU suite under compute-sanitizer memcheck, racecheck,
#             synccheck and initcheck (SANITIZE_TOOLS picks some), inputs
#             capped at WARPSPEED_TEST_MAX_N (default
#             1100000: covers the 1 000 003-element cases, multi-pass paths
#             included; the 2^24 and 2^28 cases run in `test`)
#   bench     the ladder benchmarks beside NVIDIA's libraries (nvcc builds the
#             peer programs); the run's JSON goes to $OUT/ladder.json (back
#             home, `cargo xtask report ladder.json` renders the report). The
#             ladder rewrites $OUT/bench/ladder.json after each case: a run
#             stopped midway leaves there the cases it finished
#   profile FAMILY [VARIANT] [--BENCH ARGS...]
#             Nsight Compute on one kernel of a ladder (profile.py beside this
#             script): duration, DRAM against the peak, occupancy, registers,
#             shared memory and its bank conflicts, top stall reasons; with
#             the line-info PTX (ptx/*.lineinfo.ptx, loaded on compute capability 9.0)
#             also the Rust lines that take the time
#   multi     the multi-GPU benchmark (sharded sum and histogram over 1, 2, 4
#             ... GPUs, all-reduce beside NCCL's own program): $OUT/multi.*
#             (not part of the default phases)
#   interop   the host-side benchmark (100 small calls as one CUDA graph
#             against one by one; copies between host and device memory
#             beside cudaMemcpyAsync, whose peer nvcc builds):
#             $OUT/interop.* (not part of the default phases)
# Logs and JSON go to $OUT (or target/device/out).
#
# FILTER=WORD (e.g. FILTER=conv1d) keeps the test and sanitize phases to
# the GPU suite's trials whose names contain WORD (the test harness's
# filter), and skips the other test executables and the examples: a quick
# check of one family after a change.
#
# TEST_JOBS=N (default 1) splits the GPU suite, in the test and sanitize
# phases, into N shards that run as processes side by side
# (WARPSPEED_TEST_SHARD: every N-th group of trials),
# beside one more for the trials past 2^31 elements, which take gigabytes
# each and run one at a time; the trials that need the GPU to themselves
# (one takes nearly all of its memory on purpose, another compares its
# free memory before and after) run after them, one at a time. The harness
# runs one trial at a time (one CUDA context a process), and most of a
# trial's time is its CPU reference, so the shards share the machine's
# cores: on an H200 machine (16 cores), TEST_JOBS=8 ran the whole GPU
# suite's sm_90a half in 193 s, then the trials alone.
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$here/out}
mkdir -p "$out"
bin=$here/bin
export WARPSPEED_REQUIRE_GPU=1
phases=()
bench_args=()
for a in "$@"; do
  case $a in test|test-native|test-sm70|sanitize|bench|multi|interop|profile) phases+=("$a") ;; *) bench_args+=("$a") ;; esac
done
[ ${#phases[@]} -gt 0 ] || phases=(test sanitize bench)
# FILTER as the test harness's argument list (empty: every trial).
filter=()
[ -n "${FILTER:-}" ] && filter=("$FILTER")
jobs=${TEST_JOBS:-1}
summary=()
failed=0

# NCCL for the multi-GPU functions: the system's, else the one in Python's
# nvidia-nccl package. Found: its tests must run (not be skipped).
if [ -z "${WARPSPEED_NCCL:-}" ] && ! ldconfig -p 2>/dev/null | grep -q 'libnccl\.so\.2'; then
  nccl=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null)
  [ -n "$nccl" ] && [ -f "$nccl" ] && export WARPSPEED_NCCL=$nccl
fi
if [ -n "${WARPSPEED_NCCL:-}" ] || ldconfig -p 2>/dev/null | grep -q 'libnccl\.so\.2'; then
  export WARPSPEED_REQUIRE_NCCL=1
fi
echo "NCCL: ${WARPSPEED_NCCL:-system library path}"
# CUTLASS's headers for the bench's 3xTF32 peer: WARPSPEED_CUTLASS, else
# the nvidia-cutlass package where Python has it (its cutlass_library's
# source folder).
if [ -z "${WARPSPEED_CUTLASS:-}" ]; then
  cutlass=$(python3 -c 'import cutlass_library, os; print(os.path.join(os.path.dirname(cutlass_library.__file__), "source"))' 2>/dev/null)
  [ -n "$cutlass" ] && [ -f "$cutlass/include/cutlass/cutlass.h" ] && export WARPSPEED_CUTLASS=$cutlass
fi
echo "CUTLASS: ${WARPSPEED_CUTLASS:-not found (the 3xTF32 peer is not available)}"
# NVLink multicast stays off on shared machines.
export NCCL_NVLS_ENABLE=0

# The line-info build of the kernels (sm_90a: the H100 and H200), when the bundle has
# it and the GPU runs it: reports then name Rust files and lines.
lineinfo=
if [ -f "$here/ptx/warpspeed_sm_90a.lineinfo.ptx" ] && \
   nvidia-smi --query-gpu=compute_cap --format=csv,noheader | grep -q '^9\.0'; then
  lineinfo=$here/ptx/warpspeed_sm_90a.lineinfo.ptx
fi

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem --format=csv \
  | tee "$out/nvidia-smi.csv"

run_logged() { # name, command...
  local name=$1; shift
  local t0=$SECONDS
  "$@" >"$out/$name.log" 2>&1
  local rc=$?
  local result
  result=$(grep -E '^test result:' "$out/$name.log" | tail -1)
  summary+=("$name: rc=$rc, $((SECONDS - t0)) s; ${result:-$(tail -1 "$out/$name.log")}")
  [ $rc -eq 0 ] || failed=1
  return $rc
}

gpu_suite() { # log name, then a command to run the GPU suite under (env VAR=value, a sanitizer...)
  local name=$1; shift
  if [ "$jobs" -le 1 ]; then
    run_logged "$name" "$@" "$bin/gpu" --test-threads 1 "${filter[@]}"
    return
  fi
  # The shards and the trials past 2^31 side by side, then those alone.
  local shards=() pids=() i rc t0=$SECONDS
  for ((i = 0; i < jobs; i++)); do shards+=("$i/$jobs"); done
  shards+=(big)
  for i in "${!shards[@]}"; do
    WARPSPEED_TEST_SHARD=${shards[$i]} "$@" "$bin/gpu" --test-threads 1 "${filter[@]}" \
      >"$out/$name-shard$i.log" 2>&1 &
    pids+=($!)
  done
  for i in "${!shards[@]}"; do
    wait "${pids[$i]}"; rc=$?
    summary+=("$name, shard ${shards[$i]}: rc=$rc, $((SECONDS - t0)) s; $(grep -E '^test result:' "$out/$name-shard$i.log" | tail -1)")
    [ $rc -eq 0 ] || failed=1
  done
  WARPSPEED_TEST_SHARD=alone run_logged "$name-alone" "$@" "$bin/gpu" --test-threads 1 "${filter[@]}"
}

for phase in "${phases[@]}"; do
  case $phase in
  test|test-native|test-sm70)
    if [ $phase != test-sm70 ]; then
      if [ -n "${FILTER:-}" ]; then
        gpu_suite test-gpu env
      else
        for t in "$bin"/*; do
          name=$(basename "$t")
          # The benchmarks have phases of their own.
          case $name in ladder|multi|interop) continue ;; esac
          if [ "$name" = gpu ]; then
            gpu_suite test-gpu env
          else
            run_logged "test-$name" "$t" --test-threads 1
          fi
        done
        # The examples, each a short program that checks its own result.
        for t in "$here"/examples/*; do
          [ -x "$t" ] && run_logged "example-$(basename "$t")" "$t"
        done
      fi
    fi
    if [ $phase != test-native ]; then
      gpu_suite test-gpu-sm_70 env WARPSPEED_PTX=sm_70
    fi
    ;;
  sanitize)
    export WARPSPEED_TEST_MAX_N=${WARPSPEED_TEST_MAX_N:-1100000} WARPSPEED_UNDER_SANITIZER=1
    for tool in ${SANITIZE_TOOLS:-memcheck racecheck synccheck initcheck}; do
      extra=()
      [ $tool = memcheck ] && extra=(--padding 512 --leak-check full)
      # --report-api-errors no: the library checks every driver result itself
      # (the tests assert them); NCCL probes kernels its build lacks for this
      # GPU (error 209) and handles that. Memory errors are still reported.
      gpu_suite "sanitize-$tool" compute-sanitizer --tool $tool --report-api-errors no "${extra[@]}" --error-exitcode 1
      for log in "$out/sanitize-$tool"*.log; do
        grep -E '=+ (ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY)' "$log" | tail -2 \
          | sed "s/^/  $tool ($(basename "$log" .log)): /"
      done
    done
    unset WARPSPEED_TEST_MAX_N WARPSPEED_UNDER_SANITIZER
    case " ${SANITIZE_TOOLS:-memcheck} " in *" memcheck "*) ;; *) continue ;; esac
    # Self-check: memcheck must see the deliberate out-of-bounds read of the
    # fault test, or the zero-error results above prove nothing.
    WARPSPEED_FAULT_CHILD=1 compute-sanitizer --tool memcheck "$bin/gpu" >"$out/sanitize-selfcheck.log" 2>&1
    if grep -q "Invalid __global__ read" "$out/sanitize-selfcheck.log"; then
      summary+=("sanitize-selfcheck: memcheck reports the planted invalid read, as it must")
    else
      summary+=("sanitize-selfcheck: FAILED, memcheck did not report the planted invalid read")
      failed=1
    fi
    # With the line-info build, the same report names the Rust file and line.
    if [ -f "$lineinfo" ]; then
      WARPSPEED_PTX_FILE=$lineinfo WARPSPEED_FAULT_CHILD=1 compute-sanitizer --tool memcheck \
        "$bin/gpu" >"$out/sanitize-lineinfo.log" 2>&1
      at=$(grep -m1 -oE 'at [A-Za-z0-9_]+\+0x[0-9a-f]+ in [^ ]+\.rs:[0-9]+' "$out/sanitize-lineinfo.log")
      if [ -n "$at" ]; then
        summary+=("sanitize-lineinfo: memcheck names the Rust line: $at")
      else
        summary+=("sanitize-lineinfo: FAILED, no Rust file and line in the report")
        failed=1
      fi
    fi
    ;;
  bench)
    run_logged bench "$bin/ladder" --out "$out/bench" "${bench_args[@]}"
    cat "$out/bench.log"
    # The JSON is the whole result: the report is rendered from it at home.
    cp "$out/bench/ladder.json" "$out/ladder.json" && rm -rf "$out/bench"
    ;;
  profile)
    if [ -f "$lineinfo" ]; then export WARPSPEED_PTX_FILE=$lineinfo; fi
    # The Rust sources, for the hot lines: the checkout this bundle sits in.
    [ -d "$here/../../gpu/src" ] && export WARPSPEED_SOURCE_ROOT=$(cd "$here/../.." && pwd)
    run_logged profile python3 "$here/profile.py" "$bin/ladder" "${bench_args[@]}"
    cat "$out/profile.log"
    unset WARPSPEED_PTX_FILE
    ;;
  multi)
    run_logged multi "$bin/multi" --out "$out/multi" "${bench_args[@]}"
    cat "$out/multi.log"
    cp "$out/multi/multi.json" "$out/multi/multi.md" "$out/" 2>/dev/null; rm -rf "$out/multi"
    ;;
  interop)
    run_logged interop "$bin/interop" --out "$out/interop" "${bench_args[@]}"
    cat "$out/interop.log"
    cp "$out/interop/interop.json" "$out/interop/interop.md" "$out/" 2>/dev/null; rm -rf "$out/interop"
    ;;
  esac
done

echo
echo "summary:"
printf '  %s\n' "${summary[@]}"
exit $failed
