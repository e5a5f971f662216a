#!/usr/bin/env python3
"""torch_peers: PyTorch operations timed exactly as warpspeed's ladder benchmark
times its own kernels (host/benches/ladder/harness.rs), for what no C library
offers (a byte transpose); the companion of peers.cu, with the same command line
and output.

Usage:
    torch_peers.py <reps> <case>...

Cases:
    transpose:u8:<w>:<h>   x.t().contiguous() of an (h, w) uint8 CUDA tensor
    transpose:f32:<w>:<h>  the same for float32 (for reference)

For every case, in order, one JSON object on its own line of stdout:
    {"case":"transpose:u8:8192:8192","peer":"torch .t().contiguous()","ms":0.387000,"ok":true}
    {"case":"...","peer":"...","error":"<message>"}
"ms" is the median time of one launch; "ok" says whether spot checks of the
timed result matched. Diagnostics go to stderr only. Exit status: 0 when every
case was measured (whatever its "ok"), 1 when some case printed an error, 2 on
a usage error.

Timing, as in the Rust harness: the inputs are rotated among enough device
copies that together they are at least twice the L2 cache (1 to 4 copies);
3 warm-up launches; then `reps` launches enqueued back to back on one
non-default stream, each between its own pair of CUDA events, with a single
synchronisation at the end; the result is the median of the `reps` times.
"""

import json
import sys

PEER = "torch .t().contiguous()"

# Launches before timing starts (the Rust harness's WARMUP).
WARMUP = 3

USAGE = "usage: torch_peers.py <reps> <case>...\ncases: transpose:<u8|f32>:<w>:<h>\n"


class Failure(Exception):
    """A case that could not be measured; its message becomes the "error" field."""


def log(message):
    print(f"torch_peers: {message}", file=sys.stderr, flush=True)


def parse_u64(text, what):
    """A decimal number with nothing else around it."""
    if not text.isascii() or not text.isdigit() or len(text) > 19:
        raise Failure(f"bad {what} `{text}`")
    return int(text)


