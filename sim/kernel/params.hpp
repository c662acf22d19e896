// napisim: kernel-wide knobs (sysctls, config options) and CPU cost parameters.
//
// Every constant defaults to the kernel's own default (docs/kernel-napi.md); every CPU
// cost is a named parameter in ns with its source or the inference behind it. One default set
// is meant to reproduce the published directions; nothing is special-cased per scenario.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "sim/core/time.hpp"
#include "sim/params/fields.hpp"

namespace napisim {

/// Scheduler knobs: kernel/sched/fair.c (EEVDF as of v6.6; CFS as of v5.10 behind algo="cfs").
struct SchedParams {
  std::string algo = "eevdf";
  std::int64_t base_slice_ns = 750000;           // sysctl_sched_base_slice (normalized)
  std::int64_t sched_latency_ns = 6000000;       // CFS sysctl_sched_latency (normalized)
  std::int64_t min_granularity_ns = 750000;      // CFS sysctl_sched_min_granularity (normalized)
  std::int64_t wakeup_granularity_ns = 1000000;  // CFS sysctl_sched_wakeup_granularity (normalized)
  std::int64_t migration_cost_ns = 500000;       // sysctl_sched_migration_cost
  std::int64_t balance_interval_ms = 4;          // periodic load balance within an LLC (MC domain)
  bool wake_affine = true;                       // SD_WAKE_AFFINE
  bool sis_util = true;                          // sched_feat(SIS_UTIL)
  bool sis_prop = true;                          // sched_feat(SIS_PROP), v5.10 (algo "cfs")
  bool newidle_balance = true;                   // pull on entering idle (newidle_balance())
  bool nohz_idle_balance = true;                 // CONFIG_NO_HZ_COMMON idle load balancing (kick_ilb())
  bool capacity_pressure = true;                 // capacity_of() less RT and IRQ time, active balance
  std::string preempt = "voluntary";             // CONFIG_PREEMPT_{NONE,VOLUNTARY,} (distro default: voluntary)

