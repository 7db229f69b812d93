//===- ImagePatches.cpp - a channels-last image as rows of its patches -----===//

#include "passes/ImagePatches.h"

#include "ir/KilnOps.h"

namespace kiln {

mlir::Value gatherPatches(mlir::OpBuilder &builder, mlir::Location loc, mlir::Value image, int64_t kh, int64_t kw) {
  auto x = llvm::cast<mlir::RankedTensorType>(image.getType());
  int64_t n = x.getShape()[0], h = x.getShape()[1], w = x.getShape()[2], c = x.getShape()[3];
  auto layout = image.getDefiningOp<TransposeOp>();
  bool fromChannelsFirst = layout && image.hasOneUse() && layout.getPerm() == llvm::ArrayRef<int64_t>{0, 2, 3, 1};
  mlir::Value split = fromChannelsFirst
                          ? ReshapeOp::create(builder, loc, x.clone({n, c, h / kh, kh, w / kw, kw}), layout.getInput())
                          : ReshapeOp::create(builder, loc, x.clone({n, h / kh, kh, w / kw, kw, c}), image);
  llvm::SmallVector<int64_t, 6> perm = fromChannelsFirst ? llvm::SmallVector<int64_t, 6>{0, 2, 4, 3, 5, 1}
                                                         : llvm::SmallVector<int64_t, 6>{0, 1, 3, 2, 4, 5};
  auto gathered = TransposeOp::create(builder, loc, x.clone({n, h / kh, w / kw, kh, kw, c}), split,
                                      builder.getDenseI64ArrayAttr(perm));
  return ReshapeOp::create(builder, loc, x.clone({n, h / kh, w / kw, kh * kw * c}), gathered);
}

void eraseIfUnusedTranspose(mlir::Operation *op) {
  if (op && llvm::isa<TransposeOp>(op) && op->use_empty())
    op->erase();
}

} // namespace kiln
