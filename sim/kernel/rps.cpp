// napisim: RPS / RFS and the per-CPU backlog (net/core/dev.c as of v6.13; scaling.rst).
//
//   get_rps_cpu()           RFS: the CPU of the last recvmsg/sendmsg (rps_sock_flow_table), moved
//                           only once the old CPU's backlog has passed the flow's last_qtail
//                           (in-order rule); else RPS: rps_map[reciprocal_scale(hash, len)]
//   enqueue_to_backlog()    netdev_max_backlog (the accept test is qlen <= max, so 1001 fit);
//                           the enqueue that finds the queue empty schedules the backlog NAPI:
//                           locally, or by queueing an IPI (napi_schedule_rps)
//   net_rps_action_and_irq_enable()  IPIs are batched at the end of net_rx_action() and at the
//                           start of process_backlog(); the IPI handler (rps_trigger_softirq)
//                           schedules the remote backlog NAPI and counts received_rps
//   process_backlog()       the backlog NAPI poll, quota dev_rx_weight (64), in the same
//                           net_rx_action budget as device NAPIs
//   skb_flow_limit()        CONFIG_NET_FLOW_LIMIT (Willem de Bruijn, v3.11, 99bbc7074190): once the
//                           target backlog is half full (qlen >= netdev_max_backlog / 2), the
//                           *enqueuing* CPU's sd->flow_limit (only for CPUs in
//                           net.core.flow_limit_cpu_bitmap) records the flow bucket (hash &
//                           (flow_limit_table_len - 1)) of each packet in a 128-entry ring
//                           (FLOW_LIMIT_HISTORY); a packet whose bucket then holds more than 64
//                           of the last 128 is dropped and counted in flow_limit_count
// Kirill Tkhai's 2018 RFC (validation-targets.md 3) is the opt-in `idle_sibling` knob: when RFS's
// target CPU is busy (not available_idle_cpu, not this CPU), steer the flow to
// select_idle_sibling(next_cpu) in its LLC — still only after the old backlog drained, so
// ordering holds (an assumption: the RFC text does not say).
#include <algorithm>

#include "sim/kernel/kernel.hpp"

