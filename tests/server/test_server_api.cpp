// The OpenAI routes end to end: chat (json_object included) and completions through the OpenAI
// Node client, every malformed input's error, a dropped stream freeing its seat, /metrics as
// Prometheus text and /v1/engine/stats with DESIGN.md's keys (JSON and SSE).
#include <QRegularExpression>
#include <QTest>

#include <map>
#include <set>

#include <httplib.h>

#include "server/server_process.h"
#include "support/engine_process.h"

using namespace niwa::test;

namespace {

// The keys of DESIGN.md's stats JSON, at every level (arrays: the keys of their elements).
void key_paths(const nlohmann::json& j, const std::string& prefix, std::set<std::string>& out) {
    if (j.is_object()) {
        for (const auto& [k, v] : j.items()) {
            out.insert(prefix + k);
            key_paths(v, prefix + k + ".", out);
        }
    } else if (j.is_array() && !j.empty()) {
        key_paths(j[0], prefix + "[].", out);
    }
}

// DESIGN.md's example, key for key.
nlohmann::json design_stats() {
    using J = nlohmann::json;
    return {{"model", "bonsai-27b"},
            {"backend", "cuda"},
            {"tp", 2},
            {"uptime_s", 0},
            {"gpus", J::array({{{"index", 0},
                                {"name", ""},
                                {"vram_total_bytes", 0},
                                {"vram_used_bytes", 0},
                                {"vram_engine_bytes", 0}}})},
            {"kv",
             {{"format", "k3v2"},
              {"block_tokens", 0},
              {"blocks_total", 0},
              {"blocks_used", 0},
              {"tokens_capacity", 0},
              {"tokens_used", 0}}},
            {"state", {{"slots_total", 0}, {"slots_used", 0}}},
            {"requests", {{"running", 0}, {"waiting", 0}, {"preempted_total", 0}}},
            {"throughput", {{"prompt_tokens_per_s", 0}, {"generation_tokens_per_s", 0}, {"window_s", 5}}}};
}

void check_stats(const nlohmann::json& s) {
    std::set<std::string> want, got;
    key_paths(design_stats(), "", want);
    // Added beside the design's keys (docs/API.md): host RAM of preempted requests' caches.
    want.insert({"park", "park.sequences", "park.bytes", "park.budget_bytes", "park.parked_total"});
    // And the sampled rows drawn from their reduction on the device, and those fetched whole.
    want.insert({"sampling", "sampling.rows_reduced_total", "sampling.rows_fetched_total"});
    key_paths(s, "", got);
    // The CPU backend lists no GPUs, so the GPU entry's keys cannot appear.
    std::erase_if(want, [](const std::string& k) { return k.rfind("gpus.[].", 0) == 0; });
    QCOMPARE(got, want);
    QCOMPARE(s["model"].get<std::string>(), std::string("bonsai-27b"));
    QCOMPARE(s["backend"].get<std::string>(), std::string("cpu"));
    QVERIFY(s["gpus"].is_array());
    const auto& kv = s["kv"];
    QVERIFY(kv["blocks_total"].get<int64_t>() > 0);
    QCOMPARE(kv["tokens_capacity"].get<int64_t>(),
             kv["blocks_total"].get<int64_t>() * kv["block_tokens"].get<int64_t>());
    QVERIFY(s["state"]["slots_total"].get<int>() >= 1);
    QCOMPARE(s["throughput"]["window_s"].get<double>(), 5.0);
}

}  // namespace

class TestServerApi : public QObject {
    Q_OBJECT

    ServerProcess server;

private slots:
    void initTestCase() {
        const QString model = synthetic_model("tiny");
        QVERIFY(!model.isEmpty());
        QVERIFY(server.start(model, {"--max-context", "512", "--max-seqs", "4"}));
    }

    void chat() { QVERIFY(run_node("server_chat.mjs", server)); }
    void jsonObject() { QVERIFY(run_node("server_json.mjs", server)); }
    void completions() { QVERIFY(run_node("server_completions.mjs", server)); }
    void errors() { QVERIFY(run_node("server_errors.mjs", server)); }
    void disconnectFreesTheSeat() { QVERIFY(run_node("server_disconnect.mjs", server)); }

