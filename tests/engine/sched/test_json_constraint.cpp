// Constrained decoding on the real tiny model's tokenizer (byte-level BPE with added tokens):
// the Sampler with random logits, greedy and sampled, always writes one JSON object that
// nlohmann::json parses, and the constraint says complete exactly when it closes; reasoning
// runs free until </think> but never ends on EOS; a rejected draw is redrawn from the
// distribution renormalised over the allowed tokens.
#include <QtTest>

#include <algorithm>
#include <memory>
#include <optional>
#include <random>

#include <nlohmann/json.hpp>

#include "engine/gguf/reader.h"
#include "engine/sched/json_constraint.h"
#include "engine/sched/request.h"
#include "engine/sched/sampler.h"
#include "engine/text/tokenizer.h"
#include "support/engine_process.h"

using namespace niwa;

namespace {

struct Output {
    std::string reasoning;  // bytes before the constraint became active
    std::string content;
    bool complete = false;
    int steps = 0;
};

}  // namespace

class TestJsonConstraint : public QObject {
    Q_OBJECT

    std::optional<text::Tokenizer> tok_;
    std::vector<int32_t> closers_;  // single-byte tokens that lead any JSON state towards its end

    int32_t single(const std::string& s) const {
        const auto ids = tok_->encode(s, false);
        if (ids.size() != 1) qFatal("'%s' is not one token", s.c_str());
        return ids[0];
    }

    sched::Request request(sched::SamplingParams sp, bool reasoning, uint64_t id) const {
        sched::Request r;
        r.id = id;
        r.sampling = sp;
        r.rng = sched::initial_rng(sp, id);
        r.stop_ids = tok_->eos_ids();
        r.constraint = std::make_shared<sched::JsonConstraint>(*tok_, reasoning);
        return r;
    }

    // Samples with random logits until the constraint is complete (at most 3000 steps). After
    // `nudge_after` steps the closers get a boost, as a model wrapping up would, so the random
    // walk ends. `bias(step, logits)` may change the logits first.
    template <typename Bias>
    Output generate(sched::Request& r, uint32_t seed, Bias bias, int nudge_after = 150) {
        sched::Sampler sampler;
        const int64_t vocab = tok_->n_vocab();
        std::mt19937 rng(seed);
        std::normal_distribution<float> normal(0.0f, 3.0f);
        std::vector<float> logits(size_t(vocab), 0.0f);
        Output out;
        for (; out.steps < 3000 && !r.constraint->complete(); ++out.steps) {
            for (float& x : logits) x = normal(rng);
            if (out.steps >= nudge_after)
                for (int32_t c : closers_) logits[size_t(c)] += 12.0f;
            bias(out.steps, logits);
            const std::vector<sched::TokenEvent> ev = sampler.sample({&r}, logits.data(), vocab);
            const int32_t t = ev.at(0).token;
            if (t < 0 || std::find(r.stop_ids.begin(), r.stop_ids.end(), t) != r.stop_ids.end()) {
                qWarning("step %d: token %d", out.steps, t);
                return out;
            }
            const bool was_active = r.constraint->active();
            if (was_active && !tok_->is_byte_level(t)) qWarning("an added token in the content: %d", t);
            r.tokens.push_back(t);
            r.constraint->advance(t);
            (was_active ? out.content : out.reasoning) += std::string(tok_->token_bytes(t));
        }
        out.complete = r.constraint->complete();
        return out;
    }

    static bool ends_at_close(const std::string& s) {
        const size_t last = s.find_last_not_of(" \t\r\n");
        return last != std::string::npos && s[last] == '}';
    }

private Q_SLOTS:
    void initTestCase() {
        const auto reader = gguf::Reader::open(test::synthetic_model("tiny").toStdString());
        tok_ = text::Tokenizer::from_gguf(reader);
        for (const char* c : {"\"", "}", "]", "0", ":"}) closers_.push_back(single(c));
    }

    void random_logits_make_json_data() {
        QTest::addColumn<float>("temperature");
        QTest::addColumn<int>("top_k");
        QTest::addColumn<float>("top_p");
        QTest::newRow("greedy") << 0.0f << 0 << 1.0f;
        QTest::newRow("t=0.7") << 0.7f << 0 << 1.0f;
        QTest::newRow("t=1") << 1.0f << 0 << 1.0f;
        QTest::newRow("t=1.5 top_p=0.9") << 1.5f << 0 << 0.9f;
        QTest::newRow("t=1 top_k=5") << 1.0f << 5 << 1.0f;
        QTest::newRow("top_k=1") << 1.0f << 1 << 1.0f;
    }

