#include "sim/workloads/tcp_rr.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "sim/hw/rss.hpp"
#include "sim/stats/grouping.hpp"

namespace napisim {

void TcpRr::setup(Kernel& k, const std::vector<ClientPath>& paths, const RngRoot& rng) {
  k_ = &k;
  paths_ = paths;
  k.set_peer(this);
  uplink_.setup(k, paths_);
  // Server threads.
  const CpuMask allowed = CpuMask::parse(p_.server_cpus, k.nr_cpus(), "/workload/params/server_cpus");
  std::vector<Task*> threads;
  for (std::int64_t i = 0; i < p_.num_threads; ++i) {
    const ThreadHome home = thread_home(allowed, i, p_.pin_cpu);
    Task& t = create_user_thread(k, "tcp_rr/" + std::to_string(i), home.mask, p_.server_policy, p_.server_rt_priority,
                                 p_.server_nice);
    threads.push_back(&t);
    Epoll& ep = k.add_epoll();
    epolls_.push_back(&ep);
    t.body = server_thread(t, ep);
    k.start_task(t, home.cpu);
  }
  // Flows: client 10.0.<host>.2:(40000+f) -> server 10.0.0.1:12867 (neper's data port).
  start_rng_ = rng.stream("tcp_rr/flows");  // flow start offsets (start()): the seed changes them
  clients_.setup(k, paths_);
  for (std::int64_t f = 0; f < p_.num_flows; ++f) {
    const int host = static_cast<int>(f % static_cast<std::int64_t>(paths_.size()));
    const FlowTuple tuple{0x0a000002u + (static_cast<std::uint32_t>(host) << 8), 0x0a000001u,
                          static_cast<std::uint16_t>(40000 + f % 25000), 12867};
    const int nic = paths_[static_cast<std::size_t>(host)].nic;
    Socket& s = k.add_socket(nic, tuple);
    if (flows_.size() <= static_cast<std::size_t>(s.id)) flows_.resize(static_cast<std::size_t>(s.id) + 1);
    Flow& fl = flows_[static_cast<std::size_t>(s.id)];
    fl.sock = s.id;
    fl.host = host;
    fl.thread = reuseport_thread(s, k.inet_ehashfn(tuple), p_.num_threads, p_.flow_steering == "rx_queue");
    k.epoll_ctl_add(*epolls_[static_cast<std::size_t>(fl.thread)], s);
    s.reader = threads[static_cast<std::size_t>(fl.thread)];
    if (paths_[static_cast<std::size_t>(host)].kernel) fl.csock = clients_.add_socket(host, s.id, tuple);
  }
  // Linux client hosts: neper's client process on each host's own kernel.
  const std::int64_t client_threads = p_.client_threads > 0 ? p_.client_threads : p_.num_threads;
  for (std::size_t h = 0; h < paths_.size(); ++h) {
    Kernel* ck = paths_[h].kernel;
    if (!ck) continue;
    std::vector<int> host_flows;
    for (Flow& f : flows_) {
      if (f.sock >= 0 && f.host == static_cast<int>(h)) host_flows.push_back(f.sock);
    }
    const CpuMask client_mask = CpuMask::parse(p_.client_cpus, ck->nr_cpus(), "/workload/params/client_cpus");
    std::size_t first = 0;
    for (std::int64_t i = 0; i < client_threads; ++i) {
      // thread.c flows_in_thread(): a contiguous block each, the first (flows % threads) one longer.
      const std::size_t nflows =
          flows_in_thread(host_flows.size(), static_cast<std::size_t>(client_threads), static_cast<std::size_t>(i));
      std::vector<int> mine(host_flows.begin() + static_cast<std::ptrdiff_t>(first),
                            host_flows.begin() + static_cast<std::ptrdiff_t>(first + nflows));
      first += nflows;
      const CpuMask m = thread_home(client_mask, i, p_.client_pin_cpu).mask;
      Task& t = create_user_thread(*ck, "neper-client/" + std::to_string(i), m, p_.client_policy, p_.client_rt_priority,
                                   p_.client_nice);
      Epoll& ep = ck->add_epoll();
      for (int sock : mine) {
        flows_[static_cast<std::size_t>(sock)].cthread = static_cast<int>(i);
        Socket& cs = ck->socket(flows_[static_cast<std::size_t>(sock)].csock);
        ck->epoll_ctl_add(ep, cs);
        cs.reader = &t;
      }
      t.body = client_thread(*ck, t, ep, static_cast<int>(h), std::move(mine));
      const int cpu = static_cast<int>(i % ck->nr_cpus());
      ck->start_task(t, m.test(cpu) ? cpu : m.first());
    }
  }
}

Proc<void> TcpRr::client_thread(Kernel& ck, Task& t, Epoll& ep, int host, std::vector<int> flows) {
  // neper rr.c client: send a request on every flow, then an epoll loop: read the response, record
  // the latency after the recv() that completes it (rr_ts_2), send the next request at once.
  // A request begins at rr_ts_1, just before its first send().
  auto begin_request = [&](Flow& f, Nanos rr_ts_1) {
    f.req_start = rr_ts_1;
    f.in_flight = true;
    ++sent_;
  };
  // rr_do_send(): one send() of at most -B bytes on neper's non-blocking socket, which copies
  // what the send buffer takes (`chunk`, decided as the syscall starts); its transmit follows its
  // system time.
  auto send_chunk = [&](Flow& f, Socket& out, std::int64_t chunk) {
    if (chunk > 0) ck.nic_transmit(ck.task_ctx(t, CpuClass::kSystem), out, chunk, false);
    f.req_left -= chunk;
    if (breakdown_ && f.req_left == 0) marks_[static_cast<std::size_t>(f.sock)].req_tx = out.stamp_tx;
  };
  // Over lo: the whole request in -B send() calls, each running the receiver's softirq at its end.
  auto send_lo = [&](Flow& f, Socket& out) -> Proc<void> {
    for (; f.req_left > 0; f.req_left -= std::min(f.req_left, p_.buffer_size))
      co_await ck.sys_send(t, out, std::min(f.req_left, p_.buffer_size));
    if (breakdown_) marks_[static_cast<std::size_t>(f.sock)].req_tx = out.stamp_tx;
  };
  for (int sock : flows) {
    Flow& f = flows_[static_cast<std::size_t>(sock)];
    Socket& out = ck.socket(f.csock);
    begin_request(f, ck.now());
    f.req_left = p_.request_size;
    if (out.lo_peer >= 0) {
      co_await send_lo(f, out);
      continue;
    }
    const std::int64_t chunk = ck.tcp_send_room(out, std::min(f.req_left, p_.buffer_size));
    co_await ck.exec(ck.task_ctx(t, CpuClass::kSystem), ck.send_cost(t, out, chunk));
    send_chunk(f, out, chunk);
    if (f.req_left > 0) ck.ep_modify(ep, out, kEpollOut, t.cpu);  // rr_client_state_0 until sent
  }
  std::vector<int> events;
  events.reserve(static_cast<std::size_t>(p_.maxevents));
  for (;;) {
    // The events' transfer (ep_send_events) is charged with the first handler's recv(), as the
    // server does: one segment where the CPU went from epoll_wait() into recv() without a stop.
    Nanos epoll_ns = 0;
    int n = co_await ck.epoll_wait(t, ep, static_cast<int>(p_.maxevents), events,
                                   static_cast<int>(p_.client_epoll_timeout), &epoll_ns);
    if (n == 0)
      n = co_await ck.epoll_wait_busy_loop(t, ep, static_cast<int>(p_.maxevents), events, &epoll_ns);  // timeout 0
    if (breakdown_) ck.stamp_epoll_return(t);
    for (int i = 0; i < n; ++i) {
      Socket& cs = ck.socket(events[static_cast<std::size_t>(i)]);
      Flow* f = &flows_[static_cast<std::size_t>(clients_.server_sock(host, cs.id))];
      if (cs.ep_events & kEpollOut) {
        // rr_client_state_0 (EPOLLOUT): the request's next send(); with the request out,
        // flow_mod(rr_client_state_1, EPOLLIN).
        const std::int64_t chunk = ck.tcp_send_room(cs, std::min(f->req_left, p_.buffer_size));
        co_await ck.exec_chain(t, {CpuClass::kSystem, epoll_ns}, {CpuClass::kSystem, ck.send_cost(t, cs, chunk), true});
        epoll_ns = 0;
        send_chunk(*f, cs, chunk);
        if (f->req_left == 0) co_await ck.epoll_ctl_mod(t, ep, cs, kEpollIn);
        continue;
      }
      // The marks of the response as the handler starts (what its recv() takes).
      if (breakdown_)
        marks_[static_cast<std::size_t>(f->sock)].cli = RxMarks{ck.last_rx(cs.id), t.epoll_stamp, ck.now()};
      // recv(): the data is taken as the syscall starts, its time chained after the transfer's.
      Nanos recv_ns;
      const std::int64_t got = ck.recv_take(t, cs, p_.buffer_size, &recv_ns);
      co_await ck.exec_chain(t, {CpuClass::kSystem, epoll_ns}, {CpuClass::kSystem, recv_ns, true});
      epoll_ns = 0;
      if (cs.rcvbuf > 0) co_await ck.recv_done(t, cs, got);
      f->resp_got += got;
      while (f->resp_got >= p_.response_size) {
        // rr_client_state_1: rr_ts_2 right after the recv() that completed the response; then the
        // histogram and state bookkeeping, rr_ts_1 and the next request's first send(); if the
        // request is not out with it, flow_mod(rr_client_state_0, EPOLLOUT).
        f->resp_got -= p_.response_size;
        record_completion(*f, ck.now());
        if (stopped_) break;
        Socket& out = ck.socket(f->csock);
        f->req_left = p_.request_size;
        if (out.lo_peer >= 0) {
          co_await ck.exec(ck.task_ctx(t, CpuClass::kUser), p_.client_user_ns);
          begin_request(*f, ck.now());
          co_await send_lo(*f, out);
          continue;
        }
        // The bookkeeping and the first send() as one chain, its transmit at the chain's end:
        // rr_ts_1 is when the send() part began.
        const std::int64_t chunk = ck.tcp_send_room(out, std::min(f->req_left, p_.buffer_size));
        co_await ck.exec_chain(t, {CpuClass::kUser, p_.client_user_ns},
                               {CpuClass::kSystem, ck.send_cost(t, out, chunk)});
        begin_request(*f, t.slot.part_begun);
        send_chunk(*f, out, chunk);
        if (f->req_left > 0) co_await ck.epoll_ctl_mod(t, ep, out, kEpollOut);
      }
    }
  }
}

void TcpRr::record_completion(Flow& f, Nanos at) {
  f.in_flight = false;
  ++completed_;
  if (in_window(at) && !stopped_) {
    ++measured_;
    hist_.record(at - f.req_start);
    ++f.measured;
    f.latency_sum += at - f.req_start;
    if (breakdown_) cut(f, at);
    if (p_.num_transactions > 0 && measured_ >= static_cast<std::uint64_t>(p_.num_transactions)) {
      stopped_ = true;
      nth_done_ = at;
    }
  }
}

bool TcpRr::enable_breakdown() {
  start_cutting();
  report_breakdown_ = true;
  return true;
}

bool TcpRr::trace_requests(Timeline& t) {
  // The requests of at most 16 flows, spread over the flows (and so over threads and queues).
  start_cutting();
  trace_ = &t;
  for (const auto& s : breakdown_->stages())
    stage_names_.push_back(s.name);
  trace_stride_ = static_cast<int>(std::max<std::int64_t>(1, (p_.num_flows + 15) / 16));
  return true;
}

namespace {

// A transaction's stages in path order (start_cutting() names them; cut_rx() fills each host's
// kRxStages).
enum Stage : std::size_t {
  kCliSend,
  kWireReq,
  kServer,
  kSrvApp = kServer + kRxStages,
  kSrvEpollOut,
  kSrvSend,
  kWireResp,
  kClient,
  kCliApp = kClient + kRxStages,
  kNumStages
};

}  // namespace

void TcpRr::start_cutting() {
  if (breakdown_) return;
  std::vector<LatencyBreakdown::Stage> st = {
      {"client.send", "from rr_ts_1 to the request's transmit: the send() syscall (client)"}, wire_request_stage()};
  add_rx_stages(st, "server");
  st.push_back({"server.app", "the server's handler: recv(), neper's user work, epoll_ctl(MOD, EPOLLOUT)"});
  st.push_back({"server.epollout",
                "until the next epoll_wait() returned the EPOLLOUT event and its handler began "
                "(the rest of the batch, the next call)"});
  st.push_back({"server.send", "the send() syscall, to the response's transmit (server)"});
  st.push_back(wire_response_stage());
  add_rx_stages(st, "client");
  st.push_back({"client.app", "the client's recv() that completes the response, to rr_ts_2"});
  NAPISIM_ASSERT(st.size() == kNumStages, "tcp_rr: the stage names do not follow enum Stage");
  breakdown_ = std::make_unique<LatencyBreakdown>(std::move(st), wait_classes());
  marks_.assign(flows_.size(), Marks{});
}

Json TcpRr::latency_breakdown() const {
  return report_breakdown_ ? breakdown_->report(report_percentiles(p_.percentiles)) : Json(nullptr);
}

void TcpRr::cut(const Flow& f, Nanos at) {
  const Marks& m = marks_[static_cast<std::size_t>(f.sock)];
  LatencyBreakdown::Cut c(*breakdown_, f.req_start, at);
  c.next(kCliSend, m.req_tx);
  c.next(kWireReq, m.srv.path.arrive);
  cut_rx(c, kServer, m.srv);
  c.next(kSrvApp, m.srv_recv_done);
  c.next(kSrvEpollOut, m.srv_send_start);
  c.next(kSrvSend, m.srv_tx);
  c.next(kWireResp, m.cli.path.arrive);
  cut_rx(c, kClient, m.cli);
  c.record(kCliApp);
  if (trace_ && f.sock % trace_stride_ == 0)
    trace_->request(f.sock, f.req_start, stage_names_.data(), c.stage_ns().data(), stage_names_.size());
}

void TcpRr::start() {
  // Flows start within the first 10 us, as neper's threads connect and start almost together.
  Rng& r = start_rng_;
  for (const Flow& f : flows_) {
    if (f.sock < 0 || f.csock >= 0) continue;  // Linux client hosts start their own requests
    k_->host().schedule(static_cast<Nanos>(r.uniform_int(10000)), Prio::kWire, this, kStart,
                        static_cast<std::uint64_t>(f.sock));
  }
}

void TcpRr::begin_measurement() {}
void TcpRr::end_measurement() {}

Proc<void> TcpRr::server_thread(Task& t, Epoll& ep) {
  // neper's server state machine (rr.c), one flow per epoll item, level-triggered:
  //   rr_server_state_0 (EPOLLIN): rr_do_recv() reads up to min(rest of the request, -B) bytes;
  //     when the request is complete, rr_server_state_1: flow_mod(EPOLLOUT). ep_send_events()
  //     re-queued the item as it reported it, so ep_modify() finds it linked and leaves it there;
  //     the next epoll_wait() re-polls it, writable, and returns it;
  //   rr_server_state_2 (EPOLLOUT): rr_do_send() sends up to min(rest of the response, -B) bytes,
  //     what the send buffer takes (one send() per event); when the response is out,
  //     flow_mod(EPOLLIN): the next epoll_wait() reports the item again if the next request is
  //     already readable.
  std::vector<int> events;
  events.reserve(static_cast<std::size_t>(p_.maxevents));
  Kernel& k = *k_;
  for (;;) {
    // The events' transfer (ep_send_events) is charged with the first handler's chain.
    Nanos epoll_ns = 0;
    int n = 0;
    if (p_.spin_us > 0) {  // spin_us: poll before sleeping
      n = co_await epoll_wait_spin(k, t, ep, static_cast<int>(p_.maxevents), events, static_cast<int>(p_.epoll_timeout),
                                   p_.spin_us * kNsPerUs, &epoll_ns);
    } else {
      n = co_await k.epoll_wait(t, ep, static_cast<int>(p_.maxevents), events, static_cast<int>(p_.epoll_timeout),
                                &epoll_ns);
      if (n == 0)
        n = co_await k.epoll_wait_busy_loop(t, ep, static_cast<int>(p_.maxevents), events, &epoll_ns);  // timeout 0
    }
    if (breakdown_) k.stamp_epoll_return(t);
    for (int i = 0; i < n; ++i) {
      Socket& s = k.socket(events[static_cast<std::size_t>(i)]);
      Flow& f = flows_[static_cast<std::size_t>(s.id)];
      Marks* m = breakdown_ ? &marks_[static_cast<std::size_t>(s.id)] : nullptr;
      if (s.ep_events & kEpollOut) {
        if (m) m->srv_send_start = k.now();
        // rr_server_state_2: send() (the transmit at the end of its system time), then the
        // user-space bookkeeping (histogram, stats) and, with the response out, epoll_ctl(MOD,
        // EPOLLIN): two chained segments, the transmit between them.
        const std::int64_t len = k.tcp_send_room(s, std::min(f.resp_left, p_.buffer_size));
        if (s.lo_peer < 0) {
          co_await k.exec_chain(t, {CpuClass::kSystem, epoll_ns}, {CpuClass::kSystem, k.send_cost(t, s, len), true});
          if (len > 0) k.nic_transmit(k.task_ctx(t, CpuClass::kSystem), s, len, false);  // 0: EAGAIN
          if (m) m->srv_tx = k.now();
        } else {
          co_await k.exec(k.task_ctx(t, CpuClass::kSystem), epoll_ns);
          co_await k.sys_send(t, s, len);  // lo: the receiver's softirq runs at its end
        }
        epoll_ns = 0;
        f.resp_left -= len;
        const bool done = f.resp_left == 0;
        co_await k.exec_chain(t, {CpuClass::kUser, p_.server_user_ns},
                              {CpuClass::kSystem, done ? k.epoll_ctl_ns() : 0});
        if (done) {
          k.ep_modify(ep, s, kEpollIn, t.cpu);
          continue;
        }
      } else {
        // rr_server_state_0: recv() (the data is taken as the syscall starts), the user-space
        // work, and epoll_ctl(MOD, EPOLLOUT) when the request is complete: one chained segment.
        Nanos recv_ns;
        const Nanos handler = k.now();
        const std::int64_t got = k.recv_take(t, s, std::min(p_.request_size - f.req_got, p_.buffer_size), &recv_ns);
        f.req_got += got;
        const bool done = f.req_got >= p_.request_size;
        if (m && done) m->srv = RxMarks{k.last_rx(s.id), t.epoll_stamp, handler};
        co_await k.exec_chain(t, {CpuClass::kSystem, epoll_ns}, {CpuClass::kSystem, recv_ns, true},
                              {CpuClass::kUser, p_.server_user_ns}, {CpuClass::kSystem, done ? k.epoll_ctl_ns() : 0});
        epoll_ns = 0;
        if (m && done) m->srv_recv_done = k.now();
        if (s.rcvbuf > 0) co_await k.recv_done(t, s, got);
        if (done) {
          f.req_got = 0;
          f.resp_left = p_.response_size;
          k.ep_modify(ep, s, kEpollOut, t.cpu);
          continue;
        }
      }
    }
  }
}

void TcpRr::send_request(Flow& f, Nanos at) {
  f.req_start = at;
  f.in_flight = true;
  ++sent_;
  if (breakdown_) marks_[static_cast<std::size_t>(f.sock)].req_tx = at + p_.client_tx_ns;
  uplink_.send_message(f.host, f.sock, p_.request_size, at + p_.client_tx_ns);
}

void TcpRr::on_event(std::uint32_t kind, std::uint64_t arg) {
  switch (kind) {
    case kStart:
      send_request(flows_[arg], k_->now());
      break;
    default:
      NAPISIM_ASSERT(false, "unknown tcp_rr event");
  }
}

void TcpRr::on_transmit(const WireTrain& tr, Nanos wire_done) {
  const int sock = tr.sock;
  const std::uint32_t bytes = tr.bytes, segs = tr.segs;
  const bool ack_only = tr.ack_only;
  const Flow& fl = flows_[static_cast<std::size_t>(sock)];
  const ClientPath& path = paths_[static_cast<std::size_t>(fl.host)];
  if (path.kernel) {
    clients_.to_client(fl.host, tr.for_sock(fl.csock), wire_done + path.latency_ns);
    return;
  }
  if (ack_only) return;  // the idealised client's stack absorbs ACKs
  // The response's transmit is now: client_receive() below cuts the request before the server's
  // thread resumes to record it.
  if (breakdown_) marks_[static_cast<std::size_t>(sock)].srv_tx = k_->now();
  // Nothing on the idealised client depends on anything but this train, so what it does when the
  // train arrives is computed now, at the arrival time (no event per response): the host's port
  // and the server's ingress port are FIFOs, so later computations still see later times.
  client_receive(sock, bytes, segs, wire_done + path.latency_ns + p_.client_rx_ns);
}

void TcpRr::client_receive(int sock, std::uint32_t bytes, std::uint32_t segs, Nanos at) {
  Flow& f = flows_[static_cast<std::size_t>(sock)];
  f.resp_got += bytes;
  if (breakdown_) {
    // The idealised client's stack is one stage, client.app: client_rx_ns from the wire to recv().
    marks_[static_cast<std::size_t>(sock)].cli = idealised_rx(at - p_.client_rx_ns);
  }
  if (segs >= 2) uplink_.send(f.host, Train{sock, 0, 1, true}, at);
  if (f.resp_got < p_.response_size) return;
  f.resp_got -= p_.response_size;
  record_completion(f, at);
  if (!stopped_) send_request(f, at);
}

void TcpRr::on_rx_drop(int sock, std::uint32_t bytes, std::uint32_t segs) {
  drops_ += segs;
  client_resend(clients_, uplink_, flows_[static_cast<std::size_t>(sock)].host, Train{sock, bytes, segs, false},
                p_.rto_ns);
}

void TcpRr::report(Json& summary, Json& workload) const {
  const Nanos end = stopped_ ? nth_done_ : window_end_;
  const double secs = to_seconds(end - window_begin_);
  summary["transactions"] = measured_;
  summary["throughput"] = secs > 0 ? static_cast<double>(measured_) / secs : 0.0;
  summary["latency_ns"] = latency_json(hist_, report_percentiles(p_.percentiles));
  summary["flows"] = flows_report();
  workload["type"] = "tcp_rr";
  workload["num_flows"] = p_.num_flows;
  workload["num_threads"] = p_.num_threads;
  workload["request_size"] = p_.request_size;
  workload["response_size"] = p_.response_size;
  workload["buffer_size"] = p_.buffer_size;
  workload["maxevents"] = p_.maxevents;
  workload["percentiles"] = p_.percentiles;
  workload["pin_cpu"] = p_.pin_cpu;
}

// How evenly the flows were served (neper -A prints each flow's own rows): the spread over flows of
// their measured transactions and of their mean latency, and Jain's fairness index of the
// transactions, (sum x)^2 / (n sum x^2): 1 when every flow completed as many, 1/n when one did all.
// In a closed loop a flow's transactions are the window over its mean latency, so a body in the
// latency distribution made by some flows being slower shows here as a spread of both. Where such a
// spread comes from: the share of it between the flows' groups (grouping.hpp) when they are grouped
// by the server's RX queue (the NAPI, and its IRQ CPU's FIFO), the server thread, and on a Linux
// client host the client's RX queue and the client thread (all ~0: every flow alike).
Json TcpRr::flows_report() const {
  std::vector<double> done, mean;
  double sum = 0, sum2 = 0;
  // Each measured flow's groups; a client host's queues and threads are its own: keyed by host too.
  std::vector<std::int64_t> server_queue, server_thread, client_queue, client_thread;
  auto on_host = [](int host, int id) { return (static_cast<std::int64_t>(host) << 32) + id; };
  bool linux_clients = false;
  for (const Flow& f : flows_) {
    if (f.sock < 0) continue;
    const auto x = static_cast<double>(f.measured);
    done.push_back(x);
    sum += x;
    sum2 += x * x;
    if (f.measured == 0) continue;
    mean.push_back(static_cast<double>(f.latency_sum) / x);
    server_queue.push_back(k_->socket(f.sock).rx_queue);
    server_thread.push_back(f.thread);
    Kernel* ck = paths_[static_cast<std::size_t>(f.host)].kernel;
    linux_clients = linux_clients || ck != nullptr;
    client_queue.push_back(on_host(f.host, ck ? ck->socket(f.csock).rx_queue : 0));
    client_thread.push_back(on_host(f.host, f.cthread));
  }
  auto spread = [](std::vector<double> v) {
    Json j = Json::object();
    if (v.empty()) return j;
    std::sort(v.begin(), v.end());
    // The nearest-rank value at p% (as napisim's other percentiles: the smallest with >= p% at or below).
    auto at = [&](double p) {
      const auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
      return v[std::max<std::size_t>(rank, 1) - 1];
    };
    j["min"] = v.front();
    j["p10"] = at(10);
    j["p50"] = at(50);
    j["p90"] = at(90);
    j["max"] = v.back();
    return j;
  };
  Json j;
  j["count"] = done.size();
  j["transactions"] = spread(done);
  j["mean_latency_ns"] = spread(mean);
  j["jain_index"] = sum2 > 0 ? sum * sum / (static_cast<double>(done.size()) * sum2) : 0.0;
  Json by = Json::object();
  by["server_rx_queue"] = between_group_share(mean, server_queue);
  by["server_thread"] = between_group_share(mean, server_thread);
  if (linux_clients) {
    by["client_rx_queue"] = between_group_share(mean, client_queue);
    by["client_thread"] = between_group_share(mean, client_thread);
  }
  j["mean_latency_explained_by"] = by;
  return j;
}

Json TcpRr::conservation() const {
  std::uint64_t in_flight = 0;
  for (const Flow& f : flows_)
    in_flight += f.in_flight ? 1 : 0;
  return request_conservation(sent_, completed_, in_flight, drops_ + clients_.drops(), uplink_.retransmitted());
}

}  // namespace napisim
