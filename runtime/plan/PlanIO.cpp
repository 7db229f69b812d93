//===- PlanIO.cpp - the plan file container: write, read, check ------------===//
//
// FORMAT.md describes the layout. The reader accepts exactly the bytes the writer produces for
// some plan: sections in their fixed order, back to back, zero padding only before the weights,
// every byte under a checksum or checked to be zero. That is what lets it promise that any
// single damaged bit is reported rather than loaded.
//
//===----------------------------------------------------------------------===//

#include "runtime/plan/AtomicFile.h"
#include "runtime/plan/Checksum.h"
#include "runtime/plan/Plan.h"
#include "runtime/plan/PlanFormat.h"
#include "runtime/plan/PlanSections.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kiln::plan {
namespace {
using format::SectionKind;
using runtime::StatusCode;

constexpr std::string_view kRecompile = "recompile the model with `kiln compile`";
constexpr std::string_view kDamaged =
    "the file is damaged (an incomplete copy or a storage error): copy it again or recompile the model with `kiln "
    "compile`";

uint32_t load32(std::span<const uint8_t> bytes, size_t at) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i)
    v |= uint32_t(bytes[at + i]) << (8 * i);
  return v;
}

uint64_t load64(std::span<const uint8_t> bytes, size_t at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i)
    v |= uint64_t(bytes[at + i]) << (8 * i);
  return v;
}

void store32(std::vector<uint8_t> &bytes, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    bytes[at + i] = static_cast<uint8_t>(v >> (8 * i));
}

void store64(std::vector<uint8_t> &bytes, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    bytes[at + i] = static_cast<uint8_t>(v >> (8 * i));
}

uint64_t alignUp(uint64_t value, uint64_t alignment) { return (value + alignment - 1) / alignment * alignment; }

/// The header checksum covers the header up to the checksum field and the section table.
uint32_t headerChecksum(std::span<const uint8_t> bytes) {
  uint32_t crc = crc32c(bytes.subspan(0, format::kHeaderChecksumOffset));
  return crc32c(bytes.subspan(format::kSectionTableOffset, format::kSectionCount * format::kSectionEntrySize), crc);
}

struct SectionRange {
  uint64_t offset = 0, size = 0;
};

Status invalidPlan(const std::string &origin, const std::string &what, std::string_view fix = kRecompile) {
  return Status(StatusCode::kInvalidPlan, origin + ": " + what + ": " + std::string(fix));
}

/// Magic, version, the header checksum and the file size, in the order that gives the most
/// useful message: a file that is not a plan, one from another kiln, damage inside the header,
/// and only then a file whose length disagrees with its (intact) header: a truncated copy.
Status checkHeader(std::span<const uint8_t> bytes, const std::string &origin) {
  std::string_view magic = format::kMagic;
  if (bytes.empty())
    return Status(StatusCode::kInvalidPlan, origin + ": the file is empty, not a Kiln plan: pass a file written by `kiln compile`");
  size_t prefix = std::min(bytes.size(), magic.size());
  if (std::memcmp(bytes.data(), magic.data(), prefix) != 0)
    return Status(StatusCode::kInvalidPlan,
                  origin + ": not a Kiln plan (it does not start with \"KILNPLAN\"): pass a file written by `kiln compile`");
  if (bytes.size() < format::kHeaderSize)
    return invalidPlan(origin, "the file is truncated: " + std::to_string(bytes.size()) + " bytes, the header alone has " +
                                   std::to_string(format::kHeaderSize), kDamaged);
  uint32_t version = load32(bytes, format::kVersionOffset);
  if (version != kFormatVersion)
    return Status(StatusCode::kInvalidPlan,
                  origin + ": unknown plan format version " + std::to_string(version) + "; this runtime reads version " +
                      std::to_string(kFormatVersion) + " only: recompile the model with the `kiln compile` that matches "
                      "this runtime (or load it with the runtime of the kiln that wrote it)");
  uint32_t headerSize = load32(bytes, format::kHeaderSizeOffset);
  uint32_t sectionCount = load32(bytes, format::kSectionCountOffset);
  uint32_t entrySize = load32(bytes, format::kSectionEntrySizeOffset);
  if (headerSize != format::kHeaderSize || sectionCount != format::kSectionCount ||
      entrySize != format::kSectionEntrySize)
    return invalidPlan(origin, "header says header size " + std::to_string(headerSize) + ", " +
                                   std::to_string(sectionCount) + " sections of " + std::to_string(entrySize) +
                                   " bytes; format version " + std::to_string(kFormatVersion) + " has " +
                                   std::to_string(format::kHeaderSize) + ", " + std::to_string(format::kSectionCount) +
                                   " and " + std::to_string(format::kSectionEntrySize), kDamaged);
  if (bytes.size() < format::kFirstSectionOffset)
    return invalidPlan(origin, "the file is truncated: " + std::to_string(bytes.size()) +
                                   " bytes, the header and section table have " +
                                   std::to_string(format::kFirstSectionOffset), kDamaged);
  if (headerChecksum(bytes) != load32(bytes, format::kHeaderChecksumOffset))
    return invalidPlan(origin, "checksum mismatch in the header", kDamaged);
  uint64_t fileSize = load64(bytes, format::kFileSizeOffset);
  if (bytes.size() < fileSize)
    return invalidPlan(origin, "the file is truncated: " + std::to_string(bytes.size()) + " of " +
                                   std::to_string(fileSize) + " bytes", kDamaged);
  if (bytes.size() > fileSize)
    return invalidPlan(origin, "size mismatch: the header says " + std::to_string(fileSize) + " bytes but there are " +
                                   std::to_string(bytes.size()), kDamaged);
  if (uint32_t flags = load32(bytes, format::kFlagsOffset))
    return invalidPlan(origin, "the header has flags " + std::to_string(flags) + " that format version " +
                                   std::to_string(kFormatVersion) + " does not define");
  return Status::ok();
}

