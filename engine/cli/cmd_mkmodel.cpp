// niwa-engine mkmodel: writes a synthetic model (random ternary weights, the published
// file's exact layout) for tests and benchmarks; deterministic per seed.
#include <chrono>
#include <cstdio>
#include <thread>

#include "engine/cli/args.h"
#include "engine/cli/commands.h"
#include "engine/model/synthetic.h"

namespace niwa::cli {

namespace {

constexpr const char* kHelp =
    R"(usage: niwa-engine mkmodel --preset tiny|small|27b --seed S --out FILE [options]

Writes a synthetic qwen35 model: exactly the tensor layout, metadata and vocabulary shape of
Ternary-Bonsai-2-27B, with random ternary weights. The same seed gives the same bytes on
every machine, whatever --threads is.

  --preset NAME   tiny (4 layers, 256 wide), small (8 layers, 1024 wide) or 27b (the real
                  geometry, ~7.2 GB)
  --seed S        random seed (unsigned 64-bit integer)
  --out FILE      where to write the GGUF (written to FILE.tmp, then renamed)
  --quant Q       pq2_0 (default) or ptq1_0: packing of the ternary weights
  --unrotated     no Hadamard fold metadata (a model run without the transform)
  --threads N     generator threads (default: all cores)
)";

gguf::TensorType parse_quant(const std::string& q) {
    if (q == "pq2_0") return gguf::TensorType::PQ2_0;
    if (q == "ptq1_0") return gguf::TensorType::PTQ1_0;
    throw UsageError("--quant must be pq2_0 or ptq1_0, got '" + q + "'");
}

int run_mkmodel(int argc, char** argv) {
    const Args args("mkmodel", argc, argv, {"preset", "seed", "out", "quant", "threads"}, {"unrotated"});
    if (args.help()) {
        std::fputs(kHelp, stdout);
        return 0;
    }
    model::SyntheticOptions o;
    o.preset = args.str("preset");
    const std::string seed = args.str("seed");
    try {
        size_t used = 0;
        o.seed = std::stoull(seed, &used);
        if (used != seed.size() || seed.front() == '-') throw std::invalid_argument(seed);
    } catch (const std::exception&) {
        throw UsageError("--seed expects an unsigned integer, got '" + seed + "'");
    }
    o.quant = parse_quant(args.str("quant", "pq2_0"));
    o.rotated = !args.flag("unrotated");
    const int64_t threads = args.i64("threads", int64_t(std::max(1u, std::thread::hardware_concurrency())));
    if (threads < 1 || threads > 1024) throw UsageError("--threads must be between 1 and 1024");
    o.threads = int(threads);
    const std::string out = args.str("out");
    try {
        (void)model::synthetic_preset(o.preset);
    } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("--preset: ") + e.what());
    }

    const auto start = std::chrono::steady_clock::now();
    auto seconds = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    // Progress only where it is worth watching: a line per 5 % of a file of 1 GB or more.
    int reported = 0;
    o.progress = [&](uint64_t done, uint64_t total) {
        if (total < (uint64_t(1) << 30)) return;
        const int pct = int(done * 100 / total);
        if (pct < reported + 5 && done != total) return;
        reported = pct;
        std::fprintf(stderr, "mkmodel: %3d%%  %.2f / %.2f GB  %.1f s\n", pct, double(done) / 1e9,
                     double(total) / 1e9, seconds());
    };
    model::write_synthetic_model(o, out);
    std::fprintf(stderr, "mkmodel: wrote %s (%s, seed %llu) in %.2f s\n", out.c_str(), o.preset.c_str(),
                 static_cast<unsigned long long>(o.seed), seconds());
    return 0;
}

}  // namespace

NIWA_COMMAND("mkmodel", "write a synthetic model with random ternary weights", run_mkmodel);

}  // namespace niwa::cli
