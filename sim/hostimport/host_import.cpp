// napisim import-host (see host_import.hpp).
#include "sim/hostimport/host_import.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "sim/core/error.hpp"
#include "sim/hostimport/parsers.hpp"
#include "sim/hw/nic.hpp"
#include "sim/kernel/params.hpp"
#include "sim/params/json_util.hpp"

#include <fcntl.h>
#include <hwloc.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace napisim::hostimport {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kMaxInputBytes = std::size_t{64} << 20;  // /proc/interrupts of 8192 CPUs fits

std::optional<std::string> read_text(const fs::path& p) {
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) return std::nullopt;
  std::ifstream f(p, std::ios::binary);
  if (!f) return std::nullopt;
  std::string s;
  char buf[65536];
  while (f.read(buf, sizeof buf) || f.gcount() > 0) {
    s.append(buf, static_cast<std::size_t>(f.gcount()));
    if (s.size() > kMaxInputBytes) throw ConfigError(p.string(), "larger than 64 MiB; expected a sysfs/procfs text");
  }
  return s;
}

// Runs argv[0] (found on PATH) and returns its stdout, or nullopt (not installed, failed).
std::optional<std::string> run_capture(std::vector<std::string> argv) {
  int fds[2];
  if (pipe(fds) != 0) return std::nullopt;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  std::vector<char*> args;
  for (auto& a : argv)
    args.push_back(a.data());
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    return std::nullopt;
  }
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;)
    if (out.size() < kMaxInputBytes) out.append(buf, static_cast<std::size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  return out;
}

// The inputs by logical name (host_import.hpp), from a directory or from this machine.
class Source {
 public:
  explicit Source(std::string dir) : dir_(std::move(dir)) {
    if (!dir_.empty() && !fs::is_directory(dir_)) throw ConfigError("--from", "not a directory: '" + dir_ + "'");
  }
  bool live() const { return dir_.empty(); }

  /// Where a logical name is read from, for messages.
  std::string where(const std::string& name) const {
    if (!live()) return (fs::path(dir_) / name).string();
    const std::string dev = device_of(name), attr = attr_of(name);
    if (name == "topology.xml") return "hwloc (this machine)";
    if (name == "boot/config") return "/boot/config-<osrelease>";
    if (!dev.empty() && attr.rfind("ethtool-", 0) == 0) return "ethtool -" + attr.substr(8) + " " + dev;
    if (!dev.empty() && attr == "device") return "/sys/class/net/" + dev + "/device";
    if (!dev.empty() && attr == "numa_node") return "/sys/class/net/" + dev + "/device/numa_node";
    if (!dev.empty() && attr == "rps_cpus") return "/sys/class/net/" + dev + "/queues/rx-0/rps_cpus";
    if (!dev.empty()) return "/sys/class/net/" + dev + "/" + attr;
    return "/" + name;
  }

  std::optional<std::string> read(const std::string& name) const {
    if (!live()) return read_text(fs::path(dir_) / name);
    const std::string dev = device_of(name), attr = attr_of(name);
    if (name == "napi-get.json") return std::nullopt;
    if (name == "boot/config") {
      const auto rel = read_text("/proc/sys/kernel/osrelease");
      if (!rel) return std::nullopt;
      std::string r = *rel;
      while (!r.empty() && (r.back() == '\n' || r.back() == ' '))
        r.pop_back();
      return read_text("/boot/config-" + r);
    }
    if (!dev.empty() && attr.rfind("ethtool-", 0) == 0) return run_capture({"ethtool", "-" + attr.substr(8), dev});
    if (!dev.empty() && attr == "device") {
      std::error_code ec;
      const fs::path target = fs::read_symlink("/sys/class/net/" + dev + "/device", ec);
      if (ec) return std::nullopt;
      return target.filename().string();
    }
    return read_text(where(name));
  }

