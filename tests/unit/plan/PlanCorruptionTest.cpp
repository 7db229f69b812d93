//===- PlanCorruptionTest.cpp - damaged and hostile plan files -------------===//
//
// The reader must turn every damaged file into an error: a flipped bit anywhere, a file cut
// short at any length, and (behind valid checksums, i.e. a buggy or hostile writer) lengths
// and tags that make no sense. None of it may crash or allocate far more than the file holds.
//
//===----------------------------------------------------------------------===//

#include "PlanFixtures.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

// The largest single allocation while gTrackAllocations is set: the garbage-length tests check
// that the decoder's allocations stay within a small multiple of the file size. Replacing the
// global operator new is the only way to see allocations made inside std containers.
namespace {
std::atomic<bool> gTrackAllocations{false};
std::atomic<size_t> gLargestAllocation{0};
} // namespace

void *operator new(size_t size) {
  if (gTrackAllocations.load(std::memory_order_relaxed)) {
    size_t seen = gLargestAllocation.load(std::memory_order_relaxed);
    while (size > seen && !gLargestAllocation.compare_exchange_weak(seen, size))
      ;
  }
  if (void *p = std::malloc(size ? size : 1))
    return p;
  throw std::bad_alloc();
}
void operator delete(void *p) noexcept { std::free(p); }
void operator delete(void *p, size_t) noexcept { std::free(p); }

namespace kiln::plan {
namespace {
using namespace kiln::plan::testing;
using format::SectionKind;
using runtime::StatusCode;

std::string parseError(const std::vector<uint8_t> &bytes) {
  StatusOr<Plan> parsed = parsePlan(bytes, "bad.kiln");
  if (parsed.isOk())
    return "";
  EXPECT_EQ(parsed.status().message().rfind("bad.kiln: ", 0), 0u) << parsed.status().message();
  return parsed.status().message();
}

/// Expects parsePlan to reject `bytes` with a message containing `substring`.
void expectParseError(const std::vector<uint8_t> &bytes, const std::string &substring) {
  std::string message = parseError(bytes);
  EXPECT_NE(message, "") << "the damaged file was accepted";
  EXPECT_NE(message.find(substring), std::string::npos) << message;
}
#define EXPECT_PARSE_ERROR(bytes, substring)                                                                         \
  do {                                                                                                               \
    SCOPED_TRACE("EXPECT_PARSE_ERROR");                                                                               \
    expectParseError(bytes, substring);                                                                              \
  } while (0)

TEST(PlanCorruption, EverySingleBitFlipIsAnError) {
  const std::vector<uint8_t> good = serializePlan(makeSamplePlan());
  ASSERT_TRUE(parsePlan(good).isOk());
  std::vector<uint8_t> bytes = good;
  size_t accepted = 0;
  for (size_t byte = 0; byte < bytes.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      bytes[byte] ^= static_cast<uint8_t>(1u << bit);
      StatusOr<Plan> parsed = parsePlan(bytes);
      if (parsed.isOk() && accepted++ < 10) {
        ADD_FAILURE() << "flipping bit " << bit << " of byte " << byte << " was not detected";
      }
      bytes[byte] ^= static_cast<uint8_t>(1u << bit);
    }
  }
  EXPECT_EQ(accepted, 0u);
}

TEST(PlanCorruption, EveryTruncationIsAnError) {
  const std::vector<uint8_t> good = serializePlan(makeSamplePlan());
  for (size_t length = 0; length < good.size(); ++length) {
    std::vector<uint8_t> cut(good.begin(), good.begin() + length);
    StatusOr<Plan> parsed = parsePlan(cut);
    ASSERT_FALSE(parsed.isOk()) << "a file cut to " << length << " bytes was accepted";
    const std::string &m = parsed.status().message();
    if (length >= 8) // the magic is complete: the message must say the file is short
      EXPECT_NE(m.find("truncated"), std::string::npos) << length << ": " << m;
  }
  std::vector<uint8_t> cut(good.begin(), good.begin() + 1000);
  EXPECT_PARSE_ERROR(cut, "the file is truncated: 1000 of " + std::to_string(good.size()) + " bytes");
}

TEST(PlanCorruption, WrongMagic) {
  std::vector<uint8_t> bytes = serializePlan(makeSamplePlan());
  bytes[3] = 'X';
  EXPECT_PARSE_ERROR(bytes, "not a Kiln plan (it does not start with \"KILNPLAN\")");
  EXPECT_PARSE_ERROR((std::vector<uint8_t>{'K', 'I', 'L'}), "the file is truncated: 3 bytes");
  EXPECT_PARSE_ERROR((std::vector<uint8_t>{'P', 'K', 3, 4}), "not a Kiln plan");
}

TEST(PlanCorruption, UnknownFormatVersion) {
  std::vector<uint8_t> bytes = serializePlan(makeSamplePlan());
  write32(bytes, format::kVersionOffset, 10);
  resealPlanBytes(bytes); // a well-formed file from a future kiln
  StatusOr<Plan> parsed = parsePlan(bytes, "future.kiln");
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidPlan);
  EXPECT_EQ(parsed.status().message(),
            "future.kiln: unknown plan format version 10; this runtime reads version 9 only: recompile the model with "
            "the `kiln compile` that matches this runtime (or load it with the runtime of the kiln that wrote it)");
  // Files of earlier formats (8: convolutions without an int8 residual; 7: convolutions without INT8 scales; 6: gemms without scaleD; 5: metadata without per-node precision; 4: steps without their ONNX values; 3: convolutions without
  // layout and epilogue; 2: steps without their ONNX nodes; 1: before per-buffer types) are
  // refused the same way.
  for (uint32_t old : {8u, 7u, 6u, 5u, 4u, 3u, 2u, 1u}) {
    write32(bytes, format::kVersionOffset, old);
    resealPlanBytes(bytes);
    EXPECT_PARSE_ERROR(bytes, "unknown plan format version " + std::to_string(old) +
                                  "; this runtime reads version 9 only");
  }
}

