// napisim: a host's kernel coming up (init/main.c start_kernel() and its initcalls, v6.6): the
// per-CPU state (sched_init(): run queues, the tick; net_dev_init(): softnet_data and the
// backlog NAPI), the flow limit tables, and one ksoftirqd/N per CPU (spawn_ksoftirqd()).
#include "sim/kernel/kernel.hpp"

#include <cmath>
#include <string>

namespace napisim {

Kernel::Kernel(HostModel& host, const Topology& topo, const KernelParams& kp, const CostParams& costs,
               const RngRoot* rng, const std::string& rng_prefix)
    : host_(host)
    , topo_(topo)
    , kp_(kp)
    , costs_(costs) {
  if (costs_.cost_cv > 0) {
    const double sigma = std::sqrt(std::log1p(costs_.cost_cv * costs_.cost_cv));
    // mu = -sigma^2 / 2: the factor's mean is 1.
    cost_factor_ = std::make_unique<LognormalQuantiles>(-sigma * sigma / 2, sigma);
  }
  const RngRoot default_root(0, 0);
  const RngRoot& root = rng ? *rng : default_root;
  if (kp_.hz != 100 && kp_.hz != 250 && kp_.hz != 300 && kp_.hz != 1000)
    throw ConfigError("/kernel/hz", "expected one of 100, 250, 300, 1000, got " + std::to_string(kp_.hz));
  tick_ns_ = kNsPerSec / kp_.hz;
  // net/core/dev.c: int netdev_budget_usecs = 2 * USEC_PER_SEC / HZ ("at least 2 jiffies to
  // guarantee 1 jiffy timeout"); 0 in the scenario asks for that default.
  if (kp_.net.netdev_budget_usecs == 0) kp_.net.netdev_budget_usecs = 2 * 1000000 / kp_.hz;
  smt_speed_milli_ = static_cast<int>(topo_.params().smt_speed * 1000.0 + 0.5);
  preempt_full_ = kp_.sched.preempt == "full";
  ksoftirqd_era_ = kp_.ksoftirqd_mode == "4.9-6.4";
  net_rx_refill_ = kp_.ksoftirqd_mode == "v6.5";
  fq_ = kp_.net.default_qdisc == "fq";
  tcp_rto_max_j_ = msecs_to_jiffies(120000);
  tcp_ato_min_j_ = kp_.hz / 25;
  tcp_rto_min_j_ = msecs_to_jiffies(kp_.tcp.rto_min_ms);
  inet_ehash_secret_ = static_cast<std::uint32_t>(root.stream(rng_prefix + "net/inet_ehash_secret").next_u64() >> 32);
  fair_params_.algo = kp_.sched.algo == "cfs" ? FairParams::Algo::kCfs : FairParams::Algo::kEevdf;
  fair_params_.nr_cpus = topo_.nr_cpus();
  fair_params_.base_slice_ns = kp_.sched.base_slice_ns;
  fair_params_.sched_latency_ns = kp_.sched.sched_latency_ns;
  fair_params_.min_granularity_ns = kp_.sched.min_granularity_ns;
  fair_params_.wakeup_granularity_ns = kp_.sched.wakeup_granularity_ns;
  fair_params_.tick_ns = tick_ns_;
  wake_params_.wake_affine = kp_.sched.wake_affine;
  wake_params_.sis_util = kp_.sched.sis_util;
  wake_params_.v5_10 = fair_params_.algo == FairParams::Algo::kCfs;
  wake_params_.sis_prop = kp_.sched.sis_prop;
  wake_params_.sis_scan_ns = costs_.sis_scan_ns;
  // The kernel zero-fills sd_llc_shared and the first LLC balance writes nr_idle_scan; a run
  // starts on a machine that has long been balancing, idle until now: scan the whole LLC.
  overloaded_ = CpuMask(topo_.nr_cpus());
  capacity_cut_ = CpuMask(topo_.nr_cpus());
  for (int l = 0; l < topo_.nr_llcs(); ++l)
    llc_nr_idle_scan_.push_back(static_cast<int>(topo_.cpus_of_llc(l).size()));
  llc_avg_scan_cost_.assign(static_cast<std::size_t>(topo_.nr_llcs()), 0);
  const int n = topo_.nr_cpus();
  irq_done_args_.resize(static_cast<std::size_t>(n));
  softirq_done_args_.resize(static_cast<std::size_t>(n));
  cpus_ = std::make_unique<Cpu[]>(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    Cpu* c = &cpus_[static_cast<std::size_t>(i)];
    c->id = i;
    c->avg_idle = 2 * kp_.sched.migration_cost_ns;  // sched_init(): rq->avg_idle = 2 * sysctl_sched_migration_cost
    c->cfs = std::make_unique<FairRq>(fair_params_);
    c->rt = std::make_unique<RtRq>(tick_ns_);
    c->cost_rng = root.stream(rng_prefix + "cpu" + std::to_string(i) + "/cost");
    c->sd.backlog.id = -1;
    c->sd.backlog.backlog_cpu = i;
    c->sd.backlog.weight = static_cast<int>(kp_.net.dev_weight);  // dev_rx_weight = dev_weight * bias (1)
    irq_done_args_[static_cast<std::size_t>(i)] = {this, c};
    softirq_done_args_[static_cast<std::size_t>(i)] = {this, c};
  }
  init_flow_limit();
  // Per-CPU ksoftirqd/N: SCHED_NORMAL nice 0, pinned (kernel/softirq.c softirq_threads).
  for (int i = 0; i < n; ++i) {
    CpuMask m(n);
    m.set(i);
    // Asleep until the first wakeup_softirqd(): the body's first step checks for pending work.
    cpu(i).ksoftirqd = &kthread_create("ksoftirqd/" + std::to_string(i), TaskKind::kKsoftirqd, m, CpuClass::kKsoftirqd,
                                       [&](Task& t) { return ksoftirqd_body(t, cpu(i)); });
  }
}

Kernel::~Kernel() = default;

}  // namespace napisim
