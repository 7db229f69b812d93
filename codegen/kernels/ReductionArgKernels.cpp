//===- ReductionArgKernels.cpp - argmax, argmin, topk -----------------------===//
//
// All three rank elements the interpreter's way (ranksBefore): NaN ranks first, then the
// larger (or smaller) value; equal values are ordered by index. With the index as tie-break the
// order is total, so any reduction tree picks the same element: results are deterministic and
// equal to the interpreter's sequential scan.
//
//===----------------------------------------------------------------------===//

#include "codegen/kernels/ReductionSupport.h"

#include <algorithm>

namespace kiln::codegen::reduction {
namespace {

/// Source of `__device__ bool <name>(V x, long long ix, V y, long long iy)`: whether (x, ix)
/// ranks strictly before (y, iy). Index -1 marks "no element" and ranks last.
std::string beforeFunction(const std::string &name, DType type, bool largest, bool lastIndexWins) {
  std::string v = valueType(type);
  std::string cmp = largest ? ">" : "<";
  std::string s = "__device__ __forceinline__ bool " + name + "(" + v + " x, long long ix, " + v +
                  " y, long long iy) {\n";
  s += "  if (iy < 0) return ix >= 0;\n  if (ix < 0) return false;\n";
  if (plan::isFloat(type)) {
    s += "  const bool xn = isnan(x), yn = isnan(y);\n";
    s += "  if (xn || yn) {\n    if (xn != yn) return xn;\n  } else {\n";
    s += "    if (x " + cmp + " y) return true;\n    if (y " + cmp + " x) return false;\n  }\n";
  } else {
    s += "  if (x " + cmp + " y) return true;\n  if (y " + cmp + " x) return false;\n";
  }
  s += std::string("  return ") + (lastIndexWins ? "ix > iy" : "ix < iy") + ";\n}\n";
  return s;
}

/// Source folding the pair (bv, bi) across a warp, or across the block with shared arrays
/// redV/redI (declared by the kernel); every thread ends with the winner.
std::string pairReduce(const std::string &before, int threads) {
  std::string s = R"CUDA(for (int kiln_m = 16; kiln_m > 0; kiln_m >>= 1) {
      const auto ov = __shfl_xor_sync(0xffffffffu, bv, kiln_m);
      const long long oi = __shfl_xor_sync(0xffffffffu, bi, kiln_m);
      if (${BEFORE}(ov, oi, bv, bi)) { bv = ov; bi = oi; }
    }
)CUDA";
  if (threads > 32)
    s += R"CUDA(    if (threadIdx.x % 32 == 0) { redV[threadIdx.x / 32] = bv; redI[threadIdx.x / 32] = bi; }
    __syncthreads();
    bv = redV[0]; bi = redI[0];
    for (int w = 1; w < ${NWARPS}; ++w)
      if (${BEFORE}(redV[w], redI[w], bv, bi)) { bv = redV[w]; bi = redI[w]; }
    __syncthreads();
)CUDA";
  s = substitute(s, {{"BEFORE", before}, {"NWARPS", std::to_string(threads / 32)}});
  return s;
}

/// Shuffles move 32- and 64-bit words; narrower integer values travel widened.
std::string shuffleType(DType type) {
  std::string v = valueType(type);
  if (plan::isFloat(type) || plan::dtypeBytes(type) >= 4)
    return v;
  return isUnsignedInt(type) ? "unsigned int" : "int";
}

StatusOr<int64_t> axisAttr(const OpDesc &op, int64_t rank) {
  if (!op.hasAttr("axis"))
    return op.error("the axis attribute is missing");
  int64_t axis = op.attrInt("axis", 0);
  if (axis < 0 || axis >= rank)
    return op.error("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank) +
                    " (expected a normalized axis in [0, rank))");
  return axis;
}

