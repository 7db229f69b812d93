//===- NormPoolPoolGroup.cpp - a pool fusion group as one kernel -----------===//
//
// A `pool` kiln.fusion_group (kiln-form-fusion-groups) is a channels-last max or average pool
// of its first input and the elementwise chain after it (a per-tensor quantize, a cast), each
// op in its own types. Its kernel is the pool's own channels-last kernel: each lane's pooled
// value is stored into a local of the pool's type exactly as the op stores it, and the chain's
// ops, each with its own element function (bodyOpStatements), convert it before the one
// write. So the group computes what its ops compute alone and writes only the chain's value:
// ResNet's bf16 max pool and the int8 quantization of its result read the stem's output once
// and write int8, where two kernels wrote and re-read the bf16 pool.
//
//===----------------------------------------------------------------------===//

#include "codegen/kernels/FusionBodySource.h"
#include "codegen/kernels/NormPoolKernels.h"

namespace kiln::codegen::normpool {

StatusOr<EmittedKernels> emitPoolGroup(const OpDesc &group, const EmitContext &context) {
  if (group.results.size() != 1 || group.yields.size() != 1 || group.yields[0].isInput ||
      group.yields[0].index + 1 != group.body.size() || group.body.size() < 2)
    return group.error("internal: a pool group yields the last value of the chain after its pool");
  const BodyOp &pool = group.body[0];
  bool isMax = pool.op.op == "kiln.max_pool";
  if ((!isMax && pool.op.op != "kiln.avg_pool") || pool.args.size() != 1 || !pool.args[0].isInput ||
      pool.args[0].index != 0 || pool.op.attrInt("channels_last", 0) == 0)
    return group.error("internal: a pool group starts with a channels_last max_pool or avg_pool of its first input");
  // The chain: op j reads op j - 1 first; anything else it reads is a constant it bakes.
  bool readsInput = false;
  GroupInputSource inputOf = [&](uint32_t, const std::string &) {
    readsInput = true;
    return std::string("0");
  };
  std::string statements;
  for (size_t j = 1; j < group.body.size(); ++j) {
    const BodyOp &node = group.body[j];
    if (node.args.empty() || node.args[0].isInput || node.args[0].index != j - 1)
      return group.error("internal: a pool group's op " + node.op.op + " '" + node.op.name +
                         "' reads the previous op's result as its first operand");
    auto op = bodyOpStatements(group, j, inputOf);
    if (!op.isOk())
      return op.status();
    statements += op.value() + "\n      ";
  }
  if (readsInput)
    return group.error("internal: a pool group's elementwise op reads a group input other than the pool's");
  const BodyOp &last = group.body.back();
  if (last.op.results[0].dtype != group.results[0].dtype)
    return group.error("internal: the yielded body value's element type differs from the group's result");
  PoolEpilogue epilogue{group.results[0].dtype, statements, "v" + std::to_string(group.body.size() - 1) + "[0]"};
  return emitPool(pool.op, context, isMax, &epilogue);
}

} // namespace kiln::codegen::normpool
