// napisim: a CPU as the kernel's execution engine sees it (cpu.cpp): where code runs (Ctx), the
// per-CPU state every event reads (struct Cpu: what runs, the context levels' slots, the run
// queues, softnet_data), and the SMT speed arithmetic. The code is cpu.cpp, sched.cpp and
// softirq.cpp, members of Kernel (kernel.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <memory>

#include "sim/core/event_queue.hpp"
#include "sim/core/fifo.hpp"
#include "sim/core/rng.hpp"
#include "sim/core/time.hpp"
#include "sim/kernel/cache.hpp"
#include "sim/kernel/fair.hpp"
#include "sim/kernel/napi.hpp"
#include "sim/kernel/pelt.hpp"
#include "sim/kernel/proc.hpp"
#include "sim/kernel/rt.hpp"
#include "sim/kernel/task.hpp"
#include "sim/kernel/waitqueue.hpp"

namespace napisim {

namespace softirq_nr {
constexpr int kHi = 0, kTimer = 1, kNetTx = 2, kNetRx = 3, kTasklet = 6;
}

/// Where a piece of kernel code runs: a task (task != nullptr, on task->cpu) or an interrupt
/// level of one CPU. `cls` is the class its CPU time is charged to.
struct Ctx {
  int cpu = 0;
  Task* task = nullptr;
  std::uint8_t level = 0;  // 0 task, 1 softirq, 2 hardirq
  CpuClass cls = CpuClass::kSystem;
  CacheOwner* owner = nullptr;  // the working set touched (null: the task's own, or the CPU's softirq)
};

/// Wall time a CPU at `speed_milli` (per-mille of full speed) takes for `work` ns of full-speed
/// work, rounded up. At full speed (no busy SMT sibling) that is `work`: no 64-bit division, whose
/// latency (tens of cycles) every segment would otherwise pay.
inline Nanos exec_ns(Nanos work, int speed_milli) {
  return speed_milli == 1000 ? work : (work * 1000 + speed_milli - 1) / speed_milli;
}
/// The inverse: full-speed work done in `ran` ns of wall time, rounded down.
inline Nanos work_in(Nanos ran, int speed_milli) {
  return speed_milli == 1000 ? ran : ran * speed_milli / 1000;
}

// Field order is for the cache: every event reads a CPU's first line (what runs, the segment's
// clock and accounting state), and placement's idle_cpu() scan reads only that line; the next
// ones hold what every segment (accounting, timer, cost draw) and every schedule() (run queues,
// PSI, PELT) touch, ahead of the interrupt slots and the cold state. alignas: operator new alone
// gives 16-byte alignment, and the first 64 bytes would straddle two lines.
struct alignas(64) Cpu {
  // ---- line 0: read on every event and by idle_cpu() --------------------------------------
  int id = 0;
  int ttwu_pending = 0;        // queued remote wakeups (makes the CPU non-idle to placement)
  Task* curr = nullptr;        // nullptr: the idle task
  Nanos switch_remaining = 0;  // context-switch work before curr resumes
  Nanos seg_start = 0;         // when the top slot's segment (re)started executing
  Nanos last_update = 0;
  Nanos task_exec_accum = 0;  // task time not yet charged with update_curr()
  int speed_milli = 1000;     // SMT: per-thread speed while the sibling is busy
  int nr_running = 0;         // rq->nr_running: cfs + rt entities, curr included
  std::uint32_t softirq_pending = 0;
  bool serving_softirq = false;  // SOFTIRQ_OFFSET: inside handle_softirqs
  bool need_resched = false;
  bool busy = false;
  bool ready = false;  // the top slot waits to be resumed now
  // ---- line 1: accounting ----------------------------------------------------------------
  bool part_stop = false;  // seg_timer stops at a chain's part boundary, not its end
  CpuClass acct_cls = CpuClass::kIdle;
  // The interrupt levels are in use (their slots' `active`, kept here: every event asks what
  // runs, and a task's segment should not have to read the two slots' lines to learn it).
  bool hardirq_active = false;
  bool softirq_active = false;
  std::array<Nanos, kNumCpuClasses> time{};
  // ---- line 2: every segment's timer and cost draw ------------------------------------------
  Timer seg_timer;
  Rng cost_rng{0};  // stream "cpu<N>/cost"
  // ---- line 3: schedule() ------------------------------------------------------------------
  std::unique_ptr<FairRq> cfs;
  std::unique_ptr<RtRq> rt;
  // PSI cpu (kernel/sched/psi.c test_state): integrals of SOME and NONIDLE.
  Nanos psi_stamp = 0;
  bool psi_some = false, psi_nonidle = false;
  bool util_busy = false;
  Nanos psi_some_ns = 0, psi_nonidle_ns = 0;
  Nanos last_balance = 0;
  // The MC (LLC) domain's sd->nr_balance_failed (fair.c v5.10): periodic balances in a row that
  // found the SMT cores unbalanced and moved nothing (push_active_balance()).
  int nr_balance_failed = 0;
  bool nohz_kick_pending = false;  // nohz_flags(cpu) & NOHZ_KICK_MASK: a kick_ilb() IPI is on its way
  Task* ksoftirqd = nullptr;
  // rq->avg_idle (update_avg() of each idle spell a wakeup ends, capped at twice
  // max_idle_balance_cost; init 2 * sysctl_sched_migration_cost) and rq->idle_stamp (-1: none).
  Nanos avg_idle = 0;
  Nanos idle_stamp = -1;
  // ---- line 4: util, then the interrupt levels' slots (their hot fields lead each Slot) ----
  // The CFS runqueue's PELT utilization (kernel/sched/pelt.c), read by SIS_UTIL; util_busy is
  // cfs_rq->curr != NULL since its last update.
  pelt::UtilAvg util;
  // kernel.sched.capacity_pressure: rq->avg_rt (util_update(), rt_busy: an RT curr) and
  // rq->avg_irq (update_irq_load_avg(): the irq time, hardirq and softirq outside ksoftirqd, seen
  // up to irq_clock), and rq->cpu_capacity (update_cpu_capacity()) with the stopper's push.
  pelt::UtilAvg avg_rt, avg_irq;
  bool rt_busy = false;
  int push_cpu = -1;  // rq->push_cpu while rq->active_balance (-1: none): the stopper's target
  std::int64_t cpu_capacity = 1024;
  Nanos irq_seen = 0, irq_clock = 0;
  CacheOwner* cache_owner = nullptr;  // whose work runs here now (cache.cpp; null: idle, hardirq)
  CacheOwner softirq_cache;           // softirq work that polls no NAPI (timers, RPS IPIs)
  Slot hardirq;
  Slot softirq;
  Timer tick_timer;
  Proc<void> hardirq_proc, softirq_proc;
  Fifo<std::uint64_t> pending_irqs{8};
  // call_single_queue (kernel/smp.c): queued wakeups (linked through Task::wake_entry, in order)
  // and the RPS call (its csd pending).
  Task* csq_head = nullptr;
  Task* csq_tail = nullptr;
  bool csq_rps = false;
  // softnet
  SoftnetData sd;
  WaitQueue ksoftirqd_wq;
  // statistics
  std::uint64_t irqs = 0, ctx_switches = 0, softirq_runs = 0, ksoftirqd_wakeups = 0, ipis = 0;
  std::uint64_t polled_wakeups = 0;  // woken from idle without an IPI (sched_wake_idle_without_ipi)
};

}  // namespace napisim
