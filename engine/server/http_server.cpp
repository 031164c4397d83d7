#include "engine/server/http_server.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include <pthread.h>

#include <httplib.h>

#include "engine/runtime/log.h"
#include "engine/server/api_error.h"
#include "engine/server/routes.h"

namespace niwa::server {

namespace {

// How long a server whose model failed to load keeps answering /health with the error, so
// the app (which polls it) can show why before the process exits.
constexpr auto kFailedLinger = std::chrono::seconds(5);

std::unique_ptr<Loaded> load_model(ServerContext& ctx) {
    const ServerOptions& o = ctx.options;
    // Test hook: hold loading until a file exists, so a test can see /health while loading
    // without racing a fast load.
    if (const char* hold = std::getenv("NIWA_TEST_HOLD_LOAD")) {
        ctx.load.stage("held by NIWA_TEST_HOLD_LOAD", 0);
        for (int i = 0; i < 6000 && !ctx.stopping && !std::filesystem::exists(hold); ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ctx.load.stage("loading weights", 0.1);
    auto model = model::Model::open(o.model_path, o.model);
    ctx.load.stage("reading the tokenizer", 0.8);
    text::Tokenizer tokenizer = text::Tokenizer::from_gguf(model->file());
    ctx.load.stage("reading the chat template", 0.85);
    text::ChatTemplate tmpl = o.chat_template_file.empty()
                                  ? text::ChatTemplate::from_gguf(model->file())
                                  : text::ChatTemplate::from_file(o.chat_template_file);
    ctx.load.stage("starting the engine", 0.9);
    std::vector<int32_t> eos = tokenizer.eos_ids();
    auto loaded = std::make_unique<Loaded>(
        Loaded{std::move(model), std::move(tokenizer), std::move(tmpl), std::move(eos), nullptr});
    loaded->engine = std::make_unique<sched::Engine>(*loaded->model, o.engine);
    return loaded;
}

void configure(httplib::Server& http, ServerContext& ctx) {
    // Each streaming response holds a worker for its whole length: size the pool for every
    // seat, a full queue's worth of waiting clients, and the odd stats stream.
    const size_t threads =
        size_t(std::clamp(ctx.options.engine.max_seqs + ctx.options.engine.max_waiting / 2 + 32, 96, 512));
    http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    http.set_keep_alive_max_count(1000);
    http.set_pre_routing_handler([&ctx](const httplib::Request& req, httplib::Response& res) {
        if (req.path == "/health" || ctx.loaded()) return httplib::Server::HandlerResponse::Unhandled;
        const bool failed = ctx.load.phase() == LoadState::Phase::Failed;
        ApiError e(503,
                   failed ? "the model failed to load: " + ctx.load.error()
                          : "the model is still loading; retry when GET /health answers 200",
                   {}, failed ? "model_failed" : "model_loading");
        if (!failed) e.retry_after_s = 1;
        write_error(res, e);
        return httplib::Server::HandlerResponse::Handled;
    });
    // Unknown routes and methods get an OpenAI-shaped body too (routes' own errors have one).
    http.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty()) return;
        write_error(res, ApiError(res.status, "no route " + req.method + " " + req.path, {}, "not_found"));
    });
    add_info_routes(http, ctx);
    add_chat_routes(http, ctx);
    add_completion_routes(http, ctx);
}

// SIGINT/SIGTERM are blocked in every thread and taken here, so a handler never runs in the
// middle of the server's locks.
class SignalWatcher {
public:
    explicit SignalWatcher(std::function<void()> on_signal) {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGTERM);
        thread_ = std::thread([this, set, on_signal = std::move(on_signal)] {
            const timespec tick{0, 200 * 1000 * 1000};
            while (!quit_) {
                if (sigtimedwait(&set, nullptr, &tick) > 0) {
                    log::get("server")->info("signal received: shutting down");
                    on_signal();
                    return;
                }
            }
        });
    }
    ~SignalWatcher() {
        quit_ = true;
        thread_.join();
    }

    static void block_in_this_and_new_threads() {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGTERM);
        pthread_sigmask(SIG_BLOCK, &set, nullptr);
        std::signal(SIGPIPE, SIG_IGN);  // a client that went away is a failed write, not a death
    }

private:
    std::atomic<bool> quit_{false};
    std::thread thread_;
};

}  // namespace

bool is_loopback(const std::string& host) {
    return host == "localhost" || host == "::1" || host == "[::1]" || host.rfind("127.", 0) == 0;
}

int serve(const ServerOptions& options) {
    auto logger = log::get("server");
    ServerContext ctx(options);
    if (!options.api_keys_file.empty()) {
        ctx.auth = Auth::load(options.api_keys_file);
        logger->info("{} API keys loaded from {}", ctx.auth.size(), options.api_keys_file);
    }
    if (!is_loopback(options.host) && !ctx.auth.enabled()) {
        if (!options.allow_unauthenticated)
            throw std::runtime_error(
                "refusing to listen on " + options.host +
                " without API keys: anyone on the network could use the server. Pass --api-keys FILE, "
                "or --allow-unauthenticated if that is really what you want");
        logger->warn("listening on {} WITHOUT API KEYS: anyone who can reach this address can use the server",
                     options.host);
    }

    SignalWatcher::block_in_this_and_new_threads();
    httplib::Server http;
    configure(http, ctx);
    if (!http.bind_to_port(options.host, options.port)) {
        logger->error("cannot listen on {}:{}: the port is in use or the address is not this machine's",
                      options.host, options.port);
        return 1;
    }
    logger->info("listening on http://{}:{} (loading the model)", options.host, options.port);
    std::thread listener([&] { http.listen_after_bind(); });
    const auto stop_all = [&] {
        ctx.stopping = true;
        http.stop();
    };
    SignalWatcher signals(stop_all);
    std::thread ticker([&] {
        while (!ctx.stopping) {
            if (const Loaded* l = ctx.loaded()) ctx.throughput.sample(l->engine->stats());
            for (int i = 0; i < 10 && !ctx.stopping; ++i) std::this_thread::sleep_for(kPollInterval);
        }
    });

    int code = 0;
    try {
        ctx.publish(load_model(ctx));
        ctx.load.ready();
        logger->info("model {} ready as '{}'", options.model_path, options.served_model_name);
        std::fputs("Application startup complete.\n", stdout);
        std::fflush(stdout);
    } catch (const std::exception& e) {
        logger->error("the model failed to load: {}", e.what());
        ctx.load.failed(e.what());
        code = 1;
        const auto until = std::chrono::steady_clock::now() + kFailedLinger;
        while (!ctx.stopping && std::chrono::steady_clock::now() < until)
            std::this_thread::sleep_for(kPollInterval);
        stop_all();
    }
    listener.join();
    ctx.stopping = true;
    ticker.join();
    ctx.unload();
    logger->info("stopped");
    return code;
}

}  // namespace niwa::server
