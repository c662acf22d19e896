// napisim calibrate (see calibrate.hpp). The child runs are runner.hpp's.
#include "sim/calibrate/calibrate.hpp"

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "sim/calibrate/fit.hpp"
#include "sim/calibrate/runner.hpp"
#include "sim/core/error.hpp"
#include "sim/core/interrupt.hpp"
#include "sim/kernel/costs.hpp"
#include "sim/params/fields.hpp"
#include "sim/params/json_util.hpp"

namespace napisim::calibrate {

namespace fs = std::filesystem;

namespace {

// ---- the targets file ----

struct RunSpec {
  std::string scenario;           // absolute path
  std::vector<std::string> sets;  // target overrides
};

struct Target {
  std::string name;
  RunSpec run;
  std::string metric;
  double measured = 0;
  double weight = 1;
  bool fit = true;        // false: predicted only (reported, not fitted)
  bool relative = false;  // measured is a relative change vs `baseline`
  RunSpec baseline;
};

struct ParamSpec {
  std::string name;
  double start = 0, lo = 0, hi = 0;
  bool integral = true;
};

struct Targets {
  std::string file;
  std::vector<std::int64_t> seeds = {1};
  std::vector<std::string> sets;
  std::vector<ParamSpec> params;
  std::vector<Target> targets;
  double prior_weight = 0.0;
  int max_iterations = 6;
  int max_evaluations = 40;
  double fd_step = 0.05;
  std::string output;
};

void check_keys(const Json& obj, const std::string& ptr, std::initializer_list<const char*> allowed) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool ok = false;
    for (const char* a : allowed)
      ok = ok || it.key() == a;
    if (!ok) {
      std::string list;
      for (const char* a : allowed)
        list += std::string(list.empty() ? "" : ", ") + a;
      throw ConfigError(json_pointer_append(ptr, it.key()), "unknown key; expected one of " + list);
    }
  }
}

const Json& need(const Json& obj, const std::string& ptr, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end()) throw ConfigError(json_pointer_append(ptr, key), "missing (required)");
  return *it;
}

double number(const Json& v, const std::string& ptr) {
  if (!v.is_number()) throw ConfigError(ptr, "expected a number, got " + describe_json_value(v));
  return v.get<double>();
}

std::string string_at(const Json& v, const std::string& ptr) {
  if (!v.is_string() || v.get<std::string>().empty())
    throw ConfigError(ptr, "expected a non-empty string, got " + describe_json_value(v));
  return v.get<std::string>();
}

// Overrides: {"path": value, ...} (as napisim.run(overrides=...)) or ["path=value", ...] (as --set).
std::vector<std::string> parse_overrides(const Json& v, const std::string& ptr) {
  std::vector<std::string> out;
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it)
      out.push_back(it.key() + "=" + it.value().dump());
  } else if (v.is_array()) {
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::string s = string_at(v[i], json_pointer_append(ptr, i));
      if (s.find('=') == std::string::npos)
        throw ConfigError(json_pointer_append(ptr, i), "expected path=value, got \"" + s + "\"");
      out.push_back(s);
    }
  } else {
    throw ConfigError(ptr,
                      "expected an object {path: value} or an array of \"path=value\", got " + describe_json_value(v));
  }
  return out;
}

RunSpec parse_run(const Json& t, const std::string& ptr, const fs::path& dir) {
  RunSpec r;
  fs::path f = string_at(need(t, ptr, "scenario"), ptr + "/scenario");
  if (f.is_relative()) f = dir / f;
  r.scenario = f.lexically_normal().string();
  if (auto it = t.find("overrides"); it != t.end()) r.sets = parse_overrides(*it, ptr + "/overrides");
  return r;
}

