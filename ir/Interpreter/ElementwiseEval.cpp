//===- ElementwiseEval.cpp - elementwise ops of the reference interpreter --===//
//
// Unary, broadcasting binary/ternary, cast and (de)quantization evaluators.
//
// Every op here goes through one helper, `mapElements`: it walks the result's index space,
// finds the element each operand contributes (numpy broadcasting) and calls the op's scalar
// function on values of one C++ type picked from the operands' element type -- double for float
// types (the stored values are exact, so the function computes on the true inputs), int64_t for
// signed integers and i1, uint64_t for unsigned integers. The scalar result is then rounded to
// the result element type once: round half to even for floats (exact f16/bf16/f8 rounding
// through roundToFloat), two's complement wrapping for integers. Most scalar functions are generic lambdas, so one body
// serves floats and integers alike.
//
//===----------------------------------------------------------------------===//

#include "ir/Interpreter/Interpreter.h"
#include "ir/KilnOps.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/APInt.h"

#include <cmath>
#include <limits>
#include <numbers>
#include <optional>
#include <type_traits>

using namespace mlir;

namespace kiln::interp {
namespace {

//===----------------------------------------------------------------------===//
// Scalar helpers
//===----------------------------------------------------------------------===//

template <typename T> constexpr bool kIsFloat = std::is_floating_point_v<T>;

template <typename T> bool isNaN(T x) {
  if constexpr (kIsFloat<T>)
    return std::isnan(x);
  else
    return false;
}

// Integer arithmetic wraps (two's complement) instead of overflowing: the result is wrapped to
// the element width afterwards anyway, and signed overflow in C++ is undefined.
template <typename T> T wrapAdd(T a, T b) {
  if constexpr (kIsFloat<T>)
    return a + b;
  else
    return T(uint64_t(a) + uint64_t(b));
}
template <typename T> T wrapSub(T a, T b) {
  if constexpr (kIsFloat<T>)
    return a - b;
  else
    return T(uint64_t(a) - uint64_t(b));
}
template <typename T> T wrapMul(T a, T b) {
  if constexpr (kIsFloat<T>)
    return a * b;
  else
    return T(uint64_t(a) * uint64_t(b));
}
template <typename T> T wrapNeg(T a) { return wrapSub(T(0), a); }

/// Minimum and maximum in which NaN wins (ONNX Min/Max, numpy minimum/maximum).
template <typename T>
T nanMin(T a, T b) {
  if (isNaN(a) || isNaN(b))
    return isNaN(a) ? a : b;
  return b < a ? b : a;
}
template <typename T>
T nanMax(T a, T b) {
  if (isNaN(a) || isNaN(b))
    return isNaN(a) ? a : b;
  return b > a ? b : a;
}

/// Round half to even (ONNX Round, QuantizeLinear), independent of the FPU rounding mode.
double roundHalfEven(double x) {
  double r = std::floor(x);
  double diff = x - r; // NaN for infinities and NaN, so they pass through unchanged
  if (diff > 0.5 || (diff == 0.5 && std::fmod(r, 2.0) != 0.0))
    r += 1.0;
  return r;
}

/// Integer power by squaring (wrapping); a negative exponent truncates 1 / base^-e toward zero.
template <typename T> T intPow(T base, T exponent, bool &zeroToNegative) {
  if constexpr (std::is_signed_v<T>) {
    if (exponent < 0) {
      if (base == 0) {
        zeroToNegative = true;
        return 0;
      }
      if (base == 1)
        return 1;
      if (base == -1)
        return (exponent % 2 == 0) ? 1 : -1;
      return 0;
    }
  }
  T result = 1;
  uint64_t e = uint64_t(exponent);
  while (e) {
    if (e & 1)
      result = wrapMul(result, base);
    base = wrapMul(base, base);
    e >>= 1;
  }
  return result;
}

/// Stores scalar results in a tensor: floats round to the element type, integers wrap. The
/// element type is inspected once, not per element (type casts are costly in the inner loop).
class ScalarStore {
public:
  explicit ScalarStore(Tensor &out)
      : out_(out), float_(llvm::dyn_cast<FloatType>(out.element)),
        int_(llvm::dyn_cast<IntegerType>(out.element)) {
    if (float_)
      round_.emplace(float_);
  }

