//===- InterpreterReductionTest.cpp - reductions, arg, cumsum, topk --------===//
//
// Each test runs a tiny kiln function through the interpreter and compares with values worked
// out by hand.
//
//===----------------------------------------------------------------------===//

#include "ir/Interpreter/Interpreter.h"
#include "ir/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>

using namespace kiln::interp;

namespace {

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();
using V = std::vector<double>;
using Axes = std::optional<std::vector<int64_t>>;
Axes axesOf(std::initializer_list<int64_t> axes) { return std::vector<int64_t>(axes); }

/// Parses a module holding `func.func @main` and evaluates it; inputs are plain numbers in the
/// argument types (each must be exactly representable there).
class ReductionEval : public ::testing::Test {
protected:
  ReductionEval() { context.loadDialect<kiln::KilnDialect, mlir::func::FuncDialect>(); }

  llvm::Expected<llvm::SmallVector<Tensor>> evaluate(const std::string &text, std::vector<V> inputs,
                                                     std::vector<Tensor> tensors = {}) {
    module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
    if (!module)
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "does not parse:\n" + text);
    auto func = module->lookupSymbol<mlir::func::FuncOp>("main");
    for (auto [arg, values] : llvm::zip(func.getArguments(), inputs)) {
      Tensor t = Tensor::zeros(llvm::cast<mlir::RankedTensorType>(arg.getType()));
      EXPECT_EQ((int64_t)values.size(), t.size());
      for (int64_t k = 0; k < t.size() && k < (int64_t)values.size(); ++k) {
        if (t.isFloat()) {
          storeDouble(t, k, values[k]);
          if (!std::isnan(values[k]))
            EXPECT_EQ(t.f[k], values[k]) << "input not representable";
        } else {
          t.i[k] = (int64_t)values[k];
        }
      }
      tensors.push_back(std::move(t));
    }
    return evaluateFunction(func, tensors);
  }

  std::vector<Tensor> run(const std::string &text, std::vector<V> inputs,
                          std::vector<Tensor> tensors = {}) {
    auto outputs = evaluate(text, std::move(inputs), std::move(tensors));
    if (!outputs) {
      ADD_FAILURE() << llvm::toString(outputs.takeError());
      return {};
    }
    return std::vector<Tensor>(outputs->begin(), outputs->end());
  }

  std::string runError(const std::string &text, std::vector<V> inputs) {
    auto outputs = evaluate(text, std::move(inputs));
    return outputs ? "<no error>" : llvm::toString(outputs.takeError());
  }

