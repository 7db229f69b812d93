//===- QuantizableOps.cpp - which ops 8-bit quantization covers -----------===//

#include "passes/QuantizableOps.h"

#include "ir/KilnOps.h"

#include "mlir/IR/BuiltinTypes.h"

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

} // namespace kiln
