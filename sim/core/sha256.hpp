// napisim: SHA-256 (FIPS 180-4), for provenance hashes (results' scenario_sha256, the files a
// scenario names). Incremental, so that a large trace is hashed as it is read instead of held in
// memory.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace napisim {

class Sha256 {
 public:
  void update(std::string_view data);
  /// The digest as 64 hex digits; the object is spent afterwards.
  std::string hex();

 private:
  void compress();

  std::array<std::uint32_t, 8> h_ = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                     0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::array<unsigned char, 64> block_{};
  std::size_t fill_ = 0;
  std::uint64_t bits_ = 0;
};

/// Hex SHA-256 of a string.
std::string sha256_hex(std::string_view data);

}  // namespace napisim
