// neper tcp_rr (sim/workloads/tcp_rr.cpp) against hand-computed CPU bills: rr.c's
// rr_server_state_0/1/2 answer in a second epoll round (epoll_ctl(MOD, EPOLLOUT) after the request,
// the send() when epoll_wait() returns EPOLLOUT, epoll_ctl(MOD, EPOLLIN) after it), and the
// client's rr_client_state_0/1 send a long request one send() per EPOLLOUT event.
#include <cstdint>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "sim/params/json_util.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/simulation.hpp"
#include "tests/unit/zero_fields.hpp"

namespace napisim {
namespace {

// Every CPU cost 0 but these, of which the bills below are sums: syscall 100, epoll_wait 250
// (entry 350), epoll_event 40, recv 350, send 900, epoll_ctl 200 (a call: 300).
CostParams bill_costs() {
  CostParams c = testing::all_zero<CostParams>();
  c.syscall_ns = 100;
  c.epoll_wait_ns = 250;
  c.epoll_event_ns = 40;
  c.recv_ns = 350;
  c.send_ns = 900;
  c.epoll_ctl_ns = 200;
  return c;
}

// tcp_rr with `params` on a host of two CPUs whose one-queue NIC interrupts CPU 0 at every packet,
// bill_costs() on every host, the client a Linux host or idealised; run for 1 ms with the first
// transaction measured (from t = 0).
std::unique_ptr<Simulation> one_transaction(const Json& params, bool linux_client) {
  Json doc = Json::parse(R"({
    "name": "tcp_rr_bill", "seed": 1, "warmup_s": 0.001, "duration_s": 0.002,
    "topology": {"numa_nodes": 1, "llcs_per_node": 1, "cores_per_llc": 2, "threads_per_core": 1},
    "nics": [{"name": "eth0", "queues": 1, "irq_affinity": "0", "rx_usecs": 0, "rx_frames": 1}],
    "models": [{"name": "napi_irq"}],
    "workload": {"type": "tcp_rr"}
  })");
  doc["workload"]["params"] = params;
  Scenario s = parse_scenario(doc);
  s.costs = bill_costs();
  for (ClientSpec& c : s.platform.clients)
    c.costs = s.costs;  // a client host's costs are resolved from /costs when parsed
  auto sim = std::make_unique<Simulation>(
      s, linux_client ? Simulation::standalone_paths(s) : std::vector<ClientPath>{ClientPath{}});
  sim->workload().set_window(0, ms(2));
  sim->start();
  sim->host().advance_to(ms(1));
  return sim;
}

TEST(TcpRrServerTest, OneTransactionCostsTwoEpollCtlAndASecondEpollWait) {
  // One flow, one server thread pinned to CPU 1, the NIC's interrupt on CPU 0, an idealised client;
  // the load stops after one measured transaction (measured from t = 0). Every cost is 0 but
  // syscall 100, epoll_wait 250 (entry 350), epoll_event 40, recv 350, send 900, epoll_ctl 200
  // (a call: 300) and the server's user work per handled event, 200. The server thread's bill:
  //   epoll_wait(), nothing queued: entry 350, asleep until the request arrives;
  //   EPOLLIN (rr_server_state_0): transfer 40 + recv 450 + user 200 + epoll_ctl(MOD, EPOLLOUT)
  //     300; ep_modify() queues the writable socket;
  //   epoll_wait(), the event queued: entry 350 + transfer 40;
  //   EPOLLOUT (rr_server_state_2): send 1000 (the response leaves), user 200,
  //     epoll_ctl(MOD, EPOLLIN) 300: no data, nothing queued;
  //   epoll_wait(): entry 350, asleep for good.
  // System 350 + 40 + 450 + 300 + 390 + 1000 + 300 + 350 = 3180 ns, user 2 x 200 = 400 ns. (The
  // old single-handler server: 350 + 40 + 450 + 1000 + 350 = 2190 system and 200 user: the two
  // epoll_ctl calls, the second epoll_wait and the second handler's user work are the difference.)
  const auto sim = one_transaction(Json::parse(R"({"num_flows": 1, "num_threads": 1, "server_cpus": "1",
                                                   "pin_cpu": true, "num_transactions": 1})"),
                                   false);
  EXPECT_EQ(sim->workload().completed(), 1u);
  const Kernel::Snapshot snap = sim->kernel().snapshot();
  const auto sys = static_cast<std::size_t>(CpuClass::kSystem);
  const auto user = static_cast<std::size_t>(CpuClass::kUser);
  EXPECT_EQ(snap.cpu_time[1][sys], 3180);
  EXPECT_EQ(snap.cpu_time[1][user], 400);
  EXPECT_EQ(snap.cpu_time[0][sys] + snap.cpu_time[0][user], 0);
}

