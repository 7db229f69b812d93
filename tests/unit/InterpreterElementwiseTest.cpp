//===- InterpreterElementwiseTest.cpp - elementwise ops, hand-checked ------===//
//
// Each test runs a tiny kiln function through the interpreter and compares with values worked
// out by hand (or from textbook constants), including the rounding of the low-precision types.
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

using namespace kiln::interp;

namespace {

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string typeName(mlir::Type type) {
  std::string name;
  llvm::raw_string_ostream os(name);
  os << type;
  return name;
}

/// Parses a module holding `func.func @main` and evaluates it. Inputs are given as plain numbers
/// and take the argument types; each must be exactly representable there.
class ElementwiseEval : public ::testing::Test {
protected:
  ElementwiseEval() { context.loadDialect<kiln::KilnDialect, mlir::func::FuncDialect>(); }

  std::vector<Tensor> runTensors(const std::string &text, llvm::ArrayRef<Tensor> inputs) {
    module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
    if (!module) {
      ADD_FAILURE() << "module does not parse:\n" << text;
      return {};
    }
    auto func = module->lookupSymbol<mlir::func::FuncOp>("main");
    auto outputs = evaluateFunction(func, inputs);
    if (!outputs) {
      ADD_FAILURE() << llvm::toString(outputs.takeError());
      return {};
    }
    return std::vector<Tensor>(outputs->begin(), outputs->end());
  }

  std::vector<Tensor> run(const std::string &text, std::vector<std::vector<double>> inputs) {
    auto parsed = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
    if (!parsed) {
      ADD_FAILURE() << "module does not parse:\n" << text;
      return {};
    }
    auto func = parsed->lookupSymbol<mlir::func::FuncOp>("main");
    std::vector<Tensor> tensors;
    for (auto [arg, values] : llvm::zip(func.getArguments(), inputs))
      tensors.push_back(tensorOf(llvm::cast<mlir::RankedTensorType>(arg.getType()), values));
    return runTensors(text, tensors);
  }

  /// The error message of a run that must fail.
  std::string runError(const std::string &text, std::vector<std::vector<double>> inputs) {
    module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
    if (!module)
      return "<does not parse>";
    auto func = module->lookupSymbol<mlir::func::FuncOp>("main");
    std::vector<Tensor> tensors;
    for (auto [arg, values] : llvm::zip(func.getArguments(), inputs))
      tensors.push_back(tensorOf(llvm::cast<mlir::RankedTensorType>(arg.getType()), values));
    auto outputs = evaluateFunction(func, tensors);
    if (outputs)
      return "<no error>";
    return llvm::toString(outputs.takeError());
  }

  static Tensor tensorOf(mlir::RankedTensorType type, const std::vector<double> &values) {
    Tensor t = Tensor::zeros(type);
    EXPECT_EQ((int64_t)values.size(), t.size()) << "input size for " << typeName(type);
    for (int64_t k = 0; k < t.size() && k < (int64_t)values.size(); ++k) {
      if (t.isFloat()) {
        storeDouble(t, k, values[k]);
        if (!std::isnan(values[k]))
          EXPECT_EQ(t.f[k], values[k]) << "input not representable in " << typeName(type);
      } else {
        t.i[k] = (int64_t)values[k];
      }
    }
    return t;
  }

  /// `func.func @main(%x: T) -> R { %0 = kiln.<op> %x <attrs> : T [-> R] }`.
  std::vector<Tensor> unary(const std::string &op, const std::string &type,
                            std::vector<double> input, const std::string &attrs = "",
                            const std::string &resultType = "") {
    std::string result = resultType.empty() ? type : resultType;
    std::string arrow = op == "cast" ? " to " : " -> ";
    std::string types = resultType.empty() ? type : type + arrow + resultType;
    return run("func.func @main(%x: " + type + ") -> " + result + " {\n  %0 = kiln." + op + " %x " +
                   attrs + " : " + types + "\n  return %0 : " + result + "\n}",
               {std::move(input)});
  }

