// Names and block layouts of GGUF value and tensor types.
#include <array>

#include "engine/gguf/checked.h"
#include "engine/gguf/gguf.h"
#include "engine/gguf/message.h"
#include "kernels/formats.h"

namespace niwa::gguf {

std::string_view to_string(ValueType t) {
    static constexpr std::array<std::string_view, kValueTypeCount> names = {
        "u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "str", "arr", "u64", "i64", "f64"};
    const auto n = static_cast<uint32_t>(t);
    return n < names.size() ? names[n] : "unknown";
}

std::string_view to_string(TensorType t) {
    switch (t) {
        case TensorType::F32:
            return "F32";
        case TensorType::F16:
            return "F16";
        case TensorType::Q8_0:
            return "Q8_0";
        case TensorType::BF16:
            return "BF16";
        case TensorType::PQ2_0:
            return "PQ2_0";
        case TensorType::PTQ1_0:
            return "PTQ1_0";
    }
    return "unknown";
}

std::string type_name(const Value& v) {
    if (v.type != ValueType::ARRAY) return std::string(to_string(v.type));
    return cat("arr[", to_string(v.elem_type), "]");
}

bool is_known(TensorType t) {
    return to_string(t) != "unknown";
}

// The block layouts are the kernels' (kernels/formats.h): one place knows each format.
TypeTraits traits(TensorType t) {
    if (!is_known(t)) throw Error(cat("unknown tensor type ", static_cast<uint32_t>(t)));
    const auto d = static_cast<kernels::DType>(static_cast<uint32_t>(t));
    return {kernels::dtype_block_elems(d), kernels::dtype_block_bytes(d)};
}

uint64_t row_bytes(TensorType t, int64_t n) {
    const TypeTraits tt = traits(t);
    if (n < 0 || n % tt.block_elems != 0)
        throw Error(cat("a row of ", n, " ", to_string(t), " elements is not a whole number of ",
                        tt.block_elems, "-element blocks"));
    const auto bytes =
        checked_mul(static_cast<uint64_t>(n / tt.block_elems), static_cast<uint64_t>(tt.block_bytes));
    if (!bytes) throw Error(cat("a row of ", n, " ", to_string(t), " elements overflows 64 bits"));
    return *bytes;
}

std::string quote(std::string_view name, size_t max) {
    static const char* hex = "0123456789abcdef";
    std::string out = "'";
    for (size_t i = 0; i < name.size() && i < max; ++i) {
        const auto c = static_cast<unsigned char>(name[i]);
        if (c < 0x20 || c == 0x7f || c == '\'' || c == '\\') {
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 15];
        } else {
            out += static_cast<char>(c);
        }
    }
    out += "'";
    if (name.size() > max) out += cat(" (", name.size(), " bytes, shortened)");
    return out;
}

}  // namespace niwa::gguf
