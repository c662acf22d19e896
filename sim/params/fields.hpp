// napisim: parameter structs declared once.
//
// A parameter struct lists its fields once, in a static fields(v) template. Every tool below is a visitor walked
// over that list, so names, units, docs, ranges and defaults cannot drift apart:
//   parse_params / parse_into  strict JSON in: unknown keys, wrong types and out-of-range values are ConfigErrors
//                              naming the JSON pointer and the expectation
//   params_to_json             JSON out, every field in declaration order
//   params_schema              JSON Schema (draft 2020-12) of the object
//   describe_params            rows for `napisim describe`, rendered by format_description
//
//   struct NapiParams {
//     std::int64_t dev_weight = 64;  // net.core.dev_weight
//     std::string mode = "softirq";
//     template <class V> static void fields(V& v) {
//       v("dev_weight", &NapiParams::dev_weight, "pkts", "Max packets one napi->poll() may process", Range{1, 4096});
//       v("mode", &NapiParams::mode, "", "Receive path", Choices{"softirq", "threaded"});
//     }
//     bool operator==(const NapiParams&) const = default;
//   };
//
// The default of a field is its member initializer. Member types: bool, integral types, double, std::string, a
// nested struct with its own fields(), std::vector of any of those, std::optional of a scalar, and Json (passed
// through unvalidated, for sections another component checks, or checked at parse time with a JsonKind). Range
// (inclusive) applies to numbers, Choices to strings, IntChoices (an enumeration such as CONFIG_HZ's) to integers; each
// also applies to the elements of vectors and to optionals. A vector holds at most kMaxArrayItems elements, or the
// MaxItems given after the other constraint (checked before any element). A struct may reuse a base struct's list by
// calling Base::fields(v) inside its own.
//
// Parsing rules: a missing key keeps the current value (defaults, or an earlier layer with parse_into); null means
// nullopt for an optional, "no overrides" for a nested struct and null for Json, and is a type error elsewhere. An
// array replaces the whole vector; each element of an array of structs starts from that struct's defaults.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/core/json.hpp"
#include "sim/params/json_util.hpp"

namespace napisim {

/// Inclusive bounds of a numeric field (or of each element of a numeric array).
struct Range {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();

  constexpr Range() = default;
  constexpr Range(double low, double high) : lo(low), hi(high) {}
  static constexpr Range at_least(double low) { return Range(low, std::numeric_limits<double>::infinity()); }
  static constexpr Range at_most(double high) { return Range(-std::numeric_limits<double>::infinity(), high); }
};

/// The allowed values of a string field (or of each element of a string array).
struct Choices {
  std::vector<std::string> values;

  Choices(std::initializer_list<std::string_view> allowed) : values(allowed.begin(), allowed.end()) {}
};

/// The allowed values of an integer field (or of each element of an integer array), e.g. IntChoices{100, 250}.
struct IntChoices {
  std::vector<std::int64_t> values;

