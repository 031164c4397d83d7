// The text <-> token ids conversion of a byte-level BPE vocabulary (MODEL.md "Tokenizer"):
// added tokens matched whole, NFC, the family's pre-tokenizer split, byte-pair merges.
// Loads from a GGUF's tokenizer.ggml.* keys or from a Hugging Face tokenizer.json.
// Copies are cheap and share the (immutable) vocabulary; all methods are thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace niwa::gguf {
class Reader;
}

namespace niwa::text {

class Tokenizer {
public:
    // Throws std::runtime_error naming the key and what is wrong (missing, unsupported
    // tokenizer.ggml.model or .pre, a merge of unknown tokens, ...).
    static Tokenizer from_gguf(const gguf::Reader& r);
    static Tokenizer from_hf_json(const std::string& path);

    // Ids of `text`. Added tokens (special and not) are matched whole, longest first; with
    // `parse_special` false the text of special tokens is encoded as ordinary text. Invalid
    // UTF-8 is read as U+FFFD.
    std::vector<int32_t> encode(std::string_view text, bool parse_special = true) const;
    // Text of `ids`; bytes that do not form valid UTF-8 become U+FFFD. Throws
    // std::out_of_range for an id outside [0, n_vocab()).
    std::string decode(std::span<const int32_t> ids, bool skip_special = false) const;

    std::string_view token_text(int32_t id) const;  // the vocabulary entry (byte-level symbols)
    std::optional<int32_t> find_token(std::string_view text) const;  // exact vocabulary/special entry
    int32_t n_vocab() const;
    std::vector<int32_t> eos_ids() const;  // eos_token_id and <|im_end|>/<|endoftext|> when present
    bool is_special(int32_t id) const;
    // The bytes `id` decodes to (possibly part of a UTF-8 character), and whether it is an
    // ordinary byte-level token rather than an added or special one.
    std::string_view token_bytes(int32_t id) const;
    bool is_byte_level(int32_t id) const;
    const std::string& pre_tokenizer() const;  // "qwen2", "qwen35"

    struct Impl;

private:
    friend class StreamDecoder;
    explicit Tokenizer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
    std::shared_ptr<const Impl> impl_;
};

}  // namespace niwa::text
