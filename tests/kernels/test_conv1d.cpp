// Tests of the CPU conv1d_silu: the causal depthwise conv continuing from the conv state,
// against a double loop, and one step equal to the same tokens split across two steps.
#include "kernels/ops.h"
#include "tests/kernels/kernel_test_util.h"

#include <QtTest>

using namespace niwa::kernels;
using namespace niwa::kernels::test;

namespace {

constexpr int kKernel = 4, kChannels = 24, kSlots = 5;

struct Step {
    std::vector<SeqInfo> seqs;
    StepInfo info;
    int n_tokens = 0;

    // Sequences of the given lengths in the given state slots, rows in order.
    Step(const std::vector<int>& lengths, const std::vector<int>& slots_of_seq) {
        for (size_t s = 0; s < lengths.size(); ++s) {
            SeqInfo si;
            si.q_start = n_tokens;
            si.n_q = lengths[s];
            si.state_slot = slots_of_seq[s];
            seqs.push_back(si);
            n_tokens += lengths[s];
        }
        info.seqs = seqs.data();
        info.host_seqs = seqs.data();
        info.n_seqs = static_cast<int>(seqs.size());
        info.n_tokens = n_tokens;
    }
};

}  // namespace

class TestConv1d : public QObject {
    Q_OBJECT

private slots:
    void matchesTheDefinitionAndSplitsAcrossSteps() {
        std::mt19937 rng(700);
        const std::vector<int> lengths = {7, 1, 2, 12};
        const std::vector<int> state_slots = {3, 0, 4, 1};
        const auto w = random_vector(rng, size_t(kChannels) * kKernel);
        const auto state0 = random_vector(rng, size_t(kSlots) * (kKernel - 1) * kChannels);
        const Step whole(lengths, state_slots);
        const HostTensor x = random_tensor(rng, whole.n_tokens, kChannels, kChannels + 3, -2.0f, 2.0f);
        auto ops = make_cpu_ops(2);

        std::vector<float> state_a = state0;
        HostTensor y(whole.n_tokens, kChannels, kChannels + 1);
        ops->conv1d_silu(x.t, w.data(), kKernel, GdnState{state_a.data(), nullptr, kSlots}, whole.info, y.t);

        std::vector<float> state_ref = state0;
        for (size_t s = 0; s < lengths.size(); ++s) {
            float* st = &state_ref[size_t(state_slots[s]) * (kKernel - 1) * kChannels];
            for (int c = 0; c < kChannels; ++c) {
                std::vector<double> in;  // the state's inputs, then the chunk's
                for (int j = 0; j < kKernel - 1; ++j) in.push_back(st[j * kChannels + c]);
                for (int t = 0; t < lengths[s]; ++t) in.push_back(x.at(whole.seqs[s].q_start + t, c));
                for (int t = 0; t < lengths[s]; ++t) {
                    double acc = 0.0;
                    for (int j = 0; j < kKernel; ++j) acc += w[c * kKernel + j] * in[t + j];
                    const double want = acc / (1.0 + std::exp(-acc));
                    QVERIFY(std::abs(y.at(whole.seqs[s].q_start + t, c) - want) < 1e-5);
                }
                for (int j = 0; j < kKernel - 1; ++j)
                    st[j * kChannels + c] = static_cast<float>(in[lengths[s] + j]);
            }
        }
        QVERIFY(state_a == state_ref);  // slot 2 untouched, the others hold their last inputs

        // The same tokens as two steps: each sequence's first part, then the rest.
        std::vector<int> first, second;
        for (int len : lengths) first.push_back(len / 2), second.push_back(len - len / 2);
        std::vector<float> state_b = state0;
        HostTensor y2(whole.n_tokens, kChannels, kChannels);
        for (const auto* part : {&first, &second}) {
            const Step step(*part, state_slots);
            HostTensor xs(step.n_tokens, kChannels, kChannels), ys(step.n_tokens, kChannels, kChannels);
            for (size_t s = 0; s < lengths.size(); ++s)
                for (int t = 0; t < (*part)[s]; ++t) {
                    const int src = whole.seqs[s].q_start + (part == &first ? 0 : first[s]) + t;
                    for (int c = 0; c < kChannels; ++c) xs.at(step.seqs[s].q_start + t, c) = x.at(src, c);
                }
            ops->conv1d_silu(xs.t, w.data(), kKernel, GdnState{state_b.data(), nullptr, kSlots}, step.info,
                             ys.t);
            for (size_t s = 0; s < lengths.size(); ++s)
                for (int t = 0; t < (*part)[s]; ++t) {
                    const int dst = whole.seqs[s].q_start + (part == &first ? 0 : first[s]) + t;
                    for (int c = 0; c < kChannels; ++c) y2.at(dst, c) = ys.at(step.seqs[s].q_start + t, c);
                }
        }
        for (int r = 0; r < whole.n_tokens; ++r)
            for (int c = 0; c < kChannels; ++c) QCOMPARE(y2.at(r, c), y.at(r, c));
        QVERIFY(state_b == state_a);
    }
};

QTEST_APPLESS_MAIN(TestConv1d)
#include "test_conv1d.moc"
