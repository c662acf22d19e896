#include "sim/workloads/app.hpp"

namespace napisim {

namespace {
RpcLoad app_load(const AppParams& p, const std::string& path) {
  RpcLoad l;
  l.kind = p.load == "open" ? RpcLoad::Kind::kOpen : RpcLoad::Kind::kClosed;
  l.num_flows = p.num_flows;
  l.think_ns = Distribution::parse(p.think_ns, path + "/think_ns");
  l.interarrival_ns = Distribution::parse(p.interarrival, path + "/interarrival");
  const double mean = l.interarrival_ns.mean();
  if (!(mean > 0) || !std::isfinite(mean))
    throw ConfigError(path + "/interarrival", "expected a distribution with a finite mean > 0");
  l.gap_scale = 1e9 / p.rate_rps / mean;  // samples rescaled so that the mean gap is 1/rate
  l.request_size = Distribution::parse(p.request_size, path + "/request_size");
  l.response_size = Distribution::parse(p.response_size, path + "/response_size");
  return l;
}
}  // namespace

App::App(const AppParams& p, const std::string& path) : RpcServer(p, app_load(p, path), "app", path), p_(p) {}

void App::describe(Json& workload) const {
  workload["load"] = p_.load;
  if (p_.load == "open") workload["rate_rps"] = p_.rate_rps;
  workload["request_size"] = p_.request_size;
  workload["response_size"] = p_.response_size;
  workload["service_ns"] = p_.service_ns;
}

Json resolve_app_params(const Json& params, const std::string& path) {
  AppParams p = parse_params<AppParams>(params, path);
  (void)app_load(p, path);  // validates the load distributions
  p.think_ns = Distribution::parse(p.think_ns, path + "/think_ns").to_json();
  p.interarrival = Distribution::parse(p.interarrival, path + "/interarrival").to_json();
  p.request_size = Distribution::parse(p.request_size, path + "/request_size").to_json();
  p.response_size = Distribution::parse(p.response_size, path + "/response_size").to_json();
  p.service_ns = Distribution::parse(p.service_ns, path + "/service_ns").to_json();
  p.block_ns = Distribution::parse(p.block_ns, path + "/block_ns").to_json();
  return params_to_json(p);
}

}  // namespace napisim
