// napisim: a memcached-like key-value server driven by mutilate's load generator.
//
// Load generator: leverich/mutilate @ d65c6ef (mutilate.cc, Connection.cc, Generator.{h,cc},
// LogHistogramSampler.h, ConnectionStats.h, Protocol.cc, util.cc). -T threads x -c connections; the
// target --qps is split evenly over all connections (mutilate.cc: lambda = qps / lambda_denom,
// lambda_denom = threads x connections). Each connection runs Connection::drive_write_machine():
// next_time starts at now + ia and advances by one inter-arrival draw per issued request; a request
// is issued when now >= next_time and fewer than -d (depth) requests are outstanding, so a late
// connection issues back to back until it has caught up with its schedule (the schedule slips but
// is never reset, unless --skip drops the requests more than 5 ms late). Latency is measured from
// the issue (op.start_time) to the end of the response parse (finish_op), in microseconds, into
// mutilate's LogHistogramSampler (bins of 1.1^i us, linear interpolation inside a bin). --qps 0
// means as fast as the depth allows (iagen = Fixed(0)). Key and value sizes, and the inter-arrival
// time, come from mutilate's generator specs: a number (fixed), fb_key = GEV(30.7984, 8.20449,
// 0.078688) evaluated at U = fnv_64(key index) / 2^64, fb_value = a discrete table for 0..14 bytes
// else generalized Pareto(15, 214.476, 0.348238), fb_ia = generalized Pareto(0, 16.0292, 0.154971)
// rescaled by set_lambda() to the per-connection rate. Requests use the ASCII protocol
// ("get <key>\r\n", "set <key> 0 0 <len>\r\n<data>\r\n"); the database is loaded before the run
// (every record has a stored value, so gets hit).
// Client, on a Linux client host (ClientSpec "stack": "linux", the default): mutilate's -T threads
// on that host's own kernel, thread i pinned to CPU i mod CPUs (stick_this_thread_to_core), each a
// libevent loop over its -c connections: every pass drives each connection's write machine
// (issue with send() while due and under -d), then event_base_loop(EVLOOP_NONBLOCK): epoll_wait(0)
// called again and again until a response or the next issue is due (mutilate's default); with
// `blocking` (-B, EVLOOP_ONCE) the thread sleeps in epoll_wait until a response comes or the
// precise timer (EVENT_BASE_FLAG_PRECISE_TIMER: a timerfd, no slack) of the next issue fires. A
// response is read with recv() calls of up to read_buffer bytes and finished when its last byte
// is read, then client_user_ns of parse and bookkeeping.
// Client, idealised ("stack": "idealised"): its stack adds client_tx_ns before the wire and
// client_rx_ns after it.
//
// Server: memcached 1.6 (memcached.c, thread.c): -t worker threads, each a libevent loop over its
// own epoll (event_base_loop -> epoll_wait); accepted connections are handed to workers round-robin
// (dispatch_conn_new: last_thread + 1 mod nthreads), or by the RX queue's NAPI id (what a
// SO_INCOMING_NAPI_ID-aware dispatcher does, needed for per-epoll busy polling and IRQ
// suspension). Per ready connection: drive_machine -> try_read_network (one read()), process every
// complete command (process_get_command / process_update_command: get_ns / set_ns plus
// set_ns_per_kb for copying a value into its item), then one sendmsg() with every response
// (transmit). Per-request CPU is a named parameter; memcached's own cost is a few microseconds per
// request (the IRQ-suspension v7 cover letter measured 6,900-43,700 cycles per query for stack plus
// application, kernel-napi.md 8.5).
//
// Reported like mutilate (format `mutilate`): the row "#type avg std min 5th 10th 50th 90th 95th
// 99th" for read and update (upstream prints no 50th column; it is added here as the IRQ-suspension
// measurements report medians), op_q, Total QPS, Skipped TXs, RX/TX bytes; plus the target QPS, CPU %
// and CPU ns per query over the CPUs named by cpu_report_cpus, and cycles per query at cpq_ghz.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "sim/core/fifo.hpp"
#include "sim/params/fields.hpp"
#include "sim/workloads/client_uplink.hpp"
#include "sim/workloads/workload.hpp"

