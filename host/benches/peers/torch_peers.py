#!/usr/bin/env python3
"""torch_peers: PyTorch operations timed exactly as warpspeed's ladder benchmark
times its own kernels (host/benches/ladder/harness.rs), for what no C library
offers (a byte transpose, a row-wise prefix sum), for cuDNN, which torch calls
for us (a 1D convolution), and for torch's own prefix sum, sort, top-k and
argmax; the companion of peers.cu, with the same command line and output.

Usage:
    torch_peers.py <reps> <case>...

Cases:
    transpose:u8:<w>:<h>   x.t().contiguous() of an (h, w) uint8 CUDA tensor
    transpose:f32:<w>:<h>  the same for float32 (for reference)
    conv1d:<n>:<taps>      torch.nn.functional.conv1d (cuDNN) of a (1, 1, n)
                           float32 signal with a (1, 1, taps) weight, odd taps,
                           padding taps // 2: the "same" output; TF32 off, so
                           FP32 accuracy as warpspeed's conv1d
    cumsum:<f32|i32|i64>:<n>
                           torch.cumsum(x, 0, dtype=x.dtype, out=y) of n values
                           into a tensor allocated before timing
    cumsum_rows:f32:<rows>:<width>
                           torch.cumsum(x, dim=1, out=y) of a (rows, width)
                           float32 tensor: the prefix sum along each row
    torch_sort:f32:<asc|desc>:<n>
                           torch.sort(x, descending=..., out=(v, i)) of n
                           float32 keys: the sorted values and their indices
    sort_rows:f32:desc:<rows>:<width>
                           torch.sort(x, dim=1, descending=True, out=(v, i))
                           of a (rows, width) float32 tensor: each row sorted
    topk:f32:<rows>:<width>:<k>
                           torch.topk(x, k, dim=1, largest=True, sorted=True,
                           out=(v, i)): the k largest of each row, in order
    argmax:f32:<rows>:<width>
                           torch.argmax(x, dim=1, out=i): the column of each
                           row's largest value (its first, on ties)

The keys of the last four are peers.cu's sort keys (its header, and the Rust
sort bench, make the same): element i (row-major, i = row * width + column)
is (h >> 40) * 2^-24 * 2 - 1 of h = splitmix64(i), SplitMix64's finaliser of
i + 0x9E3779B97F4A7C15: uniform in [-1, 1), exact in float32. They are made
with numpy on the host (not timed) and copied to the device.

For every case, in order, one JSON object on its own line of stdout:
    {"case":"transpose:u8:8192:8192","peer":"torch .t().contiguous()","ms":0.387000,"ok":true}
    {"case":"...","peer":"...","error":"<message>"}
"ms" is the median time of one launch; "ok" says whether spot checks of the
timed result matched. Diagnostics go to stderr only. Exit status: 0 when every
case was measured (whatever its "ok"), 1 when some case printed an error, 2 on
a usage error.

Timing, as in the Rust harness: the inputs are rotated among enough device
copies that together they are at least twice the L2 cache (1 to 4 copies);
warm-up launches for at least WARPSPEED_WARMUP_MS milliseconds (200 without
it; 3 at the least); then `reps` launches enqueued back to back on one
non-default stream, each between its own pair of CUDA events, with a single
synchronisation at the end; the result is the median of the `reps` times.
Unlike the Rust harness and peers.cu, no kernel holds the stream while the
launches are queued: every case here runs for 50 µs or more, long enough
that the queue stays ahead of the GPU (the hold matters for launches of a
few µs). The cumsum cases do so only from about 2^24 values (a launch reads
and writes each once), argmax likewise (it reads each once): give them no
fewer, or their times include the host's launch latency.
"""

import json
import os
import sys
import time

PEER = "torch .t().contiguous()"
CONV1D_PEER = "cuDNN (torch conv1d)"
CUMSUM_PEER = "torch.cumsum"
CUMSUM_ROWS_PEER = "torch.cumsum(dim=1)"
SORT_PEER = "torch.sort"
SORT_ROWS_PEER = "torch.sort(dim=1)"
TOPK_PEER = "torch.topk"
ARGMAX_PEER = "torch.argmax(dim=1)"

