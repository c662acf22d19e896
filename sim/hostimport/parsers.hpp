// napisim import-host: parsers of the text a Linux host shows about its receive path.
//
// Each parser takes the text and the name of the file it came from; text it cannot read throws
// ConfigError(file, "expected ..., got ...") naming the line. Values a tool prints as "n/a" (the
// driver does not support the setting) come back as std::nullopt.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace napisim::hostimport {

/// `ethtool -l DEV`: the "Current hardware settings" section.
struct EthtoolChannels {
  std::optional<std::int64_t> rx, tx, other, combined;
};
EthtoolChannels parse_ethtool_channels(std::string_view text, const std::string& file);

/// `ethtool -g DEV`: the current RX and TX ring sizes.
struct EthtoolRings {
  std::optional<std::int64_t> rx, tx;
};
EthtoolRings parse_ethtool_rings(std::string_view text, const std::string& file);

/// `ethtool -c DEV`: the interrupt moderation napisim models.
struct EthtoolCoalesce {
  std::optional<bool> adaptive_rx;
  std::optional<std::int64_t> rx_usecs, rx_frames, tx_usecs, tx_frames;
};
EthtoolCoalesce parse_ethtool_coalesce(std::string_view text, const std::string& file);

/// One line of /proc/interrupts that has a number (not NMI, LOC, ...).
struct IrqLine {
  std::int64_t irq = 0;
  std::string name;                   // the action name, e.g. "mlx5_comp3@pci:0000:3b:00.0", "eth0-TxRx-3"
  std::vector<std::uint64_t> counts;  // per CPU column
};
/// /proc/interrupts; `cpus` receives the CPU number of each column (the header's CPUn).
std::vector<IrqLine> parse_proc_interrupts(std::string_view text, const std::string& file,
                                           std::vector<int>* cpus = nullptr);

/// A kernel cpulist ("0-3,8,10-11"), as /proc/irq/N/smp_affinity_list prints it: the CPUs in
/// ascending order. Ranges with a stride are not printed by the kernel and are rejected.
std::vector<int> parse_cpulist(std::string_view text, const std::string& file);
/// A kernel cpumask in hex words ("00000000,000000ff"), as rx-N/rps_cpus prints it.
std::vector<int> parse_cpumask_hex(std::string_view text, const std::string& file);
/// A single integer file (sysctls, sysfs attributes), surrounding whitespace ignored.
std::int64_t parse_int_file(std::string_view text, const std::string& file);

/// The queue number a NIC queue interrupt's name ends in, when `name` is a receive (or combined)
/// queue vector of the device: its name contains the interface name (eth0-TxRx-3,
/// ice-eth0-TxRx-3, eth0-rx-3), or its bus id with a completion/RX marker
/// (mlx5_comp3@pci:0000:3b:00.0), or is virtio's "<virtioN>-input.<q>". TX-only, control and
/// async vectors give nullopt.
std::optional<int> rx_queue_of_irq(const std::string& name, const std::string& ifname, const std::string& bus_id);

/// CONFIG_ values of a kernel .config (/boot/config-$(uname -r)): "CONFIG_HZ=1000" -> {"CONFIG_HZ", "1000"}.
std::map<std::string, std::string> parse_kconfig(std::string_view text);

}  // namespace napisim::hostimport
