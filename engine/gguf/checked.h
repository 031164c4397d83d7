// Overflow-checked u64 arithmetic for sizes and offsets read from untrusted files.
#pragma once

#include <cstdint>
#include <optional>

namespace niwa::gguf {

inline std::optional<uint64_t> checked_add(uint64_t a, uint64_t b) {
    uint64_t r = 0;
    if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
    return r;
}

inline std::optional<uint64_t> checked_mul(uint64_t a, uint64_t b) {
    uint64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
    return r;
}

// The next multiple of `alignment` (a power of two) at or after `n`.
inline std::optional<uint64_t> align_up(uint64_t n, uint64_t alignment) {
    const auto bumped = checked_add(n, alignment - 1);
    if (!bumped) return std::nullopt;
    return *bumped & ~(alignment - 1);
}

inline bool is_power_of_two(uint64_t n) {
    return n != 0 && (n & (n - 1)) == 0;
}

}  // namespace niwa::gguf
