//===- FusionGroupKernels.cpp - one kernel for an elementwise fusion group -===//
//
// A group's kernel is the elementwise kernel of its result (ElementwiseSource builds the loop,
// broadcasting, vectorization) whose element function evaluates the whole body: each body op's
// own element function (describeElement, the code its standalone kernel would run) in a scope
// of its own, reading its inputs from the group's inputs or from earlier body values and
// storing into a one-element local of its result's storage type. So a body op computes exactly
// what it computes alone, and values stay in registers; the body's types (f32 inside, casts at
// the edges: see kiln.fusion_group) are what make intermediates fp32.
//
//===----------------------------------------------------------------------===//

#include "codegen/kernels/DataMovementSource.h"
#include "codegen/kernels/ElementwiseSource.h"
#include "codegen/kernels/FusionBodySource.h"
#include "codegen/kernels/NormPoolKernels.h"

#include <sstream>

namespace kiln::codegen {

Status checkGroupShape(const OpDesc &group) {
  if (group.body.empty() || group.yields.empty())
    return group.error("internal: the group's body is empty or yields nothing");
  for (const BodyRef &yield : group.yields)
    if (!yield.isInput && yield.index >= group.body.size())
      return group.error("internal: the group yields a value its body does not compute");
  for (size_t k = 0; k < group.operands.size(); ++k)
    if (!group.operands[k])
      return group.error("internal: fusion group operand " + std::to_string(k) + " is missing");
  return Status::ok();
}

StatusOr<std::string> bodyOpStatements(const OpDesc &group, size_t j, const GroupInputSource &inputOf) {
  const BodyOp &node = group.body[j];
  if (node.args.size() != node.op.operands.size() || node.op.results.size() != 1)
    return node.op.error("internal: fusion group body op has " + std::to_string(node.args.size()) +
                         " operand references for " + std::to_string(node.op.operands.size()) + " operands");
  auto element = elementwise::describeElement(node.op);
  if (!element.isOk())
    return element.status();
  std::ostringstream body;
  const std::string storage = storageType(node.op.results[0].dtype);
  body << storage << " v" << j << "[1];\n  {\n    " << storage << " *po = v" << j << ";\n    const kiln_i64 oo = 0;\n";
  for (size_t k = 0; k < element.value().inputs.size(); ++k) {
    const elementwise::Input &in = element.value().inputs[k];
    if (in.operand >= node.args.size())
      return node.op.error("internal: element input reads operand " + std::to_string(in.operand));
    const BodyRef &ref = node.args[in.operand];
    if (!ref.isInput && ref.index >= j)
      return node.op.error("internal: fusion group body op reads a value defined after it");
    if (ref.isInput && ref.index >= group.operands.size())
      return node.op.error("internal: fusion group body op reads group operand " + std::to_string(ref.index));
    std::string value = in.constant   ? *in.constant
                        : ref.isInput ? inputOf(ref.index, in.valueType)
                                      : "kiln_ld(v" + std::to_string(ref.index) + ", 0)";
    body << "    const " << in.valueType << " x" << k << " = (" << in.valueType << ")(" << value << ");\n";
  }
  body << "    " << element.value().body << "\n  }";
  return body.str();
}

namespace {

using namespace elementwise;

StatusOr<EmittedKernels> emitElementwiseGroup(const OpDesc &group, const EmitContext &context) {
  if (group.results.size() != 1 || group.yields.size() != 1)
    return group.error("an elementwise group has one result, got " + std::to_string(group.results.size()));
  const BodyRef &yield = group.yields[0];
  if (yield.isInput)
    return group.error("internal: an elementwise group yields a body value");

  Kernel kernel;
  kernel.name = "fused";
  kernel.result = group.results[0].dtype;
  kernel.shape = group.results[0].shape;
  std::ostringstream body;
  // The group's inputs as g<k>: the body's ops declare their own x<k> in nested scopes.
  for (size_t k = 0; k < group.operands.size(); ++k) {
    const std::string ct = computeType(group.operands[k]->dtype);
    kernel.inputs.push_back(operandInput(group, static_cast<uint32_t>(k), ct));
    body << "const " << ct << " g" << k << " = x" << k << ";\n  ";
  }
  auto inputOf = [](uint32_t index, const std::string &) { return "g" + std::to_string(index); };
  for (size_t j = 0; j < group.body.size(); ++j) {
    auto statements = bodyOpStatements(group, j, inputOf);
    if (!statements.isOk())
      return statements.status();
    body << statements.value() << "\n  ";
  }
  if (group.body[yield.index].op.results[0].dtype != kernel.result)
    return group.error("internal: the yielded body value's element type differs from the group's result");
  // The yielded value already has the result's storage type: a plain copy, no second rounding.
  body << "po[oo] = v" << yield.index << "[0];";
  kernel.body = body.str();
  return emitKernel(group, context, kernel);
}

StatusOr<EmittedKernels> emitFusionGroup(const OpDesc &group, const EmitContext &context) {
  if (Status s = checkGroupShape(group); !s.isOk())
    return s;
  const std::string kind = group.attrString("kind", "");
  if (kind == "elementwise")
    return emitElementwiseGroup(group, context);
  if (kind == "norm")
    return normpool::emitNormGroup(group, context);
  if (kind == "gather")
    return datamovement::emitGatherGroup(group, context);
  if (kind == "pool")
    return normpool::emitPoolGroup(group, context);
  return group.error("fusion group of kind '" + kind +
                     "' has no kernel emitter; only elementwise, norm, gather and pool groups are generated");
}

} // namespace

void registerFusionGroupKernels(KernelEmitterTable &table) { table.add("kiln.fusion_group", emitFusionGroup); }

} // namespace kiln::codegen
