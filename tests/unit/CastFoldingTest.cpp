//===- CastFoldingTest.cpp - kiln.cast folds of constants ------------------===//
//
// The folder converts f32 weights to bf16/f16 (and back) word by word with the runtime's
// conversions (runtime/TensorData.h), not through the interpreter. This pins that fast path to
// the interpreter's rounding (APFloat, round half to even) on every special class of value and
// on millions of random bit patterns.
//
//===----------------------------------------------------------------------===//

#include "ir/Interpreter/Interpreter.h"
#include "ir/KilnDialect.h"
#include "ir/KilnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <random>

namespace {

using namespace mlir;

class CastFoldingTest : public ::testing::Test {
protected:
  CastFoldingTest() { context.loadDialect<kiln::KilnDialect, func::FuncDialect>(); }

  /// Folds cast(constant payload : from -> to) and returns the folded payload's bytes.
  std::vector<char> fold(RankedTensorType from, Type to, llvm::ArrayRef<char> bytes) {
    OpBuilder builder(&context);
    auto module = ModuleOp::create(builder.getUnknownLoc());
    builder.setInsertionPointToEnd(module.getBody());
    auto attr = DenseResourceElementsAttr::get(
        from, "w", HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, alignof(uint64_t)));
    auto constant = kiln::ConstantOp::create(builder, builder.getUnknownLoc(), from, attr);
    auto cast = kiln::CastOp::create(builder, builder.getUnknownLoc(), from.clone(to), constant.getResult());
    SmallVector<OpFoldResult> results;
    EXPECT_TRUE(succeeded(cast->fold(results)));
    EXPECT_EQ(results.size(), 1u);
    auto folded = llvm::dyn_cast_if_present<Attribute>(results.front());
    std::vector<char> out;
    if (auto resource = llvm::dyn_cast_if_present<DenseResourceElementsAttr>(folded)) {
      llvm::ArrayRef<char> data = resource.getRawHandle().getBlob()->getData();
      out.assign(data.begin(), data.end());
    } else {
      ADD_FAILURE() << "the cast of a large constant did not fold to a resource blob";
    }
    module->erase();
    return out;
  }

  /// The interpreter's rounding of `bits` (f32) to `to`, as `to`'s raw bits.
  uint16_t interpreterRound(uint32_t bits, FloatType to) {
    double rounded = kiln::interp::roundToFloat(std::bit_cast<float>(bits), to);
    llvm::APFloat value(rounded);
    bool losesInfo = false;
    value.convert(to.getFloatSemantics(), llvm::APFloat::rmNearestTiesToEven, &losesInfo);
    return static_cast<uint16_t>(value.bitcastToAPInt().getZExtValue());
  }

  void checkNarrowing(FloatType to, const std::vector<uint32_t> &patterns) {
    auto from = RankedTensorType::get({static_cast<int64_t>(patterns.size())}, Float32Type::get(&context));
    std::vector<char> bytes(patterns.size() * 4);
    std::memcpy(bytes.data(), patterns.data(), bytes.size());
    std::vector<char> folded = fold(from, to, bytes);
    ASSERT_EQ(folded.size(), patterns.size() * 2);
    for (size_t k = 0; k < patterns.size(); ++k) {
      uint16_t got;
      std::memcpy(&got, folded.data() + 2 * k, 2);
      uint16_t want = interpreterRound(patterns[k], to);
      bool bothNaN = std::isnan(std::bit_cast<float>(patterns[k])) &&
                     ((got & 0x7fff) > (to.isBF16() ? 0x7f80 : 0x7c00));
      if (!bothNaN)
        ASSERT_EQ(got, want) << "f32 bits 0x" << std::hex << patterns[k];
    }
  }

  static std::vector<uint32_t> patterns() {
    std::vector<uint32_t> p = {0x00000000, 0x80000000, 0x3f800000, 0xbf800000, 0x7f800000, 0xff800000,
                               0x7fc00000, 0x7f800001, 0xffc00001, 0x00000001, 0x007fffff, 0x00800000,
                               0x477fe000, 0x477fefff, 0x477ff000, 0x477ff001, 0x7f7fffff, 0x33000000,
                               0x33000001, 0x337fffff, 0x33800000, 0x38800000, 0x387fffff, 0x3f808000,
                               0x3f818000, 0x3f800fff, 0x3f801000, 0x3f801001, 0x3f803000};
    // Every exponent with mantissas at and around the ties of both half formats.
    for (uint32_t exponent = 0; exponent < 256; ++exponent)
      for (uint32_t mantissa : {0x0u, 0x1u, 0xfffu, 0x1000u, 0x1001u, 0x3000u, 0x7fffu, 0x8000u, 0x8001u, 0x18000u,
                                0x7fffffu})
        for (uint32_t sign : {0u, 0x80000000u})
          p.push_back(sign | (exponent << 23) | mantissa);
    std::mt19937 rng(7);
    for (int k = 0; k < 2'000'000; ++k)
      p.push_back(rng());
    return p;
  }

  MLIRContext context;
};

TEST_F(CastFoldingTest, F32ToBF16MatchesTheInterpreter) {
  checkNarrowing(BFloat16Type::get(&context), patterns());
}

TEST_F(CastFoldingTest, F32ToF16MatchesTheInterpreter) {
  checkNarrowing(Float16Type::get(&context), patterns());
}

TEST_F(CastFoldingTest, HalfToF32IsExact) {
  for (FloatType half : {FloatType(BFloat16Type::get(&context)), FloatType(Float16Type::get(&context))}) {
    std::vector<uint16_t> all(65536);
    for (uint32_t k = 0; k < 65536; ++k)
      all[k] = static_cast<uint16_t>(k);
    std::vector<char> bytes(all.size() * 2);
    std::memcpy(bytes.data(), all.data(), bytes.size());
    auto from = RankedTensorType::get({65536}, half);
    std::vector<char> folded = fold(from, Float32Type::get(&context), bytes);
    ASSERT_EQ(folded.size(), all.size() * 4);
    for (uint32_t k = 0; k < 65536; ++k) {
      float got;
      std::memcpy(&got, folded.data() + 4 * k, 4);
      llvm::APFloat want(half.getFloatSemantics(), llvm::APInt(16, k));
      bool losesInfo = false;
      want.convert(llvm::APFloat::IEEEsingle(), llvm::APFloat::rmNearestTiesToEven, &losesInfo);
      if (want.isNaN())
        ASSERT_TRUE(std::isnan(got)) << "half bits " << k;
      else
        ASSERT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(want.convertToFloat())) << "half bits " << k;
    }
  }
}

} // namespace
