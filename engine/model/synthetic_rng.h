// The pseudo-random numbers behind mkmodel: splitmix64 and value helpers that use integer
// arithmetic only, so a seed yields the same bytes on every platform and compiler.
#pragma once

#include <cstdint>

namespace niwa::model {

// splitmix64 (Steele, Lea, Flood 2014): one 64-bit state, a full-period counter passed
// through a strong mixer; cheap next to packing (a few billion trits a second per core).
class SplitMix64 {
public:
    explicit SplitMix64(uint64_t seed) : state_(seed) {}

    uint64_t next() {
        state_ += 0x9E3779B97F4A7C15ull;
        return mix(state_);
    }

    // Uniform in [lo, hi] on the grid of 2^-24: lo, hi are multiples of 2^-24 given as
    // integers, so the value is an exact double and rounds to float the same way anywhere.
    double grid(int64_t lo_q24, int64_t hi_q24) {
        const uint64_t span = uint64_t(hi_q24 - lo_q24) + 1;
        const uint64_t k = uint64_t((static_cast<unsigned __int128>(next()) * span) >> 64);
        return double(lo_q24 + int64_t(k)) * 0x1p-24;
    }

    static uint64_t mix(uint64_t z) {
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }

private:
    uint64_t state_;
};

// A seed for one stream, derived from the model seed and a path of indices (tensor and row,
// or a tag and width). Each step mixes, so nearby paths give unrelated streams and the bytes of a
// row do not depend on which thread generated it.
inline uint64_t derive_seed(uint64_t seed, uint64_t a, uint64_t b = 0) {
    uint64_t z = SplitMix64::mix(seed ^ 0x6E6977612D6D6B6Dull);  // "niwa-mkm"
    z = SplitMix64::mix(z + 0x9E3779B97F4A7C15ull * (a + 1));
    return SplitMix64::mix(z + 0xD1B54A32D192ED03ull * (b + 1));
}

}  // namespace niwa::model
