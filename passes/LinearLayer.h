//===- LinearLayer.h - a linear layer as the passes see it ----*- C++ -*-===//
//
// x · W [+ b]: a kiln.matmul by a 2-d right operand (the weight), optionally followed by the
// add of a bias row, the form the exporters leave nn.Linear in after import and that several
// passes rewrite (packing projections, moving transposes and reshapes across the layer).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_LINEARLAYER_H
#define KILN_PASSES_LINEARLAYER_H

#include "ir/KilnOps.h"

#include <optional>

namespace kiln {

struct LinearLayer {
  MatMulOp matmul;
  AddOp biasAdd;     // null without a bias
  mlir::Value bias;  // the row the add adds, when there is one
  int64_t columns = 0; // N, the weight's columns

  /// The layer's value: the bias add's result, or the product.
  mlir::Value result() { return biasAdd ? biasAdd.getResult() : matmul.getResult(); }
};

/// Whether `type` is a bias row for a product with `columns` columns: [..., N] with every
/// leading dim 1.
bool isBiasRow(mlir::RankedTensorType type, int64_t columns);

/// Whether `gemm` is op(A)·op(B) + C with neither alpha nor beta scaling and A not transposed:
/// a matmul by B (or Bᵀ with trans_b) plus a bias, the Gemms kiln-normalize-linear-layers
/// rewrites into a linear layer.
bool isProductPlusBias(GemmOp gemm);

/// `value` as a linear layer: the matmul (2-d weight) defining it, or an add of such a matmul
/// (used only there) and a bias row, giving the product's type. nullopt otherwise.
std::optional<LinearLayer> matchLinearLayer(mlir::Value value);

} // namespace kiln

#endif // KILN_PASSES_LINEARLAYER_H
