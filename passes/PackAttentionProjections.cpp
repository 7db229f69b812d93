//===- PackAttentionProjections.cpp - one GEMM for Q, K and V ---------------===//
//
// BERT-style exports compute Q, K and V as three linear layers of the same hidden state. After
// kiln-fuse-attention, each is read only by its kiln.attention, through a strided view. This
// pass concatenates the three weights (and bias rows) along N at compile time, so one matmul
// computes [Q | K | V] side by side, and rewrites the attention's views to read their columns
// of the packed result: the layout nn.MultiheadAttention's in_proj already has. One GEMM of
// N = Nq + Nk + Nv fills the GPU better than three of N each, and is one plan step instead of
// three.
//
// A view [offset, s_b, s_h, s_s, s_d] over a row-major [..., N] tensor maps to the packed
// [..., T] tensor when each stride either moves whole rows (a multiple of N, scaled to T) or
// stays inside a row (and the in-row strides together with the offset's column stay below N);
// the column offset of the role (0, Nq or Nq + Nk) is added to the offset. Each N is a multiple
// of 8, so the views stay on the 16 bytes the runtime's attention step needs.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "passes/ConstantValues.h"
#include "passes/LinearLayer.h"

#include "ir/KilnOps.h"
#include "ir/Provenance.h"

#include "mlir/IR/Builders.h"

#include <array>
#include <optional>

namespace kiln {

#define GEN_PASS_DEF_PACKATTENTIONPROJECTIONS
#include "passes/Passes.h.inc"

namespace {

using mlir::Operation;
using mlir::RankedTensorType;
using mlir::Value;

/// Views keep the runtime's 16-byte alignment when every packed part is a multiple of this.
constexpr int64_t kColumnMultiple = 8;

RankedTensorType typeOf(Value v) { return llvm::cast<RankedTensorType>(v.getType()); }

/// `value` as a linear layer whose weight (and bias row) are constants, so they concatenate
/// now.
std::optional<LinearLayer> projectionOf(Value value) {
  std::optional<LinearLayer> layer = matchLinearLayer(value);
  if (!layer || !layer->matmul.getRhs().getDefiningOp<ConstantOp>() ||
      !typeOf(layer->matmul.getResult()).hasStaticShape() ||
      (layer->bias && !layer->bias.getDefiningOp<ConstantOp>()))
    return std::nullopt;
  return layer;
}

/// `view` over a row-major [..., columns] tensor as a view of the packed [..., total] tensor
/// whose columns [start, start + columns) hold it; nullopt when a stride mixes rows and columns.
std::optional<llvm::SmallVector<int64_t>> packedView(llvm::ArrayRef<int64_t> view, std::array<int64_t, 4> dims,
                                                     int64_t columns, int64_t start, int64_t total) {
  llvm::SmallVector<int64_t> packed(view.begin(), view.end());
  int64_t columnReach = view[0] % columns;
  for (int i = 0; i < 4; ++i) {
    int64_t stride = view[i + 1];
    if (stride % columns == 0)
      packed[i + 1] = stride / columns * total;
    else
      columnReach += stride * (dims[i] - 1);
  }
  if (columnReach >= columns)
    return std::nullopt;
  packed[0] = view[0] / columns * total + start + view[0] % columns;
  return packed;
}

struct PackAttentionProjectionsPass : impl::PackAttentionProjectionsBase<PackAttentionProjectionsPass> {
  using PackAttentionProjectionsBase::PackAttentionProjectionsBase;

  void runOnOperation() override {
    llvm::SmallVector<AttentionOp> attentions;
    getOperation().walk([&](AttentionOp op) { attentions.push_back(op); });
    int packed = 0;
    for (AttentionOp attention : attentions) {
      mlir::FailureOr<bool> done = pack(attention);
      if (mlir::failed(done))
        return signalPassFailure();
      packed += *done;
    }
    if (packed)
      getOperation().emitRemark() << "packed the Q, K and V projections of " << packed
                                  << " attention layers into one GEMM each";
  }

