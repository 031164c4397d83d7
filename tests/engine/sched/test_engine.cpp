// The engine on the real tiny model: batched requests give exactly the tokens each gives
// alone (model::Sequences, greedy), a priority-0 request preempts a full house within two
// steps and everyone still gets their own-alone output, and the edges: cancel, max_tokens,
// stop ids, a full queue, a prompt too long, seeded sampling, penalties, logprobs. Preemption
// parks the caches in host RAM or drops them for recompute; either way the output is the
// request's own-alone output, and a parked request's host RAM goes when it is cancelled.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <set>
#include <thread>

#include "engine/model/sequences.h"
#include "engine/sched/engine.h"
#include "kernels/sample_draw.h"
#include "support/engine_process.h"

using namespace niwa;
using sched::Engine;
using sched::EngineConfig;
using sched::FinishReason;
using sched::GenerateRequest;

namespace {

std::vector<int32_t> random_tokens(int n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<int32_t> t(static_cast<size_t>(n));
    for (auto& x : t) x = int32_t(rng() % 1000u);
    return t;
}

GenerateRequest greedy(std::vector<int32_t> prompt, int max_tokens, int priority = 0) {
    GenerateRequest g;
    g.prompt = std::move(prompt);
    g.max_tokens = max_tokens;
    g.priority = priority;
    g.sampling.temperature = 0.0f;
    return g;
}

struct Result {
    std::vector<int32_t> tokens;
    std::vector<sched::TokenEvent> events;
    sched::FinishInfo info;
};

Result collect(sched::Stream& s) {
    Result r;
    while (s.next(r.events, std::chrono::milliseconds(1000))) {
    }
    for (const auto& e : r.events) r.tokens.push_back(e.token);
    r.info = s.finish();
    return r;
}

// Waits until the stream has given `n` tokens into `seen` (or ended).
void wait_tokens(sched::Stream& s, std::vector<sched::TokenEvent>& seen, size_t n) {
    while (seen.size() < n && s.next(seen, std::chrono::milliseconds(1000))) {
    }
}

// Blocks until the stream has produced at least one token (which it keeps in `seen`).
void wait_first_token(sched::Stream& s, std::vector<sched::TokenEvent>& seen) {
    wait_tokens(s, seen, 1);
}

// The tokens `seen` before collecting, then the rest.
Result collect_after(sched::Stream& s, const std::vector<sched::TokenEvent>& seen) {
    Result r = collect(s);
    r.events.insert(r.events.begin(), seen.begin(), seen.end());
    r.tokens.clear();
    for (const auto& e : r.events) r.tokens.push_back(e.token);
    return r;
}

// Waits up to 30 s for the engine's stats to satisfy `ok`.
template <typename Pred>
bool wait_stats(const Engine& engine, Pred ok) {
    for (int i = 0; i < 3000; ++i) {
        if (ok(engine.stats())) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
}

// Preemption modes for the engine tests.
enum class Preempt { Park, Recompute, BudgetTooSmall };

EngineConfig with_preempt(EngineConfig c, Preempt mode) {
    switch (mode) {
        case Preempt::Park:
            c.park_copy_bytes_per_s = 1e18;  // copying always looks cheaper than recomputing
            break;
        case Preempt::Recompute:
            c.park_memory_bytes = 0;  // parking off
            break;
        case Preempt::BudgetTooSmall:
            c.park_memory_bytes = 1;
            c.park_copy_bytes_per_s = 1e18;
            break;
    }
    return c;
}

}  // namespace

class TestEngine : public QObject {
    Q_OBJECT

private:
    std::unique_ptr<model::Model> model_;     // the engine's
    std::unique_ptr<model::Model> ref_;       // for reference runs through model::Sequences
    std::unique_ptr<model::Model> small_kv_;  // 8 KV blocks of 16 tokens: room for 128 tokens
    int64_t vocab_ = 0;

