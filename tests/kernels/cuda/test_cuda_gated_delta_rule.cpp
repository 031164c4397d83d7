// Tests of the CUDA gated delta rule against the CPU op, in each mode and both precisions, on
// steps of decode tokens, prefill runs (inside, at and past chunk boundaries, several chunks
// with a ragged last one) and both mixed, from a random state in every slot; the whole state
// array is compared afterwards (unused slots untouched), and a second step continues from the
// first. Rows come with odd strides (the chunked kernels' 4-byte copies) and 16-byte-aligned
// ones (their 16-byte copies, the model's case); 27B's head layout runs long enough to span
// the chunked kernels' workspace windows.
#include "kernels/ops.h"
#include "tests/kernels/cuda/cuda_test_util.h"

#include <cstring>

using namespace niwa::kernels;
using namespace niwa::kernels::test;

namespace {

constexpr int kSlots = 9;

struct Geometry {
    int dk, dv, n_k, n_v;
    std::vector<int32_t> key_of_v;
    bool aligned = false;  // row strides multiples of 4 floats (else odd)
};

// Value head h on key head h % n_k (tiled), in fewer heads than 27B, with the same head dims.
Geometry tiled(int dk, int dv, int n_k, int n_v, bool aligned = false) {
    Geometry g{dk, dv, n_k, n_v, std::vector<int32_t>(n_v), aligned};
    for (int h = 0; h < n_v; ++h) g.key_of_v[h] = h % n_k;
    return g;
}

// 27B's layout (MODEL.md): 16 key heads, 48 value heads, value head h on key head h / 3.
Geometry grouped_27b() {
    Geometry g{128, 128, 16, 48, std::vector<int32_t>(48), true};
    for (int h = 0; h < 48; ++h) g.key_of_v[h] = h / 3;
    return g;
}

struct Step {
    std::vector<SeqInfo> seqs;
    StepInfo info;
    HostTensor q, k, v, g, beta;

    Step(std::mt19937& rng, const Geometry& geo, const std::vector<int>& lengths,
         const std::vector<int>& slot_of)
        : q(0, 0, 0), k(0, 0, 0), v(0, 0, 0), g(0, 0, 0), beta(0, 0, 0) {
        int n = 0;
        for (size_t s = 0; s < lengths.size(); ++s) {
            SeqInfo si;
            si.q_start = n;
            si.n_q = lengths[s];
            si.state_slot = slot_of[s];
            si.pos0 = 37 * int(s) + 5;  // continuing sequences (the op reads only the state)
            seqs.push_back(si);
            n += lengths[s];
        }
        info.seqs = seqs.data();
        info.host_seqs = seqs.data();
        info.n_seqs = int(seqs.size());
        info.n_tokens = n;
        const int64_t kw = int64_t(geo.n_k) * geo.dk, vw = int64_t(geo.n_v) * geo.dv;
        q = unit_heads(rng, geo, n, kw + (geo.aligned ? 4 : 3));
        k = unit_heads(rng, geo, n, kw + (geo.aligned ? 8 : 1));
        v = random_tensor(rng, n, vw, vw + (geo.aligned ? 4 : 2));
        g = random_tensor(rng, n, geo.n_v, geo.n_v + 1, -0.8f, -0.001f);
        beta = random_tensor(rng, n, geo.n_v, geo.n_v + 3, 0.05f, 0.95f);
    }

