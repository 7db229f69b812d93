//===- FoldConstants.cpp - fold constant ops through the interpreter -------===//

#include "passes/Passes.h"

#include "passes/ConstantValues.h"

#include "ir/KilnOps.h"

namespace kiln {

#define GEN_PASS_DEF_FOLDCONSTANTS
#include "passes/Passes.h.inc"

namespace {

struct FoldConstantsPass : impl::FoldConstantsBase<FoldConstantsPass> {
  using FoldConstantsBase::FoldConstantsBase;

  void runOnOperation() override {
    mlir::func::FuncOp func = getOperation();
    llvm::SmallVector<mlir::Operation *> candidates;
    func.walk([&](mlir::Operation *op) {
      if (op->getDialect() && op->getDialect()->getNamespace() == "kiln" &&
          !llvm::isa<ConstantOp>(op) && op->getNumOperands() > 0)
        candidates.push_back(op);
    });
    // Ops come in order, so a chain of foldable ops folds in one pass.
    for (mlir::Operation *op : candidates) {
      bool allConstant = llvm::all_of(op->getOperands(), [](mlir::Value v) {
        return llvm::isa_and_nonnull<ConstantOp>(v.getDefiningOp());
      });
      if (!allConstant)
        continue;
      int64_t resultElements = 0;
      for (mlir::Type t : op->getResultTypes())
        resultElements += llvm::cast<mlir::RankedTensorType>(t).getNumElements();
      if (resultElements > maxElements) {
        op->emitRemark() << "not folded: the result has " << resultElements
                         << " elements, more than max-elements=" << (int64_t)maxElements;
        continue;
      }
      // Evaluation errors (an out-of-range index, say) belong to the op at run time, not to
      // compilation: keep the op and say why it stayed.
      if (llvm::Error error = replaceWithConstants(op, inlineElements, "folded"))
        op->emitRemark() << "not folded: " << llvm::toString(std::move(error));
    }
    // Constants nothing uses any more (the folded ops' operands) go too.
    func.walk([](ConstantOp c) {
      if (c->use_empty())
        c->erase();
    });
  }
};

} // namespace
} // namespace kiln
