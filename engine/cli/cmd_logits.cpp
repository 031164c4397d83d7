// niwa-engine logits: the model's logits after each of the given tokens, as raw float32.
#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "engine/cli/args.h"
#include "engine/cli/commands.h"
#include "engine/cli/model_options.h"
#include "engine/model/sequences.h"
#include "engine/runtime/log.h"

namespace niwa::cli {

namespace {

constexpr const char* kHelp =
    "usage: niwa-engine logits --model FILE --tokens 1,2,3 --out FILE [options]\n"
    "Writes float32 little-endian [n_tokens, vocab]; row i holds the logits after token i.\n\n"
    "  --tokens LIST       comma-separated token ids\n"
    "  --out FILE          where to write the logits\n"
    "  --decode            feed the tokens one step each (decode path) instead of as one prompt\n";

int run_logits(int argc, char** argv) {
    auto names = model_option_names();
    names.insert({"tokens", "out"});
    const Args a("logits", argc, argv, names, {"decode"});
    if (a.help()) {
        std::printf("%s%s", kHelp, model_options_help());
        return 0;
    }
    log::init(a.str("log-level", "warn"));
    std::vector<int32_t> tokens;
    for (int64_t t : a.i64_list("tokens")) tokens.push_back(int32_t(t));
    const std::string out_path = a.str("out");
    auto model = model::Model::open(a.str("model"), model_config(a));
    const int64_t vocab = model->hparams().n_vocab;
    for (int32_t t : tokens)
        if (t < 0 || t >= vocab)
            throw UsageError("token " + std::to_string(t) + " is outside the vocabulary (0.." +
                             std::to_string(vocab - 1) + ")");
    model::Sequences seqs(*model);
    const int id = seqs.add();
    std::vector<float> logits;
    if (a.flag("decode")) {
        for (int32_t t : tokens) {
            auto r = seqs.feed({{id, {t}}});
            logits.insert(logits.end(), r[0].begin(), r[0].end());
        }
    } else {
        logits = seqs.feed({{id, tokens}}, /*all_logits=*/true)[0];
    }
    std::ofstream f(out_path, std::ios::binary);
    f.write(reinterpret_cast<const char*>(logits.data()), std::streamsize(logits.size() * sizeof(float)));
    if (!f) throw std::runtime_error("could not write " + out_path);
    return 0;
}

}  // namespace

NIWA_COMMAND("logits", "write the logits after each of the given tokens (float32)", run_logits);

}  // namespace niwa::cli
