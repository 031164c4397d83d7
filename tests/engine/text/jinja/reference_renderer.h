// Runs render_reference.py (Python's jinja2, set up like transformers) over a batch of
// cases in one process and hands back its answers, for the conformance tests.
#pragma once

#include <QString>

#include <nlohmann/json.hpp>

namespace niwa::test {

struct ReferenceResult {
    bool ok = false;  // the script ran; otherwise `error` says why
    QString error;
    nlohmann::ordered_json answers;  // one {"output"} or {"error", "raised"} per case
};

// `cases` is {"cases": [...]} as render_reference.py documents it.
ReferenceResult render_with_jinja2(const nlohmann::ordered_json& cases);

}  // namespace niwa::test
