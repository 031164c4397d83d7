// Tests of the CPU sampler: greedy exactly, filtered distributions on hand-computed cases
// (through a grid of uniforms), a random vocabulary statistically, the probabilities against exp,
// (logit, id) pairs as a GPU hands them over against the row, top_k's candidates and large rows
// exactly against the whole row sorted.
#include "kernels/ops.h"
#include "kernels/sample_draw.h"
#include "tests/kernels/kernel_test_util.h"

#include <QtTest>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>

using namespace niwa::kernels;
using namespace niwa::kernels::test;

namespace {

// Draws one token per uniform from the same logits row, one row each in a single call.
std::vector<int32_t> draw_many(Ops& ops, const std::vector<float>& logits, SampleParams sp,
                               const std::vector<float>& uniforms) {
    const auto vocab = static_cast<int64_t>(logits.size());
    HostTensor t(static_cast<int64_t>(uniforms.size()), vocab, vocab + 3);
    std::vector<SampleParams> params(uniforms.size(), sp);
    for (size_t i = 0; i < uniforms.size(); ++i) {
        std::copy(logits.begin(), logits.end(), &t.at(static_cast<int64_t>(i), 0));
        params[i].uniform = uniforms[i];
    }
    std::vector<int32_t> ids(uniforms.size(), -1);
    ops.sample(t.t, params.data(), ids.data());
    return ids;
}

std::vector<float> grid(int n) {
    std::vector<float> u(n);
    for (int i = 0; i < n; ++i) u[i] = (i + 0.5f) / n;
    return u;
}

// Frequencies from a uniform grid match `want` (id -> probability) to the grid's resolution.
void check_grid(Ops& ops, const std::vector<float>& logits, SampleParams sp,
                const std::map<int, double>& want) {
    const int n = 20000;
    const auto ids = draw_many(ops, logits, sp, grid(n));
    std::map<int, int> count;
    for (int32_t id : ids) ++count[id];
    for (const auto& [id, c] : count) QVERIFY2(want.count(id), qPrintable(QString("drew id %1").arg(id)));
    for (const auto& [id, p] : want)
        QVERIFY2(std::abs(count[id] / double(n) - p) <= 2.0 / n,
                 qPrintable(QString("id %1: %2 vs %3").arg(id).arg(count[id] / double(n)).arg(p)));
}

}  // namespace

class TestSample : public QObject {
    Q_OBJECT

private slots:
    void greedyTakesTheLowestArgmax() {
        std::mt19937 rng(900);
        auto ops = make_cpu_ops(2);
        auto logits = random_vector(rng, 100, -5.0f, 5.0f);
        logits[37] = logits[81] = 9.0f;
        for (float u : {0.0f, 0.5f, 0.999f}) {
            QCOMPARE(draw_many(*ops, logits, SampleParams{0.0f, 0, 1.0f, 0.0f, 0.0f}, {u})[0], 37);
            QCOMPARE(draw_many(*ops, logits, SampleParams{-1.0f, 50, 0.5f, 0.1f, 0.0f}, {u})[0], 37);
            QCOMPARE(draw_many(*ops, logits, SampleParams{1.5f, 1, 1.0f, 0.0f, 0.0f}, {u})[0], 37);
        }
    }

