//===- ExternalDataTest.cpp - Tests for safe ONNX external data loading ---===//

#include "frontend/ExternalData.h"

#include "onnx/onnx.pb.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

using kiln::frontend::expectedTensorBytes;
using kiln::frontend::onnxElementByteSize;
using kiln::frontend::readExternalData;

namespace {

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;
constexpr int32_t kInt64 = onnx::TensorProto::INT64;

using KeyValues = std::vector<std::pair<std::string, std::string>>;

class ExternalDataTest : public ::testing::Test {
protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kiln-extdata-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr) << std::strerror(errno);
    dir_ = tmpl;
  }

  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec); // Does not follow symbolic links.
  }

  std::string path(const std::string &rel) const { return dir_ + "/" + rel; }

  void writeFile(const std::string &rel, const std::string &bytes) {
    std::ofstream out(path(rel), std::ios::binary | std::ios::trunc);
    ASSERT_TRUE(out) << "cannot create " << path(rel);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    ASSERT_TRUE(out.good());
  }

  void makeDir(const std::string &rel) {
    ASSERT_EQ(::mkdir(path(rel).c_str(), 0755), 0) << std::strerror(errno);
  }

  void makeSymlink(const std::string &target, const std::string &rel) {
    ASSERT_EQ(::symlink(target.c_str(), path(rel).c_str()), 0) << std::strerror(errno);
  }

  static onnx::TensorProto tensor(const std::string &name, std::initializer_list<int64_t> dims,
                                  int32_t dataType, const KeyValues &externalData) {
    onnx::TensorProto t;
    t.set_name(name);
    for (int64_t d : dims)
      t.add_dims(d);
    t.set_data_type(dataType);
    t.set_data_location(onnx::TensorProto::EXTERNAL);
    for (const auto &[key, value] : externalData) {
      onnx::StringStringEntryProto *entry = t.add_external_data();
      entry->set_key(key);
      entry->set_value(value);
    }
    return t;
  }

  /// Runs readExternalData and returns its error message; records a test failure on success.
  std::string errorOf(const onnx::TensorProto &t) {
    llvm::Expected<std::vector<char>> result = readExternalData(dir_, t);
    if (result) {
      ADD_FAILURE() << "expected an error, got " << result->size() << " bytes";
      return "";
    }
    return llvm::toString(result.takeError());
  }

  /// Runs readExternalData and returns the bytes; records a test failure on error.
  std::vector<char> bytesOf(const onnx::TensorProto &t) {
    llvm::Expected<std::vector<char>> result = readExternalData(dir_, t);
    if (!result) {
      ADD_FAILURE() << "unexpected error: " << llvm::toString(result.takeError());
      return {};
    }
    return std::move(*result);
  }

  std::string dir_;
};

std::string floatBytes(std::initializer_list<float> values) {
  std::string out(values.size() * sizeof(float), '\0');
  std::memcpy(out.data(), std::data(values), out.size());
  return out;
}

#define EXPECT_HAS(haystack, needle)                                                            \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos)                              \
      << "message: " << (haystack) << "\nmissing: " << (needle)

//===----------------------------------------------------------------------===//
// Successful reads
//===----------------------------------------------------------------------===//

TEST_F(ExternalDataTest, ReadsFloatTensorWithOffsetAndLength) {
  std::string payload = floatBytes({1.0f, 2.5f, -3.0f, 4.0f, 5.0f, 6.25f});
  writeFile("w.bin", "HEADER" + payload + "TRAILER");
  auto t = tensor("w", {2, 3}, kFloat,
                  {{"location", "w.bin"}, {"offset", "6"}, {"length", "24"}, {"checksum", "x"}});
  std::vector<char> data = bytesOf(t);
  ASSERT_EQ(data.size(), 24u);
  EXPECT_EQ(std::string(data.begin(), data.end()), payload);
  float values[6];
  std::memcpy(values, data.data(), sizeof(values));
  EXPECT_EQ(values[1], 2.5f);
  EXPECT_EQ(values[5], 6.25f);
}

TEST_F(ExternalDataTest, ReadsWithoutLengthUsingExactlyExpectedBytes) {
  std::string payload = floatBytes({7.0f, 8.0f});
  writeFile("w.bin", "ab" + payload + "extra bytes that belong to another tensor");
  auto t = tensor("w", {2}, kFloat, {{"location", "w.bin"}, {"offset", "2"}});
  std::vector<char> data = bytesOf(t);
  EXPECT_EQ(std::string(data.begin(), data.end()), payload);
}

