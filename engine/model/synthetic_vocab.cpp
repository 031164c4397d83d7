#include "engine/model/synthetic_vocab.h"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>

#include "engine/gguf/writer.h"
#include "engine/model/synthetic_corpus.h"
#include "engine/text/byte_level.h"
#include "engine/text/pretokenizer.h"
#include "engine/text/synthetic_template.h"

namespace niwa::model {

namespace {

// The corpus has ~800 pairs seen at least twice; merging on through pairs seen once lands
// the tiny/small vocabularies at ~2,000 tokens, Qwen-like in having whole-word tokens.
constexpr int kMaxMerges = 1700;
constexpr int kMinPairCount = 1;

// The code point of a byte-level symbol (all lie below U+0800: one or two UTF-8 bytes).
uint32_t symbol_code_point(const std::string& s) {
    if (s.size() == 1) return uint8_t(s[0]);
    return (uint32_t(uint8_t(s[0]) & 0x1F) << 6) | (uint8_t(s[1]) & 0x3F);
}

uint64_t pair_key(int32_t a, int32_t b) {
    return (uint64_t(uint32_t(a)) << 32) | uint32_t(b);
}

struct Word {
    std::vector<int32_t> syms;
    int64_t count = 0;
};

// Adds `sign` x the word's count to the count of each adjacent pair of the word.
void count_pairs(const Word& w, int64_t sign, std::unordered_map<uint64_t, int64_t>& counts) {
    for (size_t i = 0; i + 1 < w.syms.size(); ++i) {
        const uint64_t k = pair_key(w.syms[i], w.syms[i + 1]);
        if ((counts[k] += sign * w.count) == 0) counts.erase(k);
    }
}

bool contains_pair(const Word& w, int32_t a, int32_t b) {
    for (size_t i = 0; i + 1 < w.syms.size(); ++i)
        if (w.syms[i] == a && w.syms[i + 1] == b) return true;
    return false;
}

// Replaces each occurrence of (a, b), left to right without overlap, by c.
void apply_merge(Word& w, int32_t a, int32_t b, int32_t c) {
    std::vector<int32_t> out;
    out.reserve(w.syms.size());
    for (size_t i = 0; i < w.syms.size(); ++i) {
        if (i + 1 < w.syms.size() && w.syms[i] == a && w.syms[i + 1] == b) {
            out.push_back(c);
            ++i;
        } else {
            out.push_back(w.syms[i]);
        }
    }
    w.syms = std::move(out);
}

// The GGUF token type llama.cpp's converter gives Qwen's added tokens: the ones spelled
// <|...|> look special and become control tokens; <tool_call>, <think> and the other
// tags are marked non-special in Qwen's tokenizer_config and are written as user-defined
// (convert_hf_to_gguf.py, does_token_look_special). A tokenizer must match both kinds as
// whole tokens in text.
TokenType special_type(const std::string& s) {
    const bool bar_spelled =
        s.size() >= 4 && s.compare(0, 2, "<|") == 0 && s.compare(s.size() - 2, 2, "|>") == 0;
    return bar_spelled ? TokenType::Control : TokenType::UserDefined;
}

}  // namespace

const std::vector<std::string>& qwen_special_tokens() {
    static const std::vector<std::string> kSpecials = {
        "<|endoftext|>",  "<|im_start|>",   "<|im_end|>",      "<|object_ref_start|>", "<|object_ref_end|>",
        "<|box_start|>",  "<|box_end|>",    "<|quad_start|>",  "<|quad_end|>",         "<|vision_start|>",
        "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>",   "<|video_pad|>",        "<tool_call>",
        "</tool_call>",   "<|fim_prefix|>", "<|fim_middle|>",  "<|fim_suffix|>",       "<|fim_pad|>",
        "<|repo_name|>",  "<|file_sep|>",   "<tool_response>", "</tool_response>",     "<think>",
        "</think>",
    };
    return kSpecials;
}

std::vector<uint8_t> byte_vocab_order() {
    // GPT-2's vocabulary lists the byte symbols by code point: the printable bytes (which
    // stand for themselves) first, then the others (U+0100 onwards).
    std::vector<uint8_t> order(256);
    for (int b = 0; b < 256; ++b) order[size_t(b)] = uint8_t(b);
    const auto& symbols = text::byte_level_symbols();
    std::stable_sort(order.begin(), order.end(), [&](uint8_t x, uint8_t y) {
        return symbol_code_point(symbols[x]) < symbol_code_point(symbols[y]);
    });
    return order;
}

BpeModel train_bpe(std::string_view corpus, int max_merges, int min_count) {
    BpeModel m;
    std::unordered_map<std::string, int32_t> token_id;
    int32_t byte_id[256];
    for (uint8_t b : byte_vocab_order()) {
        byte_id[b] = int32_t(m.tokens.size());
        token_id[text::byte_level_symbols()[b]] = byte_id[b];
        m.tokens.push_back(text::byte_level_symbols()[b]);
    }

    // Distinct pre-tokens in order of first appearance, so nothing depends on hash order.
    std::vector<Word> words;
    std::unordered_map<std::string, size_t> word_index;
    for (const std::string& piece : text::PreTokenizer::by_name("qwen35").split(corpus)) {
        auto [it, fresh] = word_index.try_emplace(piece, words.size());
        if (fresh) {
            Word w;
            for (char c : piece) w.syms.push_back(byte_id[uint8_t(c)]);
            words.push_back(std::move(w));
        }
        ++words[it->second].count;
    }

    std::unordered_map<uint64_t, int64_t> counts;
    for (const Word& w : words) count_pairs(w, +1, counts);

    while (int(m.merges.size()) < max_merges) {
        uint64_t best = 0;
        int64_t best_count = 0;
        for (const auto& [k, c] : counts)
            if (c > best_count || (c == best_count && k < best)) best = k, best_count = c;
        if (best_count < std::max(min_count, 1)) break;
        const auto a = int32_t(best >> 32), b = int32_t(best & 0xffffffffu);
        const std::string merged = m.tokens[size_t(a)] + m.tokens[size_t(b)];
        auto [it, fresh] = token_id.try_emplace(merged, int32_t(m.tokens.size()));
        if (fresh) m.tokens.push_back(merged);
        m.merges.push_back(m.tokens[size_t(a)] + " " + m.tokens[size_t(b)]);
        for (Word& w : words) {
            if (!contains_pair(w, a, b)) continue;
            count_pairs(w, -1, counts);
            apply_merge(w, a, b, it->second);
            count_pairs(w, +1, counts);
        }
    }
    return m;
}

SyntheticVocab synthetic_vocab(int32_t first_special, int32_t n_vocab) {
    static const BpeModel bpe = train_bpe(synthetic_corpus(), kMaxMerges, kMinPairCount);
    SyntheticVocab v;
    v.tokens = bpe.tokens;
    v.merges = bpe.merges;
    v.types.assign(v.tokens.size(), int32_t(TokenType::Normal));
    const auto& specials = qwen_special_tokens();

    if (first_special == 0) first_special = int32_t(v.tokens.size());
    if (first_special < int32_t(v.tokens.size()))
        throw std::invalid_argument("synthetic vocabulary: special tokens at " +
                                    std::to_string(first_special) + " would overlap the " +
                                    std::to_string(v.tokens.size()) + " learned tokens");
    for (int32_t n = 0; int32_t(v.tokens.size()) < first_special; ++n) {
        v.tokens.push_back("<|niwa_unused_" + std::to_string(n) + "|>");
        v.types.push_back(int32_t(TokenType::Unused));
    }
    for (const std::string& s : specials) {
        v.tokens.push_back(s);
        v.types.push_back(int32_t(special_type(s)));
    }
    const auto n_real = int32_t(v.tokens.size());
    if (n_vocab == 0) n_vocab = (n_real + 63) / 64 * 64;
    if (n_vocab < n_real)
        throw std::invalid_argument("synthetic vocabulary: " + std::to_string(n_vocab) + " ids cannot hold " +
                                    std::to_string(n_real) + " tokens");
    for (int32_t id = n_real; id < n_vocab; ++id) {
        v.tokens.push_back("[PAD" + std::to_string(id) + "]");
        v.types.push_back(int32_t(TokenType::Unused));
    }
    v.endoftext_id = first_special;
    v.im_start_id = first_special + 1;
    v.im_end_id = first_special + 2;
    return v;
}

void SyntheticVocab::to_gguf(gguf::Writer& w) const {
    w.add_string("tokenizer.ggml.model", "gpt2");
    w.add_string("tokenizer.ggml.pre", "qwen35");
    w.add_string_array("tokenizer.ggml.tokens", tokens);
    w.add_i32_array("tokenizer.ggml.token_type", types);
    w.add_string_array("tokenizer.ggml.merges", merges);
    w.add_u32("tokenizer.ggml.eos_token_id", uint32_t(im_end_id));
    w.add_u32("tokenizer.ggml.padding_token_id", uint32_t(endoftext_id));
    w.add_u32("tokenizer.ggml.bos_token_id", uint32_t(endoftext_id));
    w.add_bool("tokenizer.ggml.add_bos_token", false);
    w.add_string("tokenizer.chat_template", std::string(text::synthetic_chat_template()));
}

}  // namespace niwa::model
