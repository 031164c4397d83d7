// GGUF writer: metadata first, then tensors streamed to disk one at a time, so a 7 GB
// model is written at disk speed without holding it in memory.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/gguf/gguf.h"

namespace niwa::gguf {

class Writer {
public:
    Writer();
    ~Writer();
    Writer(Writer&&) noexcept;
    Writer& operator=(Writer&&) noexcept;

    // A nonzero power of two; also written as general.alignment when != 32 (at the place
    // of the first call, like any other key).
    void set_alignment(uint32_t alignment);
    uint32_t alignment() const { return alignment_; }

    // Metadata, in the order added. Keys must be unique and nonempty (gguf::Error otherwise).
    void add_u8(const std::string& key, uint8_t v);
    void add_u32(const std::string& key, uint32_t v);
    void add_i32(const std::string& key, int32_t v);
    void add_u64(const std::string& key, uint64_t v);
    void add_f32(const std::string& key, float v);
    void add_bool(const std::string& key, bool v);
    void add_string(const std::string& key, const std::string& v);
    void add_i32_array(const std::string& key, const std::vector<int32_t>& v);
    void add_u32_array(const std::string& key, const std::vector<uint32_t>& v);
    void add_f32_array(const std::string& key, const std::vector<float>& v);
    void add_string_array(const std::string& key, const std::vector<std::string>& v);
    // Any type, arrays included; the value must be consistent (scalar alternative matching
    // `type`, every element of `elem_type`, no arrays of arrays).
    void add_value(const std::string& key, const Value& v);

    // Fills `out` (exactly the tensor's byte size, zeroed) with the tensor's bytes.
    using Fill = std::function<void(std::span<uint8_t> out)>;

    // Declares a tensor; `fill` is called once per write(), in declaration order, on a buffer
    // of the tensor's size (memory stays bounded by two of the largest tensor: one filled while the other is
    // written). ne[0] is the innermost dimension; the byte size follows from type and shape.
    void add_tensor(const std::string& name, TensorType type, std::vector<int64_t> ne, Fill fill);
    // Convenience: a tensor whose bytes are already in memory (copied; size must match).
    void add_tensor_bytes(const std::string& name, TensorType type, std::vector<int64_t> ne,
                          std::vector<uint8_t> bytes);

    // Writes the file to path + ".tmp", then renames it over `path`, so a failed or
    // interrupted write never leaves a half file under the final name. Throws gguf::Error
    // naming the path on any I/O failure; an exception from a Fill propagates unchanged.
    void write(const std::string& path) const;

private:
    struct Pending;
    void add(const std::string& key, Value v);

    std::vector<KeyValue> kvs_;
    std::vector<std::unique_ptr<Pending>> tensors_;
    uint32_t alignment_ = kDefaultAlignment;
};

}  // namespace niwa::gguf
