// napisim: the request/response engine shared by the `app` and `trace` workloads.
//
// Server: worker threads, each with its own epoll loop over the flows SO_REUSEPORT gives it (as
// neper rr.c, google/neper @ ea5890f), that per request: recv() the request, spend user-mode CPU
// drawn from `service_ns` (the application's work), optionally block off-CPU for `block_ns` with
// probability `block_probability` (a disk read: the thread sleeps in TASK_INTERRUPTIBLE until a
// timer wakes it, as hrtimer_nanosleep()/schedule_hrtimeout() do; its CPU is free meanwhile), then
// send() the response. Requests on one connection are framed in order (TCP is a byte stream), so
// several pipelined requests may arrive in one recv() and are served one after another.
//
// Application queueing and overload. A request becomes readable when the skb carrying its last
// byte is queued to the socket (tcp_data_queue(); the time SO_TIMESTAMPING-style receive stamps
// record, Socket::rx_stamps). Its application queueing delay runs from then to the moment a worker
// starts its service; it includes the wait for epoll_wait() to return, the recv() and the service
// of requests ahead of it. A request is counted as *overloaded* when that delay exceeds
// `overload_threshold_us`; `app_overload_pct` is the share of requests whose service started in
// the measurement window that were. This is our reading of the "App Overld" column of Jakub
// Kicinski's 2020 table (validation-targets.md 2; what Facebook's service measures is not public):
// servers built on folly/Thrift flag overload when requests wait in the server's queue longer than
// a target delay (folly::Codel, target 5 ms per 100 ms interval). The default threshold, 1 ms, is
// the scale at which a request has waited through more than a CFS scheduling slice (3 ms latency /
// 0.75 ms minimum granularity) rather than behind a softirq run (up to 2 ms by MAX_SOFTIRQ_TIME,
// typically tens of µs); scenarios state their own threshold.
//
// Client, on a Linux client host (ClientSpec "stack": "linux", the default): a load generator's
// process on that host's own simulated kernel: `client_threads` threads, each owning a contiguous
// block of the host's connections (as neper's thread.c gives them out), each an event loop over
// epoll. A request leaves with rr_ts_1 taken just before its first send(); a response is read with
// recv() calls of at most buffer_size bytes and completed by the one that reads its last byte,
// then the thread does its user work (client_user_ns: timestamp, histogram). Closed loop: the
// next request of the flow is sent in the same handler, or after a think time; open loop: each
// thread draws its own arrivals at its connections' share of rate_rps; trace: each thread sends
// the records of its connections at their times. A thread with sends due later waits for them in
// epoll_pwait2() with a timeout to the earliest (libevent's loop with a precise timer), so it
// wakes at most its timer slack (client_timer_slack_ns, the kernel's 50 us unless set) late; with
// client_epoll_timeout 0 it calls epoll_wait(0) instead until events come or the send is due.
// The Linux client's TCP sends whatever the server's window, but a connection never has more than
// rcvbuf + sndbuf unread: beyond that send() fails and the request is counted unsent.
// Client, idealised ("stack": "idealised"): a load generator with no client kernel: closed loop per
// flow (send, wait for the whole response, optional think time, send again; neper tcp_rr with
// -D), open loop (requests leave at generated times whatever the responses; mutilate/wrk2 style),
// or a trace's times. Latency is the client RTT from just before the first send() to the recv()
// that completes the response; each response is handled at its arrival time (one event per
// response train), so a client's transmissions are always in time order on its port.
#pragma once

#include <vector>

#include "sim/core/fifo.hpp"
#include "sim/params/distribution.hpp"
#include "sim/params/fields.hpp"
#include "sim/workloads/client_uplink.hpp"
#include "sim/workloads/workload.hpp"