  /// `func.func @main(%a: A, %b: B) -> R { %0 = kiln.<op> %a, %b : (A, B) -> R }`.
  std::vector<Tensor> binary(const std::string &op, const std::string &lhsType,
                             const std::string &rhsType, const std::string &resultType,
                             std::vector<double> lhs, std::vector<double> rhs,
                             const std::string &attrs = "") {
    return run(binaryText(op, lhsType, rhsType, resultType, attrs),
               {std::move(lhs), std::move(rhs)});
  }
  static std::string binaryText(const std::string &op, const std::string &lhsType,
                                const std::string &rhsType, const std::string &resultType,
                                const std::string &attrs = "") {
    return "func.func @main(%a: " + lhsType + ", %b: " + rhsType + ") -> " + resultType +
           " {\n  %0 = kiln." + op + " %a, %b " + attrs + " : (" + lhsType + ", " + rhsType +
           ") -> " + resultType + "\n  return %0 : " + resultType + "\n}";
  }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

/// All values of a tensor as doubles.
std::vector<double> values(const std::vector<Tensor> &outputs, size_t index = 0) {
  if (outputs.size() <= index)
    return {};
  const Tensor &t = outputs[index];
  std::vector<double> v;
  for (int64_t k = 0; k < t.size(); ++k)
    v.push_back(t.getDouble(k));
  return v;
}
using V = std::vector<double>;

//===----------------------------------------------------------------------===//
// Float unary ops
//===----------------------------------------------------------------------===//

TEST_F(ElementwiseEval, SqrtReciprocal) {
  EXPECT_EQ(values(unary("sqrt", "tensor<3xf32>", {4, 0.25, 0})), (V{2, 0.5, 0}));
  EXPECT_FLOAT_EQ(values(unary("sqrt", "tensor<1xf32>", {2}))[0], 1.41421356f);
  EXPECT_TRUE(std::isnan(values(unary("sqrt", "tensor<1xf32>", {-1}))[0]));
  EXPECT_EQ(values(unary("reciprocal", "tensor<3xf32>", {4, -0.5, 0})), (V{0.25, -2, kInf}));
  // 1/3 = 0.0101010101|0101...b: the f16 mantissa keeps 10 bits and rounds down.
  EXPECT_EQ(values(unary("reciprocal", "tensor<1xf16>", {3})), (V{1365.0 / 4096}));
}

TEST_F(ElementwiseEval, ExpLogErfTanh) {
  EXPECT_EQ(values(unary("exp", "tensor<2xf64>", {0, -kInf})), (V{1, 0}));
  // e^100 is beyond the f32 range (about 3.4e38): inf.
  EXPECT_EQ(values(unary("exp", "tensor<1xf32>", {100})), (V{kInf}));
  EXPECT_NEAR(values(unary("exp", "tensor<1xf64>", {1}))[0], 2.718281828459045, 1e-15);
  EXPECT_EQ(values(unary("log", "tensor<2xf32>", {1, 0})), (V{0, -kInf}));
  EXPECT_NEAR(values(unary("log", "tensor<1xf64>", {2}))[0], 0.6931471805599453, 1e-15);
  EXPECT_NEAR(values(unary("erf", "tensor<1xf64>", {1}))[0], 0.8427007929497149, 1e-15);
  EXPECT_EQ(values(unary("erf", "tensor<3xf32>", {0, kInf, -kInf})), (V{0, 1, -1}));
  EXPECT_NEAR(values(unary("tanh", "tensor<1xf64>", {1}))[0], 0.7615941559557649, 1e-15);
  EXPECT_EQ(values(unary("tanh", "tensor<2xf32>", {0, -100})), (V{0, -1}));
}

TEST_F(ElementwiseEval, SigmoidSoftplusHardSwish) {
  EXPECT_EQ(values(unary("sigmoid", "tensor<3xf32>", {0, 1000, -1000})), (V{0.5, 1, 0}));
  // sigmoid(ln 3) = 1 / (1 + 1/3) = 3/4.
  EXPECT_NEAR(values(unary("sigmoid", "tensor<1xf64>", {1.0986122886681098}))[0], 0.75, 1e-15);
  // softplus(0) = ln 2; large inputs neither overflow nor lose the tiny tail.
  EXPECT_NEAR(values(unary("softplus", "tensor<1xf64>", {0}))[0], 0.6931471805599453, 1e-15);
  EXPECT_EQ(values(unary("softplus", "tensor<1xf32>", {1000})), (V{1000}));
  EXPECT_NEAR(values(unary("softplus", "tensor<1xf64>", {-100}))[0], 3.720075976020836e-44, 1e-57);
  // x * clamp(x/6 + 1/2, 0, 1): -4 -> 0, 3 -> 3, 1 -> 2/3.
  EXPECT_EQ(values(unary("hard_swish", "tensor<3xf32>", {-4, 3, 4})), (V{0, 3, 4}));
  EXPECT_NEAR(values(unary("hard_swish", "tensor<1xf64>", {1}))[0], 2.0 / 3.0, 1e-15);
}

TEST_F(ElementwiseEval, FloorCeilRound) {
  EXPECT_EQ(values(unary("floor", "tensor<3xf32>", {-1.5, 1.5, 2})), (V{-2, 1, 2}));
  EXPECT_EQ(values(unary("ceil", "tensor<3xf32>", {-1.5, 1.5, 2})), (V{-1, 2, 2}));
  // Half to even.
  EXPECT_EQ(values(unary("round", "tensor<8xf32>", {0.5, 1.5, 2.5, -0.5, -1.5, 2.25, 2.75, kInf})),
            (V{0, 2, 2, 0, -2, 2, 3, kInf}));
}

TEST_F(ElementwiseEval, SinCos) {
  EXPECT_EQ(values(unary("sin", "tensor<1xf32>", {0})), (V{0}));
  EXPECT_EQ(values(unary("cos", "tensor<1xf32>", {0})), (V{1}));
  EXPECT_NEAR(values(unary("sin", "tensor<1xf64>", {1.5707963267948966}))[0], 1, 1e-15);
  EXPECT_NEAR(values(unary("cos", "tensor<1xf64>", {3.141592653589793}))[0], -1, 1e-15);
}

TEST_F(ElementwiseEval, ActivationsWithAttributes) {
  // 0.1f * -2 is 2 * 0.1f exactly, which is the float nearest -0.2.
  auto leaky = values(unary("leaky_relu", "tensor<2xf32>", {-2, 3}, "{alpha = 0.1 : f32}"));
  EXPECT_FLOAT_EQ(leaky[0], -0.2f);
  EXPECT_EQ(leaky[1], 3);
  EXPECT_FLOAT_EQ(values(unary("leaky_relu", "tensor<1xf32>", {-100}))[0], -1.0f); // alpha 0.01
  auto elu = values(unary("elu", "tensor<2xf64>", {-1, 2}));
  EXPECT_NEAR(elu[0], -0.6321205588285577, 1e-15); // e^-1 - 1
  EXPECT_EQ(elu[1], 2);
  EXPECT_EQ(values(unary("elu", "tensor<1xf32>", {-1000}, "{alpha = 2.0 : f32}")), (V{-2}));
  // selu: gamma * x above 0; gamma * alpha * (e^x - 1) -> -gamma * alpha far below (defaults).
  auto selu = values(unary("selu", "tensor<3xf64>", {1, 0, -1000}));
  EXPECT_EQ(selu[0], 1.05070102214813232421875);
  EXPECT_EQ(selu[1], 0);
  EXPECT_EQ(selu[2], -1.7580993463430303);
  // clamp(0.2 x + 0.5, 0, 1).
  auto hardSigmoid = values(unary("hard_sigmoid", "tensor<4xf32>", {-5, 0, 1, 5}));
  EXPECT_EQ(hardSigmoid[0], 0);
  EXPECT_EQ(hardSigmoid[1], 0.5);
  EXPECT_FLOAT_EQ(hardSigmoid[2], 0.7f);
  EXPECT_EQ(hardSigmoid[3], 1);
  EXPECT_EQ(
      values(unary("hard_sigmoid", "tensor<1xf32>", {1}, "{alpha = 0.5 : f32, beta = 0.25 : f32}")),
      (V{0.75}));
}

TEST_F(ElementwiseEval, Gelu) {
  // x * Phi(x): Phi(1) = 0.8413447460685429, Phi(-inf) = 0.
  auto exact = values(unary("gelu", "tensor<3xf64>", {0, 1, -10}));
  EXPECT_EQ(exact[0], 0);
  EXPECT_NEAR(exact[1], 0.8413447460685429, 1e-15);
  EXPECT_NEAR(exact[2], 0, 1e-20);
  // 0.5 (1 + tanh(sqrt(2/pi) * (1 + 0.044715))) = 0.8411919906082768.
  auto approx = values(unary("gelu", "tensor<1xf64>", {1}, "{approximate = \"tanh\"}"));
  EXPECT_NEAR(approx[0], 0.8411919906082768, 1e-15);
}

TEST_F(ElementwiseEval, IsNaNIsInf) {
  EXPECT_EQ(values(unary("is_nan", "tensor<3xf32>", {kNaN, 1, kInf}, "", "tensor<3xi1>")),
            (V{1, 0, 0}));
  EXPECT_EQ(values(unary("is_inf", "tensor<4xf32>", {kInf, -kInf, 1, kNaN}, "", "tensor<4xi1>")),
            (V{1, 1, 0, 0}));
  EXPECT_EQ(values(unary("is_inf", "tensor<4xf16>", {kInf, -kInf, 1, kNaN},
                         "{detect_negative = false}", "tensor<4xi1>")),
            (V{1, 0, 0, 0}));
}

//===----------------------------------------------------------------------===//
// Numeric unary ops
//===----------------------------------------------------------------------===//

TEST_F(ElementwiseEval, ReluNegAbsSign) {
  EXPECT_EQ(values(unary("relu", "tensor<3xf32>", {-1, 0, 2.5})), (V{0, 0, 2.5}));
  EXPECT_EQ(values(unary("relu", "tensor<3xi8>", {-128, 0, 127})), (V{0, 0, 127}));
  EXPECT_EQ(values(unary("neg", "tensor<2xf32>", {1.5, -2})), (V{-1.5, 2}));
  // -(-128) does not fit in i8 and wraps, as two's complement hardware does.
  EXPECT_EQ(values(unary("neg", "tensor<3xi8>", {5, -5, -128})), (V{-5, 5, -128}));
  EXPECT_EQ(values(unary("abs", "tensor<3xf32>", {-3, 0, 4})), (V{3, 0, 4}));
  EXPECT_EQ(values(unary("abs", "tensor<2xi32>", {-7, 7})), (V{7, 7}));
  EXPECT_EQ(values(unary("sign", "tensor<3xf32>", {-2, 0, 3})), (V{-1, 0, 1}));
  EXPECT_EQ(values(unary("sign", "tensor<3xi64>", {-9, 0, 9})), (V{-1, 0, 1}));
  EXPECT_TRUE(std::isnan(values(unary("sign", "tensor<1xf32>", {kNaN}))[0]));
}

TEST_F(ElementwiseEval, Not) { EXPECT_EQ(values(unary("not", "tensor<2xi1>", {1, 0})), (V{0, 1})); }

//===----------------------------------------------------------------------===//
// Broadcasting binary ops
//===----------------------------------------------------------------------===//

TEST_F(ElementwiseEval, AddBroadcasts) {
  // [2, 3] + [3]: the row repeats.
  EXPECT_EQ(values(binary("add", "tensor<2x3xf32>", "tensor<3xf32>", "tensor<2x3xf32>",
                          {1, 2, 3, 4, 5, 6}, {10, 20, 30})),
            (V{11, 22, 33, 14, 25, 36}));
  // [2, 1] * [1, 3]: an outer product.
  EXPECT_EQ(values(binary("mul", "tensor<2x1xf32>", "tensor<1x3xf32>", "tensor<2x3xf32>", {1, 2},
                          {3, 4, 5})),
            (V{3, 4, 5, 6, 8, 10}));
  // Rank 0 against [2, 2].
  EXPECT_EQ(values(binary("sub", "tensor<f32>", "tensor<2x2xf32>", "tensor<2x2xf32>", {10},
                          {1, 2, 3, 4})),
            (V{9, 8, 7, 6}));
  // [3, 1, 2] + [2, 1]: both operands broadcast.
  EXPECT_EQ(values(binary("add", "tensor<3x1x2xi32>", "tensor<2x1xi32>", "tensor<3x2x2xi32>",
                          {0, 1, 10, 11, 20, 21}, {100, 200})),
            (V{100, 101, 200, 201, 110, 111, 210, 211, 120, 121, 220, 221}));
}

TEST_F(ElementwiseEval, IntegerArithmeticWraps) {
  EXPECT_EQ(values(binary("add", "tensor<2xi8>", "tensor<2xi8>", "tensor<2xi8>", {100, -100},
                          {100, -100})),
            (V{-56, 56}));
  EXPECT_EQ(values(binary("mul", "tensor<1xui8>", "tensor<1xui8>", "tensor<1xui8>", {16}, {17})),
            (V{16})); // 272 mod 256
  EXPECT_EQ(values(binary("sub", "tensor<1xui8>", "tensor<1xui8>", "tensor<1xui8>", {1}, {2})),
            (V{255}));
}

TEST_F(ElementwiseEval, F16AddRoundsHalfToEven) {
  // The f16 ulp at 1 is 2^-10. 1 + 2^-11 is a tie between 1 and 1 + 2^-10: the even mantissa
  // (1) wins; 1 + 3 * 2^-11 ties between 1 + 2^-10 and 1 + 2^-9: 1 + 2^-9 is even.
  EXPECT_EQ(values(binary("add", "tensor<3xf16>", "tensor<3xf16>", "tensor<3xf16>", {1, 1, 1},
                          {std::ldexp(1, -11), std::ldexp(3, -11), std::ldexp(1, -10)})),
            (V{1, 1 + std::ldexp(1, -9), 1 + std::ldexp(1, -10)}));
}

TEST_F(ElementwiseEval, F16SubnormalsAndOverflow) {
  // 2^-12 * 2^-12 = 2^-24 is the smallest f16 subnormal; 2^-13 * 2^-13 = 2^-26 is below half of
  // it and flushes to 0; 2^-25 is exactly half and ties to the even 0.
  EXPECT_EQ(values(binary("mul", "tensor<3xf16>", "tensor<3xf16>", "tensor<3xf16>",
                          {std::ldexp(1, -12), std::ldexp(1, -13), std::ldexp(1, -12)},
                          {std::ldexp(1, -12), std::ldexp(1, -13), std::ldexp(1, -13)})),
            (V{std::ldexp(1, -24), 0, 0}));
  // 3 * 2^-25 = 1.5 * 2^-24 ties between 2^-24 (odd) and 2^-23 (even): 2^-23.
  EXPECT_EQ(values(binary("mul", "tensor<1xf16>", "tensor<1xf16>", "tensor<1xf16>",
                          {std::ldexp(3, -13)}, {std::ldexp(1, -12)})),
            (V{std::ldexp(1, -23)}));
  // The largest f16 is 65504; 60000 + 10000 overflows to inf, 65504 + 8 rounds back to 65504
  // and 65504 + 16 = 65520 ties between 65504 and 65536 (out of range): inf.
  EXPECT_EQ(values(binary("add", "tensor<4xf16>", "tensor<4xf16>", "tensor<4xf16>",
                          {60000, 65504, 65504, -60000}, {10000, 8, 16, -10000})),
            (V{kInf, 65504, kInf, -kInf}));
}

TEST_F(ElementwiseEval, BF16RoundsHalfToEven) {
  // bf16 keeps 7 mantissa bits: the ulp at 1 is 2^-7.
  EXPECT_EQ(values(binary("add", "tensor<2xbf16>", "tensor<2xbf16>", "tensor<2xbf16>", {1, 1},
                          {std::ldexp(1, -8), std::ldexp(3, -8)})),
            (V{1, 1 + std::ldexp(1, -6)}));
  // 256 + 1 = 257 ties between 256 and 258 (ulp 2): 256.
  EXPECT_EQ(values(binary("add", "tensor<1xbf16>", "tensor<1xbf16>", "tensor<1xbf16>", {256}, {1})),
            (V{256}));
}

TEST_F(ElementwiseEval, IntegerDivisionTruncates) {
  EXPECT_EQ(values(binary("div", "tensor<4xi32>", "tensor<4xi32>", "tensor<4xi32>", {-7, 7, 7, -7},
                          {2, -2, 2, -2})),
            (V{-3, -3, 3, 3}));
  EXPECT_EQ(
      values(binary("div", "tensor<2xf32>", "tensor<2xf32>", "tensor<2xf32>", {-7, 1}, {2, 0})),
      (V{-3.5, kInf}));
  std::string error = runError(binaryText("div", "tensor<2xi32>", "tensor<2xi32>", "tensor<2xi32>"),
                               {{1, 2}, {1, 0}});
  EXPECT_NE(error.find("division by zero"), std::string::npos) << error;
  EXPECT_NE(error.find("kiln.div"), std::string::npos) << error;
}

TEST_F(ElementwiseEval, ModSigns) {
  // Without fmod the remainder has the divisor's sign; with fmod, the dividend's.
  EXPECT_EQ(values(binary("mod", "tensor<4xi32>", "tensor<4xi32>", "tensor<4xi32>", {-7, 7, -7, 6},
                          {3, -3, -3, 3})),
            (V{2, -2, -1, 0}));
  EXPECT_EQ(values(binary("mod", "tensor<4xi32>", "tensor<4xi32>", "tensor<4xi32>", {-7, 7, -7, 6},
                          {3, -3, -3, 3}, "{fmod = true}")),
            (V{-1, 1, -1, 0}));
  EXPECT_EQ(values(binary("mod", "tensor<2xf32>", "tensor<2xf32>", "tensor<2xf32>", {-7.5, 7.5},
                          {2, 2}, "{fmod = true}")),
            (V{-1.5, 1.5}));
  EXPECT_EQ(values(binary("mod", "tensor<2xf32>", "tensor<2xf32>", "tensor<2xf32>", {-7.5, 7.5},
                          {2, -2})),
            (V{0.5, -0.5}));
  std::string error =
      runError(binaryText("mod", "tensor<1xi8>", "tensor<1xi8>", "tensor<1xi8>"), {{1}, {0}});
  EXPECT_NE(error.find("modulo by zero"), std::string::npos) << error;
}

TEST_F(ElementwiseEval, Pow) {
  EXPECT_EQ(values(binary("pow", "tensor<3xf32>", "tensor<3xf32>", "tensor<3xf32>", {2, 4, -2},
                          {10, 0.5, 3})),
            (V{1024, 2, -8}));
  // Integer powers: 1/2 truncates to 0; (-1)^-3 = -1; 2^7 = 128 wraps in i8.
  EXPECT_EQ(values(binary("pow", "tensor<4xi8>", "tensor<4xi8>", "tensor<4xi8>", {3, 2, -1, 2},
                          {4, -1, -3, 7})),
            (V{81, 0, -1, -128}));
}

TEST_F(ElementwiseEval, MinMaxPropagateNaN) {
  EXPECT_EQ(
      values(binary("min", "tensor<2xf32>", "tensor<2xf32>", "tensor<2xf32>", {1, 5}, {3, 2})),
      (V{1, 2}));
  EXPECT_EQ(
      values(binary("max", "tensor<2xi32>", "tensor<2xi32>", "tensor<2xi32>", {-1, 5}, {3, -2})),
      (V{3, 5}));
  for (const char *op : {"min", "max"}) {
    auto out = values(binary(op, "tensor<3xf32>", "tensor<3xf32>", "tensor<3xf32>", {kNaN, 1, kNaN},
                             {1, kNaN, kNaN}));
    ASSERT_EQ(out.size(), 3u);
    for (double v : out)
      EXPECT_TRUE(std::isnan(v)) << op;
  }
}

TEST_F(ElementwiseEval, PRelu) {
  // The slope broadcasts per channel.
  EXPECT_EQ(values(binary("prelu", "tensor<2x2xf32>", "tensor<2xf32>", "tensor<2x2xf32>",
                          {-2, -2, 3, 0}, {0.5, 0.25})),
            (V{-1, -0.5, 3, 0}));
}

TEST_F(ElementwiseEval, Logical) {
  V a{0, 0, 1, 1}, b{0, 1, 0, 1};
  auto logical = [&](const char *op) {
    return values(binary(op, "tensor<4xi1>", "tensor<4xi1>", "tensor<4xi1>", a, b));
  };
  EXPECT_EQ(logical("and"), (V{0, 0, 0, 1}));
  EXPECT_EQ(logical("or"), (V{0, 1, 1, 1}));
  EXPECT_EQ(logical("xor"), (V{0, 1, 1, 0}));
}

TEST_F(ElementwiseEval, Comparisons) {
  V a{1, 2, 3, kNaN}, b{2, 2, 2, kNaN};
  auto compare = [&](const char *op) {
    return values(binary(op, "tensor<4xf32>", "tensor<4xf32>", "tensor<4xi1>", a, b));
  };
  // NaN compares false with everything, itself included.
  EXPECT_EQ(compare("equal"), (V{0, 1, 0, 0}));
  EXPECT_EQ(compare("less"), (V{1, 0, 0, 0}));
  EXPECT_EQ(compare("less_equal"), (V{1, 1, 0, 0}));
  EXPECT_EQ(compare("greater"), (V{0, 0, 1, 0}));
  EXPECT_EQ(compare("greater_equal"), (V{0, 1, 1, 0}));
  // Unsigned integers compare as unsigned; broadcasting a scalar.
  EXPECT_EQ(
      values(binary("less", "tensor<3xui8>", "tensor<ui8>", "tensor<3xi1>", {0, 200, 255}, {128})),
      (V{1, 0, 0}));
}

//===----------------------------------------------------------------------===//
// Where, clip
//===----------------------------------------------------------------------===//

TEST_F(ElementwiseEval, WhereBroadcastsAllThree) {
  auto out = run(R"(
    func.func @main(%c: tensor<2x1xi1>, %x: tensor<1x3xf16>, %y: tensor<f16>) -> tensor<2x3xf16> {
      %0 = kiln.where %c, %x, %y : (tensor<2x1xi1>, tensor<1x3xf16>, tensor<f16>) -> tensor<2x3xf16>
      return %0 : tensor<2x3xf16>
    })",
                 {{1, 0}, {1, 2, 3}, {-1}});
  EXPECT_EQ(values(out), (V{1, 2, 3, -1, -1, -1}));
}

TEST_F(ElementwiseEval, Clip) {
  auto clip = [&](const std::string &type, const std::string &scalar, V x, double lo, double hi) {
    return values(run("func.func @main(%x: " + type + ", %lo: " + scalar + ", %hi: " + scalar +
                          ") -> " + type + " {\n  %0 = kiln.clip %x, %lo, %hi : (" + type + ", " +
                          scalar + ", " + scalar + ") -> " + type + "\n  return %0 : " + type +
                          "\n}",
                      {x, {lo}, {hi}}));
  };
  auto out = clip("tensor<4xf32>", "tensor<f32>", {-5, 0.5, 5, kNaN}, -1, 1);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0], -1);
  EXPECT_EQ(out[1], 0.5);
  EXPECT_EQ(out[2], 1);
  EXPECT_TRUE(std::isnan(out[3]));
  EXPECT_EQ(clip("tensor<3xi8>", "tensor<i8>", {-100, 3, 100}, 0, 6), (V{0, 3, 6}));
  // min > max: every value becomes max (ONNX).
  EXPECT_EQ(clip("tensor<2xf32>", "tensor<f32>", {-5, 5}, 2, 1), (V{1, 1}));
}

