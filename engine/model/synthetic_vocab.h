// The byte-level BPE vocabulary of synthetic models: GPT-2's 256 byte symbols, merges learned
// deterministically from a built-in corpus, then Qwen's special tokens (at their real ids in
// the 27b preset) and padding. Written as tokenizer.ggml.* like llama.cpp's qwen35 files.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace niwa::gguf {
class Writer;
}

namespace niwa::model {

// tokenizer.ggml.token_type values (llama.cpp's llama_token_type).
enum class TokenType : int32_t { Normal = 1, Control = 3, UserDefined = 4, Unused = 5 };

// Qwen's 26 special tokens in id order, <|endoftext|> first.
const std::vector<std::string>& qwen_special_tokens();

// The 256 byte values in GPT-2's vocabulary order (printable bytes first, then the rest);
// token strings use text::byte_level_symbols().
std::vector<uint8_t> byte_vocab_order();

struct BpeModel {
    std::vector<std::string> tokens;  // byte-level strings: the 256 byte symbols, then learned
    std::vector<std::string> merges;  // "left right" in rank order
};

// Learns at most `max_merges` merges from `corpus`: each step merges the most frequent
// adjacent pair (ties: the pair of lower token ids), stopping early when no pair occurs
// `min_count` times. The same corpus always gives the same model.
BpeModel train_bpe(std::string_view corpus, int max_merges, int min_count = 2);

struct SyntheticVocab {
    std::vector<std::string> tokens;
    std::vector<int32_t> types;  // TokenType values
    std::vector<std::string> merges;
    int32_t endoftext_id = 0;
    int32_t im_start_id = 0;
    int32_t im_end_id = 0;

    // tokenizer.ggml.* and tokenizer.chat_template.
    void to_gguf(gguf::Writer& w) const;
};

// The learned tokens, then the specials at `first_special` (0: right after the learned tokens,
// else filler "<|niwa_unused_N|>" up to it), then "[PAD<id>]" up to `n_vocab` (0: up to the
// next multiple of 64).
SyntheticVocab synthetic_vocab(int32_t first_special = 0, int32_t n_vocab = 0);

}  // namespace niwa::model
