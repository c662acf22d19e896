#include "sim/workloads/xsk_rr.hpp"

#include <algorithm>
#include <cmath>

namespace napisim {

XskRr::XskRr(const XskRrParams& p, const std::string& path) : p_(p), path_(path) {}

void XskRr::setup(Kernel& k, const std::vector<ClientPath>& paths, const RngRoot& rng) {
  k_ = &k;
  paths_ = paths;
  for (const ClientPath& cp : paths_)
    if (cp.kernel)
      throw ConfigError(path_,
                        "expected idealised client hosts (platform.clients[].stack \"idealised\"): xsk_rr's "
                        "client is a load generator");
  if (p_.mode == "busy_poll" && p_.busy_poll_us == 0)
    throw ConfigError(path_ + "/busy_poll_us", "expected > 0 with mode busy_poll (SO_BUSY_POLL)");
  k.set_peer(this);
  uplink_.setup(k, paths_);
  rng_ = rng.stream("xsk_rr/load");
  Nic& nic = *k.nics()[0];
  std::vector<int> cpus;
  if (!p_.server_cpus.empty()) {
    const CpuMask m = CpuMask::parse(p_.server_cpus, k.nr_cpus(), path_ + "/server_cpus");
    for (int c = m.first(); c >= 0; c = m.next(c))
      cpus.push_back(c);
  }
  for (auto& ch : nic.channels) {
    auto s = std::make_unique<Server>();
    Xsk& xs = k.xsk_bind(*ch, p_.zerocopy, p_.need_wakeup);
    xs.prefer_busy_poll = p_.prefer_busy_poll;
    xs.busy_poll_budget = p_.busy_poll_budget;
    k.socket(xs.sock).ll_usec = p_.busy_poll_us;  // SO_BUSY_POLL
    s->xsk = &xs;
    if (p_.mode == "epoll") {
      s->ep = &k.add_epoll();
      k.epoll_ctl_add(*s->ep, k.socket(xs.sock));
      s->events.reserve(1);
    }
    const int cpu =
        cpus.empty() ? (ch->irq_cpu + 1) % k.nr_cpus() : cpus[static_cast<std::size_t>(ch->id) % cpus.size()];
    CpuMask m(k.nr_cpus());
    m.set(cpu);
    s->task = &k.create_task("xsk_rr/" + std::to_string(ch->id), TaskKind::kUser, m);
    s->task->body = server(*s);
    k.start_task(*s->task, cpu);
    servers_.push_back(std::move(s));
  }
  // Flows: client 10.0.<host>.2:(40000+f) -> server 10.0.0.1:9000, over UDP.
  for (std::int64_t f = 0; f < p_.num_flows; ++f) {
    const int host = static_cast<int>(f % static_cast<std::int64_t>(paths_.size()));
    const FlowTuple tuple{0x0a000002u + (static_cast<std::uint32_t>(host) << 8), 0x0a000001u,
                          static_cast<std::uint16_t>(40000 + f % 25000), 9000};
    Socket& s = k.add_socket(paths_[static_cast<std::size_t>(host)].nic, tuple);
    if (flows_.size() <= static_cast<std::size_t>(s.id)) flows_.resize(static_cast<std::size_t>(s.id) + 1);
    flows_[static_cast<std::size_t>(s.id)].sock = s.id;
    flows_[static_cast<std::size_t>(s.id)].host = host;
    flow_socks_.push_back(s.id);
    k.xsk_redirect(*servers_[static_cast<std::size_t>(s.rx_queue)]->xsk, s.id);  // xsks_map[rx_queue_index]
  }
}

void XskRr::start() {
  if (p_.load == "closed") {
    for (int sock : flow_socks_)  // flows start within the first 10 us
      k_->host().schedule(static_cast<Nanos>(rng_.uniform_int(10000)), Prio::kWire, this, kStart,
                          static_cast<std::uint64_t>(sock));
    return;
  }
  k_->host().schedule(gap(), Prio::kWire, this, kArrival, 0);
}

Nanos XskRr::gap() {
  const double mean = 1e9 / p_.rate_pps;
  return static_cast<Nanos>(std::llround(p_.arrivals == "poisson" ? rng_.exponential(mean) : mean));
}

void XskRr::send(Flow& f, Nanos at) {
  f.outstanding.push_back(at);
  ++sent_;
  uplink_.send_message(f.host, f.sock, p_.request_size, at + p_.client_tx_ns);
}

Proc<void> XskRr::spin_for_packets(Task& t, Xsk& xs) {
  Kernel& k = *k_;
  Channel& ch = *xs.ch;
  Napi& n = ch.napi;
  k.rx_sync(ch);
  if (ch.ring_pkts > 0 || xs.visible() > 0) co_return;
  // The empty recvfrom() calls change nothing: one spin until a packet reaches the ring (the
  // NAPI's spinner slot, if free) or the RX ring (a poll by someone else).
  const bool watch = !n.spinner;
  if (watch) {
    n.spinner = &t;
    k.rx_watch(ch);
  }
  co_await k.spin_until(t, nullptr, nullptr, kNever, CpuClass::kBusySpin, &k.socket(xs.sock));
  if (watch && n.spinner == &t) n.spinner = nullptr;
  co_await k.cond_resched(t);
}

Proc<void> XskRr::server(Server& srv) {
  Kernel& k = *k_;
  Task& t = *srv.task;
  Xsk& xs = *srv.xsk;
  Socket& sock = k.socket(xs.sock);
  for (;;) {
    // Wait for requests.
    while (xs.visible() == 0) {
      if (xs.rx_need_wakeup) {  // the fill ring ran dry and the frames are back: kick the driver
        co_await k.xsk_recvfrom(t, xs);
        continue;
      }
      if (p_.mode == "poll") {
        co_await k.xsk_poll_wait(t, xs);
      } else if (p_.mode == "epoll") {
        co_await k.epoll_wait(t, *srv.ep, 1, srv.events);
      } else if (p_.mode == "busy_poll") {
        co_await k.xsk_recvfrom(t, xs);
        if (xs.visible() == 0) co_await spin_for_packets(t, xs);
      } else {  // spin on the RX ring in user space
        co_await k.spin_until(t, nullptr, nullptr, kNever, CpuClass::kUser, &sock);
        co_await k.cond_resched(t);
      }
    }
    // Take a batch, answer it in the same frames, give the frames back.
    const auto n = static_cast<std::int64_t>(std::min<std::size_t>(xs.visible(), static_cast<std::size_t>(p_.batch)));
    co_await k.exec(k.task_ctx(t, CpuClass::kUser), n * p_.service_ns);
    for (std::int64_t i = 0; i < n; ++i) {
      const XskFrame f = xs.rx.front();
      xs.rx.pop_front();
      k.xsk_tx_post(xs, XskFrame{f.sock, static_cast<std::uint32_t>(p_.response_size), k.now(), 0});
      if (breakdown_) flows_[static_cast<std::size_t>(f.sock)].marks.push_back(Marks{f.ring_at, f.at, k.now(), 0});
    }
    sock.rx_avail = static_cast<std::int64_t>(xs.visible());
    srv.served += static_cast<std::uint64_t>(n);
    k.xsk_fill(xs, n);
    if (!xs.need_wakeup || xs.tx_need_wakeup || !xs.zerocopy) co_await k.xsk_sendto(t, xs);
  }
}

void XskRr::on_transmit(const WireTrain& tr, Nanos wire_done) {
  if (tr.ack_only) return;
  const int sock = tr.sock;
  Flow& f = flows_[static_cast<std::size_t>(sock)];
  if (breakdown_ && f.sent_replies < f.marks.size()) f.marks[f.sent_replies++].wire = wire_done;
  const ClientPath& path = paths_[static_cast<std::size_t>(f.host)];
  k_->host().schedule(wire_done + path.latency_ns + p_.client_rx_ns, Prio::kWire, this, kReply,
                      static_cast<std::uint64_t>(sock));
}

void XskRr::on_rx_drop(int sock, std::uint32_t bytes, std::uint32_t segs) {
  (void)bytes;
  (void)segs;
  Flow& f = flows_[static_cast<std::size_t>(sock)];
  if (f.outstanding.empty()) return;
  f.outstanding.pop_front();
  ++lost_;
  if (p_.load == "closed")
    k_->host().schedule(k_->now() + p_.timeout_ns, Prio::kWire, this, kSend, static_cast<std::uint64_t>(sock));
}

void XskRr::on_event(std::uint32_t kind, std::uint64_t arg) {
  const Nanos now = k_->now();
  switch (kind) {
    case kStart:
    case kSend:
      send(flows_[arg], now);
      break;
    case kArrival: {
      Flow& f = flows_[static_cast<std::size_t>(flow_socks_[next_flow_])];
      next_flow_ = (next_flow_ + 1) % flow_socks_.size();
      send(f, now);
      k_->host().schedule(now + gap(), Prio::kWire, this, kArrival, 0);
      break;
    }
    case kReply: {
      Flow& f = flows_[arg];
      if (f.outstanding.empty()) break;
      const Nanos sent = f.outstanding.front();
      f.outstanding.pop_front();
      ++completed_;
      if (in_window(now)) {
        ++measured_;
        hist_.record(now - sent);
      }
      if (breakdown_ && !f.marks.empty()) {
        const Marks m = f.marks.front();
        f.marks.pop_front();
        --f.sent_replies;
        if (in_window(now)) {
          LatencyBreakdown::Cut c(*breakdown_, sent, now);
          c.next(kCliSend, sent + p_.client_tx_ns);
          c.next(kWireReq, m.ring);
          c.next(kSrvRx, m.xsk);
          c.next(kSrvApp, m.posted);
          c.next(kSrvTx, m.wire);
          c.next(kWireResp, now - p_.client_rx_ns);
          c.record(kCliApp);
        }
      }
      if (p_.load != "closed") break;
      if (p_.delay_ns > 0) {
        k_->host().schedule(now + p_.delay_ns, Prio::kWire, this, kSend, arg);
      } else {
        send(f, now);
      }
      break;
    }
    default:
      NAPISIM_ASSERT(false, "unknown xsk_rr event");
  }
}

void XskRr::report(Json& summary, Json& workload) const {
  const double secs = to_seconds(window_end_ - window_begin_);
  summary["transactions"] = measured_;
  summary["throughput"] = secs > 0 ? static_cast<double>(measured_) / secs : 0.0;
  summary["latency_ns"] = latency_json(hist_, report_percentiles(p_.percentiles));
  Json x;
  std::uint64_t rx = 0, dropped = 0, fill_empty = 0, tx = 0, kicks = 0, wakeups = 0;
  for (const auto& s : servers_) {
    rx += s->xsk->rx_packets;
    dropped += s->xsk->rx_dropped;
    fill_empty += s->xsk->fill_empty;
    tx += s->xsk->tx_packets;
    kicks += s->xsk->kicks;
    wakeups += s->xsk->wakeups;
  }
  x["rx_packets"] = rx;
  x["rx_dropped"] = dropped;
  x["fill_ring_empty"] = fill_empty;
  x["tx_packets"] = tx;
  x["syscalls"] = kicks;
  x["driver_wakeups"] = wakeups;
  x["lost_requests"] = lost_;
  summary["xsk"] = x;
  workload["type"] = "xsk_rr";
  workload["num_flows"] = p_.num_flows;
  workload["load"] = p_.load;
  if (p_.load == "fixed_rate") workload["rate_pps"] = p_.rate_pps;
  workload["mode"] = p_.mode;
  workload["zerocopy"] = p_.zerocopy;
  workload["need_wakeup"] = p_.need_wakeup;
  workload["busy_poll_us"] = p_.busy_poll_us;
  workload["percentiles"] = p_.percentiles;
}

bool XskRr::enable_breakdown() {
  std::vector<LatencyBreakdown::Stage> st = {
      {"client.send", "the idealised client's client_tx_ns"},
      wire_request_stage(),
      {"server.rx",
       "from the NIC ring to the XSK's RX ring: interrupt moderation, the IRQ masked, NET_RX, the NAPI kthread "
       "or the busy poll that polled it, the XDP program and the redirect"},
      {"server.app", "from the RX ring to the reply on the TX ring: the server thread finding it, service_ns"},
      {"server.tx", "from the TX ring to the reply's transmit: the sendto() kick, the driver's XSK send, the port"},
      wire_response_stage(),
      {"client.app", "the idealised client's client_rx_ns"}};
  NAPISIM_ASSERT(st.size() == kNumStages, "xsk_rr: the stage names do not follow enum Stage");
  breakdown_ = std::make_unique<LatencyBreakdown>(std::move(st));
  return true;
}

Json XskRr::latency_breakdown() const {
  return breakdown_ ? breakdown_->report(report_percentiles(p_.percentiles)) : Json(nullptr);
}

Json XskRr::conservation() const {
  std::uint64_t in_flight = 0;
  for (const Flow& f : flows_)
    in_flight += f.outstanding.size();
  return Json{{"sent", sent_}, {"answered", completed_ + lost_}, {"in_flight", in_flight}, {"lost", lost_}};
}

}  // namespace napisim
