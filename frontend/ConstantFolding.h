//===- ConstantFolding.h - import-time folding of shape subgraphs -*- C++ -*-===//
//
// Exporters compute shapes at run time (Shape -> Gather -> Concat -> Reshape, Cast, arithmetic).
// With every input shape static those subgraphs are constants; the importer evaluates them on
// host values so that the ops which consume them get static parameters. Only small tensors
// (ImportOptions::foldElementLimit) of integer, bool, f32 or f64 type are folded; everything
// else becomes kiln ops (and is folded later, if at all, by canonicalization).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_FRONTEND_CONSTANTFOLDING_H
#define KILN_FRONTEND_CONSTANTFOLDING_H

#include "llvm/Support/Error.h"

namespace kiln::frontend {

class NodeContext;

/// Folds the node when it can: defines its outputs as constants and returns true. Returns false
/// (nothing defined) when the node is not foldable; an error when its constant inputs are
/// invalid for the op.
llvm::Expected<bool> foldNode(NodeContext &ctx);

} // namespace kiln::frontend

#endif // KILN_FRONTEND_CONSTANTFOLDING_H
