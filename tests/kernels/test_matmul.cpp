// Tests of the CPU matmul and embed for every weight type, on whole matrices and on shard views
// (rows further apart than a row, data starting mid-row), against a double-precision loop over
// weights decoded from the bit layouts in the test.
#include "kernels/ops.h"
#include "tests/kernels/kernel_test_util.h"

#include <QtTest>

using namespace niwa::kernels;
using namespace niwa::kernels::test;

namespace {

// A random matrix of `out` rows of `in` elements, rows `stride` bytes apart.
struct RandomMatrix {
    DType type;
    int64_t in, out;
    size_t stride;
    std::vector<uint8_t> bytes;

    RandomMatrix(std::mt19937& rng, DType t, int64_t in_, int64_t out_, size_t pad)
        : type(t), in(in_), out(out_), stride(dtype_row_bytes(t, in_) + pad), bytes(stride * out_) {
        for (auto& b : bytes) b = static_cast<uint8_t>(rng());
        std::uniform_real_distribution<float> value(-1.0f, 1.0f), scale(0.01f, 0.1f);
        auto put16 = [](uint8_t* p, uint16_t v) { p[0] = v & 0xff, p[1] = v >> 8; };
        for (int64_t r = 0; r < out; ++r) {
            uint8_t* row = &bytes[r * stride];
            for (int64_t i = 0; i < in; ++i) {  // finite values and scales
                switch (t) {
                    case DType::F32: {
                        const float f = value(rng);
                        std::memcpy(row + 4 * i, &f, 4);
                        break;
                    }
                    case DType::F16:
                        put16(row + 2 * i, f32_to_fp16(value(rng)));
                        break;
                    case DType::BF16:
                        put16(row + 2 * i, f32_to_bf16(value(rng)));
                        break;
                    case DType::Q8_0:
                        if (i % 32 == 0) put16(row + i / 32 * 34, f32_to_fp16(scale(rng)));
                        break;
                    case DType::PQ2_0:
                        if (i % 128 == 0) put16(row + i / 128 * 34, f32_to_fp16(scale(rng)));
                        break;
                    case DType::PTQ1_0:
                        if (i % 128 == 0) put16(row + i / 128 * 28 + 26, f32_to_fp16(scale(rng)));
                        break;
                    default:
                        break;
                }
            }
        }
    }

    // The weight over rows [r0, r0 + n) and columns [c0, c0 + m) (c0 on a block boundary).
    Weight view(int64_t r0, int64_t n, int64_t c0, int64_t m) const {
        return Weight{bytes.data() + r0 * stride + dtype_row_bytes(type, c0), type, m, n, stride};
    }
    std::vector<double> row(int64_t r) const { return ref_dequantize(type, &bytes[r * stride], in); }
};

}  // namespace

class TestMatmul : public QObject {
    Q_OBJECT

private slots:
    void matmul_data() {
        QTest::addColumn<int>("type");
        for (DType t : {DType::F32, DType::F16, DType::BF16, DType::Q8_0, DType::PQ2_0, DType::PTQ1_0})
            QTest::newRow(dtype_name(t)) << static_cast<int>(t);
    }

