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
#include "sim/calibrate/targets.hpp"
#include "sim/core/error.hpp"
#include "sim/core/interrupt.hpp"
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

struct Targets {
  std::string file;
  std::vector<std::int64_t> seeds = {1};
  std::vector<std::string> sets;
  std::vector<FitBounds> params;
  std::vector<Target> targets;
  double prior_weight = 0.0;
  int max_iterations = 6;
  int max_evaluations = 40;
  double fd_step = 0.05;
  std::string output;
};

RunSpec run_spec(const RunDoc& d, const fs::path& dir) {
  fs::path f = d.scenario;
  if (f.is_relative()) f = dir / f;
  return RunSpec{f.lexically_normal().string(), override_sets(d.overrides)};
}

// The targets file: shapes and values checked by parse_targets_doc() (targets.hpp), then the
// scenario paths resolved against the file's directory.
Targets parse_targets(const std::string& file) {
  const TargetsDoc doc = parse_targets_doc(load_json_file(file));
  Targets t;
  t.file = file;
  const fs::path dir = fs::absolute(file).parent_path();
  t.seeds = doc.seeds;
  t.sets = override_sets(doc.sets);
  t.prior_weight = doc.prior_weight;
  t.max_iterations = doc.max_iterations;
  t.max_evaluations = doc.max_evaluations;
  t.fd_step = doc.fd_step;
  if (!doc.output.empty()) {
    const fs::path o = doc.output;
    t.output = (o.is_relative() ? dir / o : o).lexically_normal().string();
  }
  t.params = fit_bounds(doc.params);
  for (std::size_t i = 0; i < doc.targets.size(); ++i) {
    const std::string p = "/targets/" + std::to_string(i);
    const TargetDoc& d = doc.targets[i];
    Target tg;
    tg.run = run_spec(d, dir);
    tg.name = d.name.empty() ? fs::path(tg.run.scenario).stem().string() : d.name;
    tg.metric = d.metric;
    tg.measured = *d.measured;
    tg.weight = d.weight;
    tg.fit = d.fit;
    if (!d.baseline.is_null()) {
      tg.relative = true;
      tg.baseline = run_spec(parse_params<RunDoc>(d.baseline, p + "/baseline"), dir);
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

std::vector<std::string> cost_sets(const std::vector<FitBounds>& ps, const Eigen::VectorXd& p) {
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
  for (const FitBounds& s : t.params)
    fps.push_back({s.name, s.start, s.min, s.max});
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
                fmt(t.params[j].min).c_str(), fmt(t.params[j].max).c_str());
    params.push_back({{"name", t.params[j].name},
                      {"start", fr.start[J]},
                      {"fitted", v},
                      {"min", t.params[j].min},
                      {"max", t.params[j].max}});
    if (t.params[j].integral)
      fragment["costs"][t.params[j].name] = std::llround(fr.params[J]);
    else
      fragment["costs"][t.params[j].name] = v;
  }
  std::printf("\nSensitivities d residual / d log parameter at the solution:\n  %-38s", "point");
  for (const FitBounds& s : t.params)
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
