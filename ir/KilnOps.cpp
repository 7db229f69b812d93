//===- KilnOps.cpp - kiln dialect ops: inference, verifiers, folders -------===//
//
// Shape logic lives in ShapeRules.cpp; this file adapts it to op operands and attributes and
// reports failures as op diagnostics.
//
//===----------------------------------------------------------------------===//

#include "ir/KilnOps.h"
#include "ir/ShapeRules.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace kiln {
namespace {

RankedTensorType tensorType(Value v) { return llvm::cast<RankedTensorType>(v.getType()); }
ArrayRef<int64_t> shapeOf(Value v) { return tensorType(v).getShape(); }
Type elementOf(Value v) { return tensorType(v).getElementType(); }

/// Reports `err` at `location` (inference) and returns failure.
LogicalResult inferenceError(std::optional<Location> location, StringRef opName, llvm::Error err) {
  std::string message = llvm::toString(std::move(err));
  return emitOptionalError(location, "'kiln.", opName, "': ", message);
}

/// Pushes a tensor of `shape` and `element` onto `inferred`, or reports the shape error.
LogicalResult pushShape(std::optional<Location> location, StringRef opName, ShapeOrError shape,
                        Type element, SmallVectorImpl<Type> &inferred) {
  if (!shape)
    return inferenceError(location, opName, shape.takeError());
  inferred.push_back(RankedTensorType::get(*shape, element));
  return success();
}

/// Values of a constant integer tensor operand, if it is one.
std::optional<SmallVector<int64_t>> constantInts(Value value) {
  if (!value)
    return std::nullopt;
  DenseIntElementsAttr attr;
  if (!matchPattern(value, m_Constant(&attr)))
    return std::nullopt;
  SmallVector<int64_t> values;
  for (const APInt &v : attr.getValues<APInt>())
    values.push_back(v.getSExtValue());
  return values;
}

/// Values of a constant floating-point (or integer) rank-0/1 operand, as doubles.
std::optional<SmallVector<double>> constantDoubles(Value value) {
  if (!value)
    return std::nullopt;
  DenseElementsAttr attr;
  if (!matchPattern(value, m_Constant(&attr)))
    return std::nullopt;
  SmallVector<double> values;
  if (auto floats = llvm::dyn_cast<DenseFPElementsAttr>(attr)) {
    for (const APFloat &v : floats.getValues<APFloat>())
      values.push_back(v.convertToDouble());
  } else if (auto ints = llvm::dyn_cast<DenseIntElementsAttr>(attr)) {
    bool isUnsigned = ints.getElementType().isUnsignedInteger();
    for (const APInt &v : ints.getValues<APInt>())
      values.push_back(isUnsigned ? (double)v.getZExtValue() : (double)v.getSExtValue());
  } else {
    return std::nullopt;
  }
  return values;
}

/// Verifies that `op`'s result has `shape` (from a constant parameter), or reports the mismatch.
LogicalResult verifyResultShape(Operation *op, Value result, ShapeOrError shape) {
  if (!shape)
    return op->emitOpError() << llvm::toString(shape.takeError());
  if (shapeOf(result) != ArrayRef<int64_t>(*shape))
    return op->emitOpError() << "result shape " << formatShape(shapeOf(result))
                             << " differs from the shape its operands give, "
                             << formatShape(*shape);
  return success();
}

LogicalResult verifyRank0or1(Operation *op, Value v, StringRef name) {
  if (tensorType(v).getRank() > 1)
    return op->emitOpError() << "'" << name << "' must have rank 0 or 1, got rank "
                             << tensorType(v).getRank();
  return success();
}

LogicalResult verifySameElement(Operation *op, Value a, Value b, StringRef what) {
  if (elementOf(a) != elementOf(b))
    return op->emitOpError() << what << " element type " << elementOf(b)
                             << " differs from the input's " << elementOf(a);
  return success();
}

} // namespace

Type elementOfFirst(ValueRange operands) { return elementOf(operands.front()); }

LogicalResult inferBroadcastResult(std::optional<Location> location, ValueRange operands,
                                   Type resultElement, SmallVectorImpl<Type> &inferred) {
  Shape shape;
  Type element = elementOf(operands.front());
  for (Value v : operands) {
    // An explicit result element (comparisons' i1, pow's base type) allows mixed operands only
    // for pow; everything else needs one element type.
    bool mixedAllowed = resultElement && resultElement == element && !resultElement.isInteger(1);
    if (!mixedAllowed && elementOf(v) != element)
      return emitOptionalError(location, "operand element types differ: ", element, " vs ",
                               elementOf(v));
    auto merged = broadcastShapes(shape, shapeOf(v));
    if (!merged)
      return emitOptionalError(location, llvm::toString(merged.takeError()));
    shape = *merged;
  }
  inferred.push_back(RankedTensorType::get(shape, resultElement ? resultElement : element));
  return success();
}

//===----------------------------------------------------------------------===//
// Constant
//===----------------------------------------------------------------------===//

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