    // NaN logits take no part: the row's maximum comes from its numbers wherever the NaNs sit
    // (a NaN first in a block once hid the block's maximum, and a logit far above the rest then
    // got a weight of 2^300: bits past the exponent, a negative "probability").
    void nanLogitsTakeNoPart() {
        auto ops = make_cpu_ops(2);
        for (int nan_at : {0, 1, 7, 8, 255, 256, 300}) {
            std::vector<float> logits(1000, -10.0f);
            logits[size_t(nan_at)] = NAN;
            logits[3] = logits[290] = NAN;
            const int peak = nan_at == 256 ? 260 : 5 + (nan_at & 1);
            logits[size_t(peak)] = 200.0f;
            for (SampleParams sp :
                 {SampleParams{1.0f, 0, 1.0f, 0.0f, 0.0f}, SampleParams{0.7f, 0, 0.9f, 0.0f, 0.0f},
                  SampleParams{1.0f, 40, 1.0f, 0.0f, 0.0f}, SampleParams{1.0f, 0, 1.0f, 0.05f, 0.0f}})
                for (int32_t id : draw_many(*ops, logits, sp, {0.0f, 0.3f, 0.999f}))
                    QVERIFY2(id == peak,
                             qPrintable(QString("NaN at %1: drew %2, not %3").arg(nan_at).arg(id).arg(peak)));
            // Among equal numbers, a NaN first in every block: the numbers share the draw evenly.
            std::vector<float> flat(512, 1.0f);
            for (int b = 0; b < 512; b += 8) flat[size_t(b)] = NAN;
            std::map<int, int> count;
            for (int32_t id : draw_many(*ops, flat, SampleParams{1.0f, 0, 1.0f, 0.0f, 0.0f}, grid(448))) {
                QVERIFY2(id >= 0 && id < 512 && id % 8 != 0, qPrintable(QString("drew %1").arg(id)));
                ++count[id];
            }
            QCOMPARE(int(count.size()), 448);
        }
        // A row of NaN alone: every rule still answers a token of the row.
        const std::vector<float> all_nan(1000, NAN);
        for (SampleParams sp :
             {SampleParams{0.0f, 0, 1.0f, 0.0f, 0.0f}, SampleParams{1.0f, 0, 1.0f, 0.0f, 0.0f},
              SampleParams{0.7f, 0, 0.9f, 0.0f, 0.0f}, SampleParams{1.0f, 40, 1.0f, 0.0f, 0.0f},
              SampleParams{1.0f, 0, 1.0f, 0.05f, 0.0f}})
            for (int32_t id : draw_many(*ops, all_nan, sp, {0.0f, 0.5f, 0.999f}))
                QVERIFY2(id >= 0 && id < 1000, qPrintable(QString("drew %1").arg(id)));
    }

    void handComputedDistributions() {
        auto ops = make_cpu_ops(2);
        const std::vector<float> logits = {std::log(0.1f), std::log(0.4f), std::log(0.2f), std::log(0.3f)};
        auto sp = [](float temp, int k, float p, float minp) { return SampleParams{temp, k, p, minp, 0.0f}; };
        check_grid(*ops, logits, sp(1.0f, 0, 1.0f, 0.0f), {{0, 0.1}, {1, 0.4}, {2, 0.2}, {3, 0.3}});
        check_grid(*ops, logits, sp(1.0f, 0, 0.6f, 0.0f), {{1, 4.0 / 7}, {3, 3.0 / 7}});
        check_grid(*ops, logits, sp(1.0f, 3, 1.0f, 0.0f), {{1, 4.0 / 9}, {3, 3.0 / 9}, {2, 2.0 / 9}});
        // top_p over the probabilities renormalised after top_k: 4/9 + 3/9 >= 0.75.
        check_grid(*ops, logits, sp(1.0f, 3, 0.75f, 0.0f), {{1, 4.0 / 7}, {3, 3.0 / 7}});
        check_grid(*ops, logits, sp(1.0f, 0, 1.0f, 0.6f), {{1, 4.0 / 7}, {3, 3.0 / 7}});
        check_grid(*ops, logits, sp(1.0f, 0, 1.0f, 0.45f), {{1, 4.0 / 9}, {3, 3.0 / 9}, {2, 2.0 / 9}});
        const double z = std::sqrt(0.1) + std::sqrt(0.4) + std::sqrt(0.2) + std::sqrt(0.3);
        check_grid(*ops, logits, sp(2.0f, 0, 1.0f, 0.0f),
                   {{0, std::sqrt(0.1) / z},
                    {1, std::sqrt(0.4) / z},
                    {2, std::sqrt(0.2) / z},
                    {3, std::sqrt(0.3) / z}});
        // The inverse CDF runs over tokens in descending probability.
        const auto ids = draw_many(*ops, logits, sp(1.0f, 0, 1.0f, 0.0f),
                                   {0.0f, 0.39f, 0.41f, 0.69f, 0.71f, 0.89f, 0.95f});
        QCOMPARE(ids, (std::vector<int32_t>{1, 1, 3, 3, 2, 2, 0}));
    }

