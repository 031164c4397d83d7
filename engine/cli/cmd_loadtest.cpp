// `niwa-engine loadtest`: N clients stream chat completions from a running server at once and
// the latencies they saw are reported (time to first token, inter-token latency, tok/s); with
// --priority-probe, how long a priority-0 request waits while priority-10 work fills the server.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/cli/args.h"
#include "engine/cli/commands.h"

#ifdef NIWA_HAS_SERVER
#include <httplib.h>
#endif

namespace niwa::cli {

namespace {

constexpr const char* kHelp =
    "usage: niwa-engine loadtest --url http://127.0.0.1:8000 [options]\n"
    "Streams chat completions from a running server with N clients at once and reports time\n"
    "to first token and inter-token latency (p50/p90/p99) and the total tokens per second.\n\n"
    "  --url URL           the server (scheme://host:port)\n"
    "  --clients N         concurrent clients (default 8)\n"
    "  --requests M        requests per client, one after another (default 4)\n"
    "  --max-tokens K      max_tokens of each request (default 64)\n"
    "  --priority-probe    once the clients are running, send one priority-0 request (the\n"
    "                      clients send priority 10) and report its time to first token\n"
    "  --api-key KEY       sent as Authorization: Bearer KEY\n"
    "  --model NAME        the model field (default: the first of /v1/models)\n"
    "  --json              print the report as JSON\n";

#ifdef NIWA_HAS_SERVER

using Clock = std::chrono::steady_clock;

struct Sample {
    bool ok = false;
    std::string error;
    double ttft = 0;            // seconds to the first generated text
    std::vector<double> gaps;   // seconds between text events
    int completion_tokens = 0;  // from usage
    double total = 0;
};

struct Target {
    std::string url;
    std::string key;
    std::string model;
};

httplib::Headers headers(const Target& t) {
    httplib::Headers h;
    if (!t.key.empty()) h.emplace("Authorization", "Bearer " + t.key);
    return h;
}

// One streamed chat completion, timed from the request to the events that carry text.
Sample stream_once(const Target& t, int n, int max_tokens, int priority) {
    Sample s;
    httplib::Client cli(t.url);
    cli.set_read_timeout(600, 0);
    const nlohmann::json body = {
        {"model", t.model},
        {"messages",
         {{{"role", "user"}, {"content", "Tell me about the number " + std::to_string(n) + "."}}}},
        {"max_tokens", max_tokens},
        {"stream", true},
        {"stream_options", {{"include_usage", true}}},
        {"priority", priority}};
    httplib::Request req;
    req.method = "POST";
    req.path = "/v1/chat/completions";
    req.headers = headers(t);
    req.body = body.dump();
    req.set_header("Content-Type", "application/json");
    const auto start = Clock::now();
    std::optional<Clock::time_point> last;
    std::string buffer;
    req.content_receiver = [&](const char* data, size_t len, uint64_t, uint64_t) {
        buffer.append(data, len);
        for (size_t end; (end = buffer.find("\n\n")) != std::string::npos; buffer.erase(0, end + 2)) {
            const std::string event = buffer.substr(0, end);
            if (event.rfind("data: ", 0) != 0 || event == "data: [DONE]") continue;
            const auto j = nlohmann::json::parse(event.substr(6), nullptr, false);
            if (j.is_discarded()) continue;
            if (j.contains("usage") && j["usage"].is_object())
                s.completion_tokens = j["usage"].value("completion_tokens", 0);
            if (!j.contains("choices") || j["choices"].empty()) continue;
            const auto& delta = j["choices"][0]["delta"];
            const bool has_text = (delta.contains("content") && delta["content"].is_string() &&
                                   !delta["content"].get<std::string>().empty()) ||
                                  delta.contains("reasoning_content") || delta.contains("tool_calls");
            if (!has_text) continue;
            const auto now = Clock::now();
            if (!last)
                s.ttft = std::chrono::duration<double>(now - start).count();
            else
                s.gaps.push_back(std::chrono::duration<double>(now - *last).count());
            last = now;
        }
        return true;
    };
    httplib::Response res;
    httplib::Error err = httplib::Error::Success;
    const bool sent = cli.send(req, res, err);
    s.total = std::chrono::duration<double>(Clock::now() - start).count();
    if (!sent) {
        s.error = "request failed: " + httplib::to_string(err);
    } else if (res.status != 200) {
        s.error = "HTTP " + std::to_string(res.status);
    } else {
        s.ok = last.has_value();
        if (!s.ok) s.error = "no text in the stream";
    }
    return s;
}

double percentile(std::vector<double> v, double q) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, size_t(q * double(v.size() - 1) + 0.5))];
}

nlohmann::json percentiles(const std::vector<double>& v) {
    return {{"p50", percentile(v, 0.5)},
            {"p90", percentile(v, 0.9)},
            {"p99", percentile(v, 0.99)},
            {"n", v.size()}};
}

