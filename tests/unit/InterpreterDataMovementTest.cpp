//===- InterpreterDataMovementTest.cpp - data movement evaluators ----------===//
//
// Hand-checked values for reshape, transpose, concat, split, slice, the gathers, expand, tile,
// pad, range, trilu, depth/space rearrangements and resize. Each test parses a tiny module and
// runs @main through the interpreter.
//
//===----------------------------------------------------------------------===//

#include "ir/Interpreter/Interpreter.h"
#include "ir/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace mlir;
using namespace kiln;
using namespace kiln::interp;

namespace {

class InterpreterDataMovement : public ::testing::Test {
protected:
  InterpreterDataMovement() { context.loadDialect<kiln::KilnDialect, func::FuncDialect>(); }

  /// Parses `text` and evaluates its @main on `inputs`; the error text when either fails.
  llvm::Expected<llvm::SmallVector<Tensor>> evaluate(llvm::StringRef text,
                                                     llvm::ArrayRef<Tensor> inputs = {}) {
    module = parseSourceString<ModuleOp>(text, &context);
    if (!module)
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "module does not parse");
    auto main = module->lookupSymbol<func::FuncOp>("main");
    if (!main)
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "no @main");
    return evaluateFunction(main, inputs);
  }

  /// The results of @main; a test failure (and no results) when evaluation fails.
  llvm::SmallVector<Tensor> run(llvm::StringRef text, llvm::ArrayRef<Tensor> inputs = {}) {
    auto results = evaluate(text, inputs);
    if (!results) {
      ADD_FAILURE() << llvm::toString(results.takeError());
      return {};
    }
    return *results;
  }

  /// The error message of evaluating @main ("<no error>" when it succeeds).
  std::string error(llvm::StringRef text, llvm::ArrayRef<Tensor> inputs = {}) {
    auto results = evaluate(text, inputs);
    if (results)
      return "<no error>";
    return llvm::toString(results.takeError());
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

/// The single result's float values; a test failure when there is not exactly one.
std::vector<double> floats(const llvm::SmallVector<Tensor> &results, size_t n = 0) {
  if (results.size() <= n) {
    ADD_FAILURE() << "missing result " << n;
    return {};
  }
  return results[n].f;
}

std::vector<int64_t> ints(const llvm::SmallVector<Tensor> &results, size_t n = 0) {
  if (results.size() <= n) {
    ADD_FAILURE() << "missing result " << n;
    return {};
  }
  return results[n].i;
}

Shape shapeOf(const llvm::SmallVector<Tensor> &results, size_t n = 0) {
  if (results.size() <= n)
    return {};
  return results[n].shape;
}

void expectNear(const std::vector<double> &got, const std::vector<double> &want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k)
    EXPECT_NEAR(got[k], want[k], tol) << "element " << k;
}

Tensor i64Vector(llvm::ArrayRef<int64_t> values, MLIRContext &context) {
  Tensor t = Tensor::zeros(
      RankedTensorType::get({(int64_t)values.size()}, IntegerType::get(&context, 64)));
  t.i.assign(values.begin(), values.end());
  return t;
}

//===----------------------------------------------------------------------===//
// Reshape, transpose, concat, split
//===----------------------------------------------------------------------===//

