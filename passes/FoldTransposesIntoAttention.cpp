//===- FoldTransposesIntoAttention.cpp - row permutations into attention views ===//
//
// torch's nn.MultiheadAttention runs in [S, B, E] while the model around it is [B, S, E], so
// at batch > 1 its export transposes the hidden state before the in_proj and the out_proj's
// result after it: two copies of the whole activation per layer, and the second stops the
// residual add from joining the out_proj's epilogue. A transpose that keeps the last axis only
// permutes rows, and a linear layer (matmul by a 2-d weight, plus a bias row) computes each row
// on its own, so the transpose commutes with it:
//
//   in:  attention(view of (T(x) · W + b))  ==  attention(view' of (x · W + b))
//   out: T(reshape(attention(...)) · W + b) ==  attention'(...) · W + b
//
// where view' reads the unpermuted product and attention' writes its result already permuted
// (o_view'). The new views are fitted from the old ones through the permutation, exactly when
// the view's offset and strides add up on each permuted axis without a carry (checked on every
// element otherwise), and kept only when they satisfy the runtime's attention step (head dim
// contiguous, everything else on 16 bytes); otherwise the transposes stay.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "passes/LinearLayer.h"

#include "ir/KilnOps.h"

#include "mlir/IR/Builders.h"

#include <array>
#include <optional>