TEST_F(ExternalDataTest, ReadsWithoutOffsetOrLength) {
  std::string payload = floatBytes({1.0f});
  writeFile("w.bin", payload);
  auto t = tensor("w", {1}, kFloat, {{"location", "w.bin"}});
  std::vector<char> data = bytesOf(t);
  EXPECT_EQ(std::string(data.begin(), data.end()), payload);
}

TEST_F(ExternalDataTest, ReadsFromSubdirectoryAndNormalisesDots) {
  makeDir("sub");
  makeDir("other");
  std::string payload = floatBytes({3.0f, 4.0f});
  writeFile("sub/w.bin", payload);
  auto t = tensor("w", {2}, kFloat,
                  {{"location", "./other/../sub//./w.bin"}, {"length", "8"}, {"unknown", "1"}});
  std::vector<char> data = bytesOf(t);
  EXPECT_EQ(std::string(data.begin(), data.end()), payload);
}

TEST_F(ExternalDataTest, ReadsEmptyTensor) {
  writeFile("w.bin", "");
  auto t = tensor("w", {0, 5}, kFloat, {{"location", "w.bin"}, {"offset", "0"}, {"length", "0"}});
  EXPECT_TRUE(bytesOf(t).empty());
}

//===----------------------------------------------------------------------===//
// external_data keys
//===----------------------------------------------------------------------===//

TEST_F(ExternalDataTest, RejectsMissingLocation) {
  auto t = tensor("w", {1}, kFloat, {{"offset", "0"}});
  std::string msg = errorOf(t);
  EXPECT_HAS(msg, "tensor 'w'");
  EXPECT_HAS(msg, "has no 'location' entry");
}

TEST_F(ExternalDataTest, RejectsEmptyLocation) {
  auto t = tensor("w", {1}, kFloat, {{"location", ""}});
  EXPECT_HAS(errorOf(t), "'location' is empty");
}

TEST_F(ExternalDataTest, RejectsDuplicateKnownKey) {
  writeFile("w.bin", floatBytes({1.0f}));
  auto t = tensor("w", {1}, kFloat, {{"location", "w.bin"}, {"offset", "0"}, {"offset", "0"}});
  std::string msg = errorOf(t);
  EXPECT_HAS(msg, "key 'offset' appears more than once");
}

TEST_F(ExternalDataTest, RejectsTensorThatIsNotExternal) {
  auto t = tensor("w", {1}, kFloat, {{"location", "w.bin"}});
  t.set_data_location(onnx::TensorProto::DEFAULT);
  EXPECT_HAS(errorOf(t), "data_location is not EXTERNAL");
}

//===----------------------------------------------------------------------===//
// Lexical location checks
//===----------------------------------------------------------------------===//

TEST_F(ExternalDataTest, RejectsAbsolutePath) {
  auto t = tensor("w", {1}, kFloat, {{"location", "/etc/passwd"}});
  std::string msg = errorOf(t);
  EXPECT_HAS(msg, "tensor 'w': external data location '/etc/passwd' is an absolute path; "
                  "external data must be a relative path beneath the model's directory");
}

TEST_F(ExternalDataTest, RejectsParentEscape) {
  auto t = tensor("w", {1}, kFloat, {{"location", "../x"}});
  std::string msg = errorOf(t);
  EXPECT_HAS(msg, "location '../x' escapes the model directory through '..'");
}

TEST_F(ExternalDataTest, RejectsNestedParentEscape) {
  makeDir("a");
  auto t = tensor("w", {1}, kFloat, {{"location", "a/../../x"}});
  EXPECT_HAS(errorOf(t), "location 'a/../../x' escapes the model directory");
}

TEST_F(ExternalDataTest, RejectsDotThenParentEscape) {
  auto t = tensor("w", {1}, kFloat, {{"location", "./../x"}});
  EXPECT_HAS(errorOf(t), "escapes the model directory");
  auto deep = tensor("w", {1}, kFloat, {{"location", "a/b/../../../x"}});
  EXPECT_HAS(errorOf(deep), "escapes the model directory");
}

TEST_F(ExternalDataTest, RejectsNulByte) {
  auto t = tensor("w", {1}, kFloat, {{"location", std::string("w.bin\0../../etc", 15)}});
  EXPECT_HAS(errorOf(t), "contains a NUL byte");
}

