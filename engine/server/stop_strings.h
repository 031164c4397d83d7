// Stop strings ("stop" in a request): the output ends before the first one, which is not
// returned. Text that may be the start of a stop string is held back until it is clear.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace niwa::server {

class StopStrings {
public:
    explicit StopStrings(std::vector<std::string> stops);

    // The text that is now safe to emit; after a stop string was found, only the text before it.
    std::string push(std::string_view text);
    // At the end of the output: what was held back.
    std::string finish();
    bool stopped() const { return stopped_; }

private:
    std::vector<std::string> stops_;
    std::string held_;
    bool stopped_ = false;
};

}  // namespace niwa::server