TEST(TcpRrClientTest, ALongRequestGoesOneSendPerEpolloutEvent) {
  // neper's client (rr.c) on a Linux client host, one flow, its thread pinned to CPU 1 there, a
  // 3000-byte request in -B 1000 chunks, the load stopping after one measured transaction. Costs
  // as above (syscall 100, epoll_wait 250, epoll_event 40, recv 350, send 900, epoll_ctl 200), the
  // rest 0. rr_client_state_0/1: one send() per event, flow_mod() between the states. The client
  // thread's bill:
  //   the first send() at start: 1000; the item waits for EPOLLOUT (set up without a call);
  //   epoll_wait() 350 returns it writable, transfer 40, send() 1000;
  //   epoll_wait() 350 + 40, send() 1000, the request is out: epoll_ctl(MOD, EPOLLIN) 300;
  //   epoll_wait() 350, asleep until the response; transfer 40 + recv() 450 completes it (the
  //     load stops there: no next request);
  //   epoll_wait() 350, asleep for good.
  // System 1000 + 390 + 1000 + 390 + 1000 + 300 + 350 + 490 + 350 = 5270 ns, no user time. (With
  // the three send() calls in one handler it was 3000 + 350 + 490 + 350 = 4190: the two extra
  // epoll rounds and the epoll_ctl are the difference.)
  const auto sim = one_transaction(Json::parse(R"({"num_flows": 1, "num_threads": 1, "client_threads": 1,
                                                   "client_cpus": "1", "request_size": 3000,
                                                   "buffer_size": 1000, "num_transactions": 1})"),
                                   true);
  EXPECT_EQ(sim->workload().completed(), 1u);
  Kernel* ck = sim->client_kernel(0);
  ASSERT_NE(ck, nullptr);
  const Kernel::Snapshot snap = ck->snapshot();
  const auto sys = static_cast<std::size_t>(CpuClass::kSystem);
  const auto user = static_cast<std::size_t>(CpuClass::kUser);
  EXPECT_EQ(snap.cpu_time[1][sys], 5270);
  EXPECT_EQ(snap.cpu_time[1][user], 0);
}

TEST(TcpRrClientTest, PinCpuPinsClientThreadIToTheIthAllowedCpu) {
  // neper thread.c with -U: thread i's affinity is cpuset[i % allowed_cores], the allowed CPUs in
  // order. Three client threads on the client host's CPUs 0-1: masks {0}, {1}, {0}, each thread
  // started on its CPU. Without -U every thread may run on both.
  for (const bool pin : {true, false}) {
    Json params = Json::parse(R"({"num_flows": 3, "num_threads": 1, "client_threads": 3, "client_cpus": "0-1",
                                  "num_transactions": 1})");
    params["client_pin_cpu"] = pin;
    const auto sim = one_transaction(params, true);
    Kernel* ck = sim->client_kernel(0);
    ASSERT_NE(ck, nullptr);
    std::vector<const Task*> threads;
    for (const auto& t : ck->tasks())
      if (t->name.rfind("neper-client/", 0) == 0) threads.push_back(t.get());
    ASSERT_EQ(threads.size(), 3u);
    for (std::size_t i = 0; i < threads.size(); ++i) {
      const CpuMask& m = threads[i]->allowed;
      if (pin) {
        const int want = static_cast<int>(i % 2);
        EXPECT_TRUE(m.single()) << i;
        EXPECT_EQ(m.first(), want) << i;
        EXPECT_EQ(threads[i]->cpu, want) << i;
      } else {
        EXPECT_TRUE(m.test(0) && m.test(1)) << i;
      }
    }
  }
}

// summary.flows, the per-flow view: three flows, the run stopped by the first completed
// transaction (num_transactions 1): one flow has 1 transaction and a mean latency equal to the
// run's only sample, the other two 0; Jain's index (sum x)^2 / (n sum x^2) = 1 / 3.
TEST(TcpRrFlowsTest, ThePerFlowViewCountsEachFlowsTransactions) {
  const auto sim = one_transaction(Json::parse(R"({"num_flows": 3, "num_threads": 1, "num_transactions": 1})"), false);
  Json summary, workload;
  sim->workload().report(summary, workload);
  const Json& flows = summary["flows"];
  EXPECT_EQ(flows["count"].get<int>(), 3);
  EXPECT_EQ(flows["transactions"]["min"].get<double>(), 0.0);
  EXPECT_EQ(flows["transactions"]["p50"].get<double>(), 0.0);
  EXPECT_EQ(flows["transactions"]["max"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(flows["jain_index"].get<double>(), 1.0 / 3.0);
  const double only = summary["latency_ns"]["max"].get<double>();
  EXPECT_GT(only, 0.0);
  EXPECT_EQ(flows["mean_latency_ns"]["min"].get<double>(), only);
  EXPECT_EQ(flows["mean_latency_ns"]["max"].get<double>(), only);
}

}  // namespace
}  // namespace napisim
