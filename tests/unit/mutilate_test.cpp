// The mutilate workload (sim/workloads/mutilate.hpp): mutilate's generators against their closed
// forms, LogHistogramSampler percentiles on hand-computed samples, depth-1 semantics, the open loop
// past saturation, peak mode, determinism, bad parameters, and NUMA-local vs remote NIC placement
// (sim/hw/nic.hpp numa_remote_ns) through the whole simulator (Simulation driven standalone).
#include "sim/workloads/mutilate.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/core/error.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/simulation.hpp"

namespace napisim {
namespace {

using mutilate::Generator;
using mutilate::LogHistogram;

std::vector<double> draw(const Generator& g, int n, std::uint64_t seed = 7) {
  Rng r(seed);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (double& x : v)
    x = g.generate(r);
  std::sort(v.begin(), v.end());
  return v;
}
double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v)
    s += x;
  return s / static_cast<double>(v.size());
}
double quantile(const std::vector<double>& sorted, double p) {
  return sorted[static_cast<std::size_t>(p * static_cast<double>(sorted.size()))];
}

// ---- generators (Generator.h / Generator.cc) ----

TEST(MutilateGenerator, FbIaScaledToTheRateMatchesGeneralizedParetoClosedForm) {
  // GPareto(0, s, k) with set_lambda(l): s = (1-k)/l, mean 1/l, quantile s((1-p)^-k - 1)/k.
  Generator g = Generator::parse("fb_ia", "/x");
  const double lambda = 50000, k = 0.154971, s = (1 - k) / lambda;
  ASSERT_TRUE(g.set_lambda(lambda));
  EXPECT_NEAR(g.b(), s, 1e-15);
  const auto v = draw(g, 400000);
  EXPECT_NEAR(mean(v), 1 / lambda, 0.02 / lambda);
  for (double p : {0.5, 0.9, 0.99}) {
    const double q = s * (std::pow(1 - p, -k) - 1) / k;
    EXPECT_NEAR(quantile(v, p), q, 0.02 * q) << "p=" << p;
  }
}

TEST(MutilateGenerator, FbKeyIsTheGevOfTheCoverPaper) {
  // G = mu + sigma (E^-xi - 1)/xi with E ~ Exp(1): the GEV; median at E = ln 2, mean via Gamma(1-xi).
  const Generator g = Generator::parse("fb_key", "/x");
  const double mu = 30.7984, sigma = 8.20449, xi = 0.078688;
  const auto v = draw(g, 400000);
  EXPECT_NEAR(quantile(v, 0.5), mu + sigma * (std::pow(std::log(2.0), -xi) - 1) / xi, 0.1);  // 33.85
  EXPECT_NEAR(mean(v), mu + sigma * (std::tgamma(1 - xi) - 1) / xi, 0.1);                    // 36.22
  EXPECT_FALSE(Generator::parse("fb_key", "/x").set_lambda(1.0));  // GEV has no set_lambda in mutilate
}

TEST(MutilateGenerator, FbValueIsTheDiscreteTableThenTheParetoTail) {
  const Generator g = Generator::parse("fb_value", "/x");
  const auto v = draw(g, 400000);
  const double p2 = static_cast<double>(std::count(v.begin(), v.end(), 2.0)) / static_cast<double>(v.size());
  EXPECT_NEAR(p2, 0.17820, 0.003);
  double table = 0, table_mean = 0;
  for (const auto& pv : Generator::kFbValueTable) {
    table += pv[0];
    table_mean += pv[0] * pv[1];
  }
  EXPECT_NEAR(table, 0.44155, 1e-9);
  const double k = 0.348238, tail_mean = 15 + 214.476 / (1 - k);  // 344.07
  std::vector<double> tail;
  for (double x : v)
    if (x >= 15) tail.push_back(x);
  EXPECT_NEAR(static_cast<double>(tail.size()) / static_cast<double>(v.size()), 1 - table, 0.003);
  EXPECT_NEAR(quantile(tail, 0.5), 15 + 214.476 * (std::pow(2.0, k) - 1) / k, 3.0);  // 183.1
  EXPECT_NEAR(mean(v), table_mean + (1 - table) * tail_mean, 0.03 * 194.4);
}

