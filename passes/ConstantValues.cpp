//===- ConstantValues.cpp - reading and computing kiln.constant values ----===//

#include "passes/ConstantValues.h"

#include "ir/Interpreter/Interpreter.h"
#include "ir/Interpreter/Tensor.h"
#include "ir/KilnOps.h"

#include "mlir/IR/Builders.h"

#include <cmath>

namespace kiln {

std::optional<double> scalarConstant(mlir::Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  auto type = llvm::dyn_cast<mlir::RankedTensorType>(value.getType());
  if (!constant || !type || type.getNumElements() != 1 || !llvm::isa<mlir::FloatType>(type.getElementType()))
    return std::nullopt;
  auto tensor = interp::fromAttr(constant.getValue());
  if (!tensor) {
    llvm::consumeError(tensor.takeError());
    return std::nullopt;
  }
  return tensor->f[0];
}

bool isScalarConstantNear(mlir::Value value, double expected, double relative) {
  std::optional<double> c = scalarConstant(value);
  return c && std::abs(*c - expected) <= relative * std::abs(expected);
}

llvm::Error replaceWithConstants(mlir::Operation *op, int64_t inlineElements, llvm::StringRef blobName) {
  llvm::SmallVector<interp::Tensor> values;
  values.reserve(op->getNumOperands());
  for (mlir::Value operand : op->getOperands()) {
    auto constant = operand.getDefiningOp<ConstantOp>();
    if (!constant)
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "an operand is not a constant");
    auto value = interp::fromAttr(constant.getValue());
    if (!value)
      return value.takeError();
    values.push_back(std::move(*value));
  }
  llvm::SmallVector<const interp::Tensor *> operands;
  for (const interp::Tensor &t : values)
    operands.push_back(&t);
  auto results = interp::evaluateOp(op, operands);
  if (!results)
    return results.takeError();
  mlir::OpBuilder builder(op);
  for (auto [result, tensor] : llvm::zip(op->getResults(), *results)) {
    mlir::ElementsAttr attr = interp::toElementsAttr(tensor, inlineElements, blobName);
    auto constant = ConstantOp::create(builder, op->getLoc(), result.getType(), attr);
    result.replaceAllUsesWith(constant.getResult());
  }
  op->erase();
  return llvm::Error::success();
}

} // namespace kiln
