// `niwa-engine inspect --model FILE [--json] [--tensors]`: what a GGUF file holds, as text
// or JSON: its metadata (long values shortened), tensor counts by type and, on request,
// every tensor. Reader errors reach the user verbatim (exit code 1, through main()).
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/cli/args.h"
#include "engine/cli/commands.h"
#include "engine/gguf/reader.h"

namespace niwa::cli {

namespace {

using gguf::Reader;
using gguf::Scalar;
using gguf::Value;
using Json = nlohmann::ordered_json;

constexpr size_t kTextStringBytes = 72;  // chat templates run to kilobytes
constexpr size_t kJsonStringBytes = 256;
constexpr size_t kArrayHead = 8;  // elements shown of an array

const char* kUsage =
    "usage: niwa-engine inspect --model FILE [--json] [--tensors]\n"
    "  Prints a GGUF file's metadata (every key with its type and value; arrays as their\n"
    "  type, length and first elements), its tensor count and bytes by type, and with\n"
    "  --tensors every tensor's name, type, shape and size. --json prints one JSON object.\n";

// The first `max` bytes of s, never cutting a UTF-8 sequence in half.
std::string_view prefix(std::string_view s, size_t max) {
    if (s.size() <= max) return s;
    size_t n = max;
    while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xc0) == 0x80) --n;
    return s.substr(0, n);
}

// A string as a double-quoted literal with control bytes escaped, shortened past `max`.
std::string quoted(std::string_view s, size_t max) {
    static const char* hex = "0123456789abcdef";
    const std::string_view shown = prefix(s, max);
    std::string out = "\"";
    for (char c : shown) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (c == '\n') {
            out += "\\n";
        } else if (u < 0x20 || u == 0x7f) {
            out += "\\x";
            out += hex[u >> 4];
            out += hex[u & 15];
        } else {
            out += c;
        }
    }
    out += "\"";
    if (shown.size() < s.size()) out += "... (" + std::to_string(s.size()) + " bytes)";
    return out;
}

// Keys and tensor names as they are, unless odd bytes (controls, spaces, quotes) would make
// the line ambiguous; then quoted.
std::string name_text(std::string_view s) {
    const bool plain = !s.empty() && s.size() <= 96 && std::all_of(s.begin(), s.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return u > 0x20 && u != 0x7f && c != '"' && c != '\\';
    });
    return plain ? std::string(s) : quoted(s, 96);
}

template <class F>
std::string shortest(F v) {
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

std::string scalar_text(const Scalar& s) {
    return std::visit(
        [](const auto& x) -> std::string {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, std::string>) return quoted(x, kTextStringBytes);
            if constexpr (std::is_same_v<T, bool>) return x ? "true" : "false";
            if constexpr (std::is_floating_point_v<T>) return shortest(x);
            if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) return std::to_string(x);
        },
        s);
}

std::string value_text(const Value& v) {
    if (v.type != gguf::ValueType::ARRAY) return scalar_text(v.scalar);
    std::string out = std::to_string(v.array.size()) + (v.array.size() == 1 ? " item [" : " items [");
    for (size_t i = 0; i < v.array.size() && i < kArrayHead; ++i)
        out += (i ? ", " : "") + scalar_text(v.array[i]);
    if (v.array.size() > kArrayHead) out += ", ...";
    return out + "]";
}

Json scalar_json(const Scalar& s) {
    return std::visit(
        [](const auto& x) -> Json {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, std::string>) return std::string(prefix(x, kJsonStringBytes));
            if constexpr (!std::is_same_v<T, std::string>) return x;
        },
        s);
}

Json value_json(const gguf::KeyValue& kv) {
    const Value& v = kv.value;
    Json j = {{"key", kv.key}, {"type", gguf::type_name(v)}};
    if (v.type == gguf::ValueType::ARRAY) {
        j["length"] = v.array.size();
        Json head = Json::array();
        for (size_t i = 0; i < v.array.size() && i < kArrayHead; ++i) head.push_back(scalar_json(v.array[i]));
        j["head"] = std::move(head);
        return j;
    }
    j["value"] = scalar_json(v.scalar);
    if (const auto* s = std::get_if<std::string>(&v.scalar); s && s->size() > kJsonStringBytes) {
        j["bytes"] = s->size();
        j["shortened"] = true;
    }
    return j;
}

std::string shape_text(const gguf::TensorInfo& t) {
    std::string out = "[";
    for (int d = 0; d < t.n_dims; ++d) out += (d ? ", " : "") + std::to_string(t.ne[d]);
    return out + "]";
}

std::string human_bytes(uint64_t n) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = static_cast<double>(n);
    int u = 0;
    while (v >= 1024 && u < 4) v /= 1024, ++u;
    char buf[32];
    std::snprintf(buf, sizeof buf, u ? "%.2f %s" : "%.0f %s", v, units[u]);
    return buf;
}