    void matmul() {
        QFETCH(int, type);
        const auto t = static_cast<DType>(type);
        std::mt19937 rng(100 + type);
        const RandomMatrix m(rng, t, 384, 50, 16);
        auto ops = make_cpu_ops(3);
        struct Case {
            int64_t r0, n, c0, cols, x_rows;
        };
        for (const Case c : {Case{0, 50, 0, 384, 3}, Case{7, 33, 128, 256, 17}, Case{49, 1, 256, 128, 1}}) {
            const Weight w = m.view(c.r0, c.n, c.c0, c.cols);
            const HostTensor x = random_tensor(rng, c.x_rows, c.cols, c.cols + 5);
            HostTensor y = random_tensor(rng, c.x_rows, c.n, c.n + 3);
            const std::vector<float> padding_before = y.buf;
            ops->matmul(w, x.t, y.t);
            for (int64_t o = 0; o < c.n; ++o) {
                const std::vector<double> wr = m.row(c.r0 + o);
                for (int64_t r = 0; r < c.x_rows; ++r) {
                    double want = 0.0, mag = 0.0;
                    for (int64_t i = 0; i < c.cols; ++i) {
                        want += x.at(r, i) * wr[c.c0 + i];
                        mag += std::abs(x.at(r, i) * wr[c.c0 + i]);
                    }
                    QVERIFY2(std::abs(y.at(r, o) - want) <= 1e-5 * mag + 1e-30,
                             qPrintable(
                                 QString("row %1 out %2: %3 vs %4").arg(r).arg(o).arg(y.at(r, o)).arg(want)));
                }
            }
            for (int64_t r = 0; r < c.x_rows; ++r)
                for (int64_t o = c.n; o < y.t.ld; ++o) QCOMPARE(y.at(r, o), padding_before[r * y.t.ld + o]);
        }
    }

    void matmulIsTheSameOnOneThread() {
        std::mt19937 rng(7);
        const RandomMatrix m(rng, DType::PQ2_0, 256, 40, 0);
        const HostTensor x = random_tensor(rng, 5, 256, 256);
        HostTensor a(5, 40, 40), b(5, 40, 40);
        make_cpu_ops(1)->matmul(m.view(0, 40, 0, 256), x.t, a.t);
        make_cpu_ops(4)->matmul(m.view(0, 40, 0, 256), x.t, b.t);
        QVERIFY(a.buf == b.buf);
    }

    void embedLooksUpRowsOfTheShard() {
        for (DType t : {DType::PQ2_0, DType::F32, DType::Q8_0}) {
            std::mt19937 rng(200 + static_cast<int>(t));
            const RandomMatrix m(rng, t, 256, 30, 8);
            const Weight table = m.view(10, 12, 0, 256);  // a vocabulary shard: rows [row0, row0 + 12)
            const int64_t row0 = 1000;
            const std::vector<int32_t> ids = {1000, 1011, 999, 1012, 1005, -1, 1005, 1003};
            HostTensor y = random_tensor(rng, static_cast<int64_t>(ids.size()), 256, 260);
            auto ops = make_cpu_ops(2);
            ops->embed(table, ids.data(), row0, y.t);
            for (size_t i = 0; i < ids.size(); ++i) {
                const int64_t local = ids[i] - row0;
                const bool inside = local >= 0 && local < 12;
                const std::vector<double> want = inside ? m.row(10 + local) : std::vector<double>(256, 0.0);
                for (int c = 0; c < 256; ++c) QCOMPARE(static_cast<double>(y.at(i, c)), want[c]);
            }
        }
    }

    void rejectsMismatchedShapes() {
        std::mt19937 rng(9);
        const RandomMatrix m(rng, DType::F32, 64, 8, 0);
        const HostTensor x = random_tensor(rng, 2, 63, 64);
        HostTensor y(2, 8, 8);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 make_cpu_ops(1)->matmul(m.view(0, 8, 0, 64), x.t, y.t));
    }

    // PQ2_0S is the CUDA backend's layout: the CPU says so instead of reading it as blocks.
    void rejectsTheGpuLayout() {
        std::vector<uint8_t> w(dtype_row_bytes(DType::PQ2_0S, 256) * 4);
        const HostTensor x(1, 256, 256);
        HostTensor y(1, 4, 4);
        try {
            make_cpu_ops(1)->matmul(Weight{w.data(), DType::PQ2_0S, 256, 4, w.size() / 4}, x.t, y.t);
            QFAIL("the CPU multiplied by a PQ2_0S weight");
        } catch (const std::invalid_argument& e) {
            QVERIFY2(QByteArray(e.what()).contains("PQ2_0S is a GPU layout"), e.what());
        }
    }
};

QTEST_APPLESS_MAIN(TestMatmul)
#include "test_matmul.moc"
