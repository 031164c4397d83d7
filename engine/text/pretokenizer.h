// The pre-tokenizer: splits normalised text into the pieces BPE merges within (words,
// single digits, punctuation runs, whitespace), with the regular expression of the
// vocabulary's family (tokenizer.ggml.pre).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace niwa::text {

class PreTokenizer {
public:
    // "qwen2" (Qwen2/Qwen3) or "qwen35" (Qwen3.5: adds \p{M} to the letter runs). Throws
    // std::invalid_argument naming the value and the supported ones for anything else.
    static PreTokenizer by_name(const std::string& name);
    // The name whose pattern a tokenizer.json Split regex is, std::nullopt when unknown.
    static std::optional<std::string> name_for_hf_regex(std::string_view regex);
    static std::vector<std::string> supported_names();

    const std::string& name() const { return name_; }

    // Calls `piece` for each piece of valid UTF-8 `text`, in order; the pieces cover the
    // whole text.
    void split(std::string_view text, const std::function<void(std::string_view)>& piece) const;
    std::vector<std::string> split(std::string_view text) const;

private:
    struct Regex;
    PreTokenizer(std::string name, std::shared_ptr<const Regex> regex)
        : name_(std::move(name)), regex_(std::move(regex)) {}

    std::string name_;
    std::shared_ptr<const Regex> regex_;
};

}  // namespace niwa::text