  std::vector<std::string> devices() const {
    std::vector<std::string> out;
    std::error_code ec;
    const fs::path dir = live() ? fs::path("/sys/class/net") : fs::path(dir_) / "net";
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const std::string n = e.path().filename().string();
      if (live() ? fs::exists(e.path() / "device", ec) : fs::is_directory(e.path(), ec)) out.push_back(n);
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  /// The topology as lstopo XML: the file, or this machine's through hwloc.
  std::string topology_xml() const {
    if (!live()) {
      auto x = read("topology.xml");
      if (!x) throw ConfigError(where("topology.xml"), "not found; expected the output of `lstopo --of xml`");
      return *x;
    }
    hwloc_topology_t t;
    if (hwloc_topology_init(&t) != 0) throw std::runtime_error("hwloc_topology_init failed");
    hwloc_topology_set_flags(t, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
    char* buf = nullptr;
    int len = 0;
    const bool ok = hwloc_topology_load(t) == 0 && hwloc_topology_export_xmlbuffer(t, &buf, &len, 0) == 0;
    std::string xml = ok && buf ? std::string(buf, static_cast<std::size_t>(std::max(0, len - 1))) : "";
    if (buf) hwloc_free_xmlbuffer(t, buf);
    hwloc_topology_destroy(t);
    if (!ok) throw std::runtime_error("hwloc could not read this machine's topology");
    return xml;
  }

 private:
  static std::string device_of(const std::string& name) {
    if (name.rfind("net/", 0) != 0) return "";
    return name.substr(4, name.find('/', 4) - 4);
  }
  static std::string attr_of(const std::string& name) {
    const std::size_t s = name.rfind('/');
    return s == std::string::npos ? name : name.substr(s + 1);
  }
  std::string dir_;
};

struct HwlocTopology {
  hwloc_topology_t t = nullptr;
  ~HwlocTopology() {
    if (t) hwloc_topology_destroy(t);
  }
};

template <class T>
T mode_of(const std::vector<T>& xs) {
  std::map<T, int> n;
  for (const T& x : xs)
    ++n[x];
  T best = xs.front();
  int count = 0;
  for (const auto& [v, c] : n)
    if (c > count) best = v, count = c;
  return best;
}

std::string join(const std::vector<std::string>& xs, const std::string& sep) {
  std::string out;
  for (const auto& x : xs)
    out += (out.empty() ? "" : sep) + x;
  return out;
}

std::string cpulist_of(std::vector<int> cpus) {
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1)
      ++j;
    if (!out.empty()) out += ',';  // piecewise: GCC 12's -Wrestrict false positive on "" + string
    out += std::to_string(cpus[i]);
    if (j > i) out += "-" + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

// Kernel version "6.18.44-..." -> 6 * 1000 + 18.
int kernel_version(const std::string& osrelease) {
  int major = 0, minor = 0;
  if (std::sscanf(osrelease.c_str(), "%d.%d", &major, &minor) != 2) return -1;
  return major * 1000 + minor;
}

}  // namespace

Json topology_from_xml(const std::string& xml, const std::string& file, std::vector<int>* os_to_sim,
                       std::vector<std::string>* notes) {
  HwlocTopology h;
  if (hwloc_topology_init(&h.t) != 0) throw std::runtime_error("hwloc_topology_init failed");
  if (xml.find("<topology") == std::string::npos)
    throw ConfigError(file, "expected an hwloc XML topology (`lstopo --of xml`): no <topology> element");
  if (hwloc_topology_set_xmlbuffer(h.t, xml.c_str(), static_cast<int>(xml.size()) + 1) != 0 ||
      hwloc_topology_load(h.t) != 0)
    throw ConfigError(file, "hwloc could not load it; expected the output of `lstopo --of xml`");
  hwloc_topology_t t = h.t;
  const int npu = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
  if (npu <= 0) throw ConfigError(file, "expected at least one PU object, found none");

  // NUMA nodes with CPUs (memory-only nodes, e.g. CXL or PMEM, run nothing).
  std::vector<hwloc_obj_t> nodes;
  for (int i = 0; i < hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE); ++i) {
    hwloc_obj_t n = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(i));
    if (n->cpuset && !hwloc_bitmap_iszero(n->cpuset)) nodes.push_back(n);
  }
  if (nodes.empty()) nodes.push_back(hwloc_get_root_obj(t));  // no NUMA information: one node
  // The last-level cache: the outermost cache level there is.
  hwloc_obj_type_t llc_type = HWLOC_OBJ_PU;
  for (hwloc_obj_type_t c : {HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L1CACHE})
    if (hwloc_get_nbobjs_by_type(t, c) > 0) {
      llc_type = c;
      break;
    }
  if (llc_type == HWLOC_OBJ_PU) notes->push_back(file + ": no cache objects; one LLC per NUMA node");
  const bool have_cores = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE) > 0;
  const hwloc_obj_type_t core_type = have_cores ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
  if (!have_cores) notes->push_back(file + ": no Core objects; each PU is a core");

  // Cores grouped by (node, LLC within the node), in hwloc's logical order.
  struct Group {
    std::size_t node;
    hwloc_obj_t llc;
    std::vector<hwloc_obj_t> cores;
  };
  std::vector<Group> groups;
  std::vector<int> pus_per_core;
  const int ncores = hwloc_get_nbobjs_by_type(t, core_type);
  for (int i = 0; i < ncores; ++i) {
    hwloc_obj_t core = hwloc_get_obj_by_type(t, core_type, static_cast<unsigned>(i));
    std::size_t node = 0;
    while (node < nodes.size() && !hwloc_bitmap_intersects(nodes[node]->cpuset, core->cpuset))
      ++node;
    if (node == nodes.size()) node = 0;
    hwloc_obj_t llc = llc_type == HWLOC_OBJ_PU ? nullptr : hwloc_get_ancestor_obj_by_type(t, llc_type, core);
    auto g = std::find_if(groups.begin(), groups.end(), [&](const Group& x) { return x.node == node && x.llc == llc; });
    if (g == groups.end()) g = groups.insert(groups.end(), Group{node, llc, {}});
    g->cores.push_back(core);
    pus_per_core.push_back(
        core_type == HWLOC_OBJ_PU ? 1 : hwloc_get_nbobjs_inside_cpuset_by_type(t, core->cpuset, HWLOC_OBJ_PU));
  }
  std::vector<int> llcs_per_node(nodes.size(), 0), cores_per_llc;
  for (const Group& g : groups) {
    ++llcs_per_node[g.node];
    cores_per_llc.push_back(static_cast<int>(g.cores.size()));
  }
  std::vector<int> used_nodes_llcs;
  for (int n : llcs_per_node)
    if (n > 0) used_nodes_llcs.push_back(n);
  const int N = static_cast<int>(used_nodes_llcs.size());
  const int L = mode_of(used_nodes_llcs), K = mode_of(cores_per_llc);
  int T = *std::max_element(pus_per_core.begin(), pus_per_core.end());
  if (std::set<int>(used_nodes_llcs.begin(), used_nodes_llcs.end()).size() > 1 ||
      std::set<int>(cores_per_llc.begin(), cores_per_llc.end()).size() > 1)
    notes->push_back(file + ": the nodes' LLCs or the LLCs' cores differ in number; napisim's topology is uniform: " +
                     std::to_string(L) + " LLCs per node, " + std::to_string(K) +
                     " cores per LLC (CPUs beyond that are left out)");
  if (T > 2) {
    notes->push_back(file + ": " + std::to_string(T) +
                     " threads per core; napisim models SMT of 2 (the rest left out)");
    T = 2;
  }
  if (std::set<int>(pus_per_core.begin(), pus_per_core.end()).size() > 1)
    notes->push_back(file + ": some cores have fewer SMT threads than others; modelled with " + std::to_string(T));

  // napisim numbering (topology.hpp): core c = (node * L + llc) * K + core, thread t -> t * C + c.
  const int C = N * L * K;
  int max_os = 0;
  for (int i = 0; i < npu; ++i)
    max_os =
        std::max(max_os, static_cast<int>(hwloc_get_obj_by_type(t, HWLOC_OBJ_PU, static_cast<unsigned>(i))->os_index));
  os_to_sim->assign(static_cast<std::size_t>(max_os) + 1, -1);
  std::vector<int> llc_index(nodes.size(), 0);
  int node_rank = -1;
  std::size_t last_node = nodes.size();
  bool identity = true;
  for (const Group& g : groups) {  // groups are in logical order: node by node
    if (g.node != last_node) {
      ++node_rank;
      last_node = g.node;
    }
    const int l = llc_index[g.node]++;
    if (l >= L) continue;
    for (int k = 0; k < static_cast<int>(g.cores.size()) && k < K; ++k) {
      const int core = (node_rank * L + l) * K + k;
      for (int th = 0; th < T; ++th) {
        hwloc_obj_t pu = core_type == HWLOC_OBJ_PU
                             ? (th == 0 ? g.cores[static_cast<std::size_t>(k)] : nullptr)
                             : hwloc_get_obj_inside_cpuset_by_type(t, g.cores[static_cast<std::size_t>(k)]->cpuset,
                                                                   HWLOC_OBJ_PU, static_cast<unsigned>(th));
        if (!pu) continue;
        const int sim = th * C + core;
        (*os_to_sim)[pu->os_index] = sim;
        identity = identity && static_cast<int>(pu->os_index) == sim;
      }
    }
  }
  if (!identity)
    notes->push_back(file +
                     ": CPUs renumbered to napisim's order (node, LLC, core; SMT siblings after all first "
                     "threads); cpulists in this scenario use napisim's numbers");

  Json topo = Json::object();
  topo["numa_nodes"] = N;
  topo["llcs_per_node"] = L;
  topo["cores_per_llc"] = K;
  topo["threads_per_core"] = T;
  if (N > 1) {
    unsigned nr = 1;
    hwloc_distances_s* d = nullptr;
    const unsigned long kind = HWLOC_DISTANCES_KIND_FROM_OS | HWLOC_DISTANCES_KIND_MEANS_LATENCY;
    std::vector<std::int64_t> slit;
    if (hwloc_distances_get_by_type(t, HWLOC_OBJ_NUMANODE, &nr, &d, kind, 0) == 0 && nr > 0) {
      std::vector<int> idx;  // the nodes with CPUs, as rows of the matrix
      for (hwloc_obj_t n : nodes)
        for (unsigned i = 0; i < d->nbobjs; ++i)
          if (d->objs[i] == n) idx.push_back(static_cast<int>(i));
      if (static_cast<int>(idx.size()) == N)
        for (int a : idx)
          for (int b : idx)
            slit.push_back(
                static_cast<std::int64_t>(d->values[static_cast<unsigned>(a) * d->nbobjs + static_cast<unsigned>(b)]));
      hwloc_distances_release(t, d);
    }
    bool ok = !slit.empty();
    for (std::size_t i = 0; i < slit.size(); ++i)
      ok = ok && slit[i] >= 10 && slit[i] <= 254 && (i % (static_cast<std::size_t>(N) + 1) != 0 || slit[i] == 10);
    if (ok)
      topo["numa_distance"] = slit;
    else
      notes->push_back(file + ": no usable NUMA distance matrix (SLIT); napisim's default 10 local, 20 remote");
  }
  return topo;
}

