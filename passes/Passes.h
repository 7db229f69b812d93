//===- Passes.h - kiln passes ----------------------------------*- C++ -*-===//
#ifndef KILN_PASSES_PASSES_H
#define KILN_PASSES_PASSES_H

#include "ir/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace kiln {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

/// Registers every kiln pass with the global registry (for kiln-opt).
#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace kiln

#endif // KILN_PASSES_PASSES_H