def copies_for(torch, nbytes):
    """Copies of an input of `nbytes` bytes that together are at least twice
    the L2 cache, clamped to 1..4 (the Rust harness's `device_copies`)."""
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", None)
    if l2 is None:
        raise Failure("this torch does not report the L2 cache size")
    per_copy = max(nbytes, 1)
    return min(max(-(-2 * l2 // per_copy), 1), 4)


def median_ms(torch, stream, reps, launch):
    """Median milliseconds of `reps` launches after WARMUP warm-up ones.

    `launch(turn)` enqueues launch number `turn` (0, 1, 2, ... across warm-up
    and timed launches) on the current stream. Every timed launch sits between
    its own pair of events and all are enqueued back to back before one final
    synchronisation, so the GPU does not wait for the host between launches.
    """
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    stops = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    turn = 0
    with torch.cuda.stream(stream):
        for _ in range(WARMUP):
            launch(turn)
            turn += 1
        torch.cuda.synchronize()
        for start, stop in zip(starts, stops):
            start.record(stream)
            launch(turn)
            stop.record(stream)
            turn += 1
        torch.cuda.synchronize()
    times = sorted(start.elapsed_time(stop) for start, stop in zip(starts, stops))
    return times[len(times) // 2]


def element(dtype_name, i):
    """Element i of a row-major input matrix: bytes `(i * 31) % 251` (as the
    Rust benches), floats their own index (exact below 2^24)."""
    return (i * 31) % 251 if dtype_name == "u8" else float(i % 16777216)


def transpose_case(torch, reps, dtype_name, w, h):
    """x.t().contiguous() of a row-major (h, w) matrix; element (x, y) of the
    input, at [y, x], must be at [x, y] of the (w, h) result."""
    if w == 0 or h == 0:
        raise Failure("w and h must be positive")
    n = w * h
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        index = torch.arange(n, device="cuda", dtype=torch.int64)
        if dtype_name == "u8":
            matrix = ((index * 31) % 251).to(torch.uint8)
        else:
            matrix = (index % 16777216).to(torch.float32)
        del index
        matrix = matrix.view(h, w)
        copies = copies_for(torch, matrix.numel() * matrix.element_size())
        inputs = [matrix] + [matrix.clone() for _ in range(copies - 1)]
        del matrix
    torch.cuda.synchronize()
    log(f"{len(inputs)} input cop{'y' if len(inputs) == 1 else 'ies'}")

    result = [None]

    def launch(turn):
        # The previous result is released only after the new one is allocated,
        # so the caching allocator alternates between two blocks: no cudaMalloc
        # once warmed up.
        result[0] = inputs[turn % len(inputs)].t().contiguous()

    ms = median_ms(torch, stream, reps, launch)

    out = result[0]
    spots = [(0, 0), (1 % w, 0), (0, 1 % h), (w - 1, 0), (0, h - 1), (w - 1, h - 1),
             (w - 1, min(3, h - 1)), (min(17, w - 1), h - 1 - min(1, h - 1))]
    state = 0x9E3779B97F4A7C15
    for _ in range(29):
        state = (state * 6364136223846793005 + 1442695040888963407) % 2**64
        i = (state >> 11) % n
        spots.append((i % w, i // w))
    ok = tuple(out.shape) == (w, h)
    if ok:
        for x, y in spots:
            got, want = out[x, y].item(), element(dtype_name, y * w + x)
            if got != want:
                log(f"element ({x}, {y}): got {got}, want {want}")
                ok = False
    else:
        log(f"result shape {tuple(out.shape)}, want {(w, h)}")
    del inputs, out, result
    torch.cuda.empty_cache()
    return ms, ok


def run_case(torch, reps, spec):
    fields = spec.split(":")
    if fields[0] == "transpose" and len(fields) == 4:
        if fields[1] not in ("u8", "f32"):
            raise Failure(f"unknown element type `{fields[1]}` (u8, f32)")
        return transpose_case(torch, reps, fields[1], parse_u64(fields[2], "w"), parse_u64(fields[3], "h"))
    raise Failure("unknown case (transpose:<u8|f32>:<w>:<h>)")


def peer_of(spec):
    return PEER if spec.split(":")[0] == "transpose" else "unknown"


def emit(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(USAGE)
        return 2
    try:
        reps = parse_u64(argv[0], "reps")
        if not 1 <= reps <= 1_000_000:
            raise Failure("reps must be in 1..=1000000")
    except Failure as e:
        sys.stderr.write(f"torch_peers: {e}\n{USAGE}")
        return 2

    # torch and the device once for all cases; if they cannot be had, every
    # case says why.
    torch, setup_error = None, None
    try:
        import torch
        if not torch.cuda.is_available():
            setup_error = "torch sees no CUDA device"
        else:
            props = torch.cuda.get_device_properties(0)
            log(f"torch {torch.__version__}, {props.name}")
    except Exception as e:  # ImportError, or a broken CUDA install
        setup_error = f"torch is not usable: {e}"

    all_measured = True
    for spec in argv[1:]:
        head = f'{{"case":{json.dumps(spec)},"peer":{json.dumps(peer_of(spec))}'
        try:
            if setup_error is not None:
                raise Failure(setup_error)
            log(spec)
            ms, ok = run_case(torch, reps, spec)
        except Exception as e:  # report it and go on with the next case
            error = str(e) or type(e).__name__
        else:
            emit(f'{head},"ms":{ms:.6f},"ok":{"true" if ok else "false"}}}')
            continue
        all_measured = False
        emit(f'{head},"error":{json.dumps(error)}}}')
        if setup_error is None:
            # The failed case's tensors are gone with its exception: give
            # their memory back before the next case.
            torch.cuda.empty_cache()
    return 0 if all_measured else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
