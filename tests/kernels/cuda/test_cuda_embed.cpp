// The CUDA embed against the CPU oracle: every table type, a vocabulary shard (ids outside it
// give zero rows), a strided output.
#include "tests/kernels/cuda/cuda_test_util.h"

#include <QtTest>
#include <cstring>

using namespace niwa::kernels;
using namespace niwa::kernels::test;

class TestCudaEmbed : public QObject {
    Q_OBJECT

private slots:
    void matchesTheCpu() {
        Backends b;
        for (DType t :
             {DType::F32, DType::F16, DType::BF16, DType::Q8_0, DType::PQ2_0, DType::PTQ1_0, DType::PQ2_0S}) {
            std::mt19937 rng(500 + static_cast<int>(t));
            const int64_t cols = 5120, rows = 40;
            const size_t stride = dtype_row_bytes(t, cols) + 8;
            std::vector<uint8_t> bytes(stride * rows);
            for (auto& x : bytes) x = static_cast<uint8_t>(rng());
            // Finite values: random trits for ternary types, small values and scales otherwise.
            std::vector<float> row(static_cast<size_t>(cols));
            std::vector<int8_t> trits(static_cast<size_t>(cols));
            std::vector<float> scales(static_cast<size_t>(cols / kQuantBlock));
            std::uniform_real_distribution<float> value(-1.0f, 1.0f);
            for (int64_t r = 0; r < rows; ++r) {
                uint8_t* dst = &bytes[static_cast<size_t>(r) * stride];
                if (t == DType::PQ2_0 || t == DType::PTQ1_0 || t == DType::PQ2_0S) {
                    for (auto& x : trits) x = static_cast<int8_t>(static_cast<int>(rng() % 3) - 1);
                    for (auto& s : scales) s = 0.01f + 0.1f * std::abs(value(rng));
                    if (t != DType::PQ2_0S) {
                        pack_ternary_row(t, trits.data(), scales.data(), dst, cols);
                        continue;
                    }
                    std::vector<uint8_t> pq2(dtype_row_bytes(DType::PQ2_0, cols));
                    pack_ternary_row(DType::PQ2_0, trits.data(), scales.data(), pq2.data(), cols);
                    const std::vector<uint8_t> split =
                        convert_rows(DType::PQ2_0, t, pq2.data(), pq2.size(), 1, cols);
                    std::memcpy(dst, split.data(), split.size());
                } else if (t == DType::Q8_0) {
                    for (int64_t i = 0; i < cols; i += 32) {
                        const uint16_t d = f32_to_fp16(0.05f);
                        std::memcpy(dst + i / 32 * 34, &d, 2);
                    }
                } else {
                    for (int64_t i = 0; i < cols; ++i) {
                        const float f = value(rng);
                        const uint16_t h = t == DType::F16 ? f32_to_fp16(f) : f32_to_bf16(f);
                        if (t == DType::F32)
                            std::memcpy(dst + 4 * i, &f, 4);
                        else
                            std::memcpy(dst + 2 * i, &h, 2);
                    }
                }
            }
            const Weight host_table{bytes.data() + stride * 5, t, cols, 30, stride};  // rows [5, 35)
            const DeviceBytes dev_bytes(*b.gpu, bytes.data(), bytes.size());
            const Weight dev_table{dev_bytes.as<uint8_t>() + stride * 5, t, cols, 30, stride};
            const int64_t row0 = 1000;
            const std::vector<int32_t> ids = {1000, 1029, 999, 1030, 1005, -1, 1005, 1013, 1021};
            const DeviceBytes dev_ids(*b.gpu, ids);
            const auto n = static_cast<int64_t>(ids.size());
            HostTensor want(n, cols, cols + 3);
            b.cpu->embed(host_table, ids.data(), row0, want.t);
            const DeviceTensor dy(*b.gpu, n, cols, cols + 3);
            b.gpu->embed(dev_table, dev_ids.as<int32_t>(), row0, dy.t);
            const double err = tensor_error(dy.download(), want);
            qInfo("%s: error %.3g", dtype_name(t), err);
            QCOMPARE(err, 0.0);
        }
    }
};

QTEST_APPLESS_MAIN(TestCudaEmbed)
#include "test_cuda_embed.moc"