TEST_F(ExternalDataTest, RejectsBackslash) {
  auto t = tensor("w", {1}, kFloat, {{"location", "..\\x"}});
  EXPECT_HAS(errorOf(t), "contains a backslash");
}

TEST_F(ExternalDataTest, RejectsLocationNamingModelDirectory) {
  auto t = tensor("w", {1}, kFloat, {{"location", "a/.."}});
  EXPECT_HAS(errorOf(t), "does not name a file");
}

//===----------------------------------------------------------------------===//
// File system checks
//===----------------------------------------------------------------------===//

TEST_F(ExternalDataTest, RejectsSymlinkFinalFile) {
  writeFile("real.bin", floatBytes({1.0f}));
  makeSymlink("real.bin", "w.bin");
  auto t = tensor("w", {1}, kFloat, {{"location", "w.bin"}});
  std::string msg = errorOf(t);
  EXPECT_HAS(msg, "location 'w.bin' is a symbolic link");
}

TEST_F(ExternalDataTest, RejectsSymlinkToOutsideFile) {
  makeSymlink("/etc/passwd", "w.bin");
  auto t = tensor("w", {1}, kFloat, {{"location", "w.bin"}});
  EXPECT_HAS(errorOf(t), "is a symbolic link");
}

TEST_F(ExternalDataTest, RejectsSymlinkParentDirectory) {
  makeDir("real");
  writeFile("real/w.bin", floatBytes({1.0f}));
  makeSymlink("real", "link");
  auto t = tensor("w", {1}, kFloat, {{"location", "link/w.bin"}});
  std::string msg = errorOf(t);
  EXPECT_HAS(msg, "directory component 'link' is a symbolic link");
}

TEST_F(ExternalDataTest, RejectsSymlinkDeepParentDirectory) {
  makeDir("a");
  makeDir("real");
  writeFile("real/w.bin", floatBytes({1.0f}));
  makeSymlink("../real", "a/b");
  auto t = tensor("w", {1}, kFloat, {{"location", "a/b/w.bin"}});
  EXPECT_HAS(errorOf(t), "directory component 'a/b' is a symbolic link");
}

TEST_F(ExternalDataTest, RejectsHardLink) {
  writeFile("w.bin", floatBytes({1.0f}));
  ASSERT_EQ(::link(path("w.bin").c_str(), path("alias.bin").c_str()), 0) << std::strerror(errno);
  auto t = tensor("w", {1}, kFloat, {{"location", "w.bin"}});
  std::string msg = errorOf(t);
  EXPECT_HAS(msg, "has 2 hard links; Kiln refuses hard-linked external data because it may "
                  "alias a file outside the model directory");
}

TEST_F(ExternalDataTest, RejectsDirectoryInsteadOfFile) {
  makeDir("w.bin");
  auto t = tensor("w", {1}, kFloat, {{"location", "w.bin"}});
  EXPECT_HAS(errorOf(t), "names a directory, not a regular file");
}

TEST_F(ExternalDataTest, RejectsFifoWithoutBlocking) {
  ASSERT_EQ(::mkfifo(path("w.bin").c_str(), 0644), 0) << std::strerror(errno);
  auto t = tensor("w", {1}, kFloat, {{"location", "w.bin"}});
  EXPECT_HAS(errorOf(t), "names a FIFO, not a regular file");
}

TEST_F(ExternalDataTest, RejectsNonexistentFile) {
  auto t = tensor("w", {1}, kFloat, {{"location", "missing.bin"}});
  std::string msg = errorOf(t);
  EXPECT_HAS(msg, "file 'missing.bin' does not exist beneath model directory");
  EXPECT_HAS(msg, dir_);
}

TEST_F(ExternalDataTest, RejectsNonexistentParentDirectory) {
  auto t = tensor("w", {1}, kFloat, {{"location", "nodir/w.bin"}});
  EXPECT_HAS(errorOf(t), "directory component 'nodir' does not exist");
}

TEST_F(ExternalDataTest, RejectsFileUsedAsDirectory) {
  writeFile("f", "x");
  auto t = tensor("w", {1}, kFloat, {{"location", "f/w.bin"}});
  EXPECT_HAS(errorOf(t), "directory component 'f' is not a directory");
}

