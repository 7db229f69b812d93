//===- ShapeOps.cpp - Constant, ConstantOfShape, Shape, Size, Identity, Dropout ===//
//
// Ops that produce no kiln op of their own: constants, shape queries (static, so always
// constants), and the ops that are identities at inference.
//
//===----------------------------------------------------------------------===//

#include "frontend/NodeContext.h"
#include "frontend/OpTable.h"
#include "frontend/TensorConversion.h"

#include "onnx/onnx.pb.h"

namespace kiln::frontend {
namespace {

using TP = onnx::TensorProto;

llvm::Error importConstant(NodeContext &ctx) {
  const onnx::AttributeProto *a = nullptr;
  for (const onnx::AttributeProto &attr : ctx.node().attribute()) {
    if (a)
      return ctx.error("has more than one value attribute; a Constant holds exactly one");
    a = &attr;
  }
  if (!a)
    return ctx.error("has no value attribute");
  HostTensor host;
  llvm::StringRef name = a->name();
  if (name == "value")
    return ctx.setTensorOutput(0, a->t());
  if (name == "value_float") {
    host.onnxType = TP::FLOAT;
    host.values = {a->f()};
  } else if (name == "value_floats") {
    host.onnxType = TP::FLOAT;
    host.shape = {a->floats_size()};
    host.values.assign(a->floats().begin(), a->floats().end());
  } else if (name == "value_int") {
    host.onnxType = TP::INT64;
    host.values = {(long double)a->i()};
  } else if (name == "value_ints") {
    host.onnxType = TP::INT64;
    host.shape = {a->ints_size()};
    host.values.assign(a->ints().begin(), a->ints().end());
  } else {
    return ctx.error("value attribute '" + name + "' is not supported (sparse and string "
                     "constants are not tensors Kiln can compute with)");
  }
  ctx.setConstantOutput(0, std::move(host));
  return llvm::Error::success();
}

/// ConstantOfShape: the shape is a constant input (or the model's declared output type).
llvm::Error importConstantOfShape(NodeContext &ctx) {
  std::vector<int64_t> shape;
  if (ctx.constantInput(0)) {
    shape = ctx.constantInput(0)->asInts();
  } else if (auto declared = ctx.declaredOutputType(0)) {
    shape.assign(declared->getShape().begin(), declared->getShape().end());
  } else {
    return ctx.constantInts(0, "input").takeError();
  }
  HostTensor fill;
  fill.onnxType = TP::FLOAT;
  fill.values = {0};
  if (const onnx::AttributeProto *a = ctx.attr("value")) {
    auto raw = decodeTensor(*ctx.context(), a->t(), ".");
    if (!raw)
      return ctx.error(llvm::toString(raw.takeError()));
    if (raw->type.getNumElements() != 1)
      return ctx.error("value attribute must hold exactly one element");
    fill = toHostTensor(*raw);
  }
  auto count = checkedElementCount(shape);
  if (!count)
    return ctx.error(llvm::toString(count.takeError()));
  HostTensor out;
  out.onnxType = fill.onnxType;
  out.shape.assign(shape.begin(), shape.end());
  if (*count <= ctx.foldElementLimit()) {
    out.values.assign(*count, fill.values[0]);
    ctx.setConstantOutput(0, std::move(out));
    return llvm::Error::success();
  }
  // Too large to fold further: a splat attribute holds one value whatever the shape.
  auto element = convertElementType(*ctx.context(), fill.onnxType);
  if (!element)
    return ctx.error(llvm::toString(element.takeError()));
  HostTensor one = fill;
  one.shape.clear();
  auto scalar = toDenseAttr(one, mlir::RankedTensorType::get({}, *element));
  ctx.setAttrOutput(0, mlir::DenseElementsAttr::get(
                           mlir::RankedTensorType::get(out.shape, *element),
                           scalar.getSplatValue<mlir::Attribute>()));
  return llvm::Error::success();
}

/// Identity and inference Dropout forward their input; Dropout's mask is all true.
llvm::Error importIdentity(NodeContext &ctx) {
  auto x = ctx.input(0);
  if (!x)
    return x.takeError();
  if (ctx.node().op_type() == "Dropout" && ctx.hasInput(2)) {
    // Only a constant false training_mode makes Dropout an identity.
    const HostTensor *training = ctx.constantInput(2);
    if (!training)
      return ctx.error("training_mode is an input computed at run time; Kiln compiles inference "
                       "graphs, so it must be a constant false (export with model.eval())");
    if (training->values.at(0) != 0)
      return ctx.error("training_mode is true; Kiln compiles inference graphs (export with "
                       "model.eval())");
  }
  ctx.setOutput(0, *x);
  if (ctx.node().op_type() == "Dropout" && ctx.hasOutput(1)) {
    HostTensor mask;
    // The mask is bool from opset 10; before, it had the data's type.
    mask.onnxType = TP::BOOL;
    if (ctx.opset() < 10) {
      auto type = ctx.inputType(0).getElementType();
      if (!type.isF32() && !type.isF64() && !type.isF16())
        return ctx.error("mask output of this element type is not supported");
      mask.onnxType = type.isF32() ? TP::FLOAT : type.isF64() ? TP::DOUBLE : TP::FLOAT16;
    }
    mask.shape.assign(ctx.inputType(0).getShape().begin(), ctx.inputType(0).getShape().end());
    mask.values.assign(ctx.inputType(0).getNumElements(), 1);
    ctx.setConstantOutput(1, std::move(mask));
  }
  return llvm::Error::success();
}

/// Shape and Size are folded before handlers run (every shape is static).
llvm::Error importShapeQuery(NodeContext &ctx) {
  return ctx.error("internal: Shape/Size should have been folded at import");
}

} // namespace

void registerShapeOps(OpTable &table) {
  table.add("Constant", 1, kMaxOpset, importConstant);
  table.add("ConstantOfShape", 9, kMaxOpset, importConstantOfShape);
  table.add("Identity", 1, kMaxOpset, importIdentity);
  table.add("Dropout", 7, kMaxOpset, importIdentity);
  table.add("Shape", 1, kMaxOpset, importShapeQuery);
  table.add("Size", 1, kMaxOpset, importShapeQuery);
}

} // namespace kiln::frontend
