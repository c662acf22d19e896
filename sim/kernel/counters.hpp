// napisim: the event counters a host keeps, declared once.
//
// Each counter is read where the kernel keeps it (a CPU, a NIC channel's NAPI, a task) and named
// after the /proc or sysfs figure it mirrors:
//   /proc/interrupts                    per-CPU interrupts, per-queue NIC interrupts
//   /proc/net/softnet_stat              processed, dropped (backlog), time_squeeze, received_rps
//   /proc/<pid>/status, /proc/stat      voluntary/involuntary context switches (nvcsw, nivcsw)
//   /sys/kernel/tracing sched events    wakeups, migrations (sched_wakeup, sched_migrate_task)
//   ethtool -S                          RX/TX packets and bytes, ring drops, NAPI polls
//   netstat -s (TcpExt)                 the kernel's TCP: retransmissions, loss probes, RTOs, ...
// Kernel::snapshot() reads every counter into a Snapshot; results (sim/scenario/host_results.cpp)
// report the difference of two snapshots.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "sim/core/time.hpp"
#include "sim/kernel/task.hpp"

namespace napisim {

struct Cpu;
struct Channel;

/// Where a counter lives: one per CPU (results also report each CPU's), one per NIC channel, one
/// per task; every counter also has a host-wide total.
enum class CounterScope : std::uint8_t { kCpu, kChannel, kTask, kHost };

enum class Counter : std::uint8_t {
  // per CPU
  kIrqs,              // every hard interrupt: NIC, timer tick, IPI (/proc/interrupts, the CPU's column)
  kContextSwitches,   // context switches on the CPU (the "ctxt" of /proc/stat)
  kTimeSqueeze,       // net_rx_action() stopped with work left (softnet_stat column 3)
  kProcessed,         // packets taken by this CPU's NET_RX (softnet_stat column 1)
  kKsoftirqdWakeups,  // wakeup_softirqd() that woke ksoftirqd/N
  kBacklogDrops,      // enqueue_to_backlog() drops: netdev_max_backlog, flow_limit (softnet_stat column 2)
  kReceivedRps,       // RPS IPIs received (softnet_stat column 10)
  // per NIC channel
  kNicIrqs,        // the channel's completion interrupts
  kRxPackets,      // segments that entered the RX ring
  kTxPackets,      // segments transmitted
  kRingDrops,      // segments dropped on a full RX ring (rx_out_of_buffer)
  kRxBytes,        // payload bytes received
  kTxBytes,        // payload bytes transmitted
  kNapiPolls,      // napi_poll() calls of the channel's NAPI
  kNapiFullPolls,  // polls that used their whole weight
  // per task
  kNvcsw,       // voluntary context switches (nvcsw)
  kNivcsw,      // involuntary context switches (nivcsw)
  kWakeups,     // try_to_wake_up() of the task
  kMigrations,  // set_task_cpu() to another CPU
  // per task, summed over the workload's threads (user tasks) only: /proc/<pid>/sched schedstats
  kThreadWakeups,                // nr_wakeups
  kThreadWakeupsLocal,           // nr_wakeups_local: onto the waking CPU (the rest: nr_wakeups_remote)
  kThreadWakeupsMigrate,         // nr_wakeups_migrate: onto another CPU than the task's last
  kThreadWakeupsSync,            // nr_wakeups_sync: WF_SYNC
  kThreadWakeupsAffineAttempts,  // nr_wakeups_affine_attempts: wake_affine() calls
  kThreadWakeupsAffine,          // nr_wakeups_affine: of them, pulls to the waking CPU
  kThreadWakeupsOntoSoftirq,     // napisim's own: onto a CPU running softirq or a NAPI kthread
  // per host: the kernel's TCP (sim/kernel/tcp.hpp) and the switch ports feeding its NICs
  kTcpRetransSegs,   // segments retransmitted (RetransSegs)
  kTcpFastRetrans,   // of them, by fast recovery (TCPFastRetrans)
  kTcpLossProbes,    // tail loss probes sent (TCPLossProbes)
  kTcpTimeouts,      // retransmission timeouts (TCPTimeouts)
  kTcpRecoveries,    // fast recoveries started (TCPSackRecovery)
  kTcpDelayedAcks,   // ACKs sent by the delayed-ACK timer (DelayedACKs)
  kTcpTsqThrottled,  // flows TCP Small Queues stopped
  kSwitchDrops,      // segments the switch's egress buffer dropped on their way to this host
  kEvents,           // napisim's own: the events this host's kernel model handled
  kCount
};
inline constexpr std::size_t kNumCounters = static_cast<std::size_t>(Counter::kCount);
/// The per-CPU counters come first: Counter values below this are CounterScope::kCpu.
inline constexpr std::size_t kNumCpuCounters = static_cast<std::size_t>(Counter::kNicIrqs);

struct CounterDef {
  Counter id;
  const char* name;
  CounterScope scope;
  const char* source;  // the /proc, sysfs or tracepoint figure it mirrors
};
/// Every counter, in Counter order.
const std::array<CounterDef, kNumCounters>& counter_defs();

/// One read of every counter (Kernel::snapshot()): CPU time by class and PSI time per CPU, the
/// per-CPU counters per CPU, and every counter's host-wide total.
struct Snapshot {
  Nanos t = 0;
  std::vector<std::array<Nanos, kNumCpuClasses>> cpu_time;
  std::vector<Nanos> psi_some, psi_nonidle;
  std::vector<std::array<std::uint64_t, kNumCpuCounters>> per_cpu;
  std::array<std::uint64_t, kNumCounters> total{};

  std::uint64_t operator[](Counter c) const { return total[static_cast<std::size_t>(c)]; }
  std::uint64_t cpu(int cpu, Counter c) const {
    return per_cpu[static_cast<std::size_t>(cpu)][static_cast<std::size_t>(c)];
  }
};

/// Adds `cpu`'s per-CPU counters to s (a new per_cpu row and the totals).
void read_cpu_counters(Snapshot& s, const Cpu& cpu);
/// Adds a NIC channel's counters to s's totals.
void read_channel_counters(Snapshot& s, const Channel& ch);
/// Adds a task's counters to s's totals.
void read_task_counters(Snapshot& s, const Task& t);
struct TcpStats;
/// Adds the host's TCP counters, `switch_drops` of its NICs and the `events` its kernel model
/// handled, to s's totals.
void read_host_counters(Snapshot& s, const TcpStats& tcp, std::uint64_t switch_drops, std::uint64_t events);

}  // namespace napisim
