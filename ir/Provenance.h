//===- Provenance.h - which ONNX node an op comes from ---------*- C++ -*-===//
//
// The importer gives every op the location
//   fused<"OpType">["node_name"("model.onnx":<node index + 1>:0)]
// (a FusedLoc whose metadata is the ONNX op type around the NameLoc of the node), so passes,
// diagnostics, codegen and plans can name the ONNX node and its op type. Ops a pass creates
// take the location of the op they replace or serve, so they keep that provenance.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_IR_PROVENANCE_H
#define KILN_IR_PROVENANCE_H

#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln {

struct OnnxNode {
  std::string name;   // the node's name (the importer names unnamed nodes "<OpType>_<index>")
  std::string opType; // e.g. "Conv"; empty when the location does not say
};

/// The importer's location for node `name` of type `opType`, the `index`-th node of `model`.
mlir::Location onnxNodeLoc(mlir::MLIRContext *context, llvm::StringRef name, llvm::StringRef opType,
                           llvm::StringRef model, unsigned index);

/// The ONNX node a location names (the first NameLoc inside it), if any.
std::optional<OnnxNode> onnxNodeOf(mlir::Location loc);

/// The node name an op came from, else its op name ("kiln.add"): for messages and plan steps.
std::string nodeName(mlir::Operation *op);

/// Every ONNX node a location names (each NameLoc inside it, read as onnxNodeOf reads the
/// first), in order, each once: the nodes a fused op (a kiln.fusion_group, a kiln.attention)
/// covers. Empty without provenance.
std::vector<std::string> nodeNames(mlir::Location loc);

/// "node 'conv1' (Conv)" for a location with ONNX provenance: how diagnostics name a node.
std::optional<std::string> describeNode(mlir::Location loc);
/// describeNode of the op's location or, without provenance, its op name ("kiln.conv").
std::string describeNode(mlir::Operation *op);

} // namespace kiln

#endif // KILN_IR_PROVENANCE_H