  template <typename R> void operator()(int64_t k, R r) const {
    if (float_) {
      out_.f[k] = (*round_)((double)r);
    } else if constexpr (kIsFloat<R>) {
      storeDouble(out_, k, r); // float -> integer by ONNX Cast rules
    } else {
      out_.i[k] = wrapToInteger((int64_t)r, int_);
    }
  }

private:
  Tensor &out_;
  FloatType float_;
  IntegerType int_;
  std::optional<FloatRounder> round_; // when float_
};

//===----------------------------------------------------------------------===//
// The broadcasting walk
//===----------------------------------------------------------------------===//

/// Calls visit(k, offsets) for every element k of a tensor of `outShape`, in row-major order;
/// offsets[j] is the element of operand j that element k reads under numpy broadcasting
/// (operands are right-aligned; missing leading axes and size-1 axes repeat). Fails when an
/// operand does not broadcast to `outShape`.
template <typename Visit>
llvm::Error forEachBroadcast(Operation *op, llvm::ArrayRef<int64_t> outShape,
                             llvm::ArrayRef<const Tensor *> operands, Visit visit) {
  size_t rank = outShape.size(), n = operands.size();
  // strides[j][d]: how far operand j's offset moves when output axis d advances by one.
  llvm::SmallVector<Shape, 3> strides(n, Shape(rank, 0));
  for (size_t j = 0; j < n; ++j) {
    const Shape &shape = operands[j]->shape;
    if (shape.size() > rank)
      return opError(op, "operand " + std::to_string(j) + " has a higher rank than the result");
    Shape own = stridesOf(shape);
    size_t lead = rank - shape.size();
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] != 1 && shape[d] != outShape[lead + d])
        return opError(op, "operand " + std::to_string(j) + " of shape " + formatShape(shape) +
                               " does not broadcast to " + formatShape(outShape));
      if (shape[d] != 1)
        strides[j][lead + d] = own[d];
    }
  }
  int64_t total = 1;
  for (int64_t dim : outShape)
    total *= dim;
  Shape index(rank, 0);
  llvm::SmallVector<int64_t, 3> offsets(n, 0);
  for (int64_t k = 0; k < total; ++k) {
    visit(k, llvm::ArrayRef<int64_t>(offsets));
    // Advance the index like an odometer, moving each operand's offset along.
    for (int d = (int)rank - 1; d >= 0; --d) {
      if (++index[d] < outShape[d]) {
        for (size_t j = 0; j < n; ++j)
          offsets[j] += strides[j][d];
        break;
      }
      for (size_t j = 0; j < n; ++j)
        offsets[j] -= strides[j][d] * (outShape[d] - 1);
      index[d] = 0;
    }
  }
  return llvm::Error::success();
}

/// Value k of `t` as T (double, int64_t or uint64_t; unsigned values are stored zero-extended).
template <typename T> T valueAs(const Tensor &t, int64_t k) {
  if constexpr (kIsFloat<T>)
    return t.f[k];
  else
    return T(t.i[k]);
}

/// The one elementwise helper: result(k) = fn(operand values at k) for the op's N operands (all
/// of one element type), broadcast, then stored in the op's result type.
template <size_t N, typename Fn>
llvm::Expected<Results> mapElements(Operation *op, llvm::ArrayRef<const Tensor *> operands, Fn fn) {
  if (operands.size() != N)
    return opError(op, "expected " + std::to_string(N) + " operands");
  Tensor out = Tensor::zeros(llvm::cast<RankedTensorType>(op->getResult(0).getType()));
  ScalarStore store(out);
  auto run = [&](auto tag) -> llvm::Error {
    using T = decltype(tag);
    return forEachBroadcast(op, out.shape, operands, [&](int64_t k, llvm::ArrayRef<int64_t> at) {
      if constexpr (N == 1)
        store(k, fn(valueAs<T>(*operands[0], at[0])));
      else if constexpr (N == 2)
        store(k, fn(valueAs<T>(*operands[0], at[0]), valueAs<T>(*operands[1], at[1])));
      else
        store(k, fn(valueAs<T>(*operands[0], at[0]), valueAs<T>(*operands[1], at[1]),
                    valueAs<T>(*operands[2], at[2])));
    });
  };
  const Tensor &first = *operands[0];
  llvm::Error err = first.isFloat()                     ? run(double())
                    : first.element.isUnsignedInteger() ? run(uint64_t())
                                                        : run(int64_t());
  if (err)
    return std::move(err);
  return oneResult(std::move(out));
}

