// napisim import-host: the parsers on recorded and garbled text, and the recorded 2-socket host
// (tests/hostimport/two_socket) imported field by field.
#include "sim/hostimport/host_import.hpp"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "sim/core/error.hpp"
#include "sim/hostimport/parsers.hpp"
#include "sim/params/json_util.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/simgrid/run.hpp"

namespace napisim::hostimport {
namespace {

const std::string kHost = std::string(NAPISIM_SOURCE_DIR) + "/tests/hostimport/two_socket";

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The error's message, "" when none is thrown.
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(HostImportParsers, EthtoolRecordedOutputs) {
  const EthtoolChannels l = parse_ethtool_channels(slurp(kHost + "/net/eno1/ethtool-l"), "l");
  EXPECT_EQ(l.combined, 4);  // the current setting, not the pre-set maximum of 16
  EXPECT_EQ(l.rx, 0);
  EXPECT_EQ(l.other, 1);
  const EthtoolRings g = parse_ethtool_rings(slurp(kHost + "/net/eno1/ethtool-g"), "g");
  EXPECT_EQ(g.rx, 2048);
  EXPECT_EQ(g.tx, 2048);
  const EthtoolCoalesce c = parse_ethtool_coalesce(slurp(kHost + "/net/eno1/ethtool-c"), "c");
  EXPECT_EQ(c.adaptive_rx, false);
  EXPECT_EQ(c.rx_usecs, 50);
  EXPECT_FALSE(c.rx_frames.has_value());  // n/a
  EXPECT_EQ(c.tx_usecs, 50);
  const EthtoolCoalesce m = parse_ethtool_coalesce(slurp(kHost + "/net/ens1f0np0/ethtool-c"), "c");
  EXPECT_EQ(m.adaptive_rx, true);
  EXPECT_EQ(m.rx_usecs, 8);
  EXPECT_EQ(m.rx_frames, 128);
  EXPECT_EQ(m.tx_frames, 32);
  const EthtoolChannels v = parse_ethtool_channels(
      "Channel parameters for eth0:\nPre-set maximums:\nRX:\t\tn/a\nTX:\t\tn/a\nOther:\t\tn/a\nCombined:\t1\n"
      "Current hardware settings:\nRX:\t\tn/a\nTX:\t\tn/a\nOther:\t\tn/a\nCombined:\t1\n",
      "l");
  EXPECT_EQ(v.combined, 1);
  EXPECT_FALSE(v.rx.has_value());
}

TEST(HostImportParsers, GarbledInputNamesTheFileAndTheExpectation) {
  EXPECT_NE(error_of([] {
              parse_ethtool_channels("Ring parameters for eth0:\n", "DIR/net/eth0/ethtool-l");
            }).find("DIR/net/eth0/ethtool-l: expected the output of `ethtool -l DEV`"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_ethtool_rings("", "g"); }).find("an empty file"), std::string::npos);
  EXPECT_NE(error_of([] {
              parse_ethtool_channels("Channel parameters for eth0:\nPre-set maximums:\nRX:\t1\n", "l");
            }).find("\"Current hardware settings:\" section"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_ethtool_coalesce("Coalesce parameters for eth0:\nrx-usecs: lots\n", "c");
            }).find("c: \"rx-usecs\": expected an integer >= 0 or n/a, got \"lots\""),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_proc_interrupts("garbage\n", "I"); }).find("I: expected /proc/interrupts"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_proc_interrupts("  CPU0 CPU1\n 5: 1\n", "I"); }).find("line 2: expected 2 per-CPU"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_cpulist("3-1", "A"); }).find("A: expected a cpu list"), std::string::npos);
  EXPECT_NE(error_of([] { parse_cpumask_hex("xyz", "M"); }).find("M: expected a hex cpumask"), std::string::npos);
  EXPECT_NE(error_of([] { parse_int_file("300 pkts", "S"); }).find("S: expected an integer, got \"300 pkts\""),
            std::string::npos);
}