  /// `%0 = kiln.<op> %x [axes %a] <attrs> : (IN[, AXES]) -> OUT` with constant axes.
  std::vector<Tensor> reduce(const std::string &op, const std::string &inType,
                             const std::string &outType, V input, Axes axes,
                             const std::string &attrs = "") {
    std::string text = "func.func @main(%x: " + inType + ") -> " + outType + " {\n";
    std::string operandTypes = inType;
    std::string axesUse;
    if (axes) {
      std::string axesType = "tensor<" + std::to_string(axes->size()) + "xi64>";
      std::string list;
      for (int64_t a : *axes)
        list += (list.empty() ? "" : ", ") + std::to_string(a);
      text += "  %a = kiln.constant dense<" + (axes->empty() ? "" : "[" + list + "]") +
              "> : " + axesType + "\n";
      operandTypes += ", " + axesType;
      axesUse = " axes %a";
    }
    text += "  %0 = kiln." + op + " %x" + axesUse + " " + attrs + " : (" + operandTypes + ") -> " +
            outType + "\n  return %0 : " + outType + "\n}";
    return run(text, {std::move(input)});
  }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

std::vector<double> values(const std::vector<Tensor> &outputs, size_t index = 0) {
  if (outputs.size() <= index)
    return {};
  std::vector<double> v;
  for (int64_t k = 0; k < outputs[index].size(); ++k)
    v.push_back(outputs[index].getDouble(k));
  return v;
}

kiln::Shape shapeOf(const std::vector<Tensor> &outputs, size_t index = 0) {
  return outputs.size() > index ? outputs[index].shape : kiln::Shape{-1};
}

const V k2x3{1, 2, 3, 4, 5, 6}; // [[1, 2, 3], [4, 5, 6]]

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

TEST_F(ReductionEval, SumAxesAndKeepdims) {
  auto rows = reduce("reduce_sum", "tensor<2x3xf32>", "tensor<2xf32>", k2x3, axesOf({1}),
                     "{keepdims = false}");
  EXPECT_EQ(values(rows), (V{6, 15}));
  auto kept = reduce("reduce_sum", "tensor<2x3xf32>", "tensor<2x1xf32>", k2x3, axesOf({1}));
  EXPECT_EQ(values(kept), (V{6, 15}));
  EXPECT_EQ(shapeOf(kept), (kiln::Shape{2, 1}));
  // A negative axis counts from the end.
  EXPECT_EQ(values(reduce("reduce_sum", "tensor<2x3xf32>", "tensor<3xf32>", k2x3, axesOf({-2}),
                          "{keepdims = false}")),
            (V{5, 7, 9}));
  // No axes, and empty axes: everything.
  EXPECT_EQ(values(reduce("reduce_sum", "tensor<2x3xf32>", "tensor<1x1xf32>", k2x3, std::nullopt)),
            (V{21}));
  EXPECT_EQ(values(reduce("reduce_sum", "tensor<2x3xi32>", "tensor<i32>", k2x3, axesOf({}),
                          "{keepdims = false}")),
            (V{21}));
  // Both axes of a [2, 2, 2]: the middle one stays.
  EXPECT_EQ(values(reduce("reduce_sum", "tensor<2x2x2xf32>", "tensor<2xf32>",
                          {1, 2, 3, 4, 5, 6, 7, 8}, axesOf({0, 2}), "{keepdims = false}")),
            (V{1 + 2 + 5 + 6, 3 + 4 + 7 + 8}));
}

TEST_F(ReductionEval, NoopWithEmptyAxesIsIdentity) {
  for (Axes axes : {axesOf({}), Axes(std::nullopt)})
    EXPECT_EQ(values(reduce("reduce_sum", "tensor<2x3xf32>", "tensor<2x3xf32>", k2x3, axes,
                            "{noop_with_empty_axes = true}")),
              k2x3);
}

TEST_F(ReductionEval, AxesOutOfRangeIsAnError) {
  std::string error = runError(R"(
    func.func @main(%x: tensor<2x3xf32>, %a: tensor<1xi64>) -> tensor<2x1xf32> {
      %0 = kiln.reduce_sum %x axes %a : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<2x1xf32>
      return %0 : tensor<2x1xf32>
    })",
                               {k2x3, {5}});
  EXPECT_NE(error.find("kiln.reduce_sum"), std::string::npos) << error;
  EXPECT_NE(error.find("axis"), std::string::npos) << error;
}

TEST_F(ReductionEval, MeanMaxMinProd) {
  EXPECT_EQ(values(reduce("reduce_mean", "tensor<2x3xf32>", "tensor<2xf32>", k2x3, axesOf({1}),
                          "{keepdims = false}")),
            (V{2, 5}));
  EXPECT_EQ(values(reduce("reduce_max", "tensor<2x3xf32>", "tensor<1x3xf32>", k2x3, axesOf({0}))),
            (V{4, 5, 6}));
  EXPECT_EQ(values(reduce("reduce_min", "tensor<2x3xf32>", "tensor<1x3xf32>", k2x3, axesOf({0}))),
            (V{1, 2, 3}));
  EXPECT_EQ(values(reduce("reduce_prod", "tensor<2x3xf32>", "tensor<1x1xf32>", k2x3, std::nullopt)),
            (V{720}));
  EXPECT_EQ(
      values(reduce("reduce_max", "tensor<3xi8>", "tensor<1xi8>", {-5, -128, -7}, std::nullopt)),
      (V{-5}));
  EXPECT_EQ(
      values(reduce("reduce_min", "tensor<3xui8>", "tensor<1xui8>", {200, 255, 7}, std::nullopt)),
      (V{7}));
}

TEST_F(ReductionEval, MaxMinPropagateNaN) {
  for (const char *op : {"reduce_max", "reduce_min"}) {
    auto out = values(reduce(op, "tensor<2x2xf32>", "tensor<2xf32>", {kNaN, 1, 2, kNaN},
                             axesOf({1}), "{keepdims = false}"));
    ASSERT_EQ(out.size(), 2u) << op;
    EXPECT_TRUE(std::isnan(out[0]) && std::isnan(out[1])) << op;
  }
}