TEST(MutilateGenerator, SpecsAndKeyLengths) {
  EXPECT_EQ(Generator::parse("30", "/x").generate(0.3), 30.0);
  const Generator e = Generator::parse("exponential", "/x");
  EXPECT_EQ(e.kind(), Generator::Kind::kExponential);
  Generator ex = e;
  ex.set_lambda(1000);
  EXPECT_NEAR(mean(draw(ex, 200000)), 1e-3, 2e-5);
  EXPECT_EQ(Generator::parse("pareto:1,2,0.5", "/x").generate(0.25), 1 + 2 * (std::pow(0.25, -0.5) - 1) / 0.5);
  // util.cc fnv_64 (FNV-1a over the 8 bytes of the index).
  EXPECT_EQ(mutilate::fnv_64(0), 0xa8c7f832281a39c5ULL);
  EXPECT_EQ(mutilate::fnv_64(1), 0x89cd31291d2aefa4ULL);
  // KeyGenerator: max(round(G), digits of records).
  EXPECT_EQ(mutilate::key_length(Generator::fixed(30), 5, 10000), 30);
  EXPECT_EQ(mutilate::key_length(Generator::fixed(2), 5, 10000), 5);
  EXPECT_EQ(mutilate::key_length(Generator::fixed(1000), 5, 10000), 249);
  for (const char* bad : {"", "foo", "pareto:1,2,0", "gev:1,2", "normal:1", "-3", "fixed:x"}) {
    try {
      Generator::parse(bad, "/workload/params/keysize");
      ADD_FAILURE() << "accepted \"" << bad << "\"";
    } catch (const ConfigError& err) {
      EXPECT_EQ(err.path(), "/workload/params/keysize");
    }
  }
}

// ---- LogHistogramSampler and ConnectionStats::print_stats ----

TEST(MutilateHistogram, PercentilesAsMutilateComputesThem) {
  // Bins floor(log(s)/log(1.1)): 10 -> 24, 20 -> 31, 30 -> 35, 40 -> 38.
  LogHistogram h;
  for (double s : {10.0, 20.0, 30.0, 40.0})
    h.sample(s);
  EXPECT_EQ(h.total(), 4u);
  EXPECT_DOUBLE_EQ(h.average(), 25.0);
  EXPECT_NEAR(h.stddev(), std::sqrt(750.0 - 625.0), 1e-9);
  EXPECT_NEAR(h.get_nth(0), std::pow(1.1, 24), 1e-9);  // "min": lower edge of the first bin (9.85)
  // 50th: target 2; cumulative 1, 2, 3: the first n > 2 is bin 35, left 0 -> its lower edge.
  EXPECT_NEAR(h.get_nth(50), std::pow(1.1, 35), 1e-9);  // 28.10
  // 99th: target 3.96 in bin 38 (cumulative 3 before it): 1.1^38 + 0.96 (1.1^39 - 1.1^38).
  EXPECT_NEAR(h.get_nth(99), std::pow(1.1, 38) + 0.96 * (std::pow(1.1, 39) - std::pow(1.1, 38)), 1e-9);
  // Below 1 us lands in bin 0; the last bin is the overflow.
  LogHistogram z;
  z.sample(0.0);
  z.sample(0.5);
  EXPECT_NEAR(z.get_nth(50), 1.0 + 0.5 * 0.1, 1e-12);  // target 1 of 2 in bin 0
  LogHistogram empty;
  EXPECT_EQ(empty.get_nth(99), 0.0);
}

// ---- through the whole simulator ----

