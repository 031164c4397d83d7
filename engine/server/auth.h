// API keys (--api-keys FILE): who may use the server, at which default priority and with how
// many requests in flight. Keys are secrets: only their names are ever logged.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace httplib {
struct Request;
}

namespace niwa::server {

struct ApiKey {
    std::string key;
    std::string name;
    std::optional<int> default_priority;  // for requests that carry no "priority"
    int max_concurrent = 0;               // requests in flight at once; 0: no limit
};

// One admitted request of a key; releases its place in the key's count when destroyed.
class Admission {
public:
    Admission(std::string client, std::optional<int> priority, std::shared_ptr<int> in_flight,
              std::shared_ptr<std::mutex> mu);
    ~Admission();
    Admission(const Admission&) = delete;
    Admission& operator=(const Admission&) = delete;

    const std::string& client() const { return client_; }  // the key's name ("" without keys)
    std::optional<int> default_priority() const { return priority_; }

private:
    std::string client_;
    std::optional<int> priority_;
    std::shared_ptr<int> in_flight_;
    std::shared_ptr<std::mutex> mu_;
};

class Auth {
public:
    Auth() = default;  // no keys: every request is admitted
    // Lines `key name [default_priority] [max_concurrent]`, whitespace separated; '#' starts a
    // comment. Throws std::runtime_error naming the file and line of a bad entry.
    static Auth load(const std::string& path);

    bool enabled() const { return !keys_.empty(); }
    size_t size() const { return keys_.size(); }
    // The key of `Authorization: Bearer KEY`; throws ApiError 401 when keys are on and it is
    // missing or unknown.
    const ApiKey* check(const httplib::Request& req) const;
    // check(), then takes a place in the key's in-flight count (ApiError 429 when it is full).
    std::unique_ptr<Admission> admit(const httplib::Request& req);

private:
    std::vector<ApiKey> keys_;
    std::vector<std::shared_ptr<int>> in_flight_;  // per key
    std::shared_ptr<std::mutex> mu_ = std::make_shared<std::mutex>();
};

}  // namespace niwa::server