  /// Packs the attention's projections when they qualify (true); failure only on an internal
  /// error.
  mlir::FailureOr<bool> pack(AttentionOp attention) {
    std::array<Value, 3> operands{attention.getQ(), attention.getK(), attention.getV()};
    if (operands[0] == operands[1] || operands[0] == operands[2] || operands[1] == operands[2])
      return false;
    std::array<LinearLayer, 3> parts;
    for (int i = 0; i < 3; ++i) {
      std::optional<LinearLayer> p = projectionOf(operands[i]);
      if (!p || !operands[i].hasOneUse() || p->columns % kColumnMultiple != 0)
        return false;
      parts[i] = *p;
    }
    Value x = parts[0].matmul.getLhs();
    RankedTensorType result = typeOf(operands[0]);
    for (LinearLayer &p : parts)
      if (p.matmul.getLhs() != x || typeOf(p.matmul.getRhs()).getElementType() != result.getElementType() ||
          typeOf(p.matmul.getResult()).getElementType() != result.getElementType() ||
          static_cast<bool>(p.bias) != static_cast<bool>(parts[0].bias) ||
          (p.bias && typeOf(p.bias).getRank() != typeOf(parts[0].bias).getRank()))
        return false;

    int64_t total = parts[0].columns + parts[1].columns + parts[2].columns;
    std::array<int64_t, 3> starts{0, parts[0].columns, parts[0].columns + parts[1].columns};
    std::array<llvm::SmallVector<int64_t>, 3> views;
    std::array<llvm::ArrayRef<int64_t>, 3> oldViews{attention.getQView(), attention.getKView(), attention.getVView()};
    static constexpr std::array<llvm::StringLiteral, 3> roles{"q", "k", "v"};
    for (int i = 0; i < 3; ++i) {
      auto view = packedView(oldViews[i], attention.viewDims(roles[i]), parts[i].columns, starts[i], total);
      if (!view)
        return false;
      views[i] = *view;
    }

    mlir::OpBuilder builder(attention);
    llvm::SmallVector<mlir::Location> locations;
    for (LinearLayer &p : parts)
      locations.push_back(p.matmul->getLoc());
    mlir::Location loc = mlir::FusedLoc::get(attention.getContext(), locations);
    llvm::SmallVector<int64_t> packedShape(result.getShape());
    packedShape.back() = total;
    auto packedType = result.clone(packedShape);

    // The packed weight and bias: kiln.concat of the constants, evaluated now.
    auto concat = [&](std::array<Value, 3> values) {
      int64_t axis = typeOf(values[0]).getRank() - 1;
      return ConcatOp::create(builder, loc, mlir::ValueRange(values), axis);
    };
    ConcatOp weight = concat({parts[0].matmul.getRhs(), parts[1].matmul.getRhs(), parts[2].matmul.getRhs()});
    Value packedValue = MatMulOp::create(builder, loc, packedType, x, weight.getResult()).getResult();
    if (llvm::Error error = replaceWithConstants(weight, inlineElements, "packed"))
      return attention.emitError() << "internal: packing the Q, K and V weights: " << llvm::toString(std::move(error));
    if (parts[0].biasAdd) {
      ConcatOp bias = concat({parts[0].bias, parts[1].bias, parts[2].bias});
      llvm::SmallVector<mlir::Location> biasLocations;
      for (LinearLayer &p : parts)
        biasLocations.push_back(p.biasAdd->getLoc());
      packedValue = AddOp::create(builder, mlir::FusedLoc::get(attention.getContext(), biasLocations), packedType,
                                  packedValue, bias.getResult())
                        .getResult();
      if (llvm::Error error = replaceWithConstants(bias, inlineElements, "packed"))
        return attention.emitError() << "internal: packing the Q, K and V biases: " << llvm::toString(std::move(error));
    }

    attention.getQMutable().assign(packedValue);
    attention.getKMutable().assign(packedValue);
    attention.getVMutable().assign(packedValue);
    attention.setQView(views[0]);
    attention.setKView(views[1]);
    attention.setVView(views[2]);
    for (LinearLayer &p : parts) {
      llvm::SmallVector<Operation *, 2> dead;
      if (p.biasAdd)
        dead.push_back(p.biasAdd);
      dead.push_back(p.matmul);
      for (Operation *op : dead) {
        llvm::SmallVector<Value> inputs(op->getOperands());
        op->erase();
        for (Value input : inputs)
          if (auto constant = input.getDefiningOp<ConstantOp>(); constant && constant->use_empty())
            constant->erase();
      }
    }
    return true;
  }
};

} // namespace
} // namespace kiln
