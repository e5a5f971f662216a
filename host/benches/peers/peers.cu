// peers: NVIDIA's libraries timed exactly as warpspeed's ladder benchmark times
// its own kernels (host/benches/ladder/harness.rs), so that the two can be
// compared row for row on the same GPU in the same run.
//
// Build (CUDA 12 or 13; CUB and Thrust are header-only):
//     nvcc -O3 -std=c++17 -arch=native peers.cu -lcublas -lcublasLt -lcurand -o peers
// Without cuRAND (its header or library missing), add -DPEERS_NO_CURAND and
// drop -lcurand: the curand cases then report that cuRAND is not available.
// With CUTLASS's headers (the nvidia-cutlass wheel's cutlass_library/source),
// add -DPEERS_CUTLASS -I<source>/include for the sgemm_3xtf32_cutlass case.
//
// Usage:
//     peers <reps> <case>...
//
// Cases:
//     reduce:<sum|min|max>:<f32|i32|u32>:<n>  CUB DeviceReduce::Sum / Min / Max of n values
//     geam:f32:<w>:<h>                        cuBLAS Sgeam: transpose of a row-major h x w matrix
//     histogram:<data>:<n>                    CUB DeviceHistogram::HistogramEven, 256 bins of n bytes;
//                                             data: uniform, one_bin, alternating, normal, sorted
//     scan:<inclusive|exclusive>:<sum|min|max>:<f32|i32|u32|u64>:<n>
//                                             CUB DeviceScan of n values: InclusiveSum / ExclusiveSum,
//                                             InclusiveScan / ExclusiveScan with cuda::minimum / maximum
//                                             (exclusive: the operator's identity first)
//     scan_rows:sum:f32:<rows>:<width>        CUB DeviceScan::InclusiveSumByKey, key i / width: the
//                                             inclusive sum along each row of a row-major rows x width matrix
//     select_flagged:<u32|f32>:<n>            CUB DeviceSelect::Flagged, u8 flags keeping half at random
//     select_if:<u32|f32>:<n>                 CUB DeviceSelect::If, x > the middle of the values' range (half)
//     sort_keys:<u32|i32|f32|u64>:<asc|desc>:<n>
//                                             CUB DeviceRadixSort::SortKeys / SortKeysDescending of n keys,
//                                             the (const in, out) form: the input is left as it was
//     sort_pairs:<u32|f32>:<asc|desc>:<n>     CUB DeviceRadixSort::SortPairs / SortPairsDescending, n keys
//                                             with u32 values, value i = i (the stable sort's permutation)
//     segmented_sort:f32:desc:<rows>:<width>  CUB DeviceSegmentedSort::SortPairsDescending: each row of a
//                                             row-major rows x width f32 matrix sorted on its own, with u32
//                                             values, the column (0..width); segment r is [r * width, (r + 1) * width)
//     sgemm:<m>:<n>:<k>                       cuBLAS Sgemm, FP32 (no TF32): row-major C (m x n) = A (m x k) . B (k x n)
//     sgemm_tf32:<m>:<n>:<k>                  the same on the TF32 tensor cores, cuBLAS at its best
//     sgemm_batched:<count>:<m>:<n>:<k>       cuBLAS SgemmStridedBatched, FP32 (no TF32): count products
//                                             C_z = A_z . B_z of sgemm's shapes, each operand's matrices
//                                             packed one after the other (strides m*k, k*n, m*n)
//     sgemm_batched_tf32:<count>:<m>:<n>:<k>  the same on the TF32 tensor cores, the faster of
//                                             SgemmStridedBatched and GemmStridedBatchedEx
//     sgemm_3xtf32_cutlass:<m>:<n>:<k>        CUTLASS's 3xTF32 (OpMultiplyAddFastF32), the faster of B
//                                             as stored and B transposed first (untimed)
//     curand:<gen>:<dist>:<n>                 cuRAND host API, n values of one distribution;
//                                             gen: philox (PHILOX4_32_10), xorwow, mrg32k3a;
//                                             dist: u32 (curandGenerate), uniform, normal and
//                                             log_normal (mean 0, stddev 1), poisson (lambda 3.5)
//     memcpy:<bytes>                          cudaMemcpyAsync, device to device
//
// The sort keys (the Rust sort bench makes the same): element i (row-major
// index i = row * width + column in the segmented case) from
// h = splitmix64(i), SplitMix64's finaliser of i + 0x9E3779B97F4A7C15: u64 h,
// u32 its low 32 bits, i32 the same bits as a signed integer, f32
// (float)(h >> 40) * 2^-24 * 2 - 1, uniform in [-1, 1) and exact in f32
// (never -0.0 or NaN).
//
// For every case, in order, one JSON object on its own line of stdout:
//     {"case":"reduce:sum:f32:16777216","peer":"CUB DeviceReduce::Sum","ms":0.031300,"ok":true}
//     {"case":"...","peer":"...","error":"<message>"}
// "ms" is the median time of one launch; "ok" says whether the result of the
// timed launches matched a host reference. Diagnostics go to stderr only.
// Exit status: 0 when every case was measured (whatever its "ok"), 1 when some
// case printed an error, 2 on a usage error.
//
// Timing, as in the Rust harness: the inputs are rotated among enough device
// copies that together they are at least twice the L2 cache (1 to 4 copies),
// so that no launch reads what the previous one left in L2; warm-up launches
// for at least WARPSPEED_WARMUP_MS milliseconds (200 without it; 3 launches
// at the least); then `reps` launches on one non-default stream, each
// between its own pair of events, enqueued in windows of up to 32 behind a kernel that
// holds the stream until the window is queued (so that host launch latency
// is never timed); the result is the median of the `reps` elapsed times. All
// memory a launch needs (library scratch, outputs, the cuBLAS handle) exists
// before the timing starts, and everything of a case is freed when it ends.
// One exception: segmented_sort waits for its own stream inside the call
// (CUB copies sizes back to the host), so it is timed without the hold, its
// own host round trip included (segmented_sort_case says more).

#include <cub/device/device_histogram.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_sort.cuh>
#include <cub/device/device_select.cuh>
#include <cub/version.cuh>
#include <cublasLt.h>
#include <cublas_v2.h>
#if CUB_VERSION >= 200800
#include <cuda/functional>  // cuda::minimum, cuda::maximum
#endif
#include <cuda/std/functional>
#include <cuda_runtime.h>
#ifndef PEERS_NO_CURAND
#include <curand.h>
#endif
#ifdef PEERS_CUTLASS
#include <cutlass/cutlass.h>
#include <cutlass/gemm/device/gemm.h>
#endif
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

/// A case that could not be measured; its message becomes the "error" field.
struct Failure : std::runtime_error {
    using std::runtime_error::runtime_error;
};

void check(cudaError_t status, const std::string& what) {
    if (status != cudaSuccess) {
        throw Failure(what + ": " + cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")");
    }
}

void check(cublasStatus_t status, const std::string& what) {
    if (status != CUBLAS_STATUS_SUCCESS) {
        throw Failure(what + ": " + cublasGetStatusName(status) + " (" + cublasGetStatusString(status) + ")");
    }
}

// ---------------------------------------------------------------------------
// Owners of CUDA resources: each frees its resource when it goes out of scope,
// also when a case fails half-way.
// ---------------------------------------------------------------------------

class DeviceMemory {
public:
    explicit DeviceMemory(uint64_t bytes) {
        check(cudaMalloc(&ptr_, bytes), "cudaMalloc(" + std::to_string(bytes) + " bytes)");
    }
    DeviceMemory(DeviceMemory&& other) noexcept : ptr_(std::exchange(other.ptr_, nullptr)) {}
    DeviceMemory(const DeviceMemory&) = delete;
    DeviceMemory& operator=(const DeviceMemory&) = delete;
    DeviceMemory& operator=(DeviceMemory&&) = delete;
    ~DeviceMemory() {
        if (ptr_ != nullptr) {
            cudaFree(ptr_);
        }
    }
    template <class T>
    T* as() const {
        return static_cast<T*>(ptr_);
    }
    void* get() const { return ptr_; }

private:
    void* ptr_ = nullptr;
};

class Stream {
public:
    // Default flags, as the Rust context's stream (StreamFlags::DEFAULT).
    Stream() { check(cudaStreamCreate(&stream_), "cudaStreamCreate"); }
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    ~Stream() { cudaStreamDestroy(stream_); }
    cudaStream_t get() const { return stream_; }

private:
    cudaStream_t stream_ = nullptr;
};

class Event {
public:
    Event() { check(cudaEventCreate(&event_), "cudaEventCreate"); }
    Event(Event&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;
    Event& operator=(Event&&) = delete;
    ~Event() {
        if (event_ != nullptr) {
            cudaEventDestroy(event_);
        }
    }
    cudaEvent_t get() const { return event_; }

private:
    cudaEvent_t event_ = nullptr;
};

/// Two words of page-locked host memory, mapped into the device's address
/// space: `[release, timed_out]` of the hold kernel below.
class HoldFlag {
public:
    HoldFlag() {
        void* words = nullptr;
        check(cudaHostAlloc(&words, 2 * sizeof(unsigned), cudaHostAllocMapped), "cudaHostAlloc(hold flag)");
        words_ = static_cast<unsigned*>(words);
        void* device = nullptr;
        const cudaError_t status = cudaHostGetDevicePointer(&device, words, 0);
        if (status != cudaSuccess) {
            cudaFreeHost(words);
            check(status, "cudaHostGetDevicePointer(hold flag)");
        }
        device_ = static_cast<unsigned*>(device);
    }
    HoldFlag(const HoldFlag&) = delete;
    HoldFlag& operator=(const HoldFlag&) = delete;
    ~HoldFlag() { cudaFreeHost(words_); }
    /// The words as the host sees them; volatile, as the device writes and
    /// reads them while the host does.
    volatile unsigned* host() const { return words_; }
    unsigned* device() const { return device_; }

private:
    unsigned* words_ = nullptr;
    unsigned* device_ = nullptr;
};

class Blas {
public:
    explicit Blas(cudaStream_t stream, cublasMath_t math = CUBLAS_DEFAULT_MATH) {
        check(cublasCreate(&handle_), "cublasCreate");
        try {
            check(cublasSetStream(handle_, stream), "cublasSetStream");
            check(cublasSetMathMode(handle_, math), "cublasSetMathMode");
        } catch (...) {
            cublasDestroy(handle_);
            throw;
        }
    }
    Blas(const Blas&) = delete;
    Blas& operator=(const Blas&) = delete;
    ~Blas() { cublasDestroy(handle_); }
    cublasHandle_t get() const { return handle_; }

private:
    cublasHandle_t handle_ = nullptr;
};

// ---------------------------------------------------------------------------
// The device, its stream and the timing method
// ---------------------------------------------------------------------------

/// Longest hold, as the Rust harness's `hold::TIMEOUT_NS`.
constexpr unsigned long long kHoldTimeoutNs = 10'000'000'000ull;

/// Timed launches queued behind one hold (the Rust harness's `hold::WINDOW`).
constexpr int kWindow = 32;

/// Holds its stream until the host sets `flag[0]`, so that a window of timed
/// launches is queued before any of them runs (the Rust harness's
/// `hold.rs` says why); gives up after `timeout_ns` and sets `flag[1]`.
__global__ void hold_kernel(volatile unsigned* flag, unsigned long long timeout_ns) {
    unsigned long long start;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    while (flag[0] == 0) {
        __nanosleep(1000);
        unsigned long long now;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        if (now - start >= timeout_ns) {
            flag[1] = 1;
            return;
        }
    }
}

/// Launches before timing starts, at the least (the Rust harness's WARMUP).
constexpr int kWarmup = 3;

/// The warm-up goes on, `kWarmupGroup` launches at a time, until this many
/// milliseconds have passed since it began: `WARPSPEED_WARMUP_MS` (the Rust
/// harness passes its own, `Bench::warmup`), else the harness's default
/// `WARMUP_TIME`, whose doc says why.
constexpr double kDefaultWarmupMs = 200.0;

/// Launches between two looks at the warm-up's clock.
constexpr int kWarmupGroup = 8;

/// Makes device 0 current (the Rust benches use device 0) and reads its
/// properties.
cudaDeviceProp select_device() {
    check(cudaSetDevice(0), "cudaSetDevice(0)");
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    return prop;
}

struct Device {
    cudaDeviceProp prop;  // first: the stream is created on the device it selects
    Stream stream;
    HoldFlag hold;

    /// The least warm-up of a case, in milliseconds (`kDefaultWarmupMs`).
    double warmup_ms = kDefaultWarmupMs;

    Device() : prop(select_device()) {
        if (const char* ms = std::getenv("WARPSPEED_WARMUP_MS")) {
            char* end = nullptr;
            warmup_ms = std::strtod(ms, &end);
            if (end == ms || *end != '\0' || !(warmup_ms >= 0.0)) {
                throw Failure(std::string("WARPSPEED_WARMUP_MS is not a number of milliseconds: ") + ms);
            }
        }
        std::fprintf(stderr, "peers: %s (compute capability %d.%d, %d SMs, L2 %d MiB)\n", prop.name, prop.major,
                     prop.minor, prop.multiProcessorCount, prop.l2CacheSize >> 20);
    }

