//===- Tensor.cpp - host tensors of the reference interpreter --------------===//

#include "ir/Interpreter/Tensor.h"
#include "runtime/TensorData.h"

#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/APFloat.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir;

namespace kiln::interp {

Tensor Tensor::zeros(RankedTensorType type) {
  Tensor t;
  t.element = type.getElementType();
  t.shape.assign(type.getShape().begin(), type.getShape().end());
  if (t.isFloat())
    t.f.assign(type.getNumElements(), 0.0);
  else
    t.i.assign(type.getNumElements(), 0);
  return t;
}

FloatRounder::FloatRounder(FloatType type, bool saturate) : type_(type), saturate_(saturate) {
  kind_ = type.isF64() ? Kind::F64 : type.isF32() ? Kind::F32 : type.isF16() ? Kind::F16 : type.isBF16() ? Kind::BF16
                                                                                                    : Kind::Other;
}

double FloatRounder::roundOther(double v) const {
  const llvm::fltSemantics &sem = type_.getFloatSemantics();
  if (llvm::isa<Float8E4M3FNType>(type_)) {
    // f8E4M3FN has no infinity: out-of-range values are NaN, or +-448 when saturating.
    double largest = 448.0;
    if (saturate_ && !std::isnan(v)) {
      if (v > largest)
        return largest;
      if (v < -largest)
        return -largest;
    }
  }
  llvm::APFloat value(v);
  bool losesInfo = false;
  value.convert(sem, llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  value.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return value.convertToDouble();
}

double roundToFloat(double v, FloatType type, bool saturate) { return FloatRounder(type, saturate)(v); }

int64_t wrapToInteger(int64_t v, IntegerType type) {
  unsigned width = type.getWidth();
  if (width == 1)
    return v != 0;
  if (width >= 64)
    return v;
  uint64_t mask = (uint64_t(1) << width) - 1;
  uint64_t bits = uint64_t(v) & mask;
  if (type.isUnsigned())
    return (int64_t)bits;
  uint64_t sign = uint64_t(1) << (width - 1);
  return (int64_t)((bits ^ sign) - sign);
}

void storeDouble(Tensor &t, int64_t k, double v) {
  if (auto floatType = llvm::dyn_cast<FloatType>(t.element)) {
    t.f[k] = roundToFloat(v, floatType);
    return;
  }
  auto intType = llvm::cast<IntegerType>(t.element);
  if (intType.getWidth() == 1) {
    t.i[k] = v != 0;
    return;
  }
  if (std::isnan(v)) {
    t.i[k] = 0;
    return;
  }
  unsigned width = intType.getWidth();
  double lo = intType.isUnsigned() ? 0.0 : -std::ldexp(1.0, width - 1);
  double hi = intType.isUnsigned() ? std::ldexp(1.0, width) - 1 : std::ldexp(1.0, width - 1) - 1;
  double truncated = std::trunc(v);
  if (truncated <= lo)
    t.i[k] = (int64_t)lo;
  else if (truncated >= hi)
    t.i[k] = width == 64 ? (intType.isUnsigned() ? -1 : std::numeric_limits<int64_t>::max()) : (int64_t)hi;
  else if (intType.isUnsigned() && truncated >= 0x1p63)
    t.i[k] = (int64_t)(uint64_t)truncated; // ui64 values above int64's range keep their bits
  else
    t.i[k] = (int64_t)truncated;
}

Shape stridesOf(llvm::ArrayRef<int64_t> shape) {
  Shape strides(shape.size(), 1);
  for (int i = (int)shape.size() - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

namespace {

/// Decodes little-endian element k of width `bytes` from raw storage.
uint64_t loadBits(const char *data, int64_t k, unsigned bytes) {
  uint64_t bits = 0;
  std::memcpy(&bits, data + k * bytes, bytes);
  return bits;
}

/// Decodes every element of a float constant stored as little-endian f64, f32, f16 or bf16
/// (a splat: one element for all) into `out`, without APFloat; false for other float types.
bool decodeCommonFloats(FloatType type, llvm::ArrayRef<char> data, bool splat, size_t size, std::vector<double> &out) {
  // Filled from empty, not zero-filled and overwritten: every weight of the model is decoded
  // on every evaluation, and zero-filling cost as much as decoding.
  auto each = [&](unsigned bytes, auto decode) {
    out.clear();
    out.reserve(size);
    for (size_t k = 0; k < size; ++k)
      out.push_back(decode(loadBits(data.data(), splat ? 0 : k, bytes)));
  };
  auto asFloat = [](uint32_t bits) {
    float v;
    std::memcpy(&v, &bits, 4);
    return (double)v;
  };
  if (type.isF64())
    each(8, [](uint64_t raw) {
      double v;
      std::memcpy(&v, &raw, 8);
      return v;
    });
  else if (type.isF32())
    each(4, [&](uint64_t raw) { return asFloat((uint32_t)raw); });
  else if (type.isBF16())
    each(2, [](uint64_t raw) { return (double)runtime::bfloat16ToFloat((uint16_t)raw); });
  else if (type.isF16())
    each(2, [](uint64_t raw) { return (double)runtime::halfToFloat((uint16_t)raw); });
  else
    return false;
  return true;
}

} // namespace

llvm::Expected<Tensor> fromAttr(ElementsAttr attr) {
  auto type = llvm::cast<RankedTensorType>(attr.getType());
  Tensor t;
  t.element = type.getElementType();
  t.shape.assign(type.getShape().begin(), type.getShape().end());
  auto floatType = llvm::dyn_cast<FloatType>(t.element);
  size_t size = type.getNumElements();
  unsigned bits = type.getElementTypeBitWidth();
  unsigned bytes = bits == 1 ? 1 : bits / 8;
  auto dense = llvm::dyn_cast<DenseElementsAttr>(attr);
  auto resource = llvm::dyn_cast<DenseResourceElementsAttr>(attr);
  AsmResourceBlob *blob = resource ? resource.getRawHandle().getBlob() : nullptr;
  if (blob && blob->getData().size() != size * bytes)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "resource blob size does not match its tensor type");
  if (floatType && dense && decodeCommonFloats(floatType, dense.getRawData(), dense.isSplat(), size, t.f))
    return t;
  if (floatType && blob && decodeCommonFloats(floatType, blob->getData(), /*splat=*/false, size, t.f))
    return t;
  t = Tensor::zeros(type);
  if (dense) {
    if (t.isFloat()) {
      int64_t k = 0;
      for (llvm::APFloat v : dense.getValues<llvm::APFloat>()) {
        bool losesInfo = false;
        v.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven, &losesInfo);
        t.f[k++] = v.convertToDouble();
      }
    } else if (t.element.isInteger(1)) {
      int64_t k = 0;
      for (bool v : dense.getValues<bool>())
        t.i[k++] = v;
    } else {
      bool isUnsigned = t.element.isUnsignedInteger();
      int64_t k = 0;
      for (const llvm::APInt &v : dense.getValues<llvm::APInt>())
        t.i[k++] = isUnsigned ? (int64_t)v.getZExtValue() : v.getSExtValue();
    }
    return t;
  }
  if (!blob)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "constant payload is not available (elided resource blob?)");
  llvm::ArrayRef<char> data = blob->getData();
  for (int64_t k = 0; k < t.size(); ++k) {
    uint64_t raw = loadBits(data.data(), k, bytes);
    if (auto floatType = llvm::dyn_cast<FloatType>(t.element)) {
      llvm::APFloat v(floatType.getFloatSemantics(), llvm::APInt(bits, raw));
      bool losesInfo = false;
      v.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven, &losesInfo);
      t.f[k] = v.convertToDouble();
    } else {
      llvm::APInt v(bits == 1 ? 8 : bits, raw);
      t.i[k] = t.element.isUnsignedInteger() || bits == 1 ? (int64_t)v.getZExtValue() : v.getSExtValue();
    }
  }
  return t;
}