namespace napisim {

namespace mutilate {

/// One of mutilate's Generator classes (Generator.h), held by value. generate(U) with U in (0, 1]
/// mirrors Generator::generate(U); the Rng overload draws U like drand48().
class Generator {
 public:
  enum class Kind { kFixed, kUniform, kNormal, kExponential, kGPareto, kGev, kFbValue };
  /// Parses a mutilate distribution spec (Generator.cc createGenerator): "N" (fixed), fb_key,
  /// fb_value, fb_ia, fixed:V, uniform:SCALE, normal:MEAN,SD, exponential[:LAMBDA],
  /// pareto:LOC,SCALE,SHAPE, gev:LOC,SCALE,SHAPE. Throws ConfigError(path, "expected ...").
  static Generator parse(const std::string& spec, const std::string& path);
  static Generator fixed(double v) { return Generator(Kind::kFixed, v, 0, 0); }
  static Generator gpareto(double loc, double scale, double shape) {
    return Generator(Kind::kGPareto, loc, scale, shape);
  }
  static Generator gev(double loc, double scale, double shape) { return Generator(Kind::kGev, loc, scale, shape); }
  static Generator fb_value() { return Generator(Kind::kFbValue, 15.0, 214.476, 0.348238); }

  double generate(double u) const;
  double generate(Rng& r) const;
  /// Generator::set_lambda(): rescales to mean 1/lambda (GPareto: scale = (1-k)/lambda - (1-k) loc).
  /// False for a generator without set_lambda (GEV, fb_value).
  bool set_lambda(double lambda);
  /// False for a generalized Pareto whose shape (>= 1) gives it no finite mean.
  bool finite_mean() const { return kind_ != Kind::kGPareto || c_ < 1; }
  Kind kind() const { return kind_; }
  double a() const { return a_; }
  double b() const { return b_; }
  double c() const { return c_; }

  /// fb_value's Discrete table (Generator.cc createFacebookValue): {probability, value}.
  static constexpr std::array<std::array<double, 2>, 15> kFbValueTable = {{{0.00536, 0.0},
                                                                           {0.00047, 1.0},
                                                                           {0.17820, 2.0},
                                                                           {0.09239, 3.0},
                                                                           {0.00018, 4.0},
                                                                           {0.02740, 5.0},
                                                                           {0.00065, 6.0},
                                                                           {0.00606, 7.0},
                                                                           {0.00023, 8.0},
                                                                           {0.00837, 9.0},
                                                                           {0.00837, 10.0},
                                                                           {0.08989, 11.0},
                                                                           {0.00092, 12.0},
                                                                           {0.00326, 13.0},
                                                                           {0.01980, 14.0}}};

 private:
  Generator(Kind k, double a, double b, double c) : kind_(k), a_(a), b_(b), c_(c) {}
  Kind kind_ = Kind::kFixed;
  double a_ = 0, b_ = 0, c_ = 0;  // fixed: value; uniform: scale; normal: mean, sd; exponential: lambda;
                                  // gpareto/gev/fb_value tail: loc, scale, shape
};

/// util.cc fnv_64_buf over the 8 bytes of `in` (FNV-1a 64, little-endian).
std::uint64_t fnv_64(std::uint64_t in);
/// KeyGenerator::generate(): key length of record `ind`: max(round(G(U)), digits of records),
/// U = fnv_64(ind) / ULLONG_MAX, capped by the 250-byte key buffer.
int key_length(const Generator& g, std::uint64_t ind, std::int64_t records);

/// LogHistogramSampler (200 bins of base 1.1, values in us) with ConnectionStats' accessors.
class LogHistogram {
 public:
  static constexpr int kBins = 200;
  LogHistogram() : bins_(kBins + 1, 0) {}
  void sample(double s);
  std::uint64_t total() const { return total_; }
  double average() const { return total_ ? sum_ / static_cast<double>(total_) : 0.0; }
  double stddev() const;
  /// get_nth(): the bin holding the nth percentile, interpolated linearly inside it; get_nth(0)
  /// is the lower edge of the first non-empty bin (mutilate prints it as "min").
  double get_nth(double nth) const;
  Json to_json() const;  // {avg, std, min, p5, p10, p50, p90, p95, p99}

