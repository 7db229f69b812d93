//===- WhereInPlace.cpp - kiln.where over its own operand's bytes ---------===//

#include "codegen/kernels/WhereInPlace.h"

#include "codegen/kernels/ElementwiseSource.h"
#include "codegen/kernels/KernelSource.h"
#include "codegen/kernels/NormPoolKernels.h"

namespace kiln::codegen {

namespace {

constexpr std::string_view kSource = R"CUDA(
extern "C" __global__ void __launch_bounds__(256) @FN@(const @CT@ *__restrict__ condition, @T@ *__restrict__ y) {
  const int lane = threadIdx.x & 31;
  const kiln_i64 warps = blockDim.x >> 5;
  for (kiln_i64 row = blockIdx.x * warps + (threadIdx.x >> 5); row < @ROWS@; row += (kiln_i64)gridDim.x * warps) {
    if (static_cast<bool>(condition[row]) != @FILL_WHEN@)
      continue;
    @T@ *po = y + row * @INNER@;
    for (kiln_i64 oo = lane; oo < @INNER@; oo += 32) {
      @STORE@
    }
  }
}
)CUDA";

} // namespace

std::optional<EmittedKernels> emitWhereInPlace(const OpDesc &where, size_t kept, const EmitContext &context) {
  if (where.op != "kiln.where" || where.operands.size() != 3 || (kept != 1 && kept != 2) || !where.operands[0] ||
      !where.operands[1] || !where.operands[2] || where.results.size() != 1)
    return std::nullopt;
  const TensorDesc &condition = *where.operands[0], &other = *where.operands[3 - kept];
  const TensorDesc &result = where.results[0];
  if (condition.dtype != DType::Bool || where.operands[kept]->dtype != result.dtype ||
      where.operands[kept]->shape != result.shape || other.dtype != result.dtype || other.numElements() != 1 ||
      !other.isConstant())
    return std::nullopt;
  // The condition right-aligned to the result: the result's leading axes, then only 1s.
  const size_t rank = result.shape.size();
  if (condition.shape.size() > rank)
    return std::nullopt;
  std::vector<int64_t> flags(rank - condition.shape.size(), 1);
  flags.insert(flags.end(), condition.shape.begin(), condition.shape.end());
  // Rows: the axes up to the last one the condition spans (each spanned fully); the row's
  // elements: the axes after it, where the condition has size 1.
  size_t rowAxes = 0;
  for (size_t d = 0; d < rank; ++d)
    if (flags[d] != 1)
      rowAxes = d + 1;
  for (size_t d = 0; d < rowAxes; ++d)
    if (flags[d] != result.shape[d])
      return std::nullopt;
  int64_t rows = 1, inner = 1;
  for (size_t d = 0; d < rank; ++d)
    (d < rowAxes ? rows : inner) *= result.shape[d];
  // Rows shorter than a warp: the generic kernel, which reads the flags as bytes anyway.
  if (rows == 0 || inner < 32)
    return std::nullopt;

  double value = other.floats ? other.floats->front() : static_cast<double>(other.ints->front());
  const std::string fn = context.symbol + "where_in_place";
  EmittedKernels out;
  out.source = normpool::fill(kSource, {{"FN", fn},
                                        {"CT", storageType(DType::Bool)},
                                        {"T", storageType(result.dtype)},
                                        {"ROWS", literalInt(rows)},
                                        {"INNER", literalInt(inner)},
                                        // where(c, constant, b) keeps b: fill where c holds.
                                        {"FILL_WHEN", kept == 2 ? "true" : "false"},
                                        {"STORE", elementwise::storeValue(result.dtype, literal(result.dtype, value))}});
  out.launches.push_back(
      normpool::warpPerRowLaunch(fn, rows, {KernelArg::operand(0), KernelArg::result(0)}));
  return out;
}

} // namespace kiln::codegen
