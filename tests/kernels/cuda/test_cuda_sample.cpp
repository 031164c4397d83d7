// The CUDA sample against the CPU oracle on the model's vocabulary: greedy, top_k (the GPU
// candidate path) with top_p and min_p, top_k beyond the candidate path and no top_k (the
// reduction's candidates and mass, or the host fallback), ties at the maximum and at the top_k
// threshold; and top_logits, the reduction itself, against the CPU's.
#include "tests/kernels/cuda/cuda_test_util.h"

#include <QtTest>
#include <algorithm>
#include <cmath>

#include "kernels/sample_draw.h"

using namespace niwa::kernels;
using namespace niwa::kernels::test;

class TestCudaSample : public QObject {
    Q_OBJECT

private slots:
    void matchesTheCpu() {
        Backends b;
        std::mt19937 rng(900);
        const int64_t vocab = 248320;
        std::vector<SampleParams> params = {
            {0.0f, 0, 1.0f, 0.0f, 0.3f},      // greedy
            {1.0f, 1, 1.0f, 0.0f, 0.9f},      // top_k 1 is greedy
            {1.0f, 20, 0.95f, 0.0f, 0.5f},    // the model's defaults
            {0.7f, 20, 0.95f, 0.0f, 0.999f},  //
            {1.3f, 50, 1.0f, 0.05f, 0.1f},    // min_p
            {1.0f, 1024, 0.9f, 0.0f, 0.77f},  // the largest GPU top_k
            {1.0f, 2000, 0.8f, 0.0f, 0.42f},  // beyond it: host
            {0.9f, 0, 0.9f, 0.0f, 0.61f},     // no top_k: host
            {1.0f, 40, 1.0f, 0.0f, 0.0f},     // uniform 0
            {1.0f, 5, 1.0f, 0.0f, 0.95f},     // ties at the threshold (row 9)
            {0.0f, 0, 1.0f, 0.0f, 0.0f},      // ties at the maximum (row 10)
        };
        for (int round = 0; round < 3; ++round) {
            const auto n = static_cast<int64_t>(params.size());
            HostTensor logits = random_tensor(rng, n, vocab, vocab + 4, -12.0f, 12.0f);
            for (int64_t i = 0; i < vocab; i += 1000) logits.at(9, i) = 20.0f;  // 249 tied at the top
            logits.at(10, 777) = logits.at(10, 5000) = logits.at(10, 200000) = 30.0f;
            for (auto& p : params) p.uniform = std::uniform_real_distribution<float>(0.0f, 1.0f)(rng);
            params[8].uniform = 0.0f;
            std::vector<int32_t> want(static_cast<size_t>(n)), got(static_cast<size_t>(n), -7);
            b.cpu->sample(logits.t, params.data(), want.data());
            const DeviceTensor dl(*b.gpu, logits);
            b.gpu->sample(dl.t, params.data(), got.data());
            for (int64_t r = 0; r < n; ++r)
                QVERIFY2(
                    got[r] == want[r],
                    qPrintable(
                        QString("round %1 row %2: %3 vs %4").arg(round).arg(r).arg(got[r]).arg(want[r])));
            QCOMPARE(got[10], 777);
        }
    }

