// libFuzzer target for the GGUF reader: any input must either parse (and then every tensor's
// bytes and every value must be readable) or throw gguf::Error; anything else is a bug.
// Build: cmake -DCMAKE_CXX_COMPILER=clang++ -DNIWA_FUZZ=ON -DNIWA_TESTS=OFF ...; target
// fuzz_gguf_reader. NIWA_FUZZ_SEED_DIR=dir writes a valid seed file there at start-up.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "engine/gguf/reader.h"
#include "engine/gguf/writer.h"

namespace {

void write_seed(const std::string& dir) {
    using namespace niwa::gguf;
    Writer w;
    w.add_string("general.architecture", "qwen35");
    w.add_u32("qwen35.block_count", 4);
    w.add_f32("qwen35.rope.freq_base", 1e7f);
    w.add_bool("prism.hadamard.gdn_v_grouped", true);
    w.add_i32_array("qwen35.rope.dimension_sections", {11, 11, 10, 0});
    w.add_string_array("tokenizer.ggml.tokens", {"a", "b", std::string("\0c", 2)});
    w.set_alignment(64);
    w.add_tensor_bytes("token_embd.weight", TensorType::PQ2_0, {128, 2}, std::vector<uint8_t>(68, 0x5a));
    w.add_tensor_bytes("output_norm.weight", TensorType::F32, {4}, std::vector<uint8_t>(16, 0x3f));
    w.add_tensor_bytes("blk.0.ssm_alpha.weight", TensorType::BF16, {2, 2}, std::vector<uint8_t>(8, 0x40));
    w.write(dir + "/seed.gguf");
}

// Reads everything a loader would, so the fuzzer checks the promises parse() makes.
uint64_t touch(const niwa::gguf::Reader& r) {
    uint64_t sum = 0;
    for (const auto& t : r.tensors()) {
        // The byte size must be exactly elements x bytes per element, computed without wrapping.
        const auto tt = niwa::gguf::traits(t.type);
        if (static_cast<unsigned __int128>(t.nbytes) * static_cast<uint64_t>(tt.block_elems) !=
            static_cast<unsigned __int128>(t.n_elements()) * static_cast<uint64_t>(tt.block_bytes))
            std::abort();
        for (uint8_t b : r.data(t)) sum += b;
        sum += static_cast<uint64_t>(t.n_elements()) + (r.tensor(t.name) == &t);
    }
    for (const auto& kv : r.metadata()) {
        sum += niwa::gguf::type_name(kv.value).size() + (r.find(kv.key) == &kv);
        try {
            sum += r.get_u32(kv.key);
        } catch (const niwa::gguf::Error&) {
            sum += 1;
        }
    }
    return sum;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    if (const char* dir = std::getenv("NIWA_FUZZ_SEED_DIR")) write_seed(dir);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        const auto r = niwa::gguf::Reader::from_memory({data, size}, "fuzz");
        volatile uint64_t sink = touch(r);
        (void)sink;
    } catch (const niwa::gguf::Error&) {
    }
    return 0;
}