    void randomVocabularyStatistically() {
        std::mt19937 rng(901);
        auto ops = make_cpu_ops(2);
        const int vocab = 50;
        const auto logits = random_vector(rng, vocab, -3.0f, 3.0f);
        const SampleParams sp{0.8f, 20, 0.9f, 0.05f, 0.0f};
        // Expected: softmax(l / T); the 20 most likely; the smallest prefix reaching 0.9 of their
        // mass; then those at least 0.05 of the most likely; renormalised.
        std::vector<double> p(vocab);
        double z = 0.0;
        for (int i = 0; i < vocab; ++i) z += p[i] = std::exp(logits[i] / 0.8);
        std::vector<int> order(vocab);
        std::iota(order.begin(), order.end(), 0);
        std::sort(order.begin(), order.end(), [&](int a, int b) { return p[a] > p[b]; });
        order.resize(20);
        double mass = 0.0;
        for (int id : order) mass += p[id];
        size_t keep = 0;
        for (double cum = 0.0; keep < order.size() && cum < 0.9 * mass;) cum += p[order[keep++]];
        order.resize(keep);
        order.erase(
            std::remove_if(order.begin(), order.end(), [&](int id) { return p[id] < 0.05 * p[order[0]]; }),
            order.end());
        QVERIFY(order.size() >= 3);
        double kept = 0.0;
        for (int id : order) kept += p[id];

        const int n = 40000;
        std::uniform_real_distribution<float> unif(0.0f, 1.0f);
        std::vector<float> u(n);
        for (float& x : u) x = unif(rng);
        std::vector<int> count(vocab, 0);
        for (int32_t id : draw_many(*ops, logits, sp, u)) ++count[id];
        int drawn_outside = 0;
        for (int id = 0; id < vocab; ++id)
            if (std::find(order.begin(), order.end(), id) == order.end()) drawn_outside += count[id];
        QCOMPARE(drawn_outside, 0);
        for (int id : order) {
            const double want = p[id] / kept;
            const double sigma = std::sqrt(want * (1 - want) / n);
            QVERIFY2(std::abs(count[id] / double(n) - want) < 5 * sigma + 1e-9,
                     qPrintable(QString("id %1: %2 vs %3").arg(id).arg(count[id] / double(n)).arg(want)));
        }
    }

    // The rule's probabilities are exp((logit - max) / T) to 2e-7 down to 2^-125 (0 below
    // 2^-125.5), computed by element whatever the length or the offset of the row.
    void weightsMatchExp() {
        std::mt19937 rng(903);
        for (const float temperature : {0.05f, 0.7f, 1.0f, 1.3f, 3.0f}) {
            const int n = 4 * 1024 + 37;  // a short last block
            auto logits = random_vector(rng, n, -95.0f * temperature, 0.0f);
            logits[5] = 0.0f;
            logits[6] = -INFINITY;
            std::vector<float> w(n), tail(n - 3);
            sample_weights(logits.data(), n, 0.0f, temperature, w.data());
            sample_weights(logits.data() + 3, n - 3, 0.0f, temperature, tail.data());
            QVERIFY(w[5] == 1.0f && w[6] == 0.0f);
            QVERIFY(std::equal(tail.begin(), tail.end(), w.begin() + 3));
            double worst = 0.0;
            for (int i = 0; i < n; ++i) {
                const double t = double(logits[i]) / temperature / std::log(2.0);
                if (t < -125.5 - 1e-6) QVERIFY(w[i] == 0.0f);
                if (t < -125.0 || std::isinf(logits[i])) continue;
                const double want = std::exp(double(logits[i]) / temperature);
                worst = std::max(worst, std::abs(w[i] - want) / want);
            }
            QVERIFY2(worst < 2e-7,
                     qPrintable(QString("T %1: relative error %2").arg(temperature).arg(worst)));
        }
    }