namespace napisim {

/// Parameters of the server side and the idealised client stack, shared by `app` and `trace`.
struct RpcServerParams {
  std::int64_t num_threads = 8;
  std::string server_cpus = "";
  bool pin_cpu = false;
  std::int64_t server_nice = 0;
  std::string server_policy = "normal";  // chrt for the workers
  std::int64_t server_rt_priority = 50;
  std::int64_t buffer_size = 65536;
  std::int64_t maxevents = 1000;
  std::int64_t epoll_timeout = -1;  // -1 blocks; 0: the worker's own busy loop on epoll_wait
  std::string flow_steering = "reuseport";
  std::string server_arch = "reuseport";   // server_arch.cpp
  std::string connections = "persistent";  // per_request: a connection (handshake, accept, close) per request
  bool epoll_exclusive = false;            // shared_epoll: EPOLLEXCLUSIVE on the listen fd
  std::int64_t listen_backlog = 4096;      // listen(fd, backlog), capped at net.core.somaxconn
  std::string dispatcher_cpus = "";        // dispatcher, thread_pool: the dispatching thread's CPUs
  std::int64_t spin_us = 0;                // user-space polling before a worker sleeps
  Json service_ns = Json{{"type", "exponential"}, {"mean", 10000}};
  double block_probability = 0.0;
  Json block_ns = Json{{"type", "constant"}, {"value", 100000}};
  std::int64_t overload_threshold_us = 1000;
  std::int64_t client_tx_ns = 3000;
  std::int64_t client_rx_ns = 3000;
  std::int64_t rto_ns = 200000000;
  std::int64_t client_threads = 0;  // Linux client host: the load generator's threads (0: num_threads)
  std::string client_cpus = "";
  std::int64_t client_nice = 0;
  std::string client_policy = "normal";  // chrt for the load generator's threads
  std::int64_t client_rt_priority = 50;
  std::int64_t client_user_ns = kClientUserNs;                // Linux client: user work per response
  std::int64_t client_timer_slack_ns = kDefaultTimerSlackNs;  // Linux client: prctl(PR_SET_TIMERSLACK)
  std::int64_t client_epoll_timeout = -1;  // Linux client: -1 blocks; 0: its own busy loop on epoll_wait
  std::int64_t rcvbuf = 6291456;           // tcp_rmem[2]: where receive-buffer autotuning ends
  std::int64_t sndbuf = 4194304;           // tcp_wmem[2]
  std::vector<double> percentiles = {50, 90, 99, 99.9};

