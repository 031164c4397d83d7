#include "engine/runtime/log.h"

#include <mutex>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>

namespace niwa::log {

namespace {

std::mutex g_mutex;
spdlog::sink_ptr g_sink;
spdlog::level::level_enum g_level = spdlog::level::info;

spdlog::sink_ptr sink() {
    if (!g_sink) g_sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    return g_sink;
}

// %j: the message as the body of a JSON string (quotes, backslashes, controls escaped).
class JsonMessageFlag : public spdlog::custom_flag_formatter {
public:
    void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
        static const char* hex = "0123456789abcdef";
        for (char c : std::string_view(msg.payload.data(), msg.payload.size())) {
            const auto u = static_cast<unsigned char>(c);
            if (c == '"' || c == '\\') {
                dest.push_back('\\');
                dest.push_back(c);
            } else if (u < 0x20) {
                const char esc[6] = {'\\', 'u', '0', '0', hex[u >> 4], hex[u & 15]};
                dest.append(esc, esc + 6);
            } else {
                dest.push_back(c);
            }
        }
    }
    std::unique_ptr<custom_flag_formatter> clone() const override {
        return std::make_unique<JsonMessageFlag>();
    }
};

}  // namespace

void init(const std::string& level, Format format) {
    std::lock_guard lock(g_mutex);
    g_level = spdlog::level::from_str(level);
    auto formatter = std::make_unique<spdlog::pattern_formatter>();
    if (format == Format::Json) {
        formatter->add_flag<JsonMessageFlag>('j').set_pattern(
            R"({"time":"%Y-%m-%dT%H:%M:%S.%e","level":"%l","component":"%n","msg":"%j"})");
    } else {
        formatter->set_pattern("%Y-%m-%d %H:%M:%S.%e %^%-5l%$ [%n] %v");
    }
    sink()->set_formatter(std::move(formatter));
    spdlog::apply_all([&](std::shared_ptr<spdlog::logger> l) { l->set_level(g_level); });
}

std::shared_ptr<spdlog::logger> get(const std::string& component) {
    std::lock_guard lock(g_mutex);
    if (auto l = spdlog::get(component)) return l;
    auto l = std::make_shared<spdlog::logger>(component, sink());
    l->set_level(g_level);
    spdlog::register_logger(l);
    return l;
}

}  // namespace niwa::log
