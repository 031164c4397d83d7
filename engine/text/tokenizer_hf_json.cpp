// Tokenizer::from_hf_json: a Hugging Face tokenizer.json of the byte-level BPE kind
// (normalizer NFC, Split by a known regex + ByteLevel, model BPE). Anything it cannot
// reproduce exactly is refused with the field that says so.
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "engine/text/tokenizer_impl.h"

namespace niwa::text {

namespace {

using nlohmann::json;

[[noreturn]] void unsupported(const std::string& path, const std::string& what) {
    throw std::runtime_error(path + ": unsupported tokenizer.json: " + what);
}

json read_json(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open tokenizer file '" + path + "'");
    try {
        return json::parse(in);
    } catch (const json::exception& e) {
        throw std::runtime_error(path + ": not valid JSON: " + e.what());
    }
}

std::string type_of(const json& j) {
    return j.is_object() ? j.value("type", std::string()) : std::string();
}

void check_normalizer(const std::string& path, const json& n) {
    if (n.is_null() || type_of(n) == "NFC") return;
    if (type_of(n) == "Sequence" && n.value("normalizers", json::array()).size() == 1 &&
        type_of(n["normalizers"][0]) == "NFC")
        return;
    unsupported(path, "normalizer " + n.dump() + " (only NFC is implemented)");
}

// The pre-tokenizer name for Sequence[Split(Regex), ByteLevel(use_regex=false)].
std::string pre_tokenizer_name(const std::string& path, const json& p) {
    const json steps = type_of(p) == "Sequence" ? p.value("pretokenizers", json::array()) : json::array({p});
    if (steps.size() != 2 || type_of(steps[0]) != "Split" || type_of(steps[1]) != "ByteLevel")
        unsupported(path, "pre_tokenizer must be Split then ByteLevel, got " + p.dump().substr(0, 300));
    const json& split = steps[0];
    if (split.value("behavior", std::string()) != "Isolated" || split.value("invert", false) ||
        !split.contains("pattern") || !split["pattern"].contains("Regex"))
        unsupported(path, "Split must be an Isolated, non-inverted Regex split");
    if (steps[1].value("use_regex", true) || steps[1].value("add_prefix_space", false))
        unsupported(path, "ByteLevel pre-tokenizer with use_regex or add_prefix_space");
    const std::string regex = split["pattern"]["Regex"].get<std::string>();
    if (auto name = PreTokenizer::name_for_hf_regex(regex)) return *name;
    std::string known;
    for (const auto& n : PreTokenizer::supported_names()) known += (known.empty() ? "" : ", ") + n;
    unsupported(path, "Split regex " + json(regex).dump() + " is none of the known patterns (" + known + ")");
}

void read_model(const std::string& path, const json& m, TokenizerSpec& spec) {
    if (type_of(m) != "BPE") unsupported(path, "model.type must be BPE");
    if (m.value("byte_fallback", false)) unsupported(path, "model.byte_fallback");
    for (const char* affix : {"continuing_subword_prefix", "end_of_word_suffix"}) {
        if (m.contains(affix) && m[affix].is_string() && !m[affix].get<std::string>().empty())
            unsupported(path, std::string("model.") + affix);
    }
    spec.ignore_merges = m.value("ignore_merges", false);
    for (const auto& [text, id] : m.at("vocab").items()) {
        const int64_t i = id.get<int64_t>();
        if (i < 0 || i > (int64_t{1} << 30))
            throw std::runtime_error(path + ": vocab id " + std::to_string(i));
        if (static_cast<size_t>(i) >= spec.tokens.size()) {
            spec.tokens.resize(i + 1);
            spec.kinds.resize(i + 1, TokenKind::kUnused);
        }
        spec.tokens[i] = text;
        spec.kinds[i] = TokenKind::kNormal;
    }
    for (const json& merge : m.at("merges")) {
        if (merge.is_array() && merge.size() == 2) {
            spec.merges.emplace_back(merge[0].get<std::string>(), merge[1].get<std::string>());
            continue;
        }
        const std::string s = merge.get<std::string>();
        const size_t space = s.find(' ', 1);
        if (space == std::string::npos)
            throw std::runtime_error(path + ": merge '" + s + "' is not 'left right'");
        spec.merges.emplace_back(s.substr(0, space), s.substr(space + 1));
    }
}

void read_added_tokens(const std::string& path, const json& added, TokenizerSpec& spec) {
    for (const json& t : added) {
        const int64_t id = t.at("id").get<int64_t>();
        const std::string content = t.at("content").get<std::string>();
        if (t.value("lstrip", false) || t.value("rstrip", false) || t.value("single_word", false))
            unsupported(path, "added token '" + content + "' uses lstrip/rstrip/single_word");
        if (id < 0 || id > (int64_t{1} << 30))
            throw std::runtime_error(path + ": added token id " + std::to_string(id));
        if (static_cast<size_t>(id) >= spec.tokens.size()) {
            spec.tokens.resize(id + 1);
            spec.kinds.resize(id + 1, TokenKind::kUnused);
        }
        spec.tokens[id] = content;
        spec.kinds[id] = t.value("special", false) ? TokenKind::kSpecial : TokenKind::kAdded;
    }
}

// tokenizer.json does not name the end-of-sequence token; tokenizer_config.json beside it does.
void read_eos(const std::string& path, TokenizerSpec& spec) {
    const auto config = std::filesystem::path(path).parent_path() / "tokenizer_config.json";
    if (!std::filesystem::exists(config)) return;
    const json c = read_json(config.string());
    if (!c.contains("eos_token")) return;
    const json& e = c["eos_token"];
    const std::string eos = e.is_string()   ? e.get<std::string>()
                            : e.is_object() ? e.value("content", "")
                                            : "";
    for (size_t id = 0; id < spec.tokens.size(); ++id)
        if (spec.kinds[id] != TokenKind::kUnused && spec.tokens[id] == eos)
            spec.eos.push_back(static_cast<int32_t>(id));
}

}  // namespace

Tokenizer Tokenizer::from_hf_json(const std::string& path) {
    const json j = read_json(path);
    TokenizerSpec spec;
    spec.source = path;
    try {
        check_normalizer(path, j.value("normalizer", json()));
        spec.pre = pre_tokenizer_name(path, j.value("pre_tokenizer", json()));
        if (j.contains("decoder") && !j["decoder"].is_null() && type_of(j["decoder"]) != "ByteLevel")
            unsupported(path, "decoder " + type_of(j["decoder"]) + " (only ByteLevel)");
        read_model(path, j.at("model"), spec);
        read_added_tokens(path, j.value("added_tokens", json::array()), spec);
    } catch (const json::exception& e) {
        throw std::runtime_error(path + ": malformed tokenizer.json: " + e.what());
    }
    read_eos(path, spec);
    return Tokenizer(std::make_shared<const Impl>(std::move(spec)));
}

}  // namespace niwa::text
