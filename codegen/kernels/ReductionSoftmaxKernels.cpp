//===- ReductionSoftmaxKernels.cpp - softmax, log_softmax ------------------===//
//
// Numerically stable, as the interpreter: m = max over the row (NaN is skipped, as std::max
// skips it; a NaN then poisons the sum), s = sum exp(x - m), y = exp(x - m) / s or
// (x - m) - log(s). Arithmetic is in float (double for f64).
// - Axis innermost, rows up to 1024: one warp per row, the row held in registers
//   (attention rows of BERT/ViT: 128..1000 elements).
// - Axis innermost, longer rows: one block per row, held in registers up to 16 per thread,
//   beyond that re-read (three passes over the row, served by L2).
// - Axis not innermost: one thread per (outer, inner) line; consecutive threads read
//   consecutive inner elements.
//
//===----------------------------------------------------------------------===//

#include "codegen/kernels/ReductionSupport.h"

namespace kiln::codegen::reduction {
namespace {

StatusOr<EmittedKernels> emitSoftmaxImpl(const OpDesc &op, const EmitContext &context, bool log) {
  if (op.operands.size() != 1 || !op.operands[0] || op.results.size() != 1)
    return op.error("expects one input and one result");
  const TensorDesc &input = *op.operands[0];
  const DType type = input.dtype;
  if (!plan::isFloat(type))
    return op.error("the input must be a float tensor");
  if (op.results[0].dtype != type || op.results[0].shape != input.shape)
    return op.error("the result must have the input's type and shape");
  const int64_t rank = static_cast<int64_t>(input.shape.size());
  if (!op.hasAttr("axis"))
    return op.error("the axis attribute is missing");
  const int64_t axis = op.attrInt("axis", 0);
  if (axis < 0 || axis >= rank)
    return op.error("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank) +
                    " (expected a normalized axis in [0, rank))");
  const AxisView view = axisView(input.shape, axis);
  const std::string ct = computeType(type);
  const std::string fn = context.symbol + (log ? "log_softmax" : "softmax");
  std::map<std::string, std::string> vars = {
      {"FN", fn},
      {"PARAMS", param(type, "in", true) + ", " + param(type, "out", false)},
      {"CT", ct},
      {"NEG_INF", infinity(ct, true)},
      {"ZERO", typedLiteral(ct, 0)},
      {"FMAX", mathFn("fmax", ct)},
      {"EXP", mathFn("exp", ct)},
      {"LOG", mathFn("log", ct)},
      {"L", literalInt(view.size)},
      {"INNER", literalInt(view.inner)},
      {"ROWS", literalInt(view.outer)},
      {"LINES", literalInt(view.outer * view.inner)},
  };
  // Output of shifted value `d` (x - m) given the row's sum (softmax) or its log (log_softmax).
  vars["OUT"] = log ? "d - logSum" : vars["EXP"] + "(d) / sum";
  vars["LOGSUM"] = log ? "const " + ct + " logSum = " + vars["LOG"] + "(sum);" : "";
  std::vector<KernelArg> args = {KernelArg::operand(0), KernelArg::result(0)};
  CombineFn maxOf = [&](const std::string &a, const std::string &b) { return vars["FMAX"] + "(" + a + ", " + b + ")"; };
  CombineFn plus = [](const std::string &a, const std::string &b) { return a + " + " + b; };
  EmittedKernels out;

  const bool empty = input.numElements() == 0;
  if (view.inner != 1 || empty) {
    out.source = substitute(R"CUDA(
extern "C" __global__ void __launch_bounds__(256) ${FN}(${PARAMS}) {
  for (long long line = blockIdx.x * (long long)blockDim.x + threadIdx.x; line < ${LINES};
       line += (long long)gridDim.x * blockDim.x) {
    const long long base = line / ${INNER} * ${L} * ${INNER} + line % ${INNER};
    ${CT} m = ${NEG_INF};
    for (long long j = 0; j < ${L}; ++j) m = ${FMAX}(m, (${CT})kiln_ld(in, base + j * ${INNER}));
    ${CT} sum = ${ZERO};
    for (long long j = 0; j < ${L}; ++j) sum += ${EXP}((${CT})kiln_ld(in, base + j * ${INNER}) - m);
    ${LOGSUM}
    for (long long j = 0; j < ${L}; ++j) {
      const ${CT} d = (${CT})kiln_ld(in, base + j * ${INNER}) - m;
      kiln_st(out, base + j * ${INNER}, ${OUT});
    }
  }
}
)CUDA",
                            vars);
    out.launches.push_back(gridStrideLaunch(fn, view.outer * view.inner, args));
    return out;
  }

