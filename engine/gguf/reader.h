// GGUF reader: memory-maps a file and validates all of it before anything is used.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/gguf/gguf.h"

namespace niwa::gguf {

class Reader {
    // Lets find() and tensor() look up a string_view without building a std::string.
    struct NameHash {
        using is_transparent = void;
        size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
    };
    using NameIndex = std::unordered_map<std::string, size_t, NameHash, std::equal_to<>>;

public:
    // Maps and validates `path`; throws gguf::Error naming the defect and its byte offset.
    static Reader open(const std::string& path);
    // Validates an in-memory image (used by the fuzzer and tests); the bytes must outlive it.
    static Reader from_memory(std::span<const uint8_t> bytes, std::string name = "<memory>");

    Reader(Reader&&) noexcept;
    Reader& operator=(Reader&&) noexcept;
    Reader(const Reader&) = delete;
    Reader& operator=(const Reader&) = delete;
    ~Reader();

    const std::string& path() const { return path_; }
    uint32_t version() const { return version_; }
    uint32_t alignment() const { return alignment_; }
    uint64_t file_size() const { return bytes_.size(); }
    uint64_t data_offset() const { return data_offset_; }

    const std::vector<KeyValue>& metadata() const { return kvs_; }
    const KeyValue* find(std::string_view key) const;  // nullptr when absent
    bool has(std::string_view key) const { return find(key) != nullptr; }

    // Strict typed getters: throw gguf::Error when the key is missing or its type differs
    // ("key 'qwen35.block_count' at byte 1234 is i32, expected u32").
    uint32_t get_u32(std::string_view key) const;
    int32_t get_i32(std::string_view key) const;
    uint64_t get_u64(std::string_view key) const;
    float get_f32(std::string_view key) const;
    bool get_bool(std::string_view key) const;
    const std::string& get_string(std::string_view key) const;
    std::vector<int32_t> get_i32_array(std::string_view key) const;
    std::vector<uint32_t> get_u32_array(std::string_view key) const;
    std::vector<float> get_f32_array(std::string_view key) const;
    std::vector<std::string> get_string_array(std::string_view key) const;
    // Optional variants: std::nullopt when absent, gguf::Error when present with another type.
    std::optional<uint32_t> opt_u32(std::string_view key) const;
    std::optional<bool> opt_bool(std::string_view key) const;
    std::optional<std::string> opt_string(std::string_view key) const;

    const std::vector<TensorInfo>& tensors() const { return tensors_; }
    const TensorInfo* tensor(std::string_view name) const;  // nullptr when absent
    // The tensor's bytes inside the mapping (validated to lie inside the file). Valid while
    // this Reader lives.
    std::span<const uint8_t> data(const TensorInfo& t) const;

private:
    Reader() = default;
    void parse();
    void unmap();

    std::string path_;
    std::span<const uint8_t> bytes_;
    void* map_ = nullptr;  // non-null when we own an mmap
    size_t map_len_ = 0;
    uint32_t version_ = 0;
    uint32_t alignment_ = 32;
    uint64_t data_offset_ = 0;
    std::vector<KeyValue> kvs_;
    NameIndex kv_index_;
    std::vector<TensorInfo> tensors_;
    NameIndex tensor_index_;
};

}  // namespace niwa::gguf
