//===- TensorConversion.cpp - ONNX tensors and types to MLIR ---------------===//

#include "frontend/TensorConversion.h"
#include "frontend/ExternalData.h"
#include "ir/Interpreter/Tensor.h"

#include "onnx/onnx.pb.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstring>

using namespace mlir;

namespace kiln::frontend {
namespace {

llvm::Error tensorError(const onnx::TensorProto &t, const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "tensor '" + t.name() + "': " + message);
}

template <typename T>
void appendLE(std::vector<char> &bytes, T value) {
  const char *p = reinterpret_cast<const char *>(&value);
  bytes.insert(bytes.end(), p, p + sizeof(T));
}

const llvm::fltSemantics *floatSemantics(int32_t onnxType) {
  switch (onnxType) {
  case onnx::TensorProto::FLOAT: return &llvm::APFloat::IEEEsingle();
  case onnx::TensorProto::DOUBLE: return &llvm::APFloat::IEEEdouble();
  case onnx::TensorProto::FLOAT16: return &llvm::APFloat::IEEEhalf();
  case onnx::TensorProto::BFLOAT16: return &llvm::APFloat::BFloat();
  case 17: return &llvm::APFloat::Float8E4M3FN();
  default: return nullptr;
  }
}

} // namespace


llvm::Expected<Type> convertElementType(MLIRContext &ctx, int32_t dataType) {
  using TP = onnx::TensorProto;
  switch (dataType) {
  case TP::FLOAT: return Float32Type::get(&ctx);
  case TP::DOUBLE: return Float64Type::get(&ctx);
  case TP::FLOAT16: return Float16Type::get(&ctx);
  case TP::BFLOAT16: return BFloat16Type::get(&ctx);
  case 17: return Float8E4M3FNType::get(&ctx);
  case TP::BOOL: return IntegerType::get(&ctx, 1);
  case TP::INT8: return IntegerType::get(&ctx, 8);
  case TP::INT16: return IntegerType::get(&ctx, 16);
  case TP::INT32: return IntegerType::get(&ctx, 32);
  case TP::INT64: return IntegerType::get(&ctx, 64);
  case TP::UINT8: return IntegerType::get(&ctx, 8, IntegerType::Unsigned);
  case TP::UINT16: return IntegerType::get(&ctx, 16, IntegerType::Unsigned);
  case TP::UINT32: return IntegerType::get(&ctx, 32, IntegerType::Unsigned);
  case TP::UINT64: return IntegerType::get(&ctx, 64, IntegerType::Unsigned);
  default:
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "element type " + std::string(onnxTypeName(dataType)) +
                                       " is not supported by Kiln (supported: float, double, "
                                       "float16, bfloat16, float8e4m3fn, bool, int8-64, uint8-64)");
  }
}

llvm::Expected<RawTensor> decodeTensor(MLIRContext &ctx, const onnx::TensorProto &t,
                                       llvm::StringRef modelDir) {
  using TP = onnx::TensorProto;
  auto element = convertElementType(ctx, t.data_type());
  if (!element)
    return tensorError(t, llvm::toString(element.takeError()));
  std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
  auto count = checkedElementCount(dims);
  if (!count)
    return tensorError(t, llvm::toString(count.takeError()));
  auto byteCount = expectedTensorBytes(t.name(), dims, t.data_type());
  if (!byteCount)
    return byteCount.takeError();
  RawTensor raw;
  raw.type = RankedTensorType::get(dims, *element);
  raw.onnxType = t.data_type();
  size_t elemSize = onnxElementByteSize(t.data_type());

  if (t.has_data_location() && t.data_location() == TP::EXTERNAL) {
    auto bytes = readExternalData(modelDir, t);
    if (!bytes)
      return bytes.takeError();
    raw.bytes = std::move(*bytes);
    return raw;
  }
  if (t.has_raw_data()) {
    if (t.raw_data().size() != *byteCount)
      return tensorError(t, llvm::formatv("raw_data holds {0} bytes, but dims {1} of {2} need {3}",
                                          t.raw_data().size(), formatShape(dims),
                                          onnxTypeName(t.data_type()), *byteCount));
    raw.bytes.assign(t.raw_data().begin(), t.raw_data().end());
    return raw;
  }
  // Typed repeated fields: the field depends on the element type (onnx.proto's table).
  auto checkCount = [&](int64_t have, llvm::StringRef field) -> llvm::Error {
    if (have != *count)
      return tensorError(t, llvm::formatv("{0} holds {1} values, but dims {2} need {3}", field,
                                          have, formatShape(dims), *count));
    return llvm::Error::success();
  };
  raw.bytes.reserve(*byteCount);
  switch (t.data_type()) {
  case TP::FLOAT:
    if (auto err = checkCount(t.float_data_size(), "float_data"))
      return std::move(err);
    for (float v : t.float_data())
      appendLE(raw.bytes, v);
    break;
  case TP::DOUBLE:
    if (auto err = checkCount(t.double_data_size(), "double_data"))
      return std::move(err);
    for (double v : t.double_data())
      appendLE(raw.bytes, v);
    break;
  case TP::INT64:
    if (auto err = checkCount(t.int64_data_size(), "int64_data"))
      return std::move(err);
    for (int64_t v : t.int64_data())
      appendLE(raw.bytes, v);
    break;
  case TP::UINT32:
  case TP::UINT64:
    if (auto err = checkCount(t.uint64_data_size(), "uint64_data"))
      return std::move(err);
    for (uint64_t v : t.uint64_data()) {
      if (elemSize == 4)
        appendLE(raw.bytes, static_cast<uint32_t>(v));
      else
        appendLE(raw.bytes, v);
    }
    break;
  default:
    // int32_data carries INT32 and, one element each, every narrower type (bit patterns for
    // float16, bfloat16 and float8).
    if (auto err = checkCount(t.int32_data_size(), "int32_data"))
      return std::move(err);
    for (int32_t v : t.int32_data()) {
      if (elemSize == 4)
        appendLE(raw.bytes, v);
      else if (elemSize == 2)
        appendLE(raw.bytes, static_cast<uint16_t>(v));
      else
        appendLE(raw.bytes, static_cast<uint8_t>(t.data_type() == TP::BOOL ? (v != 0) : v));
    }
    break;
  }
  return raw;
}

