// napisim: CFS wakeup placement, after kernel/sched/fair.c and kernel/sched/core.c of Linux v6.6.
// See wake.hpp for the function-by-function mapping and the approximations.
#include "sim/kernel/wake.hpp"

#include <algorithm>
#include <climits>
#include <utility>
#include <vector>

#include "sim/core/error.hpp"

namespace napisim {

namespace {

/// available_idle_cpu(cpu) || sched_idle_cpu(cpu): the test select_idle_sibling() and its
/// helpers apply to every candidate (__select_idle_cpu without core scheduling cookies).
bool idle_or_sched_idle(const WakeView& view, int cpu) {
  return view.idle_cpu(cpu) || view.sched_idle_cpu(cpu);
}

const CpuMask& allowed_of(const Topology& topo, const WakeeInfo& p) {
  return p.allowed != nullptr ? *p.allowed : topo.all_cpus();
}

bool valid_cpu(const Topology& topo, int cpu) {
  return cpu >= 0 && cpu < topo.nr_cpus();
}

/// Does a sched domain of this_cpu with SD_WAKE_AFFINE span prev_cpu? All of SMT, MC and PKG do;
/// a NUMA level keeps SD_WAKE_AFFINE only if its distance is <= node_reclaim_distance
/// (sd_init(), kernel/sched/topology.c, v6.6). The lowest NUMA level spanning prev's node is the
/// one at exactly node_distance(this, prev).
bool wake_affine_domain_spans(const Topology& topo, int this_cpu, int prev_cpu) {
  const int a = topo.node_of(this_cpu), b = topo.node_of(prev_cpu);
  return a == b || topo.node_distance(a, b) <= kNodeReclaimDistance;
}

/// for_each_cpu_wrap(cpu, cpus, start), stopping when `stop(cpu)` returns true: ascending from
/// start, then from the first cpu up to start. Each step re-reads `cpus`, so cpus a step drops
/// (select_idle_core() drops a busy core's threads) are skipped. Returns whether a step stopped it.
template <class Stop>
bool for_each_cpu_wrap(const CpuMask& cpus, int start, Stop stop) {
  for (int cpu = cpus.next(start - 1); cpu != -1; cpu = cpus.next(cpu))
    if (stop(cpu)) return true;
  for (int cpu = cpus.first(); cpu != -1 && cpu < start; cpu = cpus.next(cpu))
    if (stop(cpu)) return true;
  return false;
}

}  // namespace

// --- wake_wide ------------------------------------------------------------------------------

// record_wakee(), kernel/sched/fair.c v6.6.
void record_wakee(WakeeInfo& waker, const WakeeInfo& wakee, Nanos now) {
  // "Only decay a single time": time_after(jiffies, decay_ts + HZ).
  if (now - waker.wakee_flip_decay_ts > kNsPerSec) {
    waker.wakee_flips >>= 1;
    waker.wakee_flip_decay_ts = now;
  }
  if (waker.last_wakee != static_cast<const void*>(&wakee)) {
    waker.last_wakee = &wakee;
    ++waker.wakee_flips;
  }
}

// wake_wide(), kernel/sched/fair.c v6.6.
bool wake_wide(const Topology& topo, const WakeeInfo& wakee, const WakeeInfo* waker, int this_cpu) {
  (void)this_cpu;  // sd_llc_size of this_cpu: uniform in napisim
  unsigned master = waker != nullptr ? waker->wakee_flips : 0U;
  unsigned slave = wakee.wakee_flips;
  const auto factor = static_cast<unsigned>(topo.llc_size());
  if (master < slave) std::swap(master, slave);
  return !(slave < factor || master < slave * factor);
}

// --- wake_affine ----------------------------------------------------------------------------

// wake_affine_idle(), kernel/sched/fair.c v6.6.
int wake_affine_idle(const Topology& topo, const WakeView& view, int this_cpu, int prev_cpu, bool sync) {
  // this_cpu idle => the wakeup comes from interrupt context; pull only within the LLC so an
  // interrupt-heavy workload cannot drag every task to the IRQ's node.
  if (view.idle_cpu(this_cpu) && topo.share_cache(this_cpu, prev_cpu))
    return view.idle_cpu(prev_cpu) ? prev_cpu : this_cpu;
  if (sync && view.nr_running(this_cpu) == 1) return this_cpu;
  if (view.idle_cpu(prev_cpu)) return prev_cpu;
  return -1;
}

// wake_affine_weight(), kernel/sched/fair.c v6.6, with WA_BIAS (default on).
int wake_affine_weight(const WakeView& view, int imbalance_pct, std::int64_t task_load, std::int64_t waker_load,
                       int this_cpu, int prev_cpu, bool sync) {
  std::int64_t this_eff_load = view.cpu_load(this_cpu);
  if (sync) {
    if (waker_load > this_eff_load) return this_cpu;
    this_eff_load -= waker_load;
  }
  this_eff_load += task_load;
  this_eff_load *= 100;
  this_eff_load *= view.capacity(prev_cpu);

  std::int64_t prev_eff_load = view.cpu_load(prev_cpu);
  prev_eff_load -= task_load;
  prev_eff_load *= 100 + (imbalance_pct - 100) / 2;
  prev_eff_load *= view.capacity(this_cpu);
  // With sync, a tie lets select_idle_sibling() consider stacking the wakee on the waker.
  if (sync) prev_eff_load += 1;

  return this_eff_load < prev_eff_load ? this_cpu : -1;
}

// wake_affine(), kernel/sched/fair.c v6.6 (WA_IDLE and WA_WEIGHT on).
int wake_affine(const Topology& topo, const WakeView& view, const WakeParams& params, const WakeeInfo& wakee,
                const WakeeInfo* waker, int this_cpu, int prev_cpu, bool sync) {
  int target = wake_affine_idle(topo, view, this_cpu, prev_cpu, sync);
  if (target == -1) {
    // sd is the lowest domain spanning both cpus: SMT if they are siblings.
    const int pct =
        topo.smt_active() && topo.same_core(this_cpu, prev_cpu) ? params.smt_imbalance_pct : params.imbalance_pct;
    // task_h_load(current): a wakeup from irq context with no task record counts as 0.
    const std::int64_t waker_load = waker != nullptr ? waker->weight : 0;
    target = wake_affine_weight(view, pct, wakee.weight, waker_load, this_cpu, prev_cpu, sync);
  }
  return target == this_cpu ? this_cpu : prev_cpu;
}

// --- select_idle_sibling --------------------------------------------------------------------

// test_idle_cores() (exact rather than the sd_llc_shared->has_idle_cores hint).
bool test_idle_cores(const Topology& topo, const WakeView& view, int cpu) {
  if (!topo.smt_active()) return false;
  for (int c : topo.cpus_of_llc(topo.llc_of(cpu))) {
    if (c >= topo.nr_cores()) break;  // thread-0 cpus come first; one check per core
    bool all_idle = true;
    const CpuMask& smt = topo.smt_mask(c);
    for (int t = smt.first(); t != -1; t = smt.next(t)) {
      if (!view.idle_cpu(t)) {
        all_idle = false;
        break;
      }
    }
    if (all_idle) return true;
  }
  return false;
}

// update_idle_cpu_scan(), kernel/sched/fair.c v6.6 (the SIS_UTIL hint), evaluated on demand.
int nr_idle_scan(const Topology& topo, const WakeView& view, int imbalance_pct, int llc) {
  const std::vector<int>& cpus = topo.cpus_of_llc(llc);
  const auto llc_weight = static_cast<std::int64_t>(cpus.size());
  // sum_util = sum of group_util over the LLC domain's groups = sum of cpu_util_cfs(), each of
  // which is capped at the cpu's capacity.
  std::int64_t sum_util = 0;
  for (int c : cpus)
    sum_util += std::clamp<std::int64_t>(view.cpu_util(c), 0, view.capacity(c));
  // x = sum_util / llc_weight, the per-cpu average in capacity units.
  const std::int64_t x = sum_util / llc_weight;
  // y = SCHED_CAPACITY_SCALE - x^2 * pct^2 / (10000 * SCHED_CAPACITY_SCALE), floored at 0.
  const std::int64_t pct = imbalance_pct;
  std::int64_t tmp = x * x * pct * pct / (10000 * kSchedCapacityScale);
  tmp = std::min(tmp, kSchedCapacityScale);
  const std::int64_t y = kSchedCapacityScale - tmp;
  // nr_scan = llc_weight * y / SCHED_CAPACITY_SCALE.
  return static_cast<int>(y * llc_weight / kSchedCapacityScale);
}

int WakeView::llc_nr_idle_scan(const Topology& topo, int imbalance_pct, int llc) const {
  return nr_idle_scan(topo, *this, imbalance_pct, llc);
}

// select_idle_core(), kernel/sched/fair.c v6.6 (CONFIG_SCHED_SMT).
int select_idle_core(const Topology& topo, const WakeView& view, int core_cpu, CpuMask& cpus, int& idle_cpu) {
  bool idle = true;
  const CpuMask& smt = topo.smt_mask(core_cpu);
  for (int cpu = smt.first(); cpu != -1; cpu = smt.next(cpu)) {
    if (!view.idle_cpu(cpu)) {
      idle = false;
      if (idle_cpu == -1) {
        if (view.sched_idle_cpu(cpu) && cpus.test(cpu)) {
          idle_cpu = cpu;
          break;
        }
        continue;
      }
      break;
    }
    if (idle_cpu == -1 && cpus.test(cpu)) idle_cpu = cpu;
  }
  if (idle) return core_cpu;
  cpus.and_not(smt);
  return -1;
}

// select_idle_smt(), kernel/sched/fair.c v6.6.
int select_idle_smt(const Topology& topo, const WakeView& view, const CpuMask& allowed, int target) {
  const CpuMask& smt = topo.smt_mask(target);
  for (int cpu = smt.first(); cpu != -1; cpu = smt.next(cpu)) {
    if (cpu == target || !allowed.test(cpu)) continue;
    if (!topo.share_cache(cpu, target)) continue;  // sibling outside target's sd_llc (never here)
    if (idle_or_sched_idle(view, cpu)) return cpu;
  }
  return -1;
}

// select_idle_cpu(), kernel/sched/fair.c v6.6 (SIS_UTIL on, SIS_PROP off, no clusters).
int select_idle_cpu(const Topology& topo, const WakeView& view, const WakeParams& params, const CpuMask& allowed,
                    bool has_idle_core, int target) {
  const int llc = topo.llc_of(target);
  CpuMask cpus = topo.llc_mask(llc) & allowed;
  int nr = INT_MAX;
  if (params.sis_util) {
    // "because !--nr is the condition to stop scan"
    nr = view.llc_nr_idle_scan(topo, params.imbalance_pct, llc) + 1;
    // "overloaded LLC is unlikely to have idle cpu/core"
    if (nr == 1) return -1;
  }

  int idle_cpu = -1;
  // One step of the scan; returns true when the scan is over (the result is in `result`).
  int result = -1;
  auto step = [&](int cpu) -> bool {
    if (has_idle_core) {
      const int i = select_idle_core(topo, view, cpu, cpus, idle_cpu);
      if (i != -1) {
        result = i;
        return true;
      }
      return false;
    }
    if (--nr <= 0) {
      result = -1;
      return true;
    }
    if (idle_or_sched_idle(view, cpu)) {
      result = cpu;
      return true;
    }
    return false;
  };

  // for_each_cpu_wrap(cpu, cpus, target + 1).
  if (for_each_cpu_wrap(cpus, target + 1 < topo.nr_cpus() ? target + 1 : 0, step)) return result;

  // has_idle_core and no idle core found: the kernel clears the hint (set_idle_cores(false))
  // and returns the first idle thread seen. Without has_idle_core, nothing was idle.
  return has_idle_core ? idle_cpu : -1;
}

Nanos WakeView::avg_idle(int cpu) const {
  (void)cpu;
  return 2 * kSchedMigrationCostNs;
}

namespace {

// select_idle_core(), kernel/sched/fair.c v5.10: the first fully idle core met walking target's
// LLC from target, each busy core's threads dropped from the walk (v6.6's per-core test; v5.10
// has no fallback to an idle thread).
int select_idle_core_v5(const Topology& topo, const WakeView& view, const CpuMask& allowed, int target) {
  CpuMask cpus = topo.llc_mask(topo.llc_of(target)) & allowed;
  int idle_thread = -1;  // unused: v6.6's fallback
  int core = -1;
  for_each_cpu_wrap(cpus, target, [&](int cpu) {
    core = select_idle_core(topo, view, cpu, cpus, idle_thread);
    return core != -1;
  });
  return core;
}

// select_idle_cpu(), kernel/sched/fair.c v5.10: SIS_PROP bounds the walk by how long this_cpu
// stays idle on average against what a scan has cost (both per the waker's cpu and LLC).
int select_idle_cpu_v5(const Topology& topo, const WakeView& view, const WakeParams& params, const CpuMask& allowed,
                       int target, int this_cpu) {
  const int llc = topo.llc_of(target);
  const int this_llc = topo.llc_of(this_cpu);
  const CpuMask cpus = topo.llc_mask(llc) & allowed;
  std::int64_t nr = INT_MAX;
  if (params.sis_prop) {
    // "Due to large variance we need a large fuzz factor; hackbench in particularly is
    // sensitive here."
    const std::int64_t avg_idle = view.avg_idle(this_cpu) / 512;
    const std::int64_t avg_cost = view.llc_avg_scan_cost(this_llc) + 1;
    const std::int64_t span_avg = static_cast<std::int64_t>(topo.cpus_of_llc(llc).size()) * avg_idle;
    nr = span_avg > 4 * avg_cost ? span_avg / avg_cost : 4;
  }
  int scanned = 0;
  int found = -1;
  // for_each_cpu_wrap(cpu, cpus, target): from target itself.
  const bool stopped = for_each_cpu_wrap(cpus, target, [&](int cpu) {
    if (!--nr) return true;  // budget spent
    ++scanned;
    if (!idle_or_sched_idle(view, cpu)) return false;
    found = cpu;
    return true;
  });
  if (stopped && found == -1) return -1;  // "return -1" before update_avg(): avg_scan_cost kept
  view.record_scan(this_llc, scanned);
  return found;
}

}  // namespace

// select_idle_sibling(), kernel/sched/fair.c v6.6 (symmetric capacity, no clusters).
int select_idle_sibling(const Topology& topo, const WakeView& view, const WakeParams& params, WakeeInfo& wakee,
                        int prev, int target, int this_cpu, bool waker_is_per_cpu_kthread) {
  NAPISIM_ASSERT(valid_cpu(topo, prev) && valid_cpu(topo, target) && valid_cpu(topo, this_cpu), "cpu out of range");
  const CpuMask& allowed = allowed_of(topo, wakee);

  if (idle_or_sched_idle(view, target)) return target;

  // "If the previous CPU is cache affine and idle, don't be stupid."
  if (prev != target && topo.share_cache(prev, target) && idle_or_sched_idle(view, prev)) return prev;

  // A per-cpu kthread waking the task whose previous cpu it runs on: treat as a sync wakeup and
  // stack (e.g. I/O completion). In task context only since v5.17; the caller decides.
  if (waker_is_per_cpu_kthread && prev == this_cpu && view.nr_running(this_cpu) <= 1) return prev;

  // A recently used cpu as a potential idle candidate.
  // v6.6 replaces it with prev on every wakeup; v5.10 only when it is taken ("a potential
  // candidate for the next wake"), and sets the waker's to the waking cpu (select_task_rq_fair).
  const int recent_used_cpu = wakee.recent_used_cpu;
  if (!params.v5_10) wakee.recent_used_cpu = prev;
  if (valid_cpu(topo, recent_used_cpu) && recent_used_cpu != prev && recent_used_cpu != target &&
      topo.share_cache(recent_used_cpu, target) && idle_or_sched_idle(view, recent_used_cpu) &&
      allowed.test(recent_used_cpu)) {
    wakee.recent_used_cpu = prev;
    return recent_used_cpu;
  }

  if (params.v5_10) {
    // v5.10: no prev-sibling step; an idle core anywhere in the LLC, then SIS_PROP's walk from
    // target, then target's own siblings.
    int i = topo.smt_active() && test_idle_cores(topo, view, target) ? select_idle_core_v5(topo, view, allowed, target)
                                                                     : -1;
    if (i == -1) i = select_idle_cpu_v5(topo, view, params, allowed, target, this_cpu);
    // select_idle_smt(target) also tests target itself, busy here (tested first).
    if (i == -1) i = select_idle_smt(topo, view, allowed, target);
    return i != -1 ? i : target;
  }

  bool has_idle_core = false;
  if (topo.smt_active()) {
    has_idle_core = test_idle_cores(topo, view, target);
    if (!has_idle_core && topo.share_cache(prev, target)) {
      const int i = select_idle_smt(topo, view, allowed, prev);
      if (i != -1) return i;
    }
  }

  const int i = select_idle_cpu(topo, view, params, allowed, has_idle_core, target);
  if (i != -1) return i;
  return target;
}

// select_fallback_rq(), kernel/sched/core.c v6.6: the node pass and the cpus_ptr pass (the
// cpuset / cpu_possible_mask passes cannot be reached with a non-empty mask and no hotplug).
int select_fallback_rq(const Topology& topo, const CpuMask& allowed, int cpu) {
  NAPISIM_ASSERT(allowed.any(), "empty cpus_allowed mask");
  const CpuMask& node = topo.node_mask(topo.node_of(cpu));
  for (int c = node.first(); c != -1; c = node.next(c))
    if (allowed.test(c)) return c;
  return allowed.first();
}

// select_task_rq() (core.c) + select_task_rq_fair() (fair.c), v6.6, for WF_TTWU.
int select_task_rq_fair(const Topology& topo, const WakeView& view, const WakeParams& params, WakeeInfo& wakee,
                        int this_cpu, WakeeInfo* waker, bool sync, bool waker_is_per_cpu_kthread, Nanos now) {
  const CpuMask& allowed = allowed_of(topo, wakee);
  NAPISIM_ASSERT(allowed.nr_cpus() == topo.nr_cpus(), "cpus_allowed mask has the wrong size");
  NAPISIM_ASSERT(allowed.any(), "empty cpus_allowed mask");
  const int prev_cpu = wakee.prev_cpu;
  NAPISIM_ASSERT(valid_cpu(topo, prev_cpu) && valid_cpu(topo, this_cpu), "cpu out of range");

  int cpu;
  if (allowed.single()) {
    // select_task_rq(): nr_cpus_allowed == 1 never calls into the class.
    cpu = allowed.first();
  } else {
    if (waker != nullptr) record_wakee(*waker, wakee, now);
    const bool want_affine = params.wake_affine && !wake_wide(topo, wakee, waker, this_cpu) && allowed.test(this_cpu);

    int new_cpu = prev_cpu;
    // for_each_domain(this_cpu): the first SD_WAKE_AFFINE domain spanning prev_cpu decides;
    // SD_BALANCE_WAKE is never set, so the slow path (find_idlest_cpu) is not taken.
    if (want_affine && wake_affine_domain_spans(topo, this_cpu, prev_cpu) && this_cpu != prev_cpu) {
      new_cpu = wake_affine(topo, view, params, wakee, waker, this_cpu, prev_cpu, sync);
      // wake_affine()'s schedstat_inc()s: every call, and each that returns this_cpu.
      ++wakee.nr_wakeups_affine_attempts;
      if (new_cpu == this_cpu) ++wakee.nr_wakeups_affine;
    }

    cpu = select_idle_sibling(topo, view, params, wakee, prev_cpu, new_cpu, this_cpu, waker_is_per_cpu_kthread);
    // v5.10: "if (want_affine) current->recent_used_cpu = cpu;" (gone in v5.12).
    if (params.v5_10 && want_affine && waker != nullptr) waker->recent_used_cpu = this_cpu;
  }
  // select_task_rq(): "if (unlikely(!is_cpu_allowed(p, cpu)))".
  if (!allowed.test(cpu)) cpu = select_fallback_rq(topo, allowed, prev_cpu);
  return cpu;
}

// ttwu_queue_cond() behind sched_feat(TTWU_QUEUE), kernel/sched/core.c v6.6.
bool ttwu_queue_wakelist(const Topology& topo, const WakeView& view, const WakeParams& params, const CpuMask* allowed,
                         int cpu, int this_cpu) {
  if (!params.ttwu_queue) return false;
  if (allowed != nullptr && !allowed->test(cpu)) return false;
  // Not sharing a cache: queue remotely to avoid touching remote runqueue data.
  if (!topo.share_cache(this_cpu, cpu)) return true;
  if (cpu == this_cpu) return false;
  // Offload the activation to an idle (or soon idle) wakee cpu.
  return view.nr_running(cpu) == 0;
}

// --- load balancing helpers -----------------------------------------------------------------

// find_busiest_queue() (kernel/sched/fair.c v6.6), migrate_task case, simplified.
int find_busiest_cpu(const Topology& topo, const WakeView& view, int this_cpu, BalanceScope scope,
                     const CpuMask* overloaded) {
  NAPISIM_ASSERT(valid_cpu(topo, this_cpu), "cpu out of range");
  const CpuMask* span = nullptr;
  switch (scope) {
    case BalanceScope::kCore:
      span = &topo.smt_mask(this_cpu);
      break;
    case BalanceScope::kLlc:
      span = &topo.llc_mask(topo.llc_of(this_cpu));
      break;
    case BalanceScope::kNode:
      span = &topo.node_mask(topo.node_of(this_cpu));
      break;
    case BalanceScope::kSystem:
      span = &topo.all_cpus();
      break;
  }
  CpuMask candidates;
  if (overloaded) {
    candidates = *span & *overloaded;
    span = &candidates;
  }
  int busiest = -1;
  int busiest_nr = 1;  // a lone task is never pulled by this path
  std::int64_t busiest_load = 0;
  for (int c = span->first(); c != -1; c = span->next(c)) {
    if (c == this_cpu) continue;
    const int nr = view.nr_running(c);
    if (nr < busiest_nr || (nr == busiest_nr && busiest == -1)) continue;
    const std::int64_t load = view.cpu_load(c);
    if (nr > busiest_nr || load > busiest_load) {
      busiest = c;
      busiest_nr = nr;
      busiest_load = load;
    }
  }
  return busiest;
}

// task_hot(), kernel/sched/fair.c v6.6: the sysctl_sched_migration_cost test.
bool task_hot(Nanos now, Nanos last_ran, Nanos migration_cost) {
  if (migration_cost == -1) return true;
  if (migration_cost == 0) return false;
  return now - last_ran < migration_cost;
}

}  // namespace napisim
