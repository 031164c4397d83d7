#include "engine/server/server_context.h"

namespace niwa::server {

void LoadState::stage(const std::string& what, double progress) {
    std::lock_guard lock(mu_);
    stage_ = what;
    progress_ = progress;
}

void LoadState::ready() {
    std::lock_guard lock(mu_);
    phase_ = Phase::Ready;
    stage_ = "ready";
    progress_ = 1;
}

void LoadState::failed(const std::string& error) {
    std::lock_guard lock(mu_);
    phase_ = Phase::Failed;
    error_ = error;
}

LoadState::Phase LoadState::phase() const {
    std::lock_guard lock(mu_);
    return phase_;
}

double LoadState::progress() const {
    std::lock_guard lock(mu_);
    return progress_;
}

std::string LoadState::stage_name() const {
    std::lock_guard lock(mu_);
    return stage_;
}

std::string LoadState::error() const {
    std::lock_guard lock(mu_);
    return error_;
}

void ServerContext::publish(std::unique_ptr<Loaded> l) {
    owner_ = std::move(l);
    loaded_.store(owner_.get(), std::memory_order_release);
}

void ServerContext::unload() {
    loaded_.store(nullptr, std::memory_order_release);
    owner_.reset();
}

}  // namespace niwa::server