LogicalResult ConstantOp::verify() {
  // A resource blob must hold exactly the tensor's bytes, or every reader runs past its end.
  auto resource = llvm::dyn_cast<DenseResourceElementsAttr>(getValue());
  if (!resource)
    return success();
  AsmResourceBlob *blob = resource.getRawHandle().getBlob();
  if (!blob)
    return success(); // Not loaded (e.g. parsed with resources elided): nothing to check.
  auto type = llvm::cast<RankedTensorType>(resource.getType());
  int64_t bits = type.getElementTypeBitWidth();
  if (bits == 1)
    return emitOpError("i1 constants must be dense, not resource blobs");
  int64_t expected = type.getNumElements() * (bits / 8);
  if ((int64_t)blob->getData().size() != expected)
    return emitOpError() << "resource blob holds " << blob->getData().size() << " bytes, but "
                         << type << " needs " << expected;
  return success();
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

LogicalResult WhereOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                        Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  if (elementOf(adaptor.getX()) != elementOf(adaptor.getY()))
    return emitOptionalError(location, "'kiln.where': x and y element types differ");
  auto shape = broadcastShapes(shapeOf(adaptor.getCondition()), shapeOf(adaptor.getX()));
  if (shape)
    shape = broadcastShapes(*shape, shapeOf(adaptor.getY()));
  return pushShape(location, "where", std::move(shape), elementOf(adaptor.getX()), inferred);
}

LogicalResult ClipOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                       Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  Type element = elementOf(adaptor.getInput());
  for (Value bound : {adaptor.getMin(), adaptor.getMax()})
    if (tensorType(bound).getRank() != 0 || elementOf(bound) != element)
      return emitOptionalError(location, "'kiln.clip': min and max must be rank-0 tensors of ",
                               element);
  inferred.push_back(adaptor.getInput().getType());
  return success();
}

//===----------------------------------------------------------------------===//
// Convolution, pooling, normalization
//===----------------------------------------------------------------------===//

/// Weight, bias and other parameters must share the input's element type.
static LogicalResult checkSameElements(StringRef name, std::optional<Location> location,
                                       Value input, std::initializer_list<Value> params) {
  for (Value p : params)
    if (p && elementOf(p) != elementOf(input))
      return emitOptionalError(location, "'kiln.", name, "': operand element type ", elementOf(p),
                               " differs from the input's ", elementOf(input));
  return success();
}

LogicalResult ConvOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                       Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  if (failed(checkSameElements("conv", location, adaptor.getInput(),
                               {adaptor.getWeight(), adaptor.getBias()})))
    return failure();
  // channels_last is the same convolution with the channel axis moved last in every operand.
  bool last = adaptor.getChannelsLast();
  auto order = [&](ArrayRef<int64_t> dims) { return last ? toChannelsFirst(dims) : Shape(dims); };
  if (last && (shapeOf(adaptor.getInput()).size() < 3 || shapeOf(adaptor.getWeight()).size() < 3))
    return emitOptionalError(location, "'kiln.conv': channels_last needs rank >= 3 operands");
  auto shape = convShape(order(shapeOf(adaptor.getInput())), order(shapeOf(adaptor.getWeight())),
                         adaptor.getStrides(), adaptor.getDilations(), adaptor.getPads(),
                         (int64_t)adaptor.getGroup());
  if (shape && adaptor.getBias() && shapeOf(adaptor.getBias()) != ArrayRef<int64_t>{(*shape)[1]})
    return emitOptionalError(location, "'kiln.conv': bias must have shape [", (*shape)[1], "]");
  if (shape && last)
    shape = toChannelsLast(*shape);
  return pushShape(location, "conv", std::move(shape), elementOf(adaptor.getInput()), inferred);
}

LogicalResult ConvTransposeOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                                Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  if (failed(checkSameElements("conv_transpose", location, adaptor.getInput(),
                               {adaptor.getWeight(), adaptor.getBias()})))
    return failure();
  auto shape = convTransposeShape(shapeOf(adaptor.getInput()), shapeOf(adaptor.getWeight()),
                                  adaptor.getStrides(), adaptor.getDilations(), adaptor.getPads(),
                                  adaptor.getOutputPadding(), (int64_t)adaptor.getGroup());
  if (shape && adaptor.getBias() && shapeOf(adaptor.getBias()) != ArrayRef<int64_t>{(*shape)[1]})
    return emitOptionalError(location, "'kiln.conv_transpose': bias must have shape [",
                             (*shape)[1], "]");
  return pushShape(location, "conv_transpose", std::move(shape), elementOf(adaptor.getInput()),
                   inferred);
}

template <typename AdaptorT>
static LogicalResult inferPool(StringRef name, std::optional<Location> location, AdaptorT adaptor,
                               SmallVectorImpl<Type> &inferred) {
  bool last = adaptor.getChannelsLast();
  ArrayRef<int64_t> in = shapeOf(adaptor.getInput());
  if (last && in.size() < 3)
    return emitOptionalError(location, "'kiln.", name, "': channels_last needs rank >= 3");
  auto shape = poolShape(last ? toChannelsFirst(in) : Shape(in), adaptor.getKernelShape(),
                         adaptor.getStrides(), adaptor.getDilations(), adaptor.getPads(),
                         adaptor.getCeilMode());
  if (shape && last)
    shape = toChannelsLast(*shape);
  return pushShape(location, name, std::move(shape), elementOf(adaptor.getInput()), inferred);
}
LogicalResult MaxPoolOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                          Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  return inferPool("max_pool", location, adaptor, inferred);
}
LogicalResult AvgPoolOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                          Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  return inferPool("avg_pool", location, adaptor, inferred);
}

