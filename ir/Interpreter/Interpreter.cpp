//===- Interpreter.cpp - the CPU reference interpreter ---------------------===//

#include "ir/Interpreter/Interpreter.h"
#include "ir/KilnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;

namespace kiln::interp {

namespace {
/// Evaluates the ops of `block` in order, its arguments bound to `arguments`, up to its
/// terminator (func.return or kiln.yield), whose operands are the results.
llvm::Expected<llvm::SmallVector<Tensor>> evaluateBlock(Block &block, llvm::ArrayRef<const Tensor *> arguments,
                                                       const ResultObserver &observe = {}) {
  // Arguments are read where they are (a group's inputs live in the enclosing block's values);
  // values the block computes are owned here.
  llvm::DenseMap<Value, const Tensor *> argumentOf;
  for (auto [arg, tensor] : llvm::zip(block.getArguments(), arguments))
    argumentOf[arg] = tensor;
  llvm::DenseMap<Value, Tensor> values;
  // Without an observer (which sees values in block order), constants are decoded at their
  // first use rather than where they stand: the passes hoist them to the top of the function,
  // so evaluating them in place held every weight of the model as doubles at once (1.4 GB for
  // ViT-B/16), and freeing each after its last use keeps the peak near the widest layer.
  bool lazyConstants = !observe;
  auto lookup = [&](Value v) -> const Tensor * {
    if (auto it = values.find(v); it != values.end())
      return &it->second;
    return argumentOf.lookup(v);
  };
  auto materialize = [&](Value v) -> llvm::Error {
    auto constant = lazyConstants ? v.getDefiningOp<ConstantOp>() : ConstantOp();
    if (!constant || constant->getBlock() != &block || values.count(v))
      return llvm::Error::success();
    auto results = evaluateOp(constant, {});
    if (!results)
      return results.takeError();
    values[v] = std::move(results->front());
    return llvm::Error::success();
  };
  // Free each value after its last use so a large model's peak memory stays near its widest
  // layer rather than its sum.
  llvm::DenseMap<Value, int64_t> remainingUses;
  for (Operation &op : block)
    for (Value operand : op.getOperands())
      remainingUses[operand]++;
  for (Operation &op : block) {
    if (lazyConstants && llvm::isa<ConstantOp>(op))
      continue;
    for (Value operand : op.getOperands())
      if (llvm::Error err = materialize(operand))
        return std::move(err);
    if (op.hasTrait<mlir::OpTrait::IsTerminator>()) {
      llvm::SmallVector<Tensor> outputs;
      for (Value v : op.getOperands()) {
        const Tensor *tensor = lookup(v);
        if (!tensor)
          return opError(&op, "operand is not defined before use");
        // A value this block owns moves out at its last use (a large copy otherwise); arguments
        // belong to the caller.
        auto owned = values.find(v);
        if (owned != values.end() && --remainingUses[v] == 0)
          outputs.push_back(std::move(owned->second));
        else
          outputs.push_back(*tensor);
      }
      return outputs;
    }
    llvm::SmallVector<const Tensor *> operands;
    for (Value operand : op.getOperands()) {
      const Tensor *tensor = lookup(operand);
      if (!tensor)
        return opError(&op, "operand is not defined before use");
      operands.push_back(tensor);
    }
    auto results = evaluateOp(&op, operands);
    if (!results)
      return results.takeError();
    if (observe)
      if (llvm::Error err = observe(&op, *results))
        return std::move(err);
    for (auto [result, tensor] : llvm::zip(op.getResults(), *results))
      values[result] = std::move(tensor);
    for (Value operand : op.getOperands())
      if (--remainingUses[operand] == 0)
        values.erase(operand);
  }
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "a block without a terminator");
}

/// A fusion group is its body evaluated as written: the body's types already say which values
/// stay fp32 and where the group rounds (see kiln.fusion_group), so this is what the fused
/// kernel computes.
llvm::Expected<Results> evaluateFusionGroup(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  auto outputs = evaluateBlock(op->getRegion(0).front(), operands);
  if (!outputs)
    return outputs.takeError();
  return Results(std::make_move_iterator(outputs->begin()), std::make_move_iterator(outputs->end()));
}
} // namespace

const EvaluatorTable &EvaluatorTable::get() {
  // Built on first use, not by static initializers, so the registration order is explicit.
  static const EvaluatorTable table = [] {
    EvaluatorTable t;
    registerElementwiseEvaluators(t);
    registerDenseEvaluators(t);
    registerDataMovementEvaluators(t);
    registerReductionEvaluators(t);
    t.add(FusionGroupOp::getOperationName(), evaluateFusionGroup);
    return t;
  }();
  return table;
}

llvm::Error opError(Operation *op, const llvm::Twine &message) {
  std::string where;
  llvm::raw_string_ostream os(where);
  op->getLoc().print(os);
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 op->getName().getStringRef() + " at " + where + ": " + message);
}

llvm::Expected<Results> evaluateOp(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  if (auto constant = llvm::dyn_cast<ConstantOp>(op)) {
    auto value = fromAttr(constant.getValue());
    if (!value)
      return opError(op, llvm::toString(value.takeError()));
    return oneResult(std::move(*value));
  }
  OpEvaluator evaluator = EvaluatorTable::get().lookup(op->getName().getStringRef());
  if (!evaluator)
    return opError(op, "the interpreter has no evaluator for this op");
  auto results = evaluator(op, operands);
  if (!results)
    return results.takeError();
  if (results->size() != op->getNumResults())
    return opError(op, "internal: evaluator returned the wrong number of results");
  for (auto [result, tensor] : llvm::zip(op->getResults(), *results))
    if (tensor.type() != result.getType())
      return opError(op, "internal: evaluator returned a tensor of the wrong type");
  return results;
}

llvm::Expected<llvm::SmallVector<Tensor>> evaluateFunction(func::FuncOp func, llvm::ArrayRef<Tensor> inputs,
                                                          const ResultObserver &observe) {
  if (inputs.size() != func.getNumArguments())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "function @" + func.getName() + " takes " +
                                       std::to_string(func.getNumArguments()) + " inputs, got " +
                                       std::to_string(inputs.size()));
  for (auto [arg, input] : llvm::zip(func.getArguments(), inputs)) {
    if (input.type() != arg.getType()) {
      std::string expected, got;
      llvm::raw_string_ostream e(expected), g(got);
      e << arg.getType();
      g << input.type();
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "input " + std::to_string(arg.getArgNumber()) + " has type " +
                                         got + ", the function expects " + expected);
    }
  }
  llvm::SmallVector<const Tensor *> arguments;
  for (const Tensor &input : inputs)
    arguments.push_back(&input);
  return evaluateBlock(func.getBody().front(), arguments, observe);
}

} // namespace kiln::interp