//===----------------------------------------------------------------------===//
// Cast
//===----------------------------------------------------------------------===//

TEST_F(ElementwiseEval, CastFloatToIntTruncatesAndSaturates) {
  EXPECT_EQ(
      values(unary("cast", "tensor<5xf32>", {300.75, -1.5, 1.5, -300, 127.5}, "", "tensor<5xi8>")),
      (V{127, -1, 1, -128, 127}));
  EXPECT_EQ(values(unary("cast", "tensor<3xf64>", {300.7, -1.5, -0.7}, "", "tensor<3xi8>")),
            (V{127, -1, 0}));
  EXPECT_EQ(values(unary("cast", "tensor<2xf32>", {-1, 70000}, "", "tensor<2xui16>")),
            (V{0, 65535}));
  EXPECT_EQ(values(unary("cast", "tensor<4xf32>", {0, 0.5, -2, kNaN}, "", "tensor<4xi1>")),
            (V{0, 1, 1, 1}));
}

TEST_F(ElementwiseEval, CastBetweenFloats) {
  // f32 -> f16: ties to even, overflow to inf; f16 -> f32 is exact.
  EXPECT_EQ(values(unary("cast", "tensor<3xf32>",
                         {1 + std::ldexp(1, -11), 70000, std::ldexp(1, -24)}, "", "tensor<3xf16>")),
            (V{1, kInf, std::ldexp(1, -24)}));
  EXPECT_EQ(values(unary("cast", "tensor<1xf16>", {65504}, "", "tensor<1xf32>")), (V{65504}));
  // f32 -> bf16: 1 + 3 * 2^-8 ties to 1 + 2^-6.
  EXPECT_EQ(values(unary("cast", "tensor<1xf32>", {1 + std::ldexp(3, -8)}, "", "tensor<1xbf16>")),
            (V{1 + std::ldexp(1, -6)}));
}

