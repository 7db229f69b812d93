//===- ConvGroupLowering.cpp - a conv fusion group as one cuDNN graph ------===//
//
// A `conv` kiln.fusion_group (passes/FormFusionGroups.cpp) is a channels-last 2-d convolution
// and the epilogue its cuDNN graph runs:
//   y = act(conv(x, w) + bias + residual)
// The body computes this in f32 from widened inputs and rounds once, which is what the graph
// does with fp32 intermediates. The body is read back into one ConvStep: each operand is traced
// to the group input it widens.
//
//===----------------------------------------------------------------------===//

#include "codegen/OpDescription.h"
#include "codegen/PlanBuilderImpl.h"

#include "ir/KilnOps.h"

#include "mlir/IR/Matchers.h"

namespace kiln::codegen {

namespace {

/// The value of a rank-0 constant (a clip bound), if `value` is one.
std::optional<float> scalarBound(mlir::Value value) {
  mlir::ElementsAttr attr;
  if (!mlir::matchPattern(value, mlir::m_Constant(&attr)) || attr.getNumElements() != 1)
    return std::nullopt;
  auto floats = attr.tryGetValues<mlir::APFloat>();
  if (!floats)
    return std::nullopt;
  bool lost = false;
  llvm::APFloat bound = *floats->begin();
  bound.convert(llvm::APFloat::IEEEsingle(), llvm::APFloat::rmNearestTiesToEven, &lost);
  return bound.convertToFloat();
}

} // namespace

llvm::Error PlanBuilderImpl::lowerConvGroup(mlir::Operation *operation) {
  auto group = llvm::cast<FusionGroupOp>(operation);
  auto conv = llvm::dyn_cast_or_null<ConvOp>(group.getConv());
  if (!conv)
    return opError(operation, "internal: a conv group without its convolution");
  auto outer = [&](mlir::Value value) -> llvm::Expected<mlir::Value> {
    auto index = groupInputOf(group, value);
    if (!index)
      return index.takeError();
    return group.getInputs()[*index];
  };
  ConvOperands operands;
  operands.result = group.getResult(0);
  auto input = outer(conv.getInput());
  if (!input)
    return input.takeError();
  operands.input = *input;
  auto weight = outer(conv.getWeight());
  if (!weight)
    return weight.takeError();
  operands.weight = *weight;
  if (conv.getBias()) {
    auto bias = outer(conv.getBias());
    if (!bias)
      return bias.takeError();
    operands.bias = *bias;
  }

  // The epilogue, in body order after the convolution.
  auto resultType = llvm::cast<mlir::RankedTensorType>(conv.getResult().getType());
  int64_t channels = resultType.getShape().back();
  plan::Activation activation = plan::Activation::None;
  float alpha = 0, beta = 0;
  mlir::Value current = conv.getResult();
  for (mlir::Operation &op : group.getBody().front().without_terminator()) {
    if (&op == conv.getOperation() || llvm::isa<CastOp>(op))
      continue;
    if (auto add = llvm::dyn_cast<AddOp>(op)) {
      mlir::Value other = add.getLhs() == current ? add.getRhs() : add.getLhs();
      auto value = outer(other);
      if (!value)
        return value.takeError();
      auto type = llvm::cast<mlir::RankedTensorType>(value->getType());
      if (type.getShape() == resultType.getShape() && !operands.residual)
        operands.residual = *value;
      else if (type.getNumElements() == channels && !operands.bias)
        operands.bias = *value;
      else
        return opError(operation, "internal: a conv group adds a value that is neither its bias nor a residual");
      current = add.getResult();
      continue;
    }
    if (llvm::isa<ReluOp>(op)) {
      activation = plan::Activation::Relu;
    } else if (auto clip = llvm::dyn_cast<ClipOp>(op)) {
      auto lo = scalarBound(group.getInputs()[*groupInputOf(group, clip.getMin())]);
      auto hi = scalarBound(group.getInputs()[*groupInputOf(group, clip.getMax())]);
      if (!lo || !hi)
        return opError(operation, "internal: a conv group's clip has bounds that are not constants");
      activation = plan::Activation::Clip;
      alpha = *lo;
      beta = *hi;
    } else if (llvm::isa<SigmoidOp>(op)) {
      activation = plan::Activation::Sigmoid;
    } else if (auto hard = llvm::dyn_cast<HardSigmoidOp>(op)) {
      activation = plan::Activation::HardSigmoid;
      alpha = hard.getAlpha().convertToFloat();
      beta = hard.getBeta().convertToFloat();
    } else if (llvm::isa<HardSwishOp>(op)) {
      activation = plan::Activation::HardSwish;
    } else {
      return opError(operation, "internal: a conv group holds an op its epilogue cannot run");
    }
    current = op.getResult(0);
  }

  auto lowering = beginConvStep(operation, operands, conv.getStrides(), conv.getDilations(), conv.getGroup(),
                                /*channelsLast=*/true);
  if (!lowering)
    return lowering.takeError();
  lowering->step.math = mathFor(conv);
  lowering->step.activation = activation;
  lowering->step.activationAlpha = alpha;
  lowering->step.activationBeta = beta;
  return finishConvStep(operation, *lowering, conv.getPads(), group.getResult(0));
}

} // namespace kiln::codegen
