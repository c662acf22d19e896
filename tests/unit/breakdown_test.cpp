// Unit tests of latency attribution: the kernel's receive-path stamps (Kernel::last_rx(), the path
// log of pipelined trains) and the waits' splits by what their CPU did (task and NAPI views)
// against hand-computed timelines, cut_rx() over them, LatencyBreakdown's cuts, splits and
// percentile bands, and the whole breakdown of one-flow two-host runs (tcp_rr with either client,
// super_netperf), stage by stage.
#include "sim/stats/breakdown.hpp"

#include <map>
#include <string>

#include <gtest/gtest.h>

#include "sim/params/json_util.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/simulation.hpp"
#include "sim/workloads/workload.hpp"
#include "tests/unit/kernel_rig.hpp"

namespace napisim {
namespace {

TEST(BreakdownTest, KernelStampsRingIrqAndPollOfEachTrain) {
  // One CPU, one queue with rx-usecs 10 / rx-frames 128; each packet costs rx_pkt_ns = 2 us.
  //  A arrives at 1 us: the moderation timer fires at 11, the IRQ schedules the NAPI (11) and
  //    the softirq at its exit polls at once: A is delivered at 13.
  //  B arrives at 12, during that poll, after the poll took its batch: the poll completes at 13
  //    and re-arms the CQ, which finds B and starts the timer again: IRQ and poll at 23, B
  //    delivered at 25. Of B's 11 us before its poll, 1 us (12-13) went to the poll ahead of it
  //    (ring, under the NAPI's previous schedule) and 10 us to moderation (irq).
  CostParams costs = zero_costs();
  costs.rx_pkt_ns = 2000;
  Rig r(shape(1), KernelParams{}, costs);
  NicParams np = one_queue_nic();
  np.rx_usecs = 10;
  np.rx_frames = 128;
  r.k.add_nic(np, "/nic");
  r.k.set_stamps(true);
  Socket& a = r.k.add_socket(0, 0);
  Socket& b = r.k.add_socket(0, 0);
  At at(r.host);
  at(us(1), [&] { r.k.nic_rx(0, pkt(a.id)); });
  at(us(12), [&] { r.k.nic_rx(0, pkt(b.id)); });
  r.run_to(us(100));
  const RxPath ap = r.k.last_rx(a.id);
  const RxPath bp = r.k.last_rx(b.id);
  EXPECT_EQ(ap.arrive, us(1));
  EXPECT_EQ(ap.sched, us(11));
  EXPECT_EQ(ap.poll, us(11));
  EXPECT_EQ(ap.ring, 0);
  EXPECT_EQ(ap.deliver, us(13));
  EXPECT_EQ(bp.arrive, us(12));
  EXPECT_EQ(bp.sched, us(23));
  EXPECT_EQ(bp.poll, us(23));
  EXPECT_EQ(bp.ring, us(1));
  EXPECT_EQ(bp.ring_sched, 0);
  EXPECT_EQ(bp.deliver, us(25));

  // B's request: sent at 10 us, on the wire until 12; its thread got the CPU at 30 after the
  // wakeup, epoll_wait() returned at 31, its handler began at 33 and ended at 40.
  std::vector<LatencyBreakdown::Stage> st = {{"wire", ""}};
  add_rx_stages(st, "server");
  st.push_back({"app", ""});
  LatencyBreakdown bd(st);
  LatencyBreakdown::Cut c(bd, us(10), us(40));
  c.next(0, bp.arrive);
  cut_rx(c, 1, RxMarks{bp, EpollStamp{us(31), us(30), {}, {}}, us(33)});
  c.record(9);
  const Json rep = bd.report({50});
  const Json& all = rep["bands"][2];
  ASSERT_EQ(all["band"], "all");
  const std::vector<std::pair<const char*, double>> want = {{"wire", 2000},
                                                            {"server.irq", 10000},
                                                            {"server.ring", 1000},
                                                            {"server.net_rx_wait", 0},
                                                            {"server.napi", 2000},
                                                            {"server.socket_queue", 0},
                                                            {"server.runq", 5000},
                                                            {"server.epoll_return", 1000},
                                                            {"server.epoll_batch", 2000},
                                                            {"app", 7000}};
  for (const auto& [name, ns] : want)
    EXPECT_EQ(all["stage_ns"][name].get<double>(), ns) << name;
  EXPECT_EQ(all["latency_ns"].get<double>(), 30000.0);
  EXPECT_EQ(rep["clamped"], 0u);

  // Had the thread been running when B was delivered (its last wakeup's first run at 20 < 25),
  // B waited in the socket's queue until epoll_wait() returned it (25 -> 31).
  LatencyBreakdown bd2(st);
  LatencyBreakdown::Cut c2(bd2, us(10), us(40));
  c2.next(0, bp.arrive);
  cut_rx(c2, 1, RxMarks{bp, EpollStamp{us(31), us(20), {}, {}}, us(33)});
  c2.record(9);
  const Json all2 = bd2.report({})["bands"][1];
  EXPECT_EQ(all2["stage_ns"]["server.socket_queue"].get<double>(), 6000.0);
  EXPECT_EQ(all2["stage_ns"]["server.runq"].get<double>(), 0.0);
  EXPECT_EQ(all2["stage_ns"]["server.epoll_return"].get<double>(), 0.0);
}

TEST(BreakdownTest, EachTrainOfASocketKeepsItsOwnStampsToTheReceiveQueue) {
  // Two trains of one socket in one poll, delivered directly or through an RPS backlog on
  // another CPU. One queue with rx-usecs 10 / rx-frames 128, IRQ on CPU 0, rx_pkt_ns = 2 us:
  //  A1 (1000 bytes) arrives at 1 us and starts the moderation timer: IRQ and NAPI schedule at 11;
  //  A2 (1000 bytes) arrives at 3 us. The poll at 11 takes both (4 us) and hands them up
  //    together at 15 (gro_normal_batch 8): each is delivered at 15 (RPS: the backlog on CPU 1,
  //    its IPI and poll free, also at 15), with its own arrival in the socket's log.
  for (const bool rps : {false, true}) {
    SCOPED_TRACE(rps ? "rps" : "direct");
    CostParams costs = zero_costs();
    costs.rx_pkt_ns = 2000;
    Rig r(shape(2), KernelParams{}, costs);
    NicParams np = one_queue_nic();
    np.rx_usecs = 10;
    np.rx_frames = 128;
    r.k.add_nic(np, "/nic");
    if (rps) r.k.enable_rps().map = {{1}};
    r.k.set_stamps(true);
    Socket& a = r.k.add_socket(0, 0);
    r.k.keep_path_log(a.id);
    At at(r.host);
    at(us(1), [&] { r.k.nic_rx(0, pkt(a.id)); });
    at(us(3), [&] { r.k.nic_rx(0, pkt(a.id)); });
    r.run_to(us(100));
    const RxPath first = r.k.path_through(a.id, 1000);
    EXPECT_EQ(first.arrive, us(1));
    EXPECT_EQ(first.sched, us(11));
    EXPECT_EQ(first.poll, us(11));
    EXPECT_EQ(first.deliver, us(15));
    const RxPath second = r.k.path_through(a.id, 2000);
    EXPECT_EQ(second.arrive, us(3));
    EXPECT_EQ(second.sched, us(11));
    EXPECT_EQ(second.poll, us(11));
    EXPECT_EQ(second.deliver, us(15));
    EXPECT_EQ(r.k.path_through(a.id, 1000).arrive, us(3));  // the first train's entry is passed
    EXPECT_EQ(r.k.last_rx(a.id).arrive, us(3));             // the last train's, as before
  }
}

// The `cls` entry of a ClassTimes.
Nanos of(const ClassTimes& t, CpuClass cls) {
  return t[static_cast<std::size_t>(cls)];
}

TEST(BreakdownTest, SocketQueueIsSplitByWhatTheReadersCpuDid) {
  // CPU 0 takes the queue's interrupts (rx_pkt_ns = 2 us, an IRQ per packet) and runs T, a user
  // hog that reads socket a; U, a SCHED_FIFO task on CPU 0, sleeps until 30 us (woken from CPU 1),
  // then runs 5 us and sleeps again. Every other cost 0.
  //   10 us  A for socket a arrives: the poll (softirq, on T's CPU) delivers it at 12.
  //   20 us  B for socket b arrives: softirq 20-22.
  //   30 us  U preempts T: U's user time 30-35; then T runs again.
  //   40 us  T's epoll_wait() would return a: A waited 28 us in the socket (T running or
  //          preempted since 0): T itself 8 + 8 + 5 us, softirq 2 us (B's poll), U's user 5 us.
  CostParams costs = zero_costs();
  costs.rx_pkt_ns = 2000;
  Rig r(shape(2), KernelParams{}, costs);
  r.k.add_nic(one_queue_nic(), "/nic");
  r.k.set_stamps(true);
  Socket& a = r.k.add_socket(0, 0);
  Socket& b = r.k.add_socket(0, 0);
  Task& t = r.k.create_task("t", TaskKind::kUser, r.only(0));
  start(r.k, t, hog(r.k, t), 0);
  a.reader = &t;
  WaitQueue wq;
  std::vector<Nanos> got;
  Task& u = r.k.create_task("u", TaskKind::kUser, r.only(0), SchedPolicy::kFifo, 0, 10);
  start(r.k, u, sleeper(r.k, u, wq, &got, us(5)), 0);
  At at(r.host);
  at(us(10), [&] { r.k.nic_rx(0, pkt(a.id)); });
  at(us(20), [&] { r.k.nic_rx(0, pkt(b.id)); });
  at(us(30), [&] { EXPECT_TRUE(r.k.wake_up(wq, 1)); });
  ClassTimes ret_view{};
  at(us(40), [&] { ret_view = r.k.task_view(t); });
  r.run_to(us(100));
  ASSERT_EQ(got, std::vector<Nanos>{us(30)});
  const RxPath& p = r.k.last_rx(a.id);
  EXPECT_EQ(p.deliver, us(12));
  const ClassTimes waited = ret_view - p.reader;
  EXPECT_EQ(waited[kSelf], us(21));
  EXPECT_EQ(of(waited, CpuClass::kSoftirq), us(2));
  EXPECT_EQ(of(waited, CpuClass::kUser), us(5));
  Nanos sum = 0;
  for (Nanos ns : waited)
    sum += ns;
  EXPECT_EQ(sum, us(28));

  // The same wait cut as a request's: its socket_queue stage and its sub-rows.
  std::vector<LatencyBreakdown::Stage> st = {{"wire", ""}};
  add_rx_stages(st, "server");
  st.push_back({"app", ""});
  LatencyBreakdown bd(st, wait_classes());
  LatencyBreakdown::Cut c(bd, us(9), us(41));
  c.next(0, p.arrive);
  cut_rx(c, 1, RxMarks{p, EpollStamp{us(40), 0, ret_view, {}}, us(40)});
  c.record(9);
  const Json all = bd.report({})["bands"][1];
  EXPECT_EQ(all["stage_ns"]["server.socket_queue"].get<double>(), 28000.0);
  EXPECT_EQ(all["split_ns"]["server.socket_queue[self]"].get<double>(), 21000.0);
  EXPECT_EQ(all["split_ns"]["server.socket_queue[softirq]"].get<double>(), 2000.0);
  EXPECT_EQ(all["split_ns"]["server.socket_queue[user]"].get<double>(), 5000.0);
  EXPECT_EQ(all["split_ns"]["server.socket_queue[idle]"].get<double>(), 0.0);
  EXPECT_EQ(bd.clamped(), 0u);
}

TEST(BreakdownTest, NetRxWaitIsSplitByWhatTheNapisCpuDid) {
  // A threaded NAPI whose kthread may only run on CPU 0, where U, a SCHED_FIFO task, runs user
  // code from 5 us (woken from CPU 1) to 30 us; rx_pkt_ns = 2 us, an IRQ per packet, every other
  // cost 0.
  //   10 us  A arrives: the IRQ schedules the NAPI and wakes its kthread, which waits behind U.
  //   15 us  B arrives, the interrupt masked: it enters the ring only at the poll (no event),
  //          and its wait is taken from CPU 0's accounting at U's end (napi_wait_observe()).
  //   30 us  U sleeps; the kthread polls both, delivered at 34.
  // A waited 20 us for NET_RX, B 15 us: all of it U's user time.
  CostParams costs = zero_costs();
  costs.rx_pkt_ns = 2000;
  Rig r(shape(2), KernelParams{}, costs);
  r.k.add_nic(one_queue_nic(), "/nic");
  r.k.napi_kthread_create(*r.k.napis()[0], r.only(0), SchedPolicy::kNormal, 0, 0);
  Kernel::napi_set_threaded(*r.k.napis()[0], true);
  r.k.set_stamps(true);
  Socket& a = r.k.add_socket(0, 0);
  Socket& b = r.k.add_socket(0, 0);
  WaitQueue wq;
  std::vector<Nanos> got;
  Task& u = r.k.create_task("u", TaskKind::kUser, r.only(0), SchedPolicy::kFifo, 0, 10);
  start(r.k, u, sleeper(r.k, u, wq, &got, us(25)), 0);
  At at(r.host);
  at(us(5), [&] { EXPECT_TRUE(r.k.wake_up(wq, 1)); });
  at(us(10), [&] { r.k.nic_rx(0, pkt(a.id)); });
  at(us(15), [&] { r.k.nic_deliver(0, pkt(b.id), r.k.now()); });
  r.run_to(us(100));
  for (const auto& [sock, arrive, wait] : {std::tuple{a.id, us(10), us(20)}, std::tuple{b.id, us(15), us(15)}}) {
    const RxPath& p = r.k.last_rx(sock);
    EXPECT_EQ(p.arrive, arrive) << sock;
    EXPECT_EQ(p.sched, us(10)) << sock;
    EXPECT_EQ(p.poll, us(30)) << sock;
    EXPECT_EQ(p.deliver, us(34)) << sock;
    EXPECT_EQ(p.ring, 0) << sock;
    EXPECT_EQ(of(p.net_rx_wait, CpuClass::kUser), wait) << sock;
    Nanos sum = 0;
    for (Nanos ns : p.net_rx_wait)
      sum += ns;
    EXPECT_EQ(sum, wait) << sock;
  }
}

TEST(BreakdownTest, BandsHoldTheRequestsBetweenPercentiles) {
  // Nine requests of 100 ns (60 + 40) and one of 1000 ns (100 + 900). p50 and p90 are both 100
  // (the 9th of 10 samples), so p0-p50 holds the nine, p50-p90 none, p90-p100 the slow one.
  LatencyBreakdown bd(std::vector<LatencyBreakdown::Stage>{{"a", "first"}, {"b", "second"}});
  for (int i = 0; i < 9; ++i) {
    LatencyBreakdown::Cut c(bd, 1000, 1100);
    c.next(0, 1060);
    c.record(1);
  }
  LatencyBreakdown::Cut c(bd, 5000, 6000);
  c.next(0, 5100);
  c.record(1);
  const Json rep = bd.report({90, 50});
  ASSERT_EQ(rep["stages"], Json::array({"a", "b"}));
  const Json& bands = rep["bands"];
  ASSERT_EQ(bands.size(), 4u);
  EXPECT_EQ(bands[0]["band"], "p0-p50");
  EXPECT_EQ(bands[0]["requests"], 9u);
  EXPECT_EQ(bands[0]["stage_ns"]["a"].get<double>(), 60.0);
  EXPECT_EQ(bands[0]["stage_ns"]["b"].get<double>(), 40.0);
  EXPECT_EQ(bands[1]["band"], "p50-p90");
  EXPECT_EQ(bands[1]["requests"], 0u);
  EXPECT_EQ(bands[2]["band"], "p90-p100");
  EXPECT_EQ(bands[2]["requests"], 1u);
  EXPECT_EQ(bands[2]["stage_ns"]["a"].get<double>(), 100.0);
  EXPECT_EQ(bands[2]["stage_ns"]["b"].get<double>(), 900.0);
  EXPECT_EQ(bands[2]["latency_ns"].get<double>(), 1000.0);
  EXPECT_EQ(bands[3]["band"], "all");
  EXPECT_EQ(bands[3]["requests"], 10u);
  EXPECT_EQ(bands[3]["stage_ns"]["a"].get<double>(), 64.0);
  EXPECT_EQ(bands[3]["stage_ns"]["b"].get<double>(), 126.0);
  EXPECT_EQ(bands[3]["latency_ns"].get<double>(), 190.0);
}

TEST(BreakdownTest, SplitStagesHaveSubRowsThatSumToThem) {
  // Stage "wait" split into classes x and y. Request 1: wait 30 = x 10 + y 20. Request 2: wait
  // 20, split x 5 + y 5 (10 short, as no kernel split should ever be): the difference goes to
  // the largest row (the first of equals: x becomes 15) and the request counts as clamped.
  // Request 3: wait 0, x -4 + y 4: the negative row becomes 0 and y gives back its 4.
  LatencyBreakdown bd({{"a", ""}, {"wait", "", true}, {"b", ""}}, {"x", "y"});
  auto cut = [&](Nanos wait, Nanos x, Nanos y) {
    LatencyBreakdown::Cut c(bd, 0, 100);
    c.next(0, 10);
    c.next(1, 10 + wait);
    const Nanos by[] = {x, y};
    c.by_class(1, by);
    c.record(2);
  };
  cut(30, 10, 20);
  EXPECT_EQ(bd.clamped(), 0u);
  cut(20, 5, 5);
  EXPECT_EQ(bd.clamped(), 1u);
  cut(0, -4, 4);
  EXPECT_EQ(bd.clamped(), 2u);
  const Json rep = bd.report({});
  EXPECT_EQ(rep["splits"], Json::array({"wait[x]", "wait[y]"}));
  const Json& all = rep["bands"][1];
  EXPECT_EQ(all["stage_ns"]["wait"].get<double>(), 50.0 / 3);
  EXPECT_EQ(all["split_ns"]["wait[x]"].get<double>(), 25.0 / 3);
  EXPECT_EQ(all["split_ns"]["wait[y]"].get<double>(), 25.0 / 3);
  EXPECT_EQ(all["latency_ns"].get<double>(), 100.0);  // the sub-rows are not stages
  // Without classes nothing is split.
  LatencyBreakdown whole({{"a", ""}, {"wait", "", true}});
  EXPECT_EQ(whole.report({})["splits"], Json::array());
}

TEST(BreakdownTest, MarksOutOfOrderAreClampedCountedAndStillSumToTheLatency) {
  // A mark before the previous one (or after the end) gives its stage 0 (the rest goes to the
  // next), is counted, and the request's stages still sum to end - begin.
  LatencyBreakdown bd(std::vector<LatencyBreakdown::Stage>{{"a", ""}, {"b", ""}, {"c", ""}});
  LatencyBreakdown::Cut c(bd, 0, 100);
  c.next(0, 50);
  c.next(1, 40);  // before a's end: b = 0
  c.record(2);
  LatencyBreakdown::Cut late(bd, 0, 100);
  late.next(0, 150);  // after the end: a = 100
  late.record(2);
  const Json all = bd.report({})["bands"][1];
  EXPECT_EQ(all["stage_ns"]["a"].get<double>(), 75.0);
  EXPECT_EQ(all["stage_ns"]["b"].get<double>(), 0.0);
  EXPECT_EQ(all["stage_ns"]["c"].get<double>(), 25.0);
  EXPECT_EQ(all["latency_ns"].get<double>(), 100.0);
  EXPECT_EQ(bd.clamped(), 2u);
}

/// quickstart shrunk to two 2-CPU hosts (the Linux client like the server), one queue with its
/// IRQ on CPU 0 and rx-usecs 8 / rx-frames 128, every cost 0 but rx_pkt_ns 1000, rx_skb_ns 400,
/// wakeup_ns 600, send_ns 2000, recv_ns 500, epoll_ctl_ns 300 and ctx_switch_ns 1500; a 1 ms
/// window after 1 ms. `params` are tcp_rr's unless the caller sets another workload.
Json one_flow_scenario(const Json& params) {
  CostParams costs = zero_costs();
  costs.rx_pkt_ns = 1000;
  costs.rx_skb_ns = 400;
  costs.wakeup_ns = 600;
  costs.send_ns = 2000;
  costs.recv_ns = 500;
  costs.epoll_ctl_ns = 300;
  costs.ctx_switch_ns = 1500;
  Json doc = default_scenario();
  doc["costs"] = params_to_json(costs);
  doc["topology"]["cores_per_llc"] = 2;
  doc["nics"] = Json::parse(R"([{"queues": 1, "irq_affinity": "0", "rx_usecs": 8, "rx_frames": 128}])");
  doc["kernel"] = Json::parse(R"({"cache_model": false})");
  doc["workload"]["params"] = params;
  apply_overrides(doc, {"warmup_s=0.001", "duration_s=0.001"});
  return doc;
}

/// The result of a run of `doc` with run --explain.
Json explained_run(const Json& doc) {
  const Scenario s = parse_scenario(doc);
  Simulation sim(s, Simulation::standalone_paths(s));
  sim.set_explain();
  sim.run_standalone();
  return sim.result(Json::object());
}

TEST(BreakdownTest, OneFlowBetweenTwoHostsHandChecked) {
  // quickstart shrunk to one flow between two 2-CPU hosts (the Linux client like the server), one
  // queue with its IRQ on CPU 0 and rx-usecs 8 / rx-frames 128, every cost 0 but those set here.
  // Each transaction, the same every time:
  //   client.send    send_ns                                               2000
  //   wire.request   5 us link + 91 wire bytes at 0.08 ns/B on each port   5014
  //   server.irq     the moderation timer                                  8000
  //   server.napi    rx_pkt_ns + rx_skb_ns + wakeup_ns (a waiter)          2000
  //   server.runq    the woken thread's CPU is idle                           0
  //   server.epoll_return   ctx_switch_ns                                  1500
  //   server.app     recv_ns + epoll_ctl_ns (MOD, EPOLLOUT)                  800
  //   server.epollout  ep_modify() queued it: the next epoll_wait() is free    0
  //   server.send    send_ns                                               2000
  //   wire.response, client.irq, client.napi, client.epoll_return as the server's
  //   client.app     recv_ns                                                500
  const Json r = explained_run(one_flow_scenario(
      Json::parse(R"({"num_flows": 1, "num_threads": 1, "server_user_ns": 0, "client_user_ns": 0})")));
  const std::map<std::string, double> want = {
      {"client.send", 2000},         {"wire.request", 5014}, {"server.irq", 8000},          {"server.napi", 2000},
      {"server.epoll_return", 1500}, {"server.app", 800},    {"server.send", 2000},         {"wire.response", 5014},
      {"client.irq", 8000},          {"client.napi", 2000},  {"client.epoll_return", 1500}, {"client.app", 500}};
  const Json& bd = r.at("latency_breakdown");
  EXPECT_EQ(bd.at("clamped"), 0u);
  for (const Json& band : bd.at("bands")) {
    if (band.at("requests") == 0u) continue;
    for (const auto& [name, ns] : band.at("stage_ns").items()) {
      const auto it = want.find(name);
      EXPECT_EQ(ns.get<double>(), it == want.end() ? 0.0 : it->second) << band.at("band") << " " << name;
    }
    EXPECT_EQ(band.at("latency_ns").get<double>(), 38328.0);
  }
  EXPECT_EQ(bd.at("bands").back().at("requests"), r.at("histogram").at("count"));
  EXPECT_GT(r.at("histogram").at("count").get<int>(), 20);
  EXPECT_EQ(r.at("summary").at("latency_ns").at("max").get<double>(), 38328.0);
}

TEST(BreakdownTest, IdealisedClientCutsTheResponseAtItsTransmit) {
  // The one-flow run above with the idealised client (client_tx_ns = client_rx_ns = 3 us): the
  // client computes its side inside the response's transmit, so the cut must already see that
  // transmit. The server's stages are those above (server.send = send_ns, 2000); the client's
  // stack is client.send and client.app, 3000 each, and its receive path 0.
  Json doc = one_flow_scenario(Json::parse(
      R"({"num_flows": 1, "num_threads": 1, "server_user_ns": 0, "client_tx_ns": 3000, "client_rx_ns": 3000})"));
  doc["platform"] = Json::parse(R"({"clients": [{"stack": "idealised"}]})");
  const Json r = explained_run(doc);
  const Json& bd = r.at("latency_breakdown");
  EXPECT_EQ(bd.at("clamped"), 0u);
  const Json& all = bd.at("bands").back();
  ASSERT_GT(all.at("requests").get<int>(), 20);
  const Json& ns = all.at("stage_ns");
  EXPECT_EQ(ns.at("client.send").get<double>(), 3000.0);
  EXPECT_EQ(ns.at("server.irq").get<double>(), 8000.0);
  EXPECT_EQ(ns.at("server.napi").get<double>(), 2000.0);
  EXPECT_EQ(ns.at("server.epoll_return").get<double>(), 1500.0);
  EXPECT_EQ(ns.at("server.app").get<double>(), 800.0);
  EXPECT_EQ(ns.at("server.send").get<double>(), 2000.0);
  EXPECT_EQ(ns.at("client.app").get<double>(), 3000.0);
  for (const char* rx : {"irq", "ring", "net_rx_wait", "napi", "socket_queue", "runq", "epoll_return", "epoll_batch"})
    EXPECT_EQ(ns.at(std::string("client.") + rx).get<double>(), 0.0) << rx;
  EXPECT_EQ(all.at("latency_ns").get<double>(), r.at("summary").at("latency_ns").at("max").get<double>());
}

TEST(BreakdownTest, SuperNetperfOneInstanceHandChecked) {
  // The same two hosts with one netperf TCP_RR instance (1-byte request and response, no user
  // work). netserver's child and netperf block in recv() (sk_wait_data), no epoll: the recv()'s
  // return ends epoll_return, which holds the context switch and the recv() syscall. Each
  // transaction:
  //   client.send     send_ns                                              2000
  //   wire.request    as tcp_rr's                                          5014
  //   server.irq      the moderation timer                                 8000
  //   server.napi     rx_pkt_ns + rx_skb_ns + wakeup_ns (the child waits)  2000
  //   server.runq     the woken child's CPU is idle                           0
  //   server.epoll_return  ctx_switch_ns + recv_ns                         2000
  //   server.send     send_ns                                              2000
  //   wire.response, client.irq, client.napi, client.epoll_return as the server's
  //   client.app      netperf stops its clock as recv() returns               0
  Json doc = one_flow_scenario(Json::parse(R"({"num_instances": 1, "server_user_ns": 0, "client_user_ns": 0})"));
  doc["workload"]["type"] = "super_netperf";
  const Json r = explained_run(doc);
  const std::map<std::string, double> want = {
      {"client.send", 2000},         {"wire.request", 5014},       {"server.irq", 8000},    {"server.napi", 2000},
      {"server.epoll_return", 2000}, {"server.send", 2000},        {"wire.response", 5014}, {"client.irq", 8000},
      {"client.napi", 2000},         {"client.epoll_return", 2000}};
  const Json& bd = r.at("latency_breakdown");
  EXPECT_EQ(bd.at("clamped"), 0u);
  for (const Json& band : bd.at("bands")) {
    if (band.at("requests") == 0u) continue;
    for (const auto& [name, ns] : band.at("stage_ns").items()) {
      const auto it = want.find(name);
      EXPECT_EQ(ns.get<double>(), it == want.end() ? 0.0 : it->second) << band.at("band") << " " << name;
    }
    EXPECT_EQ(band.at("latency_ns").get<double>(), 38028.0);
  }
  EXPECT_GT(r.at("histogram").at("count").get<int>(), 20);
  EXPECT_EQ(r.at("summary").at("latency_ns").at("max").get<double>(), 38028.0);
}

}  // namespace
}  // namespace napisim
