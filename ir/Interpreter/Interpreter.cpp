//===- Interpreter.cpp - the CPU reference interpreter ---------------------===//

#include "ir/Interpreter/Interpreter.h"
#include "ir/KilnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;

namespace kiln::interp {

const EvaluatorTable &EvaluatorTable::get() {
  // Built on first use, not by static initializers, so the registration order is explicit.
  static const EvaluatorTable table = [] {
    EvaluatorTable t;
    registerElementwiseEvaluators(t);
    registerDenseEvaluators(t);
    registerDataMovementEvaluators(t);
    registerReductionEvaluators(t);
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
    return Results{std::move(*value)};
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

llvm::Expected<llvm::SmallVector<Tensor>> evaluateFunction(func::FuncOp func,
                                                          llvm::ArrayRef<Tensor> inputs) {
  if (inputs.size() != func.getNumArguments())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "function @" + func.getName() + " takes " +
                                       std::to_string(func.getNumArguments()) + " inputs, got " +
                                       std::to_string(inputs.size()));
  llvm::DenseMap<Value, Tensor> values;
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
    values[arg] = input;
  }
  // Free each value after its last use so a large model's peak memory stays near its widest
  // layer rather than its sum.
  llvm::DenseMap<Value, int64_t> remainingUses;
  for (Operation &op : func.getBody().front())
    for (Value operand : op.getOperands())
      remainingUses[operand]++;
  for (Operation &op : func.getBody().front()) {
    if (auto ret = llvm::dyn_cast<func::ReturnOp>(op)) {
      llvm::SmallVector<Tensor> outputs;
      for (Value v : ret.getOperands())
        outputs.push_back(values.lookup(v));
      return outputs;
    }
    llvm::SmallVector<const Tensor *> operands;
    for (Value operand : op.getOperands()) {
      auto it = values.find(operand);
      if (it == values.end())
        return opError(&op, "operand is not defined before use");
      operands.push_back(&it->second);
    }
    auto results = evaluateOp(&op, operands);
    if (!results)
      return results.takeError();
    for (auto [result, tensor] : llvm::zip(op.getResults(), *results))
      values[result] = std::move(tensor);
    for (Value operand : op.getOperands())
      if (--remainingUses[operand] == 0)
        values.erase(operand);
  }
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "function @" + func.getName() + " has no return");
}

} // namespace kiln::interp
