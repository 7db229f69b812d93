//===- NormPoolKernels.cpp - pooling/normalization/resize family: prelude, table ===//
//
// The family's device helpers (kiln_np_*: warp/block reductions, NaN-propagating max, stores of
// double values), its registration, and the host helpers its emitters share. The emitters live
// in NormPoolPooling.cpp, NormPoolNorms.cpp and NormPoolResize.cpp.
//
//===----------------------------------------------------------------------===//

#include "codegen/kernels/NormPoolKernels.h"

#include <algorithm>

namespace kiln::codegen {

namespace {
// Reductions use xor-butterfly shuffles: both partners of a step add the same two values
// (a + b == b + a exactly), so every lane ends with the same bits and a fixed launch geometry
// gives the same result run to run -- no atomics anywhere.
constexpr std::string_view kNormPoolPrelude = R"CUDA(
// ---- pooling / normalization / resize (kiln_np_) ----
// V consecutive elements moved by one access (channels_last pooling reads channel vectors).
template <typename T, int V> struct alignas(sizeof(T) * V) kiln_np_vec { T v[V]; };
// The table row a row gather (a norm group's embedding lookup) reads at index i: negative i
// counts from the end once; -1 when out of range (the row reads as zeros, as a gather writes).
__device__ __forceinline__ kiln_i64 kiln_np_gather_row(kiln_i64 i, kiln_i64 rows) {
  if (i < 0)
    i += rows;
  return (i < 0 || i >= rows) ? -1 : i;
}
// max that propagates NaN (as kiln.max_pool and kiln.global_max_pool define it).
template <typename T> __device__ __forceinline__ T kiln_np_max_nan(T a, T b) {
  return (a != a) ? a : ((b > a || b != b) ? b : a);
}
template <typename T> __device__ __forceinline__ T kiln_np_warp_sum(T v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}
template <typename T> __device__ __forceinline__ T kiln_np_warp_max_nan(T v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    v = kiln_np_max_nan(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}
// Block-wide sum for blockDim.x a multiple of 32; every thread gets the total. `shared` holds
// 32 values; the leading barrier lets a block call this repeatedly with the same buffer.
template <typename T> __device__ __forceinline__ T kiln_np_block_sum(T v, T *shared) {
  v = kiln_np_warp_sum(v);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  __syncthreads();
  if (lane == 0)
    shared[warp] = v;
  __syncthreads();
  return kiln_np_warp_sum(lane < warps ? shared[lane] : (T)0);
}
template <typename T> __device__ __forceinline__ T kiln_np_block_max_nan(T v, T *shared) {
  v = kiln_np_warp_max_nan(v);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  __syncthreads();
  if (lane == 0)
    shared[warp] = v;
  __syncthreads();
  return kiln_np_warp_max_nan(lane < warps ? shared[lane] : (T)-INFINITY);
}
// Stores a value computed in double, rounded once to the element type (resize interpolates in
// double like the reference; going through float first could round twice).
__device__ __forceinline__ void kiln_np_st(double *p, kiln_i64 i, double v) { p[i] = v; }
__device__ __forceinline__ void kiln_np_st(float *p, kiln_i64 i, double v) { p[i] = (float)v; }
__device__ __forceinline__ void kiln_np_st(__half *p, kiln_i64 i, double v) { p[i] = __double2half(v); }
__device__ __forceinline__ void kiln_np_st(__nv_bfloat16 *p, kiln_i64 i, double v) { p[i] = __double2bfloat16(v); }
// As kiln_st and the interpreter: beyond 448 is NaN (f8E4M3FN has no infinity), no saturation.
__device__ __forceinline__ void kiln_np_st(__nv_fp8_e4m3 *p, kiln_i64 i, double v) {
  p[i].__x = __nv_cvt_double_to_fp8(v, __NV_NOSAT, __NV_E4M3);
}
)CUDA";
} // namespace

std::string_view normPoolPrelude() { return kNormPoolPrelude; }

void registerNormPoolKernels(KernelEmitterTable &table) {
  table.add("kiln.max_pool", normpool::emitMaxPool);
  table.add("kiln.avg_pool", normpool::emitAvgPool);
  table.add("kiln.global_avg_pool", normpool::emitGlobalAvgPool);
  table.add("kiln.global_max_pool", normpool::emitGlobalMaxPool);
  table.add("kiln.batch_norm", normpool::emitBatchNorm);
  table.add("kiln.instance_norm", normpool::emitInstanceNorm);
  table.add("kiln.layer_norm", normpool::emitLayerNorm);
  table.add("kiln.group_norm", normpool::emitGroupNorm);
  table.add("kiln.resize", normpool::emitResize);
}

namespace normpool {

std::string fill(std::string_view text, const std::vector<std::pair<std::string, std::string>> &values) {
  std::string out;
  out.reserve(text.size() + 256);
  size_t pos = 0;
  while (pos < text.size()) {
    size_t open = text.find('@', pos);
    size_t close = open == std::string_view::npos ? open : text.find('@', open + 1);
    if (close == std::string_view::npos) {
      out.append(text.substr(pos));
      break;
    }
    std::string_view key = text.substr(open + 1, close - open - 1);
    auto it = std::find_if(values.begin(), values.end(), [&](const auto &kv) { return kv.first == key; });
    out.append(text.substr(pos, open - pos));
    if (it == values.end()) {
      // Not a placeholder (templates never contain a bare '@' otherwise): keep the text.
      out.push_back('@');
      pos = open + 1;
      continue;
    }
    out.append(it->second);
    pos = close + 1;
  }
  return out;
}

std::string formatShape(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

Status checkArity(const OpDesc &op, size_t operands, size_t results) {
  if (op.operands.size() != operands || op.results.size() != results)
    return op.error("expected " + std::to_string(operands) + " operand slot(s) and " + std::to_string(results) +
                    " result(s), got " + std::to_string(op.operands.size()) + " and " +
                    std::to_string(op.results.size()) + "; the OpDesc does not match the op's ODS definition");
  return Status::ok();
}

StatusOr<const TensorDesc *> requireOperand(const OpDesc &op, size_t index, const std::string &role) {
  if (index >= op.operands.size() || !op.operands[index])
    return op.error("the " + role + " operand (#" + std::to_string(index) + ") is missing");
  return &*op.operands[index];
}

Status requireFloat(const OpDesc &op, const TensorDesc &tensor, const std::string &role) {
  if (!plan::isFloat(tensor.dtype))
    return op.error("the " + role + " must have a floating-point element type (f64, f32, f16, bf16, f8E4M3FN), got " +
                    std::string(plan::dtypeName(tensor.dtype)));
  return Status::ok();
}

Status requireResult(const OpDesc &op, DType dtype, const std::vector<int64_t> &shape) {
  const TensorDesc &result = op.results[0];
  if (result.dtype != dtype)
    return op.error("the result element type " + std::string(plan::dtypeName(result.dtype)) +
                    " differs from the input's " + std::string(plan::dtypeName(dtype)));
  if (result.shape != shape)
    return op.error("the result shape " + formatShape(result.shape) + " should be " + formatShape(shape));
  return Status::ok();
}

KernelLaunch warpPerRowLaunch(std::string function, int64_t rows, std::vector<KernelArg> args) {
  KernelLaunch launch;
  launch.function = std::move(function);
  launch.grid = {static_cast<uint32_t>(std::clamp<int64_t>((rows + 7) / 8, 1, 65535)), 1, 1};
  launch.block = {256, 1, 1};
  launch.args = std::move(args);
  return launch;
}

KernelLaunch blockPerRowLaunch(std::string function, int64_t rows, uint32_t threads, std::vector<KernelArg> args) {
  KernelLaunch launch;
  launch.function = std::move(function);
  launch.grid = {static_cast<uint32_t>(std::clamp<int64_t>(rows, 1, 65535)), 1, 1};
  launch.block = {threads, 1, 1};
  launch.args = std::move(args);
  return launch;
}

} // namespace normpool
} // namespace kiln::codegen