TEST_F(ReductionEval, NormsAndLogs) {
  EXPECT_EQ(values(reduce("reduce_l1", "tensor<2x2xf32>", "tensor<1x1xf32>", {-1, 2, -3, 4},
                          std::nullopt)),
            (V{10}));
  EXPECT_EQ(values(reduce("reduce_l2", "tensor<2xf32>", "tensor<1xf32>", {3, -4}, std::nullopt)),
            (V{5}));
  EXPECT_EQ(values(reduce("reduce_l2", "tensor<2xi32>", "tensor<1xi32>", {3, -4}, std::nullopt)),
            (V{5}));
  EXPECT_EQ(values(reduce("reduce_sum_square", "tensor<3xf32>", "tensor<1xf32>", {1, -2, 3},
                          std::nullopt)),
            (V{14}));
  EXPECT_NEAR(
      values(reduce("reduce_log_sum", "tensor<2xf64>", "tensor<1xf64>", {2, 2}, std::nullopt))[0],
      1.3862943611198906, 1e-15); // ln 4
  EXPECT_NEAR(values(reduce("reduce_log_sum_exp", "tensor<2xf64>", "tensor<1xf64>", {0, 0},
                            std::nullopt))[0],
              0.6931471805599453, 1e-15); // ln 2
  // e^1000 overflows a double; shifting by the maximum keeps the result finite: 1000 + ln 2.
  EXPECT_NEAR(values(reduce("reduce_log_sum_exp", "tensor<2xf64>", "tensor<1xf64>", {1000, 1000},
                            std::nullopt))[0],
              1000.6931471805599, 1e-12);
  // Per row of [[0, 0], [1, -inf]]: ln 2 and 1.
  auto rows = values(reduce("reduce_log_sum_exp", "tensor<2x2xf64>", "tensor<2xf64>",
                            {0, 0, 1, -kInf}, axesOf({1}), "{keepdims = false}"));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_NEAR(rows[0], 0.6931471805599453, 1e-15);
  EXPECT_EQ(rows[1], 1);
}

TEST_F(ReductionEval, EmptyReductions) {
  // ONNX: sum 0, prod 1, max -inf, min +inf, log_sum -inf; integers take the type's bounds.
  auto empty = [&](const char *op, const char *in = "tensor<0xf32>",
                   const char *out = "tensor<1xf32>") {
    return values(reduce(op, in, out, {}, std::nullopt));
  };
  EXPECT_EQ(empty("reduce_sum"), (V{0}));
  EXPECT_EQ(empty("reduce_prod"), (V{1}));
  EXPECT_EQ(empty("reduce_max"), (V{-kInf}));
  EXPECT_EQ(empty("reduce_min"), (V{kInf}));
  EXPECT_EQ(empty("reduce_l2"), (V{0}));
  EXPECT_EQ(empty("reduce_log_sum"), (V{-kInf}));
  EXPECT_EQ(empty("reduce_log_sum_exp"), (V{-kInf}));
  EXPECT_TRUE(std::isnan(empty("reduce_mean")[0])); // 0 / 0
  EXPECT_EQ(empty("reduce_max", "tensor<0xi8>", "tensor<1xi8>"), (V{-128}));
  EXPECT_EQ(empty("reduce_min", "tensor<0xi8>", "tensor<1xi8>"), (V{127}));
  EXPECT_EQ(empty("reduce_min", "tensor<0xui8>", "tensor<1xui8>"), (V{255}));
  // A [2, 0] reduced over axis 1 gives two empty rows.
  EXPECT_EQ(values(reduce("reduce_max", "tensor<2x0xf32>", "tensor<2xf32>", {}, axesOf({1}),
                          "{keepdims = false}")),
            (V{-kInf, -kInf}));
}

