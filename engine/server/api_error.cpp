#include "engine/server/api_error.h"

#include <cmath>

#include <httplib.h>

namespace niwa::server {

namespace {

std::string type_for(int status) {
    switch (status) {
        case 401:
            return "authentication_error";
        case 403:
            return "permission_error";
        case 404:
            return "not_found_error";
        case 429:
            return "rate_limit_error";
        case 503:
            return "service_unavailable_error";
        default:
            return status >= 500 ? "server_error" : "invalid_request_error";
    }
}

}  // namespace

ApiError::ApiError(int status_, std::string message, std::string param_, std::string code_)
    : std::runtime_error(std::move(message)),
      status(status_),
      type(type_for(status_)),
      param(std::move(param_)),
      code(std::move(code_)) {}

ApiError bad_field(const std::string& field, const std::string& what) {
    return ApiError(400, "'" + field + "' " + what, field, "invalid_value");
}

nlohmann::json error_json(const ApiError& e) {
    const auto or_null = [](const std::string& s) {
        return s.empty() ? nlohmann::json() : nlohmann::json(s);
    };
    return {
        {"error",
         {{"message", e.what()}, {"type", e.type}, {"param", or_null(e.param)}, {"code", or_null(e.code)}}}};
}

void write_error(httplib::Response& res, const ApiError& e) {
    res.status = e.status;
    if (e.retry_after_s)
        res.set_header("Retry-After", std::to_string(std::max(1L, std::lround(std::ceil(*e.retry_after_s)))));
    res.set_content(error_json(e).dump(), "application/json");
}

}  // namespace niwa::server
