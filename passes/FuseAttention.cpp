//===- FuseAttention.cpp - scaled dot-product attention into kiln.attention ===//
//
// Finds softmax(scale * Q·Kᵀ [+ mask]) · V as the ONNX exporters leave it after import and the
// mixed-precision pass, and replaces it with one kiln.attention, which codegen lowers to the
// runtime's cuDNN attention step:
//
//   scores = MatMul(Q', Kᵀ')          Q' = Q, or Q * c (torch's SDPA export scales Q and Kᵀ by
//   scores = scores / c | scores * c  sqrt(1/sqrt(d)) each); the scalar constants multiply
//   x      = scores [+ mask]          into `scale`
//   p      = Softmax(x, last axis)
//   out    = MatMul(p, V)
//
// The head split and merge around it (Reshape, Transpose, and Gather of one index out of a
// packed QKV projection, as nn.MultiheadAttention exports it) are not copies the op needs:
// the op reads its operands and writes its result through strided views. A view is found by
// running the chain of view ops on an index tensor (each element holding its own position in
// the base tensor) and fitting offset + strides to the result, checked on every element, so
// any chain that is a strided view is absorbed and any other is left alone.
//
// The runtime's step accepts f16/bf16 only, head dims that are multiples of 8 up to 256, the
// head dim contiguous and every other stride and offset of q, k, v and o on 16 bytes
// (runtime/plan/AttentionChecks.cpp); the pass checks the same rules so codegen never emits a
// step the runtime refuses. A pattern that has the shape of attention but fails a rule is
// reported as a remark naming the nodes and the reason, and stays unfused.
//
// Masks: a mask broadcast over queries or keys is expanded to [b|1, h|1, Sq, Skv] by a
// kiln.expand (a generated kernel), because cuDNN's bias must have contiguous rows and a bias
// broadcast over queries is not a layout the runtime's GPU tests cover; mask rows must be 16
// bytes (Skv a multiple of 8) for the same reason.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "passes/ConstantValues.h"

#include "ir/Interpreter/Tensor.h"
#include "ir/KilnOps.h"
#include "ir/Provenance.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

#include <cmath>
#include <functional>
#include <numeric>
#include <optional>

