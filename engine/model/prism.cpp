#include "engine/model/prism.h"

#include <stdexcept>

#include "engine/gguf/reader.h"
#include "engine/gguf/writer.h"

namespace niwa::model {

namespace {

constexpr const char* kTransform = "normalized-sylvester-walsh-hadamard";
constexpr const char* kAxis = "input-last-dimension";

[[noreturn]] void bad(const std::string& m) {
    throw std::runtime_error("prism.hadamard metadata: " + m);
}

}  // namespace

PrismRotation PrismRotation::from_gguf(const gguf::Reader& r) {
    PrismRotation p;
    // The value-head order of ssm_out's input is independent of the rotation: read it even
    // from a file that is not rotated.
    p.gdn_v_grouped = r.opt_bool("prism.hadamard.gdn_v_grouped").value_or(false);
    if (!r.has("prism.hadamard.version")) return p;
    const uint32_t version = r.get_u32("prism.hadamard.version");
    if (version != 1)
        bad("version " + std::to_string(version) + " is not supported (this engine reads version 1)");
    if (r.get_string("prism.hadamard.transform") != kTransform)
        bad("transform '" + r.get_string("prism.hadamard.transform") + "' is not " + kTransform);
    if (r.get_string("prism.hadamard.axis") != kAxis)
        bad("axis '" + r.get_string("prism.hadamard.axis") + "' is not " + kAxis);
    p.enabled = true;
    p.block = int(r.get_u32("prism.hadamard.block_size"));
    if (p.block < 2 || (p.block & (p.block - 1)))
        bad("block_size " + std::to_string(p.block) + " is not a power of two");
    for (auto& n : r.get_string_array("prism.hadamard.weight_names")) p.folded.insert(n);
    if (r.has("prism.hadamard.inverse_weight_names"))
        for (auto& n : r.get_string_array("prism.hadamard.inverse_weight_names")) p.inverse.insert(n);

    const std::vector<int32_t> widths = r.get_i32_array("prism.hadamard.sign_widths");
    const std::string mode = r.get_string("prism.hadamard.sign_mode");
    if (mode == "identity") {
        for (int32_t w : widths) p.signs[w] = std::vector<float>(size_t(w), 1.0f);
    } else if (mode == "explicit") {
        const std::vector<int32_t> values = r.get_i32_array("prism.hadamard.sign_values");
        size_t at = 0;
        for (int32_t w : widths) {
            if (w <= 0 || w % p.block)
                bad("sign width " + std::to_string(w) + " is not a multiple of the block size");
            if (at + size_t(w) > values.size())
                bad("sign_values has " + std::to_string(values.size()) + " entries, widths need more");
            std::vector<float> s(static_cast<size_t>(w));
            for (int32_t i = 0; i < w; ++i) {
                const int32_t v = values[at + size_t(i)];
                if (v != 1 && v != -1)
                    bad("sign_values[" + std::to_string(at + size_t(i)) + "] is " + std::to_string(v) +
                        ", not ±1");
                s[size_t(i)] = float(v);
            }
            p.signs[w] = std::move(s);
            at += size_t(w);
        }
        if (at != values.size())
            bad("sign_values has " + std::to_string(values.size()) + " entries, widths need " +
                std::to_string(at));
    } else {
        bad("sign_mode '" + mode + "' is neither 'explicit' nor 'identity'");
    }
    return p;
}

void PrismRotation::to_gguf(gguf::Writer& w) const {
    if (!enabled) {
        if (gdn_v_grouped) w.add_bool("prism.hadamard.gdn_v_grouped", true);
        return;
    }
    w.add_u32("prism.hadamard.version", 1);
    w.add_u32("prism.hadamard.block_size", uint32_t(block));
    w.add_string("prism.hadamard.transform", kTransform);
    w.add_string("prism.hadamard.axis", kAxis);
    w.add_string("prism.hadamard.sign_mode", "explicit");
    w.add_string_array("prism.hadamard.weight_names", {folded.begin(), folded.end()});
    std::vector<int32_t> widths, values;
    for (const auto& [width, s] : signs) {  // std::map: ascending widths
        widths.push_back(int32_t(width));
        for (float v : s) values.push_back(v < 0 ? -1 : 1);
    }
    w.add_i32_array("prism.hadamard.sign_widths", widths);
    w.add_i32_array("prism.hadamard.sign_values", values);
    w.add_string_array("prism.hadamard.inverse_weight_names", {inverse.begin(), inverse.end()});
    w.add_bool("prism.hadamard.gdn_v_grouped", gdn_v_grouped);
}

const std::vector<float>& PrismRotation::signs_for(int64_t width) const {
    auto it = signs.find(width);
    if (it == signs.end()) bad("no sign vector for input width " + std::to_string(width));
    return it->second;
}

}  // namespace niwa::model