TEST_F(ExternalDataTest, RejectsMissingModelDirectory) {
  auto t = tensor("w", {1}, kFloat, {{"location", "w.bin"}});
  auto result = readExternalData(dir_ + "/nope", t);
  ASSERT_FALSE(result);
  EXPECT_HAS(llvm::toString(result.takeError()), "cannot open model directory");
}

//===----------------------------------------------------------------------===//
// offset / length
//===----------------------------------------------------------------------===//

TEST_F(ExternalDataTest, RejectsNegativeOffset) {
  writeFile("w.bin", floatBytes({1.0f}));
  auto t = tensor("w", {1}, kFloat, {{"location", "w.bin"}, {"offset", "-1"}});
  std::string msg = errorOf(t);
  EXPECT_HAS(msg, "location 'w.bin': offset '-1' is negative");
}

TEST_F(ExternalDataTest, RejectsNonNumericOffset) {
  writeFile("w.bin", floatBytes({1.0f}));
  for (const char *bad : {"1e3", "12abc", "+5", " 5", "0x10", "5 ", "-", "--1"}) {
    auto t = tensor("w", {1}, kFloat, {{"location", "w.bin"}, {"offset", bad}});
    EXPECT_HAS(errorOf(t), "is not a plain decimal integer") << "offset: " << bad;
  }
}

TEST_F(ExternalDataTest, RejectsEmptyOffset) {
  writeFile("w.bin", floatBytes({1.0f}));
  auto t = tensor("w", {1}, kFloat, {{"location", "w.bin"}, {"offset", ""}});
  EXPECT_HAS(errorOf(t), "offset is empty");
}

TEST_F(ExternalDataTest, RejectsOverflowingOffset) {
  writeFile("w.bin", floatBytes({1.0f}));
  auto t = tensor("w", {1}, kFloat, {{"location", "w.bin"}, {"offset", "99999999999999999999"}});
  EXPECT_HAS(errorOf(t), "offset '99999999999999999999' is too large");
  auto justOver =
      tensor("w", {1}, kFloat, {{"location", "w.bin"}, {"offset", "9223372036854775808"}});
  EXPECT_HAS(errorOf(justOver), "is too large");
}

TEST_F(ExternalDataTest, RejectsBadLength) {
  writeFile("w.bin", floatBytes({1.0f}));
  auto t = tensor("w", {1}, kFloat, {{"location", "w.bin"}, {"length", "4x"}});
  EXPECT_HAS(errorOf(t), "length '4x' is not a plain decimal integer");
}

TEST_F(ExternalDataTest, RejectsOffsetPlusLengthOverflow) {
  writeFile("w.bin", floatBytes({1.0f}));
  auto t = tensor("w", {1}, kFloat,
                  {{"location", "w.bin"}, {"offset", "9223372036854775807"}, {"length", "4"}});
  EXPECT_HAS(errorOf(t), "offset 9223372036854775807 + length 4 overflows");
}

TEST_F(ExternalDataTest, RejectsRangePastEndOfFile) {
  writeFile("w.bin", floatBytes({1.0f, 2.0f}));
  auto t = tensor("w", {2}, kFloat, {{"location", "w.bin"}, {"offset", "4"}, {"length", "8"}});
  std::string msg = errorOf(t);
  EXPECT_HAS(msg, "range past end of file: offset 4 + length 8 = 12 exceeds the file size of 8");
}

TEST_F(ExternalDataTest, RejectsOffsetBeyondEndOfFile) {
  writeFile("w.bin", floatBytes({1.0f}));
  auto t = tensor("w", {0}, kFloat, {{"location", "w.bin"}, {"offset", "5"}});
  EXPECT_HAS(errorOf(t), "range past end of file: offset 5 is beyond the file size of 4");
}

TEST_F(ExternalDataTest, RejectsTooFewBytesWithoutLength) {
  writeFile("w.bin", floatBytes({1.0f, 2.0f}));
  auto t = tensor("w", {3}, kFloat, {{"location", "w.bin"}, {"offset", "4"}});
  EXPECT_HAS(errorOf(t), "only 4 bytes remain from offset 4 to the end of the file (size 8 "
                         "bytes) but the tensor needs 12 bytes");
}

