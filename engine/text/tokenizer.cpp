#include "engine/text/tokenizer.h"

#include <algorithm>
#include <stdexcept>

#include "engine/text/byte_level.h"
#include "engine/text/tokenizer_impl.h"
#include "engine/text/unicode.h"

namespace niwa::text {

namespace {

std::unordered_map<std::string, int32_t> index_by_text(const TokenizerSpec& spec) {
    std::unordered_map<std::string, int32_t> index;
    index.reserve(spec.tokens.size());
    for (size_t id = 0; id < spec.tokens.size(); ++id) {
        if (spec.kinds[id] == TokenKind::kUnused) continue;
        // Added tokens win over a normal entry of the same text: they are what the
        // vocabulary's author meant that text to be.
        auto [it, fresh] = index.try_emplace(spec.tokens[id], static_cast<int32_t>(id));
        if (!fresh && spec.kinds[id] != TokenKind::kNormal) it->second = static_cast<int32_t>(id);
    }
    return index;
}

std::array<int32_t, 256> byte_tokens(const std::unordered_map<std::string, int32_t>& by_text,
                                     const std::string& source) {
    std::array<int32_t, 256> ids{};
    const auto& symbols = byte_level_symbols();
    for (int b = 0; b < 256; ++b) {
        auto it = by_text.find(symbols[b]);
        if (it == by_text.end())
            throw std::runtime_error(source + ": the vocabulary has no token for byte 0x" +
                                     "0123456789ABCDEF"[b >> 4] + "0123456789ABCDEF"[b & 15] + " ('" +
                                     symbols[b] + "'), so it is not a byte-level BPE vocabulary");
        ids[b] = it->second;
    }
    return ids;
}

}  // namespace

Tokenizer::Impl::Impl(TokenizerSpec spec)
    : source(spec.source),
      by_text(index_by_text(spec)),
      pre(PreTokenizer::by_name(spec.pre)),
      bpe(byte_tokens(by_text, spec.source)),
      ignore_merges(spec.ignore_merges),
      eos(spec.eos) {
    const size_t n = spec.tokens.size();
    bytes.resize(n);
    for (size_t id = 0; id < n; ++id) {
        const TokenKind k = spec.kinds[id];
        if (k == TokenKind::kUnused) continue;
        if (k != TokenKind::kNormal) {
            bytes[id] = spec.tokens[id];
            if (spec.tokens[id].empty()) continue;
            added_by_first_byte[static_cast<unsigned char>(spec.tokens[id][0])].push_back(
                static_cast<int32_t>(id));
            continue;
        }
        auto decoded = byte_level_decode(spec.tokens[id]);
        if (!decoded)
            throw std::runtime_error(source + ": token " + std::to_string(id) + " ('" + spec.tokens[id] +
                                     "') is not made of byte-level symbols");
        bytes[id] = std::move(*decoded);
        if (ignore_merges) by_bytes.try_emplace(bytes[id], static_cast<int32_t>(id));
    }
    for (auto& list : added_by_first_byte)
        std::stable_sort(list.begin(), list.end(),
                         [&](int32_t a, int32_t b) { return spec.tokens[a].size() > spec.tokens[b].size(); });

    int32_t rank = 0;
    for (const auto& [left, right] : spec.merges) {
        auto l = by_text.find(left), r = by_text.find(right), m = by_text.find(left + right);
        if (l == by_text.end() || r == by_text.end() || m == by_text.end())
            throw std::runtime_error(source + ": merge " + std::to_string(rank) + " ('" + left + " " + right +
                                     "') names a token that is not in the vocabulary");
        bpe.add_merge(l->second, r->second, m->second, rank++);
    }
    text = std::move(spec.tokens);
    kind = std::move(spec.kinds);
}

std::vector<int32_t> Tokenizer::encode(std::string_view input, bool parse_special) const {
    const Impl& im = *impl_;
    const std::string text = utf8_sanitize(input);
    std::vector<int32_t> ids;
    ids.reserve(text.size() / 3 + 4);

    auto encode_plain = [&](std::string_view section) {
        if (section.empty()) return;
        const std::string normal = nfc(section);
        im.pre.split(normal, [&](std::string_view piece) {
            if (im.ignore_merges) {
                auto it = im.by_bytes.find(std::string(piece));
                if (it != im.by_bytes.end()) {
                    ids.push_back(it->second);
                    return;
                }
            }
            im.bpe.encode(piece, ids);
        });
    };

    // Added tokens are found in the raw text first, so that neither NFC nor the split can
    // break them; the text between them is encoded on its own, as the reference does.
    size_t plain_start = 0;
    size_t i = 0;
    while (i < text.size()) {
        const auto& candidates = im.added_by_first_byte[static_cast<unsigned char>(text[i])];
        int32_t found = -1;
        for (int32_t id : candidates) {
            if (!parse_special && im.kind[id] == TokenKind::kSpecial) continue;
            if (std::string_view(text).substr(i).starts_with(im.text[id])) {
                found = id;
                break;
            }
        }
        if (found < 0) {
            ++i;
            continue;
        }
        encode_plain(std::string_view(text).substr(plain_start, i - plain_start));
        ids.push_back(found);
        i += im.text[found].size();
        plain_start = i;
    }
    encode_plain(std::string_view(text).substr(plain_start));
    return ids;
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool skip_special) const {
    const Impl& im = *impl_;
    std::string out;
    std::string pending;  // bytes of normal tokens since the last added token
    for (int32_t id : ids) {
        if (id < 0 || id >= n_vocab())
            throw std::out_of_range("token id " + std::to_string(id) + " is outside the vocabulary (0.." +
                                    std::to_string(n_vocab() - 1) + ")");
        const TokenKind k = im.kind[id];
        if (k == TokenKind::kNormal) {
            pending += im.bytes[id];
            continue;
        }
        if (k == TokenKind::kUnused || (skip_special && k == TokenKind::kSpecial)) continue;
        // Added tokens are text, not bytes: bytes on either side are decoded apart from them.
        utf8_decode_replacing(pending, true, out);
        pending.clear();
        out += im.bytes[id];
    }
    utf8_decode_replacing(pending, true, out);
    return out;
}

std::string_view Tokenizer::token_text(int32_t id) const {
    if (id < 0 || id >= n_vocab())
        throw std::out_of_range("token id " + std::to_string(id) + " is outside the vocabulary");
    return impl_->text[id];
}

std::optional<int32_t> Tokenizer::find_token(std::string_view text) const {
    auto it = impl_->by_text.find(std::string(text));
    if (it == impl_->by_text.end()) return std::nullopt;
    return it->second;
}

int32_t Tokenizer::n_vocab() const {
    return static_cast<int32_t>(impl_->text.size());
}

std::vector<int32_t> Tokenizer::eos_ids() const {
    std::vector<int32_t> ids = impl_->eos;
    for (const char* name : {"<|im_end|>", "<|endoftext|>"})
        if (auto id = find_token(name)) ids.push_back(*id);
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    return ids;
}

bool Tokenizer::is_special(int32_t id) const {
    return id >= 0 && id < n_vocab() && impl_->kind[id] == TokenKind::kSpecial;
}

std::string_view Tokenizer::token_bytes(int32_t id) const {
    if (id < 0 || id >= n_vocab())
        throw std::out_of_range("token id " + std::to_string(id) + " is outside the vocabulary");
    return impl_->bytes[id];
}

bool Tokenizer::is_byte_level(int32_t id) const {
    return id >= 0 && id < n_vocab() && impl_->kind[id] == TokenKind::kNormal;
}

const std::string& Tokenizer::pre_tokenizer() const {
    return impl_->pre.name();
}

}  // namespace niwa::text