/// An evaluator for an op whose meaning is the scalar function `Fn` of its N operands.
template <size_t N, auto Fn>
llvm::Expected<Results> evalMap(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  return mapElements<N>(op, operands, Fn);
}
template <auto Fn>
llvm::Expected<Results> evalUnary(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  return mapElements<1>(op, operands, Fn);
}
template <auto Fn>
llvm::Expected<Results> evalBinary(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  return mapElements<2>(op, operands, Fn);
}

//===----------------------------------------------------------------------===//
// Unary ops with attributes
//===----------------------------------------------------------------------===//

llvm::Expected<Results> evalLeakyRelu(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  double alpha = llvm::cast<LeakyReluOp>(op).getAlpha().convertToDouble();
  return mapElements<1>(op, operands, [=](double x) { return x >= 0 ? x : alpha * x; });
}

llvm::Expected<Results> evalElu(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  double alpha = llvm::cast<EluOp>(op).getAlpha().convertToDouble();
  return mapElements<1>(op, operands, [=](double x) { return x >= 0 ? x : alpha * std::expm1(x); });
}

llvm::Expected<Results> evalSelu(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  auto selu = llvm::cast<SeluOp>(op);
  double alpha = selu.getAlpha().convertToDouble();
  double gamma = selu.getGamma().convertToDouble();
  return mapElements<1>(op, operands,
                        [=](double x) { return gamma * (x > 0 ? x : alpha * std::expm1(x)); });
}

llvm::Expected<Results> evalHardSigmoid(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  auto hardSigmoid = llvm::cast<HardSigmoidOp>(op);
  double alpha = hardSigmoid.getAlpha().convertToDouble();
  double beta = hardSigmoid.getBeta().convertToDouble();
  return mapElements<1>(op, operands,
                        [=](double x) { return std::fmax(0.0, std::fmin(1.0, alpha * x + beta)); });
}

llvm::Expected<Results> evalGelu(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  if (llvm::cast<GeluOp>(op).getApproximate() == "tanh")
    return mapElements<1>(op, operands, [](double x) {
      const double c = std::sqrt(2.0 / std::numbers::pi);
      return 0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x)));
    });
  return mapElements<1>(
      op, operands, [](double x) { return 0.5 * x * (1.0 + std::erf(x / std::numbers::sqrt2)); });
}

llvm::Expected<Results> evalIsInf(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  auto isInf = llvm::cast<IsInfOp>(op);
  bool negative = isInf.getDetectNegative(), positive = isInf.getDetectPositive();
  return mapElements<1>(op, operands,
                        [=](double x) { return std::isinf(x) && (x < 0 ? negative : positive); });
}

//===----------------------------------------------------------------------===//
// Binary ops that can fail or take attributes
//===----------------------------------------------------------------------===//

llvm::Expected<Results> evalDiv(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  bool divideByZero = false;
  auto results = mapElements<2>(op, operands, [&](auto a, auto b) {
    using T = decltype(a);
    if constexpr (kIsFloat<T>) {
      return a / b;
    } else {
      if (b == 0) {
        divideByZero = true;
        return T(0);
      }
      if constexpr (std::is_signed_v<T>)
        if (b == -1)
          return wrapNeg(a); // INT64_MIN / -1 wraps instead of trapping
      return T(a / b);       // C++ integer division truncates toward zero, as ONNX Div does
    }
  });
  if (results && divideByZero)
    return opError(op, "integer division by zero");
  return results;
}

llvm::Expected<Results> evalMod(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  bool cFmod = llvm::cast<ModOp>(op).getFmod();
  bool divideByZero = false;
  auto results = mapElements<2>(op, operands, [&](auto a, auto b) {
    using T = decltype(a);
    T r;
    if constexpr (kIsFloat<T>) {
      r = std::fmod(a, b);
    } else {
      if (b == 0) {
        divideByZero = true;
        return T(0);
      }
      if constexpr (std::is_signed_v<T>)
        if (b == -1)
          return T(0);
      r = a % b; // the dividend's sign
    }
    // Without fmod the remainder takes the divisor's sign (Python/numpy %).
    if constexpr (std::is_signed_v<T>)
      if (!cFmod && r != 0 && ((r < 0) != (b < 0)))
        r += b;
    return r;
  });
  if (results && divideByZero)
    return opError(op, "integer modulo by zero");
  return results;
}