TEST(PlanCorruption, SizeMismatch) {
  std::vector<uint8_t> bytes = serializePlan(makeSamplePlan());
  size_t size = bytes.size();
  bytes.push_back(0);
  EXPECT_PARSE_ERROR(bytes, "size mismatch: the header says " + std::to_string(size) + " bytes but there are " +
                                std::to_string(size + 1));
}

TEST(PlanCorruption, ChecksumMismatchNamesTheSection) {
  const std::vector<uint8_t> good = serializePlan(makeSamplePlan());
  for (uint32_t k = 1; k <= format::kSectionCount; ++k) {
    auto kind = static_cast<SectionKind>(k);
    std::vector<uint8_t> bytes = good;
    uint64_t offset = sectionOffset(bytes, kind), size = sectionSize(bytes, kind);
    bytes[offset + size / 2] ^= 0x01;
    EXPECT_PARSE_ERROR(bytes, "checksum mismatch in section '" + std::string(format::sectionName(kind)) +
                                  "' (bytes " + std::to_string(offset) + ".." + std::to_string(offset + size) + ")");
    EXPECT_PARSE_ERROR(bytes, "copy it again or recompile the model with `kiln compile`");
  }
  std::vector<uint8_t> bytes = good;
  bytes[format::kSectionTableOffset + 30] ^= 0x80;
  EXPECT_PARSE_ERROR(bytes, "checksum mismatch in the header");
}

