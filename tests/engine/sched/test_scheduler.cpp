// Scheduler decisions as pure logic (no model): the token budget (decodes first, then
// prefill chunks), preemption of the worst running request (newest among equals), aging,
// the no-thrash rule, preemption when decoding runs out of KV blocks, and parking: a preempted
// request's caches go to host RAM when that is cheaper than re-reading them and fits the
// budget, and it resumes where it stopped.
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

// Two priority-10 requests with 5 computed tokens and a sampled sixth each; c (priority
// 0) preempts b. Park: 100 bytes of state and 10 a token.
struct Parked {
    BlockManager blocks{100, 4};
    StateSlots seats{2};
    std::unique_ptr<Request> a = request(1, 5, 10), b = request(2, 5, 10), c = request(3, 5, 0);
    Scheduler s;
    Step st;
    explicit Parked(int64_t budget, double prefill_rate = 0)
        : s({64, 3, 0.1, {budget, 100, 10, 1000.0}}, blocks, seats) {
        s.set_prefill_rate(prefill_rate);
        s.add(a.get(), 0);
        s.add(b.get(), 0);
        run(s, s.schedule(0));
        s.add(c.get(), 0);
        st = s.schedule(0);
    }
};

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

    void parks_and_resumes_where_it_stopped() {
        Parked p(1000);
        QCOMPARE(p.st.preempted, std::vector<Request*>{p.b.get()});
        QCOMPARE(p.st.parked.size(), size_t(1));
        const Parking& k = p.st.parked[0];
        QCOMPARE(k.req, p.b.get());
        QCOMPARE(k.slot, 1);
        QCOMPARE(k.blocks.size(), size_t(2));  // 6 tokens: where its 5 computed ones are, to copy out
        QCOMPARE(k.tokens, 5);
        QCOMPARE(p.b->parked, 5);
        QCOMPARE(p.b->parked_bytes, int64_t(150));
        QCOMPARE(p.s.parked_bytes(), int64_t(150));
        QCOMPARE(p.s.parked_count(), 1);
        QCOMPARE(p.s.parked_total(), uint64_t(1));
        QVERIFY(p.b->blocks.empty());  // its seat and blocks are free all the same
        QCOMPARE(p.b->slot, -1);
        run(p.s, p.st);
        p.s.remove(p.a.get());
        Step st = p.s.schedule(0);
        while (st.admitted.empty()) {  // no thrash: b waits its steps, then takes a's free seat
            run(p.s, st);
            st = p.s.schedule(0);
        }
        QCOMPARE(st.admitted, std::vector<Request*>{p.b.get()});
        QCOMPARE(st.restored, std::vector<Request*>{p.b.get()});
        QCOMPARE(p.b->computed, 5);
        QCOMPARE(chunk_of(st, p.b.get()), 1);  // only the token it had not read: no prefill
        QCOMPARE(p.b->parked, 0);
        QCOMPARE(p.s.parked_bytes(), int64_t(0));
        QCOMPARE(p.s.parked_count(), 0);
    }

    void recomputes_when_that_is_cheaper() {
        // 5 tokens at 1e6 tokens/s: 5 us; 150 bytes out and back at 1000 bytes/s: 0.3 s.
        Parked p(1000, 1e6);
        QCOMPARE(p.st.preempted, std::vector<Request*>{p.b.get()});
        QVERIFY(p.st.parked.empty());
        QCOMPARE(p.b->parked, 0);
        QCOMPARE(p.b->computed, 0);
        // 5 tokens at 1 token/s: 5 s, more than the 0.3 s copy.
        Parked slow(1000, 1.0);
        QCOMPARE(slow.st.parked.size(), size_t(1));
    }

    void budget_exhausted_falls_back_to_recompute() {
        Parked p(149);  // one byte short
        QCOMPARE(p.st.preempted, std::vector<Request*>{p.b.get()});
        QVERIFY(p.st.parked.empty());
        QCOMPARE(p.s.parked_bytes(), int64_t(0));
        Parked off(0);  // parking off
        QVERIFY(off.st.parked.empty());
        QCOMPARE(off.s.preempted_total(), uint64_t(1));
        // Room for one parked sequence: the second preemption recomputes.
        Parked one(200);
        QCOMPARE(one.st.parked.size(), size_t(1));
        run(one.s, one.st);
        auto d = request(4, 5, 0);
        one.s.add(d.get(), 0);
        const Step st = one.s.schedule(0);
        QCOMPARE(st.preempted, std::vector<Request*>{one.a.get()});
        QVERIFY(st.parked.empty());
        QCOMPARE(one.s.parked_bytes(), int64_t(150));
    }

    void removing_a_parked_request_frees_its_budget() {
        Parked p(1000);
        run(p.s, p.st);
        QCOMPARE(p.s.parked_bytes(), int64_t(150));
        p.s.remove(p.b.get());
        QCOMPARE(p.s.parked_bytes(), int64_t(0));
        QCOMPARE(p.s.parked_count(), 0);
        QCOMPARE(p.b->parked, 0);
        QCOMPARE(p.b->status, Status::Finished);
    }

    void a_failed_park_recomputes() {
        Parked p(1000);
        p.s.park_failed(p.b.get());
        run(p.s, p.st);
        QCOMPARE(p.s.parked_bytes(), int64_t(0));
        QCOMPARE(p.s.parked_count(), 0);
        QCOMPARE(p.s.parked_total(), uint64_t(0));
        QCOMPARE(p.s.preempted_total(), uint64_t(1));
        p.s.remove(p.a.get());
        Step st = p.s.schedule(0);
        while (st.admitted.empty()) {
            run(p.s, st);
            st = p.s.schedule(0);
        }
        QVERIFY(st.restored.empty());
        QCOMPARE(chunk_of(st, p.b.get()), 6);  // re-reads all its tokens
    }
};

QTEST_GUILESS_MAIN(TestScheduler)
#include "test_scheduler.moc"
