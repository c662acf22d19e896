// napisim import-host: a scenario whose server is a real Linux host (docs/import-and-tune.md).
//
// The host is read from the machine napisim runs on, or from files collected on another one
// (`--from DIR`, the layout below; tools/collect-host.sh writes it). Every input has one logical
// name; live, each name maps to where Linux keeps it:
//
//   topology.xml                     lstopo --of xml (live: hwloc, the same library)
//   proc/interrupts                  /proc/interrupts
//   proc/irq/<N>/effective_affinity_list, smp_affinity_list
//   proc/sys/net/core/<sysctl>       netdev_budget, netdev_budget_usecs, dev_weight, busy_poll,
//                                    busy_read, netdev_max_backlog, gro_normal_batch,
//                                    rps_sock_flow_entries
//   proc/sys/kernel/osrelease        the kernel version (scheduler: EEVDF from 6.6)
//   boot/config                      /boot/config-$(uname -r): CONFIG_HZ, CONFIG_PREEMPT*
//   net/<dev>/device                 basename of readlink /sys/class/net/<dev>/device
//   net/<dev>/numa_node              /sys/class/net/<dev>/device/numa_node
//   net/<dev>/{threaded,napi_defer_hard_irqs,gro_flush_timeout,speed,ifindex}
//                                    /sys/class/net/<dev>/...
//   net/<dev>/rps_cpus               /sys/class/net/<dev>/queues/rx-0/rps_cpus
//   net/<dev>/ethtool-l, ethtool-g, ethtool-c
//                                    the output of ethtool -l/-g/-c <dev> (live: runs ethtool)
//   napi-get.json                    ynl --family netdev --dump napi-get --output-json (JSON array;
//                                    live: only with --napi-get FILE)
//
// What is missing is a note (stderr and the scenario's description) and the documented default;
// what is present but unreadable is a ConfigError naming the file and what was expected.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/json.hpp"

namespace napisim::hostimport {

struct ImportOptions {
  std::string from_dir;              // "" = this machine
  std::vector<std::string> devices;  // --dev; empty = every device with a bus device (not lo, bridges)
  std::string napi_get;              // a napi-get JSON dump (instead of DIR/napi-get.json)
  std::string name = "imported";     // the scenario's name
  // The workload: a request trace (neper --log-rtt or CSV, as the trace workload reads them), else
  // an open-loop `app` at rate_rps with these distributions (JSON: a number or a distribution).
  std::string trace;
  std::string trace_ref;  // how the scenario names the trace file ("" = trace as given)
  double rate_rps = 0;    // 0 = the default rate (a note says so)
  std::string request_size = "1024", response_size = "1024";
  std::string service_ns = "{\"type\": \"exponential\", \"mean\": 10000}";
  std::int64_t flows = 64;
  std::int64_t threads = 0;  // server worker threads; 0 = one per CPU taking a queue IRQ
};

struct ImportResult {
  Json scenario;
  std::vector<std::string> notes;  // what was not read or was approximated, and what was used
};

/// Builds the scenario. ConfigError for unreadable inputs (naming the file) and for a host
/// napisim cannot represent (the field and why).
ImportResult import_host(const ImportOptions& opt);

/// The topology part on its own (tests): an lstopo XML document -> the scenario's "topology"
/// object, and `os_to_sim` maps each OS CPU number to napisim's CPU number.
Json topology_from_xml(const std::string& xml, const std::string& file, std::vector<int>* os_to_sim,
                       std::vector<std::string>* notes);

}  // namespace napisim::hostimport
