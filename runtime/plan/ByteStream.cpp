//===- ByteStream.cpp - little-endian encoder and bounds-checked decoder ---===//

#include "runtime/plan/ByteStream.h"

#include <bit>
#include <cstring>

namespace kiln::plan::detail {

void ByteWriter::u32(uint32_t value) {
  for (int i = 0; i < 4; ++i)
    out_.push_back(static_cast<uint8_t>(value >> (8 * i)));
}

void ByteWriter::u64(uint64_t value) {
  for (int i = 0; i < 8; ++i)
    out_.push_back(static_cast<uint8_t>(value >> (8 * i)));
}

void ByteWriter::f32(float value) { u32(std::bit_cast<uint32_t>(value)); }

void ByteWriter::str(std::string_view value) {
  u64(value.size());
  out_.insert(out_.end(), value.begin(), value.end());
}

void ByteWriter::bytes(std::span<const uint8_t> value) {
  u64(value.size());
  out_.insert(out_.end(), value.begin(), value.end());
}

void ByteWriter::i64s(std::span<const int64_t> values) {
  u64(values.size());
  for (int64_t value : values)
    i64(value);
}

void ByteWriter::u32s(std::span<const uint32_t> values) {
  u64(values.size());
  for (uint32_t value : values)
    u32(value);
}

void ByteWriter::strs(std::span<const std::string> values) {
  u64(values.size());
  for (const std::string &value : values)
    str(value);
}

void ByteWriter::optionalU32(const std::optional<uint32_t> &value) {
  boolean(value.has_value());
  if (value)
    u32(*value);
}

void ByteReader::fail(std::string message) {
  if (failed_)
    return;
  failed_ = true;
  error_ = "at byte " + std::to_string(pos_) + ": " + std::move(message);
}

const uint8_t *ByteReader::take(size_t n, const char *field) {
  if (failed_)
    return nullptr;
  if (n > remaining()) {
    fail(std::string(field) + " needs " + std::to_string(n) + " bytes but only " + std::to_string(remaining()) +
         " are left");
    return nullptr;
  }
  const uint8_t *p = data_.data() + pos_;
  pos_ += n;
  return p;
}

uint8_t ByteReader::u8(const char *field) {
  const uint8_t *p = take(1, field);
  return p ? *p : 0;
}

uint32_t ByteReader::u32(const char *field) {
  const uint8_t *p = take(4, field);
  if (!p)
    return 0;
  uint32_t value = 0;
  for (int i = 0; i < 4; ++i)
    value |= uint32_t(p[i]) << (8 * i);
  return value;
}

uint64_t ByteReader::u64(const char *field) {
  const uint8_t *p = take(8, field);
  if (!p)
    return 0;
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i)
    value |= uint64_t(p[i]) << (8 * i);
  return value;
}

float ByteReader::f32(const char *field) { return std::bit_cast<float>(u32(field)); }

bool ByteReader::boolean(const char *field) {
  size_t at = pos_;
  uint8_t value = u8(field);
  if (value > 1) {
    pos_ = at;
    fail(std::string(field) + " is " + std::to_string(value) + ", not a boolean (0 or 1)");
  }
  return value == 1;
}

uint64_t ByteReader::count(const char *field, size_t minElementBytes) {
  size_t at = pos_;
  uint64_t n = u64(field);
  if (failed_)
    return 0;
  // Dividing (rather than multiplying n) cannot overflow, whatever n a damaged file holds.
  size_t left = remaining();
  if (n > left / minElementBytes) {
    pos_ = at;
    fail(std::string(field) + " says " + std::to_string(n) + " elements of at least " +
         std::to_string(minElementBytes) + " bytes, but only " + std::to_string(left) + " bytes are left");
    return 0;
  }
  return n;
}

std::string ByteReader::str(const char *field) {
  uint64_t n = count(field, 1);
  const uint8_t *p = take(n, field);
  return p ? std::string(reinterpret_cast<const char *>(p), n) : std::string();
}

std::vector<uint8_t> ByteReader::bytes(const char *field) {
  uint64_t n = count(field, 1);
  const uint8_t *p = take(n, field);
  return p ? std::vector<uint8_t>(p, p + n) : std::vector<uint8_t>();
}

std::vector<int64_t> ByteReader::i64s(const char *field) {
  uint64_t n = count(field, 8);
  std::vector<int64_t> values;
  values.reserve(n); // bounded by count(): at most the bytes left / 8
  for (uint64_t i = 0; i < n && !failed_; ++i)
    values.push_back(i64(field));
  return values;
}

std::vector<uint32_t> ByteReader::u32s(const char *field) {
  uint64_t n = count(field, 4);
  std::vector<uint32_t> values;
  values.reserve(n);
  for (uint64_t i = 0; i < n && !failed_; ++i)
    values.push_back(u32(field));
  return values;
}

std::vector<std::string> ByteReader::strs(const char *field) {
  uint64_t n = count(field, 8); // each string is at least its u64 length
  std::vector<std::string> values;
  values.reserve(n);
  for (uint64_t i = 0; i < n && !failed_; ++i)
    values.push_back(str(field));
  return values;
}

std::optional<uint32_t> ByteReader::optionalU32(const char *field) {
  if (!boolean(field))
    return std::nullopt;
  uint32_t value = u32(field);
  return failed_ ? std::nullopt : std::optional<uint32_t>(value);
}

} // namespace kiln::plan::detail
