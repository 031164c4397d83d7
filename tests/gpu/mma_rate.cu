// How many m16n8k16 fp16 mma (fp32 accumulate: the decode matmuls' instruction,
// kernels/cuda/mma.cuh) can an SM issue, by warps an SM and independent accumulator chains a warp?
// The decode matmuls do one such mma per 256 weights: 64 per 16 x 1024 tile-slice, so an SM
// streaming its share of the copy rate (~32 GB/s, ~7.5 tile-slices a µs) needs ~480 a µs. The
// kernels: `mma` (chains of mma only), `decode` (each mma fed as the decode kernels feed it:
// four LOP3s building its A fragment from two code words, one shared-memory load of x, and per
// iteration a shift of each word and its next value) and `decode_no_load` (the same with x in
// registers, no shared-memory load), `s8_mask` and `s8_shift` (int8 x, counted as two each); on sm_90, also
// `wgmma_decode` (the warpgroup mma with the decoded fragment as its register operand and x read from shared
// memory by descriptor; one counts as a warp's m16n8k16), `wgmma_pipe` (the same with two fragment sets in
// turn), `wgmma_chain_nN` (one accumulator chain of N columns, groups of 2-8) and `wgmma_blocks_nN` (the
// wgmma decode kernel's structure, matmul_decode_wgmma.cu). Prints one JSON line per
// configuration: mma per µs per SM.
// Built and run by tests/gpu/run.sh mma_rate: nvcc -O3 -arch=sm_90a -I. mma_rate.cu (the mma as the
// kernels issue it, from kernels/cuda/mma.cuh).
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <type_traits>

#include "kernels/cuda/mma.cuh"
#include "kernels/cuda/wgmma.cuh"

