// Tests of the CUDA gdn_gates and rmsnorm_gated against the CPU ops, on padded views, per-head
// row views, in place, and with softplus past its shortcut.
#include "kernels/ops.h"
#include "tests/kernels/cuda/cuda_test_util.h"

using namespace niwa::kernels;
using namespace niwa::kernels::test;

class TestCudaGdnSmall : public QObject {
    Q_OBJECT

private slots:
    void gates() {
        std::mt19937 rng(300);
        Backends b;
        const int rows = 37, heads = 48;
        HostTensor alpha = random_tensor(rng, rows, heads, heads + 3, -8.0f, 8.0f);
        HostTensor beta = random_tensor(rng, rows, heads, heads + 1, -8.0f, 8.0f);
        alpha.at(0, 0) = 30.0f;  // softplus past the x > 20 shortcut
        alpha.at(1, 1) = -40.0f;
        const auto a = random_vector(rng, heads, -2.0f, -0.1f);
        const auto dt_bias = random_vector(rng, heads);
        DeviceTensor ga(*b.gpu, alpha), gb(*b.gpu, beta);
        DeviceBytes da(*b.gpu, a), ddt(*b.gpu, dt_bias);
        b.cpu->gdn_gates(alpha.t, beta.t, a.data(), dt_bias.data());
        b.gpu->gdn_gates(ga.t, gb.t, da.as<float>(), ddt.as<float>());
        const double ea = tensor_error(ga.download(), alpha), eb = tensor_error(gb.download(), beta);
        qInfo("gdn_gates: alpha error %.3g, beta error %.3g", ea, eb);
        QVERIFY2(ea <= 1e-5 && eb <= 1e-5, qPrintable(QString("alpha %1 beta %2").arg(ea).arg(eb)));
    }

    void rmsnormGated() {
        std::mt19937 rng(301);
        Backends b;
        const int rows = 19, heads = 6, width = 128;
        const HostTensor x = random_tensor(rng, rows, heads * width, heads * width + 5, -3.0f, 3.0f);
        const HostTensor z = random_tensor(rng, rows, heads * width, heads * width + 2, -4.0f, 4.0f);
        const auto w = random_vector(rng, width, 0.5f, 1.5f);
        DeviceBytes dw(*b.gpu, w);
        for (bool with_w : {true, false}) {
            // [rows, heads * width] read as segments of width, into a [rows * heads, width] view.
            HostTensor want(rows * heads, width, width);
            b.cpu->rmsnorm_gated(x.t, with_w ? w.data() : nullptr, z.t, 1e-6f, want.t);
            DeviceTensor gx(*b.gpu, x), gz(*b.gpu, z), gy(*b.gpu, rows * heads, width, width);
            b.gpu->rmsnorm_gated(gx.t, with_w ? dw.as<float>() : nullptr, gz.t, 1e-6f, gy.t);
            const double e = tensor_error(gy.download(), want);
            qInfo("rmsnorm_gated (w %d): error %.3g", int(with_w), e);
            QVERIFY2(e <= 1e-5, qPrintable(QString::number(e)));
        }
        // In place on per-head rows, as the forward calls it.
        HostTensor io = random_tensor(rng, rows * heads, width, width, -3.0f, 3.0f);
        const HostTensor zr = random_tensor(rng, rows * heads, width, width);
        DeviceTensor gio(*b.gpu, io), gzr(*b.gpu, zr);
        b.cpu->rmsnorm_gated(io.t, w.data(), zr.t, 1e-6f, io.t);
        b.gpu->rmsnorm_gated(gio.t, dw.as<float>(), gzr.t, 1e-6f, gio.t);
        const double e = tensor_error(gio.download(), io);
        qInfo("rmsnorm_gated in place: error %.3g", e);
        QVERIFY2(e <= 1e-5, qPrintable(QString::number(e)));
    }
};

QTEST_APPLESS_MAIN(TestCudaGdnSmall)
#include "test_cuda_gdn_small.moc"
