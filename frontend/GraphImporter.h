//===- GraphImporter.h - one ONNX graph into one func ----------*- C++ -*-===//
#ifndef KILN_FRONTEND_GRAPHIMPORTER_H
#define KILN_FRONTEND_GRAPHIMPORTER_H

#include "frontend/HostTensor.h"
#include "frontend/OnnxImporter.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringMap.h"

#include <optional>

namespace onnx {
class ModelProto;
class GraphProto;
} // namespace onnx

namespace kiln::frontend {

/// What the importer knows of one ONNX value: a constant (host value and/or attribute, turned
/// into a kiln.constant only when an op needs it) or an SSA value.
struct ValueEntry {
  mlir::RankedTensorType type;
  mlir::Value value;
  std::optional<HostTensor> host;
  mlir::ElementsAttr attr;
};

class GraphImporter {
public:
  GraphImporter(mlir::MLIRContext &context, const onnx::ModelProto &model, llvm::StringRef modelDir,
                llvm::StringRef modelName, const ImportOptions &options);

  llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>> run();

  // Used by NodeContext.
  mlir::OpBuilder &builder() { return builder_; }
  mlir::MLIRContext &context() { return context_; }
  const ImportOptions &options() const { return options_; }
  llvm::StringRef modelDir() const { return modelDir_; }
  const ValueEntry *lookup(llvm::StringRef name) const;
  llvm::Expected<mlir::Value> materialize(llvm::StringRef name);
  void define(llvm::StringRef name, ValueEntry entry);
  std::optional<mlir::RankedTensorType> declaredType(llvm::StringRef name) const;

private:
  llvm::Error checkOpsets();
  llvm::Error checkGraphStructure();
  llvm::Error checkSupportedOps();
  llvm::Error importInitializers();
  llvm::Expected<llvm::SmallVector<mlir::Type>> importInputTypes(llvm::SmallVectorImpl<std::string> &names);
  llvm::Error importNodes();
  /// Records on the op that computes ONNX value `name` (made by the node at `nodeLoc`) which
  /// of its results that value is: kOnnxValuesAttr, the names of its results ("" for none).
  void nameOnnxValue(llvm::StringRef name, mlir::Location nodeLoc);

  mlir::MLIRContext &context_;
  const onnx::ModelProto &model_;
  const onnx::GraphProto &graph_;
  std::string modelDir_;
  std::string modelName_;
  const ImportOptions &options_;
  mlir::OpBuilder builder_;
  int64_t opset_ = 0;
  llvm::StringMap<ValueEntry> values_;
  llvm::StringMap<mlir::RankedTensorType> declared_;
};

} // namespace kiln::frontend

#endif // KILN_FRONTEND_GRAPHIMPORTER_H
