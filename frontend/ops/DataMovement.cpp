//===- DataMovement.cpp - reshape, slice, gather, pad, resize, ... handlers ===//
//
// Inputs that only shape the result (Reshape's shape, Expand's shape, Slice's parameters, ...)
// give the static result type: from their constant values when they have them, else from the
// type the model declares for the output. kiln ops keep such inputs as operands only where the
// op defines them (slice, pad, range, trilu, resize scales/roi).
//
//===----------------------------------------------------------------------===//

#include "frontend/NodeContext.h"
#include "frontend/OnnxShapes.h"
#include "frontend/OpTable.h"

#include "onnx/onnx.pb.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"

#include <array>
#include <cmath>
#include <numeric>

using namespace mlir;

namespace kiln::frontend {
namespace {

RankedTensorType typeOf(Value v) { return llvm::cast<RankedTensorType>(v.getType()); }

llvm::Error shapeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

std::vector<int64_t> iota(int64_t n) {
  std::vector<int64_t> v(std::max<int64_t>(n, 0));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

/// A shape rule's result as a tensor type, or its error naming the node.
llvm::Expected<RankedTensorType> shapedType(const NodeContext &ctx, ShapeOrError shape,
                                            Type element) {
  if (!shape)
    return ctx.error(llvm::toString(shape.takeError()));
  return RankedTensorType::get(*shape, element);
}

/// Input `param` shapes output `out` but is computed at run time, and the model declares no type.
llvm::Error unknownShape(const NodeContext &ctx, size_t param, llvm::StringRef what, size_t out) {
  std::string name = ctx.hasInput(param) ? ctx.node().input(param) : std::string();
  return ctx.error("input '" + what + "' ('" + name + "') is computed at run time, but its value " +
                   "determines the static shape of output " + std::to_string(out) +
                   ", which the model does not declare; make the input a constant (an "
                   "initializer, or foldable from static shapes) or declare the output's static "
                   "shape in the graph's value_info");
}

/// The model's declared type of output `out`, used when input `param` is not a constant.
llvm::Expected<RankedTensorType> declaredType(const NodeContext &ctx, size_t param,
                                              llvm::StringRef what, size_t out = 0) {
  if (auto declared = ctx.declaredOutputType(out))
    return *declared;
  return unknownShape(ctx, param, what, out);
}

/// Output 0's type: `rule` applied to the values of the constant input `param`, else the
/// declared type.
llvm::Expected<RankedTensorType>
typeFromInput(const NodeContext &ctx, size_t param, llvm::StringRef what, Type element,
              llvm::function_ref<ShapeOrError(llvm::ArrayRef<int64_t>)> rule) {
  if (!ctx.hasInput(param))
    return ctx.error("input '" + what + "' is required but missing");
  if (const HostTensor *values = ctx.constantInput(param))
    return shapedType(ctx, rule(values->asInts()), element);
  return declaredType(ctx, param, what);
}

/// The values of input `i`: its constant value, `absent` when it is not given, or nullopt when
/// it is computed at run time.
std::optional<std::vector<int64_t>> intsOr(const NodeContext &ctx, size_t i,
                                           std::vector<int64_t> absent) {
  if (!ctx.hasInput(i))
    return absent;
  if (const HostTensor *t = ctx.constantInput(i))
    return t->asInts();
  return std::nullopt;
}

/// The normalized value of the `axis` attribute (default `fallback`) for a rank-`rank` input.
llvm::Expected<int64_t> axisAttr(const NodeContext &ctx, int64_t rank, int64_t fallback = 0) {
  return nodeAxis(ctx, ctx.attrInt("axis", fallback), rank);
}

//===----------------------------------------------------------------------===//
// Reshape, Flatten, Squeeze, Unsqueeze: all kiln.reshape
//===----------------------------------------------------------------------===//

llvm::Error reshapeTo(NodeContext &ctx, Value x, llvm::Expected<RankedTensorType> type) {
  if (!type)
    return type.takeError();
  return ctx.buildInto0("reshape", {x}, {}, {*type});
}

llvm::Error importReshape(NodeContext &ctx) {
  auto x = ctx.input(0);
  if (!x)
    return x.takeError();
  RankedTensorType in = typeOf(*x);
  bool allowZero = ctx.attrInt("allowzero", 0) != 0; // opset 14+; 0 before
  return reshapeTo(ctx, *x,
                   typeFromInput(ctx, 1, "shape", in.getElementType(),
                                 [&](llvm::ArrayRef<int64_t> target) {
                                   return resolveReshape(in.getShape(), target, allowZero);
                                 }));
}

llvm::Error importFlatten(NodeContext &ctx) {
  auto x = ctx.input(0);
  if (!x)
    return x.takeError();
  RankedTensorType in = typeOf(*x);
  return reshapeTo(ctx, *x,
                   shapedType(ctx, flattenShape(in.getShape(), ctx.attrInt("axis", 1)),
                              in.getElementType()));
}

/// Squeeze and Unsqueeze: axes are an attribute before opset 13 and an optional input from 13.
llvm::Error importSqueezeLike(NodeContext &ctx, bool squeeze) {
  auto x = ctx.input(0);
  if (!x)
    return x.takeError();
  RankedTensorType in = typeOf(*x);
  auto rule = [&](llvm::ArrayRef<int64_t> axes) {
    return squeeze ? squeezeShape(in.getShape(), axes) : unsqueezeShape(in.getShape(), axes);
  };
  bool axesInput = ctx.opset() >= 13 && ctx.hasInput(1);
  std::vector<int64_t> attrAxes = ctx.opset() < 13 ? ctx.attrInts("axes") : std::vector<int64_t>{};
  if (!squeeze && !axesInput && attrAxes.empty())
    return ctx.error("Unsqueeze needs at least one axis (the 'axes' " +
                     llvm::Twine(ctx.opset() < 13 ? "attribute" : "input") + ")");
  return reshapeTo(ctx, *x,
                   axesInput ? typeFromInput(ctx, 1, "axes", in.getElementType(), rule)
                             : shapedType(ctx, rule(attrAxes), in.getElementType()));
}
llvm::Error importSqueeze(NodeContext &ctx) { return importSqueezeLike(ctx, true); }
llvm::Error importUnsqueeze(NodeContext &ctx) { return importSqueezeLike(ctx, false); }

//===----------------------------------------------------------------------===//
// Transpose, Concat, Split
//===----------------------------------------------------------------------===//

llvm::Error importTranspose(NodeContext &ctx) {
  auto x = ctx.input(0);
  if (!x)
    return x.takeError();
  std::vector<int64_t> reversed = iota(typeOf(*x).getRank());
  std::reverse(reversed.begin(), reversed.end());
  return ctx.buildInto0("transpose", {*x}, {ctx.i64Array("perm", ctx.attrInts("perm", reversed))});
}

llvm::Error importConcat(NodeContext &ctx) {
  auto operands = ctx.inputs();
  if (!operands)
    return operands.takeError();
  SmallVector<Value> &inputs = *operands;
  if (inputs.empty())
    return ctx.error("Concat needs at least one input");
  if (!ctx.hasAttr("axis"))
    return ctx.error("the required attribute 'axis' is missing; the model is invalid");
  auto axis = axisAttr(ctx, typeOf(inputs[0]).getRank());
  if (!axis)
    return axis.takeError();
  return ctx.buildInto0("concat", inputs, {ctx.i64("axis", *axis)});
}

/// Equal split sizes: equal parts before opset 18; from 18 ceil-sized parts, the last smaller.
llvm::Expected<std::vector<int64_t>> equalSplit(const NodeContext &ctx, int64_t dim, int64_t n) {
  if (n < 1)
    return ctx.error("Split needs at least one output");
  if (ctx.opset() < 18 && dim % n != 0)
    return ctx.error("axis of size " + std::to_string(dim) + " does not split into " +
                     std::to_string(n) + " equal parts; give explicit split sizes");
  int64_t chunk = (dim + n - 1) / n;
  std::vector<int64_t> sizes(n, chunk);
  sizes.back() = dim - chunk * (n - 1);
  if (sizes.back() < 0)
    return ctx.error("axis of size " + std::to_string(dim) + " cannot be split into " +
                     std::to_string(n) + " parts of size " + std::to_string(chunk) +
                     " with a smaller last part; give explicit split sizes");
  return sizes;
}

llvm::Error importSplit(NodeContext &ctx) {
  auto x = ctx.input(0);
  if (!x)
    return x.takeError();
  RankedTensorType in = typeOf(*x);
  auto axis = axisAttr(ctx, in.getRank());
  if (!axis)
    return axis.takeError();
  size_t n = ctx.numOutputs();
  SmallVector<Type> types;

  // Split sizes: the `split` attribute before opset 13, the optional `split` input from 13.
  std::optional<std::vector<int64_t>> sizes;
  if (ctx.opset() < 13) {
    if (ctx.hasAttr("split"))
      sizes = ctx.attrInts("split");
  } else if (ctx.hasInput(1)) {
    const HostTensor *split = ctx.constantInput(1);
    if (!split) {
      // Run-time sizes: every output's type must be declared.
      for (size_t i = 0; i < n; ++i) {
        auto type = declaredType(ctx, 1, "split", i);
        if (!type)
          return type.takeError();
        types.push_back(*type);
      }
    } else if (split->size() > 0) {
      sizes = split->asInts();
    }
  }
  if (ctx.opset() >= 18 && ctx.hasAttr("num_outputs")) {
    if (ctx.hasInput(1))
      return ctx.error("give either the 'split' input or the 'num_outputs' attribute, not both");
    if (ctx.attrInt("num_outputs", 0) != (int64_t)n)
      return ctx.error("num_outputs is " + std::to_string(ctx.attrInt("num_outputs", 0)) +
                       " but the node has " + std::to_string(n) + " outputs");
  }

  if (types.empty()) {
    if (!sizes) {
      auto equal = equalSplit(ctx, in.getDimSize(*axis), n);
      if (!equal)
        return equal.takeError();
      sizes = std::move(*equal);
    }
    if (sizes->size() != n)
      return ctx.error(std::to_string(sizes->size()) + " split sizes for " + std::to_string(n) +
                       " outputs");
    for (int64_t size : *sizes) {
      if (size < 0)
        return ctx.error("split size " + std::to_string(size) + " is negative");
      Shape shape(in.getShape().begin(), in.getShape().end());
      shape[*axis] = size;
      types.push_back(RankedTensorType::get(shape, in.getElementType()));
    }
  }
  auto op = ctx.build("split", {*x}, {ctx.i64("axis", *axis)}, types);
  if (!op)
    return op.takeError();
  for (size_t i = 0; i < n; ++i)
    ctx.setOutput(i, (*op)->getResult(i));
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Slice, Gather, GatherElements
//===----------------------------------------------------------------------===//

/// Slice: parameters are attributes before opset 10 (starts, ends, axes) and inputs from 10
/// (starts, ends, optional axes, optional steps). Absent axes are [0, n), absent steps ones.
llvm::Error importSlice(NodeContext &ctx) {
  auto x = ctx.input(0);
  if (!x)
    return x.takeError();
  RankedTensorType in = typeOf(*x);
  static constexpr const char *names[] = {"starts", "ends", "axes", "steps"};
  std::array<std::optional<std::vector<int64_t>>, 4> params;
  if (ctx.opset() < 10) {
    std::vector<int64_t> starts = ctx.attrInts("starts");
    int64_t n = starts.size();
    params = {starts, ctx.attrInts("ends"), ctx.attrInts("axes", iota(n)),
              std::vector<int64_t>(n, 1)};
  } else {
    for (size_t i : {1, 2})
      if (!ctx.hasInput(i))
        return ctx.error("input '" + llvm::Twine(names[i - 1]) + "' is required but missing");
    RankedTensorType startsType = ctx.inputType(1);
    if (!startsType || startsType.getRank() != 1)
      return ctx.error("input 'starts' must be a 1-d tensor, got rank " +
                       llvm::Twine(startsType ? startsType.getRank() : 0));
    int64_t n = startsType.getDimSize(0);
    params = {intsOr(ctx, 1, {}), intsOr(ctx, 2, {}), intsOr(ctx, 3, iota(n)),
              intsOr(ctx, 4, std::vector<int64_t>(n, 1))};
  }

  auto computed = llvm::find_if(params, [](const auto &p) { return !p.has_value(); });
  size_t firstComputed = computed - params.begin();
  auto type = computed == params.end()
                  ? shapedType(ctx, sliceShape(in.getShape(), *params[0], *params[1], *params[2],
                                               *params[3]),
                               in.getElementType())
                  : declaredType(ctx, firstComputed + 1, names[firstComputed]);
  if (!type)
    return type.takeError();

  // Inputs go in as they are (i32 or i64); attributes and absent inputs as i64 constants.
  SmallVector<Value, 5> operands = {*x};
  for (size_t i = 0; i < 4; ++i) {
    if (ctx.opset() >= 10 && ctx.hasInput(i + 1)) {
      auto v = ctx.input(i + 1);
      if (!v)
        return v.takeError();
      operands.push_back(*v);
    } else {
      operands.push_back(ctx.i64Constant(*params[i]));
    }
  }
  return ctx.buildInto0("slice", operands, {}, {*type});
}

/// Gather and GatherElements: data, indices and a normalized axis.
llvm::Error importGatherLike(NodeContext &ctx, llvm::StringRef opName) {
  auto x = ctx.input(0);
  if (!x)
    return x.takeError();
  auto indices = ctx.input(1);
  if (!indices)
    return indices.takeError();
  auto axis = axisAttr(ctx, typeOf(*x).getRank());
  if (!axis)
    return axis.takeError();
  return ctx.buildInto0(opName, {*x, *indices}, {ctx.i64("axis", *axis)});
}
llvm::Error importGather(NodeContext &ctx) { return importGatherLike(ctx, "gather"); }
llvm::Error importGatherElements(NodeContext &ctx) {
  return importGatherLike(ctx, "gather_elements");
}

/// GatherND (opset 11; batch_dims from 12).
llvm::Error importGatherND(NodeContext &ctx) {
  auto operands = ctx.inputs(2, 2);
  if (!operands)
    return operands.takeError();
  return ctx.buildInto0("gather_nd", *operands, {ctx.i64("batch_dims", ctx.attrInt("batch_dims", 0))});
}

//===----------------------------------------------------------------------===//
// Expand, Tile, Pad
//===----------------------------------------------------------------------===//

llvm::Error importExpand(NodeContext &ctx) {
  auto x = ctx.input(0);
  if (!x)
    return x.takeError();
  RankedTensorType in = typeOf(*x);
  auto type = typeFromInput(ctx, 1, "shape", in.getElementType(),
                            [&](llvm::ArrayRef<int64_t> shape) {
                              return broadcastShapes(in.getShape(), shape);
                            });
  if (!type)
    return type.takeError();
  return ctx.buildInto0("expand", {*x}, {}, {*type});
}

/// Tile: every input dim times its repeat count.
ShapeOrError tileShape(llvm::ArrayRef<int64_t> input, llvm::ArrayRef<int64_t> repeats) {
  if (repeats.size() != input.size())
    return shapeError("repeats has " + llvm::Twine(repeats.size()) +
                      " values, the input has rank " + llvm::Twine(input.size()));
  Shape out;
  for (auto [dim, repeat] : llvm::zip(input, repeats)) {
    if (repeat < 0)
      return shapeError("repeats must not be negative, got " + llvm::Twine(repeat));
    out.push_back(dim * repeat);
  }
  return out;
}

llvm::Error importTile(NodeContext &ctx) {
  auto x = ctx.input(0);
  if (!x)
    return x.takeError();
  RankedTensorType in = typeOf(*x);
  auto type = typeFromInput(ctx, 1, "repeats", in.getElementType(),
                            [&](llvm::ArrayRef<int64_t> repeats) {
                              return tileShape(in.getShape(), repeats);
                            });
  if (!type)
    return type.takeError();
  return ctx.buildInto0("tile", {*x}, {}, {*type});
}

/// The full 2 * rank pads of a Pad node, or nullopt when the pads input is computed at run time.
/// Opset 2-10: `pads` attribute; 11+: `pads` input; 18+: optional `axes` input naming the axes
/// the pads cover (the others get 0).
llvm::Expected<std::optional<std::vector<int64_t>>> padAmounts(NodeContext &ctx, int64_t rank) {
  if (ctx.opset() < 11)
    return std::optional<std::vector<int64_t>>(ctx.attrInts("pads"));
  if (!ctx.hasInput(1))
    return ctx.error("input 'pads' is required but missing");
  const HostTensor *padsInput = ctx.constantInput(1);
  bool hasAxes = ctx.opset() >= 18 && ctx.hasInput(3);
  if (!hasAxes)
    return padsInput ? std::optional(padsInput->asInts()) : std::nullopt;
  if (!padsInput)
    return ctx.error("input 'pads' is computed at run time together with an 'axes' input; "
                     "make pads a constant or drop axes");
  auto axes = ctx.constantInts(3, "axes");
  if (!axes)
    return axes.takeError();
  std::vector<int64_t> pads = padsInput->asInts(), full(2 * rank, 0);
  size_t n = axes->size();
  if (pads.size() != 2 * n)
    return ctx.error("pads has " + std::to_string(pads.size()) + " values, expected " +
                     std::to_string(2 * n) + " (2 x the number of axes)");
  for (size_t i = 0; i < n; ++i) {
    auto axis = nodeAxis(ctx, (*axes)[i], rank);
    if (!axis)
      return axis.takeError();
    full[*axis] = pads[i];
    full[*axis + rank] = pads[i + n];
  }
  return std::optional(full);
}

llvm::Error importPad(NodeContext &ctx) {
  auto x = ctx.input(0);
  if (!x)
    return x.takeError();
  RankedTensorType in = typeOf(*x);
  Type element = in.getElementType();
  std::string mode = ctx.attrString("mode", "constant");
  if (mode == "wrap" && ctx.opset() < 19)
    return ctx.error("mode 'wrap' needs opset 19 or newer; raise the model's opset import");

  auto pads = padAmounts(ctx, in.getRank());
  if (!pads)
    return pads.takeError();
  auto type = *pads ? shapedType(ctx, padShape(in.getShape(), **pads), element)
                    : declaredType(ctx, 1, "pads");
  if (!type)
    return type.takeError();
  Value padsValue;
  if (*pads) {
    padsValue = ctx.i64Constant(**pads);
  } else {
    auto v = ctx.input(1);
    if (!v)
      return v.takeError();
    if (typeOf(*v).getShape() != llvm::ArrayRef<int64_t>{2 * in.getRank()} ||
        !typeOf(*v).getElementType().isInteger(64))
      return ctx.error("run-time pads must be a 1-d i64 tensor of " +
                       std::to_string(2 * in.getRank()) + " values, got " +
                       formatShape(typeOf(*v).getShape()) + "; make pads a constant");
    padsValue = *v;
  }

  // The padding value: the `value` attribute (< 11), the constant_value input, or zero.
  Value padValue;
  if (ctx.opset() >= 11 && ctx.hasInput(2)) {
    auto v = ctx.input(2);
    if (!v)
      return v.takeError();
    auto scalar = ctx.asScalar(*v, "constant_value");
    if (!scalar)
      return scalar.takeError();
    padValue = *scalar;
  } else {
    HostTensor value; // rank 0; ctx.constant stores it as `element`
    value.values = {ctx.opset() < 11 ? (long double)ctx.attrFloat("value", 0.0f) : 0.0L};
    padValue = ctx.constant(value, element);
  }
  return ctx.buildInto0("pad", {*x, padsValue, padValue}, {ctx.str("mode", mode)}, {*type});
}

//===----------------------------------------------------------------------===//
// Range, Trilu, TopK
//===----------------------------------------------------------------------===//

llvm::Error importRange(NodeContext &ctx) {
  static constexpr const char *names[] = {"start", "limit", "delta"};
  SmallVector<Value, 3> operands;
  SmallVector<long double, 3> values;
  std::optional<size_t> computed; // the first input computed at run time
  for (size_t i = 0; i < 3; ++i) {
    auto v = ctx.input(i);
    if (!v)
      return v.takeError();
    operands.push_back(*v);
    const HostTensor *t = ctx.constantInput(i);
    if (t && t->size() != 1)
      return ctx.error("input '" + llvm::Twine(names[i]) + "' must hold one value, got shape " +
                       formatShape(t->shape));
    if (t)
      values.push_back(t->values[0]);
    else if (!computed)
      computed = i;
  }
  Type element = typeOf(operands[0]).getElementType();
  if (computed) {
    auto type = declaredType(ctx, *computed, names[*computed]);
    if (!type)
      return type.takeError();
    return ctx.buildInto0("range", operands, {}, {*type});
  }
  auto count = rangeCount((double)values[0], (double)values[1], (double)values[2]);
  if (!count)
    return ctx.error(llvm::toString(count.takeError()));
  return ctx.buildInto0("range", operands, {}, {RankedTensorType::get({*count}, element)});
}

llvm::Error importTrilu(NodeContext &ctx) {
  auto x = ctx.input(0);
  if (!x)
    return x.takeError();
  Value k;
  if (ctx.hasInput(1)) {
    auto v = ctx.input(1);
    if (!v)
      return v.takeError();
    auto scalar = ctx.asScalar(*v, "k");
    if (!scalar)
      return scalar.takeError();
    k = *scalar;
  } else {
    k = ctx.i64Constant({0}, /*scalar=*/true);
  }
  return ctx.buildInto0("trilu", {*x, k}, {ctx.boolean("upper", ctx.attrInt("upper", 1) != 0)},
                        {x->getType()});
}

/// TopK: k is an attribute before opset 10 and input 1 from 10 (a constant, or read off the
/// declared output type); `largest` and `sorted` exist from opset 11 (both default to 1).
llvm::Error importTopK(NodeContext &ctx) {
  auto x = ctx.input(0);
  if (!x)
    return x.takeError();
  RankedTensorType in = typeOf(*x);
  auto axis = axisAttr(ctx, in.getRank(), -1);
  if (!axis)
    return axis.takeError();
  int64_t k;
  if (ctx.opset() < 10) {
    if (!ctx.hasAttr("k"))
      return ctx.error("the required attribute 'k' is missing; the model is invalid");
    k = ctx.attrInt("k", 0);
  } else if (!ctx.hasInput(1)) {
    return ctx.error("input 'K' is required but missing");
  } else if (const HostTensor *t = ctx.constantInput(1)) {
    if (t->size() != 1)
      return ctx.error("input 'K' must hold one value, got shape " + formatShape(t->shape));
    k = (int64_t)t->values[0];
  } else {
    auto declared = ctx.declaredOutputType(0);
    if (!declared)
      declared = ctx.declaredOutputType(1);
    if (!declared)
      return unknownShape(ctx, 1, "K", 0);
    if (declared->getRank() != in.getRank())
      return ctx.error("declared output rank " + std::to_string(declared->getRank()) +
                       " differs from the input's " + std::to_string(in.getRank()));
    k = declared->getDimSize(*axis);
  }
  if (k < 0 || k > in.getDimSize(*axis))
    return ctx.error("k = " + std::to_string(k) + " is out of range for an axis of size " +
                     std::to_string(in.getDimSize(*axis)));
  Shape shape(in.getShape().begin(), in.getShape().end());
  shape[*axis] = k;
  auto op = ctx.build("topk", {*x},
                      {ctx.i64("axis", *axis), ctx.boolean("largest", ctx.attrInt("largest", 1) != 0),
                       ctx.boolean("sorted", ctx.attrInt("sorted", 1) != 0)},
                      {RankedTensorType::get(shape, in.getElementType()),
                       RankedTensorType::get(shape, ctx.builder().getI64Type())});
  if (!op)
    return op.takeError();
  ctx.setOutput(0, (*op)->getResult(0));
  ctx.setOutput(1, (*op)->getResult(1));
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// DepthToSpace, SpaceToDepth
//===----------------------------------------------------------------------===//

llvm::Expected<int64_t> blocksize(const NodeContext &ctx) {
  if (!ctx.hasAttr("blocksize"))
    return ctx.error("the required attribute 'blocksize' is missing; the model is invalid");
  return ctx.attrInt("blocksize", 0);
}

llvm::Error importDepthToSpace(NodeContext &ctx) {
  auto x = ctx.input(0);
  if (!x)
    return x.takeError();
  auto block = blocksize(ctx);
  if (!block)
    return block.takeError();
  return ctx.buildInto0("depth_to_space", {*x},
                        {ctx.i64("blocksize", *block),
                         ctx.str("mode", ctx.attrString("mode", "DCR"))});
}

llvm::Error importSpaceToDepth(NodeContext &ctx) {
  auto x = ctx.input(0);
  if (!x)
    return x.takeError();
  auto block = blocksize(ctx);
  if (!block)
    return block.takeError();
  return ctx.buildInto0("space_to_depth", {*x}, {ctx.i64("blocksize", *block)});
}

//===----------------------------------------------------------------------===//
// Resize
//===----------------------------------------------------------------------===//

/// Resize inputs (opset 11+): X, roi, scales, sizes; the optional ones may be absent or empty.
/// From opset 18 the `axes` attribute names the axes that roi, scales and sizes cover.
struct ResizeParams {
  ResizeParams(NodeContext &ctx, RankedTensorType in) : ctx(ctx), in(in) {}

  llvm::Error init() {
    for (int64_t a : ctx.attrInts("axes")) {
      auto axis = nodeAxis(ctx, a, in.getRank());
      if (!axis)
        return axis.takeError();
      axes.push_back(*axis);
    }
    partial = !axes.empty();
    if (!partial)
      axes = iota(in.getRank());
    return llvm::Error::success();
  }

  bool given(size_t i) const {
    RankedTensorType type = ctx.inputType(i);
    return ctx.hasInput(i) && type && type.getNumElements() > 0;
  }

  /// The values of constant input `i`, spread over every axis: input values go to `axes`,
  /// `fill` (one group of rank values per group of the input) holds the rest.
  llvm::Expected<std::vector<long double>> spread(const HostTensor &t, llvm::StringRef what,
                                                  std::vector<long double> fill) const {
    size_t rank = in.getRank(), groups = fill.size() / rank, n = axes.size();
    if ((size_t)t.size() != groups * n)
      return ctx.error("input '" + what + "' has " + std::to_string(t.size()) +
                       " values, expected " + std::to_string(groups * n));
    for (size_t g = 0; g < groups; ++g)
      for (size_t i = 0; i < n; ++i)
        fill[g * rank + axes[i]] = t.values[g * n + i];
    return fill;
  }

  /// Operand for input `i` (scales or roi): the input itself, or with a partial `axes` a
  /// constant spread over every axis.
  llvm::Expected<Value> operand(size_t i, llvm::StringRef what, std::vector<long double> fill) {
    auto v = ctx.input(i);
    if (!v || !partial)
      return v;
    const HostTensor *t = ctx.constantInput(i);
    if (!t)
      return ctx.error("input '" + what + "' is computed at run time together with the 'axes' "
                       "attribute; make it a constant or drop axes");
    auto full = spread(*t, what, std::move(fill));
    if (!full)
      return full.takeError();
    HostTensor spreadTensor;
    spreadTensor.onnxType = t->onnxType;
    spreadTensor.shape = {(int64_t)full->size()};
    spreadTensor.values = std::move(*full);
    return ctx.constant(spreadTensor, typeOf(*v).getElementType());
  }

  /// Output shape from constant sizes or scales, else the declared type.
  llvm::Expected<RankedTensorType> outputType() const {
    bool hasSizes = given(3), hasScales = given(2);
    if (!hasSizes && !hasScales)
      return ctx.error("Resize needs a non-empty 'scales' or 'sizes' input");
    std::string policy = ctx.attrString("keep_aspect_ratio_policy", "stretch");
    const HostTensor *sizes = hasSizes ? ctx.constantInput(3) : nullptr;
    const HostTensor *scales = hasSizes ? nullptr : ctx.constantInput(2);
    if (sizes && policy == "stretch") {
      auto full = spread(*sizes, "sizes",
                         std::vector<long double>(in.getShape().begin(), in.getShape().end()));
      if (!full)
        return full.takeError();
      Shape shape;
      for (long double size : *full) {
        if (size < 0)
          return ctx.error("sizes must not be negative, got " + std::to_string((int64_t)size));
        shape.push_back((int64_t)size);
      }
      return RankedTensorType::get(shape, in.getElementType());
    }
    if (scales) {
      auto full = spread(*scales, "scales", std::vector<long double>(in.getRank(), 1.0L));
      if (!full)
        return full.takeError();
      Shape shape;
      for (auto [dim, scale] : llvm::zip(in.getShape(), *full)) {
        if (!(scale > 0))
          return ctx.error("scales must be positive, got " + std::to_string((double)scale));
        shape.push_back((int64_t)std::floor((long double)dim * scale));
      }
      return RankedTensorType::get(shape, in.getElementType());
    }
    if (auto declared = ctx.declaredOutputType(0))
      return *declared;
    if (sizes)
      return ctx.error("keep_aspect_ratio_policy '" + policy +
                       "' is not supported; use 'stretch' or declare the output's static shape");
    return unknownShape(ctx, hasSizes ? 3 : 2, hasSizes ? "sizes" : "scales", 0);
  }

  NodeContext &ctx;
  RankedTensorType in;
  std::vector<int64_t> axes;
  bool partial = false;
};

llvm::Error importResize(NodeContext &ctx) {
  auto x = ctx.input(0);
  if (!x)
    return x.takeError();
  if (ctx.attrInt("antialias", 0) != 0)
    return ctx.error("antialias is not supported; export the model with antialias=0");
  RankedTensorType in = typeOf(*x);
  if (in.getRank() == 0)
    return ctx.error("the input must have rank >= 1, got a scalar");
  ResizeParams params(ctx, in);
  if (auto err = params.init())
    return err;
  auto type = params.outputType();
  if (!type)
    return type.takeError();

  std::string coordinates = ctx.attrString("coordinate_transformation_mode", "half_pixel");
  bool hasScales = params.given(2);
  bool hasRoi = coordinates == "tf_crop_and_resize" && params.given(1);
  SmallVector<Value, 3> operands = {*x};
  if (hasScales) {
    auto scales = params.operand(2, "scales", std::vector<long double>(in.getRank(), 1.0L));
    if (!scales)
      return scales.takeError();
    operands.push_back(*scales);
  }
  if (hasRoi) {
    std::vector<long double> wholeAxes(in.getRank(), 0.0L);
    wholeAxes.resize(2 * in.getRank(), 1.0L); // starts 0, ends 1: the whole axis
    auto roi = params.operand(1, "roi", std::move(wholeAxes));
    if (!roi)
      return roi.takeError();
    operands.push_back(*roi);
  }
  OpBuilder &b = ctx.builder();
  return ctx.buildInto0(
      "resize", operands,
      {ctx.str("mode", ctx.attrString("mode", "nearest")),
       ctx.str("coordinate_transformation_mode", coordinates),
       ctx.str("nearest_mode", ctx.attrString("nearest_mode", "round_prefer_floor")),
       ctx.f32("cubic_coeff_a", ctx.attrFloat("cubic_coeff_a", -0.75f)),
       ctx.boolean("exclude_outside", ctx.attrInt("exclude_outside", 0) != 0),
       ctx.f32("extrapolation_value", ctx.attrFloat("extrapolation_value", 0.0f)),
       b.getNamedAttr("operandSegmentSizes",
                      b.getDenseI32ArrayAttr({1, (int32_t)hasScales, (int32_t)hasRoi}))},
      {*type});
}

} // namespace

void registerDataMovementOps(OpTable &table) {
  table.add("Reshape", 5, kMaxOpset, importReshape); // allowzero (14) reads as 0 before
  table.add("Flatten", 9, 12, importFlatten);
  table.add("Flatten", 13, kMaxOpset, importFlatten);
  table.add("Squeeze", 1, 12, importSqueeze); // axes attribute
  table.add("Squeeze", 13, kMaxOpset, importSqueeze); // optional axes input
  table.add("Unsqueeze", 1, 12, importUnsqueeze);
  table.add("Unsqueeze", 13, kMaxOpset, importUnsqueeze);
  table.add("Transpose", 1, kMaxOpset, importTranspose);
  table.add("Concat", 4, kMaxOpset, importConcat);
  table.add("Split", 2, 12, importSplit);  // split attribute
  table.add("Split", 13, 17, importSplit); // split input
  table.add("Split", 18, kMaxOpset, importSplit); // split input or num_outputs
  table.add("Slice", 1, 9, importSlice);   // starts/ends/axes attributes
  table.add("Slice", 10, kMaxOpset, importSlice);
  table.add("Gather", 11, 12, importGather);
  table.add("Gather", 13, kMaxOpset, importGather);
  table.add("GatherElements", 11, 12, importGatherElements);
  table.add("GatherElements", 13, kMaxOpset, importGatherElements);
  table.add("GatherND", 11, kMaxOpset, importGatherND);
  table.add("Expand", 8, kMaxOpset, importExpand);
  table.add("Tile", 6, kMaxOpset, importTile);
  table.add("Pad", 2, 10, importPad);  // pads and value attributes
  table.add("Pad", 11, 17, importPad); // pads and constant_value inputs
  table.add("Pad", 18, kMaxOpset, importPad); // axes input (18), wrap mode (19)
  table.add("Range", 11, kMaxOpset, importRange);
  table.add("Trilu", 14, kMaxOpset, importTrilu);
  table.add("TopK", 1, 9, importTopK);  // k attribute
  table.add("TopK", 10, 10, importTopK); // k input
  table.add("TopK", 11, kMaxOpset, importTopK); // largest, sorted
  table.add("DepthToSpace", 11, 12, importDepthToSpace);
  table.add("DepthToSpace", 13, kMaxOpset, importDepthToSpace);
  table.add("SpaceToDepth", 1, 12, importSpaceToDepth);
  table.add("SpaceToDepth", 13, kMaxOpset, importSpaceToDepth);
  table.add("Resize", 11, 12, importResize);
  table.add("Resize", 13, 17, importResize);
  table.add("Resize", 18, kMaxOpset, importResize);
}

} // namespace kiln::frontend
