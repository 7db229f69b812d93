//===- StepWork.cpp - the arithmetic and memory traffic of a plan step ----===//

#include "runtime/plan/StepWork.h"

#include "runtime/plan/FieldTags.h"

#include <functional>
#include <numeric>
#include <set>

namespace kiln::plan {

namespace {

double product(const std::vector<int64_t> &dims, size_t from = 0) {
  double p = 1;
  for (size_t i = from; i < dims.size(); ++i)
    p *= static_cast<double>(dims[i]);
  return p;
}

MathClass mathOf(DType operand, MathMode mode) {
  if (operand == DType::F16 || operand == DType::BF16)
    return MathClass::Half;
  if (operand == DType::I8 || operand == DType::F8E4M3FN)
    return MathClass::Eight;
  return mode == MathMode::TF32 ? MathClass::Tf32 : MathClass::Fp32;
}

/// Each buffer the params name, once.
template <class Params> uint64_t distinctBytes(const Plan &plan, const Params &params) {
  std::set<uint32_t> seen;
  forEachBufferIndex(params, [&](uint32_t index) { seen.insert(index); });
  uint64_t bytes = 0;
  for (uint32_t index : seen)
    bytes += plan.buffers[index].bytes;
  return bytes;
}

} // namespace

std::string_view mathClassName(MathClass math) {
  switch (math) {
  case MathClass::None: return "none";
  case MathClass::Fp32: return "fp32";
  case MathClass::Tf32: return "tf32";
  case MathClass::Half: return "half";
  case MathClass::Eight: return "8-bit";
  }
  return "none";
}

StepWork stepWork(const Plan &plan, const Step &step) {
  return std::visit(
      [&](const auto &params) -> StepWork {
        using T = std::decay_t<decltype(params)>;
        StepWork work;
        if constexpr (std::is_same_v<T, CopyStep>) {
          work.bytes = 2 * params.bytes; // read and written
          return work;
        } else {
          work.bytes = distinctBytes(plan, params);
          if constexpr (std::is_same_v<T, GemmStep>) {
            work.flops = 2.0 * params.batch * params.m * params.n * params.k;
            work.math = mathOf(plan.buffers[params.a].dtype, params.math);
          } else if constexpr (std::is_same_v<T, ConvStep>) {
            // Every output (convolution) or input (transposed: it scatters) element takes one
            // multiply-add per weight element of its group: C/groups (or K/groups) x kernel.
            const std::vector<int64_t> &each = params.transpose ? params.xShape : params.yShape;
            work.flops = 2.0 * product(each) * product(params.wShape, 1);
            work.math = mathOf(plan.buffers[params.x].dtype, params.math);
          } else if constexpr (std::is_same_v<T, AttentionStep>) {
            // Q K^T and P V; a causal mask skips about half of both.
            double pairs = static_cast<double>(params.batch) * params.heads * params.seqQ * params.seqKv;
            work.flops = 2.0 * pairs * (params.headDim + params.headDimV) * (params.causal ? 0.5 : 1.0);
            work.math = mathOf(plan.buffers[params.q].dtype, MathMode::TF32);
          }
          return work;
        }
      },
      step.params);
}

} // namespace kiln::plan
