//===- TensorNpy.h - interpreter tensors to and from .npy -------*- C++ -*-===//
//
// What `kiln eval` reads its inputs from and writes its outputs and dumped values to. numpy has
// no bf16 or f8 dtype: such tensors are read and written as float32 (exact when writing).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TOOLS_KILN_TENSORNPY_H
#define KILN_TOOLS_KILN_TENSORNPY_H

#include "ir/Interpreter/Tensor.h"
#include "runtime/Npy.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/Error.h"

#include <string>

namespace kiln::cli {

/// The numpy dtype of an element type, or "" when numpy has none (bf16, f8).
std::string npyDtype(mlir::Type t);

/// The array as a tensor of `type` (its dtype and shape must match; bf16/f8 from float32);
/// errors name input `name`.
llvm::Expected<interp::Tensor> tensorFromNpy(const runtime::NpyArray &array, mlir::RankedTensorType type,
                                             llvm::StringRef name);

/// The tensor as a numpy array (bf16/f8 widened to float32).
llvm::Expected<runtime::NpyArray> tensorToNpy(const interp::Tensor &t);

} // namespace kiln::cli

#endif // KILN_TOOLS_KILN_TENSORNPY_H
