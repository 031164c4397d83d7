// The CUDA rotate (Prism block Hadamard) against the CPU oracle: both sign orders, real block
// sizes and widths, strided views, in place, and block 0 (a copy).
#include "tests/kernels/cuda/cuda_test_util.h"

#include <QtTest>

using namespace niwa::kernels;
using namespace niwa::kernels::test;

namespace {

std::vector<float> random_signs(std::mt19937& rng, size_t n) {
    std::vector<float> s(n);
    for (float& x : s) x = (rng() & 1) ? 1.0f : -1.0f;
    return s;
}

}  // namespace

class TestCudaRotate : public QObject {
    Q_OBJECT

private slots:
    void matchesTheCpu() {
        Backends b;
        std::mt19937 rng(400);
        struct Case {
            int block;
            int64_t rows, cols, x_pad, y_pad;
        };
        for (const Case c : {Case{1024, 3, 5120, 0, 0}, Case{1024, 7, 17408, 4, 0}, Case{1024, 1, 6144, 0, 8},
                             Case{256, 33, 1024, 3, 1}, Case{64, 5, 640, 0, 0}, Case{8, 2, 24, 1, 2},
                             Case{1, 4, 7, 0, 0}, Case{2048, 2, 4096, 0, 0}})
            for (bool signs_first : {true, false}) {
                const auto s = random_signs(rng, static_cast<size_t>(c.cols));
                const DeviceBytes ds(*b.gpu, s);
                const HostTensor x = random_tensor(rng, c.rows, c.cols, c.cols + c.x_pad);
                HostTensor want(c.rows, c.cols, c.cols + c.y_pad);
                b.cpu->rotate(x.t, Rotation{c.block, s.data()}, signs_first, want.t);
                const DeviceTensor dx(*b.gpu, x);
                const DeviceTensor dy(*b.gpu, c.rows, c.cols, c.cols + c.y_pad);
                b.gpu->rotate(dx.t, Rotation{c.block, ds.as<float>()}, signs_first, dy.t);
                const double err = tensor_error(dy.download(), want);
                qInfo("block %d %lldx%lld signs_first %d: error %.3g", c.block,
                      static_cast<long long>(c.rows), static_cast<long long>(c.cols), signs_first, err);
                QVERIFY2(err <= 1e-6,
                         qPrintable(QString("block %1 cols %2: %3").arg(c.block).arg(c.cols).arg(err)));
            }
    }

    void inPlace() {
        Backends b;
        std::mt19937 rng(401);
        const int block = 1024;
        const auto s = random_signs(rng, 5 * block);
        const DeviceBytes ds(*b.gpu, s);
        const HostTensor x = random_tensor(rng, 9, 5 * block, 5 * block + 2);
        HostTensor want(9, 5 * block, 5 * block + 2);
        b.cpu->rotate(x.t, Rotation{block, s.data()}, true, want.t);
        const DeviceTensor dx(*b.gpu, x);
        b.gpu->rotate(dx.t, Rotation{block, ds.as<float>()}, true, dx.t);
        QVERIFY(tensor_error(dx.download(), want) <= 1e-6);
        // The inverse restores the input.
        b.gpu->rotate(dx.t, Rotation{block, ds.as<float>()}, false, dx.t);
        QVERIFY(tensor_error(dx.download(), x) <= 1e-5);
    }

    void blockZeroCopies() {
        Backends b;
        std::mt19937 rng(402);
        const HostTensor x = random_tensor(rng, 3, 10, 12);
        const DeviceTensor dx(*b.gpu, x);
        const DeviceTensor dy(*b.gpu, 3, 10, 11);
        b.gpu->rotate(dx.t, Rotation{0, nullptr}, true, dy.t);
        QCOMPARE(tensor_error(dy.download(), x), 0.0);
    }

    void rejectsBadBlocks() {
        Backends b;
        std::mt19937 rng(403);
        const DeviceTensor x(*b.gpu, random_tensor(rng, 1, 24, 24));
        const DeviceBytes s(*b.gpu, random_signs(rng, 24));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 b.gpu->rotate(x.t, Rotation{16, s.as<float>()}, true, x.t));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 b.gpu->rotate(x.t, Rotation{12, s.as<float>()}, true, x.t));
    }
};

QTEST_APPLESS_MAIN(TestCudaRotate)
#include "test_cuda_rotate.moc"
