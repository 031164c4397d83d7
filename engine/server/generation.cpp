#include "engine/server/generation.h"

#include "engine/runtime/log.h"

namespace niwa::server {

namespace {

void append(GenerationDelta& d, text::ParserDelta&& p) {
    d.reasoning += p.reasoning;
    d.content += p.content;
    for (auto& c : p.tool_calls) d.tool_calls.push_back(std::move(c));
}

}  // namespace

Generation::Generation(ServerContext& ctx, const Loaded& loaded, std::shared_ptr<sched::Stream> stream,
                       GenerationSetup setup)
    : ctx_(ctx),
      stream_(std::move(stream)),
      decoder_(loaded.tokenizer),
      stops_(std::move(setup.stop)),
      prompt_tokens_(setup.prompt_tokens),
      submitted_(std::chrono::steady_clock::now()) {
    if (setup.parser) {
        parser_.emplace(std::move(*setup.parser));
        if (!setup.forced_prefix.empty()) append(pending_, parser_->push(setup.forced_prefix));
    }
}

Generation::~Generation() {
    if (!done_) cancel();
}

void Generation::cancel() {
    if (done_) return;
    stream_->cancel();
    end("abort");
}

void Generation::feed(std::string_view piece, GenerationDelta& d) {
    if (piece.empty()) return;
    text_ += piece;
    if (parser_) {
        append(d, parser_->push(piece));
    } else {
        d.content += piece;
    }
}

GenerationDelta Generation::poll(std::chrono::milliseconds wait) {
    GenerationDelta d = std::move(pending_);
    pending_ = {};
    if (done_) return d;
    std::vector<sched::TokenEvent> events;
    const bool more = stream_->next(events, wait);
    if (!events.empty()) {
        const auto now = std::chrono::steady_clock::now();
        if (!last_token_) {
            ctx_.metrics.time_to_first_token(std::chrono::duration<double>(now - submitted_).count());
            if (events.size() > 1) ctx_.metrics.inter_token_latency(0, int(events.size()) - 1);
        } else {
            // Tokens taken together arrived over the interval: each gets its share.
            const double gap = std::chrono::duration<double>(now - *last_token_).count();
            ctx_.metrics.inter_token_latency(gap / double(events.size()), int(events.size()));
        }
        last_token_ = now;
    }
    for (const sched::TokenEvent& e : events) {
        if (stops_.stopped()) break;
        ++completion_tokens_;
        d.tokens.push_back(e);
        feed(stops_.push(decoder_.push(e.token)), d);
    }
    if (stops_.stopped()) {
        // The rest of the output is not wanted: free the seat now.
        stream_->cancel();
        if (parser_) append(d, parser_->finish());
        end(parser_ && parser_->has_tool_calls() ? "tool_calls" : "stop");
        return d;
    }
    if (more) return d;
    feed(stops_.push(decoder_.flush()), d);
    feed(stops_.finish(), d);
    if (parser_) append(d, parser_->finish());
    const sched::FinishInfo f = stream_->finish();
    ctx_.metrics.queue_time(f.queue_seconds);
    switch (f.reason) {
        case sched::FinishReason::Length:
            end("length");
            break;
        case sched::FinishReason::Cancelled:
            end("abort");
            break;
        case sched::FinishReason::Error:
            error_ = f.error.empty() ? "the engine failed while generating" : f.error;
            end("error");
            break;
        default:
            end(parser_ && parser_->has_tool_calls() ? "tool_calls" : "stop");
            break;
    }
    return d;
}

void Generation::end(std::string reason) {
    done_ = true;
    finish_reason_ = std::move(reason);
    const double e2e = std::chrono::duration<double>(std::chrono::steady_clock::now() - submitted_).count();
    ctx_.metrics.e2e_latency(e2e);
    ctx_.metrics.finished(finish_reason_ == "tool_calls" ? "stop" : finish_reason_);
    if (parser_) {
        for (const std::string& w : parser_->warnings())
            log::get("server")->info("request {}: {}", stream_->id(), w);
    }
    log::get("server")->info("request {} ({}) finished: {}, {} prompt + {} generated tokens in {:.2f} s",
                             stream_->id(), client_.empty() ? "no key" : client_, finish_reason_,
                             prompt_tokens_, completion_tokens_, e2e);
}

}  // namespace niwa::server
