// napisim: CUBIC, Linux's default congestion control, with HyStart (net/ipv4/tcp_cubic.c v6.6),
// and the slow start and additive increase it builds on (net/ipv4/tcp_cong.c tcp_slow_start(),
// tcp_cong_avoid_ai()).
//
//   cubictcp_init / cubictcp_state   bictcp_reset + bictcp_hystart_reset (at start and on RTO)
//   cubictcp_cong_avoid              slow start below ssthresh, then bictcp_update's cubic target
//                                    with TCP friendliness; only while cwnd limits the flow
//   cubictcp_recalc_ssthresh         beta 717/1024, fast convergence of last_max_cwnd
//   cubictcp_cwnd_event(TX_START)    an idle sender shifts epoch_start by its idle time
//   cubictcp_acked -> hystart_update ACK-train (ACKs closer than 2 ms past delay_min/2, or
//                                    delay_min with pacing) and delay (8 samples, 4-16 ms above
//                                    delay_min) exit from slow start, from cwnd 16
// cubic_root() is the exact integer cube root (the kernel's table and one Newton step are within
// 0.2% of it).
#include <algorithm>
#include <cmath>

#include "sim/kernel/tcp_inline.hpp"

namespace napisim {

namespace {
constexpr std::uint32_t kBetaScale = 1024;  // BICTCP_BETA_SCALE
constexpr std::uint32_t kBeta = 717;        // beta = 717/1024
constexpr std::uint32_t kBicScale = 41;     // bic_scale: C = 0.4 (41 * 10 / 1024)
constexpr int kBictcpHz = 10;               // BICTCP_HZ: time in 1/1024 s
constexpr std::int64_t kHystartAckDeltaUs = 2000;
constexpr std::uint32_t kHystartMinSamples = 8;
constexpr std::uint32_t kHystartDelayMin = 4000, kHystartDelayMax = 16000;  // us
// cubictcp_register(): beta_scale = 8 * (1024 + 717) / 3 / (1024 - 717), cube_rtt_scale =
// bic_scale * 10, cube_factor = 2^(10 + 3 * BICTCP_HZ) / (bic_scale * 10).
constexpr std::uint32_t kBetaScaleTcp = 8 * (kBetaScale + kBeta) / 3 / (kBetaScale - kBeta);
constexpr std::uint64_t kCubeRttScale = kBicScale * 10;
constexpr std::uint64_t kCubeFactor = (1ULL << (10 + 3 * kBictcpHz)) / (kBicScale * 10);

std::uint32_t cubic_root(std::uint64_t a) {
  auto x = static_cast<std::uint64_t>(std::cbrt(static_cast<double>(a)));
  while (x > 0 && x * x * x > a)
    --x;
  while ((x + 1) * (x + 1) * (x + 1) <= a)
    ++x;
  return static_cast<std::uint32_t>(x);
}

void bictcp_reset(Bictcp& ca) {
  // memset up to `unused`: everything but HyStart's round state; found too.
  const Bictcp keep = ca;
  ca = Bictcp{};
  ca.sample_cnt = keep.sample_cnt;
  ca.round_start = keep.round_start;
  ca.end_seq = keep.end_seq;
  ca.last_ack = keep.last_ack;
  ca.curr_rtt = keep.curr_rtt;
}
}  // namespace

void Kernel::bictcp_hystart_reset(TcpSock& tp) {
  Bictcp& ca = tp.ca;
  ca.round_start = ca.last_ack = tcp_clock_us();
  ca.end_seq = tp.snd_nxt;
  ca.curr_rtt = ~0u;
  ca.sample_cnt = 0;
}

void Kernel::cubictcp_init(TcpSock& tp) {
  bictcp_reset(tp.ca);
  if (kp_.tcp.hystart) bictcp_hystart_reset(tp);
}

void Kernel::cubictcp_state(TcpSock& tp, TcpCaState s) {
  if (s == TcpCaState::kLoss) {
    bictcp_reset(tp.ca);
    bictcp_hystart_reset(tp);
  }
}

void Kernel::cubictcp_cwnd_event_tx_start(TcpSock& tp) {
  // We were application limited (idle) for a while: shift epoch_start to keep cwnd growth to the
  // cubic curve.
  Bictcp& ca = tp.ca;
  const std::int64_t now_j = jiffies();
  const std::int64_t delta = now_j - tp.lsndtime;
  if (ca.epoch_start && delta > 0) {
    ca.epoch_start += delta;
    if (ca.epoch_start > now_j) ca.epoch_start = now_j;
  }
}

std::uint32_t Kernel::cubictcp_recalc_ssthresh(TcpSock& tp) {
  Bictcp& ca = tp.ca;
  ca.epoch_start = 0;  // end of epoch
  // Wmax and fast convergence
  if (tp.cwnd < ca.last_max_cwnd)
    ca.last_max_cwnd = (tp.cwnd * (kBetaScale + kBeta)) / (2 * kBetaScale);
  else
    ca.last_max_cwnd = tp.cwnd;
  return std::max((tp.cwnd * kBeta) / kBetaScale, 2u);
}

void Kernel::bictcp_update(TcpSock& tp, std::uint32_t cwnd, std::uint32_t acked) {
  Bictcp& ca = tp.ca;
  const std::int64_t now_j = jiffies();
  const std::int64_t hz = kp_.hz;
  ca.ack_cnt += acked;  // count the number of ACKed packets
  if (ca.last_cwnd == cwnd && now_j - ca.last_time <= hz / 32) return;
  // The CUBIC function can update ca->cnt at most once per jiffy.
  if (!(ca.epoch_start && now_j == ca.last_time)) {
    ca.last_cwnd = cwnd;
    ca.last_time = now_j;
    if (ca.epoch_start == 0) {
      ca.epoch_start = now_j;  // record beginning
      ca.ack_cnt = acked;      // start counting
      ca.tcp_cwnd = cwnd;      // syn with cubic
      if (ca.last_max_cwnd <= cwnd) {
        ca.bic_K = 0;
        ca.bic_origin_point = cwnd;
      } else {
        // Compute new K based on (wmax - cwnd) * (srtt >> 3 / HZ) / c * 2^(3 * bictcp_HZ)
        ca.bic_K = cubic_root(kCubeFactor * (ca.last_max_cwnd - cwnd));
        ca.bic_origin_point = ca.last_max_cwnd;
      }
    }
    // cubic function: t in 1/1024 s since the epoch's start plus delay_min
    std::uint64_t t = static_cast<std::uint64_t>(now_j - ca.epoch_start);
    t += static_cast<std::uint64_t>(usecs_to_jiffies(ca.delay_min));
    t <<= kBictcpHz;
    t /= static_cast<std::uint64_t>(hz);
    const std::uint64_t offs = t < ca.bic_K ? ca.bic_K - t : t - ca.bic_K;
    // c/rtt * (t-K)^3
    const auto delta = static_cast<std::uint32_t>((kCubeRttScale * offs * offs * offs) >> (10 + 3 * kBictcpHz));
    const std::uint32_t bic_target = t < ca.bic_K ? ca.bic_origin_point - delta : ca.bic_origin_point + delta;
    // cubic function: calc bictcp_cnt
    if (bic_target > cwnd)
      ca.cnt = cwnd / (bic_target - cwnd);
    else
      ca.cnt = 100 * cwnd;  // very small increment
    // The initial growth of the cubic function may be too conservative when the available
    // bandwidth is still unknown.
    if (ca.last_max_cwnd == 0 && ca.cnt > 20) ca.cnt = 20;  // increase cwnd 5% per RTT
  }
  // TCP Friendly
  const std::uint32_t delta = (cwnd * kBetaScaleTcp) >> 3;
  while (delta > 0 && ca.ack_cnt > delta) {  // update tcp cwnd
    ca.ack_cnt -= delta;
    ca.tcp_cwnd++;
  }
  if (ca.tcp_cwnd > cwnd) {  // if bic is slower than tcp
    const std::uint32_t max_cnt = cwnd / (ca.tcp_cwnd - cwnd);
    if (ca.cnt > max_cnt) ca.cnt = max_cnt;
  }
  // The maximum rate of cwnd increase CUBIC allows is 1 packet per 2 packets ACKed, meaning cwnd
  // grows at 1.5x per RTT.
  ca.cnt = std::max(ca.cnt, 2u);
}

std::uint32_t Kernel::tcp_slow_start(TcpSock& tp, std::uint32_t acked) {
  const std::uint32_t cwnd = std::min(tp.cwnd + acked, tp.ssthresh);
  acked -= cwnd - tp.cwnd;
  tp.cwnd = std::min(cwnd, tp.cwnd_clamp);
  return acked;
}

void Kernel::tcp_cong_avoid_ai(TcpSock& tp, std::uint32_t w, std::uint32_t acked) {
  // If credits accumulated at a higher w, apply them gently now.
  if (tp.cwnd_cnt >= w) {
    tp.cwnd_cnt = 0;
    tp.cwnd++;
  }
  tp.cwnd_cnt += acked;
  if (tp.cwnd_cnt >= w) {
    const std::uint32_t delta = tp.cwnd_cnt / w;
    tp.cwnd_cnt -= delta * w;
    tp.cwnd += delta;
  }
  tp.cwnd = std::min(tp.cwnd, tp.cwnd_clamp);
}

void Kernel::hystart_update(TcpSock& tp, std::uint32_t delay) {
  Bictcp& ca = tp.ca;
  if (tp.snd_una > ca.end_seq) bictcp_hystart_reset(tp);
  // hystart triggers when cwnd is larger than some threshold
  if (tp.cwnd < kTcpHystartLowWindow) return;
  // first detection parameter: ack-train detection
  const std::int64_t now_us = tcp_clock_us();
  if (now_us - ca.last_ack <= kHystartAckDeltaUs) {
    ca.last_ack = now_us;
    // hystart_ack_delay(): the time a full GSO packet takes at the pacing rate, at most 1 ms.
    std::int64_t ack_delay = 0;
    if (tp.pacing_rate)
      ack_delay = std::min<std::int64_t>(
          1000,
          static_cast<std::int64_t>(static_cast<std::uint64_t>(kp_.net.tso_max_bytes) * 4 * 1000000 / tp.pacing_rate));
    std::int64_t threshold = ca.delay_min + ack_delay;
    // Pacing might have delayed packets up to RTT/2 during slow start.
    if (!tcp_fq()) threshold >>= 1;
    if (now_us - ca.round_start > threshold) {
      ca.found = true;
      tp.ssthresh = tp.cwnd;
    }
  }
  // obtain the minimum delay of more than sampling packets
  if (ca.curr_rtt > delay) ca.curr_rtt = delay;
  if (ca.sample_cnt < kHystartMinSamples) {
    ca.sample_cnt++;
  } else if (ca.curr_rtt > ca.delay_min + std::clamp(ca.delay_min >> 3, kHystartDelayMin, kHystartDelayMax)) {
    ca.found = true;
    tp.ssthresh = tp.cwnd;
  }
}

}  // namespace napisim