  template <class V>
  static void fields(V& v) {
    v("algo", &SchedParams::algo, "", "Fair class: EEVDF (>= v6.6) or CFS (v5.x, the 2020 experiments)",
      Choices{"eevdf", "cfs"});
    v("base_slice_ns", &SchedParams::base_slice_ns, "ns", "sysctl_sched_base_slice before log2 CPU scaling",
      Range{10000, 1e9});
    v("sched_latency_ns", &SchedParams::sched_latency_ns, "ns", "CFS sysctl_sched_latency before scaling",
      Range{100000, 1e9});
    v("min_granularity_ns", &SchedParams::min_granularity_ns, "ns", "CFS sysctl_sched_min_granularity before scaling",
      Range{10000, 1e9});
    v("wakeup_granularity_ns", &SchedParams::wakeup_granularity_ns, "ns",
      "CFS sysctl_sched_wakeup_granularity before scaling", Range{0, 1e9});
    v("migration_cost_ns", &SchedParams::migration_cost_ns, "ns",
      "sysctl_sched_migration_cost: a task that ran this recently is cache hot", Range{0, 1e10});
    v("balance_interval_ms", &SchedParams::balance_interval_ms, "ms", "Periodic load-balance interval in an LLC",
      Range{1, 1000});
    v("wake_affine", &SchedParams::wake_affine, "", "SD_WAKE_AFFINE: wakeups may pull a task to the waker's CPU");
    v("sis_util", &SchedParams::sis_util, "",
      "sched_feat(SIS_UTIL) (v6.6 placement, algo eevdf): bound select_idle_cpu's scan by LLC utilization");
    v("sis_prop", &SchedParams::sis_prop, "",
      "sched_feat(SIS_PROP) (v5.10 placement, algo cfs): bound select_idle_cpu's scan by the waker CPU's "
      "average idle time against the LLC's average scan cost");
    v("newidle_balance", &SchedParams::newidle_balance, "", "Pull a runnable task when a CPU goes idle");
    v("nohz_idle_balance", &SchedParams::nohz_idle_balance, "",
      "Tickless idle CPUs are load-balanced by one of them, kicked from a busy CPU's tick "
      "(nohz_balancer_kick(), _nohz_idle_balance())");
    v("capacity_pressure", &SchedParams::capacity_pressure, "",
      "capacity_of() is what RT and IRQ time leave of a CPU (scale_rt_capacity()): wake_affine_weight() and "
      "SIS_UTIL read it, and an idle CPU's balance pushes the lone task off a CPU whose capacity IRQ time has "
      "cut (voluntary_active_balance()), or under the CFS kernels (v5.10) off an SMT core running two while a "
      "core idles, after cache_nice_tries + 2 failed balances (nr_balance_failed). Off: every CPU keeps 1024 and "
      "a lone running task is never moved");
    v("preempt", &SchedParams::preempt, "",
      "Preemption model: full preempts kernel code at interrupt return; voluntary/none only at cond_resched "
      "or return to user",
      Choices{"none", "voluntary", "full"});
  }
  bool operator==(const SchedParams&) const = default;
};

/// Networking sysctls: Documentation/admin-guide/sysctl/net.rst and net/core/hotdata.c defaults.
struct NetParams {
  std::int64_t dev_weight = 64;              // net.core.dev_weight (NAPI_POLL_WEIGHT)
  std::int64_t netdev_budget = 300;          // net.core.netdev_budget
  std::int64_t netdev_budget_usecs = 0;      // net.core.netdev_budget_usecs; 0: 2 * USEC_PER_SEC / HZ (v5.7+)
  std::int64_t gro_normal_batch = 8;         // net.core.gro_normal_batch
  std::int64_t netdev_max_backlog = 1000;    // net.core.netdev_max_backlog
  std::string flow_limit_cpu_bitmap = "";    // net.core.flow_limit_cpu_bitmap (cpulist here; "" = off)
  std::int64_t flow_limit_table_len = 4096;  // net.core.flow_limit_table_len
  std::int64_t busy_read = 0;                // net.core.busy_read (us)
  std::int64_t busy_poll = 0;                // net.core.busy_poll (us)
  std::int64_t somaxconn = 4096;             // net.core.somaxconn (4096 since v5.4, 19f92a030ca6)
  std::int64_t mss = 1448;                   // TCP MSS with timestamps on a 1500-byte MTU
  std::int64_t tso_max_bytes = 65536;        // GSO/TSO super-packet size (and GRO's 64 KB limit)
  std::string default_qdisc = "pfifo_fast";  // net.core.default_qdisc (each TX queue's child of mq)

  /// Payload of a full TSO/GSO super-packet: tcp_xmit_size_goal() (net/ipv4/tcp.c v6.6) rounds the
  /// GSO size down to whole MSS segments, at least one.
  std::int64_t max_train_bytes() const { return std::max<std::int64_t>(1, tso_max_bytes / mss) * mss; }
  /// Payload of the next super-packet of a send with `left` bytes to go. Up to one MSS there is
  /// nothing to split: no division (tcp_xmit_size_goal() too "tries hard to avoid divides").
  std::int64_t train_bytes(std::int64_t left) const { return left <= mss ? left : std::min(left, max_train_bytes()); }
  /// Wire segments of a super-packet of `bytes` (> 0) of payload: tcp_set_skb_tso_segs()
  /// (net/ipv4/tcp_output.c v6.6), 1 up to one MSS, else DIV_ROUND_UP(len, mss).
  std::int64_t segs_of(std::int64_t bytes) const { return bytes <= mss ? 1 : (bytes + mss - 1) / mss; }
  /// TSO super-packets of one send of `bytes` (at least one): the skbs tcp_sendmsg_locked() fills
  /// up to the size goal, i.e. the trains train_bytes() cuts, so a send is charged (tx_tso_ns) for
  /// exactly the super-packets nic_transmit() puts on the wire.
  /// No division up to one MSS (every request and response of tcp_rr_1B), as in train_bytes(),
  /// and one (max_train_bytes()'s) up to the size goal.
  std::int64_t tso_count(std::int64_t bytes) const {
    if (bytes <= mss) return 1;
    const std::int64_t goal = max_train_bytes();
    return bytes <= goal ? 1 : (bytes + goal - 1) / goal;
  }

