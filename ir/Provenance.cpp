//===- Provenance.cpp - which ONNX node an op comes from ------------------===//

#include "ir/Provenance.h"

#include "mlir/IR/Builders.h"
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

std::string onnxValueName(mlir::Value value) {
  auto result = llvm::dyn_cast<mlir::OpResult>(value);
  if (!result)
    return "";
  auto attr = result.getOwner()->getAttrOfType<mlir::ArrayAttr>(kOnnxValuesAttr);
  if (!attr || result.getResultNumber() >= attr.size())
    return "";
  auto name = llvm::dyn_cast<mlir::StringAttr>(attr[result.getResultNumber()]);
  return name ? name.getValue().str() : "";
}

void setOnnxValueName(mlir::Value value, llvm::StringRef name) {
  auto result = llvm::dyn_cast<mlir::OpResult>(value);
  if (!result || name.empty())
    return;
  mlir::Operation *op = result.getOwner();
  mlir::Builder builder(op->getContext());
  llvm::SmallVector<mlir::Attribute> names(op->getNumResults(), builder.getStringAttr(""));
  if (auto existing = op->getAttrOfType<mlir::ArrayAttr>(kOnnxValuesAttr))
    for (auto [i, attr] : llvm::enumerate(existing))
      if (i < names.size())
        names[i] = attr;
  names[result.getResultNumber()] = builder.getStringAttr(name);
  op->setAttr(kOnnxValuesAttr, builder.getArrayAttr(names));
}

void clearOnnxValueNames(mlir::Operation *op) { op->removeAttr(kOnnxValuesAttr); }

std::vector<std::string> onnxValueNames(mlir::Operation *op) {
  std::vector<std::string> names(op->getNumResults());
  auto nameOf = [](mlir::Value value) { return onnxValueName(value); };
  if (op->getNumRegions() == 1 && op->getRegion(0).hasOneBlock()) {
    mlir::Operation *terminator = op->getRegion(0).front().getTerminator();
    if (terminator && terminator->getNumOperands() == op->getNumResults()) {
      for (auto [i, yielded] : llvm::enumerate(terminator->getOperands())) {
        // A group that computes in f32 and stores bf16 yields the cast of the named value:
        // the same value, rounded.
        mlir::Value value = yielded;
        while (mlir::Operation *def = value.getDefiningOp()) {
          if (def->getName().getStringRef() != "kiln.cast" || !nameOf(value).empty())
            break;
          value = def->getOperand(0);
        }
        names[i] = nameOf(value);
      }
      return names;
    }
  }
  for (auto [i, result] : llvm::enumerate(op->getResults()))
    names[i] = nameOf(result);
  return names;
}

bool matchesOpTarget(mlir::Operation *op, llvm::StringRef target) {
  llvm::StringRef opName = op->getName().getStringRef();
  if (target == opName || (opName.starts_with("kiln.") && target == opName.drop_front(5)))
    return true;
  std::optional<OnnxNode> node = onnxNodeOf(op->getLoc());
  return node && (target == node->name || target == node->opType);
}

} // namespace kiln
