// The published model files `niwa-engine pull --model` knows: their names, sizes (when
// known) and where they are downloaded from (see MODEL.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace niwa::runtime {

struct PublishedFile {
    std::string_view name;         // the file name in the repository and on disk
    std::optional<uint64_t> size;  // bytes; a finished download of another size is an error
};

struct PublishedModel {
    std::string_view id;                // as given to --model, e.g. "bonsai-27b"
    std::string_view default_base_url;  // folder URL the file names are appended to
    std::string_view default_quant;
    std::vector<std::pair<std::string_view, PublishedFile>> quants;  // quant id -> weights file
    PublishedFile mmproj;                                            // the vision projector
};

// Every model pull knows, in a stable order.
const std::vector<PublishedModel>& published_models();
// The model with this id, or nullptr.
const PublishedModel* find_published_model(std::string_view id);
// The weights file of `quant` ("" for the model's default), or nullptr when there is none.
const PublishedFile* find_quant(const PublishedModel& model, std::string_view quant);

// Where files are fetched from: `override_url` when not empty, else the environment's
// NIWA_MODEL_BASE_URL, else the model's default. Always ends in '/'.
std::string model_base_url(const PublishedModel& model, const std::string& override_url);

}  // namespace niwa::runtime
