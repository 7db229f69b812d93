//===- ConvGroupLowering.cpp - a conv fusion group as one cuDNN graph ------===//
//
// A `conv` kiln.fusion_group (passes/FormFusionGroups.cpp) is a channels-last 2-d convolution
// and the epilogue its cuDNN graph runs:
//   y = act(conv(x, w) + bias + residual)
// The body computes this in f32 from widened inputs and rounds once, which is what the graph
// does with fp32 intermediates. The body is read back into one ConvStep: each operand is traced
// to the group input it widens.
//
// Any of them may end in the next 8-bit convolution's quantization, y = quantize(act(...), s_y),
// or give both the value and its quantization (the step's `yQuantized`), when other steps read
// the value too: cuDNN writes int8 or E4M3 as round(value * (1 / s_y)) (`yScale`), saturated.
//
// A residual may be the dequantization of an 8-bit group input (one scale): the step reads it
// in 8 bits and multiplies it by `residualScale` before the add.
//
// An 8-bit convolution (kiln-fold-quantization's form) also holds the dequantizations of its
// input (one scale) and weight (one scale per output channel), both int8 or both E4M3:
//   y = act(conv(dequantize(x8), dequantize(w8)) + bias + residual)
// cuDNN sums int8 products exactly in int32 (E4M3 products in f32), multiplies each output
// channel's sum by s_x * s_w[k] (the step's `scale`, computed here in double and rounded once
// to f32), runs the epilogue in f32 and writes 8 bits as round(value * (1 / s_y)) (`yScale`),
// saturated: the interpreter divides, value / s_y, an f32 rounding apart.
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
  // INT8 or FP8: the operands are the dequantizations' 8-bit inputs; their scales multiply into
  // one per output channel.
  auto inputDq = conv.getInput().getDefiningOp<DequantizeOp>();
  auto weightDq = conv.getWeight().getDefiningOp<DequantizeOp>();
  if (static_cast<bool>(inputDq) != static_cast<bool>(weightDq))
    return opError(operation, "internal: an 8-bit conv group dequantizes both its input and its weight");
  std::vector<float> channelScales;
  if (inputDq) {
    operands.quantized = true;
    auto inputScale = groupConstantFloats(group, inputDq.getScale());
    if (!inputScale)
      return inputScale.takeError();
    auto weightScales = groupConstantFloats(group, weightDq.getScale());
    if (!weightScales)
      return weightScales.takeError();
    int64_t channels = llvm::cast<mlir::RankedTensorType>(conv.getResult().getType()).getShape().back();
    if (inputScale->size() != 1 || (weightScales->size() != 1 && (int64_t)weightScales->size() != channels))
      return opError(operation, "an 8-bit convolution takes one input scale and one weight scale per tensor or per "
                                "output channel");
    for (int64_t k = 0; k < channels; ++k)
      channelScales.push_back(
          static_cast<float>(inputScale->front() * (*weightScales)[weightScales->size() == 1 ? 0 : k]));
  }
  auto input = outer(inputDq ? inputDq.getInput() : conv.getInput());
  if (!input)
    return input.takeError();
  operands.input = *input;
  auto weight = outer(weightDq ? weightDq.getInput() : conv.getWeight());
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
  std::optional<float> yScale;
  mlir::Value current = conv.getResult();
  for (mlir::Operation &op : group.getBody().front().without_terminator()) {
    if (&op == conv.getOperation() || llvm::isa<CastOp, DequantizeOp>(op))
      continue;
    if (auto quantize = llvm::dyn_cast<QuantizeOp>(op)) {
      auto scale = groupConstantFloats(group, quantize.getScale());
      if (!scale)
        return scale.takeError();
      if (scale->size() != 1)
        return opError(operation, "internal: a conv group ends in one per-tensor quantize");
      yScale = static_cast<float>(1.0 / scale->front());
      current = quantize.getResult();
      continue;
    }
    if (auto add = llvm::dyn_cast<AddOp>(op)) {
      mlir::Value other = add.getLhs() == current ? add.getRhs() : add.getLhs();
      if (auto cast = other.getDefiningOp<CastOp>())
        other = cast.getInput();
      // A dequantized residual: the 8-bit group input, scaled in the graph (residualScale).
      std::optional<float> residualScale;
      if (auto residualDq = other.getDefiningOp<DequantizeOp>()) {
        auto scale = groupConstantFloats(group, residualDq.getScale());
        if (!scale)
          return scale.takeError();
        if (scale->size() != 1)
          return opError(operation, "internal: a conv group's dequantized residual has one scale");
        residualScale = static_cast<float>(scale->front());
        other = residualDq.getInput();
      }
      auto value = outer(other);
      if (!value)
        return value.takeError();
      auto type = llvm::cast<mlir::RankedTensorType>(value->getType());
      if (residualScale) {
        if (type.getShape() != resultType.getShape() || operands.residual)
          return opError(operation, "internal: a conv group dequantizes an operand that is not its residual");
        operands.residualScale = residualScale;
      }
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
  if (operands.quantized)
    lowering->step.scale = newF32Weights(lowering->name + ".scale", channelScales);
  if (yScale)
    lowering->step.yScale = newF32Weights(lowering->name + ".y_scale", {*yScale});
  if (operands.residualScale)
    lowering->step.residualScale = newF32Weights(lowering->name + ".residual_scale", {*operands.residualScale});
  // Two results: the value and its quantization, both written by the graph.
  if (group.getNumResults() == 2) {
    auto quantized = describeValue(group.getResult(1));
    if (!quantized)
      return opError(operation, llvm::toString(quantized.takeError()));
    lowering->step.yQuantized = defineResult(group.getResult(1), lowering->name + "#quantized", *quantized);
  }
  return finishConvStep(operation, *lowering, conv.getPads(), group.getResult(0));
}

} // namespace kiln::codegen
