//===- ElementwiseKernels.cpp - the elementwise family: prelude, ops, table ===//
//
// Each op here is a scalar expression over the inputs' values, mirroring the interpreter's
// scalar function (ir/Interpreter/ElementwiseEval.cpp); ElementwiseSource builds the kernel
// around it. Arithmetic happens in computeType: float for f32/f16/bf16/f8 (rounded once when
// stored), double for f64, the integer type itself for integers, where sums, differences and
// products go through unsigned 64-bit so they wrap instead of overflowing (undefined in C++;
// the interpreter wraps). Integer division or remainder by zero, and integer zero to a negative
// power, are errors in the interpreter; a kernel cannot report one, so they give 0.
//
//===----------------------------------------------------------------------===//

#include "codegen/kernels/ElementwiseSource.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

namespace kiln::codegen {

namespace {
constexpr std::string_view kPrelude = R"CUDA(
// A run of V elements moved by one vector access (16 bytes for the widest tensor of a kernel).
template <typename T, int V> struct alignas(sizeof(T) * V) kiln_ew_vec { T v[V]; };
// Integer division truncating toward zero; INT64_MIN / -1 wraps; x / 0 gives 0.
__device__ __forceinline__ long long kiln_ew_sdiv(long long a, long long b) {
  if (b == 0) return 0;
  if (b == -1) return (long long)(0ULL - (kiln_u64)a);
  return a / b;
}
__device__ __forceinline__ kiln_u64 kiln_ew_udiv(kiln_u64 a, kiln_u64 b) { return b == 0 ? 0ULL : a / b; }
// Remainder with the divisor's sign (Python), or the dividend's (C fmod) with cfmod; x % 0 gives 0.
__device__ __forceinline__ long long kiln_ew_smod(long long a, long long b, bool cfmod) {
  if (b == 0 || b == -1) return 0;
  long long r = a % b;
  if (!cfmod && r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
__device__ __forceinline__ kiln_u64 kiln_ew_umod(kiln_u64 a, kiln_u64 b) { return b == 0 ? 0ULL : a % b; }
__device__ __forceinline__ float kiln_ew_pymod(float a, float b, bool cfmod) {
  float r = fmodf(a, b);
  if (!cfmod && r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
__device__ __forceinline__ double kiln_ew_pymod(double a, double b, bool cfmod) {
  double r = fmod(a, b);
  if (!cfmod && r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
// Integer power by squaring, wrapping; a negative exponent truncates 1 / base^-e toward zero
// (0 for a zero base, an error in the interpreter).
__device__ __forceinline__ kiln_u64 kiln_ew_ipow_u(kiln_u64 base, kiln_u64 e) {
  kiln_u64 r = 1;
  while (e) {
    if (e & 1) r *= base;
    base *= base;
    e >>= 1;
  }
  return r;
}
__device__ __forceinline__ long long kiln_ew_ipow_s(long long base, long long e) {
  if (e < 0) {
    if (base == 1) return 1;
    if (base == -1) return (e % 2 == 0) ? 1 : -1;
    return 0;
  }
  return (long long)kiln_ew_ipow_u((kiln_u64)base, (kiln_u64)e);
}
// Minimum and maximum in which NaN wins (x != x only for NaN; false for integers).
template <typename T> __device__ __forceinline__ T kiln_ew_min(T a, T b) {
  if (a != a || b != b) return a != a ? a : b;
  return b < a ? b : a;
}
template <typename T> __device__ __forceinline__ T kiln_ew_max(T a, T b) {
  if (a != a || b != b) return a != a ? a : b;
  return b > a ? b : a;
}
// min(max(x, lo), hi): lo > hi gives hi; NaN x stays NaN.
template <typename T> __device__ __forceinline__ T kiln_ew_clip(T x, T lo, T hi) {
  if (x != x) return x;
  x = x < lo ? lo : x;
  return x > hi ? hi : x;
}
// Float to integer as ONNX Cast (the interpreter's storeDouble): NaN is 0, truncation toward
// zero, saturation at the type's range. lo and hi are the bounds of a type narrower than 64 bits.
__device__ __forceinline__ long long kiln_ew_f2s(double v, double lo, double hi) {
  if (isnan(v)) return 0;
  const double t = trunc(v);
  return t <= lo ? (long long)lo : t >= hi ? (long long)hi : (long long)t;
}
__device__ __forceinline__ long long kiln_ew_f2s64(double v) {
  if (isnan(v)) return 0;
  const double t = trunc(v);
  if (t <= -9223372036854775808.0) return -9223372036854775807LL - 1;
  if (t >= 9223372036854775808.0) return 9223372036854775807LL;
  return (long long)t;
}
__device__ __forceinline__ kiln_u64 kiln_ew_f2u(double v, double hi) {
  if (isnan(v)) return 0;
  const double t = trunc(v);
  return t <= 0.0 ? 0ULL : t >= hi ? (kiln_u64)hi : (kiln_u64)t;
}
__device__ __forceinline__ kiln_u64 kiln_ew_f2u64(double v) {
  if (isnan(v)) return 0;
  const double t = trunc(v);
  if (t <= 0.0) return 0;
  if (t >= 18446744073709551616.0) return ~0ULL;
  return (kiln_u64)t;
}
)CUDA";

using namespace elementwise;

/// The element type an expression is written for.
struct Scalar {
  DType type;
  std::string ct; // computeType(type)
  bool isFloat, isSigned, isUnsigned;

  explicit Scalar(DType t)
      : type(t), ct(computeType(t)), isFloat(plan::isFloat(t)), isSigned(isSignedInt(t)),
        isUnsigned(isUnsignedInt(t)) {}
  std::string lit(double value) const { return literalAs(ct, value); }
  /// `text` with $f replaced by the float math suffix ("f", or "" for double) and $T by ct.
  std::string sub(std::string text) const {
    for (size_t at; (at = text.find("$f")) != std::string::npos;)
      text.replace(at, 2, ct == "float" ? "f" : "");
    for (size_t at; (at = text.find("$T")) != std::string::npos;)
      text.replace(at, 2, ct);
    return text;
  }
};

std::string shortName(const OpDesc &op) {
  return op.op.rfind("kiln.", 0) == 0 ? op.op.substr(5) : op.op;
}

using ExprFn = std::function<StatusOr<std::string>(const OpDesc &, const Scalar &)>;

struct Def {
  TypeClass cls;   // operand element types
  bool boolResult; // comparisons and float tests
  ExprFn expr;     // of x0 (and x1), values of computeType
};

ExprFn fixed(std::string text) {
  return [text](const OpDesc &, const Scalar &s) -> StatusOr<std::string> { return s.sub(text); };
}
/// One expression for floats, one for signed and one for unsigned integers.
ExprFn byKind(std::string forFloat, std::string forSigned, std::string forUnsigned) {
  return [=](const OpDesc &, const Scalar &s) -> StatusOr<std::string> {
    return s.sub(s.isFloat ? forFloat : s.isSigned ? forSigned : forUnsigned);
  };
}

//===-- Unary -------------------------------------------------------------===//

const std::map<std::string, Def> &unaryDefs() {
  static const std::map<std::string, Def> defs = [] {
    std::map<std::string, Def> d;
    auto floatOp = [&](const char *name, std::string text) { d[name] = {TypeClass::Float, false, fixed(text)}; };
    floatOp("kiln.sqrt", "sqrt$f(x0)");
    floatOp("kiln.reciprocal", "$T(1) / x0");
    floatOp("kiln.exp", "exp$f(x0)");
    floatOp("kiln.log", "log$f(x0)");
    floatOp("kiln.erf", "erf$f(x0)");
    floatOp("kiln.tanh", "tanh$f(x0)");
    floatOp("kiln.sigmoid", "$T(1) / ($T(1) + exp$f(-x0))");
    // log(1 + e^x) without overflow for large x.
    floatOp("kiln.softplus", "x0 > $T(0) ? x0 + log1p$f(exp$f(-x0)) : log1p$f(exp$f(x0))");
    // fmin/fmax drop a NaN operand; x0 * ... keeps NaN, as in the interpreter.
    floatOp("kiln.hard_swish", "x0 * fmax$f($T(0), fmin$f($T(1), x0 / $T(6) + $T(0.5)))");
    floatOp("kiln.floor", "floor$f(x0)");
    floatOp("kiln.ceil", "ceil$f(x0)");
    floatOp("kiln.round", "rint$f(x0)"); // the default rounding mode: half to even
    floatOp("kiln.sin", "sin$f(x0)");
    floatOp("kiln.cos", "cos$f(x0)");
    d["kiln.is_nan"] = {TypeClass::Float, true, fixed("isnan(x0)")};
    d["kiln.is_inf"] = {TypeClass::Float, true, [](const OpDesc &op, const Scalar &) -> StatusOr<std::string> {
                          bool negative = op.attrInt("detect_negative", 1) != 0;
                          bool positive = op.attrInt("detect_positive", 1) != 0;
                          if (negative && positive)
                            return std::string("isinf(x0)");
                          if (negative)
                            return std::string("isinf(x0) && x0 < 0");
                          if (positive)
                            return std::string("isinf(x0) && x0 > 0");
                          return std::string("false");
                        }};
    auto attrOp = [&](const char *name, std::function<std::string(const OpDesc &, const Scalar &)> make) {
      d[name] = {TypeClass::Float, false, [make](const OpDesc &op, const Scalar &s) -> StatusOr<std::string> {
                   return s.sub(make(op, s));
                 }};
    };
    attrOp("kiln.leaky_relu", [](const OpDesc &op, const Scalar &s) {
      return "x0 >= $T(0) ? x0 : " + s.lit(op.attrFloat("alpha", 0.01f)) + " * x0";
    });
    attrOp("kiln.elu", [](const OpDesc &op, const Scalar &s) {
      return "x0 >= $T(0) ? x0 : " + s.lit(op.attrFloat("alpha", 1.0f)) + " * expm1$f(x0)";
    });
    attrOp("kiln.selu", [](const OpDesc &op, const Scalar &s) {
      return s.lit(op.attrFloat("gamma", 1.05070102214813232421875f)) + " * (x0 > $T(0) ? x0 : " +
             s.lit(op.attrFloat("alpha", 1.67326319217681884765625f)) + " * expm1$f(x0))";
    });
    attrOp("kiln.hard_sigmoid", [](const OpDesc &op, const Scalar &s) {
      return "fmax$f($T(0), fmin$f($T(1), " + s.lit(op.attrFloat("alpha", 0.2f)) + " * x0 + " +
             s.lit(op.attrFloat("beta", 0.5f)) + "))";
    });
    d["kiln.gelu"] = {TypeClass::Float, false, [](const OpDesc &op, const Scalar &s) -> StatusOr<std::string> {
                        std::string approximate = op.attrString("approximate", "none");
                        if (approximate == "none")
                          return s.sub("$T(0.5) * x0 * ($T(1) + erf$f(x0 * $T(0.70710678118654752440)))");
                        if (approximate == "tanh")
                          return s.sub("$T(0.5) * x0 * ($T(1) + tanh$f($T(0.79788456080286535588) * "
                                       "(x0 + $T(0.044715) * x0 * x0 * x0)))");
                        return op.error("approximate = \"" + approximate +
                                        "\" is not supported; it must be \"none\" or \"tanh\"");
                      }};
    d["kiln.relu"] = {TypeClass::Numeric, false, byKind("x0 < $T(0) ? $T(0) : x0", "x0 < 0 ? ($T)0 : x0", "x0")};
    d["kiln.neg"] = {TypeClass::Numeric, false, byKind("-x0", "0ULL - (kiln_u64)x0", "0ULL - (kiln_u64)x0")};
    // Not fabs: the interpreter's x < 0 ? -x : x keeps -0 as -0.
    d["kiln.abs"] = {TypeClass::Numeric, false,
                     byKind("x0 < $T(0) ? -x0 : x0", "x0 < 0 ? 0ULL - (kiln_u64)x0 : (kiln_u64)x0", "x0")};
    d["kiln.sign"] = {TypeClass::Numeric, false,
                      byKind("isnan(x0) ? x0 : $T((x0 > $T(0)) - (x0 < $T(0)))", "(x0 > 0) - (x0 < 0)", "x0 > 0 ? 1 : 0")};
    d["kiln.not"] = {TypeClass::Bool, false, fixed("!x0")};
    return d;
  }();
  return defs;
}

StatusOr<Kernel> unaryElement(const OpDesc &op) {
  auto it = unaryDefs().find(op.op);
  if (it == unaryDefs().end())
    return op.error("not a unary op of the elementwise family");
  const Def &def = it->second;
  if (Status s = checkOperands(op, 1); !s.isOk())
    return s;
  const TensorDesc &input = *op.operands[0];
  if (Status s = checkType(op, "input", input.dtype, def.cls); !s.isOk())
    return s;
  const TensorDesc &result = op.results[0];
  DType expected = def.boolResult ? DType::Bool : input.dtype;
  if (result.dtype != expected)
    return op.error("result has element type " + std::string(plan::dtypeName(result.dtype)) + ", expected " +
                    std::string(plan::dtypeName(expected)));
  if (result.shape != input.shape)
    return op.error("the result must have the input's shape");
  Scalar s(input.dtype);
  auto expr = def.expr(op, s);
  if (!expr.isOk())
    return expr.status();
  Kernel kernel;
  kernel.name = shortName(op);
  kernel.inputs.push_back(operandInput(op, 0, s.ct));
  kernel.result = result.dtype;
  kernel.shape = result.shape;
  kernel.body = storeValue(result.dtype, expr.value());
  return kernel;
}

//===-- Binary ------------------------------------------------------------===//

const std::map<std::string, Def> &binaryDefs() {
  static const std::map<std::string, Def> defs = [] {
    std::map<std::string, Def> d;
    auto numeric = [&](const char *name, std::string f, std::string si, std::string ui) {
      d[name] = {TypeClass::Numeric, false, byKind(f, si, ui)};
    };
    numeric("kiln.add", "x0 + x1", "(kiln_u64)x0 + (kiln_u64)x1", "(kiln_u64)x0 + (kiln_u64)x1");
    numeric("kiln.sub", "x0 - x1", "(kiln_u64)x0 - (kiln_u64)x1", "(kiln_u64)x0 - (kiln_u64)x1");
    numeric("kiln.mul", "x0 * x1", "(kiln_u64)x0 * (kiln_u64)x1", "(kiln_u64)x0 * (kiln_u64)x1");
    numeric("kiln.div", "x0 / x1", "kiln_ew_sdiv(x0, x1)", "kiln_ew_udiv(x0, x1)");
    numeric("kiln.min", "kiln_ew_min(x0, x1)", "kiln_ew_min(x0, x1)", "kiln_ew_min(x0, x1)");
    numeric("kiln.max", "kiln_ew_max(x0, x1)", "kiln_ew_max(x0, x1)", "kiln_ew_max(x0, x1)");
    // x1 is the slope; unsigned x is never negative.
    numeric("kiln.prelu", "x0 < $T(0) ? x1 * x0 : x0", "x0 < 0 ? (kiln_u64)x1 * (kiln_u64)x0 : (kiln_u64)x0", "x0");
    d["kiln.and"] = {TypeClass::Bool, false, fixed("x0 && x1")};
    d["kiln.or"] = {TypeClass::Bool, false, fixed("x0 || x1")};
    d["kiln.xor"] = {TypeClass::Bool, false, fixed("x0 != x1")};
    // Every comparison with NaN is false.
    d["kiln.equal"] = {TypeClass::Numeric, true, fixed("x0 == x1")};
    d["kiln.less"] = {TypeClass::Numeric, true, fixed("x0 < x1")};
    d["kiln.less_equal"] = {TypeClass::Numeric, true, fixed("x0 <= x1")};
    d["kiln.greater"] = {TypeClass::Numeric, true, fixed("x0 > x1")};
    d["kiln.greater_equal"] = {TypeClass::Numeric, true, fixed("x0 >= x1")};
    return d;
  }();
  return defs;
}

/// Checks a same-typed binary op; its operands' element type.
StatusOr<DType> checkBinary(const OpDesc &op, TypeClass cls, bool boolResult) {
  if (Status s = checkOperands(op, 2); !s.isOk())
    return s;
  DType type = op.operands[0]->dtype;
  if (Status s = checkType(op, "lhs", type, cls); !s.isOk())
    return s;
  if (op.operands[1]->dtype != type)
    return op.error("operand element types differ (" + std::string(plan::dtypeName(type)) + " vs " +
                    std::string(plan::dtypeName(op.operands[1]->dtype)) + "); insert a kiln.cast");
  DType expected = boolResult ? DType::Bool : type;
  if (op.results[0].dtype != expected)
    return op.error("result has element type " + std::string(plan::dtypeName(op.results[0].dtype)) + ", expected " +
                    std::string(plan::dtypeName(expected)));
  return type;
}

StatusOr<Kernel> binaryElement(const OpDesc &op) {
  auto it = binaryDefs().find(op.op);
  if (it == binaryDefs().end())
    return op.error("not a binary op of the elementwise family");
  const Def &def = it->second;
  auto type = checkBinary(op, def.cls, def.boolResult);
  if (!type.isOk())
    return type.status();
  Scalar s(type.value());
  auto expr = def.expr(op, s);
  if (!expr.isOk())
    return expr.status();
  Kernel kernel;
  kernel.name = shortName(op);
  kernel.inputs = {operandInput(op, 0, s.ct), operandInput(op, 1, s.ct)};
  kernel.result = op.results[0].dtype;
  kernel.shape = op.results[0].shape;
  kernel.body = storeValue(kernel.result, expr.value());
  return kernel;
}

StatusOr<Kernel> modElement(const OpDesc &op) {
  auto type = checkBinary(op, TypeClass::Numeric, false);
  if (!type.isOk())
    return type.status();
  Scalar s(type.value());
  const std::string cfmod = op.attrInt("fmod", 0) ? "true" : "false";
  Kernel kernel;
  kernel.name = shortName(op);
  kernel.result = s.type;
  kernel.shape = op.results[0].shape;
  // f16/bf16/f8: fmod is exact in float, but r + b is not; the interpreter rounds it once from
  // the exact value, so it is done in double and rounded once when stored.
  bool narrow = s.isFloat && s.type != DType::F32 && s.type != DType::F64;
  std::string valueType = narrow ? "double" : s.ct;
  kernel.inputs = {operandInput(op, 0, valueType), operandInput(op, 1, valueType)};
  if (s.isFloat)
    kernel.body = narrow ? storeDouble(s.type, "kiln_ew_pymod(x0, x1, " + cfmod + ")")
                         : storeValue(s.type, "kiln_ew_pymod(x0, x1, " + cfmod + ")");
  else if (s.isSigned)
    kernel.body = storeValue(s.type, "kiln_ew_smod(x0, x1, " + cfmod + ")");
  else
    kernel.body = storeValue(s.type, "kiln_ew_umod(x0, x1)");
  return kernel;
}

/// True when the constant operand holds only the value 2 (x ** 2 is x * x, exactly).
bool isConstantTwo(const TensorDesc &t) {
  if (t.floats)
    return !t.floats->empty() && std::all_of(t.floats->begin(), t.floats->end(), [](double v) { return v == 2.0; });
  if (t.ints)
    return !t.ints->empty() && std::all_of(t.ints->begin(), t.ints->end(), [](int64_t v) { return v == 2; });
  return false;
}

StatusOr<Kernel> powElement(const OpDesc &op) {
  if (Status s = checkOperands(op, 2); !s.isOk())
    return s;
  DType base = op.operands[0]->dtype, exponent = op.operands[1]->dtype;
  if (Status s = checkType(op, "base (lhs)", base, TypeClass::Numeric); !s.isOk())
    return s;
  if (Status s = checkType(op, "exponent (rhs)", exponent, TypeClass::Numeric); !s.isOk())
    return s;
  if (op.results[0].dtype != base)
    return op.error("result must have the base's element type " + std::string(plan::dtypeName(base)));
  Scalar s(base);
  Kernel kernel;
  kernel.name = shortName(op);
  kernel.result = base;
  kernel.shape = op.results[0].shape;
  if (base != exponent) {
    // Mixed types: pow of both values in f64, stored in the base's type (ONNX Pow).
    kernel.inputs = {operandInput(op, 0, "double"), operandInput(op, 1, "double")};
    kernel.body = storeDouble(base, "pow(x0, x1)");
    return kernel;
  }
  kernel.inputs = {operandInput(op, 0, s.ct), operandInput(op, 1, s.ct)};
  if (s.isFloat)
    kernel.body = storeValue(base, isConstantTwo(*op.operands[1]) ? "x0 * x0" : s.sub("pow$f(x0, x1)"));
  else if (s.isSigned)
    kernel.body = storeValue(base, "kiln_ew_ipow_s(x0, x1)");
  else
    kernel.body = storeValue(base, "kiln_ew_ipow_u(x0, x1)");
  return kernel;
}

//===-- Ternary -----------------------------------------------------------===//

StatusOr<Kernel> whereElement(const OpDesc &op) {
  if (Status s = checkOperands(op, 3); !s.isOk())
    return s;
  if (Status s = checkType(op, "condition", op.operands[0]->dtype, TypeClass::Bool); !s.isOk())
    return s;
  DType type = op.operands[1]->dtype;
  if (op.operands[2]->dtype != type || op.results[0].dtype != type)
    return op.error("x, y and the result must have one element type");
  // Values pass through computeType unchanged (every stored value is exact in it).
  Scalar s(type);
  Kernel kernel;
  kernel.name = shortName(op);
  kernel.inputs = {operandInput(op, 0, "bool"), operandInput(op, 1, s.ct), operandInput(op, 2, s.ct)};
  kernel.result = type;
  kernel.shape = op.results[0].shape;
  kernel.body = storeValue(type, "x0 ? x1 : x2");
  return kernel;
}

StatusOr<Kernel> clipElement(const OpDesc &op) {
  if (Status s = checkOperands(op, 3); !s.isOk())
    return s;
  DType type = op.operands[0]->dtype;
  if (Status s = checkType(op, "input", type, TypeClass::Numeric); !s.isOk())
    return s;
  if (op.operands[1]->dtype != type || op.operands[2]->dtype != type || op.results[0].dtype != type)
    return op.error("min, max and the result must have the input's element type");
  Scalar s(type);
  Kernel kernel;
  kernel.name = shortName(op);
  kernel.inputs = {operandInput(op, 0, s.ct), operandInput(op, 1, s.ct), operandInput(op, 2, s.ct)};
  kernel.result = type;
  kernel.shape = op.results[0].shape;
  kernel.body = storeValue(type, "kiln_ew_clip(x0, x1, x2)");
  return kernel;
}

using ElementFn = StatusOr<Kernel> (*)(const OpDesc &);

const std::map<std::string, ElementFn> &elementFunctions() {
  static const std::map<std::string, ElementFn> functions = [] {
    std::map<std::string, ElementFn> f;
    for (const auto &entry : unaryDefs())
      f[entry.first] = unaryElement;
    for (const auto &entry : binaryDefs())
      f[entry.first] = binaryElement;
    f["kiln.mod"] = modElement;
    f["kiln.pow"] = powElement;
    f["kiln.where"] = whereElement;
    f["kiln.clip"] = clipElement;
    f["kiln.cast"] = castElement;
    f["kiln.quantize"] = quantizeElement;
    f["kiln.dequantize"] = dequantizeElement;
    return f;
  }();
  return functions;
}

StatusOr<EmittedKernels> emitElementwise(const OpDesc &op, const EmitContext &context) {
  auto kernel = describeElement(op);
  if (!kernel.isOk())
    return kernel.status();
  return emitKernel(op, context, kernel.value());
}

} // namespace

std::string_view elementwisePrelude() { return kPrelude; }

StatusOr<elementwise::Kernel> elementwise::describeElement(const OpDesc &op) {
  auto it = elementFunctions().find(op.op);
  if (it == elementFunctions().end())
    return op.error("is not an op of the elementwise family");
  return it->second(op);
}

void registerElementwiseKernels(KernelEmitterTable &table) {
  for (const auto &entry : elementFunctions())
    table.add(entry.first, emitElementwise);
}

} // namespace kiln::codegen