Targets parse_targets(const std::string& file) {
  const Json doc = load_json_file(file);
  if (!doc.is_object()) throw ConfigError("/", "expected a targets object, got " + describe_json_value(doc));
  check_keys(doc, "",
             {"description", "seeds", "sets", "params", "targets", "prior_weight", "max_iterations", "max_evaluations",
              "fd_step", "output"});
  Targets t;
  t.file = file;
  const fs::path dir = fs::absolute(file).parent_path();
  if (auto it = doc.find("seeds"); it != doc.end()) {
    if (!it->is_array() || it->empty()) throw ConfigError("/seeds", "expected a non-empty array of seeds");
    t.seeds.clear();
    for (std::size_t i = 0; i < it->size(); ++i) {
      if (!(*it)[i].is_number_integer() || (*it)[i].get<std::int64_t>() < 0)
        throw ConfigError("/seeds/" + std::to_string(i), "expected a seed >= 0, got " + describe_json_value((*it)[i]));
      t.seeds.push_back((*it)[i].get<std::int64_t>());
    }
  }
  if (auto it = doc.find("sets"); it != doc.end()) t.sets = parse_overrides(*it, "/sets");
  if (auto it = doc.find("prior_weight"); it != doc.end()) {
    t.prior_weight = number(*it, "/prior_weight");
    if (t.prior_weight < 0) throw ConfigError("/prior_weight", "expected >= 0");
  }
  if (auto it = doc.find("max_iterations"); it != doc.end()) {
    if (!it->is_number_integer() || it->get<int>() < 0)
      throw ConfigError("/max_iterations", "expected an integer >= 0");
    t.max_iterations = it->get<int>();
  }
  if (auto it = doc.find("max_evaluations"); it != doc.end()) {
    if (!it->is_number_integer() || it->get<int>() < 1)
      throw ConfigError("/max_evaluations", "expected an integer >= 1");
    t.max_evaluations = it->get<int>();
  }
  if (auto it = doc.find("fd_step"); it != doc.end()) {
    t.fd_step = number(*it, "/fd_step");
    if (!(t.fd_step > 0 && t.fd_step < 1)) throw ConfigError("/fd_step", "expected a log step in (0, 1)");
  }
  if (auto it = doc.find("output"); it != doc.end()) {
    fs::path o = string_at(*it, "/output");
    t.output = (o.is_relative() ? dir / o : o).lexically_normal().string();
  }

  // Cost parameters: names and defaults from CostParams (the documented starting values).
  const Json defaults = params_to_json(CostParams{});
  const Json& ps = need(doc, "", "params");
  if (!ps.is_object() || ps.empty()) throw ConfigError("/params", "expected an object {cost parameter: {min, max}}");
  for (auto it = ps.begin(); it != ps.end(); ++it) {
    const std::string p = json_pointer_append("/params", it.key());
    if (!defaults.contains(it.key())) {
      std::string names;
      for (auto d = defaults.begin(); d != defaults.end(); ++d)
        names += (names.empty() ? "" : ", ") + d.key();
      throw ConfigError(p, "unknown cost parameter; expected one of " + names);
    }
    if (!it.value().is_object()) throw ConfigError(p, "expected {\"min\": .., \"max\": ..}");
    check_keys(it.value(), p, {"min", "max", "start"});
    ParamSpec s;
    s.name = it.key();
    s.integral = defaults[it.key()].is_number_integer();
    s.start =
        it.value().contains("start") ? number(it.value()["start"], p + "/start") : defaults[it.key()].get<double>();
    s.lo = number(need(it.value(), p, "min"), p + "/min");
    s.hi = number(need(it.value(), p, "max"), p + "/max");
    if (!(s.lo > 0)) throw ConfigError(p + "/min", "expected > 0 (the fit is in log space)");
    if (!(s.hi > s.lo)) throw ConfigError(p + "/max", "expected > min");
    if (s.start < s.lo || s.start > s.hi)
      throw ConfigError(p, "the start value " + format_number(s.start) + " is outside [min, max]");
    t.params.push_back(s);
  }

  const Json& ts = need(doc, "", "targets");
  if (!ts.is_array() || ts.empty()) throw ConfigError("/targets", "expected a non-empty array of measured points");
  for (std::size_t i = 0; i < ts.size(); ++i) {
    const std::string p = "/targets/" + std::to_string(i);
    const Json& j = ts[i];
    if (!j.is_object()) throw ConfigError(p, "expected an object");
    check_keys(j, p, {"name", "scenario", "overrides", "metric", "measured", "weight", "fit", "baseline", "source"});
    Target tg;
    tg.run = parse_run(j, p, dir);
    tg.name = j.contains("name") ? string_at(j["name"], p + "/name") : fs::path(tg.run.scenario).stem().string();
    tg.metric = string_at(need(j, p, "metric"), p + "/metric");
    tg.measured = number(need(j, p, "measured"), p + "/measured");
    if (j.contains("weight")) {
      tg.weight = number(j["weight"], p + "/weight");
      if (tg.weight < 0) throw ConfigError(p + "/weight", "expected >= 0");
    }
    if (j.contains("fit")) {
      if (!j["fit"].is_boolean()) throw ConfigError(p + "/fit", "expected true or false");
      tg.fit = j["fit"].get<bool>();
    }
    if (j.contains("baseline")) {
      const Json& b = j["baseline"];
      if (!b.is_object()) throw ConfigError(p + "/baseline", "expected {scenario, overrides}");
      check_keys(b, p + "/baseline", {"scenario", "overrides"});
      tg.relative = true;
      tg.baseline = parse_run(b, p + "/baseline", dir);
    } else if (tg.measured == 0) {
      throw ConfigError(p + "/measured", "expected a non-zero value (residuals are relative errors)");
    }
    for (const RunSpec* r : {&tg.run, tg.relative ? &tg.baseline : nullptr})
      if (r && !fs::exists(r->scenario))
        throw ConfigError(p + (r == &tg.run ? "/scenario" : "/baseline/scenario"),
                          "cannot read scenario file '" + r->scenario + "': no such file");
    t.targets.push_back(tg);
  }
  return t;
}

