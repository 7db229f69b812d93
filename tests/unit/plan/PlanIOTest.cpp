//===- PlanIOTest.cpp - writing and reading plan files ---------------------===//

#include "PlanFixtures.h"

#include "runtime/plan/Plan.h"
#include "runtime/plan/PlanFormat.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <chrono>
#include <fcntl.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace kiln::plan {
namespace {
using namespace kiln::plan::testing;
using runtime::StatusCode;
namespace fs = std::filesystem;

/// A fresh directory per test, removed afterwards.
class TempDir {
public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "kiln-plan-test-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string file(const std::string &name) const { return (fs::path(path_) / name).string(); }
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto &e : fs::directory_iterator(path_))
      names.push_back(e.path().filename().string());
    return names;
  }

private:
  std::string path_;
};

TEST(PlanIO, SamplePlanIsValid) {
  Status s = validatePlan(makeSamplePlan());
  EXPECT_TRUE(s.isOk()) << s.toString();
}

TEST(PlanIO, RoundTripKeepsEveryField) {
  Plan plan = makeSamplePlan();
  std::vector<uint8_t> bytes = serializePlan(plan);
  StatusOr<Plan> parsed = parsePlan(bytes, "sample");
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  EXPECT_EQ(parsed.value(), plan);
  // parsePlan copies: the weights must not point into `bytes`, which the caller may free.
  EXPECT_TRUE(parsed.value().weights.data() < bytes.data() || parsed.value().weights.data() >= bytes.data() + bytes.size());
  EXPECT_NE(parsed.value().weightsStorage, nullptr);
  // Re-encoding gives the same bytes: nothing was lost or normalized, not even float bits.
  EXPECT_EQ(serializePlan(parsed.value()), bytes);
}

TEST(PlanIO, RoundTripOfEmptyAndUnusualValues) {
  // No images or weights; odd strings; empty and scalar tensors; a gemm of bf16 operands into
  // f32; negative zero and a subnormal survive bit-exactly.
  Plan plan;
  plan.metadata.compilerVersion = std::string("0.1.0\0nul", 9);
  plan.metadata.model = "m\xc3\xa9odel \"q\".onnx";
  plan.metadata.arenaBytes = 256;
  plan.buffers = {{"", MemorySpace::Arena, 0, 0, DType::F32, {0, 5}},
                  {"b", MemorySpace::Arena, 0, 8, DType::F64, {}},
                  {"c", MemorySpace::Arena, 0, 8, DType::I64, {1}},
                  {"h", MemorySpace::Arena, 0, 2, DType::BF16, {1, 1}},
                  {"d", MemorySpace::Arena, 0, 4, DType::F32, {1, 1}}};
  plan.inputs = {{"empty", DType::F32, {0, 5}, 0}, {"scalar", DType::F64, {}, 1}};
  plan.outputs = {{"same", DType::I64, {1}, 2}};
  GemmStep g;
  g.m = g.n = g.k = 1;
  g.alpha = -0.0f;
  g.beta = 1e-45f;
  g.a = 3, g.b = 3, g.c = 4, g.d = 4;
  // Node names are bytes: empty, with a NUL, not UTF-8.
  plan.steps = {{"g", "kiln.gemm", {"", std::string("a\0b", 3), "\xff"}, g}};
  plan.metadata.cublasLtVersion = 130100;
  ASSERT_TRUE(validatePlan(plan).isOk()) << validatePlan(plan).toString();
  std::vector<uint8_t> bytes = serializePlan(plan);
  StatusOr<Plan> parsed = parsePlan(bytes);
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  EXPECT_EQ(parsed.value(), plan);
  EXPECT_TRUE(std::signbit(std::get<GemmStep>(parsed.value().steps[0].params).alpha));
  EXPECT_EQ(parsed.value().steps[0].nodes, (std::vector<std::string>{"", std::string("a\0b", 3), "\xff"}));
  EXPECT_EQ(serializePlan(parsed.value()), bytes);
  EXPECT_EQ(parsed.value().weights.size(), 0u);
}

TEST(PlanIO, SerializationIsDeterministic) {
  std::vector<uint8_t> first = serializePlan(makeSamplePlan());
  std::vector<uint8_t> second = serializePlan(makeSamplePlan()); // other allocations, same plan
  EXPECT_EQ(first, second);
  Plan plan = makeSamplePlan();
  EXPECT_EQ(serializePlan(plan), serializePlan(plan));
}

