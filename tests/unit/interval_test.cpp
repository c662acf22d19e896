// Interval reports (run --interval, neper -I, sar): the intervals tile the measured window, add up
// to the run's figures, and a run-time change shows as a step.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/params/json_util.hpp"
#include "sim/scenario/simulation.hpp"

namespace napisim {
namespace {

Json run_with_intervals(const std::vector<std::string>& sets, Nanos interval) {
  Json doc = default_scenario();
  apply_overrides(doc, sets);
  const Scenario s = parse_scenario(doc, ".");
  Simulation sim(s, Simulation::standalone_paths(s));
  sim.set_interval(interval);
  sim.run_standalone();
  return sim.result(Json::object());
}

// 25 ms measured in 10 ms steps: [5, 15), [15, 25), and the shorter [25, 30) ms. Transactions and
// CPU time of the intervals add up to the run's; intervals change nothing in the run itself.
TEST(IntervalTest, IntervalsTileTheWindowAndAddUpToTheRun) {
  const std::vector<std::string> sets = {"warmup_s=0.005", "duration_s=0.025"};
  const Json r = run_with_intervals(sets, ms(10));
  const Json& iv = r.at("intervals");
  ASSERT_EQ(iv.size(), 3u);
  const std::vector<std::pair<double, double>> want = {{0.005, 0.015}, {0.015, 0.025}, {0.025, 0.030}};
  double transactions = 0, busy_cpu_s = 0, client_busy_cpu_s = 0;
  for (std::size_t i = 0; i < iv.size(); ++i) {
    EXPECT_NEAR(iv[i].at("t_start_s").get<double>(), want[i].first, 1e-12);
    EXPECT_NEAR(iv[i].at("t_end_s").get<double>(), want[i].second, 1e-12);
    const double len = want[i].second - want[i].first;
    transactions += iv[i].at("transactions").get<double>();
    EXPECT_NEAR(iv[i].at("throughput").get<double>(), iv[i].at("transactions").get<double>() / len, 1e-6);
    EXPECT_EQ(iv[i].at("latency_ns").at("count").get<double>(), iv[i].at("transactions").get<double>());
    busy_cpu_s += iv[i].at("cpu").at("busy_cpus").get<double>() * len;
    client_busy_cpu_s += iv[i].at("clients").at("client0").at("cpu").at("busy_cpus").get<double>() * len;
  }
  const Json& sum = r.at("summary");
  EXPECT_EQ(transactions, sum.at("transactions").get<double>());
  EXPECT_NEAR(busy_cpu_s, sum.at("cpu").at("busy_cpus").get<double>() * 0.025, 1e-9);
  EXPECT_NEAR(client_busy_cpu_s, r.at("clients").at("client0").at("cpu").at("busy_cpus").get<double>() * 0.025, 1e-9);
  // The same run without intervals: the same fingerprint.
  EXPECT_EQ(run_with_intervals(sets, 0).at("fingerprint"), r.at("fingerprint"));
  EXPECT_FALSE(run_with_intervals(sets, 0).contains("intervals"));
}

// A run-time switch from softirq to threaded NAPI at 20 ms: NET_RX is softirq time in the
// intervals before it and kthread time after it (softirq keeps only what is not NET_RX polling).
TEST(IntervalTest, ARunTimeChangeShowsAsAStep) {
  const Json r = run_with_intervals(
      {"warmup_s=0.005", "duration_s=0.03", R"(changes=[{"at_s": 0.02, "model": {"name": "napi_threaded"}}])"}, ms(5));
  const Json& iv = r.at("intervals");
  ASSERT_EQ(iv.size(), 6u);
  for (std::size_t i = 0; i < iv.size(); ++i) {
    const Json& by = iv[i].at("cpu").at("by_class_pct");
    const bool after = iv[i].at("t_start_s").get<double>() >= 0.02 - 1e-12;
    SCOPED_TRACE("interval " + std::to_string(i));
    if (after) {
      EXPECT_GT(by.at("kthread").get<double>(), 1.0);
      EXPECT_LT(by.at("softirq").get<double>(), 0.01 * by.at("kthread").get<double>());
    } else {
      EXPECT_GT(by.at("softirq").get<double>(), 1.0);
      EXPECT_EQ(by.at("kthread").get<double>(), 0.0);
    }
  }
}

}  // namespace
}  // namespace napisim