llvm::Expected<Results> evalPow(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  // The exponent may have another element type than the base (ONNX Pow): then compute in f64
  // from both values and store in the base's (the result's) type.
  if (operands.size() == 2 && operands[0]->element != operands[1]->element) {
    Tensor out = Tensor::zeros(llvm::cast<RankedTensorType>(op->getResult(0).getType()));
    llvm::Error err =
        forEachBroadcast(op, out.shape, operands, [&](int64_t k, llvm::ArrayRef<int64_t> at) {
          storeDouble(out, k, std::pow(operands[0]->getDouble(at[0]), operands[1]->getDouble(at[1])));
        });
    if (err)
      return std::move(err);
    return oneResult(std::move(out));
  }
  bool zeroToNegative = false;
  auto results = mapElements<2>(op, operands, [&](auto a, auto b) {
    using T = decltype(a);
    if constexpr (kIsFloat<T>)
      return std::pow(a, b);
    else
      return intPow<T>(a, b, zeroToNegative);
  });
  if (results && zeroToNegative)
    return opError(op, "integer zero raised to a negative power");
  return results;
}

/// condition ? x : y; x and y share the result's element type, so values are copied as stored.
llvm::Expected<Results> evalWhere(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  Tensor out = Tensor::zeros(llvm::cast<RankedTensorType>(op->getResult(0).getType()));
  const Tensor &cond = *operands[0], &x = *operands[1], &y = *operands[2];
  llvm::Error err =
      forEachBroadcast(op, out.shape, operands, [&](int64_t k, llvm::ArrayRef<int64_t> at) {
        const Tensor &pick = cond.i[at[0]] ? x : y;
        int64_t from = cond.i[at[0]] ? at[1] : at[2];
        if (out.isFloat())
          out.f[k] = pick.f[from];
        else
          out.i[k] = pick.i[from];
      });
  if (err)
    return std::move(err);
  return oneResult(std::move(out));
}

//===----------------------------------------------------------------------===//
// Cast
//===----------------------------------------------------------------------===//

/// An integer converted to a float type with one rounding (half to even). Integers beyond 2^53
/// would round twice through a double, so those convert through APFloat directly.
double integerToFloat(int64_t v, bool isUnsigned, FloatType type, bool saturate) {
  bool exactInDouble = isUnsigned ? uint64_t(v) <= (uint64_t(1) << 53)
                                  : (v >= -(int64_t(1) << 53) && v <= (int64_t(1) << 53));
  if (exactInDouble || llvm::isa<Float8E4M3FNType>(type))
    return roundToFloat(isUnsigned ? (double)uint64_t(v) : (double)v, type, saturate);
  llvm::APFloat f(type.getFloatSemantics());
  f.convertFromAPInt(llvm::APInt(64, uint64_t(v)), /*IsSigned=*/!isUnsigned,
                     llvm::APFloat::rmNearestTiesToEven);
  bool losesInfo = false;
  f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return f.convertToDouble();
}

llvm::Expected<Results> evalCast(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  auto cast = llvm::cast<CastOp>(op);
  return oneResult(castTensor(*operands[0], cast.getOutput().getType().getElementType(), cast.getSaturate()));
}

//===----------------------------------------------------------------------===//
// Quantization
//===----------------------------------------------------------------------===//

/// Which scale/zero-point element serves element k: 0 per-tensor, else the index along `axis`.
struct QuantParams {
  int64_t count = 1, stride = 1, dim = 1;
  int64_t indexOf(int64_t k) const { return count == 1 ? 0 : (k / stride) % dim; }
};

llvm::Expected<QuantParams> quantParams(Operation *op, const Tensor &input, const Tensor &scale,
                                        int64_t axis) {
  QuantParams p;
  p.count = scale.size();
  if (p.count == 1)
    return p;
  auto normalized = normalizeAxis(axis, (int64_t)input.shape.size(), "quantization axis");
  if (!normalized)
    return opError(op, llvm::toString(normalized.takeError()));
  p.dim = input.shape[*normalized];
  p.stride = stridesOf(input.shape)[*normalized];
  if (p.dim != p.count)
    return opError(op, "per-axis scale has " + std::to_string(p.count) + " values, axis has " +
                           std::to_string(p.dim));
  return p;
}

