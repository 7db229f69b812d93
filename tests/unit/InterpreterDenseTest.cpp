//===- InterpreterDenseTest.cpp - conv, pool, norm, matmul, softmax --------===//
//
// Each test parses a tiny kiln module, runs it through the reference interpreter and compares
// with values worked out by hand (in the comments). f32 results are compared with the hand value
// rounded to f32; the f16/bf16 tests check that the result is the exact value correctly rounded.
//
//===----------------------------------------------------------------------===//

#include "ir/Interpreter/Interpreter.h"
#include "ir/KilnDialect.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cmath>

using namespace mlir;
using kiln::interp::Tensor;

namespace {

double f32(double v) { return (double)(float)v; }

class InterpreterDense : public ::testing::Test {
protected:
  InterpreterDense() { context.loadDialect<kiln::KilnDialect, func::FuncDialect>(); }

  /// A tensor of type `type` (e.g. "tensor<1x4xf32>") holding `values` in row-major order.
  Tensor input(llvm::StringRef type, std::vector<double> values) {
    auto parsed = llvm::dyn_cast_or_null<RankedTensorType>(parseType(type, &context));
    if (!parsed) {
      ADD_FAILURE() << "bad type " << type.str();
      return Tensor();
    }
    Tensor t = Tensor::zeros(parsed);
    EXPECT_EQ((int64_t)values.size(), t.size()) << type.str();
    for (size_t k = 0; k < values.size() && (int64_t)k < t.size(); ++k) {
      if (t.isFloat())
        t.f[k] = values[k];
      else
        t.i[k] = (int64_t)values[k];
    }
    return t;
  }

  /// Runs @main of `source` on `inputs`; returns its first result (an empty tensor on failure).
  Tensor run(llvm::StringRef source, std::vector<Tensor> inputs) {
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, &context);
    if (!module) {
      ADD_FAILURE() << "the module does not parse";
      return Tensor();
    }
    auto main = module->lookupSymbol<func::FuncOp>("main");
    auto results = kiln::interp::evaluateFunction(main, inputs);
    if (!results) {
      ADD_FAILURE() << llvm::toString(results.takeError());
      return Tensor();
    }
    return (*results)[0];
  }

  /// Runs @main of `source` on `inputs`; returns all its results (none on failure).
  std::vector<Tensor> runAll(llvm::StringRef source, std::vector<Tensor> inputs) {
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, &context);
    if (!module) {
      ADD_FAILURE() << "the module does not parse";
      return {};
    }
    auto results = kiln::interp::evaluateFunction(module->lookupSymbol<func::FuncOp>("main"), inputs);
    if (!results) {
      ADD_FAILURE() << llvm::toString(results.takeError());
      return {};
    }
    return std::vector<Tensor>(results->begin(), results->end());
  }

  /// A tensor of `type` holding irregular multiples of 1/16 below 8 in magnitude (exact in f32,
  /// f16 and bf16).
  Tensor pattern(llvm::StringRef type, int64_t seed) {
    auto parsed = llvm::cast<RankedTensorType>(parseType(type, &context));
    Tensor t = Tensor::zeros(parsed);
    for (int64_t k = 0; k < t.size(); ++k)
      t.f[k] = (double)((k * k * 31 + k * 7 + seed * 13) % 255 - 127) / 16.0;
    return t;
  }

  MLIRContext context;
};

/// Checks shape and values; `tolerance` 0 means exact equality.
void expectValues(const Tensor &t, kiln::Shape shape, std::vector<double> expected,
                  double tolerance = 0.0) {
  ASSERT_EQ(t.shape, shape);
  ASSERT_EQ(t.size(), (int64_t)expected.size());
  for (size_t k = 0; k < expected.size(); ++k) {
    if (tolerance == 0.0)
      EXPECT_EQ(t.getDouble(k), expected[k]) << "element " << k;
    else
      EXPECT_NEAR(t.getDouble(k), expected[k], tolerance) << "element " << k;
  }
}

//===----------------------------------------------------------------------===//
// conv
//===----------------------------------------------------------------------===//

TEST_F(InterpreterDense, Conv1dPadded) {
  // [1,2,3,4] * [1,0,-1] with one zero on each side: y[o] = x[o-1] - x[o+1].
  Tensor y = run(R"(
    func.func @main(%x: tensor<1x1x4xf32>, %w: tensor<1x1x3xf32>) -> tensor<1x1x4xf32> {
      %y = kiln.conv %x, %w {strides = array<i64: 1>, dilations = array<i64: 1>, pads = array<i64: 1, 1>}
          : (tensor<1x1x4xf32>, tensor<1x1x3xf32>) -> tensor<1x1x4xf32>
      return %y : tensor<1x1x4xf32>
    })",
                 {input("tensor<1x1x4xf32>", {1, 2, 3, 4}), input("tensor<1x1x3xf32>", {1, 0, -1})});
  expectValues(y, {1, 1, 4}, {-2, -2, -2, 3});
}

TEST_F(InterpreterDense, Conv2dChannelsAndBias) {
  // Input channel 0 is 1..9, channel 1 all ones; 2x2 windows, no padding.
  // Filter 0: ones on both channels -> window sum of channel 0 plus 4: 16 20 / 28 32, bias 1.
  // Filter 1: [[1,0],[0,-1]] on channel 0 -> top-left minus bottom-right = -4, bias 0.5.
  Tensor y = run(R"(
    func.func @main(%x: tensor<1x2x3x3xf32>, %w: tensor<2x2x2x2xf32>, %b: tensor<2xf32>) -> tensor<1x2x2x2xf32> {
      %y = kiln.conv %x, %w, %b {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>}
          : (tensor<1x2x3x3xf32>, tensor<2x2x2x2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
      return %y : tensor<1x2x2x2xf32>
    })",
                 {input("tensor<1x2x3x3xf32>", {1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 1, 1, 1, 1, 1, 1, 1, 1}),
                  input("tensor<2x2x2x2xf32>", {1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, -1, 0, 0, 0, 0}),
                  input("tensor<2xf32>", {1, 0.5})});
  expectValues(y, {1, 2, 2, 2}, {17, 21, 29, 33, -3.5, -3.5, -3.5, -3.5});
}

TEST_F(InterpreterDense, Conv1x1Strided) {
  // A 1x1 kernel with stride 2 on 0..15 (4x4) picks rows/cols 0 and 2: 0 2 8 10, times 2.
  Tensor y = run(R"(
    func.func @main(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x1x1xf32>) -> tensor<1x1x2x2xf32> {
      %y = kiln.conv %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>}
          : (tensor<1x1x4x4xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x2x2xf32>
      return %y : tensor<1x1x2x2xf32>
    })",
                 {input("tensor<1x1x4x4xf32>", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}),
                  input("tensor<1x1x1x1xf32>", {2})});
  expectValues(y, {1, 1, 2, 2}, {0, 4, 16, 20});
}

