// napisim: CPU topology and CpuMask (see topology.hpp).
#include "sim/hw/topology.hpp"

#include <bit>
#include <cmath>
#include <limits>
#include <optional>

#include "sim/core/error.hpp"

namespace napisim {

// ---------------------------------------------------------------------------------------------
// CpuMask

namespace {

std::size_t words_for(int nr_cpus) {
  return static_cast<std::size_t>((nr_cpus + CpuMask::kWordBits - 1) / CpuMask::kWordBits);
}

}  // namespace

CpuMask::CpuMask(int nr_cpus) : nr_cpus_(nr_cpus), nwords_(words_for(nr_cpus)) {
  NAPISIM_ASSERT(nr_cpus >= 0, "negative cpu count");
  if (nwords_ > kInlineWords) big_.assign(nwords_, 0);
}

CpuMask CpuMask::all(int nr_cpus) {
  CpuMask m(nr_cpus);
  m.set_all();
  return m;
}

void CpuMask::set_all() {
  for (auto& w : words())
    w = ~std::uint64_t{0};
  const int tail = nr_cpus_ % kWordBits;
  if (tail != 0) words().back() &= (std::uint64_t{1} << tail) - 1;
}

void CpuMask::clear_all() {
  for (auto& w : words())
    w = 0;
}

int CpuMask::count() const {
  int n = 0;
  for (auto w : words())
    n += std::popcount(w);
  return n;
}

bool CpuMask::single() const {
  bool seen = false;
  for (auto w : words()) {
    if (w == 0) continue;
    if (seen || (w & (w - 1)) != 0) return false;
    seen = true;
  }
  return seen;
}

bool CpuMask::intersects(const CpuMask& o) const {
  NAPISIM_ASSERT(nr_cpus_ == o.nr_cpus_, "CpuMask size mismatch");
  const auto a = words();
  const auto b = o.words();
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i] & b[i]) return true;
  return false;
}

CpuMask CpuMask::operator&(const CpuMask& o) const {
  CpuMask r = *this;
  r &= o;
  return r;
}

CpuMask CpuMask::operator|(const CpuMask& o) const {
  CpuMask r = *this;
  r |= o;
  return r;
}

CpuMask& CpuMask::operator&=(const CpuMask& o) {
  NAPISIM_ASSERT(nr_cpus_ == o.nr_cpus_, "CpuMask size mismatch");
  const auto a = words();
  const auto b = o.words();
  for (std::size_t i = 0; i < a.size(); ++i)
    a[i] &= b[i];
  return *this;
}

CpuMask& CpuMask::operator|=(const CpuMask& o) {
  NAPISIM_ASSERT(nr_cpus_ == o.nr_cpus_, "CpuMask size mismatch");
  const auto a = words();
  const auto b = o.words();
  for (std::size_t i = 0; i < a.size(); ++i)
    a[i] |= b[i];
  return *this;
}

CpuMask& CpuMask::and_not(const CpuMask& o) {
  NAPISIM_ASSERT(nr_cpus_ == o.nr_cpus_, "CpuMask size mismatch");
  const auto a = words();
  const auto b = o.words();
  for (std::size_t i = 0; i < a.size(); ++i)
    a[i] &= ~b[i];
  return *this;
}

std::string CpuMask::to_cpulist() const {
  std::string out;
  int c = first();
  while (c != -1) {
    int end = c;
    while (test(end + 1))
      ++end;
    if (!out.empty()) out += ',';
    out += std::to_string(c);
    if (end > c) out += '-' + std::to_string(end);
    c = next(end);
  }
  return out;
}

