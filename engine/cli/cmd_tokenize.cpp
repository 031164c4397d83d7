// niwa-engine tokenize: text -> ids, ids -> text, and a tokenizer speed benchmark, with the
// vocabulary of a GGUF model or of a Hugging Face tokenizer.json.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "engine/cli/args.h"
#include "engine/cli/commands.h"
#include "engine/gguf/reader.h"
#include "engine/text/tokenizer.h"

namespace niwa::cli {

namespace {

constexpr const char* kHelp =
    "usage: niwa-engine tokenize (--model FILE | --tokenizer-json FILE)\n"
    "                            (--text TEXT | --detokenize 1,2,3 | --bench FILE) [options]\n"
    "\n"
    "  --model FILE           a GGUF model (its tokenizer.ggml.* keys)\n"
    "  --tokenizer-json FILE  a Hugging Face tokenizer.json instead of a model\n"
    "  --text TEXT            print {\"ids\":[...]} for TEXT\n"
    "  --detokenize IDS       print the text of comma-separated ids\n"
    "  --bench FILE           time tokenizing FILE on one thread (cold cache, then warm)\n"
    "  --no-special           encode special-token text (<|im_start|>, ...) as plain text\n"
    "  --skip-special         with --detokenize: leave special tokens out\n"
    "  --json                 with --bench: print one JSON object\n";

text::Tokenizer load(const Args& a) {
    if (a.has("model") == a.has("tokenizer-json"))
        throw UsageError("give exactly one of --model and --tokenizer-json");
    if (a.has("tokenizer-json")) return text::Tokenizer::from_hf_json(a.str("tokenizer-json"));
    const gguf::Reader r = gguf::Reader::open(a.str("model"));
    return text::Tokenizer::from_gguf(r);
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open '" + path + "'");
    return std::string(std::istreambuf_iterator<char>(in), {});
}

int bench(const text::Tokenizer& tok, const Args& a) {
    const std::string data = read_file(a.str("bench"));
    const bool special = !a.flag("no-special");
    using clock = std::chrono::steady_clock;
    auto timed = [&](size_t& n_tokens) {
        const auto t0 = clock::now();
        n_tokens = tok.encode(data, special).size();
        return std::chrono::duration<double>(clock::now() - t0).count();
    };
    size_t tokens = 0;
    const double cold = timed(tokens);  // first pass: the word cache starts empty
    const double warm = timed(tokens);
    const double mb = static_cast<double>(data.size()) / 1e6;
    if (a.flag("json")) {
        const nlohmann::json j = {
            {"bytes", data.size()},       {"tokens", tokens},        {"seconds", cold},
            {"mb_per_s", mb / cold},      {"seconds_warm", warm},    {"mb_per_s_warm", mb / warm},
            {"pre", tok.pre_tokenizer()}, {"n_vocab", tok.n_vocab()}};
        std::printf("%s\n", j.dump().c_str());
    } else {
        std::printf(
            "bytes    %zu\ntokens   %zu\nseconds  %.4f (warm cache %.4f)\nMB/s     %.2f (warm cache %.2f)\n",
            data.size(), tokens, cold, warm, mb / cold, mb / warm);
    }
    return 0;
}

int run(int argc, char** argv) {
    const Args a("tokenize", argc, argv, {"model", "tokenizer-json", "text", "detokenize", "bench"},
                 {"no-special", "skip-special", "json"});
    if (a.help()) {
        std::fputs(kHelp, stdout);
        return 0;
    }
    const int modes = a.has("text") + a.has("detokenize") + a.has("bench");
    if (modes != 1) throw UsageError("give exactly one of --text, --detokenize and --bench (see --help)");
    const text::Tokenizer tok = load(a);
    if (a.has("bench")) return bench(tok, a);
    if (a.has("text")) {
        const nlohmann::json j = {{"ids", tok.encode(a.str("text"), !a.flag("no-special"))}};
        std::printf("%s\n", j.dump().c_str());
        return 0;
    }
    std::vector<int32_t> ids;
    for (int64_t id : a.i64_list("detokenize")) {
        if (id < 0 || id >= tok.n_vocab())
            throw UsageError("--detokenize: id " + std::to_string(id) + " is outside the vocabulary (0.." +
                             std::to_string(tok.n_vocab() - 1) + ")");
        ids.push_back(static_cast<int32_t>(id));
    }
    const std::string text = tok.decode(ids, a.flag("skip-special"));
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
}

}  // namespace

NIWA_COMMAND("tokenize", "text to token ids and back; tokenizer benchmark", run);

}  // namespace niwa::cli
