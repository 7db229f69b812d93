//===- ConvertLayout.cpp - channels-last convolutions, transposes cancelled -===//
//
// Tensor-core convolutions run NHWC (cuDNN's fast engines and fused epilogues take channels
// last), while ONNX models are NCHW. The layout is explicit in the IR: a layout-sensitive op
// with `channels_last` takes the channel axis last, and every change of layout is a
// kiln.transpose, so the module means exactly what it meant before (a layout change is a
// permutation; the interpreter gives the same bits).
//
// 1. Anchors. Each 2-d kiln.conv (rank-4 input) that `layout` selects (nhwc: all; auto: those
//    whose input is bf16 or f16, the tensor-core convs, and an imported QDQ model's convs that
//    keep 8-bit weights for INT8 or FP8 kernels) becomes
//      transpose(x, [0,2,3,1]) -> conv {channels_last} -> transpose(y, [0,3,1,2])
//    with its weight permuted to KRSC: a constant (or the 8-bit constant under a weight's
//    dequantization) at compile time, whatever its size and type, bytes moved without
//    rounding; any other weight through a transpose.
// 2. Propagation, with the greedy driver, so the transposes meet and cancel:
//    - the channels-first transpose [0,3,1,2] sinks through elementwise ops (ElementwiseMap,
//      and per-tensor quantize/dequantize: a QDQ model's convs meet) when every other operand
//      is the same transpose, a constant (permuted at compile time, lower-rank broadcasts such
//      as a bias [C,1,1] included), a value whose size-1 axes alone move (a reshape), a
//      broadcast over the batch alone (layout-free), or a value another op already transposes
//      channels last (the graph input read by the first conv and a
//      residual add: the same transpose, merged by CSE);
//    - max/avg pools (2-d) and global pools whose input is that transpose take channels_last
//      too: they follow the layout, never introduce one;
//    - transpose(transpose(x)) is one transpose, and an identity transpose is its input.
//    What is left are the transposes at the boundaries: at the input, before the first conv,
//    and where a channels-last value meets an op that is not layout-aware (a flatten before the
//    classifier: there the permutation of [N,1,1,C] moves only unit axes, which canonicalize
//    turns into a reshape).
//
// conv_transpose, 1-d and 3-d convs stay channels first: the runtime's NHWC convolutions are
// 2-d convs only, and a transpose around an op that runs channels first anyway would only add
// copies.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "passes/ConstantValues.h"
#include "passes/QuantizableOps.h"

#include "ir/KilnOps.h"
#include "ir/ShapeRules.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/DenseMap.h"

namespace kiln {

#define GEN_PASS_DEF_CONVERTLAYOUT
#include "passes/Passes.h.inc"

namespace {

using mlir::Operation;
using mlir::RankedTensorType;
using mlir::Value;

/// The spatial rank whose convs and pools take channels last.
constexpr int64_t kRank = 4;
/// Permuted constants with more elements become resource blobs (what the importer inlines).
constexpr int64_t kInlineElements = 16;
constexpr llvm::StringLiteral kChannelsLast = "channels_last";

RankedTensorType typeOf(Value v) { return llvm::cast<RankedTensorType>(v.getType()); }

Shape permuted(llvm::ArrayRef<int64_t> dims, llvm::ArrayRef<int64_t> perm) {
  Shape out;
  for (int64_t axis : perm)
    out.push_back(dims[axis]);
  return out;
}

/// Whether permuting `dims` by `perm` keeps the axes of size > 1 in order (moves no bytes).
bool movesOnlyUnitAxes(llvm::ArrayRef<int64_t> dims, llvm::ArrayRef<int64_t> perm) {
  int64_t previous = -1;
  for (int64_t axis : perm) {
    if (dims[axis] == 1)
      continue;
    if (axis < previous)
      return false;
    previous = axis;
  }
  return true;
}

bool isChannelsLast(Operation *op) {
  auto attr = op->getAttrOfType<mlir::BoolAttr>(kChannelsLast);
  return attr && attr.getValue();
}

/// The payload of `constant` reshaped to `shape` (its own, or with leading unit axes) and
/// permuted by `perm`; nullopt when it cannot be read (an elided blob).
std::optional<mlir::ElementsAttr> permutedPayload(ConstantOp constant, llvm::ArrayRef<int64_t> shape,
                                                  llvm::ArrayRef<int64_t> perm) {
  auto attr = transposeConstant(llvm::cast<mlir::ElementsAttr>(constant.getValue()), shape, perm,
                                kInlineElements, "_channels_last");
  if (!attr) {
    llvm::consumeError(attr.takeError());
    return std::nullopt;
  }
  return *attr;
}

/// `op` rebuilt on `operands` with result type `result` and channels_last set.
Operation *channelsLastTwin(mlir::OpBuilder &builder, Operation *op, mlir::ValueRange operands,
                            mlir::Type result) {
  mlir::OperationState state(op->getLoc(), op->getName(), operands, {result}, op->getAttrs());
  Operation *twin = builder.create(state);
  twin->setAttr(kChannelsLast, builder.getBoolAttr(true));
  return twin;
}

/// x -> transpose(x, perm), located at `loc`.
Value transpose(mlir::OpBuilder &builder, mlir::Location loc, Value x, llvm::ArrayRef<int64_t> perm) {
  RankedTensorType type = typeOf(x);
  return TransposeOp::create(builder, loc, type.clone(permuted(type.getShape(), perm)), x,
                             builder.getDenseI64ArrayAttr(perm))
      .getResult();
}

/// The input of `v`'s defining op when that is the channels-first transpose of a rank-4 value.
Value channelsLastSource(Value v) {
  auto t = v.getDefiningOp<TransposeOp>();
  if (!t || typeOf(t.getInput()).getRank() != kRank || t.getPerm() != llvm::ArrayRef(channelsFirstPermutation(kRank)))
    return {};
  return t.getInput();
}

//===----------------------------------------------------------------------===//
// Propagation patterns
//===----------------------------------------------------------------------===//

/// op(transpose(a, P), transpose(b, P), c...) -> transpose(op(a, b, c'...), P) for an
/// elementwise op and P the channels-first permutation, c' the other operands in channels-last
/// order.
struct SinkTransposeThroughElementwise : mlir::RewritePattern {
  SinkTransposeThroughElementwise(mlir::MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}