  IntChoices(std::initializer_list<std::int64_t> allowed) : values(allowed) {}
};

/// What a Json field holds when another component reads it (e.g. a distribution, sim/params/distribution.hpp):
/// its name in `describe`, its JSON Schema, and the check parsing runs on it (a ConfigError naming the JSON
/// pointer). With `nullable`, null passes (the component's "none").
struct JsonKind {
  const char* name;
  Json (*schema)();
  void (*check)(const Json& j, const std::string& path);
  bool nullable = false;
};

/// The most elements of an array field (default kMaxArrayItems), e.g. v("nics", ..., MaxItems{kMaxNics}).
struct MaxItems {
  std::size_t n = kMaxArrayItems;
};

/// One row of `napisim describe`. Fields of nested structs appear after their parent as "parent.child", fields of
/// array-of-struct elements as "parent[].child".
struct FieldInfo {
  std::string name;
  std::string
      type;  // bool, int32, int64, uint64, double, string, object, json, a JsonKind's name, array<T>, optional<T>
  std::string unit;
  std::string doc;
  Json default_value;
  std::string constraint;  // "[1, 1024]", ">= 0", "one of softirq, threaded", "one of 100, 250" or ""
};

/// Aligned text table of describe_params() rows (columns NAME TYPE DEFAULT UNIT ALLOWED DESCRIPTION).
std::string format_description(const std::vector<FieldInfo>& rows);

namespace detail {

// A visitor that accepts any field: only used to recognise structs with a fields() template.
struct FieldProbe {
  template <class... A>
  void operator()(A&&...) {}
};

}  // namespace detail

/// A struct with a `template <class V> static void fields(V& v)` declaration.
template <class T>
concept ParamStruct = std::is_class_v<T> && requires(detail::FieldProbe& v) {
  T::fields(v);
};

namespace detail {

template <class T>
inline constexpr bool kIsVector = false;
template <class T, class A>
inline constexpr bool kIsVector<std::vector<T, A>> = true;

template <class T>
inline constexpr bool kIsOptional = false;
template <class T>
inline constexpr bool kIsOptional<std::optional<T>> = true;

template <class T>
inline constexpr bool kIsInteger = std::is_integral_v<T> && !std::is_same_v<T, bool>;

template <class T>
inline constexpr bool kIsScalar =
    std::is_same_v<T, bool> || kIsInteger<T> || std::is_floating_point_v<T> || std::is_same_v<T, std::string>;

// The type a Range or Choices applies to: the element of a vector or optional, else the field itself.
template <class T>
struct Element {
  using type = T;
};
template <class T, class A>
struct Element<std::vector<T, A>> {
  using type = T;
};
template <class T>
struct Element<std::optional<T>> {
  using type = T;
};

template <class T>
consteval bool is_supported_field() {
  if constexpr (std::is_same_v<T, Json> || kIsScalar<T> || ParamStruct<T>) {
    return true;
  } else if constexpr (kIsOptional<T>) {
    return kIsScalar<typename T::value_type>;
  } else if constexpr (kIsVector<T>) {
    return kIsScalar<typename T::value_type> || ParamStruct<typename T::value_type>;
  } else {
    return false;
  }
}

// What a v(...) call declared beyond name/unit/doc. Pointers: the Range/Choices are temporaries of that call.
struct Constraint {
  const Range* range = nullptr;
  const Choices* choices = nullptr;
  std::size_t max_items = kMaxArrayItems;  // of a vector
  const IntChoices* int_choices = nullptr;
  const JsonKind* json_kind = nullptr;  // of a Json field

  double lo() const { return range ? range->lo : -std::numeric_limits<double>::infinity(); }
  double hi() const { return range ? range->hi : std::numeric_limits<double>::infinity(); }
  const std::vector<std::string>* allowed() const { return choices ? &choices->values : nullptr; }
};

// Turns the v(name, member, unit, doc[, Range|Choices]) call forms into Derived::field(..., Constraint), checking
// at compile time that the member type is supported and the constraint fits it.
template <class Derived>
class FieldVisitor {
 public:
  template <class C, class M>
  void operator()(std::string_view name, M C::*member, std::string_view unit, std::string_view doc) {
    static_assert(is_supported_field<M>(),
                  "napisim params: unsupported member type (see the list at the top of sim/params/fields.hpp)");
    static_cast<Derived&>(*this).field(name, member, unit, doc, Constraint{});
  }

  template <class C, class M>
  void operator()(std::string_view name, M C::*member, std::string_view unit, std::string_view doc,
                  const Range& range) {
    static_assert(is_supported_field<M>(),
                  "napisim params: unsupported member type (see the list at the top of sim/params/fields.hpp)");
    using E = typename Element<M>::type;
    static_assert(kIsInteger<E> || std::is_floating_point_v<E>, "napisim params: Range applies to numeric fields");
    static_cast<Derived&>(*this).field(name, member, unit, doc, Constraint{&range, nullptr});
  }

  template <class C, class M>
  void operator()(std::string_view name, M C::*member, std::string_view unit, std::string_view doc,
                  const Choices& choices) {
    static_assert(is_supported_field<M>(),
                  "napisim params: unsupported member type (see the list at the top of sim/params/fields.hpp)");
    using E = typename Element<M>::type;
    static_assert(std::is_same_v<E, std::string>, "napisim params: Choices applies to string fields");
    static_cast<Derived&>(*this).field(name, member, unit, doc, Constraint{nullptr, &choices});
  }