namespace {

bool is_space(char ch) {
  return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

/// Cursor over one cpulist; every helper returns nullopt/false on malformed input.
class ListParser {
 public:
  ListParser(std::string_view s, int nr_cpus) : s_(s), nr_cpus_(nr_cpus) {}
  bool done() const { return pos_ >= s_.size(); }
  bool eat(char ch) {
    if (!done() && s_[pos_] == ch) {
      ++pos_;
      return true;
    }
    return false;
  }
  /// A decimal number or "N" (the last cpu, as bitmap_parselist accepts since v5.13).
  std::optional<std::int64_t> number() {
    if (eat('N')) return nr_cpus_ - 1;
    std::int64_t v = 0;
    std::size_t digits = 0;
    while (!done() && s_[pos_] >= '0' && s_[pos_] <= '9') {
      v = v * 10 + (s_[pos_] - '0');
      if (v > std::numeric_limits<int>::max()) return std::nullopt;
      ++pos_;
      ++digits;
    }
    if (digits == 0) return std::nullopt;
    return v;
  }

 private:
  std::string_view s_;
  std::size_t pos_ = 0;
  int nr_cpus_;
};

}  // namespace

CpuMask CpuMask::parse(std::string_view cpulist, int nr_cpus, const std::string& json_path) {
  auto fail = [&]() -> ConfigError {
    return ConfigError(json_path, "expected a cpu list like \"0-7,16\" with cpus < " + std::to_string(nr_cpus) +
                                      ", got \"" + std::string(cpulist) + "\"");
  };
  std::string_view s = cpulist;
  while (!s.empty() && is_space(s.front()))
    s.remove_prefix(1);
  while (!s.empty() && is_space(s.back()))
    s.remove_suffix(1);
  CpuMask m(nr_cpus);
  if (s.empty() || s == "all") {
    m.set_all();
    return m;
  }
  ListParser p(s, nr_cpus);
  while (true) {
    const auto a = p.number();
    if (!a) throw fail();
    std::int64_t b = *a, used = 1, group = 1;
    if (p.eat('-')) {
      const auto hi = p.number();
      if (!hi) throw fail();
      b = *hi;
      if (p.eat(':')) {
        const auto first = p.number();
        if (!first) throw fail();
        if (p.eat('/')) {  // kernel form A-B:used/group
          const auto g = p.number();
          if (!g) throw fail();
          used = *first;
          group = *g;
        } else {  // napisim shorthand A-B:stride
          used = 1;
          group = *first;
        }
      }
    }
    if (*a > b || b >= nr_cpus || used < 1 || group < 1 || used > group) throw fail();
    for (std::int64_t start = *a; start <= b; start += group)
      for (std::int64_t c = start; c < start + used && c <= b; ++c)
        m.set(static_cast<int>(c));
    if (p.done()) break;
    if (!p.eat(',')) throw fail();
  }
  return m;
}

// ---------------------------------------------------------------------------------------------
// TopologyParams / Topology

namespace {

constexpr std::int64_t kLocalDistance = 10;   // LOCAL_DISTANCE
constexpr std::int64_t kRemoteDistance = 20;  // REMOTE_DISTANCE
constexpr std::int64_t kMaxCpus = 8192;       // CONFIG_NR_CPUS upper bound on x86_64 (MAXSMP)

void check_range(const std::string& path, const char* key, std::int64_t v, std::int64_t lo, std::int64_t hi) {
  if (v < lo || v > hi)
    throw ConfigError(path + "/" + key, "expected integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                                            "], got " + std::to_string(v));
}

}  // namespace

void TopologyParams::validate(const std::string& path) const {
  check_range(path, "numa_nodes", numa_nodes, 1, 64);
  check_range(path, "llcs_per_node", llcs_per_node, 1, 256);
  check_range(path, "cores_per_llc", cores_per_llc, 1, kMaxCpus);
  if (threads_per_core != 1 && threads_per_core != 2)
    throw ConfigError(path + "/threads_per_core", "expected 1 or 2, got " + std::to_string(threads_per_core));
  const std::int64_t cpus = numa_nodes * llcs_per_node * cores_per_llc * threads_per_core;
  if (cpus > kMaxCpus)
    throw ConfigError(path, "numa_nodes * llcs_per_node * cores_per_llc * threads_per_core = " + std::to_string(cpus) +
                                " cpus, more than the supported " + std::to_string(kMaxCpus));
  if (!(smt_speed > 0.0 && smt_speed <= 1.0))
    throw ConfigError(path + "/smt_speed", "expected a number in (0, 1], got " + std::to_string(smt_speed));
  if (remote_llc_penalty_ns < 0)
    throw ConfigError(path + "/remote_llc_penalty_ns",
                      "expected a non-negative integer, got " + std::to_string(remote_llc_penalty_ns));
  if (remote_node_penalty_ns < 0)
    throw ConfigError(path + "/remote_node_penalty_ns",
                      "expected a non-negative integer, got " + std::to_string(remote_node_penalty_ns));
  if (numa_distance.empty()) return;
  const auto n = static_cast<std::size_t>(numa_nodes);
  if (numa_distance.size() != n * n)
    throw ConfigError(path + "/numa_distance", "expected " + std::to_string(n * n) + " entries (numa_nodes^2, " +
                                                   "row-major), got " + std::to_string(numa_distance.size()));
  // Same rules as the kernel's ACPI SLIT check (drivers/acpi/numa/srat.c slit_valid()):
  // the diagonal is LOCAL_DISTANCE, everything else is farther; entries are u8.
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      const std::int64_t d = numa_distance[i * n + j];
      const std::string at = path + "/numa_distance/" + std::to_string(i * n + j);
      if (i == j && d != kLocalDistance)
        throw ConfigError(at, "expected 10 (local distance) on the diagonal, got " + std::to_string(d));
      if (i != j && (d <= kLocalDistance || d > 254))
        throw ConfigError(at, "expected a remote distance in [11, 254], got " + std::to_string(d));
    }
  }
}

