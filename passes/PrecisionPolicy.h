//===- PrecisionPolicy.h - which precision each kiln op runs in --*- C++ -*-===//
//
// The autocast-style policy of the mixed-precision pass, in one table:
//  * Compute ops (conv, conv_transpose, matmul, gemm, einsum) run in the plan's half type
//    (bf16/fp16) with fp32 accumulation;
//  * Fp32 ops stay fp32: their half inputs are cast up, their results are f32. These are the
//    ops whose results can outgrow their inputs (exp, pow, sums, products, cumulative sums:
//    fp16 overflows at 65504) or whose float math is coordinate math (resize, range), and the
//    (de)quantization ops, whose scales are fp32 by definition;
//  * every other op follows its inputs: it runs in the widest type of its float operands that
//    are neither constants nor computed from constants alone (those are converted to it: at
//    compile time for constants); with no such operand it stays fp32. Kernels and the interpreter
//    compute every op in fp32 from half storage and round once on the store, so the
//    normalizations, softmax and bounded transcendental ops (erf, tanh, sigmoid, gelu)
//    "compute internally in fp32" even with half inputs and outputs.
// Per-op overrides (--keep-fp32, --force-precision) take precedence over the table.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_PRECISIONPOLICY_H
#define KILN_PASSES_PRECISIONPOLICY_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringRef.h"

namespace kiln {

enum class PrecisionClass { Compute, Fp32, Follow };

/// The class of a kiln op by name ("kiln.conv"); ops not listed follow their inputs.
PrecisionClass precisionClassOf(llvm::StringRef opName);
/// "compute-bound", "fp32", "follows its inputs".
llvm::StringRef describePrecisionClass(PrecisionClass cls);

/// Whether operand `index` of `op` shares the op's float element type (so a precision change of
/// the op changes it). False for operands whose type is fixed apart from the op's: pow's
/// exponent, resize's scales and roi.
bool sharesOpFloatType(mlir::Operation *op, unsigned index);

} // namespace kiln

#endif // KILN_PASSES_PRECISIONPOLICY_H
