//===- FoldQuantization.cpp - 8-bit weights and FP8 linear layers for codegen ===//
//
// kiln-fold-quantization (Passes.td says what): weights quantized at compile time, and FP8
// linear layers rewritten into the one form codegen runs as a cuBLASLt FP8 GEMM.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "ir/KilnOps.h"
#include "ir/Provenance.h"
#include "passes/ConstantValues.h"
#include "passes/QuantizableOps.h"

#include "mlir/IR/Builders.h"

#include <functional>
#include <optional>
#include <string>

namespace kiln {

#define GEN_PASS_DEF_FOLDQUANTIZATION
#include "passes/Passes.h.inc"

namespace {

constexpr int64_t kInlineElements = 16;

mlir::RankedTensorType tensorType(mlir::Value value) { return llvm::cast<mlir::RankedTensorType>(value.getType()); }

/// "bf16": the element type of `value`, as a remark names it.
std::string elementName(mlir::Value value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << tensorType(value).getElementType();
  return text;
}

/// Why `matmul` of dequantized `input` and `weight` is no FP8 GEMM Hopper runs; nullopt when
/// it is one: E4M3 on both sides, one scale each, zero points 0, a constant 2-d [K, N] weight,
/// K and N multiples of 16 (cuBLASLt's FP8 kernels want 16-byte rows of A and B, TN).
std::optional<std::string> whyNoFp8Gemm(MatMulOp matmul, DequantizeOp input, DequantizeOp weight) {
  auto quantizedType = [](DequantizeOp dq) { return tensorType(dq.getInput()).getElementType(); };
  if (!llvm::isa<mlir::Float8E4M3FNType>(quantizedType(input)) ||
      !llvm::isa<mlir::Float8E4M3FNType>(quantizedType(weight)))
    return std::string("8-bit integer GEMMs are not implemented yet (FP8 E4M3 only)");
  if (!isPerTensorQuantization(input) || !isPerTensorQuantization(weight))
    return std::string("its scales are per channel; Hopper's FP8 GEMMs take one scale per operand "
                       "(kiln-insert-quantization per-tensor-weight-ops)");
  if (!isZeroConstant(input.getZeroPoint()) || !isZeroConstant(weight.getZeroPoint()))
    return std::string("a zero point is not 0");
  if (!isConstantWeight(weight))
    return std::string("its weight is computed at run time, not a constant");
  auto weightShape = tensorType(weight.getInput()).getShape();
  if (weightShape.size() != 2 || tensorType(matmul.getLhs()).getRank() < 2)
    return std::string("its weight is not 2-d or its input not a matrix (or a batch of rows)");
  if (weightShape[0] % 16 != 0 || weightShape[1] % 16 != 0)
    return "K = " + std::to_string(weightShape[0]) + " or N = " + std::to_string(weightShape[1]) +
           " is not a multiple of 16, as cuBLASLt's FP8 GEMMs need";
  return std::nullopt;
}

struct FoldQuantizationPass : impl::FoldQuantizationBase<FoldQuantizationPass> {
  using FoldQuantizationBase::FoldQuantizationBase;

  void runOnOperation() override {
    mlir::func::FuncOp func = getOperation();
    llvm::SmallVector<MatMulOp> matmuls(func.getBody().front().getOps<MatMulOp>());
    llvm::SmallVector<ConvOp> convs(func.getBody().front().getOps<ConvOp>());
    if (dropUnfoldable) {
      for (MatMulOp matmul : matmuls)
        dropIfUnfoldable(matmul, [&](DequantizeOp x, DequantizeOp w) { return whyNoFp8Gemm(matmul, x, w); });
      for (ConvOp conv : convs)
        dropIfUnfoldable(conv, [&](DequantizeOp x, DequantizeOp w) { return whyNoQuantizedConv(conv, x, w); });
    }
    // Weights: quantize(constant) is a constant, computed once by the interpreter.
    llvm::SmallVector<QuantizeOp> weights;
    func.walk([&](QuantizeOp q) {
      if (llvm::all_of(q->getOperands(), [](mlir::Value v) { return v.getDefiningOp<ConstantOp>(); }))
        weights.push_back(q);
    });
    for (QuantizeOp q : weights) {
      mlir::Operation *weight = q.getInput().getDefiningOp();
      if (llvm::Error error = replaceWithConstants(q, kInlineElements, "quantized")) {
        q->emitError() << "quantizing a weight at compile time failed: " << llvm::toString(std::move(error));
        return signalPassFailure();
      }
      if (weight->use_empty())
        weight->erase();
    }
    for (MatMulOp matmul : matmuls)
      prepareFp8Gemm(matmul);
    reluBeforeQuantization(func);
    dequantizeAfterMoves(func);
    for (ConvOp conv : convs)
      prepareQuantizedConv(conv);
    sinkQuantizations(func);
    requantizationsOfOneScale(func);
  }