  template <class V>
  static void fields(V& v) {
    v("num_threads", &RpcServerParams::num_threads, "threads", "Server worker threads (one epoll loop each)",
      Range{1, 4096});
    v("server_cpus", &RpcServerParams::server_cpus, "cpulist", "CPUs the workers may run on (\"\" = all CPUs)");
    v("pin_cpu", &RpcServerParams::pin_cpu, "", "Pin worker i to the i-th allowed CPU");
    v("server_nice", &RpcServerParams::server_nice, "", "Nice value of the workers", Range{-20, 19});
    v("server_policy", &RpcServerParams::server_policy, "", "chrt for the workers: normal, batch, idle, fifo or rr",
      chrt_policies());
    v("server_rt_priority", &RpcServerParams::server_rt_priority, "", "chrt priority of the workers (fifo, rr)",
      Range{1, 99});
    v("buffer_size", &RpcServerParams::buffer_size, "bytes", "Max bytes per send()/recv() call", Range{1, 1e9});
    v("maxevents", &RpcServerParams::maxevents, "events", "epoll_wait maxevents", Range{1, 1e6});
    v("epoll_timeout", &RpcServerParams::epoll_timeout, "ms",
      "Workers' epoll_wait timeout: -1 blocks; 0 is a userspace busy loop (epoll_wait(0) until it returns "
      "events, each empty call costing syscall_ns + epoll_wait_ns)",
      Range{-1, 0});
    v("flow_steering", &RpcServerParams::flow_steering, "",
      "Flow to worker: reuseport (SO_REUSEPORT hash) or rx_queue (worker = RX queue mod workers)",
      Choices{"reuseport", "rx_queue"});
    v("server_arch", &RpcServerParams::server_arch, "",
      "How connections and requests reach the workers: reuseport (a listener per worker, flow_steering picks it; "
      "each worker's epoll owns its connections); dispatcher (memcached: one listener thread accepts and hands "
      "connections round-robin to the workers through a notify pipe); thread_pool (one dispatcher thread's epoll "
      "owns every connection (EPOLLONESHOT), reads the requests and queues them on a shared user-space queue; any "
      "idle worker takes the next, woken by futex); shared_accept (one listening socket, every worker blocks in "
      "accept() and serves the connection it got until it closes); shared_epoll (one listening socket in every "
      "worker's epoll, as nginx: plain items wake every waiting worker, epoll_exclusive one)",
      Choices{"reuseport", "dispatcher", "thread_pool", "shared_accept", "shared_epoll"});
    v("connections", &RpcServerParams::connections, "",
      "persistent: each flow is one connection for the whole run; per_request: each request opens a connection "
      "(SYN, SYN-ACK, the ACK carrying the request, accept(), the response, close()), as HTTP/1.0; needs idealised "
      "clients, with which a listener architecture's persistent connections open the same way at their first "
      "request (on Linux client hosts they are accepted before the run, round-robin)",
      Choices{"persistent", "per_request"});
    v("epoll_exclusive", &RpcServerParams::epoll_exclusive, "",
      "shared_epoll: add the listen fd with EPOLLEXCLUSIVE (a connection wakes one waiting worker, not all)");
    v("listen_backlog", &RpcServerParams::listen_backlog, "connections",
      "listen() backlog, capped at kernel.net.somaxconn: the accept queue holds this + 1; a SYN or handshake "
      "ACK beyond it is dropped and retransmitted by the client",
      Range{0, 2147483647});
    v("dispatcher_cpus", &RpcServerParams::dispatcher_cpus, "cpulist",
      "dispatcher and thread_pool: CPUs of the dispatching thread (\"\" = server_cpus)");
    v("spin_us", &RpcServerParams::spin_us, "us",
      "User-space polling before a worker sleeps: an epoll worker calls epoll_wait(0) for up to this long, a "
      "thread_pool worker polls the shared queue, before blocking (0 = block at once)",
      Range{0, 1e7});
    v("service_ns", &RpcServerParams::service_ns, "ns",
      "User-mode CPU per request (a number, or {type: constant|uniform|exponential|normal|lognormal|pareto|"
      "empirical, ...}; lognormal takes the arithmetic mean and stddev = cv x mean)",
      kDistribution);
    v("block_probability", &RpcServerParams::block_probability, "",
      "Probability that a request blocks off-CPU after its service (e.g. a disk read)", Range{0, 1});
    v("block_ns", &RpcServerParams::block_ns, "ns", "Off-CPU time of a blocking request", kDistribution);
    v("overload_threshold_us", &RpcServerParams::overload_threshold_us, "us",
      "A request is overloaded when it waited longer than this from readable to start of service", Range{0, 1e9});
    v("client_tx_ns", &RpcServerParams::client_tx_ns, "ns", "Idealised client: send() to the wire", Range{0, 1e9});
    v("client_rx_ns", &RpcServerParams::client_rx_ns, "ns", "Idealised client: wire to recv() return", Range{0, 1e9});
    v("rto_ns", &RpcServerParams::rto_ns, "ns",
      "Idealised client only: retransmission timeout for segments the server dropped (a Linux client host's TCP "
      "repairs its own)",
      Range{1000, 1e10});
    v("client_threads", &RpcServerParams::client_threads, "threads",
      "Linux client host: the load generator's threads on each client host, one epoll loop each (0 = num_threads)",
      Range{0, 4096});
    v("client_cpus", &RpcServerParams::client_cpus, "cpulist",
      "Linux client host: CPUs the load generator's threads may run on (\"\" = all CPUs)");
    v("client_nice", &RpcServerParams::client_nice, "", "Linux client host: nice value of the load generator's threads",
      Range{-20, 19});
    v("client_policy", &RpcServerParams::client_policy, "",
      "Linux client host: chrt for the load generator's threads: normal, batch, idle, fifo or rr", chrt_policies());
    v("client_rt_priority", &RpcServerParams::client_rt_priority, "",
      "Linux client host: chrt priority of the load generator's threads (fifo, rr)", Range{1, 99});
    v("client_user_ns", &RpcServerParams::client_user_ns, "ns",
      "Linux client host: user-space work per response (timestamps, histogram update, next request)", Range{0, 1e9});
    v("client_timer_slack_ns", &RpcServerParams::client_timer_slack_ns, "ns",
      "Linux client host: the load generator threads' timer slack (prctl PR_SET_TIMERSLACK; the kernel's default "
      "50000): a timed wait for the next send ends up to this late",
      Range{1, 1e9});
    v("client_epoll_timeout", &RpcServerParams::client_epoll_timeout, "ms",
      "Linux client host: the load generator threads' epoll_wait timeout: -1 blocks (epoll_pwait2() up to the next "
      "timed send); 0 is a userspace busy loop (epoll_wait(0) until events come or the next timed send is due)",
      Range{-1, 0});
    v("rcvbuf", &RpcServerParams::rcvbuf, "bytes",
      "Server socket receive buffer, in skb truesize: what a connection queues unread before its window "
      "closes (default tcp_rmem[2], where autotuning ends)",
      Range{4096, 1e10});
    v("sndbuf", &RpcServerParams::sndbuf, "bytes",
      "Client socket send buffer, in skb truesize: what waits behind a closed window (idealised client) or "
      "beyond rcvbuf unread (Linux client) before send() fails and the request is counted unsent (default "
      "tcp_wmem[2])",
      Range{4096, 1e10});
    v("percentiles", &RpcServerParams::percentiles, "%", "Latency percentiles to print", Range{0, 100});
  }
  bool operator==(const RpcServerParams&) const = default;
};

/// One request of a trace: when it leaves the client, on which connection, its sizes and
/// (optionally) its service CPU time.
struct TraceRecord {
  Nanos t = 0;            // relative to the trace's first request
  std::int32_t flow = 0;  // dense connection index
  std::uint32_t request_size = 1, response_size = 1;
  std::int64_t service_ns = -1;  // -1: drawn from service_ns
};

/// How the client offers load.
struct RpcLoad {
  enum class Kind { kClosed, kOpen, kTrace };
  Kind kind = Kind::kClosed;
  std::int64_t num_flows = 1;
  Distribution think_ns;                     // closed: gap between a response and the next request of the flow
  Distribution interarrival_ns;              // open: gap between requests (all flows together)
  double gap_scale = 1.0;                    // open: multiplies interarrival samples (rate scaling)
  Distribution request_size, response_size;  // bytes (app)
  std::vector<TraceRecord> trace;            // trace
  double rate_scale = 1.0;                   // trace: gaps divided by this
  bool repeat = false;                       // trace: start over when it ends
};

class RpcServer : public Workload, public EventSink, public WirePeer {
 public:
  RpcServer(const RpcServerParams& p, RpcLoad load, std::string type, const std::string& path);
  void setup(Kernel& k, const std::vector<ClientPath>& paths, const RngRoot& rng) override;
  void start() override;
  void begin_measurement() override {}
  void end_measurement() override {}
  std::uint64_t completed() const override { return completed_; }
  void report(Json& summary, Json& workload) const override;
  Json conservation() const override;
  const Histogram* latency_histogram() const override { return &hist_; }
  bool enable_breakdown() override;
  Json latency_breakdown() const override;

