// Server-side request metrics and the Prometheus text of /metrics. Names follow vLLM's with
// the `niwa:` prefix, so dashboards written for vLLM need only the prefix changed.
#pragma once

#include <array>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "engine/sched/engine.h"

namespace niwa::server {

class Histogram {
public:
    explicit Histogram(std::vector<double> bounds);
    void observe(double v);
    // `name_bucket{le=..}`, `name_sum`, `name_count` lines, with `labels` (`k="v"`) in each.
    void render(std::string& out, const std::string& name, const std::string& labels) const;

private:
    std::vector<double> bounds_;
    std::vector<uint64_t> counts_;  // per bucket, not cumulative; the last is +Inf
    double sum_ = 0;
    uint64_t count_ = 0;
};

class Metrics {
public:
    Metrics();

    void time_to_first_token(double s);
    void inter_token_latency(double s, int n_tokens);  // n tokens that arrived s apart each
    void queue_time(double s);
    void e2e_latency(double s);
    void finished(const std::string& reason);  // stop, length, abort, error

    // The whole exposition, gauges and counters from `engine`.
    std::string render(const std::string& model_name, const sched::EngineStats& engine) const;

private:
    mutable std::mutex mu_;
    Histogram ttft_, itl_, queue_, e2e_;
    std::map<std::string, uint64_t> finished_;
};

}  // namespace niwa::server