StatusOr<EmittedKernels> emitArg(const OpDesc &op, const EmitContext &context, bool largest) {
  if (op.operands.size() != 1 || !op.operands[0] || op.results.size() != 1)
    return op.error("expects one input and one result");
  const TensorDesc &input = *op.operands[0];
  const TensorDesc &result = op.results[0];
  const DType type = input.dtype;
  if (type == DType::Bool)
    return op.error("bool inputs are not supported (the op takes numeric tensors)");
  if (result.dtype != DType::I64)
    return op.error("the result must be i64");
  auto axisOr = axisAttr(op, static_cast<int64_t>(input.shape.size()));
  if (!axisOr.isOk())
    return axisOr.status();
  const int64_t axis = axisOr.value();
  const bool keepdims = op.attrInt("keepdims", 1) != 0;
  const bool last = op.attrInt("select_last_index", 0) != 0;
  std::vector<int64_t> expected = input.shape;
  if (keepdims)
    expected[axis] = 1;
  else
    expected.erase(expected.begin() + axis);
  if (expected != result.shape)
    return op.error("result shape " + formatShape(result.shape) + " does not match " + formatShape(expected));
  AxisView view = axisView(input.shape, axis);
  if (view.size == 0)
    return op.error("cannot take the arg of an empty axis");

  const std::string fn = context.symbol + (largest ? "argmax" : "argmin");
  const std::string before = fn + "_before";
  const int64_t outputs = view.outer * view.inner;
  // Long contiguous rows: a warp (or a block) per output; otherwise a thread per output, where
  // consecutive threads read consecutive inner elements.
  const int group = view.inner == 1 && view.size >= 2048 ? kBlock : view.inner == 1 && view.size >= 32 ? 32 : 1;
  std::map<std::string, std::string> vars = {
      {"FN", fn},
      {"PARAMS", param(type, "in", true) + ", long long *__restrict__ out"},
      {"V", shuffleType(type)},
      {"G", std::to_string(group)},
      {"OUTPUTS", literalInt(outputs)},
      {"L", literalInt(view.size)},
      {"INNER", literalInt(view.inner)},
      {"LOAD", loadValue(type, "in", "o / " + literalInt(view.inner) + " * " + literalInt(view.size * view.inner) +
                                          " + o % " + literalInt(view.inner) + " + j * " + literalInt(view.inner))},
      {"BEFORE", before},
      {"SHARED", group == kBlock ? "__shared__ " + shuffleType(type) + " redV[32];\n  __shared__ long long redI[32];" : ""},
      {"REDUCE", group > 1 ? pairReduce(before, group) : ""},
  };
  EmittedKernels out;
  out.source = beforeFunction(before, type, largest, last);
  out.source += substitute(R"CUDA(
extern "C" __global__ void __launch_bounds__(256) ${FN}(${PARAMS}) {
  constexpr int kGroup = ${G};
  constexpr long long kGroupsPerBlock = 256 / kGroup;
  const int lane = threadIdx.x % kGroup;
  ${SHARED}
  for (long long o = blockIdx.x * kGroupsPerBlock + threadIdx.x / kGroup; o < ${OUTPUTS};
       o += (long long)gridDim.x * kGroupsPerBlock) {
    ${V} bv = 0;
    long long bi = -1;
    for (long long j = lane; j < ${L}; j += kGroup) {
      const ${V} x = ${LOAD};
      if (${BEFORE}(x, j, bv, bi)) { bv = x; bi = j; }
    }
    ${REDUCE}
    if (lane == 0) out[o] = bi;
  }
}
)CUDA",
                           vars);
  out.launches.push_back(launch(fn, ceilDiv(outputs, kBlock / group), kBlock, {KernelArg::operand(0), KernelArg::result(0)}));
  return out;
}

} // namespace

StatusOr<EmittedKernels> emitArgMax(const OpDesc &op, const EmitContext &context) {
  return emitArg(op, context, true);
}
StatusOr<EmittedKernels> emitArgMin(const OpDesc &op, const EmitContext &context) {
  return emitArg(op, context, false);
}

//===-- topk --------------------------------------------------------------===//
//
// Rows whose (value, index) keys fit in shared memory are bitonic-sorted there by one block and
// the first k written. Longer rows take k selection rounds: each round a block reduction finds
// the best element ranking after the previous round's pick (the order is total, so this lists
// the top k exactly); that costs k passes over the row, fine for the small k of real models.

