//===- KernelSource.cpp - OpDesc, the emitter table, source helpers -------===//

#include "codegen/kernels/KernelSource.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <sstream>

namespace kiln::codegen {

//===-- OpDesc ------------------------------------------------------------===//

int64_t TensorDesc::numElements() const { return product(shape); }

int64_t OpDesc::attrInt(const std::string &key, int64_t fallback) const {
  auto it = attrs.find(key);
  if (it == attrs.end())
    return fallback;
  if (auto *v = std::get_if<int64_t>(&it->second))
    return *v;
  if (auto *v = std::get_if<double>(&it->second))
    return static_cast<int64_t>(*v);
  return fallback;
}

double OpDesc::attrFloat(const std::string &key, double fallback) const {
  auto it = attrs.find(key);
  if (it == attrs.end())
    return fallback;
  if (auto *v = std::get_if<double>(&it->second))
    return *v;
  if (auto *v = std::get_if<int64_t>(&it->second))
    return static_cast<double>(*v);
  return fallback;
}

std::string OpDesc::attrString(const std::string &key, const std::string &fallback) const {
  auto it = attrs.find(key);
  if (it == attrs.end())
    return fallback;
  if (auto *v = std::get_if<std::string>(&it->second))
    return *v;
  return fallback;
}

std::vector<int64_t> OpDesc::attrInts(const std::string &key, std::vector<int64_t> fallback) const {
  auto it = attrs.find(key);
  if (it == attrs.end())
    return fallback;
  if (auto *v = std::get_if<std::vector<int64_t>>(&it->second))
    return *v;
  return fallback;
}

std::vector<double> OpDesc::attrFloats(const std::string &key, std::vector<double> fallback) const {
  auto it = attrs.find(key);
  if (it == attrs.end())
    return fallback;
  if (auto *v = std::get_if<std::vector<double>>(&it->second))
    return *v;
  return fallback;
}

Status OpDesc::error(const std::string &message) const {
  return Status(StatusCode::kInvalidArgument, op + " '" + name + "': " + message);
}

//===-- The table ---------------------------------------------------------===//

KernelEmitter KernelEmitterTable::lookup(const std::string &opName) const {
  auto it = table_.find(opName);
  return it == table_.end() ? nullptr : it->second;
}

const KernelEmitterTable &KernelEmitterTable::get() {
  static const KernelEmitterTable table = [] {
    KernelEmitterTable t;
    registerElementwiseKernels(t);
    registerDataMovementKernels(t);
    registerReductionKernels(t);
    registerNormPoolKernels(t);
    registerFusionGroupKernels(t);
    return t;
  }();
  return table;
}

StatusOr<EmittedKernels> emitKernels(const OpDesc &op, const EmitContext &context) {
  KernelEmitter emitter = KernelEmitterTable::get().lookup(op.op);
  if (!emitter)
    return op.error("no GPU kernel for this op yet; it runs in the interpreter (`kiln eval`) only");
  return emitter(op, context);
}

//===-- Program prelude ---------------------------------------------------===//

namespace {
// Storage <-> compute conversions. Arithmetic on f16/bf16/f8 happens in float and is rounded
// to nearest-even when stored, as the interpreter rounds every op result to its element type.
constexpr std::string_view kBasePrelude = R"CUDA(
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
typedef long long kiln_i64;
typedef unsigned long long kiln_u64;
// NVRTC has no <math.h>; literal() spells infinities and NaNs with these (device code only).
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#ifndef NAN
#define NAN __int_as_float(0x7fffffff)
#endif
template <typename T> __device__ __forceinline__ T kiln_ld(const T *p, kiln_i64 i) { return p[i]; }
__device__ __forceinline__ float kiln_ld(const __half *p, kiln_i64 i) { return __half2float(p[i]); }
__device__ __forceinline__ float kiln_ld(const __nv_bfloat16 *p, kiln_i64 i) { return __bfloat162float(p[i]); }
__device__ __forceinline__ float kiln_ld(const __nv_fp8_e4m3 *p, kiln_i64 i) { return float(p[i]); }
template <typename T, typename V> __device__ __forceinline__ void kiln_st(T *p, kiln_i64 i, V v) { p[i] = (T)v; }
__device__ __forceinline__ void kiln_st(__half *p, kiln_i64 i, float v) { p[i] = __float2half_rn(v); }
__device__ __forceinline__ void kiln_st(__nv_bfloat16 *p, kiln_i64 i, float v) { p[i] = __float2bfloat16_rn(v); }
// Like the interpreter's rounding of op results: beyond the largest finite value (448) is NaN,
// f8E4M3FN having no infinity. Saturation is only Cast's `saturate`, which cast emits itself.
__device__ __forceinline__ void kiln_st(__nv_fp8_e4m3 *p, kiln_i64 i, float v) {
  p[i].__x = __nv_cvt_float_to_fp8(v, __NV_NOSAT, __NV_E4M3);
}
)CUDA";
} // namespace

