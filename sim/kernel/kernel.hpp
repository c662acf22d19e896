// napisim: the simulated Linux kernel of one host (the server, or a Linux client host).
//
// One object holds the per-CPU execution engine, the scheduler, the softirq engine, NAPI and the
// NIC driver glue, sockets and epoll. Its methods are split by subsystem, one .cpp each, named
// after the kernel files they mirror:
//   kernel.cpp    the constructor: per-CPU state, run queues, softnet_data, ksoftirqd/N
//   cpu.cpp       execution contexts (hardirq > softirq > task), segments, time accounting, SMT;
//                 its state is struct Cpu (cpu.hpp)
//   cache.cpp     per-CPU cache state: the refill work pays after other owners' work or a move
//                 (what kernel/sched/fair.c task_hot() guesses at)
//   sched.cpp     kernel/sched/core.c + fair.c glue: try_to_wake_up, schedule, tick, balance, PSI;
//                 the run queues are fair.hpp's and rt.hpp's, wakeup placement wake.hpp's
//   softirq.cpp   kernel/softirq.c: raise_softirq, irq_exit/invoke_softirq, handle_softirqs, ksoftirqd
//   napi.cpp      net/core/dev.c: napi_schedule, net_rx_action, __napi_poll, napi_complete_done,
//                 napi_watchdog, threaded NAPI poll loop
//   busy_poll.cpp napi_busy_loop, ep_busy_loop, IRQ suspension
//   rps.cpp       RPS / RFS and the per-CPU backlog
//   nic.cpp       the driver (mlx5e-like napi poll, CQ arming) and the NIC (RSS, rings, moderation);
//                 its state is struct Channel (netdev.hpp)
//   nic_moder.cpp mlx5's per-CQ interrupt moderation (cq_period_mode cqe, eqe)
//   xsk.cpp       XDP verdicts in the driver's poll and AF_XDP sockets
//   socket.cpp    TCP receive/transmit glue, sk_data_ready, epoll_wait, recv/send syscalls, the ACKs
//                 of flow-control sockets
//   inet_csk.cpp  listening sockets, the accept queue, futexes
//   loopback.cpp  drivers/net/loopback.c
//   tcp_*.cpp     TCP as the kernel sends and recovers, between two simulated Linux hosts (tcp.hpp)
//   counters.cpp  the event counters results read, and snapshot()
// The timeline (timeline.hpp) records what the methods report for --trace.
//
// Execution model. Each CPU has three context levels: hardirq (2) > softirq (1) > task (0). Code
// at each level is a Proc coroutine that consumes CPU time by awaiting exec(ctx, ns); only the
// highest active level makes progress, so a hardirq preempts softirq and task work at once and
// they resume afterwards with their remaining work. Coroutines are resumed only from this
// object's event handler. Time is accounted per CPU by class, and task time feeds the scheduler
// (update_curr), excluding interrupt time when CONFIG_IRQ_TIME_ACCOUNTING is on.
// A task whose next stretches of work nobody else can observe (a syscall, user work, the next
// syscall) awaits exec_chain() instead: one segment whose parts keep their classes and the
// preemption points between them, so the simulator spends one event where the CPU did several
// things in a row (the hot path of tcp_rr: docs/design.md's speed goal).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/core/fifo.hpp"
#include "sim/core/host_model.hpp"
#include "sim/core/rng.hpp"
#include "sim/hw/topology.hpp"
#include "sim/kernel/costs.hpp"
#include "sim/kernel/counters.hpp"
#include "sim/kernel/cpu.hpp"
#include "sim/kernel/fair.hpp"
#include "sim/kernel/inet_csk.hpp"
#include "sim/kernel/inet_hash.hpp"
#include "sim/kernel/napi.hpp"
#include "sim/kernel/netdev.hpp"
#include "sim/kernel/params.hpp"
#include "sim/kernel/pelt.hpp"
#include "sim/kernel/proc.hpp"
#include "sim/kernel/rps.hpp"
#include "sim/kernel/rt.hpp"
#include "sim/kernel/socket.hpp"
#include "sim/kernel/task.hpp"
#include "sim/kernel/tcp.hpp"
#include "sim/kernel/wake.hpp"
#include "sim/kernel/xsk.hpp"

namespace napisim {

/// The receive-path peer: what happens to a packet once the server transmits it.
class WirePeer {
 public:
  virtual ~WirePeer() = default;
  /// Train `tr` (its sock this host's) left the host's port at `wire_done` (last bit on the wire).
  virtual void on_transmit(const WireTrain& tr, Nanos wire_done) = 0;
  /// The NIC dropped `segs` segments of a train from this socket's peer (ring full): the peer
  /// retransmits (TCP RTO), unless the kernels' TCP runs the connection (it finds the loss itself).
  virtual void on_rx_drop(int sock, std::uint32_t bytes, std::uint32_t segs) = 0;
};

class Timeline;

class Kernel : public EventSink, public WakeView {
 public:
  /// `rng` seeds the per-CPU cost-variability streams ("cpu<N>/cost"); null uses seed 0, run 0.
  Kernel(HostModel& host, const Topology& topo, const KernelParams& kp, const CostParams& costs,
         const RngRoot* rng = nullptr, const std::string& rng_prefix = "");
  ~Kernel();
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;

  // ---- setup -------------------------------------------------------------------------------
  /// Creates a task; the caller sets t.body then calls start_task(). Kthreads are SCHED_NORMAL nice 0
  /// unless set otherwise (kernel/kthread.c).
  Task& create_task(const std::string& name, TaskKind kind, const CpuMask& allowed,
                    SchedPolicy policy = SchedPolicy::kNormal, int nice = 0, int rt_priority = 0);
  /// Wakes a created task for the first time (wake_up_new_task), on `cpu` or the first allowed CPU.
  void start_task(Task& t, int cpu = -1);
  /// kthread_create() (kernel/kthread.c v6.6): a kernel thread whose body is threadfn(t), asleep
  /// until its first wakeup (the body's first step looks for work), its time charged as `cls`.
  template <class ThreadFn>
  Task& kthread_create(const std::string& name, TaskKind kind, const CpuMask& allowed, CpuClass cls,
                       ThreadFn&& threadfn, SchedPolicy policy = SchedPolicy::kNormal, int nice = 0,
                       int rt_priority = 0) {
    Task& t = create_task(name, kind, allowed, policy, nice, rt_priority);
    t.body = threadfn(t);
    kthread_init(t, cls);
    return t;
  }
  /// set_cpus_allowed_ptr() (kernel/sched/core.c v6.6), its effect on a sleeping task: the new mask,
  /// and a task_cpu() outside it moved into it (a running or queued task finishes where it is).
  void set_cpus_allowed_ptr(Task& t, const CpuMask& allowed);
  void set_task_nice(Task& t, int nice);
  Nic& add_nic(const NicParams& p, const std::string& path);
  Socket& add_socket(int nic, std::uint32_t hash);
  /// A socket for the connection `tuple` arriving on `nic`: its skb->hash is the NIC's RSS
  /// (Toeplitz) hash of the tuple, as the driver sets it.
  Socket& add_socket(int nic, const FlowTuple& tuple) {
    return add_socket(nic, nics_[static_cast<std::size_t>(nic)]->rss->hash(tuple));
  }
  /// inet_ehashfn() of the connection `tuple` arriving here (saddr/sport the peer's), keyed with
  /// this host's inet_ehash_secret: the hash SO_REUSEPORT selects a listener by (inet_hash.hpp).
  std::uint32_t inet_ehashfn(const FlowTuple& tuple) const { return napisim::inet_ehashfn(tuple, inet_ehash_secret_); }
  Epoll& add_epoll();
  void set_peer(WirePeer* peer) { peer_ = peer; }
  /// Off: every delivered train keeps its arrival event (nic_deliver), watched or not. The
  /// reference the event-free path must reproduce exactly (tests).
  void set_lazy_rx(bool on) { lazy_rx_ = on; }
  /// Latency attribution: each data train is stamped on its way from the ring to its socket (the
  /// kernel keeps each socket's last train's, last_rx()), sockets their last transmit, NAPIs their
  /// poll time and waits, tasks their first run after a wakeup and their view of CPU time (off by
  /// default: then none of it is kept). Set before the run starts.
  void set_stamps(bool on);
  /// Latency attribution, who was running instead: the class times of CPU `c` up to `t`
  /// (c.last_update <= t <= now), what update_exec() will have accounted by then, computed
  /// without accounting anything: observing must not move the run. `own`, when given, gets the
  /// part of (last_update, t] that is c.curr's own time (its task classes).
  ClassTimes cpu_times_at(const Cpu& c, Nanos t, ClassTimes* own = nullptr) const;
  /// The time by class of the CPUs task `t` has been on, integrated as it moved (set_stamps()),
  /// with its own running time at kSelf rather than in its class: between two calls, what the
  /// CPU it was on did meanwhile; the classes sum to the time that passed.
  ClassTimes task_view(const Task& t) const;
  /// Latency attribution: `t`'s epoll_wait() (or blocking recv()) returns now (Task::epoll_stamp).
  void stamp_epoll_return(Task& t) const {
    t.epoll_stamp = EpollStamp{now(), t.wake_ran_at, task_view(t), t.view_at_run};
  }
  /// Records this host's timeline into `t` as its host `host` (timeline.hpp); null: none (default).
  void set_trace(Timeline* t, int host) {
    trace_ = t;
    trace_host_ = host;
    observed_ = trace_ || stamps_;
  }

