// rps_rfs: Receive Packet Steering and Receive Flow Steering (Tom Herbert, v2.6.35;
// Documentation/networking/scaling.rst; net/core/dev.c get_rps_cpu, enqueue_to_backlog,
// process_backlog as of v6.13), plus Kirill Tkhai's 2018 RFC as the opt-in `idle_sibling` knob.
//
// Sysctls mirrored: /sys/class/net/DEV/queues/rx-N/rps_cpus (the same mask for every queue here),
// net.core.rps_sock_flow_entries (0 = RFS off; scaling.rst suggests 32768) and
// rx-N/rps_flow_cnt (default: entries / queues, rounded up to a power of two).
// net.core.netdev_max_backlog is kernel.net.netdev_max_backlog. The mechanisms live in
// sim/kernel/rps.cpp; this model configures them. `lo` also configures the loopback device's
// single RX queue (echo ... > /sys/class/net/lo/queues/rx-0/rps_cpus, as Kirill Tkhai's test did).
#include "sim/kernel/kernel.hpp"
#include "sim/model/model.hpp"

namespace napisim {

namespace {

struct RpsRfsParams {
  std::string rps_cpus = "";  // "" = all CPUs
  std::int64_t rps_sock_flow_entries = 32768;
  std::int64_t rps_flow_cnt = 0;  // 0 = rps_sock_flow_entries / queues
  bool idle_sibling = false;
  bool lo = false;

  template <class V>
  static void fields(V& v) {
    v("rps_cpus", &RpsRfsParams::rps_cpus, "cpulist", "rx-N/rps_cpus for every queue (\"\" = all CPUs)");
    v("rps_sock_flow_entries", &RpsRfsParams::rps_sock_flow_entries, "entries",
      "net.core.rps_sock_flow_entries (0 = RFS off)", Range{0, 1 << 26});
    v("rps_flow_cnt", &RpsRfsParams::rps_flow_cnt, "entries",
      "rx-N/rps_flow_cnt (0 = rps_sock_flow_entries / queues, power of two)", Range{0, 1 << 26});
    v("idle_sibling", &RpsRfsParams::idle_sibling, "",
      "Kirill Tkhai's 2018 RFC: steer RFS to an idle CPU in the consumer's LLC when its CPU is busy");
    v("lo", &RpsRfsParams::lo, "", "Also set rps_cpus and rps_flow_cnt on the loopback device (lo/queues/rx-0)");
  }
  bool operator==(const RpsRfsParams&) const = default;
};

class RpsRfs : public RxModel {
 public:
  RpsRfs(const RpsRfsParams& p, std::string path) : p_(p), path_(std::move(path)) {}
  void check(const Kernel& k) const override { (void)rps_cpus(k); }
  void attach(Kernel& k, const std::vector<int>& nics) override {
    const CpuMask mask = rps_cpus(k);
    RpsState& st = k.enable_rps();
    std::vector<int> cpus;
    for (int c = mask.first(); c >= 0; c = mask.next(c))
      cpus.push_back(c);
    st.rfs = p_.rps_sock_flow_entries > 0;
    st.idle_sibling = p_.idle_sibling;
    if (p_.lo) {
      st.lo_map = cpus;
      const std::int64_t cnt = p_.rps_flow_cnt ? p_.rps_flow_cnt : std::max<std::int64_t>(1, p_.rps_sock_flow_entries);
      std::int64_t pow2 = 1;
      while (pow2 < cnt)
        pow2 <<= 1;
      if (st.rfs) st.lo_flow_table.assign(static_cast<std::size_t>(pow2), RpsState::DevFlow{});
    }
    for (int ni : nics) {
      Nic& nic = *k.nics()[static_cast<std::size_t>(ni)];
      std::int64_t cnt =
          p_.rps_flow_cnt ? p_.rps_flow_cnt : std::max<std::int64_t>(1, p_.rps_sock_flow_entries / nic.params.queues);
      std::int64_t pow2 = 1;
      while (pow2 < cnt)
        pow2 <<= 1;  // roundup_pow_of_two, as store_rps_dev_flow_table_cnt does
      for (auto& ch : nic.channels) {
        const std::size_t idx = static_cast<std::size_t>(ni) * 1024 + static_cast<std::size_t>(ch->id);
        if (st.map.size() <= idx) st.map.resize(idx + 1);
        if (st.flow_table.size() <= idx) st.flow_table.resize(idx + 1);
        st.map[idx] = cpus;
        if (st.rfs) st.flow_table[idx].assign(static_cast<std::size_t>(pow2), RpsState::DevFlow{});
      }
    }
  }

 private:
  CpuMask rps_cpus(const Kernel& k) const { return CpuMask::parse(p_.rps_cpus, k.nr_cpus(), path_ + "/rps_cpus"); }
  RpsRfsParams p_;
  std::string path_;  // JSON pointer of the params, for errors
};

}  // namespace

void register_rps_rfs(ModelRegistry& r) {
  register_model<RpsRfsParams, RpsRfs>(r, "rps_rfs",
                                       "RPS/RFS: steer protocol processing to per-CPU backlogs (get_rps_cpu), IPIs");
}

}  // namespace napisim
