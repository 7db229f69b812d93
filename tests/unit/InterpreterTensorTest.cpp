// The interpreter's tensors: rounding to f16/bf16 and decoding constants, against APFloat (the
// general conversion the fast paths replace) on values that probe every rounding case.
#include "ir/Interpreter/Tensor.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/APFloat.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

using namespace mlir;
using kiln::interp::roundToFloat;

namespace {

double viaAPFloat(double v, FloatType type) {
  llvm::APFloat value(v);
  bool losesInfo = false;
  value.convert(type.getFloatSemantics(), llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  value.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return value.convertToDouble();
}

/// Same value, and the same sign for zeros and infinities (NaN matches NaN).
void expectSame(double expected, double actual, double input) {
  if (std::isnan(expected)) {
    EXPECT_TRUE(std::isnan(actual)) << "input " << input;
    return;
  }
  uint64_t a, b;
  std::memcpy(&a, &expected, 8);
  std::memcpy(&b, &actual, 8);
  EXPECT_EQ(a, b) << "input " << std::hexfloat << input << ": expected " << expected << ", got " << actual;
}

class InterpreterTensor : public ::testing::Test {
protected:
  MLIRContext context;
};

TEST_F(InterpreterTensor, HalfRoundingMatchesAPFloat) {
  for (FloatType type : {FloatType(Float16Type::get(&context)), FloatType(BFloat16Type::get(&context))}) {
    int precision = type.isF16() ? 11 : 8;
    std::mt19937_64 rng(7);
    // Random doubles over the format's whole range and past it, both signs, subnormals included.
    std::uniform_real_distribution<double> mantissa(1.0, 2.0);
    std::uniform_int_distribution<int> exponent(type.isF16() ? -30 : -140, type.isF16() ? 17 : 129);
    for (int n = 0; n < 200000; ++n) {
      double v = std::ldexp(mantissa(rng), exponent(rng)) * (n % 2 ? -1 : 1);
      expectSame(viaAPFloat(v, type), roundToFloat(v, type), v);
    }
    // Exact halfway points (ties to even), and one ulp of double either side of them.
    for (int e : {-24, -20, -14, -13, 0, 5, 15, -133, -126, 100, 127}) {
      for (int m = 0; m < 64; ++m) {
        double tie = std::ldexp(1.0 + (2 * m + 1) * std::ldexp(1.0, -precision), e);
        for (double v : {tie, std::nextafter(tie, 0.0), std::nextafter(tie, INFINITY), -tie})
          expectSame(viaAPFloat(v, type), roundToFloat(v, type), v);
      }
    }
    for (double v : std::initializer_list<double>{0.0, -0.0, INFINITY, -INFINITY, NAN, 65504.0, 65519.99, 65520.0, 0x1.fep127, 0x1.ffp127,
                     std::ldexp(1.0, -1074), -std::ldexp(1.0, -1074), std::ldexp(1.0, -25), std::ldexp(1.0, -134)})
      expectSame(viaAPFloat(v, type), roundToFloat(v, type), v);
  }
}

TEST_F(InterpreterTensor, ConstantsDecodeFromDenseAndBlob) {
  // f32, f16 and bf16 constants, dense and as resource blobs, decode to the values they hold.
  std::vector<float> values = {1.5f, -0.0f, 3.0e-5f, -65504.0f, 0.333333f, 1.0e-8f};
  for (FloatType type : {FloatType(Float32Type::get(&context)), FloatType(Float16Type::get(&context)),
                         FloatType(BFloat16Type::get(&context))}) {
    auto tensorType = RankedTensorType::get({(int64_t)values.size()}, type);
    kiln::interp::Tensor expected = kiln::interp::Tensor::zeros(tensorType);
    for (size_t k = 0; k < values.size(); ++k)
      expected.f[k] = roundToFloat(values[k], type);
    DenseElementsAttr dense = kiln::interp::toAttr(expected);
    for (ElementsAttr attr : {ElementsAttr(dense), kiln::interp::bytesToElementsAttr(tensorType, dense.getRawData(),
                                                                                      /*inlineElements=*/0, "w")}) {
      auto decoded = kiln::interp::fromAttr(attr);
      ASSERT_TRUE(static_cast<bool>(decoded)) << llvm::toString(decoded.takeError());
      ASSERT_EQ(decoded->f.size(), values.size());
      for (size_t k = 0; k < values.size(); ++k)
        expectSame(expected.f[k], decoded->f[k], values[k]);
    }
    // A splat fills every element.
    auto splat = kiln::interp::fromAttr(DenseElementsAttr::get(tensorType, llvm::APFloat(type.getFloatSemantics(), "0.75")));
    ASSERT_TRUE(static_cast<bool>(splat));
    for (double v : splat->f)
      EXPECT_EQ(v, 0.75);
  }
}

} // namespace
