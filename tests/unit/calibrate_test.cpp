// napisim calibrate's fitter (sim/calibrate/fit.hpp) on synthetic residual functions with known
// answers, no simulation; and the summary-metric lookup used to read result documents.
#include "sim/calibrate/calibrate.hpp"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "sim/calibrate/fit.hpp"
#include "sim/calibrate/targets.hpp"
#include "sim/core/error.hpp"
#include "sim/kernel/costs.hpp"

namespace napisim::calibrate {
namespace {

// A toy "simulator": latency = a + b * load_i, throughput = 1e9 / (a + 2 b), each a relative
// residual against values produced by the true parameters (a, b) = (400, 1500) ns.
std::vector<Eigen::VectorXd> toy(const std::vector<Eigen::VectorXd>& ps, int* calls) {
  const double a0 = 400, b0 = 1500;
  const std::vector<double> loads = {0.5, 1, 2, 4};
  std::vector<Eigen::VectorXd> out;
  for (const auto& p : ps) {
    ++*calls;
    Eigen::VectorXd r(static_cast<Eigen::Index>(loads.size() + 1));
    for (std::size_t i = 0; i < loads.size(); ++i) {
      const double meas = a0 + b0 * loads[i], sim = p[0] + p[1] * loads[i];
      r[static_cast<Eigen::Index>(i)] = (sim - meas) / meas;
    }
    const double meas = 1e9 / (a0 + 2 * b0), sim = 1e9 / (p[0] + 2 * p[1]);
    r[static_cast<Eigen::Index>(loads.size())] = (sim - meas) / meas;
    out.push_back(r);
  }
  return out;
}

TEST(CalibrateFitTest, RecoversKnownParametersFromFarStart) {
  int calls = 0;
  const BatchResiduals f = [&](const std::vector<Eigen::VectorXd>& ps) { return toy(ps, &calls); };
  FitOptions opt;
  opt.max_iterations = 50;
  opt.max_evaluations = 400;
  opt.fd_step = 1e-4;
  opt.xtol = 1e-10;
  opt.ftol = 1e-12;
  const FitResult r = fit_bounded_log({{"a", 100, 10, 1e4}, {"b", 5000, 10, 1e5}}, 5, f, opt);
  EXPECT_NEAR(r.params[0], 400, 4);  // 1%
  EXPECT_NEAR(r.params[1], 1500, 15);
  EXPECT_LT(r.cost, 1e-6);
  EXPECT_GT(r.cost_start, 0.1);
  EXPECT_NEAR(r.start[0], 100, 1e-6);
  // Jacobian d r / d log p at the solution, by hand: d r_i / d log a = a / meas_i.
  EXPECT_NEAR(r.jacobian(0, 0), 400.0 / (400 + 1500 * 0.5), 0.01);
  EXPECT_NEAR(r.jacobian(3, 1), 1500.0 * 4 / (400 + 1500 * 4), 0.01);
  EXPECT_GT(calls, 0);
}

TEST(CalibrateFitTest, StaysInsideBounds) {
  int calls = 0;
  const BatchResiduals f = [&](const std::vector<Eigen::VectorXd>& ps) { return toy(ps, &calls); };
  FitOptions opt;
  opt.max_iterations = 30;
  opt.max_evaluations = 300;
  opt.fd_step = 1e-4;
  // The true a = 400 lies above the bound 200: the fit must end at (just under) the bound.
  const FitResult r = fit_bounded_log({{"a", 150, 50, 200}, {"b", 1000, 10, 1e5}}, 5, f, opt);
  EXPECT_LE(r.params[0], 200.0);
  EXPECT_GT(r.params[0], 180.0);
  EXPECT_LT(r.cost, r.cost_start);
}

TEST(CalibrateFitTest, PriorKeepsAnUnidentifiedParameterAtItsStart) {
  // r depends on a only; b is unidentified, and the prior rows also make m >= n.
  const BatchResiduals f = [](const std::vector<Eigen::VectorXd>& ps) {
    std::vector<Eigen::VectorXd> out;
    for (const auto& p : ps)
      out.push_back(Eigen::VectorXd::Constant(1, (p[0] - 300) / 300));
    return out;
  };
  FitOptions opt;
  opt.prior_weight = 1e-4;
  opt.max_iterations = 40;
  opt.max_evaluations = 300;
  opt.fd_step = 1e-4;
  const FitResult r = fit_bounded_log({{"a", 600, 10, 1e4}, {"b", 77, 1, 1e4}}, 1, f, opt);
  EXPECT_NEAR(r.params[0], 300, 6);
  EXPECT_NEAR(r.params[1], 77, 0.5);
  // Without the prior there are fewer residuals than parameters: refused.
  opt.prior_weight = 0;
  EXPECT_THROW(fit_bounded_log({{"a", 600, 10, 1e4}, {"b", 77, 1, 1e4}}, 1, f, opt), std::invalid_argument);
}

TEST(CalibrateFitTest, NoisyResidualsStillImprove) {
  // A deterministic "noise" term of 1% that changes with every parameter value (like a simulation
  // whose event order changes): the 5% forward-difference step must see through it.
  const BatchResiduals f = [](const std::vector<Eigen::VectorXd>& ps) {
    std::vector<Eigen::VectorXd> out;
    for (const auto& p : ps) {
      Eigen::VectorXd r(2);
      const double noise = 0.01 * std::sin(1e4 * p[0]);
      r[0] = (p[0] * (1 + noise) - 1000) / 1000;
      r[1] = (2 * p[0] * (1 - noise) - 2000) / 2000;
      out.push_back(r);
    }
    return out;
  };
  FitOptions opt;  // defaults: 5% steps, few iterations
  const FitResult r = fit_bounded_log({{"a", 250, 10, 1e4}}, 2, f, opt);
  EXPECT_LT(r.cost, 0.1 * r.cost_start);
  EXPECT_NEAR(r.params[0], 1000, 100);
  EXPECT_LE(r.iterations, opt.max_iterations);
}

TEST(CalibrateMetricTest, SummaryPaths) {
  const Json s = {{"throughput", 123.0},
                  {"latency_ns", {{"p50", 10}, {"p99.9", 99}}},
                  {"cpu", {{"cpu_us_per_op", 4.5}, {"busy_pct", 50}}},
                  {"name", "x"}};
  double v = 0;
  EXPECT_TRUE(summary_metric(s, "throughput", &v));
  EXPECT_EQ(v, 123.0);
  EXPECT_TRUE(summary_metric(s, "latency_p99.9", &v));
  EXPECT_EQ(v, 99.0);
  EXPECT_TRUE(summary_metric(s, "latency_ns.p50", &v));
  EXPECT_EQ(v, 10.0);
  EXPECT_TRUE(summary_metric(s, "cpu_us_per_op", &v));
  EXPECT_EQ(v, 4.5);
  EXPECT_TRUE(summary_metric(s, "cpu.busy_pct", &v));
  EXPECT_EQ(v, 50.0);
  EXPECT_FALSE(summary_metric(s, "latency_p42", &v));
  EXPECT_FALSE(summary_metric(s, "name", &v));  // not a number
  EXPECT_FALSE(summary_metric(s, "cpu", &v));   // an object
}

// The targets file through fields(): defaults, both override forms, and each check with the JSON
// pointer it names.
Json minimal_targets() {
  return Json::parse(R"({"params": {"rx_skb_ns": {"min": 100, "max": 4000}},
                         "targets": [{"scenario": "a.json", "metric": "throughput", "measured": 2e6}]})");
}

std::string targets_error(const Json& doc) {
  try {
    (void)parse_targets_doc(doc);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(CalibrateTargetsTest, DefaultsAndOverrides) {
  Json d = minimal_targets();
  TargetsDoc t = parse_targets_doc(d);
  EXPECT_EQ(t.seeds, std::vector<std::int64_t>{1});
  EXPECT_EQ(t.max_iterations, 6);
  EXPECT_EQ(t.fd_step, 0.05);
  ASSERT_EQ(t.targets.size(), 1U);
  EXPECT_EQ(t.targets[0].weight, 1.0);
  EXPECT_TRUE(t.targets[0].fit);
  EXPECT_TRUE(t.targets[0].baseline.is_null());
  EXPECT_TRUE(override_sets(t.sets).empty());
  // The start of a parameter the file leaves open is its documented default (costs.hpp).
  const std::vector<FitBounds> b = fit_bounds(t.params);
  ASSERT_EQ(b.size(), 1U);
  EXPECT_EQ(b[0].name, "rx_skb_ns");
  EXPECT_EQ(b[0].start, static_cast<double>(CostParams{}.rx_skb_ns));
  EXPECT_EQ(b[0].min, 100.0);
  EXPECT_EQ(b[0].max, 4000.0);
  EXPECT_TRUE(b[0].integral);

  d["sets"] = Json::parse(R"({"duration_s": 0.05})");
  d["targets"][0]["overrides"] = Json::parse(R"(["workload.params.num_flows=8"])");
  d["targets"][0]["baseline"] = Json::parse(R"({"scenario": "b.json"})");
  d["targets"][0]["measured"] = 0;  // a relative change may be zero
  t = parse_targets_doc(d);
  EXPECT_EQ(override_sets(t.sets), std::vector<std::string>{"duration_s=0.05"});
  EXPECT_EQ(override_sets(t.targets[0].overrides), std::vector<std::string>{"workload.params.num_flows=8"});
  EXPECT_EQ(t.targets[0].baseline["scenario"], "b.json");
}

TEST(CalibrateTargetsTest, ErrorsNameThePointer) {
  const auto with = [](const char* ptr, const Json& v) {
    Json d = minimal_targets();
    d[Json::json_pointer(ptr)] = v;
    return targets_error(d);
  };
  const auto without = [](const char* key) {
    Json d = minimal_targets();
    d.erase(key);
    return targets_error(d);
  };
  EXPECT_NE(with("/targets/0/metirc", "x").find("/targets/0/metirc: unknown key"), std::string::npos);
  EXPECT_NE(with("/params/rx_skb_nss", Json::parse(R"({"min": 1, "max": 2})")).find("unknown cost parameter"),
            std::string::npos);
  EXPECT_NE(with("/params/rx_skb_ns/min", 0).find("/params/rx_skb_ns/min: expected > 0"), std::string::npos);
  EXPECT_NE(with("/params/rx_skb_ns/max", 50).find("/params/rx_skb_ns/max: expected > min"), std::string::npos);
  EXPECT_NE(with("/params/rx_skb_ns/start", 5000).find("outside [min, max]"), std::string::npos);
  EXPECT_NE(with("/targets/0/weight", -1).find("/targets/0/weight"), std::string::npos);
  EXPECT_NE(with("/targets/0/measured", 0).find("/targets/0/measured: expected a non-zero"), std::string::npos);
  EXPECT_NE(with("/targets/0/overrides", 3).find("/targets/0/overrides: expected an object"), std::string::npos);
  EXPECT_NE(with("/targets/0/overrides", Json::parse(R"(["x"])")).find("/targets/0/overrides/0: expected path=value"),
            std::string::npos);
  EXPECT_NE(with("/targets/0/baseline", Json::object()).find("/targets/0/baseline/scenario: missing"),
            std::string::npos);
  EXPECT_NE(with("/fd_step", 1).find("/fd_step: expected a log step in (0, 1)"), std::string::npos);
  EXPECT_NE(with("/seeds", Json::array()).find("/seeds: expected a non-empty"), std::string::npos);
  EXPECT_NE(with("/seeds", Json::parse("[-1]")).find("/seeds/0"), std::string::npos);
  EXPECT_NE(with("/targets", Json::array()).find("/targets: expected a non-empty"), std::string::npos);
  EXPECT_NE(without("params").find("/params: missing"), std::string::npos);
  EXPECT_NE(without("targets").find("/targets: missing"), std::string::npos);
  Json d = minimal_targets();
  d["targets"][0].erase("metric");
  EXPECT_NE(targets_error(d).find("/targets/0/metric: missing"), std::string::npos);
  d = minimal_targets();
  d["targets"][0].erase("measured");
  EXPECT_NE(targets_error(d).find("/targets/0/measured: missing"), std::string::npos);
}

TEST(CalibrateTargetsTest, SchemaRequiresWhatTheParserRequires) {
  const Json s = targets_schema();
  EXPECT_EQ(s["required"], Json::parse(R"(["params", "targets"])"));
  EXPECT_EQ(s["properties"]["targets"]["items"]["required"], Json::parse(R"(["scenario", "metric", "measured"])"));
  EXPECT_FALSE(s["properties"]["targets"]["items"]["additionalProperties"].get<bool>());
}

}  // namespace
}  // namespace napisim::calibrate