static LogicalResult inferGlobalPool(StringRef name, std::optional<Location> location, Value input,
                                     bool channelsLast, SmallVectorImpl<Type> &inferred) {
  ArrayRef<int64_t> in = shapeOf(input);
  if (in.size() < 3)
    return emitOptionalError(location, "'kiln.", name, "': input must have rank >= 3, got ",
                             formatShape(in));
  Shape out(in.size(), 1);
  out[0] = in[0];
  if (channelsLast)
    out.back() = in.back();
  else
    out[1] = in[1];
  inferred.push_back(RankedTensorType::get(out, elementOf(input)));
  return success();
}
LogicalResult GlobalAvgPoolOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                                Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  return inferGlobalPool("global_avg_pool", location, adaptor.getInput(),
                         adaptor.getChannelsLast(), inferred);
}
LogicalResult GlobalMaxPoolOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                                Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  return inferGlobalPool("global_max_pool", location, adaptor.getInput(),
                         adaptor.getChannelsLast(), inferred);
}

/// Checks that each parameter is a 1-d tensor of `size` elements of the input's type.
static LogicalResult checkChannelParams(StringRef name, std::optional<Location> location,
                                        Value input, ValueRange params, int64_t size) {
  for (Value p : params) {
    if (!p)
      continue;
    if (shapeOf(p) != ArrayRef<int64_t>{size})
      return emitOptionalError(location, "'kiln.", name, "': parameters must have shape [", size,
                               "], got ", formatShape(shapeOf(p)));
    if (elementOf(p) != elementOf(input))
      return emitOptionalError(location, "'kiln.", name,
                               "': parameters must have the input's element type");
  }
  return success();
}

static LogicalResult inferChannelNorm(StringRef name, std::optional<Location> location,
                                      Value input, ValueRange params, int64_t minRank,
                                      SmallVectorImpl<Type> &inferred) {
  if (tensorType(input).getRank() < minRank)
    return emitOptionalError(location, "'kiln.", name, "': input must have rank >= ", minRank);
  if (failed(checkChannelParams(name, location, input, params, shapeOf(input)[1])))
    return failure();
  inferred.push_back(input.getType());
  return success();
}

LogicalResult BatchNormOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                            Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  return inferChannelNorm("batch_norm", location, adaptor.getInput(),
                          {adaptor.getScale(), adaptor.getBias(), adaptor.getMean(),
                           adaptor.getVariance()},
                          2, inferred);
}
LogicalResult InstanceNormOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                               Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  return inferChannelNorm("instance_norm", location, adaptor.getInput(),
                          {adaptor.getScale(), adaptor.getBias()}, 3, inferred);
}
LogicalResult GroupNormOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                            Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  ArrayRef<int64_t> in = shapeOf(adaptor.getInput());
  int64_t groups = (int64_t)adaptor.getNumGroups();
  if (in.size() < 3 || groups < 1 || in[1] % groups != 0)
    return emitOptionalError(location, "'kiln.group_norm': num_groups ", groups,
                             " must divide the channels of a rank >= 3 input");
  return inferChannelNorm("group_norm", location, adaptor.getInput(),
                          {adaptor.getScale(), adaptor.getBias()}, 3, inferred);
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                            Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  ArrayRef<int64_t> in = shapeOf(adaptor.getInput());
  int64_t axis = (int64_t)adaptor.getAxis();
  if (axis < 0 || axis >= (int64_t)in.size())
    return emitOptionalError(location, "'kiln.layer_norm': axis ", axis,
                             " must be in [0, rank) after import");
  if (failed(checkSameElements("layer_norm", location, adaptor.getInput(),
                               {adaptor.getScale(), adaptor.getBias()})))
    return failure();
  ArrayRef<int64_t> normalized = in.drop_front(axis);
  for (Value p : {adaptor.getScale(), adaptor.getBias()}) {
    if (!p)
      continue;
    auto b = broadcastShapes(normalized, shapeOf(p));
    if (!b || ArrayRef<int64_t>(*b) != normalized) {
      if (!b)
        llvm::consumeError(b.takeError());
      return emitOptionalError(location, "'kiln.layer_norm': scale/bias shape ",
                               formatShape(shapeOf(p)), " does not broadcast to ",
                               formatShape(normalized));
    }
  }
  inferred.push_back(adaptor.getInput().getType());
  return success();
}

//===----------------------------------------------------------------------===//
// Matrix products and softmax
//===----------------------------------------------------------------------===//

LogicalResult MatMulOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                         Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  if (elementOf(adaptor.getLhs()) != elementOf(adaptor.getRhs()))
    return emitOptionalError(location, "'kiln.matmul': operand element types differ");
  return pushShape(location, "matmul", matmulShape(shapeOf(adaptor.getLhs()), shapeOf(adaptor.getRhs())),
                   elementOf(adaptor.getLhs()), inferred);
}

