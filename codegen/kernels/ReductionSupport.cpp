//===- ReductionSupport.cpp - shared pieces of the reduction family --------===//

#include "codegen/kernels/ReductionSupport.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace kiln::codegen::reduction {

bool isUnsignedInt(DType type) {
  return type == DType::U8 || type == DType::U16 || type == DType::U32 || type == DType::U64;
}

bool isSignedInt(DType type) {
  return type == DType::I8 || type == DType::I16 || type == DType::I32 || type == DType::I64;
}

std::string accType(DType type) {
  switch (type) {
  case DType::F64:
  case DType::F32: return "double";
  case DType::F16:
  case DType::BF16:
  case DType::F8E4M3FN: return "float";
  default: return "unsigned long long";
  }
}

std::string loadAcc(DType type, const std::string &ptr, const std::string &off) {
  std::string load = "kiln_ld(" + ptr + ", " + off + ")";
  if (plan::isFloat(type))
    return "((" + accType(type) + ")" + load + ")";
  // Sign-extend signed integers before reinterpreting as the unsigned accumulator.
  if (isSignedInt(type))
    return "((unsigned long long)(long long)" + load + ")";
  return "((unsigned long long)" + load + ")";
}

std::string valueType(DType type) { return plan::isFloat(type) ? computeType(type) : storageType(type); }

std::string loadValue(DType type, const std::string &ptr, const std::string &off) {
  return "((" + valueType(type) + ")kiln_ld(" + ptr + ", " + off + "))";
}

std::string mathFn(const std::string &name, const std::string &type) {
  return type == "float" ? name + "f" : name;
}

std::string typedLiteral(const std::string &type, double value) {
  if (type == "float" || type == "double") {
    if (std::isinf(value))
      return infinity(type, value < 0);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", value);
    std::string text = buf;
    if (text.find_first_of(".eE") == std::string::npos)
      text += ".0";
    return type == "float" ? "((float)" + text + ")" : text;
  }
  if (type == "unsigned long long")
    return std::to_string(static_cast<unsigned long long>(value)) + "ULL";
  return "((" + type + ")" + literalInt(static_cast<int64_t>(value)) + ")";
}

std::string infinity(const std::string &type, bool negative) {
  std::string inf = type == "float" ? "INFINITY" : "((double)INFINITY)";
  return negative ? "(-" + inf + ")" : inf;
}

namespace {
int bitsOf(DType type) { return static_cast<int>(plan::dtypeBytes(type)) * 8; }
} // namespace

std::string intLowest(DType type) {
  if (isUnsignedInt(type))
    return "0ULL";
  int bits = bitsOf(type);
  return literalInt(bits == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t(1) << (bits - 1)));
}

std::string intHighest(DType type) {
  int bits = bitsOf(type);
  if (isUnsignedInt(type))
    return std::to_string(bits == 64 ? std::numeric_limits<uint64_t>::max() : (uint64_t(1) << bits) - 1) + "ULL";
  return literalInt(bits == 64 ? std::numeric_limits<int64_t>::max() : (int64_t(1) << (bits - 1)) - 1);
}

std::string saturateToInt(DType type, const std::string &value) {
  std::string call = isUnsignedInt(type) ? "kiln_red_sat_u(" + value + ", " + intHighest(type) + ")"
                                         : "kiln_red_sat_s(" + value + ", " + intLowest(type) + ", " +
                                               intHighest(type) + ")";
  return "((" + storageType(type) + ")" + call + ")";
}

std::string param(DType type, const std::string &name, bool isConst) {
  return std::string(isConst ? "const " : "") + storageType(type) + " *__restrict__ " + name;
}

std::string substitute(std::string text, const std::map<std::string, std::string> &values) {
  for (const auto &[key, value] : values) {
    std::string token = "${" + key + "}";
    for (size_t at = text.find(token); at != std::string::npos; at = text.find(token, at + value.size()))
      text.replace(at, token.size(), value);
  }
  return text;
}

std::string offsetExpr(const Dims &dims, const std::string &var) {
  if (dims.empty())
    return "0LL";
  std::string expr;
  int64_t after = 1;
  for (int64_t i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) {
    auto [size, stride] = dims[i];
    std::string coord = after == 1 ? var : "(" + var + " / " + literalInt(after) + ")";
    if (i != 0) // the outermost coordinate needs no modulo: var is below the total
      coord = "(" + coord + " % " + literalInt(size) + ")";
    std::string term = stride == 1 ? coord : coord + " * " + literalInt(stride);
    expr = expr.empty() ? term : term + " + " + expr;
    after *= size;
  }
  return "(" + expr + ")";
}

std::string warpReduce(const std::string &x, const CombineFn &combine) {
  return "for (int kiln_m = 16; kiln_m > 0; kiln_m >>= 1) " + x + " = " +
         combine(x, "__shfl_xor_sync(0xffffffffu, " + x + ", kiln_m)") + ";\n";
}

std::string blockReduce(const std::string &x, const std::string &sharedName, int threads,
                        const CombineFn &combine) {
  int warps = threads / 32;
  std::string s = warpReduce(x, combine);
  if (warps == 1)
    return s;
  s += "if (threadIdx.x % 32 == 0) " + sharedName + "[threadIdx.x / 32] = " + x + ";\n";
  s += "__syncthreads();\n";
  s += x + " = " + sharedName + "[0];\n";
  s += "for (int kiln_w = 1; kiln_w < " + std::to_string(warps) + "; ++kiln_w) " + x + " = " +
       combine(x, sharedName + "[kiln_w]") + ";\n";
  // The next use of the shared slots must wait until every thread has read them.
  s += "__syncthreads();\n";
  return s;
}

KernelLaunch launch(std::string function, int64_t blocks, int threads, std::vector<KernelArg> args) {
  KernelLaunch l;
  l.function = std::move(function);
  l.grid = {static_cast<uint32_t>(std::clamp<int64_t>(blocks, 1, kMaxBlocks)), 1, 1};
  l.block = {static_cast<uint32_t>(threads), 1, 1};
  l.args = std::move(args);
  return l;
}

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

AxisView axisView(const std::vector<int64_t> &shape, int64_t axis) {
  AxisView view;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
    (d < axis ? view.outer : d == axis ? view.size : view.inner) *= shape[d];
  return view;
}

std::string formatShape(const std::vector<int64_t> &shape) {
  if (shape.empty())
    return "scalar";
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "x" : "") + std::to_string(shape[i]);
  return s;
}

} // namespace kiln::codegen::reduction
