//===- Checksum.cpp - CRC-32C, hardware and slicing-by-8 -------------------===//

#include "runtime/plan/Checksum.h"

#include <array>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <nmmintrin.h>
#define KILN_CRC32C_X86 1
#endif

namespace kiln::plan {
namespace {

/// Reflected Castagnoli polynomial 0x1EDC6F41.
constexpr uint32_t kPolynomial = 0x82F63B78u;

/// Table k maps a byte to its CRC contribution when it is followed by k more bytes, so eight
/// lookups process eight bytes at once (Intel's "slicing-by-8").
constexpr std::array<std::array<uint32_t, 256>, 8> makeTables() {
  std::array<std::array<uint32_t, 256>, 8> tables{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit)
      crc = (crc >> 1) ^ ((crc & 1u) ? kPolynomial : 0u);
    tables[0][i] = crc;
  }
  for (size_t k = 1; k < 8; ++k)
    for (uint32_t i = 0; i < 256; ++i)
      tables[k][i] = (tables[k - 1][i] >> 8) ^ tables[0][tables[k - 1][i] & 0xFFu];
  return tables;
}
constexpr auto kTables = makeTables();

uint32_t loadLittle32(const uint8_t *p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

/// Runs on the inverted register (the caller does the pre- and post-inversion).
uint32_t updatePortable(uint32_t crc, const uint8_t *p, size_t n) {
  for (; n >= 8; p += 8, n -= 8) {
    uint32_t lo = loadLittle32(p) ^ crc;
    uint32_t hi = loadLittle32(p + 4);
    crc = kTables[7][lo & 0xFF] ^ kTables[6][(lo >> 8) & 0xFF] ^ kTables[5][(lo >> 16) & 0xFF] ^
          kTables[4][lo >> 24] ^ kTables[3][hi & 0xFF] ^ kTables[2][(hi >> 8) & 0xFF] ^
          kTables[1][(hi >> 16) & 0xFF] ^ kTables[0][hi >> 24];
  }
  for (; n > 0; ++p, --n)
    crc = (crc >> 8) ^ kTables[0][(crc ^ *p) & 0xFF];
  return crc;
}

#ifdef KILN_CRC32C_X86
__attribute__((target("sse4.2"))) uint32_t updateSse42(uint32_t crc, const uint8_t *p, size_t n) {
  uint64_t wide = crc;
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8); // x86 is little-endian, as the CRC's byte order requires
    wide = _mm_crc32_u64(wide, word);
  }
  uint32_t narrow = static_cast<uint32_t>(wide);
  for (; n > 0; ++p, --n)
    narrow = _mm_crc32_u8(narrow, *p);
  return narrow;
}

bool hasSse42() {
  static const bool has = __builtin_cpu_supports("sse4.2");
  return has;
}
#endif

} // namespace

uint32_t crc32cPortable(std::span<const uint8_t> data, uint32_t crc) {
  return ~updatePortable(~crc, data.data(), data.size());
}

uint32_t crc32c(std::span<const uint8_t> data, uint32_t crc) {
#ifdef KILN_CRC32C_X86
  if (hasSse42())
    return ~updateSse42(~crc, data.data(), data.size());
#endif
  return crc32cPortable(data, crc);
}

} // namespace kiln::plan