TEST_F(InterpreterDataMovement, ReshapeKeepsRowMajorOrder) {
  auto r = run(R"mlir(
    func.func @main() -> tensor<3x2xi32> {
      %x = kiln.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
      %0 = kiln.reshape %x : tensor<2x3xi32> to tensor<3x2xi32>
      return %0 : tensor<3x2xi32>
    })mlir");
  EXPECT_EQ(shapeOf(r), (Shape{3, 2}));
  EXPECT_EQ(ints(r), (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
}

TEST_F(InterpreterDataMovement, Transpose2x3) {
  auto r = run(R"mlir(
    func.func @main() -> tensor<3x2xf32> {
      %x = kiln.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
      %0 = kiln.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
      return %0 : tensor<3x2xf32>
    })mlir");
  EXPECT_EQ(floats(r), (std::vector<double>{1, 4, 2, 5, 3, 6}));
}

TEST_F(InterpreterDataMovement, TransposeRank3) {
  // x[a][b][c] = 4a + 2b + c; out[c][a][b] = x[a][b][c].
  auto r = run(R"mlir(
    func.func @main() -> tensor<2x2x2xi64> {
      %x = kiln.constant dense<[[[0, 1], [2, 3]], [[4, 5], [6, 7]]]> : tensor<2x2x2xi64>
      %0 = kiln.transpose %x {perm = array<i64: 2, 0, 1>} : (tensor<2x2x2xi64>) -> tensor<2x2x2xi64>
      return %0 : tensor<2x2x2xi64>
    })mlir");
  EXPECT_EQ(ints(r), (std::vector<int64_t>{0, 2, 4, 6, 1, 3, 5, 7}));
}

TEST_F(InterpreterDataMovement, ConcatAlongAxis1) {
  auto r = run(R"mlir(
    func.func @main() -> tensor<2x3xf32> {
      %a = kiln.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
      %b = kiln.constant dense<[[5.0], [6.0]]> : tensor<2x1xf32>
      %0 = kiln.concat %a, %b {axis = 1 : i64} : (tensor<2x2xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
      return %0 : tensor<2x3xf32>
    })mlir");
  EXPECT_EQ(floats(r), (std::vector<double>{1, 2, 5, 3, 4, 6}));
}

TEST_F(InterpreterDataMovement, SplitUnevenAlongAxis1) {
  auto r = run(R"mlir(
    func.func @main() -> (tensor<2x1xi1>, tensor<2x2xi1>) {
      %x = kiln.constant dense<[[true, false, true], [false, true, true]]> : tensor<2x3xi1>
      %0:2 = kiln.split %x {axis = 1 : i64} : (tensor<2x3xi1>) -> (tensor<2x1xi1>, tensor<2x2xi1>)
      return %0#0, %0#1 : tensor<2x1xi1>, tensor<2x2xi1>
    })mlir");
  EXPECT_EQ(ints(r, 0), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(ints(r, 1), (std::vector<int64_t>{0, 1, 1, 1}));
}

//===----------------------------------------------------------------------===//
// Slice
//===----------------------------------------------------------------------===//

TEST_F(InterpreterDataMovement, SliceNegativeStep) {
  // [0..9][8:2:-3] -> 8, 5 (2 is the excluded end).
  auto r = run(R"mlir(
    func.func @main() -> tensor<2xi64> {
      %x = kiln.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]> : tensor<10xi64>
      %s = kiln.constant dense<[8]> : tensor<1xi64>
      %e = kiln.constant dense<[2]> : tensor<1xi64>
      %a = kiln.constant dense<[0]> : tensor<1xi64>
      %st = kiln.constant dense<[-3]> : tensor<1xi64>
      %0 = kiln.slice %x, %s, %e, %a, %st
          : (tensor<10xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
      return %0 : tensor<2xi64>
    })mlir");
  EXPECT_EQ(ints(r), (std::vector<int64_t>{8, 5}));
}

TEST_F(InterpreterDataMovement, SliceI32NegativeAxisClampedEnd) {
  // Columns 1 and 3 of a 3x4 (end 100 clamps to 4; axis -1 is the last).
  auto r = run(R"mlir(
    func.func @main() -> tensor<3x2xf32> {
      %x = kiln.constant dense<[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0]]> : tensor<3x4xf32>
      %s = kiln.constant dense<[1]> : tensor<1xi32>
      %e = kiln.constant dense<[100]> : tensor<1xi32>
      %a = kiln.constant dense<[-1]> : tensor<1xi32>
      %st = kiln.constant dense<[2]> : tensor<1xi32>
      %0 = kiln.slice %x, %s, %e, %a, %st
          : (tensor<3x4xf32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3x2xf32>
      return %0 : tensor<3x2xf32>
    })mlir");
  EXPECT_EQ(floats(r), (std::vector<double>{1, 3, 5, 7, 9, 11}));
}

TEST_F(InterpreterDataMovement, SliceComputedParametersMustMatchResultType) {
  // Parameters arrive as function inputs: [0:3] gives 3 elements, the type declares 2.
  const char *text = R"mlir(
    func.func @main(%s: tensor<1xi64>, %e: tensor<1xi64>, %a: tensor<1xi64>, %st: tensor<1xi64>)
        -> tensor<2xi64> {
      %x = kiln.constant dense<[0, 1, 2, 3, 4]> : tensor<5xi64>
      %0 = kiln.slice %x, %s, %e, %a, %st
          : (tensor<5xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
      return %0 : tensor<2xi64>
    })mlir";
  llvm::SmallVector<Tensor> ok = {i64Vector({1}, context), i64Vector({3}, context),
                                  i64Vector({0}, context), i64Vector({1}, context)};
  EXPECT_EQ(ints(run(text, ok)), (std::vector<int64_t>{1, 2}));
  llvm::SmallVector<Tensor> bad = {i64Vector({0}, context), i64Vector({3}, context),
                                   i64Vector({0}, context), i64Vector({1}, context)};
  EXPECT_NE(error(text, bad).find("operand values give shape 3, the result type declares 2"),
            std::string::npos)
      << error(text, bad);
}

//===----------------------------------------------------------------------===//
// Gathers
//===----------------------------------------------------------------------===//

TEST_F(InterpreterDataMovement, GatherNegativeIndexWraps) {
  auto r = run(R"mlir(
    func.func @main() -> (tensor<2x2xf32>, tensor<3xf32>) {
      %x = kiln.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
      %i = kiln.constant dense<[-1, 0]> : tensor<2xi64>
      %0 = kiln.gather %x, %i {axis = 0 : i64} : (tensor<3x2xf32>, tensor<2xi64>) -> tensor<2x2xf32>
      %j = kiln.constant dense<1> : tensor<i32>
      %1 = kiln.gather %x, %j {axis = 1 : i64} : (tensor<3x2xf32>, tensor<i32>) -> tensor<3xf32>
      return %0, %1 : tensor<2x2xf32>, tensor<3xf32>
    })mlir");
  EXPECT_EQ(floats(r, 0), (std::vector<double>{5, 6, 1, 2}));
  EXPECT_EQ(floats(r, 1), (std::vector<double>{2, 4, 6}));
}

TEST_F(InterpreterDataMovement, GatherIndicesKeepTheirShapeInTheMiddle) {
  // axis 1 of 2x3 with 2x2 indices -> 2x2x2: out[a][i][j] = x[a][idx[i][j]].
  auto r = run(R"mlir(
    func.func @main() -> tensor<2x2x2xi32> {
      %x = kiln.constant dense<[[10, 11, 12], [20, 21, 22]]> : tensor<2x3xi32>
      %i = kiln.constant dense<[[2, 0], [1, -2]]> : tensor<2x2xi32>
      %0 = kiln.gather %x, %i {axis = 1 : i64} : (tensor<2x3xi32>, tensor<2x2xi32>) -> tensor<2x2x2xi32>
      return %0 : tensor<2x2x2xi32>
    })mlir");
  EXPECT_EQ(ints(r), (std::vector<int64_t>{12, 10, 11, 11, 22, 20, 21, 21}));
}

TEST_F(InterpreterDataMovement, GatherOutOfRangeIndexIsAnError) {
  std::string message = error(R"mlir(
    func.func @main() -> tensor<1x2xf32> {
      %x = kiln.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
      %i = kiln.constant dense<[3]> : tensor<1xi64>
      %0 = kiln.gather %x, %i {axis = 0 : i64} : (tensor<3x2xf32>, tensor<1xi64>) -> tensor<1x2xf32>
      return %0 : tensor<1x2xf32>
    })mlir");
  EXPECT_NE(message.find("kiln.gather"), std::string::npos) << message;
  EXPECT_NE(message.find("index 3 is out of range for axis 0 of size 3"), std::string::npos)
      << message;
}

TEST_F(InterpreterDataMovement, GatherElements) {
  // The ONNX GatherElements examples, plus a negative index.
  auto r = run(R"mlir(
    func.func @main() -> (tensor<2x2xf32>, tensor<2x3xi64>) {
      %x = kiln.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
      %i = kiln.constant dense<[[0, 0], [1, 0]]> : tensor<2x2xi64>
      %0 = kiln.gather_elements %x, %i {axis = 1 : i64} : (tensor<2x2xf32>, tensor<2x2xi64>) -> tensor<2x2xf32>
      %y = kiln.constant dense<[[1, 2, 3], [4, 5, 6], [7, 8, 9]]> : tensor<3x3xi64>
      %j = kiln.constant dense<[[1, 2, 0], [2, 0, -3]]> : tensor<2x3xi32>
      %1 = kiln.gather_elements %y, %j {axis = 0 : i64} : (tensor<3x3xi64>, tensor<2x3xi32>) -> tensor<2x3xi64>
      return %0, %1 : tensor<2x2xf32>, tensor<2x3xi64>
    })mlir");
  EXPECT_EQ(floats(r, 0), (std::vector<double>{1, 1, 4, 3}));
  EXPECT_EQ(ints(r, 1), (std::vector<int64_t>{4, 8, 3, 7, 2, 3}));
}

TEST_F(InterpreterDataMovement, GatherElementsIndicesLargerOffTheAxisIsAnError) {
  // Type inference accepts this (ranks match); reading row 2 of a 2-row input must not happen.
  std::string message = error(R"mlir(
    func.func @main() -> tensor<3x1xf32> {
      %x = kiln.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
      %i = kiln.constant dense<[[0], [1], [0]]> : tensor<3x1xi64>
      %0 = kiln.gather_elements %x, %i {axis = 1 : i64} : (tensor<2x2xf32>, tensor<3x1xi64>) -> tensor<3x1xf32>
      return %0 : tensor<3x1xf32>
    })mlir");
  EXPECT_NE(message.find("indices shape 3x1 exceeds the input shape 2x2"), std::string::npos)
      << message;
}

TEST_F(InterpreterDataMovement, GatherND) {
  auto r = run(R"mlir(
    func.func @main() -> (tensor<2xi32>, tensor<2x2xi32>, tensor<1xi32>) {
      %x = kiln.constant dense<[[0, 1], [2, 3]]> : tensor<2x2xi32>
      %i = kiln.constant dense<[[0, 0], [1, 1]]> : tensor<2x2xi64>
      %0 = kiln.gather_nd %x, %i : (tensor<2x2xi32>, tensor<2x2xi64>) -> tensor<2xi32>
      // batch_dims 1: batch b takes row idx[b] of its own 2x2 block.
      %y = kiln.constant dense<[[[0, 1], [2, 3]], [[4, 5], [6, 7]]]> : tensor<2x2x2xi32>
      %j = kiln.constant dense<[[1], [0]]> : tensor<2x1xi64>
      %1 = kiln.gather_nd %y, %j {batch_dims = 1 : i64} : (tensor<2x2x2xi32>, tensor<2x1xi64>) -> tensor<2x2xi32>
      %k = kiln.constant dense<[[-1, 0]]> : tensor<1x2xi64>
      %2 = kiln.gather_nd %x, %k : (tensor<2x2xi32>, tensor<1x2xi64>) -> tensor<1xi32>
      return %0, %1, %2 : tensor<2xi32>, tensor<2x2xi32>, tensor<1xi32>
    })mlir");
  EXPECT_EQ(ints(r, 0), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(ints(r, 1), (std::vector<int64_t>{2, 3, 4, 5}));
  EXPECT_EQ(ints(r, 2), (std::vector<int64_t>{2}));
}

TEST_F(InterpreterDataMovement, GatherNDOutOfRangeIsAnError) {
  std::string message = error(R"mlir(
    func.func @main() -> tensor<1xi32> {
      %x = kiln.constant dense<[[0, 1], [2, 3]]> : tensor<2x2xi32>
      %k = kiln.constant dense<[[0, 2]]> : tensor<1x2xi64>
      %0 = kiln.gather_nd %x, %k : (tensor<2x2xi32>, tensor<1x2xi64>) -> tensor<1xi32>
      return %0 : tensor<1xi32>
    })mlir");
  EXPECT_NE(message.find("index 2 is out of range for axis 1 of size 2"), std::string::npos)
      << message;
}

//===----------------------------------------------------------------------===//
// Expand, tile, pad
//===----------------------------------------------------------------------===//

TEST_F(InterpreterDataMovement, ExpandBroadcasts) {
  // 3x1 -> 2x3x2: out[b][i][j] = x[i].
  auto r = run(R"mlir(
    func.func @main() -> tensor<2x3x2xf32> {
      %x = kiln.constant dense<[[1.0], [2.0], [3.0]]> : tensor<3x1xf32>
      %0 = kiln.expand %x : tensor<3x1xf32> to tensor<2x3x2xf32>
      return %0 : tensor<2x3x2xf32>
    })mlir");
  EXPECT_EQ(floats(r), (std::vector<double>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
}

TEST_F(InterpreterDataMovement, TileRepeatsEveryAxis) {
  auto r = run(R"mlir(
    func.func @main() -> tensor<4x4xui8> {
      %x = kiln.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xui8>
      %0 = kiln.tile %x : tensor<2x2xui8> to tensor<4x4xui8>
      return %0 : tensor<4x4xui8>
    })mlir");
  EXPECT_EQ(ints(r), (std::vector<int64_t>{1, 2, 1, 2, 3, 4, 3, 4, 1, 2, 1, 2, 3, 4, 3, 4}));
}

TEST_F(InterpreterDataMovement, PadConstant2D) {
  // pads: begins (0, 1), ends (1, 0); fill 9.
  auto r = run(R"mlir(
    func.func @main() -> tensor<3x3xf32> {
      %x = kiln.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
      %p = kiln.constant dense<[0, 1, 1, 0]> : tensor<4xi64>
      %v = kiln.constant dense<9.0> : tensor<f32>
      %0 = kiln.pad %x, %p, %v : (tensor<2x2xf32>, tensor<4xi64>, tensor<f32>) -> tensor<3x3xf32>
      return %0 : tensor<3x3xf32>
    })mlir");
  EXPECT_EQ(floats(r), (std::vector<double>{9, 1, 2, 9, 3, 4, 9, 9, 9}));
}

TEST_F(InterpreterDataMovement, PadReflectEdgeWrap) {
  // [1, 2, 3] with 2 before and 1 after.
  auto r = run(R"mlir(
    func.func @main() -> (tensor<6xi32>, tensor<6xi32>, tensor<6xi32>) {
      %x = kiln.constant dense<[1, 2, 3]> : tensor<3xi32>
      %p = kiln.constant dense<[2, 1]> : tensor<2xi64>
      %v = kiln.constant dense<0> : tensor<i32>
      %0 = kiln.pad %x, %p, %v {mode = "reflect"} : (tensor<3xi32>, tensor<2xi64>, tensor<i32>) -> tensor<6xi32>
      %1 = kiln.pad %x, %p, %v {mode = "edge"} : (tensor<3xi32>, tensor<2xi64>, tensor<i32>) -> tensor<6xi32>
      %2 = kiln.pad %x, %p, %v {mode = "wrap"} : (tensor<3xi32>, tensor<2xi64>, tensor<i32>) -> tensor<6xi32>
      return %0, %1, %2 : tensor<6xi32>, tensor<6xi32>, tensor<6xi32>
    })mlir");
  EXPECT_EQ(ints(r, 0), (std::vector<int64_t>{3, 2, 1, 2, 3, 2}));
  EXPECT_EQ(ints(r, 1), (std::vector<int64_t>{1, 1, 1, 2, 3, 3}));
  EXPECT_EQ(ints(r, 2), (std::vector<int64_t>{2, 3, 1, 2, 3, 1}));
}

TEST_F(InterpreterDataMovement, PadWiderThanTheInput) {
  // 4 before a 3-element axis: reflect keeps mirroring (numpy), wrap keeps cycling.
  auto r = run(R"mlir(
    func.func @main() -> (tensor<7xf32>, tensor<7xf32>) {
      %x = kiln.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
      %p = kiln.constant dense<[4, 0]> : tensor<2xi64>
      %v = kiln.constant dense<0.0> : tensor<f32>
      %0 = kiln.pad %x, %p, %v {mode = "reflect"} : (tensor<3xf32>, tensor<2xi64>, tensor<f32>) -> tensor<7xf32>
      %1 = kiln.pad %x, %p, %v {mode = "wrap"} : (tensor<3xf32>, tensor<2xi64>, tensor<f32>) -> tensor<7xf32>
      return %0, %1 : tensor<7xf32>, tensor<7xf32>
    })mlir");
  EXPECT_EQ(floats(r, 0), (std::vector<double>{1, 2, 3, 2, 1, 2, 3}));
  EXPECT_EQ(floats(r, 1), (std::vector<double>{3, 1, 2, 3, 1, 2, 3}));
}

TEST_F(InterpreterDataMovement, PadNegativeCrops) {
  // [1..5] cropped by 1 at the front; edge then extends what is left by 2 at the back.
  auto r = run(R"mlir(
    func.func @main() -> (tensor<6xf32>, tensor<2xf32>) {
      %x = kiln.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0]> : tensor<5xf32>
      %p = kiln.constant dense<[-1, 2]> : tensor<2xi64>
      %v = kiln.constant dense<0.0> : tensor<f32>
      %0 = kiln.pad %x, %p, %v {mode = "edge"} : (tensor<5xf32>, tensor<2xi64>, tensor<f32>) -> tensor<6xf32>
      %q = kiln.constant dense<[-1, -2]> : tensor<2xi64>
      %1 = kiln.pad %x, %q, %v : (tensor<5xf32>, tensor<2xi64>, tensor<f32>) -> tensor<2xf32>
      return %0, %1 : tensor<6xf32>, tensor<2xf32>
    })mlir");
  EXPECT_EQ(floats(r, 0), (std::vector<double>{2, 3, 4, 5, 5, 5}));
  EXPECT_EQ(floats(r, 1), (std::vector<double>{2, 3}));
}

//===----------------------------------------------------------------------===//
// Range, trilu
//===----------------------------------------------------------------------===//

TEST_F(InterpreterDataMovement, RangeFloatAndInt) {
  auto r = run(R"mlir(
    func.func @main() -> (tensor<3xf32>, tensor<2xi64>) {
      %s = kiln.constant dense<1.0> : tensor<f32>
      %l = kiln.constant dense<2.5> : tensor<f32>
      %d = kiln.constant dense<0.5> : tensor<f32>
      %0 = kiln.range %s, %l, %d : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<3xf32>
      %is = kiln.constant dense<10> : tensor<i64>
      %il = kiln.constant dense<4> : tensor<i64>
      %id = kiln.constant dense<-3> : tensor<i64>
      %1 = kiln.range %is, %il, %id : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<2xi64>
      return %0, %1 : tensor<3xf32>, tensor<2xi64>
    })mlir");
  EXPECT_EQ(floats(r, 0), (std::vector<double>{1, 1.5, 2}));
  EXPECT_EQ(ints(r, 1), (std::vector<int64_t>{10, 7}));
}

TEST_F(InterpreterDataMovement, TriluUpperAndLower) {
  auto r = run(R"mlir(
    func.func @main() -> (tensor<3x3xf32>, tensor<3x3xf32>) {
      %x = kiln.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]> : tensor<3x3xf32>
      %k1 = kiln.constant dense<1> : tensor<i64>
      %0 = kiln.trilu %x, %k1 : tensor<3x3xf32>, tensor<i64>
      %km1 = kiln.constant dense<-1> : tensor<i64>
      %1 = kiln.trilu %x, %km1 {upper = false} : tensor<3x3xf32>, tensor<i64>
      return %0, %1 : tensor<3x3xf32>, tensor<3x3xf32>
    })mlir");
  EXPECT_EQ(floats(r, 0), (std::vector<double>{0, 2, 3, 0, 0, 6, 0, 0, 0}));
  EXPECT_EQ(floats(r, 1), (std::vector<double>{0, 0, 0, 4, 0, 0, 7, 8, 0}));
}

//===----------------------------------------------------------------------===//
// Depth/space rearrangements
//===----------------------------------------------------------------------===//

TEST_F(InterpreterDataMovement, DepthToSpaceDCRAndCRD) {
  // 1x4x1x1 with one output channel: both orders put channel i*2 + j at (i, j).
  // 1x8x1x1 with two output channels tells them apart:
  //   DCR out[c][i][j] = in[(i*2 + j)*2 + c];  CRD out[c][i][j] = in[c*4 + i*2 + j].
  auto r = run(R"mlir(
    func.func @main() -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) {
      %x = kiln.constant dense<[[[[1.0]], [[2.0]], [[3.0]], [[4.0]]]]> : tensor<1x4x1x1xf32>
      %0 = kiln.depth_to_space %x {blocksize = 2 : i64} : (tensor<1x4x1x1xf32>) -> tensor<1x1x2x2xf32>
      %1 = kiln.depth_to_space %x {blocksize = 2 : i64, mode = "CRD"} : (tensor<1x4x1x1xf32>) -> tensor<1x1x2x2xf32>
      %y = kiln.constant dense<[[[[0.0]], [[1.0]], [[2.0]], [[3.0]], [[4.0]], [[5.0]], [[6.0]], [[7.0]]]]> : tensor<1x8x1x1xf32>
      %2 = kiln.depth_to_space %y {blocksize = 2 : i64} : (tensor<1x8x1x1xf32>) -> tensor<1x2x2x2xf32>
      %3 = kiln.depth_to_space %y {blocksize = 2 : i64, mode = "CRD"} : (tensor<1x8x1x1xf32>) -> tensor<1x2x2x2xf32>
      return %0, %1, %2, %3 : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
    })mlir");
  EXPECT_EQ(floats(r, 0), (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(floats(r, 1), (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(floats(r, 2), (std::vector<double>{0, 2, 4, 6, 1, 3, 5, 7}));
  EXPECT_EQ(floats(r, 3), (std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST_F(InterpreterDataMovement, DepthToSpaceSpreadsOverSpatialBlocks) {
  // 1x4x1x2 DCR: out[0][0][i][w*2 + j] = in[0][i*2 + j][0][w].
  auto r = run(R"mlir(
    func.func @main() -> tensor<1x1x2x4xi32> {
      %x = kiln.constant dense<[[[[1, 2]], [[3, 4]], [[5, 6]], [[7, 8]]]]> : tensor<1x4x1x2xi32>
      %0 = kiln.depth_to_space %x {blocksize = 2 : i64} : (tensor<1x4x1x2xi32>) -> tensor<1x1x2x4xi32>
      return %0 : tensor<1x1x2x4xi32>
    })mlir");
  EXPECT_EQ(ints(r), (std::vector<int64_t>{1, 3, 2, 4, 5, 7, 6, 8}));
}

TEST_F(InterpreterDataMovement, SpaceToDepth) {
  // out[(i*2 + j)*C + c][h][w] = in[c][h*2 + i][w*2 + j].
  auto r = run(R"mlir(
    func.func @main() -> (tensor<1x4x1x1xf32>, tensor<1x8x1x1xf32>) {
      %x = kiln.constant dense<[[[[1.0, 2.0], [3.0, 4.0]]]]> : tensor<1x1x2x2xf32>
      %0 = kiln.space_to_depth %x {blocksize = 2 : i64} : (tensor<1x1x2x2xf32>) -> tensor<1x4x1x1xf32>
      %y = kiln.constant dense<[[[[0.0, 1.0], [2.0, 3.0]], [[4.0, 5.0], [6.0, 7.0]]]]> : tensor<1x2x2x2xf32>
      %1 = kiln.space_to_depth %y {blocksize = 2 : i64} : (tensor<1x2x2x2xf32>) -> tensor<1x8x1x1xf32>
      return %0, %1 : tensor<1x4x1x1xf32>, tensor<1x8x1x1xf32>
    })mlir");
  EXPECT_EQ(floats(r, 0), (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(floats(r, 1), (std::vector<double>{0, 4, 1, 5, 2, 6, 3, 7}));
}

//===----------------------------------------------------------------------===//
// Resize
//===----------------------------------------------------------------------===//

TEST_F(InterpreterDataMovement, ResizeNearestAsymmetricUpsample) {
  // x_ori = y / 2 = 0, 0.5, 1, 1.5; round_prefer_floor sends 0.5 to 0 and 1.5 to 1.
  auto r = run(R"mlir(
    func.func @main() -> tensor<4xf32> {
      %x = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
      %0 = kiln.resize %x {coordinate_transformation_mode = "asymmetric"} : (tensor<2xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    })mlir");
  EXPECT_EQ(floats(r), (std::vector<double>{1, 1, 2, 2}));
}

TEST_F(InterpreterDataMovement, ResizeLinearHalfPixel) {
  // x_ori = (y + 0.5) / 2 - 0.5 = -0.25, 0.25, 0.75, 1.25 (the ends clamp to the edge).
  auto r = run(R"mlir(
    func.func @main() -> tensor<4xf32> {
      %x = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
      %0 = kiln.resize %x {mode = "linear"} : (tensor<2xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    })mlir");
  EXPECT_EQ(floats(r), (std::vector<double>{1, 1.25, 1.75, 2}));
}

TEST_F(InterpreterDataMovement, ResizeLinearAlignCorners) {
  // x_ori = y * (2 - 1) / (3 - 1) = 0, 0.5, 1.
  auto r = run(R"mlir(
    func.func @main() -> tensor<3xf32> {
      %x = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
      %0 = kiln.resize %x {mode = "linear", coordinate_transformation_mode = "align_corners"} : (tensor<2xf32>) -> tensor<3xf32>
      return %0 : tensor<3xf32>
    })mlir");
  EXPECT_EQ(floats(r), (std::vector<double>{1, 1.5, 2}));
}

TEST_F(InterpreterDataMovement, ResizeNearestModes) {
  // 4 -> 3 asymmetric: x_ori = 0, 4/3, 8/3.
  auto r = run(R"mlir(
    func.func @main() -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<4xf32>) {
      %x = kiln.constant dense<[10.0, 20.0, 30.0, 40.0]> : tensor<4xf32>
      %0 = kiln.resize %x {coordinate_transformation_mode = "asymmetric"} : (tensor<4xf32>) -> tensor<3xf32>
      %1 = kiln.resize %x {coordinate_transformation_mode = "asymmetric", nearest_mode = "floor"} : (tensor<4xf32>) -> tensor<3xf32>
      %2 = kiln.resize %x {coordinate_transformation_mode = "asymmetric", nearest_mode = "ceil"} : (tensor<4xf32>) -> tensor<3xf32>
      // 2 -> 4: x_ori 0.5 goes up with round_prefer_ceil; 1.5 rounds to 2, which clamps to 1.
      %y = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
      %3 = kiln.resize %y {coordinate_transformation_mode = "asymmetric", nearest_mode = "round_prefer_ceil"} : (tensor<2xf32>) -> tensor<4xf32>
      return %0, %1, %2, %3 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<4xf32>
    })mlir");
  EXPECT_EQ(floats(r, 0), (std::vector<double>{10, 20, 40}));
  EXPECT_EQ(floats(r, 1), (std::vector<double>{10, 20, 30}));
  EXPECT_EQ(floats(r, 2), (std::vector<double>{10, 30, 40}));
  EXPECT_EQ(floats(r, 3), (std::vector<double>{1, 2, 2, 2}));
}

TEST_F(InterpreterDataMovement, ResizeHalfPixelVariants) {
  auto r = run(R"mlir(
    func.func @main() -> (tensor<2xf32>, tensor<2xf32>, tensor<1xf32>, tensor<1xf32>) {
      %x = kiln.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
      // 4 -> 2 nearest: half_pixel x_ori = 0.5, 2.5 (ties to floor); tf_half_pixel_for_nn 1, 3.
      %0 = kiln.resize %x : (tensor<4xf32>) -> tensor<2xf32>
      %1 = kiln.resize %x {coordinate_transformation_mode = "tf_half_pixel_for_nn"} : (tensor<4xf32>) -> tensor<2xf32>
      // 4 -> 1 linear: half_pixel x_ori = 0.5 / 0.25 - 0.5 = 1.5; pytorch_half_pixel -0.5 (edge).
      %2 = kiln.resize %x {mode = "linear"} : (tensor<4xf32>) -> tensor<1xf32>
      %3 = kiln.resize %x {mode = "linear", coordinate_transformation_mode = "pytorch_half_pixel"} : (tensor<4xf32>) -> tensor<1xf32>
      return %0, %1, %2, %3 : tensor<2xf32>, tensor<2xf32>, tensor<1xf32>, tensor<1xf32>
    })mlir");
  EXPECT_EQ(floats(r, 0), (std::vector<double>{1, 3}));
  EXPECT_EQ(floats(r, 1), (std::vector<double>{2, 4}));
  EXPECT_EQ(floats(r, 2), (std::vector<double>{2.5}));
  EXPECT_EQ(floats(r, 3), (std::vector<double>{1}));
}

TEST_F(InterpreterDataMovement, ResizeScalesOperandAndHalfPixelSymmetric) {
  // scales 0.6 on 4 elements: output width 2.4, the result keeps 2. half_pixel uses the scale
  // as given: x_ori = 0.5/0.6 - 0.5 = 1/3 and 1.5/0.6 - 0.5 = 2. half_pixel_symmetric shifts by
  // center * (1 - 2/2.4) = 2 * (1/6) = 1/3: x_ori = 2/3 and 7/3.
  auto r = run(R"mlir(
    func.func @main() -> (tensor<2xf32>, tensor<2xf32>) {
      %x = kiln.constant dense<[0.0, 1.0, 2.0, 3.0]> : tensor<4xf32>
      %s = kiln.constant dense<[0.6]> : tensor<1xf32>
      %0 = kiln.resize %x scales %s {mode = "linear"} : (tensor<4xf32>, tensor<1xf32>) -> tensor<2xf32>
      %1 = kiln.resize %x scales %s {mode = "linear", coordinate_transformation_mode = "half_pixel_symmetric"} : (tensor<4xf32>, tensor<1xf32>) -> tensor<2xf32>
      return %0, %1 : tensor<2xf32>, tensor<2xf32>
    })mlir");
  expectNear(floats(r, 0), {1.0 / 3, 2.0}, 1e-6);
  expectNear(floats(r, 1), {2.0 / 3, 7.0 / 3}, 1e-6);
}

TEST_F(InterpreterDataMovement, ResizeTfCropAndResizeExtrapolates) {
  // roi [0, 1.5] on 4 elements -> 3: x_ori = y * 1.5 * 3 / 2 = 0, 2.25, 4.5 (outside: -1).
  auto r = run(R"mlir(
    func.func @main() -> tensor<3xf32> {
      %x = kiln.constant dense<[0.0, 10.0, 20.0, 30.0]> : tensor<4xf32>
      %roi = kiln.constant dense<[0.0, 1.5]> : tensor<2xf32>
      %0 = kiln.resize %x roi %roi {mode = "linear", coordinate_transformation_mode = "tf_crop_and_resize", extrapolation_value = -1.0 : f32}
          : (tensor<4xf32>, tensor<2xf32>) -> tensor<3xf32>
      return %0 : tensor<3xf32>
    })mlir");
  EXPECT_EQ(floats(r), (std::vector<double>{0, 22.5, -1}));
}

TEST_F(InterpreterDataMovement, ResizeCubic) {
  // 4 -> 8 asymmetric: x_ori = y / 2. At ratio 0.5 with A = -0.75 the kernel is
  // (-0.09375, 0.59375, 0.59375, -0.09375) over floor(x_ori) - 1 .. floor(x_ori) + 2.
  //   y = 1 (x_ori 0.5): neighbours -1, 0, 1, 2 -> values 0, 0, 1, 2 -> 0.59375 - 0.1875 = 0.40625
  //   y = 3 (x_ori 1.5): values 0, 1, 2, 4 -> 0.59375 + 1.1875 - 0.375 = 1.40625
  // exclude_outside drops neighbour -1 and renormalizes by 1.09375: 0.40625 / 1.09375 = 13/35.
  auto r = run(R"mlir(
    func.func @main() -> (tensor<8xf64>, tensor<8xf64>) {
      %x = kiln.constant dense<[0.0, 1.0, 2.0, 4.0]> : tensor<4xf64>
      %0 = kiln.resize %x {mode = "cubic", coordinate_transformation_mode = "asymmetric"} : (tensor<4xf64>) -> tensor<8xf64>
      %1 = kiln.resize %x {mode = "cubic", coordinate_transformation_mode = "asymmetric", exclude_outside = true} : (tensor<4xf64>) -> tensor<8xf64>
      return %0, %1 : tensor<8xf64>, tensor<8xf64>
    })mlir");
  std::vector<double> plain = floats(r, 0), excluded = floats(r, 1);
  ASSERT_EQ(plain.size(), 8u);
  ASSERT_EQ(excluded.size(), 8u);
  EXPECT_DOUBLE_EQ(plain[0], 0);
  EXPECT_DOUBLE_EQ(plain[1], 0.40625);
  EXPECT_DOUBLE_EQ(plain[2], 1);
  EXPECT_DOUBLE_EQ(plain[3], 1.40625);
  EXPECT_DOUBLE_EQ(excluded[1], 13.0 / 35);
  EXPECT_DOUBLE_EQ(excluded[3], 1.40625);
}

TEST_F(InterpreterDataMovement, ResizeCubicCoeffA) {
  // A = -0.5 at ratio 0.5: kernel (-0.0625, 0.5625, 0.5625, -0.0625); values 0, 1, 2, 4 at
  // x_ori 1.5 -> 0.5625 + 1.125 - 0.25 = 1.4375.
  auto r = run(R"mlir(
    func.func @main() -> tensor<8xf64> {
      %x = kiln.constant dense<[0.0, 1.0, 2.0, 4.0]> : tensor<4xf64>
      %0 = kiln.resize %x {mode = "cubic", coordinate_transformation_mode = "asymmetric", cubic_coeff_a = -0.5 : f32} : (tensor<4xf64>) -> tensor<8xf64>
      return %0 : tensor<8xf64>
    })mlir");
  std::vector<double> v = floats(r);
  ASSERT_EQ(v.size(), 8u);
  EXPECT_DOUBLE_EQ(v[3], 1.4375);
}

TEST_F(InterpreterDataMovement, ResizeLinear2DIsSeparable) {
  // Each axis weighs as in the 1-d half_pixel case, t = 0, 0.25, 0.75, 1:
  // out[i][j] = 1 + 2 t_i + t_j.
  auto r = run(R"mlir(
    func.func @main() -> tensor<4x4xf32> {
      %x = kiln.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
      %0 = kiln.resize %x {mode = "linear"} : (tensor<2x2xf32>) -> tensor<4x4xf32>
      return %0 : tensor<4x4xf32>
    })mlir");
  EXPECT_EQ(floats(r), (std::vector<double>{1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75,
                                            3.25, 3.5, 3, 3.25, 3.75, 4}));
}

TEST_F(InterpreterDataMovement, ResizeNearestNCHW) {
  // Batch and channel axes keep their size; the spatial axes double.
  auto r = run(R"mlir(
    func.func @main() -> tensor<1x2x2x4xf32> {
      %x = kiln.constant dense<[[[[1.0, 2.0]], [[3.0, 4.0]]]]> : tensor<1x2x1x2xf32>
      %0 = kiln.resize %x {coordinate_transformation_mode = "asymmetric"} : (tensor<1x2x1x2xf32>) -> tensor<1x2x2x4xf32>
      return %0 : tensor<1x2x2x4xf32>
    })mlir");
  EXPECT_EQ(floats(r), (std::vector<double>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
}

TEST_F(InterpreterDataMovement, ResizeRoundsToTheElementType) {
  // align_corners 2 -> 4 on [0, 1]: 1/3 and 2/3 round to f16 (steps 2^-12 and 2^-11):
  // 1365 * 2^-12 and 1365 * 2^-11.
  auto r = run(R"mlir(
    func.func @main() -> tensor<4xf16> {
      %x = kiln.constant dense<[0.0, 1.0]> : tensor<2xf16>
      %0 = kiln.resize %x {mode = "linear", coordinate_transformation_mode = "align_corners"} : (tensor<2xf16>) -> tensor<4xf16>
      return %0 : tensor<4xf16>
    })mlir");
  EXPECT_EQ(floats(r), (std::vector<double>{0, 1365.0 / 4096, 1365.0 / 2048, 1}));
}

} // namespace
