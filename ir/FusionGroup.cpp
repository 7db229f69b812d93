//===- FusionGroup.cpp - what a kiln.fusion_group may hold -----------------===//
//
// The verifier states the contract codegen and the interpreter rely on, so a group formed by
// hand (a lit test) or by a later pass is held to the same rules as one formed by
// kiln-form-fusion-groups.
//
//===----------------------------------------------------------------------===//

#include "ir/KilnOps.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;

namespace kiln {

bool isElementwiseMap(Operation *op) { return op->hasTrait<OpTrait::ElementwiseMap>(); }

namespace {

/// Whether `shape` broadcasts (numpy) to `target`.
bool broadcastsTo(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> target) {
  if (shape.size() > target.size())
    return false;
  size_t lead = target.size() - shape.size();
  for (auto [d, size] : llvm::enumerate(shape))
    if (size != 1 && size != target[lead + d])
      return false;
  return true;
}

std::string shapeText(llvm::ArrayRef<int64_t> shape) {
  std::string text = "[";
  for (auto [i, size] : llvm::enumerate(shape))
    text += (i ? "x" : "") + std::to_string(size);
  return text + "]";
}

} // namespace

Operation *FusionGroupOp::getRoot() {
  Block &block = getBody().front();
  auto yield = llvm::dyn_cast<YieldOp>(block.getTerminator());
  if (!yield || yield.getValues().empty())
    return nullptr;
  Operation *root = yield.getValues().front().getDefiningOp();
  // The rounding cast the group ends with is bookkeeping; the op before it names the group.
  if (auto cast = llvm::dyn_cast_or_null<CastOp>(root))
    if (Operation *before = cast.getInput().getDefiningOp())
      return before;
  return root;
}

LogicalResult FusionGroupOp::verify() {
  Block &block = getBody().front();
  if (block.getNumArguments() != getInputs().size())
    return emitOpError() << "body takes " << block.getNumArguments() << " arguments for " << getInputs().size()
                         << " inputs; each input needs one block argument of its type";
  for (auto [i, input, argument] : llvm::enumerate(getInputs(), block.getArguments()))
    if (input.getType() != argument.getType())
      return emitOpError() << "block argument " << i << " has type " << argument.getType() << ", input " << i
                           << " has type " << input.getType();
  auto yield = llvm::dyn_cast<YieldOp>(block.getTerminator());
  if (!yield)
    return emitOpError() << "body must end in kiln.yield";
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError() << "kiln.yield gives " << yield.getValues().size()
                         << " values whose types differ from the group's results";
  if (getNumResults() != 1)
    return emitOpError() << "an elementwise group has one result, got " << getNumResults();
  auto resultShape = llvm::cast<RankedTensorType>(getResult(0).getType()).getShape();
  for (Operation &op : block.without_terminator()) {
    if (!isElementwiseMap(&op))
      return op.emitOpError() << "cannot be in an elementwise fusion group: only ops computed element by "
                                 "element (the ElementwiseMap trait) can";
    for (Value result : op.getResults()) {
      auto shape = llvm::cast<RankedTensorType>(result.getType()).getShape();
      if (!broadcastsTo(shape, resultShape))
        return op.emitOpError() << "result of shape " << shapeText(shape)
                                << " does not broadcast to the group's result shape " << shapeText(resultShape)
                                << "; a group computes every value at each result element";
    }
  }
  for (BlockArgument argument : block.getArguments()) {
    auto shape = llvm::cast<RankedTensorType>(argument.getType()).getShape();
    if (!broadcastsTo(shape, resultShape))
      return emitOpError() << "input " << argument.getArgNumber() << " of shape " << shapeText(shape)
                           << " does not broadcast to the result shape " << shapeText(resultShape);
  }
  return success();
}

} // namespace kiln