  template <class C, class M>
  void operator()(std::string_view name, M C::*member, std::string_view unit, std::string_view doc,
                  const IntChoices& choices) {
    static_assert(is_supported_field<M>(),
                  "napisim params: unsupported member type (see the list at the top of sim/params/fields.hpp)");
    static_assert(kIsInteger<typename Element<M>::type>, "napisim params: IntChoices applies to integer fields");
    static_cast<Derived&>(*this).field(name, member, unit, doc, Constraint{nullptr, nullptr, kMaxArrayItems, &choices});
  }

  template <class C, class M>
  void operator()(std::string_view name, M C::*member, std::string_view unit, std::string_view doc,
                  const JsonKind& kind) {
    static_assert(std::is_same_v<M, Json>, "napisim params: JsonKind applies to Json fields");
    static_cast<Derived&>(*this).field(name, member, unit, doc,
                                       Constraint{nullptr, nullptr, kMaxArrayItems, nullptr, &kind});
  }

  template <class C, class M>
  void operator()(std::string_view name, M C::*member, std::string_view unit, std::string_view doc,
                  const MaxItems& items) {
    static_assert(is_supported_field<M>() && kIsVector<M>, "napisim params: MaxItems applies to array fields");
    static_cast<Derived&>(*this).field(name, member, unit, doc, Constraint{nullptr, nullptr, items.n});
  }

  template <class C, class M>
  void operator()(std::string_view name, M C::*member, std::string_view unit, std::string_view doc, const Range& range,
                  const MaxItems& items) {
    static_assert(is_supported_field<M>() && kIsVector<M>, "napisim params: MaxItems applies to array fields");
    using E = typename Element<M>::type;
    static_assert(kIsInteger<E> || std::is_floating_point_v<E>, "napisim params: Range applies to numeric fields");
    static_cast<Derived&>(*this).field(name, member, unit, doc, Constraint{&range, nullptr, items.n});
  }
};

// ---- names ----

class NameCollector : public FieldVisitor<NameCollector> {
 public:
  template <class C, class M>
  void field(std::string_view name, M C::*, std::string_view, std::string_view, const Constraint&) {
    NAPISIM_ASSERT(std::find(names_.begin(), names_.end(), name) == names_.end(),
                   "a parameter struct declares the same field name twice");
    names_.emplace_back(name);
  }
  std::vector<std::string>& names() { return names_; }

 private:
  std::vector<std::string> names_;
};

// Declared field names of P in declaration order, computed once per struct type (immutable afterwards).
template <class P>
const std::vector<std::string>& declared_names() {
  static const std::vector<std::string> names = [] {
    NameCollector collector;
    P::fields(collector);
    return std::move(collector.names());
  }();
  return names;
}

// ---- parsing ----

template <class P>
void parse_object(P& out, const Json& j, const std::string& path);

template <class T>
void parse_value(T& out, const Json& j, const std::string& path, const Constraint& c, bool nullable = false) {
  if constexpr (std::is_same_v<T, Json>) {
    if (c.json_kind && !(c.json_kind->nullable && j.is_null())) c.json_kind->check(j, path);
    out = j;
  } else if constexpr (std::is_same_v<T, bool>) {
    out = parse_bool(j, path, nullable);
  } else if constexpr (kIsInteger<T> && std::is_signed_v<T>) {
    out = static_cast<T>(
        parse_signed(j, path, std::numeric_limits<T>::min(), std::numeric_limits<T>::max(), c.lo(), c.hi(), nullable));
    if (c.int_choices) check_int_choice(static_cast<std::int64_t>(out), c.int_choices->values, path);
  } else if constexpr (kIsInteger<T>) {
    out = static_cast<T>(parse_unsigned(j, path, std::numeric_limits<T>::max(), c.lo(), c.hi(), nullable));
    if (c.int_choices) check_int_choice(static_cast<std::int64_t>(out), c.int_choices->values, path);
  } else if constexpr (std::is_floating_point_v<T>) {
    out = static_cast<T>(parse_double(j, path, c.lo(), c.hi(), nullable));
  } else if constexpr (std::is_same_v<T, std::string>) {
    out = parse_string(j, path, c.allowed(), nullable);
  } else if constexpr (kIsOptional<T>) {
    if (j.is_null()) {
      out.reset();
    } else {
      typename T::value_type v{};
      parse_value(v, j, path, c, /*nullable=*/true);
      out = std::move(v);
    }
  } else if constexpr (kIsVector<T>) {
    if (!j.is_array()) throw_type_error(path, "array", false, j);
    if (j.size() > c.max_items)  // before the elements: their checks may cost more than the parse
      throw ConfigError(path, "expected an array of at most " + std::to_string(c.max_items) + " elements, got " +
                                  std::to_string(j.size()));
    T elems;  // assigned only once every element parsed
    elems.reserve(j.size());
    for (std::size_t i = 0; i < j.size(); ++i) {
      typename T::value_type e{};
      parse_value(e, j[i], json_pointer_append(path, i), c);
      elems.push_back(std::move(e));
    }
    out = std::move(elems);
  } else {
    static_assert(ParamStruct<T>);
    if (j.is_null())  // written out as null: a typo'd value, not "all defaults" (omit the key for that)
      throw_type_error(path, "object", false, j);
    parse_object(out, j, path);
  }
}

template <class P>
class Parser : public FieldVisitor<Parser<P>> {
 public:
  Parser(P& out, const Json& obj, const std::string& path) : out_(out), obj_(obj), path_(path) {}

