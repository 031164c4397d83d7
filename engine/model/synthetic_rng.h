// The pseudo-random numbers behind mkmodel: splitmix64 and value helpers that use integer
// arithmetic only, so a seed yields the same bytes on every platform and compiler.
#pragma once

#include <cstdint>

#include "engine/runtime/splitmix64.h"

namespace niwa::model {

// mkmodel's generator: splitmix64 with a value helper on an exact grid.
class SplitMix64 : public runtime::SplitMix64 {
public:
    using runtime::SplitMix64::SplitMix64;

    // Uniform in [lo, hi] on the grid of 2^-24: lo, hi are multiples of 2^-24 given as
    // integers, so the value is an exact double and rounds to float the same way anywhere.
    double grid(int64_t lo_q24, int64_t hi_q24) {
        const uint64_t span = uint64_t(hi_q24 - lo_q24) + 1;
        const uint64_t k = uint64_t((static_cast<unsigned __int128>(next()) * span) >> 64);
        return double(lo_q24 + int64_t(k)) * 0x1p-24;
    }
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
