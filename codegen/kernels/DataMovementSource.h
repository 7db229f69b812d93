//===- DataMovementSource.h - shared pieces of the data-movement family -*- C++ -*-===//
//
// Data-movement ops (reshape, transpose, concat, split, slice, the gathers, expand, tile, pad,
// range, trilu, depth/space rearrangements) are index maps: every result element is a copy of
// one input element or a fill value. A copy moves the stored bits unchanged -- the interpreter
// copies values without rounding -- so these kernels move elements as unsigned integers of
// the element's width and one kernel text serves every element type of that width. Where the
// innermost axis is copied contiguously, several elements move as one wider access (up to
// 16 bytes); buffers start at kBufferAlignment (Plan.h), so such accesses are aligned.
//
// The emitters of the family live in DataMovement*Kernels.cpp and are registered in
// DataMovementKernels.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_KERNELS_DATAMOVEMENTSOURCE_H
#define KILN_CODEGEN_KERNELS_DATAMOVEMENTSOURCE_H

#include "codegen/kernels/KernelSource.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln::codegen::datamovement {

/// The unsigned type that moves `bytes` (1, 2, 4, 8 or 16) bytes in one access.
std::string rawType(int64_t bytes);
/// rawType of one element of `type`.
std::string rawType(DType type);
int64_t elementBytes(DType type);

/// The widest access (bytes, at most 16, a multiple of `elementBytes`) that divides the byte
/// length of every one of `rowElements` contiguous runs; `elementBytes` when none is wider.
int64_t accessBytes(int64_t elementBytes, const std::vector<int64_t> &rowElements);

/// "1x3x224x224", "scalar" for rank 0 (for messages).
std::string formatShape(const std::vector<int64_t> &shape);

/// `expr` / `divisor` and `expr` % `divisor` as kiln_i64 for a non-negative `expr`, computed
/// unsigned: division by a constant is then a shorter multiply-shift sequence.
std::string udiv(const std::string &expr, int64_t divisor);
std::string umod(const std::string &expr, int64_t divisor);

/// C statements declaring `prefix`0..rank-1 (kiln_i64), the coordinates of row-major linear
/// index `linear` in `shape` (one division per axis; size-1 axes are the constant 0).
std::string decodeCoords(const std::vector<int64_t> &shape, const std::string &linear, const std::string &prefix);

/// A kernel parameter: its C declaration (e.g. "const unsigned int *__restrict__ in") and the
/// buffer the runtime binds to it.
struct KernelParam {
  std::string decl;
  KernelArg arg;
};

/// A grid-stride kernel over `count` items: `prologue` runs once per thread, `body` once per
/// item with the item's index in `j` (kiln_i64). With count == 0 the body is left out, so
/// shape constants that would divide by zero never reach the source.
struct LoopKernel {
  std::string function; // the full symbol, context.symbol included
  std::vector<KernelParam> params;
  std::string prologue;
  std::string body;
  int64_t count = 0;
};
/// Appends `kernel`'s source and its launch (256 threads a block) to `out`.
void addLoopKernel(EmittedKernels &out, const LoopKernel &kernel);

/// Checks that `op` has `operands` operands, all present, and `results` results.
Status expectArity(const OpDesc &op, size_t operands, size_t results);
/// Checks that `tensor` (called `what` in the message) has element type `type`.
Status expectDType(const OpDesc &op, const TensorDesc &tensor, DType type, const std::string &what);
/// Checks that the result shape is `expected`.
Status expectResultShape(const OpDesc &op, const std::vector<int64_t> &expected, size_t result = 0);

/// A C expression of the raw bits (rawType(type)) that store `value` in `type`. Integer types
/// take `intValue`, float types `floatValue` (exactly representable in `type`, as interpreter
/// values are).
std::string rawLiteral(DType type, int64_t intValue, double floatValue);

/// Where kernel code reads an integer operand (slice parameters, pads, indices, k) from:
/// values baked into the source when the operand is a constant, its device buffer otherwise.
class IntOperand {
public:
  /// `operandIndex` is the ODS operand; `name` a C identifier unique within the kernel.
  /// `baked` replaces the constant's values (e.g. indices already wrapped) when given.
  IntOperand(const TensorDesc &tensor, uint32_t operandIndex, std::string name,
             std::optional<std::vector<int64_t>> baked = std::nullopt);

  bool isConstant() const { return values_.has_value(); }
  const std::vector<int64_t> &values() const { return *values_; }
  /// File-scope declarations the kernel needs (a __device__ table for a constant of more than
  /// one element; the table is named symbol + name).
  std::string globals(const std::string &symbol) const;
  /// A kiln_i64 expression of element `index` (a C expression).
  std::string at(const std::string &symbol, const std::string &index) const;
  /// The kernel parameter, when the values come from device memory.
  std::optional<KernelParam> param() const;

private:
  DType dtype_;
  uint32_t operand_;
  std::string name_;
  int64_t count_;
  std::optional<std::vector<int64_t>> values_;
};

/// Appends `param` (when there is one: IntOperand::param) to the kernel's parameters.
void addParam(LoopKernel &kernel, const std::optional<KernelParam> &param);

// The emitters of the family.
StatusOr<EmittedKernels> emitReshape(const OpDesc &op, const EmitContext &context);
StatusOr<EmittedKernels> emitTranspose(const OpDesc &op, const EmitContext &context);
StatusOr<EmittedKernels> emitConcat(const OpDesc &op, const EmitContext &context);
StatusOr<EmittedKernels> emitSplit(const OpDesc &op, const EmitContext &context);
StatusOr<EmittedKernels> emitExpand(const OpDesc &op, const EmitContext &context);
StatusOr<EmittedKernels> emitTile(const OpDesc &op, const EmitContext &context);
StatusOr<EmittedKernels> emitDepthToSpace(const OpDesc &op, const EmitContext &context);
StatusOr<EmittedKernels> emitSpaceToDepth(const OpDesc &op, const EmitContext &context);
StatusOr<EmittedKernels> emitSlice(const OpDesc &op, const EmitContext &context);
StatusOr<EmittedKernels> emitGather(const OpDesc &op, const EmitContext &context);
StatusOr<EmittedKernels> emitGatherElements(const OpDesc &op, const EmitContext &context);
StatusOr<EmittedKernels> emitGatherND(const OpDesc &op, const EmitContext &context);
StatusOr<EmittedKernels> emitPad(const OpDesc &op, const EmitContext &context);
StatusOr<EmittedKernels> emitRange(const OpDesc &op, const EmitContext &context);
StatusOr<EmittedKernels> emitTrilu(const OpDesc &op, const EmitContext &context);
/// A `gather` kiln.fusion_group (DataMovementGatherGroup.cpp; FusionGroupKernels.cpp calls it).
StatusOr<EmittedKernels> emitGatherGroup(const OpDesc &group, const EmitContext &context);

} // namespace kiln::codegen::datamovement

#endif // KILN_CODEGEN_KERNELS_DATAMOVEMENTSOURCE_H
