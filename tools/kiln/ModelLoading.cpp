//===- ModelLoading.cpp - ONNX or kiln MLIR into a module -----------------===//

#include "ModelLoading.h"

#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringRef.h"

namespace kiln::cli {

llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>> loadModel(mlir::MLIRContext &context, const std::string &path,
                                                            const frontend::ImportOptions &options, bool fold) {
  frontend::registerImportDialects(context);
  mlir::OwningOpRef<mlir::ModuleOp> module;
  if (llvm::StringRef(path).ends_with(".mlir")) {
    module = mlir::parseSourceFile<mlir::ModuleOp>(path, &context);
    if (!module)
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "cannot parse '" + path + "' as kiln MLIR");
  } else {
    auto imported = frontend::importOnnxFile(context, path, options);
    if (!imported)
      return imported.takeError();
    module = std::move(*imported);
  }
  if (fold) {
    mlir::PassManager pm(&context);
    pm.addNestedPass<mlir::func::FuncOp>(createFoldConstants());
    if (mlir::failed(pm.run(*module)))
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "constant folding failed");
  }
  return module;
}

} // namespace kiln::cli
