// Writer: serialises metadata and tensor infos, then streams each tensor through its Fill
// into a temporary file that is renamed into place once everything reached the disk.
#include "engine/gguf/writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <utility>

#include "engine/gguf/checked.h"
#include "engine/gguf/message.h"

namespace niwa::gguf {

struct Writer::Pending {
    TensorInfo info;
    Fill fill;
};

namespace {

constexpr std::string_view kAlignmentKey = "general.alignment";

void put_raw(std::vector<uint8_t>& out, const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    out.insert(out.end(), b, b + n);
}

template <class T>
void put(std::vector<uint8_t>& out, T v) {
    put_raw(out, &v, sizeof v);
}

void put_string(std::vector<uint8_t>& out, const std::string& s) {
    put<uint64_t>(out, s.size());
    put_raw(out, s.data(), s.size());
}

void put_scalar(std::vector<uint8_t>& out, const Scalar& s) {
    std::visit(
        [&](const auto& x) {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, std::string>) {
                put_string(out, x);
            } else if constexpr (std::is_same_v<T, bool>) {
                put<uint8_t>(out, x ? 1 : 0);
            } else {
                put<T>(out, x);
            }
        },
        s);
}

void put_value(std::vector<uint8_t>& out, const Value& v) {
    put<uint32_t>(out, static_cast<uint32_t>(v.type));
    if (v.type != ValueType::ARRAY) return put_scalar(out, v.scalar);
    put<uint32_t>(out, static_cast<uint32_t>(v.elem_type));
    put<uint64_t>(out, v.array.size());
    for (const Scalar& s : v.array) put_scalar(out, s);
}

// The value type a Scalar alternative stands for (the inverse of scalar_index).
ValueType type_of(const Scalar& s) {
    const auto i = static_cast<uint32_t>(s.index());
    return static_cast<ValueType>(i < static_cast<uint32_t>(ValueType::ARRAY) ? i : i + 1);
}

void check_value(const std::string& key, const Value& v) {
    const auto where = [&] { return cat("GGUF writer: key ", quote(key), ": "); };
    if (static_cast<uint32_t>(v.type) >= kValueTypeCount)
        throw Error(cat(where(), "value type ", static_cast<uint32_t>(v.type), " does not exist"));
    if (v.type != ValueType::ARRAY) {
        if (v.scalar.index() != scalar_index(v.type))
            throw Error(cat(where(), "the value is declared ", to_string(v.type), " but holds a ",
                            to_string(type_of(v.scalar))));
        return;
    }
    if (static_cast<uint32_t>(v.elem_type) >= kValueTypeCount || v.elem_type == ValueType::ARRAY)
        throw Error(cat(where(), "array element type ", static_cast<uint32_t>(v.elem_type),
                        " is not allowed (arrays of arrays are not GGUF)"));
    for (size_t i = 0; i < v.array.size(); ++i)
        if (v.array[i].index() != scalar_index(v.elem_type))
            throw Error(cat(where(), "element ", i, " of an arr[", to_string(v.elem_type), "] holds a ",
                            to_string(type_of(v.array[i]))));
}

Value scalar_value(ValueType t, Scalar s) {
    Value v;
    v.type = t;
    v.scalar = std::move(s);
    return v;
}

template <class T>
Value array_value(ValueType elem, const std::vector<T>& items) {
    Value v;
    v.type = ValueType::ARRAY;
    v.elem_type = elem;
    v.array.assign(items.begin(), items.end());
    return v;
}

// The temporary output file: removed unless commit() renamed it into place.
class TempFile {
public:
    explicit TempFile(std::string final_path) : final_(std::move(final_path)), tmp_(final_ + ".tmp") {
        fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd_ < 0) fail("create");
    }
    TempFile(const TempFile&) = delete;
    TempFile& operator=(const TempFile&) = delete;
    ~TempFile() {
        if (fd_ >= 0) ::close(fd_);
        if (!committed_) ::unlink(tmp_.c_str());
    }

    void write(std::span<const uint8_t> bytes) {
        while (!bytes.empty()) {
            const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) fail("write");
            bytes = bytes.subspan(static_cast<size_t>(n));
            written_ += static_cast<uint64_t>(n);
        }
    }
    void pad_to(uint64_t alignment) {
        static const uint8_t zeros[256] = {};
        const uint64_t pad = (alignment - written_ % alignment) % alignment;
        for (uint64_t left = pad; left > 0;) {
            const uint64_t n = std::min<uint64_t>(left, sizeof zeros);
            write({zeros, n});
            left -= n;
        }
    }
    void commit() {
        if (::fsync(fd_) != 0) fail("flush");
        const int fd = std::exchange(fd_, -1);
        if (::close(fd) != 0) fail("close");
        if (std::rename(tmp_.c_str(), final_.c_str()) != 0)
            throw Error(cat("cannot rename '", tmp_, "' to '", final_, "': ", std::strerror(errno)));
        committed_ = true;
    }