  mlir::LogicalResult matchAndRewrite(Operation *op, mlir::PatternRewriter &rewriter) const override {
    if (!isGroupElementwise(op) || op->getNumResults() != 1)
      return mlir::failure();
    RankedTensorType result = typeOf(op->getResult(0));
    if (result.getRank() != kRank || !llvm::any_of(op->getOperands(), [](Value v) { return channelsLastSource(v); }))
      return rewriter.notifyMatchFailure(op, "no channels-first transpose operand");
    llvm::SmallVector<int64_t, 6> toLast = channelsLastPermutation(kRank);
    // How each operand reaches channels-last order, decided before anything is built.
    struct Plan {
      Value value;                               // used as it is, unless:
      std::optional<mlir::ElementsAttr> payload; // a permuted constant
      std::optional<RankedTensorType> reshape;   // a view of the value
      bool transpose;                            // transposed, as for another user
    };
    llvm::SmallVector<Plan> plans;
    for (Value operand : op->getOperands()) {
      if (Value source = channelsLastSource(operand)) {
        plans.push_back({source, std::nullopt, std::nullopt, false});
        continue;
      }
      RankedTensorType type = typeOf(operand);
      if (type.getRank() > kRank)
        return rewriter.notifyMatchFailure(op, "an operand of higher rank");
      // Broadcasting aligns shapes to the right: the operand as a rank-4 shape.
      Shape full(kRank - type.getRank(), 1);
      llvm::append_range(full, type.getShape());
      // Broadcast over channels and space (a scalar, a per-sample value): the same elements
      // meet each result element in either order.
      if (llvm::all_of(llvm::ArrayRef<int64_t>(full).drop_front(), [](int64_t d) { return d == 1; })) {
        plans.push_back({operand, std::nullopt, std::nullopt, false});
        continue;
      }
      if (auto constant = operand.getDefiningOp<ConstantOp>()) {
        std::optional<mlir::ElementsAttr> payload = permutedPayload(constant, full, toLast);
        if (!payload)
          return rewriter.notifyMatchFailure(op, "a constant whose payload cannot be read");
        plans.push_back({operand, payload, std::nullopt, false});
        continue;
      }
      // Already transposed channels last for another user (the graph input a residual add
      // and the first conv both read): the same transpose, which CSE merges.
      bool transposedElsewhere = type.getRank() == kRank && llvm::any_of(operand.getUsers(), [&](Operation *user) {
        auto t = llvm::dyn_cast<TransposeOp>(user);
        return t && t.getPerm() == llvm::ArrayRef<int64_t>(toLast);
      });
      if (transposedElsewhere) {
        plans.push_back({operand, std::nullopt, std::nullopt, true});
        continue;
      }
      // [N, C, 1, 1] -> [N, 1, 1, C] moves no bytes: a view.
      if (!movesOnlyUnitAxes(full, toLast))
        return rewriter.notifyMatchFailure(op, "an operand that would need a transpose of its own");
      plans.push_back({operand, std::nullopt, type.clone(permuted(full, toLast)), false});
    }
    llvm::SmallVector<Value> operands;
    for (Plan &plan : plans) {
      if (plan.payload) {
        auto constant = plan.value.getDefiningOp<ConstantOp>();
        rewriter.setInsertionPointAfter(constant);
        operands.push_back(ConstantOp::create(rewriter, constant.getLoc(), plan.payload->getType(), *plan.payload));
      } else if (plan.reshape) {
        rewriter.setInsertionPoint(op);
        operands.push_back(ReshapeOp::create(rewriter, op->getLoc(), *plan.reshape, plan.value));
      } else if (plan.transpose) {
        rewriter.setInsertionPoint(op);
        operands.push_back(transpose(rewriter, op->getLoc(), plan.value, toLast));
      } else {
        operands.push_back(plan.value);
      }
    }
    rewriter.setInsertionPoint(op);
    mlir::OperationState state(op->getLoc(), op->getName(), operands,
                               {result.clone(permuted(result.getShape(), toLast))}, op->getAttrs());
    Operation *sunk = rewriter.create(state);
    rewriter.replaceOp(op, transpose(rewriter, op->getLoc(), sunk->getResult(0), channelsFirstPermutation(kRank)));
    return mlir::success();
  }
};

/// pool(transpose(x, [0,3,1,2])) -> transpose(pool {channels_last}(x), [0,3,1,2]).
template <typename PoolOp>
struct PoolFollowsLayout : mlir::OpRewritePattern<PoolOp> {
  using mlir::OpRewritePattern<PoolOp>::OpRewritePattern;

