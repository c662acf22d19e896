// napisim: struct napi_struct and the per-CPU softnet_data poll list.
//
// State bits mirror include/linux/netdevice.h (NAPI_STATE_*) as of v6.13+ (kernel-napi.md 2.1).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <vector>

#include "sim/core/event_queue.hpp"
#include "sim/core/fifo.hpp"
#include "sim/core/time.hpp"
#include "sim/hw/tcp_hdr.hpp"
#include "sim/kernel/cache.hpp"
#include "sim/kernel/task.hpp"
#include "sim/kernel/waitqueue.hpp"

namespace napisim {

struct Task;
struct Channel;
class Kernel;
struct Cpu;

namespace napi_state {
constexpr std::uint32_t kSched = 1u << 0;
constexpr std::uint32_t kMissed = 1u << 1;
constexpr std::uint32_t kDisable = 1u << 2;
constexpr std::uint32_t kNpsvc = 1u << 3;
constexpr std::uint32_t kListed = 1u << 4;
constexpr std::uint32_t kNoBusyPoll = 1u << 5;
constexpr std::uint32_t kInBusyPoll = 1u << 6;
constexpr std::uint32_t kPreferBusyPoll = 1u << 7;
constexpr std::uint32_t kThreaded = 1u << 8;
constexpr std::uint32_t kSchedThreaded = 1u << 9;
constexpr std::uint32_t kThreadedBusyPoll = 1u << 10;
}  // namespace napi_state

/// How ____napi_schedule() hands a NAPI to an executor, for strategies the mainline state bits do
/// not express (workqueue NAPI, poller pools). Installed by a receive-path model.
class NapiScheduleHook {
 public:
  virtual ~NapiScheduleHook() = default;
  /// Called with the NAPI's SCHED bit already taken; must arrange for a poll.
  virtual void schedule(Kernel& k, struct Napi& n, Cpu& this_cpu) = 0;
};

/// Latency attribution (Kernel::set_stamps()): where a data train was from the NIC ring to its
/// poll. It entered the ring at `arrive` and was taken by the poll that began at `poll`, after
/// `ring` ns of its NAPI's polls had gone to what was ahead of it (`ring_sched` of them since the
/// NAPI was last scheduled, at `sched`). The stamps ride beside the train's skb (the poll's
/// batch, an RPS backlog's queue) to its socket, so each train keeps its own whatever else its
/// socket receives meanwhile.
/// `net_rx_wait`: what the CPU its NAPI waited on did while the train waited for NET_RX (the
/// NAPI scheduled and not polled), by class (NapiStamps).
struct TrainStamps {
  Nanos arrive = 0, sched = 0, poll = 0, ring = 0, ring_sched = 0;
  ClassTimes net_rx_wait{};
  /// A train that meets no ring and no poll (loopback): all of it at `now`.
  static TrainStamps at(Nanos now) { return TrainStamps{now, now, now, 0, 0, {}}; }
};

/// A NAPI's latency attribution state (allocated by Kernel::set_stamps()).
struct NapiStamps {
  static constexpr int kBatch = 64;       // a poll's batch of skbs (driver, backlog)
  std::array<TrainStamps, kBatch> batch;  // the skbs of the poll in progress, beside its batch
  // Its waits for NET_RX: while scheduled and not being polled it waits on CPU view_cpu (the one
  // it was scheduled on; the one its kthread was woken on, threaded; the busy poller's). `waited`
  // sums that CPU's class times over the waits that ended; the one in progress began at
  // view_from, when the CPU's class times were view_mark.
  int view_cpu = -1;
  Nanos view_from = 0;
  ClassTimes waited{}, view_mark{};
  // Each train's `waited` as of its arrival, beside its channel's inbound trains and ring: at the
  // poll that takes it, `waited` less this is its net_rx_wait.
  Fifo<ClassTimes> inbound_marks{16}, ring_marks{16};
};

struct Napi {
  int id = 0;             // napi_id (>= MIN_NAPI_ID in the kernel; here an index)
  Channel* ch = nullptr;  // device queue (null for a backlog NAPI)
  int backlog_cpu = -1;   // softnet_data.backlog of this cpu
  std::uint32_t state = 0;
  int weight = 64;
  // napi_defer_hard_irqs / gro_flush_timeout / irq_suspend_timeout (per NAPI, from the device).
  std::int64_t defer_hard_irqs = 0;
  Nanos gro_flush_timeout = 0;
  Nanos irq_suspend_timeout = 0;
  std::int64_t defer_hard_irqs_count = 0;
  Timer timer;  // napi->timer (hrtimer, pinned to the arming CPU)
  int timer_cpu = -1;
  int list_owner = -1;
  Napi* next = nullptr;  // poll_list link
  bool on_list = false;
  Task* thread = nullptr;  // threaded NAPI kthread
  WaitQueue thread_wq;     // where the kthread sleeps in napi_thread_wait()
  NapiScheduleHook* hook = nullptr;
  Task* spinner = nullptr;     // a busy poller spinning on this NAPI (woken by RX and completion)
  Task* busy_owner = nullptr;  // the task whose napi_busy_loop() holds IN_BUSY_POLL
  CacheOwner cache;            // its rings, page pool and skbs, wherever it is polled
  // Latency attribution (kept only under Kernel::set_stamps()): the time spent in its polls so far
  // (the poll in progress began at poll_began, -1: none; the last one ran from last_poll_began to
  // last_poll_end), and when NAPI_STATE_SCHED was last taken, with polled_ns then.
  Nanos polled_ns = 0;
  Nanos poll_began = -1;
  Nanos last_poll_began = 0, last_poll_end = 0;
  Nanos sched_at = 0;
  Nanos sched_polled = 0;
  void mark_sched(Nanos now) {
    sched_at = now;
    sched_polled = polled_ns;
  }
  // Latency attribution (set_stamps() only; a pointer, so that the NAPI in softnet_data adds
  // nothing to a CPU's size without it).
  std::unique_ptr<NapiStamps> stamps;
  // statistics
  std::uint64_t polls = 0, packets = 0, full_polls = 0, completions = 0, timer_fires = 0;
};

/// An skb as the stack sees it after GRO: one train of `segs` segments of one flow.
struct Skb {
  std::int32_t sock = -1;
  std::uint32_t segs = 1;
  std::uint32_t bytes = 0;
  bool ack_only = false;
  int napi_id = -1;
  int rps_cpu = -1;  // get_rps_cpu() result decided in the driver's context (-1: process inline)
  TcpHdr th;         // connections run by the kernels' TCP (sim/kernel/tcp.hpp)
};

/// A poll's batch of up to N skbs (the gro_normal list): its slots are constructed as they are
/// filled, not all N up front at every poll (a std::array<Skb, N> would write N default skbs).
template <std::size_t N>
class SkbBatch {
 public:
  SkbBatch() {}  // leaves the slots unconstructed
  void put(std::size_t i, const Skb& skb) { ::new (static_cast<void*>(&skb_[i])) Skb(skb); }
  const Skb* data() const { return skb_; }