private:
    [[noreturn]] void fail(std::string_view action) const {
        throw Error(cat("cannot ", action, " '", tmp_, "' (at byte ", written_, "): ", std::strerror(errno),
                        "; check the folder exists, is writable and has space"));
    }

    std::string final_;
    std::string tmp_;
    int fd_ = -1;
    uint64_t written_ = 0;
    bool committed_ = false;
};

// A reusable, zero-filled tensor buffer (Fill's contract). It grows to the largest tensor
// through calloc, whose fresh pages come zeroed without a memset; after a write only the
// bytes a fill was given are cleared again, on the writer task, off the fill's path.
class ZeroedBuffer {
public:
    std::span<uint8_t> take(uint64_t n) {
        if (n > capacity_) {
            data_.reset(static_cast<uint8_t*>(std::calloc(static_cast<size_t>(n), 1)));
            if (!data_) throw Error(cat("GGUF writer: cannot allocate ", n, " bytes for a tensor"));
            capacity_ = n;
        }
        return {data_.get(), static_cast<size_t>(n)};
    }
    void give_back(size_t used) { std::memset(data_.get(), 0, used); }

private:
    struct Free {
        void operator()(uint8_t* p) const { std::free(p); }
    };
    std::unique_ptr<uint8_t[], Free> data_;
    uint64_t capacity_ = 0;
};

}  // namespace

Writer::Writer() = default;
Writer::~Writer() = default;
Writer::Writer(Writer&&) noexcept = default;
Writer& Writer::operator=(Writer&&) noexcept = default;

void Writer::set_alignment(uint32_t alignment) {
    if (!is_power_of_two(alignment))
        throw Error(cat("GGUF writer: alignment ", alignment, " is not a nonzero power of two"));
    for (KeyValue& kv : kvs_) {
        if (kv.key != kAlignmentKey) continue;
        kv.value.scalar = alignment;
        alignment_ = alignment;
        return;
    }
    if (alignment != kDefaultAlignment) add_u32(std::string(kAlignmentKey), alignment);
    alignment_ = alignment;
}

void Writer::add(const std::string& key, Value v) {
    if (key.empty()) throw Error("GGUF writer: a metadata key is empty");
    for (const KeyValue& kv : kvs_)
        if (kv.key == key) throw Error(cat("GGUF writer: key ", quote(key), " is added twice"));
    check_value(key, v);
    if (key == kAlignmentKey) {
        if (v.type != ValueType::U32)
            throw Error(cat("GGUF writer: key 'general.alignment' must be u32, not ", type_name(v)));
        const auto a = std::get<uint32_t>(v.scalar);
        if (!is_power_of_two(a))
            throw Error(cat("GGUF writer: alignment ", a, " is not a nonzero power of two"));
        alignment_ = a;
    }
    kvs_.push_back(KeyValue{key, std::move(v), 0});
}

void Writer::add_u8(const std::string& key, uint8_t v) {
    add(key, scalar_value(ValueType::U8, v));
}
void Writer::add_u32(const std::string& key, uint32_t v) {
    add(key, scalar_value(ValueType::U32, v));
}
void Writer::add_i32(const std::string& key, int32_t v) {
    add(key, scalar_value(ValueType::I32, v));
}
void Writer::add_u64(const std::string& key, uint64_t v) {
    add(key, scalar_value(ValueType::U64, v));
}
void Writer::add_f32(const std::string& key, float v) {
    add(key, scalar_value(ValueType::F32, v));
}
void Writer::add_bool(const std::string& key, bool v) {
    add(key, scalar_value(ValueType::BOOL, v));
}
void Writer::add_string(const std::string& key, const std::string& v) {
    add(key, scalar_value(ValueType::STRING, v));
}
void Writer::add_i32_array(const std::string& key, const std::vector<int32_t>& v) {
    add(key, array_value(ValueType::I32, v));
}
void Writer::add_u32_array(const std::string& key, const std::vector<uint32_t>& v) {
    add(key, array_value(ValueType::U32, v));
}
void Writer::add_f32_array(const std::string& key, const std::vector<float>& v) {
    add(key, array_value(ValueType::F32, v));
}
void Writer::add_string_array(const std::string& key, const std::vector<std::string>& v) {
    add(key, array_value(ValueType::STRING, v));
}
void Writer::add_value(const std::string& key, const Value& v) {
    add(key, v);
}