    /// Copies of an input of `bytes` bytes that together are at least twice
    /// the L2 cache, clamped to 1..4 (the Rust harness's `device_copies`).
    uint64_t copies_for(uint64_t bytes) const {
        const uint64_t twice_l2 = 2 * static_cast<uint64_t>(prop.l2CacheSize);
        const uint64_t per_copy = std::max<uint64_t>(bytes, 1);
        return std::clamp<uint64_t>((twice_l2 + per_copy - 1) / per_copy, 1, 4);
    }

    /// Median milliseconds of `reps` launches after at least `kWarmup`
    /// warm-up ones and at least `warmup_ms` of them.
    /// `launch(turn)` enqueues launch number `turn` (0, 1, 2, ... across
    /// warm-up and timed launches) on `stream` and must not synchronise,
    /// unless `held` is false.
    ///
    /// Every timed launch sits between its own pair of events; they are
    /// enqueued in windows of up to `kWindow` behind `hold_kernel`, released
    /// once the window is queued: the GPU runs them back to back, so host
    /// launch latency is never counted, however short the launch. With
    /// `held` false, for a library call that waits for its own stream (it
    /// could never start behind the hold), there is no hold: each launch is
    /// timed from its start event to its stop event as it is enqueued, the
    /// host round trips inside the call included, as every caller pays them.
    template <class Launch>
    double median_ms(int reps, Launch&& launch, bool held = true) const {
        int turn = 0;
        const auto begin = std::chrono::steady_clock::now();
        for (int i = 0; i < kWarmup; ++i) {
            launch(turn++);
        }
        check(cudaDeviceSynchronize(), "synchronise after warm-up");
        while (std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count() < warmup_ms) {
            for (int i = 0; i < kWarmupGroup; ++i) {
                launch(turn++);
            }
            check(cudaDeviceSynchronize(), "synchronise during warm-up");
        }
        std::vector<double> times;
        times.reserve(reps);
        for (int done = 0; done < reps;) {
            const int window = std::min(kWindow, reps - done);
            std::vector<Event> starts(window);
            std::vector<Event> stops(window);
            hold.host()[0] = 0;
            hold.host()[1] = 0;
            if (held) {
                hold_kernel<<<1, 1, 0, stream.get()>>>(hold.device(), kHoldTimeoutNs);
                check(cudaGetLastError(), "hold kernel launch");
            }
            try {
                for (int r = 0; r < window; ++r) {
                    check(cudaEventRecord(starts[r].get(), stream.get()), "cudaEventRecord(start)");
                    launch(turn++);
                    check(cudaEventRecord(stops[r].get(), stream.get()), "cudaEventRecord(stop)");
                }
            } catch (...) {
                hold.host()[0] = 1;  // nothing stays held
                cudaDeviceSynchronize();
                throw;
            }
            hold.host()[0] = 1;
            check(cudaDeviceSynchronize(), "synchronise after timed launches");
            if (hold.host()[1] != 0) {
                throw Failure("a timed launch waited for its own stream: the hold timed out");
            }
            for (int r = 0; r < window; ++r) {
                float ms = 0.0f;
                check(cudaEventElapsedTime(&ms, starts[r].get(), stops[r].get()), "cudaEventElapsedTime");
                times.push_back(ms);
            }
            done += window;
        }
        std::sort(times.begin(), times.end());
        return times[times.size() / 2];
    }
};

/// What one measured case reports.
struct Outcome {
    double ms;
    bool ok;
};

// ---------------------------------------------------------------------------
// Input values: the same functions fill the device buffers and give the host
// reference, so both see exactly the same numbers (and the Rust benches use
// the same formulas).
// ---------------------------------------------------------------------------

constexpr uint64_t kHash = 2654435761ull;

struct F32Values {
    __host__ __device__ float operator()(uint64_t i) const {
        return static_cast<float>((i * kHash) % 1000) / 1000.0f - 0.5f;
    }
};

struct I32Values {
    __host__ __device__ int32_t operator()(uint64_t i) const {
        return static_cast<int32_t>((i * kHash) % 2001) - 1000;
    }
};

struct U32Values {
    __host__ __device__ uint32_t operator()(uint64_t i) const { return static_cast<uint32_t>(I32Values{}(i)); }
};

/// Matrix elements: their own index, exact in f32 below 2^24.
struct IndexValues {
    __host__ __device__ float operator()(uint64_t i) const { return static_cast<float>(i % 16777216); }
};

struct ByteValues {
    __host__ __device__ uint8_t operator()(uint64_t i) const { return static_cast<uint8_t>((i * 31) % 251); }
};

template <class T, class Values>
__global__ void fill_kernel(T* out, uint64_t n, Values values) {
    const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
    for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        out[i] = values(i);
    }
}

/// Fills `out[0..n)` with `values(i)` on the device (not timed).
template <class T, class Values>
void fill(const Device& device, T* out, uint64_t n, Values values) {
    constexpr unsigned kThreads = 256;
    const uint64_t blocks = std::min<uint64_t>((n + kThreads - 1) / kThreads, 1u << 16);
    fill_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, device.stream.get()>>>(out, n, values);
    check(cudaGetLastError(), "fill kernel launch");
}

/// `copies_for(n * sizeof(T))` device buffers of n values each, filled.
template <class T, class Values>
std::vector<DeviceMemory> device_copies(const Device& device, uint64_t n, Values values) {
    const uint64_t bytes = n * sizeof(T);
    const uint64_t copies = device.copies_for(bytes);
    std::vector<DeviceMemory> inputs;
    inputs.reserve(copies);
    for (uint64_t c = 0; c < copies; ++c) {
        inputs.emplace_back(bytes);
        fill(device, inputs.back().as<T>(), n, values);
    }
    check(cudaStreamSynchronize(device.stream.get()), "synchronise after filling inputs");
    return inputs;
}

/// A few positions in [0, n): both ends, the middle and some spread by a
/// fixed-seed generator, for spot checks.
std::vector<uint64_t> spot_positions(uint64_t n) {
    std::vector<uint64_t> positions = {0, n / 2, n - 1};
    uint64_t state = 0x9e3779b97f4a7c15ull;
    for (int k = 0; k < 29; ++k) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        positions.push_back((state >> 11) % n);
    }
    return positions;
}

