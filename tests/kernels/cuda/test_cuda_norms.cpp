// The CUDA rmsnorm, residual_norm and l2norm against the CPU oracle: whole rows, per-head views
// (a [n, H*D] input normalised into [n*H, D]), strided column views, in place, without a weight.
#include "tests/kernels/cuda/cuda_test_util.h"

#include <QtTest>

using namespace niwa::kernels;
using namespace niwa::kernels::test;

class TestCudaNorms : public QObject {
    Q_OBJECT

private slots:
    void rmsnormRows() {
        Backends b;
        std::mt19937 rng(600);
        for (int64_t n : {1, 7, 33, 200}) {
            const int64_t cols = 5120;
            const HostTensor x = random_tensor(rng, n, cols, cols + 3, -4.0f, 4.0f);
            const auto w = random_vector(rng, cols, 0.5f, 1.5f);
            const DeviceBytes dw(*b.gpu, w);
            HostTensor want(n, cols, cols + 1);
            b.cpu->rmsnorm(x.t, w.data(), 1e-6f, want.t);
            const DeviceTensor dx(*b.gpu, x);
            const DeviceTensor dy(*b.gpu, n, cols, cols + 1);
            b.gpu->rmsnorm(dx.t, dw.as<float>(), 1e-6f, dy.t);
            const double err = tensor_error(dy.download(), want);
            qInfo("rmsnorm n=%lld: error %.3g", static_cast<long long>(n), err);
            QVERIFY(err <= 1e-5);
        }
    }

    // attention's q_norm: the query half of each [query | gate] head, into rows of one head.
    void rmsnormHeads() {
        Backends b;
        std::mt19937 rng(601);
        const int64_t T = 5, nh = 24, D = 256;
        const HostTensor qg = random_tensor(rng, T * nh, 2 * D, 2 * D);
        const auto w = random_vector(rng, D, 0.5f, 1.5f);
        const DeviceBytes dw(*b.gpu, w);
        HostTensor want(T * nh, D, D);
        b.cpu->rmsnorm(qg.t.cols_view(0, D), w.data(), 1e-6f, want.t);
        const DeviceTensor dqg(*b.gpu, qg);
        const DeviceTensor dy(*b.gpu, T * nh, D, D);
        b.gpu->rmsnorm(dqg.t.cols_view(0, D), dw.as<float>(), 1e-6f, dy.t);
        QVERIFY(tensor_error(dy.download(), want) <= 1e-5);

        // [n, H*D] into [n*H, D], and in place with no weight.
        const HostTensor x = random_tensor(rng, 3, 4 * D, 4 * D);
        HostTensor want2(3 * 4, D, D);
        b.cpu->rmsnorm(x.t, w.data(), 1e-6f, want2.t);
        const DeviceTensor dx(*b.gpu, x);
        const DeviceTensor dy2(*b.gpu, 3 * 4, D, D);
        b.gpu->rmsnorm(dx.t, dw.as<float>(), 1e-6f, dy2.t);
        QVERIFY(tensor_error(dy2.download(), want2) <= 1e-5);

        HostTensor want3 = x;
        want3.t.data = want3.buf.data();
        b.cpu->rmsnorm(want3.t, nullptr, 1e-6f, want3.t);
        b.gpu->rmsnorm(dx.t, nullptr, 1e-6f, dx.t);
        QVERIFY(tensor_error(dx.download(), want3) <= 1e-5);
    }

    // The fused residual add + rmsnorm + input Hadamard against the CPU's add, rmsnorm, rotate.
    void residualNorm() {
        Backends b;
        std::mt19937 rng(603);
        const int64_t cols = 5120;
        const auto w = random_vector(rng, cols, 0.5f, 1.5f);
        auto signs = random_vector(rng, cols, -1.0f, 1.0f);
        for (float& s : signs) s = s < 0 ? -1.0f : 1.0f;
        const DeviceBytes dw(*b.gpu, w), dsigns(*b.gpu, signs);
        for (int64_t n : {1, 2, 5, 33})  // 1 and 2: the cluster kernel
            for (int block : {0, 8, 128, 256, 512, 1024})
                for (bool residual : {false, true}) {
                    const HostTensor x = random_tensor(rng, n, cols, cols + 2, -4.0f, 4.0f);
                    const HostTensor y = random_tensor(rng, n, cols, cols, -1.0f, 1.0f);
                    HostTensor want_x = x;
                    want_x.t.data = want_x.buf.data();
                    HostTensor want_n(n, cols, cols), want_r(n, cols, cols + 1);
                    b.cpu->residual_norm(want_x.t, residual ? y.t : Tensor{}, w.data(), 1e-6f, want_n.t,
                                         Rotation{block, signs.data()}, want_r.t);
                    const DeviceTensor dx(*b.gpu, x), dy(*b.gpu, y);
                    const DeviceTensor dn(*b.gpu, n, cols, cols), dr(*b.gpu, n, cols, cols + 1);
                    b.gpu->residual_norm(dx.t, residual ? dy.t : Tensor{}, dw.as<float>(), 1e-6f, dn.t,
                                         Rotation{block, dsigns.as<float>()}, dr.t);
                    const double ex = tensor_error(dx.download(), want_x);
                    const double en = tensor_error(dn.download(), want_n);
                    const double er = tensor_error(dr.download(), want_r);
                    qInfo("residual_norm n=%lld block %d residual %d: x %.3g xn %.3g xr %.3g",
                          static_cast<long long>(n), block, int(residual), ex, en, er);
                    QVERIFY(ex == 0.0);
                    QVERIFY(en <= 1e-5);
                    QVERIFY(er <= 1e-5);
                }
    }

    // GDN's q and k: column views of 128 out of the conv output's rows.
    void l2normViews() {
        Backends b;
        std::mt19937 rng(602);
        for (int64_t T : {1, 7, 64}) {
            const int64_t ds = 128, width = 10240;
            const HostTensor conv = random_tensor(rng, T, width, width);
            HostTensor want(T, 2048, 2048);
            const DeviceTensor dconv(*b.gpu, conv);
            const DeviceTensor dy(*b.gpu, T, 2048, 2048);
            for (int64_t h = 0; h < 16; ++h) {
                b.cpu->l2norm(conv.t.cols_view(h * ds, ds), 1e-6f, want.t.cols_view(h * ds, ds));
                b.gpu->l2norm(dconv.t.cols_view(h * ds, ds), 1e-6f, dy.t.cols_view(h * ds, ds));
            }
            const double err = tensor_error(dy.download(), want);
            qInfo("l2norm T=%lld: error %.3g", static_cast<long long>(T), err);
            QVERIFY(err <= 1e-5);
        }
    }
};

QTEST_APPLESS_MAIN(TestCudaNorms)
#include "test_cuda_norms.moc"
