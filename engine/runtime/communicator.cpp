#include "engine/runtime/communicator.h"

#include <cstring>

namespace niwa::runtime {

class LocalGroup::Rank : public Communicator {
public:
    Rank(LocalGroup& g, int rank) : g_(g), rank_(rank) {}
    int rank() const override { return rank_; }
    int world() const override { return g_.world_; }

    void all_reduce_sum(float* data, size_t n) override {
        if (g_.world_ == 1) return;
        publish(data, n * sizeof(float));
        sum_.assign(n, 0.0f);
        for (int r = 0; r < g_.world_; ++r) {
            const float* src = static_cast<const float*>(g_.published_[r]);
            for (size_t i = 0; i < n; ++i) sum_[i] += src[i];
        }
        g_.barrier_.arrive_and_wait();  // everyone has read every buffer
        std::memcpy(data, sum_.data(), n * sizeof(float));
    }

    void all_gather_v(const void* src, size_t bytes, void* dst) override {
        publish(src, bytes);
        auto* out = static_cast<unsigned char*>(dst);
        for (int r = 0; r < g_.world_; ++r) {
            std::memcpy(out, g_.published_[r], g_.sizes_[r]);
            out += g_.sizes_[r];
        }
        g_.barrier_.arrive_and_wait();
    }

private:
    void publish(const void* p, size_t bytes) {
        g_.published_[rank_] = p;
        g_.sizes_[rank_] = bytes;
        g_.barrier_.arrive_and_wait();  // every rank's buffer is published
    }

    LocalGroup& g_;
    int rank_;
    std::vector<float> sum_;
};

LocalGroup::LocalGroup(int world)
    : world_(world), barrier_(world), published_(size_t(world)), sizes_(size_t(world)) {
    for (int i = 0; i < world; ++i) ranks_.push_back(std::make_unique<Rank>(*this, i));
}

LocalGroup::~LocalGroup() = default;

Communicator& LocalGroup::rank(int i) {
    return *ranks_[size_t(i)];
}

}  // namespace niwa::runtime