  if (view.size <= 1024) {
    vars["ITEMS"] = std::to_string(ceilDiv(view.size, 32));
    vars["WARPMAX"] = warpReduce("m", maxOf);
    vars["WARPSUM"] = warpReduce("sum", plus);
    out.source = substitute(R"CUDA(
extern "C" __global__ void __launch_bounds__(256) ${FN}(${PARAMS}) {
  constexpr int kItems = ${ITEMS};
  constexpr long long L = ${L};
  const int lane = threadIdx.x % 32;
  for (long long row = blockIdx.x * 8LL + threadIdx.x / 32; row < ${ROWS}; row += gridDim.x * 8LL) {
    const long long base = row * L;
    ${CT} v[kItems];
    ${CT} m = ${NEG_INF};
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const long long j = lane + i * 32LL;
      v[i] = j < L ? (${CT})kiln_ld(in, base + j) : ${NEG_INF};
      m = ${FMAX}(m, v[i]);
    }
    ${WARPMAX}
    ${CT} sum = ${ZERO};
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      v[i] = v[i] - m;
      if (lane + i * 32LL < L) sum += ${EXP}(v[i]);
    }
    ${WARPSUM}
    ${LOGSUM}
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const long long j = lane + i * 32LL;
      const ${CT} d = v[i];
      if (j < L) kiln_st(out, base + j, ${OUT});
    }
  }
}
)CUDA",
                            vars);
    out.launches.push_back(launch(fn, ceilDiv(view.outer, 8), kBlock, args));
    return out;
  }

  const int threads = view.size <= 4096 ? 256 : 1024;
  const int64_t items = ceilDiv(view.size, threads);
  vars["T"] = std::to_string(threads);
  vars["BLOCKMAX"] = blockReduce("m", "red", threads, maxOf);
  vars["BLOCKSUM"] = blockReduce("sum", "red", threads, plus);
  if (items <= 16) {
    vars["ITEMS"] = std::to_string(items);
    out.source = substitute(R"CUDA(
extern "C" __global__ void __launch_bounds__(${T}) ${FN}(${PARAMS}) {
  constexpr int kThreads = ${T}, kItems = ${ITEMS};
  constexpr long long L = ${L};
  __shared__ ${CT} red[32];
  for (long long row = blockIdx.x; row < ${ROWS}; row += gridDim.x) {
    const long long base = row * L;
    ${CT} v[kItems];
    ${CT} m = ${NEG_INF};
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const long long j = threadIdx.x + (long long)i * kThreads;
      v[i] = j < L ? (${CT})kiln_ld(in, base + j) : ${NEG_INF};
      m = ${FMAX}(m, v[i]);
    }
    ${BLOCKMAX}
    ${CT} sum = ${ZERO};
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      v[i] = v[i] - m;
      if (threadIdx.x + (long long)i * kThreads < L) sum += ${EXP}(v[i]);
    }
    ${BLOCKSUM}
    ${LOGSUM}
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const long long j = threadIdx.x + (long long)i * kThreads;
      const ${CT} d = v[i];
      if (j < L) kiln_st(out, base + j, ${OUT});
    }
  }
}
)CUDA",
                            vars);
  } else {
    out.source = substitute(R"CUDA(
extern "C" __global__ void __launch_bounds__(${T}) ${FN}(${PARAMS}) {
  constexpr int kThreads = ${T};
  constexpr long long L = ${L};
  __shared__ ${CT} red[32];
  for (long long row = blockIdx.x; row < ${ROWS}; row += gridDim.x) {
    const long long base = row * L;
    ${CT} m = ${NEG_INF};
    for (long long j = threadIdx.x; j < L; j += kThreads) m = ${FMAX}(m, (${CT})kiln_ld(in, base + j));
    ${BLOCKMAX}
    ${CT} sum = ${ZERO};
    for (long long j = threadIdx.x; j < L; j += kThreads) sum += ${EXP}((${CT})kiln_ld(in, base + j) - m);
    ${BLOCKSUM}
    ${LOGSUM}
    for (long long j = threadIdx.x; j < L; j += kThreads) {
      const ${CT} d = (${CT})kiln_ld(in, base + j) - m;
      kiln_st(out, base + j, ${OUT});
    }
  }
}
)CUDA",
                            vars);
  }
  out.launches.push_back(launch(fn, view.outer, threads, args));
  return out;
}

} // namespace

StatusOr<EmittedKernels> emitSoftmax(const OpDesc &op, const EmitContext &context) {
  return emitSoftmaxImpl(op, context, false);
}
StatusOr<EmittedKernels> emitLogSoftmax(const OpDesc &op, const EmitContext &context) {
  return emitSoftmaxImpl(op, context, true);
}

} // namespace kiln::codegen::reduction
