// Stream: the hand-off between the engine's loop thread (push, close) and a server thread
// (next, cancel). Events queue until taken; close makes the finish info final.
#include "engine/sched/engine.h"

namespace niwa::sched {

bool Stream::next(std::vector<TokenEvent>& out, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, timeout, [&] { return !events_.empty() || closed_; });
    while (!events_.empty()) {
        out.push_back(std::move(events_.front()));
        events_.pop_front();
    }
    return !closed_;
}

void Stream::cancel() {
    std::lock_guard lock(mu_);
    cancelled_ = true;
}

bool Stream::cancelled() const {
    std::lock_guard lock(mu_);
    return cancelled_;
}

FinishInfo Stream::finish() const {
    std::lock_guard lock(mu_);
    return finish_;
}

void Stream::push(TokenEvent e) {
    {
        std::lock_guard lock(mu_);
        events_.push_back(std::move(e));
    }
    cv_.notify_all();
}

void Stream::close(FinishInfo f) {
    {
        std::lock_guard lock(mu_);
        if (closed_) return;
        finish_ = std::move(f);
        closed_ = true;
    }
    cv_.notify_all();
}

}  // namespace niwa::sched
