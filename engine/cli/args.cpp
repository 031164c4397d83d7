#include "engine/cli/args.h"

#include <charconv>
#include <cstdlib>

namespace niwa::cli {

Args::Args(std::string command, int argc, char** argv, std::set<std::string> options,
           std::set<std::string> flags)
    : command_(std::move(command)) {
    for (int i = 0; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "-h" || a == "--help") {
            help_ = true;
            continue;
        }
        if (a.rfind("--", 0) != 0) {
            positional_.push_back(a);
            continue;
        }
        std::string name = a.substr(2);
        std::optional<std::string> inline_value;
        if (auto eq = name.find('='); eq != std::string::npos) {
            inline_value = name.substr(eq + 1);
            name = name.substr(0, eq);
        }
        if (flags.count(name)) {
            if (inline_value) throw UsageError("--" + name + " takes no value");
            flags_.insert(name);
        } else if (options.count(name)) {
            if (inline_value) {
                values_[name] = *inline_value;
            } else {
                if (i + 1 >= argc) throw UsageError("--" + name + " needs a value");
                values_[name] = argv[++i];
            }
        } else {
            throw UsageError("unknown option --" + name + " (see niwa-engine " + command_ + " --help)");
        }
    }
}

std::string Args::str(const std::string& name) const {
    auto it = values_.find(name);
    if (it == values_.end())
        throw UsageError("--" + name + " is required (see niwa-engine " + command_ + " --help)");
    return it->second;
}

std::string Args::str(const std::string& name, const std::string& fallback) const {
    auto it = values_.find(name);
    return it == values_.end() ? fallback : it->second;
}

static int64_t parse_i64(const std::string& name, const std::string& s) {
    int64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size())
        throw UsageError("--" + name + " expects an integer, got '" + s + "'");
    return v;
}

int64_t Args::i64(const std::string& name, std::optional<int64_t> fallback) const {
    auto it = values_.find(name);
    if (it == values_.end()) {
        if (!fallback)
            throw UsageError("--" + name + " is required (see niwa-engine " + command_ + " --help)");
        return *fallback;
    }
    return parse_i64(name, it->second);
}

double Args::f64(const std::string& name, std::optional<double> fallback) const {
    auto it = values_.find(name);
    if (it == values_.end()) {
        if (!fallback)
            throw UsageError("--" + name + " is required (see niwa-engine " + command_ + " --help)");
        return *fallback;
    }
    char* end = nullptr;
    const double v = std::strtod(it->second.c_str(), &end);
    if (it->second.empty() || *end != '\0')
        throw UsageError("--" + name + " expects a number, got '" + it->second + "'");
    return v;
}

std::vector<int64_t> Args::i64_list(const std::string& name) const {
    const std::string s = str(name);
    std::vector<int64_t> out;
    size_t start = 0;
    while (start <= s.size()) {
        size_t comma = s.find(',', start);
        if (comma == std::string::npos) comma = s.size();
        out.push_back(parse_i64(name, s.substr(start, comma - start)));
        start = comma + 1;
    }
    return out;
}

}  // namespace niwa::cli
