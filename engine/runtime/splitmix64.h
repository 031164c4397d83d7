// splitmix64 (Steele, Lea, Flood 2014): one 64-bit state, a full-period counter passed
// through a strong mixer. The engine's one small PRNG: mkmodel's weights and the sampler's
// draws both come from it, so results are the same on every platform.
#pragma once

#include <cstdint>

namespace niwa::runtime {

class SplitMix64 {
public:
    explicit SplitMix64(uint64_t seed) : state_(seed) {}

    uint64_t next() { return step(state_); }

    // Advances an external state (e.g. one kept in a request that survives preemption).
    static uint64_t step(uint64_t& state) {
        state += 0x9E3779B97F4A7C15ull;
        return mix(state);
    }

    static uint64_t mix(uint64_t z) {
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }

    // A uniform float in [0, 1) from 24 random bits (exact, so never 1).
    static float uniform24(uint64_t bits) { return float(bits >> 40) * 0x1p-24f; }

protected:
    uint64_t state_;
};

}  // namespace niwa::runtime
