// napisim: `app`, a request/response application with real per-request work (issue 6).
//
// The server side is RpcServer (sim/workloads/rpc_server.hpp): epoll worker threads that recv a
// request, run `service_ns` of user-mode CPU, optionally block off-CPU, and send the response. The
// load is either closed loop (neper tcp_rr's model, google/neper rr.c @ ea5890f: `num_flows`
// connections, each with one request outstanding, optional think time as neper's -D) or open loop
// (requests leave at `rate_rps` with the given inter-arrival distribution whatever the responses,
// as mutilate's and wrk2's generators do; a request goes to a uniformly chosen connection and
// queues behind that connection's earlier requests). It reports what Jakub Kicinski's 2020 table
// reports (validation-targets.md 2): RPS, latency avg/p50/p99/p99.9, application overload
// (defined in rpc_server.hpp), CPU busy and PSI (common summary).
#pragma once

#include "sim/params/distribution.hpp"
#include "sim/workloads/rpc_server.hpp"

namespace napisim {

struct AppParams : RpcServerParams {
  std::int64_t num_flows = 64;
  std::string load = "closed";
  Json think_ns = 0;
  double rate_rps = 100000;
  Json interarrival = Json{{"type", "exponential"}, {"mean", 1}};
  Json request_size = 1024;
  Json response_size = 1024;

  template <class V>
  static void fields(V& v) {
    v("num_flows", &AppParams::num_flows, "flows", "Client connections", Range{1, 1e6});
    v("load", &AppParams::load, "",
      "closed: one request outstanding per flow (neper tcp_rr); open: requests leave at rate_rps whatever the "
      "responses, queueing at the server when it falls behind",
      Choices{"closed", "open"});
    v("think_ns", &AppParams::think_ns, "ns", "Closed loop: gap from a response to the flow's next request",
      kDistribution);
    v("rate_rps", &AppParams::rate_rps, "requests/s", "Open loop: offered rate over all flows", Range{1e-3, 1e10});
    v("interarrival", &AppParams::interarrival, "",
      "Open loop: shape of the inter-arrival distribution, rescaled to mean 1/rate_rps (exponential = Poisson "
      "arrivals; lognormal mean 1 stddev cv; empirical points)",
      kDistribution);
    v("request_size", &AppParams::request_size, "bytes", "Request size (rounded, at least 1)", kDistribution);
    v("response_size", &AppParams::response_size, "bytes", "Response size (rounded, at least 1)", kDistribution);
    RpcServerParams::fields(v);
  }
  bool operator==(const AppParams&) const = default;
};

class App : public RpcServer {
 public:
  App(const AppParams& p, const std::string& path);

 protected:
  void describe(Json& workload) const override;

 private:
  AppParams p_;
};

/// The params with every distribution in its canonical form (validated).
Json resolve_app_params(const Json& params, const std::string& path);

}  // namespace napisim