TEST_F(InterpreterDense, Conv1x1PointwiseBatch) {
  // Pointwise conv (no unfolding), batch 2: out = W [3x2] * channels.
  // Batch 0: channels [1,2] and [3,4]; batch 1: [0,1] and [1,0].
  // W rows: [1,1] -> sum, [1,-1] -> difference, [2,0] -> twice channel 0.
  Tensor y = run(R"(
    func.func @main(%x: tensor<2x2x1x2xf32>, %w: tensor<3x2x1x1xf32>) -> tensor<2x3x1x2xf32> {
      %y = kiln.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>}
          : (tensor<2x2x1x2xf32>, tensor<3x2x1x1xf32>) -> tensor<2x3x1x2xf32>
      return %y : tensor<2x3x1x2xf32>
    })",
                 {input("tensor<2x2x1x2xf32>", {1, 2, 3, 4, 0, 1, 1, 0}),
                  input("tensor<3x2x1x1xf32>", {1, 1, 1, -1, 2, 0})});
  expectValues(y, {2, 3, 1, 2}, {4, 6, -2, -2, 2, 4, /*batch 1*/ 1, 1, -1, 1, 0, 2});
}

TEST_F(InterpreterDense, ConvDepthwiseWithMultiplier) {
  // group 2, two filters per group. Input channel 0 = [1,2,3], channel 1 = [4,5,6].
  // Group 0 (channel 0): [1,1] -> 3 5; [0,1] -> 2 3. Group 1 (channel 1): [1,-1] -> -1 -1;
  // [2,0] -> 8 10.
  Tensor y = run(R"(
    func.func @main(%x: tensor<1x2x1x3xf32>, %w: tensor<4x1x1x2xf32>) -> tensor<1x4x1x2xf32> {
      %y = kiln.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 2 : i64}
          : (tensor<1x2x1x3xf32>, tensor<4x1x1x2xf32>) -> tensor<1x4x1x2xf32>
      return %y : tensor<1x4x1x2xf32>
    })",
                 {input("tensor<1x2x1x3xf32>", {1, 2, 3, 4, 5, 6}),
                  input("tensor<4x1x1x2xf32>", {1, 1, 0, 1, 1, -1, 2, 0})});
  expectValues(y, {1, 4, 1, 2}, {3, 5, 2, 3, -1, -1, 8, 10});
}

TEST_F(InterpreterDense, ConvGroupsOfTwoChannels) {
  // 4 channels [1,2,3,4] in 2 groups of 2: filter 0 sums channels 0,1 = 3; filter 1 takes
  // channel 2 - channel 3 = -1.
  Tensor y = run(R"(
    func.func @main(%x: tensor<1x4x1x1xf32>, %w: tensor<2x2x1x1xf32>) -> tensor<1x2x1x1xf32> {
      %y = kiln.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 2 : i64}
          : (tensor<1x4x1x1xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x1x1xf32>
      return %y : tensor<1x2x1x1xf32>
    })",
                 {input("tensor<1x4x1x1xf32>", {1, 2, 3, 4}), input("tensor<2x2x1x1xf32>", {1, 1, 1, -1})});
  expectValues(y, {1, 2, 1, 1}, {3, -1});
}

TEST_F(InterpreterDense, ConvDilated) {
  // Kernel [1,1] with dilation 2 spans 3: y[o] = x[o-2] + x[o] with pads 2/2 on [1..5]:
  // 0+1, 0+2, 1+3, 2+4, 3+5, 4+0, 5+0.
  Tensor y = run(R"(
    func.func @main(%x: tensor<1x1x5xf32>, %w: tensor<1x1x2xf32>) -> tensor<1x1x7xf32> {
      %y = kiln.conv %x, %w {strides = array<i64: 1>, dilations = array<i64: 2>, pads = array<i64: 2, 2>}
          : (tensor<1x1x5xf32>, tensor<1x1x2xf32>) -> tensor<1x1x7xf32>
      return %y : tensor<1x1x7xf32>
    })",
                 {input("tensor<1x1x5xf32>", {1, 2, 3, 4, 5}), input("tensor<1x1x2xf32>", {1, 1})});
  expectValues(y, {1, 1, 7}, {1, 2, 4, 6, 8, 4, 5});
}

TEST_F(InterpreterDense, Conv2dDilatedStridedPadded) {
  // 4x4 input 1..16, 2x2 kernel of ones dilated by 2 (spans 3x3), stride 2, pad 1 each side:
  // output 2x2. Window at (o0,o1) reads rows {2*o0-1, 2*o0+1}, cols {2*o1-1, 2*o1+1}.
  // (0,0): rows{-1,1} cols{-1,1} -> x[1][1] = 6.  (0,1): cols{1,3} -> x[1][1]+x[1][3] = 6+8.
  // (1,0): rows{1,3} cols{-1,1} -> 6+14.  (1,1): 6+8+14+16.
  Tensor y = run(R"(
    func.func @main(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32> {
      %y = kiln.conv %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>}
          : (tensor<1x1x4x4xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
      return %y : tensor<1x1x2x2xf32>
    })",
                 {input("tensor<1x1x4x4xf32>", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}),
                  input("tensor<1x1x2x2xf32>", {1, 1, 1, 1})});
  expectValues(y, {1, 1, 2, 2}, {6, 14, 20, 44});
}

TEST_F(InterpreterDense, Conv3d) {
  // 2x2x2 input 1..8. Filter 0 is all ones (sum 36); filter 1 is one-hot at (1,0,1), which
  // reads x[1][0][1] = 6.
  Tensor y = run(R"(
    func.func @main(%x: tensor<1x1x2x2x2xf32>, %w: tensor<2x1x2x2x2xf32>) -> tensor<1x2x1x1x1xf32> {
      %y = kiln.conv %x, %w {strides = array<i64: 1, 1, 1>, dilations = array<i64: 1, 1, 1>, pads = array<i64: 0, 0, 0, 0, 0, 0>}
          : (tensor<1x1x2x2x2xf32>, tensor<2x1x2x2x2xf32>) -> tensor<1x2x1x1x1xf32>
      return %y : tensor<1x2x1x1x1xf32>
    })",
                 {input("tensor<1x1x2x2x2xf32>", {1, 2, 3, 4, 5, 6, 7, 8}),
                  input("tensor<2x1x2x2x2xf32>", {1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 1, 0, 0})});
  expectValues(y, {1, 2, 1, 1, 1}, {36, 6});
}

TEST_F(InterpreterDense, ConvBf16RoundsOnce) {
  // 256 + 1 = 257 is not a bf16 (8 significant bits): it rounds to even, 256. 256 + 3 = 259
  // lies between 258 and 260 (tie), and rounds to 260 (even significand).
  Tensor y = run(R"(
    func.func @main(%x: tensor<1x1x3xbf16>, %w: tensor<1x1x2xbf16>) -> tensor<1x1x2xbf16> {
      %y = kiln.conv %x, %w {strides = array<i64: 1>, dilations = array<i64: 1>, pads = array<i64: 0, 0>}
          : (tensor<1x1x3xbf16>, tensor<1x1x2xbf16>) -> tensor<1x1x2xbf16>
      return %y : tensor<1x1x2xbf16>
    })",
                 {input("tensor<1x1x3xbf16>", {256, 1, 258}), input("tensor<1x1x2xbf16>", {1, 1})});
  expectValues(y, {1, 1, 2}, {256, 260});
}

