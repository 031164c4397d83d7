// Helpers for the CPU kernel tests: seeded random host tensors (the CPU backend's memory is
// host memory) and an fp16 decoder written from the IEEE definition, independent of formats.cpp.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/ops.h"

namespace niwa::kernels::test {

// A float matrix in a vector, with a Tensor over it; rows `ld` apart.
struct HostTensor {
    std::vector<float> buf;
    Tensor t;

    HostTensor(int64_t rows, int64_t cols, int64_t ld)
        : buf(static_cast<size_t>(rows * ld), 0.0f), t{nullptr, DType::F32, rows, cols, ld} {
        t.data = buf.data();
    }
    float& at(int64_t r, int64_t c) { return buf[static_cast<size_t>(r * t.ld + c)]; }
    float at(int64_t r, int64_t c) const { return buf[static_cast<size_t>(r * t.ld + c)]; }
};

// Every element (padding too, so a kernel that reads past cols is caught) uniform in [lo, hi).
inline HostTensor random_tensor(std::mt19937& rng, int64_t rows, int64_t cols, int64_t ld, float lo = -1.0f,
                                float hi = 1.0f) {
    HostTensor h(rows, cols, ld);
    std::uniform_real_distribution<float> dist(lo, hi);
    for (float& x : h.buf) x = dist(rng);
    return h;
}

inline std::vector<float> random_vector(std::mt19937& rng, size_t n, float lo = -1.0f, float hi = 1.0f) {
    std::vector<float> v(n);
    std::uniform_real_distribution<float> dist(lo, hi);
    for (float& x : v) x = dist(rng);
    return v;
}

// IEEE binary16: sign, 5-bit exponent (bias 15), 10-bit fraction.
inline double half_value(uint16_t h) {
    const int sign = (h & 0x8000) ? -1 : 1;
    const int exp = (h >> 10) & 0x1f;
    const int frac = h & 0x3ff;
    if (exp == 0) return sign * std::ldexp(static_cast<double>(frac), -24);
    if (exp == 31) return frac == 0 ? sign * INFINITY : NAN;
    return sign * std::ldexp(static_cast<double>(frac + 1024), exp - 25);
}

// Trit n of a PTQ1_0 byte, from MODEL.md's formula.
inline int ptq1_trit(uint8_t b, int n) {
    int p = 1;
    for (int i = 0; i < n; ++i) p *= 3;
    return (static_cast<uint8_t>(b * p) * 3) >> 8;
}

// A row of `n` elements of a weight type, decoded from MODEL.md's bit layouts in double.
inline std::vector<double> ref_dequantize(DType t, const uint8_t* p, int64_t n) {
    std::vector<double> out(static_cast<size_t>(n));
    auto u16 = [](const uint8_t* b) { return static_cast<uint16_t>(b[0] | b[1] << 8); };
    for (int64_t i = 0; i < n; ++i) {
        switch (t) {
            case DType::F32: {
                float f;
                std::memcpy(&f, p + 4 * i, 4);
                out[i] = f;
                break;
            }
            case DType::F16:
                out[i] = half_value(u16(p + 2 * i));
                break;
            case DType::BF16: {
                const uint32_t bits = static_cast<uint32_t>(u16(p + 2 * i)) << 16;
                float f;
                std::memcpy(&f, &bits, 4);
                out[i] = f;
                break;
            }
            case DType::Q8_0: {
                const uint8_t* blk = p + (i / 32) * 34;
                out[i] = half_value(u16(blk)) * static_cast<int8_t>(blk[2 + i % 32]);
                break;
            }
            case DType::PQ2_0: {
                const uint8_t* blk = p + (i / 128) * 34;
                const int j = static_cast<int>(i % 128);
                out[i] = (((blk[2 + j / 4] >> (2 * (j % 4))) & 3) - 1) * half_value(u16(blk));
                break;
            }
            case DType::PTQ1_0: {
                const uint8_t* blk = p + (i / 128) * 28;
                const int j = static_cast<int>(i % 128);
                int trit;
                if (j < 80)
                    trit = ptq1_trit(blk[j % 16], j / 16);
                else if (j < 120)
                    trit = ptq1_trit(blk[16 + (j - 80) % 8], (j - 80) / 8);
                else
                    trit = ptq1_trit(blk[24 + (j - 120) % 2], (j - 120) / 2);
                out[i] = (trit - 1) * half_value(u16(blk + 26));
                break;
            }
            default:
                out[i] = NAN;
        }
    }
    return out;
}

// StepInfo::slots, set where Qt's `slots` macro is not yet defined (include this file first).
inline void set_kv_slots(StepInfo& step, const int32_t* kv_slots) {
    step.kv_slots = kv_slots;
}

// Largest |a - b| over the largest |b|: one relative error for a whole output.
inline double relative_error(const std::vector<double>& a, const std::vector<double>& b) {
    double diff = 0.0, scale = 1e-30;
    for (size_t i = 0; i < a.size(); ++i) {
        diff = std::max(diff, std::abs(a[i] - b[i]));
        scale = std::max(scale, std::abs(b[i]));
    }
    return diff / scale;
}

}  // namespace niwa::kernels::test
