//===- OpDescription.cpp - kiln ops as plain descriptions -----------------===//

#include "codegen/OpDescription.h"

#include "ir/Interpreter/Tensor.h"
#include "ir/KilnOps.h"
#include "ir/Provenance.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/APFloat.h"

#include <cstring>

namespace kiln::codegen {
namespace {

llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// ODS operand counts of the ops whose one optional operand is last (absent = shorter list).
int odsOperandCount(llvm::StringRef opName) {
  if (opName == "kiln.conv" || opName == "kiln.conv_transpose" || opName == "kiln.layer_norm" ||
      opName == "kiln.gemm")
    return 3;
  if (opName.starts_with("kiln.reduce_"))
    return 2;
  return -1;
}

void addAttribute(OpDesc &desc, llvm::StringRef name, mlir::Attribute attr) {
  using namespace mlir;
  if (auto b = llvm::dyn_cast<BoolAttr>(attr))
    desc.attrs[name.str()] = static_cast<int64_t>(b.getValue());
  else if (auto i = llvm::dyn_cast<IntegerAttr>(attr))
    desc.attrs[name.str()] = i.getType().isInteger(1) ? static_cast<int64_t>(i.getValue().getBoolValue())
                                                       : i.getValue().getSExtValue();
  else if (auto f = llvm::dyn_cast<FloatAttr>(attr))
    desc.attrs[name.str()] = f.getValueAsDouble();
  else if (auto s = llvm::dyn_cast<StringAttr>(attr))
    desc.attrs[name.str()] = s.getValue().str();
  else if (auto a = llvm::dyn_cast<DenseI64ArrayAttr>(attr))
    desc.attrs[name.str()] = std::vector<int64_t>(a.asArrayRef().begin(), a.asArrayRef().end());
  else if (auto a = llvm::dyn_cast<DenseF32ArrayAttr>(attr))
    desc.attrs[name.str()] = std::vector<double>(a.asArrayRef().begin(), a.asArrayRef().end());
  else if (auto a = llvm::dyn_cast<DenseF64ArrayAttr>(attr))
    desc.attrs[name.str()] = std::vector<double>(a.asArrayRef().begin(), a.asArrayRef().end());
  else if (auto a = llvm::dyn_cast<ArrayAttr>(attr)) {
    std::vector<int64_t> ints;
    std::vector<double> floats;
    for (Attribute element : a) {
      if (auto i = llvm::dyn_cast<IntegerAttr>(element))
        ints.push_back(i.getValue().getSExtValue());
      else if (auto f = llvm::dyn_cast<FloatAttr>(element))
        floats.push_back(f.getValueAsDouble());
    }
    if (!floats.empty())
      desc.attrs[name.str()] = floats;
    else
      desc.attrs[name.str()] = ints;
  }
}

} // namespace

std::vector<mlir::Value> operandSlots(mlir::Operation *op) {
  std::vector<mlir::Value> slots;
  auto properties = llvm::dyn_cast_or_null<mlir::DictionaryAttr>(op->getPropertiesAsAttribute());
  auto segments = properties ? properties.getAs<mlir::DenseI32ArrayAttr>("operandSegmentSizes") : nullptr;
  if (segments) {
    unsigned next = 0;
    for (int32_t size : segments.asArrayRef())
      slots.push_back(size == 0 ? mlir::Value() : op->getOperand(next++));
    return slots;
  }
  slots.assign(op->getOperands().begin(), op->getOperands().end());
  int ods = odsOperandCount(op->getName().getStringRef());
  while (ods > 0 && static_cast<int>(slots.size()) < ods)
    slots.push_back(mlir::Value());
  return slots;
}

llvm::Expected<DType> dtypeOf(mlir::Type type) {
  if (type.isF32())
    return DType::F32;
  if (type.isF16())
    return DType::F16;
  if (type.isBF16())
    return DType::BF16;
  if (type.isF64())
    return DType::F64;
  if (llvm::isa<mlir::Float8E4M3FNType>(type))
    return DType::F8E4M3FN;
  if (auto i = llvm::dyn_cast<mlir::IntegerType>(type)) {
    bool isUnsigned = i.isUnsigned();
    switch (i.getWidth()) {
    case 1: return DType::Bool;
    case 8: return isUnsigned ? DType::U8 : DType::I8;
    case 16: return isUnsigned ? DType::U16 : DType::I16;
    case 32: return isUnsigned ? DType::U32 : DType::I32;
    case 64: return isUnsigned ? DType::U64 : DType::I64;
    default: break;
    }
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return error("element type " + text + " has no GPU representation");
}

llvm::Expected<TensorDesc> describeValue(mlir::Value value) {
  auto type = llvm::dyn_cast<mlir::RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape())
    return error("GPU codegen needs statically shaped tensors");
  auto dtype = dtypeOf(type.getElementType());
  if (!dtype)
    return dtype.takeError();
  TensorDesc desc;
  desc.dtype = *dtype;
  desc.shape.assign(type.getShape().begin(), type.getShape().end());
  return desc;
}

llvm::Error opError(mlir::Operation *op, const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 op->getName().getStringRef() + " '" + nodeName(op) + "': " + message);
}

