// The CUDA rope against the CPU oracle: the model's partial rotary (64 of 256 dims, theta 1e7)
// at positions up to the full context, whole rows and per-head row views.
#include "tests/kernels/cuda/cuda_test_util.h"

#include <QtTest>

using namespace niwa::kernels;
using namespace niwa::kernels::test;

class TestCudaRope : public QObject {
    Q_OBJECT

private slots:
    void matchesTheCpu() {
        Backends b;
        std::mt19937 rng(800);
        struct Case {
            int64_t tokens, heads;
            int head_dim, n_rot;
            int64_t pad;
            bool per_head_rows;  // x viewed as [tokens * heads, head_dim]
        };
        for (const Case c :
             {Case{1, 24, 256, 64, 0, false}, Case{7, 4, 256, 64, 8, false}, Case{33, 24, 256, 64, 0, true},
              Case{200, 2, 128, 128, 0, false}, Case{5, 3, 64, 32, 0, true}}) {
            std::vector<int32_t> pos(static_cast<size_t>(c.tokens));
            for (auto& p : pos) p = static_cast<int32_t>(rng() % 262144);
            pos[0] = 262143;
            const DeviceBytes dpos(*b.gpu, pos);
            const int64_t cols = c.heads * c.head_dim;
            HostTensor x = random_tensor(rng, c.tokens, cols, cols + c.pad);
            const DeviceTensor dx(*b.gpu, x);
            auto view = [&](const Tensor& t) {
                return c.per_head_rows ? Tensor{t.data, t.type, c.tokens * c.heads, c.head_dim, c.head_dim}
                                       : t;
            };
            StepInfo host_step, dev_step;
            host_step.n_tokens = dev_step.n_tokens = static_cast<int>(c.tokens);
            host_step.positions = pos.data();
            dev_step.positions = dpos.as<int32_t>();
            if (c.per_head_rows && c.pad != 0) continue;  // a per-head view needs packed rows
            b.cpu->rope(view(x.t), c.head_dim, c.n_rot, 1e7f, host_step);
            b.gpu->rope(view(dx.t), c.head_dim, c.n_rot, 1e7f, dev_step);
            const double err = tensor_error(dx.download(), x);
            qInfo("tokens %lld heads %lld: error %.3g", static_cast<long long>(c.tokens),
                  static_cast<long long>(c.heads), err);
            QVERIFY(err <= 1e-5);
        }
    }
};

QTEST_APPLESS_MAIN(TestCudaRope)
#include "test_cuda_rope.moc"
