// napisim: the server architectures of `app` and `trace` (RpcServerParams::server_arch), and
// connections opened per request, on the kernel's listening sockets (sim/kernel/inet_csk.hpp,
// Linux v6.6).
//
//   reuseport      a listener per worker (SO_REUSEPORT); each worker's epoll owns its connections
//                  (rpc_server.cpp's worker(); this file's epoll_loop() with spin_us or per_request
//                  connections, the worker's own listen fd in its epoll)
//   dispatcher     memcached 1.6 (memcached.c, thread.c): the listener thread blocks in accept()
//                  and hands each connection to the next worker round-robin (dispatch_conn_new():
//                  cq_push() and a byte written to the worker's notify pipe); the worker's event
//                  loop reads the pipe (thread_libevent_process()) and adds the connection to its
//                  epoll
//   thread_pool    one dispatcher thread's epoll holds every connection with EPOLLONESHOT; it reads
//                  a connection's requests, queues the connection on a user-space queue and, if a
//                  worker sleeps, wakes one with futex(FUTEX_WAKE, 1) (a condition variable's
//                  signal, kernel/futex/waitwake.c); an idle worker takes the next connection,
//                  serves its requests in order and re-arms it (epoll_ctl(EPOLL_CTL_MOD)), so one
//                  connection's responses leave in order
//   shared_accept  one listening socket; every worker blocks in accept() (exclusive, FIFO) and
//                  serves the connection it got until it closes (a thread per connection)
//   shared_epoll   one listening socket in every worker's epoll (nginx without reuseport): a
//                  plain item wakes every waiting worker, EPOLLEXCLUSIVE the first one waiting;
//                  the worker that reads the event accepts one connection (nginx's multi_accept
//                  off) and adds it to its own epoll
//
// spin_us: before a worker sleeps it polls for up to spin_us: epoll_wait(0) in a loop (epoll
// workers) or the shared queue in user space (thread_pool workers, woken by the dispatcher's
// store, not by a futex).
//
// Connections through a listener (`handshakes_`: per_request connections, or a listener
// architecture's persistent ones, with idealised clients): the client's connect() sends a SYN, the
// server's SYN-ACK comes back, and the ACK that completes the handshake carries the request; the
// connection waits in the accept queue until a worker accepts it. per_request: the server
// close()s after the response, as an HTTP/1.0 server does, and the client opens its next
// connection when the FIN arrives. A dropped SYN is sent again after TCP_TIMEOUT_INIT (1 s), a
// dropped completing ACK after rto_ns. On Linux client hosts (persistent connections only) a
// listener architecture's connections are accepted before the run starts, round-robin: what
// dispatch_conn_new() does, and what accept() waiters queued FIFO get.
#include <algorithm>

#include "sim/workloads/rpc_server.hpp"