 private:
  union {
    Skb skb_[N];
  };
};

/// An intrusive FIFO of NAPIs (sd->poll_list, repoll lists).
struct NapiList {
  Napi* head = nullptr;
  Napi* tail = nullptr;
  bool empty() const { return head == nullptr; }
  void push_back(Napi* n) {
    n->next = nullptr;
    if (tail)
      tail->next = n;
    else
      head = n;
    tail = n;
    n->on_list = true;
  }
  Napi* pop_front() {
    Napi* n = head;
    if (!n) return nullptr;
    head = n->next;
    if (!head) tail = nullptr;
    n->next = nullptr;
    n->on_list = false;
    return n;
  }
  /// list_splice_tail_init(other, this)
  void splice_tail(NapiList& o) {
    if (o.empty()) return;
    if (tail)
      tail->next = o.head;
    else
      head = o.head;
    tail = o.tail;
    o.head = o.tail = nullptr;
  }
  void remove(Napi* n) {
    Napi* prev = nullptr;
    for (Napi* it = head; it; prev = it, it = it->next) {
      if (it != n) continue;
      if (prev)
        prev->next = it->next;
      else
        head = it->next;
      if (tail == it) tail = prev;
      it->next = nullptr;
      it->on_list = false;
      return;
    }
  }
};

/// struct sd_flow_limit (net/core/dev.c): per-CPU history of the flows that filled the backlog.
struct SdFlowLimit {
  static constexpr int kHistory = 128;  // FLOW_LIMIT_HISTORY (1 << 7)
  unsigned history_head = 0;
  std::array<std::uint32_t, kHistory> history{};  // bucket of each of the last 128 packets
  std::vector<std::uint8_t> buckets;              // flow_limit_table_len counters
};

/// Per-CPU softnet_data (net/core/dev.c).
struct SoftnetData {
  NapiList poll_list;
  bool in_net_rx_action = false;
  bool in_napi_threaded_poll = false;
  // RPS backlog: input_pkt_queue (process_queue merged: a FIFO drained by process_backlog()).
  Napi backlog;
  Fifo<Skb> input_pkt_queue{64};
  std::uint64_t input_queue_head = 0, input_queue_tail = 0;
  std::vector<int> rps_ipi_list;  // remote CPUs whose backlog this CPU scheduled (IPIs to send)
  std::uint64_t processed = 0, dropped = 0, time_squeeze = 0, received_rps = 0, flow_limit_count = 0;
  std::unique_ptr<SdFlowLimit> flow_limit;  // set when this CPU is in net.core.flow_limit_cpu_bitmap
};

}  // namespace napisim
