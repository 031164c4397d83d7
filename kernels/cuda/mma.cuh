// Thin wrappers over the PTX the tensor-core kernels use (sm_80+, valid on sm_90 and sm_120):
// mma.sync m16n8k16 fp16 (and bf16) with fp32 accumulation, ldmatrix, cp.async 16-byte copies.
// fp16 rather than bf16: a ternary weight times its fp16 scale is exact in fp16, and x keeps
// 11 significant bits instead of 8 (8x less rounding; whole-model top-1 agreement with the
// fp32 oracle needs it). Activations here are normalised and Hadamard-rotated, far inside
// fp16's range.
// Also m16n8k32 u8 x s8 with int32 sums: int8 x at 1-4 rows (matmul_decode_x8.cuh); and
// m16n8k8 tf32: the wgmma decode kernel's bias sums, split exactly in three.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

namespace niwa::kernels::cuda {

// c += A · B with fp32 accumulators in place, for the mma.sync `shape_types` (its shape, layouts
// and types) that takes four A registers and two B registers.
#define NIWA_MMA_F32(name, shape_types)                                                                    \
    __device__ __forceinline__ void name(float(&c)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, \
                                         uint32_t b0, uint32_t b1) {                                       \
        asm volatile("mma.sync.aligned." shape_types                                                       \
                     " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "                                            \
                     "{%0,%1,%2,%3};\n"                                                                    \
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])                                      \
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));                              \
    }

// One m16n8k16 tile: a0..a3 and b0, b1 in the PTX fragment layout.
NIWA_MMA_F32(mma_f16, "m16n8k16.row.col.f32.f16.f16.f32")
// The same in bf16 (a bf16 KV pool's K and V reach the tensor cores unconverted).
NIWA_MMA_F32(mma_bf16, "m16n8k16.row.col.f32.bf16.bf16.f32")
#undef NIWA_MMA_F32

// d = A · B for one m16n8k16 tile with fp16 sums (d[0]: row g's columns 2 t, 2 t + 1 as a pair; d[1]:
// row g + 8's): the probe's rotation, whose sums go straight to fp16.
__device__ __forceinline__ void mma_f16_sum16(uint32_t (&d)[2], uint32_t a0, uint32_t a1, uint32_t a2,
                                              uint32_t a3, uint32_t b0, uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%8,%8};\n"
        : "=r"(d[0]), "=r"(d[1])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "r"(0u));
}

// d = A · B + c for one m16n8k32 tile of u8 A (weight codes) and s8 B (int8 x), int32 sums: a0..a3
// and b0, b1 in the PTX fragment layout (matmul_decode_x8.cuh); d and c may be the same sums.
__device__ __forceinline__ void mma_u8s8(int (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                         uint32_t b0, uint32_t b1, const int (&c)[4]) {
    asm volatile(
        "mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%10,%11,%12,%13};\n"
        : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
}

// The same from zero.
__device__ __forceinline__ void mma_u8s8_zero(int (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                              uint32_t b0, uint32_t b1) {
    mma_u8s8(d, a0, a1, a2, a3, b0, b1, {0, 0, 0, 0});
}

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const void* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(p)));
}

// ldmatrix transposed: a key-major tile as the dimension-major B operand (attention's P·V).
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], const void* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(p)));
}

// 16 bytes global -> shared, or 16 zero bytes (nothing read) when !valid.
__device__ __forceinline__ void cp_async16_or_zero(void* smem, const void* global, bool valid) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(smem)), "l"(global),
                 "r"(valid ? 16 : 0)
                 : "memory");
}

// The same for 4 bytes (rows only 4-byte aligned).
__device__ __forceinline__ void cp_async4_or_zero(void* smem, const void* global, bool valid) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_addr(smem)), "l"(global),
                 "r"(valid ? 4 : 0)
                 : "memory");
}

// 16 bytes global -> shared, bypassing L1 (the weight is read once).
__device__ __forceinline__ void cp_async16(void* smem, const void* global) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr(smem)), "l"(global));
}

// 8 bytes global -> shared (both 8-byte aligned).
__device__ __forceinline__ void cp_async8(void* smem, const void* global) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(smem_addr(smem)), "l"(global));
}

__device__ __forceinline__ void cp_async_commit() {
    asm volatile("cp.async.commit_group;\n" ::);
}

template <int N>
__device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// The 8x8 matrix of 16-bit values whose row lane / 4 holds elements 2 (lane % 4), + 1 in a
// lane's register, transposed: the same lane gets row lane / 4 of the transpose.
__device__ __forceinline__ uint32_t movmatrix_trans(uint32_t a) {
    uint32_t d;
    asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;\n" : "=r"(d) : "r"(a));
    return d;
}

__device__ __forceinline__ uint32_t f16x2_bits(float lo, float hi) {
    const __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&v);
}

// 16 values as fp16 to dst (32 bytes, 16-byte aligned).
__device__ __forceinline__ void store_f16x16(__half* dst, const float (&v)[16]) {
    uint4 q[2];
    auto* u = reinterpret_cast<uint32_t*>(q);
#pragma unroll
    for (int i = 0; i < 8; ++i) u[i] = f16x2_bits(v[2 * i], v[2 * i + 1]);
    reinterpret_cast<uint4*>(dst)[0] = q[0];
    reinterpret_cast<uint4*>(dst)[1] = q[1];
}

}  // namespace niwa::kernels::cuda
