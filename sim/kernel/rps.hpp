// napisim: RPS/RFS configuration and the RFS flow tables (net/core/dev.c v6.13, rps_map,
// rps_dev_flow_table; Documentation/networking/scaling.rst). The code is rps.cpp.
#pragma once

#include <cstdint>
#include <vector>

namespace napisim {

/// RPS/RFS configuration and the per-queue RFS flow tables (net/core/dev.c, Documentation/
/// networking/scaling.rst).
struct RpsState {
  struct DevFlow {
    int cpu = -1;
    std::uint64_t last_qtail = 0;
  };
  std::vector<std::vector<int>> map;             // [nic*1024+queue] -> rps_cpus as a list
  std::vector<std::vector<DevFlow>> flow_table;  // [nic*1024+queue] -> rps_flow_cnt entries
  bool rfs = false;                              // rps_sock_flow_entries > 0
  bool idle_sibling = false;                     // Kirill Tkhai's 2018 RFC (opt-in)
  std::vector<int> lo_map;                       // lo's rx-0/rps_cpus
  std::vector<DevFlow> lo_flow_table;            // lo's rx-0/rps_flow_cnt entries
};

}  // namespace napisim