  /// quantize(dequantize(q)) -> q where both share one scale and zero point (per tensor) and the
  /// dequantization is f32: the f32 value divided by the same scale rounds back to q. An
  /// imported QDQ model's Q/DQ pairs around a max pool or a flatten, once kiln-fold-quantization
  /// has moved them next to each other, cost no kernel.
  void requantizationsOfOneScale(mlir::func::FuncOp func) {
    llvm::SmallVector<QuantizeOp> quantizations;
    func.walk([&](QuantizeOp q) { quantizations.push_back(q); });
    for (QuantizeOp q : quantizations) {
      auto dq = q.getInput().getDefiningOp<DequantizeOp>();
      if (!dq || !tensorType(dq.getResult()).getElementType().isF32() || !isPerTensorQuantization(q) ||
          q.getResult().getType() != dq.getInput().getType() || !sameQuantization(q, dq))
        continue;
      q.getResult().replaceAllUsesWith(dq.getInput());
      q->erase();
      if (dq->use_empty())
        dq->erase();
    }
  }

  /// quantize(move(x)) -> move(quantize(x)) for a per-tensor quantization with zero point 0,
  /// where the move is a reshape, a transpose, a zero padding or a max pool read by the
  /// quantize alone: the same values (each quantized alone; 0 quantizes to 0; quantization
  /// keeps order, so the max of the quantized values is the quantized max; a NaN, which
  /// quantizes to 0, no longer wins its window), but the moves carry 8-bit values and the
  /// quantize can join what computes x, and the paddings and gathers before an INT8
  /// convolution move int8 (a quarter of the f32 bytes). Int8 and E4M3 alike: the generated
  /// max pools of E4M3 tensors (comparing in f32 from -inf) agreed with the interpreter on the
  /// H100. Not through the max pool of a float convolution's result (poolsFloatConv).
  void sinkQuantizations(mlir::func::FuncOp func) {
    llvm::SmallVector<QuantizeOp> work;
    func.walk([&](QuantizeOp q) { work.push_back(q); });
    while (!work.empty()) {
      QuantizeOp q = work.pop_back_val();
      mlir::Operation *move = q.getInput().getDefiningOp();
      bool pad = isZeroPadding(move);
      auto element = tensorType(q.getResult()).getElementType();
      if (!(pad || llvm::isa_and_nonnull<MaxPoolOp, ReshapeOp, TransposeOp>(move)) || !q.getInput().hasOneUse() ||
          !isSymmetricPerTensorQuantization(q) || poolsFloatConv(move))
        continue;
      mlir::OpBuilder builder(q);
      mlir::Value source = move->getOperand(0);
      auto early = QuantizeOp::create(builder, q.getLoc(), tensorType(source).clone(element), source, q.getScale(),
                                      q.getZeroPoint(), q.getAxisAttr(), q.getSaturateAttr());
      mlir::Value zero;
      if (pad) {
        auto zeroType = mlir::RankedTensorType::get({}, element);
        zero = ConstantOp::create(builder, q.getLoc(), zeroType, zeros(zeroType));
      }
      mlir::Operation *moved = builder.clone(*move);
      moved->setOperand(0, early.getResult());
      moved->getResult(0).setType(q.getResult().getType());
      moved->removeAttr(kOnnxValuesAttr); // it moves the quantized values, not the ONNX value's
      if (pad)
        moved->setOperand(2, zero);
      q.getResult().replaceAllUsesWith(moved->getResult(0));
      q->erase();
      move->erase();
      work.push_back(early); // it may move further up
    }
  }

