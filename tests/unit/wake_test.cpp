// Unit tests for sim/hw/topology and sim/kernel/wake (kernel/sched/fair.c v6.6 wake placement).
#include "sim/kernel/wake.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "sim/core/error.hpp"
#include "sim/hw/topology.hpp"

namespace napisim {
namespace {

TopologyParams shape(std::int64_t nodes, std::int64_t llcs, std::int64_t cores, std::int64_t threads) {
  TopologyParams p;
  p.numa_nodes = nodes;
  p.llcs_per_node = llcs;
  p.cores_per_llc = cores;
  p.threads_per_core = threads;
  return p;
}

/// Runqueue state by hand. Softirq load is tracked but, as in the kernel, does not affect
/// idle_cpu(): available_idle_cpu() only looks at the runqueue.
class FakeView final : public WakeView {
 public:
  explicit FakeView(int n)
      : nr_(static_cast<std::size_t>(n), 0)
      , load_(static_cast<std::size_t>(n), 0)
      , util_(static_cast<std::size_t>(n), 0)
      , sched_idle_(static_cast<std::size_t>(n), false)
      , pending_(static_cast<std::size_t>(n), false)
      , softirq_(static_cast<std::size_t>(n), false) {}

  /// `tasks` runnable nice-0 tasks (weight each). PELT util is separate (set_util, default 0) so
  /// SIS_UTIL only bounds the scan in tests that ask for it.
  void run(int cpu, int tasks = 1, std::int64_t weight = 1024) {
    nr_[at(cpu)] = tasks;
    load_[at(cpu)] = weight * tasks;
  }
  void busy_all() {
    for (std::size_t c = 0; c < nr_.size(); ++c)
      run(static_cast<int>(c));
  }
  void set_idle(int cpu) { run(cpu, 0); }
  void set_util(int cpu, std::int64_t u) { util_[at(cpu)] = u; }
  void set_sched_idle(int cpu) {
    nr_[at(cpu)] = 1;
    sched_idle_[at(cpu)] = true;
  }
  void set_pending(int cpu) { pending_[at(cpu)] = true; }
  void set_softirq(int cpu) { softirq_[at(cpu)] = true; }

  /// SIS_PROP's inputs (v5.10): the waker cpu's rq->avg_idle and the LLC's avg_scan_cost.
  void set_avg_idle(int cpu, Nanos v) {
    avg_idle_.resize(nr_.size(), 2 * kSchedMigrationCostNs);
    avg_idle_[at(cpu)] = v;
  }
  void set_scan_cost(Nanos v) { scan_cost_ = v; }
  Nanos avg_idle(int cpu) const override { return avg_idle_.empty() ? WakeView::avg_idle(cpu) : avg_idle_[at(cpu)]; }
  Nanos llc_avg_scan_cost(int) const override { return scan_cost_; }
  void record_scan(int llc, int scanned) const override { scans.push_back({llc, scanned}); }
  mutable std::vector<std::pair<int, int>> scans;  // (llc, cpus examined) of each recorded scan

  bool idle_cpu(int cpu) const override { return nr_[at(cpu)] == 0 && !pending_[at(cpu)]; }
  bool sched_idle_cpu(int cpu) const override { return sched_idle_[at(cpu)]; }
  int nr_running(int cpu) const override { return nr_[at(cpu)]; }
  std::int64_t cpu_load(int cpu) const override { return load_[at(cpu)]; }
  std::int64_t cpu_util(int cpu) const override { return util_[at(cpu)]; }

