//===- CastFolding.cpp - kiln.cast folds: identity, cast chains, constants -===//
//
// The mixed-precision pass inserts a cast wherever a value meets an op of another precision and
// leaves the cleanup to this folder (run by canonicalize), so the pass stays simple:
//  * a cast to the operand's own type is the operand;
//  * cast(cast(x : A -> B) : B -> C) is cast(x : A -> C) when B holds every value of A exactly and
//    B -> C converts those values as A -> C would, and is x itself when C is A (a back-and-forth
//    that loses nothing disappears; f32 -> bf16 -> f32 rounds, so it stays);
//  * a cast of a constant is a constant, whatever its size: weights are cast at compile time,
//    never by a kernel at run time. f32 <-> f16/bf16 payloads convert word by word with the
//    runtime's conversions (runtime/TensorData.h: round half to even, as the interpreter);
//    every other pair goes through the interpreter.
//
//===----------------------------------------------------------------------===//

#include "ir/Interpreter/Interpreter.h"
#include "ir/Interpreter/Tensor.h"
#include "ir/KilnOps.h"
#include "runtime/TensorData.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstring>

using namespace mlir;

namespace kiln {
namespace {

/// Bits of the significand (with the implicit one) of a float type; 0 for other types.
unsigned significandBits(Type type) {
  if (auto f = llvm::dyn_cast<FloatType>(type))
    return f.getFPMantissaWidth();
  return 0;
}

/// Whether every value of element type `from` is exactly a value of element type `to`.
bool holdsEveryValueOf(Type to, Type from) {
  if (to == from || from.isInteger(1))
    return true;
  if (to.isInteger(1))
    return false;
  auto fromFloat = llvm::dyn_cast<FloatType>(from), toFloat = llvm::dyn_cast<FloatType>(to);
  if (fromFloat && toFloat) {
    // f8E4M3FN < {f16, bf16} < f32 < f64; f16 and bf16 hold each other's values only partly.
    if (toFloat.isF64())
      return true;
    if (toFloat.isF32())
      return !fromFloat.isF64();
    if (toFloat.isF16() || toFloat.isBF16())
      return llvm::isa<Float8E4M3FNType>(fromFloat);
    return false;
  }
  if (fromFloat)
    return false; // fractions
  auto fromInt = llvm::cast<IntegerType>(from);
  unsigned magnitudeBits = fromInt.getWidth() - (fromInt.isUnsignedInteger() ? 0 : 1);
  if (toFloat) // integers up to 2^significand are exact (the exponent range is never the limit)
    return magnitudeBits <= significandBits(toFloat);
  auto toInt = llvm::cast<IntegerType>(to);
  if (fromInt.isUnsignedInteger() == toInt.isUnsignedInteger())
    return fromInt.getWidth() <= toInt.getWidth();
  // Unsigned into signed needs a wider type; signed into unsigned loses the negatives.
  return fromInt.isUnsignedInteger() && magnitudeBits < toInt.getWidth();
}

/// Whether cast(cast(x : a -> b) : b -> c) equals cast(x : a -> c) for every x.
bool chainIsOneCast(Type a, Type b, Type c) {
  if (!holdsEveryValueOf(b, a))
    return false;
  // b holds x exactly, so b -> c sees x's value. Conversions to a float round the value and to
  // bool compare it with zero, whatever its type; to an integer, a float source truncates and
  // saturates while an integer source wraps: the same only when c holds every value of a.
  if (llvm::isa<FloatType>(c) || c.isInteger(1))
    return true;
  return llvm::isa<FloatType>(a) == llvm::isa<FloatType>(b) || holdsEveryValueOf(c, a);
}

/// The raw little-endian bytes of a constant payload, when it has them (dense non-splat or a
/// loaded resource blob).
std::optional<llvm::ArrayRef<char>> rawBytes(ElementsAttr value) {
  if (auto dense = llvm::dyn_cast<DenseElementsAttr>(value)) {
    if (dense.isSplat() || dense.getElementType().isInteger(1))
      return std::nullopt;
    return dense.getRawData();
  }
  if (auto resource = llvm::dyn_cast<DenseResourceElementsAttr>(value))
    if (AsmResourceBlob *blob = resource.getRawHandle().getBlob())
      return blob->getData();
  return std::nullopt;
}

/// The name a folded payload's blob gets: its source blob's name and the new type.
std::string blobName(ElementsAttr value, Type element) {
  std::string type;
  llvm::raw_string_ostream os(type);
  os << element;
  if (auto resource = llvm::dyn_cast<DenseResourceElementsAttr>(value))
    return (resource.getRawHandle().getKey() + "_" + type).str();
  return "folded_" + type;
}

/// Number of elements under which a folded constant stays dense (what the importer inlines).
constexpr int64_t kInlineElements = 16;

/// f32 <-> f16/bf16 constants converted word by word: the hot case (every weight of a half
/// precision plan), too large for the interpreter's per-element APFloat path.
std::optional<ElementsAttr> castFloatBits(ElementsAttr value, RankedTensorType to) {
  Type from = value.getElementType(), element = to.getElementType();
  bool narrow = from.isF32() && (element.isBF16() || element.isF16());
  bool wide = element.isF32() && (from.isBF16() || from.isF16());
  if (!narrow && !wide)
    return std::nullopt;
  auto bytes = rawBytes(value);
  if (!bytes)
    return std::nullopt;
  int64_t count = to.getNumElements();
  std::vector<char> out(static_cast<size_t>(count) * (narrow ? 2 : 4));
  for (int64_t k = 0; k < count; ++k) {
    if (narrow) {
      float f;
      std::memcpy(&f, bytes->data() + 4 * k, 4);
      uint16_t half = element.isBF16() ? runtime::floatToBFloat16(f) : runtime::floatToHalf(f);
      std::memcpy(out.data() + 2 * k, &half, 2);
    } else {
      uint16_t half;
      std::memcpy(&half, bytes->data() + 2 * k, 2);
      float f = from.isBF16() ? runtime::bfloat16ToFloat(half) : runtime::halfToFloat(half);
      std::memcpy(out.data() + 4 * k, &f, 4);
    }
  }
  return interp::bytesToElementsAttr(to, out, kInlineElements, blobName(value, element));
}

} // namespace

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  RankedTensorType to = getOutput().getType();
  Value input = getInput();
  if (input.getType() == to)
    return input;
  if (auto inner = input.getDefiningOp<CastOp>()) {
    Type a = inner.getInput().getType().getElementType(), b = inner.getOutput().getType().getElementType();
    if (chainIsOneCast(a, b, to.getElementType())) {
      if (inner.getInput().getType() == to)
        return inner.getInput();
      getInputMutable().assign(inner.getInput());
      return getResult();
    }
  }
  auto value = llvm::dyn_cast_if_present<ElementsAttr>(adaptor.getInput());
  if (!value)
    return {};
  if (auto bits = castFloatBits(value, to))
    return *bits;
  // A splat stays a splat: cast its one value.
  auto dense = llvm::dyn_cast<DenseElementsAttr>(value);
  if (dense && dense.isSplat())
    value = dense.resizeSplat(RankedTensorType::get({}, dense.getElementType()));
  auto tensor = interp::fromAttr(value);
  if (!tensor) {
    llvm::consumeError(tensor.takeError()); // e.g. an elided blob: nothing to fold
    return {};
  }
  interp::Tensor cast = interp::castTensor(*tensor, to.getElementType(), getSaturate());
  if (dense && dense.isSplat())
    return DenseElementsAttr::get(to, interp::toAttr(cast).getSplatValue<Attribute>());
  return interp::toElementsAttr(cast, kInlineElements, blobName(value, to.getElementType()));
}

} // namespace kiln
