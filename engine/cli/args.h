// Command-line arguments of a subcommand: `--name value` options and `--flag` switches.
// Unknown or malformed options are errors that name the option and the subcommand's --help.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace niwa::cli {

class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class Args {
public:
    // `options` take a value, `flags` do not; anything else starting with "--" is an error.
    Args(std::string command, int argc, char** argv, std::set<std::string> options,
         std::set<std::string> flags = {});

    bool flag(const std::string& name) const { return flags_.count(name) != 0; }
    bool has(const std::string& name) const { return values_.count(name) != 0; }
    std::string str(const std::string& name) const;  // required
    std::string str(const std::string& name, const std::string& fallback) const;
    int64_t i64(const std::string& name, std::optional<int64_t> fallback = std::nullopt) const;
    double f64(const std::string& name, std::optional<double> fallback = std::nullopt) const;
    // "1,2,3" -> {1, 2, 3}
    std::vector<int64_t> i64_list(const std::string& name) const;
    const std::vector<std::string>& positional() const { return positional_; }
    bool help() const { return help_; }

private:
    std::string command_;
    std::map<std::string, std::string> values_;
    std::set<std::string> flags_;
    std::vector<std::string> positional_;
    bool help_ = false;
};

}  // namespace niwa::cli