    // NaN logits rank below every number on both backends: greedy and top_k (the GPU's radix
    // select and the host's) pass over them wherever they sit, and a row of NaN alone gives 0.
    void nanLogitsRankLowest() {
        Backends b;
        std::mt19937 rng(901);
        const int64_t vocab = 248320;
        std::vector<SampleParams> params = {
            {0.0f, 0, 1.0f, 0.0f, 0.3f},     {1.0f, 1, 1.0f, 0.0f, 0.9f},  {1.0f, 20, 0.95f, 0.0f, 0.5f},
            {1.0f, 1024, 0.9f, 0.0f, 0.77f}, {0.9f, 0, 0.9f, 0.0f, 0.61f}, {1.0f, 0, 1.0f, 0.05f, 0.2f},
            {0.0f, 0, 1.0f, 0.0f, 0.0f},  // every logit NaN (row 6)
        };
        const auto n = static_cast<int64_t>(params.size());
        HostTensor logits = random_tensor(rng, n, vocab, vocab + 4, -12.0f, 12.0f);
        for (int64_t r = 0; r < n; ++r) {
            for (int64_t i = 0; i < vocab; i += 97) logits.at(r, i) = NAN;
            logits.at(r, 12345) = 60.0f;
        }
        for (int64_t i = 0; i < vocab; ++i) logits.at(6, i) = NAN;
        std::vector<int32_t> want(static_cast<size_t>(n)), got(static_cast<size_t>(n), -7);
        b.cpu->sample(logits.t, params.data(), want.data());
        const DeviceTensor dl(*b.gpu, logits);
        b.gpu->sample(dl.t, params.data(), got.data());
        for (int64_t r = 0; r < n; ++r) {
            const int32_t peak = r == 6 ? 0 : 12345;
            QVERIFY2(
                got[r] == peak && want[r] == peak,
                qPrintable(
                    QString("row %1: gpu %2, cpu %3, not %4").arg(r).arg(got[r]).arg(want[r]).arg(peak)));
        }
    }
    // top_logits against the CPU's reduction of the same rows, at 1, 24 and 200 rows (a row in
    // 16 segments, 11, 2): the same largest logit, the mass within rounding, and the contract —
    // every token at or above the floor is a candidate, with its own logit — with a floor no
    // higher than the whole row's k-th largest, so the CPU's candidates are all there.
    void topLogitsAsTheCpu() {
        Backends b;
        std::mt19937 rng(902);
        const int64_t vocab = 248320;
        const std::vector<TopAsk> kinds = {{1, 0.0f},    {40, 0.8f}, {128, 1.0f},
                                           {1024, 0.7f}, {0, 1.0f},  {5, 1.0f}};
        for (const int64_t n : {int64_t(1), int64_t(24), int64_t(200)}) {
            HostTensor logits = random_tensor(rng, n, vocab, vocab, -12.0f, 12.0f);
            std::vector<TopAsk> asks(static_cast<size_t>(n));
            for (int64_t r = 0; r < n; ++r) {
                asks[size_t(r)] = kinds[size_t(r) % kinds.size()];
                if (r % 3 == 1) logits.at(r, (r * 7919) % vocab) = 40.0f;  // peaked
                if (r % 7 == 2)
                    for (int64_t i = 0; i < vocab; i += 101) logits.at(r, i) = NAN;
                if (r % 6 == 5)
                    for (int64_t i = 0; i < vocab; i += 1000) logits.at(r, i) = 20.0f;  // ties at the 5th
            }
            std::vector<TopLogits> want(static_cast<size_t>(n)), got(static_cast<size_t>(n));
            b.cpu->top_logits(logits.t, asks.data(), want.data());
            const DeviceTensor dl(*b.gpu, logits);
            b.gpu->top_logits(dl.t, asks.data(), got.data());
            for (int64_t r = 0; r < n; ++r) {
                const TopLogits &g = got[size_t(r)], &w = want[size_t(r)];
                const QString where = QString("%1 rows, row %2 (k %3)").arg(n).arg(r).arg(asks[size_t(r)].k);
                QVERIFY2(g.size == vocab && g.max_logit == w.max_logit, qPrintable(where));
                QVERIFY2(std::abs(g.mass - w.mass) <= 1e-5 * w.mass, qPrintable(where + ": mass"));
                if (asks[size_t(r)].k == 0) {
                    QVERIFY2(g.ids.empty() && g.floor == INFINITY, qPrintable(where));
                    continue;
                }
                QVERIFY2(g.floor <= w.floor, qPrintable(where + ": floor above the row's k-th"));
                int64_t above = 0;
                for (int64_t i = 0; i < vocab; ++i) above += logits.at(r, i) >= g.floor;
                int64_t trusted = 0;
                std::vector<int32_t> ids;
                for (size_t c = 0; c < g.ids.size(); ++c) {
                    QVERIFY2(g.logits[c] == logits.at(r, g.ids[c]) ||
                                 (std::isnan(g.logits[c]) && std::isnan(logits.at(r, g.ids[c]))),
                             qPrintable(where + ": a candidate's logit"));
                    if (g.logits[c] >= g.floor) {
                        ++trusted;
                        ids.push_back(g.ids[c]);
                    }
                }
                QVERIFY2(trusted == above,
                         qPrintable(where + QString(": %1 candidates at or above the floor, "
                                                    "%2 tokens")
                                                .arg(trusted)
                                                .arg(above)));
                std::sort(ids.begin(), ids.end());
                for (int32_t id : w.ids)
                    QVERIFY2(std::binary_search(ids.begin(), ids.end(), id),
                             qPrintable(where + ": a CPU candidate missing"));
            }
        }
    }
};

QTEST_APPLESS_MAIN(TestCudaSample)
#include "test_cuda_sample.moc"
