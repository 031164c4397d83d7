// Tests of the CPU rotate (the Prism block Hadamard) against the explicit matrix
// H[r][c] = (-1)^popcount(r & c) / sqrt(B) in double, and that the inverse undoes it.
#include "kernels/ops.h"
#include "tests/kernels/kernel_test_util.h"

#include <QtTest>
#include <bit>
#include <cmath>

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

    // rotated_matmul's default (every backend's where it does not fuse): the sigmoid gate read
    // per head from rows of its own (attention's gate halves), rotated, into `staged`, then the
    // matmul. Against the explicit gate and matrix, and a plain matmul of that input.
    void rotatedMatmulStagesTheGatedInput() {
        std::mt19937 rng(304);
        auto ops = make_cpu_ops(2);
        const int64_t rows = 3, width = 16, heads = 4, cols = width * heads, out = 5;
        const int block = 32;
        const auto s = random_signs(rng, cols);
        const HostTensor x = random_tensor(rng, rows, cols, cols);
        const HostTensor gate = random_tensor(rng, rows * heads, 2 * width, 2 * width);
        const HostTensor w = random_tensor(rng, out, cols, cols);
        const Weight weight{w.buf.data(), DType::F32, cols, out, size_t(cols) * sizeof(float)};
        RotatedInput in{RotatedInput::Kind::SigmoidGate, x.t, gate.t.cols_view(width, width)};
        in.width = width;
        in.r = Rotation{block, s.data()};
        HostTensor staged(rows, cols, cols), y(rows, out, out), gated(rows, cols, cols), want(rows, out, out);
        ops->rotated_matmul(weight, in, staged.t, y.t);
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t c = 0; c < cols; ++c)
                gated.at(r, c) =
                    x.at(r, c) / (1.0f + std::exp(-gate.at(r * heads + c / width, width + c % width)));
        for (int64_t r = 0; r < rows; ++r) {
            const auto rotated = reference(gated, r, block, s, true);
            for (int64_t c = 0; c < cols; ++c)
                QVERIFY2(std::abs(staged.at(r, c) - rotated[c]) <= 1e-5,
                         qPrintable(QString("row %1 col %2").arg(r).arg(c)));
        }
        ops->matmul(weight, staged.t, want.t);
        QCOMPARE(y.buf, want.buf);
    }

    // The defaults of the norms in matmuls (Ops::norms_in_matmuls): a ResidualNorm input is the
    // row normed by its RMS and weight (into `normed` too), then rotated, as residual_norm makes
    // xn and xr; rotated_matmul_add adds the projection to x and leaves no squares. Against
    // explicit sums.
    void residualNormInputAndAdd() {
        std::mt19937 rng(306);
        auto ops = make_cpu_ops(2);
        const int64_t rows = 3, cols = 64, out = 5;
        const int block = 32;
        const float eps = 1e-6f;
        const auto s = random_signs(rng, cols);
        const HostTensor x = random_tensor(rng, rows, cols, cols + 2, -4.0f, 4.0f);
        const HostTensor w = random_tensor(rng, out, cols, cols);
        const auto norm_w = random_vector(rng, cols, 0.5f, 1.5f);
        const Weight weight{w.buf.data(), DType::F32, cols, out, size_t(cols) * sizeof(float)};
        RotatedInput in{RotatedInput::Kind::ResidualNorm, x.t};
        in.w = norm_w.data();
        in.eps = eps;
        in.r = Rotation{block, s.data()};
        HostTensor normed(rows, cols, cols), staged(rows, cols, cols), y(rows, out, out);
        in.normed = normed.t;
        ops->rotated_matmul(weight, in, staged.t, y.t);
        HostTensor want_n(rows, cols, cols);
        for (int64_t r = 0; r < rows; ++r) {
            double ss = 0.0;
            for (int64_t c = 0; c < cols; ++c) ss += double(x.at(r, c)) * x.at(r, c);
            const double inv = 1.0 / std::sqrt(ss / cols + eps);
            for (int64_t c = 0; c < cols; ++c) {
                want_n.at(r, c) = float(x.at(r, c) * inv * norm_w[size_t(c)]);
                QVERIFY2(
                    std::abs(normed.at(r, c) - want_n.at(r, c)) <= 1e-5 * std::abs(want_n.at(r, c)) + 1e-6,
                    qPrintable(QString("normed row %1 col %2").arg(r).arg(c)));
            }
            const auto rotated = reference(want_n, r, block, s, true);
            for (int64_t c = 0; c < cols; ++c)
                QVERIFY2(std::abs(staged.at(r, c) - rotated[size_t(c)]) <= 1e-4,
                         qPrintable(QString("staged row %1 col %2").arg(r).arg(c)));
        }
        // The same as residual_norm with nothing to add.
        HostTensor xn(rows, cols, cols), xr(rows, cols, cols), x_copy(rows, cols, cols + 2);
        x_copy.buf = x.buf;
        ops->residual_norm(x_copy.t, Tensor{}, norm_w.data(), eps, xn.t, in.r, xr.t);
        QCOMPARE(staged.buf, xr.buf);
        QCOMPARE(normed.buf, xn.buf);

        // rotated_matmul_add: x += the staged input's matmul.
        const HostTensor wide = random_tensor(rng, cols, cols, cols);
        const Weight square{wide.buf.data(), DType::F32, cols, cols, size_t(cols) * sizeof(float)};
        HostTensor x_sum(rows, cols, cols + 2), y2(rows, cols, cols), want_y(rows, cols, cols);
        x_sum.buf = x.buf;
        const Tensor parts = ops->rotated_matmul_add(square, in, staged.t, y2.t, x_sum.t);
        QVERIFY(parts.data == nullptr);
        ops->matmul(square, xr.t, want_y.t);
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t c = 0; c < cols; ++c) QCOMPARE(x_sum.at(r, c), x.at(r, c) + want_y.at(r, c));
        // A residual norm without its weight is refused.
        in.w = nullptr;
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, ops->rotated_matmul(weight, in, staged.t, y.t));
    }

    // What the input needs, stated: a staging buffer of whole rows, heads that divide the row, a
    // gate row per head.
    void rotatedMatmulRejectsBadInputs() {
        std::mt19937 rng(305);
        auto ops = make_cpu_ops(1);
        const HostTensor x = random_tensor(rng, 2, 64, 64), w = random_tensor(rng, 4, 64, 64);
        const HostTensor gate = random_tensor(rng, 8, 32, 32);
        const Weight weight{w.buf.data(), DType::F32, 64, 4, 64 * sizeof(float)};
        HostTensor staged(2, 64, 64), padded(2, 64, 66), y(2, 4, 4);
        RotatedInput in{RotatedInput::Kind::SigmoidGate, x.t, gate.t.cols_view(16, 16)};
        in.width = 16;  // 4 heads a row, 2 rows: 8 gate rows
        ops->rotated_matmul(weight, in, staged.t, y.t);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, ops->rotated_matmul(weight, in, padded.t, y.t));
        in.width = 8;  // 8 heads a row would want 16 gate rows of 8
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, ops->rotated_matmul(weight, in, staged.t, y.t));
        in.width = 48;  // not whole heads
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, ops->rotated_matmul(weight, in, staged.t, y.t));
        in = RotatedInput{RotatedInput::Kind::Swiglu, x.t, gate.t};  // up of another shape
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, ops->rotated_matmul(weight, in, staged.t, y.t));
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