TEST_F(ReductionEval, AccumulatesWide) {
  // In f16, 2048 + 1 ties back to 2048 (ulp 2), so an f16 accumulator would give 2048; the
  // double accumulator gives 2050, which f16 holds exactly.
  EXPECT_EQ(
      values(reduce("reduce_sum", "tensor<3xf16>", "tensor<1xf16>", {2048, 1, 1}, std::nullopt)),
      (V{2050}));
  // bf16 mean of [256, 1, 1, 2]: 260 / 4 = 65.
  EXPECT_EQ(values(reduce("reduce_mean", "tensor<4xbf16>", "tensor<1xbf16>", {256, 1, 1, 2},
                          std::nullopt)),
            (V{65}));
  // i64 sums stay exact beyond 2^53.
  Tensor big =
      Tensor::zeros(mlir::RankedTensorType::get({2}, mlir::IntegerType::get(&context, 64)));
  big.i = {int64_t(1) << 53, 1};
  auto out = run(R"(
    func.func @main(%x: tensor<2xi64>) -> tensor<1xi64> {
      %0 = kiln.reduce_sum %x : (tensor<2xi64>) -> tensor<1xi64>
      return %0 : tensor<1xi64>
    })",
                 {}, {big});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].i[0], (int64_t(1) << 53) + 1);
  // Integer means truncate toward zero: 3 / 2 = 1, -3 / 2 = -1.
  EXPECT_EQ(values(reduce("reduce_mean", "tensor<2x2xi32>", "tensor<2xi32>", {1, 2, -1, -2},
                          axesOf({1}), "{keepdims = false}")),
            (V{1, -1}));
  // Integer sums wrap to the element width: 100 + 100 = 200 -> -56 in i8.
  EXPECT_EQ(values(reduce("reduce_sum", "tensor<2xi8>", "tensor<1xi8>", {100, 100}, std::nullopt)),
            (V{-56}));
}

//===----------------------------------------------------------------------===//
// Arg reductions
//===----------------------------------------------------------------------===//

std::string argText(const std::string &op, const std::string &in, const std::string &out,
                    const std::string &attrs) {
  return "func.func @main(%x: " + in + ") -> " + out + " {\n  %0 = kiln." + op + " %x " + attrs +
         " : (" + in + ") -> " + out + "\n  return %0 : " + out + "\n}";
}

TEST_F(ReductionEval, ArgMaxArgMin) {
  V x{1, 3, 3, 5, 0, 5}; // [[1, 3, 3], [5, 0, 5]]
  auto arg = [&](const char *op, const char *attrs, const char *out = "tensor<2x1xi64>") {
    return run(argText(op, "tensor<2x3xf32>", out, attrs), {x});
  };
  auto first = arg("argmax", "{axis = 1 : i64}");
  EXPECT_EQ(values(first), (V{1, 0})); // ties: the first index
  EXPECT_EQ(shapeOf(first), (kiln::Shape{2, 1}));
  EXPECT_EQ(values(arg("argmax", "{axis = 1 : i64, select_last_index = true}")), (V{2, 2}));
  auto flat = arg("argmin", "{axis = 1 : i64, keepdims = false}", "tensor<2xi64>");
  EXPECT_EQ(values(flat), (V{0, 1}));
  EXPECT_EQ(shapeOf(flat), (kiln::Shape{2}));
  EXPECT_EQ(values(arg("argmax", "{axis = 0 : i64, keepdims = false}", "tensor<3xi64>")),
            (V{1, 0, 1}));
  // Integers, and NaN, which numpy's argmax and argmin both pick.
  EXPECT_EQ(values(run(argText("argmin", "tensor<4xi8>", "tensor<1xi64>", "{axis = 0 : i64}"),
                       {{3, -7, 2, -7}})),
            (V{1}));
  EXPECT_EQ(values(run(argText("argmax", "tensor<3xf32>", "tensor<1xi64>", "{axis = 0 : i64}"),
                       {{1, kNaN, 3}})),
            (V{1}));
  EXPECT_EQ(values(run(argText("argmin", "tensor<3xf32>", "tensor<1xi64>", "{axis = 0 : i64}"),
                       {{1, kNaN, 0}})),
            (V{1}));
}

//===----------------------------------------------------------------------===//
// CumSum
//===----------------------------------------------------------------------===//

std::string cumsumText(const std::string &type, const std::string &axisType,
                       const std::string &attrs = "") {
  return "func.func @main(%x: " + type + ", %a: " + axisType + ") -> " + type +
         " {\n  %0 = kiln.cumsum %x, %a " + attrs + " : " + type + ", " + axisType +
         "\n  return %0 : " + type + "\n}";
}

