// napisim: the connection hash that picks a SO_REUSEPORT listener.
//
// Mirrors include/linux/jhash.h (jhash_3words(), __jhash_final(), JHASH_INITVAL) and
// include/net/inet_ehashfn.h / net/ipv4/inet_hashtables.c (__inet_ehashfn(), inet_ehashfn(),
// inet_lookup_reuseport(): phash = inet_ehashfn(net, daddr, hnum, saddr, sport), then
// reuseport_select_sock() -> reciprocal_scale(phash, num_socks)), Linux v6.6 (the same hash since
// v4.x's lookup_reuseport()). The kernel keys the hash with a random secret drawn once per boot
// (inet_ehash_secret, plus net_hash_mix()); napisim draws it from the run's seed. Unlike the NIC's
// Toeplitz hash, which is linear in the port bits and spreads consecutive client ports almost
// evenly, jhash spreads a listener group's connections like random draws (neper's threads each
// bind a SO_REUSEPORT listener, so its server threads get unequal shares of the flows).
#pragma once

#include <cstdint>

#include "sim/hw/rss.hpp"

namespace napisim {

inline constexpr std::uint32_t kJhashInitval = 0xdeadbeef;  // JHASH_INITVAL

constexpr std::uint32_t rol32(std::uint32_t w, unsigned s) {
  return (w << s) | (w >> (32 - s));
}

/// jhash_3words(a, b, c, initval): __jhash_nwords() with initval + JHASH_INITVAL + (3 << 2).
constexpr std::uint32_t jhash_3words(std::uint32_t a, std::uint32_t b, std::uint32_t c, std::uint32_t initval) {
  initval += kJhashInitval + (3u << 2);
  a += initval;
  b += initval;
  c += initval;
  // __jhash_final(a, b, c)
  c ^= b;
  c -= rol32(b, 14);
  a ^= c;
  a -= rol32(c, 11);
  b ^= a;
  b -= rol32(a, 25);
  c ^= b;
  c -= rol32(b, 16);
  a ^= c;
  a -= rol32(c, 4);
  b ^= a;
  b -= rol32(a, 14);
  c ^= b;
  c -= rol32(b, 24);
  return c;
}

constexpr std::uint32_t bswap32(std::uint32_t x) {
  return (x >> 24) | ((x >> 8) & 0xff00u) | ((x << 8) & 0xff0000u) | (x << 24);
}
constexpr std::uint16_t bswap16(std::uint16_t x) {
  return static_cast<std::uint16_t>((x >> 8) | (x << 8));
}

/// inet_ehashfn() of a connection as the receiving host sees it (`in`: saddr/sport the peer's,
/// daddr/dport this host's; host byte order). The kernel hashes the __be32 addresses and the
/// __be16 peer port as the little-endian (x86) CPU holds them, the local port (hnum) in host order.
constexpr std::uint32_t inet_ehashfn(const FlowTuple& in, std::uint32_t secret) {
  return jhash_3words(bswap32(in.daddr), bswap32(in.saddr),
                      (static_cast<std::uint32_t>(in.dport) << 16) | bswap16(in.sport), secret);
}

/// reciprocal_scale(val, ep_ro) (include/linux/math.h v6.6): val scaled into [0, ep_ro), as
/// reuseport_select_sock() and get_rps_cpu() (rps.cpp) pick an entry of their tables.
constexpr std::uint32_t reciprocal_scale(std::uint32_t val, std::uint32_t ep_ro) {
  return static_cast<std::uint32_t>((static_cast<std::uint64_t>(val) * ep_ro) >> 32);
}

}  // namespace napisim
