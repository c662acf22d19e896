// The kernel unit tests' shared rig: a Kernel driven directly on a HostModel (no SimGrid), with
// every cost zero unless a test sets it, test actions at given simulated times (At), a peer that
// records drops, task bodies and NIC helpers. Each tests/unit/*_test.cpp of a kernel subsystem
// includes it.
//
// Conventions: HZ = 1000 (tick 1 ms), ctx_switch_ns = 0, ipi_latency_ns = 1000 where an IPI
// matters. EEVDF base slice = base_slice_ns * (1 + ilog2(nr_cpus)). Every expected time in the
// tests is exact and derived in their comments from the kernel rules in docs/kernel-napi.md
// (sections 2 and 9).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "sim/kernel/fair.hpp"
#include "sim/kernel/kernel.hpp"
#include "sim/kernel/rt.hpp"
#include "tests/unit/zero_fields.hpp"

// GCC 12 at -O3 warns about `"literal" + std::to_string(n)` inside libstdc++ (-Wrestrict, a false
// positive: GCC bug 105651); the tests build task names that way.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

namespace napisim {
namespace {  // each test file its own copy

constexpr int kUser = static_cast<int>(CpuClass::kUser);
constexpr int kSystem = static_cast<int>(CpuClass::kSystem);
constexpr int kHardirq = static_cast<int>(CpuClass::kHardirq);
constexpr int kSoftirq = static_cast<int>(CpuClass::kSoftirq);
constexpr int kKsoftirqd = static_cast<int>(CpuClass::kKsoftirqd);
constexpr int kIdle = static_cast<int>(CpuClass::kIdle);
constexpr int kBusySpin = static_cast<int>(CpuClass::kBusySpin);

/// Every cost (and the cost variability, cost_cv) zero, through the parameter table so that new
/// cost fields are zeroed too.
inline CostParams zero_costs() {
  return testing::all_zero<CostParams>();
}

inline TopologyParams shape(std::int64_t cores, std::int64_t threads = 1) {
  TopologyParams p;
  p.numa_nodes = 1;
  p.llcs_per_node = 1;
  p.cores_per_llc = cores;
  p.threads_per_core = threads;
  return p;
}

/// Host, topology and kernel (the kernel keeps references to the first two).
struct Rig {
  HostModel host;
  Topology topo;
  Kernel k;
  Rig(const TopologyParams& tp, const KernelParams& kp, const CostParams& costs) : topo(tp), k(host, topo, kp, costs) {}
  Cpu& cpu(int i) { return k.cpu(i); }
  void run_to(Nanos t) { host.advance_to(t); }
  /// Accounting up to now, and the running task charged (update_curr), for assertions.
  void settle() {
    for (int i = 0; i < k.nr_cpus(); ++i) {
      k.update_exec(k.cpu(i));
      k.charge_curr(k.cpu(i));
      k.psi_update(k.cpu(i));
    }
  }
  CpuMask only(int c) const {
    CpuMask m(topo.nr_cpus());
    m.set(c);
    return m;
  }
  CpuMask all() const { return CpuMask::all(topo.nr_cpus()); }
};

/// Runs test actions at given simulated times, from inside the event loop (Prio::kControl: after
/// the kernel's own events of the same instant).
class At final : public EventSink {
 public:
  explicit At(HostModel& h) : host_(h) {}
  void operator()(Nanos t, std::function<void()> f) {
    fns_.push_back(std::move(f));
    host_.schedule(t, Prio::kControl, this, 0, fns_.size() - 1);
  }
  void on_event(std::uint32_t, std::uint64_t arg) override { fns_[arg](); }