    void random_logits_make_json() {
        QFETCH(float, temperature);
        QFETCH(int, top_k);
        QFETCH(float, top_p);
        size_t keys = 0;
        for (uint32_t seed = 1; seed <= 12; ++seed) {
            sched::SamplingParams sp;
            sp.temperature = temperature;
            sp.top_k = top_k;
            sp.top_p = top_p;
            sp.seed = seed;
            sched::Request r = request(sp, false, seed);
            const Output out = generate(r, seed, [](int, std::vector<float>&) {});
            QVERIFY2(out.complete, out.content.c_str());
            QVERIFY(out.reasoning.empty());
            QVERIFY2(ends_at_close(out.content), out.content.c_str());
            nlohmann::json j;
            try {
                j = nlohmann::json::parse(out.content);
            } catch (const std::exception& e) {
                QFAIL((out.content + ": " + e.what()).c_str());
            }
            QVERIFY(j.is_object());
            keys += j.size();
        }
        QVERIFY(keys >= 6);  // not just "{}": the walk went through members
    }

    // EOS and tokens that break the JSON are refused even when they are by far the likeliest.
    void eos_is_refused_until_complete() {
        sched::SamplingParams sp;
        sp.temperature = 0.0f;
        sched::Request r = request(sp, false, 1);
        const auto eos = tok_->eos_ids();
        const int32_t x = single("x");
        const Output out = generate(r, 3, [&](int, std::vector<float>& l) {
            for (int32_t e : eos) l[size_t(e)] += 100.0f;
            l[size_t(x)] += 90.0f;
        });
        QVERIFY(out.complete);
        QVERIFY(nlohmann::json::parse(out.content).is_object());
    }

    // Reasoning is free (an 'x' is taken, EOS is not) until </think>; the object follows.
    void reasoning_then_object() {
        const auto think_end = tok_->find_token("</think>");
        QVERIFY(think_end.has_value());
        const int32_t x = single("x");
        const auto eos = tok_->eos_ids();
        for (uint32_t seed = 1; seed <= 6; ++seed) {
            sched::SamplingParams sp;
            sp.temperature = seed % 2 ? 0.0f : 1.0f;
            sp.seed = seed;
            sched::Request r = request(sp, true, seed);
            const Output out = generate(
                r, seed,
                [&](int step, std::vector<float>& l) {
                    for (int32_t e : eos) l[size_t(e)] += 100.0f;
                    if (step < 10) l[size_t(x)] += 50.0f;
                    if (step == 20) l[size_t(*think_end)] += 200.0f;
                },
                170);
            QVERIFY(out.complete);
            QVERIFY2(out.reasoning.rfind("xxxxxxxxxx", 0) == 0, out.reasoning.c_str());
            QVERIFY2(out.reasoning.size() >= 8 &&
                         out.reasoning.compare(out.reasoning.size() - 8, 8, "</think>") == 0,
                     out.reasoning.c_str());
            QVERIFY2(nlohmann::json::parse(out.content).is_object(), out.content.c_str());
        }
    }

    // </think> spelled over several tokens, with the object's start in the last one.
    void think_end_split_over_tokens() {
        sched::JsonConstraint c(*tok_, true);
        const auto ids = tok_->encode("let me see </think", false);
        for (int32_t t : ids) {
            QVERIFY(c.allows(t));
            c.advance(t);
        }
        QVERIFY(!c.active());
        const int32_t close = single(">");
        QVERIFY(c.allows(close));
        c.advance(close);
        QVERIFY(c.active());
        QVERIFY(!c.allows(single("x")));
        QVERIFY(c.allows(single("{")));
        QVERIFY(!c.allows(*tok_->find_token("<tool_call>")));
    }

    // The first draw is nearly always the refused 'x'; the redraw must split evenly between
    // the two allowed tokens of equal logit.
    void rejected_draws_are_renormalised() {
        const int64_t vocab = tok_->n_vocab();
        const int32_t open = single("{"), space = single(" "), x = single("x");
        sched::Sampler sampler;
        int opens = 0;
        const int n = 4000;
        for (int i = 0; i < n; ++i) {
            sched::SamplingParams sp;
            sp.temperature = 1.0f;
            sp.seed = uint64_t(i) + 1;
            sched::Request r = request(sp, false, uint64_t(i) + 1);
            std::vector<float> logits(size_t(vocab), -40.0f);
            logits[size_t(open)] = 0.0f;
            logits[size_t(space)] = 0.0f;
            logits[size_t(x)] = 5.0f;
            const int32_t t = sampler.sample({&r}, logits.data(), vocab).at(0).token;
            QVERIFY(t == open || t == space);
            opens += t == open;
        }
        const double share = double(opens) / n;
        QVERIFY2(share > 0.46 && share < 0.54, std::to_string(share).c_str());
    }
};

QTEST_GUILESS_MAIN(TestJsonConstraint)
#include "test_json_constraint.moc"
