// napisim: the JSON type used everywhere. ordered_json keeps keys in declaration/insertion order,
// so scenarios, schemas and results print in a stable, human order.
#pragma once

#include <nlohmann/json.hpp>

namespace napisim {
using Json = nlohmann::ordered_json;
}  // namespace napisim