// ---- residuals ----

struct Eval {
  double mean = 0, ci95 = 0;  // over seeds
};

std::vector<std::string> cost_sets(const std::vector<ParamSpec>& ps, const Eigen::VectorXd& p) {
  std::vector<std::string> out;
  for (std::size_t j = 0; j < ps.size(); ++j) {
    const double v = p[static_cast<Eigen::Index>(j)];
    out.push_back("costs." + ps[j].name + "=" + (ps[j].integral ? std::to_string(std::llround(v)) : format_number(v)));
  }
  return out;
}

class Evaluator {
 public:
  Evaluator(const Targets& t, std::vector<std::string> extra_sets, Runner& runner)
      : t_(t)
      , extra_(std::move(extra_sets))
      , runner_(runner) {}

  /// Simulated value of each target (mean and CI over seeds) for each parameter vector.
  std::vector<std::vector<Eval>> evaluate(const std::vector<Eigen::VectorXd>& ps,
                                          const std::vector<std::size_t>& which) {
    std::vector<Job> jobs;
    auto job = [&](const RunSpec& r, const Eigen::VectorXd& p, std::int64_t seed, std::string origin) {
      Job j;
      j.origin = std::move(origin);
      j.scenario = r.scenario;
      j.sets = t_.sets;
      j.sets.insert(j.sets.end(), extra_.begin(), extra_.end());
      j.sets.insert(j.sets.end(), r.sets.begin(), r.sets.end());
      const auto cs = cost_sets(t_.params, p);
      j.sets.insert(j.sets.end(), cs.begin(), cs.end());
      j.seed = seed;
      return j;
    };
    for (const auto& p : ps)
      for (std::size_t i : which)
        for (std::int64_t seed : t_.seeds) {
          const std::string origin = "/targets/" + std::to_string(i);
          jobs.push_back(job(t_.targets[i].run, p, seed, origin));
          if (t_.targets[i].relative) jobs.push_back(job(t_.targets[i].baseline, p, seed, origin + "/baseline"));
        }
    const std::vector<const Json*> sums = runner_.run(jobs);
    std::vector<std::vector<Eval>> out;
    std::size_t k = 0;
    for (std::size_t pi = 0; pi < ps.size(); ++pi) {
      std::vector<Eval> row;
      for (std::size_t i : which) {
        const Target& tg = t_.targets[i];
        std::vector<double> xs;
        for (std::size_t s = 0; s < t_.seeds.size(); ++s) {
          double v = metric(*sums[k++], tg, i);
          if (tg.relative) {
            const double b = metric(*sums[k++], tg, i);
            v = b != 0 ? v / b - 1.0 : 0.0;
          }
          xs.push_back(v);
        }
        const MeanCi m = mean_ci95(xs);
        row.push_back(Eval{m.mean, m.ci95});
      }
      out.push_back(std::move(row));
    }
    return out;
  }