TEST_F(ElementwiseEval, CastToF8E4M3FN) {
  // The largest f8E4M3FN is 448; the type has no infinity. 1.0625 ties between 1 and 1.125:
  // 1; 1.1875 ties between 1.125 and 1.25: 1.25.
  EXPECT_EQ(values(unary("cast", "tensor<4xf32>", {1000, -1000, 1.0625, 1.1875}, "",
                         "tensor<4xf8E4M3FN>")),
            (V{448, -448, 1, 1.25}));
  EXPECT_EQ(
      values(unary("cast", "tensor<1xf32>", {kInf}, "{saturate = true}", "tensor<1xf8E4M3FN>")),
      (V{448}));
  auto unsaturated = values(
      unary("cast", "tensor<2xf32>", {1000, 448}, "{saturate = false}", "tensor<2xf8E4M3FN>"));
  ASSERT_EQ(unsaturated.size(), 2u);
  EXPECT_TRUE(std::isnan(unsaturated[0]));
  EXPECT_EQ(unsaturated[1], 448);
}

TEST_F(ElementwiseEval, CastFromIntegers) {
  // 2^24 + 1 ties between 2^24 and 2^24 + 2 in f32: the even 2^24.
  EXPECT_EQ(values(unary("cast", "tensor<2xi32>", {16777217, -3}, "", "tensor<2xf32>")),
            (V{16777216, -3}));
  EXPECT_EQ(values(unary("cast", "tensor<2xi32>", {300, -129}, "", "tensor<2xi8>")), (V{44, 127}));
  EXPECT_EQ(values(unary("cast", "tensor<3xi8>", {-1, 0, 2}, "", "tensor<3xi1>")), (V{1, 0, 1}));
  EXPECT_EQ(values(unary("cast", "tensor<2xi1>", {1, 0}, "", "tensor<2xf16>")), (V{1, 0}));
  EXPECT_EQ(values(unary("cast", "tensor<1xui8>", {255}, "", "tensor<1xi8>")), (V{-1}));
  // 2^60 + 2^36 + 1 is just above half an f32 ulp (2^37) past 2^60, so it rounds up; going
  // through a double first would land on the tie 2^60 + 2^36 and round down to 2^60.
  mlir::Type i64 = mlir::IntegerType::get(&context, 64);
  Tensor big = Tensor::zeros(mlir::RankedTensorType::get({1}, i64));
  big.i[0] = (int64_t(1) << 60) + (int64_t(1) << 36) + 1;
  auto out = runTensors(R"(
    func.func @main(%x: tensor<1xi64>) -> tensor<1xf32> {
      %0 = kiln.cast %x : tensor<1xi64> to tensor<1xf32>
      return %0 : tensor<1xf32>
    })",
                        {big});
  EXPECT_EQ(values(out), (V{std::ldexp(1, 60) + std::ldexp(1, 37)}));
}

