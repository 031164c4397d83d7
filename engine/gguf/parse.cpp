// Reader::parse: validates a whole GGUF image (header, metadata, tensor infos, data layout)
// before anything is handed out, so later code can trust every size and offset.
#include <algorithm>
#include <numeric>
#include <optional>

#include "engine/gguf/checked.h"
#include "engine/gguf/cursor.h"
#include "engine/gguf/message.h"
#include "engine/gguf/reader.h"

namespace niwa::gguf {

namespace {

constexpr uint32_t kVersion = 3;
constexpr uint32_t kOldPrismQ2 = 42;
// The smallest possible entries: they bound the counts a file of a given size can claim.
constexpr uint64_t kMinKvBytes = 8 + 1 + 4 + 1;                  // key length, 1-byte key, type, u8
constexpr uint64_t kMinTensorInfoBytes = 8 + 1 + 4 + 8 + 4 + 8;  // name, n_dims, ne[0], type, offset
// Reserve no more than this many array elements up front: the count comes from the file.
constexpr uint64_t kMaxArrayReserve = 1 << 16;

uint64_t min_value_bytes(ValueType t) {
    switch (t) {
        case ValueType::U8:
        case ValueType::I8:
        case ValueType::BOOL:
            return 1;
        case ValueType::U16:
        case ValueType::I16:
            return 2;
        case ValueType::U32:
        case ValueType::I32:
        case ValueType::F32:
            return 4;
        case ValueType::STRING:
        case ValueType::U64:
        case ValueType::I64:
        case ValueType::F64:
            return 8;
        case ValueType::ARRAY:
            return 4 + 8;
    }
    return 1;
}

ValueType read_value_type(Cursor& c, std::string_view what) {
    const uint64_t at = c.pos();
    const auto raw = c.read<uint32_t>(what);
    if (raw >= kValueTypeCount)
        c.fail(cat(what, " at byte ", at, " is ", raw,
                   ", which is not a GGUF value type (0 to 12); the file is corrupt or not GGUF v3"));
    return static_cast<ValueType>(raw);
}

bool read_bool(Cursor& c, std::string_view what) {
    const uint64_t at = c.pos();
    const auto b = c.read<uint8_t>(what);
    if (b > 1)
        c.fail(cat(what, " at byte ", at, " is a bool of value ", unsigned(b), "; a bool must be 0 or 1"));
    return b == 1;
}

Scalar read_scalar(Cursor& c, ValueType t, std::string_view what) {
    switch (t) {
        case ValueType::U8:
            return c.read<uint8_t>(what);
        case ValueType::I8:
            return c.read<int8_t>(what);
        case ValueType::U16:
            return c.read<uint16_t>(what);
        case ValueType::I16:
            return c.read<int16_t>(what);
        case ValueType::U32:
            return c.read<uint32_t>(what);
        case ValueType::I32:
            return c.read<int32_t>(what);
        case ValueType::F32:
            return c.read<float>(what);
        case ValueType::BOOL:
            return read_bool(c, what);
        case ValueType::STRING:
            return c.string(what);
        case ValueType::U64:
            return c.read<uint64_t>(what);
        case ValueType::I64:
            return c.read<int64_t>(what);
        case ValueType::F64:
            return c.read<double>(what);
        case ValueType::ARRAY:
            break;
    }
    c.fail("an array cannot be read as a scalar");  // unreachable: callers exclude ARRAY
}

Value read_value(Cursor& c) {
    Value v;
    v.type = read_value_type(c, "value type");
    if (v.type != ValueType::ARRAY) {
        v.scalar = read_scalar(c, v.type, "value");
        return v;
    }
    const uint64_t type_at = c.pos();
    v.elem_type = read_value_type(c, "array element type");
    if (v.elem_type == ValueType::ARRAY)
        c.fail(cat("array element type at byte ", type_at, " is arr: GGUF does not allow arrays of arrays"));
    const auto count = c.read<uint64_t>("array length");
    const uint64_t min = min_value_bytes(v.elem_type);
    if (count > c.remaining() / min)
        c.fail_truncated(cat("an array of ", count, " ", to_string(v.elem_type)), c.pos(),
                         cat("at least ", count, " x ", min, " bytes"));
    v.array.reserve(std::min(count, kMaxArrayReserve));
    for (uint64_t i = 0; i < count; ++i) v.array.push_back(read_scalar(c, v.elem_type, "array element"));
    return v;
}

struct Header {
    uint32_t version = 0;
    uint64_t n_tensors = 0;
    uint64_t n_kv = 0;
};

uint64_t read_count(Cursor& c, std::string_view what) {
    const uint64_t at = c.pos();
    const auto n = c.read<int64_t>(what);
    if (n < 0) c.fail(cat(what, " at byte ", at, " is ", n, "; a count cannot be negative"));
    return static_cast<uint64_t>(n);
}

Header read_header(Cursor& c) {
    c.set_subject("header", 0);
    const std::string_view magic = c.bytes(4, "the magic 'GGUF'");
    if (magic != "GGUF") c.fail(cat("not a GGUF file: it starts with ", quote(magic), " instead of 'GGUF'"));
    Header h;
    h.version = c.read<uint32_t>("version");
    if (h.version == 1 || h.version == 2)
        c.fail(cat("GGUF version ", h.version,
                   " at byte 4: Niwa reads version 3 only; download a current "
                   "file or convert this one with a current llama.cpp"));
    if (h.version == 0x03000000)
        c.fail("version at byte 4 reads as big-endian GGUF 3; Niwa reads little-endian GGUF only");
    if (h.version != kVersion)
        c.fail(cat("GGUF version ", h.version, " at byte 4 is unknown; Niwa reads version 3"));
    h.n_tensors = read_count(c, "tensor count");
    h.n_kv = read_count(c, "key/value count");
    const uint64_t rest = c.remaining();
    if (h.n_kv > rest / kMinKvBytes)
        c.fail(cat("key/value count ", h.n_kv, " at byte 16 cannot fit: the ", rest,
                   " bytes after the header hold at most ", rest / kMinKvBytes,
                   " key/value pairs; the file is truncated or corrupt"));
    const uint64_t after_kvs = rest - h.n_kv * kMinKvBytes;
    if (h.n_tensors > after_kvs / kMinTensorInfoBytes)
        c.fail(cat("tensor count ", h.n_tensors, " at byte 8 cannot fit: with ", h.n_kv,
                   " key/value pairs the ", rest, " bytes after the header hold at most ",
                   after_kvs / kMinTensorInfoBytes, " tensor infos; the file is truncated or corrupt"));
    return h;
}

void check_tensor_type(Cursor& c, uint32_t raw, uint64_t at) {
    if (raw == kOldPrismQ2)
        c.fail(cat("tensor type 42 at byte ", at,
                   " is ambiguous: early Bonsai files used 42 for Prism's old group-128 Q2_0, and upstream "
                   "llama.cpp now uses it for its group-64 Q2_0, so this file cannot be read safely; "
                   "re-download the current PQ2_0 (type 142) or PTQ1_0 (type 143) file"));
    if (!is_known(static_cast<TensorType>(raw)))
        c.fail(cat("tensor type ", raw, " at byte ", at,
                   " is not supported; Niwa reads F32 (0), F16 (1), Q8_0 (8), BF16 (30), PQ2_0 (142) "
                   "and PTQ1_0 (143)"));
}

// Element count and byte size of a shape, rejecting anything that overflows.
void size_tensor(Cursor& c, TensorInfo& t, uint64_t ne0_at) {
    const TypeTraits tt = traits(t.type);
    if (t.ne[0] % tt.block_elems != 0)
        c.fail(cat("ne[0] = ", t.ne[0], " at byte ", ne0_at, " is not a multiple of ", tt.block_elems,
                   ", the block size of ", to_string(t.type)));
    std::optional<uint64_t> elems = 1;
    std::optional<uint64_t> bytes =
        checked_mul(static_cast<uint64_t>(t.ne[0] / tt.block_elems), static_cast<uint64_t>(tt.block_bytes));
    for (int d = 0; d < kMaxDims; ++d) {
        if (elems) elems = checked_mul(*elems, static_cast<uint64_t>(t.ne[d]));
        if (d > 0 && bytes) bytes = checked_mul(*bytes, static_cast<uint64_t>(t.ne[d]));
    }
    if (!elems || *elems > static_cast<uint64_t>(INT64_MAX) || !bytes)
        c.fail(cat("shape [", t.ne[0], ", ", t.ne[1], ", ", t.ne[2], ", ", t.ne[3], "] at byte ", ne0_at,
                   " has too many elements (its size overflows 64 bits)"));
    t.nbytes = *bytes;
}

TensorInfo read_tensor_info(Cursor& c, uint64_t index) {
    TensorInfo t;
    t.info_offset = c.pos();
    c.set_subject(cat("tensor info #", index), t.info_offset);
    t.name = c.string("tensor name");
    if (t.name.empty()) c.fail("the tensor name is empty");
    c.set_subject(cat("tensor ", quote(t.name)), t.info_offset);
    const uint64_t dims_at = c.pos();
    const auto n_dims = c.read<uint32_t>("n_dims");
    if (n_dims < 1 || n_dims > kMaxDims)
        c.fail(cat("n_dims at byte ", dims_at, " is ", n_dims, "; it must be 1 to ", kMaxDims));
    t.n_dims = static_cast<int>(n_dims);
    const uint64_t ne0_at = c.pos();
    for (int d = 0; d < t.n_dims; ++d) {
        const uint64_t at = c.pos();
        t.ne[d] = c.read<int64_t>("a dimension");
        if (t.ne[d] < 1)
            c.fail(cat("ne[", d, "] at byte ", at, " is ", t.ne[d], "; every dimension must be at least 1"));
    }
    const uint64_t type_at = c.pos();
    const auto raw_type = c.read<uint32_t>("tensor type");
    check_tensor_type(c, raw_type, type_at);
    t.type = static_cast<TensorType>(raw_type);
    t.offset = c.read<uint64_t>("data offset");
    size_tensor(c, t, ne0_at);
    return t;
}

// Tensors must start aligned, lie inside the file and not share bytes.
void check_layout(Cursor& c, const std::vector<TensorInfo>& tensors, uint64_t data_offset,
                  uint32_t alignment) {
    for (const TensorInfo& t : tensors) {
        c.set_subject(cat("tensor ", quote(t.name)), t.info_offset);
        if (t.offset % alignment != 0)
            c.fail(cat("data offset ", t.offset, " is not a multiple of the alignment ", alignment));
        const auto start = checked_add(data_offset, t.offset);
        const auto end = start ? checked_add(*start, t.nbytes) : std::nullopt;
        if (!end) c.fail(cat("data offset ", t.offset, " plus ", t.nbytes, " bytes overflows 64 bits"));
        if (*end > c.size()) c.fail_truncated("its data", *start, cat(t.nbytes, " bytes"));
    }
    std::vector<size_t> order(tensors.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return tensors[a].offset < tensors[b].offset; });
    for (size_t i = 1; i < order.size(); ++i) {
        const TensorInfo& prev = tensors[order[i - 1]];
        const TensorInfo& cur = tensors[order[i]];
        if (prev.offset + prev.nbytes <= cur.offset) continue;
        c.set_subject(cat("tensor ", quote(cur.name)), cur.info_offset);
        c.fail(cat("its data at bytes [", data_offset + cur.offset, ", ",
                   data_offset + cur.offset + cur.nbytes, ") overlaps tensor ", quote(prev.name),
                   " at bytes [", data_offset + prev.offset, ", ", data_offset + prev.offset + prev.nbytes,
                   ")"));
    }
}

}  // namespace