Json kv_scenario(const Json& params) {
  Json doc = {
      {"seed", 3},
      {"warmup_s", 0.005},
      {"duration_s", 0.02},
      {"topology", {{"numa_nodes", 1}, {"llcs_per_node", 1}, {"cores_per_llc", 4}, {"threads_per_core", 1}}},
      {"nics", Json::array({{{"queues", 4}, {"irq_affinity", "0-3"}}})},
      {"platform", {{"clients", Json::array({{{"name", "c"}, {"link_gbps", 100}, {"link_latency_ns", 5000}}})}}},
      {"workload", {{"type", "mutilate"}, {"params", params}}}};
  return doc;
}

struct KvRun {
  std::unique_ptr<Simulation> sim;
  Json r;
  const Json& m() const { return r["summary"]["mutilate"]; }
  const Json& cons() const { return r["conservation"]; }
};

KvRun run(const Json& doc) {
  const Scenario s = parse_scenario(doc, ".");
  const std::vector<ClientPath> paths = Simulation::standalone_paths(s);
  KvRun out;
  out.sim = std::make_unique<Simulation>(s, paths);
  out.sim->run_standalone();
  out.r = out.sim->result(Json::object());
  const Json& c = out.r["conservation"];
  EXPECT_EQ(c["sent"].get<std::uint64_t>(), c["answered"].get<std::uint64_t>() + c["in_flight"].get<std::uint64_t>());
  return out;
}

TEST(MutilateWorkload, BelowSaturationAchievesTheTargetOnSchedule) {
  const KvRun r = run(kv_scenario({{"qps", 20000},
                                   {"threads", 2},
                                   {"connections", 16},
                                   {"server_threads", 4},
                                   {"keysize", "fb_key"},
                                   {"valuesize", "fb_value"},
                                   {"iadist", "fb_ia"}}));
  EXPECT_NEAR(r.m()["qps"].get<double>(), 20000, 0.1 * 20000);
  EXPECT_LT(r.m()["schedule_slip_us_avg"].get<double>(), 20.0);
  EXPECT_EQ(r.cons()["max_outstanding_per_connection"].get<int>(), 1);
  EXPECT_GT(r.m()["read"]["avg"].get<double>(), 10.0);  // two 5 us wire legs and both client stacks
  EXPECT_EQ(r.m()["update"]["count"].get<int>(), 0);
  EXPECT_EQ(r.r["summary"]["transactions"].get<std::uint64_t>(), r.m()["gets"].get<std::uint64_t>());
}

TEST(MutilateWorkload, OpenLoopKeepsOfferingLoadPastSaturation) {
  // One worker at 20 us per get: capacity < 50k/s, target 200k/s on 64 depth-1 connections. The
  // schedule runs on regardless: every connection always has its one request out (reissued at
  // once on each response), the schedule slips further and further, and latency is Little's law
  // over 64 requests in the system (mutilate times from the issue, not from the schedule).
  const Json p = {{"qps", 200000}, {"threads", 4}, {"connections", 16}, {"server_threads", 1}, {"get_ns", 20000}};
  const KvRun r = run(kv_scenario(p));
  const double qps = r.m()["qps"].get<double>();
  EXPECT_LT(qps, 50000);
  EXPECT_GT(qps, 30000);
  EXPECT_EQ(r.cons()["in_flight"].get<int>(), 64);
  EXPECT_EQ(r.cons()["max_outstanding_per_connection"].get<int>(), 1);
  EXPECT_GT(r.m()["schedule_slip_us_avg"].get<double>(), 2000.0);
  EXPECT_NEAR(r.m()["read"]["avg"].get<double>(), 64 / qps * 1e6, 0.1 * 64 / qps * 1e6);
  // A longer run is further behind its schedule: the load offered does not adapt to the server.
  Json longer = kv_scenario(p);
  longer["duration_s"] = 0.04;
  EXPECT_GT(run(longer).m()["schedule_slip_us_avg"].get<double>(), 1.5 * r.m()["schedule_slip_us_avg"].get<double>());
}

