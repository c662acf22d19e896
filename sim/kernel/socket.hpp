// napisim: TCP sockets (receive side) and epoll instances.
//
// Mirrors the parts of net/ipv4/tcp*.c and fs/eventpoll.c the receive-scheduling debate depends on:
// the receive queue (bytes ready), sk_data_ready -> ep_poll_callback queueing the socket on the
// epoll ready list and waking the (exclusive) waiter, sk_napi_id for busy polling, and the RFS
// record of the CPU the application last ran recvmsg on (sock_rps_record_flow).
#pragma once

#include <cstdint>

#include "sim/core/fifo.hpp"
#include "sim/kernel/task.hpp"

namespace napisim {

struct Epoll;

struct Socket {
  int id = 0;
  int nic = 0;
  int rx_queue = 0;            // RSS queue its packets arrive on
  std::uint32_t hash = 0;      // skb->hash (Toeplitz)
  std::int64_t rx_avail = 0;   // bytes in the receive queue
  Epoll* ep = nullptr;
  bool on_ready_list = false;
  int napi_id = -1;            // sk_napi_id (last NAPI that delivered to it)
  int rfs_cpu = -1;            // rps_sock_flow_table entry: CPU of the last recvmsg/sendmsg
  // statistics
  std::uint64_t rx_skbs = 0;
};

struct Epoll {
  int id = 0;
  WaitQueue wq;
  Fifo<int> ready{16};         // ready list (socket ids), FIFO as ep->rdllist
  int napi_id = -1;            // ep->napi_id: learned from the last ready socket
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