llvm::Expected<Results> evalQuantize(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  auto quantize = llvm::cast<QuantizeOp>(op);
  const Tensor &x = *operands[0], &scale = *operands[1], &zeroPoint = *operands[2];
  auto params = quantParams(op, x, scale, (int64_t)quantize.getAxis());
  if (!params)
    return params.takeError();
  Tensor out = Tensor::zeros(llvm::cast<RankedTensorType>(op->getResult(0).getType()));
  auto f8 = llvm::dyn_cast<FloatType>(out.element);
  // x / scale is a float32 division in ONNX (reference and runtimes alike; f16/bf16 inputs are
  // widened to float32 first), and the rounding below depends on that quotient, so it is rounded
  // to f32 here too; f64 inputs keep their double quotient.
  bool f32Quotient = !x.element.isF64();
  for (int64_t k = 0; k < x.size(); ++k) {
    int64_t c = params->indexOf(k);
    double q = x.f[k] / scale.f[c];
    if (f32Quotient)
      q = roundToFloat32(q);
    if (f8) {
      // The quotient rounds to the float type (half to even); `saturate` clamps to +-448.
      out.f[k] = roundToFloat(q + zeroPoint.f[c], f8, quantize.getSaturate());
      continue;
    }
    // Integer results always saturate to the type's range (storeDouble clamps).
    storeDouble(out, k, roundHalfEven(q) + zeroPoint.getDouble(c));
  }
  return oneResult(std::move(out));
}

llvm::Expected<Results> evalDequantize(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  auto dequantize = llvm::cast<DequantizeOp>(op);
  const Tensor &x = *operands[0], &scale = *operands[1], &zeroPoint = *operands[2];
  auto params = quantParams(op, x, scale, (int64_t)dequantize.getAxis());
  if (!params)
    return params.takeError();
  Tensor out = Tensor::zeros(llvm::cast<RankedTensorType>(op->getResult(0).getType()));
  for (int64_t k = 0; k < x.size(); ++k) {
    int64_t c = params->indexOf(k);
    storeDouble(out, k, (x.getDouble(k) - zeroPoint.getDouble(c)) * scale.f[c]);
  }
  return oneResult(std::move(out));
}

} // namespace

