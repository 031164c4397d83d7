// `niwa-engine template`: prints the prompt a chat-completions request renders to, through
// the same ChatTemplate the server uses, so a prompt can be inspected without a server.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "engine/cli/args.h"
#include "engine/cli/commands.h"
#include "engine/gguf/reader.h"
#include "engine/text/chat_template.h"

namespace niwa::cli {
namespace {

constexpr const char* kHelp =
    "usage: niwa-engine template --model FILE --request FILE [--chat-template FILE]\n"
    "\n"
    "Renders an OpenAI chat-completions request body (JSON; '-' reads stdin) with the model's\n"
    "chat template and prints the prompt exactly as the server would feed it to the model.\n"
    "\n"
    "  --model FILE          GGUF model whose tokenizer.chat_template is used\n"
    "  --request FILE        the request body: messages, tools, reasoning_effort,\n"
    "                        chat_template_kwargs, add_generation_prompt\n"
    "  --chat-template FILE  use this Jinja template instead of the model's (then --model\n"
    "                        may be left out)\n";

std::string read_request(const std::string& path) {
    std::ostringstream text;
    if (path == "-") {
        text << std::cin.rdbuf();
        return text.str();
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read request file " + path);
    text << in.rdbuf();
    return text.str();
}

int run_template(int argc, char** argv) {
    Args args("template", argc, argv, {"model", "request", "chat-template"});
    if (args.help()) {
        std::fputs(kHelp, stdout);
        return 0;
    }
    const std::string request_path = args.str("request");
    const text::ChatTemplate tmpl =
        args.has("chat-template") ? text::ChatTemplate::from_file(args.str("chat-template"))
                                  : text::ChatTemplate::from_gguf(gguf::Reader::open(args.str("model")));
    nlohmann::ordered_json request;
    try {
        request = nlohmann::ordered_json::parse(read_request(request_path));
    } catch (const nlohmann::json::parse_error& e) {
        throw std::runtime_error("request " + request_path + " is not valid JSON: " + e.what());
    }
    const std::string prompt = tmpl.render(request);
    std::fwrite(prompt.data(), 1, prompt.size(), stdout);
    return 0;
}

}  // namespace
}  // namespace niwa::cli

NIWA_COMMAND("template", "print the prompt a chat request renders to", niwa::cli::run_template);
