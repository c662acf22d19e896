#include "sim/workloads/stream.hpp"

#include <algorithm>

#include "sim/hw/rss.hpp"

namespace napisim {

namespace {
std::vector<int> cpus_of(const CpuMask& m) {
  std::vector<int> v;
  for (int c = m.first(); c >= 0; c = m.next(c))
    v.push_back(c);
  return v;
}
}  // namespace

void Stream::setup(Kernel& k, const std::vector<ClientPath>& paths, const RngRoot& rng) {
  k_ = &k;
  paths_ = paths;
  k.set_peer(this);
  const std::int64_t mss = k.params().net.mss;
  if (!p_.loopback && sndbuf() < 2 * mss)
    throw ConfigError("/workload/params/send_socket_size",
                      "expected 0 or at least one MSS (" + std::to_string(mss) + ")");
  if (p_.loopback && sndbuf() < 2 * p_.send_size)
    throw ConfigError("/workload/params/send_socket_size", "expected 0 or at least send_size (-m) bytes");
  const int n = k.nr_cpus();
  const CpuMask srv_mask = CpuMask::parse(p_.netserver_cpus, n, "/workload/params/netserver_cpus");
  const CpuMask np_mask = CpuMask::parse(p_.netperf_cpus, n, "/workload/params/netperf_cpus");
  const std::vector<int> srv_cpus = cpus_of(srv_mask), np_cpus = cpus_of(np_mask);
  uplink_.setup(k, paths_);
  start_rng_ = rng.stream("stream/flows");
  Rng txhash = rng.stream("stream/sk_txhash");
  flows_.resize(static_cast<std::size_t>(p_.num_streams));
  for (std::int64_t i = 0; i < p_.num_streams; ++i) {
    Flow& f = flows_[static_cast<std::size_t>(i)];
    if (p_.loopback) {
      // Each end's skb->hash is its peer's random sk_txhash (tcp_transmit_skb).
      const auto h1 = static_cast<std::uint32_t>(txhash.uniform_int(1ULL << 32));
      const auto h2 = static_cast<std::uint32_t>(txhash.uniform_int(1ULL << 32));
      const auto [c, s] = k.lo_connect(h1, h2);
      f.tx_sock = c;
      f.sock = s;
      for (int id : {c, s}) {
        Socket& so = k.socket(id);
        so.rcvbuf = rcvbuf();
        so.sndbuf = sndbuf();
        so.rcv_wnd = rcvbuf();
        so.snd_wnd = rcvbuf();
      }
    } else {
      const int host = static_cast<int>(i % static_cast<std::int64_t>(paths_.size()));
      f.host = host;
      const FlowTuple tuple{0x0a000002u + (static_cast<std::uint32_t>(host) << 8), 0x0a000001u,
                            static_cast<std::uint16_t>(40000 + i % 25000), 12866};
      const int nic = paths_[static_cast<std::size_t>(host)].nic;
      Socket& s = k.add_socket(nic, tuple);
      s.rcvbuf = rcvbuf();
      s.rcv_wnd = rcvbuf();
      f.sock = s.id;
      f.snd_wnd = rcvbuf();
      f.cwnd = 10 * mss;  // IW10 (RFC 6928)
      f.ssthresh = sndbuf();
    }
    for (int id : {f.sock, f.tx_sock}) {
      if (id < 0) continue;
      if (flow_of_sock_.size() <= static_cast<std::size_t>(id))
        flow_of_sock_.resize(static_cast<std::size_t>(id) + 1, -1);
      flow_of_sock_[static_cast<std::size_t>(id)] = static_cast<int>(i);
    }
    // netserver forks a child per connection; netperf is one process per stream.
    Task& ts = k.create_task("netserver/" + std::to_string(i), TaskKind::kUser, srv_mask);
    ts.body = netserver(ts, static_cast<int>(i));
    const int sc = srv_cpus[static_cast<std::size_t>(2 * i + 1) % srv_cpus.size()];
    k.start_task(ts, sc);
    if (p_.loopback) {
      Task& tp = k.create_task("netperf/" + std::to_string(i), TaskKind::kUser, np_mask);
      tp.body = netperf(tp, static_cast<int>(i));
      k.start_task(tp, np_cpus[static_cast<std::size_t>(2 * i) % np_cpus.size()]);
    }
  }
}

void Stream::start() {
  if (p_.loopback) return;  // netperf's tasks start sending by themselves
  for (std::size_t i = 0; i < flows_.size(); ++i)
    k_->host().schedule(static_cast<Nanos>(start_rng_.uniform_int(10000)), Prio::kWire, this, kStart, i);
}

void Stream::begin_measurement() {
  for (int c = 0; c < k_->nr_cpus(); ++c)
    flow_limit_at_begin_ += k_->cpu(c).sd.flow_limit_count;
  lo_at_begin_ = k_->lo_packets();
}

void Stream::end_measurement() {
  for (int c = 0; c < k_->nr_cpus(); ++c)
    flow_limit_at_end_ += k_->cpu(c).sd.flow_limit_count;
  lo_at_end_ = k_->lo_packets();
}

void Stream::received(Flow& f, std::int64_t n) {
  ++recv_calls_;
  bytes_total_ += n;
  const Nanos now = k_->now();
  if (in_window(now)) {
    bytes_measured_ += n;
    f.bytes_in_window += n;
  }
}

Proc<void> Stream::netserver(Task& t, int fi) {
  // recv_omni(): a blocking recv() of -M bytes at a time, no poll/epoll.
  Kernel& k = *k_;
  Socket& s = k.socket(flows_[static_cast<std::size_t>(fi)].sock);
  for (;;) {
    const std::int64_t n = co_await k.sys_recv_wait(t, s, p_.recv_size);  // blocking recv()
    received(flows_[static_cast<std::size_t>(fi)], n);
  }
}

Proc<void> Stream::netperf(Task& t, int fi) {
  // send_omni_inner(): send() -m bytes in a loop; the send blocks in sk_stream_wait_memory()
  // while the unacked bytes fill the send buffer (or the receiver's window).
  Kernel& k = *k_;
  Socket& s = k.socket(flows_[static_cast<std::size_t>(fi)].tx_sock);
  for (;;) {
    while (s.snd_nxt > s.snd_una && s.snd_nxt - s.snd_una + p_.send_size > std::min(s.sndbuf, s.snd_wnd))
      co_await k.sleep_on(t, s.wq);
    sent_total_ += p_.send_size;
    co_await k.sys_send(t, s, p_.send_size);
  }
}

void Stream::client_push(Flow& f, Nanos at) {
  const std::int64_t mss = k_->params().net.mss;
  const std::int64_t max_train = k_->params().net.max_train_bytes();
  const std::int64_t limit = std::min({f.cwnd, f.snd_wnd, sndbuf()});
  for (;;) {
    const std::int64_t room = limit - (f.snd_nxt - f.snd_una);
    const std::int64_t b = std::min(max_train, room / mss * mss);  // full segments only: the data never ends
    if (b <= 0) break;
    f.snd_nxt += b;
    sent_total_ += b;
    uplink_.send_message(f.host, f.sock, b, at + p_.client_tx_ns);  // b is one super-packet
  }
}

void Stream::on_event(std::uint32_t kind, std::uint64_t arg) {
  switch (kind) {
    case kStart:
      client_push(flows_[arg], k_->now());
      break;
    case kRetransmit: {
      const Train tr = retransmits_.front();
      retransmits_.pop_front();
      ++retransmitted_;
      const Flow& f = flows_[static_cast<std::size_t>(flow_of_sock_[static_cast<std::size_t>(tr.sock)])];
      uplink_.send_message(f.host, f.sock, tr.bytes, k_->now());
      break;
    }
    default:
      NAPISIM_ASSERT(false, "unknown stream event");
  }
}

void Stream::on_transmit(const WireTrain& tr, Nanos wire_done) {
  const int sock = tr.sock;
  const bool ack_only = tr.ack_only;
  if (!ack_only || p_.loopback) return;
  // The server's ACK reaches the idealised client: everything it reacts to is known now (tcp_ack
  // reads rcv_nxt and the window the ACK carries), so its next trains are computed at once.
  Flow& f = flows_[static_cast<std::size_t>(flow_of_sock_[static_cast<std::size_t>(sock)])];
  const Socket& s = k_->socket(sock);
  const std::int64_t mss = k_->params().net.mss;
  const std::int64_t acked = s.rcv_wup - f.snd_una;
  if (acked <= 0 && s.rcv_wnd == f.snd_wnd) return;
  f.snd_una = std::max(f.snd_una, s.rcv_wup);
  f.snd_wnd = s.rcv_wnd;
  if (acked > 0) {
    if (f.cwnd < f.ssthresh)
      f.cwnd += acked;  // slow start
    else
      f.cwnd += std::max<std::int64_t>(1, mss * acked / f.cwnd);  // congestion avoidance
    f.cwnd = std::min(f.cwnd, 2 * sndbuf());
  }
  client_push(f, wire_done + paths_[static_cast<std::size_t>(f.host)].latency_ns);
}

void Stream::on_rx_drop(int sock, std::uint32_t bytes, std::uint32_t segs) {
  drops_ += segs;
  const int fi = flow_of_sock_[static_cast<std::size_t>(sock)];
  Flow& f = flows_[static_cast<std::size_t>(fi)];
  if (p_.loopback) {
    // A full backlog dropped it (enqueue_to_backlog). A data skb goes back to netperf's write
    // queue and is sent again with the stream (as a byte count, the same); a lost ACK is covered
    // by the next cumulative one.
    if (sock != f.sock) return;
    Socket& tx = k_->socket(f.tx_sock);
    tx.snd_nxt -= bytes;
    sent_total_ -= bytes;
    if (tx.wq.waiter) k_->wake_up(tx.wq, tx.wq.waiter->cpu);
    return;
  }
  if (bytes == 0) return;
  const Nanos now = k_->now();
  if (now >= f.recover_until) {  // one multiplicative decrease per round trip
    const std::int64_t mss = k_->params().net.mss;
    f.ssthresh = std::max(f.cwnd / 2, 2 * mss);
    f.cwnd = f.ssthresh;
    f.recover_until = now + p_.retransmit_ns;
  }
  retransmits_.push_back(Train{sock, bytes, segs});
  k_->host().schedule(now + p_.retransmit_ns, Prio::kWire, this, kRetransmit, 0);
}

void Stream::report(Json& summary, Json& workload) const {
  const double secs = to_seconds(window_end_ - window_begin_);
  const double mbps = secs > 0 ? static_cast<double>(bytes_measured_) * 8.0 / secs / 1e6 : 0.0;
  summary["throughput"] = mbps;  // calc_thruput(): 10^6 bits/s (netperf -f m, the default)
  summary["throughput_units"] = "10^6bits/s";
  summary["bytes_received"] = bytes_measured_;
  summary["flow_limit_count"] = flow_limit_at_end_ - flow_limit_at_begin_;
  summary["lo_packets"] = lo_at_end_ - lo_at_begin_;
  Json per = Json::array();
  for (const Flow& f : flows_)
    per.push_back(secs > 0 ? static_cast<double>(f.bytes_in_window) * 8.0 / secs / 1e6 : 0.0);
  summary["stream_throughput"] = per;
  workload["type"] = "stream";
  workload["test"] = "TCP_STREAM";
  workload["loopback"] = p_.loopback;
  workload["num_streams"] = p_.num_streams;
  workload["send_size"] = p_.send_size;
  workload["recv_size"] = p_.recv_size;
  // What netperf prints: the initial buffer sizes (autotuned: tcp_wmem[1], tcp_rmem[1]).
  workload["send_socket_size"] = p_.send_socket_size ? 2 * p_.send_socket_size : 16384;
  workload["recv_socket_size"] = p_.recv_socket_size ? 2 * p_.recv_socket_size : 131072;
  workload["host"] = !p_.host.empty() ? p_.host : (p_.loopback ? "127.0.0.1" : "10.0.0.1");
}

Json Stream::conservation() const {
  std::int64_t queued = 0;
  for (const Flow& f : flows_)
    queued += k_->socket(f.sock).rx_avail;
  // In bytes: sent = answered (read by netserver) + in flight (on the wire, in backlogs, unread).
  return Json{{"unit", "bytes"},
              {"sent", sent_total_},
              {"answered", bytes_total_},
              {"in_flight", sent_total_ - bytes_total_},
              {"unread", queued},
              {"drop_segments", drops_},
              {"retransmitted_trains", retransmitted_}};
}

}  // namespace napisim
