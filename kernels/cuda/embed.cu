// embed: rows of a (possibly vocabulary-sharded) table, dequantized to fp32 exactly as the CPU
// does; ids outside the shard give zero rows. One CUDA block per token; ids are on the device.
#include <string>

#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/dequant.cuh"
#include "kernels/cuda/matmul.cuh"

namespace niwa::kernels::cuda {

namespace {

template <DType T>
__global__ void embed_kernel(const uint8_t* table, size_t stride, int64_t rows, int64_t cols,
                             const int32_t* ids, int64_t row0, float* y, int64_t ldy) {
    const int64_t r = blockIdx.x;
    const int64_t id = static_cast<int64_t>(ids[r]) - row0;
    float* yr = y + r * ldy;
    if (id < 0 || id >= rows) {
        for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = 0.0f;
        return;
    }
    const uint8_t* src = table + static_cast<size_t>(id) * stride;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = weight_at<T>(src, c);
}

template <DType T>
void launch(cudaStream_t stream, const Weight& t, const int32_t* ids, int64_t row0, const Tensor& y) {
    embed_kernel<T><<<static_cast<unsigned>(y.rows), 256, 0, stream>>>(
        static_cast<const uint8_t*>(t.data), t.row_stride, t.out, t.in, ids, row0, y.as<float>(), y.ld);
    NIWA_CUDA_LAUNCHED("embed_kernel");
}

}  // namespace

void CudaOps::embed(const Weight& table, const int32_t* ids, int64_t row0, const Tensor& y) {
    require(table.data != nullptr || table.out == 0, "embed", "table has no data");
    require(table.in % dtype_block_elems(table.type) == 0, "embed",
            std::string(dtype_name(table.type)) + " table with " + std::to_string(table.in) +
                " columns, not a multiple of its block");
    const size_t align = table.type == DType::F32 ? 4 : 2;
    require(reinterpret_cast<uintptr_t>(table.data) % align == 0 && table.row_stride % align == 0, "embed",
            "table data or row_stride is not aligned to its element");
    require_f32(y, "embed", "y");
    require(y.cols == table.in, "embed",
            "y has " + std::to_string(y.cols) + " columns, the table " + std::to_string(table.in));
    if (y.rows == 0) return;
    require(ids != nullptr, "embed", "no token ids");
    with_weight_type(
        table.type, [&](auto tag) { launch<decltype(tag)::value>(stream_, table, ids, row0, y); }, "embed");
}

}  // namespace niwa::kernels::cuda
