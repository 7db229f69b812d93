//===- PlanBuilder.h - lower a kiln module to a plan -----------*- C++ -*-===//
//
// Codegen's entry point: every op of func @main becomes plan steps (conv on cuDNN,
// matmul/gemm on cuBLASLt, reshape a view, everything else generated CUDA compiled by NVRTC),
// weights go to the aligned blob, and the memory planner places every intermediate in the
// activation arena. Needs no GPU.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_PLANBUILDER_H
#define KILN_CODEGEN_PLANBUILDER_H

#include "runtime/plan/Plan.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <string>
#include <vector>

namespace kiln::codegen {

struct CompileOptions {
  /// How f32 conv/matmul steps run: strict IEEE fp32, or TF32 tensor cores. (Half-precision
  /// steps always accumulate in fp32; the precision pass decided which steps those are.)
  plan::MathMode math = plan::MathMode::StrictF32;
  /// The `--precision` the module was optimized for ("fp32", "tf32", "bf16", "fp16"), recorded
  /// in the plan's metadata; empty means precisionName(math).
  std::string precision;
  /// Recorded in the plan's metadata as they are (plan::Metadata says their form).
  std::vector<std::string> precisionOverrides;
  std::string precisionChoice;
  std::string modelName;  // recorded in the plan (file name only)
  /// INT8 1x1 convolutions that a kernel of our own can run (codegen/kernels/
  /// PointwiseConvInt8.h: ResNet's expanding convs with their int8 residual) run as that
  /// generated kernel instead of a cuDNN graph (`kiln compile --conv-kernels=generated`).
  bool pointwiseConvInt8Kernels = false;
  uint32_t smVersion = 90;
  bool emitPtx = true;
  std::function<void(const std::string &)> progress; // one line per phase; may be empty
};

/// "fp32" / "tf32".
const char *precisionName(plan::MathMode math);

/// Lowers the module's func @main (or its only function). Errors name the op and its node.
llvm::Expected<plan::Plan> buildPlan(mlir::ModuleOp module, const CompileOptions &options);

} // namespace kiln::codegen

#endif // KILN_CODEGEN_PLANBUILDER_H
