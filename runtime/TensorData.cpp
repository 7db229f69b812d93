//===- TensorData.cpp - host tensors for plan I/O -------------------------===//

#include "runtime/TensorData.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace kiln::runtime {
namespace {

std::string npyDtypeOf(plan::DType dtype) {
  switch (dtype) {
  case plan::DType::F32: return "<f4";
  case plan::DType::F64: return "<f8";
  case plan::DType::F16: return "<f2";
  case plan::DType::Bool: return "|b1";
  case plan::DType::I8: return "|i1";
  case plan::DType::U8: return "|u1";
  case plan::DType::I16: return "<i2";
  case plan::DType::U16: return "<u2";
  case plan::DType::I32: return "<i4";
  case plan::DType::U32: return "<u4";
  case plan::DType::I64: return "<i8";
  case plan::DType::U64: return "<u8";
  case plan::DType::BF16:
  case plan::DType::F8E4M3FN: return "<f4"; // widened
  }
  return "";
}

bool sameDtype(const std::string &a, const std::string &b) {
  // '|' and '<' mean the same for one-byte types.
  return a == b || (a.size() == b.size() && a.size() > 1 && a.substr(1) == b.substr(1) &&
                    NpyArray::elementSize(a) == 1);
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? "x" : "") + std::to_string(shape[i]);
  return text + "]";
}

} // namespace

uint16_t floatToHalf(float value) {
  uint32_t x;
  std::memcpy(&x, &value, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) // inf or NaN
    return static_cast<uint16_t>(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0));
  if (absx >= 0x477ff000u) // rounds to >= 65520: infinity
    return static_cast<uint16_t>(sign | 0x7c00u);
  if (absx < 0x38800000u) { // subnormal half (or zero): scale and round to nearest even
    float magnitude;
    std::memcpy(&magnitude, &absx, 4);
    float scaled = magnitude * 16777216.0f; // 2^24: units of the smallest subnormal
    uint32_t units = static_cast<uint32_t>(std::nearbyint(scaled));
    return static_cast<uint16_t>(sign | units);
  }
  uint32_t mantissa = absx & 0x7fffffu;
  uint32_t exponent = (absx >> 23) - 127 + 15;
  uint32_t half = (exponent << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u)))
    ++half;
  return static_cast<uint16_t>(sign | half);
}

float halfToFloat(uint16_t bits) {
  uint32_t sign = (bits & 0x8000u) << 16;
  uint32_t exponent = (bits >> 10) & 0x1fu, mantissa = bits & 0x3ffu;
  float magnitude;
  if (exponent == 0)
    magnitude = std::ldexp(static_cast<float>(mantissa), -24);
  else if (exponent == 31)
    magnitude = mantissa ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  else
    magnitude = std::ldexp(static_cast<float>(mantissa | 0x400u), static_cast<int>(exponent) - 25);
  uint32_t out;
  std::memcpy(&out, &magnitude, 4);
  out |= sign;
  float result;
  std::memcpy(&result, &out, 4);
  return result;
}

