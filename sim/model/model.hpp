// napisim: the receive-path model plugin API and its registry.
//
// A receive-path model (models/<name>.cpp) is one strategy from the kernel debate: classic softirq
// NAPI, threaded NAPI, workqueue NAPI, busy polling, IRQ deferral, RPS/RFS... It declares its
// parameters once (fields()), and attach() applies it to the simulated kernel: per-NAPI state bits
// and knobs, kthreads or worker pools, and hooks (NapiScheduleHook, socket/epoll hooks). Models
// compose in the order the scenario lists them, as kernel features do (threaded NAPI +
// napi_defer_hard_irqs). The registry is an explicit list (models/CMakeLists.txt NAPISIM_MODELS),
// not static self-registration.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "sim/core/json.hpp"
#include "sim/core/registry.hpp"
#include "sim/params/fields.hpp"

namespace napisim {

class Kernel;

class RxModel {
 public:
  virtual ~RxModel() = default;
  /// Applies the strategy to the NICs listed (indices into Kernel::nics()).
  virtual void attach(Kernel& k, const std::vector<int>& nics) = 0;
  /// Throws the ConfigError attach() would throw for values that depend on the host (cpulists),
  /// without changing anything: run-time changes are checked before the run starts.
  virtual void check(const Kernel& /*k*/) const {}
  /// Model-specific results (e.g. kthread CPU time), under result["models"][name].
  virtual void report(Json& /*out*/) const {}
};

struct ModelInfo {
  static constexpr const char* kKind = "model";
  std::string name;
  std::string summary;
  std::function<std::vector<FieldInfo>()> describe;
  std::function<Json()> schema;
  std::function<Json(const Json& params, const std::string& path)> resolve;  // strict parse -> full params
  std::function<std::unique_ptr<RxModel>(const Json& params, const std::string& path)> create;
};

using ModelRegistry = Registry<ModelInfo>;

/// Fills a registry with every built-in model (models/registry_builtin.cpp).
void register_builtin_models(ModelRegistry& r);
/// The registry with the built-in models (built on first use; read-only afterwards).
const ModelRegistry& builtin_models();

/// Helper for model files: registers a model whose parameters are the struct P.
template <class P, class M>
void register_model(ModelRegistry& r, std::string name, std::string summary) {
  ModelInfo info;
  info.name = std::move(name);
  info.summary = std::move(summary);
  info.describe = [] { return describe_params<P>(); };
  info.schema = [] { return params_schema<P>(); };
  info.resolve = [](const Json& params, const std::string& path) {
    return params_to_json(parse_params<P>(params, path));
  };
  info.create = [](const Json& params, const std::string& path) -> std::unique_ptr<RxModel> {
    // A model whose attach() validates values against the host (cpulists) also takes the JSON
    // pointer of its params, to name it in ConfigErrors.
    if constexpr (std::is_constructible_v<M, P, std::string>) {
      return std::make_unique<M>(parse_params<P>(params, path), path);
    } else {
      return std::make_unique<M>(parse_params<P>(params, path));
    }
  };
  r.add(std::move(info));
}

}  // namespace napisim