  double residual(std::size_t i, double sim) const {
    const Target& tg = t_.targets[i];
    const double e = tg.relative ? sim - tg.measured : (sim - tg.measured) / std::abs(tg.measured);
    return std::sqrt(tg.weight) * e;
  }

 private:
  double metric(const Json& summary, const Target& tg, std::size_t i) const {
    double v = 0;
    if (!summary_metric(summary, tg.metric, &v)) {
      std::string keys;
      for (auto it = summary.begin(); it != summary.end(); ++it)
        keys += (keys.empty() ? "" : ", ") + it.key();
      throw ConfigError("/targets/" + std::to_string(i) + "/metric",
                        "no numeric summary value \"" + tg.metric + "\"; summary keys: " + keys);
    }
    return v;
  }

  const Targets& t_;
  std::vector<std::string> extra_;
  Runner& runner_;
};

std::string fmt(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.4g", v);
  return b;
}

void print_points(const Targets& t, const std::vector<Eval>& sim, const Evaluator& ev, const char* title) {
  std::printf("\n%s\n", title);
  std::printf("  %-38s %-20s %12s %22s %9s %6s\n", "point", "metric", "measured", "simulated (95% CI)", "error",
              "weight");
  for (std::size_t i = 0; i < t.targets.size(); ++i) {
    const Target& tg = t.targets[i];
    const std::string simtxt = fmt(sim[i].mean) + (sim[i].ci95 > 0 ? " +- " + fmt(sim[i].ci95) : "");
    const double err = tg.relative ? sim[i].mean - tg.measured : (sim[i].mean - tg.measured) / std::abs(tg.measured);
    char e[32];
    std::snprintf(e, sizeof e, tg.relative ? "%+.3f abs" : "%+.1f%%", tg.relative ? err : 100 * err);
    std::printf("  %-38s %-20s %12s %22s %9s %6s%s\n", tg.name.substr(0, 38).c_str(),
                (tg.metric + (tg.relative ? " (rel)" : "")).substr(0, 20).c_str(), fmt(tg.measured).c_str(),
                simtxt.c_str(), e, fmt(tg.weight).c_str(), tg.fit ? "" : "  (predicted)");
  }
  (void)ev;
}

double weighted_cost(const Targets& t, const std::vector<Eval>& sim, const Evaluator& ev, bool fitted) {
  double c = 0;
  for (std::size_t i = 0; i < t.targets.size(); ++i)
    if (t.targets[i].fit == fitted) c += std::pow(ev.residual(i, sim[i].mean), 2);
  return c;
}

Json points_json(const Targets& t, const std::vector<Eval>& sim, const Evaluator& ev) {
  Json a = Json::array();
  for (std::size_t i = 0; i < t.targets.size(); ++i) {
    const Target& tg = t.targets[i];
    a.push_back({{"name", tg.name},
                 {"scenario", tg.run.scenario},
                 {"metric", tg.metric},
                 {"relative", tg.relative},
                 {"measured", tg.measured},
                 {"simulated", sim[i].mean},
                 {"ci95", sim[i].ci95},
                 {"weight", tg.weight},
                 {"fit", tg.fit},
                 {"residual", ev.residual(i, sim[i].mean)}});
  }
  return a;
}

}  // namespace