 private:
  std::vector<std::uint64_t> bins_;
  std::uint64_t total_ = 0;
  double sum_ = 0, sum_sq_ = 0;
};

}  // namespace mutilate

struct MutilateParams {
  // mutilate (client)
  std::int64_t qps = 0;                         // -q: target aggregate QPS, 0 = peak (as fast as depth allows)
  std::int64_t threads = 1;                     // -T
  std::int64_t connections = 1;                 // -c: per thread
  std::int64_t depth = 1;                       // -d
  std::string keysize = "30";                   // -K
  std::string valuesize = "200";                // -V
  std::string iadist = "exponential";           // -i
  double update = 0.0;                          // -u: set:get ratio
  std::int64_t records = 10000;                 // -r
  bool skip = false;                            // -S
  std::int64_t client_tx_ns = 3000;             // idealised client stack: issue to wire
  std::int64_t client_rx_ns = 3000;             // idealised client stack: wire to finish_op
  std::int64_t rto_ns = 200000000;              // TCP_RTO_MIN for segments the server NIC dropped
  bool blocking = false;                        // -B: the Linux client's threads block in epoll_wait
  std::int64_t client_user_ns = kClientUserNs;  // Linux client: parse and stats per response
  std::int64_t client_nice = 0;
  std::string client_policy = "normal";  // chrt for mutilate's threads
  std::int64_t client_rt_priority = 50;
  // memcached (server)
  std::int64_t server_threads = 4;  // memcached -t
  std::string server_cpus = "";     // taskset of the workers ("" = all CPUs)
  bool pin_threads = false;         // worker i pinned to the i-th CPU of server_cpus
  std::int64_t server_nice = 0;
  std::string server_policy = "normal";  // chrt for the workers
  std::int64_t server_rt_priority = 50;
  std::string dispatch = "round_robin";  // dispatch_conn_new, or by NAPI id
  std::int64_t maxevents = 32;           // libevent's initial epoll nevents (epoll.c INITIAL_NEVENT)
  std::int64_t read_buffer = 16384;      // bytes per read() (memcached grows rbuf as needed)
  std::int64_t epoll_timeout = -1;       // -1 blocks; 0: the event loop spins on epoll_wait
  std::int64_t spin_us = 0;              // user-space polling before epoll_wait() blocks
  // User-space costs, defaults [INFER]: a few hundred ns to ~2 us per command, so that with the
  // kernel's per-request costs a query lands inside the 6,900-43,700 cycles per query (2.3-15 us at
  // 3 GHz) the IRQ-suspension v7 cover letter measured (kernel-napi.md 3.3, 8.5); set_ns_per_kb is a
  // user-space memcpy at ~12.5 GB/s. scenarios/karsten2024 raises get_ns (see its description).
  std::int64_t event_ns = 400;      // libevent dispatch + drive_machine per ready connection
  std::int64_t get_ns = 1500;       // process_get_command: tokenize, hash, item_get, build iov
  std::int64_t set_ns = 2000;       // process_update_command + complete_nread: item_alloc, link
  std::int64_t set_ns_per_kb = 80;  // copying a set's value into its item
  // reporting
  std::string cpu_report_cpus = "";  // CPUs whose busy time makes "CPU %" ("" = all)
  double cpq_ghz = 2.0;              // clock for cycles per query (AMD EPYC 7662 base clock)

