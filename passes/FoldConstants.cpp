//===- FoldConstants.cpp - fold constant ops through the interpreter -------===//

#include "passes/Passes.h"

#include "ir/Interpreter/Interpreter.h"
#include "ir/KilnOps.h"

#include "mlir/IR/Matchers.h"

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
      llvm::SmallVector<interp::Tensor> values;
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
      llvm::SmallVector<const interp::Tensor *> operands;
      values.reserve(op->getNumOperands());
      for (mlir::Value v : op->getOperands()) {
        auto value = interp::fromAttr(llvm::cast<ConstantOp>(v.getDefiningOp()).getValue());
        if (!value) {
          op->emitRemark() << "not folded: " << llvm::toString(value.takeError());
          break;
        }
        values.push_back(std::move(*value));
      }
      if (values.size() != op->getNumOperands())
        continue;
      for (const interp::Tensor &t : values)
        operands.push_back(&t);
      auto results = interp::evaluateOp(op, operands);
      if (!results) {
        // Evaluation errors (an out-of-range index, say) belong to the op at run time, not to
        // compilation: keep the op and say why it stayed.
        op->emitRemark() << "not folded: " << llvm::toString(results.takeError());
        continue;
      }
      mlir::OpBuilder builder(op);
      for (auto [result, tensor] : llvm::zip(op->getResults(), *results)) {
        mlir::ElementsAttr attr = interp::toElementsAttr(tensor, inlineElements, "folded");
        auto constant = ConstantOp::create(builder, op->getLoc(), result.getType(), attr);
        result.replaceAllUsesWith(constant.getResult());
      }
      op->erase();
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