namespace kiln {

#define GEN_PASS_DEF_FUSEATTENTION
#include "passes/Passes.h.inc"

namespace {

using mlir::Operation;
using mlir::RankedTensorType;
using mlir::Value;

/// The runtime's limits (runtime/plan/AttentionChecks.cpp).
constexpr int64_t kHeadDimMultiple = 8;
constexpr int64_t kMaxHeadDim = 256;
constexpr int64_t kVectorBytes = 16;
/// Views are found by running the view chain on an index tensor; larger bases are not traced.
constexpr int64_t kMaxTracedElements = int64_t(1) << 24;

RankedTensorType typeOf(Value v) { return llvm::cast<RankedTensorType>(v.getType()); }

/// Peels `x * c`, `c * x` and `x / c` (c a scalar constant, the product the shape of x, x used
/// once) off `v`, multiplying `scale` by what they apply.
Value stripScale(Value v, double &scale, llvm::SetVector<Operation *> &absorbed) {
  while (Operation *op = v.getDefiningOp()) {
    if (!v.hasOneUse() || !llvm::isa<MulOp, DivOp>(op))
      break;
    Value lhs = op->getOperand(0), rhs = op->getOperand(1);
    std::optional<double> c = scalarConstant(rhs);
    Value x = lhs;
    if (!c && llvm::isa<MulOp>(op) && (c = scalarConstant(lhs)))
      x = rhs;
    if (!c || typeOf(x) != typeOf(v) || (llvm::isa<DivOp>(op) && *c == 0.0))
      break;
    scale = llvm::isa<DivOp>(op) ? scale / *c : scale * *c;
    absorbed.insert(op);
    v = x;
  }
  return v;
}

/// An index tensor: element p holds a position in some base tensor.
struct Indices {
  llvm::SmallVector<int64_t> shape;
  std::vector<int64_t> at;
};

int64_t elementCount(llvm::ArrayRef<int64_t> shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t(1), std::multiplies<int64_t>());
}

Indices iota(llvm::ArrayRef<int64_t> shape) {
  Indices r{llvm::SmallVector<int64_t>(shape), std::vector<int64_t>(elementCount(shape))};
  std::iota(r.at.begin(), r.at.end(), 0);
  return r;
}

/// Row-major strides of `shape`.
llvm::SmallVector<int64_t> packedStrides(llvm::ArrayRef<int64_t> shape) {
  llvm::SmallVector<int64_t> s(shape.size(), 1);
  for (int i = (int)shape.size() - 2; i >= 0; --i)
    s[i] = s[i + 1] * shape[i + 1];
  return s;
}

Indices transposed(const Indices &x, llvm::ArrayRef<int64_t> perm) {
  Indices y;
  for (int64_t p : perm)
    y.shape.push_back(x.shape[p]);
  y.at.resize(x.at.size());
  llvm::SmallVector<int64_t> xs = packedStrides(x.shape), index(perm.size(), 0);
  for (size_t e = 0; e < y.at.size(); ++e) {
    int64_t src = 0;
    for (size_t i = 0; i < perm.size(); ++i)
      src += index[i] * xs[perm[i]];
    y.at[e] = x.at[src];
    for (int i = (int)perm.size() - 1; i >= 0 && ++index[i] == y.shape[i]; --i)
      index[i] = 0;
  }
  return y;
}

/// x[..., k, ...] along `axis`, the axis dropped.
Indices selected(const Indices &x, int64_t axis, int64_t k) {
  Indices y;
  y.shape.assign(x.shape.begin(), x.shape.end());
  y.shape.erase(y.shape.begin() + axis);
  int64_t inner = elementCount(llvm::ArrayRef<int64_t>(x.shape).drop_front(axis + 1));
  int64_t outer = elementCount(llvm::ArrayRef<int64_t>(x.shape).take_front(axis));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i)
      y.at.push_back(x.at[(o * x.shape[axis] + k) * inner + i]);
  return y;
}

/// A gather of one constant index (rank-0 indices) along its axis: a slice, so a view.
std::optional<int64_t> scalarIndex(GatherOp gather) {
  auto constant = gather.getIndices().getDefiningOp<ConstantOp>();
  if (!constant || typeOf(gather.getIndices()).getRank() != 0)
    return std::nullopt;
  auto tensor = interp::fromAttr(constant.getValue());
  if (!tensor) {
    llvm::consumeError(tensor.takeError());
    return std::nullopt;
  }
  int64_t axis = gather.getAxis(), size = typeOf(gather.getInput()).getDimSize(axis);
  int64_t k = tensor->i[0] < 0 ? tensor->i[0] + size : tensor->i[0];
  if (axis < 0 || k < 0 || k >= size)
    return std::nullopt;
  return k;
}

/// One step of a view chain applied to `x` (the op's input as indices): its output.
std::optional<Indices> applyView(Operation *op, const Indices &x) {
  if (auto reshape = llvm::dyn_cast<ReshapeOp>(op)) {
    Indices y = x;
    y.shape.assign(typeOf(reshape.getOutput()).getShape().begin(), typeOf(reshape.getOutput()).getShape().end());
    return y;
  }
  if (auto transpose = llvm::dyn_cast<TransposeOp>(op))
    return transposed(x, transpose.getPerm());
  if (auto gather = llvm::dyn_cast<GatherOp>(op)) {
    auto index = scalarIndex(gather);
    if (!index)
      return std::nullopt;
    return selected(x, gather.getAxis(), *index);
  }
  return std::nullopt;
}

bool isViewOp(Operation *op) {
  if (llvm::isa<ReshapeOp, TransposeOp>(op))
    return true;
  auto gather = llvm::dyn_cast<GatherOp>(op);
  return gather && scalarIndex(gather).has_value();
}

/// A 4-d strided view [offset, s_b, s_h, s_s, s_d] of a base tensor.
struct View {
  Value base;
  llvm::SmallVector<int64_t, 5> view;
};