TEST(PlanIO, LayoutMatchesFormatDescription) {
  Plan plan = makeSamplePlan();
  std::vector<uint8_t> bytes = serializePlan(plan);
  EXPECT_EQ(std::string(bytes.begin(), bytes.begin() + 8), "KILNPLAN");
  EXPECT_EQ(read32(bytes, format::kVersionOffset), kFormatVersion);
  EXPECT_EQ(read32(bytes, format::kHeaderSizeOffset), format::kHeaderSize);
  EXPECT_EQ(read32(bytes, format::kSectionCountOffset), format::kSectionCount);
  EXPECT_EQ(read64(bytes, format::kFileSizeOffset), bytes.size());
  uint64_t expected = format::kFirstSectionOffset;
  for (uint32_t k = 1; k <= format::kSectionCount; ++k) {
    auto kind = static_cast<format::SectionKind>(k);
    EXPECT_EQ(read32(bytes, entryOffset(kind)), k);
    if (kind == format::SectionKind::Weights) {
      uint64_t aligned = (expected + kWeightsFileAlignment - 1) / kWeightsFileAlignment * kWeightsFileAlignment;
      for (uint64_t at = expected; at < aligned; ++at)
        ASSERT_EQ(bytes[at], 0) << "padding byte " << at;
      expected = aligned;
    }
    EXPECT_EQ(sectionOffset(bytes, kind), expected) << format::sectionName(kind);
    expected += sectionSize(bytes, kind);
  }
  EXPECT_EQ(expected, bytes.size());
  uint64_t weightsAt = sectionOffset(bytes, format::SectionKind::Weights);
  EXPECT_EQ(weightsAt % kWeightsFileAlignment, 0u);
  EXPECT_TRUE(std::equal(plan.weights.begin(), plan.weights.end(), bytes.begin() + weightsAt));
}

/// True when `address` lies in a mapping of `path` (per /proc/self/maps).
bool isMappedFrom(const void *address, const std::string &path) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  auto where = reinterpret_cast<uintptr_t>(address);
  std::string canonical = fs::canonical(path).string();
  while (std::getline(maps, line)) {
    std::istringstream fields(line);
    std::string range, perms, offset, dev, inode, file;
    fields >> range >> perms >> offset >> dev >> inode;
    std::getline(fields >> std::ws, file);
    size_t dash = range.find('-');
    uintptr_t lo = std::stoull(range.substr(0, dash), nullptr, 16), hi = std::stoull(range.substr(dash + 1), nullptr, 16);
    if (where >= lo && where < hi)
      return file == canonical;
  }
  return false;
}

TEST(PlanIO, WriteThenReadMapsTheWeights) {
  TempDir dir;
  std::string path = dir.file("sample.kiln");
  Plan plan = makeSamplePlan();
  Status written = writePlanFile(plan, path);
  ASSERT_TRUE(written.isOk()) << written.toString();
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"sample.kiln"}); // no temporary left behind

  StatusOr<Plan> read = readPlanFile(path);
  ASSERT_TRUE(read.isOk()) << read.status().toString();
  EXPECT_EQ(read.value(), plan);
  EXPECT_TRUE(isMappedFrom(read.value().weights.data(), path)) << "the weights were copied, not mapped";
  EXPECT_EQ(reinterpret_cast<uintptr_t>(read.value().weights.data()) % kWeightsFileAlignment, 0u);

  // The mapping belongs to the plan: it outlives the file's name and survives copies of the
  // plan after the original is gone.
  fs::remove(path);
  Plan copy;
  {
    Plan moved = std::move(read).value();
    copy = moved;
  }
  EXPECT_TRUE(std::equal(plan.weights.begin(), plan.weights.end(), copy.weights.begin(), copy.weights.end()));
}

TEST(PlanIO, WriteReplacesAnExistingFile) {
  TempDir dir;
  std::string path = dir.file("p.kiln");
  { std::ofstream(path) << "old contents"; }
  ASSERT_TRUE(writePlanFile(makeSamplePlan(), path).isOk());
  StatusOr<Plan> read = readPlanFile(path);
  ASSERT_TRUE(read.isOk()) << read.status().toString();
  EXPECT_EQ(dir.entries().size(), 1u);
}

