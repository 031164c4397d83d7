// The whole model on the CUDA backend against the CPU backend (the oracle) on mkmodel files:
// logits in fp32 and in mixed precision, decode vs prefill, a batch of mixed lengths vs each
// sequence alone, two ranks (on two GPUs where there are two), and the memory planner's budget. Label gpu: it
// fails, never skips, without a GPU.
#include <QtTest>

#include <cmath>
#include <random>

#include "engine/model/sequences.h"
#include "support/engine_process.h"
#include "tests/engine/model/forward_test_util.h"

using namespace niwa;

namespace {

using test::prefill;
using test::random_tokens;
using test::rel_diff;

model::ModelConfig config(const std::string& backend, kernels::Precision p = kernels::Precision::Fp32,
                          int step_tokens = 256, int tp = 1) {
    model::ModelConfig c;
    c.backend = backend;
    c.precision = p;
    c.tp = tp;
    c.max_step_tokens = step_tokens;
    c.max_seqs = 4;
    c.max_context = 1024;
    if (backend == "cuda") c.kv_blocks = 4 * 1024 / c.block_tokens;  // the planner has its own test
    return c;
}

// Share of rows whose argmax agrees.
double top1_agreement(const std::vector<float>& a, const std::vector<float>& b, int64_t vocab) {
    const int64_t rows = int64_t(b.size()) / vocab;
    int64_t same = 0;
    for (int64_t r = 0; r < rows; ++r) {
        const auto ra = a.begin() + r * vocab, rb = b.begin() + r * vocab;
        same += std::max_element(ra, ra + vocab) - ra == std::max_element(rb, rb + vocab) - rb;
    }
    return double(same) / double(rows);
}

}  // namespace

class TestCudaModel : public QObject {
    Q_OBJECT

private:
    std::string tiny_, small_;

private slots:
    void initTestCase() {
        tiny_ = test::synthetic_model("tiny", 7).toStdString();
        small_ = test::synthetic_model("small", 2).toStdString();
        QVERIFY(!tiny_.empty() && !small_.empty());
    }

    // One row a precision, so that each fits a sanitizer run (tests/gpu/run.sh sanitize: under
    // racecheck the small model's fp32 prefill alone takes eight minutes).
    void logitsMatchCpu_data() {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<int>("n");
        QTest::addColumn<bool>("fp32");
        QTest::newRow("tiny 150 fp32") << "tiny" << 150 << true;
        QTest::newRow("tiny 150 mixed") << "tiny" << 150 << false;
        QTest::newRow("small 300 fp32") << "small" << 300 << true;
        QTest::newRow("small 300 mixed") << "small" << 300 << false;
    }
    void logitsMatchCpu() {
        QFETCH(QString, preset);
        QFETCH(int, n);
        QFETCH(bool, fp32);
        const std::string path = preset == "tiny" ? tiny_ : small_;
        const auto tokens = random_tokens(n, 11);
        const auto cpu = prefill(path, tokens, config("cpu"));
        if (fp32) {
            const auto exact = prefill(path, tokens, config("cuda", kernels::Precision::Fp32));
            const double d32 = rel_diff(exact, cpu);
            qInfo("%s: fp32 max|d|/max|ref| = %.3g", qPrintable(preset), d32);
            QVERIFY2(d32 <= 1e-4, qPrintable(QString("fp32 logits differ by %1").arg(d32)));
            return;
        }
        const int64_t vocab = model::Model::open(path, config("cpu"))->hparams().n_vocab;
        const auto mixed = prefill(path, tokens, config("cuda", kernels::Precision::Mixed));
        const double dm = rel_diff(mixed, cpu);
        const double top1 = top1_agreement(mixed, cpu, vocab);
        qInfo("%s: mixed max|d|/max|ref| = %.3g, top-1 agreement %.4f", qPrintable(preset), dm, top1);
        QVERIFY2(dm <= 3e-2, qPrintable(QString("mixed-precision logits differ by %1").arg(dm)));
        QVERIFY2(top1 >= 0.98, qPrintable(QString("top-1 agreement %1").arg(top1)));
    }

