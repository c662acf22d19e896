// napisim: CPU cost parameters, in ns of CPU time at full core speed.
//
// Defaults come from public measurements where one exists (kernel-napi.md 8.5) and are otherwise
// the stated inference. Values tagged [FIT] were fitted once by `napisim calibrate
// calibration/targets.json` (Levenberg-Marquardt on the published points marked "fit" there: wei2020
// 1B softirq QPS/p50/p99, wei2020 app p50, gulati2024 15-flow QPS/p50, karsten2024 base 600K
// avg/CPU, tkhai2018 loopback stream, kicinski2020 thread P99 change; seeds 1-2; report in
// calibration/fitted_costs.report.json) and predict every other point with the same set. The same
// set applies to every receive-path strategy: differences between strategies must come from where
// and when work runs.
#pragma once

#include <cstdint>

#include "sim/params/fields.hpp"

namespace napisim {

struct CostParams {
  // Interrupts and softirq entry.
  std::int64_t hardirq_ns = 591;  // [FIT, was 400] irq entry/exit + driver handler (mask CQ, napi_schedule) [INFER]
  std::int64_t softirq_entry_ns = 100;  // one __do_softirq pass: pending snapshot, irq on/off [INFER]
  std::int64_t ipi_latency_ns = 1000;   // IPI delivery to another CPU [INFER, kernel-napi 8.5: 1-5 us]
  std::int64_t ipi_handler_ns = 250;    // IPI receive: irq entry/exit + handler [INFER]
  std::int64_t cstate_exit_ns = 2000;   // idle-state exit before an idle CPU runs an interrupt or polled wakeup [CODE:
                                        // intel_idle skx_cstates C1 exit_latency 2 us]
  std::int64_t tick_ns = 300;           // scheduler_tick work per jiffy on a busy CPU [INFER]
  // Cache state (sim/kernel/cache.cpp): work pays a refill of its working set when the core's private
  // caches hold another owner's lines. FlexSC (Soares & Stumm, OSDI 2010, fig. 2-3) measured user-mode
  // IPC depressed for up to ~14K cycles after a single syscall or exception on a Core i7: the L1, TLB
  // and branch state a kernel path of well under a microsecond displaces; Li, Ding & Shen ("Quantifying
  // the cost of context switch", ExpCS 2007) measured the indirect cost of a context switch growing
  // with the working set from a few us (L2-sized) upwards [MEAS ranges]. The refill of a fully cold
  // working set is ~6K cycles at 3 GHz (the earlier fitted per-interrupt surcharge was 1677 ns);
  // foreign work of cache_evict_ns displaces 1 - 1/e of it, a few kernel paths' worth.
  std::int64_t cache_refill_ns = 2000;  // [INFER]
  std::int64_t cache_evict_ns = 2000;   // [INFER]
  // A socket's written fast-path lines moving to another core (cache.cpp sk_touch()): tcp_sock's
  // fast path spans 12 cache lines as of v6.5 (Documentation/networking/net_cachelines, net-next
  // 14006f1d8fa2) [CODE], each a miss served from another core's cache, 32 ns on an E5-2650
  // (J. D. Brouer, kernel-napi 8.5) [MEAS]: 12 x 32 ns.
  std::int64_t sk_bounce_ns = 384;
  // NAPI / driver / GRO.
  std::int64_t napi_poll_ns = 150;  // fixed cost of one napi->poll() call [INFER]
  std::int64_t rx_pkt_ns =
      148;  // [FIT, was 120] per RX descriptor: reap, skb build (4 cache lines) [MEAS range 100-300]
  std::int64_t gro_seg_ns = 40;        // per segment GRO merge [INFER]
  std::int64_t tx_completion_ns = 60;  // per TX completion (free skb) [INFER]
  // Protocol stack.
  std::int64_t rx_skb_ns = 1547;  // [FIT, was 700] IP + tcp_v4_rcv + queue to socket, per (GRO) skb [INFER 300-1000]
  std::int64_t rx_ack_ns = 350;   // pure ACK processing (tcp_ack) per skb [INFER]
  std::int64_t sk_data_ready_ns = 250;  // sock_def_readable -> ep_poll_callback, excluding the wakeup [INFER]
  std::int64_t wakeup_ns = 665;         // [FIT, was 400] try_to_wake_up on the waker: select_task_rq, enqueue [INFER]
  std::int64_t tx_ack_ns = 400;         // tcp_send_ack from softirq, incl. dev_queue_xmit [INFER]
  // select_idle_cpu() per cpu it examines: available_idle_cpu() reads the other cpu's runqueue,
  // one cache line from another core (~40-80 ns core to core on 2019-2020 Xeons) [INFER]. Part of
  // wakeup_ns, not charged again: SIS_PROP's avg_scan_cost (v5.10 placement) averages it.
  std::int64_t sis_scan_ns = 60;
  // Syscalls and application side.
  std::int64_t syscall_ns = 100;     // syscall entry/exit [MEAS-ish, 50-150 ns]
  std::int64_t epoll_wait_ns = 250;  // ep_poll bookkeeping per call [INFER]
  std::int64_t epoll_event_ns = 40;  // per returned event [INFER]
  // epoll_ctl() beyond the syscall entry (syscall_ns): ep_find in the rb-tree under ep->mtx and, for
  // EPOLL_CTL_MOD, ep_modify(): the new mask, tcp_poll() and the ready-list check. [INFER from MEAS]
  // Published figures bracket it: haproxy commit 37d7897a ("OPTIM: polling: do not create update
  // entries for FD removal") strace -c: 44643 epoll_ctl in 0.0399 s of system time, 0.89 us a call
  // with strace's own entry/exit traps included; lalinsky/zio issue #510 (EPYC 7402, Linux 7.0):
  // dropping ~4 epoll_ctl ADD/DEL per 64 B echo request on a saturated core took it from 93.8K to
  // 121.5K req/s, 2.4 us less per request, ~0.6 us per ADD/DEL with its entry. A MOD allocates no
  // epitem and installs no wait-queue entry, so about half that beyond the entry.
  std::int64_t epoll_ctl_ns = 250;
  std::int64_t recv_ns = 350;    // tcp_recvmsg fixed part [INFER]
  std::int64_t send_ns = 917;    // [FIT, was 900] tcp_sendmsg + tcp_write_xmit + ip_output + xmit, fixed part [INFER]
  std::int64_t tx_tso_ns = 250;  // per TSO super-packet on transmit [INFER]
  std::int64_t copy_ns_per_kb = 17;   // [FIT, was 80] copy to/from user, ~60 GB/s: cache-hot source [INFER]
  std::int64_t ctx_switch_ns = 1386;  // [FIT, was 1200] context switch [MEAS 1.07-3.5 us, low authority]
  std::int64_t rps_enqueue_ns = 150;  // get_rps_cpu + enqueue_to_backlog per skb [INFER]
  // Connections and futexes (sim/kernel/inet_csk.cpp); only listeners' connections and thread-pool
  // servers pay them. A SYN and a handshake's completion each allocate and initialise a socket-sized
  // object (request sock; child sock cloned from the listener, hashed into ehash) and run a path of
  // the length of rx_skb_ns's; accept4() allocates a file and installs an fd. [INFER]
  std::int64_t tcp_syn_ns = 1500;    // tcp_conn_request(): request sock, SYN-ACK built and sent [INFER]
  std::int64_t tcp_child_ns = 1500;  // tcp_check_req() + tcp_v4_syn_recv_sock(): the child socket [INFER]
  std::int64_t accept_ns = 700;      // inet_csk_accept() dequeue + sock_alloc_file() + fd_install() [INFER]
  std::int64_t futex_ns = 200;       // futex(): hash bucket lock, queue or dequeue, beyond the entry [INFER]
  // XDP and AF_XDP (sim/kernel/xsk.cpp), paid only where a program is attached. XDP_DROP runs at
  // 24 Mpps on one core of a ConnectX-5 (Hoiland-Jorgensen et al., "The eXpress Data Path",
  // CoNEXT 2018, fig. 3): ~41 ns a packet with the driver's descriptor work (rx_pkt_ns here), so
  // the program and its dispatch ~20 ns; AF_XDP zero-copy rxdrop and txpush reach 20-30 Mpps a
  // core (Karlsson & Topel, "The Path to DPDK Speeds for AF_XDP", LPC 2018) [INFER from MEAS].
  std::int64_t xdp_prog_ns = 20;      // bpf_prog_run_xdp() of a small program [INFER]
  std::int64_t xsk_rcv_ns = 30;       // xsk_rcv(): the RX descriptor, beyond the copy in copy mode [INFER]
  std::int64_t xsk_tx_ns = 50;        // one XSK or XDP_TX descriptor onto the send queue [INFER]
  std::int64_t xsk_sendmsg_ns = 150;  // __xsk_sendmsg() beyond the syscall entry, before the wakeup [INFER]
  // TCP's own work beyond a packet's receive (rx_skb_ns, rx_ack_ns) and transmit (tx_tso_ns,
  // tx_ack_ns) costs, on connections between two simulated Linux hosts (sim/kernel/tcp.hpp).
  // tcp_sacktag_write_queue() walks the retransmit queue for each SACK block: a few skbs' cache
  // lines, about an ACK's processing [INFER from rx_ack_ns].
  std::int64_t tcp_sack_ns = 300;
  // A TCP timer's handler (tcp_write_timer / tcp_delack_timer: bh_lock_sock, the checks, the
  // state change) besides what it transmits: a fraction of an ACK's processing [INFER].
  std::int64_t tcp_timer_ns = 200;
  // The TSQ tasklet, per socket (tcp_tasklet_func() -> tcp_tsq_handler(): bh_lock_sock and
  // tcp_write_xmit()'s checks) besides the skbs it sends [INFER, like tcp_timer_ns].
  std::int64_t tsq_ns = 200;
  // Variability: every CPU segment's cost is multiplied by a lognormal factor of mean 1 and this
  // coefficient of variation (cache misses, branch mispredictions; "for a budget of 64 the
  // processing can take 0-500us per round", Kicinski 2020-10-02). 0 = deterministic costs.
  double cost_cv = 0.3;

