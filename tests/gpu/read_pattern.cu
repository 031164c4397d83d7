// How fast can a decode matmul's weights be read, by access pattern alone (no arithmetic)? The
// split decode kernel (kernels/cuda/matmul_decode_split.cu) reads, at one row of x, about half
// of the copy bandwidth; this tells the layout's share of that from the kernel's. Each kernel
// XORs what it loads into one word a warp, and reads a matrix of PQ2_0S rows of 5120 inputs
// (five 272-byte runs, 1360 bytes a row: kernels/formats.h) in one of these ways (GB/s counts
// those 1360 bytes a row, whatever the layout):
//   contiguous  2 KB a warp at a time, the whole matrix as one array (the copy bound);
//   split       the split kernel's: a warp's tile is 16 rows, one run of each, in two halves
//               ("units": 128 code bytes and 8 scale bytes of each row), AHEAD units in flight;
//   aligned     the split kernel's, with 16 bytes of padding after each run's scales (288-byte
//               runs, 1,440-byte rows), so every 128 bytes of codes are 32-byte sectors of their own;
//   interleaved the split kernel's 272-byte runs, stored tile by tile: the 16 rows' runs of a
//               slice one after another (4,352 bytes);
//   tiled       the same units with each tile's run stored as one 4,352-byte piece (16 rows'
//               codes, then their scales), so a unit is 2 KB + 128 bytes, contiguous.
// Built and run by tests/gpu/run.sh patterns: nvcc -O3 -arch=sm_90 read_pattern.cu.
#include <cuda_runtime.h>

#include "cuda_check.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <type_traits>
#include <vector>

namespace {

constexpr int kWarps = 8;
constexpr int kRunBytes = 272, kScaleBytes = 16, kSlices = 5, kRowBytes = kSlices * kRunBytes;
constexpr int kTileRows = 16, kTileRunBytes = kTileRows * kRunBytes;

__device__ __forceinline__ uint2 load_once(const uint8_t* p) {
    uint2 v;
    asm volatile("ld.global.nc.L1::no_allocate.v2.u32 {%0, %1}, [%2];" : "=r"(v.x), "=r"(v.y) : "l"(p));
    return v;
}

// Ten 8-byte loads a thread: what one unit of the split kernel is to thread (g, tig).
struct Unit {
    uint2 v[10];
};

__device__ __forceinline__ uint32_t fold(const Unit& u) {
    uint32_t x = 0;
#pragma unroll
    for (int i = 0; i < 10; ++i) x ^= u.v[i].x ^ u.v[i].y;
    return x;
}

__global__ void contiguous_kernel(const uint8_t* w, size_t bytes, uint32_t* sink) {
    const int lane = threadIdx.x & 31;
    const size_t warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, warps = (gridDim.x * blockDim.x) >> 5;
    uint32_t x = 0;
    for (size_t c = warp; c * 2048 < bytes; c += warps) {
        uint2 v[8];
#pragma unroll
        for (int i = 0; i < 8; ++i) v[i] = load_once(w + c * 2048 + i * 256 + lane * 8);
#pragma unroll
        for (int i = 0; i < 8; ++i) x ^= v[i].x ^ v[i].y;
    }
    if (x == 0x12345678u) sink[warp] = x;
}

enum class Layout { Rows, Aligned, Interleaved, Tiled };

// Where row `row`'s run of `slice` starts (Rows, Aligned, Interleaved), and its codes' offset in it.
template <Layout L>
__device__ __forceinline__ const uint8_t* run_at(const uint8_t* w, int64_t row, int slice) {
    if constexpr (L == Layout::Rows) return w + static_cast<size_t>(row) * kRowBytes + slice * kRunBytes;
    if constexpr (L == Layout::Aligned) return w + static_cast<size_t>(row) * (kSlices * 288) + slice * 288;
    return w + ((static_cast<size_t>(row / kTileRows) * kSlices + slice) * kTileRows + row % kTileRows) *
                   kRunBytes;
}
template <Layout L>
constexpr int kCodesAt = L == Layout::Aligned ? 32 : kScaleBytes;

// Unit u of the warp's sequence: tile first + kWarps (u / 2), half u % 2, of `slice`.
template <Layout L>
__device__ __forceinline__ void load_unit(const uint8_t* w, int64_t rows, int64_t tile, int slice, int half,
                                          int g, int tig, int lane, Unit& u) {
    if constexpr (L != Layout::Tiled) {
        const uint8_t* r0 = run_at<L>(w, min(tile * kTileRows + g, rows - 1), slice);
        const uint8_t* r1 = run_at<L>(w, min(tile * kTileRows + g + 8, rows - 1), slice);
        const int codes = kCodesAt<L> + 128 * half + 8 * tig;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            u.v[j] = load_once(r0 + codes + 32 * j);
            u.v[4 + j] = load_once(r1 + codes + 32 * j);
        }
        u.v[8] = load_once(r0 + 8 * half);
        u.v[9] = load_once(r1 + 8 * half);
    } else {
        const uint8_t* t = w + (static_cast<size_t>(tile) * kSlices + slice) * kTileRunBytes;
        const uint8_t* codes = t + 2048 * half;
#pragma unroll
        for (int j = 0; j < 8; ++j) u.v[j] = load_once(codes + 256 * j + 8 * lane);
        const uint8_t* scales = t + 4096 + 128 * half;  // the 16 rows' 8 scale bytes of this half
        u.v[8] = load_once(scales + 8 * (lane & 15));
        u.v[9] = make_uint2(0, 0);
    }
}

