// A hand-made byte-level BPE vocabulary written as a GGUF (tokenizer.ggml.* keys), small
// enough that every expected id in the tests can be worked out by hand: ids 0..255 are the
// bytes 0..255, then a few merges and added tokens (see tiny_vocab.cpp for the table).
#pragma once

#include <cstdint>
#include <string>

namespace niwa::test {

namespace tiny {
constexpr int32_t kHe = 256, kLl = 257, kHell = 258, kHello = 259, kSpaceW = 260;  // merges
constexpr int32_t kImStart = 261, kImEnd = 262;                                    // control
constexpr int32_t kThink = 263;                                                    // user-defined
constexpr int32_t kEndOfText = 264;                                                // control
constexpr int32_t kIm = 265;                                                       // user-defined "<|im"
constexpr int32_t kVocab = 266;
}  // namespace tiny

// GPT-2's symbol for a byte, written out independently of engine/text/byte_level.
std::string gpt2_symbol(uint8_t byte);

// Writes the tiny vocabulary to `path` with the given tokenizer.ggml.pre and .model values.
void write_tiny_vocab(const std::string& path, const std::string& pre = "qwen35",
                      const std::string& model = "gpt2");

}  // namespace niwa::test