  // ---- accessors ---------------------------------------------------------------------------
  HostModel& host() { return host_; }
  Nanos now() const { return host_.now(); }
  const Topology& topo() const { return topo_; }
  const KernelParams& params() const { return kp_; }
  bool ksoftirqd_era() const { return ksoftirqd_era_; }  // "let ksoftirqd do its job" (4.9-6.4)
  const CostParams& costs() const { return costs_; }
  int nr_cpus() const { return topo_.nr_cpus(); }
  Cpu& cpu(int i) { return cpus_[static_cast<std::size_t>(i)]; }
  const Cpu& cpu(int i) const { return cpus_[static_cast<std::size_t>(i)]; }
  std::vector<std::unique_ptr<Task>>& tasks() { return tasks_; }
  std::vector<std::unique_ptr<Nic>>& nics() { return nics_; }
  Socket& socket(int id) { return sockets_[id]; }
  std::vector<Napi*>& napis() { return napis_; }
  Nanos tick_period() const { return tick_ns_; }
  std::int64_t jiffies() const { return now() / tick_ns_; }
  /// include/linux/jiffies.h: rounds up.
  std::int64_t usecs_to_jiffies(std::int64_t us) const {
    const std::int64_t tick_us = tick_ns_ / 1000;
    return (us + tick_us - 1) / tick_us;
  }
  std::int64_t msecs_to_jiffies(std::int64_t ms) const { return usecs_to_jiffies(ms * 1000); }

  // ---- execution engine (cpu.cpp) ------------------------------------------------------------
  struct ExecAwait {
    Kernel& k;
    Ctx ctx;
    Nanos cost;
    bool await_ready() const noexcept { return cost <= 0; }
    void await_suspend(std::coroutine_handle<> h) { k.begin_segment(ctx, h, cost); }
    void await_resume() const noexcept {}
  };
  /// Consume `cost` ns of CPU in `ctx` (scaled by SMT speed; preemptible by higher levels).
  ExecAwait exec(const Ctx& ctx, Nanos cost) { return ExecAwait{*this, ctx, cost}; }
  struct ChainAwait {
    Kernel& k;
    Task& t;
    ExecPart parts[Slot::kMaxNext + 1];  // as given: begin_chain() skips the zero-cost ones
    bool await_ready() noexcept {
      static_assert(Slot::kMaxNext + 1 == 4);
      if (parts[0].has_work() || parts[1].has_work() || parts[2].has_work() || parts[3].has_work()) return false;
      t.slot.part_begun = k.now();  // a chain without work begins and ends now
      return true;
    }
    void await_suspend(std::coroutine_handle<> h) { k.begin_chain(t, h, parts); }
    void await_resume() const noexcept {}
  };
  /// The same as `co_await exec(task_ctx(t, p.cls), p.cost)` for each part in turn, when nothing
  /// the task does between them can be seen by others (no wakeup, no transmit, no socket change):
  /// one segment instead of one per part. Each part draws its own cost variability; the
  /// preemption points between parts are kept (a part boundary is stopped at while need_resched
  /// is set, and a part that starts in user mode checks it, as begin_segment()/dispatch() would).
  /// Zero-cost parts are skipped, as exec() skips them (with their preemption point).
  ChainAwait exec_chain(Task& t, ExecPart a, ExecPart b, ExecPart c = {}, ExecPart d = {}) {
    return ChainAwait{*this, t, {a, b, c, d}};
  }
  Ctx task_ctx(Task& t, CpuClass cls) const { return Ctx{t.cpu, &t, 0, cls}; }
  static int ctx_cpu(const Ctx& ctx) { return ctx.task ? ctx.task->cpu : ctx.cpu; }
  void begin_segment(const Ctx& ctx, std::coroutine_handle<> h, Nanos cost);
  /// Starts the chain of `parts` (at least one with work; the zero-cost ones are skipped).
  void begin_chain(Task& t, std::coroutine_handle<> h, const ExecPart (&parts)[Slot::kMaxNext + 1]);
  /// A segment's cost with the CPU's cost variability (lognormal, mean 1, costs.cost_cv) applied.
  Nanos vary_cost(Cpu& c, Nanos cost);
  /// Return to user mode on `c` by its running task `t`: the preemption point every model has.
  void exit_to_user_mode(Cpu& c, const Task& t);
  /// Suspends task `t` at `h` with no CPU work pending (accounting brought up to now); `waiting`
  /// marks a slot that must not be resumed until something clears it. Returns t's CPU.
  Cpu& park(Task& t, std::coroutine_handle<> h, bool waiting);
  /// Accounting and segment progress of `c` up to now (inline: most calls find it up to date).
  void update_exec(Cpu& c) {
    if (host_.now() != c.last_update) update_exec_slow(c);
  }
  /// Re-evaluates what runs on `c` (preemption point at return to task level) and arms its timer.
  void dispatch(Cpu& c);
  /// Resumes ready coroutines on `c` directly (only from this object's event handlers).
  void run_ready(Cpu& c);
  /// Resumes `s`, the slot `c` runs at `level` (its segment ended, or it was switched in ready):
  /// a task in ep_poll()'s wait (Task::ep_poll) whose ready list is still empty sleeps on ep->wq
  /// again instead (ep_poll_wait_again()).
  void resume_slot(Cpu& c, int level, Slot& s) {
    if (level == 0 && c.curr->ep_poll && ep_poll_wait_again(*c.curr)) return;
    s.resume();
  }
  void on_event(std::uint32_t kind, std::uint64_t arg) override;

  // ---- interrupts ----------------------------------------------------------------------------
  enum IrqType : std::uint32_t {
    kIrqNic = 1,
    kIrqIpiResched = 2,
    kIrqIpiWake = 3,
    kIrqNapiTimer = 4,
    kIrqTick = 5,
    kIrqIpiRps = 6,
    kIrqHrtimerSleeper = 7,
    kIrqTimer = 8,   // the local timer interrupt for the timer wheel (TCP timers)
    kIrqIpiNohz = 9  // kick_ilb()'s call-function IPI (nohz_csd_func())
  };
  static std::uint64_t irq_code(IrqType t, std::uint64_t arg) { return (static_cast<std::uint64_t>(t) << 40) | arg; }
  /// The IPI vectors (sysvec_reschedule_ipi, sysvec_call_function_single): counted as IPIs and
  /// costed ipi_handler_ns, whatever call they carry.
  static bool is_ipi(IrqType t) {
    return t == kIrqIpiResched || t == kIrqIpiWake || t == kIrqIpiRps || t == kIrqIpiNohz;
  }
  // Delivery flags in an irq code (below the type, above every argument).
  static constexpr std::uint64_t kIrqPolled = 1ULL << 39;  // no interrupt: run from the polling idle loop
  static constexpr std::uint64_t kIrqArgMask = kIrqPolled - 1;
  /// Delivers a hard interrupt to `cpu` at `at`.
  void raise_irq(int cpu, std::uint64_t code, Nanos at);
  /// __smp_call_single_queue() (kernel/smp.c v6.6): queues a wakelist wakeup (ttwu, `task`) or
  /// the RPS call (rps_trigger_softirq, `task` null; a pending one is not queued again: its csd is
  /// locked) on `cpu`'s call_single_queue. Only the call that finds the queue empty sends the IPI
  /// (llist_add() returned true), so calls queued before the handler flushes share it.
  void smp_call_single_queue(int cpu, Task* task);
  /// send_call_function_single_ipi(): an IPI, or none when `cpu` idles polling its thread flags.
  void send_call_function_single_ipi(int cpu, std::uint64_t code);
  /// The IPI itself (arch_send_call_function_single_ipi(), smp_send_reschedule()): `code` is
  /// handled on `cpu` ipi_latency_ns from now, whatever its idle state.
  void send_ipi(int cpu, std::uint64_t code) { raise_irq(cpu, code, host_.now() + costs_.ipi_latency_ns); }
  /// flush_smp_call_function_queue(): the async calls (RPS) first, then sched_ttwu_pending()'s
  /// wakeups in the order they were queued.
  void flush_smp_call_function_queue(Cpu& c);
  /// The CPU runs its idle loop: no task, no interrupt or softirq level active.
  static bool in_idle_loop(const Cpu& c) {
    return !c.curr && !c.hardirq_active && !c.softirq_active && c.switch_remaining == 0;
  }
  /// Wakes `c` without an IPI when it idles polling: `code` runs from its idle loop.
  bool wake_polling_idle(Cpu& c, std::uint64_t code);
  /// An idle CPU is woken now: it executes from cstate_exit_ns later (seg_start), idle until then.
  void idle_exit(Cpu& c);

  // ---- softirq (softirq.cpp) ----------------------------------------------------------------
  bool in_interrupt(const Cpu& c) const;
  void raise_softirq_irqoff(Cpu& c, int nr);  // __raise_softirq_irqoff: set the pending bit only
  void raise_softirq(Cpu& c, int nr);         // raise_softirq_irqoff: + wake ksoftirqd outside interrupts
  void wakeup_softirqd(Cpu& c);
  Proc<void> handle_softirqs(Ctx ctx, bool ksirqd);
  /// local_bh_enable() from task context: runs pending softirqs inline (as softirq-level work).
  struct BhEnableAwait {
    Kernel& k;
    Task& t;
    bool await_ready() noexcept;
    void await_suspend(std::coroutine_handle<> h);
    void await_resume() const noexcept {}
  };
  BhEnableAwait local_bh_enable(Task& t) { return BhEnableAwait{*this, t}; }
  void local_bh_disable(Task& t) { ++t.bh_disable; }

