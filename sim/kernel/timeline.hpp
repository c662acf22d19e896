// napisim: the run's timeline, written as a Chrome JSON trace that the Perfetto UI opens.
//
// The kernel's tracepoints, as `perf sched` and `trace-cmd` read them, recorded where the model
// already does the work: CPU time by context (update_exec: irqtime_account_irq(), the class every
// nanosecond is charged to), irq_handler_entry, napi_poll (net/core/dev.c trace_napi_poll(): work
// and budget), and sched_switch / sched_wakeup as per-task running and runnable slices.
//
// Why the Chrome JSON trace-event format rather than Perfetto's protobuf: it needs no library, a
// test can parse it with any JSON parser, and the Perfetto UI, chrome://tracing and
// trace_processor all read it. Timestamps are µs with three decimals: exact to the nanosecond.
//
// Each host is two processes: "<host> CPUs" (one track per CPU, and one "NAPI" track per CPU for
// polls, which may span preemptions) and "<host> tasks" (one track per task). A workload with
// latency attribution adds "requests (sampled)": one track per sampled flow, each of its requests a
// "request" slice holding its stages, from both hosts. Only what falls in [from, to) is written;
// an event limit keeps a long window from filling memory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/time.hpp"
#include "sim/kernel/task.hpp"

namespace napisim {

struct TimelineOptions {
  Nanos from = 0;                       // the window, simulated ns
  Nanos to = 0;                         //
  std::uint64_t max_events = 20000000;  // then the trace stops and says it was truncated
};

class Timeline {
 public:
  explicit Timeline(const TimelineOptions& opt);

  /// A host whose kernel records into this trace; returns its index (Kernel::set_trace()).
  int add_host(const std::string& name, int nr_cpus);

  /// CPU `cpu` of `host` spent [a, b) in `cls`, running `curr` at task level (null: idle task, or
  /// an interrupt level). Consecutive intervals of the same class and task merge into one slice.
  void cpu_time(int host, int cpu, CpuClass cls, const Task* curr, Nanos a, Nanos b);
  /// irq_handler_entry: an instant on the CPU's track.
  void irq(int host, int cpu, const char* what, Nanos t);
  /// trace_napi_poll(): one poll of NAPI `napi` on `cpu`, [a, b), `work` of `budget` packets.
  void napi_poll(int host, int cpu, int napi, int work, int budget, Nanos a, Nanos b);
  /// sched_switch / sched_wakeup: task `t` is now in state `s` (running on `cpu`, runnable, or
  /// neither). A state it already has is no change.
  void task_state(int host, const Task& t, TaskState s, int cpu, Nanos now);
  /// One request of flow `flow`, [begin, begin + sum of stage_ns), cut into `n` consecutive stages
  /// (those of 0 ns are left out): a "request" slice on the flow's track with a slice per stage.
  void request(int flow, Nanos begin, const std::string* stage_names, const Nanos* stage_ns, std::size_t n);

  /// Closes every open slice at `end` and returns the whole document.
  std::string finish(Nanos end);
  bool truncated() const { return truncated_; }
  std::uint64_t events() const { return events_; }

 private:
  struct Open {
    bool open = false;
    CpuClass cls = CpuClass::kIdle;
    const Task* task = nullptr;
    Nanos start = 0, end = 0;
  };
  struct TaskOpen {
    TaskState state = TaskState::kSleeping;
    int cpu = -1;
    Nanos since = 0;
    bool named = false;
  };
  struct Host {
    std::string name;
    std::vector<Open> cpus;
    std::vector<TaskOpen> tasks;  // by Task::id
  };
  bool clip(Nanos& a, Nanos& b) const;
  bool reserve_event();
  void emit_cpu(int host, int cpu, const Open& o);
  void emit_task(int host, int id, const TaskOpen& o, Nanos end);
  /// Opens a complete event ("ph":"X") up to its name; the caller adds args and closes it.
  void begin_slice(const char* cat, int pid, int tid, Nanos a, Nanos b, const char* name);
  void append_ts(Nanos t);

  TimelineOptions opt_;
  std::vector<Host> hosts_;
  std::vector<bool> request_tracks_;  // by flow: its track is named
  std::string out_;
  std::uint64_t events_ = 0;
  bool truncated_ = false;
};

}  // namespace napisim
