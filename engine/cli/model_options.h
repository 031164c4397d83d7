// The model options shared by subcommands that load a model (--model, --backend, --tp, ...).
#pragma once

#include <set>
#include <string>

#include "engine/cli/args.h"
#include "engine/model/model.h"

namespace niwa::cli {

// Option names to accept in Args for model_config().
std::set<std::string> model_option_names();
// Help lines for them.
const char* model_options_help();
model::ModelConfig model_config(const Args& a);

}  // namespace niwa::cli
