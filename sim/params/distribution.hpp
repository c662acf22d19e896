// napisim: a distribution as a parameter (sim/core/rng.hpp Distribution), for fields() lists:
//   v("service_ns", &P::service_ns, "ns", "User-mode CPU per request", kDistribution);
// The field stays Json (the component builds its Distribution when it starts); parsing checks it
// with Distribution::parse(), the schema is Distribution::schema() and `describe` calls its type
// "distribution".
#pragma once

#include <string>

#include "sim/core/json.hpp"
#include "sim/core/rng.hpp"
#include "sim/params/fields.hpp"

namespace napisim {

inline void check_distribution(const Json& j, const std::string& path) {
  (void)Distribution::parse(j, path);
}

inline const JsonKind kDistribution{"distribution", &Distribution::schema, &check_distribution};
/// A distribution or null (the component's "none").
inline const JsonKind kOptionalDistribution{"distribution", &Distribution::schema, &check_distribution, true};

}  // namespace napisim