namespace napisim {

namespace {
// thread_pool's dispatcher holds every connection with EPOLLONESHOT (added and re-armed so): a
// connection whose requests are queued or served is reported once.
constexpr std::uint8_t kPoolItem = kEpollIn | kEpollOneshot;
}  // namespace

void RpcServer::setup_arch(const RngRoot& rng, const CpuMask& allowed) {
  Kernel& k = *k_;
  const std::string& arch = p_.server_arch;
  bool linux_clients = false;
  for (const ClientPath& cp : paths_)
    linux_clients = linux_clients || cp.kernel != nullptr;
  if (p_.connections == "per_request" && linux_clients)
    throw ConfigError(path_ + "/connections",
                      "expected \"persistent\" with Linux client hosts (per_request connections need idealised "
                      "clients: platform.clients[].stack \"idealised\")");
  if (arch == "shared_accept" && load_.num_flows > p_.num_threads && p_.connections == "persistent")
    throw ConfigError(path_ + "/num_flows",
                      "expected at most num_threads (" + std::to_string(p_.num_threads) +
                          ") persistent connections: shared_accept serves one connection per worker");
  const bool listener_arch = arch == "dispatcher" || arch == "shared_accept" || arch == "shared_epoll";
  handshakes_ = !linux_clients && (p_.connections == "per_request" || listener_arch);
  if (listener_arch || (handshakes_ && arch == "thread_pool")) listener_ = &k.listen(p_.listen_backlog);
  const auto role = [this](int sock, Role r, Listener* l) {
    if (roles_.size() <= static_cast<std::size_t>(sock)) roles_.resize(static_cast<std::size_t>(sock) + 1);
    roles_[static_cast<std::size_t>(sock)] = SockRole{r, l};
  };
  if (arch == "reuseport" && handshakes_) {
    for (auto& w : workers_) {
      w->listener = &k.listen(p_.listen_backlog);
      role(k.listen_epoll_add(*w->listener, *w->ep, false).id, Role::kListenItem, w->listener);
    }
  }
  if (arch == "shared_epoll")
    for (auto& w : workers_)
      role(k.listen_epoll_add(*listener_, *w->ep, p_.epoll_exclusive).id, Role::kListenItem, listener_);
  if (arch == "dispatcher") {
    for (auto& w : workers_) {
      Socket& pipe = k.add_socket(0, 0u);  // the notify pipe's read end (no NIC traffic)
      pipe.nic = -1;
      w->notify = pipe.id;
      role(pipe.id, Role::kNotify, nullptr);
      k.epoll_ctl_add(*w->ep, pipe);
    }
  }
  if (arch == "dispatcher" || arch == "thread_pool") {
    const CpuMask mask = p_.dispatcher_cpus.empty()
                             ? allowed
                             : CpuMask::parse(p_.dispatcher_cpus, k.nr_cpus(), path_ + "/dispatcher_cpus");
    dispatcher_ = &create_user_thread(k, type_ + "/" + (arch == "dispatcher" ? "listener" : "dispatcher"), mask,
                                      p_.server_policy, p_.server_rt_priority, p_.server_nice);
    if (arch == "thread_pool") {
      dispatch_ep_ = &k.add_epoll();
      if (listener_) role(k.listen_epoll_add(*listener_, *dispatch_ep_, false).id, Role::kListenItem, listener_);
      dispatcher_->body = pool_dispatcher();
    } else {
      dispatcher_->body = listener_thread();
    }
    k.start_task(*dispatcher_, mask.first());
  }
  (void)rng;
}

void RpcServer::attach_flow(Flow& f, Socket& s, std::size_t index) {
  Kernel& k = *k_;
  const std::string& arch = p_.server_arch;
  if (handshakes_) {
    f.conn = Flow::Conn::kNone;
    k.listen_child(arch == "reuseport" ? *workers_[static_cast<std::size_t>(f.thread)]->listener : *listener_, s);
    return;
  }
  if (arch == "thread_pool") {
    k.epoll_ctl_add(*dispatch_ep_, s, kPoolItem);
    s.reader = dispatcher_;
    return;
  }
  if (arch != "reuseport") f.thread = static_cast<int>(index % workers_.size());  // accepted round-robin
  Worker& w = *workers_[static_cast<std::size_t>(f.thread)];
  s.reader = w.task;
  if (arch == "shared_accept") {
    w.conn = s.id;
    return;
  }
  k.epoll_ctl_add(*w.ep, s);
}

Proc<void> RpcServer::worker_body(Worker& w) {
  const std::string& arch = p_.server_arch;
  if (arch == "thread_pool") {
    co_await pool_worker(w);
  } else if (arch == "shared_accept") {
    co_await accept_loop(w);
  } else {
    co_await epoll_loop(w);
  }
}

Proc<int> RpcServer::worker_epoll_wait(Worker& w, std::vector<int>& events) {
  co_return co_await epoll_wait_spin(*k_, *w.task, *w.ep, static_cast<int>(p_.maxevents), events,
                                     static_cast<int>(p_.epoll_timeout), p_.spin_us * kNsPerUs);
}

bool RpcServer::frame_next(Flow& f, Socket& s, Request* r, Nanos* readable) {
  if (f.unread.empty() || f.srv_got < static_cast<std::int64_t>(f.unread.front().request_size)) return false;
  *r = f.unread.front();
  f.unread.pop_front();
  f.rmem -= truesize(*r);
  if (!f.held.empty() && !f.window_update) {
    // tcp_cleanup_rbuf(): the read opens the window; the ACK saying so reaches the client.
    f.window_update = true;
    k_->host().schedule(k_->now() + paths_[static_cast<std::size_t>(f.host)].latency_ns, Prio::kWire, this, kWindowOpen,
                        static_cast<std::uint64_t>(s.id));
  }
  f.srv_got -= r->request_size;
  f.srv_end += r->request_size;
  while (!s.rx_stamps.empty() && s.rx_stamps.front().end < f.srv_end)
    s.rx_stamps.pop_front();
  *readable = s.rx_stamps.empty() ? k_->now() : s.rx_stamps.front().at;
  return true;
}

Proc<void> RpcServer::serve(Worker& w, Flow& f, Socket& s, const Request& r, Nanos readable) {
  Kernel& k = *k_;
  Task& t = *w.task;
  (void)f;
  const Nanos begin = k.now();
  const bool counted = in_window(begin);
  if (counted) {
    ++started_;
    queue_hist_.record(begin - readable);
    if (begin - readable > p_.overload_threshold_us * 1000) ++overloaded_;
  }
  const Nanos service = r.service_ns >= 0 ? r.service_ns : static_cast<Nanos>(std::llround(service_.sample(w.rng)));
  co_await k.exec(k.task_ctx(t, CpuClass::kUser), service);
  if (p_.block_probability > 0 && w.rng.bernoulli(p_.block_probability)) {
    const auto off = static_cast<Nanos>(std::llround(block_.sample(w.rng)));
    if (off > 0) {
      if (counted) ++blocked_;
      k.host().schedule(k.now() + off, Prio::kTimer, this, kWorkerWake, static_cast<std::uint64_t>(t.id));
      co_await k.sleep_on(t, w.sleep);
    }
  }
  for (std::int64_t left = r.response_size; left > 0;) {
    const std::int64_t chunk = std::min(left, p_.buffer_size);
    co_await k.sys_send(t, s, chunk);
    left -= chunk;
  }
  if (counted) service_hist_.record(k.now() - begin);
  ++w.served;
}

Proc<void> RpcServer::close_conn(Worker& w, Socket& s) {
  Kernel& k = *k_;
  co_await k.exec(k.task_ctx(*w.task, CpuClass::kSystem), k.close_ns());
  Flow& f = flows_[static_cast<std::size_t>(s.id)];
  f.srv_got = 0;
  f.srv_end = 0;
  k.tcp_close(k.task_ctx(*w.task, CpuClass::kSystem), s);
}

Proc<bool> RpcServer::serve_framed(Worker& w, Flow& f, Socket& s) {
  Request req;
  Nanos readable = 0;
  bool served = false;
  while (frame_next(f, s, &req, &readable)) {
    co_await serve(w, f, s, req, readable);
    served = true;
  }
  if (!served || p_.connections != "per_request") co_return false;
  co_await close_conn(w, s);
  co_return true;
}

Proc<void> RpcServer::accept_into(Task& t, Epoll& ep, Socket& item) {
  Kernel& k = *k_;
  Listener& l = *roles_[static_cast<std::size_t>(item.id)].listener;
  const int child = co_await k.sys_accept(t, l, nullptr);  // O_NONBLOCK: -EAGAIN if another took it
  if (child >= 0) {
    co_await k.exec(k.task_ctx(t, CpuClass::kSystem), k.epoll_ctl_ns());  // EPOLL_CTL_ADD
    k.epoll_ctl_add(ep, k.socket(child), &ep == dispatch_ep_ ? kPoolItem : kEpollIn);
    k.socket(child).reader = &t;
  }
}

Proc<void> RpcServer::epoll_loop(Worker& w) {
  Kernel& k = *k_;
  Task& t = *w.task;
  std::vector<int> events;
  events.reserve(static_cast<std::size_t>(p_.maxevents));
  for (;;) {
    const int n = co_await worker_epoll_wait(w, events);
    for (int i = 0; i < n; ++i) {
      Socket& s = k.socket(events[static_cast<std::size_t>(i)]);
      const Role r =
          static_cast<std::size_t>(s.id) < roles_.size() ? roles_[static_cast<std::size_t>(s.id)].role : Role::kConn;
      if (r == Role::kListenItem) {
        co_await accept_into(t, *w.ep, s);
        continue;
      }
      if (r == Role::kNotify) {  // thread_libevent_process(): read the byte, cq_pop(), add the connection
        co_await k.sys_recv(t, s, 1);
        const int conn = w.handoff.front();
        w.handoff.pop_front();
        co_await k.exec(k.task_ctx(t, CpuClass::kSystem), k.epoll_ctl_ns());
        k.epoll_ctl_add(*w.ep, k.socket(conn));
        continue;
      }
      Flow& f = flows_[static_cast<std::size_t>(s.id)];
      f.srv_got += co_await k.sys_recv(t, s, p_.buffer_size);
      if (co_await serve_framed(w, f, s)) continue;
    }
  }
}

Proc<void> RpcServer::accept_loop(Worker& w) {
  Kernel& k = *k_;
  Task& t = *w.task;
  for (;;) {
    if (w.conn < 0) {
      w.conn = co_await k.sys_accept(t, *listener_, &w.wait);  // blocks until a connection
      k.socket(w.conn).reader = &t;
    }
    Socket& s = k.socket(w.conn);
    Flow& f = flows_[static_cast<std::size_t>(s.id)];
    f.srv_got += co_await k.sys_recv_wait(t, s, p_.buffer_size);  // read() blocks until data
    if (co_await serve_framed(w, f, s)) w.conn = -1;
  }
}

Proc<void> RpcServer::listener_thread() {
  Kernel& k = *k_;
  Task& t = *dispatcher_;
  WaitQueue wq;
  for (;;) {
    const int conn = co_await k.sys_accept(t, *listener_, &wq);
    // dispatch_conn_new(): the next worker round-robin, cq_push(), write(notify_send_fd, "c", 1).
    Worker& w = *workers_[next_worker_];
    flows_[static_cast<std::size_t>(conn)].thread = static_cast<int>(next_worker_);
    k.socket(conn).reader = w.task;
    next_worker_ = (next_worker_ + 1) % workers_.size();
    w.handoff.push_back(conn);
    Socket& pipe = k.socket(w.notify);
    const Nanos wake = w.ep->wq.waiter ? k.costs().wakeup_ns : 0;
    co_await k.exec(k.task_ctx(t, CpuClass::kSystem), k.costs().syscall_ns + k.costs().sk_data_ready_ns + wake);
    pipe.rx_avail += 1;  // pipe_write() -> wake_up_interruptible_sync_poll() -> ep_poll_callback()
    k.sk_data_ready(k.task_ctx(t, CpuClass::kSystem), pipe);
  }
}

Proc<void> RpcServer::pool_dispatcher() {
  Kernel& k = *k_;
  Task& t = *dispatcher_;
  Epoll& ep = *dispatch_ep_;
  std::vector<int> events;
  events.reserve(static_cast<std::size_t>(p_.maxevents));
  for (;;) {
    const int n = co_await k.epoll_wait(t, ep, static_cast<int>(p_.maxevents), events);
    for (int i = 0; i < n; ++i) {
      Socket& s = k.socket(events[static_cast<std::size_t>(i)]);
      if (static_cast<std::size_t>(s.id) < roles_.size() &&
          roles_[static_cast<std::size_t>(s.id)].role == Role::kListenItem) {
        co_await accept_into(t, ep, s);
        continue;
      }
      Flow& f = flows_[static_cast<std::size_t>(s.id)];
      f.srv_got += co_await k.sys_recv(t, s, p_.buffer_size);
      Request req;
      Nanos readable = 0;
      while (frame_next(f, s, &req, &readable))
        f.framed.push_back(Flow::Framed{req, readable});
      if (f.framed.empty()) {  // no whole request yet: re-arm
        co_await k.epoll_ctl_mod(t, ep, s, kPoolItem);
        continue;
      }
      // The item stays disarmed while its requests are queued or served: a connection is queued once.
      pool_jobs_.push_back(s.id);
      for (auto& w : workers_)  // workers polling the queue see the store
        if (w->task->spinning) k.spin_wake(*w->task);
      if (!pool_futex_.waiters.empty()) {
        co_await k.exec(k.task_ctx(t, CpuClass::kSystem), k.futex_ns() + k.costs().wakeup_ns);
        futex_wakes_ += static_cast<std::uint64_t>(k.futex_wake(pool_futex_, 1, t.cpu));
      }
    }
  }
}

Proc<void> RpcServer::pool_worker(Worker& w) {
  Kernel& k = *k_;
  Task& t = *w.task;
  for (;;) {
    while (pool_jobs_.empty()) {
      if (p_.spin_us > 0) {  // poll the queue in user space first
        const Nanos deadline = k.now() + p_.spin_us * 1000;
        while (pool_jobs_.empty() && k.now() < deadline) {
          co_await k.spin_until(t, nullptr, nullptr, deadline, CpuClass::kUser);
          co_await k.cond_resched(t);
        }
        if (!pool_jobs_.empty()) break;
      }
      // futex(FUTEX_WAIT): the kernel compares the word under the bucket lock before queueing.
      co_await k.exec(k.task_ctx(t, CpuClass::kSystem), k.futex_ns());
      if (!pool_jobs_.empty()) break;
      pool_futex_.waiters.push_back(&w.wait);
      co_await k.sleep_on(t, w.wait);
    }
    const int sock = pool_jobs_.front();
    pool_jobs_.pop_front();
    Socket& s = k.socket(sock);
    Flow& f = flows_[static_cast<std::size_t>(sock)];
    while (!f.framed.empty()) {
      const Flow::Framed job = f.framed.front();
      f.framed.pop_front();
      co_await serve(w, f, s, job.r, job.at);
    }
    if (p_.connections == "per_request") {
      co_await close_conn(w, s);
    } else {
      co_await k.epoll_ctl_mod(t, *dispatch_ep_, s, kPoolItem);  // re-arm it
    }
  }
}

// ---- the idealised client's connections ----------------------------------------------------

void RpcServer::client_connect(Flow& f, Nanos at) {
  f.conn = Flow::Conn::kConnecting;
  uplink_.send(f.host, WireTrain{f.sock, 0, 1, false}, at + p_.client_tx_ns);  // connect(): the SYN
}

void RpcServer::client_connected(Flow& f) {
  // tcp_rcv_synsent_state_process(): connect() returns; the ACK goes out with the request.
  f.conn = Flow::Conn::kOpen;
  if (f.pending.empty()) return;
  const Request r = f.pending.front();
  f.pending.pop_front();
  transmit(f, r, k_->now() + p_.client_tx_ns);
  while (p_.connections == "persistent" && !f.pending.empty()) {
    transmit(f, f.pending.front(), k_->now() + p_.client_tx_ns);
    f.pending.pop_front();
  }
}

void RpcServer::client_fin(Flow& f) {
  f.conn = Flow::Conn::kNone;
  if (!f.pending.empty()) client_connect(f, k_->now());
}

Json RpcServer::arch_report() const {
  Json j;
  j["server_arch"] = p_.server_arch;
  j["connections"] = p_.connections;
  Json served = Json::array();
  for (const auto& w : workers_)
    served.push_back(w->served);
  j["requests_per_worker"] = served;
  std::uint64_t syns = 0, overflows = 0, accepted = 0, wakeups = 0;
  const auto add = [&](const Listener* l) {
    if (!l) return;
    syns += l->syns;
    overflows += l->overflows;
    accepted += l->accepted;
    wakeups += l->wakeups;
  };
  add(listener_);
  for (const auto& w : workers_)
    add(w->listener);
  j["syns"] = syns;
  j["listen_overflows"] = overflows;
  j["accepts"] = accepted;
  j["listen_wakeups"] = wakeups;
  j["syn_retransmits"] = syn_retransmits_;
  j["futex_wakes"] = futex_wakes_;
  return j;
}

}  // namespace napisim