//===----------------------------------------------------------------------===//
// Quantization
//===----------------------------------------------------------------------===//

TEST_F(ElementwiseEval, QuantizeInt8RoundsHalfToEvenAndSaturates) {
  auto out = run(R"(
    func.func @main(%x: tensor<7xf32>, %s: tensor<f32>, %z: tensor<i8>) -> tensor<7xi8> {
      %0 = kiln.quantize %x, %s, %z : (tensor<7xf32>, tensor<f32>, tensor<i8>) -> tensor<7xi8>
      return %0 : tensor<7xi8>
    })",
                 {{2.5, 3.5, -2.5, 300, -300, 0.375, -0.625}, {1}, {0}});
  EXPECT_EQ(values(out), (V{2, 4, -2, 127, -128, 0, -1}));
}

TEST_F(ElementwiseEval, QuantizeDividesInFloat32) {
  // 0.3f / 0.2f is 1.49999997... in exact arithmetic but 1.5 as a float32 division, which is
  // what ONNX's reference and runtimes compute: the tie then rounds to the even 2.
  auto out = run(R"(
    func.func @main(%x: tensor<1xf32>, %s: tensor<f32>, %z: tensor<i8>) -> tensor<1xi8> {
      %0 = kiln.quantize %x, %s, %z : (tensor<1xf32>, tensor<f32>, tensor<i8>) -> tensor<1xi8>
      return %0 : tensor<1xi8>
    })",
                 {{(double)0.3f}, {(double)0.2f}, {0}});
  EXPECT_EQ(values(out), (V{2}));
}