/// Fits offset and strides to `idx` (over `dims`, rank 4): element p of the view is idx.at[p].
std::optional<llvm::SmallVector<int64_t, 5>> fitStrides(const std::vector<int64_t> &idx,
                                                        llvm::ArrayRef<int64_t> dims) {
  llvm::SmallVector<int64_t> packed = packedStrides(dims);
  llvm::SmallVector<int64_t, 5> view = {idx[0]};
  for (int i = 0; i < 4; ++i)
    view.push_back(dims[i] > 1 ? idx[packed[i]] - idx[0] : 0);
  // A dim of one element gets the span of the others, as a packed layout would give it.
  int64_t span = 1;
  for (int i = 0; i < 4; ++i)
    span = std::max(span, view[i + 1] * dims[i]);
  for (int i = 0; i < 4; ++i)
    if (dims[i] == 1)
      view[i + 1] = span;
  if (llvm::any_of(view, [](int64_t x) { return x < 0; }))
    return std::nullopt;
  std::array<int64_t, 4> index = {0, 0, 0, 0};
  for (size_t e = 0; e < idx.size(); ++e) {
    int64_t expected = view[0];
    for (int i = 0; i < 4; ++i)
      expected += index[i] * view[i + 1];
    if (idx[e] != expected)
      return std::nullopt;
    for (int i = 3; i >= 0 && ++index[i] == dims[i]; --i)
      index[i] = 0;
  }
  return view;
}

/// `v` (of logical dims `dims`, rank 4 after left-padding v's shape with ones) as a strided view
/// of the tensor its chain of view ops starts from. The view ops are added to `absorbed`.
std::optional<View> traceOperand(Value v, llvm::ArrayRef<int64_t> dims, llvm::SetVector<Operation *> &absorbed) {
  llvm::SmallVector<Operation *> chain; // from v back to the base
  Value base = v;
  while (Operation *op = base.getDefiningOp()) {
    if (!isViewOp(op) || typeOf(op->getOperand(0)).getNumElements() > kMaxTracedElements)
      break;
    chain.push_back(op);
    base = op->getOperand(0);
  }
  if (typeOf(base).getNumElements() > kMaxTracedElements)
    return std::nullopt;
  Indices idx = iota(typeOf(base).getShape());
  for (Operation *op : llvm::reverse(chain)) {
    auto next = applyView(op, idx);
    if (!next)
      return std::nullopt;
    idx = std::move(*next);
  }
  auto view = fitStrides(idx.at, dims);
  if (!view)
    return std::nullopt;
  absorbed.insert(chain.begin(), chain.end());
  return View{base, *view};
}

/// The result side: follows `o`'s single-use chain of reshapes and transposes (the head merge)
/// to the tensor it ends in, and gives o's view of that tensor.
std::optional<View> traceResult(Value o, llvm::ArrayRef<int64_t> dims, llvm::SetVector<Operation *> &absorbed) {
  if (typeOf(o).getNumElements() > kMaxTracedElements)
    return std::nullopt;
  llvm::SmallVector<Operation *> chain;
  Value end = o;
  while (end.hasOneUse()) {
    Operation *user = *end.getUsers().begin();
    if (!llvm::isa<ReshapeOp, TransposeOp>(user))
      break;
    chain.push_back(user);
    end = user->getResult(0);
  }
  Indices idx = iota(typeOf(o).getShape()); // element p of `end` holds its position in o
  for (Operation *op : chain)
    idx = *applyView(op, idx);
  std::vector<int64_t> position(idx.at.size());
  for (size_t p = 0; p < idx.at.size(); ++p)
    position[idx.at[p]] = (int64_t)p;
  auto view = fitStrides(position, dims);
  if (!view)
    return std::nullopt;
  absorbed.insert(chain.begin(), chain.end());
  return View{end, *view};
}

bool isHalf(mlir::Type t) { return t.isF16() || t.isBF16(); }

