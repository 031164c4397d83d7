// The CUDA rope against the CPU oracle: the model's partial rotary (64 of 256 dims, theta 1e7)
// at positions up to the full context, whole rows and per-head row views; and the fused q/k
// norm + rope against the CPU's rmsnorm and rope.
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

    // The fused per-head RMS norm and rope of the attention layer's q and k against the CPU's
    // rmsnorm and rope: q as every other head of a [query | gate] row, k as heads of a wider row
    // (the model's views), norm weights, long positions, poisoned outputs; no rotation too.
    void qkNormRopeMatchesTheCpu() {
        Backends b;
        std::mt19937 rng(801);
        struct Case {
            int64_t tokens, q_heads, k_heads;
            int head_dim, n_rot;
        };
        for (const Case c : {Case{1, 24, 4, 256, 64}, Case{7, 6, 1, 256, 64}, Case{33, 3, 2, 128, 128},
                             Case{5, 2, 2, 64, 0}, Case{24, 24, 4, 256, 64}}) {
            const int64_t D = c.head_dim, T = c.tokens;
            std::vector<int32_t> pos(static_cast<size_t>(T));
            for (auto& p : pos) p = static_cast<int32_t>(rng() % 262144);
            pos[0] = 262143;
            const DeviceBytes dpos(*b.gpu, pos);
            StepInfo host_step, dev_step;
            host_step.n_tokens = dev_step.n_tokens = static_cast<int>(T);
            host_step.positions = pos.data();
            dev_step.positions = dpos.as<int32_t>();
            const std::vector<float> qw = random_vector(rng, size_t(D), 0.5f, 1.5f);
            const std::vector<float> kw = random_vector(rng, size_t(D), 0.5f, 1.5f);
            const DeviceBytes dqw(*b.gpu, qw), dkw(*b.gpu, kw);
            // q: rows of [query | gate] per head, the query halves read; k: the first k_heads
            // heads of a [T, 2 k_heads D + 3] row.
            const HostTensor q = random_tensor(rng, T * c.q_heads, D, 2 * D, -3.0f, 3.0f);
            const HostTensor k = random_tensor(rng, T, c.k_heads * D, 2 * c.k_heads * D + 3, -3.0f, 3.0f);
            const DeviceTensor dq(*b.gpu, q), dk(*b.gpu, k);
            HostTensor q_out(T * c.q_heads, D, D), k_out(T * c.k_heads, D, D);
            const DeviceTensor dq_out(*b.gpu, T * c.q_heads, D, D), dk_out(*b.gpu, T * c.k_heads, D, D);
            b.cpu->rmsnorm(q.t, qw.data(), 1e-6f, q_out.t);
            b.cpu->rmsnorm(k.t, kw.data(), 1e-6f, k_out.t);
            b.cpu->rope(q_out.t, c.head_dim, c.n_rot, 1e7f, host_step);
            b.cpu->rope(k_out.t, c.head_dim, c.n_rot, 1e7f, host_step);
            b.gpu->qk_norm_rope(dq.t, dqw.as<float>(), dq_out.t, dk.t, dkw.as<float>(), dk_out.t, 1e-6f,
                                c.n_rot, 1e7f, dev_step);
            const double eq = tensor_error(dq_out.download(), q_out),
                         ek = tensor_error(dk_out.download(), k_out);
            qInfo("tokens %lld, %lld q and %lld k heads of %d, n_rot %d: error q %.3g k %.3g",
                  static_cast<long long>(T), static_cast<long long>(c.q_heads),
                  static_cast<long long>(c.k_heads), c.head_dim, c.n_rot, eq, ek);
            QVERIFY(eq <= 1e-5);
            QVERIFY(ek <= 1e-5);
        }
    }
};

QTEST_APPLESS_MAIN(TestCudaRope)
#include "test_cuda_rope.moc"
