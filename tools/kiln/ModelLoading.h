//===- ModelLoading.h - ONNX or kiln MLIR into a module --------*- C++ -*-===//
#ifndef KILN_TOOLS_KILN_MODELLOADING_H
#define KILN_TOOLS_KILN_MODELLOADING_H

#include "frontend/OnnxImporter.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace kiln::cli {

/// Reads `path`: kiln MLIR when it ends in .mlir, else ONNX (imported with `options`). With
/// `fold`, runs kiln-fold-constants afterwards (what `kiln import` does).
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>> loadModel(mlir::MLIRContext &context, const std::string &path,
                                                            const frontend::ImportOptions &options, bool fold);

} // namespace kiln::cli

#endif // KILN_TOOLS_KILN_MODELLOADING_H