  void on_event(std::uint32_t kind, std::uint64_t arg) override;
  void on_transmit(const WireTrain& tr, Nanos wire_done) override;
  void on_rx_drop(int sock, std::uint32_t bytes, std::uint32_t segs) override;

  /// Tests: every request's client send time is appended here (null: not recorded).
  void set_send_log(std::vector<Nanos>* log) { send_log_ = log; }
  const Histogram& queue_histogram() const { return queue_hist_; }
  const Histogram& service_histogram() const { return service_hist_; }
  std::uint64_t overloaded() const { return overloaded_; }
  std::uint64_t sent() const { return sent_; }

 protected:
  /// Adds the workload's own description fields (the subclass's parameters).
  virtual void describe(Json& workload) const = 0;

 private:
  struct Request {
    Nanos sent = 0;
    std::int64_t service_ns = -1;
    std::uint32_t request_size = 1, response_size = 1;
  };
  struct Flow {
    int sock = -1;
    int csock = -1;  // the client host's socket (Linux client hosts)
    int host = 0;
    int thread = 0;
    Fifo<Request> unread{4};    // server side: sent, not yet read whole by a worker (TCP order)
    Fifo<Request> waiting{4};   // client side: sent, response not yet complete
    std::int64_t srv_got = 0;   // bytes read by the server beyond the requests already framed
    std::int64_t srv_end = 0;   // stream offset of the end of the last framed request
    std::int64_t resp_got = 0;  // client: response bytes received for waiting.front()
    // TCP flow control: the window bounds what is sent and not yet read by the server application
    // (rmem, truesize of in flight + receive queue, against rcvbuf); beyond it requests wait in
    // the client's send queue (held, wmem against sndbuf) until a read opens the window.
    std::int64_t rmem = 0, wmem = 0;
    Fifo<Request> held{4};
    bool window_update = false;  // an ACK opening the window is on its way to the client
    // server_arch.cpp: requests framed by a thread_pool dispatcher for a worker (readable since `at`).
    struct Framed {
      Request r;
      Nanos at = 0;
    };
    Fifo<Framed> framed{2};
    // Connections through a listener (idealised client): the client's view of this flow's
    // connection, and the requests waiting for it to open.
    enum class Conn : std::uint8_t { kNone, kConnecting, kOpen, kClosing };
    Conn conn = Conn::kOpen;
    Fifo<Request> pending{2};
  };
  using Train = WireTrain;
  struct Worker {
    Task* task = nullptr;
    Epoll* ep = nullptr;
    WaitQueue sleep;  // off-CPU block
    Rng rng{0};       // service and block draws
    // server_arch.cpp
    WaitQueue wait;                // blocked in accept() or futex_wait()
    Fifo<int> handoff{4};          // dispatcher: connections handed to this worker (memcached's CQ)
    int notify = -1;               // dispatcher: the read end of its notify pipe, in its epoll
    int conn = -1;                 // shared_accept: the connection it serves
    Listener* listener = nullptr;  // reuseport with per_request connections: its own listener
    std::uint64_t served = 0;
  };
  /// A send a Linux client thread has due at `at`: a flow's next request after its think time,
  /// an open-loop arrival (`rec` -1, the flow drawn when it is due) or trace record `rec`.
  struct Due {
    Nanos at = 0;
    std::uint64_t seq = 0;  // FIFO among equal times
    int sock = -1;
    std::int64_t rec = -1;
    bool operator>(const Due& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };
  /// One thread of the load generator on a Linux client host.
  struct ClientThread {
    Task* task = nullptr;
    Epoll* ep = nullptr;
    int host = 0;
    std::vector<int> flows;  // server socket ids of its connections
    std::vector<Due> due;    // min-heap on (at, seq)
    std::uint64_t seq = 0;
    Rng rng{0};                      // sizes, think times, open-loop gaps and flows
    double share = 1.0;              // open loop: all connections / this thread's (gaps scale by it)
    std::vector<std::size_t> trace;  // trace: its records, in order
    std::size_t trace_next = 0;
    Nanos trace_base = 0;
  };
  // Latency attribution (run --explain): the points a request in flight passed. Requests of a
  // connection may be pipelined, so each has its own, kept beside Flow::waiting (the same
  // requests in the same order; `first` counts the requests popped from both).
  struct Marks {
    Nanos tx = 0;  // the request's transmit (client)
    RxMarks srv;   // the server's receive path, to the handler whose recv() read its last byte
    Nanos recv_done = 0, service = 0, service_done = 0, unblocked = 0, srv_tx = 0;
    RxMarks cli;  // the client's receive path, to the handler that read its response's last byte
  };
  struct FlowMarks {
    Fifo<Marks> q{4};
    std::uint64_t first = 0;    // the number of the request at q.front()
    std::int64_t resp_end = 0;  // client: stream offset of the end of the last complete response
  };
  /// The marks of request number `seq` of the flow on server socket `sock`.
  Marks& marks(int sock, std::uint64_t seq) {
    FlowMarks& fm = marks_[static_cast<std::size_t>(sock)];
    NAPISIM_ASSERT(seq - fm.first < fm.q.size(), "rpc workload: marks of a request not in flight");
    return fm.q[static_cast<std::size_t>(seq - fm.first)];
  }
  /// The oldest request of `sock` is answered at `end`: cut it (when measured) and drop its marks.
  void answered(int sock, Nanos begin, Nanos end, bool measured);
  enum Kind : std::uint32_t {
    kStart = 1,
    kClientArrive = 3,
    kRetransmit = 4,
    kSend = 5,
    kOpenArrival = 6,
    kTraceArrival = 7,
    kWorkerWake = 8,
    kWindowOpen = 9,
    kClientConnected = 11,  // server_arch.cpp: a SYN-ACK reached the client
    kClientFin = 12,        // the server's FIN reached the client
    kSynRetransmit = 13     // the client's SYN retransmission timer (TCP_TIMEOUT_INIT)
  };
  void setup_linux_clients(const RngRoot& rng);
  Proc<void> client_thread(ClientThread& th);
  void push_due(ClientThread& th, Nanos at, int sock, std::int64_t rec);
  /// The trace record after `th`'s last one: its due send, a pass later when it wraps.
  void next_trace_due(ClientThread& th);
  Request make_request(Rng& rng, Nanos at);  // app: draw sizes
  static Request trace_request(const TraceRecord& tr, Nanos at);
  /// An open-loop gap for connections that carry 1/`share` of the offered rate.
  Nanos open_gap(Rng& rng, double share) const;
  /// sk_rmem/sk_wmem charge of a request: its payload plus SKB_TRUESIZE(0) per segment.
  std::int64_t truesize(const Request& r) const;
  void transmit(Flow& f, const Request& r, Nanos depart);  // onto the wire: in the server's unread
  Proc<void> worker(Worker& w);
  void send_request(Flow& f, const Request& r);
  void new_request(Flow& f, Nanos at);  // app: draw sizes
  void client_receive(const Train& tr);
  void after_response(Flow& f);
  void trace_arrival();
  /// Throws a ConfigError when an open-loop or repeating trace load exceeds the client links.
  void check_offered_load() const;
  /// Simulated time from the start of one pass of a repeated trace to the next.
  Nanos trace_pass_ns() const;