    static model::ModelConfig model_config() {
        model::ModelConfig c;
        c.max_seqs = 4;
        c.max_step_tokens = 64;
        c.block_tokens = 16;
        c.max_context = 256;
        c.threads = 2;
        return c;
    }

    static EngineConfig engine_config(int max_seqs = 4) {
        EngineConfig c;
        c.max_seqs = max_seqs;
        c.step_token_budget = 32;  // below the longer prompts: prefill goes in chunks
        c.max_context = 256;
        return c;
    }

    // Greedy tokens of the prompt run alone.
    std::vector<int32_t> alone(const std::vector<int32_t>& prompt, int n) {
        model::Sequences seqs(*ref_);
        const int id = seqs.add();
        std::vector<int32_t> out;
        std::vector<float> logits = seqs.feed({{id, prompt}})[0];
        while (int(out.size()) < n) {
            out.push_back(int32_t(std::max_element(logits.begin(), logits.end()) - logits.begin()));
            logits = seqs.feed({{id, {out.back()}}})[0];
        }
        return out;
    }

private slots:
    void initTestCase() {
        const std::string path = test::synthetic_model("tiny", 3).toStdString();
        QVERIFY(!path.empty());
        model_ = model::Model::open(path, model_config());
        ref_ = model::Model::open(path, model_config());
        model::ModelConfig small = model_config();
        small.kv_blocks = 8;
        small_kv_ = model::Model::open(path, small);
        vocab_ = model_->hparams().n_vocab;
    }

    void batch_equals_each_alone() {
        Engine engine(*model_, engine_config());
        const std::vector<int> lengths{5, 40, 70, 17, 9, 33};  // more requests than seats
        std::vector<std::shared_ptr<sched::Stream>> streams;
        for (size_t i = 0; i < lengths.size(); ++i)
            streams.push_back(engine.submit(greedy(random_tokens(lengths[i], uint32_t(10 + i)), 10)));
        for (size_t i = 0; i < lengths.size(); ++i) {
            const Result r = collect(*streams[i]);
            QCOMPARE(r.info.reason, FinishReason::Length);
            QCOMPARE(r.info.completion_tokens, 10);
            QCOMPARE(r.info.prompt_tokens, lengths[i]);
            QCOMPARE(r.tokens, alone(random_tokens(lengths[i], uint32_t(10 + i)), 10));
        }
        const sched::EngineStats st = engine.stats();
        QCOMPARE(st.requests_finished_total, uint64_t(lengths.size()));
        QCOMPARE(st.generation_tokens_total, uint64_t(10 * lengths.size()));
        QCOMPARE(st.kv_blocks_used, 0);
        QCOMPARE(st.slots_used, 0);
        // Batched: fewer steps than the requests would take one after another.
        QVERIFY(st.steps_total < uint64_t(lengths.size() * 10));
    }

    void priority_preempts_within_two_steps() {
        Engine engine(*model_, engine_config(2));
        const auto p1 = random_tokens(30, 21), p2 = random_tokens(12, 22), urgent = random_tokens(20, 23);
        auto s1 = engine.submit(greedy(p1, 48, 10));
        auto s2 = engine.submit(greedy(p2, 48, 10));
        std::vector<sched::TokenEvent> seen1, seen2;
        wait_first_token(*s1, seen1);
        wait_first_token(*s2, seen2);
        auto s0 = engine.submit(greedy(urgent, 8, 0));
        const Result r0 = collect(*s0);
        Result r1 = collect(*s1), r2 = collect(*s2);
        r1.events.insert(r1.events.begin(), seen1.begin(), seen1.end());
        r2.events.insert(r2.events.begin(), seen2.begin(), seen2.end());
        r1.tokens.clear(), r2.tokens.clear();
        for (const auto& e : r1.events) r1.tokens.push_back(e.token);
        for (const auto& e : r2.events) r2.tokens.push_back(e.token);

        QVERIFY2(r0.info.first_token_step - r0.info.submit_step <= 2,
                 qPrintable(QString("first token %1 steps after submit")
                                .arg(r0.info.first_token_step - r0.info.submit_step)));
        QCOMPARE(r0.info.preemptions, 0);
        QCOMPARE(r1.info.preemptions + r2.info.preemptions, 1);
        QCOMPARE(r2.info.preemptions, 1);  // the newer of the two equals yields
        QCOMPARE(engine.stats().preempted_total, uint64_t(1));
        QCOMPARE(r0.tokens, alone(urgent, 8));
        QCOMPARE(r1.tokens, alone(p1, 48));
        QCOMPARE(r2.tokens, alone(p2, 48));  // re-read after preemption, same continuation
    }

