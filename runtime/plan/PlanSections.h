//===- PlanSections.h - encoding of the plan file's sections ---*- C++ -*-===//
//
// The bodies of the metadata, tensors, buffers, steps and images sections (FORMAT.md lists their
// fields). The container around them (header, section table, checksums, weights) is PlanIO.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_PLAN_PLANSECTIONS_H
#define KILN_RUNTIME_PLAN_PLANSECTIONS_H

#include "runtime/plan/Plan.h"
#include "runtime/plan/PlanFormat.h"

#include <span>
#include <vector>

namespace kiln::plan::detail {

/// The bytes of section `kind` of `plan` (any kind but Weights, which is the blob itself).
std::vector<uint8_t> encodeSection(format::SectionKind kind, const Plan &plan);

/// Decodes section `kind` into the matching fields of `plan`. The whole section must be
/// consumed. Only the encoding is checked here (lengths, tags, booleans); what the values mean
/// is validatePlan's job. Errors say which element and byte the decoding stopped at.
Status decodeSection(format::SectionKind kind, std::span<const uint8_t> bytes, Plan &plan);

} // namespace kiln::plan::detail

#endif // KILN_RUNTIME_PLAN_PLANSECTIONS_H
