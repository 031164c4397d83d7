// Tests of the CPU Gated DeltaNet ops: gdn_gates against its formula; the recurrent delta rule
// against a double loop; the chunked (WY/UT) form against the recurrent one over sequences that
// end inside, exactly at and past chunk boundaries, each continuing a nonzero state.
#include "kernels/ops.h"
#include "tests/kernels/kernel_test_util.h"

#include <QtTest>

using namespace niwa::kernels;
using namespace niwa::kernels::test;

namespace {

constexpr int kDk = 16, kDv = 8, kKeyHeads = 2, kValueHeads = 4, kSlots = 7;
const std::vector<int32_t> kKeyOfV = {0, 1, 0, 1};

struct Problem {
    std::vector<SeqInfo> seqs;
    StepInfo step;
    HostTensor q, k, v, g, beta;
    std::vector<float> state0;

    Problem(std::mt19937& rng, const std::vector<int>& lengths, const std::vector<int>& slot_of_seq)
        : q(0, 0, 0), k(0, 0, 0), v(0, 0, 0), g(0, 0, 0), beta(0, 0, 0) {
        int n = 0;
        for (size_t s = 0; s < lengths.size(); ++s) {
            SeqInfo si;
            si.q_start = n;
            si.n_q = lengths[s];
            si.state_slot = slot_of_seq[s];
            seqs.push_back(si);
            n += lengths[s];
        }
        step.seqs = seqs.data();
        step.host_seqs = seqs.data();
        step.n_seqs = static_cast<int>(seqs.size());
        step.n_tokens = n;
        q = unit_heads(rng, n, kKeyHeads * kDk + 3);
        k = unit_heads(rng, n, kKeyHeads * kDk + 1);
        v = random_tensor(rng, n, kValueHeads * kDv, kValueHeads * kDv + 2);
        g = random_tensor(rng, n, kValueHeads, kValueHeads + 1, -0.4f, -0.001f);
        beta = random_tensor(rng, n, kValueHeads, kValueHeads, 0.05f, 0.95f);
        state0 = random_vector(rng, size_t(kSlots) * kValueHeads * kDk * kDv, -0.5f, 0.5f);
    }

    // q and k arrive L2-normalised per key head.
    static HostTensor unit_heads(std::mt19937& rng, int n, int64_t ld) {
        HostTensor t = random_tensor(rng, n, kKeyHeads * kDk, ld);
        for (int r = 0; r < n; ++r)
            for (int h = 0; h < kKeyHeads; ++h) {
                double ss = 0.0;
                for (int i = 0; i < kDk; ++i) ss += double(t.at(r, h * kDk + i)) * t.at(r, h * kDk + i);
                for (int i = 0; i < kDk; ++i)
                    t.at(r, h * kDk + i) = static_cast<float>(t.at(r, h * kDk + i) / std::sqrt(ss));
            }
        return t;
    }

    // Runs the op in `mode` from state0; returns the outputs and the final states.
    std::pair<std::vector<double>, std::vector<double>> run(Ops& ops, GdnMode mode, float scale) const {
        std::vector<float> state = state0;
        HostTensor o = HostTensor(step.n_tokens, kValueHeads * kDv, kValueHeads * kDv + 5);
        ops.gated_delta_rule(q.t, k.t, v.t, g.t, beta.t, kKeyOfV.data(), kDk, kDv, scale,
                             GdnState{nullptr, state.data(), kSlots}, step, mode, o.t);
        std::vector<double> out;
        for (int r = 0; r < step.n_tokens; ++r)
            for (int c = 0; c < kValueHeads * kDv; ++c) out.push_back(o.at(r, c));
        return {out, std::vector<double>(state.begin(), state.end())};
    }

    // The definition, token by token in double.
    std::pair<std::vector<double>, std::vector<double>> reference(float scale) const {
        std::vector<double> state(state0.begin(), state0.end());
        std::vector<double> out(size_t(step.n_tokens) * kValueHeads * kDv);
        for (const SeqInfo& si : seqs)
            for (int h = 0; h < kValueHeads; ++h) {
                double* S = &state[(size_t(si.state_slot) * kValueHeads + h) * kDk * kDv];
                const int kc = kKeyOfV[h] * kDk;
                for (int r = si.q_start; r < si.q_start + si.n_q; ++r) {
                    const double decay = std::exp(double(g.at(r, h)));
                    for (int i = 0; i < kDk * kDv; ++i) S[i] *= decay;
                    double u[kDv];
                    for (int j = 0; j < kDv; ++j) {
                        double sk = 0.0;
                        for (int i = 0; i < kDk; ++i) sk += S[i * kDv + j] * k.at(r, kc + i);
                        u[j] = beta.at(r, h) * (v.at(r, h * kDv + j) - sk);
                    }
                    for (int i = 0; i < kDk; ++i)
                        for (int j = 0; j < kDv; ++j) S[i * kDv + j] += k.at(r, kc + i) * u[j];
                    for (int j = 0; j < kDv; ++j) {
                        double o = 0.0;
                        for (int i = 0; i < kDk; ++i) o += S[i * kDv + j] * scale * q.at(r, kc + i);
                        out[size_t(r) * kValueHeads * kDv + h * kDv + j] = o;
                    }
                }
            }
        return {out, state};
    }
};

}  // namespace