  template <class V>
  static void fields(V& v) {
    v("dev_weight", &NetParams::dev_weight, "pkts", "Max packets one napi->poll() may process (weight)",
      Range{1, 4096});
    v("netdev_budget", &NetParams::netdev_budget, "pkts", "Packet budget of one net_rx_action() run", Range{1, 1e6});
    v("netdev_budget_usecs", &NetParams::netdev_budget_usecs, "us",
      "Time budget of one net_rx_action() run (converted to jiffies, as the kernel does); 0: the kernel's "
      "default for the scenario's HZ, 2 * USEC_PER_SEC / HZ (2 jiffies, a4837980fd9f, v5.7)",
      Range{0, 1e7});
    v("gro_normal_batch", &NetParams::gro_normal_batch, "skbs", "GRO output batch passed to netif_receive_skb_list",
      Range{1, 1024});
    v("netdev_max_backlog", &NetParams::netdev_max_backlog, "pkts", "Per-CPU RPS backlog limit", Range{1, 1e7});
    v("flow_limit_cpu_bitmap", &NetParams::flow_limit_cpu_bitmap, "cpulist",
      "CPUs whose backlog applies RPS flow limit (skb_flow_limit); \"\" = none (the kernel default)");
    v("flow_limit_table_len", &NetParams::flow_limit_table_len, "buckets",
      "Flow-limit hash buckets per CPU (a power of two)", Range{1, 1 << 20});
    v("busy_read", &NetParams::busy_read, "us", "Default SO_BUSY_POLL for socket reads (0 = off)", Range{0, 1e7});
    v("busy_poll", &NetParams::busy_poll, "us", "Busy-poll time for poll/select/epoll (0 = off)", Range{0, 1e7});
    v("somaxconn", &NetParams::somaxconn, "connections", "Cap on a listen() backlog (the accept queue's length)",
      Range{0, 2147483647});
    v("mss", &NetParams::mss, "bytes", "TCP maximum segment size", Range{64, 65000});
    v("tso_max_bytes", &NetParams::tso_max_bytes, "bytes", "TSO/GSO super-packet and GRO size limit",
      Range{1500, 262144});
    v("default_qdisc", &NetParams::default_qdisc, "",
      "net.core.default_qdisc: pfifo_fast (the kernel's default) sends each skb at once; fq holds each skb of a "
      "TCP flow until its departure time (EDT pacing at the flow's pacing rate)",
      Choices{"pfifo_fast", "fq"});
  }
  bool operator==(const NetParams&) const = default;
};

/// TCP sysctls and defaults (net/ipv4/tcp_ipv4.c tcp_sk_init(), include/net/tcp.h, v6.6).
struct TcpParams {
  std::int64_t init_cwnd = 10;                // TCP_INIT_CWND (RFC 6928)
  bool slow_start_after_idle = true;          // net.ipv4.tcp_slow_start_after_idle
  std::int64_t limit_output_bytes = 1048576;  // net.ipv4.tcp_limit_output_bytes (16 * 65536, v6.6)
  std::int64_t min_tso_segs = 2;              // net.ipv4.tcp_min_tso_segs
  std::int64_t tso_rtt_log = 9;               // net.ipv4.tcp_tso_rtt_log (v5.18)
  std::int64_t tso_win_divisor = 3;           // net.ipv4.tcp_tso_win_divisor
  std::int64_t pacing_ss_ratio = 200;         // net.ipv4.tcp_pacing_ss_ratio (%)
  std::int64_t pacing_ca_ratio = 120;         // net.ipv4.tcp_pacing_ca_ratio (%)
  std::int64_t reordering = 3;                // net.ipv4.tcp_reordering
  std::int64_t comp_sack_nr = 44;             // net.ipv4.tcp_comp_sack_nr
  std::int64_t comp_sack_delay_ns = 1000000;  // net.ipv4.tcp_comp_sack_delay_ns
  std::int64_t comp_sack_slack_ns = 100000;   // net.ipv4.tcp_comp_sack_slack_ns
  std::int64_t rto_min_ms = 200;              // TCP_RTO_MIN (the route's rto_min)
  std::int64_t rmem_default = 131072;         // net.ipv4.tcp_rmem[1]
  std::int64_t rmem_max = 6291456;            // net.ipv4.tcp_rmem[2]
  bool moderate_rcvbuf = true;                // net.ipv4.tcp_moderate_rcvbuf
  std::int64_t wmem_default = 16384;          // net.ipv4.tcp_wmem[1]
  std::int64_t wmem_max = 4194304;            // net.ipv4.tcp_wmem[2]
  bool hystart = true;                        // tcp_cubic module parameter hystart