LogicalResult GemmOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                       Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  ArrayRef<int64_t> a = shapeOf(adaptor.getA()), b = shapeOf(adaptor.getB());
  if (a.size() != 2 || b.size() != 2)
    return emitOptionalError(location, "'kiln.gemm': A and B must be 2-d");
  if (failed(checkSameElements("gemm", location, adaptor.getA(), {adaptor.getB(), adaptor.getC()})))
    return failure();
  int64_t m = adaptor.getTransA() ? a[1] : a[0], ka = adaptor.getTransA() ? a[0] : a[1];
  int64_t kb = adaptor.getTransB() ? b[1] : b[0], n = adaptor.getTransB() ? b[0] : b[1];
  if (ka != kb)
    return emitOptionalError(location, "'kiln.gemm': contraction sizes differ (", ka, " vs ", kb, ")");
  if (Value c = adaptor.getC()) {
    auto bc = broadcastShapes({m, n}, shapeOf(c));
    if (!bc || ArrayRef<int64_t>(*bc) != ArrayRef<int64_t>{m, n}) {
      if (!bc)
        llvm::consumeError(bc.takeError());
      return emitOptionalError(location, "'kiln.gemm': C of shape ", formatShape(shapeOf(c)),
                               " does not broadcast to ", m, "x", n);
    }
  }
  inferred.push_back(RankedTensorType::get({m, n}, elementOf(adaptor.getA())));
  return success();
}

LogicalResult EinsumOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                         Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  if (adaptor.getInputs().empty())
    return emitOptionalError(location, "'kiln.einsum': needs at least one operand");
  SmallVector<ArrayRef<int64_t>> shapes;
  for (Value v : adaptor.getInputs()) {
    if (elementOf(v) != elementOf(adaptor.getInputs().front()))
      return emitOptionalError(location, "'kiln.einsum': operand element types differ");
    shapes.push_back(shapeOf(v));
  }
  return pushShape(location, "einsum", einsumShape(adaptor.getEquation(), shapes),
                   elementOf(adaptor.getInputs().front()), inferred);
}

template <typename OpT>
static LogicalResult verifySoftmaxAxis(OpT op) {
  int64_t axis = (int64_t)op.getAxis();
  if (axis < 0 || axis >= op.getInput().getType().getRank())
    return op.emitOpError() << "axis " << axis << " must be in [0, rank) after import";
  return success();
}
LogicalResult SoftmaxOp::verify() { return verifySoftmaxAxis(*this); }
LogicalResult LogSoftmaxOp::verify() { return verifySoftmaxAxis(*this); }

std::array<int64_t, 4> AttentionOp::viewDims(llvm::StringRef role) {
  llvm::ArrayRef<int64_t> d = getDims(); // [B, H, Sq, Skv, D, Dv]
  if (role == "q")
    return {d[0], d[1], d[2], d[4]};
  if (role == "k")
    return {d[0], d[1], d[3], d[4]};
  if (role == "v")
    return {d[0], d[1], d[3], d[5]};
  if (role == "o")
    return {d[0], d[1], d[2], d[5]};
  return {d[0], d[1], d[2], d[3]}; // mask
}

