//===- TensorConversion.h - ONNX tensors and types to MLIR -----*- C++ -*-===//
//
// Decodes TensorProto payloads in every storage form ONNX allows (raw_data, the typed repeated
// fields, external data) into little-endian bytes, and turns them into MLIR attributes: small
// tensors as DenseElementsAttr, weights as resource blobs that are never printed inline.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_FRONTEND_TENSORCONVERSION_H
#define KILN_FRONTEND_TENSORCONVERSION_H

#include "frontend/HostTensor.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace onnx {
class TensorProto;
} // namespace onnx

namespace kiln::frontend {

/// MLIR element type of an ONNX TensorProto::DataType, or an error naming the type.
llvm::Expected<mlir::Type> convertElementType(mlir::MLIRContext &context, int32_t dataType);

/// A decoded tensor: its type and its elements as packed little-endian bytes (one byte per bool).
struct RawTensor {
  mlir::RankedTensorType type;
  int32_t onnxType = 0;
  std::vector<char> bytes;
};

/// Decodes `tensor`; `modelDir` resolves external data. Errors name the tensor.
llvm::Expected<RawTensor> decodeTensor(mlir::MLIRContext &context, const onnx::TensorProto &tensor,
                                       llvm::StringRef modelDir);

/// The tensor as an attribute: dense when it has at most `inlineLimit` elements (or is i1), a
/// resource blob named after `name` otherwise.
mlir::ElementsAttr toElementsAttr(const RawTensor &tensor, llvm::StringRef name, int64_t inlineLimit);

/// The values of a raw tensor for import-time folding.
HostTensor toHostTensor(const RawTensor &tensor);

/// A dense attribute holding a host tensor's values in `type`.
mlir::DenseElementsAttr toDenseAttr(const HostTensor &tensor, mlir::RankedTensorType type);

} // namespace kiln::frontend

#endif // KILN_FRONTEND_TENSORCONVERSION_H