  template <class C, class M>
  void field(std::string_view name, M C::*member, std::string_view, std::string_view, const Constraint& c) {
    static_assert(std::is_base_of_v<C, P>, "napisim params: member pointer of an unrelated struct");
    const auto it = obj_.find(name);
    if (it != obj_.end()) parse_value(out_.*member, *it, json_pointer_append(path_, name), c);
  }

 private:
  P& out_;
  const Json& obj_;
  const std::string& path_;
};

template <class P>
void parse_object(P& out, const Json& j, const std::string& path) {
  if (j.is_null()) return;
  if (!j.is_object()) throw_type_error(path, "object", false, j);
  // Unknown keys first: a typo is the likeliest mistake and must never fall back to a default silently.
  const std::vector<std::string>& names = declared_names<P>();
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (std::find(names.begin(), names.end(), it.key()) == names.end()) {
      throw_unknown_key(json_pointer_append(path, it.key()), it.key(), names);
    }
  }
  Parser<P> parser(out, j, path);
  P::fields(parser);
}

// ---- JSON out ----

template <class P>
Json object_to_json(const P& p);

template <class T>
Json value_to_json(const T& v) {
  if constexpr (std::is_same_v<T, Json> || kIsScalar<T>) {
    return Json(v);
  } else if constexpr (kIsOptional<T>) {
    return v ? Json(*v) : Json(nullptr);
  } else if constexpr (kIsVector<T>) {
    Json arr = Json::array();
    for (const auto& e : v)
      arr.push_back(value_to_json<typename T::value_type>(e));
    return arr;
  } else {
    return object_to_json(v);
  }
}

template <class P>
class Writer : public FieldVisitor<Writer<P>> {
 public:
  Writer(const P& in, Json& out) : in_(in), out_(out) {}

  template <class C, class M>
  void field(std::string_view name, M C::*member, std::string_view, std::string_view, const Constraint&) {
    out_[std::string(name)] = value_to_json(in_.*member);
  }

