// napisim: a schedulable task (task_struct) and wait queues.
//
// A task's body is a Proc coroutine. It runs only while it is `curr` on a CPU and the task level is
// the CPU's top execution level; its current segment (work left, class) lives in `slot`, so a task
// carries its state across preemption and migration, as a task_struct does.
#pragma once

#include <array>
#include <coroutine>
#include <cstdint>
#include <string>

#include "sim/core/event_queue.hpp"
#include "sim/core/time.hpp"
#include "sim/hw/topology.hpp"
#include "sim/kernel/cache.hpp"
#include "sim/kernel/fair.hpp"
#include "sim/kernel/proc.hpp"
#include "sim/kernel/waitqueue.hpp"
#include "sim/kernel/wake.hpp"

namespace napisim {

struct Epoll;

/// Where CPU time goes, per CPU. Task time is split by what the task is (kthread, ksoftirqd) and,
/// for user tasks, by mode (user vs system). Busy polling, in a syscall or a kthread, is two
/// classes of its own: the polls (busy_poll: napi_poll work done by the poller) and the spins
/// between them with nothing to do (busy_spin: sk/epoll busy loops waiting for a packet, failed
/// ownership attempts, the userspace loop's empty epoll_wait calls). The kernel counts both as
/// system time (or the kthread's); napisim tells them apart because the debate is about them.
enum class CpuClass : std::uint8_t {
  kIdle,
  kHardirq,
  kSoftirq,
  kKsoftirqd,
  kKthread,
  kUser,
  kSystem,
  kBusyPoll,
  kBusySpin,
  kCount
};
inline constexpr int kNumCpuClasses = static_cast<int>(CpuClass::kCount);
const char* cpu_class_name(CpuClass c);

/// Latency attribution, "who was running instead": the time a CPU spent in each class while
/// something waited on it, and at kSelf the time a waiting task itself ran there (its own time is
/// then not in its class). Kernel::task_view(), Napi's waits.
inline constexpr int kSelf = kNumCpuClasses;
inline constexpr int kNumWaitClasses = kNumCpuClasses + 1;
using ClassTimes = std::array<Nanos, kNumWaitClasses>;
/// The name of class `i` of a ClassTimes: cpu_class_name(), or "self".
const char* wait_class_name(int i);
inline ClassTimes operator-(ClassTimes a, const ClassTimes& b) {
  for (int i = 0; i < kNumWaitClasses; ++i)
    a[static_cast<std::size_t>(i)] -= b[static_cast<std::size_t>(i)];
  return a;
}
inline ClassTimes operator+(ClassTimes a, const ClassTimes& b) {
  for (int i = 0; i < kNumWaitClasses; ++i)
    a[static_cast<std::size_t>(i)] += b[static_cast<std::size_t>(i)];
  return a;
}

/// Latency attribution: a task's return from epoll_wait() (or from a blocking recv()), as its
/// workload stamps it (Kernel::stamp_epoll_return()): when, the task's first run after its last
/// wakeup, and its Kernel::task_view() at both. A task may sleep again before it has handled every
/// event (app's off-CPU work), so its handlers read these rather than the task's current stamps.
struct EpollStamp {
  Nanos ret = 0, run = 0;
  ClassTimes ret_view{}, run_view{};
};

/// One part of a chained segment (Kernel::exec_chain): `cost` ns charged to `cls`. `from_user`:
/// the task is in user mode just before this part (it is a syscall made right after another
/// returned), so its start is a return-to-user preemption point, as every kUser part's start is.
struct ExecPart {
  CpuClass cls = CpuClass::kSystem;
  Nanos cost = 0;
  bool from_user = false;
  bool preemption_point() const { return from_user || cls == CpuClass::kUser; }
  /// A part without work is skipped, as exec() skips a zero cost (with its preemption point).
  bool has_work() const { return cost > 0; }
};

/// The execution segment of one context level (hardirq, softirq, or a task).
///
/// A task's segment may be chained (Kernel::exec_chain): parts of different classes run back to
/// back (a syscall's system time, then user time, then the next syscall) as one segment, so the
/// simulator needs one event for the whole chain. `cls` is then the class of the part running
/// now, and the parts after it wait in next[part..] (while tail > 0); update_exec_slow() moves
/// across their boundaries and charges each part's time to its own class.
struct Slot {
  static constexpr int kMaxNext = 3;
  std::coroutine_handle<> h;    // resumed when the segment ends (null: nothing to resume)
  CacheOwner* owner = nullptr;  // whose working set the segment's work touches (null: hardirq)
  Nanos remaining = 0;          // work left in the current segment (all its parts), ns at full core speed
  Nanos tail = 0;               // work of the parts after the current one (0: the last or only part)
  CpuClass cls = CpuClass::kSystem;
  std::uint8_t part = 0;        // next[part] is the part after the current one (if tail > 0)
  bool active = false;          // a task's body has not ended (interrupt levels: Cpu::hardirq_active, softirq_active)
  bool waiting = false;         // suspended on something other than CPU work (softirq below it, IPI)
  bool part_from_user = false;  // the current part starts at a return to user mode
  Nanos part_begun = 0;         // when a chain's current part began (begin_chain(), each boundary)
  std::array<ExecPart, kMaxNext> next{};  // (class, work, from_user) of the parts after the current one
  /// Ends any chain: the segment is one part again (remaining set by the caller).
  void clear_chain() {
    tail = 0;
    part = 0;
    part_from_user = false;
  }
  /// Moves to the next part of a chain (its boundary has been reached).
  void next_part() {
    const ExecPart& p = next[part++];
    cls = p.cls;
    part_from_user = p.from_user;
    tail -= p.cost;
  }
  /// Resumes the slot's coroutine, which may at once give the slot a new one.
  void resume() {
    const std::coroutine_handle<> co = h;
    h = nullptr;
    co.resume();
  }
};

enum class TaskKind : std::uint8_t { kUser, kKsoftirqd, kKthread };
enum class TaskState : std::uint8_t { kRunning, kRunnable, kSleeping, kDead };

// init_task.timer_slack_ns (init/init_task.c v6.6): 50 us, inherited by every task.
constexpr Nanos kDefaultTimerSlackNs = 50000;

// Field order is for the cache: what a wakeup, a context switch and a segment read comes first
// (the scalars, then the scheduling entity and the execution slot); the name and the statistics
// last.
struct Task {
  int id = 0;
  TaskKind kind = TaskKind::kUser;
  TaskState state = TaskState::kSleeping;
  bool per_cpu_kthread = false;
  bool spinning = false;       // busy-polling with nothing to do: on CPU, preemption disabled
  int cpu = -1;                // task_cpu(): CPU whose run queue holds it (or last ran on)
  int bh_disable = 0;          // local_bh_disable() depth (threaded NAPI, busy poll)
  unsigned wake_flags = 0;     // enqueue flags of a wakeup queued to another CPU (ttwu_queue)
  Task* wake_entry = nullptr;  // next wakeup on the same call_single_queue (p->wake_entry)
  WaitQueue* waiting_on = nullptr;
  Epoll* ep_poll = nullptr;  // in ep_poll()'s wait loop: resumed only once this epoll has events
  Nanos last_ran = 0;        // for task_hot()
  // Latency attribution (Kernel::set_stamps()): when the task first got a CPU after its last
  // wakeup (-1: not yet).
  Nanos wake_ran_at = 0;
  CacheOwner cache;   // the task's own working set (user memory, stack, its sockets)
  Nanos exec_ns = 0;  // statistics: CPU time
  SchedEntity se;
  Slot slot;
  WakeeInfo wakee;  // select_task_rq_fair bookkeeping (prev cpu, wakee flips)
  CpuMask allowed;  // cpus_ptr
  Proc<void> body;
  Timer spin_timer;                             // the busy-poll deadline
  Timer sleep_timer;                            // hrtimer_sleeper of a timed sleep (epoll_pwait2's timeout)
  Nanos timer_slack_ns = kDefaultTimerSlackNs;  // prctl(PR_SET_TIMERSLACK)
  // statistics
  std::uint64_t nvcsw = 0, nivcsw = 0, wakeups = 0, migrations = 0;
  // ttwu_stat() (kernel/sched/core.c v6.6, CONFIG_SCHEDSTATS; /proc/<pid>/sched nr_wakeups_*):
  // woken onto the waking CPU (nr_wakeups_remote is the rest), moved by the wakeup, WF_SYNC.
  // wakeups_onto_softirq is napisim's own: placed on a CPU that was running softirq work (in
  // interrupt context or ksoftirqd) or a NAPI kernel thread, which the wakee then waits behind.
  std::uint64_t wakeups_local = 0, wakeups_migrate = 0, wakeups_sync = 0;
  std::uint64_t wakeups_onto_softirq = 0;
  std::string name;
  // Latency attribution (Kernel::set_stamps()): the class times of the CPUs the task has been on,
  // as it moved (view_acc up to its last move; since then its CPU's times less view_base), and its
  // own time among them, by class: Kernel::task_view(). view_at_run: task_view() at wake_ran_at
  // (user tasks: the sockets' readers).
  ClassTimes view_acc{}, view_base{}, own{}, view_at_run{};
  EpollStamp epoll_stamp;  // stamp_epoll_return()
};

}  // namespace napisim
