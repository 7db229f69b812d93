//===- Provenance.cpp - which ONNX node an op comes from ------------------===//

#include "ir/Provenance.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"

namespace kiln {

mlir::Location onnxNodeLoc(mlir::MLIRContext *context, llvm::StringRef name, llvm::StringRef opType,
                           llvm::StringRef model, unsigned index) {
  auto node = mlir::NameLoc::get(mlir::StringAttr::get(context, name),
                                 mlir::FileLineColLoc::get(context, model, index + 1, 0));
  return mlir::FusedLoc::get(context, {node}, mlir::StringAttr::get(context, opType));
}

std::optional<OnnxNode> onnxNodeOf(mlir::Location loc) {
  if (auto fused = llvm::dyn_cast<mlir::FusedLoc>(loc)) {
    for (mlir::Location inner : fused.getLocations()) {
      if (auto node = onnxNodeOf(inner)) {
        if (node->opType.empty())
          if (auto type = llvm::dyn_cast_or_null<mlir::StringAttr>(fused.getMetadata()))
            node->opType = type.getValue().str();
        return node;
      }
    }
    return std::nullopt;
  }
  if (auto name = llvm::dyn_cast<mlir::NameLoc>(loc))
    return OnnxNode{name.getName().str(), ""};
  if (auto callSite = llvm::dyn_cast<mlir::CallSiteLoc>(loc))
    return onnxNodeOf(callSite.getCallee());
  return std::nullopt;
}

std::string nodeName(mlir::Operation *op) {
  if (auto node = onnxNodeOf(op->getLoc()))
    return node->name;
  return op->getName().getStringRef().str();
}

namespace {
/// Appends the node names in `loc` that `names` lacks: onnxNodeOf's walk, over every location
/// rather than up to the first.
void collectNodeNames(mlir::Location loc, std::vector<std::string> &names) {
  if (auto fused = llvm::dyn_cast<mlir::FusedLoc>(loc)) {
    for (mlir::Location inner : fused.getLocations())
      collectNodeNames(inner, names);
  } else if (auto name = llvm::dyn_cast<mlir::NameLoc>(loc)) {
    if (llvm::find(names, name.getName().getValue()) == names.end())
      names.push_back(name.getName().str());
  } else if (auto callSite = llvm::dyn_cast<mlir::CallSiteLoc>(loc)) {
    collectNodeNames(callSite.getCallee(), names);
  }
}
} // namespace

std::vector<std::string> nodeNames(mlir::Location loc) {
  std::vector<std::string> names;
  collectNodeNames(loc, names);
  return names;
}

std::optional<std::string> describeNode(mlir::Location loc) {
  auto node = onnxNodeOf(loc);
  if (!node)
    return std::nullopt;
  std::string text = "node '" + node->name + "'";
  if (!node->opType.empty())
    text += " (" + node->opType + ")";
  return text;
}

std::string describeNode(mlir::Operation *op) {
  return describeNode(op->getLoc()).value_or(op->getName().getStringRef().str());
}

} // namespace kiln
