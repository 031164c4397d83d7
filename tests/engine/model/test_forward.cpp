// The CPU forward agrees with itself every way it can be run: prefill vs token-by-token
// decode, one step vs chunked prefill, tensor-parallel ranks vs one, a batch vs each
// sequence alone, PQ2_0 vs PTQ1_0 packing, and a Hadamard-folded file vs the same weights
// unfolded into plain F32 matrices.
#include <QtTest>

#include <cmath>
#include <random>

#include "engine/gguf/reader.h"
#include "engine/gguf/writer.h"
#include "engine/model/sequences.h"
#include "kernels/formats.h"
#include "support/engine_process.h"
#include "support/temp_dir.h"
#include "tests/engine/model/forward_test_util.h"

using namespace niwa;

namespace {

using test::prefill;
using test::random_tokens;
using test::rel_diff;

model::ModelConfig config(int tp = 1, int step_tokens = 256) {
    model::ModelConfig c;
    c.tp = tp;
    c.max_step_tokens = step_tokens;
    c.max_seqs = 4;
    c.max_context = 512;
    return c;
}

// Logits must not be trivial: a spread of values, varying along the sequence.
void check_nontrivial(const std::vector<float>& l, int64_t vocab) {
    QVERIFY(!l.empty());
    double lo = l[0], hi = l[0];
    for (float v : l) {
        QVERIFY(std::isfinite(v));
        lo = std::min<double>(lo, v), hi = std::max<double>(hi, v);
    }
    QVERIFY2(hi - lo > 1.0, "logits have almost no spread");
    if (int64_t(l.size()) >= 2 * vocab)
        QVERIFY(rel_diff({l.begin(), l.begin() + vocab}, {l.begin() + vocab, l.begin() + 2 * vocab}) > 1e-3);
}

}  // namespace

class TestForward : public QObject {
    Q_OBJECT

private:
    std::string tiny_;
    int64_t vocab_ = 0;

    // Four sequences fed together at --tp tp (the last row of each prompt), then two decode
    // steps of all four: the logits of every sequence after each step.
    std::vector<std::vector<float>> batch_logits(int tp) {
        auto m = model::Model::open(tiny_, config(tp, 128));
        model::Sequences s(*m);
        std::vector<model::Sequences::Input> batch;
        for (int i = 0; i < 4; ++i) batch.push_back({s.add(), random_tokens(3 + 17 * i, uint32_t(20 + i))});
        std::vector<std::vector<float>> all = s.feed(batch);
        for (int32_t step = 0; step < 2; ++step) {
            for (size_t i = 0; i < batch.size(); ++i)
                batch[i].tokens = {int32_t(100 + 10 * step + int32_t(i))};
            for (auto& l : s.feed(batch)) all.push_back(std::move(l));
        }
        return all;
    }

private slots:
    void initTestCase() {
        tiny_ = test::synthetic_model("tiny", 7).toStdString();
        QVERIFY(!tiny_.empty());
        vocab_ = model::Model::open(tiny_, config())->hparams().n_vocab;
    }

    void prefill_equals_decode() {
        const auto tokens = random_tokens(80, 1);
        const auto whole = prefill(tiny_, tokens, config());
        check_nontrivial(whole, vocab_);
        auto m = model::Model::open(tiny_, config());
        model::Sequences s(*m);
        const int id = s.add();
        std::vector<float> step_by_step;
        for (int32_t t : tokens) {
            auto r = s.feed({{id, {t}}})[0];
            step_by_step.insert(step_by_step.end(), r.begin(), r.end());
        }
        const double d = rel_diff(step_by_step, whole);
        QVERIFY2(d <= 1e-4, qPrintable(QString("decode vs prefill differ by %1").arg(d)));
    }

    void chunked_prefill_equals_one_step() {
        const auto tokens = random_tokens(150, 2);  // > two GDN chunks of 64
        const auto one = prefill(tiny_, tokens, config(1, 256));
        const auto chunked = prefill(tiny_, tokens, config(1, 37));
        const double d = rel_diff(chunked, one);
        QVERIFY2(d <= 1e-4, qPrintable(QString("chunked prefill differs by %1").arg(d)));
    }