namespace {

struct NicImport {
  Json nic = Json::object();
  std::vector<Json> models;   // receive-path models of this NIC (their "nics" set by the caller)
  std::vector<int> irq_cpus;  // napisim CPU of each queue IRQ
};

// Reads an optional integer input; a missing one is a note, a garbled one a ConfigError.
std::optional<std::int64_t> read_int(const Source& src, const std::string& name, std::vector<std::string>* notes,
                                     const std::string& fallback) {
  const auto text = src.read(name);
  if (!text) {
    if (!fallback.empty()) notes->push_back(src.where(name) + ": not found; " + fallback);
    return std::nullopt;
  }
  return parse_int_file(*text, src.where(name));
}

NicImport import_nic(const Source& src, const std::string& dev, const std::vector<int>& os_to_sim,
                     const std::vector<IrqLine>* irqs, const Json* napis, std::vector<std::string>* notes) {
  NicImport out;
  const NicParams defaults;
  Json& nic = out.nic;
  nic["name"] = dev;
  const std::string p = "net/" + dev + "/";
  auto sim_cpu = [&](int os) {
    return os >= 0 && os < static_cast<int>(os_to_sim.size()) ? os_to_sim[static_cast<std::size_t>(os)] : -1;
  };

  const auto node = read_int(src, p + "numa_node", notes, "NIC on NUMA node 0");
  if (node && *node < 0) notes->push_back(src.where(p + "numa_node") + ": -1 (no NUMA affinity); NIC on node 0");
  nic["numa_node"] = node && *node > 0 ? *node : 0;

  // Queues: ethtool -l's combined channels, else its RX channels, else the queue IRQs counted.
  std::optional<std::int64_t> queues;
  if (const auto t = src.read(p + "ethtool-l")) {
    const EthtoolChannels c = parse_ethtool_channels(*t, src.where(p + "ethtool-l"));
    queues = c.combined.value_or(0) > 0 ? c.combined : c.rx.value_or(0) > 0 ? c.rx : std::nullopt;
  } else {
    notes->push_back(src.where(p + "ethtool-l") + ": not read; queues counted from the queue IRQs");
  }
  if (const auto t = src.read(p + "ethtool-g")) {
    const EthtoolRings r = parse_ethtool_rings(*t, src.where(p + "ethtool-g"));
    if (r.rx)
      nic["ring_size"] = *r.rx;
    else
      notes->push_back(src.where(p + "ethtool-g") + ": RX ring n/a; ring_size " + std::to_string(defaults.ring_size));
  } else {
    notes->push_back(src.where(p + "ethtool-g") + ": not read; ring_size " + std::to_string(defaults.ring_size));
  }
  const auto speed =
      read_int(src, p + "speed", notes, "speed_gbps " + std::to_string(static_cast<int>(defaults.speed_gbps)));
  if (speed && *speed > 0)
    nic["speed_gbps"] = static_cast<double>(*speed) / 1000.0;
  else if (speed)
    notes->push_back(src.where(p + "speed") + ": " + std::to_string(*speed) + " (unknown); speed_gbps " +
                     std::to_string(static_cast<int>(defaults.speed_gbps)));
  if (const auto t = src.read(p + "ethtool-c")) {
    const std::string f = src.where(p + "ethtool-c");
    const EthtoolCoalesce c = parse_ethtool_coalesce(*t, f);
    const std::int64_t ring = nic.value("ring_size", defaults.ring_size);
    if (c.rx_usecs) nic["rx_usecs"] = *c.rx_usecs;
    // rx-frames 0 or n/a: no frame trigger, the timer alone (a full ring is the most that can wait).
    if (c.rx_frames && *c.rx_frames > 0)
      nic["rx_frames"] = *c.rx_frames;
    else if (c.rx_usecs)
      nic["rx_frames"] = *c.rx_usecs == 0 ? std::int64_t{1} : ring;
    if (c.tx_usecs) nic["tx_usecs"] = *c.tx_usecs;
    if (c.tx_frames && *c.tx_frames > 0) nic["tx_frames"] = *c.tx_frames;
    if (c.adaptive_rx) nic["adaptive_rx"] = *c.adaptive_rx;
    if (!c.rx_usecs) notes->push_back(f + ": rx-usecs n/a; rx_usecs " + std::to_string(defaults.rx_usecs));
  } else {
    notes->push_back(src.where(p + "ethtool-c") + ": not read; napisim's coalescing defaults (rx-usecs " +
                     std::to_string(defaults.rx_usecs) + ", rx-frames " + std::to_string(defaults.rx_frames) + ")");
  }

  // The queue IRQs: the NAPIs' irq from napi-get when it has this device, else /proc/interrupts names.
  std::vector<std::int64_t> queue_irqs;
  const auto ifindex = read_int(src, p + "ifindex", notes, "");
  std::vector<const Json*> dev_napis;
  if (napis && ifindex)
    for (const Json& n : *napis)
      if (n.value("ifindex", std::int64_t{-1}) == *ifindex) dev_napis.push_back(&n);
  std::sort(dev_napis.begin(), dev_napis.end(),
            [](const Json* a, const Json* b) { return a->value("id", 0) < b->value("id", 0); });
  for (const Json* n : dev_napis)
    if (n->contains("irq")) queue_irqs.push_back(n->value("irq", std::int64_t{0}));
  if (queue_irqs.empty() && irqs) {
    const std::string bus = src.read(p + "device").value_or("");
    std::vector<std::pair<int, std::int64_t>> found;
    for (const IrqLine& l : *irqs)
      if (const auto q = rx_queue_of_irq(l.name, dev, bus.substr(0, bus.find_last_not_of(" \n") + 1)))
        found.emplace_back(*q, l.irq);
    std::sort(found.begin(), found.end());
    for (const auto& [q, irq] : found)
      queue_irqs.push_back(irq);
  }
  if (!queues) queues = queue_irqs.empty() ? std::nullopt : std::optional<std::int64_t>(queue_irqs.size());
  if (queues)
    nic["queues"] = *queues;
  else
    notes->push_back(dev + ": no queue count (ethtool -l) and no queue IRQs; queues " +
                     std::to_string(defaults.queues));

  for (std::int64_t irq : queue_irqs) {
    const std::string base = "proc/irq/" + std::to_string(irq) + "/";
    auto t = src.read(base + "effective_affinity_list");
    std::string name = base + "effective_affinity_list";
    if (!t || t->find_first_not_of(" \n") == std::string::npos) {
      name = base + "smp_affinity_list";
      t = src.read(name);
    }
    if (!t) {
      notes->push_back(src.where(name) + ": not found; IRQ " + std::to_string(irq) + " left out of irq_affinity");
      continue;
    }
    // The IRQ fires on one CPU of its mask; x86's vector allocation picks the first online one.
    const int cpu = sim_cpu(parse_cpulist(*t, src.where(name)).front());
    if (cpu < 0)
      notes->push_back(src.where(name) + ": a CPU the topology does not model; IRQ " + std::to_string(irq) +
                       " left out of irq_affinity");
    else
      out.irq_cpus.push_back(cpu);
  }
  if (!out.irq_cpus.empty()) {
    // napisim gives queue i the i-th CPU of irq_affinity (wrapping): exact when each CPU takes as
    // many queues as wrapping gives it (RSS spreads flows evenly, so the queue order is free).
    std::vector<int> set = out.irq_cpus;
    std::sort(set.begin(), set.end());
    set.erase(std::unique(set.begin(), set.end()), set.end());
    std::vector<int> wrapped, have = out.irq_cpus;
    const std::int64_t q = nic.value("queues", std::int64_t{static_cast<std::int64_t>(have.size())});
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(have.size()); ++i)
      wrapped.push_back(set[static_cast<std::size_t>(i) % set.size()]);
    std::sort(wrapped.begin(), wrapped.end());
    std::sort(have.begin(), have.end());
    if (wrapped != have)
      notes->push_back(dev + ": queue IRQs are spread unevenly over CPUs " + cpulist_of(set) +
                       "; napisim spreads them round robin over those CPUs");
    if (q != static_cast<std::int64_t>(out.irq_cpus.size()))
      notes->push_back(dev + ": " + std::to_string(out.irq_cpus.size()) + " queue IRQs found for " + std::to_string(q) +
                       " queues; irq_affinity wraps over their CPUs");
    nic["irq_affinity"] = cpulist_of(set);
  } else {
    notes->push_back(dev + ": no queue IRQ affinity found; IRQs on the CPUs of the NIC's node (napisim's default)");
  }

