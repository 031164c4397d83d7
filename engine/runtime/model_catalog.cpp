// The published files of Ternary-Bonsai-2-27B (names and sizes from MODEL.md).
#include "engine/runtime/model_catalog.h"

#include <cstdlib>

namespace niwa::runtime {

const std::vector<PublishedModel>& published_models() {
    // The default base URL is our best reading of where PrismML publishes the GGUF files; it
    // may need updating when they move. --base-url and NIWA_MODEL_BASE_URL override it.
    static const std::vector<PublishedModel> models = {
        {"bonsai-27b",
         "https://huggingface.co/prism-ml/Ternary-Bonsai-2-27B-gguf/resolve/main/",
         "pq2_0",
         {{"pq2_0", {"Ternary-Bonsai-2-27B-PQ2_0.gguf", 7206168928ull}},
          {"ptq1_0", {"Ternary-Bonsai-2-27B-PTQ1_0.gguf", 5946648928ull}}},
         {"Ternary-Bonsai-2-27B-mmproj-Q8_0.gguf", std::nullopt}},  // size not published in MODEL.md
    };
    return models;
}

const PublishedModel* find_published_model(std::string_view id) {
    for (const PublishedModel& m : published_models())
        if (m.id == id) return &m;
    return nullptr;
}

const PublishedFile* find_quant(const PublishedModel& model, std::string_view quant) {
    if (quant.empty()) quant = model.default_quant;
    for (const auto& [name, file] : model.quants)
        if (name == quant) return &file;
    return nullptr;
}

std::string model_base_url(const PublishedModel& model, const std::string& override_url) {
    std::string url = override_url;
    if (url.empty())
        if (const char* env = std::getenv("NIWA_MODEL_BASE_URL")) url = env;
    if (url.empty()) url = model.default_base_url;
    if (url.back() != '/') url += '/';
    return url;
}

}  // namespace niwa::runtime
