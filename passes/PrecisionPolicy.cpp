//===- PrecisionPolicy.cpp - which precision each kiln op runs in ----------===//

#include "passes/PrecisionPolicy.h"

#include "ir/KilnOps.h"

#include "llvm/ADT/StringSwitch.h"

namespace kiln {

PrecisionClass precisionClassOf(llvm::StringRef opName) {
  return llvm::StringSwitch<PrecisionClass>(opName)
      .Cases({"kiln.conv", "kiln.conv_transpose", "kiln.matmul", "kiln.gemm", "kiln.einsum"}, PrecisionClass::Compute)
      // Results that can outgrow the inputs' range or precision.
      .Cases({"kiln.exp", "kiln.log", "kiln.pow", "kiln.softplus", "kiln.cumsum"}, PrecisionClass::Fp32)
      .Cases({"kiln.reduce_sum", "kiln.reduce_prod", "kiln.reduce_sum_square", "kiln.reduce_l1", "kiln.reduce_l2",
              "kiln.reduce_log_sum", "kiln.reduce_log_sum_exp"},
             PrecisionClass::Fp32)
      // Coordinate math, and scales that are fp32 by definition.
      .Cases({"kiln.resize", "kiln.range", "kiln.quantize", "kiln.dequantize"}, PrecisionClass::Fp32)
      .Default(PrecisionClass::Follow);
}

llvm::StringRef describePrecisionClass(PrecisionClass cls) {
  switch (cls) {
  case PrecisionClass::Compute: return "compute-bound";
  case PrecisionClass::Fp32: return "fp32";
  case PrecisionClass::Follow: return "follows its inputs";
  }
  return "";
}

bool sharesOpFloatType(mlir::Operation *op, unsigned index) {
  if (llvm::isa<PowOp>(op))
    return index == 0;
  if (auto resize = llvm::dyn_cast<ResizeOp>(op))
    return op->getOperand(index) == resize.getInput();
  return !llvm::isa<CastOp>(op);
}

} // namespace kiln
