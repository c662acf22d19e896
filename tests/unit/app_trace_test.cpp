// The `app` and `trace` workloads (sim/workloads/{rpc_server,app,trace}.hpp) through the whole
// simulator (Simulation driven standalone): the M/M/1 closed form with every cost at zero, open
// vs closed loop under saturation, application overload on a hand-computed case, off-CPU blocking
// freeing the CPU, exact trace replay (CSV and neper --log-rtt), bad trace files, trace-gen.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/core/error.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/simulation.hpp"
#include "sim/workloads/rpc_server.hpp"
#include "sim/workloads/trace.hpp"

namespace napisim {
namespace {

/// One CPU, one NIC queue, an interrupt per packet, a 0-latency 10 Tb/s link, an idealised client
/// with no stack delay, and every CPU cost of the kernel model at zero (cost_cv too): what is
/// left is the application's service time.
Json zero_cost_scenario(const Json& workload) {
  Json costs = params_to_json(CostParams{});
  for (auto it = costs.begin(); it != costs.end(); ++it)
    it.value() = 0;
  Json doc = {
      {"seed", 1},
      {"warmup_s", 0.0},
      {"duration_s", 0.01},
      {"topology", {{"numa_nodes", 1}, {"llcs_per_node", 1}, {"cores_per_llc", 1}, {"threads_per_core", 1}}},
      {"nics",
       Json::array({{{"queues", 1}, {"rx_usecs", 0}, {"rx_frames", 1}, {"speed_gbps", 1e4}, {"irq_affinity", "0"}}})},
      {"platform",
       {{"clients",
         Json::array({{{"name", "c"}, {"stack", "idealised"}, {"link_gbps", 1e4}, {"link_latency_ns", 0}}})}}},
      {"costs", costs},
      {"workload", workload}};
  doc["workload"]["params"]["client_tx_ns"] = 0;
  doc["workload"]["params"]["client_rx_ns"] = 0;
  return doc;
}

struct SimRun {
  std::unique_ptr<Simulation> sim;
  Json r;
  const Json& summary() const { return r["summary"]; }
  double lat(const char* k) const { return r["summary"]["latency_ns"][k].get<double>(); }
};

SimRun run(const Json& doc, std::vector<Nanos>* send_log = nullptr, const std::string& base_dir = ".") {
  const Scenario s = parse_scenario(doc, base_dir);
  const std::vector<ClientPath> paths = Simulation::standalone_paths(s);
  SimRun out;
  out.sim = std::make_unique<Simulation>(s, paths);
  if (send_log) dynamic_cast<RpcServer&>(out.sim->workload()).set_send_log(send_log);
  out.sim->run_standalone();
  out.r = out.sim->result(Json::object());
  const Json& c = out.r["conservation"];
  EXPECT_EQ(c["sent"].get<std::uint64_t>(), c["answered"].get<std::uint64_t>() + c["in_flight"].get<std::uint64_t>());
  return out;
}

std::string temp_file(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / ("napisim_app_trace_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto p = dir / name;
  std::ofstream(p) << text;
  return p.string();
}

// ---- M/M/1 through the whole simulator ----

TEST(AppTest, MM1SojournMatchesClosedFormWithZeroCosts) {
  // lambda = 50k/s, mu = 100k/s (mean service 10 us): sojourn ~ Exp(mu - lambda), FCFS on one
  // connection. Mean 1/(mu - lambda) = 20 us, p99 = ln(100)/(mu - lambda) = 92.1 us.
  const double lambda = 50000, mu = 100000;
  Json doc = zero_cost_scenario({{"type", "app"},
                                 {"params",
                                  {{"load", "open"},
                                   {"rate_rps", lambda},
                                   {"num_flows", 1},
                                   {"num_threads", 1},
                                   {"request_size", 64},
                                   {"response_size", 64},
                                   {"service_ns", {{"type", "exponential"}, {"mean", 1e9 / mu}}}}}});
  doc["warmup_s"] = 0.1;
  doc["duration_s"] = 6.0;
  const SimRun r = run(doc);
  const double mean = 1e9 / (mu - lambda), p99 = std::log(100.0) * 1e9 / (mu - lambda);
  EXPECT_NEAR(r.lat("mean"), mean, 0.03 * mean);
  EXPECT_NEAR(r.lat("p99"), p99, 0.03 * p99);
  // The server saw the same: queueing + service = sojourn (no hidden delay outside the worker).
  const Json& app = r.summary()["app"];
  EXPECT_NEAR(app["queue_ns"]["mean"].get<double>() + app["service_ns"]["mean"].get<double>(), r.lat("mean"),
              0.005 * mean);
  EXPECT_NEAR(r.summary()["throughput"].get<double>(), lambda, 0.02 * lambda);
  std::printf("M/M/1: mean %.0f ns (closed form %.0f), p99 %.0f ns (closed form %.0f), %.0f requests\n", r.lat("mean"),
              mean, r.lat("p99"), p99, r.summary()["transactions"].get<double>());
}

// ---- open vs closed loop ----

Json saturating(const std::string& load, double duration_s) {
  // 1 CPU, constant 10 us service (capacity 100k/s); open loop offers 150k/s.
  Json doc = zero_cost_scenario(
      {{"type", "app"},
       {"params",
        {{"load", load}, {"rate_rps", 150000}, {"num_flows", 8}, {"num_threads", 1}, {"service_ns", 10000}}}});
  doc["duration_s"] = duration_s;
  return doc;
}

TEST(AppTest, OpenLoopKeepsOfferingLoadAndQueuesGrow) {
  const SimRun a = run(saturating("open", 0.02)), b = run(saturating("open", 0.04));
  for (const SimRun* r : {&a, &b}) {
    EXPECT_NEAR(r->summary()["offered_rps"].get<double>(), 150000, 0.05 * 150000);
    EXPECT_NEAR(r->summary()["throughput"].get<double>(), 100000, 0.03 * 100000);
  }
  // The backlog grows by ~50k requests/s: latency grows with time, sent keeps rising.
  EXPECT_GT(b.r["conservation"]["in_flight"].get<double>(), 1.7 * a.r["conservation"]["in_flight"].get<double>());
  EXPECT_GT(a.r["conservation"]["in_flight"].get<double>(), 0.8 * 50000 * 0.02);
  EXPECT_GT(b.lat("p50"), 1.7 * a.lat("p50"));
  EXPECT_GT(b.r["conservation"]["sent"].get<double>(), 1.9 * a.r["conservation"]["sent"].get<double>());
}

TEST(AppTest, ClosedLoopDoesNotQueueBeyondItsFlows) {
  const SimRun a = run(saturating("closed", 0.02)), b = run(saturating("closed", 0.04));
  for (const SimRun* r : {&a, &b}) {
    EXPECT_LE(r->r["conservation"]["in_flight"].get<double>(), 8);
    EXPECT_NEAR(r->summary()["throughput"].get<double>(), 100000, 0.03 * 100000);
    // 8 flows share the one worker: Little's law gives the mean. (The median depends on the order
    // the worker finds them in: a flow whose next request comes after the worker's next
    // epoll_wait() scanned its re-queued item drops out of that round.)
    EXPECT_NEAR(r->lat("mean"), 8 * 10000, 0.05 * 8 * 10000);
  }
  EXPECT_NEAR(b.lat("mean"), a.lat("mean"), 0.02 * a.lat("mean"));
}

// ---- application overload ----

TEST(AppTest, OverloadCountsRequestsThatWaitedPastTheThreshold) {
  // Three requests at t = 0 on one connection, 100 us of service each: they wait 0, 100 and
  // 200 us from readable to start of service. With a 150 us threshold one of three is overloaded.
  const std::string f = temp_file("three.csv", "timestamp,flow,service_ns\n0,7,100000\n0,7,100000\n0,7,100000\n");
  Json doc = zero_cost_scenario(
      {{"type", "trace"}, {"params", {{"file", f}, {"num_threads", 1}, {"overload_threshold_us", 150}}}});
  const SimRun r = run(doc);
  const Json& app = r.summary()["app"];
  EXPECT_EQ(app["requests_started"].get<int>(), 3);
  EXPECT_EQ(app["requests_overloaded"].get<int>(), 1);
  EXPECT_NEAR(r.summary()["app_overload_pct"].get<double>(), 100.0 / 3, 1e-9);
  EXPECT_NEAR(app["queue_ns"]["max"].get<double>(), 200000, 2000);
  EXPECT_NEAR(app["queue_ns"]["mean"].get<double>(), 100000, 1000);
  EXPECT_NEAR(r.lat("max"), 300000, 3000);
}

// ---- latency attribution of pipelined requests (run --explain) ----

TEST(AppTest, PipelinedRequestsAreEachCutWithTheirOwnTrain) {
  // Three 1-byte requests on one connection (wire times round to 0 at 10 Tb/s), at 0, 5 and
  // 6 us, 20 us of service each, every other cost 0:
  //   R1 arrives at 0, wakes the worker: served 0-20, answered at 20 (server.service 20).
  //   R2 arrives at 5 and R3 at 6 while the worker serves R1: both wait in the socket until the
  //   worker's next epoll_wait() at 20 (socket_queue 15 and 14); one recv() reads both. R2 is
  //   served 20-40; R3 waits behind it (server.queue 20) and is served 40-60.
  // Latencies 20, 35 and 54 us. Had R2 been cut with its socket's last train (R3's, at 6), its
  // wire.request would be 1 us and its socket_queue 14.
  const std::string f =
      temp_file("pipelined.csv", "timestamp,flow,service_ns\n0,0,20000\n0.000005,0,20000\n0.000006,0,20000\n");
  Json doc = zero_cost_scenario(
      {{"type", "trace"}, {"params", {{"file", f}, {"num_threads", 1}, {"request_size", 1}, {"response_size", 1}}}});
  const Scenario s = parse_scenario(doc, ".");
  Simulation sim(s, Simulation::standalone_paths(s));
  sim.set_explain();
  sim.run_standalone();
  const Json r = sim.result(Json::object());
  const Json& bd = r.at("latency_breakdown");
  EXPECT_EQ(bd.at("clamped"), 0u);
  const Json& all = bd.at("bands").back();
  ASSERT_EQ(all.at("requests"), 3u);
  const std::map<std::string, double> total = {
      {"server.service", 60000}, {"server.socket_queue", 29000}, {"server.queue", 20000}};
  for (const auto& [name, ns] : all.at("stage_ns").items()) {
    const auto it = total.find(name);
    EXPECT_DOUBLE_EQ(3 * ns.get<double>(), it == total.end() ? 0.0 : it->second) << name;
  }
  EXPECT_DOUBLE_EQ(3 * all.at("latency_ns").get<double>(), 109000.0);
  EXPECT_EQ(r.at("summary").at("latency_ns").at("max").get<double>(), 54000.0);
}

// ---- TCP flow control bounds what an overloaded connection queues ----

TEST(AppTest, TheWindowAndTheSendBufferBoundAConnectionsQueue) {
  // 20 requests of 64 B at t = 0 on one connection, 100 us of service each. A request charges
  // 64 + 576 (SKB_TRUESIZE(0)) = 640 bytes: a 4096-byte receive buffer takes 6 of them in flight
  // or unread (3840), a 4096-byte send buffer holds the next 6 behind the closed window, and the
  // last 8 cannot be sent (counted unsent). Each read opens the window for one more, sent at once
  // (zero latency): 12 answered, the 12th after 12 services; once readable, a request waits behind
  // at most the window's other 5 and the one in service: 600 us.
  std::string csv = "timestamp,flow,request_size,response_size,service_ns\n";
  for (int i = 0; i < 20; ++i)
    csv += "0,1,64,64,100000\n";
  const std::string f = temp_file("burst.csv", csv);
  Json doc = zero_cost_scenario(
      {{"type", "trace"}, {"params", {{"file", f}, {"num_threads", 1}, {"rcvbuf", 4096}, {"sndbuf", 4096}}}});
  doc["duration_s"] = 0.01;
  const SimRun r = run(doc);
  EXPECT_EQ(r.summary()["unsent_requests"].get<int>(), 8);
  EXPECT_EQ(r.summary()["transactions"].get<int>(), 12);
  EXPECT_EQ(r.r["conservation"]["sent"].get<int>(), 12);
  EXPECT_NEAR(r.lat("max"), 12 * 100000, 0.01 * 12 * 100000);
  EXPECT_NEAR(r.summary()["app"]["queue_ns"]["max"].get<double>(), 6 * 100000, 0.01 * 6 * 100000);
}

// ---- off-CPU blocking ----

Json blocking(int threads) {
  Json doc = zero_cost_scenario({{"type", "app"},
                                 {"params",
                                  {{"load", "closed"},
                                   {"num_flows", 64},
                                   {"num_threads", threads},
                                   {"flow_steering", "rx_queue"},
                                   {"service_ns", 10000},
                                   {"block_probability", 1.0},
                                   {"block_ns", 90000}}}});
  doc["nics"][0]["queues"] = 2;  // flows split over the two workers by RX queue
  doc["duration_s"] = 0.05;
  return doc;
}

TEST(AppTest, BlockingOffCpuReleasesTheCpu) {
  // One worker: 10 us on CPU then 90 us asleep per request -> 10k/s at 10% CPU (not 100%: the
  // thread sleeps, it does not spin). Two workers on the same CPU overlap: one runs while the
  // other sleeps -> 20k/s at 20%.
  const SimRun one = run(blocking(1)), two = run(blocking(2));
  EXPECT_NEAR(one.summary()["throughput"].get<double>(), 10000, 300);
  EXPECT_NEAR(one.summary()["cpu"]["busy_pct"].get<double>(), 10, 1);
  EXPECT_NEAR(two.summary()["throughput"].get<double>(), 20000, 600);
  EXPECT_NEAR(two.summary()["cpu"]["busy_pct"].get<double>(), 20, 2);
  EXPECT_GT(one.summary()["app"]["requests_blocked"].get<double>(), 400);
}

// ---- the workers' own busy loop ----

TEST(AppTest, UserspaceBusyLoopPaysForTheEmptyEpollWaitCalls) {
  // Costs zero but syscall entries (100 ns for epoll_wait, recv and send) and ep_poll (250 ns):
  // 1000 requests/s on one CPU, 10 us of service each, rarely one behind another. Blocking: the
  // epoll_wait() entry runs before the worker sleeps and the wakeup costs nothing, so a request
  // takes recv 100 + service 10000 + send 100. Busy loop (epoll_wait(0)): each empty call is 350
  // ns and reads the ready list halfway, so a request waits for the next read (uniform over
  // 0..350 ns, 175 on average) and the rest of that call (175): 350 more on average, at least
  // 175. The worker is never woken, its CPU never idle, and the spin is system time.
  auto doc = [](int timeout) {
    Json d = zero_cost_scenario({{"type", "app"},
                                 {"params",
                                  {{"load", "open"},
                                   {"rate_rps", 1000},
                                   {"num_flows", 1},
                                   {"num_threads", 1},
                                   {"epoll_timeout", timeout},
                                   {"service_ns", 10000}}}});
    d["costs"]["syscall_ns"] = 100;
    d["costs"]["epoll_wait_ns"] = 250;
    d["duration_s"] = 4.0;
    return d;
  };
  const SimRun block = run(doc(-1)), spin = run(doc(0));
  EXPECT_NEAR(block.lat("min"), 10200, 30);
  EXPECT_NEAR(spin.lat("mean") - block.lat("mean"), 350, 12);
  EXPECT_GE(spin.lat("min"), block.lat("min") + 175 - 30);
  EXPECT_NEAR(spin.summary()["cpu"]["busy_pct"].get<double>(), 100, 0.1);
  // The empty calls are busy_spin; the calls that return the requests and the replies, system.
  const Json& by = spin.summary()["cpu"]["by_class_pct"];
  EXPECT_NEAR(by["busy_spin"].get<double>() + by["system"].get<double>(), 99, 1);
  EXPECT_GT(by["busy_spin"].get<double>(), 95);
  EXPECT_LT(block.summary()["cpu"]["busy_pct"].get<double>(), 2);
  for (const auto& t : spin.sim->kernel().tasks()) {
    if (t->kind == TaskKind::kUser) {
      EXPECT_EQ(t->wakeups, 0u) << t->name;
    }
  }
}

// ---- trace replay ----

TEST(TraceTest, ReplaysArrivalTimesExactlyScaled) {
  const std::vector<double> ts = {12.5, 12.5000013, 12.500002, 12.5001, 12.5001, 12.5017777, 12.51};
  std::string csv = "# comment\ntimestamp flow request_size response_size\n";
  for (std::size_t i = 0; i < ts.size(); ++i) {
    char line[96];
    std::snprintf(line, sizeof line, "%.7f %zu %d %d\n", ts[i], i % 3, 100 + static_cast<int>(i), 2000);
    csv += line;
  }
  const std::string f = temp_file("times.csv", csv);
  Json doc = zero_cost_scenario({{"type", "trace"}, {"params", {{"file", f}, {"rate_scale", 2.5}}}});
  std::vector<Nanos> sends;
  const SimRun r = run(doc, &sends);
  ASSERT_EQ(sends.size(), ts.size());
  for (std::size_t i = 0; i < ts.size(); ++i) {
    const Nanos rel = std::llround(ts[i] * 1e9) - std::llround(ts[0] * 1e9);
    EXPECT_EQ(sends[i], std::llround(static_cast<double>(rel) / 2.5)) << "request " << i;
  }
  EXPECT_EQ(r.r["conservation"]["answered"].get<std::size_t>(), ts.size());
  EXPECT_EQ(r.r["workload"]["num_flows"].get<int>(), 3);
}

TEST(TraceTest, RepeatStartsTheTraceOver) {
  const std::string f = temp_file("rep.csv", "timestamp,flow\n0,0\n0.001,0\n0.002,1\n");
  Json doc = zero_cost_scenario({{"type", "trace"}, {"params", {{"file", f}, {"repeat", true}}}});
  std::vector<Nanos> sends;
  (void)run(doc, &sends);  // 10 ms: passes start every 3 ms (span 2 ms + one mean gap of 1 ms)
  ASSERT_GE(sends.size(), 9u);
  EXPECT_EQ(sends[3], 3000000);
  EXPECT_EQ(sends[5], 5000000);
  EXPECT_EQ(sends[6], 6000000);
}

// ---- the load generator on a Linux client host ----

/// `doc` with its client on a Linux host like the server (every cost zero there too).
Json on_linux_client(Json doc, std::int64_t timer_slack_ns = 50000) {
  doc["platform"]["clients"][0]["stack"] = "linux";
  doc["workload"]["params"]["client_user_ns"] = 0;
  doc["workload"]["params"]["client_timer_slack_ns"] = timer_slack_ns;
  return doc;
}

Json one_connection(const Json& think_ns) {
  Json doc = zero_cost_scenario({{"type", "app"},
                                 {"params",
                                  {{"load", "closed"},
                                   {"num_flows", 1},
                                   {"num_threads", 1},
                                   {"request_size", 64},
                                   {"response_size", 64},
                                   {"think_ns", think_ns},
                                   {"service_ns", 10000}}}});
  doc["duration_s"] = 0.1;
  return doc;
}

TEST(AppTest, LinuxClientAddsNothingWhenEveryCostIsZero) {
  // One connection, 10 us of service, no think time, every cost zero on both hosts, a 0-latency
  // link: each transaction is the service alone whichever client sends it, 10000 a second.
  for (const bool linux_host : {false, true}) {
    SCOPED_TRACE(linux_host ? "linux" : "idealised");
    Json doc = one_connection(0);
    if (linux_host) doc = on_linux_client(doc);
    const SimRun r = run(doc);
    EXPECT_EQ(r.lat("min"), 10000);
    EXPECT_EQ(r.lat("max"), 10000);
    EXPECT_NEAR(r.summary()["throughput"].get<double>(), 100000.0, 100.0);
    EXPECT_EQ(r.r.contains("clients") && r.r["clients"].contains("c"), linux_host);
  }
}

TEST(AppTest, LinuxClientWakesForAThinkTimeItsTimerSlackLate) {
  // A 100 us think time after each 10 us transaction. The idealised client sends again at once:
  // a 110 us cycle, 9090.9/s. The Linux client's thread waits in epoll_pwait2(100 us), whose
  // hrtimer fires at the end of the slack range: 50 us late with the kernel's default slack
  // (160 us, 6250/s); with a slack of 1 ns, select_estimate_accuracy() gives 100 us / 1000 =
  // 100 ns (110.1 us, 9082.7/s). The latency is the service either way.
  struct Case {
    bool linux_host;
    std::int64_t slack;
    double rate;
  };
  for (const Case& c : {Case{false, 0, 1e9 / 110000}, Case{true, 50000, 1e9 / 160000}, Case{true, 1, 1e9 / 110100}}) {
    SCOPED_TRACE(std::to_string(c.slack));
    Json doc = one_connection(100000);
    if (c.linux_host) doc = on_linux_client(doc, c.slack);
    const SimRun r = run(doc);
    EXPECT_NEAR(r.summary()["throughput"].get<double>(), c.rate, 0.002 * c.rate);
    EXPECT_EQ(r.lat("max"), 10000);
  }
}

TEST(AppTest, LinuxClientBusyLoopSendsAtTheThinkTimeAndNeverSleeps) {
  // The think-time case above with client_epoll_timeout 0: the thread calls epoll_wait(0) (each
  // call costs nothing here) until the response comes or the next send is due, so it sends on
  // time (the 110 us cycle of the idealised client) and is never woken.
  Json doc = on_linux_client(one_connection(100000));
  doc["workload"]["params"]["client_epoll_timeout"] = 0;
  const SimRun r = run(doc);
  EXPECT_NEAR(r.summary()["throughput"].get<double>(), 1e9 / 110000, 0.002 * 1e9 / 110000);
  EXPECT_EQ(r.r["clients"]["c"]["wakeups"].get<int>(), 0);
}

TEST(AppTest, LinuxClientThreadsShareTheOpenLoopRate) {
  // 50k requests/s offered over 8 connections by 2 client threads of 4 connections each: each
  // draws its own Poisson arrivals at 25k/s. 0.2 s: 10000 requests expected (sd 100).
  Json doc = on_linux_client(
      zero_cost_scenario(
          {{"type", "app"},
           {"params",
            {{"load", "open"}, {"rate_rps", 50000}, {"num_flows", 8}, {"num_threads", 2}, {"service_ns", 1000}}}}),
      1);
  doc["duration_s"] = 0.2;
  std::vector<Nanos> sends;
  const SimRun r = run(doc, &sends);
  EXPECT_NEAR(static_cast<double>(sends.size()), 10000.0, 400.0);
  EXPECT_NEAR(r.summary()["offered_rps"].get<double>(), 50000.0, 2000.0);
  EXPECT_EQ(r.summary()["unsent_requests"].get<int>(), 0);
  EXPECT_EQ(r.r["clients"]["c"]["context_switches"].get<int>() > 0, true);
}

TEST(TraceTest, ALinuxClientSendsEachRecordAtItsTimePlusTheSlack) {
  // The trace of RepeatStartsTheTraceOver, sent by the Linux client's threads: each record
  // leaves when its thread's epoll_pwait2() times out, within the slack of its wait (1/1000 of
  // it, at most 3 us here) after the record's time.
  const std::string f = temp_file("rep_linux.csv", "timestamp,flow\n0,0\n0.001,0\n0.002,1\n");
  Json doc = on_linux_client(zero_cost_scenario({{"type", "trace"}, {"params", {{"file", f}, {"repeat", true}}}}), 1);
  std::vector<Nanos> sends;
  (void)run(doc, &sends);
  ASSERT_GE(sends.size(), 9u);
  const Nanos want[] = {0, 1000000, 2000000, 3000000, 4000000, 5000000, 6000000};
  for (std::size_t i = 0; i < std::size(want); ++i) {
    EXPECT_GE(sends[i], want[i]) << "request " << i;
    EXPECT_LE(sends[i], want[i] + 3000) << "request " << i;
  }
}

TEST(TraceTest, ReadsNeperLogRttAsArrivals) {
  // neper logs completions: the request left at timestamp - rtt; (thread, flow) is a connection.
  const std::string f = temp_file("rtt_samples.txt",
                                  "      timestamp  thread_id    flow_id          rtt\n"
                                  "    0.000100000          0          0  0.000050000\n"
                                  "    0.000120000          1          0  0.000100000\n"
                                  "    0.000300000          0          0  0.000050000\n");
  TraceParams p;
  p.file = f;
  std::int64_t flows = 0;
  const auto recs = load_trace(p, "/w", &flows);
  ASSERT_EQ(recs.size(), 3u);
  EXPECT_EQ(flows, 2);
  EXPECT_EQ(recs[0].t, 0);       // 120 - 100 = 20 us: first
  EXPECT_EQ(recs[0].flow, 1);    // (thread 1, flow 0) was seen second
  EXPECT_EQ(recs[1].t, 30000);   // 100 - 50 = 50 us
  EXPECT_EQ(recs[2].t, 230000);  // 300 - 50 = 250 us
  EXPECT_EQ(recs[2].request_size, 1024u);
}

std::string trace_error(const std::string& text, const std::string& format = "auto") {
  TraceParams p;
  p.file = temp_file("bad.csv", text);
  p.format = format;
  std::int64_t flows = 0;
  try {
    (void)load_trace(p, "/workload/params", &flows);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

#define EXPECT_CONTAINS(s, part) EXPECT_NE((s).find(part), std::string::npos) << "message: " << (s)

TEST(TraceTest, BadTraceFilesNameTheLineAndColumn) {
  std::string e = trace_error("timestamp,flow\n0,1\n0.5,x\n");
  EXPECT_CONTAINS(e, "/workload/params/file");
  EXPECT_CONTAINS(e, "line 3, column 2 (flow)");
  EXPECT_CONTAINS(e, "expected a number, got 'x'");
  EXPECT_CONTAINS(trace_error("timestamp,flow\n1,1\n0.5,1\n"),
                  "line 3, column 1 (timestamp): expected timestamps in non-decreasing order");
  EXPECT_CONTAINS(trace_error("timestamp,flow,request_size\n1,1,0\n"),
                  "line 2, column 3 (request_size): expected an integer");
  EXPECT_CONTAINS(trace_error("timestamp,flow\n1,1,5\n"), "line 2: expected 2 columns, got 3");
  EXPECT_CONTAINS(trace_error("timestamp,bogus\n"), "line 1, column 2: unknown column 'bogus'");
  EXPECT_CONTAINS(trace_error("0.1,1\n"), "expected a header line");
  EXPECT_CONTAINS(trace_error("flow\n1\n"), "expected a timestamp column");
  EXPECT_CONTAINS(trace_error("timestamp\n"), "expected at least one request");
  EXPECT_CONTAINS(trace_error("timestamp,flow\n0,1\n", "neper"), "expected neper's --log-rtt header");
  EXPECT_CONTAINS(trace_error("timestamp,flow\n-1,1\n"), "line 2, column 1 (timestamp): expected seconds");
  // Through the scenario: a missing file, relative to the scenario's directory.
  Json doc = zero_cost_scenario({{"type", "trace"}, {"params", {{"file", "no/such.csv"}}}});
  try {
    (void)parse_scenario(doc, "/nonexistent_dir");
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& ce) {
    EXPECT_CONTAINS(std::string(ce.what()), "/workload/params/file");
    EXPECT_CONTAINS(std::string(ce.what()), "/nonexistent_dir/no/such.csv");
  }
}

TEST(TraceTest, RelativeFileResolvesAgainstTheScenarioDirectory) {
  const std::string f = temp_file("rel.csv", "timestamp\n0\n");
  const std::string dir = std::filesystem::path(f).parent_path().string();
  Json doc = zero_cost_scenario({{"type", "trace"}, {"params", {{"file", "rel.csv"}}}});
  const Scenario s = parse_scenario(doc, dir);
  EXPECT_EQ(s.workload.params["file"].get<std::string>(), f);
}

// ---- trace-gen ----

TEST(TraceGenTest, PoissonTraceHasTheRequestedRateAndReplays) {
  const std::string csv =
      generate_trace_csv({{"duration_s", 0.5}, {"rate_rps", 20000}, {"flows", 4}, {"service_ns", 5000}, {"seed", 3}});
  EXPECT_EQ(csv, generate_trace_csv(
                     {{"duration_s", 0.5}, {"rate_rps", 20000}, {"flows", 4}, {"service_ns", 5000}, {"seed", 3}}));
  const std::string f = temp_file("gen.csv", csv);
  TraceParams p;
  p.file = f;
  std::int64_t flows = 0;
  const auto recs = load_trace(p, "/w", &flows);
  EXPECT_NEAR(static_cast<double>(recs.size()), 10000, 4 * std::sqrt(10000.0));
  EXPECT_EQ(flows, 4);
  EXPECT_EQ(recs[5].service_ns, 5000);
  // Lognormal inter-arrivals with cv 2 keep the mean rate.
  const std::string ln = generate_trace_csv({{"duration_s", 1.0},
                                             {"rate_rps", 20000},
                                             {"interarrival", {{"type", "lognormal"}, {"mean", 1}, {"stddev", 2}}}});
  const auto lines = static_cast<double>(std::count(ln.begin(), ln.end(), '\n') - 1);
  EXPECT_NEAR(lines, 20000, 0.05 * 20000);
  try {
    (void)generate_trace_csv({{"rate_rps", -1}});
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_CONTAINS(std::string(e.what()), "/rate_rps");
  }
}

}  // namespace
}  // namespace napisim
