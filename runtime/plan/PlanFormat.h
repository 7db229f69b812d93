//===- PlanFormat.h - byte layout of a plan file ---------------*- C++ -*-===//
//
// The constants of the container described in FORMAT.md, shared by the reader, the writer and
// the tests that build damaged files on purpose. Nothing outside runtime/plan (and its tests)
// should need this header: everyone else goes through Plan.h.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_PLAN_PLANFORMAT_H
#define KILN_RUNTIME_PLAN_PLANFORMAT_H

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace kiln::plan::format {

inline constexpr std::string_view kMagic = "KILNPLAN"; // 8 bytes, no terminator in the file

// The fixed header, all fields little-endian. Magic and version stay at these offsets in every
// future version so that any reader can say "wrong version" instead of "corrupt".
inline constexpr size_t kMagicOffset = 0;
inline constexpr size_t kVersionOffset = 8;           // u32 kFormatVersion
inline constexpr size_t kHeaderSizeOffset = 12;       // u32 kHeaderSize
inline constexpr size_t kSectionCountOffset = 16;     // u32 kSectionCount
inline constexpr size_t kSectionEntrySizeOffset = 20; // u32 kSectionEntrySize
inline constexpr size_t kFileSizeOffset = 24;         // u64 total file bytes
inline constexpr size_t kFlagsOffset = 32;            // u32, 0 (no flags are defined)
inline constexpr size_t kHeaderChecksumOffset = 36;   // u32 CRC-32C of [0,36) + section table
inline constexpr uint32_t kHeaderSize = 40;

// One section table entry: u32 kind, u32 CRC-32C of the section bytes, u64 offset, u64 size.
inline constexpr size_t kEntryKindOffset = 0;
inline constexpr size_t kEntryChecksumOffset = 4;
inline constexpr size_t kEntryOffsetOffset = 8;
inline constexpr size_t kEntrySizeOffset = 16;
inline constexpr uint32_t kSectionEntrySize = 24;

/// Section kinds, also their order in the file. A file holds each exactly once.
enum class SectionKind : uint32_t {
  Metadata = 1,
  Tensors = 2,
  Buffers = 3,
  Steps = 4,
  Images = 5,
  Weights = 6, // raw bytes at a kWeightsFileAlignment-aligned offset
};
inline constexpr uint32_t kSectionCount = 6;
inline constexpr size_t kSectionTableOffset = kHeaderSize;
inline constexpr size_t kFirstSectionOffset = kHeaderSize + kSectionCount * kSectionEntrySize;

inline std::string_view sectionName(SectionKind kind) {
  switch (kind) {
  case SectionKind::Metadata: return "metadata";
  case SectionKind::Tensors: return "tensors";
  case SectionKind::Buffers: return "buffers";
  case SectionKind::Steps: return "steps";
  case SectionKind::Images: return "images";
  case SectionKind::Weights: return "weights";
  }
  return "unknown";
}

} // namespace kiln::plan::format

#endif // KILN_RUNTIME_PLAN_PLANFORMAT_H