  template <class V>
  static void fields(V& v) {
    v("init_cwnd", &TcpParams::init_cwnd, "segments", "Initial congestion window (TCP_INIT_CWND, route initcwnd)",
      Range{1, 1000});
    v("slow_start_after_idle", &TcpParams::slow_start_after_idle, "",
      "net.ipv4.tcp_slow_start_after_idle: a sender idle for an RTO restarts from the initial window "
      "(tcp_cwnd_restart)");
    v("limit_output_bytes", &TcpParams::limit_output_bytes, "bytes",
      "net.ipv4.tcp_limit_output_bytes: TCP Small Queues' cap on a flow's bytes in the qdisc and NIC (unpaced flows)",
      Range{1, 1e10});
    v("min_tso_segs", &TcpParams::min_tso_segs, "segments", "net.ipv4.tcp_min_tso_segs: smallest TSO autosize goal",
      Range{1, 255});
    v("tso_rtt_log", &TcpParams::tso_rtt_log, "", "net.ipv4.tcp_tso_rtt_log: TSO autosize bonus for small min_rtt",
      Range{0, 31});
    v("tso_win_divisor", &TcpParams::tso_win_divisor, "",
      "net.ipv4.tcp_tso_win_divisor: TSO deferral sends once 1/divisor of the window is available (0 = three MSS)",
      Range{0, 255});
    v("pacing_ss_ratio", &TcpParams::pacing_ss_ratio, "%", "net.ipv4.tcp_pacing_ss_ratio: pacing rate in slow start",
      Range{0, 1000});
    v("pacing_ca_ratio", &TcpParams::pacing_ca_ratio, "%",
      "net.ipv4.tcp_pacing_ca_ratio: pacing rate in congestion avoidance", Range{0, 1000});
    v("reordering", &TcpParams::reordering, "segments",
      "net.ipv4.tcp_reordering: SACKed segments that make RACK's reordering window zero", Range{1, 300});
    v("comp_sack_nr", &TcpParams::comp_sack_nr, "acks", "net.ipv4.tcp_comp_sack_nr: SACKs a receiver may compress",
      Range{0, 255});
    v("comp_sack_delay_ns", &TcpParams::comp_sack_delay_ns, "ns",
      "net.ipv4.tcp_comp_sack_delay_ns: longest SACK compression delay (5% of the RTT below it)", Range{0, 1e9});
    v("comp_sack_slack_ns", &TcpParams::comp_sack_slack_ns, "ns",
      "net.ipv4.tcp_comp_sack_slack_ns: the compressed-SACK hrtimer's slack (it fires at the end of its range)",
      Range{0, 1e9});
    v("rto_min_ms", &TcpParams::rto_min_ms, "ms", "TCP_RTO_MIN: the retransmission timeout's floor", Range{1, 120000});
    v("rmem_default", &TcpParams::rmem_default, "bytes",
      "net.ipv4.tcp_rmem[1]: a connection's first receive buffer; half of it is the window (tcp_adv_win_scale 1)",
      Range{4096, 1e10});
    v("rmem_max", &TcpParams::rmem_max, "bytes",
      "net.ipv4.tcp_rmem[2]: the receive buffer autotuning (tcp_rcv_space_adjust) grows to", Range{4096, 1e10});
    v("moderate_rcvbuf", &TcpParams::moderate_rcvbuf, "",
      "net.ipv4.tcp_moderate_rcvbuf: receive buffer autotuning (DRS) grows sk_rcvbuf to twice what the reader "
      "copies in a receiver-measured RTT");
    v("wmem_default", &TcpParams::wmem_default, "bytes",
      "net.ipv4.tcp_wmem[1]: a connection's first send buffer, before tcp_sndbuf_expand() sizes it for its cwnd",
      Range{4096, 1e10});
    v("wmem_max", &TcpParams::wmem_max, "bytes",
      "net.ipv4.tcp_wmem[2]: the send buffer autotuning (tcp_sndbuf_expand) grows to", Range{4096, 1e10});
    v("hystart", &TcpParams::hystart, "", "tcp_cubic hystart: leave slow start on an ACK train or a delay rise");
  }
  bool operator==(const TcpParams&) const = default;
};

struct KernelParams {
  std::int64_t hz = 1000;               // CONFIG_HZ
  std::string ksoftirqd_mode = "v6.5";  // "let ksoftirqd do its job" era switch (kernel-napi.md 2.7)
  bool irq_time_accounting = true;      // CONFIG_IRQ_TIME_ACCOUNTING
  bool idle_polling = true;             // idle task sets TIF_POLLING_NRFLAG (mwait/poll idle states)
  bool cache_model = true;              // cold-start surcharges (sim/kernel/cache.cpp)
  SchedParams sched;
  NetParams net;
  TcpParams tcp;

