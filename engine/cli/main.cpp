// niwa-engine: dispatches to the subcommand named by the first argument.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "engine/cli/args.h"
#include "engine/cli/commands.h"

namespace niwa::cli {

static std::vector<Command>& registry() {
    static std::vector<Command> commands;
    return commands;
}

RegisterCommand::RegisterCommand(Command c) { registry().push_back(c); }

static void print_usage(FILE* f) {
    auto commands = registry();
    std::sort(commands.begin(), commands.end(),
              [](const Command& a, const Command& b) { return std::strcmp(a.name, b.name) < 0; });
    std::fprintf(f, "usage: niwa-engine <command> [options]   (niwa-engine <command> --help for its options)\n\ncommands:\n");
    for (const Command& c : commands) std::fprintf(f, "  %-10s %s\n", c.name, c.summary);
}

}  // namespace niwa::cli

int main(int argc, char** argv) {
    using namespace niwa::cli;
    if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
        print_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!std::strcmp(argv[1], "--version")) {
        std::printf("niwa-engine %s\n", NIWA_VERSION);
        return 0;
    }
    for (const Command& c : registry()) {
        if (std::strcmp(c.name, argv[1]) != 0) continue;
        try {
            return c.run(argc - 2, argv + 2);
        } catch (const UsageError& e) {
            std::fprintf(stderr, "niwa-engine %s: %s\n", c.name, e.what());
            return 2;
        } catch (const std::exception& e) {
            std::fprintf(stderr, "niwa-engine %s: error: %s\n", c.name, e.what());
            return 1;
        }
    }
    std::fprintf(stderr, "niwa-engine: unknown command '%s'\n\n", argv[1]);
    print_usage(stderr);
    return 2;
}