  // ---- scheduler (sched.cpp) ----------------------------------------------------------------
  struct SleepAwait {
    Kernel& k;
    Task& t;
    WaitQueue& wq;
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) { k.sleep_task(t, wq, h); }
    void await_resume() const noexcept {}
  };
  /// Puts `t` (running, at `h`) to sleep on `wq` and schedules.
  void sleep_task(Task& t, WaitQueue& wq, std::coroutine_handle<> h);
  /// Block the task on `wq` until wake_up(wq).
  SleepAwait sleep_on(Task& t, WaitQueue& wq) { return SleepAwait{*this, t, wq}; }
  struct CondReschedAwait {
    Kernel& k;
    Task& t;
    bool await_ready() const noexcept;
    void await_suspend(std::coroutine_handle<> h);
    void await_resume() const noexcept {}
  };
  /// cond_resched(): yield if need_resched is set.
  CondReschedAwait cond_resched(Task& t) { return CondReschedAwait{*this, t}; }
  /// wake_up(wq) from code running on `this_cpu`: true if a task was woken. `sync` is WF_SYNC
  /// (wake_up_interruptible_sync_poll(), e.g. sock_def_readable()): the waker is about to sleep,
  /// so select_task_rq_fair()'s wake_affine() may pull the wakee to this_cpu.
  bool wake_up(WaitQueue& wq, int this_cpu, bool sync = false);
  bool try_to_wake_up(Task& t, int this_cpu, bool sync = false);
  void resched_curr(Cpu& target, int this_cpu);
  void schedule(Cpu& c);
  bool charge_curr(Cpu& c);  // update_curr(): returns true if the slice expired
  void scheduler_tick(Cpu& c);
  void psi_update(Cpu& c);
  void util_update(Cpu& c);
  int nr_running_of(const Cpu& c) const { return c.nr_running; }

  // WakeView (placement reads this; softirq activity is invisible, as in the kernel).
  bool idle_cpu(int cpu) const override;
  bool sched_idle_cpu(int cpu) const override;
  int nr_running(int cpu) const override;
  std::int64_t cpu_load(int cpu) const override;
  std::int64_t cpu_util(int cpu) const override;
  std::int64_t capacity(int cpu) const override { return this->cpu(cpu).cpu_capacity; }
  int llc_nr_idle_scan(const Topology& topo, int imbalance_pct, int llc) const override;
  Nanos avg_idle(int cpu) const override;
  Nanos llc_avg_scan_cost(int llc) const override;
  void record_scan(int llc, int scanned) const override;
  void ttwu_avg_idle(Cpu& c);  // ttwu_do_wakeup()'s rq->avg_idle update

  // ---- NAPI (napi.cpp) ----------------------------------------------------------------------
  bool napi_schedule_prep(Napi& n);
  void napi_schedule(Cpu& c, Napi& n);        // napi_schedule(): prep + __napi_schedule
  void napi_schedule_local(Cpu& c, Napi& n);  // ____napi_schedule on this CPU's softnet_data
  bool napi_complete_done(Cpu& c, Napi& n, int work_done);
  Proc<void> net_rx_action(Ctx ctx);
  Proc<int> napi_poll(Ctx ctx, Napi& n, bool& repoll);  // __napi_poll
  void napi_watchdog(Cpu& c, Napi& n);
  Proc<void> napi_threaded_poll(Task& t, Napi& n);  // napi_threaded_poll kthread body
  /// napi_kthread_create() (net/core/dev.c v6.6): the kthread "napi/<dev>-<id>" running
  /// napi_threaded_poll(), asleep until the first ____napi_schedule() wakes it.
  Task& napi_kthread_create(Napi& n, const CpuMask& allowed, SchedPolicy policy, int nice, int rt_priority);
  /// dev_set_threaded()'s assign_bit(NAPI_STATE_THREADED, &napi->state, threaded): the next
  /// ____napi_schedule() wakes the NAPI's kthread (threaded) or raises NET_RX (not).
  static void napi_set_threaded(Napi& n, bool threaded) {
    if (threaded)
      n.state |= napi_state::kThreaded;
    else
      n.state &= ~napi_state::kThreaded;
  }

  // ---- driver and NIC (nic.cpp) -------------------------------------------------------------
  Proc<int> driver_poll(Ctx ctx, Napi& n, int budget);  // mlx5e_napi_poll-like
  /// netif_receive_skb_list(): the poll's gro_normal batch (driver, backlog), in order; `stamps`
  /// (set_stamps() only, else null) holds each skb's TrainStamps.
  void netif_receive_skb_list(Ctx ctx, const Skb* skbs, int n, const TrainStamps* stamps);
  /// A train that reaches NIC `nic` from the wire at `at` (>= now; per NIC in non-decreasing
  /// order, as its ingress port delivers them). Called by the workload when it sends the train.
  void nic_deliver(int nic, const RxEntry& e, Nanos at);
  /// A train that reaches NIC `nic` now.
  void nic_rx(int nic, const RxEntry& e);
  /// Brings `ch`'s ring up to the point the run has reached: the trains delivered to it that have
  /// arrived by now enter it (rx_enter). Every reader of the ring calls this first.
  void rx_sync(Channel& ch);
  /// The switch->server port: when a train of `wire_bytes` sent at `t` is fully received.
  Nanos nic_ingress(int nic, Nanos t, std::int64_t wire_bytes);
  void nic_arm_irq(Channel& ch);
  /// Whether an arrival on `ch` has an effect at its own time (an interrupt, a busy poller's
  /// wakeup), so that it needs its event: the CQ is armed or a busy poller spins on the NAPI.
  static bool rx_watched(const Channel& ch) { return ch.irq_armed || ch.napi.spinner != nullptr; }
  /// `ch` has just become watched (after an rx_sync): queue the arrival events its pending trains
  /// did without.
  void rx_watch(Channel& ch);
  void nic_completion(Channel& ch, std::int64_t n, bool tx);
  /// cq_period_mode cqe/eqe (nic_moder.cpp): raises the interrupt if a CQ generates an event now,
  /// else arms the coalescing timer for the earlier CQ deadline.
  void nic_coal_check(Channel& ch);
  /// mlx5e_napi_poll() after napi_complete_done(): DIM samples, then both CQs armed.
  void nic_arm_cqs(Channel& ch);
  /// Moves TX completions whose packet has left the wire into tx_pending; returns how many.
  std::int64_t tx_collect(Channel& ch);
  void tx_schedule_event(Channel& ch);
  void nic_fire_irq(Channel& ch);
  int txq_of_cpu(const Nic& nic, int cpu) const;
  void nic_transmit(Ctx ctx, Socket& s, std::int64_t bytes, bool ack_only);