  // ---- server architectures (server_arch.cpp) ------------------------------------------------
  enum class Role : std::uint8_t { kConn, kListenItem, kNotify };
  struct SockRole {
    Role role = Role::kConn;
    Listener* listener = nullptr;  // kListenItem
  };
  /// Connections open through a listener's handshake (idealised clients; every per_request run).
  bool handshakes() const { return handshakes_; }
  /// Creates the listener(s), the dispatching thread and the workers' bodies (after the workers).
  void setup_arch(const RngRoot& rng, const CpuMask& allowed);
  /// Where flow `f` (socket `s`, the `index`-th connection) goes: a worker's epoll or a listener.
  void attach_flow(Flow& f, Socket& s, std::size_t index);
  Proc<void> worker_body(Worker& w);
  /// epoll_wait() of an epoll worker: spin_us of epoll_wait(0) first, then as epoll_timeout says.
  Proc<int> worker_epoll_wait(Worker& w, std::vector<int>& events);
  /// The next whole request read on `f` (and when it became readable), as worker() frames them.
  bool frame_next(Flow& f, Socket& s, Request* r, Nanos* readable);
  /// One request's service, optional block and response, by `w`.
  Proc<void> serve(Worker& w, Flow& f, Socket& s, const Request& r, Nanos readable);
  /// The server's close() of a per_request connection once its request is answered.
  Proc<void> close_conn(Worker& w, Socket& s);
  /// Serves every complete request now framed on `s`; with per_request connections, closes it
  /// after the first and returns true (the caller forgets the connection).
  Proc<bool> serve_framed(Worker& w, Flow& f, Socket& s);
  Proc<void> epoll_loop(Worker& w);   // dispatcher workers, shared_epoll, reuseport with spin or handshakes
  Proc<void> accept_loop(Worker& w);  // shared_accept
  Proc<void> pool_worker(Worker& w);  // thread_pool
  Proc<void> pool_dispatcher();       // thread_pool's dispatcher
  Proc<void> listener_thread();       // dispatcher's listener thread
  /// The worker or dispatcher accepts one connection from the listen fd `item` reported.
  Proc<void> accept_into(Task& t, Epoll& ep, Socket& item);
  /// Idealised client: open `f`'s connection (its SYN) for the request at the head of `pending`.
  void client_connect(Flow& f, Nanos at);
  void client_connected(Flow& f);
  void client_fin(Flow& f);
  Json arch_report() const;
  bool handshakes_ = false;
  std::vector<SockRole> roles_;  // by socket id (only sockets the architecture made besides flows)
  Listener* listener_ = nullptr;
  Task* dispatcher_ = nullptr;
  Epoll* dispatch_ep_ = nullptr;
  std::size_t next_worker_ = 0;  // dispatcher: round-robin
  Fifo<int> pool_jobs_{16};      // thread_pool: connections with framed requests, in order
  FutexQueue pool_futex_;
  std::uint64_t futex_wakes_ = 0, syn_retransmits_ = 0;