namespace {

using namespace niwa::kernels::cuda;

// x's descriptor: 256 bytes of shared memory (no swizzle, core matrices 128 bytes apart along K),
// whatever they hold: only the rate is measured.
__device__ __forceinline__ uint64_t x_desc(const void* p) {
    return wgmma_desc(p, 128, 256);
}

constexpr int kIters = 4096;

__device__ __forceinline__ uint32_t lop(uint32_t w, uint32_t m, uint32_t o) {
    uint32_t r;
    asm volatile("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(r) : "r"(w), "r"(m), "r"(o));
    return r;
}

// Two code words a thread (rows g and g + 8), new each iteration, and the pair masks as the decode
// kernels hold them in registers; decode() builds G A fragments from them as the kernels do (one
// LOP3 a register; odd fragments from the words shifted once, as the kernels' pairs 5-7).
struct Codes {
    uint32_t wa, wb, o = 0x64006400u, m[4];
    __device__ explicit Codes(uint32_t seed) : wa(seed + threadIdx.x), wb(seed * 3 + threadIdx.x) {
#pragma unroll
        for (int k = 0; k < 4; ++k) m[k] = 0x00030003u << (2 * k);
    }
    __device__ void next() {
        wa = wa * 1664525u + 1013904223u;
        wb = wb * 22695477u + 1u;
    }
    template <int G>
    __device__ void decode(int h, uint32_t (&f)[G][4]) const {
        const uint32_t sa = wa >> 10, sb = wb >> 10;
#pragma unroll
        for (int k = 0; k < G; ++k) {
            const uint32_t a = (k + h) & 1 ? sa : wa, b = (k + h) & 1 ? sb : wb;
            f[k][0] = lop(a, m[k & 3], o);
            f[k][1] = lop(b, m[k & 3], o);
            f[k][2] = lop(a, m[(k + 1) & 3], o);
            f[k][3] = lop(b, m[(k + 1) & 3], o);
        }
    }
};

// Shared memory for x, filled with whatever: only the rate is measured.
template <int N>
__device__ __forceinline__ void fill_x(uint2 (&xs)[N], uint32_t seed) {
    for (int i = threadIdx.x; i < N; i += blockDim.x) xs[i] = make_uint2(seed * i, seed ^ i);
    __syncthreads();
}

enum Mode { kBare, kDecode, kDecodeNoLoad, kWgmmaDecode, kS8Mask, kS8Shift };

// The int8 modes (m16n8k32, u8 weights and s8 x: mma.cuh's mma_u8s8_zero, 512 weights an mma,
// its sums from zero then added to the chain's, as the kernel combines them) run half the
// iterations: each mma's A fragment from the same two code words a row pair, one byte a code.
// kS8Mask: one AND a register (byte b's code at bit 2 s, times 4^s; chain k takes s = k % 4);
// kS8Shift: a shift and an AND (codes 0..2). x from shared memory as in kDecode.
template <int C, Mode M>
__global__ void rate_kernel(float* out, uint32_t seed) {
    constexpr bool kS8 = M == kS8Mask || M == kS8Shift;
    using Acc = std::conditional_t<kS8, int, float>;
    __shared__ __align__(128) uint2 xs[256];
    fill_x(xs, seed);
    Acc c[C][4] = {};
    Codes w(seed);
    const int lane = threadIdx.x & 31;
    const uint64_t desc = x_desc(xs);
    for (int i = 0; i < (kS8 ? kIters / 2 : kIters); ++i) {
        if constexpr (kS8) {
#pragma unroll
            for (int k = 0; k < C; ++k) {
                const int s = M == kS8Mask ? 0 : 2 * (k & 3);  // the shift a register takes
                const uint32_t m = 0x03030303u << (M == kS8Mask ? 2 * (k & 3) : 0);
                const uint2 x = xs[(i * C + k + lane / 4) & 255];
                int d[4];
                mma_u8s8_zero(d, (w.wa >> s) & m, (w.wb >> s) & m, ((w.wa ^ w.o) >> s) & m,
                              ((w.wb ^ w.o) >> s) & m, x.x, x.y);
#pragma unroll
                for (int j = 0; j < 4; ++j) c[k][j] += d[j];
            }
        } else if constexpr (M == kWgmmaDecode) {
            // C A fragments decoded, one fence, C warpgroup mma in flight on their own
            // accumulators, then waited for (their A registers are read asynchronously until then;
            // a fence between a register's write and the mma reading it, so one for all of them).
            uint32_t f[C][4];
            w.decode(0, f);
            wgmma_fence();
#pragma unroll
            for (int k = 0; k < C; ++k) wgmma_f16<8, true>(c[k], f[k], desc);
            wgmma_commit();
            wgmma_wait<0>();
        } else if constexpr (M != kBare) {
            // Each mma's fragment decoded just before it, as the decode kernels interleave them.
            const uint32_t sa = w.wa >> 10, sb = w.wb >> 10;
#pragma unroll
            for (int k = 0; k < C; ++k) {
                const uint32_t a = k & 1 ? sa : w.wa, b = k & 1 ? sb : w.wb;
                const uint2 x = M == kDecode ? xs[(i * C + k + lane / 4) & 255] : make_uint2(w.o, lane);
                mma_f16(c[k], lop(a, w.m[k & 3], w.o), lop(b, w.m[k & 3], w.o), lop(a, w.m[(k + 1) & 3], w.o),
                        lop(b, w.m[(k + 1) & 3], w.o), x.x, x.y);
            }
        } else {
#pragma unroll
            for (int k = 0; k < C; ++k) mma_f16(c[k], w.wa, w.wa + 1, w.wb, w.wb + 1, w.o, w.o);
        }
        w.next();
    }
    Acc s = 0;
#pragma unroll
    for (int k = 0; k < C; ++k) s += c[k][0] + c[k][1] + c[k][2] + c[k][3];
    if (s == (kS8 ? Acc(12345) : Acc(1.2345f))) out[threadIdx.x] = s;  // never: keeps the chains live
}

// Groups of G wgmma: each half-iteration decodes G fragments into its own set, fences, issues
// the G mma and commits them, then waits for the group before (so a set is rewritten only after
// the mma reading it finished). One accumulator chain of N columns (wgmma_chain_nN), or with
// Split each mma of a group on its own accumulators (wgmma_pipe, N = 8). Counts one per warp per
// mma.
template <int G, int N, bool Split>
__global__ void chain_kernel(float* out, uint32_t seed) {
    __shared__ __align__(128) uint2 xs[1024];
    fill_x(xs, seed);
    float d[Split ? G : 1][N / 2] = {};
    Codes w(seed);
    const uint64_t desc = x_desc(xs);
    for (int i = 0; i < kIters; ++i) {
        uint32_t f[2][G][4];
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            w.decode(h, f[h]);
            wgmma_fence();
#pragma unroll
            for (int k = 0; k < G; ++k) wgmma_f16<N, true>(d[Split ? k : 0], f[h][k], desc + 2 * k);
            wgmma_commit();
            wgmma_wait<1>();
        }
        w.next();
    }
    wgmma_wait<0>();
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < (Split ? G : 1); ++j)
#pragma unroll
        for (int k = 0; k < N / 2; ++k) s += d[j][k];
    if (s == 1.2345f) out[threadIdx.x] = s;
}