  // ---- sockets (socket.cpp) -----------------------------------------------------------------
  void netif_receive_skb(Ctx ctx, const Skb& skb, const TrainStamps* st);  // -> RPS backlog or tcp_v4_rcv
  /// Latency attribution: the data train `st` (null: one that met no ring) reached `s`'s receive queue now.
  void stamp_delivery(Socket& s, const TrainStamps* st);
  /// Latency attribution: the last data train that reached socket `sock` (set_stamps() on).
  const RxPath& last_rx(int sock);
  /// Latency attribution of requests pipelined on a connection: from now on socket `sock` logs each
  /// data train's RxPath with rcv_nxt after it (set_stamps() on), until path_through() passes it.
  void keep_path_log(int sock);
  /// The RxPath of the train that brought `sock`'s stream up to byte `end` (rcv_nxt counts from
  /// 0); the trains before it leave the log. The socket's last train's when it keeps no log or
  /// the log is empty.
  RxPath path_through(int sock, std::int64_t end);
  Nanos skb_cost(const Skb& skb, int cpu);  // protocol cost charged before delivery on `cpu`
  void sk_data_ready(Ctx ctx, Socket& s);
  /// ep_poll(): timeout -1 blocks, 0 returns at once (the application's own busy loop).
  /// With `owed`, the call returns as the transfer of the events begins and leaves its CPU time
  /// (ep_send_events, and the syscall entry when events were already queued) in *owed: the caller
  /// charges it as the first part of its next exec_chain(), so that a handler that starts at once
  /// costs no separate segment. Without it, epoll_wait() returns after that time.
  /// `co_await k.epoll_wait(...)` gives the number of events. The common call (with `owed`, a
  /// blocking timeout, no busy polling) needs no coroutine of its own: events already queued are
  /// taken without suspending, and otherwise the syscall entry's segment ends in ep_poll()'s wait
  /// (Task::ep_poll), so the caller is resumed once, with events. Every other call runs
  /// ep_poll_proc().
  struct EpollWaitAwait {
    Kernel& k;
    Task& t;
    Epoll& ep;
    int maxevents;
    std::vector<int>& out;
    int timeout;
    Nanos* owed;
    Nanos entry = 0;  // the syscall entry's cost, when it is still owed (events were queued)
    Proc<int> proc;   // the general path, if taken
    bool await_ready();
    std::coroutine_handle<> await_suspend(std::coroutine_handle<> h);
    int await_resume();
  };
  EpollWaitAwait epoll_wait(Task& t, Epoll& ep, int maxevents, std::vector<int>& out, int timeout = -1,
                            Nanos* owed = nullptr) {
    return EpollWaitAwait{*this, t, ep, maxevents, out, timeout, owed, 0, {}};
  }
  /// `expiry`: the hrtimer's expiry of a timed wait (epoll_pwait2()), kNever for none.
  Proc<int> ep_poll_proc(Task& t, Epoll& ep, int maxevents, std::vector<int>& out, int timeout, Nanos* owed,
                         Nanos expiry = kNever);
  /// epoll_pwait2() with a relative timeout of `timeout_ns` > 0: ep_poll() sleeps with
  /// schedule_hrtimeout_range(timeout, slack), and the hrtimer interrupt on the sleeper's CPU wakes
  /// it at the range's end (select_estimate_accuracy()'s slack after the timeout) unless events
  /// came first. Returns the events, 0 when it timed out with none.
  Proc<int> epoll_pwait2(Task& t, Epoll& ep, int maxevents, std::vector<int>& out, Nanos timeout_ns,
                         Nanos* owed = nullptr) {
    return ep_poll_proc(t, ep, maxevents, out, -1, owed, now() + select_estimate_accuracy(t, timeout_ns) + timeout_ns);
  }
  /// epoll_wait() on an epoll that also watches a timerfd armed for `expiry` (libevent's precise
  /// timer): timerfd's hrtimer has no slack, so the wait ends at `expiry` exactly, through the
  /// timer interrupt on the sleeper's CPU, unless events came first. Returns 0 when it expired.
  Proc<int> epoll_wait_until(Task& t, Epoll& ep, int maxevents, std::vector<int>& out, Nanos expiry) {
    return ep_poll_proc(t, ep, maxevents, out, -1, nullptr, expiry);
  }
  /// select_estimate_accuracy() (fs/select.c v6.6): the slack of a `timeout_ns` wait by `t`.
  static Nanos select_estimate_accuracy(const Task& t, Nanos timeout_ns);
  /// The running task `t`, in ep_poll()'s wait (Task::ep_poll), is about to resume: true if its
  /// ready list is still empty and it has gone back to sleep on ep->wq instead.
  bool ep_poll_wait_again(Task& t);
  /// epoll_wait()'s syscall entry and ep_poll() before it reads the ready list.
  Nanos ep_poll_entry_ns() const { return costs_.syscall_ns + costs_.epoll_wait_ns; }
  /// The application's own busy loop, after an epoll_wait(timeout 0) by `t` came back empty: it
  /// calls epoll_wait(0) again and again, each empty call ep_poll_entry_ns() of system time that
  /// reads the ready list halfway through. Returns what the first call to find events returns, as
  /// epoll_wait() (with `owed`, the transfer and the call's return are left owed). The
  /// loop is preemptible: when the scheduler wants the CPU it yields, then goes on calling.
  /// `until`: the application stops calling at that time (its next timed send is due) and 0 is
  /// returned.
  Proc<int> epoll_wait_busy_loop(Task& t, Epoll& ep, int maxevents, std::vector<int>& out, Nanos* owed = nullptr,
                                 Nanos until = kNever);
  /// ep_send_events(): scans the ready list, re-polls each item (ep_item_poll()) and moves up to
  /// `maxevents` ready sockets to `out`, dropping the items no longer ready; a level-triggered item
  /// goes back on the ready list at once, an EPOLLONESHOT one is disarmed. Returns the transfer's
  /// CPU cost (epoll_event_ns per event).
  Nanos ep_send_events(Task& t, Epoll& ep, int maxevents, std::vector<int>& out);
  /// ep_events_available() as ep_poll() decides on it (with the ep_send_events() that finds only
  /// stale items and loops back): whether the ready list holds an item still ready, dropping the
  /// ones at its head that are not.
  bool ep_events_available(Epoll& ep);
  Proc<std::int64_t> sys_recv(Task& t, Socket& s, std::int64_t max_bytes);
  /// sys_recv() in two halves, for callers that chain its CPU time with other work (exec_chain):
  /// recv_take() dequeues the data now (tcp_recvmsg) and returns the bytes and the syscall's
  /// cost; recv_done() runs after that cost (tcp_cleanup_rbuf's window update, flow-control
  /// sockets only).
  std::int64_t recv_take(Task& t, Socket& s, std::int64_t max_bytes, Nanos* cost);
  Proc<void> recv_done(Task& t, Socket& s, std::int64_t n);
  /// The CPU cost of sys_send() (tcp_sendmsg, TSO, copy); its transmit follows that cost.
  Nanos send_cost(Task& t, Socket& s, std::int64_t bytes);
  /// A blocking recv() without epoll: sk_busy_loop() if SO_BUSY_POLL, then sk_wait_data() until the
  /// receive queue has data, then tcp_recvmsg (tcp_recvmsg_locked, net/ipv4/tcp.c).
  Proc<std::int64_t> sys_recv_wait(Task& t, Socket& s, std::int64_t max_bytes);
  Proc<void> sys_send(Task& t, Socket& s, std::int64_t bytes);
  /// epoll_ctl(EPOLL_CTL_ADD) at setup (no CPU time): ep_insert() with interest `events`; an item
  /// already ready under it goes on the ready list.
  void epoll_ctl_add(Epoll& ep, Socket& s, std::uint8_t events = kEpollIn);
  /// ep_item_poll(): tcp_poll()'s events of `s` under its interest mask (level-triggered): kEpollIn
  /// with data queued, kEpollOut while sk_stream_is_writeable().
  /// tcp_poll() marks an unwritable TCP socket SOCK_NOSPACE, so that the ACK that frees space wakes
  /// its poller (tcp_check_space()).
  static std::uint8_t ep_item_poll(const Socket& s) {
    const bool writable = sk_stream_is_writeable(s);
    if (!writable && s.tcp) s.tcp->nospace = true;
    return static_cast<std::uint8_t>(s.ep_events & ((s.rx_avail > 0 ? kEpollIn : 0) | (writable ? kEpollOut : 0)));
  }
  /// sk_stream_is_writeable(): free send space >= half of what is queued (sk_stream_wspace >=
  /// sk_stream_min_wspace, as tcp_ack()'s write-space check); a socket without flow control
  /// (sndbuf 0) is always writable.
  static bool sk_stream_is_writeable(const Socket& s) {
    if (s.tcp) return tcp_stream_is_writeable(*s.tcp);
    if (s.sndbuf <= 0) return true;
    const std::int64_t queued = s.snd_nxt - s.snd_una;
    return std::min(s.sndbuf, s.snd_wnd) - queued >= queued / 2;
  }
  /// epoll_ctl(EPOLL_CTL_MOD)'s CPU time on the caller: syscall entry/exit + ep_modify().
  Nanos epoll_ctl_ns() const { return costs_.syscall_ns + costs_.epoll_ctl_ns; }
  /// ep_modify() (fs/eventpoll.c v6.6), its effect only: the new interest mask, then ep_item_poll()
  /// and, if ready and not linked, list_add_tail() on the ready list and wake_up(&ep->wq) from
  /// `cpu`. For callers that charge epoll_ctl_ns() in their own exec_chain(), this is applied
  /// when that time has run.
  void ep_modify(Epoll& ep, Socket& s, std::uint8_t events, int cpu);
  /// epoll_ctl(EPOLL_CTL_MOD) by the running task `t`: epoll_ctl_ns() of system time, then ep_modify().
  Proc<void> epoll_ctl_mod(Task& t, Epoll& ep, Socket& s, std::uint8_t events);

  // ---- busy polling (busy_poll.cpp) -----------------------------------------------------------
  /// Spin (CPU busy, preemption disabled) until woken by: an RX completion or completion of
  /// `napi`, an event on `ep`, data on `sk` (sk_busy_loop_end), need_resched, or `deadline`. An empty busy-poll
  /// iteration changes nothing, so spinning is modelled as one wait rather than thousands of empty polls.
  struct SpinAwait {
    Kernel& k;
    Task& t;
    Napi* napi;
    Epoll* ep;
    Nanos deadline;
    CpuClass cls;
    Socket* sk = nullptr;
    bool await_ready() const noexcept;
    void await_suspend(std::coroutine_handle<> h);
    void await_resume() noexcept;
  };
  SpinAwait spin_until(Task& t, Napi* napi, Epoll* ep, Nanos deadline, CpuClass cls = CpuClass::kBusySpin,
                       Socket* sk = nullptr) {
    return SpinAwait{*this, t, napi, ep, deadline, cls, sk};
  }
  void spin_wake(Task& t);
  /// napi_busy_loop(): poll `n` from task context until `ep` has events (or the socket `s` has
  /// data) or `timeout` passes; with PREFER_BUSY_POLL asks softirq to back off.
  Proc<void> napi_busy_loop(Task& t, Napi& n, Epoll* ep, Socket* s, Nanos timeout, bool prefer, int budget);
  Proc<void> busy_poll_stop(Task& t, Napi& n, bool prefer, int budget);
  /// ep_busy_loop(): true if events became available.
  Proc<bool> ep_busy_loop(Task& t, Epoll& ep);
  /// ep_busy_loop_on() (fs/eventpoll.c v6.9): busy polling is on for `ep` (EPIOCSPARAMS
  /// busy_poll_usecs or prefer_busy_poll, or net_busy_loop_on()), whether or not it has a NAPI yet.
  bool ep_busy_poll_on(const Epoll& ep) const;
  /// Whether ep_busy_loop() would poll or spin now: busy polling on and a NAPI learned, or the
  /// ready-list-only spin (event_poll_only) with a busy-poll time.
  bool ep_busy_loop_on(const Epoll& ep) const;
  /// The epoll's busy-poll time: EPIOCSPARAMS busy_poll_usecs, else net.core.busy_poll.
  std::int64_t ep_busy_poll_usecs(const Epoll& ep) const;
  void napi_suspend_irqs(Cpu& c, int napi_id);
  void napi_resume_irqs(Cpu& c, int napi_id);
  EpollParams& epoll_defaults() { return epoll_defaults_; }
  /// sk_busy_loop(): a blocking read on a socket with SO_BUSY_POLL polls its NAPI from task
  /// context for up to sk_ll_usec before sleeping (tcp_recvmsg_locked, include/net/busy_poll.h).
  Proc<void> sk_busy_loop(Task& t, Socket& s);

