// The built-in receive-path models: models.def is generated from NAPISIM_MODELS in
// models/CMakeLists.txt, the one list of models.
#include "sim/model/model.hpp"

namespace napisim {

#define NAPISIM_MODEL(id) void register_##id(ModelRegistry& r);
#include "models.def"
#undef NAPISIM_MODEL

void register_builtin_models(ModelRegistry& r) {
#define NAPISIM_MODEL(id) register_##id(r);
#include "models.def"
#undef NAPISIM_MODEL
}

}  // namespace napisim
