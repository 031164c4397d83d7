// The park/restore scenario of test_park (CPU) and test_cuda_park (GPU): sequence a reads a
// prompt in two parts (the first batched with a neighbour d, so its blocks are not one run),
// then a continuation. With `park`, a is parked after the prompt, another sequence b
// overwrites a's old slot and blocks, and a is restored into other blocks and another slot.
#pragma once

#include <cstring>
#include <random>
#include <vector>

#include "engine/model/sequences.h"

namespace niwa::test {

inline std::vector<int32_t> park_tokens(int n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<int32_t> t(static_cast<size_t>(n));
    for (auto& x : t) x = int32_t(rng() % 1000u);
    return t;
}

inline bool bitwise_equal(const void* a, const void* b, size_t bytes) {
    return std::memcmp(a, b, bytes) == 0;
}

inline bool bitwise_equal(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && bitwise_equal(a.data(), b.data(), a.size() * sizeof(float));
}

struct ParkRun {
    std::vector<float> prompt_logits, next_logits;
    std::vector<int32_t> blocks_before, blocks_after;
    int slot_before = -1, slot_after = -1;
    cache::ParkedSequence parked;    // what park copied out
    cache::ParkedSequence reparked;  // the restored sequence parked again: the same bytes
};

inline ParkRun park_scenario(model::Model& m, bool park) {
    const auto prompt = park_tokens(45, 1), neighbour = park_tokens(20, 2), other = park_tokens(70, 3),
               next = park_tokens(20, 4);
    model::Sequences s(m);
    ParkRun r;
    int a = s.add();
    const int d = s.add();
    s.feed({{a, {prompt.begin(), prompt.begin() + 20}}, {d, neighbour}});
    r.prompt_logits = s.feed({{a, {prompt.begin() + 20, prompt.end()}}})[0];
    r.slot_before = a;
    r.blocks_before = s.blocks(a);
    s.remove(d);
    if (park) r.parked = s.park(a);
    const int b = s.add();
    s.feed({{b, other}});
    if (park) {
        a = s.restore(r.parked);
        r.reparked = m.park(a, s.blocks(a), s.length(a));
    }
    r.slot_after = a;
    r.blocks_after = s.blocks(a);
    r.next_logits = s.feed({{a, next}}, true)[0];
    return r;
}

}  // namespace niwa::test
