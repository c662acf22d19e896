// Tests for sim/hw/rss: Toeplitz hash against Microsoft's published verification vectors, the
// default indirection table (ethtool_rxfh_indir_default) and user-set tables.
#include "sim/hw/rss.hpp"

#include <array>
#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "sim/core/error.hpp"

namespace napisim {
namespace {

constexpr std::uint32_t ip(std::uint32_t a, std::uint32_t b, std::uint32_t c, std::uint32_t d) {
  return (a << 24) | (b << 16) | (c << 8) | d;
}

// Microsoft "Verifying the RSS Hash Calculation". The published table lists the destination first
// ("Destination Address/Port, Source Address/Port"); the hash input is source, destination.
struct MsVector {
  FlowTuple flow;
  std::uint32_t ipv4_only;
  std::uint32_t ipv4_tcp;
};

const std::array<MsVector, 5> kMsVectors = {{
    {{ip(66, 9, 149, 187), ip(161, 142, 100, 80), 2794, 1766}, 0x323e8fc2, 0x51ccc178},
    {{ip(199, 92, 111, 2), ip(65, 69, 140, 83), 14230, 4739}, 0xd718262a, 0xc626b0ea},
    {{ip(24, 19, 198, 95), ip(12, 22, 207, 184), 12898, 38024}, 0xd2d0a5de, 0x5c2b394a},
    {{ip(38, 27, 205, 30), ip(209, 142, 163, 6), 48228, 2217}, 0x82989176, 0xafc7327f},
    {{ip(153, 39, 163, 191), ip(202, 188, 127, 2), 44251, 1303}, 0x5d1809c5, 0x10e828a2},
}};

TEST(RssToeplitzTest, MatchesMicrosoftIpv4TcpVectors) {
  for (const MsVector& v : kMsVectors) {
    EXPECT_EQ(toeplitz_hash(kMicrosoftRssKey, v.flow), v.ipv4_tcp)
        << std::hex << "saddr " << v.flow.saddr << " daddr " << v.flow.daddr;
  }
}

TEST(RssToeplitzTest, MatchesMicrosoftIpv4OnlyVectorsOnRawInput) {
  for (const MsVector& v : kMsVectors) {
    const std::array<std::uint8_t, 8> input = {
        static_cast<std::uint8_t>(v.flow.saddr >> 24), static_cast<std::uint8_t>(v.flow.saddr >> 16),
        static_cast<std::uint8_t>(v.flow.saddr >> 8),  static_cast<std::uint8_t>(v.flow.saddr),
        static_cast<std::uint8_t>(v.flow.daddr >> 24), static_cast<std::uint8_t>(v.flow.daddr >> 16),
        static_cast<std::uint8_t>(v.flow.daddr >> 8),  static_cast<std::uint8_t>(v.flow.daddr)};
    EXPECT_EQ(toeplitz_hash(kMicrosoftRssKey, std::span<const std::uint8_t>(input)), v.ipv4_only);
  }
}

TEST(RssToeplitzTest, SwappingSourceAndDestinationChangesTheHash) {
  const FlowTuple fwd = kMsVectors[0].flow;
  const FlowTuple rev{fwd.daddr, fwd.saddr, fwd.dport, fwd.sport};
  EXPECT_NE(toeplitz_hash(kMicrosoftRssKey, fwd), toeplitz_hash(kMicrosoftRssKey, rev));
}

TEST(RssTest, HashUsesTheConfiguredKey) {
  const Rss ms(4);
  EXPECT_EQ(ms.hash(kMsVectors[2].flow), 0x5c2b394aU);
  std::array<std::uint8_t, 40> other = kMicrosoftRssKey;
  other[10] ^= 0xff;  // key bits 80..87 feed input bits 49..87
  const Rss custom(4, 128, other);
  EXPECT_NE(custom.hash(kMsVectors[2].flow), 0x5c2b394aU);
  EXPECT_EQ(custom.key().size(), 40U);
}

TEST(RssTest, DefaultIndirectionIsEthtoolRxfhIndirDefault) {
  const Rss rss(6, 128);
  ASSERT_EQ(rss.indirection().size(), 128U);
  for (std::size_t i = 0; i < 128; ++i)
    EXPECT_EQ(rss.indirection()[i], static_cast<int>(i % 6));
  EXPECT_EQ(ethtool_rxfh_indir_default(13, 4), 1U);
}

TEST(RssTest, QueueIsChosenByLowOrderSevenBitsOfHash) {
  const Rss rss(8);
  // 128 entries: only hash & 0x7f matters; with 8 queues entry k -> k % 8.
  EXPECT_EQ(rss.queue_of(std::uint32_t{130}), 2);
  EXPECT_EQ(rss.queue_of(std::uint32_t{0xFFFFFF80U + 5}), 5);
  EXPECT_EQ(rss.queue_of(std::uint32_t{0x12345678U}), rss.queue_of(std::uint32_t{0x12345678U & 0x7fU}));
}

TEST(RssTest, DefaultTableSpreadsRandomFlowsAcrossQueues) {
  constexpr int kQueues = 8;
  constexpr int kFlows = 1000;
  const Rss rss(kQueues);
  std::mt19937 gen(20240601U);  // raw mt19937 output is specified, so this is portable
  std::array<int, kQueues> count{};
  for (int i = 0; i < kFlows; ++i) {
    FlowTuple f;
    f.saddr = static_cast<std::uint32_t>(gen());
    f.daddr = ip(10, 0, 0, 1);
    f.sport = static_cast<std::uint16_t>(gen());
    f.dport = 5201;
    ++count[static_cast<std::size_t>(rss.queue_of(f))];
  }
  // Expected 125 per queue, binomial sd ~10.5: allow +-40 (about 4 sd) and a chi-square bound
  // (7 degrees of freedom, p = 0.001 -> 24.3).
  double chi2 = 0;
  for (int c : count) {
    EXPECT_GT(c, 85);
    EXPECT_LT(c, 165);
    chi2 += (c - 125.0) * (c - 125.0) / 125.0;
  }
  EXPECT_LT(chi2, 24.3);
}

TEST(RssTest, SetIndirectionIsHonoured) {
  Rss rss(4);
  std::vector<int> table(128, 3);
  table[7] = 1;
  rss.set_indirection(table);
  EXPECT_EQ(rss.indirection(), table);
  EXPECT_EQ(rss.queue_of(std::uint32_t{7}), 1);
  EXPECT_EQ(rss.queue_of(std::uint32_t{7 + 128}), 1);
  EXPECT_EQ(rss.queue_of(std::uint32_t{8}), 3);
  for (const MsVector& v : kMsVectors) {
    const int expected = (v.ipv4_tcp & 0x7f) == 7 ? 1 : 3;
    EXPECT_EQ(rss.queue_of(v.flow), expected);
  }
}

TEST(RssTest, SetIndirectionRejectsWrongSizeOrQueue) {
  Rss rss(4);
  EXPECT_THROW(rss.set_indirection(std::vector<int>(64, 0)), ConfigError);
  std::vector<int> bad(128, 0);
  bad[9] = 4;
  try {
    rss.set_indirection(bad);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "/indirection/9");
  }
  bad[9] = -1;
  EXPECT_THROW(rss.set_indirection(bad), ConfigError);
  // Rejected tables leave the old one in place.
  EXPECT_EQ(rss.indirection()[9], 1);
}

TEST(RssTest, ConstructorRejectsInvalidConfiguration) {
  EXPECT_THROW(Rss(0), ConfigError);
  EXPECT_THROW(Rss(4, 0), ConfigError);
  const std::array<std::uint8_t, 15> short_key{};
  EXPECT_THROW(Rss(4, 128, short_key), ConfigError);
}

TEST(RssTest, NonPowerOfTwoTableUsesModulo) {
  const Rss rss(3, 10);
  EXPECT_EQ(rss.table_size(), 10U);
  EXPECT_EQ(rss.queue_of(std::uint32_t{25}), rss.indirection()[5]);
}

}  // namespace
}  // namespace napisim
