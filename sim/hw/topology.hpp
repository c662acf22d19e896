// napisim: CPU topology (NUMA nodes, last-level caches, cores, SMT threads) and CpuMask.
//
// Numbering follows Linux on x86 with SMT enumerated the usual BIOS/ACPI way: with C cores,
// cpus 0..C-1 are thread 0 of each core in order (node-major, then LLC, then core), and cpus
// C..2C-1 are their SMT siblings, so on a 28-core part cpu 28 is the sibling of cpu 0. The kernel's
// scheduling-domain hierarchy this implies is, bottom-up:
//   SMT  (span = the core's threads; only when threads_per_core == 2; imbalance_pct 110)
//   MC   (span = the LLC; sd_llc, sd_llc_size; imbalance_pct 117)
//   PKG  (span = the node, only when a node has several LLCs)
//   NUMA (one level per distinct SLIT distance; SD_WAKE_AFFINE is cleared on levels whose
//         distance exceeds node_reclaim_distance = 30, kernel/sched/topology.c sd_init(), v6.6)
// The wake-placement code (sim/kernel/wake.hpp) walks this implied hierarchy; Topology itself only
// answers "which core / LLC / node is this cpu in".
//
// Distances are the ACPI SLIT: 10 local, > 10 remote (default 20). numa_distance() is an Eigen
// matrix so analysis code can use it directly.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <Eigen/Dense>

#include "sim/core/error.hpp"
#include "sim/core/time.hpp"
#include "sim/params/fields.hpp"

namespace napisim {

/// Dynamic bitset over [0, nr_cpus) (a struct cpumask). Bits >= nr_cpus are always clear, so
/// operator== is plain word comparison.
class CpuMask {
 public:
  static constexpr int kWordBits = 64;  // cpus per word of the bitmap
  CpuMask() = default;
  /// An empty mask over nr_cpus cpus.
  explicit CpuMask(int nr_cpus);
  /// A mask with every cpu in [0, nr_cpus) set (cpu_possible_mask).
  static CpuMask all(int nr_cpus);
  /// Parses the kernel cpulist format (Documentation/admin-guide/kernel-parameters.rst "cpu
  /// lists", lib/bitmap.c bitmap_parselist()): comma-separated groups "N", "A-B", "A-B:U/G"
  /// (in every group of G cpus starting at A, the first U), plus the napisim shorthand
  /// "A-B:S" (every S-th cpu, = "A-B:1/S"). "N" as a number means the last cpu. "" and "all" mean
  /// every cpu. Surrounding whitespace (a sysfs trailing newline) is ignored. Errors throw
  /// ConfigError(json_path, "expected a cpu list like \"0-7,16\" with cpus < 56, got \"0-99\"").
  static CpuMask parse(std::string_view cpulist, int nr_cpus, const std::string& json_path);

  int nr_cpus() const { return nr_cpus_; }
  // set(), clear(), test() and any() inline: placement tests bits on every wakeup, and the
  // scheduler keeps its overloaded set on every enqueue and dequeue.
  void set(int cpu) {
    NAPISIM_ASSERT(cpu >= 0 && cpu < nr_cpus_, "cpu out of range");
    words()[static_cast<std::size_t>(cpu / kWordBits)] |= std::uint64_t{1} << (cpu % kWordBits);
  }
  void clear(int cpu) {
    NAPISIM_ASSERT(cpu >= 0 && cpu < nr_cpus_, "cpu out of range");
    words()[static_cast<std::size_t>(cpu / kWordBits)] &= ~(std::uint64_t{1} << (cpu % kWordBits));
  }
  bool test(int cpu) const {
    if (cpu < 0 || cpu >= nr_cpus_) return false;
    return (words()[static_cast<std::size_t>(cpu / kWordBits)] >> (cpu % kWordBits)) & 1U;
  }
  void set_all();
  void clear_all();
  int count() const;
  /// Exactly one cpu set (the kernel tests p->nr_cpus_allowed == 1): no popcount needed.
  bool single() const;
  bool any() const {
    for (auto w : words())
      if (w != 0) return true;
    return false;
  }
  bool none() const { return !any(); }
  /// All nr_cpus bits set.
  bool full() const { return count() == nr_cpus_; }
  /// Lowest set cpu, or -1.
  int first() const { return next(-1); }
  /// Lowest set cpu strictly greater than `after` (after may be -1), or -1. Inline: every
  /// for_each_cpu() walk of placement and balancing calls it once per cpu.
  int next(int after) const {
    int start = after + 1;
    if (start < 0) start = 0;
    if (start >= nr_cpus_) return -1;
    const auto w = words();
    std::size_t wi = static_cast<std::size_t>(start / kWordBits);
    std::uint64_t bits = w[wi] & (~std::uint64_t{0} << (start % kWordBits));
    while (true) {
      if (bits != 0) return static_cast<int>(wi) * kWordBits + std::countr_zero(bits);
      if (++wi >= w.size()) return -1;
      bits = w[wi];
    }
  }
  bool intersects(const CpuMask& o) const;