StatusOr<EmittedKernels> emitTopK(const OpDesc &op, const EmitContext &context) {
  if (op.operands.size() != 1 || !op.operands[0] || op.results.size() != 2)
    return op.error("expects one input and two results (values, indices)");
  const TensorDesc &input = *op.operands[0];
  const TensorDesc &values = op.results[0];
  const TensorDesc &indices = op.results[1];
  const DType type = input.dtype;
  if (type == DType::Bool)
    return op.error("bool inputs are not supported (the op takes numeric tensors)");
  if (values.dtype != type || indices.dtype != DType::I64)
    return op.error("values must have the input's element type and indices must be i64");
  auto axisOr = axisAttr(op, static_cast<int64_t>(input.shape.size()));
  if (!axisOr.isOk())
    return axisOr.status();
  const int64_t axis = axisOr.value();
  const bool largest = op.attrInt("largest", 1) != 0;
  if (values.shape.size() != input.shape.size() || values.shape != indices.shape)
    return op.error("values and indices must have the input's rank and one shape");
  for (size_t d = 0; d < input.shape.size(); ++d)
    if (static_cast<int64_t>(d) != axis && values.shape[d] != input.shape[d])
      return op.error("result shape " + formatShape(values.shape) + " differs from the input " +
                      formatShape(input.shape) + " off the axis");
  const AxisView view = axisView(input.shape, axis);
  const int64_t k = values.shape[axis];
  if (k > view.size)
    return op.error("k = " + std::to_string(k) + " exceeds the axis size " + std::to_string(view.size));

  const std::string fn = context.symbol + "topk";
  const std::string before = fn + "_before";
  const std::string v = valueType(type);
  const int64_t rows = view.outer * view.inner;
  int64_t padded = 1;
  while (padded < view.size)
    padded *= 2;
  const size_t keyBytes = plan::isFloat(type) ? (v == "double" ? 8 : 4) : plan::dtypeBytes(type);
  const bool inShared = padded * (keyBytes + 4) <= 48 * 1024;
  std::map<std::string, std::string> vars = {
      {"FN", fn},
      {"PARAMS", param(type, "in", true) + ", " + param(type, "values", false) +
                     ", long long *__restrict__ indices"},
      {"V", v},
      {"SV", shuffleType(type)},
      {"ROWS", literalInt(rows)},
      {"L", literalInt(view.size)},
      {"K", literalInt(k)},
      {"INNER", literalInt(view.inner)},
      {"P", literalInt(padded)},
      {"BEFORE", before},
      {"LOAD", loadValue(type, "in", "base + j * " + literalInt(view.inner))},
  };
  EmittedKernels out;
  out.source = beforeFunction(before, type, largest, /*lastIndexWins=*/false);
  int threads;
  if (inShared) {
    threads = static_cast<int>(std::clamp<int64_t>(padded / 2, 32, 512));
    vars["T"] = std::to_string(threads);
    out.source += substitute(R"CUDA(
extern "C" __global__ void __launch_bounds__(${T}) ${FN}(${PARAMS}) {
  constexpr int kThreads = ${T};
  __shared__ ${V} keys[${P}];
  __shared__ int idx[${P}];
  for (long long row = blockIdx.x; row < ${ROWS}; row += gridDim.x) {
    const long long base = row / ${INNER} * ${L} * ${INNER} + row % ${INNER};
    const long long obase = row / ${INNER} * ${K} * ${INNER} + row % ${INNER};
    for (long long j = threadIdx.x; j < ${P}; j += kThreads) {
      // Padding ranks after every element (index -1).
      keys[j] = j < ${L} ? ${LOAD} : (${V})0;
      idx[j] = j < ${L} ? (int)j : -1;
    }
    __syncthreads();
    // Bitonic sort into ranking order.
    for (long long size = 2; size <= ${P}; size <<= 1)
      for (long long stride = size / 2; stride > 0; stride >>= 1) {
        for (long long t = threadIdx.x; t < ${P} / 2; t += kThreads) {
          const long long i = 2 * stride * (t / stride) + t % stride, j = i + stride;
          const bool ascending = (i & size) == 0;
          if (${BEFORE}(keys[j], idx[j], keys[i], idx[i]) == ascending) {
            const ${V} kv = keys[i]; keys[i] = keys[j]; keys[j] = kv;
            const int ki = idx[i]; idx[i] = idx[j]; idx[j] = ki;
          }
        }
        __syncthreads();
      }
    for (long long j = threadIdx.x; j < ${K}; j += kThreads) {
      kiln_st(values, obase + j * ${INNER}, keys[j]);
      indices[obase + j * ${INNER}] = idx[j];
    }
    __syncthreads();
  }
}
)CUDA",
                             vars);
  } else {
    threads = kBlock;
    vars["T"] = std::to_string(threads);
    vars["REDUCE"] = pairReduce(before, threads);
    out.source += substitute(R"CUDA(
extern "C" __global__ void __launch_bounds__(${T}) ${FN}(${PARAMS}) {
  constexpr int kThreads = ${T};
  __shared__ ${SV} redV[32];
  __shared__ long long redI[32];
  for (long long row = blockIdx.x; row < ${ROWS}; row += gridDim.x) {
    const long long base = row / ${INNER} * ${L} * ${INNER} + row % ${INNER};
    const long long obase = row / ${INNER} * ${K} * ${INNER} + row % ${INNER};
    ${SV} pv = 0;
    long long pi = -1; // the previous round's pick (none yet)
    for (long long n = 0; n < ${K}; ++n) {
      ${SV} bv = 0;
      long long bi = -1;
      for (long long j = threadIdx.x; j < ${L}; j += kThreads) {
        const ${SV} x = ${LOAD};
        if (pi >= 0 && !${BEFORE}(pv, pi, x, j)) continue; // picked in an earlier round
        if (${BEFORE}(x, j, bv, bi)) { bv = x; bi = j; }
      }
      ${REDUCE}
      if (threadIdx.x == 0) {
        kiln_st(values, obase + n * ${INNER}, (${V})bv);
        indices[obase + n * ${INNER}] = bi;
      }
      pv = bv;
      pi = bi;
    }
  }
}
)CUDA",
                             vars);
  }
  out.launches.push_back(launch(fn, rows, threads, {KernelArg::operand(0), KernelArg::result(0), KernelArg::result(1)}));
  return out;
}

} // namespace kiln::codegen::reduction