 private:
  const P& in_;
  Json& out_;
};

template <class P>
Json object_to_json(const P& p) {
  Json out = Json::object();
  Writer<P> writer(p, out);
  P::fields(writer);
  return out;
}

// ---- JSON Schema ----

template <class P>
Json object_schema(const P& defaults);

template <class T>
Json scalar_schema(const Constraint& c, bool nullable) {
  Json s = Json::object();
  const char* type = std::is_same_v<T, bool>          ? "boolean"
                     : kIsInteger<T>                  ? "integer"
                     : std::is_same_v<T, std::string> ? "string"
                                                      : "number";
  s["type"] = nullable ? Json::array({type, "null"}) : Json(type);
  if constexpr (kIsInteger<T> || std::is_floating_point_v<T>) {
    // Integer bounds print as integers; types narrower than int64 also carry their own limits.
    const auto bound = [](double b) {
      const bool in_int64 = b > -9.2e18 && b < 9.2e18;
      if (kIsInteger<T> && in_int64 && b == std::trunc(b)) return Json(static_cast<std::int64_t>(b));
      return Json(b);
    };
    constexpr bool kNarrow = kIsInteger<T> && sizeof(T) < sizeof(std::int64_t);
    if (c.lo() > -std::numeric_limits<double>::infinity()) {
      s["minimum"] = bound(c.lo());
    } else if constexpr (kIsInteger<T> && (kNarrow || std::is_unsigned_v<T>)) {
      s["minimum"] = static_cast<std::int64_t>(std::numeric_limits<T>::min());
    }
    if (c.hi() < std::numeric_limits<double>::infinity()) {
      s["maximum"] = bound(c.hi());
    } else if constexpr (kNarrow) {
      s["maximum"] = static_cast<std::int64_t>(std::numeric_limits<T>::max());
    }
  }
  if (c.choices) {
    Json values = Json::array();
    for (const auto& v : c.choices->values)
      values.push_back(v);
    if (nullable) values.push_back(nullptr);
    s["enum"] = std::move(values);
  }
  if (c.int_choices) {
    Json values = Json::array();
    for (const std::int64_t v : c.int_choices->values)
      values.push_back(v);
    if (nullable) values.push_back(nullptr);
    s["enum"] = std::move(values);
  }
  return s;
}

template <class T>
Json type_schema(const T& defaults, const Constraint& c) {
  if constexpr (std::is_same_v<T, Json>) {
    if (!c.json_kind) return Json::object();  // any JSON value
    Json s = c.json_kind->schema();
    if (c.json_kind->nullable) s = Json{{"anyOf", Json::array({Json{{"type", "null"}}, s})}};
    return s;
  } else if constexpr (kIsScalar<T>) {
    return scalar_schema<T>(c, false);
  } else if constexpr (kIsOptional<T>) {
    return scalar_schema<typename T::value_type>(c, true);
  } else if constexpr (kIsVector<T>) {
    using E = typename T::value_type;
    if constexpr (ParamStruct<E>) {
      return Json{{"type", "array"}, {"items", object_schema(E{})}, {"maxItems", c.max_items}};
    } else {
      return Json{{"type", "array"}, {"items", scalar_schema<E>(c, false)}, {"maxItems", c.max_items}};
    }
  } else {
    return object_schema(defaults);
  }
}

template <class P>
class SchemaBuilder : public FieldVisitor<SchemaBuilder<P>> {
 public:
  SchemaBuilder(const P& defaults, Json& properties) : defaults_(defaults), properties_(properties) {}

  template <class C, class M>
  void field(std::string_view name, M C::*member, std::string_view unit, std::string_view doc, const Constraint& c) {
    const M& def = defaults_.*member;
    Json body = type_schema(def, c);
    // Order for human readers: type, description, default, then the rest.
    Json prop = Json::object();
    if (body.contains("type")) prop["type"] = body["type"];
    std::string description(doc);
    if (!unit.empty()) description += " [" + std::string(unit) + "]";
    prop["description"] = description;
    prop["default"] = value_to_json(def);
    for (auto it = body.begin(); it != body.end(); ++it) {
      if (it.key() != "type") prop[it.key()] = it.value();
    }
    properties_[std::string(name)] = std::move(prop);
  }

