#include <algorithm>

#include "sim/core/error.hpp"
#include "sim/model/model.hpp"

namespace napisim {

void ModelRegistry::add(ModelInfo info) {
  NAPISIM_ASSERT(find(info.name) == nullptr, "model registered twice");
  models_.push_back(std::move(info));
  std::sort(models_.begin(), models_.end(), [](const ModelInfo& a, const ModelInfo& b) { return a.name < b.name; });
}

const ModelInfo* ModelRegistry::find(const std::string& name) const {
  for (const auto& m : models_)
    if (m.name == name) return &m;
  return nullptr;
}

const ModelInfo& ModelRegistry::get(const std::string& name, const std::string& path) const {
  if (const ModelInfo* m = find(name)) return *m;
  std::string valid;
  for (const auto& m : models_) valid += (valid.empty() ? "\"" : ", \"") + m.name + "\"";
  throw ConfigError(path, "unknown model \"" + name + "\"; expected one of " + valid);
}

const ModelRegistry& builtin_models() {
  static const ModelRegistry registry = [] {
    ModelRegistry r;
    register_builtin_models(r);
    return r;
  }();
  return registry;
}

}  // namespace napisim