  // ---- listening sockets and futexes (inet_csk.cpp) -------------------------------------------
  /// listen(): a listening socket whose accept queue holds `backlog` (capped at somaxconn) + 1.
  Listener& listen(std::int64_t backlog);
  Listener& listener(int id) { return *listeners_[static_cast<std::size_t>(id)]; }
  /// `s` becomes a connection of `l` with no connection yet: its next packet is a SYN.
  void listen_child(Listener& l, Socket& s);
  /// epoll_ctl(EPOLL_CTL_ADD) of the listen fd on `ep` (EPOLLEXCLUSIVE if `exclusive`): the
  /// Socket that stands for the item, reported by epoll_wait() while a connection waits.
  Socket& listen_epoll_add(Listener& l, Epoll& ep, bool exclusive);
  static bool acceptq_is_full(const Listener& l);
  /// Tasks sock_def_readable() on `l` would wake now.
  int listen_wakeups(const Listener& l) const;
  /// A packet of a listener's connection that is not established (SYN, handshake-completing ACK).
  void tcp_listen_rcv(Ctx ctx, Socket& s, const Skb& skb, const TrainStamps* st);
  Nanos listen_rcv_cost(const Socket& s, const Skb& skb) const;
  /// The listener's sk_data_ready(): ep_poll_callback() per item, accept() waiters (exclusive).
  void listen_data_ready(Ctx ctx, Listener& l);
  /// The listen fd items' readiness (rx_avail = accept queue length) as a re-poll reads it.
  void listen_sync_items(Listener& l);
  /// inet_csk_accept()'s dequeue without CPU time: the oldest established child, or -1.
  int accept_take(Listener& l);
  /// accept4() by `t`: syscall_ns, then the child (accept_ns more) or -1 (EAGAIN) with `block`
  /// null; with `block` it sleeps there (exclusive, FIFO) until a child is queued.
  Proc<int> sys_accept(Task& t, Listener& l, WaitQueue* block);
  /// close() of an accepted connection: it leaves its epoll, sends the FIN, and its next packet
  /// is a new connection's SYN. The caller charges close_ns().
  void tcp_close(Ctx ctx, Socket& s);
  Nanos close_ns() const { return costs_.syscall_ns + costs_.tx_ack_ns; }
  /// futex(FUTEX_WAIT/FUTEX_WAKE)'s CPU time on the caller beyond try_to_wake_up().
  Nanos futex_ns() const { return costs_.syscall_ns + costs_.futex_ns; }
  /// futex_wake(): wakes up to `nr` of q's waiters in order; returns how many.
  int futex_wake(FutexQueue& q, int nr, int this_cpu);

  // ---- XDP and AF_XDP (xsk.cpp) ----------------------------------------------------------------
  /// Attaches an XDP program to `ch` (or sets its action): `action` for flows without an XSK.
  XdpProg& xdp_attach(Channel& ch, XdpAction action);
  /// An XSK bound to `ch` (an XDP program is attached if there is none).
  Xsk& xsk_bind(Channel& ch, bool zerocopy, bool need_wakeup);
  Xsk& xsk(int id) { return *xsks_[static_cast<std::size_t>(id)]; }
  /// The program redirects flow `sock`'s packets on the XSK's queue to it (the xsks_map entry).
  void xsk_redirect(Xsk& xs, int sock);
  /// The driver's poll: the program's verdict on train `e`, its cost added to *cost; *stall: an
  /// XSK had no fill-ring frame for it (it stays in the ring).
  XdpAction xdp_rx(Ctx ctx, Channel& ch, const RxEntry& e, Nanos* cost, bool* stall);
  void xdp_transmit(Ctx ctx, Channel& ch, int sock, std::uint32_t bytes);
  void xdp_do_flush(Ctx ctx, Channel& ch);
  /// mlx5e_xsk_tx() in the poll: the XSK's TX ring; *busy if descriptors are left.
  Nanos xsk_tx_poll(Ctx ctx, Channel& ch, bool* busy);
  /// The application writes `f` to the TX ring / puts `frames` on the fill ring.
  void xsk_tx_post(Xsk& xs, const XskFrame& f);
  void xsk_fill(Xsk& xs, std::int64_t frames);
  void xsk_wakeup(Xsk& xs, int this_cpu);
  bool xsk_no_wakeup(const Xsk& xs) const;
  Proc<void> xsk_busy_poll_once(Task& t, Xsk& xs);
  /// sendto(fd, NULL, 0, MSG_DONTWAIT): the TX kick.
  Proc<void> xsk_sendto(Task& t, Xsk& xs);
  /// recvfrom(fd, NULL, 0, MSG_DONTWAIT): busy poll or RX kick.
  Proc<void> xsk_recvfrom(Task& t, Xsk& xs);
  /// poll() on the XSK fd until its RX ring has entries.
  Proc<void> xsk_poll_wait(Task& t, Xsk& xs);

  // ---- RPS / RFS (rps.cpp) --------------------------------------------------------------------
  RpsState& enable_rps();
  const RpsState* rps() const { return rps_.get(); }
  int get_rps_cpu(int this_cpu, const Channel& ch, const Skb& skb);
  /// get_rps_cpu() for one RX queue's rps_map and rps_flow_table (either may be null).
  int get_rps_cpu_rxq(int this_cpu, const std::vector<int>* map, std::vector<RpsState::DevFlow>* table, const Skb& skb);
  /// skb_flow_limit(): true if the skb must be dropped (its flow fills more than half the history).
  bool skb_flow_limit(SoftnetData& sd, const Skb& skb, std::int64_t qlen);
  void init_flow_limit();  // flow_limit_cpu_bitmap -> per-CPU sd_flow_limit (at boot)
  /// `st`: the skb's TrainStamps (set_stamps() only; null: it met no ring, as lo's).
  void enqueue_to_backlog(int this_cpu, const Skb& skb, int cpu, const TrainStamps* st);
  void net_rps_send_ipis(Cpu& c);
  Proc<int> process_backlog(Ctx ctx, Napi& n, int quota);
  /// Protocol processing of a batch of skbs (cost charged first, then delivered).
  Proc<void> deliver_skbs(Ctx ctx, const Skb* skbs, int n, const TrainStamps* stamps);

  // ---- flow-control sockets (socket.cpp): stream over a NIC, loopback ---------------------------
  /// tcp_ack() for a flow-control socket: cumulative `ack_seq` (mod 2^32), window read from the peer.
  void tcp_ack(Ctx ctx, Socket& s, std::int64_t ack_seq);
  /// tcp_event_ack_sent() + tcp_select_window() of a flow-control socket (every segment it sends
  /// carries the ACK): rcv_wup = rcv_nxt, rcv_wnd = free receive buffer; returns the bytes newly acked.
  std::int64_t tcp_event_ack_sent(Socket& s);

  // ---- loopback device (loopback.cpp) -------------------------------------------------------
  /// A TCP connection over lo: two sockets, each the other's lo_peer; returns {client, server}.
  std::pair<int, int> lo_connect(std::uint32_t hash_client, std::uint32_t hash_server);
  /// loopback_xmit() -> __netif_rx(): the skbs of one transmit enqueued to a backlog (local, or
  /// RPS/RFS's choice for lo). The caller pays the CPU cost (lo_xmit_skbs() skbs of rps_enqueue_ns).
  void loopback_xmit(Ctx ctx, Socket& s, std::int64_t bytes, bool ack_only);
  std::int64_t lo_xmit_skbs(std::int64_t bytes) const;
  std::uint64_t lo_packets() const { return lo_packets_; }
  std::uint64_t delayed_acks() const { return delayed_acks_; }

