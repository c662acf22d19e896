// napisim: SHA-256 (FIPS 180-4); see sha256.hpp.
#include "sim/core/sha256.hpp"

#include <cstdio>

namespace napisim {

void Sha256::update(std::string_view data) {
  bits_ += static_cast<std::uint64_t>(data.size()) * 8;
  for (const char c : data) {
    block_[fill_++] = static_cast<unsigned char>(c);
    if (fill_ == 64) compress();
  }
}

std::string Sha256::hex() {
  const std::uint64_t bits = bits_;
  block_[fill_++] = 0x80;
  if (fill_ > 56) {
    while (fill_ < 64)
      block_[fill_++] = 0;
    compress();
  }
  while (fill_ < 56)
    block_[fill_++] = 0;
  for (int i = 7; i >= 0; --i)
    block_[fill_++] = static_cast<unsigned char>((bits >> (8 * i)) & 0xff);
  compress();
  std::string out;
  char buf[9];
  for (std::uint32_t v : h_) {
    std::snprintf(buf, sizeof buf, "%08x", v);
    out += buf;
  }
  return out;
}

void Sha256::compress() {
  static constexpr std::array<std::uint32_t, 64> k = {
      0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
      0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
      0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
      0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
      0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
      0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
      0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
      0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
  auto rotr = [](std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); };
  std::array<std::uint32_t, 64> w{};
  for (std::size_t i = 0; i < 16; ++i)
    w[i] = (static_cast<std::uint32_t>(block_[4 * i]) << 24) | (static_cast<std::uint32_t>(block_[4 * i + 1]) << 16) |
           (static_cast<std::uint32_t>(block_[4 * i + 2]) << 8) | static_cast<std::uint32_t>(block_[4 * i + 3]);
  for (std::size_t i = 16; i < 64; ++i) {
    const std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    const std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  auto a = h_;
  for (std::size_t i = 0; i < 64; ++i) {
    const std::uint32_t s1 = rotr(a[4], 6) ^ rotr(a[4], 11) ^ rotr(a[4], 25);
    const std::uint32_t ch = (a[4] & a[5]) ^ (~a[4] & a[6]);
    const std::uint32_t t1 = a[7] + s1 + ch + k[i] + w[i];
    const std::uint32_t s0 = rotr(a[0], 2) ^ rotr(a[0], 13) ^ rotr(a[0], 22);
    const std::uint32_t maj = (a[0] & a[1]) ^ (a[0] & a[2]) ^ (a[1] & a[2]);
    const std::uint32_t t2 = s0 + maj;
    a = {t1 + t2, a[0], a[1], a[2], a[3] + t1, a[4], a[5], a[6]};
  }
  for (std::size_t i = 0; i < 8; ++i)
    h_[i] += a[i];
  fill_ = 0;
}

std::string sha256_hex(std::string_view data) {
  Sha256 sha;
  sha.update(data);
  return sha.hex();
}

}  // namespace napisim