TEST_F(InterpreterDense, ConvResNetLayerSize) {
  // ResNet-50's layer-1 3x3 conv: 1x64x56x56 * 64x64x3x3, pad 1. All ones: an interior output
  // sums 64*9 = 576 ones, an edge 64*6 = 384, a corner 64*4 = 256.
  std::vector<double> ones(64 * 56 * 56, 1.0), weights(64 * 64 * 9, 1.0);
  Tensor x = input("tensor<1x64x56x56xf32>", ones), w = input("tensor<64x64x3x3xf32>", weights);
  auto start = std::chrono::steady_clock::now();
  Tensor y = run(R"(
    func.func @main(%x: tensor<1x64x56x56xf32>, %w: tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32> {
      %y = kiln.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>}
          : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32>
      return %y : tensor<1x64x56x56xf32>
    })",
                 {x, w});
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("[   INFO   ] 1x64x56x56 * 64x64x3x3 conv: %.1f ms\n", ms);
  ASSERT_EQ(y.shape, (kiln::Shape{1, 64, 56, 56}));
  auto at = [&](int64_t c, int64_t h, int64_t w) { return y.f[(c * 56 + h) * 56 + w]; };
  EXPECT_EQ(at(0, 0, 0), 256);
  EXPECT_EQ(at(5, 0, 30), 384);
  EXPECT_EQ(at(63, 55, 55), 256);
  EXPECT_EQ(at(17, 20, 41), 576);
}

//===----------------------------------------------------------------------===//
// conv_transpose
//===----------------------------------------------------------------------===//

TEST_F(InterpreterDense, ConvTranspose2dStride2) {
  // Stride 2 with a 2x2 kernel of ones: each input value fills its own 2x2 output block.
  Tensor y = run(R"(
    func.func @main(%x: tensor<1x1x2x2xf32>, %w: tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32> {
      %y = kiln.conv_transpose %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, output_padding = array<i64: 0, 0>}
          : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32>
      return %y : tensor<1x1x4x4xf32>
    })",
                 {input("tensor<1x1x2x2xf32>", {1, 2, 3, 4}), input("tensor<1x1x2x2xf32>", {1, 1, 1, 1})});
  expectValues(y, {1, 1, 4, 4}, {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
}

TEST_F(InterpreterDense, ConvTranspose1dOverlapPadsOutputPaddingBias) {
  // x = [1,2], kernel [1,1,1], stride 2: the full output is [1,1,1+2,2,2] (length 5);
  // output_padding 1 appends a sixth position (nothing lands there), pads (1,0) drop the first:
  // [1,3,2,2,0], plus bias 0.5.
  Tensor y = run(R"(
    func.func @main(%x: tensor<1x1x2xf32>, %w: tensor<1x1x3xf32>, %b: tensor<1xf32>) -> tensor<1x1x5xf32> {
      %y = kiln.conv_transpose %x, %w, %b {strides = array<i64: 2>, dilations = array<i64: 1>, pads = array<i64: 1, 0>, output_padding = array<i64: 1>}
          : (tensor<1x1x2xf32>, tensor<1x1x3xf32>, tensor<1xf32>) -> tensor<1x1x5xf32>
      return %y : tensor<1x1x5xf32>
    })",
                 {input("tensor<1x1x2xf32>", {1, 2}), input("tensor<1x1x3xf32>", {1, 1, 1}),
                  input("tensor<1xf32>", {0.5})});
  expectValues(y, {1, 1, 5}, {1.5, 3.5, 2.5, 2.5, 0.5});
}

TEST_F(InterpreterDense, ConvTransposeDilated) {
  // Kernel [1,1] dilated by 2: x0 lands on 0 and 2, x1 on 1 and 3.
  Tensor y = run(R"(
    func.func @main(%x: tensor<1x1x2xf32>, %w: tensor<1x1x2xf32>) -> tensor<1x1x4xf32> {
      %y = kiln.conv_transpose %x, %w {strides = array<i64: 1>, dilations = array<i64: 2>, pads = array<i64: 0, 0>, output_padding = array<i64: 0>}
          : (tensor<1x1x2xf32>, tensor<1x1x2xf32>) -> tensor<1x1x4xf32>
      return %y : tensor<1x1x4xf32>
    })",
                 {input("tensor<1x1x2xf32>", {1, 2}), input("tensor<1x1x2xf32>", {1, 1})});
  expectValues(y, {1, 1, 4}, {1, 2, 1, 2});
}

TEST_F(InterpreterDense, ConvTransposeGroupsAndChannelMixing) {
  // x = [1, 2] (two channels, 1x1), weights w0 = [[1,2],[3,4]], w1 = ones, stride 2.
  // group 2: output channel 0 = 1 * w0, output channel 1 = 2 * w1.
  // group 1 (weight [2,1,...]): one output channel = 1 * w0 + 2 * w1 = [[3,4],[5,6]].
  const char *grouped = R"(
    func.func @main(%x: tensor<1x2x1x1xf32>, %w: tensor<2x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
      %y = kiln.conv_transpose %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, output_padding = array<i64: 0, 0>, group = 2 : i64}
          : (tensor<1x2x1x1xf32>, tensor<2x1x2x2xf32>) -> tensor<1x2x2x2xf32>
      return %y : tensor<1x2x2x2xf32>
    })";
  const char *mixed = R"(
    func.func @main(%x: tensor<1x2x1x1xf32>, %w: tensor<2x1x2x2xf32>) -> tensor<1x1x2x2xf32> {
      %y = kiln.conv_transpose %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, output_padding = array<i64: 0, 0>}
          : (tensor<1x2x1x1xf32>, tensor<2x1x2x2xf32>) -> tensor<1x1x2x2xf32>
      return %y : tensor<1x1x2x2xf32>
    })";
  Tensor x = input("tensor<1x2x1x1xf32>", {1, 2});
  Tensor w = input("tensor<2x1x2x2xf32>", {1, 2, 3, 4, 1, 1, 1, 1});
  expectValues(run(grouped, {x, w}), {1, 2, 2, 2}, {1, 2, 3, 4, 2, 2, 2, 2});
  expectValues(run(mixed, {x, w}), {1, 1, 2, 2}, {3, 4, 5, 6});
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

TEST_F(InterpreterDense, MaxPool2d) {
  // 2x2 windows, stride 1, over 1..9 (3x3): the bottom-right of each window.
  Tensor y = run(R"(
    func.func @main(%x: tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32> {
      %y = kiln.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>}
          : (tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32>
      return %y : tensor<1x1x2x2xf32>
    })",
                 {input("tensor<1x1x3x3xf32>", {1, 2, 3, 4, 5, 6, 7, 8, 9})});
  expectValues(y, {1, 1, 2, 2}, {5, 6, 8, 9});
}

