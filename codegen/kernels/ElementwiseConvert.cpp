//===- ElementwiseConvert.cpp - cast, quantize and dequantize kernels -----===//
//
// Conversions must be bit-exact with the interpreter (evalCast, evalQuantize, evalDequantize in
// ir/Interpreter/ElementwiseEval.cpp), so every path rounds exactly once from the exact value:
// conversions go straight from the source type (cvt.rn from integers and doubles, never
// through an intermediate float), and arithmetic happens in float only where float holds the
// exact intermediate result.
//
//===----------------------------------------------------------------------===//

#include "codegen/kernels/ElementwiseSource.h"

#include <algorithm>

namespace kiln::codegen::elementwise {

namespace {

std::string typeName(DType type) { return std::string(plan::dtypeName(type)); }

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

/// Statement converting an integer or bool value x0 to float type `out`, rounding once.
std::string integerToFloat(DType in, DType out, const std::string &saturation) {
  // Which cvt.rn family reads the source without widening it through float.
  std::string from = in == DType::I64   ? "ll"
                     : in == DType::U64 ? "ull"
                     : (in == DType::U8 || in == DType::U16 || in == DType::U32) ? "uint"
                                                                                    : "int";
  std::string cast = from == "int" ? "(int)" : from == "uint" ? "(unsigned int)" : "";
  switch (out) {
  case DType::F64: return "po[oo] = (double)x0;";
  case DType::F32: return "po[oo] = (float)x0;";
  case DType::F16: return "po[oo] = __" + from + "2half_rn(" + cast + "x0);";
  case DType::BF16: return "po[oo] = __" + from + "2bfloat16_rn(" + cast + "x0);";
  // The interpreter rounds integers to f8 from their double value; every value f8 can hold is
  // far below 2^53, so the double is exact wherever the result is finite.
  default: return "po[oo].__x = __nv_cvt_double_to_fp8((double)x0, " + saturation + ", __NV_E4M3);";
  }
}

/// Per-tensor or per-axis quantization parameters: the shape `scale` and `zero_point` take as
/// inputs (one broadcasting to `input`), or an error naming the op.
StatusOr<std::vector<int64_t>> quantParamShape(const OpDesc &op, const TensorDesc &input, const TensorDesc &scale,
                                               const TensorDesc &zeroPoint) {
  if (scale.shape.size() > 1)
    return op.error("scale must be rank 0 or 1, got shape " + shapeText(scale.shape));
  if (scale.shape != zeroPoint.shape)
    return op.error("scale " + shapeText(scale.shape) + " and zero_point " + shapeText(zeroPoint.shape) +
                    " must have one shape");
  int64_t count = scale.numElements();
  if (count == 1)
    return std::vector<int64_t>{}; // per-tensor, whatever the axis
  int64_t rank = static_cast<int64_t>(input.shape.size());
  int64_t axis = op.attrInt("axis", 1);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return op.error("axis " + std::to_string(op.attrInt("axis", 1)) + " is out of range for an input of rank " +
                    std::to_string(rank) + " with per-axis scales");
  if (input.shape[axis] != count)
    return op.error("per-axis scale has " + std::to_string(count) + " values, axis " + std::to_string(axis) +
                    " has " + std::to_string(input.shape[axis]));
  std::vector<int64_t> shape(input.shape.size(), 1);
  shape[axis] = count;
  return shape;
}

} // namespace

StatusOr<Kernel> castElement(const OpDesc &op) {
  if (Status s = checkOperands(op, 1); !s.isOk())
    return s;
  const DType in = op.operands[0]->dtype, out = op.results[0].dtype;
  if (op.results[0].shape != op.operands[0]->shape)
    return op.error("the result must have the input's shape");
  const std::string saturation = op.attrInt("saturate", 1) ? "__NV_SATFINITE" : "__NV_NOSAT";
  const bool inFloat = plan::isFloat(in), outFloat = plan::isFloat(out);

  Kernel kernel;
  kernel.name = "cast";
  kernel.result = out;
  kernel.shape = op.results[0].shape;
  std::string valueType = computeType(in);
  if (inFloat && outFloat) {
    if (in == DType::F64) {
      kernel.body = storeDouble(out, "x0", saturation == "__NV_SATFINITE");
    } else if (out == DType::F8E4M3FN) {
      kernel.body = "po[oo].__x = __nv_cvt_float_to_fp8(x0, " + saturation + ", __NV_E4M3);";
    } else {
      // f32/f16/bf16/f8 values are exact in float: one rounding (or none) to the result.
      kernel.body = out == DType::F64 ? "po[oo] = (double)x0;" : "kiln_st(po, oo, x0);";
    }
  } else if (inFloat) {
    // To integers: truncation toward zero, saturating, NaN -> 0; to bool: x != 0 (NaN is true).
    valueType = "double";
    kernel.body = storeDouble(out, "x0");
  } else if (outFloat) {
    kernel.body = integerToFloat(in, out, saturation);
  } else if (out == DType::Bool) {
    kernel.body = "po[oo] = (unsigned char)(x0 != 0);";
  } else {
    // Integer narrowing wraps (two's complement), as numpy astype; bool is 0 or 1.
    kernel.body = "po[oo] = (" + storageType(out) + ")x0;";
  }
  kernel.inputs.push_back(operandInput(op, 0, valueType));
  return kernel;
}

StatusOr<Kernel> quantizeElement(const OpDesc &op) {
  if (Status s = checkOperands(op, 3); !s.isOk())
    return s;
  const TensorDesc &x = *op.operands[0], &scale = *op.operands[1], &zeroPoint = *op.operands[2];
  const DType out = op.results[0].dtype;
  if (Status s = checkType(op, "input", x.dtype, TypeClass::Float); !s.isOk())
    return s;
  if (scale.dtype != x.dtype)
    return op.error("scale (" + typeName(scale.dtype) + ") must have the input's element type " + typeName(x.dtype));
  if (Status s = checkType(op, "result", out, TypeClass::Quant); !s.isOk())
    return s;
  if (zeroPoint.dtype != out)
    return op.error("zero_point (" + typeName(zeroPoint.dtype) + ") must have the result's element type " +
                    typeName(out));
  if (op.results[0].shape != x.shape)
    return op.error("the result must have the input's shape");
  auto paramShape = quantParamShape(op, x, scale, zeroPoint);
  if (!paramShape.isOk())
    return paramShape.status();

  // x / scale is a float32 division (f16/bf16/f8 widened first; exact in float), f64 stays
  // double: the quotient the interpreter rounds from.
  const std::string ct = x.dtype == DType::F64 ? "double" : "float";
  Kernel kernel;
  kernel.name = "quantize";
  kernel.result = out;
  kernel.shape = x.shape;
  kernel.inputs = {operandInput(op, 0, ct), operandInput(op, 1, ct), operandInput(op, 2, "double")};
  kernel.inputs[1].shape = kernel.inputs[2].shape = paramShape.value();
  std::string quotient = "const " + ct + " q = x0 / x1;\n  ";
  bool zeroIsZero = zeroPoint.floats && std::all_of(zeroPoint.floats->begin(), zeroPoint.floats->end(),
                                                    [](double z) { return z == 0; });
  if (out == DType::F8E4M3FN && ct == "float" && zeroIsZero) {
    // A symmetric scale (every FP8 plan's): the float quotient rounds to f8 directly, one
    // hardware conversion (cvt.rn.satfinite.e4m3), the same rounding as from double since q
    // is a float; the double path below costs a software conversion per element.
    kernel.body = quotient + "po[oo].__x = __nv_cvt_float_to_fp8(q, " +
                  (op.attrInt("saturate", 1) != 0 ? "__NV_SATFINITE" : "__NV_NOSAT") + ", __NV_E4M3);";
  } else if (out == DType::F8E4M3FN) {
    // The quotient plus zero point rounds to f8 (half to even); `saturate` clamps to +-448.
    kernel.body = quotient + storeDouble(out, "(double)q + x2", op.attrInt("saturate", 1) != 0);
  } else {
    // Round half to even (rint in the default mode), add the zero point, saturate (always for
    // integers); NaN becomes 0.
    kernel.body = quotient + storeDouble(out, std::string("(double)") + (ct == "float" ? "rintf" : "rint") + "(q) + x2");
  }
  return kernel;
}

StatusOr<Kernel> dequantizeElement(const OpDesc &op) {
  if (Status s = checkOperands(op, 3); !s.isOk())
    return s;
  const TensorDesc &x = *op.operands[0], &scale = *op.operands[1], &zeroPoint = *op.operands[2];
  const DType out = op.results[0].dtype;
  if (Status s = checkType(op, "input", x.dtype, TypeClass::Quant); !s.isOk())
    return s;
  if (zeroPoint.dtype != x.dtype)
    return op.error("zero_point (" + typeName(zeroPoint.dtype) + ") must have the input's element type " +
                    typeName(x.dtype));
  if (Status s = checkType(op, "scale", scale.dtype, TypeClass::Float); !s.isOk())
    return s;
  if (out != scale.dtype)
    return op.error("the result (" + typeName(out) + ") must have the scale's element type " + typeName(scale.dtype));
  if (op.results[0].shape != x.shape)
    return op.error("the result must have the input's shape");
  auto paramShape = quantParamShape(op, x, scale, zeroPoint);
  if (!paramShape.isOk())
    return paramShape.status();

  // The interpreter computes (x - zero_point) * scale in double and rounds once. Float gives the
  // same result when x - zero_point is exact in float and the float product is either exact
  // (narrow results) or, for f32, rounded once from a product that is exact in double.
  const int differenceBits = x.dtype == DType::I32 ? 33 : x.dtype == DType::F8E4M3FN ? 19 : 9;
  const int scaleBits = scale.dtype == DType::F64  ? 53
                        : scale.dtype == DType::F32 ? 24
                        : scale.dtype == DType::F16 ? 11
                        : scale.dtype == DType::BF16 ? 8
                                                     : 4;
  const bool inFloat = differenceBits <= 24 && out != DType::F64 &&
                       (out == DType::F32 ? differenceBits + scaleBits <= 53 : differenceBits + scaleBits <= 24);
  const std::string ct = inFloat ? "float" : "double";
  Kernel kernel;
  kernel.name = "dequantize";
  kernel.result = out;
  kernel.shape = x.shape;
  kernel.inputs = {operandInput(op, 0, ct), operandInput(op, 1, ct), operandInput(op, 2, ct)};
  kernel.inputs[1].shape = kernel.inputs[2].shape = paramShape.value();
  kernel.body = inFloat ? storeValue(out, "(x0 - x2) * x1") : storeDouble(out, "(x0 - x2) * x1");
  return kernel;
}

} // namespace kiln::codegen::elementwise