template <class T>
T read_back(const T* device_ptr) {
    T value{};
    check(cudaMemcpy(&value, device_ptr, sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy to host");
    return value;
}

// ---------------------------------------------------------------------------
// reduce:<op>:<ty>:<n>
// ---------------------------------------------------------------------------

enum class Op { Sum, Min, Max };

/// One CUB call; with `temp == nullptr` it only sets `temp_bytes`.
template <class T>
cudaError_t cub_reduce(Op op, void* temp, size_t& temp_bytes, const T* in, T* out, int n, cudaStream_t stream) {
    switch (op) {
    case Op::Sum:
        return cub::DeviceReduce::Sum(temp, temp_bytes, in, out, n, stream);
    case Op::Min:
        return cub::DeviceReduce::Min(temp, temp_bytes, in, out, n, stream);
    case Op::Max:
        return cub::DeviceReduce::Max(temp, temp_bytes, in, out, n, stream);
    }
    return cudaErrorInvalidValue;
}

/// Whether `got` is the reduction of `values(0..n)`: integers exactly (sums
/// wrap modulo 2^32, as on the device), f32 sums within 1e-3 * sqrt(n) of a
/// double-precision sum, f32 min and max exactly.
template <class T, class Values>
bool reduction_matches(Op op, uint64_t n, Values values, T got) {
    if (op == Op::Sum) {
        if constexpr (std::is_floating_point_v<T>) {
            double want = 0.0;
            for (uint64_t i = 0; i < n; ++i) {
                want += static_cast<double>(values(i));
            }
            const bool ok = std::fabs(static_cast<double>(got) - want) <= 1e-3 * std::sqrt(static_cast<double>(n));
            if (!ok) {
                std::fprintf(stderr, "peers: sum: got %.9g, want %.9g\n", static_cast<double>(got), want);
            }
            return ok;
        } else {
            uint32_t want = 0;
            for (uint64_t i = 0; i < n; ++i) {
                want += static_cast<uint32_t>(values(i));
            }
            const bool ok = static_cast<uint32_t>(got) == want;
            if (!ok) {
                std::fprintf(stderr, "peers: sum: got %" PRIu32 ", want %" PRIu32 " (as u32)\n",
                             static_cast<uint32_t>(got), want);
            }
            return ok;
        }
    }
    T want = values(0);
    for (uint64_t i = 1; i < n; ++i) {
        want = op == Op::Min ? std::min(want, values(i)) : std::max(want, values(i));
    }
    const bool ok = got == want;
    if (!ok) {
        std::fprintf(stderr, "peers: %s: got %.9g, want %.9g\n", op == Op::Min ? "min" : "max",
                     static_cast<double>(got), static_cast<double>(want));
    }
    return ok;
}

/// Times a CUB device algorithm the way CUB is meant to be called:
/// `call(temp, bytes, input)` with a null `temp` asks how much scratch it
/// needs; that scratch is allocated once, before timing, and each timed
/// launch reads the next input copy.
template <class T, class Call>
double time_cub(const Device& device, int reps, const std::vector<DeviceMemory>& inputs, const char* what,
                Call&& call) {
    size_t temp_bytes = 0;
    check(call(nullptr, temp_bytes, inputs[0].as<T>()), "CUB temp-storage query");
    const DeviceMemory temp(temp_bytes);
    std::fprintf(stderr, "peers: %zu input cop%s, %zu bytes of CUB scratch\n", inputs.size(),
                 inputs.size() == 1 ? "y" : "ies", temp_bytes);
    return device.median_ms(reps, [&](int turn) {
        size_t bytes = temp_bytes;
        check(call(temp.get(), bytes, inputs[turn % inputs.size()].as<T>()), what);
    });
}

template <class T, class Values>
Outcome reduce_case(const Device& device, int reps, Op op, uint64_t n, Values values) {
    if (n == 0 || n > static_cast<uint64_t>(INT_MAX)) {
        throw Failure("n must be in 1..=" + std::to_string(INT_MAX));
    }
    const std::vector<DeviceMemory> inputs = device_copies<T>(device, n, values);
    const DeviceMemory out(sizeof(T));
    const cudaStream_t stream = device.stream.get();

    const double ms =
        time_cub<T>(device, reps, inputs, "CUB DeviceReduce", [&](void* temp, size_t& bytes, const T* in) {
            return cub_reduce<T>(op, temp, bytes, in, out.as<T>(), static_cast<int>(n), stream);
        });
    // The timed launches must also be right (every copy holds the same values).
    const T got = read_back(out.as<T>());
    return {ms, reduction_matches<T>(op, n, values, got)};
}

// ---------------------------------------------------------------------------
// geam:f32:<w>:<h>
// ---------------------------------------------------------------------------

/// Transposes a row-major h x w matrix (h rows of w) into a row-major w x h
/// one. cuBLAS is column-major: the row-major h x w input is a column-major
/// w x h matrix A with lda = w, and the row-major w x h output is a
/// column-major h x w matrix C with ldc = h, so C = A^T is exactly
/// cublasSgeam(OP_T, m = h, n = w). With beta = 0, B is not read; it is given
/// as C itself (ldb = ldc, OP_N), the in-place form cuBLAS documents.
Outcome geam_case(const Device& device, int reps, uint64_t w, uint64_t h) {
    if (w == 0 || h == 0 || w > static_cast<uint64_t>(INT_MAX) || h > static_cast<uint64_t>(INT_MAX)) {
        throw Failure("w and h must be in 1..=" + std::to_string(INT_MAX));
    }
    const uint64_t n = w * h;
    const std::vector<DeviceMemory> inputs = device_copies<float>(device, n, IndexValues{});
    const DeviceMemory out(n * sizeof(float));
    const Blas blas(device.stream.get());
    const float alpha = 1.0f;
    const float beta = 0.0f;
    const int m = static_cast<int>(h);
    const int cols = static_cast<int>(w);
    std::fprintf(stderr, "peers: %zu input cop%s\n", inputs.size(), inputs.size() == 1 ? "y" : "ies");

    const double ms = device.median_ms(reps, [&](int turn) {
        const float* a = inputs[turn % inputs.size()].as<float>();
        float* c = out.as<float>();
        check(cublasSgeam(blas.get(), CUBLAS_OP_T, CUBLAS_OP_N, m, cols, &alpha, a, cols, &beta, c, m, c, m),
              "cublasSgeam");
    });

    // Spot checks: element (x, y) of the input, at [y * w + x], must be at
    // [x * h + y] of the output.
    bool ok = true;
    std::vector<std::pair<uint64_t, uint64_t>> spots = {
        {0, 0}, {1 % w, 0}, {0, 1 % h}, {w - 1, 0}, {0, h - 1}, {w - 1, h - 1}, {w - 1, std::min<uint64_t>(3, h - 1)},
        {std::min<uint64_t>(17, w - 1), h - 1 - std::min<uint64_t>(1, h - 1)},
    };
    for (uint64_t i : spot_positions(n)) {
        spots.emplace_back(i % w, i / w);
    }
    for (const auto& [x, y] : spots) {
        const float got = read_back(out.as<float>() + x * h + y);
        const float want = IndexValues{}(y * w + x);
        if (got != want) {
            std::fprintf(stderr, "peers: geam: element (%" PRIu64 ", %" PRIu64 "): got %.9g, want %.9g\n", x, y,
                         static_cast<double>(got), static_cast<double>(want));
            ok = false;
        }
    }
    return {ms, ok};
}

// ---------------------------------------------------------------------------
// histogram:<data>:<n>
// ---------------------------------------------------------------------------

/// The histogram data sets, byte for byte the formula of the Rust bench
/// (host/benches/ladder/histogram.rs, `sample`).
enum class Data { Uniform, OneBin, Alternating, Normal, Sorted };

__host__ __device__ inline uint64_t splitmix64(uint64_t x) {
    uint64_t z = x + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

struct HistogramValues {
    Data data;
    uint64_t n;
    __host__ __device__ uint8_t operator()(uint64_t i) const {
        switch (data) {
        case Data::Uniform: return static_cast<uint8_t>(splitmix64(i) >> 56);
        case Data::OneBin: return 42;
        case Data::Alternating: return i % 2 == 0 ? 17 : 230;
        case Data::Normal: {
            const uint64_t h = splitmix64(i);
            int64_t sum = 0;
            for (int k = 0; k < 4; ++k) {
                sum += static_cast<int64_t>((h >> (8 * k)) & 0xff);
            }
            return static_cast<uint8_t>(128 + (sum - 510) / 48);
        }
        default: return static_cast<uint8_t>(i * 256 / n);
        }
    }
};

Data parse_data(const std::string& text) {
    if (text == "uniform") return Data::Uniform;
    if (text == "one_bin") return Data::OneBin;
    if (text == "alternating") return Data::Alternating;
    if (text == "normal") return Data::Normal;
    if (text == "sorted") return Data::Sorted;
    throw Failure("unknown data set `" + text + "` (uniform, one_bin, alternating, normal, sorted)");
}

/// 256 bins of [0, 256) over n bytes: bin = byte. Checked exactly against
/// a host count of the same bytes.
Outcome histogram_case(const Device& device, int reps, Data data, uint64_t n) {
    if (n == 0 || n > static_cast<uint64_t>(INT_MAX)) {
        throw Failure("n must be in 1..=" + std::to_string(INT_MAX));
    }
    const HistogramValues values{data, n};
    const std::vector<DeviceMemory> inputs = device_copies<uint8_t>(device, n, values);
    const DeviceMemory counts(256 * sizeof(unsigned int));
    const cudaStream_t stream = device.stream.get();
    const int levels = 257;
    const int lower = 0;
    const int upper = 256;

    const double ms = time_cub<uint8_t>(device, reps, inputs, "CUB DeviceHistogram::HistogramEven",
                                        [&](void* temp, size_t& bytes, const uint8_t* in) {
                                            return cub::DeviceHistogram::HistogramEven(
                                                temp, bytes, in, counts.as<unsigned int>(), levels, lower,
                                                upper, static_cast<int>(n), stream);
                                        });

    std::vector<unsigned int> want(256, 0);
    for (uint64_t i = 0; i < n; ++i) {
        ++want[values(i)];
    }
    std::vector<unsigned int> got(256);
    check(cudaMemcpy(got.data(), counts.get(), 256 * sizeof(unsigned int), cudaMemcpyDeviceToHost),
          "copying the counts back");
    return {ms, got == want};
}

// ---------------------------------------------------------------------------
// scan:<kind>:<op>:<ty>:<n> and scan_rows:sum:f32:<rows>:<width>
// ---------------------------------------------------------------------------

/// The min and max operators CUB's scans are tuned for: `cuda::minimum` and
/// `cuda::maximum` since CCCL 2.8, `cub::Min` and `cub::Max` before.
#if CUB_VERSION >= 200800
using MinOp = ::cuda::minimum<>;
using MaxOp = ::cuda::maximum<>;
#else
using MinOp = cub::Min;
using MaxOp = cub::Max;
#endif

enum class ScanKind { Inclusive, Exclusive };

/// Scan inputs, from splitmix64 of the index. For sums: integers in 0..16
/// (a u32 sum of 2^28 of them stays below 2^32) and f32 in [0, 1) with 24
/// random bits (exact in f32), so that running sums only grow. For min and
/// max (and the selections): integers over the whole range of their type
/// and f32 in [-1, 1).
template <class T>
struct ScanValues {
    Op op;
    __host__ __device__ T operator()(uint64_t i) const {
        const uint64_t h = splitmix64(i);
        if constexpr (std::is_floating_point<T>::value) {
            const float unit = static_cast<float>(h >> 40) * 0x1p-24f;
            return op == Op::Sum ? unit : 2.0f * unit - 1.0f;
        } else {
            if (op == Op::Sum) {
                return static_cast<T>(h % 16);
            }
            return static_cast<T>(sizeof(T) == 8 ? h : h >> 32);
        }
    }
};

/// The identity of `op`: the initial value of an exclusive scan (what
/// ExclusiveSum itself uses for sums, 0), so that output 0 is the identity
/// and output i the scan of inputs 0..i.
template <class T>
T scan_identity(Op op) {
    switch (op) {
    case Op::Sum: return T{};
    case Op::Min:
        return std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity()
                                                    : std::numeric_limits<T>::max();
    case Op::Max:
        return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                    : std::numeric_limits<T>::lowest();
    }
    return T{};
}

/// One CUB call; with `temp == nullptr` it only sets `temp_bytes`. Sums are
/// CUB's own InclusiveSum and ExclusiveSum (initial value 0); min and max
/// the general InclusiveScan and ExclusiveScan (initial value `init`).
template <class T>
cudaError_t cub_scan(ScanKind kind, Op op, void* temp, size_t& temp_bytes, const T* in, T* out, T init, int n,
                     cudaStream_t stream) {
    const bool inclusive = kind == ScanKind::Inclusive;
    switch (op) {
    case Op::Sum:
        return inclusive ? cub::DeviceScan::InclusiveSum(temp, temp_bytes, in, out, n, stream)
                         : cub::DeviceScan::ExclusiveSum(temp, temp_bytes, in, out, n, stream);
    case Op::Min:
        return inclusive ? cub::DeviceScan::InclusiveScan(temp, temp_bytes, in, out, MinOp{}, n, stream)
                         : cub::DeviceScan::ExclusiveScan(temp, temp_bytes, in, out, MinOp{}, init, n, stream);
    case Op::Max:
        return inclusive ? cub::DeviceScan::InclusiveScan(temp, temp_bytes, in, out, MaxOp{}, n, stream)
                         : cub::DeviceScan::ExclusiveScan(temp, temp_bytes, in, out, MaxOp{}, init, n, stream);
    }
    return cudaErrorInvalidValue;
}

/// All `n` values of `buffer`, copied to the host.
template <class T>
std::vector<T> copy_back(const DeviceMemory& buffer, uint64_t n) {
    std::vector<T> values(n);
    if (n > 0) {
        check(cudaMemcpy(values.data(), buffer.get(), n * sizeof(T), cudaMemcpyDeviceToHost),
              "copying the results back");
    }
    return values;
}

/// Relative tolerance of an f32 running sum of values in [0, 1) against a
/// double-precision one. CUB adds the tiles' totals one after the other, so
/// its error grows with the number of tiles before an output (about 2^-24 of
/// the sum each, in either direction): some 2^-8 at the very worst for 2^28
/// values, about 2^-16 in practice. Far above any sound scan's error, far
/// below a wrong or missing term's (at least the value itself).
constexpr double kScanSumTolerance = 1e-3;

/// Counts an output that differs from the host reference; prints the first few.
class Mismatches {
public:
    explicit Mismatches(const char* what) : what_(what) {}
    void add(uint64_t i, double got, double want) {
        if (count_++ < kShown) {
            std::fprintf(stderr, "peers: %s: output %" PRIu64 ": got %.17g, want %.17g\n", what_, i, got, want);
        }
    }
    /// Whether there were none; says how many there were if not.
    bool none() const {
        if (count_ > 0) {
            std::fprintf(stderr, "peers: %s: %" PRIu64 " wrong outputs\n", what_, count_);
        }
        return count_ == 0;
    }

private:
    static constexpr uint64_t kShown = 5;
    const char* what_;
    uint64_t count_ = 0;
};

/// Whether `got` is the scan of `values(0..n)`, every output: integer sums
/// exactly (modulo 2^bits, wrapping as on the device), min and max exactly,
/// f32 sums within `kScanSumTolerance` of a double-precision running sum.
template <class T>
bool scan_matches(ScanKind kind, Op op, T init, ScanValues<T> values, const std::vector<T>& got) {
    const bool inclusive = kind == ScanKind::Inclusive;
    Mismatches wrong("scan");
    if constexpr (std::is_floating_point<T>::value) {
        if (op == Op::Sum) {
            double sum = 0.0;
            for (uint64_t i = 0; i < got.size(); ++i) {
                const double value = static_cast<double>(values(i));
                sum += inclusive ? value : 0.0;
                const double g = static_cast<double>(got[i]);
                if (!(std::fabs(g - sum) <= kScanSumTolerance * sum)) {
                    wrong.add(i, g, sum);
                }
                sum += inclusive ? 0.0 : value;
            }
            return wrong.none();
        }
    } else if (op == Op::Sum) {
        using U = std::make_unsigned_t<T>;
        U sum = 0;
        for (uint64_t i = 0; i < got.size(); ++i) {
            const U value = static_cast<U>(values(i));
            sum += inclusive ? value : U{0};
            if (static_cast<U>(got[i]) != sum) {
                wrong.add(i, static_cast<double>(static_cast<U>(got[i])), static_cast<double>(sum));
            }
            sum += inclusive ? U{0} : value;
        }
        return wrong.none();
    }
    T acc = init;
    for (uint64_t i = 0; i < got.size(); ++i) {
        const T value = values(i);
        const T next = op == Op::Min ? std::min(acc, value) : std::max(acc, value);
        acc = inclusive ? next : acc;
        if (got[i] != acc) {
            wrong.add(i, static_cast<double>(got[i]), static_cast<double>(acc));
        }
        acc = next;
    }
    return wrong.none();
}

/// A device-wide scan of n values of T, checked in full against the host's.
template <class T>
Outcome scan_case(const Device& device, int reps, ScanKind kind, Op op, uint64_t n) {
    if (n == 0 || n > static_cast<uint64_t>(INT_MAX)) {
        throw Failure("n must be in 1..=" + std::to_string(INT_MAX));
    }
    const ScanValues<T> values{op};
    const std::vector<DeviceMemory> inputs = device_copies<T>(device, n, values);
    const DeviceMemory out(n * sizeof(T));
    const cudaStream_t stream = device.stream.get();
    const T init = scan_identity<T>(op);
    const int items = static_cast<int>(n);

    const double ms = time_cub<T>(device, reps, inputs, "CUB DeviceScan", [&](void* temp, size_t& bytes, const T* in) {
        return cub_scan<T>(kind, op, temp, bytes, in, out.as<T>(), init, items, stream);
    });
    // The timed launches must also be right (every copy holds the same values).
    return {ms, scan_matches<T>(kind, op, init, values, copy_back<T>(out, n))};
}

/// The row of element i of a row-major matrix with rows of `width`: the key
/// of InclusiveSumByKey.
struct RowOf {
    uint32_t width;
    __host__ __device__ uint32_t operator()(uint32_t i) const { return i / width; }
};

/// The inclusive sum along each row of a row-major rows x width f32 matrix.
/// The CUB of CUDA 13 has no segmented scan: its scan by key, with key
/// i / width, restarts at every row. The keys come from a transform
/// iterator over a counting iterator, computed where they are read: no key
/// is stored, so a launch moves the same bytes as warpspeed's row scan.
/// Values as the f32 sum scan's; every output within `kScanSumTolerance`
/// of a double-precision running sum of its row.
Outcome scan_rows_case(const Device& device, int reps, uint64_t rows, uint64_t width) {
    const uint64_t limit = static_cast<uint64_t>(INT_MAX);
    if (rows == 0 || width == 0 || rows > limit || width > limit || rows * width > limit) {
        throw Failure("rows and width must be positive, rows * width at most " + std::to_string(INT_MAX));
    }
    const uint64_t n = rows * width;
    const ScanValues<float> values{Op::Sum};
    const std::vector<DeviceMemory> inputs = device_copies<float>(device, n, values);
    const DeviceMemory out(n * sizeof(float));
    const cudaStream_t stream = device.stream.get();
    const auto keys = thrust::make_transform_iterator(thrust::make_counting_iterator<uint32_t>(0),
                                                      RowOf{static_cast<uint32_t>(width)});
    const int items = static_cast<int>(n);

    const double ms = time_cub<float>(device, reps, inputs, "CUB DeviceScan::InclusiveSumByKey",
                                      [&](void* temp, size_t& bytes, const float* in) {
                                          return cub::DeviceScan::InclusiveSumByKey(temp, bytes, keys, in,
                                                                                    out.as<float>(), items,
                                                                                    ::cuda::std::equal_to<>{}, stream);
                                      });

    const std::vector<float> got = copy_back<float>(out, n);
    Mismatches wrong("scan_rows");
    for (uint64_t r = 0; r < rows; ++r) {
        double sum = 0.0;
        for (uint64_t c = 0; c < width; ++c) {
            const uint64_t i = r * width + c;
            sum += static_cast<double>(values(i));
            const double g = static_cast<double>(got[i]);
            if (!(std::fabs(g - sum) <= kScanSumTolerance * sum)) {
                wrong.add(i, g, sum);
            }
        }
    }
    return {ms, wrong.none()};
}

// ---------------------------------------------------------------------------
// select_flagged:<ty>:<n> and select_if:<ty>:<n>
// ---------------------------------------------------------------------------

enum class Select { Flagged, If };

/// DeviceSelect::Flagged's flags, one byte each: the low bit of splitmix64
/// of the index, so half of the elements at random (the values use other
/// bits of the same hash).
struct FlagValues {
    __host__ __device__ uint8_t operator()(uint64_t i) const { return static_cast<uint8_t>(splitmix64(i) & 1); }
};

/// DeviceSelect::If's predicate: above the middle of the values' range
/// (2^31 - 1 for u32, 0 for f32 in [-1, 1)), so half of them are kept.
template <class T>
struct Above {
    T threshold;
    __host__ __device__ bool operator()(const T& x) const { return x > threshold; }
};

/// Compaction of n values (those of the min and max scans: the whole range
/// of u32, f32 in [-1, 1)), keeping about half: by flag or by predicate. The
/// count goes to a device int64 (CUB's own offset type since CCCL 3.0). The
/// flags are rotated among their own copies as the values are. Checked
/// exactly: the count and every kept value, in order.
template <class T>
Outcome select_case(const Device& device, int reps, Select how, uint64_t n) {
    if (n == 0 || n > static_cast<uint64_t>(INT_MAX)) {
        throw Failure("n must be in 1..=" + std::to_string(INT_MAX));
    }
    const ScanValues<T> values{Op::Max};
    const std::vector<DeviceMemory> inputs = device_copies<T>(device, n, values);
    const std::vector<DeviceMemory> flags =
        how == Select::Flagged ? device_copies<uint8_t>(device, n, FlagValues{}) : std::vector<DeviceMemory>{};
    const DeviceMemory out(n * sizeof(T));
    const DeviceMemory count(sizeof(int64_t));
    const Above<T> above{std::is_floating_point<T>::value ? T(0) : T(INT32_MAX)};
    const cudaStream_t stream = device.stream.get();
    const int items = static_cast<int>(n);
    const char* what = how == Select::Flagged ? "CUB DeviceSelect::Flagged" : "CUB DeviceSelect::If";

    // One CUB call on the inputs of launch `turn`; with `temp == nullptr` it
    // only sets `temp_bytes`.
    const auto call = [&](void* temp, size_t& temp_bytes, int turn) {
        const T* in = inputs[turn % inputs.size()].as<T>();
        if (how == Select::Flagged) {
            return cub::DeviceSelect::Flagged(temp, temp_bytes, in, flags[turn % flags.size()].as<uint8_t>(),
                                              out.as<T>(), count.as<int64_t>(), items, stream);
        }
        return cub::DeviceSelect::If(temp, temp_bytes, in, out.as<T>(), count.as<int64_t>(), items, above, stream);
    };
    size_t temp_bytes = 0;
    check(call(nullptr, temp_bytes, 0), "CUB temp-storage query");
    const DeviceMemory temp(temp_bytes);
    std::fprintf(stderr, "peers: %zu input cop%s, %zu of the flags, %zu bytes of CUB scratch\n", inputs.size(),
                 inputs.size() == 1 ? "y" : "ies", flags.size(), temp_bytes);
    const double ms = device.median_ms(reps, [&](int turn) {
        size_t bytes = temp_bytes;
        check(call(temp.get(), bytes, turn), what);
    });

    std::vector<T> want;
    want.reserve(n / 2 + n / 16 + 16);
    for (uint64_t i = 0; i < n; ++i) {
        const T value = values(i);
        if (how == Select::Flagged ? FlagValues{}(i) != 0 : above(value)) {
            want.push_back(value);
        }
    }
    const int64_t selected = read_back(count.as<int64_t>());
    if (selected != static_cast<int64_t>(want.size())) {
        std::fprintf(stderr, "peers: select: %" PRId64 " selected, want %zu\n", selected, want.size());
        return {ms, false};
    }
    const std::vector<T> got = copy_back<T>(out, want.size());
    Mismatches wrong("select");
    for (uint64_t i = 0; i < want.size(); ++i) {
        if (got[i] != want[i]) {
            wrong.add(i, static_cast<double>(got[i]), static_cast<double>(want[i]));
        }
    }
    return {ms, wrong.none()};
}

// ---------------------------------------------------------------------------
// sort_keys:<ty>:<order>:<n>, sort_pairs:<ty>:<order>:<n> and
// segmented_sort:f32:desc:<rows>:<width>
// ---------------------------------------------------------------------------

enum class Order { Ascending, Descending };

Order parse_order(const std::string& text) {
    if (text == "asc") return Order::Ascending;
    if (text == "desc") return Order::Descending;
    throw Failure("unknown order `" + text + "` (asc, desc)");
}

/// Sort keys from splitmix64 of the index (the header says how; the Rust
/// sort bench uses the same formulas): u64 the whole hash, u32 and i32 its
/// low 32 bits, f32 uniform in [-1, 1) with 24 random bits, exact in f32
/// (2 * u - 1 of a u with 24 bits needs no rounding, fused or not).
template <class T>
struct SortValues {
    __host__ __device__ T operator()(uint64_t i) const {
        const uint64_t h = splitmix64(i);
        if constexpr (std::is_floating_point<T>::value) {
            return static_cast<float>(h >> 40) * 0x1p-24f * 2.0f - 1.0f;
        } else if constexpr (sizeof(T) == 8) {
            return static_cast<T>(h);
        } else {
            return static_cast<T>(static_cast<uint32_t>(h));
        }
    }
};

/// The values of sort_pairs: each element's own index.
struct IndexOf {
    __host__ __device__ uint32_t operator()(uint64_t i) const { return static_cast<uint32_t>(i); }
};

/// The values of segmented_sort: each element's column in its row.
struct ColumnOf {
    uint64_t width;
    __host__ __device__ uint32_t operator()(uint64_t i) const { return static_cast<uint32_t>(i % width); }
};

/// The segment offsets of segmented_sort: row r begins at r * width (the
/// last of the rows + 1 offsets is the end of the last row).
struct RowStart {
    uint64_t width;
    __host__ __device__ int operator()(uint64_t r) const { return static_cast<int>(r * width); }
};

/// Whether two keys are the same bit for bit (f32 included).
template <class T>
bool same_bits(const T& a, const T& b) {
    return std::memcmp(&a, &b, sizeof(T)) == 0;
}

/// Whether key `a` goes before key `b` in `order` (no NaN among the keys).
template <class T>
bool before(Order order, const T& a, const T& b) {
    return order == Order::Ascending ? a < b : b < a;
}

/// A device-wide radix sort of n keys (`Pairs`: with u32 values, value i =
/// i), from the input copy of the launch into one output allocated before
/// timing: the (const in, out) form users call, which leaves the input as
/// it was, so that every launch sorts the unsorted keys. (The DoubleBuffer
/// form saves CUB a copy of the keys into its scratch, but sorts in place:
/// every launch after the first would sort sorted keys, or need an untimed
/// copy between launches.) The keys and the values are rotated among their
/// own copies. Checked in full against the host: every key bit for bit
/// against std::sort's, and every value against a stable sort of (key,
/// index) by key (DeviceRadixSort is stable, descending too).
template <class K, bool Pairs>
Outcome sort_case(const Device& device, int reps, Order order, uint64_t n) {
    if (n == 0 || n > static_cast<uint64_t>(INT_MAX)) {
        throw Failure("n must be in 1..=" + std::to_string(INT_MAX));
    }
    const SortValues<K> keys{};
    const std::vector<DeviceMemory> key_inputs = device_copies<K>(device, n, keys);
    const std::vector<DeviceMemory> value_inputs =
        Pairs ? device_copies<uint32_t>(device, n, IndexOf{}) : std::vector<DeviceMemory>{};
    const DeviceMemory keys_out(n * sizeof(K));
    const DeviceMemory values_out(Pairs ? n * sizeof(uint32_t) : 1);
    const cudaStream_t stream = device.stream.get();
    const int items = static_cast<int>(n);
    const int end_bit = static_cast<int>(sizeof(K) * 8);
    const bool descending = order == Order::Descending;
    const std::string what = std::string(Pairs ? "CUB DeviceRadixSort::SortPairs" : "CUB DeviceRadixSort::SortKeys") +
                             (descending ? "Descending" : "");

    // One CUB call on the inputs of launch `turn`; with `temp == nullptr` it
    // only sets `temp_bytes`.
    const auto call = [&](void* temp, size_t& temp_bytes, int turn) -> cudaError_t {
        const K* in = key_inputs[turn % key_inputs.size()].as<K>();
        K* out = keys_out.as<K>();
        if constexpr (Pairs) {
            const uint32_t* values_in = value_inputs[turn % value_inputs.size()].as<uint32_t>();
            uint32_t* values = values_out.as<uint32_t>();
            return descending ? cub::DeviceRadixSort::SortPairsDescending(temp, temp_bytes, in, out, values_in,
                                                                          values, items, 0, end_bit, stream)
                              : cub::DeviceRadixSort::SortPairs(temp, temp_bytes, in, out, values_in, values, items,
                                                                0, end_bit, stream);
        } else {
            return descending
                       ? cub::DeviceRadixSort::SortKeysDescending(temp, temp_bytes, in, out, items, 0, end_bit, stream)
                       : cub::DeviceRadixSort::SortKeys(temp, temp_bytes, in, out, items, 0, end_bit, stream);
        }
    };
    size_t temp_bytes = 0;
    check(call(nullptr, temp_bytes, 0), "CUB temp-storage query");
    const DeviceMemory temp(temp_bytes);
    std::fprintf(stderr, "peers: %zu key cop%s, %zu of the values, %zu bytes of CUB scratch\n", key_inputs.size(),
                 key_inputs.size() == 1 ? "y" : "ies", value_inputs.size(), temp_bytes);
    const double ms = device.median_ms(reps, [&](int turn) {
        size_t bytes = temp_bytes;
        check(call(temp.get(), bytes, turn), what);
    });

    // The timed launches must also be right (every copy holds the same keys).
    const std::vector<K> got = copy_back<K>(keys_out, n);
    if constexpr (!Pairs) {
        std::vector<K> want(n);
        for (uint64_t i = 0; i < n; ++i) {
            want[i] = keys(i);
        }
        std::sort(want.begin(), want.end(), [order](const K& a, const K& b) { return before(order, a, b); });
        Mismatches wrong("sort_keys");
        for (uint64_t i = 0; i < n; ++i) {
            if (!same_bits(got[i], want[i])) {
                wrong.add(i, static_cast<double>(got[i]), static_cast<double>(want[i]));
            }
        }
        return {ms, wrong.none()};
    } else {
        // Sorting (key, index) by key, then by index, is the stable sort by key.
        std::vector<std::pair<K, uint32_t>> want(n);
        for (uint64_t i = 0; i < n; ++i) {
            want[i] = {keys(i), static_cast<uint32_t>(i)};
        }
        std::sort(want.begin(), want.end(), [order](const std::pair<K, uint32_t>& a, const std::pair<K, uint32_t>& b) {
            if (before(order, a.first, b.first)) return true;
            if (before(order, b.first, a.first)) return false;
            return a.second < b.second;
        });
        const std::vector<uint32_t> got_values = copy_back<uint32_t>(values_out, n);
        Mismatches wrong_keys("sort_pairs keys");
        Mismatches wrong_values("sort_pairs values");
        for (uint64_t i = 0; i < n; ++i) {
            if (!same_bits(got[i], want[i].first)) {
                wrong_keys.add(i, static_cast<double>(got[i]), static_cast<double>(want[i].first));
            }
            if (got_values[i] != want[i].second) {
                wrong_values.add(i, got_values[i], want[i].second);
            }
        }
        const bool keys_ok = wrong_keys.none();
        const bool values_ok = wrong_values.none();
        return {ms, keys_ok && values_ok};
    }
}

/// Each row of a row-major rows x width f32 matrix sorted on its own into
/// descending order, with u32 values, the column: the pairs of a row-wise
/// sort that also gives each element's place (torch.sort(dim=1)'s indices).
/// The segments are the rows, given as CUB documents for contiguous
/// segments: one array of rows + 1 offsets, begin offsets from its start and
/// end offsets from its second element (made before timing, not rotated: a
/// few bytes a row). The keys and the values are rotated among their own
/// copies. Checked in full, row by row: every key bit for bit against a host
/// sort of the row, and the values a permutation of the row's columns, each
/// with its own key. DeviceSegmentedSort is not stable, so equal keys (rare
/// with 24 random bits) may come in either order; the stable sort's value
/// is what a wrong one is shown against.
///
/// Timed without the hold (`median_ms`'s `held`): where it sorts the
/// segments by size groups (from a few hundred segments on), CUB's
/// DeviceSegmentedSort copies the groups' sizes to the host and waits for
/// its stream before launching their sorts, so it could never start
/// behind the hold. Its times include that round trip, as a caller's do.
Outcome segmented_sort_case(const Device& device, int reps, uint64_t rows, uint64_t width) {
    const uint64_t limit = static_cast<uint64_t>(INT_MAX);
    if (rows == 0 || width == 0 || rows > limit || width > limit || rows * width > limit) {
        throw Failure("rows and width must be positive, rows * width at most " + std::to_string(INT_MAX));
    }
    const uint64_t n = rows * width;
    const SortValues<float> keys{};
    const std::vector<DeviceMemory> key_inputs = device_copies<float>(device, n, keys);
    const std::vector<DeviceMemory> value_inputs = device_copies<uint32_t>(device, n, ColumnOf{width});
    const DeviceMemory offsets((rows + 1) * sizeof(int));
    fill(device, offsets.as<int>(), rows + 1, RowStart{width});
    check(cudaStreamSynchronize(device.stream.get()), "synchronise after filling the offsets");
    const DeviceMemory keys_out(n * sizeof(float));
    const DeviceMemory values_out(n * sizeof(uint32_t));
    const cudaStream_t stream = device.stream.get();
    const int items = static_cast<int>(n);
    const int segments = static_cast<int>(rows);
    const int* begin = offsets.as<int>();
    const int* end = begin + 1;

    // One CUB call on the inputs of launch `turn`; with `temp == nullptr` it
    // only sets `temp_bytes`.
    const auto call = [&](void* temp, size_t& temp_bytes, int turn) -> cudaError_t {
        return cub::DeviceSegmentedSort::SortPairsDescending(
            temp, temp_bytes, key_inputs[turn % key_inputs.size()].as<float>(), keys_out.as<float>(),
            value_inputs[turn % value_inputs.size()].as<uint32_t>(), values_out.as<uint32_t>(), items, segments,
            begin, end, stream);
    };
    size_t temp_bytes = 0;
    check(call(nullptr, temp_bytes, 0), "CUB temp-storage query");
    const DeviceMemory temp(temp_bytes);
    std::fprintf(stderr, "peers: %zu key cop%s, %zu of the values, %zu bytes of CUB scratch\n", key_inputs.size(),
                 key_inputs.size() == 1 ? "y" : "ies", value_inputs.size(), temp_bytes);
    const double ms = device.median_ms(
        reps,
        [&](int turn) {
            size_t bytes = temp_bytes;
            check(call(temp.get(), bytes, turn), "CUB DeviceSegmentedSort::SortPairsDescending");
        },
        false);

    const std::vector<float> got_keys = copy_back<float>(keys_out, n);
    const std::vector<uint32_t> got_values = copy_back<uint32_t>(values_out, n);
    Mismatches wrong_keys("segmented_sort keys");
    Mismatches wrong_values("segmented_sort values");
    using Pair = std::pair<float, uint32_t>;
    std::vector<Pair> want(width);
    // The row that last used each column as a value (rows, none yet).
    std::vector<uint64_t> used(width, rows);
    for (uint64_t r = 0; r < rows; ++r) {
        for (uint64_t c = 0; c < width; ++c) {
            want[c] = {keys(r * width + c), static_cast<uint32_t>(c)};
        }
        std::sort(want.begin(), want.end(), [](const Pair& a, const Pair& b) {
            if (b.first < a.first) return true;
            if (a.first < b.first) return false;
            return a.second < b.second;
        });
        for (uint64_t c = 0; c < width; ++c) {
            const uint64_t i = r * width + c;
            if (!same_bits(got_keys[i], want[c].first)) {
                wrong_keys.add(i, got_keys[i], want[c].first);
            }
            const uint32_t v = got_values[i];
            if (v >= width || used[v] == r || !same_bits(keys(r * width + v), got_keys[i])) {
                wrong_values.add(i, v, want[c].second);
            } else {
                used[v] = r;
            }
        }
    }
    const bool keys_ok = wrong_keys.none();
    const bool values_ok = wrong_values.none();
    return {ms, keys_ok && values_ok};
}

// ---------------------------------------------------------------------------
// sgemm:<m>:<n>:<k> and sgemm_tf32:<m>:<n>:<k>
// ---------------------------------------------------------------------------

/// GEMM operands: uniform in [-1, 1) with 24 random bits, so exact in f32;
/// element i of a matrix is `offset + i` hashed (A: offset 0, B: 2^40). The
/// formula of the Rust bench (host/benches/ladder/gemm.rs, `uniform`).
struct UniformValues {
    uint64_t offset;
    __host__ __device__ float operator()(uint64_t i) const {
        return static_cast<float>(splitmix64(offset + i) >> 40) * 0x1p-23f - 1.0f;
    }
};

constexpr uint64_t kGemmOffsetA = 0;
constexpr uint64_t kGemmOffsetB = 1ull << 40;

/// The arithmetic a cuBLAS SGEMM peer may use.
///
/// FP32 runs in CUBLAS_DEFAULT_MATH, what an application gets from
/// cublasSgemm unless it asks for more: since cuBLAS 11 the default mode
/// only uses arithmetic with at least FP32's mantissa and exponent bits, so
/// it never rounds operands to TF32 (that takes CUBLAS_TF32_TENSOR_OP_MATH or
/// a _FAST_TF32 compute type) nor emulates FP32 with BF16 (that takes
/// CUBLAS_FP32_EMULATED_BF16X9_MATH, and exists on Blackwell only).
/// CUBLAS_PEDANTIC_MATH would give the same FP32 arithmetic but is documented
/// for numerical studies and "might not be as performant": it could keep
/// cuBLAS from its fastest FP32 kernels, a handicap for the library, not the
/// comparison the benchmark makes. The result is checked against FP32's error
/// bound either way.
///
/// TF32 runs in CUBLAS_TF32_TENSOR_OP_MATH: the tensor cores on operands
/// rounded to TF32 (10 mantissa bits), a reference for the tensor-core steps.
enum class GemmMath { Fp32, Tf32 };

/// cuBLAS TF32 at its best for one product: `cublasSgemm` in
/// CUBLAS_TF32_TENSOR_OP_MATH (`sgemm`) and each algorithm cuBLASLt's
/// heuristic offers (up to 8, CUBLAS_COMPUTE_32F_FAST_TF32, a 64 MiB
/// workspace) timed briefly; the fastest is timed over `reps` and its
/// median returned. The candidates and the choice go to stderr.
template <class Sgemm>
double best_tf32_ms(const Device& device, int reps, Sgemm&& sgemm, const std::vector<DeviceMemory>& as,
                    const std::vector<DeviceMemory>& bs, const DeviceMemory& out, int rows, int cols, int depth) {
    const float alpha = 1.0f;
    const float beta = 0.0f;
    cublasLtHandle_t lt = nullptr;
    check(cublasLtCreate(&lt), "cublasLtCreate");
    std::unique_ptr<cublasLtContext, decltype(&cublasLtDestroy)> lt_owner(lt, cublasLtDestroy);
    cublasLtMatmulDesc_t op = nullptr;
    check(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F), "cublasLtMatmulDescCreate");
    std::unique_ptr<cublasLtMatmulDescOpaque_t, decltype(&cublasLtMatmulDescDestroy)> op_owner(
        op, cublasLtMatmulDescDestroy);
    // Column-major, as `sgemm`: C^T (cols x rows) = B^T (cols x depth) . A^T (depth x rows).
    cublasLtMatrixLayout_t lb = nullptr, la = nullptr, lc = nullptr;
    check(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, cols, depth, cols), "cublasLtMatrixLayoutCreate");
    std::unique_ptr<cublasLtMatrixLayoutOpaque_t, decltype(&cublasLtMatrixLayoutDestroy)> lb_owner(
        lb, cublasLtMatrixLayoutDestroy);
    check(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, depth, rows, depth), "cublasLtMatrixLayoutCreate");
    std::unique_ptr<cublasLtMatrixLayoutOpaque_t, decltype(&cublasLtMatrixLayoutDestroy)> la_owner(
        la, cublasLtMatrixLayoutDestroy);
    check(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, cols, rows, cols), "cublasLtMatrixLayoutCreate");
    std::unique_ptr<cublasLtMatrixLayoutOpaque_t, decltype(&cublasLtMatrixLayoutDestroy)> lc_owner(
        lc, cublasLtMatrixLayoutDestroy);
    cublasLtMatmulPreference_t preference = nullptr;
    check(cublasLtMatmulPreferenceCreate(&preference), "cublasLtMatmulPreferenceCreate");
    std::unique_ptr<cublasLtMatmulPreferenceOpaque_t, decltype(&cublasLtMatmulPreferenceDestroy)> pref_owner(
        preference, cublasLtMatmulPreferenceDestroy);
    const size_t workspace_bytes = 64ull << 20;
    check(cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                  &workspace_bytes, sizeof(workspace_bytes)),
             "cublasLtMatmulPreferenceSetAttribute");
    const DeviceMemory workspace(workspace_bytes);
    cublasLtMatmulHeuristicResult_t found[8];
    int count = 0;
    check(cublasLtMatmulAlgoGetHeuristic(lt, op, lb, la, lc, lc, preference, 8, found, &count),
             "cublasLtMatmulAlgoGetHeuristic");
    const auto lt_matmul = [&](int algo) {
        return [&, algo](int turn) {
            const float* a = as[turn % as.size()].as<float>();
            const float* b = bs[turn % bs.size()].as<float>();
            check(cublasLtMatmul(lt, op, &alpha, b, lb, a, la, &beta, out.as<float>(), lc, out.as<float>(), lc,
                                    &found[algo].algo, workspace.as<void>(), workspace_bytes, device.stream.get()),
                     "cublasLtMatmul");
        };
    };
    const int trial = std::max(4, reps / 4);
    double best = device.median_ms(trial, sgemm);
    int chosen = -1;
    std::fprintf(stderr, "peers: TF32 candidates: Sgemm %.4f ms", best);
    for (int i = 0; i < count; ++i) {
        const double ms = device.median_ms(trial, lt_matmul(i));
        std::fprintf(stderr, ", Lt #%d %.4f ms", i, ms);
        if (ms < best) {
            best = ms;
            chosen = i;
        }
    }
    std::fprintf(stderr, "\n");
    if (chosen < 0) {
        std::fprintf(stderr, "peers: TF32 best: cublasSgemm\n");
        return device.median_ms(reps, sgemm);
    }
    std::fprintf(stderr, "peers: TF32 best: cublasLtMatmul, heuristic's #%d\n", chosen);
    return device.median_ms(reps, lt_matmul(chosen));
}

