// Value construction, truthiness and equality with Python's rules.
#include "engine/text/jinja/value.h"

namespace niwa::text::jinja {

const Value* Dict::find(std::string_view key) const {
    for (const auto& [k, v] : items_) {
        if (k == key) return &v;
    }
    return nullptr;
}

Value* Dict::find(std::string_view key) {
    for (auto& [k, v] : items_) {
        if (k == key) return &v;
    }
    return nullptr;
}

void Dict::set(std::string key, Value value) {
    if (Value* v = find(key)) {
        *v = std::move(value);
        return;
    }
    items_.emplace_back(std::move(key), std::move(value));
}

Value Value::undefined(std::string hint) {
    Value v;
    v.str_ = std::move(hint);
    return v;
}

Value Value::none() {
    Value v;
    v.kind_ = Kind::None;
    return v;
}

Value Value::list(List items, bool tuple) {
    Value v;
    v.kind_ = Kind::List;
    v.tuple_ = tuple;
    v.list_ = std::make_shared<const List>(std::move(items));
    return v;
}

Value Value::dict(Dict d) {
    Value v;
    v.kind_ = Kind::Dict;
    v.dict_ = std::make_shared<Dict>(std::move(d));
    return v;
}

Value Value::ns(Dict d) {
    Value v = dict(std::move(d));
    v.kind_ = Kind::Namespace;
    return v;
}

Value Value::callable(std::string name, Function fn, bool is_macro) {
    Value v;
    v.kind_ = Kind::Callable;
    v.fn_ = std::make_shared<const Callable>(Callable{std::move(name), is_macro, std::move(fn)});
    return v;
}

namespace {

template <typename Json>
Value value_from_json(const Json& j) {
    using T = nlohmann::json::value_t;
    switch (j.type()) {
        case T::null:
            return Value::none();
        case T::boolean:
            return Value(j.template get<bool>());
        case T::number_integer:
            return Value(j.template get<int64_t>());
        case T::number_unsigned: {
            const auto u = j.template get<uint64_t>();
            if (u > static_cast<uint64_t>(INT64_MAX)) return Value(static_cast<double>(u));
            return Value(static_cast<int64_t>(u));
        }
        case T::number_float:
            return Value(j.template get<double>());
        case T::string:
            return Value(j.template get<std::string>());
        case T::array: {
            List items;
            items.reserve(j.size());
            for (const auto& e : j) items.push_back(value_from_json(e));
            return Value::list(std::move(items));
        }
        case T::object: {
            Dict d;
            for (const auto& [k, e] : j.items()) d.set(k, value_from_json(e));
            return Value::dict(std::move(d));
        }
        default:
            return Value::undefined();
    }
}

}  // namespace

Value Value::from_json(const nlohmann::json& j) {
    return value_from_json(j);
}
Value Value::from_json(const nlohmann::ordered_json& j) {
    return value_from_json(j);
}

bool Value::truthy() const {
    switch (kind_) {
        case Kind::Undefined:
        case Kind::None:
            return false;
        case Kind::Bool:
        case Kind::Int:
            return int_ != 0;
        case Kind::Float:
            return float_ != 0;
        case Kind::String:
            return !str_.empty();
        case Kind::List:
            return !list_->empty();
        case Kind::Dict:
            return dict_->size() != 0;
        case Kind::Namespace:
        case Kind::Callable:
            return true;
    }
    return false;
}

std::string Value::type_name() const {
    switch (kind_) {
        case Kind::Undefined:
            return "Undefined";
        case Kind::None:
            return "NoneType";
        case Kind::Bool:
            return "bool object";
        case Kind::Int:
            return "int object";
        case Kind::Float:
            return "float object";
        case Kind::String:
            return "str object";
        case Kind::List:
            return tuple_ ? "tuple object" : "list object";
        case Kind::Dict:
            return "dict object";
        case Kind::Namespace:
            return "Namespace object";
        case Kind::Callable:
            return "function object";
    }
    return "object";
}

bool equals(const Value& a, const Value& b) {
    if (a.is_number() && b.is_number()) {
        if (a.is_float() || b.is_float()) return a.as_float() == b.as_float();
        return a.as_int() == b.as_int();
    }
    if (a.kind() != b.kind()) return false;
    switch (a.kind()) {
        case Value::Kind::Undefined:
        case Value::Kind::None:
            return true;
        case Value::Kind::String:
            return a.as_string() == b.as_string();
        case Value::Kind::List: {
            // Python never finds a list equal to a tuple.
            if (a.is_tuple() != b.is_tuple() || a.as_list().size() != b.as_list().size()) return false;
            for (size_t i = 0; i < a.as_list().size(); ++i) {
                if (!equals(a.as_list()[i], b.as_list()[i])) return false;
            }
            return true;
        }
        case Value::Kind::Dict: {
            const Dict& x = a.as_dict();
            const Dict& y = b.as_dict();
            if (x.size() != y.size()) return false;
            for (const auto& [k, v] : x.items()) {
                const Value* w = y.find(k);
                if (!w || !equals(v, *w)) return false;
            }
            return true;
        }
        case Value::Kind::Namespace:
        case Value::Kind::Callable:
            return a.identity() == b.identity();
        default:
            return false;
    }
}

}  // namespace niwa::text::jinja
