// The CUDA rope against the CPU oracle: the model's partial rotary (64 of 256 dims, theta 1e7)
// at positions up to the full context, whole rows and per-head row views; the fused q/k
// norm + rope against the CPU's rmsnorm and rope; and the same fused with kv_store into each
// pool type, against the two ops run apart and against the CPU.
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

    // qk_norm_rope_store against qk_norm_rope then kv_store on the GPU (the same bits in q_out and
    // in both pools, poisoned alike; a token whose slot is outside the pool stores nothing), and
    // on an F32 pool against the CPU's default, the two ops run apart.
    void qkNormRopeStoreMatchesTheOpsApart() {
        Backends b;
        std::mt19937 rng(802);
        struct Case {
            int64_t tokens, q_heads, k_heads;
            int head_dim, n_rot;
            DType pool;
            bool slot_outside;
        };
        for (const Case c :
             {Case{1, 24, 4, 256, 64, DType::F16, false}, Case{3, 6, 1, 256, 64, DType::BF16, true},
              Case{24, 24, 4, 256, 64, DType::F16, true}, Case{5, 2, 2, 64, 0, DType::F32, false},
              Case{9, 3, 2, 128, 128, DType::F32, true}}) {
            const int64_t D = c.head_dim, T = c.tokens, width = c.k_heads * D;
            const int n_blocks = 4, bt = 16;
            const size_t pool_elems = size_t(n_blocks) * bt * size_t(width);
            const size_t elem = c.pool == DType::F32 ? 4 : 2;
            std::vector<int32_t> pos(static_cast<size_t>(T)), token_slots(static_cast<size_t>(n_blocks * bt));
            for (auto& p : pos) p = static_cast<int32_t>(rng() % 262144);
            for (size_t i = 0; i < token_slots.size(); ++i) token_slots[i] = int32_t(i);
            std::shuffle(token_slots.begin(), token_slots.end(), rng);
            token_slots.resize(size_t(T));
            if (c.slot_outside) token_slots[size_t(T) / 2] = int32_t(pool_elems / size_t(width));  // one past
            const DeviceBytes dpos(*b.gpu, pos), dslots(*b.gpu, token_slots);
            StepInfo step;
            step.n_tokens = static_cast<int>(T);
            step.positions = dpos.as<int32_t>();
            step.kv_slots = dslots.as<int32_t>();
            const std::vector<float> qw = random_vector(rng, size_t(D), 0.5f, 1.5f);
            const std::vector<float> kw = random_vector(rng, size_t(D), 0.5f, 1.5f);
            const DeviceBytes dqw(*b.gpu, qw), dkw(*b.gpu, kw);
            // q as every other head of [query | gate] rows; k and v as the halves of one [k | v]
            // row a token, as the model views them.
            const HostTensor q = random_tensor(rng, T * c.q_heads, D, 2 * D, -3.0f, 3.0f);
            const HostTensor kv = random_tensor(rng, T, 2 * width, 2 * width + 3, -3.0f, 3.0f);
            const DeviceTensor dq(*b.gpu, q), dkv(*b.gpu, kv);
            const Tensor dk = dkv.t.cols_view(0, width), dv = dkv.t.cols_view(width, width);
            std::vector<uint8_t> noise(pool_elems * elem);
            for (auto& x : noise) x = uint8_t(rng() & 0x3F);  // finite in every type
            const DeviceBytes kp_fused(*b.gpu, noise), vp_fused(*b.gpu, noise), kp_apart(*b.gpu, noise),
                vp_apart(*b.gpu, noise);
            const KvLayer fused{kp_fused.p, vp_fused.p, c.pool, n_blocks, bt, int(c.k_heads), int(D)};
            const KvLayer apart{kp_apart.p, vp_apart.p, c.pool, n_blocks, bt, int(c.k_heads), int(D)};
            const DeviceTensor q_fused(*b.gpu, T * c.q_heads, D, D), q_apart(*b.gpu, T * c.q_heads, D, D);
            const DeviceTensor k_fused(*b.gpu, T * c.k_heads, D, D), k_apart(*b.gpu, T * c.k_heads, D, D);
            b.gpu->qk_norm_rope_store(dq.t, dqw.as<float>(), q_fused.t, dk, dkw.as<float>(), k_fused.t, dv,
                                      1e-6f, c.n_rot, 1e7f, fused, step);
            b.gpu->qk_norm_rope(dq.t, dqw.as<float>(), q_apart.t, dk, dkw.as<float>(), k_apart.t, 1e-6f,
                                c.n_rot, 1e7f, step);
            b.gpu->kv_store(apart, Tensor{k_apart.t.data, DType::F32, T, width, width}, dv, step);
            auto bytes = [&](const DeviceBytes& d) {
                std::vector<uint8_t> h(pool_elems * elem);
                b.gpu->download(h.data(), d.p, h.size());
                return h;
            };
            const std::vector<uint8_t> kf = bytes(kp_fused), vf = bytes(vp_fused);
            QVERIFY(kf == bytes(kp_apart));
            QVERIFY(vf == bytes(vp_apart));
            QVERIFY(kf != noise && vf != noise);
            QVERIFY(same_bits(q_fused.download().buf, q_apart.download().buf));
            int stored = 0;
            for (size_t s = 0; s < token_slots.size(); ++s) {
                if (size_t(token_slots[s]) * size_t(width) >= pool_elems) continue;
                const size_t at = size_t(token_slots[s]) * size_t(width) * elem;
                stored += std::memcmp(kf.data() + at, noise.data() + at, size_t(width) * elem) != 0;
            }
            QCOMPARE(stored, int(T) - (c.slot_outside ? 1 : 0));
            double err_pool = 0.0;
            if (c.pool == DType::F32 && !c.slot_outside) {
                std::vector<float> kpool(pool_elems), vpool(pool_elems);
                std::memcpy(kpool.data(), noise.data(), noise.size());
                std::memcpy(vpool.data(), noise.data(), noise.size());
                StepInfo host = step;
                host.positions = pos.data();
                host.kv_slots = token_slots.data();
                HostTensor q_out(T * c.q_heads, D, D), k_out(T * c.k_heads, D, D);
                b.cpu->qk_norm_rope_store(
                    q.t, qw.data(), q_out.t, kv.t.cols_view(0, width), kw.data(), k_out.t,
                    kv.t.cols_view(width, width), 1e-6f, c.n_rot, 1e7f,
                    KvLayer{kpool.data(), vpool.data(), DType::F32, n_blocks, bt, int(c.k_heads), int(D)},
                    host);
                auto as_doubles = [](const void* p, size_t n) {
                    std::vector<float> f(n);
                    std::memcpy(f.data(), p, n * sizeof(float));
                    return std::vector<double>(f.begin(), f.end());
                };
                err_pool = std::max(
                    relative_error(as_doubles(kf.data(), pool_elems), as_doubles(kpool.data(), pool_elems)),
                    relative_error(as_doubles(vf.data(), pool_elems), as_doubles(vpool.data(), pool_elems)));
                const double eq = tensor_error(q_fused.download(), q_out);
                QVERIFY(eq <= 1e-5);
                QVERIFY(err_pool <= 1e-5);
            }
            qInfo("tokens %lld, %lld q and %lld k heads of %d, pool %s: the ops apart's bits; CPU error %.3g",
                  static_cast<long long>(T), static_cast<long long>(c.q_heads),
                  static_cast<long long>(c.k_heads), c.head_dim, dtype_name(c.pool), err_pool);
        }
    }

    // A k_out that is not whole head rows of the pool's geometry is refused with what to fix.
    void qkNormRopeStoreRefusesOtherKeys() {
        Backends b;
        for (Ops* ops : {b.cpu.get(), b.gpu.get()}) {
            std::vector<float> pool(4 * 16 * 2 * 64, 0.0f);
            const KvLayer kv{pool.data(), pool.data(), DType::F32, 4, 16, 2, 64};
            HostTensor q(2, 128, 128), k(1, 128, 128), v(1, 128, 128), q_out(2, 128, 128), k_out(1, 128, 128);
            StepInfo step;
            step.n_tokens = 1;
            bool refused = false;
            try {
                ops->qk_norm_rope_store(q.t, nullptr, q_out.t, k.t, nullptr, k_out.t, v.t, 1e-6f, 0, 1e7f, kv,
                                        step);
            } catch (const std::invalid_argument& e) {
                refused = std::string(e.what()).find("head rows") != std::string::npos;
            }
            QVERIFY(refused);
        }
    }
};

QTEST_APPLESS_MAIN(TestCudaRope)
#include "test_cuda_rope.moc"