  template <class V>
  static void fields(V& v) {
    v("qps", &MutilateParams::qps, "queries/s",
      "mutilate -q: target aggregate QPS (0 = peak: issue as fast as -d allows)", Range{0, 1e9});
    v("threads", &MutilateParams::threads, "threads", "mutilate -T: load-generator threads", Range{1, 4096});
    v("connections", &MutilateParams::connections, "connections", "mutilate -c: connections per thread",
      Range{1, 32768});
    v("depth", &MutilateParams::depth, "requests", "mutilate -d: maximum outstanding requests per connection",
      Range{1, 4096});
    v("keysize", &MutilateParams::keysize, "bytes", "mutilate -K: key length distribution (e.g. 30, fb_key)");
    v("valuesize", &MutilateParams::valuesize, "bytes", "mutilate -V: value length distribution (e.g. 200, fb_value)");
    v("iadist", &MutilateParams::iadist, "",
      "mutilate -i: inter-arrival distribution, rescaled to the per-connection rate (exponential, fb_ia, ...)");
    v("update", &MutilateParams::update, "", "mutilate -u: fraction of requests that are sets", Range{0, 1});
    v("records", &MutilateParams::records, "records", "mutilate -r: keys in the database", Range{1, 1e8});
    v("skip", &MutilateParams::skip, "", "mutilate -S: skip transmissions more than 5 ms behind schedule");
    v("client_tx_ns", &MutilateParams::client_tx_ns, "ns", "Idealised client: issue to the wire", Range{0, 1e9});
    v("client_rx_ns", &MutilateParams::client_rx_ns, "ns", "Idealised client: wire to finish_op", Range{0, 1e9});
    v("rto_ns", &MutilateParams::rto_ns, "ns",
      "Idealised client only: retransmission timeout for segments the server dropped (a Linux client host's TCP "
      "repairs its own)",
      Range{1000, 1e10});
    v("blocking", &MutilateParams::blocking, "",
      "mutilate -B on a Linux client host: threads sleep in epoll_wait until a response or their next issue (a "
      "precise timer); without it they call epoll_wait(0) in a loop (EVLOOP_NONBLOCK, mutilate's default)");
    v("client_user_ns", &MutilateParams::client_user_ns, "ns",
      "Linux client host: user-space work per response (parse, latency sample, stats)", Range{0, 1e9});
    v("client_nice", &MutilateParams::client_nice, "", "Linux client host: nice value of mutilate's threads",
      Range{-20, 19});
    v("client_policy", &MutilateParams::client_policy, "",
      "Linux client host: chrt for mutilate's threads: normal, batch, idle, fifo or rr", chrt_policies());
    v("client_rt_priority", &MutilateParams::client_rt_priority, "",
      "Linux client host: chrt priority of mutilate's threads (fifo, rr)", Range{1, 99});
    v("server_threads", &MutilateParams::server_threads, "threads", "memcached -t: worker threads", Range{1, 4096});
    v("server_cpus", &MutilateParams::server_cpus, "cpulist", "CPUs the workers may run on (\"\" = all)");
    v("pin_threads", &MutilateParams::pin_threads, "", "Pin worker i to the i-th CPU of server_cpus (wrapping)");
    v("server_nice", &MutilateParams::server_nice, "", "Nice value of the workers", Range{-20, 19});
    v("server_policy", &MutilateParams::server_policy, "", "chrt for the workers: normal, batch, idle, fifo or rr",
      chrt_policies());
    v("server_rt_priority", &MutilateParams::server_rt_priority, "", "chrt priority of the workers (fifo, rr)",
      Range{1, 99});
    v("dispatch", &MutilateParams::dispatch, "",
      "Connection to worker: round_robin (memcached dispatch_conn_new) or napi_id (worker = NAPI id of the "
      "connection's RX queue mod workers, as a SO_INCOMING_NAPI_ID-aware dispatcher)",
      Choices{"round_robin", "napi_id"});
    v("maxevents", &MutilateParams::maxevents, "events", "epoll_wait maxevents of each worker", Range{1, 1e6});
    v("read_buffer", &MutilateParams::read_buffer, "bytes", "Bytes a worker reads per read() call", Range{64, 1e9});
    v("epoll_timeout", &MutilateParams::epoll_timeout, "ms",
      "epoll_wait timeout: -1 blocks; 0 is an event loop spinning on epoll_wait (each empty call costing "
      "syscall_ns + epoll_wait_ns)",
      Range{-1, 0});
    v("spin_us", &MutilateParams::spin_us, "us",
      "Workers poll before they sleep: epoll_wait(0) for up to this long, then the blocking call (0 = block at "
      "once)",
      Range{0, 1e7});
    v("event_ns", &MutilateParams::event_ns, "ns",
      "Worker user-space work per ready connection (libevent + drive_machine)", Range{0, 1e9});
    v("get_ns", &MutilateParams::get_ns, "ns", "Worker user-space work per get (process_get_command)", Range{0, 1e9});
    v("set_ns", &MutilateParams::set_ns, "ns", "Worker user-space work per set (process_update_command)",
      Range{0, 1e9});
    v("set_ns_per_kb", &MutilateParams::set_ns_per_kb, "ns/KiB", "Copying a set's value into its item", Range{0, 1e9});
    v("cpu_report_cpus", &MutilateParams::cpu_report_cpus, "cpulist",
      "CPUs whose busy time is reported as CPU % and CPU ns per query (\"\" = all)");
    v("cpq_ghz", &MutilateParams::cpq_ghz, "GHz", "Clock used to turn CPU ns per query into cycles per query",
      Range{0.1, 10});
  }
  bool operator==(const MutilateParams&) const = default;
};

class Mutilate : public Workload, public EventSink, public WirePeer {
 public:
  /// Parses the distribution specs (ConfigError below `path`).
  Mutilate(const MutilateParams& p, const std::string& path);
  void setup(Kernel& k, const std::vector<ClientPath>& paths, const RngRoot& rng) override;
  void start() override;
  void begin_measurement() override;
  void end_measurement() override;
  std::uint64_t completed() const override { return completed_; }
  void report(Json& summary, Json& workload) const override;
  Json conservation() const override;
  const Histogram* latency_histogram() const override { return &hist_; }
  bool enable_breakdown() override;
  Json latency_breakdown() const override;

