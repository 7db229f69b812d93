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

namespace kiln::codegen {

struct CompileOptions {
  /// fp32: strict IEEE fp32 for conv/matmul; tf32: TF32 tensor cores for them.
  plan::MathMode math = plan::MathMode::StrictF32;
  std::string modelName;  // recorded in the plan (file name only)
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
