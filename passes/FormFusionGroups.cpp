//===- FormFusionGroups.cpp - elementwise chains into kiln.fusion_group ----===//
//
// Linear layers first: each kiln.matmul of a 2-d weight takes the epilogue a cuBLASLt matmul
// can run (bias row, residual, ReLU or tanh GELU) into a `gemm` group. Then the function is
// walked from its last op to its first: each elementwise op not yet in a group
// becomes the root of a candidate group, which absorbs producers that are elementwise too and
// whose every use is already inside the group (so no value a group computes is needed
// outside it: a group has one result and one kernel computes it). A candidate of one op stays
// as it is.
//
// The body is rewritten so its types state the group's rounding promise: f16/bf16 inputs are
// widened by `kiln.cast` to f32, every op that computed in f16/bf16 computes in f32, and the
// result is rounded once by a `kiln.cast` back to its type before `kiln.yield`. Explicit casts
// the group absorbs keep their target type, so they still round.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "ir/KilnOps.h"
#include "ir/ShapeRules.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

namespace kiln {

#define GEN_PASS_DEF_FORMFUSIONGROUPS
#include "passes/Passes.h.inc"

namespace {

using mlir::Operation;
using mlir::RankedTensorType;
using mlir::Type;
using mlir::Value;

bool isNarrowFloat(Type element) { return element.isF16() || element.isBF16(); }

Type elementOf(Value value) { return llvm::cast<mlir::ShapedType>(value.getType()).getElementType(); }

/// `value`'s type with element type f32 when it is f16/bf16, else its own type.
Type computeTypeOf(Value value) {
  auto type = llvm::cast<RankedTensorType>(value.getType());
  return isNarrowFloat(type.getElementType()) ? type.clone(mlir::Float32Type::get(value.getContext())) : type;
}


/// An op a group may hold: elementwise, one statically shaped result.
bool isFusible(Operation *op) {
  if (!isElementwiseMap(op) || op->getNumResults() != 1)
    return false;
  auto type = llvm::dyn_cast<RankedTensorType>(op->getResult(0).getType());
  return type && type.hasStaticShape();
}

struct FormFusionGroupsPass : impl::FormFusionGroupsBase<FormFusionGroupsPass> {
  void runOnOperation() override {
    mlir::Block &body = getOperation().getBody().front();
    llvm::SmallVector<Operation *> order;
    for (Operation &op : body)
      order.push_back(&op);
    llvm::DenseSet<Operation *> taken;
    // Linear layers first: a matmul takes its epilogue before elementwise groups could.
    for (Operation *op : order) {
      auto matmul = llvm::dyn_cast<MatMulOp>(op);
      if (!matmul)
        continue;
      llvm::SetVector<Operation *> members = collectEpilogue(matmul);
      if (members.size() < 2)
        continue;
      for (Operation *member : members)
        taken.insert(member);
      formGroup(members.back(), members, "gemm", matmul);
    }
    for (Operation *root : llvm::reverse(order)) {
      if (taken.contains(root) || !isFusible(root))
        continue;
      llvm::SetVector<Operation *> members = collectMembers(root, taken);
      if (members.size() < 2)
        continue;
      for (Operation *member : members)
        taken.insert(member);
      formGroup(root, members, "elementwise", nullptr);
    }
  }

  /// The matmul and the ops a cuBLASLt epilogue can take over from it, in order:
  /// act(matmul + bias + residual), each add optional and in either order, one ReLU or tanh
  /// GELU. Each link has one use (its value is not needed outside), operands of the matmul's
  /// element type (cuBLASLt's bias and C have the output's type); the right operand is a 2-d
  /// weight, so the product is one (batch x M) x K x N matmul.
  llvm::SetVector<Operation *> collectEpilogue(MatMulOp matmul) {
    llvm::SetVector<Operation *> members;
    auto lhs = llvm::cast<RankedTensorType>(matmul.getLhs().getType());
    auto rhs = llvm::cast<RankedTensorType>(matmul.getRhs().getType());
    auto result = llvm::cast<RankedTensorType>(matmul.getResult().getType());
    mlir::Type element = result.getElementType();
    if (rhs.getRank() != 2 || lhs.getRank() < 2 || !result.hasStaticShape() ||
        !(element.isF32() || isNarrowFloat(element)))
      return members;
    members.insert(matmul);
    int64_t n = result.getShape().back();
    bool bias = false, residual = false;
    Value current = matmul.getResult();
    while (current.hasOneUse()) {
      Operation *user = *current.getUsers().begin();
      if (auto add = llvm::dyn_cast<AddOp>(user)) {
        Value other = add.getLhs() == current ? add.getRhs() : add.getLhs();
        auto type = llvm::cast<RankedTensorType>(other.getType());
        if (other == current || type.getElementType() != element ||
            add.getResult().getType() != result)
          break;
        bool isRow = type.getNumElements() == n && type.getRank() >= 1 && type.getShape().back() == n &&
                     type.getRank() <= result.getRank();
        if (isRow && !bias)
          bias = true;
        else if (type == result && !residual)
          residual = true;
        else
          break;
        members.insert(add);
        current = add.getResult();
        continue;
      }
      auto gelu = llvm::dyn_cast<GeluOp>(user);
      if (llvm::isa<ReluOp>(user) || (gelu && gelu.getApproximate() == "tanh"))
        members.insert(user);
      break;
    }
    return members;
  }

