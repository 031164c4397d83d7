#include "engine/model/synthetic_weights.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "engine/model/synthetic_rng.h"
#include "kernels/formats.h"

namespace niwa::model {

namespace {

constexpr int64_t kRowsPerChunk = 16;
// Below this many elements a tensor is generated on the caller's thread (spawning costs more).
constexpr int64_t kParallelMinElements = int64_t(1) << 20;
// Stream tags that cannot collide with tensor indices.
constexpr uint64_t kSignsTag = 0xFFFFFFFF00000001ull;

constexpr int64_t q24(double v) {
    return int64_t(v * 16777216.0);
}  // exact for the constants used

bool ends_with(const std::string& s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Byte b < 243 read as five base-3 digits; each byte of randomness gives 5 uniform trits
// (bytes >= 243 are skipped, which keeps the trits exactly uniform). 8 entries per row so
// a fixed-size copy moves them.
struct TritTable {
    std::array<std::array<int8_t, 8>, 256> trits{};
    std::array<uint8_t, 256> count{};

    TritTable() {
        for (int b = 0; b < 243; ++b) {
            int v = b;
            for (int n = 0; n < 5; ++n, v /= 3) trits[size_t(b)][size_t(n)] = int8_t(v % 3 - 1);
            count[size_t(b)] = 5;
        }
    }
};

const TritTable& trit_table() {
    static const TritTable table;
    return table;
}

constexpr int64_t kTritSlack = 64;  // draw_trits may write this far past n

void draw_trits(SplitMix64& rng, int8_t* out, int64_t n) {
    const TritTable& t = trit_table();
    int64_t i = 0;
    while (i < n) {
        uint64_t x = rng.next();
        for (int k = 0; k < 8; ++k, x >>= 8) {
            const auto b = size_t(x & 0xff);
            std::memcpy(out + i, t.trits[b].data(), 8);
            i += t.count[b];
        }
    }
}

// Per-128-block scale of a ternary tensor before the random factor u in [0.75, 1.25]:
// sqrt(1.5 / in) keeps y = W x at the magnitude of x (E[t^2] = 2/3, E[u^2] ~ 1);
// output.weight is 4x larger so logits spread over a few units; the embedding's rows are
// looked up, not multiplied, so 0.75 gives its elements an RMS of ~0.6.
double ternary_base_scale(const TensorSpec& spec) {
    if (spec.name == "token_embd.weight") return 0.75;
    const double base = std::sqrt(1.5 / double(spec.ne[0]));
    return spec.name == "output.weight" ? 4 * base : base;
}

void fill_ternary(const TensorSpec& spec, gguf::TensorType type, uint64_t seed, uint64_t index,
                  std::span<uint8_t> out, int threads) {
    const int64_t in = spec.ne[0];
    const int64_t rows = spec.ne.size() > 1 ? spec.ne[1] : 1;
    const uint64_t row_bytes = gguf::row_bytes(type, in);
    const double base = ternary_base_scale(spec);
    const auto dtype = static_cast<kernels::DType>(type);

    std::atomic<int64_t> next_chunk{0};
    auto work = [&] {
        std::vector<int8_t> trits(size_t(in + kTritSlack));
        std::vector<float> scales(size_t(in / kernels::kQuantBlock));
        for (;;) {
            const int64_t r0 = next_chunk.fetch_add(kRowsPerChunk);
            if (r0 >= rows) return;
            for (int64_t r = r0; r < std::min(rows, r0 + kRowsPerChunk); ++r) {
                SplitMix64 rng(derive_seed(seed, index, uint64_t(r)));
                for (float& d : scales) d = float(base * rng.grid(q24(0.75), q24(1.25)));
                draw_trits(rng, trits.data(), in);
                kernels::pack_ternary_row(dtype, trits.data(), scales.data(),
                                          out.data() + uint64_t(r) * row_bytes, in);
            }
        }
    };
    const int64_t n_threads = in * rows < kParallelMinElements ? 1 : std::max(1, threads);
    std::vector<std::thread> pool;
    for (int64_t t = 1; t < n_threads; ++t) pool.emplace_back(work);
    work();
    for (std::thread& t : pool) t.join();
}

// One value of a non-ternary tensor, computed exactly in double from integers and rounded
// once to float: every platform rounds an exact value the same way.
double plain_value(const TensorSpec& spec, SplitMix64& rng) {
    switch (spec.kind) {
        case TensorKind::Norm:  // 1 + w for the (1 + w)-stored norms; plain w for ssm_norm: same range
            return rng.grid(q24(0.9), q24(1.1));
        case TensorKind::Dense:  // ssm_alpha / ssm_beta: uniform [-1, 1] * sqrt(3 / in)
            return rng.grid(-q24(1), q24(1)) * std::sqrt(3.0 / double(spec.ne[0]));
        case TensorKind::F32:
            if (ends_with(spec.name, "ssm_a"))
                return -(1 + 15 * rng.grid(0, q24(1)));  // -exp(A_log), in [-16, -1]
            return rng.grid(-q24(0.5), q24(0.5));        // ssm_dt.bias, ssm_conv1d
        case TensorKind::Ternary:
            break;
    }
    throw std::logic_error("plain_value: " + spec.name + " is ternary");
}

void fill_plain(const TensorSpec& spec, gguf::TensorType type, uint64_t seed, uint64_t index,
                std::span<uint8_t> out) {
    const int64_t in = spec.ne[0];
    const int64_t rows = spec.ne.size() > 1 ? spec.ne[1] : 1;
    const uint64_t elem_bytes = gguf::row_bytes(type, 1);
    for (int64_t r = 0; r < rows; ++r) {
        SplitMix64 rng(derive_seed(seed, index, uint64_t(r)));
        uint8_t* dst = out.data() + uint64_t(r) * uint64_t(in) * elem_bytes;
        for (int64_t i = 0; i < in; ++i, dst += elem_bytes) {
            const auto v = float(plain_value(spec, rng));
            uint16_t h = 0;
            switch (type) {
                case gguf::TensorType::F32:
                    std::memcpy(dst, &v, 4);
                    continue;
                case gguf::TensorType::BF16:
                    h = kernels::f32_to_bf16(v);
                    break;
                case gguf::TensorType::F16:
                    h = kernels::f32_to_fp16(v);
                    break;
                default:
                    throw std::invalid_argument("mkmodel cannot write " + spec.name + " as " +
                                                std::string(gguf::to_string(type)));
            }
            std::memcpy(dst, &h, 2);
        }
    }
}

}  // namespace

void fill_synthetic_tensor(const TensorSpec& spec, gguf::TensorType type, uint64_t seed, uint64_t index,
                           std::span<uint8_t> out, int threads) {
    if (spec.kind == TensorKind::Ternary)
        fill_ternary(spec, type, seed, index, out, threads);
    else
        fill_plain(spec, type, seed, index, out);
}

std::vector<float> synthetic_signs(uint64_t seed, int64_t width) {
    SplitMix64 rng(derive_seed(seed, kSignsTag, uint64_t(width)));
    std::vector<float> s(static_cast<size_t>(width));
    for (float& v : s) v = (rng.next() >> 63) ? -1.0f : 1.0f;
    return s;
}

}  // namespace niwa::model
