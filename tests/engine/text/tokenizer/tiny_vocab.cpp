#include "tiny_vocab.h"

#include <vector>

#include "engine/gguf/writer.h"

namespace niwa::test {

std::string gpt2_symbol(uint8_t byte) {
    // GPT-2: printable Latin-1 bytes ('!'..'~', U+00A1..U+00AC, U+00AE..U+00FF) are their own
    // code point; the other 68 bytes take U+0100, U+0101, ... in byte order.
    auto printable = [](int b) { return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE; };
    int cp = byte;
    if (!printable(byte)) {
        cp = 0x100;
        for (int b = 0; b < byte; ++b)
            if (!printable(b)) ++cp;
    }
    std::string s;
    if (cp < 0x80) {
        s.push_back(static_cast<char>(cp));
    } else {
        s.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
    return s;
}

void write_tiny_vocab(const std::string& path, const std::string& pre, const std::string& model) {
    std::vector<std::string> tokens;
    std::vector<int32_t> types;
    for (int b = 0; b < 256; ++b) {
        tokens.push_back(gpt2_symbol(static_cast<uint8_t>(b)));
        types.push_back(1);  // normal
    }
    const std::string space = gpt2_symbol(' ');  // "Ġ"
    for (const std::string& t :
         {std::string("he"), std::string("ll"), std::string("hell"), std::string("hello"), space + "w"}) {
        tokens.push_back(t);
        types.push_back(1);
    }
    tokens.insert(tokens.end(), {"<|im_start|>", "<|im_end|>", "<think>", "<|endoftext|>", "<|im"});
    types.insert(types.end(), {3, 3, 4, 3, 4});  // control, control, user-defined, control, user-defined

    gguf::Writer w;
    w.add_string("general.architecture", "qwen35");
    w.add_string("tokenizer.ggml.model", model);
    w.add_string("tokenizer.ggml.pre", pre);
    w.add_string_array("tokenizer.ggml.tokens", tokens);
    w.add_i32_array("tokenizer.ggml.token_type", types);
    // Rank order matters: "l l" outranks "he l", so "hell" can only come from "he" + "ll".
    w.add_string_array("tokenizer.ggml.merges", {"h e", "l l", "he ll", "hell o", space + " w"});
    w.add_u32("tokenizer.ggml.eos_token_id", tiny::kImEnd);
    w.add_bool("tokenizer.ggml.add_bos_token", false);
    w.write(path);
}

}  // namespace niwa::test
