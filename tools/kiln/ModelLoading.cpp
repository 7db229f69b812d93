//===- ModelLoading.cpp - ONNX or kiln MLIR into a module -----------------===//

#include "ModelLoading.h"

#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringRef.h"

namespace kiln::cli {

namespace cl = llvm::cl;

ModelFlags::ModelFlags(cl::SubCommand &sub, Categories &categories)
    : model(cl::Positional, cl::desc("<model.onnx|model.mlir>"), cl::sub(sub), cl::cat(categories.input)),
      shapes("shape", cl::value_desc("name=dims"),
             cl::desc("Static shape for a graph input with symbolic dims,\n"
                      "e.g. --shape input=1x3x224x224 (repeatable)"),
             cl::sub(sub), cl::cat(categories.input)) {}

llvm::Expected<frontend::ImportOptions> ModelFlags::importOptions() const {
  if (model.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "no model given");
  frontend::ImportOptions options;
  for (const std::string &shape : shapes)
    if (llvm::Error error = frontend::parseShapeOption(shape, options))
      return std::move(error);
  return options;
}

llvm::Expected<mlir::func::FuncOp> mainFunction(mlir::ModuleOp module) {
  if (auto main = module.lookupSymbol<mlir::func::FuncOp>("main"))
    return main;
  auto funcs = module.getOps<mlir::func::FuncOp>();
  if (funcs.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "the module has no function");
  return *funcs.begin();
}

std::string interfaceName(mlir::func::FuncOp func, unsigned i, bool result) {
  auto attr = result ? func.getResultAttrOfType<mlir::StringAttr>(i, "kiln.name")
                     : func.getArgAttrOfType<mlir::StringAttr>(i, "kiln.name");
  return attr ? attr.getValue().str() : (result ? "output" : "input") + std::to_string(i);
}

llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>> loadModel(mlir::MLIRContext &context, const std::string &path,
                                                            const frontend::ImportOptions &options) {
  frontend::registerImportDialects(context);
  if (!llvm::StringRef(path).ends_with(".mlir"))
    return frontend::importOnnxFile(context, path, options);
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::parseSourceFile<mlir::ModuleOp>(path, &context);
  if (!module)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "cannot parse '" + path + "' as kiln MLIR");
  return module;
}

} // namespace kiln::cli