uint16_t floatToBFloat16(float value) {
  uint32_t x;
  std::memcpy(&x, &value, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((x >> 16) | 0x40u); // quiet NaN
  uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

float bfloat16ToFloat(uint16_t bits) {
  uint32_t x = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

float f8E4M3FNToFloat(uint8_t bits) {
  uint32_t exponent = (bits >> 3) & 0xfu, mantissa = bits & 0x7u;
  float magnitude;
  if (exponent == 15 && mantissa == 7)
    magnitude = std::numeric_limits<float>::quiet_NaN();
  else if (exponent == 0)
    magnitude = std::ldexp(static_cast<float>(mantissa), -9);
  else
    magnitude = std::ldexp(static_cast<float>(mantissa | 8u), static_cast<int>(exponent) - 10);
  return (bits & 0x80u) ? -magnitude : magnitude;
}

uint8_t floatToF8E4M3FN(float value) {
  if (std::isnan(value))
    return 0x7f;
  uint8_t sign = std::signbit(value) ? 0x80 : 0;
  float magnitude = std::fabs(value);
  // Nearest of the 127 finite magnitudes, ties to the even code; beyond 448 (+half a step)
  // there is no finite value to round to.
  if (magnitude >= 464.0f)
    return static_cast<uint8_t>(sign | 0x7f);
  uint8_t best = 0;
  float bestDistance = std::numeric_limits<float>::infinity();
  for (uint8_t code = 0; code < 0x7f; ++code) {
    float distance = std::fabs(f8E4M3FNToFloat(code) - magnitude);
    if (distance < bestDistance || (distance == bestDistance && (code & 1u) == 0)) {
      best = code;
      bestDistance = distance;
    }
  }
  return static_cast<uint8_t>(sign | best);
}

double elementAsDouble(const uint8_t *data, plan::DType dtype, int64_t k) {
  auto load = [&](auto tag) {
    decltype(tag) v;
    std::memcpy(&v, data + k * sizeof(v), sizeof(v));
    return v;
  };
  switch (dtype) {
  case plan::DType::F32: return load(float{});
  case plan::DType::F64: return load(double{});
  case plan::DType::F16: return halfToFloat(load(uint16_t{}));
  case plan::DType::BF16: return bfloat16ToFloat(load(uint16_t{}));
  case plan::DType::F8E4M3FN: return f8E4M3FNToFloat(load(uint8_t{}));
  case plan::DType::I8: return load(int8_t{});
  case plan::DType::I16: return load(int16_t{});
  case plan::DType::I32: return load(int32_t{});
  case plan::DType::I64: return static_cast<double>(load(int64_t{}));
  case plan::DType::U8:
  case plan::DType::Bool: return load(uint8_t{});
  case plan::DType::U16: return load(uint16_t{});
  case plan::DType::U32: return load(uint32_t{});
  case plan::DType::U64: return static_cast<double>(load(uint64_t{}));
  }
  return 0;
}

std::optional<plan::DType> dtypeOfNpy(const std::string &npyDtype) {
  using plan::DType;
  for (DType dtype : {DType::F32, DType::F64, DType::F16, DType::Bool, DType::I8, DType::U8, DType::I16, DType::U16,
                      DType::I32, DType::U32, DType::I64, DType::U64})
    if (sameDtype(npyDtype, npyDtypeOf(dtype)))
      return dtype;
  return std::nullopt;
}

StatusOr<std::vector<uint8_t>> bytesFromNpy(const NpyArray &array, const plan::TensorBinding &binding) {
  std::string want = npyDtypeOf(binding.dtype);
  bool widened = binding.dtype == plan::DType::BF16 || binding.dtype == plan::DType::F8E4M3FN;
  if (!sameDtype(array.dtype, want))
    return Status(StatusCode::kInvalidArgument,
                  "input '" + binding.name + "': dtype " + array.dtype + " differs from the plan's " + want +
                      (widened ? " (bf16 and f8 inputs are given as float32)" : ""));
  if (array.shape != binding.shape)
    return Status(StatusCode::kInvalidArgument, "input '" + binding.name + "': shape " + shapeText(array.shape) +
                                                    " differs from the plan's " + shapeText(binding.shape));
  if (!widened)
    return std::vector<uint8_t>(array.data.begin(), array.data.end());
  size_t count = array.data.size() / 4;
  std::vector<uint8_t> bytes(count * plan::dtypeBytes(binding.dtype));
  for (size_t k = 0; k < count; ++k) {
    float v;
    std::memcpy(&v, array.data.data() + 4 * k, 4);
    if (binding.dtype == plan::DType::BF16) {
      uint16_t b = floatToBFloat16(v);
      std::memcpy(bytes.data() + 2 * k, &b, 2);
    } else {
      bytes[k] = floatToF8E4M3FN(v);
    }
  }
  return bytes;
}

NpyArray npyFromBytes(const std::vector<uint8_t> &bytes, plan::DType dtype, const std::vector<int64_t> &shape) {
  NpyArray array;
  array.dtype = npyDtypeOf(dtype);
  array.shape = shape;
  if (dtype != plan::DType::BF16 && dtype != plan::DType::F8E4M3FN) {
    array.data.assign(bytes.begin(), bytes.end());
    return array;
  }
  size_t count = bytes.size() / plan::dtypeBytes(dtype);
  array.data.resize(count * 4);
  for (size_t k = 0; k < count; ++k) {
    float v = static_cast<float>(elementAsDouble(bytes.data(), dtype, static_cast<int64_t>(k)));
    std::memcpy(array.data.data() + 4 * k, &v, 4);
  }
  return array;
}

std::vector<uint8_t> randomBytes(plan::DType dtype, int64_t count, std::mt19937_64 &rng) {
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int64_t> integer(0, 9), coin(0, 1);
  size_t size = plan::dtypeBytes(dtype);
  std::vector<uint8_t> bytes(static_cast<size_t>(count) * size);
  for (int64_t k = 0; k < count; ++k) {
    uint8_t *p = bytes.data() + k * size;
    if (plan::isFloat(dtype)) {
      double v = real(rng);
      if (dtype == plan::DType::F64) {
        std::memcpy(p, &v, 8);
      } else if (dtype == plan::DType::F32) {
        float f = static_cast<float>(v);
        std::memcpy(p, &f, 4);
      } else if (dtype == plan::DType::F16) {
        uint16_t h = floatToHalf(static_cast<float>(v));
        std::memcpy(p, &h, 2);
      } else if (dtype == plan::DType::BF16) {
        uint16_t h = floatToBFloat16(static_cast<float>(v));
        std::memcpy(p, &h, 2);
      } else {
        *p = floatToF8E4M3FN(static_cast<float>(v));
      }
    } else {
      int64_t v = dtype == plan::DType::Bool ? coin(rng) : integer(rng);
      std::memcpy(p, &v, size); // little-endian: the low bytes
    }
  }
  return bytes;
}

TensorStats statsOf(const std::vector<uint8_t> &bytes, plan::DType dtype) {
  TensorStats stats;
  int64_t count = static_cast<int64_t>(bytes.size() / plan::dtypeBytes(dtype)), finite = 0;
  double sum = 0;
  stats.min = std::numeric_limits<double>::infinity();
  stats.max = -stats.min;
  for (int64_t k = 0; k < count; ++k) {
    double v = elementAsDouble(bytes.data(), dtype, k);
    if (!std::isfinite(v)) {
      ++stats.nonFinite;
      continue;
    }
    stats.min = std::min(stats.min, v);
    stats.max = std::max(stats.max, v);
    sum += v;
    ++finite;
  }
  stats.mean = finite ? sum / finite : 0;
  if (!finite)
    stats.min = stats.max = 0;
  return stats;
}

} // namespace kiln::runtime