  template <class V>
  static void fields(V& v) {
    v("hz", &KernelParams::hz, "Hz", "CONFIG_HZ: tick rate; sets every jiffy-based limit",
      IntChoices{100, 250, 300, 1000});
    v("ksoftirqd_mode", &KernelParams::ksoftirqd_mode, "",
      "softirq hand-off: pre-4.9 (inline unless over budget), 4.9-6.4 (\"let ksoftirqd do its job\": no inline "
      "softirq while ksoftirqd is runnable), v6.5 (reverted); the two older modes also run net_rx_action() as "
      "before v6.4 (a NAPI scheduled during it waits for a softirq restart)",
      Choices{"pre-4.9", "4.9-6.4", "v6.5"});
    v("irq_time_accounting", &KernelParams::irq_time_accounting, "",
      "CONFIG_IRQ_TIME_ACCOUNTING: softirq time on top of a task is not charged to its vruntime");
    v("idle_polling", &KernelParams::idle_polling, "",
      "The idle loop polls its thread flags (TIF_POLLING_NRFLAG: intel_idle/ACPI FFH mwait states, idle=poll), so "
      "a wakeup, reschedule or RPS call to an idle CPU sends no IPI; false = HLT idle, where every one is an IPI");
    v("cache_model", &KernelParams::cache_model, "",
      "Per-CPU cache state: work whose working set another owner displaced from the core's private caches, or "
      "that moved to another core, LLC or node, pays a refill (costs.cache_refill_ns, cache_evict_ns, topology "
      "remote_llc_penalty_ns, remote_node_penalty_ns); false = every surcharge zero");
    v("sched", &KernelParams::sched, "", "Scheduler");
    v("net", &KernelParams::net, "", "Networking sysctls");
    v("tcp", &KernelParams::tcp, "",
      "TCP sysctls of the connections between two simulated Linux hosts (net.ipv4.tcp_*, tcp_cubic)");
  }
  bool operator==(const KernelParams&) const = default;
};

}  // namespace napisim