    void preempted_output_is_its_own_data() {
        QTest::addColumn<int>("mode");
        QTest::newRow("park") << int(Preempt::Park);
        QTest::newRow("recompute") << int(Preempt::Recompute);
        QTest::newRow("park budget too small") << int(Preempt::BudgetTooSmall);
    }

    // One seat: a priority-0 arrival preempts the priority-10 request mid-generation; it
    // resumes once the seat is free and ends with the tokens it gives alone.
    void preempted_output_is_its_own() {
        QFETCH(int, mode);
        const auto m = Preempt(mode);
        Engine engine(*model_, with_preempt(engine_config(1), m));
        const auto low = random_tokens(37, 101), urgent = random_tokens(20, 102);
        auto s1 = engine.submit(greedy(low, 40, 10));
        std::vector<sched::TokenEvent> seen;
        wait_first_token(*s1, seen);
        auto s0 = engine.submit(greedy(urgent, 8, 0));
        const Result r0 = collect(*s0);
        const Result r1 = collect_after(*s1, seen);
        QCOMPARE(r0.info.preemptions, 0);
        QCOMPARE(r1.info.preemptions, 1);
        const sched::EngineStats st = engine.stats();
        QCOMPARE(st.preempted_total, uint64_t(1));
        QCOMPARE(st.parked_total, uint64_t(m == Preempt::Park ? 1 : 0));
        QCOMPARE(st.parked, 0);
        QCOMPARE(st.parked_bytes, int64_t(0));
        QCOMPARE(r0.tokens, alone(urgent, 8));
        QCOMPARE(r1.tokens, alone(low, 40));
    }

    // A KV pool too small for two growing sequences: the newer one is preempted (parked)
    // whenever the older needs its blocks, and both still end with their own-alone output.
    void kv_pressure_parks_and_resumes() {
        Engine engine(*small_kv_, with_preempt(engine_config(2), Preempt::Park));
        const auto p1 = random_tokens(40, 111), p2 = random_tokens(36, 112);
        auto s1 = engine.submit(greedy(p1, 40));
        auto s2 = engine.submit(greedy(p2, 40));
        const Result r1 = collect(*s1), r2 = collect(*s2);
        const sched::EngineStats st = engine.stats();
        QVERIFY(st.preempted_total >= 1);
        QCOMPARE(st.parked_total, st.preempted_total);
        QCOMPARE(r2.info.preemptions, int(st.preempted_total));
        QCOMPARE(st.parked_bytes, int64_t(0));
        QCOMPARE(st.kv_blocks_used, 0);
        QCOMPARE(r1.tokens, alone(p1, 40));
        QCOMPARE(r2.tokens, alone(p2, 40));
    }

