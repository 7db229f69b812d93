//===- AttentionChecks.h - what an attention step's fields mean together -*- C++ -*-===//
//
// validatePlan's semantic checks of an AttentionStep (PlanValidate.cpp runs the generic field
// checks first, so every buffer index here is in range). They live apart from the other steps'
// checks because a strided view has more to check than a dense operand: its extent inside its
// buffer, cuDNN's layout limits, and that the output does not overlap itself or an input.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_PLAN_ATTENTIONCHECKS_H
#define KILN_RUNTIME_PLAN_ATTENTIONCHECKS_H

#include "runtime/plan/Plan.h"

#include <optional>
#include <string>

namespace kiln::plan::detail {

/// The first problem of `step` as "where: message", or nullopt when it is consistent.
std::optional<std::string> checkAttentionStep(const Plan &plan, const std::string &where, const AttentionStep &step);

} // namespace kiln::plan::detail

#endif // KILN_RUNTIME_PLAN_ATTENTIONCHECKS_H