TEST(MutilateWorkload, DepthBoundsOutstandingRequestsAndPeakModeKeepsThemFull) {
  // qps 0 (peak): every connection keeps exactly `depth` requests outstanding.
  for (int depth : {1, 4}) {
    const KvRun r = run(kv_scenario(
        {{"qps", 0}, {"threads", 1}, {"connections", 8}, {"depth", depth}, {"server_threads", 2}, {"update", 0.1}}));
    EXPECT_EQ(r.cons()["max_outstanding_per_connection"].get<int>(), depth);
    // At the run's end a client thread may have completed responses whose successors it has not
    // issued yet (it reads a whole batch of events before client_drive() issues): at most one
    // slot per connection is empty.
    EXPECT_LE(r.cons()["in_flight"].get<int>(), 8 * depth);
    EXPECT_GE(r.cons()["in_flight"].get<int>(), 8 * (depth - 1));
    EXPECT_GT(r.m()["sets"].get<int>(), 0);
    EXPECT_GT(r.m()["update"]["count"].get<int>(), 0);
    EXPECT_EQ(r.m()["op_q"]["p99"].get<double>() <= 1.1 * depth + 1e-9, true);
  }
}

TEST(MutilateWorkload, SameSeedSameBytes) {
  const Json doc = kv_scenario({{"qps", 50000},
                                {"threads", 2},
                                {"connections", 8},
                                {"keysize", "fb_key"},
                                {"valuesize", "fb_value"},
                                {"iadist", "fb_ia"},
                                {"update", 0.05}});
  EXPECT_EQ(run(doc).r.dump(), run(doc).r.dump());
  Json other = doc;
  other["seed"] = 4;
  EXPECT_NE(run(doc).r["fingerprint"], run(other).r["fingerprint"]);
}

// ---- mutilate on a Linux client host ----

/// One client thread with one depth-1 connection issuing a get every 100 us (fixed:0.0001 s),
/// memcached get_ns 10 us and event_ns 0, every kernel cost zero on both hosts and a 0-latency
/// link: what is left is the server's user work and the client's schedule.
Json linux_kv_scenario(bool blocking) {
  Json costs = params_to_json(CostParams{});
  for (auto it = costs.begin(); it != costs.end(); ++it)
    it.value() = 0;
  Json doc = kv_scenario({{"qps", 10000},
                          {"threads", 1},
                          {"connections", 1},
                          {"server_threads", 1},
                          {"iadist", "fixed:0.0001"},
                          {"get_ns", 10000},
                          {"event_ns", 0},
                          {"client_user_ns", 0},
                          {"blocking", blocking}});
  doc["costs"] = costs;
  doc["nics"][0]["rx_usecs"] = 0;
  doc["nics"][0]["rx_frames"] = 1;
  doc["platform"]["clients"][0]["link_latency_ns"] = 0;
  doc["platform"]["clients"][0]["link_gbps"] = 1e4;
  doc["nics"][0]["speed_gbps"] = 1e4;
  doc["duration_s"] = 0.05;
  return doc;
}

TEST(MutilateLinuxClient, IssuesOnScheduleWhetherItSpinsOrBlocks) {
  // Each get takes exactly the server's 10 us and leaves exactly on its 100 us schedule, whether
  // the thread spins on epoll_wait(0) (mutilate's EVLOOP_NONBLOCK) or blocks until a precise
  // timer (-B: a timerfd, no slack): 10000 gets/s, no slip. The spinning thread is never woken
  // and keeps its CPU busy; the blocking one is woken twice per get (timer, response) and idles.
  for (const bool blocking : {false, true}) {
    SCOPED_TRACE(blocking ? "blocking" : "spinning");
    const KvRun r = run(linux_kv_scenario(blocking));
    ASSERT_TRUE(r.r.contains("clients") && r.r["clients"].contains("c"));
    EXPECT_NEAR(r.m()["qps"].get<double>(), 10000, 100);
    EXPECT_EQ(r.r["summary"]["latency_ns"]["min"].get<double>(), 10000);
    EXPECT_EQ(r.r["summary"]["latency_ns"]["max"].get<double>(), 10000);
    EXPECT_EQ(r.m()["schedule_slip_us_avg"].get<double>(), 0.0);
    const Json& client = r.r["clients"]["c"];
    if (blocking) {
      EXPECT_GT(client["wakeups"].get<double>(), 0.0);
      EXPECT_LT(client["cpu"]["busy_pct"].get<double>(), 1.0);
    } else {
      EXPECT_EQ(client["wakeups"].get<double>(), 0.0);
      EXPECT_GT(client["per_cpu"][0]["busy_pct"].get<double>(), 99.0);
    }
  }
}

