// The chat template that mkmodel writes into synthetic models: the shape of Bonsai 2's
// (MODEL.md "Chat template"), in our own words.
#pragma once

#include <string_view>

namespace niwa::text {

std::string_view synthetic_chat_template();

}  // namespace niwa::text
