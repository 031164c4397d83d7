// `niwa-engine serve`: listens first, loads the model in the background (GET /health tells
// how far it is), then serves the OpenAI routes until SIGINT or SIGTERM.
#pragma once

#include <string>

#include "engine/server/server_context.h"

namespace niwa::server {

// True for 127.0.0.0/8, ::1 and localhost: addresses no other machine can reach.
bool is_loopback(const std::string& host);

// Runs the server; returns the process exit code (0 after a clean shutdown, 1 when the model
// fails to load or the address cannot be bound). Throws std::runtime_error for a bad API keys
// file or an unauthenticated non-loopback bind.
int serve(const ServerOptions& options);

}  // namespace niwa::server
