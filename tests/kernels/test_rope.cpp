// Tests of the CPU rope (NeoX rotate-half on the first n_rot dims of each head) against the
// formula in double at random, long positions.
#include "kernels/ops.h"
#include "tests/kernels/kernel_test_util.h"

#include <QtTest>

using namespace niwa::kernels;
using namespace niwa::kernels::test;

class TestRope : public QObject {
    Q_OBJECT

private slots:
    void rotatesTheFirstDimsOfEachHead() {
        std::mt19937 rng(500);
        const int n = 6, heads = 3, head_dim = 32, n_rot = 8;
        const double theta = 1e7;
        std::vector<int32_t> pos(n);
        for (auto& p : pos) p = static_cast<int32_t>(rng() % 262144);
        StepInfo step;
        step.n_tokens = n;
        step.positions = pos.data();
        HostTensor x = random_tensor(rng, n, heads * head_dim, heads * head_dim + 5);
        const HostTensor before = x;
        make_cpu_ops(2)->rope(x.t, head_dim, n_rot, static_cast<float>(theta), step);
        const int half = n_rot / 2;
        for (int r = 0; r < n; ++r)
            for (int h = 0; h < heads; ++h) {
                const int base = h * head_dim;
                for (int i = 0; i < half; ++i) {
                    const double angle = pos[r] / std::pow(theta, 2.0 * i / n_rot);
                    const double a = before.at(r, base + i), b = before.at(r, base + i + half);
                    QVERIFY(std::abs(x.at(r, base + i) - (a * std::cos(angle) - b * std::sin(angle))) < 1e-5);
                    QVERIFY(std::abs(x.at(r, base + i + half) - (b * std::cos(angle) + a * std::sin(angle))) <
                            1e-5);
                }
                for (int i = n_rot; i < head_dim; ++i) QCOMPARE(x.at(r, base + i), before.at(r, base + i));
            }
        for (int r = 0; r < n; ++r)
            for (int c = heads * head_dim; c < x.t.ld; ++c) QCOMPARE(x.at(r, c), before.at(r, c));
    }

    void fullRotationAtPositionZeroIsIdentity() {
        std::mt19937 rng(501);
        const std::vector<int32_t> pos = {0, 1};
        StepInfo step;
        step.n_tokens = 2;
        step.positions = pos.data();
        HostTensor x = random_tensor(rng, 2, 16, 16);
        const HostTensor before = x;
        make_cpu_ops(1)->rope(x.t, 16, 16, 10000.0f, step);
        for (int c = 0; c < 16; ++c) QCOMPARE(x.at(0, c), before.at(0, c));
        // Position 1, pair 0: angle 1 radian exactly.
        QVERIFY(std::abs(x.at(1, 0) - (before.at(1, 0) * std::cos(1.0) - before.at(1, 8) * std::sin(1.0))) <
                1e-6);
    }
};

QTEST_APPLESS_MAIN(TestRope)
#include "test_rope.moc"