  /// Whether `op` is a max pool of the result (through its ReLU or clip) of a convolution no
  /// 8-bit kernel runs (matchQuantizedConv; prepareQuantizedConv has run): the quantize stays
  /// after the pool, where the pool's kernel computes it (a `pool` fusion group). Moved above
  /// it, the quantize joins the conv's graph, and cuDNN's bf16 convolutions that write int8 run
  /// on slower engines: ResNet-50's stem at batch 256 on an H100 took 1.357 ms writing int8
  /// against 0.981 ms writing bf16.
  static bool poolsFloatConv(mlir::Operation *op) {
    if (!llvm::isa<MaxPoolOp>(op))
      return false;
    mlir::Value value = op->getOperand(0);
    while (llvm::isa_and_nonnull<ReluOp, ClipOp>(value.getDefiningOp()))
      value = value.getDefiningOp()->getOperand(0);
    auto conv = value.getDefiningOp<ConvOp>();
    return conv && !matchQuantizedConv(conv);
  }

  /// With drop-unfoldable: a matmul or conv no 8-bit kernel runs (`whyNot` says why) reads its
  /// operands unquantized again (the pairs that fed it die when nothing else reads them).
  void dropIfUnfoldable(mlir::Operation *op,
                        const std::function<std::optional<std::string>(DequantizeOp, DequantizeOp)> &whyNot) {
    auto input = op->getOperand(0).getDefiningOp<DequantizeOp>();
    auto weight = op->getOperand(1).getDefiningOp<DequantizeOp>();
    if (!input || !weight)
      return;
    std::optional<std::string> why = whyNot(input, weight);
    if (!why)
      return;
    for (DequantizeOp dq : {input, weight}) {
      auto quantize = dq.getInput().getDefiningOp<QuantizeOp>();
      if (!quantize)
        return; // an imported model's 8-bit tensor: nothing unquantized to go back to
    }
    for (auto [index, dq] : llvm::enumerate(llvm::SmallVector<DequantizeOp>{input, weight})) {
      auto quantize = dq.getInput().getDefiningOp<QuantizeOp>();
      op->setOperand(index, quantize.getInput());
      if (dq->use_empty())
        dq->erase();
      if (quantize->use_empty())
        quantize->erase();
    }
    op->emitRemark() << "not quantized, stays " << elementName(op->getResult(0)) << ": " << *why;
  }

  /// quantize(relu(dequantize(quantize(v)))) -> quantize(relu(v)) where the three share one
  /// scale and zero point (per tensor) and the dequantization is f32: onnxruntime's QDQ form of
  /// conv -> relu with symmetric activations, where the ReLU's range is the conv's (its positive
  /// maximum dominates). Exact: both are max(quantize(v), zero point) (the f32 dequantized
  /// value divided by the same scale rounds back to its integer). The relu then joins the conv's
  /// epilogue and the quantization its int8 result, where a requantization kernel ran.
  void reluBeforeQuantization(mlir::func::FuncOp func) {
    llvm::SmallVector<QuantizeOp> last;
    func.walk([&](QuantizeOp q) { last.push_back(q); });
    for (QuantizeOp outer : last) {
      auto relu = outer.getInput().getDefiningOp<ReluOp>();
      auto dequantize = relu ? relu.getInput().getDefiningOp<DequantizeOp>() : DequantizeOp();
      auto inner = dequantize ? dequantize.getInput().getDefiningOp<QuantizeOp>() : QuantizeOp();
      if (!inner || !relu->hasOneUse() || !dequantize->hasOneUse() || !inner->hasOneUse() ||
          !tensorType(dequantize.getResult()).getElementType().isF32() || !isPerTensorQuantization(outer) ||
          !sameQuantization(outer, dequantize) || !sameQuantization(inner, dequantize) ||
          outer.getResult().getType() != inner.getResult().getType() || outer.getSaturate() != inner.getSaturate())
        continue;
      mlir::OpBuilder builder(outer);
      mlir::Value v = inner.getInput();
      auto early = ReluOp::create(builder, relu.getLoc(), v.getType(), v);
      // Not the ONNX value the relu computed (that one was quantized first): no name.
      early->setAttrs(relu->getAttrs());
      early->removeAttr(kOnnxValuesAttr);
      auto quantized = QuantizeOp::create(builder, outer.getLoc(), outer.getResult().getType(), early.getResult(),
                                          outer.getScale(), outer.getZeroPoint(), outer.getAxisAttr(),
                                          outer.getSaturateAttr());
      quantized->setAttrs(outer->getAttrs());
      outer.getResult().replaceAllUsesWith(quantized.getResult());
      outer->erase();
      relu->erase();
      dequantize->erase();
      inner->erase();
    }
  }