#ifdef PEERS_CUTLASS
/// CUTLASS's 3xTF32 GEMM (the `OpMultiplyAddFastF32` operator: each
/// operand split into two TF32 parts on the fly, three tensor-core
/// products each) for row-major `A` and `C`, `B` in `LayoutB`: the
/// configuration of CUTLASS's own 3xTF32 example (128 x 64 x 16 tiles, 64
/// x 32 x 16 warps, three stages, 16-byte accesses).
template <class LayoutB>
using Cutlass3xTf32 = cutlass::gemm::device::Gemm<
    float, cutlass::layout::RowMajor, float, LayoutB, float, cutlass::layout::RowMajor, float,
    cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80, cutlass::gemm::GemmShape<128, 64, 16>,
    cutlass::gemm::GemmShape<64, 32, 16>, cutlass::gemm::GemmShape<16, 8, 8>,
    cutlass::epilogue::thread::LinearCombination<float, 4, float, float>,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<>, 3, 4, 4, false,
    cutlass::arch::OpMultiplyAddFastF32>;

/// `out` (cols x rows, row-major) = `in` (rows x cols, row-major) transposed.
__global__ void transpose_kernel(const float* in, float* out, uint64_t rows, uint64_t cols) {
    const uint64_t total = rows * cols;
    for (uint64_t e = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; e < total;
         e += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
        const uint64_t r = e / cols;
        const uint64_t c = e % cols;
        out[c * rows + r] = in[e];
    }
}

