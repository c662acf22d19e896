// napisim: a schedulable task (task_struct) and wait queues.
//
// A task's body is a Proc coroutine. It runs only while it is `curr` on a CPU and the task level is
// the CPU's top execution level; its current segment (work left, class) lives in `slot`, so a task
// carries its state across preemption and migration, as a task_struct does.
#pragma once

#include <coroutine>
#include <cstdint>
#include <string>

#include "sim/core/event_queue.hpp"
#include "sim/core/time.hpp"
#include "sim/hw/topology.hpp"
#include "sim/kernel/fair.hpp"
#include "sim/kernel/proc.hpp"
#include "sim/kernel/waitqueue.hpp"
#include "sim/kernel/wake.hpp"

namespace napisim {

/// Where CPU time goes, per CPU. Task time is split by what the task is (kthread, ksoftirqd) and,
/// for user tasks, by mode (user vs system).
enum class CpuClass : std::uint8_t { kIdle, kHardirq, kSoftirq, kKsoftirqd, kKthread, kUser, kSystem, kCount };
inline constexpr int kNumCpuClasses = static_cast<int>(CpuClass::kCount);
const char* cpu_class_name(CpuClass c);

/// The execution segment of one context level (hardirq, softirq, or a task).
struct Slot {
  std::coroutine_handle<> h;  // resumed when the segment ends (null: nothing to resume)
  Nanos remaining = 0;        // work left in the current segment, ns at full core speed
  CpuClass cls = CpuClass::kSystem;
  bool active = false;        // the level is in use (for tasks: the body has not ended)
  bool waiting = false;       // suspended on something other than CPU work (softirq below it, IPI)
};

enum class TaskKind : std::uint8_t { kUser, kKsoftirqd, kKthread };
enum class TaskState : std::uint8_t { kRunning, kRunnable, kSleeping, kDead };


struct Task {
  int id = 0;
  std::string name;
  TaskKind kind = TaskKind::kUser;
  TaskState state = TaskState::kSleeping;
  SchedEntity se;
  WakeeInfo wakee;           // select_task_rq_fair bookkeeping (prev cpu, wakee flips)
  CpuMask allowed;           // cpus_ptr
  bool per_cpu_kthread = false;
  int cpu = -1;              // task_cpu(): CPU whose run queue holds it (or last ran on)
  Slot slot;
  Proc<void> body;
  int bh_disable = 0;        // local_bh_disable() depth (threaded NAPI, busy poll)
  WaitQueue* waiting_on = nullptr;
  unsigned wake_flags = 0;   // enqueue flags of a wakeup queued to another CPU (ttwu_queue)
  bool spinning = false;     // busy-polling with nothing to do: on CPU, preemption disabled
  Timer spin_timer;          // the busy-poll deadline
  Nanos last_ran = 0;        // for task_hot()
  Nanos migrate_penalty = 0; // cache refill after a cross-LLC move, added to the next segment
  // statistics
  Nanos exec_ns = 0;
  std::uint64_t nvcsw = 0, nivcsw = 0, wakeups = 0, migrations = 0;
};


}  // namespace napisim
