// Model::step returns a view of logits buffers the model keeps across steps: a step after
// one with more rows, or fewer, sees exactly its own rows, equal to what a fresh model
// computes for it — with one rank and with two (each downloading its vocabulary slice into
// the shared rows).
#include <QtTest>

#include <algorithm>
#include <span>
#include <vector>

#include "engine/model/model.h"
#include "support/engine_process.h"
#include "tests/engine/model/forward_test_util.h"

using namespace niwa;

namespace {

model::ModelConfig config(int tp) {
    model::ModelConfig c;
    c.tp = tp;
    c.threads = 2;
    c.max_seqs = 2;
    c.max_step_tokens = 16;
    c.block_tokens = 16;
    c.max_context = 16;
    return c;
}

// A new sequence in state slot `slot` and KV block `block`: `tokens` from position 0, the
// logits after each.
model::StepPlan first_tokens(int slot, int block, const std::vector<int32_t>& tokens) {
    model::StepPlan p;
    kernels::SeqInfo s;
    s.n_q = int32_t(tokens.size());
    s.state_slot = slot;
    p.seqs.push_back(s);
    p.block_tables.push_back(block);
    p.tokens = tokens;
    for (size_t i = 0; i < tokens.size(); ++i) {
        p.positions.push_back(int32_t(i));
        p.kv_slots.push_back(int32_t(block * 16 + int(i)));
    }
    p.logit_rows.push_back({0, int64_t(tokens.size())});
    return p;
}

}  // namespace

class TestModelStep : public QObject {
    Q_OBJECT

private:
    std::string tiny_;

private slots:
    void initTestCase() {
        tiny_ = test::synthetic_model("tiny", 3).toStdString();
        QVERIFY(!tiny_.empty());
    }

    void second_step_sees_only_its_rows_data() {
        QTest::addColumn<int>("tp");
        QTest::addColumn<int>("rows1");
        QTest::addColumn<int>("rows2");
        QTest::newRow("tp 1, fewer rows") << 1 << 7 << 2;
        QTest::newRow("tp 1, more rows") << 1 << 2 << 7;
        QTest::newRow("tp 2, fewer rows") << 2 << 7 << 2;
        QTest::newRow("tp 2, more rows") << 2 << 2 << 7;
    }

    void second_step_sees_only_its_rows() {
        QFETCH(int, tp);
        QFETCH(int, rows1);
        QFETCH(int, rows2);
        auto m = model::Model::open(tiny_, config(tp));
        const size_t vocab = size_t(m->hparams().n_vocab);
        m->clear_slot(0);
        m->clear_slot(1);
        const std::span<const float> one = m->step(first_tokens(0, 0, test::random_tokens(rows1, 1)));
        QCOMPARE(one.size(), size_t(rows1) * vocab);
        const std::vector<float> first(one.begin(), one.end());

        // Another sequence (its own slot and block), so a fresh model computes the same.
        const model::StepPlan next = first_tokens(1, 1, test::random_tokens(rows2, 2));
        const std::span<const float> two = m->step(next);
        QCOMPARE(two.size(), size_t(rows2) * vocab);
        auto fresh = model::Model::open(tiny_, config(tp));
        fresh->clear_slot(1);
        const std::span<const float> want = fresh->step(next);
        QCOMPARE(want.size(), two.size());
        QVERIFY2(std::equal(two.begin(), two.end(), want.begin()),
                 "the reused buffer differs from a fresh model's");
        // The two steps' logits differ, so rows left over from the first would show.
        QVERIFY(!std::equal(first.begin(), first.begin() + int64_t(vocab), two.begin()));
    }
};

QTEST_GUILESS_MAIN(TestModelStep)
#include "test_model_step.moc"
