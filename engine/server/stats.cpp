#include "engine/server/stats.h"

#include "kernels/devices.h"

namespace niwa::server {

void Throughput::sample(const sched::EngineStats& s) {
    std::lock_guard lock(mu_);
    const auto now = std::chrono::steady_clock::now();
    points_.push_back({now, s.prompt_tokens_total, s.generation_tokens_total});
    // Keep one point at or before the window's start, so the rate always spans the window.
    while (points_.size() > 2 && std::chrono::duration<double>(now - points_[1].t).count() >= window_s_)
        points_.pop_front();
}

double Throughput::rate(uint64_t Point::*field) const {
    std::lock_guard lock(mu_);
    if (points_.size() < 2) return 0;
    const Point& a = points_.front();
    const Point& b = points_.back();
    const double dt = std::chrono::duration<double>(b.t - a.t).count();
    return dt > 0 ? double(b.*field - a.*field) / dt : 0;
}

double Throughput::prompt_per_s() const {
    return rate(&Point::prompt);
}
double Throughput::generation_per_s() const {
    return rate(&Point::generation);
}

nlohmann::ordered_json stats_json(const StatsInfo& info, const sched::EngineStats& s,
                                  const Throughput& rates) {
    nlohmann::ordered_json gpus = nlohmann::ordered_json::array();
    if (info.backend == "cuda") {
        try {
            for (const kernels::GpuInfo& g : kernels::list_gpus()) {
                // Used is every process's memory together; the engine's share is its plan
                // (weights, state, scratch, KV pool), the CUDA context not counted.
                const uint64_t ours =
                    size_t(g.index) < info.engine_vram.size() ? info.engine_vram[size_t(g.index)] : 0;
                gpus.push_back({{"index", g.index},
                                {"name", g.name},
                                {"vram_total_bytes", g.total_bytes},
                                {"vram_used_bytes", g.total_bytes - g.free_bytes},
                                {"vram_engine_bytes", ours}});
            }
        } catch (const std::exception&) {
            // A driver that fails now still answers the rest of the stats.
        }
    }
    const int64_t capacity = int64_t(s.kv_blocks_total) * s.kv_block_tokens;
    nlohmann::ordered_json j;
    j["model"] = info.model;
    j["backend"] = info.backend;
    j["tp"] = info.tp;
    j["uptime_s"] = int64_t(info.uptime_s);
    j["gpus"] = gpus;
    j["kv"] = {{"format", info.kv_format},          {"block_tokens", s.kv_block_tokens},
               {"blocks_total", s.kv_blocks_total}, {"blocks_used", s.kv_blocks_used},
               {"tokens_capacity", capacity},       {"tokens_used", s.kv_tokens_used}};
    j["state"] = {{"slots_total", s.slots_total}, {"slots_used", s.slots_used}};
    j["requests"] = {{"running", s.running}, {"waiting", s.waiting}, {"preempted_total", s.preempted_total}};
    j["park"] = {{"sequences", s.parked},
                 {"bytes", s.parked_bytes},
                 {"budget_bytes", s.park_budget_bytes},
                 {"parked_total", s.parked_total}};
    j["sampling"] = {{"rows_reduced_total", s.rows_reduced_total},
                     {"rows_fetched_total", s.rows_fetched_total}};
    j["throughput"] = {{"prompt_tokens_per_s", rates.prompt_per_s()},
                       {"generation_tokens_per_s", rates.generation_per_s()},
                       {"window_s", rates.window_s()}};
    return j;
}

}  // namespace niwa::server
