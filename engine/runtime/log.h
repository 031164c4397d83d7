// Logging: one spdlog logger per component (gguf, model, sched, server, cuda, ...), text or
// one JSON object per line (--log-format json) on stderr. Never log prompts or keys at info.
#pragma once

#include <memory>
#include <string>

#include <spdlog/spdlog.h>

namespace niwa::log {

enum class Format { Text, Json };

// Sets the level ("trace".."off") and format for every logger, existing and future.
void init(const std::string& level = "info", Format format = Format::Text);
// The logger of a component, created on first use.
std::shared_ptr<spdlog::logger> get(const std::string& component);

}  // namespace niwa::log