    // q and k arrive L2-normalised per key head.
    static HostTensor unit_heads(std::mt19937& rng, const Geometry& geo, int n, int64_t ld) {
        HostTensor t = random_tensor(rng, n, int64_t(geo.n_k) * geo.dk, ld);
        for (int r = 0; r < n; ++r)
            for (int h = 0; h < geo.n_k; ++h) {
                double ss = 0.0;
                for (int i = 0; i < geo.dk; ++i)
                    ss += double(t.at(r, h * geo.dk + i)) * t.at(r, h * geo.dk + i);
                for (int i = 0; i < geo.dk; ++i)
                    t.at(r, h * geo.dk + i) = float(t.at(r, h * geo.dk + i) / std::sqrt(ss));
            }
        return t;
    }
};

// Runs the steps in order on one backend from state0; returns each step's output and the
// final state array.
struct Result {
    std::vector<HostTensor> outs;
    std::vector<float> state;
};

Result run_cpu(Ops& cpu, const Geometry& geo, const std::vector<Step*>& steps,
               const std::vector<float>& state0, GdnMode mode, float scale) {
    Result r{{}, state0};
    for (const Step* s : steps) {
        HostTensor o(s->info.n_tokens, int64_t(geo.n_v) * geo.dv, int64_t(geo.n_v) * geo.dv + 5);
        cpu.gated_delta_rule(s->q.t, s->k.t, s->v.t, s->g.t, s->beta.t, geo.key_of_v.data(), geo.dk, geo.dv,
                             scale, GdnState{nullptr, r.state.data(), kSlots}, s->info, mode, o.t);
        r.outs.push_back(std::move(o));
    }
    return r;
}

// settled: each step's op begins after the one before has finished (a host sync between), so the
// steps may say so (StepInfo::settled) and the recurrent kernel loads the state early.
Result run_gpu(Ops& gpu, const Geometry& geo, const std::vector<Step*>& steps,
               const std::vector<float>& state0, GdnMode mode, float scale, bool settled = false) {
    Result r{{}, std::vector<float>(state0.size())};
    DeviceBytes state(gpu, state0);
    for (const Step* s : steps) {
        DeviceBytes seqs(gpu, s->seqs);
        StepInfo info = s->info;
        info.seqs = seqs.as<SeqInfo>();
        info.settled = settled;
        if (settled) gpu.synchronize();
        DeviceTensor q(gpu, s->q), k(gpu, s->k), v(gpu, s->v), g(gpu, s->g), beta(gpu, s->beta);
        DeviceTensor o(gpu, s->info.n_tokens, int64_t(geo.n_v) * geo.dv, int64_t(geo.n_v) * geo.dv + 5);
        gpu.gated_delta_rule(q.t, k.t, v.t, g.t, beta.t, geo.key_of_v.data(), geo.dk, geo.dv, scale,
                             GdnState{nullptr, state.as<float>(), kSlots}, info, mode, o.t);
        r.outs.push_back(o.download());
    }
    gpu.download(r.state.data(), state.p, r.state.size() * sizeof(float));
    return r;
}

HostTensor copy_of(const HostTensor& h) {
    HostTensor c(h.t.rows, h.t.cols, h.t.ld);
    std::copy(h.buf.begin(), h.buf.end(), c.buf.begin());
    return c;
}

// gated_delta_rule_raw's inputs for a step: q|k heads as the conv gives them (not normalised,
// of varied sizes), raw alpha and beta, and the gates' parameters.
struct RawStep {
    HostTensor qk, alpha, beta;
    std::vector<float> a, dt_bias;
    RawStep(std::mt19937& rng, const Geometry& geo, int n)
        : qk(random_tensor(rng, n, 2 * int64_t(geo.n_k) * geo.dk, 2 * int64_t(geo.n_k) * geo.dk + 3, -2.0f,
                           2.0f)),
          alpha(random_tensor(rng, n, geo.n_v, geo.n_v + 1, -4.0f, 4.0f)),
          beta(random_tensor(rng, n, geo.n_v, geo.n_v + 2, -5.0f, 5.0f)),
          a(random_vector(rng, size_t(geo.n_v), -2.0f, -0.05f)),
          dt_bias(random_vector(rng, size_t(geo.n_v), -1.0f, 1.0f)) {}
};

const char* mode_name(GdnMode m) {
    return m == GdnMode::Recurrent ? "recurrent" : m == GdnMode::Chunked ? "chunked" : "auto";
}

const char* precision_name(Precision p) {
    return p == Precision::Fp32 ? "fp32" : "mixed";
}

}  // namespace

class TestCudaGatedDeltaRule : public QObject {
    Q_OBJECT