  /// Whether quantize or dequantize ops `a` and `b` take equal scales and zero points:
  /// the same values, or constants of equal type and value (two ONNX initializers may hold one
  /// scale).
  static bool sameQuantization(mlir::Operation *a, mlir::Operation *b) {
    auto sameConstant = [](mlir::Value x, mlir::Value y) {
      if (x == y)
        return true;
      auto cx = x.getDefiningOp<ConstantOp>(), cy = y.getDefiningOp<ConstantOp>();
      return cx && cy && x.getType() == y.getType() && cx.getValue() == cy.getValue();
    };
    // Both ops take (value, scale, zero point).
    return sameConstant(a->getOperand(1), b->getOperand(1)) && sameConstant(a->getOperand(2), b->getOperand(2));
  }

  /// move(dequantize(x8)) -> dequantize(move(x8)) for a per-tensor dequantization of an int8 or
  /// E4M3 activation and a reshape or transpose: the same values (each element dequantized
  /// alone), but the move carries the 8-bit values (a quarter of f32's bytes) and its readers
  /// read a dequantization, as an 8-bit convolution or GEMM needs its input to be. An imported QDQ model's quantized convs read their
  /// inputs this way where the layout pass transposed a dequantized value to channels last (the
  /// graph input, a value a channels-first op computed). Equal moves of one value become one.
  void dequantizeAfterMoves(mlir::func::FuncOp func) {
    llvm::SmallVector<DequantizeOp> dequantizations;
    func.walk([&](DequantizeOp dq) {
      // Activations only: an FP8 GEMM's weight keeps its transpose after its dequantization
      // (prepareFp8Gemm's form), and weights are moved at compile time anyway.
      if (isPerTensorQuantization(dq) && isConvQuantizedElement(tensorType(dq.getInput()).getElementType()) &&
          !dq.getInput().getDefiningOp<ConstantOp>())
        dequantizations.push_back(dq);
    });
    for (DequantizeOp dequantize : dequantizations) {
      llvm::SmallVector<mlir::Operation *> moves;
      for (mlir::Operation *user : dequantize->getUsers())
        if (llvm::isa<ReshapeOp, TransposeOp>(user) && !llvm::is_contained(moves, user))
          moves.push_back(user);
      // In block order, so a dequantization made before the first of equal moves serves the rest.
      llvm::sort(moves, [](mlir::Operation *a, mlir::Operation *b) { return a->isBeforeInBlock(b); });
      llvm::SmallVector<std::pair<mlir::Operation *, mlir::Value>> done; // a move and its dequantization
      for (mlir::Operation *move : moves) {
        mlir::Value after;
        for (auto [other, value] : done)
          if (other->getName() == move->getName() && other->getResultTypes() == move->getResultTypes() &&
              other->getDiscardableAttrDictionary() == move->getDiscardableAttrDictionary() &&
              other->getPropertiesAsAttribute() == move->getPropertiesAsAttribute())
            after = value;
        if (!after) {
          mlir::OpBuilder builder(move);
          mlir::Operation *moved = builder.clone(*move);
          moved->setOperand(0, dequantize.getInput());
          moved->getResult(0).setType(
              tensorType(move->getResult(0)).clone(tensorType(dequantize.getInput()).getElementType()));
          moved->removeAttr(kOnnxValuesAttr); // it moves the 8-bit values, not the ONNX value's
          after = DequantizeOp::create(builder, dequantize.getLoc(), tensorType(move->getResult(0)),
                                       moved->getResult(0), dequantize.getScale(), dequantize.getZeroPoint(),
                                       dequantize.getAxisAttr())
                      .getResult();
          done.push_back({move, after});
        }
        move->getResult(0).replaceAllUsesWith(after);
      }
      for (mlir::Operation *move : moves)
        move->erase();
      if (dequantize->use_empty())
        dequantize->erase();
    }
  }