  template <class V>
  static void fields(V& v) {
    const Range r{0, 1e9};
    v("hardirq_ns", &CostParams::hardirq_ns, "ns", "Hard interrupt: entry/exit and driver handler", r);
    v("softirq_entry_ns", &CostParams::softirq_entry_ns, "ns", "One __do_softirq() pass", r);
    v("ipi_latency_ns", &CostParams::ipi_latency_ns, "ns", "IPI delivery latency to another CPU", r);
    v("ipi_handler_ns", &CostParams::ipi_handler_ns, "ns", "IPI handler on the receiving CPU", r);
    v("cstate_exit_ns", &CostParams::cstate_exit_ns, "ns", "Extra latency before an idle CPU starts work", r);
    v("tick_ns", &CostParams::tick_ns, "ns", "Scheduler tick work on a busy CPU", r);
    v("cache_refill_ns", &CostParams::cache_refill_ns, "ns",
      "Refill of a working set the core's private caches no longer hold (kernel.cache_model)", r);
    v("cache_evict_ns", &CostParams::cache_evict_ns, "ns",
      "Other owners' work on a core that displaces 1 - 1/e of a working set from its private caches (0: any)", r);
    v("sk_bounce_ns", &CostParams::sk_bounce_ns, "ns",
      "A socket's written fast-path lines moved from the core that wrote them last (kernel.cache_model)", r);
    v("napi_poll_ns", &CostParams::napi_poll_ns, "ns", "Fixed cost of one napi->poll() call", r);
    v("rx_pkt_ns", &CostParams::rx_pkt_ns, "ns", "Driver RX per packet: descriptor reap and skb build", r);
    v("gro_seg_ns", &CostParams::gro_seg_ns, "ns", "GRO per received segment", r);
    v("tx_completion_ns", &CostParams::tx_completion_ns, "ns", "Per TX completion", r);
    v("rx_skb_ns", &CostParams::rx_skb_ns, "ns", "IP + TCP receive per (GRO-merged) skb", r);
    v("rx_ack_ns", &CostParams::rx_ack_ns, "ns", "Pure ACK receive per skb", r);
    v("sk_data_ready_ns", &CostParams::sk_data_ready_ns, "ns", "sk_data_ready + ep_poll_callback", r);
    v("wakeup_ns", &CostParams::wakeup_ns, "ns", "try_to_wake_up on the waking CPU", r);
    v("tx_ack_ns", &CostParams::tx_ack_ns, "ns", "Sending a pure ACK from softirq", r);
    v("sis_scan_ns", &CostParams::sis_scan_ns, "ns",
      "select_idle_cpu() per CPU examined (within wakeup_ns; SIS_PROP's avg_scan_cost)", r);
    v("syscall_ns", &CostParams::syscall_ns, "ns", "Syscall entry and exit", r);
    v("epoll_wait_ns", &CostParams::epoll_wait_ns, "ns", "epoll_wait() bookkeeping per call", r);
    v("epoll_event_ns", &CostParams::epoll_event_ns, "ns", "epoll_wait() per returned event", r);
    v("epoll_ctl_ns", &CostParams::epoll_ctl_ns, "ns",
      "epoll_ctl() (EPOLL_CTL_MOD: ep_modify) beyond the syscall entry", r);
    v("recv_ns", &CostParams::recv_ns, "ns", "tcp_recvmsg() fixed cost", r);
    v("send_ns", &CostParams::send_ns, "ns", "tcp_sendmsg() through dev_queue_xmit(), fixed cost", r);
    v("tx_tso_ns", &CostParams::tx_tso_ns, "ns", "Per TSO super-packet transmitted", r);
    v("copy_ns_per_kb", &CostParams::copy_ns_per_kb, "ns/KiB", "User copy cost per KiB", r);
    v("ctx_switch_ns", &CostParams::ctx_switch_ns, "ns", "Context switch", r);
    v("rps_enqueue_ns", &CostParams::rps_enqueue_ns, "ns", "RPS: get_rps_cpu and enqueue_to_backlog per skb", r);
    v("tcp_syn_ns", &CostParams::tcp_syn_ns, "ns", "A SYN on a listener: request sock and SYN-ACK", r);
    v("tcp_child_ns", &CostParams::tcp_child_ns, "ns", "A handshake's completing ACK: the child socket", r);
    v("accept_ns", &CostParams::accept_ns, "ns", "accept4() beyond the syscall entry: dequeue, file, fd", r);
    v("xdp_prog_ns", &CostParams::xdp_prog_ns, "ns", "An XDP program run per packet", r);
    v("xsk_rcv_ns", &CostParams::xsk_rcv_ns, "ns", "AF_XDP receive per frame (copy mode adds copy_ns_per_kb)", r);
    v("xsk_tx_ns", &CostParams::xsk_tx_ns, "ns", "An AF_XDP or XDP_TX frame queued for transmit by the driver", r);
    v("xsk_sendmsg_ns", &CostParams::xsk_sendmsg_ns, "ns", "An AF_XDP sendto() kick beyond the syscall entry", r);
    v("futex_ns", &CostParams::futex_ns, "ns", "futex() wait or wake beyond the syscall entry and the wakeup", r);
    v("tcp_sack_ns", &CostParams::tcp_sack_ns, "ns", "TCP: an ACK's SACK blocks tagged on the retransmit queue", r);
    v("tcp_timer_ns", &CostParams::tcp_timer_ns, "ns", "TCP: a retransmit, loss-probe or delayed-ACK timer's handler",
      r);
    v("tsq_ns", &CostParams::tsq_ns, "ns", "TCP Small Queues: the tasklet's work per released socket", r);
    v("cost_cv", &CostParams::cost_cv, "", "Coefficient of variation of every CPU segment's cost (lognormal, mean 1)",
      Range{0, 10});
  }
  bool operator==(const CostParams&) const = default;
};

}  // namespace napisim
