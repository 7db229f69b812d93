//===- Reduction.cpp - Reduce*, ArgMax/ArgMin and CumSum handlers ----------===//

#include "frontend/NodeContext.h"
#include "frontend/OpTable.h"

#include "onnx/onnx.pb.h"

#include "llvm/ADT/StringMap.h"

using namespace mlir;

namespace kiln::frontend {
namespace {

const llvm::StringMap<llvm::StringRef> &reduceOps() {
  static const llvm::StringMap<llvm::StringRef> ops = {
      {"ReduceMean", "reduce_mean"}, {"ReduceSum", "reduce_sum"}, {"ReduceMax", "reduce_max"},
      {"ReduceMin", "reduce_min"}, {"ReduceProd", "reduce_prod"}, {"ReduceL1", "reduce_l1"},
      {"ReduceL2", "reduce_l2"}, {"ReduceSumSquare", "reduce_sum_square"},
      {"ReduceLogSum", "reduce_log_sum"}, {"ReduceLogSumExp", "reduce_log_sum_exp"}};
  return ops;
}

/// Axes moved from an attribute to an input in opset 13 (ReduceSum) and 18 (the others).
bool axesIsInput(const NodeContext &ctx) {
  return ctx.node().op_type() == "ReduceSum" ? ctx.opset() >= 13 : ctx.opset() >= 18;
}

llvm::Error importReduce(NodeContext &ctx) {
  auto x = ctx.input(0);
  if (!x)
    return x.takeError();
  auto type = llvm::cast<RankedTensorType>(x->getType());
  bool keepDims = ctx.attrInt("keepdims", 1) != 0;
  bool noop = ctx.attrInt("noop_with_empty_axes", 0) != 0;
  SmallVector<Value, 2> operands = {*x};
  std::optional<std::vector<int64_t>> axes;
  if (axesIsInput(ctx)) {
    if (ctx.hasInput(1)) {
      auto axesValue = ctx.input(1);
      if (!axesValue)
        return axesValue.takeError();
      operands.push_back(*axesValue);
      if (const HostTensor *constant = ctx.constantInput(1))
        axes = constant->asInts();
    } else {
      axes = std::vector<int64_t>{};
    }
  } else {
    axes = ctx.attrInts("axes");
    if (!axes->empty())
      operands.push_back(ctx.i64Constant(*axes));
  }
  RankedTensorType resultType;
  if (axes) {
    auto normalized = normalizeReduceAxes(type.getRank(), llvm::ArrayRef<int64_t>(*axes), noop);
    if (!normalized)
      return ctx.error(llvm::toString(normalized.takeError()));
    auto shape = reduceShape(type.getShape(), *normalized, keepDims);
    resultType = RankedTensorType::get(*shape, type.getElementType());
  } else if (auto declared = ctx.declaredOutputType(0)) {
    resultType = *declared;
  } else {
    return ctx.constantInts(1, "axes").takeError();
  }
  return ctx.buildInto0(reduceOps().lookup(ctx.node().op_type()), operands,
                        {ctx.boolean("keepdims", keepDims), ctx.boolean("noop_with_empty_axes", noop)},
                        {resultType});
}

llvm::Error importArg(NodeContext &ctx) {
  auto x = ctx.input(0);
  if (!x)
    return x.takeError();
  auto axis = nodeAxis(ctx, ctx.attrInt("axis", 0), ctx.inputType(0).getRank());
  if (!axis)
    return axis.takeError();
  return ctx.buildInto0(ctx.node().op_type() == "ArgMax" ? "argmax" : "argmin", {*x},
                        {ctx.i64("axis", *axis), ctx.boolean("keepdims", ctx.attrInt("keepdims", 1) != 0),
                         ctx.boolean("select_last_index", ctx.attrInt("select_last_index", 0) != 0)});
}

llvm::Error importCumSum(NodeContext &ctx) {
  auto x = ctx.input(0), axis = ctx.input(1);
  if (!x)
    return x.takeError();
  if (!axis)
    return axis.takeError();
  return ctx.buildInto0("cumsum", {*x, *axis},
                        {ctx.boolean("exclusive", ctx.attrInt("exclusive", 0) != 0),
                         ctx.boolean("reverse", ctx.attrInt("reverse", 0) != 0)},
                        {x->getType()});
}

} // namespace

void registerReductionOps(OpTable &table) {
  for (const auto &entry : reduceOps())
    table.add(entry.getKey(), 1, kMaxOpset, importReduce);
  table.add("ArgMax", 1, kMaxOpset, importArg);
  table.add("ArgMin", 1, kMaxOpset, importArg);
  table.add("CumSum", 11, kMaxOpset, importCumSum);
}

} // namespace kiln::frontend
