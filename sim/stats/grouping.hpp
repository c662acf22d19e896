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
#include <vector>

#include "sim/core/error.hpp"

namespace napisim {

/// epsilon^2 = 1 - (SS_within / (n - k)) / (SS_total / (n - 1)) of `values` split by `groups`
/// (group ids 0 .. k-1; empty groups do not count): the share of the variance that lies between the
/// groups, adjusted for the k - 1 degrees of freedom the groups' means take, so that groups drawn
/// at random score about 0 rather than (k - 1) / (n - 1). Clamped to [0, 1]; 0 when there is no
/// spread or no within-group freedom (n <= k).
inline double between_group_share(const std::vector<double>& values, const std::vector<int>& groups) {
  NAPISIM_ASSERT(values.size() == groups.size(), "between_group_share(): one group per value");
  const std::size_t n = values.size();
  if (n < 2) return 0.0;
  int max_group = 0;
  for (int g : groups) {
    NAPISIM_ASSERT(g >= 0, "between_group_share(): group ids are >= 0");
    max_group = std::max(max_group, g);
  }
  std::vector<double> sum(static_cast<std::size_t>(max_group) + 1, 0.0);
  std::vector<std::size_t> count(sum.size(), 0);
  double total = 0;
  for (std::size_t i = 0; i < n; ++i) {
    sum[static_cast<std::size_t>(groups[i])] += values[i];
    ++count[static_cast<std::size_t>(groups[i])];
    total += values[i];
  }
  const double mean = total / static_cast<double>(n);
  double ss_total = 0, ss_within = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const auto g = static_cast<std::size_t>(groups[i]);
    const double group_mean = sum[g] / static_cast<double>(count[g]);
    ss_total += (values[i] - mean) * (values[i] - mean);
    ss_within += (values[i] - group_mean) * (values[i] - group_mean);
  }
  const auto k =
      static_cast<std::size_t>(std::count_if(count.begin(), count.end(), [](std::size_t c) { return c > 0; }));
  if (ss_total <= 0 || n <= k) return 0.0;
  const double eps2 = 1.0 - (ss_within / static_cast<double>(n - k)) / (ss_total / static_cast<double>(n - 1));
  return std::clamp(eps2, 0.0, 1.0);
}

}  // namespace napisim
