//===- OnnxShapes.h - ONNX's own shape conventions -------------*- C++ -*-===//
//
// Shape rules that belong to ONNX's encoding rather than to a kiln op: Reshape's 0 and -1,
// Squeeze/Unsqueeze axes, Flatten's axis. Both the constant folder and the op handlers use them.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_FRONTEND_ONNXSHAPES_H
#define KILN_FRONTEND_ONNXSHAPES_H

#include "ir/ShapeRules.h"

namespace kiln::frontend {

/// Resolves an ONNX Reshape target (0 copies the input dim unless allowzero, one -1 is inferred).
ShapeOrError resolveReshape(llvm::ArrayRef<int64_t> input, llvm::ArrayRef<int64_t> target,
                            bool allowZero);
/// Squeeze: removes the given axes (all size-1 axes when none are given).
ShapeOrError squeezeShape(llvm::ArrayRef<int64_t> input, llvm::ArrayRef<int64_t> axes);
/// Unsqueeze: inserts size-1 axes at the given positions of the output.
ShapeOrError unsqueezeShape(llvm::ArrayRef<int64_t> input, llvm::ArrayRef<int64_t> axes);
/// Flatten: [prod(dims[:axis]), prod(dims[axis:])].
ShapeOrError flattenShape(llvm::ArrayRef<int64_t> input, int64_t axis);

} // namespace kiln::frontend

#endif // KILN_FRONTEND_ONNXSHAPES_H