  // NAPI: the device's sysfs defaults, then the per-NAPI values of napi-get where they differ.
  const auto defer = read_int(src, p + "napi_defer_hard_irqs", notes, "napi_defer_hard_irqs 0");
  const auto gft = read_int(src, p + "gro_flush_timeout", notes, "gro_flush_timeout 0");
  if (defer) nic["napi_defer_hard_irqs"] = *defer;
  if (gft) nic["gro_flush_timeout_ns"] = *gft;
  std::string threaded = "disabled";
  if (const auto t = src.read(p + "threaded")) {
    const std::string v = t->substr(0, t->find_last_not_of(" \n") + 1);
    if (v == "1" || v == "enabled")
      threaded = "enabled";
    else if (v == "2" || v == "busy-poll")
      threaded = "busy-poll";
    else if (v != "0" && v != "disabled")
      throw ConfigError(src.where(p + "threaded"), "expected 0, 1 or 2 (busy-poll), got \"" + v + "\"");
  } else {
    notes->push_back(src.where(p + "threaded") + ": not found; threaded NAPI off");
  }
  std::vector<std::int64_t> n_defer, n_gft, n_suspend;
  for (const Json* n : dev_napis) {
    n_defer.push_back(n->value("defer-hard-irqs", defer.value_or(0)));
    n_gft.push_back(n->value("gro-flush-timeout", gft.value_or(0)));
    n_suspend.push_back(n->value("irq-suspend-timeout", std::int64_t{0}));
    const std::string th =
        n->contains("threaded") && (*n)["threaded"].is_string() ? (*n)["threaded"].get<std::string>() : "";
    if (th == "enabled" || th == "busy-poll") threaded = th;
  }
  if (threaded == "enabled") out.models.push_back(Json{{"name", "napi_threaded"}});
  if (threaded == "busy-poll") out.models.push_back(Json{{"name", "threaded_busy_poll"}});
  if (!dev_napis.empty()) {
    if (std::set<std::int64_t>(n_defer.begin(), n_defer.end()).size() > 1 ||
        std::set<std::int64_t>(n_gft.begin(), n_gft.end()).size() > 1)
      notes->push_back(dev +
                       ": NAPIs have different defer-hard-irqs/gro-flush-timeout (napi-get); the most common used");
    const std::int64_t d = mode_of(n_defer), g = mode_of(n_gft), s = mode_of(n_suspend);
    if (d != defer.value_or(0) || g != gft.value_or(0))
      out.models.push_back(
          Json{{"name", "napi_defer_irq"}, {"params", {{"defer_hard_irqs", d}, {"gro_flush_timeout_ns", g}}}});
    if (s > 0) {
      out.models.push_back(Json{{"name", "irq_suspend"}, {"params", {{"irq_suspend_timeout_ns", s}}}});
      notes->push_back(dev + ": irq-suspend-timeout " + std::to_string(s) +
                       " ns: suspension needs the application's epoll prefer_busy_poll (EPIOCSPARAMS), assumed set");
    }
  } else if (!src.live() || !napis) {
    // nothing more: the sysfs values stand for every NAPI
  }
  if (const auto t = src.read(p + "rps_cpus")) {
    std::vector<int> cpus;
    for (int c : parse_cpumask_hex(*t, src.where(p + "rps_cpus")))
      if (sim_cpu(c) >= 0) cpus.push_back(sim_cpu(c));
    if (!cpus.empty()) {
      Json m{{"name", "rps_rfs"}, {"params", {{"rps_cpus", cpulist_of(cpus)}}}};
      const auto entries = read_int(src, "proc/sys/net/core/rps_sock_flow_entries", notes, "RFS off");
      m["params"]["rps_sock_flow_entries"] = entries.value_or(0);
      out.models.push_back(m);
    }
  }
  return out;
}

}  // namespace