TEST_F(InterpreterDense, MaxPoolCeilModeAndPadding) {
  // Length 4, kernel 3, stride 2, pads 1/1, ceil_mode: 3 windows starting at -1, 1, 3 (the
  // last one reaches past the end padding and is clipped). Negative inputs show the padding
  // never wins: max(x0,x1), max(x1,x2,x3), x3.
  Tensor y = run(R"(
    func.func @main(%x: tensor<1x1x4xf32>) -> tensor<1x1x3xf32> {
      %y = kiln.max_pool %x {kernel_shape = array<i64: 3>, strides = array<i64: 2>, dilations = array<i64: 1>, pads = array<i64: 1, 1>, ceil_mode = true}
          : (tensor<1x1x4xf32>) -> tensor<1x1x3xf32>
      return %y : tensor<1x1x3xf32>
    })",
                 {input("tensor<1x1x4xf32>", {-1, -2, -3, -4})});
  expectValues(y, {1, 1, 3}, {-1, -2, -4});
  // Without padding, 5 values with kernel 2 stride 2: floor mode has 2 windows, ceil mode 3
  // (the last one holds only x4).
  Tensor z = run(R"(
    func.func @main(%x: tensor<1x1x5xf32>) -> tensor<1x1x3xf32> {
      %y = kiln.max_pool %x {kernel_shape = array<i64: 2>, strides = array<i64: 2>, dilations = array<i64: 1>, pads = array<i64: 0, 0>, ceil_mode = true}
          : (tensor<1x1x5xf32>) -> tensor<1x1x3xf32>
      return %y : tensor<1x1x3xf32>
    })",
                 {input("tensor<1x1x5xf32>", {1, 5, 3, 4, 2})});
  expectValues(z, {1, 1, 3}, {5, 4, 2});
}

TEST_F(InterpreterDense, MaxPoolDilated) {
  // Kernel 2 with dilation 2 pairs x[o] with x[o+2]: max(1,2), max(9,8), max(2,3).
  Tensor y = run(R"(
    func.func @main(%x: tensor<1x1x5xf32>) -> tensor<1x1x3xf32> {
      %y = kiln.max_pool %x {kernel_shape = array<i64: 2>, strides = array<i64: 1>, dilations = array<i64: 2>, pads = array<i64: 0, 0>}
          : (tensor<1x1x5xf32>) -> tensor<1x1x3xf32>
      return %y : tensor<1x1x3xf32>
    })",
                 {input("tensor<1x1x5xf32>", {1, 9, 2, 8, 3})});
  expectValues(y, {1, 1, 3}, {2, 9, 3});
}

TEST_F(InterpreterDense, MaxPoolInt8AndUint8) {
  // i8, kernel 2, stride 2, pads 1/1: windows {pad,x0}, {x1,x2}, {x3,pad}.
  Tensor y = run(R"(
    func.func @main(%x: tensor<1x1x4xi8>) -> tensor<1x1x3xi8> {
      %y = kiln.max_pool %x {kernel_shape = array<i64: 2>, strides = array<i64: 2>, dilations = array<i64: 1>, pads = array<i64: 1, 1>}
          : (tensor<1x1x4xi8>) -> tensor<1x1x3xi8>
      return %y : tensor<1x1x3xi8>
    })",
                 {input("tensor<1x1x4xi8>", {-5, -3, -7, -1})});
  expectValues(y, {1, 1, 3}, {-5, -3, -1});
  Tensor z = run(R"(
    func.func @main(%x: tensor<1x1x4xui8>) -> tensor<1x1x2xui8> {
      %y = kiln.max_pool %x {kernel_shape = array<i64: 2>, strides = array<i64: 2>, dilations = array<i64: 1>, pads = array<i64: 0, 0>}
          : (tensor<1x1x4xui8>) -> tensor<1x1x2xui8>
      return %y : tensor<1x1x2xui8>
    })",
                 {input("tensor<1x1x4xui8>", {200, 10, 255, 3})});
  expectValues(z, {1, 1, 2}, {200, 255});
}

const char *kAvgPoolPadded = R"(
    func.func @main(%x: tensor<1x1x4xf32>) -> tensor<1x1x4xf32> {
      %y = kiln.avg_pool %x {kernel_shape = array<i64: 3>, strides = array<i64: 1>, dilations = array<i64: 1>, pads = array<i64: 1, 1>, count_include_pad = INCLUDE}
          : (tensor<1x1x4xf32>) -> tensor<1x1x4xf32>
      return %y : tensor<1x1x4xf32>
    })";

std::string withInclude(const char *text, bool include) {
  std::string s = text;
  s.replace(s.find("INCLUDE"), 7, include ? "true" : "false");
  return s;
}

TEST_F(InterpreterDense, AvgPoolPaddedBorder) {
  // [1,2,3,4], kernel 3, pads 1/1: windows {pad,1,2}, {1,2,3}, {2,3,4}, {3,4,pad}.
  // Excluding the padding: 3/2, 6/3, 9/3, 7/2. Including it: 3/3, 2, 3, 7/3.
  Tensor x = input("tensor<1x1x4xf32>", {1, 2, 3, 4});
  expectValues(run(withInclude(kAvgPoolPadded, false), {x}), {1, 1, 4}, {1.5, 2, 3, 3.5});
  expectValues(run(withInclude(kAvgPoolPadded, true), {x}), {1, 1, 4}, {1, 2, 3, f32(7.0 / 3.0)});
}

const char *kAvgPoolCeil = R"(
    func.func @main(%x: tensor<1x1x4xf32>) -> tensor<1x1x3xf32> {
      %y = kiln.avg_pool %x {kernel_shape = array<i64: 3>, strides = array<i64: 2>, dilations = array<i64: 1>, pads = array<i64: 1, 1>, ceil_mode = true, count_include_pad = INCLUDE}
          : (tensor<1x1x4xf32>) -> tensor<1x1x3xf32>
      return %y : tensor<1x1x3xf32>
    })";

TEST_F(InterpreterDense, AvgPoolCeilModeClipsToPaddedEnd) {
  // [1,2,3,4], kernel 3, stride 2, pads 1/1, ceil_mode: windows start at -1, 1, 3.
  // {pad,1,2}: 3/3 with the padding, 3/2 without. {2,3,4}: 9/3. The last window {4,pad,beyond}
  // is clipped to the padded image (positions 3, 4) for the divisor, as PyTorch does: 4/2 with
  // the padding, 4/1 without.
  Tensor x = input("tensor<1x1x4xf32>", {1, 2, 3, 4});
  expectValues(run(withInclude(kAvgPoolCeil, true), {x}), {1, 1, 3}, {1, 3, 2});
  expectValues(run(withInclude(kAvgPoolCeil, false), {x}), {1, 1, 3}, {1.5, 3, 4});
}

TEST_F(InterpreterDense, AvgPool2dStrided) {
  // 2x2 windows, stride 2, over 1..16 (4x4): means of {1,2,5,6}, {3,4,7,8}, ...
  Tensor y = run(R"(
    func.func @main(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> {
      %y = kiln.avg_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>}
          : (tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32>
      return %y : tensor<1x1x2x2xf32>
    })",
                 {input("tensor<1x1x4x4xf32>", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})});
  expectValues(y, {1, 1, 2, 2}, {3.5, 5.5, 11.5, 13.5});
}

