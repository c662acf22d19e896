// napisim compare (see compare.hpp).
#include "sim/calibrate/compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "sim/calibrate/calibrate.hpp"
#include "sim/calibrate/runner.hpp"
#include "sim/core/error.hpp"

namespace napisim::calibrate {

namespace {

struct Metric {
  const char* key;   // summary_metric() path
  const char* name;  // as printed
  const char* unit;
  double scale;  // printed value = summary value * scale
};

// What every workload's summary has (throughput in its tool's unit: transactions/s, requests/s or
// 10^6 bits/s), then mutilate's own latency; rows no scenario has are left out.
constexpr Metric kMetrics[] = {
    {"throughput", "throughput", "/s", 1.0},
    {"latency_ns.mean", "latency mean", "us", 1e-3},
    {"latency_p50", "latency p50", "us", 1e-3},
    {"latency_p90", "latency p90", "us", 1e-3},
    {"latency_p99", "latency p99", "us", 1e-3},
    {"latency_p99.9", "latency p99.9", "us", 1e-3},
    {"mutilate.read.avg", "mutilate read avg", "us", 1.0},
    {"mutilate.read.p99", "mutilate read p99", "us", 1.0},
    {"cpu_us_per_op", "CPU per op", "us", 1.0},
    {"cpu_busy_pct", "CPU busy", "%", 1.0},
};

std::string num(double v) {
  char b[32];
  const double a = std::fabs(v);
  if (a >= 1e6)
    std::snprintf(b, sizeof b, "%.4gM", v / 1e6);
  else if (a >= 1e4)
    std::snprintf(b, sizeof b, "%.4gK", v / 1e3);
  else
    std::snprintf(b, sizeof b, "%.4g", v);
  return b;
}

// The mean ns the requests of `band` spent in `stage` ("latency": the band's mean latency), from a
// summary that carries a run's latency_breakdown.
bool stage_mean(const Json& summary, const std::string& band, const std::string& stage, double* out) {
  const auto b = summary.find("latency_breakdown");
  if (b == summary.end()) return false;
  for (const Json& x : (*b)["bands"]) {
    if (x.value("band", "") != band) continue;
    const Json& v = stage == "latency" ? x["latency_ns"] : x["stage_ns"].value(stage, Json());
    if (!v.is_number()) return false;
    *out = v.get<double>();
    return true;
  }
  return false;
}

Json paired_row(const std::vector<std::vector<double>>& values, bool on_difference) {
  const std::size_t n = values[0].size();
  Json sc = Json::array();
  for (std::size_t i = 0; i < values.size(); ++i) {
    const MeanCi st = mean_ci95(values[i]);
    Json c{{"mean", st.mean}, {"ci95", st.ci95}, {"values", values[i]}};
    if (i > 0) {
      std::vector<double> d(n), rel;
      for (std::size_t s = 0; s < n; ++s) {
        d[s] = values[i][s] - values[0][s];
        if (values[0][s] != 0) rel.push_back(d[s] / values[0][s]);
      }
      const MeanCi sd = mean_ci95(d);
      const MeanCi sr = mean_ci95(rel);
      // Called on the relative change printed (on the difference when a baseline value is 0, or
      // for a stage, whose differences add up to the latency's).
      const MeanCi& on = rel.size() == n && !on_difference ? sr : sd;
      c["change"] = {{"mean", sd.mean},
                     {"ci95", sd.ci95},
                     {"relative_mean", sr.mean},
                     {"relative_ci95", sr.ci95},
                     {"called", n > 1 && std::fabs(on.mean) > on.ci95}};
    }
    sc.push_back(std::move(c));
  }
  return sc;
}

std::string pad(const std::string& s, std::size_t w) {
  return s.size() >= w ? s : s + std::string(w - s.size(), ' ');
}

}  // namespace

Json run_compare(const CompareOptions& opt) {
  if (opt.scenarios.empty()) throw ConfigError("compare", "expected at least one scenario");
  std::vector<std::int64_t> seeds = opt.seeds;
  if (seeds.empty()) seeds = {1, 2, 3, 4, 5};
  const std::string exe = opt.exe.empty() ? std::filesystem::canonical("/proc/self/exe").string() : opt.exe;
  const int jobs = opt.jobs > 0 ? opt.jobs : static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  Runner runner(exe, jobs);
  std::vector<Job> all;
  for (const std::string& sc : opt.scenarios)
    for (std::int64_t seed : seeds) {
      Job j;
      j.scenario = sc;
      j.sets = opt.sets;
      j.seed = seed;
      if (opt.explain) j.args = {"--explain"};
      j.origin = "compare: " + sc;
      all.push_back(std::move(j));
    }
  const std::vector<const Json*> res = runner.run(all);
  const std::size_t n = seeds.size();
  auto summary = [&](std::size_t scenario, std::size_t seed) -> const Json& { return *res[scenario * n + seed]; };

  Json doc;
  doc["scenarios"] = opt.scenarios;
  doc["seeds"] = seeds;
  doc["sets"] = opt.sets;
  doc["metrics"] = Json::array();
  for (const Metric& m : kMetrics) {
    // values[scenario][seed]; a metric some run lacks is left out for every scenario.
    std::vector<std::vector<double>> values(opt.scenarios.size(), std::vector<double>(n));
    bool complete = true;
    for (std::size_t i = 0; i < opt.scenarios.size() && complete; ++i)
      for (std::size_t s = 0; s < n && complete; ++s) {
        double v = 0;
        complete = summary_metric(summary(i, s), m.key, &v);
        values[i][s] = v * m.scale;
      }
    if (!complete) continue;
    Json row;
    row["name"] = m.name;
    row["metric"] = m.key;
    row["unit"] = m.unit;
    row["scenarios"] = paired_row(values, false);
    doc["metrics"].push_back(std::move(row));
  }
  if (opt.explain) {
    // The bands and stages as the baseline's first run has them (every run of a workload has the
    // same stages; a band one run lacks is left out).
    const Json& first = summary(0, 0);
    if (!first.contains("latency_breakdown")) throw ConfigError("--explain", "the runs carry no latency breakdown");
    std::vector<std::string> stages = {"latency"};
    for (const Json& s : first["latency_breakdown"]["stages"])
      stages.push_back(s.get<std::string>());
    for (const Json& b : first["latency_breakdown"]["bands"]) {
      const std::string band = b.value("band", "");
      std::vector<std::vector<double>> lat(opt.scenarios.size(), std::vector<double>(n));
      for (const std::string& stage : stages) {
        std::vector<std::vector<double>> values(opt.scenarios.size(), std::vector<double>(n));
        bool complete = true;
        bool minor = stage != "latency";
        for (std::size_t i = 0; i < opt.scenarios.size() && complete; ++i)
          for (std::size_t s = 0; s < n && complete; ++s) {
            double v = 0;
            complete = stage_mean(summary(i, s), band, stage, &v);
            values[i][s] = v * 1e-3;
            if (stage == "latency") lat[i][s] = values[i][s];
          }
        if (!complete) continue;
        for (std::size_t i = 0; i < opt.scenarios.size(); ++i)
          minor = minor && mean_ci95(values[i]).mean < 0.02 * mean_ci95(lat[i]).mean;
        Json row;
        row["name"] = band + " " + stage;
        row["metric"] = "latency_breakdown." + band + "." + stage;
        row["unit"] = "us";
        row["stage"] = true;
        row["minor"] = minor;
        row["scenarios"] = paired_row(values, true);
        doc["metrics"].push_back(std::move(row));
      }
    }
  }
  doc["simulations"] = runner.simulations();
  return doc;
}

std::string format_compare(const Json& doc) {
  const auto& names = doc["scenarios"];
  const auto& seeds = doc["seeds"];
  std::string seed_list;
  for (const auto& s : seeds) {
    if (!seed_list.empty()) seed_list += ',';
    seed_list += std::to_string(s.get<std::int64_t>());
  }
  std::string out = "napisim: " + std::to_string(names.size()) +
                    (names.size() == 1 ? " scenario x " : " scenarios x ") + std::to_string(seeds.size()) + " seeds (" +
                    seed_list + "); mean +- 95% CI over seeds" +
                    (names.size() > 1 ? "; change: paired per seed against the first (the same seed's arrivals and "
                                        "cost draws), called when its interval excludes 0"
                                      : "") +
                    "\n\n";
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> head = {"metric", "unit"};
  for (const auto& n : names)
    head.push_back(n.get<std::string>());
  for (std::size_t i = 1; i < names.size(); ++i)
    head.push_back("change " + std::to_string(i) + " vs 0");
  rows.push_back(head);
  bool stages = false;
  for (const auto& m : doc["metrics"]) {
    if (m.value("minor", false)) continue;  // under 2% of its band's latency everywhere
    if (m.value("stage", false) && !stages) {
      // The breakdown's rows: each band's stages, the change in µs (stages add up to the latency).
      stages = true;
      rows.push_back(std::vector<std::string>(head.size(), ""));
      std::vector<std::string> h = {"band stage (--explain)", "unit"};
      for (std::size_t i = 0; i < names.size(); ++i)
        h.push_back("");
      for (std::size_t i = 1; i < names.size(); ++i)
        h.push_back("change " + std::to_string(i) + " vs 0");
      rows.push_back(std::move(h));
    }
    std::vector<std::string> r = {m["name"].get<std::string>(), m["unit"].get<std::string>()};
    const auto& sc = m["scenarios"];
    for (const auto& c : sc)
      r.push_back(num(c["mean"].get<double>()) + " +- " + num(c["ci95"].get<double>()));
    for (std::size_t i = 1; i < sc.size(); ++i) {
      const auto& ch = sc[i]["change"];
      char b[96];
      if (m.value("stage", false))
        std::snprintf(b, sizeof b, "%+.1f +- %.1f us%s", ch["mean"].get<double>(), ch["ci95"].get<double>(),
                      ch["called"].get<bool>() ? "  called" : "");
      else
        std::snprintf(b, sizeof b, "%+.1f%% +- %.1f%%%s", 100.0 * ch["relative_mean"].get<double>(),
                      100.0 * ch["relative_ci95"].get<double>(), ch["called"].get<bool>() ? "  called" : "");
      r.push_back(b);
    }
    rows.push_back(std::move(r));
  }
  std::vector<std::size_t> w(head.size(), 0);
  for (const auto& r : rows)
    for (std::size_t k = 0; k < r.size(); ++k)
      w[k] = std::max(w[k], r[k].size());
  for (const auto& r : rows) {
    std::string line;
    for (std::size_t k = 0; k < r.size(); ++k) {
      if (k) line += "  ";  // not `"  " + pad(...)`: GCC 12's -Wstringop-overflow false positive
      line += pad(r[k], k + 1 < r.size() ? w[k] : 0);
    }
    out += line + "\n";
  }
  out += "\n";
  for (std::size_t i = 0; i < names.size(); ++i)
    out += std::to_string(i) + ": " + names[i].get<std::string>() + "\n";
  return out;
}

}  // namespace napisim::calibrate