TEST(PlanCorruption, NonCanonicalLayoutBehindValidChecksums) {
  const std::vector<uint8_t> good = serializePlan(makeSamplePlan());

  std::vector<uint8_t> padding = good; // the zero padding before the weights has no checksum
  padding[sectionOffset(good, SectionKind::Weights) - 1] = 1;
  EXPECT_PARSE_ERROR(padding, "the padding before the weights has a non-zero byte at offset " +
                                  std::to_string(sectionOffset(good, SectionKind::Weights) - 1));

  std::vector<uint8_t> swapped = good; // section kinds out of order
  write32(swapped, entryOffset(SectionKind::Steps), 5);
  resealPlanBytes(swapped);
  EXPECT_PARSE_ERROR(swapped, "section table entry 3 has kind 5, expected 4 (steps)");

  std::vector<uint8_t> gap = good; // a section that does not start where the previous one ends
  write64(gap, entryOffset(SectionKind::Buffers) + format::kEntryOffsetOffset,
          sectionOffset(good, SectionKind::Buffers) + 1);
  write32(gap, format::kHeaderChecksumOffset, 0);
  resealPlanBytes(gap);
  EXPECT_PARSE_ERROR(gap, "section 'buffers' has offset");

  std::vector<uint8_t> huge = good; // a size that runs past the end of the file
  write64(huge, entryOffset(SectionKind::Weights) + format::kEntrySizeOffset, ~uint64_t(0) - 10);
  write32(huge, format::kHeaderChecksumOffset, 0);
  uint32_t crc = crc32c(std::span<const uint8_t>(huge.data(), format::kHeaderChecksumOffset));
  crc = crc32c(std::span<const uint8_t>(huge.data() + format::kSectionTableOffset,
                                        format::kSectionCount * format::kSectionEntrySize), crc);
  write32(huge, format::kHeaderChecksumOffset, crc);
  EXPECT_PARSE_ERROR(huge, "section 'weights' has offset");

  std::vector<uint8_t> flags = good;
  write32(flags, format::kFlagsOffset, 4);
  resealPlanBytes(flags);
  EXPECT_PARSE_ERROR(flags, "the header has flags 4 that format version 9 does not define");

  std::vector<uint8_t> header = good;
  write32(header, format::kHeaderSizeOffset, 48);
  resealPlanBytes(header);
  EXPECT_PARSE_ERROR(header, "header says header size 48, 6 sections of 24 bytes");
}

/// A plan whose steps section is just one copy step with empty strings and no nodes, so that
/// field offsets inside the section are easy to compute: u64 count, u64 name length, u64 op
/// length, u64 nodes count, u8 tag, u32 src, u32 dst, u64 bytes: 49 bytes.
Plan oneCopyPlan() {
  Plan plan;
  plan.metadata.arenaBytes = 512;
  plan.buffers = {{"a", MemorySpace::Arena, 0, 256, DType::F32, {8, 8}},
                  {"b", MemorySpace::Arena, 256, 256, DType::F32, {8, 8}}};
  plan.steps = {{"", "", {}, CopyStep{0, 1, 256}}};
  return plan;
}
constexpr size_t kStepCountAt = 0, kNameLengthAt = 8, kNodesCountAt = 24, kTagAt = 32;

std::vector<uint8_t> withStepsField(const Plan &plan, size_t at, uint64_t value, size_t width) {
  std::vector<uint8_t> bytes = serializePlan(plan);
  size_t where = sectionOffset(bytes, SectionKind::Steps) + at;
  if (width == 8)
    write64(bytes, where, value);
  else
    bytes[where] = static_cast<uint8_t>(value);
  resealPlanBytes(bytes);
  return bytes;
}

