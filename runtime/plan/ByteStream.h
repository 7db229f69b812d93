//===- ByteStream.h - little-endian encoder and bounds-checked decoder -*- C++ -*-===//
//
// The plan's sections are sequences of little-endian integers, IEEE floats (their bit patterns),
// and length-prefixed strings and vectors. ByteReader never reads past its span and refuses a
// length prefix larger than the bytes that are left, so a damaged or hostile length cannot make
// the reader allocate more than the section it is reading could hold.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_PLAN_BYTESTREAM_H
#define KILN_RUNTIME_PLAN_BYTESTREAM_H

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::plan::detail {

class ByteWriter {
public:
  void u8(uint8_t value) { out_.push_back(value); }
  void u32(uint32_t value);
  void u64(uint64_t value);
  void i64(int64_t value) { u64(static_cast<uint64_t>(value)); }
  void f32(float value);
  void boolean(bool value) { u8(value ? 1 : 0); }
  void str(std::string_view value);
  void bytes(std::span<const uint8_t> value);
  void i64s(std::span<const int64_t> values);
  void u32s(std::span<const uint32_t> values);
  void strs(std::span<const std::string> values);
  void optionalU32(const std::optional<uint32_t> &value);

  std::vector<uint8_t> take() { return std::move(out_); }

private:
  std::vector<uint8_t> out_;
};

/// Reads from a span. The first failure is kept (failed(), error()); after it every read
/// returns zero/empty, so callers check once per element rather than after every field.
class ByteReader {
public:
  explicit ByteReader(std::span<const uint8_t> data) : data_(data) {}

  uint8_t u8(const char *field);
  uint32_t u32(const char *field);
  uint64_t u64(const char *field);
  int64_t i64(const char *field) { return static_cast<int64_t>(u64(field)); }
  float f32(const char *field);
  bool boolean(const char *field);
  std::string str(const char *field);
  std::vector<uint8_t> bytes(const char *field);
  std::vector<int64_t> i64s(const char *field);
  std::vector<uint32_t> u32s(const char *field);
  std::vector<std::string> strs(const char *field);
  std::optional<uint32_t> optionalU32(const char *field);
  /// A vector length whose elements take at least `minElementBytes` each: refused (0 and an
  /// error) when that many elements cannot fit in what is left.
  uint64_t count(const char *field, size_t minElementBytes);
  /// Records a failure found by the caller (e.g. an unknown tag), at the current position.
  void fail(std::string message);

  bool failed() const { return failed_; }
  const std::string &error() const { return error_; }
  size_t position() const { return pos_; }
  size_t remaining() const { return data_.size() - pos_; }

private:
  /// The next `n` bytes, or nullptr (and a failure) when fewer are left.
  const uint8_t *take(size_t n, const char *field);

  std::span<const uint8_t> data_;
  size_t pos_ = 0;
  bool failed_ = false;
  std::string error_;
};

} // namespace kiln::plan::detail

#endif // KILN_RUNTIME_PLAN_BYTESTREAM_H
