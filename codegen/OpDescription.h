//===- OpDescription.h - kiln ops as plain descriptions --------*- C++ -*-===//
//
// The kernel emitters (codegen/kernels) see ops as OpDesc values, free of MLIR. This converts
// any kiln op generically: element types, static shapes, attributes by name, the values of
// small constant operands, and absent optional operands as empty slots.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_OPDESCRIPTION_H
#define KILN_CODEGEN_OPDESCRIPTION_H

#include "codegen/kernels/KernelEmitter.h"
#include "ir/Provenance.h"

#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/Operation.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace kiln::codegen {

/// The plan element type of a builtin element type; an error for any other type.
llvm::Expected<DType> dtypeOf(mlir::Type elementType);
/// dtype and shape of a ranked tensor value (no constant values).
llvm::Expected<TensorDesc> describeValue(mlir::Value value);
/// "<op> '<node>': <message>", the form of every codegen error about an op.
llvm::Error opError(mlir::Operation *op, const llvm::Twine &message);
/// The op's operands in ODS order, a null Value for an absent optional operand (the slots of
/// OpDesc::operands).
std::vector<mlir::Value> operandSlots(mlir::Operation *op);
/// The op as an OpDesc.
llvm::Expected<OpDesc> describeOp(mlir::Operation *op);
/// The bytes of a constant as the plan stores them (little-endian, bool as one byte).
llvm::Expected<std::vector<uint8_t>> constantBytes(mlir::ElementsAttr value);

} // namespace kiln::codegen

#endif // KILN_CODEGEN_OPDESCRIPTION_H
