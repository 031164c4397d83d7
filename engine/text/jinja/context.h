// The state of one render: variable scopes (globals, the template's top level, then one per
// loop iteration or macro call, as jinja2 scopes them) and the output being written.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/text/jinja/value.h"

namespace niwa::text::jinja {

class Context {
public:
    using Scope = std::unordered_map<std::string, Value>;

    // `globals` are the builtins plus the caller's variables; top-level sets shadow them.
    explicit Context(Scope globals);

    Value lookup(const std::string& name) const;  // undefined ("'x' is undefined") when absent
    void set(const std::string& name, Value v) { (*scopes_.back())[name] = std::move(v); }

    void push_scope() { scopes_.push_back(std::make_shared<Scope>()); }
    void pop_scope() { scopes_.pop_back(); }

    // A macro body sees its arguments and the template's top level, not its caller's loops.
    std::vector<std::shared_ptr<Scope>> enter_macro();
    void leave_macro(std::vector<std::shared_ptr<Scope>> saved) { scopes_ = std::move(saved); }

    std::string& out() { return *out_; }
    // Sends output to `buffer` until the returned previous target is restored.
    std::string* redirect(std::string* buffer) {
        std::string* previous = out_;
        out_ = buffer;
        return previous;
    }

private:
    std::vector<std::shared_ptr<Scope>> scopes_;
    std::string* out_ = nullptr;  // set by the renderer before anything runs
};

}  // namespace niwa::text::jinja