  RpcServerParams p_;
  RpcLoad load_;
  std::string type_;
  std::string path_;  // JSON pointer of the workload's params, for errors
  Distribution service_, block_;
  Kernel* k_ = nullptr;
  std::vector<ClientPath> paths_;
  std::vector<Flow> flows_;      // indexed by socket id
  std::vector<int> flow_socks_;  // flow index -> socket id
  std::vector<std::unique_ptr<Worker>> workers_;
  Rng load_rng_{0};
  ClientUplink uplink_{kRetransmit};                           // the idealised clients' sends to the server NICs
  std::vector<Fifo<Train>> to_client_;                         // per client host, in arrival order
  std::vector<std::unique_ptr<ClientThread>> client_threads_;  // Linux client hosts
  LinuxClients clients_;                                       // the Linux client hosts' ends of the wire
  std::vector<int> idealised_socks_;                           // flows on idealised client hosts
  double idealised_share_ = 1.0;                               // open loop: all flows / flows on idealised hosts
  std::size_t trace_next_ = 0;
  Nanos trace_base_ = 0;  // start of the current pass over the trace
  std::vector<Nanos>* send_log_ = nullptr;
  std::uint64_t sent_ = 0, completed_ = 0, measured_ = 0, sent_in_window_ = 0;
  std::uint64_t unsent_ = 0, unsent_in_window_ = 0;  // open loop: send() failed, the send queue full
  std::uint64_t started_ = 0, overloaded_ = 0, blocked_ = 0;
  std::uint64_t drops_ = 0;
  Histogram hist_, queue_hist_, service_hist_;
  std::unique_ptr<LatencyBreakdown> breakdown_;  // --explain
  std::vector<FlowMarks> marks_;                 // by server socket, with breakdown_
};

}  // namespace napisim
