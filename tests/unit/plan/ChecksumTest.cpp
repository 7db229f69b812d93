//===- ChecksumTest.cpp - CRC-32C ------------------------------------------===//

#include "runtime/plan/Checksum.h"

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

namespace kiln::plan {
namespace {

std::span<const uint8_t> bytesOf(std::string_view s) {
  return {reinterpret_cast<const uint8_t *>(s.data()), s.size()};
}

TEST(Checksum, KnownVectors) {
  // The CRC-32C check value and the iSCSI test vectors of RFC 3720, appendix B.4.
  std::vector<uint8_t> zeros(32, 0), ones(32, 0xFF), increasing(32), decreasing(32);
  for (int i = 0; i < 32; ++i)
    increasing[i] = static_cast<uint8_t>(i), decreasing[i] = static_cast<uint8_t>(31 - i);
  for (auto crc : {&crc32c, &crc32cPortable}) {
    EXPECT_EQ(crc(bytesOf("123456789"), 0), 0xE3069283u);
    EXPECT_EQ(crc(zeros, 0), 0x8A9136AAu);
    EXPECT_EQ(crc(ones, 0), 0x62A8AB43u);
    EXPECT_EQ(crc(increasing, 0), 0x46DD794Eu);
    EXPECT_EQ(crc(decreasing, 0), 0x113FDB5Cu);
    EXPECT_EQ(crc({}, 0), 0u);
  }
}

TEST(Checksum, HardwareAndPortableAgreeAtEveryLengthAndAlignment) {
  std::vector<uint8_t> data(1100);
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = static_cast<uint8_t>(i * 2654435761u >> 13);
  for (size_t start = 0; start < 9; ++start)
    for (size_t length = 0; start + length <= data.size(); length += (length < 40 ? 1 : 37)) {
      std::span<const uint8_t> part(data.data() + start, length);
      ASSERT_EQ(crc32c(part), crc32cPortable(part)) << "start " << start << " length " << length;
    }
}

TEST(Checksum, ChainsOverPieces) {
  std::string_view text = "The plan file is checksummed in pieces: the header, then the section table.";
  uint32_t whole = crc32c(bytesOf(text));
  for (size_t split = 0; split <= text.size(); ++split) {
    EXPECT_EQ(crc32c(bytesOf(text.substr(split)), crc32c(bytesOf(text.substr(0, split)))), whole);
    EXPECT_EQ(crc32cPortable(bytesOf(text.substr(split)), crc32cPortable(bytesOf(text.substr(0, split)))), whole);
  }
}

TEST(Checksum, DetectsEverySingleBitFlip) {
  std::vector<uint8_t> data(256);
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = static_cast<uint8_t>(i * 37);
  uint32_t reference = crc32c(data);
  for (size_t bit = 0; bit < data.size() * 8; ++bit) {
    data[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    EXPECT_NE(crc32c(data), reference) << "bit " << bit;
    data[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
  }
}

} // namespace
} // namespace kiln::plan