/// q, k, v and o views must have the head dim contiguous and every other stride (of a dim
/// longer than one) and the offset on 16 bytes; the reason when not.
std::optional<std::string> misaligned(llvm::StringRef role, llvm::ArrayRef<int64_t> view, llvm::ArrayRef<int64_t> dims,
                                      int64_t elementBytes) {
  if (dims[3] > 1 && view[4] != 1)
    return (role + " has its head dim strided (" + std::to_string(view[4]) + "); the step needs it contiguous").str();
  bool aligned = view[0] * elementBytes % kVectorBytes == 0;
  for (int i = 0; i < 3; ++i)
    aligned = aligned && (dims[i] == 1 || view[i + 1] * elementBytes % kVectorBytes == 0);
  if (!aligned)
    return (role + " is not 16-byte aligned (offset and strides must be multiples of " +
            std::to_string(kVectorBytes / elementBytes) + " elements)")
        .str();
  return std::nullopt;
}

/// Left-pads `shape` with ones to rank 4.
llvm::SmallVector<int64_t, 4> toRank4(llvm::ArrayRef<int64_t> shape) {
  llvm::SmallVector<int64_t, 4> r(4 - shape.size(), 1);
  r.append(shape.begin(), shape.end());
  return r;
}

class FuseAttentionPass : public impl::FuseAttentionBase<FuseAttentionPass> {
public:
  void runOnOperation() override {
    llvm::SmallVector<SoftmaxOp> softmaxes;
    getOperation().walk([&](SoftmaxOp op) { softmaxes.push_back(op); });
    for (SoftmaxOp softmax : softmaxes)
      tryFuse(softmax);
  }

private:
  /// What a match collects.
  struct Match {
    MatMulOp qk, pv;
    Value q, kT, v, mask;
    double scale = 1.0;
    llvm::SetVector<Operation *> absorbed;
  };

  /// The attention around `softmax`, if it has attention's shape (no remark otherwise).
  std::optional<Match> match(SoftmaxOp softmax, std::string &whereAfterSoftmax) {
    Match m;
    Value p = softmax.getOutput();
    int64_t rank = typeOf(p).getRank();
    if (rank < 2 || rank > 4 || softmax.getAxis() != rank - 1)
      return std::nullopt;
    Value probs = p;
    if (WhereOp where = nanToZero(p)) {
      // torch's SDPA export: Where(IsNaN(p), 0, p) turns rows whose every key is masked (NaN
      // from softmax over -inf) into zeros; the caller keeps that (see zeroMaskedRows).
      whereAfterSoftmax = describeNode(where);
      probs = where.getOutput();
      m.absorbed.insert(where);
      m.absorbed.insert(where->getOperand(0).getDefiningOp());
    } else if (!p.hasOneUse()) {
      return std::nullopt;
    }
    if (!probs.hasOneUse())
      return std::nullopt;
    Operation *user = *probs.getUsers().begin();
    m.pv = llvm::dyn_cast<MatMulOp>(user);
    if (!m.pv || m.pv.getLhs() != probs || m.pv.getRhs() == probs)
      return std::nullopt;
    m.v = m.pv.getRhs();
    m.absorbed.insert(softmax);
    Value x = softmax.getInput();
    if (auto add = x.getDefiningOp<AddOp>(); add && x.hasOneUse() && typeOf(add.getOutput()) == typeOf(x)) {
      for (int side = 0; side < 2; ++side) {
        double scale = 1.0;
        llvm::SetVector<Operation *> peeled;
        Value s = stripScale(add->getOperand(side), scale, peeled);
        if (s.getDefiningOp<MatMulOp>() && s.hasOneUse() && typeOf(s) == typeOf(x)) {
          m.mask = add->getOperand(1 - side);
          x = add->getOperand(side);
          m.absorbed.insert(add);
          break;
        }
      }
    }
    Value s = stripScale(x, m.scale, m.absorbed);
    m.qk = s.getDefiningOp<MatMulOp>();
    if (!m.qk || !s.hasOneUse() || typeOf(s) != typeOf(x))
      return std::nullopt;
    m.absorbed.insert(m.qk);
    m.q = stripScale(m.qk.getLhs(), m.scale, m.absorbed);
    m.kT = stripScale(m.qk.getRhs(), m.scale, m.absorbed);
    m.absorbed.insert(m.pv);
    return m;
  }

