//===- WhereInPlace.h - kiln.where over its own operand's bytes -*- C++ -*-===//
//
// BERT's attention is followed by where(row fully masked, 0, attention output) (FuseAttention
// keeps the model's NaN-to-zero of fully masked rows): a generic kernel reads and writes the
// whole output to change the rows no benchmark input masks (80 us of a bf16 BERT-base b32 plan
// on an H100, 12 such steps). When the result takes the bytes of the operand it keeps (codegen
// runs it in place: that operand dies here) and the condition is one flag per row, only the
// flagged rows need a write: a warp reads its row's flag and fills the row with the other,
// constant, operand when it says so.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_KERNELS_WHEREINPLACE_H
#define KILN_CODEGEN_KERNELS_WHEREINPLACE_H

#include "codegen/kernels/KernelEmitter.h"

#include <optional>

namespace kiln::codegen {

/// The kernel of `where` (condition, a, b) computed over the bytes of operand `kept` (1: a, 2:
/// b), which the result holds already: the other operand a one-element constant, the
/// condition a bool of the result's leading axes with size-1 trailing ones (one flag per row of
/// the trailing axes, 32 elements or more). Nullopt for any other form, which the generic
/// kernel computes.
/// Launch arguments: operand 0 (the condition), result 0.
std::optional<EmittedKernels> emitWhereInPlace(const OpDesc &where, size_t kept, const EmitContext &context);

} // namespace kiln::codegen

#endif // KILN_CODEGEN_KERNELS_WHEREINPLACE_H
