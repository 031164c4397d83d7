// niwa-engine devices: the GPUs the engine can use (what the app's first-run check asks).
#include <cstdio>

#include <nlohmann/json.hpp>

#include "engine/cli/args.h"
#include "engine/cli/commands.h"
#include "kernels/devices.h"

namespace niwa::cli {

namespace {

int run_devices(int argc, char** argv) {
    const Args a("devices", argc, argv, {}, {"json"});
    if (a.help()) {
        std::printf(
            "usage: niwa-engine devices [--json]\nLists the GPUs this build of niwa-engine can use.\n");
        return 0;
    }
    const auto gpus = kernels::list_gpus();
    if (a.flag("json")) {
        nlohmann::json j = {{"cuda_built", kernels::cuda_built()}, {"gpus", nlohmann::json::array()}};
        for (const auto& g : gpus)
            j["gpus"].push_back(
                {{"index", g.index},
                 {"name", g.name},
                 {"compute_capability", std::to_string(g.cc_major) + "." + std::to_string(g.cc_minor)},
                 {"sm_count", g.sm_count},
                 {"vram_total_bytes", g.total_bytes},
                 {"vram_free_bytes", g.free_bytes}});
        std::printf("%s\n", j.dump().c_str());
        return 0;
    }
    if (!kernels::cuda_built()) std::printf("this niwa-engine was built without CUDA (CPU backend only)\n");
    if (gpus.empty()) std::printf("no GPU found\n");
    for (const auto& g : gpus)
        std::printf("GPU %d: %s (sm_%d%d, %d SMs), %.1f GiB, %.1f GiB free\n", g.index, g.name.c_str(),
                    g.cc_major, g.cc_minor, g.sm_count, double(g.total_bytes) / (1ull << 30),
                    double(g.free_bytes) / (1ull << 30));
    return 0;
}

}  // namespace

NIWA_COMMAND("devices", "list the GPUs this engine can use", run_devices);

}  // namespace niwa::cli
