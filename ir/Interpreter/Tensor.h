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