ImportResult import_host(const ImportOptions& opt) {
  const Source src(opt.from_dir);
  ImportResult res;
  std::vector<std::string>& notes = res.notes;

  std::vector<int> os_to_sim;
  const std::string xml = src.topology_xml();
  Json topo = topology_from_xml(xml, src.where("topology.xml"), &os_to_sim, &notes);

  // Interrupts and NAPI dumps shared by the devices.
  std::optional<std::vector<IrqLine>> irqs;
  if (const auto t = src.read("proc/interrupts"))
    irqs = parse_proc_interrupts(*t, src.where("proc/interrupts"));
  else
    notes.push_back(src.where("proc/interrupts") + ": not found; queue IRQs only from napi-get");
  std::optional<Json> napis;
  {
    const std::string file = !opt.napi_get.empty() ? opt.napi_get : src.where("napi-get.json");
    const auto t = !opt.napi_get.empty() ? read_text(opt.napi_get) : src.read("napi-get.json");
    if (!opt.napi_get.empty() && !t) throw ConfigError("--napi-get", "cannot read '" + opt.napi_get + "'");
    if (t) {
      Json j = parse_json_text(*t, file);
      if (!j.is_array())
        throw ConfigError(file, "expected the JSON array of `ynl --family netdev --dump napi-get --output-json`");
      for (std::size_t i = 0; i < j.size(); ++i)
        if (!j[i].is_object() || !j[i].contains("id") || !j[i].contains("ifindex"))
          throw ConfigError(file + " [" + std::to_string(i) + "]",
                            "expected a NAPI object with \"id\" and \"ifindex\"");
      napis = std::move(j);
    } else {
      notes.push_back(std::string(src.live() ? "netdev netlink napi-get" : file) +
                      ": not read (give --napi-get FILE); per-NAPI settings taken from the device's sysfs values");
    }
  }

  std::vector<std::string> devs = opt.devices;
  const std::vector<std::string> all = src.devices();
  for (const std::string& d : devs)
    if (std::find(all.begin(), all.end(), d) == all.end())
      throw ConfigError("--dev",
                        "no device '" + d + "'" +
                            (src.live() ? " with a bus device in /sys/class/net" : " under " + src.where("net")) +
                            "; found: " + (all.empty() ? std::string("none") : join(all, ", ")));
  if (devs.empty()) devs = all;
  if (devs.empty())
    throw ConfigError(src.live() ? "/sys/class/net" : src.where("net"),
                      "expected at least one network device (a directory per device)");
  if (devs.size() > 64) throw ConfigError("--dev", "more than 64 devices; pick them with --dev");

  Json nics = Json::array(), models = Json::array({Json{{"name", "napi_irq"}}});
  std::vector<int> irq_cpus;
  for (std::size_t i = 0; i < devs.size(); ++i) {
    NicImport n = import_nic(src, devs[i], os_to_sim, irqs ? &*irqs : nullptr, napis ? &*napis : nullptr, &notes);
    nics.push_back(n.nic);
    for (Json& m : n.models) {
      m["nics"] = Json::array({static_cast<std::int64_t>(i)});
      models.push_back(m);
    }
    irq_cpus.insert(irq_cpus.end(), n.irq_cpus.begin(), n.irq_cpus.end());
  }

  // Kernel: version, HZ and preemption, then the networking sysctls.
  Json kernel = Json::object();
  if (const auto rel = src.read("proc/sys/kernel/osrelease")) {
    const int v = kernel_version(*rel);
    if (v < 0)
      throw ConfigError(src.where("proc/sys/kernel/osrelease"), "expected a version like \"6.8.0-45-generic\"");
    kernel["ksoftirqd_mode"] = v < 4009 ? "pre-4.9" : v < 6005 ? "4.9-6.4" : "v6.5";
    kernel["sched"]["algo"] = v < 6006 ? "cfs" : "eevdf";
  } else {
    notes.push_back(src.where("proc/sys/kernel/osrelease") + ": not found; a v6.6+ kernel (EEVDF) assumed");
  }
  if (const auto cfg = src.read("boot/config")) {
    const auto k = parse_kconfig(*cfg);
    if (const auto hz = k.find("CONFIG_HZ"); hz != k.end())
      kernel["hz"] = parse_int_file(hz->second, src.where("boot/config") + " CONFIG_HZ");
    if (k.count("CONFIG_PREEMPT") && k.at("CONFIG_PREEMPT") == "y")
      kernel["sched"]["preempt"] = "full";
    else if (k.count("CONFIG_PREEMPT_NONE") && k.at("CONFIG_PREEMPT_NONE") == "y")
      kernel["sched"]["preempt"] = "none";
    else if (k.count("CONFIG_PREEMPT_VOLUNTARY") && k.at("CONFIG_PREEMPT_VOLUNTARY") == "y")
      kernel["sched"]["preempt"] = "voluntary";
  } else {
    notes.push_back(src.where("boot/config") + ": not found; CONFIG_HZ 1000 and voluntary preemption assumed");
  }
  Json net = Json::object();
  for (const char* s : {"netdev_budget", "netdev_budget_usecs", "dev_weight", "busy_poll", "busy_read",
                        "netdev_max_backlog", "gro_normal_batch"}) {
    const std::string name = std::string("proc/sys/net/core/") + s;
    if (const auto v = read_int(src, name, &notes, "the kernel's default")) net[s] = *v;
  }
  if (!net.empty()) kernel["net"] = net;

  // The workload.
  Json wl;
  const std::int64_t threads =
      opt.threads > 0 ? opt.threads
                      : std::max<std::int64_t>(
                            1, static_cast<std::int64_t>(std::set<int>(irq_cpus.begin(), irq_cpus.end()).size()));
  if (!opt.trace.empty()) {
    if (!fs::is_regular_file(opt.trace)) throw ConfigError("--trace", "cannot read '" + opt.trace + "'");
    wl = {{"type", "trace"},
          {"params",
           {{"file", opt.trace_ref.empty() ? opt.trace : opt.trace_ref}, {"repeat", true}, {"num_threads", threads}}}};
  } else {
    const double rate = opt.rate_rps > 0 ? opt.rate_rps : 10000.0;
    if (opt.rate_rps <= 0)
      notes.push_back("workload: no --trace and no --rate; an open-loop app at 10000 requests/s (set --rate)");
    wl = {{"type", "app"},
          {"params",
           {{"load", "open"},
            {"rate_rps", rate},
            {"num_flows", opt.flows},
            {"num_threads", threads},
            {"request_size", parse_json_text(opt.request_size, "--request-size")},
            {"response_size", parse_json_text(opt.response_size, "--response-size")},
            {"service_ns", parse_json_text(opt.service_ns, "--service-ns")}}}};
  }
  // The load arrives on the fastest NIC (the first of equals); --dev picks another.
  std::size_t primary = 0;
  for (std::size_t i = 1; i < nics.size(); ++i)
    if (nics[i].value("speed_gbps", 100.0) > nics[primary].value("speed_gbps", 100.0)) primary = i;
  const double link = nics[primary].value("speed_gbps", 100.0);
  char gbps[32];
  std::snprintf(gbps, sizeof gbps, "%g", link);
  notes.push_back("client: the idealised load generator (the client host is not imported) on a " + std::string(gbps) +
                  " Gb/s link to " + nics[primary]["name"].get<std::string>() + ", 5 us one way");

  Json s;
  s["name"] = opt.name;
  s["description"] = "";
  s["seed"] = 1;
  s["warmup_s"] = 0.05;
  s["duration_s"] = 0.2;
  s["topology"] = topo;
  s["nics"] = nics;
  if (!kernel.empty()) s["kernel"] = kernel;
  s["platform"] = {{"clients", Json::array({Json{{"name", "client0"},
                                                 {"stack", "idealised"},
                                                 {"link_gbps", link},
                                                 {"link_latency_ns", 5000},
                                                 {"nic", static_cast<std::int64_t>(primary)}}})}};
  s["models"] = models;
  s["workload"] = wl;
  s["description"] = "Imported by napisim import-host from " +
                     (src.live() ? std::string("this machine") : "the files in " + opt.from_dir) +
                     ". Not read or approximated: " + (notes.empty() ? std::string("nothing") : join(notes, "; ")) +
                     ".";
  res.scenario = std::move(s);
  return res;
}

}  // namespace napisim::hostimport