# Launches before timing starts, at the least (the Rust harness's WARMUP).
WARMUP = 3

# The warm-up goes on, WARMUP_GROUP launches at a time, until this many
# seconds have passed since it began: WARPSPEED_WARMUP_MS (the Rust harness
# passes its own, Bench::warmup), else the harness's default WARMUP_TIME,
# whose doc says why.
WARMUP_SECONDS = float(os.environ.get("WARPSPEED_WARMUP_MS", "200")) / 1e3

# Launches between two looks at the warm-up's clock.
WARMUP_GROUP = 8

USAGE = ("usage: torch_peers.py <reps> <case>...\n"
         "cases: transpose:<u8|f32>:<w>:<h>, conv1d:<n>:<taps>, cumsum:<f32|i32|i64>:<n>, "
         "cumsum_rows:f32:<rows>:<width>, torch_sort:f32:<asc|desc>:<n>, "
         "sort_rows:f32:desc:<rows>:<width>, topk:f32:<rows>:<width>:<k>, argmax:f32:<rows>:<width>\n")


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
    """Median milliseconds of `reps` launches after warm-up (WARMUP launches
    or WARMUP_SECONDS of them, whichever lasts longer).

    `launch(turn)` enqueues launch number `turn` (0, 1, 2, ... across warm-up
    and timed launches) on the current stream. Every timed launch sits between
    its own pair of events and all are enqueued back to back before one final
    synchronisation, so the GPU does not wait for the host between launches.
    """
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    stops = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    turn = 0
    with torch.cuda.stream(stream):
        begin = time.monotonic()
        for _ in range(WARMUP):
            launch(turn)
            turn += 1
        torch.cuda.synchronize()
        while time.monotonic() - begin < WARMUP_SECONDS:
            for _ in range(WARMUP_GROUP):
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


