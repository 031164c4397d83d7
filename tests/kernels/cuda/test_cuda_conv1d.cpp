// Tests of the CUDA conv1d_silu against the CPU op: decode steps, prefills longer than a chunk
// of the kernel, and both mixed, from a random conv state in every slot; the whole state array
// is compared afterwards, and a second step continues from the first.
#include "kernels/ops.h"
#include "tests/kernels/cuda/cuda_test_util.h"

using namespace niwa::kernels;
using namespace niwa::kernels::test;

namespace {

constexpr int kSlots = 7;

struct Step {
    std::vector<SeqInfo> seqs;
    StepInfo info;
    HostTensor x;

    Step(std::mt19937& rng, int channels, const std::vector<int>& lengths, const std::vector<int>& slot_of)
        : x(0, 0, 0) {
        int n = 0;
        for (size_t s = 0; s < lengths.size(); ++s) {
            SeqInfo si;
            si.q_start = n;
            si.n_q = lengths[s];
            si.state_slot = slot_of[s];
            seqs.push_back(si);
            n += lengths[s];
        }
        info.seqs = seqs.data();
        info.host_seqs = seqs.data();
        info.n_seqs = int(seqs.size());
        info.n_tokens = n;
        x = random_tensor(rng, n, channels, channels + 3, -2.0f, 2.0f);
    }
};

}  // namespace

class TestCudaConv1d : public QObject {
    Q_OBJECT

    void check(const char* what, uint32_t seed, int channels, int kernel,
               const std::vector<std::vector<int>>& lengths, const std::vector<std::vector<int>>& slot_of) {
        std::mt19937 rng(seed);
        Backends b;
        std::vector<Step> steps;
        steps.reserve(lengths.size());
        for (size_t i = 0; i < lengths.size(); ++i) steps.emplace_back(rng, channels, lengths[i], slot_of[i]);
        const auto w = random_vector(rng, size_t(channels) * kernel);
        const auto state0 = random_vector(rng, size_t(kSlots) * (kernel - 1) * channels, -2.0f, 2.0f);

        std::vector<float> cpu_state = state0;
        DeviceBytes gpu_state(*b.gpu, state0), gpu_w(*b.gpu, w);
        double err = 0.0;
        for (const Step& s : steps) {
            HostTensor want(s.info.n_tokens, channels, channels + 1);
            b.cpu->conv1d_silu(s.x.t, w.data(), kernel, GdnState{cpu_state.data(), nullptr, kSlots}, s.info,
                               want.t);
            DeviceBytes seqs(*b.gpu, s.seqs);
            StepInfo info = s.info;
            info.seqs = seqs.as<SeqInfo>();
            DeviceTensor x(*b.gpu, s.x), y(*b.gpu, s.info.n_tokens, channels, channels + 1);
            b.gpu->conv1d_silu(x.t, gpu_w.as<float>(), kernel,
                               GdnState{gpu_state.as<float>(), nullptr, kSlots}, info, y.t);
            err = std::max(err, tensor_error(y.download(), want));
        }
        std::vector<float> got_state(state0.size());
        b.gpu->download(got_state.data(), gpu_state.p, got_state.size() * sizeof(float));
        const double e_state = relative_error(std::vector<double>(got_state.begin(), got_state.end()),
                                              std::vector<double>(cpu_state.begin(), cpu_state.end()));
        qInfo("%s: output error %.3g, state error %.3g", what, err, e_state);
        QVERIFY2(err <= 1e-4, qPrintable(QString("%1: output error %2").arg(what).arg(err)));
        QVERIFY2(got_state == cpu_state,
                 qPrintable(QString("%1: states differ (%2)").arg(what).arg(e_state)));
    }

private slots:
    void decodeOnly() { check("decode k4", 200, 1000, 4, {{1, 1, 1}}, {{2, 6, 0}}); }

    void prefillOnly() { check("prefill k4", 201, 515, 4, {{2, 70, 200, 64, 65}}, {{1, 3, 0, 6, 4}}); }

    void mixed() {
        check("mixed k4", 202, 1280, 4, {{1, 2, 64, 65, 130, 3}}, {{5, 0, 2, 3, 6, 1}});
        check("mixed k3", 203, 300, 3, {{1, 150, 1}}, {{4, 0, 6}});
    }

    void stateCarriesAcrossSteps() {
        check("steps k4", 204, 777, 4, {{100, 1, 2}, {1, 1, 1}, {70, 1, 1}},
              {{3, 0, 5}, {3, 0, 5}, {1, 3, 0}});
    }
};

QTEST_APPLESS_MAIN(TestCudaConv1d)
#include "test_cuda_conv1d.moc"
