// Both ends of the wire are Linux hosts (ClientSpec "stack": "linux"): neper's client process runs
// on the client host's own kernel, with its own -T, flows in contiguous blocks per thread
// (thread.c flows_in_thread), and the client host's CPU, IRQs and NAPI polls are reported beside
// the server's.
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "sim/params/json_util.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/simulation.hpp"
#include "sim/workloads/client_uplink.hpp"
#include "sim/workloads/tcp_rr.hpp"
#include "tests/unit/zero_fields.hpp"

namespace napisim {
namespace {

TEST(TwoHostTest, FlowsInThreadGivesContiguousBlocksFirstOnesLonger) {
  // neper thread.c: 10 flows over 4 threads -> 3, 3, 2, 2.
  std::vector<std::size_t> n;
  for (std::size_t t = 0; t < 4; ++t)
    n.push_back(flows_in_thread(10, 4, t));
  EXPECT_EQ(n, (std::vector<std::size_t>{3, 3, 2, 2}));
  EXPECT_EQ(flows_in_thread(3, 4, 3), 0u);
  EXPECT_EQ(flows_in_thread(8, 4, 0), 2u);
}

// Both ends of a connection to a Linux client host run the kernels' TCP (sim/kernel/tcp.hpp),
// established with the handshake's RTT sample: a SYN and a SYN-ACK across the path (5 us each way,
// plus 90 bytes at 100 Gb/s, 7.2 ns), 10.014 us, 10 us in tcp_rtt_estimator()'s microseconds. A
// segment the client sends crosses its NIC's port (1090 bytes: 87 ns), the link and the server
// NIC's ingress port (87 ns more). Drops are left to TCP: nothing else resends them.
TEST(TwoHostTest, BothEndsOfAConnectionRunTheKernelsTcp) {
  HostModel host;
  TopologyParams tp;
  tp.numa_nodes = tp.llcs_per_node = tp.cores_per_llc = tp.threads_per_core = 1;
  const Topology topo(tp);
  const CostParams costs = testing::all_zero<CostParams>();
  Kernel server(host, topo, KernelParams{}, costs);
  Kernel client(host, topo, KernelParams{}, costs);
  NicParams np;
  np.queues = 1;
  server.add_nic(np, "/nic");
  client.add_nic(np, "/nic");
  LinuxClients clients;
  ClientPath path;  // 5 us away at 100 Gb/s, the server's NIC 0
  path.kernel = &client;
  clients.setup(server, {path});
  const FlowTuple tuple{0x0a000102u, 0x0a000001u, 40000, 12867};
  Socket& ss = server.add_socket(0, tuple);
  const int csock = clients.add_socket(0, ss.id, tuple);
  EXPECT_EQ(csock, 0);
  EXPECT_EQ(clients.server_sock(0, 0), ss.id);
  Socket& cs = client.socket(csock);
  ASSERT_NE(ss.tcp, nullptr);
  ASSERT_NE(cs.tcp, nullptr);
  EXPECT_EQ(ss.tcp->srtt_us >> 3, 10);
  EXPECT_EQ(cs.tcp->srtt_us >> 3, 10);
  EXPECT_EQ(cs.tcp->snd_wnd, server.tcp_initial_window());
  client.tcp_sendmsg(Ctx{0, nullptr, 0, CpuClass::kSystem}, cs, 1000);
  EXPECT_EQ(client.nics()[0]->tx_port.busy_until, 87);
  EXPECT_EQ(server.nics()[0]->rx_port.busy_until, 87 + 5000 + 87);
  host.advance_to(us(100));
  EXPECT_EQ(ss.rx_avail, 1000);
}

struct TwoHostRun {
  Json result;
  std::vector<std::string> client_tasks;  // the client kernel's user tasks, by name
  std::vector<int> flows_per_thread;
  std::uint64_t client_wakeups = 0;  // of the client's user tasks
};

TwoHostRun run_two_hosts(const std::vector<std::string>& sets) {
  Json doc = default_scenario();
  apply_overrides(doc, {"warmup_s=0.002", "duration_s=0.006", "workload.params.num_flows=10",
                        "workload.params.num_threads=2", "workload.params.client_threads=4"});
  apply_overrides(doc, sets);
  const Scenario s = parse_scenario(doc);
  Simulation sim(s, Simulation::standalone_paths(s));
  sim.run_standalone();
  TwoHostRun out;
  out.result = sim.result(Json::object());
  Kernel* ck = sim.client_kernel(0);
  EXPECT_NE(ck, nullptr);
  if (ck) {
    for (const auto& t : ck->tasks())
      if (t->kind == TaskKind::kUser) {
        out.client_tasks.push_back(t->name);
        out.client_wakeups += t->wakeups;
      }
    // The client sockets are created in flow order (ids 0..9): which thread's epoll watches each.
    out.flows_per_thread.assign(out.client_tasks.size(), 0);
    for (int sock = 0; sock < 10; ++sock)
      ++out.flows_per_thread.at(static_cast<std::size_t>(ck->socket(sock).ep->id));
  }
  return out;
}

TEST(TwoHostTest, TheDefaultClientIsALinuxHostReportedBesideTheServer) {
  const TwoHostRun r = run_two_hosts({});
  const Json& res = r.result;
  EXPECT_EQ(res["scenario"]["platform"]["clients"][0]["stack"], "linux");
  // neper's client process: its own -T (4, not the server's 2), 10 flows as 3, 3, 2, 2.
  EXPECT_EQ(r.client_tasks,
            (std::vector<std::string>{"neper-client/0", "neper-client/1", "neper-client/2", "neper-client/3"}));
  EXPECT_EQ(r.flows_per_thread, (std::vector<int>{3, 3, 2, 2}));
  ASSERT_TRUE(res.contains("clients"));
  const Json& c = res["clients"]["client0"];
  EXPECT_EQ(c["host"], "client0");
  // Every packet one host sends, the other receives: requests and responses cross both NICs.
  const auto tx = [](const Json& j) { return j["tx_packets"].get<std::int64_t>(); };
  const auto rx = [](const Json& j) { return j["rx_packets"].get<std::int64_t>(); };
  EXPECT_NEAR(static_cast<double>(rx(c)), static_cast<double>(tx(res["summary"])), 20.0);
  EXPECT_NEAR(static_cast<double>(rx(res["summary"])), static_cast<double>(tx(c)), 20.0);
  EXPECT_GT(c["irqs"].get<std::int64_t>(), 0);
  EXPECT_GT(c["napi_polls"].get<std::int64_t>(), 0);
  EXPECT_GT(c["cpu"]["cpu_us_per_op"].get<double>(), 0.0);
  // The client's CPU time adds up on each of its CPUs, and its threads did user and system work.
  double user = 0;
  for (const Json& pc : c["per_cpu"]) {
    double sum = 0;
    for (const auto& [k, v] : pc["by_class_pct"].items())
      sum += v.get<double>();
    EXPECT_NEAR(sum, 100.0, 1e-6) << "client cpu " << pc["cpu"];
    user += pc["by_class_pct"]["user"].get<double>();
  }
  EXPECT_GT(user, 0.0);
  const Json& cons = res["conservation"];
  EXPECT_EQ(cons["sent"].get<std::uint64_t>(),
            cons["answered"].get<std::uint64_t>() + cons["in_flight"].get<std::uint64_t>());
  EXPECT_GT(res["summary"]["transactions"].get<std::int64_t>(), 0);
  // Same seed, same bytes.
  EXPECT_EQ(run_two_hosts({}).result.dump(), res.dump());
}

TEST(TwoHostTest, TheClientHostRunsItsOwnReceivePathModel) {
  // The client inherits the server's softirq NAPI unless told otherwise: with threaded NAPI on
  // the client only, its NAPI work is kthread time there and softirq time stays on the server.
  const TwoHostRun r = run_two_hosts({R"(platform.clients=[{"models": [{"name": "napi_threaded"}]}])"});
  const Json& c = r.result["clients"]["client0"]["cpu"]["by_class_pct"];
  const Json& s = r.result["summary"]["cpu"]["by_class_pct"];
  EXPECT_GT(c["kthread"].get<double>(), 0.0);
  EXPECT_EQ(c["softirq"].get<double>() + c["ksoftirqd"].get<double>(), 0.0);
  EXPECT_GT(s["softirq"].get<double>() + s["ksoftirqd"].get<double>(), 0.0);
  EXPECT_EQ(s["kthread"].get<double>(), 0.0);
}

TEST(TwoHostTest, TheClientThreadsCanBusyLoopOnEpollWait) {
  // client_epoll_timeout 0: neper's client threads call epoll_wait(0) until events come instead of
  // sleeping in it; they are never woken, and the empty calls are busy_spin time on the client.
  const TwoHostRun block = run_two_hosts({}), spin = run_two_hosts({"workload.params.client_epoll_timeout=0"});
  EXPECT_GT(block.client_wakeups, 100u);
  EXPECT_EQ(spin.client_wakeups, 0u);
  const auto cls = [](const TwoHostRun& r, const char* c) {
    return r.result["clients"]["client0"]["cpu"]["by_class_pct"][c].get<double>();
  };
  EXPECT_EQ(cls(block, "busy_spin"), 0.0);
  EXPECT_GT(cls(spin, "busy_spin"), cls(block, "system"));
  EXPECT_GT(spin.result["summary"]["transactions"].get<std::int64_t>(), 0);
}

TEST(TwoHostTest, ChrtOfTheServerAndClientThreads) {
  // chrt -f 10 for neper's server, chrt -r 20 for its client: each host's threads get their own
  // policy and priority (the kernel's sched_setscheduler() attributes), and the run goes on.
  Json doc = default_scenario();
  apply_overrides(doc, {"warmup_s=0.002", "duration_s=0.004", "workload.params.num_flows=8",
                        "workload.params.server_policy=fifo", "workload.params.server_rt_priority=10",
                        "workload.params.client_policy=rr", "workload.params.client_rt_priority=20"});
  const Scenario s = parse_scenario(doc);
  Simulation sim(s, Simulation::standalone_paths(s));
  sim.run_standalone();
  int server = 0, client = 0;
  for (const auto& t : sim.kernel().tasks()) {
    if (t->name.rfind("tcp_rr/", 0) != 0) continue;
    ++server;
    EXPECT_EQ(t->se.policy, SchedPolicy::kFifo);
    EXPECT_EQ(t->se.rt_priority, 10);
  }
  for (const auto& t : sim.client_kernel(0)->tasks()) {
    if (t->name.rfind("neper-client/", 0) != 0) continue;
    ++client;
    EXPECT_EQ(t->se.policy, SchedPolicy::kRr);
    EXPECT_EQ(t->se.rt_priority, 20);
  }
  EXPECT_EQ(server, 4);
  EXPECT_EQ(client, 4);
  EXPECT_GT(sim.result(Json::object())["summary"]["transactions"].get<std::int64_t>(), 0);
}

// Every workload with a Linux client takes chrt and nice for its threads on both hosts: each user
// thread of the server kernel gets the server_* settings, each of the client kernel the client_*.
TEST(TwoHostTest, EveryWorkloadTakesChrtAndNiceOnBothHosts) {
  const std::vector<std::pair<std::string, Json>> loads = {
      {"tcp_rr", {{"num_flows", 8}, {"num_threads", 2}}},
      {"app", {{"num_flows", 8}, {"num_threads", 2}, {"client_threads", 2}}},
      {"mutilate", {{"qps", 20000}, {"threads", 2}, {"connections", 2}, {"server_threads", 2}}},
      {"super_netperf", {{"num_instances", 4}}}};
  for (const auto& [type, params] : loads) {
    Json doc = default_scenario();
    doc["warmup_s"] = 0.002;
    doc["duration_s"] = 0.004;
    doc["workload"] = {{"type", type}, {"params", params}};
    Json& p = doc["workload"]["params"];
    p["server_policy"] = "fifo";
    p["server_rt_priority"] = 10;
    p["server_nice"] = -5;
    p["client_policy"] = "batch";
    p["client_nice"] = 7;
    const Scenario s = parse_scenario(doc);
    Simulation sim(s, Simulation::standalone_paths(s));
    sim.run_standalone();
    int server = 0, client = 0;
    for (const auto& t : sim.kernel().tasks()) {
      if (t->kind != TaskKind::kUser) continue;
      ++server;
      EXPECT_EQ(t->se.policy, SchedPolicy::kFifo) << type << " " << t->name;
      EXPECT_EQ(t->se.rt_priority, 10) << type << " " << t->name;
      EXPECT_EQ(t->se.nice, -5) << type << " " << t->name;
    }
    for (const auto& t : sim.client_kernel(0)->tasks()) {
      if (t->kind != TaskKind::kUser) continue;
      ++client;
      EXPECT_EQ(t->se.policy, SchedPolicy::kBatch) << type << " " << t->name;
      EXPECT_EQ(t->se.nice, 7) << type << " " << t->name;
    }
    EXPECT_GT(server, 0) << type;
    EXPECT_GT(client, 0) << type;
    EXPECT_GT(sim.result(Json::object())["summary"]["transactions"].get<std::int64_t>(), 0) << type;
  }
}

TEST(TwoHostTest, IdealisedClientHasNoClientHost) {
  const TwoHostRun r = [] {
    Json doc = default_scenario();
    apply_overrides(doc, {"warmup_s=0.002", "duration_s=0.004", R"(platform.clients=[{"stack": "idealised"}])"});
    const Scenario s = parse_scenario(doc);
    Simulation sim(s, Simulation::standalone_paths(s));
    EXPECT_EQ(sim.client_kernel(0), nullptr);
    sim.run_standalone();
    return TwoHostRun{sim.result(Json::object()), {}, {}};
  }();
  EXPECT_FALSE(r.result.contains("clients"));
  EXPECT_GT(r.result["summary"]["transactions"].get<std::int64_t>(), 0);
  // Without a client host the flows are grouped on the server only.
  const Json& by = r.result["summary"]["flows"]["mean_latency_explained_by"];
  EXPECT_TRUE(by.contains("server_rx_queue"));
  EXPECT_FALSE(by.contains("client_thread"));
}

TEST(TwoHostTest, TheFlowsAreGroupedByTheirQueuesAndThreadsOnBothHosts) {
  // Thread = RX queue (flow_steering rx_queue, 4 threads on 4 queues): the two groupings are the
  // same partition of the flows, so they explain the same share, whatever it is; the client's
  // threads (contiguous blocks) are another.
  const TwoHostRun r = run_two_hosts(
      {"workload.params.num_flows=24", "workload.params.num_threads=4", "workload.params.flow_steering=rx_queue"});
  const Json& by = r.result["summary"]["flows"]["mean_latency_explained_by"];
  ASSERT_TRUE(by.contains("client_thread"));
  ASSERT_TRUE(by.contains("client_rx_queue"));
  const double queue = by["server_rx_queue"].get<double>();
  EXPECT_GT(queue, 0.0);
  EXPECT_DOUBLE_EQ(by["server_thread"].get<double>(), queue);
  EXPECT_NE(by["client_thread"].get<double>(), queue);
  for (const auto& [name, share] : by.items()) {
    EXPECT_GE(share.get<double>(), 0.0) << name;
    EXPECT_LE(share.get<double>(), 1.0) << name;
  }
}

}  // namespace
}  // namespace napisim
