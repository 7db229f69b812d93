//===- QuantizableOps.cpp - which ops 8-bit quantization covers -----------===//

#include "passes/QuantizableOps.h"

#include "ir/Interpreter/Tensor.h"

#include "mlir/IR/BuiltinTypes.h"

#include <cmath>

namespace kiln {

bool isQuantizableOp(mlir::Operation *op) { return mlir::isa<ConvOp, ConvTransposeOp, MatMulOp, GemmOp>(op); }

std::optional<int64_t> weightChannelAxis(mlir::Operation *op) {
  if (mlir::isa<ConvOp>(op))
    return 0;
  if (mlir::isa<ConvTransposeOp>(op))
    return 1;
  if (auto gemm = mlir::dyn_cast<GemmOp>(op))
    return gemm.getTransB() ? 0 : 1;
  if (mlir::isa<MatMulOp>(op))
    return llvm::cast<mlir::RankedTensorType>(op->getOperand(1).getType()).getRank() - 1;
  return std::nullopt;
}

llvm::Expected<std::vector<double>> channelAbsMax(ConstantOp weight, int64_t axis) {
  auto tensor = interp::fromAttr(llvm::cast<mlir::ElementsAttr>(weight.getValue()));
  if (!tensor)
    return tensor.takeError();
  int64_t channels = tensor->shape[axis], inner = 1;
  for (size_t d = axis + 1; d < tensor->shape.size(); ++d)
    inner *= tensor->shape[d];
  std::vector<double> absMax(channels, 0.0);
  for (int64_t k = 0; k < tensor->size(); ++k) {
    double &m = absMax[(k / inner) % channels];
    m = std::max(m, std::fabs(tensor->f[k]));
  }
  return absMax;
}

std::optional<QuantizedLinearLayer> matchQuantizedLinearLayer(MatMulOp matmul) {
  auto input = matmul.getLhs().getDefiningOp<DequantizeOp>();
  auto transpose = matmul.getRhs().getDefiningOp<TransposeOp>();
  if (!input || !transpose || !input->hasOneUse() || !transpose->hasOneUse() ||
      transpose.getPerm() != llvm::ArrayRef<int64_t>{1, 0})
    return std::nullopt;
  auto weight = transpose.getInput().getDefiningOp<DequantizeOp>();
  if (!weight || !weight->hasOneUse())
    return std::nullopt;
  return QuantizedLinearLayer{input, weight, transpose};
}

bool isZeroConstant(mlir::Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  if (!constant)
    return false;
  auto tensor = interp::fromAttr(llvm::cast<mlir::ElementsAttr>(constant.getValue()));
  if (!tensor) {
    llvm::consumeError(tensor.takeError());
    return false;
  }
  return tensor->isFloat() ? llvm::all_of(tensor->f, [](double v) { return v == 0; })
                           : llvm::all_of(tensor->i, [](int64_t v) { return v == 0; });
}

} // namespace kiln