    void cancelled_parked_request_frees_host_memory() {
        Engine engine(*model_, with_preempt(engine_config(1), Preempt::Park));
        auto low = engine.submit(greedy(random_tokens(30, 121), 1000, 10));
        std::vector<sched::TokenEvent> seen;
        // Two tokens: the step that gives the second has cached the first, so the 30-token prompt
        // and one token are parked (after only the first, the cache may still hold the prompt alone).
        wait_tokens(*low, seen, 2);
        auto urgent = engine.submit(greedy(random_tokens(10, 122), 1000, 0));
        QVERIFY(wait_stats(engine, [](const sched::EngineStats& s) { return s.parked == 1; }));
        const sched::EngineStats parked = engine.stats();
        QVERIFY(parked.parked_bytes >= int64_t(model_->park_bytes(31)));
        QVERIFY(parked.parked_bytes <= parked.park_budget_bytes);
        low->cancel();
        QCOMPARE(collect(*low).info.reason, FinishReason::Cancelled);
        const sched::EngineStats after = engine.stats();
        QCOMPARE(after.parked, 0);
        QCOMPARE(after.parked_bytes, int64_t(0));
        urgent->cancel();
        QCOMPARE(collect(*urgent).info.reason, FinishReason::Cancelled);
    }

    void cancel_frees_seat_and_blocks() {
        Engine engine(*model_, engine_config(2));
        auto s = engine.submit(greedy(random_tokens(50, 31), 1000));
        std::vector<sched::TokenEvent> seen;
        wait_first_token(*s, seen);
        QVERIFY(engine.stats().kv_blocks_used > 0);
        s->cancel();
        const uint64_t at = engine.stats().steps_total;
        const Result r = collect(*s);
        QCOMPARE(r.info.reason, FinishReason::Cancelled);
        const sched::EngineStats st = engine.stats();
        QVERIFY2(st.steps_total <= at + 1, "resources outlived the step after cancel");
        QCOMPARE(st.slots_used, 0);
        QCOMPARE(st.kv_blocks_used, 0);
        QCOMPARE(st.running, 0);
    }

    void max_tokens_clamped_to_context() {
        Engine engine(*model_, engine_config());
        auto s = engine.submit(greedy(random_tokens(250, 41), 100));
        const Result r = collect(*s);
        QCOMPARE(r.info.reason, FinishReason::Length);
        QCOMPARE(r.info.completion_tokens, 6);  // 256 - 250
        QCOMPARE(int(r.tokens.size()), 6);
    }

    void stop_id_ends_without_emitting() {
        const auto prompt = random_tokens(15, 51);
        const auto ref = alone(prompt, 12);
        size_t k = 1;  // the first token not seen before it
        while (k < ref.size() && std::count(ref.begin(), ref.begin() + int(k), ref[k])) ++k;
        QVERIFY2(k < ref.size(), "the reference repeats its first token only; choose another prompt");
        Engine engine(*model_, engine_config());
        GenerateRequest g = greedy(prompt, 12);
        g.stop_ids = {ref[k]};
        const Result r = collect(*engine.submit(g));
        QCOMPARE(r.info.reason, FinishReason::Stop);
        QCOMPARE(r.tokens, std::vector<int32_t>(ref.begin(), ref.begin() + int(k)));
        QCOMPARE(r.info.completion_tokens, int(k));
    }

    void queue_full() {
        EngineConfig c = engine_config(1);
        c.max_waiting = 2;
        Engine engine(*model_, c);
        auto a = engine.submit(greedy(random_tokens(8, 61), 1000));
        std::vector<sched::TokenEvent> seen;
        wait_first_token(*a, seen);
        auto b = engine.submit(greedy(random_tokens(8, 62), 4));
        auto d = engine.submit(greedy(random_tokens(8, 63), 4));
        QCOMPARE(engine.stats().waiting, 2);
        try {
            engine.submit(greedy(random_tokens(8, 64), 4));
            QFAIL("a third waiting request was accepted");
        } catch (const sched::QueueFull& e) {
            QVERIFY(e.retry_after_s >= 1.0);
        }
        a->cancel();
        QCOMPARE(collect(*a).info.reason, FinishReason::Cancelled);
        QCOMPARE(collect(*b).info.reason, FinishReason::Length);
        QCOMPARE(collect(*d).info.reason, FinishReason::Length);
    }

