// The tensor layout of a qwen35 GGUF: every tensor's name, shape and allowed types
// (MODEL.md "Tensors"). mkmodel writes exactly this; the loader checks files against it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/gguf/gguf.h"
#include "engine/model/hparams.h"

namespace niwa::model {

enum class TensorKind {
    Ternary,  // packed ternary matrix: PQ2_0 or PTQ1_0 (other quant types accepted on load)
    Norm,     // F32 vector
    F32,      // other F32 tensors (conv, ssm_a, dt bias)
    Dense,    // small dense matrix (ssm_alpha / ssm_beta): BF16 (F16/F32 accepted)
};

struct TensorSpec {
    std::string name;
    std::vector<int64_t> ne;  // ne[0] = input dim
    TensorKind kind;
    bool hadamard_folded;  // stores W·H·diag(s) (input side); false for the embedding
};

// All tensors of the model, in the order mkmodel writes them.
std::vector<TensorSpec> tensor_layout(const HParams& hp);

// Whether type t is acceptable for a tensor of this kind.
bool type_allowed(TensorKind kind, gguf::TensorType t);

}  // namespace niwa::model

namespace niwa::gguf {
class Reader;
}

namespace niwa::model {

// Checks every expected tensor's presence, shape and type against the file and throws one
// std::runtime_error listing every problem ("missing: ...", "wrong shape: ...").
void check_layout(const gguf::Reader& r, const HParams& hp);

}  // namespace niwa::model