  /// The Where(IsNaN(p), 0, p) of `p`, when p has just it and its IsNaN as users.
  static WhereOp nanToZero(Value p) {
    if (!llvm::hasNItems(p.getUses(), 2))
      return {};
    for (Operation *user : p.getUsers()) {
      auto isNan = llvm::dyn_cast<IsNaNOp>(user);
      if (!isNan || !isNan->hasOneUse())
        continue;
      auto where = llvm::dyn_cast<WhereOp>(*isNan->getUsers().begin());
      std::optional<double> zero = where ? scalarConstant(where->getOperand(1)) : std::nullopt;
      if (where && where->getOperand(0) == isNan.getResult() && zero && *zero == 0.0 && where->getOperand(2) == p &&
          where.getOutput().getType() == p.getType())
        return where;
    }
    return {};
  }

  void remark(SoftmaxOp softmax, const Match &m, const std::string &why) {
    // Location-only, like kiln-mixed-precision's remarks: attaching the op would print it.
    mlir::emitRemark(softmax.getLoc()) << "attention not fused (with " << describeNode(m.qk) << " and "
                                       << describeNode(m.pv) << "): " << why;
  }

  void tryFuse(SoftmaxOp softmax) {
    std::string whereAfterSoftmax;
    std::optional<Match> found = match(softmax, whereAfterSoftmax);
    if (!found)
      return;
    Match &m = *found;
    mlir::Type element = typeOf(m.q).getElementType();
    if (!isHalf(element))
      return remark(softmax, m, "it runs in " + [&] {
        std::string s;
        llvm::raw_string_ostream os(s);
        os << element;
        return s;
      }() + "; the fused step takes f16 or bf16 (fp32 plans keep the unfused ops)");
    for (Value v : llvm::SmallVector<Value>{m.kT, m.v, m.pv.getOutput(), softmax.getOutput()})
      if (typeOf(v).getElementType() != element)
        return remark(softmax, m, "q, k, v and the scores do not share one element type");
    // Shapes: q [.., Sq, D], kT [.., D, Skv], v [.., Skv, Dv], with one batch prefix of rank <= 2.
    llvm::ArrayRef<int64_t> qs = typeOf(m.q).getShape(), ks = typeOf(m.kT).getShape(), vs = typeOf(m.v).getShape();
    size_t rank = qs.size();
    if (rank < 2 || rank > 4 || ks.size() != rank || vs.size() != rank)
      return remark(softmax, m, "the matmuls broadcast or are not batched over [batch, heads]");
    llvm::ArrayRef<int64_t> prefix = qs.drop_back(2);
    if (ks.drop_back(2) != prefix || vs.drop_back(2) != prefix)
      return remark(softmax, m, "the matmuls broadcast over batch or heads");
    llvm::SmallVector<int64_t, 4> bh = toRank4(prefix);
    int64_t B = bh[2], H = bh[3], Sq = qs[rank - 2], D = qs[rank - 1], Skv = ks[rank - 1], Dv = vs[rank - 1];
    if (ks[rank - 2] != D || vs[rank - 2] != Skv)
      return; // not a valid product; the verifier would have said so
    for (int64_t d : {D, Dv})
      if (d % kHeadDimMultiple != 0 || d > kMaxHeadDim)
        return remark(softmax, m,
                      "head dim " + std::to_string(D) + (Dv != D ? " / " + std::to_string(Dv) : std::string()) +
                          " is not a multiple of " + std::to_string(kHeadDimMultiple) + " up to " +
                          std::to_string(kMaxHeadDim) + " (cuDNN's flash attention)");
    if (!std::isfinite(m.scale))
      return remark(softmax, m, "the folded scale is not finite");
    std::array<int64_t, 4> qDims = {B, H, Sq, D}, kDims = {B, H, Skv, D}, kTDims = {B, H, D, Skv},
                           vDims = {B, H, Skv, Dv}, oDims = {B, H, Sq, Dv};
    auto q = traceOperand(m.q, qDims, m.absorbed);
    auto kT = traceOperand(m.kT, kTDims, m.absorbed);
    auto v = traceOperand(m.v, vDims, m.absorbed);
    auto o = traceResult(m.pv.getOutput(), oDims, m.absorbed);
    if (!q || !kT || !v || !o)
      return remark(softmax, m, "an operand is not a strided view of one tensor");
    View k{kT->base, {kT->view[0], kT->view[1], kT->view[2], kT->view[4], kT->view[3]}};
    int64_t bytes = element.getIntOrFloatBitWidth() / 8;
    for (auto [role, view, dims] :
         {std::tuple{"q", &*q, qDims}, {"k", &k, kDims}, {"v", &*v, vDims}, {"o", &*o, oDims}})
      if (auto why = misaligned(role, view->view, dims, bytes))
        return remark(softmax, m, *why);
    // The mask: [.., Sq, Skv] broadcasting to the scores, q's type, rows of 16 bytes, no
    // broadcast within a row or over queries (expanded here, see the file comment).
    Value mask;
    llvm::SmallVector<int64_t, 5> maskView;
    if (m.mask) {
      if (typeOf(m.mask).getElementType() != element)
        return remark(softmax, m, "the mask is not of q's element type");
      if (typeOf(m.mask).getRank() > 4)
        return remark(softmax, m, "the mask has more than four dims");
      llvm::SmallVector<int64_t, 4> ms = toRank4(typeOf(m.mask).getShape());
      std::array<int64_t, 4> target = {B, H, Sq, Skv};
      for (int i = 0; i < 4; ++i)
        if (ms[i] != 1 && ms[i] != target[i])
          return remark(softmax, m, "the mask does not broadcast to [batch, heads, Sq, Skv]");
      if (Skv * bytes % kVectorBytes != 0)
        return remark(softmax, m,
                      "mask rows of " + std::to_string(Skv) + " keys are not 16-byte aligned (the keys must be a "
                                                              "multiple of " +
                          std::to_string(kVectorBytes / bytes) + ")");
      mask = expandedMask(m.mask, ms, Sq, Skv);
      llvm::ArrayRef<int64_t> full = typeOf(mask).getShape();
      llvm::SmallVector<int64_t> packed = packedStrides(toRank4(full));
      maskView = {0};
      for (int i = 0; i < 4; ++i)
        maskView.push_back(toRank4(full)[i] == 1 ? 0 : packed[i]);
    }
    // Where(IsNaN(p), 0, p): with finite scores, p has NaN rows exactly where every key is
    // masked with -inf. Without a mask there are none; with a mask whose values are never NaN
    // or +inf, the rows are those whose mask row is all -inf, and the pass zeroes them after
    // the step (zeroMaskedRows), whatever the step computes there.
    std::optional<bool> resultBshd;
    if (!whereAfterSoftmax.empty() && m.mask) {
      if (!maskNeverNaNOrPosInf(m.mask))
        return remark(softmax, m,
                      whereAfterSoftmax + " zeroes the rows the mask masks entirely, and the mask's values are not "
                                          "known to be finite or -inf (a Where between two such constants)");
      llvm::ArrayRef<int64_t> ov = o->view;
      bool offsetZero = ov[0] == 0 && typeOf(o->base).getNumElements() == B * H * Sq * Dv;
      auto is = [&](std::array<int64_t, 4> want) {
        for (int i = 0; i < 4; ++i)
          if (oDims[i] > 1 && ov[i + 1] != want[i])
            return false;
        return offsetZero;
      };
      if (is({Sq * H * Dv, Dv, H * Dv, 1}))
        resultBshd = true;
      else if (is({H * Sq * Dv, Sq * Dv, Dv, 1}))
        resultBshd = false;
      else
        return remark(softmax, m, whereAfterSoftmax + " zeroes masked rows, which needs the result packed as "
                                                      "[b, s, h, d] or [b, h, s, d]");
    }
    mlir::OpBuilder builder(m.pv);
    // Named after the second MatMul (the step's name); every absorbed ONNX node is listed.
    llvm::SmallVector<mlir::Location> locations{m.pv.getLoc(), m.qk.getLoc(), softmax.getLoc()};
    for (Operation *op : m.absorbed)
      locations.push_back(op->getLoc());
    auto attention = AttentionOp::create(
        builder, mlir::FusedLoc::get(softmax.getContext(), locations), o->base.getType(), q->base, k.base, v->base, mask,
        builder.getDenseI64ArrayAttr({B, H, Sq, Skv, D, Dv}), builder.getF32FloatAttr((float)m.scale),
        builder.getBoolAttr(false), builder.getDenseI64ArrayAttr(q->view), builder.getDenseI64ArrayAttr(k.view),
        builder.getDenseI64ArrayAttr(v->view), builder.getDenseI64ArrayAttr(o->view),
        mask ? builder.getDenseI64ArrayAttr(maskView) : mlir::DenseI64ArrayAttr());
    // The head merge's ONNX value is now computed by the attention step (or the row zeroing
    // after it): the name moves there, so calibration ranges and dumps still find it.
    std::string merged = onnxValueName(o->base);
    o->base.replaceAllUsesWith(attention.getOutput());
    Value result = resultBshd ? zeroMaskedRows(attention, m.mask, *resultBshd) : attention.getOutput();
    eraseDead(m.absorbed);
    if (!merged.empty())
      setOnnxValueName(result, merged);
  }

