//===- Passes.td - kiln passes -----------------------------*- tablegen -*-===//
//
// Every kiln pass, one per file in passes/. Pipelines are built in one place (Pipelines.cpp,
// with the optimization issues).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_TD
#define KILN_PASSES_TD

include "mlir/Pass/PassBase.td"

def FoldConstants : Pass<"kiln-fold-constants", "mlir::func::FuncOp"> {
  let summary = "Evaluate ops whose operands are all constants with the reference interpreter";
  let description = [{
    Replaces every kiln op whose operands are all `kiln.constant` with constants computed by
    the CPU reference interpreter (ir/Interpreter), so folding means exactly what the op means.
    A result larger than `max-elements` is not folded and is reported as a remark, so that a
    small model cannot expand into gigabytes of constants.
  }];
  let options = [
    Option<"maxElements", "max-elements", "int64_t", /*default=*/"1 << 20",
           "Largest result (in elements) that is folded">,
    Option<"inlineElements", "inline-elements", "int64_t", /*default=*/"16",
           "Folded constants with more elements become resource blobs">,
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

#endif // KILN_PASSES_TD
