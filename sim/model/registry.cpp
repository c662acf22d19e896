#include "sim/model/model.hpp"

namespace napisim {

const ModelRegistry& builtin_models() {
  static const ModelRegistry registry = [] {
    ModelRegistry r;
    register_builtin_models(r);
    return r;
  }();
  return registry;
}

}  // namespace napisim