TEST_F(InterpreterDense, GlobalPools) {
  // Channel 0 = [1,2,3,4]: mean 2.5, max 4. Channel 1 = [5,6,7,9]: mean 6.75, max 9.
  Tensor x = input("tensor<1x2x2x2xf32>", {1, 2, 3, 4, 5, 6, 7, 9});
  expectValues(run(R"(
    func.func @main(%x: tensor<1x2x2x2xf32>) -> tensor<1x2x1x1xf32> {
      %y = kiln.global_avg_pool %x : (tensor<1x2x2x2xf32>) -> tensor<1x2x1x1xf32>
      return %y : tensor<1x2x1x1xf32>
    })",
                   {x}),
               {1, 2, 1, 1}, {2.5, 6.75});
  expectValues(run(R"(
    func.func @main(%x: tensor<1x2x2x2xf32>) -> tensor<1x2x1x1xf32> {
      %y = kiln.global_max_pool %x : (tensor<1x2x2x2xf32>) -> tensor<1x2x1x1xf32>
      return %y : tensor<1x2x1x1xf32>
    })",
                   {x}),
               {1, 2, 1, 1}, {4, 9});
}

//===----------------------------------------------------------------------===//
// channels_last: the same arithmetic as channels first, bit for bit
//===----------------------------------------------------------------------===//

/// Expects the results of a module that returns an op's channels-first result and, permuted
/// back to channels first, its channels_last twin's on the permuted operands: bitwise equal.
void expectSameBits(const std::vector<Tensor> &results) {
  ASSERT_EQ(results.size(), 2u);
  const Tensor &first = results[0], &last = results[1];
  ASSERT_EQ(first.shape, last.shape);
  ASSERT_EQ(first.element, last.element);
  for (int64_t k = 0; k < first.size(); ++k)
    ASSERT_EQ(first.f[k], last.f[k]) << "element " << k;
  // The values are not all equal, so a wrong permutation would show.
  EXPECT_NE(*std::min_element(first.f.begin(), first.f.end()),
            *std::max_element(first.f.begin(), first.f.end()));
}

TEST_F(InterpreterDense, ConvChannelsLastIsTheSameConv) {
  // Grouped, strided, dilated, padded unevenly, with bias, in bf16 (the product rounds once) and
  // f32: x [2,4,5,6], w [6,2,3,2] (KCRS) -> [2,6,3,5]; channels last x [2,5,6,4], w [6,3,2,2]
  // (KRSC) -> [2,3,5,6].
  for (const char *element : {"bf16", "f32"}) {
    std::string source = R"(
      func.func @main(%x: tensor<2x4x5x6xT>, %w: tensor<6x2x3x2xT>, %b: tensor<6xT>) -> (tensor<2x6x3x5xT>, tensor<2x6x3x5xT>) {
        %first = kiln.conv %x, %w, %b {strides = array<i64: 2, 1>, dilations = array<i64: 1, 2>, pads = array<i64: 1, 0, 1, 1>, group = 2 : i64}
            : (tensor<2x4x5x6xT>, tensor<6x2x3x2xT>, tensor<6xT>) -> tensor<2x6x3x5xT>
        %xl = kiln.transpose %x {perm = array<i64: 0, 2, 3, 1>} : (tensor<2x4x5x6xT>) -> tensor<2x5x6x4xT>
        %wl = kiln.transpose %w {perm = array<i64: 0, 2, 3, 1>} : (tensor<6x2x3x2xT>) -> tensor<6x3x2x2xT>
        %last = kiln.conv %xl, %wl, %b {strides = array<i64: 2, 1>, dilations = array<i64: 1, 2>, pads = array<i64: 1, 0, 1, 1>, group = 2 : i64, channels_last = true}
            : (tensor<2x5x6x4xT>, tensor<6x3x2x2xT>, tensor<6xT>) -> tensor<2x3x5x6xT>
        %back = kiln.transpose %last {perm = array<i64: 0, 3, 1, 2>} : (tensor<2x3x5x6xT>) -> tensor<2x6x3x5xT>
        return %first, %back : tensor<2x6x3x5xT>, tensor<2x6x3x5xT>
      })";
    for (size_t at; (at = source.find("xT>")) != std::string::npos;)
      source.replace(at, 3, std::string("x") + element + ">");
    std::string t = std::string("x") + element + ">";
    expectSameBits(runAll(source, {pattern("tensor<2x4x5x6" + t, 1), pattern("tensor<6x2x3x2" + t, 2),
                                   pattern("tensor<6" + t, 3)}));
  }
}

