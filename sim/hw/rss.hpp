// napisim: Receive Side Scaling (RSS): Toeplitz hash plus indirection table.
//
// Mirrors (Linux ≈ v6.6):
//  * Documentation/networking/scaling.rst, "RSS": the receive queue is
//    indir[hash & (size - 1)] of a 128-entry table; here indir[hash % table_size], which is the same
//    for power-of-two sizes ("the low-order seven bits" for 128).
//  * include/linux/ethtool.h ethtool_rxfh_indir_default(): default entry i = i % n_rx_rings.
//  * Toeplitz as specified by Microsoft ("Verifying the RSS Hash Calculation"); IPv4/TCP input is
//    saddr, daddr, sport, dport in network byte order (12 bytes).
//  * Key: Linux fills it from netdev_rss_key_fill() (net/core/dev.c), a per-boot *random* 52-byte
//    buffer of which drivers use 40 bytes. napisim defaults to Microsoft's published 40-byte key so
//    runs are reproducible and the published verification vectors apply; a scenario may pass any
//    key of at least 16 bytes (12-byte input + 4).
//
// Cost: the simulator hashes each flow once at connection setup, so the bitwise Toeplitz loop
// (96 input bits) is not on a per-packet path; queue_of() is one modulo and one load.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace napisim {

/// IPv4 TCP 4-tuple; all values in host byte order (e.g. 0x0A000001 is 10.0.0.1).
struct FlowTuple {
  std::uint32_t saddr = 0;
  std::uint32_t daddr = 0;
  std::uint16_t sport = 0;
  std::uint16_t dport = 0;
};

/// Microsoft's default RSS key (40 bytes), used by the published verification vectors.
inline constexpr std::array<std::uint8_t, 40> kMicrosoftRssKey = {
    0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
    0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
    0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa};

/// Size of the IPv4+TCP Toeplitz input: saddr(4) daddr(4) sport(2) dport(2).
inline constexpr std::size_t kRssIpv4TcpInputLen = 12;

/// Toeplitz hash of an arbitrary input byte string. Requires key.size() >= input.size() + 4
/// (asserted): for every set input bit i (MSB first), XOR in the 32-bit key window at bit i.
std::uint32_t toeplitz_hash(std::span<const std::uint8_t> key, std::span<const std::uint8_t> input);

/// Toeplitz hash of an IPv4/TCP flow as a NIC computes it: the input is saddr, daddr, sport, dport
/// in network byte order. Requires key.size() >= 16 (asserted).
std::uint32_t toeplitz_hash(std::span<const std::uint8_t> key, const FlowTuple& flow);

/// include/linux/ethtool.h ethtool_rxfh_indir_default() (≈ v6.6): default indirection entry.
constexpr std::uint32_t ethtool_rxfh_indir_default(std::uint32_t index, std::uint32_t n_rx_rings) {
  return index % n_rx_rings;
}

/// One NIC's RSS configuration: key, indirection table and queue count.
///
/// Invalid arguments throw ConfigError whose path is relative to the RSS configuration
/// ("/nr_queues", "/table_size", "/key", "/indirection/<i>"); the scenario layer validates first
/// when it needs absolute JSON pointers.
class Rss {
 public:
  /// Default table = ethtool_rxfh_indir_default(i, nr_queues). Requires nr_queues >= 1,
  /// table_size >= 1 and key.size() >= 16.
  explicit Rss(int nr_queues, std::size_t table_size = 128, std::span<const std::uint8_t> key = kMicrosoftRssKey);

  /// Receive queue for a hash: indir[hash % table_size] (the low 7 bits for a 128-entry table).
  int queue_of(std::uint32_t hash) const { return indir_[hash % indir_.size()]; }

  /// Replaces the table (ethtool -X ... weight/equal). As in ethtool's set_rxfh, the size must
  /// equal table_size() and every entry must be a valid queue in [0, nr_queues).
  void set_indirection(std::vector<int> table);
  const std::vector<int>& indirection() const { return indir_; }

  /// Toeplitz hash of the flow with this device's key.
  std::uint32_t hash(const FlowTuple& flow) const { return toeplitz_hash(key_, flow); }
  /// queue_of(hash(flow)).
  int queue_of(const FlowTuple& flow) const { return queue_of(hash(flow)); }

  int nr_queues() const { return nr_queues_; }
  std::size_t table_size() const { return indir_.size(); }
  const std::vector<std::uint8_t>& key() const { return key_; }

 private:
  int nr_queues_;
  std::vector<int> indir_;
  std::vector<std::uint8_t> key_;
};

}  // namespace napisim
