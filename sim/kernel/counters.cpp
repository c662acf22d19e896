// napisim: the event counters a host keeps (see counters.hpp).
#include "sim/kernel/counters.hpp"

#include "sim/kernel/kernel.hpp"

namespace napisim {

const std::array<CounterDef, kNumCounters>& counter_defs() {
  using S = CounterScope;
  static const std::array<CounterDef, kNumCounters> defs = {{
      {Counter::kIrqs, "irqs", S::kCpu, "/proc/interrupts (the CPU's column)"},
      {Counter::kContextSwitches, "context_switches", S::kCpu, "/proc/stat ctxt"},
      {Counter::kTimeSqueeze, "time_squeeze", S::kCpu, "/proc/net/softnet_stat time_squeeze"},
      {Counter::kProcessed, "processed", S::kCpu, "/proc/net/softnet_stat processed"},
      {Counter::kKsoftirqdWakeups, "ksoftirqd_wakeups", S::kCpu, "wakeup_softirqd() waking ksoftirqd/N"},
      {Counter::kBacklogDrops, "backlog_drops", S::kCpu, "/proc/net/softnet_stat dropped"},
      {Counter::kReceivedRps, "received_rps", S::kCpu, "/proc/net/softnet_stat received_rps"},
      {Counter::kNicIrqs, "nic_irqs", S::kChannel, "/proc/interrupts (the queue's vector)"},
      {Counter::kRxPackets, "rx_packets", S::kChannel, "ethtool -S rx_packets"},
      {Counter::kTxPackets, "tx_packets", S::kChannel, "ethtool -S tx_packets"},
      {Counter::kRingDrops, "ring_drops", S::kChannel, "ethtool -S rx_out_of_buffer"},
      {Counter::kRxBytes, "rx_bytes", S::kChannel, "ethtool -S rx_bytes (payload)"},
      {Counter::kTxBytes, "tx_bytes", S::kChannel, "ethtool -S tx_bytes (payload)"},
      {Counter::kNapiPolls, "napi_polls", S::kChannel, "napi_poll tracepoint"},
      {Counter::kNapiFullPolls, "napi_full_polls", S::kChannel, "napi_poll tracepoint, work == budget"},
      {Counter::kNvcsw, "nvcsw", S::kTask, "/proc/<pid>/status voluntary_ctxt_switches"},
      {Counter::kNivcsw, "nivcsw", S::kTask, "/proc/<pid>/status nonvoluntary_ctxt_switches"},
      {Counter::kWakeups, "wakeups", S::kTask, "sched_wakeup tracepoint"},
      {Counter::kMigrations, "migrations", S::kTask, "sched_migrate_task tracepoint"},
      {Counter::kThreadWakeups, "thread_wakeups", S::kTask, "/proc/<pid>/sched nr_wakeups (user tasks)"},
      {Counter::kThreadWakeupsLocal, "thread_wakeups_local", S::kTask, "/proc/<pid>/sched nr_wakeups_local"},
      {Counter::kThreadWakeupsMigrate, "thread_wakeups_migrate", S::kTask, "/proc/<pid>/sched nr_wakeups_migrate"},
      {Counter::kThreadWakeupsSync, "thread_wakeups_sync", S::kTask, "/proc/<pid>/sched nr_wakeups_sync"},
      {Counter::kThreadWakeupsAffineAttempts, "thread_wakeups_affine_attempts", S::kTask,
       "/proc/<pid>/sched nr_wakeups_affine_attempts"},
      {Counter::kThreadWakeupsAffine, "thread_wakeups_affine", S::kTask, "/proc/<pid>/sched nr_wakeups_affine"},
      {Counter::kThreadWakeupsOntoSoftirq, "thread_wakeups_onto_softirq", S::kTask,
       "napisim's own (placement onto a CPU running softirq or a NAPI kthread)"},
      {Counter::kTcpRetransSegs, "tcp_retrans_segs", S::kHost, "netstat -s RetransSegs"},
      {Counter::kTcpFastRetrans, "tcp_fast_retrans", S::kHost, "netstat -s TcpExt TCPFastRetrans"},
      {Counter::kTcpLossProbes, "tcp_loss_probes", S::kHost, "netstat -s TcpExt TCPLossProbes"},
      {Counter::kTcpTimeouts, "tcp_timeouts", S::kHost, "netstat -s TcpExt TCPTimeouts"},
      {Counter::kTcpRecoveries, "tcp_recoveries", S::kHost, "netstat -s TcpExt TCPSackRecovery"},
      {Counter::kTcpDelayedAcks, "tcp_delayed_acks", S::kHost, "netstat -s TcpExt DelayedACKs"},
      {Counter::kTcpTsqThrottled, "tcp_tsq_throttled", S::kHost, "tcp_small_queue_check() setting TSQ_THROTTLED"},
      {Counter::kSwitchDrops, "switch_drops", S::kHost, "the switch's egress port discards (tail drop)"},
      {Counter::kEvents, "events", S::kHost, "none: napisim's events handled by the host's kernel model"},
  }};
  return defs;
}

namespace {
void add(Snapshot& s, Counter c, std::uint64_t v) {
  s.total[static_cast<std::size_t>(c)] += v;
}
}  // namespace

void read_cpu_counters(Snapshot& s, const Cpu& c) {
  std::array<std::uint64_t, kNumCpuCounters> row{};
  auto set = [&](Counter k, std::uint64_t v) {
    row[static_cast<std::size_t>(k)] = v;
    add(s, k, v);
  };
  set(Counter::kIrqs, c.irqs);
  set(Counter::kContextSwitches, c.ctx_switches);
  set(Counter::kTimeSqueeze, c.sd.time_squeeze);
  set(Counter::kProcessed, c.sd.processed);
  set(Counter::kKsoftirqdWakeups, c.ksoftirqd_wakeups);
  set(Counter::kBacklogDrops, c.sd.dropped);
  set(Counter::kReceivedRps, c.sd.received_rps);
  s.per_cpu.push_back(row);
}

void read_channel_counters(Snapshot& s, const Channel& ch) {
  add(s, Counter::kNicIrqs, ch.irqs);
  add(s, Counter::kRxPackets, ch.rx_pkts);
  add(s, Counter::kTxPackets, ch.tx_pkts);
  add(s, Counter::kRingDrops, ch.drops);
  add(s, Counter::kRxBytes, ch.rx_bytes);
  add(s, Counter::kTxBytes, ch.tx_bytes);
  add(s, Counter::kNapiPolls, ch.napi.polls);
  add(s, Counter::kNapiFullPolls, ch.napi.full_polls);
}

void read_task_counters(Snapshot& s, const Task& t) {
  add(s, Counter::kNvcsw, t.nvcsw);
  add(s, Counter::kNivcsw, t.nivcsw);
  add(s, Counter::kWakeups, t.wakeups);
  add(s, Counter::kMigrations, t.migrations);
  if (t.kind != TaskKind::kUser) return;
  add(s, Counter::kThreadWakeups, t.wakeups);
  add(s, Counter::kThreadWakeupsLocal, t.wakeups_local);
  add(s, Counter::kThreadWakeupsMigrate, t.wakeups_migrate);
  add(s, Counter::kThreadWakeupsSync, t.wakeups_sync);
  add(s, Counter::kThreadWakeupsAffineAttempts, t.wakee.nr_wakeups_affine_attempts);
  add(s, Counter::kThreadWakeupsAffine, t.wakee.nr_wakeups_affine);
  add(s, Counter::kThreadWakeupsOntoSoftirq, t.wakeups_onto_softirq);
}

void read_host_counters(Snapshot& s, const TcpStats& tcp, std::uint64_t switch_drops, std::uint64_t events) {
  add(s, Counter::kTcpRetransSegs, tcp.retrans_segs);
  add(s, Counter::kTcpFastRetrans, tcp.fast_retrans);
  add(s, Counter::kTcpLossProbes, tcp.loss_probes);
  add(s, Counter::kTcpTimeouts, tcp.timeouts);
  add(s, Counter::kTcpRecoveries, tcp.recoveries);
  add(s, Counter::kTcpDelayedAcks, tcp.delayed_acks);
  add(s, Counter::kTcpTsqThrottled, tcp.tsq_throttled);
  add(s, Counter::kSwitchDrops, switch_drops);
  add(s, Counter::kEvents, events);
}

// Every counter and the CPU time by class, as of now: the CPUs' accounting brought up to date
// first, and arrivals that went without an event taken into the rings (rx_sync).
Kernel::Snapshot Kernel::snapshot() {
  Snapshot s;
  s.t = host_.now();
  for (int i = 0; i < nr_cpus(); ++i) {
    Cpu& c = cpu(i);
    update_exec(c);
    psi_update(c);
    s.cpu_time.push_back(c.time);
    s.psi_some.push_back(c.psi_some_ns);
    s.psi_nonidle.push_back(c.psi_nonidle_ns);
    read_cpu_counters(s, c);
  }
  std::uint64_t switch_drops = 0;
  for (auto& nic : nics_) {
    switch_drops += nic->switch_drops;
    for (auto& ch : nic->channels) {
      rx_sync(*ch);
      read_channel_counters(s, *ch);
    }
  }
  for (auto& t : tasks_)
    read_task_counters(s, *t);
  read_host_counters(s, tcp_stats_, switch_drops, events_);
  return s;
}

}  // namespace napisim