  mlir::LogicalResult matchAndRewrite(PoolOp op, mlir::PatternRewriter &rewriter) const override {
    Value source = channelsLastSource(op.getInput());
    if (!source || isChannelsLast(op))
      return rewriter.notifyMatchFailure(op, "input is not a channels-first transpose");
    RankedTensorType result = typeOf(op.getOutput());
    Operation *twin =
        channelsLastTwin(rewriter, op, {source}, result.clone(toChannelsLast(result.getShape())));
    rewriter.replaceOp(op, transpose(rewriter, op.getLoc(), twin->getResult(0), channelsFirstPermutation(kRank)));
    return mlir::success();
  }
};

/// transpose(transpose(x, P1), P2) -> transpose(x, P1∘P2), and an identity transpose -> x.
struct ComposeTransposes : mlir::OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  mlir::LogicalResult matchAndRewrite(TransposeOp op, mlir::PatternRewriter &rewriter) const override {
    llvm::SmallVector<int64_t, 6> perm(op.getPerm());
    Value input = op.getInput();
    auto inner = input.getDefiningOp<TransposeOp>();
    if (inner) {
      // Output axis i is inner's output axis perm[i], which is inner's input axis
      // inner.perm[perm[i]].
      for (int64_t &axis : perm)
        axis = inner.getPerm()[axis];
      input = inner.getInput();
    }
    bool identity = llvm::all_of(llvm::enumerate(perm), [](auto p) { return (int64_t)p.index() == p.value(); });
    if (identity) {
      rewriter.replaceOp(op, input);
      return mlir::success();
    }
    if (!inner)
      return rewriter.notifyMatchFailure(op, "neither an identity nor a transpose of a transpose");
    rewriter.replaceOpWithNewOp<TransposeOp>(op, op.getOutput().getType(), input, rewriter.getDenseI64ArrayAttr(perm));
    return mlir::success();
  }
};

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

struct ConvertLayoutPass : impl::ConvertLayoutBase<ConvertLayoutPass> {
  using ConvertLayoutBase::ConvertLayoutBase;