    // The host side of a GPU's op hands over (logit, id) pairs: the whole row in order, or a
    // superset of its top_k in any order. Either draws what the CPU op draws from the row.
    void pairCandidatesDrawAsTheRow() {
        std::mt19937 rng(904);
        auto ops = make_cpu_ops(2);
        const int vocab = 50000;
        auto logits = random_vector(rng, vocab, -6.0f, 6.0f);
        std::vector<std::pair<float, int32_t>> row(vocab);
        for (int i = 0; i < vocab; ++i) row[i] = {logits[i], i};
        auto by_logit = row;
        std::sort(by_logit.begin(), by_logit.end(),
                  [](const auto& a, const auto& b) { return a.first > b.first; });
        std::vector<std::pair<float, int32_t>> top(by_logit.begin(), by_logit.begin() + 2048);
        std::shuffle(top.begin(), top.end(), rng);
        std::uniform_real_distribution<float> unif(0.0f, 1.0f);
        for (const SampleParams sp :
             {SampleParams{0.8f, 0, 1.0f, 0.0f, 0.0f}, SampleParams{0.7f, 0, 0.9f, 0.0f, 0.0f},
              SampleParams{1.0f, 0, 0.95f, 0.05f, 0.0f}, SampleParams{0.8f, 40, 1.0f, 0.0f, 0.0f},
              SampleParams{1.2f, 1000, 0.8f, 0.0f, 0.0f}})
            for (int j = 0; j < 16; ++j) {
                SampleParams s = sp;
                s.uniform = unif(rng);
                const int32_t want = draw_many(*ops, logits, s, {s.uniform})[0];
                QCOMPARE(draw_token(row, s), want);
                if (s.top_k > 0) QCOMPARE(draw_token(top, s), want);
            }
    }