  CpuMask operator&(const CpuMask& o) const;
  CpuMask operator|(const CpuMask& o) const;
  CpuMask& operator&=(const CpuMask& o);
  CpuMask& operator|=(const CpuMask& o);
  /// this & ~o (cpumask_andnot).
  CpuMask& and_not(const CpuMask& o);
  bool operator==(const CpuMask& o) const = default;

  /// Canonical cpulist: ascending ranges, "0-7,28-35", "3", "" when empty (as the kernel's
  /// "%*pbl" prints, which also prints a run of two as "4-5").
  std::string to_cpulist() const;

 private:
  // The bitmap: inline up to kInlineWords words (256 cpus), so that copying a mask, as
  // select_idle_cpu() does on every scan, allocates nothing; larger machines use big_.
  static constexpr std::size_t kInlineWords = 4;
  std::span<std::uint64_t> words() { return {nwords_ <= kInlineWords ? small_.data() : big_.data(), nwords_}; }
  std::span<const std::uint64_t> words() const {
    return {nwords_ <= kInlineWords ? small_.data() : big_.data(), nwords_};
  }
  int nr_cpus_ = 0;
  std::size_t nwords_ = 0;
  std::array<std::uint64_t, kInlineWords> small_{};  // all zero when big_ is used
  std::vector<std::uint64_t> big_;                   // empty when small_ is used
};

/// Machine shape. Plain struct: the lead's params layer declares fields and units; validate()
/// checks cross-field consistency and throws ConfigError with a JSON pointer below `path`.
struct TopologyParams {
  std::int64_t numa_nodes = 1;
  std::int64_t llcs_per_node = 1;
  std::int64_t cores_per_llc = 4;
  std::int64_t threads_per_core = 1;  ///< 1 (SMT off) or 2
  /// Per-thread throughput when both SMT siblings are busy, relative to running alone. Default:
  /// a core gives 1.24x one thread's throughput with both threads busy, inside the 15-30% that
  /// Hyper-Threading adds to server workloads (Marr et al., Intel Technology Journal 6(1), 2002:
  /// "up to 30%") [MEAS range; the value within it INFER].
  double smt_speed = 0.62;
  /// Extra cost of handing work to a cpu in another LLC of the same node.
  Nanos remote_llc_penalty_ns = 200;
  /// Extra cost of handing work to a cpu on another node, at SLIT distance 10; it is scaled by
  /// distance / 10 (so 2x at the default remote distance 20).
  Nanos remote_node_penalty_ns = 500;
  /// Optional flattened numa_nodes x numa_nodes SLIT (row-major). Empty = 10 local, 20 remote.
  std::vector<std::int64_t> numa_distance;

  /// Throws ConfigError for inconsistent values (e.g. "/topology/threads_per_core: expected 1 or
  /// 2, got 4", or a numa_distance of the wrong size / with a non-10 diagonal).
  void validate(const std::string& path) const;

  template <class V>
  static void fields(V& v) {
    v("numa_nodes", &TopologyParams::numa_nodes, "nodes", "NUMA nodes", Range{1, 64});
    v("llcs_per_node", &TopologyParams::llcs_per_node, "LLCs", "Last-level-cache domains per node", Range{1, 64});
    v("cores_per_llc", &TopologyParams::cores_per_llc, "cores", "Cores per LLC domain", Range{1, 1024});
    v("threads_per_core", &TopologyParams::threads_per_core, "threads", "SMT threads per core (1 = SMT off)",
      Range{1, 2});
    v("smt_speed", &TopologyParams::smt_speed, "", "Per-thread throughput when both SMT siblings are busy",
      Range{0.05, 1});
    v("remote_llc_penalty_ns", &TopologyParams::remote_llc_penalty_ns, "ns",
      "Cache refill cost when work moves to another LLC of the node", Range{0, 1e7});
    v("remote_node_penalty_ns", &TopologyParams::remote_node_penalty_ns, "ns",
      "Cache refill cost when work moves to another node, at SLIT distance 10 (scaled by distance/10)", Range{0, 1e7});
    v("numa_distance", &TopologyParams::numa_distance, "", "Flattened SLIT (empty: 10 local, 20 remote)",
      Range{10, 254});
  }
  bool operator==(const TopologyParams&) const = default;
};

class Topology {
 public:
  /// Validates `p` (with JSON pointer `json_path`) and builds the cpu tables.
  explicit Topology(const TopologyParams& p, const std::string& json_path = "");

