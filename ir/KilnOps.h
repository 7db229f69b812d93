//===- KilnOps.h - kiln dialect ops ----------------------------*- C++ -*-===//
#ifndef KILN_IR_KILNOPS_H
#define KILN_IR_KILNOPS_H

#include "ir/KilnDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <array>

namespace kiln {

/// Result type of an elementwise op with numpy broadcasting over `operands` (all of one element
/// type); `resultElement` overrides the element type (i1 for comparisons) when set.
llvm::LogicalResult inferBroadcastResult(std::optional<mlir::Location> location,
                                         mlir::ValueRange operands, mlir::Type resultElement,
                                         llvm::SmallVectorImpl<mlir::Type> &inferred);

/// Element type of the first operand (the base of kiln.pow).
mlir::Type elementOfFirst(mlir::ValueRange operands);

namespace OpTrait {
/// Ops computed element by element with numpy broadcasting (Kiln_ElementwiseMap in
/// KilnOps.td): what an elementwise fusion group may hold.
template <typename ConcreteType>
class ElementwiseMap : public mlir::OpTrait::TraitBase<ConcreteType, ElementwiseMap> {};
} // namespace OpTrait

/// Whether `op` has the ElementwiseMap trait.
bool isElementwiseMap(mlir::Operation *op);

/// Whether `op` is a kiln.quantize or kiln.dequantize with one scale and one zero point.
bool isPerTensorQuantization(mlir::Operation *op);

/// What an elementwise fusion group may hold: ElementwiseMap ops, and per-tensor
/// kiln.quantize / kiln.dequantize (one scale and zero point broadcast to every element;
/// per-axis parameters follow `axis`, not broadcasting).
bool isGroupElementwise(mlir::Operation *op);

} // namespace kiln

#define GET_OP_CLASSES
#include "ir/KilnOps.h.inc"

namespace kiln {

/// Whether `op` is a kiln.gather of whole rows of a float 2-d table (axis 0: an embedding
/// lookup) whose rows are as long as the rows `norm` normalizes (the product of its
/// normalized axes): the one gather a norm fusion group's prologue may hold, its kernel reading
/// the table rows where it reads the row it normalizes. False without a norm.
bool isRowGather(mlir::Operation *op, LayerNormOp norm);

} // namespace kiln

#endif // KILN_IR_KILNOPS_H