std::string first_model(const Target& t) {
    httplib::Client cli(t.url);
    auto r = cli.Get("/v1/models", headers(t));
    if (!r) throw std::runtime_error("cannot reach " + t.url + ": " + httplib::to_string(r.error()));
    if (r->status != 200)
        throw std::runtime_error("GET /v1/models answered " + std::to_string(r->status) + ": " + r->body);
    const auto j = nlohmann::json::parse(r->body);
    return j.at("data").at(0).at("id").get<std::string>();
}

int run_loadtest(int argc, char** argv) {
    const Args a("loadtest", argc, argv, {"url", "clients", "requests", "max-tokens", "api-key", "model"},
                 {"priority-probe", "json"});
    if (a.help()) {
        std::fputs(kHelp, stdout);
        return 0;
    }
    Target t{a.str("url"), a.str("api-key", ""), ""};
    const int clients = int(a.i64("clients", 8));
    const int requests = int(a.i64("requests", 4));
    const int max_tokens = int(a.i64("max-tokens", 64));
    if (clients < 1 || requests < 1 || max_tokens < 1)
        throw UsageError("--clients, --requests and --max-tokens must be at least 1");
    t.model = a.has("model") ? a.str("model") : first_model(t);

    std::mutex mu;
    std::vector<Sample> samples;
    std::atomic<int> started{0};
    const auto t0 = Clock::now();
    std::vector<std::thread> threads;
    for (int c = 0; c < clients; ++c) {
        threads.emplace_back([&, c] {
            for (int r = 0; r < requests; ++r) {
                ++started;
                Sample s = stream_once(t, c * requests + r, max_tokens, 10);
                std::lock_guard lock(mu);
                samples.push_back(std::move(s));
            }
        });
    }
    std::optional<Sample> probe;
    if (a.flag("priority-probe")) {
        // Give the clients' first requests time to reach the server and fill it.
        while (started < clients) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        probe = stream_once(t, -1, std::min(max_tokens, 8), 0);
    }
    for (auto& th : threads) th.join();
    const double wall = std::chrono::duration<double>(Clock::now() - t0).count();

    std::vector<double> ttft, itl;
    int ok = 0;
    long tokens = 0;
    std::vector<std::string> errors;
    for (const Sample& s : samples) {
        if (!s.ok) {
            errors.push_back(s.error);
            continue;
        }
        ++ok;
        ttft.push_back(s.ttft);
        itl.insert(itl.end(), s.gaps.begin(), s.gaps.end());
        tokens += s.completion_tokens;
    }
    nlohmann::json report = {{"url", t.url},
                             {"clients", clients},
                             {"requests", int(samples.size())},
                             {"ok", ok},
                             {"failed", int(errors.size())},
                             {"max_tokens", max_tokens},
                             {"wall_s", wall},
                             {"completion_tokens", tokens},
                             {"tokens_per_s", wall > 0 ? double(tokens) / wall : 0},
                             {"ttft_s", percentiles(ttft)},
                             {"itl_s", percentiles(itl)}};
    if (!errors.empty()) report["first_error"] = errors.front();
    if (probe) {
        report["priority_probe"] = {{"ok", probe->ok}, {"ttft_s", probe->ttft}, {"total_s", probe->total}};
        if (!probe->ok) report["priority_probe"]["error"] = probe->error;
    }
    if (a.flag("json")) {
        std::printf("%s\n", report.dump(2).c_str());
    } else {
        std::printf("%d clients x %d requests, max_tokens %d: %d ok, %zu failed in %.2f s\n", clients,
                    requests, max_tokens, ok, errors.size(), wall);
        std::printf("generated %ld tokens: %.1f tok/s\n", tokens, report["tokens_per_s"].get<double>());
        std::printf("time to first token  p50 %.3f s  p90 %.3f s  p99 %.3f s\n", percentile(ttft, 0.5),
                    percentile(ttft, 0.9), percentile(ttft, 0.99));
        std::printf("inter-token latency  p50 %.4f s  p90 %.4f s  p99 %.4f s\n", percentile(itl, 0.5),
                    percentile(itl, 0.9), percentile(itl, 0.99));
        if (probe)
            std::printf("priority-0 probe: %s, first token after %.3f s\n",
                        probe->ok ? "ok" : probe->error.c_str(), probe->ttft);
        if (!errors.empty()) std::printf("first error: %s\n", errors.front().c_str());
    }
    return errors.empty() && (!probe || probe->ok) ? 0 : 1;
}

#else

int run_loadtest(int, char**) {
    std::fputs("niwa-engine loadtest: this build has no HTTP support (NIWA_SERVER=OFF)\n", stderr);
    return 1;
}

#endif

}  // namespace

NIWA_COMMAND("loadtest", "measure a running server's latency under concurrent streaming clients",
             run_loadtest);

}  // namespace niwa::cli