TEST(MutilateLinuxClient, EachPipelinedOpIsCutIntoItsOwnStages) {
  // run --explain at depth 2, peak mode (qps 0): the client issues two gets back to back, every
  // kernel cost and the wire are 0, event_ns E = 1 us, get_ns G = 4 us, client_user_ns U = 0.5 us.
  // The worker wakes for the two requests, spends E before its read(), which takes both, serves
  // them (G each) and sends both responses in one sendmsg(): one train, which the spinning client
  // reads at once. It finishes the first op, spends U, finishes the second, spends U, and issues
  // the next two.
  //   first op:  server.read E, server.process G, server.after G (the second's command);
  //              latency E + 2G = 9 us
  //   second op: server.read E, server.queue G, server.process G, client.app U (the first's
  //              parsing); latency E + 2G + U = 9.5 us
  Json doc = linux_kv_scenario(false);
  doc["workload"]["params"]["qps"] = 0;
  doc["workload"]["params"]["depth"] = 2;
  doc["workload"]["params"]["event_ns"] = 1000;
  doc["workload"]["params"]["get_ns"] = 4000;
  doc["workload"]["params"]["client_user_ns"] = 500;
  const Scenario s = parse_scenario(doc, ".");
  Simulation sim(s, Simulation::standalone_paths(s));
  sim.set_explain();
  sim.run_standalone();
  const Json r = sim.result(Json::object());
  EXPECT_EQ(r["summary"]["latency_ns"]["min"].get<double>(), 9000.0);
  EXPECT_EQ(r["summary"]["latency_ns"]["max"].get<double>(), 9500.0);
  const Json& bd = r.at("latency_breakdown");
  EXPECT_EQ(bd.at("clamped"), 0u);
  const Json& all = bd.at("bands").back();
  const auto n = all.at("requests").get<std::uint64_t>();
  ASSERT_GT(n, 100u);
  ASSERT_EQ(n % 2, 0u);  // whole pairs: the window holds the same number of first and second ops
  const std::map<std::string, double> mean = {{"server.read", 1000},
                                              {"server.queue", 2000},
                                              {"server.process", 4000},
                                              {"server.after", 2000},
                                              {"client.app", 250}};
  for (const auto& [name, ns] : all.at("stage_ns").items()) {
    const auto it = mean.find(name);
    EXPECT_DOUBLE_EQ(ns.get<double>(), it == mean.end() ? 0.0 : it->second) << name;
  }
  EXPECT_DOUBLE_EQ(all.at("latency_ns").get<double>(), 9250.0);
}

TEST(MutilateWorkload, BadParamsNameTheirPointer) {
  auto path_of = [](const Json& params) -> std::string {
    try {
      parse_scenario(kv_scenario(params), ".");
    } catch (const ConfigError& e) {
      return e.path();
    }
    return "accepted";
  };
  EXPECT_EQ(path_of({{"keysize", "zipf"}}), "/workload/params/keysize");
  EXPECT_EQ(path_of({{"valuesize", "pareto:1,2,0"}}), "/workload/params/valuesize");
  EXPECT_EQ(path_of({{"qps", 1000}, {"iadist", "fb_key"}}), "/workload/params/iadist");
  EXPECT_EQ(path_of({{"qps", 0}, {"iadist", "fb_key"}}), "accepted");  // unused without a rate, as in mutilate
  EXPECT_EQ(path_of({{"depth", 0}}), "/workload/params/depth");
  EXPECT_EQ(path_of({{"update", 1.5}}), "/workload/params/update");
  EXPECT_EQ(path_of({{"dispatch", "random"}}), "/workload/params/dispatch");
  EXPECT_EQ(path_of({{"nope", 1}}), "/workload/params/nope");
}

