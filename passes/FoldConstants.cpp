//===- FoldConstants.cpp - fold constant ops through the interpreter -------===//

#include "passes/Passes.h"

#include "passes/ConstantValues.h"
#include "passes/QuantizableOps.h"

#include "ir/Interpreter/Tensor.h"
#include "ir/KilnOps.h"
#include "ir/Provenance.h"

namespace kiln {

#define GEN_PASS_DEF_FOLDCONSTANTS
#include "passes/Passes.h.inc"

namespace {

/// The convs of dequantized inputs that read `weight`, an 8-bit weight folding into float
/// values (isImportedQuantizedConvWeight refused it): each says why it is no 8-bit convolution.
void remarkFakeQuantizedConvs(DequantizeOp weight) {
  for (mlir::OpOperand &use : weight->getUses()) {
    auto conv = llvm::dyn_cast<ConvOp>(use.getOwner());
    auto input = conv ? conv.getInput().getDefiningOp<DequantizeOp>() : DequantizeOp();
    if (!input || use.getOperandNumber() != 1)
      continue;
    if (std::optional<std::string> why = whyNoQuantizedConvOnceChannelsLast(conv, input, weight))
      conv->emitRemark() << "8-bit convolution runs as its Q/DQ ops around a float convolution (fake "
                            "quantization; its weight folds into float values): "
                         << *why;
  }
}

/// A gather of a constant at constant indices that are all one index (BERT's token types when
/// the model has no token_type_ids input) is one slice broadcast: the slice folds (the gather
/// at one index per axis of `indices`) and a kiln.expand spans the result, which the
/// elementwise ops after it read unexpanded (ExpandOp's canonicalization). The full result
/// would be too large to fold, and a gather step would write it out at run time. Returns
/// whether it rewrote `gather`.
bool foldUniformGather(GatherOp gather, int64_t inlineElements) {
  auto indices = gather.getIndices().getDefiningOp<ConstantOp>();
  if (!indices || !gather.getInput().getDefiningOp<ConstantOp>() || !isUniformConstant(indices.getValue()))
    return false;
  llvm::Expected<interp::Tensor> indexValues = interp::fromAttr(indices.getValue());
  if (!indexValues) {
    llvm::consumeError(indexValues.takeError());
    return false;
  }
  if (indexValues->size() <= 1)
    return false;
  interp::Tensor oneIndex{indexValues->element, Shape(indexValues->shape.size(), 1), {}, {indexValues->i.front()}};
  mlir::OpBuilder builder(gather);
  auto index = ConstantOp::create(builder, gather.getLoc(), oneIndex.type(),
                                  interp::toElementsAttr(oneIndex, inlineElements, "index"));
  auto slice = GatherOp::create(builder, gather.getLoc(), gather.getInput(), index, gather.getAxis());
  auto expand = ExpandOp::create(builder, gather.getLoc(), gather.getResult().getType(), slice.getResult());
  if (llvm::Error error = replaceWithConstants(slice, inlineElements, "folded")) {
    llvm::consumeError(std::move(error));
    expand->erase();
    slice->erase();
    index->erase();
    return false;
  }
  setOnnxValueName(expand.getResult(), onnxValueName(gather.getResult()));
  gather.getResult().replaceAllUsesWith(expand.getResult());
  gather->erase();
  return true;
}

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
      // An imported QDQ model's 8-bit conv weight or E4M3 linear-layer weight stays 8-bit with
      // its scales: the op runs as an 8-bit kernel (kiln-fold-quantization folds the
      // dequantization of a conv's that does not).
      if (auto dequantize = llvm::dyn_cast<DequantizeOp>(op)) {
        if (isImportedQuantizedConvWeight(dequantize) || isImportedFp8GemmWeight(dequantize))
          continue;
        remarkFakeQuantizedConvs(dequantize);
      }
      int64_t resultElements = 0;
      for (mlir::Type t : op->getResultTypes())
        resultElements += llvm::cast<mlir::RankedTensorType>(t).getNumElements();
      // A result no larger than an operand (a weight's dequantization or cast) adds no
      // elements: it folds whatever its size.
      int64_t largestOperand = 0;
      for (mlir::Value v : op->getOperands())
        largestOperand = std::max(largestOperand, llvm::cast<mlir::RankedTensorType>(v.getType()).getNumElements());
      if (resultElements > maxElements && resultElements > largestOperand) {
        if (auto gather = llvm::dyn_cast<GatherOp>(op); gather && foldUniformGather(gather, inlineElements))
          continue;
        op->emitRemark() << "not folded: the result has " << resultElements
                         << " elements, more than max-elements=" << (int64_t)maxElements
                         << " and than any operand";
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
