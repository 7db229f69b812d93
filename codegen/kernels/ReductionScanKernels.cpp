//===- ReductionScanKernels.cpp - cumsum -----------------------------------===//
//
// The running sum is kept in the family's accumulator type (double for f64/f32, float for
// f16/bf16/f8, wrapping 64-bit for integers) and every output rounded once, as the interpreter
// does. Contiguous rows (the scan axis innermost) of some length take one block per row: each
// thread scans a few consecutive elements, a block-wide exclusive scan of the thread totals
// (warp shuffles + shared memory) gives each thread its offset, and a carry runs across chunks.
// Otherwise each thread runs one line sequentially, consecutive threads on consecutive inner
// elements (coalesced). A runtime (non-constant) axis reads the axis from device memory and
// walks lines sequentially with strides computed from it.
//
//===----------------------------------------------------------------------===//

#include "codegen/kernels/ReductionSupport.h"

namespace kiln::codegen::reduction {
namespace {

/// Statements for one element at offset `off`: read it into the running sum `run` and store the
/// output (before adding for exclusive scans).
std::string scanStep(DType type, bool exclusive) {
  std::string x = loadAcc(type, "in", "off");
  return exclusive ? "kiln_st(out, off, run); run = run + " + x + ";"
                   : "run = run + " + x + "; kiln_st(out, off, run);";
}

} // namespace

StatusOr<EmittedKernels> emitCumSum(const OpDesc &op, const EmitContext &context) {
  if (op.operands.size() != 2 || !op.operands[0] || !op.operands[1] || op.results.size() != 1)
    return op.error("expects an input, an axis operand and one result");
  const TensorDesc &input = *op.operands[0];
  const TensorDesc &axisDesc = *op.operands[1];
  const DType type = input.dtype;
  if (type == DType::Bool)
    return op.error("bool inputs are not supported (the op takes numeric tensors)");
  if (op.results[0].dtype != type || op.results[0].shape != input.shape)
    return op.error("the result must have the input's type and shape");
  if (axisDesc.dtype != DType::I32 && axisDesc.dtype != DType::I64)
    return op.error("the axis operand must be i32 or i64");
  if (axisDesc.numElements() != 1)
    return op.error("the axis operand must hold one value, it has shape " + formatShape(axisDesc.shape));
  const int64_t rank = static_cast<int64_t>(input.shape.size());
  if (rank == 0)
    return op.error("a rank-0 input has no axis to scan");
  const bool exclusive = op.attrInt("exclusive", 0) != 0;
  const bool reverse = op.attrInt("reverse", 0) != 0;
  const std::string fn = context.symbol + "cumsum";
  const std::string acc = accType(type);
  const std::string zero = acc == "unsigned long long" ? "0ULL" : typedLiteral(acc, 0);
  const int64_t total = input.numElements();
  std::map<std::string, std::string> vars = {
      {"FN", fn},
      {"ACC", acc},
      {"ZERO", zero},
      {"TOTAL", literalInt(total)},
      {"RANK", std::to_string(rank)},
      {"STEP", scanStep(type, exclusive)},
      {"J", reverse ? "L - 1 - step" : "step"},
  };
  EmittedKernels out;

  if (!axisDesc.ints) {
    // The axis is only known on the device: normalize it there. An out-of-range axis (which the
    // interpreter rejects) cannot be reported from a kernel; the result is then filled with NaN
    // (0 for integers) -- never a trap, which would make the whole CUDA context unusable.
    std::string dims;
    for (int64_t d : input.shape)
      dims += (dims.empty() ? "" : ", ") + literalInt(d);
    vars["DIMS"] = dims;
    vars["PARAMS"] = param(type, "in", true) + ", " + param(axisDesc.dtype, "axisValue", true) + ", " +
                     param(type, "out", false);
    vars["COMPUTE"] = computeType(type);
    vars["POISON"] = plan::isFloat(type) ? "NAN" : "0";
    out.source = substitute(R"CUDA(
extern "C" __global__ void __launch_bounds__(256) ${FN}(${PARAMS}) {
  long long axis = (long long)axisValue[0];
  if (axis < 0) axis += ${RANK};
  if (axis < 0 || axis >= ${RANK}) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < ${TOTAL};
         i += (long long)gridDim.x * blockDim.x)
      kiln_st(out, i, (${COMPUTE})${POISON});
    return;
  }
  const long long dims[${RANK}] = {${DIMS}};
  const long long L = dims[axis];
  long long inner = 1;
  for (int d = (int)axis + 1; d < ${RANK}; ++d) inner *= dims[d];
  const long long lines = L == 0 ? 0 : ${TOTAL} / L;
  for (long long line = blockIdx.x * (long long)blockDim.x + threadIdx.x; line < lines;
       line += (long long)gridDim.x * blockDim.x) {
    const long long base = line / inner * L * inner + line % inner;
    ${ACC} run = ${ZERO};
    for (long long step = 0; step < L; ++step) {
      const long long off = base + (${J}) * inner;
      ${STEP}
    }
  }
}
)CUDA",
                            vars);
    out.launches.push_back(gridStrideLaunch(fn, total, {KernelArg::operand(0), KernelArg::operand(1), KernelArg::result(0)}));
    return out;
  }

  int64_t axis = (*axisDesc.ints)[0];
  if (axis < -rank || axis >= rank)
    return op.error("cumsum axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  if (axis < 0)
    axis += rank;
  const AxisView view = axisView(input.shape, axis);
  vars["PARAMS"] = param(type, "in", true) + ", " + param(type, "out", false);
  vars["L"] = literalInt(view.size);
  vars["INNER"] = literalInt(view.inner);
  vars["LINES"] = literalInt(view.outer * view.inner);
  std::vector<KernelArg> args = {KernelArg::operand(0), KernelArg::result(0)};

  if (view.inner != 1 || view.size < 64) {
    out.source = substitute(R"CUDA(
extern "C" __global__ void __launch_bounds__(256) ${FN}(${PARAMS}) {
  constexpr long long L = ${L};
  for (long long line = blockIdx.x * (long long)blockDim.x + threadIdx.x; line < ${LINES};
       line += (long long)gridDim.x * blockDim.x) {
    const long long base = line / ${INNER} * L * ${INNER} + line % ${INNER};
    ${ACC} run = ${ZERO};
    for (long long step = 0; step < L; ++step) {
      const long long off = base + (${J}) * ${INNER};
      ${STEP}
    }
  }
}
)CUDA",
                            vars);
    out.launches.push_back(gridStrideLaunch(fn, view.outer * view.inner, args));
    return out;
  }

  // One block per contiguous row, kItems consecutive elements per thread and chunk.
  const int threads = view.size <= 512 ? 32 : view.size <= 4096 ? 128 : kBlock;
  vars["T"] = std::to_string(threads);
  vars["NW"] = std::to_string(threads / 32);
  vars["X"] = loadAcc(type, "in", "row * L + (" + std::string(reverse ? "L - 1 - step" : "step") + ")");
  vars["OFF"] = "row * L + (" + std::string(reverse ? "L - 1 - step" : "step") + ")";
  vars["EMIT"] = exclusive ? "kiln_st(out, ${OFF}, run); run = run + v[k];" : "run = run + v[k]; kiln_st(out, ${OFF}, run);";
  vars["EMIT"] = substitute(vars["EMIT"], vars);
  out.source = substitute(R"CUDA(
extern "C" __global__ void __launch_bounds__(${T}) ${FN}(${PARAMS}) {
  constexpr int kThreads = ${T}, kWarps = ${NW}, kItems = 4;
  constexpr long long L = ${L};
  __shared__ ${ACC} warpTotals[kWarps];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (long long row = blockIdx.x; row < ${LINES}; row += gridDim.x) {
    ${ACC} carry = ${ZERO};
    for (long long chunk = 0; chunk < L; chunk += (long long)kThreads * kItems) {
      ${ACC} v[kItems];
      ${ACC} mine = ${ZERO};
      const long long first = chunk + (long long)threadIdx.x * kItems;
#pragma unroll
      for (int k = 0; k < kItems; ++k) {
        const long long step = first + k;
        v[k] = step < L ? ${X} : ${ZERO};
        mine = mine + v[k];
      }
      // Inclusive scan of the thread totals within the warp, then across warps.
      ${ACC} incl = mine;
      for (int d = 1; d < 32; d <<= 1) {
        const ${ACC} y = __shfl_up_sync(0xffffffffu, incl, d);
        if (lane >= d) incl = incl + y;
      }
      ${ACC} excl = __shfl_up_sync(0xffffffffu, incl, 1);
      if (lane == 0) excl = ${ZERO};
      if (lane == 31) warpTotals[warp] = incl;
      __syncthreads();
      ${ACC} before = carry, chunkTotal = ${ZERO};
      for (int w = 0; w < kWarps; ++w) {
        if (w < warp) before = before + warpTotals[w];
        chunkTotal = chunkTotal + warpTotals[w];
      }
      ${ACC} run = before + excl;
#pragma unroll
      for (int k = 0; k < kItems; ++k) {
        const long long step = first + k;
        if (step < L) { ${EMIT} }
      }
      carry = carry + chunkTotal;
      __syncthreads();
    }
  }
}
)CUDA",
                          vars);
  out.launches.push_back(launch(fn, view.outer, threads, args));
  return out;
}

} // namespace kiln::codegen::reduction