void Writer::add_tensor(const std::string& name, TensorType type, std::vector<int64_t> ne, Fill fill) {
    const auto where = [&] { return cat("GGUF writer: tensor ", quote(name), ": "); };
    if (name.empty()) throw Error("GGUF writer: a tensor name is empty");
    for (const auto& p : tensors_)
        if (p->info.name == name) throw Error(cat(where(), "added twice"));
    if (!is_known(type)) throw Error(cat(where(), "unknown type ", static_cast<uint32_t>(type)));
    if (ne.empty() || ne.size() > static_cast<size_t>(kMaxDims))
        throw Error(cat(where(), ne.size(), " dimensions; a tensor has 1 to ", kMaxDims));
    if (!fill) throw Error(cat(where(), "no fill function"));
    auto p = std::make_unique<Pending>();
    p->info.name = name;
    p->info.type = type;
    p->info.n_dims = static_cast<int>(ne.size());
    std::optional<uint64_t> bytes = 1;
    for (size_t d = 0; d < ne.size(); ++d) {
        if (ne[d] < 1) throw Error(cat(where(), "ne[", d, "] is ", ne[d], "; dimensions must be at least 1"));
        p->info.ne[d] = ne[d];
        if (d > 0 && bytes) bytes = checked_mul(*bytes, static_cast<uint64_t>(ne[d]));
    }
    const int64_t block = traits(type).block_elems;
    if (ne[0] % block != 0)
        throw Error(cat(where(), "ne[0] = ", ne[0], " is not a multiple of ", block, ", the block size of ",
                        to_string(type)));
    if (bytes) bytes = checked_mul(*bytes, static_cast<uint64_t>(ne[0] / block));
    if (bytes) bytes = checked_mul(*bytes, static_cast<uint64_t>(traits(type).block_bytes));
    if (!bytes) throw Error(cat(where(), "its byte size overflows 64 bits"));
    p->info.nbytes = *bytes;
    p->fill = std::move(fill);
    tensors_.push_back(std::move(p));
}

void Writer::add_tensor_bytes(const std::string& name, TensorType type, std::vector<int64_t> ne,
                              std::vector<uint8_t> bytes) {
    auto shared = std::make_shared<std::vector<uint8_t>>(std::move(bytes));
    add_tensor(name, type, std::move(ne),
               [shared](std::span<uint8_t> out) { std::copy(shared->begin(), shared->end(), out.begin()); });
    if (tensors_.back()->info.nbytes != shared->size()) {
        const uint64_t want = tensors_.back()->info.nbytes;
        tensors_.pop_back();
        throw Error(cat("GGUF writer: tensor ", quote(name), ": ", shared->size(),
                        " bytes given, its type and "
                        "shape need ",
                        want));
    }
}

void Writer::write(const std::string& path) const {
    std::vector<uint8_t> head;
    put_raw(head, "GGUF", 4);
    put<uint32_t>(head, 3);
    put<int64_t>(head, static_cast<int64_t>(tensors_.size()));
    put<int64_t>(head, static_cast<int64_t>(kvs_.size()));
    for (const KeyValue& kv : kvs_) {
        put_string(head, kv.key);
        put_value(head, kv.value);
    }
    uint64_t offset = 0;  // each tensor starts at the padded end of the one before
    for (const auto& p : tensors_) {
        const TensorInfo& t = p->info;
        put_string(head, t.name);
        put<uint32_t>(head, static_cast<uint32_t>(t.n_dims));
        for (int d = 0; d < t.n_dims; ++d) put<int64_t>(head, t.ne[d]);
        put<uint32_t>(head, static_cast<uint32_t>(t.type));
        put<uint64_t>(head, offset);
        const auto next = checked_add(offset, t.nbytes);
        const auto aligned = next ? align_up(*next, alignment_) : std::nullopt;
        if (!aligned)
            throw Error(cat("GGUF writer: '", path, "': the tensors' total size overflows 64 bits"));
        offset = *aligned;
    }

    // Double buffering: tensor i + 1 is filled on this thread while a writer task writes
    // tensor i, so generating and disk I/O overlap and memory stays at two tensors.
    TempFile file(path);
    file.write(head);
    file.pad_to(alignment_);
    ZeroedBuffer buffers[2];
    std::future<void> writing;  // declared last: waited for before the buffers and file go away
    for (size_t i = 0; i < tensors_.size(); ++i) {
        ZeroedBuffer& buffer = buffers[i % 2];
        const std::span<uint8_t> bytes = buffer.take(tensors_[i]->info.nbytes);
        tensors_[i]->fill(bytes);
        if (writing.valid()) writing.get();  // rethrows a write error
        writing = std::async(std::launch::async, [&file, &buffer, bytes, alignment = alignment_] {
            file.write(bytes);
            file.pad_to(alignment);
            buffer.give_back(bytes.size());
        });
    }
    if (writing.valid()) writing.get();
    file.commit();
}

}  // namespace niwa::gguf