Topology::Topology(const TopologyParams& p, const std::string& json_path) : params_(p) {
  p.validate(json_path);
  nr_nodes_ = static_cast<int>(p.numa_nodes);
  nr_llcs_ = nr_nodes_ * static_cast<int>(p.llcs_per_node);
  nr_cores_ = nr_llcs_ * static_cast<int>(p.cores_per_llc);
  threads_per_core_ = static_cast<int>(p.threads_per_core);
  nr_cpus_ = nr_cores_ * threads_per_core_;
  llc_size_ = static_cast<int>(p.cores_per_llc) * threads_per_core_;

  node_of_.resize(static_cast<std::size_t>(nr_cpus_));
  llc_of_.resize(static_cast<std::size_t>(nr_cpus_));
  llc_cpus_.assign(static_cast<std::size_t>(nr_llcs_), {});
  node_cpus_.assign(static_cast<std::size_t>(nr_nodes_), {});
  llc_masks_.assign(static_cast<std::size_t>(nr_llcs_), CpuMask(nr_cpus_));
  node_masks_.assign(static_cast<std::size_t>(nr_nodes_), CpuMask(nr_cpus_));
  core_masks_.assign(static_cast<std::size_t>(nr_cores_), CpuMask(nr_cpus_));
  all_ = CpuMask::all(nr_cpus_);
  // Ascending cpu order, so the per-LLC / per-node lists come out sorted.
  for (int cpu = 0; cpu < nr_cpus_; ++cpu) {
    const int core = cpu % nr_cores_;
    const int llc = core / static_cast<int>(p.cores_per_llc);
    const int node = llc / static_cast<int>(p.llcs_per_node);
    const auto c = static_cast<std::size_t>(cpu);
    node_of_[c] = node;
    llc_of_[c] = llc;
    llc_cpus_[static_cast<std::size_t>(llc)].push_back(cpu);
    node_cpus_[static_cast<std::size_t>(node)].push_back(cpu);
    llc_masks_[static_cast<std::size_t>(llc)].set(cpu);
    node_masks_[static_cast<std::size_t>(node)].set(cpu);
    core_masks_[static_cast<std::size_t>(core)].set(cpu);
  }

  distance_.resize(nr_nodes_, nr_nodes_);
  for (int i = 0; i < nr_nodes_; ++i) {
    for (int j = 0; j < nr_nodes_; ++j) {
      const std::int64_t d = p.numa_distance.empty()
                                 ? (i == j ? kLocalDistance : kRemoteDistance)
                                 : p.numa_distance[static_cast<std::size_t>(i) * static_cast<std::size_t>(nr_nodes_) +
                                                   static_cast<std::size_t>(j)];
      distance_(i, j) = static_cast<double>(d);
    }
  }
}

const std::vector<int>& Topology::cpus_of_llc(int llc) const {
  NAPISIM_ASSERT(llc >= 0 && llc < nr_llcs_, "llc out of range");
  return llc_cpus_[static_cast<std::size_t>(llc)];
}

const std::vector<int>& Topology::cpus_of_node(int node) const {
  NAPISIM_ASSERT(node >= 0 && node < nr_nodes_, "node out of range");
  return node_cpus_[static_cast<std::size_t>(node)];
}

int Topology::node_distance(int node_a, int node_b) const {
  NAPISIM_ASSERT(node_a >= 0 && node_a < nr_nodes_ && node_b >= 0 && node_b < nr_nodes_, "node out of range");
  return static_cast<int>(distance_(node_a, node_b));
}

Nanos Topology::handoff_penalty(int from, int to) const {
  if (share_cache(from, to)) return 0;  // also covers the same core
  const int na = node_of(from), nb = node_of(to);
  if (na == nb) return params_.remote_llc_penalty_ns;
  return node_penalty(na, nb);
}

Nanos Topology::node_penalty(int node_a, int node_b) const {
  if (node_a == node_b) return 0;
  const double scaled = static_cast<double>(params_.remote_node_penalty_ns) * distance_(node_a, node_b) / 10.0;
  return static_cast<Nanos>(std::llround(scaled));
}

}  // namespace napisim
