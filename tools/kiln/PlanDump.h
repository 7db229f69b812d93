//===- PlanDump.h - a plan's intermediate values, step by step -*- C++ -*-===//
//
// `kiln run --dump` and `kiln compare` with plans: every ONNX value a plan completes, read on
// the GPU after the step that completes it, with that step's runner, algorithm and time.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TOOLS_KILN_PLANDUMP_H
#define KILN_TOOLS_KILN_PLANDUMP_H

#include "RuntimeSession.h"

#include "llvm/Support/Error.h"

#include <string>

namespace kiln::cli {

/// Times every step alone (median of 5 passes, as `kiln profile`), then runs the steps one by
/// one and writes each value they complete into `dir` (ValueDump.h) with the plan's metadata;
/// returns how many values were written. The session's inputs are set.
llvm::Expected<size_t> dumpPlanValues(Session &session, const std::string &planPath, const std::string &dir);

} // namespace kiln::cli

#endif // KILN_TOOLS_KILN_PLANDUMP_H
