//===- OnnxImporter.h - ONNX ModelProto to the kiln dialect ----*- C++ -*-===//
//
// The public entry point of the frontend: reads an ONNX model (opsets 13-21 of the default
// domain, and older opsets where the op is unchanged) and produces a module with one
// `func.func @main` whose every shape is static.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_FRONTEND_ONNXIMPORTER_H
#define KILN_FRONTEND_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kiln::frontend {

struct ImportOptions {
  /// Static shapes for graph inputs, by input name (`--shape name=1x3x224x224`). Required for
  /// every input with a symbolic or unknown dim.
  std::map<std::string, std::vector<int64_t>> inputShapes;
  /// Constants with at most this many elements print inline; larger ones become resource blobs.
  int64_t inlineElementLimit = 16;
  /// Import-time folding of shape subgraphs stops at tensors larger than this (elements).
  int64_t foldElementLimit = 1 << 16;
};

/// Parses `--shape` text: "name=1x3x224x224".
llvm::Error parseShapeOption(llvm::StringRef text, ImportOptions &options);

/// Imports the model at `path`. All failures come back as an error naming the node, its op
/// type and opset and what to do; an unsupported model lists every unsupported (op, opset).
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
importOnnxFile(mlir::MLIRContext &context, llvm::StringRef path, const ImportOptions &options);

/// Imports a model already in memory; `modelDir` resolves external data.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
importOnnxBytes(mlir::MLIRContext &context, llvm::StringRef bytes, llvm::StringRef modelDir,
                llvm::StringRef modelName, const ImportOptions &options);

/// Registers the dialects an imported module uses.
void registerImportDialects(mlir::MLIRContext &context);

} // namespace kiln::frontend

#endif // KILN_FRONTEND_ONNXIMPORTER_H