TEST_F(ElementwiseEval, QuantizeUint8WithZeroPoint) {
  // x / 0.5 + 128, saturated to [0, 255].
  auto out = run(R"(
    func.func @main(%x: tensor<6xf32>, %s: tensor<f32>, %z: tensor<ui8>) -> tensor<6xui8> {
      %0 = kiln.quantize %x, %s, %z : (tensor<6xf32>, tensor<f32>, tensor<ui8>) -> tensor<6xui8>
      return %0 : tensor<6xui8>
    })",
                 {{0, 1, 2.25, -10, 300, -300}, {0.5}, {128}});
  // 2.25 / 0.5 = 4.5 -> 4 (even) -> 132.
  EXPECT_EQ(values(out), (V{128, 130, 132, 108, 255, 0}));
}

TEST_F(ElementwiseEval, QuantizePerAxis) {
  // Axis 1 of [2, 3]: column c uses scale[c] and zero_point[c].
  auto out = run(R"(
    func.func @main(%x: tensor<2x3xf32>, %s: tensor<3xf32>, %z: tensor<3xi8>) -> tensor<2x3xi8> {
      %0 = kiln.quantize %x, %s, %z {axis = 1 : i64}
        : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xi8>) -> tensor<2x3xi8>
      return %0 : tensor<2x3xi8>
    })",
                 {{4, 4, 4, -6, 5, 10}, {1, 2, 4}, {0, 10, -10}});
  // Row 0: 4, 2 + 10, 1 - 10; row 1: -6, 2.5 -> 2 (even) + 10, 2.5 -> 2 - 10.
  EXPECT_EQ(values(out), (V{4, 12, -9, -6, 12, -8}));
  // Axis 0 of [2, 2].
  auto rows = run(R"(
    func.func @main(%x: tensor<2x2xf32>, %s: tensor<2xf32>, %z: tensor<2xi8>) -> tensor<2x2xi8> {
      %0 = kiln.quantize %x, %s, %z {axis = 0 : i64}
        : (tensor<2x2xf32>, tensor<2xf32>, tensor<2xi8>) -> tensor<2x2xi8>
      return %0 : tensor<2x2xi8>
    })",
                  {{1, 2, 1, 2}, {1, 0.25}, {0, 0}});
  EXPECT_EQ(values(rows), (V{1, 2, 4, 8}));
}

