#include "engine/server/metrics.h"

#include <cstdio>

namespace niwa::server {

namespace {

std::string number(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    return buf;
}

void family(std::string& out, const std::string& name, const char* type, const char* help) {
    out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

void sample(std::string& out, const std::string& name, const std::string& labels, double v) {
    out += name + "{" + labels + "} " + number(v) + "\n";
}

}  // namespace

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double v) {
    size_t i = 0;
    while (i < bounds_.size() && v > bounds_[i]) ++i;
    ++counts_[i];
    sum_ += v;
    ++count_;
}

void Histogram::render(std::string& out, const std::string& name, const std::string& labels) const {
    uint64_t cumulative = 0;
    for (size_t i = 0; i <= bounds_.size(); ++i) {
        cumulative += counts_[i];
        const std::string le = i < bounds_.size() ? number(bounds_[i]) : "+Inf";
        out += name + "_bucket{" + labels + ",le=\"" + le + "\"} " + std::to_string(cumulative) + "\n";
    }
    sample(out, name + "_sum", labels, sum_);
    sample(out, name + "_count", labels, double(count_));
}

// Bucket bounds after vLLM's: sub-millisecond to minutes for first tokens and whole requests,
// finer for the gap between tokens.
Metrics::Metrics()
    : ttft_({0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,  0.25,  0.5,   0.75,
             1.0,   2.5,   5.0,  7.5,  10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}),
      itl_({0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0,
            40.0, 80.0}),
      queue_({0.3,  0.5,  0.8,  1.0,  1.5,   2.0,   2.5,   5.0,   10.0,   15.0,  20.0,
              30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}),
      e2e_({0.3,  0.5,  0.8,  1.0,  1.5,   2.0,   2.5,   5.0,   10.0,   15.0,  20.0,
            30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}) {
    for (const char* r : {"stop", "length", "abort", "error"}) finished_[r] = 0;
}

void Metrics::time_to_first_token(double s) {
    std::lock_guard lock(mu_);
    ttft_.observe(s);
}

void Metrics::inter_token_latency(double s, int n_tokens) {
    std::lock_guard lock(mu_);
    for (int i = 0; i < n_tokens; ++i) itl_.observe(s);
}

void Metrics::queue_time(double s) {
    std::lock_guard lock(mu_);
    queue_.observe(s);
}

void Metrics::e2e_latency(double s) {
    std::lock_guard lock(mu_);
    e2e_.observe(s);
}

void Metrics::finished(const std::string& reason) {
    std::lock_guard lock(mu_);
    ++finished_[reason];
}

std::string Metrics::render(const std::string& model_name, const sched::EngineStats& e) const {
    const std::string labels = "model_name=\"" + model_name + "\"";
    std::string out;
    family(out, "niwa:num_requests_running", "gauge", "Requests in the running batch.");
    sample(out, "niwa:num_requests_running", labels, e.running);
    family(out, "niwa:num_requests_waiting", "gauge", "Requests waiting to be scheduled.");
    sample(out, "niwa:num_requests_waiting", labels, e.waiting);
    family(out, "niwa:kv_cache_usage_perc", "gauge", "Fraction of KV-cache blocks in use (1 = full).");
    sample(out, "niwa:kv_cache_usage_perc", labels,
           e.kv_blocks_total > 0 ? double(e.kv_blocks_used) / double(e.kv_blocks_total) : 0.0);
    family(out, "niwa:num_preemptions_total", "counter", "Requests preempted so far.");
    sample(out, "niwa:num_preemptions_total", labels, double(e.preempted_total));
    family(out, "niwa:parked_sequences", "gauge", "Preempted requests whose caches wait in host RAM.");
    sample(out, "niwa:parked_sequences", labels, e.parked);
    family(out, "niwa:parked_bytes", "gauge", "Host RAM taken by parked caches.");
    sample(out, "niwa:parked_bytes", labels, double(e.parked_bytes));
    family(out, "niwa:num_parked_preemptions_total", "counter",
           "Preemptions that parked the caches in host RAM instead of recomputing them later.");
    sample(out, "niwa:num_parked_preemptions_total", labels, double(e.parked_total));
    family(out, "niwa:prompt_tokens_total", "counter", "Prompt tokens processed.");
    sample(out, "niwa:prompt_tokens_total", labels, double(e.prompt_tokens_total));
    family(out, "niwa:generation_tokens_total", "counter", "Tokens generated.");
    sample(out, "niwa:generation_tokens_total", labels, double(e.generation_tokens_total));
    family(out, "niwa:sampled_rows_reduced_total", "counter",
           "Sampled rows drawn from their reduction on the GPU instead of the whole row.");
    sample(out, "niwa:sampled_rows_reduced_total", labels, double(e.rows_reduced_total));
    family(out, "niwa:sampled_rows_fetched_total", "counter",
           "Reduced rows whose draw reached below the reduction, so the whole row came back.");
    sample(out, "niwa:sampled_rows_fetched_total", labels, double(e.rows_fetched_total));

    std::lock_guard lock(mu_);
    family(out, "niwa:request_success_total", "counter",
           "Finished requests by finish reason (abort: client went away).");
    for (const auto& [reason, n] : finished_)
        sample(out, "niwa:request_success_total", labels + ",finished_reason=\"" + reason + "\"", double(n));
    family(out, "niwa:time_to_first_token_seconds", "histogram",
           "Time from arrival to the first generated token.");
    ttft_.render(out, "niwa:time_to_first_token_seconds", labels);
    family(out, "niwa:inter_token_latency_seconds", "histogram",
           "Time between consecutive generated tokens of a request.");
    itl_.render(out, "niwa:inter_token_latency_seconds", labels);
    family(out, "niwa:request_queue_time_seconds", "histogram",
           "Time a request waited before it was first scheduled.");
    queue_.render(out, "niwa:request_queue_time_seconds", labels);
    family(out, "niwa:e2e_request_latency_seconds", "histogram",
           "Time from arrival to the last token of a request.");
    e2e_.render(out, "niwa:e2e_request_latency_seconds", labels);
    return out;
}

}  // namespace niwa::server
