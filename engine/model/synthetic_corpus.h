// The built-in text that mkmodel's BPE trainer learns its merges from: mixed English,
// Japanese, code and numbers, so synthetic vocabularies exercise every tokenizer path.
#pragma once

#include <string_view>

namespace niwa::model {

std::string_view synthetic_corpus();

}  // namespace niwa::model
