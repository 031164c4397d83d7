// Hand-built GGUF bytes for tests: lets a test write what the Writer refuses to (corrupt
// headers, bad types, overlapping tensors) and know each field's byte offset independently
// of the reader under test.
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <span>
#include <string_view>
#include <vector>

namespace niwa::test {

class RawGguf {
public:
    uint64_t pos() const { return bytes.size(); }
    std::span<const uint8_t> span() const { return bytes; }

    template <class T>
    RawGguf& put(T v) {
        const auto* p = reinterpret_cast<const uint8_t*>(&v);
        bytes.insert(bytes.end(), p, p + sizeof v);
        return *this;
    }
    RawGguf& u8(uint8_t v) { return put(v); }
    RawGguf& u32(uint32_t v) { return put(v); }
    RawGguf& i64(int64_t v) { return put(v); }
    RawGguf& u64(uint64_t v) { return put(v); }
    RawGguf& str(std::string_view s) {
        u64(s.size());
        bytes.insert(bytes.end(), s.begin(), s.end());
        return *this;
    }
    RawGguf& header(int64_t n_tensors, int64_t n_kv, uint32_t version = 3) {
        bytes.insert(bytes.end(), {'G', 'G', 'U', 'F'});
        return u32(version).i64(n_tensors).i64(n_kv);
    }
    // Key/value pairs; each returns the key's offset through `at` when given.
    RawGguf& kv_u32(std::string_view key, uint32_t v, uint64_t* at = nullptr) {
        if (at) *at = pos();
        return str(key).u32(4).u32(v);
    }
    RawGguf& kv_str(std::string_view key, std::string_view v, uint64_t* at = nullptr) {
        if (at) *at = pos();
        return str(key).u32(8).str(v);
    }
    RawGguf& tensor_info(std::string_view name, const std::vector<int64_t>& ne, uint32_t type,
                         uint64_t offset, uint64_t* at = nullptr) {
        if (at) *at = pos();
        str(name).u32(static_cast<uint32_t>(ne.size()));
        for (int64_t n : ne) i64(n);
        return u32(type).u64(offset);
    }
    RawGguf& pad(uint64_t alignment) {
        while (pos() % alignment != 0) u8(0);
        return *this;
    }
    RawGguf& random_bytes(uint64_t n, std::mt19937_64& rng) {
        for (uint64_t i = 0; i < n; ++i) u8(static_cast<uint8_t>(rng() | 1));
        return *this;
    }

    std::vector<uint8_t> bytes;
};

}  // namespace niwa::test
