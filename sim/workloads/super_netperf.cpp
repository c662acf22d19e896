#include "sim/workloads/super_netperf.hpp"

#include <algorithm>
#include <cmath>

#include "sim/hw/rss.hpp"

namespace napisim {

void SuperNetperf::setup(Kernel& k, const std::vector<ClientPath>& paths, const RngRoot& rng) {
  k_ = &k;
  paths_ = paths;
  k.set_peer(this);
  uplink_.setup(k, paths_);
  const int n = k.nr_cpus();
  const CpuMask allowed = CpuMask::parse(p_.netserver_cpus, n, "/workload/params/netserver_cpus");
  start_rng_ = rng.stream("super_netperf/instances");
  clients_.setup(k, paths_);
  for (std::int64_t i = 0; i < p_.num_instances; ++i) {
    const int host = static_cast<int>(i % static_cast<std::int64_t>(paths_.size()));
    // netperf's data connection: an ephemeral client port to netserver's data port.
    const FlowTuple tuple{0x0a000002u + (static_cast<std::uint32_t>(host) << 8), 0x0a000001u,
                          static_cast<std::uint16_t>(32768 + i % 28000), static_cast<std::uint16_t>(12866 + i / 28000)};
    const int nic = paths_[static_cast<std::size_t>(host)].nic;
    Socket& s = k.add_socket(nic, tuple);
    if (conns_.size() <= static_cast<std::size_t>(s.id)) conns_.resize(static_cast<std::size_t>(s.id) + 1);
    Conn& c = conns_[static_cast<std::size_t>(s.id)];
    c.sock = s.id;
    c.host = host;
    // netserver's child for this connection (fork()ed: placed by the scheduler, started where
    // the parent accepted, spread here over the allowed CPUs).
    Task& t = create_user_thread(k, "netserver/" + std::to_string(i), allowed, p_.server_policy, p_.server_rt_priority,
                                 p_.server_nice);
    t.body = netserver_child(t, s.id);
    s.reader = &t;
    k.start_task(t, thread_home(allowed, i, false).cpu);
    Kernel* ck = paths_[static_cast<std::size_t>(host)].kernel;
    if (!ck) continue;
    // The netperf process on its client host, started by the super_netperf shell loop (spread
    // over the allowed CPUs, as the children above).
    c.csock = clients_.add_socket(host, s.id, tuple);
    const CpuMask mask = CpuMask::parse(p_.client_cpus, ck->nr_cpus(), "/workload/params/client_cpus");
    Task& ct = create_user_thread(*ck, "netperf/" + std::to_string(i), mask, p_.client_policy, p_.client_rt_priority,
                                  p_.client_nice);
    ct.body = netperf(ct, s.id);
    ck->socket(c.csock).reader = &ct;
    const int cpu = static_cast<int>(i % ck->nr_cpus());
    ck->start_task(ct, mask.test(cpu) ? cpu : mask.first());
  }
}

Proc<void> SuperNetperf::netperf(Task& t, int sock) {
  // send_omni_inner() for TCP_RR: timestamp, send() the request, recv() until the response is
  // whole, timestamp and HIST_add() (-j), and the next request.
  Conn& c = conns_[static_cast<std::size_t>(sock)];  // runs after setup(): conns_ has its size
  Kernel& ck = *paths_[static_cast<std::size_t>(c.host)].kernel;
  Socket& cs = ck.socket(c.csock);
  for (;;) {
    c.req_start = ck.now();
    c.in_flight = true;
    ++sent_;
    co_await ck.sys_send(t, cs, p_.request_size);
    if (breakdown_) marks_[static_cast<std::size_t>(sock)].req_tx = cs.stamp_tx;
    std::int64_t got = 0;
    while (got < p_.response_size)
      got += co_await ck.sys_recv_wait(t, cs, p_.response_size - got);
    // A blocking recv(): its return plays epoll_wait()'s part, and the handler starts with it.
    if (breakdown_) {
      ck.stamp_epoll_return(t);
      marks_[static_cast<std::size_t>(sock)].cli = RxMarks{ck.last_rx(cs.id), t.epoll_stamp, ck.now()};
    }
    complete(c, ck.now());
    co_await ck.exec(ck.task_ctx(t, CpuClass::kUser), p_.client_user_ns);
  }
}

Proc<void> SuperNetperf::netserver_child(Task& t, int sock) {
  // recv_omni() for TCP_RR: recv() until the request is complete, then send() the response.
  Kernel& k = *k_;
  Socket& s = k.socket(sock);
  std::int64_t got = 0;
  for (;;) {
    got += co_await k.sys_recv_wait(t, s, p_.request_size - got);  // blocking recv()
    if (got < p_.request_size) continue;
    got = 0;
    Marks* m = breakdown_ ? &marks_[static_cast<std::size_t>(sock)] : nullptr;
    if (m) {
      k.stamp_epoll_return(t);
      m->srv = RxMarks{k.last_rx(s.id), t.epoll_stamp, k.now()};
    }
    co_await k.exec(k.task_ctx(t, CpuClass::kUser), p_.server_user_ns);
    if (m) m->srv_send = k.now();
    co_await k.sys_send(t, s, p_.response_size);
    if (m) m->srv_tx = s.stamp_tx;
  }
}

void SuperNetperf::start() {
  // The instances start within the first 10 us (super_netperf launches them in a shell loop; the
  // warm-up hides the real spread).
  for (const Conn& c : conns_) {
    if (c.sock < 0 || paths_[static_cast<std::size_t>(c.host)].kernel) continue;
    k_->host().schedule(static_cast<Nanos>(start_rng_.uniform_int(10000)), Prio::kWire, this, kStart,
                        static_cast<std::uint64_t>(c.sock));
  }
}

void SuperNetperf::send_request(Conn& c, Nanos at) {
  c.req_start = at;
  c.in_flight = true;
  ++sent_;
  if (breakdown_) marks_[static_cast<std::size_t>(c.sock)].req_tx = at + p_.client_tx_ns;
  uplink_.send_message(c.host, c.sock, p_.request_size, at + p_.client_tx_ns);
}

void SuperNetperf::on_event(std::uint32_t kind, std::uint64_t arg) {
  switch (kind) {
    case kStart:
      send_request(conns_[arg], k_->now());
      break;
    default:
      NAPISIM_ASSERT(false, "unknown super_netperf event");
  }
}

void SuperNetperf::on_transmit(const WireTrain& tr, Nanos wire_done) {
  const int sock = tr.sock;
  const std::uint32_t bytes = tr.bytes, segs = tr.segs;
  const bool ack_only = tr.ack_only;
  Conn& c = conns_[static_cast<std::size_t>(sock)];
  const ClientPath& path = paths_[static_cast<std::size_t>(c.host)];
  if (path.kernel) {
    clients_.to_client(c.host, tr.for_sock(c.csock), wire_done + path.latency_ns);
    return;
  }
  if (ack_only) return;  // the idealised client's stack absorbs ACKs
  // The idealised client's side is computed now, inside the response's transmit.
  if (breakdown_) marks_[static_cast<std::size_t>(sock)].srv_tx = k_->now();
  const Nanos at = wire_done + path.latency_ns + p_.client_rx_ns;
  if (segs >= 2) uplink_.send(c.host, Train{sock, 0, 1, true}, at);
  c.resp_got += bytes;
  if (c.resp_got < p_.response_size) return;
  c.resp_got -= p_.response_size;
  if (breakdown_) {
    // The idealised client's stack is one stage, client.app: client_rx_ns from the wire to recv().
    marks_[static_cast<std::size_t>(sock)].cli = idealised_rx(at - p_.client_rx_ns);
  }
  complete(c, at);
  send_request(c, at);
}

void SuperNetperf::complete(Conn& c, Nanos at) {
  c.in_flight = false;
  ++completed_;
  if (in_window(at)) {
    ++measured_;
    ++c.measured;
    hist_.record(at - c.req_start);
    if (breakdown_) cut(c, at);
  }
}

namespace {

// A transaction's stages in path order (enable_breakdown() names them; cut_rx() fills each host's
// kRxStages).
enum Stage : std::size_t {
  kCliSend,
  kWireReq,
  kServer,
  kSrvApp = kServer + kRxStages,
  kSrvSend,
  kWireResp,
  kClient,
  kCliApp = kClient + kRxStages,
  kNumStages
};

}  // namespace

bool SuperNetperf::enable_breakdown() {
  std::vector<LatencyBreakdown::Stage> st = {{"client.send", "the request's send() syscall, to its transmit (client)"},
                                             wire_request_stage()};
  // netserver and netperf block in recv() (no epoll): its return plays epoll_wait()'s part, so
  // epoll_return ends there and epoll_batch is 0.
  add_rx_stages(st, "server");
  st.push_back({"server.app", "netserver's user work (server_user_ns)"});
  st.push_back({"server.send", "the response's send() syscall, to its transmit (server)"});
  st.push_back(wire_response_stage());
  add_rx_stages(st, "client");
  st.push_back({"client.app",
                "the idealised client's client_rx_ns (0 on a Linux client: netperf stops its "
                "clock as the recv() returns)"});
  NAPISIM_ASSERT(st.size() == kNumStages, "super_netperf: the stage names do not follow enum Stage");
  breakdown_ = std::make_unique<LatencyBreakdown>(std::move(st), wait_classes());
  marks_.assign(conns_.size(), Marks{});
  return true;
}

Json SuperNetperf::latency_breakdown() const {
  return breakdown_ ? breakdown_->report(report_percentiles({50, 90, 99, 99.9})) : Json(nullptr);
}

void SuperNetperf::cut(const Conn& c, Nanos at) {
  const Marks& m = marks_[static_cast<std::size_t>(c.sock)];
  LatencyBreakdown::Cut cut(*breakdown_, c.req_start, at);
  cut.next(kCliSend, m.req_tx);
  cut.next(kWireReq, m.srv.path.arrive);
  cut_rx(cut, kServer, m.srv);
  cut.next(kSrvApp, m.srv_send);
  cut.next(kSrvSend, m.srv_tx);
  cut.next(kWireResp, m.cli.path.arrive);
  cut_rx(cut, kClient, m.cli);
  cut.record(kCliApp);
}

void SuperNetperf::on_rx_drop(int sock, std::uint32_t bytes, std::uint32_t segs) {
  drops_ += segs;
  client_resend(clients_, uplink_, conns_[static_cast<std::size_t>(sock)].host, Train{sock, bytes, segs, false},
                p_.rto_ns);
}

void SuperNetperf::report(Json& summary, Json& workload) const {
  const double secs = to_seconds(window_end_ - window_begin_);
  // super_netperf sums the instances' "Trans. Rate per sec" column.
  summary["transactions"] = measured_;
  summary["throughput"] = secs > 0 ? static_cast<double>(measured_) / secs : 0.0;
  summary["latency_ns"] = latency_json(hist_, {50, 90, 99, 99.9});
  // The spread of per-instance rates (a starved instance shows up here, not in the sum).
  double lo = 1e300, hi = 0;
  for (const Conn& c : conns_) {
    if (c.sock < 0) continue;
    lo = std::min(lo, static_cast<double>(c.measured));
    hi = std::max(hi, static_cast<double>(c.measured));
  }
  summary["instance_rate_min"] = secs > 0 && hi > 0 ? lo / secs : 0.0;
  summary["instance_rate_max"] = secs > 0 ? hi / secs : 0.0;
  workload["type"] = "super_netperf";
  workload["test"] = "TCP_RR";
  workload["num_instances"] = p_.num_instances;
  workload["request_size"] = p_.request_size;
  workload["response_size"] = p_.response_size;
}

Json SuperNetperf::conservation() const {
  std::uint64_t in_flight = 0;
  for (const Conn& c : conns_)
    in_flight += c.in_flight ? 1 : 0;
  return request_conservation(sent_, completed_, in_flight, drops_ + clients_.drops(), uplink_.retransmitted());
}

}  // namespace napisim
