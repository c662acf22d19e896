#include "sim/workloads/workload.hpp"

#include <algorithm>
#include <cstdio>

#include "sim/params/fields.hpp"
#include "sim/workloads/tcp_rr.hpp"
#include "sim/workloads/stream.hpp"
#include "sim/workloads/super_netperf.hpp"
#include "sim/workloads/mutilate.hpp"
#include "sim/workloads/app.hpp"
#include "sim/workloads/trace.hpp"

namespace napisim {

std::string percentile_key(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "p%g", p);
  return buf;
}

std::vector<double> report_percentiles(const std::vector<double>& requested) {
  std::vector<double> ps = {50, 90, 95, 99, 99.9, 99.99};
  for (double p : requested)
    if (std::find(ps.begin(), ps.end(), p) == ps.end()) ps.push_back(p);
  std::sort(ps.begin(), ps.end());
  return ps;
}

Json request_conservation(std::uint64_t sent, std::uint64_t answered, std::uint64_t in_flight,
                          std::uint64_t ring_drop_segments, std::uint64_t retransmitted_trains) {
  return Json{{"sent", sent},
              {"answered", answered},
              {"in_flight", in_flight},
              {"ring_drop_segments", ring_drop_segments},
              {"retransmitted_trains", retransmitted_trains}};
}

Json latency_json(const Histogram& h, const std::vector<double>& percentiles) {
  Json lat;
  lat["count"] = h.count();
  lat["min"] = h.min();
  lat["max"] = h.max();
  lat["mean"] = h.mean();
  lat["stddev"] = h.stddev();
  for (double p : percentiles) lat[percentile_key(p)] = h.percentile(p);
  return lat;
}

std::vector<std::string> workload_types() { return {"tcp_rr", "app", "trace", "mutilate", "stream", "super_netperf"}; }

bool workload_has_linux_client(const std::string& type) { return type == "tcp_rr"; }

std::unique_ptr<Workload> make_workload(const std::string& type, const Json& params, const std::string& path) {
  if (type == "tcp_rr") return std::make_unique<TcpRr>(parse_params<TcpRrParams>(params, path));
  if (type == "mutilate") return std::make_unique<Mutilate>(parse_params<MutilateParams>(params, path), path);
  if (type == "app") return std::make_unique<App>(parse_params<AppParams>(params, path), path);
  if (type == "trace") return std::make_unique<Trace>(parse_params<TraceParams>(params, path), path);
  if (type == "stream") return std::make_unique<Stream>(parse_params<StreamParams>(params, path));
  if (type == "super_netperf") return std::make_unique<SuperNetperf>(parse_params<SuperNetperfParams>(params, path));
  std::string valid;
  for (const auto& t : workload_types()) valid += (valid.empty() ? "\"" : ", \"") + t + "\"";
  throw ConfigError(path, "unknown workload type; expected one of " + valid);
}

Json resolve_workload_params(const std::string& type, const Json& params, const std::string& path,
                             const std::string& base_dir) {
  if (type == "tcp_rr") return params_to_json(parse_params<TcpRrParams>(params, path));
  if (type == "mutilate") return params_to_json(Mutilate(parse_params<MutilateParams>(params, path), path).params());
  if (type == "app") return resolve_app_params(params, path);
  if (type == "trace") return resolve_trace_params(params, path, base_dir);
  if (type == "stream") return params_to_json(parse_params<StreamParams>(params, path));
  if (type == "super_netperf") return params_to_json(parse_params<SuperNetperfParams>(params, path));
  throw ConfigError(path, "unknown workload type \"" + type + "\"");
}

Json workload_schema() {
  Json s;
  s["tcp_rr"] = params_schema<TcpRrParams>();
  s["mutilate"] = params_schema<MutilateParams>();
  s["app"] = params_schema<AppParams>();
  s["trace"] = params_schema<TraceParams>();
  s["stream"] = params_schema<StreamParams>();
  s["super_netperf"] = params_schema<SuperNetperfParams>();
  return s;
}

}  // namespace napisim