    // top_k's candidates are the first k of the whole row sorted (descending logit, ties lower id,
    // NaN below every number): rows of many sizes, k from 1 to the whole row, thousands of ties
    // at the threshold, -0 and +0, infinities, NaNs, long runs of NaN or -inf, a row of one
    // value. The op draws from them.
    void topKCandidatesAsAFullSort() {
        std::mt19937 rng(905);
        auto ops = make_cpu_ops(2);
        std::normal_distribution<float> noise(0.0f, 2.0f);
        std::uniform_real_distribution<float> unif(0.0f, 1.0f);
        enum Shape { kPeaked, kTies, kSigns, kInfinities, kNaNs, kMasked, kOneValue, kShapes };
        int compared = 0;
        for (const int n : {1, 5, 64, 65, 1000, 4097, 60000, 248320})
            for (int shape = 0; shape < kShapes; ++shape) {
                std::uniform_int_distribution<int> token(0, n - 1);
                std::vector<float> row(size_t(n), 1.5f);
                if (shape != kOneValue)
                    for (float& x : row) x = noise(rng);
                if (shape == kPeaked)
                    for (int j = 0; j < 16; ++j) row[size_t(token(rng))] += 16.0f - 0.5f * j;
                if (shape == kTies)
                    for (float& x : row) x = std::round(x);  // integers, -0 among them
                if (shape == kSigns)
                    for (float& x : row) x = x < -1.0f ? -1.0f : x < 0.0f ? -0.0f : x < 1.0f ? 0.0f : 1.0f;
                if (shape == kInfinities) {
                    for (float& x : row)
                        if (unif(rng) < 0.995f) x = -INFINITY;  // fewer numbers than some k
                    row[size_t(token(rng))] = INFINITY;
                }
                if (shape == kNaNs)
                    for (float& x : row) {
                        const float u = unif(rng);
                        x = u < 0.1f ? NAN : u < 0.2f ? -NAN : u < 0.25f ? -INFINITY : x;
                    }
                if (shape == kMasked)  // runs of NaN and of -inf, some long, and a few numbers
                    for (size_t i = 0; i < row.size();) {
                        const float u = unif(rng), x = u < 0.4f ? NAN : u < 0.8f ? -INFINITY : row[i];
                        const size_t run = u < 0.8f ? 1 + size_t(unif(rng) * 300) : 1;
                        for (size_t j = i; j < std::min(row.size(), i + run); ++j) row[j] = x;
                        i += run;
                    }
                std::vector<int32_t> order(static_cast<size_t>(n));
                std::iota(order.begin(), order.end(), 0);
                std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
                    const float x = row[size_t(a)], y = row[size_t(b)];
                    if (std::isnan(x) || std::isnan(y))
                        return std::isnan(x) == std::isnan(y) ? a < b : std::isnan(y);
                    return x > y || (x == y && a < b);
                });
                for (const int k : {1, 2, 40, 63, 64, 65, 1000, 2048, n / 2, n - 1, n}) {
                    if (k < 1 || k > n) continue;
                    std::vector<int32_t> want(order.begin(), order.begin() + k);
                    std::sort(want.begin(), want.end());
                    std::vector<float> logits;
                    std::vector<int32_t> ids;
                    top_k_candidates(row.data(), n, k, logits, ids);
                    QVERIFY2(ids == want,
                             qPrintable(QString("n %1, shape %2, k %3").arg(n).arg(shape).arg(k)));
                    for (size_t i = 0; i < ids.size(); ++i)
                        QVERIFY(std::memcmp(&logits[i], &row[size_t(ids[i])], sizeof(float)) == 0);
                    ++compared;
                    if (k >= n || (k != 40 && k != 2048)) continue;
                    // The op's draw is the rule's over the same candidates.
                    std::vector<std::pair<float, int32_t>> pairs;
                    for (int32_t id : want) pairs.emplace_back(row[size_t(id)], id);
                    const SampleParams sp{1.0f, k, 1.0f, 0.0f, 0.0f};
                    const std::vector<float> u = {0.0f, unif(rng), unif(rng), 0.999999f};
                    const auto got = draw_many(*ops, row, sp, u);
                    for (size_t j = 0; j < u.size(); ++j) {
                        SampleParams s = sp;
                        s.uniform = u[j];
                        QCOMPARE(got[j], draw_token(pairs, s));
                    }
                }
            }
        QCOMPARE(compared, 469);  // 67 (n, k) a shape, some k twice
    }

    // Large rows (what top_p or the draw can reach binned out before any sorting) draw exactly
    // what the rule gives with the whole row sorted: peaked and flat rows, near-tied logits,
    // top_p alone and with min_p or a top_k that cuts nothing, no filter, uniforms across [0, 1);
    // many rows a call (a row a thread) and one (its candidates split over the threads).
    void largeRowsDrawAsAFullSort() {
        std::mt19937 rng(902);
        auto ops = make_cpu_ops(2), ops4 = make_cpu_ops(4);
        const int vocab = 60000;
        std::normal_distribution<float> noise(0.0f, 2.0f);
        std::uniform_int_distribution<int> token(0, vocab - 1);
        std::uniform_real_distribution<float> unif(0.0f, 1.0f);
        struct Row {
            float temperature, top_p, min_p;
            int top_k;
            bool peaked, ties;
        };
        int compared = 0;
        for (const Row row : {Row{0.7f, 0.9f, 0.0f, 0, true, false}, Row{1.0f, 0.95f, 0.0f, 0, false, false},
                              Row{1.3f, 0.999f, 0.0f, 0, false, true}, Row{0.8f, 0.5f, 0.02f, 0, true, true},
                              Row{1.0f, 0.8f, 0.0f, vocab + 5, false, false},
                              Row{1.0f, 1.0f, 0.0f, 0, true, false}, Row{0.9f, 1.0f, 0.0f, 0, false, true}}) {
            std::vector<float> logits(vocab);
            for (float& x : logits) x = noise(rng);
            if (row.peaked)
                for (int j = 0; j < 16; ++j) logits[size_t(token(rng))] += 7.0f - 0.25f * j;
            if (row.ties)
                for (float& x : logits) x = std::round(x * 8.0f) / 8.0f;  // many equal logits
            // The rule with every token sorted (sample_draw.h): its probabilities, sums in double.
            const float max_logit = *std::max_element(logits.begin(), logits.end());
            std::vector<float> w(vocab);
            sample_weights(logits.data(), vocab, max_logit, row.temperature, w.data());
            std::vector<std::pair<double, int>> p(vocab);
            double total = 0.0;
            for (int i = 0; i < vocab; ++i) {
                p[i] = {w[i], i};
                total += p[i].first;
            }
            std::sort(p.begin(), p.end(), [](const auto& a, const auto& b) {
                return a.first > b.first || (a.first == b.first && a.second < b.second);
            });
            size_t kept = p.size();
            if (row.top_p < 1.0f) {
                kept = 0;
                for (double cum = 0.0; kept < p.size();) {
                    cum += p[kept++].first / total;
                    if (cum >= row.top_p) break;
                }
            }
            if (row.min_p > 0.0f) {
                size_t m = 1;
                while (m < kept && p[m].first >= row.min_p * p[0].first) ++m;
                kept = m;
            }
            double mass = 0.0;
            for (size_t i = 0; i < kept; ++i) mass += p[i].first;
            std::vector<float> u(64);
            for (float& x : u) x = unif(rng);
            u[0] = 0.0f;
            u[1] = 0.999999f;
            const SampleParams sp{row.temperature, row.top_k, row.top_p, row.min_p, 0.0f};
            const auto got = draw_many(*ops, logits, sp, u);
            // One row at a time on four threads: its pass over the candidates split between them.
            std::vector<int32_t> alone;
            for (size_t j = 0; j < 8; ++j) alone.push_back(draw_many(*ops4, logits, sp, {u[j]})[0]);
            for (size_t j = 0; j < u.size(); ++j) {
                const double target = double(u[j]) * mass;
                double cum = 0.0;
                int want = p[kept - 1].second;
                for (size_t i = 0; i < kept; ++i)
                    if (target < (cum += p[i].first)) {
                        want = p[i].second;
                        break;
                    }
                QCOMPARE(got[j], want);
                if (j < alone.size()) QCOMPARE(alone[j], want);
                ++compared;
            }
            qInfo("T %.2f top_p %.3f min_p %.2f: nucleus of %zu tokens", row.temperature, row.top_p,
                  row.min_p, kept);
        }
        QCOMPARE(compared, 7 * 64);
    }
    // A row reduced (top_logits_row on vocabulary slices, merged as ranks or segments are) draws
    // what the CPU op draws from the whole row, or says it needs the row (-1): a peaked row never
    // does under a filter, a flat row with a wide nucleus always does. The merged mass is the
    // whole row's within rounding; the ops' default reduces as top_logits_row does.
    void reducedRowsDrawAsTheRow() {
        std::mt19937 rng(906);
        auto ops = make_cpu_ops(2);
        const int vocab = 40000;
        std::normal_distribution<float> noise(0.0f, 2.0f);
        std::uniform_int_distribution<int> token(0, vocab - 1);
        std::uniform_real_distribution<float> unif(0.0f, 1.0f);
        const std::vector<SampleParams> settings = {
            {0.0f, 0, 1.0f, 0.0f, 0.0f},   {1.0f, 1, 1.0f, 0.0f, 0.0f},  {0.7f, 0, 0.9f, 0.0f, 0.0f},
            {1.0f, 0, 1.0f, 0.0f, 0.0f},   {0.8f, 40, 1.0f, 0.0f, 0.0f}, {1.0f, 20, 0.95f, 0.0f, 0.0f},
            {1.0f, 0, 1.0f, 0.05f, 0.0f},  {0.9f, 0, 0.8f, 0.02f, 0.0f}, {1.0f, 1024, 0.9f, 0.0f, 0.0f},
            {1.0f, 2000, 0.9f, 0.0f, 0.0f}};
        int reduced = 0, whole = 0;
        for (const bool peaked : {true, false})
            for (const int parts : {1, 2, 3}) {
                std::vector<float> logits(vocab);
                for (float& x : logits) x = noise(rng);
                if (peaked)
                    for (int j = 0; j < 16; ++j) logits[size_t(token(rng))] += 20.0f - 0.5f * j;
                logits[size_t(token(rng))] = NAN;
                for (const SampleParams& base : settings) {
                    const TopAsk ask = top_ask(base);
                    std::vector<TopLogits> slices(static_cast<size_t>(parts));
                    std::vector<int32_t> offsets(static_cast<size_t>(parts));
                    for (int i = 0; i < parts; ++i) {
                        const int b = vocab * i / parts, e = vocab * (i + 1) / parts;
                        offsets[size_t(i)] = b;
                        top_logits_row(logits.data() + b, e - b, ask, slices[size_t(i)]);
                    }
                    const TopLogits top = merge_top_logits(slices, offsets, ask.temperature);
                    QCOMPARE(top.size, int64_t(vocab));
                    if (ask.temperature > 0.0f) {
                        TopLogits one;
                        top_logits_row(logits.data(), vocab, ask, one);
                        QVERIFY(std::abs(top.mass - one.mass) <= 1e-6 * one.mass);
                    }
                    for (int j = 0; j < 24; ++j) {
                        SampleParams sp = base;
                        sp.uniform = j == 0 ? 0.0f : j == 1 ? 0.999999f : unif(rng);
                        const int32_t want = draw_many(*ops, logits, sp, {sp.uniform})[0];
                        const int32_t got = draw_from_top(top, sp);
                        if (got < 0) {
                            ++whole;
                            // An unfiltered draw reaches the tail with its uniform (u near 1); a
                            // top_k above the ask's needs its whole mass.
                            const bool filtered = sp.top_k <= kMaxTopAsk &&
                                                  (sp.top_k > 0 || sp.top_p < 1.0f || sp.min_p > 0.0f);
                            const bool may_need_row = !peaked || !filtered;
                            QVERIFY2(may_need_row, qPrintable(QString("peaked row, T %1 top_k %2 top_p %3 "
                                                                      "min_p %4: the reduction fell short")
                                                                  .arg(sp.temperature)
                                                                  .arg(sp.top_k)
                                                                  .arg(sp.top_p)
                                                                  .arg(sp.min_p)));
                            continue;
                        }
                        ++reduced;
                        QVERIFY2(got == want,
                                 qPrintable(QString("%1 parts, T %2 top_k %3 top_p %4 min_p %5 u %6: "
                                                    "%7 vs %8")
                                                .arg(parts)
                                                .arg(sp.temperature)
                                                .arg(sp.top_k)
                                                .arg(sp.top_p)
                                                .arg(sp.min_p)
                                                .arg(sp.uniform)
                                                .arg(got)
                                                .arg(want)));
                    }
                }
                // A flat row's nucleus at T 0.7, top_p 0.9 is thousands of tokens: never reduced.
                if (!peaked) {
                    const TopAsk ask = top_ask(settings[2]);
                    TopLogits top;
                    top_logits_row(logits.data(), vocab, ask, top);
                    QCOMPARE(draw_from_top(top, settings[2]), -1);
                }
            }
        qInfo("%d draws from reductions, %d needed the row", reduced, whole);
        QVERIFY(reduced > 600 && whole > 50);

        // The ops' default: the same reductions, row by row.
        HostTensor t(3, 5000, 5003);
        for (int64_t r = 0; r < 3; ++r)
            for (int64_t i = 0; i < 5000; ++i) t.at(r, i) = noise(rng);
        const TopAsk asks[3] = {{1, 0.0f}, {40, 0.8f}, {5000, 1.0f}};
        TopLogits got[3];
        ops->top_logits(t.t, asks, got);
        for (int64_t r = 0; r < 3; ++r) {
            TopLogits want;
            top_logits_row(&t.at(r, 0), 5000, asks[r], want);
            QCOMPARE(got[r].ids, want.ids);
            QCOMPARE(got[r].logits, want.logits);
            QCOMPARE(got[r].mass, want.mass);
            QCOMPARE(got[r].floor, want.floor);
        }
        QCOMPARE(got[0].ids.size(), size_t(1));
        QCOMPARE(got[1].ids.size(), size_t(40));
        QCOMPARE(got[2].floor, -INFINITY);
    }
};

QTEST_APPLESS_MAIN(TestSample)
#include "test_sample.moc"
