// Tokenizer::from_gguf: the vocabulary from a GGUF's tokenizer.ggml.* keys (MODEL.md).
#include <stdexcept>

#include "engine/gguf/reader.h"
#include "engine/text/tokenizer_impl.h"

namespace niwa::text {

namespace {

// llama.cpp's token types.
enum GgufTokenType : int32_t {
    kNormal = 1,
    kUnknown = 2,
    kControl = 3,
    kUserDefined = 4,
    kUnused = 5,
    kByte = 6
};

TokenKind kind_of(int64_t type) {
    switch (type) {
        case kControl:
            return TokenKind::kSpecial;
        case kUserDefined:
            return TokenKind::kAdded;
        case kUnused:
            return TokenKind::kUnused;
        default:
            return TokenKind::kNormal;
    }
}

std::vector<int64_t> token_types(const gguf::Reader& r, size_t n) {
    std::vector<int64_t> types(n, kNormal);
    const gguf::KeyValue* kv = r.find("tokenizer.ggml.token_type");
    if (!kv) return types;
    std::vector<int64_t> got;
    if (kv->value.type == gguf::ValueType::ARRAY && kv->value.elem_type == gguf::ValueType::U32) {
        for (uint32_t t : r.get_u32_array(kv->key)) got.push_back(t);
    } else {
        for (int32_t t : r.get_i32_array(kv->key)) got.push_back(t);  // throws naming the type
    }
    if (got.size() != n)
        throw std::runtime_error(r.path() + ": tokenizer.ggml.token_type has " + std::to_string(got.size()) +
                                 " entries but tokenizer.ggml.tokens has " + std::to_string(n));
    return got;
}

}  // namespace

Tokenizer Tokenizer::from_gguf(const gguf::Reader& r) {
    TokenizerSpec spec;
    spec.source = r.path();
    const std::string model = r.get_string("tokenizer.ggml.model");
    if (model != "gpt2")
        throw std::runtime_error(r.path() + ": tokenizer.ggml.model is '" + model +
                                 "'; only byte-level BPE ('gpt2') is supported");
    spec.pre = r.get_string("tokenizer.ggml.pre");
    spec.tokens = r.get_string_array("tokenizer.ggml.tokens");
    const std::vector<int64_t> types = token_types(r, spec.tokens.size());
    for (int64_t t : types) spec.kinds.push_back(kind_of(t));

    if (r.has("tokenizer.ggml.merges")) {
        for (const std::string& m : r.get_string_array("tokenizer.ggml.merges")) {
            // Byte-level symbols never include a space, so the first space (past the first
            // character) separates the pair.
            const size_t space = m.find(' ', 1);
            if (space == std::string::npos)
                throw std::runtime_error(r.path() + ": tokenizer.ggml.merges entry '" + m +
                                         "' is not 'left right'");
            spec.merges.emplace_back(m.substr(0, space), m.substr(space + 1));
        }
    }
    for (const char* key : {"tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id"}) {
        if (auto id = r.opt_u32(key)) {
            if (*id >= spec.tokens.size())
                throw std::runtime_error(r.path() + ": " + key + " = " + std::to_string(*id) +
                                         " is outside the vocabulary of " +
                                         std::to_string(spec.tokens.size()));
            spec.eos.push_back(static_cast<int32_t>(*id));
        }
    }
    try {
        return Tokenizer(std::make_shared<const Impl>(std::move(spec)));
    } catch (const std::invalid_argument& e) {  // the pre-tokenizer name
        throw std::runtime_error(r.path() + ": tokenizer.ggml.pre: " + e.what());
    }
}

}  // namespace niwa::text