 private:
  HostModel& host_;
  std::vector<std::function<void()>> fns_;
};

/// Records what the NIC tells the remote peer.
class TestPeer final : public WirePeer {
 public:
  struct Drop {
    int sock;
    std::uint32_t bytes, segs;
  };
  std::vector<Drop> drops;
  std::vector<Nanos> drop_times;  // when the peer was told (with `host` set)
  const HostModel* host = nullptr;
  int transmits = 0;
  void on_transmit(const WireTrain&, Nanos) override { ++transmits; }
  void on_rx_drop(int sock, std::uint32_t bytes, std::uint32_t segs) override {
    drops.push_back({sock, bytes, segs});
    if (host) drop_times.push_back(host->now());
  }
};

// ---- task bodies ---------------------------------------------------------------------------

inline Proc<void> hog(Kernel& k, Task& t, CpuClass cls = CpuClass::kUser, Nanos seg = us(100)) {
  for (;;)
    co_await k.exec(k.task_ctx(t, cls), seg);
}

/// A CPU hog in kernel mode: with voluntary preemption kernel code is preempted only where it
/// calls cond_resched() (a user-mode hog is preempted at any interrupt return).
inline Proc<void> kernel_hog(Kernel& k, Task& t, CpuClass cls = CpuClass::kSystem, Nanos seg = us(100)) {
  for (;;) {
    co_await k.exec(k.task_ctx(t, cls), seg);
    co_await k.cond_resched(t);
  }
}

/// Works `work` ns, records when it finished, then sleeps forever.
inline Proc<void> work_once(Kernel& k, Task& t, Nanos work, Nanos* done, WaitQueue& wq) {
  co_await k.exec(k.task_ctx(t, CpuClass::kUser), work);
  *done = k.now();
  co_await k.sleep_on(t, wq);
}

/// Sleeps on `wq`; each time it is woken it records the time it got the CPU and works `run` ns.
/// With run < 0 it becomes a hog after the first wakeup.
inline Proc<void> sleeper(Kernel& k, Task& t, WaitQueue& wq, std::vector<Nanos>* got_cpu, Nanos run) {
  for (;;) {
    co_await k.sleep_on(t, wq);
    got_cpu->push_back(k.now());
    if (run < 0) {
      for (;;)
        co_await k.exec(k.task_ctx(t, CpuClass::kUser), us(100));
    }
    co_await k.exec(k.task_ctx(t, CpuClass::kUser), run);
  }
}

/// Runs `first` ns, sleeps; afterwards like sleeper().
inline Proc<void> run_then_sleeper(Kernel& k, Task& t, WaitQueue& wq, Nanos first, std::vector<Nanos>* got_cpu,
                                   Nanos run) {
  co_await k.exec(k.task_ctx(t, CpuClass::kUser), first);
  co_await sleeper(k, t, wq, got_cpu, run);
}

/// An epoll server: waits, reads every ready socket, works a little.
inline Proc<void> epoll_server(Kernel& k, Task& t, Epoll& ep, Nanos work) {
  std::vector<int> ev;
  for (;;) {
    const int n = co_await k.epoll_wait(t, ep, 16, ev);
    for (int i = 0; i < n; ++i)
      co_await k.sys_recv(t, k.socket(ev[static_cast<std::size_t>(i)]), 1 << 20);
    co_await k.exec(k.task_ctx(t, CpuClass::kUser), work);
  }
}

inline Task& start(Kernel& k, Task& t, Proc<void> body, int cpu = -1) {
  t.body = std::move(body);
  k.start_task(t, cpu);
  return t;
}

/// A user task pinned to `cpu` and started there as a sleeper() on `wq`.
inline Task& pinned_sleeper(Rig& r, const std::string& name, int cpu, WaitQueue& wq, std::vector<Nanos>* got,
                            Nanos run) {
  Task& t = r.k.create_task(name, TaskKind::kUser, r.only(cpu));
  return start(r.k, t, sleeper(r.k, t, wq, got, run), cpu);
}

inline NicParams one_queue_nic(std::int64_t ring = 1024, const std::string& irq_cpus = "0") {
  NicParams p;
  p.queues = 1;
  p.ring_size = ring;
  p.rx_usecs = 0;  // interrupt per completion unless a test sets moderation
  p.rx_frames = 1;
  p.irq_affinity = irq_cpus;
  return p;
}

inline RxEntry pkt(int sock, std::uint32_t segs = 1) {
  RxEntry e;
  e.sock = sock;
  e.segs = segs;
  e.bytes = 1000 * segs;
  return e;
}

inline void flood(Kernel& k, int sock, int n) {
  for (int i = 0; i < n; ++i)
    k.nic_rx(0, pkt(sock));
}

/// One CPU taking the interrupt (one per completion) of a one-queue NIC with `ring` descriptors,
/// one socket on it, a peer recording drops; every packet costs rx_pkt_ns = 1000 ns, everything
/// else 0.
struct RingRig : Rig {
  explicit RingRig(std::int64_t ring)
      : Rig(shape(1), KernelParams{}, costs())
      , s(socket_on_nic(*this, ring))
      , ch(*k.nics()[0]->channels[0]) {
    peer.host = &host;
    k.set_peer(&peer);
  }
  static CostParams costs() {
    CostParams c = zero_costs();
    c.rx_pkt_ns = 1000;
    return c;
  }
  static Socket& socket_on_nic(Rig& r, std::int64_t ring) {
    r.k.add_nic(one_queue_nic(ring), "/nic");
    return r.k.add_socket(0, 0);
  }
  Socket& s;
  Channel& ch;
  TestPeer peer;
};

}  // namespace
}  // namespace napisim
