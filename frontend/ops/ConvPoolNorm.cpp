//===- ConvPoolNorm.cpp - convolution, pooling and normalization handlers --===//

#include "frontend/NodeContext.h"
#include "frontend/OpTable.h"

#include "onnx/onnx.pb.h"

using namespace mlir;

namespace kiln::frontend {
namespace {

/// Spatial parameters of a conv or pool node with ONNX defaults and auto_pad resolved.
struct Window {
  std::vector<int64_t> kernel, strides, dilations, pads;
};

llvm::Expected<Window> resolveWindow(NodeContext &ctx, llvm::ArrayRef<int64_t> input,
                                     std::vector<int64_t> kernel) {
  size_t spatial = input.size() < 2 ? 0 : input.size() - 2;
  Window w;
  w.kernel = std::move(kernel);
  w.strides = ctx.attrInts("strides", std::vector<int64_t>(spatial, 1));
  w.dilations = ctx.attrInts("dilations", std::vector<int64_t>(spatial, 1));
  w.pads = ctx.attrInts("pads", std::vector<int64_t>(2 * spatial, 0));
  if (w.kernel.size() != spatial || w.strides.size() != spatial || w.dilations.size() != spatial ||
      w.pads.size() != 2 * spatial)
    return ctx.error("kernel_shape, strides, dilations and pads must match the " +
                     std::to_string(spatial) + " spatial axes of input " + formatShape(input));
  std::string autoPad = ctx.attrString("auto_pad", "NOTSET");
  if (autoPad == "VALID") {
    std::fill(w.pads.begin(), w.pads.end(), 0);
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    for (size_t i = 0; i < spatial; ++i) {
      if (w.strides[i] < 1)
        return ctx.error("strides must be >= 1");
      int64_t out = (input[i + 2] + w.strides[i] - 1) / w.strides[i];
      int64_t window = (w.kernel[i] - 1) * w.dilations[i] + 1;
      int64_t total = std::max<int64_t>((out - 1) * w.strides[i] + window - input[i + 2], 0);
      int64_t small = total / 2, large = total - small;
      w.pads[i] = autoPad == "SAME_UPPER" ? small : large;
      w.pads[i + spatial] = autoPad == "SAME_UPPER" ? large : small;
    }
  } else if (autoPad != "NOTSET") {
    return ctx.error("auto_pad '" + autoPad + "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
  }
  return w;
}

llvm::Error importConv(NodeContext &ctx) {
  auto operands = ctx.inputs(3, 2);
  if (!operands)
    return operands.takeError();
  auto input = ctx.inputType(0).getShape(), weight = ctx.inputType(1).getShape();
  if (weight.size() < 3)
    return ctx.error("weight must have rank >= 3, got " + formatShape(weight));
  auto window = resolveWindow(ctx, input, ctx.attrInts("kernel_shape",
                                                       std::vector<int64_t>(weight.begin() + 2, weight.end())));
  if (!window)
    return window.takeError();
  return ctx.buildInto0("conv", *operands,
                        {ctx.i64Array("strides", window->strides),
                         ctx.i64Array("dilations", window->dilations),
                         ctx.i64Array("pads", window->pads), ctx.i64("group", ctx.attrInt("group", 1))});
}

llvm::Error importConvTranspose(NodeContext &ctx) {
  auto operands = ctx.inputs(3, 2);
  if (!operands)
    return operands.takeError();
  auto input = ctx.inputType(0).getShape(), weight = ctx.inputType(1).getShape();
  if (weight.size() < 3 || input.size() != weight.size())
    return ctx.error("input and weight must have one rank >= 3");
  size_t spatial = input.size() - 2;
  std::vector<int64_t> kernel(weight.begin() + 2, weight.end());
  auto strides = ctx.attrInts("strides", std::vector<int64_t>(spatial, 1));
  auto dilations = ctx.attrInts("dilations", std::vector<int64_t>(spatial, 1));
  auto pads = ctx.attrInts("pads", std::vector<int64_t>(2 * spatial, 0));
  auto outputPadding = ctx.attrInts("output_padding", std::vector<int64_t>(spatial, 0));
  auto outputShape = ctx.attrInts("output_shape");
  std::string autoPad = ctx.attrString("auto_pad", "NOTSET");
  if (strides.size() != spatial || dilations.size() != spatial || pads.size() != 2 * spatial ||
      outputPadding.size() != spatial)
    return ctx.error("strides, dilations, pads and output_padding must match the spatial axes");
  if (outputShape.size() > spatial)
    outputShape.erase(outputShape.begin(), outputShape.begin() + (outputShape.size() - spatial));
  if (outputShape.empty() && (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER"))
    for (size_t i = 0; i < spatial; ++i)
      outputShape.push_back(input[i + 2] * strides[i]);
  if (autoPad == "VALID")
    std::fill(pads.begin(), pads.end(), 0);
  if (!outputShape.empty()) {
    if (outputShape.size() != spatial)
      return ctx.error("output_shape must give the " + std::to_string(spatial) + " spatial sizes");
    for (size_t i = 0; i < spatial; ++i) {
      int64_t total = strides[i] * (input[i + 2] - 1) + outputPadding[i] +
                      ((kernel[i] - 1) * dilations[i] + 1) - outputShape[i];
      if (total < 0) {
        // The requested output is larger than the full transposed conv: ONNX grows the
        // output padding at the end.
        outputPadding[i] -= total;
        total = 0;
      }
      // The ONNX spec: SAME_UPPER puts the odd pad at the end, everything else at the start.
      bool upper = autoPad == "SAME_UPPER";
      pads[i] = upper ? total / 2 : total - total / 2;
      pads[i + spatial] = total - pads[i];
    }
  }
  return ctx.buildInto0("conv_transpose", *operands,
                        {ctx.i64Array("strides", strides), ctx.i64Array("dilations", dilations),
                         ctx.i64Array("pads", pads), ctx.i64Array("output_padding", outputPadding),
                         ctx.i64("group", ctx.attrInt("group", 1))});
}

llvm::Error importPool(NodeContext &ctx) {
  auto x = ctx.input(0);
  if (!x)
    return x.takeError();
  bool isMax = ctx.node().op_type() == "MaxPool";
  if (isMax && ctx.hasOutput(1))
    return ctx.error("the Indices output is not supported; use MaxPool without it");
  if (isMax && ctx.attrInt("storage_order", 0) != 0)
    return ctx.error("storage_order=1 (column major) is not supported");
  auto window = resolveWindow(ctx, ctx.inputType(0).getShape(), ctx.attrInts("kernel_shape"));
  if (!window)
    return window.takeError();
  SmallVector<NamedAttribute> attrs = {
      ctx.i64Array("kernel_shape", window->kernel), ctx.i64Array("strides", window->strides),
      ctx.i64Array("dilations", window->dilations), ctx.i64Array("pads", window->pads),
      ctx.boolean("ceil_mode", ctx.attrInt("ceil_mode", 0) != 0)};
  if (!isMax)
    attrs.push_back(ctx.boolean("count_include_pad", ctx.attrInt("count_include_pad", 0) != 0));
  return ctx.buildInto0(isMax ? "max_pool" : "avg_pool", {*x}, attrs);
}

llvm::Error importGlobalPool(NodeContext &ctx) {
  auto x = ctx.input(0);
  if (!x)
    return x.takeError();
  return ctx.buildInto0(ctx.node().op_type() == "GlobalMaxPool" ? "global_max_pool" : "global_avg_pool",
                        {*x});
}

llvm::Error importBatchNorm(NodeContext &ctx) {
  if (ctx.attrInt("training_mode", 0) != 0)
    return ctx.error("training_mode=1; Kiln compiles inference graphs (export with model.eval())");
  auto operands = ctx.inputs(5, 5);
  if (!operands)
    return operands.takeError();
  return ctx.buildInto0("batch_norm", *operands, {ctx.f32("epsilon", ctx.attrFloat("epsilon", 1e-5f))});
}

llvm::Error importInstanceNorm(NodeContext &ctx) {
  auto operands = ctx.inputs(3, 3);
  if (!operands)
    return operands.takeError();
  return ctx.buildInto0("instance_norm", *operands,
                        {ctx.f32("epsilon", ctx.attrFloat("epsilon", 1e-5f))});
}

llvm::Error importLayerNorm(NodeContext &ctx) {
  auto operands = ctx.inputs(3, 2);
  if (!operands)
    return operands.takeError();
  if (ctx.attrInt("stash_type", 1) != 1)
    return ctx.error("stash_type other than float is not supported");
  auto axis = nodeAxis(ctx, ctx.attrInt("axis", -1), ctx.inputType(0).getRank());
  if (!axis)
    return axis.takeError();
  float epsilon = ctx.attrFloat("epsilon", 1e-5f);
  if (auto err = ctx.buildInto0("layer_norm", *operands,
                                {ctx.i64("axis", *axis), ctx.f32("epsilon", epsilon)}))
    return err;
  if (!ctx.hasOutput(1) && !ctx.hasOutput(2))
    return llvm::Error::success();
  // The optional Mean and InvStdDev outputs, spelled out with kiln ops: over axes [axis, rank),
  // mean = E[x] and inv_std_dev = 1 / sqrt(E[(x - mean)^2] + epsilon), dims kept.
  auto type = ctx.inputType(0);
  std::vector<int64_t> axes;
  Shape statShape(type.getShape().begin(), type.getShape().end());
  for (int64_t a = *axis; a < type.getRank(); ++a) {
    axes.push_back(a);
    statShape[a] = 1;
  }
  // stash_type float: the statistics are f32 whatever the input's element type.
  auto f32 = Float32Type::get(ctx.context());
  auto statType = RankedTensorType::get(statShape, f32);
  Value x = (*operands)[0];
  if (type.getElementType() != f32) {
    auto widened = ctx.buildValue("cast", {x}, {}, {type.clone(f32)});
    if (!widened)
      return widened.takeError();
    x = *widened;
  }
  Value axesValue = ctx.i64Constant(axes);
  auto mean = ctx.buildValue("reduce_mean", {x, axesValue}, {ctx.boolean("keepdims", true)}, {statType});
  if (!mean)
    return mean.takeError();
  auto diff = ctx.buildValue("sub", {x, *mean});
  if (!diff)
    return diff.takeError();
  auto square = ctx.buildValue("mul", {*diff, *diff});
  if (!square)
    return square.takeError();
  auto variance = ctx.buildValue("reduce_mean", {*square, axesValue}, {ctx.boolean("keepdims", true)}, {statType});
  if (!variance)
    return variance.takeError();
  HostTensor eps;
  eps.values = {epsilon};
  auto shifted = ctx.buildValue("add", {*variance, ctx.constant(eps, f32)});
  if (!shifted)
    return shifted.takeError();
  auto root = ctx.buildValue("sqrt", {*shifted}, {}, {statType});
  if (!root)
    return root.takeError();
  auto inverse = ctx.buildValue("reciprocal", {*root}, {}, {statType});
  if (!inverse)
    return inverse.takeError();
  ctx.setOutput(1, *mean);
  ctx.setOutput(2, *inverse);
  return llvm::Error::success();
}

llvm::Error importGroupNorm(NodeContext &ctx) {
  auto operands = ctx.inputs(3, 3);
  if (!operands)
    return operands.takeError();
  int64_t groups = ctx.attrInt("num_groups", 0);
  auto input = ctx.inputType(0);
  if (input.getRank() < 3 || groups < 1 || input.getShape()[1] % groups != 0)
    return ctx.error("num_groups must divide the channels of a rank >= 3 input");
  int64_t channels = input.getShape()[1];
  // Opset 18 gives scale and bias per group; kiln.group_norm takes them per channel.
  if (ctx.opset() < 21 && groups != channels) {
    for (size_t i = 1; i < 3; ++i) {
      const HostTensor *perGroup = ctx.constantInput(i);
      if (!perGroup)
        return ctx.error("opset-18 GroupNormalization needs constant scale and bias (they are "
                         "per group); re-export with opset 21");
      HostTensor perChannel = *perGroup;
      perChannel.shape = {channels};
      perChannel.values.clear();
      for (int64_t c = 0; c < channels; ++c)
        perChannel.values.push_back(perGroup->values.at(c / (channels / groups)));
      (*operands)[i] = ctx.constant(perChannel, input.getElementType());
    }
  }
  return ctx.buildInto0("group_norm", *operands,
                        {ctx.i64("num_groups", groups), ctx.f32("epsilon", ctx.attrFloat("epsilon", 1e-5f))});
}

} // namespace

void registerConvPoolNormOps(OpTable &table) {
  table.add("Conv", 1, kMaxOpset, importConv);
  table.add("ConvTranspose", 1, kMaxOpset, importConvTranspose);
  table.add("MaxPool", 8, kMaxOpset, importPool);
  table.add("AveragePool", 7, kMaxOpset, importPool);
  table.add("GlobalAveragePool", 1, kMaxOpset, importGlobalPool);
  table.add("GlobalMaxPool", 1, kMaxOpset, importGlobalPool);
  table.add("BatchNormalization", 9, kMaxOpset, importBatchNorm);
  table.add("InstanceNormalization", 6, kMaxOpset, importInstanceNorm);
  table.add("LayerNormalization", 17, kMaxOpset, importLayerNorm);
  table.add("GroupNormalization", 18, kMaxOpset, importGroupNorm);
}

} // namespace kiln::frontend
