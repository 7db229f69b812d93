//===- Elementwise.cpp - unary, binary, variadic, clip, where, cast handlers ===//

#include "frontend/NodeContext.h"
#include "frontend/OpTable.h"
#include "frontend/TensorConversion.h"

#include "onnx/onnx.pb.h"

#include "llvm/ADT/StringMap.h"

#include <limits>

using namespace mlir;

namespace kiln::frontend {
namespace {

/// The kiln op of an ONNX op that maps one to one (same operands, no attributes to translate).
const llvm::StringMap<llvm::StringRef> &directOps() {
  static const llvm::StringMap<llvm::StringRef> ops = {
      {"Sqrt", "sqrt"}, {"Reciprocal", "reciprocal"}, {"Exp", "exp"}, {"Log", "log"},
      {"Erf", "erf"}, {"Tanh", "tanh"}, {"Sigmoid", "sigmoid"}, {"Softplus", "softplus"},
      {"HardSwish", "hard_swish"}, {"Pow", "pow"}, {"Floor", "floor"}, {"Ceil", "ceil"}, {"Round", "round"},
      {"Sin", "sin"}, {"Cos", "cos"}, {"Relu", "relu"}, {"Neg", "neg"}, {"Abs", "abs"},
      {"Sign", "sign"}, {"Not", "not"},
      {"Add", "add"}, {"Sub", "sub"}, {"Mul", "mul"}, {"Div", "div"}, {"PRelu", "prelu"},
      {"And", "and"}, {"Or", "or"}, {"Xor", "xor"}, {"Equal", "equal"}, {"Less", "less"},
      {"LessOrEqual", "less_equal"}, {"Greater", "greater"}, {"GreaterOrEqual", "greater_equal"}};
  return ops;
}

llvm::Error importDirect(NodeContext &ctx) {
  auto operands = ctx.inputs();
  if (!operands)
    return operands.takeError();
  llvm::StringRef op = directOps().lookup(ctx.node().op_type());
  // Unary ops have the operand's type; binary ops infer theirs.
  if (operands->size() == 1)
    return ctx.buildInto0(op, *operands, {}, {(*operands)[0].getType()});
  return ctx.buildInto0(op, *operands);
}

llvm::Error importUnaryWithAttrs(NodeContext &ctx) {
  auto x = ctx.input(0);
  if (!x)
    return x.takeError();
  llvm::StringRef type = ctx.node().op_type();
  SmallVector<NamedAttribute> attrs;
  llvm::StringRef op;
  if (type == "LeakyRelu") {
    op = "leaky_relu";
    attrs.push_back(ctx.f32("alpha", ctx.attrFloat("alpha", 0.01f)));
  } else if (type == "Elu") {
    op = "elu";
    attrs.push_back(ctx.f32("alpha", ctx.attrFloat("alpha", 1.0f)));
  } else if (type == "Selu") {
    op = "selu";
    attrs.push_back(ctx.f32("alpha", ctx.attrFloat("alpha", 1.67326319217681884765625f)));
    attrs.push_back(ctx.f32("gamma", ctx.attrFloat("gamma", 1.05070102214813232421875f)));
  } else if (type == "HardSigmoid") {
    op = "hard_sigmoid";
    attrs.push_back(ctx.f32("alpha", ctx.attrFloat("alpha", 0.2f)));
    attrs.push_back(ctx.f32("beta", ctx.attrFloat("beta", 0.5f)));
  } else {
    op = "gelu";
    attrs.push_back(ctx.str("approximate", ctx.attrString("approximate", "none")));
  }
  return ctx.buildInto0(op, {*x}, attrs, {x->getType()});
}

/// Min, Max, Sum and Mean are variadic in ONNX: a chain of binary kiln ops (Mean then divides).
llvm::Error importVariadic(NodeContext &ctx) {
  auto operands = ctx.inputs();
  if (!operands)
    return operands.takeError();
  if (operands->empty())
    return ctx.error("needs at least one input");
  llvm::StringRef type = ctx.node().op_type();
  llvm::StringRef op = type == "Min" ? "min" : type == "Max" ? "max" : "add";
  Value acc = (*operands)[0];
  for (size_t i = 1; i < operands->size(); ++i) {
    auto next = ctx.buildValue(op, {acc, (*operands)[i]});
    if (!next)
      return next.takeError();
    acc = *next;
  }
  if (type == "Mean" && operands->size() > 1) {
    HostTensor count;
    count.values = {(long double)operands->size()};
    Value divisor = ctx.constant(count, llvm::cast<RankedTensorType>(acc.getType()).getElementType());
    auto mean = ctx.buildValue("div", {acc, divisor});
    if (!mean)
      return mean.takeError();
    acc = *mean;
  }
  ctx.setOutput(0, acc);
  return llvm::Error::success();
}

/// A rank-0 constant with the lowest or highest value of `element`.
Value typeLimit(NodeContext &ctx, Type element, bool highest) {
  HostTensor t;
  if (llvm::isa<FloatType>(element)) {
    t.values = {highest ? std::numeric_limits<long double>::infinity()
                        : -std::numeric_limits<long double>::infinity()};
  } else {
    unsigned width = element.getIntOrFloatBitWidth();
    bool isUnsigned = element.isUnsignedInteger();
    long double lo = isUnsigned ? 0 : -std::ldexp(1.0L, width - 1);
    long double hi = isUnsigned ? std::ldexp(1.0L, width) - 1 : std::ldexp(1.0L, width - 1) - 1;
    t.values = {highest ? hi : lo};
  }
  return ctx.constant(t, element);
}

llvm::Error importClip(NodeContext &ctx) {
  auto x = ctx.input(0);
  if (!x)
    return x.takeError();
  Type element = llvm::cast<RankedTensorType>(x->getType()).getElementType();
  Value bounds[2];
  for (int b = 0; b < 2; ++b) {
    if (ctx.opset() < 11) {
      HostTensor t;
      float fallback = b == 0 ? -std::numeric_limits<float>::infinity()
                              : std::numeric_limits<float>::infinity();
      t.values = {ctx.attrFloat(b == 0 ? "min" : "max", fallback)};
      bounds[b] = ctx.constant(t, element);
    } else if (ctx.hasInput(1 + b)) {
      auto v = ctx.input(1 + b);
      if (!v)
        return v.takeError();
      auto scalar = ctx.asScalar(*v, b == 0 ? "min" : "max");
      if (!scalar)
        return scalar.takeError();
      bounds[b] = *scalar;
    } else {
      bounds[b] = typeLimit(ctx, element, /*highest=*/b == 1);
    }
  }
  return ctx.buildInto0("clip", {*x, bounds[0], bounds[1]});
}

llvm::Error importWhere(NodeContext &ctx) {
  auto operands = ctx.inputs();
  if (!operands)
    return operands.takeError();
  if (operands->size() != 3)
    return ctx.error("needs condition, X and Y");
  return ctx.buildInto0("where", *operands);
}

llvm::Error importMod(NodeContext &ctx) {
  auto operands = ctx.inputs(2, 2);
  if (!operands)
    return operands.takeError();
  bool fmod = ctx.attrInt("fmod", 0) != 0;
  if (!fmod && llvm::isa<FloatType>(ctx.inputType(0).getElementType()))
    return ctx.error("fmod=0 on floating-point inputs is invalid ONNX; set fmod=1");
  return ctx.buildInto0("mod", *operands, {ctx.boolean("fmod", fmod)});
}

/// IsNaN and IsInf: float tests with an i1 result of the input's shape.
llvm::Error importFloatTest(NodeContext &ctx) {
  auto x = ctx.input(0);
  if (!x)
    return x.takeError();
  auto resultType = ctx.inputType(0).clone(IntegerType::get(ctx.context(), 1));
  if (ctx.node().op_type() == "IsNaN")
    return ctx.buildInto0("is_nan", {*x}, {}, {resultType});
  return ctx.buildInto0("is_inf", {*x},
                        {ctx.boolean("detect_negative", ctx.attrInt("detect_negative", 1) != 0),
                         ctx.boolean("detect_positive", ctx.attrInt("detect_positive", 1) != 0)},
                        {resultType});
}

llvm::Error importCast(NodeContext &ctx) {
  auto x = ctx.input(0);
  if (!x)
    return x.takeError();
  Type target;
  if (ctx.node().op_type() == "CastLike") {
    target = ctx.inputType(1).getElementType();
  } else {
    auto element = convertElementType(*ctx.context(), (int32_t)ctx.attrInt("to", 0));
    if (!element)
      return ctx.error("'to': " + llvm::toString(element.takeError()));
    target = *element;
  }
  auto type = llvm::cast<RankedTensorType>(x->getType());
  return ctx.buildInto0("cast", {*x}, {ctx.boolean("saturate", ctx.attrInt("saturate", 1) != 0)},
                        {type.clone(target)});
}

} // namespace

void registerElementwiseOps(OpTable &table) {
  // Since-versions: the earliest opset with today's semantics (later versions added types).
  for (auto [name, since] : std::initializer_list<std::pair<const char *, int>>{
           {"Sqrt", 6}, {"Reciprocal", 6}, {"Exp", 6}, {"Log", 6}, {"Erf", 9}, {"Tanh", 6},
           {"Sigmoid", 6}, {"Softplus", 1}, {"HardSwish", 14}, {"Floor", 6}, {"Ceil", 6},
           {"Round", 11}, {"Sin", 7}, {"Cos", 7}, {"Relu", 6}, {"Neg", 6}, {"Abs", 6},
           {"Sign", 9}, {"Not", 1}, {"Add", 7}, {"Sub", 7}, {"Mul", 7}, {"Div", 7},
           {"PRelu", 7}, {"And", 7}, {"Or", 7}, {"Xor", 7}, {"Equal", 7}, {"Less", 7},
           {"LessOrEqual", 12}, {"Greater", 7}, {"GreaterOrEqual", 12}})
    table.add(name, since, kMaxOpset, importDirect);
  table.add("LeakyRelu", 6, kMaxOpset, importUnaryWithAttrs);
  table.add("Elu", 6, kMaxOpset, importUnaryWithAttrs);
  table.add("Selu", 6, kMaxOpset, importUnaryWithAttrs);
  table.add("HardSigmoid", 6, kMaxOpset, importUnaryWithAttrs);
  table.add("Gelu", 20, kMaxOpset, importUnaryWithAttrs);
  table.add("Pow", 7, kMaxOpset, importDirect);
  for (const char *name : {"Min", "Max", "Sum", "Mean"})
    table.add(name, 8, kMaxOpset, importVariadic);
  table.add("Clip", 6, kMaxOpset, importClip);
  table.add("Where", 9, kMaxOpset, importWhere);
  table.add("Mod", 10, kMaxOpset, importMod);
  table.add("IsNaN", 9, kMaxOpset, importFloatTest);
  table.add("IsInf", 10, kMaxOpset, importFloatTest);
  table.add("Cast", 6, kMaxOpset, importCast);
  table.add("CastLike", 15, kMaxOpset, importCast);
}

} // namespace kiln::frontend
