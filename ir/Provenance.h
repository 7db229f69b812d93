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

/// The ONNX values an op computes, per result (a StringAttr each, "" for a result that is no
/// ONNX value): set by the importer on the op that computes a node's output, kept by the
/// passes on the op that computes it afterwards; `kiln eval --dump` writes the values by name.
inline constexpr llvm::StringLiteral kOnnxValuesAttr = "kiln.onnx_values";

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

/// The ONNX value each result of `op` is (kOnnxValuesAttr), "" for a result that is none. An
/// op with one region (a kiln.fusion_group) computes what its body yields: a result is named
/// as the op in the body that computes the yielded value names it.
std::vector<std::string> onnxValueNames(mlir::Operation *op);

/// The ONNX value `value` is (as onnxValueNames names an op result), "" when none.
std::string onnxValueName(mlir::Value value);
/// Makes op result `value` ONNX value `name` (nothing for an empty name or a block argument):
/// a pass that replaces the op computing a value names the op that computes it now. The op
/// that computed it before is erased or computes something else (then clearOnnxValueNames).
void setOnnxValueName(mlir::Value value, llvm::StringRef name);
/// `op` computes no ONNX value any more (it took another op's attributes, say).
void clearOnnxValueNames(mlir::Operation *op);

/// Whether `target` names `op` as the precision and quantization options do: its ONNX node
/// name, its ONNX op type ("Conv"), or its kiln op name with or without "kiln." ("kiln.conv").
bool matchesOpTarget(mlir::Operation *op, llvm::StringRef target);

/// "node 'conv1' (Conv)" for a location with ONNX provenance: how diagnostics name a node.
std::optional<std::string> describeNode(mlir::Location loc);
/// describeNode of the op's location or, without provenance, its op name ("kiln.conv").
std::string describeNode(mlir::Operation *op);

} // namespace kiln

#endif // KILN_IR_PROVENANCE_H
