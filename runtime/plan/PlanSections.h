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

/// What each section holds, in order: v(name, member) for a record (the metadata) or a vector
/// of records whose elements `name` labels ("step 3"). `Plan` may be const or not.
template <class P, class V> void visitSection(format::SectionKind kind, P &plan, V &&v) {
  switch (kind) {
  case format::SectionKind::Metadata: v("metadata", plan.metadata); break;
  case format::SectionKind::Tensors:
    v("input", plan.inputs);
    v("output", plan.outputs);
    break;
  case format::SectionKind::Buffers: v("buffer", plan.buffers); break;
  case format::SectionKind::Steps: v("step", plan.steps); break;
  case format::SectionKind::Images: v("image", plan.images); break;
  case format::SectionKind::Weights: break; // the blob itself, unframed
  }
}

/// The bytes of section `kind` of `plan` (any kind but Weights, which is the blob itself).
std::vector<uint8_t> encodeSection(format::SectionKind kind, const Plan &plan);

/// Decodes section `kind` into the matching fields of `plan`. The whole section must be
/// consumed. Only the encoding is checked here (lengths, tags, booleans); what the values mean
/// is validatePlan's job. Errors say which element and byte the decoding stopped at.
Status decodeSection(format::SectionKind kind, std::span<const uint8_t> bytes, Plan &plan);

} // namespace kiln::plan::detail

#endif // KILN_RUNTIME_PLAN_PLANSECTIONS_H
