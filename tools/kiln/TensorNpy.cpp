//===- TensorNpy.cpp - interpreter tensors to and from .npy ---------------===//

#include "TensorNpy.h"

#include "ir/ShapeRules.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/APInt.h"

#include <cstring>

namespace kiln::cli {

using interp::Tensor;

std::string npyDtype(mlir::Type t) {
  if (t.isF32()) return "<f4";
  if (t.isF64()) return "<f8";
  if (t.isF16()) return "<f2";
  if (t.isInteger(1)) return "|b1";
  if (auto i = llvm::dyn_cast<mlir::IntegerType>(t)) {
    std::string kind = i.isUnsigned() ? "u" : "i";
    int bytes = i.getWidth() / 8;
    return (bytes == 1 ? "|" : "<") + kind + std::to_string(bytes);
  }
  return "";
}

llvm::Expected<Tensor> tensorFromNpy(const runtime::NpyArray &array, mlir::RankedTensorType type,
                                     llvm::StringRef name) {
  auto fail = [&](const std::string &why) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "input '" + name + "': " + why);
  };
  std::string want = npyDtype(type.getElementType());
  // bf16 and f8 have no numpy dtype: they are given as f32 and rounded to the element type.
  bool widened = want.empty();
  if (widened)
    want = "<f4";
  if (array.dtype != want && !(want[0] == '|' && array.dtype.substr(1) == want.substr(1)))
    return fail("dtype " + array.dtype + " differs from the model's " + want +
                (widened ? " (bf16 and f8 inputs are given as float32)" : ""));
  if (llvm::ArrayRef<int64_t>(array.shape) != type.getShape())
    return fail("shape " + formatShape(array.shape) + " differs from the model's " +
                formatShape(type.getShape()));
  Tensor t = Tensor::zeros(type);
  const char *p = array.data.data();
  for (int64_t k = 0; k < t.size(); ++k) {
    if (want == "<f4") { float v; std::memcpy(&v, p + 4 * k, 4); interp::storeDouble(t, k, v); }
    else if (want == "<f8") { double v; std::memcpy(&v, p + 8 * k, 8); t.f[k] = v; }
    else if (want == "<f2") {
      uint16_t bits; std::memcpy(&bits, p + 2 * k, 2);
      llvm::APFloat f(llvm::APFloat::IEEEhalf(), llvm::APInt(16, bits));
      bool lost; f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven, &lost);
      t.f[k] = f.convertToDouble();
    } else {
      size_t bytes = runtime::NpyArray::elementSize(want);
      uint64_t raw = 0;
      std::memcpy(&raw, p + bytes * k, bytes);
      llvm::APInt v(bytes * 8, raw);
      t.i[k] = want[1] == 'i' ? v.getSExtValue() : (int64_t)v.getZExtValue();
    }
  }
  return t;
}

llvm::Expected<runtime::NpyArray> tensorToNpy(const Tensor &t) {
  runtime::NpyArray array;
  array.dtype = npyDtype(t.element);
  if (array.dtype.empty()) {
    // bf16 and f8 have no numpy dtype: write them widened to f32 (exact).
    array.dtype = "<f4";
  }
  array.shape.assign(t.shape.begin(), t.shape.end());
  size_t bytes = runtime::NpyArray::elementSize(array.dtype);
  array.data.resize(bytes * t.size());
  char *p = array.data.data();
  for (int64_t k = 0; k < t.size(); ++k) {
    if (array.dtype == "<f4") { float v = (float)t.f[k]; std::memcpy(p + 4 * k, &v, 4); }
    else if (array.dtype == "<f8") { std::memcpy(p + 8 * k, &t.f[k], 8); }
    else if (array.dtype == "<f2") {
      llvm::APFloat f(t.f[k]);
      bool lost; f.convert(llvm::APFloat::IEEEhalf(), llvm::APFloat::rmNearestTiesToEven, &lost);
      uint16_t bits = (uint16_t)f.bitcastToAPInt().getZExtValue();
      std::memcpy(p + 2 * k, &bits, 2);
    } else {
      std::memcpy(p + bytes * k, &t.i[k], bytes);
    }
  }
  return array;
}

} // namespace kiln::cli
