//===- NodeContext.cpp - what an op handler sees of its node --------------===//

#include "frontend/NodeContext.h"
#include "frontend/GraphImporter.h"
#include "frontend/TensorConversion.h"

#include "onnx/onnx.pb.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace kiln::frontend {

NodeContext::NodeContext(GraphImporter &graph, const onnx::NodeProto &node, int64_t opset,
                         Location loc)
    : graph_(graph), node_(node), opset_(opset), loc_(loc) {}

OpBuilder &NodeContext::builder() { return graph_.builder(); }
MLIRContext *NodeContext::context() { return &graph_.context(); }

llvm::Error NodeContext::error(const llvm::Twine &message) const {
  std::string name = node_.name().empty() ? "<unnamed>" : node_.name();
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "node '" + name + "' (" + node_.op_type() + ", opset " +
                                     std::to_string(opset_) + "): " + message);
}

size_t NodeContext::numInputs() const { return node_.input_size(); }
bool NodeContext::hasInput(size_t i) const {
  return i < (size_t)node_.input_size() && !node_.input(i).empty();
}

llvm::Expected<Value> NodeContext::input(size_t i) {
  if (!hasInput(i))
    return error(llvm::formatv("input {0} is required but missing", i));
  return graph_.materialize(node_.input(i));
}

llvm::Expected<SmallVector<Value>> NodeContext::inputs(size_t count, size_t required) {
  SmallVector<Value> values;
  for (size_t i = 0; i < std::min(count, numInputs()); ++i) {
    if (i >= required && !hasInput(i))
      continue;
    auto v = input(i);
    if (!v)
      return v.takeError();
    values.push_back(*v);
  }
  if (required != SIZE_MAX && values.size() < std::min(required, count))
    return error(llvm::formatv("needs at least {0} inputs, has {1}", required, values.size()));
  return values;
}

llvm::Expected<Value> NodeContext::asScalar(Value v, llvm::StringRef what) {
  auto type = llvm::cast<RankedTensorType>(v.getType());
  if (type.getRank() == 0)
    return v;
  if (type.getNumElements() != 1)
    return error("input '" + what + "' must hold one value, got shape " +
                 formatShape(type.getShape()));
  return buildValue("reshape", {v}, {}, {RankedTensorType::get({}, type.getElementType())});
}

RankedTensorType NodeContext::inputType(size_t i) const {
  const ValueEntry *e = hasInput(i) ? graph_.lookup(node_.input(i)) : nullptr;
  return e ? e->type : RankedTensorType();
}

const HostTensor *NodeContext::constantInput(size_t i) const {
  const ValueEntry *e = hasInput(i) ? graph_.lookup(node_.input(i)) : nullptr;
  return e && e->host ? &*e->host : nullptr;
}

llvm::Expected<std::vector<int64_t>> NodeContext::constantInts(size_t i, llvm::StringRef what) {
  const HostTensor *t = constantInput(i);
  if (!t)
    return error("input '" + what + "' ('" + (hasInput(i) ? node_.input(i) : std::string()) +
                 "') must be a constant, because it determines a static shape; give the "
                 "graph input a fixed value or export the model with it as an initializer");
  return t->asInts();
}

size_t NodeContext::numOutputs() const { return node_.output_size(); }
bool NodeContext::hasOutput(size_t i) const {
  return i < (size_t)node_.output_size() && !node_.output(i).empty();
}

std::optional<RankedTensorType> NodeContext::declaredOutputType(size_t i) const {
  if (!hasOutput(i))
    return std::nullopt;
  return graph_.declaredType(node_.output(i));
}

void NodeContext::setOutput(size_t i, Value value) {
  if (!hasOutput(i))
    return;
  ValueEntry entry;
  entry.type = llvm::cast<RankedTensorType>(value.getType());
  entry.value = value;
  graph_.define(node_.output(i), std::move(entry));
}

void NodeContext::setConstantOutput(size_t i, HostTensor value) {
  if (!hasOutput(i))
    return;
  ValueEntry entry;
  auto element = convertElementType(*context(), value.onnxType);
  entry.type = RankedTensorType::get(value.shape, *element);
  entry.host = std::move(value);
  graph_.define(node_.output(i), std::move(entry));
}

void NodeContext::setAttrOutput(size_t i, ElementsAttr value) {
  if (!hasOutput(i))
    return;
  ValueEntry entry;
  entry.type = llvm::cast<RankedTensorType>(value.getType());
  entry.attr = value;
  graph_.define(node_.output(i), std::move(entry));
}

int64_t NodeContext::foldElementLimit() const { return graph_.options().foldElementLimit; }

llvm::Error NodeContext::setTensorOutput(size_t i, const onnx::TensorProto &tensor) {
  auto raw = decodeTensor(*context(), tensor, graph_.modelDir());
  if (!raw)
    return error(llvm::toString(raw.takeError()));
  if (!hasOutput(i))
    return llvm::Error::success();
  ValueEntry entry;
  entry.type = raw->type;
  entry.attr = toElementsAttr(*raw, node_.output(i), graph_.options().inlineElementLimit);
  if (raw->type.getNumElements() <= graph_.options().foldElementLimit)
    entry.host = toHostTensor(*raw);
  graph_.define(node_.output(i), std::move(entry));
  return llvm::Error::success();
}

