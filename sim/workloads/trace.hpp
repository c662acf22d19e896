// napisim: `trace`, open-loop replay of a request trace (issue 6), and `napisim trace-gen`.
//
// Requests leave the client at the times the trace gives, whatever the responses (open loop); the
// server side is RpcServer (sim/workloads/rpc_server.hpp). Trace formats:
//
//   csv    a header line naming the columns, then one request per line, separated by commas or
//          whitespace; lines starting with '#' and blank lines are ignored. Columns:
//            timestamp      seconds (float) when the request leaves the client   (required)
//            flow           connection id (any integer; dense indices in order of first use)
//            request_size   bytes        (default: the workload's request_size)
//            response_size  bytes        (default: the workload's response_size)
//            service_ns     user-mode CPU of the request, ns (default: drawn from service_ns)
//          Timestamps must not decrease; the trace starts at its first timestamp.
//   neper  neper's --log-rtt file (google/neper @ ea5890f, thread.c/rr.c; validation-targets.md
//          4.1): header "timestamp thread_id flow_id rtt", rows "%15.9f %10d %10d %12.9f" (commas
//          in a .csv file). timestamp is when the response completed, so the request left at
//          timestamp - rtt; (thread_id, flow_id) is the connection. Sizes from the workload.
//
// `rate_scale` multiplies the offered rate: every time (relative to the first request) is divided
// by it, so request i leaves at (t_i - t_0) / rate_scale exactly (integer ns, rounded). `repeat`
// starts the trace over, one mean gap after its last request, until the run ends. A relative
// `file` resolves against the scenario file's directory, as platform.xml does.
//
// `napisim trace-gen SPEC` writes such a CSV trace from a distribution spec (TraceGenParams):
// Poisson (exponential gaps), lognormal or empirical inter-arrivals at a mean rate, over a
// duration, with size and optional service-time distributions.
#pragma once

#include <string>
#include <vector>

#include "sim/params/distribution.hpp"
#include "sim/workloads/rpc_server.hpp"

namespace napisim {

struct TraceParams : RpcServerParams {
  std::string file = "";
  std::string format = "auto";
  double rate_scale = 1.0;
  bool repeat = false;
  std::int64_t request_size = 1024;
  std::int64_t response_size = 1024;

  template <class V>
  static void fields(V& v) {
    v("file", &TraceParams::file, "path", "Trace file (relative to the scenario file's directory)");
    v("format", &TraceParams::format, "",
      "csv (header naming timestamp[s], flow, request_size, response_size, service_ns), neper (--log-rtt file), "
      "or auto (neper if the header is neper's)",
      Choices{"auto", "csv", "neper"});
    v("rate_scale", &TraceParams::rate_scale, "x", "Load scale: every inter-arrival gap is divided by this",
      Range{1e-6, 1e6});
    v("repeat", &TraceParams::repeat, "", "Start the trace over when it ends (else the load stops)");
    v("request_size", &TraceParams::request_size, "bytes", "Request size when the trace has none", Range{1, 1e9});
    v("response_size", &TraceParams::response_size, "bytes", "Response size when the trace has none", Range{1, 1e9});
    RpcServerParams::fields(v);
  }
  bool operator==(const TraceParams&) const = default;
};

/// Reads a trace. Errors are ConfigError(`path` + "/file", "<file> line L, column C (<name>): ...").
/// Returns records with times relative to the first request and dense flow indices; `num_flows`
/// receives the number of distinct connections.
std::vector<TraceRecord> load_trace(const TraceParams& p, const std::string& path, std::int64_t* num_flows);

class Trace : public RpcServer {
 public:
  Trace(const TraceParams& p, const std::string& path);

 protected:
  void describe(Json& workload) const override;

 private:
  TraceParams p_;
  std::size_t records_ = 0;
};

/// Resolves `file` against `base_dir`, validates the trace and the distributions.
Json resolve_trace_params(const Json& params, const std::string& path, const std::string& base_dir);

/// What `napisim trace-gen` generates.
struct TraceGenParams {
  double duration_s = 1.0;
  double rate_rps = 10000;
  Json interarrival = Json{{"type", "exponential"}, {"mean", 1}};
  std::int64_t flows = 64;
  Json request_size = 1024;
  Json response_size = 1024;
  Json service_ns = nullptr;
  std::int64_t seed = 1;

  template <class V>
  static void fields(V& v) {
    v("duration_s", &TraceGenParams::duration_s, "s", "Trace length", Range{1e-6, 1e5});
    v("rate_rps", &TraceGenParams::rate_rps, "requests/s", "Mean request rate", Range{1e-3, 1e10});
    v("interarrival", &TraceGenParams::interarrival, "",
      "Shape of the inter-arrival distribution, rescaled to mean 1/rate_rps (exponential: Poisson; lognormal "
      "{mean: 1, stddev: cv}; empirical points)",
      kDistribution);
    v("flows", &TraceGenParams::flows, "flows", "Connections; each request picks one uniformly", Range{1, 1e6});
    v("request_size", &TraceGenParams::request_size, "bytes", "Request size", kDistribution);
    v("response_size", &TraceGenParams::response_size, "bytes", "Response size", kDistribution);
    v("service_ns", &TraceGenParams::service_ns, "ns", "Service CPU written per request (null: no service_ns column)",
      kOptionalDistribution);
    v("seed", &TraceGenParams::seed, "", "Random seed", Range{0, 9.0e15});
  }
  bool operator==(const TraceGenParams&) const = default;
};

/// The CSV trace for `spec` (a TraceGenParams object); ConfigErrors name the JSON pointer.
std::string generate_trace_csv(const Json& spec);

}  // namespace napisim
