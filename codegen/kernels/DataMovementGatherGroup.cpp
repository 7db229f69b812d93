//===- DataMovementGatherGroup.cpp - a gather fusion group as one kernel ---===//
//
// A `gather` kiln.fusion_group (kiln-form-fusion-groups) is one chain from its first input:
// elementwise ops, then index maps (reshape, transpose, constant pad). Its kernel walks each
// result element's coordinates back through the index maps to the input element it comes from
// (or to a pad's value), reads that element once and applies the elementwise ops to it, each
// with its own element function (bodyOpStatements), so the group computes exactly what its
// ops compute alone. A reshape keeps the row-major linear index, a transpose permutes the
// coordinates, a pad shifts them and sends what falls outside its input to its value (the
// first pad met walking back from the result decides, as the ops would in order). A thread
// takes up to 16 bytes of adjacent result elements along the last axis and stores them as one
// vector.
//
//===----------------------------------------------------------------------===//

#include "codegen/kernels/DataMovementSource.h"
#include "codegen/kernels/FusionBodySource.h"

#include <algorithm>
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

  // Each thread writes `width` adjacent result elements (16 bytes where the last axis allows):
  // a warp then stores whole lines, and its loads of one slot fall on neighbouring pixels of a
  // row (the stem's gather: 16 pixels a warp, 128 contiguous bytes of a plane row a load) where
  // one element a thread spread a warp's loads over 3 planes and 2 rows, 8 bytes of each.
  const int64_t bytes = static_cast<int64_t>(plan::dtypeBytes(result.dtype));
  const int64_t last = result.shape.empty() ? 1 : result.shape.back();
  int64_t width = std::max<int64_t>(16 / std::max<int64_t>(bytes, 1), 1);
  while (width > 1 && last % width != 0)
    width /= 2;
  const std::string index = width > 1 ? "o" : "j", target = width > 1 ? "vec.v[e]" : "out[j]";

  LoopKernel kernel;
  kernel.function = context.symbol + "gather";
  kernel.count = result.numElements() / width;
  kernel.params.push_back({"const " + storageType(input.dtype) + " *__restrict__ in", KernelArg::operand(0)});
  kernel.params.push_back({raw + " *__restrict__ out", KernelArg::result(0)});
  std::ostringstream body;
  if (width > 1) {
    kernel.prologue = "struct alignas(" + std::to_string(bytes * width) + ") kiln_gather_vec { " + raw + " v[" +
                      std::to_string(width) + "]; };\n";
    body << "kiln_gather_vec vec;\n#pragma unroll\nfor (int e = 0; e < " << width << "; ++e) {\nconst kiln_i64 o = j * "
         << width << " + e;\n";
  }
  body << "kiln_i64 i = " << index << ";\nbool padded = false;\n" << raw << " fill = 0;\n";
  for (size_t m = group.body.size(); m-- > firstMap;) {
    auto statements = mapBack(group, group.body[m].op);
    if (!statements.isOk())
      return statements.status();
    body << statements.value();
  }
  body << "if (padded) {\n  " << target << " = fill;\n} else {\n";
  if (firstMap == 0) {
    body << "  " << target << " = reinterpret_cast<const " << raw << " *>(in)[i];\n";
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
    body << "  " << target << " = *reinterpret_cast<const " << raw << " *>(v" << firstMap - 1 << ");\n";
  }
  body << "}\n";
  if (width > 1)
    body << "}\nreinterpret_cast<kiln_gather_vec *>(out)[j] = vec;\n";
  kernel.body = body.str();
  EmittedKernels out;
  addLoopKernel(out, kernel);
  return out;
}

} // namespace kiln::codegen::datamovement
