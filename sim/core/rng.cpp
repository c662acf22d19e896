// napisim: setup-time half of rng.hpp: EmpiricalCdf validation and Distribution JSON parse/print/schema.
#include "sim/core/rng.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace napisim {

NormalZiggurat::NormalZiggurat() {
  // x[i+1] solves x[i] (f(x[i+1]) - f(x[i])) = V; with this r and V the recurrence ends at x[256] ~ 0.
  x[0] = kArea / std::exp(-0.5 * kR * kR);
  x[1] = kR;
  for (int i = 1; i < kLayers - 1; ++i) {
    const auto k = static_cast<std::size_t>(i);
    x[k + 1] = std::sqrt(-2.0 * std::log(kArea / x[k] + std::exp(-0.5 * x[k] * x[k])));
  }
  x[kLayers] = 0.0;
  for (std::size_t k = 0; k <= kLayers; ++k)
    f[k] = std::exp(-0.5 * x[k] * x[k]);
}

const NormalZiggurat kNormalZiggurat;

double normal_quantile(double p) {
  NAPISIM_ASSERT(p > 0 && p < 1, "normal_quantile(p) needs 0 < p < 1");
  if (p > 0.5) return -normal_quantile(1.0 - p);
  if (p == 0.5) return 0.0;
  // Newton on g(z) = ln Phi(z) - ln p, concave and increasing, from z0 = -sqrt(-2 ln p) < root:
  // the iterates rise monotonically to the root.
  const double inv_sqrt2 = 0.70710678118654752440;
  const double inv_sqrt2pi = 0.39894228040143267794;
  const double log_p = std::log(p);
  double z = -std::sqrt(-2.0 * log_p);
  for (int i = 0; i < 100; ++i) {
    const double cdf = 0.5 * std::erfc(-z * inv_sqrt2);
    const double step = (std::log(cdf) - log_p) * cdf / (inv_sqrt2pi * std::exp(-0.5 * z * z));
    z -= step;
    if (!(std::fabs(step) > 1e-15 * std::max(1.0, std::fabs(z)))) break;
  }
  return z;
}

LognormalQuantiles::LognormalQuantiles(double mu, double sigma) : mu_(mu), sigma_(sigma), q_(kCells + 1, 0.0) {
  for (int k = 1; k < kCells; ++k)
    q_[static_cast<std::size_t>(k)] = quantile(static_cast<double>(k) / kCells);
}

double LognormalQuantiles::quantile(double u) const {
  // u = 0 has probability 2^-53: take the smallest positive uniform instead of F^-1(0) = 0.
  u = std::max(u, 0x1.0p-53);
  return std::exp(mu_ + sigma_ * normal_quantile(u));
}

