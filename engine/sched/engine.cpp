// Engine: the loop thread. Each turn it takes new requests, drops cancelled ones, asks the
// scheduler for a step, readies the caches (parks the preempted, clears or restores the
// admitted), runs it through Model::step, samples, and streams the tokens out.
// Everything below the mutex (scheduler, blocks, slots, live requests) belongs to the loop.
#include "engine/sched/engine.h"

#include <algorithm>
#include <cmath>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>

#include <unistd.h>

#include "engine/model/model.h"
#include "engine/runtime/log.h"
#include "engine/sched/block_manager.h"
#include "engine/sched/request.h"
#include "engine/sched/sampler.h"
#include "engine/sched/scheduler.h"
#include "engine/sched/state_slots.h"

namespace niwa::sched {

namespace {

// The model's input for a step: each chunk's tokens, positions and KV slots.
model::StepPlan plan_step(const Step& s, int block_tokens) {
    model::StepPlan p;
    for (const Chunk& c : s.chunks) {
        const Request& r = *c.req;
        kernels::SeqInfo info;
        info.q_start = p.n_tokens();
        info.n_q = c.n;
        info.pos0 = r.computed;
        info.state_slot = r.slot;
        info.table_start = int32_t(p.block_tables.size());
        p.block_tables.insert(p.block_tables.end(), r.blocks.begin(), r.blocks.end());
        for (int32_t pos = r.computed; pos < r.computed + c.n; ++pos) {
            p.tokens.push_back(r.tokens[size_t(pos)]);
            p.positions.push_back(pos);
            p.kv_slots.push_back(r.blocks[size_t(pos / block_tokens)] * block_tokens + pos % block_tokens);
        }
        if (c.logits) p.logit_rows.push_back({info.q_start + c.n - 1, info.q_start + c.n});
        p.seqs.push_back(info);
    }
    return p;
}

}  // namespace

class Engine::Impl {
public:
    Impl(model::Model& m, EngineConfig cfg);
    ~Impl();
    std::shared_ptr<Stream> submit(GenerateRequest g);
    EngineStats stats() const {
        std::lock_guard lock(mu_);
        EngineStats s = stats_;
        s.waiting += int(incoming_.size());
        return s;
    }

    const EngineConfig cfg;

private:
    double now() const {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    }
    void loop();
    void take_new();
    bool prepare(const Step& s);
    void run_step(const Step& s);
    void note_step_time(int tokens, double seconds);
    void emit_token(Request* r, const TokenEvent& e);
    void finish(Request* r, FinishReason why, std::string error = {});
    void publish();

    model::Model& model_;
    const int64_t vocab_;
    const int context_;  // tokens a sequence may hold: the context, or the whole KV pool if smaller
    const std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
    std::shared_ptr<spdlog::logger> log_ = log::get("sched");

    // The loop thread's.
    BlockManager blocks_;
    StateSlots slots_;
    Scheduler sched_;
    Sampler sampler_;
    std::unordered_map<uint64_t, std::unique_ptr<Request>> live_;
    std::unordered_map<uint64_t, cache::ParkedSequence> parked_;  // by request id
    double prefill_rate_ = 0;                                     // tokens a second; 0: not measured
    EngineStats counters_;                                        // the totals; publish() adds the gauges
    std::vector<std::pair<std::shared_ptr<Stream>, FinishInfo>> closing_;  // closed after publish()
    std::vector<std::pair<std::shared_ptr<Stream>, TokenEvent>> emitted_;  // pushed after publish()

    // Shared with submit() and stats().
    mutable std::mutex mu_;
    std::condition_variable cv_;
    std::vector<std::unique_ptr<Request>> incoming_;
    EngineStats stats_;
    uint64_t next_id_ = 1;
    double seat_seconds_ = 1.0;  // running average of how long a request holds a seat
    bool stop_ = false;

