// Ops::gate_inputs: GDN's alpha and beta as the one [alpha | beta] tensor their stacked weight
// writes (GdnRaw::ab).
#include "kernels/op_checks.h"

namespace niwa::kernels {

Tensor Ops::gate_inputs(const Tensor& alpha, const Tensor& beta) const {
    const char* op = "gated_delta_rule_raw";
    check_f32(name(), alpha, op, "alpha");
    check_f32(name(), beta, op, "beta");
    check_same_shape(name(), alpha, beta, op);
    check_arg(
        name(),
        beta.data == alpha.as<float>() + alpha.cols && alpha.ld == beta.ld && alpha.ld >= 2 * alpha.cols, op,
        "with GdnRaw::ab, alpha and beta must be the two halves of one tensor, alpha first");
    return Tensor{alpha.data, DType::F32, alpha.rows, 2 * alpha.cols, alpha.ld};
}

}  // namespace niwa::kernels