  /// Whether every value of `mask` is finite (up to f16's largest) or -inf: a cast, reshape or
  /// expand of Where(c, a, b) with a and b such constants (BERT's Where(mask, 0, -inf)).
  static bool maskNeverNaNOrPosInf(Value mask) {
    while (Operation *op = mask.getDefiningOp()) {
      if (!llvm::isa<CastOp, ReshapeOp, ExpandOp, TransposeOp>(op))
        break;
      mask = op->getOperand(0);
    }
    auto where = mask.getDefiningOp<WhereOp>();
    if (!where)
      return false;
    for (Value branch : {where.getX(), where.getY()}) {
      std::optional<double> c = scalarConstant(branch);
      if (!c || std::isnan(*c) || *c > 65504.0)
        return false;
    }
    return true;
  }

  /// What Where(IsNaN(p), 0, p) did, after the step: the rows of its result whose mask row is
  /// all -inf become zero. all = IsInf(ReduceMax(mask, last axis)) once per mask; the result
  /// (packed [b, s, h, d] when `bshd`, else [b, h, s, d]) is selected through reshapes, which
  /// codegen makes views. Returns the zeroed result.
  Value zeroMaskedRows(AttentionOp attention, Value mask, bool bshd) {
    mlir::Location loc = attention.getLoc();
    llvm::ArrayRef<int64_t> d = attention.getDims();
    int64_t B = d[0], H = d[1], Sq = d[2], Dv = d[5];
    llvm::SmallVector<int64_t, 4> ms = toRank4(typeOf(mask).getShape());
    Value all = maskedRows_.lookup(mask);
    mlir::OpBuilder builder(mask.getContext());
    if (!all) {
      mlir::Type element = typeOf(mask).getElementType();
      Value four = rank4AfterDefinition(builder, mask, ms);
      auto axesType = RankedTensorType::get({1}, builder.getI64Type());
      Value axes = ConstantOp::create(builder, mask.getLoc(), axesType,
                                      mlir::DenseElementsAttr::get(axesType, llvm::ArrayRef<int64_t>{3}));
      auto rowType = RankedTensorType::get({ms[0], ms[1], ms[2], 1}, element);
      Value max = ReduceMaxOp::create(builder, mask.getLoc(), rowType, four, axes, builder.getBoolAttr(true),
                                      builder.getBoolAttr(false));
      all = IsInfOp::create(builder, mask.getLoc(), rowType.clone(builder.getI1Type()), max,
                            builder.getBoolAttr(true), builder.getBoolAttr(false));
      maskedRows_[mask] = all;
    }
    builder.setInsertionPointAfter(attention);
    auto i1 = builder.getI1Type();
    Value rows = all; // [mb, mh, Sq|1, 1]
    if (bshd) {
      auto type = RankedTensorType::get({ms[0], ms[2], ms[1], 1}, i1);
      if (ms[1] > 1)
        rows = TransposeOp::create(builder, loc, type, rows, builder.getDenseI64ArrayAttr({0, 2, 1, 3})).getResult();
      else if (type != rows.getType())
        rows = ReshapeOp::create(builder, loc, type, rows).getResult();
    }
    RankedTensorType resultType = typeOf(attention.getOutput());
    mlir::Type element = resultType.getElementType();
    auto scalar = RankedTensorType::get({}, element);
    Value zero = ConstantOp::create(builder, loc, scalar, llvm::cast<mlir::ElementsAttr>(builder.getZeroAttr(scalar)));
    // Heads merged into [b, s, h * d] with one mask row for every head: the rows select on the
    // result as it is ([mb, s or 1, 1]), so the where is elementwise on the value its readers take
    // and joins their group (an fp8 out-projection's quantize), where reshapes around it would
    // keep it a kernel of its own.
    auto rowsType = llvm::cast<RankedTensorType>(rows.getType());
    if (bshd && resultType.getRank() == 3 && resultType.getShape() == llvm::ArrayRef<int64_t>{B, Sq, H * Dv} &&
        rowsType.getShape()[2] == 1) {
      auto mergedType = RankedTensorType::get({ms[0], rowsType.getShape()[1], 1}, i1);
      auto mergedRows = ReshapeOp::create(builder, loc, mergedType, rows);
      Value selected = WhereOp::create(builder, loc, resultType, mergedRows, zero, attention.getOutput());
      attention.getOutput().replaceAllUsesExcept(selected, selected.getDefiningOp());
      return selected;
    }
    auto fourType = RankedTensorType::get(bshd ? llvm::ArrayRef<int64_t>{B, Sq, H, Dv} : llvm::ArrayRef<int64_t>{B, H, Sq, Dv},
                                          element);
    auto four = ReshapeOp::create(builder, loc, fourType, attention.getOutput());
    Value selected = WhereOp::create(builder, loc, fourType, rows, zero, four);
    Value result = ReshapeOp::create(builder, loc, resultType, selected);
    attention.getOutput().replaceAllUsesExcept(result, four);
    return result;
  }

