//===- ModelLoading.h - ONNX or kiln MLIR into a module --------*- C++ -*-===//
#ifndef KILN_TOOLS_KILN_MODELLOADING_H
#define KILN_TOOLS_KILN_MODELLOADING_H

#include "CommandLine.h"

#include "frontend/OnnxImporter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace kiln::cli {

/// The model a command reads (its positional argument) and `--shape`, for import, eval and
/// compile.
class ModelFlags {
public:
  ModelFlags(llvm::cl::SubCommand &sub, Categories &categories);

  const std::string &path() const { return model; }
  /// The import options --shape gives; an error (a usage error) when no model was named or a
  /// --shape value is malformed or repeated.
  llvm::Expected<frontend::ImportOptions> importOptions() const;

private:
  llvm::cl::opt<std::string> model;
  llvm::cl::list<std::string> shapes;
};

/// Reads `path`: kiln MLIR when it ends in .mlir (parse errors are reported through the
/// context's diagnostics), else ONNX imported with `options`.
/// The module's function to run: @main, else its first function; an error when it has none.
llvm::Expected<mlir::func::FuncOp> mainFunction(mlir::ModuleOp module);

/// A graph input's (or, with `result`, output's) ONNX name, "input<i>" / "output<i>" without one.
std::string interfaceName(mlir::func::FuncOp func, unsigned i, bool result);

llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>> loadModel(mlir::MLIRContext &context, const std::string &path,
                                                            const frontend::ImportOptions &options);

} // namespace kiln::cli

#endif // KILN_TOOLS_KILN_MODELLOADING_H