TEST_F(ReductionEval, CumSumModes) {
  V x{1, 2, 3, 4};
  auto cumsum = [&](const char *attrs) {
    return values(run(cumsumText("tensor<4xf32>", "tensor<i64>", attrs), {x, {0}}));
  };
  EXPECT_EQ(cumsum(""), (V{1, 3, 6, 10}));
  EXPECT_EQ(cumsum("{exclusive = true}"), (V{0, 1, 3, 6}));
  EXPECT_EQ(cumsum("{reverse = true}"), (V{10, 9, 7, 4}));
  EXPECT_EQ(cumsum("{exclusive = true, reverse = true}"), (V{9, 7, 4, 0}));
}

TEST_F(ReductionEval, CumSumAxes) {
  // [[1, 2, 3], [4, 5, 6]] along the last axis (-1, as a [1] i32 tensor) and along axis 0.
  EXPECT_EQ(values(run(cumsumText("tensor<2x3xi32>", "tensor<1xi32>"), {k2x3, {-1}})),
            (V{1, 3, 6, 4, 9, 15}));
  EXPECT_EQ(values(run(cumsumText("tensor<2x3xf32>", "tensor<i64>"), {k2x3, {0}})),
            (V{1, 2, 3, 5, 7, 9}));
  // The running sum is kept in double; each output is rounded once to f16: 2049 ties to 2048.
  EXPECT_EQ(values(run(cumsumText("tensor<3xf16>", "tensor<i64>"), {{2048, 1, 1}, {0}})),
            (V{2048, 2048, 2050}));
  // i8 wraps: 100 + 100 = 200 -> -56.
  EXPECT_EQ(values(run(cumsumText("tensor<2xi8>", "tensor<i64>"), {{100, 100}, {0}})),
            (V{100, -56}));
}

//===----------------------------------------------------------------------===//
// TopK
//===----------------------------------------------------------------------===//

std::string topkText(const std::string &in, const std::string &values, const std::string &indices,
                     const std::string &attrs) {
  return "func.func @main(%x: " + in + ") -> (" + values + ", " + indices +
         ") {\n  %v, %i = kiln.topk %x " + attrs + " : (" + in + ") -> (" + values + ", " +
         indices + ")\n  return %v, %i : " + values + ", " + indices + "\n}";
}

TEST_F(ReductionEval, TopKLargestAndSmallest) {
  V x{3, 1, 4, 1, 5};
  auto largest = run(
      topkText("tensor<1x5xf32>", "tensor<1x3xf32>", "tensor<1x3xi64>", "{axis = 1 : i64}"), {x});
  EXPECT_EQ(values(largest, 0), (V{5, 4, 3}));
  EXPECT_EQ(values(largest, 1), (V{4, 2, 0}));
  // Smallest two: the tie between the two 1s keeps the lower index first.
  auto smallest = run(topkText("tensor<1x5xf32>", "tensor<1x2xf32>", "tensor<1x2xi64>",
                               "{axis = 1 : i64, largest = false}"),
                      {x});
  EXPECT_EQ(values(smallest, 0), (V{1, 1}));
  EXPECT_EQ(values(smallest, 1), (V{1, 3}));
  auto ties = run(topkText("tensor<4xi32>", "tensor<2xi32>", "tensor<2xi64>", "{axis = 0 : i64}"),
                  {{2, 7, 7, 1}});
  EXPECT_EQ(values(ties, 0), (V{7, 7}));
  EXPECT_EQ(values(ties, 1), (V{1, 2}));
}

TEST_F(ReductionEval, TopKAlongAxis0) {
  // [[1, 6], [5, 2], [3, 4]]: the top two of each column.
  auto out =
      run(topkText("tensor<3x2xf16>", "tensor<2x2xf16>", "tensor<2x2xi64>", "{axis = 0 : i64}"),
          {{1, 6, 5, 2, 3, 4}});
  EXPECT_EQ(values(out, 0), (V{5, 6, 3, 4}));
  EXPECT_EQ(values(out, 1), (V{1, 0, 2, 2}));
}

} // namespace