void registerElementwiseEvaluators(EvaluatorTable &table) {
  // Each lambda sits in parentheses so that a `>` in its body cannot end the template argument.
  // Float unary ops: the function of the exact input value, rounded once to the element type.
  table.add("kiln.sqrt", evalUnary<([](double x) { return std::sqrt(x); })>);
  table.add("kiln.reciprocal", evalUnary<([](double x) { return 1.0 / x; })>);
  table.add("kiln.exp", evalUnary<([](double x) { return std::exp(x); })>);
  table.add("kiln.log", evalUnary<([](double x) { return std::log(x); })>);
  table.add("kiln.erf", evalUnary<([](double x) { return std::erf(x); })>);
  table.add("kiln.tanh", evalUnary<([](double x) { return std::tanh(x); })>);
  table.add("kiln.sigmoid", evalUnary<([](double x) { return 1.0 / (1.0 + std::exp(-x)); })>);
  // log(1 + e^x) without overflow for large x.
  table.add("kiln.softplus", evalUnary<([](double x) {
              return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
            })>);
  table.add(
      "kiln.hard_swish",
      evalUnary<([](double x) { return x * std::fmax(0.0, std::fmin(1.0, x / 6.0 + 0.5)); })>);
  table.add("kiln.floor", evalUnary<([](double x) { return std::floor(x); })>);
  table.add("kiln.ceil", evalUnary<([](double x) { return std::ceil(x); })>);
  table.add("kiln.round", evalUnary<([](double x) { return roundHalfEven(x); })>);
  table.add("kiln.sin", evalUnary<([](double x) { return std::sin(x); })>);
  table.add("kiln.cos", evalUnary<([](double x) { return std::cos(x); })>);
  table.add("kiln.is_nan", evalUnary<([](double x) { return std::isnan(x); })>);
  table.add("kiln.leaky_relu", evalLeakyRelu);
  table.add("kiln.elu", evalElu);
  table.add("kiln.selu", evalSelu);
  table.add("kiln.hard_sigmoid", evalHardSigmoid);
  table.add("kiln.gelu", evalGelu);
  table.add("kiln.is_inf", evalIsInf);

  // Numeric unary ops (floats and integers; NaN passes through).
  table.add("kiln.relu", evalUnary<([](auto x) { return x < 0 ? decltype(x)(0) : x; })>);
  table.add("kiln.neg", evalUnary<([](auto x) { return wrapNeg(x); })>);
  table.add("kiln.abs", evalUnary<([](auto x) { return x < 0 ? wrapNeg(x) : x; })>);
  table.add("kiln.sign",
            evalUnary<([](auto x) { return isNaN(x) ? x : decltype(x)((x > 0) - (x < 0)); })>);
  table.add("kiln.not", evalUnary<([](auto x) { return x == 0; })>);

  // Broadcasting binary ops.
  table.add("kiln.add", evalBinary<([](auto a, auto b) { return wrapAdd(a, b); })>);
  table.add("kiln.sub", evalBinary<([](auto a, auto b) { return wrapSub(a, b); })>);
  table.add("kiln.mul", evalBinary<([](auto a, auto b) { return wrapMul(a, b); })>);
  table.add("kiln.div", evalDiv);
  table.add("kiln.pow", evalPow);
  table.add("kiln.mod", evalMod);
  table.add("kiln.min", evalBinary<([](auto a, auto b) { return nanMin(a, b); })>);
  table.add("kiln.max", evalBinary<([](auto a, auto b) { return nanMax(a, b); })>);
  table.add("kiln.prelu",
            evalBinary<([](auto x, auto slope) { return x < 0 ? wrapMul(slope, x) : x; })>);
  table.add("kiln.and", evalBinary<([](auto a, auto b) { return a != 0 && b != 0; })>);
  table.add("kiln.or", evalBinary<([](auto a, auto b) { return a != 0 || b != 0; })>);
  table.add("kiln.xor", evalBinary<([](auto a, auto b) { return (a != 0) != (b != 0); })>);
  // Every comparison with NaN is false (NaN equals nothing, itself included).
  table.add("kiln.equal", evalBinary<([](auto a, auto b) { return a == b; })>);
  table.add("kiln.less", evalBinary<([](auto a, auto b) { return a < b; })>);
  table.add("kiln.less_equal", evalBinary<([](auto a, auto b) { return a <= b; })>);
  table.add("kiln.greater", evalBinary<([](auto a, auto b) { return a > b; })>);
  table.add("kiln.greater_equal", evalBinary<([](auto a, auto b) { return a >= b; })>);

  // Ternary ops. Clip: min(max(x, lo), hi), so lo > hi gives hi everywhere (ONNX); NaN stays.
  table.add("kiln.where", evalWhere);
  table.add("kiln.clip", evalMap<3, ([](auto x, auto lo, auto hi) {
                                   if (isNaN(x))
                                     return x;
                                   x = x < lo ? lo : x;
                                   return x > hi ? hi : x;
                                 })>);

  table.add("kiln.cast", evalCast);
  table.add("kiln.quantize", evalQuantize);
  table.add("kiln.dequantize", evalDequantize);
}

Tensor castTensor(const Tensor &in, Type element, bool saturate) {
  Tensor out = Tensor::zeros(RankedTensorType::get(in.shape, element));
  auto outFloat = llvm::dyn_cast<FloatType>(out.element);
  auto outInt = llvm::dyn_cast<IntegerType>(out.element);
  bool inUnsigned = in.element.isUnsignedInteger();
  if (in.isFloat() && outFloat) {
    FloatRounder round(outFloat, saturate);
    for (int64_t k = 0; k < in.size(); ++k)
      out.f[k] = round(in.f[k]);
    return out;
  }
  for (int64_t k = 0; k < in.size(); ++k) {
    if (in.isFloat())
      storeDouble(out, k, in.f[k]); // truncation toward zero, saturating; bool is x != 0
    else if (outFloat)
      out.f[k] = integerToFloat(in.i[k], inUnsigned, outFloat, saturate);
    else
      out.i[k] = wrapToInteger(in.i[k], outInt); // integer narrowing wraps, as numpy astype
  }
  return out;
}

} // namespace kiln::interp
