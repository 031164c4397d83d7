// The Model's recurrent-state slots (one per running sequence): which are free. The engine
// clears a slot (Model::clear_slot) before a new sequence reads it.
#pragma once

#include <vector>

namespace niwa::sched {

class StateSlots {
public:
    explicit StateSlots(int n) : used_(static_cast<size_t>(n), false) {}

    int total() const { return int(used_.size()); }
    int used() const { return n_used_; }
    int free() const { return total() - n_used_; }
    // The lowest free slot, or -1 when all are in use.
    int acquire() {
        for (size_t i = 0; i < used_.size(); ++i) {
            if (used_[i]) continue;
            used_[i] = true;
            ++n_used_;
            return int(i);
        }
        return -1;
    }
    void release(int slot) {
        if (slot < 0 || !used_.at(size_t(slot))) return;
        used_[size_t(slot)] = false;
        --n_used_;
    }

private:
    std::vector<bool> used_;
    int n_used_ = 0;
};

}  // namespace niwa::sched
