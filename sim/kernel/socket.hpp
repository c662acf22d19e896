// napisim: TCP sockets (receive side) and epoll instances.
//
// Mirrors the parts of net/ipv4/tcp*.c and fs/eventpoll.c the receive-scheduling debate depends on:
// the receive queue (bytes ready), sk_data_ready -> ep_poll_callback queueing the socket on the
// epoll ready list and waking the (exclusive) waiter, sk_napi_id for busy polling, and the RFS
// record of the CPU the application last ran recvmsg on (sock_rps_record_flow).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "sim/core/fifo.hpp"
#include "sim/kernel/inet_csk.hpp"
#include "sim/kernel/napi.hpp"
#include "sim/kernel/task.hpp"

namespace napisim {

struct Epoll;
struct TcpSock;

// epoll event bits (include/uapi/linux/eventpoll.h): the interest masks the model distinguishes.
constexpr std::uint8_t kEpollIn = 0x001;   // EPOLLIN
constexpr std::uint8_t kEpollOut = 0x004;  // EPOLLOUT
// EPOLLONESHOT (1u << 30 in the uapi; a bit of this mask here): ep_send_events() disarms the item
// (clears its events) instead of re-queueing it; epoll_ctl(MOD) re-arms it.
constexpr std::uint8_t kEpollOneshot = 0x080;

// Field order is for the cache: what every packet and every recv()/send() touches fills the first
// two lines (alignas keeps those lines whole in SocketTable's chunks).
struct alignas(64) Socket {
  // ---- line 0 ------------------------------------------------------------------------------
  int id = 0;
  int nic = 0;
  int rx_queue = 0;           // RSS queue its packets arrive on
  int napi_id = -1;           // sk_napi_id (last NAPI that delivered to it)
  std::int64_t rx_avail = 0;  // bytes in the receive queue
  std::int64_t rcv_nxt = 0;   // bytes queued so far (tp->rcv_nxt)
  Epoll* ep = nullptr;
  Task* spinner = nullptr;  // a blocked reader busy-polling until this socket has data
  std::int64_t rcvbuf = 0;  // sk_rcvbuf (0: flow control not modelled)
  int rfs_cpu = -1;         // rps_sock_flow_table entry: CPU of the last recvmsg/sendmsg
  int lo_peer = -1;         // the other end of a connection over lo (-1: over a NIC)
  TcpSock* tcp = nullptr;   // its connection run by the kernel's TCP (Kernel::tcp_connect), or null
  // ---- line 1 ------------------------------------------------------------------------------
  bool on_ready_list = false;
  std::uint8_t ep_events = kEpollIn;            // epi->event.events: the epoll interest mask (kEpollIn/kEpollOut)
  TcpState tcp_state = TcpState::kEstablished;  // kClose/kSynRecv only for a listener's connections
  int listener = -1;                            // the listener it is accepted from (inet_csk.hpp), or -1
  int sk_cpu = -1;  // the CPU whose caches hold its written fast-path lines (cache.cpp sk_touch())
  // SO_TIMESTAMPING-style receive stamps (opt-in, for workloads that measure in-application
  // queueing): each queued skb leaves (rcv_nxt after it, time it became readable) in rx_stamps
  // until the workload consumes it.
  bool rx_timestamps = false;
  std::uint32_t hash = 0;     // skb->hash (Toeplitz)
  std::uint64_t rx_skbs = 0;  // statistics
  std::int64_t ll_usec = 0;   // sk_ll_usec: SO_BUSY_POLL in us (net.core.busy_read by default)
  WaitQueue wq;               // sk_sleep(sk): a task blocked in recv()/send() without epoll
  // TCP flow control (only for workloads that model it: rcvbuf > 0; stream, loopback).
  std::int64_t sndbuf = 0;     // sk_sndbuf: unacked bytes a sender may queue
  std::int64_t rcv_wup = 0;    // rcv_nxt at the last ACK sent
  std::int64_t rcv_mss = 536;  // icsk_ack.rcv_mss (tcp_measure_rcv_mss; TCP_MSS_DEFAULT at start)
  std::int64_t rcv_wnd = 0;    // window advertised by the last ACK (rcvbuf - unread bytes)
  std::int64_t snd_nxt = 0, snd_una = 0, snd_wnd = 0;  // sender: bytes sent, acked, peer's window
  struct RxStamp {
    std::int64_t end = 0;
    Nanos at = 0;
  };
  Fifo<RxStamp> rx_stamps{4};
  // Latency attribution (Kernel::set_stamps()): its last data train's transmit, and the task that
  // reads it (set by the workload): where its data waits (RxPath::reader).
  Nanos stamp_tx = 0;
  const Task* reader = nullptr;
};

/// Latency attribution (Kernel::set_stamps()): a data train's way to its socket. Its TrainStamps
/// from the ring, then `deliver`, when it reached the receive queue, and `reader`, the task_view()
/// then of the task that reads the socket (Socket::reader; zero without one): the start of its
/// wait in the socket or for a CPU.
struct RxPath : TrainStamps {
  Nanos deliver = 0;
  ClassTimes reader{};
};

/// Every socket of a host by id, in chunks of 64 that never move (callers keep references). Ids are
/// dense and random per packet, so socket(id) is a load from a 16-pointer table that stays in L1
/// and one from the chunk, instead of a vector of 1000 separate allocations' pointers.
class SocketTable {
 public:
  Socket& add() {
    const int id = size_;
    if ((id & kChunkMask) == 0) chunks_.push_back(std::make_unique<Socket[]>(kChunk));
    ++size_;
    Socket& s = (*this)[id];
    s.id = id;
    return s;
  }
  Socket& operator[](int id) { return chunks_[static_cast<std::size_t>(id) >> kChunkShift][id & kChunkMask]; }
  const Socket& operator[](int id) const {
    return chunks_[static_cast<std::size_t>(id) >> kChunkShift][id & kChunkMask];
  }

 private:
  static constexpr int kChunkShift = 6;
  static constexpr int kChunk = 1 << kChunkShift;
  static constexpr int kChunkMask = kChunk - 1;
  std::vector<std::unique_ptr<Socket[]>> chunks_;
  int size_ = 0;
};

struct Epoll {
  int id = 0;
  WaitQueue wq;
  Fifo<int> ready{16};  // ready list (socket ids), FIFO as ep->rdllist
  int napi_id = -1;     // ep->napi_id: learned from the last ready socket
  // EPIOCSPARAMS (fs/eventpoll.c): per-epoll busy polling
  std::int64_t busy_poll_usecs = 0;
  std::int64_t busy_poll_budget = 0;
  bool prefer_busy_poll = false;
  bool event_poll_only = false;  // Naman Gulati's 2024 proposal: spin on the ready list, no napi poll
  Task* spinner = nullptr;       // a task spinning until the ready list is non-empty
};

/// Defaults for new epoll instances (what an application sets with EPIOCSPARAMS).
struct EpollParams {
  std::int64_t busy_poll_usecs = 0;
  std::int64_t busy_poll_budget = 0;
  bool prefer_busy_poll = false;
  bool event_poll_only = false;
};

}  // namespace napisim