def conv1d_case(torch, reps, n, taps):
    """F.conv1d(x, w, padding=taps // 2) of a (1, 1, n) signal: output i is
    sum_j x[i - r + j] * w[j], r = taps // 2, zero outside the signal (torch's
    conv1d is a correlation: the weight is not reversed). Spot-checked against
    a float64 CPU sum of the same products, within (taps + 2) * 2^-24 *
    sum_j |x * w| (the bound of warpspeed's tests)."""
    if n == 0:
        raise Failure("n must be positive")
    if taps % 2 == 0 or taps == 0:
        raise Failure(f"conv1d with padding taps // 2 keeps the length only for odd taps, not {taps}")
    if taps > n:
        raise Failure("taps must not exceed n")
    torch.backends.cudnn.allow_tf32 = False
    r = taps // 2
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        # The values of warpspeed's bench: hash(i) / 1000 - 0.5 and
        # ((7 j + 3) % 17) / 17 - 0.5.
        index = torch.arange(n, device="cuda", dtype=torch.int64)
        signal = ((index * 2654435761) % 1000).to(torch.float32) / 1000.0 - 0.5
        del index
        taps_index = torch.arange(taps, device="cuda", dtype=torch.int64)
        weight = ((taps_index * 7 + 3) % 17).to(torch.float32) / 17.0 - 0.5
        weight = weight.view(1, 1, taps)
        signal = signal.view(1, 1, n)
        copies = copies_for(torch, n * 4)
        inputs = [signal] + [signal.clone() for _ in range(copies - 1)]
        del signal
    torch.cuda.synchronize()
    log(f"{len(inputs)} input cop{'y' if len(inputs) == 1 else 'ies'}")

    result = [None]
    conv1d = torch.nn.functional.conv1d

    def launch(turn):
        result[0] = conv1d(inputs[turn % len(inputs)], weight, padding=r)

    with torch.no_grad():
        ms = median_ms(torch, stream, reps, launch)

    out = result[0]
    # The input of the last launch, as every copy holds the same values.
    x = inputs[0].view(n)
    w = weight.view(taps).double().cpu()
    spots = [0, 1, r, 255, 256, 4095 % n, 4096 % n, n // 2, max(n - r - 1, 0), n - 1]
    state = 0x9E3779B97F4A7C15
    for _ in range(16):
        state = (state * 6364136223846793005 + 1442695040888963407) % 2**64
        spots.append((state >> 11) % n)
    ok = tuple(out.shape) == (1, 1, n)
    if ok:
        got_all = out.view(n)
        for i in spots:
            lo, hi = max(i - r, 0), min(i - r + taps, n)
            window = x[lo:hi].double().cpu()
            products = window * w[lo - (i - r):hi - (i - r)]
            want = products.sum().item()
            bound = (taps + 2) * 2.0**-24 * products.abs().sum().item()
            got = got_all[i].item()
            if abs(got - want) > bound:
                log(f"output {i}: got {got}, want {want} (bound {bound})")
                ok = False
    else:
        log(f"result shape {tuple(out.shape)}, want {(1, 1, n)}")
    del inputs, out, result, x
    torch.cuda.empty_cache()
    return ms, ok


# The values of the cumsum cases repeat with this period (see cumsum_case).
CUMSUM_PERIOD = 1000


def cumsum_case(torch, reps, dtype_name, rows, width):
    """torch.cumsum along the last dimension of a (rows, width) tensor, into
    one allocated before timing (out=): cumsum:<ty>:<n> is the single row
    (rows = 1, dimension 0 of a 1D tensor), cumsum_rows the prefix sum of
    each row. Element i (row-major) is v(i) = (i * 2654435761) % 1000 as the
    float32 v(i) / 1000 in [0, 1), as integers v(i) % 16, so that running
    sums only grow (an int32 sum of 2^28 of them stays below 2^31).
    v repeats every 1000 elements, so the sum of any run of them follows
    from the period's own running sums, in Python: exact for integers, in
    double precision for floats. Spot outputs are checked against that:
    integers exactly (int32 modulo 2^32, as it wraps), float32 within 1e-3
    of it, relative (the bound of peers.cu's scans)."""
    if rows == 0 or width == 0:
        raise Failure("n, rows and width must be positive")
    n = rows * width
    dtype = {"f32": torch.float32, "i32": torch.int32, "i64": torch.int64}[dtype_name]
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        index = torch.arange(n, device="cuda", dtype=torch.int64)
        raw = (index * 2654435761) % CUMSUM_PERIOD
        del index
        if dtype_name == "f32":
            x = raw.to(torch.float32) / 1000.0
        else:
            x = (raw % 16).to(dtype)
        del raw
        x = x.view(rows, width) if rows > 1 else x.view(n)
        copies = copies_for(torch, n * x.element_size())
        inputs = [x] + [x.clone() for _ in range(copies - 1)]
        del x
        out = torch.empty_like(inputs[0])
    torch.cuda.synchronize()
    log(f"{len(inputs)} input cop{'y' if len(inputs) == 1 else 'ies'}")

    dim = inputs[0].dim() - 1
    cumsum = torch.cumsum

    def launch(turn):
        cumsum(inputs[turn % len(inputs)], dim, dtype=dtype, out=out)

    with torch.no_grad():
        ms = median_ms(torch, stream, reps, launch)

    # The period's values, made on the device as the inputs were (a float32
    # division by a scalar may be a multiplication there), and their running
    # sums: prefix[k] = v(0) + ... + v(k - 1).
    with torch.cuda.stream(stream):
        period = torch.arange(CUMSUM_PERIOD, device="cuda", dtype=torch.int64)
        period = (period * 2654435761) % CUMSUM_PERIOD
        if dtype_name == "f32":
            period = period.to(torch.float32) / 1000.0
        else:
            period = period % 16
        one_period = period.tolist()
    prefix = [0]
    for v in one_period:
        prefix.append(prefix[-1] + v)

    def sum_before(k):
        """v(0) + ... + v(k - 1), exact (integers) or double precision."""
        q, r = divmod(k, CUMSUM_PERIOD)
        return q * prefix[-1] + prefix[r]

    spots = [0, 1, n // 2, n - 1, width - 1, min(width, n - 1), max(n - width, 0)]
    state = 0x9E3779B97F4A7C15
    for _ in range(29):
        state = (state * 6364136223846793005 + 1442695040888963407) % 2**64
        spots.append((state >> 11) % n)
    flat = out.view(n)
    ok = tuple(out.shape) == tuple(inputs[0].shape) and out.dtype == dtype
    if ok:
        for i in spots:
            row_start = i - i % width
            want = sum_before(i + 1) - sum_before(row_start)
            got = flat[i].item()
            if dtype_name == "f32":
                good = abs(got - want) <= 1e-3 * want
            elif dtype_name == "i32":
                good = got == (want + 2**31) % 2**32 - 2**31
            else:
                good = got == want
            if not good:
                log(f"output {i}: got {got}, want {want}")
                ok = False
    else:
        log(f"result {tuple(out.shape)} {out.dtype}, want {tuple(inputs[0].shape)} {dtype}")
    del inputs, out, flat
    torch.cuda.empty_cache()
    return ms, ok


# Keys made on the host at a time (bounds the memory of numpy's uint64
# temporaries).
KEY_CHUNK = 1 << 24


def sort_keys(n):
    """peers.cu's f32 sort keys 0..n (the module's doc says how), as a
    float32 numpy array, with numpy itself: (numpy, keys). numpy's uint64
    arithmetic wraps modulo 2^64, as SplitMix64 wants; every step after the
    shift by 40 is exact in float32."""
    try:
        import numpy as np
    except ImportError as e:
        raise Failure(f"numpy is needed to make the sort keys: {e}") from e
    keys = np.empty(n, dtype=np.float32)
    for start in range(0, n, KEY_CHUNK):
        z = np.arange(start, min(start + KEY_CHUNK, n), dtype=np.uint64)
        z += np.uint64(0x9E3779B97F4A7C15)
        z ^= z >> np.uint64(30)
        z *= np.uint64(0xBF58476D1CE4E5B9)
        z ^= z >> np.uint64(27)
        z *= np.uint64(0x94D049BB133111EB)
        z ^= z >> np.uint64(31)
        unit = (z >> np.uint64(40)).astype(np.float32) * np.float32(2.0**-24)
        keys[start:start + z.size] = unit * np.float32(2.0) - np.float32(1.0)
    return np, keys


def key_inputs(torch, stream, keys, shape):
    """The keys on the device in `shape`, in enough copies (copies_for)."""
    with torch.cuda.stream(stream):
        x = torch.from_numpy(keys).to("cuda").view(*shape)
        copies = copies_for(torch, x.numel() * x.element_size())
        inputs = [x] + [x.clone() for _ in range(copies - 1)]
        del x
    torch.cuda.synchronize()
    log(f"{len(inputs)} input cop{'y' if len(inputs) == 1 else 'ies'}")
    return inputs


def spot_rows(rows):
    """Rows to check: both ends, the middle and some spread by the
    fixed-seed generator of the other cases' spot checks."""
    spots = {0, rows // 2, rows - 1}
    state = 0x9E3779B97F4A7C15
    for _ in range(29):
        state = (state * 6364136223846793005 + 1442695040888963407) % 2**64
        spots.add((state >> 11) % rows)
    return sorted(spots)


def ranked_matches(np, what, keys, want, got, got_index):
    """Whether `got` is `want` bit for bit and `got_index` says where each
    of its values is in `keys` (one row, or all n): indices in range, none
    twice, keys[index] == the value bit for bit. torch's sort is not
    stable, so equal keys (rare with 24 random bits) may come in either
    order; their indices are checked only thus."""
    if got.shape != want.shape or got_index.shape != want.shape:
        log(f"{what}: result {got.shape} and indices {got_index.shape}, want {want.shape}")
        return False
    ok = True
    bad = np.flatnonzero(got.view(np.uint32) != want.view(np.uint32))
    if bad.size > 0:
        i = bad[0]
        log(f"{what}: {bad.size} wrong values, the first at {i}: got {got[i]}, want {want[i]}")
        ok = False
    if got_index.size > 0 and (got_index.min() < 0 or got_index.max() >= keys.size):
        log(f"{what}: indices out of range 0..{keys.size}")
        return False
    if got_index.size > 0 and np.bincount(got_index, minlength=keys.size).max() > 1:
        log(f"{what}: an index given twice")
        ok = False
    bad = np.flatnonzero(keys[got_index].view(np.uint32) != got.view(np.uint32))
    if bad.size > 0:
        i = bad[0]
        log(f"{what}: {bad.size} indices of other values, the first at {i}: index {got_index[i]}")
        ok = False
    return ok


def torch_sort_case(torch, reps, descending, n):
    """torch.sort of n float32 keys into values and indices allocated before
    timing (out=). Checked in full: the values against numpy's sort, bit
    for bit, and the indices a permutation that gives them."""
    if n == 0:
        raise Failure("n must be positive")
    np, keys = sort_keys(n)
    stream = torch.cuda.Stream()
    inputs = key_inputs(torch, stream, keys, (n,))
    with torch.cuda.stream(stream):
        values = torch.empty_like(inputs[0])
        indices = torch.empty(n, dtype=torch.int64, device="cuda")
    torch.cuda.synchronize()
    sort = torch.sort

    def launch(turn):
        sort(inputs[turn % len(inputs)], dim=0, descending=descending, out=(values, indices))

    with torch.no_grad():
        ms = median_ms(torch, stream, reps, launch)

    want = np.sort(keys)
    if descending:
        want = want[::-1].copy()
    ok = ranked_matches(np, "torch.sort", keys, want, values.cpu().numpy(), indices.cpu().numpy())
    del inputs, values, indices
    torch.cuda.empty_cache()
    return ms, ok


def rows_case(torch, reps, kind, rows, width, k=0):
    """One operation along the rows of a (rows, width) float32 tensor of the
    sort keys, into outputs allocated before timing (out=): `sort_rows`
    torch.sort(dim=1, descending=True), `topk` torch.topk(k, dim=1,
    largest=True, sorted=True), `argmax` torch.argmax(dim=1). Sorts and
    top-k are checked on spot rows, each in full: the values against the
    first (all, or k) of numpy's descending sort of the row, bit for bit,
    and the indices as ranked_matches says; argmax on every row, against
    numpy's (the first largest on ties, as torch's)."""
    if rows == 0 or width == 0:
        raise Failure("rows and width must be positive")
    if kind == "topk" and not 1 <= k <= width:
        raise Failure("k must be in 1..=width")
    n = rows * width
    np, keys = sort_keys(n)
    stream = torch.cuda.Stream()
    inputs = key_inputs(torch, stream, keys, (rows, width))
    columns = width if kind == "sort_rows" else k
    with torch.cuda.stream(stream):
        if kind == "argmax":
            indices = torch.empty(rows, dtype=torch.int64, device="cuda")
        else:
            values = torch.empty(rows, columns, dtype=torch.float32, device="cuda")
            indices = torch.empty(rows, columns, dtype=torch.int64, device="cuda")
    torch.cuda.synchronize()

    if kind == "sort_rows":
        sort = torch.sort

        def launch(turn):
            sort(inputs[turn % len(inputs)], dim=1, descending=True, out=(values, indices))
    elif kind == "topk":
        topk = torch.topk

        def launch(turn):
            topk(inputs[turn % len(inputs)], k, dim=1, largest=True, sorted=True, out=(values, indices))
    else:
        argmax = torch.argmax

        def launch(turn):
            argmax(inputs[turn % len(inputs)], dim=1, out=indices)

    with torch.no_grad():
        ms = median_ms(torch, stream, reps, launch)

    matrix = keys.reshape(rows, width)
    if kind == "argmax":
        got = indices.cpu().numpy()
        want = matrix.argmax(axis=1)
        wrong = np.flatnonzero(got != want)
        ok = wrong.size == 0
        if not ok:
            r = wrong[0]
            log(f"argmax: {wrong.size} wrong rows, the first {r}: got {got[r]}, want {want[r]}")
        del inputs, indices
    else:
        ok = True
        for r in spot_rows(rows):
            want = np.sort(matrix[r])[::-1][:columns].copy()
            ok = ranked_matches(np, f"{kind} row {r}", matrix[r], want, values[r].cpu().numpy(),
                                indices[r].cpu().numpy()) and ok
        del inputs, values, indices
    torch.cuda.empty_cache()
    return ms, ok


def run_case(torch, reps, spec):
    fields = spec.split(":")
    if fields[0] == "transpose" and len(fields) == 4:
        if fields[1] not in ("u8", "f32"):
            raise Failure(f"unknown element type `{fields[1]}` (u8, f32)")
        return transpose_case(torch, reps, fields[1], parse_u64(fields[2], "w"), parse_u64(fields[3], "h"))
    if fields[0] == "conv1d" and len(fields) == 3:
        return conv1d_case(torch, reps, parse_u64(fields[1], "n"), parse_u64(fields[2], "taps"))
    if fields[0] == "cumsum" and len(fields) == 3:
        if fields[1] not in ("f32", "i32", "i64"):
            raise Failure(f"unknown element type `{fields[1]}` (f32, i32, i64)")
        n = parse_u64(fields[2], "n")
        return cumsum_case(torch, reps, fields[1], 1, n)
    if fields[0] == "cumsum_rows" and len(fields) == 4:
        if fields[1] != "f32":
            raise Failure("cumsum_rows supports f32 only")
        return cumsum_case(torch, reps, "f32", parse_u64(fields[2], "rows"), parse_u64(fields[3], "width"))
    if fields[0] == "torch_sort" and len(fields) == 4:
        if fields[1] != "f32":
            raise Failure("torch_sort supports f32 only")
        if fields[2] not in ("asc", "desc"):
            raise Failure(f"unknown order `{fields[2]}` (asc, desc)")
        return torch_sort_case(torch, reps, fields[2] == "desc", parse_u64(fields[3], "n"))
    if fields[0] == "sort_rows" and len(fields) == 5:
        if fields[1] != "f32" or fields[2] != "desc":
            raise Failure("sort_rows supports f32 in descending order only")
        return rows_case(torch, reps, "sort_rows", parse_u64(fields[3], "rows"), parse_u64(fields[4], "width"))
    if fields[0] == "topk" and len(fields) == 5:
        if fields[1] != "f32":
            raise Failure("topk supports f32 only")
        return rows_case(torch, reps, "topk", parse_u64(fields[2], "rows"), parse_u64(fields[3], "width"),
                         parse_u64(fields[4], "k"))
    if fields[0] == "argmax" and len(fields) == 4:
        if fields[1] != "f32":
            raise Failure("argmax supports f32 only")
        return rows_case(torch, reps, "argmax", parse_u64(fields[2], "rows"), parse_u64(fields[3], "width"))
    raise Failure("unknown case (transpose:<u8|f32>:<w>:<h>, conv1d:<n>:<taps>, cumsum:<f32|i32|i64>:<n>, "
                  "cumsum_rows:f32:<rows>:<width>, torch_sort:f32:<asc|desc>:<n>, "
                  "sort_rows:f32:desc:<rows>:<width>, topk:f32:<rows>:<width>:<k>, argmax:f32:<rows>:<width>)")


def peer_of(spec):
    kind = spec.split(":")[0]
    if kind == "transpose":
        return PEER
    if kind == "conv1d":
        return CONV1D_PEER
    if kind == "cumsum":
        return CUMSUM_PEER
    if kind == "cumsum_rows":
        return CUMSUM_ROWS_PEER
    if kind == "torch_sort":
        return SORT_PEER
    if kind == "sort_rows":
        return SORT_ROWS_PEER
    if kind == "topk":
        return TOPK_PEER
    if kind == "argmax":
        return ARGMAX_PEER
    return "unknown"


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
