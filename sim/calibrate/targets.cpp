// napisim calibrate: the targets file's checks beyond its fields() list (see targets.hpp).
#include "sim/calibrate/targets.hpp"

#include "sim/core/error.hpp"
#include "sim/kernel/costs.hpp"
#include "sim/params/json_util.hpp"

namespace napisim::calibrate {

namespace {

void check_overrides(const Json& v, const std::string& ptr) {
  if (v.is_object()) return;
  if (!v.is_array())
    throw ConfigError(ptr,
                      "expected an object {path: value} or an array of \"path=value\", got " + describe_json_value(v));
  if (v.size() > kMaxArrayItems)
    throw ConfigError(ptr, "expected an array of at most " + std::to_string(kMaxArrayItems) + " elements");
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string p = json_pointer_append(ptr, i);
    if (!v[i].is_string()) throw ConfigError(p, "expected a \"path=value\" string, got " + describe_json_value(v[i]));
    if (v[i].get<std::string>().find('=') == std::string::npos)
      throw ConfigError(p, "expected path=value, got \"" + v[i].get<std::string>() + "\"");
  }
}

Json overrides_schema() {
  return Json{
      {"anyOf", Json::array({Json{{"type", "object"}}, Json{{"type", "array"},
                                                            {"maxItems", kMaxArrayItems},
                                                            {"items", {{"type", "string"}, {"pattern", "="}}}}})}};
}

void check_run(const Json& v, const std::string& ptr) {
  const RunDoc r = parse_params<RunDoc>(v, ptr);
  if (r.scenario.empty()) throw ConfigError(json_pointer_append(ptr, "scenario"), "missing (required)");
}

Json run_schema() {
  Json s = params_schema<RunDoc>();
  s["required"] = Json::array({"scenario"});
  return s;
}

// Names and defaults of the cost parameters (sim/kernel/costs.hpp), the only ones a fit may move.
const Json& cost_defaults() {
  static const Json d = params_to_json(CostParams{});
  return d;
}

// One {min, max, start} entry, checked, with its start resolved.
FitBounds resolve_bounds(const std::string& name, const Json& v, const std::string& ptr) {
  const Json& defaults = cost_defaults();
  if (!defaults.contains(name)) {
    std::string names;
    for (auto d = defaults.begin(); d != defaults.end(); ++d)
      names += (names.empty() ? "" : ", ") + d.key();
    throw ConfigError(ptr, "unknown cost parameter; expected one of " + names);
  }
  const BoundsDoc b = parse_params<BoundsDoc>(v, ptr);
  if (!v.contains("min")) throw ConfigError(ptr + "/min", "missing (required)");
  if (!v.contains("max")) throw ConfigError(ptr + "/max", "missing (required)");
  if (!(b.min > 0)) throw ConfigError(ptr + "/min", "expected > 0 (the fit is in log space)");
  if (!(b.max > b.min)) throw ConfigError(ptr + "/max", "expected > min");
  const FitBounds f{name, b.start ? *b.start : defaults[name].get<double>(), b.min, b.max,
                    defaults[name].is_number_integer()};
  if (f.start < f.min || f.start > f.max)
    throw ConfigError(ptr, "the start value " + format_number(f.start) + " is outside [min, max]");
  return f;
}

void check_bounds(const Json& v, const std::string& ptr) {
  (void)fit_bounds(v, ptr);
}

Json bounds_schema() {
  Json names = Json::array();
  for (auto d = cost_defaults().begin(); d != cost_defaults().end(); ++d)
    names.push_back(d.key());
  Json bounds = params_schema<BoundsDoc>();
  bounds["required"] = Json::array({"min", "max"});
  return Json{
      {"type", "object"}, {"minProperties", 1}, {"propertyNames", {{"enum", names}}}, {"additionalProperties", bounds}};
}

}  // namespace

const JsonKind kOverrides{"overrides", &overrides_schema, &check_overrides, true};
const JsonKind kBaselineRun{"run", &run_schema, &check_run, true};
const JsonKind kCostBounds{"cost bounds", &bounds_schema, &check_bounds};

TargetsDoc parse_targets_doc(const Json& doc) {
  if (!doc.is_object()) throw ConfigError("/", "expected a targets object, got " + describe_json_value(doc));
  TargetsDoc t = parse_params<TargetsDoc>(doc, "");
  if (!doc.contains("params")) throw ConfigError("/params", "missing (required)");
  if (t.seeds.empty()) throw ConfigError("/seeds", "expected a non-empty array of seeds");
  if (!(t.fd_step > 0 && t.fd_step < 1)) throw ConfigError("/fd_step", "expected a log step in (0, 1)");
  if (!doc.contains("targets")) throw ConfigError("/targets", "missing (required)");
  if (t.targets.empty()) throw ConfigError("/targets", "expected a non-empty array of measured points");
  for (std::size_t i = 0; i < t.targets.size(); ++i) {
    const std::string p = "/targets/" + std::to_string(i);
    const TargetDoc& tg = t.targets[i];
    if (tg.scenario.empty()) throw ConfigError(p + "/scenario", "missing (required)");
    if (tg.metric.empty()) throw ConfigError(p + "/metric", "missing (required)");
    if (!tg.measured) throw ConfigError(p + "/measured", "missing (required)");
    if (tg.baseline.is_null() && *tg.measured == 0)
      throw ConfigError(p + "/measured", "expected a non-zero value (residuals are relative errors)");
  }
  return t;
}

Json targets_schema() {
  Json s = params_schema<TargetsDoc>();
  s["$schema"] = "https://json-schema.org/draft/2020-12/schema";
  s["title"] = "napisim calibration targets";
  s["required"] = Json::array({"params", "targets"});
  s["properties"]["targets"]["minItems"] = 1;
  s["properties"]["targets"]["items"]["required"] = Json::array({"scenario", "metric", "measured"});
  s["properties"]["seeds"]["minItems"] = 1;
  s["properties"]["fd_step"]["exclusiveMinimum"] = 0;
  s["properties"]["fd_step"]["exclusiveMaximum"] = 1;
  return s;
}

std::vector<FitBounds> fit_bounds(const Json& params, const std::string& path) {
  if (!params.is_object() || params.empty())
    throw ConfigError(path, "expected an object {cost parameter: {min, max}}, got " + describe_json_value(params));
  std::vector<FitBounds> out;
  for (auto it = params.begin(); it != params.end(); ++it)
    out.push_back(resolve_bounds(it.key(), it.value(), json_pointer_append(path, it.key())));
  return out;
}

std::vector<std::string> override_sets(const Json& overrides) {
  std::vector<std::string> out;
  if (overrides.is_object()) {
    for (auto it = overrides.begin(); it != overrides.end(); ++it)
      out.push_back(it.key() + "=" + it.value().dump());
  } else if (overrides.is_array()) {
    for (const Json& s : overrides)
      out.push_back(s.get<std::string>());
  }
  return out;
}

}  // namespace napisim::calibrate