LogicalResult AttentionOp::verify() {
  llvm::ArrayRef<int64_t> dims = getDims();
  if (dims.size() != 6 || llvm::any_of(dims, [](int64_t d) { return d < 1; }))
    return emitOpError("dims must be six positive sizes [B, H, Sq, Skv, D, Dv]");
  Type element = elementOf(getQ());
  for (Value v : {getK(), getV()})
    if (elementOf(v) != element)
      return emitOpError("q, k and v must share one element type");
  if (getMask() && elementOf(getMask()) != element)
    return emitOpError("mask must have q's element type");
  if (elementOf(getOutput()) != element)
    return emitOpError("the result must have q's element type");
  if (static_cast<bool>(getMask()) != getMaskView().has_value())
    return emitOpError("mask_view is given exactly when there is a mask");
  // Every element a view names must lie inside its tensor.
  auto check = [&](llvm::StringRef role, llvm::ArrayRef<int64_t> view, Value value) -> LogicalResult {
    if (view.size() != 5)
      return emitOpError() << role << "_view must be [offset, s_b, s_h, s_s, s_d]";
    if (llvm::any_of(view, [](int64_t x) { return x < 0; }))
      return emitOpError() << role << "_view must not be negative";
    std::array<int64_t, 4> d = viewDims(role);
    int64_t last = view[0];
    for (int i = 0; i < 4; ++i)
      last += (d[i] - 1) * view[i + 1];
    int64_t elements = llvm::cast<RankedTensorType>(value.getType()).getNumElements();
    if (last >= elements)
      return emitOpError() << role << "_view reaches element " << last << " of a tensor of " << elements;
    return success();
  };
  if (failed(check("q", getQView(), getQ())) || failed(check("k", getKView(), getK())) ||
      failed(check("v", getVView(), getV())) || failed(check("o", getOView(), getOutput())))
    return failure();
  if (getMask() && failed(check("mask", *getMaskView(), getMask())))
    return failure();
  // The result view must cover the result exactly once: as many elements, none written twice.
  std::array<int64_t, 4> o = viewDims("o");
  if (o[0] * o[1] * o[2] * o[3] != getOutput().getType().getNumElements())
    return emitOpError("o_view must cover every element of the result");
  llvm::SmallVector<std::pair<int64_t, int64_t>> used; // (stride, dim)
  for (int i = 0; i < 4; ++i)
    if (o[i] > 1)
      used.push_back({getOView()[i + 1], o[i]});
  llvm::sort(used);
  int64_t span = 1;
  for (auto [stride, dim] : used) {
    if (stride < span)
      return emitOpError("o_view writes two elements of the result at one place");
    span = stride * dim;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  if (getInput().getType().getElementType() != getOutput().getType().getElementType())
    return emitOpError("element types differ");
  if (getInput().getType().getNumElements() != getOutput().getType().getNumElements())
    return emitOpError() << "cannot reshape " << formatShape(shapeOf(getInput())) << " ("
                         << getInput().getType().getNumElements() << " elements) to "
                         << formatShape(shapeOf(getOutput())) << " ("
                         << getOutput().getType().getNumElements() << " elements)";
  return success();
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                            Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  return pushShape(location, "transpose", transposeShape(shapeOf(adaptor.getInput()), adaptor.getPerm()),
                   elementOf(adaptor.getInput()), inferred);
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                         Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  if (adaptor.getInputs().empty())
    return emitOptionalError(location, "'kiln.concat': needs at least one operand");
  SmallVector<ArrayRef<int64_t>> shapes;
  Type element = elementOf(adaptor.getInputs().front());
  for (Value v : adaptor.getInputs()) {
    if (elementOf(v) != element)
      return emitOptionalError(location, "'kiln.concat': operand element types differ");
    shapes.push_back(shapeOf(v));
  }
  return pushShape(location, "concat", concatShape(shapes, (int64_t)adaptor.getAxis()), element,
                   inferred);
}

LogicalResult SplitOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput());
  int64_t axis = (int64_t)getAxis();
  if (axis < 0 || axis >= (int64_t)in.size())
    return emitOpError() << "axis " << axis << " must be in [0, rank) after import";
  if (getOutputs().empty())
    return emitOpError("needs at least one result");
  int64_t total = 0;
  for (Value out : getOutputs()) {
    ArrayRef<int64_t> s = shapeOf(out);
    if (elementOf(out) != elementOf(getInput()) || s.size() != in.size())
      return emitOpError("results must have the input's element type and rank");
    for (size_t i = 0; i < in.size(); ++i)
      if ((int64_t)i != axis && s[i] != in[i])
        return emitOpError() << "result shape " << formatShape(s)
                             << " differs from the input off the split axis";
    total += s[axis];
  }
  if (total != in[axis])
    return emitOpError() << "split sizes add up to " << total << ", the axis has " << in[axis];
  return success();
}

LogicalResult SliceOp::verify() {
  if (elementOf(getInput()) != elementOf(getOutput()) ||
      tensorType(getInput()).getRank() != tensorType(getOutput()).getRank())
    return emitOpError("result must have the input's element type and rank");
  for (Value p : {getStarts(), getEnds(), getAxes(), getSteps()})
    if (tensorType(p).getRank() != 1 || shapeOf(p) != shapeOf(getStarts()))
      return emitOpError() << "starts, ends, axes and steps must be 1-d tensors of one length, got "
                           << formatShape(shapeOf(getStarts())) << ", "
                           << formatShape(shapeOf(getEnds())) << ", "
                           << formatShape(shapeOf(getAxes())) << " and "
                           << formatShape(shapeOf(getSteps()));
  for (auto [in, out] : llvm::zip(shapeOf(getInput()), shapeOf(getOutput())))
    if (out > in)
      return emitOpError() << "result shape " << formatShape(shapeOf(getOutput()))
                           << " is larger than the input's " << formatShape(shapeOf(getInput()));
  auto starts = constantInts(getStarts()), ends = constantInts(getEnds()),
       axes = constantInts(getAxes()), steps = constantInts(getSteps());
  if (!starts || !ends || !axes || !steps)
    return success(); // Computed parameters: the result type is the model's declaration.
  return verifyResultShape(*this, getOutput(),
                           sliceShape(shapeOf(getInput()), *starts, *ends, *axes, *steps));
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                         Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  return pushShape(location, "gather",
                   gatherShape(shapeOf(adaptor.getInput()), shapeOf(adaptor.getIndices()),
                               (int64_t)adaptor.getAxis()),
                   elementOf(adaptor.getInput()), inferred);
}

LogicalResult GatherNDOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                           Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  return pushShape(location, "gather_nd",
                   gatherNDShape(shapeOf(adaptor.getInput()), shapeOf(adaptor.getIndices()),
                                 (int64_t)adaptor.getBatchDims()),
                   elementOf(adaptor.getInput()), inferred);
}

