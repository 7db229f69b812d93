//===- StepWork.h - the arithmetic and memory traffic of a plan step -*- C++ -*-===//
//
// What a step has to do, from the plan alone: floating-point operations (multiply-adds count
// two) of the library steps, and the bytes of the distinct buffers it touches. `kiln profile`
// divides them by the step's measured time to get achieved TFLOP/s and GB/s, and compares
// those with the GPU's peaks for the step's math (DevicePeaks.h) to say whether a step is
// compute- or memory-bound. Host-only; no CUDA.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_PLAN_STEPWORK_H
#define KILN_RUNTIME_PLAN_STEPWORK_H

#include "runtime/plan/Plan.h"

#include <cstdint>
#include <string_view>

namespace kiln::plan {

/// The arithmetic a step's FLOPs run on, which sets its peak.
enum class MathClass : uint8_t {
  None,     // no FLOPs counted: generated kernels and copies (memory traffic only)
  Fp32,     // IEEE fp32 on CUDA cores (strict fp32 convs and gemms)
  Tf32,     // TF32 tensor cores (f32 operands, MathMode::TF32)
  Half,     // bf16/fp16 tensor cores with fp32 accumulation
  Eight,    // int8/fp8 tensor cores (int32 or fp32 accumulation)
};
inline constexpr int kMathClassCount = 5;
/// "none", "fp32", "tf32", "half", "8-bit".
std::string_view mathClassName(MathClass math);

struct StepWork {
  double flops = 0;   // 0 for kernels and copies
  uint64_t bytes = 0; // the distinct buffers it reads and writes, each once (a lower bound)
  MathClass math = MathClass::None;
};

/// The work of `step` in `plan` (whose buffer indices it must hold: a validated plan).
StepWork stepWork(const Plan &plan, const Step &step);

} // namespace kiln::plan

#endif // KILN_RUNTIME_PLAN_STEPWORK_H
