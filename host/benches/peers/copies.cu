// copies: the CUDA runtime's own copies between host and device memory, the
// peer of warpspeed's interop benchmark (host/benches/interop.rs). Measurement
// tooling only: it is not part of the library and nothing links it.
//
// Build (CUDA 12 or 13):
//     nvcc -O3 copies.cu -o copies
//
// Usage:
//     copies <reps> <bytes>...
// e.g.
//     ./copies 50 1048576 16777216 268435456
//
// Device 0, one stream made by cudaStreamCreate (default flags, as the
// library's queue). Per size, in the order given, four cases, each with its
// own device buffer of `bytes` bytes and one host buffer:
//     pinned_h2d    cudaMemcpyAsync from cudaMallocHost memory to the device
//     pinned_d2h    cudaMemcpyAsync from the device to cudaMallocHost memory
//     pageable_h2d  cudaMemcpyAsync from malloc memory, then
//                   cudaStreamSynchronize
//     pageable_d2h  cudaMemcpyAsync to malloc memory, then
//                   cudaStreamSynchronize
// Each copy is timed by a pair of events on the stream: start recorded, the
// copy (and for the pageable ones the wait, as the library's copy_from_host
// and copy_to_host wait), stop recorded, cudaEventSynchronize on stop. The
// warm-up runs at least 3 copies and goes on until WARPSPEED_WARMUP_MS
// milliseconds (200 without it) have passed; then `reps` timed copies, and
// one JSON object on its own line of stdout:
//     {"case":"pinned_h2d","bytes":16777216,"ms":1.234567}
// with ms the median (the mean of the two middle times for an even count).
//
// Each host buffer is filled with a pattern before its uploads and zeroed
// before its downloads, which must bring the pattern back: a mismatch exits
// 1. Diagnostics go to stderr. Exit status: 0 on success, 1 on a CUDA or
// check failure, 2 on a usage error.

#include <cuda_runtime.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

// ---------------------------------------------------------------------------
// Errors: every CUDA return code is checked
// ---------------------------------------------------------------------------

[[noreturn]] void fail_cuda(const char* file, int line, const char* call, cudaError_t status) {
    std::fprintf(stderr, "%s:%d: %s: %s (%s)\n", file, line, call, cudaGetErrorName(status),
                 cudaGetErrorString(status));
    std::exit(1);
}

