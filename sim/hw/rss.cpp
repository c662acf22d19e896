// napisim: RSS Toeplitz hash and indirection table (see rss.hpp for the kernel sources mirrored).
#include "sim/hw/rss.hpp"

#include <string>
#include <utility>

#include "sim/core/error.hpp"

namespace napisim {

// Microsoft "RSS hashing functions" / "Verifying the RSS Hash Calculation": the Toeplitz hash.
// `window` always holds key bits [i, i + 32) for the current input bit i, so each input bit costs a
// test, a shift and an OR of the next key bit.
std::uint32_t toeplitz_hash(std::span<const std::uint8_t> key, std::span<const std::uint8_t> input) {
  NAPISIM_ASSERT(key.size() >= input.size() + 4, "RSS key shorter than input + 4 bytes");
  std::uint32_t window = (std::uint32_t{key[0]} << 24) | (std::uint32_t{key[1]} << 16) | (std::uint32_t{key[2]} << 8) |
                         std::uint32_t{key[3]};
  std::uint32_t result = 0;
  for (std::size_t i = 0; i < input.size(); ++i) {
    const std::uint8_t in = input[i];
    const std::uint8_t next = key[i + 4];
    for (int bit = 7; bit >= 0; --bit) {
      if ((in >> bit) & 1U) result ^= window;
      window = (window << 1) | ((next >> bit) & 1U);
    }
  }
  return result;
}

std::uint32_t toeplitz_hash(std::span<const std::uint8_t> key, const FlowTuple& flow) {
  // Network byte order: most significant byte first.
  const std::array<std::uint8_t, kRssIpv4TcpInputLen> input = {
      static_cast<std::uint8_t>(flow.saddr >> 24), static_cast<std::uint8_t>(flow.saddr >> 16),
      static_cast<std::uint8_t>(flow.saddr >> 8),  static_cast<std::uint8_t>(flow.saddr),
      static_cast<std::uint8_t>(flow.daddr >> 24), static_cast<std::uint8_t>(flow.daddr >> 16),
      static_cast<std::uint8_t>(flow.daddr >> 8),  static_cast<std::uint8_t>(flow.daddr),
      static_cast<std::uint8_t>(flow.sport >> 8),  static_cast<std::uint8_t>(flow.sport),
      static_cast<std::uint8_t>(flow.dport >> 8),  static_cast<std::uint8_t>(flow.dport)};
  return toeplitz_hash(key, std::span<const std::uint8_t>(input));
}

Rss::Rss(int nr_queues, std::size_t table_size, std::span<const std::uint8_t> key)
    : nr_queues_(nr_queues)
    , key_(key.begin(), key.end()) {
  if (nr_queues < 1) throw ConfigError("/nr_queues", "expected integer >= 1, got " + std::to_string(nr_queues));
  if (table_size < 1) throw ConfigError("/table_size", "expected integer >= 1, got 0");
  if (key.size() < kRssIpv4TcpInputLen + 4)
    throw ConfigError("/key", "expected at least " + std::to_string(kRssIpv4TcpInputLen + 4) + " bytes, got " +
                                  std::to_string(key.size()));
  indir_.resize(table_size);
  // netdev / driver init: ethtool_rxfh_indir_default() for every entry.
  for (std::size_t i = 0; i < table_size; ++i)
    indir_[i] = static_cast<int>(
        ethtool_rxfh_indir_default(static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(nr_queues)));
}

void Rss::set_indirection(std::vector<int> table) {
  if (table.size() != indir_.size())
    throw ConfigError("/indirection", "expected " + std::to_string(indir_.size()) +
                                          " entries (the device table size), got " + std::to_string(table.size()));
  for (std::size_t i = 0; i < table.size(); ++i) {
    if (table[i] < 0 || table[i] >= nr_queues_)
      throw ConfigError("/indirection/" + std::to_string(i), "expected queue in [0, " + std::to_string(nr_queues_ - 1) +
                                                                 "], got " + std::to_string(table[i]));
  }
  indir_ = std::move(table);
}

}  // namespace napisim