// `kiln compile -o /dev/null` (or a pipe): the destination is written as it is, never renamed
// over; here a FIFO in the temporary directory, so a broken version cannot replace a device.
TEST(PlanIO, WriteIntoAPipeWritesThroughIt) {
  TempDir dir;
  std::string path = dir.file("pipe");
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  // The reader never blocks (a writer that renamed over the pipe would leave it waiting): it
  // reads until the writer has come and gone, for at most 10 s.
  std::string received;
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(fd, 0);
  std::thread reader([&] {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    char chunk[65536];
    while (std::chrono::steady_clock::now() < deadline) {
      ssize_t n = ::read(fd, chunk, sizeof chunk);
      if (n > 0)
        received.append(chunk, static_cast<size_t>(n));
      else if (n == 0 && !received.empty())
        break; // the writer closed its end
      else
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ::close(fd);
  });
  Status written = writePlanFile(makeSamplePlan(), path);
  reader.join();
  ASSERT_TRUE(written.isOk()) << written.toString();
  EXPECT_TRUE(fs::is_fifo(path)) << "the pipe was replaced by a file";
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"pipe"});
  std::string copy = dir.file("copy.kiln");
  ASSERT_TRUE(writePlanFile(makeSamplePlan(), copy).isOk());
  EXPECT_EQ(received.size(), fs::file_size(copy));
}

TEST(PlanIO, WriteOntoADirectoryFails) {
  TempDir dir;
  fs::create_directory(dir.file("d"));
  Status s = writePlanFile(makeSamplePlan(), dir.file("d"));
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("Is a directory"), std::string::npos) << s.message();
  EXPECT_TRUE(fs::is_directory(dir.file("d")));
}

TEST(PlanIO, WriteRefusesAnInvalidPlanAndLeavesNothing) {
  TempDir dir;
  std::string path = dir.file("bad.kiln");
  Plan plan = makeSamplePlan();
  plan.inputs[0].buffer = 99;
  Status s = writePlanFile(plan, path);
  EXPECT_EQ(s.code(), StatusCode::kInvalidPlan);
  EXPECT_NE(s.message().find("refusing to write plan '" + path + "'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("input 0 'x': buffer = 99 is not a buffer index"), std::string::npos) << s.message();
  EXPECT_TRUE(dir.entries().empty());
}

TEST(PlanIO, WriteIntoAMissingDirectoryFails) {
  TempDir dir;
  Status s = writePlanFile(makeSamplePlan(), dir.file("no/such/dir/p.kiln"));
  EXPECT_EQ(s.code(), StatusCode::kNotFound) << s.toString();
  EXPECT_NE(s.message().find("no/such/dir/p.kiln"), std::string::npos) << s.message();
}

TEST(PlanIO, ReadErrorsNameTheFile) {
  TempDir dir;
  StatusOr<Plan> missing = readPlanFile(dir.file("missing.kiln"));
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("missing.kiln"), std::string::npos);

  StatusOr<Plan> directory = readPlanFile(dir.file(""));
  EXPECT_FALSE(directory.isOk());
  EXPECT_NE(directory.status().message().find("not a regular file"), std::string::npos)
      << directory.status().message();

  std::string empty = dir.file("empty.kiln");
  { std::ofstream touch(empty); }
  StatusOr<Plan> emptyPlan = readPlanFile(empty);
  EXPECT_EQ(emptyPlan.status().code(), StatusCode::kInvalidPlan);
  EXPECT_NE(emptyPlan.status().message().find(empty + ": the file is empty, not a Kiln plan"), std::string::npos)
      << emptyPlan.status().message();

  std::string onnx = dir.file("model.onnx");
  { std::ofstream(onnx) << "\x08\x07\x12\x07pytorch"; }
  StatusOr<Plan> notPlan = readPlanFile(onnx);
  EXPECT_NE(notPlan.status().message().find(onnx + ": not a Kiln plan"), std::string::npos)
      << notPlan.status().message();
}

TEST(PlanIO, ReadOfADamagedFileReportsIt) {
  TempDir dir;
  std::string path = dir.file("damaged.kiln");
  std::vector<uint8_t> bytes = serializePlan(makeSamplePlan());
  bytes[sectionOffset(bytes, format::SectionKind::Weights) + 100] ^= 0x10;
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
  }
  StatusOr<Plan> read = readPlanFile(path);
  ASSERT_FALSE(read.isOk());
  EXPECT_NE(read.status().message().find(path + ": checksum mismatch in section 'weights'"), std::string::npos)
      << read.status().message();
}

} // namespace
} // namespace kiln::plan