LogicalResult GatherElementsOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                                 Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  ArrayRef<int64_t> in = shapeOf(adaptor.getInput()), idx = shapeOf(adaptor.getIndices());
  int64_t axis = (int64_t)adaptor.getAxis();
  if (in.size() != idx.size() || axis < 0 || axis >= (int64_t)in.size())
    return emitOptionalError(location, "'kiln.gather_elements': indices must have the input's "
                                       "rank and axis must be in [0, rank)");
  inferred.push_back(RankedTensorType::get(idx, elementOf(adaptor.getInput())));
  return success();
}

LogicalResult ExpandOp::verify() {
  if (elementOf(getInput()) != elementOf(getOutput()))
    return emitOpError("element types differ");
  auto shape = broadcastShapes(shapeOf(getInput()), shapeOf(getOutput()));
  return verifyResultShape(*this, getOutput(), std::move(shape));
}

LogicalResult TileOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput()), out = shapeOf(getOutput());
  if (elementOf(getInput()) != elementOf(getOutput()) || in.size() != out.size())
    return emitOpError("result must have the input's element type and rank");
  for (size_t i = 0; i < in.size(); ++i)
    if ((in[i] == 0 && out[i] != 0) || (in[i] != 0 && out[i] % in[i] != 0))
      return emitOpError() << "result axis " << i << " (" << out[i]
                           << ") is not a whole multiple of the input's " << in[i];
  return success();
}

LogicalResult PadOp::verify() {
  if (elementOf(getInput()) != elementOf(getOutput()) || elementOf(getValue()) != elementOf(getInput()))
    return emitOpError("result and padding value must have the input's element type");
  if (tensorType(getValue()).getRank() != 0)
    return emitOpError("padding value must be rank 0");
  if (shapeOf(getPads()) != ArrayRef<int64_t>{2 * tensorType(getInput()).getRank()})
    return emitOpError() << "pads must have shape [" << 2 * tensorType(getInput()).getRank()
                         << "] (begins then ends of every axis)";
  if (auto pads = constantInts(getPads()))
    return verifyResultShape(*this, getOutput(), padShape(shapeOf(getInput()), *pads));
  if (tensorType(getInput()).getRank() != tensorType(getOutput()).getRank())
    return emitOpError("result must have the input's rank");
  return success();
}

LogicalResult RangeOp::verify() {
  for (Value v : {getStart(), getLimit(), getDelta()}) {
    if (tensorType(v).getRank() != 0 || elementOf(v) != elementOf(getOutput()))
      return emitOpError("start, limit and delta must be rank-0 tensors of the result's type");
  }
  if (tensorType(getOutput()).getRank() != 1)
    return emitOpError("result must be 1-d");
  auto start = constantDoubles(getStart()), limit = constantDoubles(getLimit()),
       delta = constantDoubles(getDelta());
  if (!start || !limit || !delta)
    return success();
  auto count = rangeCount((*start)[0], (*limit)[0], (*delta)[0]);
  if (!count)
    return emitOpError() << llvm::toString(count.takeError());
  if (*count != shapeOf(getOutput())[0])
    return emitOpError() << "result has " << shapeOf(getOutput())[0] << " elements, the range "
                         << *count;
  return success();
}

LogicalResult TriluOp::verify() {
  if (tensorType(getInput()).getRank() < 2)
    return emitOpError("input must have rank >= 2");
  if (tensorType(getK()).getRank() != 0)
    return emitOpError("k must be rank 0");
  return success();
}

LogicalResult TopKOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput());
  int64_t axis = (int64_t)getAxis();
  if (axis < 0 || axis >= (int64_t)in.size())
    return emitOpError() << "axis " << axis << " must be in [0, rank) after import";
  if (shapeOf(getValues()) != shapeOf(getIndices()) || elementOf(getValues()) != elementOf(getInput()))
    return emitOpError("values and indices must have one shape; values the input's element type");
  ArrayRef<int64_t> out = shapeOf(getValues());
  for (size_t i = 0; i < in.size(); ++i)
    if (out.size() != in.size() || ((int64_t)i != axis && out[i] != in[i]) ||
        ((int64_t)i == axis && out[i] > in[i]))
      return emitOpError() << "result shape " << formatShape(out)
                           << " must equal the input's off the axis and be at most it along it";
  return success();
}

LogicalResult DepthToSpaceOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                               Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  return pushShape(location, "depth_to_space",
                   depthToSpaceShape(shapeOf(adaptor.getInput()), (int64_t)adaptor.getBlocksize()),
                   elementOf(adaptor.getInput()), inferred);
}

LogicalResult SpaceToDepthOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                               Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  return pushShape(location, "space_to_depth",
                   spaceToDepthShape(shapeOf(adaptor.getInput()), (int64_t)adaptor.getBlocksize()),
                   elementOf(adaptor.getInput()), inferred);
}

