#include "sim/workloads/workload.hpp"

#include "sim/params/fields.hpp"
#include "sim/workloads/tcp_rr.hpp"

namespace napisim {

std::vector<std::string> workload_types() { return {"tcp_rr"}; }

std::unique_ptr<Workload> make_workload(const std::string& type, const Json& params, const std::string& path) {
  if (type == "tcp_rr") return std::make_unique<TcpRr>(parse_params<TcpRrParams>(params, path));
  std::string valid;
  for (const auto& t : workload_types()) valid += (valid.empty() ? "\"" : ", \"") + t + "\"";
  throw ConfigError(path, "unknown workload type; expected one of " + valid);
}

Json resolve_workload_params(const std::string& type, const Json& params, const std::string& path) {
  if (type == "tcp_rr") return params_to_json(parse_params<TcpRrParams>(params, path));
  throw ConfigError(path, "unknown workload type \"" + type + "\"");
}

Json workload_schema() {
  Json s;
  s["tcp_rr"] = params_schema<TcpRrParams>();
  return s;
}

}  // namespace napisim