const onnx::AttributeProto *NodeContext::attr(llvm::StringRef name) const {
  for (const onnx::AttributeProto &a : node_.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}
bool NodeContext::hasAttr(llvm::StringRef name) const { return attr(name) != nullptr; }
int64_t NodeContext::attrInt(llvm::StringRef name, int64_t fallback) const {
  const onnx::AttributeProto *a = attr(name);
  return a ? a->i() : fallback;
}
float NodeContext::attrFloat(llvm::StringRef name, float fallback) const {
  const onnx::AttributeProto *a = attr(name);
  return a ? a->f() : fallback;
}
std::string NodeContext::attrString(llvm::StringRef name, llvm::StringRef fallback) const {
  const onnx::AttributeProto *a = attr(name);
  return a ? a->s() : fallback.str();
}
std::vector<int64_t> NodeContext::attrInts(llvm::StringRef name, std::vector<int64_t> fallback) const {
  const onnx::AttributeProto *a = attr(name);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : fallback;
}
std::vector<float> NodeContext::attrFloats(llvm::StringRef name) const {
  const onnx::AttributeProto *a = attr(name);
  return a ? std::vector<float>(a->floats().begin(), a->floats().end()) : std::vector<float>{};
}

NamedAttribute NodeContext::i64(llvm::StringRef name, int64_t v) {
  return builder().getNamedAttr(name, builder().getI64IntegerAttr(v));
}
NamedAttribute NodeContext::f32(llvm::StringRef name, float v) {
  return builder().getNamedAttr(name, builder().getF32FloatAttr(v));
}
NamedAttribute NodeContext::boolean(llvm::StringRef name, bool v) {
  return builder().getNamedAttr(name, builder().getBoolAttr(v));
}
NamedAttribute NodeContext::str(llvm::StringRef name, llvm::StringRef v) {
  return builder().getNamedAttr(name, builder().getStringAttr(v));
}
NamedAttribute NodeContext::i64Array(llvm::StringRef name, llvm::ArrayRef<int64_t> v) {
  return builder().getNamedAttr(name, builder().getDenseI64ArrayAttr(v));
}

llvm::Expected<Operation *> NodeContext::build(llvm::StringRef opName, ValueRange operands,
                                               llvm::ArrayRef<NamedAttribute> attrs,
                                               TypeRange resultTypes) {
  // Collect every diagnostic the op emits (inference, verification) into the error text.
  std::string diagnostics;
  ScopedDiagnosticHandler handler(context(), [&](Diagnostic &diag) {
    if (!diagnostics.empty())
      diagnostics += "; ";
    diagnostics += diag.str();
    return success();
  });
  OperationState state(loc_, ("kiln." + opName).str());
  state.addOperands(operands);
  state.addAttributes(attrs);
  std::optional<RegisteredOperationName> name = state.name.getRegisteredInfo();
  if (!name)
    return error("internal: kiln." + opName + " is not a registered op");
  bool infer = resultTypes.empty();
  if (infer) {
    auto *inference = name->getInterface<InferTypeOpInterface>();
    if (!inference)
      return error("internal: kiln." + opName + " needs explicit result types");
    // Inference needs the op's properties, so create it with a placeholder type first.
    state.addTypes(operands.front().getType());
  } else {
    state.addTypes(resultTypes);
  }
  Operation *op = builder().create(state);
  if (infer) {
    SmallVector<Type> inferred;
    auto iface = llvm::cast<InferTypeOpInterface>(op);
    if (failed(iface.inferReturnTypes(context(), loc_, op->getOperands(),
                                      op->getRawDictionaryAttrs(), op->getPropertiesStorage(),
                                      op->getRegions(), inferred))) {
      op->erase();
      return error(diagnostics.empty() ? "result type inference failed" : diagnostics);
    }
    for (auto [result, type] : llvm::zip(op->getResults(), inferred))
      result.setType(type);
  }
  if (failed(mlir::verify(op))) {
    op->erase();
    return error(diagnostics.empty() ? "kiln." + opName + " failed verification" : diagnostics);
  }
  return op;
}

llvm::Expected<Value> NodeContext::buildValue(llvm::StringRef opName, ValueRange operands,
                                              llvm::ArrayRef<NamedAttribute> attrs,
                                              TypeRange resultTypes) {
  auto op = build(opName, operands, attrs, resultTypes);
  if (!op)
    return op.takeError();
  return (*op)->getResult(0);
}

llvm::Error NodeContext::buildInto0(llvm::StringRef opName, ValueRange operands,
                                    llvm::ArrayRef<NamedAttribute> attrs, TypeRange resultTypes) {
  auto value = buildValue(opName, operands, attrs, resultTypes);
  if (!value)
    return value.takeError();
  setOutput(0, *value);
  return llvm::Error::success();
}

Value NodeContext::constant(const HostTensor &value, Type element) {
  auto type = RankedTensorType::get(value.shape, element);
  OperationState state(loc_, "kiln.constant");
  state.addAttribute("value", toDenseAttr(value, type));
  state.addTypes(type);
  return builder().create(state)->getResult(0);
}

Value NodeContext::i64Constant(llvm::ArrayRef<int64_t> values, bool scalar) {
  HostTensor t;
  t.onnxType = onnx::TensorProto::INT64;
  if (!scalar)
    t.shape = {(int64_t)values.size()};
  for (int64_t v : values)
    t.values.push_back(v);
  return constant(t, builder().getI64Type());
}

llvm::Expected<int64_t> nodeAxis(const NodeContext &ctx, int64_t axis, int64_t rank) {
  auto normalized = normalizeAxis(axis, rank);
  if (!normalized)
    return ctx.error(llvm::toString(normalized.takeError()));
  return *normalized;
}

} // namespace kiln::frontend
