// The niwa-engine subcommands. Each lives in its own cmd_<name>.cpp and registers itself
// with a static NIWA_COMMAND(...) so main() needs no list of them.
#pragma once

namespace niwa::cli {

using CommandFn = int (*)(int argc, char** argv);  // argv holds the arguments after the name

struct Command {
    const char* name;
    const char* summary;  // one line for `niwa-engine --help`
    CommandFn run;
};

struct RegisterCommand {
    explicit RegisterCommand(Command c);
};

}  // namespace niwa::cli

#define NIWA_COMMAND(name, summary, fn) \
    static const ::niwa::cli::RegisterCommand niwa_command_registration_{{name, summary, fn}}
