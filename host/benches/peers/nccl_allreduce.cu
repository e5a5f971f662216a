// nccl_allreduce: NCCL's own all-reduce time on this host's GPUs, the peer of
// warpspeed's multi-GPU benchmark. Measurement tooling only: it is not part of
// the library and nothing links it.
//
// NCCL is loaded at run time, exactly as the library loads it: the path in
// $WARPSPEED_NCCL if that is set, else "libnccl.so.2" through the dynamic
// loader's search path (LD_LIBRARY_PATH, ldconfig). No nccl.h is needed to
// build it: the few NCCL types and prototypes used are declared below.
//
// Build (CUDA 12 or 13):
//     nvcc -O3 -std=c++17 nccl_allreduce.cu -o nccl_allreduce -ldl
//
// Usage:
//     nccl_allreduce <gpus> <reps> <bytes>...
// e.g.
//     export NCCL_NVLS_ENABLE=0 WARPSPEED_NCCL=/path/to/libnccl.so.2
//     ./nccl_allreduce 8 50 1048576 67108864 1073741824
//
// GPUs 0..gpus-1 of this process form one communicator (ncclCommInitAll),
// each with its own non-blocking stream and one float32 buffer of the largest
// size; every all-reduce is an in-place sum over `bytes / 4` floats (bytes
// must be a positive multiple of 4).
//
// First, once: GPU g's buffer is filled with g + 1, one all-reduce runs, and
// a few values on every GPU must equal gpus * (gpus + 1) / 2; then
//     {"check":"ok"}
// is printed (or the program exits 1 with a message). The buffers are zeroed
// before the timings, so the timed sums stay finite.
//
// Then, per size, in the order given: 5 warm-up all-reduces, then `reps`
// all-reduces each timed on its own by the host's steady clock around
//     ncclGroupStart; ncclAllReduce on every GPU; ncclGroupEnd;
//     cudaStreamSynchronize on every stream
// and one JSON object on its own line of stdout:
//     {"gpus":G,"bytes":B,"median_us":T,"algbw_gbs":A,"busbw_gbs":W}
// with T the median, A = B / T (GB/s, 1 GB = 1e9 bytes) and
// W = A * 2 * (G - 1) / G, nccl-tests' bus bandwidth of an all-reduce (so 0
// for one GPU). Diagnostics go to stderr. Exit status: 0 on success, 1 on a
// CUDA, NCCL or check failure, 2 on a usage error.
//
// NVLink multicast (NVLS): this program sets nothing about it and leaves
// NCCL's environment as it finds it; it warns on stderr when
// NCCL_NVLS_ENABLE is not "0".

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

// ---------------------------------------------------------------------------
// The part of nccl.h used here (NVIDIA/nccl, src/nccl.h.in)
// ---------------------------------------------------------------------------

typedef struct ncclComm* ncclComm_t;
typedef int ncclResult_t;   // C enum: int-sized
typedef int ncclDataType_t; // C enum: int-sized
typedef int ncclRedOp_t;    // C enum: int-sized

constexpr ncclResult_t ncclSuccess = 0;
constexpr ncclDataType_t ncclFloat32 = 7;
constexpr ncclRedOp_t ncclSum = 0;

typedef ncclResult_t (*ncclGetVersion_t)(int* version);
typedef ncclResult_t (*ncclCommInitAll_t)(ncclComm_t* comm, int ndev, const int* devlist);
typedef ncclResult_t (*ncclCommDestroy_t)(ncclComm_t comm);
typedef ncclResult_t (*ncclCommGetAsyncError_t)(ncclComm_t comm, ncclResult_t* asyncError);
typedef ncclResult_t (*ncclAllReduce_t)(const void* sendbuff, void* recvbuff, size_t count,
                                        ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                        cudaStream_t stream);
typedef ncclResult_t (*ncclGroupStart_t)();
typedef ncclResult_t (*ncclGroupEnd_t)();
typedef const char* (*ncclGetErrorString_t)(ncclResult_t result);