#define CUDA_CHECK(call)                                                                           \
    do {                                                                                           \
        cudaError_t status_ = (call);                                                              \
        if (status_ != cudaSuccess) fail_cuda(__FILE__, __LINE__, #call, status_);                 \
    } while (0)

// ---------------------------------------------------------------------------
// Arguments
// ---------------------------------------------------------------------------

[[noreturn]] void usage(const char* msg) {
    std::fprintf(stderr,
                 "%s\nusage: copies <reps> <bytes>...\n"
                 "  reps: timed copies per case (at least 1); bytes: sizes (each positive)\n"
                 "  WARPSPEED_WARMUP_MS: least warm-up per case in milliseconds (200)\n",
                 msg);
    std::exit(2);
}

/// A positive decimal integer, or a usage error naming `what`.
uint64_t parse_positive(const char* s, const char* what) {
    if (s[0] < '0' || s[0] > '9') usage(what);
    errno = 0;
    char* end = nullptr;
    unsigned long long v = std::strtoull(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v == 0) usage(what);
    return static_cast<uint64_t>(v);
}

/// WARPSPEED_WARMUP_MS, else 200.
double warmup_ms() {
    const char* ms = std::getenv("WARPSPEED_WARMUP_MS");
    if (ms == nullptr) return 200.0;
    char* end = nullptr;
    double v = std::strtod(ms, &end);
    if (end == ms || *end != '\0' || !(v >= 0.0)) {
        usage("WARPSPEED_WARMUP_MS is not a number of milliseconds");
    }
    return v;
}

/// The median of `v` (sorted in place); the mean of the two middle values
/// for an even count.
double median(std::vector<double>& v) {
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// ---------------------------------------------------------------------------
// Timing
// ---------------------------------------------------------------------------

/// The stream and the pair of events every copy is timed with.
struct Timer {
    cudaStream_t stream = nullptr;
    cudaEvent_t start = nullptr;
    cudaEvent_t stop = nullptr;
    double warmup_ms = 200.0;

    Timer() {
        CUDA_CHECK(cudaStreamCreate(&stream));
        CUDA_CHECK(cudaEventCreate(&start));
        CUDA_CHECK(cudaEventCreate(&stop));
    }

    ~Timer() {
        cudaEventDestroy(stop);
        cudaEventDestroy(start);
        cudaStreamDestroy(stream);
    }

    /// Milliseconds between the events recorded before and after `copy`
    /// (which enqueues on `stream`, and may wait for it).
    template <class Copy>
    double once(Copy&& copy) const {
        CUDA_CHECK(cudaEventRecord(start, stream));
        copy();
        CUDA_CHECK(cudaEventRecord(stop, stream));
        CUDA_CHECK(cudaEventSynchronize(stop));
        float ms = 0.0f;
        CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
        return static_cast<double>(ms);
    }

    /// The median of `reps` timed copies, after the warm-up.
    template <class Copy>
    double median_ms(size_t reps, Copy&& copy) const {
        const auto begun = std::chrono::steady_clock::now();
        for (int done = 0;; ++done) {
            const std::chrono::duration<double, std::milli> spent =
                std::chrono::steady_clock::now() - begun;
            if (done >= 3 && spent.count() >= warmup_ms) break;
            once(copy);
        }
        std::vector<double> times(reps);
        for (size_t r = 0; r < reps; ++r) times[r] = once(copy);
        return median(times);
    }
};

void report(const char* name, size_t bytes, double ms) {
    std::printf("{\"case\":\"%s\",\"bytes\":%zu,\"ms\":%.6f}\n", name, bytes, ms);
    std::fflush(stdout);
}

/// Byte `i` of the pattern `seed` fills a host buffer with.
unsigned char pattern(size_t i, unsigned seed) {
    return static_cast<unsigned char>((i * 131 + seed) >> 3);
}

void fill(unsigned char* host, size_t bytes, unsigned seed) {
    for (size_t i = 0; i < bytes; ++i) host[i] = pattern(i, seed);
}

/// Whether `host` holds the pattern `seed`; says which byte differs if not.
bool holds(const unsigned char* host, size_t bytes, unsigned seed, const char* name) {
    for (size_t i = 0; i < bytes; ++i) {
        if (host[i] != pattern(i, seed)) {
            std::fprintf(stderr, "check failed: %s of %zu bytes: byte %zu is %u, expected %u\n", name,
                         bytes, i, host[i], pattern(i, seed));
            return false;
        }
    }
    return true;
}

/// The upload and the download of `host` (pinned or not) through `dev`: the
/// uploads from the pattern `seed`, the downloads into zeroed memory, which
/// must hold the pattern afterwards. False on a check failure.
bool both_ways(const Timer& timer, size_t reps, size_t bytes, unsigned char* host, void* dev,
               bool pinned, unsigned seed) {
    const char* h2d = pinned ? "pinned_h2d" : "pageable_h2d";
    const char* d2h = pinned ? "pinned_d2h" : "pageable_d2h";
    cudaStream_t stream = timer.stream;
    fill(host, bytes, seed);
    double up = timer.median_ms(reps, [&] {
        CUDA_CHECK(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, stream));
        if (!pinned) CUDA_CHECK(cudaStreamSynchronize(stream));
    });
    report(h2d, bytes, up);
    std::memset(host, 0, bytes);
    double down = timer.median_ms(reps, [&] {
        CUDA_CHECK(cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, stream));
        if (!pinned) CUDA_CHECK(cudaStreamSynchronize(stream));
    });
    CUDA_CHECK(cudaStreamSynchronize(stream));
    if (!holds(host, bytes, seed, d2h)) return false;
    report(d2h, bytes, down);
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) usage("missing arguments");
    uint64_t reps64 = parse_positive(argv[1], "reps must be a positive integer");
    if (reps64 > 100000000) usage("reps is too large");
    const size_t reps = static_cast<size_t>(reps64);
    std::vector<size_t> sizes;
    for (int i = 2; i < argc; ++i) {
        sizes.push_back(static_cast<size_t>(parse_positive(argv[i], "bytes must be a positive integer")));
    }

    CUDA_CHECK(cudaSetDevice(0));
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    int driver = 0, runtime = 0;
    CUDA_CHECK(cudaDriverGetVersion(&driver));
    CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    std::fprintf(stderr, "copies: %s, driver %d.%d, runtime %d.%d\n", prop.name, driver / 1000,
                 driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10);

    Timer timer;
    timer.warmup_ms = warmup_ms();
    for (size_t bytes : sizes) {
        void* dev = nullptr;
        CUDA_CHECK(cudaMalloc(&dev, bytes));
        // Pinned first, then pageable, as the Rust side.
        unsigned char* pinned = nullptr;
        CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&pinned), bytes));
        bool ok = both_ways(timer, reps, bytes, pinned, dev, true, 1);
        CUDA_CHECK(cudaFreeHost(pinned));
        if (!ok) return 1;
        unsigned char* pageable = static_cast<unsigned char*>(std::malloc(bytes));
        if (pageable == nullptr) {
            std::fprintf(stderr, "malloc of %zu bytes failed\n", bytes);
            return 1;
        }
        ok = both_ways(timer, reps, bytes, pageable, dev, false, 2);
        std::free(pageable);
        CUDA_CHECK(cudaFree(dev));
        if (!ok) return 1;
    }
    return 0;
}
