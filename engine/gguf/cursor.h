// A bounds-checked little-endian reader over a byte span. Every read checks the bytes left
// first, so a truncated or lying file becomes a gguf::Error naming what was being read.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "engine/gguf/gguf.h"

namespace niwa::gguf {

static_assert(std::endian::native == std::endian::little, "GGUF is little-endian; so must the host be");

class Cursor {
public:
    Cursor(std::string_view file, std::span<const uint8_t> bytes) : file_(file), bytes_(bytes) {}

    uint64_t pos() const { return pos_; }
    uint64_t size() const { return bytes_.size(); }
    uint64_t remaining() const { return bytes_.size() - pos_; }

    // What is being parsed, for messages: e.g. "key 'general.name'" starting at byte `at`.
    void set_subject(std::string subject, uint64_t at) {
        subject_ = std::move(subject);
        subject_at_ = at;
    }

    template <class T>
    T read(std::string_view what) {
        need(sizeof(T), what);
        T v;
        std::memcpy(&v, bytes_.data() + pos_, sizeof(T));
        pos_ += sizeof(T);
        return v;
    }
    std::string_view bytes(uint64_t n, std::string_view what);
    // A GGUF string: u64 length, then that many bytes (any bytes, NULs included).
    std::string string(std::string_view what);

    // Throws "<file>: <subject> at byte <at>: <message>".
    [[noreturn]] void fail(std::string_view message) const;
    // Throws the truncation message: "file ends at byte N, <what> at byte P needs M bytes".
    [[noreturn]] void fail_truncated(std::string_view what, uint64_t at, std::string_view needs) const;

private:
    void need(uint64_t n, std::string_view what) const;

    std::string_view file_;
    std::span<const uint8_t> bytes_;
    uint64_t pos_ = 0;
    std::string subject_ = "header";
    uint64_t subject_at_ = 0;
};

}  // namespace niwa::gguf
