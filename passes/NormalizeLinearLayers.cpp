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
// - A convolution over non-overlapping patches (a ViT's patch embedding) is a matmul of the
//   patches, gathered by a reshape-transpose-reshape of the channels-last image, by the weight
//   read as [kh·kw·C, K]: cuDNN runs it far below the GEMM when C is 3.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "passes/ConstantValues.h"
#include "passes/ImagePatches.h"
#include "passes/LinearLayer.h"
#include "passes/QuantizableOps.h"

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
    llvm::SmallVector<ConvOp> convs;
    getOperation().walk([&](ConvOp op) { convs.push_back(op); });
    for (ConvOp conv : convs)
      if (mlir::failed(patchConvToMatmul(conv)))
        return signalPassFailure();
    llvm::SmallVector<MatMulOp> matmuls;
    getOperation().walk([&](MatMulOp op) { matmuls.push_back(op); });
    for (MatMulOp matmul : matmuls)
      sinkReshape(matmul);
  }

  mlir::LogicalResult gemmToMatmul(GemmOp gemm) {
    Value b = gemm.getB();
    RankedTensorType result = typeOf(gemm.getOutput());
    // B a constant, or an imported QDQ model's E4M3 weight (its dequantization kept for an FP8
    // GEMM): its transpose then stays an op after the dequantization, the form FP8 GEMMs run.
    auto fp8Weight = b.getDefiningOp<DequantizeOp>();
    bool importedFp8 = fp8Weight && isImportedFp8GemmWeight(fp8Weight);
    if (!isProductPlusBias(gemm) || (!b.getDefiningOp<ConstantOp>() && !importedFp8) ||
        typeOf(gemm.getA()).getElementType() != result.getElementType() ||
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
    if (transpose && !importedFp8)
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

  /// A channels-last convolution over non-overlapping patches larger than a pixel (kernel =
  /// stride, no padding or dilation, one group, the image a whole number of patches: a ViT's
  /// patch embedding) is a linear layer over the patches: x [N, H, W, C] viewed as
  /// [N, H/kh, kh, W/kw, kw, C], transposed to [N, H/kh, W/kw, kh, kw, C] and read as rows of
  /// kh·kw·C, times the weight [K, kh, kw, C] read as [kh·kw·C, K] (transposed now), plus the
  /// bias row: the conv's result [N, H/kh, W/kw, K] as it is. cuDNN runs such a convolution with 3 input channels
  /// far below the GEMM (ViT-B/16 at batch 64 on an H100: 0.52 ms of 6.3 in bf16), and as a
  /// matmul it is an fp8 plan's linear layer too.
  mlir::LogicalResult patchConvToMatmul(ConvOp conv) {
    RankedTensorType x = typeOf(conv.getInput()), w = typeOf(conv.getWeight()), y = typeOf(conv.getResult());
    auto weight = conv.getWeight().getDefiningOp<ConstantOp>();
    if (!conv.getChannelsLast() || x.getRank() != 4 || w.getRank() != 4 || conv.getGroup() != 1 || !weight ||
        !x.hasStaticShape() || !y.hasStaticShape())
      return mlir::success();
    int64_t h = x.getShape()[1], wd = x.getShape()[2], c = x.getShape()[3];
    int64_t k = w.getShape()[0], kh = w.getShape()[1], kw = w.getShape()[2];
    bool patches = conv.getStrides() == llvm::ArrayRef<int64_t>{kh, kw} &&
                   llvm::all_of(conv.getDilations(), [](int64_t d) { return d == 1; }) &&
                   llvm::all_of(conv.getPads(), [](int64_t p) { return p == 0; }) && kh > 0 && kw > 0 &&
                   kh * kw > 1 && // a 1x1 conv keeps the conv epilogues (hard swish, clip) a gemm lacks
                   h % kh == 0 && wd % kw == 0 && w.getShape()[3] == c;
    if (!patches)
      return mlir::success();
    int64_t rows = kh * kw * c;
    auto transposed = transposeConstant(llvm::cast<mlir::ElementsAttr>(weight.getValue()), {k, rows}, {1, 0},
                                        inlineElements, "patches");
    if (!transposed)
      return conv.emitError() << "internal: transposing the weight of a patch convolution: "
                              << llvm::toString(transposed.takeError());
    mlir::OpBuilder builder(conv);
    mlir::Location loc = conv.getLoc();
    mlir::Operation *layout = conv.getInput().getDefiningOp();
    Value flat = gatherPatches(builder, loc, conv.getInput(), kh, kw);
    auto matrix = ConstantOp::create(builder, weight.getLoc(), w.clone({rows, k}), *transposed);
    auto matmul = MatMulOp::create(builder, loc, y, flat, matrix);
    matmul->setDiscardableAttrs(conv->getDiscardableAttrDictionary()); // kiln.math, say
    Value product = matmul.getResult();
    if (conv.getBias())
      product = AddOp::create(builder, loc, y, product, conv.getBias()).getResult();
    clearOnnxValueNames(matmul);
    setOnnxValueName(product, onnxValueName(conv.getResult()));
    conv.getResult().replaceAllUsesWith(product);
    conv.erase();
    if (weight.use_empty())
      weight.erase();
    eraseIfUnusedTranspose(layout);
    flattenPatchesInPlace(product);
    return mlir::success();
  }

  /// ViT's x.reshape(n, hidden, patches).permute(0, 2, 1) after the layout pass's transpose back
  /// to channels-first: transpose [0, 3, 1, 2] → reshape [N, K, P] → transpose [0, 2, 1] of the
  /// channels-last [N, Hp, Wp, K] is that tensor read as [N, Hp·Wp, K]: one reshape (a view),
  /// where the chain moved the whole embedding twice.
  static void flattenPatchesInPlace(Value channelsLast) {
    auto single = [](Value v) -> Operation * { return v.hasOneUse() ? *v.getUsers().begin() : nullptr; };
    auto toFirst = llvm::dyn_cast_or_null<TransposeOp>(single(channelsLast));
    if (!toFirst || toFirst.getPerm() != llvm::ArrayRef<int64_t>{0, 3, 1, 2})
      return;
    auto flatten = llvm::dyn_cast_or_null<ReshapeOp>(single(toFirst.getResult()));
    llvm::ArrayRef<int64_t> shape = typeOf(channelsLast).getShape(); // N, Hp, Wp, K
    llvm::SmallVector<int64_t, 3> channelsFirstRows = {shape[0], shape[3], shape[1] * shape[2]};
    if (!flatten || typeOf(flatten.getResult()).getShape() != llvm::ArrayRef<int64_t>(channelsFirstRows))
      return;
    auto rows = llvm::dyn_cast_or_null<TransposeOp>(single(flatten.getResult()));
    if (!rows || rows.getPerm() != llvm::ArrayRef<int64_t>{0, 2, 1})
      return;
    mlir::OpBuilder builder(rows);
    auto view = ReshapeOp::create(builder, rows.getLoc(), typeOf(rows.getResult()), channelsLast);
    setOnnxValueName(view.getResult(), onnxValueName(rows.getResult()));
    rows.getResult().replaceAllUsesWith(view.getResult());
    rows.erase();
    flatten.erase();
    toFirst.erase();
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