  /// An 8-bit convolution gets a dequantization of its input of its own, so its `conv` group
  /// can take it in (the group's input is then the int8 tensor); one that does not fit keeps its
  /// Q/DQ ops, with a remark.
  void prepareQuantizedConv(ConvOp conv) {
    auto input = conv.getInput().getDefiningOp<DequantizeOp>();
    auto weight = conv.getWeight().getDefiningOp<DequantizeOp>();
    if (!input || !weight)
      return; // not quantized
    if (std::optional<std::string> why = whyNoQuantizedConv(conv, input, weight)) {
      conv->emitRemark() << "8-bit convolution runs as its Q/DQ ops and a " << elementName(conv.getResult())
                         << " convolution (fake quantization): " << *why;
      // Its 8-bit constant weight is read as the float values it stands for: folded, so no
      // kernel dequantizes it at every run.
      auto stored = weight.getInput().getDefiningOp<ConstantOp>();
      if (!stored || !weight->hasOneUse())
        return;
      if (llvm::Error error = replaceWithConstants(weight, kInlineElements, "dequantized"))
        conv->emitRemark() << "its weight's dequantization stays a kernel: " << llvm::toString(std::move(error));
      else if (stored->use_empty())
        stored->erase();
      return;
    }
    mlir::OpBuilder builder(conv);
    if (!input->hasOneUse())
      conv->setOperand(0, builder.clone(*input)->getResult(0));
    if (!weight->hasOneUse())
      conv->setOperand(1, builder.clone(*weight)->getResult(0));
  }

  /// Rewrites an FP8 linear layer into matchQuantizedLinearLayer's form, or remarks why it
  /// stays fake-quantized.
  void prepareFp8Gemm(MatMulOp matmul) {
    auto input = matmul.getLhs().getDefiningOp<DequantizeOp>();
    // An imported QDQ Gemm's E4M3 weight, [N, K] read through a transpose (kiln-normalize-
    // linear-layers' form): already the FP8 GEMM's; its input gets a dequantization of its own.
    if (auto t = matmul.getRhs().getDefiningOp<TransposeOp>()) {
      auto stored = t.getInput().getDefiningOp<DequantizeOp>();
      if (input && stored && isImportedFp8GemmWeight(stored) && !input->hasOneUse()) {
        mlir::OpBuilder builder(matmul);
        matmul->setOperand(0, builder.clone(*input)->getResult(0));
      }
      return;
    }
    auto weight = matmul.getRhs().getDefiningOp<DequantizeOp>();
    if (!input || !weight)
      return; // not quantized
    if (std::optional<std::string> why = whyNoFp8Gemm(matmul, input, weight)) {
      matmul->emitRemark() << "8-bit linear layer runs as its Q/DQ ops and a "
                           << elementName(matmul.getResult()) << " GEMM (fake quantization): " << *why;
      return;
    }
    mlir::OpBuilder builder(matmul);
    mlir::Location loc = weight.getLoc();
    auto constant = weight.getInput().getDefiningOp<ConstantOp>();
    mlir::RankedTensorType stored = tensorType(constant.getResult());
    auto transposed = transposeConstant(llvm::cast<mlir::ElementsAttr>(constant.getValue()), stored.getShape(), {1, 0},
                                        kInlineElements, "_nk");
    if (!transposed) {
      matmul->emitRemark() << "8-bit linear layer runs as its Q/DQ ops (fake quantization): its weight cannot be "
                              "read to transpose it: "
                           << llvm::toString(transposed.takeError());
      return;
    }
    int64_t k = stored.getShape()[0], n = stored.getShape()[1];
    auto nk = ConstantOp::create(builder, loc, stored.clone({n, k}), *transposed);
    auto dequantized = DequantizeOp::create(builder, loc, tensorType(weight.getResult()).clone({n, k}), nk,
                                            weight.getScale(), weight.getZeroPoint(), weight.getAxisAttr());
    auto back = TransposeOp::create(builder, loc, tensorType(weight.getResult()), dequantized,
                                    builder.getDenseI64ArrayAttr({1, 0}));
    matmul->setOperand(1, back.getResult());
    if (weight->use_empty())
      weight->erase();
    if (constant->use_empty())
      constant->erase();
    // The gemm group takes its input's dequantization in: one of its own.
    if (!input->hasOneUse()) {
      mlir::Operation *own = builder.clone(*input);
      matmul->setOperand(0, own->getResult(0));
    }
  }
};

} // namespace

} // namespace kiln
