#!/usr/bin/env python3
"""Profiles one kernel of a ladder with Nsight Compute and prints what a
reader needs to see why a step is fast or slow.

    profile.py LADDER_BIN FAMILY [VARIANT] [BENCH ARGS...]

Runs the ladder benchmark (`LADDER_BIN --families FAMILY --quick --no-peers
--no-hold`: the profiler serialises launches, so nothing may hold the stream;
then BENCH ARGS, the arguments after VARIANT that start with `--`, such as
`--steps tf32_tma --warmup-ms 0`) under `ncu --clock-control none`, on the
fourth launch of the kernel whose entry name starts with `<family>_<variant>`
(PROFILE_KERNEL names another prefix, PROFILE_SKIP how many launches of it
to pass over first: 3), and prints:
duration, DRAM throughput against the peak, achieved and theoretical
occupancy, registers per thread, shared memory per block, shared-memory bank
conflicts, and the top stall reasons (cycles per issued instruction). With a
line-info build loaded (`WARPSPEED_PTX_FILE`, from `cargo xtask build-ptx
--lineinfo`), a second pass samples warp stalls per source line and prints
the Rust lines that take the time.

Measurement tooling for GPU machines (the device bundle's `run.sh profile`);
it needs `ncu` and nothing from the library.
"""

import csv
import io
import os
import re
import subprocess
import sys

METRICS = [
    "gpu__time_duration.sum",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__bytes.sum.per_second",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "sm__maximum_warps_per_active_cycle_pct",
    "launch__registers_per_thread",
    "launch__block_size",
    "launch__grid_size",
    "launch__shared_mem_per_block_dynamic",
    "launch__shared_mem_per_block_static",
    "launch__occupancy_limit_registers",
    "launch__occupancy_limit_shared_mem",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "smsp__inst_executed.sum",
]
STALLS = "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\\.ratio"


def ncu(args, ladder, family, extra):
    command = [
        "ncu", "--clock-control", "none",
        "--launch-skip", os.environ.get("PROFILE_SKIP", "3"), "--launch-count", "1",
        *args, ladder, "--families", family, "--quick", "--no-peers", "--no-hold", "--reps", "1",
        "--out", "/tmp/warpspeed-profile", *extra,
    ]
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"ncu failed ({run.returncode}):\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}")
    return run.stdout


