// Tests of the CPU norms and element-wise ops against double-precision formulas: rmsnorm,
// l2norm, rmsnorm_gated (whole rows and per-head views), add, swiglu, sigmoid_mul.
#include "kernels/ops.h"
#include "tests/kernels/kernel_test_util.h"

#include <QtTest>

using namespace niwa::kernels;
using namespace niwa::kernels::test;

namespace {

double silu(double x) {
    return x / (1.0 + std::exp(-x));
}
double sigmoid(double x) {
    return 1.0 / (1.0 + std::exp(-x));
}

bool close(double got, double want, double tol = 1e-5) {
    return std::abs(got - want) <= tol * (1.0 + std::abs(want));
}

}  // namespace

class TestNorms : public QObject {
    Q_OBJECT

private slots:
    void rmsnormPerRowAndPerHead() {
        std::mt19937 rng(400);
        auto ops = make_cpu_ops(2);
        const int n = 5, heads = 3, d = 16;
        const HostTensor x = random_tensor(rng, n, heads * d, heads * d + 4, -3.0f, 3.0f);
        const auto w = random_vector(rng, heads * d, 0.5f, 1.5f);
        const float eps = 1e-6f;
        // Whole rows, with and without a weight.
        for (const float* wp : {w.data(), static_cast<const float*>(nullptr)}) {
            HostTensor y = random_tensor(rng, n, heads * d, heads * d + 2);
            ops->rmsnorm(x.t, wp, eps, y.t);
            for (int r = 0; r < n; ++r) {
                double ss = 0.0;
                for (int c = 0; c < heads * d; ++c) ss += double(x.at(r, c)) * x.at(r, c);
                const double inv = 1.0 / std::sqrt(ss / (heads * d) + eps);
                for (int c = 0; c < heads * d; ++c)
                    QVERIFY(close(y.at(r, c), x.at(r, c) * inv * (wp ? wp[c] : 1.0)));
            }
        }
        // Per head: y is [n * heads, d]; x stays [n, heads * d].
        HostTensor y(n * heads, d, d);
        ops->rmsnorm(x.t, w.data(), eps, y.t);
        for (int r = 0; r < n; ++r)
            for (int h = 0; h < heads; ++h) {
                double ss = 0.0;
                for (int c = 0; c < d; ++c) ss += double(x.at(r, h * d + c)) * x.at(r, h * d + c);
                const double inv = 1.0 / std::sqrt(ss / d + eps);
                for (int c = 0; c < d; ++c)
                    QVERIFY(close(y.at(r * heads + h, c), x.at(r, h * d + c) * inv * w[c]));
            }
    }

    void l2normPerHeadView() {
        std::mt19937 rng(401);
        const int n = 4, heads = 2, d = 32;
        HostTensor x = random_tensor(rng, n, heads * d, heads * d);
        // In place through a per-head view of x itself.
        const Tensor view{x.buf.data(), DType::F32, n * heads, d, d};
        const std::vector<float> before = x.buf;
        make_cpu_ops(1)->l2norm(view, 1e-6f, view);
        for (int s = 0; s < n * heads; ++s) {
            double ss = 0.0;
            for (int c = 0; c < d; ++c) ss += double(before[s * d + c]) * before[s * d + c];
            for (int c = 0; c < d; ++c)
                QVERIFY(close(x.buf[s * d + c], before[s * d + c] / std::sqrt(ss + 1e-6)));
        }
    }

    void rmsnormGated() {
        std::mt19937 rng(402);
        const int n = 3, heads = 4, d = 8;
        const HostTensor x = random_tensor(rng, n, heads * d, heads * d + 1, -2.0f, 2.0f);
        const HostTensor z = random_tensor(rng, n, heads * d, heads * d + 7, -4.0f, 4.0f);
        const auto w = random_vector(rng, d, 0.5f, 1.5f);
        HostTensor y(n * heads, d, d);
        make_cpu_ops(2)->rmsnorm_gated(x.t, w.data(), z.t, 1e-6f, y.t);
        for (int r = 0; r < n; ++r)
            for (int h = 0; h < heads; ++h) {
                double ss = 0.0;
                for (int c = 0; c < d; ++c) ss += double(x.at(r, h * d + c)) * x.at(r, h * d + c);
                const double inv = 1.0 / std::sqrt(ss / d + 1e-6);
                for (int c = 0; c < d; ++c)
                    QVERIFY(close(y.at(r * heads + h, c),
                                  x.at(r, h * d + c) * inv * w[c] * silu(z.at(r, h * d + c))));
            }
    }

    void elementwise() {
        std::mt19937 rng(403);
        auto ops = make_cpu_ops(2);
        const HostTensor a = random_tensor(rng, 6, 33, 40, -6.0f, 6.0f);
        const HostTensor b = random_tensor(rng, 6, 33, 35, -6.0f, 6.0f);
        HostTensor y = random_tensor(rng, 6, 33, 33);
        ops->swiglu(a.t, b.t, y.t);
        for (int r = 0; r < 6; ++r)
            for (int c = 0; c < 33; ++c) QVERIFY(close(y.at(r, c), silu(a.at(r, c)) * b.at(r, c)));
        ops->sigmoid_mul(a.t, b.t, y.t);
        for (int r = 0; r < 6; ++r)
            for (int c = 0; c < 33; ++c) QVERIFY(close(y.at(r, c), a.at(r, c) * sigmoid(b.at(r, c))));
        HostTensor acc = a;  // the residual add, in place
        acc.t.data = acc.buf.data();
        ops->add(acc.t, b.t, acc.t);
        for (int r = 0; r < 6; ++r) {
            for (int c = 0; c < 33; ++c) QCOMPARE(acc.at(r, c), a.at(r, c) + b.at(r, c));
            for (int c = 33; c < 40; ++c) QCOMPARE(acc.at(r, c), a.at(r, c));  // padding untouched
        }
    }
};

QTEST_APPLESS_MAIN(TestNorms)
#include "test_norms.moc"
