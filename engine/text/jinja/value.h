// The values a Jinja template computes with: Python's objects as jinja2 sees them (None,
// bool, int, float, str, list/tuple, dict in insertion order, namespace, callables) plus
// jinja2's Undefined, which remembers why it is undefined for the error it may raise later.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace niwa::text::jinja {

class Value;
class Context;

using List = std::vector<Value>;

// A dict keeps its keys in insertion order, as Python's does; keys are strings (chat
// templates never use others).
class Dict {
public:
    const Value* find(std::string_view key) const;
    Value* find(std::string_view key);
    void set(std::string key, Value value);
    const std::vector<std::pair<std::string, Value>>& items() const { return items_; }
    size_t size() const { return items_.size(); }

private:
    std::vector<std::pair<std::string, Value>> items_;
};

struct CallArgs {
    std::vector<Value> positional;
    std::vector<std::pair<std::string, Value>> keyword;
};

using Function = std::function<Value(Context&, CallArgs&)>;

struct Callable {
    std::string name;
    bool is_macro = false;
    Function fn;
};

class Value {
public:
    enum class Kind { Undefined, None, Bool, Int, Float, String, List, Dict, Namespace, Callable };

    Value() = default;  // undefined
    static Value undefined(std::string hint = {});
    static Value none();
    Value(bool b) : kind_(Kind::Bool), int_(b) {}
    Value(int v) : kind_(Kind::Int), int_(v) {}
    Value(int64_t v) : kind_(Kind::Int), int_(v) {}
    Value(double v) : kind_(Kind::Float), float_(v) {}
    Value(std::string s) : kind_(Kind::String), str_(std::move(s)) {}
    Value(const char* s) : Value(std::string(s)) {}
    static Value list(List items, bool tuple = false);
    static Value dict(Dict d = {});
    static Value ns(Dict d = {});  // namespace(): a dict whose attributes may be assigned
    static Value callable(std::string name, Function fn, bool is_macro = false);
    // Objects keep their key order with ordered_json (as Python's json.loads does).
    static Value from_json(const nlohmann::json& j);
    static Value from_json(const nlohmann::ordered_json& j);

    Kind kind() const { return kind_; }
    bool is_undefined() const { return kind_ == Kind::Undefined; }
    bool is_none() const { return kind_ == Kind::None; }
    bool is_bool() const { return kind_ == Kind::Bool; }
    bool is_int() const { return kind_ == Kind::Int; }
    bool is_float() const { return kind_ == Kind::Float; }
    bool is_number() const { return kind_ == Kind::Int || kind_ == Kind::Float || kind_ == Kind::Bool; }
    bool is_string() const { return kind_ == Kind::String; }
    bool is_list() const { return kind_ == Kind::List; }
    bool is_tuple() const { return kind_ == Kind::List && tuple_; }
    bool is_dict() const { return kind_ == Kind::Dict; }
    bool is_namespace() const { return kind_ == Kind::Namespace; }
    bool is_callable() const { return kind_ == Kind::Callable; }

    bool as_bool() const { return int_ != 0; }
    int64_t as_int() const { return int_; }  // also a bool's 0/1
    double as_float() const { return kind_ == Kind::Float ? float_ : static_cast<double>(int_); }
    const std::string& as_string() const { return str_; }
    const std::string& undefined_hint() const { return str_; }
    const List& as_list() const { return *list_; }
    const Dict& as_dict() const { return *dict_; }  // dicts and namespaces
    Dict& mutable_dict() const { return *dict_; }
    const Callable& as_callable() const { return *fn_; }

    // Which object a namespace or callable is, for `is sameas` and `==`.
    const void* identity() const { return dict_ ? static_cast<const void*>(dict_.get()) : fn_.get(); }
    bool truthy() const;
    // Python's type name as jinja2's messages spell it ("dict object", "str object").
    std::string type_name() const;

private:
    Kind kind_ = Kind::Undefined;
    bool tuple_ = false;
    int64_t int_ = 0;
    double float_ = 0;
    std::string str_;  // a string, or an undefined's hint
    std::shared_ptr<const List> list_;
    std::shared_ptr<Dict> dict_;
    std::shared_ptr<const Callable> fn_;
};

// Python's ==, used by `==`, `in` and the `equalto` test.
bool equals(const Value& a, const Value& b);

}  // namespace niwa::text::jinja
