//===- Tensor.h - host tensors of the reference interpreter ----*- C++ -*-===//
//
// The interpreter gives every kiln op its meaning on the CPU. A Tensor holds its element type,
// its shape and its values: floating-point elements as doubles that are always exactly
// representable in the element type (every result is rounded to its storage type, round half to
// even, so f16/bf16/f8E4M3FN behave as they do in memory), integers and booleans as int64.
// Clear rather than fast; the dense inner loops (matmul, conv) use Eigen.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_IR_INTERPRETER_TENSOR_H
#define KILN_IR_INTERPRETER_TENSOR_H

#include "ir/ShapeRules.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/Error.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

namespace kiln::interp {

struct Tensor {
  mlir::Type element;       // builtin element type (f32, f16, bf16, f8E4M3FN, f64, iN, uiN, i1)
  Shape shape;
  std::vector<double> f;    // values when element is a float type
  std::vector<int64_t> i;   // values when element is an integer or i1

  bool isFloat() const { return llvm::isa<mlir::FloatType>(element); }
  int64_t size() const { return isFloat() ? (int64_t)f.size() : (int64_t)i.size(); }
  /// Value k as a double (integers converted).
  double getDouble(int64_t k) const { return isFloat() ? f[k] : (double)i[k]; }
  mlir::RankedTensorType type() const { return mlir::RankedTensorType::get(shape, element); }

  /// A zero-filled tensor of `type`.
  static Tensor zeros(mlir::RankedTensorType type);
};

/// Rounds `v` to the nearest value of float type `type` (round half to even). Values beyond the
/// largest finite value become infinity, except for f8E4M3FN (which has no infinity): NaN, or
/// the largest finite value with `saturate`.
double roundToFloat(double v, mlir::FloatType type, bool saturate = false);

/// `v` rounded to float32. Converting a double beyond float's range is undefined behaviour in
/// C++, so overflow is handled here: from FLT_MAX + half an ulp on (a tie that goes to the even
/// 2^128) IEEE rounding gives infinity.
inline double roundToFloat32(double v) {
  constexpr double kOverflow = 0x1.ffffffp127;
  if (std::fabs(v) >= kOverflow)
    return std::copysign(INFINITY, v);
  return (double)(float)v;
}

/// roundToFloat with the type inspected once, for loops over a tensor's elements: f16 and bf16
/// round with bit arithmetic on the double (APFloat's general conversion, and even the type
/// checks, dominated half-precision evaluations), other narrow types through APFloat.
class FloatRounder {
public:
  explicit FloatRounder(mlir::FloatType type, bool saturate = false);
  double operator()(double v) const {
    switch (kind_) {
    case Kind::F64:
      return v;
    case Kind::F32:
      return roundToFloat32(v);
    case Kind::F16:
      return roundToBinary(v, 11, 0x1p-14, 65504.0);
    case Kind::BF16:
      return roundToBinary(v, 8, 0x1p-126, 0x1.fep127);
    case Kind::Other:
      break;
    }
    return roundOther(v);
  }

private:
  enum class Kind { F64, F32, F16, BF16, Other };

  /// `v` rounded half to even to a binary format with `precision` significand bits, smallest
  /// normal `minNormal` and largest finite value `largest`, where every double that rounds to a
  /// finite value of the format is normal in double (true of f16 and bf16).
  static double roundToBinary(double v, int precision, double minNormal, double largest) {
    double magnitude = std::fabs(v);
    if (!std::isfinite(v) || v == 0) // inf, NaN and zeros are themselves
      return v;
    if (magnitude < minNormal) {
      // Subnormal in the format: multiples of its smallest quantum. v / quantum is exact (a
      // power of two), and nearbyint rounds half to even in the default rounding mode.
      double quantum = std::ldexp(minNormal, 1 - precision);
      return std::nearbyint(v / quantum) * quantum;
    }
    // Normal: round the double's 52 stored mantissa bits to precision - 1, half to even (a
    // carry out of the mantissa rightly bumps the exponent).
    uint64_t bits = std::bit_cast<uint64_t>(v);
    int drop = 53 - precision;
    bits += (uint64_t(1) << (drop - 1)) - 1 + ((bits >> drop) & 1);
    bits &= ~((uint64_t(1) << drop) - 1);
    double rounded = std::bit_cast<double>(bits);
    return std::fabs(rounded) > largest ? std::copysign(INFINITY, v) : rounded;
  }
  double roundOther(double v) const;

  mlir::FloatType type_;
  bool saturate_;
  Kind kind_;
};

/// Wraps `v` to the range of integer type `type` (two's complement; i1 is v != 0).
int64_t wrapToInteger(int64_t v, mlir::IntegerType type);

/// Stores a computed double in `element`: rounding for floats; for integers, truncation toward
/// zero with saturation at the type's range (NaN becomes 0) -- ONNX Cast's float-to-int rule.
void storeDouble(Tensor &t, int64_t k, double v);

/// Strides of a row-major shape.
Shape stridesOf(llvm::ArrayRef<int64_t> shape);

/// Tensor <-> attribute (dense or resource blob).
llvm::Expected<Tensor> fromAttr(mlir::ElementsAttr attr);
mlir::DenseElementsAttr toAttr(const Tensor &t);
/// `t` as a constant's value: dense when it has at most `inlineElements` elements (or is i1,
/// which has no blob form), else a resource blob named after `blobName` (MLIR makes the name
/// unique) holding its little-endian bytes.
mlir::ElementsAttr toElementsAttr(const Tensor &t, int64_t inlineElements, llvm::StringRef blobName);
/// Raw little-endian bytes as a constant's value of `type`, the same way: dense up to
/// `inlineElements` elements, else a resource blob named after `blobName`.
mlir::ElementsAttr bytesToElementsAttr(mlir::RankedTensorType type, llvm::ArrayRef<char> bytes,
                                       int64_t inlineElements, llvm::StringRef blobName);

} // namespace kiln::interp

#endif // KILN_IR_INTERPRETER_TENSOR_H