TEST_F(InterpreterDense, PoolsChannelsLastAreTheSamePools) {
  // Max and average pooling with ceil_mode and uneven padding, [2,3,5,7] -> [2,3,3,4], and the
  // global pools, each against its channels_last twin on the permuted input.
  const char *pools[] = {
      "kiln.max_pool %IN {kernel_shape = array<i64: 3, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, "
      "pads = array<i64: 1, 0, 1, 0>, ceil_mode = true LAST}",
      "kiln.avg_pool %IN {kernel_shape = array<i64: 3, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, "
      "pads = array<i64: 1, 0, 1, 0>, ceil_mode = true, count_include_pad = true LAST}",
      "kiln.global_avg_pool %IN {LAST}",
      "kiln.global_max_pool %IN {LAST}",
  };
  const char *outFirst[] = {"2x3x3x4", "2x3x3x4", "2x3x1x1", "2x3x1x1"};
  const char *outLast[] = {"2x3x4x3", "2x3x4x3", "2x1x1x3", "2x1x1x3"};
  for (int p = 0; p < 4; ++p) {
    auto op = [&](const char *in, bool last) {
      std::string text = pools[p];
      text.replace(text.find("%IN"), 3, in);
      text.replace(text.find("LAST"), 4, last ? (p < 2 ? ", channels_last = true" : "channels_last = true") : "");
      return text;
    };
    std::string first = outFirst[p], last = outLast[p];
    std::string source = "func.func @main(%x: tensor<2x3x5x7xf32>) -> (tensor<" + first + "xf32>, tensor<" +
                         first + "xf32>) {\n"
                         "  %first = " + op("%x", false) + " : (tensor<2x3x5x7xf32>) -> tensor<" + first + "xf32>\n"
                         "  %xl = kiln.transpose %x {perm = array<i64: 0, 2, 3, 1>} : (tensor<2x3x5x7xf32>) -> tensor<2x5x7x3xf32>\n"
                         "  %last = " + op("%xl", true) + " : (tensor<2x5x7x3xf32>) -> tensor<" + last + "xf32>\n"
                         "  %back = kiln.transpose %last {perm = array<i64: 0, 3, 1, 2>} : (tensor<" + last +
                         "xf32>) -> tensor<" + first + "xf32>\n"
                         "  return %first, %back : tensor<" + first + "xf32>, tensor<" + first + "xf32>\n}";
    SCOPED_TRACE(pools[p]);
    expectSameBits(runAll(source, {pattern("tensor<2x3x5x7xf32>", 4)}));
  }
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

TEST_F(InterpreterDense, BatchNorm) {
  // Channel 0: (x - 1) / sqrt(4) * 2 + 0.5 on [1, 3] -> 0.5, 2.5.
  // Channel 1: (x - 3) / sqrt(0.25) * 1 - 1 on [2, 4] -> -3, 1.
  Tensor y = run(R"(
    func.func @main(%x: tensor<1x2x1x2xf32>, %s: tensor<2xf32>, %b: tensor<2xf32>, %m: tensor<2xf32>, %v: tensor<2xf32>) -> tensor<1x2x1x2xf32> {
      %y = kiln.batch_norm %x, %s, %b, %m, %v {epsilon = 0.0 : f32}
          : (tensor<1x2x1x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x1x2xf32>
      return %y : tensor<1x2x1x2xf32>
    })",
                 {input("tensor<1x2x1x2xf32>", {1, 3, 2, 4}), input("tensor<2xf32>", {2, 1}),
                  input("tensor<2xf32>", {0.5, -1}), input("tensor<2xf32>", {1, 3}),
                  input("tensor<2xf32>", {4, 0.25})});
  expectValues(y, {1, 2, 1, 2}, {0.5, 2.5, -3, 1});
}

TEST_F(InterpreterDense, BatchNormDefaultEpsilon) {
  // epsilon defaults to 1e-5: 1 / sqrt(1 + 1e-5) = 0.99999500004 (not 1).
  Tensor y = run(R"(
    func.func @main(%x: tensor<1x1xf32>, %s: tensor<1xf32>, %b: tensor<1xf32>, %m: tensor<1xf32>, %v: tensor<1xf32>) -> tensor<1x1xf32> {
      %y = kiln.batch_norm %x, %s, %b, %m, %v : (tensor<1x1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1xf32>
      return %y : tensor<1x1xf32>
    })",
                 {input("tensor<1x1xf32>", {1}), input("tensor<1xf32>", {1}), input("tensor<1xf32>", {0}),
                  input("tensor<1xf32>", {0}), input("tensor<1xf32>", {1})});
  expectValues(y, {1, 1}, {0.99999500004}, 1e-7);
  EXPECT_NE(y.f[0], 1.0);
}

TEST_F(InterpreterDense, InstanceNorm) {
  // Channel 0 = [1,2,3,4]: mean 2.5, variance 1.25; epsilon 2.75 makes the deviation 2, so
  // (x - 2.5) / 2 = [-0.75,-0.25,0.25,0.75], times 2 plus 1. Channel 1 is constant: 0 * 1 + 7.
  Tensor y = run(R"(
    func.func @main(%x: tensor<1x2x4xf32>, %s: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<1x2x4xf32> {
      %y = kiln.instance_norm %x, %s, %b {epsilon = 2.75 : f32}
          : (tensor<1x2x4xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4xf32>
      return %y : tensor<1x2x4xf32>
    })",
                 {input("tensor<1x2x4xf32>", {1, 2, 3, 4, 2, 2, 2, 2}), input("tensor<2xf32>", {2, 1}),
                  input("tensor<2xf32>", {1, 7})});
  expectValues(y, {1, 2, 4}, {-0.5, 0.5, 1.5, 2.5, 7, 7, 7, 7});
}

TEST_F(InterpreterDense, LayerNormLastAxis) {
  // Row 0 = [1,2,3,4]: mean 2.5, variance 1.25 -> (x - 2.5) / sqrt(1.25)
  //   = [-1.3416407865, -0.4472135955, 0.4472135955, 1.3416407865].
  // Row 1 = [-1,1,-1,1]: mean 0, variance 1 -> unchanged.
  // Then scale [1,1,2,2] and bias [0,0,0,1].
  Tensor y = run(R"(
    func.func @main(%x: tensor<2x4xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
      %y = kiln.layer_norm %x, %s, %b {axis = 1 : i64, epsilon = 0.0 : f32}
          : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
      return %y : tensor<2x4xf32>
    })",
                 {input("tensor<2x4xf32>", {1, 2, 3, 4, -1, 1, -1, 1}), input("tensor<4xf32>", {1, 1, 2, 2}),
                  input("tensor<4xf32>", {0, 0, 0, 1})});
  expectValues(y, {2, 4},
               {f32(-1.3416407864998738), f32(-0.4472135954999579), f32(0.8944271909999159),
                f32(3.6832815729997477), -1, 1, -2, 3});
}

TEST_F(InterpreterDense, LayerNormTrailingAxesBroadcastScaleNoBias) {
  // axis 1 of 1x2x2 normalizes all four values [1,2,3,4]: epsilon 2.75 gives deviation 2, so
  // [-0.75,-0.25,0.25,0.75]; scale [1,10] broadcasts over the last axis.
  Tensor y = run(R"(
    func.func @main(%x: tensor<1x2x2xf32>, %s: tensor<2xf32>) -> tensor<1x2x2xf32> {
      %y = kiln.layer_norm %x, %s {axis = 1 : i64, epsilon = 2.75 : f32}
          : (tensor<1x2x2xf32>, tensor<2xf32>) -> tensor<1x2x2xf32>
      return %y : tensor<1x2x2xf32>
    })",
                 {input("tensor<1x2x2xf32>", {1, 2, 3, 4}), input("tensor<2xf32>", {1, 10})});
  expectValues(y, {1, 2, 2}, {-0.75, -2.5, 0.25, 7.5});
}

TEST_F(InterpreterDense, GroupNorm) {
  // 4 channels in 2 groups. Group 0 (channels 0,1) = [1,2,3,4]: with epsilon 2.75,
  // [-0.75,-0.25,0.25,0.75]; channel 1 is scaled by 2. Group 1 is constant: only the biases 5, 6.
  Tensor y = run(R"(
    func.func @main(%x: tensor<1x4x2xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<1x4x2xf32> {
      %y = kiln.group_norm %x, %s, %b {num_groups = 2 : i64, epsilon = 2.75 : f32}
          : (tensor<1x4x2xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x2xf32>
      return %y : tensor<1x4x2xf32>
    })",
                 {input("tensor<1x4x2xf32>", {1, 2, 3, 4, 10, 10, 10, 10}),
                  input("tensor<4xf32>", {1, 2, 1, 1}), input("tensor<4xf32>", {0, 0, 5, 6})});
  expectValues(y, {1, 4, 2}, {-0.75, -0.25, 0.5, 1.5, 5, 5, 6, 6});
}

//===----------------------------------------------------------------------===//
// matmul, gemm, einsum
//===----------------------------------------------------------------------===//

TEST_F(InterpreterDense, MatMulBatchBroadcast) {
  // lhs [2,1,1,2]: rows [1,2] and [3,4]; rhs [3,2,1]: columns [1,0], [0,1], [1,1].
  // Result [2,3,1,1]: row r against every column: 1 2 3 / 3 4 7.
  Tensor y = run(R"(
    func.func @main(%a: tensor<2x1x1x2xf32>, %b: tensor<3x2x1xf32>) -> tensor<2x3x1x1xf32> {
      %y = kiln.matmul %a, %b : (tensor<2x1x1x2xf32>, tensor<3x2x1xf32>) -> tensor<2x3x1x1xf32>
      return %y : tensor<2x3x1x1xf32>
    })",
                 {input("tensor<2x1x1x2xf32>", {1, 2, 3, 4}), input("tensor<3x2x1xf32>", {1, 0, 0, 1, 1, 1})});
  expectValues(y, {2, 3, 1, 1}, {1, 2, 3, 3, 4, 7});
}

