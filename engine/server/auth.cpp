#include "engine/server/auth.h"

#include <charconv>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <httplib.h>

#include "engine/server/api_error.h"

namespace niwa::server {

namespace {

std::optional<int> parse_int(const std::string& s) {
    int v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
    return v;
}

// Compares in time that depends only on the lengths, so a key cannot be guessed byte by byte
// from response times.
bool same_secret(const std::string& a, const std::string& b) {
    if (a.size() != b.size()) return false;
    unsigned char diff = 0;
    for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
    return diff == 0;
}

}  // namespace

Admission::Admission(std::string client, std::optional<int> priority, std::shared_ptr<int> in_flight,
                     std::shared_ptr<std::mutex> mu)
    : client_(std::move(client)), priority_(priority), in_flight_(std::move(in_flight)), mu_(std::move(mu)) {}

Admission::~Admission() {
    if (!in_flight_) return;
    std::lock_guard lock(*mu_);
    --*in_flight_;
}

Auth Auth::load(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read the API keys file " + path);
    Auth auth;
    std::string line;
    for (int line_no = 1; std::getline(in, line); ++line_no) {
        if (const size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
        std::istringstream fields(line);
        std::vector<std::string> f;
        for (std::string w; fields >> w;) f.push_back(w);
        if (f.empty()) continue;
        const std::string where = path + ":" + std::to_string(line_no) + ": ";
        if (f.size() < 2 || f.size() > 4)
            throw std::runtime_error(where +
                                     "expected `key name [default_priority] [max_concurrent]`, found " +
                                     std::to_string(f.size()) + " fields");
        ApiKey k{f[0], f[1], std::nullopt, 0};
        if (f.size() >= 3) {
            k.default_priority = parse_int(f[2]);
            if (!k.default_priority)
                throw std::runtime_error(where + "default_priority '" + f[2] + "' is not an integer");
        }
        if (f.size() == 4) {
            const auto n = parse_int(f[3]);
            if (!n || *n < 0)
                throw std::runtime_error(where + "max_concurrent '" + f[3] + "' is not a count >= 0");
            k.max_concurrent = *n;
        }
        for (const ApiKey& other : auth.keys_) {
            if (other.key == k.key)
                throw std::runtime_error(where + "key of '" + k.name + "' repeats the key of '" + other.name +
                                         "'");
        }
        auth.keys_.push_back(std::move(k));
        auth.in_flight_.push_back(std::make_shared<int>(0));
    }
    if (auth.keys_.empty()) throw std::runtime_error("the API keys file " + path + " holds no keys");
    return auth;
}

const ApiKey* Auth::check(const httplib::Request& req) const {
    if (keys_.empty()) return nullptr;
    const std::string header = req.get_header_value("Authorization");
    const std::string prefix = "Bearer ";
    if (header.empty())
        throw ApiError(401, "missing API key: send it as `Authorization: Bearer KEY`", {}, "invalid_api_key");
    if (header.rfind(prefix, 0) != 0)
        throw ApiError(401, "the Authorization header must be `Bearer KEY`", {}, "invalid_api_key");
    const std::string given = header.substr(prefix.size());
    const ApiKey* found = nullptr;
    for (const ApiKey& k : keys_) {
        if (same_secret(k.key, given)) found = &k;
    }
    if (!found) throw ApiError(401, "incorrect API key", {}, "invalid_api_key");
    return found;
}

std::unique_ptr<Admission> Auth::admit(const httplib::Request& req) {
    const ApiKey* k = check(req);
    if (!k) return std::make_unique<Admission>(std::string(), std::nullopt, nullptr, nullptr);
    const auto& count = in_flight_[size_t(k - keys_.data())];
    std::lock_guard lock(*mu_);
    if (k->max_concurrent > 0 && *count >= k->max_concurrent) {
        ApiError e(429,
                   "the key '" + k->name + "' already has " + std::to_string(*count) +
                       " requests in flight, its limit; retry when one has finished",
                   {}, "concurrency_limit_exceeded");
        e.retry_after_s = 1;
        throw e;
    }
    ++*count;
    return std::make_unique<Admission>(k->name, k->default_priority, count, mu_);
}

}  // namespace niwa::server