/// The section table must describe the canonical layout (FORMAT.md): anything else is a file
/// this version did not write. Also checks that the padding before the weights is zero, since
/// no checksum covers it.
Status readSectionTable(std::span<const uint8_t> bytes, const std::string &origin,
                        std::array<SectionRange, format::kSectionCount> &ranges) {
  uint64_t expected = format::kFirstSectionOffset;
  for (uint32_t i = 0; i < format::kSectionCount; ++i) {
    size_t entry = format::kSectionTableOffset + i * format::kSectionEntrySize;
    auto kind = static_cast<SectionKind>(i + 1);
    std::string name(format::sectionName(kind));
    uint32_t storedKind = load32(bytes, entry + format::kEntryKindOffset);
    if (storedKind != i + 1)
      return invalidPlan(origin, "section table entry " + std::to_string(i) + " has kind " +
                                     std::to_string(storedKind) + ", expected " + std::to_string(i + 1) + " (" + name + ")");
    SectionRange &range = ranges[i];
    range.offset = load64(bytes, entry + format::kEntryOffsetOffset);
    range.size = load64(bytes, entry + format::kEntrySizeOffset);
    if (kind == SectionKind::Weights) {
      uint64_t padEnd = alignUp(expected, kWeightsFileAlignment);
      for (uint64_t at = expected; at < padEnd && at < bytes.size(); ++at)
        if (bytes[at] != 0)
          return invalidPlan(origin, "the padding before the weights has a non-zero byte at offset " + std::to_string(at),
                             kDamaged);
      expected = padEnd;
    }
    if (range.offset != expected || range.size > bytes.size() || range.offset > bytes.size() - range.size)
      return invalidPlan(origin, "section '" + name + "' has offset " + std::to_string(range.offset) + " and size " +
                                     std::to_string(range.size) + ", but it must start at " + std::to_string(expected) +
                                     " and end inside the " + std::to_string(bytes.size()) + "-byte file");
    expected = range.offset + range.size;
  }
  if (expected != bytes.size())
    return invalidPlan(origin, "the sections end at byte " + std::to_string(expected) + " but the file has " +
                                   std::to_string(bytes.size()));
  for (uint32_t i = 0; i < format::kSectionCount; ++i) {
    size_t entry = format::kSectionTableOffset + i * format::kSectionEntrySize;
    std::span<const uint8_t> body = bytes.subspan(ranges[i].offset, ranges[i].size);
    if (crc32c(body) != load32(bytes, entry + format::kEntryChecksumOffset))
      return invalidPlan(origin, "checksum mismatch in section '" +
                                     std::string(format::sectionName(static_cast<SectionKind>(i + 1))) + "' (bytes " +
                                     std::to_string(ranges[i].offset) + ".." +
                                     std::to_string(ranges[i].offset + ranges[i].size) + ")", kDamaged);
  }
  return Status::ok();
}

/// Decodes and validates `bytes`. The returned plan's `weights` views `bytes` and owns
/// nothing: the caller attaches the storage (a copy or the file mapping).
StatusOr<Plan> decodePlan(std::span<const uint8_t> bytes, const std::string &origin) {
  if (Status s = checkHeader(bytes, origin); !s.isOk())
    return s;
  std::array<SectionRange, format::kSectionCount> ranges;
  if (Status s = readSectionTable(bytes, origin, ranges); !s.isOk())
    return s;
  Plan plan;
  for (uint32_t i = 0; i + 1 < format::kSectionCount; ++i) {
    Status s = detail::decodeSection(static_cast<SectionKind>(i + 1), bytes.subspan(ranges[i].offset, ranges[i].size),
                                     plan);
    if (!s.isOk())
      return invalidPlan(origin, s.message());
  }
  const SectionRange &weights = ranges[format::kSectionCount - 1];
  plan.weights = bytes.subspan(weights.offset, weights.size);
  if (Status s = validatePlan(plan); !s.isOk())
    return Status(s.code(), origin + ": " + s.message());
  return plan;
}

