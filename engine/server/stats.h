// /v1/engine/stats: what the engine is doing, as the JSON of DESIGN.md (the app's dashboard
// reads it), and the token rates over a sliding window.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/sched/engine.h"

namespace niwa::server {

// Prompt and generation tokens per second over the last `window_s` seconds, from samples of
// the engine's running totals.
class Throughput {
public:
    explicit Throughput(double window_s = 5) : window_s_(window_s) {}
    void sample(const sched::EngineStats& s);  // call about once a second
    double prompt_per_s() const;
    double generation_per_s() const;
    double window_s() const { return window_s_; }

private:
    struct Point {
        std::chrono::steady_clock::time_point t;
        uint64_t prompt, generation;
    };
    double rate(uint64_t Point::*field) const;

    double window_s_;
    mutable std::mutex mu_;
    std::deque<Point> points_;
};

struct StatsInfo {
    std::string model;
    std::string backend;
    int tp = 1;
    std::string kv_format;
    double uptime_s = 0;
    std::vector<uint64_t> engine_vram;  // by GPU index: bytes the engine's plan put there
};

nlohmann::ordered_json stats_json(const StatsInfo& info, const sched::EngineStats& s,
                                  const Throughput& rates);

}  // namespace niwa::server