  void on_event(std::uint32_t kind, std::uint64_t arg) override;
  void on_transmit(const WireTrain& tr, Nanos wire_done) override;
  void on_rx_drop(int sock, std::uint32_t bytes, std::uint32_t segs) override;

  const MutilateParams& params() const { return p_; }
  /// Per-connection rate lambda (requests/s) as mutilate computes it.
  double lambda() const;

 private:
  struct Op {         // one outstanding request (Connection::op_queue entry)
    Nanos start = 0;  // op.start_time (issue)
    std::uint32_t req_bytes = 0, resp_bytes = 0;
    std::uint32_t record = 0, value_len = 0;
    bool set = false;
  };
  struct Conn {
    int sock = -1;
    int host = 0;
    int worker = 0;
    int csock = -1;  // the client host's socket (Linux client hosts)
    Nanos next_time = 0;
    bool timer_pending = false;
    Rng rng{0};
    Fifo<Op> client_ops{4};  // issued, response not complete (client side)
    Fifo<Op> server_ops{4};  // sent, not yet processed by the server
    std::int64_t resp_got = 0, req_got = 0;
  };
  using Train = WireTrain;
  enum Kind : std::uint32_t { kIssueTimer = 1, kClientArrive = 3, kRetransmit = 4 };
  /// One mutilate thread on a Linux client host.
  struct ClientThread {
    Task* task = nullptr;
    Epoll* ep = nullptr;
    int host = 0;
    std::vector<int> conns;  // indices into conns_
  };