    // Both backends over the same steps in the row's mode, the GPU in the row's precision (the
    // op is fp32 in both); outputs and final states within 1e-4.
    void check(const char* what, uint32_t seed, const Geometry& geo,
               const std::vector<std::vector<int>>& lengths, const std::vector<std::vector<int>>& slot_of) {
        QFETCH(int, mode_id);
        QFETCH(int, precision);
        const auto mode = static_cast<GdnMode>(mode_id);
        const auto p = static_cast<Precision>(precision);
        std::mt19937 rng(seed);
        std::vector<Step> steps;
        steps.reserve(lengths.size());
        for (size_t i = 0; i < lengths.size(); ++i) steps.emplace_back(rng, geo, lengths[i], slot_of[i]);
        std::vector<Step*> ptrs;
        for (Step& s : steps) ptrs.push_back(&s);
        const std::vector<float> state0 =
            random_vector(rng, size_t(kSlots) * geo.n_v * geo.dk * geo.dv, -0.5f, 0.5f);
        const float scale = 1.0f / std::sqrt(float(geo.dk));
        std::vector<bool> used(kSlots, false);
        for (const auto& so : slot_of)
            for (int s : so) used[s] = true;
        const size_t per_slot = size_t(geo.n_v) * geo.dk * geo.dv;
        auto cpu = make_cpu_ops(0);
        const Result want = run_cpu(*cpu, geo, ptrs, state0, mode, scale);
        const char* prec = precision_name(p);
        auto gpu = make_cuda_ops(0, p);
        const Result got = run_gpu(*gpu, geo, ptrs, state0, mode, scale);
        double e_out = 0.0;
        for (size_t i = 0; i < steps.size(); ++i)
            e_out = std::max(e_out, tensor_error(got.outs[i], want.outs[i]));
        const double e_state = relative_error(std::vector<double>(got.state.begin(), got.state.end()),
                                              std::vector<double>(want.state.begin(), want.state.end()));
        qInfo("%s %s %s: output error %.3g, state error %.3g", what, mode_name(mode), prec, e_out, e_state);
        QVERIFY2(e_out <= 1e-4 && e_state <= 1e-4, qPrintable(QString("%1 %2 %3: output %4 state %5")
                                                                  .arg(what, mode_name(mode), prec)
                                                                  .arg(e_out)
                                                                  .arg(e_state)));
        // A settled run: the same arithmetic, the state read early; the same bits.
        const Result early = run_gpu(*gpu, geo, ptrs, state0, mode, scale, true);
        bool same = early.state == got.state;
        for (size_t i = 0; i < steps.size(); ++i)
            same = same && std::memcmp(early.outs[i].buf.data(), got.outs[i].buf.data(),
                                       got.outs[i].buf.size() * sizeof(float)) == 0;
        QVERIFY2(same,
                 qPrintable(QString("%1 %2 %3: a settled run differs").arg(what, mode_name(mode), prec)));
        // Slots no sequence used keep their state exactly.
        for (int s = 0; s < kSlots; ++s)
            if (!used[s])
                QVERIFY(std::equal(got.state.begin() + s * per_slot, got.state.begin() + (s + 1) * per_slot,
                                   state0.begin() + s * per_slot));
    }

    // A row per mode and precision: each runs alone (QtTest's "function:row"), which keeps a
    // run under compute-sanitizer's racecheck to minutes (tests/gpu/run.sh sanitize).
    static void mode_rows() {
        QTest::addColumn<int>("mode_id");
        QTest::addColumn<int>("precision");
        for (GdnMode m : {GdnMode::Recurrent, GdnMode::Chunked, GdnMode::Auto})
            for (Precision p : {Precision::Fp32, Precision::Mixed})
                QTest::newRow(qPrintable(QString("%1 %2").arg(mode_name(m), precision_name(p))))
                    << static_cast<int>(m) << static_cast<int>(p);
    }

private slots:
    void decodeOnly_data() { mode_rows(); }
    void decodeOnly() {
        check("decode 128", 100, tiled(128, 128, 4, 12), {{1, 1, 1, 1, 1}}, {{3, 0, 8, 5, 1}});
    }

    void prefillOnly_data() { mode_rows(); }
    void prefillOnly() {
        check("prefill 128", 101, tiled(128, 128, 2, 6), {{1, 63, 64, 65, 200, 700}}, {{4, 0, 6, 2, 8, 3}});
        check("prefill 128 aligned", 105, tiled(128, 128, 2, 6, true), {{1, 63, 64, 65, 200, 700}},
              {{4, 0, 6, 2, 8, 3}});
    }

    void mixed_data() { mode_rows(); }
    void mixed() {
        check("mixed 128", 102, tiled(128, 128, 4, 12), {{1, 130, 1, 9, 3, 300}}, {{7, 1, 0, 6, 2, 4}});
        check("mixed 64", 103, tiled(64, 64, 2, 4), {{5, 1, 70, 2, 129}}, {{2, 0, 5, 3, 7}});
        check("mixed 64 aligned", 106, tiled(64, 64, 2, 4, true), {{65, 1, 64, 200}}, {{1, 2, 3, 4}});
    }

