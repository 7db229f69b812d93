//===- FusionGroup.cpp - what a kiln.fusion_group may hold -----------------===//
//
// The verifier states the contract codegen and the interpreter rely on, so a group formed by
// hand (a lit test) or by a later pass is held to the same rules as one formed by
// kiln-form-fusion-groups.
//
//===----------------------------------------------------------------------===//

#include "ir/KilnOps.h"
#include "ir/ShapeRules.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;

namespace kiln {

bool isElementwiseMap(Operation *op) { return op->hasTrait<OpTrait::ElementwiseMap>(); }

bool isPerTensorQuantization(Operation *op) {
  if (!llvm::isa<QuantizeOp, DequantizeOp>(op))
    return false;
  auto oneElement = [](Value v) { return llvm::cast<RankedTensorType>(v.getType()).getNumElements() == 1; };
  return oneElement(op->getOperand(1)) && oneElement(op->getOperand(2));
}

bool isGroupElementwise(Operation *op) { return isElementwiseMap(op) || isPerTensorQuantization(op); }

bool isRowGather(Operation *op, LayerNormOp norm) {
  auto gather = llvm::dyn_cast<GatherOp>(op);
  if (!gather || !norm || gather.getAxis() != 0)
    return false;
  auto shape = llvm::cast<RankedTensorType>(norm.getInput().getType()).getShape();
  int64_t rowSize = 1;
  for (int64_t d = static_cast<int64_t>(norm.getAxis()); d < static_cast<int64_t>(shape.size()); ++d)
    rowSize *= shape[d];
  auto table = llvm::cast<RankedTensorType>(gather.getInput().getType());
  return table.getRank() == 2 && llvm::isa<FloatType>(table.getElementType()) && table.getDimSize(1) == rowSize;
}

namespace {

std::string shapeText(llvm::ArrayRef<int64_t> shape) {
  std::string text = "[";
  for (auto [i, size] : llvm::enumerate(shape))
    text += (i ? "x" : "") + std::to_string(size);
  return text + "]";
}

/// Every value the body's ops compute broadcasts to `shape` (`what` names it in the error): the
/// kernel computes each of them at every element of that shape.
LogicalResult verifyValuesBroadcastTo(Block &block, llvm::ArrayRef<int64_t> shape, llvm::StringRef what) {
  for (Operation &op : block.without_terminator())
    for (Value result : op.getResults()) {
      auto own = llvm::cast<RankedTensorType>(result.getType()).getShape();
      if (!broadcastsTo(own, shape))
        return op.emitOpError() << "result of shape " << shapeText(own) << " does not broadcast to " << what << " "
                                << shapeText(shape) << "; a group computes every value at each result element";
    }
  return success();
}

/// A gemm group: one matmul of a 2-d right operand, then only what a cuBLASLt epilogue does
/// (bias row and residual adds, one ReLU or tanh GELU) and casts. Before the matmul, an 8-bit
/// GEMM's operands: kiln.dequantize of a group input, the weight's then transposed [1, 0]
/// (stored [N, K], as cuBLASLt's FP8 kernels take it).
LogicalResult verifyGemmBody(FusionGroupOp group) {
  Block &block = group.getBody().front();
  Operation *matmul = nullptr;
  for (Operation &op : block.without_terminator()) {
    if (auto dq = llvm::dyn_cast<DequantizeOp>(op); dq && !matmul) {
      if (!llvm::isa<BlockArgument>(dq.getInput()))
        return op.emitOpError() << "in a gemm fusion group must dequantize a group input";
      continue;
    }
    if (auto t = llvm::dyn_cast<TransposeOp>(op); t && !matmul) {
      if (t.getPerm() != llvm::ArrayRef<int64_t>{1, 0} || !t.getInput().getDefiningOp<DequantizeOp>())
        return op.emitOpError() << "in a gemm fusion group must transpose a dequantized 2-d weight, perm [1, 0]";
      continue;
    }
    if (auto product = llvm::dyn_cast<MatMulOp>(op)) {
      if (matmul)
        return op.emitOpError() << "is the second matmul of a gemm fusion group; a group has one";
      if (llvm::cast<RankedTensorType>(product.getRhs().getType()).getRank() != 2)
        return op.emitOpError() << "in a gemm fusion group must have a 2-d right operand (a weight)";
      matmul = &op;
      continue;
    }
    // An FP8 GEMM may end in its consumer's quantization (cuBLASLt's scaled FP8 D).
    bool epilogue = llvm::isa<CastOp, AddOp, ReluOp>(op) || (llvm::isa<QuantizeOp>(op) && isPerTensorQuantization(&op));
    if (auto gelu = llvm::dyn_cast<GeluOp>(op))
      epilogue = gelu.getApproximate() == "tanh";
    if (!epilogue)
      return op.emitOpError() << "cannot be in a gemm fusion group: its epilogue holds bias and residual adds, "
                                 "relu, tanh gelu, casts and a per-tensor quantize";
  }
  if (!matmul)
    return group.emitOpError() << "a gemm fusion group holds one kiln.matmul";
  return success();
}

/// A conv group: one channels-last 2-d kiln.conv, then only what its cuDNN graph's epilogue
/// does (bias and residual adds, one activation) and casts. An INT8 convolution also holds the
/// dequantizations of its input and weight, and any may hold its residual's (all of group
/// inputs); any may end in its consumer's per-tensor quantization (cuDNN's scaled int8 output).
LogicalResult verifyConvBody(FusionGroupOp group) {
  Block &block = group.getBody().front();
  Operation *terminator = block.getTerminator();
  // The quantize of the result: the group's only result, or (a convolution whose value other
  // steps read too) its second one, of the first (which may be the value's rounding to
  // its type, a cast).
  auto quantizesFirst = [&](Operation &quantize) {
    Value first = terminator->getOperand(0);
    auto rounding = first.getDefiningOp<CastOp>();
    return quantize.getOperand(0) == first || (rounding && quantize.getOperand(0) == rounding.getInput());
  };
  Operation *conv = nullptr;
  for (Operation &op : block.without_terminator()) {
    if (auto dq = llvm::dyn_cast<DequantizeOp>(op)) {
      if (!llvm::isa<BlockArgument>(dq.getInput()))
        return op.emitOpError() << "in a conv fusion group must dequantize a group input";
      continue;
    }
    if (llvm::isa<QuantizeOp>(op) && conv && isPerTensorQuantization(&op) &&
        &op == terminator->getOperands().back().getDefiningOp() &&
        (terminator->getNumOperands() == 1 || quantizesFirst(op)))
      continue;
    if (auto c = llvm::dyn_cast<ConvOp>(op)) {
      if (conv)
        return op.emitOpError() << "is the second conv of a conv fusion group; a group has one";
      if (!c.getChannelsLast() || llvm::cast<RankedTensorType>(c.getInput().getType()).getRank() != 4)
        return op.emitOpError() << "in a conv fusion group must be a channels_last 2-d convolution";
      conv = &op;
      continue;
    }
    if (!llvm::isa<CastOp, AddOp, ReluOp, ClipOp, SigmoidOp, HardSigmoidOp, HardSwishOp>(op))
      return op.emitOpError() << "cannot be in a conv fusion group: its epilogue holds bias and residual adds, "
                                 "relu, clip, sigmoid, hard_sigmoid, hard_swish, casts and a per-tensor quantize "
                                 "of the result, and dequantizations of group inputs (its input, weight and residual)";
  }
  if (!conv)
    return group.emitOpError() << "a conv fusion group holds one kiln.conv";
  if (group.getNumResults() == 2 && !terminator->getOperand(1).getDefiningOp<QuantizeOp>())
    return group.emitOpError() << "a conv fusion group's second result is the quantization of its first";
  return success();
}

/// A norm group: one kiln.layer_norm whose scale and bias are group inputs; before it,
/// elementwise ops computing its input (the prologue); after it, elementwise ops reading its
/// result, each other and group inputs (the epilogue: not the prologue's values, which the
/// kernel no longer holds when it normalizes). Every value has the layer_norm's shape or
/// broadcasts to it; every result is a value of that shape the body computes.
LogicalResult verifyNormBody(FusionGroupOp group) {
  Block &block = group.getBody().front();
  // The layer_norm whose rows a row gather's table rows must match (the last, as a group holds
  // one: a second is an error below).
  LayerNormOp normalized;
  for (LayerNormOp ln : block.getOps<LayerNormOp>())
    normalized = ln;
  LayerNormOp norm;
  for (Operation &op : block.without_terminator()) {
    if (auto gather = llvm::dyn_cast<GatherOp>(op); gather && isRowGather(gather, normalized)) {
      if (norm)
        return op.emitOpError() << "in a norm fusion group must come before its layer_norm";
      if (!llvm::isa<BlockArgument>(gather.getInput()) || !llvm::isa<BlockArgument>(gather.getIndices()))
        return op.emitOpError() << "in a norm fusion group must read its table and indices from group inputs";
      continue;
    }
    if (auto ln = llvm::dyn_cast<LayerNormOp>(op)) {
      if (norm)
        return op.emitOpError() << "is the second layer_norm of a norm fusion group; a group has one";
      norm = ln;
      for (Value v : {ln.getScale(), ln.getBias()})
        if (v && !llvm::isa<BlockArgument>(v))
          return op.emitOpError() << "in a norm fusion group must read its scale and bias from group inputs";
      continue;
    }
    if (!isGroupElementwise(&op))
      return op.emitOpError() << "cannot be in a norm fusion group: around its layer_norm only ops computed "
                                 "element by element (the ElementwiseMap trait, per-tensor quantize/dequantize) "
                                 "and, before it, a gather of whole rows of the normalized length can";
    if (norm)
      for (Value operand : op.getOperands())
        if (Operation *def = operand.getDefiningOp(); def && def->isBeforeInBlock(norm))
          return op.emitOpError() << "after the layer_norm of a norm fusion group reads a value computed before it";
  }
  if (!norm)
    return group.emitOpError() << "a norm fusion group holds one kiln.layer_norm";
  auto shape = llvm::cast<RankedTensorType>(norm.getResult().getType()).getShape();
  if (failed(verifyValuesBroadcastTo(block, shape, "the layer_norm's shape")))
    return failure();
  for (Value yielded : block.getTerminator()->getOperands())
    if (llvm::isa<BlockArgument>(yielded) || llvm::cast<RankedTensorType>(yielded.getType()).getShape() != shape)
      return group.emitOpError() << "a norm fusion group's results are values its body computes, of the "
                                    "layer_norm's shape " << shapeText(shape);
  return success();
}

/// The constant outside the group that body value `value` (a block argument) is; null otherwise.
ConstantOp constantInput(FusionGroupOp group, Value value) {
  auto argument = llvm::dyn_cast<BlockArgument>(value);
  return argument ? group.getInputs()[argument.getArgNumber()].getDefiningOp<ConstantOp>() : nullptr;
}

bool isOneElementConstantInput(FusionGroupOp group, Value value) {
  return constantInput(group, value) && llvm::cast<RankedTensorType>(value.getType()).getNumElements() == 1;
}

/// An elementwise op of a gather or pool group (`kind`) converting the group's chain, its
/// first operand `chain`: it reads one-element constants besides and keeps the chain's shape.
LogicalResult verifyChainConversion(FusionGroupOp group, Operation &op, Value chain, llvm::StringRef kind) {
  for (Value operand : op.getOperands().drop_front())
    if (!isOneElementConstantInput(group, operand))
      return op.emitOpError() << "in a " << kind << " fusion group reads, besides the chain, only one-element "
                                 "constants";
  if (llvm::cast<RankedTensorType>(op.getResult(0).getType()).getShape() !=
      llvm::cast<RankedTensorType>(chain.getType()).getShape())
    return op.emitOpError() << "in a " << kind << " fusion group keeps the chain's shape";
  return success();
}

/// A gather group: one chain from the first group input, elementwise ops first (each reading
/// the chain and one-element constants besides), then index maps (reshape, transpose, a
/// constant-mode pad by constant non-negative amounts), at least one a kernel of its own (not a
/// reshape); the last op's result is the group's.
LogicalResult verifyGatherBody(FusionGroupOp group) {
  Block &block = group.getBody().front();
  if (block.getNumArguments() == 0)
    return group.emitOpError() << "a gather fusion group reads its chain from its first input";
  Value chain = block.getArgument(0);
  bool indexMaps = false, moves = false;
  for (Operation &op : block.without_terminator()) {
    if (op.getNumOperands() == 0 || op.getOperand(0) != chain || op.getNumResults() != 1)
      return op.emitOpError() << "in a gather fusion group must read the previous op's result (the group's "
                                 "first input for the first op) as its first operand";
    if (llvm::isa<ReshapeOp>(op)) {
      indexMaps = true;
    } else if (llvm::isa<TransposeOp>(op)) {
      indexMaps = moves = true;
    } else if (auto pad = llvm::dyn_cast<PadOp>(op)) {
      ConstantOp constant = constantInput(group, pad.getPads());
      auto amounts = constant ? llvm::dyn_cast<mlir::DenseIntElementsAttr>(constant.getValue()) : nullptr;
      if (pad.getMode() != "constant" || !amounts || !isOneElementConstantInput(group, pad.getValue()) ||
          llvm::any_of(amounts.getValues<int64_t>(), [](int64_t amount) { return amount < 0; }))
        return op.emitOpError() << "in a gather fusion group pads in constant mode by constant non-negative "
                                   "amounts with a constant value";
      indexMaps = moves = true;
    } else if (isGroupElementwise(&op)) {
      if (indexMaps)
        return op.emitOpError() << "in a gather fusion group comes after an index map; elementwise ops come first";
      if (failed(verifyChainConversion(group, op, chain, "gather")))
        return failure();
    } else {
      return op.emitOpError() << "cannot be in a gather fusion group: it holds elementwise ops, then reshape, "
                                 "transpose and constant-mode pad";
    }
    chain = op.getResult(0);
  }
  if (!moves)
    return group.emitOpError() << "a gather fusion group moves elements: a transpose or a pad";
  if (block.getTerminator()->getOperand(0) != chain)
    return group.emitOpError() << "a gather fusion group yields its chain's last value";
  return success();
}

/// A pool group: one channels-last max_pool or avg_pool of the first group input, then a chain
/// of elementwise ops keeping its shape, each reading the chain and one-element constants
/// besides; the last op's result is the group's.
LogicalResult verifyPoolBody(FusionGroupOp group) {
  Block &block = group.getBody().front();
  auto ops = block.without_terminator();
  if (ops.empty() || block.getNumArguments() == 0)
    return group.emitOpError() << "a pool fusion group starts with a pool of its first input";
  Operation &pool = *ops.begin();
  auto channelsLast = pool.getAttrOfType<BoolAttr>("channels_last");
  if (!llvm::isa<MaxPoolOp, AvgPoolOp>(pool) || pool.getOperand(0) != block.getArgument(0) || !channelsLast ||
      !channelsLast.getValue())
    return pool.emitOpError() << "cannot start a pool fusion group: it starts with a channels_last kiln.max_pool or "
                                 "kiln.avg_pool of the group's first input";
  Value chain = pool.getResult(0);
  for (Operation &op : llvm::drop_begin(ops)) {
    if (!isGroupElementwise(&op) || op.getNumResults() != 1 || op.getOperand(0) != chain)
      return op.emitOpError() << "in a pool fusion group must be an elementwise op reading the previous op's result "
                                 "as its first operand";
    if (failed(verifyChainConversion(group, op, chain, "pool")))
      return failure();
    chain = op.getResult(0);
  }
  if (chain == pool.getResult(0))
    return group.emitOpError() << "a pool fusion group converts the pool's value: a pool alone is no group";
  if (block.getTerminator()->getOperand(0) != chain)
    return group.emitOpError() << "a pool fusion group yields its chain's last value";
  return success();
}

} // namespace

Operation *FusionGroupOp::getMatmul() {
  if (getKind() != "gemm")
    return nullptr;
  for (Operation &op : getBody().front())
    if (llvm::isa<MatMulOp>(op))
      return &op;
  return nullptr;
}

Operation *FusionGroupOp::getConv() {
  if (getKind() != "conv")
    return nullptr;
  for (Operation &op : getBody().front())
    if (llvm::isa<ConvOp>(op))
      return &op;
  return nullptr;
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
  if (getKind() == "norm")
    return getNumResults() == 0 ? emitOpError() << "a norm fusion group has at least one result"
                                : verifyNormBody(*this);
  if (getKind() == "conv" && (getNumResults() == 1 || getNumResults() == 2))
    return verifyConvBody(*this);
  if (getNumResults() != 1)
    return emitOpError() << "a fusion group has one result (a norm group one or more, a conv group one or two), got "
                         << getNumResults();
  if (getKind() == "gemm")
    return verifyGemmBody(*this);
  if (getKind() == "gather")
    return verifyGatherBody(*this);
  if (getKind() == "pool")
    return verifyPoolBody(*this);
  auto resultShape = llvm::cast<RankedTensorType>(getResult(0).getType()).getShape();
  for (Operation &op : block.without_terminator())
    if (!isGroupElementwise(&op))
      return op.emitOpError() << "cannot be in an elementwise fusion group: only ops computed element by "
                                 "element (the ElementwiseMap trait, per-tensor quantize/dequantize) can";
  if (failed(verifyValuesBroadcastTo(block, resultShape, "the group's result shape")))
    return failure();
  for (BlockArgument argument : block.getArguments()) {
    auto shape = llvm::cast<RankedTensorType>(argument.getType()).getShape();
    if (!broadcastsTo(shape, resultShape))
      return emitOpError() << "input " << argument.getArgNumber() << " of shape " << shapeText(shape)
                           << " does not broadcast to the result shape " << shapeText(resultShape);
  }
  return success();
}

} // namespace kiln