  const TopologyParams& params() const { return params_; }
  int nr_cpus() const { return nr_cpus_; }
  int nr_cores() const { return nr_cores_; }
  int nr_llcs() const { return nr_llcs_; }
  int nr_nodes() const { return nr_nodes_; }
  int threads_per_core() const { return threads_per_core_; }
  /// sched_smt_active(): the machine has SMT siblings.
  bool smt_active() const { return threads_per_core_ > 1; }
  /// CPUs per LLC (per_cpu(sd_llc_size); uniform here).
  int llc_size() const { return llc_size_; }

  int node_of(int cpu) const { return node_of_[check(cpu)]; }
  int llc_of(int cpu) const { return llc_of_[check(cpu)]; }
  int core_of(int cpu) const { return check(cpu) % nr_cores_; }
  /// The other SMT thread of cpu's core, or -1 without SMT.
  int sibling_of(int cpu) const {
    check(cpu);
    if (threads_per_core_ < 2) return -1;
    return cpu < nr_cores_ ? cpu + nr_cores_ : cpu - nr_cores_;
  }
  /// cpus_share_cache(a, b): same LLC.
  bool share_cache(int a, int b) const { return llc_of(a) == llc_of(b); }
  bool same_core(int a, int b) const { return core_of(a) == core_of(b); }

  /// Ascending cpu ids of an LLC / node (thread-0 cpus first, then their siblings).
  const std::vector<int>& cpus_of_llc(int llc) const;
  const std::vector<int>& cpus_of_node(int node) const;
  /// The same sets as masks (sched_domain_span of MC, node span, cpu_smt_mask).
  const CpuMask& llc_mask(int llc) const {
    NAPISIM_ASSERT(llc >= 0 && llc < nr_llcs_, "llc out of range");
    return llc_masks_[static_cast<std::size_t>(llc)];
  }
  const CpuMask& node_mask(int node) const {
    NAPISIM_ASSERT(node >= 0 && node < nr_nodes_, "node out of range");
    return node_masks_[static_cast<std::size_t>(node)];
  }
  const CpuMask& smt_mask(int cpu) const { return core_masks_[core_of(cpu)]; }
  const CpuMask& all_cpus() const { return all_; }

  /// SLIT distance between two nodes (node ids, not cpus).
  int node_distance(int node_a, int node_b) const;
  /// Extra latency of handing work (a wakeup, a packet, an IPI'd softirq) from cpu `from` to cpu
  /// `to`: 0 on the same core or LLC; remote_llc_penalty_ns within a node; across nodes
  /// remote_node_penalty_ns * distance / 10 (rounded to the nearest ns).
  Nanos handoff_penalty(int from, int to) const;
  /// Cross-node part of it: remote_node_penalty_ns * distance / 10 (rounded), 0 on the same node.
  Nanos node_penalty(int node_a, int node_b) const;
  /// Node distance matrix (nr_nodes x nr_nodes, SLIT units).
  const Eigen::MatrixXd& distance() const { return distance_; }

 private:
  // Inline, as are the lookups above: wakeup placement and balancing call them per cpu.
  int check(int cpu) const {
    NAPISIM_ASSERT(cpu >= 0 && cpu < nr_cpus_, "cpu out of range");
    return cpu;
  }

  TopologyParams params_;
  int nr_nodes_ = 0, nr_llcs_ = 0, nr_cores_ = 0, nr_cpus_ = 0;
  int threads_per_core_ = 1, llc_size_ = 0;
  std::vector<int> node_of_, llc_of_;
  std::vector<std::vector<int>> llc_cpus_, node_cpus_;
  std::vector<CpuMask> llc_masks_, node_masks_, core_masks_;
  CpuMask all_;
  Eigen::MatrixXd distance_;
};

}  // namespace napisim