TEST_F(InterpreterDense, MatMulOneDimensional) {
  // [1,2] x [[1,2,3],[4,5,6]] = [9,12,15]; [[1,2,3],[4,5,6]] x [1,1,1] = [6,15];
  // [1,2,3] . [4,5,6] = 32 (rank 0).
  Tensor m = input("tensor<2x3xf32>", {1, 2, 3, 4, 5, 6});
  expectValues(run(R"(
    func.func @main(%a: tensor<2xf32>, %b: tensor<2x3xf32>) -> tensor<3xf32> {
      %y = kiln.matmul %a, %b : (tensor<2xf32>, tensor<2x3xf32>) -> tensor<3xf32>
      return %y : tensor<3xf32>
    })",
                   {input("tensor<2xf32>", {1, 2}), m}),
               {3}, {9, 12, 15});
  expectValues(run(R"(
    func.func @main(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2xf32> {
      %y = kiln.matmul %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2xf32>
      return %y : tensor<2xf32>
    })",
                   {m, input("tensor<3xf32>", {1, 1, 1})}),
               {2}, {6, 15});
  expectValues(run(R"(
    func.func @main(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<f32> {
      %y = kiln.matmul %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>
      return %y : tensor<f32>
    })",
                   {input("tensor<3xf32>", {1, 2, 3}), input("tensor<3xf32>", {4, 5, 6})}),
               {}, {32});
}

TEST_F(InterpreterDense, MatMulIntegers) {
  // [[1,2],[3,4]] x [[5,6],[7,8]] = [[19,22],[43,50]] in i32; in i8, 100*1 + 100*1 = 200 wraps
  // to 200 - 256 = -56.
  expectValues(run(R"(
    func.func @main(%a: tensor<2x2xi32>, %b: tensor<2x2xi32>) -> tensor<2x2xi32> {
      %y = kiln.matmul %a, %b : (tensor<2x2xi32>, tensor<2x2xi32>) -> tensor<2x2xi32>
      return %y : tensor<2x2xi32>
    })",
                   {input("tensor<2x2xi32>", {1, 2, 3, 4}), input("tensor<2x2xi32>", {5, 6, 7, 8})}),
               {2, 2}, {19, 22, 43, 50});
  expectValues(run(R"(
    func.func @main(%a: tensor<2xi8>, %b: tensor<2xi8>) -> tensor<i8> {
      %y = kiln.matmul %a, %b : (tensor<2xi8>, tensor<2xi8>) -> tensor<i8>
      return %y : tensor<i8>
    })",
                   {input("tensor<2xi8>", {100, 100}), input("tensor<2xi8>", {1, 1})}),
               {}, {-56});
}

TEST_F(InterpreterDense, MatMulF16RoundsTheExactProduct) {
  // f16 has 11 significant bits: between 2048 and 4096 its spacing is 2.
  // 2048 + 1 = 2049 is a tie between 2048 and 2050 -> even significand: 2048.
  // 2048 + 3 = 2051 is a tie between 2050 and 2052 -> 2052.
  // 2048*0.5 + 0.375 = 1024.375 lies between 1024 and 1025 -> 1024 (spacing 1 there).
  Tensor y = run(R"(
    func.func @main(%a: tensor<3x2xf16>, %b: tensor<2x1xf16>) -> tensor<3x1xf16> {
      %y = kiln.matmul %a, %b : (tensor<3x2xf16>, tensor<2x1xf16>) -> tensor<3x1xf16>
      return %y : tensor<3x1xf16>
    })",
                 {input("tensor<3x2xf16>", {2048, 1, 2048, 3, 1024, 0.375}), input("tensor<2x1xf16>", {1, 1})});
  auto f16 = Float16Type::get(&context);
  expectValues(y, {3, 1}, {2048, 2052, 1024});
  EXPECT_EQ(y.f[0], kiln::interp::roundToFloat(2049.0, f16));
  EXPECT_EQ(y.f[1], kiln::interp::roundToFloat(2051.0, f16));
  EXPECT_EQ(y.f[2], kiln::interp::roundToFloat(1024.375, f16));
}

TEST_F(InterpreterDense, GemmTransBAlphaBetaRowBroadcast) {
  // A = [[1,2,3],[4,5,6]], B^T with B = [[1,0,1],[0,1,0]]: A B^T = [[4,2],[10,5]];
  // alpha 2 -> [[8,4],[20,10]]; C = [1,-1] broadcasts over rows, beta 0.5 -> +0.5 / -0.5.
  Tensor y = run(R"(
    func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %c: tensor<2xf32>) -> tensor<2x2xf32> {
      %y = kiln.gemm %a, %b, %c {alpha = 2.0 : f32, beta = 0.5 : f32, trans_b = true}
          : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x2xf32>
      return %y : tensor<2x2xf32>
    })",
                 {input("tensor<2x3xf32>", {1, 2, 3, 4, 5, 6}), input("tensor<2x3xf32>", {1, 0, 1, 0, 1, 0}),
                  input("tensor<2xf32>", {1, -1})});
  expectValues(y, {2, 2}, {8.5, 3.5, 20.5, 9.5});
}

TEST_F(InterpreterDense, GemmTransAColumnBroadcast) {
  // A = [[1,4],[2,5],[3,6]] transposed is [[1,2,3],[4,5,6]]; times ones(3,1) = [[6],[15]];
  // C [[10],[20]] broadcasts along columns.
  Tensor y = run(R"(
    func.func @main(%a: tensor<3x2xf32>, %b: tensor<3x1xf32>, %c: tensor<2x1xf32>) -> tensor<2x1xf32> {
      %y = kiln.gemm %a, %b, %c {trans_a = true}
          : (tensor<3x2xf32>, tensor<3x1xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
      return %y : tensor<2x1xf32>
    })",
                 {input("tensor<3x2xf32>", {1, 4, 2, 5, 3, 6}), input("tensor<3x1xf32>", {1, 1, 1}),
                  input("tensor<2x1xf32>", {10, 20})});
  expectValues(y, {2, 1}, {16, 35});
}

TEST_F(InterpreterDense, GemmIntegerNoC) {
  // i64, both transposed: A^T = [[1,3],[2,4]], B^T = [[1,0],[1,1]] -> [[4,3],[6,4]].
  Tensor y = run(R"(
    func.func @main(%a: tensor<2x2xi64>, %b: tensor<2x2xi64>) -> tensor<2x2xi64> {
      %y = kiln.gemm %a, %b {trans_a = true, trans_b = true}
          : (tensor<2x2xi64>, tensor<2x2xi64>) -> tensor<2x2xi64>
      return %y : tensor<2x2xi64>
    })",
                 {input("tensor<2x2xi64>", {1, 2, 3, 4}), input("tensor<2x2xi64>", {1, 1, 0, 1})});
  expectValues(y, {2, 2}, {4, 3, 6, 4});
}