struct TypeTotal {
    uint64_t count = 0;
    uint64_t bytes = 0;
};

std::map<std::string, TypeTotal> totals_by_type(const Reader& r, TypeTotal& all) {
    std::map<std::string, TypeTotal> by_type;
    for (const auto& t : r.tensors()) {
        TypeTotal& tt = by_type[std::string(gguf::to_string(t.type))];
        ++tt.count, tt.bytes += t.nbytes;
        ++all.count, all.bytes += t.nbytes;
    }
    return by_type;
}

// A headline key: its value when present, "(absent)" otherwise.
std::string headline(const Reader& r, std::string_view key) {
    const gguf::KeyValue* kv = r.find(key);
    return kv ? value_text(kv->value) : "(absent)";
}

void print_text(const Reader& r, bool tensors) {
    std::printf("%s: GGUF v%u, %llu bytes, alignment %u, data at byte %llu\n", r.path().c_str(), r.version(),
                static_cast<unsigned long long>(r.file_size()), r.alignment(),
                static_cast<unsigned long long>(r.data_offset()));
    std::printf("architecture: %s\nname: %s\nfile type: %s\n", headline(r, "general.architecture").c_str(),
                headline(r, "general.name").c_str(), headline(r, "general.file_type").c_str());
    std::printf("\nmetadata: %zu keys\n", r.metadata().size());
    for (const auto& kv : r.metadata())
        std::printf("  %-48s %-9s %s\n", name_text(kv.key).c_str(), gguf::type_name(kv.value).c_str(),
                    value_text(kv.value).c_str());
    TypeTotal all;
    const auto by_type = totals_by_type(r, all);
    std::printf("\ntensors: %llu, %s (%llu bytes)\n", static_cast<unsigned long long>(all.count),
                human_bytes(all.bytes).c_str(), static_cast<unsigned long long>(all.bytes));
    for (const auto& [type, tt] : by_type)
        std::printf("  %-8s %6llu tensors %12s\n", type.c_str(), static_cast<unsigned long long>(tt.count),
                    human_bytes(tt.bytes).c_str());
    if (!tensors) return;
    std::printf("\n");
    for (const auto& t : r.tensors())
        std::printf("  %-40s %-7s %-24s %llu\n", name_text(t.name).c_str(),
                    std::string(gguf::to_string(t.type)).c_str(), shape_text(t).c_str(),
                    static_cast<unsigned long long>(t.nbytes));
}

void print_json(const Reader& r, bool tensors) {
    Json j = {{"path", r.path()},
              {"version", r.version()},
              {"file_size", r.file_size()},
              {"alignment", r.alignment()},
              {"data_offset", r.data_offset()}};
    for (const auto& [field, key] :
         {std::pair{"architecture", "general.architecture"}, std::pair{"name", "general.name"},
          std::pair{"file_type", "general.file_type"}}) {
        const gguf::KeyValue* kv = r.find(key);
        j[field] = kv && kv->value.type != gguf::ValueType::ARRAY ? scalar_json(kv->value.scalar) : Json();
    }
    Json meta = Json::array();
    for (const auto& kv : r.metadata()) meta.push_back(value_json(kv));
    j["metadata"] = std::move(meta);
    TypeTotal all;
    Json by_type = Json::object();
    for (const auto& [type, tt] : totals_by_type(r, all))
        by_type[type] = {{"count", tt.count}, {"bytes", tt.bytes}};
    j["tensor_count"] = all.count;
    j["tensor_bytes"] = all.bytes;
    j["tensors_by_type"] = std::move(by_type);
    if (tensors) {
        Json list = Json::array();
        for (const auto& t : r.tensors())
            list.push_back({{"name", t.name},
                            {"type", gguf::to_string(t.type)},
                            {"shape", std::vector<int64_t>(t.ne, t.ne + t.n_dims)},
                            {"offset", t.offset},
                            {"bytes", t.nbytes}});
        j["tensors"] = std::move(list);
    }
    // GGUF strings are bytes: replace invalid UTF-8 rather than fail to print.
    std::printf("%s\n", j.dump(2, ' ', false, Json::error_handler_t::replace).c_str());
}

int run_inspect(int argc, char** argv) {
    const Args args("inspect", argc, argv, {"model"}, {"json", "tensors"});
    if (args.help()) {
        std::fputs(kUsage, stdout);
        return 0;
    }
    if (!args.positional().empty())
        throw UsageError("unexpected argument '" + args.positional().front() +
                         "' (see niwa-engine inspect --help)");
    const Reader r = Reader::open(args.str("model"));
    if (args.flag("json")) {
        print_json(r, args.flag("tensors"));
    } else {
        print_text(r, args.flag("tensors"));
    }
    return 0;
}

}  // namespace

NIWA_COMMAND("inspect", "print a GGUF file's metadata and tensor summary", run_inspect);

}  // namespace niwa::cli