namespace {
/// OpDesc::body and OpDesc::yields of a fusion group whose operands `desc` already describes.
llvm::Error describeBody(FusionGroupOp group, OpDesc &desc) {
  mlir::Block &block = group.getBody().front();
  llvm::DenseMap<mlir::Value, BodyRef> refs;
  for (mlir::BlockArgument argument : block.getArguments())
    refs[argument] = BodyRef{true, argument.getArgNumber()};
  for (mlir::Operation &inner : block.without_terminator()) {
    auto innerDesc = describeOp(&inner);
    if (!innerDesc)
      return innerDesc.takeError();
    BodyOp node{std::move(*innerDesc), {}};
    for (auto [slot, operand] : llvm::enumerate(operandSlots(&inner))) {
      auto ref = refs.find(operand);
      if (!operand || ref == refs.end())
        return opError(&inner, "internal: a fusion group body op reads a value from outside the group");
      node.args.push_back(ref->second);
      if (ref->second.isInput) // the group operand's description: constant values included
        node.op.operands[slot] = desc.operands[ref->second.index];
    }
    for (mlir::Value result : inner.getResults())
      refs[result] = BodyRef{false, static_cast<uint32_t>(desc.body.size())};
    desc.body.push_back(std::move(node));
  }
  auto yield = llvm::cast<YieldOp>(block.getTerminator());
  for (mlir::Value value : yield.getValues()) {
    auto ref = refs.find(value);
    if (ref == refs.end())
      return opError(group, "internal: a fusion group yields a value from outside its body");
    desc.yields.push_back(ref->second);
  }
  return llvm::Error::success();
}
} // namespace

llvm::Expected<OpDesc> describeOp(mlir::Operation *op) {
  OpDesc desc;
  desc.op = op->getName().getStringRef().str();
  desc.name = nodeName(op);

  auto describeOperand = [&](mlir::Value value) -> llvm::Expected<TensorDesc> {
    auto tensor = describeValue(value);
    if (!tensor)
      return tensor.takeError();
    auto constant = value.getDefiningOp<ConstantOp>();
    if (constant && tensor->numElements() <= kMaxConstantValues) {
      auto values = interp::fromAttr(constant.getValue());
      if (!values)
        return values.takeError();
      if (values->isFloat())
        tensor->floats = values->f;
      else
        tensor->ints = values->i;
    }
    return tensor;
  };

  for (mlir::Value operand : operandSlots(op)) {
    if (!operand) {
      desc.operands.push_back(std::nullopt);
      continue;
    }
    auto tensor = describeOperand(operand);
    if (!tensor)
      return tensor.takeError();
    desc.operands.push_back(std::move(*tensor));
  }
  for (mlir::Value result : op->getResults()) {
    auto tensor = describeValue(result);
    if (!tensor)
      return tensor.takeError();
    desc.results.push_back(std::move(*tensor));
  }

  auto propertyDict = llvm::dyn_cast_or_null<mlir::DictionaryAttr>(op->getPropertiesAsAttribute());
  if (propertyDict)
    for (mlir::NamedAttribute attr : propertyDict)
      if (attr.getName() != "operandSegmentSizes")
        addAttribute(desc, attr.getName().getValue(), attr.getValue());
  for (mlir::NamedAttribute attr : op->getDiscardableAttrs())
    addAttribute(desc, attr.getName().getValue(), attr.getValue());
  if (auto group = llvm::dyn_cast<FusionGroupOp>(op))
    if (auto err = describeBody(group, desc))
      return std::move(err);
  return desc;
}

llvm::Expected<std::vector<uint8_t>> constantBytes(mlir::ElementsAttr value) {
  auto type = llvm::cast<mlir::RankedTensorType>(value.getType());
  unsigned bits = type.getElementTypeBitWidth();
  size_t elementBytes = bits == 1 ? 1 : bits / 8;
  size_t total = static_cast<size_t>(type.getNumElements()) * elementBytes;
  if (auto resource = llvm::dyn_cast<mlir::DenseResourceElementsAttr>(value)) {
    mlir::AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return error("constant payload is not available (elided resource blob?)");
    llvm::ArrayRef<char> data = blob->getData();
    if (data.size() != total)
      return error("resource blob size does not match its tensor type");
    return std::vector<uint8_t>(data.begin(), data.end());
  }
  // Small dense constants: through the interpreter's tensor, then element bit patterns.
  auto tensor = interp::fromAttr(value);
  if (!tensor)
    return tensor.takeError();
  std::vector<uint8_t> bytes(total);
  for (int64_t k = 0; k < tensor->size(); ++k) {
    uint64_t raw;
    if (auto floatType = llvm::dyn_cast<mlir::FloatType>(tensor->element)) {
      llvm::APFloat v(tensor->f[k]);
      bool losesInfo = false;
      v.convert(floatType.getFloatSemantics(), llvm::APFloat::rmNearestTiesToEven, &losesInfo);
      raw = v.bitcastToAPInt().getZExtValue();
    } else {
      raw = static_cast<uint64_t>(tensor->i[k]);
    }
    std::memcpy(bytes.data() + k * elementBytes, &raw, elementBytes); // little-endian host
  }
  return bytes;
}

} // namespace kiln::codegen
