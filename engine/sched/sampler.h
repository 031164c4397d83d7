// Turns a request's logits into its next token: OpenAI presence/frequency penalties over the
// tokens it generated, then temperature / top_k / top_p / min_p through the CPU sample op,
// drawing from the request's own splitmix64 stream (seeded from SamplingParams::seed or the
// request id), so a seeded request samples the same tokens whatever else runs beside it and
// however often it is preempted. Logprobs are the log-softmax of the penalised logits.
// A request with a JsonConstraint takes the first allowed token in sampling order (rejected
// draws are masked and redrawn, which takes more draws from its RNG); token -1 when the whole
// vocabulary is refused.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "engine/sched/request.h"
#include "kernels/ops.h"

namespace niwa::sched {

// The sample op on the rows listed of logits, params[i] and ids[i] row i's: a run of
// consecutive rows a call (kernels::for_each_run), which spreads its rows over the op's threads (a row each;
// a flat row's deep sort needs a thread of its own), a lone row splitting its pass instead.
void sample_listed_rows(kernels::Ops& ops, const kernels::Tensor& logits, const std::vector<size_t>& rows,
                        const kernels::SampleParams* params, int32_t* ids);

// The RNG state a request starts from.
uint64_t initial_rng(const SamplingParams& p, uint64_t request_id);

// Threads the sampler spreads a step's rows over (rows are independent, and the GPU waits for
// the tokens): up to 8, never more than the machine has.
int sampler_threads();

class Sampler {
public:
    Sampler();
    // What a request's next row may be reduced to on its device (StepPlan::top_asks), or k 0: the
    // whole row is needed (penalties, a constraint, logprobs).
    static kernels::TopAsk top_ask(const Request& r);
    // Rows a step reduced on its device (Model::top_logits, Model::fetch_rows).
    struct Reduced {
        std::function<const kernels::TopLogits*(size_t)> top;    // row i's reduction; null: whole
        std::function<void(const std::vector<int64_t>&)> fetch;  // brings the rows listed whole
    };
    // One token per request; row i of `logits` ([reqs.size(), vocab], host) belongs to reqs[i]
    // and is modified in place (penalties). A reduced row is drawn from its reduction, or fetched
    // whole when the draw reaches below it (one fetch a step for all such rows): the same token
    // either way. Advances each request's RNG by one draw.
    std::vector<TokenEvent> sample(const std::vector<Request*>& reqs, float* logits, int64_t vocab,
                                   const Reduced& reduced = {});

private:
    std::unique_ptr<kernels::Ops> ops_;
};

}  // namespace niwa::sched
