// Reader: the file mapping, its lifetime, and strict typed access to metadata and tensors.
#include "engine/gguf/reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "engine/gguf/message.h"

namespace niwa::gguf {

namespace {

// Closes the descriptor on every path out of open(); the mapping outlives it.
struct Fd {
    int fd;
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
};

[[noreturn]] void fail_os(const std::string& path, std::string_view action) {
    throw Error(cat(path, ": cannot ", action, ": ", std::strerror(errno)));
}

const KeyValue& expect(const Reader& r, std::string_view key, ValueType type, ValueType elem) {
    const KeyValue* kv = r.find(key);
    Value want;
    want.type = type;
    want.elem_type = elem;
    if (!kv) throw Error(cat(r.path(), ": key ", quote(key), " (", type_name(want), ") is missing"));
    const Value& v = kv->value;
    if (v.type != type || (type == ValueType::ARRAY && v.elem_type != elem))
        throw Error(cat(r.path(), ": key ", quote(key), " at byte ", kv->offset, " is ", type_name(v),
                        ", expected ", type_name(want)));
    return *kv;
}

template <class T>
const T& scalar(const Reader& r, std::string_view key, ValueType type) {
    return std::get<T>(expect(r, key, type, ValueType::U8).value.scalar);
}

template <class T>
std::vector<T> array(const Reader& r, std::string_view key, ValueType elem) {
    const KeyValue& kv = expect(r, key, ValueType::ARRAY, elem);
    std::vector<T> out;
    out.reserve(kv.value.array.size());
    for (const Scalar& s : kv.value.array) out.push_back(std::get<T>(s));
    return out;
}

}  // namespace

Reader Reader::open(const std::string& path) {
    Reader r;
    r.path_ = path;
    Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
    if (f.fd < 0) fail_os(path, "open the file");
    struct stat st {};
    if (::fstat(f.fd, &st) != 0) fail_os(path, "read the file's size");
    if (!S_ISREG(st.st_mode)) throw Error(cat(path, ": not a regular file; pass the path of a .gguf file"));
    const auto size = static_cast<size_t>(st.st_size);
    if (size > 0) {
        void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, f.fd, 0);
        if (p == MAP_FAILED) fail_os(path, "map the file into memory");
        r.map_ = p;
        r.map_len_ = size;
        r.bytes_ = {static_cast<const uint8_t*>(p), size};
    }
    r.parse();
    return r;
}

Reader Reader::from_memory(std::span<const uint8_t> bytes, std::string name) {
    Reader r;
    r.path_ = std::move(name);
    r.bytes_ = bytes;
    r.parse();
    return r;
}

Reader::Reader(Reader&& o) noexcept {
    *this = std::move(o);
}

Reader& Reader::operator=(Reader&& o) noexcept {
    if (this == &o) return *this;
    unmap();
    path_ = std::move(o.path_);
    bytes_ = std::exchange(o.bytes_, {});
    map_ = std::exchange(o.map_, nullptr);
    map_len_ = std::exchange(o.map_len_, 0);
    version_ = o.version_;
    alignment_ = o.alignment_;
    data_offset_ = o.data_offset_;
    kvs_ = std::move(o.kvs_);
    kv_index_ = std::move(o.kv_index_);
    tensors_ = std::move(o.tensors_);
    tensor_index_ = std::move(o.tensor_index_);
    return *this;
}

Reader::~Reader() {
    unmap();
}

void Reader::unmap() {
    if (map_) ::munmap(map_, map_len_);
    map_ = nullptr;
    map_len_ = 0;
    bytes_ = {};
}

const KeyValue* Reader::find(std::string_view key) const {
    const auto it = kv_index_.find(key);
    return it == kv_index_.end() ? nullptr : &kvs_[it->second];
}

uint32_t Reader::get_u32(std::string_view key) const {
    return scalar<uint32_t>(*this, key, ValueType::U32);
}
int32_t Reader::get_i32(std::string_view key) const {
    return scalar<int32_t>(*this, key, ValueType::I32);
}
uint64_t Reader::get_u64(std::string_view key) const {
    return scalar<uint64_t>(*this, key, ValueType::U64);
}
float Reader::get_f32(std::string_view key) const {
    return scalar<float>(*this, key, ValueType::F32);
}
bool Reader::get_bool(std::string_view key) const {
    return scalar<bool>(*this, key, ValueType::BOOL);
}
const std::string& Reader::get_string(std::string_view key) const {
    return scalar<std::string>(*this, key, ValueType::STRING);
}

std::vector<int32_t> Reader::get_i32_array(std::string_view key) const {
    return array<int32_t>(*this, key, ValueType::I32);
}
std::vector<uint32_t> Reader::get_u32_array(std::string_view key) const {
    return array<uint32_t>(*this, key, ValueType::U32);
}
std::vector<float> Reader::get_f32_array(std::string_view key) const {
    return array<float>(*this, key, ValueType::F32);
}
std::vector<std::string> Reader::get_string_array(std::string_view key) const {
    return array<std::string>(*this, key, ValueType::STRING);
}

std::optional<uint32_t> Reader::opt_u32(std::string_view key) const {
    if (!has(key)) return std::nullopt;
    return get_u32(key);
}
std::optional<bool> Reader::opt_bool(std::string_view key) const {
    if (!has(key)) return std::nullopt;
    return get_bool(key);
}
std::optional<std::string> Reader::opt_string(std::string_view key) const {
    if (!has(key)) return std::nullopt;
    return get_string(key);
}

const TensorInfo* Reader::tensor(std::string_view name) const {
    const auto it = tensor_index_.find(name);
    return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

std::span<const uint8_t> Reader::data(const TensorInfo& t) const {
    // parse() proved this for our own infos; a TensorInfo from elsewhere is checked again.
    if (t.offset > bytes_.size() || data_offset_ > bytes_.size() - t.offset ||
        t.nbytes > bytes_.size() - data_offset_ - t.offset)
        throw Error(cat(path_, ": tensor ", quote(t.name), " at data offset ", t.offset, " (", t.nbytes,
                        " bytes) lies outside the file of ", bytes_.size(), " bytes"));
    return bytes_.subspan(data_offset_ + t.offset, t.nbytes);
}

}  // namespace niwa::gguf
