//===- DataMovementGatherGroup.cpp - a gather fusion group as one kernel ---===//
//
// A `gather` kiln.fusion_group (kiln-form-fusion-groups) is one chain from its first input:
// elementwise ops, then index maps (reshape, transpose, constant pad). Its kernel walks each
// result element's coordinates back through the index maps to the input element it comes from
// (or to a pad's value), reads that element once and applies the elementwise ops to it, each
// with its own element function (bodyOpStatements), so the group computes exactly what its
// ops compute alone. A reshape keeps the row-major linear index, a transpose permutes the
// coordinates, a pad shifts them and sends what falls outside its input to its value (the
// first pad met walking back from the result decides, as the ops would in order).
//
//===----------------------------------------------------------------------===//

#include "codegen/kernels/DataMovementSource.h"
#include "codegen/kernels/FusionBodySource.h"

#include <sstream>

namespace kiln::codegen::datamovement {

namespace {

bool isIndexMap(const std::string &op) { return op == "kiln.reshape" || op == "kiln.transpose" || op == "kiln.pad"; }

/// The group's error about body op `op` (both named: the group is the step).
Status bodyError(const OpDesc &group, const OpDesc &op, const std::string &message) {
  return group.error("its " + op.op + " '" + op.name + "': " + message);
}

/// Statements mapping `i`, a linear index into `op`'s result, to the linear index into its
/// input; a pad sets `padded` and `fill` for an index outside its input.
StatusOr<std::string> mapBack(const OpDesc &group, const OpDesc &op) {
  if (op.op == "kiln.reshape")
    return std::string("// reshape: the same row-major index\n");
  const std::vector<int64_t> &from = op.operands[0]->shape, &to = op.results[0].shape;
  std::vector<int64_t> strides = rowMajorStrides(from);
  std::ostringstream os;
  os << "{ // " << op.op << " " << formatShape(to) << " <- " << formatShape(from) << "\n" << decodeCoords(to, "i", "r");
  std::string sum;
  auto addTerm = [&](const std::string &coordinate, int64_t stride) {
    sum += (sum.empty() ? "" : " + ") + coordinate + " * " + literalInt(stride);
  };
  if (op.op == "kiln.transpose") {
    std::vector<int64_t> perm = op.attrInts("perm");
    if (perm.size() != to.size() || from.size() != to.size())
      return bodyError(group, op, "internal: a gather group's transpose needs one perm entry per axis");
    // Result axis k is input axis perm[k].
    for (size_t k = 0; k < perm.size(); ++k)
      addTerm("r" + std::to_string(k), strides[perm[k]]);
  } else {
    const TensorDesc &pads = *op.operands[1], &value = *op.operands[2];
    size_t rank = from.size();
    if (!pads.ints || pads.ints->size() != 2 * rank || value.numElements() != 1 || !value.isConstant() ||
        op.attrString("mode", "constant") != "constant")
      return bodyError(group, op, "internal: a gather group's pad has constant amounts and value, in constant mode");
    std::string outside;
    for (size_t d = 0; d < rank; ++d) {
      int64_t begin = (*pads.ints)[d], end = (*pads.ints)[d + rank];
      if (begin < 0 || end < 0)
        return bodyError(group, op, "internal: a gather group's pad does not crop");
      std::string r = "r" + std::to_string(d);
      if (begin > 0)
        outside += (outside.empty() ? "" : " || ") + r + " < " + literalInt(begin);
      if (end > 0)
        outside += (outside.empty() ? "" : " || ") + r + " >= " + literalInt(begin + from[d]);
      addTerm("(" + r + " - " + literalInt(begin) + ")", strides[d]);
    }
    if (!outside.empty())
      os << "if (!padded && (" << outside << ")) {\n  padded = true;\n  fill = "
         << rawLiteral(value.dtype, value.ints ? value.ints->front() : 0, value.floats ? value.floats->front() : 0.0)
         << ";\n}\n";
  }
  os << "i = " << (sum.empty() ? "0" : sum) << ";\n}\n";
  return os.str();
}

} // namespace

StatusOr<EmittedKernels> emitGatherGroup(const OpDesc &group, const EmitContext &context) {
  if (group.results.size() != 1 || group.yields.size() != 1 || group.yields[0].isInput ||
      group.yields[0].index + 1 != group.body.size())
    return group.error("internal: a gather group yields the last value of its chain");
  // The chain: body op j reads body op j - 1 (the group's first input for j = 0) first;
  // elementwise ops [0, firstMap), index maps after.
  size_t firstMap = group.body.size();
  for (size_t j = 0; j < group.body.size(); ++j) {
    const BodyOp &node = group.body[j];
    if (node.args.empty() || node.args[0].isInput != (j == 0) || node.args[0].index != (j == 0 ? 0 : j - 1) ||
        !node.op.operands[0] || node.op.results.size() != 1)
      return bodyError(group, node.op,
                       "internal: a gather group's op reads the previous op's result as its first operand");
    bool map = isIndexMap(node.op.op);
    if (map && firstMap == group.body.size())
      firstMap = j;
    else if (!map && firstMap < j)
      return bodyError(group, node.op, "internal: a gather group's elementwise ops come before its index maps");
  }
  if (firstMap == group.body.size())
    return group.error("internal: a gather group without an index map");
  const TensorDesc &input = *group.operands[0], &result = group.results[0];
  if (group.body[firstMap].op.operands[0]->dtype != result.dtype)
    return group.error("internal: a gather group's index maps keep the element type");
  const std::string raw = rawType(result.dtype);

  LoopKernel kernel;
  kernel.function = context.symbol + "gather";
  kernel.count = result.numElements();
  kernel.params.push_back({"const " + storageType(input.dtype) + " *__restrict__ in", KernelArg::operand(0)});
  kernel.params.push_back({raw + " *__restrict__ out", KernelArg::result(0)});
  std::ostringstream body;
  body << "kiln_i64 i = j;\nbool padded = false;\n" << raw << " fill = 0;\n";
  for (size_t m = group.body.size(); m-- > firstMap;) {
    auto statements = mapBack(group, group.body[m].op);
    if (!statements.isOk())
      return statements.status();
    body << statements.value();
  }
  body << "if (padded) {\n  out[j] = fill;\n} else {\n";
  if (firstMap == 0) {
    body << "  out[j] = reinterpret_cast<const " << raw << " *>(in)[i];\n";
  } else {
    // The elementwise ops on the one element read; any other operand is a constant they bake.
    bool readsOther = false;
    auto inputOf = [&](uint32_t index, const std::string &) -> std::string {
      readsOther |= index != 0;
      return "kiln_ld(in, i)";
    };
    for (size_t j = 0; j < firstMap; ++j) {
      auto statements = bodyOpStatements(group, j, inputOf);
      if (!statements.isOk())
        return statements.status();
      body << "  " << statements.value() << "\n";
    }
    if (readsOther)
      return group.error("internal: a gather group's elementwise op reads a group input other than the chain");
    body << "  out[j] = *reinterpret_cast<const " << raw << " *>(v" << firstMap - 1 << ");\n";
  }
  body << "}\n";
  kernel.body = body.str();
  EmittedKernels out;
  addLoopKernel(out, kernel);
  return out;
}

} // namespace kiln::codegen::datamovement
