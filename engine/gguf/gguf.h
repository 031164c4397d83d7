// GGUF v3: the types shared by the reader (reader.h) and the writer (writer.h).
// MODEL.md "GGUF" is the specification; names follow it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace niwa::gguf {

// Any defect in a file: the message names the key or tensor and the byte offset.
class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

enum class ValueType : uint32_t {
    U8 = 0,
    I8 = 1,
    U16 = 2,
    I16 = 3,
    U32 = 4,
    I32 = 5,
    F32 = 6,
    BOOL = 7,
    STRING = 8,
    ARRAY = 9,
    U64 = 10,
    I64 = 11,
    F64 = 12,
};
constexpr uint32_t kValueTypeCount = 13;
std::string_view to_string(ValueType t);  // "u32", "str", "arr", ... (MODEL.md's spelling)

enum class TensorType : uint32_t {
    F32 = 0,
    F16 = 1,
    Q8_0 = 8,
    BF16 = 30,
    PQ2_0 = 142,
    PTQ1_0 = 143,
};
std::string_view to_string(TensorType t);  // "F32", "PQ2_0", ...
bool is_known(TensorType t);               // false for any other number

// Elements per block and bytes per block of a tensor type (1 and the element size for
// the plain float types). Throws gguf::Error for an unknown type.
struct TypeTraits {
    int64_t block_elems;
    int64_t block_bytes;
};
TypeTraits traits(TensorType t);
// Bytes of a row of `n` elements; throws gguf::Error unless n >= 0 is a multiple of the
// block size.
uint64_t row_bytes(TensorType t, int64_t n);

// A metadata value. Arrays hold one element type (arrays of arrays are rejected on read).
// The variant's alternatives follow ValueType's numbering with ARRAY left out, so a scalar
// of type t holds alternative scalar_index(t).
using Scalar = std::variant<uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, float, bool, std::string,
                            uint64_t, int64_t, double>;
constexpr size_t scalar_index(ValueType t) {
    const auto n = static_cast<size_t>(t);
    return n < static_cast<size_t>(ValueType::ARRAY) ? n : n - 1;
}

struct Value {
    ValueType type = ValueType::U8;
    Scalar scalar;                        // when type != ARRAY
    ValueType elem_type = ValueType::U8;  // when type == ARRAY
    std::vector<Scalar> array;            // when type == ARRAY
};

// "u32", "str", or "arr[i32]" for an array: how messages and `inspect` name a value's type.
std::string type_name(const Value& v);

struct KeyValue {
    std::string key;
    Value value;
    uint64_t offset = 0;  // byte offset of the key in the file (for error messages)
};

constexpr int kMaxDims = 4;
constexpr uint32_t kDefaultAlignment = 32;

struct TensorInfo {
    std::string name;
    TensorType type = TensorType::F32;
    int n_dims = 0;
    int64_t ne[kMaxDims] = {1, 1, 1, 1};  // ne[0] is the innermost (input) dimension
    uint64_t offset = 0;                  // relative to the start of the data section
    uint64_t nbytes = 0;
    uint64_t info_offset = 0;  // byte offset of this info in the file

    int64_t n_elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
};

}  // namespace niwa::gguf