TEST_F(ElementwiseEval, QuantizeToF8E4M3FN) {
  auto text = [](const std::string &attrs) {
    return "func.func @main(%x: tensor<3xf32>, %s: tensor<f32>, %z: tensor<f8E4M3FN>) -> "
           "tensor<3xf8E4M3FN> {\n  %0 = kiln.quantize %x, %s, %z " +
           attrs +
           " : (tensor<3xf32>, tensor<f32>, tensor<f8E4M3FN>) -> tensor<3xf8E4M3FN>\n"
           "  return %0 : tensor<3xf8E4M3FN>\n}";
  };
  // x / 2: 2000 -> 448 saturated; 2.125 / 2 = 1.0625 ties to 1; 2.375 / 2 = 1.1875 -> 1.25.
  EXPECT_EQ(values(run(text(""), {{2000, 2.125, 2.375}, {2}, {0}})), (V{448, 1, 1.25}));
  auto unsaturated = values(run(text("{saturate = false}"), {{2000, 2.125, 2.375}, {2}, {0}}));
  ASSERT_EQ(unsaturated.size(), 3u);
  EXPECT_TRUE(std::isnan(unsaturated[0]));
  EXPECT_EQ(unsaturated[1], 1);
}

TEST_F(ElementwiseEval, Dequantize) {
  auto out = run(R"(
    func.func @main(%x: tensor<3xi8>, %s: tensor<f32>, %z: tensor<i8>) -> tensor<3xf32> {
      %0 = kiln.dequantize %x, %s, %z : (tensor<3xi8>, tensor<f32>, tensor<i8>) -> tensor<3xf32>
      return %0 : tensor<3xf32>
    })",
                 {{-128, 0, 127}, {0.5}, {1}});
  EXPECT_EQ(values(out), (V{-64.5, -0.5, 63}));
  // Per-axis into f16: (x - z[c]) * s[c]; 255 * 2^-4 = 15.9375 is exact in f16.
  auto perAxis = run(R"(
    func.func @main(%x: tensor<2x2xui8>, %s: tensor<2xf16>, %z: tensor<2xui8>) -> tensor<2x2xf16> {
      %0 = kiln.dequantize %x, %s, %z {axis = 1 : i64}
        : (tensor<2x2xui8>, tensor<2xf16>, tensor<2xui8>) -> tensor<2x2xf16>
      return %0 : tensor<2x2xf16>
    })",
                     {{255, 255, 0, 10}, {0.0625, 2}, {0, 10}});
  EXPECT_EQ(values(perAxis), (V{15.9375, 490, 0, 0}));
}

} // namespace
