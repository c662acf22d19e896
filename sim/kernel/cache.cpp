// napisim: what the work a CPU ran recently costs the next piece of work of another owner.
//
// The kernel does not model its caches; it only guesses at them: task_hot() (kernel/sched/fair.c
// v6.6) calls a task that ran within sysctl_sched_migration_cost "cache hot" and can_migrate_task()
// keeps it, and the load balancer's LLC and NUMA levels weigh moves across those boundaries. The
// costs those guesses stand for are charged here, and only here, so that the scheduler's own view
// stays the kernel's and the interference emerges from where work runs:
//
//   - An owner is a working set: a task (its user memory, stack and sockets), a NAPI instance (its
//     rings, page pool and skbs, wherever it is polled: softirq, its kthread, a kworker, a busy
//     poller), or a CPU's other softirq work. Hardirq handlers touch little and own nothing; their
//     time still counts as other owners' work.
//   - A core's private caches (L1, L2; shared by SMT siblings) hold the footprint of the owners that
//     ran there, displaced by other owners' work: a returning owner pays
//         cache_refill_ns * (1 - exp(-W / cache_evict_ns))
//     where W is the busy time of the core's CPUs since it last left it (random
//     replacement: a line survives k foreign fills of an N-line cache with probability
//     (1 - 1/N)^k ~ exp(-k/N)). Idle time displaces nothing.
//   - An owner that last ran on another core pays the whole refill, plus the topology's
//     remote_llc_penalty_ns (another LLC) or remote_node_penalty_ns x distance / 10 (another
//     node): a migration, or a NAPI polled by a CPU other than the last.
//   - A socket is not an owner but shared data: its fast-path lines (the lock, the queues, tcp_sock's
//     sequence state) are written by whoever handles it, NET_RX on the IRQ CPU and the application
//     in recvmsg()/sendmsg() and by tcp_wfree() on TX completion. Writing them on a core other than
//     the one that wrote them last moves them: sk_bounce_ns, whatever ran since (the lines are
//     modified in one core's cache until another asks for them). RFS and busy polling, which bring
//     the two ends onto one core, avoid it.
//   - A busy SMT sibling slows a CPU's work by topology smt_speed (cpu.cpp set_smt_busy()) and, as
//     its work counts in W, displaces the lines the two share.
//
// An owner leaves a CPU when the CPU goes idle, switches context or takes an interrupt, and enters
// it when its work starts there (arm_segment()), where the refill is added to that segment's work
// in its own CPU class. It is not scaled by how much work follows: most of a working set is code
// and fixed state (the driver, GRO, IP and TCP paths, the NAPI and ring state; the application's
// own loop), which one packet or one request walks as surely as sixty-four. kernel.cache_model
// false makes every surcharge zero.
#include <algorithm>
#include <cmath>

#include "sim/kernel/kernel.hpp"

namespace napisim {

Nanos Kernel::busy_ns(const Cpu& c) const {
  Nanos b = 0;
  for (int k = 0; k < kNumCpuClasses; ++k)
    if (k != static_cast<int>(CpuClass::kIdle)) b += c.time[static_cast<std::size_t>(k)];
  // The part update_exec_slow() has not accounted yet: from the end of any idle exit to now.
  if (c.acct_cls != CpuClass::kIdle) {
    const Nanos now = host_.now();
    const Nanos from = std::max(c.last_update, std::min(now, c.seg_start));
    if (now > from) b += now - from;
  }
  return b;
}

Nanos Kernel::core_busy_ns(const Cpu& c) const {
  const int sib = topo_.sibling_of(c.id);
  return busy_ns(c) + (sib >= 0 ? busy_ns(cpu(sib)) : 0);
}

void Kernel::cache_leave(Cpu& c, Nanos core_busy) {
  CacheOwner& o = *c.cache_owner;
  o.cpu = c.id;
  o.mark = core_busy;
  c.cache_owner = nullptr;
}

void Kernel::cache_enter(Cpu& c, Slot& s) {
  const Nanos core_busy = core_busy_ns(c);
  if (c.cache_owner) cache_leave(c, core_busy);
  if (!s.owner) return;  // a hardirq handler
  CacheOwner& o = *s.owner;
  Nanos refill = 0;
  if (o.cpu < 0) {
    refill = costs_.cache_refill_ns;  // never ran: nothing of it is cached anywhere
  } else if (topo_.same_core(o.cpu, c.id)) {
    const double displaced =
        static_cast<double>(core_busy - o.mark) / static_cast<double>(std::max<Nanos>(1, costs_.cache_evict_ns));
    refill = static_cast<Nanos>(static_cast<double>(costs_.cache_refill_ns) * -std::expm1(-displaced) + 0.5);
  } else {
    refill = costs_.cache_refill_ns + topo_.handoff_penalty(o.cpu, c.id);
  }
  c.cache_owner = &o;
  s.remaining += refill;
}

Nanos Kernel::sk_touch(Socket& s, int cpu) {
  const int last = s.sk_cpu;
  s.sk_cpu = cpu;
  if (!kp_.cache_model || last < 0 || topo_.same_core(last, cpu)) return 0;
  return costs_.sk_bounce_ns;
}

}  // namespace napisim
