// napisim: how much of a spread over items a grouping of them explains (one-way analysis of
// variance, Kelley's epsilon squared).
//
// tcp_rr asks it of its flows' mean latencies: grouped by the server's RX queue, the server thread,
// the client's RX queue and the client thread, the share that is between groups says where a latency
// body comes from (one NAPI CPU's FIFO cycle, one stalled thread's flows) rather than from every
// flow's transactions alike.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "sim/core/error.hpp"

namespace napisim {

/// epsilon^2 = 1 - (SS_within / (n - k)) / (SS_total / (n - 1)) of `values` split by `groups`
/// (any keys; k is the number of distinct ones): the share of the variance that lies between the
/// groups, adjusted for the k - 1 degrees of freedom the groups' means take, so that groups drawn
/// at random score about 0 rather than (k - 1) / (n - 1). Clamped to [0, 1]; 0 when there is no
/// spread or no within-group freedom (n <= k).
inline double between_group_share(const std::vector<double>& values, const std::vector<std::int64_t>& groups) {
  NAPISIM_ASSERT(values.size() == groups.size(), "between_group_share(): one group per value");
  const std::size_t n = values.size();
  if (n < 2) return 0.0;
  std::map<std::int64_t, std::pair<double, std::size_t>> group;  // key -> (sum, count)
  double total = 0;
  for (std::size_t i = 0; i < n; ++i) {
    auto& [sum, count] = group[groups[i]];
    sum += values[i];
    ++count;
    total += values[i];
  }
  const double mean = total / static_cast<double>(n);
  double ss_total = 0, ss_within = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const auto& [sum, count] = group[groups[i]];
    const double group_mean = sum / static_cast<double>(count);
    ss_total += (values[i] - mean) * (values[i] - mean);
    ss_within += (values[i] - group_mean) * (values[i] - group_mean);
  }
  const std::size_t k = group.size();
  if (ss_total <= 0 || n <= k) return 0.0;
  const double eps2 = 1.0 - (ss_within / static_cast<double>(n - k)) / (ss_total / static_cast<double>(n - 1));
  return std::clamp(eps2, 0.0, 1.0);
}

}  // namespace napisim