/// The NCCL entry points, resolved from the loaded library.
struct Nccl {
    ncclGetVersion_t GetVersion = nullptr;
    ncclCommInitAll_t CommInitAll = nullptr;
    ncclCommDestroy_t CommDestroy = nullptr;
    ncclCommGetAsyncError_t CommGetAsyncError = nullptr;
    ncclAllReduce_t AllReduce = nullptr;
    ncclGroupStart_t GroupStart = nullptr;
    ncclGroupEnd_t GroupEnd = nullptr;
    ncclGetErrorString_t GetErrorString = nullptr;
};

Nccl nccl;

// ---------------------------------------------------------------------------
// Errors: every CUDA and NCCL return code is checked
// ---------------------------------------------------------------------------

[[noreturn]] void fail_cuda(const char* file, int line, const char* call, cudaError_t status) {
    std::fprintf(stderr, "%s:%d: %s: %s (%s)\n", file, line, call, cudaGetErrorName(status),
                 cudaGetErrorString(status));
    std::exit(1);
}

[[noreturn]] void fail_nccl(const char* file, int line, const char* call, ncclResult_t result) {
    const char* text = nccl.GetErrorString != nullptr ? nccl.GetErrorString(result) : nullptr;
    std::fprintf(stderr, "%s:%d: %s: NCCL error %d (%s)\n", file, line, call, result,
                 text != nullptr ? text : "no error string");
    std::exit(1);
}