namespace kiln {

#define GEN_PASS_DEF_FOLDTRANSPOSESINTOATTENTION
#include "passes/Passes.h.inc"

namespace {

using mlir::Operation;
using mlir::RankedTensorType;
using mlir::Value;

/// Views of more elements than this are not re-fitted (the check visits every element).
constexpr int64_t kMaxViewElements = int64_t(1) << 26;
constexpr int64_t kVectorBytes = 16;

RankedTensorType typeOf(Value v) { return llvm::cast<RankedTensorType>(v.getType()); }

llvm::SmallVector<int64_t> rowMajorStrides(llvm::ArrayRef<int64_t> shape) {
  llvm::SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

/// Where element `linear` of `permuted` = transpose(base, perm) lies in `base`.
struct Permutation {
  llvm::SmallVector<int64_t> permutedShape, permutedStrides, baseStrides;
  llvm::SmallVector<int64_t> perm;

  Permutation(llvm::ArrayRef<int64_t> baseShape, llvm::ArrayRef<int64_t> perm) : perm(perm) {
    for (int64_t axis : perm)
      permutedShape.push_back(baseShape[axis]);
    permutedStrides = rowMajorStrides(permutedShape);
    baseStrides = rowMajorStrides(baseShape);
  }
  /// Whether every element of `view` (over `dims`) has, on each permuted axis, the index the
  /// offset's and strides' digits (mixed radix of the permuted shape) add up to, with no carry:
  /// then map() is affine on the view and the fit holds without visiting every element.
  bool carryFree(llvm::ArrayRef<int64_t> view, std::array<int64_t, 4> dims) const {
    llvm::SmallVector<int64_t> reach = digits(view[0]);
    for (int a = 0; a < 4; ++a) {
      if (dims[a] == 1)
        continue;
      llvm::SmallVector<int64_t> step = digits(view[a + 1]);
      for (size_t i = 0; i < reach.size(); ++i)
        reach[i] += step[i] * (dims[a] - 1);
    }
    for (size_t i = 0; i < reach.size(); ++i)
      if (reach[i] >= permutedShape[i])
        return false;
    return true;
  }
  llvm::SmallVector<int64_t> digits(int64_t linear) const {
    llvm::SmallVector<int64_t> out;
    for (int64_t stride : permutedStrides) {
      out.push_back(linear / stride);
      linear %= stride;
    }
    return out;
  }
  int64_t operator()(int64_t linear) const {
    int64_t base = 0;
    for (size_t i = 0; i < perm.size(); ++i) {
      int64_t index = linear / permutedStrides[i];
      linear %= permutedStrides[i];
      base += index * baseStrides[perm[i]];
    }
    return base;
  }
};

/// `view` ([offset, s_b, s_h, s_s, s_d] over dims) of the permuted tensor as a view of the
/// base tensor, when one exists (checked on every element) and keeps the runtime's alignment.
std::optional<llvm::SmallVector<int64_t>> refit(llvm::ArrayRef<int64_t> view, std::array<int64_t, 4> dims,
                                                const Permutation &map, int64_t elementBytes) {
  llvm::SmallVector<int64_t> fitted(5, 0);
  fitted[0] = map(view[0]);
  for (int a = 0; a < 4; ++a)
    fitted[a + 1] = dims[a] > 1 ? map(view[0] + view[a + 1]) - fitted[0] : 0;
  if (llvm::any_of(fitted, [](int64_t x) { return x < 0; }))
    return std::nullopt;
  // Without a carry between permuted axes (the usual case) the fit is exact; otherwise it is
  // checked on every element.
  if (!map.carryFree(view, dims)) {
    if (dims[0] * dims[1] * dims[2] * dims[3] > kMaxViewElements)
      return std::nullopt;
    for (int64_t i = 0; i < dims[0]; ++i)
      for (int64_t j = 0; j < dims[1]; ++j)
        for (int64_t k = 0; k < dims[2]; ++k)
          for (int64_t l = 0; l < dims[3]; ++l) {
            int64_t old = view[0] + i * view[1] + j * view[2] + k * view[3] + l * view[4];
            if (map(old) != fitted[0] + i * fitted[1] + j * fitted[2] + k * fitted[3] + l * fitted[4])
              return std::nullopt;
          }
  }
  // runtime/plan/AttentionChecks.cpp: the head dim contiguous, the rest on 16 bytes.
  int64_t vector = kVectorBytes / elementBytes;
  if (dims[3] > 1 && fitted[4] != 1)
    return std::nullopt;
  for (int a = 0; a < 4; ++a)
    if (fitted[a] % vector != 0)
      return std::nullopt;
  return fitted;
}

/// A transpose that keeps the last axis (it permutes rows).
bool permutesRows(TransposeOp transpose) {
  llvm::ArrayRef<int64_t> perm = transpose.getPerm();
  return !perm.empty() && perm.back() == static_cast<int64_t>(perm.size()) - 1;
}

/// `layer` applied to `input` instead, giving `type`.
Value rebuildLayer(mlir::OpBuilder &builder, LinearLayer &layer, Value input, RankedTensorType type) {
  auto product = MatMulOp::create(builder, layer.matmul.getLoc(), type, input, layer.matmul.getRhs());
  product->setDiscardableAttrs(layer.matmul->getDiscardableAttrDictionary());
  Value value = product.getResult();
  if (layer.biasAdd)
    value = AddOp::create(builder, layer.biasAdd.getLoc(), type, value, layer.bias).getResult();
  return value;
}

/// Erases the layer's ops, which nothing uses any more.
void eraseLayer(LinearLayer &layer) {
  if (layer.biasAdd)
    layer.biasAdd->erase();
  layer.matmul->erase();
}

int64_t elementBytes(Value v) { return typeOf(v).getElementType().getIntOrFloatBitWidth() / 8; }

struct FoldTransposesIntoAttentionPass : impl::FoldTransposesIntoAttentionBase<FoldTransposesIntoAttentionPass> {
  void runOnOperation() override {
    llvm::SmallVector<AttentionOp> attentions;
    getOperation().walk([&](AttentionOp op) { attentions.push_back(op); });
    int folded = 0;
    for (AttentionOp attention : attentions) {
      folded += foldInput(attention);
      folded += foldOutput(attention);
    }
    if (folded)
      getOperation().emitRemark() << "folded " << folded
                                  << " transposes around linear layers into attention views";
  }

  /// attention(view of (T(x) · W [+ b])) → attention(view' of (x · W [+ b])).
  bool foldInput(AttentionOp attention) {
    Value packed = attention.getQ();
    if (attention.getK() != packed || attention.getV() != packed)
      return false; // separate projections: each would need its own rewrite; not seen yet
    if (llvm::any_of(packed.getUsers(), [&](Operation *user) { return user != attention; }))
      return false;
    std::optional<LinearLayer> layer = matchLinearLayer(packed);
    if (!layer)
      return false;
    auto transpose = layer->matmul.getLhs().getDefiningOp<TransposeOp>();
    if (!transpose || !permutesRows(transpose) || !transpose->hasOneUse())
      return false;
    Value x = transpose.getInput();
    llvm::SmallVector<int64_t> baseShape(typeOf(x).getShape());
    baseShape.back() = typeOf(packed).getShape().back();
    Permutation map(baseShape, transpose.getPerm());
    std::array<std::optional<llvm::SmallVector<int64_t>>, 3> views{
        refit(attention.getQView(), attention.viewDims("q"), map, elementBytes(packed)),
        refit(attention.getKView(), attention.viewDims("k"), map, elementBytes(packed)),
        refit(attention.getVView(), attention.viewDims("v"), map, elementBytes(packed))};
    if (!views[0] || !views[1] || !views[2])
      return false;

    mlir::OpBuilder builder(attention);
    Value base = rebuildLayer(builder, *layer, x, typeOf(packed).clone(baseShape));
    attention.getQMutable().assign(base);
    attention.getKMutable().assign(base);
    attention.getVMutable().assign(base);
    attention.setQView(*views[0]);
    attention.setKView(*views[1]);
    attention.setVView(*views[2]);
    eraseLayer(*layer);
    transpose->erase();
    return true;
  }

  /// T(reshape(attention) · W [+ b]) → attention' · W [+ b], attention' writing T's order.
  bool foldOutput(AttentionOp attention) {
    Value result = attention.getOutput();
    Value rows = result;
    llvm::SmallVector<Operation *> reshapes;
    while (rows.hasOneUse() && llvm::isa<ReshapeOp>(*rows.getUsers().begin())) {
      reshapes.push_back(*rows.getUsers().begin());
      rows = reshapes.back()->getResult(0);
    }
    if (!rows.hasOneUse())
      return false;
    auto matmul = llvm::dyn_cast<MatMulOp>(*rows.getUsers().begin());
    if (!matmul || matmul.getLhs() != rows || !matmul->hasOneUse())
      return false;
    Value layerValue = matmul.getResult();
    if (auto add = llvm::dyn_cast<AddOp>(*layerValue.getUsers().begin()))
      layerValue = add.getResult();
    std::optional<LinearLayer> layer = matchLinearLayer(layerValue);
    if (!layer || layer->matmul != matmul || !layerValue.hasOneUse())
      return false;
    auto transpose = llvm::dyn_cast<TransposeOp>(*layerValue.getUsers().begin());
    if (!transpose || !permutesRows(transpose))
      return false;
    // The result in T's order: element i of the permuted rows is element map(i) of `rows`.
    // o_view' must send each attention element to where T puts it, i.e. inverse of map.
    llvm::ArrayRef<int64_t> perm = transpose.getPerm();
    llvm::SmallVector<int64_t> inverse(perm.size());
    for (auto [i, axis] : llvm::enumerate(perm))
      inverse[axis] = static_cast<int64_t>(i);
    llvm::SmallVector<int64_t> permutedShape;
    for (int64_t axis : perm)
      permutedShape.push_back(typeOf(rows).getShape()[axis]);
    // rows = transpose(permuted, inverse): element i of `rows` lies at map(i) of `permuted`.
    Permutation map(permutedShape, inverse);
    auto view = refit(attention.getOView(), attention.viewDims("o"), map, elementBytes(result));
    if (!view)
      return false;

    mlir::OpBuilder builder(attention);
    RankedTensorType permutedRows = typeOf(rows).clone(permutedShape);
    auto moved = llvm::cast<AttentionOp>(builder.clone(*attention));
    moved.getOutput().setType(permutedRows);
    moved.setOView(*view);
    builder.setInsertionPoint(transpose);
    Value value = rebuildLayer(builder, *layer, moved.getOutput(), typeOf(transpose.getOutput()));
    transpose.getOutput().replaceAllUsesWith(value);
    transpose->erase();
    eraseLayer(*layer);
    for (Operation *reshape : llvm::reverse(reshapes))
      reshape->erase();
    attention->erase();
    return true;
  }
};

} // namespace
} // namespace kiln