def csv_rows(text):
    start = text.find('"ID"')
    if start < 0:
        sys.exit("ncu printed no table: is the kernel name right?\n" + text[-2000:])
    return list(csv.reader(io.StringIO(text[start:])))


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    ladder, family = sys.argv[1], sys.argv[2]
    rest = sys.argv[3:]
    variant = rest.pop(0) if rest and not rest[0].startswith("--") else ""
    prefix = os.environ.get("PROFILE_KERNEL") or (
        family.replace("-", "_") + ("_" + variant if variant else ""))
    kernel = f"regex:^{re.escape(prefix)}"

    rows = csv_rows(ncu(["--kernel-name", kernel, "--csv", "--page", "raw",
                         "--metrics", ",".join(METRICS) + "," + STALLS], ladder, family, rest))
    header, units, values = rows[0], rows[1], rows[2]
    m = dict(zip(header, values))
    unit = dict(zip(header, units))

    def num(name):
        try:
            return float(m.get(name, "nan").replace(",", ""))
        except ValueError:
            return float("nan")

    # ncu scales the unit per value: "ns"/"nsecond", "us"/"usecond", "ms";
    # "Gbyte/second".
    time_unit = unit.get("gpu__time_duration.sum", "").strip()
    to_us = {"n": 1e-3, "u": 1.0, "µ": 1.0, "m": 1e3, "s": 1e6}.get(time_unit[:1], float("nan"))
    duration = num("gpu__time_duration.sum") * to_us
    bw_unit = unit.get("dram__bytes.sum.per_second", "")
    prefix = bw_unit.split("byte")[0]
    scale = {"": 1e-9, "K": 1e-6, "M": 1e-3, "G": 1.0, "T": 1e3}.get(prefix, float("nan"))
    bandwidth = num("dram__bytes.sum.per_second")
    print(f"kernel            {m.get('Kernel Name', '?')}")
    print(f"duration          {duration:.1f} µs" if duration == duration
          else f"duration          {m.get('gpu__time_duration.sum')} {time_unit}")
    print(f"DRAM              {bandwidth * scale:.0f} GB/s, "
          f"{num('dram__throughput.avg.pct_of_peak_sustained_elapsed'):.1f} % of peak")
    print(f"SM throughput     {num('sm__throughput.avg.pct_of_peak_sustained_elapsed'):.1f} % of peak")
    print(f"occupancy         {num('sm__warps_active.avg.pct_of_peak_sustained_active'):.1f} % achieved, "
          f"{num('sm__maximum_warps_per_active_cycle_pct'):.1f} % theoretical "
          f"(blocks/SM limited to {num('launch__occupancy_limit_registers'):.0f} by registers, "
          f"{num('launch__occupancy_limit_shared_mem'):.0f} by shared memory)")
    print(f"launch            grid {num('launch__grid_size'):.0f} × block {num('launch__block_size'):.0f}, "
          f"{num('launch__registers_per_thread'):.0f} registers/thread, "
          f"{num('launch__shared_mem_per_block_dynamic') + num('launch__shared_mem_per_block_static'):.0f} "
          f"B shared/block")
    wavefronts = num("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum")
    print(f"shared memory     {num('l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum'):.0f} load and "
          f"{num('l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum'):.0f} store bank conflicts "
          f"({wavefronts:.0f} load wavefronts)")
    stalls = sorted(
        ((num(k), k) for k in header if k.startswith("smsp__average_warps_issue_stalled_")),
        reverse=True)
    reason = re.compile(r"smsp__average_warps_issue_stalled_(.*)_per_issue_active\.ratio")
    top = ["%s %.2f" % (reason.sub(r"\1", k), v) for v, k in stalls[:5] if v == v]
    print("top stalls        " + ", ".join(top))

    if os.environ.get("WARPSPEED_PTX_FILE"):
        source_lines(ladder, family, kernel, rest)


def source_lines(ladder, family, kernel, extra):
    """Warp-stall samples per source line of the line-info build."""
    text = ncu(["--kernel-name", kernel, "--section", "SourceCounters",
                "--import-source", "yes", "--page", "source",
                "--print-source", "cuda,sass", "--csv"], ladder, family, extra)
    if os.environ.get("PROFILE_DUMP"):
        with open(os.environ["PROFILE_DUMP"], "w") as f:
            f.write(text)
    # Blocks of: "File Path",<file> / "Function Name",.. / "Line No",<columns>
    # / one row per source line (its samples summed), then its SASS rows.
    lines, path, column = [], "?", None
    for row in csv.reader(io.StringIO(text)):
        if not row:
            continue
        if row[0] == "File Path":
            path = row[1]
        elif row[0] == "Line No":
            column = next((i for i, h in enumerate(row) if h.startswith("Warp Stall Sampling (All")), None)
        elif row[0].isdigit() and column is not None and len(row) > column:
            try:
                lines.append((float(row[column]), path, int(row[0]), row[1].strip()))
            except ValueError:
                pass
    total = sum(v for v, *_ in lines)
    if not total:
        print("hot Rust lines    (no samples: was the line-info PTX loaded?)")
        return
    print("hot Rust lines    (share of the kernel's warp-stall samples; innermost inlined line)")
    for v, path, line, source in sorted(lines, reverse=True)[:8]:
        short = re.sub(r"^.*/(gpu/src/|library/core/src/)", r"\1", path)
        if source.startswith("<"):  # ncu did not find the file: read it here
            source = read_line(path, line)
        print(f"  {100 * v / total:5.1f} %  {short}:{line}  {source[:70]}")


def read_line(path, line):
    """Line `line` of `path`, relative to the repository (WARPSPEED_SOURCE_ROOT,
    else the working directory) when not absolute."""
    root = os.environ.get("WARPSPEED_SOURCE_ROOT", ".")
    try:
        with open(os.path.join(root, path)) as f:
            for number, text in enumerate(f, 1):
                if number == line:
                    return text.strip()
    except OSError:
        pass
    return ""


if __name__ == "__main__":
    main()