namespace napisim {

using namespace napi_state;

RpsState& Kernel::enable_rps() {
  if (!rps_) rps_ = std::make_unique<RpsState>();
  return *rps_;
}

int Kernel::get_rps_cpu(int this_cpu, const Channel& ch, const Skb& skb) {
  if (!rps_) return -1;
  const std::size_t idx = static_cast<std::size_t>(ch.nic->index) * 1024 + static_cast<std::size_t>(ch.id);
  const std::vector<int>* map = idx < rps_->map.size() ? &rps_->map[idx] : nullptr;
  std::vector<RpsState::DevFlow>* table =
      rps_->rfs && idx < rps_->flow_table.size() && !rps_->flow_table[idx].empty() ? &rps_->flow_table[idx] : nullptr;
  return get_rps_cpu_rxq(this_cpu, map, table, skb);
}

int Kernel::get_rps_cpu_rxq(int this_cpu, const std::vector<int>* map, std::vector<RpsState::DevFlow>* table,
                            const Skb& skb) {
  if ((!map || map->empty()) && !table) return -1;
  Socket& s = socket(skb.sock);
  const std::uint32_t hash = s.hash;
  if (table && s.rfs_cpu >= 0) {
    int next_cpu = s.rfs_cpu;
    RpsState::DevFlow& rf = (*table)[hash & (table->size() - 1)];
    int tcpu = rf.cpu;
    const bool drained = tcpu < 0 || static_cast<std::int64_t>(cpu(tcpu).sd.input_queue_head - rf.last_qtail) >= 0;
    bool want_new = tcpu != next_cpu && drained;
    if (rps_->idle_sibling && tcpu == next_cpu && tcpu != this_cpu && !idle_cpu(tcpu) && drained) want_new = true;
    if (want_new && rps_->idle_sibling) {
      // Tkhai's RFC (validation-targets.md 3): next_cpu = select_idle_sibling(NULL, next_cpu,
      // next_cpu); only if that differs from tcpu: tcpu = next_cpu, set_rps_cpu() and write it
      // back into rps_sock_flow_table. When it picks the CPU the flow is already on, the flow
      // stays there (it used to fall back to the busy consumer CPU, so a flow alternated between
      // the consumer and its idle sibling packet by packet).
      WakeeInfo probe;  // select_idle_sibling(NULL, next_cpu, next_cpu): no task, any CPU allowed
      probe.prev_cpu = next_cpu;
      const int sibling = select_idle_sibling(topo_, *this, wake_params_, probe, next_cpu, next_cpu, this_cpu, false);
      if (sibling >= 0) next_cpu = sibling;
      if (next_cpu != tcpu) {
        tcpu = next_cpu;
        rf.cpu = tcpu;
        rf.last_qtail = cpu(tcpu).sd.input_queue_tail;
        s.rfs_cpu = tcpu;  // written back into rps_sock_flow_table
      }
    } else if (want_new) {
      tcpu = next_cpu;  // set_rps_cpu()
      rf.cpu = tcpu;
      rf.last_qtail = cpu(tcpu).sd.input_queue_tail;
    }
    if (tcpu >= 0) return tcpu;
  }
  if (map && !map->empty()) return (*map)[reciprocal_scale(hash, static_cast<std::uint32_t>(map->size()))];
  return -1;
}

void Kernel::init_flow_limit() {
  if (kp_.net.flow_limit_cpu_bitmap.empty()) return;
  const std::int64_t len = kp_.net.flow_limit_table_len;
  if ((len & (len - 1)) != 0)  // flow_limit_table_len_sysctl(): -EINVAL unless a power of two
    throw ConfigError("/kernel/net/flow_limit_table_len", "expected a power of two, got " + std::to_string(len));
  const CpuMask m = CpuMask::parse(kp_.net.flow_limit_cpu_bitmap, nr_cpus(), "/kernel/net/flow_limit_cpu_bitmap");
  for (int c = m.first(); c >= 0; c = m.next(c)) {
    cpu(c).sd.flow_limit = std::make_unique<SdFlowLimit>();
    cpu(c).sd.flow_limit->buckets.assign(static_cast<std::size_t>(len), 0);
  }
}

bool Kernel::skb_flow_limit(SoftnetData& sd, const Skb& skb, std::int64_t qlen) {
  if (qlen < (kp_.net.netdev_max_backlog >> 1)) return false;
  SdFlowLimit* fl = sd.flow_limit.get();  // this_cpu_ptr(&softnet_data)->flow_limit
  if (!fl) return false;
  const std::uint32_t new_flow = socket(skb.sock).hash & static_cast<std::uint32_t>(fl->buckets.size() - 1);
  const std::uint32_t old_flow = fl->history[fl->history_head];
  fl->history[fl->history_head] = new_flow;
  fl->history_head = (fl->history_head + 1) & (SdFlowLimit::kHistory - 1);
  if (fl->buckets[old_flow]) --fl->buckets[old_flow];
  if (++fl->buckets[new_flow] > (SdFlowLimit::kHistory >> 1)) {
    ++sd.flow_limit_count;  // fl->count, softnet_stat's flow_limit_count
    return true;
  }
  return false;
}

void Kernel::enqueue_to_backlog(int this_cpu, const Skb& skb, int target, const TrainStamps* st) {
  SoftnetData& sd = cpu(target).sd;
  const auto qlen = static_cast<std::int64_t>(sd.input_pkt_queue.size());
  if (qlen > kp_.net.netdev_max_backlog || skb_flow_limit(cpu(this_cpu).sd, skb, qlen)) {
    ++sd.dropped;
    if (peer_) peer_->on_rx_drop(skb.sock, skb.bytes, skb.segs);
    return;
  }
  Skb queued = skb;
  queued.rps_cpu = -1;
  sd.input_pkt_queue.push_back(queued);
  if (stamps_) backlog_stamps_[static_cast<std::size_t>(target)].push_back(st ? *st : TrainStamps::at(host_.now()));
  ++sd.input_queue_tail;
  if (qlen == 0 && !(sd.backlog.state & kSched)) {
    sd.backlog.state |= kSched;
    if (stamps_) sd.backlog.mark_sched(host_.now());
    // napi_schedule_rps()
    SoftnetData& mysd = cpu(this_cpu).sd;
    if (target != this_cpu) {
      if (std::find(mysd.rps_ipi_list.begin(), mysd.rps_ipi_list.end(), target) == mysd.rps_ipi_list.end())
        mysd.rps_ipi_list.push_back(target);
      // Before v6.4 rps_ipi_queued() always raised NET_RX (the IPIs go at its end).
      if (!net_rx_refill_ || (!mysd.in_net_rx_action && !mysd.in_napi_threaded_poll))
        raise_softirq_irqoff(cpu(this_cpu), softirq_nr::kNetRx);
    } else {
      napi_schedule_local(cpu(this_cpu), sd.backlog);
    }
  }
}

void Kernel::net_rps_send_ipis(Cpu& c) {
  for (int target : c.sd.rps_ipi_list)
    smp_call_single_queue(target, nullptr);
  c.sd.rps_ipi_list.clear();
}

Proc<void> Kernel::deliver_skbs(Ctx ctx, const Skb* skbs, int n, const TrainStamps* stamps) {
  Nanos cost = 0;
  for (int i = 0; i < n; ++i)
    cost += skb_cost(skbs[i], ctx_cpu(ctx));
  co_await exec(ctx, cost);
  const std::uint64_t acks = delayed_acks_;
  netif_receive_skb_list(ctx, skbs, n, stamps);
  // ACKs sent by the rcv_mss rule (__tcp_ack_snd_check) depend on the delivery itself: their
  // tcp_send_ack() cost follows the batch, as does what the kernel's TCP sent for it.
  co_await exec(ctx, static_cast<Nanos>(delayed_acks_ - acks) * costs_.tx_ack_ns + take_tcp_owed());
}

Proc<int> Kernel::process_backlog(Ctx ctx, Napi& n, int quota) {
  Cpu& c = cpu(n.backlog_cpu);
  SoftnetData& sd = c.sd;
  net_rps_send_ipis(cpu(ctx_cpu(ctx)));  // "Check if we have pending IPIs, it's better to send them now"
  constexpr int kMaxBatch = 64;
  SkbBatch<kMaxBatch> batch;
  const int limit = static_cast<int>(std::min<std::int64_t>(kp_.net.gro_normal_batch, kMaxBatch));
  static_assert(kMaxBatch == NapiStamps::kBatch);
  TrainStamps* stamps = stamps_ ? n.stamps->batch.data() : nullptr;  // beside the batch
  int work = 0;
  for (;;) {
    int nb = 0;
    while (work < quota && nb < limit && !sd.input_pkt_queue.empty()) {
      if (stamps) {
        Fifo<TrainStamps>& q = backlog_stamps_[static_cast<std::size_t>(n.backlog_cpu)];
        stamps[nb] = q.front();
        q.pop_front();
      }
      batch.put(static_cast<std::size_t>(nb++), sd.input_pkt_queue.front());
      sd.input_pkt_queue.pop_front();
      ++sd.input_queue_head;
      ++work;
    }
    if (nb > 0) co_await deliver_skbs(ctx, batch.data(), nb, stamps);
    // softnet_data.processed counts every skb (__netif_receive_skb_core), including those of a
    // poll that used its whole quota (they were not counted before).
    sd.processed += static_cast<std::uint64_t>(nb);
    if (work >= quota) co_return work;  // stays scheduled: repoll
    if (sd.input_pkt_queue.empty()) {
      n.state &= kThreaded;  // napi->state &= NAPIF_STATE_THREADED: completes without napi_complete_done
      co_return work;
    }
  }
}

}  // namespace napisim