/// The median time of CUTLASS's 3xTF32 product of `as` (m x k) by `bs`
/// (k x n row-major, or n x k row-major for a column-major `LayoutB`) into
/// `out`, or a negative time where CUTLASS cannot run this shape
/// (`can_implement`: its 16-byte accesses need `k` and `n` multiples of 4).
template <class LayoutB>
double cutlass_3xtf32_ms(const Device& device, int reps, const std::vector<DeviceMemory>& as,
                         const std::vector<DeviceMemory>& bs, const DeviceMemory& out, int m, int n, int k) {
    using Gemm = Cutlass3xTf32<LayoutB>;
    const bool column_major = std::is_same<LayoutB, cutlass::layout::ColumnMajor>::value;
    const int ldb = column_major ? k : n;
    const auto arguments = [&](int turn) {
        const float* a = as[turn % as.size()].as<float>();
        const float* b = bs[turn % bs.size()].as<float>();
        return typename Gemm::Arguments({m, n, k}, {a, k}, {b, ldb}, {out.as<float>(), n}, {out.as<float>(), n},
                                        {1.0f, 0.0f});
    };
    Gemm gemm;
    if (gemm.can_implement(arguments(0)) != cutlass::Status::kSuccess) {
        return -1.0;
    }
    const size_t workspace_bytes = Gemm::get_workspace_size(arguments(0));
    const DeviceMemory workspace(std::max<size_t>(workspace_bytes, 16));
    return device.median_ms(reps, [&](int turn) {
        if (gemm.initialize(arguments(turn), workspace.as<void>(), device.stream.get()) != cutlass::Status::kSuccess ||
            gemm(device.stream.get()) != cutlass::Status::kSuccess) {
            throw Failure("CUTLASS's 3xTF32 GEMM failed to run");
        }
    });
}

