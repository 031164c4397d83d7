// Scheduler decisions as pure logic (no model): the token budget (decodes first, then
// prefill chunks), preemption of the worst running request (newest among equals), aging,
// the no-thrash rule, and preemption when decoding runs out of KV blocks.
#include <QtTest>

#include <memory>

#include "engine/sched/scheduler.h"

using namespace niwa::sched;

namespace {

std::unique_ptr<Request> request(uint64_t id, int prompt, int priority = 0) {
    auto r = std::make_unique<Request>();
    r->id = id;
    r->tokens.assign(static_cast<size_t>(prompt), 7);
    r->prompt_len = prompt;
    r->max_tokens = 1000;
    r->priority = priority;
    return r;
}

// What the engine does after a step: the model read the chunks; each sampled request gets a token.
void run(Scheduler& s, const Step& st) {
    s.complete(st);
    for (const Chunk& c : st.chunks)
        if (c.logits) c.req->tokens.push_back(1);
}

int chunk_of(const Step& st, const Request* r) {
    for (const Chunk& c : st.chunks)
        if (c.req == r) return c.n;
    return 0;
}

}  // namespace

class TestScheduler : public QObject {
    Q_OBJECT

private slots:
    void decodes_first_then_prefill_chunks() {
        BlockManager blocks(100, 4);
        StateSlots seats(3);
        Scheduler s({8, 3, 0.1}, blocks, seats);
        auto a = request(1, 3), b = request(2, 3), c = request(3, 20);
        s.add(a.get(), 0);
        s.add(b.get(), 0);
        Step st = s.schedule(0);
        QCOMPARE(int(st.admitted.size()), 2);
        QCOMPARE(chunk_of(st, a.get()), 3);
        QCOMPARE(chunk_of(st, b.get()), 3);
        run(s, st);
        s.add(c.get(), 0);
        // 20 prompt tokens under a budget of 8 with two decoders: 6 + 6 + 6 + 2.
        for (int expect : {6, 6, 6, 2}) {
            st = s.schedule(0);
            QCOMPARE(st.tokens(), 2 + expect);
            QCOMPARE(st.chunks[0].n, 1);  // decodes lead the step
            QCOMPARE(st.chunks[1].n, 1);
            QCOMPARE(chunk_of(st, c.get()), expect);
            QCOMPARE(st.chunks.back().logits, expect == 2);
            run(s, st);
        }
        QCOMPARE(c->generated(), 1);
        // Blocks for the tokens known when last scheduled: a and b 7 tokens, c 20.
        QCOMPARE(blocks.used(), 2 + 2 + 5);
    }

    void preempts_newest_of_the_worst() {
        BlockManager blocks(100, 4);
        StateSlots seats(2);
        Scheduler s({64, 3, 0.1}, blocks, seats);
        auto a = request(1, 5, 10), b = request(2, 5, 10), c = request(3, 5, 0);
        s.add(a.get(), 0);
        s.add(b.get(), 0);
        run(s, s.schedule(0));
        s.add(c.get(), 0);
        const Step st = s.schedule(0);
        QCOMPARE(st.preempted, std::vector<Request*>{b.get()});
        QCOMPARE(st.admitted, std::vector<Request*>{c.get()});
        QCOMPARE(chunk_of(st, c.get()), 5);
        QCOMPARE(chunk_of(st, a.get()), 1);
        QCOMPARE(b->status, Status::Preempted);
        QCOMPARE(b->computed, 0);
        QCOMPARE(b->slot, -1);
        QVERIFY(b->blocks.empty());
        QCOMPARE(b->tokens.size(), size_t(6));  // its prompt and the token it generated stay
        QCOMPARE(b->preemptions, 1);
        QCOMPARE(s.preempted_total(), uint64_t(1));
        // An equal priority does not preempt: it waits for a free seat.
        auto d = request(4, 5, 10);
        s.add(d.get(), 0);
        QVERIFY(s.schedule(0).preempted.empty());
    }

    void aging_moves_whole_levels() {
        BlockManager blocks(100, 4);
        StateSlots seats(1);
        Scheduler s({64, 3, 0.1}, blocks, seats);
        auto x = request(1, 4, 0), y = request(2, 4, 5);
        s.add(x.get(), 0);
        run(s, s.schedule(0));
        s.add(y.get(), 0);
        QCOMPARE(s.effective_priority(*y, 20), 3.0);
        for (double t : {1.0, 49.0, 59.0}) {  // levels 5, 1, 0: never better than 0
            const Step st = s.schedule(t);
            QVERIFY2(st.preempted.empty(), qPrintable(QString("preempted at t=%1").arg(t)));
            run(s, st);
        }
        const Step st = s.schedule(61);  // level -1
        QCOMPARE(st.preempted, std::vector<Request*>{x.get()});
        QCOMPARE(st.admitted, std::vector<Request*>{y.get()});
    }

    void no_thrash_after_preemption() {
        BlockManager blocks(100, 4);
        StateSlots seats(2);
        const int no_thrash = 3;
        Scheduler s({64, no_thrash, 1.0}, blocks, seats);
        auto a = request(1, 5, 10), b = request(2, 5, 10), c = request(3, 5, 0);
        s.add(a.get(), 0);
        s.add(b.get(), 0);
        run(s, s.schedule(0));
        s.add(c.get(), 0);
        Step st = s.schedule(0);
        QCOMPARE(st.preempted, std::vector<Request*>{b.get()});
        const int64_t at = st.index;
        run(s, st);
        // b ages fast (one level a second): at t=100 it outranks everyone, but it was just
        // preempted, so it may only take free room for the next no_thrash steps.
        while (s.steps() + 1 - at < no_thrash) {
            st = s.schedule(100);
            QVERIFY(st.preempted.empty());
            QVERIFY(st.admitted.empty());
            run(s, st);
        }
        st = s.schedule(100);
        QCOMPARE(st.index - at, int64_t(no_thrash));
        QCOMPARE(st.preempted, std::vector<Request*>{a.get()});  // the worst running, not c
        QCOMPARE(st.admitted, std::vector<Request*>{b.get()});
    }

    void decode_out_of_blocks_preempts_worst() {
        BlockManager blocks(4, 4);
        StateSlots seats(2);
        Scheduler s({64, 3, 0.1}, blocks, seats);
        auto a = request(1, 4, 0), b = request(2, 8, 5);
        s.add(a.get(), 0);
        s.add(b.get(), 0);
        run(s, s.schedule(0));       // a: 5 tokens (2 blocks), b: 9 tokens (3 blocks) > 4 blocks
        QCOMPARE(blocks.used(), 3);  // blocks come as decoding needs them
        Step st = s.schedule(0);
        QCOMPARE(st.preempted, std::vector<Request*>{b.get()});  // a took the last block, b could not grow
        QCOMPARE(int(a->blocks.size()), 2);
        QCOMPARE(st.chunks.size(), size_t(1));
        QCOMPARE(blocks.used(), 2);
    }
};

QTEST_GUILESS_MAIN(TestScheduler)
#include "test_scheduler.moc"
