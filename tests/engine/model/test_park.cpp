// Parking a sequence (Model::park / Model::restore through model::Sequences): its KV rows and
// recurrent state go to host RAM, another sequence overwrites its old blocks and slot, and
// it comes back into different blocks and a different slot. What it computes next is
// bitwise what it would have computed had it never left, with one rank and with two.
#include <QtTest>

#include <algorithm>

#include "park_scenario.h"
#include "support/engine_process.h"

using namespace niwa;

namespace {

model::ModelConfig config(int tp) {
    model::ModelConfig c;
    c.tp = tp;
    c.threads = 2;
    c.max_seqs = 4;
    c.max_step_tokens = 64;
    c.block_tokens = 16;
    c.max_context = 256;
    return c;
}

}  // namespace

class TestPark : public QObject {
    Q_OBJECT

private:
    std::string tiny_;

private slots:
    void initTestCase() {
        tiny_ = test::synthetic_model("tiny", 5).toStdString();
        QVERIFY(!tiny_.empty());
    }

    void park_bytes_are_linear() {
        auto m = model::Model::open(tiny_, config(1));
        const size_t state = m->park_bytes(0), per_token = m->park_bytes(1) - state;
        QVERIFY(state > 0);
        QVERIFY(per_token > 0);
        QCOMPARE(m->park_bytes(45), state + 45 * per_token);
    }

    void restore_elsewhere_equals_never_parked_data() {
        QTest::addColumn<int>("tp");
        QTest::newRow("tp 1") << 1;
        QTest::newRow("tp 2") << 2;
    }

    void restore_elsewhere_equals_never_parked() {
        QFETCH(int, tp);
        auto m = model::Model::open(tiny_, config(tp));
        const test::ParkRun stayed = test::park_scenario(*m, false);
        const test::ParkRun parked = test::park_scenario(*m, true);
        QCOMPARE(parked.parked.bytes, m->park_bytes(45));
        QCOMPARE(parked.parked.n_tokens, 45);
        QCOMPARE(parked.blocks_before, (std::vector<int32_t>{0, 1, 4}));  // two runs of blocks
        QVERIFY(parked.slot_after != parked.slot_before);
        for (int32_t blk : parked.blocks_after)
            QVERIFY2(std::find(parked.blocks_before.begin(), parked.blocks_before.end(), blk) ==
                         parked.blocks_before.end(),
                     "restored into a block it had before: the test proves nothing");
        QCOMPARE(parked.reparked.bytes, parked.parked.bytes);
        QVERIFY2(
            test::bitwise_equal(parked.reparked.data.get(), parked.parked.data.get(), parked.parked.bytes),
            "parked again after restore, the bytes differ");
        QVERIFY(test::bitwise_equal(parked.prompt_logits, stayed.prompt_logits));
        QCOMPARE(parked.next_logits.size(), size_t(20) * size_t(m->hparams().n_vocab));
        QVERIFY2(test::bitwise_equal(parked.next_logits, stayed.next_logits),
                 "logits after restore differ from never parking");
    }

    void restore_checks_its_input() {
        auto m = model::Model::open(tiny_, config(1));
        model::Sequences s(*m);
        const int a = s.add();
        s.feed({{a, test::park_tokens(40, 9)}});
        const cache::ParkedSequence p = m->park(a, s.blocks(a), 40);
        const std::vector<int32_t> two{7, 8};  // 32 tokens: too few for 40
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, m->restore(p, 1, two));
        const std::vector<int32_t> three{7, 8, 9};
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, m->restore(p, 4, three));  // no slot 4
        const std::vector<int32_t> outside{7, 8, m->kv_blocks()};
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, m->restore(p, 1, outside));
        m->restore(p, 1, three);
    }
};

QTEST_GUILESS_MAIN(TestPark)
#include "test_park.moc"