bool summary_metric(const Json& summary, const std::string& metric, double* out) {
  std::string path = metric;
  if (path.rfind("latency_p", 0) == 0)
    path = "latency_ns." + path.substr(8);
  else if (path == "cpu_us_per_op")
    path = "cpu.cpu_us_per_op";
  else if (path == "cpu_busy_pct")
    path = "cpu.busy_pct";
  // Walk the path, matching the longest key first so "latency_ns.p99.9" finds key "p99.9".
  const Json* cur = &summary;
  std::string rest = path;
  while (true) {
    if (!cur->is_object()) return false;
    if (auto it = cur->find(rest); it != cur->end()) {
      cur = &*it;
      break;
    }
    bool found = false;
    for (std::size_t dot = rest.rfind('.'); dot != std::string::npos && dot > 0; dot = rest.rfind('.', dot - 1)) {
      if (auto it = cur->find(rest.substr(0, dot)); it != cur->end()) {
        cur = &*it;
        rest = rest.substr(dot + 1);
        found = true;
        break;
      }
      if (dot == 0) break;
    }
    if (!found) return false;
  }
  if (!cur->is_number()) return false;
  *out = cur->get<double>();
  return true;
}

Json run_calibration(const CalibrateOptions& opt) {
  Targets t = parse_targets(opt.targets_file);
  if (!opt.seeds.empty()) t.seeds = opt.seeds;
  if (opt.max_iterations >= 0) t.max_iterations = opt.max_iterations;
  const int jobs = opt.jobs > 0 ? opt.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const std::string exe = opt.exe.empty() ? fs::canonical("/proc/self/exe").string() : opt.exe;
  Runner runner(exe, jobs);
  Evaluator ev(t, opt.sets, runner);

  std::vector<std::size_t> fitted, all;
  for (std::size_t i = 0; i < t.targets.size(); ++i) {
    all.push_back(i);
    if (t.targets[i].fit && t.targets[i].weight > 0) fitted.push_back(i);
  }
  std::printf("napisim calibrate %s: %zu points (%zu fitted), %zu seeds, %zu parameters, %d parallel runs\n",
              opt.targets_file.c_str(), t.targets.size(), fitted.size(), t.seeds.size(), t.params.size(), jobs);
  std::fflush(stdout);

  Eigen::VectorXd p0(static_cast<Eigen::Index>(t.params.size()));
  for (std::size_t j = 0; j < t.params.size(); ++j)
    p0[static_cast<Eigen::Index>(j)] = t.params[j].start;
  const std::vector<Eval> sim0 = ev.evaluate({p0}, all)[0];
  print_points(t, sim0, ev, "Starting parameters (documented defaults):");
  const double cost0 = weighted_cost(t, sim0, ev, true), pred0 = weighted_cost(t, sim0, ev, false);
  std::printf("  weighted residual sum w*e^2: fitted points %.4f, predicted points %.4f\n", cost0, pred0);

  Json report;
  report["targets_file"] = opt.targets_file;
  report["seeds"] = t.seeds;
  report["sets"] = [&] {
    auto s = t.sets;
    s.insert(s.end(), opt.sets.begin(), opt.sets.end());
    return s;
  }();
  report["start"] = {{"points", points_json(t, sim0, ev)}, {"cost_fitted", cost0}, {"cost_predicted", pred0}};
  if (opt.dry_run) {
    report["dry_run"] = true;
    std::fflush(stdout);
    return report;
  }
  if (fitted.empty()) throw ConfigError("/targets", "no point to fit (every point has fit false or weight 0)");

  std::vector<FitParam> fps;
  for (const ParamSpec& s : t.params)
    fps.push_back({s.name, s.start, s.lo, s.hi});
  const BatchResiduals batch = [&](const std::vector<Eigen::VectorXd>& ps) {
    const auto sims = ev.evaluate(ps, fitted);
    std::vector<Eigen::VectorXd> rs;
    for (const auto& row : sims) {
      Eigen::VectorXd r(static_cast<Eigen::Index>(fitted.size()));
      for (std::size_t k = 0; k < fitted.size(); ++k)
        r[static_cast<Eigen::Index>(k)] = ev.residual(fitted[k], row[k].mean);
      rs.push_back(r);
    }
    return rs;
  };
  FitOptions fo;
  fo.max_iterations = t.max_iterations;
  fo.max_evaluations = t.max_evaluations;
  fo.prior_weight = t.prior_weight;
  fo.fd_step = t.fd_step;
  fo.log = [&runner](const std::string& s) {
    std::printf("  fit %s (simulations so far %d)\n", s.c_str(), runner.simulations());
    std::fflush(stdout);
  };
  std::printf("\nFitting (Levenberg-Marquardt in log space, forward differences of %.0f%%):\n", 100 * t.fd_step);
  const FitResult fr = fit_bounded_log(fps, static_cast<int>(fitted.size()), batch, fo);

  const std::vector<Eval> sim1 = ev.evaluate({fr.params}, all)[0];
  print_points(t, sim1, ev, "Fitted parameters:");
  const double cost1 = weighted_cost(t, sim1, ev, true), pred1 = weighted_cost(t, sim1, ev, false);
  std::printf("  weighted residual sum w*e^2: fitted points %.4f (start %.4f), predicted points %.4f (start %.4f)\n",
              cost1, cost0, pred1, pred0);
  std::printf("\n  %-18s %10s %10s %10s %10s\n", "parameter", "start", "fitted", "min", "max");
  Json params = Json::array(), fragment = {{"costs", Json::object()}};
  for (std::size_t j = 0; j < t.params.size(); ++j) {
    const auto J = static_cast<Eigen::Index>(j);
    const double v = t.params[j].integral ? static_cast<double>(std::llround(fr.params[J])) : fr.params[J];
    std::printf("  %-18s %10s %10s %10s %10s\n", t.params[j].name.c_str(), fmt(fr.start[J]).c_str(), fmt(v).c_str(),
                fmt(t.params[j].lo).c_str(), fmt(t.params[j].hi).c_str());
    params.push_back({{"name", t.params[j].name},
                      {"start", fr.start[J]},
                      {"fitted", v},
                      {"min", t.params[j].lo},
                      {"max", t.params[j].hi}});
    if (t.params[j].integral)
      fragment["costs"][t.params[j].name] = std::llround(fr.params[J]);
    else
      fragment["costs"][t.params[j].name] = v;
  }
  std::printf("\nSensitivities d residual / d log parameter at the solution:\n  %-38s", "point");
  for (const ParamSpec& s : t.params)
    std::printf(" %14.14s", s.name.c_str());
  std::printf("\n");
  Json jac = Json::array();
  for (std::size_t k = 0; k < fitted.size(); ++k) {
    std::printf("  %-38s", t.targets[fitted[k]].name.substr(0, 38).c_str());
    Json row = Json::array();
    for (Eigen::Index j = 0; j < fr.jacobian.cols(); ++j) {
      std::printf(" %14.4f", fr.jacobian(static_cast<Eigen::Index>(k), j));
      row.push_back(fr.jacobian(static_cast<Eigen::Index>(k), j));
    }
    std::printf("\n");
    jac.push_back({{"point", t.targets[fitted[k]].name}, {"d_residual_d_log_param", row}});
  }
  std::printf("\n%s after %d iterations, %d parameter sets, %d simulations; cost %.4f -> %.4f (%s)\n",
              fr.status.c_str(), fr.iterations, fr.evaluations, runner.simulations(), cost0, cost1,
              cost1 < cost0 ? "improved" : "NOT improved");
  report["status"] = fr.status;
  report["iterations"] = fr.iterations;
  report["parameter_sets"] = fr.evaluations;
  report["simulations"] = runner.simulations();
  report["parameters"] = params;
  report["jacobian"] = jac;
  report["fitted"] = {{"points", points_json(t, sim1, ev)}, {"cost_fitted", cost1}, {"cost_predicted", pred1}};
  report["improved"] = cost1 < cost0;

  const std::string out = !opt.out.empty() ? opt.out : t.output;
  if (!out.empty()) {
    std::ofstream(out) << fragment.dump(2) << "\n";
    std::string rep = opt.report;
    if (rep.empty()) {
      rep = out;
      if (rep.size() > 5 && rep.substr(rep.size() - 5) == ".json") rep.resize(rep.size() - 5);
      rep += ".report.json";
    }
    std::ofstream(rep) << report.dump(2) << "\n";
    std::printf("wrote %s (include it from a scenario) and %s\n", out.c_str(), rep.c_str());
  }
  std::fflush(stdout);
  return report;
}

}  // namespace napisim::calibrate
