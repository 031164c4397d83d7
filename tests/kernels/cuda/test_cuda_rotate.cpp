// The CUDA rotate (Prism block Hadamard) against the CPU oracle: both sign orders, real block
// sizes and widths, strided views, in place, and block 0 (a copy); the fused swiglu_rotate and
// rmsnorm_gated_rotate.
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
        for (const Case c :
             {Case{1024, 3, 5120, 0, 0}, Case{1024, 7, 17408, 4, 0}, Case{1024, 1, 6144, 0, 8},
              Case{256, 33, 1024, 3, 1}, Case{64, 5, 640, 0, 0}, Case{8, 2, 24, 1, 2}, Case{1, 4, 7, 0, 0},
              Case{2048, 2, 4096, 0, 0}, Case{512, 3, 3584, 2, 1}, Case{1024, 2, 3072, 0, 0}})
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

    // swiglu_rotate (fused on the GPU where a warp takes the block, swiglu then rotate
    // elsewhere) against the CPU's swiglu then rotate: the FFN's width, strided views, a shard's
    // half, a block the warps do not take, block 0.
    void swigluRotate() {
        Backends b;
        std::mt19937 rng(404);
        struct Case {
            int block;
            int64_t rows, cols, pad;
        };
        for (const Case c : {Case{1024, 1, 17408, 0}, Case{1024, 24, 17408, 4}, Case{1024, 5, 8192, 1},
                             Case{128, 3, 640, 2}, Case{2048, 2, 4096, 0}, Case{0, 2, 96, 3}}) {
            const auto s = random_signs(rng, static_cast<size_t>(c.cols));
            const DeviceBytes ds(*b.gpu, s);
            const HostTensor gate = random_tensor(rng, c.rows, c.cols, c.cols + c.pad);
            const HostTensor up = random_tensor(rng, c.rows, c.cols, c.cols + 2 * c.pad);
            HostTensor want(c.rows, c.cols, c.cols + c.pad);
            b.cpu->swiglu_rotate(gate.t, up.t, Rotation{c.block, c.block ? s.data() : nullptr}, want.t);
            const DeviceTensor dg(*b.gpu, gate), du(*b.gpu, up);
            const DeviceTensor dy(*b.gpu, c.rows, c.cols, c.cols + c.pad);
            b.gpu->swiglu_rotate(dg.t, du.t, Rotation{c.block, c.block ? ds.as<float>() : nullptr}, dy.t);
            const double err = tensor_error(dy.download(), want);
            qInfo("swiglu_rotate block %d %lldx%lld: error %.3g", c.block, static_cast<long long>(c.rows),
                  static_cast<long long>(c.cols), err);
            QVERIFY2(err <= 1e-6,
                     qPrintable(QString("block %1 cols %2: %3").arg(c.block).arg(c.cols).arg(err)));
        }
    }

    // rmsnorm_gated_rotate (fused on the GPU for heads of 64, 128 or 256 in a warp-sized
    // block, rmsnorm_gated then rotate elsewhere) against the CPU's rmsnorm_gated then rotate:
    // 27B's 48 heads of 128 (z a column range of a wider tensor, as GDN's qkvz), heads of 64
    // and 256, no norm weight, and shapes that fall back (block 0, a head of 96).
    void rmsnormGatedRotate() {
        Backends b;
        std::mt19937 rng(405);
        struct Case {
            int block;
            int64_t rows, heads, width;
            bool weight;
        };
        for (const Case c :
             {Case{1024, 1, 48, 128, true}, Case{1024, 24, 48, 128, true}, Case{256, 3, 8, 64, true},
              Case{1024, 2, 8, 256, false}, Case{0, 2, 4, 128, true}, Case{1024, 2, 32, 96, true}}) {
            const int64_t cols = c.heads * c.width;
            const auto s = random_signs(rng, static_cast<size_t>(cols));
            const DeviceBytes ds(*b.gpu, s);
            std::vector<float> w(static_cast<size_t>(c.width));
            for (float& v : w) v = std::uniform_real_distribution<float>(0.5f, 1.5f)(rng);
            const DeviceBytes dw(*b.gpu, w);
            const HostTensor x = random_tensor(rng, c.rows, cols, cols);
            const HostTensor zwide = random_tensor(rng, c.rows, cols + 40, cols + 40);  // z: columns 40..
            const Tensor z = zwide.t.cols_view(40, cols);
            HostTensor want(c.rows, cols, cols);
            const Rotation host_r{c.block, c.block ? s.data() : nullptr};
            b.cpu->rmsnorm_gated_rotate(x.t, c.weight ? w.data() : nullptr, z, 1e-6f, c.width, host_r,
                                        want.t);
            const DeviceTensor dx(*b.gpu, x), dzw(*b.gpu, zwide);
            const DeviceTensor dy(*b.gpu, c.rows, cols, cols);
            b.gpu->rmsnorm_gated_rotate(dx.t, c.weight ? dw.as<float>() : nullptr, dzw.t.cols_view(40, cols),
                                        1e-6f, c.width, Rotation{c.block, c.block ? ds.as<float>() : nullptr},
                                        dy.t);
            const double err = tensor_error(dy.download(), want);
            qInfo("rmsnorm_gated_rotate block %d %lld heads of %lld, %lld rows: error %.3g", c.block,
                  static_cast<long long>(c.heads), static_cast<long long>(c.width),
                  static_cast<long long>(c.rows), err);
            QVERIFY2(err <= 1e-5,
                     qPrintable(QString("block %1 width %2: %3").arg(c.block).arg(c.width).arg(err)));
        }
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