// Milliseconds of one launch of kernel(out, 2) over enough blocks of up to 8 warps for
// warps_per_sm on every SM (one wave), after a first launch that warms it up.
template <typename K>
float time_wave(K* kernel, int sms, int warps_per_sm, float* out) {
    const int block_warps = warps_per_sm < 8 ? warps_per_sm : 8;
    const int blocks = sms * (warps_per_sm / block_warps);
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    kernel<<<blocks, block_warps * 32>>>(out, 1);
    cudaEventRecord(a);
    kernel<<<blocks, block_warps * 32>>>(out, 2);
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0.0f;
    cudaEventElapsedTime(&ms, a, b);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return ms;
}

template <int G, int N, bool Split = false>
void run_chain(int sms, int warps_per_sm, float* out) {
    const float ms = time_wave(chain_kernel<G, N, Split>, sms, warps_per_sm, out);
    const double per_sm = static_cast<double>(warps_per_sm) * kIters * 2 * G / (ms * 1e3);
    char name[32] = "wgmma_pipe";
    if (!Split) std::snprintf(name, sizeof name, "wgmma_chain_n%d", N);
    std::printf("{\"kernel\": \"%s\", \"warps_per_sm\": %d, \"group\": %d, \"mma_per_us_per_sm\": %.1f}\n",
                name, warps_per_sm, G, per_sm);
}

template <int N, bool Split = false>
void sweep_chain(int sms, float* out) {
    for (const int w : {4, 8, 16, 32}) {
        if constexpr (Split) run_chain<1, N, Split>(sms, w, out);
        run_chain<2, N, Split>(sms, w, out);
        run_chain<4, N, Split>(sms, w, out);
        run_chain<8, N, Split>(sms, w, out);
    }
}

