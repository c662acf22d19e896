// napisim: the TCP header fields a packet of a connection run by the kernels' TCP carries
// (sim/kernel/tcp.hpp): include/net/tcp.h struct tcp_skb_cb's seq, the header's ack_seq and
// window, the timestamps option (RFC 7323), the SACK option (RFC 2018) and whether it reports a
// duplicate (D-SACK, RFC 2883).
#pragma once

#include <array>
#include <cstdint>

namespace napisim {

/// The TCP header fields the model acts on, carried by every packet of a connection run by the
/// kernels' TCP (tcp_skb_cb: seq; the header's ack_seq and window; the timestamps and SACK options).
struct TcpHdr {
  std::uint32_t seq = 0;                // first payload byte (mod 2^32)
  std::uint32_t ack = 0;                // cumulative ACK: the next byte expected
  std::uint32_t wnd = 0;                // advertised window in bytes (after window scaling)
  std::uint32_t tsval = 0, tsecr = 0;   // the timestamps option (RFC 7323), in ms (TCP_TS_HZ 1000)
  std::uint16_t mss = 0;                // gso_size of a data train: its segments' payload but the last's
  std::uint8_t nsack = 0;               // SACK blocks in `sack`, the most recently received first
  bool dsack = false;                   // the data acknowledged duplicates some already received (RFC 2883)
  std::array<std::uint32_t, 6> sack{};  // (start, end) of each block
};

}  // namespace napisim
