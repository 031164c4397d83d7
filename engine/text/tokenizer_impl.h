// Inside the Tokenizer: the vocabulary as both loaders describe it (TokenizerSpec) and the
// tables built from it (Tokenizer::Impl). Not for use outside engine/text.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/text/pretokenizer.h"
#include "engine/text/tokenizer.h"
#include "engine/text/tokenizer_bpe.h"

namespace niwa::text {

enum class TokenKind : uint8_t {
    kNormal,   // byte-level symbols, produced by merges
    kSpecial,  // control token: matched whole only when parsing special text; skippable on decode
    kAdded,    // user-defined token: always matched whole, never skipped
    kUnused,   // a hole in the id space; decodes to nothing
};

struct TokenizerSpec {
    std::string source;               // the file, for messages
    std::vector<std::string> tokens;  // id -> text (byte-level symbols; raw text for added tokens)
    std::vector<TokenKind> kinds;     // same length as tokens
    std::vector<std::pair<std::string, std::string>> merges;  // in rank order
    std::string pre;                                          // pre-tokenizer name
    std::vector<int32_t> eos;                                 // declared end-of-sequence ids
    bool ignore_merges = false;  // a whole pre-token found in the vocabulary is kept
};

struct Tokenizer::Impl {
    explicit Impl(TokenizerSpec spec);

    std::string source;
    std::vector<std::string> text;   // id -> vocabulary entry
    std::vector<std::string> bytes;  // id -> what it decodes to
    std::vector<TokenKind> kind;
    std::unordered_map<std::string, int32_t> by_text;   // vocabulary entry -> id
    std::unordered_map<std::string, int32_t> by_bytes;  // normal tokens: bytes -> id (ignore_merges)
    PreTokenizer pre;
    BpeMerger bpe;
    bool ignore_merges;
    std::vector<int32_t> eos;

    // Added tokens by first byte, longest first, for the whole-token match before BPE.
    std::array<std::vector<int32_t>, 256> added_by_first_byte;
};

}  // namespace niwa::text