    std::thread thread_;  // last: starts once everything above exists
};

namespace {

const EngineConfig& checked(const EngineConfig& c) {
    if (c.max_seqs < 1 || c.step_token_budget < 1 || c.max_context < 2 || c.max_waiting < 0)
        throw std::invalid_argument(
            "the engine needs max_seqs >= 1, step_token_budget >= 1, max_context >= 2 and max_waiting >= 0");
    if (!(c.park_copy_bytes_per_s > 0)) throw std::invalid_argument("the park copy rate must be positive");
    return c;
}

SchedulerConfig scheduler_config(const EngineConfig& c, const model::Model& m) {
    SchedulerConfig s;
    s.step_tokens = std::min(c.step_token_budget, m.config().max_step_tokens);
    s.no_thrash_steps = c.no_thrash_steps;
    s.aging_per_second = c.aging_per_second;
    s.park.budget_bytes = c.park_memory_bytes;
    if (s.park.budget_bytes < 0) {
        const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
        s.park.budget_bytes = pages > 0 && page > 0 ? int64_t(pages) * page / 4 : 0;
    }
    s.park.state_bytes = int64_t(m.park_bytes(0));
    s.park.token_bytes = int64_t(m.park_bytes(1)) - s.park.state_bytes;
    s.park.copy_bytes_per_s = c.park_copy_bytes_per_s;
    return s;
}

bool contains(const std::vector<Request*>& v, const Request* r) {
    return std::find(v.begin(), v.end(), r) != v.end();
}

}  // namespace

Engine::Impl::Impl(model::Model& m, EngineConfig c)
    : cfg(checked(c)),
      model_(m),
      vocab_(m.hparams().n_vocab),
      context_(std::min<int64_t>(c.max_context, int64_t(m.kv_blocks()) * m.config().block_tokens)),
      blocks_(m.kv_blocks(), m.config().block_tokens),
      slots_(std::min(c.max_seqs, m.config().max_seqs)),
      sched_(scheduler_config(c, m), blocks_, slots_) {
    const ParkConfig& park = sched_.config().park;
    if (park.budget_bytes > 0)
        log_->info(
            "preemption parks caches in up to {:.1f} GiB of host RAM ({} bytes a sequence + {} a token)",
            double(park.budget_bytes) / double(1 << 30), park.state_bytes, park.token_bytes);
    else
        log_->info("preemption recomputes (no host RAM for parking)");
    publish();
    thread_ = std::thread([this] { loop(); });
}

Engine::Impl::~Impl() {
    {
        std::lock_guard lock(mu_);
        stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
    for (auto& r : incoming_) live_.emplace(r->id, std::move(r));
    while (!live_.empty()) finish(live_.begin()->second.get(), FinishReason::Cancelled);
    publish();
}

std::shared_ptr<Stream> Engine::Impl::submit(GenerateRequest g) {
    const int64_t n = int64_t(g.prompt.size());
    if (n == 0) throw std::invalid_argument("the prompt is empty");
    if (n + 1 > context_)
        throw RequestTooLarge("the prompt has " + std::to_string(n) + " tokens, this server's context is " +
                              std::to_string(context_));
    for (size_t i = 0; i < g.prompt.size(); ++i)
        if (g.prompt[i] < 0 || g.prompt[i] >= vocab_)
            throw std::invalid_argument("prompt token " + std::to_string(i) + " is id " +
                                        std::to_string(g.prompt[i]) + ", outside the vocabulary (0.." +
                                        std::to_string(vocab_ - 1) + ")");
    if (g.max_tokens < 1) throw std::invalid_argument("max_tokens must be at least 1");
    auto r = std::make_unique<Request>();
    r->tokens = std::move(g.prompt);
    r->prompt_len = int(n);
    r->max_tokens = int(std::min<int64_t>(g.max_tokens, context_ - n));
    r->stop_ids = std::move(g.stop_ids);
    r->constraint = std::move(g.json);
    r->sampling = g.sampling;
    r->priority = g.priority;
    r->arrival = now();
    r->info.prompt_tokens = int(n);

    std::lock_guard lock(mu_);
    const int waiting = stats_.waiting + int(incoming_.size());
    if (waiting >= cfg.max_waiting) {
        const int seats = std::max(1, slots_.total());
        throw QueueFull(std::max(1.0, seat_seconds_ * std::ceil(double(waiting + 1) / seats)));
    }
    r->id = next_id_++;
    r->rng = initial_rng(r->sampling, r->id);
    r->stream = std::make_shared<Stream>(r->id);
    r->info.submit_step = stats_.steps_total;
    auto stream = r->stream;
    incoming_.push_back(std::move(r));
    cv_.notify_all();
    return stream;
}

void Engine::Impl::loop() {
    bool ran = false;
    for (;;) {
        {
            std::unique_lock lock(mu_);
            const auto woken = [&] { return stop_ || !incoming_.empty(); };
            // Nothing live: sleep until a request comes. Live but nothing ran (nothing fits):
            // look again soon, if only to notice cancellations.
            if (live_.empty())
                cv_.wait(lock, woken);
            else if (!ran)
                cv_.wait_for(lock, std::chrono::milliseconds(20), woken);
            if (stop_) return;
        }
        take_new();
        for (auto it = live_.begin(); it != live_.end();) {
            Request* r = (it++)->second.get();
            if (r->stream->cancelled()) finish(r, FinishReason::Cancelled);
        }
        ran = false;
        if (!live_.empty()) {
            const Step s = sched_.schedule(now());
            ran = !s.chunks.empty();
            if (prepare(s) && ran) run_step(s);
        }
        publish();
    }
}

void Engine::Impl::take_new() {
    std::lock_guard lock(mu_);
    for (auto& r : incoming_) {
        sched_.add(r.get(), now());
        live_.emplace(r->id, std::move(r));
    }
    stats_.waiting += int(incoming_.size());
    incoming_.clear();
}

// Readies the caches before the step runs (also when it has no chunks): the preempted
// sequences to park are copied out first, while their blocks and slot still hold them; then
// each admitted request's slot is cleared, or its parked caches are copied back into the
// blocks and slot it got now. Returns false when that failed and the step must not run.
bool Engine::Impl::prepare(const Step& s) {
    for (const Parking& p : s.parked) {
        try {
            parked_.insert_or_assign(p.req->id, model_.park(p.slot, p.blocks, p.tokens));
        } catch (const std::exception& e) {
            log_->warn("request {}: parking failed, it will recompute: {}", p.req->id, e.what());
            sched_.park_failed(p.req);
        }
    }
    try {
        for (Request* r : s.admitted) {
            if (contains(s.restored, r)) {
                model_.restore(parked_.at(r->id), r->slot, r->blocks);
                parked_.erase(r->id);
            } else {
                model_.clear_slot(r->slot);
            }
            if (r->first_scheduled < 0) {
                r->first_scheduled = now();
                r->info.queue_seconds = r->first_scheduled - r->arrival;
            }
        }
        return true;
    } catch (const std::exception& e) {
        // The state slots of the step are suspect, so every request in it ends; others go on.
        log_->error("step {}: readying the caches failed: {}", s.index, e.what());
        std::vector<Request*> failed = s.admitted;
        for (const Chunk& c : s.chunks)
            if (!contains(failed, c.req)) failed.push_back(c.req);
        for (Request* r : failed)
            finish(r, FinishReason::Error, std::string("the model failed: ") + e.what());
        return false;
    }
}

// The prefill rate the park-or-recompute choice weighs against copying: tokens a second of
// steps that carry at least a quarter of the step budget (decode-only steps are slower per
// token and would make recomputing look dearer than it is). A moving average.
void Engine::Impl::note_step_time(int tokens, double seconds) {
    if (tokens < std::max(2, sched_.config().step_tokens / 4) || seconds <= 0) return;
    const double rate = tokens / seconds;
    prefill_rate_ = prefill_rate_ > 0 ? 0.8 * prefill_rate_ + 0.2 * rate : rate;
    sched_.set_prefill_rate(prefill_rate_);
}

void Engine::Impl::run_step(const Step& s) {
    std::vector<Request*> sampled;
    for (const Chunk& c : s.chunks)
        if (c.logits) sampled.push_back(c.req);
    std::vector<TokenEvent> events;
    try {
        const auto t = std::chrono::steady_clock::now();
        model::StepPlan plan = plan_step(s, blocks_.block_tokens());
        // The rows the sampler can draw from reduced on the device: no whole rows to bring back.
        bool reduce = false;
        for (const Request* r : sampled) {
            plan.top_asks.push_back(Sampler::top_ask(*r));
            reduce = reduce || plan.top_asks.back().k > 0;
        }
        if (!reduce) plan.top_asks.clear();
        const std::span<float> logits = model_.step(plan);
        note_step_time(s.tokens(),
                       std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count());
        ++counters_.steps_total;
        sched_.complete(s);
        Sampler::Reduced reduced;
        if (reduce) {
            reduced.top = [&](size_t i) -> const kernels::TopLogits* {
                if (plan.top_asks[i].k <= 0) return nullptr;
                ++counters_.rows_reduced_total;
                return &model_.top_logits(int(i));
            };
            reduced.fetch = [&](const std::vector<int64_t>& rows) {
                counters_.rows_fetched_total += rows.size();
                model_.fetch_rows(rows);
            };
        }
        events = sampler_.sample(sampled, logits.data(), vocab_, reduced);
    } catch (const std::exception& e) {
        // The step's state writes are suspect, so every request in it ends; others go on.
        log_->error("step {} failed: {}", s.index, e.what());
        for (const Chunk& c : s.chunks)
            finish(c.req, FinishReason::Error, std::string("the model failed: ") + e.what());
        return;
    }
    for (size_t i = 0; i < sampled.size(); ++i) emit_token(sampled[i], events[i]);
}

void Engine::Impl::emit_token(Request* r, const TokenEvent& e) {
    if (r->info.first_token_step == 0) {
        r->info.first_token_seconds = now() - r->arrival;
        r->info.first_token_step = counters_.steps_total;
        counters_.prompt_tokens_total += uint64_t(r->prompt_len);
    }
    if (e.token < 0) {
        // Only a constraint refuses every token (not with a byte-level vocabulary).
        log_->warn("request {}: no token can continue its JSON; it ends here", r->id);
        return finish(r, FinishReason::Length);
    }
    if (std::find(r->stop_ids.begin(), r->stop_ids.end(), e.token) != r->stop_ids.end())
        return finish(r, FinishReason::Stop);
    r->tokens.push_back(e.token);
    ++counters_.generation_tokens_total;
    emitted_.emplace_back(r->stream, e);
    if (r->constraint) {
        r->constraint->advance(e.token);
        if (r->constraint->complete()) return finish(r, FinishReason::Stop);
    }
    if (r->generated() >= r->max_tokens) finish(r, FinishReason::Length);
}

// Frees the request's seat and blocks now; its stream closes once the stats show that.
void Engine::Impl::finish(Request* r, FinishReason why, std::string error) {
    r->info.reason = why;
    r->info.error = std::move(error);
    r->info.completion_tokens = std::max(0, r->generated());
    r->info.preemptions = r->preemptions;
    sched_.remove(r);
    parked_.erase(r->id);
    ++counters_.requests_finished_total;
    if (r->first_scheduled >= 0) {
        std::lock_guard lock(mu_);
        seat_seconds_ = 0.9 * seat_seconds_ + 0.1 * (now() - r->first_scheduled);
    }
    closing_.emplace_back(r->stream, r->info);
    live_.erase(r->id);
}

void Engine::Impl::publish() {
    EngineStats st = counters_;
    st.running = int(sched_.running().size());
    st.waiting = int(sched_.waiting().size());
    st.preempted_total = sched_.preempted_total();
    st.parked_total = sched_.parked_total();
    st.parked = sched_.parked_count();
    st.parked_bytes = sched_.parked_bytes();
    st.park_budget_bytes = sched_.config().park.budget_bytes;
    st.kv_blocks_total = blocks_.total();
    st.kv_blocks_used = blocks_.used();
    st.kv_block_tokens = blocks_.block_tokens();
    for (const Request* r : sched_.running()) st.kv_tokens_used += r->computed;
    st.slots_total = slots_.total();
    st.slots_used = slots_.used();
    {
        std::lock_guard lock(mu_);
        stats_ = st;
    }
    // Clients see a step's tokens and endings only once the stats show that step, so a
    // client that reacts to a token (e.g. by submitting more work) finds consistent counts.
    for (auto& [stream, event] : emitted_) stream->push(std::move(event));
    emitted_.clear();
    for (auto& [stream, info] : closing_) stream->close(info);
    closing_.clear();
}

Engine::Engine(model::Model& model, EngineConfig config) : impl_(std::make_unique<Impl>(model, config)) {}
Engine::~Engine() = default;
std::shared_ptr<Stream> Engine::submit(GenerateRequest request) {
    return impl_->submit(std::move(request));
}
EngineStats Engine::stats() const {
    return impl_->stats();
}
const EngineConfig& Engine::config() const {
    return impl_->cfg;
}

}  // namespace niwa::sched
