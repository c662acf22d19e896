// The server architectures of `app` (sim/workloads/server_arch.cpp) through the whole simulator
// with every kernel cost at zero: c workers on one shared queue (thread_pool) against M/M/c
// (Erlang C), c workers each owning their connections (dispatcher, round-robin) against c
// independent M/M/1 queues, the dispatcher's round-robin hand-off, per-request connections through
// the accept queue, and EPOLLEXCLUSIVE's one wakeup per connection.
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/scenario/scenario.hpp"
#include "sim/scenario/simulation.hpp"

namespace napisim {
namespace {

/// `cpus` CPUs, one NIC queue interrupting the last CPU, a 0-latency 10 Tb/s link, an idealised
/// client with no stack delay and every CPU cost of the kernel model at zero (cost_cv too).
Json zero_cost_scenario(int cpus, const Json& params) {
  Json costs = params_to_json(CostParams{});
  for (auto it = costs.begin(); it != costs.end(); ++it)
    it.value() = 0;
  Json doc = {{"seed", 1},
              {"warmup_s", 0.05},
              {"duration_s", 1.0},
              {"topology", {{"numa_nodes", 1}, {"llcs_per_node", 1}, {"cores_per_llc", cpus}, {"threads_per_core", 1}}},
              {"nics", Json::array({{{"queues", 1},
                                     {"rx_usecs", 0},
                                     {"rx_frames", 1},
                                     {"speed_gbps", 1e4},
                                     {"irq_affinity", std::to_string(cpus - 1)}}})},
              {"platform",
               {{"clients",
                 Json::array({{{"name", "c"}, {"stack", "idealised"}, {"link_gbps", 1e4}, {"link_latency_ns", 0}}})}}},
              {"costs", costs},
              {"workload", {{"type", "app"}, {"params", params}}}};
  doc["workload"]["params"]["client_tx_ns"] = 0;
  doc["workload"]["params"]["client_rx_ns"] = 0;
  return doc;
}

Json run(const Json& doc) {
  const Scenario s = parse_scenario(doc, ".");
  Simulation sim(s, Simulation::standalone_paths(s));
  sim.run_standalone();
  Json r = sim.result(Json::object());
  const Json& c = r["conservation"];
  EXPECT_EQ(c["sent"].get<std::uint64_t>(), c["answered"].get<std::uint64_t>() + c["in_flight"].get<std::uint64_t>());
  return r;
}

/// Erlang C: the probability that an arrival waits in M/M/c with offered load a = lambda/mu.
double erlang_c(int c, double a) {
  double term = 1, sum = 0;
  for (int k = 0; k < c; ++k) {
    sum += term;
    term *= a / (k + 1);
  }
  const double top = term / (1 - a / c);
  return top / (sum + top);
}

/// Open-loop Poisson requests at rate `lambda`, exponential service of mean 10 us, `c` workers
/// pinned to CPUs 0..c-1; the dispatching thread and the NIC share CPU c.
Json mm_params(const std::string& arch, int c, double lambda, std::int64_t flows) {
  return Json{{"server_arch", arch},
              {"load", "open"},
              {"rate_rps", lambda},
              {"num_flows", flows},
              {"num_threads", c},
              {"server_cpus", "0-" + std::to_string(c - 1)},
              {"pin_cpu", true},
              {"dispatcher_cpus", std::to_string(c)},
              {"request_size", 64},
              {"response_size", 64},
              {"service_ns", {{"type", "exponential"}, {"mean", 10000}}}};
}

TEST(ServerArchTest, ThreadPoolMatchesErlangC) {
  // c = 4 workers take requests from one shared queue: M/M/4 with mu = 100k/s. Mean wait in the
  // queue Wq = C(c, a) / (c mu - lambda): rho 0.5 (a = 2): C = 0.1739, Wq = 0.870 us; rho 0.8
  // (a = 3.2): C = 0.5964, Wq = 7.455 us. The server's queue_ns (readable to start of service) is
  // the wait when every kernel cost is zero; the sojourn adds the 10 us service. 10000
  // connections, so that two requests of one connection (served in order) hardly ever meet.
  const int c = 4;
  const double mu = 100000;
  for (const double rho : {0.5, 0.8}) {
    const double lambda = rho * c * mu;
    Json doc = zero_cost_scenario(c + 1, mm_params("thread_pool", c, lambda, 10000));
    doc["duration_s"] = 4.0;
    const Json r = run(doc);
    const Json& s = r["summary"];
    const double wq = erlang_c(c, lambda / mu) / (c * mu - lambda) * 1e9;
    const double got_wq = s["app"]["queue_ns"]["mean"].get<double>();
    const double sojourn = s["latency_ns"]["mean"].get<double>();
    std::printf("M/M/%d rho %.1f: mean wait %.0f ns (Erlang C %.0f), sojourn %.0f ns (%.0f), %.0f requests\n", c, rho,
                got_wq, wq, sojourn, wq + 1e9 / mu, s["transactions"].get<double>());
    EXPECT_NEAR(got_wq, wq, 0.03 * wq) << "rho " << rho;
    EXPECT_NEAR(sojourn, wq + 1e9 / mu, 0.01 * (wq + 1e9 / mu)) << "rho " << rho;
  }
}

TEST(ServerArchTest, WorkersOwningTheirConnectionsAreIndependentMM1Queues) {
  // The dispatcher hands the 4 connections round-robin: each worker owns one, whose requests
  // arrive at lambda / 4: four M/M/1 queues. Sojourn 1 / (mu - lambda/4): 20 us at rho 0.5,
  // 50 us at rho 0.8; wait rho / (mu - lambda/4): 10 and 40 us. The same load on one shared
  // queue waits 0.87 and 7.5 us (above).
  const int c = 4;
  const double mu = 100000;
  for (const double rho : {0.5, 0.8}) {
    const double lambda = rho * c * mu;
    Json doc = zero_cost_scenario(c + 1, mm_params("dispatcher", c, lambda, c));
    doc["duration_s"] = 4.0;
    const Json r = run(doc);
    const Json& s = r["summary"];
    const double each = lambda / c;
    const double sojourn = 1e9 / (mu - each), wq = rho * 1e9 / (mu - each);
    const double got = s["latency_ns"]["mean"].get<double>(), got_wq = s["app"]["queue_ns"]["mean"].get<double>();
    std::printf("%d x M/M/1 rho %.1f: mean sojourn %.0f ns (closed form %.0f), wait %.0f ns (%.0f)\n", c, rho, got,
                sojourn, got_wq, wq);
    EXPECT_NEAR(got, sojourn, 0.03 * sojourn) << "rho " << rho;
    EXPECT_NEAR(got_wq, wq, 0.03 * wq) << "rho " << rho;
    const std::vector<double> served = s["server"]["requests_per_worker"].get<std::vector<double>>();
    double all = 0;
    for (double n : served)
      all += n;
    for (double n : served)  // a quarter of the requests each
      EXPECT_NEAR(n, all / c, 0.02 * all / c);
  }
}

TEST(ServerArchTest, DispatcherHandsConnectionsRoundRobin) {
  // 7 persistent connections open within the first 10 us (their SYNs at random times), each a
  // closed loop with 10 us of constant service; 3 workers. The listener thread accepts them in the
  // order their handshakes complete and hands them to workers 0, 1, 2, 0, 1, 2, 0: worker 0 owns
  // three connections, the others two, so over the run worker 0 serves 3/7 of the requests and
  // the others 2/7 each (each worker's CPU is the bottleneck: a worker with k connections
  // serves them in turn, one request each per round).
  Json p = {{"server_arch", "dispatcher"}, {"num_flows", 7},  {"num_threads", 3},
            {"server_cpus", "0-2"},        {"pin_cpu", true}, {"dispatcher_cpus", "3"},
            {"service_ns", 10000}};
  Json doc = zero_cost_scenario(4, p);
  doc["duration_s"] = 0.01;
  doc["warmup_s"] = 0.0;
  const Json r = run(doc);
  const Json& srv = r["summary"]["server"];
  EXPECT_EQ(srv["accepts"].get<int>(), 7);
  EXPECT_EQ(srv["syns"].get<int>(), 7);
  const std::vector<double> served = srv["requests_per_worker"].get<std::vector<double>>();
  ASSERT_EQ(served.size(), 3u);
  // Each worker is busy all the time: 10 ms / 10 us = 1000 requests each (a round of 3 or 2).
  for (double n : served)
    EXPECT_NEAR(n, 1000, 3);
  // Latency: a connection waits for the other connections of its worker: 30 us on worker 0's
  // three, 20 us on the others' two; the mean over requests is (3 * 333 * 30 + 4 * 500 * 20) / 3000.
  EXPECT_NEAR(r["summary"]["latency_ns"]["mean"].get<double>(), (3 * 333.3 * 30000 + 4 * 500 * 20000) / 3000, 300);
}

TEST(ServerArchTest, PerRequestConnectionsGoThroughTheAcceptQueue) {
  // HTTP/1.0-style: each request its own connection (SYN, SYN-ACK, the ACK with the request,
  // accept(), response, close()). Closed loop, 8 flows, 2 workers blocking in accept(), 10 us
  // constant service: every request costs one accept; with zero costs and latency the handshake
  // takes no time, so the throughput is the workers' 200k/s.
  Json p = {{"server_arch", "shared_accept"},
            {"connections", "per_request"},
            {"num_flows", 8},
            {"num_threads", 2},
            {"server_cpus", "0-1"},
            {"pin_cpu", true},
            {"service_ns", 10000}};
  Json doc = zero_cost_scenario(3, p);
  doc["duration_s"] = 0.02;
  doc["warmup_s"] = 0.0;
  const Json r = run(doc);
  const Json& srv = r["summary"]["server"];
  EXPECT_NEAR(r["summary"]["throughput"].get<double>(), 200000, 2000);
  EXPECT_NEAR(srv["accepts"].get<double>(), r["conservation"]["answered"].get<double>(), 8);
  EXPECT_EQ(srv["listen_overflows"].get<int>(), 0);
  // A backlog of 1 holds 2 connections: the other 6 flows' SYNs overflow and wait out
  // TCP_TIMEOUT_INIT (1 s), longer than the run, so the two workers serve two flows at a time.
  doc["workload"]["params"]["listen_backlog"] = 1;
  const Json o = run(doc);
  EXPECT_GT(o["summary"]["server"]["listen_overflows"].get<int>(), 0);
  EXPECT_GT(o["summary"]["server"]["syn_retransmits"].get<int>(), 0);
}

TEST(ServerArchTest, SharedEpollExclusiveWakesOneWorkerPerConnection) {
  // One listen fd in 4 workers' epolls, per-request connections from 2 closed-loop flows with
  // 20 us of service, so that at least two workers wait when a connection arrives: a plain item
  // wakes every waiting worker for each connection, EPOLLEXCLUSIVE one; both serve the same
  // requests, 2 x 1 / 20 us.
  Json p = {{"server_arch", "shared_epoll"},
            {"connections", "per_request"},
            {"num_flows", 2},
            {"num_threads", 4},
            {"server_cpus", "0-3"},
            {"pin_cpu", true},
            {"service_ns", 20000}};
  double wakeups[2], accepts[2];
  for (const bool exclusive : {false, true}) {
    p["epoll_exclusive"] = exclusive;
    Json doc = zero_cost_scenario(5, p);
    doc["duration_s"] = 0.01;
    doc["warmup_s"] = 0.0;
    const Json r = run(doc);
    wakeups[exclusive] = r["summary"]["server"]["listen_wakeups"].get<double>();
    accepts[exclusive] = r["summary"]["server"]["accepts"].get<double>();
    EXPECT_NEAR(r["summary"]["throughput"].get<double>(), 100000, 2000) << exclusive;
  }
  EXPECT_LE(wakeups[1], accepts[1] + 4);  // at most one wakeup per connection
  EXPECT_GT(wakeups[0], 1.5 * wakeups[1]);
}

TEST(ServerArchTest, SpinningBeforeSleepingSavesTheWakeups) {
  // One connection, closed loop, 10 us of service, the next request 20 us after each response
  // (think_ns); every cost zero, so the worker is idle 20 us between requests. Without spin_us it
  // sleeps in epoll_wait() each time and each request wakes it; with spin_us 50 it is still
  // polling when the next request comes: no wakeup, the same throughput (1 / 30 us), and its CPU
  // busy all along (10 us of service and 20 us of busy_spin per request).
  for (const std::int64_t spin : {0, 50}) {
    Json p = {{"num_flows", 1}, {"num_threads", 1}, {"think_ns", 20000}, {"service_ns", 10000}, {"spin_us", spin}};
    Json doc = zero_cost_scenario(2, p);
    doc["duration_s"] = 0.01;
    doc["warmup_s"] = 0.001;
    const Json r = run(doc);
    const Json& s = r["summary"];
    EXPECT_NEAR(s["throughput"].get<double>(), 1e9 / 30000, 1000) << spin;
    if (spin == 0) {
      EXPECT_NEAR(s["wakeups"].get<double>(), s["transactions"].get<double>(), 2);
    } else {
      EXPECT_EQ(s["wakeups"].get<int>(), 0);
      EXPECT_NEAR(s["cpu"]["busy_cpus"].get<double>(), 1.0, 0.01);
    }
  }
}

}  // namespace
}  // namespace napisim
