#include "sim/workloads/mutilate.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "sim/hw/rss.hpp"

namespace napisim {

namespace mutilate {

namespace {

bool parse_number(const std::string& s, double& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && std::isfinite(out);
}

// "a,b,c" -> up to three numbers (missing ones are 0, as createGenerator's atof(NULL) guard).
bool parse_args(const std::string& s, std::array<double, 3>& a, std::size_t want) {
  a = {0, 0, 0};
  std::size_t pos = 0, i = 0;
  while (pos <= s.size() && i < 3) {
    const std::size_t comma = s.find(',', pos);
    const std::string tok = s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (!parse_number(tok, a[i++])) return false;
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return i == want;
}

}  // namespace

Generator Generator::parse(const std::string& spec, const std::string& path) {
  const std::string expected =
      "expected a mutilate distribution: a number, fb_key, fb_value, fb_ia, fixed:V, uniform:SCALE, "
      "normal:MEAN,SD, exponential[:LAMBDA], pareto:LOC,SCALE,SHAPE or gev:LOC,SCALE,SHAPE (shape != 0); got \"" +
      spec + "\"";
  if (spec == "fb_key") return gev(30.7984, 8.20449, 0.078688);
  if (spec == "fb_value") return fb_value();
  if (spec == "fb_ia") return gpareto(0, 16.0292, 0.154971);
  double v = 0;
  if (parse_number(spec, v)) {
    if (v < 0) throw ConfigError(path, expected);
    return fixed(v);
  }
  const std::size_t colon = spec.find(':');
  const std::string name = spec.substr(0, colon);
  const std::string args = colon == std::string::npos ? "" : spec.substr(colon + 1);
  std::array<double, 3> a{};
  if (name == "exponential" && args.empty()) return Generator(Kind::kExponential, 0, 0, 0);
  if (name == "fixed" && parse_args(args, a, 1) && a[0] >= 0) return fixed(a[0]);
  if (name == "uniform" && parse_args(args, a, 1) && a[0] >= 0) return Generator(Kind::kUniform, a[0], 0, 0);
  if (name == "normal" && parse_args(args, a, 2) && a[1] >= 0) return Generator(Kind::kNormal, a[0], a[1], 0);
  // A rate of 0 or a scale of 0 collapses the distribution to one value (0 for exponential).
  if (name == "exponential" && parse_args(args, a, 1) && a[0] > 0) return Generator(Kind::kExponential, a[0], 0, 0);
  if (name == "pareto" && parse_args(args, a, 3) && a[2] != 0 && a[1] > 0) return gpareto(a[0], a[1], a[2]);
  if (name == "gev" && parse_args(args, a, 3) && a[2] != 0 && a[1] > 0) return gev(a[0], a[1], a[2]);
  throw ConfigError(path, expected);
}

double Generator::generate(double u) const {
  switch (kind_) {
    case Kind::kFixed:
      return a_;
    case Kind::kUniform:
      return a_ * u;
    case Kind::kNormal:
      return a_ + b_ * std::sqrt(-2 * std::log(u)) * std::cos(2 * M_PI * u);  // Normal: V = U
    case Kind::kExponential:
      return a_ <= 0 ? 0.0 : -std::log(u) / a_;
    case Kind::kGPareto:
      return a_ + b_ * (std::pow(u, -c_) - 1) / c_;
    case Kind::kGev:
      return a_ + b_ * (std::pow(-std::log(u), -c_) - 1) / c_;  // Exponential(1) at U, then GEV
    case Kind::kFbValue: {  // Discrete: the table, else the default GPareto at the same U
      double sum = 0;
      for (const auto& pv : kFbValueTable) {
        sum += pv[0];
        if (u < sum) return pv[1];
      }
      return a_ + b_ * (std::pow(u, -c_) - 1) / c_;
    }
  }
  return 0;
}

double Generator::generate(Rng& r) const {
  // drand48() is in [0, 1); 1 - U is in (0, 1], the same distribution without log(0).
  const double u = 1.0 - r.uniform01();
  if (kind_ != Kind::kFbValue) return generate(u);
  double sum = 0;
  for (const auto& pv : kFbValueTable) {
    sum += pv[0];
    if (u < sum) return pv[1];
  }
  return a_ + b_ * (std::pow(1.0 - r.uniform01(), -c_) - 1) / c_;  // def->generate(-1): a fresh U
}

bool Generator::set_lambda(double lambda) {
  switch (kind_) {
    case Kind::kFixed:
      a_ = lambda > 0 ? 1.0 / lambda : 0.0;
      return true;
    case Kind::kUniform:
      a_ = lambda > 0 ? 2.0 / lambda : 0.0;
      return true;
    case Kind::kNormal:
      a_ = lambda > 0 ? 1.0 / lambda : 0.0;
      return true;
    case Kind::kExponential:
      a_ = lambda;
      return true;
    case Kind::kGPareto:
      b_ = lambda <= 0 ? 0.0 : (1 - c_) / lambda - (1 - c_) * a_;
      return true;
    case Kind::kGev:
    case Kind::kFbValue:
      return false;
  }
  return false;
}

std::uint64_t fnv_64(std::uint64_t in) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (int i = 0; i < 8; ++i) {
    h ^= (in >> (8 * i)) & 0xff;
    h *= 0x100000001b3ULL;
  }
  return h;
}

int key_length(const Generator& g, std::uint64_t ind, std::int64_t records) {
  const double u = static_cast<double>(fnv_64(ind)) / static_cast<double>(ULLONG_MAX);
  const double gen = g.generate(u);
  const double digits = std::floor(std::log10(static_cast<double>(records))) + 1;
  const double len = std::max(std::isfinite(gen) ? std::round(gen) : 0.0, digits);
  return static_cast<int>(std::min(len, 249.0));  // snprintf(key, 250, ...)
}

void LogHistogram::sample(double s) {
  const double x = std::log(s) / std::log(1.1);
  std::size_t bin = 0;
  if (x >= static_cast<double>(bins_.size() - 1))
    bin = bins_.size() - 1;
  else if (x >= 0)
    bin = static_cast<std::size_t>(x);
  sum_ += s;
  sum_sq_ += s * s;
  ++bins_[bin];
  ++total_;
}

double LogHistogram::stddev() const {
  if (total_ == 0) return 0.0;
  const double n = static_cast<double>(total_);
  return std::sqrt(std::max(0.0, sum_sq_ / n - std::pow(sum_ / n, 2.0)));
}

double LogHistogram::get_nth(double nth) const {
  if (total_ == 0) return 0.0;
  const double target = static_cast<double>(total_) * nth / 100;
  std::uint64_t n = 0;
  for (std::size_t i = 0; i < bins_.size(); ++i) {
    n += bins_[i];
    if (static_cast<double>(n) > target) {
      const double left = target - static_cast<double>(n - bins_[i]);
      const double lo = std::pow(1.1, static_cast<double>(i));
      return lo + left / static_cast<double>(bins_[i]) * (std::pow(1.1, static_cast<double>(i + 1)) - lo);
    }
  }
  return std::pow(1.1, static_cast<double>(bins_.size()));
}

Json LogHistogram::to_json() const {
  return Json{{"count", total_},    {"avg", average()},   {"std", stddev()},    {"min", get_nth(0)},
              {"p5", get_nth(5)},   {"p10", get_nth(10)}, {"p50", get_nth(50)}, {"p90", get_nth(90)},
              {"p95", get_nth(95)}, {"p99", get_nth(99)}};
}

}  // namespace mutilate

namespace {

int digits(std::uint32_t v) {
  return v < 10 ? 1 : 1 + digits(v / 10);
}

// A train carried in an event's argument: ack flag, socket, segments, payload bytes.
std::uint64_t pack(int sock, std::uint32_t bytes, std::uint32_t segs, bool ack) {
  NAPISIM_ASSERT(sock >= 0 && sock < (1 << 23) && segs < (1u << 16) && bytes < (1u << 24), "train too large to pack");
  return (static_cast<std::uint64_t>(ack) << 63) | (static_cast<std::uint64_t>(sock) << 40) |
         (static_cast<std::uint64_t>(segs) << 24) | bytes;
}
int unpack_sock(std::uint64_t a) {
  return static_cast<int>((a >> 40) & 0x7fffff);
}
std::uint32_t unpack_segs(std::uint64_t a) {
  return static_cast<std::uint32_t>((a >> 24) & 0xffff);
}
std::uint32_t unpack_bytes(std::uint64_t a) {
  return static_cast<std::uint32_t>(a & 0xffffff);
}
bool unpack_ack(std::uint64_t a) {
  return (a >> 63) != 0;
}

}  // namespace

Mutilate::Mutilate(const MutilateParams& p, const std::string& path)
    : p_(p)
    , keysize_(mutilate::Generator::parse(p.keysize, path + "/keysize"))
    , valuesize_(mutilate::Generator::parse(p.valuesize, path + "/valuesize"))
    , iagen_(mutilate::Generator::fixed(0)) {
  // Connection::Connection(): lambda <= 0 -> createGenerator("0"), else iadist with set_lambda().
  if (lambda() > 0) {
    iagen_ = mutilate::Generator::parse(p.iadist, path + "/iadist");
    if (!iagen_.set_lambda(lambda()))
      throw ConfigError(path + "/iadist",
                        "expected an inter-arrival distribution that can be scaled to --qps "
                        "(not gev/fb_key/fb_value); got \"" +
                            p.iadist + "\"");
    // set_lambda() gives a generalized Pareto the mean 1/lambda only for shape < 1 (a finite mean);
    // otherwise every gap is its location, 0 here: unbounded requests at one instant.
    if (!iagen_.finite_mean())
      throw ConfigError(path + "/iadist",
                        "expected a distribution with a finite mean (pareto shape < 1); got \"" + p.iadist + "\"");
  }
}

double Mutilate::lambda() const {
  return static_cast<double>(p_.qps) / static_cast<double>(p_.threads * p_.connections);
}

void Mutilate::setup(Kernel& k, const std::vector<ClientPath>& paths, const RngRoot& rng) {
  k_ = &k;
  paths_ = paths;
  k.set_peer(this);
  uplink_.setup(k, paths_);
  const int n = k.nr_cpus();
  report_mask_ = CpuMask::parse(p_.cpu_report_cpus, n, "/workload/params/cpu_report_cpus");
  // The database (Connection::start_loading): every record set once with a valuesize draw.
  Rng load = rng.stream("mutilate/load");
  key_len_.resize(static_cast<std::size_t>(p_.records));
  value_len_.resize(static_cast<std::size_t>(p_.records));
  for (std::int64_t r = 0; r < p_.records; ++r) {
    key_len_[static_cast<std::size_t>(r)] =
        static_cast<std::uint16_t>(mutilate::key_length(keysize_, static_cast<std::uint64_t>(r), p_.records));
    value_len_[static_cast<std::size_t>(r)] =
        static_cast<std::uint32_t>(std::clamp(valuesize_.generate(load), 0.0, 1048576.0));
  }
  // memcached worker threads (thread.c memcached_thread_init), each with its own event base.
  const CpuMask allowed = CpuMask::parse(p_.server_cpus, n, "/workload/params/server_cpus");
  std::vector<Task*> workers;
  for (std::int64_t i = 0; i < p_.server_threads; ++i) {
    const ThreadHome home = thread_home(allowed, i, p_.pin_threads);
    Task& t = create_user_thread(k, "memcached/" + std::to_string(i), home.mask, p_.server_policy,
                                 p_.server_rt_priority, p_.server_nice);
    workers.push_back(&t);
    Epoll& ep = k.add_epoll();
    epolls_.push_back(&ep);
    t.body = worker(t, ep);
    k.start_task(t, home.cpu);
  }
  clients_.setup(k, paths_);
  // Connections: client thread i/c of host (i/c) mod hosts -> 10.0.0.1:11211.
  const std::int64_t total = p_.threads * p_.connections;
  conns_.resize(static_cast<std::size_t>(total));
  for (std::int64_t i = 0; i < total; ++i) {
    Conn& c = conns_[static_cast<std::size_t>(i)];
    c.host = static_cast<int>((i / p_.connections) % static_cast<std::int64_t>(paths_.size()));
    const FlowTuple tuple{
        0x0a000002u + (static_cast<std::uint32_t>(c.host) << 16) + (static_cast<std::uint32_t>(i / 64000) << 8),
        0x0a000001u, static_cast<std::uint16_t>(1024 + i % 64000), 11211};
    const int nic = paths_[static_cast<std::size_t>(c.host)].nic;
    Socket& s = k.add_socket(nic, tuple);
    c.sock = s.id;
    if (conn_of_sock_.size() <= static_cast<std::size_t>(s.id))
      conn_of_sock_.resize(static_cast<std::size_t>(s.id) + 1, -1);
    conn_of_sock_[static_cast<std::size_t>(s.id)] = static_cast<int>(i);
    const int napi_id =
        k.nics()[static_cast<std::size_t>(nic)]->channels[static_cast<std::size_t>(s.rx_queue)]->napi.id;
    c.worker = p_.dispatch == "napi_id" ? static_cast<int>(napi_id % p_.server_threads)
                                        : static_cast<int>(i % p_.server_threads);  // dispatch_conn_new()
    k.epoll_ctl_add(*epolls_[static_cast<std::size_t>(c.worker)], s);
    s.reader = workers[static_cast<std::size_t>(c.worker)];
    c.rng = rng.stream("mutilate/conn/" + std::to_string(i));
    if (paths_[static_cast<std::size_t>(c.host)].kernel) c.csock = clients_.add_socket(c.host, c.sock, tuple);
  }
  // Linux client hosts: mutilate's threads on each host's own kernel, thread t on host t mod hosts.
  std::vector<int> host_threads(paths_.size(), 0);
  for (std::int64_t t = 0; t < p_.threads; ++t) {
    const int host = static_cast<int>(t % static_cast<std::int64_t>(paths_.size()));
    Kernel* ck = paths_[static_cast<std::size_t>(host)].kernel;
    if (!ck) continue;
    auto th = std::make_unique<ClientThread>();
    th->host = host;
    // stick_this_thread_to_core(id % cores): the thread's index on its host.
    CpuMask pin(ck->nr_cpus());
    const int cpu = host_threads[static_cast<std::size_t>(host)]++ % ck->nr_cpus();
    pin.set(cpu);
    th->task = &create_user_thread(*ck, "mutilate/" + std::to_string(t), pin, p_.client_policy, p_.client_rt_priority,
                                   p_.client_nice);
    th->ep = &ck->add_epoll();
    for (std::int64_t j = 0; j < p_.connections; ++j) {
      const auto i = static_cast<std::size_t>(t * p_.connections + j);
      Socket& cs = ck->socket(conns_[i].csock);
      ck->epoll_ctl_add(*th->ep, cs);
      cs.reader = th->task;
      th->conns.push_back(static_cast<int>(i));
    }
    th->task->body = client_thread(*th);
    ck->start_task(*th->task, cpu);
    client_threads_.push_back(std::move(th));
  }
}

Proc<void> Mutilate::client_thread(ClientThread& th) {
  Kernel& ck = *paths_[static_cast<std::size_t>(th.host)].kernel;
  Task& t = *th.task;
  // INIT_WRITE: each connection's first request one inter-arrival draw after the start.
  for (int i : th.conns)
    conns_[static_cast<std::size_t>(i)].next_time =
        ck.now() + static_cast<Nanos>(iagen_.generate(conns_[static_cast<std::size_t>(i)].rng) * 1e9);
  std::vector<int> events;
  events.reserve(static_cast<std::size_t>(p_.maxevents));
  for (;;) {
    Nanos next = kNever;  // the earliest issue a connection waits for (WAITING_FOR_TIME)
    for (int i : th.conns) {
      Conn& c = conns_[static_cast<std::size_t>(i)];
      co_await client_drive(ck, t, c);
      if (c.client_ops.size() < static_cast<std::size_t>(p_.depth)) next = std::min(next, c.next_time);
    }
    int n;
    if (!p_.blocking) {  // EVLOOP_NONBLOCK: epoll_wait(0) until events or the next issue
      n = co_await ck.epoll_wait(t, *th.ep, static_cast<int>(p_.maxevents), events, 0);
      if (n == 0)
        n = co_await ck.epoll_wait_busy_loop(t, *th.ep, static_cast<int>(p_.maxevents), events, nullptr, next);
    } else if (next == kNever) {
      n = co_await ck.epoll_wait(t, *th.ep, static_cast<int>(p_.maxevents), events);
    } else {
      n = co_await ck.epoll_wait_until(t, *th.ep, static_cast<int>(p_.maxevents), events, next);
    }
    if (breakdown_) ck.stamp_epoll_return(t);
    for (int e = 0; e < n; ++e) {
      Socket& cs = ck.socket(events[static_cast<std::size_t>(e)]);
      Conn& c = conns_[static_cast<std::size_t>(
          conn_of_sock_[static_cast<std::size_t>(clients_.server_sock(th.host, cs.id))])];
      const Nanos handler = ck.now();
      c.resp_got += co_await ck.sys_recv(t, cs, p_.read_buffer);
      // read_callback(): complete responses, oldest first; the server filled in resp_bytes.
      while (!c.client_ops.empty() && c.client_ops.size() > c.server_ops.size()) {
        const Op op = c.client_ops.front();
        if (op.resp_bytes == 0 || c.resp_got < op.resp_bytes) break;
        c.resp_got -= op.resp_bytes;
        c.client_ops.pop_front();
        if (breakdown_) {
          ConnMarks& cm = conn_marks(c);
          cm.resp_end += op.resp_bytes;
          cm.q.front().cli = RxMarks{ck.path_through(cs.id, cm.resp_end), t.epoll_stamp, handler};
        }
        finish_op(c, op, ck.now());
        co_await ck.exec(ck.task_ctx(t, CpuClass::kUser), p_.client_user_ns);
      }
    }
  }
}

Proc<void> Mutilate::client_drive(Kernel& ck, Task& t, Conn& c) {
  for (;;) {
    if (c.client_ops.size() >= static_cast<std::size_t>(p_.depth)) co_return;  // WAITING_FOR_OPQ
    const Nanos now = ck.now();
    if (now < c.next_time) co_return;  // WAITING_FOR_TIME
    co_await ck.sys_send(t, ck.socket(c.csock), issue_due(c, now));
    if (breakdown_) conn_marks(c).q.back().tx = ck.socket(c.csock).stamp_tx;  // only this thread adds to it
  }
}

void Mutilate::start() {
  // INIT_WRITE: the first request one inter-arrival draw after the start.
  for (Conn& c : conns_) {
    if (c.csock >= 0) continue;  // a Linux client host's threads drive their own connections
    c.next_time = static_cast<Nanos>(iagen_.generate(c.rng) * 1e9);
    drive_write_machine(c, k_->now());
  }
}

void Mutilate::drive_write_machine(Conn& c, Nanos now) {
  for (;;) {
    if (c.client_ops.size() >= static_cast<std::size_t>(p_.depth)) return;  // WAITING_FOR_OPQ
    if (now < c.next_time) {                                                // WAITING_FOR_TIME
      if (!c.timer_pending) {
        c.timer_pending = true;
        k_->host().schedule(c.next_time, Prio::kWire, this, kIssueTimer,
                            static_cast<std::uint64_t>(&c - conns_.data()));
      }
      return;
    }
    const std::uint32_t bytes = issue_due(c, now);
    if (breakdown_) conn_marks(c).q.back().tx = now + p_.client_tx_ns;
    uplink_.send_message(c.host, c.sock, bytes, now + p_.client_tx_ns);
  }
}

std::uint32_t Mutilate::issue_due(Conn& c, Nanos now) {
  const bool measured = in_window(now);
  if (measured) {
    slip_sum_us_ += static_cast<double>(now - c.next_time) / 1000.0;
    ++slip_n_;
  }
  const std::uint32_t bytes = new_op(c, now);
  if (measured) op_sampler_.sample(static_cast<double>(c.client_ops.size()));  // stats.log_op()
  c.next_time += static_cast<Nanos>(iagen_.generate(c.rng) * 1e9);
  if (p_.skip && lambda() > 0 && now - c.next_time > 5000000 &&
      c.client_ops.size() >= static_cast<std::size_t>(p_.depth)) {
    while (c.next_time < now - 4000000) {
      if (measured) ++skips_;
      c.next_time += static_cast<Nanos>(iagen_.generate(c.rng) * 1e9);
    }
  }
  return bytes;
}

std::uint32_t Mutilate::new_op(Conn& c, Nanos now) {
  // Connection::issue_something(): key = lrand48() % records; set if drand48() < update.
  Op op;
  op.start = now;
  op.record = static_cast<std::uint32_t>(c.rng.uniform_int(static_cast<std::uint64_t>(p_.records)));
  op.set = c.rng.uniform01() < p_.update;
  const std::uint32_t klen = key_len_[op.record];
  if (op.set) {
    op.value_len = static_cast<std::uint32_t>(std::clamp(valuesize_.generate(c.rng), 0.0, 1048576.0));
    op.req_bytes = 4 + klen + 5 + static_cast<std::uint32_t>(digits(op.value_len)) + 2 + op.value_len +
                   2;  // set K 0 0 L\r\n V\r\n
  } else {
    op.req_bytes = 4 + klen + 2;  // "get <key>\r\n"
  }
  c.client_ops.push_back(op);
  c.server_ops.push_back(op);
  if (breakdown_) conn_marks(c).q.push_back(Marks{});
  max_outstanding_ = std::max<std::uint64_t>(max_outstanding_, c.client_ops.size());
  NAPISIM_ASSERT(c.client_ops.size() <= static_cast<std::size_t>(p_.depth), "mutilate: more outstanding than --depth");
  ++issued_;
  if (in_window(now)) tx_bytes_ += op.req_bytes;
  return op.req_bytes;
}

Proc<void> Mutilate::worker(Task& t, Epoll& ep) {
  std::vector<int> events;
  events.reserve(static_cast<std::size_t>(p_.maxevents));
  Kernel& k = *k_;
  for (;;) {
    int n = 0;
    if (p_.spin_us > 0) {  // spin_us: poll before sleeping
      n = co_await epoll_wait_spin(k, t, ep, static_cast<int>(p_.maxevents), events, static_cast<int>(p_.epoll_timeout),
                                   p_.spin_us * kNsPerUs);
    } else {
      n = co_await k.epoll_wait(t, ep, static_cast<int>(p_.maxevents), events, static_cast<int>(p_.epoll_timeout));
      if (n == 0) n = co_await k.epoll_wait_busy_loop(t, ep, static_cast<int>(p_.maxevents), events);  // timeout 0
    }
    if (breakdown_) k.stamp_epoll_return(t);
    for (int i = 0; i < n; ++i) {
      Socket& s = k.socket(events[static_cast<std::size_t>(i)]);
      Conn& c = conns_[static_cast<std::size_t>(conn_of_sock_[static_cast<std::size_t>(s.id)])];
      const Nanos handler = k.now();
      co_await k.exec(k.task_ctx(t, CpuClass::kUser), p_.event_ns);  // event_handler -> drive_machine
      c.req_got += co_await k.sys_recv(t, s, p_.read_buffer);        // try_read_network
      const Nanos read_done = k.now();
      // Every complete command in the read buffer, then one transmit() of all responses.
      std::int64_t resp = 0;
      std::size_t done = 0;
      for (std::size_t j = 0; j < c.server_ops.size(); ++j) {
        const Op op = c.server_ops[j];  // a copy: the client may append (and grow the Fifo) meanwhile
        if (c.req_got < op.req_bytes) break;
        c.req_got -= op.req_bytes;
        // client_ops holds the ops processed and not yet finished, then server_ops: this is op
        // number `seq` of the connection (unchanged by the client's pops and issues meanwhile).
        const std::uint64_t seq = breakdown_ ? conn_marks(c).first + c.client_ops.size() - c.server_ops.size() + j : 0;
        if (breakdown_) {
          ConnMarks& cm = conn_marks(c);
          cm.req_end += op.req_bytes;
          Marks& m = marks(c, seq);
          m.srv = RxMarks{k.path_through(s.id, cm.req_end), t.epoll_stamp, handler};
          m.read_done = read_done;
          m.process = k.now();
        }
        std::uint32_t r = 0;
        if (op.set) {
          co_await k.exec(k.task_ctx(t, CpuClass::kUser),
                          p_.set_ns + static_cast<Nanos>(op.value_len) * p_.set_ns_per_kb / 1024);
          value_len_[op.record] = op.value_len;
          r = 8;  // "STORED\r\n"
        } else {
          co_await k.exec(k.task_ctx(t, CpuClass::kUser), p_.get_ns);
          const std::uint32_t v = value_len_[op.record];
          r = 6 + key_len_[op.record] + 3 + static_cast<std::uint32_t>(digits(v)) + 2 + v + 2 + 5;  // VALUE ... END
        }
        if (breakdown_) marks(c, seq).process_done = k.now();
        c.server_ops[j].resp_bytes = r;  // only this worker pops server_ops: index j is stable
        resp += r;
        ++done;
      }
      // The client matches responses in order: hand it each processed op's response size.
      for (std::size_t j = 0; j < done; ++j) {
        c.client_ops[c.client_ops.size() - c.server_ops.size() + j].resp_bytes = c.server_ops[j].resp_bytes;
      }
      // The ops just processed are the last `done` before server_ops in client_ops.
      const std::uint64_t first_done = breakdown_ ? conn_marks(c).first + c.client_ops.size() - c.server_ops.size() : 0;
      for (std::size_t j = 0; j < done; ++j)
        c.server_ops.pop_front();
      const Nanos send = k.now();
      if (resp > 0) co_await k.sys_send(t, s, resp);
      if (breakdown_) {
        for (std::uint64_t seq = first_done; seq < first_done + done; ++seq) {
          Marks& m = marks(c, seq);
          m.send = send;
          m.srv_tx = s.stamp_tx;
        }
      }
    }
  }
}

void Mutilate::on_event(std::uint32_t kind, std::uint64_t arg) {
  switch (kind) {
    case kIssueTimer: {
      Conn& c = conns_[arg];
      c.timer_pending = false;
      drive_write_machine(c, k_->now());
      break;
    }
    case kClientArrive: {
      const int sock = unpack_sock(arg);
      const std::uint32_t segs = unpack_segs(arg);
      Conn& c = conns_[static_cast<std::size_t>(conn_of_sock_[static_cast<std::size_t>(sock)])];
      const Nanos now = k_->now();
      c.resp_got += unpack_bytes(arg);
      if (segs >= 2) uplink_.send(c.host, Train{sock, 0, 1, true}, now);  // the client stack ACKs trains
      // read_callback(): complete responses, oldest first; the server fills in resp_bytes.
      while (!c.client_ops.empty() && c.client_ops.size() > c.server_ops.size()) {
        const Op op = c.client_ops.front();
        if (op.resp_bytes == 0 || c.resp_got < op.resp_bytes) break;
        c.resp_got -= op.resp_bytes;
        c.client_ops.pop_front();
        if (breakdown_) {
          // The idealised client's stack is one stage, client.app: client_rx_ns from the wire on.
          conn_marks(c).q.front().cli = idealised_rx(now - p_.client_rx_ns);
        }
        finish_op(c, op, now);
      }
      drive_write_machine(c, now);
      break;
    }
    case kRetransmit: {
      ++retransmitted_;
      const int sock = unpack_sock(arg);
      const Conn& c = conns_[static_cast<std::size_t>(conn_of_sock_[static_cast<std::size_t>(sock)])];
      uplink_.send(c.host, Train{sock, unpack_bytes(arg), unpack_segs(arg), unpack_ack(arg)}, k_->now());
      break;
    }
    default:
      NAPISIM_ASSERT(false, "unknown mutilate event");
  }
}

void Mutilate::finish_op(Conn& c, const Op& op, Nanos now) {
  ++completed_;
  if (breakdown_) {
    ConnMarks& cm = conn_marks(c);
    if (in_window(now)) cut(cm.q.front(), op.start, now);
    cm.q.pop_front();
    ++cm.first;
  }
  if (!in_window(now)) return;
  const Nanos lat = now - op.start;
  (op.set ? set_sampler_ : get_sampler_).sample(static_cast<double>(lat) / 1000.0);  // op.time(): us
  ++(op.set ? sets_ : gets_);
  rx_bytes_ += op.resp_bytes;
  hist_.record(lat);
}

namespace {

// An op's stages in path order (enable_breakdown() names them; cut_rx() fills each host's
// kRxStages).
enum Stage : std::size_t {
  kCliSend,
  kWireReq,
  kServer,
  kSrvRead = kServer + kRxStages,
  kSrvQueue,
  kSrvProcess,
  kSrvAfter,
  kSrvSend,
  kWireResp,
  kClient,
  kCliApp = kClient + kRxStages,
  kNumStages
};

}  // namespace

bool Mutilate::enable_breakdown() {
  std::vector<LatencyBreakdown::Stage> st = {
      {"client.send",
       "from the issue (op.start_time) to the request's transmit: the send() syscall (client), or the "
       "idealised client's client_tx_ns"},
      wire_request_stage()};
  add_rx_stages(st, "server");
  st.push_back(
      {"server.read", "the worker's event handling (event_ns) and the read() that took the request's last byte"});
  st.push_back({"server.queue", "the commands ahead of it in the same read (pipelined on its connection, -d)"});
  st.push_back({"server.process", "its own command: process_get_command or process_update_command"});
  st.push_back({"server.after",
                "the commands after it in the same read: memcached sends every response of a read in one "
                "sendmsg()"});
  st.push_back({"server.send", "the sendmsg() of the responses, to the transmit (server)"});
  st.push_back(wire_response_stage());
  add_rx_stages(st, "client");
  st.push_back({"client.app",
                "the client's read() that took the response's last byte, and its parsing of the responses "
                "ahead of it in that read, to finish_op (the idealised client: client_rx_ns)"});
  NAPISIM_ASSERT(st.size() == kNumStages, "mutilate: the stage names do not follow enum Stage");
  breakdown_ = std::make_unique<LatencyBreakdown>(std::move(st), wait_classes());
  marks_.assign(conns_.size(), ConnMarks{});
  // With -d above 1 several ops of a connection are in flight: each is cut with the train that
  // carried its own last byte, on both hosts.
  for (const Conn& c : conns_) {
    k_->keep_path_log(c.sock);
    if (c.csock >= 0) paths_[static_cast<std::size_t>(c.host)].kernel->keep_path_log(c.csock);
  }
  return true;
}

Json Mutilate::latency_breakdown() const {
  return breakdown_ ? breakdown_->report(report_percentiles({})) : Json(nullptr);
}

void Mutilate::cut(const Marks& m, Nanos begin, Nanos end) {
  LatencyBreakdown::Cut c(*breakdown_, begin, end);
  c.next(kCliSend, m.tx);
  c.next(kWireReq, m.srv.path.arrive);
  cut_rx(c, kServer, m.srv);
  c.next(kSrvRead, m.read_done);
  c.next(kSrvQueue, m.process);
  c.next(kSrvProcess, m.process_done);
  c.next(kSrvAfter, m.send);
  c.next(kSrvSend, m.srv_tx);
  c.next(kWireResp, m.cli.path.arrive);
  cut_rx(c, kClient, m.cli);
  c.record(kCliApp);
}

void Mutilate::on_transmit(const WireTrain& tr, Nanos wire_done) {
  const int sock = tr.sock;
  const std::uint32_t bytes = tr.bytes, segs = tr.segs;
  const bool ack_only = tr.ack_only;
  const Conn& c = conns_[static_cast<std::size_t>(conn_of_sock_[static_cast<std::size_t>(sock)])];
  const ClientPath& path = paths_[static_cast<std::size_t>(c.host)];
  if (path.kernel) {
    clients_.to_client(c.host, tr.for_sock(c.csock), wire_done + path.latency_ns);
    return;
  }
  if (ack_only) return;  // the idealised client's stack absorbs ACKs
  // An event per response train, so requests the client issues on a timer meanwhile keep their order.
  k_->host().schedule(wire_done + path.latency_ns + p_.client_rx_ns, Prio::kWire, this, kClientArrive,
                      pack(sock, bytes, segs, false));
}

void Mutilate::on_rx_drop(int sock, std::uint32_t bytes, std::uint32_t segs) {
  drops_ += segs;
  if (bytes == 0) return;  // lost pure ACKs are not retransmitted
  const int host = conns_[static_cast<std::size_t>(conn_of_sock_[static_cast<std::size_t>(sock)])].host;
  if (paths_[static_cast<std::size_t>(host)].kernel) return;  // the client's TCP repairs it
  k_->host().schedule(k_->now() + p_.rto_ns, Prio::kWire, this, kRetransmit, pack(sock, bytes, segs, false));
}

namespace {
Nanos busy_ns(Kernel& k, const CpuMask& m) {
  Nanos busy = 0;
  for (int c = m.first(); c >= 0; c = m.next(c)) {
    Cpu& cpu = k.cpu(c);
    k.update_exec(cpu);
    for (int cls = 0; cls < kNumCpuClasses; ++cls)
      if (cls != static_cast<int>(CpuClass::kIdle)) busy += cpu.time[static_cast<std::size_t>(cls)];
  }
  return busy;
}
}  // namespace

void Mutilate::begin_measurement() {
  busy_at_begin_ = busy_ns(*k_, report_mask_);
}
void Mutilate::end_measurement() {
  busy_at_end_ = busy_ns(*k_, report_mask_);
}

void Mutilate::report(Json& summary, Json& workload) const {
  const double secs = to_seconds(window_end_ - window_begin_);
  const std::uint64_t total = gets_ + sets_;
  const double qps = secs > 0 ? static_cast<double>(total) / secs : 0.0;
  summary["transactions"] = total;
  summary["throughput"] = qps;
  summary["latency_ns"] = latency_json(hist_, {50, 90, 95, 99, 99.9});
  const double busy = static_cast<double>(busy_at_end_ - busy_at_begin_);
  const double window_ns = static_cast<double>(window_end_ - window_begin_);
  const double cpu_ns_per_query = total > 0 ? busy / static_cast<double>(total) : 0.0;
  Json m;
  m["read"] = get_sampler_.to_json();
  m["update"] = set_sampler_.to_json();
  m["op_q"] = op_sampler_.to_json();
  m["qps"] = qps;
  m["target_qps"] = p_.qps;
  m["gets"] = gets_;
  m["sets"] = sets_;
  m["misses"] = 0;
  m["skips"] = skips_;
  m["rx_bytes"] = rx_bytes_;
  m["tx_bytes"] = tx_bytes_;
  m["seconds"] = secs;
  m["schedule_slip_us_avg"] = slip_n_ ? slip_sum_us_ / static_cast<double>(slip_n_) : 0.0;
  m["cpu_report_cpus"] = report_mask_.to_cpulist();
  m["cpu_pct"] = window_ns > 0 ? 100.0 * busy / (window_ns * report_mask_.count()) : 0.0;
  m["cpu_ns_per_query"] = cpu_ns_per_query;
  m["cycles_per_query"] = cpu_ns_per_query * p_.cpq_ghz;
  m["cpq_ghz"] = p_.cpq_ghz;
  summary["mutilate"] = m;
  workload["type"] = "mutilate";
  workload["qps"] = p_.qps;
  workload["threads"] = p_.threads;
  workload["connections"] = p_.connections;
  workload["depth"] = p_.depth;
  workload["keysize"] = p_.keysize;
  workload["valuesize"] = p_.valuesize;
  workload["iadist"] = p_.iadist;
  workload["update"] = p_.update;
  workload["records"] = p_.records;
  workload["server_threads"] = p_.server_threads;
  workload["dispatch"] = p_.dispatch;
}

Json Mutilate::conservation() const {
  std::uint64_t in_flight = 0;
  for (const Conn& c : conns_)
    in_flight += c.client_ops.size();
  return Json{{"sent", issued_},
              {"answered", completed_},
              {"in_flight", in_flight},
              {"max_outstanding_per_connection", max_outstanding_},
              {"ring_drop_segments", drops_ + clients_.drops()},
              {"retransmitted_trains", retransmitted_}};
}

}  // namespace napisim