    void decodeEqualsPrefill() {
        const auto tokens = random_tokens(70, 12);
        const auto whole = prefill(tiny_, tokens, config("cuda"));
        auto m = model::Model::open(tiny_, config("cuda"));
        model::Sequences s(*m);
        const int id = s.add();
        std::vector<float> steps;
        for (int32_t t : tokens) {
            const auto r = s.feed({{id, {t}}})[0];
            steps.insert(steps.end(), r.begin(), r.end());
        }
        const double d = rel_diff(steps, whole);
        QVERIFY2(d <= 1e-4, qPrintable(QString("decode vs prefill differ by %1").arg(d)));
    }

    // Mixed precision a token at a time (every matmul through the decode kernels, on the PQ2_0S
    // weights the model loads) against the CPU's fp32 prefill of the same tokens.
    void mixedDecodeMatchesCpu() {
        const auto tokens = random_tokens(120, 18);
        const auto cpu = prefill(small_, tokens, config("cpu"));
        const int64_t vocab = model::Model::open(small_, config("cpu"))->hparams().n_vocab;
        auto m = model::Model::open(small_, config("cuda", kernels::Precision::Mixed));
        model::Sequences s(*m);
        const int id = s.add();
        std::vector<float> steps;
        // A 20-token first step (one decode-kernel pass of 20 x rows), then single tokens.
        auto r = s.feed({{id, std::vector<int32_t>(tokens.begin(), tokens.begin() + 20)}}, true);
        steps.insert(steps.end(), r[0].begin(), r[0].end());
        for (size_t i = 20; i < tokens.size(); ++i) {
            r = s.feed({{id, {tokens[i]}}});
            steps.insert(steps.end(), r[0].begin(), r[0].end());
        }
        const double d = rel_diff(steps, cpu);
        const double top1 = top1_agreement(steps, cpu, vocab);
        qInfo("mixed decode: max|d|/max|ref| = %.3g, top-1 %.3f", d, top1);
        QVERIFY2(d <= 3e-2, qPrintable(QString("mixed decode logits differ by %1").arg(d)));
        QVERIFY2(top1 >= 0.98, qPrintable(QString("top-1 agreement %1").arg(top1)));
    }

    void batchEqualsEachAlone() {
        const std::vector<std::vector<int32_t>> prompts = {random_tokens(3, 13), random_tokens(70, 14),
                                                           random_tokens(129, 15), random_tokens(1, 16)};
        auto m = model::Model::open(tiny_, config("cuda", kernels::Precision::Fp32, 96));
        model::Sequences s(*m);
        std::vector<model::Sequences::Input> batch;
        for (const auto& p : prompts) batch.push_back({s.add(), p});
        const auto together = s.feed(batch);
        std::vector<model::Sequences::Input> next;
        for (size_t i = 0; i < prompts.size(); ++i) next.push_back({batch[i].seq, {int32_t(20 + i)}});
        const auto decoded = s.feed(next);
        for (size_t i = 0; i < prompts.size(); ++i) {
            auto am = model::Model::open(tiny_, config("cuda", kernels::Precision::Fp32, 96));
            model::Sequences alone(*am);
            const int id = alone.add();
            const auto a = alone.feed({{id, prompts[i]}})[0];
            const auto b = alone.feed({{id, {int32_t(20 + i)}}})[0];
            QVERIFY2(rel_diff(together[i], a) <= 1e-4,
                     qPrintable(QString("prompt %1 in a batch differs").arg(i)));
            QVERIFY2(rel_diff(decoded[i], b) <= 1e-4,
                     qPrintable(QString("decode %1 in a batch differs").arg(i)));
        }
    }

