//===- MatMul.cpp - MatMul, Gemm, Einsum, Softmax, LogSoftmax handlers -----===//

#include "frontend/NodeContext.h"
#include "frontend/OnnxShapes.h"
#include "frontend/OpTable.h"

#include "onnx/onnx.pb.h"

using namespace mlir;

namespace kiln::frontend {
namespace {

llvm::Error importMatMul(NodeContext &ctx) {
  auto a = ctx.input(0), b = ctx.input(1);
  if (!a)
    return a.takeError();
  if (!b)
    return b.takeError();
  return ctx.buildInto0("matmul", {*a, *b});
}

llvm::Error importGemm(NodeContext &ctx) {
  auto operands = ctx.inputs(3, 2);
  if (!operands)
    return operands.takeError();
  return ctx.buildInto0("gemm", *operands,
                        {ctx.f32("alpha", ctx.attrFloat("alpha", 1.0f)),
                         ctx.f32("beta", ctx.attrFloat("beta", 1.0f)),
                         ctx.boolean("trans_a", ctx.attrInt("transA", 0) != 0),
                         ctx.boolean("trans_b", ctx.attrInt("transB", 0) != 0)});
}

llvm::Error importEinsum(NodeContext &ctx) {
  auto operands = ctx.inputs();
  if (!operands)
    return operands.takeError();
  return ctx.buildInto0("einsum", *operands, {ctx.str("equation", ctx.attrString("equation", ""))});
}

/// Softmax and LogSoftmax. Before opset 13 they worked on the input coerced to 2-d at `axis`
/// (default 1); that is a softmax over the flattened trailing axes, so reshape around it.
llvm::Error importSoftmax(NodeContext &ctx) {
  auto x = ctx.input(0);
  if (!x)
    return x.takeError();
  llvm::StringRef op = ctx.node().op_type() == "Softmax" ? "softmax" : "log_softmax";
  auto type = llvm::cast<RankedTensorType>(x->getType());
  bool legacy = ctx.opset() < 13;
  auto axis = nodeAxis(ctx, ctx.attrInt("axis", legacy ? 1 : -1), type.getRank());
  if (!axis)
    return axis.takeError();
  if (!legacy || *axis == type.getRank() - 1)
    return ctx.buildInto0(op, {*x}, {ctx.i64("axis", *axis)}, {type});
  auto flat = flattenShape(type.getShape(), *axis);
  if (!flat)
    return ctx.error(llvm::toString(flat.takeError()));
  auto flatType = RankedTensorType::get(*flat, type.getElementType());
  auto reshaped = ctx.buildValue("reshape", {*x}, {}, {flatType});
  if (!reshaped)
    return reshaped.takeError();
  auto softmax = ctx.buildValue(op, {*reshaped}, {ctx.i64("axis", 1)}, {flatType});
  if (!softmax)
    return softmax.takeError();
  return ctx.buildInto0("reshape", {*softmax}, {}, {type});
}

} // namespace

void registerMatMulOps(OpTable &table) {
  table.add("MatMul", 9, kMaxOpset, importMatMul);
  table.add("Gemm", 11, kMaxOpset, importGemm);
  table.add("Einsum", 12, kMaxOpset, importEinsum);
  table.add("Softmax", 11, kMaxOpset, importSoftmax);
  table.add("LogSoftmax", 11, kMaxOpset, importSoftmax);
}

} // namespace kiln::frontend
