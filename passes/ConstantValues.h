//===- ConstantValues.h - reading and computing kiln.constant values -*- C++ -*-===//
//
// What passes need to know about constants: the value of a scalar constant, an op whose
// operands are all constants replaced by the constants the reference interpreter computes
// for it (so a compile-time value means exactly what the op means at run time), and a
// constant permuted without the interpreter (weights of any size).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_CONSTANTVALUES_H
#define KILN_PASSES_CONSTANTVALUES_H

#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/Support/Error.h"

#include <optional>

namespace kiln {

/// The value of a one-element float kiln.constant; nullopt for anything else.
std::optional<double> scalarConstant(mlir::Value value);

/// Whether `value` is a scalar constant within `relative` of `expected` (the exporters write
/// constants like sqrt(2) in fp32, and the precision pass may have rounded them to bf16).
bool isScalarConstantNear(mlir::Value value, double expected, double relative);

/// Whether every element of a constant payload is the same value (a splat, or a blob whose
/// elements repeat the first one's bytes); false when the payload cannot be read.
bool isUniformConstant(mlir::ElementsAttr value);

/// Evaluates `op`, whose operands must all be kiln.constant, with the reference interpreter and
/// replaces its results by constants before erasing it. Results with more than `inlineElements`
/// elements become resource blobs named after `blobName`. On an error (an operand the
/// interpreter cannot read, an evaluation error) the op is left as it was.
llvm::Error replaceWithConstants(mlir::Operation *op, int64_t inlineElements, llvm::StringRef blobName);

/// A constant payload read as `shape` (the same elements: its own shape, or with unit axes
/// added) and permuted as kiln.transpose permutes (output axis i is input axis perm[i]). The
/// bytes move and nothing is converted, whatever the size or element type; results with more
/// than `inlineElements` elements are resource blobs named after the source blob (or
/// "transposed") with `suffix`. Fails when the payload cannot be read (an elided blob).
llvm::Expected<mlir::ElementsAttr> transposeConstant(mlir::ElementsAttr value, llvm::ArrayRef<int64_t> shape,
                                                     llvm::ArrayRef<int64_t> perm, int64_t inlineElements,
                                                     llvm::StringRef suffix);

} // namespace kiln

#endif // KILN_PASSES_CONSTANTVALUES_H