    // Decode steps replayed from CUDA graphs give the very logits of issuing every op: a batch
    // whose contexts cross split buckets (64, 128, 256 tokens), a sequence leaving and one
    // joining (new layouts), block tables growing (recordings dropped). The 30-step row runs the
    // same kernels and layouts but the last bucket: under compute-sanitizer the 180 steps take
    // over ten minutes, so `run.sh sanitize` runs it alone.
    void recordedStepsEqualDirect_data() {
        QTest::addColumn<int>("steps");
        QTest::addColumn<int>("min_replayed");
        QTest::newRow("180 steps") << 180 << 150;
        QTest::newRow("30 steps") << 30 << 20;
    }
    void recordedStepsEqualDirect() {
        QFETCH(int, steps);
        QFETCH(int, min_replayed);
        std::vector<std::vector<float>> runs[2];
        int64_t replayed[2] = {};
        for (int graphs = 0; graphs < 2; ++graphs) {
            model::ModelConfig c = config("cuda", kernels::Precision::Mixed);
            c.graphs = graphs == 1;
            auto m = model::Model::open(tiny_, c);
            model::Sequences s(*m);
            std::vector<int> ids;
            std::vector<model::Sequences::Input> batch;
            const int lengths[] = {50, 100, 20};
            for (int i = 0; i < 3; ++i) {
                ids.push_back(s.add());
                batch.push_back({ids.back(), random_tokens(lengths[i], uint32_t(30 + i))});
            }
            runs[graphs] = s.feed(batch);
            std::mt19937 rng(5);
            for (int step = 0; step < steps; ++step) {
                if (step == steps / 3) {  // one leaves, one joins with a short prompt
                    s.remove(ids[1]);
                    ids[1] = s.add();
                    const auto r = s.feed({{ids[1], random_tokens(7, 40)}});
                    runs[graphs].insert(runs[graphs].end(), r.begin(), r.end());
                }
                std::vector<model::Sequences::Input> next;
                for (int id : ids) next.push_back({id, {int32_t(rng() % 1000)}});
                const auto r = s.feed(next);
                runs[graphs].insert(runs[graphs].end(), r.begin(), r.end());
            }
            replayed[graphs] = m->replayed_steps();
        }
        qInfo("replayed %lld of %d decode steps", static_cast<long long>(replayed[1]), steps);
        QCOMPARE(replayed[0], int64_t(0));
        QVERIFY2(replayed[1] >= min_replayed, qPrintable(QString("only %1 steps replayed").arg(replayed[1])));
        QCOMPARE(runs[1].size(), runs[0].size());
        for (size_t i = 0; i < runs[0].size(); ++i)
            QVERIFY2(runs[1][i] == runs[0][i],
                     qPrintable(QString("logits set %1 differs when replayed").arg(i)));
    }

    void twoRanksEqualOne() {
        const auto tokens = random_tokens(40, 17);
        const auto one = prefill(tiny_, tokens, config("cuda"));
        const auto two = prefill(tiny_, tokens, config("cuda", kernels::Precision::Fp32, 256, 2));
        const double d = rel_diff(two, one);
        QVERIFY2(d <= 1e-5, qPrintable(QString("--tp 2 differs by %1").arg(d)));
        // Mixed precision, shards of the small model (a rank's halves of its matrices), prefill
        // and decode: the sums split differently, so within a mixed-precision tolerance.
        const auto mixed_one = prefill(small_, tokens, config("cuda", kernels::Precision::Mixed, 16));
        const auto mixed_two = prefill(small_, tokens, config("cuda", kernels::Precision::Mixed, 16, 2));
        const double dm = rel_diff(mixed_two, mixed_one);
        qInfo("--tp 2 mixed: max|d|/max|ref| = %.3g", dm);
        QVERIFY2(dm <= 1e-2, qPrintable(QString("--tp 2 mixed differs by %1").arg(dm)));
    }

    void plannerFillsTheBudget() {
        model::ModelConfig c = config("cuda", kernels::Precision::Mixed);
        c.kv_blocks = 0;
        c.vram_limit_gib = 4.0;
        c.mem_fraction = 0.5;
        auto m = model::Model::open(small_, c);
        const model::MemoryPlan& plan = m->memory();
        QCOMPARE(plan.ranks.size(), size_t(1));
        const auto& r = plan.ranks[0];
        QCOMPARE(r.budget, size_t(2) << 30);
        const size_t used = r.weights + r.state + r.scratch + r.kv + r.reserve;
        qInfo("planner: weights %zu, state %zu, scratch %zu, kv %zu (%lld tokens) of %zu", r.weights, r.state,
              r.scratch, r.kv, static_cast<long long>(plan.kv_tokens()), r.budget);
        QVERIFY2(used <= r.budget, "the plan exceeds its budget");
        QVERIFY2(used + (size_t(64) << 20) >= r.budget,
                 "the plan leaves more than 64 MiB of its budget unused");
        QVERIFY(plan.kv_tokens() >= c.max_context);
        // A budget too small for one context is refused with what to change.
        c.vram_limit_gib = 0.05;
        try {
            model::Model::open(small_, c);
            QFAIL("a 50 MiB budget was accepted");
        } catch (const std::runtime_error& e) {
            QVERIFY2(QString(e.what()).contains("raise --mem-fraction or --vram-limit"), e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestCudaModel)
#include "test_cuda_model.moc"
