#include "engine/server/stop_strings.h"

#include <algorithm>

namespace niwa::server {

StopStrings::StopStrings(std::vector<std::string> stops) : stops_(std::move(stops)) {
    std::erase_if(stops_, [](const std::string& s) { return s.empty(); });
}

std::string StopStrings::push(std::string_view text) {
    if (stopped_) return {};
    held_ += text;
    size_t first = std::string::npos;
    for (const std::string& s : stops_) first = std::min(first, held_.find(s));
    if (first != std::string::npos) {
        stopped_ = true;
        std::string out = held_.substr(0, first);
        held_.clear();
        return out;
    }
    // Keep the longest tail that is a proper prefix of some stop string.
    size_t keep = 0;
    for (const std::string& s : stops_) {
        for (size_t k = std::min(s.size() - 1, held_.size()); k > keep; --k) {
            if (std::string_view(held_).substr(held_.size() - k) == std::string_view(s).substr(0, k)) {
                keep = k;
                break;
            }
        }
    }
    std::string out = held_.substr(0, held_.size() - keep);
    held_.erase(0, held_.size() - keep);
    return out;
}

std::string StopStrings::finish() {
    if (stopped_) return {};
    std::string out;
    out.swap(held_);
    return out;
}

}  // namespace niwa::server