TEST_F(InterpreterDense, EinsumMatrixProductDiagonalTranspose) {
  Tensor a = input("tensor<2x2xf32>", {1, 2, 3, 4});
  // ij,jk->ik: [[1,2],[3,4]] x [[5,6],[7,8]] = [[19,22],[43,50]].
  expectValues(run(R"(
    func.func @main(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {
      %y = kiln.einsum %a, %b {equation = "ij,jk->ik"} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
      return %y : tensor<2x2xf32>
    })",
                   {a, input("tensor<2x2xf32>", {5, 6, 7, 8})}),
               {2, 2}, {19, 22, 43, 50});
  // ii->i: the diagonal [1,4].
  expectValues(run(R"(
    func.func @main(%a: tensor<2x2xf32>) -> tensor<2xf32> {
      %y = kiln.einsum %a {equation = "ii->i"} : (tensor<2x2xf32>) -> tensor<2xf32>
      return %y : tensor<2xf32>
    })",
                   {a}),
               {2}, {1, 4});
  // ii (implicit output: no label appears once): the trace 5.
  expectValues(run(R"(
    func.func @main(%a: tensor<2x2xf32>) -> tensor<f32> {
      %y = kiln.einsum %a {equation = "ii"} : (tensor<2x2xf32>) -> tensor<f32>
      return %y : tensor<f32>
    })",
                   {a}),
               {}, {5});
  // bij->bji on 2x2x3 (batch 0 = 0..5, batch 1 = 6..11).
  expectValues(run(R"(
    func.func @main(%a: tensor<2x2x3xf32>) -> tensor<2x3x2xf32> {
      %y = kiln.einsum %a {equation = "bij->bji"} : (tensor<2x2x3xf32>) -> tensor<2x3x2xf32>
      return %y : tensor<2x3x2xf32>
    })",
                   {input("tensor<2x2x3xf32>", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})}),
               {2, 3, 2}, {0, 3, 1, 4, 2, 5, 6, 9, 7, 10, 8, 11});
}

TEST_F(InterpreterDense, EinsumImplicitOutputIsAlphabetical) {
  // "ba" has implicit output "ab": a transpose. [[1,2,3],[4,5,6]] -> [[1,4],[2,5],[3,6]].
  expectValues(run(R"(
    func.func @main(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
      %y = kiln.einsum %a {equation = "ba"} : (tensor<2x3xf32>) -> tensor<3x2xf32>
      return %y : tensor<3x2xf32>
    })",
                   {input("tensor<2x3xf32>", {1, 2, 3, 4, 5, 6})}),
               {3, 2}, {1, 4, 2, 5, 3, 6});
  // "i,i": a dot product, 1*4 + 2*5 + 3*6 = 32.
  expectValues(run(R"(
    func.func @main(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<f32> {
      %y = kiln.einsum %a, %b {equation = "i,i"} : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>
      return %y : tensor<f32>
    })",
                   {input("tensor<3xf32>", {1, 2, 3}), input("tensor<3xf32>", {4, 5, 6})}),
               {}, {32});
}

TEST_F(InterpreterDense, EinsumEllipsisBroadcastAndSum) {
  // "...ij,jk->...ik": lhs [2,1,2] (rows [1,2] and [3,4]) against [[1,0],[0,2]]:
  // [1,4] and [3,8]. Then "ij->" sums everything: 21.
  expectValues(run(R"(
    func.func @main(%a: tensor<2x1x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x1x2xf32> {
      %y = kiln.einsum %a, %b {equation = "...ij,jk->...ik"} : (tensor<2x1x2xf32>, tensor<2x2xf32>) -> tensor<2x1x2xf32>
      return %y : tensor<2x1x2xf32>
    })",
                   {input("tensor<2x1x2xf32>", {1, 2, 3, 4}), input("tensor<2x2xf32>", {1, 0, 0, 2})}),
               {2, 1, 2}, {1, 4, 3, 8});
  expectValues(run(R"(
    func.func @main(%a: tensor<2x3xi32>) -> tensor<i32> {
      %y = kiln.einsum %a {equation = "ij->"} : (tensor<2x3xi32>) -> tensor<i32>
      return %y : tensor<i32>
    })",
                   {input("tensor<2x3xi32>", {1, 2, 3, 4, 5, 6})}),
               {}, {21});
}

//===----------------------------------------------------------------------===//
// softmax, log_softmax
//===----------------------------------------------------------------------===//

TEST_F(InterpreterDense, Softmax) {
  // exp([1,2,3]) / sum = [0.0900306, 0.2447285, 0.6652410].
  expectValues(run(R"(
    func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
      %y = kiln.softmax %x {axis = 0 : i64} : tensor<3xf32>
      return %y : tensor<3xf32>
    })",
                   {input("tensor<3xf32>", {1, 2, 3})}),
               {3}, {0.0900306, 0.2447285, 0.6652410}, 1e-7);
  // Along axis 0 of [[0,1],[0,3]] the columns are independent: column 0 gives [0.5,0.5],
  // column 1 gives [1,e^2]/(1+e^2) = [0.1192029, 0.8807971].
  expectValues(run(R"(
    func.func @main(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
      %y = kiln.softmax %x {axis = 0 : i64} : tensor<2x2xf32>
      return %y : tensor<2x2xf32>
    })",
                   {input("tensor<2x2xf32>", {0, 1, 0, 3})}),
               {2, 2}, {0.5, 0.1192029, 0.5, 0.8807971}, 1e-7);
  // Large values do not overflow (the maximum is subtracted first).
  expectValues(run(R"(
    func.func @main(%x: tensor<1x2xf32>) -> tensor<1x2xf32> {
      %y = kiln.softmax %x {axis = 1 : i64} : tensor<1x2xf32>
      return %y : tensor<1x2xf32>
    })",
                   {input("tensor<1x2xf32>", {1000, 1000})}),
               {1, 2}, {0.5, 0.5});
}

TEST_F(InterpreterDense, LogSoftmax) {
  // log(softmax([1,2,3])) = x - 3 - log(1 + e^-1 + e^-2) = [-2.4076060, -1.4076060, -0.4076060].
  expectValues(run(R"(
    func.func @main(%x: tensor<1x3xf32>) -> tensor<1x3xf32> {
      %y = kiln.log_softmax %x {axis = 1 : i64} : tensor<1x3xf32>
      return %y : tensor<1x3xf32>
    })",
                   {input("tensor<1x3xf32>", {1, 2, 3})}),
               {1, 3}, {-2.4076060, -1.4076060, -0.4076060}, 1e-6);
  // Far out in the tail, where softmax itself underflows in f32: [0, -200] -> [0, -200] (the
  // first term's log-sum-exp is log(1 + e^-200) = 0 in f32).
  expectValues(run(R"(
    func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
      %y = kiln.log_softmax %x {axis = 0 : i64} : tensor<2xf32>
      return %y : tensor<2xf32>
    })",
                   {input("tensor<2xf32>", {0, -200})}),
               {2}, {0, -200});
}

} // namespace
