//===- LinearLayer.cpp - a linear layer as the passes see it ---------------===//

#include "passes/LinearLayer.h"

namespace kiln {

namespace {
mlir::RankedTensorType typeOf(mlir::Value v) { return llvm::cast<mlir::RankedTensorType>(v.getType()); }
} // namespace

bool isBiasRow(mlir::RankedTensorType type, int64_t columns) {
  llvm::ArrayRef<int64_t> shape = type.getShape();
  return !shape.empty() && shape.back() == columns &&
         llvm::all_of(shape.drop_back(), [](int64_t d) { return d == 1; });
}

bool isProductPlusBias(GemmOp gemm) {
  return !gemm.getTransA() && gemm.getAlpha().convertToFloat() == 1.0f &&
         (!gemm.getC() || gemm.getBeta().convertToFloat() == 1.0f);
}

std::optional<LinearLayer> matchLinearLayer(mlir::Value value) {
  LinearLayer layer;
  if (auto add = value.getDefiningOp<AddOp>()) {
    for (int side = 0; side < 2 && !layer.matmul; ++side) {
      auto matmul = add->getOperand(side).getDefiningOp<MatMulOp>();
      mlir::Value other = add->getOperand(1 - side);
      if (matmul && matmul->hasOneUse() && typeOf(matmul.getResult()) == typeOf(value) &&
          isBiasRow(typeOf(other), typeOf(value).getShape().back())) {
        layer.matmul = matmul;
        layer.biasAdd = add;
        layer.bias = other;
      }
    }
  } else {
    layer.matmul = value.getDefiningOp<MatMulOp>();
  }
  if (!layer.matmul || typeOf(layer.matmul.getRhs()).getRank() != 2)
    return std::nullopt;
  layer.columns = typeOf(layer.matmul.getRhs()).getShape()[1];
  return layer;
}

} // namespace kiln
