#include "sim/workloads/rpc_server.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

#include "sim/hw/rss.hpp"
#include "sim/params/json_util.hpp"

namespace napisim {

namespace {

constexpr Nanos kTcpTimeoutInit = 1000000000;  // TCP_TIMEOUT_INIT: a SYN's first retransmission

Json summarize(const Histogram& h, const std::vector<double>& ps) {
  Json j;
  j["count"] = h.count();
  j["mean"] = h.mean();
  for (double p : ps)
    j[percentile_key(p)] = h.percentile(p);
  j["max"] = h.max();
  return j;
}
}  // namespace

RpcServer::RpcServer(const RpcServerParams& p, RpcLoad load, std::string type, const std::string& path)
    : p_(p)
    , load_(std::move(load))
    , type_(std::move(type))
    , path_(path)
    , service_(Distribution::parse(p.service_ns, path + "/service_ns"))
    , block_(Distribution::parse(p.block_ns, path + "/block_ns")) {}

void RpcServer::setup(Kernel& k, const std::vector<ClientPath>& paths, const RngRoot& rng) {
  k_ = &k;
  paths_ = paths;
  k.set_peer(this);
  uplink_.setup(k, paths_);
  to_client_.resize(paths_.size());
  check_offered_load();
  // Worker threads.
  const CpuMask allowed = CpuMask::parse(p_.server_cpus, k.nr_cpus(), "/workload/params/server_cpus");
  for (std::int64_t i = 0; i < p_.num_threads; ++i) {
    const ThreadHome home = thread_home(allowed, i, p_.pin_cpu);
    auto w = std::make_unique<Worker>();
    w->task = &create_user_thread(k, type_ + "/" + std::to_string(i), home.mask, p_.server_policy,
                                  p_.server_rt_priority, p_.server_nice);
    w->ep = &k.add_epoll();
    w->rng = rng.stream(type_ + "/worker" + std::to_string(i));
    w->task->body = p_.server_arch == "reuseport" && p_.connections == "persistent" && p_.spin_us == 0
                        ? worker(*w)
                        : worker_body(*w);  // server_arch.cpp
    k.start_task(*w->task, home.cpu);
    workers_.push_back(std::move(w));
  }
  if (p_.server_arch != "reuseport" || p_.connections != "persistent") setup_arch(rng, allowed);
  // Flows: client 10.0.<host>.2:(40000+f) -> server 10.0.0.1:8080, spread over the client hosts.
  load_rng_ = rng.stream(type_ + "/load");
  clients_.setup(k, paths_);
  for (std::int64_t f = 0; f < load_.num_flows; ++f) {
    const int host = static_cast<int>(f % static_cast<std::int64_t>(paths_.size()));
    const FlowTuple tuple{0x0a000002u + (static_cast<std::uint32_t>(host) << 8), 0x0a000001u,
                          static_cast<std::uint16_t>(40000 + f % 25000), 8080};
    const int nic = paths_[static_cast<std::size_t>(host)].nic;
    Socket& s = k.add_socket(nic, tuple);
    s.rx_timestamps = true;
    if (flows_.size() <= static_cast<std::size_t>(s.id)) flows_.resize(static_cast<std::size_t>(s.id) + 1);
    Flow& fl = flows_[static_cast<std::size_t>(s.id)];
    fl.sock = s.id;
    fl.host = host;
    fl.thread = reuseport_thread(s, k.inet_ehashfn(tuple), p_.num_threads, p_.flow_steering == "rx_queue");
    if (p_.server_arch == "reuseport" && !handshakes_) {
      k.epoll_ctl_add(*workers_[static_cast<std::size_t>(fl.thread)]->ep, s);
      s.reader = workers_[static_cast<std::size_t>(fl.thread)]->task;
    } else {
      attach_flow(fl, s, static_cast<std::size_t>(f));  // server_arch.cpp
    }
    flow_socks_.push_back(s.id);
    if (paths_[static_cast<std::size_t>(host)].kernel)
      fl.csock = clients_.add_socket(host, s.id, tuple);
    else
      idealised_socks_.push_back(s.id);
  }
  if (!idealised_socks_.empty())
    idealised_share_ = static_cast<double>(flow_socks_.size()) / static_cast<double>(idealised_socks_.size());
  setup_linux_clients(rng);
}

void RpcServer::setup_linux_clients(const RngRoot& rng) {
  const std::int64_t threads = p_.client_threads > 0 ? p_.client_threads : p_.num_threads;
  std::vector<int> trace_thread;  // server socket -> client thread (trace loads)
  if (load_.kind == RpcLoad::Kind::kTrace) trace_thread.assign(flows_.size(), -1);
  for (std::size_t h = 0; h < paths_.size(); ++h) {
    Kernel* ck = paths_[h].kernel;
    if (!ck) continue;
    std::vector<int> host_flows;
    for (int sock : flow_socks_)
      if (flows_[static_cast<std::size_t>(sock)].host == static_cast<int>(h)) host_flows.push_back(sock);
    const CpuMask mask = CpuMask::parse(p_.client_cpus, ck->nr_cpus(), path_ + "/client_cpus");
    std::size_t first = 0;
    for (std::int64_t i = 0; i < threads; ++i) {
      // A contiguous block of connections each, the first (flows % threads) one longer.
      const std::size_t n =
          flows_in_thread(host_flows.size(), static_cast<std::size_t>(threads), static_cast<std::size_t>(i));
      if (n == 0) continue;  // more threads than connections: the rest have nothing to do
      auto th = std::make_unique<ClientThread>();
      th->host = static_cast<int>(h);
      th->flows.assign(host_flows.begin() + static_cast<std::ptrdiff_t>(first),
                       host_flows.begin() + static_cast<std::ptrdiff_t>(first + n));
      first += n;
      const std::string name = type_ + "-client" + std::to_string(h) + "/" + std::to_string(i);
      th->rng = rng.stream(name);
      th->task = &create_user_thread(*ck, name, mask, p_.client_policy, p_.client_rt_priority, p_.client_nice);
      th->task->timer_slack_ns = p_.client_timer_slack_ns;
      th->ep = &ck->add_epoll();
      for (int sock : th->flows) {
        Socket& cs = ck->socket(flows_[static_cast<std::size_t>(sock)].csock);
        ck->epoll_ctl_add(*th->ep, cs);
        cs.reader = th->task;
      }
      th->share = static_cast<double>(flow_socks_.size()) / static_cast<double>(n);
      if (!trace_thread.empty())
        for (int sock : th->flows)
          trace_thread[static_cast<std::size_t>(sock)] = static_cast<int>(client_threads_.size());
      th->task->body = client_thread(*th);
      const int cpu = static_cast<int>(i % ck->nr_cpus());
      ck->start_task(*th->task, mask.test(cpu) ? cpu : mask.first());
      client_threads_.push_back(std::move(th));
    }
  }
  if (trace_thread.empty()) return;
  for (std::size_t r = 0; r < load_.trace.size(); ++r) {
    const int th = trace_thread[static_cast<std::size_t>(flow_socks_[static_cast<std::size_t>(load_.trace[r].flow)])];
    if (th >= 0) client_threads_[static_cast<std::size_t>(th)]->trace.push_back(r);
  }
}

void RpcServer::push_due(ClientThread& th, Nanos at, int sock, std::int64_t rec) {
  th.due.push_back(Due{at, th.seq++, sock, rec});
  std::push_heap(th.due.begin(), th.due.end(), std::greater<>{});
}

void RpcServer::next_trace_due(ClientThread& th) {
  if (th.trace_next == th.trace.size()) {
    if (!load_.repeat) return;
    th.trace_base += trace_pass_ns();
    th.trace_next = 0;
  }
  const std::size_t rec = th.trace[th.trace_next++];
  const TraceRecord& tr = load_.trace[rec];
  push_due(th, th.trace_base + static_cast<Nanos>(std::llround(static_cast<double>(tr.t) / load_.rate_scale)),
           flow_socks_[static_cast<std::size_t>(tr.flow)], static_cast<std::int64_t>(rec));
}

Proc<void> RpcServer::client_thread(ClientThread& th) {
  Kernel& ck = *paths_[static_cast<std::size_t>(th.host)].kernel;
  Task& t = *th.task;
  auto send = [&](Flow& f, Request r) -> Proc<void> {
    r.sent = ck.now();  // rr_ts_1: just before the first send()
    // The model's TCP sends at once whatever the peer's window, but a connection never has more
    // than the server's receive buffer and the client's send buffer unread: beyond that a
    // non-blocking send() fails with EAGAIN (sk_stream_memory_free() false) and the request is
    // counted unsent, as the idealised client counts it.
    if (f.rmem + truesize(r) > p_.rcvbuf + p_.sndbuf) {
      ++unsent_;
      if (in_window(r.sent)) ++unsent_in_window_;
      co_await ck.exec(ck.task_ctx(t, CpuClass::kSystem), ck.costs().syscall_ns);
      co_return;
    }
    f.rmem += truesize(r);
    f.unread.push_back(r);  // TCP keeps the byte stream in order: the server frames it so
    f.waiting.push_back(r);
    if (breakdown_) marks_[static_cast<std::size_t>(f.sock)].q.push_back(Marks{});
    ++sent_;
    if (in_window(r.sent)) ++sent_in_window_;
    if (send_log_) send_log_->push_back(r.sent);
    Socket& cs = ck.socket(f.csock);
    for (std::int64_t left = r.request_size; left > 0;) {
      const std::int64_t chunk = std::min(left, p_.buffer_size);
      co_await ck.sys_send(t, cs, chunk);
      left -= chunk;
    }
    if (breakdown_) marks_[static_cast<std::size_t>(f.sock)].q.back().tx = cs.stamp_tx;  // only this thread adds to it
  };
  switch (load_.kind) {
    case RpcLoad::Kind::kClosed:  // every connection's first request at once, as neper's client
      for (int sock : th.flows)
        co_await send(flows_[static_cast<std::size_t>(sock)], make_request(th.rng, 0));
      break;
    case RpcLoad::Kind::kOpen:
      push_due(th, ck.now() + open_gap(th.rng, th.share), -1, -1);
      break;
    case RpcLoad::Kind::kTrace:
      if (!th.trace.empty()) next_trace_due(th);
      break;
  }
  std::vector<int> events;
  events.reserve(static_cast<std::size_t>(p_.maxevents));
  for (;;) {
    while (!th.due.empty() && th.due.front().at <= ck.now()) {
      std::pop_heap(th.due.begin(), th.due.end(), std::greater<>{});
      const Due d = th.due.back();
      th.due.pop_back();
      if (load_.kind == RpcLoad::Kind::kOpen) {
        push_due(th, d.at + open_gap(th.rng, th.share), -1, -1);
        const int sock = th.flows[th.rng.uniform_int(th.flows.size())];
        co_await send(flows_[static_cast<std::size_t>(sock)], make_request(th.rng, 0));
      } else if (d.rec >= 0) {
        next_trace_due(th);
        co_await send(flows_[static_cast<std::size_t>(d.sock)],
                      trace_request(load_.trace[static_cast<std::size_t>(d.rec)], 0));
      } else {
        co_await send(flows_[static_cast<std::size_t>(d.sock)], make_request(th.rng, 0));
      }
    }
    const Nanos next = th.due.empty() ? kNever : th.due.front().at;
    int n;
    if (p_.client_epoll_timeout == 0) {  // the userspace busy loop, up to the next timed send
      n = co_await ck.epoll_wait(t, *th.ep, static_cast<int>(p_.maxevents), events, 0);
      if (n == 0)
        n = co_await ck.epoll_wait_busy_loop(t, *th.ep, static_cast<int>(p_.maxevents), events, nullptr, next);
    } else if (next == kNever) {
      n = co_await ck.epoll_wait(t, *th.ep, static_cast<int>(p_.maxevents), events);
    } else {
      n = co_await ck.epoll_pwait2(t, *th.ep, static_cast<int>(p_.maxevents), events, next - ck.now());
    }
    if (breakdown_) ck.stamp_epoll_return(t);
    for (int i = 0; i < n; ++i) {
      Socket& cs = ck.socket(events[static_cast<std::size_t>(i)]);
      Flow& f = flows_[static_cast<std::size_t>(clients_.server_sock(th.host, cs.id))];
      const Nanos handler = ck.now();
      f.resp_got += co_await ck.sys_recv(t, cs, p_.buffer_size);
      while (!f.waiting.empty() && f.resp_got >= static_cast<std::int64_t>(f.waiting.front().response_size)) {
        const Request r = f.waiting.front();
        f.waiting.pop_front();
        f.resp_got -= r.response_size;
        ++completed_;
        const bool measured = in_window(ck.now());
        if (measured) {
          ++measured_;
          hist_.record(ck.now() - r.sent);
        }
        if (breakdown_) {
          FlowMarks& fm = marks_[static_cast<std::size_t>(f.sock)];
          fm.resp_end += r.response_size;
          fm.q.front().cli = RxMarks{ck.path_through(cs.id, fm.resp_end), t.epoll_stamp, handler};
          answered(f.sock, r.sent, ck.now(), measured);
        }
        co_await ck.exec(ck.task_ctx(t, CpuClass::kUser), p_.client_user_ns);
        if (load_.kind != RpcLoad::Kind::kClosed) continue;
        const auto think = static_cast<Nanos>(std::llround(load_.think_ns.sample(th.rng)));
        if (think <= 0) {
          co_await send(f, make_request(th.rng, 0));
        } else {
          push_due(th, ck.now() + think, f.sock, -1);
        }
      }
    }
  }
}

void RpcServer::start() {
  switch (load_.kind) {
    case RpcLoad::Kind::kClosed:
      // Flows start within the first 10 us, as a load generator's connections do.
      for (int sock : idealised_socks_)
        k_->host().schedule(static_cast<Nanos>(load_rng_.uniform_int(10000)), Prio::kWire, this, kStart,
                            static_cast<std::uint64_t>(sock));
      break;
    case RpcLoad::Kind::kOpen:
      if (idealised_socks_.empty()) break;  // Linux client hosts draw their own arrivals
      k_->host().schedule(open_gap(load_rng_, idealised_share_), Prio::kWire, this, kOpenArrival, 0);
      break;
    case RpcLoad::Kind::kTrace:
      if (!load_.trace.empty() && !idealised_socks_.empty())
        k_->host().schedule(0, Prio::kWire, this, kTraceArrival, 0);
      break;
  }
}

RpcServer::Request RpcServer::make_request(Rng& rng, Nanos at) {
  Request r;
  r.sent = at;
  r.request_size = static_cast<std::uint32_t>(std::max(1.0, std::round(load_.request_size.sample(rng))));
  r.response_size = static_cast<std::uint32_t>(std::max(1.0, std::round(load_.response_size.sample(rng))));
  return r;
}

void RpcServer::new_request(Flow& f, Nanos at) {
  send_request(f, make_request(load_rng_, at));
}

RpcServer::Request RpcServer::trace_request(const TraceRecord& tr, Nanos at) {
  Request r;
  r.sent = at;
  r.request_size = tr.request_size;
  r.response_size = tr.response_size;
  r.service_ns = tr.service_ns;
  return r;
}

Nanos RpcServer::open_gap(Rng& rng, double share) const {
  return static_cast<Nanos>(std::llround(load_.interarrival_ns.sample(rng) * load_.gap_scale * share));
}

namespace {
// SKB_TRUESIZE(0) (include/linux/skbuff.h v6.6, x86-64): SKB_DATA_ALIGN(sizeof(struct sk_buff))
// 256 + SKB_DATA_ALIGN(sizeof(struct skb_shared_info)) 320, charged per skb on top of its data.
constexpr std::int64_t kSkbOverhead = 576;
}  // namespace

std::int64_t RpcServer::truesize(const Request& r) const {
  return r.request_size + kSkbOverhead * k_->params().net.segs_of(r.request_size);
}

void RpcServer::send_request(Flow& f, const Request& r) {
  if (f.conn != Flow::Conn::kOpen) {  // server_arch.cpp: the request waits for its connection
    ++sent_;
    if (in_window(r.sent)) ++sent_in_window_;
    if (send_log_) send_log_->push_back(r.sent);
    f.waiting.push_back(r);
    f.pending.push_back(r);
    if (f.conn == Flow::Conn::kNone) client_connect(f, r.sent);
    return;
  }
  // tcp_sendmsg(): data beyond the peer's window waits in the send queue; a full send queue
  // (sk_stream_memory_free() false) makes a non-blocking send() fail, and an open-loop client
  // cannot send the request at all. A closed-loop flow never has more than one outstanding.
  const std::int64_t size = truesize(r);
  Nanos tx = 0;  // held: set when the window opens
  if (!f.held.empty() || f.rmem + size > p_.rcvbuf) {
    if (f.wmem + size > p_.sndbuf) {
      ++unsent_;
      if (in_window(r.sent)) ++unsent_in_window_;
      return;
    }
    f.wmem += size;
    f.held.push_back(r);
  } else {
    tx = r.sent + p_.client_tx_ns;
    transmit(f, r, tx);
  }
  ++sent_;
  if (in_window(r.sent)) ++sent_in_window_;
  if (send_log_) send_log_->push_back(r.sent);
  f.waiting.push_back(r);
  if (breakdown_) {
    Marks m;
    m.tx = tx;
    marks_[static_cast<std::size_t>(f.sock)].q.push_back(m);
  }
}

void RpcServer::transmit(Flow& f, const Request& r, Nanos depart) {
  f.rmem += truesize(r);
  f.unread.push_back(r);
  uplink_.send_message(f.host, f.sock, r.request_size, depart);
}

Proc<void> RpcServer::worker(Worker& w) {
  Kernel& k = *k_;
  Task& t = *w.task;
  Epoll& ep = *w.ep;
  std::vector<int> events;
  events.reserve(static_cast<std::size_t>(p_.maxevents));
  for (;;) {
    int n = co_await k.epoll_wait(t, ep, static_cast<int>(p_.maxevents), events, static_cast<int>(p_.epoll_timeout));
    if (n == 0) n = co_await k.epoll_wait_busy_loop(t, ep, static_cast<int>(p_.maxevents), events);  // timeout 0
    // The worker may sleep in a handler (block_ns): its epoll_wait() return is marked now.
    if (breakdown_) k.stamp_epoll_return(t);
    for (int i = 0; i < n; ++i) {
      Socket& s = k.socket(events[static_cast<std::size_t>(i)]);
      Flow& f = flows_[static_cast<std::size_t>(s.id)];
      const Nanos handler = k.now();
      f.srv_got += co_await k.sys_recv(t, s, p_.buffer_size);
      const Nanos recv_done = k.now();
      while (!f.unread.empty() && f.srv_got >= static_cast<std::int64_t>(f.unread.front().request_size)) {
        const Request r = f.unread.front();
        // Flow::waiting holds the requests read by the server and not yet answered, then the
        // unread ones, then the held ones: this is request number `seq` of the flow.
        const std::uint64_t seq = breakdown_ ? marks_[static_cast<std::size_t>(s.id)].first + f.waiting.size() -
                                                   f.held.size() - f.unread.size()
                                             : 0;
        f.unread.pop_front();
        f.rmem -= truesize(r);
        if (!f.held.empty() && !f.window_update) {
          // tcp_cleanup_rbuf(): the read opens the window; the ACK saying so reaches the client.
          f.window_update = true;
          k_->host().schedule(k.now() + paths_[static_cast<std::size_t>(f.host)].latency_ns, Prio::kWire, this,
                              kWindowOpen, static_cast<std::uint64_t>(s.id));
        }
        f.srv_got -= r.request_size;
        f.srv_end += r.request_size;
        // Readable since the skb carrying the request's last byte was queued (Socket::rx_stamps).
        while (!s.rx_stamps.empty() && s.rx_stamps.front().end < f.srv_end)
          s.rx_stamps.pop_front();
        const Nanos readable = s.rx_stamps.empty() ? k.now() : s.rx_stamps.front().at;
        const Nanos begin = k.now();
        if (breakdown_) {
          Marks& m = marks(s.id, seq);
          m.srv = RxMarks{k.path_through(s.id, f.srv_end), t.epoll_stamp, handler};
          m.recv_done = recv_done;
          m.service = begin;
        }
        const bool counted = in_window(begin);
        if (counted) {
          ++started_;
          queue_hist_.record(begin - readable);
          if (begin - readable > p_.overload_threshold_us * 1000) ++overloaded_;
        }
        const Nanos service =
            r.service_ns >= 0 ? r.service_ns : static_cast<Nanos>(std::llround(service_.sample(w.rng)));
        co_await k.exec(k.task_ctx(t, CpuClass::kUser), service);
        const Nanos service_done = k.now();
        if (p_.block_probability > 0 && w.rng.bernoulli(p_.block_probability)) {
          const auto off = static_cast<Nanos>(std::llround(block_.sample(w.rng)));
          if (off > 0) {
            if (counted) ++blocked_;
            k_->host().schedule(k.now() + off, Prio::kTimer, this, kWorkerWake, static_cast<std::uint64_t>(t.id));
            co_await k.sleep_on(t, w.sleep);
          }
        }
        if (breakdown_) {
          Marks& m = marks(s.id, seq);
          m.service_done = service_done;
          m.unblocked = k.now();
        }
        for (std::int64_t left = r.response_size; left > 0;) {
          const std::int64_t chunk = std::min(left, p_.buffer_size);
          co_await k.sys_send(t, s, chunk);
          left -= chunk;
        }
        if (breakdown_) marks(s.id, seq).srv_tx = s.stamp_tx;
        if (counted) service_hist_.record(k.now() - begin);
      }
    }
  }
}

void RpcServer::on_transmit(const WireTrain& tr, Nanos wire_done) {
  const int sock = tr.sock;
  const std::uint32_t bytes = tr.bytes, segs = tr.segs;
  const bool ack_only = tr.ack_only;
  const Flow& f = flows_[static_cast<std::size_t>(sock)];
  const ClientPath& path = paths_[static_cast<std::size_t>(f.host)];
  if (path.kernel) {
    clients_.to_client(f.host, tr.for_sock(f.csock), wire_done + path.latency_ns);
    return;
  }
  if (ack_only) {  // the idealised client's stack absorbs ACKs; a SYN-ACK or FIN ends a connect() or a connection
    const TcpState st = k_->socket(sock).tcp_state;
    if (handshakes_ && st != TcpState::kEstablished)
      k_->host().schedule(wire_done + path.latency_ns + p_.client_rx_ns, Prio::kWire, this,
                          st == TcpState::kSynRecv ? kClientConnected : kClientFin, static_cast<std::uint64_t>(sock));
    return;
  }
  // The server's port is FIFO and a host's latency is fixed, so a host's arrivals are in order.
  to_client_[static_cast<std::size_t>(f.host)].push_back(Train{sock, bytes, segs, false});
  k_->host().schedule(wire_done + path.latency_ns + p_.client_rx_ns, Prio::kWire, this, kClientArrive,
                      static_cast<std::uint64_t>(f.host));
}

void RpcServer::client_receive(const Train& tr) {
  Flow& f = flows_[static_cast<std::size_t>(tr.sock)];
  const Nanos now = k_->now();
  if (tr.segs >= 2) uplink_.send(f.host, Train{tr.sock, 0, 1, true}, now);
  f.resp_got += tr.bytes;
  while (!f.waiting.empty() && f.resp_got >= static_cast<std::int64_t>(f.waiting.front().response_size)) {
    const Request r = f.waiting.front();
    f.waiting.pop_front();
    f.resp_got -= r.response_size;
    ++completed_;
    const bool measured = in_window(now);
    if (measured) {
      ++measured_;
      hist_.record(now - r.sent);
    }
    if (breakdown_) {
      // The idealised client's stack is one stage, client.app: client_rx_ns from the wire to recv().
      marks_[static_cast<std::size_t>(tr.sock)].q.front().cli = idealised_rx(now - p_.client_rx_ns);
      answered(tr.sock, r.sent, now, measured);
    }
    if (p_.connections == "per_request") f.conn = Flow::Conn::kClosing;  // the server closes it
    if (load_.kind == RpcLoad::Kind::kClosed) after_response(f);
  }
}

Nanos RpcServer::trace_pass_ns() const {
  // A pass spans the trace and one mean gap after its last request (at least 1 ns, so that even an
  // instant trace at a huge rate_scale lets time pass), scaled by rate_scale.
  const Nanos span = load_.trace.back().t;
  const Nanos gap = load_.trace.size() > 1 ? span / static_cast<Nanos>(load_.trace.size() - 1) : 1000;
  return std::max<Nanos>(
      1, static_cast<Nanos>(std::llround(static_cast<double>(span + std::max<Nanos>(gap, 1)) / load_.rate_scale)));
}

void RpcServer::check_offered_load() const {
  // An open-loop or repeating trace load above what the client links can carry never reaches a
  // steady state: the idealised clients' transmit backlog (and the run's memory) would grow
  // without bound. A request's wire bytes are the uplink's (WireTrain::wire_bytes()).
  const NetParams& net = k_->params().net;
  const auto wire_bytes = [&net](std::int64_t payload) {
    return static_cast<double>(
        WireTrain{0, static_cast<std::uint32_t>(payload), static_cast<std::uint32_t>(net.segs_of(payload)), false}
            .wire_bytes());
  };
  double rate = 0, bytes = 0;
  std::string ptr = path_;
  if (load_.kind == RpcLoad::Kind::kOpen) {
    rate = 1e9 / (load_.interarrival_ns.mean() * load_.gap_scale);
    bytes = wire_bytes(std::llround(load_.request_size.mean()));
    ptr += "/rate_rps";
  } else if (load_.kind == RpcLoad::Kind::kTrace && load_.repeat) {
    const auto n = static_cast<double>(load_.trace.size());
    rate = n * 1e9 / static_cast<double>(trace_pass_ns());
    for (const TraceRecord& r : load_.trace)
      bytes += wire_bytes(r.request_size) / n;
    ptr += "/rate_scale";
  } else {
    return;
  }
  double link_gbps = 0;
  for (const ClientPath& cp : paths_)
    link_gbps += cp.bandwidth_gbps;
  const double need_gbps = rate * bytes * 8.0 / 1e9;
  if (need_gbps > link_gbps)
    throw ConfigError(ptr, "offered load of " + format_number(rate) + " requests/s needs at least " +
                               format_number(need_gbps) + " Gb/s, more than the client links' " +
                               format_number(link_gbps) + " Gb/s: the clients' backlog would grow without bound");
}

void RpcServer::after_response(Flow& f) {
  const auto think = static_cast<Nanos>(std::llround(load_.think_ns.sample(load_rng_)));
  if (think <= 0) {
    new_request(f, k_->now());
  } else {
    k_->host().schedule(k_->now() + think, Prio::kWire, this, kSend, static_cast<std::uint64_t>(f.sock));
  }
}

void RpcServer::trace_arrival() {
  // Every record due now leaves now (equal timestamps in file order).
  const Nanos now = k_->now();
  for (;;) {
    const TraceRecord& tr = load_.trace[trace_next_];
    Flow& f = flows_[static_cast<std::size_t>(flow_socks_[static_cast<std::size_t>(tr.flow)])];
    if (f.csock < 0) send_request(f, trace_request(tr, now));  // a Linux client host's threads send their own records
    if (++trace_next_ == load_.trace.size()) {
      if (!load_.repeat) return;
      trace_base_ += trace_pass_ns();  // the next pass starts one mean gap after the last request
      trace_next_ = 0;
    }
    const Nanos at =
        trace_base_ +
        static_cast<Nanos>(std::llround(static_cast<double>(load_.trace[trace_next_].t) / load_.rate_scale));
    if (at > now) {
      k_->host().schedule(at, Prio::kWire, this, kTraceArrival, 0);
      return;
    }
  }
}

void RpcServer::on_event(std::uint32_t kind, std::uint64_t arg) {
  switch (kind) {
    case kStart:
    case kSend:
      new_request(flows_[arg], k_->now());
      break;
    case kOpenArrival: {
      const int sock = idealised_socks_[load_rng_.uniform_int(idealised_socks_.size())];
      new_request(flows_[static_cast<std::size_t>(sock)], k_->now());
      k_->host().schedule(k_->now() + open_gap(load_rng_, idealised_share_), Prio::kWire, this, kOpenArrival, 0);
      break;
    }
    case kTraceArrival:
      trace_arrival();
      break;
    case kWindowOpen: {  // tcp_ack() on the client: the window opened, tcp_push_pending_frames()
      Flow& f = flows_[arg];
      f.window_update = false;
      while (!f.held.empty() && f.rmem + truesize(f.held.front()) <= p_.rcvbuf) {
        const Request r = f.held.front();
        if (breakdown_)
          marks(f.sock, marks_[arg].first + f.waiting.size() - f.held.size()).tx = k_->now() + p_.client_tx_ns;
        f.held.pop_front();
        f.wmem -= truesize(r);
        transmit(f, r, k_->now() + p_.client_tx_ns);
      }
      break;
    }
    case kClientConnected:
      client_connected(flows_[arg]);
      break;
    case kClientFin:
      client_fin(flows_[arg]);
      break;
    case kSynRetransmit:  // tcp_retransmit_timer() in SYN_SENT
      uplink_.send(flows_[arg].host, WireTrain{static_cast<int>(arg), 0, 1, false}, k_->now());
      break;
    case kClientArrive: {
      Fifo<Train>& q = to_client_[arg];
      const Train tr = q.front();
      q.pop_front();
      client_receive(tr);
      break;
    }
    case kWorkerWake: {
      // hrtimer_wakeup() -> wake_up_process() on the CPU the sleeper armed the timer on.
      Task& t = *k_->tasks()[arg];
      Cpu& c = k_->cpu(t.cpu);
      k_->update_exec(c);
      k_->try_to_wake_up(t, c.id);
      k_->dispatch(c);
      break;
    }
    default:
      NAPISIM_ASSERT(false, "unknown rpc workload event");
  }
}

void RpcServer::on_rx_drop(int sock, std::uint32_t bytes, std::uint32_t segs) {
  drops_ += segs;
  if (handshakes_ && k_->socket(sock).tcp_state == TcpState::kClose) {  // a SYN: sent again after 1 s
    ++syn_retransmits_;
    k_->host().schedule(k_->now() + kTcpTimeoutInit, Prio::kWire, this, kSynRetransmit,
                        static_cast<std::uint64_t>(sock));
    return;
  }
  client_resend(clients_, uplink_, flows_[static_cast<std::size_t>(sock)].host, Train{sock, bytes, segs, false},
                p_.rto_ns);
}

namespace {

// A request's stages in path order (enable_breakdown() names them; cut_rx() fills each host's
// kRxStages).
enum Stage : std::size_t {
  kCliSend,
  kWireReq,
  kServer,
  kSrvRecv = kServer + kRxStages,
  kSrvQueue,
  kSrvService,
  kSrvBlock,
  kSrvSend,
  kWireResp,
  kClient,
  kCliApp = kClient + kRxStages,
  kNumStages
};

}  // namespace

bool RpcServer::enable_breakdown() {
  // server_arch.cpp's loops keep no stage marks (yet): only the default workers are cut.
  if (p_.server_arch != "reuseport" || p_.connections != "persistent" || p_.spin_us > 0) return false;
  std::vector<LatencyBreakdown::Stage> st = {
      {"client.send",
       "from rr_ts_1 to the request's transmit: the send() syscall (client), or the idealised client's "
       "client_tx_ns and its wait behind a closed window"},
      wire_request_stage()};
  add_rx_stages(st, "server");
  st.push_back({"server.recv", "the worker's recv() that read the request's last byte"});
  st.push_back({"server.queue",
                "the service and responses of the requests ahead of it in the same read (pipelined on its "
                "connection)"});
  st.push_back({"server.service", "its service_ns of user-mode CPU, with whatever preempted the worker"});
  st.push_back(
      {"server.block", "off-CPU blocking after its service (block_probability): asleep, then waiting for a CPU"});
  st.push_back({"server.send", "the send() of its response, to the response's transmit (server)"});
  st.push_back(wire_response_stage());
  add_rx_stages(st, "client");
  st.push_back({"client.app",
                "the client's recv() that read the response's last byte, and its handling of the responses "
                "ahead of it in that read, to rr_ts_2 (the idealised client: client_rx_ns)"});
  NAPISIM_ASSERT(st.size() == kNumStages, "rpc workload: the stage names do not follow enum Stage");
  breakdown_ = std::make_unique<LatencyBreakdown>(std::move(st), wait_classes());
  marks_.assign(flows_.size(), FlowMarks{});
  // Several requests of a connection may be in flight: each is cut with the train that carried its
  // own last byte, on both hosts.
  for (int sock : flow_socks_) {
    const Flow& f = flows_[static_cast<std::size_t>(sock)];
    k_->keep_path_log(sock);
    if (f.csock >= 0) paths_[static_cast<std::size_t>(f.host)].kernel->keep_path_log(f.csock);
  }
  return true;
}

Json RpcServer::latency_breakdown() const {
  return breakdown_ ? breakdown_->report(report_percentiles(p_.percentiles)) : Json(nullptr);
}

void RpcServer::answered(int sock, Nanos begin, Nanos end, bool measured) {
  FlowMarks& fm = marks_[static_cast<std::size_t>(sock)];
  if (measured) {
    const Marks& m = fm.q.front();
    LatencyBreakdown::Cut c(*breakdown_, begin, end);
    c.next(kCliSend, m.tx);
    c.next(kWireReq, m.srv.path.arrive);
    cut_rx(c, kServer, m.srv);
    c.next(kSrvRecv, m.recv_done);
    c.next(kSrvQueue, m.service);
    c.next(kSrvService, m.service_done);
    c.next(kSrvBlock, m.unblocked);
    c.next(kSrvSend, m.srv_tx);
    c.next(kWireResp, m.cli.path.arrive);
    cut_rx(c, kClient, m.cli);
    c.record(kCliApp);
  }
  fm.q.pop_front();
  ++fm.first;
}

void RpcServer::report(Json& summary, Json& workload) const {
  const double secs = to_seconds(window_end_ - window_begin_);
  summary["transactions"] = measured_;
  summary["throughput"] = secs > 0 ? static_cast<double>(measured_) / secs : 0.0;
  summary["offered_rps"] = secs > 0 ? static_cast<double>(sent_in_window_ + unsent_in_window_) / secs : 0.0;
  summary["unsent_requests"] = unsent_in_window_;
  summary["latency_ns"] = latency_json(hist_, report_percentiles(p_.percentiles));
  // Kicinski's "App Overld": share of requests that waited in the application past the threshold.
  summary["app_overload_pct"] =
      started_ > 0 ? 100.0 * static_cast<double>(overloaded_) / static_cast<double>(started_) : 0.0;
  Json app;
  app["overload_threshold_us"] = p_.overload_threshold_us;
  app["requests_started"] = started_;
  app["requests_overloaded"] = overloaded_;
  app["requests_blocked"] = blocked_;
  app["queue_ns"] = summarize(queue_hist_, {50, 99, 99.9});
  app["service_ns"] = summarize(service_hist_, {50, 99, 99.9});
  summary["app"] = app;
  if (p_.server_arch != "reuseport" || p_.connections != "persistent" || p_.spin_us > 0)
    summary["server"] = arch_report();  // server_arch.cpp
  workload["type"] = type_;
  workload["num_flows"] = load_.num_flows;
  workload["num_threads"] = p_.num_threads;
  workload["buffer_size"] = p_.buffer_size;
  workload["maxevents"] = p_.maxevents;
  workload["percentiles"] = p_.percentiles;
  workload["pin_cpu"] = p_.pin_cpu;
  describe(workload);
}

Json RpcServer::conservation() const {
  std::uint64_t in_flight = 0;
  for (const Flow& f : flows_)
    in_flight += f.waiting.size();
  return request_conservation(sent_, completed_, in_flight, drops_ + clients_.drops(), uplink_.retransmitted());
}

}  // namespace napisim