template <Layout L, int AHEAD>
__global__ void __launch_bounds__(kWarps * 32, 2)
    unit_kernel(const uint8_t* w, int64_t rows, int groups, uint32_t* sink) {
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, tig = lane & 3;
    const int group = blockIdx.x, slice = blockIdx.y;
    const int64_t tiles = (rows + kTileRows - 1) / kTileRows;
    const int64_t t0 = tiles * group / groups, t1 = tiles * (group + 1) / groups, first = t0 + warp;
    const int units = first < t1 ? 2 * static_cast<int>((t1 - first + kWarps - 1) / kWarps) : 0;
    Unit buf[AHEAD];
#pragma unroll
    for (int k = 0; k < AHEAD; ++k)
        if (k < units) load_unit<L>(w, rows, first + kWarps * (k >> 1), slice, k & 1, g, tig, lane, buf[k]);
    uint32_t x = 0;
    for (int u = 0; u < units; u += AHEAD) {
#pragma unroll
        for (int k = 0; k < AHEAD; ++k) {
            if (u + k < units) x ^= fold(buf[k]);
            const int next = u + k + AHEAD;
            if (next < units)
                load_unit<L>(w, rows, first + kWarps * (next >> 1), slice, next & 1, g, tig, lane, buf[k]);
        }
    }
    if (x == 0x12345678u) sink[blockIdx.x] = x;
}

template <typename F>
float time_us(F&& launch, int copies) {
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    for (int i = 0; i < copies; ++i) launch(i);  // warm-up
    constexpr int kIters = 20;
    CHECK(cudaEventRecord(a));
    for (int i = 0; i < kIters; ++i) launch(i % copies);
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    CHECK(cudaGetLastError());
    return ms * 1e3f / kIters;
}

}  // namespace

int main() {
    cudaDeviceProp prop{};
    CHECK(cudaGetDeviceProperties(&prop, 0));
    const int sms = prop.multiProcessorCount;
    uint32_t* sink = nullptr;
    CHECK(cudaMalloc(&sink, 1 << 24));
    // The model's 5120-input matrices: attention k+v, GDN qkv+z, FFN gate+up, the output head.
    for (const int64_t rows : {int64_t{2048}, int64_t{16384}, int64_t{34816}, int64_t{248320}}) {
        const size_t bytes = static_cast<size_t>(rows) * kRowBytes;
        // Enough copies that together they fill twice the L2, so each call reads DRAM.
        const int copies =
            static_cast<int>(std::max<size_t>(1, (2 * size_t(prop.l2CacheSize) + bytes - 1) / bytes));
        // The aligned layout's rows are 288 / 272 longer; tiles are whole (rows padded to 16).
        const size_t alloc = static_cast<size_t>((rows + 15) / 16 * 16) * kSlices * 288 + 4096;
        std::vector<uint8_t*> w(copies);
        for (auto& p : w) {
            CHECK(cudaMalloc(&p, alloc));
            CHECK(cudaMemset(p, 0x5a, alloc));
        }
        const int groups = std::max(1, std::min<int>(2 * sms / kSlices, static_cast<int>((rows + 15) / 16)));
        const dim3 grid(groups, kSlices);
        auto report = [&](const char* name, int ahead, float us) {
            std::printf(
                "{\"pattern\": \"%s\", \"rows\": %lld, \"ahead\": %d, \"us\": %.2f, \"GB_s\": %.0f}\n", name,
                static_cast<long long>(rows), ahead, us, bytes / us * 1e-3);
        };
        report("contiguous", 0,
               time_us([&](int i) { contiguous_kernel<<<sms * 8, 256>>>(w[i], bytes, sink); }, copies));
        auto units = [&](const char* name, auto layout) {
            constexpr Layout L = decltype(layout)::value;
            report(name, 1,
                   time_us([&](int i) { unit_kernel<L, 1><<<grid, kWarps * 32>>>(w[i], rows, groups, sink); },
                           copies));
            report(name, 2,
                   time_us([&](int i) { unit_kernel<L, 2><<<grid, kWarps * 32>>>(w[i], rows, groups, sink); },
                           copies));
        };
        units("split", std::integral_constant<Layout, Layout::Rows>{});
        units("aligned", std::integral_constant<Layout, Layout::Aligned>{});
        units("interleaved", std::integral_constant<Layout, Layout::Interleaved>{});
        units("tiled", std::integral_constant<Layout, Layout::Tiled>{});
        for (auto* p : w) CHECK(cudaFree(p));
    }
    CHECK(cudaFree(sink));
    return 0;
}