void Reader::parse() {
    Cursor c(path_, bytes_);
    const Header h = read_header(c);
    version_ = h.version;

    for (uint64_t i = 0; i < h.n_kv; ++i) {
        const uint64_t at = c.pos();
        c.set_subject(cat("key/value #", i), at);
        std::string key = c.string("key");
        if (key.empty()) c.fail("the key is empty");
        c.set_subject(cat("key ", quote(key)), at);
        const auto [it, fresh] = kv_index_.emplace(key, kvs_.size());
        if (!fresh) c.fail(cat("duplicate key; it is first defined at byte ", kvs_[it->second].offset));
        Value v = read_value(c);
        kvs_.push_back(KeyValue{std::move(key), std::move(v), at});
    }

    alignment_ = kDefaultAlignment;
    if (const KeyValue* kv = find("general.alignment")) {
        c.set_subject("key 'general.alignment'", kv->offset);
        if (kv->value.type != ValueType::U32) c.fail(cat("is ", type_name(kv->value), ", expected u32"));
        alignment_ = std::get<uint32_t>(kv->value.scalar);
        if (!is_power_of_two(alignment_))
            c.fail(cat("alignment ", alignment_, " is not a power of two (GGUF's default is 32)"));
    }

    tensors_.reserve(std::min(h.n_tensors, kMaxArrayReserve));
    for (uint64_t i = 0; i < h.n_tensors; ++i) {
        TensorInfo t = read_tensor_info(c, i);
        const auto [it, fresh] = tensor_index_.emplace(t.name, tensors_.size());
        if (!fresh)
            c.fail(
                cat("duplicate tensor name; its first info is at byte ", tensors_[it->second].info_offset));
        tensors_.push_back(std::move(t));
    }

    const auto data = align_up(c.pos(), alignment_);
    if (!data) c.fail("the data section's start overflows 64 bits");
    data_offset_ = *data;
    check_layout(c, tensors_, data_offset_, alignment_);
}

}  // namespace niwa::gguf