/// CUTLASS's 3xTF32 for the bench's row-major product: the faster of `B`
/// read as stored (row-major, `n` contiguous) and `B` transposed first
/// into `k`-contiguous rows (the layout CUTLASS's example uses; the
/// transpose is not timed). Checked as `sgemm` checks FP32 (3xTF32 is
/// within FP32's bound on these inputs).
Outcome cutlass_3xtf32_case(const Device& device, int reps, uint64_t m, uint64_t n, uint64_t k) {
    const uint64_t limit = static_cast<uint64_t>(INT_MAX);
    if (m == 0 || n == 0 || k == 0 || m > limit || n > limit || k > limit) {
        throw Failure("m, n and k must be in 1..=" + std::to_string(INT_MAX));
    }
    const std::vector<DeviceMemory> as = device_copies<float>(device, m * k, UniformValues{kGemmOffsetA});
    const std::vector<DeviceMemory> bs = device_copies<float>(device, k * n, UniformValues{kGemmOffsetB});
    std::vector<DeviceMemory> bts;
    for (const DeviceMemory& b : bs) {
        bts.emplace_back(k * n * sizeof(float));
        transpose_kernel<<<1024, 256, 0, device.stream.get()>>>(b.as<float>(), bts.back().as<float>(), k, n);
        check(cudaGetLastError(), "transpose kernel launch");
    }
    check(cudaStreamSynchronize(device.stream.get()), "transposing B");
    const DeviceMemory out(m * n * sizeof(float));
    const int rows = static_cast<int>(m);
    const int cols = static_cast<int>(n);
    const int depth = static_cast<int>(k);
    const double stored = cutlass_3xtf32_ms<cutlass::layout::RowMajor>(device, reps, as, bs, out, rows, cols, depth);
    const double transposed =
        cutlass_3xtf32_ms<cutlass::layout::ColumnMajor>(device, reps, as, bts, out, rows, cols, depth);
    std::fprintf(stderr, "peers: CUTLASS 3xTF32: B as stored %.4f ms, B transposed %.4f ms\n", stored, transposed);
    if (stored < 0.0 && transposed < 0.0) {
        throw Failure("CUTLASS's 3xTF32 GEMM cannot run this shape (its 16-byte accesses need n and k multiples of 4)");
    }
    // The faster again, so that `out` holds its result for the check.
    double ms = 0.0;
    if (transposed >= 0.0 && (stored < 0.0 || transposed < stored)) {
        ms = cutlass_3xtf32_ms<cutlass::layout::ColumnMajor>(device, reps, as, bts, out, rows, cols, depth);
    } else {
        ms = cutlass_3xtf32_ms<cutlass::layout::RowMajor>(device, reps, as, bs, out, rows, cols, depth);
    }
    const UniformValues a_values{kGemmOffsetA};
    const UniformValues b_values{kGemmOffsetB};
    const double u = std::ldexp(1.0, -24);
    // FP32's bound, and 2^-20 for the split's own error (3xTF32's parts
    // carry about 21 bits of each operand).
    const double relative = (k + 2) * u / (1.0 - (k + 2) * u) + std::ldexp(1.0, -20);
    bool ok = true;
    for (uint64_t i : spot_positions(m * n)) {
        const uint64_t r = i / n;
        const uint64_t c = i % n;
        double want = 0.0;
        double magnitude = 0.0;
        for (uint64_t p = 0; p < k; ++p) {
            const double term = static_cast<double>(a_values(r * k + p)) * static_cast<double>(b_values(p * n + c));
            want += term;
            magnitude += std::fabs(term);
        }
        const double got = static_cast<double>(read_back(out.as<float>() + i));
        if (!(std::fabs(got - want) <= relative * magnitude)) {
            std::fprintf(stderr, "peers: CUTLASS 3xTF32: C(%" PRIu64 ", %" PRIu64 "): got %.9g, want %.9g\n", r, c,
                         got, want);
            ok = false;
        }
    }
    return {ms, ok};
}
#endif  // PEERS_CUTLASS

/// Row-major C (m x n) = A (m x k) . B (k x n), alpha = 1, beta = 0.
///
/// cuBLAS is column-major: a row-major r x c matrix with pitch c is the
/// column-major c x r matrix of its transpose, leading dimension c. So the
/// row-major product is C^T = B^T . A^T in column-major terms: cublasSgemm
/// with (m, n, k) = (n, m, k), first operand B (ld n), second A (ld k),
/// result C (ld n), neither transposed. Same bytes, same flops.
///
/// Checked at spot positions against a double-precision sum of the same
/// f32 operands: within gamma_{k+2} * sum_p |a_ip * b_pj| (about
/// (k + 2) * 2^-24 of it: FP32 in any summation order), plus 2^-9 of the
/// sum for TF32 (each operand off by less than 2^-10 of itself when the
/// tensor cores truncate it to TF32, 2^-11 when it is rounded). This bound
/// does not tell FP32 from TF32 on random data; the math mode does. The
/// largest error seen is printed to stderr, as a fraction of that sum.
Outcome sgemm_case(const Device& device, int reps, GemmMath math, uint64_t m, uint64_t n, uint64_t k) {
    const uint64_t limit = static_cast<uint64_t>(INT_MAX);
    if (m == 0 || n == 0 || k == 0 || m > limit || n > limit || k > limit) {
        throw Failure("m, n and k must be in 1..=" + std::to_string(INT_MAX));
    }
    const std::vector<DeviceMemory> as = device_copies<float>(device, m * k, UniformValues{kGemmOffsetA});
    const std::vector<DeviceMemory> bs = device_copies<float>(device, k * n, UniformValues{kGemmOffsetB});
    const DeviceMemory out(m * n * sizeof(float));
    const Blas blas(device.stream.get(), math == GemmMath::Tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH);
    const float alpha = 1.0f;
    const float beta = 0.0f;
    const int rows = static_cast<int>(m);
    const int cols = static_cast<int>(n);
    const int depth = static_cast<int>(k);
    std::fprintf(stderr, "peers: %zu + %zu input copies\n", as.size(), bs.size());

    const auto sgemm = [&](int turn) {
        const float* a = as[turn % as.size()].as<float>();
        const float* b = bs[turn % bs.size()].as<float>();
        check(cublasSgemm(blas.get(), CUBLAS_OP_N, CUBLAS_OP_N, cols, rows, depth, &alpha, b, cols, a, depth, &beta,
                          out.as<float>(), cols),
              "cublasSgemm");
    };
    double ms = 0.0;
    if (math == GemmMath::Fp32) {
        ms = device.median_ms(reps, sgemm);
    } else {
        ms = best_tf32_ms(device, reps, sgemm, as, bs, out, rows, cols, depth);
    }

    const UniformValues a_values{kGemmOffsetA};
    const UniformValues b_values{kGemmOffsetB};
    const double u = std::ldexp(1.0, -24);
    const double gamma = (k + 2) * u / (1.0 - (k + 2) * u);
    const double relative = gamma + (math == GemmMath::Tf32 ? std::ldexp(1.0, -9) : 0.0);
    std::vector<std::pair<uint64_t, uint64_t>> spots = {{0, 0}, {0, n - 1}, {m - 1, 0}, {m - 1, n - 1}};
    for (uint64_t i : spot_positions(m * n)) {
        spots.emplace_back(i / n, i % n);
    }
    bool ok = true;
    double worst = 0.0;
    for (const auto& [i, j] : spots) {
        double want = 0.0;
        double magnitude = 0.0;
        for (uint64_t p = 0; p < k; ++p) {
            const double term = static_cast<double>(a_values(i * k + p)) * static_cast<double>(b_values(p * n + j));
            want += term;
            magnitude += std::fabs(term);
        }
        const double got = static_cast<double>(read_back(out.as<float>() + i * n + j));
        const double error = std::fabs(got - want);
        if (magnitude > 0.0) {
            worst = std::max(worst, error / magnitude);
        }
        if (!(error <= relative * magnitude)) {
            std::fprintf(stderr, "peers: sgemm: C(%" PRIu64 ", %" PRIu64 "): got %.9g, want %.9g\n", i, j, got, want);
            ok = false;
        }
    }
    std::fprintf(stderr, "peers: largest error %.3g of sum |a*b| (bound %.3g)\n", worst, relative);
    return {ms, ok};
}

// ---------------------------------------------------------------------------
// sgemm_batched:<count>:<m>:<n>:<k> and sgemm_batched_tf32:<count>:<m>:<n>:<k>
// ---------------------------------------------------------------------------

/// cuBLAS TF32 at its best for a strided batch: `cublasSgemmStridedBatched`
/// in CUBLAS_TF32_TENSOR_OP_MATH (`sgemm`) and `cublasGemmStridedBatchedEx`
/// with CUBLAS_COMPUTE_32F_FAST_TF32 (`gemm_ex`), the two ways cuBLAS's own
/// API asks for it, which need not pick the same kernels, each timed
/// briefly; the faster is timed over `reps` and its median returned. The
/// candidates and the choice go to stderr, as `best_tf32_ms`'s do.
template <class Sgemm, class GemmEx>
double best_tf32_batched_ms(const Device& device, int reps, Sgemm&& sgemm, GemmEx&& gemm_ex) {
    const int trial = std::max(4, reps / 4);
    const double sgemm_ms = device.median_ms(trial, sgemm);
    const double gemm_ex_ms = device.median_ms(trial, gemm_ex);
    std::fprintf(stderr, "peers: TF32 candidates: SgemmStridedBatched %.4f ms, GemmStridedBatchedEx %.4f ms\n",
                 sgemm_ms, gemm_ex_ms);
    // The winner runs last, so that the output holds its result for the check.
    if (gemm_ex_ms < sgemm_ms) {
        std::fprintf(stderr, "peers: TF32 best: cublasGemmStridedBatchedEx\n");
        return device.median_ms(reps, gemm_ex);
    }
    std::fprintf(stderr, "peers: TF32 best: cublasSgemmStridedBatched\n");
    return device.median_ms(reps, sgemm);
}

/// `count` row-major products C_z (m x n) = A_z (m x k) . B_z (k x n),
/// alpha = 1, beta = 0, the matrices of each operand packed one after the
/// other (strides m * k, k * n and m * n elements), as a batch of equal
/// shapes usually sits in memory.
///
/// Each operand is filled as one long matrix with `sgemm_case`'s formula:
/// element i of A_z is value z * m * k + i (offset 0), of B_z value
/// z * k * n + i (offset 2^40), so that no two products of the batch share
/// their numbers and a stride that cuBLAS got wrong shows in the check.
///
/// Each product is `sgemm_case`'s column-major C_z^T = B_z^T . A_z^T: the
/// first operand B (ld n, stride k * n), the second A (ld k, stride m * k),
/// the result C (ld n, stride m * n). Checked with `sgemm_case`'s bound and
/// spot positions in the first and the last product of the batch: a
/// wrong stride leaves the first right but reads or writes the wrong
/// matrices for the last.
Outcome sgemm_batched_case(const Device& device, int reps, GemmMath math, uint64_t count, uint64_t m, uint64_t n,
                           uint64_t k) {
    const uint64_t limit = static_cast<uint64_t>(INT_MAX);
    if (count == 0 || m == 0 || n == 0 || k == 0 || count > limit || m > limit || n > limit || k > limit) {
        throw Failure("count, m, n and k must be in 1..=" + std::to_string(INT_MAX));
    }
    const uint64_t a_size = m * k;
    const uint64_t b_size = k * n;
    const uint64_t c_size = m * n;
    // Past this the byte counts below would wrap instead of failing to allocate.
    if (std::max({a_size, b_size, c_size}) > (1ull << 60) / count) {
        throw Failure("the batch's operands are too large to allocate");
    }
    const std::vector<DeviceMemory> as = device_copies<float>(device, count * a_size, UniformValues{kGemmOffsetA});
    const std::vector<DeviceMemory> bs = device_copies<float>(device, count * b_size, UniformValues{kGemmOffsetB});
    const DeviceMemory out(count * c_size * sizeof(float));
    const Blas blas(device.stream.get(), math == GemmMath::Tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH);
    const float alpha = 1.0f;
    const float beta = 0.0f;
    const int batch = static_cast<int>(count);
    const int rows = static_cast<int>(m);
    const int cols = static_cast<int>(n);
    const int depth = static_cast<int>(k);
    const long long a_stride = static_cast<long long>(a_size);
    const long long b_stride = static_cast<long long>(b_size);
    const long long c_stride = static_cast<long long>(c_size);
    std::fprintf(stderr, "peers: %zu + %zu input copies\n", as.size(), bs.size());

    const auto sgemm = [&](int turn) {
        const float* a = as[turn % as.size()].as<float>();
        const float* b = bs[turn % bs.size()].as<float>();
        check(cublasSgemmStridedBatched(blas.get(), CUBLAS_OP_N, CUBLAS_OP_N, cols, rows, depth, &alpha, b, cols,
                                        b_stride, a, depth, a_stride, &beta, out.as<float>(), cols, c_stride, batch),
              "cublasSgemmStridedBatched");
    };
    double ms = 0.0;
    if (math == GemmMath::Fp32) {
        ms = device.median_ms(reps, sgemm);
    } else {
        // The compute type asks for TF32 whatever the handle's math mode
        // (short of CUBLAS_PEDANTIC_MATH), so this one needs no mode of its own.
        const auto gemm_ex = [&](int turn) {
            const float* a = as[turn % as.size()].as<float>();
            const float* b = bs[turn % bs.size()].as<float>();
            check(cublasGemmStridedBatchedEx(blas.get(), CUBLAS_OP_N, CUBLAS_OP_N, cols, rows, depth, &alpha, b,
                                             CUDA_R_32F, cols, b_stride, a, CUDA_R_32F, depth, a_stride, &beta,
                                             out.as<float>(), CUDA_R_32F, cols, c_stride, batch,
                                             CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT),
                  "cublasGemmStridedBatchedEx");
        };
        ms = best_tf32_batched_ms(device, reps, sgemm, gemm_ex);
    }

    const UniformValues a_values{kGemmOffsetA};
    const UniformValues b_values{kGemmOffsetB};
    const double u = std::ldexp(1.0, -24);
    const double gamma = (k + 2) * u / (1.0 - (k + 2) * u);
    const double relative = gamma + (math == GemmMath::Tf32 ? std::ldexp(1.0, -9) : 0.0);
    std::vector<std::pair<uint64_t, uint64_t>> spots = {{0, 0}, {0, n - 1}, {m - 1, 0}, {m - 1, n - 1}};
    for (uint64_t i : spot_positions(m * n)) {
        spots.emplace_back(i / n, i % n);
    }
    std::vector<uint64_t> products = {0};
    if (count > 1) {
        products.push_back(count - 1);
    }
    bool ok = true;
    double worst = 0.0;
    for (const uint64_t z : products) {
        const uint64_t a_first = z * a_size;
        const uint64_t b_first = z * b_size;
        const float* c = out.as<float>() + z * c_size;
        for (const auto& [i, j] : spots) {
            double want = 0.0;
            double magnitude = 0.0;
            for (uint64_t p = 0; p < k; ++p) {
                const double term = static_cast<double>(a_values(a_first + i * k + p)) *
                                    static_cast<double>(b_values(b_first + p * n + j));
                want += term;
                magnitude += std::fabs(term);
            }
            const double got = static_cast<double>(read_back(c + i * n + j));
            const double error = std::fabs(got - want);
            if (magnitude > 0.0) {
                worst = std::max(worst, error / magnitude);
            }
            if (!(error <= relative * magnitude)) {
                std::fprintf(stderr,
                             "peers: sgemm_batched: C_%" PRIu64 "(%" PRIu64 ", %" PRIu64 "): got %.9g, want %.9g\n", z,
                             i, j, got, want);
                ok = false;
            }
        }
    }
    std::fprintf(stderr, "peers: largest error %.3g of sum |a*b| (bound %.3g)\n", worst, relative);
    return {ms, ok};
}