 private:
  static std::size_t at(int cpu) { return static_cast<std::size_t>(cpu); }
  std::vector<int> nr_;
  std::vector<std::int64_t> load_, util_;
  std::vector<Nanos> avg_idle_;
  Nanos scan_cost_ = 0;
  std::vector<bool> sched_idle_, pending_, softirq_;
};

// ----------------------------------------------------------------------------------------------
// Topology

TEST(TopologyTest, Numbers56HyperthreadsOnOneNodeLikeX86) {
  const Topology t(shape(1, 1, 28, 2));
  EXPECT_EQ(t.nr_cpus(), 56);
  EXPECT_EQ(t.nr_cores(), 28);
  EXPECT_EQ(t.nr_llcs(), 1);
  EXPECT_EQ(t.llc_size(), 56);
  EXPECT_TRUE(t.smt_active());
  EXPECT_EQ(t.sibling_of(0), 28);
  EXPECT_EQ(t.sibling_of(28), 0);
  EXPECT_EQ(t.sibling_of(27), 55);
  EXPECT_EQ(t.core_of(28), 0);
  EXPECT_EQ(t.core_of(55), 27);
  EXPECT_TRUE(t.same_core(3, 31));
  EXPECT_FALSE(t.same_core(3, 4));
  EXPECT_EQ(t.node_of(55), 0);
  EXPECT_TRUE(t.share_cache(0, 55));
  ASSERT_EQ(t.cpus_of_llc(0).size(), 56U);
  EXPECT_EQ(t.cpus_of_llc(0).front(), 0);
  EXPECT_EQ(t.cpus_of_llc(0).back(), 55);
  EXPECT_EQ(t.smt_mask(5).to_cpulist(), "5,33");
  EXPECT_EQ(t.llc_mask(0).to_cpulist(), "0-55");
}

TEST(TopologyTest, SixtyFourCoresOnFourNodesWithSmtOff) {
  const Topology t(shape(4, 1, 16, 1));
  EXPECT_EQ(t.nr_cpus(), 64);
  EXPECT_EQ(t.nr_nodes(), 4);
  EXPECT_FALSE(t.smt_active());
  EXPECT_EQ(t.sibling_of(0), -1);
  EXPECT_EQ(t.node_of(0), 0);
  EXPECT_EQ(t.node_of(15), 0);
  EXPECT_EQ(t.node_of(16), 1);
  EXPECT_EQ(t.node_of(63), 3);
  EXPECT_EQ(t.llc_of(33), 2);
  EXPECT_EQ(t.llc_size(), 16);
  EXPECT_EQ(t.cpus_of_node(2).front(), 32);
  EXPECT_EQ(t.cpus_of_node(2).back(), 47);
  EXPECT_FALSE(t.share_cache(15, 16));

  // Two LLCs per node (e.g. a chiplet part): LLC is node-major.
  const Topology c(shape(4, 2, 8, 1));
  EXPECT_EQ(c.nr_llcs(), 8);
  EXPECT_EQ(c.llc_of(8), 1);
  EXPECT_EQ(c.node_of(8), 0);
  EXPECT_EQ(c.llc_of(17), 2);
  EXPECT_EQ(c.node_of(17), 1);
  EXPECT_EQ(c.cpus_of_node(1).size(), 16U);
}

TEST(TopologyTest, SmtNumberingWithSeveralNodesPutsAllSiblingsAfterAllCores) {
  const Topology t(shape(2, 1, 4, 2));  // cores 0-7, siblings 8-15
  EXPECT_EQ(t.sibling_of(4), 12);
  EXPECT_EQ(t.node_of(12), 1);
  EXPECT_EQ(t.llc_of(12), 1);
  EXPECT_EQ(t.cpus_of_llc(1), (std::vector<int>{4, 5, 6, 7, 12, 13, 14, 15}));
  EXPECT_EQ(t.node_mask(0).to_cpulist(), "0-3,8-11");
}

TEST(TopologyTest, HandoffPenaltyGrowsWithDistance) {
  TopologyParams p = shape(2, 2, 2, 2);  // 8 cores: llc0 {0,1}, llc1 {2,3} on node 0
  const Topology t(p);
  EXPECT_EQ(t.handoff_penalty(0, 0), 0);
  EXPECT_EQ(t.handoff_penalty(0, 8), 0);     // SMT sibling
  EXPECT_EQ(t.handoff_penalty(0, 1), 0);     // same LLC
  EXPECT_EQ(t.handoff_penalty(0, 2), 200);   // other LLC, same node
  EXPECT_EQ(t.handoff_penalty(0, 4), 1000);  // other node: 500 * 20 / 10
  EXPECT_DOUBLE_EQ(t.distance()(0, 1), 20.0);
  EXPECT_DOUBLE_EQ(t.distance()(1, 1), 10.0);

  p.numa_distance = {10, 21, 21, 10};
  const Topology slit(p);
  EXPECT_EQ(slit.handoff_penalty(4, 0), 1050);
  EXPECT_EQ(slit.node_distance(0, 1), 21);
}

TEST(TopologyTest, ValidateRejectsInconsistentShapes) {
  TopologyParams p = shape(2, 1, 4, 3);
  try {
    p.validate("/host/topology");
    FAIL() << "threads_per_core 3 accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "/host/topology/threads_per_core");
  }
  p.threads_per_core = 2;
  p.numa_distance = {10, 20, 20};
  try {
    p.validate("/host/topology");
    FAIL() << "3-entry SLIT accepted for 2 nodes";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "/host/topology/numa_distance");
  }
  p.numa_distance = {10, 20, 20, 12};
  try {
    p.validate("/host/topology");
    FAIL() << "non-10 diagonal accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "/host/topology/numa_distance/3");
  }
  p.numa_distance = {10, 20, 20, 10};
  EXPECT_NO_THROW(p.validate("/host/topology"));
  p.cores_per_llc = 0;
  EXPECT_THROW((void)Topology(p, "/host/topology"), ConfigError);
}

// ----------------------------------------------------------------------------------------------
// CpuMask

TEST(CpuMaskTest, BitOperationsAcrossWords) {
  // Up to 256 cpus the words are inline, from 257 on the heap: the same answers either way.
  for (const int n : {130, 256, 257, 1000}) {
    SCOPED_TRACE(n);
    const int last = n - 1;
    CpuMask m(n);
    EXPECT_TRUE(m.none());
    m.set(0);
    m.set(63);
    m.set(64);
    m.set(last);
    EXPECT_EQ(m.count(), 4);
    EXPECT_EQ(m.first(), 0);
    EXPECT_EQ(m.next(0), 63);
    EXPECT_EQ(m.next(63), 64);
    EXPECT_EQ(m.next(64), last);
    EXPECT_EQ(m.next(last), -1);
    m.clear(63);
    EXPECT_FALSE(m.test(63));
    EXPECT_FALSE(m.test(n));
    EXPECT_EQ(m.to_cpulist(), "0,64," + std::to_string(last));

    const CpuMask all = CpuMask::all(n);
    EXPECT_TRUE(all.full());
    EXPECT_EQ(all.count(), n);
    EXPECT_EQ((all & m), m);
    EXPECT_TRUE(all.intersects(m));
    CpuMask rest = all;
    rest.and_not(m);
    EXPECT_EQ(rest.count(), n - 3);
    EXPECT_FALSE(rest.intersects(m));
    EXPECT_EQ((rest | m), all);
    CpuMask copy = m;  // a copy is independent of the original
    copy.set(1);
    EXPECT_FALSE(m.test(1));
    EXPECT_NE(copy, m);
    copy = rest;
    EXPECT_EQ(copy, rest);

    // single(): exactly one bit, in any word.
    CpuMask one(n);
    EXPECT_FALSE(one.single());
    for (int cpu : {0, 5, 63, 64, 100, last}) {
      CpuMask x(n);
      x.set(cpu);
      EXPECT_TRUE(x.single()) << cpu;
      x.set(cpu == 0 ? 1 : cpu - 1);  // a second bit beside it (for 64: in the word before)
      EXPECT_FALSE(x.single()) << cpu;
    }
    CpuMask two_words(n);
    two_words.set(3);
    two_words.set(70);
    EXPECT_FALSE(two_words.single());
    EXPECT_FALSE(all.single());
  }
}

TEST(CpuMaskTest, ParsesKernelCpulists) {
  const std::string path = "/cpus";
  EXPECT_EQ(CpuMask::parse("0-7,28-35", 56, path).count(), 16);
  EXPECT_EQ(CpuMask::parse("0-7,28-35", 56, path).to_cpulist(), "0-7,28-35");
  EXPECT_EQ(CpuMask::parse("3", 56, path).to_cpulist(), "3");
  EXPECT_EQ(CpuMask::parse("4,5", 56, path).to_cpulist(), "4-5");
  EXPECT_EQ(CpuMask::parse("7,1-2,0", 56, path).to_cpulist(), "0-2,7");
  const CpuMask even = CpuMask::parse("0-55:2", 56, path);
  EXPECT_EQ(even.count(), 28);
  EXPECT_TRUE(even.test(54));
  EXPECT_FALSE(even.test(55));
  EXPECT_EQ(CpuMask::parse("0-15:2/4", 16, path).to_cpulist(), "0-1,4-5,8-9,12-13");
  EXPECT_EQ(CpuMask::parse("0-N", 56, path).count(), 56);
  EXPECT_TRUE(CpuMask::parse("", 56, path).full());
  EXPECT_TRUE(CpuMask::parse("all", 56, path).full());
  EXPECT_EQ(CpuMask::parse(" 2-3\n", 56, path).to_cpulist(), "2-3");
  EXPECT_EQ(CpuMask(8).to_cpulist(), "");
}

TEST(CpuMaskTest, ParseErrorsCarryThePointerAndTheText) {
  try {
    (void)CpuMask::parse("0-99", 56, "/nics/0/irq_affinity");
    FAIL() << "0-99 accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "/nics/0/irq_affinity");
    EXPECT_STREQ(e.what(), "/nics/0/irq_affinity: expected a cpu list like \"0-7,16\" with cpus < 56, got \"0-99\"");
  }
  for (const char* bad : {"56", "7-3", "1,,2", "1,", ",1", "a", "-1", "1-", "0-4:0", "0-8:3/2", "0-8:/2", "1 2", "0x3",
                          "99999999999999"}) {
    EXPECT_THROW((void)CpuMask::parse(bad, 56, "/x"), ConfigError) << bad;
  }
}

// ----------------------------------------------------------------------------------------------
// select_idle_sibling and friends

class WakeTest : public ::testing::Test {
 protected:
  WakeParams params;
};

TEST_F(WakeTest, SelectIdleSiblingReturnsIdleTarget) {
  const Topology t(shape(1, 1, 8, 1));
  FakeView v(8);
  v.busy_all();
  v.set_idle(3);
  WakeeInfo p;
  EXPECT_EQ(select_idle_sibling(t, v, params, p, /*prev=*/5, /*target=*/3, /*this_cpu=*/3, false), 3);
  // A cpu whose runnable tasks are all SCHED_IDLE counts too.
  v.run(3);
  v.set_sched_idle(3);
  EXPECT_EQ(select_idle_sibling(t, v, params, p, 5, 3, 3, false), 3);
}

TEST_F(WakeTest, SelectIdleSiblingPrefersIdleCacheAffinePrev) {
  const Topology t(shape(1, 2, 4, 1));  // llc0 = 0-3, llc1 = 4-7
  FakeView v(8);
  v.busy_all();
  v.set_idle(2);  // prev
  v.set_idle(1);  // also idle, but prev wins before any scan
  WakeeInfo p;
  EXPECT_EQ(select_idle_sibling(t, v, params, p, /*prev=*/2, /*target=*/0, 0, false), 2);
  // prev idle but in another LLC: not taken; the scan of target's LLC finds cpu 1.
  v.set_idle(5);
  EXPECT_EQ(select_idle_sibling(t, v, params, p, /*prev=*/5, /*target=*/0, 0, false), 1);
}

TEST_F(WakeTest, SelectIdleSiblingScansTheLlcAfterTargetAndWraps) {
  const Topology t(shape(1, 2, 8, 1));  // llc0 = 0-7, llc1 = 8-15
  FakeView v(16);
  v.busy_all();
  v.set_idle(1);
  v.set_idle(6);
  v.set_idle(9);  // idle, but in the other LLC
  WakeeInfo p;
  params.sis_util = false;
  // Scan starts at target + 1 = 5: finds 6 before wrapping to 1.
  EXPECT_EQ(select_idle_sibling(t, v, params, p, 4, 4, 4, false), 6);
  // From target 7 the scan wraps to 0, 1 -> 1.
  EXPECT_EQ(select_idle_sibling(t, v, params, p, 7, 7, 7, false), 1);
  // Nothing idle in the LLC: the wakeup stays on target even though cpu 9 is idle.
  v.run(1);
  v.run(6);
  EXPECT_EQ(select_idle_sibling(t, v, params, p, 3, 3, 3, false), 3);
}

// ---- v5.10 placement (sched algo "cfs"): select_idle_core, SIS_PROP, select_idle_smt(target) ----

TEST_F(WakeTest, V510SisPropBoundsTheScanByTheWakersAverageIdle) {
  // 16 cpus, one LLC, no SMT; only cpu 9 idle; target 3, woken from cpu 3.
  const Topology t(shape(1, 1, 16, 1));
  FakeView v(16);
  v.busy_all();
  v.set_idle(9);
  WakeeInfo p;
  params.v5_10 = true;
  // avg_idle 1 ms (its initial 2 * migration cost), avg_scan_cost 0: avg_idle / 512 = 1953,
  // span_avg = 16 * 1953 > 4 * (0 + 1), nr = 31248: the walk from target itself (3, 4, .., 9)
  // finds 9 after examining 7 cpus, and records that scan.
  EXPECT_EQ(select_idle_sibling(t, v, params, p, /*prev=*/3, /*target=*/3, /*this_cpu=*/3, false), 9);
  ASSERT_EQ(v.scans.size(), 1U);
  EXPECT_EQ(v.scans[0], std::make_pair(0, 7));
  // avg_idle 10 us, avg_scan_cost 100 ns: 10000 / 512 = 19, span_avg = 304 <= 4 * 101, so nr = 4
  // and "if (!--nr) return -1" lets 3 cpus be examined (3, 4, 5): none idle, the budget is spent
  // (no avg_scan_cost update), no SMT sibling: the wakee stays on the busy target.
  v.set_avg_idle(3, us(10));
  v.set_scan_cost(100);
  v.scans.clear();
  EXPECT_EQ(select_idle_sibling(t, v, params, p, 3, 3, 3, false), 3);
  EXPECT_TRUE(v.scans.empty());
  // avg_idle 40 us: 40000 / 512 = 78, span_avg = 1248 > 404, nr = 1248 / 101 = 12: 11 cpus
  // (3 .. 13) may be examined, and 9 is the 7th.
  v.set_avg_idle(3, us(40));
  EXPECT_EQ(select_idle_sibling(t, v, params, p, 3, 3, 3, false), 9);
  EXPECT_EQ(v.scans, (std::vector<std::pair<int, int>>{{0, 7}}));
  // The budget is the waker's: the same wakeup from cpu 12 (avg_idle 1 ms) scans far enough.
  v.set_avg_idle(3, us(10));
  EXPECT_EQ(select_idle_sibling(t, v, params, p, 3, 3, /*this_cpu=*/12, false), 9);
  // SIS_PROP off: unbounded.
  params.sis_prop = false;
  EXPECT_EQ(select_idle_sibling(t, v, params, p, 3, 3, 3, false), 9);
}

TEST_F(WakeTest, V510LooksForAnIdleCoreThenTheTargetsSiblings) {
  // 8 cores x 2 threads: cores {c, c + 8}. Every cpu busy but core 6 (cpus 6 and 14).
  const Topology t(shape(1, 1, 8, 2));
  FakeView v(16);
  v.busy_all();
  v.set_idle(6);
  v.set_idle(14);
  WakeeInfo p;
  params.v5_10 = true;
  v.set_avg_idle(1, us(10));  // SIS_PROP budget 4: examines 1, 2, 3 at most
  v.set_scan_cost(100);
  // select_idle_core() walks the whole LLC (no budget) from target 1: core 6 is idle.
  EXPECT_EQ(select_idle_sibling(t, v, params, p, /*prev=*/1, /*target=*/1, 1, false), 6);
  // Core 6 half busy: no idle core; the budgeted walk (1, 2, 3) misses cpu 6, and target's own
  // sibling (9) is busy: the wakee stays on target. v6.6's select_idle_cpu() would return 6,
  // the first idle thread its whole-LLC core walk saw.
  v.run(14);
  EXPECT_EQ(select_idle_sibling(t, v, params, p, 1, 1, 1, false), 1);
  // select_idle_smt(target): target's idle sibling.
  v.set_idle(9);
  EXPECT_EQ(select_idle_sibling(t, v, params, p, 1, 1, 1, false), 9);
  // v5.10 has no step that tries prev's idle sibling: with prev 5 (sibling 13 idle) and target
  // 1, the wakee still goes to 9 (v6.6 would take 13 first).
  v.run(9);
  v.set_idle(13);
  EXPECT_EQ(select_idle_sibling(t, v, params, p, /*prev=*/5, /*target=*/1, 1, false), 1);
}

TEST_F(WakeTest, V510KeepsRecentUsedCpuUntilItIsTaken) {
  // 8 cpus, one LLC, no SMT, all busy; the wakee last ran on 2 and remembers 5.
  const Topology t(shape(1, 1, 8, 1));
  FakeView v(8);
  v.busy_all();
  WakeeInfo p;
  p.recent_used_cpu = 5;
  params.v5_10 = true;
  // 5 busy: not taken, and v5.10 keeps it (v6.6 would now remember prev, 2).
  EXPECT_EQ(select_idle_sibling(t, v, params, p, /*prev=*/2, /*target=*/2, 2, false), 2);
  EXPECT_EQ(p.recent_used_cpu, 5);
  // 5 idle: taken, and replaced by prev.
  v.set_idle(5);
  EXPECT_EQ(select_idle_sibling(t, v, params, p, 2, 2, 2, false), 5);
  EXPECT_EQ(p.recent_used_cpu, 2);
  // An affine wakeup sets the waker's to the waking cpu.
  WakeeInfo waker;
  p.prev_cpu = 2;
  (void)select_task_rq_fair(t, v, params, p, /*this_cpu=*/6, &waker, /*sync=*/true, false, 0);
  EXPECT_EQ(waker.recent_used_cpu, 6);
  params.v5_10 = false;
  waker.recent_used_cpu = -1;
  (void)select_task_rq_fair(t, v, params, p, 6, &waker, true, false, 0);
  EXPECT_EQ(waker.recent_used_cpu, -1);
}

TEST_F(WakeTest, SoftirqOnlyCpuLooksIdleToPlacement) {
  // cpu 2 is running NET_RX softirq on top of its idle task: the runqueue is empty, so the
  // scheduler (available_idle_cpu) sees an idle cpu and places the wakee there.
  const Topology t(shape(1, 1, 4, 1));
  FakeView v(4);
  v.busy_all();
  v.set_idle(2);
  v.set_softirq(2);
  WakeeInfo p;
  p.prev_cpu = 0;
  EXPECT_EQ(select_idle_sibling(t, v, params, p, 0, 0, 0, false), 2);
  EXPECT_EQ(select_task_rq_fair(t, v, params, p, /*this_cpu=*/2, nullptr, /*sync=*/true, false, 0), 2);
  // A queued-but-not-yet-activated wakeup (ttwu_pending) does make it non-idle.
  v.set_pending(2);
  EXPECT_EQ(select_idle_sibling(t, v, params, p, 0, 0, 0, false), 0);
}

TEST_F(WakeTest, PrefersAnIdleCoreOverAnIdleSiblingOfABusyCore) {
  const Topology t(shape(1, 1, 4, 2));  // cores {0,4} {1,5} {2,6} {3,7}
  FakeView v(8);
  v.busy_all();
  for (int c = 0; c < 8; ++c)
    v.set_util(c, 780);  // busy LLC: nr_idle_scan = 1
  v.set_idle(5);         // sibling of busy cpu 1: seen first in the scan from target 0
  v.set_idle(3);
  v.set_idle(7);  // core 3 entirely idle
  WakeeInfo p;
  EXPECT_EQ(nr_idle_scan(t, v, 117, 0), 1);
  EXPECT_TRUE(test_idle_cores(t, v, 0));
  // The idle-core search covers the whole LLC (not bounded by nr_idle_scan) and beats cpu 5.
  EXPECT_EQ(select_idle_sibling(t, v, params, p, /*prev=*/0, /*target=*/0, 0, false), 3);

  // No idle core left: the idle-cpu scan is bounded to nr_idle_scan = 1 cpu (cpu 1, busy)...
  v.run(7);
  EXPECT_FALSE(test_idle_cores(t, v, 0));
  EXPECT_EQ(select_idle_sibling(t, v, params, p, /*prev=*/0, /*target=*/0, 0, false), 0);
  // ...but an idle SMT sibling of prev is tried first (select_idle_smt).
  EXPECT_EQ(select_idle_sibling(t, v, params, p, /*prev=*/1, /*target=*/0, 0, false), 5);
  params.sis_util = false;
  EXPECT_EQ(select_idle_sibling(t, v, params, p, /*prev=*/0, /*target=*/0, 0, false), 3);
}

TEST_F(WakeTest, SelectIdleCoreFallsBackToFirstIdleThread) {
  const Topology t(shape(1, 1, 4, 2));
  FakeView v(8);
  v.busy_all();
  v.set_idle(5);
  v.set_idle(7);
  params.sis_util = false;
  const CpuMask all = CpuMask::all(8);
  // has_idle_core claimed (a stale hint) but no core is idle: the first idle thread seen (5).
  EXPECT_EQ(select_idle_cpu(t, v, params, all, /*has_idle_core=*/true, /*target=*/0), 5);
}

TEST_F(WakeTest, NeverLeavesTheAllowedMask) {
  const Topology t(shape(1, 2, 4, 2));  // 16 cpus, llc0 = {0-3, 8-11}, llc1 = {4-7, 12-15}
  const CpuMask allowed = CpuMask::parse("5-6,13", 16, "/x");
  FakeView v(16);
  WakeeInfo p;
  p.allowed = &allowed;
  p.prev_cpu = 0;  // affinity changed since it last ran
  // Idle everywhere except the allowed cpus: target/prev/recent are idle but not allowed.
  v.busy_all();
  for (int c : {0, 1, 2, 3})
    v.set_idle(c);
  int got = select_task_rq_fair(t, v, params, p, /*this_cpu=*/1, nullptr, false, false, 0);
  EXPECT_TRUE(allowed.test(got)) << got;

  // Deterministic sweep over many idle patterns and waker cpus.
  std::uint64_t s = 12345;
  auto rnd = [&s]() {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::uint32_t>(s >> 33);
  };
  WakeeInfo waker;
  for (int iter = 0; iter < 2000; ++iter) {
    for (int c = 0; c < 16; ++c) {
      if (rnd() % 2 == 0)
        v.set_idle(c);
      else
        v.run(c, static_cast<int>(rnd() % 3) + 1);
      v.set_util(c, static_cast<std::int64_t>(rnd() % 1025));
    }
    p.prev_cpu = static_cast<int>(rnd() % 16);
    p.recent_used_cpu = static_cast<int>(rnd() % 17) - 1;
    const int this_cpu = static_cast<int>(rnd() % 16);
    got = select_task_rq_fair(t, v, params, p, this_cpu, &waker, rnd() % 2 == 0, rnd() % 2 == 0, iter * 1000);
    ASSERT_TRUE(allowed.test(got)) << "iteration " << iter << " picked " << got;
  }

  // A task pinned to one cpu goes there.
  const CpuMask one = CpuMask::parse("9", 16, "/x");
  p.allowed = &one;
  EXPECT_EQ(select_task_rq_fair(t, v, params, p, 0, nullptr, false, false, 0), 9);
}

TEST_F(WakeTest, RecentlyUsedCpuIsTriedBeforeTheScan) {
  const Topology t(shape(1, 1, 8, 1));
  FakeView v(8);
  v.busy_all();
  v.set_idle(6);
  v.set_idle(2);  // the scan from target 0 would find 2 first
  WakeeInfo p;
  p.recent_used_cpu = 6;
  EXPECT_EQ(select_idle_sibling(t, v, params, p, /*prev=*/1, /*target=*/0, 0, false), 6);
  EXPECT_EQ(p.recent_used_cpu, 1);  // p->recent_used_cpu = prev
}

TEST_F(WakeTest, PerCpuKthreadWakerStacksOnPrev) {
  const Topology t(shape(1, 1, 4, 1));
  FakeView v(4);
  v.busy_all();
  v.set_idle(3);
  WakeeInfo p;
  // Waker is a per-cpu kthread on cpu 1 (nr_running 1: itself), wakee last ran on cpu 1.
  EXPECT_EQ(select_idle_sibling(t, v, params, p, 1, 1, /*this_cpu=*/1, /*per_cpu_kthread=*/true), 1);
  // Not a per-cpu kthread (e.g. ksoftirqd serving softirq: in_task() is false): scan finds 3.
  EXPECT_EQ(select_idle_sibling(t, v, params, p, 1, 1, 1, false), 3);
}

// ----------------------------------------------------------------------------------------------
// wake_affine / wake_wide / select_task_rq_fair

TEST_F(WakeTest, WakeAffineIdlePullsAnInterruptWakeupToTheIdleWakingCpu) {
  const Topology t(shape(1, 2, 4, 1));  // llc0 = 0-3, llc1 = 4-7
  FakeView v(8);
  v.busy_all();
  v.set_idle(1);  // this_cpu: idle task running NET_RX softirq
  // prev busy and cache-affine: pull to this_cpu.
  EXPECT_EQ(wake_affine_idle(t, v, /*this_cpu=*/1, /*prev=*/2, /*sync=*/true), 1);
  // prev idle too: stay on prev.
  v.set_idle(2);
  EXPECT_EQ(wake_affine_idle(t, v, 1, 2, true), 2);
  // prev in another LLC and busy: no pull from the idle-cpu rule, no opinion.
  EXPECT_EQ(wake_affine_idle(t, v, 1, 5, false), -1);
  // Sync wakeup by the only task on a busy this_cpu: pull.
  EXPECT_EQ(wake_affine_idle(t, v, 4, 6, true), 4);

  // End to end: the wakee lands on the idle softirq cpu.
  v.run(2);
  WakeeInfo p;
  p.prev_cpu = 2;
  EXPECT_EQ(select_task_rq_fair(t, v, params, p, /*this_cpu=*/1, nullptr, true, false, 0), 1);
}

TEST_F(WakeTest, WakeAffineWeightComparesBiasedLoads) {
  const Topology t(shape(1, 2, 2, 1));
  FakeView v(4);
  v.run(0, 1);  // this: 1024
  v.run(2, 3);  // prev: 3072
  // this_eff = (1024 + 1024) * 100 * 1024; prev_eff = (3072 - 1024) * 108 * 1024: pull.
  EXPECT_EQ(wake_affine_weight(v, 117, 1024, 0, 0, 2, false), 0);
  v.run(2, 2);  // prev: 2048 -> (2048 - 1024) * 108 < 2048 * 100: stay.
  EXPECT_EQ(wake_affine_weight(v, 117, 1024, 0, 0, 2, false), -1);
  // Sync: the waker's load is discounted from this_cpu.
  EXPECT_EQ(wake_affine_weight(v, 117, 1024, 1024, 0, 2, true), 0);
  WakeeInfo p;
  p.prev_cpu = 2;
  EXPECT_EQ(wake_affine(t, v, params, p, nullptr, 0, 2, false), 2);
}

TEST_F(WakeTest, WakeWideDetectsOneToManyWakers) {
  const Topology t(shape(1, 1, 8, 1));  // sd_llc_size = 8
  WakeeInfo waker, wakee;
  waker.wakee_flips = 100;
  wakee.wakee_flips = 10;
  EXPECT_TRUE(wake_wide(t, wakee, &waker, 0));
  wakee.wakee_flips = 7;  // slave below llc size
  EXPECT_FALSE(wake_wide(t, wakee, &waker, 0));
  wakee.wakee_flips = 13;  // 13 * 8 > 100
  EXPECT_FALSE(wake_wide(t, wakee, &waker, 0));
  EXPECT_FALSE(wake_wide(t, wakee, nullptr, 0));
  // Symmetric: the wakee may be the many-partner side.
  waker.wakee_flips = 10;
  wakee.wakee_flips = 100;
  EXPECT_TRUE(wake_wide(t, wakee, &waker, 0));

  // A dispatcher waking 16 workers in turn builds up flips; each worker only ever wakes itself
  // up via the dispatcher, so its own flips stay at what it records as a waker.
  WakeeInfo dispatcher;
  std::vector<WakeeInfo> workers(16);
  for (int round = 0; round < 8; ++round)
    for (auto& w : workers)
      record_wakee(dispatcher, w, /*now=*/ms(1) * round);
  EXPECT_EQ(dispatcher.wakee_flips, 128U);
  workers[0].wakee_flips = 9;  // e.g. it wakes a few peers itself
  EXPECT_TRUE(wake_wide(t, workers[0], &dispatcher, 0));
  // Waking the same task again is not a flip.
  record_wakee(dispatcher, workers[15], ms(10));
  EXPECT_EQ(dispatcher.wakee_flips, 128U);
  // Decay: halved once after more than a second.
  record_wakee(dispatcher, workers[15], sec(1) + ms(1));
  EXPECT_EQ(dispatcher.wakee_flips, 64U);
  EXPECT_EQ(dispatcher.wakee_flip_decay_ts, sec(1) + ms(1));
}

TEST_F(WakeTest, WideWakeupStaysNearPrevInsteadOfPullingToWaker) {
  const Topology t(shape(1, 2, 4, 1));  // llc0 = 0-3, llc1 = 4-7; sd_llc_size 4
  FakeView v(8);
  v.busy_all();
  v.run(5, 3);    // prev is loaded
  v.set_idle(1);  // waker cpu idle (irq context)
  v.set_idle(6);  // an idle cpu in prev's LLC
  // Not wide: WA_IDLE has no opinion (this_cpu idle but not cache-affine with prev, prev busy);
  // WA_WEIGHT: (0 + 1024) * 100 < (3072 - 1024) * 108 -> pull to this_cpu, which is idle.
  WakeeInfo q;
  q.prev_cpu = 5;
  EXPECT_EQ(select_task_rq_fair(t, v, params, q, 1, nullptr, false, false, 0), 1);
  // Wide waker (1:N): no affine pull, the search stays in prev's LLC.
  WakeeInfo wide_waker, r;
  wide_waker.wakee_flips = 1000;
  r.prev_cpu = 5;
  r.wakee_flips = 20;
  EXPECT_EQ(select_task_rq_fair(t, v, params, r, 1, &wide_waker, false, false, 0), 6);
  EXPECT_EQ(wide_waker.wakee_flips, 1001U);  // record_wakee ran
  EXPECT_EQ(r.recent_used_cpu, 5);
}

TEST_F(WakeTest, NoAffinePullAcrossDistantNodes) {
  TopologyParams sp = shape(2, 1, 4, 1);
  sp.numa_distance = {10, 32, 32, 10};  // > node_reclaim_distance: no SD_WAKE_AFFINE
  const Topology far(sp);
  FakeView v(8);
  v.busy_all();
  v.run(5, 3);
  v.set_idle(0);
  WakeeInfo p;
  p.prev_cpu = 5;
  // this_cpu 0 idle on node 0, everything on node 1 busy: the wakeup stays on prev.
  EXPECT_EQ(select_task_rq_fair(far, v, params, p, 0, nullptr, false, false, 0), 5);
  // At the default distance 20 the NUMA domain is wake-affine and WA_WEIGHT pulls to cpu 0.
  const Topology near(shape(2, 1, 4, 1));
  WakeeInfo q;
  q.prev_cpu = 5;
  EXPECT_EQ(select_task_rq_fair(near, v, params, q, 0, nullptr, false, false, 0), 0);
  // wake_affine disabled: stays on prev.
  params.wake_affine = false;
  WakeeInfo r;
  r.prev_cpu = 5;
  EXPECT_EQ(select_task_rq_fair(near, v, params, r, 0, nullptr, false, false, 0), 5);
}

// ----------------------------------------------------------------------------------------------
// SIS_UTIL

TEST_F(WakeTest, NrIdleScanFollowsTheSisUtilCurve) {
  const Topology t(shape(1, 1, 112, 1));
  FakeView v(112);
  auto scan_at = [&](std::int64_t per_cpu_util) {
    for (int c = 0; c < 112; ++c)
      v.set_util(c, per_cpu_util);
    return nr_idle_scan(t, v, 117, 0);
  };
  EXPECT_EQ(scan_at(0), 112);
  EXPECT_EQ(scan_at(154), 108);  // ~15%
  EXPECT_EQ(scan_at(512), 73);   // 50%
  EXPECT_EQ(scan_at(870), 1);    // 85%
  EXPECT_EQ(scan_at(880), 0);    // beyond 100/117: no scan
  EXPECT_EQ(scan_at(5000), 0);   // per-cpu util is capped at capacity
}

TEST_F(WakeTest, OverloadedLlcSkipsTheScanUnderSisUtil) {
  const Topology t(shape(1, 1, 8, 1));
  FakeView v(8);
  v.busy_all();
  for (int c = 0; c < 8; ++c)
    v.set_util(c, 1024);
  v.set_idle(5);  // just went idle: its PELT util is still high
  WakeeInfo p;
  EXPECT_EQ(nr_idle_scan(t, v, 117, 0), 0);
  EXPECT_EQ(select_idle_sibling(t, v, params, p, 0, 0, 0, false), 0);
  params.sis_util = false;
  EXPECT_EQ(select_idle_sibling(t, v, params, p, 0, 0, 0, false), 5);
  // Bounded scan: nr_idle_scan cpus after target are examined, no more.
  params.sis_util = true;
  for (int c = 0; c < 8; ++c)
    v.set_util(c, 400);  // x = 400 -> nr_idle_scan = 6
  EXPECT_EQ(nr_idle_scan(t, v, 117, 0), 6);
  const CpuMask all = CpuMask::all(8);
  EXPECT_EQ(select_idle_cpu(t, v, params, all, false, /*target=*/7), 5);   // scans 0..5
  EXPECT_EQ(select_idle_cpu(t, v, params, all, false, /*target=*/5), -1);  // 6,7,0,1,2,3
}

// ----------------------------------------------------------------------------------------------
// ttwu_queue, balancing helpers

TEST_F(WakeTest, TtwuQueueWakelistMirrorsTtwuQueueCond) {
  const Topology t(shape(1, 2, 4, 1));
  FakeView v(8);
  v.busy_all();
  v.set_idle(2);
  EXPECT_TRUE(ttwu_queue_wakelist(t, v, params, nullptr, 5, 0));   // other LLC
  EXPECT_TRUE(ttwu_queue_wakelist(t, v, params, nullptr, 2, 0));   // same LLC, idle target
  EXPECT_FALSE(ttwu_queue_wakelist(t, v, params, nullptr, 3, 0));  // same LLC, busy target
  EXPECT_FALSE(ttwu_queue_wakelist(t, v, params, nullptr, 0, 0));  // local
  const CpuMask only0 = CpuMask::parse("0", 8, "/x");
  EXPECT_FALSE(ttwu_queue_wakelist(t, v, params, &only0, 5, 0));
  params.ttwu_queue = false;
  EXPECT_FALSE(ttwu_queue_wakelist(t, v, params, nullptr, 5, 0));
}

TEST_F(WakeTest, FindBusiestCpuPicksTheLongestRunqueue) {
  const Topology t(shape(1, 2, 4, 1));
  FakeView v(8);
  for (int c = 0; c < 8; ++c)
    v.run(c, 1);
  EXPECT_EQ(find_busiest_cpu(t, v, 0), -1);  // single tasks are never pulled
  v.run(1, 3);
  v.run(2, 3, 2048);  // same count, heavier
  v.run(3, 2);
  v.run(6, 5);  // other LLC
  EXPECT_EQ(find_busiest_cpu(t, v, 0), 2);
  EXPECT_EQ(find_busiest_cpu(t, v, 0, BalanceScope::kNode), 6);
  EXPECT_EQ(find_busiest_cpu(t, v, 2), 1);  // never this_cpu
  v.run(2, 3);                              // tie on count and load: lower cpu id
  EXPECT_EQ(find_busiest_cpu(t, v, 0), 1);
  EXPECT_EQ(find_busiest_cpu(t, v, 0, BalanceScope::kCore), -1);
}

TEST_F(WakeTest, FindBusiestCpuOverTheOverloadedSetAgreesWithTheFullScan) {
  // The kernel's caller passes the cpus with nr_running >= 2; no other cpu can be picked, so the
  // answer is the full scan's for every state, this_cpu and scope.
  const Topology t(shape(1, 2, 4, 1));
  FakeView v(8);
  const int counts[][8] = {
      {1, 1, 1, 1, 1, 1, 1, 1}, {1, 3, 3, 2, 0, 1, 5, 1}, {2, 0, 2, 0, 2, 0, 2, 0}, {0, 0, 0, 0, 0, 0, 0, 4}};
  for (const auto& nr : counts) {
    CpuMask overloaded(8);
    for (int c = 0; c < 8; ++c) {
      v.run(c, nr[c], 1024 * (c % 3 + 1));
      if (nr[c] >= 2) overloaded.set(c);
    }
    for (int cpu = 0; cpu < 8; ++cpu)
      for (BalanceScope s : {BalanceScope::kCore, BalanceScope::kLlc, BalanceScope::kNode, BalanceScope::kSystem})
        EXPECT_EQ(find_busiest_cpu(t, v, cpu, s, &overloaded), find_busiest_cpu(t, v, cpu, s)) << cpu;
  }
  CpuMask overloaded(8);
  overloaded.set(6);
  EXPECT_EQ(find_busiest_cpu(t, v, 0, BalanceScope::kNode, &overloaded), -1);  // the set limits the scan
}

TEST(WakeBalanceTest, TaskHotUsesMigrationCost) {
  EXPECT_TRUE(task_hot(us(1000), us(700)));   // ran 300us ago < 500us
  EXPECT_FALSE(task_hot(us(1000), us(400)));  // 600us ago
  EXPECT_FALSE(task_hot(us(1000), us(500)));  // exactly the cost: not hot
  EXPECT_TRUE(task_hot(sec(10), 0, -1));
  EXPECT_FALSE(task_hot(us(1), 0, 0));
}

}  // namespace
}  // namespace napisim
