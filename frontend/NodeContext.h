//===- NodeContext.h - what an op handler sees of its node -----*- C++ -*-===//
//
// One ONNX node during import: typed access to its inputs (constants are materialized only
// when a handler asks for a Value), its attributes with ONNX defaults, the model's declared
// output types, and `build`, which creates a kiln op, infers its result types and verifies it,
// turning every diagnostic into an llvm::Error that names the node.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_FRONTEND_NODECONTEXT_H
#define KILN_FRONTEND_NODECONTEXT_H

#include "frontend/HostTensor.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace onnx {
class NodeProto;
class AttributeProto;
class TensorProto;
} // namespace onnx

namespace kiln::frontend {

class GraphImporter;

class NodeContext {
public:
  NodeContext(GraphImporter &graph, const onnx::NodeProto &node, int64_t opset, mlir::Location loc);

  const onnx::NodeProto &node() const { return node_; }
  int64_t opset() const { return opset_; }
  mlir::OpBuilder &builder();
  mlir::MLIRContext *context();
  mlir::Location loc() const { return loc_; }

  // Inputs. An absent optional input has an empty name.
  size_t numInputs() const;
  bool hasInput(size_t i) const;
  llvm::Expected<mlir::Value> input(size_t i);
  mlir::RankedTensorType inputType(size_t i) const;
  /// Inputs [0, count) as values (count = all); absent inputs at positions >= `required` are
  /// optional and skipped, absent ones below it are an error.
  llvm::Expected<llvm::SmallVector<mlir::Value>> inputs(size_t count = SIZE_MAX,
                                                        size_t required = SIZE_MAX);
  /// `v` as a rank-0 tensor: as it is when rank 0, reshaped when it holds one element (ONNX
  /// often passes scalars as shape [1]); `what` names the input in the error otherwise.
  llvm::Expected<mlir::Value> asScalar(mlir::Value v, llvm::StringRef what);
  /// The host value of input i when it is a constant (initializer or folded), else null.
  const HostTensor *constantInput(size_t i) const;
  /// Input i as integers; an error saying the input must be a constant otherwise.
  llvm::Expected<std::vector<int64_t>> constantInts(size_t i, llvm::StringRef what);

  // Outputs.
  size_t numOutputs() const;
  bool hasOutput(size_t i) const;
  /// The static type the model declares for output i (value_info or graph output), if any.
  std::optional<mlir::RankedTensorType> declaredOutputType(size_t i) const;
  void setOutput(size_t i, mlir::Value value);
  void setConstantOutput(size_t i, HostTensor value);
  /// Defines output i as a constant attribute (e.g. a splat), with no host copy.
  void setAttrOutput(size_t i, mlir::ElementsAttr value);
  /// Largest tensor (in elements) the importer folds on the host.
  int64_t foldElementLimit() const;
  /// Defines output i as the constant `tensor` (a Constant node's payload).
  llvm::Error setTensorOutput(size_t i, const onnx::TensorProto &tensor);

  // Attributes, with ONNX defaults.
  bool hasAttr(llvm::StringRef name) const;
  const onnx::AttributeProto *attr(llvm::StringRef name) const;
  int64_t attrInt(llvm::StringRef name, int64_t fallback) const;
  float attrFloat(llvm::StringRef name, float fallback) const;
  std::string attrString(llvm::StringRef name, llvm::StringRef fallback) const;
  std::vector<int64_t> attrInts(llvm::StringRef name, std::vector<int64_t> fallback = {}) const;
  std::vector<float> attrFloats(llvm::StringRef name) const;

  // Attribute builders for `build`.
  mlir::NamedAttribute i64(llvm::StringRef name, int64_t v);
  mlir::NamedAttribute f32(llvm::StringRef name, float v);
  mlir::NamedAttribute boolean(llvm::StringRef name, bool v);
  mlir::NamedAttribute str(llvm::StringRef name, llvm::StringRef v);
  mlir::NamedAttribute i64Array(llvm::StringRef name, llvm::ArrayRef<int64_t> v);

  /// Creates `kiln.<opName>`. Without `resultTypes` the op must infer them. The op is verified;
  /// failures become errors naming this node.
  llvm::Expected<mlir::Operation *> build(llvm::StringRef opName, mlir::ValueRange operands,
                                          llvm::ArrayRef<mlir::NamedAttribute> attrs = {},
                                          mlir::TypeRange resultTypes = {});
  /// build() of a single-result op, returning that result.
  llvm::Expected<mlir::Value> buildValue(llvm::StringRef opName, mlir::ValueRange operands,
                                         llvm::ArrayRef<mlir::NamedAttribute> attrs = {},
                                         mlir::TypeRange resultTypes = {});
  /// build() with one result, stored as output 0.
  llvm::Error buildInto0(llvm::StringRef opName, mlir::ValueRange operands,
                         llvm::ArrayRef<mlir::NamedAttribute> attrs = {},
                         mlir::TypeRange resultTypes = {});

  /// A kiln.constant holding `value` with element type `element`.
  mlir::Value constant(const HostTensor &value, mlir::Type element);
  /// A rank-0 or 1-d constant of i64 values.
  mlir::Value i64Constant(llvm::ArrayRef<int64_t> values, bool scalar = false);

  /// An error prefixed with the node's name, op type and opset.
  llvm::Error error(const llvm::Twine &message) const;

private:
  GraphImporter &graph_;
  const onnx::NodeProto &node_;
  int64_t opset_;
  mlir::Location loc_;
};

/// Normalizes an ONNX axis attribute/value against `rank`, or fails naming the node.
llvm::Expected<int64_t> nodeAxis(const NodeContext &ctx, int64_t axis, int64_t rank);

} // namespace kiln::frontend

#endif // KILN_FRONTEND_NODECONTEXT_H