    void tensor_parallel_equals_single() {
        const auto tokens = random_tokens(70, 3);
        const auto one = prefill(tiny_, tokens, config(1));
        for (int tp : {2, 3}) {
            const auto sharded = prefill(tiny_, tokens, config(tp));
            const double d = rel_diff(sharded, one);
            QVERIFY2(d <= 1e-5, qPrintable(QString("--tp %1 differs by %2").arg(tp).arg(d)));
        }
    }

    // Steps of several logit rows, each rank downloading its slice into the shared rows: a
    // prefill that wants every row's logits in more than one chunk of the output matmul (300 rows,
    // chunks of 256), and batches of four sequences (their prompts' last rows, then decodes).
    void tensor_parallel_multi_row_steps_equal_single() {
        const auto tokens = random_tokens(300, 12);
        const auto one = prefill(tiny_, tokens, config(1, 512));
        const auto batch_one = batch_logits(1);
        for (int tp : {2, 3}) {
            const double d = rel_diff(prefill(tiny_, tokens, config(tp, 512)), one);
            QVERIFY2(d <= 1e-5,
                     qPrintable(QString("--tp %1 prefill of 300 rows differs by %2").arg(tp).arg(d)));
            const auto batch = batch_logits(tp);
            QCOMPARE(batch.size(), size_t(12));
            for (size_t i = 0; i < batch.size(); ++i) {
                const double b = rel_diff(batch[i], batch_one[i]);
                QVERIFY2(b <= 1e-5,
                         qPrintable(QString("--tp %1 batch row %2 differs by %3").arg(tp).arg(i).arg(b)));
            }
        }
    }

    void batch_equals_each_alone() {
        const std::vector<std::vector<int32_t>> prompts = {random_tokens(5, 4), random_tokens(37, 5),
                                                           random_tokens(90, 6)};
        auto m = model::Model::open(tiny_, config(1, 64));
        model::Sequences s(*m);
        std::vector<model::Sequences::Input> batch;
        for (const auto& p : prompts) batch.push_back({s.add(), p});
        const auto together = s.feed(batch);
        // Then one decode step for all three at once.
        std::vector<model::Sequences::Input> next;
        for (size_t i = 0; i < prompts.size(); ++i) next.push_back({batch[i].seq, {int32_t(11 + i)}});
        const auto decoded = s.feed(next);
        for (size_t i = 0; i < prompts.size(); ++i) {
            auto alone_m = model::Model::open(tiny_, config(1, 64));
            model::Sequences alone(*alone_m);
            const int id = alone.add();
            const auto a = alone.feed({{id, prompts[i]}})[0];
            const auto b = alone.feed({{id, {int32_t(11 + i)}}})[0];
            QVERIFY2(rel_diff(together[i], a) <= 1e-5,
                     qPrintable(QString("prompt %1 in a batch differs").arg(i)));
            QVERIFY2(rel_diff(decoded[i], b) <= 1e-5,
                     qPrintable(QString("decode %1 in a batch differs").arg(i)));
        }
    }

    void ptq1_equals_pq2() {
        const std::string ptq = test::synthetic_model("tiny", 7, "ptq1_0").toStdString();
        QVERIFY(!ptq.empty());
        const auto tokens = random_tokens(40, 8);
        const auto a = prefill(tiny_, tokens, config());
        const auto b = prefill(ptq, tokens, config());
        QCOMPARE(a.size(), b.size());
        QVERIFY2(a == b, "PQ2_0 and PTQ1_0 files of the same weights give different logits");
    }

    void slot_reuse_starts_fresh() {
        const auto tokens = random_tokens(20, 9);
        auto m = model::Model::open(tiny_, config());
        model::Sequences s(*m);
        const int a = s.add();
        const auto first = s.feed({{a, tokens}})[0];
        s.remove(a);
        const int b = s.add();
        QCOMPARE(b, a);
        const auto again = s.feed({{b, tokens}})[0];
        QVERIFY2(rel_diff(again, first) == 0.0, "a reused slot kept state from its last sequence");
    }
};

QTEST_GUILESS_MAIN(TestForward)
#include "test_forward.moc"