TEST(HostImportParsers, ProcInterruptsAndMasks) {
  std::vector<int> cols;
  const auto irqs = parse_proc_interrupts(slurp(kHost + "/proc/interrupts"), "I", &cols);
  ASSERT_EQ(cols.size(), 32U);
  EXPECT_EQ(cols[31], 31);
  const auto it = std::find_if(irqs.begin(), irqs.end(), [](const IrqLine& l) { return l.irq == 203; });
  ASSERT_NE(it, irqs.end());
  EXPECT_EQ(it->name, "mlx5_comp2@pci:0000:af:00.0");
  EXPECT_EQ(it->counts.size(), 32U);
  EXPECT_EQ(parse_cpulist("0-2,8\n", "A"), (std::vector<int>{0, 1, 2, 8}));
  EXPECT_EQ(parse_cpumask_hex("00000001,0000000a\n", "M"), (std::vector<int>{1, 3, 32}));
}

TEST(HostImportParsers, QueueInterruptNames) {
  EXPECT_EQ(rx_queue_of_irq("mlx5_comp7@pci:0000:af:00.0", "ens1f0np0", "0000:af:00.0"), 7);
  EXPECT_EQ(rx_queue_of_irq("mlx5_async0@pci:0000:af:00.0", "ens1f0np0", "0000:af:00.0"), std::nullopt);
  EXPECT_EQ(rx_queue_of_irq("ice-eno1-TxRx-3", "eno1", "0000:18:00.0"), 3);
  EXPECT_EQ(rx_queue_of_irq("ice-0000:18:00.0:misc", "eno1", "0000:18:00.0"), std::nullopt);
  EXPECT_EQ(rx_queue_of_irq("eth0-TxRx-12", "eth0", ""), 12);
  EXPECT_EQ(rx_queue_of_irq("eth0-tx-1", "eth0", ""), std::nullopt);
  EXPECT_EQ(rx_queue_of_irq("eth10-TxRx-1", "eth1", ""), std::nullopt);  // another device
  EXPECT_EQ(rx_queue_of_irq("virtio2-input.0", "eth0", "virtio2"), 0);
  EXPECT_EQ(rx_queue_of_irq("virtio2-output.0", "eth0", "virtio2"), std::nullopt);
  EXPECT_EQ(rx_queue_of_irq("virtio2-config", "eth0", "virtio2"), std::nullopt);
}

TEST(HostImport, TopologyOfTheTwoSocketHostIsRenumbered) {
  std::vector<int> map;
  std::vector<std::string> notes;
  const Json t = topology_from_xml(slurp(kHost + "/topology.xml"), "topology.xml", &map, &notes);
  EXPECT_EQ(t, Json::parse(R"({"numa_nodes": 2, "llcs_per_node": 1, "cores_per_llc": 8, "threads_per_core": 2,
                              "numa_distance": [10, 21, 21, 10]})"));
  // BIOS-interleaved numbering: node 0 has OS CPUs 0,2,..,14 (siblings 16,18,..,30), node 1 the odd ones.
  ASSERT_EQ(map.size(), 32U);
  EXPECT_EQ(map[0], 0);
  EXPECT_EQ(map[2], 1);
  EXPECT_EQ(map[14], 7);
  EXPECT_EQ(map[1], 8);
  EXPECT_EQ(map[15], 15);
  EXPECT_EQ(map[16], 16);
  EXPECT_EQ(map[18], 17);
  EXPECT_EQ(map[17], 24);
  EXPECT_EQ(map[31], 31);
  EXPECT_NE(notes.front().find("CPUs renumbered"), std::string::npos);
  EXPECT_NE(error_of([] {
              std::vector<int> m;
              std::vector<std::string> n;
              topology_from_xml("<html/>", "X.xml", &m, &n);
            }).find("X.xml: expected an hwloc XML topology"),
            std::string::npos);
}