  Proc<void> worker(Task& t, Epoll& ep);
  Proc<void> client_thread(ClientThread& th);
  /// The write machine of a Linux client's connection: issues with send() while due and under -d.
  Proc<void> client_drive(Kernel& ck, Task& t, Conn& c);
  void drive_write_machine(Conn& c, Nanos now);
  /// Connection::issue_something(): draws the request and queues it on both sides; returns its bytes.
  std::uint32_t new_op(Conn& c, Nanos now);
  /// drive_write_machine()'s issue of a connection that is due and under -d at `now`: the schedule
  /// slip, issue_something(), the op-queue sample, the next time (and --skip). Returns the bytes.
  std::uint32_t issue_due(Conn& c, Nanos now);
  void finish_op(Conn& c, const Op& op, Nanos now);
  // Latency attribution (run --explain): the points an outstanding op passed, kept beside
  // Conn::client_ops (the same ops in the same order; `first` counts the ops finished).
  struct Marks {
    Nanos tx = 0;  // the request's transmit (client)
    RxMarks srv;   // the server's receive path, to the handler whose read() took its last byte
    Nanos read_done = 0, process = 0, process_done = 0, send = 0, srv_tx = 0;
    RxMarks cli;  // the client's receive path, to the handler that read its response's last byte
  };
  struct ConnMarks {
    Fifo<Marks> q{4};
    std::uint64_t first = 0;    // the number of the op at q.front()
    std::int64_t req_end = 0;   // server: stream offset of the end of the last processed request
    std::int64_t resp_end = 0;  // client: stream offset of the end of the last finished response
  };
  Marks& marks(const Conn& c, std::uint64_t seq) {
    ConnMarks& cm = marks_[static_cast<std::size_t>(&c - conns_.data())];
    NAPISIM_ASSERT(seq - cm.first < cm.q.size(), "mutilate: marks of an op not outstanding");
    return cm.q[static_cast<std::size_t>(seq - cm.first)];
  }
  ConnMarks& conn_marks(const Conn& c) { return marks_[static_cast<std::size_t>(&c - conns_.data())]; }
  void cut(const Marks& m, Nanos begin, Nanos end);  // a measured op's latency attribution

  MutilateParams p_;
  mutilate::Generator keysize_, valuesize_, iagen_;
  Kernel* k_ = nullptr;
  std::vector<ClientPath> paths_;
  std::vector<Conn> conns_;
  LinuxClients clients_;  // the Linux client hosts' ends of the wire
  std::vector<std::unique_ptr<ClientThread>> client_threads_;
  std::vector<int> conn_of_sock_;
  std::vector<std::uint16_t> key_len_;    // per record
  std::vector<std::uint32_t> value_len_;  // per record: the stored value's length
  std::vector<Epoll*> epolls_;
  ClientUplink uplink_;  // the idealised clients' sends to the server NICs
  CpuMask report_mask_;
  Nanos busy_at_begin_ = 0, busy_at_end_ = 0;
  std::uint64_t completed_ = 0, issued_ = 0, gets_ = 0, sets_ = 0, skips_ = 0, drops_ = 0, retransmitted_ = 0;
  std::uint64_t rx_bytes_ = 0, tx_bytes_ = 0, max_outstanding_ = 0;
  double slip_sum_us_ = 0;  // issue time - scheduled time, measured issues
  std::uint64_t slip_n_ = 0;
  mutilate::LogHistogram get_sampler_, set_sampler_, op_sampler_;
  Histogram hist_;
  std::unique_ptr<LatencyBreakdown> breakdown_;  // --explain
  std::vector<ConnMarks> marks_;                 // by connection, with breakdown_
};

}  // namespace napisim
