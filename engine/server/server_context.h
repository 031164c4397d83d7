// What every route shares: the options, the loading state, the loaded model and engine (once
// ready), API keys, metrics and token rates.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/model/model.h"
#include "engine/sched/engine.h"
#include "engine/server/auth.h"
#include "engine/server/metrics.h"
#include "engine/server/stats.h"
#include "engine/text/chat_template.h"
#include "engine/text/tokenizer.h"

namespace niwa::server {

struct ServerOptions {
    std::string host = "127.0.0.1";
    int port = 8000;
    std::string model_path;
    model::ModelConfig model;
    sched::EngineConfig engine;
    std::string served_model_name = "bonsai-27b";
    std::string api_keys_file;
    bool allow_unauthenticated = false;
    std::string chat_template_file;  // empty: the model file's template
};

// The model, its text side and the engine, built by the loader; immutable once published.
struct Loaded {
    std::unique_ptr<model::Model> model;
    text::Tokenizer tokenizer;
    text::ChatTemplate chat_template;
    std::vector<int32_t> eos_ids;
    std::unique_ptr<sched::Engine> engine;  // declared last: it stops before the model goes
};

class LoadState {
public:
    enum class Phase { Loading, Ready, Failed };
    void stage(const std::string& what, double progress);
    void ready();
    void failed(const std::string& error);
    Phase phase() const;
    double progress() const;
    std::string stage_name() const;
    std::string error() const;

private:
    mutable std::mutex mu_;
    Phase phase_ = Phase::Loading;
    double progress_ = 0;
    std::string stage_ = "starting";
    std::string error_;
};

class ServerContext {
public:
    explicit ServerContext(ServerOptions o) : options(std::move(o)) {}

    const ServerOptions options;
    Auth auth;
    Metrics metrics;
    Throughput throughput;
    LoadState load;
    std::atomic<bool> stopping{false};
    const std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();

    // Null until the model is ready.
    Loaded* loaded() const { return loaded_.load(std::memory_order_acquire); }
    void publish(std::unique_ptr<Loaded> l);
    void unload();  // at shutdown, after the HTTP server has stopped

private:
    std::unique_ptr<Loaded> owner_;
    std::atomic<Loaded*> loaded_{nullptr};
};

}  // namespace niwa::server
