//===- Interpreter.h - the CPU reference interpreter -----------*- C++ -*-===//
//
// Evaluates a kiln module on the CPU. Each op family registers one evaluator per op name in
// an explicit table (ir/Interpreter/*Eval.cpp); evaluation of a function walks its ops in
// order. Failures (an op without an evaluator, an index out of range at run time) are errors
// naming the op and its location, never aborts.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_IR_INTERPRETER_INTERPRETER_H
#define KILN_IR_INTERPRETER_INTERPRETER_H

#include <functional>

#include "ir/Interpreter/Tensor.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::func {
class FuncOp;
} // namespace mlir::func

namespace kiln::interp {

using Results = llvm::SmallVector<Tensor, 1>;
/// One result, moved in: `Results{t}` would copy `t` (an initializer list's elements are const),
/// a full copy of every op's result.
inline Results oneResult(Tensor t) {
  Results results;
  results.push_back(std::move(t));
  return results;
}
/// Computes an op's results from its operand values (in operand order).
using OpEvaluator = llvm::Expected<Results> (*)(mlir::Operation *op,
                                                llvm::ArrayRef<const Tensor *> operands);

class EvaluatorTable {
public:
  void add(llvm::StringRef opName, OpEvaluator evaluator) { table_[opName] = evaluator; }
  OpEvaluator lookup(llvm::StringRef opName) const { return table_.lookup(opName); }
  /// The table with every family registered.
  static const EvaluatorTable &get();

private:
  llvm::StringMap<OpEvaluator> table_;
};

// One registration function per op family.
void registerElementwiseEvaluators(EvaluatorTable &table);
void registerDenseEvaluators(EvaluatorTable &table);      // conv, pool, norm, matmul, softmax
void registerDataMovementEvaluators(EvaluatorTable &table);
void registerReductionEvaluators(EvaluatorTable &table);  // reductions, arg, cumsum, topk

/// An error naming `op` and its location.
llvm::Error opError(mlir::Operation *op, const llvm::Twine &message);

/// `in` converted to `element` with kiln.cast's (ONNX Cast's) rules; `saturate` clamps
/// out-of-range values converted to f8E4M3FN.
Tensor castTensor(const Tensor &in, mlir::Type element, bool saturate);

/// `in` with its axes permuted as kiln.transpose permutes them: output axis i is input axis
/// perm[i]. Values are copied, never rounded.
Tensor transposeTensor(const Tensor &in, llvm::ArrayRef<int64_t> perm);

/// Evaluates one op on operand values.
llvm::Expected<Results> evaluateOp(mlir::Operation *op, llvm::ArrayRef<const Tensor *> operands);

/// Called with each op of the function body and its results, in evaluation order, before the
/// results are used (a fusion group once, with the group's results); an error stops the run.
using ResultObserver = std::function<llvm::Error(mlir::Operation *op, llvm::ArrayRef<Tensor> results)>;

/// Evaluates `func` on `inputs` (one per argument, with the argument's type), telling
/// `observe` (if given) every op's results: how `kiln eval --dump` sees the intermediates.
llvm::Expected<llvm::SmallVector<Tensor>> evaluateFunction(mlir::func::FuncOp func, llvm::ArrayRef<Tensor> inputs,
                                                          const ResultObserver &observe = {});

} // namespace kiln::interp

#endif // KILN_IR_INTERPRETER_INTERPRETER_H