  // ---- TCP (tcp_output.cpp, tcp_input.cpp, tcp_recovery.cpp, tcp_timer.cpp, tcp_cubic.cpp) ------
  /// Runs socket `s`'s connection (over a NIC, to another simulated Linux host) with the kernel's
  /// TCP (tcp.hpp): established, the handshake's RTT sample `syn_rtt` taken, `peer_window` the
  /// window the peer offers, nothing sent yet.
  void tcp_connect(Socket& s, Nanos syn_rtt, std::int64_t peer_window);
  /// The window a connection's SYN offers (tcp_select_initial_window()): half of tcp_rmem[1],
  /// rounded down to the MSS when above it, at most the unscaled field's 65535.
  std::int64_t tcp_initial_window() const {
    const std::int64_t mss = kp_.net.mss;
    std::int64_t space = tcp_win_from_space(kp_.tcp.rmem_default);
    if (space > mss) space = space / mss * mss;
    return std::min<std::int64_t>(space, 65535);
  }
  /// tcp_rcv_space_adjust(): after a read, grow sk_rcvbuf (and window_clamp) to twice what the
  /// reader copied in the last receiver-measured RTT.
  void tcp_rcv_space_adjust(Socket& s, TcpSock& tp);
  const TcpStats& tcp_stats() const { return tcp_stats_; }
  /// tcp_sendmsg(): `bytes` more to send; tcp_push() sends what cwnd, window, TSQ and pacing allow.
  void tcp_sendmsg(Ctx ctx, Socket& s, std::int64_t bytes);
  /// What a non-blocking send() of `bytes` copies: all of it on a socket without the kernel's TCP;
  /// on one with it, size-goal skbs while sk_stream_memory_free() (the last may overshoot
  /// sk_sndbuf, as tcp_sendmsg_locked() checks before each new skb), setting SOCK_NOSPACE when it
  /// stops short (wait_for_space). 0 is EAGAIN.
  std::int64_t tcp_send_room(Socket& s, std::int64_t bytes);
  /// __sk_stream_is_writeable(): sk_stream_wspace() >= sk_stream_min_wspace() (free space at
  /// least half of sk_wmem_queued).
  static bool tcp_stream_is_writeable(const TcpSock& tp) {
    const std::int64_t queued = tp.write_seq - tp.snd_una;
    return tp.sndbuf - queued >= queued >> 1;
  }
  /// tcp_rcv_established(): the skb's ACK, its data, then what the ACK lets out and the ACK owed;
  /// `st` its TrainStamps (set_stamps() only).
  void tcp_rcv_established(Ctx ctx, Socket& s, const Skb& skb, const TrainStamps* st);
  /// tcp_cleanup_rbuf(): after recvmsg() copied `copied` bytes (an ACK held back, a window update).
  void tcp_cleanup_rbuf(Ctx ctx, Socket& s, std::int64_t copied);
  /// CPU time of TCP work done inside another piece of work (an ACK's transmits, a retransmission),
  /// charged right after it by whoever ran it.
  Nanos take_tcp_owed() {
    const Nanos o = tcp_owed_;
    tcp_owed_ = 0;
    return o;
  }
  /// tcp_wfree(): the driver reaped the TX completion of a TCP skb of `truesize` (TSQ release).
  void tcp_wfree(Ctx ctx, int sock, std::int64_t truesize) {
    TcpSock& tp = *socket(sock).tcp;
    tp.wmem_alloc -= truesize;
    if (tp.tsq_throttled) tcp_tsq_release(ctx, tp);
  }
  void tcp_tsq_release(Ctx ctx, TcpSock& tp);
  /// tcp_cleanup_rbuf() may have an ACK to send after a read of `copied` bytes.
  bool tcp_cleanup_rbuf_wanted(const Socket& s, const TcpSock& tp, std::int64_t copied) const {
    return copied > 0 && ((tp.ack_pending & ack_state::kSched) ||
                          2 * std::max<std::int64_t>(0, s.rcv_wup + s.rcv_wnd - s.rcv_nxt) <= tp.window_clamp);
  }
  /// TIMER_SOFTIRQ's TCP timers due on ctx's CPU, and TASKLET_SOFTIRQ's TSQ tasklet.
  Proc<void> run_timer_softirq(Ctx ctx);
  Proc<void> tcp_tasklet_func(Ctx ctx);
  bool tcp_timers_due(int cpu) const;
  bool tcp_fq() const { return fq_; }
  static std::uint32_t tcp_packets_in_flight(const TcpSock& tp) {
    return tp.packets_out - (tp.sacked_out + tp.lost_out) + tp.retrans_out;
  }
  static bool tcp_in_cwnd_reduction(const TcpSock& tp) {
    return tp.ca_state == TcpCaState::kCwr || tp.ca_state == TcpCaState::kRecovery;
  }
  /// The switch port towards NIC `nic`, then its ingress port, then the ring: segments that do not
  /// fit the port's buffer (NicParams::switch_buffer_bytes) are tail-dropped. `e` arrives at the
  /// switch at `at_switch` in `wire_bytes`.
  void switch_to_nic(int nic, const RxEntry& e, Nanos at_switch);

  // ---- results ------------------------------------------------------------------------------
  /// Snapshot of every counter the results report (taken at warm-up end and at the end).
  using Snapshot = napisim::Snapshot;
  Snapshot snapshot();

 private:
  /// "if (ep_item_poll(epi) && !ep_is_linked(epi)) list_add_tail(&epi->rdllink, &ep->rdllist)"
  /// (fs/eventpoll.c v6.6): ep_insert() and ep_modify() on epoll_ctl(). Returns whether the item
  /// was linked now.
  static bool ep_link_if_ready(Epoll& ep, Socket& s) {
    if (!ep_item_poll(s) || s.on_ready_list) return false;
    ep.ready.push_back(s.id);
    s.on_ready_list = true;
    return true;
  }
  /// kthread_create()'s new thread: asleep, its body resumed by its first wakeup.
  void kthread_init(Task& t, CpuClass cls);
  enum EventKind : std::uint32_t {
    kSegDone = 1,
    kIrq = 2,
    kCoalTimer = 3,
    kNapiTimer = 4,
    kTickTimer = 5,
    kTxDone = 6,
    kSpinDeadline = 7,
    kRxArrive = 8,
    kSleepTimer = 9,
    kTcpTimer = 10  // arg: tcp_timer_code()
  };
  // ---- TCP internals ----
  enum TcpTimerKind : int { kTcpXmitTimer = 0, kTcpDelackTimer = 1, kTcpCompackTimer = 2, kTcpPacingTimer = 3 };
  static std::uint64_t tcp_timer_code(int sock, int which) {
    return (static_cast<std::uint64_t>(sock) << 2) | static_cast<std::uint64_t>(which);
  }
  struct TcpCpu {
    Fifo<std::uint64_t> timers{16};  // expired TCP timers (tcp_timer_code) for TIMER_SOFTIRQ
    Fifo<int> tsq{16};               // the TSQ tasklet's sockets
    Nanos timer_irq_at = -1;         // the timer interrupt raised for them
  };
  static std::int64_t tcp_skb_truesize(std::int64_t len);
  std::int64_t tcp_clock_us() const;
  // tcp_output.cpp
  bool tcp_write_xmit(Ctx ctx, Socket& s, int push_one);
  /// tcp_transmit_skb() of [seq, seq + len): new data (rtx null) or a retransmission of *rtx.
  /// `probe_follows`: tcp_write_xmit() calls tcp_schedule_loss_probe() after it.
  Nanos tcp_transmit_data(Ctx ctx, Socket& s, std::int64_t seq, std::int64_t len, TcpSkb* rtx,
                          bool probe_follows = false);
  Nanos tcp_xmit(Ctx ctx, Socket& s, std::int64_t seq, std::uint32_t len, std::uint32_t segs, std::int64_t truesize,
                 Nanos depart);
  Nanos tcp_dev_xmit(Socket& s, int txq, const WireTrain& tr, std::int64_t truesize);
  void tcp_fq_release(Socket& s);
  void tcp_build_header(Socket& s, TcpSock& tp, std::int64_t seq, TcpHdr& th);
  /// tcp_space(): the window the receive buffer has room for, less what waits in it (the unread
  /// data and the out-of-order queue, counted in payload bytes).
  static std::int64_t tcp_space(const Socket& s, const TcpSock& tp) {
    return tp.window_clamp - s.rx_avail - tp.ofo_bytes;
  }
  std::int64_t tcp_space_window(Socket& s, TcpSock& tp);
  void tcp_grow_window(Socket& s, TcpSock& tp, const Skb& skb);
  static void tcp_rcv_rtt_update(TcpSock& tp, std::int64_t sample_us, bool win_dep);
  void tcp_rcv_rtt_measure(Socket& s, TcpSock& tp);
  void tcp_rcv_rtt_measure_ts(Socket& s, TcpSock& tp, const Skb& skb);
  /// tcp_time_stamp(): the timestamps option's clock, ms (TCP_TS_HZ 1000).
  std::uint32_t tcp_time_stamp() const { return static_cast<std::uint32_t>(now() / 1000000); }
  std::int64_t tcp_select_window(Socket& s, TcpSock& tp);
  void tcp_event_ack_sent(Socket& s, TcpSock& tp);
  void tcp_send_ack(Ctx ctx, Socket& s);
  void tcp_send_delayed_ack(Ctx ctx, Socket& s);
  bool tcp_schedule_loss_probe(TcpSock& tp, bool advancing_rto);
  std::int64_t tcp_rto_delta_us(const TcpSock& tp) const;
  void tcp_send_loss_probe(Ctx ctx, Socket& s);
  int tcp_retransmit_skb(Ctx ctx, Socket& s, std::size_t i, std::uint32_t segs);
  void tcp_xmit_retransmit_queue(Ctx ctx, Socket& s);
  void tcp_cwnd_restart(TcpSock& tp, std::int64_t delta);
  std::uint32_t tcp_current_ssthresh(const TcpSock& tp) const;
  void tcp_update_pacing_rate(TcpSock& tp);
  std::uint32_t tcp_tso_segs(const TcpSock& tp) const;
  void tcp_sndbuf_expand(TcpSock& tp);
  void tcp_check_space(Ctx ctx, Socket& s);
  std::uint32_t tcp_cwnd_test(const TcpSock& tp) const;
  bool tcp_tso_should_defer(const TcpSock& tp, std::int64_t skb_len, bool is_tail, bool* is_cwnd_limited,
                            bool* is_rwnd_limited, std::uint32_t max_segs) const;
  bool tcp_small_queue_check(TcpSock& tp, std::int64_t len, int factor);
  void tcp_cwnd_validate(TcpSock& tp, bool is_cwnd_limited);
  // tcp_input.cpp
  void tcp_ack(Ctx ctx, Socket& s, const Skb& skb);
  int tcp_sacktag_write_queue(TcpSock& tp, const TcpHdr& th, std::uint32_t* delivered, Nanos* sack_sent);
  int tcp_clean_rtx_queue(TcpSock& tp, std::int64_t prior_snd_una, std::uint32_t* delivered, Nanos sack_sent);
  void tcp_rtt_estimator(TcpSock& tp, std::int64_t mrtt_us);
  void tcp_set_rto(TcpSock& tp);
  void tcp_process_tlp_ack(TcpSock& tp, std::int64_t ack, int flag);
  void tcp_set_ca_state(TcpSock& tp, TcpCaState s);
  void tcp_init_cwnd_reduction(TcpSock& tp);
  void tcp_end_cwnd_reduction(TcpSock& tp);
  void tcp_try_keep_open(TcpSock& tp);
  void tcp_enter_recovery(TcpSock& tp);
  void tcp_cwnd_reduction(TcpSock& tp, std::uint32_t newly_acked_sacked, int flag);
  void tcp_fastretrans_alert(TcpSock& tp, std::int64_t prior_snd_una, int* flag, bool* rexmit);
  void tcp_identify_packet_loss(TcpSock& tp, int* flag);
  bool tcp_time_to_recover(const TcpSock& tp) const { return tp.lost_out > 0; }
  void tcp_data_queue(Ctx ctx, Socket& s, const Skb& skb, const TrainStamps* st);
  /// In-order data to the receive queue; `st`: the TrainStamps of the skb that made it readable.
  void tcp_queue_rcv(Socket& s, std::int64_t n, const TrainStamps* st);
  void tcp_data_queue_ofo(TcpSock& tp, std::int64_t seq, std::int64_t end);
  void tcp_ofo_queue(Socket& s, TcpSock& tp, const TrainStamps* st);
  void tcp_incr_quickack(Socket& s, TcpSock& tp);
  void tcp_enter_quickack_mode(TcpSock& tp);
  void tcp_event_data_recv(Socket& s, TcpSock& tp, const Skb& skb);
  void tcp_ack_snd_check(Ctx ctx, Socket& s, bool ofo_possible);
  // tcp_recovery.cpp
  void tcp_rack_advance(TcpSock& tp, std::uint8_t sacked, std::int64_t end_seq, Nanos xmit_time);
  std::int64_t tcp_rack_reo_wnd(const TcpSock& tp) const;
  std::int64_t tcp_rack_detect_loss(TcpSock& tp);
  void tcp_mark_skb_lost(TcpSock& tp, TcpSkb& skb);
  bool tcp_rack_mark_lost(TcpSock& tp);
  void tcp_rack_reo_timeout(Ctx ctx, Socket& s);
  // tcp_timer.cpp
  /// sk_reset_timer() -> mod_timer(): `t` of socket `tp` due at jiffy `expires_j`, on this CPU.
  void tcp_reset_timer(TcpSock& tp, TcpTimer& t, int which, std::int64_t expires_j) {
    t.expires_j = expires_j;
    t.armed_j = jiffies();
    t.cpu = tcp_cpu_now_;
    // A queued event due no later fires first, and re-arms itself (tcp_timer_event()).
    if (t.ev.armed() && t.ev.expires() <= expires_j * tick_ns_) return;
    tcp_arm_timer(tp, t, which);
  }
  /// The event of wheel timer `t` at its bucket's jiffy, if none is queued before it.
  void tcp_arm_timer(TcpSock& tp, TcpTimer& t, int which);
  /// inet_csk_reset_xmit_timer(): what the retransmit timer is for, and `when_j` from now (at most
  /// TCP_RTO_MAX).
  void tcp_reset_xmit_timer(TcpSock& tp, TcpXmitTimer what, std::int64_t when_j) {
    tp.pending = what;
    tcp_reset_timer(tp, tp.xmit_timer, kTcpXmitTimer, jiffies() + std::min(when_j, tcp_rto_max_j_));
  }
  void tcp_rearm_rto(TcpSock& tp);
  bool tcp_timer_needed(const TcpSock& tp, int which) const;
  TcpTimer& tcp_timer_of(TcpSock& tp, int which);
  void tcp_timer_event(std::uint64_t code);
  void tcp_write_timer_handler(Ctx ctx, Socket& s);
  void tcp_retransmit_timer(Ctx ctx, Socket& s);
  void tcp_enter_loss(TcpSock& tp);
  void tcp_delack_timer_handler(Ctx ctx, Socket& s);
  // tcp_cubic.cpp
  void bictcp_hystart_reset(TcpSock& tp);
  void cubictcp_init(TcpSock& tp);
  void cubictcp_state(TcpSock& tp, TcpCaState s);
  void cubictcp_cwnd_event_tx_start(TcpSock& tp);
  std::uint32_t cubictcp_recalc_ssthresh(TcpSock& tp);
  void bictcp_update(TcpSock& tp, std::uint32_t cwnd, std::uint32_t acked);
  std::uint32_t tcp_slow_start(TcpSock& tp, std::uint32_t acked);
  void tcp_cong_avoid_ai(TcpSock& tp, std::uint32_t w, std::uint32_t acked);
  bool tcp_is_cwnd_limited(const TcpSock& tp) const;
  void cubictcp_cong_avoid(TcpSock& tp, std::uint32_t acked);
  void hystart_update(TcpSock& tp, std::uint32_t delay);
  void cubictcp_acked(TcpSock& tp, std::int64_t rtt_us);

