// Ops::stage_rotated_input: a rotated matmul input built from the ops it is made of, what every
// backend does where it does not fuse the input into its matmul.
#include "kernels/op_checks.h"

namespace niwa::kernels {

void check_rotated_input(const char* backend, const RotatedInput& in, const Tensor& staged) {
    const char* op = "rotated_matmul";
    using K = RotatedInput::Kind;
    check_f32(backend, in.x, op, "x");
    check_f32(backend, staged, op, "staged");
    check_same_shape(backend, in.x, staged, op);
    check_arg(backend, staged.ld == staged.cols, op, "staged must be whole rows (ld == cols)");
    if (in.kind == K::Rotate) return;
    if (in.kind == K::ResidualNorm) {
        check_arg(backend, in.w != nullptr, op, "a residual norm needs its norm weight");
        if (in.normed.data) {
            check_f32(backend, in.normed, op, "normed");
            check_same_shape(backend, in.x, in.normed, op);
        }
        if (in.squares.data) {
            check_f32(backend, in.squares, op, "squares");
            check_arg(backend, in.squares.rows == in.x.rows && in.squares.cols > 0, op,
                      "squares must hold one row of parts per row of x");
        }
        return;
    }
    check_f32(backend, in.other, op, in.kind == K::Swiglu ? "up" : in.kind == K::GatedNorm ? "z" : "gate");
    if (in.kind == K::Swiglu) return check_same_shape(backend, in.x, in.other, op);
    check_arg(
        backend, in.width > 0 && in.x.cols % in.width == 0, op,
        "x's " + std::to_string(in.x.cols) + " channels are not whole heads of " + std::to_string(in.width));
    if (in.kind == K::GatedNorm) return check_same_shape(backend, in.x, in.other, op);
    check_arg(backend, in.x.ld == in.x.cols, op, "x must be whole rows (ld == cols) to be read as heads");
    check_arg(backend, in.other.rows == in.x.rows * (in.x.cols / in.width) && in.other.cols == in.width, op,
              "the gate must be one row of " + std::to_string(in.width) + " per head of x");
}

void Ops::stage_rotated_input(const RotatedInput& in, const Tensor& staged) {
    check_rotated_input(name(), in, staged);
    switch (in.kind) {
        case RotatedInput::Kind::Rotate:
            return rotate(in.x, in.r, /*signs_first=*/true, staged);
        case RotatedInput::Kind::Swiglu:
            return swiglu_rotate(in.x, in.other, in.r, staged);
        case RotatedInput::Kind::GatedNorm:
            return rmsnorm_gated_rotate(in.x, in.w, in.other, in.eps, in.width, in.r, staged);
        case RotatedInput::Kind::ResidualNorm: {
            // As residual_norm norms and rotates (with nothing to add); squares are not needed.
            const Tensor& xn = in.normed.data ? in.normed : staged;
            rmsnorm(in.x, in.w, in.eps, xn);
            return rotate(xn, in.r, /*signs_first=*/true, staged);
        }
        case RotatedInput::Kind::SigmoidGate: {
            const int64_t heads = in.x.rows * (in.x.cols / in.width);
            sigmoid_mul(Tensor{in.x.data, in.x.type, heads, in.width, in.width}, in.other,
                        Tensor{staged.data, staged.type, heads, in.width, in.width});
            return rotate(staged, in.r, /*signs_first=*/true, staged);
        }
    }
}

}  // namespace niwa::kernels