  /// Sets `builder` right after `mask` is defined (so every layer sharing the mask can use what
  /// is built there) and returns the mask as rank 4, `ms` (a reshape, which codegen makes a view).
  static Value rank4AfterDefinition(mlir::OpBuilder &builder, Value mask, llvm::ArrayRef<int64_t> ms) {
    if (Operation *def = mask.getDefiningOp())
      builder.setInsertionPointAfter(def);
    else
      builder.setInsertionPointToStart(llvm::cast<mlir::BlockArgument>(mask).getOwner());
    if (typeOf(mask).getRank() == 4)
      return mask;
    return ReshapeOp::create(builder, mask.getLoc(), RankedTensorType::get(ms, typeOf(mask).getElementType()), mask);
  }

  /// `mask` as [mb, mh, Sq, Skv] (a reshape to rank 4 is a view; the expand a kernel), one per
  /// mask value, placed after the mask so every layer that shares it can use it.
  Value expandedMask(Value mask, llvm::ArrayRef<int64_t> ms, int64_t Sq, int64_t Skv) {
    if (ms[2] == Sq && ms[3] == Skv)
      return mask;
    auto key = std::make_pair(mask, std::make_pair(Sq, Skv));
    if (Value done = expanded_.lookup(key))
      return done;
    mlir::OpBuilder builder(mask.getContext());
    mlir::Type element = typeOf(mask).getElementType();
    Value four = rank4AfterDefinition(builder, mask, ms);
    auto type = RankedTensorType::get({ms[0], ms[1], Sq, Skv}, element);
    Value result = ExpandOp::create(builder, mask.getLoc(), type, four);
    expanded_[key] = result;
    return result;
  }

  /// Erases the matched ops that nothing uses any more (users first).
  static void eraseDead(const llvm::SetVector<Operation *> &ops) {
    llvm::SmallVector<Operation *> live(ops.begin(), ops.end());
    bool changed = true;
    while (changed) {
      changed = false;
      for (Operation *&op : live)
        if (op && op->use_empty()) {
          op->erase();
          op = nullptr;
          changed = true;
        }
    }
  }

  llvm::DenseMap<std::pair<Value, std::pair<int64_t, int64_t>>, Value> expanded_;
  llvm::DenseMap<Value, Value> maskedRows_; // mask → its all-masked rows

};

} // namespace

} // namespace kiln