  /// A train enters the ring (or is dropped); `observed`: its NAPI's waited time as of `at`, as
  /// napi_wait_observe() kept it (set_stamps()).
  void rx_enter(Channel& ch, const RxEntry& e, Nanos at, const ClassTimes* observed = nullptr);
  /// Latency attribution: the TrainStamps of `e`, taken by `n`'s poll that began at `poll_start`.
  TrainStamps stamp_rx(const Napi& n, const RxEntry& e, Nanos poll_start) const;
  /// A channel as an event or IRQ argument (NIC index << 20 | queue), and back.
  static std::uint64_t channel_code(const Channel& ch);
  Channel& channel_of(std::uint64_t code) { return *nics_[code >> 20]->channels[code & 0xfffff]; }
  /// The queue RSS steers socket `sock`'s packets to on NIC `nic`.
  Channel& rx_channel(int nic, int sock) {
    return *nics_[static_cast<std::size_t>(nic)]->channels[static_cast<std::size_t>(socket(sock).rx_queue)];
  }
  /// The highest active level of `c` (2 hardirq, 1 softirq, 0 task, -1 idle) and its slot.
  static Slot* top_slot(Cpu& c, int* level) {
    if (c.hardirq_active) {
      *level = 2;
      return &c.hardirq;
    }
    if (c.softirq_active) {
      *level = 1;
      return &c.softirq;
    }
    *level = c.curr && c.curr->slot.active ? 0 : -1;
    return *level == 0 ? &c.curr->slot : nullptr;
  }
  static const Slot* top_slot(const Cpu& c, int* level) { return top_slot(const_cast<Cpu&>(c), level); }
  /// task_cpu() changes: under set_stamps() t's view folds what its old CPU did up to now.
  void set_task_cpu(Task& t, int cpu_id) {
    if (stamps_ && t.cpu != cpu_id) [[unlikely]]
      fold_task_view(t, cpu_id);
    t.cpu = cpu_id;
  }
  void fold_task_view(Task& t, int cpu_id);
  // Latency attribution of a device NAPI's waits for NET_RX (NapiStamps, set_stamps() only): it
  // was just scheduled and waits on CPU `cpu`; it is scheduled and not being polled; a poll of it
  // begins (the wait ends) or ends with it still scheduled (a wait resumes); its `waited` as of a
  // train's arrival `at` (`observed`: the value napi_wait_observe() kept for an inbound train).
  void napi_wait_begin(Napi& n, int cpu);
  static bool napi_waiting(const Napi& n);
  void napi_wait_poll(Napi& n);
  void napi_wait_resume(Napi& n);
  ClassTimes napi_waited_at(const Napi& n, Nanos at, const ClassTimes* observed) const;
  /// update_exec() of `c` is about to account (last_update, now]: keep the waited time as of each
  /// arrival in it of a train whose NAPI waits on c, as the train may enter the ring later (rx_sync).
  void napi_wait_observe(const Cpu& c);
  void update_exec_slow(Cpu& c);
  template <bool kTraced, bool kStamps>
  void update_exec_impl(Cpu& c);
  /// update_exec_slow() for a run with a trace or the attribution stamps.
  [[gnu::noinline]] void update_exec_observed(Cpu& c);
  /// Charges [c.last_update, until) to `cls` (and the trace, kTraced; the running task's own
  /// time, kStamps) and moves last_update.
  template <bool kTraced, bool kStamps>
  void account(Cpu& c, CpuClass cls, Nanos until);
  void arm_segment(Cpu& c);
  /// The per-CPU cache-state model (cache.cpp): c's owner stops running there; s's owner starts.
  void cache_leave(Cpu& c) { cache_leave(c, core_busy_ns(c)); }
  void cache_leave(Cpu& c, Nanos core_busy);
  void cache_enter(Cpu& c, Slot& s);
  /// Non-idle ns of c so far (accounted or not), and of its core's CPUs (c and its SMT sibling).
  Nanos busy_ns(const Cpu& c) const;
  Nanos core_busy_ns(const Cpu& c) const;
  /// A socket's write-shared fast-path lines written on `cpu`: what moving them from the core
  /// that wrote them last costs (cache.cpp).
  Nanos sk_touch(Socket& s, int cpu);
  void rearm(Cpu& c, Nanos at);
  void set_smt_busy(Cpu& c, bool busy);
  void start_hardirq(Cpu& c, std::uint64_t code);
  Proc<void> hardirq_body(Cpu& c, std::uint64_t code);
  void handle_irq(Cpu& c, std::uint64_t code);
  void hardirq_done(Cpu& c);
  void irq_exit(Cpu& c);
  /// do_softirq(): runs pending softirqs now unless in_interrupt() (4.9-6.4: or ksoftirqd is runnable).
  void do_softirq(Cpu& c);
  void start_softirq(Cpu& c);
  Proc<void> softirq_body(Cpu& c);
  void softirq_done(Cpu& c);
  Proc<void> ksoftirqd_body(Task& t, Cpu& c);
  bool can_preempt_now(const Cpu& c) const;
  void enqueue_task(Cpu& c, Task& t, unsigned flags);
  void dequeue_task(Cpu& c, Task& t, unsigned flags);
  /// add_nr_running() / sub_nr_running(): rq->nr_running from the two classes' queues, and the
  /// cpu's place in the overloaded set (rd->overload).
  void update_nr_running(Cpu& c);
  void check_preempt(Cpu& c, Task& t, int this_cpu);
  Task* pick_next_task(Cpu& c);
  /// load_balance() as napisim reduces it (called by newidle_balance() in schedule() and by
  /// rebalance_domains()): pull one runnable, cache-cold task from the busiest CPU of c's LLC to c.
  /// Returns whether one moved. Otherwise, with capacity_pressure, the active balance of a
  /// reduced-capacity CPU's lone task (push_active_balance()); `newly_idle` balances only while
  /// some CPU is overloaded (rd->overload).
  bool load_balance(Cpu& c, bool newly_idle);
  /// need_active_balance() for idle `dst`: the lone CFS task of a CPU whose capacity IRQ/RT time
  /// has cut (voluntary_active_balance(): check_cpu_capacity(), and below dst's by imbalance_pct)
  /// is pushed to dst by that CPU's stopper (stop_one_cpu_nowait()). v6.0+: the lowest such CPU of
  /// the LLC (sched_reduced_capacity() -> group_misfit_task); v5.10: the CPU busiest_core_queue()
  /// finds, whose running task is also pushed once dst's periodic balances have failed more than
  /// cache_nice_tries + 2 times in a row (nr_balance_failed; not counted when `newly_idle`).
  void push_active_balance(Cpu& dst, bool newly_idle);
  /// The test both eras share: src's capacity cut (check_cpu_capacity()) and below idle dst's by
  /// imbalance_pct, its lone running CFS task allowed on dst, no push under way from src.
  bool voluntary_active_balance(const Cpu& src, const Cpu& dst) const;
  /// v5.10's find_busiest_group() / find_busiest_queue() at the LLC level over SMT-core groups.
  Cpu* busiest_core_queue(Cpu& dst);
  /// update_cpu_capacity() -> scale_rt_capacity(), after update_irq_load_avg() and the RT average.
  void update_cpu_capacity(Cpu& c);
  /// active_load_balance_cpu_stop(): at c's schedule(), the task its stopper preempted moves.
  void active_load_balance_cpu_stop(Cpu& c, Task* preempted);
  /// rebalance_domains() for `c` when its balance is due, run on `this_cpu`.
  void rebalance_domains(Cpu& c, int this_cpu);
  Nanos balance_interval_ns() const { return kp_.sched.balance_interval_ms * kNsPerMs; }
  /// nohz_balancer_kick() from a busy CPU's tick, and the kicked CPU's _nohz_idle_balance().
  void nohz_balancer_kick(Cpu& c);
  void nohz_idle_balance(Cpu& ilb);
  void migrate_task(Task& t, Cpu& from, Cpu& to);
  void task_exit(Task& t);
  void ensure_tick(Cpu& c);
  int select_task_rq(Task& t, int this_cpu, bool sync);
  /// find_lowest_rq() (rt.c): an allowed CPU at the lowest RT priority level below t's, or -1.
  int find_lowest_rq(const Task& t, int this_cpu);