    void rejects_what_can_never_run() {
        Engine engine(*model_, engine_config());
        try {
            engine.submit(greedy(random_tokens(256, 71), 4));
            QFAIL("a prompt filling the whole context was accepted");
        } catch (const sched::RequestTooLarge& e) {
            QCOMPARE(QString(e.what()), QString("the prompt has 256 tokens, this server's context is 256"));
        }
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, engine.submit(greedy({}, 4)));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, engine.submit(greedy({1, int32_t(vocab_), 2}, 4)));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, engine.submit(greedy({1, -1}, 4)));
        QCOMPARE(collect(*engine.submit(greedy(random_tokens(255, 71), 4))).info.completion_tokens, 1);
    }

    void seeded_sampling_is_reproducible() {
        GenerateRequest g;
        g.prompt = random_tokens(12, 81);
        g.max_tokens = 16;
        g.sampling.temperature = 1.0f;
        g.sampling.top_k = 50;
        g.sampling.top_p = 0.95f;
        g.sampling.seed = 42;
        Engine engine(*model_, engine_config());
        const Result first = collect(*engine.submit(g));
        // Again, this time beside other requests.
        auto noise1 = engine.submit(greedy(random_tokens(40, 82), 16));
        auto again = engine.submit(g);
        auto noise2 = engine.submit(greedy(random_tokens(7, 83), 16));
        GenerateRequest other = g;
        other.sampling.seed = 43;
        auto different = engine.submit(other);
        QCOMPARE(collect(*again).tokens, first.tokens);
        QVERIFY(collect(*different).tokens != first.tokens);
        QVERIFY(first.tokens != alone(g.prompt, 16));  // it really sampled
        collect(*noise1);
        collect(*noise2);
    }

    void penalties_and_logprobs() {
        const auto prompt = random_tokens(10, 91);
        const auto plain = alone(prompt, 24);
        QVERIFY2(plain[1] != plain[0], "greedy repeats its first token anyway; choose another prompt");
        Engine engine(*model_, engine_config());
        // A (strongly) negative frequency penalty rewards repeating what was generated.
        GenerateRequest g = greedy(prompt, 24);
        g.sampling.frequency_penalty = -1000.0f;
        g.sampling.top_logprobs = 3;
        const Result r = collect(*engine.submit(g));
        QCOMPARE(r.tokens, std::vector<int32_t>(24, plain[0]));
        // A positive presence penalty forbids repeats: the greedy output less its repeats.
        g.sampling.frequency_penalty = 0.0f;
        g.sampling.presence_penalty = 1000.0f;
        const Result distinct = collect(*engine.submit(g));
        QCOMPARE(std::set<int32_t>(distinct.tokens.begin(), distinct.tokens.end()).size(),
                 distinct.tokens.size());
        QCOMPARE(distinct.tokens[0], plain[0]);
        for (const auto& e : r.events) {
            QCOMPARE(int(e.top.size()), 3);
            QCOMPARE(e.top[0].first, e.token);  // greedy picks the best
            QCOMPARE(e.top[0].second, e.logprob);
            QVERIFY(e.logprob <= 0.0f && e.logprob > -50.0f);
            QVERIFY(e.top[1].second <= e.top[0].second && e.top[2].second <= e.top[1].second);
        }
    }
    // A request the sampler can draw from on the device (no penalties, constraint or logprobs)
    // has its rows reduced there (Model::top_logits), and fetched whole only when its draw
    // reaches below the reduction; asking for logprobs brings every row back whole. Either way
    // a seeded request samples the same tokens, at every setting, greedy included.
    void reduced_rows_sample_as_whole_rows() {
        Engine engine(*model_, engine_config());
        struct Setting {
            float temperature, top_p, min_p;
            int top_k;
        };
        const sched::EngineStats before = engine.stats();
        int sampled = 0;
        for (const Setting set :
             {Setting{0.0f, 1.0f, 0.0f, 0}, Setting{1.0f, 0.95f, 0.0f, 50}, Setting{0.8f, 0.9f, 0.0f, 0},
              Setting{1.0f, 1.0f, 0.0f, 0}, Setting{0.7f, 1.0f, 0.05f, 0}, Setting{0.5f, 0.5f, 0.0f, 0},
              Setting{30.0f, 1.0f, 0.0f, 0}}) {
            GenerateRequest g;
            g.prompt = random_tokens(9, 95);
            g.max_tokens = 12;
            g.sampling.temperature = set.temperature;
            g.sampling.top_p = set.top_p;
            g.sampling.min_p = set.min_p;
            g.sampling.top_k = set.top_k;
            g.sampling.seed = 7;
            // Side by side in the same steps, behind a greedy request: rows past the first are fetched too.
            auto other = engine.submit(greedy(random_tokens(5, 96), 12));
            auto reduced_stream = engine.submit(g);
            g.sampling.top_logprobs = 0;  // every row whole
            const Result whole = collect(*engine.submit(g));
            const Result reduced = collect(*reduced_stream);
            collect(*other);
            sampled += 24;  // the request's rows and the greedy one's
            QCOMPARE(reduced.tokens.size(), size_t(12));
            QVERIFY2(reduced.tokens == whole.tokens,
                     qPrintable(QString("T %1 top_p %2 min_p %3 top_k %4: the reduced rows sampled otherwise")
                                    .arg(set.temperature)
                                    .arg(set.top_p)
                                    .arg(set.min_p)
                                    .arg(set.top_k)));
        }
        QVERIFY(
            wait_stats(engine, [&](const sched::EngineStats& s) { return s.requests_finished_total >= 12; }));
        const sched::EngineStats after = engine.stats();
        const uint64_t reduced = after.rows_reduced_total - before.rows_reduced_total;
        const uint64_t fetched = after.rows_fetched_total - before.rows_fetched_total;
        qInfo("%llu rows reduced, %llu of them fetched whole (vocabulary %lld)",
              static_cast<unsigned long long>(reduced), static_cast<unsigned long long>(fetched),
              static_cast<long long>(vocab_));
        QCOMPARE(reduced, uint64_t(sampled));  // every row of the requests without logprobs
        QVERIFY(fetched < reduced);            // greedy rows never are
        // At T 30 the draw is nearly uniform: most land below the candidates, so rows come back.
        QVERIFY(vocab_ > 4 * kernels::kDrawCandidates && fetched >= 6);
    }
    // Reduced rows whose draws reach below their reductions are fetched in one span, before any
    // row is penalised: a penalised row between two such rows keeps its penalties.
    void fetched_rows_leave_penalised_rows_alone() {
        const auto prompt = random_tokens(10, 91);
        const auto plain = alone(prompt, 12);
        QVERIFY2(plain[1] != plain[0], "greedy repeats its first token anyway; choose another prompt");
        Engine engine(*model_, engine_config());
        GenerateRequest hot;  // nearly uniform: most draws land below the candidates
        hot.prompt = random_tokens(6, 97);
        hot.max_tokens = 12;
        hot.sampling.temperature = 30.0f;
        hot.sampling.seed = 1;
        GenerateRequest repeat = greedy(prompt, 12);
        repeat.sampling.frequency_penalty = -1000.0f;  // rewards repeating what it generated
        auto a = engine.submit(hot);
        auto penalised = engine.submit(repeat);
        hot.sampling.seed = 2;
        auto b = engine.submit(hot);
        QCOMPARE(collect(*penalised).tokens, std::vector<int32_t>(12, plain[0]));
        collect(*a);
        collect(*b);
        QVERIFY(engine.stats().rows_fetched_total > 0);
    }
};

QTEST_GUILESS_MAIN(TestEngine)
#include "test_engine.moc"
