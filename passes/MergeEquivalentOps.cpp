//===- MergeEquivalentOps.cpp - CSE that looks past ONNX value names -------===//
//
// kiln-merge-equivalent-ops (Passes.td says what and why).
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "ir/Provenance.h"

#include "mlir/IR/OperationSupport.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"

namespace kiln {

#define GEN_PASS_DEF_MERGEEQUIVALENTOPS
#include "passes/Passes.h.inc"

namespace {

constexpr auto kFlags = mlir::OperationEquivalence::Flags(mlir::OperationEquivalence::IgnoreLocations |
                                                          mlir::OperationEquivalence::IgnoreDiscardableAttrs);

/// The discardable attributes of `op` other than its ONNX value names: those must still match.
mlir::DictionaryAttr otherDiscardableAttrs(mlir::Operation *op) {
  llvm::SmallVector<mlir::NamedAttribute> kept;
  for (mlir::NamedAttribute attr : op->getDiscardableAttrs())
    if (attr.getName() != kOnnxValuesAttr)
      kept.push_back(attr);
  return mlir::DictionaryAttr::get(op->getContext(), kept);
}

struct OpKey : llvm::DenseMapInfo<mlir::Operation *> {
  static unsigned getHashValue(const mlir::Operation *op) {
    return mlir::OperationEquivalence::computeHash(const_cast<mlir::Operation *>(op),
                                                   mlir::OperationEquivalence::directHashValue,
                                                   mlir::OperationEquivalence::ignoreHashValue, kFlags);
  }
  static bool isEqual(const mlir::Operation *lhs, const mlir::Operation *rhs) {
    if (lhs == rhs)
      return true;
    if (lhs == getEmptyKey() || lhs == getTombstoneKey() || rhs == getEmptyKey() || rhs == getTombstoneKey())
      return false;
    auto *a = const_cast<mlir::Operation *>(lhs), *b = const_cast<mlir::Operation *>(rhs);
    return mlir::OperationEquivalence::isEquivalentTo(a, b, mlir::OperationEquivalence::exactValueMatch,
                                                      /*markEquivalent=*/nullptr, kFlags) &&
           otherDiscardableAttrs(a) == otherDiscardableAttrs(b);
  }
};

struct MergeEquivalentOpsPass : impl::MergeEquivalentOpsBase<MergeEquivalentOpsPass> {
  void runOnOperation() override {
    // Block by block, in order: an op's operands are merged before the op is looked up, so a
    // whole repeated chain merges in one sweep. Ops in nested regions (fusion group bodies) are
    // left to CSE.
    for (mlir::Block &block : getOperation().getBody()) {
      llvm::DenseMap<mlir::Operation *, mlir::Operation *, OpKey> seen;
      for (mlir::Operation &op : llvm::make_early_inc_range(block)) {
        if (op.getNumRegions() != 0 || op.getNumResults() == 0 || op.hasTrait<mlir::OpTrait::IsTerminator>() ||
            !mlir::isMemoryEffectFree(&op))
          continue;
        auto [it, inserted] = seen.try_emplace(&op, &op);
        if (inserted)
          continue;
        op.replaceAllUsesWith(it->second);
        op.erase();
      }
    }
  }
};

} // namespace

} // namespace kiln
