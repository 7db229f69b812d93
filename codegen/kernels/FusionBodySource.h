//===- FusionBodySource.h - the ops of a fusion group's body as CUDA statements -*- C++ -*-===//
//
// A generated fusion kernel evaluates its group's body op by op, per element: each op's own
// element function (describeElement, the code its standalone kernel would run) in a scope of
// its own, reading its inputs from the group's inputs or from earlier body values and storing
// into a one-element local `v<j>` of its result's storage type. So a body op computes exactly
// what it computes alone. Elementwise groups (FusionGroupKernels.cpp) and norm groups
// (NormPoolNorms.cpp) differ only in where an element of a group input comes from.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_KERNELS_FUSIONBODYSOURCE_H
#define KILN_CODEGEN_KERNELS_FUSIONBODYSOURCE_H

#include "codegen/kernels/KernelSource.h"

#include <functional>
#include <string>

namespace kiln::codegen {

/// The C expression of group operand `index` at the element being computed, read as
/// `valueType` (the reading op's input type).
using GroupInputSource = std::function<std::string(uint32_t index, const std::string &valueType)>;

/// Statements declaring `<storage> v<j>[1]` and computing body op `j` of `group` into it. Body
/// values are read from their locals; group operands through `inputOf` unless the op bakes them
/// (single-element constants). An error names the op when it has no element function.
StatusOr<std::string> bodyOpStatements(const OpDesc &group, size_t j, const GroupInputSource &inputOf);

/// Checks what every group emitter relies on: each operand present, the yielded refs inside
/// the body.
Status checkGroupShape(const OpDesc &group);

} // namespace kiln::codegen

#endif // KILN_CODEGEN_KERNELS_FUSIONBODYSOURCE_H