 private:
  const P& defaults_;
  Json& properties_;
};

template <class P>
Json object_schema(const P& defaults) {
  Json properties = Json::object();
  SchemaBuilder<P> builder(defaults, properties);
  P::fields(builder);
  return Json{{"type", "object"}, {"additionalProperties", false}, {"properties", std::move(properties)}};
}

// ---- describe ----

template <class T>
std::string type_name() {
  if constexpr (std::is_same_v<T, Json>) {
    return "json";
  } else if constexpr (std::is_same_v<T, bool>) {
    return "bool";
  } else if constexpr (kIsInteger<T>) {
    return (std::is_signed_v<T> ? "int" : "uint") + std::to_string(8 * sizeof(T));
  } else if constexpr (std::is_same_v<T, double>) {
    return "double";
  } else if constexpr (std::is_floating_point_v<T>) {
    return "float";
  } else if constexpr (std::is_same_v<T, std::string>) {
    return "string";
  } else if constexpr (kIsOptional<T>) {
    return "optional<" + type_name<typename T::value_type>() + ">";
  } else if constexpr (kIsVector<T>) {
    return "array<" + type_name<typename T::value_type>() + ">";
  } else {
    return "object";
  }
}

template <class T>
std::string constraint_text(const Constraint& c) {
  if constexpr (kIsVector<T>) {
    const std::string items = "at most " + std::to_string(c.max_items) + " items";
    return c.range ? bounds_text(c.range->lo, c.range->hi) + ", " + items : items;
  }
  if (c.range) return bounds_text(c.range->lo, c.range->hi);
  if (c.choices) {
    std::string s = "one of ";
    for (std::size_t i = 0; i < c.choices->values.size(); ++i)
      s += (i ? ", " : "") + c.choices->values[i];
    return s;
  }
  if (c.int_choices) return "one of " + int_list(c.int_choices->values);
  return "";
}

template <class P>
void describe_object(const P& defaults, const std::string& prefix, std::vector<FieldInfo>& rows);

template <class P>
class Describer : public FieldVisitor<Describer<P>> {
 public:
  Describer(const P& defaults, const std::string& prefix, std::vector<FieldInfo>& rows)
      : defaults_(defaults)
      , prefix_(prefix)
      , rows_(rows) {}

  template <class C, class M>
  void field(std::string_view name, M C::*member, std::string_view unit, std::string_view doc, const Constraint& c) {
    const M& def = defaults_.*member;
    const std::string full = prefix_ + std::string(name);
    std::string type = type_name<M>();
    if constexpr (std::is_same_v<M, Json>) {
      if (c.json_kind)
        type = std::string(c.json_kind->nullable ? "optional<" : "") + c.json_kind->name +
               (c.json_kind->nullable ? ">" : "");
    }
    rows_.push_back(FieldInfo{full, std::move(type), std::string(unit), std::string(doc), value_to_json(def),
                              constraint_text<M>(c)});
    if constexpr (ParamStruct<M>) {
      describe_object(def, full + ".", rows_);
    } else if constexpr (kIsVector<M>) {
      if constexpr (ParamStruct<typename M::value_type>) describe_object(typename M::value_type{}, full + "[].", rows_);
    }
  }

 private:
  const P& defaults_;
  const std::string& prefix_;
  std::vector<FieldInfo>& rows_;
};

template <class P>
void describe_object(const P& defaults, const std::string& prefix, std::vector<FieldInfo>& rows) {
  Describer<P> describer(defaults, prefix, rows);
  P::fields(describer);
}

}  // namespace detail

/// Overlays the keys present in `j` onto `out`; missing keys keep out's current values (layered defaults).
/// `j` must be an object, or null for "no overrides". `path` is the JSON pointer of `j` ("" or "/" for the
/// document) and prefixes every error. On error `out` is left unchanged.
template <ParamStruct P>
void parse_into(P& out, const Json& j, const std::string& path) {
  P staged = out;
  detail::parse_object(staged, j, path);
  out = std::move(staged);
}

/// The struct's defaults overlaid with `j` (an object, or null for all defaults).
template <ParamStruct P>
P parse_params(const Json& j, const std::string& path) {
  P out{};
  detail::parse_object(out, j, path);
  return out;
}

/// Every field, in declaration order (optionals that are empty as null).
template <ParamStruct P>
Json params_to_json(const P& p) {
  return detail::object_to_json(p);
}

/// JSON Schema (draft 2020-12) of P: {"type": "object", "additionalProperties": false, "properties": {...}} where each
/// property has type, description ("doc [unit]"), default and, where declared, minimum/maximum/enum/items; nested
/// structs recurse. It is a subschema: the document that embeds it adds "$schema".
template <ParamStruct P>
Json params_schema() {
  return detail::object_schema(P{});
}

/// One row per field, nested fields flattened after their parent (see FieldInfo).
template <ParamStruct P>
std::vector<FieldInfo> describe_params() {
  std::vector<FieldInfo> rows;
  detail::describe_object(P{}, "", rows);
  return rows;
}

}  // namespace napisim
