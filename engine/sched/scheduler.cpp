#include "engine/sched/scheduler.h"

#include <algorithm>
#include <cmath>

namespace niwa::sched {

namespace {

// Running order: base priority, then arrival.
bool ranks_before(const Request* a, const Request* b) {
    return a->priority != b->priority ? a->priority < b->priority : a->id < b->id;
}

bool contains(const std::vector<Request*>& v, const Request* r) {
    return std::find(v.begin(), v.end(), r) != v.end();
}

}  // namespace

int Step::tokens() const {
    int n = 0;
    for (const Chunk& c : chunks) n += c.n;
    return n;
}

Scheduler::Scheduler(SchedulerConfig cfg, BlockManager& blocks, StateSlots& slots)
    : cfg_(cfg), blocks_(blocks), slots_(slots) {}

void Scheduler::add(Request* r, double now) {
    r->enqueued = now;
    waiting_.push_back(r);
}

void Scheduler::remove(Request* r) {
    forget_parked(r);
    blocks_.release(r->blocks);
    slots_.release(r->slot);
    r->slot = -1;
    r->status = Status::Finished;
    std::erase(running_, r);
    std::erase(waiting_, r);
}

double Scheduler::effective_priority(const Request& r, double now) const {
    return r.priority - cfg_.aging_per_second * std::max(0.0, now - r.enqueued);
}

int Scheduler::level(const Request& r, double now) const {
    return r.priority - int(std::floor(cfg_.aging_per_second * std::max(0.0, now - r.enqueued)));
}

Step Scheduler::schedule(double now) {
    Step s;
    s.index = ++step_;
    grow_running(s, now);
    std::stable_sort(waiting_.begin(), waiting_.end(), [&](const Request* a, const Request* b) {
        const double pa = effective_priority(*a, now), pb = effective_priority(*b, now);
        return pa != pb ? pa < pb : a->id < b->id;
    });
    size_t i = 0;
    while (i < waiting_.size()) {
        Request* c = waiting_[i];
        if (c->preempted_step == step_) {  // just lost its seat: not back in the same step
            ++i;
            continue;
        }
        // Tokens the step gives, before c, to decoders and to better-ranked prefills.
        int ahead = 0;
        for (const Request* r : running_)
            if (r->remaining() == 1 || ranks_before(r, c)) ahead += r->remaining();
        if (ahead >= cfg_.step_tokens) break;
        const bool fits =
            slots_.free() > 0 && blocks_.free() >= blocks_.blocks_for(int64_t(c->tokens.size()));
        if (!fits) {
            const int k = victims_for(*c, now, s.admitted);
            if (k < 0) break;  // strict priority order: nobody behind it jumps the queue
            for (int v = 0; v < k; ++v) {
                auto it = std::find_if(running_.rbegin(), running_.rend(),
                                       [&](const Request* r) { return !contains(s.admitted, r); });
                preempt(*it, s, now);
            }
        }
        waiting_.erase(waiting_.begin() + std::ptrdiff_t(i));
        admit(c, s);
    }
    plan_chunks(s);
    return s;
}

void Scheduler::complete(const Step& step) {
    for (const Chunk& c : step.chunks) c.req->computed += c.n;
}

void Scheduler::park_failed(Request* r) {
    if (r->parked == 0) return;
    forget_parked(r);
    --parked_total_;
}

void Scheduler::forget_parked(Request* r) {
    if (r->parked == 0) return;
    parked_bytes_ -= r->parked_bytes;
    --parked_count_;
    r->parked = 0;
    r->parked_bytes = 0;
}

// Every running request needs KV blocks for all its known tokens; when the pool runs dry the
// worst running request yields (possibly the one growing).
void Scheduler::grow_running(Step& s, double now) {
    for (size_t i = 0; i < running_.size(); ++i) {
        Request* r = running_[i];
        while (!blocks_.reserve(r->blocks, int64_t(r->tokens.size()))) {
            Request* v = running_.back();
            preempt(v, s, now);
            if (v == r) break;
        }
    }
}

// How many of the worst running requests (none admitted this step) must yield to seat c, or
// -1 when c may not preempt or preempting every worse request would still not make room.
int Scheduler::victims_for(const Request& c, double now, const std::vector<Request*>& admitted) const {
    if (c.preempted_step >= 0 && step_ - c.preempted_step < cfg_.no_thrash_steps) return -1;
    const int lv = level(c, now), need = blocks_.blocks_for(int64_t(c.tokens.size()));
    int seats = slots_.free(), blocks = blocks_.free(), k = 0;
    for (auto it = running_.rbegin(); it != running_.rend() && !(seats > 0 && blocks >= need); ++it) {
        const Request* v = *it;
        if (contains(admitted, v)) continue;
        if (lv >= v->priority) return -1;  // running_ is best first: nothing further is worse
        ++seats;
        blocks += int(v->blocks.size());
        ++k;
    }
    return seats > 0 && blocks >= need ? k : -1;
}

void Scheduler::admit(Request* r, Step& s) {
    r->slot = slots_.acquire();
    blocks_.reserve(r->blocks, int64_t(r->tokens.size()));
    r->computed = r->parked;
    if (r->parked > 0) s.restored.push_back(r);
    forget_parked(r);  // the engine restores it within this step
    r->status = Status::Running;
    running_.insert(std::upper_bound(running_.begin(), running_.end(), r, ranks_before), r);
    s.admitted.push_back(r);
}

// Park when the copy out and back costs less than re-reading the cached tokens, and fits.
// Before the prefill rate is measured, parking is the guess: it never wastes compute.
bool Scheduler::parks(const Request& r) const {
    if (cfg_.park.budget_bytes <= 0 || r.computed == 0) return false;
    const int64_t bytes = park_bytes(r.computed);
    if (parked_bytes_ + bytes > cfg_.park.budget_bytes) return false;
    if (prefill_rate_ <= 0) return true;
    const double copy_s = 2.0 * double(bytes) / cfg_.park.copy_bytes_per_s;
    return double(r.computed) / prefill_rate_ > copy_s;
}

void Scheduler::preempt(Request* r, Step& s, double now) {
    if (parks(*r)) {
        s.parked.push_back({r, r->slot, r->blocks, r->computed});
        r->parked = r->computed;
        r->parked_bytes = park_bytes(r->computed);
        parked_bytes_ += r->parked_bytes;
        ++parked_count_;
        ++parked_total_;
    }
    blocks_.release(r->blocks);
    slots_.release(r->slot);
    r->slot = -1;
    r->computed = 0;
    r->status = Status::Preempted;
    ++r->preemptions;
    r->preempted_step = step_;
    ++preempted_total_;
    std::erase(running_, r);
    add(r, now);
    s.preempted.push_back(r);
}

// Decodes first (one token each), then prefill chunks in running order until the budget is spent.
void Scheduler::plan_chunks(Step& s) const {
    int budget = cfg_.step_tokens;
    for (Request* r : running_) {
        if (budget == 0) return;
        if (r->remaining() != 1) continue;
        s.chunks.push_back({r, 1, true});
        --budget;
    }
    for (Request* r : running_) {
        if (budget == 0) return;
        if (r->remaining() <= 1) continue;
        const int n = std::min(r->remaining(), budget);
        s.chunks.push_back({r, n, n == r->remaining()});
        budget -= n;
    }
}

}  // namespace niwa::sched