TEST_F(ExternalDataTest, RejectsLengthMismatch) {
  writeFile("w.bin", floatBytes({1.0f, 2.0f, 3.0f, 4.0f}));
  auto t = tensor("w", {2, 2}, kFloat, {{"location", "w.bin"}, {"length", "12"}});
  std::string msg = errorOf(t);
  EXPECT_HAS(msg, "length 12 does not match the 16 bytes the tensor needs");
  EXPECT_HAS(msg, "dims [2, 2] of FLOAT, 4 bytes each");
}

TEST_F(ExternalDataTest, RejectsNegativeDimInTensor) {
  writeFile("w.bin", floatBytes({1.0f}));
  auto t = tensor("w", {-1}, kFloat, {{"location", "w.bin"}});
  EXPECT_HAS(errorOf(t), "dimension 0 of dims [-1] is negative");
}

TEST_F(ExternalDataTest, RejectsStringTensor) {
  writeFile("w.bin", "abcd");
  auto t = tensor("w", {1}, onnx::TensorProto::STRING, {{"location", "w.bin"}});
  EXPECT_HAS(errorOf(t), "data type STRING (8) has no fixed element byte size");
}

//===----------------------------------------------------------------------===//
// expectedTensorBytes / onnxElementByteSize
//===----------------------------------------------------------------------===//

TEST(ExpectedTensorBytesTest, ComputesProductTimesElementSize) {
  auto bytes = expectedTensorBytes("w", {2, 3, 4}, kFloat);
  ASSERT_TRUE(bool(bytes)) << llvm::toString(bytes.takeError());
  EXPECT_EQ(*bytes, 96u);
  auto scalar = expectedTensorBytes("s", {}, kInt64);
  ASSERT_TRUE(bool(scalar)) << llvm::toString(scalar.takeError());
  EXPECT_EQ(*scalar, 8u);
}

TEST(ExpectedTensorBytesTest, ZeroDimGivesZeroEvenWithHugeDims) {
  auto bytes = expectedTensorBytes("w", {int64_t(1) << 40, int64_t(1) << 40, 0}, kFloat);
  ASSERT_TRUE(bool(bytes)) << llvm::toString(bytes.takeError());
  EXPECT_EQ(*bytes, 0u);
}

TEST(ExpectedTensorBytesTest, RejectsElementCountOverflow) {
  auto bytes = expectedTensorBytes("big", {int64_t(1) << 40, int64_t(1) << 40}, kFloat);
  ASSERT_FALSE(bool(bytes));
  std::string msg = llvm::toString(bytes.takeError());
  EXPECT_HAS(msg, "tensor 'big': element count of dims [1099511627776, 1099511627776] overflows");
}

TEST(ExpectedTensorBytesTest, RejectsByteSizeOverflow) {
  // 2^61 elements fit in int64, but 2^61 * 8 bytes do not.
  auto bytes = expectedTensorBytes("big", {int64_t(1) << 61}, kInt64);
  ASSERT_FALSE(bool(bytes));
  EXPECT_HAS(llvm::toString(bytes.takeError()), "byte size of dims [2305843009213693952]");
}

TEST(ExpectedTensorBytesTest, RejectsNegativeDim) {
  auto bytes = expectedTensorBytes("neg", {3, -2}, kFloat);
  ASSERT_FALSE(bool(bytes));
  EXPECT_HAS(llvm::toString(bytes.takeError()),
             "tensor 'neg': dimension 1 of dims [3, -2] is negative (-2)");
}

TEST(ExpectedTensorBytesTest, RejectsTypeWithoutFixedSize) {
  auto bytes = expectedTensorBytes("u", {1}, 12345);
  ASSERT_FALSE(bool(bytes));
  EXPECT_HAS(llvm::toString(bytes.takeError()), "has no fixed element byte size");
}

TEST(OnnxElementByteSizeTest, KnowsFixedSizeTypes) {
  const std::pair<int32_t, size_t> expected[] = {
      {1, 4},  {2, 1},  {3, 1},  {4, 2},  {5, 2},  {6, 4},  {7, 8},  {9, 1},  {10, 2},
      {11, 8}, {12, 4}, {13, 8}, {16, 2}, {17, 1}, {18, 1}, {19, 1}, {20, 1},
  };
  for (auto [type, size] : expected)
    EXPECT_EQ(onnxElementByteSize(type), size) << "data type " << type;
  for (int32_t type : {0, 8, 21, 22, 23, -1, 1000})
    EXPECT_EQ(onnxElementByteSize(type), 0u) << "data type " << type;
}

} // namespace
