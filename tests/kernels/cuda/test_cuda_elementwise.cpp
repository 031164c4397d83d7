// The CUDA add, swiglu and sigmoid_mul against the CPU oracle: aligned rows (the float4 path),
// misaligned column views (the scalar path), and y aliasing an input.
#include "tests/kernels/cuda/cuda_test_util.h"

#include <QtTest>

using namespace niwa::kernels;
using namespace niwa::kernels::test;

namespace {

enum class Op { Add, Swiglu, SigmoidMul };

void apply(Ops& ops, Op op, const Tensor& a, const Tensor& b, const Tensor& y) {
    if (op == Op::Add) ops.add(a, b, y);
    if (op == Op::Swiglu) ops.swiglu(a, b, y);
    if (op == Op::SigmoidMul) ops.sigmoid_mul(a, b, y);
}

}  // namespace

class TestCudaElementwise : public QObject {
    Q_OBJECT

private slots:
    void matchesTheCpu_data() {
        QTest::addColumn<int>("op_i");
        QTest::newRow("add") << static_cast<int>(Op::Add);
        QTest::newRow("swiglu") << static_cast<int>(Op::Swiglu);
        QTest::newRow("sigmoid_mul") << static_cast<int>(Op::SigmoidMul);
    }

    void matchesTheCpu() {
        QFETCH(int, op_i);
        const auto op = static_cast<Op>(op_i);
        Backends b;
        std::mt19937 rng(700 + op_i);
        struct Case {
            int64_t rows, cols, lda, ldb, ldy, c0;  // c0: inputs are column views from c0
        };
        for (const Case c : {Case{1, 17408, 17408, 17408, 17408, 0}, Case{7, 5120, 5124, 5120, 5128, 0},
                             Case{33, 1001, 1003, 1005, 1001, 0}, Case{200, 256, 520, 520, 256, 1},
                             Case{3, 6, 9, 9, 7, 3}}) {
            const HostTensor a = random_tensor(rng, c.rows, c.cols + c.c0, c.lda, -6.0f, 6.0f);
            const HostTensor bb = random_tensor(rng, c.rows, c.cols + c.c0, c.ldb, -6.0f, 6.0f);
            HostTensor want(c.rows, c.cols, c.ldy);
            apply(*b.cpu, op, a.t.cols_view(c.c0, c.cols), bb.t.cols_view(c.c0, c.cols), want.t);
            const DeviceTensor da(*b.gpu, a), db(*b.gpu, bb);
            const DeviceTensor dy(*b.gpu, c.rows, c.cols, c.ldy);
            apply(*b.gpu, op, da.t.cols_view(c.c0, c.cols), db.t.cols_view(c.c0, c.cols), dy.t);
            const double err = tensor_error(dy.download(), want);
            qInfo("%lldx%lld: error %.3g", static_cast<long long>(c.rows), static_cast<long long>(c.cols),
                  err);
            QVERIFY(err <= 1e-6);
        }
    }

    void inPlace() {
        Backends b;
        std::mt19937 rng(710);
        const HostTensor a = random_tensor(rng, 9, 5120, 5120), bb = random_tensor(rng, 9, 5120, 5120);
        HostTensor want(9, 5120, 5120);
        b.cpu->add(a.t, bb.t, want.t);
        const DeviceTensor da(*b.gpu, a), db(*b.gpu, bb);
        b.gpu->add(da.t, db.t, da.t);
        QCOMPARE(tensor_error(da.download(), want), 0.0);
    }
};

QTEST_APPLESS_MAIN(TestCudaElementwise)
#include "test_cuda_elementwise.moc"