// ---------------------------------------------------------------------------
// curand:<gen>:<dist>:<n>
// ---------------------------------------------------------------------------

/// The cuRAND generators timed: Philox4_32_10 (the one warpspeed's fills
/// reproduce), and XORWOW (cuRAND's default) and MRG32k3a for reference.
enum class RandGen { Philox, Xorwow, Mrg32k3a };

/// What a fill writes: curandGenerate's u32, curandGenerateUniform's f32 in
/// (0, 1], curandGenerateNormal's and curandGenerateLogNormal's f32 (mean 0,
/// stddev 1), curandGeneratePoisson's u32 (lambda kPoissonLambda).
enum class Distribution { U32, Uniform, Normal, LogNormal, Poisson };

RandGen parse_rand_gen(const std::string& text) {
    if (text == "philox") return RandGen::Philox;
    if (text == "xorwow") return RandGen::Xorwow;
    if (text == "mrg32k3a") return RandGen::Mrg32k3a;
    throw Failure("unknown generator `" + text + "` (philox, xorwow, mrg32k3a)");
}

Distribution parse_distribution(const std::string& text) {
    if (text == "u32") return Distribution::U32;
    if (text == "uniform") return Distribution::Uniform;
    if (text == "normal") return Distribution::Normal;
    if (text == "log_normal") return Distribution::LogNormal;
    if (text == "poisson") return Distribution::Poisson;
    throw Failure("unknown distribution `" + text + "` (u32, uniform, normal, log_normal, poisson)");
}

/// The peer's name: `cuRAND <generator> <distribution>` (as the Rust bench's
/// `expected_name`).
std::string rand_peer(const std::string& gen, const std::string& dist) {
    std::string name = "cuRAND ";
    if (gen == "philox") name += "Philox4_32_10";
    else if (gen == "xorwow") name += "XORWOW";
    else if (gen == "mrg32k3a") name += "MRG32k3a";
    else name += gen;
    if (dist == "log_normal") return name + " log-normal";
    if (dist == "poisson") return name + " Poisson";
    return name + " " + dist;
}

#ifndef PEERS_NO_CURAND

/// The seed of every generator: the Rust bench's (host/benches/ladder/rng.rs,
/// `SEED`).
constexpr unsigned long long kRandSeed = 1234;
constexpr double kPoissonLambda = 3.5;

const char* curand_status_name(curandStatus_t status) {
    switch (status) {
    case CURAND_STATUS_SUCCESS: return "CURAND_STATUS_SUCCESS";
    case CURAND_STATUS_VERSION_MISMATCH: return "CURAND_STATUS_VERSION_MISMATCH";
    case CURAND_STATUS_NOT_INITIALIZED: return "CURAND_STATUS_NOT_INITIALIZED";
    case CURAND_STATUS_ALLOCATION_FAILED: return "CURAND_STATUS_ALLOCATION_FAILED";
    case CURAND_STATUS_TYPE_ERROR: return "CURAND_STATUS_TYPE_ERROR";
    case CURAND_STATUS_OUT_OF_RANGE: return "CURAND_STATUS_OUT_OF_RANGE";
    case CURAND_STATUS_LENGTH_NOT_MULTIPLE: return "CURAND_STATUS_LENGTH_NOT_MULTIPLE";
    case CURAND_STATUS_DOUBLE_PRECISION_REQUIRED: return "CURAND_STATUS_DOUBLE_PRECISION_REQUIRED";
    case CURAND_STATUS_LAUNCH_FAILURE: return "CURAND_STATUS_LAUNCH_FAILURE";
    case CURAND_STATUS_PREEXISTING_FAILURE: return "CURAND_STATUS_PREEXISTING_FAILURE";
    case CURAND_STATUS_INITIALIZATION_FAILED: return "CURAND_STATUS_INITIALIZATION_FAILED";
    case CURAND_STATUS_ARCH_MISMATCH: return "CURAND_STATUS_ARCH_MISMATCH";
    case CURAND_STATUS_INTERNAL_ERROR: return "CURAND_STATUS_INTERNAL_ERROR";
    }
    return "unknown cuRAND status";
}

void check(curandStatus_t status, const std::string& what) {
    if (status != CURAND_STATUS_SUCCESS) {
        throw Failure(what + ": " + curand_status_name(status) + " (" + std::to_string(static_cast<int>(status)) +
                      ")");
    }
}

/// A cuRAND host-API generator of `type` on `stream`, seeded once, in its
/// default ordering (what a user who sets nothing else gets).
class Rand {
public:
    Rand(curandRngType_t type, cudaStream_t stream, unsigned long long seed) {
        check(curandCreateGenerator(&gen_, type), "curandCreateGenerator");
        try {
            check(curandSetStream(gen_, stream), "curandSetStream");
            check(curandSetPseudoRandomGeneratorSeed(gen_, seed), "curandSetPseudoRandomGeneratorSeed");
        } catch (...) {
            curandDestroyGenerator(gen_);
            throw;
        }
    }
    Rand(const Rand&) = delete;
    Rand& operator=(const Rand&) = delete;
    ~Rand() { curandDestroyGenerator(gen_); }
    curandGenerator_t get() const { return gen_; }

private:
    curandGenerator_t gen_ = nullptr;
};

curandRngType_t rng_type(RandGen gen) {
    switch (gen) {
    case RandGen::Philox: return CURAND_RNG_PSEUDO_PHILOX4_32_10;
    case RandGen::Xorwow: return CURAND_RNG_PSEUDO_XORWOW;
    case RandGen::Mrg32k3a: return CURAND_RNG_PSEUDO_MRG32K3A;
    }
    throw Failure("unknown generator");
}

/// Whether the first values of the last timed fill look like their
/// distribution: every value in its range (uniforms in (0, 1], normals
/// finite, log-normals positive and finite) and their mean within 6 standard
/// errors of the distribution's (u32 as x / 2^32, mean 1/2). A check for a
/// broken call, not a test of the generator.
bool rand_plausible(Distribution dist, const DeviceMemory& out, uint64_t n) {
    const uint64_t k = std::min<uint64_t>(n, 1 << 16);
    std::vector<uint32_t> bits(k);
    check(cudaMemcpy(bits.data(), out.get(), k * sizeof(uint32_t), cudaMemcpyDeviceToHost), "copying values back");
    const double e = std::exp(1.0);
    double mean = 0.0;
    double stddev = 1.0;
    switch (dist) {
    case Distribution::U32:
    case Distribution::Uniform: mean = 0.5; stddev = std::sqrt(1.0 / 12.0); break;
    case Distribution::Normal: mean = 0.0; stddev = 1.0; break;
    case Distribution::LogNormal: mean = std::sqrt(e); stddev = std::sqrt((e - 1.0) * e); break;
    case Distribution::Poisson: mean = kPoissonLambda; stddev = std::sqrt(kPoissonLambda); break;
    }
    double sum = 0.0;
    bool in_range = true;
    for (const uint32_t b : bits) {
        float f = 0.0f;
        std::memcpy(&f, &b, sizeof f);
        double x = 0.0;
        switch (dist) {
        case Distribution::U32: x = std::ldexp(static_cast<double>(b), -32); break;
        case Distribution::Poisson: x = b; break;
        case Distribution::Uniform: in_range = in_range && f > 0.0f && f <= 1.0f; x = f; break;
        case Distribution::Normal: in_range = in_range && std::isfinite(f); x = f; break;
        case Distribution::LogNormal: in_range = in_range && f > 0.0f && std::isfinite(f); x = f; break;
        }
        sum += x;
    }
    const double got = sum / static_cast<double>(k);
    const double bound = 6.0 * stddev / std::sqrt(static_cast<double>(k));
    const bool ok = in_range && std::fabs(got - mean) <= bound;
    if (!ok) {
        std::fprintf(stderr, "peers: curand: %s; mean of the first %" PRIu64 " values %.6g, want %.6g +- %.3g\n",
                     in_range ? "values in range" : "values out of range", k, got, mean, bound);
    }
    return ok;
}

#endif  // PEERS_NO_CURAND

/// n values of `dist` from a cuRAND generator of kind `gen`. The generator
/// is created and seeded before timing, and each timed launch is one
/// generate call into the same output: the generator's offset moves on by n
/// each call, as in an application drawing batch after batch. XORWOW and
/// MRG32k3a set up their per-thread states on the first generate call (and
/// the Poisson fill builds its lambda's tables): the warm-up launches do that.
Outcome curand_case(const Device& device, int reps, RandGen gen, Distribution dist, uint64_t n) {
#ifdef PEERS_NO_CURAND
    (void)device, (void)reps, (void)gen, (void)dist, (void)n;
    throw Failure("cuRAND not available: the peer program was built without it (PEERS_NO_CURAND)");
#else
    if (n == 0) {
        throw Failure("n must be positive");
    }
    const DeviceMemory out(n * sizeof(uint32_t));
    const Rand rand(rng_type(gen), device.stream.get(), kRandSeed);
    const curandGenerator_t g = rand.get();
    unsigned int* u32 = out.as<unsigned int>();
    float* f32 = out.as<float>();

    const double ms = device.median_ms(reps, [&](int) {
        switch (dist) {
        case Distribution::U32: check(curandGenerate(g, u32, n), "curandGenerate"); break;
        case Distribution::Uniform: check(curandGenerateUniform(g, f32, n), "curandGenerateUniform"); break;
        case Distribution::Normal: check(curandGenerateNormal(g, f32, n, 0.0f, 1.0f), "curandGenerateNormal"); break;
        case Distribution::LogNormal:
            check(curandGenerateLogNormal(g, f32, n, 0.0f, 1.0f), "curandGenerateLogNormal");
            break;
        case Distribution::Poisson:
            check(curandGeneratePoisson(g, u32, n, kPoissonLambda), "curandGeneratePoisson");
            break;
        }
    });
    return {ms, rand_plausible(dist, out, n)};
#endif
}

// ---------------------------------------------------------------------------
// memcpy:<bytes>
// ---------------------------------------------------------------------------

/// Device-to-device copy: the bandwidth ceiling. One source, no rotation (as
/// the Rust harness's memcpy baseline).
Outcome memcpy_case(const Device& device, int reps, uint64_t bytes) {
    if (bytes == 0) {
        throw Failure("bytes must be positive");
    }
    const DeviceMemory src(bytes);
    const DeviceMemory dst(bytes);
    fill(device, src.as<uint8_t>(), bytes, ByteValues{});
    check(cudaMemsetAsync(dst.get(), 0, bytes, device.stream.get()), "cudaMemsetAsync");
    check(cudaStreamSynchronize(device.stream.get()), "synchronise after filling");

    const double ms = device.median_ms(reps, [&](int) {
        check(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, device.stream.get()),
              "cudaMemcpyAsync");
    });

    bool ok = true;
    for (uint64_t i : spot_positions(bytes)) {
        if (read_back(dst.as<uint8_t>() + i) != ByteValues{}(i)) {
            std::fprintf(stderr, "peers: memcpy: wrong byte at %" PRIu64 "\n", i);
            ok = false;
        }
    }
    return {ms, ok};
}