HostTensor toHostTensor(const RawTensor &raw) {
  using TP = onnx::TensorProto;
  HostTensor host;
  host.onnxType = raw.onnxType;
  host.shape.assign(raw.type.getShape().begin(), raw.type.getShape().end());
  size_t elemSize = onnxElementByteSize(raw.onnxType);
  size_t count = elemSize ? raw.bytes.size() / elemSize : 0;
  host.values.reserve(count);
  const char *p = raw.bytes.data();
  auto load = [&](auto tag, size_t i) {
    decltype(tag) v;
    std::memcpy(&v, p + i * sizeof(v), sizeof(v));
    return v;
  };
  for (size_t i = 0; i < count; ++i) {
    long double v = 0;
    switch (raw.onnxType) {
    case TP::FLOAT: v = load(float(), i); break;
    case TP::DOUBLE: v = load(double(), i); break;
    case TP::INT8: v = load(int8_t(), i); break;
    case TP::INT16: v = load(int16_t(), i); break;
    case TP::INT32: v = load(int32_t(), i); break;
    case TP::INT64: v = load(int64_t(), i); break;
    case TP::UINT8: v = load(uint8_t(), i); break;
    case TP::BOOL: v = load(uint8_t(), i) != 0; break;
    case TP::UINT16: v = load(uint16_t(), i); break;
    case TP::UINT32: v = load(uint32_t(), i); break;
    case TP::UINT64: v = load(uint64_t(), i); break;
    default: {
      const llvm::fltSemantics *sem = floatSemantics(raw.onnxType);
      uint64_t bits = 0;
      std::memcpy(&bits, p + i * elemSize, elemSize);
      llvm::APFloat f(*sem, llvm::APInt(elemSize * 8, bits));
      bool losesInfo = false;
      f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven, &losesInfo);
      v = f.convertToDouble();
    }
    }
    host.values.push_back(v);
  }
  return host;
}

ElementsAttr toElementsAttr(const RawTensor &raw, llvm::StringRef name, int64_t inlineLimit) {
  if (raw.type.getElementType().isInteger(1)) {
    llvm::SmallVector<bool> values;
    for (char c : raw.bytes)
      values.push_back(c != 0);
    return DenseElementsAttr::get(raw.type, llvm::ArrayRef<bool>(values));
  }
  if (raw.type.getNumElements() <= inlineLimit)
    return DenseElementsAttr::getFromRawBuffer(raw.type, raw.bytes);
  AsmResourceBlob blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(
      llvm::ArrayRef<char>(raw.bytes.data(), raw.bytes.size()), alignof(uint64_t));
  // Resource names must be identifiers; the manager uniquifies duplicates.
  std::string key;
  for (char c : name)
    key += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.') ? c : '_';
  if (key.empty() || std::isdigit(static_cast<unsigned char>(key[0])))
    key = "w_" + key;
  return DenseResourceElementsAttr::get(raw.type, key, std::move(blob));
}

DenseElementsAttr toDenseAttr(const HostTensor &host, RankedTensorType type) {
  // Host values become attributes the way interpreter values do (one rounding rule for all).
  interp::Tensor t = interp::Tensor::zeros(type);
  bool isUnsigned = type.getElementType().isUnsignedInteger();
  for (size_t k = 0; k < host.values.size(); ++k) {
    long double v = host.values[k];
    if (t.isFloat())
      t.f[k] = (double)v;
    else // unsigned values above INT64_MAX keep their bits
      t.i[k] = isUnsigned && v > (long double)INT64_MAX ? (int64_t)(uint64_t)v : (int64_t)v;
  }
  return interp::toAttr(t);
}

} // namespace kiln::frontend