class TestGatedDeltaRule : public QObject {
    Q_OBJECT

private slots:
    void gates() {
        std::mt19937 rng(800);
        HostTensor alpha = random_tensor(rng, 5, kValueHeads, kValueHeads + 2, -6.0f, 6.0f);
        HostTensor beta = random_tensor(rng, 5, kValueHeads, kValueHeads + 1, -6.0f, 6.0f);
        alpha.at(0, 0) = 30.0f;  // softplus past the x > 20 shortcut
        alpha.at(1, 1) = -40.0f;
        const HostTensor alpha0 = alpha, beta0 = beta;
        const auto a = random_vector(rng, kValueHeads, -2.0f, -0.1f);
        const auto dt_bias = random_vector(rng, kValueHeads);
        make_cpu_ops(1)->gdn_gates(alpha.t, beta.t, a.data(), dt_bias.data());
        for (int r = 0; r < 5; ++r)
            for (int h = 0; h < kValueHeads; ++h) {
                const double x = double(alpha0.at(r, h)) + dt_bias[h];
                const double want = a[h] * std::log(1.0 + std::exp(x));
                QVERIFY(std::abs(alpha.at(r, h) - want) <= 1e-5 * (1.0 + std::abs(want)));
                QVERIFY(std::abs(beta.at(r, h) - 1.0 / (1.0 + std::exp(-double(beta0.at(r, h))))) <= 1e-6);
            }
    }

    void recurrentMatchesTheDefinition() {
        std::mt19937 rng(801);
        const Problem p(rng, {1, 5, 40, 3}, {2, 0, 6, 3});
        const float scale = 1.0f / std::sqrt(float(kDk));
        auto ops = make_cpu_ops(2);
        const auto [out, state] = p.run(*ops, GdnMode::Recurrent, scale);
        const auto [want_out, want_state] = p.reference(scale);
        QVERIFY2(relative_error(out, want_out) < 1e-5,
                 qPrintable(QString::number(relative_error(out, want_out))));
        QVERIFY(relative_error(state, want_state) < 1e-5);
        // Slots no sequence uses keep their state.
        for (int slot : {1, 4, 5})
            for (int i = 0; i < kValueHeads * kDk * kDv; ++i) {
                const size_t at = size_t(slot) * kValueHeads * kDk * kDv + i;
                QCOMPARE(state[at], double(p.state0[at]));
            }
    }

    void chunkedMatchesRecurrent() {
        std::mt19937 rng(802);
        const Problem p(rng, {1, 5, 63, 64, 65, 200}, {4, 0, 6, 2, 5, 1});
        const float scale = 1.0f / std::sqrt(float(kDk));
        auto ops = make_cpu_ops(3);
        const auto [rec_out, rec_state] = p.run(*ops, GdnMode::Recurrent, scale);
        const auto [chk_out, chk_state] = p.run(*ops, GdnMode::Chunked, scale);
        const auto [want_out, want_state] = p.reference(scale);
        const double e_out = relative_error(chk_out, rec_out), e_state = relative_error(chk_state, rec_state);
        QVERIFY2(e_out < 1e-5, qPrintable(QString("outputs %1").arg(e_out)));
        QVERIFY2(e_state < 1e-5, qPrintable(QString("states %1").arg(e_state)));
        QVERIFY(relative_error(chk_out, want_out) < 1e-5);
        // Each sequence on its own too (no cross-talk between heads or sequences).
        for (size_t s = 0; s < p.seqs.size(); ++s) {
            const SeqInfo& si = p.seqs[s];
            std::vector<double> a(chk_out.begin() + si.q_start * kValueHeads * kDv,
                                  chk_out.begin() + (si.q_start + si.n_q) * kValueHeads * kDv);
            std::vector<double> b(want_out.begin() + si.q_start * kValueHeads * kDv,
                                  want_out.begin() + (si.q_start + si.n_q) * kValueHeads * kDv);
            QVERIFY2(relative_error(a, b) < 1e-5, qPrintable(QString("sequence %1").arg(s)));
        }
    }

