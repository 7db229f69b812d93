//===- ConstantValues.cpp - reading and computing kiln.constant values ----===//

#include "passes/ConstantValues.h"

#include "ir/Interpreter/Interpreter.h"
#include "ir/Interpreter/Tensor.h"
#include "ir/KilnOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cmath>
#include <cstring>

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

namespace {

/// The raw little-endian bytes of a payload whose elements are whole bytes (a dense non-splat
/// or a loaded resource blob).
std::optional<llvm::ArrayRef<char>> rawBytes(mlir::ElementsAttr value) {
  if (auto dense = llvm::dyn_cast<mlir::DenseElementsAttr>(value)) {
    if (dense.isSplat() || dense.getElementType().isInteger(1))
      return std::nullopt;
    return dense.getRawData();
  }
  if (auto resource = llvm::dyn_cast<mlir::DenseResourceElementsAttr>(value))
    if (mlir::AsmResourceBlob *blob = resource.getRawHandle().getBlob())
      return blob->getData();
  return std::nullopt;
}

} // namespace

bool isUniformConstant(mlir::ElementsAttr value) {
  if (auto dense = llvm::dyn_cast<mlir::DenseElementsAttr>(value); dense && dense.isSplat())
    return true;
  mlir::Type element = value.getElementType();
  if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() % 8 != 0)
    return false;
  size_t width = element.getIntOrFloatBitWidth() / 8;
  std::optional<llvm::ArrayRef<char>> bytes = rawBytes(value);
  if (!bytes || bytes->size() != static_cast<size_t>(value.getNumElements()) * width || bytes->empty())
    return false;
  for (size_t at = width; at < bytes->size(); at += width)
    if (std::memcmp(bytes->data() + at, bytes->data(), width) != 0)
      return false;
  return true;
}

llvm::Expected<mlir::ElementsAttr> transposeConstant(mlir::ElementsAttr value, llvm::ArrayRef<int64_t> shape,
                                                     llvm::ArrayRef<int64_t> perm, int64_t inlineElements,
                                                     llvm::StringRef suffix) {
  mlir::Type element = value.getElementType();
  Shape outShape;
  for (int64_t axis : perm)
    outShape.push_back(shape[axis]);
  auto type = mlir::RankedTensorType::get(outShape, element);
  // A splat is the same value everywhere.
  if (auto dense = llvm::dyn_cast<mlir::DenseElementsAttr>(value); dense && dense.isSplat())
    return mlir::ElementsAttr(dense.resizeSplat(type));
  std::string name = "transposed";
  if (auto resource = llvm::dyn_cast<mlir::DenseResourceElementsAttr>(value))
    name = resource.getRawHandle().getKey().str();
  name += suffix;
  Shape inStrides = interp::stridesOf(shape);
  unsigned bits = element.getIntOrFloatBitWidth();
  std::optional<llvm::ArrayRef<char>> bytes = rawBytes(value);
  if (bytes && bits % 8 == 0 && (int64_t)bytes->size() == type.getNumElements() * (bits / 8)) {
    size_t width = bits / 8;
    std::vector<char> out(bytes->size());
    // Walk the result in row-major order; `source` follows the input element it copies.
    Shape coords(outShape.size(), 0);
    int64_t source = 0;
    for (int64_t k = 0, count = type.getNumElements(); k < count; ++k) {
      std::memcpy(out.data() + k * width, bytes->data() + source * width, width);
      for (int64_t axis = (int64_t)outShape.size() - 1; axis >= 0; --axis) {
        source += inStrides[perm[axis]];
        if (++coords[axis] < outShape[axis])
          break;
        source -= inStrides[perm[axis]] * outShape[axis];
        coords[axis] = 0;
      }
    }
    return interp::bytesToElementsAttr(type, out, inlineElements, name);
  }
  // i1 and sub-byte payloads go through the interpreter, which copies values unchanged too.
  auto tensor = interp::fromAttr(value);
  if (!tensor)
    return tensor.takeError();
  tensor->shape.assign(shape.begin(), shape.end());
  return interp::toElementsAttr(interp::transposeTensor(*tensor, perm), inlineElements, name);
}

} // namespace kiln