// ---------------------------------------------------------------------------
// Command line
// ---------------------------------------------------------------------------

std::vector<std::string> split(const std::string& text, char separator) {
    std::vector<std::string> fields;
    size_t start = 0;
    for (;;) {
        const size_t end = text.find(separator, start);
        fields.push_back(text.substr(start, end - start));
        if (end == std::string::npos) {
            return fields;
        }
        start = end + 1;
    }
}

/// A decimal number with nothing else around it.
uint64_t parse_u64(const std::string& text, const char* what) {
    if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos) {
        throw Failure(std::string("bad ") + what + " `" + text + "`");
    }
    return std::strtoull(text.c_str(), nullptr, 10);
}

Op parse_op(const std::string& text) {
    if (text == "sum") return Op::Sum;
    if (text == "min") return Op::Min;
    if (text == "max") return Op::Max;
    throw Failure("unknown reduction `" + text + "` (sum, min, max)");
}

ScanKind parse_scan_kind(const std::string& text) {
    if (text == "inclusive") return ScanKind::Inclusive;
    if (text == "exclusive") return ScanKind::Exclusive;
    throw Failure("unknown scan `" + text + "` (inclusive, exclusive)");
}

/// The peer a case names, as far as its first fields tell.
std::string peer_of(const std::string& spec) {
    const std::vector<std::string> f = split(spec, ':');
    if (f[0] == "reduce" && f.size() > 1) {
        if (f[1] == "sum") return "CUB DeviceReduce::Sum";
        if (f[1] == "min") return "CUB DeviceReduce::Min";
        if (f[1] == "max") return "CUB DeviceReduce::Max";
    }
    if (f[0] == "geam") return "cuBLAS Sgeam";
    if (f[0] == "histogram") return "CUB DeviceHistogram::HistogramEven";
    if (f[0] == "scan" && f.size() > 2 && (f[1] == "inclusive" || f[1] == "exclusive")) {
        const std::string call = f[1] == "inclusive" ? "CUB DeviceScan::Inclusive" : "CUB DeviceScan::Exclusive";
        if (f[2] == "sum") return call + "Sum";
        if (f[2] == "min" || f[2] == "max") return call + "Scan (" + f[2] + ")";
    }
    if (f[0] == "scan_rows") return "CUB DeviceScan::InclusiveSumByKey";
    if (f[0] == "select_flagged") return "CUB DeviceSelect::Flagged";
    if (f[0] == "select_if") return "CUB DeviceSelect::If";
    if ((f[0] == "sort_keys" || f[0] == "sort_pairs") && f.size() > 2) {
        const std::string call = f[0] == "sort_keys" ? "CUB DeviceRadixSort::SortKeys"
                                                     : "CUB DeviceRadixSort::SortPairs";
        return f[2] == "desc" ? call + "Descending" : call;
    }
    if (f[0] == "segmented_sort") return "CUB DeviceSegmentedSort::SortPairsDescending";
    if (f[0] == "sgemm") return "cuBLAS Sgemm";
    if (f[0] == "sgemm_tf32") return "cuBLAS TF32 (best of Sgemm, Lt)";
    if (f[0] == "sgemm_3xtf32_cutlass") return "CUTLASS 3xTF32";
    if (f[0] == "sgemm_batched") return "cuBLAS SgemmStridedBatched";
    if (f[0] == "sgemm_batched_tf32") return "cuBLAS TF32 strided batched (best of Sgemm, GemmEx)";
    if (f[0] == "memcpy") return "cudaMemcpy D2D";
    if (f[0] == "curand" && f.size() > 2) return rand_peer(f[1], f[2]);
    return "unknown";
}

Outcome run_case(const Device& device, int reps, const std::string& spec) {
    const std::vector<std::string> f = split(spec, ':');
    if (f[0] == "reduce" && f.size() == 4) {
        const Op op = parse_op(f[1]);
        const uint64_t n = parse_u64(f[3], "n");
        if (f[2] == "f32") return reduce_case<float>(device, reps, op, n, F32Values{});
        if (f[2] == "i32") return reduce_case<int32_t>(device, reps, op, n, I32Values{});
        if (f[2] == "u32") return reduce_case<uint32_t>(device, reps, op, n, U32Values{});
        throw Failure("unknown element type `" + f[2] + "` (f32, i32, u32)");
    }
    if (f[0] == "geam" && f.size() == 4) {
        if (f[1] != "f32") {
            throw Failure("geam supports f32 only");
        }
        return geam_case(device, reps, parse_u64(f[2], "w"), parse_u64(f[3], "h"));
    }
    if (f[0] == "histogram" && f.size() == 3) {
        return histogram_case(device, reps, parse_data(f[1]), parse_u64(f[2], "n"));
    }
    if (f[0] == "scan" && f.size() == 5) {
        const ScanKind kind = parse_scan_kind(f[1]);
        const Op op = parse_op(f[2]);
        const uint64_t n = parse_u64(f[4], "n");
        if (f[3] == "f32") return scan_case<float>(device, reps, kind, op, n);
        if (f[3] == "i32") return scan_case<int32_t>(device, reps, kind, op, n);
        if (f[3] == "u32") return scan_case<uint32_t>(device, reps, kind, op, n);
        if (f[3] == "u64") return scan_case<uint64_t>(device, reps, kind, op, n);
        throw Failure("unknown element type `" + f[3] + "` (f32, i32, u32, u64)");
    }
    if (f[0] == "scan_rows" && f.size() == 5) {
        if (f[1] != "sum" || f[2] != "f32") {
            throw Failure("scan_rows supports sum of f32 only");
        }
        return scan_rows_case(device, reps, parse_u64(f[3], "rows"), parse_u64(f[4], "width"));
    }
    if ((f[0] == "select_flagged" || f[0] == "select_if") && f.size() == 3) {
        const Select how = f[0] == "select_flagged" ? Select::Flagged : Select::If;
        const uint64_t n = parse_u64(f[2], "n");
        if (f[1] == "u32") return select_case<uint32_t>(device, reps, how, n);
        if (f[1] == "f32") return select_case<float>(device, reps, how, n);
        throw Failure("unknown element type `" + f[1] + "` (u32, f32)");
    }
    if (f[0] == "sort_keys" && f.size() == 4) {
        const Order order = parse_order(f[2]);
        const uint64_t n = parse_u64(f[3], "n");
        if (f[1] == "u32") return sort_case<uint32_t, false>(device, reps, order, n);
        if (f[1] == "i32") return sort_case<int32_t, false>(device, reps, order, n);
        if (f[1] == "f32") return sort_case<float, false>(device, reps, order, n);
        if (f[1] == "u64") return sort_case<uint64_t, false>(device, reps, order, n);
        throw Failure("unknown key type `" + f[1] + "` (u32, i32, f32, u64)");
    }
    if (f[0] == "sort_pairs" && f.size() == 4) {
        const Order order = parse_order(f[2]);
        const uint64_t n = parse_u64(f[3], "n");
        if (f[1] == "u32") return sort_case<uint32_t, true>(device, reps, order, n);
        if (f[1] == "f32") return sort_case<float, true>(device, reps, order, n);
        throw Failure("unknown key type `" + f[1] + "` (u32, f32)");
    }
    if (f[0] == "segmented_sort" && f.size() == 5) {
        if (f[1] != "f32" || f[2] != "desc") {
            throw Failure("segmented_sort supports f32 in descending order only");
        }
        return segmented_sort_case(device, reps, parse_u64(f[3], "rows"), parse_u64(f[4], "width"));
    }
    if ((f[0] == "sgemm" || f[0] == "sgemm_tf32") && f.size() == 4) {
        const GemmMath math = f[0] == "sgemm" ? GemmMath::Fp32 : GemmMath::Tf32;
        return sgemm_case(device, reps, math, parse_u64(f[1], "m"), parse_u64(f[2], "n"), parse_u64(f[3], "k"));
    }
    if ((f[0] == "sgemm_batched" || f[0] == "sgemm_batched_tf32") && f.size() == 5) {
        const GemmMath math = f[0] == "sgemm_batched" ? GemmMath::Fp32 : GemmMath::Tf32;
        return sgemm_batched_case(device, reps, math, parse_u64(f[1], "count"), parse_u64(f[2], "m"),
                                  parse_u64(f[3], "n"), parse_u64(f[4], "k"));
    }
    if (f[0] == "sgemm_3xtf32_cutlass" && f.size() == 4) {
#ifdef PEERS_CUTLASS
        return cutlass_3xtf32_case(device, reps, parse_u64(f[1], "m"), parse_u64(f[2], "n"), parse_u64(f[3], "k"));
#else
        throw Failure("CUTLASS not available: the peer program was built without its headers (set WARPSPEED_CUTLASS)");
#endif
    }
    if (f[0] == "memcpy" && f.size() == 2) {
        return memcpy_case(device, reps, parse_u64(f[1], "bytes"));
    }
    if (f[0] == "curand" && f.size() == 4) {
        return curand_case(device, reps, parse_rand_gen(f[1]), parse_distribution(f[2]), parse_u64(f[3], "n"));
    }
    throw Failure(
        "unknown case (reduce:<sum|min|max>:<f32|i32|u32>:<n>, geam:f32:<w>:<h>, histogram:<data>:<n>, "
        "scan:<inclusive|exclusive>:<sum|min|max>:<f32|i32|u32|u64>:<n>, scan_rows:sum:f32:<rows>:<width>, "
        "select_flagged:<u32|f32>:<n>, select_if:<u32|f32>:<n>, "
        "sort_keys:<u32|i32|f32|u64>:<asc|desc>:<n>, sort_pairs:<u32|f32>:<asc|desc>:<n>, "
        "segmented_sort:f32:desc:<rows>:<width>, "
        "sgemm:<m>:<n>:<k>, sgemm_tf32:<m>:<n>:<k>, sgemm_batched:<count>:<m>:<n>:<k>, "
        "sgemm_batched_tf32:<count>:<m>:<n>:<k>, curand:<gen>:<dist>:<n>, memcpy:<bytes>)");
}

/// `text` as a JSON string literal.
std::string json_string(const std::string& text) {
    std::string out = "\"";
    for (const char ch : text) {
        const auto c = static_cast<unsigned char>(ch);
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
            if (c < 0x20) {
                char escaped[8];
                std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
                out += escaped;
            } else {
                out += ch;
            }
        }
    }
    return out + "\"";
}

void print_line(const std::string& line) {
    std::fputs(line.c_str(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
    const char* usage = "usage: peers <reps> <case>...\n"
                        "cases: reduce:<sum|min|max>:<f32|i32|u32>:<n>  geam:f32:<w>:<h>  histogram:<data>:<n>  "
                        "scan:<inclusive|exclusive>:<sum|min|max>:<f32|i32|u32|u64>:<n>  "
                        "scan_rows:sum:f32:<rows>:<width>  select_flagged:<u32|f32>:<n>  select_if:<u32|f32>:<n>  "
                        "sort_keys:<u32|i32|f32|u64>:<asc|desc>:<n>  sort_pairs:<u32|f32>:<asc|desc>:<n>  "
                        "segmented_sort:f32:desc:<rows>:<width>  "
                        "sgemm:<m>:<n>:<k>  sgemm_tf32:<m>:<n>:<k>  sgemm_batched:<count>:<m>:<n>:<k>  "
                        "sgemm_batched_tf32:<count>:<m>:<n>:<k>  curand:<gen>:<dist>:<n>  memcpy:<bytes>\n";
    if (argc < 3) {
        std::fputs(usage, stderr);
        return 2;
    }
    int reps = 0;
    try {
        const uint64_t r = parse_u64(argv[1], "reps");
        if (r == 0 || r > 1000000) {
            throw Failure("reps must be in 1..=1000000");
        }
        reps = static_cast<int>(r);
    } catch (const Failure& e) {
        std::fprintf(stderr, "peers: %s\n%s", e.what(), usage);
        return 2;
    }

    // The device once for all cases; if it cannot be had, every case says why.
    std::string device_error;
    std::unique_ptr<Device> device;
    try {
        device = std::make_unique<Device>();
    } catch (const std::exception& e) {
        device_error = e.what();
    }

    bool all_measured = true;
    for (int a = 2; a < argc; ++a) {
        const std::string spec = argv[a];
        const std::string head = "{\"case\":" + json_string(spec) + ",\"peer\":" + json_string(peer_of(spec));
        try {
            if (device == nullptr) {
                throw Failure(device_error);
            }
            std::fprintf(stderr, "peers: %s\n", spec.c_str());
            const Outcome outcome = run_case(*device, reps, spec);
            char tail[96];
            std::snprintf(tail, sizeof tail, ",\"ms\":%.6f,\"ok\":%s}", outcome.ms, outcome.ok ? "true" : "false");
            print_line(head + tail);
        } catch (const std::exception& e) {
            all_measured = false;
            // Clear a non-sticky error so that the next case starts clean.
            cudaGetLastError();
            print_line(head + ",\"error\":" + json_string(e.what()) + "}");
        }
    }
    return all_measured ? 0 : 1;
}