std::string programPrelude() {
  std::string prelude(kBasePrelude);
  for (std::string_view part : {elementwisePrelude(), dataMovementPrelude(), reductionPrelude(), normPoolPrelude()}) {
    prelude += part;
    prelude += "\n";
  }
  return prelude;
}

//===-- Source helpers ----------------------------------------------------===//

std::string storageType(DType type) {
  switch (type) {
  case DType::F32: return "float";
  case DType::F16: return "__half";
  case DType::BF16: return "__nv_bfloat16";
  case DType::F64: return "double";
  case DType::F8E4M3FN: return "__nv_fp8_e4m3";
  case DType::I8: return "signed char";
  case DType::I16: return "short";
  case DType::I32: return "int";
  case DType::I64: return "long long";
  case DType::U8: return "unsigned char";
  case DType::U16: return "unsigned short";
  case DType::U32: return "unsigned int";
  case DType::U64: return "unsigned long long";
  case DType::Bool: return "unsigned char";
  }
  return "void";
}

std::string computeType(DType type) {
  switch (type) {
  case DType::F32:
  case DType::F16:
  case DType::BF16:
  case DType::F8E4M3FN: return "float";
  case DType::F64: return "double";
  case DType::Bool: return "bool";
  default: return storageType(type);
  }
}

std::string literalInt(int64_t value) {
  if (value == INT64_MIN)
    return "(-9223372036854775807LL - 1)";
  return std::to_string(value) + "LL";
}

std::string literal(DType type, double value) {
  if (!plan::isFloat(type)) {
    if (type == DType::Bool)
      return value != 0 ? "true" : "false";
    return "((" + storageType(type) + ")" + literalInt(static_cast<int64_t>(value)) + ")";
  }
  bool isDouble = type == DType::F64;
  if (std::isnan(value))
    return isDouble ? "(double)NAN" : "NAN";
  if (std::isinf(value))
    return std::string(value < 0 ? "-" : "") + (isDouble ? "(double)INFINITY" : "INFINITY");
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", value);
  std::string text = buf;
  if (text.find_first_of(".eE") == std::string::npos)
    text += ".0";
  return isDouble ? text : "(float)" + text;
}

bool indexFitsIn32Bits(const std::vector<int64_t> &shape) {
  uint64_t elements = 1;
  for (int64_t extent : shape)
    if (extent < 0 || __builtin_mul_overflow(elements, static_cast<uint64_t>(extent), &elements) ||
        elements > 0xFFFFFFFFull)
      return false;
  return true;
}

int64_t product(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::vector<int64_t> rowMajorStrides(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

bool broadcastsTo(const std::vector<int64_t> &shape, const std::vector<int64_t> &target) {
  if (shape.size() > target.size())
    return false;
  size_t lead = target.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] != 1 && shape[d] != target[lead + d])
      return false;
  return true;
}

std::string broadcastOffset(const std::vector<int64_t> &inShape, const std::vector<int64_t> &outShape,
                            const std::string &linear) {
  if (inShape == outShape)
    return linear;
  if (product(inShape) == 1)
    return "0";
  std::vector<int64_t> outStrides = rowMajorStrides(outShape);
  std::vector<int64_t> inStrides = rowMajorStrides(inShape);
  size_t lead = outShape.size() - inShape.size();
  // 32-bit division where every index fits (indexFitsIn32Bits).
  bool narrow = indexFitsIn32Bits(outShape);
  auto divisor = [&](int64_t value) { return narrow ? std::to_string(value) + "U" : literalInt(value); };
  std::string index = narrow ? "(unsigned)(" + linear + ")" : linear;
  std::ostringstream expr;
  bool first = true;
  for (size_t d = lead; d < outShape.size(); ++d) {
    int64_t inDim = inShape[d - lead];
    if (inDim == 1)
      continue;
    // (linear / outStride) % outDim is the coordinate along d.
    std::string coord = "(" + index;
    if (outStrides[d] != 1)
      coord += " / " + divisor(outStrides[d]);
    coord += ")";
    if (d != 0)
      coord = "(" + coord + " % " + divisor(outShape[d]) + ")";
    expr << (first ? "" : " + ") << coord;
    if (inStrides[d - lead] != 1)
      expr << " * " << literalInt(inStrides[d - lead]);
    first = false;
  }
  return first ? "0" : "(" + expr.str() + ")";
}

KernelLaunch gridStrideLaunch(std::string function, int64_t count, std::vector<KernelArg> args) {
  KernelLaunch launch;
  launch.function = std::move(function);
  int64_t blocks = std::clamp<int64_t>((count + 255) / 256, 1, 8192);
  launch.grid = {static_cast<uint32_t>(blocks), 1, 1};
  launch.block = {256, 1, 1};
  launch.args = std::move(args);
  return launch;
}

} // namespace kiln::codegen
