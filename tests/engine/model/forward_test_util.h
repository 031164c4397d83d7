// Helpers shared by the whole-model tests (CPU and CUDA): token streams, one prompt's logits,
// and the relative difference of two logit sets.
#pragma once

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "engine/model/sequences.h"

namespace niwa::test {

inline std::vector<int32_t> random_tokens(int n, uint32_t seed, int limit = 1000) {
    std::mt19937 rng(seed);
    std::vector<int32_t> t(static_cast<size_t>(n));
    for (auto& x : t) x = int32_t(rng() % uint32_t(limit));
    return t;
}

// The logits after every token of one prompt fed in one go (chunked by max_step_tokens).
inline std::vector<float> prefill(const std::string& path, const std::vector<int32_t>& tokens,
                                  const model::ModelConfig& c) {
    auto m = model::Model::open(path, c);
    model::Sequences s(*m);
    const int id = s.add();
    return s.feed({{id, tokens}}, true)[0];
}

// max |a - b| / max |b|; infinite when the sizes differ or `a` holds a NaN or infinity.
inline double rel_diff(const std::vector<float>& a, const std::vector<float>& b) {
    if (a.size() != b.size()) return INFINITY;
    double num = 0, den = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        if (!std::isfinite(a[i])) return INFINITY;
        num = std::max(num, std::fabs(double(a[i]) - double(b[i])));
        den = std::max(den, std::fabs(double(b[i])));
    }
    return den > 0 ? num / den : num;
}

}  // namespace niwa::test
