// Model::step returns a view of logits buffers the model keeps across steps: a step after
// one with more rows, or fewer, sees exactly its own rows, equal to what a fresh model
// computes for it — with one rank and with two (each downloading its vocabulary slice into
// the shared rows). Rows a step was asked to reduce come back as the whole rows' reductions.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <span>
#include <stdexcept>
#include <vector>

#include "engine/model/model.h"
#include "kernels/sample_draw.h"
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
    void reduced_rows_are_the_whole_rows_data() {
        QTest::addColumn<int>("tp");
        QTest::newRow("tp 1") << 1;
        QTest::newRow("tp 2") << 2;
    }

    // Rows with a top ask come back reduced (Model::top_logits, merged over the ranks' slices)
    // from the rows a step without asks brings back whole, and whole again through fetch_rows;
    // a row asking k 0 comes back whole at once.
    void reduced_rows_are_the_whole_rows() {
        QFETCH(int, tp);
        const model::StepPlan whole = first_tokens(0, 0, test::random_tokens(6, 5));
        model::StepPlan asked = whole;
        asked.top_asks = {{1, 0.0f}, {0, 0.0f}, {40, 0.8f}, {128, 1.0f}, {3, 0.7f}, {1, 1.3f}};
        auto a = model::Model::open(tiny_, config(tp));
        a->clear_slot(0);
        const std::span<const float> w = a->step(whole);
        const std::vector<float> want(w.begin(), w.end());
        auto b = model::Model::open(tiny_, config(tp));
        b->clear_slot(0);
        const std::span<float> got = b->step(asked);
        const int64_t vocab = b->hparams().n_vocab;
        const float* row1 = got.data() + vocab;
        QVERIFY2(std::equal(row1, row1 + vocab, want.begin() + vocab), "the row asking k 0 is not whole");
        QVERIFY_THROWS_EXCEPTION(std::logic_error, b->top_logits(1));  // not reduced
        for (int i = 0; i < 6; ++i) {
            const kernels::TopAsk ask = asked.top_asks[size_t(i)];
            if (ask.k == 0) continue;
            const float* row = want.data() + int64_t(i) * vocab;
            kernels::TopLogits one;
            kernels::top_logits_row(row, vocab, ask, one);
            const kernels::TopLogits& top = b->top_logits(i);
            QCOMPARE(top.size, vocab);
            QCOMPARE(top.max_logit, one.max_logit);
            QVERIFY(std::abs(top.mass - one.mass) <= 1e-6 * one.mass);
            // Every token the whole row's reduction holds, the merged one holds above its floor.
            std::vector<int32_t> ids = top.ids;
            std::sort(ids.begin(), ids.end());
            for (int32_t id : one.ids) QVERIFY(std::binary_search(ids.begin(), ids.end(), id));
            if (tp == 1) {
                QCOMPARE(top.ids, one.ids);
                QCOMPARE(top.floor, one.floor);
            }
            for (float u : {0.0f, 0.3f, 0.7f, 0.99f}) {
                const kernels::SampleParams sp{ask.temperature, ask.k == 3 ? 3 : 0, 1.0f, 0.0f, u};
                const int32_t t = kernels::draw_from_top(top, sp);
                if (t >= 0) QCOMPARE(t, kernels::sample_row(row, vocab, sp));
            }
        }
        // Rows 2 and 4 come back; row 3, between them, is left as it was.
        float* row3 = got.data() + 3 * vocab;
        std::fill(row3, row3 + vocab, -7.0f);
        b->fetch_rows({4, 2});
        for (int i : {2, 4}) {
            const float* row = got.data() + i * vocab;
            QVERIFY2(std::equal(row, row + vocab, want.begin() + i * vocab),
                     "fetch_rows brought another row");
        }
        QVERIFY2(std::all_of(row3, row3 + vocab, [](float x) { return x == -7.0f; }),
                 "a row not listed came back");
        QVERIFY_THROWS_EXCEPTION(std::logic_error, b->fetch_rows({6}));
    }
};

QTEST_GUILESS_MAIN(TestModelStep)
#include "test_model_step.moc"