// The wgmma decode kernel's arithmetic alone (matmul_decode_wgmma.cu): a tile's 8 quant blocks,
// each 8 wgmma chained into its own accumulators (the first overwriting them), two accumulator
// and fragment sets in turn; after a block's group is committed the block before it is waited for
// and its sums applied (scale and bias), and the pipeline drains at the tile's end. Counts one
// per warp per wgmma.
template <int N>
__global__ void blocks_kernel(float* out, uint32_t seed) {
    __shared__ __align__(128) uint2 xs[1024];
    fill_x(xs, seed);
    float acc[N / 2] = {};
    Codes w(seed);
    const uint64_t desc = x_desc(xs);
    for (int i = 0; i < kIters / 8; ++i) {
        float d[2][N / 2];
        uint32_t f[2][8][4];
        float sc = 0.0f;
#pragma unroll
        for (int q = 0; q < 8; ++q) {
            w.decode(0, f[q & 1]);
            wgmma_fence_operands(d[q & 1]);
            wgmma_fence();
            wgmma_f16<N, false>(d[q & 1], f[q & 1][0], desc);
#pragma unroll
            for (int k = 1; k < 8; ++k) wgmma_f16<N, true>(d[q & 1], f[q & 1][k], desc + 2 * k);
            wgmma_commit();
            wgmma_fence_operands(d[q & 1]);
            if (q > 0) {
                wgmma_wait<1>();
                wgmma_fence_operands(d[(q - 1) & 1]);
#pragma unroll
                for (int k = 0; k < N / 2; ++k) acc[k] += sc * (d[(q - 1) & 1][k] - 0.5f);
            }
            sc = __uint_as_float((w.wa & 0x007FFFFFu) | 0x3F800000u);
            w.next();
        }
        wgmma_wait<0>();
        wgmma_fence_operands(d[1]);
#pragma unroll
        for (int k = 0; k < N / 2; ++k) acc[k] += sc * (d[1][k] - 0.5f);
    }
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < N / 2; ++k) s += acc[k];
    if (s == 1.2345f) out[threadIdx.x] = s;
}

template <int N>
void run_blocks(int sms, int warps_per_sm, float* out) {
    const float ms = time_wave(blocks_kernel<N>, sms, warps_per_sm, out);
    const double per_sm = static_cast<double>(warps_per_sm) * (kIters / 8) * 64 / (ms * 1e3);
    std::printf("{\"kernel\": \"wgmma_blocks_n%d\", \"warps_per_sm\": %d, \"mma_per_us_per_sm\": %.1f}\n", N,
                warps_per_sm, per_sm);
}

template <int N>
void sweep_blocks(int sms, float* out) {
    for (const int w : {4, 8, 16}) run_blocks<N>(sms, w, out);
}

const char* const kModeNames[] = {"mma", "decode", "decode_no_load", "wgmma_decode", "s8_mask", "s8_shift"};

template <int C, Mode M>
void run(int sms, int warps_per_sm, float* out) {
    const float ms =
        time_wave(rate_kernel<C, M>, sms, warps_per_sm, out);  // int8: half the mma, twice the weights
    const double per_sm = static_cast<double>(warps_per_sm) * kIters * C / (ms * 1e3);
    std::printf("{\"kernel\": \"%s\", \"warps_per_sm\": %d, \"chains\": %d, \"mma_per_us_per_sm\": %.1f}\n",
                kModeNames[M], warps_per_sm, C, per_sm);
}

template <Mode M>
void sweep(int sms, float* out) {
    for (const int w : {4, 8, 16, 32}) {
        run<1, M>(sms, w, out);
        run<2, M>(sms, w, out);
        run<4, M>(sms, w, out);
        run<8, M>(sms, w, out);
    }
}

}  // namespace

int main() {
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    float* out = nullptr;
    cudaMalloc(&out, 1024 * sizeof(float));
    sweep<kBare>(prop.multiProcessorCount, out);
    sweep<kDecode>(prop.multiProcessorCount, out);
    sweep<kDecodeNoLoad>(prop.multiProcessorCount, out);
    sweep<kS8Mask>(prop.multiProcessorCount, out);
    sweep<kS8Shift>(prop.multiProcessorCount, out);
    if (prop.major == 9) {  // built for sm_90a
        sweep<kWgmmaDecode>(prop.multiProcessorCount, out);
        sweep_chain<8, true>(prop.multiProcessorCount, out);
        sweep_chain<8>(prop.multiProcessorCount, out);
        sweep_chain<16>(prop.multiProcessorCount, out);
        sweep_chain<32>(prop.multiProcessorCount, out);
        sweep_blocks<8>(prop.multiProcessorCount, out);
        sweep_blocks<24>(prop.multiProcessorCount, out);
    }
    cudaFree(out);
    const cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) {
        std::fprintf(stderr, "mma_rate: %s\n", cudaGetErrorString(err));
        return 1;
    }
    return 0;
}
