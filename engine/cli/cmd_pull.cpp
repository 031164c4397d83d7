// niwa-engine pull: download a URL, or a published model's files, with resume, retries,
// progress (a bar on a terminal, JSON lines for the app) and checksum verification.
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/cli/args.h"
#include "engine/cli/commands.h"
#include "engine/runtime/download.h"
#include "engine/runtime/log.h"
#include "engine/runtime/model_catalog.h"

namespace niwa::cli {

namespace {

namespace fs = std::filesystem;
using runtime::DownloadProgress;

constexpr const char* kHelp =
    "usage: niwa-engine pull URL --out FILE [--sha256 HEX] [options]\n"
    "       niwa-engine pull --model bonsai-27b [--quant pq2_0|ptq1_0] [--vision] [--out DIR] [options]\n"
    "\n"
    "Downloads to FILE.part and renames it to FILE only when complete and verified. A FILE.part\n"
    "left by an earlier run (a cut connection, Ctrl-C, a full disk) is resumed with HTTP Range.\n"
    "\n"
    "  URL               the file to download (http or https)\n"
    "  --out PATH        with a URL: the file to write; with --model: the folder\n"
    "                    (default: $XDG_DATA_HOME/niwa/models, else ~/.local/share/niwa/models)\n"
    "  --sha256 HEX      expected SHA-256; on a mismatch the download is removed\n"
    "  --model ID        a published model: bonsai-27b\n"
    "  --quant Q         its weights: pq2_0 (default, 7.21 GB) or ptq1_0 (5.95 GB)\n"
    "  --vision          also download the vision projector (mmproj)\n"
    "  --base-url URL    where the model's files are (default: its Hugging Face repository, or\n"
    "                    the environment's NIWA_MODEL_BASE_URL)\n"
    "  --retries N       further attempts after connection errors, time-outs and HTTP 5xx\n"
    "                    (default 8; back-off 1, 2, 4, ... s up to 30 s; attempts that moved the\n"
    "                    download forward do not count)\n"
    "  --json            progress as one JSON line a second on stdout:\n"
    "                    {\"bytes\":N,\"total\":N,\"rate\":B/s}, then "
    "{\"done\":true,\"path\":...,\"sha256\":...};\n"
    "                    messages as JSON log lines on stderr\n"
    "\n"
    "Exit status: 0 done, 1 failed, 2 usage error, 130 interrupted (the .part file is kept).\n";

std::atomic<bool> g_interrupted{false};

extern "C" void on_signal(int sig) {
    g_interrupted.store(true);
    std::signal(sig, SIG_DFL);  // a second Ctrl-C ends the process at once
}

struct Job {
    std::string url;
    fs::path out;
    std::optional<uint64_t> size;
};

std::string format_duration(double s) {
    const long t = long(s + 0.5);
    char buf[32];
    if (t >= 3600)
        std::snprintf(buf, sizeof buf, "%ldh%02ldm", t / 3600, t / 60 % 60);
    else if (t >= 60)
        std::snprintf(buf, sizeof buf, "%ldm%02lds", t / 60, t % 60);
    else
        std::snprintf(buf, sizeof buf, "%lds", t);
    return buf;
}

// Redraws one line on stderr: [#####-----]  45%  3.24 GB / 7.21 GB  52.10 MB/s  ETA 1m17s
void draw_bar(const DownloadProgress& p) {
    std::string line;
    if (p.total && *p.total > 0) {
        const double f = std::min(1.0, double(p.bytes) / double(*p.total));
        const int width = 30, filled = int(f * width);
        // append() rather than operator+ chains: GCC 12 at -O3 misreports those (-Wrestrict).
        line.append(1, '[').append(size_t(filled), '#').append(size_t(width - filled), '-').append("] ");
        char pct[16];
        std::snprintf(pct, sizeof pct, "%3d%%  ", int(f * 100));
        line +=
            pct + runtime::format_bytes(double(p.bytes)) + " / " + runtime::format_bytes(double(*p.total));
    } else {
        line = runtime::format_bytes(double(p.bytes));
    }
    line += "  " + runtime::format_bytes(p.rate) + "/s";
    if (p.total && p.rate > 0 && *p.total > p.bytes)
        line += "  ETA " + format_duration(double(*p.total - p.bytes) / p.rate);
    std::fprintf(stderr, "\r%s\033[K", line.c_str());
    std::fflush(stderr);
}

void print_json_progress(const DownloadProgress& p) {
    nlohmann::json j = {{"bytes", p.bytes}, {"total", nullptr}, {"rate", p.rate}};
    if (p.total) j["total"] = *p.total;
    std::printf("%s\n", j.dump().c_str());
    std::fflush(stdout);
}

fs::path default_models_dir() {
    if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg) return fs::path(xdg) / "niwa" / "models";
    if (const char* home = std::getenv("HOME"); home && *home)
        return fs::path(home) / ".local" / "share" / "niwa" / "models";
    return fs::path("models");
}

std::vector<Job> model_jobs(const Args& a) {
    if (!a.positional().empty()) throw UsageError("give a URL or --model, not both");
    if (a.has("sha256")) throw UsageError("--sha256 goes with a URL, not with --model");
    const auto* model = runtime::find_published_model(a.str("model"));
    if (!model) throw UsageError("unknown model '" + a.str("model") + "' (known: bonsai-27b)");
    const auto* weights = runtime::find_quant(*model, a.str("quant", ""));
    if (!weights) throw UsageError("unknown --quant '" + a.str("quant") + "' (pq2_0 or ptq1_0)");
    const std::string base = runtime::model_base_url(*model, a.str("base-url", ""));
    const fs::path dir = a.has("out") ? fs::path(a.str("out")) : default_models_dir();
    std::vector<Job> jobs = {{base + std::string(weights->name), dir / weights->name, weights->size}};
    if (a.flag("vision"))
        jobs.push_back(
            {base + std::string(model->mmproj.name), dir / model->mmproj.name, model->mmproj.size});
    return jobs;
}

std::vector<Job> url_jobs(const Args& a) {
    if (a.positional().size() != 1)
        throw UsageError("give one URL, or --model (see niwa-engine pull --help)");
    for (const char* o : {"quant", "base-url"})
        if (a.has(o)) throw UsageError(std::string("--") + o + " goes with --model");
    if (a.flag("vision")) throw UsageError("--vision goes with --model");
    return {{a.positional()[0], fs::path(a.str("out")), std::nullopt}};
}

int run(int argc, char** argv) {
    const Args a("pull", argc, argv,
                 {"out", "sha256", "retries", "model", "quant", "base-url", "retry-base-ms", "progress-ms",
                  "low-speed-seconds"},
                 {"json", "vision"});
    if (a.help()) {
        std::fputs(kHelp, stdout);
        return 0;
    }
    const bool json = a.flag("json");
    log::init("info", json ? log::Format::Json : log::Format::Text);
    const auto logger = log::get("pull");
    const std::vector<Job> jobs = a.has("model") ? model_jobs(a) : url_jobs(a);
    const std::string sha = a.str("sha256", "");
    if (!sha.empty() &&
        (sha.size() != 64 || sha.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos))
        throw UsageError("--sha256 expects 64 hex digits, got '" + sha + "'");
    const int64_t retries = a.i64("retries", 8);
    if (retries < 0) throw UsageError("--retries must be 0 or more");
    if (!runtime::download_supported())
        throw std::runtime_error(
            "this niwa-engine was built without libcurl, so it cannot download: install "
            "libcurl4-openssl-dev, "
            "configure again and rebuild");

    const bool bar = !json && ::isatty(STDERR_FILENO);
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    for (const Job& job : jobs) {
        runtime::DownloadOptions o;
        o.url = job.url;
        o.out = job.out;
        o.sha256 = sha;
        o.expected_size = job.size;
        o.retries = int(retries);
        o.retry_base = std::chrono::milliseconds(a.i64("retry-base-ms", 1000));
        o.low_speed_seconds = long(a.i64("low-speed-seconds", 30));
        o.progress_interval = std::chrono::milliseconds(a.i64("progress-ms", bar ? 200 : 1000));
        o.cancel = &g_interrupted;
        if (json) o.on_progress = print_json_progress;
        if (bar) o.on_progress = draw_bar;
        o.on_notice = [&](const std::string& m) {
            if (bar) std::fputs("\r\033[K", stderr);
            logger->warn("{}", m);
        };
        if (!json) logger->info("downloading {} to {}", job.url, job.out.string());
        try {
            const runtime::DownloadResult r = runtime::download(o);
            if (bar) std::fputs("\n", stderr);
            if (r.already_present) logger->info("{} is already there and passes the checks", r.path.string());
            if (json) {
                const nlohmann::json done = {
                    {"done", true}, {"path", r.path.string()}, {"sha256", r.sha256}, {"bytes", r.bytes}};
                std::printf("%s\n", done.dump().c_str());
            } else {
                std::printf("%s  %s\n", r.sha256.c_str(), r.path.string().c_str());
            }
            std::fflush(stdout);
        } catch (const runtime::DownloadCancelled& e) {
            if (bar) std::fputs("\n", stderr);
            std::fprintf(stderr, "niwa-engine pull: %s\n", e.what());
            return 130;
        } catch (const runtime::DownloadError&) {
            if (bar) std::fputs("\n", stderr);
            throw;
        }
    }
    return 0;
}

}  // namespace

NIWA_COMMAND("pull", "download a model (or any URL) with resume, retries and a checksum", run);

}  // namespace niwa::cli