#define CUDA_CHECK(call)                                                                           \
    do {                                                                                           \
        cudaError_t status_ = (call);                                                              \
        if (status_ != cudaSuccess) fail_cuda(__FILE__, __LINE__, #call, status_);                 \
    } while (0)

#define NCCL_CHECK(call)                                                                           \
    do {                                                                                           \
        ncclResult_t result_ = (call);                                                             \
        if (result_ != ncclSuccess) fail_nccl(__FILE__, __LINE__, #call, result_);                 \
    } while (0)

// ---------------------------------------------------------------------------
// Loading NCCL
// ---------------------------------------------------------------------------

/// dlsym's `name` from `lib`, or exits naming the symbol and the library.
void* symbol(void* lib, const char* path, const char* name) {
    dlerror();  // clear any earlier error
    void* p = dlsym(lib, name);
    if (p == nullptr) {
        const char* err = dlerror();
        std::fprintf(stderr, "%s: symbol %s not found: %s\n", path, name,
                     err != nullptr ? err : "null symbol");
        std::exit(1);
    }
    return p;
}

/// Opens NCCL ($WARPSPEED_NCCL, else libnccl.so.2) and resolves the entry
/// points; exits with the dlopen error and how to fix it on failure.
void load_nccl() {
    const char* env = std::getenv("WARPSPEED_NCCL");
    const char* path = (env != nullptr && env[0] != '\0') ? env : "libnccl.so.2";
    void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
        const char* err = dlerror();
        std::fprintf(stderr,
                     "could not load NCCL from %s: %s\n"
                     "install NCCL (libnccl2 from NVIDIA's CUDA repositories, or PyPI's "
                     "nvidia-nccl-cu12 / nvidia-nccl-cu13, whose lib/ folder holds libnccl.so.2), "
                     "then set WARPSPEED_NCCL=/path/to/libnccl.so.2 or add its folder to "
                     "LD_LIBRARY_PATH\n",
                     path, err != nullptr ? err : "unknown dlopen error");
        std::exit(1);
    }
    nccl.GetVersion = reinterpret_cast<ncclGetVersion_t>(symbol(lib, path, "ncclGetVersion"));
    nccl.CommInitAll = reinterpret_cast<ncclCommInitAll_t>(symbol(lib, path, "ncclCommInitAll"));
    nccl.CommDestroy = reinterpret_cast<ncclCommDestroy_t>(symbol(lib, path, "ncclCommDestroy"));
    nccl.CommGetAsyncError =
        reinterpret_cast<ncclCommGetAsyncError_t>(symbol(lib, path, "ncclCommGetAsyncError"));
    nccl.AllReduce = reinterpret_cast<ncclAllReduce_t>(symbol(lib, path, "ncclAllReduce"));
    nccl.GroupStart = reinterpret_cast<ncclGroupStart_t>(symbol(lib, path, "ncclGroupStart"));
    nccl.GroupEnd = reinterpret_cast<ncclGroupEnd_t>(symbol(lib, path, "ncclGroupEnd"));
    nccl.GetErrorString =
        reinterpret_cast<ncclGetErrorString_t>(symbol(lib, path, "ncclGetErrorString"));

    int code = 0;
    NCCL_CHECK(nccl.GetVersion(&code));
    // NCCL >= 2.9: major*10000 + minor*100 + patch; older: major*1000 + minor*100 + patch.
    int major, minor, patch;
    if (code >= 10000) {
        major = code / 10000, minor = code % 10000 / 100, patch = code % 100;
    } else {
        major = code / 1000, minor = code % 1000 / 100, patch = code % 100;
    }
    std::fprintf(stderr, "NCCL %d.%d.%d from %s\n", major, minor, patch, path);
}

// ---------------------------------------------------------------------------
// Arguments
// ---------------------------------------------------------------------------

[[noreturn]] void usage(const char* msg) {
    std::fprintf(stderr,
                 "%s\nusage: nccl_allreduce <gpus> <reps> <bytes>...\n"
                 "  gpus: GPUs 0..gpus-1 (at least 1); reps: timed all-reduces per size (at "
                 "least 1);\n"
                 "  bytes: buffer sizes, each a positive multiple of 4 (float32)\n",
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

/// The median of `v` (sorted in place); the mean of the two middle values
/// for an even count.
double median(std::vector<double>& v) {
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 4) usage("missing arguments");
    uint64_t gpus64 = parse_positive(argv[1], "gpus must be a positive integer");
    uint64_t reps64 = parse_positive(argv[2], "reps must be a positive integer");
    if (gpus64 > 1024) usage("gpus is too large");
    if (reps64 > 100000000) usage("reps is too large");
    const int gpus = static_cast<int>(gpus64);
    const size_t reps = static_cast<size_t>(reps64);
    std::vector<size_t> sizes;
    for (int i = 3; i < argc; ++i) {
        uint64_t b = parse_positive(argv[i], "bytes must be a positive integer");
        if (b % sizeof(float) != 0) usage("bytes must be a multiple of 4 (float32 elements)");
        sizes.push_back(static_cast<size_t>(b));
    }
    const size_t max_bytes = *std::max_element(sizes.begin(), sizes.end());
    const size_t max_count = max_bytes / sizeof(float);

    const char* nvls = std::getenv("NCCL_NVLS_ENABLE");
    if (nvls == nullptr || std::strcmp(nvls, "0") != 0) {
        std::fprintf(stderr,
                     "warning: NCCL_NVLS_ENABLE is %s%s%s, not \"0\": NCCL may use NVLink "
                     "multicast (NVLS) where the system has it; set NCCL_NVLS_ENABLE=0 to "
                     "measure without it\n",
                     nvls == nullptr ? "unset" : "\"", nvls == nullptr ? "" : nvls,
                     nvls == nullptr ? "" : "\"");
    }

    int devices = 0;
    CUDA_CHECK(cudaGetDeviceCount(&devices));
    if (gpus > devices) {
        std::fprintf(stderr, "asked for %d GPUs, this process sees %d\n", gpus, devices);
        return 2;
    }

    load_nccl();

    // One communicator per GPU, GPUs 0..gpus-1 in order.
    std::vector<int> devlist(gpus);
    for (int g = 0; g < gpus; ++g) devlist[g] = g;
    std::vector<ncclComm_t> comms(gpus, nullptr);
    NCCL_CHECK(nccl.CommInitAll(comms.data(), gpus, devlist.data()));

    std::vector<cudaStream_t> streams(gpus, nullptr);
    std::vector<float*> bufs(gpus, nullptr);
    for (int g = 0; g < gpus; ++g) {
        CUDA_CHECK(cudaSetDevice(g));
        CUDA_CHECK(cudaStreamCreateWithFlags(&streams[g], cudaStreamNonBlocking));
        CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&bufs[g]), max_bytes));
    }

    // One in-place sum all-reduce of `count` floats on every GPU, waited for.
    auto all_reduce = [&](size_t count) {
        NCCL_CHECK(nccl.GroupStart());
        for (int g = 0; g < gpus; ++g) {
            NCCL_CHECK(nccl.AllReduce(bufs[g], bufs[g], count, ncclFloat32, ncclSum, comms[g],
                                      streams[g]));
        }
        NCCL_CHECK(nccl.GroupEnd());
        for (int g = 0; g < gpus; ++g) CUDA_CHECK(cudaStreamSynchronize(streams[g]));
    };

    // Correctness, once, over the largest size: GPU g holds g + 1 everywhere.
    {
        std::vector<float> host(max_count);
        for (int g = 0; g < gpus; ++g) {
            std::fill(host.begin(), host.end(), static_cast<float>(g + 1));
            CUDA_CHECK(cudaSetDevice(g));
            CUDA_CHECK(cudaMemcpy(bufs[g], host.data(), max_bytes, cudaMemcpyHostToDevice));
            // The copy ran on the legacy default stream, which the non-blocking
            // streams do not wait for: let it finish before NCCL reads.
            CUDA_CHECK(cudaDeviceSynchronize());
        }
        all_reduce(max_count);
        const float expected = static_cast<float>(gpus) * static_cast<float>(gpus + 1) / 2.0f;
        const size_t probes[] = {0, 1, max_count / 3, max_count / 2, max_count - 2, max_count - 1};
        for (int g = 0; g < gpus; ++g) {
            CUDA_CHECK(cudaSetDevice(g));
            for (size_t i : probes) {
                if (i >= max_count) continue;
                float v = 0.0f;
                CUDA_CHECK(cudaMemcpy(&v, bufs[g] + i, sizeof(float), cudaMemcpyDeviceToHost));
                if (v != expected) {
                    std::fprintf(stderr,
                                 "check failed: GPU %d element %zu is %g after the all-reduce, "
                                 "expected %g\n",
                                 g, i, static_cast<double>(v), static_cast<double>(expected));
                    return 1;
                }
            }
            // Zeros from here on: the timed sums stay 0 instead of growing to inf.
            CUDA_CHECK(cudaMemset(bufs[g], 0, max_bytes));
        }
        // The memsets ran on the legacy default streams: finish them before
        // the timed all-reduces on the non-blocking streams.
        for (int g = 0; g < gpus; ++g) {
            CUDA_CHECK(cudaSetDevice(g));
            CUDA_CHECK(cudaDeviceSynchronize());
        }
        std::printf("{\"check\":\"ok\"}\n");
        std::fflush(stdout);
    }

    std::vector<double> times(reps);
    for (size_t bytes : sizes) {
        const size_t count = bytes / sizeof(float);
        for (int w = 0; w < 5; ++w) all_reduce(count);
        for (size_t r = 0; r < reps; ++r) {
            auto start = std::chrono::steady_clock::now();
            all_reduce(count);
            auto stop = std::chrono::steady_clock::now();
            times[r] = std::chrono::duration<double>(stop - start).count();
        }
        const double t = median(times);  // seconds
        const double algbw = static_cast<double>(bytes) / t / 1e9;
        const double busbw = algbw * 2.0 * (gpus - 1) / gpus;
        std::printf("{\"gpus\":%d,\"bytes\":%zu,\"median_us\":%.3f,\"algbw_gbs\":%.3f,"
                    "\"busbw_gbs\":%.3f}\n",
                    gpus, bytes, t * 1e6, algbw, busbw);
        std::fflush(stdout);
    }

    // Errors NCCL noticed in the background would have failed a call above;
    // ask once more before tearing down.
    for (int g = 0; g < gpus; ++g) {
        ncclResult_t async_error = ncclSuccess;
        NCCL_CHECK(nccl.CommGetAsyncError(comms[g], &async_error));
        NCCL_CHECK(async_error);
    }
    for (int g = 0; g < gpus; ++g) NCCL_CHECK(nccl.CommDestroy(comms[g]));
    for (int g = 0; g < gpus; ++g) {
        CUDA_CHECK(cudaSetDevice(g));
        CUDA_CHECK(cudaFree(bufs[g]));
        CUDA_CHECK(cudaStreamDestroy(streams[g]));
    }
    return 0;
}