    // 27B's heads: 20 chunks, more than one workspace window holds (16 at 48 heads), so the
    // windows split the 200-token sequence.
    void layout27b_data() { mode_rows(); }
    void layout27b() { check("27b", 107, grouped_27b(), {{700, 65, 1, 200, 63, 64}}, {{5, 0, 8, 2, 7, 3}}); }

    // gated_delta_rule_raw: the GPU (fused when every sequence is recurrent, else the
    // composition) against the CPU's composition of l2norm, gdn_gates and gated_delta_rule, over
    // steps that continue one another; outputs and states within 1e-4. With GdnRaw::ab, alpha and
    // beta come from a bf16 weight (made in the recurrent kernel at 1-4 tokens, else by the small
    // matmul first; the CPU: its matmul first).
    void rawInputs() {
        struct Case {
            const char* what;
            Geometry geo;
            GdnMode mode;
            std::vector<std::vector<int>> lengths, slot_of;
            int ab_in = 0;  // > 0: alpha and beta made from a bf16 weight of this many inputs (GdnRaw::ab)
        };
        const std::vector<Case> cases = {
            {"27b decode", grouped_27b(), GdnMode::Auto, {{1, 1, 1}, {1, 1, 1}}, {{4, 0, 8}, {4, 0, 8}}},
            {"64 short runs",
             tiled(64, 64, 2, 4),
             GdnMode::Auto,
             {{3, 8, 1}, {2, 1, 5}},
             {{1, 6, 2}, {1, 6, 2}}},
            {"128 recurrent 20", tiled(128, 128, 2, 6), GdnMode::Recurrent, {{20, 1}}, {{3, 5}}},
            {"128 mixed",
             tiled(128, 128, 2, 6),
             GdnMode::Auto,
             {{1, 70, 1}, {1, 1, 1}},
             {{2, 7, 0}, {2, 7, 0}}},
            // alpha and beta made in the kernel (at most 4 tokens) or by the small matmul first.
            {"27b decode ab",
             grouped_27b(),
             GdnMode::Auto,
             {{1, 1, 1}, {1, 1, 1, 1}},
             {{4, 0, 8}, {4, 0, 8, 2}},
             5120},
            {"128 ab 1000 inputs", tiled(128, 128, 2, 6), GdnMode::Auto, {{1}, {1, 1}}, {{3}, {3, 5}}, 1000},
            {"64 ab runs", tiled(64, 64, 2, 4), GdnMode::Auto, {{2, 1}, {3, 8, 1}}, {{1, 6}, {1, 6, 2}}, 256},
            {"128 ab mixed", tiled(128, 128, 2, 6), GdnMode::Auto, {{1, 70}, {1, 1}}, {{2, 7}, {2, 7}}, 512},
        };
        uint32_t seed = 300;
        for (const Case& c : cases) {
            std::mt19937 rng(seed++);
            const Geometry& geo = c.geo;
            const std::vector<float> state0 =
                random_vector(rng, size_t(kSlots) * geo.n_v * geo.dk * geo.dv, -0.5f, 0.5f);
            const float scale = 1.0f / std::sqrt(float(geo.dk));
            std::vector<float> cpu_state = state0, gpu_state(state0.size());
            auto cpu = make_cpu_ops(0);
            auto gpu = make_cuda_ops(0, Precision::Mixed);
            DeviceBytes dstate(*gpu, state0);
            for (size_t i = 0; i < c.lengths.size(); ++i) {
                Step s(rng, geo, c.lengths[i], c.slot_of[i]);
                const int n = s.info.n_tokens;
                RawStep r(rng, geo, n);
                const int64_t vw = int64_t(geo.n_v) * geo.dv, qkw = r.qk.t.cols;
                // With ab: alpha and beta the halves of one tensor, made from x and a bf16 weight.
                HostTensor ab_x = random_tensor(rng, n, std::max(c.ab_in, 1), std::max(c.ab_in, 1) + 4);
                HostTensor both = random_tensor(rng, n, 2 * geo.n_v, 2 * geo.n_v + 3);
                std::vector<uint16_t> ab_w(size_t(2 * geo.n_v) * size_t(std::max(c.ab_in, 1)));
                const auto ab_vals = random_vector(rng, ab_w.size(), -0.05f, 0.05f);
                for (size_t i = 0; i < ab_w.size(); ++i) ab_w[i] = f32_to_bf16(ab_vals[i]);
                const Weight host_ab{ab_w.data(), DType::BF16, c.ab_in, 2 * geo.n_v, size_t(c.ab_in) * 2};
                auto halves = [&](const Tensor& t, int h) { return t.cols_view(h * geo.n_v, geo.n_v); };
                // CPU: the composition, on copies (it overwrites alpha and beta).
                HostTensor al = copy_of(r.alpha), be = copy_of(r.beta), qkn(n, qkw, qkw), cb = copy_of(both);
                HostTensor want(n, vw, vw + 5);
                GdnRaw craw{r.a.data(), r.dt_bias.data(), 1e-6f, qkn.t};
                if (c.ab_in) {
                    craw.ab = &host_ab;
                    craw.ab_x = ab_x.t;
                }
                cpu->gated_delta_rule_raw(r.qk.t, s.v.t, c.ab_in ? halves(cb.t, 0) : al.t,
                                          c.ab_in ? halves(cb.t, 1) : be.t, craw, geo.key_of_v.data(), geo.dk,
                                          geo.dv, scale, GdnState{nullptr, cpu_state.data(), kSlots}, s.info,
                                          c.mode, want.t);
                // GPU.
                DeviceBytes seqs(*gpu, s.seqs), da(*gpu, r.a), ddt(*gpu, r.dt_bias), dab_w(*gpu, ab_w);
                StepInfo info = s.info;
                info.seqs = seqs.as<SeqInfo>();
                DeviceTensor qk(*gpu, r.qk), v(*gpu, s.v), alpha(*gpu, r.alpha), beta(*gpu, r.beta);
                DeviceTensor dab_x(*gpu, ab_x), dboth(*gpu, both);
                DeviceTensor gqkn(*gpu, n, qkw, qkw), o(*gpu, n, vw, vw + 5);
                const Weight dev_ab{dab_w.p, DType::BF16, c.ab_in, 2 * geo.n_v, size_t(c.ab_in) * 2};
                GdnRaw graw{da.as<float>(), ddt.as<float>(), 1e-6f, gqkn.t};
                if (c.ab_in) {
                    graw.ab = &dev_ab;
                    graw.ab_x = dab_x.t;
                }
                gpu->gated_delta_rule_raw(qk.t, v.t, c.ab_in ? halves(dboth.t, 0) : alpha.t,
                                          c.ab_in ? halves(dboth.t, 1) : beta.t, graw, geo.key_of_v.data(),
                                          geo.dk, geo.dv, scale,
                                          GdnState{nullptr, dstate.as<float>(), kSlots}, info, c.mode, o.t);
                const double e_out = tensor_error(o.download(), want);
                gpu->download(gpu_state.data(), dstate.p, gpu_state.size() * sizeof(float));
                const double e_state =
                    relative_error(std::vector<double>(gpu_state.begin(), gpu_state.end()),
                                   std::vector<double>(cpu_state.begin(), cpu_state.end()));
                qInfo("raw %s step %zu: output error %.3g, state error %.3g", c.what, i, e_out, e_state);
                QVERIFY2(e_out <= 1e-4 && e_state <= 1e-4,
                         qPrintable(QString("raw %1 step %2: output %3 state %4")
                                        .arg(c.what)
                                        .arg(i)
                                        .arg(e_out)
                                        .arg(e_state)));
            }
        }
    }

    void stateCarriesAcrossSteps_data() { mode_rows(); }
    void stateCarriesAcrossSteps() {
        // A prefill in two steps, then decode steps, the other sequences joining in between.
        check("steps 128", 104, tiled(128, 128, 2, 6), {{100, 1}, {29, 1, 64}, {1, 1, 1}, {1, 1, 2}},
              {{4, 2}, {4, 2, 7}, {4, 2, 7}, {4, 7, 2}});
    }
};

QTEST_APPLESS_MAIN(TestCudaGatedDeltaRule)
#include "test_cuda_gated_delta_rule.moc"