  HostModel& host_;
  const Topology& topo_;
  KernelParams kp_;
  CostParams costs_;
  FairParams fair_params_;
  std::unique_ptr<LognormalQuantiles> cost_factor_;  // the cost factor's sampler (mean 1); null: cost_cv 0
  bool preempt_full_ = false;                        // kp_.sched.preempt == "full", decided once
  bool lazy_rx_ = true;                              // set_lazy_rx()
  bool stamps_ = false;                              // set_stamps()
  bool observed_ = false;                            // stamps_ or trace_: update_exec_observed()
  std::vector<Fifo<TrainStamps>> backlog_stamps_;    // by CPU: beside its input_pkt_queue, with stamps_
  // Latency attribution per socket id (set_stamps()): its last train and, with keep_path_log(),
  // each train's with rcv_nxt after it.
  struct PathLogEntry {
    std::int64_t end = 0;
    RxPath path;
  };
  struct SocketStamps {
    RxPath last;
    std::unique_ptr<Fifo<PathLogEntry>> log;
  };
  std::vector<SocketStamps> socket_stamps_;
  SocketStamps& socket_stamps(int sock) {
    if (socket_stamps_.size() <= static_cast<std::size_t>(sock))
      socket_stamps_.resize(static_cast<std::size_t>(sock) + 1);
    return socket_stamps_[static_cast<std::size_t>(sock)];
  }
  std::vector<std::vector<Channel*>> wait_viewers_;  // by CPU: channels whose NAPI waits on it (NapiStamps)
  bool ksoftirqd_era_ = false;                       // kp_.ksoftirqd_mode == "4.9-6.4", decided once
  std::uint32_t inet_ehash_secret_ = 0;  // inet_ehash_secret + net_hash_mix(): random per boot, from the seed
  // net_rx_action() refills its list from poll_list and ____napi_schedule() raises no NET_RX inside
  // it (8b43fd3d1d7d, v6.4): kp_.ksoftirqd_mode "v6.5"; the older modes run the code before it.
  bool net_rx_refill_ = true;
  WakeParams wake_params_;
  Nanos tick_ns_;
  int smt_speed_milli_;          // speed_milli of a CPU whose SMT sibling is busy (topology smt_speed)
  std::unique_ptr<Cpu[]> cpus_;  // topo_.nr_cpus() of them, in one array: placement's idle scans walk consecutive CPUs
  std::vector<std::unique_ptr<Task>> tasks_;
  std::vector<std::unique_ptr<Nic>> nics_;
  SocketTable sockets_;
  std::vector<std::unique_ptr<Epoll>> epolls_;
  std::vector<std::unique_ptr<Listener>> listeners_;
  std::vector<std::unique_ptr<XdpProg>> xdp_progs_;
  std::vector<std::unique_ptr<Xsk>> xsks_;
  std::vector<Napi*> napis_;
  std::vector<Skb> skb_batch_;
  WirePeer* peer_ = nullptr;
  Timeline* trace_ = nullptr;  // set_trace()
  int trace_host_ = 0;
  std::vector<std::pair<Kernel*, Cpu*>> irq_done_args_, softirq_done_args_;
  std::deque<std::pair<Kernel*, Task*>> task_done_args_;  // a deque: bodies keep pointers into it
  std::unique_ptr<RpsState> rps_;
  EpollParams epoll_defaults_;
  int handler_cpu_ = -1;               // CPU whose event handler is running (its ready work resumes directly)
  CpuMask overloaded_;                 // CPUs with nr_running >= 2 (root_domain->overload: any set)
  CpuMask capacity_cut_;               // CPUs whose cpu_capacity fails check_cpu_capacity() at the LLC's imbalance_pct
  Nanos nohz_next_balance_ = 0;        // nohz.next_balance: the earliest due balance of an idle CPU
  std::vector<int> llc_nr_idle_scan_;  // per LLC: sd_llc_shared->nr_idle_scan
  // Per LLC: sd_llc->avg_scan_cost, which select_idle_cpu() itself updates (hence mutable).
  mutable std::vector<Nanos> llc_avg_scan_cost_;
  std::uint64_t lo_packets_ = 0;    // skbs through lo
  std::uint64_t delayed_acks_ = 0;  // ACKs sent by the rcv_mss rule (their cost is charged after delivery)
  // TCP (tcp.hpp)
  std::vector<std::unique_ptr<TcpSock>> tcp_socks_;
  std::vector<TcpCpu> tcp_cpu_;  // by CPU, once a connection runs
  TcpStats tcp_stats_;
  Nanos tcp_owed_ = 0;              // take_tcp_owed()
  bool tcp_in_sendmsg_ = false;     // tcp_sendmsg()'s transmits are paid by send_cost()
  int tcp_cpu_now_ = 0;             // the CPU TCP code runs on (timers armed now run there)
  std::int64_t tcp_rto_max_j_ = 0;  // TCP_RTO_MAX (120 s), in jiffies
  std::int64_t tcp_ato_min_j_ = 0;  // TCP_ATO_MIN = TCP_DELACK_MIN (HZ / 25)
  std::int64_t tcp_rto_min_j_ = 0;  // TCP_RTO_MIN (kernel.tcp.rto_min_ms)
  bool fq_ = false;                 // kp_.net.default_qdisc == "fq", decided once
  std::uint64_t events_ = 0;        // events on_event() handled: the simulation's work for this host
};

}  // namespace napisim
