#include "engine/text/pretokenizer.h"

#include <mutex>
#include <stdexcept>

#include <pcre2.h>

namespace niwa::text {

namespace {

// The patterns as tokenizer.json and MODEL.md spell them.
constexpr std::string_view kQwen2Hf =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kQwen35Hf =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// The same patterns for PCRE2. \s is spelled out as Unicode's White_Space property (what
// the reference tokenizers' regex engine matches): PCRE2's own \s leaves out U+0085.
#define NIWA_WS R"(\t-\r\x{85}\p{Z})"
constexpr const char* kQwen2 = R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^)" NIWA_WS
                               R"(\p{L}\p{N}]+[\r\n]*|[)" NIWA_WS R"(]*[\r\n]+|[)" NIWA_WS
                               R"(]+(?![^)" NIWA_WS R"(])|[)" NIWA_WS R"(]+)";
constexpr const char* kQwen35 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^)" NIWA_WS
    R"(\p{L}\p{M}\p{N}]+[\r\n]*|[)" NIWA_WS R"(]*[\r\n]+|[)" NIWA_WS R"(]+(?![^)" NIWA_WS R"(])|[)" NIWA_WS
    R"(]+)";
#undef NIWA_WS

struct Known {
    const char* name;
    std::string_view hf;
    const char* pcre;
};
constexpr Known kKnown[] = {{"qwen2", kQwen2Hf, kQwen2}, {"qwen35", kQwen35Hf, kQwen35}};

}  // namespace

struct PreTokenizer::Regex {
    pcre2_code* code = nullptr;
    bool jit = false;

    explicit Regex(const char* pattern) {
        int err = 0;
        PCRE2_SIZE at = 0;
        code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern), PCRE2_ZERO_TERMINATED,
                             PCRE2_UTF | PCRE2_UCP | PCRE2_NO_UTF_CHECK, &err, &at, nullptr);
        if (!code) {
            PCRE2_UCHAR msg[256];
            pcre2_get_error_message(err, msg, sizeof msg);
            throw std::logic_error("pre-tokenizer pattern does not compile at " + std::to_string(at) + ": " +
                                   reinterpret_cast<const char*>(msg));
        }
        jit = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
    }
    ~Regex() { pcre2_code_free(code); }
    Regex(const Regex&) = delete;
    Regex& operator=(const Regex&) = delete;
};

PreTokenizer PreTokenizer::by_name(const std::string& name) {
    for (const Known& k : kKnown) {
        if (name != k.name) continue;
        // One compiled pattern per family for the whole process: compiling with JIT is the
        // slow part, and the code is read-only once made.
        static std::mutex mutex;
        static std::shared_ptr<const Regex> compiled[std::size(kKnown)];
        const size_t index = static_cast<size_t>(&k - kKnown);
        std::lock_guard lock(mutex);
        if (!compiled[index]) compiled[index] = std::make_shared<const Regex>(k.pcre);
        return PreTokenizer(k.name, compiled[index]);
    }
    std::string supported;
    for (const Known& k : kKnown) supported += std::string(supported.empty() ? "" : ", ") + k.name;
    throw std::invalid_argument("unsupported pre-tokenizer '" + name + "' (supported: " + supported + ")");
}

std::optional<std::string> PreTokenizer::name_for_hf_regex(std::string_view regex) {
    for (const Known& k : kKnown)
        if (regex == k.hf) return std::string(k.name);
    return std::nullopt;
}

std::vector<std::string> PreTokenizer::supported_names() {
    std::vector<std::string> names;
    for (const Known& k : kKnown) names.emplace_back(k.name);
    return names;
}

void PreTokenizer::split(std::string_view text, const std::function<void(std::string_view)>& piece) const {
    // Match data is per call: a tokenizer is shared by the server's threads.
    std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> md(
        pcre2_match_data_create_from_pattern(regex_->code, nullptr), &pcre2_match_data_free);
    const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
    size_t pos = 0;
    size_t emitted = 0;  // text before this has been handed out
    while (pos < text.size()) {
        // The text is validated once by the caller; NO_UTF_CHECK keeps each match O(piece).
        const int rc = regex_->jit ? pcre2_jit_match(regex_->code, subject, text.size(), pos,
                                                     PCRE2_NO_UTF_CHECK, md.get(), nullptr)
                                   : pcre2_match(regex_->code, subject, text.size(), pos, PCRE2_NO_UTF_CHECK,
                                                 md.get(), nullptr);
        if (rc == PCRE2_ERROR_NOMATCH) break;
        if (rc < 0) {
            PCRE2_UCHAR msg[256];
            pcre2_get_error_message(rc, msg, sizeof msg);
            throw std::runtime_error("pre-tokenizer failed at byte " + std::to_string(pos) + ": " +
                                     reinterpret_cast<const char*>(msg));
        }
        const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md.get());
        const size_t start = ov[0], end = ov[1];
        if (start > emitted) piece(text.substr(emitted, start - emitted));  // text no branch matched
        if (end > start) {
            piece(text.substr(start, end - start));
            emitted = end;
            pos = end;
        } else {
            // An empty match cannot happen with these patterns; step one character to be safe.
            emitted = start;
            pos = start + 1;
            while (pos < text.size() && (static_cast<unsigned char>(text[pos]) & 0xC0) == 0x80) ++pos;
        }
    }
    if (emitted < text.size()) piece(text.substr(emitted));
}

std::vector<std::string> PreTokenizer::split(std::string_view text) const {
    std::vector<std::string> out;
    split(text, [&](std::string_view p) { out.emplace_back(p); });
    return out;
}

}  // namespace niwa::text
