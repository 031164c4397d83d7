// The errors a route answers with, in OpenAI's shape: {"error": {"message", "type", "param",
// "code"}} with the HTTP status that goes with them. Routes throw ApiError; one place writes it.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace httplib {
struct Response;
}

namespace niwa::server {

class ApiError : public std::runtime_error {
public:
    ApiError(int status, std::string message, std::string param = {}, std::string code = {});

    int status;
    std::string type;   // invalid_request_error, authentication_error, ... (from the status)
    std::string param;  // the request field at fault, when there is one
    std::string code;
    std::optional<double> retry_after_s;  // 429 and 503: sent as Retry-After
};

// 400 for `field`: "'field' must be ..." names the field in message and param.
ApiError bad_field(const std::string& field, const std::string& what);

nlohmann::json error_json(const ApiError& e);
// Writes the status, the Retry-After header and the JSON body.
void write_error(httplib::Response& res, const ApiError& e);

}  // namespace niwa::server
