//===- Quantization.cpp - QuantizeLinear and DequantizeLinear handlers -----===//

#include "frontend/NodeContext.h"
#include "frontend/OpTable.h"
#include "frontend/TensorConversion.h"

#include "onnx/onnx.pb.h"

using namespace mlir;

namespace kiln::frontend {
namespace {

/// Scale, zero point (a zero of `zeroElement` when absent) and normalized axis.
llvm::Error quantParams(NodeContext &ctx, Type zeroElement, SmallVectorImpl<Value> &operands,
                        SmallVectorImpl<NamedAttribute> &attrs) {
  if (ctx.attrInt("block_size", 0) != 0)
    return ctx.error("blocked quantization (block_size) is not supported");
  auto x = ctx.input(0), scale = ctx.input(1);
  if (!x)
    return x.takeError();
  if (!scale)
    return scale.takeError();
  operands.push_back(*x);
  operands.push_back(*scale);
  if (ctx.hasInput(2)) {
    auto zero = ctx.input(2);
    if (!zero)
      return zero.takeError();
    // onnxruntime's quantizer writes per-tensor bias parameters as a [1] scale with a scalar
    // zero point (the spec asks for one shape; onnxruntime accepts it): one element each is
    // per-tensor whatever the rank, so the zero point takes the scale's shape.
    mlir::RankedTensorType scaleType = ctx.inputType(1), zeroType = ctx.inputType(2);
    if (scaleType.getShape() != zeroType.getShape() && scaleType.getNumElements() == 1 &&
        zeroType.getNumElements() == 1) {
      auto reshaped = ctx.buildValue("reshape", {*zero}, {}, {scaleType.clone(zeroType.getElementType())});
      if (!reshaped)
        return reshaped.takeError();
      zero = *reshaped;
    }
    operands.push_back(*zero);
  } else {
    HostTensor zero;
    zero.shape.assign(ctx.inputType(1).getShape().begin(), ctx.inputType(1).getShape().end());
    zero.values.assign(ctx.inputType(1).getNumElements(), 0);
    operands.push_back(ctx.constant(zero, zeroElement));
  }
  // The axis matters only for per-axis parameters (a scale with more than one element).
  int64_t axis = 0;
  if (ctx.inputType(1).getNumElements() > 1) {
    auto normalized = nodeAxis(ctx, ctx.attrInt("axis", 1), ctx.inputType(0).getRank());
    if (!normalized)
      return normalized.takeError();
    axis = *normalized;
  }
  attrs.push_back(ctx.i64("axis", axis));
  return llvm::Error::success();
}

llvm::Error importQuantize(NodeContext &ctx) {
  // The result type: the zero point's, else opset 21's output_dtype, else uint8.
  Type zeroElement = IntegerType::get(ctx.context(), 8, IntegerType::Unsigned);
  if (ctx.hasInput(2)) {
    zeroElement = ctx.inputType(2).getElementType();
  } else if (int64_t dtype = ctx.attrInt("output_dtype", 0)) {
    auto element = convertElementType(*ctx.context(), (int32_t)dtype);
    if (!element)
      return ctx.error("output_dtype: " + llvm::toString(element.takeError()));
    zeroElement = *element;
  }
  SmallVector<Value> operands;
  SmallVector<NamedAttribute> attrs;
  if (auto err = quantParams(ctx, zeroElement, operands, attrs))
    return err;
  attrs.push_back(ctx.boolean("saturate", ctx.attrInt("saturate", 1) != 0));
  return ctx.buildInto0("quantize", operands, attrs, {ctx.inputType(0).clone(zeroElement)});
}

llvm::Error importDequantize(NodeContext &ctx) {
  SmallVector<Value> operands;
  SmallVector<NamedAttribute> attrs;
  if (auto err = quantParams(ctx, ctx.inputType(0).getElementType(), operands, attrs))
    return err;
  return ctx.buildInto0("dequantize", operands, attrs,
                        {ctx.inputType(0).clone(ctx.inputType(1).getElementType())});
}

} // namespace

void registerQuantizationOps(OpTable &table) {
  table.add("QuantizeLinear", 10, kMaxOpset, importQuantize);
  table.add("DequantizeLinear", 10, kMaxOpset, importDequantize);
}

} // namespace kiln::frontend