  /// The root and the producers it can absorb, to a fixed point: a producer joins once all its
  /// users are members, which may take another member joining first.
  llvm::SetVector<Operation *> collectMembers(Operation *root, const llvm::DenseSet<Operation *> &taken) {
    auto rootShape = llvm::cast<RankedTensorType>(root->getResult(0).getType()).getShape();
    llvm::SetVector<Operation *> members;
    members.insert(root);
    for (bool grew = true; grew;) {
      grew = false;
      for (size_t i = 0; i < members.size(); ++i) {
        for (Value operand : members[i]->getOperands()) {
          Operation *producer = operand.getDefiningOp();
          if (!producer || members.contains(producer) || taken.contains(producer) || !isFusible(producer))
            continue;
          auto shape = llvm::cast<RankedTensorType>(producer->getResult(0).getType()).getShape();
          if (!broadcastsTo(shape, rootShape))
            continue;
          bool usedOnlyInside = llvm::all_of(producer->getUsers(), [&](Operation *user) {
            return members.contains(user);
          });
          if (usedOnlyInside) {
            members.insert(producer);
            grew = true;
          }
        }
      }
    }
    return members;
  }

  /// Replaces `members` (ending in `root`, whose result the group gives) by one group of
  /// `kind`, named after `named` (or, when null, the op computing the root's value).
  void formGroup(Operation *root, const llvm::SetVector<Operation *> &members, llvm::StringRef kind,
                 Operation *named) {
    // Members in block order (producers first); inputs in order of first use.
    llvm::SmallVector<Operation *> ordered(members.begin(), members.end());
    llvm::sort(ordered, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
    llvm::SetVector<Value> inputs;
    for (Operation *member : ordered)
      for (Value operand : member->getOperands())
        if (!members.contains(operand.getDefiningOp()))
          inputs.insert(operand);

    // The group takes its name (the first ONNX node of its location) from the op that computes
    // its result: the root, or the op before the root when the root is a cast that rounds it.
    if (!named) {
      named = root;
      if (auto cast = llvm::dyn_cast<CastOp>(root))
        if (Operation *input = cast.getInput().getDefiningOp(); input && members.contains(input))
          named = input;
    }
    mlir::MLIRContext *context = root->getContext();
    llvm::SmallVector<mlir::Location> locations{named->getLoc()};
    for (Operation *member : ordered)
      if (member != named)
        locations.push_back(member->getLoc());
    mlir::Location loc = mlir::FusedLoc::get(context, locations, mlir::StringAttr::get(context, "kiln.fusion_group"));

    mlir::OpBuilder builder(root);
    auto group = FusionGroupOp::create(builder, loc, root->getResultTypes(), builder.getStringAttr(kind),
                                       inputs.getArrayRef());
    mlir::Block *block = builder.createBlock(&group.getBody());
    // Each value of the body in the type the group computes it in; narrow values also in their
    // own type when a cast reads them as they are.
    mlir::IRMapping computed, declared;
    for (Value input : inputs) {
      Value argument = block->addArgument(input.getType(), input.getLoc());
      declared.map(input, argument);
    }
    auto valueFor = [&](Value original, bool widen) -> Value {
      if (Value value = computed.lookupOrNull(original))
        return value;
      Value value = declared.lookup(original);
      if (!widen || !isNarrowFloat(elementOf(value)))
        return value;
      Value wide = CastOp::create(builder, loc, computeTypeOf(value), value).getResult();
      computed.map(original, wide);
      return wide;
    };
    for (Operation *member : ordered) {
      bool isCast = llvm::isa<CastOp>(member);
      mlir::OperationState state(member->getLoc(), member->getName());
      for (Value operand : member->getOperands())
        state.addOperands(valueFor(operand, /*widen=*/!isCast));
      Value result = member->getResult(0);
      state.addTypes(isCast ? result.getType() : computeTypeOf(result));
      state.addAttributes(member->getAttrs());
      Operation *clone = builder.create(state);
      (isCast ? declared : computed).map(result, clone->getResult(0));
    }
    Value yielded = valueFor(root->getResult(0), /*widen=*/false);
    if (yielded.getType() != root->getResult(0).getType())
      yielded = CastOp::create(builder, loc, root->getResult(0).getType(), yielded).getResult();
    YieldOp::create(builder, loc, mlir::ValueRange{yielded});

    root->getResult(0).replaceAllUsesWith(group.getResult(0));
    for (Operation *member : llvm::reverse(ordered))
      member->erase();
  }
};

} // namespace

} // namespace kiln
