// Tests of the CPU rotate (the Prism block Hadamard) against the explicit matrix
// H[r][c] = (-1)^popcount(r & c) / sqrt(B) in double, and that the inverse undoes it.
#include "kernels/ops.h"
#include "tests/kernels/kernel_test_util.h"

#include <QtTest>
#include <bit>

using namespace niwa::kernels;
using namespace niwa::kernels::test;

namespace {

std::vector<float> random_signs(std::mt19937& rng, size_t n) {
    std::vector<float> s(n);
    for (float& x : s) x = (rng() & 1) ? 1.0f : -1.0f;
    return s;
}

// y = s ⊙ (H x) or H (s ⊙ x) per block, by the explicit matrix.
std::vector<double> reference(const HostTensor& x, int64_t r, int block, const std::vector<float>& s,
                              bool signs_first) {
    const int64_t cols = x.t.cols;
    std::vector<double> y(static_cast<size_t>(cols));
    for (int64_t b = 0; b < cols; b += block)
        for (int i = 0; i < block; ++i) {
            double acc = 0.0;
            for (int j = 0; j < block; ++j) {
                const double h =
                    (std::popcount(static_cast<unsigned>(i & j)) % 2 ? -1.0 : 1.0) / std::sqrt(block);
                acc += h * x.at(r, b + j) * (signs_first ? s[b + j] : 1.0f);
            }
            y[b + i] = signs_first ? acc : acc * s[b + i];
        }
    return y;
}

}  // namespace

class TestRotate : public QObject {
    Q_OBJECT

private slots:
    void matchesTheExplicitMatrix() {
        std::mt19937 rng(300);
        auto ops = make_cpu_ops(2);
        for (int block : {1, 2, 8, 64, 256})
            for (bool signs_first : {true, false}) {
                const int64_t cols = 3 * block;
                const auto s = random_signs(rng, cols);
                const HostTensor x = random_tensor(rng, 4, cols, cols + 3);
                HostTensor y = random_tensor(rng, 4, cols, cols + 1);
                ops->rotate(x.t, Rotation{block, s.data()}, signs_first, y.t);
                for (int64_t r = 0; r < 4; ++r) {
                    const auto want = reference(x, r, block, s, signs_first);
                    for (int64_t c = 0; c < cols; ++c)
                        QVERIFY2(std::abs(y.at(r, c) - want[c]) <= 1e-5,
                                 qPrintable(QString("block %1 row %2 col %3").arg(block).arg(r).arg(c)));
                }
            }
    }

    // (H diag(s))ᵀ = diag(s) H, so the embedding's inverse undoes a folded weight's input.
    void inverseRestoresInPlace() {
        std::mt19937 rng(301);
        const int block = 128;
        const auto s = random_signs(rng, 5 * block);
        HostTensor x = random_tensor(rng, 3, 5 * block, 5 * block);
        const std::vector<float> original = x.buf;
        auto ops = make_cpu_ops(1);
        ops->rotate(x.t, Rotation{block, s.data()}, true, x.t);
        double moved = 0.0;
        for (size_t i = 0; i < original.size(); ++i)
            moved = std::max(moved, double(std::abs(x.buf[i] - original[i])));
        QVERIFY(moved > 0.1);
        ops->rotate(x.t, Rotation{block, s.data()}, false, x.t);
        for (size_t i = 0; i < original.size(); ++i) QVERIFY(std::abs(x.buf[i] - original[i]) <= 1e-5);
    }

    void blockZeroCopies() {
        std::mt19937 rng(302);
        const HostTensor x = random_tensor(rng, 3, 10, 12);
        HostTensor y = random_tensor(rng, 3, 10, 11);
        make_cpu_ops(1)->rotate(x.t, Rotation{0, nullptr}, true, y.t);
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 10; ++c) QCOMPARE(y.at(r, c), x.at(r, c));
    }

    void rejectsBadBlocks() {
        std::mt19937 rng(303);
        const HostTensor x = random_tensor(rng, 1, 24, 24);
        const auto s = random_signs(rng, 24);
        auto ops = make_cpu_ops(1);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, ops->rotate(x.t, Rotation{16, s.data()}, true, x.t));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, ops->rotate(x.t, Rotation{12, s.data()}, true, x.t));
    }
};

QTEST_APPLESS_MAIN(TestRotate)
#include "test_rotate.moc"
