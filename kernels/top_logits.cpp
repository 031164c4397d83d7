// Ops::top_logits's default, for backends whose memory is the host's: each row reduced in place
// by top_logits_row (kernels/sample_draw.h), the oracle a device's reduction is tested against.
#include "kernels/op_checks.h"
#include "kernels/sample_draw.h"

namespace niwa::kernels {

void Ops::top_logits(const Tensor& logits, const TopAsk* asks, TopLogits* out) {
    check_arg(name(), host_memory(), "top_logits", "the default reduces rows in host memory");
    check_f32(name(), logits, "top_logits", "logits");
    for (int64_t r = 0; r < logits.rows; ++r)
        top_logits_row(logits.as<float>() + r * logits.ld, logits.cols, asks[r], out[r]);
}

}  // namespace niwa::kernels