// ---- multi-NIC, multi-node: NUMA-local vs remote placement ----

/// Two nodes of 4 CPUs, one NIC per node with 2 queues, one client per NIC; four memcached
/// workers pinned to CPUs 0,1 (node 0) and 4,5 (node 1), connections dispatched by NAPI id, so a
/// worker shares its CPU with its queue's IRQ. `nic_nodes` says where the NICs are attached:
/// {0, 1} is NUMA-local; {1, 0} moves both NICs to the other node with every CPU unchanged.
Json numa_scenario(int nic0_node, int nic1_node, std::int64_t penalty) {
  Json doc = {
      {"seed", 5},
      {"warmup_s", 0.005},
      {"duration_s", 0.02},
      {"topology",
       {{"numa_nodes", 2},
        {"llcs_per_node", 1},
        {"cores_per_llc", 4},
        {"threads_per_core", 1},
        {"remote_node_penalty_ns", penalty}}},
      {"nics", Json::array({{{"name", "eth0"}, {"numa_node", nic0_node}, {"queues", 2}, {"irq_affinity", "0-1"}},
                            {{"name", "eth1"}, {"numa_node", nic1_node}, {"queues", 2}, {"irq_affinity", "4-5"}}})},
      {"platform", {{"clients", Json::array({{{"name", "c0"}, {"nic", 0}}, {{"name", "c1"}, {"nic", 1}}})}}},
      {"costs", {{"cost_cv", 0.0}}},
      {"workload",
       {{"type", "mutilate"},
        {"params",
         {{"qps", 40000},
          {"threads", 2},
          {"connections", 16},
          {"server_threads", 4},
          {"server_cpus", "0-1,4-5"},
          {"pin_threads", true},
          {"dispatch", "napi_id"},
          {"cpu_report_cpus", "0-1,4-5"}}}}}};
  return doc;
}

TEST(MutilateNuma, LocalPlacementCostsLessCpuPerQueryThanRemote) {
  const KvRun local = run(numa_scenario(0, 1, 500));
  const KvRun remote = run(numa_scenario(1, 0, 500));
  const double l = local.m()["cpu_ns_per_query"].get<double>();
  const double rm = remote.m()["cpu_ns_per_query"].get<double>();
  // Same arrivals, same CPUs: per query the remote case pays 1000 ns (500 x SLIT 20 / 10) for the
  // request skb the driver builds and 1000 ns for the recvmsg() copy.
  EXPECT_NEAR(local.m()["qps"].get<double>(), remote.m()["qps"].get<double>(), 0.02 * 40000);
  EXPECT_GT(rm - l, 1500.0);
  EXPECT_LT(rm - l, 3000.0);
  EXPECT_GT(remote.m()["read"]["avg"].get<double>(), local.m()["read"]["avg"].get<double>());
  // Both NICs carry traffic (one client each).
  EXPECT_GT(local.r["summary"]["rx_packets"].get<double>(), 0);
  // With a zero penalty the two placements are the same machine: byte-identical results.
  Json a = run(numa_scenario(0, 1, 0)).r, b = run(numa_scenario(1, 0, 0)).r;
  EXPECT_EQ(a["summary"], b["summary"]);
}

TEST(MutilateNuma, NicNodeIsValidatedAgainstTheTopology) {
  try {
    parse_scenario(numa_scenario(0, 2, 500), ".");
    ADD_FAILURE() << "accepted a NIC on node 2 of 2";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "/nics/1/numa_node");
  }
}

}  // namespace
}  // namespace napisim
