//===- NormalizeLinearLayers.cpp - linear layers in the form fusion groups -===//
//
// kiln-form-fusion-groups takes a linear layer as `kiln.matmul` of an activation and a 2-d
// weight followed by its epilogue (bias, residual, activation) on the matmul's own shape. Two
// common exports hide that form:
//
// - ONNX Gemm with a constant B (torch's nn.Linear on 2-d input, MultiheadAttention's out_proj):
//   `kiln.gemm a, B, c {trans_b}` becomes `kiln.matmul a, Bᵀ` (Bᵀ computed now, by the
//   interpreter) plus `kiln.add c`, when alpha = 1, trans_a = false and beta = 1 (or no C).
// - A reshape of the product that keeps rows of N (MultiheadAttention's [S·B, E] → [S, B, E],
//   and the transposes of unit axes that canonicalize to reshapes at batch 1) is moved onto the
//   activation: reshape(a) · W computes the same rows, now in the shape the residual add has.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "passes/ConstantValues.h"
#include "passes/LinearLayer.h"

#include "ir/Provenance.h"

#include "ir/KilnOps.h"

#include "mlir/IR/Builders.h"

namespace kiln {

#define GEN_PASS_DEF_NORMALIZELINEARLAYERS
#include "passes/Passes.h.inc"

namespace {

using mlir::Operation;
using mlir::RankedTensorType;
using mlir::Value;

RankedTensorType typeOf(Value v) { return llvm::cast<RankedTensorType>(v.getType()); }

struct NormalizeLinearLayersPass : impl::NormalizeLinearLayersBase<NormalizeLinearLayersPass> {
  using NormalizeLinearLayersBase::NormalizeLinearLayersBase;

  void runOnOperation() override {
    llvm::SmallVector<GemmOp> gemms;
    getOperation().walk([&](GemmOp op) { gemms.push_back(op); });
    for (GemmOp gemm : gemms)
      if (mlir::failed(gemmToMatmul(gemm)))
        return signalPassFailure();
    llvm::SmallVector<MatMulOp> matmuls;
    getOperation().walk([&](MatMulOp op) { matmuls.push_back(op); });
    for (MatMulOp matmul : matmuls)
      sinkReshape(matmul);
  }

  mlir::LogicalResult gemmToMatmul(GemmOp gemm) {
    Value b = gemm.getB();
    RankedTensorType result = typeOf(gemm.getOutput());
    if (gemm.getTransA() || gemm.getAlpha().convertToFloat() != 1.0f || !b.getDefiningOp<ConstantOp>() ||
        (gemm.getC() && gemm.getBeta().convertToFloat() != 1.0f) || typeOf(gemm.getA()).getElementType() !=
                                                                        result.getElementType() ||
        typeOf(b).getElementType() != result.getElementType() ||
        (gemm.getC() && typeOf(gemm.getC()).getElementType() != result.getElementType()))
      return mlir::success();
    mlir::OpBuilder builder(gemm);
    mlir::Location loc = gemm.getLoc();
    TransposeOp transpose;
    Value weight = b;
    if (gemm.getTransB()) {
      llvm::ArrayRef<int64_t> shape = typeOf(b).getShape();
      transpose = TransposeOp::create(builder, loc, typeOf(b).clone({shape[1], shape[0]}), b,
                                      builder.getDenseI64ArrayAttr({1, 0}));
      weight = transpose.getResult();
    }
    // The rows land in the shape a reshape chain after the Gemm gives them, if any.
    int64_t n = result.getShape().back();
    Value end = reshapeChainEnd(gemm.getOutput(), n);
    RankedTensorType target = typeOf(end);
    Value c = gemm.getC();
    if (c && end != gemm.getOutput()) {
      int64_t elements = typeOf(c).getNumElements();
      if (elements == result.getNumElements())
        c = ReshapeOp::create(builder, loc, target, c).getResult();
      else if (!isBiasRow(typeOf(c), n))
        end = gemm.getOutput(), target = result; // C broadcasts some other way: keep the shape
    }
    Value lhs = gemm.getA();
    if (end != gemm.getOutput())
      lhs = ReshapeOp::create(builder, loc, withLastDim(target, typeOf(lhs).getShape().back()), lhs).getResult();
    auto matmul = MatMulOp::create(builder, loc, target, lhs, weight);
    matmul->setDiscardableAttrs(gemm->getDiscardableAttrDictionary()); // kiln.math, say
    Value product = matmul.getResult();
    // Bᵀ now, by the interpreter: the matmul's operand becomes a constant.
    if (transpose)
      if (llvm::Error error = replaceWithConstants(transpose, inlineElements, "weight"))
        return gemm.emitError() << "internal: transposing the weight of a Gemm: " << llvm::toString(std::move(error));
    if (c)
      product = AddOp::create(builder, loc, target, product, c).getResult();
    // What computes the Gemm's output (or the reshape's after it) now: the add, or the matmul.
    clearOnnxValueNames(matmul);
    setOnnxValueName(product, onnxValueName(end));
    end.replaceAllUsesWith(product);
    eraseChain(gemm.getOutput(), end);
    if (b.use_empty())
      b.getDefiningOp()->erase();
    return mlir::success();
  }

  /// The end of the single-use reshapes from `v`, when it keeps rows of `n` (rank >= 2, last
  /// dim n); else `v`.
  static Value reshapeChainEnd(Value v, int64_t n) {
    Value end = v;
    while (end.hasOneUse() && llvm::isa<ReshapeOp>(*end.getUsers().begin()))
      end = (*end.getUsers().begin())->getResult(0);
    RankedTensorType type = typeOf(end);
    return type.getRank() >= 2 && type.getShape().back() == n ? end : v;
  }

  static RankedTensorType withLastDim(RankedTensorType type, int64_t last) {
    llvm::SmallVector<int64_t> shape(type.getShape());
    shape.back() = last;
    return type.clone(shape);
  }

  /// Erases the op defining `from` and the single-use chain from it to `end`, which nothing
  /// uses any more; the last op first.
  static void eraseChain(Value from, Value end) {
    llvm::SmallVector<Operation *> chain;
    for (Value v = from;; v = (*v.getUsers().begin())->getResult(0)) {
      chain.push_back(v.getDefiningOp());
      if (v == end)
        break;
    }
    for (Operation *op : llvm::reverse(chain))
      op->erase();
  }

  /// matmul(a, W) → reshape → ... → reshape to [..., N], each used once: reshape a to [..., K]
  /// with the final leading dims and multiply that.
  void sinkReshape(MatMulOp matmul) {
    RankedTensorType weight = typeOf(matmul.getRhs());
    if (weight.getRank() != 2 || !typeOf(matmul.getLhs()).hasStaticShape())
      return;
    Value end = reshapeChainEnd(matmul.getResult(), weight.getShape()[1]);
    if (end == matmul.getResult())
      return;
    mlir::OpBuilder builder(end.getDefiningOp());
    RankedTensorType lhsType = withLastDim(typeOf(end), weight.getShape()[0]);
    Value lhs = ReshapeOp::create(builder, matmul.getLoc(), lhsType, matmul.getLhs()).getResult();
    auto product = MatMulOp::create(builder, matmul.getLoc(), typeOf(end), lhs, matmul.getRhs());
    product->setDiscardableAttrs(matmul->getDiscardableAttrDictionary());
    clearOnnxValueNames(product); // it computes the reshaped value, not the matmul's
    setOnnxValueName(product.getResult(), onnxValueName(end));
    end.replaceAllUsesWith(product.getResult());
    eraseChain(matmul.getResult(), end);
  }
};

} // namespace
} // namespace kiln
