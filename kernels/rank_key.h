// The logits' order as an unsigned key, for the host's draws (kernels/sample_draw.cpp) and the
// GPU's reductions (kernels/cuda/sample.cu), which must rank every logit alike: key(a) > key(b)
// exactly when a > b, -0 and +0 the same key, every NaN the lowest (0, below -inf). It is 2^31
// plus or minus the magnitude's bits, in integer operations only: the passes that take it branch
// on no data.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/formats.h"

namespace niwa::kernels {

NIWA_HOST_DEVICE inline uint32_t rank_key(float x) {
#ifdef __CUDA_ARCH__
    const int32_t bits = __float_as_int(x);
#else
    int32_t bits;
    std::memcpy(&bits, &x, sizeof bits);
#endif
    const int32_t magnitude = bits & 0x7fffffff, sign = bits >> 31;
    const uint32_t key = 0x80000000u + static_cast<uint32_t>((magnitude ^ sign) - sign);
    const uint32_t number = magnitude <= 0x7f800000 ? ~0u : 0u;  // a mask, not a branch
    return key & number;
}

// The number whose key `key` is (rank_key's inverse; +0 for the zeros' key).
NIWA_HOST_DEVICE inline float key_float(uint32_t key) {
    const uint32_t magnitude = key >= 0x80000000u ? key - 0x80000000u : 0x80000000u - key;
    const uint32_t bits = key >= 0x80000000u ? magnitude : (magnitude | 0x80000000u);
#ifdef __CUDA_ARCH__
    return __uint_as_float(bits);
#else
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
#endif
}

}  // namespace niwa::kernels