TEST(HostImport, TwoSocketHostFieldByField) {
  ImportOptions o;
  o.from_dir = kHost;
  o.rate_rps = 200000;
  o.name = "kv01";
  const ImportResult r = import_host(o);
  const Json& s = r.scenario;
  EXPECT_EQ(s["name"], "kv01");
  EXPECT_EQ(s["topology"]["cores_per_llc"], 8);
  ASSERT_EQ(s["nics"].size(), 2U);
  // eno1 (ice): 4 combined channels, IRQs on OS CPUs 0,2,4,6 = napisim 0-3, rx-frames n/a -> the ring.
  const Json& e = s["nics"][0];
  EXPECT_EQ(e["name"], "eno1");
  EXPECT_EQ(e["numa_node"], 0);
  EXPECT_EQ(e["queues"], 4);
  EXPECT_EQ(e["ring_size"], 2048);
  EXPECT_EQ(e["speed_gbps"], 25.0);
  EXPECT_EQ(e["rx_usecs"], 50);
  EXPECT_EQ(e["rx_frames"], 2048);
  EXPECT_EQ(e["adaptive_rx"], false);
  EXPECT_EQ(e["irq_affinity"], "0-3");
  // ens1f0np0 (mlx5): node 1, IRQs on OS CPUs 1,3,..,15 = napisim 8-15, sysfs deferral 2 / 200 us.
  const Json& m = s["nics"][1];
  EXPECT_EQ(m["name"], "ens1f0np0");
  EXPECT_EQ(m["numa_node"], 1);
  EXPECT_EQ(m["queues"], 8);
  EXPECT_EQ(m["ring_size"], 1024);
  EXPECT_EQ(m["speed_gbps"], 100.0);
  EXPECT_EQ(m["rx_usecs"], 8);
  EXPECT_EQ(m["rx_frames"], 128);
  EXPECT_EQ(m["tx_usecs"], 16);
  EXPECT_EQ(m["adaptive_rx"], true);
  EXPECT_EQ(m["irq_affinity"], "8-15");
  EXPECT_EQ(m["napi_defer_hard_irqs"], 2);
  EXPECT_EQ(m["gro_flush_timeout_ns"], 200000);
  // Models: eno1 threaded (sysfs) with RPS over OS CPUs 1,3,..,15 (napisim 8-15) and RFS; the
  // mlx5 NAPIs' netlink values (defer 100 / 20 us, irq-suspend-timeout 20 ms) over its sysfs ones.
  EXPECT_EQ(s["models"], Json::parse(R"([
    {"name": "napi_irq"},
    {"name": "napi_threaded", "nics": [0]},
    {"name": "rps_rfs", "params": {"rps_cpus": "8-15", "rps_sock_flow_entries": 32768}, "nics": [0]},
    {"name": "napi_defer_irq", "params": {"defer_hard_irqs": 100, "gro_flush_timeout_ns": 20000}, "nics": [1]},
    {"name": "irq_suspend", "params": {"irq_suspend_timeout_ns": 20000000}, "nics": [1]}])"));
  // Kernel: 6.8 (EEVDF), CONFIG_HZ 250, voluntary preemption, the sysctls as read.
  const Json& k = s["kernel"];
  EXPECT_EQ(k["sched"]["algo"], "eevdf");
  EXPECT_EQ(k["sched"]["preempt"], "voluntary");
  EXPECT_EQ(k["ksoftirqd_mode"], "v6.5");
  EXPECT_EQ(k["hz"], 250);
  EXPECT_EQ(k["net"]["netdev_budget"], 600);
  EXPECT_EQ(k["net"]["netdev_budget_usecs"], 4000);
  EXPECT_EQ(k["net"]["dev_weight"], 64);
  EXPECT_EQ(k["net"]["busy_poll"], 0);
  // The load arrives on the 100G NIC; workers: one per CPU taking a queue IRQ (4 + 8).
  EXPECT_EQ(s["platform"]["clients"][0]["nic"], 1);
  EXPECT_EQ(s["platform"]["clients"][0]["link_gbps"], 100.0);
  EXPECT_EQ(s["workload"]["type"], "app");
  EXPECT_EQ(s["workload"]["params"]["rate_rps"], 200000.0);
  EXPECT_EQ(s["workload"]["params"]["num_threads"], 12);
  EXPECT_NE(s["description"].get<std::string>().find("CPUs renumbered"), std::string::npos);
  // And it is a scenario napisim accepts.
  RunOptions ro;
  EXPECT_NO_THROW(validate_scenario(s, ro));
}

TEST(HostImport, MissingInputsAreNotesBadOnesErrors) {
  EXPECT_NE(error_of([] {
              ImportOptions o;
              o.from_dir = kHost + "/net";  // no topology.xml there
              import_host(o);
            }).find("topology.xml: not found; expected the output of `lstopo --of xml`"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              ImportOptions o;
              o.from_dir = kHost;
              o.devices = {"eth7"};
              import_host(o);
            }).find("--dev: no device 'eth7'"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              ImportOptions o;
              o.from_dir = "/nonexistent-dir";
              import_host(o);
            }).find("--from: not a directory"),
            std::string::npos);
}

}  // namespace
}  // namespace napisim::hostimport