    void metricsAreProm() {
        const HttpReply r = http_get(server.port(), "/metrics");
        QCOMPARE(r.status, 200);
        const QRegularExpression help("^# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) \\S.*$");
        const QRegularExpression type("^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram)$");
        const QRegularExpression sample(
            "^([a-zA-Z_:][a-zA-Z0-9_:]*)\\{((?:[a-zA-Z_]+=\"[^\"]*\",?)*)\\} (\\S+)$");
        std::map<std::string, std::string> types;
        std::map<std::string, double> values;  // name{labels} -> value
        std::map<std::string, std::vector<double>> buckets;
        for (const QString& line : QString::fromStdString(r.body).split('\n', Qt::SkipEmptyParts)) {
            if (auto m = type.match(line); m.hasMatch()) {
                QVERIFY2(!types.count(m.captured(1).toStdString()), qPrintable("TYPE twice: " + line));
                types[m.captured(1).toStdString()] = m.captured(2).toStdString();
                continue;
            }
            if (help.match(line).hasMatch()) continue;
            const auto m = sample.match(line);
            QVERIFY2(m.hasMatch(), qPrintable("not Prometheus text: " + line));
            std::string name = m.captured(1).toStdString();
            bool ok = false;
            const double v = m.captured(3) == "+Inf" ? INFINITY : m.captured(3).toDouble(&ok);
            QVERIFY2(ok || m.captured(3) == "+Inf", qPrintable("bad value: " + line));
            std::string family = name;
            for (const char* suffix : {"_bucket", "_sum", "_count"}) {
                const std::string s = suffix;
                if (family.size() > s.size() && family.ends_with(s) &&
                    types.count(family.substr(0, family.size() - s.size())))
                    family = family.substr(0, family.size() - s.size());
            }
            QVERIFY2(types.count(family), qPrintable("a sample before its TYPE: " + line));
            QVERIFY(m.captured(2).contains("model_name=\"bonsai-27b\""));
            values[name + "{" + m.captured(2).toStdString() + "}"] = v;
            if (name.ends_with("_bucket")) buckets[family].push_back(v);
            if (name.ends_with("_count")) {
                QVERIFY2(!buckets[family].empty() && buckets[family].back() == v,
                         "+Inf bucket differs from _count");
                for (size_t i = 1; i < buckets[family].size(); ++i)
                    QVERIFY(buckets[family][i - 1] <= buckets[family][i]);
            }
        }
        const std::map<std::string, std::string> expected = {
            {"niwa:num_requests_running", "gauge"},
            {"niwa:num_requests_waiting", "gauge"},
            {"niwa:kv_cache_usage_perc", "gauge"},
            {"niwa:num_preemptions_total", "counter"},
            {"niwa:parked_sequences", "gauge"},
            {"niwa:parked_bytes", "gauge"},
            {"niwa:num_parked_preemptions_total", "counter"},
            {"niwa:prompt_tokens_total", "counter"},
            {"niwa:generation_tokens_total", "counter"},
            {"niwa:sampled_rows_reduced_total", "counter"},
            {"niwa:sampled_rows_fetched_total", "counter"},
            {"niwa:request_success_total", "counter"},
            {"niwa:time_to_first_token_seconds", "histogram"},
            {"niwa:inter_token_latency_seconds", "histogram"},
            {"niwa:request_queue_time_seconds", "histogram"},
            {"niwa:e2e_request_latency_seconds", "histogram"},
        };
        for (const auto& [name, t] : expected) QCOMPARE(types[name], t);
        const std::string label = "{model_name=\"bonsai-27b\"}";
        // Earlier tests generated: the counters and histograms saw them.
        QVERIFY(values["niwa:generation_tokens_total" + label] > 0);
        QVERIFY(values["niwa:prompt_tokens_total" + label] > 0);
        // The requests asked for no logprobs or penalties: their rows were drawn from reductions.
        QVERIFY(values["niwa:sampled_rows_reduced_total" + label] > 0);
        QVERIFY(values["niwa:sampled_rows_fetched_total" + label] <=
                values["niwa:sampled_rows_reduced_total" + label]);
        QVERIFY(values["niwa:time_to_first_token_seconds_count" + label] > 0);
        QVERIFY(values["niwa:e2e_request_latency_seconds_count" + label] > 0);
        QVERIFY(values["niwa:inter_token_latency_seconds_count" + label] > 0);
        QCOMPARE(values["niwa:num_requests_running" + label], 0.0);
        QCOMPARE(values["niwa:parked_sequences" + label], 0.0);
        QCOMPARE(values["niwa:parked_bytes" + label], 0.0);
        const double kv = values["niwa:kv_cache_usage_perc" + label];
        QVERIFY(kv >= 0 && kv <= 1);
    }

    void engineStats() {
        const HttpReply r = http_get(server.port(), "/v1/engine/stats");
        QCOMPARE(r.status, 200);
        const auto j = r.json();
        QVERIFY2(j.is_object(), r.body.c_str());
        check_stats(j);
        QCOMPARE(j["requests"]["running"].get<int>(), 0);
    }

    void engineStatsStream() {
        httplib::Client cli("127.0.0.1", server.port());
        cli.set_read_timeout(30, 0);
        std::string buffer;
        std::vector<nlohmann::json> events;
        auto res = cli.Get("/v1/engine/stats?stream=1", [&](const char* data, size_t len) {
            buffer.append(data, len);
            for (size_t end; (end = buffer.find("\n\n")) != std::string::npos; buffer.erase(0, end + 2)) {
                const std::string e = buffer.substr(0, end);
                if (e.rfind("data: ", 0) == 0)
                    events.push_back(nlohmann::json::parse(e.substr(6), nullptr, false));
            }
            return events.size() < 2;  // two events, then hang up
        });
        QCOMPARE(int(events.size()), 2);
        for (const auto& e : events) check_stats(e);
        QCOMPARE(http_get(server.port(), "/health").status, 200);
    }

    void cleanupTestCase() {
        QCOMPARE(server.stop(), 0);
        const QByteArray log = server.log();
        QVERIFY2(!log.contains("internal error"), log.constData());
    }
};

QTEST_GUILESS_MAIN(TestServerApi)
#include "test_server_api.moc"