namespace {

constexpr std::array<std::string_view, 7> kTypeNames = {"constant",  "uniform", "exponential", "normal",
                                                        "lognormal", "pareto",  "empirical"};

// Allowed keys per type, in the canonical order used by to_json() and the error messages.
std::vector<std::string_view> allowed_keys(Distribution::Kind kind) {
  switch (kind) {
    case Distribution::Kind::kConstant:
      return {"type", "value"};
    case Distribution::Kind::kUniform:
      return {"type", "min", "max"};
    case Distribution::Kind::kExponential:
      return {"type", "mean"};
    case Distribution::Kind::kNormal:
      return {"type", "mean", "stddev", "min"};
    case Distribution::Kind::kLognormal:
      return {"type", "mean", "stddev"};
    case Distribution::Kind::kPareto:
      return {"type", "scale", "shape"};
    case Distribution::Kind::kEmpirical:
      return {"type", "points"};
  }
  return {};
}

std::string quoted_list(const auto& names) {
  std::string out;
  for (const auto& n : names) {
    if (!out.empty()) out += ", ";
    out += '"';
    out += n;
    out += '"';
  }
  return out;
}

// Shortest round-trip text of a double; JSON has no spelling for NaN/inf, so name them.
std::string fmt_num(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return Json(x).dump();
}

// What a JSON value is, for the "got ..." half of a message.
std::string describe(const Json& j) {
  if (j.is_number_float()) return fmt_num(j.get<double>());
  if (j.is_number()) return j.dump();
  if (j.is_string()) return "string " + j.dump();
  if (j.is_boolean()) return "boolean " + j.dump();
  return j.type_name();  // null, array, object
}

// RFC 6901 escaping of one reference token.
std::string pointer_token(std::string_view key) {
  std::string out;
  for (const char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

enum class Range { kFinite, kNonNegative, kPositive };

std::string range_text(Range r) {
  switch (r) {
    case Range::kFinite:
      return "finite number";
    case Range::kNonNegative:
      return "finite number >= 0";
    case Range::kPositive:
      return "finite number > 0";
  }
  return "number";
}

double check_number(const Json& j, const std::string& path, Range r) {
  if (!j.is_number()) throw ConfigError(path, "expected " + range_text(r) + ", got " + describe(j));
  const double x = j.get<double>();
  const bool ok = std::isfinite(x) && (r == Range::kFinite || (r == Range::kNonNegative ? x >= 0.0 : x > 0.0));
  if (!ok) throw ConfigError(path, "expected " + range_text(r) + ", got " + fmt_num(x));
  return x;
}

double required_number(const Json& obj, std::string_view key, const std::string& path, Range r) {
  const std::string p = path + "/" + pointer_token(key);
  const auto it = obj.find(std::string(key));
  if (it == obj.end()) throw ConfigError(p, "expected " + range_text(r) + ", got nothing (required key missing)");
  return check_number(*it, p, r);
}

double optional_number(const Json& obj, std::string_view key, const std::string& path, Range r, double dflt) {
  const auto it = obj.find(std::string(key));
  return it == obj.end() ? dflt : check_number(*it, path + "/" + pointer_token(key), r);
}

double std_normal_cdf(double x) {
  return 0.5 * std::erfc(-x / std::sqrt(2.0));
}
double std_normal_pdf(double x) {
  return std::exp(-0.5 * x * x) / std::sqrt(2.0 * 3.14159265358979323846);
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
// EmpiricalCdf
// ---------------------------------------------------------------------------------------------------

EmpiricalCdf::EmpiricalCdf(const std::vector<Point>& points, const std::string& where) {
  const std::string path = where == "/" ? "" : where;  // "/" and "" both mean the document itself
  if (points.empty()) throw ConfigError(path, "expected at least one [value, cumulative_probability] point, got none");
  values_.reserve(points.size());
  probs_.reserve(points.size());
  for (std::size_t i = 0; i < points.size(); ++i) {
    const std::string at = path + "/" + std::to_string(i);
    const double v = points[i].value;
    const double p = points[i].cum_prob;
    if (!std::isfinite(v)) throw ConfigError(at + "/0", "expected finite number, got " + fmt_num(v));
    if (!(p >= 0.0 && p <= 1.0)) {
      throw ConfigError(at + "/1", "expected cumulative probability in [0, 1], got " + fmt_num(p));
    }
    if (i > 0 && v < values_.back()) {
      throw ConfigError(at + "/0",
                        "expected value >= " + fmt_num(values_.back()) + " (previous point), got " + fmt_num(v));
    }
    if (i > 0 && p < probs_.back()) {
      throw ConfigError(at + "/1", "expected cumulative probability >= " + fmt_num(probs_.back()) +
                                       " (previous point), got " + fmt_num(p));
    }
    values_.push_back(v);
    probs_.push_back(p);
  }
  if (std::abs(probs_.back() - 1.0) > 1e-9) {
    throw ConfigError(path + "/" + std::to_string(points.size() - 1) + "/1",
                      "expected 1 (last cumulative probability), got " + fmt_num(probs_.back()));
  }
  probs_.back() = 1.0;  // so that sample()'s search always finds a point for u < 1

  // Point mass probs_[0] at values_[0], then uniform density on each segment.
  double m = probs_[0] * values_[0];
  for (std::size_t i = 1; i < values_.size(); ++i)
    m += (probs_[i] - probs_[i - 1]) * 0.5 * (values_[i - 1] + values_[i]);
  mean_ = m;
}

std::vector<EmpiricalCdf::Point> EmpiricalCdf::points() const {
  std::vector<Point> out;
  out.reserve(values_.size());
  for (std::size_t i = 0; i < values_.size(); ++i)
    out.push_back({values_[i], probs_[i]});
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Distribution
// ---------------------------------------------------------------------------------------------------

std::string_view Distribution::type_name() const {
  return kTypeNames[static_cast<std::size_t>(kind_)];
}

Distribution Distribution::parse(const Json& j, const std::string& where) {
  const std::string path = where == "/" ? "" : where;  // "/" and "" both mean the document itself
  Distribution d;
  if (j.is_number()) {
    d.a_ = check_number(j, path, Range::kNonNegative);
    return d;
  }
  if (!j.is_object()) {
    throw ConfigError(path, "expected number >= 0 or object with \"type\" (one of " + quoted_list(kTypeNames) +
                                "), got " + describe(j));
  }

  const std::string type_path = path + "/type";
  const auto type_it = j.find("type");
  if (type_it == j.end()) {
    throw ConfigError(type_path, "expected one of " + quoted_list(kTypeNames) + ", got nothing (required key missing)");
  }
  if (!type_it->is_string()) {
    throw ConfigError(type_path, "expected string, one of " + quoted_list(kTypeNames) + ", got " + describe(*type_it));
  }
  const auto& type = type_it->get_ref<const std::string&>();
  std::size_t k = 0;
  while (k < kTypeNames.size() && kTypeNames[k] != type)
    ++k;
  if (k == kTypeNames.size()) {
    throw ConfigError(type_path, "expected one of " + quoted_list(kTypeNames) + ", got \"" + type + "\"");
  }
  d.kind_ = static_cast<Kind>(k);

  const auto keys = allowed_keys(d.kind_);
  for (const auto& [key, value] : j.items()) {
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      throw ConfigError(path + "/" + pointer_token(key), "expected one of " + quoted_list(keys) + " (keys of type \"" +
                                                             type + "\"), got \"" + key + "\" (unknown key)");
    }
  }

  switch (d.kind_) {
    case Kind::kConstant:
      d.a_ = required_number(j, "value", path, Range::kNonNegative);
      break;
    case Kind::kUniform:
      d.a_ = required_number(j, "min", path, Range::kNonNegative);
      d.b_ = required_number(j, "max", path, Range::kNonNegative);
      if (d.b_ < d.a_) {
        throw ConfigError(path + "/max", "expected number >= min (" + fmt_num(d.a_) + "), got " + fmt_num(d.b_));
      }
      break;
    case Kind::kExponential:
      d.a_ = required_number(j, "mean", path, Range::kPositive);
      break;
    case Kind::kNormal:
      d.a_ = required_number(j, "mean", path, Range::kNonNegative);
      d.b_ = required_number(j, "stddev", path, Range::kNonNegative);
      d.c_ = optional_number(j, "min", path, Range::kNonNegative, 0.0);
      break;
    case Kind::kLognormal: {
      d.a_ = required_number(j, "mean", path, Range::kPositive);
      d.b_ = required_number(j, "stddev", path, Range::kNonNegative);
      // E[X] = exp(mu + sigma^2/2), Var[X] = (exp(sigma^2) - 1) E[X]^2.
      const double cv = d.b_ / d.a_;
      const double sigma2 = std::log1p(cv * cv);
      d.sigma_ = std::sqrt(sigma2);
      d.mu_ = std::log(d.a_) - 0.5 * sigma2;
      break;
    }
    case Kind::kPareto:
      d.a_ = required_number(j, "scale", path, Range::kPositive);
      d.b_ = required_number(j, "shape", path, Range::kPositive);
      break;
    case Kind::kEmpirical: {
      const std::string pts_path = path + "/points";
      const auto it = j.find("points");
      if (it == j.end()) {
        throw ConfigError(pts_path,
                          "expected array of [value, cumulative_probability], got nothing (required key missing)");
      }
      if (!it->is_array()) {
        throw ConfigError(pts_path, "expected array of [value, cumulative_probability], got " + describe(*it));
      }
      std::vector<EmpiricalCdf::Point> points;
      points.reserve(it->size());
      for (std::size_t i = 0; i < it->size(); ++i) {
        const Json& pt = (*it)[i];
        const std::string at = pts_path + "/" + std::to_string(i);
        if (!pt.is_array() || pt.size() != 2) {
          const std::string got = pt.is_array() ? "array of " + std::to_string(pt.size()) + " elements" : describe(pt);
          throw ConfigError(at, "expected [value, cumulative_probability], got " + got);
        }
        const double v = check_number(pt[0], at + "/0", Range::kNonNegative);
        const double p = check_number(pt[1], at + "/1", Range::kFinite);
        points.push_back({v, p});
      }
      d.cdf_ = EmpiricalCdf(points, pts_path);
      break;
    }
  }
  return d;
}

Json Distribution::to_json() const {
  Json j = Json::object();
  j["type"] = std::string(type_name());
  switch (kind_) {
    case Kind::kConstant:
      j["value"] = a_;
      break;
    case Kind::kUniform:
      j["min"] = a_;
      j["max"] = b_;
      break;
    case Kind::kExponential:
      j["mean"] = a_;
      break;
    case Kind::kNormal:
      j["mean"] = a_;
      j["stddev"] = b_;
      j["min"] = c_;
      break;
    case Kind::kLognormal:
      j["mean"] = a_;
      j["stddev"] = b_;
      break;
    case Kind::kPareto:
      j["scale"] = a_;
      j["shape"] = b_;
      break;
    case Kind::kEmpirical: {
      Json pts = Json::array();
      for (const auto& p : cdf_.points())
        pts.push_back(Json::array({p.value, p.cum_prob}));
      j["points"] = std::move(pts);
      break;
    }
  }
  return j;
}

double Distribution::mean() const {
  switch (kind_) {
    case Kind::kConstant:
      return a_;
    case Kind::kUniform:
      return 0.5 * (a_ + b_);
    case Kind::kExponential:
      return a_;
    case Kind::kNormal: {
      // E[max(L, X)], X ~ N(m, s): L Phi(z) + m (1 - Phi(z)) + s phi(z), z = (L - m) / s.
      if (b_ == 0.0) return std::max(c_, a_);
      const double z = (c_ - a_) / b_;
      const double cdf = std_normal_cdf(z);
      return c_ * cdf + a_ * (1.0 - cdf) + b_ * std_normal_pdf(z);
    }
    case Kind::kLognormal:
      return a_;
    case Kind::kPareto:
      return b_ > 1.0 ? b_ * a_ / (b_ - 1.0) : std::numeric_limits<double>::infinity();
    case Kind::kEmpirical:
      return cdf_.mean();
  }
  return a_;
}

Json Distribution::schema() {
  const Json non_negative = {{"type", "number"}, {"minimum", 0}};
  const Json positive = {{"type", "number"}, {"exclusiveMinimum", 0}};
  auto branch = [](std::string_view type, std::string_view description, Json properties,
                   const std::vector<std::string>& required) {
    Json props = Json::object();
    props["type"] = {{"const", std::string(type)}};
    for (auto& [k, v] : properties.items())
      props[k] = v;
    Json req = Json::array({"type"});
    for (const auto& r : required)
      req.push_back(r);
    return Json{{"type", "object"},
                {"description", std::string(description)},
                {"properties", std::move(props)},
                {"required", std::move(req)},
                {"additionalProperties", false}};
  };
  Json point = {{"type", "array"},
                {"prefixItems", Json::array({non_negative, {{"type", "number"}, {"minimum", 0}, {"maximum", 1}}})},
                {"items", false},
                {"minItems", 2}};

  Json one_of = Json::array();
  one_of.push_back({{"type", "number"}, {"minimum", 0}, {"description", "constant value"}});
  one_of.push_back(branch("constant", "always `value`", {{"value", non_negative}}, {"value"}));
  one_of.push_back(branch("uniform", "uniform on [min, max), max >= min",
                          {{"min", non_negative}, {"max", non_negative}}, {"min", "max"}));
  one_of.push_back(branch("exponential", "exponential with the given mean", {{"mean", positive}}, {"mean"}));
  one_of.push_back(branch("normal", "max(min, Normal(mean, stddev)); min defaults to 0",
                          {{"mean", non_negative}, {"stddev", non_negative}, {"min", non_negative}},
                          {"mean", "stddev"}));
  one_of.push_back(branch("lognormal", "lognormal with the given arithmetic mean and stddev",
                          {{"mean", positive}, {"stddev", non_negative}}, {"mean", "stddev"}));
  one_of.push_back(branch("pareto", "Pareto type I: P(X > x) = (scale / x)^shape for x >= scale",
                          {{"scale", positive}, {"shape", positive}}, {"scale", "shape"}));
  one_of.push_back(branch("empirical",
                          "piecewise-linear CDF from [value, cumulative_probability] points; values and "
                          "probabilities non-decreasing, last probability 1",
                          {{"points", {{"type", "array"}, {"minItems", 1}, {"items", point}}}}, {"points"}));
  return Json{{"oneOf", std::move(one_of)}};
}

namespace {
Json typed(std::string_view type) {
  return Json{{"type", std::string(type)}};
}
}  // namespace

Distribution Distribution::constant(double value) {
  Json j = typed("constant");
  j["value"] = value;
  return parse(j, "");
}

Distribution Distribution::uniform(double min, double max) {
  Json j = typed("uniform");
  j["min"] = min;
  j["max"] = max;
  return parse(j, "");
}

Distribution Distribution::exponential(double mean) {
  Json j = typed("exponential");
  j["mean"] = mean;
  return parse(j, "");
}

Distribution Distribution::normal(double mean, double stddev, double min) {
  Json j = typed("normal");
  j["mean"] = mean;
  j["stddev"] = stddev;
  j["min"] = min;
  return parse(j, "");
}

Distribution Distribution::lognormal(double mean, double stddev) {
  Json j = typed("lognormal");
  j["mean"] = mean;
  j["stddev"] = stddev;
  return parse(j, "");
}

Distribution Distribution::pareto(double scale, double shape) {
  Json j = typed("pareto");
  j["scale"] = scale;
  j["shape"] = shape;
  return parse(j, "");
}

}  // namespace napisim