/// Closes a descriptor on every path out of a function.
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0)
      ::close(fd);
  }
};

} // namespace

std::vector<uint8_t> serializePlan(const Plan &plan) {
  std::array<std::vector<uint8_t>, format::kSectionCount - 1> bodies;
  std::array<SectionRange, format::kSectionCount> ranges;
  uint64_t offset = format::kFirstSectionOffset;
  for (uint32_t i = 0; i + 1 < format::kSectionCount; ++i) {
    bodies[i] = detail::encodeSection(static_cast<SectionKind>(i + 1), plan);
    ranges[i] = {offset, bodies[i].size()};
    offset += bodies[i].size();
  }
  ranges.back() = {alignUp(offset, kWeightsFileAlignment), plan.weights.size()};
  uint64_t fileSize = ranges.back().offset + ranges.back().size;

  std::vector<uint8_t> out(fileSize, 0); // zeroed: the padding is part of the deterministic bytes
  std::memcpy(out.data(), format::kMagic.data(), format::kMagic.size());
  store32(out, format::kVersionOffset, kFormatVersion);
  store32(out, format::kHeaderSizeOffset, format::kHeaderSize);
  store32(out, format::kSectionCountOffset, format::kSectionCount);
  store32(out, format::kSectionEntrySizeOffset, format::kSectionEntrySize);
  store64(out, format::kFileSizeOffset, fileSize);
  store32(out, format::kFlagsOffset, 0);
  for (uint32_t i = 0; i < format::kSectionCount; ++i) {
    std::span<const uint8_t> body = i + 1 < format::kSectionCount ? std::span<const uint8_t>(bodies[i]) : plan.weights;
    if (!body.empty())
      std::memcpy(out.data() + ranges[i].offset, body.data(), body.size());
    size_t entry = format::kSectionTableOffset + i * format::kSectionEntrySize;
    store32(out, entry + format::kEntryKindOffset, i + 1);
    store32(out, entry + format::kEntryChecksumOffset, crc32c(body));
    store64(out, entry + format::kEntryOffsetOffset, ranges[i].offset);
    store64(out, entry + format::kEntrySizeOffset, ranges[i].size);
  }
  store32(out, format::kHeaderChecksumOffset, headerChecksum(out));
  return out;
}

Status writePlanFile(const Plan &plan, const std::string &path) {
  if (Status s = validatePlan(plan); !s.isOk())
    return Status(s.code(), "refusing to write plan '" + path + "': " + s.message());
  std::vector<uint8_t> bytes = serializePlan(plan);

  return writeFileAtomically(path, bytes, "plan");
}

StatusOr<Plan> parsePlan(std::span<const uint8_t> bytes, const std::string &origin) {
  StatusOr<Plan> decoded = decodePlan(bytes, origin);
  if (!decoded.isOk())
    return decoded.status();
  Plan plan = std::move(decoded).value();
  plan.setWeights(std::vector<uint8_t>(plan.weights.begin(), plan.weights.end()));
  return plan;
}

StatusOr<Plan> readPlanFile(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return ioError("cannot open plan", path, errno);
  FdCloser closer{fd};
  struct stat info;
  if (::fstat(fd, &info) != 0)
    return ioError("cannot stat plan", path, errno);
  if (!S_ISREG(info.st_mode))
    return Status(StatusCode::kInvalidArgument, "plan '" + path + "' is not a regular file");
  auto size = static_cast<size_t>(info.st_size);
  if (size == 0)
    return decodePlan({}, path).status(); // mmap cannot map nothing; the decoder names the problem

  // The mapping stays for the plan's lifetime: the weights are read from it when the engine
  // uploads them. (A file truncated by someone else while mapped would fault on access, as with
  // any mmapped file; kiln writes plans by rename, so its own writes never do that.)
  void *address = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (address == MAP_FAILED)
    return ioError("cannot memory-map plan", path, errno);
  std::shared_ptr<const void> mapping(address, [size](const void *p) { ::munmap(const_cast<void *>(p), size); });
  StatusOr<Plan> decoded = decodePlan(std::span<const uint8_t>(static_cast<const uint8_t *>(address), size), path);
  if (!decoded.isOk())
    return decoded.status();
  Plan plan = std::move(decoded).value();
  plan.weightsStorage = std::move(mapping);
  return plan;
}

} // namespace kiln::plan
