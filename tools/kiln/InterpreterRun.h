//===- InterpreterRun.h - a model's inputs and values in the interpreter -*- C++ -*-===//
//
// What `kiln eval`, `kiln compare --reference interpreter` and the precision search share: the
// function's arguments from .npy files (or random), and an evaluation that writes every ONNX
// value it computes into a dump directory (ValueDump.h) with how it was computed.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TOOLS_KILN_INTERPRETERRUN_H
#define KILN_TOOLS_KILN_INTERPRETERRUN_H

#include "passes/Pipelines.h"
#include "ir/Interpreter/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace kiln::cli {

/// The arguments of `func`: each input from its file in `files` (name -> .npy); an input without
/// one is random (uniform in [-1, 1), integers in [0, 9], with `seed`), or an error naming it
/// when no seed is given. A file for a name that is no input is an error.
llvm::Expected<llvm::SmallVector<interp::Tensor>> interpreterArguments(mlir::func::FuncOp func,
                                                                       const std::map<std::string, std::string> &files,
                                                                       std::optional<uint64_t> seed);

/// Evaluates `func` on `arguments`, writing every ONNX value into `dir` with the manifest's
/// metadata from `options` (the pipeline `func` went through); `count` gets how many.
llvm::Expected<llvm::SmallVector<interp::Tensor>> evaluateIntoDump(mlir::func::FuncOp func,
                                                                   llvm::ArrayRef<interp::Tensor> arguments,
                                                                   const std::string &modelPath,
                                                                   const PipelineOptions &options,
                                                                   const std::string &dir, size_t &count);

} // namespace kiln::cli

#endif // KILN_TOOLS_KILN_INTERPRETERRUN_H