  void runOnOperation() override {
    if (layout != "auto" && layout != "nchw" && layout != "nhwc") {
      mlir::emitError(getOperation().getLoc())
          << "kiln-convert-layout: layout '" << layout << "' is not one of auto, nchw, nhwc";
      return signalPassFailure();
    }
    if (layout == "nchw")
      return;
    llvm::SmallVector<ConvOp> anchors;
    getOperation().walk([&](ConvOp conv) {
      if (isAnchor(conv))
        anchors.push_back(conv);
    });
    // Without an anchor nothing follows: the module stays as it was.
    if (anchors.empty())
      return;
    llvm::DenseMap<Value, Value> krsc; // a weight read by several convs is permuted once
    for (ConvOp conv : anchors)
      convertConv(conv, krsc);

    mlir::MLIRContext *context = &getContext();
    mlir::RewritePatternSet patterns(context);
    patterns.add<SinkTransposeThroughElementwise, ComposeTransposes, PoolFollowsLayout<MaxPoolOp>,
                 PoolFollowsLayout<AvgPoolOp>, PoolFollowsLayout<GlobalAvgPoolOp>,
                 PoolFollowsLayout<GlobalMaxPoolOp>>(context);
    // Top down, so a transpose sinks through a whole chain in one sweep. Every rewrite keeps
    // the module's meaning, so a driver that stops before its fixpoint leaves a correct module
    // with some transposes uncancelled: nothing to report as an error. No constant CSE here:
    // merging a permuted weight with an equal dead one would drop its location (the weight's
    // name in the plan); the CSE pass after this one keeps it.
    mlir::GreedyRewriteConfig config;
    config.setUseTopDownTraversal(true)
        .setRegionSimplificationLevel(mlir::GreedySimplifyRegionLevel::Disabled)
        .enableConstantCSE(false);
    (void)mlir::applyPatternsGreedily(getOperation(), std::move(patterns), config);
  }

  bool isAnchor(ConvOp conv) {
    if (conv.getChannelsLast() || typeOf(conv.getInput()).getRank() != kRank)
      return false;
    if (layout == "nhwc")
      return true;
    mlir::Type element = typeOf(conv.getInput()).getElementType();
    // An imported QDQ model's 8-bit conv too: cuDNN's INT8 and FP8 kernels are NHWC.
    return element.isBF16() || element.isF16() || isImportedQuantizedOp(conv);
  }

  /// The channels-last (KRSC) form of a conv weight computed at compile time: a constant
  /// permuted, or the dequantization of one (an imported 8-bit weight: its values permuted,
  /// the scales along the output channels, axis 0, as before). Null when it is neither.
  static Value permutedConstantWeight(Value weight, llvm::ArrayRef<int64_t> toLast) {
    auto dequantize = weight.getDefiningOp<DequantizeOp>();
    if (dequantize && !(isPerTensorQuantization(dequantize) || dequantize.getAxis() == 0))
      return {};
    Value stored = dequantize ? dequantize.getInput() : weight;
    auto constant = stored.getDefiningOp<ConstantOp>();
    std::optional<mlir::ElementsAttr> payload =
        constant ? permutedPayload(constant, typeOf(stored).getShape(), toLast) : std::nullopt;
    if (!payload)
      return {};
    mlir::OpBuilder after(constant->getContext());
    after.setInsertionPointAfter(constant);
    Value permutedStored = ConstantOp::create(after, constant.getLoc(), payload->getType(), *payload);
    if (!dequantize)
      return permutedStored;
    after.setInsertionPoint(dequantize);
    return DequantizeOp::create(after, dequantize.getLoc(), typeOf(weight).clone(toChannelsLast(typeOf(weight).getShape())),
                                permutedStored, dequantize.getScale(), dequantize.getZeroPoint(),
                                dequantize.getAxisAttr());
  }

  void convertConv(ConvOp conv, llvm::DenseMap<Value, Value> &krsc) {
    mlir::OpBuilder builder(conv);
    mlir::Location loc = conv.getLoc();
    llvm::SmallVector<int64_t, 6> toLast = channelsLastPermutation(kRank);
    Value weight = conv.getWeight();
    Value &permutedWeight = krsc[weight];
    if (!permutedWeight) {
      permutedWeight = permutedConstantWeight(weight, toLast);
      if (!permutedWeight)
        permutedWeight = transpose(builder, loc, weight, toLast);
    }
    llvm::SmallVector<Value, 3> operands = {transpose(builder, loc, conv.getInput(), toLast), permutedWeight};
    if (conv.getBias())
      operands.push_back(conv.getBias());
    RankedTensorType result = typeOf(conv.getOutput());
    Operation *twin = channelsLastTwin(builder, conv, operands, result.clone(toChannelsLast(result.getShape())));
    conv.getOutput().replaceAllUsesWith(
        transpose(builder, loc, twin->getResult(0), channelsFirstPermutation(kRank)));
    // The old weight, dead now, goes with the greedy driver's dead-op cleanup.
    conv.erase();
  }
};

} // namespace
} // namespace kiln