LogicalResult ResizeOp::verify() {
  int64_t rank = tensorType(getInput()).getRank();
  if (elementOf(getInput()) != elementOf(getOutput()) || tensorType(getOutput()).getRank() != rank)
    return emitOpError("result must have the input's element type and rank");
  if (Value scales = getScales()) {
    if (shapeOf(scales) != ArrayRef<int64_t>{rank})
      return emitOpError() << "scales must have shape [" << rank << "]";
  }
  if (Value roi = getRoi()) {
    if (shapeOf(roi) != ArrayRef<int64_t>{2 * rank})
      return emitOpError() << "roi must have shape [" << 2 * rank << "]";
  }
  if (getCoordinateTransformationMode() == "tf_crop_and_resize" && !getRoi())
    return emitOpError("tf_crop_and_resize needs a roi operand");
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions and scans
//===----------------------------------------------------------------------===//

template <typename OpT>
static LogicalResult verifyReduce(OpT op) {
  if (op.getInput().getType().getElementType() != op.getOutput().getType().getElementType())
    return op.emitOpError("result must have the input's element type");
  std::optional<SmallVector<int64_t>> axes;
  if (Value axesValue = op.getAxes()) {
    if (tensorType(axesValue).getRank() != 1)
      return op.emitOpError("axes must be 1-d");
    axes = constantInts(axesValue);
    if (!axes) {
      ArrayRef<int64_t> in = shapeOf(op.getInput()), out = shapeOf(op.getOutput());
      if (op.getKeepdims() ? in.size() != out.size() : out.size() > in.size())
        return op.emitOpError("result rank does not fit keepdims");
      if (op.getKeepdims())
        for (auto [i, o] : llvm::zip(in, out))
          if (o != i && o != 1)
            return op.emitOpError() << "with keepdims every result dim is the input's or 1, got "
                                    << formatShape(out) << " for input " << formatShape(in);
      return success();
    }
  }
  auto normalized = normalizeReduceAxes(
      op.getInput().getType().getRank(),
      axes ? std::optional<ArrayRef<int64_t>>(*axes) : std::nullopt, op.getNoopWithEmptyAxes());
  if (!normalized)
    return op.emitOpError() << llvm::toString(normalized.takeError());
  return verifyResultShape(op, op.getOutput(),
                           reduceShape(shapeOf(op.getInput()), *normalized, op.getKeepdims()));
}
LogicalResult ReduceMeanOp::verify() { return verifyReduce(*this); }
LogicalResult ReduceSumOp::verify() { return verifyReduce(*this); }
LogicalResult ReduceMaxOp::verify() { return verifyReduce(*this); }
LogicalResult ReduceMinOp::verify() { return verifyReduce(*this); }
LogicalResult ReduceProdOp::verify() { return verifyReduce(*this); }
LogicalResult ReduceL1Op::verify() { return verifyReduce(*this); }
LogicalResult ReduceL2Op::verify() { return verifyReduce(*this); }
LogicalResult ReduceSumSquareOp::verify() { return verifyReduce(*this); }
LogicalResult ReduceLogSumOp::verify() { return verifyReduce(*this); }
LogicalResult ReduceLogSumExpOp::verify() { return verifyReduce(*this); }

template <typename AdaptorT>
static LogicalResult inferArg(StringRef name, std::optional<Location> location, AdaptorT adaptor,
                              SmallVectorImpl<Type> &inferred) {
  ArrayRef<int64_t> in = shapeOf(adaptor.getInput());
  int64_t axis = (int64_t)adaptor.getAxis();
  if (axis < 0 || axis >= (int64_t)in.size())
    return emitOptionalError(location, "'kiln.", name, "': axis ", axis,
                             " must be in [0, rank) after import");
  int64_t axes[] = {axis};
  return pushShape(location, name, reduceShape(in, axes, adaptor.getKeepdims()),
                   IntegerType::get(adaptor.getInput().getContext(), 64), inferred);
}
LogicalResult ArgMaxOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                         Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  return inferArg("argmax", location, adaptor, inferred);
}
LogicalResult ArgMinOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                         Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  return inferArg("argmin", location, adaptor, inferred);
}