DenseElementsAttr toAttr(const Tensor &t) {
  RankedTensorType type = t.type();
  if (t.element.isInteger(1)) {
    llvm::SmallVector<bool> values(t.i.begin(), t.i.end());
    return DenseElementsAttr::get(type, llvm::ArrayRef<bool>(values));
  }
  if (auto floatType = llvm::dyn_cast<FloatType>(t.element)) {
    llvm::SmallVector<llvm::APFloat> values;
    values.reserve(t.f.size());
    for (double v : t.f) {
      llvm::APFloat f(v);
      bool losesInfo = false;
      f.convert(floatType.getFloatSemantics(), llvm::APFloat::rmNearestTiesToEven, &losesInfo);
      values.push_back(f);
    }
    return DenseElementsAttr::get(type, values);
  }
  unsigned width = t.element.getIntOrFloatBitWidth();
  llvm::SmallVector<llvm::APInt> values;
  values.reserve(t.i.size());
  for (int64_t v : t.i)
    values.push_back(llvm::APInt(width, (uint64_t)v, /*isSigned=*/!t.element.isUnsignedInteger(),
                                 /*implicitTrunc=*/true));
  return DenseElementsAttr::get(type, values);
}

ElementsAttr bytesToElementsAttr(RankedTensorType type, llvm::ArrayRef<char> bytes, int64_t inlineElements,
                                llvm::StringRef blobName) {
  if (type.getNumElements() <= inlineElements)
    return DenseElementsAttr::getFromRawBuffer(type, bytes);
  return DenseResourceElementsAttr::get(
      type, blobName, HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, alignof(uint64_t)));
}

ElementsAttr toElementsAttr(const Tensor &t, int64_t inlineElements, llvm::StringRef blobName) {
  DenseElementsAttr dense = toAttr(t);
  // i1 constants stay dense (bit-packed storage has no blob form).
  if (t.size() <= inlineElements || t.element.isInteger(1))
    return dense;
  llvm::ArrayRef<char> raw = dense.getRawData();
  if (!dense.isSplat())
    return bytesToElementsAttr(t.type(), raw, inlineElements, blobName);
  // A splat stores one element; a blob needs all of them.
  std::vector<char> bytes;
  bytes.reserve(raw.size() * t.size());
  for (int64_t k = 0; k < t.size(); ++k)
    bytes.insert(bytes.end(), raw.begin(), raw.end());
  return bytesToElementsAttr(t.type(), bytes, inlineElements, blobName);
}

} // namespace kiln::interp