    void autoChunksOnlyMultiTokenSequences() {
        std::mt19937 rng(803);
        const Problem p(rng, {1, 70, 1, 9}, {3, 1, 0, 6});
        auto ops = make_cpu_ops(2);
        const auto [auto_out, auto_state] = p.run(*ops, GdnMode::Auto, 0.3f);
        const auto [rec_out, rec_state] = p.run(*ops, GdnMode::Recurrent, 0.3f);
        const auto [chk_out, chk_state] = p.run(*ops, GdnMode::Chunked, 0.3f);
        for (const SeqInfo& si : p.seqs) {
            const auto& want = si.n_q > 1 ? chk_out : rec_out;
            for (int i = si.q_start * kValueHeads * kDv; i < (si.q_start + si.n_q) * kValueHeads * kDv; ++i)
                QCOMPARE(auto_out[i], want[i]);
        }
    }

    // gated_delta_rule_raw with GdnRaw::ab: alpha and beta made by the matmul first, the rest as
    // without; bit for bit the same as running that matmul by hand. alpha and beta that are not
    // the halves of one tensor: a clear error.
    void rawMakesAlphaAndBeta() {
        std::mt19937 rng(804);
        constexpr int nk = 2, nv = 4, d = 16, in = 40, n = 3;
        auto ops = make_cpu_ops(2);
        std::vector<SeqInfo> seqs(2);
        seqs[0] = SeqInfo{0, 2, 0, 1, 0};
        seqs[1] = SeqInfo{2, 1, 0, 0, 0};
        const StepInfo info{seqs.data(), 2, n, nullptr, nullptr, nullptr, seqs.data()};
        const HostTensor qk = random_tensor(rng, n, 2 * nk * d, 2 * nk * d, -2.0f, 2.0f);
        const HostTensor v = random_tensor(rng, n, nv * d, nv * d);
        const HostTensor x = random_tensor(rng, n, in, in + 2);
        std::vector<uint16_t> w(size_t(2 * nv) * in);
        const auto wv = random_vector(rng, w.size(), -0.3f, 0.3f);
        for (size_t i = 0; i < w.size(); ++i) w[i] = f32_to_bf16(wv[i]);
        const Weight ab{w.data(), DType::BF16, in, 2 * nv, size_t(in) * 2};
        const auto a = random_vector(rng, nv, -2.0f, -0.1f), dt_bias = random_vector(rng, nv);
        const std::vector<int32_t> key_of_v{0, 1, 0, 1};
        const auto state0 = random_vector(rng, size_t(2) * nv * d * d, -0.5f, 0.5f);
        auto run = [&](bool made, std::vector<float>& state) {
            HostTensor both(n, 2 * nv, 2 * nv + 1), qkn(n, 2 * nk * d, 2 * nk * d), o(n, nv * d, nv * d);
            GdnRaw raw{a.data(), dt_bias.data(), 1e-6f, qkn.t};
            if (made) {
                raw.ab = &ab;
                raw.ab_x = x.t;
            } else {
                ops->matmul(ab, x.t, both.t);
            }
            ops->gated_delta_rule_raw(qk.t, v.t, both.t.cols_view(0, nv), both.t.cols_view(nv, nv), raw,
                                      key_of_v.data(), d, d, 0.25f, GdnState{nullptr, state.data(), 2}, info,
                                      GdnMode::Auto, o.t);
            return o.buf;
        };
        std::vector<float> s_made = state0, s_hand = state0;
        QVERIFY(run(true, s_made) == run(false, s_hand));
        QVERIFY(s_made == s_hand);
        QVERIFY(s_made != state0);

        HostTensor apart(n, 2 * nv + 1, 2 * nv + 1), qkn(n, 2 * nk * d, 2 * nk * d), o(n, nv * d, nv * d);
        GdnRaw raw{a.data(), dt_bias.data(), 1e-6f, qkn.t, &ab, x.t};
        std::vector<float> state = state0;
        QVERIFY_THROWS_EXCEPTION(
            std::invalid_argument,
            ops->gated_delta_rule_raw(qk.t, v.t, apart.t.cols_view(0, nv), apart.t.cols_view(nv + 1, nv), raw,
                                      key_of_v.data(), d, d, 0.25f, GdnState{nullptr, state.data(), 2}, info,
                                      GdnMode::Auto, o.t));
    }
};

QTEST_APPLESS_MAIN(TestGatedDeltaRule)
#include "test_gated_delta_rule.moc"