LogicalResult CumSumOp::verify() {
  if (tensorType(getAxis()).getRank() > 1 || tensorType(getAxis()).getNumElements() != 1)
    return emitOpError("axis must be a single integer (rank 0 or shape [1])");
  if (auto axis = constantInts(getAxis())) {
    auto normalized = normalizeAxis((*axis)[0], tensorType(getInput()).getRank(), "cumsum axis");
    if (!normalized)
      return emitOpError() << llvm::toString(normalized.takeError());
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Quantization
//===----------------------------------------------------------------------===//

/// Per-tensor (one scale) or per-axis (scale of the axis' size) parameters.
static LogicalResult verifyQuantParams(Operation *op, Value input, Value scale, Value zeroPoint,
                                       int64_t axis) {
  if (failed(verifyRank0or1(op, scale, "scale")) || failed(verifyRank0or1(op, zeroPoint, "zero_point")))
    return failure();
  if (shapeOf(scale) != shapeOf(zeroPoint))
    return op->emitOpError("scale and zero_point must have one shape");
  int64_t count = tensorType(scale).getNumElements();
  if (tensorType(scale).getRank() == 1 && count != 1) {
    int64_t rank = tensorType(input).getRank();
    if (axis < 0 || axis >= rank)
      return op->emitOpError() << "axis " << axis << " must be in [0, rank) for per-axis scales";
    if (shapeOf(input)[axis] != count)
      return op->emitOpError() << "per-axis scale has " << count << " values, axis " << axis
                               << " has " << shapeOf(input)[axis];
  }
  return success();
}

LogicalResult QuantizeOp::verify() {
  if (shapeOf(getInput()) != shapeOf(getOutput()))
    return emitOpError("result must have the input's shape");
  if (elementOf(getZeroPoint()) != elementOf(getOutput()))
    return emitOpError("zero_point must have the result's element type");
  if (failed(verifySameElement(*this, getInput(), getScale(), "scale")))
    return failure();
  return verifyQuantParams(*this, getInput(), getScale(), getZeroPoint(), (int64_t)getAxis());
}

LogicalResult DequantizeOp::verify() {
  if (shapeOf(getInput()) != shapeOf(getOutput()))
    return emitOpError("result must have the input's shape");
  if (failed(verifySameElement(*this, getInput(), getZeroPoint(), "zero_point")))
    return failure();
  if (elementOf(getScale()) != elementOf(getOutput()))
    return emitOpError("scale must have the result's element type");
  return verifyQuantParams(*this, getInput(), getScale(), getZeroPoint(), (int64_t)getAxis());
}

} // namespace kiln

#define GET_OP_CLASSES
namespace kiln {
namespace {

/// A transpose that keeps the order of its non-unit axes moves no bytes: a reshape.
struct TransposeOfUnitAxes : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op, PatternRewriter &rewriter) const override {
    llvm::ArrayRef<int64_t> shape = llvm::cast<RankedTensorType>(op.getInput().getType()).getShape();
    int64_t previous = -1;
    for (int64_t axis : op.getPerm()) {
      if (shape[axis] == 1)
        continue;
      if (axis < previous)
        return rewriter.notifyMatchFailure(op, "moves an axis of size > 1");
      previous = axis;
    }
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getOutput().getType(), op.getInput());
    return success();
  }
};

/// Whether `op` broadcasts its operands (numpy): an elementwise op of two or more operands
/// whose types do not have to match its result's.
bool broadcastsOperands(Operation *op) {
  return isElementwiseMap(op) && op->getNumOperands() >= 2 &&
         !op->hasTrait<mlir::OpTrait::SameOperandsAndResultShape>() &&
         !op->hasTrait<mlir::OpTrait::SameOperandsAndResultType>();
}

/// The result shape of broadcasting `op`'s operands with operand `index` read as `shape`.
FailureOr<Shape> broadcastWith(Operation *op, unsigned index, ArrayRef<int64_t> shape) {
  Shape result;
  for (OpOperand &operand : op->getOpOperands()) {
    ArrayRef<int64_t> dims = operand.getOperandNumber() == index ? shape : shapeOf(operand.get());
    auto merged = broadcastShapes(result, dims);
    if (!merged) {
      llvm::consumeError(merged.takeError());
      return failure();
    }
    result = *merged;
  }
  return result;
}

/// expand(x) to x's own shape is x; an elementwise op with numpy broadcasting reads x instead
/// of expand(x) wherever its result keeps its shape (the other operands span it).
struct ExpandIntoBroadcasts : OpRewritePattern<ExpandOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ExpandOp op, PatternRewriter &rewriter) const override {
    if (op.getInput().getType() == op.getOutput().getType()) {
      rewriter.replaceOp(op, op.getInput());
      return success();
    }
    bool changed = false;
    for (OpOperand &use : llvm::make_early_inc_range(op.getOutput().getUses())) {
      Operation *user = use.getOwner();
      if (!broadcastsOperands(user) || user->getNumResults() != 1)
        continue;
      FailureOr<Shape> shape = broadcastWith(user, use.getOperandNumber(), shapeOf(op.getInput()));
      if (failed(shape) || ArrayRef<int64_t>(*shape) != shapeOf(user->getResult(0)))
        continue;
      rewriter.modifyOpInPlace(user, [&] { use.set(op.getInput()); });
      changed = true;
    }
    return success(changed);
  }
};

/// gather(x, [0, 1, ..., n - 1]) along an axis of size n is x reshaped.
struct GatherOfEveryIndexInOrder : OpRewritePattern<GatherOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GatherOp op, PatternRewriter &rewriter) const override {
    ArrayRef<int64_t> input = shapeOf(op.getInput());
    int64_t axis = static_cast<int64_t>(op.getAxis());
    if (axis < 0 || axis >= static_cast<int64_t>(input.size()))
      return failure();
    std::optional<SmallVector<int64_t>> indices = constantInts(op.getIndices());
    if (!indices || static_cast<int64_t>(indices->size()) != input[axis])
      return failure();
    for (auto [position, index] : llvm::enumerate(*indices))
      if (index != static_cast<int64_t>(position))
        return failure();
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getOutput().getType(), op.getInput());
    return success();
  }
};

} // namespace

void GatherOp::getCanonicalizationPatterns(RewritePatternSet &patterns, MLIRContext *context) {
  patterns.add<GatherOfEveryIndexInOrder>(context);
}

void ExpandOp::getCanonicalizationPatterns(RewritePatternSet &patterns, MLIRContext *context) {
  patterns.add<ExpandIntoBroadcasts>(context);
}

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &patterns, MLIRContext *context) {
  patterns.add<TransposeOfUnitAxes>(context);
}

} // namespace kiln

#include "ir/KilnOps.cpp.inc"