TEST(PlanCorruption, GarbageLengthsDoNotAllocate) {
  Plan plan = oneCopyPlan();
  ASSERT_TRUE(parsePlan(serializePlan(plan)).isOk());
  struct Case {
    size_t at;
    uint64_t value;
    const char *message;
  } cases[] = {
      {kStepCountAt, uint64_t(1) << 60, "section 'steps' is malformed at byte 0: step count says 1152921504606846976 "
                                        "elements of at least 41 bytes, but only 57 bytes are left"},
      {kStepCountAt, ~uint64_t(0), "step count says 18446744073709551615 elements"},
      {kStepCountAt, 2, "step count says 2 elements of at least 41 bytes, but only 57 bytes are left"},
      {kNameLengthAt, uint64_t(1) << 40, "(in step 0 '') at byte 8: name says 1099511627776 elements of at least 1 bytes, but only 49"},
      {kNodesCountAt, uint64_t(1) << 58, "(in step 0 '') at byte 24: nodes says 288230376151711744 elements of at "
                                         "least 8 bytes, but only 33 bytes are left"},
      {kNodesCountAt, 5, "nodes says 5 elements of at least 8 bytes, but only 33 bytes are left"},
  };
  for (const Case &c : cases) {
    std::vector<uint8_t> bytes = withStepsField(plan, c.at, c.value, 8);
    gLargestAllocation = 0;
    gTrackAllocations = true;
    std::string message = parseError(bytes);
    gTrackAllocations = false;
    EXPECT_NE(message.find(c.message), std::string::npos) << message;
    EXPECT_NE(message.find("recompile the model with `kiln compile`"), std::string::npos) << message;
    EXPECT_LT(gLargestAllocation.load(), 64 * bytes.size()) << message;
  }

  // The same in every vector of a bigger plan: a huge length in front of the first shape.
  Plan sample = makeSamplePlan();
  std::vector<uint8_t> bytes = serializePlan(sample);
  size_t tensors = sectionOffset(bytes, SectionKind::Tensors);
  // inputs count (8), name length (8), "x" (1), dtype (1), then the shape length.
  write64(bytes, tensors + 18, uint64_t(1) << 61);
  resealPlanBytes(bytes);
  gLargestAllocation = 0;
  gTrackAllocations = true;
  std::string message = parseError(bytes);
  gTrackAllocations = false;
  EXPECT_NE(message.find("section 'tensors' is malformed (in input 0 'x') at byte 18: shape says 2305843009213693952 "
                         "elements of at least 8 bytes"),
            std::string::npos)
      << message;
  EXPECT_LT(gLargestAllocation.load(), 64 * bytes.size());
}

TEST(PlanCorruption, UnknownStepKindAndBadBoolean) {
  Plan plan = oneCopyPlan();
  EXPECT_PARSE_ERROR(withStepsField(plan, kTagAt, 9, 1),
                     "section 'steps' is malformed (in step 0 '') at byte 33: unknown step kind 9 (this kiln knows "
                     "1=kernel, 2=gemm, 3=conv, 4=copy, 5=attention)");

  Plan gemm = oneCopyPlan();
  GemmStep g;
  g.m = g.n = g.k = 8;
  g.a = 0, g.b = 0, g.d = 1;
  gemm.steps = {{"", "", {}, g}};
  gemm.metadata.cublasLtVersion = 130100;
  ASSERT_TRUE(parsePlan(serializePlan(gemm)).isOk());
  // tag, math, batch, m, n, k (4 x 8 bytes), then transA.
  EXPECT_PARSE_ERROR(withStepsField(gemm, kTagAt + 2 + 32, 2, 1), "transA is 2, not a boolean (0 or 1)");
}

TEST(PlanCorruption, TrailingBytesInASection) {
  std::vector<uint8_t> bytes = serializePlan(oneCopyPlan());
  // Claim one step fewer: the copy step's bytes are left over.
  write64(bytes, sectionOffset(bytes, SectionKind::Steps), 0);
  resealPlanBytes(bytes);
  EXPECT_PARSE_ERROR(bytes, "section 'steps' is malformed at byte 8: 57 bytes are left over after the last element");
}

TEST(PlanCorruption, RandomGarbageNeverCrashes) {
  // Deterministic pseudo-random edits behind valid checksums: whatever the decoder and
  // validator make of them, they must return (an error or a plan that validates).
  const std::vector<uint8_t> good = serializePlan(makeSamplePlan());
  uint64_t state = 0x9E3779B97F4A7C15ull;
  auto next = [&] {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    return state;
  };
  uint64_t firstSection = format::kFirstSectionOffset, weights = sectionOffset(good, SectionKind::Weights);
  for (int round = 0; round < 3000; ++round) {
    std::vector<uint8_t> bytes = good;
    for (int edits = 1 + next() % 4; edits > 0; --edits)
      bytes[firstSection + next() % (weights - firstSection)] = static_cast<uint8_t>(next());
    resealPlanBytes(bytes);
    StatusOr<Plan> parsed = parsePlan(bytes);
    if (parsed.isOk()) {
      EXPECT_TRUE(validatePlan(parsed.value()).isOk());
    }
  }
}

} // namespace
} // namespace kiln::plan
