// napisim tune: the search on a made-up response surface, and the host commands parsed back and
// checked against the configuration they came from.
#include "sim/tune/tune.hpp"

#include <regex>
#include <set>

#include <gtest/gtest.h>

#include "sim/core/error.hpp"
#include "sim/hostimport/host_import.hpp"
#include "sim/params/json_util.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/simgrid/run.hpp"

namespace napisim::tune {
namespace {

Json resolved_of(const std::string& name) {
  RunOptions ro;
  const std::string path = find_scenario_file(name);
  ro.base_dir = path.substr(0, path.rfind('/'));
  return validate_scenario(load_json_file(path), ro);
}

Json imported_two_socket() {
  hostimport::ImportOptions o;
  o.from_dir = std::string(NAPISIM_SOURCE_DIR) + "/tests/hostimport/two_socket";
  RunOptions ro;
  return validate_scenario(hostimport::import_host(o).scenario, ro);
}

// A made-up surface: latency and CPU by strategy, a little seed noise, and every batch's seeds
// recorded to check common random numbers.
struct Fake {
  std::vector<std::set<std::int64_t>> batch_seeds;
  int runs = 0;
  std::map<std::string, std::map<std::string, double>> operator()(const std::vector<Job>& jobs,
                                                                  const std::vector<std::string>& metrics) {
    std::set<std::int64_t> seeds;
    std::map<std::string, std::map<std::string, double>> out;
    for (const Job& j : jobs) {
      seeds.insert(j.seed);
      const std::string models = j.sets.contains("/models") ? j.sets["/models"].dump() : "current";
      double lat = 400, cpu = 6;  // current, softirq
      if (models.find("irq_suspend") != std::string::npos)
        lat = 150, cpu = 6.2;
      else if (models.find("epoll_busy_poll") != std::string::npos)
        lat = 110, cpu = 8;
      else if (models.find("napi_defer_irq") != std::string::npos)
        lat = 300, cpu = 5.5;
      else if (models.find("napi_threaded") != std::string::npos)
        lat = 500, cpu = 6.1;
      else if (models.find("rps_rfs") != std::string::npos)
        lat = 450, cpu = 7;
      else if (models.find("threaded_busy_poll") != std::string::npos)
        lat = 120, cpu = 9;
      if (j.sets.contains("/workload/params/qps")) lat *= j.sets["/workload/params/qps"].get<double>() / 600000.0;
      for (const std::string& m : metrics)
        out[j.key][m] = m == "/cpu/busy_cpus" ? cpu
                        : m == "/throughput"  ? 600000
                                              : (lat + 0.5 * static_cast<double>(j.seed)) * 1e3;
      ++runs;
    }
    batch_seeds.push_back(seeds);
    return out;
  }
};

TEST(Tune, SearchFindsTheFrontAndRecommendsWithinTheBudget) {
  const Json r = resolved_of("karsten2024/base");
  Fake fake;
  TuneOptions o;
  o.cpu_budget = "10%";  // 6.4 of 64 CPUs
  const Json rep = run_tune(r, o, std::ref(fake));
  std::vector<std::string> front;
  for (const Json& f : rep["front"])
    front.push_back(f["strategy"].get<std::string>());
  // By CPU: deferral (5.5), suspension (6.2), epoll busy polling (8); the rest are dominated.
  EXPECT_EQ(std::set<std::string>(front.begin(), front.end()),
            (std::set<std::string>{"defer", "suspend", "busy_poll"}));
  EXPECT_EQ(rep["front"][0]["strategy"], "defer");
  EXPECT_EQ(rep["recommended"]["strategy"], "suspend");  // the lowest latency under 6.4 CPUs
  EXPECT_NEAR(rep["recommended"]["change_vs_current_us"]["mean"].get<double>(), -250, 1e-9);
  EXPECT_EQ(rep["recommended"]["change_vs_current_us"]["ci95"].get<double>(), 0);  // paired: the noise cancels
  // Successive halving: 1, 2 then 5 seeds; every batch's jobs share theirs (common random numbers).
  ASSERT_EQ(rep["rungs"].size(), 3U);
  EXPECT_EQ(rep["rungs"][0]["seeds"], Json::parse("[1]"));
  EXPECT_EQ(rep["rungs"][1]["seeds"], Json::parse("[1, 2]"));
  EXPECT_EQ(rep["rungs"][2]["seeds"], Json::parse("[1, 2, 3, 4, 5]"));
  EXPECT_LT(rep["rungs"][1]["candidates"].size(), rep["rungs"][0]["candidates"].size());
  EXPECT_EQ(fake.batch_seeds[0], (std::set<std::int64_t>{1}));
  EXPECT_EQ(fake.batch_seeds[2], (std::set<std::int64_t>{1, 2, 3, 4, 5}));
  // What if: 0.5x and 2x of mutilate's qps.
  ASSERT_EQ(rep["what_if"].size(), 2U);
  EXPECT_EQ(rep["what_if"][1]["scaling"], "qps 6e+05 -> 1.2e+06");
  // The same results give the same report, byte for byte.
  Fake again;
  EXPECT_EQ(run_tune(r, o, std::ref(again)).dump(), rep.dump());
}

TEST(Tune, BadOptionsNameTheOption) {
  const Json r = resolved_of("karsten2024/base");
  Fake fake;
  auto err = [&](TuneOptions o) {
    try {
      run_tune(r, o, std::ref(fake));
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  TuneOptions o;
  o.objective = "p42";
  EXPECT_NE(err(o).find("--objective: expected p50, p90, p99, p99.9 or mean"), std::string::npos);
  o = {};
  o.cpu_budget = "150%";
  EXPECT_NE(err(o).find("--cpu-budget: expected a share of the host's 64 CPUs"), std::string::npos);
  o = {};
  o.cpu_budget = "65";
  EXPECT_NE(err(o).find("--cpu-budget"), std::string::npos);
  o = {};
  o.strategies = {"turbo"};
  EXPECT_NE(err(o).find("--strategies: unknown strategy \"turbo\""), std::string::npos);
  o = {};
  o.seeds = {1, 1};
  EXPECT_NE(err(o).find("--seeds: expected distinct seeds"), std::string::npos);
  EXPECT_EQ(fake.runs, 0);  // nothing ran
}

// The commands parsed back: each must be one of the forms host_commands() writes, its value the
// configuration's; every knob the search moves must be stated.
// `config` is resolved (every model parameter spelled out), so a default host_commands() assumes
// for a parameter a candidate leaves out is checked against napisim's own.
void check_commands(const std::vector<std::string>& cmds, const Json& config, const std::string& id) {
  SCOPED_TRACE(id);
  const Json& net = config["kernel"]["net"];
  std::map<std::string, std::string> seen;  // what was stated -> value
  std::smatch m;
  for (const std::string& c : cmds) {
    if (std::regex_match(c, m, std::regex(R"(sysctl -w net\.core\.(\w+)=(\d+))"))) {
      seen["sysctl " + m[1].str()] = m[2];
    } else if (std::regex_match(
                   c, m, std::regex(R"(ethtool -C (\S+) adaptive-rx (on|off) rx-usecs (\d+) rx-frames (\d+))"))) {
      seen["ethtool " + m[1].str()] = m[2].str() + " " + m[3].str() + " " + m[4].str();
    } else if (std::regex_match(
                   c, m,
                   std::regex(
                       R"(echo (\d+) > /sys/class/net/(\S+)/(threaded|napi_defer_hard_irqs|gro_flush_timeout))"))) {
      seen[m[3].str() + " " + m[2].str()] = m[1];
    } else if (
        std::regex_match(
            c, m,
            std::regex(
                R"(for q in /sys/class/net/(\S+)/queues/rx-\*; do echo ([0-9a-f,]+) > \$q/(rps_cpus|rps_flow_cnt); done)"))) {
      seen[m[3].str() + " " + m[1].str()] = m[2];
    } else if (
        std::regex_match(
            c, m,
            std::regex(
                R"(for p in \$\(pgrep '\^napi/(\S+)-'\); do (chrt -f -p|renice -n|taskset -pc) (\S+)( -p)? \$p; done)"))) {
      seen[m[2].str() + " " + m[1].str()] = m[3];
    } else if (c.find("napi-set") != std::string::npos) {
      // std::regex recurses per character: long lines are taken apart with find().
      const std::size_t a = c.find("/sys/class/net/") + 15, b = c.find("/ifindex");
      const std::string dev = c.substr(a, b - a);
      const std::string key = "\\\"irq-suspend-timeout\\\": ";
      if (const std::size_t k = c.find(key); k != std::string::npos)
        seen["irq-suspend-timeout " + dev] = c.substr(k + key.size(), c.find('}', k) - k - key.size());
      else if (c.find("\\\"threaded\\\": \\\"busy-poll\\\"") != std::string::npos)
        seen["busy-poll " + dev] = "1";
      else
        ADD_FAILURE() << "a napi-set of no known form: " << c;
    } else if (
        const std::string head = c.substr(0, c.find('}') + 1); std::regex_match(
            head, m,
            std::regex(
                R"(# application: ioctl\(epfd, EPIOCSPARAMS, \{busy_poll_usecs = (\d+), busy_poll_budget = (\d+), prefer_busy_poll = ([01])\})"))) {
      seen["EPIOCSPARAMS"] = m[1].str() + " " + m[2].str() + " " + m[3].str();
    } else if (c.rfind("# pin each napi/", 0) == 0) {
      seen["pin comment"] = "1";
    } else {
      ADD_FAILURE() << "a command of no known form: " << c;
    }
  }
  EXPECT_EQ(seen["sysctl netdev_budget"], std::to_string(net["netdev_budget"].get<std::int64_t>()));
  EXPECT_EQ(seen["sysctl busy_poll"], std::to_string(net["busy_poll"].get<std::int64_t>()));
  EXPECT_EQ(seen["sysctl busy_read"], std::to_string(net["busy_read"].get<std::int64_t>()));
  EXPECT_EQ(seen["sysctl dev_weight"], std::to_string(net["dev_weight"].get<std::int64_t>()));
  const std::int64_t usecs = net["netdev_budget_usecs"].get<std::int64_t>();
  EXPECT_EQ(seen["sysctl netdev_budget_usecs"],
            std::to_string(usecs ? usecs : 2000000 / config["kernel"]["hz"].get<std::int64_t>()));
  std::int64_t entries = 0;
  for (std::size_t i = 0; i < config["nics"].size(); ++i) {
    const Json& nic = config["nics"][i];
    const std::string dev = nic["name"].get<std::string>();
    EXPECT_EQ(seen["ethtool " + dev], std::string(nic["adaptive_rx"].get<bool>() ? "on" : "off") + " " +
                                          std::to_string(nic["rx_usecs"].get<std::int64_t>()) + " " +
                                          std::to_string(nic["rx_frames"].get<std::int64_t>()));
    const Json *threaded = nullptr, *defer = nullptr, *suspend = nullptr, *rps = nullptr, *tbp = nullptr;
    for (const Json& mo : config["models"]) {
      const Json& ns = mo["nics"];
      if (!ns.empty() && std::find(ns.begin(), ns.end(), Json(i)) == ns.end()) continue;
      const std::string n = mo["name"].get<std::string>();
      if (n == "napi_threaded") threaded = &mo;
      if (n == "napi_defer_irq") defer = &mo;
      if (n == "irq_suspend") suspend = &mo;
      if (n == "rps_rfs") rps = &mo;
      if (n == "threaded_busy_poll") tbp = &mo;
    }
    EXPECT_EQ(seen["threaded " + dev], threaded ? "1" : "0");
    EXPECT_EQ(seen["napi_defer_hard_irqs " + dev],
              std::to_string(defer ? defer->at("params")["defer_hard_irqs"].get<std::int64_t>()
                                   : nic["napi_defer_hard_irqs"].get<std::int64_t>()));
    // gro_flush_timeout is in ns in sysfs as in napisim.
    EXPECT_EQ(seen["gro_flush_timeout " + dev],
              std::to_string(defer ? defer->at("params")["gro_flush_timeout_ns"].get<std::int64_t>()
                                   : nic["gro_flush_timeout_ns"].get<std::int64_t>()));
    if (threaded) {
      const Json& p = threaded->at("params");
      if (p["policy"] == "fifo")
        EXPECT_EQ(seen["chrt -f -p " + dev], std::to_string(p["rt_priority"].get<std::int64_t>()));
      else
        EXPECT_EQ(seen["renice -n " + dev], std::to_string(p["nice"].get<std::int64_t>()));
      if (!p["cpumask"].get<std::string>().empty()) {
        EXPECT_EQ(seen["taskset -pc " + dev], p["cpumask"].get<std::string>());
      }
    }
    if (suspend) {
      EXPECT_EQ(seen["irq-suspend-timeout " + dev],
                std::to_string(suspend->at("params")["irq_suspend_timeout_ns"].get<std::int64_t>()));
    }
    if (tbp) {
      EXPECT_EQ(seen["busy-poll " + dev], "1");
    }
    // rps_cpus as the kernel's hex mask: its bits must be the model's cpulist.
    const std::string mask = seen["rps_cpus " + dev];
    std::vector<int> bits;
    int bit = 0;
    for (std::size_t k = mask.size(); k-- > 0;) {
      if (mask[k] == ',') continue;
      const int v = std::stoi(std::string(1, mask[k]), nullptr, 16);
      for (int b = 0; b < 4; ++b)
        if (v & (1 << b)) bits.push_back(bit + b);
      bit += 4;
    }
    if (rps) {
      const std::string want = rps->at("params")["rps_cpus"].get<std::string>();
      const CpuMask cm = CpuMask::parse(want, 8192, "rps_cpus");
      std::vector<int> expect;
      for (int c = cm.first(); c >= 0; c = cm.next(c))
        expect.push_back(c);
      EXPECT_EQ(bits, expect);
      entries = std::max(entries, rps->at("params")["rps_sock_flow_entries"].get<std::int64_t>());
    } else {
      EXPECT_TRUE(bits.empty());
    }
  }
  EXPECT_EQ(seen["sysctl rps_sock_flow_entries"], std::to_string(entries));
  for (const Json& mo : config["models"]) {
    if (mo["name"] == "epoll_busy_poll") {
      EXPECT_EQ(seen["EPIOCSPARAMS"], std::to_string(mo["params"]["busy_poll_usecs"].get<std::int64_t>()) + " " +
                                          std::to_string(mo["params"]["busy_poll_budget"].get<std::int64_t>()) + " " +
                                          (mo["params"]["prefer_busy_poll"].get<bool>() ? "1" : "0"));
    }
  }
}

TEST(Tune, CommandsMatchTheConfigurationTheyCameFrom) {
  for (const Json& r : {resolved_of("karsten2024/base"), resolved_of("karsten2024/suspend20"), imported_two_socket()})
    for (const Json& c : candidates(r, {})) {
      // The configuration is one napisim runs (the overrides validate as --set would).
      const Json raw = apply_sets(r, c["sets"]);
      RunOptions ro;
      const Json config = validate_scenario(raw, ro);
      check_commands(host_commands(config), config, r["name"].get<std::string>() + " " + c["id"].get<std::string>());
    }
}

}  // namespace
}  // namespace napisim::tune
